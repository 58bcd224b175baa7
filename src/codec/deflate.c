/*
 * deflate.c - deflate streams with libdeflate: the zlib stream of HDF5's
 * deflate filter (1), TIFF's (8) and numcodecs' Zlib, and the gzip member
 * (RFC 1952) of numcodecs' GZip and Zarr v3's gzip, whose CRC-32 and
 * decoded size (ISIZE) libdeflate checks.  A chunk is one stream or one
 * member: bytes after a gzip member (a second member too) are refused.
 * A worker's state is its decompressor and, once it encodes, a compressor
 * of the level it last used (param[0], libdeflate's 0-12: zlib's 1-9,
 * 0 stored, 10-12 slower).
 */
#include "codec/rows.h"

#ifdef HAVE_HDF5
#include <libdeflate.h>

typedef struct deflate_state {
	struct libdeflate_decompressor *d;
	struct libdeflate_compressor *c;
	uint32_t level; /* c's */
} deflate_state;

void *parload__deflate_open(void)
{
	deflate_state *s = parload__sys_calloc(1, sizeof(*s));

	if (s && !(s->d = libdeflate_alloc_decompressor())) {
		parload__sys_free(s);
		return NULL;
	}
	return s;
}

void parload__deflate_close(void *state)
{
	deflate_state *s = state;

	if (!s)
		return;
	libdeflate_free_decompressor(s->d);
	libdeflate_free_compressor(s->c);
	parload__sys_free(s);
}

static const char *inflated(enum libdeflate_result res)
{
	if (res == LIBDEFLATE_BAD_DATA)
		return "is not a valid deflate stream";
	if (res == LIBDEFLATE_INSUFFICIENT_SPACE)
		return "inflates to more bytes than its chunk";
	return res == LIBDEFLATE_SUCCESS ? NULL : "cannot be inflated";
}

/* A zlib stream into out, cap bytes at most. */
const char *parload__deflate_decode(PARLOAD__DECODE_SIG)
{
	const deflate_state *s = state;

	(void)f;
	return inflated(libdeflate_zlib_decompress(s->d, in, stored, out,
						   cap, got));
}

/* One gzip member, and nothing after it. */
const char *parload__gzip_decode(PARLOAD__DECODE_SIG)
{
	const deflate_state *s = state;
	size_t used = 0;
	const char *why;

	(void)f;
	if (stored < 18)
		return "is shorter than a gzip member";
	why = inflated(libdeflate_gzip_decompress_ex(s->d, in, stored, out,
						     cap, &used, got));
	if (why)
		return why == inflated(LIBDEFLATE_BAD_DATA) ?
			       "is not a valid gzip member (or fails its "
			       "CRC-32 or size)" :
			       why;
	return used == stored ? NULL : "has bytes after its gzip member";
}

/* s's compressor at f's level, or why not. */
static const char *compressor(deflate_state *s, const parload__filter *f)
{
	if (f->param[0] > 12)
		return "has a deflate level libdeflate lacks (0-12)";
	if (s->c && s->level == f->param[0])
		return NULL;
	libdeflate_free_compressor(s->c);
	s->c = libdeflate_alloc_compressor((int)f->param[0]);
	s->level = f->param[0];
	return s->c ? NULL : PARLOAD__NO_MEMORY;
}

/* in compressed by compress (libdeflate's zlib or gzip) at f's level. */
static const char *compressed(deflate_state *s, const parload__filter *f,
			      size_t (*compress)(struct libdeflate_compressor *,
						 const void *, size_t, void *,
						 size_t),
			      const unsigned char *in, size_t n,
			      unsigned char *out, size_t cap, size_t *got)
{
	const char *why = compressor(s, f);

	if (why)
		return why;
	*got = compress(s->c, in, n, out, cap);
	return *got ? NULL : PARLOAD__NO_ROOM;
}

const char *parload__deflate_encode(PARLOAD__ENCODE_SIG)
{
	return compressed(state, f, libdeflate_zlib_compress, in, n, out, cap,
			  got);
}

const char *parload__gzip_encode(PARLOAD__ENCODE_SIG)
{
	return compressed(state, f, libdeflate_gzip_compress, in, n, out, cap,
			  got);
}

size_t parload__deflate_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return libdeflate_zlib_compress_bound(NULL, n);
}

size_t parload__gzip_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return libdeflate_gzip_compress_bound(NULL, n);
}
#endif
