/*
 * aio.c - reads in flight: a worker's O_DIRECT reads handed to the kernel
 * so that the device works while the worker copies what an earlier read
 * brought in (read_ahead.c, the direct reads).
 *
 * Through an io_uring ring where the kernel gives one, else through Linux
 * AIO; both by their system calls, with no library.  The two read a
 * file opened O_DIRECT on the common local file systems (ext4, XFS)
 * asynchronously, at the same speed (cold, 2 threads, alternated,
 * medians: 229 MB 40.8 ms through AIO, 39.6 through a ring, 21 rounds; 1
 * GiB 148.6 and 150.4 ms, 5 rounds).  They differ in how they end: freeing an
 * AIO context (io_destroy, and the kernel's at exit) waits for two RCU
 * grace periods, 32-42 ms on a 2-core VM, whatever it held, where a ring
 * is torn down in the background, so a process that loads once and exits
 * finishes sooner with rings (84.2 against 47.0 ms from start to exit,
 * 229 MB; 196.9 against 161.8 ms, 1 GiB).  AIO stays as the fallback: seccomp
 * profiles and kernel.io_uring_disabled refuse rings where AIO works.
 * A file system that cannot read asynchronously finishes the read inside
 * the submitting call, which is slower but still right.  Buffered reads
 * would block there, which is why only direct reads come here.
 *
 * A queue the kernel will not make (ENOSYS, EPERM, EMFILE; EAGAIN when
 * aio-max-nr is spent) and a read it will not take leave the worker to
 * read synchronously, as it did before the queue: no load fails for want
 * of one.
 *
 * A queue lives as long as its loader (engine.c), not one load: an AIO
 * context's io_destroy cost every direct load its wait once per pass
 * until the queues were kept (229 MB, cold, 2 threads: 188-208 ms, a pass
 * that freed its queues; see engine.h's PARLOAD__AIO_DEPTH for the
 * figures with them kept).
 * Between loads a queue holds nothing in flight (parload__aio_settle).
 */
#include "io/io.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- io_uring ---- */

#if defined(HAVE_LINUX_IO_URING_H) && defined(SYS_io_uring_setup)
#include <linux/io_uring.h>

_Static_assert(sizeof(struct iovec) <= sizeof(((parload__aread *)0)->cb),
	       "parload__aread holds a struct iovec");

static void ring_unmap(parload__ring *g)
{
	if (g->sqes)
		(void)parload__sys_munmap(g->sqes, g->sqes_len);
	if (g->cq && g->cq != g->sq)
		(void)parload__sys_munmap(g->cq, g->cq_len);
	if (g->sq)
		(void)parload__sys_munmap(g->sq, g->sq_len);
	g->sq = g->cq = g->sqes = NULL;
}

static void *ring_map(const parload__ring *g, size_t len, uint64_t off)
{
	void *p = parload__sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_POPULATE, g->fd,
				    (off_t)off);

	return p == MAP_FAILED ? NULL : p;
}

/* The ring's three regions: the submission ring (its indices and the
 * array of entries to take), the completion ring (one region with the
 * submission ring where the kernel says so) and the entries. */
static int ring_open(parload__ring *g, unsigned n)
{
	struct io_uring_params p;
	unsigned char *sq, *cq;
	int err;

	memset(&p, 0, sizeof(p));
	memset(g, 0, sizeof(*g));
	g->fd = (int)parload__sys_io_uring_setup(n, &p);
	if (g->fd < 0)
		return -1;
	g->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	g->cq_len = p.cq_off.cqes +
		    p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		g->sq_len = g->cq_len = PARLOAD__MAX(g->sq_len, g->cq_len);
	g->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	if (!(g->sq = ring_map(g, g->sq_len, IORING_OFF_SQ_RING)))
		goto fail;
	g->cq = (p.features & IORING_FEAT_SINGLE_MMAP)
			? g->sq
			: ring_map(g, g->cq_len, IORING_OFF_CQ_RING);
	if (!g->cq || !(g->sqes = ring_map(g, g->sqes_len, IORING_OFF_SQES)))
		goto fail;
	sq = g->sq;
	cq = g->cq;
	g->sq_head = (unsigned *)(void *)(sq + p.sq_off.head);
	g->sq_tail = (unsigned *)(void *)(sq + p.sq_off.tail);
	g->sq_mask = (unsigned *)(void *)(sq + p.sq_off.ring_mask);
	g->sq_array = (unsigned *)(void *)(sq + p.sq_off.array);
	g->cq_head = (unsigned *)(void *)(cq + p.cq_off.head);
	g->cq_tail = (unsigned *)(void *)(cq + p.cq_off.tail);
	g->cq_mask = (unsigned *)(void *)(cq + p.cq_off.ring_mask);
	g->cqes = cq + p.cq_off.cqes;
	return 0;
fail:
	err = errno;
	ring_unmap(g);
	(void)parload__sys_io_uring_close(g->fd);
	errno = err;
	return -1;
}

/* One read as a readv of one buffer (Linux 5.1 on; IORING_OP_READ came
 * in 5.6), its iovec in r, which lives until the read is done. */
static int ring_read(parload__ring *g, parload__aread *r, int fd, void *buf,
		     size_t len, uint64_t off)
{
	struct iovec *v = (struct iovec *)(void *)r->cb;
	const unsigned tail = *g->sq_tail, idx = tail & *g->sq_mask;
	struct io_uring_sqe *sqe = (struct io_uring_sqe *)g->sqes + idx;
	long rc;

	v->iov_base = buf;
	v->iov_len = len;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READV;
	sqe->fd = fd;
	sqe->off = off;
	sqe->addr = (uint64_t)(uintptr_t)v;
	sqe->len = 1;
	sqe->user_data = (uint64_t)(uintptr_t)r;
	g->sq_array[idx] = idx;
	__atomic_store_n(g->sq_tail, tail + 1, __ATOMIC_RELEASE);
	for (;;) {
		rc = parload__sys_io_uring_enter(g->fd, 1, 0, 0, v, off);
		/* Taken: the kernel moved the head past it (and reports
		 * a read it then could not start as a completion). */
		if (rc == 1 ||
		    __atomic_load_n(g->sq_head, __ATOMIC_ACQUIRE) != tail)
			return 0;
		if (!(rc < 0 && errno == EINTR))
			break;
	}
	/* Not taken: withdraw it, so that no later call hands it over. */
	__atomic_store_n(g->sq_tail, tail, __ATOMIC_RELEASE);
	if (rc >= 0)
		errno = EAGAIN;
	return -1;
}

/* Take the reads the kernel has finished, waiting for at least min:
 * how many, or -1 (errno). */
static long ring_reap(parload__ring *g, unsigned min)
{
	unsigned got = 0;

	for (;;) {
		unsigned head = *g->cq_head;
		const unsigned tail =
			__atomic_load_n(g->cq_tail, __ATOMIC_ACQUIRE);

		for (; head != tail; head++, got++) {
			const struct io_uring_cqe *ev =
				(const struct io_uring_cqe *)g->cqes +
				(head & *g->cq_mask);
			parload__aread *r =
				(parload__aread *)(uintptr_t)ev->user_data;

			r->res = ev->res;
			r->done = true;
			parload__sys_io_uring_reaped(r->cb, ev->res);
		}
		__atomic_store_n(g->cq_head, head, __ATOMIC_RELEASE);
		if (got >= min)
			return got;
		if (parload__sys_io_uring_enter(g->fd, 0, min - got,
						IORING_ENTER_GETEVENTS, NULL,
						0) < 0 &&
		    errno != EINTR)
			return got ? (long)got : -1;
	}
}

static void ring_close(parload__ring *g)
{
	ring_unmap(g);
	(void)parload__sys_io_uring_close(g->fd);
}

#else /* no io_uring */

static int ring_open(parload__ring *g, unsigned n)
{
	(void)g, (void)n;
	errno = ENOSYS;
	return -1;
}

static int ring_read(parload__ring *g, parload__aread *r, int fd, void *buf,
		     size_t len, uint64_t off)
{
	(void)g, (void)r, (void)fd, (void)buf, (void)len, (void)off;
	errno = ENOSYS;
	return -1;
}

static long ring_reap(parload__ring *g, unsigned min)
{
	(void)g, (void)min;
	errno = ENOSYS;
	return -1;
}

static void ring_close(parload__ring *g)
{
	(void)g;
}

#endif /* io_uring */

/* ---- Linux AIO ---- */

#ifdef HAVE_LINUX_AIO_ABI_H
#include <linux/aio_abi.h>

_Static_assert(sizeof(struct iocb) <= sizeof(((parload__aread *)0)->cb),
	       "parload__aread holds a struct iocb");

static int ctx_open(unsigned long *q, unsigned n)
{
	aio_context_t ctx = 0;

	if (parload__sys_io_setup(n, &ctx) != 0)
		return -1;
	*q = ctx;
	return 0;
}

static int ctx_read(unsigned long ctx, parload__aread *r, int fd, void *buf,
		    size_t len, uint64_t off)
{
	struct iocb *cb = (struct iocb *)(void *)r->cb;
	long rc;

	memset(cb, 0, sizeof(*cb));
	cb->aio_data = (uint64_t)(uintptr_t)r;
	cb->aio_lio_opcode = IOCB_CMD_PREAD;
	cb->aio_fildes = (uint32_t)fd;
	cb->aio_buf = (uint64_t)(uintptr_t)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = (int64_t)off;
	do
		rc = parload__sys_io_submit(ctx, 1, &cb);
	while (rc < 0 && errno == EINTR);
	return rc == 1 ? 0 : -1;
}

static long ctx_reap(unsigned long ctx, unsigned min)
{
	struct io_event ev[16];
	long n;

	do
		n = parload__sys_io_getevents(ctx, (long)min, 16, ev);
	while (n < 0 && errno == EINTR);
	for (long i = 0; i < n; i++) {
		parload__aread *r = (parload__aread *)(uintptr_t)ev[i].data;

		r->res = ev[i].res;
		r->done = true;
	}
	return n;
}

static void ctx_close(unsigned long ctx)
{
	(void)parload__sys_io_destroy(ctx);
}

#else /* no Linux AIO */

static int ctx_open(unsigned long *q, unsigned n)
{
	(void)q, (void)n;
	errno = ENOSYS;
	return -1;
}

static int ctx_read(unsigned long ctx, parload__aread *r, int fd, void *buf,
		    size_t len, uint64_t off)
{
	(void)ctx, (void)r, (void)fd, (void)buf, (void)len, (void)off;
	errno = ENOSYS;
	return -1;
}

static long ctx_reap(unsigned long ctx, unsigned min)
{
	(void)ctx, (void)min;
	errno = ENOSYS;
	return -1;
}

static void ctx_close(unsigned long ctx)
{
	(void)ctx;
}

#endif /* HAVE_LINUX_AIO_ABI_H */

/* ---- the queue ---- */

int parload__aio_open(parload__aio *q, unsigned n)
{
	memset(q, 0, sizeof(*q));
	if (ring_open(&q->ring, n) == 0)
		q->uring = true;
	else if (ctx_open(&q->ctx, n) != 0)
		return -1;
	q->open = true;
	return 0;
}

int parload__aio_read(parload__aio *q, parload__aread *r, int fd, void *buf,
		      size_t len, uint64_t off)
{
	int rc;

	r->done = false;
	r->res = 0;
	rc = q->uring ? ring_read(&q->ring, r, fd, buf, len, off)
		      : ctx_read(q->ctx, r, fd, buf, len, off);
	if (rc == 0)
		q->inflight++;
	return rc;
}

/* Take the reads the kernel has finished, at least min of them. */
static int reap(parload__aio *q, unsigned min)
{
	long n = q->uring ? ring_reap(&q->ring, min) : ctx_reap(q->ctx, min);

	if (n < 0)
		return -1;
	q->inflight -= (unsigned)n;
	return 0;
}

int parload__aio_wait(parload__aio *q, parload__aread *r)
{
	while (!r->done)
		if (reap(q, 1) != 0)
			return -1;
	return 0;
}

void parload__aio_settle(parload__aio *q)
{
	while (q->open && q->inflight)
		if (reap(q, q->inflight) != 0)
			parload__aio_close(q);
}

void parload__aio_close(parload__aio *q)
{
	if (!q->open)
		return;
	/* Closing waits for what is still in flight too (the ring in the
	 * background, the AIO context in io_destroy), but the reads are
	 * taken first where the kernel lets them be, so that no memory they
	 * write into is let go of while a device still fills it. */
	while (q->inflight && reap(q, q->inflight) == 0)
		;
	if (q->uring)
		ring_close(&q->ring);
	else
		ctx_close(q->ctx);
	q->open = false;
}
