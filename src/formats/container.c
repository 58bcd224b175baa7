/*
 * container.c - TIFF and HDF5 as sources and outputs, whichever library
 * does the work: which container a source is, what a reader leaves to
 * free, and parload_save() (a temporary file beside the output,
 * tempfile.c's or the caller's, written by tiff_write.c or hdf5.c).
 */
#include "formats/formats.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *tail)
{
	const size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcasecmp(s + n - m, tail) == 0;
}

static bool tiff_name(const char *s)
{
	return ends_with(s, ".tif") || ends_with(s, ".tiff");
}

static bool hdf5_name(const char *s)
{
	return ends_with(s, ".h5") || ends_with(s, ".hdf5") ||
	       ends_with(s, ".hdf") || ends_with(s, ".nxs") ||
	       ends_with(s, ".cxi");
}

/* "FILE.h5:/name": the part before ":/" names an HDF5 file. */
static bool hdf5_with_dataset(const char *s)
{
	const char *colon = strstr(s, ":/");
	char head[4096];
	size_t n;

	if (!colon || (n = (size_t)(colon - s)) >= sizeof(head))
		return false;
	memcpy(head, s, n);
	head[n] = '\0';
	return hdf5_name(head);
}

/* The first bytes of the regular file path: TIFF (II*\0, MM\0*, and
 * BigTIFF's 43), HDF5's signature at 0, or neither (*kind -1).  A file
 * that cannot be opened or read fails here as its load would. */
static int sniff(const char *path, int *kind, parload_error *err)
{
	static const unsigned char h5[8] = { 0x89, 'H', 'D', 'F',
					     '\r', '\n', 0x1a, '\n' };
	unsigned char b[8];
	FILE *f;
	size_t n = 0, got;
	int e = 0;

	*kind = -1;
	do
		f = parload__sys_fopen(path, "rb");
	while (!f && errno == EINTR);
	if (!f)
		return parload__fail_open(err, errno, path);
	/* A signal may cut a read short: go on from where it stopped. */
	do {
		got = parload__sys_fread(b + n, 1, sizeof(b) - n, f);
		n += got;
		e = errno;
		if (got == 0 && parload__sys_ferror(f) && e == EINTR)
			parload__sys_clearerr(f);
		else if (got == 0)
			break;
	} while (n < sizeof(b));
	if (n < sizeof(b) && parload__sys_ferror(f)) {
		parload__sys_fclose(f);
		return parload__fail(err, PARLOAD_EIO, e, path, PARLOAD_NONE,
				     n, "cannot read file");
	}
	parload__sys_fclose(f);
	if (n == 8 && memcmp(b, h5, 8) == 0)
		*kind = PARLOAD_FORMAT_HDF5;
	else if (n >= 4 && ((b[0] == 'I' && b[1] == 'I' &&
			     (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
			    (b[0] == 'M' && b[1] == 'M' && b[2] == 0 &&
			     (b[3] == 42 || b[3] == 43))))
		*kind = PARLOAD_FORMAT_TIFF;
	return 0;
}

/* A directory holding at least one *.tif or *.tiff: a folder of TIFFs
 * (any other directory stays what it was, not a regular file). */
static bool tiff_folder(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.' && tiff_name(e->d_name);
	if (d)
		closedir(d);
	return found;
}

/* Files i of a list, an HDF5 file: alone, the source; with others, not
 * read yet (a master file's data files, as one stream). */
static int hdf5_list(const parload_source *src, size_t i, int *kind,
		     parload_error *err)
{
	if (src->path_count == 1) {
		*kind = PARLOAD_FORMAT_HDF5;
		return 0;
	}
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, src->paths[i],
				  "a list of HDF5 files is not read yet (as "
				  "one stream of views): load each file "
				  "alone");
}

static bool hdf5_named(const char *p)
{
	return p && (hdf5_name(p) || hdf5_with_dataset(p));
}

/* A list: TIFFs, by the first's name or first bytes, are one source; an
 * HDF5 file, the first by its name or first bytes, the others by their
 * names, not yet. */
static int list_kind(const parload_source *src, int *kind,
		     parload_error *err)
{
	const char *p = src->paths[0];
	struct stat st;
	int rc = 0;

	if (p && tiff_name(p)) {
		*kind = PARLOAD_FORMAT_TIFF;
		return 0;
	}
	if (hdf5_named(p))
		return hdf5_list(src, 0, kind, err);
	if (p && parload__sys_stat(p, &st) == 0 && S_ISREG(st.st_mode))
		rc = sniff(p, kind, err);
	if (rc || *kind == PARLOAD_FORMAT_TIFF)
		return rc;
	if (*kind == PARLOAD_FORMAT_HDF5)
		return hdf5_list(src, 0, kind, err);
	for (size_t i = 1; i < src->path_count; i++)
		if (hdf5_named(src->paths[i]))
			return hdf5_list(src, i, kind, err);
	return 0;
}

int parload__container_kind(const parload_source *src, int *kind,
			    parload_error *err)
{
	const char *p = src->path;
	struct stat st;

	*kind = -1;
	if (src->desc || src->fd >= 0)
		return 0;
	if (src->path_count)
		return list_kind(src, kind, err);
	if (!p)
		return 0;
	if (src->dataset || src->frames != PARLOAD_FRAMES_PROJECTIONS) {
		*kind = PARLOAD_FORMAT_HDF5;
		return 0;
	}
	/* stat is best effort: the load's own open says what is wrong. */
	if (parload__sys_stat(p, &st) != 0) {
		if (hdf5_with_dataset(p))
			*kind = PARLOAD_FORMAT_HDF5;
		else if (strpbrk(p, "*?[")) /* a glob the shell left */
			*kind = PARLOAD_FORMAT_TIFF;
		return 0;
	}
	if (S_ISDIR(st.st_mode) && tiff_folder(p))
		*kind = PARLOAD_FORMAT_TIFF;
	else if (S_ISDIR(st.st_mode) || ends_with(p, ".nhdr"))
		return 0;
	else if (tiff_name(p))
		*kind = PARLOAD_FORMAT_TIFF;
	else if (hdf5_name(p))
		*kind = PARLOAD_FORMAT_HDF5;
	else if (S_ISREG(st.st_mode))
		return sniff(p, kind, err);
	return 0;
}

void parload__container_free(parload__container *c)
{
	parload__strips *t = &c->strips;

	for (size_t i = 0; i < c->n; i++)
		parload__sys_free(c->paths[i]);
	parload__sys_free(c->paths);
	parload__sys_free(t->run);
	parload__sys_free(t->angles);
	if (t->decoder && t->decoder->free_arg && t->arg)
		t->decoder->free_arg(t->arg);
	memset(c, 0, sizeof(*c));
}

/* ---------------------------------------------------------------------
 * parload_save
 * ------------------------------------------------------------------- */

int parload_has_tiff(void)
{
	return parload__module_get(PARLOAD_FORMAT_TIFF, NULL, NULL) != NULL;
}

int parload_has_hdf5(void)
{
	return parload__module_get(PARLOAD_FORMAT_HDF5, NULL, NULL) != NULL;
}

void parload_save_options_init(parload_save_options *o)
{
	if (o)
		memset(o, 0, sizeof(*o));
}

void parload_stack_of(parload_stack *st, const parload_dataset *ds,
		      float *angles_buf)
{
	const parload_shape *s = &ds->shape;
	bool any = false;

	memset(st, 0, sizeof(*st));
	st->pixels = ds->pixels;
	st->pixel_type = s->pixel_type;
	st->layout = s->layout;
	if (s->layout == PARLOAD_LAYOUT_VIEWS) {
		st->n = s->views;
		st->rows = s->rows;
	} else {
		st->n = s->rows;
		st->rows = (uint32_t)s->views;
	}
	st->cols = s->cols;
	for (uint64_t k = 0; angles_buf && ds->headers && k < s->views; k++) {
		angles_buf[k] = ds->headers[k].angle_deg;
		any |= angles_buf[k] != 0.0f;
	}
	if (any) {
		st->angles = angles_buf;
		st->angle_count = s->views;
	}
}

static int check_stack(const char *path, const parload_stack *st,
		       parload_error *err)
{
	if (!st || (!st->pixels && st->n && st->rows && st->cols))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "nothing to save");
	if (parload_pixel_size(st->pixel_type) == 0)
		return parload__fail_path(err, PARLOAD_EPIXTYPE, 0, path,
					  "unknown pixel type %d",
					  st->pixel_type);
	if (st->n == 0 || st->rows == 0 || st->cols == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "an empty stack (%" PRIu64 " pages "
					  "of %u x %u) cannot be saved",
					  st->n, st->cols, st->rows);
	if (st->layout != PARLOAD_LAYOUT_VIEWS &&
	    st->layout != PARLOAD_LAYOUT_SINOGRAMS)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "unknown layout %d", (int)st->layout);
	return 0;
}

int parload_save(const char *path, const parload_stack *st,
		 const parload_save_options *o, parload_error *err)
{
	parload_save_options dflt;
	parload_save_format fmt;
	const parload__module *mod;
	char tmp[PATH_MAX];
	struct stat sb;
	int rc;

	if (!o) {
		parload_save_options_init(&dflt);
		o = &dflt;
	}
	if (!path || !*path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "parload_save: no path");
	rc = check_stack(path, st, err);
	if (rc)
		return rc;
	fmt = o->format;
	if (fmt == PARLOAD_SAVE_AUTO)
		fmt = tiff_name(path) ? PARLOAD_SAVE_TIFF :
		      hdf5_name(path) ? PARLOAD_SAVE_HDF5 :
					PARLOAD_SAVE_AUTO;
	if (fmt != PARLOAD_SAVE_TIFF && fmt != PARLOAD_SAVE_HDF5)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "which format? (.tif or .tiff for "
					  "TIFF, .h5, .hdf5, .hdf or .nxs for "
					  "HDF5)");
	/* TIFF is written here, HDF5 by its module. */
	mod = NULL;
	if (fmt == PARLOAD_SAVE_HDF5 &&
	    !(mod = parload__module_get(PARLOAD_FORMAT_HDF5, path, err)))
		return PARLOAD_ENOTSUP;
	/* The caller's temporary file: written, and left to the caller. */
	if (o->tmp)
		return mod ? mod->write(o->tmp, path, st, o, err) :
			     parload__tiff_save(o->tmp, path, st, err);
	/* Refused before writing; parload_temp_place refuses it again,
	 * atomically, should path appear meanwhile. */
	if (!(o->flags & PARLOAD_SAVE_FORCE) && parload__sys_lstat(path, &sb) == 0)
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists (replace it with force)");
	rc = parload_temp_create(path, tmp, sizeof(tmp), err);
	if (rc)
		return rc;
	rc = mod ? mod->write(tmp, path, st, o, err) :
		   parload__tiff_save(tmp, path, st, err);
	if (rc == 0)
		rc = parload_temp_place(tmp, path, o->flags, err);
	if (rc)
		(void)unlink(tmp);
	return rc;
}
