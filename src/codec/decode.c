/*
 * decode.c - a worker's strips: the rows of a container's compressed
 * strips (HDF5 chunks, TIFF strips and tiles), read and decoded by the
 * worker whose share needs them, outside any library lock.
 *
 * The plan (plan.c) asks for a decoded strip's rows as it asks a file for
 * its bytes: (strip, byte of its rows, length).  The reader keeps the last
 * strip it decoded, so a strip whose rows come in several batches is
 * decoded once.  How a strip's stored bytes become rows is its codec's
 * row of the table (codecs.c): deflate (zlib streams, libdeflate's),
 * deflate with HDF5's shuffle filter undone after it, or the container's
 * own decoder (CODEC_CUSTOM: libtiff's or libhdf5's, which reads the
 * strip itself), each with one state per worker.
 */
#include "codec/codec.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>


int parload__strip_reader_open(parload__strip_reader *r,
			       const parload__strips *t, const parload_desc *d,
			       const parload__file *files, parload_error *err)
{
	const size_t size = parload__strip_size(t, d);

	memset(r, 0, sizeof(*r));
	r->t = t;
	r->d = d;
	r->files = files;
	r->have = UINT64_MAX;
	r->out = parload__sys_malloc(size);
	if (!r->out)
		return parload__fail_nomem(err, t->path);
	r->codec = parload__codec_get(t->codec);
	if (t->codec == PARLOAD__CODEC_CUSTOM)
		return t->decoder->open(t, &r->state, err);
	if (!r->codec->decode)
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, t->path,
					  "%s strips need a libparload built "
					  "with %s", r->codec->name,
					  r->codec->needs);
	if (r->codec->open && !(r->state = r->codec->open()))
		return parload__fail_nomem(err, t->path);
	return 0;
}

void parload__strip_reader_close(parload__strip_reader *r)
{
	if (!r->t)
		return;
	if (r->state && r->t->codec == PARLOAD__CODEC_CUSTOM)
		r->t->decoder->close(r->state);
	else if (r->state && r->codec->close)
		r->codec->close(r->state);
	parload__sys_free(r->in);
	parload__sys_free(r->out);
	memset(r, 0, sizeof(*r));
}

/* Room for n stored bytes (in[0..n) and, for the shuffle, as many again
 * after them for the inflated bytes). */
static int reserve(parload__strip_reader *r, size_t n, parload_error *err)
{
	unsigned char *p;

	if (n <= r->in_cap)
		return 0;
	p = parload__sys_malloc(n);
	if (!p)
		return parload__fail_nomem(err, r->t->path);
	parload__sys_free(r->in);
	r->in = p;
	r->in_cap = n;
	return 0;
}

static int bad_strip(parload__strip_reader *r, uint64_t i, const char *what,
		     size_t got)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(t, i, &r->run);

	return parload__fail(r->err, PARLOAD_ECONTAINER, 0,
			     r->files[s.file].path, i / t->per_view, s.off,
			     "strip %" PRIu64 " of view %" PRIu64 " (%" PRIu64
			     " stored bytes) %s (%zu bytes, %zu expected)",
			     i % t->per_view, i / t->per_view, s.bytes, what,
			     got, parload__strip_size(t, r->d));
}


/* Strip i into r->out. */
static int decode(parload__strip_reader *r, uint64_t i,
		  parload__io_stats *st)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(t, i, &r->run);
	const size_t size = parload__strip_size(t, r->d);
	const parload__file *f = &r->files[s.file];
	size_t got = 0;
	const char *why;
	int rc;

	if (t->codec == PARLOAD__CODEC_CUSTOM)
		return t->decoder->decode(r->state, t, i, r->out, size,
					  r->err);
	rc = reserve(r, (size_t)s.bytes + (r->codec->scratch ? size : 0),
		     r->err);
	if (rc == 0)
		rc = parload__pread_full(f->fd, r->in, (size_t)s.bytes, s.off,
					 r->max_read, st, f->path,
					 i / t->per_view, r->err);
	if (rc == 0 && (why = r->codec->decode(r->state, r->in,
					       (size_t)s.bytes, r->out, size,
					       t->elem, &got)))
		rc = bad_strip(r, i, why, got);
	return rc;
}

const unsigned char *parload__strip_get(parload__strip_reader *r, uint64_t i,
					uint64_t at, size_t len,
					parload__io_stats *st,
					parload_error *err)
{
	if (r->have != i) {
		r->have = UINT64_MAX;
		r->err = err;
		if (decode(r, i, st) != 0)
			return NULL;
		r->have = i;
		r->decoded++;
	}
	(void)len; /* the cursor never asks past a strip's rows */
	return r->out + at;
}
