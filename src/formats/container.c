/*
 * container.c - what a container's reader leaves to free, whether this
 * build reads TIFF and HDF5 with their libraries, and parload_save()'s
 * options and stacks (the format's driver writes, driver.c).
 */
#include "formats/formats.h"

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
