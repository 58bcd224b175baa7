/*
 * io.h - the I/O back-ends: reads that finish or say why (io.c), reads in
 * flight (aio.c: io_uring or Linux AIO), the page-cache modes (cache.c),
 * the article's buffered and unbuffered APIs (reader.c), the caller's turn
 * while a load waits (wait.c), temporary files put in place (tempfile.c)
 * and the files of a source (files.c: opening, following a growing file,
 * the rules of where a named file may lie).  Calls go down only: io
 * calls model and base.
 */
#ifndef PARLOAD_IO_H
#define PARLOAD_IO_H

#include "model/model.h"

/* ---- io.c: reads that finish or say why ---- */



/* Write all n bytes of p to fd, over short writes and EINTR: 0, or
 * PARLOAD_EWRITE naming path and the cause. */
int parload__write_full(int fd, const void *p, size_t n, const char *path,
			parload_error *err);

/* ---- tempfile.c: a store (a directory) written whole or not at all ---- */

/* Remove the directory dir and everything in it, links not followed
 * (the tree of a temporary store; at most 16 levels deep): 0, or -1 with
 * errno. */
int parload__tree_remove(const char *dir);

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


void parload__waiter_init(parload__waiter *w, const parload_request *req);
/* Whether the load must stop, by its cancel or its on_wait; any thread. */
bool parload__waiter_stopped(const parload__waiter *w);
/* On the caller's thread: call on_wait now, and make it due again an
 * interval later; true when the load must stop. */
bool parload__waiter_turn(parload__waiter *w);
/* On the caller's thread: call on_wait if it is due; true when the load
 * must stop. */
bool parload__waiter_due(parload__waiter *w);


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
/* ---- files.c: the files of a source ---- */

/* Whether load c follows a file still being written (PARLOAD_REQ_FOLLOW). */
static inline bool parload__following(const parload__ctx *c)
{
	return c->req && (c->req->flags & PARLOAD_REQ_FOLLOW);
}

/* Open the source's path into f (O_NONBLOCK) and classify it: a regular
 * file (its size in f->size) or a stream (c->stream); a stream's blocking
 * mode is restored, and with wait a FIFO's writer is waited for first (a
 * load: its cancel, on_wait and follow timeout stop the wait). */
int parload__source_open_path(parload__ctx *c, parload__file *f, bool wait);
/* The caller's descriptor fd as f: PARLOAD_EOPEN for one that is not an
 * open file descriptor, or a directory. */
int parload__source_take_fd(parload__ctx *c, parload__file *f, int fd);
/* Following a file still being written (PARLOAD_REQ_FOLLOW): wait,
 * sleeping 1 to 10 ms between looks at its size, until it holds need bytes
 * or has not grown for the request's timeout; c->size is its size then
 * (the caller tells a stall by need).  The request's cancel ends the wait
 * with PARLOAD_ECANCELED, naming the done views delivered (PARLOAD_NONE:
 * the header was awaited). */
int parload__source_wait(parload__ctx *c, uint64_t need, uint64_t done);
/* The file header's 64 bytes: pread at 0, or read from a stream. */
int parload__source_read_header(parload__ctx *c, unsigned char *b);
/* PARLOAD_ETRUNCATED: a source of size bytes has no whole file header. */
int parload__fail_short_header(const parload__ctx *c, uint64_t size);
/* Read len bytes of a stream source, or fewer at its end (*got says). */
int parload__pipe_fill(parload__ctx *c, void *buf, size_t len, size_t *got,
			 uint64_t *off);

#endif /* PARLOAD_IO_H */
