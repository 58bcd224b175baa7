/*
 * hdf5_core.c - an HDF5 source's one entry (hdf5_core.h): its file and
 * dataset named once, then read by the back-end PARLOAD_HDF5 picks;
 * by default parload's own reader (hdf5_native.c), and libhdf5's reader
 * (hdf5.c, its module) where parload's cannot take the file.
 */
#include "formats/hdf5/hdf5_core.h"
#include "formats/backend.h"

#include <string.h>
#include <sys/stat.h>

int parload__hdf5_names(const parload_source *src, char **file,
			const char **dataset, parload_error *err)
{
	const char *p = src->path ? src->path : src->paths[0];
	const char *colon = strstr(p, ":/");
	struct stat sb;

	*dataset = src->dataset;
	if (colon && !src->dataset && parload__sys_stat(p, &sb) != 0) {
		*file = parload__sys_malloc((size_t)(colon - p) + 1);
		if (*file) {
			memcpy(*file, p, (size_t)(colon - p));
			(*file)[colon - p] = '\0';
		}
		*dataset = colon + 1;
	} else {
		*file = parload__sys_strdup(p);
	}
	return *file ? 0 : parload__fail_nomem(err, p);
}

/* libhdf5's reader (the module) over file; parser as hdf5_core.h says. */
static int by_libhdf5(const parload_source *src, const char *path,
		      bool parser, parload__container *out,
		      parload_error *err)
{
	const parload__module *m =
		parload__module_get(PARLOAD_FORMAT_HDF5, path, err);
	const char *dataset;
	char *file;
	int rc;

	if (!m)
		return PARLOAD_ENOTSUP;
	if ((rc = parload__hdf5_names(src, &file, &dataset, err)))
		return rc;
	rc = m->read(file, dataset, src->frames, parser, out, err);
	parload__sys_free(file);
	if (rc == 0)
		out->fallback_files = 1;
	return rc;
}

int parload__hdf5_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	const char *path = src->path ? src->path : src->paths[0];
	parload__backend how;
	int rc = parload__backend_get(PARLOAD_FORMAT_HDF5, path, &how, err);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	if (how != PARLOAD__BACKEND_LIBRARY &&
	    (rc = parload__hdf5_native(src, out, err)) != 1)
		return rc;
	if (how == PARLOAD__BACKEND_NATIVE)
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
					  "parload's own HDF5 reader does "
					  "not take this file or dataset "
					  "(PARLOAD_HDF5=native; libhdf5's "
					  "reads it, or says why not)");
	return by_libhdf5(src, path, how == PARLOAD__BACKEND_AUTO, out, err);
}
