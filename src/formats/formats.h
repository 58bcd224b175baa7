/*
 * formats.h - the format drivers: which container a source is
 * (container.c), NRRD (nrrd/), TIFF (tiff/), HDF5 (hdf5/), the modules
 * that carry libtiff and libhdf5 (module.c, module_host.c), and the
 * writers of each.  A driver describes a source (a description, its files
 * and, for a container, its strip table) for the engine to read.
 */
#ifndef PARLOAD_FORMATS_H
#define PARLOAD_FORMATS_H

#include "engine/engine.h"

/* ---- nrrd.c: NRRD detached headers (.nhdr) ---- */

/* What a .nhdr says: a raw layout and its data files. */
typedef struct parload__nrrd {
	parload_desc desc;
	char **paths;   /* n data files, in order (owned) */
	size_t n;
	const char *header; /* the header's path (the caller's) */
	unsigned line;  /* of "data file" (0: the data follows the header) */
	bool list;      /* a LIST: file i on line line + 1 + i */
	/* PARLOAD_SRC_CONFINE: each data file as checked (device, inode),
	 * which the file opened must be; NULL otherwise. */
	struct parload__file_id {
		dev_t dev;
		ino_t ino;
	} *ids;
} parload__nrrd;

/* Read the detached header path: PARLOAD_EINVAL or PARLOAD_ENOTSUP
 * naming the field for what parload cannot read; nothing held on
 * failure.  flags: the source's; with PARLOAD_SRC_CONFINE a data file
 * that does not lie in the header's directory or below it, once its
 * links are resolved, is PARLOAD_EOPEN naming the header, the line and
 * the file, before any data file is opened. */
int parload__nrrd_read(const char *path, unsigned flags, parload__nrrd *out,
		       parload_error *err);
void parload__nrrd_free(parload__nrrd *n);
/* A failure of data file i, naming the header and the line that names
 * the file: "HEADER: line L: data file 'FILE': TEXT". */
int parload__nrrd_vfail(const parload__nrrd *n, size_t i, parload_error *err,
			int code, int sys_errno, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));
struct stat;
/* Data file i opened (st: its fstat) is the file its check found under
 * the header's directory (always, without PARLOAD_SRC_CONFINE); else
 * PARLOAD_EOPEN: it was replaced (by a link out of the directory) after
 * the check. */
int parload__nrrd_opened(const parload__nrrd *n, size_t i,
			 const struct stat *st, parload_error *err);


/* Read the container's metadata, one entry per container: tiff.c
 * (each file by tiff_walk.c, or by libtiff's module where it cannot take
 * it), hdf5_core.c (parload's own reader, or libhdf5's module where it
 * cannot take the file); PARLOAD_TIFF and PARLOAD_HDF5 pick one reader
 * (backend.h).  ECONTAINER, EINVAL, ETRUNCATED, EOPEN naming the file and
 * what is wrong, PARLOAD_ENOTSUP where the file needs a library or its
 * module; nothing held on failure. */
int parload__tiff_read(const parload_source *src, parload__container *out,
		       parload_error *err);
int parload__hdf5_read(const parload_source *src, parload__container *out,
		       parload_error *err);
/* Free what a reader filled (takes a zeroed container). */
void parload__container_free(parload__container *c);
/* Names in order, digit runs compared as numbers (proj_2 before
 * proj_10), for qsort of char *. */
int parload__natural_qcmp(const void *a, const void *b);
/* The files pattern (a glob) matches, in that order: *paths (n of them,
 * each and the table to free; none for no match).  0 or ENOMEM. */
int parload__glob_files(const char *pattern, char ***paths, size_t *n,
			parload_error *err);
/* Writers behind parload_save, to tmp (an empty file parload_temp_create
 * made), which the caller puts in place; errors name path, never tmp:
 * TIFF by tiff_write.c (no libtiff), HDF5 by hdf5.c (its module). */
int parload__tiff_save(const char *tmp, const char *path,
		       const parload_stack *st, parload_error *err);
/* The same, BigTIFF (big) or classic as asked (tests: a BigTIFF of a few
 * bytes). */
int parload__tiff_save_as(const char *tmp, const char *path,
			  const parload_stack *st, bool big,
			  parload_error *err);
int parload__hdf5_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err);

/* A chunk of a chunked array, as an index gives it: an HDF5 dataset's
 * (hdf5_index.c: its layout message's version 1 B-tree, or with
 * hdf5_index4.c the indexes of a version 4 layout, read from the file
 * with pread, without libhdf5, which costs a call per chunk; anything the
 * parser does not know or finds inconsistent makes it answer "fall back"
 * to libhdf5's calls, but a key that is not a chunk's of the dataset is
 * an error: libhdf5's own table of chunks has such a key too, where its
 * reads see fill values), or a Zarr array's (zarr/: a chunk file, or an
 * inner chunk of a shard). */
typedef struct parload__chunk {
	uint64_t at[3];     /* its first element: (frame, row, column); 0
			     * for the frame of a 2-D dataset */
	uint64_t addr;      /* its bytes' offset in the file */
	uint64_t bytes;     /* stored */
	uint32_t mask;      /* filters skipped (bit k: filter k) */
	uint32_t file;      /* its file: the container's file index + file
			     * (0 for HDF5: every chunk in the dataset's) */
} parload__chunk;

/* What libhdf5 says of the file and the dataset. */
typedef struct parload__h5where {
	uint64_t super;     /* the superblock's offset (the user block) */
	uint64_t header;    /* the object header's address */
	uint32_t istore_k;  /* the file's indexed-storage K (nodes of 2K) */
	unsigned so, sl;    /* sizes of offsets and lengths */
	int rank;           /* 2 or 3 */
	uint64_t dims[3];   /* the dataset's shape, rank of them */
	uint64_t chunk[3];  /* the chunk's, rank of them */
	uint32_t elem;      /* bytes per element */
} parload__h5where;

/* Where the walk gives each chunk, in the index's order: 0 to go on, or a
 * negative code that ends the walk with it. */
typedef int (*parload__h5put)(void *ctx, const parload__chunk *c);

/* The chunks of the dataset w describes in the HDF5 file open as fd, each
 * to put once: 0 when every chunk written was given (none twice, none
 * past the dataset's), 1 to fall back (to libhdf5's calls; put may have
 * had some chunks), put's code, or PARLOAD_ECONTAINER for a key that is
 * not a chunk's of the dataset (a coordinate past it or off its chunk
 * grid, an element coordinate not 0: libhdf5 would read fill values or
 * another place), naming file, dataset name and the key's byte offset
 * in *err. */
int parload__h5index_walk(int fd, const parload__h5where *w,
			  parload__h5put put, void *ctx, const char *file,
			  const char *name, parload_error *err);

/* chunks.c: a chunked array's chunks (an HDF5 dataset's, a Zarr
 * array's) into the strips table t (which holds the views before this
 * array's, and none of its own yet).  put keeps each chunk the index
 * gives; finish sets t's geometry (rows, per_view, depth, tiles) from the
 * chunk shape and gives t every loaded frame's entries, in order.
 * Failures name file and name (the dataset or array). */
typedef struct parload__chunks {
	parload__strips *t;
	uint64_t dims[3];      /* the dataset's, as (frames, rows, columns) */
	uint64_t chunk[3];     /* its chunks' shape, the same way */
	const uint64_t *view;  /* a frame's view, UINT64_MAX for one not
				* loaded; NULL: every frame, in order */
	uint64_t views;        /* views loaded */
	uint64_t view0;        /* the stream view of this dataset's first */
	uint32_t elem;         /* bytes per element */
	bool plain;            /* no filter: chunks stored as they are */
	const char *file, *name; /* the chunks' file, the dataset */
	uint32_t index;        /* the chunks' file in the container's files */
	/* The container's files, where chunks lie in files of their own
	 * (paths[index + chunk.file] names one); NULL: file names them. */
	char *const *paths;
	parload_error *err;
	parload__chunk *got; /* the chunks given (owned) */
	uint64_t seen, cap;
	bool masked;           /* a chunk of a plain dataset says it skipped a
				* filter */
	/* A chunk never written is the fill value (Zarr: t->fill says it),
	 * not "fall back" (HDF5: libhdf5 knows the dataset's). */
	bool fill;
} parload__chunks;
int parload__chunks_put(void *ctx, const parload__chunk *c);
/* After the walk: 0, every loaded frame's entries given; 1 when a chunk
 * is missing (without fill) or skipped a filter (libhdf5 reads those: fill values, its
 * pipeline); a negative code.  Either way the chunks kept are freed. */
int parload__chunks_finish(parload__chunks *p);
/* Forget the chunks given (a walk that fell back gives them again). */
void parload__chunks_reset(parload__chunks *p);

/* hdf5_index.c, for itself and hdf5_native.c: an HDF5 file read with
 * pread, every read inside it. */
typedef struct parload__h5file {
	int fd;
	uint64_t size;      /* the file's bytes */
	uint64_t base;      /* the superblock's base: where address 0 is */
	uint64_t root;      /* the root group's object header address */
	unsigned so, sl;    /* sizes of offsets and lengths */
	uint32_t istore_k;  /* chunk B-tree nodes hold 2K entries; 0 when
			     * a superblock extension may say otherwise */
	uint32_t sym_k;     /* symbol table nodes hold 2K entries; 0 as
			     * istore_k */
	uint32_t group_k;   /* group B-tree nodes 2K children; 0 as
			     * istore_k */
} parload__h5file;

/* n bytes little-endian (n <= 8).  A chunk index's keys are mostly
 * these: read as one load of 8 or 4 bytes where the host is
 * little-endian, not byte by byte, describe() of 20,000 chunks took 1.08
 * ms instead of 1.55 (in a loop; 2.05 and 2.59 ms in a fresh process). */
static inline uint64_t parload__h5_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n == 8) {
		memcpy(&v, p, 8);
		return v;
	}
	if (n == 4) {
		uint32_t u;

		memcpy(&u, p, 4);
		return u;
	}
#endif
	for (unsigned k = n; k > 0; k--)
		v = v << 8 | p[k - 1];
	return v;
}

/* Address a is the undefined address (all bits set) of so bytes. */
bool parload__h5_undefined(uint64_t a, unsigned so);
/* n bytes at offset at (absolute) or address a (from the base) into buf;
 * false unless all of them are in the file. */
bool parload__h5_get_abs(const parload__h5file *f, uint64_t at, size_t n,
			 void *buf);
bool parload__h5_get(const parload__h5file *f, uint64_t a, size_t n,
		     void *buf);
/* The n bytes at address a in a buffer of their own (to free), checked
 * to lie in the file before it is allocated; NULL when they do not, or
 * a read fails, or memory does. */
void *parload__h5_fetch(const parload__h5file *f, uint64_t a, uint64_t n);
/* The lookup3 checksum of n bytes at b, as HDF5's version 2 metadata
 * (superblock, headers, the newer chunk indexes) has them. */
uint32_t parload__h5_checksum(const unsigned char *b, size_t n);
/* The last 4 of n bytes at b are the lookup3 checksum of the others. */
bool parload__h5_checksum_ok(const unsigned char *b, size_t n);
/* n bytes at address a lie in the file (up to its end of file). */
bool parload__h5_in_file(const parload__h5file *f, uint64_t a, uint64_t n);
/* The superblock (versions 0-3) at offset at: so, sl (2, 4 or 8), base,
 * root, K and the file's size (its end of file as the superblock states
 * it) filled; 1 for one libhdf5 reads, 0 for no signature there, -1 for
 * a signature whose superblock libhdf5 would refuse, or may (a driver,
 * a file shorter than its end of file says). */
int parload__h5_superblock(parload__h5file *f, uint64_t at);
/* One message of an object header (its type, flags and len bytes): 0 for
 * the next, 1 to stop the walk, -1 to fail it. */
typedef int (*parload__h5msg_fn)(void *ctx, unsigned type, unsigned flags,
				 const unsigned char *m, size_t len);
/* The messages of the object header at addr (versions 1 and 2, with at
 * most 64 continuation blocks) through fn, until fn says 1; every block
 * read and checked all the same, as libhdf5 loads the whole header
 * first; false when a read fails, the header is malformed or fn said
 * -1. */
bool parload__h5_header(const parload__h5file *f, uint64_t addr,
			parload__h5msg_fn fn, void *ctx);

/* hdf5_index4.c: a chunked data layout message of version 4 and the
 * chunk indexes it names, for hdf5_index.c's walk and hdf5_native.c. */
enum {
	PARLOAD__H5_SINGLE = 1,   /* one chunk, the whole dataset */
	PARLOAD__H5_IMPLICIT = 2, /* no index: chunk k at addr + k * bytes */
	PARLOAD__H5_FARRAY = 3,   /* a fixed array */
	PARLOAD__H5_EARRAY = 4,   /* an extensible array */
	PARLOAD__H5_BTREE2 = 5    /* a version 2 B-tree */
};
typedef struct parload__h5layout4 {
	unsigned index;         /* PARLOAD__H5_SINGLE ... BTREE2 */
	unsigned flags;         /* bit 0: edge chunks unfiltered; bit 1: a
				 * filtered single chunk (its size, mask) */
	unsigned dims;          /* the chunk's dimensions: rank + 1 */
	uint64_t chunk[4];      /* its shape, the element's size last */
	uint64_t single_bytes;  /* a filtered single chunk's size */
	uint32_t single_mask;   /* and its filter mask */
	uint64_t addr;          /* the index's (single, implicit: chunks') */
} parload__h5layout4;
/* The chunked layout message m (len bytes, version 4) into *l; false
 * for any other, or one libhdf5 would refuse. */
bool parload__h5_layout4(const unsigned char *m, size_t len, unsigned so,
			 unsigned sl, parload__h5layout4 *l);
/* The chunks of a version 4 layout, to put in coordinates' order. */
typedef struct parload__h5ix {
	const parload__h5file *f;
	const parload__h5where *w;    /* the dataset's shape */
	const parload__h5layout4 *l;
	uint64_t maxdims[3];          /* the dataspace's maximum; UINT64_MAX:
				       * unlimited */
	bool filtered;                /* the dataset has filters */
	parload__h5put put;
	void *ctx;
} parload__h5ix;
/* 0: every chunk given; 1: fall back; or put's code. */
int parload__h5index4_walk(const parload__h5ix *x);
/* ---- module.c, module_host.c: what needs libtiff or libhdf5, in a
 * module opened on first use ---- */

#define PARLOAD__MODULE_ABI 14u

struct parload__tiff_dir;

/* What a module may call of the library (module_host.c gives a module
 * these under their usual names): failures, and the strips table and
 * chunk index parser libhdf5's reader fills. */
typedef struct parload__host {
	unsigned abi;
	int (*vfail)(parload_error *err, int code, int sys_errno,
		     const char *path, uint64_t view, uint64_t offset,
		     const char *fmt, va_list ap);
	void (*error_prefix)(parload_error *err, const char *prefix);
	int (*fail_open)(parload_error *err, int sys_errno, const char *path);
	void (*container_free)(parload__container *c);
	int (*h5index_walk)(int fd, const parload__h5where *w,
			    parload__h5put put, void *ctx, const char *file,
			    const char *name, parload_error *err);
	int (*chunks_put)(void *ctx, const parload__chunk *c);
	int (*chunks_finish)(parload__chunks *p);
	void (*chunks_reset)(parload__chunks *p);
	parload__codec (*codec_of_hdf5)(uint32_t id);
	const parload__codec_row *(*codec_get)(parload__codec c);
	int (*strips_add)(parload__strips *t, uint64_t i,
			  const parload__strip *s);
	void (*strips_clear)(parload__strips *t);
	uint64_t (*strips_find)(const parload__strips *t, uint64_t i);
	int (*memory_check)(parload_error *err, const char *path,
			    uint64_t count, const char *things, uint64_t each);
	int (*desc_check)(parload_desc *d, parload_error *err);
	unsigned (*pixel_size)(int type);
} parload__host;

/* A module's table: parload__tiff_module (tiff_libtiff.c) and
 * parload__hdf5_module (hdf5.c). */
typedef struct parload__module {
	unsigned abi;
	/* HDF5: the container of dataset (NULL: the one it chooses) of file,
	 * frames fr, as hdf5_core.h's parload__h5_reader says (tiff.c reads
	 * TIFF's itself). */
	int (*read)(const char *file, const char *dataset, parload_frames fr,
		    bool parser, parload__container *out, parload_error *err);
	/* HDF5: parload_save's writer (tiff_write.c writes TIFF). */
	int (*write)(const char *tmp, const char *path,
		     const parload_stack *st, const parload_save_options *o,
		     parload_error *err);
	/* TIFF: libtiff's answers of a file tiff_walk.c does not take
	 * (tiff.h's parload__tiff_lib, which tiff.c's walk gives their
	 * meaning), and the decoder of compressed or tiled pages. */
	struct parload__tiff_lib {
		int (*open)(const char *path, void **h, parload_error *err);
		void (*dir)(void *h, struct parload__tiff_dir *d);
		int (*array)(void *h, int which, uint32_t n, uint64_t **out,
			     const char *path, uint64_t v, parload_error *err);
		int (*next)(void *h, uint32_t k, uint64_t v, const char *path,
			    parload_error *err);
		void (*close)(void *h);
	} tiff;
	/* HDF5: table from's datasets (read by the module's decoder, as
	 * to's are) joined to to's, from's views the stream's from view0
	 * on: 0, or ENOMEM naming path. */
	int (*h5_join)(parload__strips *to, parload__strips *from,
		       uint64_t view0, const char *path, parload_error *err);
	const parload__decoder *tiff_decoder;
	/* Called once, when the module is first asked for (module.c): the
	 * library it wraps made ready, so that the first file read or
	 * written does not pay its initialisation (NULL: nothing to do). */
	void (*ready)(void);
} parload__module;

/* The tables are the only names a module exports. */
#define PARLOAD__MODULE_EXPORT __attribute__((visibility("default")))

/* The module of format (PARLOAD_FORMAT_TIFF or _HDF5): compiled into this
 * binary, or opened the first time it is asked for; NULL with
 * PARLOAD_ENOTSUP naming path (built without it, not installed). */
const parload__module *parload__module_get(int format, const char *path,
					   parload_error *err);

#include "formats/driver.h"

#endif /* PARLOAD_FORMATS_H */
