/*
 * check_reliability.c - the loader under stress: payload CRCs
 * checked and bad views listed, truncated files loaded on request, streams
 * from pipes and sockets, files that are not files, files changed by
 * another thread while they load, out-of-memory headers, and many loads
 * in one process, alone and side by side.
 *
 * Every strategy is tried wherever the behaviour is the library's promise
 * rather than one strategy's.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

/* ---------------------------------------------------------------------
 * Strategies, and loading with them
 * ------------------------------------------------------------------- */

typedef struct mode {
	const char *name;
	parload_strategy strategy;
	unsigned threads;
	parload_io io;
	size_t buffer;
} mode;

static const mode modes[] = {
	{ "parallel/1", PARLOAD_STRATEGY_PARALLEL, 1, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
	{ "parallel/2", PARLOAD_STRATEGY_PARALLEL, 2, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
	{ "parallel/3", PARLOAD_STRATEGY_PARALLEL, 3, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
	{ "parallel/5", PARLOAD_STRATEGY_PARALLEL, 5, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
	{ "bulk", PARLOAD_STRATEGY_BULK, 0, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
	{ "sequential", PARLOAD_STRATEGY_SEQUENTIAL, 0, PARLOAD_IO_POSIX, 0 },
	{ "sequential/stdio", PARLOAD_STRATEGY_SEQUENTIAL, 0, PARLOAD_IO_STDIO,
	  PARLOAD_BUFFER_DEFAULT },
	{ "two-pass/buffered", PARLOAD_STRATEGY_TWO_PASS, 0, PARLOAD_IO_POSIX,
	  4096 },
	{ "two-pass/stdio", PARLOAD_STRATEGY_TWO_PASS, 0, PARLOAD_IO_STDIO, 0 },
	{ "mmap", PARLOAD_STRATEGY_MMAP, 0, PARLOAD_IO_POSIX,
	  PARLOAD_BUFFER_DEFAULT },
};
#define N_MODES ((int)(sizeof(modes) / sizeof(modes[0])))
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define VERIFY PARLOAD_OPT_VERIFY_CRC
#define KEEP (PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING)
#define TRUNC PARLOAD_OPT_ALLOW_TRUNCATED

static void mode_options(parload_options *o, const mode *m, unsigned flags)
{
	parload_options_init(o);
	o->strategy = m->strategy;
	o->threads = m->threads;
	o->io = m->io;
	o->buffer_size = m->buffer;
	/* Binding is irrelevant here and costs time on big machines. */
	o->flags = flags | PARLOAD_OPT_NO_BIND;
}

static parload_loader *new_loader(const mode *m, unsigned flags)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	mode_options(&o, m, flags);
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s: %s",
		      m->name, err.message);
	return l;
}

static int load_with(const mode *m, unsigned flags, const char *path,
		     parload_dataset *ds, parload_error *err)
{
	parload_options o;

	mode_options(&o, m, flags);
	o.error = err;
	memset(err, 0, sizeof(*err));
	return parload_load(path, &o, ds);
}

static uint64_t record_size(uint64_t payload_size)
{
	return PARLOAD_VIEW_HEADER_SIZE + payload_size;
}

static uint64_t view_off(uint64_t payload_size, uint64_t v)
{
	return PARLOAD_FILE_HEADER_SIZE + v * record_size(payload_size);
}

static uint64_t payload_off(uint64_t payload_size, uint64_t v)
{
	return view_off(payload_size, v) + PARLOAD_VIEW_HEADER_SIZE;
}

/* Flip every bit of one byte (twice restores it). */
static void flip(const char *path, uint64_t off)
{
	unsigned char c;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 0xff;
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *b;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, *len, 0), (ssize_t)*len);
	close(fd);
	return b;
}

/* ds holds the first n views of ref, byte for byte. */
static void assert_prefix(const parload_dataset *ds, const tu_soa *ref,
			  uint64_t n, const char *what)
{
	ck_assert_msg(ds->file_header.view_count == n,
		      "%s: %" PRIu64 " views, expected %" PRIu64, what,
		      ds->file_header.view_count, n);
	if (n == 0)
		return;
	ck_assert_msg(memcmp(ds->headers, ref->headers, n * 32) == 0,
		      "%s: view headers differ", what);
	ck_assert_msg(memcmp(ds->pixels, ref->pixels,
			     n * ref->payload_size) == 0,
		      "%s: pixels differ", what);
}

static void assert_empty(const parload_dataset *ds, const char *what)
{
	ck_assert_msg(!ds->headers && !ds->pixels && !ds->bad_views &&
			      ds->bad_view_count == 0 &&
			      ds->file_header.view_count == 0,
		      "%s: a failed load left a dataset behind", what);
}

static void assert_bad_views(const parload_dataset *ds, const uint64_t *want,
			     uint64_t n, const char *what)
{
	ck_assert_msg(ds->bad_view_count == n,
		      "%s: %" PRIu64 " bad views listed, expected %" PRIu64,
		      what, ds->bad_view_count, n);
	for (uint64_t k = 0; k < n; k++)
		ck_assert_msg(ds->bad_views[k] == want[k],
			      "%s: bad view %" PRIu64 " is %" PRIu64
			      ", expected %" PRIu64,
			      what, k, ds->bad_views[k], want[k]);
}

/* ---------------------------------------------------------------------
 * Streams: a thread (or a process) writes bytes into a pipe or a socket
 * ------------------------------------------------------------------- */

typedef struct feeder {
	int fd;
	const unsigned char *data;
	size_t len;
	size_t chunk; /* bytes per write() */
	pthread_t thread;
} feeder;

static void *feed(void *arg)
{
	feeder *f = arg;
	size_t done = 0;

	while (done < f->len) {
		size_t n = f->len - done < f->chunk ? f->len - done : f->chunk;
		ssize_t k = write(f->fd, f->data + done, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* the reader stopped early (EPIPE) */
		done += (size_t)k;
	}
	close(f->fd);
	return NULL;
}

enum { VIA_PIPE, VIA_SOCKET, VIA_PIPE_NONBLOCK };

/* Load len bytes of data through a pipe or socket with a loader of mode m
 * and flags, written chunk bytes at a time by a thread. */
static int load_stream(const unsigned char *data, size_t len, size_t chunk,
		       int via, const mode *m, unsigned flags,
		       parload_dataset *ds, parload_error *err)
{
	parload_loader *l = new_loader(m, flags);
	feeder f;
	int fds[2], rc;

	if (via == VIA_SOCKET)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	else
		ck_assert_int_eq(pipe(fds), 0);
	if (via == VIA_PIPE_NONBLOCK)
		ck_assert_int_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	f.fd = fds[1];
	f.data = data;
	f.len = len;
	f.chunk = chunk;
	ck_assert_int_eq(pthread_create(&f.thread, NULL, feed, &f), 0);
	memset(err, 0, sizeof(*err));
	rc = parload_loader_load_fd(l, fds[0], "stream", ds, err);
	/* The reader is done: a writer still writing gets EPIPE. */
	close(fds[0]);
	pthread_join(f.thread, NULL);
	parload_loader_free(l);
	return rc;
}

/* ---------------------------------------------------------------------
 * CRC-32C
 * ------------------------------------------------------------------- */

/* 10 views of 33 x 17 u16 (1122 bytes) with CRCs. */
#define CRC_VIEWS 10
#define CRC_PS ((uint64_t)33 * 17 * 2)

static char *crc_stream(const char *name, uint32_t flags)
{
	char *path = tu_path(name);

	tu_write_stream(path, CRC_VIEWS, 33, 17, PARLOAD_PIXEL_U16, flags, 5);
	return path;
}

START_TEST(test_crc_good)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("crcgood.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (int keep = 0; keep < 2; keep++) {
		ck_assert_msg(load_with(m, keep ? KEEP : VERIFY, path, &ds,
					&err) == 0,
			      "%s: %s", m->name, err.message);
		tu_assert_same(&ds, &ref);
		ck_assert_uint_eq(ds.stats.crc_checked, CRC_VIEWS);
		ck_assert_uint_eq(ds.stats.declared_views, CRC_VIEWS);
		assert_bad_views(&ds, NULL, 0, m->name);
		ck_assert_ptr_null(ds.bad_views);
		parload_dataset_free(&ds);
	}
	/* Without the option nothing is checked. */
	ck_assert_int_eq(load_with(m, 0, path, &ds, &err), 0);
	ck_assert_uint_eq(ds.stats.crc_checked, 0);
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A file without CRCs loads normally and says nothing was checked. */
START_TEST(test_crc_absent)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("nocrc.raw", 0);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_msg(load_with(m, KEEP, path, &ds, &err) == 0, "%s: %s",
		      m->name, err.message);
	tu_assert_same(&ds, &ref);
	ck_assert_uint_eq(ds.stats.crc_checked, 0);
	ck_assert_uint_eq(ds.bad_view_count, 0);
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* One changed payload byte fails the load, naming the view and the byte
 * offset of its payload. */
START_TEST(test_crc_one_bad_fails)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("crcbad.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	char want[64];
	int rc;

	flip(path, payload_off(CRC_PS, 6) + 500);
	rc = load_with(m, VERIFY, path, &ds, &err);
	ck_assert_msg(rc == PARLOAD_ECRC, "%s: %s", m->name,
		      parload_err_name(rc));
	ck_assert_int_eq(err.code, PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 6);
	ck_assert_uint_eq(err.offset, payload_off(CRC_PS, 6));
	snprintf(want, sizeof(want), "(view 6, byte offset %" PRIu64 ")",
		 payload_off(CRC_PS, 6));
	ck_assert_msg(strstr(err.message, want), "%s", err.message);
	assert_empty(&ds, m->name);
	free(path);
}
END_TEST

/* keep-going loads everything and lists exactly the bad views, whether a
 * payload or the CRC in a header was damaged. */
START_TEST(test_crc_keep_going_lists_every_bad_view)
{
	static const uint64_t bad[] = { 0, 3, 4, CRC_VIEWS - 1 };
	const mode *m = &modes[_i];
	char *path = crc_stream("crcmany.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	int rc;

	flip(path, payload_off(CRC_PS, 0));                /* first byte */
	flip(path, payload_off(CRC_PS, 3) + CRC_PS - 1);   /* last byte */
	flip(path, view_off(CRC_PS, 4) + 20);              /* its CRC */
	flip(path, payload_off(CRC_PS, CRC_VIEWS - 1) + 7);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	rc = load_with(m, KEEP, path, &ds, &err);
	ck_assert_msg(rc == 0, "%s: %s", m->name, err.message);
	assert_bad_views(&ds, bad, N(bad), m->name);
	/* The damaged bytes are loaded as they are. */
	tu_assert_same(&ds, &ref);
	ck_assert_uint_eq(ds.stats.crc_checked, CRC_VIEWS);
	parload_dataset_free(&ds);
	ck_assert_ptr_null(ds.bad_views);
	ck_assert_uint_eq(ds.bad_view_count, 0);

	/* Without keep-going, the first of them. */
	rc = load_with(m, VERIFY, path, &ds, &err);
	ck_assert_int_eq(rc, PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 0);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Bad views in different workers' shares: the error always names the
 * lowest, whichever worker finds its own first. */
START_TEST(test_crc_lowest_bad_view_reported)
{
	static const uint64_t bad[] = { 9, 33, 50 };
	static const mode m = { "parallel/4", PARLOAD_STRATEGY_PARALLEL, 4,
				PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT };
	char *path = tu_path("lowest.raw");
	const uint64_t ps = 64 * 64 * 2;
	parload_loader *strict = new_loader(&m, VERIFY);
	parload_loader *keep = new_loader(&m, KEEP);
	parload_dataset ds;
	parload_error err;

	tu_write_stream(path, 64, 64, 64, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 3);
	/* Last first, so that no order of discovery is favoured. */
	for (int k = N(bad) - 1; k >= 0; k--)
		flip(path, payload_off(ps, bad[k]) + 100);
	for (int round = 0; round < 20; round++) {
		ck_assert_int_eq(parload_loader_load(strict, path, &ds, &err),
				 PARLOAD_ECRC);
		ck_assert_uint_eq(err.view, 9);
		ck_assert_uint_eq(err.offset, payload_off(ps, 9));
		assert_empty(&ds, "strict");
		ck_assert_int_eq(parload_loader_load(keep, path, &ds, &err), 0);
		assert_bad_views(&ds, bad, N(bad), "keep-going");
		parload_dataset_free(&ds);
	}
	parload_loader_free(strict);
	parload_loader_free(keep);
	free(path);
}
END_TEST

/* 1 to 3 views of 234 KiB over 2 to 7 workers: every view is split between
 * workers, and a damaged byte anywhere in one (its start, its middle, its
 * end, the CRC in its header) is found, and only there. */
START_TEST(test_crc_split_views)
{
	const unsigned threads = 2 + (unsigned)_i;
	const mode m = { "split", PARLOAD_STRATEGY_PARALLEL, threads,
			 PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT };
	const uint64_t ps = 400 * 300 * 2;
	parload_loader *strict = new_loader(&m, VERIFY);
	parload_loader *keep = new_loader(&m, KEEP);
	parload_dataset ds;
	parload_error err;

	for (uint64_t nviews = 1; nviews <= 3; nviews++) {
		char name[64];
		char *path;

		snprintf(name, sizeof(name), "split%" PRIu64 "-%u.raw", nviews,
			 threads);
		path = tu_path(name);
		tu_write_stream(path, nviews, 400, 300, PARLOAD_PIXEL_U16,
				PARLOAD_FLAG_CRC32C, nviews);
		/* All good: no view is reported however it is split. */
		ck_assert_msg(parload_loader_load(strict, path, &ds, &err) == 0,
			      "%u threads: %s", threads, err.message);
		ck_assert_uint_eq(ds.stats.crc_checked, nviews);
		parload_dataset_free(&ds);
		for (uint64_t v = 0; v < nviews; v++) {
			const uint64_t where[] = {
				payload_off(ps, v), payload_off(ps, v) + ps / 2,
				payload_off(ps, v) + ps / 3 + 4097,
				payload_off(ps, v) + ps - 1,
				view_off(ps, v) + 21,
			};

			for (int k = 0; k < N(where); k++) {
				flip(path, where[k]);
				ck_assert_int_eq(parload_loader_load(
							 strict, path, &ds,
							 &err),
						 PARLOAD_ECRC);
				ck_assert_msg(err.view == v,
					      "%u threads, %" PRIu64
					      " views: view %" PRIu64
					      " damaged, view %" PRIu64
					      " reported",
					      threads, nviews, v, err.view);
				ck_assert_int_eq(parload_loader_load(
							 keep, path, &ds,
							 &err),
						 0);
				assert_bad_views(&ds, &v, 1, "split");
				parload_dataset_free(&ds);
				flip(path, where[k]);
			}
		}
		free(path);
	}
	parload_loader_free(strict);
	parload_loader_free(keep);
}
END_TEST

/* view_index errors stay fatal with keep-going: they are not a damaged
 * payload but a file that is not what it says. */
START_TEST(test_keep_going_view_index_still_fails)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("badindex.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;

	flip(path, view_off(CRC_PS, 2));
	ck_assert_int_eq(load_with(m, KEEP, path, &ds, &err),
			 PARLOAD_EVIEWINDEX);
	ck_assert_uint_eq(err.view, 2);
	assert_empty(&ds, m->name);
	free(path);
}
END_TEST

/* The list belongs to the dataset even when the arrays are the caller's. */
START_TEST(test_keep_going_load_into)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("into.raw", PARLOAD_FLAG_CRC32C);
	parload_loader *l = new_loader(m, KEEP);
	parload_buffers b;
	parload_dataset ds;
	parload_error err;
	const uint64_t bad = 7;
	tu_soa ref;

	flip(path, payload_off(CRC_PS, bad) + 3);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	b.headers_size = CRC_VIEWS * 32;
	b.pixels_size = CRC_VIEWS * CRC_PS;
	b.headers = malloc(b.headers_size);
	b.pixels = malloc(b.pixels_size);
	ck_assert_int_eq(parload_loader_load_into(l, path, &b, &ds, &err), 0);
	assert_bad_views(&ds, &bad, 1, m->name);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	/* The buffers are still the caller's. */
	ck_assert_int_eq(memcmp(b.pixels, ref.pixels, b.pixels_size), 0);
	free(b.headers);
	free(b.pixels);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A stream is checked as it arrives, with the same outcome. */
START_TEST(test_crc_stream)
{
	static const uint64_t bad[] = { 2, 8 };
	char *path = crc_stream("crcstream.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	flip(path, payload_off(CRC_PS, 2) + 1);
	flip(path, payload_off(CRC_PS, 8) + 1);
	data = read_all(path, &len);
	ck_assert_int_eq(load_stream(data, len, 999, VIA_PIPE, &modes[1],
				     VERIFY, &ds, &err),
			 PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 2);
	ck_assert_uint_eq(err.offset, payload_off(CRC_PS, 2));
	ck_assert_int_eq(load_stream(data, len, 999, VIA_PIPE, &modes[1],
				     KEEP, &ds, &err),
			 0);
	assert_bad_views(&ds, bad, N(bad), "stream");
	ck_assert_uint_eq(ds.stats.crc_checked, CRC_VIEWS);
	parload_dataset_free(&ds);
	free(data);
	free(path);
}
END_TEST

/* ---------------------------------------------------------------------
 * Truncated files: --allow-truncated
 * ------------------------------------------------------------------- */

/* 5 views of 13 x 7 u16: 182-byte payloads, 214-byte records. */
#define TR_VIEWS 5
#define TR_PS ((uint64_t)13 * 7 * 2)
#define TR_REC (32 + TR_PS)
#define TR_FULL (64 + TR_VIEWS * TR_REC)

static const struct cut {
	const char *what;
	uint64_t len;
	int strict;      /* the code without the option */
	int allowed;     /* the code with it */
	uint64_t views;  /* the complete views it then holds */
} cuts[] = {
	{ "empty", 0, PARLOAD_ETRUNCATED, PARLOAD_ETRUNCATED, 0 },
	{ "inside the file header", 40, PARLOAD_ETRUNCATED, PARLOAD_ETRUNCATED,
	  0 },
	{ "the file header only", 64, PARLOAD_ETRUNCATED, 0, 0 },
	{ "inside the first view header", 64 + 10, PARLOAD_ETRUNCATED, 0, 0 },
	{ "inside the first payload", 64 + 32 + 50, PARLOAD_ETRUNCATED, 0, 0 },
	{ "at a record boundary", 64 + TR_REC, PARLOAD_ETRUNCATED, 0, 1 },
	{ "a byte short of a view header", 64 + 2 * TR_REC + 31,
	  PARLOAD_ETRUNCATED, 0, 2 },
	{ "just after a view header", 64 + 3 * TR_REC + 32, PARLOAD_ETRUNCATED,
	  0, 3 },
	{ "one byte short", TR_FULL - 1, PARLOAD_ETRUNCATED, 0, TR_VIEWS - 1 },
	{ "complete", TR_FULL, 0, 0, TR_VIEWS },
	{ "a trailing byte", TR_FULL + 1, PARLOAD_ETRAILING, PARLOAD_ETRAILING,
	  0 },
};

/* A complete stream with a trailing byte appended, for the cuts. */
static unsigned char *truncation_source(tu_soa *ref)
{
	char *path = tu_path("trsrc.raw");
	unsigned char *data;
	size_t len;

	tu_write_stream(path, TR_VIEWS, 13, 7, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 11);
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	data = read_all(path, &len);
	ck_assert_uint_eq(len, TR_FULL);
	data[TR_FULL] = 0x5a;
	free(path);
	return data;
}

static void check_cut(const struct cut *c, int rc, const parload_dataset *ds,
		      const parload_error *err, const tu_soa *ref,
		      bool allowed, const char *what)
{
	const int want = allowed ? c->allowed : c->strict;

	ck_assert_msg(rc == want, "%s, cut %s: %s, expected %s (%s)", what,
		      c->what, parload_err_name(rc), parload_err_name(want),
		      err->message);
	if (rc) {
		assert_empty(ds, what);
		return;
	}
	assert_prefix(ds, ref, c->views, what);
	ck_assert_uint_eq(ds->stats.declared_views, TR_VIEWS);
	ck_assert_uint_eq(ds->stats.crc_checked, c->views);
}

START_TEST(test_allow_truncated_file)
{
	const struct cut *c = &cuts[_i];
	char *path = tu_path("cut.raw");
	unsigned char *data;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	data = truncation_source(&ref);
	tu_write_file(path, data, c->len);
	for (int k = 0; k < N_MODES; k++) {
		for (int allowed = 0; allowed < 2; allowed++) {
			int rc = load_with(&modes[k],
					   VERIFY | (allowed ? TRUNC : 0),
					   path, &ds, &err);

			check_cut(c, rc, &ds, &err, &ref, allowed,
				  modes[k].name);
			parload_dataset_free(&ds);
		}
	}
	tu_soa_free(&ref);
	free(data);
	free(path);
}
END_TEST

START_TEST(test_allow_truncated_stream)
{
	const struct cut *c = &cuts[_i];
	unsigned char *data;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	data = truncation_source(&ref);
	for (int allowed = 0; allowed < 2; allowed++) {
		int rc = load_stream(data, c->len, 77, VIA_PIPE, &modes[0],
				     VERIFY | (allowed ? TRUNC : 0), &ds,
				     &err);

		check_cut(c, rc, &ds, &err, &ref, allowed, "pipe");
		parload_dataset_free(&ds);
	}
	tu_soa_free(&ref);
	free(data);
}
END_TEST

/* ---------------------------------------------------------------------
 * Streams and descriptors
 * ------------------------------------------------------------------- */

static const struct shape {
	uint64_t views;
	uint32_t width, height;
	int type;
	uint32_t flags;
} shapes[] = {
	{ 0, 4, 4, PARLOAD_PIXEL_U8, 0 },
	{ 1, 96, 64, PARLOAD_PIXEL_U16, PARLOAD_FLAG_CRC32C },
	{ 300, 5, 3, PARLOAD_PIXEL_U8, 0 },
	{ 7, 301, 200, PARLOAD_PIXEL_F32, PARLOAD_FLAG_CRC32C },
};

/* Through a pipe, a socket and a non-blocking pipe, written in odd
 * pieces, a stream loads byte for byte as its file does. */
START_TEST(test_stream_equals_file)
{
	const struct shape *s = &shapes[_i];
	static const size_t chunks[] = { 1, 333, 65536, 1 << 22 };
	char *path = tu_path("stream.raw");
	parload_dataset file, ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	tu_write_stream(path, s->views, s->width, s->height, s->type, s->flags,
			21);
	ck_assert_int_eq(load_with(&modes[1], VERIFY, path, &file, &err), 0);
	data = read_all(path, &len);
	for (int via = VIA_PIPE; via <= VIA_PIPE_NONBLOCK; via++) {
		for (int k = 0; k < N(chunks); k++) {
			/* A byte at a time is slow for big shapes. */
			if (chunks[k] == 1 && len > 100000)
				continue;
			ck_assert_msg(load_stream(data, len, chunks[k], via,
						  &modes[k % N_MODES], VERIFY,
						  &ds, &err) == 0,
				      "via %d, chunk %zu: %s", via, chunks[k],
				      err.message);
			ck_assert_mem_eq(&ds.file_header, &file.file_header,
					 sizeof(ds.file_header));
			if (s->views) {
				ck_assert_int_eq(
					memcmp(ds.headers, file.headers,
					       s->views * 32),
					0);
				ck_assert_int_eq(
					memcmp(ds.pixels, file.pixels,
					       s->views *
						       file.file_header
							       .payload_size),
					0);
			}
			ck_assert_uint_eq(ds.stats.bytes_read, len);
			ck_assert_uint_eq(ds.stats.threads, 1);
			ck_assert_int_eq(ds.stats.strategy,
					 PARLOAD_STRATEGY_SEQUENTIAL);
			parload_dataset_free(&ds);
		}
	}
	parload_dataset_free(&file);
	free(data);
	free(path);
}
END_TEST

/* A writer in another process: `cat FILE` into a pipe. */
START_TEST(test_stream_from_child_process)
{
	char *path = tu_path("forked.raw");
	parload_loader *l = new_loader(&modes[1], VERIFY);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	int fds[2], status;
	pid_t pid;

	tu_write_stream(path, 40, 64, 32, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 4);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		close(fds[1]);
		execlp("cat", "cat", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ck_assert_msg(parload_loader_load_fd(l, fds[0], "child", &ds, &err) ==
			      0,
		      "%s", err.message);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A stream is validated as a file is. */
START_TEST(test_stream_errors)
{
	char *path = tu_path("streamerr.raw");
	parload_dataset ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	tu_write_stream(path, 4, 8, 8, PARLOAD_PIXEL_U8, 0, 1);
	data = read_all(path, &len);
	data[len] = 'x'; /* the trailing byte */

	ck_assert_int_eq(load_stream(data, 0, 64, VIA_PIPE, &modes[0], 0, &ds,
				     &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "stream is empty"), "%s",
		      err.message);
	ck_assert_int_eq(load_stream(data, 30, 64, VIA_SOCKET, &modes[0], 0,
				     &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "inside the 64-byte file header"),
		      "%s", err.message);
	ck_assert_int_eq(load_stream(data, len - 3, 64, VIA_PIPE, &modes[0], 0,
				     &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_uint_eq(err.view, 3);
	ck_assert_uint_eq(err.offset, len - 3);
	ck_assert_int_eq(load_stream(data, len + 1, 64, VIA_PIPE, &modes[0], 0,
				     &ds, &err),
			 PARLOAD_ETRAILING);
	ck_assert_uint_eq(err.offset, len);
	assert_empty(&ds, "trailing");
	data[0] ^= 1;
	ck_assert_int_eq(load_stream(data, len, 64, VIA_PIPE, &modes[0], 0,
				     &ds, &err),
			 PARLOAD_EMAGIC);
	ck_assert_msg(strncmp(err.message, "stream: ", 8) == 0, "%s",
		      err.message);
	free(data);
	free(path);
}
END_TEST

/* A regular file given as a descriptor: every strategy, wherever its
 * offset was, which is put back, and the descriptor stays open. */
START_TEST(test_fd_regular_file)
{
	const mode *m = &modes[_i];
	char *path = crc_stream("fd.raw", PARLOAD_FLAG_CRC32C);
	parload_loader *l = new_loader(m, VERIFY);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	int fd;

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, 1000, SEEK_SET), 1000);
	ck_assert_msg(parload_loader_load_fd(l, fd, "regular", &ds, &err) == 0,
		      "%s: %s", m->name, err.message);
	tu_assert_same(&ds, &ref);
	ck_assert_int_eq(ds.stats.strategy, m->strategy);
	ck_assert_uint_eq(ds.stats.crc_checked, CRC_VIEWS);
	parload_dataset_free(&ds);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 1000);
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1);
	close(fd);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_fd_bad_descriptors)
{
	parload_loader *l = new_loader(&modes[1], 0);
	char *dir = tu_path("");
	parload_dataset ds;
	parload_error err;
	int fd;

	ck_assert_int_eq(parload_loader_load_fd(l, -1, "x", &ds, &err),
			 PARLOAD_EOPEN);
	ck_assert_int_eq(parload_loader_load_fd(l, 1000000, NULL, &ds, &err),
			 PARLOAD_EOPEN);
	ck_assert_msg(strncmp(err.message, "fd 1000000: ", 12) == 0, "%s",
		      err.message);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(parload_loader_load_fd(l, fd, "dir", &ds, &err),
			 PARLOAD_ENOTREG);
	close(fd);
	/* A character device is a stream: /dev/null is an empty one, and
	 * /dev/zero is not a raw image stream. */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(parload_loader_load_fd(l, fd, "null", &ds, &err),
			 PARLOAD_ETRUNCATED);
	close(fd);
	fd = open("/dev/zero", O_RDONLY);
	ck_assert_int_eq(parload_loader_load_fd(l, fd, "zero", &ds, &err),
			 PARLOAD_EMAGIC);
	close(fd);
	ck_assert_int_eq(parload_loader_load_fd(NULL, 0, "x", &ds, &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(parload_loader_load_fd(l, 0, "x", NULL, &err),
			 PARLOAD_EINVAL);
	parload_loader_free(l);
	free(dir);
}
END_TEST

/* ---------------------------------------------------------------------
 * Paths that are not regular files
 * ------------------------------------------------------------------- */

/* A thread that opens a FIFO for writing (which waits for its reader)
 * and writes a file's bytes into it. */
static void *fifo_writer(void *arg)
{
	feeder *f = arg;

	f->fd = open((const char *)f->data, O_WRONLY | O_CLOEXEC);
	if (f->fd < 0)
		return NULL;
	f->data = (const unsigned char *)f->data + strlen((const char *)f->data) + 1;
	return feed(f);
}

/* A FIFO given as a path is read as a stream, as cat reads it, whatever the
 * strategy; /dev/null is an empty stream; a dangling symbolic link says
 * so, a directory is not a file, and an empty file is too short. */
START_TEST(test_not_regular_files)
{
	const mode *m = &modes[_i];
	char *fifo = tu_path("fifo");
	char *link = tu_path("dangling");
	char *empty = tu_path("empty.raw");
	char *file = tu_path("fifo-src.raw");
	unsigned char *data, *buf;
	size_t len, plen = strlen(fifo) + 1;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	feeder f;

	unlink(fifo);
	unlink(link);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("no-such-target", link), 0);
	tu_write_file(empty, "", 0);
	tu_write_stream(file, 9, 16, 4, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_serial_read(file, &ref), 0);
	data = read_all(file, &len);

	/* The writer's path and the data, one buffer for the thread. */
	buf = malloc(plen + len);
	memcpy(buf, fifo, plen);
	memcpy(buf + plen, data, len);
	f.data = buf;
	f.len = len;
	f.chunk = 1000;
	ck_assert_int_eq(pthread_create(&f.thread, NULL, fifo_writer, &f), 0);
	ck_assert_msg(load_with(m, 0, fifo, &ds, &err) == 0, "%s", err.message);
	pthread_join(f.thread, NULL);
	tu_assert_same(&ds, &ref);
	ck_assert_int_eq(ds.stats.strategy, PARLOAD_STRATEGY_SEQUENTIAL);
	parload_dataset_free(&ds);

	ck_assert_int_eq(load_with(m, 0, link, &ds, &err), PARLOAD_EOPEN);
	ck_assert_msg(strstr(err.message, "dangling symbolic link"), "%s",
		      err.message);
	ck_assert_int_eq(load_with(m, 0, "/dev/null", &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "stream is empty"), "%s",
		      err.message);
	assert_empty(&ds, "/dev/null");
	ck_assert_int_eq(load_with(m, 0, "/", &ds, &err), PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a directory)"), "%s", err.message);
	ck_assert_int_eq(load_with(m, 0, empty, &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "0 bytes"), "%s", err.message);
	tu_soa_free(&ref);
	free(buf);
	free(data);
	free(fifo);
	free(link);
	free(empty);
	free(file);
}
END_TEST

/* ---------------------------------------------------------------------
 * Out of memory before allocating
 * ------------------------------------------------------------------- */

/* A header promising more than RAM and swap together, on a sparse file of
 * exactly the size it promises: a clear PARLOAD_ENOMEM naming the bytes,
 * for every strategy and for a stream, before any allocation. */
START_TEST(test_more_than_the_machine)
{
	const mode *m = &modes[_i];
	char *path = tu_path("huge.raw");
	parload_file_header h;
	parload_dataset ds;
	parload_error err;
	struct sysinfo si;
	uint64_t have, views, size, need;
	char want[64];
	int fd;

	ck_assert_int_eq(sysinfo(&si), 0);
	have = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
	/* 128 MiB views, enough of them to exceed the machine. */
	views = have / ((uint64_t)128 << 20) + 8;
	ck_assert_int_eq(parload_file_header_init(&h, views, 4096, 4096,
						  PARLOAD_PIXEL_F64, 0),
			 0);
	ck_assert_int_eq(parload_file_size(&h, &size), 0);
	need = views * (32 + h.payload_size);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	if (ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "skipped: no sparse file of %" PRIu64
			" bytes here\n", size);
		close(fd);
		free(path);
		return;
	}
	close(fd);
	ck_assert_int_eq(load_with(m, 0, path, &ds, &err), PARLOAD_ENOMEM);
	snprintf(want, sizeof(want), "need %" PRIu64 " bytes", need);
	ck_assert_msg(strstr(err.message, want) &&
			      strstr(err.message, "RAM and swap"),
		      "%s: %s", m->name, err.message);
	assert_empty(&ds, m->name);
	/* The same header at the head of a stream. */
	ck_assert_int_eq(load_stream((const unsigned char *)&h, sizeof(h), 64,
				     VIA_PIPE, m, 0, &ds, &err),
			 PARLOAD_ENOMEM);
	ck_assert_msg(strstr(err.message, want), "%s", err.message);
	unlink(path);
	free(path);
}
END_TEST

/* Under an address-space limit, the limit is named. */
START_TEST(test_more_than_the_address_space_limit)
{
#ifdef PARLOAD_SANITIZED
	/* The sanitizers own the address space. */
	return;
#else
	parload_dataset ds;
	parload_error err;
	struct rlimit saved, lim;
	char *path;
	int rc;

	if (getenv("PARLOAD_TEST_NO_RLIMIT"))
		return;
	path = tu_path("limited.raw");
	/* 64 views of 4 MiB: 256 MiB of pixels against a 128 MiB limit. */
	tu_write_stream(path, 64, 1024, 1024, PARLOAD_PIXEL_U32, 0, 1);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved), 0);
	lim = saved;
	lim.rlim_cur = (rlim_t)128 << 20;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
	rc = load_with(&modes[0], 0, path, &ds, &err);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved), 0);
	ck_assert_int_eq(rc, PARLOAD_ENOMEM);
	ck_assert_msg(strstr(err.message, "RLIMIT_AS"), "%s", err.message);
	free(path);
#endif
}
END_TEST

/* ---------------------------------------------------------------------
 * The file changes under the loader
 * ------------------------------------------------------------------- */

/* 16 views of 16 KiB: big enough that a load takes a while. */
#define CH_VIEWS 16

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct mutator {
	const char *path;
	uint64_t full;
	uint64_t cut;       /* shrink: the length to cut to */
	double delay;       /* shrink: seconds to wait first */
	atomic_bool stop;   /* extend: loop until set */
	pthread_t thread;
} mutator;

static void spin(double seconds);

static void *shrink_later(void *arg)
{
	mutator *mu = arg;

	spin(mu->delay); /* sleeps are too coarse for a load this short */
	ck_assert_int_eq(truncate(mu->path, (off_t)mu->cut), 0);
	return NULL;
}

static void spin(double seconds)
{
	const double until = now() + seconds;

	while (now() < until)
		;
}

static void *extend_loop(void *arg)
{
	static const unsigned char junk[4096] = { 1, 2, 3 };
	mutator *mu = arg;
	int fd = open(mu->path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	while (!atomic_load(&mu->stop)) {
		size_t n = 1 + rnd() % sizeof(junk);

		/* Random stretches at the right size and too long. */
		spin((double)(rnd() % 1000) * 1e-6);
		ck_assert_int_eq(pwrite(fd, junk, n, (off_t)mu->full),
				 (ssize_t)n);
		spin((double)(rnd() % 100) * 1e-6);
		ck_assert_int_eq(ftruncate(fd, (off_t)mu->full), 0);
	}
	close(fd);
	return NULL;
}

static char *change_source(const char *name, tu_soa *ref,
			   unsigned char **data, size_t *len)
{
	char *path = tu_path(name);

	tu_write_stream(path, CH_VIEWS, 128, 64, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 17);
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	*data = read_all(path, len);
	return path;
}

/* Another thread cuts the file once, at a random moment of the load.  The
 * load fails (any error: a cut can zero the end of a page that is being
 * read, which a check may then see) or returns every view exactly; a
 * failed load leaves nothing behind.  Never a crash (SIGBUS for mmap). */
START_TEST(test_file_shrinks_during_load)
{
	const mode *m = &modes[_i];
	unsigned char *data;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	unsigned ok = 0, failed = 0;
	double t0, took = 1.0;
	size_t len;
	tu_soa ref;
	char *path = change_source("shrink.raw", &ref, &data, &len);
	int fd = open(path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	for (int verify = 0; verify < 2; verify++) {
		l = new_loader(m, verify ? VERIFY : 0);
		/* How long a load takes here, to cut at any moment of one. */
		for (int k = 0; k < 3; k++) {
			t0 = now();
			ck_assert_int_eq(parload_loader_load(l, path, &ds,
							     &err),
					 0);
			if (now() - t0 < took)
				took = now() - t0;
			parload_dataset_free(&ds);
		}
		for (int it = 0; it < 25; it++) {
			mutator mu;
			int rc;

			memset(&mu, 0, sizeof(mu));
			mu.path = path;
			mu.cut = rnd() % len;
			mu.delay = took * 1.5 * (double)(rnd() % 1000) / 1000.0;
			ck_assert_int_eq(pthread_create(&mu.thread, NULL,
							shrink_later, &mu),
					 0);
			rc = parload_loader_load(l, path, &ds, &err);
			pthread_join(mu.thread, NULL);
			if (rc == 0) {
				tu_assert_same(&ds, &ref);
				ok++;
			} else {
				ck_assert_int_eq(err.code, rc);
				assert_empty(&ds, m->name);
				failed++;
			}
			parload_dataset_free(&ds);
			/* Put back what was cut. */
			ck_assert_int_eq(pwrite(fd, data + mu.cut,
						len - mu.cut, (off_t)mu.cut),
					 (ssize_t)(len - mu.cut));
		}
		parload_loader_free(l);
	}
	close(fd);
	printf("%s: file cut during 50 loads: %u complete, %u failed\n",
	       m->name, ok, failed);
	tu_soa_free(&ref);
	free(data);
	free(path);
}
END_TEST

/* Another thread keeps appending to the file and cutting it back to its
 * size: a load sees a file too long (ETRAILING) or loads every view
 * exactly. */
START_TEST(test_file_grows_during_load)
{
	const mode *m = &modes[_i];
	parload_loader *l = new_loader(m, VERIFY);
	unsigned char *data;
	parload_dataset ds;
	parload_error err;
	unsigned ok = 0, trailing = 0;
	size_t len;
	tu_soa ref;
	char *path = change_source("grow.raw", &ref, &data, &len);
	mutator mu;

	memset(&mu, 0, sizeof(mu));
	mu.path = path;
	mu.full = len;
	atomic_init(&mu.stop, false);
	ck_assert_int_eq(pthread_create(&mu.thread, NULL, extend_loop, &mu),
			 0);
	for (int it = 0; it < 40; it++) {
		int rc = parload_loader_load(l, path, &ds, &err);

		if (rc == 0) {
			tu_assert_same(&ds, &ref);
			ok++;
		} else {
			ck_assert_msg(rc == PARLOAD_ETRAILING, "%s: %s",
				      m->name, err.message);
			assert_empty(&ds, m->name);
			trailing++;
		}
		parload_dataset_free(&ds);
	}
	atomic_store(&mu.stop, true);
	pthread_join(mu.thread, NULL);
	printf("%s: file growing during 40 loads: %u complete, %u too long\n",
	       m->name, ok, trailing);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(data);
	free(path);
}
END_TEST

/* ---------------------------------------------------------------------
 * Many loads in one process
 * ------------------------------------------------------------------- */

static long vm_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Under valgrind everything is slower and memory is valgrind's. */
static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

/* Thousands of loads with one loader, good and failing, into fresh and
 * into the caller's memory: resident memory, threads and descriptors stay
 * where they were after the first loads. */
START_TEST(test_many_loads_stay_flat)
{
	const int loads = under_valgrind() ? 200 : 3000;
	char *good = crc_stream("flat.raw", PARLOAD_FLAG_CRC32C);
	char *bad = crc_stream("flatbad.raw", PARLOAD_FLAG_CRC32C);
	char *missing = tu_path("missing.raw");
	parload_loader *l = new_loader(&modes[2], KEEP);
	parload_buffers b;
	parload_dataset ds;
	parload_error err;
	long rss0 = 0, rss1;
	int threads0 = 0, fds0 = 0;

	flip(bad, payload_off(CRC_PS, 4));
	b.headers_size = CRC_VIEWS * 32;
	b.pixels_size = CRC_VIEWS * CRC_PS;
	b.headers = malloc(b.headers_size);
	b.pixels = malloc(b.pixels_size);
	for (int i = 0; i < loads; i++) {
		if (i == loads / 10) {
			rss0 = vm_rss_kib();
			threads0 = count_entries("/proc/self/task");
			fds0 = count_entries("/proc/self/fd");
		}
		switch (i % 4) {
		case 0:
			ck_assert_int_eq(parload_loader_load(l, good, &ds, &err),
					 0);
			break;
		case 1:
			ck_assert_int_eq(parload_loader_load(l, bad, &ds, &err),
					 0);
			ck_assert_uint_eq(ds.bad_view_count, 1);
			break;
		case 2:
			ck_assert_int_eq(parload_loader_load_into(l, bad, &b,
								  &ds, &err),
					 0);
			ck_assert_uint_eq(ds.bad_view_count, 1);
			break;
		default:
			ck_assert_int_eq(parload_loader_load(l, missing, &ds,
							     &err),
					 PARLOAD_EOPEN);
			break;
		}
		parload_dataset_free(&ds);
	}
	rss1 = vm_rss_kib();
	ck_assert_int_eq(count_entries("/proc/self/task"), threads0);
	ck_assert_int_eq(count_entries("/proc/self/fd"), fds0);
#ifndef PARLOAD_SANITIZED
	/* A sanitizer keeps freed memory in quarantine. */
	if (!under_valgrind())
		ck_assert_msg(rss1 - rss0 < 1024,
			      "resident memory grew from %ld to %ld KiB over "
			      "%d loads",
			      rss0, rss1, loads - loads / 10);
#endif
	printf("%d loads: VmRSS %ld -> %ld KiB, %d threads, %d fds\n", loads,
	       rss0, rss1, threads0, fds0);
	parload_loader_free(l);
	free(b.headers);
	free(b.pixels);
	free(good);
	free(bad);
	free(missing);
}
END_TEST

typedef struct app {
	const mode *m;
	const char *path;
	const tu_soa *ref;
	int loads;
	int failures;
	pthread_t thread;
} app;

static void *app_main(void *arg)
{
	app *a = arg;
	parload_options o;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	const tu_soa *ref = a->ref;

	mode_options(&o, a->m, VERIFY);
	if (parload_loader_new(&l, &o, &err) != 0) {
		a->failures = a->loads;
		return NULL;
	}
	for (int i = 0; i < a->loads; i++) {
		if (parload_loader_load(l, a->path, &ds, &err) != 0 ||
		    memcmp(&ds.file_header, ref->file_header, 64) != 0 ||
		    memcmp(ds.headers, ref->headers, ref->view_count * 32) ||
		    memcmp(ds.pixels, ref->pixels,
			   ref->view_count * ref->payload_size))
			a->failures++;
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	return NULL;
}

/* Application threads loading at once, each through its own loader, each
 * with its own strategy: every load is byte-identical to the file. */
START_TEST(test_concurrent_loaders)
{
	char *path = tu_path("concurrent.raw");
	app apps[6];
	tu_soa ref;

	tu_write_stream(path, 60, 100, 50, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 8);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (int i = 0; i < N(apps); i++) {
		apps[i].m = &modes[(i * 3) % N_MODES];
		apps[i].path = path;
		apps[i].ref = &ref;
		apps[i].loads = under_valgrind() ? 5 : 40;
		apps[i].failures = 0;
		ck_assert_int_eq(pthread_create(&apps[i].thread, NULL,
						app_main, &apps[i]),
				 0);
	}
	for (int i = 0; i < N(apps); i++) {
		pthread_join(apps[i].thread, NULL);
		ck_assert_msg(apps[i].failures == 0, "%s: %d of %d loads wrong",
			      apps[i].m->name, apps[i].failures,
			      apps[i].loads);
	}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---------------------------------------------------------------------
 * Suite
 * ------------------------------------------------------------------- */

static Suite *suite(void)
{
	Suite *s = suite_create("reliability");
	TCase *t;

	t = tcase_create("crc");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_crc_good, 0, N_MODES);
	tcase_add_loop_test(t, test_crc_absent, 0, N_MODES);
	tcase_add_loop_test(t, test_crc_one_bad_fails, 0, N_MODES);
	tcase_add_loop_test(t, test_crc_keep_going_lists_every_bad_view, 0,
			    N_MODES);
	tcase_add_test(t, test_crc_lowest_bad_view_reported);
	tcase_add_loop_test(t, test_crc_split_views, 0, 6);
	tcase_add_loop_test(t, test_keep_going_view_index_still_fails, 0,
			    N_MODES);
	tcase_add_loop_test(t, test_keep_going_load_into, 0, N_MODES);
	tcase_add_test(t, test_crc_stream);
	suite_add_tcase(s, t);

	t = tcase_create("truncated");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_allow_truncated_file, 0, N(cuts));
	tcase_add_loop_test(t, test_allow_truncated_stream, 0, N(cuts));
	suite_add_tcase(s, t);

	t = tcase_create("streams");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_stream_equals_file, 0, N(shapes));
	tcase_add_test(t, test_stream_from_child_process);
	tcase_add_test(t, test_stream_errors);
	tcase_add_loop_test(t, test_fd_regular_file, 0, N_MODES);
	tcase_add_test(t, test_fd_bad_descriptors);
	tcase_add_loop_test(t, test_not_regular_files, 0, N_MODES);
	suite_add_tcase(s, t);

	t = tcase_create("memory");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_more_than_the_machine, 0, N_MODES);
	tcase_add_test(t, test_more_than_the_address_space_limit);
	suite_add_tcase(s, t);

	t = tcase_create("changes");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_file_shrinks_during_load, 0, N_MODES);
	tcase_add_loop_test(t, test_file_grows_during_load, 0, N_MODES);
	suite_add_tcase(s, t);

	t = tcase_create("many");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_many_loads_stay_flat);
	tcase_add_test(t, test_concurrent_loaders);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	/* A feeder writing to a reader that stopped gets EPIPE, not a
	 * signal. */
	signal(SIGPIPE, SIG_IGN);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
