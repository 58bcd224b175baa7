/*
 * check_many.c - thousands of loads with one loader, good and failing,
 * into fresh and into the caller's memory: resident memory, threads and
 * descriptors stay where they were.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "matrix.h"
#include "testutil.h"

#define KEEP (PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING)

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

/* Thousands of loads with one loader, good and failing, into fresh and
 * into the caller's memory: resident memory, threads and descriptors stay
 * where they were after the first loads. */
START_TEST(test_many_loads_stay_flat)
{
	const int loads = tu_under_valgrind() ? 200 : 3000;
	char *good = tu_crc_stream("flat.raw", PARLOAD_FLAG_CRC32C);
	char *bad = tu_crc_stream("flatbad.raw", PARLOAD_FLAG_CRC32C);
	char *missing = tu_path("missing.raw");
	parload_loader *l = tu_config_loader(tu_parallel(3), KEEP);
	parload_buffers b;
	parload_dataset ds;
	parload_error err;
	long rss0 = 0, rss1;
	int threads0 = 0, fds0 = 0;

	tu_flip(bad, tu_payload_off(TU_CRC_PS, 4));
	tu_buffers_new(&b, TU_CRC_VIEWS, TU_CRC_PS);
	for (int i = 0; i < loads; i++) {
		if (i == loads / 10) {
			rss0 = vm_rss_kib();
			threads0 = tu_count_entries("/proc/self/task");
			fds0 = tu_count_entries("/proc/self/fd");
		}
		switch (i % 4) {
		case 0:
			ck_assert_int_eq(tu_load(l, good, NULL, NULL, &ds, &err),
					 0);
			break;
		case 1:
			ck_assert_int_eq(tu_load(l, bad, NULL, NULL, &ds, &err),
					 0);
			ck_assert_uint_eq(ds.bad_view_count, 1);
			break;
		case 2:
			ck_assert_int_eq(tu_load(l, bad, NULL, &b,
								  &ds, &err),
					 0);
			ck_assert_uint_eq(ds.bad_view_count, 1);
			break;
		default:
			ck_assert_int_eq(tu_load(l, missing, NULL, NULL, &ds,
							     &err),
					 PARLOAD_EOPEN);
			break;
		}
		parload_dataset_free(&ds);
	}
	rss1 = vm_rss_kib();
	ck_assert_int_eq(tu_count_entries("/proc/self/task"), threads0);
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds0);
#ifndef PARLOAD_SANITIZED
	/* A sanitizer keeps freed memory in quarantine. */
	if (!tu_under_valgrind())
		ck_assert_msg(rss1 - rss0 < 1024,
			      "resident memory grew from %ld to %ld KiB over "
			      "%d loads",
			      rss0, rss1, loads - loads / 10);
#endif
	printf("%d loads: VmRSS %ld -> %ld KiB, %d threads, %d fds\n", loads,
	       rss0, rss1, threads0, fds0);
	parload_loader_free(l);
	tu_buffers_free(&b);
	free(good);
	free(bad);
	free(missing);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("many");
	TCase *t = tu_tcase(s, "many", 120);

	tcase_add_test(t, test_many_loads_stay_flat);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
