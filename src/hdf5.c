/*
 * hdf5.c - HDF5 sources and outputs (libhdf5).
 *
 * The reader reads metadata only, under one global mutex (libhdf5 is not
 * thread-safe): which dataset, its type and shape, which frames (NXtomo
 * image_key), the angles (DXchange theta, NXtomo rotation_angle) and where
 * each view's rows lie.  Contiguous datasets and chunks of whole rows that
 * are stored plainly or with deflate (and shuffle) become a strips table
 * that the workers read with pread and inflate themselves; anything else
 * is read through libhdf5 by a decoder that takes the mutex for each
 * strip.  The writer writes the DXchange layout.
 */
#include "config.h"

#include "hdf5_core.h"

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
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

static void h5_enter(void)
{
	pthread_mutex_lock(&h5_lock);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5_leave(void)
{
	pthread_mutex_unlock(&h5_lock);
}

static void h5_close(hid_t *id, herr_t (*fn)(hid_t))
{
	if (*id >= 0)
		fn(*id);
	*id = H5I_INVALID_HID;
}

/* The innermost message of libhdf5's error stack, or "". */
static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
	char *buf = data;

	if (n == 0 && e->desc)
		snprintf(buf, 200, "%s", e->desc);
	return 0;
}

static const char *h5_why(char buf[200])
{
	buf[0] = '\0';
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, buf);
	return buf;
}

/* ---------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------- */

#define MAX_LISTED 10

typedef struct h5r {
	const char *file;
	parload_error *err;
	bool parser;           /* hdf5_index.c may read a chunk index */
	hid_t f, d, type, space, dcpl;
	/* The file that holds the dataset: the one named, or an external
	 * link's; its name (one of the container's paths) and index there. */
	hid_t df;
	const char *dfile;
	uint32_t dfi;
	char name[1024];       /* the dataset */
	char dir[1024];        /* its group, for image_key and angles */
	bool nxtomo, dxchange;
	int rank;
	hsize_t dims[3];       /* (frames, rows, columns) */
	uint64_t *frame;       /* the frames read, in order */
	uint64_t n;            /* how many */
	parload__container *c;
} h5r;

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

/* The file's 3-D datasets, listed ", /a, /b" into list. */
typedef struct found3 {
	size_t count;
	char first[1024];
	char list[1024];
} found3;

static herr_t visit3(hid_t o, const char *name, const H5O_info_t *info,
		     void *data)
{
	found3 *fd = data;
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

static void find3(hid_t f, found3 *fd)
{
	memset(fd, 0, sizeof(*fd));
	H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit3, fd, H5O_INFO_BASIC);
}

static int no_such(h5r *r, const char *name)
{
	H5L_info_t li;
	char val[2048], why[200];
	const char *file, *obj;
	unsigned flags;
	found3 fd;

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
					  "which libhdf5 cannot follow (%s)",
					  name, file, obj,
					  why[0] ? why : "no reason given");
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
		buf[n] = '\0';
		while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\0'))
			buf[--n] = '\0';
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
	char data[1024], key[1024];

	snprintf(data, sizeof(data), "%s/data", group);
	snprintf(key, sizeof(key), "%s/image_key", group);
	if (!is_dataset(r->f, data) || !is_dataset(r->f, key))
		return false;
	snprintf(r->name, sizeof(r->name), "%s", data);
	return true;
}

/* An NXentry's NXdata or NXdetector group holding data and image_key. */
static herr_t visit_nx(hid_t o, const char *name, const H5L_info_t *li,
		       void *data)
{
	h5r *r = data;
	char path[512];

	(void)o, (void)li;
	snprintf(path, sizeof(path), "/%s", name);
	if (strchr(name, '/') || !nx_class(r->f, path, "NXentry"))
		return 0;
	for (int k = 0; k < 2; k++) {
		char g[600];

		snprintf(g, sizeof(g), "%s/%s", path,
			 k ? "instrument/detector" : "data");
		if (nx_data_in(r, g))
			return 1;
	}
	return 0;
}

static bool find_nxtomo(h5r *r)
{
	if (nx_data_in(r, "/entry/data") ||
	    nx_data_in(r, "/entry/instrument/detector"))
		return true;
	return H5Literate(r->f, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, visit_nx,
			  r) > 0;
}

static const char *frames_name(parload_frames fr)
{
	return fr == PARLOAD_FRAMES_FLATS ? "flats" :
	       fr == PARLOAD_FRAMES_DARKS ? "darks" :
					    "projections";
}

/* DXchange: the frames' dataset of the three. */
static int dxchange(h5r *r, const char *const *dx, parload_frames fr)
{
	r->dxchange = true;
	snprintf(r->name, sizeof(r->name), "%s", dx[fr]);
	if (is_dataset(r->f, r->name))
		return 0;
	return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
				  "no %s: a DXchange file without %s",
				  frames_name(fr), dx[fr]);
}

/* A dataset named: DXchange's /exchange/data takes its flats and darks
 * from data_white and data_dark, as unnamed; one with an image_key beside
 * it is NXtomo's (its frames picked by the key, its angles the entry's). */
static int named_kind(h5r *r, const char *const *dx, parload_frames fr)
{
	char key[1200];
	const char *slash = strrchr(r->name, '/');

	if (strcmp(r->name, dx[0]) == 0)
		return dxchange(r, dx, fr);
	snprintf(key, sizeof(key), "%.*s/image_key",
		 (int)(slash - r->name), r->name);
	r->nxtomo = is_dataset(r->f, key);
	return 0;
}

/* Which dataset: named, else DXchange, NXtomo, the only 3-D one. */
static int choose(h5r *r, const char *named, parload_frames fr)
{
	static const char *const dx[] = PARLOAD__H5_DXCHANGE;
	found3 fd;

	if (named) {
		snprintf(r->name, sizeof(r->name), "%s%s",
			 named[0] == '/' ? "" : "/", named);
		if (!is_dataset(r->f, r->name))
			return no_such(r, r->name);
		return named_kind(r, dx, fr);
	}
	if (is_dataset(r->f, dx[0]))
		return dxchange(r, dx, fr);
	if (find_nxtomo(r))
		return r->nxtomo = true, 0;
	find3(r->f, &fd);
	if (fd.count == 1 && fr == PARLOAD_FRAMES_PROJECTIONS) {
		snprintf(r->name, sizeof(r->name), "%s", fd.first);
		return 0;
	}
	if (fd.count == 1)
		return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
					  "no %s: neither DXchange nor NXtomo "
					  "(an image_key)", frames_name(fr));
	return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
				  "has no dataset given and %zu 3-D datasets%s%s",
				  fd.count, fd.count ? ": " : "",
				  fd.count ? fd.list + 2 : "");
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
static int pixel_type(h5r *r, parload_desc *d)
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
					  r->name, class_name(k));
	if (!t)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: %s%s of %zu bytes (parload "
					  "reads " PARLOAD__H5_TYPES ")",
					  r->name,
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

static int shape(h5r *r)
{
	hsize_t dims[H5S_MAX_RANK];
	const int rank = H5Sget_simple_extent_ndims(r->space);

	if (rank < 0 || H5Sget_simple_extent_dims(r->space, dims, NULL) < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: unreadable dataspace", r->name);
	if (rank != 2 && rank != 3)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: a %d-D dataset (parload reads "
					  "3-D (views, rows, columns) and 2-D)",
					  r->name, rank);
	r->rank = rank;
	r->dims[0] = rank == 3 ? dims[0] : 1;
	r->dims[1] = dims[rank - 2];
	r->dims[2] = dims[rank - 1];
	if (!r->dims[0] || !r->dims[1] || !r->dims[2] ||
	    r->dims[1] > UINT32_MAX || r->dims[2] > UINT32_MAX)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: %" PRIu64 " x %" PRIu64 " x %"
					  PRIu64 " (empty, or rows past 32 "
					  "bits)", r->name,
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
					  (uint64_t)n, want, r->name);
	if (ok < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s cannot be read", name);
	return 0;
}

/* A table of n entries of size bytes, zeroed; n is a count read from the
 * file, which tables_fit() let through. */
static void *table(h5r *r, uint64_t n, size_t size)
{
	uint64_t bytes;

	if (!parload__mul_ok(n ? n : 1, size, &bytes) || bytes > SIZE_MAX) {
		parload__fail_nomem(r->err, r->file);
		return NULL;
	}
	return parload__sys_calloc((size_t)bytes, 1);
}

/* The most a frame of the file costs in this reader's tables: its place
 * among the frames read (8), its image_key (4), its angle (8 read, 4
 * kept) and, chunked, its view (8). */
#define FRAME_TABLES 32

/* The tables of the dataset's frames can be had: none is made for a
 * count the memory cannot hold (an 11 KB file may claim 2^62 frames). */
static int tables_fit(h5r *r)
{
	char things[1200];

	snprintf(things, sizeof(things), "table entries (the frames of %s)",
		 r->name);
	return parload__memory_check(r->err, r->file, r->dims[0], things,
				     FRAME_TABLES);
}

/* Which frames: NXtomo's image_key picks them, else all. */
static int frames(h5r *r, parload_frames fr)
{
	const uint64_t all = r->dims[0];
	char key[1200];
	int32_t *k;
	int rc;

	snprintf(key, sizeof(key), "%s/image_key", r->dir);
	if (!(r->frame = table(r, all, sizeof(*r->frame))) ||
	    !(k = table(r, all, sizeof(*k))))
		return PARLOAD_ENOMEM;
	rc = r->dxchange ? 1 : read_1d(r, key, H5T_NATIVE_INT32, k, all, KEYS,
				       NULL);
	for (uint64_t i = 0; rc == 0 && i < all; i++)
		if (k[i] == (int32_t)fr)
			r->frame[r->n++] = i;
	for (uint64_t i = 0; rc == 1 && i < all; i++)
		r->frame[r->n++] = i;
	parload__sys_free(k);
	if (rc == 1 && fr != PARLOAD_FRAMES_PROJECTIONS && !r->dxchange)
		return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
					  "%s: no %s: no image_key beside it",
					  r->name, frames_name(fr));
	if (rc <= 0 && r->n == 0)
		return rc ? rc : parload__fail_path(r->err, PARLOAD_EINVAL, 0,
						    r->file,
						    "%s: no %s (image_key %d)",
						    r->name, frames_name(fr),
						    (int)fr);
	return rc < 0 ? rc : 0;
}

/* DXchange theta of /exchange/data; NXtomo rotation_angle: in degrees
 * (read as doubles, scaled as their units say, kept as floats). */
static int angles(h5r *r)
{
	static const char *const dx[] = PARLOAD__H5_DXCHANGE;
	const uint64_t all = r->dims[0];
	char name[1200];
	double *v, deg = 1.0;
	float *a;
	int rc = 1;

	if (!(v = table(r, all, sizeof(*v))))
		return PARLOAD_ENOMEM;
	if (strcmp(r->name, dx[0]) == 0) {
		rc = read_1d(r, PARLOAD__H5_THETA, H5T_NATIVE_DOUBLE, v, all,
			     ANGLES, &deg);
	} else if (r->nxtomo || !r->dxchange) {
		snprintf(name, sizeof(name), "%s/rotation_angle", r->dir);
		rc = read_1d(r, name, H5T_NATIVE_DOUBLE, v, all, ANGLES, &deg);
		if (rc == 1 && r->nxtomo) {
			const char *slash = strchr(r->name + 1, '/');

			snprintf(name, sizeof(name),
				 "%.*s/sample/rotation_angle",
				 (int)(slash - r->name), r->name);
			rc = read_1d(r, name, H5T_NATIVE_DOUBLE, v, all, ANGLES,
				     &deg);
		}
	}
	a = rc == 0 ? table(r, r->n, sizeof(*a)) : NULL;
	for (uint64_t i = 0; a && i < r->n; i++)
		a[i] = (float)(v[r->frame[i]] * deg);
	parload__sys_free(v);
	if (rc == 0 && !a)
		return PARLOAD_ENOMEM;
	r->c->strips.angles = a;
	return rc < 0 ? rc : 0;
}

/* ---- where the rows lie ---- */

typedef struct h5arg {
	char *file, *name;
	int rank;
	uint32_t height, width;
	size_t elem;            /* bytes per pixel */
} h5arg;

typedef struct h5state {
	hid_t f, d, type;
} h5state;

static void arg_free(void *p)
{
	h5arg *a = p;

	parload__sys_free(a->file);
	parload__sys_free(a->name);
	parload__sys_free(a);
}

static void dec_close(void *p)
{
	h5state *s = p;

	if (!s)
		return;
	h5_enter();
	h5_close(&s->type, H5Tclose);
	h5_close(&s->d, H5Dclose);
	h5_close(&s->f, H5Fclose);
	h5_leave();
	parload__sys_free(s);
}

static int dec_open(const parload__strips *t, void **state,
		    parload_error *err)
{
	const h5arg *a = t->arg;
	h5state *s = parload__sys_calloc(1, sizeof(*s));
	char why[200];

	if (!s)
		return parload__fail_nomem(err, a->file);
	h5_enter();
	s->f = H5Fopen(a->file, H5F_ACC_RDONLY, H5P_DEFAULT);
	s->d = s->f < 0 ? -1 : H5Dopen2(s->f, a->name, H5P_DEFAULT);
	s->type = s->d < 0 ? -1 : H5Dget_type(s->d);
	h5_why(why);
	h5_leave();
	*state = s;
	if (s->type >= 0)
		return 0;
	dec_close(s);
	*state = NULL;
	return parload__fail_path(err, PARLOAD_EOPEN, 0, a->file,
				  "%s cannot be opened: %s", a->name, why);
}

/* Strip i's rows through H5Dread, in the stored type (no conversion). */
static int dec_strip(void *p, const parload__strips *t, uint64_t i,
		     unsigned char *out, size_t out_len, parload_error *err)
{
	const h5arg *a = t->arg;
	const h5state *s = p;
	const uint64_t j = i % t->per_view, r0 = j * t->rows;
	const uint64_t rows = a->height - r0 < t->rows ? a->height - r0 :
							 t->rows;
	const uint32_t page = parload__strip_of(t, i, NULL).page;
	hsize_t start[3] = { page, r0, 0 };
	hsize_t count[3] = { 1, rows, a->width };
	hsize_t n = rows * a->width;
	hid_t fs, ms;
	herr_t ok = -1;
	char why[200] = "";

	if ((size_t)n * a->elem > out_len)
		return parload__fail(err, PARLOAD_EINVAL, 0, a->file,
				     i / t->per_view, PARLOAD_NONE,
				     "%s: a strip of %zu bytes into %zu",
				     a->name, (size_t)n * a->elem, out_len);
	h5_enter();
	fs = H5Dget_space(s->d);
	ms = H5Screate_simple(1, &n, NULL);
	if (fs >= 0 && ms >= 0 &&
	    H5Sselect_hyperslab(fs, H5S_SELECT_SET,
				a->rank == 3 ? start : start + 1, NULL,
				a->rank == 3 ? count : count + 1, NULL) >= 0)
		ok = H5Dread(s->d, s->type, ms, fs, H5P_DEFAULT, out);
	if (ok < 0)
		h5_why(why);
	h5_close(&ms, H5Sclose);
	h5_close(&fs, H5Sclose);
	h5_leave();
	if (ok < 0)
		return parload__fail(err, PARLOAD_EIO, 0, a->file,
				     i / t->per_view, PARLOAD_NONE,
				     "%s: frame %" PRIu64 " rows %" PRIu64
				     "-%" PRIu64 " cannot be read: %s",
				     a->name, (uint64_t)page, r0,
				     r0 + rows - 1, why);
	return 0;
}

static const parload__decoder h5_decoder = {
	.name = "libhdf5",
	.open = dec_open,
	.decode = dec_strip,
	.close = dec_close,
	.free_arg = arg_free,
};

/* The serial reasons, kept for the life of the process (a table's
 * parload_stats.serial outlives it): one per distinct text. */
static const char *interned(const char *text)
{
	static char kept[32][200];
	static size_t n;
	const char *found = "HDF5 data is read through libhdf5, one thread "
			    "at a time";

	for (size_t i = 0; i < n; i++)
		if (strcmp(kept[i], text) == 0)
			return kept[i];
	if (n < sizeof(kept) / sizeof(kept[0])) {
		snprintf(kept[n], sizeof(kept[n]), "%s", text);
		found = kept[n++];
	}
	return found;
}

/* Strips of `rows` rows read through libhdf5 (held under h5_lock, so the
 * static table is safe). */
static int custom(h5r *r, uint32_t rows, const char *why)
{
	parload__strips *t = &r->c->strips;
	h5arg *a = parload__sys_calloc(1, sizeof(*a));

	if (!a || !(a->file = parload__sys_strdup(r->file)) ||
	    !(a->name = parload__sys_strdup(r->name))) {
		if (a)
			arg_free(a);
		return parload__fail_nomem(r->err, r->file);
	}
	a->rank = r->rank;
	a->height = (uint32_t)r->dims[1];
	a->width = (uint32_t)r->dims[2];
	a->elem = r->c->desc.bytes_per_pixel;
	t->codec = PARLOAD__CODEC_CUSTOM;
	t->decoder = &h5_decoder;
	t->arg = a;
	t->serial = interned(why);
	t->rows = rows;
	t->per_view = (uint32_t)((r->dims[1] + rows - 1) / rows);
	parload__strips_clear(t);
	for (uint64_t v = 0; v < r->n; v++)
		for (uint32_t j = 0; j < t->per_view; j++)
			if (parload__strips_add(t, v * t->per_view + j,
						&(parload__strip){
						.page = (uint32_t)r->frame[v] }))
				return parload__fail_nomem(r->err, r->file);
	return 0;
}

/* The table's shape: its views, and strips a view. */
static void table_shape(h5r *r, uint32_t per_view)
{
	r->c->strips.views = r->n;
	r->c->strips.per_view = per_view;
}

/* file, one of the container's paths: its index there, added when it
 * is not yet (an external link's file, external storage's). */
static int add_file(h5r *r, const char *file, uint32_t *index)
{
	parload__container *c = r->c;
	char **more;

	for (size_t k = 0; k < c->n; k++)
		if (strcmp(c->paths[k], file) == 0) {
			*index = (uint32_t)k;
			return 0;
		}
	if (c->n >= UINT32_MAX ||
	    !(more = parload__sys_malloc((c->n + 1) * sizeof(*more))))
		return parload__fail_nomem(r->err, r->file);
	memcpy(more, c->paths, c->n * sizeof(*more));
	if (!(more[c->n] = parload__sys_strdup(file))) {
		parload__sys_free(more);
		return parload__fail_nomem(r->err, r->file);
	}
	parload__sys_free(c->paths);
	c->paths = more;
	*index = (uint32_t)c->n++;
	return 0;
}

/* The file that holds the dataset's bytes: the file named, or the one an
 * external link leads to, which libhdf5 opened (its name as libhdf5
 * found it) and whose offsets H5Dget_offset and the chunk index give. */
static int data_file(h5r *r)
{
	const ssize_t n = H5Fget_name(r->d, NULL, 0);
	char *name;
	int rc;

	r->df = H5Iget_file_id(r->d);
	if (n <= 0 || r->df < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: its file is unknown "
					  "to libhdf5", r->name);
	if (!(name = parload__sys_malloc((size_t)n + 1)))
		return parload__fail_nomem(r->err, r->file);
	H5Fget_name(r->d, name, (size_t)n + 1);
	rc = add_file(r, name, &r->dfi);
	parload__sys_free(name);
	if (rc == 0)
		r->dfile = r->c->paths[r->dfi];
	return rc;
}

/* The offset in the file f where libhdf5's reads end: its end of
 * allocation (the end of file its superblock states, an offset in the
 * file: H5Fget_eoa counts the user block), past which H5Dread gives no
 * byte of the file (fill values for a contiguous dataset's, an error for
 * a chunk); UINT64_MAX where libhdf5 does not say. */
static uint64_t read_end(hid_t f)
{
#if H5_VERSION_GE(1, 10, 0)
	haddr_t eoa = HADDR_UNDEF;

	return H5Fget_eoa(f, &eoa) < 0 || eoa == HADDR_UNDEF ? UINT64_MAX :
							       (uint64_t)eoa;
#else
	(void)f;
	return UINT64_MAX;
#endif
}

/* Bytes at base, a view's each, in the dataset's file (every strip is
 * checked against that file's size where the files are opened:
 * source.c's fit_container). */
static int contiguous(h5r *r, uint64_t view_bytes)
{
	parload__strips *t = &r->c->strips;
	const haddr_t base = H5Dget_offset(r->d);
	struct stat sb;
	uint64_t all, end;

	table_shape(r, 1);
	if (base == HADDR_UNDEF)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: no storage allocated (the "
					  "dataset was never written)",
					  r->name);
	/* Every frame's bytes in the file that holds them (their sum past
	 * 64 bits too). */
	if (parload__sys_stat(r->dfile, &sb) == 0 &&
	    (!parload__mul_ok(r->dims[0], view_bytes, &all) ||
	     (uint64_t)sb.st_size < base || (uint64_t)sb.st_size - base < all))
		return parload__fail(r->err, PARLOAD_ETRUNCATED, 0, r->dfile,
				     (uint64_t)sb.st_size > base ?
					     ((uint64_t)sb.st_size - base) /
						     view_bytes :
					     0,
				     (uint64_t)sb.st_size,
				     "%s: %" PRIu64 " frames of %" PRIu64
				     " bytes at %" PRIu64 " past the file's "
				     "end", r->name, (uint64_t)r->dims[0],
				     view_bytes, (uint64_t)base);
	/* libhdf5 reads none of them past its end of allocation. */
	end = read_end(r->df);
	if (!parload__mul_ok(r->dims[0], view_bytes, &all) || end < base ||
	    end - base < all)
		return parload__fail(r->err, PARLOAD_ECONTAINER, 0, r->dfile,
				     PARLOAD_NONE, end,
				     "%s: %" PRIu64 " frames of %" PRIu64
				     " bytes at %" PRIu64 " past the end of "
				     "the file its superblock states",
				     r->name, (uint64_t)r->dims[0],
				     view_bytes, (uint64_t)base);
	t->rows = (uint32_t)r->dims[1];
	t->codec = PARLOAD__CODEC_NONE;
	for (uint64_t v = 0; v < r->n; v++)
		if (parload__strips_add(t, v, &(parload__strip){
				.off = base + r->frame[v] * view_bytes,
				.bytes = view_bytes, .file = r->dfi,
				.page = (uint32_t)r->frame[v] }))
			return parload__fail_nomem(r->err, r->file);
	return 0;
}

/* One segment of external storage: bytes [at, at + len) of the dataset
 * at off of file. */
typedef struct segment {
	uint64_t at, len, off;
	uint32_t file;
} segment;

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		const uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* An external storage file's name as libhdf5 1.10 opens it: a relative
 * name after the prefix of the dataset's access list (HDF5_EXTFILE_PREFIX
 * as libhdf5 read it when it started, "${ORIGIN}" made the HDF5 file's
 * directory; H5Pset_efile_prefix), else as it is, from the current
 * directory (H5_combine_path).  into holds size bytes. */
static int segment_name(h5r *r, const char *prefix, const char *name,
			char *into, size_t size)
{
	const size_t n = strlen(prefix);

	if (name[0] == '/' || n == 0)
		snprintf(into, size, "%s", name);
	else if (snprintf(into, size, "%s%s%s", prefix,
			  prefix[n - 1] == '/' ? "" : "/", name) >= (int)size)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: an external file's "
					  "name past %zu bytes", r->name,
					  size - 1);
	return 0;
}

/* The dataset's segments that hold its bytes (total), each file in the
 * container's files: *segs (to free), *count. */
static int segments(h5r *r, uint64_t total, segment **segs, uint64_t *count)
{
	const int n = H5Pget_external_count(r->dcpl);
	hid_t dapl = H5Dget_access_plist(r->d);
	const ssize_t plen = dapl < 0 ? -1 :
					H5Pget_efile_prefix(dapl, NULL, 0);
	char *prefix = plen < 0 ? NULL : parload__sys_malloc((size_t)plen + 1);
	char name[4096], path[4096];
	struct stat sb;
	uint64_t at = 0;
	int rc = 0;

	*count = 0;
	*segs = n > 0 ? parload__sys_calloc((size_t)n, sizeof(**segs)) : NULL;
	if (!prefix || !*segs)
		rc = plen < 0 || n <= 0 ?
			     parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
						r->file, "%s: unreadable "
						"external storage", r->name) :
			     parload__fail_nomem(r->err, r->file);
	/* No prefix set: none written. */
	if (prefix)
		prefix[0] = '\0';
	if (rc == 0 && H5Pget_efile_prefix(dapl, prefix, (size_t)plen + 1) < 0)
		prefix[0] = '\0';
	for (int k = 0; rc == 0 && k < n && at < total; k++) {
		off_t off = 0;
		hsize_t size = 0;
		segment *s = &(*segs)[*count];

		name[sizeof(name) - 1] = '\0';
		if (H5Pget_external(r->dcpl, (unsigned)k, sizeof(name), name,
				    &off, &size) < 0 || off < 0 ||
		    name[sizeof(name) - 1])
			rc = parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
						r->file, "%s: external file %d "
						"unreadable", r->name, k);
		s->at = at;
		s->off = (uint64_t)off;
		s->len = PARLOAD__MIN((uint64_t)size, total - at);
		if (rc || s->len == 0)
			continue;
		if ((rc = segment_name(r, prefix, name, path, sizeof(path))))
			break;
		if (parload__sys_stat(path, &sb) != 0) {
			rc = parload__fail_path(r->err, PARLOAD_EOPEN, errno,
						path, "external storage of %s "
						"in %s (\"%s\"%s)",
						r->name, r->file, name,
						name[0] == '/' ? "" :
						prefix[0] ? ", after libhdf5's "
						"prefix" : ", from the current "
						"directory, as libhdf5 finds "
						"it");
			break;
		}
		if ((rc = add_file(r, path, &s->file)))
			break;
		if (s->off > UINT64_MAX - s->len)
			rc = parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
						path, "%s: external storage of "
						"%" PRIu64 " bytes at %" PRIu64
						" past 64 bits", r->name,
						s->len, s->off);
		at += s->len;
		++*count;
	}
	if (rc == 0 && at < total)
		rc = parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					"%s: external storage of %" PRIu64
					" bytes for %" PRIu64, r->name, at,
					total);
	parload__sys_free(prefix);
	h5_close(&dapl, H5Pclose);
	return rc;
}

/* External storage (H5Pset_external): the dataset's bytes are its
 * segments' one after another, each in a file of its own; each view's
 * rows in strips of as many rows as lie in one segment wherever the
 * segments meet (when they all meet between rows; else through
 * libhdf5). */
static int external(h5r *r, uint64_t view_bytes)
{
	parload__strips *t = &r->c->strips;
	const uint64_t row = r->c->desc.row_size, height = r->dims[1];
	segment *seg;
	uint64_t n, g = height, k = 0;
	int rc = segments(r, r->dims[0] * view_bytes, &seg, &n);

	for (uint64_t i = 1; rc == 0 && g && i < n; i++)
		g = seg[i].at % row ? 0 : gcd(g, seg[i].at / row % height);
	if (rc == 0 && g == 0) {
		table_shape(r, 1);
		rc = custom(r, (uint32_t)height, "external storage whose files "
			    "meet inside a row is read through libhdf5, one "
			    "thread at a time");
	} else if (rc == 0) {
		table_shape(r, (uint32_t)(height / g));
		t->rows = (uint32_t)g;
		t->codec = PARLOAD__CODEC_NONE;
	}
	for (uint64_t v = 0; rc == 0 && t->codec == PARLOAD__CODEC_NONE &&
			     v < r->n; v++)
		for (uint32_t j = 0; rc == 0 && j < t->per_view; j++) {
			const uint64_t at = r->frame[v] * view_bytes +
					    j * g * row;
			parload__strip p;

			while (at - seg[k].at >= seg[k].len)
				k++;
			p = (parload__strip){ .off = seg[k].off + at - seg[k].at,
					      .bytes = g * row,
					      .file = seg[k].file,
					      .page = (uint32_t)r->frame[v] };
			if (parload__strips_add(t, v * t->per_view + j, &p))
				rc = parload__fail_nomem(r->err, r->file);
		}
	parload__sys_free(seg);
	return rc;
}

/* The codec of the filter pipeline, or CUSTOM with why; ENOTSUP for a
 * filter whose plugin is missing. */
static int pipeline(h5r *r, parload__codec *codec, char *why, size_t size)
{
	const int nf = H5Pget_nfilters(r->dcpl);
	int ids[2] = { -1, -1 };

	*codec = PARLOAD__CODEC_NONE;
	for (int k = 0; k < nf; k++) {
		char name[64] = "";
		unsigned flags, cd[8];
		size_t ncd = 8;
		const H5Z_filter_t id = H5Pget_filter2(r->dcpl, (unsigned)k,
						       &flags, &ncd, cd,
						       sizeof(name), name,
						       NULL);

		if (H5Zfilter_avail(id) <= 0)
			return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0,
						  r->file,
						  "%s: HDF5 filter %d (%s) is "
						  "not available (its plugin "
						  "is not installed)", r->name,
						  (int)id,
						  name[0] ? name : "unnamed");
		if (k < 2)
			ids[k] = id;
		if (*codec == PARLOAD__CODEC_NONE && id != H5Z_FILTER_DEFLATE &&
		    id != H5Z_FILTER_SHUFFLE) {
			*codec = PARLOAD__CODEC_CUSTOM;
			snprintf(why, size, "HDF5 filter %d (%s) is read "
				 "through libhdf5, one thread at a time",
				 (int)id, name[0] ? name : "unnamed");
		}
	}
	if (*codec == PARLOAD__CODEC_CUSTOM || nf == 0)
		return 0;
	if (nf == 1 && ids[0] == H5Z_FILTER_DEFLATE)
		*codec = PARLOAD__CODEC_DEFLATE;
	else if (nf == 2 && ids[0] == H5Z_FILTER_SHUFFLE &&
		 ids[1] == H5Z_FILTER_DEFLATE)
		*codec = PARLOAD__CODEC_SHUFFLE_DEFLATE;
	else {
		*codec = PARLOAD__CODEC_CUSTOM;
		snprintf(why, size, "HDF5 filters %d then %d are read through "
			 "libhdf5, one thread at a time", ids[0], ids[1]);
	}
	return 0;
}

/* What libhdf5 says of where the dataset is, for the parser; false
 * when it does not say (1.12 and later name objects by tokens: those
 * fall back). */
static bool where(hid_t f, hid_t d, parload__h5where *w)
{
#if H5_VERSION_GE(1, 12, 0)
	(void)f, (void)d, (void)w;
	return false;
#else
	hid_t fcpl = H5Fget_create_plist(f), s = H5Dget_space(d);
	hid_t dcpl = H5Dget_create_plist(d), t = H5Dget_type(d);
	hsize_t ub = 0, dims[3], chunk[3];
	size_t so = 0, sl = 0;
	unsigned ik = 0;
	H5O_info_t info;
	bool ok;

	memset(w, 0, sizeof(*w));
	w->rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
	ok = fcpl >= 0 && t >= 0 && dcpl >= 0 && w->rank >= 1 &&
	     w->rank <= 3 && H5Pget_userblock(fcpl, &ub) >= 0 &&
	     H5Pget_sizes(fcpl, &so, &sl) >= 0 &&
	     H5Pget_istore_k(fcpl, &ik) >= 0 &&
	     H5Sget_simple_extent_dims(s, dims, NULL) == w->rank &&
	     H5Pget_chunk(dcpl, w->rank, chunk) == w->rank &&
	     H5Oget_info2(d, &info, H5O_INFO_BASIC) >= 0;
	if (ok) {
		*w = (parload__h5where){ .super = ub, .header = info.addr,
					 .istore_k = ik, .so = (unsigned)so,
					 .sl = (unsigned)sl, .rank = w->rank,
					 .elem = (uint32_t)H5Tget_size(t) };
		for (int k = 0; k < w->rank; k++) {
			w->dims[k] = dims[k];
			w->chunk[k] = chunk[k];
		}
	}
	h5_close(&t, H5Tclose);
	h5_close(&dcpl, H5Pclose);
	h5_close(&s, H5Sclose);
	h5_close(&fcpl, H5Pclose);
	return ok;
#endif
}

/* The chunk index of dataset name as parload's parser reads it from the
 * file, each chunk to put: 0, 1 to fall back, put's code, or a corrupt
 * key's (ECONTAINER). */
static int direct_chunks(const char *file, const char *name, hid_t f, hid_t d,
			 parload__h5put put, void *ctx, parload_error *err)
{
	parload__h5where w;
	int fd, rc;

	if (!where(f, d, &w) ||
	    (fd = parload__sys_open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	rc = parload__h5index_walk(fd, &w, put, ctx, file, name, err);
	parload__sys_close(fd);
	return rc;
}

/* The user block's size, which libhdf5 before 1.14.4 leaves out of the
 * chunks' addresses (HDF5 issue 3003); 0 from 1.14.4 on. */
static hsize_t chunk_base(hid_t f)
{
	hsize_t ub = 0;
#if !H5_VERSION_GE(1, 14, 4)
	hid_t fcpl = H5Fget_create_plist(f);

	if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0)
		ub = 0;
	h5_close(&fcpl, H5Pclose);
#else
	(void)f;
#endif
	return ub;
}

/* Whether libhdf5's reads of the chunk at `at` find a chunk of the bytes
 * its index listed there: a key listed whose place the reads look up
 * elsewhere (an element coordinate not 0: they find none, and give fill
 * values) is no chunk of the dataset's.  (H5Dget_chunk_storage_size
 * looks the chunk up as H5Dread does; H5Dget_chunk_info_by_coord of
 * 1.10.8 finds the key all the same.) */
static bool reads_find(hid_t d, const hsize_t *at, hsize_t bytes)
{
#if H5_VERSION_GE(1, 10, 2)
	hsize_t found = 0;

	return H5Dget_chunk_storage_size(d, at, &found) >= 0 && found == bytes;
#else
	(void)d, (void)at, (void)bytes;
	return true;
#endif
}

/* The chunk index through libhdf5: a call per chunk, each to put. */
static int lib_chunks(const char *file, const char *name, hid_t f, hid_t d,
		      parload__h5put put, void *ctx, parload_error *err)
{
	hid_t fs = H5Dget_space(d);
	const int rank = fs < 0 ? -1 : H5Sget_simple_extent_ndims(fs);
	const hsize_t base = chunk_base(f);
	const uint64_t end = read_end(f);
	hsize_t n = 0;
	int rc = 0;

	if (rank < 2 || rank > 3 || H5Dget_num_chunks(d, fs, &n) < 0) {
		h5_close(&fs, H5Sclose);
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, file,
					  "%s: unreadable chunk index", name);
	}
	for (hsize_t i = 0; rc == 0 && i < n; i++) {
		hsize_t at[3] = { 0, 0, 0 };
		unsigned mask = 0;
		haddr_t addr = HADDR_UNDEF;
		hsize_t bytes = 0;

		if (H5Dget_chunk_info(d, fs, i, rank == 3 ? at : at + 1, &mask,
				      &addr, &bytes) < 0 ||
		    addr == HADDR_UNDEF)
			rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0,
						file, "%s: chunk %" PRIu64
						" unreadable", name,
						(uint64_t)i);
		else if (base + addr > end || bytes > end - base - addr)
			rc = parload__fail(err, PARLOAD_ECONTAINER, 0, file,
					   PARLOAD_NONE, base + addr,
					   "%s: chunk %" PRIu64 " of %" PRIu64
					   " bytes past the end of the file "
					   "its superblock states (%" PRIu64
					   "), which libhdf5 does not read",
					   name, (uint64_t)i, (uint64_t)bytes,
					   end);
		else if (!reads_find(d, rank == 3 ? at : at + 1, bytes))
			rc = parload__fail(err, PARLOAD_ECONTAINER, 0, file,
					   PARLOAD_NONE, base + addr,
					   "%s: a corrupt chunk index: chunk %"
					   PRIu64 ", listed at (%" PRIu64 ", %"
					   PRIu64 ", %" PRIu64 "), is not what "
					   "libhdf5 reads there", name,
					   (uint64_t)i, (uint64_t)at[0],
					   (uint64_t)at[1], (uint64_t)at[2]);
		else
			rc = put(ctx, &(parload__h5chunk){
					      .at = { at[0], at[1], at[2] },
					      .addr = base + addr,
					      .bytes = bytes, .mask = mask });
	}
	h5_close(&fs, H5Sclose);
	return rc;
}

/* Every loaded frame's chunks into its strips (zeroed): by parload's
 * walk of the index, else by libhdf5's calls. */
static int chunk_table(h5r *r, parload__h5strips *p)
{
	parload__strips *t = &r->c->strips;
	int rc = r->parser ? direct_chunks(r->dfile, r->name, r->df, r->d,
					   parload__h5strips_put, p, r->err) :
			     1;

	if (rc == 1) {
		/* What the parser gave before it gave up is given again. */
		parload__strips_clear(t);
		p->seen = 0;
		p->masked = false;
		rc = lib_chunks(r->dfile, r->name, r->df, r->d,
				parload__h5strips_put, p, r->err);
	}
	return rc;
}

static int chunked(h5r *r, uint64_t elem)
{
	parload__strips *t = &r->c->strips;
	hsize_t cd[3] = { 1, 1, 1 };
	const int crank = H5Pget_chunk(r->dcpl, r->rank,
				       r->rank == 3 ? cd : cd + 1);
	char why[200] = "";
	parload__codec codec;
	parload__h5strips p = { .t = t,
				.dims = { r->dims[0], r->dims[1], r->dims[2] },
				.views = r->n,
				.file = r->dfile, .index = r->dfi,
				.name = r->name,
				.err = r->err };
	uint64_t *view = NULL;
	int rc;

	if (crank != r->rank)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: unreadable chunk shape", r->name);
	rc = pipeline(r, &codec, why, sizeof(why));
	if (rc)
		return rc;
	if (cd[0] != 1 || cd[2] != r->dims[2] || cd[1] > UINT32_MAX) {
		snprintf(why, sizeof(why), "HDF5 chunks of %" PRIu64 " x %"
			 PRIu64 " x %" PRIu64 " are read through libhdf5, "
			 "one thread at a time", (uint64_t)cd[0],
			 (uint64_t)cd[1], (uint64_t)cd[2]);
		codec = PARLOAD__CODEC_CUSTOM;
	}
	/* A chunk's rows, whole: the last strip may reach past the view. */
	t->rows = (uint32_t)(codec != PARLOAD__CODEC_CUSTOM ? cd[1] :
			     cd[1] < r->dims[1] ? cd[1] : r->dims[1]);
	table_shape(r, (uint32_t)((r->dims[1] + t->rows - 1) / t->rows));
	if (codec == PARLOAD__CODEC_CUSTOM)
		return custom(r, t->rows, why);
	/* A chunk's bytes: its rows may be more than the view's. */
	if (!parload__mul_ok((uint64_t)t->rows * r->dims[2], elem, &p.want))
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: chunks of %" PRIu32 " x %" PRIu64
					  " elements of %" PRIu64 " bytes "
					  "overflow 64 bits", r->name, t->rows,
					  (uint64_t)r->dims[2], elem);
	p.plain = codec == PARLOAD__CODEC_NONE;
	/* Some frames (NXtomo's image_key): each frame's view, or none. */
	if (r->n < r->dims[0]) {
		if (!(view = table(r, r->dims[0], sizeof(*view))))
			return PARLOAD_ENOMEM;
		memset(view, 0xff, r->dims[0] * sizeof(*view));
		for (uint64_t v = 0; v < r->n; v++)
			view[r->frame[v]] = v;
		p.view = view;
	}
	rc = chunk_table(r, &p);
	parload__sys_free(view);
	t->codec = codec;
	t->elem = (uint32_t)elem;
	if (rc == 0 && !parload__h5strips_whole(&p))
		rc = custom(r, t->rows, "HDF5 chunks that are not all written "
			    "or skipped a filter are read through libhdf5, "
			    "one thread at a time");
	return rc;
}

static int layout(h5r *r, const parload_desc *d)
{
	const H5D_layout_t l = H5Pget_layout(r->dcpl);

	if (l == H5D_CONTIGUOUS && H5Pget_external_count(r->dcpl) > 0)
		return external(r, d->payload_size);
	if (l == H5D_CONTIGUOUS)
		return contiguous(r, d->payload_size);
	if (l == H5D_CHUNKED)
		return chunked(r, d->bytes_per_pixel);
	if (l == H5D_COMPACT) {
		table_shape(r, 1);
		return custom(r, (uint32_t)r->dims[1],
			      "a compact HDF5 dataset is read through "
			      "libhdf5, one thread at a time");
	}
	return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
				  "%s: an HDF5 layout parload does not read "
				  "(virtual or unknown)", r->name);
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

static int open_dataset(h5r *r)
{
	char *slash;

	r->d = H5Dopen2(r->f, r->name, H5P_DEFAULT);
	if (r->d < 0 || (r->type = H5Dget_type(r->d)) < 0 ||
	    (r->space = H5Dget_space(r->d)) < 0 ||
	    (r->dcpl = H5Dget_create_plist(r->d)) < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s cannot be opened",
					  r->name);
	snprintf(r->dir, sizeof(r->dir), "%s", r->name);
	slash = strrchr(r->dir, '/');
	*(slash == r->dir ? slash + 1 : slash) = '\0';
	if (strcmp(r->dir, "/") == 0)
		r->dir[0] = '\0';
	return 0;
}

static int read_meta(h5r *r, const char *named, parload_frames fr)
{
	parload_desc *d = &r->c->desc;
	int rc;

	if ((rc = open_file(r)) || (rc = choose(r, named, fr)) ||
	    (rc = open_dataset(r)) || (rc = data_file(r)) ||
	    (rc = pixel_type(r, d)) || (rc = shape(r)) ||
	    (rc = tables_fit(r)) || (rc = frames(r, fr)) || (rc = angles(r)))
		return rc;
	/* The sizes are derived as for a raw stream of the same rows. */
	rc = parload__h5_describe(d, d->pixel_type,
				  d->encoding == PARLOAD_ENC_BE,
				  (uint32_t)r->dims[2], (uint32_t)r->dims[1],
				  r->n, r->err);
	if (rc) {
		parload__error_prefix(r->err, r->file);
		return rc;
	}
	rc = layout(r, d);
	r->c->strips.views = r->n;
	r->c->strips.path = r->c->paths[0];
	return rc;
}

/* The module's read (hdf5_core.h's parload__h5_reader). */
static int lib_read(const char *file, const char *named, parload_frames fr,
		    bool parser, parload__container *out, parload_error *err)
{
	h5r r = { .err = err, .parser = parser, .f = -1, .d = -1, .type = -1,
		  .space = -1, .dcpl = -1, .df = -1, .c = out };
	int rc;

	memset(out, 0, sizeof(*out));
	out->paths = parload__sys_malloc(sizeof(*out->paths));
	if (!out->paths || !(out->paths[0] = parload__sys_strdup(file))) {
		parload__sys_free(out->paths);
		out->paths = NULL;
		return parload__fail_nomem(err, file);
	}
	out->n = 1;
	r.file = out->paths[0];
	h5_enter();
	rc = read_meta(&r, named, fr);
	h5_close(&r.dcpl, H5Pclose);
	h5_close(&r.space, H5Sclose);
	h5_close(&r.type, H5Tclose);
	h5_close(&r.d, H5Dclose);
	h5_close(&r.df, H5Fclose);
	h5_close(&r.f, H5Fclose);
	h5_leave();
	parload__sys_free(r.frame);
	if (rc)
		parload__container_free(out);
	return rc;
}

/* ---------------------------------------------------------------------
 * Writing (DXchange)
 * ------------------------------------------------------------------- */

static hid_t file_type(int pixel_type)
{
	switch (pixel_type) {
	case PARLOAD_PIXEL_U8: return H5T_STD_U8LE;
	case PARLOAD_PIXEL_U16: return H5T_STD_U16LE;
	case PARLOAD_PIXEL_I16: return H5T_STD_I16LE;
	case PARLOAD_PIXEL_U32: return H5T_STD_U32LE;
	case PARLOAD_PIXEL_I32: return H5T_STD_I32LE;
	case PARLOAD_PIXEL_F32: return H5T_IEEE_F32LE;
	default: return H5T_IEEE_F64LE;
	}
}

/* A string attribute name = value on object o. */
static herr_t put_text(hid_t o, const char *name, const char *value)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = -1;
	herr_t ok = -1;

	if (t >= 0 && s >= 0 && H5Tset_size(t, strlen(value) + 1) >= 0 &&
	    (a = H5Acreate2(o, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
		ok = H5Awrite(a, t, value);
	h5_close(&a, H5Aclose);
	h5_close(&s, H5Sclose);
	h5_close(&t, H5Tclose);
	return ok;
}

/* The handles of one write, closed together. */
typedef struct h5w {
	hid_t f, lcpl, dcpl, space, d, tspace, theta;
} h5w;

/* What w_why looks for, and finds, in libhdf5's error stack. */
typedef struct w_cause {
	const char *tmp; /* the temporary file, never named */
	char *why;       /* 200 bytes */
	bool errno_found;
} w_cause;

/* Each error of the stack, innermost first: the first that carries a
 * system call's errno (libhdf5's file drivers write "errno = N" into
 * their text, with the temporary file's name, the time and a buffer's
 * address) gives the cause as the system says it ("No space left on
 * device"); else the innermost error's text up to its first line break,
 * or where it names the temporary file, libhdf5's short message for it. */
static herr_t w_walk(unsigned n, const H5E_error2_t *e, void *data)
{
	w_cause *c = data;
	const char *at = e->desc ? strstr(e->desc, "errno = ") : NULL;
	int code;

	if (c->errno_found)
		return 0;
	if (at && sscanf(at + 8, "%d", &code) == 1 && code > 0) {
		snprintf(c->why, 200, "%s", strerror(code));
		c->errno_found = true;
	} else if (n == 0 && e->desc && !strstr(e->desc, c->tmp)) {
		snprintf(c->why, 200, "%.*s", (int)strcspn(e->desc, "\n"),
			 e->desc);
	} else if (n == 0 && H5Eget_msg(e->min_num, NULL, c->why, 200) < 0) {
		c->why[0] = '\0';
	}
	return 0;
}

/* Why the last libhdf5 call of a write failed, into why (200 bytes): one
 * line that names no file (parload__hdf5_write names the output). */
static void w_why(char *why, const char *tmp)
{
	w_cause c = { tmp, why, false };

	why[0] = '\0';
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, w_walk, &c);
}

/* Close every handle; the datasets' and the file's closes write what
 * libhdf5 still holds (a chunk cache, the metadata), so that their
 * failure is the write's: the first one's cause into why, and -1. */
static int w_close(h5w *w, char *why, const char *tmp)
{
	hid_t *const writes[] = { &w->theta, &w->d, &w->f };
	herr_t (*const close[])(hid_t) = { H5Dclose, H5Dclose, H5Fclose };
	int rc = 0;

	h5_close(&w->tspace, H5Sclose);
	h5_close(&w->space, H5Sclose);
	h5_close(&w->dcpl, H5Pclose);
	h5_close(&w->lcpl, H5Pclose);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		if (*writes[i] >= 0 && close[i](*writes[i]) < 0 && rc == 0) {
			w_why(why, tmp);
			rc = -1;
		}
		*writes[i] = H5I_INVALID_HID;
	}
	return rc;
}

/* The pixels, each view one chunk.  Uncompressed on a little-endian
 * host, the chunks are the views' bytes as they are, handed to the file
 * with H5Dwrite_chunk: libhdf5 1.10's H5Dwrite copies every chunk
 * through its chunk cache first.  Extract of the reference stream (2,000
 * chunks of 112 KiB): user time 0.06 -> 0.01 s. */
static herr_t write_views(const h5w *w, const parload_stack *st, hid_t t,
			  const hsize_t *chunk, size_t elem, int gzip)
{
	const size_t bytes = (size_t)(chunk[1] * chunk[2]) * elem;
	const unsigned char *px = st->pixels;

	if (gzip || parload__host_be() || chunk[1] != st->rows)
		return H5Dwrite(w->d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT,
				st->pixels);
	for (hsize_t i = 0; i < st->n; i++) {
		const hsize_t at[3] = { i, 0, 0 };

		if (H5Dwrite_chunk(w->d, H5P_DEFAULT, 0, at, bytes,
				   px + i * bytes) < 0)
			return -1;
	}
	return 0;
}

/* What step failed, or NULL. */
static const char *w_pixels(h5w *w, const char *tmp, const char *name,
			    const parload_stack *st, int gzip)
{
	const size_t elem = parload_pixel_size(st->pixel_type);
	hsize_t dims[3] = { st->n, st->rows, st->cols };
	hsize_t chunk[3] = { 1, st->rows, st->cols };
	const hid_t t = file_type(st->pixel_type);

	/* A chunk stays below libhdf5's 4 GiB. */
	while (chunk[1] > 1 && chunk[1] * chunk[2] * elem >= ((hsize_t)1 << 31))
		chunk[1] = (chunk[1] + 1) / 2;
	/* The temporary file parload_save made is created again, without
	 * O_TRUNC: on ext4 a file opened with O_TRUNC has all its dirty pages
	 * sent to the disk by the close that ends the write (the
	 * replace-via-truncate heuristic, auto_da_alloc), which the caller
	 * then waits for: 121 ms between the close and the rename in a
	 * traced extract -o OUT.h5 of the reference stream.  O_EXCL: a file
	 * that took the name meanwhile is not overwritten. */
	if (unlink(tmp) != 0 && errno != ENOENT)
		return "cannot replace the temporary file";
	if ((w->f = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT,
			      H5P_DEFAULT)) < 0)
		return "cannot create the file";
	if ((w->lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
	    H5Pset_create_intermediate_group(w->lcpl, 1) < 0 ||
	    (w->dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
	    H5Pset_chunk(w->dcpl, 3, chunk) < 0 ||
	    (gzip && (H5Pset_shuffle(w->dcpl) < 0 ||
		      H5Pset_deflate(w->dcpl, (unsigned)gzip) < 0)) ||
	    (w->space = H5Screate_simple(3, dims, NULL)) < 0)
		return "cannot set the dataset up";
	if ((w->d = H5Dcreate2(w->f, name, t, w->space, w->lcpl, w->dcpl,
			       H5P_DEFAULT)) < 0)
		return "cannot create the dataset";
	if (write_views(w, st, t, chunk, elem, gzip) < 0)
		return "cannot write the pixels";
	if (st->layout == PARLOAD_LAYOUT_SINOGRAMS &&
	    put_text(w->d, "axes", "rows:views:columns") < 0)
		return "cannot write the axes attribute";
	return NULL;
}

static const char *w_angles(h5w *w, const parload_stack *st)
{
	hsize_t n = st->angle_count;
	double *deg;
	herr_t ok;

	if (put_text(w->f, "implements", "exchange") < 0)
		return "cannot write the implements attribute";
	if (!st->angles || !n)
		return NULL;
	if (!(deg = parload__sys_malloc(n * sizeof(*deg))))
		return "out of memory";
	for (hsize_t i = 0; i < n; i++)
		deg[i] = st->angles[i];
	ok = (w->tspace = H5Screate_simple(1, &n, NULL)) >= 0 &&
	     (w->theta = H5Dcreate2(w->f, "/exchange/theta", H5T_IEEE_F64LE,
				    w->tspace, w->lcpl, H5P_DEFAULT,
				    H5P_DEFAULT)) >= 0 ?
		     H5Dwrite(w->theta, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
			      H5P_DEFAULT, deg) :
		     -1;
	parload__sys_free(deg);
	return ok < 0 ? "cannot write /exchange/theta" : NULL;
}

int parload__hdf5_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err)
{
	const uint64_t views = st->layout == PARLOAD_LAYOUT_VIEWS ? st->n :
								    st->rows;
	const char *name = o->dataset ? o->dataset :
			   st->layout == PARLOAD_LAYOUT_VIEWS ?
							"/exchange/data" :
							"/exchange/sinograms";
	h5w w = { -1, -1, -1, -1, -1, -1, -1 };
	const char *failed;
	char why[200] = "", later[200];

	if (o->gzip < 0 || o->gzip > 9)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "gzip level %d (1-9, or 0 for none)",
					  o->gzip);
	if (st->angles && st->angle_count != views)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "%" PRIu64 " angles for %" PRIu64
					  " views", st->angle_count, views);
	/* Errors are told in parload_error's one line, naming path: never
	 * printed by libhdf5 (h5_enter), never naming the temporary file. */
	h5_enter();
	failed = w_pixels(&w, tmp, name, st, o->gzip);
	if (!failed)
		failed = w_angles(&w, st);
	if (failed) {
		w_why(why, tmp);
		(void)w_close(&w, later, tmp); /* the first cause told */
	} else if (w_close(&w, why, tmp) < 0) {
		failed = "cannot write the file";
	}
	h5_leave();
	if (failed)
		return parload__fail_path(err, PARLOAD_EWRITE, 0, path,
					  "HDF5: %s %s%s%s", name, failed,
					  why[0] ? ": " : "", why);
	return 0;
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
	.ready = h5_ready,
};
#endif /* HAVE_HDF5 */
