/*
 * batchutil.c - what the batch suites share (see batchutil.h).
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batchutil.h"

double bu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The test stream, with CRCs when flags says so; damaged, views 5 and 22
 * do not match their CRCs. */
char *bu_stream(const char *name, uint32_t flags, bool damaged,
		tu_soa *ref)
{
	char *path = tu_path(name);

	tu_write_stream(path, BU_VIEWS, BU_WIDTH, BU_HEIGHT, PARLOAD_PIXEL_U16,
			flags, 11);
	if (damaged) {
		tu_flip(path, tu_payload_off(BU_PS, 5) + 7);
		tu_flip(path, tu_payload_off(BU_PS, 22) + BU_PS - 1);
	}
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	return path;
}

bool bu_zeroed(const parload_dataset *ds)
{
	static const parload_dataset zero;

	return memcmp(ds, &zero, sizeof(zero)) == 0;
}

/* The process runs as many threads as it did: a joined thread can linger
 * in /proc/self/task for a moment after pthread_join() returns, so the
 * count is given a second to settle. */
void bu_assert_tasks(int tasks, const char *what)
{
	int now_running = tu_count_entries("/proc/self/task");

	for (int tries = 0; now_running != tasks && tries < 1000; tries++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		now_running = tu_count_entries("/proc/self/task");
	}
	ck_assert_msg(now_running == tasks, "%s: %d threads running, %d "
		      "before", what, now_running, tasks);
}

void bu_got_init(bu_got *g, uint64_t view_bytes, uint64_t capacity)
{
	memset(g, 0, sizeof(*g));
	g->view_bytes = view_bytes;
	g->stop_at = BU_NEVER;
	g->keep = true;
	g->headers = malloc(capacity * 32 + 1);
	g->pixels = malloc(capacity * view_bytes + 1);
	ck_assert(g->headers && g->pixels);
}

void bu_got_free(bu_got *g)
{
	free(g->headers);
	free(g->pixels);
	free(g->when);
}

static void note_window(bu_got *g, const void *p)
{
	for (int i = 0; i < g->n_windows; i++)
		if (g->windows[i] == p)
			return;
	ck_assert_msg(g->n_windows < 3, "more than 2 windows in turn");
	g->windows[g->n_windows++] = p;
}

int bu_on_batch(const parload_batch *b, void *arg)
{
	bu_got *g = arg;

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
			g->when[b->first + i] = bu_now();
	g->views += b->count;
	g->max_count = b->count > g->max_count ? b->count : g->max_count;
	g->bytes_done = b->bytes_done;
	g->seconds = b->seconds;
	if (g->batches++ != g->stop_at)
		return 0;
	if (g->cancel)
		__atomic_store_n(g->cancel, 1, __ATOMIC_RELAXED);
	return 1;
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
	/* Every row compared, but not with ck_assert: each one that passes
	 * costs a write() to Check's log (mark_point), and the suites
	 * compare hundreds of thousands of rows. */
	for (uint64_t r = 0; r < s->rows; r++)
		if (memcmp(pix + r * s->cols * bpp,
			   rec + ((s->row_start + r) * width + s->col_start) *
				   bpp,
			   s->cols * bpp) != 0)
			ck_abort_msg("%s: output view %" PRIu64 " (file view %"
				     PRIu64 ") row %" PRIu64 " differs",
				     what, k, v, r);
}

/* The first n views that arrived are those of the selection s. */
void bu_assert_got(const bu_got *g, const tu_soa *ref,
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

int bu_run(parload_loader *l, parload_request *r, bu_got *g,
	   parload_dataset *ds, parload_error *err)
{
	r->on_batch = bu_on_batch;
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
void bu_prepare(parload_request *r, bu_got *g, parload_shape *s,
		const char *path, const parload_selection *sel,
		uint64_t per, uint64_t window)
{
	resolve(path, sel, s);
	bu_got_init(g, s->view_bytes, s->views);
	parload_request_init(r);
	r->source.path = path;
	r->selection = sel;
	r->batch_views = per;
	r->window_bytes = window * (s->view_bytes + 32);
}

/* The test stream as name (file_flags: PARLOAD_FLAG_*; damaged: see
 * bu_stream()), a loader of threads with opts (PARLOAD_OPT_*), and a
 * request for sel as bu_prepare() makes it. */
void bu_fixture_init(bu_fixture *f, const char *name, uint32_t file_flags,
		     bool damaged, unsigned threads, unsigned opts,
		     const parload_selection *sel, uint64_t per,
		     uint64_t window)
{
	memset(f, 0, sizeof(*f));
	f->l = tu_loader(threads, PARLOAD_STRATEGY_PARALLEL, opts);
	f->path = bu_stream(name, file_flags, damaged, &f->ref);
	bu_prepare(&f->r, &f->g, &f->s, f->path, sel, per, window);
}

int bu_fixture_run(bu_fixture *f)
{
	return f->rc = bu_run(f->l, &f->r, &f->g, &f->ds, &f->err);
}

void bu_fixture_free(bu_fixture *f)
{
	parload_dataset_free(&f->ds);
	bu_got_free(&f->g);
	tu_soa_free(&f->ref);
	free(f->path);
	parload_loader_free(f->l);
}

/* Another whole-file batched load of f's file in batches of per views:
 * every view, the dataset equal to the serial reading. */
void bu_assert_loads(bu_fixture *f, uint64_t per, const char *what)
{
	bu_fixture again = *f;

	bu_prepare(&again.r, &again.g, &again.s, f->path, NULL, per, 0);
	ck_assert_msg(bu_fixture_run(&again) == 0, "%s: %s", what,
		      again.err.message);
	bu_assert_got(&again.g, &f->ref, &again.s, again.s.views, what);
	tu_assert_same(&again.ds, &f->ref);
	parload_dataset_free(&again.ds);
	bu_got_free(&again.g);
}

