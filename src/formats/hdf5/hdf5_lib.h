/*
 * hdf5_lib.h - what libhdf5's reader and writer share: hdf5.c (which
 * dataset, its type, frames and angles), hdf5_layout.c (where its rows
 * lie: contiguous, external or chunked storage, the decoder through
 * libhdf5) and hdf5_write.c (parload_save's DXchange).  The one lock
 * every libhdf5 call holds, its error text, and the reader's state.  In
 * the HDF5 module only (or linked in with it).
 */
#ifndef PARLOAD_HDF5_LIB_H
#define PARLOAD_HDF5_LIB_H
#include "formats/hdf5/hdf5_core.h"

#ifdef HAVE_HDF5
#include <hdf5.h>
#include <pthread.h>
#include <stdio.h>

/* Every libhdf5 call of libparload is made holding this (hdf5.c). */
extern pthread_mutex_t parload__h5_lock;

static inline void h5_enter(void)
{
	pthread_mutex_lock(&parload__h5_lock);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static inline void h5_leave(void)
{
	pthread_mutex_unlock(&parload__h5_lock);
}

static inline void h5_close(hid_t *id, herr_t (*fn)(hid_t))
{
	if (*id >= 0)
		fn(*id);
	*id = H5I_INVALID_HID;
}

/* The innermost message of libhdf5's error stack, or "". */
static inline herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
	char *buf = data;

	if (n == 0 && e->desc)
		snprintf(buf, 200, "%s", e->desc);
	return 0;
}

static inline const char *h5_why(char buf[200])
{
	buf[0] = '\0';
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, buf);
	return buf;
}

/* One dataset of a stream of several (a master file's, a virtual
 * dataset's sources): its file (NULL: the file named), its name there,
 * its frames first .. first + n - 1, which are the stream's from frame
 * at on. */
typedef struct h5part {
	char *file, *name;
	uint64_t first, n, at;
	bool all;              /* n is all its frames */
} h5part;

/* One read of libhdf5's reader. */
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
	parload__h5pick p;     /* the dataset, its frames (hdf5_choose.c) */
	int rank;
	hsize_t dims[3];       /* (frames, rows, columns) */
	parload__container *c;
	/* The stream's datasets (hdf5_parts.c), parts of them (owned); the
	 * file of the one open, where it is not the file named; the stream's
	 * type; why a virtual dataset is read through libhdf5 (NULL: its
	 * sources are the parts). */
	h5part *part;
	size_t parts;
	hid_t pf, type0;
	const char *vds_why;
	bool sources;          /* the parts are a virtual dataset's sources */
} h5r;

/* A table of n entries of size bytes, zeroed; n is a count read from the
 * file, which hdf5.c's tables_fit() let through. */
static inline void *table(h5r *r, uint64_t n, size_t size)
{
	uint64_t bytes;

	if (!parload__mul_ok(n ? n : 1, size, &bytes) || bytes > SIZE_MAX) {
		parload__fail_nomem(r->err, r->file);
		return NULL;
	}
	return parload__sys_calloc((size_t)bytes, 1);
}

/* hdf5.c: the dataset named r->p.name open in r's fields (d, type,
 * space, dcpl; df, dfile, dfi: its data file); its shape into rank and
 * dims; the type the stream's description reads. */
int parload__h5lib_open_dataset(h5r *r, hid_t loc);
int parload__h5lib_shape(h5r *r);
int parload__h5lib_pixel_type(h5r *r, parload_desc *d);
/* hdf5.c: the error for dataset name of r->file that cannot be opened
 * (a link to a file that is missing or that loops). */
int parload__h5lib_no_such(h5r *r, const char *name);
/* hdf5.c: the dataset's fields closed (d, type, space, dcpl, df, pf). */
void parload__h5lib_close_dataset(h5r *r);

/* hdf5_parts.c: the links (or datasets) data_ and digits of group, in
 * the order of their numbers (parload__h5be's members). */
int parload__h5lib_members(h5r *r, const char *group, char ***names,
			   size_t *n);
/* hdf5_parts.c: the stream's datasets, the chosen one open: a master
 * file's, a virtual dataset's sources (or the virtual dataset itself,
 * vds_why saying why), else the one; each checked against the first
 * (type, rows, columns); *all their frames. */
int parload__h5lib_parts(h5r *r, uint64_t *all);
/* hdf5_parts.c: the strips table of every part's frames read, one after
 * another (each part's by parload__h5lib_layout). */
int parload__h5lib_parts_layout(h5r *r, const parload_desc *d);
/* hdf5_layout.c: table from, of the libhdf5 decoder, joined to table to
 * (also the decoder's): its datasets after to's, from view0 on (the
 * module's h5_join). */
int parload__h5lib_custom_join(parload__strips *to, parload__strips *from,
			       uint64_t view0, const char *path,
			       parload_error *err);

/* hdf5_layout.c: where the rows of r's dataset (d its description) lie:
 * r's container's strips table, its files past the first. */
int parload__h5lib_layout(h5r *r, const parload_desc *d);
/* hdf5_layout.c: file, one of the container's paths: its index there,
 * added when it is not yet. */
int parload__h5lib_add_file(h5r *r, const char *file, uint32_t *index);
/* hdf5_layout.c: the file that holds r's dataset (r->df, dfile, dfi),
 * added to the container's files when it is another (an external
 * link's). */
int parload__h5lib_data_file(h5r *r);

#endif /* HAVE_HDF5 */
#endif
