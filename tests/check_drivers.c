/*
 * check_drivers.c - format drivers (src/driver.h): which driver reads a
 * source (first bytes, then the name, case-insensitively), NumPy's .npy
 * and NRRD's attached header loaded from bytes this test writes as
 * numpy.save and teem write them, what each refuses, the output format
 * from a name (one table for parload_save and `parload extract -o`),
 * --concat of TIFF files, and a format driver this test adds to the
 * table and loads through.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#include "testutil.h"

/* ---- loading ---- */

/* Load path whole; rc, with *ds and *err filled. */
static int load(const char *path, parload_dataset *ds, parload_error *err)
{
	parload_loader *l = tu_loader(2, 0, 0);
	int rc;

	memset(ds, 0, sizeof(*ds));
	memset(err, 0, sizeof(*err));
	rc = tu_load(l, path, NULL, NULL, ds, err);
	parload_loader_free(l);
	return rc;
}

/* Loading path fails with code and a message holding each of the
 * NULL-terminated texts. */
static void load_fails(const char *path, int code, ...)
{
	parload_dataset ds;
	parload_error err;
	const char *want;
	va_list ap;

	ck_assert_int_eq(load(path, &ds, &err), code);
	ck_assert_msg(strstr(err.message, path), "%s", err.message);
	va_start(ap, code);
	while ((want = va_arg(ap, const char *)) != NULL)
		ck_assert_msg(strstr(err.message, want), "'%s' not in: %s",
			      want, err.message);
	va_end(ap);
}

/* ---- .npy files, as numpy.save writes them ---- */

/* NumPy's header for descr and shape, format version major (1, 2 or 3),
 * padded to 64 bytes; into b, its length. */
static size_t npy_header(unsigned char *b, int major, const char *descr,
			 const char *shape, const char *order)
{
	const size_t pre = major == 1 ? 10 : 12;
	char dict[200];
	size_t n, len;

	n = (size_t)snprintf(dict, sizeof(dict),
			     "{'descr': '%s', 'fortran_order': %s, "
			     "'shape': %s, }", descr, order, shape);
	len = (pre + n + 1 + 63) / 64 * 64;
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major;
	b[7] = 0;
	memset(b + 8, 0, 4);
	b[8] = (unsigned char)((len - pre) & 0xff);
	b[9] = (unsigned char)((len - pre) >> 8);
	memcpy(b + pre, dict, n);
	memset(b + pre + n, ' ', len - pre - n - 1);
	b[len - 1] = '\n';
	return len;
}

/* Element k of an array of NumPy's kind and size, as its bytes in the
 * byte order asked: the value k * 3 + 1 (negated for every other signed
 * one). */
static void element(unsigned char *out, char kind, unsigned size, bool big,
		    unsigned k)
{
	const double v = (kind == 'i' && k % 2 ? -1.0 : 1.0) * (k * 3 + 1);
	unsigned char le[8];

	if (kind == 'f' && size == 4) {
		const float f = (float)v;

		memcpy(le, &f, 4);
	} else if (kind == 'f') {
		memcpy(le, &v, 8);
	} else {
		const int64_t i = (int64_t)v;

		memcpy(le, &i, 8); /* little-endian host */
	}
	for (unsigned j = 0; j < size; j++)
		out[j] = le[big ? size - 1 - j : j];
}

/* Pixel k of a loaded dataset of pixel type type, as a double. */
static double pixel(const parload_dataset *ds, unsigned k)
{
	const unsigned char *p = (const unsigned char *)ds->pixels;

	switch (ds->shape.pixel_type) {
	case PARLOAD_PIXEL_U8: return p[k];
	case PARLOAD_PIXEL_U16: return ((const uint16_t *)p)[k];
	case PARLOAD_PIXEL_I16: return ((const int16_t *)p)[k];
	case PARLOAD_PIXEL_U32: return ((const uint32_t *)p)[k];
	case PARLOAD_PIXEL_I32: return ((const int32_t *)p)[k];
	case PARLOAD_PIXEL_F32: return ((const float *)p)[k];
	default: return ((const double *)p)[k];
	}
}

/* An .npy of 2 x 3 x 4 elements (or 3 x 4 for a 2-D shape) at path. */
static void write_npy(const char *path, int major, char order, char kind,
		      unsigned size, bool two_d)
{
	unsigned char b[64 * 4 + 24 * 8];
	char descr[8];
	size_t len;

	snprintf(descr, sizeof(descr), "%c%c%u", order, kind, size);
	len = npy_header(b, major, descr, two_d ? "(3, 4)" : "(2, 3, 4)",
			 "False");
	for (unsigned k = 0; k < (two_d ? 12u : 24u); k++)
		element(b + len + k * size, kind, size, order == '>', k);
	tu_write_file(path, b, len + (two_d ? 12 : 24) * size);
}

static const struct {
	char kind;
	unsigned size;
	int type;
} npy_types[] = {
	{ 'u', 1, PARLOAD_PIXEL_U8 },  { 'u', 2, PARLOAD_PIXEL_U16 },
	{ 'i', 2, PARLOAD_PIXEL_I16 }, { 'u', 4, PARLOAD_PIXEL_U32 },
	{ 'i', 4, PARLOAD_PIXEL_I32 }, { 'f', 4, PARLOAD_PIXEL_F32 },
	{ 'f', 8, PARLOAD_PIXEL_F64 },
};

/* Every pixel type parload has, in either byte order, each version of
 * the format, 3-D and 2-D. */
START_TEST(test_npy_types)
{
	char *path = tu_path("types.npy");

	for (int t = 0; t < TU_COUNT(npy_types); t++)
		for (int o = 0; o < 3; o++) {
			const char order = "<>|"[o];
			const bool two_d = t % 2;
			parload_dataset ds;
			parload_error err;

			if (order == '|' && npy_types[t].size > 1)
				continue;
			write_npy(path, 1 + (t + o) % 3, order,
				  npy_types[t].kind, npy_types[t].size, two_d);
			ck_assert_msg(load(path, &ds, &err) == 0, "%c%c%u: %s",
				      order, npy_types[t].kind,
				      npy_types[t].size, err.message);
			ck_assert_int_eq(ds.shape.pixel_type,
					 npy_types[t].type);
			ck_assert_uint_eq(ds.shape.views, two_d ? 1 : 2);
			ck_assert_uint_eq(ds.shape.rows, 3);
			ck_assert_uint_eq(ds.shape.cols, 4);
			for (unsigned k = 0; k < (two_d ? 12u : 24u); k++) {
				unsigned char e[8];
				double want;

				element(e, npy_types[t].kind, npy_types[t].size,
					false, k);
				want = npy_types[t].kind == 'i' && k % 2 ?
					       -(double)(k * 3 + 1) :
					       (double)(k * 3 + 1);
				ck_assert_msg(pixel(&ds, k) == want,
					      "%c%c%u pixel %u: %g, not %g",
					      order, npy_types[t].kind,
					      npy_types[t].size, k,
					      pixel(&ds, k), want);
			}
			parload_dataset_free(&ds);
		}
	free(path);
}
END_TEST

/* A selection and parload_describe work on it as on any raw layout. */
START_TEST(test_npy_describe_select)
{
	char *path = tu_path("sel.npy");
	parload_loader *l = tu_loader(2, 0, 0);
	parload_selection sel;
	parload_source src;
	parload_dataset ds;
	parload_error err;
	parload_desc d;

	write_npy(path, 1, '<', 'u', 2, false);
	parload_source_init(&src);
	src.path = path;
	ck_assert_int_eq(parload_describe(&src, 0, &d, &err), 0);
	ck_assert_int_eq(d.format, PARLOAD_FORMAT_RAW);
	ck_assert_uint_eq(d.offset, 128); /* numpy.save's: 64-byte aligned */
	ck_assert_uint_eq(d.count, 2);
	parload_selection_init(&sel);
	ck_assert_int_eq(parload_slice_parse("1:2", 1, &sel.views, &err), 0);
	ck_assert_int_eq(parload_slice_parse("1:3", 0, &sel.rows, &err), 0);
	ck_assert_int_eq(tu_load(l, path, &sel, NULL, &ds, &err), 0);
	ck_assert_uint_eq(ds.shape.views, 1);
	ck_assert_uint_eq(ds.shape.rows, 2);
	/* View 1, row 1, column 0: element 12 + 4. */
	ck_assert(pixel(&ds, 0) == 16 * 3 + 1);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* A header of its own (path: its bytes after the magic and version). */
static void write_npy_raw(const char *path, int major, const char *descr,
			  const char *shape, const char *order, size_t data)
{
	unsigned char b[4096] = { 0 };
	const size_t len = npy_header(b, major, descr, shape, order);

	tu_write_file(path, b, len + data);
}

START_TEST(test_npy_refused)
{
	char *path = tu_path("bad.npy");
	unsigned char b[4096];
	size_t len;

	write_npy_raw(path, 1, "<u2", "(3, 4)", "True", 24);
	load_fails(path, PARLOAD_ENOTSUP, "Fortran order", NULL);
	write_npy_raw(path, 1, "<c8", "(3, 4)", "False", 96);
	load_fails(path, PARLOAD_ENOTSUP, "dtype '<c8'", NULL);
	write_npy_raw(path, 1, "<u2", "(12,)", "False", 24);
	load_fails(path, PARLOAD_ENOTSUP, "1 dimension", NULL);
	write_npy_raw(path, 1, "<u2", "(1, 2, 3, 4)", "False", 48);
	load_fails(path, PARLOAD_ENOTSUP, "more than 3", NULL);
	write_npy_raw(path, 1, "<u2", "(0, 3, 4)", "False", 0);
	load_fails(path, PARLOAD_ENOTSUP, "empty", NULL);
	/* Counts that do not fit the file: its views, then its header. */
	write_npy_raw(path, 1, "<u2", "(5, 3, 4)", "False", 24 * 2 + 10);
	load_fails(path, PARLOAD_ETRUNCATED, "view 2", "byte offset", NULL);
	write_npy_raw(path, 1, "<u2", "(99999999999, 99999, 99999)", "False",
		      24);
	load_fails(path, PARLOAD_EOVERFLOW, NULL);
	len = npy_header(b, 2, "<u2", "(3, 4)", "False");
	b[10] = 0x10; /* the header: 1 MiB more */
	tu_write_file(path, b, len);
	load_fails(path, PARLOAD_ECONTAINER, "at most", NULL);
	b[10] = 0;
	b[9] = 0x10; /* 4 KiB more, past the end of the file */
	tu_write_file(path, b, len);
	load_fails(path, PARLOAD_ETRUNCATED, "byte offset 12", NULL);
	len = npy_header(b, 4, "<u2", "(3, 4)", "False");
	tu_write_file(path, b, len + 24);
	load_fails(path, PARLOAD_ENOTSUP, "version 4.0", NULL);
	len = npy_header(b, 1, "<u2", "(3, 4)", "False");
	memcpy(b + 10, "[1, 2]", 6);
	tu_write_file(path, b, len + 24);
	load_fails(path, PARLOAD_ECONTAINER, "not a dict", NULL);
	tu_write_file(path, "\x93NUMPY\x01", 7);
	load_fails(path, PARLOAD_ETRUNCATED, NULL);
	free(path);
}
END_TEST

/* The parser alone (the fuzzer's entry): a count is never trusted. */
START_TEST(test_npy_parse)
{
	unsigned char b[256];
	const size_t len = npy_header(b, 3, "<f8", "(7, 5, 3)", "False");
	parload_error err;
	parload_desc d;

	ck_assert_int_eq(parload__npy_parse(b, len, len + 7 * 5 * 3 * 8,
					    "x.npy", &d, &err), 0);
	ck_assert_uint_eq(d.offset, len);
	ck_assert_uint_eq(d.count, 7);
	ck_assert_uint_eq(d.height, 5);
	ck_assert_uint_eq(d.width, 3);
	for (size_t n = 0; n < len; n++)
		ck_assert_int_lt(parload__npy_parse(b, n, len, "x.npy", &d,
						    &err), 0);
}
END_TEST

/* ---- NRRD with an attached header (.nrrd) ---- */

static void write_nrrd(const char *path, const char *fields, bool big)
{
	char head[512];
	unsigned char b[512 + 24 * 2];
	const int n = snprintf(head, sizeof(head),
			       "NRRD0004\n# Complete NRRD file format "
			       "specification at:\n# http://teem.sourceforge."
			       "net/nrrd/format.html\ntype: unsigned short\n"
			       "dimension: 3\nspace: left-posterior-superior\n"
			       "sizes: 4 3 2\nspace directions: (1,0,0) "
			       "(0,1,0) (0,0,1)\nkinds: domain domain domain\n"
			       "endian: %s\n%s\nspace origin: (0,0,0)\n\n",
			       big ? "big" : "little", fields);

	memcpy(b, head, (size_t)n);
	for (unsigned k = 0; k < 24; k++)
		element(b + n + 2 * k, 'u', 2, big, k);
	tu_write_file(path, b, (size_t)n + 48);
}

static void assert_counting(const parload_dataset *ds, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		ck_assert_msg(pixel(ds, k) == k * 3 + 1, "pixel %u: %g", k,
			      pixel(ds, k));
}

START_TEST(test_nrrd_attached)
{
	const char *const names[] = { "a.nrrd", "B.NRRD", "no-extension" };
	parload_dataset ds;
	parload_error err;

	for (int i = 0; i < TU_COUNT(names); i++) {
		char *path = tu_path(names[i]);

		write_nrrd(path, "encoding: raw", i == 1);
		ck_assert_msg(load(path, &ds, &err) == 0, "%s", err.message);
		ck_assert_uint_eq(ds.shape.views, 2);
		ck_assert_uint_eq(ds.shape.rows, 3);
		ck_assert_uint_eq(ds.shape.cols, 4);
		assert_counting(&ds, 24);
		parload_dataset_free(&ds);
		free(path);
	}
}
END_TEST

START_TEST(test_nrrd_attached_refused)
{
	char *path = tu_path("gz.nrrd");

	write_nrrd(path, "encoding: gzip", false);
	load_fails(path, PARLOAD_ENOTSUP, "encoding gzip", NULL);
	write_nrrd(path, "encoding: raw\nsizes: 4 3 9", false);
	load_fails(path, PARLOAD_EINVAL, "sizes", NULL);
	free(path);
}
END_TEST

/* "S.NHDR" was parload's own format to source.c (a case-sensitive
 * ".nhdr"): "bad magic" for a file that starts with NRRD0004. */
START_TEST(test_nhdr_any_case)
{
	char *data = tu_path("S.RAW"), *nhdr = tu_path("S.NHDR");
	unsigned char b[48];
	parload_dataset ds;
	parload_error err;
	FILE *f;

	for (unsigned k = 0; k < 24; k++)
		element(b + 2 * k, 'u', 2, false, k);
	tu_write_file(data, b, sizeof(b));
	ck_assert_ptr_nonnull(f = fopen(nhdr, "w"));
	fprintf(f, "NRRD0004\ntype: uint16\ndimension: 3\nsizes: 4 3 2\n"
		   "endian: little\nencoding: raw\ndata file: S.RAW\n");
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(load(nhdr, &ds, &err) == 0, "%s", err.message);
	assert_counting(&ds, 24);
	parload_dataset_free(&ds);
	ck_assert_str_eq(parload_format_named(nhdr), "nhdr");
	ck_assert_str_eq(parload_format_named("x.NrRd"), "nrrd");
	/* The command's rule is the library's: a header is no raw data. */
	{
		tu_result r;
		tu_cmd c = { .argv = (const char *const[]){
				     tu_parload_bin(), "--raw",
				     "width=4,height=3,type=u16", nhdr, NULL },
			     .timeout = 60 };

		tu_run_cmd(&c, &r);
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, "NRRD header"), "%s", r.err);
		tu_result_free(&r);
	}
	free(data);
	free(nhdr);
}
END_TEST

/* ---- names ---- */

/* container.c took ".tif" for a TIFF's name, tiff.c did not: a name has
 * a stem before its extension, in every row, any case. */
START_TEST(test_names)
{
	ck_assert_ptr_null(parload_format_named(".tif"));
	ck_assert_ptr_null(parload_format_named("dir/.tif"));
	ck_assert_ptr_null(parload_format_named("x.tif/"));
	ck_assert_str_eq(parload_format_named("a.TIF"), "tiff");
	ck_assert_str_eq(parload_format_named("dir.h5/a.Tiff"), "tiff");
	ck_assert_str_eq(parload_format_named("a.cxi"), "hdf5");
	ck_assert_str_eq(parload_format_named("a.NPY"), "npy");
	ck_assert_ptr_null(parload_format_named("a.raw"));
	ck_assert_ptr_null(parload_format_named("npy"));
}
END_TEST

/* The output format from a name: one table for parload_save, the
 * command and Python (.cxi was HDF5 to the library and unknown to
 * extract; "p.NPY" was "which format?" to parload_save). */
START_TEST(test_save_formats)
{
	char *path = tu_path("p.NPY");
	uint16_t px[2 * 3 * 4];
	parload_stack st = { 0 };
	parload_dataset ds;
	parload_error err;

	ck_assert_int_eq(parload_save_format_of("x.cxi"), PARLOAD_SAVE_HDF5);
	ck_assert_int_eq(parload_save_format_of("X.H5"), PARLOAD_SAVE_HDF5);
	ck_assert_int_eq(parload_save_format_of("p.NPY"), PARLOAD_SAVE_NPY);
	ck_assert_int_eq(parload_save_format_of("a.tiff"), PARLOAD_SAVE_TIFF);
	ck_assert_int_eq(parload_save_format_of("a.nhdr"), PARLOAD_SAVE_AUTO);
	ck_assert_int_eq(parload_save_format_of(".npy"), PARLOAD_SAVE_AUTO);
	for (unsigned k = 0; k < 24; k++)
		px[k] = (uint16_t)(k * 3 + 1);
	st.pixels = px;
	st.pixel_type = PARLOAD_PIXEL_U16;
	st.n = 2;
	st.rows = 3;
	st.cols = 4;
	ck_assert_msg(parload_save(path, &st, NULL, &err) == 0, "%s",
		      err.message);
	ck_assert_msg(load(path, &ds, &err) == 0, "%s", err.message);
	ck_assert_uint_eq(ds.shape.views, 2);
	assert_counting(&ds, 24);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* The command: extract -o takes the same table; --concat of TIFFs. */
static void run(tu_result *r, const char *const *argv)
{
	tu_cmd c = { .argv = argv, .timeout = 60 };

	tu_run_cmd(&c, r);
}

START_TEST(test_cli)
{
	char *in = tu_path("cli.npy"), *out = tu_path("cli.NPY");
	char *t0 = tu_path("t0.tif"), *t1 = tu_path("t1.TIF");
	uint16_t px[3 * 4] = { 0 };
	parload_stack st = { .pixels = px, .pixel_type = PARLOAD_PIXEL_U16,
			     .n = 1, .rows = 3, .cols = 4 };
	parload_dataset ds;
	parload_error err;
	tu_result r;

	write_npy(in, 1, '<', 'u', 2, false);
	run(&r, (const char *const[]){ tu_parload_bin(), "extract", "-o", out,
				       in, NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_result_free(&r);
	ck_assert_msg(load(out, &ds, &err) == 0, "%s", err.message);
	assert_counting(&ds, 24);
	parload_dataset_free(&ds);
	ck_assert_int_eq(parload_save(t0, &st, NULL, &err), 0);
	ck_assert_int_eq(parload_save(t1, &st, NULL, &err), 0);
	run(&r, (const char *const[]){ tu_parload_bin(), "--concat", t0, t1,
				       NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "2 views"), "%s", r.out);
	tu_result_free(&r);
	/* .cxi was unknown to extract, HDF5 to the library. */
	if (parload_has_hdf5()) {
		char *cxi = tu_path("o.cxi");

		run(&r, (const char *const[]){ tu_parload_bin(), "extract",
					       "-o", cxi, in, NULL });
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_result_free(&r);
		ck_assert_msg(load(cxi, &ds, &err) == 0, "%s", err.message);
		ck_assert_int_eq(ds.desc.format, PARLOAD_FORMAT_HDF5);
		parload_dataset_free(&ds);
		free(cxi);
	}
	free(in);
	free(out);
	free(t0);
	free(t1);
}
END_TEST

/* ---- a driver of the test's own ---- */

/* "DUMMY W H N\n", then N views of H rows of W bytes. */
static bool dummy_magic(const unsigned char *b, size_t n)
{
	return n >= 6 && memcmp(b, "DUMMY ", 6) == 0;
}

static int dummy_describe(const parload_source *src, parload__described *out,
			  parload_error *err)
{
	const char *path = parload__source_path(src);
	parload_desc *d = &out->got.desc;
	unsigned w, h, n;
	int len = 0;
	FILE *f = fopen(path, "rb");

	if (!f || fscanf(f, "DUMMY %u %u %u\n%n", &w, &h, &n, &len) != 3 ||
	    len == 0) {
		if (f)
			fclose(f);
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, path,
					  "not a dummy file");
	}
	fclose(f);
	parload_desc_init(d);
	d->format = PARLOAD_FORMAT_RAW;
	d->pixel_type = PARLOAD_PIXEL_U8;
	d->width = w;
	d->height = h;
	d->count = n;
	d->offset = (uint64_t)len;
	out->got.paths = calloc(1, sizeof(char *));
	out->got.paths[0] = strdup(path);
	out->got.n = 1;
	return parload_desc_check(d, err);
}

static const char *const dummy_exts[] = { ".dummy", NULL };

static const parload__driver dummy = {
	.name = "dummy",
	.title = "dummy",
	.format = PARLOAD_FORMAT_RAW,
	.magic = dummy_magic,
	.exts = dummy_exts,
	.describe = dummy_describe,
};

START_TEST(test_dummy_driver)
{
	char *path = tu_path("x.bin"), *named = tu_path("y.DUMMY");
	const char text[] = "DUMMY 4 3 2\n";
	unsigned char b[sizeof(text) - 1 + 24];
	parload_dataset ds;
	parload_error err;

	memcpy(b, text, sizeof(text) - 1);
	for (unsigned k = 0; k < 24; k++)
		b[sizeof(text) - 1 + k] = (unsigned char)(k * 3 + 1);
	tu_write_file(path, b, sizeof(b));
	/* Not known yet: parload's own format, which it is not (shorter
	 * than its header). */
	load_fails(path, PARLOAD_ETRUNCATED, "file header", NULL);
	ck_assert_int_eq(parload__driver_register(&dummy), 0);
	ck_assert_msg(load(path, &ds, &err) == 0, "%s", err.message);
	ck_assert_uint_eq(ds.shape.views, 2);
	assert_counting(&ds, 24);
	parload_dataset_free(&ds);
	ck_assert_str_eq(parload_format_named(named), "dummy");
	free(path);
	free(named);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("drivers");
	TCase *npy = tu_tcase(s, "npy", 60);
	TCase *nrrd = tu_tcase(s, "nrrd", 60);
	TCase *names = tu_tcase(s, "names", 120);

	tcase_add_test(npy, test_npy_types);
	tcase_add_test(npy, test_npy_describe_select);
	tcase_add_test(npy, test_npy_refused);
	tcase_add_test(npy, test_npy_parse);
	tcase_add_test(nrrd, test_nrrd_attached);
	tcase_add_test(nrrd, test_nrrd_attached_refused);
	tcase_add_test(nrrd, test_nhdr_any_case);
	tcase_add_test(names, test_names);
	tcase_add_test(names, test_save_formats);
	tcase_add_test(names, test_cli);
	tcase_add_test(names, test_dummy_driver);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
