/*
 * hdf5.c - HDF5 sources and outputs (libhdf5): to be written.
 */
#include "internal.h"

#ifndef HAVE_HDF5
static int no_hdf5(const char *path, parload_error *err)
{
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "this libparload was built without HDF5 "
				  "(configure --with-hdf5, libhdf5-dev)");
}
#endif

int parload__hdf5_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	(void)out;
#ifndef HAVE_HDF5
	return no_hdf5(src->path ? src->path : src->paths[0], err);
#else
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0,
				  src->path ? src->path : src->paths[0],
				  "HDF5 is not read yet");
#endif
}

int parload__hdf5_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err)
{
	(void)tmp;
	(void)st;
	(void)o;
#ifndef HAVE_HDF5
	return no_hdf5(path, err);
#else
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "HDF5 is not written yet");
#endif
}
