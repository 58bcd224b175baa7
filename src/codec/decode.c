/*
 * decode.c - a worker's strips: the rows of a container's compressed or
 * chunked strips (HDF5 chunks, TIFF strips and tiles), read and decoded by
 * the worker whose share needs them, outside any library lock.
 *
 * The plan (plan.c) asks for a decoded strip's rows as it asks a file for
 * its bytes: (strip, byte of its rows, length).  The strip lies in a
 * chunk of the table (model.h's parload__strips): depth frames of the
 * strip's rows, in tiles chunks across the row.  The reader decodes the
 * chunk its strip lies in (each tile through the filters, last first,
 * then into its columns of the rows) and keeps it, so that the strips of
 * a chunk's frames and a strip whose rows come in several batches cost
 * one decode.  How a stage's bytes are undone is its codec's row
 * (codecs.c); a container's own decoder (libtiff's or libhdf5's, which
 * reads the strip itself) decodes a strip at a time.
 */
#include "codec/codec.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* Bytes of the decoded chunk (all tiles) and of one tile's. */
static size_t chunk_bytes(const parload__strips *t, const parload_desc *d)
{
	return parload__strips_depth(t) * parload__strip_size(t, d);
}

static size_t tile_bytes(const parload__strips *t, const parload_desc *d)
{
	const size_t px = d->width ? (size_t)(d->row_size / d->width) : 0;

	return t->tile_cols ? (size_t)parload__strips_depth(t) * t->rows *
				      t->tile_cols * px :
			      chunk_bytes(t, d);
}

/* Chunks kept: one for each strip of a view where chunks hold several
 * frames and those of a whole view fit in MAX_KEPT; else one. */
#define MAX_KEPT ((size_t)256 << 20)

static uint32_t slabs(const parload__strips *t, const parload_desc *d)
{
	return parload__strips_depth(t) > 1 &&
			       t->per_view <= MAX_KEPT / chunk_bytes(t, d) ?
		       t->per_view :
		       1;
}

/* Each filter's state; ENOTSUP naming what a filter this build has no
 * decode for needs. */
static int open_filters(parload__strip_reader *r, parload_error *err)
{
	const parload__strips *t = r->t;

	if (t->nfilters > PARLOAD__MAX_FILTERS)
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, t->path,
					  "%" PRIu32 " filters (at most %d)",
					  t->nfilters, PARLOAD__MAX_FILTERS);
	for (uint32_t k = 0; k < t->nfilters; k++) {
		const parload__codec_row *row =
			parload__codec_get(t->filter[k].codec);

		if (!row->decode)
			return parload__fail_path(err, PARLOAD_ENOTSUP, 0,
						  t->path, "%s chunks need a "
						  "libparload built with %s",
						  row->name, row->needs ?
						  row->needs : "its codec");
		if (row->open && !(r->state[k] = row->open()))
			return parload__fail_nomem(err, t->path);
	}
	return 0;
}

int parload__strip_reader_open(parload__strip_reader *r,
			       const parload__strips *t, const parload_desc *d,
			       const parload__file *files, parload_error *err)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->d = d;
	r->files = files;
	r->slabs = slabs(t, d);
	r->slab = parload__sys_calloc(r->slabs, sizeof(*r->slab));
	if (!r->slab)
		return parload__fail_nomem(err, t->path);
	if (t->tile_cols &&
	    !(r->tile = parload__sys_malloc(tile_bytes(t, d))))
		return parload__fail_nomem(err, t->path);
	if (t->decoder)
		return t->decoder->open(t, &r->custom, err);
	return open_filters(r, err);
}

void parload__strip_reader_close(parload__strip_reader *r)
{
	const parload__strips *t = r->t;

	if (!t)
		return;
	if (r->custom)
		t->decoder->close(r->custom);
	for (uint32_t k = 0; k < t->nfilters && k < PARLOAD__MAX_FILTERS; k++)
		if (r->state[k])
			parload__codec_get(t->filter[k].codec)->close(
				r->state[k]);
	parload__sys_free(r->in);
	parload__sys_free(r->mid[0]);
	parload__sys_free(r->mid[1]);
	parload__sys_free(r->tile);
	for (uint32_t k = 0; r->slab && k < r->slabs; k++) {
		parload__sys_free(r->slab[k].out);
		parload__sys_free(r->slab[k].tile_ok);
	}
	parload__sys_free(r->slab);
	memset(r, 0, sizeof(*r));
}

/* *buf with room for n bytes (its contents are not kept). */
static int reserve(const parload__strip_reader *r, unsigned char **buf,
		   size_t *cap, size_t n, parload_error *err)
{
	unsigned char *p;

	if (n <= *cap)
		return 0;
	p = parload__sys_malloc(n);
	if (!p)
		return parload__fail_nomem(err, r->t->path);
	parload__sys_free(*buf);
	*buf = p;
	*cap = n;
	return 0;
}

/* Room between two stages: a stage's bytes are no more than the stored
 * bytes or the chunk's (a checksum, a header: a few more). */
static int reserve_mid(parload__strip_reader *r, size_t n, parload_error *err)
{
	if (n <= r->mid_cap || r->t->nfilters < 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		size_t cap = r->mid_cap;
		const int rc = reserve(r, &r->mid[k], &cap, n, err);

		if (rc) {
			r->mid_cap = 0; /* one may be the larger now */
			return rc;
		}
	}
	r->mid_cap = n;
	return 0;
}

/* Entry e (tile x of strip i) and what is wrong with it: failed. */
static int bad_chunk(parload__strip_reader *r, uint64_t e, const char *codec,
		     const char *what, size_t got, size_t want)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(t, e, &r->run);
	const uint64_t step = parload__strips_step(t);
	const uint64_t v = e / step, i = e / parload__strips_tiles(t);

	return parload__fail(r->err, PARLOAD_ECONTAINER, 0,
			     r->files[s.file].path, v, s.off,
			     "chunk of strip %" PRIu64 " of view %" PRIu64
			     " (%s, %" PRIu64 " stored bytes) %s (%zu bytes, "
			     "%zu expected)", i % t->per_view, v, codec,
			     s.bytes, what, got, want);
}

/* The stored bytes in (stored) through the filters, last first, into dst
 * (want bytes, exactly): NULL, or what is wrong; *codec the stage. */
static const char *unfilter(parload__strip_reader *r, const unsigned char *in,
			    size_t stored, uint32_t mask, unsigned char *dst,
			    size_t want, size_t *got, const char **codec)
{
	const parload__strips *t = r->t;
	const unsigned char *src = in;
	size_t n = stored;
	uint32_t last = 0; /* the first filter not skipped */
	unsigned next = 0; /* the buffer between stages to write next */

	while (last < t->nfilters && (mask >> last & 1))
		last++;
	if (last == t->nfilters && n <= want)
		memcpy(dst, src, n);
	for (int k = (int)t->nfilters - 1; k >= (int)last; k--) {
		const parload__filter *f = &t->filter[k];
		const parload__codec_row *row = parload__codec_get(f->codec);
		unsigned char *out = k > (int)last ? r->mid[next] : dst;
		const char *why;

		if (mask >> k & 1)
			continue;
		next ^= 1;
		*codec = row->name;
		*got = 0;
		why = row->decode(r->state[k], f, src, n, out,
				  k > (int)last ? r->mid_cap : want, got);
		if (why)
			return why;
		src = out;
		n = *got;
	}
	*got = n;
	return n == want ? NULL :
	       n < want	 ? "decodes to fewer bytes than its chunk" :
			   "decodes to more bytes than its chunk";
}

/* A chunk never written: dst (want bytes) holds the fill value. */
static void fill_entry(const parload__strips *t, unsigned char *dst,
		       size_t want)
{
	const size_t n = t->fill_size;
	size_t k = n;

	memset(dst, 0, want);
	if (n == 0 || n > sizeof(t->fill) ||
	    !memcmp(t->fill, (const unsigned char[8]){ 0 }, n) || want < n)
		return;
	memcpy(dst, t->fill, n);
	/* Doubling copies: the pattern fills dst in log2(want / n) calls. */
	for (; k < want; k *= 2)
		memcpy(dst + k, dst, PARLOAD__MIN(k, want - k));
}

/* Entry e's stored bytes decoded into dst (want bytes). */
static int decode_entry(parload__strip_reader *r, uint64_t e,
			unsigned char *dst, size_t want, parload__io_stats *st)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(t, e, &r->run);
	const parload__file *f = &r->files[s.file];
	const uint64_t v = e / parload__strips_step(t);
	const char *why, *codec = "none";
	size_t got = 0;
	int rc;

	if (s.mask & PARLOAD__STRIP_FILL) {
		fill_entry(t, dst, want);
		return 0;
	}
	if (t->nfilters == 0 && s.bytes != want)
		return bad_chunk(r, e, codec, "is not its chunk's size",
				 (size_t)s.bytes, want);
	if (t->nfilters == 0) {
		rc = parload__pread_full(f->fd, dst, want, s.off, r->max_read,
					 st, f->path, v, r->err);
		r->decoded += rc == 0;
		return rc;
	}
	if (s.bytes > SIZE_MAX / 2)
		return bad_chunk(r, e, codec, "is too large", 0, want);
	rc = reserve(r, &r->in, &r->in_cap, (size_t)s.bytes, r->err);
	if (rc == 0)
		rc = reserve_mid(r, PARLOAD__MAX((size_t)s.bytes, want) + 64,
				 r->err);
	if (rc == 0)
		rc = parload__pread_full(f->fd, r->in, (size_t)s.bytes, s.off,
					 r->max_read, st, f->path, v, r->err);
	if (rc == 0 && (why = unfilter(r, r->in, (size_t)s.bytes, s.mask, dst,
				       want, &got, &codec)))
		rc = bad_chunk(r, e, codec, why, got, want);
	r->decoded += rc == 0;
	return rc;
}

/* Tile x (decoded in r->tile) into its columns of the chunk's rows
 * (out). */
static void place_tile(parload__strip_reader *r, unsigned char *out,
		       uint32_t x)
{
	const parload__strips *t = r->t;
	const size_t row = (size_t)r->d->row_size;
	const size_t px = row / r->d->width;
	const size_t tw = (size_t)t->tile_cols * px, at = x * tw;
	const size_t n = PARLOAD__MIN(tw, row - at);
	const size_t lines = (size_t)parload__strips_depth(t) * t->rows;

	for (size_t y = 0; y < lines; y++)
		memcpy(out + y * row + at, r->tile + y * tw, n);
}

/* Tiles x0 to x1 of strip i's chunks that slab k lacks, into its rows,
 * each counted in r->decoded (decode_entry). */
static int decode_tiles(parload__strip_reader *r, uint64_t i,
			struct parload__slab *k, uint32_t x0, uint32_t x1,
			parload__io_stats *st)
{
	const parload__strips *t = r->t;
	const uint32_t tiles = parload__strips_tiles(t);
	int rc = 0;

	for (uint32_t x = x0; rc == 0 && x <= x1; x++) {
		if (k->tile_ok[x])
			continue;
		rc = decode_entry(r, i * tiles + x, r->tile,
				  tile_bytes(t, r->d), st);
		if (rc == 0) {
			place_tile(r, k->out, x);
			k->tile_ok[x] = 1;
		}
	}
	return rc;
}

/* The tiles that hold the columns the load takes (r->cols), of the
 * bytes [at, at + len) of a strip's rows where those lie in one row. */
static void tiles_of(const parload__strip_reader *r, uint64_t at, size_t len,
		     uint32_t *x0, uint32_t *x1)
{
	const parload__strips *t = r->t;
	const uint64_t row = r->d->row_size, px = row / r->d->width;
	const uint64_t c0 = at % row;
	uint64_t lo = r->cols[0], hi = r->cols[1] ? r->cols[1] : r->d->width;

	if (len && c0 + len <= row) {
		lo = PARLOAD__MAX(lo, c0 / px);
		hi = PARLOAD__MIN(hi, (c0 + len + px - 1) / px);
	}
	*x0 = (uint32_t)(lo / t->tile_cols);
	*x1 = (uint32_t)((PARLOAD__MAX(hi, lo + 1) - 1) / t->tile_cols);
}

/* Slab k holding (the bytes [at, at + len) of) strip i's chunk. */
static int fill_slab(parload__strip_reader *r, struct parload__slab *k,
		     uint64_t i, uint64_t at, size_t len, parload__io_stats *st,
		     parload_error *err)
{
	const parload__strips *t = r->t;
	uint32_t x0, x1;
	int rc;

	if (t->decoder) {
		rc = t->decoder->decode(r->custom, t, i, k->out,
					parload__strip_size(t, r->d), err);
		r->decoded += rc == 0;
		return rc;
	}
	if (!t->tile_cols)
		return decode_entry(r, i, k->out, chunk_bytes(t, r->d), st);
	tiles_of(r, at, len, &x0, &x1);
	return decode_tiles(r, i, k, x0, x1, st);
}

/* Slab k's memory, and its tiles' marks. */
static int slab_memory(parload__strip_reader *r, struct parload__slab *k,
		       parload_error *err)
{
	const parload__strips *t = r->t;

	if (!k->out && !(k->out = parload__sys_malloc(chunk_bytes(t, r->d))))
		return parload__fail_nomem(err, t->path);
	if (t->tile_cols && !k->tile_ok &&
	    !(k->tile_ok = parload__sys_calloc(parload__strips_tiles(t), 1)))
		return parload__fail_nomem(err, t->path);
	return 0;
}

const unsigned char *parload__strip_get(parload__strip_reader *r, uint64_t i,
					uint64_t at, size_t len,
					parload__io_stats *st,
					parload_error *err)
{
	const parload__strips *t = r->t;
	const parload__strip s = parload__strip_of(
		t, i * parload__strips_tiles(t), &r->run);
	const size_t frame = s.page % parload__strips_depth(t);
	const size_t size = parload__strip_size(t, r->d);
	struct parload__slab *k = &r->slab[i % t->per_view % r->slabs];

	r->err = err;
	if (slab_memory(r, k, err))
		return NULL;
	if (!(k->have && (t->decoder ? k->strip == i :
			   k->off == s.off && k->file == s.file))) {
		k->have = false;
		if (k->tile_ok)
			memset(k->tile_ok, 0, parload__strips_tiles(t));
		k->strip = i;
		k->off = s.off;
		k->file = s.file;
	} else if (!t->tile_cols) {
		return k->out + frame * size + at;
	}
	if (fill_slab(r, k, i, at, len, st, err))
		return NULL;
	k->have = true;
	return k->out + frame * size + at;
}

int parload__strip_decode_into(parload__strip_reader *r, uint64_t i,
			       unsigned char *dst, size_t size,
			       parload__io_stats *st, parload_error *err)
{
	const parload__strips *t = r->t;

	if (t->decoder || t->tile_cols || parload__strips_depth(t) > 1 ||
	    size != parload__strip_size(t, r->d))
		return 1;
	r->err = err;
	return decode_entry(r, i, dst, size, st);
}
