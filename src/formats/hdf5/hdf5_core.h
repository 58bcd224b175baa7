/*
 * hdf5_core.h - what an HDF5 source means, written once for both of its
 * back-ends: parload's own reader (hdf5_native.c over hdf5_index.c),
 * which needs no libhdf5, and libhdf5's (hdf5.c, in its module).
 *
 * hdf5_core.c is the one entry the library calls (parload__hdf5_read):
 * it names the file and the dataset, asks the back-end PARLOAD_HDF5
 * picks (backend.h), and falls back from parload's own reader to
 * libhdf5's for the file it cannot take.  hdf5_choose.c says which
 * dataset, frames and angles a file holds, from what either back-end
 * answers of it (parload__h5be).  The rules both back-ends apply
 * are here as inline functions, compiled into the module too (it calls
 * nothing of the library for them): the DXchange datasets, the pixel
 * types parload reads (the one refusal of the types it does not), the
 * description, a contiguous dataset's strips table (a chunked one's is
 * hdf5_index.c's parload__chunks_put, for both), angles' units.
 */
#ifndef PARLOAD_HDF5_CORE_H
#define PARLOAD_HDF5_CORE_H
#include "formats/formats.h"

#include <stdio.h>
#include <string.h>

/* DXchange's datasets of projections, flats and darks, by
 * parload_frames. */
#define PARLOAD__H5_DXCHANGE                                              \
	{ "/exchange/data", "/exchange/data_white", "/exchange/data_dark" }
/* The group of a master file's datasets (NeXus NXmx, as DECTRIS writes
 * it): data_000001, data_000002, ... */
#define PARLOAD__H5_MASTER "/entry/data"
/* DXchange's angles of /exchange/data. */
#define PARLOAD__H5_THETA "/exchange/theta"

/* parload's pixel type of an HDF5 integer (signed or not) or float of
 * size bytes; 0 for one parload does not read (a signed 8-bit integer,
 * 64-bit integers, half and quad floats).  hdf5.c names the refusal; the
 * native reader leaves those to it. */
static inline int parload__h5_pixel_type(bool is_float, bool sgn,
					 size_t size)
{
	if (is_float)
		return size == 4 ? PARLOAD_PIXEL_F32 :
		       size == 8 ? PARLOAD_PIXEL_F64 :
				   0;
	return size == 1 && !sgn ? PARLOAD_PIXEL_U8 :
	       size == 2	 ? (sgn ? PARLOAD_PIXEL_I16 : PARLOAD_PIXEL_U16) :
	       size == 4	 ? (sgn ? PARLOAD_PIXEL_I32 : PARLOAD_PIXEL_U32) :
				   0;
}

/* What parload__h5_pixel_type reads, in its refusal. */
#define PARLOAD__H5_TYPES "u8 u16 i16 u32 i32 f32 f64"

/* d as both back-ends make it for views of height x width pixels of
 * type, count of them: a raw stream's sizes (parload_desc_check), then
 * format HDF5.  0, or desc_check's error (EINVAL). */
static inline int parload__h5_describe(parload_desc *d, int type, bool be,
				       uint32_t width, uint32_t height,
				       uint64_t count, parload_error *err)
{
	int rc;

	d->pixel_type = type;
	d->encoding = be ? PARLOAD_ENC_BE : PARLOAD_ENC_LE;
	d->format = PARLOAD_FORMAT_RAW;
	d->width = width;
	d->height = height;
	d->count = count;
	rc = parload_desc_check(d, err);
	d->format = PARLOAD_FORMAT_HDF5;
	return rc;
}

/* A contiguous dataset's strips table, as both back-ends make it: n
 * views of one strip each (t's views and per_view set), rows rows of
 * view_bytes bytes, frame k's at base + k * view_bytes of the
 * container's file `file`, the frames read frame[0 .. n) (NULL: 0 to n
 * - 1).  0, or -1 out of memory. */
static inline int parload__h5_contiguous(parload__strips *t, uint64_t base,
					 uint64_t view_bytes, uint32_t rows,
					 const uint64_t *frame, uint64_t n,
					 uint32_t file)
{
	t->rows = rows;
	for (uint64_t v = 0; v < n; v++) {
		const uint64_t k = frame ? frame[v] : v;

		if (parload__strips_add(t, v, &(parload__strip){
				.off = base + k * view_bytes,
				.bytes = view_bytes, .file = file,
				.page = (uint32_t)k }))
			return -1;
	}
	return 0;
}

/* Entries of the views before view v of table t: where a table of views
 * from v on (one dataset's, after the datasets before it in one stream)
 * puts its first. */
static inline uint64_t parload__h5_entries_before(const parload__strips *t,
						  uint64_t v)
{
	return v * parload__strips_step(t);
}

/* Table `from`, one dataset's (its views the stream's from view0 on),
 * appended to `to` (which holds the views before view0): each entry as
 * it is (its page the dataset's own frame), its file file_of[its file]
 * (NULL: the same index; both tables index one container's files).  0,
 * or -1 out of memory. */
static inline int parload__h5_append(parload__strips *to,
				     const parload__strips *from,
				     uint64_t view0, const uint32_t *file_of)
{
	const uint64_t shift = parload__h5_entries_before(from, view0);
	uint64_t hint = 0;

	for (uint64_t r = 0; r < from->runs; r++)
		for (uint64_t k = 0; k < from->run[r].n; k++) {
			const uint64_t i = from->run[r].i0 + k;
			parload__strip s = parload__strip_of(from, i, &hint);

			if (file_of)
				s.file = file_of[s.file];
			if (parload__strips_add(to, i + shift, &s))
				return -1;
		}
	return 0;
}

/* Whether the tables of two datasets of one stream are alike (each
 * view's strips the same rows, chunks of one geometry decoded by one
 * pipeline), as one table needs: NULL, or what differs in b (a phrase,
 * in why of cap bytes). */
static inline const char *parload__h5_unlike(const parload__strips *a,
					     const parload__strips *b,
					     char *why, size_t cap)
{
	bool filters = b->nfilters == a->nfilters;

	for (uint32_t k = 0; filters && k < a->nfilters; k++)
		filters = b->filter[k].codec == a->filter[k].codec &&
			  b->filter[k].elem == a->filter[k].elem &&
			  memcmp(b->filter[k].param, a->filter[k].param,
				 sizeof(a->filter[k].param)) == 0;
	if (b->rows != a->rows || b->per_view != a->per_view)
		snprintf(why, cap, "strips of %u rows, %u a frame, against %u "
			 "and %u", b->rows, b->per_view, a->rows, a->per_view);
	else if (parload__strips_depth(b) != parload__strips_depth(a) ||
		 parload__strips_tiles(b) != parload__strips_tiles(a) ||
		 (parload__strips_tiles(a) > 1 && b->tile_cols != a->tile_cols))
		snprintf(why, cap, "chunks of %u frames, %u across a row, "
			 "against %u and %u", parload__strips_depth(b),
			 parload__strips_tiles(b), parload__strips_depth(a),
			 parload__strips_tiles(a));
	else if (!filters)
		snprintf(why, cap, "another filter pipeline (%u filters "
			 "against %u, or filters that differ)", b->nfilters,
			 a->nfilters);
	else if (b->decoder != a->decoder)
		snprintf(why, cap, "read by another decoder");
	else
		return NULL;
	return why;
}

/* The units an HDF5 file's angles (DXchange theta, NXtomo
 * rotation_angle) may have, by their units attribute; absent, they are
 * degrees. */
#define PARLOAD__ANGLE_UNITS "deg, degree, degrees, rad, radian, radians"

/* Degrees per unit of angles in units (a units attribute's text, any
 * case) into *deg: true for a unit of PARLOAD__ANGLE_UNITS, false for any
 * other.  parload's angles are degrees (angle_deg). */
static inline bool parload__angle_units(const char *units, double *deg)
{
	static const char *const names[] = { "deg", "degree", "degrees",
					     "rad", "radian", "radians" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t i = 0;

		while (units[i] && names[k][i] &&
		       (units[i] | 0x20) == names[k][i])
			i++;
		if (!units[i] && !names[k][i]) {
			*deg = k < 3 ? 1.0 : 180.0 / 3.14159265358979323846;
			return true;
		}
	}
	return false;
}

/* ---- hdf5_choose.c: which dataset, which frames, which angles ---- */

/* A fixed-length string's n bytes in text (of n + 1 at least), as both
 * readers take an attribute's: terminated, its padding (NULs or spaces,
 * a terminator maybe among them) cut. */
void parload__h5_unpad(char *text, size_t n);

/* A back-end's answer where it cannot tell: parload's own reader falls
 * back to libhdf5's (which never answers so). */
#define PARLOAD__H5_UNSURE 2

/* The file's 3-D datasets: how many, the first, and ", /a, /b, ..." (10
 * at most). */
typedef struct parload__h5found3 {
	size_t count;
	char first[1024];
	char list[1024];
} parload__h5found3;

/* The questions the core asks a back-end of its open file; each answers
 * PARLOAD__H5_UNSURE where it cannot tell. */
typedef struct parload__h5be {
	void *ctx;
	/* path is a dataset: 1; not (absent, or another object): 0. */
	int (*is_dataset)(void *ctx, const char *path);
	/* The error for no dataset path (negative). */
	int (*no_such)(void *ctx, const char *path);
	/* An NXtomo entry's data (a group's data with its image_key): 1,
	 * its path written into the pick's name; 0: none. */
	int (*nxtomo)(void *ctx);
	/* The file's 3-D datasets into *fd: 0. */
	int (*find3)(void *ctx, parload__h5found3 *fd);
	/* The 1-D dataset path, of want entries, into buf: as doubles
	 * (angles: *deg the degrees per unit its units say) or as int32
	 * (image_key): 0, 1 when there is no such dataset, or an error
	 * naming it (another count, type or unit). */
	int (*read_1d)(void *ctx, const char *path, bool angles, void *buf,
		       uint64_t want, double *deg);
	/* The links of group named data_ and digits, in the order of their
	 * numbers, into *names (to free with parload__h5_names_free) and
	 * *n: 0 (none, or no such group: *n 0), or an error. */
	int (*members)(void *ctx, const char *group, char ***names, size_t *n);
} parload__h5be;


/* What the core chose of a file (file, err: the caller's). */
typedef struct parload__h5pick {
	const char *file;
	parload_error *err;
	char name[1024];       /* the dataset (a master file's: its first) */
	char dir[1024];        /* its group ("" for the root) */
	char entry[1024];      /* its NXtomo group ("": the first group of
				* its path) */
	bool nxtomo, dxchange;
	/* A master file's datasets (its group's links data_000001, ...,
	 * in the order of their numbers), one stream (owned); 0: one. */
	char **part;
	size_t parts;
	uint64_t *frame;       /* the frames read, in order (owned) */
	uint64_t n;            /* how many */
} parload__h5pick;

/* The names parload__h5be's members gave, freed. */
void parload__h5_names_free(char **names, size_t n);
/* What a pick holds, freed (its frames, a master file's datasets). */
void parload__h5_pick_free(parload__h5pick *p);

/* Which dataset of the file, frames fr: named (NULL: none), else
 * DXchange's /exchange/data (its flats data_white, its darks data_dark),
 * else the NXtomo entry's data, else the file's only 3-D dataset;
 * EINVAL naming the file where there is none, saying why.  0, an error,
 * or the back-end's PARLOAD__H5_UNSURE. */
int parload__h5_choose(const parload__h5be *be, parload__h5pick *p,
		       const char *named, parload_frames fr);
/* The frames of the dataset of all frames that fr reads: NXtomo's
 * image_key picks them, else all; the tables of all frames let through
 * the memory check first.  0, an error, or UNSURE. */
int parload__h5_frames(const parload__h5be *be, parload__h5pick *p,
		       parload_frames fr, uint64_t all);
/* The angles of the frames read, in degrees (*angles, NULL when the file
 * has none): DXchange's theta of /exchange/data, NXtomo's
 * rotation_angle beside the data or in the entry's sample.  0, an
 * error, or UNSURE. */
int parload__h5_angles(const parload__h5be *be, parload__h5pick *p,
		       uint64_t all, float **angles);

/* hdf5.c's reader (the module's read): the container of dataset (NULL:
 * the one it chooses) of file, frames fr; parser: it may read a chunk
 * index with parload's parser (hdf5_index.c) where libhdf5 says where
 * the dataset is, instead of a libhdf5 call per chunk (not with
 * PARLOAD_HDF5=libhdf5). */
typedef int (*parload__h5_reader)(const char *file, const char *dataset,
				  parload_frames fr, bool parser,
				  parload__container *out, parload_error *err);

/* hdf5_native.c: a dataset of a plainly written file read without
 * libhdf5.  0: *out filled exactly as libhdf5's reader fills it; 1: fall
 * back to it (nothing held, *err untouched); never another result. */
int parload__hdf5_native(const char *file, const char *dataset,
			 parload_frames fr, parload__container *out);

#endif
