/*
 * tiff_pages.c - the records of a TIFF walk (tiff.h): each page's size,
 * type and strips, as either walk (tiff_walk.c's own, or libtiff's
 * answers in tiff.c) reads them, the checks every page passes (a type
 * parload has, strips inside the file), and their memory.  Below both
 * walks and ImageJ's stack (tiff_imagej.c); it calls none of them.
 */
#include "formats/tiff/tiff.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef parload__tiff_page page;
typedef parload__tiff_pages walk;

/* The slab's blocks, where the pooled records' offsets and sizes lie. */
static void slab_free(walk *w)
{
	while (w->slab) {
		parload__tiff_slab *next = w->slab->next;

		parload__sys_free(w->slab);
		w->slab = next;
	}
}

void parload__tiff_walk_free(walk *w)
{
	for (uint64_t i = 0; i < w->records; i++) {
		if (w->p[i].pooled)
			continue;
		parload__sys_free(w->p[i].off);
		parload__sys_free(w->p[i].bytes);
	}
	parload__sys_free(w->p);
	slab_free(w);
}

int parload__tiff_type(unsigned bits, unsigned fmt)
{
	if (fmt == PARLOAD__TIFF_UINT)
		return bits == 8  ? PARLOAD_PIXEL_U8 :
		       bits == 16 ? PARLOAD_PIXEL_U16 :
		       bits == 32 ? PARLOAD_PIXEL_U32 :
				    0;
	if (fmt == PARLOAD__TIFF_INT)
		return bits == 16 ? PARLOAD_PIXEL_I16 :
		       bits == 32 ? PARLOAD_PIXEL_I32 :
				    0;
	if (fmt == PARLOAD__TIFF_FLOAT)
		return bits == 32 ? PARLOAD_PIXEL_F32 :
		       bits == 64 ? PARLOAD_PIXEL_F64 :
				    0;
	return 0;
}

const char *parload__tiff_format_name(unsigned fmt)
{
	return fmt == PARLOAD__TIFF_UINT	  ? "unsigned" :
	       fmt == PARLOAD__TIFF_INT	  ? "signed" :
	       fmt == PARLOAD__TIFF_FLOAT ? "floating-point" :
					    "other-format";
}

int parload__tiff_sample(const char *path, uint64_t v, uint32_t k,
			unsigned spp, unsigned bits, unsigned fmt, int *type,
			parload_error *err)
{
	if (spp != 1)
		return parload__fail(err, PARLOAD_ENOTSUP, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 ": RGB or "
				     "multi-sample TIFF (%u samples per "
				     "pixel)", k, spp);
	*type = parload__tiff_type(bits, fmt);
	if (!*type)
		return parload__fail(err, PARLOAD_ENOTSUP, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 ": %u-bit "
				     "%s samples (SampleFormat %u) are not "
				     "read: u8 u16 i16 u32 i32 f32 f64 are",
				     k, bits, parload__tiff_format_name(fmt),
				     fmt);
	return 0;
}

uint64_t parload__tiff_unit_rows(uint64_t height, uint64_t unit, uint64_t k)
{
	const uint64_t y = k * unit;

	return height - y < unit ? height - y : unit;
}

int parload__tiff_fits(const page *p, uint32_t height, uint64_t row_size,
		       uint64_t size, const char *path, uint64_t v,
		       parload_error *err)
{
	/* (In 64 bits: a height and rows of 2^31 would wrap in 32.) */
	const uint64_t makes = (uint64_t)p->across *
			       (((uint64_t)height + p->unit - 1) / p->unit);

	if (p->units != makes)
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 " has %"
				     PRIu32 " strips or tiles, not the %"
				     PRIu64 " its size makes", p->index,
				     p->units, makes);
	for (uint32_t u = 0; u < p->units; u++) {
		const uint64_t rows = parload__tiff_unit_rows(height, p->unit,
							      u / p->across);
		const uint64_t need = p->plain ? rows * row_size : p->bytes[u];

		if (p->plain && p->bytes[u] < need)
			return parload__fail(err, PARLOAD_ECONTAINER, 0, path,
					     v, p->off[u], "page %" PRIu32
					     ": strip %" PRIu32 " holds %"
					     PRIu64 " bytes, not the %" PRIu64
					     " of its %" PRIu64 " rows",
					     p->index, u, p->bytes[u], need,
					     rows);
		if (p->off[u] > size || need > size - p->off[u])
			return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
					     v, p->off[u], "page %" PRIu32
					     ": strip or tile %" PRIu32 " (%"
					     PRIu64 " bytes) ends past the end "
					     "of the file (%" PRIu64 " bytes)",
					     p->index, u, need, size);
	}
	return 0;
}

int parload__tiff_reserve(walk *w, uint64_t n, uint32_t f,
			  parload_error *err)
{
	/* Twice the room, or what was asked (a run of directories asks for
	 * its pages at once): few copies, and few fresh pages to fault in. */
	const uint64_t cap = PARLOAD__MAX(n, w->cap ? w->cap * 2 : 64);
	page *p;

	if (n <= w->cap)
		return 0;
	if (cap > SIZE_MAX / sizeof(*p) ||
	    !(p = parload__sys_malloc((size_t)cap * sizeof(*p))))
		return parload__fail_nomem(err, w->files->p[f]);
	if (w->records)
		memcpy(p, w->p, w->records * sizeof(*p));
	parload__sys_free(w->p);
	w->p = p;
	w->cap = cap;
	return 0;
}

/* The current directory of tif: page k of file f, stream view
 * w->views. */
int parload__tiff_add(walk *w, uint32_t f, uint32_t k, uint32_t width,
		      uint32_t height, int type, page **out, parload_error *err)
{
	const char *path = w->files->p[f];
	const uint64_t v = w->views;
	int rc = parload__tiff_reserve(w, w->records + 1, f, err);

	if (rc)
		return rc;
	if (v == 0) {
		w->width = width;
		w->height = height;
		w->type = type;
	} else if (width != w->width || height != w->height ||
		   type != w->type) {
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 " is %"
				     PRIu32 " x %" PRIu32 " %s, page 0%s%s "
				     "is %" PRIu32 " x %" PRIu32 " %s", k,
				     width, height, parload_pixel_name(type),
				     f ? " of " : "", f ? w->files->p[0] : "",
				     w->width, w->height,
				     parload_pixel_name(w->type));
	}
	*out = &w->p[w->records++];
	memset(*out, 0, sizeof(**out));
	(*out)->view = w->views++;
	(*out)->pages = 1;
	(*out)->file = f;
	(*out)->index = k;
	return 0;
}
