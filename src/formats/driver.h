/*
 * driver.h - format drivers: one row of one table (driver.c) per format.
 *
 * A row says what a format is and does: its name; how a source is
 * recognised as it (its first bytes first, then its name's extension,
 * case-insensitively; parload__driver_find is the one place that
 * decides, for every row); how it is described (a description, its files
 * and, for a container, a strips table: a parload__described); how it is
 * written (parload_save's format and writer, where it has one); and which
 * codecs its strips may need.  A load keeps the row and what it made
 * (parload__ctx's driver and described) and reads every format through
 * the same engine.  Adding a format is one file with its row, one line of
 * the table in driver.c (and its declaration below) and one Makefile.am
 * line.
 */
#ifndef PARLOAD_DRIVER_H
#define PARLOAD_DRIVER_H

#include "engine/engine.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

struct stat;

/* What a driver made of a source: its description (a raw layout at an
 * offset, or a container's rows as its strips yield them), its files in
 * stream order, and a container's strips table. */
typedef struct parload__described {
	parload__container got; /* desc, paths (owned), n, strips */
	bool strips;            /* got.strips says where every view lies */
	void *state;            /* the driver's own, dropped with it */
} parload__described;

typedef struct parload__driver {
	const char *name;
	const char *title;      /* the format as messages name it */
	/* The description it makes (failed: what parload_describe says the
	 * source was, for TIFF and HDF5). */
	parload_format format;
	/* Its first bytes say it is one (NULL: no signature). */
	bool (*magic)(const unsigned char *b, size_t n);
	/* Its names: extensions with their dot, NULL-terminated (NULL: none). */
	const char *const *exts;
	/* The source described before any of its files is opened: NULL
	 * where the source is opened as it is given (a path, a descriptor or
	 * a list), its description the caller's or parload's own header.
	 * Nothing held on failure. */
	int (*describe)(const parload_source *src, parload__described *out,
			parload_error *err);
	/* What describe made, freed (NULL: parload__container_free). */
	void (*drop)(parload__described *d);
	/* A failure of file i of its files (NULL: named by its path), and
	 * file i opened (its fstat) checked to be the file described (NULL:
	 * any). */
	int (*file_vfail)(const parload__described *d, size_t i,
			  parload_error *err, int code, int sys_errno,
			  const char *fmt, va_list ap)
		__attribute__((format(printf, 6, 0)));
	int (*file_opened)(const parload__described *d, size_t i,
			   const struct stat *st, parload_error *err);
	/* parload_save: the format it writes (PARLOAD_SAVE_AUTO: none) and
	 * its writer, to tmp (an empty file beside path); errors name path. */
	parload_save_format save;
	int (*write)(const char *tmp, const char *path,
		     const parload_stack *st, const parload_save_options *o,
		     parload_error *err);
	/* A format written as a directory (a Zarr store): tmp is then an
	 * empty directory beside path, and this says whether the existing
	 * path is one of its own, which PARLOAD_SAVE_FORCE may replace (no
	 * other is).  NULL: a file. */
	bool (*dir)(const char *path);
	/* The codecs its strips may need: bits 1u << PARLOAD__CODEC_*
	 * (NONE for a table without a decoder, CUSTOM for its own). */
	unsigned codecs;
} parload__driver;

/* The one rule for a format's name: the last element of path (which has
 * a stem before the dot) ends in one of exts (NULL-terminated),
 * case-insensitively.  Inline, for the readers that list a folder by it
 * (tiff.c) without the table. */
static inline bool parload__name_ends(const char *path,
				      const char *const *exts)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *base = slash ? slash + 1 : path;
	const size_t n = base ? strlen(base) : 0;

	for (; base && exts && *exts; exts++) {
		const size_t m = strlen(*exts);

		if (n > m && strcasecmp(base + n - m, *exts) == 0)
			return true;
	}
	return false;
}

/* TIFF's names: its row's, and a folder's TIFFs (tiff.c). */
#define PARLOAD__TIFF_EXTS ".tif", ".tiff"

/* The file a source names: its path, or the first of its list. */
static inline const char *parload__source_path(const parload_source *src)
{
	return src->path ? src->path : src->path_count ? src->paths[0] : NULL;
}

/* The rows of the table (driver.c; nrrd.c; npy.c; png.c; zarr/zarr.c). */
extern const parload__driver parload__driver_parload;
extern const parload__driver parload__driver_raw;
extern const parload__driver parload__driver_list;
extern const parload__driver parload__driver_nhdr;
extern const parload__driver parload__driver_nrrd;
extern const parload__driver parload__driver_tiff;
extern const parload__driver parload__driver_hdf5;
extern const parload__driver parload__driver_npy;
extern const parload__driver parload__driver_png;
extern const parload__driver parload__driver_zarr;

/* The driver that reads src: a layout given (raw, or a list), parload's
 * own stream for a descriptor; for a path, its first bytes (the row whose
 * magic they match, the name choosing between rows that share one), else
 * its name, else parload's own (whose header check then says why).  A
 * regular file whose first bytes cannot be read fails as its load would
 * (EOPEN, EIO); a list of files of a format read one file at a time is
 * PARLOAD_ENOTSUP naming the file. */
int parload__driver_find(const parload_source *src,
			 const parload__driver **out, parload_error *err);
/* The row whose extensions end path's last element (which has a stem
 * before the dot), case-insensitively; NULL for none. */
const parload__driver *parload__driver_named(const char *path);
/* The row that writes format f; NULL for none. */
const parload__driver *parload__driver_saving(parload_save_format f);
/* Tests: one more row, tried after the table's (at most 4; before any
 * load, by one thread).  0, or PARLOAD_EINVAL when full. */
int parload__driver_register(const parload__driver *d);

/* Describe src with d into a new *out (NULL where d describes nothing);
 * nothing held on failure. */
int parload__driver_describe(const parload__driver *d,
			     const parload_source *src,
			     parload__described **out, parload_error *err);
/* Free what parload__driver_describe made (NULL: nothing). */
void parload__driver_drop(const parload__driver *d, parload__described *x);

/* npy.c: an .npy header (b, the file's first n bytes; size, the file's)
 * as a raw layout: *d with the data's offset, or ECONTAINER, ENOTSUP,
 * ETRUNCATED naming path and the byte offset.  For the fuzzer. */
int parload__npy_parse(const unsigned char *b, size_t n, uint64_t size,
		       const char *path, parload_desc *d, parload_error *err);

#endif
