/*
 * tiff_write.c - a stack saved as an uncompressed multi-page TIFF, written
 * with a handful of large writes and no libtiff.
 *
 * The layout is tifffile's for a shaped series: the header, the first
 * page's directory (with the ImageDescription {"shape": [n, rows,
 * cols]}), every page's pixels back to back as one strip each, then the
 * other pages' directories back to back, each linking to the next.
 * Classic TIFF while the file stays below 4 GiB, else BigTIFF (64-bit
 * offsets and counts).  Every directory holds the same eleven tags, sorted
 * (the first page's twelve):
 * width, length, bits per sample, compression (none), photometric (min is
 * black), [description,] strip offset, samples per pixel (1), rows per
 * strip (the page's rows), strip byte count, planar configuration
 * (contiguous), sample format (unsigned, signed or IEEE float).
 */
#include "formats/tiff/tiff.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Pixels are written this many bytes a call at the most. */
#define WRITE_PIECE ((size_t)8 << 20)
/* Entries of a page's directory; the first also has the description. */
#define TAGS 11

/* Tag types: SHORT, LONG, ASCII, LONG8. */
enum { T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_LONG8 = 16 };

typedef struct tw {
	bool big;               /* BigTIFF */
	unsigned char *p;       /* where the next bytes go */
} tw;

static void put(tw *w, uint64_t v, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		*w->p++ = (unsigned char)(v >> (8 * k));
}

/* One entry of count values of type, the value itself (inline). */
static void entry(tw *w, uint16_t tag, uint16_t type, uint64_t count,
		  uint64_t value)
{
	const unsigned width = w->big ? 8 : 4;
	const unsigned size = type == T_SHORT ? 2 : type == T_LONG ? 4 :
			      type == T_LONG8 ? 8 : width;

	put(w, tag, 2);
	put(w, type, 2);
	put(w, count, width);
	put(w, value, size);
	for (unsigned k = size; k < width; k++)
		*w->p++ = 0;
}

/* Bytes of one directory of entries entries. */
static size_t dir_bytes(bool big, unsigned entries)
{
	return big ? 8 + 20 * (size_t)entries + 8 : 2 + 12 * (size_t)entries + 4;
}

typedef struct page_tags {
	uint32_t cols, rows;
	uint16_t bits, format;
	uint64_t bytes;         /* of a page */
	uint64_t desc_at;       /* the description's offset, or 0: none */
	size_t desc_len;        /* with its NUL */
} page_tags;

/* The directory of a page whose pixels are at off, linking to next. */
static void directory(tw *w, const page_tags *t, uint64_t off, uint64_t next)
{
	const unsigned width = w->big ? 8 : 4;
	const uint16_t big_type = w->big ? T_LONG8 : T_LONG;

	put(w, t->desc_at ? TAGS + 1 : TAGS, w->big ? 8 : 2);
	entry(w, 256, T_LONG, 1, t->cols);
	entry(w, 257, T_LONG, 1, t->rows);
	entry(w, 258, T_SHORT, 1, t->bits);
	entry(w, 259, T_SHORT, 1, 1);
	entry(w, 262, T_SHORT, 1, 1);
	if (t->desc_at) {
		/* The value field holds the string's offset. */
		put(w, 270, 2);
		put(w, T_ASCII, 2);
		put(w, t->desc_len, width);
		put(w, t->desc_at, width);
	}
	entry(w, 273, big_type, 1, off);
	entry(w, 277, T_SHORT, 1, 1);
	entry(w, 278, T_LONG, 1, t->rows);
	entry(w, 279, big_type, 1, t->bytes);
	entry(w, 284, T_SHORT, 1, 1);
	entry(w, 339, T_SHORT, 1, t->format);
	put(w, next, width);
}

/* n bytes at buf to fd, whole (EINTR and short writes retried): 0 or
 * the errno. */
static int write_all(int fd, const unsigned char *buf, size_t n)
{
	while (n) {
		const ssize_t got = parload__sys_write(fd, buf, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? errno : ENOSPC;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

static int fail_write(parload_error *err, int e, const char *path,
		      uint64_t page, const char *what)
{
	return parload__fail(err, PARLOAD_EWRITE, e, path, page, PARLOAD_NONE,
			     "cannot write %s", what);
}

/* The pixels of every page: a failure names its page. */
static int write_pixels(int fd, const parload_stack *st, uint64_t page,
			const char *path, parload_error *err)
{
	const unsigned char *px = st->pixels;
	const uint64_t total = st->n * page;

	for (uint64_t done = 0; done < total;) {
		const size_t n = (size_t)PARLOAD__MIN(total - done,
						      (uint64_t)WRITE_PIECE);
		const int e = write_all(fd, px + done, n);

		if (e) {
			char what[64];

			snprintf(what, sizeof(what), "page %" PRIu64 "'s pixels",
				 done / page);
			return fail_write(err, e, path, done / page, what);
		}
		done += n;
	}
	return 0;
}

/* Bytes of one page's pixels. */
static uint64_t page_bytes(const parload_stack *st)
{
	return (uint64_t)st->rows * st->cols * parload_pixel_size(st->pixel_type);
}

int parload__tiff_save(const char *tmp, const char *path,
		       const parload_stack *st, parload_error *err)
{
	const uint64_t page = page_bytes(st);
	/* Classic TIFF's 32-bit offsets while the whole file fits them. */
	const bool big = st->n > (UINT64_C(1) << 32) / (page + 128) ||
			 256 + st->n * (page + dir_bytes(false, TAGS)) >=
				 (UINT64_C(1) << 32);

	return parload__tiff_save_as(tmp, path, st, big, err);
}

/* The file's parts in its order, so that it is written front to back:
 * first (pixels bytes: the header, the first directory, the
 * description), the pixels, then the other pages' directories (dirs,
 * one bytes each). */
static int write_parts(int fd, const unsigned char *first, uint64_t pixels,
		       const unsigned char *dirs, size_t one,
		       const parload_stack *st, const char *path,
		       parload_error *err)
{
	int e, rc;

	if ((e = write_all(fd, first, (size_t)pixels)) != 0)
		return fail_write(err, e, path, PARLOAD_NONE, "the header");
	rc = write_pixels(fd, st, page_bytes(st), path, err);
	if (rc == 0 && st->n > 1 &&
	    (e = write_all(fd, dirs, (size_t)(st->n - 1) * one)) != 0)
		rc = fail_write(err, e, path, PARLOAD_NONE,
				"the pages' directories");
	return rc;
}

/* TIFF's SampleFormat of a pixel type: IEEE float, signed, unsigned. */
static uint16_t sample_format(int type)
{
	return type == PARLOAD_PIXEL_F32 || type == PARLOAD_PIXEL_F64 ? 3 :
	       type == PARLOAD_PIXEL_I16 || type == PARLOAD_PIXEL_I32 ? 2 :
									 1;
}

/* The file's header: little-endian ("II"), classic (42) or BigTIFF (43),
 * the first directory right after it. */
static void put_header(tw *w)
{
	if (w->big) {
		put(w, 0x002B4949, 4);
		put(w, 8, 2);
		put(w, 0, 2);
		put(w, 16, 8);
	} else {
		put(w, 0x002A4949, 4);
		put(w, 8, 4);
	}
}

/* The file's first bytes, at w->p: the header, then page 0's directory
 * (its pixels at pixels, the next page's directory at next, 0: none)
 * with the description desc (len bytes, its NUL too) at head. */
static void first_part(tw *w, const page_tags *t, uint64_t head,
		       const char *desc, size_t len, uint64_t pixels,
		       uint64_t next)
{
	unsigned char *const start = w->p; /* (put moves w->p on) */
	page_tags first = *t;

	put_header(w);
	first.desc_at = head;
	first.desc_len = len;
	directory(w, &first, pixels, next);
	memcpy(start + head, desc, len);
}

/* The directories of pages 1 to n - 1 into dirs, one bytes each, which
 * the file holds after the pixels (n pages from pixels): each links to
 * the next, the last to none. */
static void other_dirs(tw *w, const page_tags *t, unsigned char *dirs,
		       size_t one, uint64_t n, uint64_t pixels)
{
	const uint64_t rest = pixels + n * t->bytes;

	for (uint64_t k = 1; k < n; k++) {
		w->p = dirs + (k - 1) * one;
		directory(w, t, pixels + k * t->bytes,
			  k + 1 < n ? rest + k * one : 0);
	}
}

int parload__tiff_save_as(const char *tmp, const char *path,
			  const parload_stack *st, bool big,
			  parload_error *err)
{
	const unsigned bpp = parload_pixel_size(st->pixel_type);
	const uint64_t page = page_bytes(st);
	char desc[96];
	page_tags t = { st->cols, st->rows, (uint16_t)(8 * bpp),
			sample_format(st->pixel_type), page, 0, 0 };
	const size_t len = (size_t)snprintf(desc, sizeof(desc),
					    "{\"shape\": [%" PRIu64 ", %" PRIu32
					    ", %" PRIu32 "]}",
					    st->n, st->rows, st->cols) + 1;
	/* Header, first directory, description, then the pixels (16-byte
	 * aligned), then the other directories. */
	const uint64_t head = (big ? 16 : 8) + dir_bytes(big, TAGS + 1);
	const uint64_t pixels = (head + len + 15) & ~(uint64_t)15;
	const uint64_t rest = pixels + st->n * page;
	const size_t one = dir_bytes(big, TAGS);
	unsigned char *first, *dirs = NULL;
	tw w = { big, NULL };
	int fd, rc;

	/* tmp is the empty file parload_save made: not opened with O_TRUNC,
	 * since on ext4 the close of a file truncated at its opening sends
	 * all its dirty pages to the disk (auto_da_alloc), and waits. */
	fd = parload__sys_open(tmp, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_write(err, errno, path, PARLOAD_NONE, "the file");
	first = parload__sys_calloc(1, (size_t)pixels);
	if (st->n > 1)
		dirs = parload__sys_malloc((size_t)(st->n - 1) * one);
	if (!first || (st->n > 1 && !dirs)) {
		rc = parload__fail_nomem(err, path);
		goto out;
	}
	w.p = first;
	first_part(&w, &t, head, desc, len, pixels, st->n > 1 ? rest : 0);
	other_dirs(&w, &t, dirs, one, st->n, pixels);
	rc = write_parts(fd, first, pixels, dirs, one, st, path, err);
out:
	if (parload__sys_close(fd) != 0 && rc == 0)
		rc = fail_write(err, errno, path, PARLOAD_NONE, "the file");
	parload__sys_free(first);
	parload__sys_free(dirs);
	return rc;
}
