/*
 * files.c - the files of a source as the layers above read them: a path
 * opened (O_NONBLOCK, so that a FIFO with no writer does not hang) and
 * classified as a regular file (its size) or a stream, a FIFO's writer
 * waited for, a file being written followed until it holds what a load
 * needs, a stream read in order (parload__pipe_fill), the file header's
 * bytes, and the one rule of where a file another file names may lie
 * (PARLOAD_SRC_CONFINE).
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* What kind of thing f is: a regular file (its size), a stream (when
 * the caller's descriptor may be one), or something a load cannot read. */
static int classify(parload__ctx *c, parload__file *f, bool callers)
{
	struct stat st;

	if (parload__sys_fstat(f->fd, &st) != 0)
		return callers ? parload__fail_path(c->err, PARLOAD_EOPEN, errno,
						    c->path,
						    "not an open file "
						    "descriptor") :
				 parload__fail_path(c->err, PARLOAD_EIO, errno,
						    c->path,
						    "cannot stat file");
	if (S_ISREG(st.st_mode)) {
		f->size = (uint64_t)st.st_size;
		return 0;
	}
	if (callers ? !S_ISDIR(st.st_mode) :
		      S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		c->stream = true;
		return 0;
	}
	return parload__fail_path(c->err, PARLOAD_ENOTREG, 0, f->path,
				  callers ? "not a file or a stream (a %s)" :
					    "not a regular file (a %s)",
				  parload__file_kind(st.st_mode));
}

static void nap(double seconds)
{
	struct timespec ts = { 0, (long)(seconds * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int parload__source_wait(parload__ctx *c, uint64_t need, uint64_t done)
{
	double quiet_since = parload__now(), pause = 0.001;
	struct stat st;

	for (;;) {
		if (parload__sys_fstat(c->fd, &st) != 0)
			return parload__fail_path(c->err, PARLOAD_EIO, errno,
						  c->path, "cannot stat file");
		if ((uint64_t)st.st_size != c->size) {
			c->size = (uint64_t)st.st_size;
			quiet_since = parload__now();
			pause = 0.001;
		}
		if (c->size >= need ||
		    parload__now() - quiet_since >= c->req->timeout)
			return 0;
		if (parload__waiter_due(&c->wait) ||
		    parload__waiter_stopped(&c->wait))
			return done == PARLOAD_NONE ?
				parload__fail_path(c->err, PARLOAD_ECANCELED, 0,
						   c->path,
						   "load canceled while waiting "
						   "for the file header") :
				parload__fail_path(c->err, PARLOAD_ECANCELED, 0,
						   c->path,
						   "load canceled after %" PRIu64
						   " of %" PRIu64 " views",
						   done, c->shape.views);
		nap(pause);
		pause = PARLOAD__MIN(pause * 2, 0.010);
	}
}

/* Open path read-only and O_NONBLOCK, so that no open waits: a FIFO's
 * (mkfifo, <(...), /dev/stdin on a pipe) would wait for its writer with
 * nothing to stop it.  A load then waits for the writer itself
 * (writer_wait); anything else blocks again once opened (blocking).  A
 * file of a list is opened so without looking first (a list holds
 * regular files: one stat less for each of 2,000 frames). */
static int open_path(parload__ctx *c, parload__file *f)
{
	do
		f->fd = parload__sys_open(f->path, O_RDONLY | O_CLOEXEC |
						   O_NOCTTY | O_NONBLOCK);
	while (f->fd < 0 && errno == EINTR);
	if (f->fd < 0)
		return parload__fail_open(c->err, errno, f->path);
	f->own = true;
	return 0;
}

/* A FIFO the load opened: wait until a writer has come (its first bytes,
 * or its end, are there to read), as cat's open waits, for a reader that
 * read before would see the end of a stream no writer has joined yet.
 * The wait is the load's: its cancel, its on_wait's turns and, following,
 * its timeout end it.  Anything but a FIFO is ready now. */
static int writer_wait(parload__ctx *c, parload__file *f)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	const double t0 = parload__now();
	const parload__waiter *w = &c->wait;
	struct stat st;

	if (parload__sys_fstat(f->fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return 0;
	for (;;) {
		/* Seconds to wait this time: until on_wait is due or cancel
		 * is looked at again, and no further than the timeout (a
		 * minute at most a poll); -1: until the writer comes. */
		double slice = w->fn || w->cancel ? w->interval : -1;
		int n;

		if (parload__waiter_due(&c->wait) ||
		    parload__waiter_stopped(&c->wait))
			return parload__fail_path(c->err, PARLOAD_ECANCELED, 0,
						  c->path,
						  "load canceled while waiting "
						  "for a writer to open the "
						  "FIFO");
		if (parload__following(c)) {
			const double left = c->req->timeout -
					    (parload__now() - t0);

			slice = PARLOAD__MAX(0.0, slice < 0 ? left :
						  PARLOAD__MIN(slice, left));
		}
		n = parload__sys_poll(&p, 1, slice < 0 ? -1 :
					     (int)(PARLOAD__MIN(slice, 60.0) *
						   1e3 + 0.999));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return parload__fail_path(c->err, PARLOAD_EIO, errno,
						  c->path,
						  "cannot wait for a writer to "
						  "open the FIFO");
		if (parload__following(c) &&
		    parload__now() - t0 >= c->req->timeout)
			return parload__fail_path(c->err, PARLOAD_ETRUNCATED,
						  0, c->path,
						  "stream is empty: no writer "
						  "opened the FIFO in %g s",
						  c->req->timeout);
	}
}

/* Reads of a device or FIFO opened O_NONBLOCK block again. */
static int blocking(parload__ctx *c, parload__file *f)
{
	int fl = parload__sys_fcntl(f->fd, F_GETFL, 0);

	if (fl < 0 || parload__sys_fcntl(f->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return parload__fail_path(c->err, PARLOAD_EOPEN, errno,
					  f->path, "cannot open file");
	return 0;
}

int parload__dir_of(const char *path, char *buf, parload_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n >= sizeof(dir))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "path too long");
	if (!slash)
		strcpy(dir, ".");
	else if (n == 0)
		strcpy(dir, "/");
	else
		memcpy(dir, path, n), dir[n] = '\0';
	if (!realpath(dir, buf))
		return parload__fail_open(err, errno, dir);
	return 0;
}

const char *parload__path_below(const char *dir, const char *real)
{
	const size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return real[0] == '/' && real[1] ? real + 1 : NULL;
	if (strncmp(real, dir, n) == 0 && real[n] == '/' && real[n + 1])
		return real + n + 1;
	return NULL;
}

int parload__confined(const char *namer, const char *named,
		      parload_error *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	int rc;

	/* The directory that holds namer's name (where libhdf5 and NRRD
	 * look for a relative name), its links resolved. */
	if ((rc = parload__dir_of(namer, dir, err)) != 0)
		return rc;
	if (!realpath(named, real))
		return parload__fail_path(err, PARLOAD_EOPEN, errno, named,
					  "named by %s: cannot resolve the "
					  "name", namer);
	if (parload__path_below(dir, real))
		return 0;
	return parload__fail_path(err, PARLOAD_EOPEN, 0, named,
				  "named by %s, lies outside its directory "
				  "%s (the source confines the files it "
				  "names)", namer, dir);
}

int parload__fail_short_header(const parload__ctx *c, uint64_t size)
{
	return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
			     PARLOAD_NONE, size,
			     "file is %" PRIu64 " bytes, shorter than the "
			     "%d-byte file header",
			     size,
			     PARLOAD_FILE_HEADER_SIZE);
}

/* The 64 bytes at the start of the source. */
int parload__source_read_header(parload__ctx *c, unsigned char *b)
{
	size_t got;
	uint64_t off = 0;
	int rc;

	if (!c->stream) {
		if (parload__following(c) &&
		    (rc = parload__source_wait(c, PARLOAD_FILE_HEADER_SIZE,
					       PARLOAD_NONE)) != 0)
			return rc;
		if (c->size < PARLOAD_FILE_HEADER_SIZE)
			return parload__fail_short_header(c, c->size);
		return parload__pread_full(c->fd, b, PARLOAD_FILE_HEADER_SIZE,
					   0, parload__max_read(c->opts),
					   &c->io, c->path, PARLOAD_NONE,
					   c->err);
	}
	rc = parload__pipe_fill(c, b, PARLOAD_FILE_HEADER_SIZE, &got, &off);
	if (rc == 0 && got == 0)
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
				     PARLOAD_NONE, 0,
				     "stream is empty: no file header");
	if (rc == 0 && got < PARLOAD_FILE_HEADER_SIZE)
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
				     PARLOAD_NONE, got,
				     "stream ended after %zu bytes, inside the "
				     "%d-byte file header",
				     got, PARLOAD_FILE_HEADER_SIZE);
	return rc;
}

/* Wait until a descriptor opened non-blocking has data (or its end). */
static int wait_readable(parload__ctx *c, uint64_t off)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	while (parload__sys_poll(&p, 1, -1) < 0) {
		if (errno != EINTR)
			return parload__fail(c->err, PARLOAD_EIO, errno,
					     c->path,
					     parload__view_at(&c->d, &c->one, off), off,
					     "cannot wait for data");
	}
	return 0;
}

int parload__pipe_fill(parload__ctx *c, void *buf, size_t len, size_t *got,
			 uint64_t *off)
{
	const size_t max_read = parload__max_read(c->opts);
	unsigned char *p = buf;
	int rc;

	*got = 0;
	while (*got < len) {
		ssize_t n = parload__sys_read(
			c->fd, p + *got, PARLOAD__MIN(len - *got, max_read));

		c->io.calls++;
		if (n > 0) {
			*got += (size_t)n;
			*off += (uint64_t)n;
			c->io.bytes += (uint64_t)n;
			continue;
		}
		if (n == 0)
			break; /* the end of the stream */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			rc = wait_readable(c, *off);
			if (rc)
				return rc;
			continue;
		}
		return parload__fail(c->err, PARLOAD_EIO, errno, c->path,
				     parload__view_at(&c->d, &c->one, *off), *off,
				     "read failed");
	}
	return 0;
}

int parload__source_open_path(parload__ctx *c, parload__file *f, bool wait)
{
	int rc = open_path(c, f);

	if (rc == 0)
		rc = classify(c, f, false);
	if (rc == 0 && c->stream && wait)
		rc = writer_wait(c, f);
	/* Reads of a device block as they always do (O_NONBLOCK changes
	 * nothing for a regular file). */
	if (rc == 0 && c->stream)
		rc = blocking(c, f);
	return rc;
}

int parload__source_take_fd(parload__ctx *c, parload__file *f, int fd)
{
	f->fd = fd;
	if (fd < 0)
		return parload__fail_path(c->err, PARLOAD_EOPEN, EBADF, c->path,
					  "not an open file descriptor");
	return classify(c, f, true);
}
