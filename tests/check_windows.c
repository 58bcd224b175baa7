/*
 * check_windows.c - batches through windows (parload_request.window_bytes):
 * out-of-core loads whose views are delivered through at most two
 * reused windows and never gathered into arrays.  Part 1
 * (check_windows_rss) also bounds the peak of resident memory, which is
 * valgrind's own under valgrind.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batchutil.h"

START_TEST(test_window_smaller_than_a_view)
{
	bu_fixture f;

	bu_fixture_init(&f, "small.raw", 0, false, 2, 0, NULL, 0, 0);
	f.r.window_bytes = BU_PS + 32 - 1;
	ck_assert_msg(bu_fixture_run(&f) == PARLOAD_EINVAL, "%d %s", f.rc,
		      f.err.message);
	ck_assert_msg(strstr(f.err.message, "smaller than one view") &&
			      strstr(f.err.message, f.path),
		      "the message does not say why: %s", f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(bu_zeroed(&f.ds));
	/* One view exactly: batches of one view. */
	f.r.window_bytes = BU_PS + 32;
	ck_assert_msg(bu_fixture_run(&f) == 0, "%s", f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, BU_VIEWS, "one-view window");
	ck_assert_uint_eq(f.g.batches, BU_VIEWS);
	ck_assert_int_le(f.g.n_windows, 2);
	bu_fixture_free(&f);
}
END_TEST

/* The process's resident memory now and its peak since the last reset
 * (bytes); the peak is reset when the kernel lets us (clear_refs 5),
 * else it is ru_maxrss. */
static bool reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok = f && fputs("5", f) >= 0;

	if (f && fclose(f) != 0)
		ok = false;
	return ok;
}

typedef struct window_check {
	int fd;             /* the file, read by the test */
	uint64_t rec;       /* record size */
	unsigned char *buf; /* one record */
} window_check;

/* Every view of a batch equals its record in the file, read here with
 * pread: the copies of the whole file would not fit the budget. */
static void check_against_file(bu_got *g, const parload_batch *b)
{
	window_check *w = g->check_arg;

	for (uint64_t i = 0; i < b->count; i++) {
		const uint64_t v = b->first + i;

		ck_assert_int_eq(pread(w->fd, w->buf, w->rec,
				       (off_t)(64 + v * w->rec)),
				 (ssize_t)w->rec);
		ck_assert_msg(memcmp(w->buf, &b->headers[i], 32) == 0 &&
				      memcmp(w->buf + 32,
					     (const unsigned char *)b->pixels +
						     i * g->view_bytes,
					     g->view_bytes) == 0,
			      "view %" PRIu64 " differs from the file", v);
	}
}

/* A file 40 times the window: every view, through at most two windows,
 * no arrays; with bounded, the peak of resident memory grows by no more
 * than two windows and 16 MiB. */
static void load_big_file(bool bounded)
{
	const uint64_t views = 160, width = 512, height = 256;
	const uint64_t ps = width * height * 2, window = 4 * (ps + 32);
	const uint64_t bound = 2 * window + ((uint64_t)16 << 20);
	char *path = tu_path("big.raw");
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	parload_dataset ds;
	parload_error err;
	window_check w;
	uint64_t base, peak;
	bool exact;
	bu_got g;

	tu_write_stream(path, views, width, height, PARLOAD_PIXEL_U16, 0, 3);
	w.rec = ps + 32;
	w.buf = malloc(w.rec);
	ck_assert_ptr_nonnull(w.buf);
	memset(w.buf, 1, w.rec);
	w.fd = open(path, O_RDONLY);
	ck_assert_int_ge(w.fd, 0);
	bu_got_init(&g, ps, 0);
	g.keep = false;
	g.check = check_against_file;
	g.check_arg = &w;
	parload_request_init(&r);
	r.source.path = path;
	r.window_bytes = window;
	exact = reset_peak();
	base = exact ? tu_status_kib("VmRSS") : tu_status_kib("VmHWM");
	ck_assert_msg(bu_run(l, &r, &g, &ds, &err) == 0, "%s", err.message);
	peak = tu_status_kib("VmHWM");
	ck_assert_uint_eq(g.views, views);
	ck_assert_uint_eq(g.max_count, 4);
	ck_assert_int_le(g.n_windows, 2);
	ck_assert_ptr_null(ds.headers);
	ck_assert_ptr_null(ds.pixels);
	ck_assert_uint_eq(ds.shape.views, views);
	ck_assert_uint_eq(ds.desc.count, views);
	if (bounded)
		ck_assert_msg((peak - base) * 1024 <= bound,
			      "window of %" PRIu64 " KiB over a %" PRIu64
			      " MiB file: peak resident memory grew by %" PRIu64
			      " KiB (%s), more than two windows and 16 MiB",
			      window >> 10, views * w.rec >> 20, peak - base,
			      exact ? "peak reset first" : "ru_maxrss-like");
	parload_dataset_free(&ds);
	close(w.fd);
	free(w.buf);
	bu_got_free(&g);
	free(path);
	parload_loader_free(l);
}

START_TEST(test_window_loads_big_file)
{
	load_big_file(false);
}
END_TEST

START_TEST(test_window_bounds_memory)
{
	load_big_file(true);
}
END_TEST

static Suite *windows_suite(void)
{
	Suite *s = suite_create("windows");
	TCase *t = tu_tcase(s, "windows", 30);

	tcase_add_test(t, test_window_smaller_than_a_view);
	tcase_add_test(t, test_window_loads_big_file);
	return s;
}

static Suite *rss_suite(void)
{
	Suite *s = suite_create("windows_rss");
	TCase *t = tu_tcase(s, "resident memory", 30);

	tcase_add_test(t, test_window_bounds_memory);
	return s;
}

static const char *why_no_rss(void)
{
	return tu_under_valgrind() ? "under valgrind the resident memory is "
				     "valgrind's" :
				     NULL;
}

static const tu_part parts[] = {
	{ "check_windows", NULL, windows_suite },
	{ "check_windows_rss", why_no_rss, rss_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
