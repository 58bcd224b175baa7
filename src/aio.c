/*
 * aio.c - reads in flight: a worker's O_DIRECT reads handed to the kernel
 * (Linux AIO) so that the device works while the worker copies what an
 * earlier read brought in (parallel.c, the direct reads).
 *
 * Linux AIO, not io_uring: a read of a file opened O_DIRECT on the
 * common local file systems (ext4, XFS) is asynchronous through it, it
 * needs no library, and container runtimes' default seccomp profiles
 * allow it, where they and kernel.io_uring_disabled may refuse io_uring.
 * A file system that cannot read asynchronously finishes the read inside
 * io_submit, which is slower but still right.  Buffered reads would
 * block in io_submit, which is why only direct reads come here.
 *
 * A queue the kernel will not make (ENOSYS, EAGAIN when aio-max-nr is
 * spent) and a read it will not take leave the worker to read
 * synchronously, as it did before the queue: no load fails for want of
 * one.
 *
 * A queue lives as long as its loader (loader.c), not one load: freeing
 * one (io_destroy) waits for two RCU grace periods, 32-42 ms on a 2-core
 * VM whatever the queue held, which every direct load paid once per pass
 * until the queues were kept (229 MB, cold, 2 threads: 188-208 ms, a
 * pass that freed its queues; see parallel.c for the figures with them
 * kept).  Between loads a queue holds nothing in flight
 * (parload__aio_settle).
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

#ifdef HAVE_LINUX_AIO_ABI_H
#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(struct iocb) <= sizeof(((parload__aread *)0)->cb),
	       "parload__aread holds a struct iocb");

int parload__aio_open(parload__aio *q, unsigned n)
{
	aio_context_t ctx = 0;

	memset(q, 0, sizeof(*q));
	if (parload__sys_io_setup(n, &ctx) != 0)
		return -1;
	q->ctx = ctx;
	q->open = true;
	return 0;
}

int parload__aio_read(parload__aio *q, parload__aread *r, int fd, void *buf,
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
	r->done = false;
	r->res = 0;
	do
		rc = parload__sys_io_submit(q->ctx, 1, &cb);
	while (rc < 0 && errno == EINTR);
	if (rc != 1)
		return -1;
	q->inflight++;
	return 0;
}

/* Take the reads the kernel has finished, at least min of them. */
static int reap(parload__aio *q, long min)
{
	struct io_event ev[16];
	long n;

	do
		n = parload__sys_io_getevents(q->ctx, min, 16, ev);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (long i = 0; i < n; i++) {
		parload__aread *r = (parload__aread *)(uintptr_t)ev[i].data;

		r->res = ev[i].res;
		r->done = true;
	}
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
		if (reap(q, (long)q->inflight) != 0)
			parload__aio_close(q);
}

void parload__aio_close(parload__aio *q)
{
	if (!q->open)
		return;
	/* io_destroy waits for what is still in flight too, but the reads
	 * are taken first where the kernel lets them be, so that no memory
	 * they write into is let go of while a device still fills it. */
	while (q->inflight && reap(q, (long)q->inflight) == 0)
		;
	(void)parload__sys_io_destroy(q->ctx);
	q->open = false;
}

#else /* no Linux AIO: every read synchronous */

int parload__aio_open(parload__aio *q, unsigned n)
{
	(void)n;
	memset(q, 0, sizeof(*q));
	errno = ENOSYS;
	return -1;
}

int parload__aio_read(parload__aio *q, parload__aread *r, int fd, void *buf,
		      size_t len, uint64_t off)
{
	(void)q, (void)r, (void)fd, (void)buf, (void)len, (void)off;
	errno = ENOSYS;
	return -1;
}

int parload__aio_wait(parload__aio *q, parload__aread *r)
{
	(void)q, (void)r;
	errno = ENOSYS;
	return -1;
}

void parload__aio_settle(parload__aio *q)
{
	(void)q;
}

void parload__aio_close(parload__aio *q)
{
	(void)q;
}

#endif /* HAVE_LINUX_AIO_ABI_H */
