/*
 * check_memory.c - loads that cannot fit: a header promising more than
 * RAM and swap, and a load under an address-space limit, fail with
 * PARLOAD_ENOMEM naming what was needed, before allocating.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

/* A header promising more than RAM and swap together, on a sparse file of
 * exactly the size it promises: a clear PARLOAD_ENOMEM naming the bytes,
 * for every strategy and for a stream, before any allocation. */
START_TEST(test_more_than_the_machine)
{
	const tu_config *m = tu_matrix(_i);
	char *path = tu_path("huge.raw");
	parload_file_header h;
	parload_dataset ds;
	parload_error err;
	struct sysinfo si;
	uint64_t have, views, size, need;
	char want[64];
	int fd;

	ck_assert_int_eq(sysinfo(&si), 0);
	have = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
	/* 128 MiB views, enough of them to exceed the machine. */
	views = have / ((uint64_t)128 << 20) + 8;
	ck_assert_int_eq(parload_file_header_init(&h, views, 4096, 4096,
						  PARLOAD_PIXEL_F64, 0),
			 0);
	ck_assert_int_eq(parload_file_size(&h, &size), 0);
	need = views * (32 + h.payload_size);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	if (ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "skipped: no sparse file of %" PRIu64
			" bytes here\n", size);
		close(fd);
		free(path);
		return;
	}
	close(fd);
	ck_assert_int_eq(tu_config_load(m, 0, path, &ds, &err), PARLOAD_ENOMEM);
	snprintf(want, sizeof(want), "need %" PRIu64 " bytes", need);
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
#ifdef PARLOAD_SANITIZED
	/* The sanitizers own the address space. */
	return;
#else
	parload_dataset ds;
	parload_error err;
	struct rlimit saved, lim;
	char *path;
	int rc;

	if (getenv("PARLOAD_TEST_NO_RLIMIT"))
		return;
	path = tu_path("limited.raw");
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
#endif
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memory");
	TCase *t = tu_tcase(s, "memory", 60);

	tu_add_matrix_test(t, test_more_than_the_machine);
	tcase_add_test(t, test_more_than_the_address_space_limit);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
