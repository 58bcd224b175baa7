/*
 * tiff_walk.c - a TIFF file's directories read with pread and no libtiff
 * (whose TIFFReadDirectory costs about 10 us a page).  From the header
 * (II or MM; 42, classic, or 43, BigTIFF) along the chain of directories
 * (IFDs), each page's size, type and strips, with TIFF 6.0's defaults.
 * The reads go through one cached block: tifffile writes the directories
 * back to back at the end of the file (one 64 KiB pread for many), libtiff
 * each after its page (one 2 KiB pread each), never one a tag.
 * tifffile's directories, and parload's own (tiff_write.c), are moreover
 * the same bytes but for the strip's offset and the next directory's: after
 * a directory read entry by entry, a run takes each following one that is
 * its copy but for those with one memcmp, checks only where its strips lie,
 * and keeps one record for the whole run (a page's own record and strips
 * take 72 bytes: they were most of the page faults of a 20,000-page walk):
 * the first page's strip offsets and the step to the next page's while
 * each page's strips lie one step after the last's, else 8 bytes a page
 * (a strip's offset).
 * The first directory that differs in anything else ends the run and is
 * read entry by entry, refused as it would have been; the tests and the
 * fuzzer check the walk with runs against the walk without them.
 * Anything else than uncompressed strips of one sample per pixel and a
 * type parload has, or anything odd (a tag of a type it does not expect,
 * a chain that does not go forward, an offset past the end, strips that
 * do not fit), makes it answer "fall back": tiff.c then has libtiff read
 * the whole source, as it would without this walk.
 */
#include "formats/tiff/tiff.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FALL_BACK 1
#define BLOCK ((size_t)65536)
#define JUMP ((size_t)2048) /* what a read away from the block takes */
#define MAX_ENTRIES 4096 /* libtiff's bound on a directory's entries */
#define SLAB_VALUES ((size_t)8192) /* a slab block: 64 KiB of offsets */
#define RUN_STRIDE ((size_t)4096) /* a run's directories lie this close */
#define RUN_FIRST ((uint64_t)64) /* a run's first record's pages */
#define RUN_PAGES ((uint64_t)1 << 16) /* a run's record holds at most */

typedef parload__tiff_pages walk;
typedef parload__tiff_page page;

/* One file being walked, and its cached block. */
typedef struct tin {
	walk *w;
	uint32_t f;
	const char *path;
	int fd;
	uint64_t size;     /* the file's bytes */
	bool be, big;      /* MM; BigTIFF */
	uint64_t at;       /* the block's offset in the file */
	size_t have;       /* and its bytes */
	parload_error *why, *err;
	unsigned char tmpl[RUN_STRIDE]; /* the directory a run repeats */
	unsigned char block[BLOCK];
} tin;

/* One entry of a directory, as found. */
typedef struct entry {
	uint16_t type;
	uint64_t count;
	unsigned char value[8]; /* the value or its offset, as stored */
} entry;

/* The tags of one directory the walk needs. */
enum { T_WIDTH, T_HEIGHT, T_BITS, T_COMP, T_SPP, T_RPS, T_PLANAR,
       T_FORMAT, T_OFFSETS, T_BYTES, T_DESC, T_COUNT };
static const uint16_t tags[T_COUNT] = { 256, 257, 258, 259, 277, 278,
					284, 339, 273, 279, 270 };

typedef struct dir {
	entry e[T_COUNT];
	bool seen[T_COUNT];
	uint32_t pos[T_COUNT]; /* each one's place among the entries */
	uint32_t n;        /* entries */
	bool tiled;
	uint64_t next;     /* the next directory's offset, or 0 */
} dir;

/* Fill *why (page k, its directory at off, as a build without libtiff
 * says it) and answer "fall back". */
static int cannot(tin *in, int code, uint32_t k, uint64_t off,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int cannot(tin *in, int code, uint32_t k, uint64_t off,
		  const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	parload__fail(in->why, code, 0, in->path, in->w->views, off,
		      "page %" PRIu32 "%s%s", k, what,
		      code == PARLOAD_ENOTSUP ? PARLOAD__TIFF_NEEDS : "");
	return FALL_BACK;
}

/* n bytes at off straight from the file: 0, FALL_BACK where the file
 * ends first, EIO. */
static int pread_all(tin *in, uint64_t off, size_t n, unsigned char *buf)
{
	for (size_t done = 0; done < n;) {
		const ssize_t got = parload__sys_pread(in->fd, buf + done,
						       n - done,
						       (off_t)(off + done));

		if (got < 0)
			return parload__fail(in->err, PARLOAD_EIO, errno,
					     in->path, PARLOAD_NONE, off + done,
					     "reading its directories");
		if (got == 0)
			return FALL_BACK;
		done += (size_t)got;
	}
	return 0;
}

/* Where n bytes (at most BLOCK) at off lie in the block, read from off
 * (the walk goes forward) only when they fall outside it, BLOCK bytes or,
 * away from the block, JUMP; NULL with *rc FALL_BACK unless they are all
 * in the file, or EIO. */
static const unsigned char *view(tin *in, uint64_t off, size_t n, int *rc)
{
	/* Going on from the block: a whole one; a jump (libtiff's
	 * directories, each after its page): a small one. */
	const bool on = off >= in->at && off - in->at <= in->have + JUMP;
	size_t len = on || n > JUMP ? BLOCK : JUMP;

	*rc = 0;
	if (off > in->size || n > in->size - off) {
		*rc = FALL_BACK;
		return NULL;
	}
	if (off >= in->at && off - in->at <= in->have &&
	    n <= in->have - (off - in->at))
		return in->block + (off - in->at);
	len = in->size - off < len ? (size_t)(in->size - off) : len;
	in->have = 0;
	in->at = off;
	if ((*rc = pread_all(in, off, len, in->block)) != 0)
		return NULL;
	in->have = len;
	return in->block;
}

/* n bytes at off into buf, through the block where they fit in one. */
static int get(tin *in, uint64_t off, size_t n, unsigned char *buf)
{
	const unsigned char *p;
	int rc;

	if (n > BLOCK)
		return off > in->size || n > in->size - off ?
			       FALL_BACK :
			       pread_all(in, off, n, buf);
	if ((p = view(in, off, n, &rc)) != NULL)
		memcpy(buf, p, n);
	return rc;
}

/* An unsigned integer of n bytes (2, 4 or 8) in the file's order. */
static uint64_t num(const tin *in, const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	if (in->be)
		for (unsigned k = 0; k < n; k++)
			v = v << 8 | p[k];
	else
		for (unsigned k = n; k > 0; k--)
			v = v << 8 | p[k - 1];
	return v;
}

/* The index among tags of tag, or T_COUNT. */
static int tag_index(uint16_t tag)
{
	switch (tag) {
	case 256: return T_WIDTH;
	case 257: return T_HEIGHT;
	case 258: return T_BITS;
	case 259: return T_COMP;
	case 270: return T_DESC;
	case 273: return T_OFFSETS;
	case 277: return T_SPP;
	case 278: return T_RPS;
	case 279: return T_BYTES;
	case 284: return T_PLANAR;
	case 339: return T_FORMAT;
	default: return T_COUNT;
	}
}

/* Bytes of one value of TIFF type t among SHORT, LONG and LONG8 (BigTIFF
 * only), or 0 for any other. */
static unsigned type_size(const tin *in, uint16_t t)
{
	return t == 3 ? 2 : t == 4 ? 4 : t == 16 && in->big ? 8 : 0;
}

/* The header: byte order, classic or BigTIFF, the first directory. */
static int header(tin *in, uint64_t *first)
{
	unsigned char h[16];
	int rc = get(in, 0, 8, h);

	if (rc)
		return rc < 0 ? rc : cannot(in, PARLOAD_ECONTAINER, 0, 0,
					    ": not a TIFF (shorter than its "
					    "header)");
	if ((h[0] != 'I' || h[1] != 'I') && (h[0] != 'M' || h[1] != 'M'))
		return cannot(in, PARLOAD_ECONTAINER, 0, 0,
			      ": not a TIFF (no II or MM)");
	in->be = h[0] == 'M';
	in->big = num(in, h + 2, 2) == 43;
	if (!in->big && num(in, h + 2, 2) == 42) {
		*first = num(in, h + 4, 4);
		return 0;
	}
	if (!in->big || num(in, h + 4, 2) != 8 || num(in, h + 6, 2) != 0 ||
	    (rc = get(in, 8, 8, h + 8)) != 0)
		return rc < 0 ? rc : cannot(in, PARLOAD_ECONTAINER, 0, 0,
					    ": not a TIFF header");
	*first = num(in, h + 8, 8);
	return 0;
}

/* Entry e, the i-th, of the directory at off into d, where it is one the
 * walk needs. */
static int take_entry(tin *in, uint32_t k, uint64_t off, uint32_t i,
		      const unsigned char *e, dir *d)
{
	const uint16_t tag = (uint16_t)num(in, e, 2);
	const int t = tag_index(tag);
	entry *x = &d->e[t < T_COUNT ? t : 0];

	if (tag >= 322 && tag <= 325)
		d->tiled = true;
	if (t == T_COUNT)
		return 0;
	if (d->seen[t])
		return cannot(in, PARLOAD_ENOTSUP, k, off,
			      "'s directory has tag %u twice", tag);
	d->seen[t] = true;
	d->pos[t] = i;
	x->type = (uint16_t)num(in, e + 2, 2);
	x->count = in->big ? num(in, e + 4, 8) : num(in, e + 4, 4);
	memcpy(x->value, e + (in->big ? 12 : 8), in->big ? 8 : 4);
	/* (ImageDescription, ASCII, is read only where it counts:
	 * imagej.) */
	if (t != T_DESC && !type_size(in, x->type))
		return cannot(in, PARLOAD_ENOTSUP, k, off,
			      ": tag %u of TIFF type %u", tag, x->type);
	return 0;
}

/* The n entries at at of the directory at off into d: where they fit in
 * the block, in place, else one by one. */
static int take_entries(tin *in, uint32_t k, uint64_t off, uint64_t at,
			uint64_t n, dir *d)
{
	const unsigned es = in->big ? 20 : 12;
	unsigned char e[20];
	int rc = 0;
	/* (Where the view fails, get says why, entry by entry.) */
	const unsigned char *p = n * es <= BLOCK ? view(in, at, n * es, &rc) :
						  NULL;

	rc = 0;

	for (uint64_t i = 0; !rc && i < n; i++) {
		if (!p && (rc = get(in, at + i * es, es, e)) != 0)
			return rc < 0 ? rc : cannot(in, PARLOAD_ETRUNCATED, k,
						    off, ": its directory lies "
						    "past the end of the file");
		rc = take_entry(in, k, off, (uint32_t)i, p ? p + i * es : e, d);
	}
	return rc;
}

/* The directory at off: its entries the walk needs, and the next one's
 * offset. */
static int read_dir(tin *in, uint32_t k, uint64_t off, dir *d)
{
	const unsigned es = in->big ? 20 : 12, cs = in->big ? 8 : 2;
	unsigned char b[8];
	uint64_t n;
	int rc = get(in, off, cs, b);

	/* (An entry is read only where seen says it was found.) */
	memset(d->seen, 0, sizeof(d->seen));
	d->tiled = false;
	d->next = 0;
	if (rc)
		return rc < 0 ? rc : cannot(in, PARLOAD_ETRUNCATED, k, off,
					    ": its directory lies past the end "
					    "of the file");
	n = num(in, b, cs);
	if (n == 0 || n > MAX_ENTRIES)
		return cannot(in, PARLOAD_ECONTAINER, k, off,
			      ": a directory of %" PRIu64 " entries", n);
	d->n = (uint32_t)n;
	if ((rc = take_entries(in, k, off, off + cs, n, d)))
		return rc;
	rc = get(in, off + cs + n * es, cs == 8 ? 8 : 4, b);
	if (rc)
		return rc < 0 ? rc : cannot(in, PARLOAD_ETRUNCATED, k, off,
					    ": its directory lies past the end "
					    "of the file");
	d->next = num(in, b, cs == 8 ? 8 : 4);
	return 0;
}

/* The single value of tag t, or def where it is absent; FALL_BACK for
 * more than one value, or one above most. */
static int scalar(tin *in, const dir *d, int t, uint64_t def, uint64_t most,
		  uint32_t k, uint64_t off, uint64_t *v)
{
	const entry *x = &d->e[t];

	*v = def;
	if (!d->seen[t])
		return 0;
	if (x->count != 1)
		return cannot(in, PARLOAD_ENOTSUP, k, off,
			      ": tag %u has %" PRIu64 " values", tags[t],
			      x->count);
	*v = num(in, x->value, type_size(in, x->type));
	if (*v > most)
		return cannot(in, PARLOAD_ECONTAINER, k, off,
			      ": tag %u of %" PRIu64, tags[t], *v);
	return 0;
}

/* The n values of tag t (StripOffsets, StripByteCounts) into a, from the
 * entry itself or from where it points. */
static int array(tin *in, const dir *d, int t, uint32_t n, uint64_t *a,
		 uint32_t k, uint64_t off)
{
	const entry *x = &d->e[t];
	const unsigned inl = in->big ? 8 : 4;
	unsigned char b[512];
	unsigned ts;
	uint64_t at;
	int rc = 0;

	if (!d->seen[t] || x->count != n)
		return cannot(in, PARLOAD_ECONTAINER, k, off,
			      ": tag %u has %" PRIu64 " values, not the %"
			      PRIu32 " strips of the page", tags[t],
			      d->seen[t] ? x->count : 0, n);
	ts = type_size(in, x->type);
	at = num(in, x->value, inl);
	if ((uint64_t)n * ts <= inl) {
		for (uint32_t i = 0; i < n; i++)
			a[i] = num(in, x->value + (size_t)i * ts, ts);
		return 0;
	}
	for (uint32_t i = 0; !rc && i < n; i += sizeof(b) / ts) {
		const uint32_t m = n - i < sizeof(b) / ts ? n - i :
							    (uint32_t)(sizeof(b) / ts);

		rc = get(in, at + (uint64_t)i * ts, (size_t)m * ts, b);
		for (uint32_t j = 0; !rc && j < m; j++)
			a[i + j] = num(in, b + (size_t)j * ts, ts);
	}
	return rc < 0 ? rc : rc ? cannot(in, PARLOAD_ETRUNCATED, k, off,
					 ": tag %u's values lie past the end "
					 "of the file", tags[t]) :
				  0;
}

static const char *compression_name(uint64_t c)
{
	return c == 5 ? "LZW" : c == 8 || c == 32946 ? "deflate" :
	       c == 7 || c == 6 ? "JPEG" : c == 32773 ? "PackBits" :
	       c == 34925 ? "LZMA" : c == 50000 ? "zstd" :
	       c == 2 || c == 3 || c == 4 ? "CCITT" : "otherwise";
}

/* The page's pixel type: one sample of a type parload has, uncompressed,
 * in strips (PlanarConfiguration 1 or 2 alike with one sample). */
static int page_type(tin *in, const dir *d, uint32_t k, uint64_t off,
		     int *type)
{
	uint64_t spp, bits, fmt, comp, planar;
	int rc;

	if ((rc = scalar(in, d, T_SPP, 1, UINT16_MAX, k, off, &spp)))
		return rc;
	if (spp != 1) /* (BitsPerSample has spp values) */
		return parload__tiff_sample(in->path, in->w->views, k,
					    (unsigned)spp, 0, 0, type,
					    in->why) ? FALL_BACK : 0;
	if ((rc = scalar(in, d, T_BITS, 1, UINT16_MAX, k, off, &bits)) ||
	    (rc = scalar(in, d, T_FORMAT, 1, UINT16_MAX, k, off, &fmt)) ||
	    (rc = scalar(in, d, T_COMP, 1, UINT16_MAX, k, off, &comp)) ||
	    (rc = scalar(in, d, T_PLANAR, 1, 2, k, off, &planar)))
		return rc;
	if (parload__tiff_sample(in->path, in->w->views, k, (unsigned)spp,
				 (unsigned)bits, (unsigned)fmt, type, in->why))
		return FALL_BACK;
	if (comp != 1)
		return cannot(in, PARLOAD_ENOTSUP, k, off, " is %s-compressed "
			      "(Compression %" PRIu64 ")",
			      compression_name(comp), comp);
	if (d->tiled)
		return cannot(in, PARLOAD_ENOTSUP, k, off, " is tiled");
	return planar == 0 ? cannot(in, PARLOAD_ECONTAINER, k, off,
				    ": PlanarConfiguration 0") : 0;
}

/* n values of w's slab, in its newest block or a new one. */
static uint64_t *slab_take(walk *w, size_t n)
{
	parload__tiff_slab *s = w->slab;

	if (!s || s->cap - s->used < n) {
		const size_t cap = n > SLAB_VALUES ? n : SLAB_VALUES;

		if (cap > (SIZE_MAX - sizeof(*s)) / sizeof(uint64_t) ||
		    !(s = parload__sys_malloc(sizeof(*s) +
					      cap * sizeof(uint64_t))))
			return NULL;
		s->next = w->slab;
		s->used = 0;
		s->cap = cap;
		w->slab = s;
	}
	s->used += n;
	return s->v + s->used - n;
}

/* Whether got, the strips of the next page of run r, lie one step after
 * its last page's (the step set by its second page). */
static bool stepped(page *r, const uint64_t *got)
{
	if (r->pages == 1) {
		if (got[0] < r->off[0])
			return false;
		r->ostep = got[0] - r->off[0];
	}
	for (uint32_t u = 0; u < r->units; u++)
		if (got[u] != parload__tiff_off(r, r->pages, u))
			return false;
	return true;
}

/* Page p's strips of rps rows (their offsets and sizes), which must fit
 * the file. */
static int page_strips(tin *in, const dir *d, page *p, uint64_t rps,
		       uint64_t row_size, uint64_t off)
{
	const uint32_t height = in->w->height;
	uint64_t planar;
	int rc;

	p->unit = rps > height ? height : (uint32_t)rps;
	p->units = (uint32_t)(((uint64_t)height + p->unit - 1) / p->unit);
	p->across = 1;
	p->plain = true;
	p->be = in->be;
	if (!(p->off = slab_take(in->w, 2 * (size_t)p->units)))
		return parload__fail_nomem(in->err, in->path);
	p->bytes = p->off + p->units;
	p->pooled = true;
	if ((rc = array(in, d, T_OFFSETS, p->units, p->off, p->index, off)) ||
	    (rc = array(in, d, T_BYTES, p->units, p->bytes, p->index, off)) ||
	    (rc = scalar(in, d, T_PLANAR, 1, 2, p->index, off, &planar)))
		return rc;
	/* libtiff takes StripByteCounts whose first two differ (more than
	 * two strips, contiguous, uncompressed) for a damaged field and
	 * computes its own from the image's size instead (tif_dirread.c):
	 * its walk, not this one, says what such a page is. */
	if (p->units > 2 && planar == 1 && p->bytes[0] != p->bytes[1] &&
	    p->bytes[0] && p->bytes[1])
		return cannot(in, PARLOAD_ECONTAINER, p->index, off,
			      ": StripByteCounts of %" PRIu64 " and %" PRIu64
			      " bytes for its first two strips, of the same "
			      "rows (libtiff ignores the field and computes "
			      "its own)", p->bytes[0], p->bytes[1]);
	return parload__tiff_fits(p, height, row_size, in->size, in->path,
				  in->w->views - 1, in->why) ?
		       FALL_BACK :
		       0;
}

/* The directory at off, read into *d: page k, the stream's next view. */
static int add_page(tin *in, uint32_t k, uint64_t off, dir *d)
{
	uint64_t width, height, rps, row_size;
	page *p;
	int type, rc = read_dir(in, k, off, d);

	if (rc || (rc = page_type(in, d, k, off, &type)) ||
	    (rc = scalar(in, d, T_WIDTH, 0, UINT32_MAX, k, off, &width)) ||
	    (rc = scalar(in, d, T_HEIGHT, 0, UINT32_MAX, k, off, &height)) ||
	    (rc = scalar(in, d, T_RPS, UINT32_MAX, UINT32_MAX, k, off, &rps)))
		return rc;
	row_size = width * parload_pixel_size(type);
	if (!width || !height || !rps || row_size > in->size / height)
		return cannot(in, PARLOAD_ECONTAINER, k, off, ": %" PRIu64
			      " x %" PRIu64 " pixels in strips of %" PRIu64
			      " rows, in a file of %" PRIu64 " bytes", width,
			      height, rps, in->size);
	/* libtiff counts its strips in 32 bits: RowsPerStrip past 2^32 -
	 * 1 - height (but 2^32 - 1, its "one strip") makes none, and its
	 * walk refuses the page (TIFFhowmany_32). */
	if (rps != UINT32_MAX && height + rps > UINT32_MAX)
		return cannot(in, PARLOAD_ECONTAINER, k, off, ": RowsPerStrip "
			      "%" PRIu64 " for %" PRIu64 " rows, which libtiff "
			      "counts as no strips", rps, height);
	rc = parload__tiff_add(in->w, in->f, k, (uint32_t)width,
			       (uint32_t)height, type, &p, in->why);
	if (rc == PARLOAD_ENOMEM)
		*in->err = *in->why;
	if (rc)
		return rc == PARLOAD_ENOMEM ? rc : FALL_BACK;
	p->ifd = off;
	return page_strips(in, d, p, rps, row_size, off);
}

/* Whether a page whose strips (those of page t) start at off[] has them
 * all within the file: parload__tiff_fits's test of where they lie (their
 * sizes are t's, which passed it). */
static bool strips_fit(const tin *in, const page *t, const uint64_t *off)
{
	const uint64_t row_size = (uint64_t)in->w->width *
				  parload_pixel_size(in->w->type);
	const uint32_t height = in->w->height;

	for (uint32_t u = 0; u < t->units; u++) {
		const uint64_t need =
			parload__tiff_unit_rows(height, t->unit, u) * row_size;

		if (off[u] > in->size || need > in->size - off[u])
			return false;
	}
	return true;
}

/* Whether directory b (next + inl bytes) is the run's (in->tmpl) but for
 * its strips' offsets (inl bytes at value) and its next directory's
 * offset (at next), which is want. */
static bool repeats(const tin *in, const unsigned char *b, size_t value,
		    size_t next, unsigned inl, uint64_t want)
{
	return memcmp(b, in->tmpl, value) == 0 &&
	       memcmp(b + value + inl, in->tmpl + value + inl,
		      next - value - inl) == 0 &&
	       num(in, b + next, inl) == want;
}

/* A new record of a run at the walk's end: page t's (a copy of the
 * directory the run repeats) at o, directories step s apart, its first
 * page k, the strips of that page at got; stepped until a page's strips
 * are not where the last page's and one step put them. */
static int run_record(tin *in, const page *t, uint64_t o, uint64_t s,
		      uint32_t k, const uint64_t *got, page **out)
{
	walk *w = in->w;
	page *r;
	int rc = parload__tiff_reserve(w, w->records + 1, in->f, in->err);

	if (rc)
		return rc;
	r = &w->p[w->records++];
	*r = *t;
	r->ifd = o;
	r->view = w->views;
	r->step = s;
	r->pages = 0;
	r->index = k;
	r->stepped = true;
	if (!(r->off = slab_take(w, t->units)))
		return parload__fail_nomem(in->err, in->path);
	memcpy(r->off, got, t->units * sizeof(*got));
	*out = r;
	return 0;
}

/* Run r, stepped until now, made to hold every page's strip offsets, for
 * room pages. */
static int unstep(tin *in, page *r, uint64_t room)
{
	uint64_t *all = slab_take(in->w, (size_t)(room * r->units));

	if (!all)
		return parload__fail_nomem(in->err, in->path);
	for (uint32_t i = 0; i < r->pages; i++)
		for (uint32_t u = 0; u < r->units; u++)
			all[(size_t)i * r->units + u] = parload__tiff_off(r, i, u);
	r->off = all;
	r->stepped = false;
	return 0;
}

/* A run: directories back to back, s bytes apart (tifffile's layout and
 * parload's own: every page's pixels, then all the directories after
 * them), each the same bytes as the one before it but for its strips'
 * offsets (held in the entry) and the next directory's offset, s on.
 * From *off (page *k), after the directory d at at (the page just added,
 * s = *off - at), each such directory becomes a page of one record with
 * one memcmp against d's bytes: the same entries say the same size,
 * type, strip rows and strip sizes, so only the offsets are new, and they
 * are checked as parload__tiff_fits checks them.  The run stops at the
 * first directory that is not such (a different entry, offsets past the
 * end, a next offset elsewhere or 0, past the end of the file): *off and
 * *k are then that directory, which add_page reads (and refuses, saying
 * why, as it would have).  So a run never takes a directory that add_page
 * would not, and its pages are those add_page would make; and it holds
 * nothing a page while the pages' strips lie a step apart (stepped), else
 * 8 bytes a page (a strip's offset), where add_page's records take 72. */
static int run(tin *in, const dir *d, uint64_t at, uint64_t *off,
	       uint32_t *k)
{
	walk *w = in->w;
	const uint64_t s = *off - at;
	const unsigned cs = in->big ? 8 : 2, es = in->big ? 20 : 12;
	const unsigned inl = in->big ? 8 : 4; /* a value field, a next field */
	const size_t len = cs + (size_t)d->n * es + inl;
	/* The fields that may differ: the offsets' value, then next. */
	const size_t value = cs + (size_t)d->pos[T_OFFSETS] * es + 4 + inl;
	const size_t next = len - inl;
	const page t = w->p[w->records - 1]; /* (a copy: w->p moves) */
	const unsigned ts = type_size(in, d->e[T_OFFSETS].type);
	const unsigned char *b;
	uint64_t o = *off, got[4]; /* (at most 4 SHORTs in 8 bytes) */
	uint64_t room = 0;         /* pages the run's offsets have room for */
	page *r = NULL;
	int rc = 0;

	/* Only directories that hold their strips' offsets in the entry:
	 * otherwise each points to its own array. */
	if (s < len || s > RUN_STRIDE || (uint64_t)t.units * ts > inl)
		return 0;
	if (!(b = view(in, at, len, &rc)))
		return rc < 0 ? rc : 0;
	memcpy(in->tmpl, b, len);
	for (;; o += s) {
		if (*k == UINT32_MAX || !(b = view(in, o, len, &rc)))
			break;
		if (!repeats(in, b, value, next, inl, o + s))
			break;
		for (uint32_t u = 0; u < t.units; u++)
			got[u] = num(in, b + value + (size_t)u * ts, ts);
		if (!strips_fit(in, &t, got))
			break;
		if (!r || r->pages == room) {
			/* Records of RUN_FIRST pages, then twice the last's,
			 * no more than the file holds from here (what a run
			 * leaves goes back). */
			room = PARLOAD__MIN(PARLOAD__MAX(RUN_FIRST, 2 * room),
					    PARLOAD__MIN((in->size - o) / s + 1,
							 RUN_PAGES));
			if ((rc = run_record(in, &t, o, s, *k, got, &r)))
				return rc;
		} else if (r->stepped && !stepped(r, got) &&
			   (rc = unstep(in, r, room))) {
			return rc;
		}
		if (!r->stepped)
			memcpy(r->off + (size_t)r->pages * t.units, got,
			       t.units * sizeof(*got));
		r->pages++;
		w->views++;
		++*k;
	}
	if (r && !r->stepped) /* (the newest of the slab) */
		w->slab->used -= (size_t)(room - r->pages) * t.units;
	*off = o;
	return rc < 0 ? rc : 0;
}

/* The file's only directory, d at off, just added as page 0: where its
 * ImageDescription is ImageJ's and declares a stack of images,
 * parload__tiff_imagej makes the page that stack.  A description of
 * another type or past the end, and whatever parload__tiff_imagej
 * refuses, fall back (libtiff's walk says the same, or reads what it
 * reads of the tag). */
static int imagej(tin *in, const dir *d, uint64_t off)
{
	const entry *x = &d->e[T_DESC];
	const unsigned inl = in->big ? 8 : 4;
	const size_t n = (size_t)PARLOAD__MIN(x->count, PARLOAD__TIFF_DESC_MAX);
	const unsigned char *b = x->value;
	const char *nul;
	int rc = 0;

	if (!d->seen[T_DESC])
		return 0;
	if (x->type != 2)
		return cannot(in, PARLOAD_ENOTSUP, 0, off, ": ImageDescription "
			      "of TIFF type %u", x->type);
	if (x->count > inl) {
		const uint64_t at = num(in, x->value, inl);

		if (at > in->size || x->count > in->size - at)
			return cannot(in, PARLOAD_ETRUNCATED, 0, off, ": its "
				      "ImageDescription lies past the end of "
				      "the file");
		if (!(b = view(in, at, n, &rc)))
			return rc < 0 ? rc : FALL_BACK;
	}
	/* (As libtiff keeps it: up to its first NUL.) */
	nul = memchr(b, 0, n);
	return parload__tiff_imagej(in->w, &in->w->p[in->w->records - 1],
				    (const char *)b,
				    nul ? (uint64_t)(nul - (const char *)b) :
					  x->count,
				    in->size, in->why) ?
		       FALL_BACK :
		       0;
}

/* Whether a directory at off is one of file f's pages already. */
static bool seen_before(const tin *in, uint64_t off)
{
	for (uint64_t r = in->w->records;
	     r > 0 && in->w->p[r - 1].file == in->f; r--) {
		const page *p = &in->w->p[r - 1];

		/* (An ImageJ stack's pages, step 0, are one directory.) */
		if (off >= p->ifd && (off - p->ifd) % (p->step ? p->step : 1) ==
					     0 &&
		    (off - p->ifd) / (p->step ? p->step : 1) <
			    (p->step ? p->pages : 1))
			return true;
	}
	return false;
}

/* Every page of the open file, along the chain, which must go forward
 * (and so ends): each directory read by add_page, then those after it
 * that repeat it by run. */
static int walk_chain(tin *in)
{
	uint64_t off = 0, next = 0;
	uint32_t k = 0;
	dir d;
	int rc = header(in, &off);

	if (!rc && off < 8)
		return cannot(in, PARLOAD_ECONTAINER, 0, off,
			      ": its directory's offset is %" PRIu64, off);
	while (!rc && off) {
		if ((rc = add_page(in, k, off, &d)))
			return rc;
		next = d.next;
		if (!next && k == 0 && (rc = imagej(in, &d, off)))
			return rc;
		if (next && next <= off)
			return cannot(in, seen_before(in, next) ?
					      PARLOAD_ECONTAINER :
					      PARLOAD_ENOTSUP,
				      k + 1, next, ": the chain of directories "
				      "goes back (to offset %" PRIu64 "%s)",
				      next, seen_before(in, next) ?
						    ", a loop" : "");
		if (k == UINT32_MAX)
			return cannot(in, PARLOAD_ECONTAINER, k, off,
				      ": too many pages");
		k++;
		if (next && (rc = run(in, &d, off, &next, &k)))
			return rc;
		off = next;
	}
	return rc;
}

int parload__tiff_walk_direct(walk *w, uint32_t f, parload_error *why,
			      parload_error *err)
{
	tin *in = parload__sys_malloc(sizeof(*in));
	struct stat sb;
	int rc;

	if (!in)
		return parload__fail_nomem(err, w->files->p[f]);
	memset(in, 0, offsetof(tin, block));
	in->w = w;
	in->f = f;
	in->path = w->files->p[f];
	in->why = why;
	in->err = err;
	in->fd = parload__sys_open(in->path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		rc = parload__fail_open(err, errno, in->path);
	} else if (parload__sys_fstat(in->fd, &sb) != 0) {
		rc = parload__fail_path(err, PARLOAD_EIO, errno, in->path,
					"fstat");
	} else if (!S_ISREG(sb.st_mode)) {
		rc = cannot(in, PARLOAD_ENOTSUP, 0, PARLOAD_NONE,
			    ": not a regular file");
	} else {
		in->size = (uint64_t)sb.st_size;
		rc = walk_chain(in);
	}
	if (in->fd >= 0)
		parload__sys_close(in->fd);
	parload__sys_free(in);
	return rc;
}
