/*
 * hdf5.c - HDF5 sources through libhdf5, the HDF5 module's reader (for
 * the files parload's own, hdf5_native.c, does not take; hdf5_core.c
 * chooses).
 *
 * The reader reads metadata only, under one global mutex (libhdf5 is not
 * thread-safe): which dataset, its type and shape, which frames (NXtomo
 * image_key), the angles (DXchange theta, NXtomo rotation_angle); where
 * each view's rows lie is hdf5_layout.c's.  Contiguous datasets and
 * chunks of whole rows that are stored plainly or with deflate (and
 * shuffle) become a strips table that the workers read with pread and
 * inflate themselves; anything else is read through libhdf5 by a decoder
 * that takes the mutex for each strip.  The writer (hdf5_write.c) writes
 * the DXchange layout.
 */
#include "config.h"

#include "formats/hdf5/hdf5_lib.h"

#ifdef HAVE_HDF5
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every libhdf5 call of libparload is made holding this. */
pthread_mutex_t parload__h5_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------- */

#define MAX_LISTED 10

static bool is_dataset(hid_t f, const char *name)
{
	H5O_info_t info;

	/* Every link on the way must exist for H5Oget_info_by_name2. */
	for (const char *p = strchr(name + 1, '/'); p; p = strchr(p + 1, '/')) {
		char part[1024];

		snprintf(part, sizeof(part), "%.*s", (int)(p - name), name);
		if (H5Lexists(f, part, H5P_DEFAULT) <= 0)
			return false;
	}
	/* The basic fields only: the others make libhdf5 1.10 walk the whole
	 * chunk index for its size (H5D__chunk_bh_info: 371 reads of a
	 * 20,000-chunk dataset's B-tree). */
	return H5Lexists(f, name, H5P_DEFAULT) > 0 &&
	       H5Oget_info_by_name2(f, name, &info, H5O_INFO_BASIC,
				    H5P_DEFAULT) >= 0 &&
	       info.type == H5O_TYPE_DATASET;
}

static herr_t visit3(hid_t o, const char *name, const H5O_info_t *info,
		     void *data)
{
	parload__h5found3 *fd = data;
	hid_t d, s;
	int rank = -1;
	size_t at;

	if (info->type != H5O_TYPE_DATASET || (d = H5Dopen2(o, name,
							     H5P_DEFAULT)) < 0)
		return 0;
	if ((s = H5Dget_space(d)) >= 0) {
		rank = H5Sget_simple_extent_ndims(s);
		H5Sclose(s);
	}
	H5Dclose(d);
	if (rank != 3)
		return 0;
	if (fd->count++ == 0)
		snprintf(fd->first, sizeof(fd->first), "/%s", name);
	at = strlen(fd->list);
	if (fd->count <= MAX_LISTED)
		snprintf(fd->list + at, sizeof(fd->list) - at, ", /%s", name);
	else if (fd->count == MAX_LISTED + 1)
		snprintf(fd->list + at, sizeof(fd->list) - at, ", ...");
	return 0;
}

static void find3(hid_t f, parload__h5found3 *fd)
{
	memset(fd, 0, sizeof(*fd));
	H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit3, fd, H5O_INFO_BASIC);
}

/* What libhdf5's reason for a link it cannot follow means. */
static const char *link_why(const char *why)
{
	if (strstr(why, "too many links"))
		return ": a link that loops, or a chain of more than libhdf5 "
		       "follows";
	if (strstr(why, "unable to open file") ||
	    strstr(why, "unable to open external file"))
		return ": its file is missing or unreadable";
	return "";
}

int parload__h5lib_no_such(h5r *r, const char *name)
{
	H5L_info_t li;
	char val[2048], why[200];
	const char *file, *obj;
	unsigned flags;
	parload__h5found3 fd;

	/* An external link libhdf5 cannot follow. */
	if (H5Lget_info(r->f, name, &li, H5P_DEFAULT) >= 0 &&
	    li.type == H5L_TYPE_EXTERNAL && li.u.val_size <= sizeof(val) &&
	    H5Lget_val(r->f, name, val, sizeof(val), H5P_DEFAULT) >= 0 &&
	    H5Lunpack_elink_val(val, li.u.val_size, &flags, &file, &obj) >= 0) {
		hid_t o = H5Oopen(r->f, name, H5P_DEFAULT);

		h5_why(why);
		h5_close(&o, H5Oclose);
		return parload__fail_path(r->err, PARLOAD_EOPEN, 0, r->file,
					  "%s: an external link to %s:%s, "
					  "which libhdf5 cannot follow (%s%s)",
					  name, file, obj,
					  why[0] ? why : "no reason given",
					  link_why(why));
	}
	/* A soft link libhdf5 cannot follow (one that loops). */
	if (H5Lget_info(r->f, name, &li, H5P_DEFAULT) >= 0 &&
	    li.type == H5L_TYPE_SOFT && li.u.val_size <= sizeof(val) &&
	    H5Lget_val(r->f, name, val, sizeof(val), H5P_DEFAULT) >= 0) {
		hid_t o = H5Oopen(r->f, name, H5P_DEFAULT);

		h5_why(why);
		if (o >= 0) {
			h5_close(&o, H5Oclose);
		} else {
			val[sizeof(val) - 1] = '\0';
			return parload__fail_path(r->err, PARLOAD_EOPEN, 0,
						  r->file, "%s: a link to %s, "
						  "which libhdf5 cannot follow "
						  "(%s%s)", name, val,
						  why[0] ? why :
							   "no reason given",
						  link_why(why));
		}
	}
	find3(r->f, &fd);
	return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
				  "no dataset %s; its 3-D datasets: %s", name,
				  fd.count ? fd.list + 2 : "none");
}

/* The text of attribute attr of object obj (under loc) into buf (cap
 * bytes), the padding of a fixed-length string cut: 0, 1 when there is
 * no such attribute, -1 when it is not one string of fewer than cap
 * bytes or cannot be read. */
static int text_attr(hid_t loc, const char *obj, const char *attr, char *buf,
		     size_t cap)
{
	hid_t a, t, s;
	int rc = -1;
	size_t n;

	buf[0] = '\0';
	if (H5Aexists_by_name(loc, obj, attr, H5P_DEFAULT) <= 0)
		return 1;
	if ((a = H5Aopen_by_name(loc, obj, attr, H5P_DEFAULT,
				 H5P_DEFAULT)) < 0)
		return -1;
	t = H5Aget_type(a);
	s = H5Aget_space(a);
	if (t < 0 || s < 0 || H5Tget_class(t) != H5T_STRING ||
	    H5Sget_simple_extent_npoints(s) != 1) {
		rc = -1;
	} else if (H5Tis_variable_str(t) > 0) {
		char *v = NULL;
		hid_t m = H5Tcopy(H5T_C_S1);

		/* h5py writes UTF-8: libhdf5 converts no character set into
		 * another. */
		H5Tset_size(m, H5T_VARIABLE);
		H5Tset_cset(m, H5Tget_cset(t));
		if (H5Aread(a, m, &v) >= 0 && v) {
			rc = strlen(v) < cap ? 0 : -1;
			if (rc == 0)
				memcpy(buf, v, strlen(v) + 1);
			H5free_memory(v);
		}
		H5Tclose(m);
	} else if ((n = H5Tget_size(t)) < cap && H5Aread(a, t, buf) >= 0) {
		/* Null- or space-padded, maybe without a terminator. */
		parload__h5_unpad(buf, n);
		rc = 0;
	}
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
	H5Aclose(a);
	return rc;
}

/* The NX_class attribute of object name is cls. */
static bool nx_class(hid_t f, const char *name, const char *cls)
{
	char buf[64];

	return text_attr(f, name, "NX_class", buf, sizeof(buf)) == 0 &&
	       strcmp(buf, cls) == 0;
}

/* group/data with group/image_key beside it. */
static bool nx_data_in(h5r *r, const char *group)
{
	char data[1200], key[1200];

	snprintf(data, sizeof(data), "%s/data", group);
	snprintf(key, sizeof(key), "%s/image_key", group);
	if (strlen(data) >= sizeof(r->p.name) || !is_dataset(r->f, data) ||
	    !is_dataset(r->f, key))
		return false;
	memcpy(r->p.name, data, strlen(data) + 1);
	return true;
}

/* An NXtomo group (entry): its data, or its detector's, with image_key
 * beside it; the entry kept for its sample's angles. */
static bool nx_entry(h5r *r, const char *entry)
{
	for (int k = 0; k < 2; k++) {
		char g[1100];

		snprintf(g, sizeof(g), "%s/%s", entry,
			 k ? "instrument/detector" : "data");
		if (nx_data_in(r, g)) {
			snprintf(r->p.entry, sizeof(r->p.entry), "%s", entry);
			return true;
		}
	}
	return false;
}

/* An NXentry at the root, or an NXsubentry in one (Diamond's
 * /entry1/tomo_entry), holding NXtomo's data and image_key. */
static herr_t visit_nx(hid_t o, const char *name, const H5O_info_t *info,
		       void *data)
{
	h5r *r = data;
	const char *slash = strchr(name, '/');
	char path[1024];

	(void)o;
	if (info->type != H5O_TYPE_GROUP || (slash && strchr(slash + 1, '/')))
		return 0;
	snprintf(path, sizeof(path), "/%s", name);
	if (!nx_class(r->f, path, slash ? "NXsubentry" : "NXentry"))
		return 0;
	return nx_entry(r, path) ? 1 : 0;
}

/* The back-end's answers (hdf5_core.h's parload__h5be). */
static int be_nxtomo(void *ctx)
{
	h5r *r = ctx;

	if (nx_entry(r, "/entry"))
		return 1;
	return H5Ovisit2(r->f, H5_INDEX_NAME, H5_ITER_NATIVE, visit_nx, r,
			 H5O_INFO_BASIC) > 0;
}

static int be_is_dataset(void *ctx, const char *path)
{
	return is_dataset(((h5r *)ctx)->f, path);
}

static int be_no_such(void *ctx, const char *path)
{
	return parload__h5lib_no_such(ctx, path);
}

static int be_members(void *ctx, const char *group, char ***names,
		      size_t *n)
{
	return parload__h5lib_members(ctx, group, names, n);
}

static int be_find3(void *ctx, parload__h5found3 *fd)
{
	find3(((h5r *)ctx)->f, fd);
	return 0;
}

static const char *class_name(H5T_class_t k)
{
	switch (k) {
	case H5T_TIME: return "time";
	case H5T_STRING: return "string";
	case H5T_BITFIELD: return "bitfield";
	case H5T_OPAQUE: return "opaque";
	case H5T_COMPOUND: return "compound";
	case H5T_REFERENCE: return "reference";
	case H5T_ENUM: return "enum";
	case H5T_VLEN: return "variable-length";
	case H5T_ARRAY: return "array";
	default: return "unknown";
	}
}

/* parload's pixel type and encoding of the dataset's type. */
int parload__h5lib_pixel_type(h5r *r, parload_desc *d)
{
	const H5T_class_t k = H5Tget_class(r->type);
	const size_t size = H5Tget_size(r->type);
	const H5T_order_t order = H5Tget_order(r->type);
	int t = 0;

	if (k == H5T_INTEGER || k == H5T_FLOAT)
		t = parload__h5_pixel_type(k == H5T_FLOAT,
					   H5Tget_sign(r->type) == H5T_SGN_2,
					   size);
	else
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: a %s type (parload reads "
					  "integers and floats)",
					  r->p.name, class_name(k));
	if (!t)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: %s%s of %zu bytes (parload "
					  "reads " PARLOAD__H5_TYPES ")",
					  r->p.name,
					  k == H5T_FLOAT ? "a " :
					  H5Tget_sign(r->type) == H5T_SGN_2 ?
							   "a signed " :
							   "an unsigned ",
					  k == H5T_FLOAT ? "float" : "integer",
					  size);
	d->pixel_type = t;
	d->encoding = order == H5T_ORDER_BE ? PARLOAD_ENC_BE : PARLOAD_ENC_LE;
	return 0;
}

int parload__h5lib_shape(h5r *r)
{
	hsize_t dims[H5S_MAX_RANK];
	const int rank = H5Sget_simple_extent_ndims(r->space);

	if (rank < 0 || H5Sget_simple_extent_dims(r->space, dims, NULL) < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: unreadable dataspace", r->p.name);
	if (rank != 2 && rank != 3)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: a %d-D dataset (parload reads "
					  "3-D (views, rows, columns) and 2-D)",
					  r->p.name, rank);
	r->rank = rank;
	r->dims[0] = rank == 3 ? dims[0] : 1;
	r->dims[1] = dims[rank - 2];
	r->dims[2] = dims[rank - 1];
	if (!r->dims[0] || !r->dims[1] || !r->dims[2] ||
	    r->dims[1] > UINT32_MAX || r->dims[2] > UINT32_MAX)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: %" PRIu64 " x %" PRIu64 " x %"
					  PRIu64 " (empty, or rows past 32 "
					  "bits)", r->p.name,
					  (uint64_t)r->dims[0],
					  (uint64_t)r->dims[1],
					  (uint64_t)r->dims[2]);
	return 0;
}

/* What a 1-D dataset beside the data holds: NXtomo's image_key, or the
 * angles (DXchange theta, NXtomo rotation_angle). */
typedef enum column { KEYS, ANGLES } column;

/* Dataset name (open as d) holds what it should: integers of 1 to 8
 * bytes, or for angles those or floats of 2 to 16; else ENOTSUP naming it
 * and its type.  (libhdf5 converts any type into any other, at any cost:
 * an image_key whose type says 2 GB an element took 2.1 GB to read.) */
static int column_type(h5r *r, const char *name, hid_t d, column what)
{
	const hid_t t = H5Dget_type(d);
	const H5T_class_t k = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
	const size_t size = t < 0 ? 0 : H5Tget_size(t);

	if (t >= 0)
		H5Tclose(t);
	if ((k == H5T_INTEGER && size >= 1 && size <= 8) ||
	    (what == ANGLES && k == H5T_FLOAT && size >= 2 && size <= 16))
		return 0;
	return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
				  "%s: %s%s of %zu bytes (%s)", name,
				  k == H5T_INTEGER ? "an integer" :
				  k == H5T_FLOAT   ? "a float" :
						     "a ",
				  k == H5T_INTEGER || k == H5T_FLOAT ?
					  "" :
					  k == H5T_NO_CLASS ?
					  "type unreadable" :
					  class_name(k),
				  size,
				  what == KEYS ? "an image_key holds integers "
						 "of 1 to 8 bytes" :
						 "angles are integers of 1 to "
						 "8 bytes or floats of 2 to "
						 "16");
}

/* Degrees per unit of dataset name's angles, by its units attribute
 * (none: degrees); ENOTSUP naming it and the unit for another. */
static int angle_units(h5r *r, const char *name, double *deg)
{
	char u[64];
	const int rc = text_attr(r->f, name, "units", u, sizeof(u));

	*deg = 1.0;
	if (rc == 1 || (rc == 0 && parload__angle_units(u, deg)))
		return 0;
	for (char *p = u; *p; p++)
		if (*p < ' ' || *p > '~')
			*p = '?';
	return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
				  "%s: angles in %s%s%s (parload reads "
				  "%s)", name, rc ? "" : "units \"",
				  rc ? "units that are not one string of "
				       "fewer than 64 bytes" : u,
				  rc ? "" : "\"", PARLOAD__ANGLE_UNITS);
}

/* A 1-D dataset of want entries read as mem_type into buf (want *
 * size bytes), angles in degrees when deg is not NULL (*deg: degrees per
 * unit stored); 1 when name is absent, ECONTAINER when it disagrees. */
static int read_1d(h5r *r, const char *name, hid_t mem_type, void *buf,
		   uint64_t want, column what, double *deg)
{
	hid_t d, s;
	hsize_t n = 0;
	int rank = -1, rc;
	herr_t ok = -1;

	if (!is_dataset(r->f, name))
		return 1;
	if ((d = H5Dopen2(r->f, name, H5P_DEFAULT)) < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s cannot be opened", name);
	if ((s = H5Dget_space(d)) >= 0) {
		rank = H5Sget_simple_extent_ndims(s);
		if (rank == 1)
			H5Sget_simple_extent_dims(s, &n, NULL);
		H5Sclose(s);
	}
	rc = rank == 1 && n == want ? column_type(r, name, d, what) : 0;
	if (rc == 0 && rank == 1 && n == want && deg)
		rc = angle_units(r, name, deg);
	if (rc == 0 && rank == 1 && n == want)
		ok = H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	H5Dclose(d);
	if (rc)
		return rc;
	if (rank != 1 || n != want)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: %s%" PRIu64 " entries for %" PRIu64
					  " frames of %s", name,
					  rank == 1 ? "" : "not 1-D: ",
					  (uint64_t)n, want, r->p.name);
	if (ok < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s cannot be read", name);
	return 0;
}

static int be_read_1d(void *ctx, const char *path, bool angles, void *buf,
		      uint64_t want, double *deg)
{
	return read_1d(ctx, path, angles ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT32,
		       buf, want, angles ? ANGLES : KEYS, angles ? deg : NULL);
}


static int open_file(h5r *r)
{
	char why[200];
	struct stat sb;

	if (parload__sys_stat(r->file, &sb) != 0)
		return parload__fail_open(r->err, errno, r->file);
	r->f = H5Fopen(r->file, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (r->f >= 0)
		return 0;
	h5_why(why);
	if (strstr(why, "truncated"))
		return parload__fail_path(r->err, PARLOAD_ETRUNCATED, 0,
					  r->file, "a truncated HDF5 file (%s)",
					  why);
	return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
				  "not an HDF5 file libhdf5 opens (%s)",
				  why[0] ? why : "no reason given");
}

int parload__h5lib_open_dataset(h5r *r, hid_t loc)
{
	r->d = H5Dopen2(loc, r->p.name, H5P_DEFAULT);
	if (r->d < 0 && loc == r->f)
		return parload__h5lib_no_such(r, r->p.name);
	if (r->d < 0 || (r->type = H5Dget_type(r->d)) < 0 ||
	    (r->space = H5Dget_space(r->d)) < 0 ||
	    (r->dcpl = H5Dget_create_plist(r->d)) < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s cannot be opened",
					  r->p.name);
	return parload__h5lib_data_file(r);
}

void parload__h5lib_close_dataset(h5r *r)
{
	h5_close(&r->dcpl, H5Pclose);
	h5_close(&r->space, H5Sclose);
	h5_close(&r->type, H5Tclose);
	h5_close(&r->d, H5Dclose);
	h5_close(&r->df, H5Fclose);
	h5_close(&r->pf, H5Fclose);
}

static int read_meta(h5r *r, const char *named, parload_frames fr)
{
	const parload__h5be be = { r, be_is_dataset, be_no_such, be_nxtomo,
				   be_find3, be_read_1d, be_members };
	parload_desc *d = &r->c->desc;
	uint64_t all = 0;
	int rc;

	if ((rc = open_file(r)) ||
	    (rc = parload__h5_choose(&be, &r->p, named, fr)) ||
	    (rc = parload__h5lib_open_dataset(r, r->f)) ||
	    (rc = parload__h5lib_pixel_type(r, d)) ||
	    (rc = parload__h5lib_shape(r)) ||
	    (rc = parload__h5lib_parts(r, &all)) ||
	    (rc = parload__h5_frames(&be, &r->p, fr, all)) ||
	    (rc = parload__h5_angles(&be, &r->p, all, &r->c->strips.angles)))
		return rc;
	/* The sizes are derived as for a raw stream of the same rows. */
	rc = parload__h5_describe(d, d->pixel_type,
				  d->encoding == PARLOAD_ENC_BE,
				  (uint32_t)r->dims[2], (uint32_t)r->dims[1],
				  r->p.n, r->err);
	if (rc) {
		parload__error_prefix(r->err, r->file);
		return rc;
	}
	rc = parload__h5lib_parts_layout(r, d);
	r->c->strips.views = r->p.n;
	r->c->strips.path = r->c->paths[0];
	return rc;
}

/* The module's read (hdf5_core.h's parload__h5_reader). */
static int lib_read(const char *file, const char *named, parload_frames fr,
		    bool parser, parload__container *out, parload_error *err)
{
	h5r r = { .err = err, .parser = parser, .f = -1, .d = -1, .type = -1,
		  .space = -1, .dcpl = -1, .df = -1, .pf = -1, .type0 = -1,
		  .c = out };
	int rc;

	memset(out, 0, sizeof(*out));
	out->paths = parload__sys_malloc(sizeof(*out->paths));
	if (!out->paths || !(out->paths[0] = parload__sys_strdup(file))) {
		parload__sys_free(out->paths);
		out->paths = NULL;
		return parload__fail_nomem(err, file);
	}
	out->n = 1;
	r.file = r.p.file = out->paths[0];
	r.p.err = err;
	h5_enter();
	rc = read_meta(&r, named, fr);
	parload__h5lib_close_dataset(&r);
	h5_close(&r.type0, H5Tclose);
	h5_close(&r.f, H5Fclose);
	h5_leave();
	parload__h5_pick_free(&r.p);
	for (size_t k = 0; k < r.parts; k++) {
		parload__sys_free(r.part[k].file);
		parload__sys_free(r.part[k].name);
	}
	parload__sys_free(r.part);
	if (rc)
		parload__container_free(out);
	return rc;
}

/* libhdf5 initialised when the module is first asked for, as h5py's
 * import does, not by the first file: a fresh process's first describe
 * of a 20,000-chunk dataset took 7 ms, the second 3.4-4 ms. */
static void h5_ready(void)
{
	h5_enter();
	(void)H5open();
	h5_leave();
}

/* This file's reader and writer, as a module (module.c). */
PARLOAD__MODULE_EXPORT const parload__module parload__hdf5_module = {
	.abi = PARLOAD__MODULE_ABI,
	.read = lib_read,
	.write = parload__hdf5_write,
	.h5_join = parload__h5lib_custom_join,
	.ready = h5_ready,
};
#endif /* HAVE_HDF5 */
