/*
 * codecs.c - the codecs: one row each, what a strip's stored bytes need to
 * become its rows.  A row gives its name (messages, stats), its HDF5
 * filter id and how it reads that filter's client data, what a build
 * without it needs, a worker's state (opened once per strip reader), and
 * its decode: one stage of a strip's pipeline, the bytes that stage was
 * given when written out of the bytes it made, or what is wrong with
 * them.  decode.c reads the stored bytes and runs the stages; CUSTOM (a
 * container's own decoder, which reads the strip itself) has no decode
 * here.  The codecs a writer makes have an encode too.  The rows of
 * HDF5's filter plugins, of deflate and gzip and of Fletcher32 live in
 * files of their own (rows.h names them).  Adding a codec is one value of
 * parload__codec (model/model.h) and one row of the table below.
 */
#include "codec/rows.h"

#include <stdio.h>
#include <string.h>

/* HDF5's client data of the deflate filter: its level, which decoding
 * does not need. */
static const char *no_params(const unsigned *cd, size_t n, uint32_t elem,
			     parload__filter *f)
{
	(void)cd, (void)n;
	f->elem = elem;
	return NULL;
}

/* HDF5's shuffle undone: byte b of element e is at in[b * n + e]; bytes
 * past the last whole element are stored as they are. */
static const char *shuffle_decode(void *state, const parload__filter *f,
				  const unsigned char *in, size_t stored,
				  unsigned char *out, size_t cap, size_t *got)
{
	const uint32_t elem = f->elem ? f->elem : 1;
	const size_t n = stored / elem;

	(void)state;
	if (stored > cap)
		return "unshuffles to more bytes than its chunk";
	for (uint32_t b = 0; b < elem; b++)
		for (size_t e = 0; e < n; e++)
			out[e * elem + b] = in[(size_t)b * n + e];
	memcpy(out + n * elem, in + n * elem, stored - n * elem);
	*got = stored;
	return NULL;
}

/* Bytes as they are. */
static const char *none_encode(void *state, const parload__filter *f,
			       const unsigned char *in, size_t n,
			       unsigned char *out, size_t cap, size_t *got)
{
	(void)state, (void)f;
	if (n > cap)
		return PARLOAD__NO_ROOM;
	memcpy(out, in, n);
	*got = n;
	return NULL;
}

static size_t none_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return n;
}

static const parload__codec_row rows[PARLOAD__CODEC_COUNT] = {
	[PARLOAD__CODEC_NONE] = { .name = "none", .encode = none_encode,
				  .bound = none_bound },
	[PARLOAD__CODEC_DEFLATE] = { .name = "deflate", .hdf5_id = 1,
				     .hdf5_params = no_params,
				     PARLOAD__DEFLATE_CODE(deflate) },
	[PARLOAD__CODEC_SHUFFLE] = { .name = "shuffle", .hdf5_id = 2,
				     .hdf5_params = no_params,
				     .decode = shuffle_decode },
	[PARLOAD__CODEC_FLETCHER32] = PARLOAD__FLETCHER32_ROW,
	[PARLOAD__CODEC_LZF] = PARLOAD__LZF_ROW,
	[PARLOAD__CODEC_BLOSC] = PARLOAD__BLOSC_ROW,
	[PARLOAD__CODEC_LZ4] = PARLOAD__LZ4_ROW,
	[PARLOAD__CODEC_BITSHUFFLE] = PARLOAD__BITSHUFFLE_ROW,
	[PARLOAD__CODEC_ZSTD] = PARLOAD__ZSTD_ROW,
	[PARLOAD__CODEC_GZIP] = { .name = "gzip", PARLOAD__DEFLATE_CODE(gzip) },
	[PARLOAD__CODEC_CRC32C] = PARLOAD__CRC32C_ROW,
	[PARLOAD__CODEC_BZIP2] = PARLOAD__BZIP2_ROW,
	[PARLOAD__CODEC_CUSTOM] = { .name = "the container's decoder" },
};

const parload__codec_row *parload__codec_get(parload__codec c)
{
	return (unsigned)c < PARLOAD__CODEC_COUNT ? &rows[c] : &rows[0];
}

parload__codec parload__codec_of_hdf5(uint32_t id)
{
	for (int c = 0; c < PARLOAD__CODEC_COUNT; c++)
		if (id && rows[c].hdf5_id == id)
			return (parload__codec)c;
	return PARLOAD__CODEC_COUNT;
}

parload__codec parload__codec_named(const char *name)
{
	for (int c = 0; c < PARLOAD__CODEC_COUNT; c++)
		if (name && rows[c].name && strcmp(rows[c].name, name) == 0)
			return (parload__codec)c;
	return PARLOAD__CODEC_COUNT;
}

const char *parload__codec_names(const parload__strips *t, char *buf,
				 size_t size)
{
	size_t at = 0;

	snprintf(buf, size, "%s", !t || parload__strips_plain(t) ? "" :
				  t->decoder	      ? t->decoder->name :
							"none");
	for (uint32_t k = 0; t && !t->decoder && k < t->nfilters && at < size;
	     k++) {
		const int n = snprintf(buf + at, size - at, "%s%s",
				       k ? "+" : "",
				       parload__codec_get(t->filter[k].codec)
					       ->name);

		at += n > 0 ? (size_t)n : 0;
	}
	return buf;
}
