/*
 * decode.c - a worker's strips: the rows of a container's compressed
 * strips (HDF5 chunks, TIFF strips and tiles), read and decoded by the
 * worker whose share needs them, outside any library lock.
 *
 * The plan (plan.c) asks for a decoded strip's rows as it asks a file for
 * its bytes: (strip, byte of its rows, length).  The reader keeps the last
 * strip it decoded, so a strip whose rows come in several batches is
 * decoded once.  Deflate (zlib streams, HDF5's shuffle filter undone after
 * it) is libdeflate's; anything else is the container's own decoder
 * (CODEC_CUSTOM), one state per worker.
 */
#include "codec/codec.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#ifdef HAVE_HDF5
#include <libdeflate.h>
#endif

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
	if (t->codec == PARLOAD__CODEC_CUSTOM)
		return t->decoder->open(t, &r->state, err);
#ifdef HAVE_HDF5
	r->state = libdeflate_alloc_decompressor();
	if (!r->state)
		return parload__fail_nomem(err, t->path);
	return 0;
#else
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, t->path,
				  "deflate-compressed strips need a "
				  "libparload built with HDF5 and libdeflate "
				  "(configure --with-hdf5)");
#endif
}

void parload__strip_reader_close(parload__strip_reader *r)
{
	if (!r->t)
		return;
	if (r->state && r->t->codec == PARLOAD__CODEC_CUSTOM)
		r->t->decoder->close(r->state);
#ifdef HAVE_HDF5
	else if (r->state)
		libdeflate_free_decompressor(r->state);
#endif
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

/* HDF5's shuffle undone: byte b of element e is at in[b * n + e]. */
static void unshuffle(unsigned char *out, const unsigned char *in,
		      size_t len, uint32_t elem)
{
	const size_t n = len / elem;

	for (uint32_t b = 0; b < elem; b++)
		for (size_t e = 0; e < n; e++)
			out[e * elem + b] = in[(size_t)b * n + e];
	/* Bytes past the last whole element are stored as they are. */
	memcpy(out + n * elem, in + n * elem, len - n * elem);
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

#ifdef HAVE_HDF5
/* Inflate strip i's stored bytes (in) into its rows. */
static int inflate_strip(parload__strip_reader *r, uint64_t i)
{
	const parload__strips *t = r->t;
	const size_t size = parload__strip_size(t, r->d);
	const size_t stored = (size_t)parload__strip_of(t, i, &r->run).bytes;
	unsigned char *to = t->codec == PARLOAD__CODEC_SHUFFLE_DEFLATE ?
				    r->in + stored :
				    r->out;
	size_t got = 0;
	enum libdeflate_result res;

	res = libdeflate_zlib_decompress(r->state, r->in, stored, to, size,
					 &got);
	if (res == LIBDEFLATE_BAD_DATA)
		return bad_strip(r, i, "is not a valid deflate stream", 0);
	if (res != LIBDEFLATE_SUCCESS || got != size)
		return bad_strip(r, i, res == LIBDEFLATE_INSUFFICIENT_SPACE ?
				 "inflates to more bytes than its rows" :
				 "inflates to fewer bytes than its rows",
				 got);
	if (t->codec == PARLOAD__CODEC_SHUFFLE_DEFLATE)
		unshuffle(r->out, to, size, t->elem);
	return 0;
}
#endif

/* Strip i into r->out. */
static int decode(parload__strip_reader *r, uint64_t i,
		  parload__io_stats *st)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(t, i, &r->run);
	const size_t size = parload__strip_size(t, r->d);
	const parload__file *f = &r->files[s.file];
	int rc;

	if (t->codec == PARLOAD__CODEC_CUSTOM)
		return t->decoder->decode(r->state, t, i, r->out, size,
					  r->err);
	rc = reserve(r, (size_t)s.bytes +
				(t->codec == PARLOAD__CODEC_SHUFFLE_DEFLATE ?
					 size :
					 0),
		     r->err);
	if (rc == 0)
		rc = parload__pread_full(f->fd, r->in, (size_t)s.bytes, s.off,
					 r->max_read, st, f->path,
					 i / t->per_view, r->err);
#ifdef HAVE_HDF5
	if (rc == 0)
		rc = inflate_strip(r, i);
#endif
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
