/*
 * check_memory.c - loads that cannot fit: a header promising more than
 * RAM and swap, and a load under an address-space limit, fail with
 * PARLOAD_ENOMEM naming what was needed, before allocating.  The first
 * needs a sparse file bigger than the machine's memory; the second (part
 * 1, check_memory_rlimit) an address-space limit of its own.  Part 2
 * (check_memory_reuse): a dataset under a huge page of pixels is a heap
 * block, which the next such load gets back with its pages in: it needs
 * the C library's own allocator.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

/* A header promising more than RAM and swap together: 128 MiB views,
 * enough of them to exceed the machine; *size is the file it promises.
 * Returns 0, or -1 if the machine's memory is unknown. */
static int huge_header(parload_file_header *h, uint64_t *size)
{
	struct sysinfo si;
	uint64_t have;

	if (sysinfo(&si) != 0)
		return -1;
	have = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
	if (parload_file_header_init(h, have / ((uint64_t)128 << 20) + 8, 4096,
				     4096, PARLOAD_PIXEL_F64, 0) != 0 ||
	    parload_file_size(h, size) != 0)
		return -1;
	return 0;
}

/* Write that header to fd, a sparse file of exactly the size it promises.
 * Returns 0, or -1 where the file cannot be made. */
static int write_huge(int fd, parload_file_header *h)
{
	uint64_t size;

	if (huge_header(h, &size) != 0 ||
	    write(fd, h, sizeof(*h)) != (ssize_t)sizeof(*h) ||
	    ftruncate(fd, (off_t)size) != 0)
		return -1;
	return 0;
}

/* Asked before any test runs (no ck_assert here). */
static const char *why_no_sparse(void)
{
	static char why[200];
	const char *tmp = getenv("TMPDIR");
	parload_file_header h;
	uint64_t size;
	int fd, rc = -1;

	if (huge_header(&h, &size) != 0)
		return "sysinfo() does not say how much memory there is";
	snprintf(why, sizeof(why), "%s/parload-sparse-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(why);
	if (fd >= 0) {
		unlink(why);
		rc = write_huge(fd, &h);
		close(fd);
	}
	snprintf(why, sizeof(why), "cannot make a sparse file bigger than "
		 "RAM and swap (%" PRIu64 " views of %" PRIu64 " bytes) in "
		 "$TMPDIR or /tmp", h.view_count, h.payload_size);
	return rc ? why : NULL;
}

/* The header on a sparse file of exactly the size it promises: a clear
 * PARLOAD_ENOMEM naming the bytes, for every strategy and for a stream,
 * before any allocation. */
START_TEST(test_more_than_the_machine)
{
	const tu_config *m = tu_matrix(_i);
	char *path = tu_path("huge.raw");
	parload_file_header h;
	parload_dataset ds;
	parload_error err;
	char want[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write_huge(fd, &h), 0);
	close(fd);
	snprintf(want, sizeof(want), "need %" PRIu64 " bytes",
		 h.view_count * (32 + h.payload_size));
	ck_assert_int_eq(tu_config_load(m, 0, path, &ds, &err), PARLOAD_ENOMEM);
	ck_assert_msg(strstr(err.message, want) &&
			      strstr(err.message, "RAM and swap"),
		      "%s: %s", m->label, err.message);
	tu_assert_empty(&ds, m->label);
	/* The same header at the head of a stream. */
	ck_assert_int_eq(tu_config_load_fed((const unsigned char *)&h,
					    sizeof(h), 64, TU_VIA_PIPE, m, 0,
					    &ds, &err),
			 PARLOAD_ENOMEM);
	ck_assert_msg(strstr(err.message, want), "%s", err.message);
	unlink(path);
	free(path);
}
END_TEST

/* Under an address-space limit, the limit is named. */
START_TEST(test_more_than_the_address_space_limit)
{
	parload_dataset ds;
	parload_error err;
	struct rlimit saved, lim;
	char *path = tu_path("limited.raw");
	int rc;

	/* 64 views of 4 MiB: 256 MiB of pixels against a 128 MiB limit. */
	tu_write_stream(path, 64, 1024, 1024, PARLOAD_PIXEL_U32, 0, 1);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved), 0);
	lim = saved;
	lim.rlim_cur = (rlim_t)128 << 20;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
	rc = tu_config_load(tu_parallel(1), 0, path, &ds, &err);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved), 0);
	ck_assert_int_eq(rc, PARLOAD_ENOMEM);
	ck_assert_msg(strstr(err.message, "RLIMIT_AS"), "%s", err.message);
	free(path);
}
END_TEST

/* Minor page faults of the process so far. */
static long minor_faults(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/*
 * Loads of 64 views of 64 x 64 u16 (512 KiB of pixels, 128 pages), two
 * files of different content in turn, each dataset freed before the next
 * load: every load is exact (a block that held the other file's views is
 * overwritten whole), and once the allocator has settled (the first few
 * loads) a load faults in fewer than an eighth of its pages, where a
 * fresh mapping faults in every one.  A dataset of a huge page of pixels
 * or more is still a mapping of its own, its pixels on a 2 MiB boundary.
 */
START_TEST(test_small_datasets_reuse_memory)
{
	enum { VIEWS = 64, SIDE = 64, SETTLE = 4, LOADS = 12 };
	const long pages = VIEWS * SIDE * SIDE * 2 / 4096;
	char *paths[2] = { tu_path("small-a.raw"), tu_path("small-b.raw") };
	char *big = tu_path("big.raw");
	tu_soa ref[2];
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_dataset ds;
	parload_error err;
	long before = 0, faults;

	for (int f = 0; f < 2; f++) {
		tu_write_stream(paths[f], VIEWS, SIDE, SIDE, PARLOAD_PIXEL_U16,
				0, (uint64_t)f + 1);
		ck_assert_int_eq(tu_serial_read(paths[f], &ref[f]), 0);
	}
	for (int i = 0; i < SETTLE + LOADS; i++) {
		if (i == SETTLE)
			before = minor_faults();
		ck_assert_int_eq(tu_load(l, paths[i % 2], NULL, NULL, &ds, &err),
				 0);
		tu_assert_same(&ds, &ref[i % 2]);
		parload_dataset_free(&ds);
	}
	faults = minor_faults() - before;
	printf("%d loads of %ld pages: %ld page faults\n", LOADS, pages,
	       faults);
	ck_assert_msg(faults < LOADS * pages / 8,
		      "%d loads of %ld pages of pixels faulted in %ld pages",
		      LOADS, pages, faults);

	/* 4 MiB of pixels: a mapping on a huge-page boundary. */
	tu_write_stream(big, 4, 512, 1024, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_load(l, big, NULL, NULL, &ds, &err), 0);
	ck_assert((uintptr_t)ds.pixels % ((uintptr_t)2 << 20) == 0);
	parload_dataset_free(&ds);

	parload_loader_free(l);
	for (int f = 0; f < 2; f++) {
		tu_soa_free(&ref[f]);
		free(paths[f]);
	}
	free(big);
}
END_TEST

/* Why the heap's reuse cannot be seen here: an allocator that keeps freed
 * blocks from coming back at once (a sanitizer's quarantine, valgrind's
 * freed-block queue). */
static const char *why_no_reuse(void)
{
#ifdef PARLOAD_SANITIZED
	return "a sanitizer's allocator keeps freed blocks in quarantine";
#else
	if (tu_under_valgrind())
		return "valgrind's allocator holds freed blocks back before "
		       "it gives them out again";
	return NULL;
#endif
}

static Suite *suite(void)
{
	Suite *s = suite_create("memory");
	TCase *t = tu_tcase(s, "memory", 60);

	tu_add_matrix_test(t, test_more_than_the_machine);
	return s;
}

static Suite *rlimit_suite(void)
{
	Suite *s = suite_create("memory_rlimit");
	TCase *t = tu_tcase(s, "address space", 60);

	tcase_add_test(t, test_more_than_the_address_space_limit);
	return s;
}

static Suite *reuse_suite(void)
{
	Suite *s = suite_create("memory_reuse");
	TCase *t = tu_tcase(s, "reuse", 60);

	tcase_add_test(t, test_small_datasets_reuse_memory);
	return s;
}

static const tu_part parts[] = {
	{ "check_memory", why_no_sparse, suite },
	{ "check_memory_rlimit", tu_why_no_rlimit, rlimit_suite },
	{ "check_memory_reuse", why_no_reuse, reuse_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
