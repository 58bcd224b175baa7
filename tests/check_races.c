/*
 * check_races.c - loads racing other threads: a file cut or grown while
 * it loads fails cleanly or loads exactly, never crashes; application
 * threads loading at once, each with its own loader and strategy, each
 * get the file exactly.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

#define VERIFY PARLOAD_OPT_VERIFY_CRC

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
	*data = tu_read_all(path, len);
	return path;
}

/* Another thread cuts the file once, at a random moment of the load.  The
 * load fails (any error: a cut can zero the end of a page that is being
 * read, which a check may then see) or returns every view exactly; a
 * failed load leaves nothing behind.  Never a crash (SIGBUS for mmap). */
START_TEST(test_file_shrinks_during_load)
{
	const tu_config *m = tu_matrix(_i);
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
		l = tu_config_loader(m, verify ? VERIFY : 0);
		/* How long a load takes here, to cut at any moment of one. */
		for (int k = 0; k < 3; k++) {
			t0 = now();
			ck_assert_int_eq(tu_load(l, path, NULL, NULL, &ds,
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
			rc = tu_load(l, path, NULL, NULL, &ds, &err);
			pthread_join(mu.thread, NULL);
			if (rc == 0) {
				tu_assert_same(&ds, &ref);
				ok++;
			} else {
				ck_assert_int_eq(err.code, rc);
				tu_assert_empty(&ds, m->label);
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
	       m->label, ok, failed);
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
	const tu_config *m = tu_matrix(_i);
	parload_loader *l = tu_config_loader(m, VERIFY);
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
		int rc = tu_load(l, path, NULL, NULL, &ds, &err);

		if (rc == 0) {
			tu_assert_same(&ds, &ref);
			ok++;
		} else {
			ck_assert_msg(rc == PARLOAD_ETRAILING, "%s: %s",
				      m->label, err.message);
			tu_assert_empty(&ds, m->label);
			trailing++;
		}
		parload_dataset_free(&ds);
	}
	atomic_store(&mu.stop, true);
	pthread_join(mu.thread, NULL);
	printf("%s: file growing during 40 loads: %u complete, %u too long\n",
	       m->label, ok, trailing);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(data);
	free(path);
}
END_TEST

typedef struct app {
	const tu_config *m;
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

	tu_config_options(&o, a->m, VERIFY | PARLOAD_OPT_NO_BIND);
	if (parload_loader_new(&l, &o, &err) != 0) {
		a->failures = a->loads;
		return NULL;
	}
	for (int i = 0; i < a->loads; i++) {
		parload_file_header h;

		if (tu_load(l, a->path, NULL, NULL, &ds, &err) != 0 ||
		    (h = tu_ds_header(&ds),
		     memcmp(&h, ref->file_header, 64) != 0) ||
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
	const tu_config *side_by_side[] = {
		tu_parallel(1),
		tu_parallel(5),
		tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0, PARLOAD_IO_STDIO,
			       PARLOAD_BUFFER_DEFAULT),
		tu_matrix_find(PARLOAD_STRATEGY_MMAP, 0, PARLOAD_IO_POSIX,
			       PARLOAD_BUFFER_DEFAULT),
		tu_parallel(3),
		tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0, PARLOAD_IO_POSIX,
			       0),
	};
	char *path = tu_path("concurrent.raw");
	app apps[TU_COUNT(side_by_side)];
	tu_soa ref;

	tu_write_stream(path, 60, 100, 50, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 8);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (int i = 0; i < TU_COUNT(apps); i++) {
		apps[i].m = side_by_side[i];
		apps[i].path = path;
		apps[i].ref = &ref;
		apps[i].loads = tu_under_valgrind() ? 5 : 40;
		apps[i].failures = 0;
		ck_assert_int_eq(pthread_create(&apps[i].thread, NULL,
						app_main, &apps[i]),
				 0);
	}
	for (int i = 0; i < TU_COUNT(apps); i++) {
		pthread_join(apps[i].thread, NULL);
		ck_assert_msg(apps[i].failures == 0, "%s: %d of %d loads wrong",
			      apps[i].m->label, apps[i].failures,
			      apps[i].loads);
	}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("races");
	TCase *t = tu_tcase(s, "changes", 60);

	tu_add_matrix_test(t, test_file_shrinks_during_load);
	tu_add_matrix_test(t, test_file_grows_during_load);

	t = tu_tcase(s, "concurrent", 120);
	tcase_add_test(t, test_concurrent_loaders);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
