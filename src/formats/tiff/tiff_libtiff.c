/*
 * tiff_libtiff.c - what of the TIFF reader needs libtiff (a build with
 * it only), the TIFF module: libtiff's answers for the files tiff_walk.c's
 * own walk does not take (compressed, tiled, multi-sample or damaged
 * pages), raw facts of each directory, which tiff.c's walk gives their
 * meaning (tiff.h: parload__tiff_lib); the decoder that each worker opens
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

/* An open file: libtiff's handle and its messages. */
typedef struct thandle {
	TIFF *tif;
	tmsg m;
} thandle;

static int lib_open(const char *path, void **h, parload_error *err)
{
	thandle *t = parload__sys_calloc(1, sizeof(*t));

	*h = NULL;
	if (!t)
		return parload__fail_nomem(err, path);
	if (!(t->tif = topen(path, "rmc", &t->m))) {
		const int rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0,
						  path, "not a TIFF that libtiff "
						  "opens: %s", said(&t->m));

		parload__sys_free(t);
		return rc;
	}
	*h = t;
	return 0;
}

/* The current directory's tags, as libtiff gives them (its defaults
 * where a tag is absent; 0 for an absent size). */
static void lib_dir(void *h, parload__tiff_dir *d)
{
	TIFF *tif = ((thandle *)h)->tif;
	uint16_t spp = 1, bits = 1, fmt = SAMPLEFORMAT_UINT;
	uint16_t comp = COMPRESSION_NONE;

	memset(d, 0, sizeof(*d));
	TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
	TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
	TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
	TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &comp);
	d->spp = spp, d->bits = bits, d->fmt = fmt, d->comp = comp;
	if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &d->width))
		d->width = 0;
	if (!TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &d->height))
		d->height = 0;
	d->ifd = TIFFCurrentDirOffset(tif);
	d->be = TIFFIsBigEndian(tif) != 0;
	d->tiled = TIFFIsTiled(tif) != 0;
	if (d->tiled && (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &d->tile_w) ||
			 !TIFFGetField(tif, TIFFTAG_TILELENGTH, &d->tile_l)))
		d->tile_w = d->tile_l = 0;
	if (!d->tiled)
		TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP,
				      &d->rows_per_strip);
	d->units = d->tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
	d->last = TIFFLastDirectory(tif) != 0;
	if (!TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &d->desc))
		d->desc = NULL;
}

/* A copy of the current directory's strip or tile offsets (which 0) or
 * byte counts (1), n of them (page v for the error). */
static int lib_array(void *h, int which, uint32_t n, uint64_t **out,
		     const char *path, uint64_t v, parload_error *err)
{
	TIFF *tif = ((thandle *)h)->tif;
	const bool tiled = TIFFIsTiled(tif) != 0;
	const uint32_t tag = tiled ? (which ? TIFFTAG_TILEBYTECOUNTS :
					      TIFFTAG_TILEOFFSETS) :
				     (which ? TIFFTAG_STRIPBYTECOUNTS :
					      TIFFTAG_STRIPOFFSETS);

	return copy_tag(tif, tag, n, out, path, v, err);
}

/* The next directory: 1; 0 at the chain's end; the error libtiff
 * reported since the last directory (a chain that loops among them),
 * naming page k, stream view v. */
static int lib_next(void *h, uint32_t k, uint64_t v, const char *path,
		    parload_error *err)
{
	thandle *t = h;

	t->m.text[0] = t->m.warn[0] = '\0';
	if (TIFFReadDirectory(t->tif))
		return 1;
	/* libtiff warns of a chain that loops, and stops there. */
	if (!t->m.text[0] && strstr(t->m.warn, "looping"))
		memcpy(t->m.text, t->m.warn, sizeof(t->m.text));
	if (t->m.text[0])
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 ": %s", k,
				     t->m.text);
	return 0;
}

static void lib_close(void *h)
{
	thandle *t = h;

	if (!t)
		return;
	TIFFClose(t->tif);
	parload__sys_free(t);
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

/* This file's answers and decoder, as a module (module.c). */
PARLOAD__MODULE_EXPORT const parload__module parload__tiff_module = {
	.abi = PARLOAD__MODULE_ABI,
	.tiff = { .open = lib_open, .dir = lib_dir, .array = lib_array,
		  .next = lib_next, .close = lib_close },
	.tiff_decoder = &parload__tiff_decoder,
};
#endif /* HAVE_TIFF */
