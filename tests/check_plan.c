/*
 * check_plan.c - the extent plan: every selected header and pixel byte is
 * read by exactly one worker, shares tile the plan, view-layout boundaries
 * are aligned in the pixel array, and the cursor maps each share onto the
 * right places for every selection and layout: checked against an
 * in-memory image of the file sliced by the test itself.  Pure arithmetic:
 * no files.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static parload_file_header header(uint64_t views, uint32_t w, uint32_t h,
				  int type)
{
	parload_file_header fh;

	ck_assert_int_eq(parload_file_header_init(&fh, views, w, h, type, 0),
			 0);
	return fh;
}

static parload_shape whole(const parload_file_header *h)
{
	parload_shape s;

	ck_assert_int_eq(tu_resolve(h, NULL, &s, NULL), 0);
	return s;
}

/* The partition invariants of a whole-file plan for (workers, align). */
static void check_partition(const parload_file_header *h, unsigned n,
			    size_t align)
{
	parload_shape sh = whole(h);
	parload__share *s = calloc(n, sizeof(*s));
	uint64_t total = h->view_count * h->payload_size, size;
	parload__plan p;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(parload_file_size(h, &size), 0);
	tu_plan_init(&p, h, &sh, NULL, NULL);
	parload__plan_split(&p, n, align, s);
	if (total == 0) {
		for (unsigned w = 0; w < n; w++)
			ck_assert_uint_eq(s[w].begin, s[w].end);
		free(s);
		return;
	}
	/* A whole-file share's positions are file offsets less 64. */
	ck_assert_uint_eq(parload__share_stride(&p, &s[0]),
			  parload__record_size(h));
	ck_assert_uint_eq(s[0].begin, 0);
	ck_assert_uint_eq(s[n - 1].end + 64, size);
	ck_assert_uint_eq(s[n - 1].dst_end, total);
	for (unsigned w = 0; w < n; w++) {
		ck_assert_uint_le(s[w].begin, s[w].end);
		ck_assert(s[w].headers);
		if (w > 0) {
			ck_assert_uint_eq(s[w].begin, s[w - 1].end);
			ck_assert_uint_eq(s[w].dst_begin, s[w - 1].dst_end);
		}
		if (w > 0 && s[w].dst_begin % align && s[w].dst_begin != total)
			ck_abort_msg("worker %u starts unaligned", w);
		/* Balanced: no worker has more than its share plus one
		 * boundary step. */
		ck_assert_uint_le(s[w].dst_end - s[w].dst_begin,
				  total / n + align + 1);
	}
	free(s);
}

START_TEST(test_partition_shapes)
{
	static const struct {
		uint64_t views;
		uint32_t w, h;
		int type;
	} shapes[] = {
		{ 0, 4, 4, PARLOAD_PIXEL_U8 },
		{ 1, 1, 1, PARLOAD_PIXEL_U8 },
		{ 1, 1024, 1024, PARLOAD_PIXEL_F32 },
		{ 3, 7, 5, PARLOAD_PIXEL_U16 },
		{ 2000, 896, 64, PARLOAD_PIXEL_U16 },
		{ 200000, 256, 1, PARLOAD_PIXEL_U8 },
		{ 17, 33, 3, PARLOAD_PIXEL_F64 },
	};
	static const unsigned workers[] = { 1, 2, 3, 7, 16, 64 };
	static const size_t aligns[] = { 1, 64, 4096, 2 << 20 };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		parload_file_header h = header(shapes[i].views, shapes[i].w,
					       shapes[i].h, shapes[i].type);

		for (size_t k = 0; k < sizeof(workers) / sizeof(workers[0]); k++)
			for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++)
				check_partition(&h, workers[k], aligns[a]);
	}
}
END_TEST

START_TEST(test_one_huge_view_is_split)
{
	/* One 256 MiB view over four workers: each fills a quarter. */
	parload_file_header h = header(1, 16384, 4096, PARLOAD_PIXEL_F32);
	parload_shape sh = whole(&h);
	parload__share s[4];
	parload__plan p;

	tu_plan_init(&p, &h, &sh, NULL, NULL);
	parload__plan_split(&p, 4, 4096, s);
	for (unsigned w = 0; w < 4; w++)
		ck_assert_uint_eq(s[w].dst_end - s[w].dst_begin, 64ull << 20);
	/* The first worker reads the header with its quarter. */
	ck_assert_uint_eq(s[0].end, 32 + (64ull << 20));
	ck_assert_uint_eq(s[1].begin, 32 + (64ull << 20));
}
END_TEST

START_TEST(test_sinogram_bands_own_rows)
{
	/* 64 rows over 4 workers: 16 rows each, every view; the band of the
	 * first row reads the headers. */
	parload_file_header h = header(10, 8, 64, PARLOAD_PIXEL_U16);
	parload_selection sel;
	parload_shape sh;
	parload__share s[4];
	parload__plan p;

	parload_selection_init(&sel);
	sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	ck_assert_int_eq(tu_resolve(&h, &sel, &sh, NULL), 0);
	tu_plan_init(&p, &h, &sh, NULL, NULL);
	p.bands = true;
	parload__plan_split(&p, 4, 4096, s);
	for (unsigned w = 0; w < 4; w++) {
		ck_assert_uint_eq(s[w].row_begin, 16 * w);
		ck_assert_uint_eq(s[w].row_end, 16 * (w + 1));
		ck_assert(s[w].headers == (w == 0));
		ck_assert_uint_eq(s[w].dst_begin, 16 * w * 10 * 16);
		ck_assert_uint_eq(s[w].dst_end, 16 * (w + 1) * 10 * 16);
	}
}
END_TEST

START_TEST(test_sinogram_views_split)
{
	/* Without bands, 10 views over 4 workers: each a run of whole views
	 * (2, 3, 2, 3: floor(10 w / 4)), every row and the headers. */
	static const uint64_t first[] = { 0, 2, 5, 7, 10 };
	parload_file_header h = header(10, 8, 64, PARLOAD_PIXEL_U16);
	parload_selection sel;
	parload_shape sh;
	parload__share s[4];
	parload__plan p;
	uint64_t stride;

	parload_selection_init(&sel);
	sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	ck_assert_int_eq(tu_resolve(&h, &sel, &sh, NULL), 0);
	tu_plan_init(&p, &h, &sh, NULL, NULL);
	parload__plan_split(&p, 4, 4096, s);
	stride = parload__share_stride(&p, &s[0]);
	ck_assert_uint_eq(stride, 32 + 64 * 8 * 2);
	for (unsigned w = 0; w < 4; w++) {
		ck_assert_uint_eq(s[w].row_begin, 0);
		ck_assert_uint_eq(s[w].row_end, 64);
		ck_assert(s[w].headers);
		ck_assert_uint_eq(s[w].begin, first[w] * stride);
		ck_assert_uint_eq(s[w].end, first[w + 1] * stride);
	}
}
END_TEST

/* ---- the cursor against an oracle ---- */

/* Sinogram plans split by bands of rows (or by views) in cursor_fill. */
static bool bands;

typedef struct image {
	parload_file_header h;
	uint64_t size;
	unsigned char *file;
} image;

static image make_image(uint64_t views, uint32_t w, uint32_t h, int type)
{
	image im;

	im.h = header(views, w, h, type);
	ck_assert_int_eq(parload_file_size(&im.h, &im.size), 0);
	im.file = malloc(im.size);
	ck_assert_ptr_nonnull(im.file);
	for (uint64_t i = 0; i < im.size; i++)
		im.file[i] = (unsigned char)(i * 131 + (i >> 8) + 7);
	return im;
}

/* What a load of shape s must deliver, sliced out of the image. */
static void expect(const image *im, const parload_shape *s,
		   unsigned char *headers, unsigned char *pixels)
{
	const uint64_t bpp = im->h.bytes_per_pixel;
	const uint64_t rowb = im->h.width * bpp, take = s->cols * bpp;

	for (uint64_t k = 0; k < s->views; k++) {
		const unsigned char *rec =
			im->file + parload__view_offset(
					   &im->h, parload_shape_view(s, k));

		memcpy(headers + k * 32, rec, 32);
		for (uint64_t r = 0; r < s->rows; r++) {
			const unsigned char *src = rec + 32 +
						   (s->row_start + r) * rowb +
						   s->col_start * bpp;
			uint64_t at = s->layout == PARLOAD_LAYOUT_VIEWS ?
					      (k * s->rows + r) * take :
					      (r * s->views + k) * take;

			memcpy(pixels + at, src, take);
		}
	}
}

/* Serve every share from the image through the cursor, as preadv (or a
 * bounce buffer, for skipped bytes) would, and compare with the oracle. */
static void cursor_fill(const image *im, const parload_selection *sel,
			unsigned n, size_t max_bytes, int max_iov)
{
	parload__share *sh = calloc(n, sizeof(*sh));
	unsigned char *headers, *pixels, *want_headers, *want_pixels;
	struct iovec iov[64];
	parload_shape s;
	parload__plan p;
	uint64_t hbytes, pbytes;

	ck_assert_int_eq(tu_resolve(&im->h, sel, &s, NULL), 0);
	hbytes = s.views * 32;
	pbytes = s.views * s.view_bytes;
	headers = malloc(hbytes + 1);
	pixels = malloc(pbytes + 1);
	want_headers = malloc(hbytes + 1);
	want_pixels = malloc(pbytes + 1);
	memset(headers, 0xa5, hbytes);
	memset(pixels, 0xa5, pbytes);
	expect(im, &s, want_headers, want_pixels);
	tu_plan_init(&p, &im->h, &s, (parload_view_header *)headers, pixels);
	p.bands = bands;
	parload__plan_split(&p, n, 64, sh);
	for (unsigned w = 0; w < n; w++) {
		parload__cursor c;
		const parload__file *file;
		uint64_t off;
		int cnt;

		parload__cursor_init(&c, &p, &sh[w]);
		while ((cnt = parload__cursor_next(&c, iov, NULL, max_iov,
						   max_bytes, &off, &file)) > 0) {
			size_t got = 0;

			/* Each piece checked, with ck_assert only for a bad
			 * one: each that passes costs a write() to Check's log
			 * (mark_point), and the plans make hundreds of
			 * thousands of pieces. */
			if (cnt > max_iov)
				ck_assert_int_le(cnt, max_iov);
			for (int k = 0; k < cnt; k++) {
				const size_t len = iov[k].iov_len;

				if (len == 0)
					ck_assert_uint_gt(len, 0);
				if (off + got + len > im->size)
					ck_assert_uint_le(off + got + len,
							  im->size);
				if (iov[k].iov_base)
					memcpy(iov[k].iov_base,
					       im->file + off + got, len);
				else if (!p.crop)
					ck_assert_msg(p.crop, "a skip without "
						      "a crop");
				got += len;
			}
			if (got > max_bytes)
				ck_assert_uint_le(got, max_bytes);
		}
		ck_assert_uint_eq(c.pos, sh[w].end);
	}
	ck_assert_int_eq(memcmp(headers, want_headers, hbytes), 0);
	ck_assert_int_eq(memcmp(pixels, want_pixels, pbytes), 0);
	free(sh);
	free(headers);
	free(pixels);
	free(want_headers);
	free(want_pixels);
}

static parload_selection sel_of(int64_t v0, int64_t v1, int64_t step,
				int64_t r0, int64_t r1, int64_t c0, int64_t c1,
				parload_layout layout)
{
	parload_selection s;

	parload_selection_init(&s);
	s.views.start = v0;
	s.views.stop = v1;
	s.views.step = step;
	s.rows.start = r0;
	s.rows.stop = r1;
	s.cols.start = c0;
	s.cols.stop = c1;
	s.layout = layout;
	return s;
}

START_TEST(test_cursor_places_every_byte)
{
	const int64_t O = PARLOAD_OMIT;
	image a = make_image(50, 3, 5, PARLOAD_PIXEL_U16);
	image b = make_image(1, 1000, 3, PARLOAD_PIXEL_U8);
	image c = make_image(300, 1, 1, PARLOAD_PIXEL_U8);
	parload_selection all = sel_of(O, O, O, O, O, O, O, 0);

	for (unsigned n = 1; n <= 9; n += 4) {
		cursor_fill(&a, &all, n, 1 << 20, 64);
		cursor_fill(&a, &all, n, 7, 64);   /* byte budget cuts buffers */
		cursor_fill(&a, &all, n, 4096, 3); /* buffer count cuts batches */
		cursor_fill(&b, &all, n, 100, 64);
		cursor_fill(&c, &all, n, 1 << 20, 64);
		cursor_fill(&c, &all, n, 33, 2);
	}
	free(a.file);
	free(b.file);
	free(c.file);
}
END_TEST

/* Random selections of odd shapes, both layouts, against the oracle. */
START_TEST(test_cursor_selections)
{
	static const struct {
		uint64_t views;
		uint32_t w, h;
		int type;
	} shapes[] = {
		{ 13, 7, 5, PARLOAD_PIXEL_U16 },
		{ 1, 33, 9, PARLOAD_PIXEL_F64 },
		{ 40, 1, 1, PARLOAD_PIXEL_U8 },
		{ 6, 64, 17, PARLOAD_PIXEL_F32 },
		{ 3, 2000, 2, PARLOAD_PIXEL_U8 },
	};
	uint64_t seed = 12345;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		image im = make_image(shapes[i].views, shapes[i].w,
				      shapes[i].h, shapes[i].type);

		for (int t = 0; t < 40; t++) {
			int64_t V = (int64_t)im.h.view_count, H = im.h.height,
				W = im.h.width, v0, v1, r0, r1, c0, c1, st;
			parload_selection sel;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			v0 = (int64_t)((seed >> 10) % (uint64_t)V);
			v1 = v0 + 1 + (int64_t)((seed >> 20) % (uint64_t)(V - v0));
			st = 1 + (int64_t)((seed >> 30) % 4);
			r0 = (int64_t)((seed >> 34) % (uint64_t)H);
			r1 = r0 + 1 + (int64_t)((seed >> 40) % (uint64_t)(H - r0));
			c0 = (int64_t)((seed >> 46) % (uint64_t)W);
			c1 = c0 + 1 + (int64_t)((seed >> 52) % (uint64_t)(W - c0));
			sel = sel_of(v0, v1, st, r0, r1, c0, c1, t % 2);
			for (unsigned n = 1; n <= 5; n += 2) {
				/* Sinograms by views, then in bands. */
				bands = t % 4 == 1;
				cursor_fill(&im, &sel, n, 1 << 20, 64);
				cursor_fill(&im, &sel, n, 11, 5);
			}
		}
		free(im.file);
	}
}
END_TEST

/* ---- a container's strips table, in runs ---- */

/* One table: its strips as given (page UINT32_MAX: not given), per_view,
 * and the runs they make. */
struct strips_case {
	const char *what;
	uint32_t per_view;
	uint64_t n;
	parload__strip s[12];
	uint64_t runs;
};

#define ABSENT { 0, 0, 0, UINT32_MAX }

static const struct strips_case strips_cases[] = {
	{ "pages one after another", 1, 6,
	  { { 100, 10, 0, 0 }, { 110, 10, 0, 1 }, { 120, 10, 0, 2 },
	    { 130, 10, 0, 3 }, { 140, 10, 0, 4 }, { 150, 10, 0, 5 } }, 1 },
	{ "a gap (an index node) every three", 1, 7,
	  { { 0, 8, 0, 0 }, { 8, 8, 0, 1 }, { 16, 8, 0, 2 }, { 30, 8, 0, 3 },
	    { 38, 8, 0, 4 }, { 46, 8, 0, 5 }, { 60, 8, 0, 6 } }, 3 },
	{ "a file each", 1, 3,
	  { { 8, 4, 0, 0 }, { 8, 4, 1, 0 }, { 8, 4, 2, 0 } }, 3 },
	{ "three strips a view, the last shorter", 3, 6,
	  { { 0, 4, 0, 0 }, { 4, 4, 0, 0 }, { 8, 2, 0, 0 },
	    { 10, 4, 0, 1 }, { 14, 4, 0, 1 }, { 18, 2, 0, 1 } }, 4 },
	{ "two strips a view, pages counting up", 2, 8,
	  { { 0, 4, 0, 7 }, { 4, 4, 0, 7 }, { 8, 4, 0, 8 }, { 12, 4, 0, 8 },
	    { 16, 4, 0, 9 }, { 20, 4, 0, 9 }, { 24, 4, 0, 10 },
	    { 28, 4, 0, 10 } }, 1 },
	{ "frames skipped (NXtomo flats)", 1, 4,
	  { { 0, 4, 0, 0 }, { 4, 4, 0, 1 }, { 12, 4, 0, 3 }, { 16, 4, 0, 4 } },
	  2 },
	{ "offsets going back", 1, 4,
	  { { 40, 4, 0, 0 }, { 30, 4, 0, 1 }, { 20, 4, 0, 2 }, { 10, 4, 0, 3 } },
	  4 },
	{ "one place (a decoder's strips: no offsets)", 2, 6,
	  { { 0, 0, 0, 5 }, { 0, 0, 0, 5 }, { 0, 0, 0, 6 }, { 0, 0, 0, 6 },
	    { 0, 0, 0, 7 }, { 0, 0, 0, 7 } }, 1 },
	{ "strips not given", 1, 6,
	  { { 0, 4, 0, 0 }, ABSENT, ABSENT, { 12, 4, 0, 3 }, { 16, 4, 0, 4 },
	    ABSENT }, 2 },
};

static bool strip_eq(parload__strip a, parload__strip b)
{
	return a.off == b.off && a.bytes == b.bytes && a.file == b.file &&
	       a.page == b.page;
}

START_TEST(test_strips_runs)
{
	const struct strips_case *k = &strips_cases[_i];
	const parload__strip none = { 0 };
	parload__strips t = { .rows = 1, .per_view = k->per_view,
			      .views = k->n / k->per_view };
	uint64_t given = 0, last = 0, hint = 0;

	for (uint64_t i = 0; i < k->n; i++)
		if (k->s[i].page != UINT32_MAX) {
			ck_assert_int_eq(parload__strips_add(&t, i, &k->s[i]), 0);
			given++;
			last = i;
		}
	ck_assert_msg(t.runs == k->runs, "%s: %" PRIu64 " runs, expected %"
		      PRIu64, k->what, t.runs, k->runs);
	ck_assert_uint_eq(t.added, given);
	/* Each strip as given: in order with a hint, backwards with the
	 * same hint, and each on its own by the search. */
	for (uint64_t i = 0; i < k->n; i++) {
		const parload__strip want = k->s[i].page == UINT32_MAX ?
						    none :
						    k->s[i];

		ck_assert_msg(strip_eq(parload__strip_of(&t, i, &hint), want),
			      "%s: strip %" PRIu64 " in order", k->what, i);
		ck_assert_msg(strip_eq(parload__strip_of(&t, i, NULL), want),
			      "%s: strip %" PRIu64 " alone", k->what, i);
		ck_assert_msg(strip_eq(parload__strip_of(&t, k->n - 1 - i,
							 &hint),
				       k->s[k->n - 1 - i].page == UINT32_MAX ?
					       none :
					       k->s[k->n - 1 - i]),
			      "%s: strip %" PRIu64 " backwards", k->what,
			      k->n - 1 - i);
	}
	ck_assert(strip_eq(parload__strip_of(&t, k->n, NULL), none));
	/* A strip at or before the last given is refused, t unchanged. */
	ck_assert_int_eq(parload__strips_add(&t, last, &k->s[0]), 1);
	ck_assert_int_eq(parload__strips_add(&t, 0, &k->s[0]), 1);
	ck_assert_uint_eq(t.runs, k->runs);
	ck_assert_uint_eq(t.added, given);
	parload__strips_clear(&t);
	ck_assert_uint_eq(t.runs, 0);
	ck_assert(strip_eq(parload__strip_of(&t, 0, NULL), none));
	free(t.run);
}
END_TEST

/* 100,000 strips a run apart from one another by every 7th: the runs
 * grow as strips come, and a search finds each. */
START_TEST(test_strips_many)
{
	parload__strips t = { .rows = 1, .per_view = 1, .views = 100000 };
	uint64_t off = 0;

	for (uint64_t i = 0; i < t.views; i++) {
		off += i % 7 == 0 ? 100 : 64;
		ck_assert_int_eq(parload__strips_add(&t, i, &(parload__strip){
			.off = off, .bytes = 64, .page = (uint32_t)i }), 0);
	}
	ck_assert_uint_eq(t.runs, (t.views + 6) / 7);
	off = 0;
	for (uint64_t i = 0; i < t.views; i++) {
		const uint64_t j = (i * 7919) % t.views;
		const parload__strip s = parload__strip_of(&t, j, NULL);

		off += i % 7 == 0 ? 100 : 64;
		ck_assert_uint_eq(s.page, j);
		ck_assert_uint_eq(parload__strip_of(&t, i, NULL).off, off);
	}
	free(t.run);
}
END_TEST

/* Stepped runs given at once make the runs that strip by strip would:
 * segments (start, count, offset, step), each after the last, some
 * continuing it, some not. */
START_TEST(test_strips_stepped)
{
	static const struct {
		uint64_t n, off, step;
		uint32_t page;
	} seg[] = {
		{ 5, 100, 10, 0 },   /* a run */
		{ 3, 150, 10, 5 },   /* continues it */
		{ 1, 180, 10, 8 },   /* one strip, continuing */
		{ 4, 200, 10, 9 },   /* a gap: a new run */
		{ 2, 260, 20, 13 },  /* another step */
		{ 0, 300, 10, 15 },  /* nothing */
		{ 6, 300, 0, 15 },   /* no step (one place) */
		{ 3, 300, 7, 21 },   /* pages going on, offsets too */
	};
	parload__strips a = { .rows = 1, .per_view = 1, .views = 24 };
	parload__strips b = a;
	uint64_t i = 0;

	for (size_t k = 0; k < sizeof(seg) / sizeof(seg[0]); k++) {
		const parload__strip s = { .off = seg[k].off, .bytes = 10,
					   .page = seg[k].page };

		ck_assert_int_eq(parload__strips_add_stepped(&a, i, seg[k].n, &s,
							     seg[k].step), 0);
		for (uint64_t j = 0; j < seg[k].n; j++) {
			const parload__strip x = {
				.off = seg[k].off + j * seg[k].step,
				.bytes = 10, .page = seg[k].page + (uint32_t)j
			};

			ck_assert_int_eq(parload__strips_add(&b, i + j, &x), 0);
		}
		i += seg[k].n;
		ck_assert_uint_eq(a.runs, b.runs);
		ck_assert_uint_eq(a.added, b.added);
		ck_assert_mem_eq(a.run, b.run, a.runs * sizeof(*a.run));
	}
	ck_assert_uint_eq(a.added, 24);
	ck_assert_uint_eq(a.runs, 5);
	free(a.run);
	free(b.run);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plan");
	TCase *t = tcase_create("partition");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_partition_shapes);
	tcase_add_test(t, test_one_huge_view_is_split);
	tcase_add_test(t, test_sinogram_bands_own_rows);
	tcase_add_test(t, test_sinogram_views_split);
	tcase_add_test(t, test_cursor_places_every_byte);
	tcase_add_test(t, test_cursor_selections);
	suite_add_tcase(s, t);
	t = tcase_create("strips");
	tcase_add_loop_test(t, test_strips_runs, 0,
			    sizeof(strips_cases) / sizeof(strips_cases[0]));
	tcase_add_test(t, test_strips_many);
	tcase_add_test(t, test_strips_stepped);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
