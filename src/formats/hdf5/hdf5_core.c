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

/* The file src names (*file, to free) and its dataset (NULL,
 * src->dataset, or the "/path" of "FILE.h5:/path" where no such file
 * exists); 0 or ENOMEM. */
static int names(const parload_source *src, const char *path, char **file,
		 const char **dataset, parload_error *err)
{
	const char *colon = strstr(path, ":/");
	struct stat sb;

	*dataset = src->dataset;
	if (colon && !src->dataset && parload__sys_stat(path, &sb) != 0) {
		*file = parload__sys_malloc((size_t)(colon - path) + 1);
		if (*file) {
			memcpy(*file, path, (size_t)(colon - path));
			(*file)[colon - path] = '\0';
		}
		*dataset = colon + 1;
	} else {
		*file = parload__sys_strdup(path);
	}
	return *file ? 0 : parload__fail_nomem(err, path);
}

/* libhdf5's reader (the module) over file; parser as hdf5_core.h says. */
static int by_libhdf5(const char *file, const char *dataset,
		      parload_frames fr, const char *path, bool parser,
		      parload__container *out, parload_error *err)
{
	const parload__module *m =
		parload__module_get(PARLOAD_FORMAT_HDF5, path, err);
	int rc;

	if (!m)
		return PARLOAD_ENOTSUP;
	rc = m->read(file, dataset, fr, parser, out, err);
	if (rc == 0)
		out->fallback_files = 1;
	return rc;
}

/* file and dataset (named once for both readers) read by the back-end
 * how asks for: parload's own, falling back to libhdf5's (auto). */
static int by_backend(parload__backend how, const char *file,
		      const char *dataset, parload_frames fr,
		      const char *path, parload__container *out,
		      parload_error *err)
{
	const int rc = how == PARLOAD__BACKEND_LIBRARY ?
			       1 :
			       parload__hdf5_native(file, dataset, fr, out);

	if (rc != 1)
		return rc;
	if (how == PARLOAD__BACKEND_NATIVE)
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
					  "parload's own HDF5 reader does "
					  "not take this file or dataset "
					  "(PARLOAD_HDF5=native; libhdf5's "
					  "reads it, or says why not)");
	return by_libhdf5(file, dataset, fr, path,
			  how == PARLOAD__BACKEND_AUTO, out, err);
}

int parload__hdf5_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	const char *path = src->path ? src->path : src->paths[0];
	const char *dataset;
	parload__backend how;
	char *file;
	int rc = parload__backend_get(PARLOAD_FORMAT_HDF5, path, &how, err);

	memset(out, 0, sizeof(*out));
	if (rc || (rc = names(src, path, &file, &dataset, err)) != 0)
		return rc;
	rc = by_backend(how, file, dataset, src->frames, path, out, err);
	parload__sys_free(file);
	return rc;
}

/* ---- the HDF5 driver's row (driver.h) ---- */

static bool hdf5_magic(const unsigned char *b, size_t n)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F',
					      '\r', '\n', 0x1a, '\n' };

	return n >= 8 && memcmp(b, sig, 8) == 0;
}

/* hdf5_native.c where it can, else the module.  The file's other files
 * (an external link's, external storage's: its paths after the first),
 * when the source confines them, in its directory. */
static int hdf5_describe(const parload_source *src, parload__described *out,
			 parload_error *err)
{
	parload__container *c = &out->got;
	int rc;

	out->strips = true;
	rc = parload__hdf5_read(src, c, err);
	for (size_t k = 1; rc == 0 && (src->flags & PARLOAD_SRC_CONFINE) &&
			   k < c->n; k++)
		rc = parload__confined(c->paths[0], c->paths[k], err);
	if (rc)
		parload__container_free(c);
	return rc;
}

static int hdf5_write(const char *tmp, const char *path,
		      const parload_stack *st, const parload_save_options *o,
		      parload_error *err)
{
	const parload__module *m = parload__module_get(PARLOAD_FORMAT_HDF5,
						       path, err);

	return m ? m->write(tmp, path, st, o, err) : PARLOAD_ENOTSUP;
}

static const char *const hdf5_exts[] = { ".h5", ".hdf5", ".hdf", ".nxs",
					 ".cxi", NULL };

const parload__driver parload__driver_hdf5 = {
	.name = "hdf5",
	.title = "HDF5",
	.format = PARLOAD_FORMAT_HDF5,
	.magic = hdf5_magic,
	.exts = hdf5_exts,
	.describe = hdf5_describe,
	.save = PARLOAD_SAVE_HDF5,
	.write = hdf5_write,
	.codecs = (1u << PARLOAD__CODEC_COUNT) - 1,
};
