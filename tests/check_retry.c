/*
 * check_retry.c - calls the kernel cuts short or interrupts, and reads
 * that fail at a given offset: short reads of 1 byte and of odd sizes and
 * short writes load and write the same data, EINTR at every
 * interruptible call (walked, as check_faults walks failures) is retried,
 * and EIO at an offset is reported with that offset and its view, for
 * every configuration and for the writer.
 *
 * Built against the fault-injection seam (./configure
 * --enable-fault-injection, tests/fault/fault.h); in a normal build it skips.
 */
#include "config.h"

#include "faults.h"

#ifdef PARLOAD_FAULT_INJECTION

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- short reads and EINTR ---- */

/* Reads cut to 1 byte and to odd sizes load the same data.  stdio is left
 * out: a short fread means end of file or an error, and glibc loops over
 * the short reads beneath it itself; mmap makes no read calls. */
START_TEST(test_short_reads)
{
	const ft_config *c = &ft_configs[_i];
	const size_t sizes[] = { 1, 7, 37, 999 };
	parload_loader *l;
	parload_error err;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "short.raw", &ref);

	if (c->m->io == PARLOAD_IO_STDIO ||
	    c->m->strategy == PARLOAD_STRATEGY_MMAP)
		goto out;
	l = ft_warm_loader(c, path, &ref, &base);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char what[160];
		parload_dataset ds;

		snprintf(what, sizeof(what), "%s, reads of at most %zu bytes",
			 c->name, sizes[i]);
		parload__fault_short(sizes[i]);
		ck_assert_int_eq(ft_load(l, path, &ds, &err), 0);
		parload__fault_reset();
		ft_assert_same(&ds, &ref);
		/* One-byte reads: one call a byte at the least. */
		if (sizes[i] == 1)
			ck_assert_uint_ge(ds.stats.read_calls,
					  tu_file_size(path));
		parload_dataset_free(&ds);
		ft_assert_as_before(&base, what);
	}
	parload_loader_free(l);
out:
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* EINTR at the N-th interruptible call, for every N: retried, and the
 * load is exact. */
START_TEST(test_walk_eintr)
{
	const ft_config *c = &ft_configs[_i];
	const uint64_t mask = ft_interruptible_mask();
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "eintr.raw", &ref);
	ft_tally t = { { 0 }, "" };
	uint64_t n;

	l = ft_warm_loader(c, path, &ref, &base);
	for (n = 1;; n++) {
		int k, rc;

		parload__fault_fail_nth(n, mask, EINTR);
		rc = ft_load(l, path, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ck_assert_msg(rc == 0, "%s: EINTR at %s (call %" PRIu64
			      "): %s", c->name, parload__fault_kind_name(k), n,
			      err.message);
		ft_assert_same(&ds, &ref);
		parload_dataset_free(&ds);
		ft_assert_as_before(&base, c->name);
		if (k < 0)
			break;
		t.n[k]++;
	}
	/* EINTR every other call, all through the load. */
	parload__fault_eintr_every(2);
	ck_assert_int_eq(ft_load(l, path, &ds, &err), 0);
	parload__fault_reset();
	ft_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	printf("walk EINTR, %s: %" PRIu64 " interruptions (%s)\n", c->name,
	       n - 1, ft_tally_text(&t));
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Short writes of 1 byte and of an odd size, and EINTR on every other
 * interruptible call, write the same file. */
START_TEST(test_writer_short_and_interrupted)
{
	const ft_shape *s = &ft_shapes[_i];
	char *ref = tu_path("wref.raw"), *out = tu_path("wout.raw");
	/* One-byte writes of the large shape would take seconds. */
	const size_t sizes[] = { _i == 0 ? 1 : 4093, 4093 };
	parload_error err;

	parload__fault_reset();
	ck_assert_int_eq(ft_write_stream(ref, s, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		parload__fault_short(sizes[i]);
		ck_assert_int_eq(ft_write_stream(out, s, &err), 0);
		parload__fault_reset();
		ft_assert_same_file(ref, out, "short writes");
	}
	parload__fault_eintr_every(2);
	ck_assert_int_eq(ft_write_stream(out, s, &err), 0);
	parload__fault_reset();
	ft_assert_same_file(ref, out, "interrupted writes");
	free(ref);
	free(out);
}
END_TEST

/* ---- EIO at an offset ---- */

/* A bad sector at a given offset: the load fails with EIO naming that
 * offset and the view that holds it, and the loader is still usable. */
START_TEST(test_eio_at_offset)
{
	const ft_config *c = &ft_configs[_i];
	const uint64_t rec = PARLOAD_VIEW_HEADER_SIZE + FT_WIDTH * FT_HEIGHT * 2;
	const uint64_t vo3 = PARLOAD_FILE_HEADER_SIZE + 3 * rec;
	const uint64_t vo5 = PARLOAD_FILE_HEADER_SIZE + 5 * rec;
	parload_loader *l;
	parload_error err;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "eio.raw", &ref);
	const uint64_t offsets[] = {
		0, 20, PARLOAD_FILE_HEADER_SIZE, vo3 + 5,
		vo5 + PARLOAD_VIEW_HEADER_SIZE + 1001, tu_file_size(path) - 1,
	};

	/* A mapped file's I/O errors arrive as SIGBUS, not as a return
	 * value: not something this seam can inject. */
	if (c->m->strategy == PARLOAD_STRATEGY_MMAP)
		goto out;
	l = ft_warm_loader(c, path, &ref, &base);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		const uint64_t off = offsets[i];
		const uint64_t view =
			off < PARLOAD_FILE_HEADER_SIZE ?
				PARLOAD_NONE :
				(off - PARLOAD_FILE_HEADER_SIZE) / rec;
		char what[160], where[96];
		parload_dataset ds;
		int rc;

		snprintf(what, sizeof(what), "%s, EIO at byte %" PRIu64,
			 c->name, off);
		parload__fault_eio_at(off);
		rc = ft_load(l, path, &ds, &err);
		parload__fault_reset();
		ck_assert_msg(rc == PARLOAD_EIO, "%s: returned %s: %s", what,
			      parload_err_name(rc), err.message);
		ck_assert_int_eq(err.sys_errno, EIO);
		ck_assert_msg(err.offset == off,
			      "%s: reported offset %" PRIu64 ": %s", what,
			      err.offset, err.message);
		ck_assert_msg(err.view == view,
			      "%s: reported view %" PRIu64 ", want %" PRIu64
			      ": %s", what, err.view, view, err.message);
		if (view == PARLOAD_NONE)
			snprintf(where, sizeof(where),
				 "(byte offset %" PRIu64 ")", off);
		else
			snprintf(where, sizeof(where),
				 "(view %" PRIu64 ", byte offset %" PRIu64 ")",
				 view, off);
		ck_assert_msg(strstr(err.message, where) &&
				      strstr(err.message, path) &&
				      strstr(err.message, strerror(EIO)),
			      "%s: message \"%s\" lacks \"%s\"", what,
			      err.message, where);
		ck_assert(ft_all_zero(&ds, sizeof(ds)));
		ft_assert_as_before(&base, what);
		ft_assert_loads_exactly(l, path, &ref, what);
	}
	parload_loader_free(l);
out:
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("retry");
	TCase *t;

	ft_build_configs();
	t = tu_tcase(s, "retry", 60);
	tcase_add_loop_test(t, test_short_reads, 0, ft_n_configs);
	tcase_add_loop_test(t, test_walk_eintr, 0, ft_n_configs);
	tcase_add_loop_test(t, test_writer_short_and_interrupted, 0,
			    FT_N_SHAPES);

	t = tu_tcase(s, "eio", 0);
	tcase_add_loop_test(t, test_eio_at_offset, 0, ft_n_configs);
	return s;
}

#endif /* PARLOAD_FAULT_INJECTION */

int main(void)
{
#ifdef PARLOAD_FAULT_INJECTION
	return tu_run(suite());
#else
	return ft_skip("check_retry");
#endif
}
