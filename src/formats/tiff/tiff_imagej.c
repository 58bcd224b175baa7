/*
 * tiff_imagej.c - ImageJ's stack in one directory: the images its
 * description declares (images=N, as ImageJ writes a stack past 4 GiB and
 * tifffile with imagej=True, truncate=True), back to back from the first.
 * Both walks (tiff_walk.c's, and tiff_libtiff.c's through the module's
 * host table) call it for a file's only directory; it calls nothing of
 * theirs.
 */
#include "formats/tiff/tiff.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

typedef parload__tiff_page page;
typedef parload__tiff_pages walk;


/* The counts of ImageJ's description, as tifffile reads them. */
enum { IJ_IMAGES, IJ_CHANNELS, IJ_SLICES, IJ_FRAMES, IJ_KEYS };
static const char *const ij_keys[IJ_KEYS] = { "images", "channels",
					      "slices", "frames" };

/* s[0..*n) without white space at either end. */
static const char *trimmed(const char *s, size_t *n)
{
	while (*n && isspace((unsigned char)*s)) {
		s++;
		--*n;
	}
	while (*n && isspace((unsigned char)s[*n - 1]))
		--*n;
	return s;
}

/* A line break of Python's str.splitlines (tifffile's), in ASCII. */
static bool line_break(char c)
{
	return c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
	       (c >= 0x1c && c <= 0x1e);
}

/* The counts the n bytes of desc declare (tifffile's reading: lines of
 * one "key=value", white space trimmed, the last of a key kept) into
 * v[] (0 where absent): ECONTAINER naming page p where one is not a
 * count of 1 to UINT32_MAX. */
static int ij_counts(const walk *w, const page *p, const char *desc,
		     size_t n, uint64_t v[IJ_KEYS], parload_error *err)
{
	memset(v, 0, IJ_KEYS * sizeof(*v));
	for (size_t at = 0, end; at < n; at = end + 1) {
		const char *line = desc + at, *eq, *key, *val;
		size_t len, kn, vn;

		for (end = at; end < n && !line_break(desc[end]); end++)
			;
		len = end - at;
		eq = memchr(line, '=', len);
		if (!eq || memchr(eq + 1, '=', len - (size_t)(eq - line) - 1))
			continue;
		kn = (size_t)(eq - line);
		vn = len - kn - 1;
		key = trimmed(line, &kn);
		val = trimmed(eq + 1, &vn);
		for (int k = 0; k < IJ_KEYS; k++) {
			uint64_t x = 0;
			size_t i = 0;

			if (strlen(ij_keys[k]) != kn ||
			    memcmp(key, ij_keys[k], kn) != 0)
				continue;
			for (; i < vn && i < 11 && isdigit((unsigned char)val[i]);
			     i++)
				x = x * 10 + (uint64_t)(val[i] - '0');
			if (i == 0 || i != vn || x == 0 || x > UINT32_MAX)
				return parload__fail(
					err, PARLOAD_ECONTAINER, 0,
					w->files->p[p->file], p->view,
					PARLOAD_NONE, "page %" PRIu32 ": its "
					"ImageJ description says %s=%.*s, not "
					"a count of 1 to %" PRIu32, p->index,
					ij_keys[k], (int)PARLOAD__MIN(vn, 40),
					val, UINT32_MAX);
			v[k] = x;
		}
	}
	return 0;
}

/* The images ImageJ's counts v declare, into *n: images=, and channels x
 * slices x frames (tifffile's count, one sample a pixel) where given,
 * both where both are; ECONTAINER naming page p where they disagree or
 * pass 2^32 - 1. */
static int ij_images(const walk *w, const page *p, const uint64_t *v,
		     uint64_t *n, parload_error *err)
{
	const char *path = w->files->p[p->file];
	uint64_t product = 1;

	for (int k = IJ_CHANNELS; k < IJ_KEYS; k++)
		if (v[k] && (product *= v[k]) > UINT32_MAX)
			break;
	*n = v[IJ_IMAGES] ? v[IJ_IMAGES] : product;
	if (*n != product && (v[IJ_CHANNELS] || v[IJ_SLICES] || v[IJ_FRAMES]))
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, p->view,
				     PARLOAD_NONE, "page %" PRIu32 ": its "
				     "ImageJ description says images=%" PRIu64
				     ", channels x slices x frames %s%" PRIu64,
				     p->index, *n,
				     product > UINT32_MAX ? "more than " : "",
				     PARLOAD__MIN(product, UINT32_MAX));
	if (*n > UINT32_MAX)
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, p->view,
				     PARLOAD_NONE, "page %" PRIu32 ": its "
				     "ImageJ description declares more than %"
				     PRIu32 " images", p->index, UINT32_MAX);
	return 0;
}

/* The n images after page p's first lie past its strips, back to back:
 * only uncompressed strips, themselves back to back (rows of row_size
 * bytes); ENOTSUP naming page p otherwise. */
static int ij_layout(const walk *w, const page *p, uint64_t n,
		     uint64_t row_size, parload_error *err)
{
	const char *path = w->files->p[p->file];

	if (!p->plain || p->across != 1)
		return parload__fail(err, PARLOAD_ENOTSUP, 0, path, p->view,
				     PARLOAD_NONE, "page %" PRIu32 " holds "
				     "ImageJ's stack of %" PRIu64 " images in "
				     "one directory, %s: its images after the "
				     "first are read only from uncompressed "
				     "strips", p->index, n,
				     p->plain ? "tiled" : "compressed");
	for (uint32_t u = 0; p->units > 1 && u < p->units; u++) {
		const uint64_t need =
			parload__tiff_unit_rows(w->height, p->unit, u) *
			row_size;

		if (p->bytes[u] != need ||
		    (u + 1 < p->units && p->off[u + 1] != p->off[u] + need))
			return parload__fail(err, PARLOAD_ENOTSUP, 0, path,
					     p->view, p->off[u], "page %"
					     PRIu32 " holds ImageJ's stack of %"
					     PRIu64 " images in one directory, "
					     "its strips not back to back "
					     "(strip %" PRIu32 "): the images "
					     "after the first are not where "
					     "they lie", p->index, n, u);
	}
	return 0;
}

int parload__tiff_imagej(walk *w, page *p, const char *desc, uint64_t len,
			 uint64_t size, parload_error *err)
{
	const char *path = w->files->p[p->file];
	const uint64_t row_size = (uint64_t)w->width *
				  parload_pixel_size(w->type);
	const uint64_t frame = row_size * w->height;
	uint64_t v[IJ_KEYS], n, fit;
	int rc;

	if (len < 7 || (memcmp(desc, "ImageJ=", 7) != 0 &&
			memcmp(desc, "SCIFIO=", 7) != 0))
		return 0;
	if (len > PARLOAD__TIFF_DESC_MAX)
		return parload__fail(err, PARLOAD_ENOTSUP, 0, path, p->view,
				     PARLOAD_NONE, "page %" PRIu32 ": an "
				     "ImageJ description of more than %zu "
				     "bytes is not read (the images it "
				     "declares are not known)", p->index,
				     PARLOAD__TIFF_DESC_MAX);
	if ((rc = ij_counts(w, p, desc, (size_t)len, v, err)) ||
	    (rc = ij_images(w, p, v, &n, err)))
		return rc;
	if (n <= 1)
		return 0;
	if ((rc = ij_layout(w, p, n, row_size, err)))
		return rc;
	/* (parload__tiff_fits held the first image inside the file.) */
	fit = (size - p->off[0]) / frame;
	if (fit < n)
		return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
				     p->view + fit, p->off[0] + fit * frame,
				     "page %" PRIu32 ": image %" PRIu64 " of "
				     "ImageJ's stack of %" PRIu64 " (%" PRIu64
				     " bytes each, back to back from offset %"
				     PRIu64 ") ends past the end of the file "
				     "(%" PRIu64 " bytes)", p->index, fit, n,
				     frame, p->off[0], size);
	p->pages = (uint32_t)n;
	p->step = 0;
	p->stepped = true;
	p->ostep = frame;
	w->views += n - 1;
	return 0;
}
