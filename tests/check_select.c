/*
 * check_select.c - partial and reshaped loads through the library: every
 * selection equals the whole file, read serially by the test
 * (tu_serial_read), sliced and transposed by the test itself; for every
 * pixel type, both layouts, odd sizes, 1 to 4 threads, the loader's own
 * memory and the caller's, multi-node topologies (HWLOC_SYNTHETIC); and
 * what a selection cannot do fails before anything is read.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(uint64_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return n ? (rng >> 17) % n : 0;
}

/* Check ds, a load of sel, against the serial reading ref. */
static void assert_selection(const parload_dataset *ds, const tu_soa *ref,
			     const parload_file_header *h)
{
	const parload_shape *s = &ds->shape;
	const uint64_t bpp = h->bytes_per_pixel, take = s->cols * bpp;
	const unsigned char *pix = ds->pixels;

	for (uint64_t k = 0; k < s->views; k++) {
		const uint64_t v = parload_shape_view(s, k);
		const unsigned char *rec = ref->pixels + v * ref->payload_size;

		ck_assert_int_eq(memcmp(&ds->headers[k], ref->headers + v * 32,
					32), 0);
		ck_assert_uint_eq(ds->headers[k].view_index, v);
		for (uint64_t r = 0; r < s->rows; r++) {
			const unsigned char *want =
				rec + ((s->row_start + r) * h->width +
				       s->col_start) * bpp;
			uint64_t at = s->layout == PARLOAD_LAYOUT_VIEWS ?
					      (k * s->rows + r) * take :
					      (r * s->views + k) * take;

			if (memcmp(pix + at, want, take) != 0)
				ck_abort_msg("view %llu (file %llu) row %llu "
					     "differs",
					     (unsigned long long)k,
					     (unsigned long long)v,
					     (unsigned long long)r);
		}
	}
}

static parload_selection random_selection(const parload_file_header *h)
{
	parload_selection sel;
	const uint64_t V = h->view_count, H = h->height, W = h->width;
	uint64_t a;

	parload_selection_init(&sel);
	if (next(4)) {
		a = next(V);
		sel.views.start = (int64_t)a;
		sel.views.stop = (int64_t)(a + 1 + next(V - a));
		sel.views.step = (int64_t)(1 + next(5));
	}
	if (next(3)) {
		a = next(H);
		sel.rows.start = (int64_t)a;
		sel.rows.stop = (int64_t)(a + 1 + next(H - a));
	}
	if (next(3)) {
		a = next(W);
		sel.cols.start = (int64_t)a;
		sel.cols.stop = (int64_t)(a + 1 + next(W - a));
	}
	sel.layout = next(2) ? PARLOAD_LAYOUT_SINOGRAMS : PARLOAD_LAYOUT_VIEWS;
	return sel;
}

static void load_and_compare(const char *path, const tu_soa *ref,
			     const parload_selection *sel, unsigned threads,
			     bool into)
{
	parload_options o;
	parload_loader *l;
	parload_dataset ds;
	parload_buffers b;
	parload_error err;
	parload_file_header h;

	parload_options_init(&o);
	o.threads = threads;
	ck_assert_int_eq(parload_read_header(path, &h, &err), 0);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	if (into)
		ck_assert_int_eq(tu_buffers_alloc(&b, &h, sel, 0,
							      &err), 0);
	ck_assert_msg(tu_load(l, path, sel, into ? &b : NULL,
						 &ds, &err) == 0,
		      "%s", err.message);
	assert_selection(&ds, ref, &h);
	ck_assert_uint_eq(ds.stats.threads, parload_loader_threads(l));
	parload_dataset_free(&ds);
	if (into)
		parload_buffers_free(&b);
	parload_loader_free(l);
}

/* Random selections of files of every pixel type and odd shapes. */
START_TEST(test_random_selections)
{
	static const struct {
		uint64_t views;
		uint32_t w, h;
		int type;
	} shapes[] = {
		{ 37, 13, 7, PARLOAD_PIXEL_U8 },   { 5, 64, 33, PARLOAD_PIXEL_U16 },
		{ 1, 9, 1, PARLOAD_PIXEL_I16 },    { 11, 1, 40, PARLOAD_PIXEL_U32 },
		{ 3, 700, 12, PARLOAD_PIXEL_I32 }, { 7, 31, 5, PARLOAD_PIXEL_F32 },
		{ 2, 17, 3, PARLOAD_PIXEL_F64 },   { 300, 4, 2, PARLOAD_PIXEL_U8 },
	};
	const int i = _i;
	char name[32];
	char *path;
	tu_soa ref;

	snprintf(name, sizeof(name), "sel%d.raw", i);
	path = tu_path(name);
	tu_write_stream(path, shapes[i].views, shapes[i].w, shapes[i].h,
			shapes[i].type, 0, 40 + (uint64_t)i);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (int t = 0; t < 12; t++) {
		parload_file_header h;
		parload_selection sel;

		ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
		sel = random_selection(&h);
		load_and_compare(path, &ref, &sel, 1 + (unsigned)(t % 4),
				 t % 3 == 0);
	}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A view larger than a worker's share, split between workers, in both
 * layouts; and more workers than rows. */
START_TEST(test_large_views_and_few_rows)
{
	char *path = tu_path("big.raw");
	parload_selection sel;
	tu_soa ref;

	tu_write_stream(path, 2, 1500, 700, PARLOAD_PIXEL_U16, 0, 5);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_selection_init(&sel);
	for (int layout = 0; layout < 2; layout++) {
		sel.layout = (parload_layout)layout;
		sel.rows.start = PARLOAD_OMIT;
		sel.rows.stop = PARLOAD_OMIT;
		load_and_compare(path, &ref, &sel, 4, false);
		sel.rows.start = 3;
		sel.rows.stop = 5; /* two rows, four workers */
		load_and_compare(path, &ref, &sel, 4, false);
		sel.cols.start = 100;
		sel.cols.stop = 1400;
		load_and_compare(path, &ref, &sel, 3, true);
	}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* The default selection is byte for byte today's whole load. */
START_TEST(test_default_is_whole_file)
{
	char *path = tu_path("whole.raw");
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	tu_write_stream(path, 20, 8, 8, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(parload_load(path, NULL, &ds), 0);
	tu_assert_same(&ds, &ref);
	ck_assert_uint_eq(ds.shape.views, 20);
	ck_assert_uint_eq(ds.shape.rows, 8);
	ck_assert_uint_eq(ds.shape.cols, 8);
	ck_assert_uint_eq(ds.shape.view_bytes, ds.desc.payload_size);
	ck_assert_int_eq(ds.shape.layout, PARLOAD_LAYOUT_VIEWS);
	(void)err;
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Only the selected bytes are read: a row band reads its rows and the
 * headers of its views. */
START_TEST(test_reads_only_the_selection)
{
	char *path = tu_path("band.raw");
	parload_options o;
	parload_dataset ds;
	parload_error err;
	parload_selection sel;

	tu_write_stream(path, 50, 100, 64, PARLOAD_PIXEL_U16, 0, 3);
	parload_options_init(&o);
	o.error = &err;
	o.threads = 2;
	parload_selection_init(&sel);
	sel.rows.start = 8;
	sel.rows.stop = 16;
	sel.views.step = 2;
	o.selection = sel;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	/* 25 views x (8 rows x 200 bytes + a 32-byte header) + the file
	 * header. */
	ck_assert_uint_eq(ds.stats.bytes_read, 64 + 25 * (8 * 200 + 32));
	ck_assert_uint_eq(ds.shape.views, 25);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* Invalid selections name the bad part and allocate nothing. */
START_TEST(test_invalid_selections)
{
	static const struct {
		const char *views, *rows, *cols;
		const char *msg;
	} cases[] = {
		{ "5:5", NULL, NULL, "select nothing" },
		{ "0:11", NULL, NULL, "reach outside" },
		{ "::0", NULL, NULL, "step" },
		{ "::-1", NULL, NULL, "step" },
		{ NULL, "0:9", NULL, "rows" },
		{ NULL, NULL, "-9:", "columns" },
		{ "-11:", NULL, NULL, "views" },
	};
	char *path = tu_path("bad.raw");
	parload_dataset ds, zero;
	parload_error err;
	parload_loader *l;

	memset(&zero, 0, sizeof(zero));
	tu_write_stream(path, 10, 8, 8, PARLOAD_PIXEL_U8, 0, 1);
	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parload_selection sel;

		parload_selection_init(&sel);
		if (cases[i].views)
			ck_assert_int_eq(parload_slice_parse(cases[i].views, 1,
							     &sel.views, &err),
					 0);
		if (cases[i].rows)
			ck_assert_int_eq(parload_slice_parse(cases[i].rows, 0,
							     &sel.rows, &err),
					 0);
		if (cases[i].cols)
			ck_assert_int_eq(parload_slice_parse(cases[i].cols, 0,
							     &sel.cols, &err),
					 0);
		ck_assert_int_eq(tu_load(l, path, &sel, NULL,
							    &ds, &err),
				 PARLOAD_ESELECT);
		ck_assert_msg(strstr(err.message, cases[i].msg) &&
				      strstr(err.message, path),
			      "case %zu: %s", i, err.message);
		ck_assert_int_eq(memcmp(&ds, &zero, sizeof(ds)), 0);
	}
	/* Rows and columns take no step. */
	ck_assert_int_eq(parload_slice_parse("1:2:3", 0,
					     &(parload_slice){ 0, 0, 0 }, &err),
			 PARLOAD_ESELECT);
	ck_assert_int_eq(parload_slice_parse("a:b", 1,
					     &(parload_slice){ 0, 0, 0 }, &err),
			 PARLOAD_ESELECT);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* The article's strategies load whole files only, and say so. */
START_TEST(test_strategies_without_selections)
{
	char *path = tu_path("strat.raw");
	parload_options o;
	parload_dataset ds;
	parload_error err;

	tu_write_stream(path, 4, 8, 8, PARLOAD_PIXEL_U8, 0, 1);
	for (int s = 1; s < PARLOAD_STRATEGY_COUNT_; s++) {
		parload_options_init(&o);
		o.strategy = (parload_strategy)s;
		o.error = &err;
		o.selection.views.step = 2;
		ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_ENOTSUP);
		ck_assert_msg(strstr(err.message, parload_strategy_name(s)),
			      "%s", err.message);
	}
	free(path);
}
END_TEST

/* CRCs: a selection of whole payloads is verified in both layouts; a
 * selection of some rows cannot be, and says so; bad views are named by
 * their index in the file. */
START_TEST(test_crc_policy)
{
	char *path = tu_path("crc.raw");
	parload_file_header h;
	parload_options o;
	parload_dataset ds;
	parload_error err;
	unsigned char junk = 0xff;

	tu_write_stream(path, 12, 16, 8, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 1);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	parload_options_init(&o);
	o.error = &err;
	o.flags = PARLOAD_OPT_VERIFY_CRC;
	o.threads = 3;
	o.selection.views.start = 1;
	o.selection.views.step = 3; /* views 1, 4, 7, 10 */
	for (int layout = 0; layout < 2; layout++) {
		o.selection.layout = (parload_layout)layout;
		ck_assert_msg(parload_load(path, &o, &ds) == 0, "%s",
			      err.message);
		ck_assert_uint_eq(ds.stats.crc_checked, 4);
		parload_dataset_free(&ds);
	}
	/* Damage view 7's payload, and view 8's, which is not selected. */
	tu_patch(path, parload_view_offset(&h, 7) + 40, &junk, 1);
	tu_patch(path, parload_view_offset(&h, 8) + 40, &junk, 1);
	for (int layout = 0; layout < 2; layout++) {
		o.selection.layout = (parload_layout)layout;
		o.flags = PARLOAD_OPT_VERIFY_CRC;
		ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_ECRC);
		ck_assert_uint_eq(err.view, 7);
		ck_assert_uint_eq(err.offset, parload_view_offset(&h, 7) + 32);
		o.flags |= PARLOAD_OPT_KEEP_GOING;
		ck_assert_int_eq(parload_load(path, &o, &ds), 0);
		ck_assert_uint_eq(ds.bad_view_count, 1);
		ck_assert_uint_eq(ds.bad_views[0], 7);
		parload_dataset_free(&ds);
	}
	o.flags = PARLOAD_OPT_VERIFY_CRC;
	o.selection.rows.start = 2;
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_ENOTSUP);
	ck_assert_msg(strstr(err.message, "cannot be verified"), "%s",
		      err.message);
	/* Without verification the same selection loads. */
	o.flags = 0;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	ck_assert_uint_eq(ds.stats.crc_checked, 0);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* A truncated file: a selection within the complete views loads, one past
 * them says how many are complete. */
START_TEST(test_truncated_selection)
{
	char *path = tu_path("trunc.raw");
	parload_file_header h;
	parload_options o;
	parload_dataset ds;
	parload_error err;

	tu_write_stream(path, 10, 8, 4, PARLOAD_PIXEL_U8, 0, 1);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	tu_truncate(path, parload_view_offset(&h, 6) + 5);
	parload_options_init(&o);
	o.error = &err;
	o.flags = PARLOAD_OPT_ALLOW_TRUNCATED;
	o.selection.views.step = 2;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	ck_assert_uint_eq(ds.shape.views, 3); /* 0, 2, 4 of the 6 complete */
	ck_assert_uint_eq(ds.stats.declared_views, 10);
	parload_dataset_free(&ds);
	o.selection.views.stop = 9;
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "6 complete views of the 10"), "%s",
		      err.message);
	free(path);
}
END_TEST

/* Caller memory too small for the selection. */
START_TEST(test_into_too_small)
{
	char *path = tu_path("small.raw");
	parload_file_header h;
	parload_selection sel;
	parload_buffers b;
	parload_dataset ds;
	parload_error err;
	parload_loader *l;

	tu_write_stream(path, 10, 8, 4, PARLOAD_PIXEL_U8, 0, 1);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	parload_selection_init(&sel);
	sel.views.stop = 5;
	ck_assert_int_eq(tu_buffers_alloc(&b, &h, &sel, 0, &err),
			 0);
	ck_assert_uint_eq(b.pixels_size, 5 * 32);
	ck_assert_uint_eq(b.headers_size, 5 * 32);
	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	sel.views.stop = 6;
	ck_assert_int_eq(tu_load(l, path, &sel, &b, &ds,
						    &err),
			 PARLOAD_ESPACE);
	parload_buffers_free(&b);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* Selections on a two-node synthetic machine: the plan's bands and
 * binding paths, the same data. */
START_TEST(test_synthetic_numa)
{
	char *path = tu_path("numa.raw");
	parload_selection sel;
	tu_soa ref;

	setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:2 pu:1", 1);
	tu_write_stream(path, 9, 40, 30, PARLOAD_PIXEL_F32, 0, 8);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_selection_init(&sel);
	sel.rows.start = 5;
	sel.rows.stop = 25;
	for (int layout = 0; layout < 2; layout++) {
		sel.layout = (parload_layout)layout;
		load_and_compare(path, &ref, &sel, 0, false);
	}
	unsetenv("HWLOC_SYNTHETIC");
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("select");
	TCase *t = tcase_create("select");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_random_selections, 0, 8);
	tcase_add_test(t, test_large_views_and_few_rows);
	tcase_add_test(t, test_default_is_whole_file);
	tcase_add_test(t, test_reads_only_the_selection);
	tcase_add_test(t, test_invalid_selections);
	tcase_add_test(t, test_strategies_without_selections);
	tcase_add_test(t, test_crc_policy);
	tcase_add_test(t, test_truncated_selection);
	tcase_add_test(t, test_into_too_small);
	tcase_add_test(t, test_synthetic_numa);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
