/*
 * tiff.h - what the TIFF reader's parts share: the files of a source, the
 * walk's records of its pages, and the calls between them.
 *
 * tiff.c (always built, no libtiff) lists the files, runs the walk of
 * each (tiff_walk.c's, or libtiff's answers where it cannot take the
 * file) and makes the table; tiff_walk.c walks the directories itself
 * with pread; tiff_libtiff.c (a build with libtiff, the TIFF module)
 * answers what libtiff reads of a directory and decodes compressed or
 * tiled pages; tiff_write.c writes TIFF itself.  tiff.c reaches
 * tiff_libtiff.c only through the module's table (tiff, tiff_decoder).
 */
#ifndef PARLOAD_TIFF_H
#define PARLOAD_TIFF_H

#include "formats/formats.h"

/* TIFF 6.0's SampleFormat values. */
#define PARLOAD__TIFF_UINT 1
#define PARLOAD__TIFF_INT 2
#define PARLOAD__TIFF_FLOAT 3

/* The end of a message saying that what it names needs libtiff. */
#define PARLOAD__TIFF_NEEDS \
	": reading it needs libtiff (configure --with-tiff, libtiff-dev)"

/* The files of a source, in stream order. */
typedef struct parload__tiff_files {
	char **p;
	size_t n, cap;
} parload__tiff_files;

/* One page as a walk found it, or a run of pages (tiff_walk.c): pages
 * alike but for where their strips lie, their directories step bytes
 * apart. */
typedef struct parload__tiff_page {
	uint64_t ifd;        /* its directory's offset (a run's first) */
	uint64_t view;       /* its view in the stream (a run's first) */
	uint64_t step;       /* a run: from one directory to the next */
	uint32_t pages;      /* 1, or a run's */
	uint32_t file;       /* index into the files */
	uint32_t index;      /* its page in that file (a run's first) */
	uint32_t unit;       /* rows of a strip, or of a tile */
	uint32_t across;     /* tiles across (1 for strips) */
	bool plain;          /* uncompressed strips */
	bool be;             /* the file is big-endian */
	uint64_t *off, *bytes; /* of each strip or tile (owned, or in the
				* walk's slab); a run's page i has its
				* offsets at off + i * units (stepped: off
				* + its units plus i * ostep), and all the
				* same bytes */
	uint32_t units;
	bool pooled;         /* off and bytes lie in the walk's slab */
	bool stepped;        /* a run whose pages' strips lie ostep bytes
			      * after the last page's: off holds its first
			      * page's alone */
	uint64_t ostep;
} parload__tiff_page;

/* Where strip or tile u of page i of record p lies. */
static inline uint64_t parload__tiff_off(const parload__tiff_page *p,
					 uint32_t i, uint32_t u)
{
	return p->stepped ? p->off[u] + (uint64_t)i * p->ostep :
			    p->off[(size_t)i * p->units + u];
}

/* The direct walk's strip offsets and sizes, many pages to a block: one
 * allocation for hundreds of pages instead of two for each. */
typedef struct parload__tiff_slab {
	struct parload__tiff_slab *next;
	size_t used, cap;    /* values */
	uint64_t v[];
} parload__tiff_slab;

/* Every page of the source, and page 0's size and type, which all share. */
typedef struct parload__tiff_pages {
	const parload__tiff_files *files;
	parload__tiff_page *p;
	uint64_t records, cap; /* of p */
	uint64_t views;      /* pages in all: the stream's views */
	uint32_t width, height;
	int type;
	parload__tiff_slab *slab; /* the newest block (owned) */
} parload__tiff_pages;

/* ---- tiff_pages.c: the walks' records, below both walks ---- */

/* The parload type of BitsPerSample bits of SampleFormat fmt, or 0. */
int parload__tiff_type(unsigned bits, unsigned fmt);
/* "unsigned", "signed", "floating-point" or "other-format". */
const char *parload__tiff_format_name(unsigned fmt);
/* Page k's pixel type (*type) from its SamplesPerPixel, BitsPerSample
 * and SampleFormat: ENOTSUP naming page k (stream view v) and what is not
 * read (more than one sample, a type parload does not have). */
int parload__tiff_sample(const char *path, uint64_t v, uint32_t k,
			unsigned spp, unsigned bits, unsigned fmt, int *type,
			parload_error *err);
/* Room in w for n records in all (file f's path for the error): ENOMEM. */
int parload__tiff_reserve(parload__tiff_pages *w, uint64_t n, uint32_t f,
			  parload_error *err);
/* A new page k of file f, of width x height pixels of type, at the end of
 * w (zeroed but for file, index, view and pages, 1): ECONTAINER naming
 * both pages when its size or type is not page 0's, ENOMEM. */
int parload__tiff_add(parload__tiff_pages *w, uint32_t f, uint32_t k,
		      uint32_t width, uint32_t height, int type,
		      parload__tiff_page **out, parload_error *err);
/* The rows of strip (or row of tiles) k of a page height rows tall, in
 * strips of unit rows: unit, but for the last, which may be short. */
uint64_t parload__tiff_unit_rows(uint64_t height, uint64_t unit, uint64_t k);
/* Each strip or tile of p within the file's size bytes (a plain strip:
 * the rows it holds, at least), and as many as its size makes:
 * ECONTAINER or ETRUNCATED naming page and strip otherwise. */
int parload__tiff_fits(const parload__tiff_page *p, uint32_t height,
		       uint64_t row_size, uint64_t size, const char *path,
		       uint64_t v, parload_error *err);
/* Free w's records and their slabs. */
void parload__tiff_walk_free(parload__tiff_pages *w);

/* The bytes of an ImageDescription either walk hands to
 * parload__tiff_imagej, at most (ImageJ's are a few lines). */
#define PARLOAD__TIFF_DESC_MAX ((size_t)65536)

/* ImageJ's stack in one directory (ImageJ writes a stack past 4 GiB so,
 * tifffile's imagej=True, truncate=True at any size): where page p,
 * file's only directory, has an ImageJ description that declares N > 1
 * images, p becomes a record of N pages, the images after the first
 * following it back to back (step 0: one directory; stepped by the
 * image's bytes).  desc is the description up to its first NUL, len
 * bytes (of which the first PARLOAD__TIFF_DESC_MAX at most are given);
 * size the file's.  0 (also for any other description); ENOTSUP where
 * the page's layout does not hold the images (compressed, tiled, strips
 * not back to back, a description too long to read), ECONTAINER where
 * the counts do not agree, ETRUNCATED naming the first image (view and
 * offset) the file does not hold. */
int parload__tiff_imagej(parload__tiff_pages *w, parload__tiff_page *p,
			 const char *desc, uint64_t len, uint64_t size,
			 parload_error *err);

/* ---- tiff_walk.c: the direct walk ---- */

/* Every page of file f into w, read with pread: 0; 1 where it cannot
 * take the file (compressed, tiled, multi-sample, damaged...), *why then
 * saying so as the error a build without libtiff gives; ENOMEM, EOPEN or
 * EIO (naming the file and offset). */
int parload__tiff_walk_direct(parload__tiff_pages *w, uint32_t f,
			      parload_error *why, parload_error *err);

/* ---- tiff_libtiff.c (HAVE_TIFF only): libtiff's answers ---- */

/* One directory as libtiff reads it: its tags' values (libtiff's
 * defaults where absent; 0 for an absent size), no meaning.  tiff.c's
 * libtiff walk checks them as tiff_walk.c checks its own, through the
 * same functions above, in the order of its checks; the module's
 * parload__tiff_lib (internal.h) answers open, dir, array (a copy of the
 * strip or tile offsets, which 0, or byte counts, 1), next (1, 0 at the
 * chain's end, or the error libtiff reported on the way) and close. */
typedef struct parload__tiff_dir {
	uint64_t ifd;         /* its offset */
	uint32_t width, height;
	uint32_t tile_w, tile_l; /* tiled */
	uint32_t rows_per_strip; /* striped */
	uint32_t units;       /* strips or tiles */
	uint16_t spp, bits, fmt, comp;
	bool be, tiled;
	bool last;            /* the chain's last directory */
	const char *desc;     /* ImageDescription (the handle's), or NULL */
} parload__tiff_dir;

/* What the libtiff decoder needs of a container (its table's arg,
 * parload__sys_malloc'ed; the decoder's free_arg frees it). */
typedef struct parload__tiff_arg {
	char **paths;       /* the container's files (borrowed) */
	uint64_t *ifd;      /* of each stream view (owned) */
	uint32_t width, height, bpp;
	uint64_t row_size;
} parload__tiff_arg;

/* Compressed or tiled pages, decoded by libtiff in each worker. */
extern const parload__decoder parload__tiff_decoder;

#endif
