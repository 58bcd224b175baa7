/*
 * hdf5_core.c - an HDF5 source's one entry (hdf5_core.h): its file and
 * dataset named once, then read by the back-end PARLOAD_HDF5 picks;
 * by default parload's own reader (hdf5_native.c), and libhdf5's reader
 * (hdf5.c, its module) where parload's cannot take the file.
 */
#include "formats/hdf5/hdf5_core.h"
#include "formats/backend.h"

#include <stdio.h>
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

/* ---- several files as one stream ---- */

/* What differs in b's frames from a's (pixel type, byte order, rows,
 * columns): NULL when nothing. */
static const char *desc_unlike(const parload_desc *a, const parload_desc *b,
			       char *why, size_t cap)
{
	if (b->pixel_type != a->pixel_type || b->encoding != a->encoding)
		snprintf(why, cap, "pixels of %s%s, not %s%s",
			 parload_pixel_name(b->pixel_type),
			 b->encoding == PARLOAD_ENC_BE ? " (big-endian)" : "",
			 parload_pixel_name(a->pixel_type),
			 a->encoding == PARLOAD_ENC_BE ? " (big-endian)" : "");
	else if (b->width != a->width || b->height != a->height)
		snprintf(why, cap, "frames of %u x %u (rows x columns), not "
			 "%u x %u", b->height, b->width, a->height, a->width);
	else
		return NULL;
	return why;
}

/* c's files among out's: file_of[k] the index of c's file k. */
static int merge_paths(parload__container *out, const parload__container *c,
		       uint32_t *file_of, parload_error *err)
{
	for (size_t k = 0; k < c->n; k++) {
		size_t i = 0;
		char **more;

		while (i < out->n && strcmp(out->paths[i], c->paths[k]))
			i++;
		file_of[k] = (uint32_t)i;
		if (i < out->n)
			continue;
		if (out->n >= UINT32_MAX ||
		    !(more = parload__sys_malloc((out->n + 1) * sizeof(*more))))
			return parload__fail_nomem(err, c->paths[k]);
		memcpy(more, out->paths, out->n * sizeof(*more));
		if (!(more[out->n] = parload__sys_strdup(c->paths[k]))) {
			parload__sys_free(more);
			return parload__fail_nomem(err, c->paths[k]);
		}
		parload__sys_free(out->paths);
		out->paths = more;
		out->n++;
	}
	return 0;
}

/* out's angles and c's, one after the other (out's views before c's);
 * none unless both have them. */
static int merge_angles(parload__strips *to, const parload__strips *from,
			parload_error *err)
{
	float *a;

	if (!to->angles || !from->angles) {
		parload__sys_free(to->angles);
		to->angles = NULL;
		return 0;
	}
	if (!(a = parload__sys_malloc((to->views + from->views) * sizeof(*a))))
		return parload__fail_nomem(err, to->path);
	memcpy(a, to->angles, to->views * sizeof(*a));
	memcpy(a + to->views, from->angles, from->views * sizeof(*a));
	parload__sys_free(to->angles);
	to->angles = a;
	return 0;
}

/* c's table joined to out's (views from view0 on) by the module whose
 * decoder reads both. */
static int join_decoded(parload__container *out, parload__container *c,
			uint64_t view0, const char *file, parload_error *err)
{
	const parload__module *m =
		parload__module_get(PARLOAD_FORMAT_HDF5, file, err);

	if (!m)
		return PARLOAD_ENOTSUP;
	return m->h5_join(&out->strips, &c->strips, view0, file, err);
}

/* c, file's container, after out's views: alike (its frames, how its
 * strips are stored), its files and strips joined to out's. */
static int append(parload__container *out, parload__container *c,
		  const char *file, parload_error *err)
{
	char why[200];
	const char *unlike = desc_unlike(&out->desc, &c->desc, why,
					 sizeof(why));
	uint32_t *file_of;
	int rc;

	if (!unlike)
		unlike = parload__h5_unlike(&out->strips, &c->strips, why,
					    sizeof(why));
	if (unlike)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, file,
					  "%s, as against %s (the files of one "
					  "stream share their frames' type and "
					  "shape, and how they are stored)",
					  unlike, out->paths[0]);
	if (!(file_of = parload__sys_calloc(c->n, sizeof(*file_of))))
		return parload__fail_nomem(err, file);
	rc = merge_paths(out, c, file_of, err);
	if (rc == 0 && parload__h5_append(&out->strips, &c->strips,
					  out->strips.views, file_of))
		rc = parload__fail_nomem(err, file);
	parload__sys_free(file_of);
	if (rc == 0 && c->strips.decoder)
		rc = join_decoded(out, c, out->strips.views, file, err);
	if (rc == 0)
		rc = merge_angles(&out->strips, &c->strips, err);
	out->strips.views += c->strips.views;
	out->desc.count += c->desc.count;
	out->fallback_files += c->fallback_files;
	return rc;
}

/* One HDF5 file of a list (or alone): its container. */
static int one_file(const parload_source *src, const char *path,
		    parload__container *out, parload_error *err)
{
	const char *dataset;
	parload__backend how;
	char *file;
	int rc = parload__backend_get(PARLOAD_FORMAT_HDF5, path, &how, err);

	memset(out, 0, sizeof(*out));
	if (rc || (rc = names(src, path, &file, &dataset, err)) != 0)
		return rc;
	rc = by_backend(how, file, dataset, src->frames, path, out, err);
	parload__sys_free(file);
	/* The files it names (an external link's, external storage's, a
	 * virtual dataset's sources: its paths after the first), when the
	 * source confines them, in its directory. */
	for (size_t k = 1; rc == 0 && (src->flags & PARLOAD_SRC_CONFINE) &&
			   k < out->n; k++)
		rc = parload__confined(out->paths[0], out->paths[k], err);
	if (rc)
		parload__container_free(out);
	return rc;
}

/* The files of a list (n of them), one stream. */
static int several(const parload_source *src, const char *const *files,
		   size_t n, parload__container *out, parload_error *err)
{
	int rc = one_file(src, files[0], out, err);

	for (size_t i = 1; rc == 0 && i < n; i++) {
		parload__container c;

		if ((rc = one_file(src, files[i], &c, err)) == 0)
			rc = append(out, &c, files[i], err);
		parload__container_free(&c);
	}
	if (rc)
		parload__container_free(out);
	else
		out->strips.path = out->paths[0];
	return rc;
}

/* A glob that names no file: its files, in natural order. */
static int glob_of(const parload_source *src, parload__container *out,
		   parload_error *err)
{
	char **files;
	size_t n;
	int rc = parload__glob_files(src->path, &files, &n, err);

	if (rc == 0 && n == 0)
		rc = parload__fail_path(err, PARLOAD_EINVAL, 0, src->path,
					"no HDF5 files match %s", src->path);
	if (rc == 0)
		rc = several(src, (const char *const *)files, n, out, err);
	for (size_t i = 0; i < n; i++)
		parload__sys_free(files[i]);
	parload__sys_free(files);
	return rc;
}

int parload__hdf5_read(const parload_source *src, parload__container *out,
		       parload_error *err)
{
	struct stat sb;

	memset(out, 0, sizeof(*out));
	if (src->path_count > 1)
		return several(src, src->paths, src->path_count, out, err);
	if (src->path && strpbrk(src->path, "*?[") &&
	    parload__sys_stat(src->path, &sb) != 0)
		return glob_of(src, out, err);
	return one_file(src, src->path ? src->path : src->paths[0], out, err);
}

/* ---- the HDF5 driver's row (driver.h) ---- */

static bool hdf5_magic(const unsigned char *b, size_t n)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F',
					      '\r', '\n', 0x1a, '\n' };

	return n >= 8 && memcmp(b, sig, 8) == 0;
}

/* hdf5_native.c where it can, else the module (a list's files each, its
 * files confined to each one's directory where the source says so). */
static int hdf5_describe(const parload_source *src, parload__described *out,
			 parload_error *err)
{
	parload__container *c = &out->got;
	int rc;

	out->strips = true;
	rc = parload__hdf5_read(src, c, err);
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
