/*
 * check_iterator.c - batches pulled by the caller (parload_stream_open,
 * parload_stream_next, parload_stream_close): the views a pushed load
 * delivers, in the same order, checked as bu_on_batch checks pushed ones;
 * a stream closed early, one that fails, and one closed after its last
 * view.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "batchutil.h"

/* Open a stream of f's request and pull at most max batches, each
 * checked as bu_on_batch checks a pushed one; the last parload_stream_next()
 * result. */
static int pull(bu_fixture *f, parload_stream **st, uint64_t max)
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
			ck_assert_int_eq(bu_on_batch(&b, &f->g), 0);
	}
	return rc;
}

/* Pulled to the end, with and without windows: the same views in the same
 * order, and the dataset handed over by the close. */
START_TEST(test_iterate)
{
	const bool window = _i;
	parload_stream *st;
	bu_fixture f;

	bu_fixture_init(&f, "pull.raw", 0, false, 3, 0, NULL, 4,
			window ? 4 : 0);
	ck_assert_msg(pull(&f, &st, BU_NEVER) == 0, "%s", f.err.message);
	ck_assert_msg(parload_stream_close(st, &f.ds) == 0, "close");
	bu_assert_got(&f.g, &f.ref, &f.s, BU_VIEWS, "pulled");
	ck_assert_uint_eq(f.g.batches, (BU_VIEWS + 3) / 4);
	ck_assert_uint_eq(f.g.bytes_done, f.g.bytes_total);
	ck_assert_uint_eq(f.ds.shape.views, BU_VIEWS);
	if (window) {
		ck_assert_int_le(f.g.n_windows, 2);
		ck_assert_ptr_null(f.ds.headers);
		ck_assert_ptr_null(f.ds.pixels);
	} else {
		tu_assert_same(&f.ds, &f.ref);
		ck_assert_ptr_eq(f.ds.headers, f.g.base);
	}
	bu_fixture_free(&f);
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
	bu_fixture f;

	bu_fixture_init(&f, "early.raw", 0, false, 3, 0, NULL, 4,
			window ? 4 : 0);
	bu_assert_loads(&f, 4, "first load");
	tasks = tu_count_entries("/proc/self/task");
	fds = tu_count_entries("/proc/self/fd");
	ck_assert_int_eq(pull(&f, &st, taken), 1);
	memset(&f.ds, 0x5a, sizeof(f.ds));
	ck_assert_int_eq(parload_stream_close(st, &f.ds), PARLOAD_ECANCELED);
	ck_assert(bu_zeroed(&f.ds));
	bu_assert_got(&f.g, &f.ref, &f.s, 4 * taken, "closed early");
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	bu_assert_tasks(tasks, "closed early");
	bu_assert_loads(&f, 4, "after the close");
	bu_fixture_free(&f);
}
END_TEST

/* A bad CRC: the batch before it, then the error from
 * parload_stream_next(), which the close returns too; a request with its
 * own bu_on_batch is no stream. */
START_TEST(test_iterate_error)
{
	parload_stream *st;
	bu_fixture f;

	bu_fixture_init(&f, "ibad.raw", PARLOAD_FLAG_CRC32C, true, 2,
			PARLOAD_OPT_VERIFY_CRC, NULL, 4, 0);
	ck_assert_int_eq(pull(&f, &st, BU_NEVER), PARLOAD_ECRC);
	ck_assert_uint_eq(f.err.view, 5);
	ck_assert_ptr_nonnull(strstr(f.err.message, f.path));
	bu_assert_got(&f.g, &f.ref, &f.s, 4, "before the bad view");
	memset(&f.ds, 0x5a, sizeof(f.ds));
	ck_assert_int_eq(parload_stream_close(st, &f.ds), PARLOAD_ECRC);
	ck_assert(bu_zeroed(&f.ds));

	f.r.on_batch = bu_on_batch;
	ck_assert_int_eq(parload_stream_open(&st, f.l, &f.r, &f.err),
			 PARLOAD_EINVAL);
	bu_fixture_free(&f);
}
END_TEST

/* A caller that has every view (views_done == views_total) and closes
 * without asking for more has not closed early: the load succeeded, and
 * the close returns 0 and hands the dataset over. */
START_TEST(test_iterate_close_after_last)
{
	parload_stream *st;
	parload_batch b;
	bu_fixture f;

	bu_fixture_init(&f, "last.raw", 0, false, 2, 0, NULL, 4, 0);
	ck_assert_msg(parload_stream_open(&st, f.l, &f.r, &f.err) == 0, "%s",
		      f.err.message);
	do
		ck_assert_int_eq(parload_stream_next(st, &b, &f.err), 1);
	while (b.views_done < b.views_total);
	ck_assert_int_eq(b.views_done, BU_VIEWS);
	f.rc = parload_stream_close(st, &f.ds);
	ck_assert_msg(f.rc == 0, "every view was delivered, yet the close "
		      "returned %s", parload_err_name(f.rc));
	tu_assert_same(&f.ds, &f.ref);
	bu_fixture_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iterator");
	TCase *t = tu_tcase(s, "iterator", 0);

	tcase_add_loop_test(t, test_iterate, 0, 2);
	tcase_add_loop_test(t, test_iterate_close_early, 0, 4);
	tcase_add_test(t, test_iterate_error);
	tcase_add_test(t, test_iterate_close_after_last);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
