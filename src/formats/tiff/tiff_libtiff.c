/*
 * tiff_libtiff.c - what of the TIFF reader needs libtiff (a build with
 * it only): the directory walk for the files tiff_walk.c's own walk does
 * not take (compressed, tiled, multi-sample or damaged pages: libtiff
 * reads them, or says what is wrong); the decoder that each worker opens
 * for itself for compressed or tiled pages (CODEC_CUSTOM, rows in the
 * host's byte order).  TIFF is written without libtiff (tiff_write.c).
 */
#include "formats/tiff/tiff.h"

#ifdef HAVE_TIFF
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>

typedef parload__tiff_page page;
typedef parload__tiff_pages walk;
typedef parload__tiff_arg targ;

/* ---------------------------------------------------------------------
 * libtiff's messages: per handle, into the parload message
 * ------------------------------------------------------------------- */

/* The first error libtiff reported on one handle since it was cleared,
 * and its last warning (a directory chain that loops is one). */
typedef struct tmsg {
	char text[256];
	char warn[256];
} tmsg;

#if TIFFLIB_VERSION >= 20221213 /* libtiff 4.5: handlers per handle */
static int on_error(TIFF *tif, void *user, const char *module,
		    const char *fmt, va_list ap)
{
	tmsg *m = user;

	(void)tif;
	(void)module;
	if (m && !m->text[0])
		vsnprintf(m->text, sizeof(m->text), fmt, ap);
	return 1; /* handled: not printed */
}

static int on_warning(TIFF *tif, void *user, const char *module,
		      const char *fmt, va_list ap)
{
	tmsg *m = user;

	(void)tif;
	(void)module;
	if (m)
		vsnprintf(m->warn, sizeof(m->warn), fmt, ap);
	return 1; /* kept, not printed */
}

static TIFF *topen(const char *path, const char *mode, tmsg *m)
{
	TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
	TIFF *tif;

	m->text[0] = m->warn[0] = '\0';
	if (!o)
		return NULL;
	TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, m);
	TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, m);
	tif = TIFFOpenExt(path, mode, o);
	TIFFOpenOptionsFree(o);
	return tif;
}
#else /* older libtiff: its messages go to its global handlers */
static TIFF *topen(const char *path, const char *mode, tmsg *m)
{
	m->text[0] = m->warn[0] = '\0';
	return TIFFOpen(path, mode);
}
#endif

static const char *said(const tmsg *m)
{
	return m->text[0] ? m->text : "libtiff gave no reason";
}

/* ---------------------------------------------------------------------
 * The walk: every page's metadata, before any pixel
 * ------------------------------------------------------------------- */

/* A copy of a strip or tile tag's array of n values. */
static int copy_tag(TIFF *tif, uint32_t tag, uint32_t n, uint64_t **out,
		    const char *path, uint64_t v, parload_error *err)
{
	uint64_t *a = NULL;

	if (!TIFFGetField(tif, tag, &a) || !a)
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu64 " has no "
				     "strip or tile offsets and sizes", v);
	if (!(*out = parload__sys_malloc((size_t)n * sizeof(**out) + 1)))
		return parload__fail_nomem(err, path);
	memcpy(*out, a, (size_t)n * sizeof(**out));
	return 0;
}

/* Page k of the file: its pixel type, and one sample per pixel. */
static int page_type(TIFF *tif, const char *path, uint64_t v, uint32_t k,
		     int *type, parload_error *err)
{
	uint16_t spp = 1, bits = 1, fmt = SAMPLEFORMAT_UINT;

	TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
	TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
	TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
	return parload__tiff_sample(path, v, k, spp, bits, fmt, type, err);
}

/* Tiles no larger than the page (rounded up to 16, the tiles' own
 * multiple) or 1024 pixels a side, whichever is more: a decoder holds a
 * whole tile, and a damaged tag would have it allocate gigabytes. */
static int tile_fits(TIFF *tif, uint32_t tw, uint32_t tl, uint32_t height,
		     const page *p, const char *path, uint64_t v,
		     parload_error *err)
{
	uint32_t width = 0;

	TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
	if (tw <= ((width + 15u) & ~15u) || tw <= 1024u) {
		if (tl <= ((height + 15u) & ~15u) || tl <= 1024u)
			return 0;
	}
	return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
			     PARLOAD_NONE, "page %" PRIu32 ": tiles of %" PRIu32
			     " x %" PRIu32 " for a page of %" PRIu32 " x %"
			     PRIu32, p->index, tw, tl, width, height);
}

/* The geometry of page p (its strips or tiles), copied from the tags. */
static int page_units(TIFF *tif, page *p, uint32_t height, const char *path,
		      uint64_t v, parload_error *err)
{
	uint32_t tw = 0, tl = 0, rps = 0;
	uint16_t comp = COMPRESSION_NONE;
	int rc;

	TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &comp);
	p->be = TIFFIsBigEndian(tif) != 0;
	if (TIFFIsTiled(tif)) {
		if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw) ||
		    !TIFFGetField(tif, TIFFTAG_TILELENGTH, &tl) || !tw || !tl)
			return parload__fail(err, PARLOAD_ECONTAINER, 0, path,
					     v, PARLOAD_NONE, "page %" PRIu32
					     ": tiles of no size", p->index);
		rc = tile_fits(tif, tw, tl, height, p, path, v, err);
		if (rc)
			return rc;
		p->unit = tl;
		p->plain = false;
		p->units = TIFFNumberOfTiles(tif);
		p->across = p->units / ((height + tl - 1) / tl);
		rc = copy_tag(tif, TIFFTAG_TILEOFFSETS, p->units, &p->off,
			      path, v, err);
		return rc ? rc : copy_tag(tif, TIFFTAG_TILEBYTECOUNTS,
					  p->units, &p->bytes, path, v, err);
	}
	TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps);
	p->unit = rps == 0 || rps > height ? height : rps;
	p->plain = comp == COMPRESSION_NONE;
	p->across = 1;
	p->units = TIFFNumberOfStrips(tif);
	rc = copy_tag(tif, TIFFTAG_STRIPOFFSETS, p->units, &p->off, path, v,
		      err);
	return rc ? rc : copy_tag(tif, TIFFTAG_STRIPBYTECOUNTS, p->units,
				  &p->bytes, path, v, err);
}

/* The current directory of tif: page k of file f, stream view
 * w->views. */
static int add_page(walk *w, TIFF *tif, uint32_t f, uint32_t k,
		    uint64_t size, parload_error *err)
{
	const char *path = w->files->p[f];
	const uint64_t v = w->views;
	uint32_t width = 0, height = 0;
	page *p;
	int type, rc;

	if ((rc = page_type(tif, path, v, k, &type, err)))
		return rc;
	if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) ||
	    !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height) || !width ||
	    !height)
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 " has no "
				     "width or height", k);
	if ((rc = parload__tiff_add(w, f, k, width, height, type, &p, err)))
		return rc;
	p->ifd = TIFFCurrentDirOffset(tif);
	rc = page_units(tif, p, height, path, v, err);
	if (!rc)
		rc = parload__tiff_fits(p, height,
					(uint64_t)width *
						parload_pixel_size(type),
					size, path, v, err);
	/* The file's only directory: ImageJ's stack in one, perhaps. */
	if (!rc && k == 0 && TIFFLastDirectory(tif)) {
		const char *desc = NULL;

		if (TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc)
			rc = parload__tiff_imagej(w, p, desc, strlen(desc),
						  size, err);
	}
	return rc;
}

/* Every page of file f, following its directory chain once. */
int parload__tiff_walk_libtiff(walk *w, uint32_t f, parload_error *err)
{
	const char *path = w->files->p[f];
	struct stat sb;
	tmsg m;
	TIFF *tif;
	uint32_t k = 0;
	int rc;

	if (parload__sys_stat(path, &sb) != 0)
		return parload__fail_open(err, errno, path);
	if (!(tif = topen(path, "rmc", &m)))
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, path,
					  "not a TIFF that libtiff opens: %s",
					  said(&m));
	do {
		rc = add_page(w, tif, f, k++, (uint64_t)sb.st_size, err);
		m.text[0] = m.warn[0] = '\0';
	} while (!rc && TIFFReadDirectory(tif));
	/* libtiff warns of a chain that loops, and stops there. */
	if (!rc && !m.text[0] && strstr(m.warn, "looping"))
		memcpy(m.text, m.warn, sizeof(m.text));
	if (!rc && m.text[0])
		rc = parload__fail(err, PARLOAD_ECONTAINER, 0, path, w->views,
				   PARLOAD_NONE, "page %" PRIu32 ": %s", k,
				   m.text);
	TIFFClose(tif);
	return rc;
}

/* ---------------------------------------------------------------------
 * The decoder: libtiff per worker, for compressed or tiled pages
 * ------------------------------------------------------------------- */

/* What the decoder needs of the container (its arg). */
typedef struct tstate {
	const targ *a;
	TIFF *tif;
	uint32_t file;
	uint64_t ifd;
	tmsg m;
	unsigned char *unit, *tile; /* a strip or a row of tiles; a tile */
	size_t unit_cap, tile_cap;
} tstate;

static void targ_free(void *arg)
{
	targ *a = arg;

	parload__sys_free(a->ifd);
	parload__sys_free(a);
}

static int tdec_open(const parload__strips *t, void **state,
		     parload_error *err)
{
	tstate *s = parload__sys_calloc(1, sizeof(*s));

	if (!s)
		return parload__fail_nomem(err, t->path);
	s->a = t->arg;
	s->file = UINT32_MAX;
	*state = s;
	return 0;
}

static void tdec_close(void *state)
{
	tstate *s = state;

	if (!s)
		return;
	if (s->tif)
		TIFFClose(s->tif);
	parload__sys_free(s->unit);
	parload__sys_free(s->tile);
	parload__sys_free(s);
}

/* A buffer of at least n bytes in *b. */
static int room(unsigned char **b, size_t *cap, size_t n, const char *path,
		parload_error *err)
{
	if (*cap >= n)
		return 0;
	parload__sys_free(*b);
	*cap = 0;
	if (!(*b = parload__sys_malloc(n)))
		return parload__fail_nomem(err, path);
	*cap = n;
	return 0;
}

/* The handle at strip s's page (stream view v). */
static int tdec_seek(tstate *s, const parload__strip *x, uint64_t v,
		     parload_error *err)
{
	const char *path = s->a->paths[x->file];

	if (s->file != x->file) {
		if (s->tif)
			TIFFClose(s->tif);
		s->file = UINT32_MAX;
		if (!(s->tif = topen(path, "rmc", &s->m)))
			return parload__fail(err, PARLOAD_EOPEN, 0, path, v,
					     PARLOAD_NONE, "libtiff: %s",
					     said(&s->m));
		s->file = x->file;
		s->ifd = TIFFCurrentDirOffset(s->tif);
	}
	if (s->ifd != s->a->ifd[v]) {
		s->m.text[0] = '\0';
		s->ifd = 0;
		if (!TIFFSetSubDirectory(s->tif, s->a->ifd[v]))
			return parload__fail(err, PARLOAD_ECONTAINER, 0, path,
					     v, s->a->ifd[v], "page %" PRIu32
					     ": %s", x->page, said(&s->m));
		s->ifd = s->a->ifd[v];
	}
	return 0;
}

/* Row of tiles ty of the current page into dst (its rows, full width). */
static tmsize_t read_tiles(tstate *s, uint32_t ty, uint32_t rows,
			   unsigned char *dst, parload_error *err,
			   const char *path)
{
	const targ *a = s->a;
	uint32_t tw = 0, tl = 0;
	const tmsize_t tsize = TIFFTileSize(s->tif);

	TIFFGetField(s->tif, TIFFTAG_TILEWIDTH, &tw);
	TIFFGetField(s->tif, TIFFTAG_TILELENGTH, &tl);
	if (tsize <= 0)
		return -1;
	if (room(&s->tile, &s->tile_cap, (size_t)tsize, path, err))
		return -2;
	for (uint32_t x = 0; x < a->width; x += tw) {
		const ttile_t k = TIFFComputeTile(s->tif, x, ty * tl, 0, 0);
		const size_t n = (size_t)(a->width - x < tw ? a->width - x : tw) *
				 a->bpp;

		if (TIFFReadEncodedTile(s->tif, k, s->tile, tsize) < 0)
			return -1;
		for (uint32_t r = 0; r < rows; r++)
			memcpy(dst + r * a->row_size + (size_t)x * a->bpp,
			       s->tile + (size_t)r * tw * a->bpp, n);
	}
	return (tmsize_t)(rows * a->row_size);
}

/* Strip (or row of tiles) u of the current page, its rows whole, into
 * dst; the bytes it decoded to, -1 where libtiff failed, -2 for no
 * memory (err set). */
static tmsize_t read_unit(tstate *s, uint32_t u, uint32_t unit,
			  unsigned char *dst, parload_error *err,
			  const char *path)
{
	const uint32_t y = u * unit;
	const uint32_t rows = s->a->height - y < unit ? s->a->height - y :
							unit;

	if (TIFFIsTiled(s->tif))
		return read_tiles(s, u, rows, dst, err, path);
	return TIFFReadEncodedStrip(s->tif, u, dst,
				    (tmsize_t)(rows * s->a->row_size));
}

static uint32_t page_unit(TIFF *tif, uint32_t height)
{
	uint32_t n = 0;

	if (TIFFIsTiled(tif))
		TIFFGetField(tif, TIFFTAG_TILELENGTH, &n);
	else
		TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &n);
	return n == 0 || n > height ? height : n;
}

/* Strip i of the table: rows [j * rows, (j + 1) * rows) of its view, from
 * the page's own strips or tiles (of the same rows, or not). */
static int tdec_decode(void *state, const parload__strips *t, uint64_t i,
		       unsigned char *out, size_t out_len, parload_error *err)
{
	tstate *s = state;
	const targ *a = s->a;
	const uint64_t v = i / t->per_view;
	const parload__strip strip = parload__strip_of(t, i, NULL);
	const parload__strip *x = &strip;
	const char *path = a->paths[x->file];
	const uint32_t y0 = (uint32_t)(i % t->per_view) * t->rows;
	const uint32_t y1 = a->height - y0 < t->rows ? a->height : y0 + t->rows;
	uint32_t unit;
	int rc = tdec_seek(s, x, v, err);

	if (rc)
		return rc;
	unit = page_unit(s->tif, a->height);
	for (uint32_t y = y0; y < y1;) {
		const uint32_t u = y / unit, top = u * unit;
		const uint32_t n = a->height - top < unit ? a->height - top :
							    unit;
		const uint32_t end = top + n < y1 ? top + n : y1;
		/* The unit's rows all fall in out: decode it there. */
		const bool direct = top == y && top + n - y0 <= t->rows &&
				    (uint64_t)(top + n - y0) * a->row_size <=
					    out_len;
		unsigned char *dst = out + (size_t)(y - y0) * a->row_size;
		tmsize_t got;

		s->m.text[0] = '\0';
		if (!direct && room(&s->unit, &s->unit_cap,
				    (size_t)unit * a->row_size, path, err))
			return PARLOAD_ENOMEM;
		got = read_unit(s, u, unit, direct ? dst : s->unit, err, path);
		if (got == -2)
			return PARLOAD_ENOMEM;
		if (got < (tmsize_t)((uint64_t)n * a->row_size))
			return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
					     x->off, "page %" PRIu32 ": strip "
					     "or tile row %" PRIu32 " does not "
					     "decode: %s", x->page, u,
					     said(&s->m));
		if (!direct)
			memcpy(dst, s->unit + (size_t)(y - top) * a->row_size,
			       (size_t)(end - y) * a->row_size);
		y = end;
	}
	return 0;
}

const parload__decoder parload__tiff_decoder = {
	.name = "libtiff",
	.open = tdec_open,
	.decode = tdec_decode,
	.close = tdec_close,
	.free_arg = targ_free,
};

/* This file's walk and decoder, as a module (module.c). */
PARLOAD__MODULE_EXPORT const parload__module parload__tiff_module = {
	.abi = PARLOAD__MODULE_ABI,
	.tiff_walk = parload__tiff_walk_libtiff,
	.tiff_decoder = &parload__tiff_decoder,
};
#endif /* HAVE_TIFF */
