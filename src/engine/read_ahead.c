/*
 * read_ahead.c - direct I/O's reads: a worker's bounce buffers on huge
 * pages, and its reads handed to the kernel a batch ahead (aio.c), each
 * bounce buffer's batch scattered (scatter.c) while the device reads the
 * next; a read the kernel does not take is read synchronously.
 */
#include "engine/pass.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>


/* Direct I/O's bounce buffer: io->len bytes from a huge-page boundary in
 * a mapping of their own, advised for huge pages unless the loader's
 * options say not to (see PARLOAD__DIRECT_BOUNCE; where the kernel gives none, 4
 * KiB pages hold the same bytes). */
static int map_bounce(parload__pass *j, parload__worker_io *io, unsigned n,
		      parload_error *e)
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
int parload__direct_buffers(parload__pass *j, unsigned w,
			    parload__worker_io *io, parload_error *e)
{
	parload__aio *q;

	if (!j->aio)
		return map_bounce(j, io, 1, e);
	q = parload__engine_aio(j->c->engine, w);
	io->b = parload__sys_calloc(PARLOAD__AIO_DEPTH, sizeof(*io->b));
	if (!io->b)
		return parload__fail_nomem(e, j->c->path);
	if (!q->open && parload__aio_open(q, PARLOAD__AIO_DEPTH) != 0)
		return map_bounce(j, io, 1, e);
	io->aio = q;
	return map_bounce(j, io, PARLOAD__AIO_DEPTH, e);
}


/* Wait until read x is in: 0, or PARLOAD_EIO naming its file, view and
 * offset when waiting failed. */
static int wait_read(const parload__pass *j, parload__worker_io *io,
		     parload__inflight *x, parload_error *e)
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
static int finish_oldest(parload__pass *j, unsigned w, parload__worker_io *io,
			 parload_error *e)
{
	parload__inflight *x = &io->fly[io->fly_head];
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
		parload__pass_progress(j, x->len);
	if (x->bounce >= 0 && x->last) {
		const parload__bounced *b = &io->b[x->bounce];
		const uint64_t k = io->k, q = io->q;

		/* Its rows' CRCs run on from where it was read. */
		io->k = b->k;
		io->q = b->q;
		if (rc == 0)
			rc = parload__scatter(j, io,
				     io->bounce + x->bounce * io->b_stride +
					     b->skip,
				     b->iov, b->rows, b->cnt, e);
		if (rc == 0)
			parload__pass_progress(j, parload__iov_bytes(b->iov, b->cnt));
		io->k = k;
		io->q = q;
		io->b_head = (io->b_head + 1) % PARLOAD__AIO_DEPTH;
		io->b_n--;
	}
	io->fly_head = (io->fly_head + 1) % PARLOAD__AIO_DEPTH;
	io->fly_n--;
	return rc;
}

/* Wait until the read in flight is in (its batch not yet copied). */
static int settle(parload__pass *j, parload__worker_io *io,
		  parload_error *e)
{
	int rc = 0;

	for (unsigned k = 0; rc == 0 && k < io->fly_n; k++) {
		parload__inflight *x = &io->fly[(io->fly_head + k) % PARLOAD__AIO_DEPTH];

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
static int queue_reads(parload__pass *j, unsigned w, parload__worker_io *io,
		       const parload__file *f, unsigned char *buf, size_t len,
		       size_t need, uint64_t off, int bounce, parload_error *e)
{
	for (size_t at = 0; at < len; at += j->max_read) {
		const size_t n = PARLOAD__MIN(len - at, j->max_read);
		int rc = bounce >= 0 ? settle(j, io, e) : 0;
		parload__inflight *x;

		if (rc)
			return rc;
		x = &io->fly[(io->fly_head + io->fly_n++) % PARLOAD__AIO_DEPTH];
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
int parload__ahead_straight(parload__pass *j, unsigned w,
			    parload__worker_io *io, unsigned char *place,
			    uint64_t n, uint64_t off, const parload__file *f,
			    parload_error *e)
{
	return queue_reads(j, w, io, f, place, (size_t)n, (size_t)n, off, -1,
			   e);
}

/* A batch, cnt places from off in f, as the whole blocks that hold it
 * into the bounce buffer the batch before it is not in, scattered once
 * they are in. */
int parload__ahead_bounced(parload__pass *j, unsigned w,
			   parload__worker_io *io, const struct iovec *iov,
			   const bool *rows, int cnt, uint64_t off,
			   const parload__file *f, parload_error *e)
{
	const uint64_t at = off & ~(PARLOAD__DIRECT_ALIGN - 1);
	const size_t need = (size_t)(off - at + parload__iov_bytes(iov, cnt));
	/* At most the batch before it holds a buffer (queue_reads). */
	const unsigned i = (io->b_head + io->b_n++) % PARLOAD__AIO_DEPTH;
	parload__bounced *b = &io->b[i];

	memcpy(b->iov, iov, (size_t)cnt * sizeof(*iov));
	memcpy(b->rows, rows, (size_t)cnt * sizeof(*rows));
	b->cnt = cnt;
	b->skip = (size_t)(off - at);
	b->k = io->k;
	b->q = io->q;
	return queue_reads(j, w, io, f, io->bounce + i * io->b_stride,
			   (need + PARLOAD__DIRECT_ALIGN - 1) &
				   ~(size_t)(PARLOAD__DIRECT_ALIGN - 1),
			   need, at, (int)i, e);
}

/* Every read in flight finished, in order. */
int parload__ahead_drain(parload__pass *j, unsigned w, parload__worker_io *io,
			 parload_error *e)
{
	int rc = 0;

	while (rc == 0 && io->fly_n)
		rc = finish_oldest(j, w, io, e);
	return rc;
}
