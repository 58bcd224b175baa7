/*
 * tiff.c - TIFF sources and outputs (libtiff): to be written.
 */
#include "internal.h"

#ifndef HAVE_TIFF
static int no_tiff(const char *path, parload_error *err)
{
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "this libparload was built without TIFF "
				  "(configure --with-tiff, libtiff-dev)");
}
#endif

int parload__tiff_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	(void)out;
#ifndef HAVE_TIFF
	return no_tiff(src->path ? src->path : src->paths[0], err);
#else
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0,
				  src->path ? src->path : src->paths[0],
				  "TIFF is not read yet");
#endif
}

int parload__tiff_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err)
{
	(void)tmp;
	(void)st;
	(void)o;
#ifndef HAVE_TIFF
	return no_tiff(path, err);
#else
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "TIFF is not written yet");
#endif
}
