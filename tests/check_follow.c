/*
 * check_follow.c - following a file that a writer still writes
 * (PARLOAD_REQ_FOLLOW): every view as it is flushed, in order and within
 * a second of its flush, while the writer is still writing; a writer that
 * stalls or dies mid-record (the timeout), a header written late, and a
 * load stopped by the callback or by parload_request.cancel.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batchutil.h"

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
	sem_t release;         /* posted when the load is over */
	pthread_t thread;
} appender;

static void sleep_until(double t)
{
	double d = t - bu_now();
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
	const double t0 = bu_now() + a->start_delay;
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
		a->flushed[i] = bu_now();
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
 * writer, what arrived, and the wall time the load took. */
typedef struct follow {
	char *path;
	parload_loader *l;
	appender a;
	parload_request r;
	bu_got g;
	parload_dataset ds;
	parload_error err;
	parload_shape s;
	tu_soa ref;
	double wall;
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
	f->l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, flags);
	appender_start(&f->a, f->path, views, write, start_delay, period, end);
	ck_assert_int_eq(tu_resolve(&f->a.h, NULL, &f->s,
						   &f->err), 0);
	bu_got_init(&f->g, f->s.view_bytes, views);
	f->g.when = calloc(views, sizeof(double));
	ck_assert_ptr_nonnull(f->g.when);
	parload_request_init(&f->r);
	f->r.source.path = f->path;
	f->r.flags = PARLOAD_REQ_FOLLOW;
	f->r.timeout = timeout;
	f->r.batch_views = per;
	f->r.window_bytes = window * (f->s.view_bytes + 32);
	f->g.stop_at = stop_at;
	f->wall = bu_now();
	f->rc = bu_run(f->l, &f->r, &f->g, &f->ds, &f->err);
	f->wall = bu_now() - f->wall;
	appender_join(&f->a);
}

static void follow_free(follow *f)
{
	parload_dataset_free(&f->ds);
	bu_got_free(&f->g);
	tu_soa_free(&f->ref);
	appender_free(&f->a);
	free(f->path);
	parload_loader_free(f->l);
}

/* 100 views at one every 15 ms: every view in order, as written; each
 * delivered within a second of the writer's flush (a follower that waited
 * for the end, or slept for seconds between looks, would not be), so the
 * first arrives long before the writer flushes its last. */
START_TEST(test_follow_streams)
{
	enum { N = 100 };
	follow f;

	follow_run(&f, "follow.raw", PARLOAD_OPT_VERIFY_CRC, N, N, 0.0, 0.015,
		   END_CLOSE, 2.0, 1, 0, BU_NEVER);
	ck_assert_msg(f.rc == 0, "%s", f.err.message);
	ck_assert_int_eq(tu_serial_read(f.path, &f.ref), 0);
	bu_assert_got(&f.g, &f.ref, &f.s, N, "followed");
	tu_assert_same(&f.ds, &f.ref);
	for (int i = 0; i < N; i++)
		ck_assert_msg(f.g.when[i] - f.a.flushed[i] <= 1.0,
			      "view %d arrived %.3f s after its flush", i,
			      f.g.when[i] - f.a.flushed[i]);
	ck_assert_msg(f.g.when[0] < f.a.flushed[N - 1],
		      "the first view arrived %.3f s after the writer's last "
		      "flush", f.g.when[0] - f.a.flushed[N - 1]);
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
		   0.002, end, timeout, 3, 0, BU_NEVER);
	read_prefix(f.path, &f.ref);
	ck_assert_uint_eq(f.ref.view_count, 10);
	bu_assert_got(&f.g, &f.ref, &f.s, 10,
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
		ck_assert(bu_zeroed(&f.ds));
	}
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
		   window ? 2 : 0, cancel ? 1 : BU_NEVER);
	ck_assert(f.wall >= 0.2);
	ck_assert_int_eq(tu_serial_read(f.path, &f.ref), 0);
	if (cancel) {
		ck_assert_msg(f.rc == PARLOAD_ECANCELED, "%d %s", f.rc,
			      f.err.message);
		/* Following, a batch is what the file holds, up to 6. */
		ck_assert_uint_eq(f.g.batches, 2);
		ck_assert_uint_le(f.g.views, 12);
		bu_assert_got(&f.g, &f.ref, &f.s, f.g.views, "canceled");
		ck_assert(bu_zeroed(&f.ds));
	} else {
		ck_assert_msg(f.rc == 0, "%s", f.err.message);
		bu_assert_got(&f.g, &f.ref, &f.s, 20, "header late");
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

/* A file of 10 views whose writer stopped after 3, a loader, and a
 * request that follows it for up to 30 s, counting the views delivered
 * in *got. */
static parload_loader *stalled_file(const char *path, parload_request *req,
				    uint64_t *got)
{
	parload_file_header h;
	parload_loader *l;
	parload_error err;

	tu_write_stream(path, 10, 16, 8, PARLOAD_PIXEL_U16, 0, 4);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	tu_truncate(path, parload_view_offset(&h, 3));
	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	parload_request_init(req);
	req->source.path = path;
	req->flags = PARLOAD_REQ_FOLLOW;
	req->timeout = 30.0;
	req->on_batch = count_views;
	req->batch_arg = got;
	return l;
}

START_TEST(test_cancel_while_following)
{
	char *path = tu_path("cancelfollow.raw");
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

	l = stalled_file(path, &req, &got);
	req.cancel = &cancel;
	t0 = bu_now();
	ck_assert_int_eq(pthread_create(&t, NULL, set_after, (void *)&cancel),
			 0);
	ck_assert_int_eq(parload_loader_run(l, &req, &ds, &err),
			 PARLOAD_ECANCELED);
	pthread_join(t, NULL);
	ck_assert_uint_eq(got, 3);
	ck_assert_msg(bu_now() - t0 < 5.0, "the cancel waited for the timeout");
	ck_assert(bu_zeroed(&ds));

	/* The iterator: close while the load waits for more views. */
	req.on_batch = NULL;
	req.cancel = NULL;
	req.batch_views = 100;
	ck_assert_int_eq(parload_stream_open(&st, l, &req, &err), 0);
	ck_assert_int_eq(parload_stream_next(st, &b, &err), 1);
	ck_assert_uint_eq(b.count, 3);
	t0 = bu_now();
	ck_assert_int_eq(parload_stream_close(st, &ds), PARLOAD_ECANCELED);
	ck_assert_msg(bu_now() - t0 < 5.0, "close waited for the timeout");
	parload_loader_free(l);
	free(path);
}
END_TEST
/* on_wait while the load waits for a file that has stopped growing: the
 * caller takes its turns between its looks at the file, on its own
 * thread, and the third turn's stop ends the load long before the
 * timeout, after the three views it had.  Turns taken while those three
 * are still being read (a slow machine gives some) do not count: the
 * stop must come while the load follows the file. */
typedef struct turns {
	pthread_t caller;
	const uint64_t *got; /* views delivered (on the caller's thread) */
	unsigned calls, foreign;
} turns;

static int third_turn_stops(void *arg)
{
	turns *t = arg;

	if (!pthread_equal(pthread_self(), t->caller))
		t->foreign++;
	return *t->got == 3 && ++t->calls == 3;
}

START_TEST(test_on_wait_while_following)
{
	char *path = tu_path("turnfollow.raw");
	parload_request req;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	uint64_t got = 0;
	turns t = { pthread_self(), &got, 0, 0 };

	l = stalled_file(path, &req, &got);
	req.on_wait = third_turn_stops;
	req.wait_arg = &t;
	req.wait_interval = 0.001;
	ck_assert_int_eq(parload_loader_run(l, &req, &ds, &err),
			 PARLOAD_ECANCELED);
	ck_assert_msg(strstr(err.message, "canceled after 3 of 10 views"),
		      "%s", err.message);
	ck_assert_uint_eq(got, 3);
	ck_assert_uint_eq(t.calls, 3);
	ck_assert_uint_eq(t.foreign, 0);
	ck_assert(bu_zeroed(&ds));
	parload_loader_free(l);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("follow");
	TCase *t = tu_tcase(s, "follow", 20);

	tcase_add_test(t, test_follow_streams);
	tcase_add_loop_test(t, test_follow_writer_stops, 0, 4);
	tcase_add_loop_test(t, test_follow_header_late, 0, 3);
	tcase_add_test(t, test_cancel_while_following);
	tcase_add_test(t, test_on_wait_while_following);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
