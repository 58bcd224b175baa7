/*
 * internal.h - what the parts of libparload share.  Nothing here is part of
 * the public interface: every name is parload__x and hidden from the shared
 * library's symbol table.
 */
#ifndef PARLOAD_INTERNAL_H
#define PARLOAD_INTERNAL_H

#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- format.c: errors, header decoding and the file's geometry ---- */

/* Fill *err (when not NULL) and return code.  The message reads
 * "PATH: TEXT (view V, byte offset O)", TEXT being fmt or, when fmt is NULL,
 * parload_strerror(code); the parenthesis names only what is not
 * PARLOAD_NONE, and sys_errno, when not 0, is appended as ": strerror". */
int parload__fail(parload_error *err, int code, int sys_errno,
		  const char *path, uint64_t view, uint64_t offset,
		  const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

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

/* Check that views [first, first + n) carry their position in view_index
 * and, when verify_crc and the file has CRCs, that their payloads (view i at
 * pixels + (i - first) * payload_size) match.  Reports the first bad view. */
int parload__check_views(const parload_file_header *h,
			 const parload_view_header *vh, const void *pixels,
			 uint64_t first, uint64_t n, bool verify_crc,
			 const char *path, parload_error *err);

/* ---- one load, as every strategy sees it ---- */

typedef struct parload__load {
	const char *path; /* the file, or the name messages give l->fd */
	const parload_options *opts;
	parload_dataset *out;
	parload_error *err;
	const parload_buffers *into; /* the caller's memory, or NULL */
	int fd; /* the caller's descriptor to read instead of path, or -1 */
} parload__load;

/* ---- dataset.c: the memory a dataset owns ---- */

/* Lay out l->out for the validated header h: in the caller's buffers when
 * l->into is set (PARLOAD_ESPACE if they are too small), else in one
 * anonymous mapping (nothing for an empty stream), advised for transparent
 * huge pages unless PARLOAD_OPT_NO_HUGEPAGES is set.  Fresh pages are not
 * touched, so the thread that first writes a page places it on its NUMA
 * node.  Copies h into l->out->file_header and zeroes the stats; on
 * failure l->out is all zeros. */
int parload__dataset_alloc(const parload__load *l, const parload_file_header *h);

/* ---- io.c: reads that finish or say why ---- */

typedef struct parload__io_stats {
	uint64_t calls; /* read system calls issued */
	uint64_t bytes; /* bytes they returned */
} parload__io_stats;

/* Require fd to be a regular file (PARLOAD_ENOTREG naming its kind);
 * *size is its length.  path names it in messages. */
int parload__check_regular(int fd, const char *path, uint64_t *size,
			   parload_error *err);

/* Open path read-only and require a regular file; *size is its length. */
int parload__open(const char *path, int *fd, uint64_t *size,
		  parload_error *err);

/* Read exactly len bytes at offset off, looping over short reads and EINTR
 * and asking for at most max_read bytes a call.  Fails with EIO (naming the
 * offset) or ETRUNCATED (end of file first); view names the view for the
 * message, or PARLOAD_NONE. */
int parload__pread_full(int fd, void *buf, size_t len, uint64_t off,
			size_t max_read, parload__io_stats *st,
			const char *path, uint64_t view, parload_error *err);

/* The same for a vector of iovcnt (at most IOV_MAX) buffers that lie back
 * to back in the file from off.  iov is consumed (modified).  h, when not
 * NULL, lets a failure name the view that holds the failing offset. */
int parload__preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t off,
			 size_t max_read, parload__io_stats *st,
			 const parload_file_header *h, const char *path,
			 parload_error *err);

/* The view whose record holds file offset off (PARLOAD_NONE in the file
 * header). */
uint64_t parload__view_at(const parload_file_header *h, uint64_t off);

/* Drop the first n bytes of a vector of *cnt buffers: whole buffers are
 * skipped, a partly filled one moves on. */
void parload__iov_advance(struct iovec **iov, int *cnt, size_t n);

/* "directory", "FIFO", ... for messages about what is not a regular
 * file. */
const char *parload__file_kind(mode_t mode);

/* Read and validate the file header of an open file of the given size and
 * check the size against it. */
int parload__read_file_header(int fd, uint64_t size, size_t max_read,
			      const char *path, parload_file_header *h,
			      parload__io_stats *st, parload_error *err);

/* Seconds on a monotonic clock. */
double parload__now(void);

/* ---- stream.c: where a load reads from ---- */

/* Open the load's file: l->path, or the caller's descriptor l->fd, which
 * must be a regular file; *size is its length. */
int parload__load_open(const parload__load *l, int *fd, uint64_t *size);
/* Close what parload__load_open opened; never the caller's descriptor. */
void parload__load_close(const parload__load *l, int fd);
/* Check a validated header against the file's size, as
 * parload__check_file_size does, except that with
 * PARLOAD_OPT_ALLOW_TRUNCATED a file cut short keeps its complete views:
 * h->view_count becomes their number.  *declared receives the header's
 * view_count either way. */
int parload__fit_size(const parload__load *l, parload_file_header *h,
		      uint64_t size, uint64_t *declared);
/* Read the file header at offset 0 of fd (a file of the given size),
 * validate it and fit the size (parload__fit_size). */
int parload__load_header(const parload__load *l, int fd, uint64_t size,
			 parload_file_header *h, uint64_t *declared,
			 parload__io_stats *st);
/* After the last read: fail with PARLOAD_ETRUNCATED if the file fd has
 * become shorter than need bytes.  A read can race a truncation and copy
 * the zeros the kernel writes over a cut page; the size afterwards tells. */
int parload__load_recheck(const parload__load *l, int fd, uint64_t need);
/* Load a pipe, socket or character device l->fd sequentially. */
int parload__load_stream(const parload__load *l);
/* PARLOAD_EOPEN for path and the errno open() gave, naming a dangling
 * symbolic link as such. */
int parload__fail_open(parload_error *err, int sys_errno, const char *path);

/* ---- verify.c: payload CRCs and bad views ---- */

/* Bad views found by one reader, in ascending order. */
typedef struct parload__badlist {
	uint64_t *v;
	size_t n, cap;
} parload__badlist;

/* What a load checks in each view. */
typedef struct parload__verify {
	const parload_file_header *h;
	const char *path;
	bool crc;        /* PARLOAD_OPT_VERIFY_CRC and the file has CRCs */
	bool keep_going; /* PARLOAD_OPT_KEEP_GOING */
} parload__verify;

void parload__verify_init(parload__verify *v, const parload__load *l,
			  const parload_file_header *h);
/* Check views [first, first + n) (headers at vh, payloads from pixels):
 * view_index always, the payload CRC when v->crc.  A bad CRC is added to
 * bad; it stops the check with PARLOAD_ECRC (err says which view) unless
 * v->keep_going.  Any other failure (EVIEWINDEX, ENOMEM) stops it too. */
int parload__verify_views(const parload__verify *v,
			  const parload_view_header *vh, const void *pixels,
			  uint64_t first, uint64_t n, parload__badlist *bad,
			  parload_error *err);
int parload__badlist_add(parload__badlist *b, uint64_t view);
/* Append src to dst (src's views all follow dst's); src is emptied. */
int parload__badlist_append(parload__badlist *dst, parload__badlist *src);
void parload__badlist_free(parload__badlist *b);
/* The end of a verified load: no bad view is success; otherwise
 * PARLOAD_ECRC naming the first (recomputed from ds), or, with
 * keep_going, success with the list handed over to ds->bad_views. */
int parload__verify_finish(const parload__verify *v, parload__badlist *bad,
			   parload_dataset *ds, parload_error *err);
/* All of the above over a whole loaded dataset (the single-threaded
 * strategies). */
int parload__verify_all(const parload__load *l, const parload_file_header *h,
			parload_dataset *ds);

/* ---- plan.c: who reads what ---- */

/* One worker's share: a byte range [pix_begin, pix_end) of the pixel array,
 * the views [view_begin, view_end) whose headers it reads (those whose first
 * pixel lies in its range), and the contiguous file range
 * [file_begin, file_end) that holds exactly those bytes. */
typedef struct parload__slice {
	uint64_t pix_begin, pix_end;
	uint64_t view_begin, view_end;
	uint64_t file_begin, file_end;
} parload__slice;

/* Split the stream h between n workers.  Pixel boundaries fall on multiples
 * of align (a power of two) where the share allows, so no page of the pixel
 * array is written by two workers; a view is split between workers when
 * there are fewer views than workers, or when views are large. */
void parload__plan(const parload_file_header *h, unsigned n, size_t align,
		   parload__slice *slices);

/* Walks a slice in file order, yielding destinations for preadv. */
typedef struct parload__cursor {
	const parload_file_header *h;
	parload_view_header *headers;
	unsigned char *pixels;
	uint64_t pos;      /* file offset of the next byte */
	uint64_t end;      /* file offset where the slice ends */
} parload__cursor;

void parload__cursor_init(parload__cursor *c, const parload_file_header *h,
			  const parload__slice *s,
			  parload_view_header *headers, void *pixels);
/* Fill at most max_iov buffers totalling at most max_bytes, from c->pos on;
 * returns how many (0 at the slice's end) and advances the cursor.  *off
 * receives the file offset of the first. */
int parload__cursor_next(parload__cursor *c, struct iovec *iov, int max_iov,
			 size_t max_bytes, uint64_t *off);

/* ---- topology.c: the machine, and where workers run ---- */

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
 * cores, one core each, wrapping when n exceeds the cores. */
void parload__topology_place(const parload__topology *t, unsigned n,
			     parload__place *places);
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
/* Run fn(arg, w) on every worker w and wait until all have returned. */
void parload__pool_run(parload__pool *p, parload__job_fn fn, void *arg);
void parload__pool_free(parload__pool *p);

/* ---- parallel.c: the default strategy ---- */

/* The loader's parallel machinery, owned by a parload_loader. */
typedef struct parload__engine {
	parload__topology *topo;
	parload__pool *pool;  /* NULL with one worker: it runs on the caller */
	unsigned workers;
	parload__place *places;
} parload__engine;

int parload__load_parallel(parload__engine *e, const parload__load *l);

/* ---- loaders.c: the single-threaded strategies ---- */

int parload__load_bulk(const parload__load *l);
int parload__load_sequential(const parload__load *l);
int parload__load_two_pass(const parload__load *l);
int parload__load_mmap(const parload__load *l);

#endif /* PARLOAD_INTERNAL_H */
