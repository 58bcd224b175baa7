/*
 * stream.c - where a load reads from: a path, the caller's descriptor of a
 * regular file, or a stream that can only be read once, in order.
 *
 * A regular file, however it was opened, is loaded by the loader's
 * strategy: its size is known up front, so the header is checked against
 * it before anything is allocated (and, with PARLOAD_OPT_ALLOW_TRUNCATED,
 * a file cut short keeps its complete views).
 *
 * A pipe, socket or character device has no size and no offsets.  It is
 * read as the records arrive from the hardware: the file header first
 * (validated exactly as a file's is), then the arrays are laid out for its
 * view_count, and each view header and payload is read with read() loops
 * straight into its place and checked while it is still in cache.  The
 * stream must then end: a byte after the last view is PARLOAD_ETRAILING,
 * an end before it PARLOAD_ETRUNCATED (or, allowed, the complete views).
 * Pages of the arrays are touched only as data arrives, so a stream that
 * promises many views and delivers few costs what it delivered.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int parload__fail_open(parload_error *err, int sys_errno, const char *path)
{
	struct stat st;

	/* open() says only ENOENT; lstat() tells a link whose target is
	 * missing from a missing name. */
	if (sys_errno == ENOENT && path && lstat(path, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return parload__fail(err, PARLOAD_EOPEN, sys_errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "cannot open file (a dangling symbolic "
				     "link)");
	return parload__fail(err, PARLOAD_EOPEN, sys_errno, path, PARLOAD_NONE,
			     PARLOAD_NONE, "cannot open file");
}

int parload__load_open(const parload__load *l, int *fd, uint64_t *size)
{
	int rc;

	if (l->fd < 0)
		return parload__open(l->path, fd, size, l->err);
	*fd = -1;
	rc = parload__check_regular(l->fd, l->path, size, l->err);
	if (rc == 0)
		*fd = l->fd;
	return rc;
}

void parload__load_close(const parload__load *l, int fd)
{
	if (fd >= 0 && fd != l->fd)
		parload__sys_close(fd);
}

int parload__load_recheck(const parload__load *l, int fd, uint64_t need)
{
	struct stat st;

	if (parload__sys_fstat(fd, &st) != 0)
		return parload__fail(l->err, PARLOAD_EIO, errno, l->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "cannot stat file");
	if ((uint64_t)st.st_size >= need)
		return 0;
	return parload__fail(l->err, PARLOAD_ETRUNCATED, 0, l->path,
			     PARLOAD_NONE, (uint64_t)st.st_size,
			     "file ended early: it was truncated to %jd bytes "
			     "while being read",
			     (intmax_t)st.st_size);
}

int parload__fit_size(const parload__load *l, parload_file_header *h,
		      uint64_t size, uint64_t *declared)
{
	uint64_t want;

	*declared = h->view_count;
	if ((l->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) &&
	    size >= PARLOAD_FILE_HEADER_SIZE &&
	    parload_file_size(h, &want) == 0 && size < want) {
		/* What an acquisition that died left: its complete views.
		 * A partial record at the end is the truncation itself. */
		h->view_count = (size - PARLOAD_FILE_HEADER_SIZE) /
				parload__record_size(h);
		return 0;
	}
	return parload__check_file_size(h, size, l->path, l->err);
}

int parload__load_header(const parload__load *l, int fd, uint64_t size,
			 parload_file_header *h, uint64_t *declared,
			 parload__io_stats *st)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	int rc;

	if (size < sizeof(b))
		return parload__fail(l->err, PARLOAD_ETRUNCATED, 0, l->path,
				     PARLOAD_NONE, size,
				     "file is %" PRIu64 " bytes, shorter than "
				     "the %d-byte file header",
				     size, PARLOAD_FILE_HEADER_SIZE);
	rc = parload__pread_full(fd, b, sizeof(b), 0, l->opts->max_read, st,
				 l->path, PARLOAD_NONE, l->err);
	if (rc == 0)
		rc = parload_parse_file_header(b, sizeof(b), l->path, h,
					       l->err);
	if (rc == 0)
		rc = parload__fit_size(l, h, size, declared);
	return rc;
}

/* ---- the sequential stream ---- */

typedef struct stream {
	int fd;
	const char *name;
	parload_error *err;
	const parload_file_header *h; /* once parsed: names views in errors */
	size_t max_read;
	uint64_t off;   /* bytes consumed: the offset in the file it carries */
	uint64_t calls; /* read() calls */
} stream;

static uint64_t stream_view(const stream *s)
{
	return s->h ? parload__view_at(s->h, s->off) : PARLOAD_NONE;
}

/* Wait until a descriptor opened non-blocking has data (or its end). */
static int wait_readable(stream *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	while (poll(&p, 1, -1) < 0) {
		if (errno != EINTR)
			return parload__fail(s->err, PARLOAD_EIO, errno,
					     s->name, stream_view(s), s->off,
					     "cannot wait for data");
	}
	return 0;
}

/* Read len bytes, or fewer at the end of the stream; *got says how many. */
static int stream_fill(stream *s, void *buf, size_t len, size_t *got)
{
	unsigned char *p = buf;
	int rc;

	*got = 0;
	while (*got < len) {
		ssize_t n = parload__sys_read(
			s->fd, p + *got, PARLOAD__MIN(len - *got, s->max_read));

		s->calls++;
		if (n > 0) {
			*got += (size_t)n;
			s->off += (uint64_t)n;
			continue;
		}
		if (n == 0)
			break; /* the end of the stream */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			rc = wait_readable(s);
			if (rc)
				return rc;
			continue;
		}
		return parload__fail(s->err, PARLOAD_EIO, errno, s->name,
				     stream_view(s), s->off, "read failed");
	}
	return 0;
}

int parload__load_stream(const parload__load *l)
{
	const double t0 = parload__now();
	const bool allow_truncated =
		(l->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0;
	parload_dataset *ds = l->out;
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	parload__badlist bad = { NULL, 0, 0 };
	parload_file_header h;
	parload__verify v;
	uint64_t i = 0;
	size_t got, ps;
	stream s;
	int rc;

	memset(ds, 0, sizeof(*ds));
	memset(&s, 0, sizeof(s));
	s.fd = l->fd;
	s.name = l->path;
	s.err = l->err;
	s.max_read = l->opts->max_read ? l->opts->max_read :
					 PARLOAD__DEFAULT_MAX_READ;
	s.max_read = PARLOAD__MIN(s.max_read, PARLOAD__KERNEL_MAX_READ);

	rc = stream_fill(&s, b, sizeof(b), &got);
	if (rc)
		return rc;
	if (got == 0)
		return parload__fail(l->err, PARLOAD_ETRUNCATED, 0, l->path,
				     PARLOAD_NONE, 0,
				     "stream is empty: no file header");
	if (got < sizeof(b))
		return parload__fail(l->err, PARLOAD_ETRUNCATED, 0, l->path,
				     PARLOAD_NONE, got,
				     "stream ended after %zu bytes, inside the "
				     "%d-byte file header",
				     got, PARLOAD_FILE_HEADER_SIZE);
	rc = parload_parse_file_header(b, sizeof(b), l->path, &h, l->err);
	if (rc)
		return rc;
	/* The arrays for every view the header promises (checked against
	 * the machine's memory first): a stream has no size to check. */
	rc = parload__dataset_alloc(l, &h);
	if (rc)
		return rc;
	s.h = &h;
	ps = (size_t)h.payload_size; /* the dataset fits in memory */
	parload__verify_init(&v, l, &h);

	for (; i < h.view_count; i++) {
		unsigned char *pix = (unsigned char *)ds->pixels + i * ps;
		const uint64_t start = s.off;

		rc = stream_fill(&s, &ds->headers[i], PARLOAD_VIEW_HEADER_SIZE,
				 &got);
		if (rc == 0 && got == PARLOAD_VIEW_HEADER_SIZE)
			rc = stream_fill(&s, pix, ps, &got);
		if (rc)
			break;
		if (s.off - start < parload__record_size(&h)) {
			if (allow_truncated)
				break; /* keep views [0, i) */
			rc = parload__fail(l->err, PARLOAD_ETRUNCATED, 0,
					   l->path, i, s.off,
					   "stream ended early: the header "
					   "promises %" PRIu64 " views, %" PRIu64
					   " complete views arrived",
					   h.view_count, i);
			break;
		}
		/* Checked while the view is still in this core's cache. */
		rc = parload__verify_views(&v, &ds->headers[i], pix, i, 1, &bad,
					   l->err);
		if (rc)
			break;
	}
	if (rc == 0 && i == h.view_count) {
		unsigned char extra;

		/* The stream must end here, as a file must. */
		rc = stream_fill(&s, &extra, 1, &got);
		if (rc == 0 && got)
			rc = parload__fail(l->err, PARLOAD_ETRAILING, 0,
					   l->path, PARLOAD_NONE, s.off - 1,
					   "stream goes on after the last of "
					   "its %" PRIu64 " views",
					   h.view_count);
	}
	if (rc == 0) {
		ds->file_header.view_count = i;
		rc = parload__verify_finish(&v, &bad, ds, l->err);
	} else {
		parload__badlist_free(&bad);
	}
	if (rc) {
		parload_dataset_free(ds);
		return rc;
	}
	ds->stats.seconds = parload__now() - t0;
	ds->stats.bytes_read = s.off;
	ds->stats.read_calls = s.calls;
	ds->stats.threads = 1;
	ds->stats.strategy = PARLOAD_STRATEGY_SEQUENTIAL;
	ds->stats.declared_views = h.view_count;
	ds->stats.crc_checked = v.crc ? i : 0;
	return 0;
}
