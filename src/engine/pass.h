/*
 * pass.h - what the files of a pass share (one folder's family inside the
 * engine, below its header engine/engine.h).
 *
 * A pass (pass.c) is one start of the workers over a range of output
 * views: the extent plan (plan.c) split into one share per worker.  Each
 * worker walks its share (share.c), reading one batch of the cursor at a
 * time (read_batch.c): straight into place, through its bounce buffer,
 * compacted in place, from a mapped window of the file, or for direct
 * I/O as whole blocks, a batch ahead (read_ahead.c); what a bounce buffer
 * holds goes to its places converted, corrected or stored far
 * (scatter.c).  The calls go that way only: pass -> share -> read_batch
 * -> read_ahead -> scatter, each of them down to engine.c, which runs a
 * job on the pool (pool.c).  The strategy (parallel.c) and batches
 * (batch.c) use a pass through parload__pass_* (engine/engine.h) alone.
 */
#ifndef PARLOAD_ENGINE_PASS_H
#define PARLOAD_ENGINE_PASS_H

#include "engine/engine.h"

#include <limits.h>
#include <stdatomic.h>
#include <sys/uio.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
/* Buffers per preadv: 512 header/payload pairs of tiny views per call. */
#define PARLOAD__BATCH_IOV PARLOAD__MIN(IOV_MAX, 1024)
/* Direct I/O: requests of whole blocks of this alignment (the strictest
 * logical block size in common use).  A piece whose file offset and place
 * in the dataset agree modulo PARLOAD__DIRECT_ALIGN has its whole blocks read
 * straight into its place, with no copy; the rest of a batch (a piece's
 * head and tail, pieces that do not agree, such as a parload file's
 * payloads behind their 32-byte headers) goes through the worker's bounce
 * buffer (read_direct): one huge page, which holds PARLOAD__DIRECT_BOUNCE bytes
 * and a block of slack at each end (or as many as hold a longer row).
 *
 * The bounce buffer is a huge page because a device is handed a read's
 * memory as a list of physically contiguous segments: through 4 KiB
 * pages, a read of 1 MiB and a block is 257 segments, through a huge page
 * one.  On a
 * virtio disk (2 threads, cold, the 1 GiB file of 1 MiB views, medians of
 * 4-5 alternated rounds) the file loaded in 1,125 ms through 1 MiB of 4
 * KiB pages (903 ms through 960 KiB, 1,124 through 512 KiB: not the
 * device's 254-segment limit), 404 ms through 1 MiB of a huge page and
 * 373 ms through 2 MiB of one; --cache keep took 345 ms. */
#define PARLOAD__DIRECT_ALIGN ((uint64_t)4096)
#define PARLOAD__DIRECT_BOUNCE (PARLOAD__HUGE_PAGE - 2 * (size_t)PARLOAD__DIRECT_ALIGN)
/* Direct I/O reads one batch ahead (aio.c): a worker hands the kernel
 * its next read, then copies the batch the last one brought in out of
 * its bounce buffer while the device reads, so the worker has one read
 * in flight, and two bounce buffers, at all times.  Cold, 2 threads,
 * medians of 3 to 9 alternated rounds, two runs (the synchronous reads
 * before it, and keep, in brackets): the reference stream (229 MB)
 * 192-202 ms (171-181, keep 186-191); 1 GiB of 1 MiB views 733-864 ms
 * (822-916, 836-914); 4 GiB 3,135 ms (3,656, 3,032).  More reads in
 * flight a worker took longer on this virtio disk: up to 4 (8 buffers
 * between 2 workers), 216, 816 and 3,471 ms; 2, 3 to 8 and 16 reads with
 * 2, 4 and 8 buffers, 199 to 206 ms on the reference stream.  Its floors
 * say the same (bench experiment 14: a ring of depth 8 a thread read
 * O_DIRECT 1.17-1.23 x the time of one read a thread).  Those figures
 * include freeing the workers' queues, 32-42 ms a pass, which the
 * loader now keeps (aio.c): the reference stream then took 159 ms
 * against 193 ms freeing them, keep 188 ms (9 alternated rounds). */
#define PARLOAD__AIO_DEPTH 2

struct parload__pass {
	parload__ctx *c;
	parload__plan plan;
	parload__share *shares;
	parload__io_stats *stats; /* one per worker */
	size_t max_read;
	size_t batch;      /* bytes per preadv */
	bool bounce;       /* small runs: read through a bounce buffer */
	size_t bounce_size;
	bool direct;       /* O_DIRECT: whole aligned blocks */
	bool aio;          /* ... reading a batch ahead (PARLOAD__AIO_DEPTH) */
	/* Direct I/O may read a piece's blocks straight into its place: the
	 * bytes go there as they are (no conversion, correction or CRC of
	 * the rows, view layout). */
	bool straight;
	/* Sinograms: rows scattered from the bounce buffer with stores that
	 * bypass the cache (store_far). */
	bool far;
	/* ... or from the file mapped into memory (MAP_WINDOW). */
	bool mapped;
	bool bind_memory;
	bool check;        /* view layout: workers check views as they read */
	atomic_int failed; /* the first error's code, 0 while none */
	atomic_uint_fast64_t decoded; /* strips the workers decoded */
	/* A corrected load's CRCs, of the rows as they are read: one per
	 * worker, or NULL. */
	parload__rowcrc *rowcrc;
	parload__badlist *bad; /* one per worker */
	uint64_t first_bad;    /* lowest bad view found by the workers */
	/* A drop load's ranges, one per worker: what each holds is let go
	 * of once the pass is over. */
	parload__dropper *drop;
};


/* A direct read in flight: len bytes of file f at off into buf, of which
 * need must come (the rest lies past the end of the file); into its
 * place, or into bounce buffer `bounce` (-1: none), whose batch is
 * scattered once its last read is in. */
typedef struct parload__inflight {
	parload__aread r;
	bool queued; /* false: the kernel would not take it, read it now */
	bool last;   /* the bounce buffer's last read */
	const parload__file *f;
	unsigned char *buf;
	size_t len, need;
	uint64_t off;
	int bounce;
} parload__inflight;

/* What one worker reads through: its bounce buffer (for direct I/O in a
 * mapping of its own, on huge pages) and what it lets go of (drop). */
typedef struct parload__worker_io {
	unsigned char *bounce;
	size_t len;  /* its bytes */
	size_t map_len; /* direct I/O: the buffer's mapping, else 0 */
	parload__dropper *drop; /* the pass's, for this worker */
	unsigned char *row; /* a corrected load's converted row */
	parload__strip_reader strips; /* a decoded plan's */
	/* Binning: the sums of the bin being read (its first rows so far,
	 * n of them) for the output row at acc_dst. */
	float *acc;
	unsigned char *acc_dst;
	uint32_t acc_n;
	/* Row CRCs: the worker's, where its batch starts (output view k,
	 * byte q of its stream), the share's stream layout. */
	parload__rowcrc *crc;
	parload__badlist *bad;
	const parload__share *sh;
	uint64_t k, q, stride;
	/* The batch's whole records (parload__cursor.records). */
	uint64_t records;
	/* The share's first view whose header no check has seen yet. */
	uint64_t next;
	/* Mapped sinograms: the window of file win_file mapped at win (its
	 * bytes [win_off, win_off + win_len)), NULL while none; no_map once
	 * the kernel has refused a mapping. */
	const unsigned char *win;
	const parload__file *win_file;
	uint64_t win_off;
	size_t win_len;
	bool no_map;
	/* Direct I/O: the worker's queue (the loader's, kept from load to
	 * load), or NULL: read synchronously. */
	parload__aio *aio;
	/* The reads not yet finished, fly_n of them from fly_head, oldest
	 * first (the one in flight, and the one before it while its batch
	 * is copied or, read straight into place, while it is still read);
	 * bounce buffer i at bounce + i * b_stride holds batch b[i], b_n of
	 * them taken from b_head. */
	parload__inflight fly[PARLOAD__AIO_DEPTH];
	unsigned fly_head, fly_n;
	struct parload__bounced *b;
	unsigned b_head, b_n;
	size_t b_stride;
} parload__worker_io;

/* The batch a bounce buffer's read brings in: its pieces, from skip
 * bytes into the buffer, and the worker's place in its stream (k, q)
 * when it was read. */
typedef struct parload__bounced {
	struct iovec iov[PARLOAD__BATCH_IOV + 1];
	bool rows[PARLOAD__BATCH_IOV + 1];
	int cnt;
	size_t skip;
	uint64_t k, q;
} parload__bounced;

/* Keep the first error only: the one that stopped the load. */
static inline void parload__pass_keep_error(parload__pass *j,
					    const parload_error *e)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&j->failed, &expected, e->code) &&
	    j->c->err)
		*j->c->err = *e;
}

/* The output views whose header lies in share sh, [*hb, *he), and the end
 * of those that lie wholly in it (a last one may continue into the next
 * share: plan.c splits views when they are large or few). */
static inline uint64_t parload__share_views(const parload__pass *j,
					    const parload__share *sh,
					    uint64_t *hb, uint64_t *he)
{
	const uint64_t stride = parload__share_stride(&j->plan, sh);

	if (sh->begin >= sh->end) {
		*hb = *he = 0;
		return 0;
	}
	*hb = (sh->begin + stride - 1) / stride;
	*he = (sh->end + stride - 1) / stride;
	return PARLOAD__MAX(*hb, sh->end / stride);
}

/* Output view k in the pass's arrays (view layout). */
static inline parload_view_header *parload__pass_header(const parload__pass *j,
							uint64_t k)
{
	return j->plan.headers + (k - j->plan.k_begin);
}

static inline unsigned char *parload__pass_pixels(const parload__pass *j,
						  uint64_t k)
{
	return j->plan.pixels + (k - j->plan.k_begin) * j->plan.s->view_bytes;
}

/* n more bytes of the selection are in the dataset. */
static inline void parload__pass_progress(const parload__pass *j, uint64_t n)
{
	if (j->c->req->progress)
		__atomic_fetch_add(&j->c->req->progress->bytes_done, n,
				   __ATOMIC_RELAXED);
}

static inline uint64_t parload__iov_bytes(const struct iovec *iov, int cnt)
{
	uint64_t n = 0;

	for (int k = 0; k < cnt; k++)
		n += iov[k].iov_len;
	return n;
}

/* share.c: worker w's part of the pass (parload__job_fn). */
void parload__share_work(void *arg, unsigned w);

/* read_batch.c: one batch of the cursor, cnt places from off in f (the
 * plan's in_place conversion, the drop of what was read, all done). */
int parload__read_batch(parload__pass *j, unsigned w, parload__worker_io *io,
			struct iovec *iov, const bool *rows, int cnt,
			uint64_t off, const parload__file *f, parload_error *e);
/* The worker's window of a mapped file let go of. */
void parload__unmap_window(parload__worker_io *io);

/* read_ahead.c: direct I/O's bounce buffers, two where the kernel takes
 * reads in flight (worker w's queue), else one; reads handed to the
 * kernel a batch ahead, and every one still in flight finished. */
int parload__direct_buffers(parload__pass *j, unsigned w,
			    parload__worker_io *io, parload_error *e);
int parload__ahead_straight(parload__pass *j, unsigned w,
			    parload__worker_io *io, unsigned char *place,
			    uint64_t n, uint64_t off, const parload__file *f,
			    parload_error *e);
int parload__ahead_bounced(parload__pass *j, unsigned w,
			   parload__worker_io *io, const struct iovec *iov,
			   const bool *rows, int cnt, uint64_t off,
			   const parload__file *f, parload_error *e);
int parload__ahead_drain(parload__pass *j, unsigned w, parload__worker_io *io,
			 parload_error *e);

/* scatter.c: what buf holds to the places iov names (NULL: bytes to
 * drop; rows[k]: a row to convert, correct or feed to its CRC); and a
 * batch of the plan's in_place conversion read straight into place,
 * converted there. */
int parload__scatter(const parload__pass *j, parload__worker_io *io,
		     const unsigned char *buf, const struct iovec *iov,
		     const bool *rows, int cnt, parload_error *e);
void parload__convert_read(const parload__pass *j, const struct iovec *iov,
			   const bool *rows, int cnt);

#endif /* PARLOAD_ENGINE_PASS_H */
