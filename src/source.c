/*
 * source.c - where a load reads from: a path or the caller's descriptor,
 * a regular file (whose size is known up front, so the header is checked
 * against it before anything is allocated) or a stream (a pipe, socket or
 * character device, read once, in order).  Also the file header: read,
 * validated, and fitted to the file's size.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int parload__fail_open(parload_error *err, int sys_errno, const char *path)
{
	struct stat st;

	/* open() says only ENOENT; lstat() tells a link whose target is
	 * missing from a missing name. */
	if (sys_errno == ENOENT && path && lstat(path, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return parload__fail_path(err, PARLOAD_EOPEN, sys_errno, path,
					  "cannot open file (a dangling "
					  "symbolic link)");
	return parload__fail_path(err, PARLOAD_EOPEN, sys_errno, path,
				  "cannot open file");
}

/* What kind of thing fd is: a regular file (its size), a stream (when
 * the caller's descriptor may be one), or something a load cannot read. */
static int classify(parload__ctx *c, bool callers)
{
	struct stat st;

	if (parload__sys_fstat(c->fd, &st) != 0)
		return callers ? parload__fail_path(c->err, PARLOAD_EOPEN, errno,
						    c->path,
						    "not an open file "
						    "descriptor") :
				 parload__fail_path(c->err, PARLOAD_EIO, errno,
						    c->path,
						    "cannot stat file");
	if (S_ISREG(st.st_mode)) {
		c->size = (uint64_t)st.st_size;
		return 0;
	}
	if (callers ? !S_ISDIR(st.st_mode) :
		      S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		c->stream = true;
		return 0;
	}
	return parload__fail_path(c->err, PARLOAD_ENOTREG, 0, c->path,
				  callers ? "not a file or a stream (a %s)" :
					    "not a regular file (a %s)",
				  parload__file_kind(st.st_mode));
}

static bool following(const parload__ctx *c)
{
	return c->req && (c->req->flags & PARLOAD_REQ_FOLLOW);
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
		if (c->req->cancel &&
		    __atomic_load_n(c->req->cancel, __ATOMIC_RELAXED))
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

/* Open path read-only.  A FIFO (mkfifo, <(...), /dev/stdin on a pipe) is
 * opened as cat opens it, waiting for its writer: a reader opened without
 * waiting would see the end of a stream no writer has joined yet.  Anything
 * else is opened O_NONBLOCK, so that a FIFO made in between cannot hang the
 * open, and blocks again once opened. */
static int open_path(parload__ctx *c, const char *path)
{
	struct stat st;
	int wait = stat(path, &st) == 0 && S_ISFIFO(st.st_mode) ?
			   0 : O_NONBLOCK;

	do
		c->fd = parload__sys_open(path, O_RDONLY | O_CLOEXEC |
						O_NOCTTY | wait);
	while (c->fd < 0 && errno == EINTR);
	if (c->fd < 0)
		return parload__fail_open(c->err, errno, path);
	c->own_fd = true;
	return 0;
}

int parload__source_open(parload__ctx *c, const parload_request *req)
{
	int rc;

	c->fd = -1;
	if (req->path) {
		rc = open_path(c, req->path);
		if (rc == 0)
			rc = classify(c, false);
		/* Reads of a device block as they always do (O_NONBLOCK
		 * changes nothing for a regular file). */
		if (rc == 0 && c->stream)
			(void)fcntl(c->fd, F_SETFL,
				    fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
		return rc;
	}
	c->fd = req->fd;
	if (c->fd < 0)
		return parload__fail_path(c->err, PARLOAD_EOPEN, EBADF, c->path,
					  "not an open file descriptor");
	return classify(c, true);
}

void parload__source_close(parload__ctx *c)
{
	if (c->fd >= 0 && c->own_fd)
		parload__sys_close(c->fd);
	c->fd = -1;
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
		if (following(c) &&
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

/* Fit the header to the file's size: with PARLOAD_OPT_ALLOW_TRUNCATED a
 * file cut short keeps its complete views; a file being followed may be
 * short now (batch.c waits for its views). */
static int fit_size(parload__ctx *c)
{
	parload_file_header *h = &c->h;
	uint64_t want;

	if (following(c) && parload_file_size(h, &want) == 0 && c->size < want)
		return 0;

	if ((c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) &&
	    c->size >= PARLOAD_FILE_HEADER_SIZE &&
	    parload_file_size(h, &want) == 0 && c->size < want) {
		/* What an acquisition that died left: its complete views.
		 * A partial record at the end is the truncation itself. */
		h->view_count = (c->size - PARLOAD_FILE_HEADER_SIZE) /
				parload__record_size(h);
		return 0;
	}
	return parload__check_file_size(h, c->size, c->path, c->err);
}

int parload__source_header(parload__ctx *c, const unsigned char *b)
{
	int rc;

	rc = parload_parse_file_header(b, PARLOAD_FILE_HEADER_SIZE, c->path,
				       &c->h, c->err);
	if (rc)
		return rc;
	c->declared = c->h.view_count;
	/* A stream has no size to check: it must end where the header says
	 * (pipe.c). */
	return c->stream ? 0 : fit_size(c);
}

int parload__source_recheck(parload__ctx *c, uint64_t need)
{
	struct stat st;

	if (c->stream)
		return 0;
	if (parload__sys_fstat(c->fd, &st) != 0)
		return parload__fail_path(c->err, PARLOAD_EIO, errno, c->path,
					  "cannot stat file");
	if ((uint64_t)st.st_size >= need)
		return 0;
	return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
			     PARLOAD_NONE, (uint64_t)st.st_size,
			     "file ended early: it was truncated to %jd bytes "
			     "while being read",
			     (intmax_t)st.st_size);
}

/* ---- header-only calls ---- */

/* Open path as a load would, read its first 64 bytes into b, close it;
 * *size is its size. */
static int peek(const char *path, void *out, unsigned char *b,
		uint64_t *size, parload_error *err)
{
	parload_options o;
	parload__ctx c;
	struct stat st;
	int rc;

	if (!out || !path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  path ? NULL : "no file given");
	/* A header alone is not worth waiting for a FIFO's writer. */
	if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		return parload__fail_path(err, PARLOAD_ENOTREG, 0, path,
					  "not a regular file (a FIFO)");
	memset(&c, 0, sizeof(c));
	parload_options_init(&o);
	c.opts = &o;
	c.err = err;
	c.path = path;
	c.fd = -1;
	rc = open_path(&c, path);
	if (rc == 0)
		rc = classify(&c, false);
	if (rc == 0 && c.stream)
		rc = parload__fail_path(err, PARLOAD_ENOTREG, 0, path,
					"not a regular file (a %s)",
					"character device");
	if (rc == 0)
		rc = parload__source_read_header(&c, b);
	*size = c.size;
	parload__source_close(&c);
	return rc;
}

int parload_read_header(const char *path, parload_file_header *out,
			parload_error *err)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	uint64_t size;
	int rc = peek(path, out, b, &size, err);

	if (rc == 0)
		rc = parload_parse_file_header(b, sizeof(b), path, out, err);
	if (rc == 0)
		rc = parload__check_file_size(out, size, path, err);
	return rc;
}

int parload_peek_header(const char *path, parload_file_header *out,
			parload_error *err)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	uint64_t size;
	int rc = peek(path, out, b, &size, err);

	if (rc == 0 && memcmp(b, PARLOAD_MAGIC, 8) != 0)
		rc = parload__fail(err, PARLOAD_EMAGIC, 0, path, PARLOAD_NONE,
				   0, NULL);
	/* parload.h: the struct is the on-disk layout on little-endian
	 * hosts, the only ones parload builds on. */
	if (rc == 0)
		memcpy(out, b, sizeof(*out));
	else if (out)
		memset(out, 0, sizeof(*out));
	return rc;
}
