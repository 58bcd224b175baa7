/*
 * check_strategies.c - the single-threaded strategies (bulk, sequential,
 * two-pass, mmap), with each I/O API and buffering, load every shape byte
 * for byte as the serial reference and the parallel loader do, fail with
 * the parallel loader's codes and messages, and report honest counters.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

static const parload_strategy strategies[] = {
	PARLOAD_STRATEGY_BULK, PARLOAD_STRATEGY_SEQUENTIAL,
	PARLOAD_STRATEGY_TWO_PASS, PARLOAD_STRATEGY_MMAP,
};
#define N_STRATEGIES (sizeof(strategies) / sizeof(strategies[0]))
static const parload_io ios[] = { PARLOAD_IO_POSIX, PARLOAD_IO_STDIO };
static const size_t buffers[] = { 0, PARLOAD_BUFFER_DEFAULT, 4096,
				  (size_t)1 << 20 };

static const char *strategy_name(parload_strategy s)
{
	switch (s) {
	case PARLOAD_STRATEGY_PARALLEL: return "parallel";
	case PARLOAD_STRATEGY_BULK: return "bulk";
	case PARLOAD_STRATEGY_SEQUENTIAL: return "sequential";
	case PARLOAD_STRATEGY_TWO_PASS: return "two-pass";
	case PARLOAD_STRATEGY_MMAP: return "mmap";
	}
	return "?";
}

static void options(parload_options *o, parload_strategy s, parload_io io,
		    size_t buffer, parload_error *err)
{
	parload_options_init(o);
	o->strategy = s;
	o->io = io;
	o->buffer_size = buffer;
	o->threads = s == PARLOAD_STRATEGY_PARALLEL ? 2 : 0;
	o->error = err;
}

static int load(const char *path, parload_strategy s, parload_io io,
		size_t buffer, parload_dataset *ds, parload_error *err)
{
	parload_options o;

	options(&o, s, io, buffer, err);
	memset(err, 0, sizeof(*err));
	return parload_load(path, &o, ds);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void assert_same_dataset(const parload_dataset *a,
				const parload_dataset *b, const char *what)
{
	const parload_file_header *h = &a->file_header;

	ck_assert_msg(memcmp(&a->file_header, &b->file_header,
			     sizeof(*h)) == 0, "%s: file header differs", what);
	if (!h->view_count)
		return;
	ck_assert_msg(memcmp(a->headers, b->headers,
			     h->view_count * PARLOAD_VIEW_HEADER_SIZE) == 0,
		      "%s: view headers differ", what);
	ck_assert_msg(memcmp(a->pixels, b->pixels,
			     h->view_count * h->payload_size) == 0,
		      "%s: pixels differ", what);
}

/* ---- every shape, every combination ---- */

static const struct shape {
	uint64_t views;
	uint32_t width, height;
	int type;
	uint32_t flags;
} shapes[] = {
	{ 0, 4, 4, PARLOAD_PIXEL_U16, 0 },        /* empty stream */
	{ 1, 96, 64, PARLOAD_PIXEL_U16, 0 },      /* one view */
	{ 9, 1, 1, PARLOAD_PIXEL_U8, 0 },         /* 1-pixel views */
	{ 13, 7, 3, PARLOAD_PIXEL_U8, 0 },        /* odd sizes */
	{ 5, 3, 5, PARLOAD_PIXEL_U16, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_I16, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_U32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_I32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_F32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_F64, 0 },
	{ 1000, 4, 2, PARLOAD_PIXEL_U16, 0 },     /* 1000 tiny views */
	{ 3, 300, 301, PARLOAD_PIXEL_U16, 0 },    /* views > 4 KiB buffer */
	{ 7, 33, 17, PARLOAD_PIXEL_U8, PARLOAD_FLAG_CRC32C },
};
#define N_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

START_TEST(test_every_combination_identical)
{
	const struct shape *s = &shapes[_i];
	char name[64];
	char *path;
	tu_soa ref;
	parload_dataset par, ds;
	parload_error err;
	int rc;

	snprintf(name, sizeof(name), "shape%d.raw", _i);
	path = tu_path(name);
	tu_write_stream(path, s->views, s->width, s->height, s->type,
			s->flags, 1000 + (uint64_t)_i);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);

	rc = load(path, PARLOAD_STRATEGY_PARALLEL, PARLOAD_IO_POSIX,
		  PARLOAD_BUFFER_DEFAULT, &par, &err);
	ck_assert_msg(rc == 0, "parallel: %s", err.message);
	tu_assert_same(&par, &ref);

	for (size_t si = 0; si < N_STRATEGIES; si++)
		for (size_t ii = 0; ii < 2; ii++)
			for (size_t bi = 0; bi < 4; bi++) {
				char what[128];

				snprintf(what, sizeof(what),
					 "%s %s buffer %zu (shape %d)",
					 strategy_name(strategies[si]),
					 ios[ii] ? "stdio" : "posix",
					 buffers[bi], _i);
				rc = load(path, strategies[si], ios[ii],
					  buffers[bi], &ds, &err);
				ck_assert_msg(rc == 0, "%s: %s", what,
					      err.message);
				tu_assert_same(&ds, &ref);
				assert_same_dataset(&ds, &par, what);
				ck_assert_int_eq(ds.stats.strategy,
						 strategies[si]);
				ck_assert_uint_eq(ds.stats.threads, 1);
				parload_dataset_free(&ds);
			}
	parload_dataset_free(&par);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A cap of a few bytes per read call drives every loop that splits
 * requests; the data must not change. */
START_TEST(test_tiny_max_read_identical)
{
	char *path = tu_path("maxread.raw");
	tu_soa ref;
	parload_options o;
	parload_dataset ds;
	parload_error err;

	tu_write_stream(path, 11, 13, 7, PARLOAD_PIXEL_U16, 0, 77);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (size_t si = 0; si < N_STRATEGIES; si++)
		for (size_t ii = 0; ii < 2; ii++)
			for (size_t bi = 0; bi < 4; bi++) {
				options(&o, strategies[si], ios[ii],
					buffers[bi], &err);
				o.max_read = 7;
				ck_assert_msg(parload_load(path, &o, &ds) == 0,
					      "%s", err.message);
				tu_assert_same(&ds, &ref);
				parload_dataset_free(&ds);
			}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- the same errors as the parallel loader ---- */

enum bad {
	BAD_TRUNCATED,  /* cut inside a payload */
	BAD_TRAILING,   /* a byte after the last view */
	BAD_VIEWINDEX,  /* view 3 says it is view 4 */
	BAD_MAGIC,
	BAD_SHORT,      /* shorter than the file header */
	BAD_EMPTY,
	BAD_MISSING,    /* no such file */
	BAD_DIRECTORY,
	BAD_VERSION,
	BAD_GEOMETRY,
	BAD_COUNT_
};

static const int bad_codes[BAD_COUNT_] = {
	PARLOAD_ETRUNCATED, PARLOAD_ETRAILING, PARLOAD_EVIEWINDEX,
	PARLOAD_EMAGIC, PARLOAD_ETRUNCATED, PARLOAD_ETRUNCATED,
	PARLOAD_EOPEN, PARLOAD_ENOTREG, PARLOAD_EVERSION,
	PARLOAD_EGEOMETRY,
};

static char *make_bad(enum bad b)
{
	char name[32];
	char *path;
	const uint32_t w = 5, hgt = 3; /* u16: 30-byte payloads */
	const uint64_t rec = 32 + 30;

	snprintf(name, sizeof(name), "bad%d.raw", (int)b);
	path = tu_path(name);
	if (b == BAD_MISSING)
		return path;
	if (b == BAD_DIRECTORY) {
		ck_assert_int_eq(mkdir(path, 0700), 0);
		return path;
	}
	tu_write_stream(path, 6, w, hgt, PARLOAD_PIXEL_U16, 0, 5);
	switch (b) {
	case BAD_TRUNCATED:
		tu_truncate(path, 64 + 4 * rec + 40);
		break;
	case BAD_TRAILING:
		tu_truncate(path, 64 + 6 * rec + 1);
		break;
	case BAD_VIEWINDEX: {
		uint64_t four = 4;

		tu_patch(path, 64 + 3 * rec, &four, sizeof(four));
		break;
	}
	case BAD_MAGIC:
		tu_patch(path, 1, "X", 1);
		break;
	case BAD_SHORT:
		tu_truncate(path, 10);
		break;
	case BAD_EMPTY:
		tu_truncate(path, 0);
		break;
	case BAD_VERSION: {
		uint16_t v = 2;

		tu_patch(path, 8, &v, sizeof(v));
		break;
	}
	case BAD_GEOMETRY: {
		uint16_t bpp = 4;

		tu_patch(path, 34, &bpp, sizeof(bpp));
		break;
	}
	default:
		break;
	}
	return path;
}

START_TEST(test_same_errors_as_parallel)
{
	static const parload_dataset zero;
	char *path = make_bad((enum bad)_i);
	parload_dataset ds;
	parload_error perr, err;
	int prc;

	prc = load(path, PARLOAD_STRATEGY_PARALLEL, PARLOAD_IO_POSIX,
		   PARLOAD_BUFFER_DEFAULT, &ds, &perr);
	ck_assert_int_eq(prc, bad_codes[_i]);
	ck_assert_int_eq(memcmp(&ds, &zero, sizeof(ds)), 0);
	for (size_t si = 0; si < N_STRATEGIES; si++)
		for (size_t ii = 0; ii < 2; ii++)
			for (size_t bi = 0; bi < 4; bi++) {
				int rc = load(path, strategies[si], ios[ii],
					      buffers[bi], &ds, &err);

				ck_assert_msg(rc == prc,
					      "%s %s buffer %zu: %s, parallel "
					      "%s",
					      strategy_name(strategies[si]),
					      ios[ii] ? "stdio" : "posix",
					      buffers[bi],
					      parload_err_name(rc),
					      parload_err_name(prc));
				ck_assert_str_eq(err.message, perr.message);
				ck_assert_uint_eq(err.view, perr.view);
				ck_assert_uint_eq(err.offset, perr.offset);
				ck_assert_int_eq(err.sys_errno,
						 perr.sys_errno);
				/* Nothing is left behind. */
				ck_assert_int_eq(memcmp(&ds, &zero,
							sizeof(ds)), 0);
			}
	free(path);
}
END_TEST

/* ---- the counters ---- */

/* n views of 16-byte payloads: every read fits in one call. */
static char *tiny_stream(const char *name, uint64_t n)
{
	char *path = tu_path(name);

	tu_write_stream(path, n, 4, 2, PARLOAD_PIXEL_U16, 0, 9);
	return path;
}

static uint64_t calls(const char *path, parload_strategy s, parload_io io,
		      size_t buffer, size_t max_read)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	uint64_t c;

	options(&o, s, io, buffer, &err);
	o.max_read = max_read;
	ck_assert_msg(parload_load(path, &o, &ds) == 0, "%s", err.message);
	ck_assert_double_gt(ds.stats.seconds, 0.0);
	c = ds.stats.read_calls;
	parload_dataset_free(&ds);
	return c;
}

static bool proc_io_readable(void)
{
	return access("/proc/thread-self/io", R_OK) == 0;
}

/* The stdio counts are the kernel's count of this thread's reads, which
 * under valgrind include valgrind's own (it reads a pipe around every
 * system call): exact only without it. */
static bool stdio_counts_exact(void)
{
	const char *pre = getenv("LD_PRELOAD");

	return proc_io_readable() && !(pre && strstr(pre, "vgpreload"));
}

/* One read for the file header and two per view; the size came from
 * fstat, so no read is spent finding the end of the file. */
START_TEST(test_sequential_posix_unbuffered_calls)
{
	char *path = tiny_stream("seqcalls.raw", 50);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, 0, 0), 1 + 2 * 50);
	/* POSIX has no buffer of its own: the default is unbuffered. */
	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT, 0),
			  1 + 2 * 50);
	free(path);
}
END_TEST

START_TEST(test_two_pass_posix_unbuffered_calls)
{
	char *path = tiny_stream("twocalls.raw", 50);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_TWO_PASS,
				PARLOAD_IO_POSIX, 0, 0), 1 + 2 * 50);
	free(path);
}
END_TEST

START_TEST(test_bulk_posix_calls_follow_max_read)
{
	char *path = tiny_stream("bulkcalls.raw", 50);
	const uint64_t records = 50 * 48;

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_BULK,
				PARLOAD_IO_POSIX, 0, 0), 2);
	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_BULK,
				PARLOAD_IO_POSIX, 0, 100),
			  1 + (records + 99) / 100);
	free(path);
}
END_TEST

/* A buffered POSIX reader reads the file in buffer-sized steps, whatever
 * the records. */
START_TEST(test_buffered_posix_reads_buffer_sized_steps)
{
	char *path = tiny_stream("bufsteps.raw", 1000);
	uint64_t size = file_size(path);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, 4096, 0),
			  (size + 4095) / 4096);
	/* Two passes over the file, each in 4 KiB steps from its start. */
	ck_assert_uint_le(calls(path, PARLOAD_STRATEGY_TWO_PASS,
				PARLOAD_IO_POSIX, 4096, 0),
			  2 * ((size + 4095) / 4096) + 1);
	free(path);
}
END_TEST

/* The stdio count comes from the kernel's per-thread counters; glibc's
 * unbuffered fread issues one read per call, which pins the method. */
START_TEST(test_stdio_unbuffered_calls_counted)
{
	char *path = tiny_stream("stdiocalls.raw", 50);

	if (!proc_io_readable()) {
		ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
					PARLOAD_IO_STDIO, 0, 0), 0);
		free(path);
		return;
	}
	if (!stdio_counts_exact()) {
		ck_assert_uint_ge(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
					PARLOAD_IO_STDIO, 0, 0), 1 + 2 * 50);
		free(path);
		return;
	}
	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_STDIO, 0, 0), 1 + 2 * 50);
	free(path);
}
END_TEST

START_TEST(test_buffer_reduces_calls_for_tiny_views)
{
	char *path = tiny_stream("tinybuf.raw", 1000);

	for (size_t si = 0; si < 3; si++) {
		uint64_t unbuf = calls(path, strategies[si], PARLOAD_IO_POSIX,
				       0, 0);
		uint64_t buf = calls(path, strategies[si], PARLOAD_IO_POSIX,
				     4096, 0);

		ck_assert_uint_gt(unbuf, 0);
		ck_assert_uint_gt(buf, 0);
		if (strategies[si] != PARLOAD_STRATEGY_BULK)
			ck_assert_uint_lt(buf * 10, unbuf);
		else
			ck_assert_uint_le(buf, unbuf);
	}
	if (proc_io_readable()) {
		uint64_t unbuf = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				       PARLOAD_IO_STDIO, 0, 0);
		uint64_t def = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				     PARLOAD_IO_STDIO, PARLOAD_BUFFER_DEFAULT,
				     0);
		uint64_t big = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				     PARLOAD_IO_STDIO, (size_t)1 << 20, 0);

		ck_assert_uint_gt(def, 0);
		ck_assert_uint_lt(def * 10, unbuf);
		ck_assert_uint_le(big, def);
	}
	free(path);
}
END_TEST

START_TEST(test_mmap_counts_no_reads)
{
	char *path = tiny_stream("mmapstats.raw", 20);
	parload_dataset ds;
	parload_error err;

	ck_assert_int_eq(load(path, PARLOAD_STRATEGY_MMAP, PARLOAD_IO_POSIX,
			      0, &ds, &err), 0);
	ck_assert_uint_eq(ds.stats.read_calls, 0);
	ck_assert_uint_eq(ds.stats.bytes_read, file_size(path));
	ck_assert_uint_eq(ds.stats.threads, 1);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* Every byte of the file is read at least once, and bulk and sequential
 * unbuffered read nothing twice. */
START_TEST(test_bytes_read_cover_the_file)
{
	char *path = tiny_stream("bytes.raw", 300);
	uint64_t size = file_size(path);

	for (size_t si = 0; si < 3; si++)
		for (size_t ii = 0; ii < 2; ii++)
			for (size_t bi = 0; bi < 4; bi++) {
				parload_dataset ds;
				parload_error err;

				ck_assert_int_eq(load(path, strategies[si],
						      ios[ii], buffers[bi],
						      &ds, &err), 0);
				ck_assert_uint_ge(ds.stats.bytes_read, size);
				if (buffers[bi] == 0 &&
				    strategies[si] != PARLOAD_STRATEGY_TWO_PASS &&
				    (ios[ii] == PARLOAD_IO_POSIX ||
				     stdio_counts_exact()))
					ck_assert_uint_eq(ds.stats.bytes_read,
							  size);
				parload_dataset_free(&ds);
			}
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("strategies");
	TCase *t = tcase_create("identical");

	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_every_combination_identical, 0, N_SHAPES);
	tcase_add_test(t, test_tiny_max_read_identical);
	suite_add_tcase(s, t);

	t = tcase_create("errors");
	tcase_add_loop_test(t, test_same_errors_as_parallel, 0, BAD_COUNT_);
	suite_add_tcase(s, t);

	t = tcase_create("stats");
	tcase_add_test(t, test_sequential_posix_unbuffered_calls);
	tcase_add_test(t, test_two_pass_posix_unbuffered_calls);
	tcase_add_test(t, test_bulk_posix_calls_follow_max_read);
	tcase_add_test(t, test_buffered_posix_reads_buffer_sized_steps);
	tcase_add_test(t, test_stdio_unbuffered_calls_counted);
	tcase_add_test(t, test_buffer_reduces_calls_for_tiny_views);
	tcase_add_test(t, test_mmap_counts_no_reads);
	tcase_add_test(t, test_bytes_read_cover_the_file);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
