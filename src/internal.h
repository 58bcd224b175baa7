/*
 * internal.h - what the parts of libparload share.  Nothing here is part of
 * the public interface: every name is parload__x and hidden from the shared
 * library's symbol table.  docs/ARCHITECTURE.md walks through the pipeline
 * these pieces make.
 */
#ifndef PARLOAD_INTERNAL_H
#define PARLOAD_INTERNAL_H

#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "parload.h"
/* System, allocation, thread and hwloc calls go through parload__sys_x:
 * the plain call, or a fault-injection wrapper (tests/fault/fault.h). */
#include "sys.h"

#define PARLOAD__UNUSED(x) ((void)(x))
#define PARLOAD__MIN(a, b) ((a) < (b) ? (a) : (b))
#define PARLOAD__MAX(a, b) ((a) > (b) ? (a) : (b))

/* Linux moves at most this many bytes in one read/pread/preadv call
 * (MAX_RW_COUNT: INT_MAX rounded down to a page). */
#define PARLOAD__KERNEL_MAX_READ ((size_t)0x7ffff000)
#define PARLOAD__DEFAULT_MAX_READ ((size_t)8 << 20)
#define PARLOAD__HUGE_PAGE ((size_t)2 << 20)
#define PARLOAD__PAGE ((size_t)4096)

/* a * b into *out: false when it does not fit in 64 bits (*out then
 * unset).  Every count read from a file is multiplied by a size through
 * this before it sizes anything. */
static inline bool parload__mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* Whether this host stores its numbers big-endian. */
static inline bool parload__host_be(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 0;
}

/* ---- errors.c: the error table and the messages ---- */

/* Fill *err (when not NULL) and return code.  The message reads
 * "PATH: TEXT (view V, byte offset O)", TEXT being fmt or, when fmt is NULL,
 * parload_strerror(code); the parenthesis names only what is not
 * PARLOAD_NONE, and sys_errno, when not 0, is appended as ": strerror".
 * PATH and TEXT are escaped (parload__escape); where the message would
 * not fit in parload_error.message, the reason and the parenthesis are
 * kept whole and PATH and TEXT are shortened in their middle. */
int parload__fail(parload_error *err, int code, int sys_errno,
		  const char *path, uint64_t view, uint64_t offset,
		  const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
int parload__vfail(parload_error *err, int code, int sys_errno,
		   const char *path, uint64_t view, uint64_t offset,
		   const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));
/* The same with no view and no offset: a failure of the file as a whole. */
int parload__fail_path(parload_error *err, int code, int sys_errno,
		       const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Put "prefix: " before err's message, as parload__vfail puts a path. */
void parload__error_prefix(parload_error *err, const char *prefix);
/* PARLOAD_ENOMEM for path, with the code's own text. */
int parload__fail_nomem(parload_error *err, const char *path);

/* fail.c: text as a message shows it.  Every byte a terminal would act on
 * instead of printing is escaped: \n, \t, \r, and \xNN for the other
 * control bytes, bytes that are not well-formed UTF-8, C1 controls and the
 * Unicode marks that reorder text; the rest (backslash included) is kept,
 * so escaping escaped text changes nothing.  parload__escape writes the
 * escaped s[0..len) into dst, at most size bytes with the NUL, leaving out
 * its middle ("first part...last part") when it is longer, and returns the
 * bytes written; parload__escaped_len is its whole length. */
size_t parload__escape(char *dst, size_t size, const char *s, size_t len);
size_t parload__escaped_len(const char *s, size_t len);
/* A name taken from a file (a .nhdr's data file or field, an HDF5 link, a
 * TIFF string), as a message quotes it ('%s'): s, at most its first n
 * bytes, escaped into buf (size bytes, the middle of a longer name left
 * out); returns buf.  s NULL: "(none)". */
const char *parload__quote(char *buf, size_t size, const char *s, size_t n);
#define PARLOAD__NAME_SIZE 200
/* parload__quote into a buffer of its own, which lives until the end of
 * the enclosing block: fail(..., "data file '%s'", PARLOAD__Q(name)). */
#define PARLOAD__Q(s)                                                          \
	parload__quote((char[PARLOAD__NAME_SIZE]){0}, PARLOAD__NAME_SIZE, (s), \
		       SIZE_MAX)
#define PARLOAD__QN(s, n)                                                      \
	parload__quote((char[PARLOAD__NAME_SIZE]){0}, PARLOAD__NAME_SIZE, (s), \
		       (n))

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

/* ---- io.c: reads that finish or say why ---- */

typedef struct parload__io_stats {
	uint64_t calls; /* read system calls issued */
	uint64_t bytes; /* bytes they returned */
} parload__io_stats;

/* Read exactly len bytes at offset off, looping over short reads and EINTR
 * and asking for at most max_read bytes a call.  Fails with EIO (naming the
 * offset) or ETRUNCATED (end of file first); view names the view for the
 * message, or PARLOAD_NONE. */
int parload__pread_full(int fd, void *buf, size_t len, uint64_t off,
			size_t max_read, parload__io_stats *st,
			const char *path, uint64_t view, parload_error *err);

/* The same from file f of layout d, but the end of the file after need
 * bytes (<= len) ends it well (an O_DIRECT read of whole blocks past the
 * end of a file); a failure names f and the view at the failing offset. */
int parload__pread_upto(int fd, void *buf, size_t len, size_t need,
			uint64_t off, size_t max_read, parload__io_stats *st,
			const parload_desc *d, const parload__file *f,
			parload_error *err);

/* The same for a vector of iovcnt (at most IOV_MAX) buffers that lie back
 * to back in the file from off.  iov is consumed (modified).  f, when not
 * NULL, is the file of layout d read, so that a failure names it and the
 * view that holds the failing offset. */
int parload__preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t off,
			 size_t max_read, parload__io_stats *st,
			 const parload_desc *d, const parload__file *f,
			 const char *path, parload_error *err);

/* The stream view whose record holds offset off of file f (PARLOAD_NONE
 * before the first record). */
uint64_t parload__view_at(const parload_desc *d, const parload__file *f,
			  uint64_t off);

/* Drop the first n bytes of a vector of *cnt buffers: whole buffers are
 * skipped, a partly filled one moves on. */
void parload__iov_advance(struct iovec **iov, int *cnt, size_t n);

/* "directory", "FIFO", ... for messages about what is not a regular
 * file. */
const char *parload__file_kind(mode_t mode);

/* opts->max_read, or the default, within the kernel's limit. */
size_t parload__max_read(const parload_options *o);

/* Seconds on a monotonic clock. */
double parload__now(void);

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

/* ---- aio.c: reads in flight (O_DIRECT: io_uring, else Linux AIO) ---- */

/* One read handed to the kernel; once done, res is the bytes it read or
 * -errno. */
typedef struct parload__aread {
	uint64_t cb[8]; /* the kernel's control block (struct iocb), or the
			 * io_uring read's struct iovec */
	int64_t res;
	bool done;
} parload__aread;

/* An io_uring ring as this process sees it: its descriptor and the
 * three regions it maps (aio.c). */
typedef struct parload__ring {
	int fd;
	void *sq, *cq, *sqes;
	size_t sq_len, cq_len, sqes_len;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	void *cqes;
} parload__ring;

/* A worker's queue of reads in flight: an io_uring ring where the kernel
 * gives one, else a Linux AIO context. */
typedef struct parload__aio {
	parload__ring ring;
	unsigned long ctx;
	unsigned inflight;
	bool open;
	bool uring; /* the ring, not ctx */
} parload__aio;

/* A queue for up to n reads in flight: 0, or -1 (errno) where the kernel
 * gives none, and the caller reads synchronously. */
int parload__aio_open(parload__aio *q, unsigned n);
/* Hand the kernel r, a read of len bytes at off of fd into buf: 0, or -1
 * (errno) when it will not take it (the caller reads it itself). */
int parload__aio_read(parload__aio *q, parload__aread *r, int fd, void *buf,
		      size_t len, uint64_t off);
/* Wait until r is done (and mark done those the kernel finishes
 * meanwhile): 0, or -1 (errno) when waiting failed. */
int parload__aio_wait(parload__aio *q, parload__aread *r);
/* Wait for every read in flight, so that the memory they fill may be let
 * go of; the queue stays open for the next load.  A queue that cannot be
 * waited on is closed (the kernel then waits for its reads). */
void parload__aio_settle(parload__aio *q);
/* Wait for every read in flight, then free the queue: a ring at once (the
 * kernel tears it down in the background), an AIO context with
 * io_destroy (two RCU grace periods, 32-42 ms on a 2-core VM, whatever it
 * held). */
void parload__aio_close(parload__aio *q);

/* ---- cache.c: what a load leaves in the page cache ---- */

struct parload__ctx;
/* Settle the load's mode (c->cache) once its files are described: auto
 * chosen, direct's O_DIRECT descriptors opened (direct_ok: the strategy
 * reads through them), drop where direct is refused or does not apply. */
int parload__cache_prepare(struct parload__ctx *c, bool direct_ok);
/* Close the O_DIRECT descriptors. */
void parload__cache_close(struct parload__ctx *c);
/* auto's look at f: the share of its sampled pages in the page cache, in
 * [0, 1] (0 when it cannot be told). */
double parload__cache_resident(const parload__file *f);
/* After a drop load: drop the files, for a strategy that does not drop
 * as it reads, and for the pages a worker's readahead brought in after
 * the worker whose range they are in had let go of it. */
void parload__cache_after(struct parload__ctx *c);

/* How far ahead of a buffered reader of f the kernel may read: two of
 * its device's readahead windows (read_ahead_kb, or max_sectors_kb
 * where larger, from sysfs), or
 * PARLOAD__READAHEAD_UNKNOWN where sysfs does not say. */
#define PARLOAD__READAHEAD_UNKNOWN ((uint64_t)16 << 20)
uint64_t parload__readahead_reach(const parload__file *f);

/* One worker's ranges read, given to parload__drop_read and let go of a
 * few megabytes at a time with POSIX_FADV_DONTNEED, except the first
 * `hold` bytes it reads (held), which are let go of once every worker of
 * the pass is done (parload__drop_release): the worker before it in the
 * file reads ahead into them as it ends its own share, and would read
 * them from the device again. */
typedef struct parload__dropper {
	bool on;
	bool gaps;      /* what lies between its reads is nobody else's */
	uint64_t folio; /* lets go between these boundaries (or 1) */
	const parload__file *f; /* the file read after the held bytes */
	uint64_t mark;  /* of f, let go of up to here */
	uint64_t pos;   /* of f, read up to here */
	uint64_t hold;  /* bytes still to hold */
	const parload__file *held_f;
	uint64_t held_begin, held_end;
	/* The folio the last pass's share ended in (drop_release). */
	const parload__file *tail_f;
	uint64_t tail_begin, tail_end;
} parload__dropper;

/* Start dr for a pass of load c: dr was zeroed when made, and keeps the
 * last pass's tail.  gaps: what the worker skips between its reads in a
 * file is nobody else's (whole views: false where rows are selected,
 * which another process may read, or split between the workers); then
 * it lets go of whole folios, else of exactly what it read. */
void parload__drop_init(parload__dropper *dr, struct parload__ctx *c,
			bool gaps);
/* Bytes [off, off + len) of f are in the dataset: what lies behind them
 * in the worker's share (and, with gaps, between them) is let go of,
 * DROP_BATCH at a time, from folio boundary to folio boundary. */
void parload__drop_read(parload__dropper *dr, const parload__file *f,
			uint64_t off, uint64_t len);
/* Let go of what is pending up to the last folio boundary read, except
 * the held bytes (the worker's share is over). */
void parload__drop_flush(parload__dropper *dr);
/* Let go of the held bytes and of the last pass's tail, and keep this
 * one's (the worker has flushed the rest): no worker of the pass reads
 * any more. */
void parload__drop_release(parload__dropper *dr);

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

/* Row rr (of the selection) of pixels px (cols of the layout's type, in
 * the host's order) corrected into dst (cols floats). */
void parload__correct_row(const parload__correct *k, float *dst,
			  const unsigned char *px, uint64_t rr);
/* Binning: the sums of each bin's pixels of one detector row px (cols *
 * bin pixels of the layout's type, host order) added into acc (cols
 * floats); and a bin's bin rows summed in acc, made means and corrected
 * into dst as row rr of the (binned) selection. */
void parload__bin_add(const parload__correct *k, float *acc,
		      const unsigned char *px);
void parload__correct_binned(const parload__correct *k, float *dst,
			     const float *acc, uint64_t rr);

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

/* ---- containers (tiff.c, hdf5.c): views whose rows lie in strips ---- */

/* How a strip's stored bytes become its rows (decode.c). */
typedef enum parload__codec {
	PARLOAD__CODEC_NONE = 0,   /* the rows themselves, back to back: read
				    * straight into place, as a raw stream */
	PARLOAD__CODEC_DEFLATE,    /* a zlib stream of the rows */
	PARLOAD__CODEC_SHUFFLE_DEFLATE, /* HDF5: zlib over the rows' bytes
				    * shuffled (byte 0 of every element, then
				    * byte 1, ...) */
	PARLOAD__CODEC_CUSTOM      /* the container's decoder reads it */
} parload__codec;

/* One stored piece of a view: rows [j * rows, (j + 1) * rows) of it (the
 * view's last strip may hold fewer rows than it decodes to). */
typedef struct parload__strip {
	uint64_t off;    /* in its file */
	uint64_t bytes;  /* stored (compressed) bytes; with CODEC_NONE rows *
			  * row_size of them are read, at most */
	uint32_t file;   /* index into the source's files */
	uint32_t page;   /* the container's own index (a TIFF page, an HDF5
			  * frame), for a custom decoder and messages */
} parload__strip;

struct parload__strips;

/* A container's own decoder (CODEC_CUSTOM): libtiff for compressed or
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
} parload__strip_run;

/* Where each view's rows lie: strips of `rows` rows, per_view of them per
 * view, each anywhere in any file of the source, strip j of view v the
 * table's strip v * per_view + j.  The rows of a strip
 * decode to row_size bytes each (desc.row_size) in desc.encoding; the
 * plan reads them straight into place (CODEC_NONE) or each worker decodes
 * the strips its share touches into a buffer of its own (decode.c) and
 * takes the rows from there, as from a bounce buffer. */
typedef struct parload__strips {
	uint32_t rows;          /* rows per strip, >= 1 */
	uint32_t per_view;      /* ceil(height / rows) */
	uint64_t views;         /* stream views */
	/* The strips given (parload__strips_add), in runs in the order of
	 * their strips; a strip no run holds is absent (owned). */
	parload__strip_run *run;
	uint64_t runs, run_cap;
	uint64_t added;         /* strips given */
	parload__codec codec;
	uint32_t elem;          /* SHUFFLE: bytes per element */
	float *angles;          /* per stream view, or NULL (owned) */
	const parload__decoder *decoder; /* CODEC_CUSTOM */
	void *arg;              /* the container's, for its decoder */
	const char *serial;     /* why the pixels are read one thread at a
				 * time (a decoder behind a global lock), or
				 * NULL; parload_stats.serial */
	const char *path;       /* the container, in messages */
} parload__strips;

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
		.page = t->per_view == 1 ?
				u->page + (uint32_t)k :
				u->page + (uint32_t)(i / t->per_view -
						     u->i0 / t->per_view) };
}

/* Strip j of stream view v. */
static inline parload__strip parload__strip_at(const parload__strips *t,
					       uint64_t v, uint64_t j)
{
	return parload__strip_of(t, v * t->per_view + j, NULL);
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

/* Which container a source is, by its path (extension, a directory, a
 * glob, "FILE.h5:/dataset") or its first bytes: *kind PARLOAD_FORMAT_TIFF,
 * PARLOAD_FORMAT_HDF5, or -1 for neither (a raw stream, parload's own
 * format, a .nhdr).  A regular file whose first bytes cannot be read
 * fails as its load would (EOPEN, EIO). */
int parload__container_kind(const parload_source *src, int *kind,
			    parload_error *err);
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
/* source.c, where the files a file names may lie (PARLOAD_SRC_CONFINE),
 * one rule for every reader and writer: the directory of the file path,
 * resolved (realpath), into buf (PATH_MAX bytes); real (resolved)
 * relative to dir (resolved) when it lies below it, else NULL; and 0 when
 * the file named lies in the directory of the file namer (the directory
 * of its name) or below it, every symbolic link resolved, else
 * PARLOAD_EOPEN naming both. */
int parload__dir_of(const char *path, char *buf, parload_error *err);
const char *parload__path_below(const char *dir, const char *real);
int parload__confined(const char *namer, const char *named,
		      parload_error *err);
/* Free what a reader filled (takes a zeroed container). */
void parload__container_free(parload__container *c);
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

/* hdf5_index.c: the chunk index of a chunked HDF5 dataset (its layout
 * message's version 1 B-tree) read from the file with pread, without
 * libhdf5, which costs a call per chunk.  hdf5.c says where the dataset
 * is; anything the parser does not know or finds inconsistent makes it
 * answer "fall back" (to libhdf5's calls), but a key that is not a
 * chunk's of the dataset, which is an error: libhdf5's own table of
 * chunks has such a key too, where its reads see fill values. */
typedef struct parload__h5chunk {
	uint64_t at[3];     /* its first element: (frame, row, column); 0
			     * for the frame of a 2-D dataset */
	uint64_t addr;      /* its bytes' offset in the file */
	uint64_t bytes;     /* stored */
	uint32_t mask;      /* filters skipped (bit k: filter k) */
} parload__h5chunk;

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
typedef int (*parload__h5put)(void *ctx, const parload__h5chunk *c);

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

/* A put that gives each chunk of a dataset (frames, rows, columns; 2-D:
 * one frame) to the strip of its frame's view in t, whose rows and
 * per_view are set and which holds no strip yet: each strip once and in
 * order (as the index gives them), of the size want when plain (stored as
 * they are).  Failures name file and
 * name (the dataset); whole: every strip filled, none skipped a filter. */
typedef struct parload__h5strips {
	parload__strips *t;
	uint64_t dims[3];      /* the dataset's, as (frames, rows, columns) */
	const uint64_t *view;  /* a frame's view, UINT64_MAX for one not
				* loaded; NULL: every frame, in order */
	uint64_t views;        /* views loaded */
	uint64_t want;
	bool plain;
	const char *file, *name; /* the chunks' file, the dataset */
	uint32_t index;        /* the chunks' file in the container's files */
	parload_error *err;
	uint64_t seen;         /* chunks given */
	bool masked;           /* a chunk skipped a filter */
} parload__h5strips;
int parload__h5strips_put(void *ctx, const parload__h5chunk *c);
/* After the walk: every strip filled and none masked. */
bool parload__h5strips_whole(const parload__h5strips *p);

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
/* The last 4 of n bytes at b are the lookup3 checksum of the others, as
 * in HDF5's version 2 metadata (superblock, headers). */
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
/* ---- module.c, module_host.c: what needs libtiff or libhdf5, in a
 * module opened on first use ---- */

#define PARLOAD__MODULE_ABI 10u

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
	int (*h5strips_put)(void *ctx, const parload__h5chunk *c);
	bool (*h5strips_whole)(const parload__h5strips *p);
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

/* decode.c: one worker's strip decoder; it keeps the last strip it
 * decoded, so that a share that reads a strip's rows one batch at a time
 * decodes it once. */
typedef struct parload__strip_reader {
	const parload__strips *t;
	const parload_desc *d;
	const parload__file *files;
	void *state;            /* the custom decoder's */
	unsigned char *in;      /* stored bytes */
	size_t in_cap;
	unsigned char *out;     /* the decoded strip */
	uint64_t have;          /* index of the strip in out, or UINT64_MAX */
	uint64_t decoded;       /* strips decoded */
	uint64_t run;           /* the table's run of the last strip asked */
	size_t max_read;        /* bytes per read call (the load's) */
	parload_error *err;     /* of the call in progress */
} parload__strip_reader;

int parload__strip_reader_open(parload__strip_reader *r,
			       const parload__strips *t, const parload_desc *d,
			       const parload__file *files, parload_error *err);
/* Bytes [at, at + len) of strip i's decoded rows; counts its reads in
 * st.  NULL with *err set on failure. */
const unsigned char *parload__strip_get(parload__strip_reader *r, uint64_t i,
					uint64_t at, size_t len,
					parload__io_stats *st,
					parload_error *err);
void parload__strip_reader_close(parload__strip_reader *r);

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

void parload__waiter_init(parload__waiter *w, const parload_request *req);
/* Whether the load must stop, by its cancel or its on_wait; any thread. */
bool parload__waiter_stopped(const parload__waiter *w);
/* On the caller's thread: call on_wait now, and make it due again an
 * interval later; true when the load must stop. */
bool parload__waiter_turn(parload__waiter *w);
/* On the caller's thread: call on_wait if it is due; true when the load
 * must stop. */
bool parload__waiter_due(parload__waiter *w);

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
	parload__nrrd nrrd; /* a .nhdr source: its layout and files */
	parload__container cont; /* a TIFF or HDF5 source */
	int kind;        /* PARLOAD_FORMAT_TIFF or _HDF5 for a container
			  * (once source_open knows), else -1 */
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
	uint64_t fallbacks;    /* the container's fallback_files, the same */
	unsigned threads;      /* threads that read */
	bool checked;          /* it checked every view itself (below) */
	parload__badlist bad;  /* with ->checked: bad CRCs, output indices */
	parload__verify verify;
	double t0;
	void *state;           /* the strategy's, between header and release */
	parload__waiter wait;  /* its cancel and on_wait (wait.c) */
} parload__ctx;

/* ---- correct.c, load.c: a corrected load ---- */

struct parload__strategy;
/* The request's correction, if any: checked, its references reduced,
 * and c->shape made float32. */
int parload__correct_prepare(parload__ctx *c,
			     const struct parload__strategy *st);
void parload__correct_free(parload__ctx *c);
/* What names source s in messages: its path, its first file, the
 * descriptor's name, or "fd N" written into label (size bytes; label
 * NULL: the name, NULL if none). */
const char *parload__source_label(const parload_source *s, char *label,
				  size_t size);
/* Load reference frames (req: their source and the scan's rows and
 * columns) on the scan's loader; what names them in messages, which name
 * their source. */
int parload__load_refs(parload__ctx *c, const parload_request *req,
		       const char *what, parload_dataset *ds);

/* ---- source.c: where a load reads from ---- */

/* Open the request's file (or take its descriptor) and find what it is: a
 * regular file (its size) or a stream.  wait: a FIFO's writer is waited
 * for (a load: its cancel, on_wait and follow timeout stop the wait);
 * else none is (a description, which refuses streams). */
int parload__source_open(parload__ctx *c, const parload_request *req,
			 bool wait);
/* Close what parload__source_open opened; never the caller's descriptor. */
void parload__source_close(parload__ctx *c);
/* The file header's 64 bytes: pread at 0, or read from a stream. */
int parload__source_read_header(parload__ctx *c, unsigned char *b);
/* Validate the file header's bytes and fit the file's size: ETRUNCATED or
 * ETRAILING, or with PARLOAD_OPT_ALLOW_TRUNCATED a file cut short keeps
 * its complete views. */
int parload__source_header(parload__ctx *c, const unsigned char *b);
/* The layout the request gives (or its .nhdr), NULL for parload's own
 * format, whose header is read. */
const parload_desc *parload__source_given(const parload__ctx *c);
/* The load of a given layout: checked, and fitted to the files' sizes
 * (a raw stream's views, each file's share of them), or, for parload's
 * own format, to the file as a read header would be. */
int parload__source_describe(parload__ctx *c, const parload_desc *given);
/* Following a file still being written (PARLOAD_REQ_FOLLOW): wait,
 * sleeping 1 to 10 ms between looks at its size, until it holds need bytes
 * or has not grown for the request's timeout; c->size is its size then
 * (the caller tells a stall by need).  The request's cancel ends the wait
 * with PARLOAD_ECANCELED, naming the done views delivered (PARLOAD_NONE:
 * the header was awaited). */
int parload__source_wait(parload__ctx *c, uint64_t need, uint64_t done);
/* After the last read: fail with PARLOAD_ETRUNCATED if a file has become
 * shorter than the views up to stream view last need.  A read can race a truncation and copy the
 * zeros the kernel writes over a cut page; the size afterwards tells. */
int parload__source_recheck(parload__ctx *c, uint64_t last);
/* PARLOAD_ETRUNCATED: a source of size bytes has no whole file header. */
int parload__fail_short_header(const parload__ctx *c, uint64_t size);
/* PARLOAD_EOPEN for path and the errno open() gave, naming a dangling
 * symbolic link as such. */
int parload__fail_open(parload_error *err, int sys_errno, const char *path);
/* Its text: "cannot open file" and what errno leaves unsaid (a dangling
 * link, the limit on open files), in buf (size bytes) or a constant. */
const char *parload__open_why(int sys_errno, const char *path, char *buf,
			     size_t size);

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
	/* Set by a reader that compacts whole records in place (parallel.c's
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

/* ---- topology.c: the machine, and where workers run (hwloc is loaded
 * only where workers are placed: several NUMA nodes, a core_offset, or a
 * topology given in the environment; else the affinity mask counts the
 * cores, loader.c) ---- */

typedef struct parload__topology parload__topology;

/* Where one worker runs and where its memory lives. */
typedef struct parload__place {
	int core;       /* logical index of its core in the topology */
	int node;       /* logical index of its NUMA node */
} parload__place;

/* Discover the machine (I/O devices and caches left out; HWLOC_SYNTHETIC
 * and HWLOC_XMLFILE are honoured, as hwloc does). */
int parload__topology_open(parload__topology **out, parload_error *err);
/* Wrap a topology loaded elsewhere (tests); it is destroyed with t. */
int parload__topology_wrap(parload__topology **out, void *hwloc_topology,
			   parload_error *err);
void parload__topology_close(parload__topology *t);
/* Cores the process may run on. */
unsigned parload__topology_cores(const parload__topology *t);
unsigned parload__topology_nodes(const parload__topology *t);
/* Whether the topology is this machine's (binding is possible). */
bool parload__topology_is_this_system(const parload__topology *t);
/* Place n workers: spread round-robin over the NUMA nodes that have allowed
 * cores, one core each, starting at the offset-th core of that order and
 * wrapping when n exceeds the cores. */
void parload__topology_place(const parload__topology *t, unsigned n,
			     unsigned offset, parload__place *places);
/* Bind the calling thread to a place's core; best effort, returns 0 or a
 * negative errno-style value. */
int parload__topology_bind_thread(parload__topology *t,
				  const parload__place *p);
/* Bind [addr, addr + len) to a place's node; best effort. */
int parload__topology_bind_memory(parload__topology *t,
				  const parload__place *p, void *addr,
				  size_t len);

/* ---- pool.c: persistent workers ---- */

typedef struct parload__pool parload__pool;
typedef void (*parload__job_fn)(void *arg, unsigned worker);
/* Called once by each worker thread as it starts. */
typedef void (*parload__start_fn)(void *arg, unsigned worker);

int parload__pool_new(parload__pool **out, unsigned n,
		      parload__start_fn start, void *start_arg,
		      parload_error *err);
/* Run fn(arg, w) on every worker w and wait until all have returned;
 * while it waits, the caller takes its turns (waiter's on_wait, if any:
 * at once, then every interval; w may be NULL). */
void parload__pool_run(parload__pool *p, parload__job_fn fn, void *arg,
		       parload__waiter *w);
/* The same in two halves: start the generation, and later wait for it;
 * the caller may work in between.  One generation at a time. */
void parload__pool_start(parload__pool *p, parload__job_fn fn, void *arg);
void parload__pool_wait(parload__pool *p, parload__waiter *w);
void parload__pool_free(parload__pool *p);

/* ---- loader.c: the loader's parallel machinery ---- */

typedef struct parload__engine {
	parload__topology *topo;
	/* NULL with one worker (it runs on the caller), and until the first
	 * load that reads with workers starts it. */
	parload__pool *pool;
	unsigned workers;
	parload__place *places;
	bool bind;            /* workers bind to their places as they start */
	/* Direct reads' queues (aio.c), one a worker: made by the first
	 * direct load (parload__engine_aio_ready), each opened by its
	 * worker, and closed only with the loader, each by its worker. */
	parload__aio *aio;
} parload__engine;

/* Start the workers if they are not running yet: a loader that only ever
 * loads empty files, streams or single-threaded strategies starts none.
 * One worker reads on the caller's thread, unless the reads must go on in
 * the background (batches, read while the caller works on the last one):
 * then it gets a thread too. */
int parload__engine_ready(parload__engine *e, bool background,
			  parload_error *err);

/* Run fn(arg, w) for every worker w: on the pool, the caller taking its
 * turns (w, may be NULL) while it waits, or on the caller. */
void parload__engine_run(parload__engine *e, parload__job_fn fn, void *arg,
			 parload__waiter *w);
/* Start it (on the caller, without a pool, it runs to the end here), and
 * wait for it. */
void parload__engine_start(parload__engine *e, parload__job_fn fn, void *arg);
void parload__engine_wait(parload__engine *e, parload__waiter *w);
/* The workers' queues for direct reads, made before the workers start:
 * 0, or -1 where memory is short (the load then reads synchronously). */
int parload__engine_aio_ready(parload__engine *e);
/* Worker w's queue, which only worker w touches (after
 * parload__engine_aio_ready). */
parload__aio *parload__engine_aio(parload__engine *e, unsigned w);
const parload_options *parload__loader_options(const parload_loader *l);
parload__engine *parload__loader_engine(parload_loader *l);

/* ---- the strategies: one read step each (strategy.c has the table) ---- */

/* A strategy reads the views of c->shape from c->fd into c->out's arrays
 * and counts its reads in c->io; everything around it (open, header,
 * checks, memory, stats, close) is load.c's.  It may check views as it
 * reads (then it sets c->checked and fills c->bad), or leave the checks to
 * the load.  Its name is its row's in PARLOAD_STRATEGY_MAP; the code
 * around it asks its caps, never which strategy it is.  Defined with
 * designated initialisers. */
typedef struct parload__strategy {
	unsigned caps; /* PARLOAD_CAP_* (parload.h): what it can do */
	int (*read)(parload__ctx *c);
	/* Optional: read the file header's 64 bytes its own way (mmap reads
	 * them from its mapping) instead of a pread, and release what that
	 * set up in c->state once the load is over. */
	int (*header)(parload__ctx *c, unsigned char *bytes);
	void (*release)(parload__ctx *c);
} parload__strategy;

#define PARLOAD__STRATEGY_DECL_(name, id, text)                                \
	extern const parload__strategy parload__strategy_##id;
PARLOAD_STRATEGY_MAP(PARLOAD__STRATEGY_DECL_)
#undef PARLOAD__STRATEGY_DECL_

/* reader.c: the article's I/O APIs over the load's descriptor, from its
 * start (opts->io, opts->buffer_size).  Close adds the reads to
 * c->io; it takes a reader that failed to open too. */
typedef struct parload__reader parload__reader;
int parload__reader_open(parload__ctx *c, parload__reader **out);
/* n bytes at the reader's offset into dst; the end of the file first is
 * PARLOAD_ETRUNCATED (the size was checked, so the file shrank). */
int parload__reader_read(parload__reader *r, void *dst, size_t n);
int parload__reader_seek(parload__reader *r, uint64_t off);
void parload__reader_close(parload__reader *r, parload__ctx *c);

/* parallel.c: one pass of the workers over output views [k_begin, k_end)
 * of the load's plan, into arrays that hold view k_begin at index 0 (view
 * layout; a sinogram pass covers every view).  Start returns at once; wait
 * returns the pass's result, its bad views added to c->bad (without
 * keep-going the first fails it, described while its bytes are in the
 * arrays).  One pass at a time per load. */
typedef struct parload__pass parload__pass;
int parload__pass_new(parload__ctx *c, parload__pass **out);
void parload__pass_start(parload__pass *p, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels);
int parload__pass_wait(parload__pass *p);
/* Adds the pass's reads to c->io; takes NULL and a pass that failed to be
 * made. */
void parload__pass_free(parload__pass *p);

/* batch.c: the read step of a load with parload_request.on_batch. */
int parload__read_batches(parload__ctx *c);
/* Views per batch of the load's request (at least 1). */
uint64_t parload__batch_views(const parload__ctx *c);
/* The bytes a load reads of each selected view: its header where read,
 * its rows (parload_batch.bytes_done and parload_progress count these). */
uint64_t parload__view_read_bytes(const parload__ctx *c);
/* Hand output views [k_begin, k_end) to the caller's on_batch;
 * PARLOAD_ECANCELED, written to err, when it asks to stop. */
int parload__deliver(parload__ctx *c, uint64_t k_begin, uint64_t k_end,
		     const parload_view_header *headers,
		     const unsigned char *raw_headers, const void *pixels,
		     parload_error *err);

/* The strategy for code s, or NULL. */
const parload__strategy *parload__strategy_get(int s);
/* pipe.c: a pipe, socket or character device, whatever the strategy. */
extern const parload__strategy parload__strategy_pipe;
/* Read len bytes of a stream source, or fewer at its end (*got says). */
int parload__pipe_fill(parload__ctx *c, void *buf, size_t len, size_t *got,
			 uint64_t *off);

#endif /* PARLOAD_INTERNAL_H */
