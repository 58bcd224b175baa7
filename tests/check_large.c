/*
 * check_large.c - views and offsets past 4 GiB, cheaply.
 *
 * A sparse file of 65 views of 64 MiB: 4.06 GiB of pixels, the 2^32nd
 * byte inside view 63's payload and view 64's header beyond it.  Only the
 * headers and a few marked ranges (at the start, around 2^32, around view
 * 64's header, at the end) are written; the rest are holes, which read as
 * zeros without using the disk.  The file goes to /dev/shm where that is a
 * tmpfs (see scratch_dir), else to $TMPDIR.  The dataset itself is real
 * memory, so the test skips (exit 77) where the memory available is short,
 * under valgrind or ThreadSanitizer, or when PARLOAD_TEST_NO_LARGE is set.
 *
 * Loads: the parallel loader with two workers and an odd, small max_read
 * (65,537 bytes: tens of thousands of preadv calls whose boundaries fall
 * everywhere, 2^32 included); one worker with no cap of its own, so that
 * every request is the kernel's largest (just under 2 GiB) and the file
 * takes several; and the sequential strategy, whose read() calls move
 * the file position past 4 GiB.  Every marked byte must land at its place
 * in the pixel array, the holes around them must read as zeros, and every
 * view header must be exact.  Then bands of rows as sinograms copied from
 * the file mapped into memory (PARLOAD_OPT_MAP_SINOGRAMS), rows 64 MiB
 * apart, around 2^32 (the last rows) and the first, each byte against
 * the file's.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#include "testutil.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994 /* statfs f_type of a tmpfs (linux/magic.h) */
#endif

#define VIEWS 65
#define SIDE 8192 /* 8192 x 8192 u8: 64 MiB a view */
#define PAYLOAD ((uint64_t)SIDE * SIDE)
#define RECORD (PARLOAD_VIEW_HEADER_SIZE + PAYLOAD)
#define FILE_SIZE (PARLOAD_FILE_HEADER_SIZE + VIEWS * RECORD)
#define GIB ((uint64_t)1 << 30)
#define FOUR_GIB ((uint64_t)1 << 32)

/* The marked file ranges [begin, end). */
static const struct range {
	uint64_t begin, end;
} marks[] = {
	{ 0, 8192 },
	{ FOUR_GIB - 1024, FOUR_GIB + 1024 },
	/* View 64's header lies at 2^32 + 2112. */
	{ PARLOAD_FILE_HEADER_SIZE + 64 * RECORD - 512,
	  PARLOAD_FILE_HEADER_SIZE + 64 * RECORD + 4096 },
	{ FILE_SIZE - 8192, FILE_SIZE },
};
#define N_MARKS (sizeof(marks) / sizeof(marks[0]))

/* A marked pixel's value: never 0, so it cannot pass for a hole. */
static unsigned char mark(uint64_t off)
{
	return (unsigned char)(((off * 2654435761u) >> 13) | 1);
}

/* Where file offset off lands in the pixel array, or -1 if it is in a
 * header. */
static int64_t pixel_of(uint64_t off)
{
	uint64_t v, in;

	if (off < PARLOAD_FILE_HEADER_SIZE)
		return -1;
	v = (off - PARLOAD_FILE_HEADER_SIZE) / RECORD;
	in = (off - PARLOAD_FILE_HEADER_SIZE) % RECORD;
	if (in < PARLOAD_VIEW_HEADER_SIZE)
		return -1;
	return (int64_t)(v * PAYLOAD + in - PARLOAD_VIEW_HEADER_SIZE);
}

static void view_header(uint64_t i, parload_view_header *vh)
{
	memset(vh, 0, sizeof(*vh));
	vh->view_index = i;
	vh->timestamp_ns = 1000 * i + 7;
	vh->angle_deg = 0.5f * (float)i;
}

static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	uint64_t kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024;
}

/* Whether a file extended by ftruncate stays sparse in dir. */
static bool sparse_files(const char *dir)
{
	char path[4096];
	struct stat st;
	bool sparse = false;
	int fd;

	snprintf(path, sizeof(path), "%s/parload-sparse-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	if (ftruncate(fd, (off_t)GIB) == 0 && fstat(fd, &st) == 0)
		sparse = (uint64_t)st.st_blocks * 512 < GIB / 16;
	close(fd);
	unlink(path);
	return sparse;
}

/*
 * Where to put the file.  Holes in a tmpfs file read as the shared zero
 * page, while a disk file system fills the page cache with zeros for
 * them: /dev/shm, where it is a tmpfs, halves the memory the test needs
 * (and the time a fresh virtual machine takes to provide it).
 */
static const char *scratch_dir(uint64_t *need)
{
	const char *tmp = getenv("TMPDIR");
	struct statfs sf;

	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK) == 0 && sparse_files("/dev/shm")) {
		*need = FILE_SIZE + GIB;
		return "/dev/shm";
	}
	*need = 2 * FILE_SIZE + GIB;
	return tmp && *tmp ? tmp : "/tmp";
}

static char large_file[4200];

/* Why this test cannot run here, or NULL.  Chooses large_file. */
static const char *why_skip(void)
{
	const char *preload = getenv("LD_PRELOAD");
	static char why[128];
	const char *dir;
	uint64_t need;

	if (getenv("PARLOAD_TEST_NO_LARGE"))
		return "PARLOAD_TEST_NO_LARGE is set";
	if (sizeof(size_t) < 8)
		return "a 4 GiB dataset does not fit a 32-bit address space";
	if (preload && strstr(preload, "vgpreload"))
		return "running under valgrind";
#ifdef PARLOAD_SANITIZER
	/* ThreadSanitizer shadows every byte a read() fills: gigabytes. */
	if (strcmp(PARLOAD_SANITIZER, "thread") == 0)
		return "built with ThreadSanitizer";
#endif
	dir = scratch_dir(&need);
	if (!sparse_files(dir))
		return "the scratch file system does not keep files sparse";
	if (mem_available() < need) {
		snprintf(why, sizeof(why),
			 "less than %.1f GiB of memory available",
			 (double)need / (double)GIB);
		return why;
	}
	snprintf(large_file, sizeof(large_file), "%s/parload-large-%ld.raw",
		 dir, (long)getpid());
	return NULL;
}

/* Write the sparse file; false (and a message) if that fails. */
static bool write_large_file(void)
{
	unsigned char hb[PARLOAD_FILE_HEADER_SIZE];
	parload_file_header h;
	bool ok;
	int fd;

	if (parload_file_header_init(&h, VIEWS, SIDE, SIDE, PARLOAD_PIXEL_U8,
				     0) != 0)
		return false;
	memcpy(hb, &h, sizeof(hb));
	fd = open(large_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		perror(large_file);
		return false;
	}
	ok = ftruncate(fd, (off_t)FILE_SIZE) == 0;
	for (size_t m = 0; ok && m < N_MARKS; m++) {
		const struct range *r = &marks[m];
		size_t len = (size_t)(r->end - r->begin);
		unsigned char *buf = malloc(len);

		ok = buf != NULL;
		for (uint64_t o = r->begin; ok && o < r->end; o++)
			buf[o - r->begin] = pixel_of(o) < 0 ? 0 : mark(o);
		/* The headers are written over the zeros afterwards. */
		ok = ok && pwrite(fd, buf, len, (off_t)r->begin) == (ssize_t)len;
		free(buf);
	}
	ok = ok && pwrite(fd, hb, sizeof(hb), 0) == (ssize_t)sizeof(hb);
	for (uint64_t i = 0; ok && i < VIEWS; i++) {
		parload_view_header vh;

		view_header(i, &vh);
		ok = pwrite(fd, &vh, sizeof(vh),
			    (off_t)parload__view_offset(&h, i)) ==
		     (ssize_t)sizeof(vh);
	}
	if (close(fd) != 0)
		ok = false;
	if (!ok)
		perror(large_file);
	return ok;
}

static void check_dataset(const parload_dataset *ds, const char *what)
{
	const unsigned char *pix = ds->pixels;

	ck_assert_uint_eq(ds->desc.count, VIEWS);
	ck_assert_uint_eq(ds->desc.payload_size, PAYLOAD);
	for (uint64_t i = 0; i < VIEWS; i++) {
		parload_view_header vh;

		view_header(i, &vh);
		ck_assert_msg(memcmp(&ds->headers[i], &vh, sizeof(vh)) == 0,
			      "%s: view %" PRIu64 "'s header differs", what,
			      i);
	}
	for (size_t m = 0; m < N_MARKS; m++) {
		const struct range *r = &marks[m];

		for (uint64_t o = r->begin; o < r->end; o++) {
			int64_t p = pixel_of(o);

			if (p < 0)
				continue;
			ck_assert_msg(pix[p] == mark(o),
				      "%s: the byte at file offset %" PRIu64
				      " is %u in the dataset, want %u", what,
				      o, pix[p], mark(o));
		}
		/* The holes just outside the marks are zeros. */
		for (int side = 0; side < 2; side++) {
			uint64_t o = side ? r->end : r->begin - 1;
			int64_t p;

			if ((side == 0 && r->begin == 0) ||
			    (side == 1 && r->end == FILE_SIZE))
				continue;
			p = pixel_of(o);
			if (p >= 0)
				ck_assert_msg(pix[p] == 0,
					      "%s: hole at file offset %" PRIu64
					      " reads %u", what, o, pix[p]);
		}
	}
	ck_assert_uint_eq(ds->stats.bytes_read, FILE_SIZE);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void load_and_check(parload_strategy s, unsigned threads,
			   size_t max_read, const char *what,
			   uint64_t min_calls)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	double t0 = now();

	parload_options_init(&o);
	o.strategy = s;
	o.threads = threads;
	o.max_read = max_read;
	o.buffer_size = 0;
	o.error = &err;
	ck_assert_msg(parload_load(large_file, &o, &ds) == 0, "%s: %s", what,
		      err.message);
	check_dataset(&ds, what);
	ck_assert_msg(ds.stats.read_calls >= min_calls,
		      "%s: %" PRIu64 " read calls, want at least %" PRIu64,
		      what, ds.stats.read_calls, min_calls);
	printf("%s: %" PRIu64 " bytes, %" PRIu64 " read calls, %.2f s\n",
	       what, ds.stats.bytes_read, ds.stats.read_calls, now() - t0);
	parload_dataset_free(&ds);
}

START_TEST(test_past_4gib)
{
	/* Tens of thousands of preadv calls of 65,537 bytes or less. */
	load_and_check(PARLOAD_STRATEGY_PARALLEL, 2, 65537,
		       "parallel, 2 threads, max_read 65537",
		       FILE_SIZE / 65537);
	/* The loader's own cap, just under 2 GiB a call: the pixels take
	 * three calls, the file header one. */
	load_and_check(PARLOAD_STRATEGY_PARALLEL, 1, SIZE_MAX,
		       "parallel, 1 thread, no max_read",
		       1 + (FILE_SIZE - 1) / PARLOAD__KERNEL_MAX_READ + 1);
	/* read() at file positions past 4 GiB: one for the file header and
	 * one per header and payload of each view (64 MiB each). */
	load_and_check(PARLOAD_STRATEGY_SEQUENTIAL, 1, 128 << 20,
		       "sequential, posix", 1 + 2 * VIEWS);
}
END_TEST

/* The byte a file offset holds: a mark, or a hole's zero. */
static unsigned char file_byte(uint64_t off)
{
	for (size_t m = 0; m < N_MARKS; m++)
		if (off >= marks[m].begin && off < marks[m].end)
			return pixel_of(off) < 0 ? 0 : mark(off);
	return 0;
}

/* Rows [r0, r1) of every view as sinograms, copied from the file mapped
 * (PARLOAD_OPT_MAP_SINOGRAMS) by 2 workers: each view's rows lie 64 MiB
 * from the last, so every batch moves a worker's window of the file,
 * offsets past 2^32 included; every byte is the file's at its offset, and
 * nothing is read but the file header. */
static void mapped_band(uint32_t r0, uint32_t r1)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	char what[96];
	double t0 = now();

	snprintf(what, sizeof(what), "mapped sinograms, rows %" PRIu32
		 ":%" PRIu32, r0, r1);
	parload_options_init(&o);
	o.threads = 2;
	o.flags = PARLOAD_OPT_MAP_SINOGRAMS;
	o.error = &err;
	o.selection.rows.start = r0;
	o.selection.rows.stop = r1;
	o.selection.layout = PARLOAD_LAYOUT_SINOGRAMS;
	ck_assert_msg(parload_load(large_file, &o, &ds) == 0, "%s: %s", what,
		      err.message);
	for (uint64_t i = 0; i < VIEWS; i++) {
		parload_view_header vh;

		view_header(i, &vh);
		ck_assert_msg(memcmp(&ds.headers[i], &vh, sizeof(vh)) == 0,
			      "%s: view %" PRIu64 "'s header differs", what,
			      i);
	}
	for (uint32_t r = r0; r < r1; r++)
		for (uint64_t v = 0; v < VIEWS; v++) {
			const unsigned char *row =
				(const unsigned char *)ds.pixels +
				((uint64_t)(r - r0) * VIEWS + v) * SIDE;
			const uint64_t at = PARLOAD_FILE_HEADER_SIZE +
					    v * RECORD +
					    PARLOAD_VIEW_HEADER_SIZE +
					    (uint64_t)r * SIDE;

			for (uint64_t c = 0; c < SIDE; c++)
				if (row[c] != file_byte(at + c))
					ck_abort_msg("%s: row %" PRIu32
						     " of view %" PRIu64
						     ", column %" PRIu64
						     ": %u, want %u", what, r,
						     v, c, row[c],
						     file_byte(at + c));
		}
	ck_assert_msg(ds.stats.read_calls == 1, "%s: %" PRIu64 " read calls",
		      what, ds.stats.read_calls);
	printf("%s: %" PRIu64 " bytes, %.2f s\n", what, ds.stats.bytes_read,
	       now() - t0);
	parload_dataset_free(&ds);
}

START_TEST(test_mapped_sinograms_past_4gib)
{
	/* The rows around 2^32, the last of view 63's payload (and so of
	 * every view: the file's last bytes too). */
	const int64_t p = pixel_of(FOUR_GIB) - 63 * (int64_t)PAYLOAD;
	const uint32_t r = (uint32_t)(p / SIDE);

	mapped_band(r - 2, PARLOAD__MIN(r + 3, SIDE));
	/* The first rows, which the first mark covers in view 0. */
	mapped_band(0, 2);
}
END_TEST

int main(void)
{
	const char *why = why_skip();
	Suite *s;
	TCase *t;
	int failed;

	if (why) {
		printf("check_large: SKIP: %s\n", why);
		return 77;
	}
	/* Made and removed here, not in the forked test, so that a failing
	 * test leaves no 4 GiB file behind. */
	if (!write_large_file()) {
		unlink(large_file);
		return 99;
	}
	s = suite_create("large");
	t = tcase_create("past 4 GiB");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_past_4gib);
	tcase_add_test(t, test_mapped_sinograms_past_4gib);
	suite_add_tcase(s, t);
	failed = tu_run(s) != EXIT_SUCCESS;
	unlink(large_file);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
