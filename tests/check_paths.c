/*
 * check_paths.c - paths that are not regular files, in every
 * configuration: a FIFO is read as a stream (as cat reads it, whatever the
 * strategy), its wait for a writer ends with the load's cancel, on_wait
 * and follow timeout, a description or a header never waits for one,
 * /dev/null is an empty stream, a directory is not a file, a dangling
 * symbolic link says so and an empty file is too short.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

typedef struct fifo_feed {
	const char *path;
	const unsigned char *data;
	size_t len;
} fifo_feed;

/* Open the FIFO for writing (which waits for its reader) and write the
 * data in 1000-byte pieces. */
static void *fifo_writer(void *arg)
{
	const fifo_feed *f = arg;
	size_t done = 0;
	int fd = open(f->path, O_WRONLY | O_CLOEXEC);

	while (fd >= 0 && done < f->len) {
		size_t n = f->len - done < 1000 ? f->len - done : 1000;
		ssize_t k = write(fd, f->data + done, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		done += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_fifo_is_a_stream)
{
	const tu_config *m = tu_matrix(_i);
	char *fifo = tu_path("fifo");
	char *file = tu_path("fifo-src.raw");
	parload_dataset ds;
	parload_error err;
	pthread_t writer;
	fifo_feed f;
	tu_soa ref;

	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	tu_write_stream(file, 9, 16, 4, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_serial_read(file, &ref), 0);
	f.path = fifo;
	f.data = tu_read_all(file, &f.len);
	ck_assert_int_eq(pthread_create(&writer, NULL, fifo_writer, &f), 0);
	ck_assert_msg(tu_config_load(m, 0, fifo, &ds, &err) == 0, "%s",
		      err.message);
	pthread_join(writer, NULL);
	tu_assert_same(&ds, &ref);
	ck_assert_int_eq(ds.stats.strategy, PARLOAD_STRATEGY_SEQUENTIAL);
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	free((void *)f.data);
	free(fifo);
	free(file);
}
END_TEST

/* ---- a FIFO no writer opens ---- */

/* A wait for a writer that ignores what should end it would hang the
 * test: after this long the watchdog opens the FIFO for writing and
 * closes it, and the load fails as an empty stream instead. */
#define WATCHDOG_SECONDS 5.0

typedef struct watchdog {
	const char *fifo;
	double after;     /* seconds */
	volatile int stop; /* the test is over: the thread ends */
	volatile int *set; /* when not NULL, set to 1 after `after` s, and
			    * the FIFO is left alone */
	pthread_t thread;
} watchdog;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *watch(void *arg)
{
	watchdog *w = arg;
	const double end = now() + w->after;
	int fd;

	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED) && now() < end)
		usleep(5000);
	if (__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
		return NULL;
	if (w->set) {
		__atomic_store_n(w->set, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/* No reader (any more): ENXIO, and nothing to unblock. */
	fd = open(w->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void watch_start(watchdog *w, const char *fifo, double after,
			volatile int *set)
{
	memset(w, 0, sizeof(*w));
	w->fifo = fifo;
	w->after = after;
	w->set = set;
	ck_assert_int_eq(pthread_create(&w->thread, NULL, watch, w), 0);
}

static void watch_end(watchdog *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	ck_assert_int_eq(pthread_join(w->thread, NULL), 0);
}

static char *new_fifo(const char *name)
{
	char *fifo = tu_path(name);

	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	return fifo;
}

/* The request's run on fifo, with the watchdog; *seconds it took. */
static int run_watched(const parload_request *r, int strategy,
		       parload_error *err, double *seconds)
{
	parload_loader *l = tu_loader(2, strategy, 0);
	parload_dataset ds;
	watchdog w;
	double t0 = now();
	int rc;

	watch_start(&w, r->source.path, WATCHDOG_SECONDS, NULL);
	memset(err, 0, sizeof(*err));
	rc = parload_loader_run(l, r, &ds, err);
	*seconds = now() - t0;
	watch_end(&w);
	tu_assert_empty(&ds, "a FIFO no writer opened");
	parload_loader_free(l);
	return rc;
}

/* The request's cancel, set by another thread, ends the wait: every
 * strategy (_i), since the wait is the source's. */
START_TEST(test_fifo_no_writer_canceled)
{
	char *fifo = new_fifo("nowriter");
	volatile int cancel = 0;
	parload_request r;
	parload_error err;
	watchdog setter;
	double t;

	parload_request_init(&r);
	r.source.path = fifo;
	r.cancel = &cancel;
	watch_start(&setter, fifo, 0.1, &cancel);
	ck_assert_int_eq(run_watched(&r, _i, &err, &t), PARLOAD_ECANCELED);
	watch_end(&setter);
	ck_assert_msg(strstr(err.message, fifo) == err.message &&
			      strstr(err.message, "waiting for a writer"),
		      "%s", err.message);
	ck_assert_msg(t < 2.0, "canceled after %.2f s", t);
	free(fifo);
}
END_TEST

static int stop_third(void *arg)
{
	int *calls = arg;

	return ++*calls >= 3;
}

/* on_wait has its turns while the load waits for the writer, each
 * wait_interval, and its stop ends the wait. */
START_TEST(test_fifo_no_writer_on_wait)
{
	char *fifo = new_fifo("nowriter");
	parload_request r;
	parload_error err;
	int calls = 0;
	double t;

	parload_request_init(&r);
	r.source.path = fifo;
	r.on_wait = stop_third;
	r.wait_arg = &calls;
	r.wait_interval = 0.01;
	ck_assert_int_eq(run_watched(&r, _i, &err, &t), PARLOAD_ECANCELED);
	ck_assert_int_eq(calls, 3);
	ck_assert_msg(strstr(err.message, "waiting for a writer"), "%s",
		      err.message);
	ck_assert_msg(t < 2.0, "stopped after %.2f s", t);
	free(fifo);
}
END_TEST

/* Following, the timeout covers the open: no writer within it is an
 * empty stream (batches or none: a stream is read as it comes). */
START_TEST(test_fifo_no_writer_follow_timeout)
{
	char *fifo = new_fifo("nowriter");
	parload_request r;
	parload_error err;
	double t;

	parload_request_init(&r);
	r.source.path = fifo;
	r.flags = PARLOAD_REQ_FOLLOW;
	r.timeout = 0.2;
	ck_assert_int_eq(run_watched(&r, _i, &err, &t), PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, fifo) == err.message &&
			      strstr(err.message, "no writer opened the FIFO "
						  "in 0.2 s"),
		      "%s", err.message);
	ck_assert_msg(t >= 0.2 && t < 2.0, "gave up after %.2f s", t);
	free(fifo);
}
END_TEST

static void *late_writer(void *arg)
{
	usleep(200 * 1000);
	return fifo_writer(arg);
}

/* A writer that comes within the follow timeout is waited for, and the
 * stream loads whole. */
START_TEST(test_fifo_writer_late_follow)
{
	char *fifo = new_fifo("late");
	char *file = tu_path("late-src.raw");
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	parload_dataset ds;
	parload_error err;
	pthread_t writer;
	fifo_feed f;
	tu_soa ref;

	tu_write_stream(file, 5, 16, 4, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_serial_read(file, &ref), 0);
	f.path = fifo;
	f.data = tu_read_all(file, &f.len);
	ck_assert_int_eq(pthread_create(&writer, NULL, late_writer, &f), 0);
	parload_request_init(&r);
	r.source.path = fifo;
	r.flags = PARLOAD_REQ_FOLLOW;
	r.timeout = 5.0;
	ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
		      err.message);
	pthread_join(writer, NULL);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free((void *)f.data);
	free(fifo);
	free(file);
}
END_TEST

/* What reads no pixels never waits for a writer: a description refuses
 * the stream, a header refuses the FIFO, at once. */
START_TEST(test_fifo_never_waited_for)
{
	char *fifo = new_fifo("nowriter");
	parload_file_header h;
	parload_source src;
	parload_desc d;
	parload_error err;
	watchdog w;
	double t0 = now();

	watch_start(&w, fifo, WATCHDOG_SECONDS, NULL);
	parload_source_init(&src);
	src.path = fifo;
	ck_assert_int_eq(parload_describe(&src, 0, &d, &err),
			 PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "a stream is described as it is "
					  "read"),
		      "%s", err.message);
	ck_assert_int_eq(parload_peek_header(fifo, &h, &err), PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a FIFO)"), "%s", err.message);
	ck_assert_int_eq(parload_read_header(fifo, &h, &err), PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a FIFO)"), "%s", err.message);
	ck_assert_msg(now() - t0 < 2.0, "took %.2f s", now() - t0);
	watch_end(&w);
	free(fifo);
}
END_TEST

START_TEST(test_not_regular_files)
{
	const tu_config *m = tu_matrix(_i);
	char *link = tu_path("dangling");
	char *empty = tu_path("empty.raw");
	parload_dataset ds;
	parload_error err;

	unlink(link);
	ck_assert_int_eq(symlink("no-such-target", link), 0);
	tu_write_file(empty, "", 0);

	ck_assert_int_eq(tu_config_load(m, 0, link, &ds, &err), PARLOAD_EOPEN);
	ck_assert_msg(strstr(err.message, "dangling symbolic link"), "%s",
		      err.message);
	ck_assert_int_eq(tu_config_load(m, 0, "/dev/null", &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "stream is empty"), "%s",
		      err.message);
	tu_assert_empty(&ds, "/dev/null");
	ck_assert_int_eq(tu_config_load(m, 0, "/", &ds, &err),
			 PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a directory)"), "%s", err.message);
	ck_assert_int_eq(tu_config_load(m, 0, empty, &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "0 bytes"), "%s", err.message);
	free(link);
	free(empty);
}
END_TEST

/* A long path that cannot be opened: the message keeps the reason,
 * whatever the path's length (its middle is left out instead). */
START_TEST(test_long_path_keeps_reason)
{
	static const struct {
		size_t len;
		const char *reason;
	} cases[] = {
		{600, "No such file or directory"},
		{5000, "File name too long"},
	};
	parload_options o;
	parload_dataset ds;
	parload_error err;

	parload_options_init(&o);
	o.error = &err;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *dir = tu_path("");
		size_t n = strlen(dir);
		char *path = malloc(cases[i].len + 1);

		ck_assert_ptr_nonnull(path);
		memcpy(path, dir, n);
		/* Directories of 99 letters (none of them there). */
		for (size_t k = n; k < cases[i].len; k++)
			path[k] = (k - n) % 100 == 99 ? '/' : 'n';
		memcpy(path + cases[i].len - 6, "/a.raw", 7);
		ck_assert_int_eq(parload_load(path, &o, &ds),
				 PARLOAD_EOPEN);
		ck_assert_uint_lt(strlen(err.message), sizeof(err.message));
		ck_assert_msg(strncmp(err.message, dir, n) == 0, "%s",
			      err.message);
		ck_assert_msg(strstr(err.message, "..."), "%s", err.message);
		ck_assert_msg(strstr(err.message, "nn/a.raw: cannot open "
						  "file: "),
			      "%s", err.message);
		ck_assert_msg(strstr(err.message, cases[i].reason), "%s",
			      err.message);
		free(path);
		free(dir);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("paths");
	TCase *t = tu_tcase(s, "paths", 60);

	tu_add_matrix_test(t, test_fifo_is_a_stream);
	tu_add_matrix_test(t, test_not_regular_files);
	tcase_add_test(t, test_long_path_keeps_reason);
	t = tu_tcase(s, "fifo without a writer", 30);
	tcase_add_loop_test(t, test_fifo_no_writer_canceled, 0,
			    PARLOAD_STRATEGY_COUNT_);
	tcase_add_loop_test(t, test_fifo_no_writer_on_wait, 0,
			    PARLOAD_STRATEGY_COUNT_);
	tcase_add_loop_test(t, test_fifo_no_writer_follow_timeout, 0,
			    PARLOAD_STRATEGY_COUNT_);
	tcase_add_test(t, test_fifo_writer_late_follow);
	tcase_add_test(t, test_fifo_never_waited_for);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
