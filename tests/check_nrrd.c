/*
 * check_nrrd.c - NRRD detached headers: the parser (src/formats/nrrd/nrrd.c) on headers
 * this test writes by hand, each with the data files it names; what it
 * refuses; parload_nrrd_write read back by the parser; loads of a .nhdr
 * through the loader; and corrupted headers that must fail cleanly.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#include "testutil.h"

static char scratch[1024];
static pid_t scratch_owner; /* Check's forked tests leave it alone */

static int remove_entry(const char *p, const struct stat *st, int flag,
			struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static void remove_scratch(void)
{
	if (scratch[0] && getpid() == scratch_owner)
		nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* scratch/name, in one of eight buffers used in turn. */
static const char *at(const char *name)
{
	static char bufs[8][PATH_MAX];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, PATH_MAX, "%s/%s", scratch, name);
	return b;
}

static void write_text(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void write_text(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "wb");
	va_list ap;

	ck_assert_ptr_nonnull(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(fclose(f), 0);
}

/* n bytes of a counting pattern after the prefix text. */
static void write_data(const char *path, const char *prefix, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	fputs(prefix, f);
	for (size_t i = 0; i < n; i++)
		fputc((int)(i * 7 % 251), f);
	ck_assert_int_eq(fclose(f), 0);
}

static void read_ok(const char *nhdr, parload__nrrd *n)
{
	parload_error err;
	int rc = parload__nrrd_read(nhdr, 0, n, &err);

	ck_assert_msg(rc == 0, "%s: %s", nhdr, err.message);
}

/* The header fails with code, its message naming the header and each of
 * the texts (NULL-terminated), and nothing is held. */
static void read_fails(const char *nhdr, int code, ...)
{
	static const parload__nrrd zero;
	parload_error err;
	parload__nrrd n;
	const char *want;
	va_list ap;
	int rc = parload__nrrd_read(nhdr, 0, &n, &err);

	ck_assert_msg(rc == code, "%s: %d (%s), wanted %s", nhdr, rc,
		      rc ? err.message : "success", parload_err_name(code));
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.message, nhdr), "%s", err.message);
	va_start(ap, code);
	while ((want = va_arg(ap, const char *)) != NULL)
		ck_assert_msg(strstr(err.message, want), "'%s' not in: %s",
			      want, err.message);
	va_end(ap);
	ck_assert(memcmp(&n, &zero, sizeof(n)) == 0);
}

static void assert_layout(const parload__nrrd *n, uint32_t w, uint32_t h,
			  uint64_t count, int type, int enc, uint64_t off)
{
	const parload_desc *d = &n->desc;

	ck_assert_int_eq(d->format, PARLOAD_FORMAT_RAW);
	ck_assert_uint_eq(d->width, w);
	ck_assert_uint_eq(d->height, h);
	ck_assert_uint_eq(d->count, count);
	ck_assert_int_eq(d->pixel_type, type);
	ck_assert_int_eq(d->encoding, enc);
	ck_assert_uint_eq(d->offset, off);
	ck_assert_uint_eq(d->header, 0);
	ck_assert_uint_eq(d->gap, 0);
	ck_assert_uint_eq(d->payload_size,
			  (uint64_t)w * h * parload_pixel_size(type));
}

/* Read nhdr into *n and check its layout. */
static void read_layout(const char *nhdr, parload__nrrd *n, uint32_t w,
			uint32_t h, uint64_t count, int type, int enc,
			uint64_t off)
{
	read_ok(nhdr, n);
	assert_layout(n, w, h, count, type, enc, off);
}

/* ---- what is read ---- */

static const struct {
	const char *name;
	int type;
} types[] = {
	{"uchar", PARLOAD_PIXEL_U8}, {"unsigned char", PARLOAD_PIXEL_U8},
	{"uint8", PARLOAD_PIXEL_U8}, {"uint8_t", PARLOAD_PIXEL_U8},
	{"short", PARLOAD_PIXEL_I16}, {"short int", PARLOAD_PIXEL_I16},
	{"signed short", PARLOAD_PIXEL_I16},
	{"signed short int", PARLOAD_PIXEL_I16}, {"int16", PARLOAD_PIXEL_I16},
	{"int16_t", PARLOAD_PIXEL_I16}, {"ushort", PARLOAD_PIXEL_U16},
	{"unsigned short", PARLOAD_PIXEL_U16},
	{"unsigned short int", PARLOAD_PIXEL_U16},
	{"uint16", PARLOAD_PIXEL_U16}, {"uint16_t", PARLOAD_PIXEL_U16},
	{"int", PARLOAD_PIXEL_I32}, {"signed int", PARLOAD_PIXEL_I32},
	{"int32", PARLOAD_PIXEL_I32}, {"int32_t", PARLOAD_PIXEL_I32},
	{"uint", PARLOAD_PIXEL_U32}, {"unsigned int", PARLOAD_PIXEL_U32},
	{"uint32", PARLOAD_PIXEL_U32}, {"uint32_t", PARLOAD_PIXEL_U32},
	{"float", PARLOAD_PIXEL_F32}, {"double", PARLOAD_PIXEL_F64},
	{"Unsigned  SHORT", PARLOAD_PIXEL_U16},
};

/* Every NRRD spelling of every type parload reads, both byte orders. */
START_TEST(test_types)
{
	const char *nhdr = at("types.nhdr");

	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++)
		for (int big = 0; big < 2; big++) {
			const unsigned bpp = parload_pixel_size(types[i].type);
			parload__nrrd n;

			write_data(at("types.raw"), "", 4 * 3 * 2 * bpp);
			write_text(nhdr, "NRRD0005\ntype: %s\ndimension: 3\n"
				   "sizes: 4 3 2\nendian: %s\nencoding: raw\n"
				   "data file: types.raw\n", types[i].name,
				   big ? "big" : "little");
			read_layout(nhdr, &n, 4, 3, 2, types[i].type,
				      bpp > 1 && big ? PARLOAD_ENC_BE :
						       PARLOAD_ENC_LE, 0);
			ck_assert_uint_eq(n.n, 1);
			ck_assert_str_eq(n.paths[0], at("types.raw"));
			parload__nrrd_free(&n);
			ck_assert_ptr_null(n.paths);
		}
}
END_TEST

/* A one-byte type needs no endian; 2-D is one view; byte skip is the
 * offset. */
START_TEST(test_2d_byte_skip)
{
	const char *nhdr = at("two.nhdr");
	parload__nrrd n;

	write_data(at("two.raw"), "", 100 + 5 * 4);
	write_text(nhdr, "NRRD0001\ntype: uchar\ndimension: 2\nsizes: 5 4\n"
		   "encoding: raw\nbyte skip: 100\ndata file: two.raw\n");
	read_layout(nhdr, &n, 5, 4, 1, PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, 100);
	parload__nrrd_free(&n);
}
END_TEST

/* Field names and values in any case, CRLF lines, comments, key/value
 * pairs, the descriptive fields and the one-word spellings. */
START_TEST(test_case_comments_ignored)
{
	const char *nhdr = at("case.nhdr");
	parload__nrrd n;

	write_data(at("case.raw"), "", 7 + 6 * 2 * 2);
	write_text(nhdr, "NRRD0004\r\n# a comment: type: float\r\n"
		   "Type: UInt16\r\nDIMENSION: 2\r\nspace: left-posterior-"
		   "superior\r\nSizes:   6  2 \r\nspace directions: (1,0,0) "
		   "(0,1,0)\r\nspace origin: (0,0,0)\r\nspacings: 1 1\r\n"
		   "kinds: domain domain\r\ncontent: a: b:=c\r\n"
		   "labels: \"x\" \"y\"\r\nunits: \"mm\" \"mm\"\r\n"
		   "centers: cell cell\r\naxis mins: 0 0\r\naxismaxs: 1 1\r\n"
		   "thicknesses: 1 1\r\nold min: 0\r\noldmax: 1\r\n"
		   "sample units: HU\r\nmeasurement frame: (1,0) (0,1)\r\n"
		   "my key:=my: value\r\nEndian: BIG\r\nEncoding: RAW\r\n"
		   "byteskip: 7\r\ndatafile: case.raw\r\n\r\n"
		   "after the blank line: nothing is read\r\n");
	read_layout(nhdr, &n, 6, 2, 1, PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 7);
	ck_assert_str_eq(n.paths[0], at("case.raw"));
	parload__nrrd_free(&n);
}
END_TEST

/* LIST: one name a line to the end, relative to the header's directory
 * (a subdirectory too) or absolute. */
START_TEST(test_list)
{
	const char *nhdr = at("list.nhdr");
	char abs[PATH_MAX];
	parload__nrrd n;

	ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
	write_data(at("l0.raw"), "", 2 * 2);
	write_data(at("sub/l1.raw"), "", 2 * 2);
	snprintf(abs, sizeof(abs), "%s", at("l2.raw"));
	write_data(abs, "", 2 * 2);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 3\n"
		   "encoding: raw\ndata file: LIST\nl0.raw\nsub/l1.raw\n%s\n",
		   abs);
	read_layout(nhdr, &n, 2, 2, 3, PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, 0);
	ck_assert_uint_eq(n.n, 3);
	ck_assert_str_eq(n.paths[0], at("l0.raw"));
	ck_assert_str_eq(n.paths[1], at("sub/l1.raw"));
	ck_assert_str_eq(n.paths[2], abs);
	parload__nrrd_free(&n);
}
END_TEST

/* LIST 3: slabs, the slices split evenly over the files; byte skip in
 * each. */
START_TEST(test_list_slabs)
{
	const char *nhdr = at("slabs.nhdr");
	parload__nrrd n;

	write_data(at("slab0.raw"), "", 16 + 2 * 2 * 2 * 4);
	write_data(at("slab1.raw"), "", 16 + 2 * 2 * 2 * 4);
	write_text(nhdr, "NRRD0004\ntype: float\ndimension: 3\nsizes: 2 2 4\n"
		   "endian: little\nencoding: raw\nbyte skip: 16\n"
		   "data file: LIST 3\nslab0.raw\nslab1.raw\n");
	read_layout(nhdr, &n, 2, 2, 4, PARLOAD_PIXEL_F32, PARLOAD_ENC_LE, 16);
	ck_assert_uint_eq(n.n, 2);
	ck_assert_str_eq(n.paths[1], at("slab1.raw"));
	parload__nrrd_free(&n);
}
END_TEST

/* A pattern: min to max inclusive by step, up or down. */
START_TEST(test_pattern)
{
	const char *nhdr = at("pat.nhdr");
	parload__nrrd n;

	for (int i = 0; i < 6; i++) {
		char name[32];

		snprintf(name, sizeof(name), "s%03d.raw", i);
		write_data(at(name), "", 3 * 2 * 2);
		snprintf(name, sizeof(name), "n%d.raw", i);
		write_data(at(name), "", 3 * 2 * 2);
	}
	write_text(nhdr, "NRRD0004\ntype: int16\ndimension: 3\nsizes: 3 2 3\n"
		   "endian: big\nencoding: raw\ndata file: s%%03d.raw 1 5 2\n");
	read_layout(nhdr, &n, 3, 2, 3, PARLOAD_PIXEL_I16, PARLOAD_ENC_BE, 0);
	ck_assert_uint_eq(n.n, 3);
	ck_assert_str_eq(n.paths[0], at("s001.raw"));
	ck_assert_str_eq(n.paths[1], at("s003.raw"));
	ck_assert_str_eq(n.paths[2], at("s005.raw"));
	parload__nrrd_free(&n);
	write_text(nhdr, "NRRD0004\ntype: int16\ndimension: 3\nsizes: 3 2 3\n"
		   "endian: big\nencoding: raw\ndata file: n%%d.raw 2 0 -1 2\n");
	read_ok(nhdr, &n);
	ck_assert_uint_eq(n.n, 3);
	ck_assert_str_eq(n.paths[0], at("n2.raw"));
	ck_assert_str_eq(n.paths[2], at("n0.raw"));
	parload__nrrd_free(&n);
}
END_TEST

/* byte skip -1: the data ends the file. */
START_TEST(test_byte_skip_end)
{
	const char *nhdr = at("end.nhdr");
	parload__nrrd n;

	write_data(at("end.raw"), "37 bytes of someone else's header...\n",
		   4 * 4 * 2 * 4);
	write_text(nhdr, "NRRD0004\ntype: uint32\ndimension: 3\nsizes: 4 4 2\n"
		   "endian: little\nencoding: raw\nbyte skip: -1\n"
		   "data file: end.raw\n");
	read_layout(nhdr, &n, 4, 4, 2, PARLOAD_PIXEL_U32, PARLOAD_ENC_LE, 37);
	parload__nrrd_free(&n);
}
END_TEST

/* line skip: lines of the data file, then byte skip. */
START_TEST(test_line_skip)
{
	const char *nhdr = at("pgm.nhdr");
	const char *pgm = "P5\n3 2\n255\n";
	parload__nrrd n;

	write_data(at("pgm.pgm"), pgm, 2 + 3 * 2);
	write_text(nhdr, "NRRD0001\ntype: uchar\ndimension: 2\nsizes: 3 2\n"
		   "encoding: raw\nline skip: 3\nbyte skip: 2\n"
		   "data file: ./pgm.pgm\n");
	read_layout(nhdr, &n, 3, 2, 1, PARLOAD_PIXEL_U8, PARLOAD_ENC_LE,
		      strlen(pgm) + 2);
	ck_assert_str_eq(n.paths[0], at("./pgm.pgm"));
	parload__nrrd_free(&n);
}
END_TEST

/* No data file: the data follows the blank line (an attached header). */
START_TEST(test_attached)
{
	const char *nhdr = at("att.nhdr");
	const char *text = "NRRD0004\ntype: double\ndimension: 3\n"
			   "sizes: 2 1 2\nendian: little\nencoding: raw\n\n";
	parload__nrrd n;

	write_data(nhdr, text, 2 * 1 * 2 * 8);
	read_layout(nhdr, &n, 2, 1, 2, PARLOAD_PIXEL_F64, PARLOAD_ENC_LE,
		      strlen(text));
	ck_assert_uint_eq(n.n, 1);
	ck_assert_str_eq(n.paths[0], nhdr);
	parload__nrrd_free(&n);
}
END_TEST

/* The loader reads a .nhdr given as a path: big-endian u16 from three
 * files of a pattern, each after a 10-byte skip, swapped. */
START_TEST(test_load)
{
	const char *nhdr = at("load.nhdr");
	parload_loader *l = NULL;
	parload_request req;
	parload_dataset ds;
	parload_error err;
	const uint16_t *px;
	int rc;

	for (int v = 0; v < 3; v++) {
		char name[32];
		FILE *f;

		snprintf(name, sizeof(name), "load%d.raw", v);
		ck_assert_ptr_nonnull(f = fopen(at(name), "wb"));
		fputs("0123456789", f);
		for (int i = 0; i < 4 * 2; i++) {
			fputc(v, f);
			fputc(i, f);
		}
		ck_assert_int_eq(fclose(f), 0);
	}
	write_text(nhdr, "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 4 2 3\n"
		   "endian: big\nencoding: raw\nbyte skip: 10\n"
		   "data file: load%%d.raw 0 2 1\n");
	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	parload_request_init(&req);
	req.source.path = nhdr;
	rc = parload_loader_run(l, &req, &ds, &err);
	ck_assert_msg(rc == 0, "%s", err.message);
	ck_assert_uint_eq(ds.desc.count, 3);
	px = ds.pixels;
	for (int v = 0; v < 3; v++)
		for (int i = 0; i < 8; i++)
			ck_assert_uint_eq(px[v * 8 + i], (unsigned)(v << 8 | i));
	parload_dataset_free(&ds);
	parload_loader_free(l);
}
END_TEST

/* ---- what is refused ---- */

/* A valid 3-D u16 header but for the field lines given (NULL: the
 * default of that line). */
static const char *header(const char *type, const char *dim,
			  const char *sizes, const char *endian,
			  const char *enc, const char *extra)
{
	const char *nhdr = at("bad.nhdr");

	write_data(at("bad.raw"), "", 4 * 4 * 4 * 8);
	write_text(nhdr, "NRRD0004\n%s%s%s%s%s%sdata file: bad.raw\n",
		   type ? type : "type: uint16\n",
		   dim ? dim : "dimension: 3\n",
		   sizes ? sizes : "sizes: 4 4 2\n",
		   endian ? endian : "endian: little\n",
		   enc ? enc : "encoding: raw\n", extra ? extra : "");
	return nhdr;
}

START_TEST(test_bad_gzip)
{
	read_fails(header(NULL, NULL, NULL, NULL, "encoding: gzip\n", NULL),
		   PARLOAD_ENOTSUP, "line 6", "'encoding'",
		   "encoding gzip is not supported: parload reads raw", NULL);
}
END_TEST

START_TEST(test_bad_unknown_field)
{
	read_fails(header(NULL, NULL, NULL, NULL, NULL, "frobnicate: 3\n"),
		   PARLOAD_ENOTSUP, "line 7", "'frobnicate'", NULL);
}
END_TEST

START_TEST(test_bad_no_sizes)
{
	read_fails(header(NULL, NULL, "", NULL, NULL, NULL), PARLOAD_EINVAL,
		   "'sizes'", "requires", NULL);
}
END_TEST

START_TEST(test_bad_no_endian)
{
	read_fails(header(NULL, NULL, NULL, "", NULL, NULL), PARLOAD_EINVAL,
		   "'endian'", NULL);
}
END_TEST

START_TEST(test_bad_dimension)
{
	read_fails(header(NULL, "dimension: 4\n", NULL, NULL, NULL, NULL),
		   PARLOAD_ENOTSUP, "line 3", "dimension 4", NULL);
	read_fails(header(NULL, "dimension: two\n", NULL, NULL, NULL, NULL),
		   PARLOAD_EINVAL, "line 3", "'dimension'", NULL);
}
END_TEST

START_TEST(test_bad_magic)
{
	const char *nhdr = at("magic.nhdr");

	write_text(nhdr, "PNRRD0004\ntype: uint8\n");
	read_fails(nhdr, PARLOAD_EMAGIC, "line 1", NULL);
	write_text(nhdr, "NRRD0009\ntype: uint8\n");
	read_fails(nhdr, PARLOAD_ENOTSUP, "line 1", "NRRD0009", NULL);
	write_text(nhdr, "%s", "");
	read_fails(nhdr, PARLOAD_EMAGIC, NULL);
}
END_TEST

START_TEST(test_bad_empty_list)
{
	const char *nhdr = at("empty.nhdr");

	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 4 4\n"
		   "encoding: raw\ndata file: LIST\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 6", "LIST names no files",
		   NULL);
}
END_TEST

START_TEST(test_bad_step)
{
	const char *nhdr = at("step.nhdr");

	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 4 4 2\n"
		   "encoding: raw\ndata file: s%%03d.raw 1 2 0\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 6", "'data file'", "step",
		   NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 4 4 2\n"
		   "encoding: raw\ndata file: s%%s.raw 1 2 1\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 6", "conversion", NULL);
}
END_TEST

START_TEST(test_bad_type)
{
	read_fails(header("type: int64\n", NULL, NULL, NULL, NULL, NULL),
		   PARLOAD_ENOTSUP, "line 2", "int64", NULL);
	read_fails(header("type: signed char\n", NULL, NULL, NULL, NULL, NULL),
		   PARLOAD_ENOTSUP, "signed char", NULL);
	read_fails(header("type: quaternion\n", NULL, NULL, NULL, NULL, NULL),
		   PARLOAD_EINVAL, "quaternion", NULL);
}
END_TEST

/* The order and uniqueness of fields, and files that do not hold whole,
 * equal shares of the views. */
START_TEST(test_bad_structure)
{
	const char *nhdr = at("struct.nhdr");

	write_text(nhdr, "NRRD0004\ntype: uint8\nsizes: 4 4\ndimension: 2\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 3", "before dimension", NULL);
	read_fails(header(NULL, NULL, NULL, NULL, NULL, "type: uint8\n"),
		   PARLOAD_EINVAL, "line 7", "given twice", NULL);
	read_fails(header(NULL, NULL, "sizes: 4 4\n", NULL, NULL, NULL),
		   PARLOAD_EINVAL, "'sizes'", NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 3\n"
		   "encoding: raw\ndata file: LIST\nl0.raw\nl0.raw\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 6", "2 files", NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 3\n"
		   "encoding: raw\ndata file: LIST 3\nl0.raw\nl0.raw\n");
	read_fails(nhdr, PARLOAD_ENOTSUP, "evenly", NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\ndata file: LIST 2\nl0.raw\nl0.raw\n");
	read_fails(nhdr, PARLOAD_ENOTSUP, "part of a view", NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\nno colon here\n");
	read_fails(nhdr, PARLOAD_EINVAL, "line 3", NULL);
}
END_TEST

/* A file of several that is not exactly its share, a missing file, and
 * line skip past the end of a file. */
START_TEST(test_bad_files)
{
	const char *nhdr = at("files.nhdr");

	write_data(at("f0.raw"), "", 2 * 2 + 1);
	write_data(at("f1.raw"), "", 2 * 2);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 2\n"
		   "encoding: raw\ndata file: LIST\nf0.raw\nf1.raw\n");
	read_fails(at("files.nhdr"), PARLOAD_ENOTSUP, "back to back", NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 2\n"
		   "encoding: raw\ndata file: LIST\nnone.raw\nf1.raw\n");
	ck_assert_int_eq(parload__nrrd_read(nhdr, 0, &(parload__nrrd){0},
					    NULL),
			 PARLOAD_EOPEN);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\nline skip: 9\ndata file: f1.raw\n");
	ck_assert_int_eq(parload__nrrd_read(nhdr, 0, &(parload__nrrd){0},
					    NULL),
			 PARLOAD_ETRUNCATED);
	ck_assert_int_eq(parload__nrrd_read(at("nothing.nhdr"), 0,
					    &(parload__nrrd){0}, NULL),
			 PARLOAD_EOPEN);
}
END_TEST

/* A load of nhdr (threads workers) fails with code, its message holding
 * each of the texts (NULL-terminated). */
static void load_fails(const char *nhdr, unsigned threads, unsigned flags,
		       int code, ...)
{
	parload_loader *l = NULL;
	parload_options o;
	parload_request req;
	parload_dataset ds;
	parload_error err;
	const char *want;
	va_list ap;
	int rc;

	parload_options_init(&o);
	o.threads = threads;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload_request_init(&req);
	req.source.path = nhdr;
	req.source.flags = flags;
	rc = parload_loader_run(l, &req, &ds, &err);
	ck_assert_msg(rc == code, "%s: %d (%s), wanted %s", nhdr, rc,
		      rc ? err.message : "success", parload_err_name(code));
	va_start(ap, code);
	while ((want = va_arg(ap, const char *)) != NULL)
		ck_assert_msg(strstr(err.message, want), "'%s' not in: %s",
			      want, err.message);
	va_end(ap);
	parload_loader_free(l);
}

/* A data file that is missing is named with the header and the line that
 * names it: one file, a LIST's (opened here, and by the workers for a
 * long list) and one the header's line skip opens. */
START_TEST(test_missing_data_file)
{
	char nhdr[PATH_MAX], want[2 * PATH_MAX + 64];
	FILE *f;

	snprintf(nhdr, sizeof(nhdr), "%s", at("missing.nhdr"));

	write_text(nhdr, "NRRD0004\n# a comment\ntype: uint8\ndimension: 2\n"
		   "sizes: 2 2\nencoding: raw\ndata file: gone.raw\n");
	snprintf(want, sizeof(want), "%s: line 7: data file '%s': cannot open "
		 "file: No such file or directory", nhdr, at("gone.raw"));
	load_fails(nhdr, 1, 0, PARLOAD_EOPEN, want, NULL);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\nline skip: 1\ndata file: gone.raw\n");
	load_fails(nhdr, 1, 0, PARLOAD_EOPEN, "line 7: data file '", "gone.raw",
		   "No such file or directory", NULL);
	/* 70 files, the 68th missing: on line 6 + 68. */
	ck_assert_ptr_nonnull(f = fopen(nhdr, "w"));
	fprintf(f, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 70\n"
		"encoding: raw\ndata file: LIST\n");
	for (int i = 0; i < 70; i++) {
		char name[32];

		snprintf(name, sizeof(name), "m%02d.raw", i);
		fprintf(f, "%s\n", name);
		if (i != 67)
			write_data(at(name), "", 2 * 2);
	}
	ck_assert_int_eq(fclose(f), 0);
	for (unsigned threads = 1; threads <= 4; threads += 3)
		load_fails(nhdr, threads, 0, PARLOAD_EOPEN,
			   "line 74: data file '", "m67.raw': cannot open "
			   "file: No such file or directory", NULL);
	/* A FIFO whose lines line skip would count: refused, not waited
	 * on for a writer. */
	ck_assert_int_eq(mkfifo(at("fifo.raw"), 0600), 0);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\nline skip: 1\ndata file: fifo.raw\n");
	load_fails(nhdr, 1, 0, PARLOAD_ENOTREG, "line 7: data file '",
		   "fifo.raw': not a regular file (a FIFO)", NULL);
	/* A data file that is a directory: named so too. */
	ck_assert_int_eq(mkdir(at("dir.raw"), 0755), 0);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\ndata file: dir.raw\n");
	load_fails(nhdr, 1, 0, PARLOAD_ENOTREG, "line 6: data file '",
		   "dir.raw': not a regular file (a directory)", NULL);
}
END_TEST

/* No byte of msg is one a terminal acts on (an escape, a newline). */
static void assert_printable(const char *msg)
{
	for (const char *p = msg; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f,
			      "byte 0x%02x at %zu of: %s", (unsigned char)*p,
			      (size_t)(p - msg), msg);
}

/* Names and values a header gives are quoted escaped: a crafted header
 * cannot put escape sequences on the screen of whoever reads the message;
 * a long value is shortened in its middle, the reason kept. */
START_TEST(test_names_escaped)
{
	char nhdr[PATH_MAX], big[5000];
	parload_error err;
	parload__nrrd n;
	parload_desc d;

	snprintf(nhdr, sizeof(nhdr), "%s", at("esc.nhdr"));
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\ndata file: "
		   "\x1b]0;pwned\x07x\x1b[2J\x7f.raw\n");
	load_fails(nhdr, 1, 0, PARLOAD_EOPEN,
		   "esc.nhdr: line 6: data file '",
		   "/\\x1b]0;pwned\\x07x\\x1b[2J\\x7f.raw': cannot open file",
		   NULL);
	/* The header itself is read: only the open fails. */
	ck_assert_int_eq(parload__nrrd_read(nhdr, 0, &n, &err), 0);
	parload__nrrd_free(&n);
	write_text(nhdr, "NRRD0004\ntype: \x1b[31mred\ndimension: 2\n");
	read_fails(nhdr, PARLOAD_EINVAL,
		   "'\\x1b[31mred' is not a NRRD type", NULL);
	write_text(nhdr, "NRRD0004\nfr\x1b[Hob: 3\n");
	read_fails(nhdr, PARLOAD_ENOTSUP, "field 'fr\\x1b[Hob'", NULL);
	write_text(nhdr, "NRRD0004\n\x9b" "31mno colon\n");
	read_fails(nhdr, PARLOAD_EINVAL, "'\\x9b31mno colon' is not", NULL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_text(nhdr, "NRRD0004\ntype: %s\x1b\n", big);
	read_fails(nhdr, PARLOAD_EINVAL, "'xxx", "xxx...xxx",
		   "xxx\\x1b' is not a NRRD type", NULL);
	/* Each of those messages, whole. */
	parload__nrrd_read(nhdr, 0, &(parload__nrrd){0}, &err);
	assert_printable(err.message);
	/* A layout text (a file's, with @PATH) likewise. */
	ck_assert_int_eq(parload_desc_parse("width=4,height=4,type=u\x1b[5m",
					    &d, &err),
			 PARLOAD_EINVAL);
	ck_assert_msg(strstr(err.message, "'u\\x1b[5m'"), "%s", err.message);
	write_text(at("esc.spec"), "width=4\nhe\x1bight=4\n");
	snprintf(big, sizeof(big), "@%s", at("esc.spec"));
	ck_assert_int_eq(parload_desc_parse(big, &d, &err), PARLOAD_EINVAL);
	ck_assert_msg(strstr(err.message, "unknown key 'he\\x1bight'"), "%s",
		      err.message);
	assert_printable(err.message);
}
END_TEST

/* nhdr loads, its data 2 x 2 u8 views. */
static void loads(const char *nhdr, unsigned flags)
{
	parload_loader *l = NULL;
	parload_request req;
	parload_dataset ds;
	parload_error err;
	int rc;

	ck_assert_int_eq(parload_loader_new(&l, NULL, &err), 0);
	parload_request_init(&req);
	req.source.path = nhdr;
	req.source.flags = flags;
	rc = parload_loader_run(l, &req, &ds, &err);
	ck_assert_msg(rc == 0, "%s: %s", nhdr, err.message);
	parload_dataset_free(&ds);
	parload_loader_free(l);
}

/* PARLOAD_SRC_CONFINE: a data file must lie in the header's directory or
 * below it once its links are resolved; any other is refused before it is
 * opened (a FIFO outside, read for its lines, would hang the load), naming
 * the header, the line and the file.  Without the flag, NRRD's names go
 * anywhere. */
START_TEST(test_confine)
{
	static const char *const head = "NRRD0004\ntype: uint8\ndimension: 2\n"
					"sizes: 2 2\nencoding: raw\n";
	char nhdr[PATH_MAX], dir[PATH_MAX], out[PATH_MAX], in[PATH_MAX];
	char desc_err[64];
	parload_source src;
	parload_error err;
	parload_desc d;

	snprintf(dir, sizeof(dir), "%s", at("conf"));
	snprintf(nhdr, sizeof(nhdr), "%s", at("conf/c.nhdr"));
	snprintf(out, sizeof(out), "%s", at("out.raw"));
	snprintf(in, sizeof(in), "%s", at("conf/sub/in2.raw"));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkdir(at("conf/sub"), 0755), 0);
	write_data(at("conf/in.raw"), "", 4);
	write_data(in, "", 4);
	write_data(out, "", 4);
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(symlink("../out.raw", at("conf/link.raw")), 0);
	ck_assert_int_eq(symlink("sub/in2.raw", at("conf/inlink.raw")), 0);
	ck_assert_int_eq(symlink(dir, at("conf/sub/up")), 0);

	/* In the directory, below it, by a link that stays in it, or by an
	 * absolute name in it: read. */
	write_text(nhdr, "%sdata file: in.raw\n", head);
	loads(nhdr, PARLOAD_SRC_CONFINE);
	write_text(nhdr, "%sdata file: LIST\nsub/in2.raw\ninlink.raw\n%s\n"
		   "sub/up/in.raw\n",
		   "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 4\n"
		   "encoding: raw\n", in);
	loads(nhdr, PARLOAD_SRC_CONFINE);

	/* Outside: "..", a link out of it, an absolute name. */
	write_text(nhdr, "%sdata file: ../out.raw\n", head);
	loads(nhdr, 0);
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN,
		   "c.nhdr: line 6: data file '", "conf/../out.raw': the file "
		   "is '", "out.raw', outside '", "/conf', the header's "
		   "directory", "PARLOAD_SRC_CONFINE", NULL);
	write_text(nhdr, "%sdata file: link.raw\n", head);
	loads(nhdr, 0);
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN,
		   "line 6: data file '", "link.raw': the file is '",
		   "/out.raw', outside", NULL);
	write_text(nhdr, "%sdata file: %s\n", head, out);
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN, "outside",
		   NULL);
	/* The third of a LIST, on line 9. */
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 3\n"
		   "encoding: raw\ndata file: LIST\nin.raw\nsub/in2.raw\n"
		   "../out.raw\n");
	load_fails(nhdr, 4, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN,
		   "line 9: data file '", "outside", NULL);
	/* A FIFO outside, which line skip would read: never opened. */
	write_text(nhdr, "%sline skip: 1\ndata file: ../fifo\n", head);
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN, "outside",
		   NULL);
	/* Missing: named as without the flag. */
	write_text(nhdr, "%sdata file: gone.raw\n", head);
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN,
		   "line 6: data file '", "gone.raw': cannot open file: No "
		   "such file or directory", NULL);
	/* What describes a source refuses so too. */
	write_text(nhdr, "%sdata file: link.raw\n", head);
	parload_source_init(&src);
	src.path = nhdr;
	src.flags = PARLOAD_SRC_CONFINE;
	ck_assert_int_eq(parload_describe(&src, 0, &d, &err), PARLOAD_EOPEN);
	snprintf(desc_err, sizeof(desc_err), "%s", "outside");
	ck_assert_msg(strstr(err.message, desc_err), "%s", err.message);
	src.flags = 0;
	ck_assert_int_eq(parload_describe(&src, 0, &d, &err), 0);
}
END_TEST

/* PARLOAD_SRC_CONFINE checks a data file before any is opened, and each
 * open then finds the file it checked: one replaced in between (by a link
 * out of the directory) is refused when opened.  The opens themselves
 * cannot be raced here; this is the rule they apply (source.c's
 * open_member, place), and a long list opened by four workers passes it
 * file by file. */
START_TEST(test_confine_replaced)
{
	char nhdr[PATH_MAX], path[32];
	parload_error err;
	parload__nrrd n;
	struct stat st;
	FILE *f;
	int fd;

	ck_assert_int_eq(mkdir(at("rep"), 0755), 0);
	snprintf(nhdr, sizeof(nhdr), "%s", at("rep/r.nhdr"));
	write_data(at("rep/d.raw"), "", 4);
	write_data(at("rep-out.raw"), "", 4);
	write_text(nhdr, "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 2 2\n"
		   "encoding: raw\ndata file: d.raw\n");
	read_ok(nhdr, &n);
	ck_assert_ptr_null(n.ids);
	parload__nrrd_free(&n);
	ck_assert_int_eq(parload__nrrd_read(nhdr, PARLOAD_SRC_CONFINE, &n,
					    &err),
			 0);
	ck_assert_ptr_nonnull(n.ids);
	ck_assert_int_eq(stat(n.paths[0], &st), 0);
	ck_assert_int_eq(parload__nrrd_opened(&n, 0, &st, &err), 0);
	/* Replaced by a link out of the directory after the check. */
	ck_assert_int_eq(unlink(at("rep/d.raw")), 0);
	ck_assert_int_eq(symlink("../rep-out.raw", at("rep/d.raw")), 0);
	ck_assert_int_ge(fd = open(n.paths[0], O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	ck_assert_int_eq(parload__nrrd_opened(&n, 0, &st, &err),
			 PARLOAD_EOPEN);
	ck_assert_msg(strstr(err.message, "r.nhdr: line 6: data file '"),
		      "%s", err.message);
	ck_assert_msg(strstr(err.message, "d.raw': not the file checked"),
		      "%s", err.message);
	parload__nrrd_free(&n);
	/* Now outside: refused at the check. */
	load_fails(nhdr, 1, PARLOAD_SRC_CONFINE, PARLOAD_EOPEN, "outside",
		   NULL);
	/* 70 files opened by the workers, each its own. */
	ck_assert_ptr_nonnull(f = fopen(nhdr, "w"));
	fprintf(f, "NRRD0004\ntype: uint8\ndimension: 3\nsizes: 2 2 70\n"
		"encoding: raw\ndata file: LIST\n");
	for (int i = 0; i < 70; i++) {
		fprintf(f, "r%02d.raw\n", i);
		snprintf(path, sizeof(path), "rep/r%02d.raw", i);
		write_data(at(path), "", 2 * 2);
	}
	ck_assert_int_eq(fclose(f), 0);
	{
		parload_loader *l = NULL;
		parload_options o;
		parload_request req;
		parload_dataset ds;
		int rc;

		parload_options_init(&o);
		o.threads = 4;
		ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
		parload_request_init(&req);
		req.source.path = nhdr;
		req.source.flags = PARLOAD_SRC_CONFINE;
		rc = parload_loader_run(l, &req, &ds, &err);
		ck_assert_msg(rc == 0, "%s", err.message);
		ck_assert_uint_eq(ds.desc.count, 70);
		parload_dataset_free(&ds);
		parload_loader_free(l);
	}
}
END_TEST

/* ---- the writer ---- */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static parload_desc layout(int type, int enc, uint64_t count,
			   uint64_t offset)
{
	parload_desc d;

	parload_desc_init(&d);
	d.width = 3;
	d.height = 2;
	d.pixel_type = type;
	d.encoding = (parload_encoding)enc;
	d.count = count;
	d.offset = offset;
	return d;
}

/* Write the header, read it back: the same layout, the same files. */
static void round_trip(const char *nhdr, const parload_desc *d,
		       const char *const *files, size_t nfiles)
{
	parload_error err;
	parload__nrrd n;
	char a[PATH_MAX], b[PATH_MAX];
	int rc = parload_nrrd_write(nhdr, d, files, nfiles, &err);

	ck_assert_msg(rc == 0, "%s", err.message);
	read_ok(nhdr, &n);
	ck_assert_uint_eq(n.desc.width, d->width);
	ck_assert_uint_eq(n.desc.height, d->height);
	ck_assert_uint_eq(n.desc.count, d->count);
	ck_assert_int_eq(n.desc.pixel_type, d->pixel_type);
	ck_assert_int_eq(n.desc.encoding, d->encoding);
	ck_assert_uint_eq(n.desc.offset, d->offset + (d->count == 1 ?
						      d->header : 0));
	ck_assert_uint_eq(n.desc.header, 0);
	ck_assert_uint_eq(n.n, nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		ck_assert_ptr_nonnull(realpath(files[i], a));
		ck_assert_ptr_nonnull(realpath(n.paths[i], b));
		ck_assert_str_eq(a, b);
	}
	parload__nrrd_free(&n);
}

START_TEST(test_write_round_trip)
{
	const char *one[1], *two[2];
	parload_desc d;
	char text[4096];
	FILE *f;

	ck_assert_int_eq(mkdir(at("w"), 0755), 0);
	ck_assert_int_eq(mkdir(at("w/sub"), 0755), 0);
	/* One file of three big-endian views after 128 bytes. */
	d = layout(PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 3, 128);
	write_data(one[0] = at("w/a.raw"), "", 128 + 3 * 12);
	round_trip(at("w/a.nhdr"), &d, one, 1);
	/* Two files of two views each, in a subdirectory: LIST. */
	d = layout(PARLOAD_PIXEL_F32, PARLOAD_ENC_LE, 4, 0);
	write_data(two[0] = at("w/sub/b0.raw"), "", 2 * 24);
	write_data(two[1] = at("w/sub/b1.raw"), "", 2 * 24);
	round_trip(at("w/b.nhdr"), &d, two, 2);
	ck_assert_ptr_nonnull(f = fopen(at("w/b.nhdr"), "r"));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	ck_assert_msg(strstr(text, "\ndata file: LIST 3\nsub/b0.raw\n"
			     "sub/b1.raw\n"), "%s", text);
	ck_assert_ptr_null(strstr(text, scratch));
	/* One view with a header of its own: the byte skip passes it. */
	d = layout(PARLOAD_PIXEL_I32, PARLOAD_ENC_LE, 1, 8);
	d.header = 16;
	d.gap = 5;
	write_data(one[0] = at("w/c.raw"), "", 8 + 16 + 24);
	round_trip(at("w/c.nhdr"), &d, one, 1);
	/* A file outside the header's directory: absolute.  A one-byte type:
	 * no endian line. */
	d = layout(PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, 2, 0);
	write_data(one[0] = at("outside.raw"), "", 12);
	round_trip(at("w/sub/d.nhdr"), &d, one, 1);
	ck_assert_ptr_nonnull(f = fopen(at("w/sub/d.nhdr"), "r"));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\ndata file: /"));
	ck_assert_ptr_null(strstr(text, "endian"));
	/* The name "LIST" goes in a LIST of its own. */
	d = layout(PARLOAD_PIXEL_F64, PARLOAD_ENC_BE, 2, 0);
	write_data(one[0] = at("w/LIST"), "", 2 * 48);
	round_trip(at("w/e.nhdr"), &d, one, 1);
	ck_assert_int_eq(count_entries(at("w")), 8);
}
END_TEST

/* What NRRD cannot express: refused, nothing left behind. */
START_TEST(test_write_refusals)
{
	const char *file = at("r/x.raw"), *files[2] = {file, file};
	const char *nhdr = at("r/x.nhdr");
	parload_error err;
	parload_desc d;

	ck_assert_int_eq(mkdir(at("r"), 0755), 0);
	write_data(file, "", 100);
	d = layout(PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 2, 0);
	d.header = 32;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "header"));
	d.header = 0;
	d.gap = 4;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "gap"));
	d = layout(PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P, 2, 0);
	d.width = 4;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "mono12p"));
	d = layout(PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 3, 0);
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 2, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "evenly"));
	d.count = 0;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err),
			 PARLOAD_EINVAL);
	d.count = 2;
	files[0] = at("r/missing.raw");
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 2, &err),
			 PARLOAD_EOPEN);
	ck_assert_ptr_nonnull(strstr(err.message, "missing.raw"));
	files[0] = file;
	ck_assert_int_eq(parload_nrrd_write(at("nodir/x.nhdr"), &d, files, 1,
					    &err),
			 PARLOAD_EOPEN);
	/* Files that do not hold their share: two views of 12 bytes in
	 * each of two files of 100 bytes; 9 views in one. */
	d.count = 4;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 2, &err),
			 PARLOAD_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err.message, "same number of views"));
	d.count = 9;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err),
			 PARLOAD_ETRUNCATED);
	d.count = 8;
	ck_assert_int_eq(parload_nrrd_write(nhdr, &d, files, 1, &err), 0);
	ck_assert_int_eq(unlink(nhdr), 0);
	/* Only the data file remains. */
	ck_assert_int_eq(count_entries(at("r")), 1);
}
END_TEST

/* ---- corruption ---- */

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return (uint32_t)(*s >> 33);
}

/* 500 random corruptions of a valid header (bytes changed, bytes
 * inserted, the text cut short): each read returns 0 or a code with its
 * message, and holds nothing after a failure. */
START_TEST(test_corruptions)
{
	static const char valid[] =
		"NRRD0004\n# c\ntype: unsigned short\ndimension: 3\n"
		"space directions: (1,0,0) (0,1,0) (0,0,1)\nsizes: 2 2 2\n"
		"endian: big\nencoding: raw\nbyte skip: 0\nline skip: 0\n"
		"k:=v\ndata file: LIST 2\nz0.raw\nz1.raw\n";
	static const char alphabet[] = ":= \n#%-0123456789LISTdx\r\t";
	const char *nhdr = at("fuzz.nhdr");
	uint64_t seed = 12345;
	int ok = 0;

	write_data(at("z0.raw"), "", 8);
	write_data(at("z1.raw"), "", 8);
	for (int k = 0; k < 500; k++) {
		char text[sizeof(valid) + 16];
		size_t len = sizeof(valid) - 1;
		parload_error err;
		parload__nrrd n;
		int rc;

		memcpy(text, valid, len);
		for (int e = 1 + (int)(rnd(&seed) % 3); e > 0; e--) {
			size_t at_ = rnd(&seed) % len;

			switch (rnd(&seed) % 4) {
			case 0: text[at_] = (char)rnd(&seed); break;
			case 1: text[at_] = alphabet[rnd(&seed) %
						     (sizeof(alphabet) - 1)];
				break;
			case 2:
				memmove(text + at_ + 1, text + at_, len - at_);
				text[at_] = alphabet[rnd(&seed) %
						     (sizeof(alphabet) - 1)];
				len++;
				break;
			default: len = at_ + 1; break;
			}
		}
		FILE *f = fopen(nhdr, "wb");

		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(text, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
		rc = parload__nrrd_read(nhdr, 0, &n, &err);
		ck_assert_msg(rc <= 0, "corruption %d: %d", k, rc);
		if (rc == 0) {
			ck_assert_uint_ge(n.n, 1);
			ck_assert_ptr_nonnull(n.paths);
			parload__nrrd_free(&n);
			ok++;
			continue;
		}
		ck_assert_int_eq(err.code, rc);
		/* The header or the data file it names. */
		ck_assert_msg(strstr(err.message, scratch), "%s",
			      err.message);
		ck_assert_ptr_null(n.paths);
	}
	/* Some corruptions (a comment, a blank) leave a valid header. */
	ck_assert_int_gt(ok, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nrrd");
	TCase *read = tcase_create("read");
	TCase *bad = tcase_create("refused");
	TCase *write = tcase_create("write");

	tcase_add_test(read, test_types);
	tcase_add_test(read, test_2d_byte_skip);
	tcase_add_test(read, test_case_comments_ignored);
	tcase_add_test(read, test_list);
	tcase_add_test(read, test_list_slabs);
	tcase_add_test(read, test_pattern);
	tcase_add_test(read, test_byte_skip_end);
	tcase_add_test(read, test_line_skip);
	tcase_add_test(read, test_attached);
	tcase_add_test(read, test_load);
	tcase_add_test(bad, test_bad_gzip);
	tcase_add_test(bad, test_bad_unknown_field);
	tcase_add_test(bad, test_bad_no_sizes);
	tcase_add_test(bad, test_bad_no_endian);
	tcase_add_test(bad, test_bad_dimension);
	tcase_add_test(bad, test_bad_magic);
	tcase_add_test(bad, test_bad_empty_list);
	tcase_add_test(bad, test_bad_step);
	tcase_add_test(bad, test_bad_type);
	tcase_add_test(bad, test_bad_structure);
	tcase_add_test(bad, test_bad_files);
	tcase_add_test(bad, test_missing_data_file);
	tcase_add_test(bad, test_names_escaped);
	tcase_add_test(bad, test_confine);
	tcase_add_test(bad, test_confine_replaced);
	tcase_add_test(bad, test_corruptions);
	tcase_add_test(write, test_write_round_trip);
	tcase_add_test(write, test_write_refusals);
	suite_add_tcase(s, read);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, write);
	return s;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	int failed;

	snprintf(scratch, sizeof(scratch), "%s/parload-nrrd-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	scratch_owner = getpid();
	atexit(remove_scratch);
	failed = tu_run(suite()) != EXIT_SUCCESS;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
