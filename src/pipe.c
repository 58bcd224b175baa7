/*
 * pipe.c - a source that can only be read once, in order: a pipe, a
 * socket or a character device (standard input, say).
 *
 * It has no size and no offsets, so it is read as the records arrive from
 * the hardware: the load has read and validated the file header (with
 * parload__pipe_fill below) and laid out the arrays for its view_count;
 * each view header and payload is then read with read() loops straight
 * into its place and checked while it is still in cache.  The stream must
 * then end: a byte after the last view is PARLOAD_ETRAILING, an end before
 * it PARLOAD_ETRUNCATED (or, allowed, the complete views).  Pages of the
 * arrays are touched only as data arrives, so a stream that promises many
 * views and delivers few costs what it delivered.  Such a load reports the
 * sequential strategy and one thread whatever the loader's options.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

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

/* View i, header and payload; *whole says whether all of it arrived. */
static int read_view(parload__ctx *c, uint64_t i, uint64_t *off, bool *whole)
{
	const size_t ps = (size_t)c->d.payload_size;
	unsigned char *pix = (unsigned char *)c->out->pixels + i * ps;
	const uint64_t start = *off;
	size_t got;
	int rc;

	rc = parload__pipe_fill(c, &c->out->headers[i],
				  PARLOAD_VIEW_HEADER_SIZE, &got, off);
	if (rc == 0 && got == PARLOAD_VIEW_HEADER_SIZE)
		rc = parload__pipe_fill(c, pix, ps, &got, off);
	*whole = *off - start == c->d.record_size;
	return rc;
}

/* After the last view: the stream must end here, as a file must. */
static int expect_end(parload__ctx *c, uint64_t *off)
{
	unsigned char extra;
	size_t got;
	int rc = parload__pipe_fill(c, &extra, 1, &got, off);

	if (rc == 0 && got)
		rc = parload__fail(c->err, PARLOAD_ETRAILING, 0, c->path,
				   PARLOAD_NONE, *off - 1,
				   "stream goes on after the last of its %"
				   PRIu64 " views",
				   c->d.count);
	return rc;
}

/* With on_batch: hand over the views [*sent, n) when there are a batch's
 * worth of them, or all that remain when last. */
static int deliver(parload__ctx *c, uint64_t *sent, uint64_t n, bool last)
{
	const size_t ps = (size_t)c->d.payload_size;
	int rc;

	if (!c->req->on_batch || n == *sent ||
	    (!last && n - *sent < parload__batch_views(c)))
		return 0;
	rc = parload__deliver(c, *sent, n, c->out->headers + *sent, NULL,
			      (unsigned char *)c->out->pixels + *sent * ps);
	*sent = n;
	return rc;
}

static int read_stream(parload__ctx *c)
{
	const bool allow_truncated =
		(c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0;
	const size_t ps = (size_t)c->d.payload_size;
	uint64_t i, sent = 0, off = PARLOAD_FILE_HEADER_SIZE;
	bool whole = true;
	int rc = 0;

	c->threads = 1;
	c->checked = true;
	for (i = 0; rc == 0 && i < c->d.count; i++) {
		rc = read_view(c, i, &off, &whole);
		if (rc || !whole)
			break;
		/* Checked while the view is still in this core's cache. */
		rc = parload__verify_views(&c->verify, &c->out->headers[i],
					   (unsigned char *)c->out->pixels +
						   i * ps,
					   i, 1, &c->bad, c->err);
		if (rc == 0)
			rc = deliver(c, &sent, i + 1, false);
	}
	if (rc == 0 && (whole || allow_truncated))
		rc = deliver(c, &sent, i, true);
	if (rc == 0 && !whole && !allow_truncated)
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path, i,
				     off,
				     "stream ended early: the header "
				     "promises %" PRIu64 " views, %" PRIu64
				     " complete views arrived",
				     c->d.count, i);
	if (rc == 0 && whole)
		return expect_end(c, &off);
	if (rc == 0) {
		/* Keep views [0, i). */
		c->d.count = c->shape.views = i;
		c->out->desc.count = c->out->shape.views = i;
	}
	return rc;
}

const parload__strategy parload__strategy_pipe = {
	.caps = PARLOAD_CAP_BATCHES,
	.read = read_stream,
};
