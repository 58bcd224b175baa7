/*
 * check_batches.c - views delivered while the load runs
 * (parload_request.on_batch): every view exactly once, in file order,
 * compared with the file read serially by the test (tu_serial_read) and
 * sliced by the test; for batch sizes from one view to more than the file,
 * 1 to 4 threads, selections, bad CRCs, a callback that stops the load,
 * and pipes, sockets and FIFOs.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batchutil.h"

/* ---- coverage: batch sizes and threads ---- */

/* Batch sizes: views, or pixel bytes, or neither (the default). */
static const struct {
	uint64_t views, bytes, per;
} sizes[] = {
	{ 1, 0, 1 },
	{ 3, 0, 3 },
	{ 5, 0, 5 },
	{ BU_VIEWS, 0, BU_VIEWS },
	{ 1000, 0, BU_VIEWS },
	{ 0, 7 * BU_PS + 1, 7 },
	{ 0, BU_PS / 2, 1 },          /* less than a view: one view */
	{ 0, 0, BU_VIEWS },           /* the default: far more than 17 KiB */
};
#define N_SIZES TU_COUNT(sizes)

START_TEST(test_every_view_once_in_order)
{
	const unsigned threads = 1 + (unsigned)_i / N_SIZES;
	const int z = _i % N_SIZES;
	char what[96];
	bu_fixture f;

	snprintf(what, sizeof(what), "%u threads, batches of %" PRIu64
		 " views / %" PRIu64 " bytes", threads, sizes[z].views,
		 sizes[z].bytes);
	bu_fixture_init(&f, "cover.raw", 0, false, threads, 0, NULL,
			sizes[z].views, 0);
	f.r.batch_bytes = sizes[z].bytes;
	ck_assert_msg(bu_fixture_run(&f) == 0, "%s: %s", what, f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, BU_VIEWS, what);
	/* Full batches but the last. */
	ck_assert_uint_eq(f.g.batches,
			  (BU_VIEWS + sizes[z].per - 1) / sizes[z].per);
	ck_assert_uint_eq(f.g.max_count, sizes[z].per);
	ck_assert_uint_eq(f.g.total, BU_VIEWS);
	ck_assert_uint_eq(f.g.bytes_done, f.g.bytes_total);
	tu_assert_same(&f.ds, &f.ref);
	ck_assert_uint_eq(f.ds.stats.threads, threads);
	ck_assert_uint_eq(f.ds.stats.bytes_read, tu_file_size(f.path));
	bu_fixture_free(&f);
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
	bu_fixture f;

	snprintf(what, sizeof(what), "views %s rows %s cols %s, %u threads",
		 selections[x].views ? selections[x].views : ":",
		 selections[x].rows ? selections[x].rows : ":",
		 selections[x].cols ? selections[x].cols : ":", threads);
	parse_selection(&sel, selections[x].views, selections[x].rows,
			selections[x].cols);
	bu_fixture_init(&f, "select.raw", 0, false, threads, 0, &sel, 4,
			selections[x].window);
	ck_assert_msg(bu_fixture_run(&f) == 0, "%s: %s", what, f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, f.s.views, what);
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
	bu_fixture_free(&f);
}
END_TEST

/* What batches cannot do fails before anything is delivered. */
START_TEST(test_refused)
{
	parload_selection sel;
	parload_options o;
	bu_fixture f;

	/* Sinograms need every view before any is complete. */
	parse_selection(&sel, NULL, "2:4", NULL);
	sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	bu_fixture_init(&f, "refused.raw", 0, false, 2, 0, &sel, 0, 0);
	ck_assert_msg(bu_fixture_run(&f) == PARLOAD_ENOTSUP, "sinograms: %s",
		      f.err.message);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(bu_zeroed(&f.ds));

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
	ck_assert_msg(bu_fixture_run(&f) == PARLOAD_ENOTSUP, "sequential: %s",
		      f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(bu_zeroed(&f.ds));
	bu_fixture_free(&f);
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
	bu_fixture f;

	parse_selection(&sel, cases[x].views, NULL, NULL);
	bu_fixture_init(&f, "bad.raw", PARLOAD_FLAG_CRC32C, true, 3,
			PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING, &sel,
			3, cases[x].window);
	ck_assert_msg(bu_fixture_run(&f) == 0, "case %d: %s", x, f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, f.s.views, "keep going");
	tu_assert_bad_views(&f.ds, cases[x].bad, cases[x].n_bad,
			    "keep going");
	ck_assert_uint_eq(f.ds.stats.crc_checked, f.s.views);
	bu_fixture_free(&f);
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
	bu_fixture f;

	bu_fixture_init(&f, "bad.raw", PARLOAD_FLAG_CRC32C, true, threads,
			PARLOAD_OPT_VERIFY_CRC, NULL, 4, window ? 4 : 0);
	ck_assert_msg(bu_fixture_run(&f) == PARLOAD_ECRC, "%s", f.err.message);
	ck_assert_int_eq(f.err.code, PARLOAD_ECRC);
	ck_assert_uint_eq(f.g.batches, 1);
	bu_assert_got(&f.g, &f.ref, &f.s, 4, "before the bad view");
	ck_assert_uint_eq(f.err.view, 5);
	ck_assert_uint_eq(f.err.offset, tu_payload_off(BU_PS, 5));
	snprintf(offset, sizeof(offset), "%" PRIu64, tu_payload_off(BU_PS, 5));
	ck_assert_msg(strstr(f.err.message, "view 5") &&
			      strstr(f.err.message, offset) &&
			      strstr(f.err.message, f.path),
		      "message does not name the file, the view and the "
		      "offset: %s", f.err.message);
	ck_assert(bu_zeroed(&f.ds));
	bu_fixture_free(&f);
}
END_TEST

/* ---- the default batch size ---- */

typedef struct counts {
	uint64_t n[16];
	int batches;
} counts;

static int record_count(const parload_batch *b, void *arg)
{
	counts *c = arg;

	if (c->batches < 16)
		c->n[c->batches] = b->count;
	c->batches++;
	return 0;
}

/* Without a size, a file's batches start at about 4 MiB of pixels and
 * double up to 32 MiB (1,000 views of 64 KiB: 64, 128, 256, 512, then
 * the 40 left); a size asked for (64 views, or 4 MiB) stays. */
START_TEST(test_default_batches_grow)
{
	static const uint64_t grown[] = { 64, 128, 256, 512, 40 };
	char *path = tu_path("grow.raw");
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_dataset ds;
	parload_request r;
	parload_error err;
	counts c;

	tu_write_stream(path, 1000, 256, 128, PARLOAD_PIXEL_U16, 0, 3);
	for (int asked = 0; asked < 3; asked++) {
		memset(&c, 0, sizeof(c));
		parload_request_init(&r);
		r.source.path = path;
		r.on_batch = record_count;
		r.batch_arg = &c;
		r.batch_views = asked == 1 ? 64 : 0;
		r.batch_bytes = asked == 2 ? (uint64_t)4 << 20 : 0;
		ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err), 0);
		if (asked == 0) {
			ck_assert_int_eq(c.batches, 5);
			for (int i = 0; i < 5; i++)
				ck_assert_uint_eq(c.n[i], grown[i]);
		} else {
			ck_assert_int_eq(c.batches, 16);
			for (int i = 0; i < 15; i++)
				ck_assert_uint_eq(c.n[i], 64);
		}
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	free(path);
}
END_TEST

/* ---- progress without batches ---- */

typedef struct watch {
	const parload_progress *p;
	uint64_t last;
	bool behind, over;
} watch;

/* With batches as well: every view of a batch delivered has been counted
 * (the next batch may be counting already), and no more than all. */
static int check_progress(const parload_batch *b, void *arg)
{
	watch *w = arg;
	const uint64_t done = __atomic_load_n(&w->p->bytes_done,
					      __ATOMIC_RELAXED);

	w->behind |= done < b->bytes_done || done < w->last;
	w->over |= done > b->bytes_total ||
		   w->p->bytes_total != b->bytes_total ||
		   w->p->views_total != b->views_total;
	w->last = done;
	return 0;
}

/* parload_request.progress over selections, strategies and batches:
 * the totals are the views and the bytes read of each (its header and
 * rows, bin rows for each row of a binned load), counted as the workers
 * read (never behind a batch delivered, never past the total) and whole
 * at the end. */
START_TEST(test_progress)
{
	static const struct {
		const char *views, *rows, *cols;
		int layout, strategy;
		bool batches;
	} cases[] = {
		{ NULL, NULL, NULL, 0, PARLOAD_STRATEGY_PARALLEL, false },
		{ NULL, NULL, NULL, 0, PARLOAD_STRATEGY_PARALLEL, true },
		{ "::4", "3:9", "2:5", 0, PARLOAD_STRATEGY_PARALLEL, true },
		{ NULL, "3:9", NULL, 1, PARLOAD_STRATEGY_PARALLEL, false },
		{ NULL, NULL, NULL, 1, PARLOAD_STRATEGY_PARALLEL, false },
		{ NULL, NULL, NULL, 0, PARLOAD_STRATEGY_SEQUENTIAL, false },
	};
	const int i = _i;
	char *path = tu_path("progress.raw");
	parload_loader *l = tu_loader(3, cases[i].strategy, 0);
	parload_progress prog;
	parload_selection sel;
	parload_dataset ds;
	parload_request r;
	parload_error err;
	watch w;

	/* 30 views of 12 x 10 u16: 240-byte rows of 24 bytes. */
	tu_write_stream(path, 30, 12, 10, PARLOAD_PIXEL_U16, 0, 5);
	parse_selection(&sel, cases[i].views, cases[i].rows, cases[i].cols);
	sel.layout = (parload_layout)cases[i].layout;
	memset(&prog, 0, sizeof(prog));
	memset(&w, 0, sizeof(w));
	w.p = &prog;
	parload_request_init(&r);
	r.source.path = path;
	r.selection = &sel;
	r.progress = &prog;
	if (cases[i].batches) {
		r.on_batch = check_progress;
		r.batch_arg = &w;
		r.batch_views = 2;
	}
	ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
		      err.message);
	ck_assert_uint_eq(prog.views_total, ds.shape.views);
	ck_assert_uint_eq(prog.bytes_total,
			  ds.shape.views * (32 + ds.shape.rows * 24));
	ck_assert_uint_eq(prog.bytes_done, prog.bytes_total);
	ck_assert(!w.behind && !w.over);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* ---- cancel ---- */

/* The callback stops the load at the first, a middle and the last of 8
 * batches, with and without windows: PARLOAD_ECANCELED, nothing left
 * behind, and the same loader loads again at once.  The error is the
 * callback's, naming the views delivered, also where the callback raises
 * the request's cancel as it stops (as parload_stream_close() does), so
 * that the pass reading the next batch fails with an error of its own. */
START_TEST(test_cancel)
{
	static const uint64_t stops[] = { 0, 3, 7 };
	const uint64_t stop = stops[_i % 3];
	const bool window = _i / 3 % 2, raise = _i / 6;
	const uint64_t done = stop == 7 ? BU_VIEWS : 5 * (stop + 1);
	volatile int cancel = 0;
	char said[64];
	int tasks, fds;
	bu_fixture f;

	bu_fixture_init(&f, "cancel.raw", 0, false, 3, 0, NULL, 5,
			window ? 5 : 0);
	bu_assert_loads(&f, 5, "first load");
	tasks = tu_count_entries("/proc/self/task");
	fds = tu_count_entries("/proc/self/fd");
	f.g.stop_at = stop;
	if (raise) {
		f.r.cancel = &cancel;
		f.g.cancel = &cancel;
	}
	ck_assert_msg(bu_fixture_run(&f) == PARLOAD_ECANCELED,
		      "stop at batch %" PRIu64 ": %d %s", stop, f.rc,
		      f.err.message);
	ck_assert_int_eq(f.err.code, PARLOAD_ECANCELED);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	snprintf(said, sizeof(said), "load canceled after %" PRIu64 " of %d "
		 "views", done, BU_VIEWS);
	ck_assert_msg(strstr(f.err.message, said), "%s", f.err.message);
	ck_assert_uint_eq(f.g.batches, stop + 1);
	bu_assert_got(&f.g, &f.ref, &f.s, done, "canceled");
	ck_assert(bu_zeroed(&f.ds));
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	bu_assert_tasks(tasks, "canceled");
	/* At once, with batches and without. */
	bu_assert_loads(&f, 5, "after the cancel");
	ck_assert_int_eq(tu_load(f.l, f.path, NULL, NULL, &f.ds, &f.err), 0);
	tu_assert_same(&f.ds, &f.ref);
	bu_fixture_free(&f);
}
END_TEST

/* A load without batches, in view and in sinogram layout, direct too,
 * whose cancel is set before it starts: every worker looks before each of
 * its reads, so it reads nothing and the load ends in PARLOAD_ECANCELED,
 * naming the file and the views, the dataset zeroed and nothing left
 * behind; the same loader loads at once after. */
START_TEST(test_cancel_without_batches)
{
	const bool sino = _i & 1, direct = _i & 2;
	volatile int stop = 1;
	parload_selection sel;
	parload_request r;
	bu_fixture f;
	int tasks, fds;

	bu_fixture_init(&f, "cancel1.raw", 0, false, 3, 0, NULL, 5, 0);
	parload_selection_init(&sel);
	sel.layout = sino ? PARLOAD_LAYOUT_SINOGRAMS : PARLOAD_LAYOUT_VIEWS;
	parload_request_init(&r);
	r.source.path = f.path;
	r.selection = &sel;
	r.cancel = &stop;
	r.cache = direct ? PARLOAD_CACHE_DIRECT : PARLOAD_CACHE_KEEP;
	/* A first load in the same mode: the workers' direct-read queues
	 * (a ring is a descriptor) are the loader's to keep. */
	stop = 0;
	ck_assert_int_eq(parload_loader_run(f.l, &r, &f.ds, &f.err), 0);
	parload_dataset_free(&f.ds);
	stop = 1;
	tasks = tu_count_entries("/proc/self/task");
	fds = tu_count_entries("/proc/self/fd");
	memset(&f.ds, 0x5a, sizeof(f.ds));
	f.rc = parload_loader_run(f.l, &r, &f.ds, &f.err);
	ck_assert_msg(f.rc == PARLOAD_ECANCELED, "%d %s", f.rc,
		      f.err.message);
	ck_assert_int_eq(f.err.code, PARLOAD_ECANCELED);
	ck_assert_msg(strstr(f.err.message, f.path) &&
			      strstr(f.err.message, "canceled while views 0 "
						    "to 36 of 37"),
		      "%s", f.err.message);
	ck_assert_uint_eq(f.ds.stats.bytes_read, 0);
	ck_assert(bu_zeroed(&f.ds));
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	bu_assert_tasks(tasks, "canceled");
	stop = 0;
	ck_assert_int_eq(parload_loader_run(f.l, &r, &f.ds, &f.err), 0);
	parload_dataset_free(&f.ds);
	ck_assert_int_eq(tu_load(f.l, f.path, NULL, NULL, &f.ds, &f.err), 0);
	tu_assert_same(&f.ds, &f.ref);
	bu_fixture_free(&f);
}
END_TEST

typedef struct canceller {
	volatile int *stop;
	pthread_t thread;
} canceller;

static void *cancel_soon(void *arg)
{
	canceller *c = arg;

	usleep(1000);
	__atomic_store_n(c->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The cancel set by another thread while a load without batches runs (4
 * KiB reads, so that it runs for a while): the load ends in
 * PARLOAD_ECANCELED with a zeroed dataset or, if the cancel came too
 * late, complete and exact; never half-filled. */
START_TEST(test_cancel_while_reading)
{
	volatile int stop = 0;
	parload_options o;
	parload_request r;
	canceller c = { &stop, 0 };
	bu_fixture f;

	bu_fixture_init(&f, "cancel2.raw", 0, false, 3, 0, NULL, 5, 0);
	parload_loader_free(f.l);
	parload_options_init(&o);
	o.threads = 3;
	o.max_read = 4096;
	ck_assert_int_eq(parload_loader_new(&f.l, &o, &f.err), 0);
	parload_request_init(&r);
	r.source.path = f.path;
	r.cancel = &stop;
	ck_assert_int_eq(pthread_create(&c.thread, NULL, cancel_soon, &c), 0);
	f.rc = parload_loader_run(f.l, &r, &f.ds, &f.err);
	pthread_join(c.thread, NULL);
	if (f.rc == 0) {
		tu_assert_same(&f.ds, &f.ref);
		parload_dataset_free(&f.ds);
	} else {
		ck_assert_msg(f.rc == PARLOAD_ECANCELED, "%d %s", f.rc,
			      f.err.message);
		ck_assert(bu_zeroed(&f.ds));
	}
	bu_fixture_free(&f);
}
END_TEST

/* ---- on_wait: the caller's turns ---- */

/* An on_wait that counts its calls, those off the caller's thread, and
 * says stop at call stop_at (0: never). */
typedef struct turns {
	pthread_t caller;
	unsigned calls, foreign, stop_at;
} turns;

static int take_turn(void *arg)
{
	turns *t = arg;

	t->calls++;
	if (!pthread_equal(pthread_self(), t->caller))
		t->foreign++;
	return t->stop_at && t->calls == t->stop_at;
}

/* The four ways a load waits: one worker on the caller's thread (reading
 * between turns), three in views, in sinograms, and in batches. */
enum { TURN_INLINE, TURN_VIEWS, TURN_SINOGRAMS, TURN_BATCHES, N_TURN };

static void turn_request(bu_fixture *f, int how, parload_selection *sel,
			 turns *t, unsigned stop_at)
{
	bu_fixture_init(f, "turns.raw", 0, false,
			how == TURN_INLINE ? 1 : 3, 0, NULL, 5, 0);
	parload_selection_init(sel);
	sel->layout = how == TURN_SINOGRAMS ? PARLOAD_LAYOUT_SINOGRAMS :
					      PARLOAD_LAYOUT_VIEWS;
	if (how != TURN_BATCHES) {
		parload_request_init(&f->r);
		f->r.source.path = f->path;
	}
	f->r.selection = sel;
	memset(t, 0, sizeof(*t));
	t->caller = pthread_self();
	t->stop_at = stop_at;
	f->r.on_wait = take_turn;
	f->r.wait_arg = t;
}

static int turn_run(bu_fixture *f, int how)
{
	if (how == TURN_BATCHES)
		return bu_fixture_run(f);
	memset(&f->ds, 0x5a, sizeof(f->ds));
	memset(&f->err, 0, sizeof(f->err));
	return f->rc = parload_loader_run(f->l, &f->r, &f->ds, &f->err);
}

/* An on_wait that says stop at its first turn, which the caller takes as
 * soon as it waits (or, reading itself, before its first read): the load
 * ends in PARLOAD_ECANCELED naming the file, even where the workers had
 * read everything, its dataset zeroed; on_wait ran once, on the caller's
 * thread; the loader loads exactly after. */
START_TEST(test_on_wait_stops)
{
	parload_selection sel;
	bu_fixture f;
	turns t;

	turn_request(&f, _i, &sel, &t, 1);
	ck_assert_int_eq(turn_run(&f, _i), PARLOAD_ECANCELED);
	ck_assert_int_eq(f.err.code, PARLOAD_ECANCELED);
	ck_assert_msg(strstr(f.err.message, f.path) &&
			      strstr(f.err.message, "canceled"),
		      "%s", f.err.message);
	ck_assert(bu_zeroed(&f.ds));
	ck_assert_uint_eq(t.calls, 1);
	ck_assert_uint_eq(t.foreign, 0);
	ck_assert_int_eq(tu_load(f.l, f.path, NULL, NULL, &f.ds, &f.err), 0);
	tu_assert_same(&f.ds, &f.ref);
	parload_dataset_free(&f.ds);
	bu_fixture_free(&f);
}
END_TEST

/* A stop after the last read: with turns only as each wait begins (an
 * interval of a day), a load in sinogram layout waits twice, for its
 * reads and then for its views' checks; a stop at the second turn, once
 * every byte is in, still ends the load in PARLOAD_ECANCELED, its
 * dataset zeroed. */
START_TEST(test_on_wait_answer_stands)
{
	parload_selection sel;
	bu_fixture f;
	turns t;

	turn_request(&f, TURN_SINOGRAMS, &sel, &t, 2);
	f.r.wait_interval = 86400;
	ck_assert_int_eq(turn_run(&f, TURN_SINOGRAMS), PARLOAD_ECANCELED);
	ck_assert_msg(strstr(f.err.message, f.path) &&
			      strstr(f.err.message, "canceled by on_wait "
						    "after its last read"),
		      "%s", f.err.message);
	ck_assert(bu_zeroed(&f.ds));
	ck_assert_uint_eq(t.calls, 2);
	ck_assert_uint_eq(t.foreign, 0);
	bu_fixture_free(&f);
}
END_TEST

/* An on_wait that goes on, every nanosecond, while 4 KiB reads of an 8
 * MiB file keep the workers busy: the load is exact, and every turn (one
 * at least) was taken on the caller's thread. */
START_TEST(test_on_wait_goes_on)
{
	const bool inline_ = _i == 0;
	char *path = tu_path("turns8.raw");
	parload_options o;
	parload_loader *l;
	parload_request r;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	turns t = { pthread_self(), 0, 0, 0 };

	tu_write_stream(path, 64, 256, 256, PARLOAD_PIXEL_U16, 0, 11);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_options_init(&o);
	o.threads = inline_ ? 1 : 3;
	o.max_read = 4096;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload_request_init(&r);
	r.source.path = path;
	r.on_wait = take_turn;
	r.wait_arg = &t;
	r.wait_interval = 1e-9;
	ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
		      err.message);
	tu_assert_same(&ds, &ref);
	ck_assert_uint_ge(t.calls, 1);
	ck_assert_uint_eq(t.foreign, 0);
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* What on_wait cannot be given: a stream (its load runs on a thread of
 * its own), and an interval that is not a number of seconds. */
START_TEST(test_on_wait_refused)
{
	static const double bad[] = { -1.0, NAN, INFINITY, 1e9 };
	parload_request r;
	parload_stream *st = NULL;
	bu_fixture f;
	turns t = { pthread_self(), 0, 0, 0 };

	bu_fixture_init(&f, "turns1.raw", 0, false, 2, 0, NULL, 5, 0);
	parload_request_init(&r);
	r.source.path = f.path;
	r.on_wait = take_turn;
	r.wait_arg = &t;
	ck_assert_int_eq(parload_stream_open(&st, f.l, &r, &f.err),
			 PARLOAD_EINVAL);
	ck_assert_msg(strstr(f.err.message, "on_wait"), "%s", f.err.message);
	for (int i = 0; i < TU_COUNT(bad); i++) {
		r.wait_interval = bad[i];
		ck_assert_int_eq(parload_loader_run(f.l, &r, &f.ds, &f.err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(f.err.message, "wait_interval"), "%s",
			      f.err.message);
	}
	ck_assert_uint_eq(t.calls, 0);
	bu_fixture_free(&f);
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
static int run_fed(bu_fixture *f, int via, const unsigned char *data,
		   size_t len)
{
	parload_request r = f->r;
	pusher p = { NULL, -1, data, len, 0 };
	const uint64_t stop_at = f->g.stop_at;
	int fds[2] = { -1, -1 };

	bu_got_free(&f->g);
	bu_got_init(&f->g, f->s.view_bytes, f->s.views);
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
	bu_fixture_run(f);
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
	bu_fixture f;

	bu_fixture_init(&f, "fed.raw", PARLOAD_FLAG_CRC32C, false, 3,
			PARLOAD_OPT_VERIFY_CRC, NULL, per, 0);
	data = tu_read_all(f.path, &len);
	ck_assert_msg(run_fed(&f, via, data, len) == 0, "via %d: %s", via,
		      f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, BU_VIEWS, "stream");
	ck_assert_uint_eq(f.g.batches, (BU_VIEWS + per - 1) / per);
	tu_assert_same(&f.ds, &f.ref);
	ck_assert_uint_eq(f.ds.stats.crc_checked, BU_VIEWS);
	parload_dataset_free(&f.ds);

	/* Stopped at the second batch. */
	f.g.stop_at = 1;
	ck_assert_msg(run_fed(&f, via, data, len) == PARLOAD_ECANCELED,
		      "%d %s", f.rc, f.err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, 2 * per, "stream canceled");
	ck_assert(bu_zeroed(&f.ds));

	/* A window needs a regular file. */
	f.g.stop_at = BU_NEVER;
	f.r.window_bytes = 1 << 20;
	ck_assert_msg(run_fed(&f, via, data, len) == PARLOAD_ENOTSUP, "%d %s",
		      f.rc, f.err.message);
	ck_assert_uint_eq(f.g.batches, 0);
	ck_assert(bu_zeroed(&f.ds));
	free(data);
	bu_fixture_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("batches");
	TCase *t;

	t = tu_tcase(s, "coverage", 0);
	tcase_add_loop_test(t, test_every_view_once_in_order, 0, 4 * N_SIZES);
	tcase_add_loop_test(t, test_selections, 0, 2 * TU_COUNT(selections));
	tcase_add_test(t, test_refused);

	t = tu_tcase(s, "crc", 0);
	tcase_add_loop_test(t, test_keep_going, 0, 4);
	tcase_add_loop_test(t, test_bad_crc_stops, 0, 8);

	t = tu_tcase(s, "progress", 0);
	tcase_add_loop_test(t, test_progress, 0, 6);

	t = tu_tcase(s, "default size", 0);
	tcase_add_test(t, test_default_batches_grow);

	t = tu_tcase(s, "cancel", 0);
	tcase_add_loop_test(t, test_cancel, 0, 12);
	tcase_add_loop_test(t, test_cancel_without_batches, 0, 4);
	tcase_add_test(t, test_cancel_while_reading);

	t = tu_tcase(s, "on_wait", 0);
	tcase_add_loop_test(t, test_on_wait_stops, 0, N_TURN);
	tcase_add_test(t, test_on_wait_answer_stands);
	tcase_add_loop_test(t, test_on_wait_goes_on, 0, 2);
	tcase_add_test(t, test_on_wait_refused);

	t = tu_tcase(s, "streams", 0);
	tcase_add_loop_test(t, test_streams, 0, 2 * N_VIA);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
