/*
 * model.h - the request and the plan, as data: layout descriptions
 * (desc.c), parload's own file header and pixel types (format.c), the
 * selection resolved into a shape (select.c), the strip table a container
 * gives (strips.c), the dataset's memory (dataset.c), the extent plan
 * (plan.c), the checks of each view (verify.c), the pixel conversions
 * (convert.c), and the context of one load (parload__ctx) that every layer
 * above reads and fills.  These files compute; they open nothing and start
 * no thread.  Calls go down only: model calls base, nothing above.
 */
#ifndef PARLOAD_MODEL_H
#define PARLOAD_MODEL_H

#include "base/base.h"

/* ---- desc.c: layout descriptions ---- */

/* convert.c: one stored row (src, the file's bytes) into n pixels of the
 * dataset's type from column col on, at dst. */
typedef void (*parload__convert_fn)(void *dst, const unsigned char *src,
				    uint32_t col, uint32_t n);
/* The conversion a layout's rows need, or NULL when the file holds the
 * dataset's bytes. */
parload__convert_fn parload__convert_get(const parload_desc *d);
/* Reverse the bytes of each bpp-byte pixel of the bytes at buf (a
 * multiple of bpp), in place; one byte per pixel is left as it is. */
void parload__swap_in_place(void *buf, size_t bytes, unsigned bpp);

/* Pixel i of the pixels at p, of type (PARLOAD_PIXEL_*, the host's
 * order), as a double: exact for every type but f64's NaN payloads. */
static inline double parload__pixel_value(const unsigned char *p, int type,
					  size_t i)
{
	switch (type) {
	case PARLOAD_PIXEL_U8: return p[i];
	case PARLOAD_PIXEL_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
	case PARLOAD_PIXEL_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
	case PARLOAD_PIXEL_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
	case PARLOAD_PIXEL_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
	case PARLOAD_PIXEL_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
	default: { double v; memcpy(&v, p + 8 * i, 8); return v; }
	}
}

/* Bits of one stored pixel of a packed encoding; 0 if not packed. */
unsigned parload__packed_bits(int encoding);

/* The files of a source, each holding whole records from d.offset on:
 * views [first, first + views) of the stream. */
typedef struct parload__file {
	const char *path;
	int fd;
	bool own;       /* opened here, closed here */
	uint64_t size;
	uint64_t first;
	uint64_t views;
	int dfd;        /* opened O_DIRECT (cache.c), or -1 */
	/* A container's strips (views lie where they say), or NULL. */
	const struct parload__strips *strips;
	uint32_t index; /* in the source's files */
} parload__file;

/* Byte offset, in its file, of the record of the file's view i. */
static inline uint64_t parload__record_at(const parload_desc *d, uint64_t i)
{
	return d->offset + i * d->record_size;
}

/* The file (index into files) holding stream view v; the last file for
 * views past the end. */
size_t parload__file_of(const parload__file *files, size_t n, uint64_t v);

/* ---- format.c: parload's own file header, and the checks of each view ---- */

/* Bytes of one record (view header plus payload) of a validated header. */
static inline uint64_t parload__record_size(const parload_file_header *h)
{
	return PARLOAD_VIEW_HEADER_SIZE + h->payload_size;
}

/* Byte offset of view i's header in the file. */
static inline uint64_t parload__view_offset(const parload_file_header *h,
					    uint64_t i)
{
	return PARLOAD_FILE_HEADER_SIZE + i * parload__record_size(h);
}

/* Check a validated header against the file's size: ETRUNCATED (naming the
 * complete views the file holds) or ETRAILING. */
int parload__check_file_size(const parload_file_header *h, uint64_t file_size,
			     const char *path, parload_error *err);

/* Check output views [first, first + n) of a load of shape s (NULL: the
 * whole file): their headers (at vh) carry the file index of the view in
 * view_index and, when verify_crc and the file has CRCs, their payloads
 * (view k at pixels + (k - first) * payload_size, contiguous) match.
 * Reports the first bad view by its index in the file.  d is parload's own
 * format: a raw stream's views have nothing to check. */
int parload__check_views(const parload_desc *d, const parload_shape *s,
			 const parload_view_header *vh, const void *pixels,
			 uint64_t first, uint64_t n, bool verify_crc,
			 const char *path, parload_error *err);

/* ---- select.c ---- */

/* The shape is every view, row and column of the file, in view layout. */
bool parload__shape_is_whole(const parload_shape *s, const parload_desc *d);
/* Every row and column of each selected view: a payload CRC can be
 * checked. */
bool parload__shape_full_payload(const parload_shape *s,
				 const parload_desc *d);


typedef struct parload__io_stats {
	uint64_t calls; /* read system calls issued */
	uint64_t bytes; /* bytes they returned */
} parload__io_stats;

/* ---- verify.c: payload CRCs and bad views ---- */

/* Bad views found by one reader, in ascending order (output indices while
 * the load runs; file indices once handed to the dataset). */
typedef struct parload__badlist {
	uint64_t *v;
	size_t n, cap;
} parload__badlist;

/* What a load checks in each view. */
typedef struct parload__verify {
	const parload_desc *d;
	const parload_shape *s;
	const char *path;
	bool crc;        /* PARLOAD_OPT_VERIFY_CRC and the file has CRCs */
	bool keep_going; /* PARLOAD_OPT_KEEP_GOING */
	/* The CRCs are of the rows as they are read (a corrected load, whose
	 * dataset holds other bytes): parload__rowcrc_*, never the
	 * dataset's pixels. */
	bool rows;
} parload__verify;

/* CRC-32C of A then B, from the CRCs of A and of B (len2 bytes). */
uint32_t parload__crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* A run of one view's payload bytes [at, at + len) a worker has read, and
 * their CRC-32C. */
typedef struct parload__crcpart {
	uint64_t k;   /* output view */
	uint64_t at, len;
	uint32_t crc;
} parload__crcpart;

/* The runs a worker could not finish (a view it shares with other
 * workers), checked once all are done. */
typedef struct parload__crcparts {
	parload__crcpart *p;
	size_t n, cap;
} parload__crcparts;

/* One worker's CRC of the rows it reads: the run in progress (on), the
 * runs it leaves to the end, its bad views. */
typedef struct parload__rowcrc {
	const parload__verify *v;
	const parload_view_header *headers; /* of output view k_begin */
	uint64_t k_begin;
	bool on;
	parload__crcpart run;
	parload__crcparts parts;
} parload__rowcrc;

/* Add len payload bytes at byte at of output view k's payload.  A run
 * that covers a whole payload is checked when the next begins (or at
 * flush): a bad CRC is added to bad and, without keep-going, fails with
 * PARLOAD_ECRC naming the view.  Other runs are kept for
 * parload__rowcrc_finish. */
int parload__rowcrc_add(parload__rowcrc *r, uint64_t k, uint64_t at,
			const void *data, size_t len, parload__badlist *bad,
			parload_error *err);
int parload__rowcrc_flush(parload__rowcrc *r, parload__badlist *bad,
			  parload_error *err);
/* The runs all n workers left, joined view by view and checked; bad views
 * added to bad (sorted afterwards by the caller). */
int parload__rowcrc_finish(parload__rowcrc *r, unsigned n,
			   parload__badlist *bad, parload_error *err);
void parload__rowcrc_free(parload__rowcrc *r);


/* ---- correct.c: flat- and dark-field correction ---- */

/* The references of a corrected load, reduced over its selection. */
typedef struct parload__correct {
	bool on;
	bool minus_log;
	/* rows x cols of the selection, or NULL: the reduced darks, and
	 * 1 / max(F - D, 1e-6) of the reduced flats F. */
	float *dark, *scale;
	uint32_t cols;      /* the selection's (binned) */
	uint32_t bin;       /* 1, or the N of N x N bins */
	int type;           /* of the pixels before the correction */
} parload__correct;




/* ---- containers (tiff.c, hdf5.c): views whose rows lie in strips ---- */

/* The codecs: how a strip's stored bytes become its rows, one row each
 * of codec/codecs.c's table (its name, filter ids, decode). */
typedef enum parload__codec {
	PARLOAD__CODEC_NONE = 0,   /* bytes as they are */
	PARLOAD__CODEC_DEFLATE,    /* a zlib stream (HDF5 1, TIFF 8) */
	PARLOAD__CODEC_SHUFFLE,    /* HDF5 2: byte 0 of every element, then
				    * byte 1, ... */
	PARLOAD__CODEC_FLETCHER32, /* HDF5 3: a checksum after the bytes */
	PARLOAD__CODEC_LZF,        /* HDF5 32000 (h5py's) */
	PARLOAD__CODEC_BLOSC,      /* HDF5 32001: one Blosc 1 buffer */
	PARLOAD__CODEC_LZ4,        /* HDF5 32004: the LZ4 filter's blocks */
	PARLOAD__CODEC_BITSHUFFLE, /* HDF5 32008 */
	PARLOAD__CODEC_ZSTD,       /* HDF5 32015: one zstd frame */
	PARLOAD__CODEC_GZIP,       /* one gzip member (numcodecs, Zarr v3) */
	PARLOAD__CODEC_CRC32C,     /* Zarr v3: a CRC-32C after the bytes */
	PARLOAD__CODEC_BZIP2,      /* HDF5 307, numcodecs BZ2: one stream */
	PARLOAD__CODEC_CUSTOM,     /* the container's decoder reads it */
	PARLOAD__CODEC_COUNT
} parload__codec;

#define PARLOAD__MAX_FILTERS 8

/* One stage of a strip's filter pipeline. */
typedef struct parload__filter {
	parload__codec codec;
	uint32_t elem;       /* bytes per element it works on (shuffles) */
	uint32_t param[4];   /* the codec's own, as its row reads them */
} parload__filter;

/* One stored piece of a view: rows [j * rows, (j + 1) * rows) of it (the
 * view's last strip may hold fewer rows than it decodes to). */
typedef struct parload__strip {
	uint64_t off;    /* in its file */
	uint64_t bytes;  /* stored (compressed) bytes; in a plain table rows
			  * * row_size of them are read, at most */
	uint32_t file;   /* index into the source's files */
	uint32_t page;   /* the container's own index (a TIFF page, an HDF5
			  * frame), for a custom decoder and messages */
	uint32_t mask;   /* the table's filters this chunk skipped (bit k:
			  * filter k; HDF5 stores a chunk an optional filter
			  * could not shrink without it), and
			  * PARLOAD__STRIP_FILL */
} parload__strip;

/* An entry's mask bit for a chunk never written (a Zarr chunk file that
 * does not exist, a shard's empty slot): it decodes to the table's fill
 * value and reads nothing (its bytes 0, its file any; its off tells the
 * chunk from the others, as a stored chunk's offset does). */
#define PARLOAD__STRIP_FILL (1u << 31)

struct parload__strips;

/* A container's own decoder (the table's decoder): libtiff for compressed or
 * tiled pages, libhdf5 for filters parload does not decode.  Each worker
 * opens its own state; decode fills out (out_len bytes: the strip's rows,
 * whole, in desc.encoding) with strip i; errors name the file, the view
 * and the byte offset. */
typedef struct parload__decoder {
	const char *name;
	int (*open)(const struct parload__strips *t, void **state,
		    parload_error *err);
	int (*decode)(void *state, const struct parload__strips *t, uint64_t i,
		      unsigned char *out, size_t out_len, parload_error *err);
	void (*close)(void *state);
	void (*free_arg)(void *arg); /* the container's arg, with the table */
} parload__decoder;

/* Strips i0 .. i0 + n - 1 of a table that lie at one stride in one file,
 * each of the same stored size, their views' pages counting up one a view:
 * strip i0 + k at off + k * step.  A TIFF's pages written one after
 * another are one run, an HDF5 dataset's chunks a run between two nodes of
 * its index: a table of 20,000 views takes a few runs of 48 bytes, not
 * 480 KB of fresh pages a strip each (most of describe()'s time). */
typedef struct parload__strip_run {
	uint64_t i0, n;
	uint64_t off, step;
	uint64_t bytes;
	uint32_t file;
	uint32_t page;          /* of strip i0's view */
	uint32_t mask;          /* filters its chunks skipped */
} parload__strip_run;

/* Where each view's rows lie: strips of `rows` rows, per_view of them per
 * view, each anywhere in any file of the source.  The rows of a strip
 * decode to row_size bytes each (desc.row_size) in desc.encoding.  A
 * plain table (parload__strips_plain) is read straight into place; in
 * any other each worker decodes the chunks its share touches into a
 * buffer of its own (codec/decode.c) and takes the rows from there, as
 * from a bounce buffer.
 *
 * A chunk: depth frames of `rows` rows of tile_cols columns, decoded by
 * the filters (last first) or the container's decoder.  Entry
 * (v * per_view + j) * tiles + x of the table is tile x of strip j of
 * view v (with one tile, the strip's index); with depth > 1 every view of
 * a chunk has its entry at the chunk's place, its page % depth the view's
 * frame in the chunk (page: the container's frame). */
typedef struct parload__strips {
	uint32_t rows;          /* rows per strip, >= 1 */
	uint32_t per_view;      /* ceil(height / rows) */
	uint64_t views;         /* stream views */
	/* The entries given (parload__strips_add), in runs in the order of
	 * their index; an entry no run holds is absent (owned). */
	parload__strip_run *run;
	uint64_t runs, run_cap;
	uint64_t added;         /* entries given */
	/* The filters in the order they were applied when written; decoded
	 * last first. */
	parload__filter filter[PARLOAD__MAX_FILTERS];
	uint32_t nfilters;
	uint32_t depth;         /* frames a decoded chunk holds (0 or 1: one) */
	uint32_t tiles;         /* chunks across a row (0 or 1: one) */
	uint32_t tile_cols;     /* columns of each (the last may reach past the
				 * width); with one tile, unused */
	/* A chunk never written (PARLOAD__STRIP_FILL): fill_size bytes of one
	 * element as it decodes, repeated; fills: the table has one. */
	unsigned char fill[8];
	uint32_t fill_size;
	bool fills;
	float *angles;          /* per stream view, or NULL (owned) */
	const parload__decoder *decoder; /* the container's, or NULL */
	void *arg;              /* the container's, for its decoder */
	const char *serial;     /* why the pixels are read one thread at a
				 * time (a decoder behind a global lock), or
				 * NULL; parload_stats.serial */
	const char *path;       /* the container, in messages */
} parload__strips;

/* Frames of a decoded chunk, chunks across a row, entries a view. */
static inline uint32_t parload__strips_depth(const parload__strips *t)
{
	return t->depth > 1 ? t->depth : 1;
}

static inline uint32_t parload__strips_tiles(const parload__strips *t)
{
	return t->tiles > 1 ? t->tiles : 1;
}

static inline uint64_t parload__strips_step(const parload__strips *t)
{
	return (uint64_t)t->per_view * parload__strips_tiles(t);
}

/* Whether t's strips are the rows as they are, read straight into place:
 * no filter, no decoder, one tile, one frame a chunk, every chunk
 * written. */
static inline bool parload__strips_plain(const parload__strips *t)
{
	return !t->decoder && t->nfilters == 0 && !t->fills &&
	       parload__strips_tiles(t) == 1 && parload__strips_depth(t) == 1;
}

/* Strips a view of height rows takes, rows a strip (>= 1): ceil(height /
 * rows), in 64 bits (height + rows - 1 does not fit 32 when both are
 * large, as a fuzzed HDF5 header's are). */
static inline uint32_t parload__strips_per_view(uint32_t height,
						uint32_t rows)
{
	return (uint32_t)(((uint64_t)height + rows - 1) / rows);
}

/* Give t strip i (past every strip given before: 1 otherwise, and t is
 * unchanged); it joins the last run where it continues it.  0, or -1 when
 * out of memory. */
int parload__strips_add(parload__strips *t, uint64_t i, const parload__strip *s);
/* Give t strips i .. i + n - 1 of views of one strip each (per_view 1),
 * strip i + k at s->off + k * step, of page s->page + k, as n calls of
 * parload__strips_add would. */
int parload__strips_add_stepped(parload__strips *t, uint64_t i, uint64_t n,
				const parload__strip *s, uint64_t step);
/* Forget every strip given (the runs' memory is kept). */
void parload__strips_clear(parload__strips *t);
/* The run that holds strip i, t->runs when none does (absent). */
uint64_t parload__strips_find(const parload__strips *t, uint64_t i);

/* Whether run u holds strip i. */
static inline bool parload__run_holds(const parload__strip_run *u, uint64_t i)
{
	return i >= u->i0 && i - u->i0 < u->n;
}

/* Strip i of t (zeros when absent).  hint: a caller's run to try first, and
 * the one after it (NULL: none), updated: walking the strips in order
 * costs no search. */
static inline parload__strip parload__strip_of(const parload__strips *t,
					       uint64_t i, uint64_t *hint)
{
	uint64_t r = hint ? *hint : t->runs;
	const parload__strip_run *u;
	uint64_t k;

	if (r >= t->runs || !parload__run_holds(&t->run[r], i))
		r = r + 1 < t->runs && parload__run_holds(&t->run[r + 1], i) ?
			    r + 1 :
			    parload__strips_find(t, i);
	if (r >= t->runs)
		return (parload__strip){ 0 };
	if (hint)
		*hint = r;
	u = &t->run[r];
	k = i - u->i0;
	return (parload__strip){
		.off = u->off + k * u->step, .bytes = u->bytes, .file = u->file,
		.mask = u->mask,
		.page = parload__strips_step(t) == 1 ?
				u->page + (uint32_t)k :
				u->page + (uint32_t)(i / parload__strips_step(t) -
						     u->i0 / parload__strips_step(t)) };
}

/* Strip j of stream view v (its first tile). */
static inline parload__strip parload__strip_at(const parload__strips *t,
					       uint64_t v, uint64_t j)
{
	return parload__strip_of(t, (v * t->per_view + j) *
					    parload__strips_tiles(t), NULL);
}

/* Bytes strip i decodes to. */
static inline size_t parload__strip_size(const parload__strips *t,
					 const parload_desc *d)
{
	return (size_t)t->rows * (size_t)d->row_size;
}

/* What a container's metadata says: a description (format TIFF or HDF5,
 * width, height, type, encoding of the decoded rows, count), its files
 * and its strips. */
typedef struct parload__container {
	parload_desc desc;
	char **paths;           /* n files, in stream order (owned) */
	size_t n;
	parload__strips strips;
	/* Files whose metadata the library's reader (libtiff, libhdf5) read
	 * where parload's own could not (parload_stats.fallback_files). */
	uint64_t fallback_files;
} parload__container;


/* ---- wait.c: the caller's turn while a load runs ---- */

/* How a load is stopped: the request's cancel (set from anywhere) and its
 * on_wait (called on the caller's thread while it waits). */
typedef struct parload__waiter {
	const volatile int *cancel; /* the request's, or NULL */
	parload_wait_fn fn;         /* the request's on_wait, or NULL */
	void *arg;
	double interval;            /* seconds between calls of fn */
	double next;                /* parload__now() when fn is due */
	int stop;                   /* fn said stop (atomic: workers read it) */
} parload__waiter;

/* ---- one load, as every stage sees it ---- */

struct parload__engine;

typedef struct parload__ctx {
	/* The request. */
	const parload_request *req;
	const char *path;             /* names the source in every message */
	const parload_options *opts;
	parload_error *err;
	const parload_buffers *into;  /* the caller's memory, or NULL */
	/* The arrays the load fills are a mapping of its own (dataset.c),
	 * which workers may bind to their nodes: not the caller's memory,
	 * nor a heap block. */
	bool arrays_mapped;
	struct parload__engine *engine; /* the loader's workers */

	/* The source (source.c): its files, at least one.  fd and size are
	 * the first file's (what the single-file strategies read). */
	parload__file *files;
	size_t nfiles;
	parload__file one;  /* the files of a one-file source */
	const struct parload__driver *driver; /* its format's (driver.h) */
	struct parload__described *described; /* what the driver made of
					       * it (its layout, files,
					       * strips), or NULL */
	const parload__strips *strips; /* its strips, or NULL */
	int fd;
	bool stream;     /* a pipe, socket or character device: read() only */
	uint64_t size;   /* a regular file's size */

	/* What is read (source.c, select.c). */
	parload_desc d;        /* resolved; count: the complete views */
	uint64_t declared;     /* the views the header or count promises */
	bool raw_headers;      /* a raw stream's view headers are read */
	parload_cache cache;   /* the page-cache mode in force (cache.c) */
	uint64_t drop_hold;    /* drop: bytes a worker holds (parload__dropper) */
	parload__correct corr; /* a corrected load's references (correct.c) */
	parload_loader *loader; /* the loader the load runs on */
	parload_shape shape;
	bool whole;            /* the whole file in view layout */
	parload_dataset *out;

	/* What the read step reports. */
	parload__io_stats io;  /* reads, the file header's included */
	uint64_t decoded;      /* a container's strips decoded */
	const char *serial;    /* its strips' serial reason, kept past close */
	char codec[PARLOAD_CODEC_NAME_MAX]; /* its strips' filters, the same */
	uint64_t fallbacks;    /* the container's fallback_files, the same */
	unsigned threads;      /* threads that read */
	bool checked;          /* it checked every view itself (below) */
	parload__badlist bad;  /* with ->checked: bad CRCs, output indices */
	parload__verify verify;
	double t0;
	void *state;           /* the strategy's, between header and release */
	parload__waiter wait;  /* its cancel and on_wait (wait.c) */
} parload__ctx;


/* ---- verify.c ---- */

void parload__verify_init(parload__verify *v, const parload__ctx *c);
/* The rule that a CRC covers a whole payload: PARLOAD_ENOTSUP when v->crc
 * and the shape lacks some rows or columns, said before anything is read. */
int parload__verify_supported(const parload__verify *v, parload_error *err);
/* Check output views [first, first + n) (headers at vh, contiguous
 * payloads from pixels): view_index always, the payload CRC when v->crc.
 * A bad CRC is added to bad; it stops the check with PARLOAD_ECRC (err says
 * which view) unless v->keep_going.  Any other failure (EVIEWINDEX, ENOMEM)
 * stops it too. */
int parload__verify_views(const parload__verify *v,
			  const parload_view_header *vh, const void *pixels,
			  uint64_t first, uint64_t n, parload__badlist *bad,
			  parload_error *err);
/* The same for output views whose rows are not contiguous (the sinogram
 * layout): the CRC runs over the view's rows wherever they lie. */
int parload__verify_scattered(const parload__verify *v,
			      const parload_view_header *vh,
			      const unsigned char *pixels, uint64_t first,
			      uint64_t n, parload__badlist *bad,
			      parload_error *err);
int parload__badlist_add(parload__badlist *b, uint64_t view);
/* Append src to dst (src's views all follow dst's); src is emptied. */
int parload__badlist_append(parload__badlist *dst, parload__badlist *src);
void parload__badlist_free(parload__badlist *b);
/* The end of a checked load: no bad view is success; otherwise
 * PARLOAD_ECRC naming the first (recomputed from the dataset), or, with
 * keep_going, success with the list (as file indices) handed over to
 * ds->bad_views. */
int parload__verify_finish(const parload__verify *v, parload__badlist *bad,
			   parload_dataset *ds, parload_error *err);
/* Check every view of a loaded dataset (strategies that do not check as
 * they read). */
int parload__verify_all(parload__ctx *c);

/* ---- dataset.c: the memory a dataset owns ---- */

/* Lay out c->out for c->shape: in the caller's buffers when c->into is set
 * (PARLOAD_ESPACE if they are too small), else in one block (nothing for
 * an empty selection): pixels of a huge page or more in an anonymous
 * mapping, advised for transparent huge pages unless
 * PARLOAD_OPT_NO_HUGEPAGES is set, whose fresh pages are not touched, so
 * the thread that first writes a page places it on its NUMA node; smaller
 * ones in a heap block.  Sets c->arrays_mapped.  On failure c->out is all
 * zeros. */
int parload__dataset_alloc(parload__ctx *c);
/* A window of a batched load: arrays for views views of c->shape, laid out
 * and advised as a dataset's, but always a mapping (c->arrays_mapped is
 * set).  Release with parload_buffers_free(). */
int parload__window_alloc(parload__ctx *c, uint64_t views, parload_buffers *b);
/* A fresh anonymous mapping of len bytes (a multiple of
 * PARLOAD__HUGE_PAGE) that starts on a huge-page boundary, or NULL; its
 * pages untouched and unadvised.  Release with parload__sys_munmap(p,
 * len). */
void *parload__map_huge_aligned(size_t len);
/* Whether count things of each bytes can be had (the machine's RAM and
 * swap, RLIMIT_AS, RLIMIT_DATA; a product past 64 bits never): 0, or
 * PARLOAD_ENOMEM naming path, the count, what they are ("views"), and the
 * bytes and the limit.  The dataset's arrays are asked this before they
 * are made, and a container's tables of counts read from the file before
 * they are. */
int parload__memory_check(parload_error *err, const char *path,
			  uint64_t count, const char *things, uint64_t each);

/* ---- plan.c: the extent plan, who reads what ---- */

/* Where the bytes of a load go: the shape's views, rows and columns of the
 * file h, into the arrays of the dataset. */
typedef struct parload__plan {
	const parload_desc *d;
	const parload__file *files;
	size_t nfiles;
	const parload_shape *s;
	/* The output views [k_begin, k_end) this plan reads; its arrays hold
	 * view k_begin at index 0 (a batch's window, or the whole dataset). */
	uint64_t k_begin, k_end;
	parload_view_header *headers;
	unsigned char *raw_headers;
	unsigned char *pixels;
	bool native;           /* parload's own view headers (typed) */
	uint64_t hdr;          /* view header bytes read per view */
	/* Rows stored otherwise than the dataset holds them (byte order,
	 * packing) are converted by this; NULL: copied as they are. */
	parload__convert_fn convert;
	/* A corrected load's references: every row is converted, then
	 * corrected into float32; NULL: none. */
	const parload__correct *correct;
	/* A container's strips (where each view's rows lie), or NULL; decoded:
	 * they are compressed, and a worker reads each strip's rows from its
	 * decoder (parload__strip_get) instead of the file. */
	const struct parload__strips *strips;
	bool decoded;
	/* Sinograms: split between the workers by bands of rows, each
	 * worker's sinograms whole (and on its node), rather than by views
	 * (parload__plan_split). */
	bool bands;
	/* Rows go whole through the bounce buffer (convert or correct). */
	bool whole_rows;
	/* Every column of rows stored otherwise converted where they land:
	 * the pixels are read as an unconverted load reads them, straight
	 * into the dataset (or a bounce buffer, for small runs), then
	 * converted there while they are in the core's cache.  unit_in bytes
	 * of the file (a pixel to swap, a packed group) become unit_out
	 * bytes of the dataset, and a piece is whole units.  A packed piece
	 * is read into the tail of its own place and unpacked forward over
	 * itself: each group's pixels take more bytes than the group, so the
	 * writes never overtake the reads (parload__piece_convert).  Without
	 * in_place both units are 1. */
	bool in_place;
	uint32_t unit_in, unit_out;
	uint64_t row_bytes;    /* one detector row in the file */
	uint32_t bin;          /* detector rows per output row (binning) */
	uint64_t skip, take;   /* of a row: bytes before the columns, theirs */
	uint64_t dst_row;      /* bytes between rows r and r + 1 of a view */
	bool crop;             /* some columns are left out */
	/* The smallest run of bytes that lands contiguously in memory: under
	 * 4 KiB, reading through a bounce buffer beats one iovec each. */
	uint64_t run;
} parload__plan;

/* One worker's share.  Each selected view k contributes a stream of
 * bytes: its 32-byte header when .headers, then rows [row_begin, row_end)
 * of the file, whole.  The share is positions [begin, end) of the
 * concatenation of those streams over k = 0, 1, ...; a view is split
 * between shares when views are few or large. */
typedef struct parload__share {
	uint32_t row_begin, row_end;
	bool headers;
	uint64_t begin, end;
	/* The bytes of the pixel array it fills, when they are one range
	 * (for NUMA binding); 0 and 0 otherwise. */
	uint64_t dst_begin, dst_end;
} parload__share;

/* The plan of shape s over the files of layout d; raw_headers: a raw
 * stream's view headers are read.  It reads into no arrays until
 * parload__plan_views says which. */
void parload__plan_init(parload__plan *p, const parload_desc *d,
			const parload__file *files, size_t nfiles,
			bool raw_headers, const parload_shape *s);
/* Every row of the plan is corrected by k into float32 (whole rows, through
 * the bounce buffer). */
void parload__plan_correct(parload__plan *p, const parload__correct *k);
/* The views of the plan lie where strips t say (a container). */
void parload__plan_strips(parload__plan *p, const struct parload__strips *t);
/* Restrict the plan to output views [k_begin, k_end), whose headers, raw
 * headers and pixels (view layout) start at the given arrays. */
void parload__plan_views(parload__plan *p, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels);
/* Bytes of view k's stream in share sh. */
uint64_t parload__share_stride(const parload__plan *p,
			       const parload__share *sh);
/* Split the plan between n workers (n shares).  View layout: by bytes,
 * boundaries on multiples of align (a power of two) of the pixel array
 * where the share allows, so no page is written by two workers.  Sinogram
 * layout: with bands, by bands of rows, each worker writing whole
 * sinograms, and by views within a band when there are fewer rows than
 * workers; else by views, each worker writing its views' part of every
 * sinogram. */
void parload__plan_split(const parload__plan *p, unsigned n, size_t align,
			 parload__share *shares);

/* Walks a share in file order, yielding destinations for preadv. */
typedef struct parload__cursor {
	const parload__plan *p;
	const parload__share *sh;
	uint64_t stride;   /* bytes of one view's stream */
	uint64_t pos;      /* next position */
	uint64_t k, q;     /* ... as view k's stream's byte q */
	size_t file;       /* the file of the last position located */
	uint64_t strip;    /* a decoded plan: the strip of that position */
	uint64_t run;      /* the strips table's run of that position */
	uint64_t range_strip; /* ... and of the range cursor_next yielded,
			       * whose *off is then a byte of its rows */
	/* Plain records (view layout, rows copied as they are, no strips):
	 * a whole view's pieces are its header (hdr bytes, at its record)
	 * and its band (band bytes, pix_off into its record, pix_dst into
	 * its view's pixels), found with no division (cursor_next). */
	bool plain;
	uint64_t hdr, band, pix_off, pix_dst;
	/* Set by a reader that compacts whole records in place (read_batch.c's
	 * read_records; false after cursor_init).  Then a range of plain records
	 * whose views are whole (their header and all their pixels) comes
	 * as one buffer: the records' bytes as they lie in the file, to be
	 * read at the first view's pixels, no further than the share's own
	 * pixels (dst_end).  records says how many views such a range holds,
	 * 0 for any other range. */
	bool compact;
	uint64_t records;
} parload__cursor;

void parload__cursor_init(parload__cursor *c, const parload__plan *p,
			  const parload__share *sh);
/* Fill at most max_iov buffers totalling at most max_bytes from the
 * cursor on, stopping where the file is not contiguous; returns how many
 * (0 at the share's end) and advances the cursor.  *off and *file receive
 * the file offset of the first and its file.  A buffer whose iov_base is
 * NULL stands for file bytes to skip (columns left out): such a batch
 * must be read through a bounce buffer.  With the plan's convert, rows[i]
 * (when rows is not NULL) says buffer i is one whole file row to convert
 * into iov_base (the row's first selected pixel), iov_len being the
 * file's bytes; such rows are never cut, so a batch may hold one row of
 * more than max_bytes.  With the plan's in_place, rows[i] says buffer i
 * is whole units to convert (cut, if at all, between two of them), its
 * iov_base where its file bytes go: see parload__piece_convert. */
int parload__cursor_next(parload__cursor *c, struct iovec *iov, bool *rows,
			 int max_iov, size_t max_bytes, uint64_t *off,
			 const parload__file **file);
/* Output views the cursor has read completely so far. */
uint64_t parload__cursor_done(const parload__cursor *c);
/* A piece of the plan's in_place conversion (a buffer that cursor_next
 * flagged in rows[]), whose file bytes are at src (piece->iov_base itself
 * when it was read there, else a bounce buffer): converted into the
 * dataset. */
void parload__piece_convert(const parload__plan *p, const struct iovec *piece,
			    const unsigned char *src);


#endif /* PARLOAD_MODEL_H */
