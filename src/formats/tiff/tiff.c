/*
 * tiff.c - TIFF sources: the reader's core, which needs no libtiff.
 *
 * The reader walks the pages of a source (one file, a list, a folder or a
 * glob of files, all one stream) once, on the caller's thread, for their
 * metadata only, and makes the strips table: uncompressed striped pages
 * are read in place (CODEC_NONE, the file's byte order), anything else
 * (compressed, tiled, pages of differing strips or byte orders) through
 * libtiff's decoder (tiff_libtiff.c, CODEC_CUSTOM).  Each file is walked
 * by tiff_walk.c's own walk, with pread, unless it cannot take that file:
 * then libtiff's walk (tiff_libtiff.c) reads that file alone, or, in a
 * build without libtiff, the reader says why the page needs it.
 * PARLOAD_TIFF picks one walk for every file (backend.h).  The pages'
 * records, which both walks fill, are tiff_pages.c's.
 */
#include "formats/tiff/tiff.h"
#include "formats/backend.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

typedef parload__tiff_files flist;
typedef parload__tiff_page page;
typedef parload__tiff_pages walk;

/* ---------------------------------------------------------------------
 * The files of a source
 * ------------------------------------------------------------------- */

static void flist_free(flist *l)
{
	for (size_t i = 0; i < l->n; i++)
		parload__sys_free(l->p[i]);
	parload__sys_free(l->p);
	memset(l, 0, sizeof(*l));
}

/* Append dir/name (dir NULL: name). */
static int flist_add(flist *l, const char *dir, const char *name,
		     parload_error *err)
{
	const size_t dn = dir ? strlen(dir) : 0, nn = strlen(name);
	char *s;

	if (l->n == l->cap) {
		const size_t cap = l->cap ? l->cap * 2 : 16;
		char **p = parload__sys_malloc(cap * sizeof(*p));

		if (!p)
			return parload__fail_nomem(err, dir ? dir : name);
		if (l->n)
			memcpy(p, l->p, l->n * sizeof(*p));
		parload__sys_free(l->p);
		l->p = p;
		l->cap = cap;
	}
	if (!(s = parload__sys_malloc(dn + nn + 2)))
		return parload__fail_nomem(err, dir ? dir : name);
	if (dir)
		sprintf(s, "%s/%s", dir, name);
	else
		memcpy(s, name, nn + 1);
	l->p[l->n++] = s;
	return 0;
}

/* Names in order, digit runs compared as numbers: proj_2 before proj_10. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			size_t la = 0, lb = 0;
			int c;

			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			while (isdigit((unsigned char)a[la]))
				la++;
			while (isdigit((unsigned char)b[lb]))
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			if ((c = memcmp(a, b, la)) != 0)
				return c;
			a += la;
			b += lb;
		} else if (*a != *b) {
			break;
		} else {
			a++;
			b++;
		}
	}
	return (int)(unsigned char)*a - (int)(unsigned char)*b;
}

static int natural_qcmp(const void *a, const void *b)
{
	const int c = natural_cmp(*(char *const *)a, *(char *const *)b);

	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.tif and *.tiff in dir. */
static int list_folder(const char *dir, flist *l, parload_error *err)
{
	static const char *const exts[] = { PARLOAD__TIFF_EXTS, NULL };
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return parload__fail_open(err, errno, dir);
	while (!rc && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && parload__name_ends(e->d_name, exts))
			rc = flist_add(l, dir, e->d_name, err);
	closedir(d);
	return rc;
}

static int list_glob(const char *pattern, flist *l, parload_error *err)
{
	glob_t g;
	int rc = 0;

	if (glob(pattern, 0, NULL, &g) != 0)
		return 0; /* no match: the caller's "no TIFF files" */
	for (size_t i = 0; !rc && i < g.gl_pathc; i++)
		rc = flist_add(l, NULL, g.gl_pathv[i], err);
	globfree(&g);
	return rc;
}

/* The source's files in stream order. */
static int list_files(const parload_source *src, flist *l, parload_error *err)
{
	struct stat sb;
	int rc;

	if (src->path_count) {
		for (size_t i = 0; i < src->path_count; i++)
			if ((rc = flist_add(l, NULL, src->paths[i], err)))
				return rc;
		return 0;
	}
	if (parload__sys_stat(src->path, &sb) != 0)
		rc = list_glob(src->path, l, err);
	else if (S_ISDIR(sb.st_mode))
		rc = list_folder(src->path, l, err);
	else
		return flist_add(l, NULL, src->path, err);
	if (!rc && l->n == 0)
		rc = parload__fail_path(err, PARLOAD_EINVAL, 0, src->path,
					"no TIFF files in %s", src->path);
	if (!rc)
		qsort(l->p, l->n, sizeof(*l->p), natural_qcmp);
	return rc;
}

/* ---------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------- */

/* Whether every page is read in place: uncompressed strips, all of page
 * 0's rows and byte order. */
static bool all_plain(const walk *w)
{
	for (uint64_t r = 0; r < w->records; r++)
		if (!w->p[r].plain || w->p[r].unit != w->p[0].unit ||
		    w->p[r].be != w->p[0].be)
			return false;
	return true;
}

/* libtiff's decoder (TIFF's module) for c's table, with each page's
 * directory. */
static int attach_decoder(const walk *w, const char *name,
			  parload__container *c, parload_error *err)
{
	const parload__module *m =
		parload__module_get(PARLOAD_FORMAT_TIFF, name, err);
	parload__tiff_arg *a;

	if (!m)
		return PARLOAD_ENOTSUP;
	/* ImageJ's images after the first have no directory to decode.
	 * (The files are c's now.) */
	for (uint64_t r = 0; r < w->records; r++)
		if (w->p[r].pages > 1 && w->p[r].step == 0)
			return parload__fail(err, PARLOAD_ENOTSUP, 0,
					     c->paths[w->p[r].file],
					     w->p[r].view, PARLOAD_NONE,
					     "page %" PRIu32 " holds ImageJ's "
					     "stack of %" PRIu32 " images in "
					     "one directory, read in place "
					     "only: not with pages that need "
					     "libtiff's decoder", w->p[r].index,
					     w->p[r].pages);
	a = parload__sys_calloc(1, sizeof(*a));
	if (!a ||
	    !(a->ifd = parload__sys_malloc(w->views * sizeof(*a->ifd)))) {
		parload__sys_free(a);
		return parload__fail_nomem(err, name);
	}
	for (uint64_t r = 0; r < w->records; r++)
		for (uint32_t i = 0; i < w->p[r].pages; i++)
			a->ifd[w->p[r].view + i] = w->p[r].ifd +
						   i * w->p[r].step;
	a->paths = c->paths;
	a->width = w->width;
	a->height = w->height;
	a->bpp = parload_pixel_size(w->type);
	a->row_size = (uint64_t)a->width * a->bpp;
	c->strips.decoder = m->tiff_decoder;
	c->strips.arg = a;
	return 0;
}

/* What parload__strips_add's rc says: out of memory, or a walk's pages
 * not in order. */
static int add_failed(int rc, const char *name, parload_error *err)
{
	return rc < 0 ? parload__fail_nomem(err, name) :
			parload__fail_path(err, PARLOAD_ECONTAINER, 0, name,
					   "its pages are out of order");
}

/* Record p, a run of pages of one strip each, at one step, into t at
 * once: parload__strips_add_stepped's rc. */
static int add_run(parload__strips *t, const page *p)
{
	const parload__strip s = { .off = p->off[0],
				   .bytes = p->bytes[0],
				   .file = p->file,
				   .page = p->index };

	return parload__strips_add_stepped(t, p->view * t->per_view, p->pages,
					   &s, p->ostep);
}

/* The strip (or first tile of the row) of page p that holds strip j of a
 * view in t's strips of rows rows.  (Plain pages all have strips of
 * rows: no division for each of 20,000 small pages.) */
static uint32_t unit_of(const page *p, uint32_t j, uint32_t rows, bool plain)
{
	return plain ? j : (uint32_t)((uint64_t)j * rows / p->unit) * p->across;
}

/* Each strip of record p's pages into t, page by page: the first
 * parload__strips_add rc that is not 0, else 0. */
static int add_pages(parload__strips *t, const page *p, bool plain)
{
	uint64_t x = p->view * t->per_view;

	for (uint32_t i = 0; i < p->pages; i++) {
		for (uint32_t j = 0; j < t->per_view; j++, x++) {
			const uint32_t u = unit_of(p, j, t->rows, plain);
			const parload__strip s = {
				.off = parload__tiff_off(p, i, u),
				.bytes = p->bytes[u],
				.file = p->file, .page = p->index + i
			};
			const int rc = parload__strips_add(t, x, &s);

			if (rc)
				return rc;
		}
	}
	return 0;
}

static int make_table(const walk *w, const char *name, parload__container *c,
		      parload_error *err)
{
	parload__strips *t = &c->strips;
	const bool plain = all_plain(w);

	t->rows = w->p[0].unit;
	t->per_view = parload__strips_per_view(w->height, t->rows);
	t->views = w->views;
	t->path = name;
	for (uint64_t r = 0; r < w->records; r++) {
		const page *p = &w->p[r];
		/* A run of pages of one strip each, at one step: at once. */
		const int rc = p->stepped && t->per_view == 1 && plain ?
				       add_run(t, p) :
				       add_pages(t, p, plain);

		if (rc)
			return add_failed(rc, name, err);
	}
	c->desc.encoding = (plain ? w->p[0].be : parload__host_be()) ?
				   PARLOAD_ENC_BE :
				   PARLOAD_ENC_LE;
	return plain ? 0 : attach_decoder(w, name, c, err);
}

static void fill_desc(const walk *w, parload_desc *d)
{
	parload_desc_init(d);
	d->format = PARLOAD_FORMAT_TIFF;
	d->width = w->width;
	d->height = w->height;
	d->pixel_type = w->type;
	d->count = w->views;
	d->bytes_per_pixel = parload_pixel_size(w->type);
	d->row_size = (uint64_t)w->width * d->bytes_per_pixel;
	d->payload_size = d->row_size * w->height;
}

/* Why pages p (a record, its first page) and page 0 cannot be one table
 * without libtiff's decoder: strips of other rows, or another byte
 * order. */
static int mixed(const walk *w, const page *p, parload_error *why)
{
	const page *p0 = &w->p[0];

	return parload__fail(why, PARLOAD_ENOTSUP, 0, w->files->p[p->file],
			     p->view, PARLOAD_NONE,
			     "page %" PRIu32 " has strips of %" PRIu32
			     " rows, %s-endian, page 0 of %s of %" PRIu32
			     " rows, %s-endian%s", p->index, p->unit,
			     p->be ? "big" : "little", w->files->p[0],
			     p0->unit, p0->be ? "big" : "little",
			     PARLOAD__TIFF_NEEDS);
}

/* ---------------------------------------------------------------------
 * libtiff's walk: its answers (the TIFF module) given their meaning
 * ------------------------------------------------------------------- */

/* Tiles no larger than the page (rounded up to 16, the tiles' own
 * multiple) or 1024 pixels a side, whichever is more: a decoder holds a
 * whole tile, and a damaged tag would have it allocate gigabytes. */
static int tile_fits(const parload__tiff_dir *d, const page *p,
		     const char *path, uint64_t v, parload_error *err)
{
	if ((d->tile_w <= ((d->width + 15u) & ~15u) || d->tile_w <= 1024u) &&
	    (d->tile_l <= ((d->height + 15u) & ~15u) || d->tile_l <= 1024u))
		return 0;
	return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
			     PARLOAD_NONE, "page %" PRIu32 ": tiles of %" PRIu32
			     " x %" PRIu32 " for a page of %" PRIu32 " x %"
			     PRIu32, p->index, d->tile_w, d->tile_l, d->width,
			     d->height);
}

/* The geometry of page p (its strips or tiles), from directory d, its
 * arrays copied from the module's handle h. */
static int lib_units(const struct parload__tiff_lib *m, void *h,
		     const parload__tiff_dir *d, page *p, const char *path,
		     uint64_t v, parload_error *err)
{
	int rc;

	p->be = d->be;
	if (d->tiled) {
		if (!d->tile_w || !d->tile_l)
			return parload__fail(err, PARLOAD_ECONTAINER, 0, path,
					     v, PARLOAD_NONE, "page %" PRIu32
					     ": tiles of no size", p->index);
		if ((rc = tile_fits(d, p, path, v, err)))
			return rc;
		p->unit = d->tile_l;
		p->plain = false;
		p->units = d->units;
		p->across = p->units / ((d->height + d->tile_l - 1) /
					d->tile_l);
	} else {
		p->unit = d->rows_per_strip == 0 ||
					  d->rows_per_strip > d->height ?
				  d->height :
				  d->rows_per_strip;
		p->plain = d->comp == 1; /* COMPRESSION_NONE */
		p->across = 1;
		p->units = d->units;
	}
	rc = m->array(h, 0, p->units, &p->off, path, v, err);
	return rc ? rc : m->array(h, 1, p->units, &p->bytes, path, v, err);
}

/* The current directory of libtiff's handle h: page k of file f, stream
 * view w->views, checked as tiff_walk.c checks its own. */
static int lib_page(walk *w, const struct parload__tiff_lib *m, void *h,
		    uint32_t f, uint32_t k, uint64_t size, parload_error *err)
{
	const char *path = w->files->p[f];
	const uint64_t v = w->views;
	parload__tiff_dir d;
	page *p;
	int type, rc;

	m->dir(h, &d);
	if ((rc = parload__tiff_sample(path, v, k, d.spp, d.bits, d.fmt, &type,
				       err)))
		return rc;
	if (!d.width || !d.height)
		return parload__fail(err, PARLOAD_ECONTAINER, 0, path, v,
				     PARLOAD_NONE, "page %" PRIu32 " has no "
				     "width or height", k);
	if ((rc = parload__tiff_add(w, f, k, d.width, d.height, type, &p,
				    err)))
		return rc;
	p->ifd = d.ifd;
	rc = lib_units(m, h, &d, p, path, v, err);
	if (!rc)
		rc = parload__tiff_fits(p, d.height,
					(uint64_t)d.width *
						parload_pixel_size(type),
					size, path, v, err);
	/* The file's only directory: ImageJ's stack in one, perhaps. */
	if (!rc && k == 0 && d.last && d.desc)
		rc = parload__tiff_imagej(w, p, d.desc, strlen(d.desc), size,
					  err);
	return rc;
}

/* Every page of file f by libtiff's answers (module m), following its
 * directory chain once. */
static int lib_walk(walk *w, const parload__module *m, uint32_t f,
		    parload_error *err)
{
	const char *path = w->files->p[f];
	struct stat sb;
	void *h;
	uint32_t k = 0;
	int rc;

	if (parload__sys_stat(path, &sb) != 0)
		return parload__fail_open(err, errno, path);
	if ((rc = m->tiff.open(path, &h, err)))
		return rc;
	do
		rc = lib_page(w, &m->tiff, h, f, k++, (uint64_t)sb.st_size,
			      err);
	while (!rc && (rc = m->tiff.next(h, k, w->views, path, err)) == 1);
	m->tiff.close(h);
	return rc;
}

/* Forget the records of w from record r0 on (a file's, that a walk
 * gave up), its views from v0 on. */
static void walk_drop(walk *w, uint64_t r0, uint64_t v0)
{
	for (uint64_t r = r0; r < w->records; r++) {
		if (w->p[r].pooled)
			continue;
		parload__sys_free(w->p[r].off);
		parload__sys_free(w->p[r].bytes);
	}
	w->records = r0;
	w->views = v0;
}

/* File f's pages into w: by the direct walk where it takes the file (not
 * with PARLOAD_TIFF=libtiff), else by libtiff's walk (the TIFF module),
 * which reads that file alone, what the direct walk gave of it
 * forgotten; *fallbacks counts the files libtiff walked.  Native alone,
 * or built without libtiff, a file the direct walk cannot take fails
 * with the error that says why; without the module, PARLOAD_ENOTSUP
 * saying so. */
static int walk_file(walk *w, uint32_t f, parload__backend how,
		     uint64_t *fallbacks, parload_error *err)
{
	const uint64_t r0 = w->records, v0 = w->views;
	const parload__module *m;
	parload_error why;
	int rc = how == PARLOAD__BACKEND_LIBRARY ?
			 1 :
			 parload__tiff_walk_direct(w, f, &why, err);

	if (rc != 1)
		return rc;
	walk_drop(w, r0, v0);
	if (how != PARLOAD__BACKEND_NATIVE &&
	    (m = parload__module_get(PARLOAD_FORMAT_TIFF, w->files->p[0],
				     err))) {
		++*fallbacks;
		return lib_walk(w, m, f, err);
	}
#ifdef HAVE_TIFF
	if (how != PARLOAD__BACKEND_NATIVE)
		return PARLOAD_ENOTSUP;
#endif
	if (how == PARLOAD__BACKEND_LIBRARY)
		return PARLOAD_ENOTSUP;
	if (err)
		*err = why;
	return why.code;
}

/* The pages of every file into w, each file by the walk walk_file
 * chooses.  Pages of other strips or byte orders than page 0's are read
 * through libtiff's decoder (make_table), which native alone, or a build
 * without libtiff, has not: the error that says so. */
static int walk_all(walk *w, parload__backend how, uint64_t *fallbacks,
		    parload_error *err)
{
	parload_error why;
	int rc = 0;

	for (uint32_t f = 0; !rc && f < w->files->n; f++)
		rc = walk_file(w, f, how, fallbacks, err);
#ifdef HAVE_TIFF
	if (how != PARLOAD__BACKEND_NATIVE)
		return rc;
#endif
	for (uint64_t r = 0; !rc && r < w->records; r++)
		if (w->p[r].unit != w->p[0].unit || w->p[r].be != w->p[0].be) {
			rc = mixed(w, &w->p[r], &why);
			if (err)
				*err = why;
		}
	return rc;
}

/* The source's description and strips table, each file walked by the
 * back-end PARLOAD_TIFF asks for. */
int parload__tiff_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	const char *name = src->path ? src->path : src->paths[0];
	parload__backend how;
	flist files = { 0 };
	walk w = { 0 };
	int rc = parload__backend_get(PARLOAD_FORMAT_TIFF, name, &how, err);

	memset(out, 0, sizeof(*out));
	if (!rc)
		rc = list_files(src, &files, err);
	w.files = &files;
	if (!rc)
		rc = walk_all(&w, how, &out->fallback_files, err);
	if (!rc) {
		out->paths = files.p;
		out->n = files.n;
		memset(&files, 0, sizeof(files));
		fill_desc(&w, &out->desc);
		rc = make_table(&w, name, out, err);
		/* 8-bit pixels have no byte order. */
		if (w.type == PARLOAD_PIXEL_U8)
			out->desc.encoding = PARLOAD_ENC_LE;
	}
	parload__tiff_walk_free(&w);
	flist_free(&files);
	if (rc)
		parload__container_free(out);
	return rc;
}

/* ---- the TIFF driver's row (driver.h) ---- */

static bool tiff_magic(const unsigned char *b, size_t n)
{
	return n >= 4 && ((b[0] == 'I' && b[1] == 'I' &&
			   (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
			  (b[0] == 'M' && b[1] == 'M' && b[2] == 0 &&
			   (b[3] == 42 || b[3] == 43)));
}

static int tiff_describe(const parload_source *src, parload__described *out,
			 parload_error *err)
{
	out->strips = true;
	return parload__tiff_read(src, &out->got, err);
}

static int tiff_write(const char *tmp, const char *path,
		      const parload_stack *st, const parload_save_options *o,
		      parload_error *err)
{
	(void)o;
	return parload__tiff_save(tmp, path, st, err);
}

static const char *const tiff_exts[] = { PARLOAD__TIFF_EXTS, NULL };

const parload__driver parload__driver_tiff = {
	.name = "tiff",
	.title = "TIFF",
	.format = PARLOAD_FORMAT_TIFF,
	.magic = tiff_magic,
	.exts = tiff_exts,
	.describe = tiff_describe,
	.save = PARLOAD_SAVE_TIFF,
	.write = tiff_write,
	.codecs = 1u << PARLOAD__CODEC_NONE | 1u << PARLOAD__CODEC_CUSTOM,
};
