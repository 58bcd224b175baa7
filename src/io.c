/*
 * io.c - reads that either deliver every byte asked for or say why not.
 *
 * The kernel may return fewer bytes than asked (a signal, a pipe, a file
 * system's own limit) and never moves more than PARLOAD__KERNEL_MAX_READ in
 * one call, so every read here loops, and no call asks for more than the
 * caller's max_read.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t parload__view_at(const parload_file_header *h, uint64_t off)
{
	if (off < PARLOAD_FILE_HEADER_SIZE)
		return PARLOAD_NONE;
	return (off - PARLOAD_FILE_HEADER_SIZE) / parload__record_size(h);
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

int parload__check_regular(int fd, const char *path, uint64_t *size,
			   parload_error *err)
{
	struct stat st;

	if (parload__sys_fstat(fd, &st) != 0)
		return parload__fail(err, PARLOAD_EIO, errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "cannot stat file");
	if (!S_ISREG(st.st_mode))
		return parload__fail(err, PARLOAD_ENOTREG, 0, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "not a regular file (a %s)",
				     parload__file_kind(st.st_mode));
	*size = (uint64_t)st.st_size;
	return 0;
}

int parload__open(const char *path, int *fd, uint64_t *size,
		  parload_error *err)
{
	int f, rc;

	*fd = -1;
	if (!path)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "no file given");
	/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer
	 * before fstat could say it is not a regular file. */
	do
		f = parload__sys_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
						    O_NONBLOCK);
	while (f < 0 && errno == EINTR);
	if (f < 0)
		return parload__fail_open(err, errno, path);
	rc = parload__check_regular(f, path, size, err);
	if (rc) {
		parload__sys_close(f);
		return rc;
	}
	/* Reads of a regular file block as they always do. */
	(void)fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
	*fd = f;
	return 0;
}

int parload__pread_full(int fd, void *buf, size_t len, uint64_t off,
			size_t max_read, parload__io_stats *st,
			const char *path, uint64_t view, parload_error *err)
{
	unsigned char *p = buf;

	max_read = clamp_max_read(max_read);
	while (len) {
		ssize_t n = parload__sys_pread(fd, p,
					       PARLOAD__MIN(len, max_read),
					       (off_t)off);

		st->calls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return parload__fail(err, PARLOAD_EIO, errno, path,
					     view, off, "read failed");
		}
		if (n == 0)
			return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
					     view, off,
					     "file ended early: it was "
					     "truncated while being read");
		st->bytes += (uint64_t)n;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int parload__preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t off,
			 size_t max_read, parload__io_stats *st,
			 const parload_file_header *h, const char *path,
			 parload_error *err)
{
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
					     h ? parload__view_at(h, off) :
						 PARLOAD_NONE,
					     off, "read failed");
		}
		if (n == 0 && total > 0)
			return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
					     h ? parload__view_at(h, off) :
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

int parload__read_file_header(int fd, uint64_t size, size_t max_read,
			      const char *path, parload_file_header *h,
			      parload__io_stats *st, parload_error *err)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	int rc;

	if (size < sizeof(b))
		return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
				     PARLOAD_NONE, size,
				     "file is %" PRIu64 " bytes, shorter than "
				     "the %d-byte file header",
				     size, PARLOAD_FILE_HEADER_SIZE);
	rc = parload__pread_full(fd, b, sizeof(b), 0, max_read, st, path,
				 PARLOAD_NONE, err);
	if (rc == 0)
		rc = parload_parse_file_header(b, sizeof(b), path, h, err);
	if (rc == 0)
		rc = parload__check_file_size(h, size, path, err);
	return rc;
}

int parload_read_header(const char *path, parload_file_header *out,
			parload_error *err)
{
	parload__io_stats st = { 0, 0 };
	uint64_t size;
	int fd, rc;

	if (!out)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	rc = parload__open(path, &fd, &size, err);
	if (rc == 0) {
		rc = parload__read_file_header(fd, size, 0, path, out, &st,
					       err);
		parload__sys_close(fd);
	}
	return rc;
}
