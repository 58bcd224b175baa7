/*
 * parallel.c - the default strategy: every worker reads its share of the
 * extent plan (plan.c) with preadv straight into the dataset's arrays.
 *
 * The load (load.c) has parsed the file header and laid out the dataset;
 * the workers then each walk one share, so together they read every
 * selected byte exactly once, with no staging copy of the file, and each
 * fills (and so first-touches, placing on its own NUMA node) its own pages.
 * Small pieces (rows scattered to sinograms, columns cropped out of rows)
 * go through a bounce buffer that stays in the core's cache; large ones
 * straight to their place; the whole records of tiny views straight into
 * their payloads' places, compacted there (read_records).
 */
#include "engine/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
/* Buffers per preadv: 512 header/payload pairs of tiny views per call. */
#define BATCH_IOV PARLOAD__MIN(IOV_MAX, 1024)
/* Bytes per preadv when CRCs are checked or pixels swapped in place:
 * each batch is checked (see PARLOAD_OPT_VERIFY_CRC) or swapped right
 * after it is read, while it is still in the core's cache.  A u16be load
 * of 2,000 x 64 x 896 (in-process, best of 9, 1 and 2 threads) took
 * 1.05-1.08 x the little-endian time of the same file in batches of 1
 * MiB, 1.11-1.16 x in batches of 8 MiB, the default max_read. */
#define CACHE_BATCH ((size_t)1 << 20)
/* Runs of memory this small are read through a bounce buffer: one pread
 * per BOUNCE bytes, then memcpy to their places.  The kernel charges tens
 * of nanoseconds per preadv buffer, which for 256-byte views (two buffers
 * each, header and payload) costs more than copying the bytes twice
 * (bench/, experiments 2 and 3).  Sinograms go through it whatever their
 * rows' size: the kernel's copy of a row of 1,792 bytes (the reference
 * stream) to its own place, far from the last, read each line of the
 * place from memory before writing it; a row copied from the bounce
 * buffer with stores that bypass the cache (store_far) does not.  The
 * whole reference stream as sinograms took 1.30-1.42 x its view layout's
 * time so (1.41-1.60 x straight to the rows' places), rows 16:48 1.12-1.36
 * x (1.23-1.45 x): medians of 12 to 20 alternated runs each, 2 threads.
 * Rows stored far straight from the file mapped into memory (one copy of
 * each byte, no read call) match the view layout's time, but a load that
 * touches a mapping dies of SIGBUS when the file is truncated under it
 * (mmap.c), where a read fails with an error naming the view and offset:
 * so the rows are read unless the caller asks for the mapping
 * (PARLOAD_OPT_MAP_SINOGRAMS, MAP_WINDOW below). */
#define BOUNCE_BELOW ((uint64_t)4096)
#define BOUNCE ((size_t)64 << 10)
/* Sinograms split by views read runs of whole views: this much a read,
 * what stays in a core's cache until it is scattered (the reference
 * stream as sinograms, 2 threads: 42.2 ms through 256 KiB, 41.2 through
 * 512 KiB, 41.5 through 1 MiB, 46.2 through 4 MiB, 44.1 through 64 KiB;
 * medians of 11 alternated runs). */
#define FAR_BOUNCE ((size_t)512 << 10)
/* Direct I/O: requests of whole blocks of this alignment (the strictest
 * logical block size in common use).  A piece whose file offset and place
 * in the dataset agree modulo DIRECT_ALIGN has its whole blocks read
 * straight into its place, with no copy; the rest of a batch (a piece's
 * head and tail, pieces that do not agree, such as a parload file's
 * payloads behind their 32-byte headers) goes through the worker's bounce
 * buffer (read_direct): one huge page, which holds DIRECT_BOUNCE bytes
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
#define DIRECT_ALIGN ((uint64_t)4096)
#define DIRECT_BOUNCE (PARLOAD__HUGE_PAGE - 2 * (size_t)DIRECT_ALIGN)
/* PARLOAD_OPT_MAP_SINOGRAMS: each worker maps the file a window of this
 * many bytes at a time (page tables for 64 MiB are 128 KiB, however
 * large the file), checks before each batch that the file still holds
 * it (fstat), and stores the batch's rows far straight from the mapping.
 * A batch the window cannot give (past the size the load described or
 * the file's size now, a mapping refused) is read through the bounce
 * buffer as without the option, so a file cut short before a batch
 * fails with PARLOAD_ETRUNCATED.  A truncation during a batch's copy
 * raises SIGBUS, and the workers copy nearly all the time: the reference
 * stream cut to 100 MB by another process 5 to 60 ms into a mapped load
 * killed 11 of 12 loads (read, all 12 failed cleanly or completed).
 * Faulting each batch in first with MADV_POPULATE_READ, which answers a
 * page past the end with EFAULT, leaves the same window and cost more
 * than the faults the copy takes (whole file 1.08-1.17 x the view layout
 * against 0.98-1.07 x with the size check; medians of each round's
 * ratio, 15 alternated rounds).  The reference stream as sinograms, 2
 * threads, over its view layout: whole file 0.97-1.10, rows 16:48
 * 1.00-1.13, where the reads give 1.11-1.21 and 1.09-1.31. */
#define MAP_WINDOW ((uint64_t)64 << 20)
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
#define AIO_DEPTH 2

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
	bool aio;          /* ... reading a batch ahead (AIO_DEPTH) */
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

typedef struct parload__pass job;

/* Keep the first error only: the one that stopped the load. */
static void report(job *j, const parload_error *e)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&j->failed, &expected, e->code) &&
	    j->c->err)
		*j->c->err = *e;
}

/* The output views whose header lies in share sh, [*hb, *he), and the end
 * of those that lie wholly in it (a last one may continue into the next
 * share: plan.c splits views when they are large or few). */
static uint64_t own_views(const job *j, const parload__share *sh,
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
static parload_view_header *view_header(const job *j, uint64_t k)
{
	return j->plan.headers + (k - j->plan.k_begin);
}

static unsigned char *view_pixels(const job *j, uint64_t k)
{
	return j->plan.pixels + (k - j->plan.k_begin) * j->plan.s->view_bytes;
}

/* A direct read in flight: len bytes of file f at off into buf, of which
 * need must come (the rest lies past the end of the file); into its
 * place, or into bounce buffer `bounce` (-1: none), whose batch is
 * scattered once its last read is in. */
typedef struct inflight {
	parload__aread r;
	bool queued; /* false: the kernel would not take it, read it now */
	bool last;   /* the bounce buffer's last read */
	const parload__file *f;
	unsigned char *buf;
	size_t len, need;
	uint64_t off;
	int bounce;
} inflight;

/* What one worker reads through: its bounce buffer (for direct I/O in a
 * mapping of its own, on huge pages) and what it lets go of (drop). */
typedef struct worker_io {
	unsigned char *bounce;
	size_t len;  /* its bytes */
	size_t map_len; /* direct I/O: the buffer's mapping, else 0 */
	parload__dropper *drop; /* the job's, for this worker */
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
	inflight fly[AIO_DEPTH];
	unsigned fly_head, fly_n;
	struct bounced *b;
	unsigned b_head, b_n;
	size_t b_stride;
} worker_io;

/* The batch a bounce buffer's read brings in: its pieces, from skip
 * bytes into the buffer, and the worker's place in its stream (k, q)
 * when it was read. */
typedef struct bounced {
	struct iovec iov[BATCH_IOV + 1];
	bool rows[BATCH_IOV + 1];
	int cnt;
	size_t skip;
	uint64_t k, q;
} bounced;

/* Direct I/O's bounce buffer: io->len bytes from a huge-page boundary in
 * a mapping of their own, advised for huge pages unless the loader's
 * options say not to (see DIRECT_BOUNCE; where the kernel gives none, 4
 * KiB pages hold the same bytes). */
static int map_bounce(job *j, worker_io *io, unsigned n, parload_error *e)
{
	const size_t huge = PARLOAD__HUGE_PAGE;
	const size_t len = ((io->len + huge - 1) & ~(huge - 1)) * n;

	io->b_stride = len / n;
	if (!(io->bounce = parload__map_huge_aligned(len)))
		return parload__fail_nomem(e, j->c->path);
	io->map_len = len;
	if (!(j->c->opts->flags & PARLOAD_OPT_NO_HUGEPAGES))
		(void)parload__sys_madvise(io->bounce, len, MADV_HUGEPAGE);
	return 0;
}

/* Direct I/O's bounce buffers: two, a read ahead, where the kernel
 * takes reads in flight (worker w's queue, opened by its first direct
 * load); else one, read synchronously. */
static int direct_buffers(job *j, unsigned w, worker_io *io,
			  parload_error *e)
{
	parload__aio *q;

	if (!j->aio)
		return map_bounce(j, io, 1, e);
	q = parload__engine_aio(j->c->engine, w);
	io->b = parload__sys_calloc(AIO_DEPTH, sizeof(*io->b));
	if (!io->b)
		return parload__fail_nomem(e, j->c->path);
	if (!q->open && parload__aio_open(q, AIO_DEPTH) != 0)
		return map_bounce(j, io, 1, e);
	io->aio = q;
	return map_bounce(j, io, AIO_DEPTH, e);
}

static int io_open(job *j, unsigned w, worker_io *io, parload_error *e)
{
	int rc;

	memset(io, 0, sizeof(*io));
	io->drop = &j->drop[w];
	/* Gaps of whole views are nobody's; those between rows may be
	 * another worker's (bands) or another process's (a parload-mpi
	 * rank's rows). */
	parload__drop_init(io->drop, j->c,
			   !j->plan.bands &&
				   parload__shape_full_payload(&j->c->shape,
							       &j->c->d));
	if (j->plan.decoded) {
		rc = parload__strip_reader_open(&io->strips, j->plan.strips,
						j->plan.d, j->plan.files, e);
		io->strips.max_read = j->max_read;
		if (rc)
			return rc;
	}
	if (j->plan.correct && j->plan.convert &&
	    !(io->row = parload__sys_malloc((size_t)j->plan.s->cols *
					    j->plan.bin *
					    j->plan.d->bytes_per_pixel)))
		return parload__fail_nomem(e, j->c->path);
	if (j->plan.correct && j->plan.bin > 1 &&
	    !(io->acc = parload__sys_malloc((size_t)j->plan.s->cols *
					    sizeof(*io->acc))))
		return parload__fail_nomem(e, j->c->path);
	if (!j->bounce)
		return 0;
	io->len = j->bounce_size + (j->direct ? 2 * DIRECT_ALIGN : 0);
	if (j->direct)
		return direct_buffers(j, w, io, e);
	io->bounce = parload__sys_malloc(io->len);
	return io->bounce ? 0 : parload__fail_nomem(e, j->c->path);
}

static void unmap_window(worker_io *io)
{
	if (io->win)
		(void)parload__sys_munmap((void *)io->win, io->win_len);
	io->win = NULL;
}

static void io_close(job *j, worker_io *io)
{
	/* No read may still be filling memory let go of below. */
	if (io->aio)
		parload__aio_settle(io->aio);
	parload__sys_free(io->b);
	unmap_window(io);
	atomic_fetch_add(&j->decoded, io->strips.decoded);
	parload__strip_reader_close(&io->strips);
	parload__drop_flush(io->drop);
	parload__sys_free(io->row);
	parload__sys_free(io->acc);
	if (io->map_len)
		(void)parload__sys_munmap(io->bounce, io->map_len);
	else
		parload__sys_free(io->bounce);
}

/* The row of the selection that destination dst starts. */
static uint64_t row_of(const parload__plan *p, const unsigned char *dst)
{
	const uint64_t at = (uint64_t)(dst - p->pixels);

	return p->s->layout == PARLOAD_LAYOUT_VIEWS ?
		       at % p->s->view_bytes / p->take :
		       at / p->take / p->s->views;
}

/* A corrected load's row: the file's row converted (or its selected
 * columns as they are), then corrected into float32 at dst. */
static void correct(const job *j, worker_io *io, unsigned char *dst,
		    const unsigned char *row)
{
	const parload__plan *p = &j->plan;
	const unsigned char *px = row + p->skip;

	if (p->convert) {
		p->convert(io->row, row, p->s->col_start, p->s->cols * p->bin);
		px = io->row;
	}
	if (p->bin == 1) {
		parload__correct_row(p->correct, (float *)(void *)dst, px,
				     row_of(p, dst));
		return;
	}
	/* A bin's rows come one after another, all to this worker (its
	 * share holds whole output rows): sum them, then write the mean. */
	if (io->acc_dst != dst) {
		memset(io->acc, 0, p->s->cols * sizeof(*io->acc));
		io->acc_dst = dst;
		io->acc_n = 0;
	}
	parload__bin_add(p->correct, io->acc, px);
	if (++io->acc_n == p->bin) {
		parload__correct_binned(p->correct, (float *)(void *)dst,
					io->acc, row_of(p, dst));
		io->acc_dst = NULL;
	}
}

/* Row CRCs: the cnt bytes at data, the next of the worker's stream
 * (io->k, io->q): a header's are passed over, a row's go into its view's
 * CRC.  A piece never crosses a view's end. */
static int crc_feed(const job *j, worker_io *io, const unsigned char *data,
		    size_t len, parload_error *e)
{
	const uint64_t hb = io->sh->headers ? j->plan.hdr : 0;
	int rc = 0;

	if (io->q >= hb)
		rc = parload__rowcrc_add(io->crc, io->k,
					 (uint64_t)io->sh->row_begin *
							 j->plan.row_bytes +
						 io->q - hb,
					 data, len, io->bad, e);
	io->q += len;
	if (io->q >= io->stride) {
		io->k++;
		io->q -= io->stride;
	}
	return rc;
}

/* n bytes from src to dst, a place this load will not read again, with
 * non-temporal stores where the CPU has them (SSE2, every x86-64): a row
 * of a sinogram lands far from the last one, and an ordinary store would
 * first read each of its lines from memory.  The stores are ordered
 * (sfence) before the batch's caller goes on. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>

static void store_far(unsigned char *dst, const unsigned char *src, size_t n)
{
	const size_t head = (size_t)(-(uintptr_t)dst & 15);

	if (n < 256 || head >= n) {
		memcpy(dst, src, n);
		return;
	}
	memcpy(dst, src, head);
	dst += head, src += head, n -= head;
	for (; n >= 64; n -= 64, dst += 64, src += 64) {
		const __m128i a = _mm_loadu_si128((const __m128i *)src);
		const __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
		const __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
		const __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));

		_mm_stream_si128((__m128i *)dst, a);
		_mm_stream_si128((__m128i *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(dst + 48), d);
	}
	memcpy(dst, src, n);
}

static void stores_done(void)
{
	_mm_sfence();
}
#else
static void store_far(unsigned char *dst, const unsigned char *src, size_t n)
{
	memcpy(dst, src, n);
}

static void stores_done(void)
{
}
#endif

/* Scatter what buf holds to the places iov names (a NULL place is bytes
 * to drop; a row, rows[k], is converted into its selected columns). */
static int scatter(const job *j, worker_io *io, const unsigned char *buf,
		   const struct iovec *iov, const bool *rows, int cnt,
		   parload_error *e)
{
	const parload__plan *p = &j->plan;
	int rc = 0;

	/* Bytes copied as they are (tiny views: a header and a payload of a
	 * few hundred bytes each), with nothing to test a piece. */
	if (!io->crc && !p->correct && !p->in_place && !p->convert &&
	    !j->far) {
		for (int k = 0; k < cnt; k++) {
			if (iov[k].iov_base)
				memcpy(iov[k].iov_base, buf, iov[k].iov_len);
			buf += iov[k].iov_len;
		}
		return 0;
	}
	for (int k = 0; k < cnt; k++) {
		if (io->crc && rc == 0)
			rc = crc_feed(j, io, buf, iov[k].iov_len, e);
		if (p->correct && rows[k])
			correct(j, io, iov[k].iov_base, buf);
		else if (p->in_place && rows[k])
			parload__piece_convert(p, &iov[k], buf);
		else if (p->convert && rows[k])
			p->convert(iov[k].iov_base, buf, p->s->col_start,
				   p->s->cols);
		else if (iov[k].iov_base && j->far)
			store_far(iov[k].iov_base, buf, iov[k].iov_len);
		else if (iov[k].iov_base)
			memcpy(iov[k].iov_base, buf, iov[k].iov_len);
		buf += iov[k].iov_len;
	}
	if (j->far)
		stores_done();
	return rc;
}

static uint64_t batch_bytes(const struct iovec *iov, int cnt)
{
	uint64_t n = 0;

	for (int k = 0; k < cnt; k++)
		n += iov[k].iov_len;
	return n;
}

/* A batch read straight into its places, of the plan's in_place: its
 * pixels converted where they landed, while they are in this core's
 * cache. */
static void convert_read(const job *j, const struct iovec *iov,
			 const bool *rows, int cnt)
{
	for (int k = 0; k < cnt; k++)
		if (rows[k])
			parload__piece_convert(&j->plan, &iov[k],
					       iov[k].iov_base);
}

/* Tiny views, compacted in place: a range of whole records (the
 * cursor's, parload__cursor.compact: each a header of hb bytes, then its
 * view's vb bytes of pixels) is read as it lies in the file straight into
 * the views' pixels, from the first view's, and compacted there while it
 * is in the core's cache: each header copied out to its place, each
 * view's pixels moved down over the headers before them.  Record m's
 * bytes start at m x (hb + vb), its pixels' place at m x vb: no later
 * record's bytes are written over before they are read.  Against the
 * bounce buffer this saves a copy into memory that is not in the cache:
 * the kernel's copy lands in the pixels' pages, as the fresh-memory
 * floor's does.  The cursor yields the range as one buffer, so nothing
 * is done a view but the copy, the move and the check below.  200,000
 * views of 256 bytes over the fresh-memory floor (medians of each
 * round's ratio, alternated rounds): 2 threads 1.42 through the bounce
 * buffer, 1.37 compacted from two iovecs a view, 1.13 from one range (21
 * rounds; 1.26 for the iovecs in the same run); 1 thread 1.41, 1.34,
 * 1.13 (15 rounds).  A one-thread load ran 27 M instructions of its own
 * from the iovecs, 12 M from the range, half of them memmove's.
 *
 * The headers are checked as they are copied (view_index, as
 * parload__check_views does for the rest), when they are the share's
 * next unchecked ones: the check at the share's end then has nothing to
 * read back from memory.  Loads that verify CRCs check views as they
 * complete instead (check_done). */
static int read_records(job *j, worker_io *io, const struct iovec *range,
			uint64_t off, const parload__file *f, unsigned w,
			parload_error *e)
{
	const parload__plan *p = &j->plan;
	const uint64_t n = io->records, k = io->k;
	const size_t vb = (size_t)p->s->view_bytes;
	const size_t hb = range->iov_len / n - vb;
	const bool typed = p->native && hb == sizeof(parload_view_header);
	const bool check = typed && j->check && !j->c->verify.crc &&
			   k == io->next;
	const uint64_t step = p->s->view_step;
	unsigned char *pix = range->iov_base;
	const unsigned char *src = pix;
	parload_view_header *vh = typed ? view_header(j, k) : NULL;
	unsigned char *raw = !typed && p->raw_headers ?
				     p->raw_headers + (k - p->k_begin) * hb :
				     NULL;
	uint64_t want = parload_shape_view(p->s, k);
	bool bad = false;
	int rc;

	rc = parload__pread_upto(f->fd, pix, range->iov_len, range->iov_len,
				 off, j->max_read, &j->stats[w], p->d, f, e);
	if (rc)
		return rc;
	for (uint64_t m = 0; m < n; m++) {
		if (vh) {
			memcpy(vh, src, sizeof(*vh));
			bad |= vh->view_index != want;
			want += step;
			vh++;
		} else if (raw && hb == sizeof(*vh)) {
			memcpy(raw, src, sizeof(*vh)); /* written inline */
			raw += hb;
		} else if (raw) {
			memcpy(raw, src, hb);
			raw += hb;
		}
		memmove(pix, src + hb, vb);
		pix += vb;
		src += hb + vb;
	}
	parload__drop_read(io->drop, f, off, range->iov_len);
	if (!check)
		return 0;
	/* The error names the first bad one. */
	if (bad)
		return parload__check_views(&j->c->d, p->s, view_header(j, k),
					    NULL, k, n, false, j->c->path, e);
	io->next += n;
	return 0;
}

/* Bytes [off, off + n) of f in memory, from the worker's window of the
 * file mapped (moved on when it does not hold them); NULL when they are
 * to be read instead (MAP_WINDOW). */
static const unsigned char *mapped_batch(worker_io *io,
					 const parload__file *f, uint64_t off,
					 uint64_t n)
{
	const uint64_t page = PARLOAD__PAGE, from = off & ~(page - 1);
	struct stat st;
	void *p;

	if (!io->win || io->win_file != f || from < io->win_off ||
	    off + n > io->win_off + io->win_len) {
		const uint64_t len = PARLOAD__MIN(
			PARLOAD__MAX(MAP_WINDOW, off + n - from),
			f->size > from ? f->size - from : 0);

		if (off + n > from + len || len > SIZE_MAX)
			return NULL; /* past the end: the read says so */
		unmap_window(io);
		p = parload__sys_mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED,
				      f->fd, (off_t)from);
		if (p == MAP_FAILED) {
			io->no_map = true;
			return NULL;
		}
		io->win = p;
		io->win_file = f;
		io->win_off = from;
		io->win_len = (size_t)len;
	}
	/* The file as it is now must hold the batch: a page past its end
	 * would raise SIGBUS. */
	if (parload__sys_fstat(f->fd, &st) != 0 ||
	    (uint64_t)st.st_size < off + n)
		return NULL;
	return io->win + (off - io->win_off);
}

/* ---- direct reads a batch ahead (AIO_DEPTH) ---- */

/* n more bytes of the selection are in the dataset. */
static void progress(const job *j, uint64_t n)
{
	if (j->c->req->progress)
		__atomic_fetch_add(&j->c->req->progress->bytes_done, n,
				   __ATOMIC_RELAXED);
}

/* Wait until read x is in: 0, or PARLOAD_EIO naming its file, view and
 * offset when waiting failed. */
static int wait_read(const job *j, worker_io *io, inflight *x,
		     parload_error *e)
{
	if (parload__aio_wait(io->aio, &x->r) == 0)
		return 0;
	return parload__fail(e, PARLOAD_EIO, errno, x->f->path,
			     parload__view_at(j->plan.d, x->f, x->off), x->off,
			     "waiting for a read failed");
}

/* Finish the oldest read in flight: wait for it, then scatter its batch
 * if it read into a bounce buffer.  A read the kernel did not take, or
 * that brought less than it must, is read again synchronously, which
 * fails as any read does, naming the view and offset (the file ended
 * early, the device failed). */
static int finish_oldest(job *j, unsigned w, worker_io *io, parload_error *e)
{
	inflight *x = &io->fly[io->fly_head];
	int rc = 0;

	if (x->queued) {
		rc = wait_read(j, io, x, e);
		if (rc)
			return rc;
		j->stats[w].calls++;
	}
	if (x->queued && x->r.res >= 0 && (uint64_t)x->r.res >= x->need)
		j->stats[w].bytes += (uint64_t)x->r.res;
	else
		rc = parload__pread_upto(x->f->dfd, x->buf, x->len, x->need,
					 x->off, j->max_read, &j->stats[w],
					 j->plan.d, x->f, e);
	if (rc == 0 && x->bounce < 0)
		progress(j, x->len);
	if (x->bounce >= 0 && x->last) {
		const bounced *b = &io->b[x->bounce];
		const uint64_t k = io->k, q = io->q;

		/* Its rows' CRCs run on from where it was read. */
		io->k = b->k;
		io->q = b->q;
		if (rc == 0)
			rc = scatter(j, io,
				     io->bounce + x->bounce * io->b_stride +
					     b->skip,
				     b->iov, b->rows, b->cnt, e);
		if (rc == 0)
			progress(j, batch_bytes(b->iov, b->cnt));
		io->k = k;
		io->q = q;
		io->b_head = (io->b_head + 1) % AIO_DEPTH;
		io->b_n--;
	}
	io->fly_head = (io->fly_head + 1) % AIO_DEPTH;
	io->fly_n--;
	return rc;
}

/* Wait until the read in flight is in (its batch not yet copied). */
static int settle(job *j, worker_io *io, parload_error *e)
{
	int rc = 0;

	for (unsigned k = 0; rc == 0 && k < io->fly_n; k++) {
		inflight *x = &io->fly[(io->fly_head + k) % AIO_DEPTH];

		if (x->queued)
			rc = wait_read(j, io, x, e);
	}
	return rc;
}

/* len bytes (whole blocks) of f from off into buf, need of them to come,
 * in reads of at most max_read, into bounce buffer `bounce` or -1: each
 * read into a bounce buffer handed to the kernel once the one before it
 * is in, and the one before it then finished (its batch copied) while
 * the device reads.  A read straight into place is handed over at once,
 * while the one before it is still in flight: io_submit first faults in
 * the dataset's pages it reads into, which then overlaps the device's
 * work (a headerless 229 MB stream, cold, 2 threads: 172 ms against 185
 * ms waiting first, medians of 15 alternated rounds; keep 198 ms). */
static int queue_reads(job *j, unsigned w, worker_io *io,
		       const parload__file *f, unsigned char *buf, size_t len,
		       size_t need, uint64_t off, int bounce, parload_error *e)
{
	for (size_t at = 0; at < len; at += j->max_read) {
		const size_t n = PARLOAD__MIN(len - at, j->max_read);
		int rc = bounce >= 0 ? settle(j, io, e) : 0;
		inflight *x;

		if (rc)
			return rc;
		x = &io->fly[(io->fly_head + io->fly_n++) % AIO_DEPTH];
		x->f = f;
		x->buf = buf + at;
		x->len = n;
		x->need = need > at ? PARLOAD__MIN(need - at, n) : 0;
		x->off = off + at;
		x->bounce = bounce;
		x->last = at + n >= len;
		x->queued = parload__aio_read(io->aio, &x->r, f->dfd, x->buf,
					      n, x->off) == 0;
		while (rc == 0 && io->fly_n > 1)
			rc = finish_oldest(j, w, io, e);
		if (rc)
			return rc;
	}
	return 0;
}

/* n bytes of f from off straight into place (whole blocks). */
static int queue_straight(job *j, unsigned w, worker_io *io,
			  unsigned char *place, uint64_t n, uint64_t off,
			  const parload__file *f, parload_error *e)
{
	return queue_reads(j, w, io, f, place, (size_t)n, (size_t)n, off, -1,
			   e);
}

/* A batch, cnt places from off in f, as the whole blocks that hold it
 * into the bounce buffer the batch before it is not in, scattered once
 * they are in. */
static int queue_bounced(job *j, unsigned w, worker_io *io,
			 const struct iovec *iov, const bool *rows, int cnt,
			 uint64_t off, const parload__file *f,
			 parload_error *e)
{
	const uint64_t at = off & ~(DIRECT_ALIGN - 1);
	const size_t need = (size_t)(off - at + batch_bytes(iov, cnt));
	/* At most the batch before it holds a buffer (queue_reads). */
	const unsigned i = (io->b_head + io->b_n++) % AIO_DEPTH;
	bounced *b = &io->b[i];

	memcpy(b->iov, iov, (size_t)cnt * sizeof(*iov));
	memcpy(b->rows, rows, (size_t)cnt * sizeof(*rows));
	b->cnt = cnt;
	b->skip = (size_t)(off - at);
	b->k = io->k;
	b->q = io->q;
	return queue_reads(j, w, io, f, io->bounce + i * io->b_stride,
			   (need + DIRECT_ALIGN - 1) &
				   ~(size_t)(DIRECT_ALIGN - 1),
			   need, at, (int)i, e);
}

/* Every read in flight finished, in order. */
static int drain(job *j, unsigned w, worker_io *io, parload_error *e)
{
	int rc = 0;

	while (rc == 0 && io->fly_n)
		rc = finish_oldest(j, w, io, e);
	return rc;
}

/* Read one batch, cnt places from off in f: straight into them, through
 * the bounce buffer, or, for direct I/O, as the whole aligned blocks that
 * hold it, through the bounce buffer. */
static int read_bounced(job *j, unsigned w, worker_io *io,
		      struct iovec *iov, const bool *rows, int cnt,
		      uint64_t off, const parload__file *f, parload_error *e)
{
	const uint64_t n = batch_bytes(iov, cnt);
	const uint64_t at = j->direct ? off & ~(DIRECT_ALIGN - 1) : off;
	const uint64_t need = off - at + n;
	int rc;

	if (io->records)
		return read_records(j, io, iov, off, f, w, e);
	if (j->mapped && !io->no_map) {
		const unsigned char *src = mapped_batch(io, f, off, n);

		if (src) {
			j->stats[w].bytes += n;
			return scatter(j, io, src, iov, rows, cnt, e);
		}
	}
	if (io->aio)
		return queue_bounced(j, w, io, iov, rows, cnt, off, f, e);
	if (!io->bounce)
		rc = parload__preadv_full(f->fd, iov, cnt, off, j->max_read,
					  &j->stats[w], j->plan.d, f,
					  j->c->path, e);
	else
		/* One buffer, so that a failure names the view at the
		 * failing offset, not the batch's first. */
		rc = parload__pread_upto(
			j->direct ? f->dfd : f->fd, io->bounce,
			j->direct ? (need + DIRECT_ALIGN - 1) &
					    ~(DIRECT_ALIGN - 1) :
				    need,
			need, at, j->max_read, &j->stats[w], j->plan.d, f, e);
	if (rc == 0 && io->bounce)
		rc = scatter(j, io, io->bounce + (off - at), iov, rows, cnt, e);
	else if (rc == 0 && j->plan.in_place)
		convert_read(j, iov, rows, cnt);
	if (rc == 0)
		parload__drop_read(io->drop, f, off, n);
	return rc;
}

/* What a direct batch reads through the bounce buffer: a run of pieces
 * that follow each other in the file, from off (at most one more than the
 * batch's pieces: a straight piece's tail starts the next run). */
typedef struct bounce_run {
	struct iovec iov[BATCH_IOV + 1];
	bool rows[BATCH_IOV + 1];
	uint64_t off;
	int n;
} bounce_run;

static void run_add(bounce_run *r, uint64_t at, unsigned char *place,
		    uint64_t len, bool row)
{
	if (r->n == 0)
		r->off = at;
	r->rows[r->n] = row;
	r->iov[r->n++] = (struct iovec){ place, (size_t)len };
}

static int run_flush(job *j, unsigned w, worker_io *io, bounce_run *r,
		     const parload__file *f, parload_error *e)
{
	const int n = r->n;

	r->n = 0;
	return n ? read_bounced(j, w, io, r->iov, r->rows, n, r->off, f, e) : 0;
}

/* Direct I/O: the whole blocks of each piece whose file offset and place
 * agree modulo the block, straight into the place, one request for the
 * pieces that follow each other in memory too; every other byte of the
 * batch through the bounce buffer, in runs of the pieces between (a
 * straight piece's head and tail are such runs' ends).  A headerless
 * 229 MB stream, cold, 2 threads: 123 ms, against 156 ms through the
 * bounce buffer and 122 ms for two threads reading it O_DIRECT straight
 * into a fresh mapping (bench/uringfloor --direct --depth 1; medians of 11
 * shuffled rounds); with 8 and 16 threads, as fast as that floor with as
 * many. */
static int read_direct(job *j, unsigned w, worker_io *io,
		       const struct iovec *iov, const bool *rows, int cnt,
		       uint64_t off, const parload__file *f, parload_error *e)
{
	bounce_run r;
	uint64_t pos = off;
	int rc = 0;

	r.n = 0;
	for (int k = 0; rc == 0 && k < cnt; k++) {
		unsigned char *place = iov[k].iov_base;
		const bool row = rows[k];
		uint64_t len = iov[k].iov_len, a, b;

		/* Pieces that follow each other in memory too (whole views,
		 * the headers apart) are one span. */
		while (place && k + 1 < cnt &&
		       iov[k + 1].iov_base == place + len)
			len += iov[++k].iov_len;
		a = (pos + DIRECT_ALIGN - 1) & ~(DIRECT_ALIGN - 1);
		b = (pos + len) & ~(DIRECT_ALIGN - 1);
		if (!place || (((uintptr_t)place - pos) & (DIRECT_ALIGN - 1)) ||
		    b <= a) {
			run_add(&r, pos, place, len, row);
			pos += len;
			continue;
		}
		if (a > pos)
			run_add(&r, pos, place, a - pos, row);
		rc = run_flush(j, w, io, &r, f, e);
		if (rc == 0 && io->aio)
			rc = queue_straight(j, w, io, place + (a - pos), b - a,
					    a, f, e);
		else if (rc == 0)
			rc = parload__pread_upto(f->dfd, place + (a - pos),
						 (size_t)(b - a), (size_t)(b - a),
						 a, j->max_read, &j->stats[w],
						 j->plan.d, f, e);
		if (b < pos + len)
			run_add(&r, b, place + (b - pos), pos + len - b, row);
		pos += len;
	}
	return rc ? rc : run_flush(j, w, io, &r, f, e);
}

static int read_batch(job *j, unsigned w, worker_io *io, struct iovec *iov,
		      const bool *rows, int cnt, uint64_t off,
		      const parload__file *f, parload_error *e)
{
	return j->straight ? read_direct(j, w, io, iov, rows, cnt, off, f, e) :
			     read_bounced(j, w, io, iov, rows, cnt, off, f, e);
}

/* The same from a decoded strip's rows: bytes [off, off + n) of strip
 * i, decoded by this worker (once, however many batches take its
 * rows). */
static int read_decoded(job *j, unsigned w, worker_io *io,
			const struct iovec *iov, const bool *rows, int cnt,
			uint64_t off, uint64_t i, parload_error *e)
{
	const uint64_t n = batch_bytes(iov, cnt);
	const unsigned char *buf = parload__strip_get(&io->strips, i, off,
						      (size_t)n, &j->stats[w],
						      e);

	if (!buf)
		return e->code;
	return scatter(j, io, buf, iov, rows, cnt, e);
}

/* Bind the whole pages of the pixels a share fills to its worker's node:
 * an edge page shared with a neighbour stays wherever first touch puts it. */
static void bind_share(job *j, unsigned w, const parload__share *sh)
{
	parload__engine *e = j->c->engine;
	uintptr_t a = (uintptr_t)(j->plan.pixels + sh->dst_begin);
	uintptr_t b = (uintptr_t)(j->plan.pixels + sh->dst_end);

	a = (a + PARLOAD__PAGE - 1) & ~(uintptr_t)(PARLOAD__PAGE - 1);
	b &= ~(uintptr_t)(PARLOAD__PAGE - 1);
	if (sh->dst_end > sh->dst_begin && b > a)
		(void)parload__topology_bind_memory(e->topo, &e->places[w],
						    (void *)a, b - a);
}

/* Check the views from *next up to the last one the cursor has completed
 * (no further than whole, the end of those wholly in this share),
 * view_index and CRC, while they are still in this core's cache, and move
 * *next past them.  Returns parload__verify_views' code: 0 (with
 * keep-going, bad CRCs are only added to the worker's list), PARLOAD_ECRC
 * for the first bad CRC, or another failure; *e describes it. */
static int check_done(job *j, unsigned w, const parload__cursor *cur,
		      uint64_t whole, uint64_t *next, parload_error *e)
{
	const uint64_t done = PARLOAD__MIN(parload__cursor_done(cur), whole);
	int rc;

	if (done <= *next)
		return 0;
	rc = parload__verify_views(&j->c->verify, view_header(j, *next),
				   view_pixels(j, *next), *next, done - *next,
				   &j->bad[w], e);
	*next = done;
	return rc;
}

/* A raw stream's typed headers: output views [hb, he) are stream views
 * shape_view(k), and nothing else is known of them. */
static void make_headers(job *j, uint64_t hb, uint64_t he)
{
	const float *angles = j->plan.strips ? j->plan.strips->angles : NULL;
	const uint64_t step = j->plan.s->view_step;
	parload_view_header *vh = view_header(j, hb);
	uint64_t v = hb < he ? parload_shape_view(j->plan.s, hb) : 0;

	for (uint64_t k = hb; k < he; k++, vh++, v += step) {
		memset(vh, 0, sizeof(*vh));
		vh->view_index = v;
		if (angles)
			vh->angle_deg = angles[v];
	}
}

/* The caller asked to stop (parload_request.cancel or on_wait).  Workers
 * look before each read, so that a load in one pass (no batches) ends
 * within a read of each worker too; the one worker that reads on the
 * caller's thread (no pool) gives the caller its turns there. */
static bool canceled(const job *j)
{
	parload__waiter *w = &j->c->wait;

	return (!j->c->engine->pool && parload__waiter_due(w)) ||
	       parload__waiter_stopped(w);
}

static int fail_canceled(const job *j, parload_error *e)
{
	return parload__fail_path(e, PARLOAD_ECANCELED, 0, j->c->path,
				  "load canceled while views %" PRIu64
				  " to %" PRIu64 " of %" PRIu64 " were read",
				  j->plan.k_begin, j->plan.k_end - 1,
				  j->c->shape.views);
}

static void work(void *arg, unsigned w)
{
	job *j = arg;
	const parload__share *sh = &j->shares[w];
	struct iovec iov[BATCH_IOV];
	bool rows[BATCH_IOV];
	const parload__file *f = NULL;
	parload__cursor cur;
	parload_error e;
	uint64_t off, hb, he, whole;
	worker_io io;
	int cnt, rc = 0;

	if (sh->begin >= sh->end)
		return;
	memset(&e, 0, sizeof(e));
	whole = own_views(j, sh, &hb, &he);
	if (j->bind_memory)
		bind_share(j, w, sh);
	rc = io_open(j, w, &io, &e);
	io.next = hb;
	if (!j->plan.native && sh->headers)
		make_headers(j, hb, he);
	parload__cursor_init(&cur, &j->plan, sh);
	if (j->rowcrc) {
		io.crc = &j->rowcrc[w];
		io.bad = &j->bad[w];
		io.sh = sh;
		io.stride = cur.stride;
	}
	/* Tiny records go through the bounce buffer unless they can be
	 * compacted where they land (read_records): bytes copied as they
	 * are, into the view layout. */
	cur.compact = io.bounce && !j->direct && !j->far && !io.crc &&
		      !j->plan.correct && !j->plan.in_place &&
		      !j->plan.convert;
	while (rc == 0 && !atomic_load_explicit(&j->failed,
						memory_order_relaxed)) {
		if (canceled(j)) {
			rc = fail_canceled(j, &e);
			break;
		}
		io.k = cur.k;
		io.q = cur.q;
		cnt = parload__cursor_next(&cur, iov, rows, BATCH_IOV,
					   io.bounce ? PARLOAD__MIN(j->batch,
								    j->bounce_size) :
						       j->batch,
					   &off, &f);
		if (cnt == 0)
			break;
		io.records = cur.records;
		rc = j->plan.decoded ?
			     read_decoded(j, w, &io, iov, rows, cnt, off,
					  cur.range_strip, &e) :
			     read_batch(j, w, &io, iov, rows, cnt, off, f, &e);
		/* Reads in flight count when they are in (finish_oldest). */
		if (rc == 0 && !io.aio)
			progress(j, batch_bytes(iov, cnt));
		if (rc == 0 && j->check && j->c->verify.crc && !j->rowcrc)
			rc = check_done(j, w, &cur, whole, &io.next, &e);
	}
	if (rc == 0 && io.fly_n)
		rc = drain(j, w, &io, &e);
	if (rc == 0 && io.crc)
		rc = parload__rowcrc_flush(io.crc, io.bad, &e);
	/* The share's first bad view is in its list: that is all the load
	 * needs to fail.  The other workers go on, so that the lowest bad
	 * view of the file is the one reported. */
	if (rc == PARLOAD_ECRC && !j->c->verify.keep_going)
		goto out;
	/* The headers the CRC checks above have not seen, while they are
	 * still in this core's cache. */
	if (rc == 0 && j->check && io.next < he && !atomic_load(&j->failed))
		rc = parload__check_views(&j->c->d, j->plan.s,
					  view_header(j, io.next), NULL,
					  io.next, he - io.next, false,
					  j->c->path, &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		report(j, &e);
out:
	io_close(j, &io);
}

/* After the join, view layout: worker w checks the CRC of its share's last
 * view when that view continues into the next share (every part is in
 * memory now).  Without keep-going, a view after the lowest bad view found
 * needs no check: the load fails at that one, and the parts of this one
 * may not all have been read. */
static void check_split(void *arg, unsigned w)
{
	job *j = arg;
	uint64_t hb, he, whole;
	parload_error e;
	int rc;

	whole = own_views(j, &j->shares[w], &hb, &he);
	/* Row CRCs join their runs in gather_bad instead. */
	if (whole >= he || whole >= j->first_bad || j->rowcrc)
		return;
	rc = parload__verify_views(&j->c->verify, view_header(j, whole),
				   view_pixels(j, whole), whole, 1, &j->bad[w],
				   &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		report(j, &e);
}

/* After the join, sinogram layout: each worker checks a range of views,
 * whose rows every worker had a part in. */
static void check_scattered(void *arg, unsigned w)
{
	job *j = arg;
	const uint64_t n = j->plan.s->views, workers = j->c->engine->workers;
	const uint64_t a = n * w / workers, b = n * (w + 1) / workers;
	/* Row CRCs are not the pixels': view_index alone here. */
	parload__verify v = j->c->verify;

	/* Sinograms are one pass over every view: the arrays start at 0. */
	parload_error e;
	int rc;

	if (a >= b)
		return;
	v.crc = v.crc && !j->rowcrc;
	rc = parload__verify_scattered(&v, j->plan.headers,
				       j->plan.pixels, a, b - a, &j->bad[w],
				       &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		report(j, &e);
}

/* The first bad view of a pass, without keep-going: the load fails with
 * it, described now, while its bytes are in the pass's arrays (a window
 * may be reused once the pass is over). */
static int fail_bad(job *j, uint64_t k)
{
	const parload__verify *v = &j->c->verify;
	const uint64_t i = parload_shape_view(v->s, k);

	if (j->check && !j->rowcrc &&
	    parload__check_views(&j->c->d, v->s, view_header(j, k),
					     view_pixels(j, k), k, 1, true,
					     v->path, j->c->err) == PARLOAD_ECRC)
		return PARLOAD_ECRC;
	return parload__fail(j->c->err, PARLOAD_ECRC, 0, v->path, i,
			     parload__record_at(&j->c->d, i) + j->c->d.header,
			     NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Row CRCs: the views several workers read joined and checked, then every
 * bad view into the load's list, in order (a joined view's may fall
 * between a worker's).  A bad CRC found here is described with the others
 * by fail_bad. */
static int gather_rows(job *j, parload__badlist *all)
{
	const unsigned n = j->c->engine->workers;
	parload__badlist joined = { NULL, 0, 0 };
	parload_error e;
	int rc = parload__rowcrc_finish(j->rowcrc, n, &joined, &e);

	for (unsigned w = 0; w < n; w++)
		parload__rowcrc_free(&j->rowcrc[w]);
	if (rc != 0 && rc != PARLOAD_ECRC) {
		parload__badlist_free(&joined);
		*j->c->err = e;
		return rc;
	}
	rc = parload__badlist_append(all, &joined);
	for (unsigned w = 0; rc == 0 && w < n; w++)
		rc = parload__badlist_append(all, &j->bad[w]);
	if (rc)
		return parload__fail_nomem(j->c->err, j->c->path);
	if (all->n)
		qsort(all->v, all->n, sizeof(*all->v), cmp_u64);
	if (all->n && !j->c->verify.keep_going)
		return fail_bad(j, all->v[0]);
	return 0;
}

/* Join the workers' bad views, in order, into the load's list. */
static int gather_bad(job *j)
{
	parload__engine *e = j->c->engine;
	parload__badlist *all = &j->c->bad;
	bool split = false;

	j->first_bad = UINT64_MAX;
	for (unsigned w = 0; w < e->workers; w++) {
		uint64_t hb, he;

		if (!j->c->verify.keep_going && j->bad[w].n)
			j->first_bad = PARLOAD__MIN(j->first_bad,
						    j->bad[w].v[0]);
		if (own_views(j, &j->shares[w], &hb, &he) < he)
			split = true;
	}
	if (j->check && split && j->c->verify.crc)
		parload__engine_run(e, check_split, j, &j->c->wait);
	if (!j->check)
		parload__engine_run(e, check_scattered, j, &j->c->wait);
	if (atomic_load(&j->failed))
		return atomic_load(&j->failed);
	if (j->rowcrc)
		return gather_rows(j, all);
	/* Worker w's views all come before worker w + 1's. */
	for (unsigned w = 0; w < e->workers; w++)
		if (parload__badlist_append(all, &j->bad[w]) != 0)
			return parload__fail_path(j->c->err, PARLOAD_ENOMEM,
						  ENOMEM, j->c->path,
						  "out of memory: cannot list "
						  "the views with a bad "
						  "CRC-32C");
	if (all->n && !j->c->verify.keep_going)
		return fail_bad(j, all->v[0]);
	return 0;
}

/* Pixel boundaries between workers: 2 MiB when each share of a pass is
 * large, so a huge page is never filled by two workers, else 4 KiB (a
 * batch of a few megabytes still splits evenly). */
static size_t plan_align(uint64_t bytes, unsigned n)
{
	return bytes / n >= 16 * PARLOAD__HUGE_PAGE ? PARLOAD__HUGE_PAGE :
						      PARLOAD__PAGE;
}

int parload__pass_new(parload__ctx *c, parload__pass **out)
{
	parload__engine *e = c->engine;
	const unsigned n = e->workers;
	job *j;

	int rc = parload__engine_ready(e, c->req->on_batch != NULL, c->err);

	*out = j = rc ? NULL : parload__sys_calloc(1, sizeof(*j));
	if (rc)
		return rc;
	if (!j)
		return parload__fail_nomem(c->err, c->path);
	j->c = c;
	c->threads = n;
	c->checked = true;
	atomic_init(&j->failed, 0);
	parload__plan_init(&j->plan, &c->d, c->files, c->nfiles,
			   c->raw_headers, &c->shape);
	if (c->corr.on)
		parload__plan_correct(&j->plan, &c->corr);
	parload__plan_strips(&j->plan, c->strips);
	atomic_init(&j->decoded, 0);
	if (c->corr.on && c->verify.crc &&
	    !(j->rowcrc = parload__sys_calloc(n, sizeof(*j->rowcrc))))
		return parload__fail_nomem(c->err, c->path);
	j->direct = c->cache == PARLOAD_CACHE_DIRECT;
	j->max_read = parload__max_read(c->opts);
	/* O_DIRECT takes whole blocks only: each request a multiple of one,
	 * max_read rounded down (to one block at least). */
	if (j->direct)
		j->max_read = PARLOAD__MAX(j->max_read &
						   ~(size_t)(DIRECT_ALIGN - 1),
					   (size_t)DIRECT_ALIGN);
	/* The caller's buffers stay where the caller put them, a heap block
	 * where the heap put it. */
	j->bind_memory = !(c->opts->flags & PARLOAD_OPT_NO_BIND) &&
			 c->arrays_mapped && e->topo &&
			 parload__topology_nodes(e->topo) > 1;
	/* Sinograms in bands where memory is bound to nodes: each
	 * worker's sinograms whole on its node. */
	j->plan.bands = j->bind_memory;
	j->check = c->shape.layout == PARLOAD_LAYOUT_VIEWS;
	j->batch = c->verify.crc || j->plan.in_place ?
			   PARLOAD__MIN(j->max_read, CACHE_BATCH) :
			   j->max_read;
	/* Sinograms: every row through it, then stored far. */
	j->far = c->shape.layout != PARLOAD_LAYOUT_VIEWS;
	j->mapped = j->far && c->cache == PARLOAD_CACHE_KEEP &&
		    (c->opts->flags & PARLOAD_OPT_MAP_SINOGRAMS);
	j->bounce = j->far || j->plan.run < BOUNCE_BELOW;
	/* A converted row is read whole into it.  Direct I/O reads every
	 * batch through it, in requests a device likes. */
	j->bounce |= j->direct;
	/* Views checked as they complete (check_done) must be in memory
	 * when their batch's read returns; decoded strips are read by the
	 * strip reader. */
	j->aio = j->direct && !j->plan.decoded &&
		 !(j->check && c->verify.crc && !j->rowcrc);
	if (j->aio && parload__engine_aio_ready(e) != 0)
		j->aio = false;
	j->straight = j->direct && !j->far && !j->plan.correct &&
		      !j->plan.in_place && !j->plan.convert && !j->rowcrc;
	j->bounce_size = PARLOAD__MAX(j->direct ? DIRECT_BOUNCE :
				      j->far	? FAR_BOUNCE :
						  BOUNCE,
				      j->plan.row_bytes);
	j->shares = parload__sys_calloc(n, sizeof(*j->shares));
	j->stats = parload__sys_calloc(n, sizeof(*j->stats));
	j->bad = parload__sys_calloc(n, sizeof(*j->bad));
	j->drop = parload__sys_calloc(n, sizeof(*j->drop));
	if (!j->shares || !j->stats || !j->bad || !j->drop)
		return parload__fail_nomem(c->err, c->path);
	return 0;
}

void parload__pass_start(parload__pass *j, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels)
{
	const unsigned n = j->c->engine->workers;

	parload__plan_views(&j->plan, k_begin, k_end, headers, raw_headers,
			    pixels);
	for (unsigned w = 0; j->rowcrc && w < n; w++) {
		j->rowcrc[w].v = &j->c->verify;
		j->rowcrc[w].headers = headers;
		j->rowcrc[w].k_begin = k_begin;
	}
	parload__plan_split(&j->plan, n,
			    plan_align((k_end - k_begin) *
					       j->c->shape.view_bytes, n),
			    j->shares);
	parload__engine_start(j->c->engine, work, j);
}

int parload__pass_wait(parload__pass *j)
{
	int rc;

	parload__engine_wait(j->c->engine, &j->c->wait);
	for (unsigned w = 0; w < j->c->engine->workers; w++)
		parload__drop_release(&j->drop[w]);
	rc = atomic_load(&j->failed);
	return rc ? rc : gather_bad(j);
}

void parload__pass_free(parload__pass *j)
{
	parload__engine *e;

	if (!j)
		return;
	e = j->c->engine;
	j->c->decoded += atomic_load(&j->decoded);
	for (unsigned w = 0; j->stats && w < e->workers; w++) {
		j->c->io.calls += j->stats[w].calls;
		j->c->io.bytes += j->stats[w].bytes;
	}
	for (unsigned w = 0; j->bad && w < e->workers; w++)
		parload__badlist_free(&j->bad[w]);
	for (unsigned w = 0; j->rowcrc && w < e->workers; w++)
		parload__rowcrc_free(&j->rowcrc[w]);
	parload__sys_free(j->rowcrc);
	parload__sys_free(j->bad);
	parload__sys_free(j->shares);
	parload__sys_free(j->stats);
	parload__sys_free(j->drop);
	parload__sys_free(j);
}

static int read_parallel(parload__ctx *c)
{
	parload__pass *j;
	int rc;

	if (c->req->on_batch)
		return parload__read_batches(c);
	rc = parload__pass_new(c, &j);
	if (rc == 0 && c->shape.views) {
		parload__pass_start(j, 0, c->shape.views, c->out->headers,
				    c->out->raw_headers, c->out->pixels);
		rc = parload__pass_wait(j);
	}
	parload__pass_free(j);
	return rc;
}

/* The header step: the workers start (if they have not yet) while the
 * caller reads the file header, so that they are up and bound by the time
 * the first pass needs them. */
static int parallel_header(parload__ctx *c, unsigned char *bytes)
{
	int rc = parload__engine_ready(c->engine, c->req->on_batch != NULL,
				       c->err);

	return rc ? rc : parload__source_read_header(c, bytes);
}

const parload__strategy parload__strategy_parallel = {
	.caps = PARLOAD_CAP_SELECT | PARLOAD_CAP_BATCHES | PARLOAD_CAP_THREADS |
		PARLOAD_CAP_LAYOUTS | PARLOAD_CAP_DIRECT,
	.read = read_parallel,
	.header = parallel_header,
};
