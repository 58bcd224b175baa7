/*
 * container.c - what a container's reader leaves to free, whether this
 * build reads TIFF and HDF5 with their libraries, and parload_save()'s
 * options and stacks (the format's driver writes, driver.c).
 */
#include "formats/formats.h"

#include <ctype.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

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
 * Lists of files: a glob's, in natural order
 * ------------------------------------------------------------------- */

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

int parload__natural_qcmp(const void *a, const void *b)
{
	const int c = natural_cmp(*(char *const *)a, *(char *const *)b);

	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

int parload__glob_files(const char *pattern, char ***paths, size_t *n,
			parload_error *err)
{
	glob_t g;
	int rc = 0;

	*paths = NULL;
	*n = 0;
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	*paths = parload__sys_calloc(g.gl_pathc ? g.gl_pathc : 1,
				     sizeof(**paths));
	for (size_t i = 0; *paths && i < g.gl_pathc; i++) {
		if (!((*paths)[i] = parload__sys_strdup(g.gl_pathv[i])))
			break;
		++*n;
	}
	if (*n < g.gl_pathc)
		rc = parload__fail_nomem(err, pattern);
	globfree(&g);
	if (*n)
		qsort(*paths, *n, sizeof(**paths), parload__natural_qcmp);
	return rc;
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
