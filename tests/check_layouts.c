/*
 * check_layouts.c - loads of raw layouts (parload_source.desc) against a
 * reference the test writes itself (layouts.c): files written byte by
 * byte (offset bytes, each view's own header, its pixels in the stated
 * byte order or packed by the formulas of parload.h inverted, gaps, the
 * last gap sometimes missing), and what the dataset must then hold,
 * sliced by the test's own arithmetic.  Whole loads, selections,
 * sinograms, 1 to 4 threads, 1 to 5 files, the caller's buffers, batches,
 * windows, raw headers or none; then every bad input, refused before the
 * load allocates its dataset, with the message naming what it must.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layouts.h"
#include "testutil.h"

/* A load of q of s (flags PARLOAD_REQ_*) in page-cache mode cache, which
 * must succeed. */
static void load_cached(parload_loader *l, const lt_stream *s,
			const lt_sel *q, unsigned flags, parload_cache cache,
			parload_dataset *ds, const char *what)
{
	parload_request r;
	parload_selection sel;
	parload_error err;

	lt_request(s, &r);
	lt_sel_to(q, &sel);
	r.selection = &sel;
	r.flags = flags;
	r.cache = cache;
	ck_assert_msg(parload_loader_run(l, &r, ds, &err) == 0, "%s: %s", what,
		      err.message);
}

/* The same, keeping the file cached (the default). */
static void load_ok(parload_loader *l, const lt_stream *s, const lt_sel *q,
		    unsigned flags, parload_dataset *ds, const char *what)
{
	load_cached(l, s, q, flags, PARLOAD_CACHE_KEEP, ds, what);
}

/* Every type parload reads, as (pixel type, encoding). */
static const struct {
	int type, enc;
} types[] = {
	{ PARLOAD_PIXEL_U8, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_I16, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_U32, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_I32, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_F32, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_F64, PARLOAD_ENC_LE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_I16, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_U32, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_I32, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_F32, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_F64, PARLOAD_ENC_BE },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12PACKED },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_U12MSB },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO10P },
};

/* A random layout of type i over 1 to 5 files, written. */
static void random_stream(lt_stream *s, int i, uint64_t *rng, const char *name)
{
	const int t = types[i % TU_COUNT(types)].type;
	const int e = types[i % TU_COUNT(types)].enc;
	const unsigned bits = lt_packed_bits(e);
	const uint32_t w = bits == 12 ? 2 * (1 + (uint32_t)lt_below(rng, 20)) :
			   bits == 10 ? 4 * (1 + (uint32_t)lt_below(rng, 10)) :
					1 + (uint32_t)lt_below(rng, 37);
	uint64_t sum = 0;

	lt_layout(s, w, 1 + (uint32_t)lt_below(rng, 9), t, e,
		  lt_below(rng, 3) ? lt_below(rng, 300) : 0,
		  lt_below(rng, 3) ? lt_below(rng, 70) : 0,
		  lt_below(rng, 2) ? lt_below(rng, 50) : 0, 0);
	s->seed = (uint64_t)i + 11;
	s->nfiles = 1 + (int)lt_below(rng, LT_MAX_FILES);
	for (int f = 0; f < s->nfiles; f++) {
		/* Now and then a file of no record (its offset alone). */
		s->views[f] = f && !lt_below(rng, 6) ? 0 : 1 + lt_below(rng, 4);
		s->cut_gap[f] = s->views[f] && lt_below(rng, 2);
		sum += s->views[f];
	}
	if (lt_below(rng, 2)) {
		/* A count: views of the last file past it and junk after
		 * the last record are ignored. */
		s->d.count = sum - lt_below(rng, s->views[s->nfiles - 1]);
		s->junk = lt_below(rng, 2 * (s->d.header + 8));
	}
	lt_write(s, name);
}

static void random_sel(const lt_stream *s, uint64_t *rng, int layout,
		       lt_sel *q)
{
	q->v0 = lt_below(rng, s->total);
	q->v1 = q->v0 + 1 + lt_below(rng, s->total - q->v0);
	q->vstep = 1 + lt_below(rng, 3);
	q->r0 = (uint32_t)lt_below(rng, s->d.height);
	q->r1 = q->r0 + 1 + (uint32_t)lt_below(rng, s->d.height - q->r0);
	q->c0 = (uint32_t)lt_below(rng, s->d.width);
	q->c1 = q->c0 + 1 + (uint32_t)lt_below(rng, s->d.width - q->c0);
	q->layout = layout;
}

/* ---- loads against the reference ---- */

/* Random layouts of every type (three each), 1 to 4 threads: the whole
 * stream (stats.bytes_read exactly its headers and payloads), without its
 * raw headers (their bytes not read), a selection in view layout and one
 * as sinograms. */
START_TEST(test_random_layouts)
{
	uint64_t rng = 0x5eed0000u + (uint64_t)_i;
	parload_loader *l = tu_loader(1 + (unsigned)_i % 4, 0, 0);
	parload_dataset ds;
	lt_stream s;
	lt_sel q;
	char what[160];

	random_stream(&s, _i, &rng, "rand");
	snprintf(what, sizeof(what), "layout %d (%s, %" PRIu32 "x%" PRIu32
		 ", offset %" PRIu64 ", header %" PRIu64 ", gap %" PRIu64
		 ", count %" PRIu64 ", %d files, %u threads)", _i,
		 parload_type_name(s.d.pixel_type, s.d.encoding), s.d.width,
		 s.d.height, s.d.offset, s.d.header, s.d.gap, s.d.count,
		 s.nfiles, parload_loader_threads(l));
	lt_sel_all(&s, &q);
	load_ok(l, &s, &q, 0, &ds, what);
	lt_assert_loaded(&s, &q, &ds, false, what);
	ck_assert_msg(ds.stats.bytes_read == s.total * (s.d.header + s.payload),
		      "%s: read %" PRIu64 " bytes", what, ds.stats.bytes_read);
	parload_dataset_free(&ds);

	load_ok(l, &s, &q, PARLOAD_REQ_NO_RAW_HEADERS, &ds, what);
	lt_assert_loaded(&s, &q, &ds, true, what);
	ck_assert_msg(ds.stats.bytes_read == s.total * s.payload,
		      "%s, no raw headers: read %" PRIu64 " bytes", what,
		      ds.stats.bytes_read);
	parload_dataset_free(&ds);

	for (int layout = 0; layout < 2; layout++) {
		random_sel(&s, &rng, layout, &q);
		load_ok(l, &s, &q, 0, &ds, what);
		lt_assert_loaded(&s, &q, &ds, false, what);
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* The variant loop test iteration i runs: every one (even: records that
 * touch, odd: an odd offset, header and gap), or under valgrind, where
 * every load is slow, the odd ones only (the suite registers half as many
 * iterations there). */
static int variant(int i)
{
	return tu_under_valgrind() ? 2 * i + 1 : i;
}

static int variants(int n)
{
	return tu_under_valgrind() ? n / 2 : n;
}

/* Sinograms copied from the files mapped (PARLOAD_OPT_MAP_SINOGRAMS):
 * a random layout of each type (every other one under valgrind) over 1
 * to 5 files, 1 to 4 threads, whole and a random selection, against the
 * test's own values; every byte of them comes from the mappings (no read
 * call; stats.bytes_read as many bytes as the same load read); kept only
 * where the pages stay cached (drop reads), and the view layout reads. */
START_TEST(test_mapped_sinograms)
{
	const int i = variant(_i);
	uint64_t rng = 0x3a9000u + (uint64_t)i;
	const unsigned threads = 1 + (unsigned)i % 4;
	parload_loader *map = tu_loader(threads, 0, PARLOAD_OPT_MAP_SINOGRAMS);
	parload_loader *rd = tu_loader(threads, 0, 0);
	parload_dataset ds, ref;
	lt_stream s;
	lt_sel q;
	char what[200];

	random_stream(&s, i, &rng, "mapped");
	for (int part = 0; part < 3; part++) {
		const int layout = part < 2 ? 1 : 0;

		if (part == 0) {
			lt_sel_all(&s, &q);
			q.layout = layout;
		} else {
			random_sel(&s, &rng, layout, &q);
		}
		snprintf(what, sizeof(what), "layout %d (%s, %" PRIu32 "x%"
			 PRIu32 ", header %" PRIu64 ", %d files), %u threads, "
			 "part %d", i,
			 parload_type_name(s.d.pixel_type, s.d.encoding),
			 s.d.width, s.d.height, s.d.header, s.nfiles, threads,
			 part);
		load_ok(map, &s, &q, 0, &ds, what);
		lt_assert_loaded(&s, &q, &ds, false, what);
		load_ok(rd, &s, &q, 0, &ref, what);
		ck_assert_msg(ds.stats.bytes_read == ref.stats.bytes_read,
			      "%s: %" PRIu64 " bytes, read %" PRIu64, what,
			      ds.stats.bytes_read, ref.stats.bytes_read);
		if (layout)
			ck_assert_msg(ds.stats.read_calls == 0 &&
					      ref.stats.read_calls > 0,
				      "%s: %" PRIu64 " read calls mapped, %"
				      PRIu64 " read", what,
				      ds.stats.read_calls,
				      ref.stats.read_calls);
		else
			ck_assert_msg(ds.stats.read_calls ==
					      ref.stats.read_calls,
				      "%s: views: %" PRIu64 " read calls, %"
				      PRIu64 " without the option", what,
				      ds.stats.read_calls,
				      ref.stats.read_calls);
		parload_dataset_free(&ds);
		parload_dataset_free(&ref);
		if (!layout)
			continue;
		load_cached(map, &s, &q, 0, PARLOAD_CACHE_DROP, &ds, what);
		lt_assert_loaded(&s, &q, &ds, false, what);
		ck_assert_msg(ds.stats.read_calls > 0 &&
				      ds.stats.cache == PARLOAD_CACHE_DROP,
			      "%s: dropped, yet %" PRIu64 " read calls", what,
			      ds.stats.read_calls);
		parload_dataset_free(&ds);
	}
	parload_loader_free(map);
	parload_loader_free(rd);
	lt_free(&s);
}
END_TEST

/* Each packed format, at a width of an odd number of packed groups (14
 * pixels of 12 bits, 12 of 10 bits) and an even one, against the test's
 * own packing: whole, with 1 to 4 threads, then every column crop that
 * starts in the first two groups (odd starts too), row bands and
 * sinograms. */
START_TEST(test_packed)
{
	static const int encs[] = { PARLOAD_ENC_MONO12P,
				    PARLOAD_ENC_MONO12PACKED,
				    PARLOAD_ENC_U12MSB, PARLOAD_ENC_MONO10P };
	const int e = encs[_i / 2];
	const uint32_t w = lt_packed_bits(e) == 12 ? (_i % 2 ? 16 : 14) :
				(_i % 2 ? 16 : 12);
	parload_dataset ds;
	lt_stream s;
	lt_sel q;
	char what[128];

	lt_layout(&s, w, 6, PARLOAD_PIXEL_U16, e, 11, 7, 3, 5);
	lt_write(&s, "packed");
	for (unsigned t = 1; t <= 4; t++) {
		parload_loader *l = tu_loader(t, 0, 0);

		snprintf(what, sizeof(what), "%s, width %" PRIu32 ", %u "
			 "threads", parload_type_name(PARLOAD_PIXEL_U16, e),
			 w, t);
		lt_sel_all(&s, &q);
		load_ok(l, &s, &q, 0, &ds, what);
		lt_assert_loaded(&s, &q, &ds, false, what);
		parload_dataset_free(&ds);
		for (uint32_t c0 = 0; c0 < 8; c0++)
			for (uint32_t c1 = c0 + 1; c1 <= w; c1 += 1 + c1 % 3) {
				q.c0 = c0;
				q.c1 = c1;
				q.r0 = c0 % 3;
				q.r1 = 6 - c1 % 2;
				q.v0 = c0 % 2;
				q.vstep = 1 + c1 % 2;
				q.layout = (int)((c0 + c1) % 2);
				load_ok(l, &s, &q, 0, &ds, what);
				lt_assert_loaded(&s, &q, &ds, false, what);
				parload_dataset_free(&ds);
			}
		parload_loader_free(l);
	}
	lt_free(&s);
}
END_TEST

/* A description of parload's own format byte for byte (offset 64, view
 * headers of 32 bytes, the type, little-endian) over a file
 * tu_write_stream made: the pixels of the native load, and raw headers
 * that are the native view headers' bytes. */
START_TEST(test_native_described)
{
	static const int t[] = { PARLOAD_PIXEL_U16, PARLOAD_PIXEL_F32,
				 PARLOAD_PIXEL_U8 };
	char *path = tu_path("native.raw");
	parload_loader *l = tu_loader(3, 0, 0);
	parload_dataset nat, raw;
	parload_request r;
	parload_error err;
	parload_desc d;

	tu_write_stream(path, 9, 33, 7, t[_i], _i ? PARLOAD_FLAG_CRC32C : 0,
			40 + (uint64_t)_i);
	ck_assert_int_eq(tu_load(l, path, NULL, NULL, &nat, &err), 0);
	parload_desc_init(&d);
	d.width = 33;
	d.height = 7;
	d.pixel_type = t[_i];
	d.offset = 64;
	d.header = 32;
	parload_request_init(&r);
	r.source.path = path;
	r.source.desc = &d;
	ck_assert_msg(parload_loader_run(l, &r, &raw, &err) == 0, "%s",
		      err.message);
	ck_assert_int_eq(raw.desc.format, PARLOAD_FORMAT_RAW);
	ck_assert_uint_eq(raw.desc.count, 9);
	ck_assert_uint_eq(raw.desc.payload_size, nat.desc.payload_size);
	ck_assert_int_eq(memcmp(raw.pixels, nat.pixels,
				9 * nat.desc.payload_size), 0);
	ck_assert_ptr_nonnull(raw.raw_headers);
	ck_assert_int_eq(memcmp(raw.raw_headers, nat.headers, 9 * 32), 0);
	for (uint64_t k = 0; k < 9; k++) {
		ck_assert_uint_eq(raw.headers[k].view_index, k);
		ck_assert_uint_eq(raw.headers[k].crc32c, 0);
	}
	ck_assert_uint_eq(raw.stats.bytes_read,
			  9 * (32 + nat.desc.payload_size));
	parload_dataset_free(&nat);
	parload_dataset_free(&raw);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* The caller's memory (parload_buffers_alloc for the description
 * parload_describe resolves): a whole load and a selection land in it. */
START_TEST(test_into_buffers)
{
	uint64_t rng = 0xb0ff + (uint64_t)_i;
	parload_loader *l = tu_loader(1 + (unsigned)_i % 4, 0, 0);
	parload_selection sel;
	parload_buffers b;
	parload_request r;
	parload_error err;
	parload_dataset ds;
	parload_desc d;
	lt_stream s;
	lt_sel q;

	random_stream(&s, _i * 5 + 1, &rng, "into");
	lt_request(&s, &r);
	ck_assert_msg(parload_describe(&r.source, 0, &d, &err) == 0, "%s",
		      err.message);
	ck_assert_uint_eq(d.count, s.total);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			random_sel(&s, &rng, _i % 2, &q);
		else
			lt_sel_all(&s, &q);
		lt_sel_to(&q, &sel);
		ck_assert_msg(parload_buffers_alloc(&b, &d, &sel, 0, &err) == 0,
			      "%s", err.message);
		ck_assert_uint_eq(b.raw_headers_size,
				  lt_sel_views(&q) * s.d.header);
		r.selection = &sel;
		r.into = &b;
		ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
			      err.message);
		ck_assert_ptr_eq(ds.pixels, b.pixels);
		ck_assert_ptr_eq(ds.headers, b.headers);
		if (s.d.header)
			ck_assert_ptr_eq(ds.raw_headers, b.raw_headers);
		lt_assert_loaded(&s, &q, &ds, false, "into buffers");
		parload_dataset_free(&ds);
		parload_buffers_free(&b);
	}
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* ---- batches and windows ---- */

typedef struct got {
	const lt_stream *s;
	unsigned char *pixels, *headers;
	uint64_t next, view_bytes;
} got;

static int collect(const parload_batch *b, void *arg)
{
	got *g = arg;

	ck_assert_uint_eq(b->first, g->next);
	ck_assert_uint_eq(b->view_bytes, g->view_bytes);
	memcpy(g->pixels + b->first * b->view_bytes, b->pixels,
	       b->count * b->view_bytes);
	ck_assert_uint_eq(b->raw_header_size, g->s->d.header);
	if (g->s->d.header)
		memcpy(g->headers + b->first * g->s->d.header, b->raw_headers,
		       b->count * g->s->d.header);
	else
		ck_assert_ptr_null(b->raw_headers);
	g->next = b->first + b->count;
	return 0;
}

/* Batches of batch_views views, then windows of two views, of q of s:
 * every batch in order, its pixels and raw headers those of the
 * reference. */
static void assert_batches(parload_loader *l, const lt_stream *s,
			   const lt_sel *q, uint64_t batch_views,
			   const char *what)
{
	parload_selection sel;
	parload_request r;
	parload_error err;
	parload_dataset ds;

	lt_sel_to(q, &sel);
	for (int window = 0; window < 2; window++) {
		unsigned char *p, *h;
		uint64_t pb, hb;
		got g;

		lt_expect(s, q, &p, &h, &pb, &hb);
		g.s = s;
		g.pixels = calloc(1, pb + 1);
		g.headers = calloc(1, hb + 1);
		g.next = 0;
		g.view_bytes = pb / lt_sel_views(q);
		lt_request(s, &r);
		r.selection = &sel;
		r.on_batch = collect;
		r.batch_arg = &g;
		r.batch_views = batch_views;
		if (window)
			r.window_bytes = 2 * (g.view_bytes + 32 + s->d.header);
		ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0,
			      "%s: %s", what, err.message);
		ck_assert_uint_eq(g.next, lt_sel_views(q));
		ck_assert_msg(memcmp(g.pixels, p, pb) == 0,
			      "%s: batch pixels differ", what);
		ck_assert_int_eq(memcmp(g.headers, h, hb), 0);
		if (window)
			ck_assert(!ds.pixels && !ds.headers && !ds.raw_headers);
		else
			lt_assert_loaded(s, q, &ds, false, what);
		parload_dataset_free(&ds);
		free(g.pixels);
		free(g.headers);
		free(p);
		free(h);
	}
}

/* Batches of one to three views, then windows of two views, of random
 * layouts and selections. */
START_TEST(test_batches_and_windows)
{
	uint64_t rng = 0xba7c + (uint64_t)_i;
	parload_loader *l = tu_loader(1 + (unsigned)_i % 4, 0, 0);
	lt_stream s;
	lt_sel q;

	random_stream(&s, _i * 3, &rng, "batch");
	random_sel(&s, &rng, PARLOAD_LAYOUT_VIEWS, &q);
	assert_batches(l, &s, &q, 1 + (uint64_t)_i % 3, "batches");
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* ---- the other byte order, swapped in place ---- */

/* A big-endian layout of type t wide enough to be read straight into the
 * dataset (rows of over 1 KiB, views of over 4 KiB: the bounce buffer's
 * thresholds in pass.c) and over 64 KiB in all, and the same layout
 * little-endian.  odd: an odd offset, header and gap, and views of 17
 * rows; else no header and no gap, so that records touch. */
static void wide_pair(lt_stream *be, lt_stream *le, int t, bool odd)
{
	const uint64_t bpp = lt_row_bytes(1, t, PARLOAD_ENC_LE);
	const uint32_t w = (uint32_t)(1100 / bpp) + 1, h = odd ? 17 : 8;

	lt_layout(be, w, h, t, PARLOAD_ENC_BE, odd ? 5 : 0, odd ? 7 : 0,
		  odd ? 3 : 0, 16);
	be->seed = 77;
	lt_write(be, "wide_be");
	lt_layout(le, w, h, t, PARLOAD_ENC_LE, be->d.offset, be->d.header,
		  be->d.gap, 16);
	le->seed = 77;
	lt_write(le, "wide_le");
}

/* A loader of two threads whose reads take at most 4,099 bytes: batches
 * end inside rows and, after an odd header, inside pixels. */
static parload_loader *short_reads(void)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	parload_options_init(&o);
	o.threads = 2;
	o.max_read = 4099;
	o.flags = PARLOAD_OPT_NO_BIND;
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s",
		      err.message);
	return l;
}

/* Stream s loaded by 1 to 4 threads (2 under valgrind, where every load
 * is slow), then by reads of 4,099 bytes at most: the whole stream, a
 * band of rows of every other view, the band as sinograms, and a column
 * crop, each against the test's own values; and its reads (calls and
 * bytes) those of twin's load of the same rows (every column of twin), a
 * layout of the same bytes read without conversion.  alike: the two cut
 * their reads alike, so that the short reads and the crop compare too. */
static void assert_like_twin(const lt_stream *s, const lt_stream *twin,
			     bool alike)
{
	const uint32_t h = s->d.height;
	parload_dataset ds, ref;
	char what[128];

	for (unsigned n = tu_under_valgrind() ? 2 : 1; n <= 5;
	     n += tu_under_valgrind() && n == 2 ? 3 : 1) {
		parload_loader *l = n <= 4 ? tu_loader(n, 0, 0) : short_reads();

		for (int part = 0; part < 4; part++) {
			lt_sel q, qt;

			lt_sel_part(s, part % 3, 1, h - 2, part == 3 ? 1 : 0,
				    s->d.width, &q);
			snprintf(what, sizeof(what), "%s, header %" PRIu64
				 ", part %d, loader %u",
				 parload_type_name(s->d.pixel_type,
						   s->d.encoding),
				 s->d.header, part, n);
			load_ok(l, s, &q, 0, &ds, what);
			lt_assert_loaded(s, &q, &ds, false, what);
			if (alike || (n <= 4 && part < 3)) {
				lt_sel_part(twin, part % 3, 1, h - 2,
					    q.c0, alike ? q.c1 : twin->d.width,
					    &qt);
				load_ok(l, twin, &qt, 0, &ref, what);
				ck_assert_msg(ds.stats.read_calls ==
						      ref.stats.read_calls &&
					      ds.stats.bytes_read ==
						      ref.stats.bytes_read,
					      "%s: %" PRIu64 " reads of %" PRIu64
					      " bytes, the twin %" PRIu64
					      " of %" PRIu64, what,
					      ds.stats.read_calls,
					      ds.stats.bytes_read,
					      ref.stats.read_calls,
					      ref.stats.bytes_read);
				parload_dataset_free(&ref);
			}
			parload_dataset_free(&ds);
		}
		parload_loader_free(l);
	}
}

/* s whole (layout 0: views, 1: sinograms) into the caller's buffers with
 * the pixels at an odd address, so that the workers' boundaries in
 * memory fall inside pixels and stores are unaligned. */
static void assert_odd_buffers(parload_loader *l, const lt_stream *s,
			       int layout, const char *what)
{
	parload_selection sel;
	parload_buffers b, odd;
	parload_request r;
	parload_error err;
	parload_dataset ds;
	parload_desc d;
	lt_sel q;

	lt_sel_all(s, &q);
	q.layout = layout;
	lt_sel_to(&q, &sel);
	lt_request(s, &r);
	ck_assert_int_eq(parload_describe(&r.source, 0, &d, &err), 0);
	ck_assert_int_eq(parload_buffers_alloc(&b, &d, &sel, 0, &err), 0);
	odd = b;
	odd.pixels = (unsigned char *)malloc(b.pixels_size + 1) + 1;
	r.selection = &sel;
	r.into = &odd;
	ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s: %s",
		      what, err.message);
	ck_assert_ptr_eq(ds.pixels, odd.pixels);
	lt_assert_loaded(s, &q, &ds, false, what);
	parload_dataset_free(&ds);
	free((unsigned char *)odd.pixels - 1);
	parload_buffers_free(&b);
}

/* Big-endian rows that every column of is selected are read with the
 * calls of the little-endian load of the same layout (the same bytes,
 * the same read count: straight into place, not through the bounce
 * buffer; the files are under 1 MiB, the most a swapped load reads in one
 * call) and swapped there; a column crop goes through the bounce buffer
 * for both. */
START_TEST(test_swap_in_place)
{
	const int i = variant(_i);
	lt_stream be, le;

	wide_pair(&be, &le, types[7 + i / 2].type, i % 2);
	assert_like_twin(&be, &le, true);
	lt_free(&be);
	lt_free(&le);
}
END_TEST

/* The same swapped layouts in batches of one to three views and windows
 * (whole, and a band of rows of every other view, 1 to 4 threads), into
 * the caller's buffers with the pixels at an odd address, so that the
 * workers' boundaries in memory fall inside pixels. */
START_TEST(test_swap_batches_and_buffers)
{
	const int i = variant(_i);
	const int t = types[7 + i / 2].type;
	parload_loader *l = tu_loader(1 + (unsigned)i % 4, 0, 0);
	lt_stream be, le;
	lt_sel q;

	wide_pair(&be, &le, t, i % 2);
	lt_sel_all(&be, &q);
	assert_batches(l, &be, &q, 1 + (uint64_t)i % 3, "swapped batches");
	lt_sel_part(&be, 1, 1, be.d.height - 1, 0, be.d.width, &q);
	assert_batches(l, &be, &q, 1 + (uint64_t)i % 3, "swapped row band");

	assert_odd_buffers(l, &be, 0, "odd buffers");
	parload_loader_free(l);
	lt_free(&be);
	lt_free(&le);
}
END_TEST

/* ---- packed pixels, unpacked in place ---- */

static const int packed_encs[] = { PARLOAD_ENC_MONO12P,
				   PARLOAD_ENC_MONO12PACKED,
				   PARLOAD_ENC_U12MSB, PARLOAD_ENC_MONO10P };

/* A packed layout of encoding e wide enough to be read straight into the
 * dataset (packed rows of over 1 KiB, views of over 4 KiB), and a u8
 * layout of the same bytes (a u8 pixel per packed byte): the calls that
 * read the one read the other.  odd: an odd offset, header and gap, and
 * views of 17 rows. */
static void packed_pair(lt_stream *pk, lt_stream *u8, int e, bool odd)
{
	const uint32_t w = 1100, h = odd ? 17 : 8;

	lt_layout(pk, w, h, PARLOAD_PIXEL_U16, e, odd ? 5 : 0, odd ? 7 : 0,
		  odd ? 3 : 0, 16);
	pk->seed = 91;
	lt_write(pk, "wide_packed");
	lt_layout(u8, (uint32_t)lt_row_bytes(w, PARLOAD_PIXEL_U16, e), h,
		  PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, pk->d.offset,
		  pk->d.header, pk->d.gap, 16);
	lt_write(u8, "wide_bytes");
}

/* Packed rows that every column of is selected are read straight into the
 * dataset, into the tail of each piece's place, and unpacked forward over
 * themselves: against the test's own unpacking, with the reads of the
 * same bytes loaded as u8 (straight into place, not through the bounce
 * buffer); the short reads cut pieces between two packed groups. */
START_TEST(test_packed_in_place)
{
	const int i = variant(_i);
	lt_stream pk, u8;

	packed_pair(&pk, &u8, packed_encs[i / 2], i % 2);
	assert_like_twin(&pk, &u8, false);
	lt_free(&pk);
	lt_free(&u8);
}
END_TEST

/* The same packed layouts in batches of one to three views and windows,
 * and into the caller's buffers with the pixels at an odd address (the
 * unpacking's unaligned loads and stores), in view and sinogram layout. */
START_TEST(test_packed_batches_and_buffers)
{
	const int i = variant(_i);
	const int e = packed_encs[i / 2];
	parload_loader *l = tu_loader(1 + (unsigned)i % 4, 0, 0);
	lt_stream pk, u8;
	lt_sel q;

	packed_pair(&pk, &u8, e, i % 2);
	lt_sel_all(&pk, &q);
	assert_batches(l, &pk, &q, 1 + (uint64_t)i % 3, "packed batches");
	lt_sel_part(&pk, 1, 1, pk.d.height - 1, 0, pk.d.width, &q);
	assert_batches(l, &pk, &q, 1 + (uint64_t)i % 3, "packed row band");

	assert_odd_buffers(l, &pk, 0, "odd packed buffers");
	/* As sinograms too, and the same bytes as u8 (rows copied, stored
	 * far from the bounce buffer). */
	assert_odd_buffers(l, &pk, 1, "odd packed sinogram buffers");
	assert_odd_buffers(l, &u8, 1, "odd sinogram buffers");
	parload_loader_free(l);
	lt_free(&pk);
	lt_free(&u8);
}
END_TEST

/* A count: the views it names, whatever follows them (a partial record,
 * whole records); without one, every whole record. */
START_TEST(test_count)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_request r;
	parload_error err;
	parload_desc d;
	parload_dataset ds;
	lt_stream s;
	lt_sel q;

	lt_layout(&s, 10, 4, PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 100, 16, 8, 6);
	s.d.count = 4;
	s.junk = 50; /* a partial record after the sixth */
	lt_write(&s, "count");
	lt_request(&s, &r);
	ck_assert_int_eq(parload_describe(&r.source, 0, &d, &err), 0);
	ck_assert_uint_eq(d.count, 4);
	lt_sel_all(&s, &q);
	load_ok(l, &s, &q, 0, &ds, "count 4");
	lt_assert_loaded(&s, &q, &ds, false, "count 4");
	ck_assert_uint_eq(ds.stats.bytes_read, 4 * (16 + 80));
	parload_dataset_free(&ds);
	lt_free(&s);

	/* No count, the last gap missing: six views. */
	lt_layout(&s, 10, 4, PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 100, 16, 8, 6);
	s.cut_gap[0] = true;
	lt_write(&s, "nocount");
	lt_request(&s, &r);
	ck_assert_int_eq(parload_describe(&r.source, 0, &d, &err), 0);
	ck_assert_uint_eq(d.count, 6);
	ck_assert_uint_eq(d.record_size, 16 + 80 + 8);
	lt_sel_all(&s, &q);
	load_ok(l, &s, &q, 0, &ds, "no count");
	lt_assert_loaded(&s, &q, &ds, false, "no count");
	parload_dataset_free(&ds);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* ---- bad input: refused, naming what is wrong, with nothing left ---- */

static void assert_refused(int rc, const parload_error *err, int code,
			   const char *must, const char *what)
{
	ck_assert_msg(rc == code, "%s: %s (%s), want %s", what,
		      parload_err_name(rc), err->message,
		      parload_err_name(code));
	ck_assert_int_eq(err->code, code);
	ck_assert_msg(!must || strstr(err->message, must), "%s: message "
		      "\"%s\" does not name \"%s\"", what, err->message, must);
}

START_TEST(test_parse_errors)
{
	static const struct {
		const char *text, *must;
		int code;
	} bad[] = {
		{ "width=4,height=2,type=u16,depth=3", "depth", PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,width=8", "width", PARLOAD_EINVAL },
		{ "height=2,type=u16", "width", PARLOAD_EINVAL },
		{ "width=4,type=u16", "height", PARLOAD_EINVAL },
		{ "width=4,height=2", "type", PARLOAD_EINVAL },
		{ "width=0,height=2,type=u16", "width", PARLOAD_EINVAL },
		{ "width=4,height=0,type=u16", "height", PARLOAD_EINVAL },
		{ "width=-4,height=2,type=u16", "width", PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,offset=-1", "offset",
		  PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,gap=-8", "gap", PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,header=12x", "header",
		  PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,count=", "count", PARLOAD_EINVAL },
		{ "width=4K2,height=2,type=u16", "width", PARLOAD_EINVAL },
		{ "width=4,height=2,type=u17", "u17", PARLOAD_EINVAL },
		{ "width=4,height=2,type=mono12", "mono12", PARLOAD_EINVAL },
		{ "width=3,height=2,type=mono12p", "width", PARLOAD_EINVAL },
		{ "width=6,height=2,type=mono10p", "width", PARLOAD_EINVAL },
		{ "width=4,height=2 type=u16", "height", PARLOAD_EINVAL },
		{ "width=4294967296,height=2,type=u16", "width",
		  PARLOAD_EINVAL },
		{ "width=4294967295,height=4294967295,type=f64", "overflow",
		  PARLOAD_EOVERFLOW },
		{ "width=4,height=2,type=u16,offset=16777216T",
		  "offset=16777216T overflows 64 bits", PARLOAD_EOVERFLOW },
		{ "width=4,height=2,type=u16,offset=17179869184T",
		  "offset=17179869184T overflows 64 bits", PARLOAD_EOVERFLOW },
		{ "width=4,height=2,type=u16,gap=18446744073709551616",
		  "gap=18446744073709551616 overflows 64 bits",
		  PARLOAD_EOVERFLOW },
		{ "width=4,height=2,type=u16,gap=99999999999999999999X",
		  "is not a size", PARLOAD_EINVAL },
		{ "width=4,height=2,type=u16,header=16000000T,gap=16000000T",
		  "overflow", PARLOAD_EOVERFLOW },
		{ "width=4,height=2,type=u16,count=16000000T,gap=1M",
		  "overflow", PARLOAD_EOVERFLOW },
	};

	for (int i = 0; i < TU_COUNT(bad); i++) {
		parload_desc d;
		parload_error err;

		memset(&d, 0x5a, sizeof(d));
		memset(&err, 0, sizeof(err));
		assert_refused(parload_desc_parse(bad[i].text, &d, &err),
			       &err, bad[i].code, bad[i].must, bad[i].text);
		/* Nothing written on failure. */
		for (size_t k = 0; k < sizeof(d); k++)
			ck_assert_int_eq(((unsigned char *)&d)[k], 0x5a);
	}
}
END_TEST

/* parload_size_parse: a size past 64 bits is one, too large
 * (PARLOAD_EOVERFLOW), not something else (PARLOAD_EINVAL). */
START_TEST(test_size_parse)
{
	static const struct {
		const char *text;
		int code;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "64K", 0, 65536 },
		{ "2GiB", 0, (uint64_t)2 << 30 },
		{ "16777215T", 0, (uint64_t)16777215 << 40 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "16777216T", PARLOAD_EOVERFLOW, 0 },
		{ "17179869184T", PARLOAD_EOVERFLOW, 0 },
		{ "17179869184G", PARLOAD_EOVERFLOW, 0 },
		{ "18446744073709551616", PARLOAD_EOVERFLOW, 0 },
		{ "99999999999999999999999TiB", PARLOAD_EOVERFLOW, 0 },
		{ "99999999999999999999999X", PARLOAD_EINVAL, 0 },
		{ "1KK", PARLOAD_EINVAL, 0 },
		{ "-1", PARLOAD_EINVAL, 0 },
		{ "", PARLOAD_EINVAL, 0 },
	};

	for (int i = 0; i < TU_COUNT(cases); i++) {
		uint64_t v = 12345;
		const int rc = parload_size_parse(cases[i].text, &v);

		ck_assert_msg(rc == cases[i].code, "'%s': %s, want %s",
			      cases[i].text, parload_err_name(rc),
			      parload_err_name(cases[i].code));
		ck_assert_msg(v == (rc ? 12345 : cases[i].v),
			      "'%s': %" PRIu64, cases[i].text, v);
	}
}
END_TEST

/* A request for s that must fail with code before a dataset is made,
 * its message naming must; the dataset is left zeroed. */
static void refused(parload_loader *l, const parload_request *r, int code,
		    const char *must, const char *what, parload_error *err)
{
	parload_dataset ds;

	memset(&ds, 0x5a, sizeof(ds));
	memset(err, 0, sizeof(*err));
	assert_refused(parload_loader_run(l, r, &ds, err), err, code, must,
		       what);
	tu_assert_empty(&ds, what);
	ck_assert_ptr_null(ds.raw_headers);
}

/* A count past the end of the files: the last file, the first view it
 * lacks and its size. */
START_TEST(test_count_past_end)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_request r;
	parload_error err;
	lt_stream s;
	char view[32];

	lt_layout(&s, 8, 3, PARLOAD_PIXEL_U8, PARLOAD_ENC_LE, 20, 4, 2, 2);
	s.nfiles = 3;
	s.views[1] = 3;
	s.views[2] = 1;
	lt_write(&s, "past");
	s.d.count = 7; /* the files hold 6 */
	lt_request(&s, &r);
	refused(l, &r, PARLOAD_ETRUNCATED, s.paths[2], "count past the end",
		&err);
	ck_assert_uint_eq(err.view, 6);
	ck_assert_uint_eq(err.offset, tu_file_size(s.paths[2]));
	snprintf(view, sizeof(view), "(view 6, byte offset %" PRIu64 ")",
		 tu_file_size(s.paths[2]));
	ck_assert_msg(strstr(err.message, view), "%s", err.message);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* A file of the list shorter than the offset, or ending in a partial
 * record (no count): that file, the view and the byte offset. */
START_TEST(test_list_file_short)
{
	parload_loader *l = tu_loader(3, 0, 0);
	parload_request r;
	parload_error err;
	lt_stream s;
	char want[64];

	lt_layout(&s, 6, 2, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 30, 5, 0, 2);
	s.nfiles = 3;
	s.views[1] = 2;
	s.views[2] = 2;
	lt_write(&s, "short");
	lt_request(&s, &r);
	/* File 1 is shorter than the offset. */
	tu_truncate(s.paths[1], 29);
	refused(l, &r, PARLOAD_ETRUNCATED, s.paths[1], "below the offset",
		&err);
	ck_assert_uint_eq(err.offset, 29);
	ck_assert_uint_eq(err.view, 2);
	/* File 1 ends 10 bytes into its second record (view 3). */
	tu_truncate(s.paths[1], 30 + 29 + 10);
	refused(l, &r, PARLOAD_ETRUNCATED, s.paths[1], "partial record",
		&err);
	ck_assert_uint_eq(err.view, 3);
	ck_assert_uint_eq(err.offset, 30 + 29);
	snprintf(want, sizeof(want), "(view 3, byte offset %d)", 30 + 29);
	ck_assert_msg(strstr(err.message, want), "%s", err.message);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* A list long enough to be opened, checked and closed by the workers
 * (parload opens lists of 64 files or more so): 100 files of one view of
 * 8 x 3 u16, pixel (v, i) = 500 v + i by the test's formula, loaded
 * whole and as a band of sinograms by 1 to 4 threads (2 under valgrind);
 * then, with two files bad, far apart in the list (so in different
 * workers' runs), the error names the first of them, whichever worker met
 * its own first, and the load leaves nothing behind. */
#define LONG_FILES 100

START_TEST(test_long_list)
{
	const char *paths[LONG_FILES];
	char *own[LONG_FILES];
	parload_desc d;
	parload_request r;
	parload_error err;
	parload_dataset ds;
	parload_selection sel;

	for (int v = 0; v < LONG_FILES; v++) {
		uint16_t px[24];
		char name[32];

		for (int i = 0; i < 24; i++)
			px[i] = (uint16_t)(500 * v + i);
		snprintf(name, sizeof(name), "long.%03d", v);
		own[v] = tu_path(name);
		paths[v] = own[v];
		tu_write_file(own[v], px, sizeof(px));
	}
	parload_desc_init(&d);
	d.width = 8;
	d.height = 3;
	d.pixel_type = PARLOAD_PIXEL_U16;
	parload_request_init(&r);
	r.source.paths = paths;
	r.source.path_count = LONG_FILES;
	r.source.desc = &d;
	for (unsigned t = tu_under_valgrind() ? 2 : 1; t <= 4;
	     t += tu_under_valgrind() ? 4 : 1) {
		parload_loader *l = tu_loader(t, 0, 0);
		const uint16_t *px;

		r.selection = NULL;
		ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
			      err.message);
		ck_assert_uint_eq(ds.shape.views, LONG_FILES);
		px = ds.pixels;
		/* Each pixel compared, but ck_assert only for a wrong one:
		 * each that passes costs a write() to Check's log. */
		for (int v = 0; v < LONG_FILES; v++)
			for (int i = 0; i < 24; i++)
				if (px[v * 24 + i] != 500 * v + i)
					ck_assert_uint_eq(px[v * 24 + i],
							  500 * v + i);
		parload_dataset_free(&ds);
		/* Rows 1:3 of views 10:90, as sinograms. */
		parload_selection_init(&sel);
		sel.views.start = 10;
		sel.views.stop = 90;
		sel.rows.start = 1;
		sel.rows.stop = 3;
		sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
		r.selection = &sel;
		ck_assert_msg(parload_loader_run(l, &r, &ds, &err) == 0, "%s",
			      err.message);
		px = ds.pixels;
		for (int y = 0; y < 2; y++)
			for (int k = 0; k < 80; k++)
				for (int c = 0; c < 8; c++) {
					const unsigned have =
						px[(y * 80 + k) * 8 + c];
					const unsigned want = 500 * (10 + k) +
							      (1 + y) * 8 + c;

					if (have != want)
						ck_assert_uint_eq(have, want);
				}
		parload_dataset_free(&ds);
		parload_loader_free(l);
	}
	/* File 95 a folder, file 20 gone. */
	r.selection = NULL;
	ck_assert_int_eq(unlink(own[95]), 0);
	ck_assert_int_eq(mkdir(own[95], 0755), 0);
	ck_assert_int_eq(unlink(own[20]), 0);
	for (unsigned t = 2; t <= 4; t++) {
		parload_loader *l = tu_loader(t, 0, 0);

		for (int round = 0; round < (tu_under_valgrind() ? 1 : 10);
		     round++)
			refused(l, &r, PARLOAD_EOPEN, own[20], "first bad file",
				&err);
		parload_loader_free(l);
	}
	/* Files 20 and 95 back, a partial record in file 60: named, with
	 * its view. */
	{
		const uint16_t px[24] = { 0 };

		tu_write_file(own[20], px, sizeof(px));
		ck_assert_int_eq(rmdir(own[95]), 0);
		tu_write_file(own[95], px, sizeof(px));
	}
	tu_truncate(own[60], 47);
	{
		parload_loader *l = tu_loader(3, 0, 0);

		refused(l, &r, PARLOAD_ETRUNCATED, own[60], "partial record",
			&err);
		ck_assert_uint_eq(err.view, 60);
		parload_loader_free(l);
	}
	for (int v = 0; v < LONG_FILES; v++) {
		unlink(own[v]);
		free(own[v]);
	}
}
END_TEST

/* One file without a count, ending in a partial record. */
START_TEST(test_partial_record)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_request r;
	parload_error err;
	lt_stream s;

	lt_layout(&s, 14, 3, PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P, 9, 3, 6,
		  4);
	s.junk = 3 + 20; /* a header and part of a payload */
	lt_write(&s, "partial");
	lt_request(&s, &r);
	refused(l, &r, PARLOAD_ETRUNCATED, s.paths[0], "partial record", &err);
	ck_assert_uint_eq(err.view, 4);
	ck_assert_uint_eq(err.offset, 9 + 4 * (3 + 63 + 6));
	ck_assert_msg(strstr(err.message, "view 4"), "%s", err.message);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* The single-threaded strategies read parload's own format only. */
START_TEST(test_strategy_enotsup)
{
	parload_request r;
	parload_error err;
	lt_stream s;

	lt_layout(&s, 4, 4, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 0, 0, 0, 3);
	lt_write(&s, "strat");
	lt_request(&s, &r);
	for (int st = 0; st < PARLOAD_STRATEGY_COUNT_; st++) {
		parload_loader *l;

		if (parload_strategy_caps(st) & PARLOAD_CAP_LAYOUTS)
			continue;
		l = tu_loader(1, st, 0);
		refused(l, &r, PARLOAD_ENOTSUP, s.paths[0],
			parload_strategy_name(st), &err);
		ck_assert_msg(strstr(err.message, parload_strategy_name(st)),
			      "%s", err.message);
		parload_loader_free(l);
	}
	lt_free(&s);
}
END_TEST

/* A raw layout from a pipe needs its count, and says so before reading
 * (the writer end stays open and silent, so a read would hang). */
START_TEST(test_pipe_needs_count)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_request r;
	parload_error err;
	parload_desc d;
	int fds[2];

	ck_assert_int_eq(parload_desc_parse("width=4,height=4,type=u16be",
					    &d, &err), 0);
	ck_assert_int_eq(pipe(fds), 0);
	parload_request_init(&r);
	r.source.fd = fds[0];
	r.source.name = "the pipe";
	r.source.desc = &d;
	refused(l, &r, PARLOAD_EINVAL, "the pipe", "pipe", &err);
	ck_assert_ptr_nonnull(strstr(err.message, "count"));
	close(fds[0]);
	close(fds[1]);
	parload_loader_free(l);
}
END_TEST

/* A raw layout with its count from a pipe, fed in odd-sized writes: the
 * offset and the gaps dropped, the headers and the converted pixels as
 * the reference says; a stream that stops early is ETRUNCATED. */
static const struct {
	int type, enc;
	uint32_t w;
} piped[] = {
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 10 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 10 },
	{ PARLOAD_PIXEL_F64, PARLOAD_ENC_BE, 3 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO12P, 14 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_U12MSB, 14 },
	{ PARLOAD_PIXEL_U16, PARLOAD_ENC_MONO10P, 12 },
};

START_TEST(test_pipe_reads_as_it_arrives)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_dataset ds;
	parload_error err;
	unsigned char *data;
	parload_desc d;
	lt_stream s;
	lt_sel q;
	size_t len;

	lt_layout(&s, piped[_i].w, 5, piped[_i].type, piped[_i].enc, 7, 5, 3,
		  6);
	lt_write(&s, "piped");
	d = s.d;
	d.count = 6;
	data = tu_read_all(s.paths[0], &len);
	ck_assert_int_eq(tu_load_fed_as(l, &d, data, len, 1000, TU_VIA_PIPE,
					"pipe", &ds, &err),
			 0);
	lt_sel_all(&s, &q);
	lt_assert_loaded(&s, &q, &ds, false, "pipe");
	ck_assert_uint_eq(ds.stats.threads, 1);
	parload_dataset_free(&ds);
	/* Half the stream: the views that came are not the load. */
	ck_assert_int_eq(tu_load_fed_as(l, &d, data, len / 2, 1000,
					TU_VIA_PIPE, "pipe", &ds, &err),
			 PARLOAD_ETRUNCATED);
	tu_assert_empty(&ds, "half a pipe");
	free(data);
	lt_free(&s);
	parload_loader_free(l);
}
END_TEST

static int no_batch(const parload_batch *b, void *arg)
{
	(void)b;
	(void)arg;
	return 0;
}

/* Following a raw stream needs one file and a count. */
START_TEST(test_follow_needs_count)
{
	parload_loader *l = tu_loader(2, 0, 0);
	parload_request r;
	parload_error err;
	lt_stream s;

	lt_layout(&s, 4, 4, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 0, 8, 0, 2);
	s.nfiles = 2;
	s.views[1] = 2;
	lt_write(&s, "follow");
	lt_request(&s, &r);
	r.flags = PARLOAD_REQ_FOLLOW;
	r.on_batch = no_batch;
	r.timeout = 0.1;
	refused(l, &r, PARLOAD_EINVAL, "count", "two files", &err);
	s.d.count = 4;
	refused(l, &r, PARLOAD_EINVAL, "one file", "two files, a count", &err);
	s.d.count = 0;
	r.source.paths = NULL;
	r.source.path_count = 0;
	r.source.path = s.paths[0];
	refused(l, &r, PARLOAD_EINVAL, "count", "one file, no count", &err);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* Sizes past 64 bits in a description given as a struct. */
START_TEST(test_overflow)
{
	parload_loader *l = tu_loader(1, 0, 0);
	parload_request r;
	parload_error err;
	lt_stream s;

	lt_layout(&s, 4, 4, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 0, 0, 0, 2);
	lt_write(&s, "ovf");
	lt_request(&s, &r);
	s.d.header = UINT64_MAX - 10;
	refused(l, &r, PARLOAD_EOVERFLOW, s.paths[0], "header", &err);
	s.d.header = 0;
	s.d.count = UINT64_MAX / 8;
	refused(l, &r, PARLOAD_EOVERFLOW, s.paths[0], "count", &err);
	s.d.count = 0;
	s.d.offset = UINT64_MAX - 4;
	s.d.count = 2;
	refused(l, &r, PARLOAD_EOVERFLOW, s.paths[0], "offset", &err);
	s.d.offset = 0;
	s.d.count = 0;
	s.d.width = UINT32_MAX;
	s.d.height = UINT32_MAX;
	s.d.pixel_type = PARLOAD_PIXEL_F64;
	refused(l, &r, PARLOAD_EOVERFLOW, s.paths[0], "pixels", &err);
	/* Not whole bytes, given as a struct. */
	s.d.width = 5;
	s.d.height = 1;
	s.d.pixel_type = PARLOAD_PIXEL_U16;
	s.d.encoding = PARLOAD_ENC_MONO10P;
	refused(l, &r, PARLOAD_EINVAL, "width", "mono10p", &err);
	ck_assert_msg(strstr(err.message, s.paths[0]), "%s", err.message);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layouts");
	TCase *t = tu_tcase(s, "loads", 120);

	tcase_add_loop_test(t, test_random_layouts, 0, 3 * TU_COUNT(types));
	tcase_add_loop_test(t, test_mapped_sinograms, 0,
			    variants(TU_COUNT(types)));
	tcase_add_loop_test(t, test_packed, 0, 8);
	tcase_add_loop_test(t, test_native_described, 0, 3);
	tcase_add_loop_test(t, test_into_buffers, 0, 8);
	tcase_add_loop_test(t, test_batches_and_windows, 0, 8);
	tcase_add_test(t, test_count);
	tcase_add_loop_test(t, test_swap_in_place, 0, variants(12));
	tcase_add_loop_test(t, test_swap_batches_and_buffers, 0, variants(12));
	tcase_add_loop_test(t, test_packed_in_place, 0, variants(8));
	tcase_add_loop_test(t, test_packed_batches_and_buffers, 0,
			    variants(8));
	t = tu_tcase(s, "bad", 30);
	tcase_add_test(t, test_parse_errors);
	tcase_add_test(t, test_size_parse);
	tcase_add_test(t, test_count_past_end);
	tcase_add_test(t, test_list_file_short);
	tcase_add_test(t, test_long_list);
	tcase_add_test(t, test_partial_record);
	tcase_add_test(t, test_strategy_enotsup);
	tcase_add_test(t, test_pipe_needs_count);
	tcase_add_loop_test(t, test_pipe_reads_as_it_arrives, 0,
			    (int)(sizeof(piped) / sizeof(piped[0])));
	tcase_add_test(t, test_follow_needs_count);
	tcase_add_test(t, test_overflow);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
