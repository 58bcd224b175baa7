/*
 * layouts.c - raw layouts written by the tests themselves, and what their
 * loads must deliver (layouts.h).
 */
#include "config.h"

#include "layouts.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

uint64_t lt_rand(uint64_t *state)
{
	/* splitmix64 */
	uint64_t z = (*state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

uint64_t lt_below(uint64_t *state, uint64_t n)
{
	return n ? lt_rand(state) % n : 0;
}

unsigned lt_packed_bits(int e)
{
	switch (e) {
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

static unsigned type_size(int t)
{
	static const unsigned size[] = { 0, 1, 2, 2, 4, 4, 4, 8 };

	/* Not ck_assert: each one that passes costs a write() of its
	 * location to Check's log (mark_point), and this runs for every pixel
	 * written and expected, millions of them. */
	if (t <= 0 || t >= 8)
		ck_abort_msg("pixel type %d: no such type", t);
	return size[t];
}

uint64_t lt_row_bytes(uint32_t w, int t, int e)
{
	const unsigned bits = lt_packed_bits(e);

	return bits ? (uint64_t)w * bits / 8 : (uint64_t)w * type_size(t);
}

void lt_layout(lt_stream *s, uint32_t w, uint32_t h, int type, int enc,
	       uint64_t offset, uint64_t header, uint64_t gap, uint64_t views)
{
	memset(s, 0, sizeof(*s));
	parload_desc_init(&s->d);
	s->d.width = w;
	s->d.height = h;
	s->d.pixel_type = type;
	s->d.encoding = (parload_encoding)enc;
	s->d.offset = offset;
	s->d.header = header;
	s->d.gap = gap;
	s->nfiles = 1;
	s->views[0] = views;
	s->seed = 1;
}

/* Bits of a pixel of s as the file stores it: the packed width, or all
 * of its type's. */
static unsigned value_bits(const lt_stream *s)
{
	const unsigned bits = lt_packed_bits(s->d.encoding);

	return bits ? bits : 8 * type_size(s->d.pixel_type);
}

/* Pixel (v, r, c) of the stream: any bits of its width (value_bits). */
static uint64_t value(const lt_stream *s, unsigned bits, uint64_t v,
		      uint64_t r, uint64_t c)
{
	uint64_t st = s->seed * 1000003u + v * 7919u + r * 131u + c;
	uint64_t x = lt_rand(&st);

	return bits == 64 ? x : x & (((uint64_t)1 << bits) - 1);
}

/* A file in memory, sized before it is written. */
typedef struct buf {
	unsigned char *b;
	size_t n, cap;
} buf;

static void put(buf *o, unsigned char byte)
{
	/* Not ck_assert, which would cost a write() per byte (Check's
	 * mark_point). */
	if (o->n == o->cap)
		ck_abort_msg("the file is longer than its %zu bytes", o->cap);
	o->b[o->n++] = byte;
}

static void put_bytes(buf *o, const unsigned char *p, size_t n)
{
	if (n > o->cap - o->n)
		ck_abort_msg("the file is longer than its %zu bytes", o->cap);
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

/* Two 12-bit pixels into three bytes, each format's formulas inverted. */
static void pack12(buf *o, int e, unsigned p0, unsigned p1)
{
	switch (e) {
	case PARLOAD_ENC_MONO12P:
		put(o, p0 & 0xFF);
		put(o, (p0 >> 8 & 0x0F) | (p1 & 0x0F) << 4);
		put(o, p1 >> 4 & 0xFF);
		break;
	case PARLOAD_ENC_MONO12PACKED:
		put(o, p0 >> 4 & 0xFF);
		put(o, (p0 & 0x0F) | (p1 & 0x0F) << 4);
		put(o, p1 >> 4 & 0xFF);
		break;
	default: /* u12msb */
		put(o, p0 >> 4 & 0xFF);
		put(o, (p0 & 0x0F) << 4 | (p1 >> 8 & 0x0F));
		put(o, p1 & 0xFF);
		break;
	}
}

/* Four 10-bit pixels into five bytes (Mono10p inverted). */
static void pack10(buf *o, const unsigned *p)
{
	put(o, p[0] & 0xFF);
	put(o, (p[0] >> 8 & 0x03) | (p[1] & 0x3F) << 2);
	put(o, (p[1] >> 6 & 0x0F) | (p[2] & 0x0F) << 4);
	put(o, (p[2] >> 4 & 0x3F) | (p[3] & 0x03) << 6);
	put(o, p[3] >> 2 & 0xFF);
}

/* A packed pixel of the reference: u16, little-endian. */
static unsigned u16_at(const unsigned char *row, uint32_t c)
{
	return row[2 * c] | (unsigned)row[2 * c + 1] << 8;
}

/* Row r of view v as the file stores it, from the reference's (the values
 * of value(), little-endian and unpacked). */
static void put_row(buf *o, const lt_stream *s, uint64_t v, uint64_t r)
{
	const int e = s->d.encoding;
	const unsigned bpp = type_size(s->d.pixel_type);
	const uint32_t w = s->d.width;
	const unsigned char *row = s->pixels + v * s->view_bytes +
				   r * w * bpp;

	if (lt_packed_bits(e) == 12) {
		for (uint32_t c = 0; c < w; c += 2)
			pack12(o, e, u16_at(row, c), u16_at(row, c + 1));
		return;
	}
	if (lt_packed_bits(e) == 10) {
		for (uint32_t c = 0; c < w; c += 4) {
			unsigned p[4];

			for (int j = 0; j < 4; j++)
				p[j] = u16_at(row, c + j);
			pack10(o, p);
		}
		return;
	}
	if (e != PARLOAD_ENC_BE) {
		put_bytes(o, row, (size_t)w * bpp);
		return;
	}
	for (uint32_t c = 0; c < w; c++)
		for (unsigned i = 0; i < bpp; i++)
			put(o, row[c * bpp + bpp - 1 - i]);
}

static unsigned char header_byte(uint64_t v, uint64_t i)
{
	return (unsigned char)(v * 29 + i * 7 + 0x5b);
}

/* The reference: the pixels and header bytes of the views written (those
 * past a count too), each pixel's value computed once, here; the files'
 * bytes are then made from it. */
static void reference(lt_stream *s, uint64_t views)
{
	const unsigned bpp = type_size(s->d.pixel_type), bits = value_bits(s);
	unsigned char *out;

	s->view_bytes = (uint64_t)s->d.width * s->d.height * bpp;
	s->payload = lt_row_bytes(s->d.width, s->d.pixel_type,
				  s->d.encoding) * s->d.height;
	s->pixels = malloc(views * s->view_bytes + 1);
	s->headers = malloc(views * s->d.header + 1);
	ck_assert(s->pixels && s->headers);
	out = s->pixels;
	for (uint64_t v = 0; v < views; v++) {
		for (uint64_t i = 0; i < s->d.header; i++)
			s->headers[v * s->d.header + i] = header_byte(v, i);
		for (uint64_t r = 0; r < s->d.height; r++)
			for (uint64_t c = 0; c < s->d.width; c++) {
				const uint64_t x = value(s, bits, v, r, c);

				for (unsigned i = 0; i < bpp; i++)
					*out++ = (unsigned char)(x >> 8 * i);
			}
	}
}

void lt_write(lt_stream *s, const char *name)
{
	uint64_t v = 0, sum = 0;

	for (int f = 0; f < s->nfiles; f++)
		sum += s->views[f];
	s->total = s->d.count ? s->d.count : sum;
	ck_assert_uint_le(s->total, sum);
	reference(s, sum);
	for (int f = 0; f < s->nfiles; f++) {
		const uint64_t record = s->d.header + s->payload + s->d.gap;
		const bool cut = s->views[f] && s->cut_gap[f];
		const bool last_file = f + 1 == s->nfiles;
		char file[96];
		buf o = { NULL, 0, 0 };

		snprintf(file, sizeof(file), "%s.%d", name, f);
		s->paths[f] = tu_path(file);
		o.cap = s->d.offset + s->views[f] * record -
			(cut ? s->d.gap : 0) + (last_file ? s->junk : 0);
		o.b = malloc(o.cap + 1);
		ck_assert_ptr_nonnull(o.b);
		for (uint64_t i = 0; i < s->d.offset; i++)
			put(&o, (unsigned char)(0xA0 ^ (i * 3) ^ (uint64_t)f));
		for (uint64_t k = 0; k < s->views[f]; k++, v++) {
			const bool last = k + 1 == s->views[f];

			put_bytes(&o, s->headers + v * s->d.header,
				  s->d.header);
			for (uint64_t r = 0; r < s->d.height; r++)
				put_row(&o, s, v, r);
			for (uint64_t i = 0;
			     i < s->d.gap && !(last && s->cut_gap[f]); i++)
				put(&o, (unsigned char)(0xC3 ^ i));
		}
		if (last_file)
			for (uint64_t i = 0; i < s->junk; i++)
				put(&o, (unsigned char)(0x99 + i));
		ck_assert_uint_eq(o.n, o.cap);
		tu_write_file(s->paths[f], o.b, o.n);
		free(o.b);
	}
}

void lt_free(lt_stream *s)
{
	for (int f = 0; f < s->nfiles; f++)
		free(s->paths[f]);
	free(s->pixels);
	free(s->headers);
	memset(s, 0, sizeof(*s));
}

void lt_request(const lt_stream *s, parload_request *r)
{
	parload_request_init(r);
	if (s->nfiles == 1) {
		r->source.path = s->paths[0];
	} else {
		r->source.paths = (const char *const *)s->paths;
		r->source.path_count = (size_t)s->nfiles;
	}
	r->source.desc = &s->d;
}

/* ---- selections ---- */

void lt_sel_all(const lt_stream *s, lt_sel *q)
{
	q->v0 = 0;
	q->v1 = s->total;
	q->vstep = 1;
	q->r0 = 0;
	q->r1 = s->d.height;
	q->c0 = 0;
	q->c1 = s->d.width;
	q->layout = PARLOAD_LAYOUT_VIEWS;
}

void lt_sel_part(const lt_stream *s, int part, uint32_t r0, uint32_t r1,
		 uint32_t c0, uint32_t c1, lt_sel *q)
{
	lt_sel_all(s, q);
	if (!part)
		return;
	q->vstep = 2;
	q->r0 = r0;
	q->r1 = r1;
	if (part == 1) {
		q->c0 = c0;
		q->c1 = c1;
	}
	q->layout = part == 2 ? PARLOAD_LAYOUT_SINOGRAMS : PARLOAD_LAYOUT_VIEWS;
}

void lt_sel_to(const lt_sel *q, parload_selection *sel)
{
	parload_selection_init(sel);
	sel->views.start = (int64_t)q->v0;
	sel->views.stop = (int64_t)q->v1;
	sel->views.step = (int64_t)q->vstep;
	sel->rows.start = q->r0;
	sel->rows.stop = q->r1;
	sel->cols.start = q->c0;
	sel->cols.stop = q->c1;
	sel->layout = (parload_layout)q->layout;
}

uint64_t lt_sel_views(const lt_sel *q)
{
	return (q->v1 - q->v0 + q->vstep - 1) / q->vstep;
}

void lt_expect(const lt_stream *s, const lt_sel *q, unsigned char **pixels,
	       unsigned char **headers, uint64_t *pixel_bytes,
	       uint64_t *header_bytes)
{
	const uint64_t n = lt_sel_views(q), rows = q->r1 - q->r0;
	const uint64_t bpp = s->view_bytes / ((uint64_t)s->d.width *
					      s->d.height);
	const uint64_t take = (q->c1 - q->c0) * bpp;
	unsigned char *p = malloc(n * rows * take + 1);
	unsigned char *h = malloc(n * s->d.header + 1);

	ck_assert(p && h);
	for (uint64_t k = 0; k < n; k++) {
		const uint64_t v = q->v0 + k * q->vstep;
		const unsigned char *view = s->pixels + v * s->view_bytes;

		memcpy(h + k * s->d.header, s->headers + v * s->d.header,
		       s->d.header);
		for (uint64_t y = 0; y < rows; y++) {
			const uint64_t at = q->layout == PARLOAD_LAYOUT_VIEWS ?
				(k * rows + y) * take : (y * n + k) * take;

			memcpy(p + at, view + ((q->r0 + y) * s->d.width +
					       q->c0) * bpp, take);
		}
	}
	*pixels = p;
	*headers = h;
	*pixel_bytes = n * rows * take;
	*header_bytes = n * s->d.header;
}

void lt_assert_loaded(const lt_stream *s, const lt_sel *q,
		      const parload_dataset *ds, bool no_raw,
		      const char *what)
{
	unsigned char *p, *h;
	uint64_t pb, hb;
	const uint64_t n = lt_sel_views(q);

	lt_expect(s, q, &p, &h, &pb, &hb);
	ck_assert_msg(ds->desc.count == s->total, "%s: %" PRIu64 " views, "
		      "want %" PRIu64, what, ds->desc.count, s->total);
	ck_assert_msg(ds->shape.views == n && ds->shape.view_start == q->v0 &&
		      ds->shape.row_start == q->r0 &&
		      ds->shape.rows == q->r1 - q->r0 &&
		      ds->shape.col_start == q->c0 &&
		      ds->shape.cols == q->c1 - q->c0 &&
		      (int)ds->shape.layout == q->layout,
		      "%s: wrong shape", what);
	ck_assert_msg(ds->shape.views * ds->shape.view_bytes == pb,
		      "%s: %" PRIu64 " pixel bytes, want %" PRIu64, what,
		      ds->shape.views * ds->shape.view_bytes, pb);
	ck_assert_msg(memcmp(ds->pixels, p, pb) == 0, "%s: pixels differ",
		      what);
	if (no_raw || s->d.header == 0)
		ck_assert_msg(ds->raw_headers == NULL, "%s: raw headers", what);
	else
		ck_assert_msg(ds->raw_headers &&
			      memcmp(ds->raw_headers, h, hb) == 0,
			      "%s: raw headers differ", what);
	/* Every view's index compared, with ck_assert only for a wrong one
	 * (each that passes costs a write() to Check's log). */
	for (uint64_t k = 0; k < n; k++)
		if (ds->headers[k].view_index != q->v0 + k * q->vstep)
			ck_assert_msg(ds->headers[k].view_index ==
				      q->v0 + k * q->vstep, "%s: view_index of %"
				      PRIu64, what, k);
	free(p);
	free(h);
}
