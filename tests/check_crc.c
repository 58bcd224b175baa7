/*
 * check_crc.c - payload CRC-32C: checked in every configuration, the
 * first bad view failing the load with its view and byte offset, or with
 * keep-going every bad view listed; views split between workers; streams
 * checked as they arrive; the same check on views read elsewhere
 * (parload_check_views).
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "matrix.h"
#include "testutil.h"

#define VERIFY PARLOAD_OPT_VERIFY_CRC
#define KEEP (PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING)

/* Good files load exactly and say how many payloads were checked: every
 * one when asked and the file has CRCs, none otherwise; no view is listed
 * bad. */
static const struct good {
	const char *what;
	uint32_t file_flags;
	unsigned flags;
	uint64_t checked;
} goods[] = {
	{ "checked", PARLOAD_FLAG_CRC32C, VERIFY, TU_CRC_VIEWS },
	{ "checked, keep going", PARLOAD_FLAG_CRC32C, KEEP, TU_CRC_VIEWS },
	{ "not asked", PARLOAD_FLAG_CRC32C, 0, 0 },
	{ "a file without CRCs", 0, KEEP, 0 },
};

START_TEST(test_crc_good_files)
{
	const tu_config *m = tu_matrix(_i);

	for (int k = 0; k < TU_COUNT(goods); k++) {
		const struct good *g = &goods[k];
		char *path = tu_crc_stream("good.raw", g->file_flags);
		parload_dataset ds;
		parload_error err;
		tu_soa ref;

		ck_assert_int_eq(tu_serial_read(path, &ref), 0);
		ck_assert_msg(tu_config_load(m, g->flags, path, &ds, &err) == 0,
			      "%s, %s: %s", m->label, g->what, err.message);
		tu_assert_same(&ds, &ref);
		ck_assert_uint_eq(ds.stats.crc_checked, g->checked);
		ck_assert_uint_eq(ds.stats.declared_views, TU_CRC_VIEWS);
		tu_assert_bad_views(&ds, NULL, 0, m->label);
		ck_assert_ptr_null(ds.bad_views);
		parload_dataset_free(&ds);
		tu_soa_free(&ref);
		free(path);
	}
}
END_TEST

/* One flipped byte that fails the load, with the view and the byte offset
 * the error names: a changed payload byte (its payload's offset), and a
 * view_index, which stays fatal with keep-going: it is not a damaged
 * payload but a file that is not what it says (its header's offset). */
static const struct fatal {
	const char *what;
	uint64_t view;
	bool in_header; /* the byte is in the view header, not the payload */
	uint64_t at;    /* from the start of the header or the payload */
	unsigned flags;
	int code;
} fatals[] = {
	{ "a payload byte", 6, false, 500, VERIFY, PARLOAD_ECRC },
	{ "a view_index, keep going", 2, true, 0, KEEP, PARLOAD_EVIEWINDEX },
};

START_TEST(test_one_flipped_byte_fails)
{
	const tu_config *m = tu_matrix(_i);

	for (int k = 0; k < TU_COUNT(fatals); k++) {
		const struct fatal *f = &fatals[k];
		const uint64_t off = f->in_header ?
					     tu_view_off(TU_CRC_PS, f->view) :
					     tu_payload_off(TU_CRC_PS, f->view);
		char *path = tu_crc_stream("flipped.raw", PARLOAD_FLAG_CRC32C);
		parload_dataset ds;
		parload_error err;
		char want[64];
		int rc;

		tu_flip(path, off + f->at);
		rc = tu_config_load(m, f->flags, path, &ds, &err);
		ck_assert_msg(rc == f->code, "%s, %s: %s", m->label, f->what,
			      parload_err_name(rc));
		ck_assert_int_eq(err.code, f->code);
		ck_assert_uint_eq(err.view, f->view);
		ck_assert_uint_eq(err.offset, off);
		snprintf(want, sizeof(want),
			 "(view %" PRIu64 ", byte offset %" PRIu64 ")", f->view,
			 off);
		ck_assert_msg(strstr(err.message, want), "%s", err.message);
		tu_assert_empty(&ds, m->label);
		free(path);
	}
}
END_TEST

/* keep-going loads everything and lists exactly the bad views, whether a
 * payload or the CRC in a header was damaged. */
START_TEST(test_crc_keep_going_lists_every_bad_view)
{
	static const uint64_t bad[] = { 0, 3, 4, TU_CRC_VIEWS - 1 };
	const tu_config *m = tu_matrix(_i);
	char *path = tu_crc_stream("crcmany.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	int rc;

	tu_flip(path, tu_payload_off(TU_CRC_PS, 0));  /* first byte */
	tu_flip(path, tu_payload_off(TU_CRC_PS, 3) + TU_CRC_PS - 1); /* last */
	tu_flip(path, tu_view_off(TU_CRC_PS, 4) + 20); /* its CRC */
	tu_flip(path, tu_payload_off(TU_CRC_PS, TU_CRC_VIEWS - 1) + 7);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	rc = tu_config_load(m, KEEP, path, &ds, &err);
	ck_assert_msg(rc == 0, "%s: %s", m->label, err.message);
	tu_assert_bad_views(&ds, bad, TU_COUNT(bad), m->label);
	/* The damaged bytes are loaded as they are. */
	tu_assert_same(&ds, &ref);
	ck_assert_uint_eq(ds.stats.crc_checked, TU_CRC_VIEWS);
	parload_dataset_free(&ds);
	ck_assert_ptr_null(ds.bad_views);
	ck_assert_uint_eq(ds.bad_view_count, 0);

	/* Without keep-going, the first of them. */
	rc = tu_config_load(m, VERIFY, path, &ds, &err);
	ck_assert_int_eq(rc, PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 0);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Bad views in different workers' shares: the error always names the
 * lowest, whichever worker finds its own first. */
START_TEST(test_crc_lowest_bad_view_reported)
{
	static const uint64_t bad[] = { 9, 33, 50 };
	static const tu_config m = { "parallel, 4 threads",
				     PARLOAD_STRATEGY_PARALLEL, 4,
				     PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT };
	char *path = tu_path("lowest.raw");
	const uint64_t ps = 64 * 64 * 2;
	parload_loader *strict = tu_config_loader(&m, VERIFY);
	parload_loader *keep = tu_config_loader(&m, KEEP);
	parload_dataset ds;
	parload_error err;

	tu_write_stream(path, 64, 64, 64, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 3);
	/* Last first, so that no order of discovery is favoured. */
	for (int k = TU_COUNT(bad) - 1; k >= 0; k--)
		tu_flip(path, tu_payload_off(ps, bad[k]) + 100);
	for (int round = 0; round < 20; round++) {
		ck_assert_int_eq(tu_load(strict, path, NULL, NULL, &ds, &err),
				 PARLOAD_ECRC);
		ck_assert_uint_eq(err.view, 9);
		ck_assert_uint_eq(err.offset, tu_payload_off(ps, 9));
		tu_assert_empty(&ds, "strict");
		ck_assert_int_eq(tu_load(keep, path, NULL, NULL, &ds, &err), 0);
		tu_assert_bad_views(&ds, bad, TU_COUNT(bad), "keep-going");
		parload_dataset_free(&ds);
	}
	parload_loader_free(strict);
	parload_loader_free(keep);
	free(path);
}
END_TEST

/* 1 to 3 views of 234 KiB over 2 to 7 workers: every view is split between
 * workers, and a damaged byte anywhere in one (its start, its middle, its
 * end, the CRC in its header) is found, and only there. */
START_TEST(test_crc_split_views)
{
	const unsigned threads = 2 + (unsigned)_i;
	const tu_config m = { "split", PARLOAD_STRATEGY_PARALLEL, threads,
			      PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT };
	const uint64_t ps = 400 * 300 * 2;
	parload_loader *strict = tu_config_loader(&m, VERIFY);
	parload_loader *keep = tu_config_loader(&m, KEEP);
	parload_dataset ds;
	parload_error err;

	for (uint64_t nviews = 1; nviews <= 3; nviews++) {
		char name[64];
		char *path;

		snprintf(name, sizeof(name), "split%" PRIu64 "-%u.raw", nviews,
			 threads);
		path = tu_path(name);
		tu_write_stream(path, nviews, 400, 300, PARLOAD_PIXEL_U16,
				PARLOAD_FLAG_CRC32C, nviews);
		/* All good: no view is reported however it is split. */
		ck_assert_msg(tu_load(strict, path, NULL, NULL, &ds, &err) == 0,
			      "%u threads: %s", threads, err.message);
		ck_assert_uint_eq(ds.stats.crc_checked, nviews);
		parload_dataset_free(&ds);
		for (uint64_t v = 0; v < nviews; v++) {
			const uint64_t where[] = {
				tu_payload_off(ps, v),
				tu_payload_off(ps, v) + ps / 2,
				tu_payload_off(ps, v) + ps / 3 + 4097,
				tu_payload_off(ps, v) + ps - 1,
				tu_view_off(ps, v) + 21,
			};

			for (int k = 0; k < TU_COUNT(where); k++) {
				tu_flip(path, where[k]);
				ck_assert_int_eq(tu_load(
							 strict, path, NULL, NULL, &ds,
							 &err),
						 PARLOAD_ECRC);
				ck_assert_msg(err.view == v,
					      "%u threads, %" PRIu64
					      " views: view %" PRIu64
					      " damaged, view %" PRIu64
					      " reported",
					      threads, nviews, v, err.view);
				ck_assert_int_eq(tu_load(
							 keep, path, NULL, NULL, &ds,
							 &err),
						 0);
				tu_assert_bad_views(&ds, &v, 1, "split");
				parload_dataset_free(&ds);
				tu_flip(path, where[k]);
			}
		}
		free(path);
	}
	parload_loader_free(strict);
	parload_loader_free(keep);
}
END_TEST

/* The list belongs to the dataset even when the arrays are the caller's. */
START_TEST(test_keep_going_load_into)
{
	const uint64_t bad = 7;
	const tu_config *m = tu_matrix(_i);
	char *path = tu_crc_stream("into.raw", PARLOAD_FLAG_CRC32C);
	parload_loader *l = tu_config_loader(m, KEEP);
	parload_buffers b;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	tu_flip(path, tu_payload_off(TU_CRC_PS, bad) + 3);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	tu_buffers_new(&b, TU_CRC_VIEWS, TU_CRC_PS);
	ck_assert_int_eq(tu_load(l, path, NULL, &b, &ds, &err), 0);
	tu_assert_bad_views(&ds, &bad, 1, m->label);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	/* The buffers are still the caller's. */
	ck_assert_int_eq(memcmp(b.pixels, ref.pixels, b.pixels_size), 0);
	tu_buffers_free(&b);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A stream is checked as it arrives, with the same outcome. */
START_TEST(test_crc_stream)
{
	static const uint64_t bad[] = { 2, 8 };
	char *path = tu_crc_stream("crcstream.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	tu_flip(path, tu_payload_off(TU_CRC_PS, 2) + 1);
	tu_flip(path, tu_payload_off(TU_CRC_PS, 8) + 1);
	data = tu_read_all(path, &len);
	ck_assert_int_eq(tu_config_load_fed(data, len, 999, TU_VIA_PIPE,
					    tu_parallel(2), VERIFY, &ds, &err),
			 PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 2);
	ck_assert_uint_eq(err.offset, tu_payload_off(TU_CRC_PS, 2));
	ck_assert_int_eq(tu_config_load_fed(data, len, 999, TU_VIA_PIPE,
					    tu_parallel(2), KEEP, &ds, &err),
			 0);
	tu_assert_bad_views(&ds, bad, TU_COUNT(bad), "stream");
	ck_assert_uint_eq(ds.stats.crc_checked, TU_CRC_VIEWS);
	parload_dataset_free(&ds);
	free(data);
	free(path);
}
END_TEST

/* parload_check_views on views read without libparload (the independent
 * serial reader): the load's own check, outcome and messages. */
static void read_for_check(const char *path, tu_soa *ref,
			   parload_dataset *ds)
{
	parload_file_header h;
	parload_error err;

	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	memset(ds, 0, sizeof(*ds));
	ck_assert_int_eq(parload_read_header(path, &h, &err), 0);
	parload_desc_from_header(&ds->desc, &h);
	ck_assert_int_eq(parload_selection_resolve(&ds->desc, NULL,
						   &ds->shape, &err),
			 0);
	ds->headers = (parload_view_header *)ref->headers;
	ds->pixels = ref->pixels;
}

START_TEST(test_check_views_public)
{
	static const uint64_t bad[] = { 3, 7 };
	char *path = tu_crc_stream("public.raw", PARLOAD_FLAG_CRC32C);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	tu_flip(path, tu_payload_off(TU_CRC_PS, 3) + 5);
	tu_flip(path, tu_payload_off(TU_CRC_PS, 7) + 1);
	read_for_check(path, &ref, &ds);
	ck_assert_int_eq(parload_check_views(&ds, 0, path, &err), 0);
	ck_assert_uint_eq(ds.stats.crc_checked, 0);
	ck_assert_int_eq(parload_check_views(&ds, VERIFY, path, &err),
			 PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 3);
	ck_assert_uint_eq(err.offset, tu_payload_off(TU_CRC_PS, 3));
	ck_assert_ptr_nonnull(strstr(err.message, "payload CRC-32C is 0x"));
	ck_assert_ptr_null(ds.bad_views);
	ck_assert_int_eq(parload_check_views(&ds, KEEP, path, &err), 0);
	tu_assert_bad_views(&ds, bad, TU_COUNT(bad), "parload_check_views");
	ck_assert_uint_eq(ds.stats.crc_checked, TU_CRC_VIEWS);
	/* Frees the list and leaves the caller's arrays alone. */
	parload_dataset_free(&ds);
	ck_assert_ptr_null(ds.bad_views);
	/* A view_index that is not the view's place. */
	tu_soa_free(&ref);
	read_for_check(path, &ref, &ds);
	ds.headers[4].view_index = 40;
	ck_assert_int_eq(parload_check_views(&ds, KEEP, path, &err),
			 PARLOAD_EVIEWINDEX);
	ck_assert_uint_eq(err.view, 4);
	ck_assert_uint_eq(err.offset, tu_view_off(TU_CRC_PS, 4));
	ck_assert_ptr_null(ds.bad_views);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A CRC needs whole payloads: the check refuses some rows with the very
 * message of a load, before it looks at a view (headers NULL). */
START_TEST(test_check_views_whole_payloads)
{
	char *path = tu_crc_stream("rows.raw", PARLOAD_FLAG_CRC32C);
	parload_loader *l = tu_config_loader(tu_parallel(2), VERIFY);
	parload_selection sel;
	parload_file_header h;
	parload_dataset ds, loaded;
	parload_error err, load_err;

	parload_selection_init(&sel);
	sel.rows.start = 1;
	sel.rows.stop = 5;
	memset(&ds, 0, sizeof(ds));
	ck_assert_int_eq(parload_read_header(path, &h, &err), 0);
	parload_desc_from_header(&ds.desc, &h);
	ck_assert_int_eq(parload_selection_resolve(&ds.desc, &sel,
						   &ds.shape, &err),
			 0);
	ck_assert_int_eq(parload_check_views(&ds, VERIFY, path, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_int_eq(tu_load(l, path, &sel, NULL,
						    &loaded, &load_err),
			 PARLOAD_ENOTSUP);
	ck_assert_str_eq(err.message, load_err.message);
	ck_assert_int_eq(parload_check_views(&ds, 0, path, &err), 0);
	ck_assert_int_eq(parload_check_views(NULL, 0, path, &err),
			 PARLOAD_EINVAL);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* The CRC of A then B from the CRCs of A and B, at every split of a few
 * buffers (lengths 0, 1, odd and past a page), against the CRC of the
 * whole: what lets a corrected load's workers check a view that several
 * of them read. */
START_TEST(test_crc32c_combine)
{
	static const size_t lens[] = { 0, 1, 7, 64, 1000, 5000 };
	unsigned char buf[5000];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t cut = 0; cut <= lens[l]; cut += 1 + cut / 3) {
			const uint32_t a = parload_crc32c(0, buf, cut);
			const uint32_t b = parload_crc32c(0, buf + cut,
							  lens[l] - cut);

			ck_assert_uint_eq(parload__crc32c_combine(a, b,
								  lens[l] -
									  cut),
					  parload_crc32c(0, buf, lens[l]));
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("crc");
	TCase *t = tu_tcase(s, "crc", 60);

	tu_add_matrix_test(t, test_crc_good_files);
	tu_add_matrix_test(t, test_one_flipped_byte_fails);
	tu_add_matrix_test(t, test_crc_keep_going_lists_every_bad_view);
	tcase_add_test(t, test_crc_lowest_bad_view_reported);
	tcase_add_loop_test(t, test_crc_split_views, 0, 6);
	tu_add_matrix_test(t, test_keep_going_load_into);
	tcase_add_test(t, test_crc_stream);
	tcase_add_test(t, test_check_views_public);
	tcase_add_test(t, test_check_views_whole_payloads);
	tcase_add_test(t, test_crc32c_combine);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
