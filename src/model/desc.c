/*
 * desc.c - layout descriptions: where a source's views lie and how their
 * pixels are stored.  Every load works from one (parload's own format is
 * the description its file header makes); this file checks them, derives
 * their sizes, and reads and writes their text form
 * ("width=2048,height=2048,type=u16be,header=512").  Pure functions, but
 * for "@PATH", which reads the text from a file.
 */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- types: a pixel type and an encoding, by name ---- */

/* Bits of one stored pixel of a packed encoding (0: not packed). */
static unsigned packed_bits(int enc)
{
	switch (enc) {
	case PARLOAD_ENC_MONO12P:
	case PARLOAD_ENC_MONO12PACKED:
	case PARLOAD_ENC_U12MSB:
		return 12;
	case PARLOAD_ENC_MONO10P:
		return 10;
	default:
		return 0;
	}
}

static const char *const packed_names[PARLOAD_ENC_COUNT_] = {
	[PARLOAD_ENC_MONO12P] = "mono12p",
	[PARLOAD_ENC_MONO12PACKED] = "mono12packed",
	[PARLOAD_ENC_U12MSB] = "u12msb",
	[PARLOAD_ENC_MONO10P] = "mono10p",
};

unsigned parload__packed_bits(int encoding)
{
	return packed_bits(encoding);
}

const char *parload_type_name(int pixel_type, int encoding)
{
	/* The big-endian names: the pixel types' names, "be" after them. */
	static const char *const be[] = {
#define BE_NAME(name, value, text, size) [value] = text "be",
		PARLOAD_PIXEL_MAP(BE_NAME)
#undef BE_NAME
	};

	if (!parload_pixel_size(pixel_type))
		return NULL;
	/* One byte has no order: u8 either way. */
	if (encoding == PARLOAD_ENC_LE ||
	    (encoding == PARLOAD_ENC_BE && pixel_type == PARLOAD_PIXEL_U8))
		return parload_pixel_name(pixel_type);
	if (encoding == PARLOAD_ENC_BE)
		return be[pixel_type];
	if (packed_bits(encoding) && pixel_type == PARLOAD_PIXEL_U16)
		return packed_names[encoding];
	return NULL;
}

int parload_type_from_name(const char *name, int *pixel_type, int *encoding)
{
	char base[8];
	size_t n;

	if (!name || !pixel_type || !encoding)
		return PARLOAD_EINVAL;
	for (int e = 0; e < PARLOAD_ENC_COUNT_; e++)
		if (packed_names[e] && strcmp(name, packed_names[e]) == 0) {
			*pixel_type = PARLOAD_PIXEL_U16;
			*encoding = e;
			return 0;
		}
	n = strlen(name);
	*encoding = PARLOAD_ENC_LE;
	if (n > 2 && (strcmp(name + n - 2, "le") == 0 ||
		      strcmp(name + n - 2, "be") == 0)) {
		if (name[n - 2] == 'b')
			*encoding = PARLOAD_ENC_BE;
		n -= 2;
	}
	if (n >= sizeof(base))
		return PARLOAD_EINVAL;
	memcpy(base, name, n);
	base[n] = '\0';
	*pixel_type = parload_pixel_from_name(base);
	/* One byte has no order: u8be is u8. */
	if (*pixel_type == PARLOAD_PIXEL_U8)
		*encoding = PARLOAD_ENC_LE;
	return *pixel_type > 0 ? 0 : PARLOAD_EINVAL;
}

/* ---- a description: defaults, checks, derived sizes ---- */

void parload_desc_init(parload_desc *d)
{
	if (!d)
		return;
	memset(d, 0, sizeof(*d));
	d->format = PARLOAD_FORMAT_RAW;
	d->pixel_type = PARLOAD_PIXEL_U16;
	d->encoding = PARLOAD_ENC_LE;
}

void parload_desc_from_header(parload_desc *d, const parload_file_header *h)
{
	memset(d, 0, sizeof(*d));
	d->format = PARLOAD_FORMAT_PARLOAD;
	d->width = h->width;
	d->height = h->height;
	d->pixel_type = h->pixel_type;
	d->encoding = PARLOAD_ENC_LE;
	d->offset = PARLOAD_FILE_HEADER_SIZE;
	d->header = PARLOAD_VIEW_HEADER_SIZE;
	d->count = h->view_count;
	d->flags = (h->flags & PARLOAD_FLAG_CRC32C) ? PARLOAD_DESC_CRC32C : 0;
	(void)parload_desc_check(d, NULL);
}

static int bad(parload_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(parload_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = parload__vfail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
			    PARLOAD_NONE, fmt, ap);
	va_end(ap);
	return rc;
}

/* a + b in 64 bits, or false (a * b: parload__mul_ok). */
static bool add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

static int check_type(const parload_desc *d, parload_error *err)
{
	const unsigned bits = packed_bits(d->encoding);

	const bool container = parload_format_is_container(d->format);

	if ((int)d->format != PARLOAD_FORMAT_PARLOAD &&
	    (int)d->format != PARLOAD_FORMAT_RAW && !container)
		return bad(err, "layout: unknown format %d", (int)d->format);
	/* A container's rows lie where its table says, whole bytes each. */
	if (container && (d->offset || d->header || d->gap || bits))
		return bad(err, "layout: a container's description (TIFF, HDF5, Zarr) has no "
			   "offset, header, gap or packed pixels");
	if (!parload_type_name(d->pixel_type, d->encoding))
		return bad(err, "layout: pixel type %d with encoding %d is not "
			   "a type parload reads", d->pixel_type,
			   (int)d->encoding);
	if (d->width == 0 || d->height == 0)
		return bad(err, "layout: width and height must be > 0 "
			   "(width %" PRIu32 ", height %" PRIu32 ")",
			   d->width, d->height);
	if (bits && (uint64_t)d->width * bits % 8 != 0)
		return bad(err, "layout: a row of %" PRIu32 " %s pixels is %"
			   PRIu64 " bits, not whole bytes (width must be a "
			   "multiple of %u)",
			   d->width, packed_names[d->encoding],
			   (uint64_t)d->width * bits, bits == 12 ? 2 : 4);
	if (d->format == PARLOAD_FORMAT_PARLOAD &&
	    (d->encoding != PARLOAD_ENC_LE ||
	     d->header != PARLOAD_VIEW_HEADER_SIZE || d->gap != 0))
		return bad(err, "layout: parload's own format has %d-byte "
			   "little-endian view headers and no gaps",
			   PARLOAD_VIEW_HEADER_SIZE);
	if (d->flags & ~PARLOAD_DESC_CRC32C ||
	    (d->flags && d->format != PARLOAD_FORMAT_PARLOAD))
		return bad(err, "layout: flags 0x%x do not apply", d->flags);
	return 0;
}

int parload_desc_check(parload_desc *d, parload_error *err)
{
	const unsigned bits = packed_bits(d ? d->encoding : 0);
	uint64_t row, payload, record, all;
	int rc;

	if (!d)
		return bad(err, "no layout description");
	rc = check_type(d, err);
	if (rc)
		return rc;
	d->bytes_per_pixel = parload_pixel_size(d->pixel_type);
	row = bits ? (uint64_t)d->width * bits / 8 :
		     (uint64_t)d->width * d->bytes_per_pixel;
	if (!parload__mul_ok(row, d->height, &payload) ||
	    !add_ok(payload, d->header, &record) ||
	    !add_ok(record, d->gap, &record) ||
	    !parload__mul_ok(record, d->count, &all) ||
	    !add_ok(all, d->offset, &all) ||
	    /* The dataset's pixels: width x height x bytes_per_pixel. */
	    !parload__mul_ok((uint64_t)d->width * d->height,
			     d->bytes_per_pixel, &all))
		return parload__fail(err, PARLOAD_EOVERFLOW, 0, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "layout: sizes overflow 64 bits");
	d->row_size = row;
	d->payload_size = payload;
	d->record_size = record;
	return 0;
}

/* ---- the text form ---- */

int parload_size_parse(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	if (!s || !out || *s < '0' || *s > '9')
		return PARLOAD_EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno && errno != ERANGE)
		return PARLOAD_EINVAL;
	if (*end) {
		/* & ~0x20 folds k, m, g, t to upper case. */
		u = strchr(units, *end & ~0x20);
		if (!u || !*u || (end[1] && strcmp(end + 1, "iB") != 0))
			return PARLOAD_EINVAL;
		shift = 10 * (int)(u - units + 1);
	}
	/* Well formed, but past 64 bits: a size all the same, too large. */
	if (errno == ERANGE || (shift && v > (UINT64_MAX >> shift)))
		return PARLOAD_EOVERFLOW;
	*out = (uint64_t)v << shift;
	return 0;
}

enum { K_WIDTH, K_HEIGHT, K_TYPE, K_OFFSET, K_HEADER, K_GAP, K_COUNT, K_N };

static const char *const key_names[K_N] = {
	"width", "height", "type", "offset", "header", "gap", "count",
};

static int set_key(parload_desc *d, int key, const char *value,
		   parload_error *err)
{
	uint64_t v = 0;
	int t, e, rc;

	if (key == K_TYPE) {
		if (parload_type_from_name(value, &t, &e) != 0)
			return bad(err, "layout: unknown type '%s' (u8 u16 i16 "
				   "u32 i32 f32 f64, each with le or be; "
				   "mono10p mono12p mono12packed u12msb)",
				   PARLOAD__Q(value));
		d->pixel_type = t;
		d->encoding = (parload_encoding)e;
		return 0;
	}
	rc = parload_size_parse(value, &v);
	if (rc == PARLOAD_EOVERFLOW)
		return parload__fail(err, PARLOAD_EOVERFLOW, 0, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "layout: %s=%s overflows 64 bits",
				     key_names[key], value);
	if (rc)
		return bad(err, "layout: %s=%s is not a size (digits, then "
			   "optionally K, M, G or T)", key_names[key],
			   PARLOAD__Q(value));
	if ((key == K_WIDTH || key == K_HEIGHT) && (v == 0 || v > UINT32_MAX))
		return bad(err, "layout: %s=%s must be between 1 and %" PRIu32,
			   key_names[key], PARLOAD__Q(value), UINT32_MAX);
	switch (key) {
	case K_WIDTH: d->width = (uint32_t)v; break;
	case K_HEIGHT: d->height = (uint32_t)v; break;
	case K_OFFSET: d->offset = v; break;
	case K_HEADER: d->header = v; break;
	case K_GAP: d->gap = v; break;
	default: d->count = v; break;
	}
	return 0;
}

/* One "key=value" pair, trimmed; seen collects the keys given. */
static int parse_pair(parload_desc *d, char *pair, unsigned *seen,
		      parload_error *err)
{
	char *eq = strchr(pair, '='), *key = pair, *value;
	int k;

	if (!eq)
		return bad(err, "layout: '%s' is not key=value",
			   PARLOAD__Q(pair));
	*eq = '\0';
	value = eq + 1;
	for (k = 0; k < K_N && strcmp(key, key_names[k]) != 0; k++)
		;
	if (k == K_N)
		return bad(err, "layout: unknown key '%s' (width, height, "
			   "type, offset, header, gap, count)",
			   PARLOAD__Q(key));
	if (*seen & (1u << k))
		return bad(err, "layout: %s given twice", key);
	*seen |= 1u << k;
	return set_key(d, k, value, err);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Pairs separated by commas or newlines, '#' to the end of a line a
 * comment; text is modified. */
static int parse_text(char *text, parload_desc *d, parload_error *err)
{
	unsigned seen = 0;
	char *line, *save = NULL;
	int rc = 0;

	for (line = strtok_r(text, "\n", &save); rc == 0 && line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *pair, *s2 = NULL;

		if (hash)
			*hash = '\0';
		for (pair = strtok_r(line, ",", &s2); rc == 0 && pair;
		     pair = strtok_r(NULL, ",", &s2))
			if (*(pair = trim(pair)))
				rc = parse_pair(d, pair, &seen, err);
	}
	if (rc)
		return rc;
	for (int k = K_WIDTH; k <= K_TYPE; k++)
		if (!(seen & (1u << k)))
			return bad(err, "layout: %s is missing (width, height "
				   "and type are needed)", key_names[k]);
	return parload_desc_check(d, err);
}

/* The text of "@PATH": the file, at most 64 KiB. */
static int read_spec_file(const char *path, char **out, parload_error *err)
{
	const size_t max = 64 << 10;
	char *buf = parload__sys_malloc(max + 1);
	ssize_t n;
	size_t len = 0;
	int fd;

	if (!buf)
		return parload__fail_nomem(err, path);
	fd = parload__sys_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		parload__sys_free(buf);
		return parload__fail_open(err, errno, path);
	}
	while (len < max &&
	       ((n = parload__sys_read(fd, buf + len, max - len)) > 0 ||
		(n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	if (n < 0 || len == max) {
		int e = errno;

		(void)parload__sys_close(fd);
		parload__sys_free(buf);
		return parload__fail_path(err, n < 0 ? PARLOAD_EIO :
					  PARLOAD_EINVAL, n < 0 ? e : 0, path,
					  n < 0 ? "cannot read the layout" :
					  "a layout file is at most 64 KiB");
	}
	(void)parload__sys_close(fd);
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int parload_desc_parse(const char *text, parload_desc *out,
		       parload_error *err)
{
	parload_desc d;
	char *copy = NULL;
	int rc;

	if (!text || !out)
		return bad(err, "no layout text");
	parload_desc_init(&d);
	if (text[0] == '@')
		rc = read_spec_file(text + 1, &copy, err);
	else
		rc = (copy = parload__sys_strdup(text)) ?
			     0 :
			     parload__fail_nomem(err, NULL);
	if (rc == 0)
		rc = parse_text(copy, &d, err);
	/* Name the file the text came from. */
	if (rc && text[0] == '@' && err && err->code == PARLOAD_EINVAL &&
	    strncmp(err->message, "layout:", 7) == 0)
		parload__error_prefix(err, text + 1);
	parload__sys_free(copy);
	if (rc == 0)
		*out = d;
	return rc;
}

int parload_desc_format(const parload_desc *d, char *buf, size_t size)
{
	const char *type = d ? parload_type_name(d->pixel_type, d->encoding) :
			       NULL;
	int n;

	if (!type)
		return snprintf(buf, size, "%s", "");
	n = snprintf(buf, size, "width=%" PRIu32 ",height=%" PRIu32
		     ",type=%s,offset=%" PRIu64 ",header=%" PRIu64
		     ",gap=%" PRIu64, d->width, d->height, type, d->offset,
		     d->header, d->gap);
	if (n >= 0 && d->count) {
		size_t used = (size_t)n < size ? (size_t)n : size;
		int m = snprintf(buf ? buf + used : NULL, size - used,
				 ",count=%" PRIu64, d->count);

		n = m < 0 ? m : n + m;
	}
	return n;
}

size_t parload__file_of(const parload__file *files, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	/* The last file whose first view is at most v. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (files[mid].first <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
