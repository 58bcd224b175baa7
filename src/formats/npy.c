/*
 * npy.c - NumPy's .npy (numpy.save), read and written: an array of 2
 * dimensions (one view: rows, cols) or 3 (views, rows, cols) in C order
 * is a raw layout at the offset its header ends at, so the engine reads
 * it with every feature and no code of its own.
 *
 * The file: "\x93NUMPY", the format version (1.0, 2.0, 3.0), the
 * header's length (16 bits little-endian for 1.0, 32 bits after), then
 * the header, a Python dict literal: {'descr': '<u2', 'fortran_order':
 * False, 'shape': (3, 4, 5), } padded with spaces to a newline.  Every
 * count in it is checked against the file's size before anything is
 * sized by it; the data itself is fitted to the file as any raw layout's
 * (source.c: a file cut short is PARLOAD_ETRUNCATED naming the view and
 * its byte offset).
 */
#include "formats/formats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "\x93NUMPY"
#define MAX_HEADER ((uint64_t)1 << 20) /* bytes of header text read */

/* One header being read. */
typedef struct npy {
	const unsigned char *b;
	size_t n, at;         /* its bytes, their count, the next one's */
	const char *path;
	parload_error *err;
	int type, enc, dims;
	bool descr, order, shaped;
	uint64_t shape[3];
} npy;

static int bad(npy *h, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(npy *h, int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = parload__vfail(h->err, code, 0, h->path, PARLOAD_NONE, h->at,
			    fmt, ap);
	va_end(ap);
	return rc;
}

static void blanks(npy *h)
{
	while (h->at < h->n && (h->b[h->at] == ' ' || h->b[h->at] == '\t' ||
				h->b[h->at] == '\n' || h->b[h->at] == '\r'))
		h->at++;
}

/* The next byte, past blanks, is c: taken. */
static bool take(npy *h, char c)
{
	blanks(h);
	if (h->at < h->n && h->b[h->at] == (unsigned char)c) {
		h->at++;
		return true;
	}
	return false;
}

/* A quoted string (either quote, no escapes) into s (cap bytes). */
static int string(npy *h, char *s, size_t cap)
{
	size_t k = 0;
	unsigned char q;

	blanks(h);
	if (h->at >= h->n || (h->b[h->at] != '\'' && h->b[h->at] != '"'))
		return bad(h, PARLOAD_ECONTAINER, "a .npy header: a string "
			   "expected");
	q = h->b[h->at++];
	while (h->at < h->n && h->b[h->at] != q && h->b[h->at] != '\\' &&
	       k + 1 < cap)
		s[k++] = (char)h->b[h->at++];
	s[k] = '\0';
	if (h->at >= h->n || h->b[h->at] != q)
		return bad(h, PARLOAD_ECONTAINER, "a .npy header: a string "
			   "not closed, or longer than %zu bytes", cap - 1);
	h->at++;
	return 0;
}

/* NumPy's type codes of parload's pixel types. */
static const struct {
	char kind;
	unsigned size;
	int type;
} types[] = {
	{ 'u', 1, PARLOAD_PIXEL_U8 },  { 'u', 2, PARLOAD_PIXEL_U16 },
	{ 'i', 2, PARLOAD_PIXEL_I16 }, { 'u', 4, PARLOAD_PIXEL_U32 },
	{ 'i', 4, PARLOAD_PIXEL_I32 }, { 'f', 4, PARLOAD_PIXEL_F32 },
	{ 'f', 8, PARLOAD_PIXEL_F64 },
};

/* 'descr': '<u2' ('|' or '=' or either order for one byte). */
static int descr(npy *h)
{
	char s[16];
	const size_t at = h->at;
	int rc = string(h, s, sizeof(s));

	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
		char want[8];

		snprintf(want, sizeof(want), "%c%u", types[i].kind,
			 types[i].size);
		if (strlen(s) < 2 || !strchr("<>|=", s[0]) ||
		    strcmp(s + 1, want) != 0 ||
		    (s[0] == '|' && types[i].size > 1))
			continue;
		h->type = types[i].type;
		h->enc = s[0] == '>' && types[i].size > 1 ? PARLOAD_ENC_BE :
							    PARLOAD_ENC_LE;
		return 0;
	}
	h->at = at;
	return bad(h, PARLOAD_ENOTSUP, "a .npy of dtype '%s': parload reads "
		   "u1, u2, i2, u4, i4, f4 and f8 (either byte order)",
		   PARLOAD__Q(s));
}

static int order(npy *h)
{
	blanks(h);
	if (h->n - h->at >= 5 && memcmp(h->b + h->at, "False", 5) == 0) {
		h->at += 5;
		return 0;
	}
	if (h->n - h->at >= 4 && memcmp(h->b + h->at, "True", 4) == 0)
		return bad(h, PARLOAD_ENOTSUP, "a .npy in Fortran order "
			   "(fortran_order True): parload reads C order "
			   "(numpy.ascontiguousarray, then numpy.save)");
	return bad(h, PARLOAD_ECONTAINER, "a .npy header: fortran_order is "
		   "neither True nor False");
}

/* A dimension: decimal digits, at least 1, fitting 64 bits. */
static int dimension(npy *h, uint64_t *v)
{
	const size_t at = (blanks(h), h->at);

	*v = 0;
	while (h->at < h->n && h->b[h->at] >= '0' && h->b[h->at] <= '9')
		if (__builtin_mul_overflow(*v, 10, v) ||
		    __builtin_add_overflow(*v, h->b[h->at++] - '0', v))
			return bad(h, PARLOAD_ECONTAINER, "a .npy header: a "
				   "dimension past 64 bits");
	if (h->at == at)
		return bad(h, PARLOAD_ECONTAINER, "a .npy header: a "
			   "dimension expected");
	if (*v == 0)
		return bad(h, PARLOAD_ENOTSUP, "an empty .npy array (a "
			   "dimension of 0): nothing to load");
	return 0;
}

/* 'shape': (V, R, C) or (R, C), a trailing comma allowed. */
static int shape(npy *h)
{
	uint64_t v;
	int rc;

	if (!take(h, '('))
		return bad(h, PARLOAD_ECONTAINER, "a .npy header: the shape "
			   "is not a tuple");
	for (h->dims = 0; !take(h, ')'); h->dims++) {
		if (h->dims == 3)
			return bad(h, PARLOAD_ENOTSUP, "a .npy array of more "
				   "than 3 dimensions: parload reads 2 (one "
				   "view) or 3 (views, rows, columns)");
		if ((rc = dimension(h, &v)) != 0)
			return rc;
		h->shape[h->dims] = v;
		if (!take(h, ',') && (blanks(h), h->at < h->n) &&
		    h->b[h->at] != ')')
			return bad(h, PARLOAD_ECONTAINER, "a .npy header: "
				   "',' or ')' expected in the shape");
	}
	if (h->dims < 2)
		return bad(h, PARLOAD_ENOTSUP, "a .npy array of %d "
			   "dimension%s: parload reads 2 (one view) or 3 "
			   "(views, rows, columns)", h->dims,
			   h->dims == 1 ? "" : "s");
	return 0;
}

/* One "'key': value" of the dict. */
static int entry(npy *h)
{
	char key[32];
	int rc = string(h, key, sizeof(key));

	if (rc == 0 && !take(h, ':'))
		rc = bad(h, PARLOAD_ECONTAINER, "a .npy header: ':' expected");
	if (rc)
		return rc;
	if (strcmp(key, "descr") == 0 && !h->descr)
		return h->descr = true, descr(h);
	if (strcmp(key, "fortran_order") == 0 && !h->order)
		return h->order = true, order(h);
	if (strcmp(key, "shape") == 0 && !h->shaped)
		return h->shaped = true, shape(h);
	return bad(h, PARLOAD_ECONTAINER, "a .npy header: key '%s' unknown "
		   "or given twice", PARLOAD__Q(key));
}

/* The dict, and only blanks after it. */
static int dict(npy *h)
{
	int rc = 0;

	if (!take(h, '{'))
		return bad(h, PARLOAD_ECONTAINER, "a .npy header is not a "
			   "dict");
	while (rc == 0 && !take(h, '}')) {
		rc = entry(h);
		if (rc == 0 && !take(h, ',') && (blanks(h), h->at < h->n) &&
		    h->b[h->at] != '}')
			rc = bad(h, PARLOAD_ECONTAINER, "a .npy header: ',' or "
				 "'}' expected");
		if (rc == 0 && h->at >= h->n)
			rc = bad(h, PARLOAD_ECONTAINER, "a .npy header ends "
				 "inside its dict");
	}
	blanks(h);
	if (rc == 0 && h->at < h->n)
		rc = bad(h, PARLOAD_ECONTAINER, "a .npy header: bytes after "
			 "its dict");
	if (rc == 0 && !(h->descr && h->order && h->shaped))
		rc = bad(h, PARLOAD_ECONTAINER, "a .npy header without '%s'",
			 !h->descr ? "descr" :
			 !h->order ? "fortran_order" : "shape");
	return rc;
}

/* The preamble: magic, version, the header's length; *off where the
 * header begins, *len its bytes. */
/* The header's length after the preamble of b: 2 bytes little-endian in
 * version 1.0, 4 in 2.0 and 3.0. */
static uint64_t header_len(const unsigned char *b)
{
	uint64_t len = (uint64_t)b[8] | (uint64_t)b[9] << 8;

	return b[6] == 1 ? len :
			   len | (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
}

static int preamble(npy *h, uint64_t size, size_t *off, uint64_t *len)
{
	const unsigned char *b = h->b;

	if (h->n < 8 || memcmp(b, MAGIC, 6) != 0)
		return bad(h, h->n < 8 && h->n == size ? PARLOAD_ETRUNCATED :
							 PARLOAD_EMAGIC,
			   "not a .npy file: no \\x93NUMPY magic");
	if (b[6] < 1 || b[6] > 3 || b[7] != 0)
		return bad(h, PARLOAD_ENOTSUP, "a .npy of format version "
			   "%u.%u: parload reads 1.0, 2.0 and 3.0", b[6], b[7]);
	*off = b[6] == 1 ? 10 : 12;
	if (h->n < *off) {
		h->at = h->n;
		return bad(h, PARLOAD_ETRUNCATED, "a .npy file ends inside "
			   "its preamble");
	}
	*len = header_len(b);
	h->at = *off;
	if (*len > MAX_HEADER)
		return bad(h, PARLOAD_ECONTAINER, "a .npy header of %" PRIu64
			   " bytes: parload reads at most %" PRIu64, *len,
			   MAX_HEADER);
	if (*off + *len > size)
		return bad(h, PARLOAD_ETRUNCATED, "a .npy header of %" PRIu64
			   " bytes, but the file ends %" PRIu64 " bytes "
			   "after its preamble", *len, size - *off);
	return 0;
}

/* The array h's dictionary describes, its data at byte at, as a raw
 * layout: views of its last two dimensions. */
static int as_layout(npy *h, uint64_t at, parload_desc *d)
{
	const uint64_t rows = h->shape[h->dims - 2], cols = h->shape[h->dims - 1];
	int rc;

	if (rows > UINT32_MAX || cols > UINT32_MAX)
		return bad(h, PARLOAD_ENOTSUP, "a .npy view of %" PRIu64
			   " x %" PRIu64 ": parload's rows and columns are "
			   "32-bit", rows, cols);
	parload_desc_init(d);
	d->format = PARLOAD_FORMAT_RAW;
	d->pixel_type = h->type;
	d->encoding = (parload_encoding)h->enc;
	d->offset = at;
	d->count = h->dims == 3 ? h->shape[0] : 1;
	d->height = (uint32_t)rows;
	d->width = (uint32_t)cols;
	if ((rc = parload_desc_check(d, h->err)) != 0)
		parload__error_prefix(h->err, h->path);
	return rc;
}

int parload__npy_parse(const unsigned char *b, size_t n, uint64_t size,
		       const char *path, parload_desc *d, parload_error *err)
{
	npy h = { .b = b, .n = n, .path = path, .err = err };
	uint64_t len = 0;
	size_t off = 0;
	int rc = preamble(&h, size, &off, &len);

	if (rc)
		return rc;
	if (n < off + len) {
		h.at = n;
		return bad(&h, PARLOAD_ETRUNCATED, "a .npy header of %" PRIu64
			   " bytes ends past the %zu bytes read", len, n);
	}
	h.n = off + (size_t)len;
	return (rc = dict(&h)) != 0 ? rc : as_layout(&h, off + len, d);
}

/* ---- the driver ---- */

/* The file's first bytes: the preamble, then as much as it says. */
static int read_head(int fd, const char *path, uint64_t size,
		     unsigned char **b, size_t *n, parload_error *err)
{
	parload__io_stats io = { 0, 0 };
	unsigned char pre[12];
	const size_t k = (size_t)PARLOAD__MIN(size, sizeof(pre));
	uint64_t len = 0;
	int rc;

	rc = parload__pread_full(fd, pre, k, 0, PARLOAD__DEFAULT_MAX_READ, &io,
				 path, PARLOAD_NONE, err);
	if (rc == 0 && k >= 10 && memcmp(pre, MAGIC, 6) == 0)
		len = pre[6] == 1 ? (uint64_t)pre[8] | (uint64_t)pre[9] << 8 :
		      k < 12	  ? 0 :
				    (uint64_t)pre[8] | (uint64_t)pre[9] << 8 |
				    (uint64_t)pre[10] << 16 |
				    (uint64_t)pre[11] << 24;
	/* What the preamble says, bounded by the file and the limit (the
	 * parser says why it is too long). */
	*n = (size_t)PARLOAD__MIN(size, k + PARLOAD__MIN(len, MAX_HEADER));
	if (rc == 0 && !(*b = parload__sys_malloc(*n ? *n : 1)))
		rc = parload__fail_nomem(err, path);
	if (rc == 0)
		rc = parload__pread_full(fd, *b, *n, 0,
					 PARLOAD__DEFAULT_MAX_READ, &io, path,
					 PARLOAD_NONE, err);
	return rc;
}

/* c's files: path alone. */
static int one_file(parload__container *c, const char *path,
		    parload_error *err)
{
	c->paths = parload__sys_calloc(1, sizeof(char *));
	if (!c->paths || !(c->paths[0] = parload__sys_strdup(path)))
		return parload__fail_nomem(err, path);
	c->n = 1;
	return 0;
}

static int npy_describe(const parload_source *src, parload__described *out,
			parload_error *err)
{
	const char *path = parload__source_path(src);
	unsigned char *b = NULL;
	struct stat st;
	size_t n = 0;
	int fd, rc = 0;

	fd = parload__sys_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return parload__fail_open(err, errno, path);
	if (parload__sys_fstat(fd, &st) != 0)
		rc = parload__fail_path(err, PARLOAD_EIO, errno, path, NULL);
	else if (!S_ISREG(st.st_mode))
		rc = parload__fail_path(err, PARLOAD_ENOTREG, 0, path,
					"a .npy file is a regular file, not a "
					"%s", parload__file_kind(st.st_mode));
	if (rc == 0)
		rc = read_head(fd, path, (uint64_t)st.st_size, &b, &n, err);
	parload__sys_close(fd);
	if (rc == 0)
		rc = parload__npy_parse(b, n, (uint64_t)st.st_size, path,
					&out->got.desc, err);
	parload__sys_free(b);
	return rc ? rc : one_file(&out->got, path, err);
}

/* ---- writing: format 1.0, its data on a multiple of 64 bytes ---- */

/* The header of st in buf (at least 256 bytes): its length. */
static size_t header(const parload_stack *st, char *buf, size_t cap)
{
	const char *type = parload_pixel_name(st->pixel_type);
	const unsigned bpp = (unsigned)parload_pixel_size(st->pixel_type);
	size_t n, len;

	/* "u16" is '<u2': NumPy's kind letters are parload's (u, i, f). */
	n = (size_t)snprintf(buf + 10, cap - 10,
			     "{'descr': '%c%c%u', 'fortran_order': False, "
			     "'shape': (%" PRIu64 ", %" PRIu32 ", %" PRIu32
			     "), }", bpp == 1 ? '|' : '<', type[0], bpp,
			     st->n, st->rows, st->cols);
	len = (10 + n + 1 + 63) / 64 * 64;
	memset(buf + 10 + n, ' ', len - 10 - n - 1);
	buf[len - 1] = '\n';
	memcpy(buf, MAGIC "\x01\x00", 8);
	buf[8] = (char)((len - 10) & 0xff);
	buf[9] = (char)((len - 10) >> 8);
	return len;
}

/* tmp is the empty file parload_temp_create made: opened without O_TRUNC
 * (on ext4 a file truncated at its opening has its dirty pages sent to
 * the disk by the close). */
static int npy_write(const char *tmp, const char *path,
		     const parload_stack *st, const parload_save_options *o,
		     parload_error *err)
{
	const uint64_t bytes = st->n * st->rows * st->cols *
			       parload_pixel_size(st->pixel_type);
	char buf[256];
	const size_t len = header(st, buf, sizeof(buf));
	const int fd = parload__sys_open(tmp, O_WRONLY | O_CLOEXEC);
	int rc;

	(void)o;
	if (fd < 0)
		return parload__fail_path(err, PARLOAD_EWRITE, errno, path,
					  "cannot write");
	rc = parload__write_full(fd, buf, len, path, err);
	if (rc == 0)
		rc = parload__write_full(fd, st->pixels, (size_t)bytes, path, err);
	if (parload__sys_close(fd) != 0 && rc == 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, path,
					"cannot write");
	return rc;
}

static bool npy_magic(const unsigned char *b, size_t n)
{
	return n >= 6 && memcmp(b, MAGIC, 6) == 0;
}

static const char *const npy_exts[] = { ".npy", NULL };

const parload__driver parload__driver_npy = {
	.name = "npy",
	.title = "NumPy .npy",
	.format = PARLOAD_FORMAT_RAW,
	.magic = npy_magic,
	.exts = npy_exts,
	.describe = npy_describe,
	.save = PARLOAD_SAVE_NPY,
	.write = npy_write,
};
