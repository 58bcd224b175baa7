/*
 * check_batch.c - views delivered while the load runs
 * (parload_request.on_batch): every view exactly once, in file order,
 * compared with the file read serially by the test (tu_serial_read) and
 * sliced by the test; for batch sizes from one view to more than the file,
 * 1 to 4 threads, selections, bad CRCs, a callback that stops the load,
 * out-of-core windows, files still being written (PARLOAD_REQ_FOLLOW),
 * pipes, and (with the fault-injection seam) failures mid-stream.
 *
 * The follow tests print, without asserting anything about them, the delay
 * between a view's flush by the writer and its delivery at 200 views a
 * second, and the CPU time the process spends while it waits.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"
#include "testutil.h"

/* The stream most tests load: 37 views (a prime: no batch size but 1 and
 * 37 divides it) of 24 x 10 u16. */
#define VIEWS 37
#define WIDTH 24
#define HEIGHT 10
#define PS ((uint64_t)WIDTH * HEIGHT * 2)
#define NEVER UINT64_MAX

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the process (RUSAGE_SELF) or of this thread
 * (RUSAGE_THREAD). */
static double cpu_seconds(int who)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(who, &ru), 0);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* The test stream, with CRCs when flags says so; damaged, views 5 and 22
 * do not match their CRCs. */
static char *stream(const char *name, uint32_t flags, bool damaged,
		    tu_soa *ref)
{
	char *path = tu_path(name);

	tu_write_stream(path, VIEWS, WIDTH, HEIGHT, PARLOAD_PIXEL_U16, flags,
			11);
	if (damaged) {
		tu_flip(path, tu_payload_off(PS, 5) + 7);
		tu_flip(path, tu_payload_off(PS, 22) + PS - 1);
	}
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	return path;
}

static parload_loader *loader(unsigned threads, unsigned flags)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	parload_options_init(&o);
	o.threads = threads;
	o.flags = flags | PARLOAD_OPT_NO_BIND;
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s",
		      err.message);
	return l;
}

static bool zeroed(const parload_dataset *ds)
{
	static const parload_dataset zero;

	return memcmp(ds, &zero, sizeof(zero)) == 0;
}

/* The process runs as many threads as it did: a joined thread can linger
 * in /proc/self/task for a moment after pthread_join() returns, so the
 * count is given a second to settle. */
static void assert_tasks(int tasks, const char *what)
{
	int now_running = tu_count_entries("/proc/self/task");

	for (int tries = 0; now_running != tasks && tries < 1000; tries++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		now_running = tu_count_entries("/proc/self/task");
	}
	ck_assert_msg(now_running == tasks, "%s: %d threads running, %d "
		      "before", what, now_running, tasks);
}

/* ---- what the callback saw ---- */

typedef struct got {
	const parload_dataset *ds; /* batches point into it (no window) */
	uint64_t view_bytes;       /* of the selection */
	uint64_t stop_at;          /* stop the load at this batch */
	bool keep;                 /* copy what arrives */
	bool windowed;
	uint64_t batches, views, max_count;
	uint64_t total, bytes_done, bytes_total;
	double seconds;
	const void *windows[3];    /* distinct pixel addresses of batches */
	const parload_view_header *base; /* pulled: headers of view 0 */
	int n_windows;
	unsigned char *headers, *pixels; /* copies of every view delivered */
	double *when;              /* when each view arrived, or NULL */
	/* Checks a batch against the file itself (the windows test). */
	void (*check)(struct got *g, const parload_batch *b);
	void *check_arg;
} got;

static void got_init(got *g, uint64_t view_bytes, uint64_t capacity)
{
	memset(g, 0, sizeof(*g));
	g->view_bytes = view_bytes;
	g->stop_at = NEVER;
	g->keep = true;
	g->headers = malloc(capacity * 32 + 1);
	g->pixels = malloc(capacity * view_bytes + 1);
	ck_assert(g->headers && g->pixels);
}

static void got_free(got *g)
{
	free(g->headers);
	free(g->pixels);
	free(g->when);
}

static void note_window(got *g, const void *p)
{
	for (int i = 0; i < g->n_windows; i++)
		if (g->windows[i] == p)
			return;
	ck_assert_msg(g->n_windows < 3, "more than 2 windows in turn");
	g->windows[g->n_windows++] = p;
}

static int on_batch(const parload_batch *b, void *arg)
{
	got *g = arg;

	ck_assert_msg(b->first == g->views,
		      "batch %" PRIu64 " starts at view %" PRIu64
		      ", expected %" PRIu64,
		      g->batches, b->first, g->views);
	ck_assert_uint_gt(b->count, 0);
	ck_assert_uint_eq(b->views_done, b->first + b->count);
	if (g->batches == 0) {
		g->total = b->views_total;
		g->bytes_total = b->bytes_total;
	}
	ck_assert_uint_eq(b->views_total, g->total);
	ck_assert_uint_eq(b->bytes_total, g->bytes_total);
	ck_assert_uint_le(b->views_done, b->views_total);
	ck_assert_uint_ge(b->bytes_total, b->views_total * g->view_bytes);
	ck_assert_msg(b->bytes_done > g->bytes_done,
		      "bytes_done went from %" PRIu64 " to %" PRIu64,
		      g->bytes_done, b->bytes_done);
	ck_assert_uint_le(b->bytes_done, b->bytes_total);
	ck_assert(b->seconds >= g->seconds);
	ck_assert_ptr_nonnull(b->headers);
	ck_assert_ptr_nonnull(b->pixels);
	if (g->windowed) {
		note_window(g, b->pixels);
	} else if (g->ds) {
		/* Into the dataset's arrays, where the view stays. */
		ck_assert_ptr_eq(b->headers, g->ds->headers + b->first);
		ck_assert_ptr_eq(b->pixels, (const unsigned char *)
						    g->ds->pixels +
					    b->first * g->view_bytes);
	} else {
		/* Pulled: into the arrays of a dataset that the stream hands
		 * over at the end. */
		if (g->batches == 0)
			g->base = b->headers - b->first;
		ck_assert_ptr_eq(b->headers, g->base + b->first);
	}
	if (g->keep) {
		memcpy(g->headers + b->first * 32, b->headers, b->count * 32);
		memcpy(g->pixels + b->first * g->view_bytes, b->pixels,
		       b->count * g->view_bytes);
	}
	if (g->check)
		g->check(g, b);
	if (g->when)
		for (uint64_t i = 0; i < b->count; i++)
			g->when[b->first + i] = now();
	g->views += b->count;
	g->max_count = b->count > g->max_count ? b->count : g->max_count;
	g->bytes_done = b->bytes_done;
	g->seconds = b->seconds;
	return g->batches++ == g->stop_at;
}

/* Output view k of a selection, from the serial reading. */
static void assert_view(const unsigned char *header, const unsigned char *pix,
			const tu_soa *ref, const parload_shape *s, uint64_t k,
			const char *what)
{
	const uint64_t v = parload_shape_view(s, k), bpp = s->bytes_per_pixel;
	const uint64_t width = ref->payload_size / bpp /
			       ((const parload_file_header *)ref->file_header)
				       ->height;
	const unsigned char *rec = ref->pixels + v * ref->payload_size;

	ck_assert_msg(memcmp(header, ref->headers + v * 32, 32) == 0,
		      "%s: output view %" PRIu64 " (file view %" PRIu64
		      "): header differs", what, k, v);
	for (uint64_t r = 0; r < s->rows; r++)
		ck_assert_msg(memcmp(pix + r * s->cols * bpp,
				     rec + ((s->row_start + r) * width +
					    s->col_start) * bpp,
				     s->cols * bpp) == 0,
			      "%s: output view %" PRIu64 " (file view %" PRIu64
			      ") row %" PRIu64 " differs",
			      what, k, v, r);
}

/* The first n views that arrived are those of the selection s. */
static void assert_got(const got *g, const tu_soa *ref,
		       const parload_shape *s, uint64_t n, const char *what)
{
	ck_assert_msg(g->views == n, "%s: %" PRIu64 " views delivered, "
		      "expected %" PRIu64, what, g->views, n);
	for (uint64_t k = 0; k < n; k++)
		assert_view(g->headers + k * 32, g->pixels + k * s->view_bytes,
			    ref, s, k, what);
}

static void resolve(const char *path, const parload_selection *sel,
		    parload_shape *s)
{
	parload_file_header h;
	parload_error err;

	ck_assert_int_eq(parload_read_header(path, &h, &err), 0);
	ck_assert_msg(tu_resolve(&h, sel, s, &err) == 0, "%s",
		      err.message);
}

static int run(parload_loader *l, parload_request *r, got *g,
	       parload_dataset *ds, parload_error *err)
{
	r->on_batch = on_batch;
	r->batch_arg = g;
	g->ds = ds;
	g->windowed = r->window_bytes != 0;
	memset(err, 0, sizeof(*err));
	memset(ds, 0x5a, sizeof(*ds));
	return parload_loader_run(l, r, ds, err);
}

/* A batched request for sel of path (NULL: the whole file): batches of
 * per views, through windows of window views (0: none); *s is the
 * selection resolved, and g is ready to collect it. */
static void prepare(parload_request *r, got *g, parload_shape *s,
		    const char *path, const parload_selection *sel,
		    uint64_t per, uint64_t window)
{
	resolve(path, sel, s);
	got_init(g, s->view_bytes, s->views);
	parload_request_init(r);
	r->source.path = path;
	r->selection = sel;
	r->batch_views = per;
	r->window_bytes = window * (s->view_bytes + 32);
}

/* One batched load under test: the loader, the file and its serial
 * reading, the request, what arrived, and what the load returned. */
typedef struct fixture {
	parload_loader *l;
	char *path;
	tu_soa ref;
	parload_request r;
	parload_shape s;
	got g;
	parload_dataset ds;
	parload_error err;
	int rc;
} fixture;

/* The test stream as name (file_flags: PARLOAD_FLAG_*; damaged: see
 * stream()), a loader of threads with opts (PARLOAD_OPT_*), and a
 * request for sel as prepare() makes it. */
static void fixture_init(fixture *f, const char *name, uint32_t file_flags,
			 bool damaged, unsigned threads, unsigned opts,
			 const parload_selection *sel, uint64_t per,
			 uint64_t window)
{
	memset(f, 0, sizeof(*f));
	f->l = loader(threads, opts);
	f->path = stream(name, file_flags, damaged, &f->ref);
	prepare(&f->r, &f->g, &f->s, f->path, sel, per, window);
}

static int fixture_run(fixture *f)
{
	return f->rc = run(f->l, &f->r, &f->g, &f->ds, &f->err);
}

static void fixture_free(fixture *f)
{
	parload_dataset_free(&f->ds);
	got_free(&f->g);
	tu_soa_free(&f->ref);
	free(f->path);
	parload_loader_free(f->l);
}

/* Another whole-file batched load of f's file in batches of per views:
 * every view, the dataset equal to the serial reading. */
static void assert_loads(fixture *f, uint64_t per, const char *what)
{
	fixture again = *f;

	prepare(&again.r, &again.g, &again.s, f->path, NULL, per, 0);
	ck_assert_msg(fixture_run(&again) == 0, "%s: %s", what,
		      again.err.message);
	assert_got(&again.g, &f->ref, &again.s, again.s.views, what);
	tu_assert_same(&again.ds, &f->ref);
	parload_dataset_free(&again.ds);
	got_free(&again.g);
}

/* ---- coverage: batch sizes and threads ---- */

/* Batch sizes: views, or pixel bytes, or neither (the default). */
static const struct {
	uint64_t views, bytes, per;
} sizes[] = {
	{ 1, 0, 1 },
	{ 3, 0, 3 },
	{ 5, 0, 5 },
	{ VIEWS, 0, VIEWS },
	{ 1000, 0, VIEWS },
	{ 0, 7 * PS + 1, 7 },
	{ 0, PS / 2, 1 },          /* less than a view: one view */
	{ 0, 0, VIEWS },           /* the default: far more than 17 KiB */
};
#define N_SIZES TU_COUNT(sizes)

START_TEST(test_every_view_once_in_order)
{
	const unsigned threads = 1 + (unsigned)_i / N_SIZES;
	const int z = _i % N_SIZES;
	char what[96];
	fixture f;

	snprintf(what, sizeof(what), "%u threads, batches of %" PRIu64
		 " views / %" PRIu64 " bytes", threads, sizes[z].views,
		 sizes[z].bytes);
	fixture_init(&f, "cover.raw", 0, false, threads, 0, NULL,
		     sizes[z].views, 0);
	f.r.batch_bytes = sizes[z].bytes;
	ck_assert_msg(fixture_run(&f) == 0, "%s: %s", what, f.err.message);
	assert_got(&f.g, &f.ref, &f.s, VIEWS, what);
	/* Full batches but the last. */
	ck_assert_uint_eq(f.g.batches,
			  (VIEWS + sizes[z].per - 1) / sizes[z].per);
	ck_assert_uint_eq(f.g.max_count, sizes[z].per);
	ck_assert_uint_eq(f.g.total, VIEWS);
	ck_assert_uint_eq(f.g.bytes_done, f.g.bytes_total);
	tu_assert_same(&f.ds, &f.ref);
	ck_assert_uint_eq(f.ds.stats.threads, threads);
	ck_assert_uint_eq(f.ds.stats.bytes_read, tu_file_size(f.path));
	fixture_free(&f);
}
END_TEST

/* ---- selections ---- */

static const struct {
	const char *views, *rows, *cols;
	uint64_t window; /* in views, 0: none */
} selections[] = {
	{ "2:35:3", NULL, NULL, 0 },
	{ "-20:", NULL, NULL, 0 },
	{ NULL, "3:7", NULL, 0 },
	{ NULL, NULL, "5:19", 0 },
	{ "1::4", "2:9", "0:11", 0 },
	{ "::2", "4:5", "23:24", 0 },
	{ "3::5", "1:8", "2:20", 2 },
	{ "::3", NULL, NULL, 3 },
};

static void parse_selection(parload_selection *sel, const char *views,
			    const char *rows, const char *cols)
{
	parload_error err;

	parload_selection_init(sel);
	if (views)
		ck_assert_int_eq(parload_slice_parse(views, 1, &sel->views,
						     &err), 0);
	if (rows)
		ck_assert_int_eq(parload_slice_parse(rows, 0, &sel->rows, &err),
				 0);
	if (cols)
		ck_assert_int_eq(parload_slice_parse(cols, 0, &sel->cols, &err),
				 0);
}

START_TEST(test_selections)
{
	const int x = _i / 2;
	const unsigned threads = _i % 2 ? 3 : 1;
	parload_selection sel;
	char what[128];
	fixture f;

	snprintf(what, sizeof(what), "views %s rows %s cols %s, %u threads",
		 selections[x].views ? selections[x].views : ":",
		 selections[x].rows ? selections[x].rows : ":",
		 selections[x].cols ? selections[x].cols : ":", threads);
	parse_selection(&sel, selections[x].views, selections[x].rows,
			selections[x].cols);
	fixture_init(&f, "select.raw", 0, false, threads, 0, &sel, 4,
		     selections[x].window);
	ck_assert_msg(fixture_run(&f) == 0, "%s: %s", what, f.err.message);
	assert_got(&f.g, &f.ref, &f.s, f.s.views, what);
	ck_assert_uint_eq(f.g.total, f.s.views);
	ck_assert_uint_eq(f.ds.shape.views, f.s.views);
	ck_assert_uint_eq(f.ds.shape.rows, f.s.rows);
	ck_assert_uint_eq(f.ds.shape.cols, f.s.cols);
	if (selections[x].window) {
		ck_assert_uint_le(f.g.max_count, selections[x].window);
		ck_assert_ptr_null(f.ds.headers);
		ck_assert_ptr_null(f.ds.pixels);
	} else {
		ck_assert_uint_eq(f.g.max_count, f.s.views < 4 ? f.s.views : 4);
		/* The dataset holds what the batches did. */
		ck_assert_int_eq(memcmp(f.ds.headers, f.g.headers,
					f.s.views * 32), 0);
		ck_assert_int_eq(memcmp(f.ds.pixels, f.g.pixels,
					f.s.views * f.s.view_bytes), 0);
	}
	fixture_free(&f);
}
END_TEST

/* What batches cannot do fails before anything is delivered. */
START_TEST(test_refused)
{
	parload_selection sel;
	parload_options o;
	fixture f;

	/* Sinograms need every view before any is complete. */
	parse_selection(&sel, NULL, "2:4", NULL);
	sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	fixture_init(&f, "refused.raw", 0, false, 2, 0, &sel, 0, 0);
	ck_assert_msg(fixture_run(&f) == PARLOAD_ENOTSUP, "sinograms: %s",
		      f.err.message);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(zeroed(&f.ds));

	/* A window or following without batches. */
	f.r.selection = NULL;
	f.r.on_batch = NULL;
	f.r.window_bytes = 1 << 20;
	ck_assert_msg(parload_loader_run(f.l, &f.r, &f.ds, &f.err) ==
			      PARLOAD_EINVAL,
		      "window alone: %s", f.err.message);
	f.r.window_bytes = 0;
	f.r.flags = PARLOAD_REQ_FOLLOW;
	ck_assert_msg(parload_loader_run(f.l, &f.r, &f.ds, &f.err) ==
			      PARLOAD_EINVAL,
		      "follow alone: %s", f.err.message);
	f.r.flags = 0;

	/* A single-threaded strategy. */
	parload_loader_free(f.l);
	parload_options_init(&o);
	o.strategy = PARLOAD_STRATEGY_SEQUENTIAL;
	ck_assert_int_eq(parload_loader_new(&f.l, &o, &f.err), 0);
	ck_assert_msg(fixture_run(&f) == PARLOAD_ENOTSUP, "sequential: %s",
		      f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(zeroed(&f.ds));
	fixture_free(&f);
}
END_TEST

/* ---- CRCs ---- */

/* Keep going: every batch arrives, the bad views are listed as file
 * views, also through windows and for a selection whose output index of
 * view 22 (5) is the other bad view's file index. */
START_TEST(test_keep_going)
{
	static const struct {
		const char *views;
		uint64_t window, n_bad;
		uint64_t bad[2];
	} cases[] = {
		{ NULL, 0, 2, { 5, 22 } },
		{ NULL, 4, 2, { 5, 22 } },
		{ "2::4", 0, 1, { 22 } },
		{ "2::4", 1, 1, { 22 } },
	};
	const int x = _i;
	parload_selection sel;
	fixture f;

	parse_selection(&sel, cases[x].views, NULL, NULL);
	fixture_init(&f, "bad.raw", PARLOAD_FLAG_CRC32C, true, 3,
		     PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING, &sel, 3,
		     cases[x].window);
	ck_assert_msg(fixture_run(&f) == 0, "case %d: %s", x, f.err.message);
	assert_got(&f.g, &f.ref, &f.s, f.s.views, "keep going");
	tu_assert_bad_views(&f.ds, cases[x].bad, cases[x].n_bad,
			    "keep going");
	ck_assert_uint_eq(f.ds.stats.crc_checked, f.s.views);
	fixture_free(&f);
}
END_TEST

/* Without keep-going, the batch that holds the first bad view is not
 * delivered, the batches before it are, and the error names the view and
 * its payload's offset.  Batches of 4: view 5 is in the second. */
START_TEST(test_bad_crc_stops)
{
	const bool window = _i % 2;
	const unsigned threads = 1 + (unsigned)_i / 2;
	char offset[32];
	fixture f;

	fixture_init(&f, "bad.raw", PARLOAD_FLAG_CRC32C, true, threads,
		     PARLOAD_OPT_VERIFY_CRC, NULL, 4, window ? 4 : 0);
	ck_assert_msg(fixture_run(&f) == PARLOAD_ECRC, "%s", f.err.message);
	ck_assert_int_eq(f.err.code, PARLOAD_ECRC);
	ck_assert_uint_eq(f.g.batches, 1);
	assert_got(&f.g, &f.ref, &f.s, 4, "before the bad view");
	ck_assert_uint_eq(f.err.view, 5);
	ck_assert_uint_eq(f.err.offset, tu_payload_off(PS, 5));
	snprintf(offset, sizeof(offset), "%" PRIu64, tu_payload_off(PS, 5));
	ck_assert_msg(strstr(f.err.message, "view 5") &&
			      strstr(f.err.message, offset) &&
			      strstr(f.err.message, f.path),
		      "message does not name the file, the view and the "
		      "offset: %s", f.err.message);
	ck_assert(zeroed(&f.ds));
	fixture_free(&f);
}
END_TEST

/* ---- cancel ---- */

/* The callback stops the load at the first, a middle and the last of 8
 * batches, with and without windows: PARLOAD_ECANCELED, nothing left
 * behind, and the same loader loads again at once. */
START_TEST(test_cancel)
{
	static const uint64_t stops[] = { 0, 3, 7 };
	const uint64_t stop = stops[_i % 3];
	const bool window = _i / 3;
	int tasks, fds;
	fixture f;

	fixture_init(&f, "cancel.raw", 0, false, 3, 0, NULL, 5,
		     window ? 5 : 0);
	assert_loads(&f, 5, "first load");
	tasks = tu_count_entries("/proc/self/task");
	fds = tu_count_entries("/proc/self/fd");
	f.g.stop_at = stop;
	ck_assert_msg(fixture_run(&f) == PARLOAD_ECANCELED,
		      "stop at batch %" PRIu64 ": %d %s", stop, f.rc,
		      f.err.message);
	ck_assert_int_eq(f.err.code, PARLOAD_ECANCELED);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	ck_assert_uint_eq(f.g.batches, stop + 1);
	assert_got(&f.g, &f.ref, &f.s, stop == 7 ? VIEWS : 5 * (stop + 1),
		   "canceled");
	ck_assert(zeroed(&f.ds));
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	assert_tasks(tasks, "canceled");
	/* At once, with batches and without. */
	assert_loads(&f, 5, "after the cancel");
	ck_assert_int_eq(tu_load(f.l, f.path, NULL, NULL, &f.ds, &f.err), 0);
	tu_assert_same(&f.ds, &f.ref);
	fixture_free(&f);
}
END_TEST

/* ---- windows ---- */

START_TEST(test_window_smaller_than_a_view)
{
	fixture f;

	fixture_init(&f, "small.raw", 0, false, 2, 0, NULL, 0, 0);
	f.r.window_bytes = PS + 32 - 1;
	ck_assert_msg(fixture_run(&f) == PARLOAD_EINVAL, "%d %s", f.rc,
		      f.err.message);
	ck_assert_msg(strstr(f.err.message, "smaller than one view") &&
			      strstr(f.err.message, f.path),
		      "the message does not say why: %s", f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(zeroed(&f.ds));
	/* One view exactly: batches of one view. */
	f.r.window_bytes = PS + 32;
	ck_assert_msg(fixture_run(&f) == 0, "%s", f.err.message);
	assert_got(&f.g, &f.ref, &f.s, VIEWS, "one-view window");
	ck_assert_uint_eq(f.g.batches, VIEWS);
	ck_assert_int_le(f.g.n_windows, 2);
	fixture_free(&f);
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

static uint64_t status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long v = 0;
	size_t n = strlen(field);

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

typedef struct window_check {
	int fd;             /* the file, read by the test */
	uint64_t rec;       /* record size */
	unsigned char *buf; /* one record */
} window_check;

/* Every view of a batch equals its record in the file, read here with
 * pread: the copies of the whole file would not fit the budget. */
static void check_against_file(got *g, const parload_batch *b)
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

/* A file 40 times the window: every view, no arrays, and a peak of
 * resident memory within two windows and 16 MiB. */
START_TEST(test_window_bounds_memory)
{
	const uint64_t views = 160, width = 512, height = 256;
	const uint64_t ps = width * height * 2, window = 4 * (ps + 32);
	const uint64_t bound = 2 * window + ((uint64_t)16 << 20);
	char *path = tu_path("big.raw");
	parload_loader *l = loader(2, 0);
	parload_request r;
	parload_dataset ds;
	parload_error err;
	window_check w;
	uint64_t base, peak;
	bool exact;
	got g;

	tu_write_stream(path, views, width, height, PARLOAD_PIXEL_U16, 0, 3);
	w.rec = ps + 32;
	w.buf = malloc(w.rec);
	ck_assert_ptr_nonnull(w.buf);
	memset(w.buf, 1, w.rec);
	w.fd = open(path, O_RDONLY);
	ck_assert_int_ge(w.fd, 0);
	got_init(&g, ps, 0);
	g.keep = false;
	g.check = check_against_file;
	g.check_arg = &w;
	parload_request_init(&r);
	r.source.path = path;
	r.window_bytes = window;
	exact = reset_peak();
	base = exact ? status_kib("VmRSS") : status_kib("VmHWM");
	ck_assert_msg(run(l, &r, &g, &ds, &err) == 0, "%s", err.message);
	peak = status_kib("VmHWM");
	ck_assert_uint_eq(g.views, views);
	ck_assert_uint_eq(g.max_count, 4);
	ck_assert_int_le(g.n_windows, 2);
	ck_assert_ptr_null(ds.headers);
	ck_assert_ptr_null(ds.pixels);
	ck_assert_uint_eq(ds.shape.views, views);
	ck_assert_uint_eq(ds.desc.count, views);
	printf("window of %" PRIu64 " KiB over a %" PRIu64 " MiB file: peak "
	       "resident memory grew by %" PRIu64 " KiB (bound %" PRIu64
	       " KiB, %s)\n", window >> 10, views * w.rec >> 20, peak - base,
	       bound >> 10, exact ? "peak reset first" : "ru_maxrss-like");
	fflush(stdout);
	if (!tu_under_valgrind())
		ck_assert_msg((peak - base) * 1024 <= bound,
			      "peak resident memory grew by %" PRIu64
			      " KiB, more than two windows and 16 MiB",
			      peak - base);
	parload_dataset_free(&ds);
	close(w.fd);
	free(w.buf);
	got_free(&g);
	free(path);
	parload_loader_free(l);
}
END_TEST

/* ---- following a file still being written ---- */

enum { END_CLOSE, END_STALL, END_HALF };

/* A writer thread: the header after start_delay, then a view every
 * period seconds, flushed one by one, until write views; then it closes,
 * stalls until released, or writes half a record and stops. */
typedef struct appender {
	const char *path;
	parload_file_header h;
	parload_writer *w;
	unsigned char *pixels; /* h.view_count payloads */
	uint64_t write;
	double start_delay, period;
	int end;
	double *flushed;       /* when each view was flushed */
	double cpu;            /* the writer thread's CPU time */
	sem_t release;         /* posted when the load is over */
	pthread_t thread;
} appender;

static void sleep_until(double t)
{
	double d = t - now();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *append(void *arg)
{
	appender *a = arg;
	parload_error err;
	const double t0 = now() + a->start_delay;
	const uint64_t ps = a->h.payload_size;

	sleep_until(t0);
	ck_assert_int_eq(parload_writer_flush(a->w, &err), 0);
	for (uint64_t i = 0; i < a->write; i++) {
		parload_view_header vh;

		memset(&vh, 0, sizeof(vh));
		vh.timestamp_ns = i * 5000000;
		vh.angle_deg = (float)i * 0.5f;
		sleep_until(t0 + (double)(i + 1) * a->period);
		ck_assert_int_eq(parload_writer_add(a->w, &vh,
						    a->pixels + i * ps, &err),
				 0);
		ck_assert_int_eq(parload_writer_flush(a->w, &err), 0);
		a->flushed[i] = now();
	}
	if (a->end == END_STALL)
		while (sem_wait(&a->release) != 0 && errno == EINTR)
			;
	if (a->end == END_HALF) {
		/* What a writer that dies mid-record leaves. */
		int fd = open(a->path, O_WRONLY | O_APPEND);
		unsigned char half[32 + 4096];

		ck_assert_int_ge(fd, 0);
		ck_assert_uint_le(32 + ps / 2, sizeof(half));
		memset(half, 0x77, sizeof(half));
		ck_assert_int_eq(write(fd, half, 32 + ps / 2),
				 (ssize_t)(32 + ps / 2));
		close(fd);
	}
	/* Fewer views than the header declares: PARLOAD_ECOUNT. */
	(void)parload_writer_close(a->w, &err);
	a->cpu = cpu_seconds(RUSAGE_THREAD);
	return NULL;
}

/* Create path (empty: the writer buffers its header) and start the
 * writer thread. */
static void appender_start(appender *a, const char *path, uint64_t views,
			   uint64_t write, double start_delay, double period,
			   int end)
{
	parload_error err;
	uint64_t ps, x = 0x2545f4914f6cdd1dull;

	memset(a, 0, sizeof(*a));
	a->path = path;
	ck_assert_int_eq(parload_file_header_init(&a->h, views, 64, 32,
						  PARLOAD_PIXEL_U16,
						  PARLOAD_FLAG_CRC32C), 0);
	ps = a->h.payload_size;
	a->pixels = malloc(views * ps);
	a->flushed = calloc(views, sizeof(double));
	ck_assert(a->pixels && a->flushed);
	for (uint64_t i = 0; i < views * ps; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a->pixels[i] = (unsigned char)x;
	}
	a->write = write;
	a->start_delay = start_delay;
	a->period = period;
	a->end = end;
	ck_assert_int_eq(sem_init(&a->release, 0, 0), 0);
	ck_assert_int_eq(parload_writer_open(&a->w, path, &a->h, &err), 0);
	ck_assert_int_eq(pthread_create(&a->thread, NULL, append, a), 0);
}

static void appender_join(appender *a)
{
	ck_assert_int_eq(sem_post(&a->release), 0);
	ck_assert_int_eq(pthread_join(a->thread, NULL), 0);
}

static void appender_free(appender *a)
{
	sem_destroy(&a->release);
	free(a->pixels);
	free(a->flushed);
}

/* The complete records of a file being written, read serially. */
static void read_prefix(const char *path, tu_soa *ref)
{
	size_t len;
	unsigned char *b = tu_read_all(path, &len);

	memset(ref, 0, sizeof(*ref));
	ck_assert_uint_ge(len, 64);
	memcpy(ref->file_header, b, 64);
	ref->payload_size = ((parload_file_header *)b)->payload_size;
	ref->view_count = (len - 64) / (32 + ref->payload_size);
	ref->headers = malloc(ref->view_count * 32 + 1);
	ref->pixels = malloc(ref->view_count * ref->payload_size + 1);
	ck_assert(ref->headers && ref->pixels);
	for (uint64_t i = 0; i < ref->view_count; i++) {
		const unsigned char *rec =
			b + 64 + i * (32 + ref->payload_size);

		memcpy(ref->headers + i * 32, rec, 32);
		memcpy(ref->pixels + i * ref->payload_size, rec + 32,
		       ref->payload_size);
	}
	free(b);
}

/* One load following a file that a writer thread writes: the load, the
 * writer, what arrived, and the process's CPU time and the wall time
 * the load took. */
typedef struct follow {
	char *path;
	parload_loader *l;
	appender a;
	parload_request r;
	got g;
	parload_dataset ds;
	parload_error err;
	parload_shape s;
	tu_soa ref;
	double wall, cpu;
	int rc;
} follow;

/* Start a writer of views views that writes the first write ones (see
 * appender_start), and follow the file with timeout, in batches of per
 * views through windows of window views (0: none), stopping at batch
 * stop_at, with a loader of 2 threads and flags. */
static void follow_run(follow *f, const char *name, unsigned flags,
		       uint64_t views, uint64_t write, double start_delay,
		       double period, int end, double timeout, uint64_t per,
		       uint64_t window, uint64_t stop_at)
{
	memset(f, 0, sizeof(*f));
	f->path = tu_path(name);
	f->l = loader(2, flags);
	appender_start(&f->a, f->path, views, write, start_delay, period, end);
	ck_assert_int_eq(tu_resolve(&f->a.h, NULL, &f->s,
						   &f->err), 0);
	got_init(&f->g, f->s.view_bytes, views);
	f->g.when = calloc(views, sizeof(double));
	ck_assert_ptr_nonnull(f->g.when);
	parload_request_init(&f->r);
	f->r.source.path = f->path;
	f->r.flags = PARLOAD_REQ_FOLLOW;
	f->r.timeout = timeout;
	f->r.batch_views = per;
	f->r.window_bytes = window * (f->s.view_bytes + 32);
	f->g.stop_at = stop_at;
	f->wall = now();
	f->cpu = cpu_seconds(RUSAGE_SELF);
	f->rc = run(f->l, &f->r, &f->g, &f->ds, &f->err);
	f->cpu = cpu_seconds(RUSAGE_SELF) - f->cpu;
	f->wall = now() - f->wall;
	appender_join(&f->a);
}

static void follow_free(follow *f)
{
	parload_dataset_free(&f->ds);
	got_free(&f->g);
	tu_soa_free(&f->ref);
	appender_free(&f->a);
	free(f->path);
	parload_loader_free(f->l);
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* 100 views at 200 a second: every view in order, as written.  The
 * delays from flush to delivery and the CPU time are printed. */
START_TEST(test_follow_at_a_fixed_rate)
{
	enum { N = 100 };
	double delay[N], sum = 0;
	follow f;

	follow_run(&f, "follow.raw", PARLOAD_OPT_VERIFY_CRC, N, N, 0.0, 0.005,
		   END_CLOSE, 2.0, 1, 0, NEVER);
	ck_assert_msg(f.rc == 0, "%s", f.err.message);
	ck_assert_int_eq(tu_serial_read(f.path, &f.ref), 0);
	assert_got(&f.g, &f.ref, &f.s, N, "followed");
	tu_assert_same(&f.ds, &f.ref);
	for (int i = 0; i < N; i++) {
		delay[i] = f.g.when[i] - f.a.flushed[i];
		sum += delay[i];
	}
	qsort(delay, N, sizeof(double), cmp_double);
	printf("follow, %d views at 200 views/s: flush to delivery median "
	       "%.2f ms, mean %.2f ms, 95th %.2f ms, max %.2f ms (target <= "
	       "50 ms); CPU of the process but the writer thread %.1f ms in "
	       "%.2f s = %.1f%% of a core (target < 5%%; the writer's %.1f ms "
	       "aside)\n",
	       N, delay[N / 2] * 1e3, sum / N * 1e3, delay[N * 95 / 100] * 1e3,
	       delay[N - 1] * 1e3, (f.cpu - f.a.cpu) * 1e3, f.wall,
	       100 * (f.cpu - f.a.cpu) / f.wall, f.a.cpu * 1e3);
	fflush(stdout);
	follow_free(&f);
}
END_TEST

/* A writer that stops after 10 of 40 views, alive (stalled) or dead in
 * the middle of the 11th record: the complete views arrive, then
 * PARLOAD_ETRUNCATED saying how many are complete, or with
 * PARLOAD_OPT_ALLOW_TRUNCATED success with them. */
START_TEST(test_follow_writer_stops)
{
	const int end = _i / 2 ? END_HALF : END_STALL;
	const bool allow = _i % 2;
	const double timeout = 0.3;
	follow f;

	follow_run(&f, "stops.raw", PARLOAD_OPT_VERIFY_CRC |
		   (allow ? PARLOAD_OPT_ALLOW_TRUNCATED : 0), 40, 10, 0.0,
		   0.002, end, timeout, 3, 0, NEVER);
	read_prefix(f.path, &f.ref);
	ck_assert_uint_eq(f.ref.view_count, 10);
	assert_got(&f.g, &f.ref, &f.s, 10,
		   end == END_HALF ? "died" : "stalled");
	ck_assert(f.wall >= timeout);
	if (allow) {
		ck_assert_msg(f.rc == 0, "%s", f.err.message);
		ck_assert_uint_eq(f.ds.desc.count, 10);
		ck_assert_uint_eq(f.ds.shape.views, 10);
		ck_assert_uint_eq(f.ds.stats.declared_views, 40);
		tu_assert_prefix(&f.ds, &f.ref, 10, "truncation allowed");
	} else {
		ck_assert_msg(f.rc == PARLOAD_ETRUNCATED, "%d %s", f.rc,
			      f.err.message);
		ck_assert_msg(strstr(f.err.message, "10 of the 40") &&
				      strstr(f.err.message, f.path),
			      "the message does not name the complete views: "
			      "%s", f.err.message);
		ck_assert(zeroed(&f.ds));
	}
	printf("follow, writer %s after 10 views, %.1f s timeout: process CPU "
	       "%.1f ms in %.2f s = %.1f%% of a core\n",
	       end == END_HALF ? "dead mid-record" : "stalled", timeout,
	       f.cpu * 1e3, f.wall, 100 * f.cpu / f.wall);
	fflush(stdout);
	follow_free(&f);
}
END_TEST

/* The load starts while the file is still empty (the writer holds its
 * header back): the header, written 0.2 s later, is waited for; also
 * through windows of 2 views, and stopped by the callback at its second
 * batch while the writer goes on. */
START_TEST(test_follow_header_late)
{
	const bool window = _i == 1, cancel = _i == 2;
	follow f;

	follow_run(&f, "late.raw", 0, 20, 20, 0.2, 0.001, END_CLOSE, 2.0, 6,
		   window ? 2 : 0, cancel ? 1 : NEVER);
	ck_assert(f.wall >= 0.2);
	ck_assert_int_eq(tu_serial_read(f.path, &f.ref), 0);
	if (cancel) {
		ck_assert_msg(f.rc == PARLOAD_ECANCELED, "%d %s", f.rc,
			      f.err.message);
		/* Following, a batch is what the file holds, up to 6. */
		ck_assert_uint_eq(f.g.batches, 2);
		ck_assert_uint_le(f.g.views, 12);
		assert_got(&f.g, &f.ref, &f.s, f.g.views, "canceled");
		ck_assert(zeroed(&f.ds));
	} else {
		ck_assert_msg(f.rc == 0, "%s", f.err.message);
		assert_got(&f.g, &f.ref, &f.s, 20, "header late");
	}
	if (window) {
		ck_assert_uint_le(f.g.max_count, 2);
		ck_assert_ptr_null(f.ds.pixels);
	} else if (!cancel) {
		tu_assert_same(&f.ds, &f.ref);
	}
	follow_free(&f);
}
END_TEST

/* ---- streams ---- */

enum { VIA_PIPE, VIA_SOCKET, VIA_FIFO, N_VIA };

typedef struct pusher {
	const char *fifo;      /* open this FIFO, or */
	int fd;                /* write to this descriptor */
	const unsigned char *data;
	size_t len;
	pthread_t thread;
} pusher;

static void *push(void *arg)
{
	pusher *p = arg;
	FILE *f = p->fifo ? fopen(p->fifo, "wb") : fdopen(p->fd, "wb");

	/* A reader that stopped early makes the write fail (EPIPE). */
	if (f) {
		(void)fwrite(p->data, 1, p->len, f);
		fclose(f);
	}
	return NULL;
}

/* Run f's request on a pipe, a socket or a FIFO's path, fed f's file by a
 * thread, with g made ready again (stopping where it stopped). */
static int run_fed(fixture *f, int via, const unsigned char *data,
		   size_t len)
{
	parload_request r = f->r;
	pusher p = { NULL, -1, data, len, 0 };
	const uint64_t stop_at = f->g.stop_at;
	int fds[2] = { -1, -1 };

	got_free(&f->g);
	got_init(&f->g, f->s.view_bytes, f->s.views);
	f->g.stop_at = stop_at;
	signal(SIGPIPE, SIG_IGN);
	if (via == VIA_FIFO) {
		p.fifo = f->r.source.path = tu_path("fifo");
		unlink(p.fifo);
		ck_assert_int_eq(mkfifo(p.fifo, 0600), 0);
	} else {
		ck_assert_int_eq(via == VIA_SOCKET ?
					 socketpair(AF_UNIX, SOCK_STREAM, 0,
						    fds) :
					 pipe(fds),
				 0);
		p.fd = fds[1];
		f->r.source.path = NULL;
		f->r.source.fd = fds[0];
		f->r.source.name = "fed stream";
	}
	ck_assert_int_eq(pthread_create(&p.thread, NULL, push, &p), 0);
	fixture_run(f);
	if (fds[0] >= 0)
		close(fds[0]);
	ck_assert_int_eq(pthread_join(p.thread, NULL), 0);
	free((char *)p.fifo);
	f->r = r;
	return f->rc;
}

/* A stream delivers batches too, in order; a window cannot read one. */
START_TEST(test_streams)
{
	const int via = _i % N_VIA;
	const uint64_t per = _i / N_VIA ? 4 : 1;
	unsigned char *data;
	size_t len;
	fixture f;

	fixture_init(&f, "fed.raw", PARLOAD_FLAG_CRC32C, false, 3,
		     PARLOAD_OPT_VERIFY_CRC, NULL, per, 0);
	data = tu_read_all(f.path, &len);
	ck_assert_msg(run_fed(&f, via, data, len) == 0, "via %d: %s", via,
		      f.err.message);
	assert_got(&f.g, &f.ref, &f.s, VIEWS, "stream");
	ck_assert_uint_eq(f.g.batches, (VIEWS + per - 1) / per);
	tu_assert_same(&f.ds, &f.ref);
	ck_assert_uint_eq(f.ds.stats.crc_checked, VIEWS);
	parload_dataset_free(&f.ds);

	/* Stopped at the second batch. */
	f.g.stop_at = 1;
	ck_assert_msg(run_fed(&f, via, data, len) == PARLOAD_ECANCELED,
		      "%d %s", f.rc, f.err.message);
	assert_got(&f.g, &f.ref, &f.s, 2 * per, "stream canceled");
	ck_assert(zeroed(&f.ds));

	/* A window needs a regular file. */
	f.g.stop_at = NEVER;
	f.r.window_bytes = 1 << 20;
	ck_assert_msg(run_fed(&f, via, data, len) == PARLOAD_ENOTSUP, "%d %s",
		      f.rc, f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(zeroed(&f.ds));
	free(data);
	fixture_free(&f);
}
END_TEST

/* ---- the iterator (parload_stream_*) ---- */

/* Open a stream of f's request and pull at most max batches, each
 * checked as on_batch checks a pushed one; the last parload_stream_next()
 * result. */
static int pull(fixture *f, parload_stream **st, uint64_t max)
{
	parload_batch b;
	int rc = 1;

	memset(&f->err, 0, sizeof(f->err));
	f->g.ds = NULL;
	f->g.windowed = f->r.window_bytes != 0;
	ck_assert_msg(parload_stream_open(st, f->l, &f->r, &f->err) == 0, "%s",
		      f->err.message);
	for (uint64_t n = 0; n < max && rc == 1; n++) {
		rc = parload_stream_next(*st, &b, &f->err);
		if (rc == 1)
			ck_assert_int_eq(on_batch(&b, &f->g), 0);
	}
	return rc;
}

/* Pulled to the end, with and without windows: the same views in the same
 * order, and the dataset handed over by the close. */
START_TEST(test_iterate)
{
	const bool window = _i;
	parload_stream *st;
	fixture f;

	fixture_init(&f, "pull.raw", 0, false, 3, 0, NULL, 4, window ? 4 : 0);
	ck_assert_msg(pull(&f, &st, NEVER) == 0, "%s", f.err.message);
	ck_assert_msg(parload_stream_close(st, &f.ds) == 0, "close");
	assert_got(&f.g, &f.ref, &f.s, VIEWS, "pulled");
	ck_assert_uint_eq(f.g.batches, (VIEWS + 3) / 4);
	ck_assert_uint_eq(f.g.bytes_done, f.g.bytes_total);
	ck_assert_uint_eq(f.ds.shape.views, VIEWS);
	if (window) {
		ck_assert_int_le(f.g.n_windows, 2);
		ck_assert_ptr_null(f.ds.headers);
		ck_assert_ptr_null(f.ds.pixels);
	} else {
		tu_assert_same(&f.ds, &f.ref);
		ck_assert_ptr_eq(f.ds.headers, f.g.base);
	}
	fixture_free(&f);
}
END_TEST

/* Closed early (before the first batch, after two, with and without
 * windows): PARLOAD_ECANCELED, nothing handed over or left running, and
 * the loader loads again at once. */
START_TEST(test_iterate_close_early)
{
	const uint64_t taken = _i % 2 ? 2 : 0;
	const bool window = _i / 2;
	parload_stream *st;
	int tasks, fds;
	fixture f;

	fixture_init(&f, "early.raw", 0, false, 3, 0, NULL, 4, window ? 4 : 0);
	assert_loads(&f, 4, "first load");
	tasks = tu_count_entries("/proc/self/task");
	fds = tu_count_entries("/proc/self/fd");
	ck_assert_int_eq(pull(&f, &st, taken), 1);
	memset(&f.ds, 0x5a, sizeof(f.ds));
	ck_assert_int_eq(parload_stream_close(st, &f.ds), PARLOAD_ECANCELED);
	ck_assert(zeroed(&f.ds));
	assert_got(&f.g, &f.ref, &f.s, 4 * taken, "closed early");
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	assert_tasks(tasks, "closed early");
	assert_loads(&f, 4, "after the close");
	fixture_free(&f);
}
END_TEST

/* A bad CRC: the batch before it, then the error from
 * parload_stream_next(), which the close returns too; a request with its
 * own on_batch is no stream. */
START_TEST(test_iterate_error)
{
	parload_stream *st;
	fixture f;

	fixture_init(&f, "ibad.raw", PARLOAD_FLAG_CRC32C, true, 2,
		     PARLOAD_OPT_VERIFY_CRC, NULL, 4, 0);
	ck_assert_int_eq(pull(&f, &st, NEVER), PARLOAD_ECRC);
	ck_assert_uint_eq(f.err.view, 5);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	assert_got(&f.g, &f.ref, &f.s, 4, "before the bad view");
	memset(&f.ds, 0x5a, sizeof(f.ds));
	ck_assert_int_eq(parload_stream_close(st, &f.ds), PARLOAD_ECRC);
	ck_assert(zeroed(&f.ds));

	f.r.on_batch = on_batch;
	ck_assert_int_eq(parload_stream_open(&st, f.l, &f.r, &f.err),
			 PARLOAD_EINVAL);
	fixture_free(&f);
}
END_TEST

/* A caller that has every view (views_done == views_total) and closes
 * without asking for more has not closed early: the load succeeded, and
 * the close returns 0 and hands the dataset over. */
START_TEST(test_iterate_close_after_last)
{
	parload_stream *st;
	parload_batch b;
	fixture f;

	fixture_init(&f, "last.raw", 0, false, 2, 0, NULL, 4, 0);
	ck_assert_msg(parload_stream_open(&st, f.l, &f.r, &f.err) == 0, "%s",
		      f.err.message);
	do
		ck_assert_int_eq(parload_stream_next(st, &b, &f.err), 1);
	while (b.views_done < b.views_total);
	ck_assert_int_eq(b.views_done, VIEWS);
	f.rc = parload_stream_close(st, &f.ds);
	ck_assert_msg(f.rc == 0, "every view was delivered, yet the close "
		      "returned %s", parload_err_name(f.rc));
	tu_assert_same(&f.ds, &f.ref);
	fixture_free(&f);
}
END_TEST

/* ---- faults (--enable-fault-injection) ---- */

#ifdef PARLOAD_FAULT_INJECTION

/* What the fault tests share: the seam's stream and its reference, a
 * warm loader of 3 threads, what the process held then, and a request for
 * batches of per views (through windows of as many views, or none). */
typedef struct ground {
	const ft_config *c;
	char *path;
	tu_soa ref;
	parload_shape s;
	ft_snapshot base;
	parload_loader *l;
	parload_request r;
	got g;
} ground;

static void ground_init(ground *f, const char *name, uint64_t per,
			bool window)
{
	f->c = ft_config_of(tu_parallel(3));
	f->path = ft_stream(name, &f->ref);
	f->l = ft_warm_loader(f->c, f->path, &f->ref, &f->base);
	prepare(&f->r, &f->g, &f->s, f->path, NULL, per, window ? per : 0);
}

static void ground_free(ground *f)
{
	got_free(&f->g);
	parload_loader_free(f->l);
	tu_soa_free(&f->ref);
	free(f->path);
}

/* A read fails in the middle of the file: the batches before the failing
 * view arrive, then the error, which names that view and the offset, and
 * nothing is left behind. */
START_TEST(test_fault_mid_stream)
{
	ground f;
	parload_dataset ds;
	parload_error err;
	uint64_t off;
	int rc;

	ground_init(&f, "mid.raw", 1, _i);
	off = tu_payload_off(f.s.view_bytes, 4) + 100;
	parload__fault_eio_at(off);
	rc = run(f.l, &f.r, &f.g, &ds, &err);
	parload__fault_reset();
	ck_assert_msg(rc == PARLOAD_EIO, "%d %s", rc, err.message);
	assert_got(&f.g, &f.ref, &f.s, 4, "before the failing view");
	ck_assert_uint_eq(err.view, 4);
	ck_assert_uint_eq(err.offset, off);
	ck_assert_ptr_nonnull(strstr(err.message, f.path));
	ck_assert(zeroed(&ds));
	ft_assert_as_before(&f.base, "failed mid-stream");
	ft_assert_loads_exactly(f.l, f.path, &f.ref, "after the failure");
	ft_assert_as_before(&f.base, "loaded again");
	ground_free(&f);
}
END_TEST

/* Every call of a batched load (batches of 2 views, with and without
 * windows) failed in turn: the views delivered before the failure are
 * the file's, the failure is what the call means, nothing is left
 * behind, and the loader then loads exactly. */
START_TEST(test_fault_walk)
{
	const char *how = _i ? " through windows" : "";
	ground f;
	parload_dataset ds;
	parload_error err;
	uint64_t n, midway = 0;
	ft_tally t = { { 0 }, "" };
	char what[96];
	got *g = &f.g;

	ground_init(&f, "walk.raw", 2, _i);
	for (n = 1;; n++) {
		int k, rc;

		snprintf(what, sizeof(what), "batches%s, call %" PRIu64, how,
			 n);
		got_free(g);
		got_init(g, f.s.view_bytes, f.s.views);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = run(f.l, &f.r, g, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		/* What arrived is the file's, whole batches in order. */
		ck_assert_msg(g->views == f.s.views || g->views % 2 == 0,
			      "%s: %" PRIu64 " views", what, g->views);
		assert_got(g, &f.ref, &f.s, g->views, what);
		if (rc == 0) {
			ck_assert_msg(k < 0 || ft_may_succeed(f.c, k),
				      "%s: %s failed, yet the load succeeded",
				      what, parload__fault_kind_name(k));
			ck_assert_uint_eq(g->views, f.s.views);
			if (!_i)
				ft_assert_same(&ds, &f.ref);
			parload_dataset_free(&ds);
		} else {
			ck_assert_msg(k >= 0, "%s: failed with no fault: %s",
				      what, err.message);
			t.n[k]++;
			ft_assert_failure(what, k, rc, &err, f.path, false);
			ck_assert_msg(zeroed(&ds), "%s: dataset not zeroed",
				      what);
			midway += g->views > 0;
		}
		ft_assert_as_before(&f.base, what);
		if (k < 0)
			break;
		ft_assert_loads_exactly(f.l, f.path, &f.ref, what);
	}
	/* Some failures came after batches had been delivered. */
	ck_assert_uint_gt(midway, 0);
	printf("walk batches%s: %" PRIu64 " faults, %" PRIu64 " after the "
	       "first batch (%s)\n", how, n - 1, midway, ft_tally_text(&t));
	ground_free(&f);
}
END_TEST

#endif /* PARLOAD_FAULT_INJECTION */

/* parload_request.cancel stops a load that waits for a file which has
 * stopped growing, long before the timeout: set from another thread, and
 * through the iterator's close. */
static void *set_after(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__atomic_store_n((volatile int *)arg, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int count_views(const parload_batch *b, void *arg)
{
	*(uint64_t *)arg += b->count;
	return 0;
}

START_TEST(test_cancel_while_following)
{
	char *path = tu_path("cancelfollow.raw");
	parload_file_header h;
	parload_request req;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	parload_stream *st;
	parload_batch b;
	pthread_t t;
	volatile int cancel = 0;
	uint64_t got = 0;
	double t0;

	tu_write_stream(path, 10, 16, 8, PARLOAD_PIXEL_U16, 0, 4);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	tu_truncate(path, parload_view_offset(&h, 3));
	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	parload_request_init(&req);
	req.source.path = path;
	req.flags = PARLOAD_REQ_FOLLOW;
	req.timeout = 30.0;
	req.on_batch = count_views;
	req.batch_arg = &got;
	req.cancel = &cancel;
	t0 = now();
	ck_assert_int_eq(pthread_create(&t, NULL, set_after, (void *)&cancel),
			 0);
	ck_assert_int_eq(parload_loader_run(l, &req, &ds, &err),
			 PARLOAD_ECANCELED);
	pthread_join(t, NULL);
	ck_assert_uint_eq(got, 3);
	ck_assert_msg(now() - t0 < 5.0, "the cancel waited for the timeout");
	ck_assert(zeroed(&ds));

	/* The iterator: close while the load waits for more views. */
	req.on_batch = NULL;
	req.cancel = NULL;
	req.batch_views = 100;
	ck_assert_int_eq(parload_stream_open(&st, l, &req, &err), 0);
	ck_assert_int_eq(parload_stream_next(st, &b, &err), 1);
	ck_assert_uint_eq(b.count, 3);
	t0 = now();
	ck_assert_int_eq(parload_stream_close(st, &ds), PARLOAD_ECANCELED);
	ck_assert_msg(now() - t0 < 5.0, "close waited for the timeout");
	parload_loader_free(l);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("batch");
	TCase *t;

	t = tu_tcase(s, "coverage", 0);
	tcase_add_loop_test(t, test_every_view_once_in_order, 0, 4 * N_SIZES);
	tcase_add_loop_test(t, test_selections, 0, 2 * TU_COUNT(selections));
	tcase_add_test(t, test_refused);

	t = tu_tcase(s, "crc", 0);
	tcase_add_loop_test(t, test_keep_going, 0, 4);
	tcase_add_loop_test(t, test_bad_crc_stops, 0, 8);

	t = tu_tcase(s, "cancel", 0);
	tcase_add_loop_test(t, test_cancel, 0, 6);

	t = tu_tcase(s, "windows", 30);
	tcase_add_test(t, test_window_smaller_than_a_view);
	tcase_add_test(t, test_window_bounds_memory);

	t = tu_tcase(s, "follow", 20);
	tcase_add_test(t, test_follow_at_a_fixed_rate);
	tcase_add_loop_test(t, test_follow_writer_stops, 0, 4);
	tcase_add_loop_test(t, test_follow_header_late, 0, 3);
	tcase_add_test(t, test_cancel_while_following);

	t = tu_tcase(s, "streams", 0);
	tcase_add_loop_test(t, test_streams, 0, 2 * N_VIA);

	t = tu_tcase(s, "iterator", 0);
	tcase_add_loop_test(t, test_iterate, 0, 2);
	tcase_add_loop_test(t, test_iterate_close_early, 0, 4);
	tcase_add_test(t, test_iterate_error);
	tcase_add_test(t, test_iterate_close_after_last);

#ifdef PARLOAD_FAULT_INJECTION
	ft_build_configs();
	t = tu_tcase(s, "faults", 60);
	tcase_add_loop_test(t, test_fault_mid_stream, 0, 2);
	tcase_add_loop_test(t, test_fault_walk, 0, 2);
#else
	printf("check_batch: SKIP faults: the fault-injection seam is not "
	       "built (configure with --enable-fault-injection)\n");
#endif
	return s;
}

int main(void)
{
	return tu_run(suite());
}
