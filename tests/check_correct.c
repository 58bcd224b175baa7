/*
 * check_correct.c - flat- and dark-field correction done by the workers
 * (parload_request.correct), against a float64 reference the test
 * computes itself from the formulas of parload.h: scans of several pixel
 * types and byte orders (raw layouts written by tests/layouts.c), flats
 * and darks in memory and as files, mean and median of odd and even
 * counts, with and without -log, selections in both layouts, 1 to 3
 * threads, batches; then what a corrected load refuses.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layouts.h"
#include "testutil.h"

/* Pixel i of n of type t, in the host's order, as double. */
static double value(const unsigned char *p, int t, uint64_t i)
{
	switch (t) {
	case PARLOAD_PIXEL_U8: return p[i];
	case PARLOAD_PIXEL_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
	case PARLOAD_PIXEL_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
	case PARLOAD_PIXEL_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
	default: { double v; memcpy(&v, p + 8 * i, 8); return v; }
	}
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The test's own reduction of n frames at pixel i (frames of px). */
static double reduced(const float *frames, uint64_t n, uint64_t px,
		      uint64_t i, int median)
{
	double v[8], sum = 0;

	ck_assert_uint_le(n, 8);
	for (uint64_t j = 0; j < n; j++)
		sum += v[j] = frames[j * px + i];
	if (!median)
		return sum / (double)n;
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The formulas of parload.h in double. */
static double corrected(double p, const double *d, const double *f,
			bool minus_log)
{
	double x = p - (d ? *d : 0);

	if (f) {
		double den = *f - (d ? *d : 0);

		x /= den < 1e-6 ? 1e-6 : den;
	}
	if (minus_log)
		x = -log(x < 1e-6 ? 1e-6 : x);
	return x;
}

/* Reference frames: n frames of w x h floats, values around base. */
static float *frames_of(uint64_t n, uint32_t w, uint32_t h, double base,
			uint64_t *seed)
{
	float *f = malloc(n * w * h * sizeof(*f));

	ck_assert_ptr_nonnull(f);
	for (uint64_t i = 0; i < n * w * h; i++)
		f[i] = (float)(base * (0.5 + (double)lt_below(seed, 1000) /
						 1000.0));
	return f;
}

/* Write frames as a raw f32 file; its layout in *d. */
static char *frames_file(const float *f, uint64_t n, uint32_t w, uint32_t h,
			 const char *name, parload_desc *d)
{
	char *path = tu_path(name), spec[96];
	parload_error err;

	tu_write_file(path, f, n * w * h * sizeof(*f));
	snprintf(spec, sizeof(spec), "width=%" PRIu32 ",height=%" PRIu32
		 ",type=f32", w, h);
	ck_assert_int_eq(parload_desc_parse(spec, d, &err), 0);
	return path;
}

typedef struct corr_case {
	int type, enc;
	uint32_t w;
	int refs;     /* bit 0: darks, bit 1: flats */
	int median;
	uint64_t nref;
	bool minus_log;
	bool files;   /* references as files, else in memory */
	int layout;
	unsigned threads;
	unsigned bin; /* 0 or 1: none */
} corr_case;

/* Binning's reference: the mean of the N x N raw pixels of output pixel
 * (view kk, row rr, col cc) of a selection of n views, rows x cols
 * unbinned pixels as lt_expect lays them out. */
static double binned_scan(const unsigned char *want, int type, int layout,
			  uint64_t n, uint64_t rows, uint64_t cols, uint64_t kk,
			  uint64_t rr, uint64_t cc, unsigned bin)
{
	double sum = 0;

	for (unsigned a = 0; a < bin; a++)
		for (unsigned b = 0; b < bin; b++) {
			const uint64_t r = rr * bin + a, c = cc * bin + b;
			const uint64_t i = layout == PARLOAD_LAYOUT_VIEWS ?
						   (kk * rows + r) * cols + c :
						   (r * n + kk) * cols + c;

			sum += value(want, type, i);
		}
	return sum / (bin * bin);
}

/* ... and of reference frames: each frame (w wide, px pixels) binned at
 * file pixel (row, col), then reduced. */
static double binned_ref(const float *frames, uint64_t nref, uint32_t w,
			 uint64_t px, uint64_t row, uint64_t col, unsigned bin,
			 int median)
{
	float one[8];

	ck_assert_uint_le(nref, 8);
	for (uint64_t j = 0; j < nref; j++) {
		double sum = 0;

		for (unsigned a = 0; a < bin; a++)
			for (unsigned b = 0; b < bin; b++)
				sum += frames[j * px + (row + a) * w + col + b];
		one[j] = (float)(sum / (bin * bin));
	}
	return reduced(one, nref, 1, 0, median);
}

/* One corrected load of case k, checked value by value. */
static void run_case(const corr_case *k, uint64_t seed)
{
	const uint32_t h = 6;
	parload_loader *l = tu_loader(k->threads, 0, 0);
	parload_refs darks, flats;
	parload_correction corr;
	parload_selection sel;
	parload_request r;
	parload_dataset ds;
	parload_error err;
	parload_desc fd, dd;
	unsigned char *want;
	uint64_t wbytes, hbytes, n, px = (uint64_t)k->w * h, bad = 0;
	const unsigned bin = k->bin > 1 ? k->bin : 1;
	unsigned char *whdr;
	float *df = NULL, *ff = NULL;
	char *dpath = NULL, *fpath = NULL;
	lt_stream s;
	lt_sel q;

	lt_layout(&s, k->w, h, k->type, k->enc, 16, 4, 2, 7);
	s.seed = seed;
	lt_write(&s, "scan");
	lt_sel_all(&s, &q);
	q.v0 = 1, q.v1 = 7, q.vstep = 2;
	q.r0 = 1, q.r1 = 5;
	q.c0 = 3, q.c1 = k->w - 1;
	q.layout = k->layout;
	memset(&corr, 0, sizeof(corr));
	corr.reduce = k->median ? PARLOAD_REDUCE_MEDIAN : PARLOAD_REDUCE_MEAN;
	corr.flags = k->minus_log ? PARLOAD_CORR_MINUS_LOG : 0;
	corr.bin = k->bin;
	memset(&darks, 0, sizeof(darks));
	memset(&flats, 0, sizeof(flats));
	parload_source_init(&darks.source);
	parload_source_init(&flats.source);
	if (k->refs & 1) {
		df = frames_of(k->nref, k->w, h, 100.0, &seed);
		darks.frames = df, darks.count = k->nref;
		if (k->files) {
			dpath = frames_file(df, k->nref, k->w, h, "darks", &dd);
			darks.source.path = dpath, darks.source.desc = &dd;
		}
		corr.darks = &darks;
	}
	if (k->refs & 2) {
		ff = frames_of(k->nref, k->w, h, 5000.0, &seed);
		flats.frames = ff, flats.count = k->nref;
		if (k->files) {
			fpath = frames_file(ff, k->nref, k->w, h, "flats", &fd);
			flats.source.path = fpath, flats.source.desc = &fd;
		}
		corr.flats = &flats;
	}
	lt_request(&s, &r);
	lt_sel_to(&q, &sel);
	r.selection = &sel;
	r.correct = &corr;
	ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
		      err.message);
	lt_expect(&s, &q, &want, &whdr, &wbytes, &hbytes);
	n = lt_sel_views(&q);
	ck_assert_int_eq(ds.shape.pixel_type, PARLOAD_PIXEL_F32);
	ck_assert_uint_eq(ds.shape.bytes_per_pixel, 4);
	/* Whole bins only: what does not fill one is dropped. */
	ck_assert_uint_eq(ds.shape.bin, bin);
	ck_assert_uint_eq(ds.shape.rows, (q.r1 - q.r0) / bin);
	ck_assert_uint_eq(ds.shape.cols, (q.c1 - q.c0) / bin);
	ck_assert_uint_eq(ds.shape.view_bytes,
			  (uint64_t)ds.shape.rows * ds.shape.cols * 4);
	for (uint64_t i = 0; i < n * ds.shape.rows * ds.shape.cols; i++) {
		const uint64_t cols = ds.shape.cols, rows = ds.shape.rows;
		const uint64_t rr = k->layout == PARLOAD_LAYOUT_VIEWS ?
					    i / cols % rows : i / (n * cols);
		const uint64_t kk = k->layout == PARLOAD_LAYOUT_VIEWS ?
					    i / (cols * rows) : i / cols % n;
		const uint64_t row = q.r0 + rr * bin, col = q.c0 + i % cols * bin;
		double d = df ? binned_ref(df, k->nref, k->w, px, row, col, bin,
					   k->median) : 0;
		double f = ff ? binned_ref(ff, k->nref, k->w, px, row, col, bin,
					   k->median) : 0;
		double x = corrected(binned_scan(want, k->type, k->layout, n,
						 q.r1 - q.r0, q.c1 - q.c0, kk, rr,
						 i % cols, bin),
				     df ? &d : NULL, ff ? &f : NULL,
				     k->minus_log);
		double got = ((const float *)ds.pixels)[i];

		if (fabs(got - x) > 1e-5 * fabs(x) + 1e-6 && bad++ < 3)
			fprintf(stderr, "pixel %" PRIu64 ": %.9g, want %.9g\n",
				i, got, x);
	}
	ck_assert_msg(bad == 0, "%" PRIu64 " pixels differ (type %d enc %d "
		      "refs %d median %d n %" PRIu64 " log %d files %d "
		      "layout %d bin %u threads %u)", bad, k->type, k->enc,
		      k->refs, k->median, k->nref, k->minus_log, k->files,
		      k->layout, bin, k->threads);
	parload_dataset_free(&ds);
	free(want);
	free(whdr);
	free(df);
	free(ff);
	free(dpath);
	free(fpath);
	lt_free(&s);
	parload_loader_free(l);
}

static const struct {
	int type, enc;
	uint32_t w;
} scans[] = {
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 12 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 12 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P, 14 },
	{ PARLOAD_PIXEL_I16, PARLOAD_ENC_LE, 12 },
	{ PARLOAD_PIXEL_F32, PARLOAD_ENC_BE, 12 },
	{ PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, 12 },
};
#define N_SCANS ((int)(sizeof(scans) / sizeof(scans[0])))

/* Every scan type with every combination of references, reductions,
 * counts, -log, references in memory or in files, both layouts. */
START_TEST(test_corrections_match_the_formulas)
{
	uint64_t seed = 1000 + (uint64_t)_i;

	for (int refs = 0; refs < 4; refs++)
		for (int m = 0; m < 2; m++) {
			corr_case k = {
				.type = scans[_i].type,
				.enc = scans[_i].enc,
				.w = scans[_i].w,
				.refs = refs,
				.median = m,
				.nref = 1 + lt_below(&seed, 4),
				.minus_log = lt_below(&seed, 2),
				.files = lt_below(&seed, 2),
				.layout = (int)lt_below(&seed, 2),
				.threads = 1 + (unsigned)lt_below(&seed, 3),
			};

			run_case(&k, seed);
		}
}
END_TEST

/* Binning by 2, 3 and 4 (a selection of 4 x 8 or 10 pixels: partial bins
 * dropped), each scan type, both layouts, mean and median, 1-3 threads. */
START_TEST(test_binning_matches_the_formulas)
{
	uint64_t seed = 2000 + (uint64_t)_i;

	for (unsigned bin = 2; bin <= 4; bin++)
		for (int layout = 0; layout < 2; layout++) {
			corr_case k = {
				.type = scans[_i].type,
				.enc = scans[_i].enc,
				.w = scans[_i].w,
				.refs = (int)lt_below(&seed, 4),
				.median = (int)lt_below(&seed, 2),
				.nref = 1 + lt_below(&seed, 4),
				.minus_log = lt_below(&seed, 2),
				.files = lt_below(&seed, 2),
				.layout = layout,
				.threads = 1 + (unsigned)lt_below(&seed, 3),
				.bin = bin,
			};

			run_case(&k, seed);
		}
}
END_TEST

/* corr: -log after darks of count frames of px pixels each, held in dark
 * and filled with i % mod. */
static void minus_log_by_darks(parload_correction *corr, parload_refs *darks,
			       float *dark, uint64_t count, size_t px,
			       unsigned mod)
{
	for (size_t i = 0; i < count * px; i++)
		dark[i] = (float)(i % mod);
	memset(darks, 0, sizeof(*darks));
	parload_source_init(&darks->source);
	darks->frames = dark, darks->count = count;
	memset(corr, 0, sizeof(*corr));
	corr->darks = darks;
	corr->flags = PARLOAD_CORR_MINUS_LOG;
}

static int keep_nothing(const parload_batch *b, void *arg)
{
	(void)b;
	(void)arg;
	return 0;
}

/* A corrected load delivered in batches: the same floats as at once. */
static int keep_batch(const parload_batch *b, void *arg)
{
	unsigned char *to = arg;

	memcpy(to + b->first * b->view_bytes, b->pixels,
	       b->count * b->view_bytes);
	return 0;
}

START_TEST(test_batches_are_corrected)
{
	parload_loader *l = tu_loader(2, 0, 0);
	char *path = tu_path("b.raw");
	float dark[4 * 8 * 16];
	parload_refs darks;
	parload_correction corr;
	parload_request r;
	parload_dataset a, b;
	parload_error err;
	unsigned char *got;

	tu_write_stream(path, 9, 16, 8, PARLOAD_PIXEL_U16, 0, 3);
	minus_log_by_darks(&corr, &darks, dark, 4, 16 * 8, 97);
	parload_request_init(&r);
	r.source.path = path;
	r.correct = &corr;
	ck_assert_int_eq(parload_loader_run(l, &r, &a, &err), 0);
	got = calloc(1, a.shape.views * a.shape.view_bytes);
	r.on_batch = keep_batch;
	r.batch_arg = got;
	r.batch_views = 2;
	ck_assert_int_eq(parload_loader_run(l, &r, &b, &err), 0);
	ck_assert_int_eq(memcmp(got, a.pixels, a.shape.views *
						      a.shape.view_bytes),
			 0);
	parload_dataset_free(&a);
	parload_dataset_free(&b);
	free(got);
	free(path);
	parload_loader_free(l);
}
END_TEST

/* NaN in a flat propagates; zero and negative values clamp under -log. */
START_TEST(test_nan_propagates_and_log_clamps)
{
	parload_loader *l = tu_loader(1, 0, 0);
	float flat[2 * 3], dark[2 * 3];
	unsigned char pix[2 * 3 * 2];
	char *path = tu_path("n.raw");
	parload_refs flats, darks;
	parload_correction corr;
	parload_desc d;
	parload_request r;
	parload_dataset ds;
	parload_error err;
	const float *o;

	/* One view of 3 x 2 u16: 10, 20, 30, 40, 50, 60. */
	for (int i = 0; i < 6; i++) {
		uint16_t v = (uint16_t)(10 * (i + 1));

		memcpy(pix + 2 * i, &v, 2);
		flat[i] = 100.0f;
		dark[i] = 0.0f;
	}
	flat[1] = NAN;
	dark[2] = 500.0f; /* P - D < 0: clamps to 1e-6 before the log */
	tu_write_file(path, pix, sizeof(pix));
	ck_assert_int_eq(parload_desc_parse("width=3,height=2,type=u16", &d,
					    &err), 0);
	memset(&flats, 0, sizeof(flats));
	memset(&darks, 0, sizeof(darks));
	parload_source_init(&flats.source);
	parload_source_init(&darks.source);
	flats.frames = flat, flats.count = 1;
	darks.frames = dark, darks.count = 1;
	memset(&corr, 0, sizeof(corr));
	corr.flats = &flats;
	corr.darks = &darks;
	corr.flags = PARLOAD_CORR_MINUS_LOG;
	parload_request_init(&r);
	r.source.path = path;
	r.source.desc = &d;
	r.correct = &corr;
	ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err), 0);
	o = ds.pixels;
	ck_assert_msg(fabsf(o[0] - (float)-log(0.1)) < 1e-6f, "%g", o[0]);
	ck_assert_msg(isnan(o[1]), "a NaN flat gives NaN: %g", o[1]);
	ck_assert_msg(fabsf(o[2] - (float)-log(1e-6)) < 1e-4f, "%g", o[2]);
	parload_dataset_free(&ds);
	free(path);
	parload_loader_free(l);
}
END_TEST

/* CRC verification of a corrected load: each payload's CRC-32C is of the
 * raw rows, taken as the workers read them, before the correction, and
 * joined where workers share a view.  16 views of 24 x 8 u16 with CRCs,
 * 1 to 3 threads, both layouts, binned by 2 or not, in batches or not:
 * every view checked; one byte flipped in views 5 and 11 fails the load
 * naming view 5 (or, with keep-going, lists both); a bin that drops rows
 * cannot be verified. */
START_TEST(test_crc_of_the_raw_rows)
{
	const unsigned threads = 1 + (unsigned)(_i % 3);
	const int layout = _i / 3 % 2 ? PARLOAD_LAYOUT_SINOGRAMS :
					PARLOAD_LAYOUT_VIEWS;
	char *path = tu_path("crc.raw");
	float dark[24 * 8];
	parload_refs darks;
	parload_correction corr;
	parload_selection sel;
	parload_request r;
	parload_dataset ds;
	parload_error err;
	parload_loader *v, *kg;

	tu_write_stream(path, 16, 24, 8, PARLOAD_PIXEL_U16, 1, 7);
	minus_log_by_darks(&corr, &darks, dark, 1, 24 * 8, 13);
	parload_selection_init(&sel);
	sel.layout = (parload_layout)layout;
	parload_request_init(&r);
	r.source.path = path;
	r.selection = &sel;
	r.correct = &corr;
	v = tu_loader(threads, 0, PARLOAD_OPT_VERIFY_CRC);
	kg = tu_loader(threads, 0, PARLOAD_OPT_VERIFY_CRC |
					   PARLOAD_OPT_KEEP_GOING);
	for (unsigned bin = 1; bin <= 2; bin++)
		for (uint64_t batch = 0; batch <= 3; batch += 3) {
			corr.bin = bin;
			r.batch_views = batch;
			r.on_batch = batch && layout == PARLOAD_LAYOUT_VIEWS ?
					     keep_nothing :
					     NULL;
			ck_assert_msg(parload_loader_run(v, &r, &ds, &err) == 0,
				      "%s", err.message);
			ck_assert_uint_eq(ds.stats.crc_checked, 16);
			parload_dataset_free(&ds);
		}
	corr.bin = 3; /* 8 rows: bins drop two */
	ck_assert_int_eq(parload_loader_run(v, &r, &ds, &err), PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "CRC-32C"));
	corr.bin = 1;
	r.on_batch = NULL;
	tu_flip(path, 64 + 5 * (32 + 24 * 8 * 2) + 32 + 100);
	tu_flip(path, 64 + 11 * (32 + 24 * 8 * 2) + 32 + 3);
	ck_assert_int_eq(parload_loader_run(v, &r, &ds, &err), PARLOAD_ECRC);
	ck_assert_uint_eq(err.view, 5);
	ck_assert_uint_eq(err.offset, 64 + 5 * (32 + 24 * 8 * 2) + 32);
	tu_assert_empty(&ds, "a bad CRC");
	ck_assert_int_eq(parload_loader_run(kg, &r, &ds, &err), 0);
	ck_assert_uint_eq(ds.bad_view_count, 2);
	ck_assert_uint_eq(ds.bad_views[0], 5);
	ck_assert_uint_eq(ds.bad_views[1], 11);
	parload_dataset_free(&ds);
	parload_loader_free(v);
	parload_loader_free(kg);
	free(path);
}
END_TEST

/* What a corrected load refuses, before it reads the scan. */
START_TEST(test_refusals)
{
	parload_selection part;
	parload_loader *l = tu_loader(2, 0, 0), *bulk = tu_loader(1, 1, 0);
	parload_loader *vl;
	char *path = tu_path("r.raw"), *other = tu_path("o.raw");
	float frame[16 * 8];
	parload_refs refs, empty, small;
	parload_correction corr;
	parload_request r;
	parload_dataset ds;
	parload_error err;
	parload_options o;
	parload_desc sd;

	memset(frame, 0, sizeof(frame));
	tu_write_stream(path, 4, 16, 8, PARLOAD_PIXEL_U16, PARLOAD_FLAG_CRC32C,
			5);
	tu_write_file(other, frame, 8 * 8 * sizeof(float));
	ck_assert_int_eq(parload_desc_parse("width=8,height=8,type=f32", &sd,
					    &err), 0);
	memset(&refs, 0, sizeof(refs));
	parload_source_init(&refs.source);
	refs.frames = frame, refs.count = 1;
	empty = refs;
	empty.count = 0;
	small = refs;
	small.source.path = other, small.source.desc = &sd;
	memset(&corr, 0, sizeof(corr));
	parload_request_init(&r);
	r.source.path = path;
	r.correct = &corr;

	corr.darks = &small; /* 8 x 8 frames for 16 x 8 views */
	ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err), PARLOAD_EINVAL);
	ck_assert_msg(strstr(err.message, other) == err.message &&
			      strstr(err.message, "8 x 8") &&
			      strstr(err.message, "16 x 8"),
		      "%s", err.message);
	tu_assert_empty(&ds, "other shape");
	/* A reference source with no frames: the message names it, not
	 * the scan, whatever it is (a raw file, parload's own format, a
	 * descriptor named or not). */
	{
		char *none = tu_path("none.raw"), *zero = tu_path("zero.raw");
		parload_desc nd;
		parload_refs nothing;
		char fdname[32];
		int fd;

		tu_write_file(none, "", 0);
		tu_write_stream(zero, 0, 16, 8, PARLOAD_PIXEL_U16, 0, 5);
		ck_assert_int_eq(parload_desc_parse("width=16,height=8,"
						    "type=f32", &nd, &err), 0);
		memset(&nothing, 0, sizeof(nothing));
		parload_source_init(&nothing.source);
		nothing.source.path = none, nothing.source.desc = &nd;
		corr.darks = NULL;
		corr.flats = &nothing;
		ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(err.message, none) == err.message &&
				      strstr(err.message, ": the flat source "
							  "holds no frames"),
			      "%s", err.message);
		tu_assert_empty(&ds, "no flat frames");
		nothing.source.path = zero, nothing.source.desc = NULL;
		ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(err.message, zero) == err.message &&
				      strstr(err.message, "no frames"),
			      "%s", err.message);
		fd = open(zero, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		nothing.source.path = NULL, nothing.source.fd = fd;
		corr.flats = NULL;
		corr.darks = &nothing;
		snprintf(fdname, sizeof(fdname), "fd %d: the dark source", fd);
		ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(err.message, fdname) == err.message,
			      "%s", err.message);
		nothing.source.name = "darks stream";
		ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(err.message, "darks stream: the dark "
						  "source holds no frames") ==
				      err.message,
			      "%s", err.message);
		close(fd);
		corr.flats = NULL;
		free(none);
		free(zero);
	}
	corr.darks = &empty;
	ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err), PARLOAD_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "no dark frames"));
	corr.darks = &refs;
	corr.bin = 9; /* 8 rows */
	ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err),
			 PARLOAD_ESELECT);
	ck_assert_ptr_nonnull(strstr(err.message, "9 x 9 bin is larger"));
	tu_assert_empty(&ds, "bin too large");
	corr.bin = 1;
	ck_assert_int_eq(parload_loader_run(bulk, &r, &ds, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "parallel strategy"));
	/* A corrected load verifies CRCs as any load does: of whole
	 * payloads only (test_crc_of_the_raw_rows has the rest). */
	parload_options_init(&o);
	o.flags |= PARLOAD_OPT_VERIFY_CRC;
	ck_assert_int_eq(parload_loader_new(&vl, &o, &err), 0);
	parload_selection_init(&part);
	part.rows.stop = 2;
	r.selection = &part;
	ck_assert_int_eq(parload_loader_run(vl, &r, &ds, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "CRC-32C covers all"));
	tu_assert_empty(&ds, "verify");
	parload_loader_free(vl);
	parload_loader_free(bulk);
	parload_loader_free(l);
	free(path);
	free(other);
}
END_TEST

/* The request's on_wait (and cancel) stop the loads of a correction's
 * references as they stop the scan's: on_wait is given turns while the
 * flats are read from their file, and a stop at the first ends the load
 * there, naming the flats' file; an on_wait that goes on is given turns
 * in both loads, and the floats are those of a load without it. */
static int turn(void *arg)
{
	unsigned *calls = arg;

	return ++*calls == 1 && calls[1];
}

START_TEST(test_on_wait_reaches_the_references)
{
	parload_loader *l = tu_loader(2, 0, 0);
	char *path = tu_path("w.raw"), *fpath;
	parload_refs flats;
	parload_correction corr;
	parload_request r;
	parload_dataset a, b;
	parload_error err;
	parload_desc fd;
	uint64_t seed = 7;
	unsigned calls[2] = { 0, 1 }; /* calls, stop at the first */
	float *ff;

	tu_write_stream(path, 6, 16, 8, PARLOAD_PIXEL_U16, 0, 3);
	ff = frames_of(3, 16, 8, 5000.0, &seed);
	fpath = frames_file(ff, 3, 16, 8, "wflats", &fd);
	memset(&flats, 0, sizeof(flats));
	parload_source_init(&flats.source);
	flats.source.path = fpath, flats.source.desc = &fd;
	memset(&corr, 0, sizeof(corr));
	corr.flats = &flats;
	parload_request_init(&r);
	r.source.path = path;
	r.correct = &corr;
	ck_assert_int_eq(parload_loader_run(l, &r, &a, &err), 0);
	r.on_wait = turn;
	r.wait_arg = calls;
	ck_assert_int_eq(parload_loader_run(l, &r, &b, &err),
			 PARLOAD_ECANCELED);
	ck_assert_msg(strstr(err.message, fpath), "%s", err.message);
	ck_assert_uint_eq(calls[0], 1);
	tu_assert_empty(&b, "stopped");
	calls[0] = calls[1] = 0;
	ck_assert_int_eq(parload_loader_run(l, &r, &b, &err), 0);
	ck_assert_uint_ge(calls[0], 2);
	ck_assert_int_eq(memcmp(a.pixels, b.pixels,
				a.shape.views * a.shape.view_bytes),
			 0);
	parload_dataset_free(&a);
	parload_dataset_free(&b);
	free(ff);
	free(fpath);
	free(path);
	parload_loader_free(l);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("correct");
	TCase *t = tu_tcase(s, "formulas", 120);

	tcase_add_loop_test(t, test_corrections_match_the_formulas, 0,
			    N_SCANS);
	tcase_add_loop_test(t, test_binning_matches_the_formulas, 0, N_SCANS);
	tcase_add_test(t, test_batches_are_corrected);
	tcase_add_loop_test(t, test_crc_of_the_raw_rows, 0, 6);
	tcase_add_test(t, test_nan_propagates_and_log_clamps);
	tcase_add_test(t, test_on_wait_reaches_the_references);
	t = tu_tcase(s, "refusals", 0);
	tcase_add_test(t, test_refusals);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
