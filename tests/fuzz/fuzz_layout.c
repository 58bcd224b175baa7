/*
 * fuzz_layout.c - libFuzzer harness for layout descriptions and the plan
 * over them.
 *
 * Each input is used three ways:
 *
 *   as text           parload_desc_parse (never "@PATH": no file is read)
 *                     must return 0 or a code of the table with a
 *                     NUL-terminated message naming it; a description it
 *                     accepts is valid, and parload_desc_format writes
 *                     text that parses back to the same description;
 *   as raw fields     parload_desc_check over any width, height, type,
 *                     encoding, offset, header, gap and count: 0 only
 *                     when a model in 128-bit arithmetic says the sizes
 *                     fit (and then the derived sizes are the model's),
 *                     else PARLOAD_EINVAL or PARLOAD_EOVERFLOW;
 *   as a small stream a description (every type, both byte orders, the
 *                     packed formats), 1 to 4 files of records in memory
 *                     (the last gap of a file sometimes missing), the
 *                     bytes of those files, and a selection: the plan of
 *                     that selection, split between 1 to 4 workers, is
 *                     walked by every share's cursor; every buffer must
 *                     lie inside its file and inside the dataset's arrays,
 *                     a row to convert must be one whole file row, and the
 *                     result (through parload__convert_get for swapped
 *                     and packed rows) must equal the harness's own
 *                     slicing and unpacking, from the formulas of
 *                     parload.h.
 *
 * Seeds: `fuzz_layout -write_seeds=DIR` writes descriptions of each kind
 * and exits (see `make fuzz`).
 *
 * Built by `make fuzz` as fuzz_header is, with src/model/desc.c, src/model/convert.c,
 * src/model/plan.c, src/model/select.c, src/model/format.c and src/base/errors.c.
 */
#include "internal.h"
#include "fuzz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The input, read a byte (or 8) at a time; zeros once it runs out. */
typedef struct bytes {
	const uint8_t *p;
	size_t n, at;
} bytes;

static unsigned take8(bytes *b)
{
	return b->at < b->n ? b->p[b->at++] : 0;
}

static uint64_t take64(bytes *b)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | take8(b);
	return v;
}

static void check_code(int rc, const parload_error *err)
{
	REQUIRE(rc <= 0 && rc > PARLOAD_ERRNO_LAST_);
	if (rc == 0)
		return;
	REQUIRE(err->code == rc);
	REQUIRE(memchr(err->message, '\0', sizeof(err->message)) != NULL);
	REQUIRE(err->message[0] != '\0');
}

/* ---- (a) the text form ---- */

static bool same_desc(const parload_desc *a, const parload_desc *b)
{
	return a->format == b->format && a->width == b->width &&
	       a->height == b->height && a->pixel_type == b->pixel_type &&
	       a->encoding == b->encoding && a->offset == b->offset &&
	       a->header == b->header && a->gap == b->gap &&
	       a->count == b->count && a->record_size == b->record_size;
}

static void fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), back[512];
	parload_desc d, d2;
	parload_error err;
	int rc, n;

	REQUIRE(text);
	memcpy(text, data, size);
	text[size] = '\0';
	if (text[0] == '@')
		text[0] = '#'; /* a comment, not a file to read */
	memset(&err, 0xa5, sizeof(err));
	rc = parload_desc_parse(text, &d, &err);
	check_code(rc, &err);
	free(text);
	if (rc)
		return;
	REQUIRE(d.format == PARLOAD_FORMAT_RAW);
	REQUIRE(parload_desc_check(&d, NULL) == 0);
	n = parload_desc_format(&d, back, sizeof(back));
	REQUIRE(n > 0 && (size_t)n < sizeof(back));
	REQUIRE(parload_desc_parse(back, &d2, &err) == 0);
	REQUIRE(same_desc(&d, &d2));
}

/* ---- (b) any fields: the checks against a model ---- */

static unsigned model_size(int t)
{
	static const unsigned size[] = { 0, 1, 2, 2, 4, 4, 4, 8 };

	return t > 0 && t < 8 ? size[t] : 0;
}

static unsigned model_bits(int e)
{
	return e >= PARLOAD_ENC_MONO12P && e <= PARLOAD_ENC_U12MSB ? 12 :
	       e == PARLOAD_ENC_MONO10P ? 10 : 0;
}

static void fuzz_fields(bytes *b)
{
	parload_desc d;
	parload_error err;
	u128 row, record, all;
	unsigned bits, bpp;
	bool valid;
	int rc;

	parload_desc_init(&d);
	d.width = (uint32_t)take64(b);
	d.height = (uint32_t)take64(b);
	d.pixel_type = (int)(take8(b) % 10) - 1;
	d.encoding = (parload_encoding)((int)(take8(b) % 8) - 1);
	d.offset = take64(b);
	d.header = take64(b);
	d.gap = take64(b);
	d.count = take64(b);
	bits = model_bits(d.encoding);
	bpp = model_size(d.pixel_type);
	valid = bpp && d.width && d.height &&
		(d.encoding == PARLOAD_ENC_LE ||
		 (d.encoding == PARLOAD_ENC_BE) ||
		 (bits && d.pixel_type == PARLOAD_PIXEL_U16)) &&
		(!bits || (uint64_t)d.width * bits % 8 == 0);
	memset(&err, 0xa5, sizeof(err));
	rc = parload_desc_check(&d, &err);
	check_code(rc, &err);
	if (!valid) {
		REQUIRE(rc == PARLOAD_EINVAL);
		return;
	}
	/* Each below 2^128: record is checked before it multiplies. */
	row = bits ? (u128)d.width * bits / 8 : (u128)d.width * bpp;
	record = row * d.height + d.header + d.gap;
	all = record > UINT64_MAX ? record : record * d.count + d.offset;
	/* The dataset's pixels too: width x height x bytes per pixel. */
	if (row * d.height > UINT64_MAX || record > UINT64_MAX ||
	    all > UINT64_MAX || (u128)d.width * d.height * bpp > UINT64_MAX) {
		REQUIRE(rc == PARLOAD_EOVERFLOW);
		return;
	}
	REQUIRE(rc == 0);
	REQUIRE(d.bytes_per_pixel == bpp && d.row_size == row &&
		d.payload_size == row * d.height && d.record_size == record);
}

/* ---- (c) a stream in memory, the plan over it ---- */

static const struct {
	int type, enc;
} types[] = {
	{ PARLOAD_PIXEL_U8, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_I16, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_U32, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_I32, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_F32, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_F64, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_F64, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12PACKED },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_U12MSB },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO10P },
};

#define MAX_FILES 4

typedef struct model {
	parload_desc d;
	parload__file files[MAX_FILES];
	uint8_t *mem[MAX_FILES]; /* each file's bytes */
	size_t nfiles;
	uint64_t views;
} model;

/* Pixel c of a stored row, by the formulas of parload.h. */
static uint64_t model_pixel(const model *m, const uint8_t *row, uint64_t c)
{
	const unsigned bpp = m->d.bytes_per_pixel;
	const uint8_t *b;
	uint64_t v = 0;

	switch (m->d.encoding) {
	case PARLOAD_ENC_MONO12P:
		b = row + 3 * (c / 2);
		return c % 2 ? (b[1] >> 4 | b[2] << 4) : (b[0] | (b[1] & 15) << 8);
	case PARLOAD_ENC_MONO12PACKED:
		b = row + 3 * (c / 2);
		return c % 2 ? (b[2] << 4 | b[1] >> 4) : (b[0] << 4 | (b[1] & 15));
	case PARLOAD_ENC_U12MSB:
		b = row + 3 * (c / 2);
		return c % 2 ? ((b[1] & 15) << 8 | b[2]) : (b[0] << 4 | b[1] >> 4);
	case PARLOAD_ENC_MONO10P:
		b = row + 5 * (c / 4);
		switch (c % 4) {
		case 0: return b[0] | (b[1] & 0x03) << 8;
		case 1: return b[1] >> 2 | (b[2] & 0x0F) << 6;
		case 2: return b[2] >> 4 | (b[3] & 0x3F) << 4;
		default: return b[3] >> 6 | b[4] << 2;
		}
	default:
		for (unsigned i = 0; i < bpp; i++)
			v |= (uint64_t)row[c * bpp + i] <<
			     8 * (m->d.encoding == PARLOAD_ENC_BE ? bpp - 1 - i :
								    i);
		return v;
	}
}

/* A description and its files from the input; false when it is not
 * valid (its refusal is checked). */
static bool make_model(bytes *b, model *m)
{
	const int t = (int)(take8(b) % (sizeof(types) / sizeof(types[0])));
	const unsigned bits = model_bits(types[t].enc);
	const unsigned wb = take8(b);
	parload_error err;
	uint64_t first = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	parload_desc_init(&m->d);
	m->d.pixel_type = types[t].type;
	m->d.encoding = (parload_encoding)types[t].enc;
	/* Mostly whole bytes; now and then a packed row that is not. */
	m->d.width = bits == 12 ? 2 * (1 + wb % 16) - (wb >= 240) :
		     bits == 10 ? 4 * (1 + wb % 8) - (wb >= 240) :
				  1 + wb % 24;
	m->d.height = 1 + take8(b) % 8;
	m->d.offset = take8(b) % 80;
	m->d.header = take8(b) % 48;
	m->d.gap = take8(b) % 24;
	memset(&err, 0xa5, sizeof(err));
	rc = parload_desc_check(&m->d, &err);
	check_code(rc, &err);
	if (bits && (uint64_t)m->d.width * bits % 8) {
		REQUIRE(rc == PARLOAD_EINVAL);
		return false;
	}
	REQUIRE(rc == 0);
	m->nfiles = 1 + take8(b) % MAX_FILES;
	for (size_t f = 0; f < m->nfiles; f++) {
		const unsigned v = take8(b);
		parload__file *fl = &m->files[f];
		/* The last record's gap may be missing. */
		const bool cut = v & 0x80;

		fl->fd = -1;
		fl->first = first;
		fl->views = v % 4;
		fl->size = m->d.offset + fl->views * m->d.record_size -
			   (cut && fl->views ? m->d.gap : 0);
		m->mem[f] = malloc(fl->size + 1);
		REQUIRE(m->mem[f]);
		for (uint64_t i = 0; i < fl->size; i++)
			m->mem[f][i] = (uint8_t)(take8(b) ^ (i * 131 + f));
		first += fl->views;
	}
	m->views = m->d.count = first;
	return first > 0;
}

static void free_model(model *m)
{
	for (size_t f = 0; f < m->nfiles; f++)
		free(m->mem[f]);
}

/* Where stream view v's record begins: its file and offset. */
static const uint8_t *model_record(const model *m, uint64_t v)
{
	size_t f = 0;

	while (v >= m->files[f].first + m->files[f].views)
		f++;
	return m->mem[f] + m->d.offset +
	       (v - m->files[f].first) * m->d.record_size;
}

/* A valid selection from the input and its shape, by the harness. */
static void make_selection(bytes *b, const model *m, parload_selection *sel,
			   parload_shape *want)
{
	const uint64_t v0 = take8(b) % m->views;
	const uint64_t v1 = v0 + 1 + take8(b) % (m->views - v0);
	const uint64_t step = 1 + take8(b) % 3;
	const uint32_t r0 = take8(b) % m->d.height;
	const uint32_t r1 = r0 + 1 + take8(b) % (m->d.height - r0);
	const uint32_t c0 = take8(b) % m->d.width;
	const uint32_t c1 = c0 + 1 + take8(b) % (m->d.width - c0);

	parload_selection_init(sel);
	sel->views.start = (int64_t)v0;
	sel->views.stop = (int64_t)v1;
	sel->views.step = (int64_t)step;
	sel->rows.start = r0;
	sel->rows.stop = r1;
	sel->cols.start = c0;
	sel->cols.stop = c1;
	sel->layout = (parload_layout)(take8(b) & 1);
	memset(want, 0, sizeof(*want));
	want->views = (v1 - v0 + step - 1) / step;
	want->view_start = v0;
	want->view_step = step;
	want->row_start = r0;
	want->rows = r1 - r0;
	want->col_start = c0;
	want->cols = c1 - c0;
	want->layout = sel->layout;
	want->bytes_per_pixel = m->d.bytes_per_pixel;
	want->view_bytes = (uint64_t)want->rows * want->cols *
			   m->d.bytes_per_pixel;
}

/* The dataset's arrays, each exactly its size. */
typedef struct arrays {
	uint8_t *px, *raw;
	uint64_t pb, hb;
} arrays;

static bool inside(const uint8_t *p, uint64_t len, const uint8_t *a,
		   uint64_t n)
{
	return p >= a && len <= n && (uint64_t)(p - a) <= n - len;
}

/* One batch of the cursor, read as parallel.c reads it: every buffer
 * inside its file and the arrays; rows converted whole, or, with the
 * plan's in_place, pixels converted where they land. */
static void read_batch(const parload__plan *p, const model *m,
		       const arrays *a, const struct iovec *iov,
		       const bool *rows, int cnt, uint64_t off,
		       const parload__file *f)
{
	const size_t fi = (size_t)(f - m->files);

	REQUIRE(fi < m->nfiles);
	for (int k = 0; k < cnt; k++) {
		const uint64_t len = iov[k].iov_len;
		uint8_t *dst = iov[k].iov_base;

		REQUIRE(off + len <= f->size);
		if (rows[k] && p->in_place) {
			/* Whole units read into place (a packed piece into
			 * the tail of its place), converted there: the
			 * place is inside the pixel array. */
			const uint64_t out = len / p->unit_in * p->unit_out;

			REQUIRE(p->convert && len % p->unit_in == 0);
			REQUIRE(inside(dst - (out - len), out, a->px, a->pb));
			memcpy(dst, m->mem[fi] + off, len);
			parload__piece_convert(p, &iov[k], dst);
		} else if (rows[k]) {
			const uint64_t out = (uint64_t)p->s->cols *
					     m->d.bytes_per_pixel;

			REQUIRE(p->convert && len == m->d.row_size);
			REQUIRE(inside(dst, out, a->px, a->pb));
			p->convert(dst, m->mem[fi] + off, p->s->col_start,
				   p->s->cols);
		} else if (dst) {
			REQUIRE(inside(dst, len, a->px, a->pb) ||
				inside(dst, len, a->raw, a->hb));
			memcpy(dst, m->mem[fi] + off, len);
		}
		off += len;
	}
}

/* What the dataset must hold, by the harness's slicing. */
static void check_result(const model *m, const parload_shape *s,
			 const arrays *a, bool raw)
{
	const unsigned bpp = m->d.bytes_per_pixel;

	for (uint64_t k = 0; k < s->views; k++) {
		const uint8_t *rec = model_record(m, parload_shape_view(s, k));

		if (raw)
			REQUIRE(memcmp(a->raw + k * m->d.header, rec,
				       m->d.header) == 0);
		for (uint64_t y = 0; y < s->rows; y++) {
			const uint8_t *row = rec + m->d.header +
					     (s->row_start + y) * m->d.row_size;
			const uint64_t at = s->layout == PARLOAD_LAYOUT_VIEWS ?
				(k * s->rows + y) * s->cols :
				(y * s->views + k) * s->cols;

			for (uint64_t c = 0; c < s->cols; c++) {
				uint64_t v = model_pixel(m, row,
							 s->col_start + c);

				for (unsigned i = 0; i < bpp; i++)
					REQUIRE(a->px[(at + c) * bpp + i] ==
						(uint8_t)(v >> 8 * i));
			}
		}
	}
}

/* Walk share sh of plan p to its end, reading as parallel.c does. */
static void walk(const parload__plan *p, const parload__share *sh,
		 const model *m, const arrays *a, size_t max_bytes)
{
	struct iovec iov[16];
	bool rows[16];
	const parload__file *f;
	parload__cursor c;
	uint64_t off;
	int cnt;

	parload__cursor_init(&c, p, sh);
	while ((cnt = parload__cursor_next(&c, iov, rows, 16, max_bytes, &off,
					   &f)) > 0)
		read_batch(p, m, a, iov, rows, cnt, off, f);
}

static void fuzz_plan(const model *m, const parload_shape *s, bool raw,
		      unsigned n, size_t max_bytes)
{
	arrays a = { NULL, NULL, s->views * s->view_bytes,
		     raw ? s->views * m->d.header : 0 };
	parload__share sh[4];
	parload__plan p;

	a.px = malloc(a.pb);
	a.raw = malloc(a.hb + 1);
	REQUIRE(a.px && a.raw);
	memset(a.px, 0xa5, a.pb);
	parload__plan_init(&p, &m->d, m->files, m->nfiles, raw, s);
	parload__plan_views(&p, 0, s->views, NULL, raw ? a.raw : NULL, a.px);
	parload__plan_split(&p, n, 64, sh);
	for (unsigned w = 0; w < n; w++)
		walk(&p, &sh[w], m, &a, max_bytes);
	check_result(m, s, &a, raw);
	free(a.px);
	free(a.raw);
}

static void fuzz_stream(bytes *b)
{
	parload_selection sel;
	parload_shape s, want;
	parload_error err;
	model m;
	bool raw;
	unsigned n;
	size_t max_bytes;

	if (!make_model(b, &m)) {
		free_model(&m);
		return;
	}
	make_selection(b, &m, &sel, &want);
	raw = take8(b) & 1;
	n = 1 + take8(b) % 4;
	max_bytes = 16 + take8(b) * 8;
	REQUIRE(parload_selection_resolve(&m.d, &sel, &s, &err) == 0);
	REQUIRE(s.views == want.views && s.view_start == want.view_start &&
		(s.views == 1 || s.view_step == want.view_step) &&
		s.row_start == want.row_start && s.rows == want.rows &&
		s.col_start == want.col_start && s.cols == want.cols &&
		s.layout == want.layout && s.view_bytes == want.view_bytes);
	fuzz_plan(&m, &s, raw, n, max_bytes);
	free_model(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bytes b = { data, size, 0 };

	fuzz_text(data, size);
	fuzz_fields(&b);
	b.at = 0;
	fuzz_stream(&b);
	return 0;
}

/* ---- seeds ---- */

static void write_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"width=2048,height=2048,type=u16,header=512",
		"width=14,height=3,type=mono12p,offset=7,header=3,gap=2",
		"width=12,height=2,type=mono10p,count=4",
		"width=16,height=4,type=mono12packed,offset=1K",
		"width=6,height=5,type=u12msb,gap=9\n# a comment\ncount=2",
		"width=33,height=7,type=f64be,offset=64,header=32",
		"width=5,height=1,type=i32le,header=1M,gap=2GiB",
		"width=4294967295,height=4294967295,type=f64",
		"width=3,height=2,type=mono12p",
		"width=1,height=1,type=u8,width=2",
	};
	char path[4096];
	unsigned n = 0;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/desc-%zu", dir, i);
		f = fopen(path, "wb");
		if (!f || fputs(seeds[i], f) < 0 || fclose(f) != 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			exit(1);
		}
		n++;
	}
	printf("fuzz_layout: wrote %u seeds to %s\n", n, dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char opt[] = "-write_seeds=";

	for (int i = 1; i < *argc; i++)
		if (strncmp((*argv)[i], opt, sizeof(opt) - 1) == 0) {
			write_seeds((*argv)[i] + sizeof(opt) - 1);
			exit(0);
		}
	return 0;
}
