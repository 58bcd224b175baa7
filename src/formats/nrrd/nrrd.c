/*
 * nrrd.c - NRRD detached headers (.nhdr): the layout and the data files
 * they name.
 *
 * A header is the magic line (NRRD0001 to NRRD0005), then "field: value"
 * lines, "key:=value" lines (ignored) and '#' comments, up to a blank line
 * or the end of the file.  Field names are matched without regard to case,
 * as are the type, endian and encoding values.  The fields parload needs
 * (type, dimension 2 or 3, sizes, endian, encoding raw, byte skip, line
 * skip, data file) become a raw layout: one view per slice along the
 * slowest axis, each file read from the same offset.  The descriptive
 * fields (space, spacings, kinds, ...) are accepted and ignored; any other
 * field is PARLOAD_ENOTSUP.  Without "data file" the data follows the
 * header in the same file (an attached header).  docs/libparload.3 lists
 * what is read and what is refused.
 */
#include "formats/nrrd/nrrd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- values ---- */

/* s[0..n) as a decimal number with an optional '-': false if it is not
 * one or does not fit. */
static bool parse_int(const char *s, size_t n, bool sign, int64_t *out)
{
	uint64_t v = 0;
	bool neg = sign && n && *s == '-';
	size_t i = neg;

	if (i == n)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

static bool parse_count(const char *s, int64_t *out)
{
	return parse_int(s, strlen(s), false, out);
}

/* A token of a value: where it starts and its length. */
typedef struct tok {
	const char *s;
	size_t n;
} tok;

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The blank-separated tokens of s, at most max; max + 1 if there are
 * more. */
static int split(const char *s, tok *t, int max)
{
	int k = 0;

	for (;;) {
		while (blank(*s))
			s++;
		if (!*s)
			return k;
		if (k == max)
			return max + 1;
		t[k].s = s;
		while (*s && !blank(*s))
			s++;
		t[k].n = (size_t)(s - t[k].s);
		k++;
	}
}

/* s lowercased, runs of blanks made one space, into buf; false if it does
 * not fit. */
static bool normalize(const char *s, char *buf, size_t size)
{
	size_t k = 0;

	for (; *s; s++) {
		char c = blank(*s) ? ' ' : *s;

		if (c == ' ' && (k == 0 || buf[k - 1] == ' '))
			continue;
		if (k + 1 >= size)
			return false;
		buf[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	while (k && buf[k - 1] == ' ')
		k--;
	buf[k] = '\0';
	return true;
}

/* ---- the fields ---- */

static int f_dimension(hdr *h, char *v)
{
	int64_t d;

	if (!parse_count(v, &d) || d < 1)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a dimension "
			    "(a number, at least 1)", PARLOAD__Q(v));
	if (d != 2 && d != 3)
		return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "dimension %" PRId64 " is not "
			    "supported: parload reads 2 (one view) or 3 "
			    "(views along the slowest axis)", d);
	h->dim = (int)d;
	return 0;
}

static int f_sizes(hdr *h, char *v)
{
	tok t[3];
	int k = split(v, t, 3);

	if (!h->dim)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "sizes before dimension: the "
			    "dimension field comes first");
	if (k != h->dim)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not %d sizes",
			    PARLOAD__Q(v), h->dim);
	for (int i = 0; i < k; i++) {
		int64_t s;

		if (!parse_int(t[i].s, t[i].n, false, &s) || s < 1 ||
		    (i < 2 && s > UINT32_MAX))
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "size %d of '%s' is not "
				    "a number between 1 and %s", i + 1,
				    PARLOAD__Q(v),
				    i < 2 ? "4294967295" : "2^63");
		h->sizes[i] = (uint64_t)s;
	}
	return 0;
}

static const struct type_name {
	const char *name;
	int type; /* 0: a NRRD type parload does not read */
} type_names[] = {
	{"uchar", PARLOAD_PIXEL_U8}, {"unsigned char", PARLOAD_PIXEL_U8},
	{"uint8", PARLOAD_PIXEL_U8}, {"uint8_t", PARLOAD_PIXEL_U8},
	{"short", PARLOAD_PIXEL_I16}, {"short int", PARLOAD_PIXEL_I16},
	{"signed short", PARLOAD_PIXEL_I16},
	{"signed short int", PARLOAD_PIXEL_I16},
	{"int16", PARLOAD_PIXEL_I16}, {"int16_t", PARLOAD_PIXEL_I16},
	{"ushort", PARLOAD_PIXEL_U16}, {"unsigned short", PARLOAD_PIXEL_U16},
	{"unsigned short int", PARLOAD_PIXEL_U16},
	{"uint16", PARLOAD_PIXEL_U16}, {"uint16_t", PARLOAD_PIXEL_U16},
	{"int", PARLOAD_PIXEL_I32}, {"signed int", PARLOAD_PIXEL_I32},
	{"int32", PARLOAD_PIXEL_I32}, {"int32_t", PARLOAD_PIXEL_I32},
	{"uint", PARLOAD_PIXEL_U32}, {"unsigned int", PARLOAD_PIXEL_U32},
	{"uint32", PARLOAD_PIXEL_U32}, {"uint32_t", PARLOAD_PIXEL_U32},
	{"float", PARLOAD_PIXEL_F32}, {"double", PARLOAD_PIXEL_F64},
	{"signed char", 0}, {"int8", 0}, {"int8_t", 0},
	{"longlong", 0}, {"long long", 0}, {"long long int", 0},
	{"signed long long", 0}, {"signed long long int", 0},
	{"int64", 0}, {"int64_t", 0},
	{"ulonglong", 0}, {"unsigned long long", 0},
	{"unsigned long long int", 0}, {"uint64", 0}, {"uint64_t", 0},
	{"block", 0},
};

static int f_type(hdr *h, char *v)
{
	char name[32];

	if (normalize(v, name, sizeof(name)))
		for (size_t i = 0; i < sizeof(type_names) / sizeof(*type_names);
		     i++) {
			if (strcmp(name, type_names[i].name) != 0)
				continue;
			if (!type_names[i].type)
				return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "type %s is not "
					    "supported: parload reads u8, "
					    "i16, u16, i32, u32, float and "
					    "double", PARLOAD__Q(v));
			h->type = type_names[i].type;
			return 0;
		}
	return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a NRRD type",
		    PARLOAD__Q(v));
}

static int f_endian(hdr *h, char *v)
{
	if (strcasecmp(v, "little") == 0)
		h->endian = PARLOAD_ENC_LE;
	else if (strcasecmp(v, "big") == 0)
		h->endian = PARLOAD_ENC_BE;
	else
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is neither little nor "
			    "big", PARLOAD__Q(v));
	return 0;
}

static int f_encoding(hdr *h, char *v)
{
	static const char *const others[] = {
		"txt", "text", "ascii", "hex", "gz", "gzip", "bz2", "bzip2",
		"zrl",
	};

	if (strcasecmp(v, "raw") == 0) {
		h->raw = true;
		return 0;
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		if (strcasecmp(v, others[i]) == 0)
			return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "encoding %s is not "
				    "supported: parload reads raw",
				    PARLOAD__Q(v));
	return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a NRRD encoding",
		    PARLOAD__Q(v));
}

static int f_byte_skip(hdr *h, char *v)
{
	if (!parse_int(v, strlen(v), true, &h->byte_skip) || h->byte_skip < -1)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a byte count "
			    "(or -1: the data ends the file)", PARLOAD__Q(v));
	return 0;
}

static int f_line_skip(hdr *h, char *v)
{
	int64_t n;

	if (!parse_count(v, &n))
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a line count",
			    PARLOAD__Q(v));
	h->line_skip = (uint64_t)n;
	return 0;
}

/* "FORMAT MIN MAX STEP [SUBDIM]": the pattern's numbers, checked. */
static int pattern_numbers(hdr *h, const tok *t, int k, char *v)
{
	int64_t n[4] = {0, 0, 0, 0};
	bool is_signed = true;

	for (int i = 1; i < k; i++)
		if (!parse_int(t[i].s, t[i].n, true, &n[i - 1]) ||
		    n[i - 1] < INT_MIN || n[i - 1] > INT_MAX)
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' of '%s' is not "
				    "an int", PARLOAD__QN(t[i].s, t[i].n),
				    PARLOAD__Q(v));
	((char *)t[0].s)[t[0].n] = '\0';
	if (!parload__nrrd_one_conversion(t[0].s, &is_signed))
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a file name "
			    "format with one integer conversion (%%d)",
			    PARLOAD__Q(t[0].s));
	if (n[2] == 0)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "the pattern '%s' has step 0",
			    PARLOAD__Q(t[0].s));
	if ((n[2] > 0 && n[0] > n[1]) || (n[2] < 0 && n[0] < n[1]))
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' names no files: step %"
			    PRId64 " does not lead from %" PRId64 " to %"
			    PRId64, PARLOAD__Q(v), n[2], n[0], n[1]);
	if (k == 5 && (n[3] < 1 || n[3] > 3))
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "subdim %" PRId64 " of '%s' is "
			    "not a dimension", n[3], PARLOAD__Q(v));
	if (!is_signed && (n[0] < 0 || n[1] < 0))
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s': an unsigned conversion "
			    "of a negative number", PARLOAD__Q(v));
	h->name = t[0].s;
	h->first = n[0], h->last = n[1], h->step = n[2];
	h->subdim = k == 5 ? (int)n[3] : 0;
	h->form = DF_PATTERN;
	return 0;
}

static bool all_numbers(const tok *t, int from, int k)
{
	int64_t x;

	for (int i = from; i < k; i++)
		if (!parse_int(t[i].s, t[i].n, true, &x))
			return false;
	return true;
}

/* The three forms: "LIST [SUBDIM]" (the names follow, one a line), a
 * pattern "FORMAT MIN MAX STEP [SUBDIM]", or one file name. */
static int f_data_file(hdr *h, char *v)
{
	tok t[5];
	int k = split(v, t, 5);
	int64_t sub = 0;

	h->df_line = h->line;
	if (k >= 1 && k <= 2 && t[0].n == 4 && memcmp(t[0].s, "LIST", 4) == 0) {
		if (k == 2 && (!parse_int(t[1].s, t[1].n, false, &sub) ||
			       sub < 1 || sub > 3))
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a "
				    "dimension", PARLOAD__QN(t[1].s, t[1].n));
		h->subdim = (int)sub;
		h->form = DF_LIST;
		return 0;
	}
	if ((k == 4 || k == 5) && all_numbers(t, 1, k))
		return pattern_numbers(h, t, k, v);
	if (!*v)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "no file named");
	h->name = v;
	h->form = DF_ONE;
	return 0;
}

static int f_ignored(hdr *h, char *v)
{
	PARLOAD__UNUSED(h);
	PARLOAD__UNUSED(v);
	return 0;
}

typedef int (*field_fn)(hdr *h, char *value);

/* Each field by its names; id: the bit of hdr.seen (aliases share it). */
static const struct field {
	const char *name;
	int id;
	field_fn fn;
} fields[] = {
	{"dimension", 0, f_dimension}, {"type", 1, f_type},
	{"sizes", 2, f_sizes}, {"endian", 3, f_endian},
	{"encoding", 4, f_encoding}, {"byte skip", 5, f_byte_skip},
	{"byteskip", 5, f_byte_skip}, {"line skip", 6, f_line_skip},
	{"lineskip", 6, f_line_skip}, {"data file", 7, f_data_file},
	{"datafile", 7, f_data_file},
	{"space", 8, f_ignored}, {"space dimension", 9, f_ignored},
	{"space units", 10, f_ignored}, {"space origin", 11, f_ignored},
	{"space directions", 12, f_ignored},
	{"measurement frame", 13, f_ignored}, {"spacings", 14, f_ignored},
	{"thicknesses", 15, f_ignored}, {"axis mins", 16, f_ignored},
	{"axismins", 16, f_ignored}, {"axis maxs", 17, f_ignored},
	{"axismaxs", 17, f_ignored}, {"centers", 18, f_ignored},
	{"centerings", 18, f_ignored}, {"labels", 19, f_ignored},
	{"units", 20, f_ignored}, {"kinds", 21, f_ignored},
	{"content", 22, f_ignored}, {"old min", 23, f_ignored},
	{"oldmin", 23, f_ignored}, {"old max", 24, f_ignored},
	{"oldmax", 24, f_ignored}, {"sample units", 25, f_ignored},
	{"sampleunits", 25, f_ignored}, {"min", 26, f_ignored},
	{"max", 27, f_ignored}, {"number", 28, f_ignored},
	{"block size", 29, f_ignored}, {"blocksize", 29, f_ignored},
};

#define ID_DIMENSION 0
#define ID_TYPE 1
#define ID_SIZES 2
#define ID_ENCODING 4

/* One "field: value" line (line is modified). */
static int parse_field(hdr *h, char *line, char *colon)
{
	const size_t len = (size_t)(colon - line);
	char *v = colon + 1, *e;

	*colon = '\0';
	h->field = line;
	while (blank(*v))
		v++;
	e = v + strlen(v);
	while (e > v && blank(e[-1]))
		*--e = '\0';
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++) {
		if (strlen(fields[i].name) != len ||
		    strncasecmp(line, fields[i].name, len) != 0)
			continue;
		if (h->seen & ((uint64_t)1 << fields[i].id))
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "given twice");
		h->seen |= (uint64_t)1 << fields[i].id;
		return fields[i].fn(h, v);
	}
	return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "not a field parload knows");
}

/* ---- the header ---- */

/* After the last line: the fields NRRD requires, then the layout. */
static int finish(hdr *h, parload_desc *d)
{
	static const struct {
		int id;
		const char *name;
	} required[] = {{ID_DIMENSION, "dimension"}, {ID_TYPE, "type"},
			{ID_SIZES, "sizes"}, {ID_ENCODING, "encoding"}};
	int rc;

	h->field = NULL;
	for (size_t i = 0; i < sizeof(required) / sizeof(*required); i++)
		if (!(h->seen & ((uint64_t)1 << required[i].id)))
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "the header ends without "
				    "the field '%s', which NRRD requires",
				    required[i].name);
	if (parload_pixel_size(h->type) > 1 && h->endian < 0)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "the header ends without the "
			    "field 'endian', which NRRD requires for a type "
			    "wider than one byte");
	parload_desc_init(d);
	d->width = (uint32_t)h->sizes[0];
	d->height = (uint32_t)h->sizes[1];
	d->count = h->dim == 3 ? h->sizes[2] : 1;
	d->pixel_type = h->type;
	d->encoding = parload_pixel_size(h->type) > 1 ?
			      (parload_encoding)h->endian :
			      PARLOAD_ENC_LE;
	rc = parload_desc_check(d, h->err);
	if (rc) {
		parload__error_prefix(h->err, h->path);
		return rc;
	}
	rc = parload__nrrd_data_files(h, d->count);
	if (rc == 0 && (h->flags & PARLOAD_SRC_CONFINE))
		rc = parload__nrrd_confine(h);
	return rc ? rc : parload__nrrd_offsets(h, d);
}

/* The first line, n bytes: NRRD0001 to NRRD0005. */
static int magic_line(hdr *h, const char *line, size_t n)
{
	if (strncmp(line, "NRRD", 4) != 0)
		return parload__nrrd_fail(h, PARLOAD_EMAGIC, "not a NRRD header: "
					  "the first line is not NRRD0001 ... "
					  "NRRD0005");
	if (n != 8 || strncmp(line, "NRRD000", 7) != 0 || line[7] < '1' ||
	    line[7] > '5')
		return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "NRRD format "
					  "version '%s' is not supported "
					  "(NRRD0001 ... NRRD0005)",
					  PARLOAD__Q(line));
	return 0;
}

/* A line after the first: a comment, "key:=value" (ignored) or a field. */
static int parse_line(hdr *h, char *line)
{
	char *colon = strchr(line, ':');

	if (line[0] == '#' || (colon && colon[1] == '='))
		return 0;
	if (!colon)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' is not a "
					  "'field: value' line",
					  PARLOAD__Q(line));
	if (colon[1] != ' ' && colon[1] != '\0')
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s': no ': ' "
					  "after the field name",
					  PARLOAD__Q(line));
	return parse_field(h, line, colon);
}

/* The lines of the header text buf (len bytes, NUL-terminated at len). */
static int parse_lines(hdr *h, char *buf, size_t len)
{
	size_t pos = 0;
	int rc = 0;

	for (h->line = 1; rc == 0 && pos < len; h->line++) {
		char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		pos += n + (nl != NULL);
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		h->field = NULL;
		if (strlen(line) != n)
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "a NUL byte in the "
				    "header text");
		if (h->line == 1) {
			if ((rc = magic_line(h, line, n)) != 0)
				return rc;
			continue;
		}
		if (n == 0) {
			h->end = pos;
			return 0;
		}
		rc = h->form == DF_LIST ? parload__nrrd_add_path(h, line) :
					  parse_line(h, line);
	}
	h->end = len;
	h->line--; /* the last line */
	return rc;
}

/* The header text: at most MAX_HEADER bytes of path, NUL-terminated. */
static int read_text(hdr *h, char **buf, size_t *len)
{
	parload__io_stats io = {0, 0};
	struct stat st;
	int fd = parload__sys_open(h->path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return parload__fail_open(h->err, errno, h->path);
	if (parload__sys_fstat(fd, &st) != 0)
		rc = parload__fail_path(h->err, PARLOAD_EIO, errno, h->path,
					NULL);
	else if (!S_ISREG(st.st_mode))
		rc = parload__fail_path(h->err, PARLOAD_ENOTREG, 0, h->path,
					"a NRRD header is a regular file, not "
					"a %s", parload__file_kind(st.st_mode));
	*len = rc ? 0 : PARLOAD__MIN((uint64_t)st.st_size, MAX_HEADER);
	if (rc == 0 && !(*buf = parload__sys_malloc(*len + 1)))
		rc = parload__nrrd_nomem(h);
	if (rc == 0)
		rc = parload__pread_full(fd, *buf, *len, 0,
					 PARLOAD__DEFAULT_MAX_READ, &io,
					 h->path, PARLOAD_NONE, h->err);
	parload__sys_close(fd);
	if (rc == 0) {
		(*buf)[*len] = '\0';
		h->end = (uint64_t)st.st_size > MAX_HEADER ? SIZE_MAX : 0;
	} else {
		parload__sys_free(*buf); /* a read that failed */
		*buf = NULL;
	}
	return rc;
}

static void free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		parload__sys_free(paths[i]);
	parload__sys_free(paths);
}

int parload__nrrd_read(const char *path, unsigned flags, parload__nrrd *out,
		       parload_error *err)
{
	hdr h;
	char *buf, *slash;
	size_t len;
	bool longer;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&h, 0, sizeof(h));
	h.path = path;
	h.err = err;
	h.endian = -1;
	h.flags = flags;
	slash = strrchr(path, '/');
	h.dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	rc = read_text(&h, &buf, &len);
	if (rc)
		return rc;
	longer = h.end == SIZE_MAX;
	if (len == 0)
		rc = parload__fail_path(err, PARLOAD_EMAGIC, 0, path,
					"empty: not a NRRD header");
	if (rc == 0)
		rc = parse_lines(&h, buf, len);
	if (rc == 0 && longer && h.end == len)
		rc = parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					"no blank line ends the header in its "
					"first %zu bytes", MAX_HEADER);
	if (rc == 0)
		rc = finish(&h, &out->desc);
	parload__sys_free(buf);
	if (rc) {
		free_paths(h.paths, h.n);
		parload__sys_free(h.ids);
		memset(out, 0, sizeof(*out));
		return rc;
	}
	out->paths = h.paths;
	out->n = h.n;
	out->ids = h.ids;
	out->header = path;
	out->line = h.form == DF_NONE ? 0 : h.df_line;
	out->list = h.form == DF_LIST;
	return 0;
}

void parload__nrrd_free(parload__nrrd *n)
{
	if (!n)
		return;
	free_paths(n->paths, n->n);
	parload__sys_free(n->ids);
	memset(n, 0, sizeof(*n));
}

/* ---- the drivers ---- */

/* The header's lines name the data files in messages. */
static int nrrd_describe(const parload_source *src, parload__described *out,
			 parload_error *err)
{
	parload__nrrd *n = parload__sys_calloc(1, sizeof(*n));
	const char *path = parload__source_path(src);
	int rc;

	if (!n)
		return parload__fail_nomem(err, path);
	rc = parload__nrrd_read(path, src->flags, n, err);
	if (rc) {
		parload__sys_free(n);
		return rc;
	}
	out->state = n;
	out->got.desc = n->desc;
	out->got.paths = n->paths; /* n's: freed with it */
	out->got.n = n->n;
	return 0;
}

static void nrrd_drop(parload__described *d)
{
	parload__nrrd_free(d->state);
	parload__sys_free(d->state);
	memset(&d->got, 0, sizeof(d->got));
}

static int nrrd_file_vfail(const parload__described *d, size_t i,
			   parload_error *err, int code, int sys_errno,
			   const char *fmt, va_list ap)
{
	return parload__nrrd_vfail(d->state, i, err, code, sys_errno, fmt,
				   ap);
}

static int nrrd_file_opened(const parload__described *d, size_t i,
			    const struct stat *st, parload_error *err)
{
	return parload__nrrd_opened(d->state, i, st, err);
}

static bool nrrd_magic(const unsigned char *b, size_t n)
{
	return n >= 7 && memcmp(b, "NRRD000", 7) == 0;
}

static const char *const nhdr_exts[] = { ".nhdr", NULL };
static const char *const nrrd_exts[] = { ".nrrd", NULL };

/* The two rows differ in their names only: the same fields, read by the
 * same parser, whose data follows the header (attached) or lies in the
 * files it names (detached). */
#define NRRD_ROW(id, exts_)                                                    \
	{                                                                      \
		.name = id, .title = "NRRD", .format = PARLOAD_FORMAT_RAW,     \
		.magic = nrrd_magic, .exts = exts_, .describe = nrrd_describe, \
		.drop = nrrd_drop, .file_vfail = nrrd_file_vfail,              \
		.file_opened = nrrd_file_opened,                               \
	}

/* A detached header (.nhdr; parload_nrrd_write writes one, nrrd_write.c,
 * not parload_save). */
const parload__driver parload__driver_nhdr = NRRD_ROW("nhdr", nhdr_exts);
/* An attached header (.nrrd, which teem, ITK and 3D Slicer write). */
const parload__driver parload__driver_nrrd = NRRD_ROW("nrrd", nrrd_exts);
