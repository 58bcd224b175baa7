/*
 * container.c - what a container's reader leaves to free, and
 * parload_save(): the format's driver (driver.h: its extension, or the
 * format asked) writes a temporary file beside the output, tempfile.c's
 * or the caller's.
 */
#include "driver.h"

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

/* "which format?": the extensions of the formats parload_save writes. */
static int which_format(const char *path, parload_error *err)
{
	char names[256] = "";
	size_t n = 0;
	const parload__driver *d;

	for (int f = PARLOAD_SAVE_AUTO + 1;
	     (d = parload__driver_saving((parload_save_format)f)); f++)
		for (const char *const *e = d->exts; e && *e; e++)
			n += (size_t)snprintf(names + n, sizeof(names) - n,
					      "%s%s", n ? " " : "", *e);
	return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
				  "which format? (an extension: %s)", names);
}

int parload_save(const char *path, const parload_stack *st,
		 const parload_save_options *o, parload_error *err)
{
	parload_save_options dflt;
	const parload__driver *d;
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
	d = parload__driver_saving(o->format ? o->format :
					       parload_save_format_of(path));
	if (!d)
		return which_format(path, err);
	/* The caller's temporary file: written, and left to the caller. */
	if (o->tmp)
		return d->write(o->tmp, path, st, o, err);
	/* Refused before writing; parload_temp_place refuses it again,
	 * atomically, should path appear meanwhile. */
	if (!(o->flags & PARLOAD_SAVE_FORCE) && parload__sys_lstat(path, &sb) == 0)
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists (replace it with force)");
	rc = parload_temp_create(path, tmp, sizeof(tmp), err);
	if (rc)
		return rc;
	rc = d->write(tmp, path, st, o, err);
	if (rc == 0)
		rc = parload_temp_place(tmp, path, o->flags, err);
	if (rc)
		(void)unlink(tmp);
	return rc;
}
