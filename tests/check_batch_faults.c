/*
 * check_batch_faults.c - batched loads (parload_request.on_batch) with
 * the fault-injection seam: a read failing mid-stream, and every call of
 * a batched load failed in turn, with and without windows.  Needs
 * ./configure --enable-fault-injection (tests/fault/fault.h); in a normal
 * build it skips.
 */
#include "config.h"

#include "faults.h"

#ifdef PARLOAD_FAULT_INJECTION

#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchutil.h"

/* What the fault tests share: the seam's stream and its reference, a
 * warm loader of 3 threads, what the process held then, and a request for
 * batches of per views (through windows of as many views, or none). */
typedef struct ground {
	const ft_config *c;
	char *path;
	tu_soa ref;
	parload_shape s;
	ft_snapshot base;
	parload_loader *l;
	parload_request r;
	bu_got g;
} ground;

static void ground_init(ground *f, const char *name, uint64_t per,
			bool window)
{
	f->c = ft_config_of(tu_parallel(3));
	f->path = ft_stream(name, &f->ref);
	f->l = ft_warm_loader(f->c, f->path, &f->ref, &f->base);
	bu_prepare(&f->r, &f->g, &f->s, f->path, NULL, per, window ? per : 0);
}

static void ground_free(ground *f)
{
	bu_got_free(&f->g);
	parload_loader_free(f->l);
	tu_soa_free(&f->ref);
	free(f->path);
}

/* A read fails in the middle of the file: the batches before the failing
 * view arrive, then the error, which names that view and the offset, and
 * nothing is left behind. */
START_TEST(test_fault_mid_stream)
{
	ground f;
	parload_dataset ds;
	parload_error err;
	uint64_t off;
	int rc;

	ground_init(&f, "mid.raw", 1, _i);
	off = tu_payload_off(f.s.view_bytes, 4) + 100;
	parload__fault_eio_at(off);
	rc = bu_run(f.l, &f.r, &f.g, &ds, &err);
	parload__fault_reset();
	ck_assert_msg(rc == PARLOAD_EIO, "%d %s", rc, err.message);
	bu_assert_got(&f.g, &f.ref, &f.s, 4, "before the failing view");
	ck_assert_uint_eq(err.view, 4);
	ck_assert_uint_eq(err.offset, off);
	ck_assert_ptr_nonnull(strstr(err.message, f.path));
	ck_assert(bu_zeroed(&ds));
	ft_assert_as_before(&f.base, "failed mid-stream");
	ft_assert_loads_exactly(f.l, f.path, &f.ref, "after the failure");
	ft_assert_as_before(&f.base, "loaded again");
	ground_free(&f);
}
END_TEST

/* Every call of a batched load (batches of 2 views, with and without
 * windows) failed in turn: the views delivered before the failure are
 * the file's, the failure is what the call means, nothing is left
 * behind, and the loader then loads exactly. */
START_TEST(test_fault_walk)
{
	const char *how = _i ? " through windows" : "";
	ground f;
	parload_dataset ds;
	parload_error err;
	uint64_t n, midway = 0;
	ft_tally t = { { 0 }, "" };
	char what[96];
	bu_got *g = &f.g;

	ground_init(&f, "walk.raw", 2, _i);
	for (n = 1;; n++) {
		int k, rc;

		snprintf(what, sizeof(what), "batches%s, call %" PRIu64, how,
			 n);
		bu_got_free(g);
		bu_got_init(g, f.s.view_bytes, f.s.views);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = bu_run(f.l, &f.r, g, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		/* What arrived is the file's, whole batches in order. */
		ck_assert_msg(g->views == f.s.views || g->views % 2 == 0,
			      "%s: %" PRIu64 " views", what, g->views);
		bu_assert_got(g, &f.ref, &f.s, g->views, what);
		if (rc == 0) {
			ck_assert_msg(k < 0 || ft_may_succeed(f.c, k),
				      "%s: %s failed, yet the load succeeded",
				      what, parload__fault_kind_name(k));
			ck_assert_uint_eq(g->views, f.s.views);
			if (!_i)
				ft_assert_same(&ds, &f.ref);
			parload_dataset_free(&ds);
		} else {
			ck_assert_msg(k >= 0, "%s: failed with no fault: %s",
				      what, err.message);
			t.n[k]++;
			ft_assert_failure(what, k, rc, &err, f.path, false);
			ck_assert_msg(bu_zeroed(&ds), "%s: dataset not zeroed",
				      what);
			midway += g->views > 0;
		}
		ft_assert_as_before(&f.base, what);
		if (k < 0)
			break;
		ft_assert_loads_exactly(f.l, f.path, &f.ref, what);
	}
	/* Some failures came after batches had been delivered. */
	ck_assert_uint_gt(midway, 0);
	printf("walk batches%s: %" PRIu64 " faults, %" PRIu64 " after the "
	       "first batch (%s)\n", how, n - 1, midway, ft_tally_text(&t));
	ground_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("batch_faults");
	TCase *t;

	ft_build_configs();
	t = tu_tcase(s, "faults", 60);
	tcase_add_loop_test(t, test_fault_mid_stream, 0, 2);
	tcase_add_loop_test(t, test_fault_walk, 0, 2);
	return s;
}

#endif /* PARLOAD_FAULT_INJECTION */

int main(void)
{
#ifdef PARLOAD_FAULT_INJECTION
	return tu_run(suite());
#else
	return ft_skip("check_batch_faults");
#endif
}
