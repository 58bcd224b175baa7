/*
 * codecs.c - the codecs: one row each, what a strip's stored bytes need to
 * become its rows.  A row gives its name (messages, stats), what a build
 * without it needs, a worker's state (opened once per strip reader), and
 * its decode: the stored bytes of one strip into its rows, or what is
 * wrong with them.  decode.c reads the stored bytes and calls the row;
 * CODEC_CUSTOM (a container's own decoder, which reads the strip itself)
 * has no decode here.  Adding a codec is one value of parload__codec
 * (model/model.h) and one row of the table below.
 */
#include "codec/codec.h"

#include <string.h>

#ifdef HAVE_HDF5
#include <libdeflate.h>

static void *deflate_open(void)
{
	return libdeflate_alloc_decompressor();
}

static void deflate_close(void *state)
{
	libdeflate_free_decompressor(state);
}

/* A zlib stream of exactly size bytes into out. */
static const char *inflate_into(void *state, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size, size_t *got)
{
	enum libdeflate_result res;

	res = libdeflate_zlib_decompress(state, in, stored, out, size, got);
	if (res == LIBDEFLATE_BAD_DATA)
		return "is not a valid deflate stream";
	if (res != LIBDEFLATE_SUCCESS || *got != size)
		return res == LIBDEFLATE_INSUFFICIENT_SPACE ?
			       "inflates to more bytes than its rows" :
			       "inflates to fewer bytes than its rows";
	return NULL;
}

static const char *deflate_decode(void *state, unsigned char *in,
				  size_t stored, unsigned char *out,
				  size_t size, uint32_t elem, size_t *got)
{
	(void)elem;
	return inflate_into(state, in, stored, out, size, got);
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

/* Inflated into the scratch after the stored bytes, then unshuffled. */
static const char *shuffle_deflate_decode(void *state, unsigned char *in,
					  size_t stored, unsigned char *out,
					  size_t size, uint32_t elem,
					  size_t *got)
{
	const char *why = inflate_into(state, in, stored, in + stored, size,
				       got);

	if (!why)
		unshuffle(out, in + stored, size, elem);
	return why;
}
#define DEFLATE_ROW(row_name, fn, needs_scratch)                               \
	{ .name = row_name, .open = deflate_open, .close = deflate_close,      \
	  .decode = fn, .scratch = needs_scratch }
#else
#define DEFLATE_ROW(row_name, fn, needs_scratch)                               \
	{ .name = row_name,                                                    \
	  .needs = "HDF5 and libdeflate (configure --with-hdf5)" }
#endif

static const parload__codec_row rows[] = {
	[PARLOAD__CODEC_NONE] = { .name = "none" },
	[PARLOAD__CODEC_DEFLATE] = DEFLATE_ROW("deflate", deflate_decode,
					       false),
	[PARLOAD__CODEC_SHUFFLE_DEFLATE] = DEFLATE_ROW(
		"shuffle+deflate", shuffle_deflate_decode, true),
	[PARLOAD__CODEC_CUSTOM] = { .name = "the container's decoder" },
};

const parload__codec_row *parload__codec_get(parload__codec c)
{
	return (unsigned)c < sizeof(rows) / sizeof(rows[0]) ? &rows[c] :
							    &rows[0];
}
