/*
 * check_tiff.c - TIFF sources (src/formats/tiff/tiff.c) against fixtures the test
 * writes with libtiff: the reader's description and strips table for one
 * file, many pages, both byte orders, BigTIFF, strips of 1, 7 and all
 * rows, tiles with partial edge tiles, LZW and deflate with a predictor,
 * float32, lists and folders of files in numeric name order; the pixels
 * read through the table (the strips in place, or the table's decoder)
 * compared with the array written; loads through the engine
 * (parload_load, 1 to 4 threads, sinograms of a band); and every bad
 * input refused with the code and the message it must have.  The writer
 * (parload_save) is read back with libtiff.  The direct walk's table
 * (src/formats/tiff/tiff_walk.c) is libtiff's walk's for every uncompressed fixture,
 * and it falls back, saying why, on the others.  Files the test writes
 * itself, as tifffile lays them out, run in a build without libtiff too:
 * read by the direct walk, or refused saying what needs libtiff.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

static void swap_all(unsigned char *p, size_t n, size_t bpp)
{
	for (size_t i = 0; i + bpp <= n; i += bpp)
		for (size_t a = 0, b = bpp - 1; a < b; a++, b--) {
			const unsigned char c = p[i + a];

			p[i + a] = p[i + b];
			p[i + b] = c;
		}
}

/* Rows of strip j of a view (its last may be short). */
static size_t strip_rows(const parload__container *c, uint32_t j)
{
	const uint32_t y = j * c->strips.rows;

	return c->desc.height - y < c->strips.rows ? c->desc.height - y :
						      c->strips.rows;
}

/* Every view's pixels, read through the table as the engine reads it:
 * strips in place (swapped for a big-endian file), or each strip through
 * the decoder, in reverse order so that it moves between pages. */
/* A TIFF table's codec: its strips as they are, or libtiff's decoder. */
static int tcodec(const parload__strips *t)
{
	return t->decoder ? PARLOAD__CODEC_CUSTOM : PARLOAD__CODEC_NONE;
}

static unsigned char *via_table(const parload__container *c)
{
	const parload__strips *t = &c->strips;
	const size_t rs = c->desc.row_size, view = rs * c->desc.height;
	unsigned char *out = malloc(view * t->views + 1);
	parload_error err;

	ck_assert_ptr_nonnull(out);
	if (tcodec(t) == PARLOAD__CODEC_NONE) {
		for (uint64_t i = 0; i < t->views * t->per_view; i++) {
			const parload__strip xs = parload__strip_of(t, i, NULL);
			const parload__strip *x = &xs;
			const uint32_t j = (uint32_t)(i % t->per_view);
			const int fd = open(c->paths[x->file], O_RDONLY);
			const size_t n = strip_rows(c, j) * rs;

			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(pread(fd, out + (i / t->per_view) * view +
							   (size_t)j * t->rows * rs,
					       n, (off_t)x->off),
					 (ssize_t)n);
			close(fd);
		}
		if (c->desc.encoding == PARLOAD_ENC_BE)
			swap_all(out, view * t->views, c->desc.bytes_per_pixel);
		return out;
	}
	{
		const size_t len = (size_t)t->rows * rs;
		unsigned char *buf = malloc(len);
		void *state = NULL;

		ck_assert_ptr_nonnull(buf);
		ck_assert_msg(t->decoder->open(t, &state, &err) == 0, "%s",
			      err.message);
		for (uint64_t i = t->views * t->per_view; i-- > 0;) {
			const uint32_t j = (uint32_t)(i % t->per_view);

			ck_assert_msg(t->decoder->decode(state, t, i, buf, len,
							 &err) == 0,
				      "%s", err.message);
			memcpy(out + (i / t->per_view) * view +
				       (size_t)j * t->rows * rs,
			       buf, strip_rows(c, j) * rs);
		}
		t->decoder->close(state);
		free(buf);
	}
	return out;
}

static int read_path(const char *path, parload__container *c,
		     parload_error *err)
{
	parload_source src;

	parload_source_init(&src);
	src.path = path;
	return parload__tiff_read(&src, c, err);
}

/* src read by the back-end PARLOAD_TIFF names ("native", "libtiff";
 * NULL: auto), the public choice between tiff_walk.c's walk and
 * libtiff's. */
static int read_by(const parload_source *src, const char *backend,
		   parload__container *c, parload_error *err)
{
	int rc;

	if (backend)
		ck_assert_int_eq(setenv("PARLOAD_TIFF", backend, 1), 0);
	memset(err, 0, sizeof(*err));
	rc = parload__tiff_read(src, c, err);
	ck_assert_int_eq(unsetenv("PARLOAD_TIFF"), 0);
	return rc;
}

/* The direct walk alone (PARLOAD_TIFF=native) cannot take path (nothing
 * held), saying why as a build without libtiff would: code and a message
 * holding want. */
static void falls_back(const char *path, int code, const char *want)
{
	parload_source src;
	parload__container c;
	parload_error err;

	parload_source_init(&src);
	src.path = path;
	ck_assert_int_eq(read_by(&src, "native", &c, &err), code);
	ck_assert_ptr_null(c.paths);
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.message, path) && strstr(err.message, want),
		      "%s", err.message);
}

/* Two containers' descriptions and tables, entry by entry alike (a's
 * freed, and b's). */
static void same_containers(parload__container *a, parload__container *b)
{
	ck_assert_int_eq(a->desc.width, b->desc.width);
	ck_assert_int_eq(a->desc.height, b->desc.height);
	ck_assert_int_eq(a->desc.pixel_type, b->desc.pixel_type);
	ck_assert_uint_eq(a->desc.count, b->desc.count);
	ck_assert_int_eq(a->desc.encoding, b->desc.encoding);
	ck_assert_uint_eq(a->n, b->n);
	for (size_t k = 0; k < a->n; k++)
		ck_assert_str_eq(a->paths[k], b->paths[k]);
	ck_assert_int_eq(tcodec(&a->strips), PARLOAD__CODEC_NONE);
	ck_assert_int_eq(tcodec(&b->strips), PARLOAD__CODEC_NONE);
	ck_assert_uint_eq(a->strips.rows, b->strips.rows);
	ck_assert_uint_eq(a->strips.per_view, b->strips.per_view);
	ck_assert_uint_eq(a->strips.views, b->strips.views);
	for (uint64_t i = 0; i < a->strips.views * a->strips.per_view; i++) {
		const parload__strip xs = parload__strip_of(&a->strips, i, NULL);
		const parload__strip ys = parload__strip_of(&b->strips, i, NULL);
		const parload__strip *x = &xs, *y = &ys;

		ck_assert_msg(x->off == y->off && x->bytes == y->bytes &&
				      x->file == y->file && x->page == y->page,
			      "strip %" PRIu64 ": %" PRIu64 " +%" PRIu64
			      " file %u page %u, against %" PRIu64 " +%" PRIu64
			      " file %u page %u", i, x->off, x->bytes,
			      x->file, x->page, y->off, y->bytes, y->file,
			      y->page);
	}
	parload__container_free(a);
	parload__container_free(b);
}

/* The direct walk of path alone (PARLOAD_TIFF=native): its answer, *err
 * its error; its table, where it makes one, a plain one of the views
 * libtiff's walk finds too (same_tables). */
static int same_walks(const char *path, parload_error *err)
{
	parload_source src;
	parload__container a;
	int rc;

	parload_source_init(&src);
	src.path = path;
	rc = read_by(&src, "native", &a, err);
	if (rc == 0) {
		ck_assert_int_eq(tcodec(&a.strips), PARLOAD__CODEC_NONE);
		parload__container_free(&a);
	}
	return rc;
}

#ifdef HAVE_TIFF
/* The direct walk's table of src and libtiff's, entry by entry alike. */
static void same_tables(const parload_source *src)
{
	parload__container a, b;
	parload_error err;

	ck_assert_msg(read_by(src, "native", &a, &err) == 0, "%s",
		      err.message);
	ck_assert_msg(read_by(src, "libtiff", &b, &err) == 0, "%s",
		      err.message);
	same_containers(&a, &b);
}

static void same_tables_path(const char *path)
{
	parload_source src;

	parload_source_init(&src);
	src.path = path;
	same_tables(&src);
}
#endif

/* ---- files written by the test itself ---- */

/* A classic TIFF as tifffile lays it out: page 0's directory at 8, then
 * every page's pixels, then the other directories back to back at the
 * end, each with its strip arrays after it. */
typedef struct hand {
	bool be;
	uint16_t otype;    /* StripOffsets and StripByteCounts: 3 or 4 */
	uint32_t rps;      /* 0: no RowsPerStrip (one strip) */
	uint32_t w, h, pages;
	uint16_t comp;     /* Compression; 0: 1, none */
} hand;

static void put(unsigned char *b, size_t *at, uint64_t v, unsigned n,
		bool be)
{
	for (unsigned k = 0; k < n; k++)
		b[*at + k] = (unsigned char)(v >> (8 * (be ? n - 1 - k : k)));
	*at += n;
}

static void put_entry(unsigned char *b, size_t *at, const hand *f,
		      uint16_t tag, uint16_t type, uint32_t count,
		      uint32_t value)
{
	put(b, at, tag, 2, f->be);
	put(b, at, type, 2, f->be);
	put(b, at, count, 4, f->be);
	if (type == 3 && count == 1) {
		put(b, at, value, 2, f->be);
		put(b, at, 0, 2, f->be);
	} else {
		put(b, at, value, 4, f->be);
	}
}

/* Bytes of one page's directory with its arrays. */
static size_t hand_ifd_size(const hand *f, uint32_t strips)
{
	const size_t arrays = (size_t)strips * (f->otype == 3 ? 2 : 4);

	return 2 + 12 * (f->rps ? 9 : 8) + 4 + (strips > 1 ? 2 * arrays : 0);
}

/* Page k's directory at *at (its pixels at data), the next at next. */
static void put_ifd(unsigned char *b, size_t *at, const hand *f,
		    uint64_t data, uint32_t next)
{
	const uint32_t rps = f->rps ? f->rps : f->h;
	const uint32_t strips = (f->h + rps - 1) / rps;
	const unsigned ts = f->otype == 3 ? 2 : 4;
	const size_t row = (size_t)f->w * 2;
	const uint32_t arr = (uint32_t)(*at + 2 + 12 * (f->rps ? 9 : 8) + 4);
	const bool inl = strips == 1;
	size_t a = arr;

	/* (Two SHORTs would be in the entry too: not written here.) */
	ck_assert(strips == 1 || strips * ts > 4);

	put(b, at, f->rps ? 9 : 8, 2, f->be);
	put_entry(b, at, f, 256, 3, 1, f->w);
	put_entry(b, at, f, 257, 3, 1, f->h);
	put_entry(b, at, f, 258, 3, 1, 16);
	put_entry(b, at, f, 259, 3, 1, f->comp ? f->comp : 1);
	put_entry(b, at, f, 262, 3, 1, 1);
	put_entry(b, at, f, 273, f->otype, strips,
		  inl ? (uint32_t)data : arr);
	put_entry(b, at, f, 277, 3, 1, 1);
	if (f->rps)
		put_entry(b, at, f, 278, 4, 1, f->rps);
	put_entry(b, at, f, 279, f->otype, strips,
		  inl ? (uint32_t)(f->h * row) : arr + strips * ts);
	put(b, at, next, 4, f->be);
	if (inl)
		return; /* one strip: its offset and size in the entries */
	for (uint32_t s = 0; s < strips; s++)
		put(b, &a, data + (uint64_t)s * rps * row, ts, f->be);
	for (uint32_t s = 0; s < strips; s++)
		put(b, &a, (uint64_t)((f->h - s * rps < rps ? f->h - s * rps :
							     rps) * row),
		    ts, f->be);
	*at = a;
}

/* f written to path; its pixels (u16, host order) in *px. */
static void hand_write(const char *path, const hand *f, uint16_t **px)
{
	const uint32_t rps = f->rps ? f->rps : f->h;
	const uint32_t strips = (f->h + rps - 1) / rps;
	const size_t page = (size_t)f->w * f->h * 2, ifd = hand_ifd_size(f, strips);
	const size_t data = 8 + ifd, end = data + page * f->pages;
	const size_t len = end + ifd * (f->pages - 1);
	unsigned char *b = calloc(1, len);
	size_t at = 0, n = 0;

	*px = malloc(page * f->pages);
	ck_assert(b && *px);
	put(b, &at, f->be ? 0x4d4d : 0x4949, 2, false);
	put(b, &at, 42, 2, f->be);
	put(b, &at, 8, 4, f->be);
	put_ifd(b, &at, f, data, f->pages > 1 ? (uint32_t)end : 0);
	for (size_t i = 0; i < page / 2 * f->pages; i++) {
		(*px)[i] = (uint16_t)(i * 2654435761u >> 7);
		n = data + 2 * i;
		put(b, &n, (*px)[i], 2, f->be);
	}
	at = end;
	for (uint32_t k = 1; k < f->pages; k++)
		put_ifd(b, &at, f, data + k * page,
			k + 1 < f->pages ? (uint32_t)(at + ifd) : 0);
	ck_assert_uint_eq(at, len);
	tu_write_file(path, b, len);
	free(b);
}

/* tifffile's layout, both byte orders, strips of SHORT or LONG offsets,
 * RowsPerStrip absent (TIFF 6.0's default: one strip) or 3 of 11 rows:
 * the direct table is libtiff's; the pixels read through it those
 * written. */
START_TEST(test_tifffile_layout)
{
	static const hand fs[] = {
		{ false, 3, 3, 13, 11, 6, 0 }, { true, 3, 3, 13, 11, 6, 0 },
		{ false, 4, 3, 13, 11, 6, 0 }, { true, 4, 0, 13, 11, 6, 0 },
		{ false, 3, 0, 13, 11, 1, 0 },
	};
	const hand *f = &fs[_i];
	char *path = tu_path("hand.tif");
	unsigned char *got;
	uint16_t *px;
	parload__container c;
	parload_error err;

	hand_write(path, f, &px);
#ifdef HAVE_TIFF
	same_tables_path(path);
#endif
	ck_assert_msg(read_path(path, &c, &err) == 0, "%s", err.message);
	ck_assert_uint_eq(c.desc.count, f->pages);
	ck_assert_uint_eq(c.strips.rows, f->rps ? f->rps : f->h);
	ck_assert_int_eq(c.desc.encoding,
			 f->be ? PARLOAD_ENC_BE : PARLOAD_ENC_LE);
	got = via_table(&c);
	ck_assert(memcmp(got, px, (size_t)f->w * f->h * 2 * f->pages) == 0);
	free(got);
	parload__container_free(&c);
	free(px);
	free(path);
}
END_TEST

/* StripByteCounts whose first two differ, strips of the same rows (a
 * byte more in the first): libtiff takes the field for damaged and
 * computes its own from the image's size (here 2 rows a strip: 11 / 4),
 * which its walk refuses; the direct walk leaves such a page to it, and
 * so the file is refused by both, never read by one alone (fuzz_differ
 * found the direct walk reading it). */
START_TEST(test_bytecounts_differ)
{
	const hand f = { false, 3, 3, 13, 11, 2, 0 };
	/* Page 0's StripByteCounts: after its 9 entries, 4 SHORT offsets. */
	const size_t at = 8 + 2 + 12 * 9 + 4 + 4 * 2;
	char *path = tu_path("counts.tif");
	unsigned char b[2];
	uint16_t *px;
	parload__container c;
	parload_error err;
	int fd;

	hand_write(path, &f, &px);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, b, 2, (off_t)at), 2);
	ck_assert_int_eq(b[0] | b[1] << 8, 3 * 13 * 2);
	b[0]++;
	ck_assert_int_eq(pwrite(fd, b, 2, (off_t)at), 2);
	close(fd);
	falls_back(path, PARLOAD_ECONTAINER, "page 0: StripByteCounts of 79 "
		   "and 78 bytes for its first two strips");
	ck_assert_int_eq(read_path(path, &c, &err), PARLOAD_ECONTAINER);
	ck_assert_msg(strstr(err.message, path), "%s", err.message);
	free(px);
	free(path);
}
END_TEST

/* RowsPerStrip 2^32 - 2 for 11 rows: one strip as TIFF 6.0 reads it,
 * none as libtiff counts them (in 32 bits), whose walk refuses the page;
 * the direct walk leaves it to libtiff's, and the file is refused by
 * both (fuzz_differ found the direct walk reading it). */
START_TEST(test_rows_per_strip_wraps)
{
	const hand f = { false, 4, 11, 13, 11, 1, 0 };
	/* RowsPerStrip's value: the 8th of page 0's 9 entries. */
	const size_t at = 8 + 2 + 12 * 7 + 8;
	const unsigned char big[4] = { 0xfe, 0xff, 0xff, 0xff };
	char *path = tu_path("rps.tif");
	uint16_t *px;
	parload__container c;
	parload_error err;
	int fd;

	hand_write(path, &f, &px);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, big, 4, (off_t)at), 4);
	close(fd);
	falls_back(path, PARLOAD_ECONTAINER, "page 0: RowsPerStrip 4294967294 "
		   "for 11 rows, which libtiff counts as no strips");
	ck_assert_int_eq(read_path(path, &c, &err), PARLOAD_ECONTAINER);
	ck_assert_msg(strstr(err.message, path), "%s", err.message);
	free(px);
	free(path);
}
END_TEST

/* ---- ImageJ's stacks in one directory ---- */

/* An ImageJ stack in one directory, as tifffile writes it (imagej=True,
 * truncate=True) and ImageJ past 4 GiB: the header, the one directory at
 * 8, its description and strip arrays after it, then the images' pixels
 * back to back (u16, w x h each, in strips of rps rows, 0: one strip);
 * gap bytes between page 0's first two strips; the file cut cut bytes
 * short. */
typedef struct ijf {
	bool be;
	uint32_t w, h, rps, images;
	uint16_t comp;     /* Compression; 0: 1, none */
	uint32_t gap, cut;
	const char *desc;
} ijf;

/* f written to path; the pixels the file holds in full (u16, host
 * order) in *px; the offset of the first image's pixels. */
static size_t ij_write(const char *path, const ijf *f, uint16_t **px)
{
	const uint32_t rps = f->rps ? f->rps : f->h;
	const uint32_t strips = (f->h + rps - 1) / rps;
	const size_t row = (size_t)f->w * 2, frame = row * f->h;
	const size_t dn = strlen(f->desc) + 1, arrays = strips > 1 ? 8 * strips : 0;
	const size_t data = 8 + 2 + 10 * 12 + 4 + dn + arrays;
	const size_t len = data + f->gap + frame * f->images;
	unsigned char *b = calloc(1, len);
	const hand h = { .be = f->be, .otype = 4 };
	size_t at = 0, a = 8 + 2 + 10 * 12 + 4 + dn;

	*px = malloc(frame * f->images);
	ck_assert(b && *px);
	put(b, &at, f->be ? 0x4d4d : 0x4949, 2, false);
	put(b, &at, 42, 2, f->be);
	put(b, &at, 8, 4, f->be);
	put(b, &at, 10, 2, f->be);
	put_entry(b, &at, &h, 256, 3, 1, f->w);
	put_entry(b, &at, &h, 257, 3, 1, f->h);
	put_entry(b, &at, &h, 258, 3, 1, 16);
	put_entry(b, &at, &h, 259, 3, 1, f->comp ? f->comp : 1);
	put_entry(b, &at, &h, 262, 3, 1, 1);
	put_entry(b, &at, &h, 270, 2, (uint32_t)dn, 8 + 2 + 10 * 12 + 4);
	put_entry(b, &at, &h, 273, 4, strips,
		  (uint32_t)(strips > 1 ? a : data));
	put_entry(b, &at, &h, 277, 3, 1, 1);
	put_entry(b, &at, &h, 278, 4, 1, rps);
	put_entry(b, &at, &h, 279, 4, strips,
		  (uint32_t)(strips > 1 ? a + 4 * strips : frame));
	put(b, &at, 0, 4, f->be);
	memcpy(b + at, f->desc, dn);
	for (uint32_t s = 0; strips > 1 && s < strips; s++) {
		size_t o = a + 4 * (size_t)s, c = o + 4 * (size_t)strips;

		put(b, &o, data + (s ? f->gap : 0) + (size_t)s * rps * row, 4,
		    f->be);
		put(b, &c, (f->h - s * rps < rps ? f->h - s * rps : rps) * row,
		    4, f->be);
	}
	for (size_t i = 0; i < frame / 2 * f->images; i++) {
		/* (Page 0's gap after its first strip.) */
		size_t n = data + 2 * i + (f->gap && 2 * i >= rps * row ?
						   f->gap : 0);

		(*px)[i] = (uint16_t)(i * 2654435761u >> 9);
		put(b, &n, (*px)[i], 2, f->be);
	}
	tu_write_file(path, b, len - f->cut);
	free(b);
	return data;
}

/* A stack of 5 images in one directory reads as 5 views, by the direct
 * walk and by libtiff's alike (their tables entry by entry), the pixels
 * through the table those written: one strip, little-endian; strips of 3
 * of 7 rows, big-endian; tifffile's description (images= with
 * channels=) and ImageJ's own (images= with slices=). */
START_TEST(test_imagej_stack)
{
	static const ijf fs[] = {
		{ false, 9, 7, 0, 5, 0, 0, 0, "ImageJ=1.11a\nimages=5\n"
		  "channels=5\nhyperstack=true\nmode=grayscale" },
		{ true, 9, 7, 3, 5, 0, 0, 0, "ImageJ=1.54f\r\nimages = 5\r\n"
		  "slices=5\r\nunit=micron\r\nloop=false\r\n" },
	};
	const ijf *f = &fs[_i];
	char *path = tu_path("ij.tif");
	unsigned char *got;
	uint16_t *px;
	parload__container c;
	parload_error err;

	ij_write(path, f, &px);
	ck_assert_int_eq(same_walks(path, &err), 0);
#ifdef HAVE_TIFF
	same_tables_path(path);
#endif
	ck_assert_msg(read_path(path, &c, &err) == 0, "%s", err.message);
	ck_assert_uint_eq(c.desc.count, 5);
	ck_assert_uint_eq(c.strips.views, 5);
	ck_assert_int_eq(tcodec(&c.strips), PARLOAD__CODEC_NONE);
	got = via_table(&c);
	ck_assert(memcmp(got, px, (size_t)f->w * f->h * 2 * 5) == 0);
	free(got);
	parload__container_free(&c);
	free(px);
	free(path);
}
END_TEST

/* What the stack's layout does not hold is refused, never a part: a file
 * cut inside image 3 is ETRUNCATED naming view 3 and its offset, by both
 * walks; strips not back to back and compressed strips are ENOTSUP;
 * images= that is not channels x slices x frames, or not a count, is
 * ECONTAINER.  The direct walk leaves each to libtiff's walk, saying
 * why as a build without libtiff does. */
START_TEST(test_imagej_refused)
{
	static const struct {
		ijf f;
		int code;
		const char *want;
	} cs[] = {
		{ { false, 9, 7, 0, 5, 0, 0, 200, "ImageJ=1.11a\nimages=5\n" },
		  PARLOAD_ETRUNCATED, "image 3 of ImageJ's stack of 5" },
		{ { true, 9, 7, 3, 4, 0, 0, 1, "ImageJ=1.11a\nimages=4\n" },
		  PARLOAD_ETRUNCATED, "image 3 of ImageJ's stack of 4" },
		{ { false, 9, 7, 3, 5, 0, 6, 0, "ImageJ=1.11a\nimages=5\n" },
		  PARLOAD_ENOTSUP, "not back to back" },
		{ { false, 9, 7, 0, 5, 0, 0, 0, "ImageJ=1.11a\nimages=5\n"
		    "slices=4\n" },
		  PARLOAD_ECONTAINER, "images=5, channels x slices x frames 4" },
		{ { false, 9, 7, 0, 5, 0, 0, 0, "ImageJ=1.11a\nimages=-5\n" },
		  PARLOAD_ECONTAINER, "images=-5, not a count" },
	};
	const ijf *f = &cs[_i].f;
	const size_t frame = (size_t)f->w * f->h * 2;
	char *path = tu_path("ij.tif");
	uint16_t *px;
	parload__container c;
	parload_error err;
	const size_t data = ij_write(path, f, &px);

	falls_back(path, cs[_i].code, cs[_i].want);
	ck_assert_int_eq(read_path(path, &c, &err), cs[_i].code);
	ck_assert_msg(strstr(err.message, path) &&
			      strstr(err.message, cs[_i].want),
		      "%s", err.message);
	if (cs[_i].code == PARLOAD_ETRUNCATED) {
		ck_assert_uint_eq(err.view, 3);
		ck_assert_uint_eq(err.offset, data + 3 * frame);
	}
	free(px);
	free(path);
}
END_TEST

/* ---- runs: directories back to back, alike but for their strips ---- */

#define RUN_PAGES 300
#define RUN_AT 150 /* the page a case damages */

/* A file of RUN_PAGES pages of 4 x 3 u16 as tifffile and parload lay
 * them out (page 0's directory first, the others back to back after the
 * pixels): kind 0, by hand, little-endian, SHORT offsets; 1, by hand,
 * big-endian, LONG offsets; 2, parload's writer, classic; 3, its
 * BigTIFF. */
static void run_file(const char *path, int kind)
{
	if (kind < 2) {
		const hand f = { kind == 1, kind == 1 ? 4 : 3, 0, 4, 3,
				 RUN_PAGES, 0 };
		uint16_t *px;

		hand_write(path, &f, &px);
		free(px);
	} else {
		uint16_t *px = calloc(RUN_PAGES * 12, 2);
		parload_stack st = { .pixels = px,
				     .pixel_type = PARLOAD_PIXEL_U16,
				     .n = RUN_PAGES, .rows = 3, .cols = 4 };
		parload_error err;

		ck_assert_ptr_nonnull(px);
		for (size_t i = 0; i < RUN_PAGES * 12; i++)
			px[i] = (uint16_t)(i * 40503u);
		tu_write_file(path, "", 0);
		ck_assert_msg(parload__tiff_save_as(path, path, &st, kind == 3,
						    &err) == 0,
			      "%s", err.message);
		free(px);
	}
}

/* A TIFF's layout as the test reads it: byte order, BigTIFF. */
typedef struct lay {
	unsigned char *b;
	size_t len;
	bool be, big;
} lay;

static uint64_t lay_num(const lay *l, uint64_t at, unsigned n)
{
	uint64_t v = 0;

	ck_assert_uint_le(at + n, l->len);
	for (unsigned k = 0; k < n; k++)
		v |= (uint64_t)l->b[at + k] << 8 * (l->be ? n - 1 - k : k);
	return v;
}

/* v as n bytes at at of path, in its byte order. */
static void lay_patch(const lay *l, const char *path, uint64_t at,
		      uint64_t v, unsigned n)
{
	unsigned char b[8];
	size_t i = 0;

	put(b, &i, v, n, l->be);
	tu_patch(path, at, b, n);
}

/* Page k's directory, along the chain. */
static uint64_t lay_ifd(const lay *l, uint32_t k)
{
	uint64_t off = l->big ? lay_num(l, 8, 8) : lay_num(l, 4, 4);

	for (uint32_t i = 0; i < k; i++) {
		const uint64_t n = lay_num(l, off, l->big ? 8 : 2);

		off = lay_num(l, off + (l->big ? 8 + 20 * n : 2 + 12 * n),
			      l->big ? 8 : 4);
	}
	return off;
}

/* Where the directory at off has its next directory's offset. */
static uint64_t lay_next(const lay *l, uint64_t off)
{
	const uint64_t n = lay_num(l, off, l->big ? 8 : 2);

	return off + (l->big ? 8 + 20 * n : 2 + 12 * n);
}

/* Where the directory at off has tag's value field. */
static uint64_t lay_value(const lay *l, uint64_t off, uint16_t tag)
{
	const unsigned cs = l->big ? 8 : 2, es = l->big ? 20 : 12;
	const uint64_t n = lay_num(l, off, cs);

	for (uint64_t i = 0; i < n; i++)
		if (lay_num(l, off + cs + i * es, 2) == tag)
			return off + cs + i * es + (l->big ? 12 : 8);
	ck_abort_msg("no tag %u", tag);
	return 0;
}

static lay lay_read(const char *path)
{
	lay l;

	l.b = tu_read_all(path, &l.len);
	l.be = l.b[0] == 'M';
	l.big = l.len > 16 && l.b[2 + l.be] == 43;
	return l;
}

/* What each case does to page RUN_AT's directory, and what the walk
 * says of it (0: the table; 1: whatever the entry-by-entry walk says;
 * else the code, and what the message holds, of view RUN_AT unless it is
 * a loop's). */
static const struct run_case {
	const char *what;
	int code;
	const char *want;
} run_cases[] = {
	{ "nothing", 0, NULL },
	{ "another Photometric (a tag the walk does not read)", 0, NULL },
	{ "another width", PARLOAD_ECONTAINER, "page 150 is 5 x 3 u16" },
	{ "the next directory: page 140's, a loop", PARLOAD_ECONTAINER,
	  ", a loop)" },
	{ "the next directory: its own, a loop", PARLOAD_ECONTAINER,
	  ", a loop)" },
	{ "its strip 10 bytes before the end", PARLOAD_ETRUNCATED,
	  "page 150: strip or tile 0 (24 bytes) ends past the end" },
	{ "the next directory: page 152's (151 skipped)", 0, NULL },
	{ "a strip of 1 byte", PARLOAD_ECONTAINER,
	  "page 150: strip 0 holds 1 bytes, not the 24" },
	{ "the file cut in its middle", PARLOAD_ETRUNCATED,
	  "page 150: its directory lies past the end of the file" },
	{ "a strip in the directory itself (an offset that fits)", 0, NULL },
	/* (Its view is the next, 151: the page is added before its strips
	 * are read, as before runs.) */
	{ "StripOffsets of 2 values", PARLOAD_ECONTAINER,
	  "page 150: tag 273 has 2 values, not the 1 strips" },
	{ "StripOffsets of TIFF type 5", PARLOAD_ENOTSUP,
	  "page 150: tag 273 of TIFF type 5" },
	{ "the entry after StripOffsets made a second BitsPerSample",
	  PARLOAD_ENOTSUP, "page 150's directory has tag 258 twice" },
	{ "2 samples a pixel", PARLOAD_ENOTSUP,
	  "page 150: RGB or multi-sample TIFF (2 samples per pixel)" },
	{ "one entry fewer (what follows read as its next)", 1, NULL },
};

/* Each kind of run_file with each run_case: the direct walk, with its
 * runs of directories, alone (PARLOAD_TIFF=native) gives the table
 * libtiff's walk makes (PARLOAD_TIFF=libtiff, with libtiff), or the
 * error the case names, at the page it names. */
START_TEST(test_runs)
{
	const struct run_case *rc = &run_cases[_i % TU_COUNT(run_cases)];
	const int kind = _i / (int)TU_COUNT(run_cases);
	char *path = tu_path("run.tif");
	parload_error err;
	uint64_t ifd, want_pages = RUN_PAGES;
	lay l;
	int got;

	run_file(path, kind);
	l = lay_read(path);
	ifd = lay_ifd(&l, RUN_AT);
	switch (_i % TU_COUNT(run_cases)) {
	case 1:
		lay_patch(&l, path, lay_value(&l, ifd, 262), 0, 2);
		break;
	case 2:
		lay_patch(&l, path, lay_value(&l, ifd, 256), 5,
			  lay_num(&l, ifd + (l.big ? 10 : 4), 2) == 3 ? 2 : 4);
		break;
	case 3:
		lay_patch(&l, path, lay_next(&l, ifd), lay_ifd(&l, 140),
			  l.big ? 8 : 4);
		break;
	case 4:
		lay_patch(&l, path, lay_next(&l, ifd), ifd, l.big ? 8 : 4);
		break;
	case 5:
		lay_patch(&l, path, lay_value(&l, ifd, 273), l.len - 10,
			  l.big ? 8 : lay_num(&l, lay_value(&l, ifd, 273) - 6,
					      2) == 3 ? 2 : 4);
		break;
	case 6:
		lay_patch(&l, path, lay_next(&l, ifd), lay_ifd(&l, 152),
			  l.big ? 8 : 4);
		want_pages--;
		break;
	case 7:
		lay_patch(&l, path, lay_value(&l, ifd, 279), 1,
			  l.big ? 8 : lay_num(&l, lay_value(&l, ifd, 279) - 6,
					      2) == 3 ? 2 : 4);
		break;
	case 8:
		ck_assert_int_eq(truncate(path, (off_t)ifd + 20), 0);
		break;
	case 9:
		/* Page 150's pixels read from its own directory: odd, but
		 * inside the file, as both walks take it. */
		lay_patch(&l, path, lay_value(&l, ifd, 273), ifd,
			  l.big ? 8 : lay_num(&l, lay_value(&l, ifd, 273) - 6,
					      2) == 3 ? 2 : 4);
		break;
	case 10: /* (the count field, before the value) */
		lay_patch(&l, path, lay_value(&l, ifd, 273) - (l.big ? 8 : 4),
			  2, l.big ? 8 : 4);
		break;
	case 11: /* (the type field) */
		lay_patch(&l, path, lay_value(&l, ifd, 273) - (l.big ? 10 : 6),
			  5, 2);
		break;
	case 12: /* (the next entry's tag, just after the value) */
		ck_assert_uint_eq(lay_num(&l, lay_value(&l, ifd, 273) +
						      (l.big ? 8 : 4),
					  2),
				  277);
		lay_patch(&l, path,
			  lay_value(&l, ifd, 273) + (l.big ? 8 : 4), 258, 2);
		break;
	case 13:
		lay_patch(&l, path, lay_value(&l, ifd, 277), 2, 2);
		break;
	case 14:
		lay_patch(&l, path, ifd, lay_num(&l, ifd, l.big ? 8 : 2) - 1,
			  l.big ? 8 : 2);
		break;
	}
	got = same_walks(path, &err);
	if (rc->code == 0) {
		parload_source src;
		parload__container c;

		ck_assert_msg(got == 0, "%s: %s", rc->what, err.message);
		parload_source_init(&src);
		src.path = path;
		ck_assert_int_eq(read_by(&src, "native", &c, &err), 0);
		ck_assert_uint_eq(c.desc.count, want_pages);
		parload__container_free(&c);
#ifdef HAVE_TIFF
		same_tables_path(path);
#endif
	} else if (rc->code < 0) {
		ck_assert_msg(got == rc->code, "%s: %d", rc->what, got);
		ck_assert_int_eq(err.code, rc->code);
		ck_assert_msg(strstr(err.message, rc->want), "%s: %s",
			      rc->what, err.message);
		if (rc->want[0] != ',')
			ck_assert_uint_eq(err.view, RUN_AT + (rc == &run_cases[10]));
	}
	free(l.b);
	free(path);
}
END_TEST

/* What only libtiff reads, in files the test writes itself: an
 * LZW-compressed page, and a folder of a big- and a little-endian file.
 * The direct walk falls back saying why; a build with libtiff reads them
 * through its decoder, one without fails with that reason. */
START_TEST(test_needs_libtiff)
{
	static const hand le = { false, 4, 3, 13, 11, 2, 0 };
	static const hand lzw = { false, 4, 3, 13, 11, 2, 5 };
	static const hand be = { true, 4, 3, 13, 11, 2, 0 };
	char *path = tu_path(_i ? "needs" : "lzw.tif"), name[4200];
	const char *want = _i ? "page 0 has strips of 3 rows, little-endian" :
				"page 0 is LZW-compressed (Compression 5): "
				"reading it needs libtiff";
	uint16_t *px[2];
	parload__container c;
	parload_error err;
	int rc;

	if (_i) {
		ck_assert_int_eq(mkdir(path, 0700), 0);
		snprintf(name, sizeof(name), "%s/a.tif", path);
		hand_write(name, &be, &px[0]);
		snprintf(name, sizeof(name), "%s/b.tif", path);
		hand_write(name, &le, &px[1]);
		free(px[1]);
	} else {
		hand_write(path, &lzw, &px[0]);
	}
	free(px[0]);
	falls_back(path, PARLOAD_ENOTSUP, want);
	rc = read_path(path, &c, &err);
#ifdef HAVE_TIFF
	ck_assert_msg(rc == 0, "%s", err.message);
	ck_assert_int_eq(tcodec(&c.strips), PARLOAD__CODEC_CUSTOM);
	parload__container_free(&c);
#else
	ck_assert_int_eq(rc, PARLOAD_ENOTSUP);
	ck_assert_msg(strstr(err.message, want) && strstr(err.message, path),
		      "%s", err.message);
#endif
	free(path);
}
END_TEST


#ifdef HAVE_TIFF
#include <tiffio.h>


/* A fixture: pages of pixels the test makes, written by libtiff. */
typedef struct fx {
	const char *mode;  /* "w", "wb" (big-endian, MM), "w8" (BigTIFF) */
	int type;
	uint32_t w, h, pages;
	uint32_t rps;      /* rows per strip; 0: libtiff's default */
	uint32_t tile;     /* square tiles of this size, or 0: strips */
	uint16_t comp;     /* COMPRESSION_*; 0: none */
	uint16_t pred;     /* Predictor, or 0 */
	uint16_t spp;      /* samples per pixel; 0: 1 */
	uint32_t h_last;   /* the last page's height, if not 0 */
	uint64_t seed;
} fx;

static size_t fx_bpp(const fx *f)
{
	return parload_pixel_size(f->type);
}

static size_t fx_page(const fx *f)
{
	return (size_t)f->w * f->h * fx_bpp(f);
}

/* The pixels of f, in the host's byte order, page after page. */
static unsigned char *fx_pixels(const fx *f)
{
	const size_t n = (size_t)f->w * f->h * f->pages;
	unsigned char *px = malloc(n * fx_bpp(f) + 1);
	uint64_t x = f->seed * 0x9e3779b97f4a7c15u + 1;

	ck_assert_ptr_nonnull(px);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (f->type == PARLOAD_PIXEL_F32) {
			const float v = (float)(x % 100000) / 7.0f;

			memcpy(px + i * 4, &v, 4);
		} else if (f->type == PARLOAD_PIXEL_F64) {
			const double v = (double)(x % 100000) / 7.0;

			memcpy(px + i * 8, &v, 8);
		} else {
			memcpy(px + i * fx_bpp(f), &x, fx_bpp(f)); /* LE host */
		}
	}
	return px;
}

static void fx_tags(TIFF *tif, const fx *f, uint32_t h)
{
	const uint16_t spp = f->spp ? f->spp : 1;
	const int t = f->type;

	TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, f->w);
	TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
	TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * fx_bpp(f)));
	TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
		     t == PARLOAD_PIXEL_F32 || t == PARLOAD_PIXEL_F64 ? 3 :
		     t == PARLOAD_PIXEL_I16 || t == PARLOAD_PIXEL_I32 ? 2 :
									1);
	TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, spp);
	TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
		     spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
	TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
	TIFFSetField(tif, TIFFTAG_COMPRESSION, f->comp ? f->comp : 1);
	if (f->pred)
		TIFFSetField(tif, TIFFTAG_PREDICTOR, f->pred);
	if (f->tile) {
		TIFFSetField(tif, TIFFTAG_TILEWIDTH, f->tile);
		TIFFSetField(tif, TIFFTAG_TILELENGTH, f->tile);
	} else {
		TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP,
			     f->rps ? f->rps : TIFFDefaultStripSize(tif, 0));
	}
}

/* One page of h rows from src (spp samples per pixel: zeros). */
static void fx_write_page(TIFF *tif, const fx *f, uint32_t h,
			  const unsigned char *src)
{
	const size_t row = (size_t)f->w * fx_bpp(f) * (f->spp ? f->spp : 1);
	unsigned char *buf = calloc(1, row * h + 1);

	ck_assert_ptr_nonnull(buf);
	if (!f->spp || f->spp == 1)
		memcpy(buf, src, row * h); /* libtiff swabs what it writes */
	if (f->tile) {
		unsigned char *t = malloc((size_t)f->tile * f->tile * row);
		const size_t bpp = row / f->w;

		ck_assert_ptr_nonnull(t);
		for (uint32_t y = 0; y < h; y += f->tile)
			for (uint32_t x = 0; x < f->w; x += f->tile) {
				memset(t, 0, (size_t)f->tile * f->tile * bpp);
				for (uint32_t r = 0; r < f->tile && y + r < h; r++)
					memcpy(t + (size_t)r * f->tile * bpp,
					       buf + (y + r) * row + x * bpp,
					       (f->w - x < f->tile ? f->w - x :
								   f->tile) *
						       bpp);
				ck_assert_int_ge(
					TIFFWriteTile(tif, t, x, y, 0, 0), 0);
			}
		free(t);
	} else {
		for (uint32_t y = 0; y < h; y++)
			ck_assert_int_eq(
				TIFFWriteScanline(tif, buf + y * row, y, 0), 1);
	}
	ck_assert_int_eq(TIFFWriteDirectory(tif), 1);
	free(buf);
}

static void fx_write(const char *path, const fx *f, const unsigned char *px)
{
	TIFF *tif = TIFFOpen(path, f->mode ? f->mode : "w");

	ck_assert_ptr_nonnull(tif);
	for (uint32_t k = 0; k < f->pages; k++) {
		const uint32_t h = k + 1 == f->pages && f->h_last ? f->h_last :
								    f->h;

		fx_tags(tif, f, h);
		fx_write_page(tif, f, h, px + k * fx_page(f));
	}
	TIFFClose(tif);
}

/* Read f written to name; the table's codec and rows as given; its pixels
 * those written. */
static void check_fixture(const fx *f, const char *name, int codec,
			  uint32_t rows)
{
	char *path = tu_path(name);
	unsigned char *px = fx_pixels(f), *got;
	parload__container c;
	parload_error err;

	fx_write(path, f, px);
	if (codec == PARLOAD__CODEC_NONE)
		same_tables_path(path);
	else
		falls_back(path, PARLOAD_ENOTSUP, f->tile ? "is tiled" :
					      "-compressed");
	ck_assert_msg(read_path(path, &c, &err) == 0, "%s", err.message);
	ck_assert_int_eq(c.desc.format, PARLOAD_FORMAT_TIFF);
	ck_assert_uint_eq(c.desc.width, f->w);
	ck_assert_uint_eq(c.desc.height, f->h);
	ck_assert_int_eq(c.desc.pixel_type, f->type);
	ck_assert_uint_eq(c.desc.count, f->pages);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.paths[0], path);
	ck_assert_int_eq(tcodec(&c.strips), codec);
	ck_assert_uint_eq(c.strips.rows, rows);
	ck_assert_uint_eq(c.strips.per_view, (f->h + rows - 1) / rows);
	ck_assert_uint_eq(c.strips.views, f->pages);
	ck_assert_ptr_null(c.strips.angles);
	ck_assert_ptr_null(c.strips.serial);
	for (uint64_t i = 0; i < c.strips.views * c.strips.per_view; i++)
		ck_assert_uint_eq(parload__strip_of(&c.strips, i, NULL).page,
				  i / c.strips.per_view);
	got = via_table(&c);
	ck_assert_msg(memcmp(got, px, fx_page(f) * f->pages) == 0,
		      "%s: the pixels read differ from those written", name);
	free(got);
	free(px);
	parload__container_free(&c);
	free(path);
}

START_TEST(test_single_page)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 33, .h = 21,
		       .pages = 1, .rps = 21, .seed = 1 };

	check_fixture(&f, "one.tif", PARLOAD__CODEC_NONE, 21);
}
END_TEST

START_TEST(test_multi_page_le)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 37, .h = 23,
		       .pages = 9, .rps = 4, .seed = 2 };
	char *path = tu_path("multi.tif");
	parload__container c;
	parload_error err;

	check_fixture(&f, "multi.tif", PARLOAD__CODEC_NONE, 4);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	ck_assert_int_eq(c.desc.encoding, PARLOAD_ENC_LE);
	ck_assert_uint_eq(c.strips.per_view, 6);
	/* Page 0's first strip follows the 8-byte header, in file 0. */
	ck_assert_uint_eq(parload__strip_at(&c.strips, 0, 0).off, 8);
	ck_assert_uint_eq(parload__strip_at(&c.strips, 0, 0).bytes, 4 * 37 * 2);
	ck_assert_uint_eq(parload__strip_at(&c.strips, 0, 5).bytes, 3 * 37 * 2);
	parload__container_free(&c);
	free(path);
}
END_TEST

START_TEST(test_big_endian_i16)
{
	const fx f = { .mode = "wb", .type = PARLOAD_PIXEL_I16, .w = 19,
		       .h = 11, .pages = 4, .rps = 3, .seed = 3 };
	char *path = tu_path("mm.tif");
	parload__container c;
	parload_error err;

	check_fixture(&f, "mm.tif", PARLOAD__CODEC_NONE, 3);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	ck_assert_int_eq(c.desc.encoding, PARLOAD_ENC_BE);
	parload__container_free(&c);
	free(path);
}
END_TEST

START_TEST(test_bigtiff)
{
	const fx f = { .mode = "w8", .type = PARLOAD_PIXEL_U32, .w = 17,
		       .h = 13, .pages = 5, .rps = 5, .seed = 4 };

	check_fixture(&f, "big.tif", PARLOAD__CODEC_NONE, 5);
}
END_TEST

/* Rows per strip 1, 7 and the whole page (13 rows). */
START_TEST(test_rows_per_strip)
{
	static const uint32_t rps[] = { 1, 7, 13 };
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 29, .h = 13,
		       .pages = 3, .rps = rps[_i], .seed = 5 + _i };

	check_fixture(&f, "rps.tif", PARLOAD__CODEC_NONE, rps[_i]);
}
END_TEST

START_TEST(test_tiled_edges)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 40, .h = 37,
		       .pages = 3, .tile = 16, .seed = 8 };

	check_fixture(&f, "tiled.tif", PARLOAD__CODEC_CUSTOM, 16);
}
END_TEST

START_TEST(test_lzw)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 31, .h = 27,
		       .pages = 4, .rps = 6, .comp = COMPRESSION_LZW,
		       .seed = 9 };

	check_fixture(&f, "lzw.tif", PARLOAD__CODEC_CUSTOM, 6);
}
END_TEST

START_TEST(test_deflate_predictor)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 31, .h = 27,
		       .pages = 4, .rps = 8, .comp = COMPRESSION_ADOBE_DEFLATE,
		       .pred = 2, .seed = 10 };

	check_fixture(&f, "zip.tif", PARLOAD__CODEC_CUSTOM, 8);
}
END_TEST

START_TEST(test_float32)
{
	const fx f = { .type = PARLOAD_PIXEL_F32, .w = 21, .h = 9,
		       .pages = 3, .rps = 2, .seed = 11 };

	check_fixture(&f, "f32.tif", PARLOAD__CODEC_NONE, 2);
}
END_TEST

/* Files of one page each: fx page k of f goes to file k. */
static unsigned char *write_files(const fx *f, char **paths)
{
	unsigned char *px = fx_pixels(f);
	fx one = *f;

	one.pages = 1;
	for (uint32_t k = 0; k < f->pages; k++)
		fx_write(paths[k], &one, px + k * fx_page(f));
	return px;
}

/* A folder of 30 files proj_0.tif ... proj_29.tif: name order (proj_10
 * before proj_2) is not the stream's; the folder and a glob read them in
 * numeric order. */
START_TEST(test_folder_numeric_order)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 12, .h = 5,
		       .pages = 30, .rps = 2, .seed = 12 };
	char *dir = tu_path("proj"), *paths[30], glob[4200];
	unsigned char *px, *got;
	parload__container c;
	parload_error err;

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	for (int k = 0; k < 30; k++) {
		paths[k] = malloc(strlen(dir) + 32);
		sprintf(paths[k], "%s/proj_%d.tif", dir, k);
	}
	px = write_files(&f, paths);
	snprintf(glob, sizeof(glob), "%s/proj_*.tif", dir);
	same_tables_path(dir);
	for (int g = 0; g < 2; g++) {
		ck_assert_msg(read_path(g ? glob : dir, &c, &err) == 0, "%s",
			      err.message);
		ck_assert_uint_eq(c.n, 30);
		for (int k = 0; k < 30; k++)
			ck_assert_str_eq(c.paths[k], paths[k]);
		ck_assert_uint_eq(c.desc.count, 30);
		ck_assert_uint_eq(parload__strip_at(&c.strips, 29, 0).file, 29);
		got = via_table(&c);
		ck_assert(memcmp(got, px, fx_page(&f) * 30) == 0);
		free(got);
		parload__container_free(&c);
	}
	for (int k = 0; k < 30; k++)
		free(paths[k]);
	free(px);
	free(dir);
}
END_TEST

/* A list of files whose strips differ (3 and 5 rows): decoded by libtiff,
 * in strips of the first file's rows. */
START_TEST(test_list_differing_strips)
{
	fx f = { .type = PARLOAD_PIXEL_U16, .w = 14, .h = 11, .pages = 1,
		 .rps = 3, .seed = 13 };
	char *paths[2] = { tu_path("a.tif"), tu_path("b.tif") };
	unsigned char *px[2], *got;
	parload_source src;
	parload__container c;
	parload_error err;

	px[0] = fx_pixels(&f);
	fx_write(paths[0], &f, px[0]);
	f.rps = 5;
	f.seed = 14;
	px[1] = fx_pixels(&f);
	fx_write(paths[1], &f, px[1]);
	parload_source_init(&src);
	src.paths = (const char *const *)paths;
	src.path_count = 2;
	ck_assert_int_eq(read_by(&src, "native", &c, &err), PARLOAD_ENOTSUP);
	ck_assert_msg(err.code == PARLOAD_ENOTSUP &&
			      strstr(err.message, "strips of 5 rows"),
		      "%s", err.message);
	ck_assert_msg(parload__tiff_read(&src, &c, &err) == 0, "%s",
		      err.message);
	ck_assert_int_eq(tcodec(&c.strips), PARLOAD__CODEC_CUSTOM);
	ck_assert_uint_eq(c.strips.rows, 3);
	ck_assert_uint_eq(c.desc.count, 2);
	got = via_table(&c);
	ck_assert(memcmp(got, px[0], fx_page(&f)) == 0);
	ck_assert(memcmp(got + fx_page(&f), px[1], fx_page(&f)) == 0);
	free(got);
	parload__container_free(&c);
	for (int k = 0; k < 2; k++) {
		free(px[k]);
		free(paths[k]);
	}
}
END_TEST

/* Three single-page files in a folder, one a BigTIFF and one big-endian:
 * the direct walk's table is libtiff's. */
START_TEST(test_folder_of_three)
{
	static const char *const modes[3] = { "w", "w8", "wb" };
	fx f = { .type = PARLOAD_PIXEL_U16, .w = 10, .h = 6, .pages = 1,
		 .rps = 4, .seed = 50 };
	char *dir = tu_path("three"), path[4200];
	unsigned char *px = fx_pixels(&f);

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), "%s/p%d.tif", dir, k);
		f.mode = modes[k];
		fx_write(path, &f, px);
	}
	/* Their byte orders differ: libtiff's decoder reads them as one. */
	falls_back(dir, PARLOAD_ENOTSUP, "big-endian");
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), "%s/p%d.tif", dir, k);
		f.mode = modes[k % 2];
		fx_write(path, &f, px);
	}
	same_tables_path(dir);
	free(px);
	free(dir);
}
END_TEST

/* ---- bad inputs ---- */

/* A stack in one directory of compressed strips is refused, saying so
 * (libtiff's walk: the direct walk leaves compressed pages to it); and a
 * list of an ImageJ stack and a file libtiff decodes is refused (the
 * decoder has no directory for the stack's images after the first). */
START_TEST(test_imagej_needs_plain)
{
	const ijf lzw = { false, 9, 7, 0, 5, 5, 0, 0,
			  "ImageJ=1.11a\nimages=5\n" };
	const ijf plain = { false, 9, 7, 0, 5, 0, 0, 0,
			    "ImageJ=1.11a\nimages=5\n" };
	const fx other = { .mode = "w", .type = PARLOAD_PIXEL_U16, .w = 9,
			   .h = 7, .pages = 1, .comp = COMPRESSION_LZW };
	char *path = tu_path("ij.tif"), *paths[2];
	unsigned char *px2 = fx_pixels(&other);
	uint16_t *px;
	parload_source src;
	parload__container c;
	parload_error err;

	ij_write(path, &lzw, &px);
	free(px);
	ck_assert_int_eq(read_path(path, &c, &err), PARLOAD_ENOTSUP);
	ck_assert_msg(strstr(err.message, "ImageJ's stack of 5 images in one "
				"directory, compressed"), "%s", err.message);
	ij_write(path, &plain, &px);
	free(px);
	paths[0] = path;
	paths[1] = tu_path("lzw.tif");
	fx_write(paths[1], &other, px2);
	parload_source_init(&src);
	src.paths = (const char *const *)paths;
	src.path_count = 2;
	ck_assert_int_eq(parload__tiff_read(&src, &c, &err), PARLOAD_ENOTSUP);
	ck_assert_msg(strstr(err.message, "read in place only"), "%s",
		      err.message);
	free(px2);
	free(paths[1]);
	free(path);
}
END_TEST
/* f written to name must be refused with code and a message holding
 * want, and the direct walk fall back saying the same; returns the
 * error. */
static parload_error refused(const fx *f, const char *name, int code,
			     const char *want)
{
	char *path = tu_path(name);
	unsigned char *px = fx_pixels(f);
	parload__container c;
	parload_error err;

	fx_write(path, f, px);
	falls_back(path, code, want);
	ck_assert_int_eq(read_path(path, &c, &err), code);
	ck_assert_msg(strstr(err.message, want) && strstr(err.message, path),
		      "%s", err.message);
	free(px);
	free(path);
	return err;
}

START_TEST(test_pages_differ)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 512, .h = 512,
		       .pages = 8, .rps = 64, .h_last = 256, .seed = 15 };
	const parload_error e = refused(
		&f, "differ.tif", PARLOAD_ECONTAINER,
		"page 7 is 512 x 256 u16, page 0 is 512 x 512 u16");

	ck_assert_uint_eq(e.view, 7);
}
END_TEST

START_TEST(test_rgb_refused)
{
	const fx f = { .type = PARLOAD_PIXEL_U8, .w = 8, .h = 4, .pages = 1,
		       .rps = 4, .spp = 3, .seed = 16 };

	refused(&f, "rgb.tif", PARLOAD_ENOTSUP,
		"RGB or multi-sample TIFF (3 samples per pixel)");
}
END_TEST

START_TEST(test_two_samples_refused)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 8, .h = 4,
		       .pages = 1, .rps = 4, .spp = 2, .seed = 17 };

	refused(&f, "two.tif", PARLOAD_ENOTSUP,
		"RGB or multi-sample TIFF (2 samples per pixel)");
}
END_TEST

/* The first IFD's offset (classic little-endian TIFF) and its tag count. */
static uint32_t first_ifd(const char *path, uint16_t *entries)
{
	size_t len;
	unsigned char *b = tu_read_all(path, &len);
	uint32_t off;

	ck_assert(len > 8 && b[0] == 'I');
	memcpy(&off, b + 4, 4);
	memcpy(entries, b + off, 2);
	free(b);
	return off;
}

START_TEST(test_looping_ifd)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 8, .h = 4,
		       .pages = 2, .rps = 4, .seed = 18 };
	char *path = tu_path("loop.tif");
	unsigned char *px = fx_pixels(&f);
	parload__container c;
	parload_error err;
	uint16_t n;
	uint32_t ifd;

	fx_write(path, &f, px);
	/* Page 0's next-IFD offset: page 0 again. */
	ifd = first_ifd(path, &n);
	tu_patch(path, ifd + 2 + 12u * n, &ifd, 4);
	falls_back(path, PARLOAD_ECONTAINER, ", a loop)");
	ck_assert_int_eq(read_path(path, &c, &err), PARLOAD_ECONTAINER);
	ck_assert_msg(strstr(err.message, path) && strstr(err.message, "page 1"),
		      "%s", err.message);
	free(px);
	free(path);
}
END_TEST

/* Page 0's StripOffsets (one strip, its value in the entry) moved to 10
 * bytes before the end of the file. */
START_TEST(test_strip_past_end)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 8, .h = 4,
		       .pages = 1, .rps = 4, .seed = 19 };
	char *path = tu_path("past.tif");
	unsigned char *px = fx_pixels(&f), *b;
	parload__container c;
	parload_error err;
	size_t len;
	uint16_t n, tag;
	uint32_t ifd, bad;

	fx_write(path, &f, px);
	ifd = first_ifd(path, &n);
	b = tu_read_all(path, &len);
	bad = (uint32_t)len - 10;
	for (uint16_t k = 0; k < n; k++) {
		memcpy(&tag, b + ifd + 2 + 12u * k, 2);
		if (tag == TIFFTAG_STRIPOFFSETS)
			tu_patch(path, ifd + 2 + 12u * k + 8, &bad, 4);
	}
	falls_back(path, PARLOAD_ETRUNCATED, "ends past the end of the file");
	ck_assert_int_eq(read_path(path, &c, &err), PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, path) && strstr(err.message, "page 0"),
		      "%s", err.message);
	ck_assert_uint_eq(err.view, 0);
	ck_assert_uint_eq(err.offset, bad);
	free(b);
	free(px);
	free(path);
}
END_TEST

START_TEST(test_folder_without_tiffs)
{
	char *dir = tu_path("empty"), *txt = tu_path("empty/notes.txt");
	parload__container c;
	parload_error err;

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	tu_write_file(txt, "x", 1);
	ck_assert_int_eq(read_path(dir, &c, &err), PARLOAD_EINVAL);
	ck_assert_msg(strstr(err.message, "no TIFF files in") &&
			      strstr(err.message, dir),
		      "%s", err.message);
	free(txt);
	free(dir);
}
END_TEST

/* ---- loads through the engine ---- */

/* The fixtures of the read tests loaded by parload_load's engine, 1 to 4
 * threads, whole and as sinograms of a band of rows and columns, against
 * the test's own slicing of what it wrote. */
static const fx loaded[] = {
	{ .type = PARLOAD_PIXEL_U16, .w = 37, .h = 23, .pages = 9, .rps = 4,
	  .seed = 40 },
	{ .mode = "wb", .type = PARLOAD_PIXEL_I16, .w = 19, .h = 11,
	  .pages = 4, .rps = 3, .seed = 41 },
	{ .type = PARLOAD_PIXEL_U16, .w = 40, .h = 37, .pages = 3, .tile = 16,
	  .seed = 42 },
	{ .type = PARLOAD_PIXEL_F32, .w = 31, .h = 27, .pages = 4, .rps = 8,
	  .comp = COMPRESSION_ADOBE_DEFLATE, .pred = 3, .seed = 43 },
};

START_TEST(test_engine_loads)
{
	const fx *f = &loaded[_i / 2];
	const bool sino = _i % 2;
	char *path = tu_path("engine.tif");
	unsigned char *px = fx_pixels(f);
	const size_t bpp = fx_bpp(f);
	const uint32_t r0 = 2, r1 = f->h - 1, c0 = 1, c1 = f->w - 3;
	parload_loader *l = tu_loader(1 + _i % 4, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_selection sel;
	parload_dataset ds;
	parload_error err;
	size_t at = 0;

	fx_write(path, f, px);
	parload_selection_init(&sel);
	if (sino) {
		sel.rows = (parload_slice){ r0, r1, 1 };
		sel.cols = (parload_slice){ c0, c1, 1 };
		sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	}
	ck_assert_msg(tu_load(l, path, &sel, NULL, &ds, &err) == 0, "%s",
		      err.message);
	ck_assert_int_eq(ds.desc.format, PARLOAD_FORMAT_TIFF);
	ck_assert_uint_eq(ds.shape.views, f->pages);
	/* Row r of view v, columns c0 to c1 (or all), in output order. */
	for (uint32_t a = 0; a < (sino ? r1 - r0 : f->pages); a++)
		for (uint32_t b = 0; b < (sino ? f->pages : f->h); b++) {
			const uint32_t v = sino ? b : a, r = sino ? r0 + a : b;
			const size_t n = (sino ? c1 - c0 : f->w) * bpp;
			const unsigned char *want =
				px + v * fx_page(f) +
				((size_t)r * f->w + (sino ? c0 : 0)) * bpp;

			ck_assert_msg(memcmp((const unsigned char *)ds.pixels +
						     at,
					     want, n) == 0,
				      "fixture %d: view %u row %u differs",
				      _i / 2, v, r);
			at += n;
		}
	parload_dataset_free(&ds);
	parload_loader_free(l);
	free(px);
	free(path);
}
END_TEST

/* The file cut after the workers read it, before the load ends (the last
 * batch's callback cuts it): the load fails saying so, whether the cut
 * takes a whole strip, only the short last strip of a view, or none of
 * what the load reads (a stepped run's last page; pages of strips of 4
 * rows, 23 rows a page: each view's last strip 3 rows). */
struct cut_at_end {
	const char *path;
	uint64_t len;
};

static int cut_on_last(const parload_batch *b, void *arg)
{
	const struct cut_at_end *c = arg;

	if (b->views_done == b->views_total)
		tu_truncate(c->path, c->len);
	return 0;
}

START_TEST(test_cut_while_read)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 37, .h = 23,
		       .pages = 9, .rps = 4, .seed = 44 };
	char *path = tu_path("cut.tif");
	unsigned char *px = fx_pixels(&f);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload__container c;
	parload_request req;
	parload_dataset ds;
	parload_error err;
	uint64_t end = 0;
	struct cut_at_end cut;
	int rc;

	fx_write(path, &f, px);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	/* Where the last page's strips end: the file is cut there less 1
	 * byte (_i 0), at it (_i 1: nothing read is lost). */
	for (uint64_t j = 0; j < c.strips.per_view; j++) {
		const parload__strip s = parload__strip_at(&c.strips, 8, j);
		const uint64_t rows = j + 1 < c.strips.per_view ? 4 : 3;

		end = PARLOAD__MAX(end, s.off + rows * 37 * 2);
	}
	parload__container_free(&c);
	cut = (struct cut_at_end){ path, _i == 0 ? end - 1 : end };
	parload_request_init(&req);
	req.source.path = path;
	req.on_batch = cut_on_last;
	req.batch_arg = &cut;
	req.batch_views = 3;
	rc = parload_loader_run(l, &req, &ds, &err);
	if (_i == 0) {
		ck_assert_int_eq(rc, PARLOAD_ETRUNCATED);
		ck_assert_msg(strstr(err.message, "truncated to"), "%s",
			      err.message);
	} else {
		ck_assert_msg(rc == 0, "%s", err.message);
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	free(px);
	free(path);
}
END_TEST

/* A folder of 12 one-page files, one of them LZW-compressed: libtiff's
 * walk reads that file alone and the direct walk the 11 others
 * (stats.fallback_files 1; before, one compressed page sent the whole
 * folder through libtiff's walk, 12); every page's pixels as written.
 * PARLOAD_TIFF=libtiff walks all 12 with libtiff, PARLOAD_TIFF=native
 * none, and fails naming the compressed file. */
START_TEST(test_folder_one_compressed)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 12, .h = 5,
		       .pages = 12, .rps = 2, .seed = 15 };
	static const char *const how[] = { NULL, "libtiff", "native" };
	fx lzw = f;
	char *dir = tu_path("mixed"), *paths[12];
	unsigned char *px;
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request req;
	parload_dataset ds;
	parload_error err;

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	for (int k = 0; k < 12; k++) {
		paths[k] = malloc(strlen(dir) + 32);
		sprintf(paths[k], "%s/p_%02d.tif", dir, k);
	}
	px = write_files(&f, paths);
	lzw.pages = 1;
	lzw.comp = COMPRESSION_LZW;
	fx_write(paths[5], &lzw, px + 5 * fx_page(&f));
	for (int b = 0; b < 3; b++) {
		int rc;

		if (how[b])
			ck_assert_int_eq(setenv("PARLOAD_TIFF", how[b], 1), 0);
		parload_request_init(&req);
		req.source.path = dir;
		rc = parload_loader_run(l, &req, &ds, &err);
		ck_assert_int_eq(unsetenv("PARLOAD_TIFF"), 0);
		if (b == 2) {
			ck_assert_int_eq(rc, PARLOAD_ENOTSUP);
			ck_assert_msg(strstr(err.message, paths[5]) &&
					      strstr(err.message, "LZW"),
				      "%s", err.message);
			continue;
		}
		ck_assert_msg(rc == 0, "%s", err.message);
		ck_assert_uint_eq(ds.stats.fallback_files, b ? 12 : 1);
		ck_assert_uint_eq(ds.shape.views, 12);
		ck_assert(memcmp(ds.pixels, px, 12 * fx_page(&f)) == 0);
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	for (int k = 0; k < 12; k++)
		free(paths[k]);
	free(px);
	free(dir);
}
END_TEST

/* PARLOAD_TIFF other than auto, native or libtiff: the load fails
 * saying which it takes. */
START_TEST(test_backend_unknown)
{
	char *path = tu_path("one.tif");
	const fx f = { .type = PARLOAD_PIXEL_U8, .w = 4, .h = 3, .pages = 1,
		       .seed = 16 };
	unsigned char *px = fx_pixels(&f);
	parload_source src;
	parload__container c;
	parload_error err;

	fx_write(path, &f, px);
	parload_source_init(&src);
	src.path = path;
	ck_assert_int_eq(read_by(&src, "tifffile", &c, &err), PARLOAD_EINVAL);
	ck_assert_msg(strstr(err.message, "PARLOAD_TIFF=tifffile: auto, "
					  "native or libtiff"),
		      "%s", err.message);
	ck_assert_int_eq(read_by(&src, "auto", &c, &err), 0);
	ck_assert_uint_eq(c.fallback_files, 0);
	parload__container_free(&c);
	free(px);
	free(path);
}
END_TEST

/* ---- the writer ---- */

/* parload_save of pages written by fx to a .tif: read back by the reader
 * and by libtiff (tifffile's shaped description), laid out as tifffile
 * lays out a shaped series (one strip a page, the pages' pixels back to
 * back, the directories after them), refused when it exists unless
 * forced. */
START_TEST(test_save_read_back)
{
	static const int types[] = { PARLOAD_PIXEL_U16, PARLOAD_PIXEL_F64,
				     PARLOAD_PIXEL_I32 };
	const fx f = { .type = types[_i], .w = 300, .h = 250, .pages = 3,
		       .seed = 20 + _i };
	char *path = tu_path("saved.tif"), *desc = NULL, want[64];
	unsigned char *px = fx_pixels(&f), *got;
	uint64_t end;
	parload_save_options o;
	parload_stack st;
	parload__container c;
	parload_error err;
	TIFF *tif;

	memset(&st, 0, sizeof(st));
	st.pixels = px;
	st.pixel_type = f.type;
	st.n = f.pages;
	st.rows = f.h;
	st.cols = f.w;
	st.layout = PARLOAD_LAYOUT_VIEWS;
	unlink(path);
	ck_assert_msg(parload_save(path, &st, NULL, &err) == 0, "%s",
		      err.message);
	same_tables_path(path);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	ck_assert_int_eq(c.desc.pixel_type, f.type);
	ck_assert_uint_eq(c.desc.count, 3);
	ck_assert_uint_eq(c.strips.rows, 250);
	ck_assert_uint_eq(c.strips.per_view, 1);
	ck_assert_uint_eq(c.strips.runs, 1); /* pages one after another */
	for (uint64_t k = 1; k < 3; k++)
		ck_assert_uint_eq(parload__strip_at(&c.strips, k, 0).off,
				  parload__strip_at(&c.strips, 0, 0).off + k * fx_page(&f));
	end = parload__strip_at(&c.strips, 0, 0).off + 3 * fx_page(&f);
	got = via_table(&c);
	ck_assert(memcmp(got, px, fx_page(&f) * 3) == 0);
	free(got);
	parload__container_free(&c);
	tif = TIFFOpen(path, "r");
	ck_assert_ptr_nonnull(tif);
	ck_assert_int_eq(TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc), 1);
	snprintf(want, sizeof(want), "{\"shape\": [3, 250, 300]}");
	ck_assert_str_eq(desc, want);
	ck_assert_int_eq(TIFFIsBigTIFF(tif), 0);
	ck_assert_int_eq(TIFFSetDirectory(tif, 1), 1);
	ck_assert_uint_ge(TIFFCurrentDirOffset(tif), end);
	TIFFClose(tif);
	ck_assert_int_eq(parload_save(path, &st, NULL, &err), PARLOAD_EEXIST);
	ck_assert_msg(strstr(err.message, path), "%s", err.message);
	parload_save_options_init(&o);
	o.flags = PARLOAD_SAVE_FORCE;
	ck_assert_msg(parload_save(path, &st, &o, &err) == 0, "%s",
		      err.message);
	free(px);
	free(path);
}
END_TEST

/* Pages smaller than a directory: the shaped description all the same
 * (the pixels lie back to back, as tifffile takes a shaped series), the
 * pixels read back. */
START_TEST(test_save_tiny_pages)
{
	const fx f = { .type = PARLOAD_PIXEL_U16, .w = 7, .h = 5, .pages = 3,
		       .seed = 30 };
	char *path = tu_path("tiny.tif"), *desc = NULL;
	unsigned char *px = fx_pixels(&f), *got;
	parload_stack st = { .pixels = px, .pixel_type = f.type, .n = 3,
			     .rows = 5, .cols = 7 };
	parload__container c;
	parload_error err;
	TIFF *tif;

	ck_assert_msg(parload_save(path, &st, NULL, &err) == 0, "%s",
		      err.message);
	tif = TIFFOpen(path, "r");
	ck_assert_ptr_nonnull(tif);
	ck_assert_int_eq(TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc), 1);
	ck_assert_str_eq(desc, "{\"shape\": [3, 5, 7]}");
	TIFFClose(tif);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	got = via_table(&c);
	ck_assert(memcmp(got, px, fx_page(&f) * 3) == 0);
	free(got);
	parload__container_free(&c);
	free(px);
	free(path);
}
END_TEST

/* The BigTIFF form (parload_save takes it for files of 4 GiB or more),
 * asked of a small stack: libtiff opens it as BigTIFF, and it reads back
 * through both walks, every type. */
START_TEST(test_save_bigtiff)
{
	static const int types[] = { PARLOAD_PIXEL_U8, PARLOAD_PIXEL_I16,
				     PARLOAD_PIXEL_F32 };
	const fx f = { .type = types[_i], .w = 33, .h = 9, .pages = 4,
		       .seed = 40 + _i };
	char *path = tu_path("big.tif"), *desc = NULL;
	unsigned char *px = fx_pixels(&f), *got;
	parload_stack st = { .pixels = px, .pixel_type = f.type, .n = 4,
			     .rows = 9, .cols = 33 };
	parload__container c;
	parload_error err;
	TIFF *tif;

	tu_write_file(path, "", 0);
	ck_assert_msg(parload__tiff_save_as(path, path, &st, true, &err) == 0,
		      "%s", err.message);
	tif = TIFFOpen(path, "r");
	ck_assert_ptr_nonnull(tif);
	ck_assert_int_eq(TIFFIsBigTIFF(tif), 1);
	ck_assert_int_eq(TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc), 1);
	ck_assert_str_eq(desc, "{\"shape\": [4, 9, 33]}");
	ck_assert_int_eq(TIFFNumberOfDirectories(tif), 4);
	TIFFClose(tif);
	same_tables_path(path);
	ck_assert_int_eq(read_path(path, &c, &err), 0);
	ck_assert_int_eq(c.desc.pixel_type, f.type);
	got = via_table(&c);
	ck_assert(memcmp(got, px, fx_page(&f) * 4) == 0);
	free(got);
	parload__container_free(&c);
	free(px);
	free(path);
}
END_TEST

/* A folder that cannot be written: EWRITE naming the output. */
START_TEST(test_save_unwritable)
{
	const uint16_t px[4] = { 1, 2, 3, 4 };
	parload_stack st = { .pixels = px, .pixel_type = PARLOAD_PIXEL_U16,
			     .n = 1, .rows = 2, .cols = 2 };
	parload_error err;

	ck_assert_int_eq(parload_save("/nonexistent-dir/x.tif", &st, NULL,
				      &err),
			 PARLOAD_EWRITE);
	ck_assert_msg(strstr(err.message, "/nonexistent-dir/x.tif"), "%s",
		      err.message);
}
END_TEST

/* The tests of fixtures written with libtiff. */
static void libtiff_tests(Suite *s)
{
	TCase *t = tu_tcase(s, "read", 60);

	tcase_add_test(t, test_single_page);
	tcase_add_test(t, test_multi_page_le);
	tcase_add_test(t, test_big_endian_i16);
	tcase_add_test(t, test_bigtiff);
	tcase_add_loop_test(t, test_rows_per_strip, 0, 3);
	tcase_add_test(t, test_tiled_edges);
	tcase_add_test(t, test_lzw);
	tcase_add_test(t, test_deflate_predictor);
	tcase_add_test(t, test_float32);
	tcase_add_test(t, test_folder_numeric_order);
	tcase_add_test(t, test_list_differing_strips);
	tcase_add_test(t, test_folder_of_three);
	t = tu_tcase(s, "bad", 30);
	tcase_add_test(t, test_pages_differ);
	tcase_add_test(t, test_rgb_refused);
	tcase_add_test(t, test_two_samples_refused);
	tcase_add_test(t, test_looping_ifd);
	tcase_add_test(t, test_strip_past_end);
	tcase_add_test(t, test_folder_without_tiffs);
	tcase_add_test(t, test_imagej_needs_plain);
	t = tu_tcase(s, "engine", 60);
	tcase_add_loop_test(t, test_engine_loads, 0, 2 * TU_COUNT(loaded));
	tcase_add_loop_test(t, test_cut_while_read, 0, 2);
	tcase_add_test(t, test_folder_one_compressed);
	tcase_add_test(t, test_backend_unknown);
	t = tu_tcase(s, "write", 60);
	tcase_add_loop_test(t, test_save_read_back, 0, 3);
	tcase_add_test(t, test_save_tiny_pages);
	tcase_add_loop_test(t, test_save_bigtiff, 0, 3);
	tcase_add_test(t, test_save_unwritable);
}
#endif

static Suite *suite(void)
{
	Suite *s = suite_create("tiff");
	TCase *t = tu_tcase(s, "direct", 60);

	tcase_add_loop_test(t, test_tifffile_layout, 0, 5);
	tcase_add_loop_test(t, test_runs, 0, 4 * (int)TU_COUNT(run_cases));
	tcase_add_loop_test(t, test_needs_libtiff, 0, 2);
	tcase_add_test(t, test_bytecounts_differ);
	tcase_add_test(t, test_rows_per_strip_wraps);
	tcase_add_loop_test(t, test_imagej_stack, 0, 2);
	tcase_add_loop_test(t, test_imagej_refused, 0, 5);
#ifdef HAVE_TIFF
	libtiff_tests(s);
#endif
	return s;
}

int main(void)
{
	return tu_run(suite());
}
