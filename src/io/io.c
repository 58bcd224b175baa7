/*
 * io.c - reads that either deliver every byte asked for or say why not.
 *
 * The kernel may return fewer bytes than asked (a signal, a pipe, a file
 * system's own limit) and never moves more than PARLOAD__KERNEL_MAX_READ in
 * one call, so every read here loops, and no call asks for more than the
 * caller's max_read.
 */
#include "io/io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A container's view whose strip in file f holds offset off. */
static uint64_t strip_view_at(const parload__strips *t, const parload__file *f,
			      uint64_t off)
{
	uint64_t run = 0;

	for (uint64_t i = 0; i < t->views * parload__strips_step(t); i++) {
		const parload__strip s = parload__strip_of(t, i, &run);

		if (s.file == f->index && off >= s.off &&
		    off < s.off + s.bytes)
			return i / parload__strips_step(t);
	}
	return PARLOAD_NONE;
}

uint64_t parload__view_at(const parload_desc *d, const parload__file *f,
			  uint64_t off)
{
	if (f->strips)
		return strip_view_at(f->strips, f, off);
	if (off < d->offset || d->record_size == 0)
		return PARLOAD_NONE;
	return f->first + (off - d->offset) / d->record_size;
}

void parload__iov_advance(struct iovec **iov, int *cnt, size_t n)
{
	while (*cnt > 0) {
		if (n < (*iov)->iov_len) {
			(*iov)->iov_base = (char *)(*iov)->iov_base + n;
			(*iov)->iov_len -= n;
			return;
		}
		n -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
}

const char *parload__file_kind(mode_t m)
{
	return S_ISDIR(m)  ? "directory" :
	       S_ISFIFO(m) ? "FIFO" :
	       S_ISCHR(m)  ? "character device" :
	       S_ISBLK(m)  ? "block device" :
	       S_ISSOCK(m) ? "socket" :
			     "special file";
}

double parload__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t clamp_max_read(size_t max_read)
{
	if (max_read == 0)
		max_read = PARLOAD__DEFAULT_MAX_READ;
	return PARLOAD__MIN(max_read, PARLOAD__KERNEL_MAX_READ);
}

size_t parload__max_read(const parload_options *o)
{
	return clamp_max_read(o->max_read);
}

/* The view a failure at off names: the given one, or, with f, the view
 * whose record holds off. */
typedef struct where {
	const parload_desc *d;
	const parload__file *f;
	uint64_t view;
} where;

static uint64_t view_of(const where *w, uint64_t off)
{
	return w->f ? parload__view_at(w->d, w->f, off) : w->view;
}

static int pread_loop(int fd, void *buf, size_t len, size_t need,
		      uint64_t off, size_t max_read, parload__io_stats *st,
		      const char *path, const where *w, parload_error *err)
{
	unsigned char *p = buf;
	size_t got = 0;

	max_read = clamp_max_read(max_read);
	while (got < len) {
		ssize_t n = parload__sys_pread(fd, p,
					       PARLOAD__MIN(len - got,
							    max_read),
					       (off_t)off);

		st->calls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return parload__fail(err, PARLOAD_EIO, errno, path,
					     view_of(w, off), off,
					     "read failed");
		}
		if (n == 0 && got >= need)
			return 0; /* the end of the file, after what is needed */
		if (n == 0)
			return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
					     view_of(w, off), off,
					     "file ended early: it was "
					     "truncated while being read");
		st->bytes += (uint64_t)n;
		p += n;
		off += (uint64_t)n;
		got += (size_t)n;
	}
	return 0;
}

int parload__write_full(int fd, const void *p, size_t n, const char *path,
			parload_error *err)
{
	const char *c = p;

	while (n) {
		const ssize_t got = parload__sys_write(fd, c,
						       PARLOAD__MIN(n, 1u << 30));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return parload__fail_path(err, PARLOAD_EWRITE,
						  got < 0 ? errno : ENOSPC,
						  path, "cannot write");
		c += got;
		n -= (size_t)got;
	}
	return 0;
}

int parload__pread_full(int fd, void *buf, size_t len, uint64_t off,
			size_t max_read, parload__io_stats *st,
			const char *path, uint64_t view, parload_error *err)
{
	const where w = { NULL, NULL, view };

	return pread_loop(fd, buf, len, len, off, max_read, st, path, &w, err);
}

int parload__pread_upto(int fd, void *buf, size_t len, size_t need,
			uint64_t off, size_t max_read, parload__io_stats *st,
			const parload_desc *d, const parload__file *f,
			parload_error *err)
{
	const where w = { d, f, PARLOAD_NONE };

	return pread_loop(fd, buf, len, need, off, max_read, st, f->path, &w,
			  err);
}

int parload__preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t off,
			 size_t max_read, parload__io_stats *st,
			 const parload_desc *d, const parload__file *f,
			 const char *path, parload_error *err)
{
	if (f)
		path = f->path;
	max_read = clamp_max_read(max_read);
	while (iovcnt > 0) {
		/* Ask for no more than max_read: take whole buffers while
		 * they fit, and cut the last one short (restored below). */
		size_t total = 0, saved_len = 0;
		int cnt = 0;
		ssize_t n;

		while (cnt < iovcnt && total < max_read) {
			size_t room = max_read - total;

			if (iov[cnt].iov_len > room) {
				saved_len = iov[cnt].iov_len;
				iov[cnt].iov_len = room;
			}
			total += iov[cnt].iov_len;
			cnt++;
		}
		n = parload__sys_preadv(fd, iov, cnt, (off_t)off);
		if (saved_len)
			iov[cnt - 1].iov_len = saved_len;
		st->calls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return parload__fail(err, PARLOAD_EIO, errno, path,
					     f ? parload__view_at(d, f, off) :
						 PARLOAD_NONE,
					     off, "read failed");
		}
		if (n == 0 && total > 0)
			return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
					     f ? parload__view_at(d, f, off) :
						 PARLOAD_NONE,
					     off,
					     "file ended early: it was "
					     "truncated while being read");
		st->bytes += (uint64_t)n;
		off += (uint64_t)n;
		parload__iov_advance(&iov, &iovcnt, (size_t)n);
	}
	return 0;
}

