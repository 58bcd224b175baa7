/*
 * pipe.c - a source that can only be read once, in order: a pipe, a
 * socket or a character device (standard input, say).
 *
 * It has no size and no offsets, so it is read as the records arrive from
 * the hardware: the load has read and validated the file header (with
 * parload__pipe_fill, files.c) and laid out the arrays for its view_count;
 * each view header and payload is then read with read() loops straight
 * into its place and checked while it is still in cache.  The stream must
 * then end: a byte after the last view is PARLOAD_ETRAILING, an end before
 * it PARLOAD_ETRUNCATED (or, allowed, the complete views).  Pages of the
 * arrays are touched only as data arrives, so a stream that promises many
 * views and delivers few costs what it delivered.  Such a load reports the
 * sequential strategy and one thread whatever the loader's options.
 */
#include "engine/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

/* Read and drop n bytes; *got says how many came. */
static int skip(parload__ctx *c, uint64_t n, uint64_t *got, uint64_t *off)
{
	unsigned char scratch[4096];
	size_t part = sizeof(scratch);

	*got = 0;
	while (*got < n && part == sizeof(scratch)) {
		int rc = parload__pipe_fill(
			c, scratch, (size_t)PARLOAD__MIN(n - *got, sizeof(scratch)),
			&part, off);

		if (rc)
			return rc;
		*got += part;
	}
	return 0;
}

/* A raw stream's pixels stored otherwise than the dataset holds them:
 * rows read into buf (of bufsize bytes, at least one row) and converted
 * into the view at pix.  *got: the file's bytes that came. */
static int read_converted(parload__ctx *c, parload__convert_fn convert,
			  unsigned char *buf, size_t bufsize, unsigned char *pix,
			  uint64_t *got, uint64_t *off)
{
	const size_t row = (size_t)c->d.row_size;
	const size_t out_row = (size_t)c->d.width * c->d.bytes_per_pixel;
	const size_t per = bufsize / row;
	int rc = 0;

	*got = 0;
	for (uint32_t r = 0; rc == 0 && r < c->d.height;) {
		const uint32_t n = (uint32_t)PARLOAD__MIN(per, c->d.height - r);
		size_t part;

		rc = parload__pipe_fill(c, buf, n * row, &part, off);
		*got += part;
		if (rc || part < n * row)
			break;
		for (uint32_t k = 0; k < n; k++)
			convert(pix + (size_t)(r + k) * out_row, buf + k * row,
				0, c->d.width);
		r += n;
	}
	return rc;
}

/* View i, header and payload (and the gap before it); *whole says
 * whether all of it arrived.  With convert, its rows go through buf
 * (bufsize bytes). */
static int read_view(parload__ctx *c, uint64_t i, parload__convert_fn convert,
		     unsigned char *buf, size_t bufsize, uint64_t *off,
		     bool *whole)
{
	const parload_desc *d = &c->d;
	const size_t ps = (size_t)c->shape.view_bytes;
	unsigned char *pix = (unsigned char *)c->out->pixels + i * ps;
	const uint64_t gap = i ? d->gap : 0;
	uint64_t got = 0, start;
	size_t part;
	int rc;

	rc = skip(c, gap, &got, off);
	if (rc || got < gap) {
		/* The last view's gap may be missing: that ends no view. */
		*whole = false;
		return rc;
	}
	start = *off;
	if (d->format == PARLOAD_FORMAT_PARLOAD)
		rc = parload__pipe_fill(c, &c->out->headers[i], (size_t)d->header,
					&part, off);
	else if (c->raw_headers)
		rc = parload__pipe_fill(c, c->out->raw_headers + i * d->header,
					(size_t)d->header, &part, off);
	else
		rc = skip(c, d->header, &got, off);
	if (rc == 0 && *off - start == d->header)
		rc = convert ? read_converted(c, convert, buf, bufsize, pix,
					      &got, off) :
			   parload__pipe_fill(c, pix, ps, &part, off);
	*whole = *off - start == d->header + d->payload_size;
	if (d->format != PARLOAD_FORMAT_PARLOAD) {
		memset(&c->out->headers[i], 0, sizeof(c->out->headers[i]));
		c->out->headers[i].view_index = i;
	}
	return rc;
}

/* After the last view: the stream must end here, as a file must (a raw
 * stream's bytes after its counted views are not read). */
static int expect_end(parload__ctx *c, uint64_t *off)
{
	unsigned char extra;
	size_t got;
	int rc;

	if (c->d.format != PARLOAD_FORMAT_PARLOAD)
		return 0;
	rc = parload__pipe_fill(c, &extra, 1, &got, off);

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
	const size_t ps = (size_t)c->shape.view_bytes;
	int rc;

	if (!c->req->on_batch || n == *sent ||
	    (!last && n - *sent < parload__batch_views(c)))
		return 0;
	rc = parload__deliver(c, *sent, n, c->out->headers + *sent,
			      c->raw_headers ?
				      c->out->raw_headers + *sent * c->d.header :
				      NULL,
			      (unsigned char *)c->out->pixels + *sent * ps,
			      c->err);
	*sent = n;
	return rc;
}

static int read_stream(parload__ctx *c)
{
	const bool allow_truncated =
		(c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0;
	const size_t ps = (size_t)c->shape.view_bytes;
	const size_t bufsize = (size_t)PARLOAD__MAX(c->d.row_size, 64 << 10);
	const parload__convert_fn convert = parload__convert_get(&c->d);
	uint64_t i, sent = 0, off = PARLOAD_FILE_HEADER_SIZE, got;
	unsigned char *buf = NULL;
	bool whole = true;
	int rc = 0;

	c->threads = 1;
	c->checked = true;
	if (c->d.format != PARLOAD_FORMAT_PARLOAD) {
		/* The file header was not read: the layout's offset is. */
		off = 0;
		rc = skip(c, c->d.offset, &got, &off);
		whole = rc == 0 && got == c->d.offset;
	}
	if (rc == 0 && convert && !(buf = parload__sys_malloc(bufsize)))
		rc = parload__fail_nomem(c->err, c->path);
	for (i = 0; rc == 0 && whole && i < c->d.count; i++) {
		rc = read_view(c, i, convert, buf, bufsize, &off, &whole);
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
	parload__sys_free(buf);
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
	.caps = PARLOAD_CAP_BATCHES | PARLOAD_CAP_LAYOUTS,
	.read = read_stream,
};
