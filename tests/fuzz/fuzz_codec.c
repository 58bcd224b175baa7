/*
 * fuzz_codec.c - every codec row's decode over mutated chunks, and its
 * encode where it has one (libFuzzer, ASan, UBSan).
 *
 * Input: byte 0 picks the row and its client data or params (picks[]
 * below: every row of the table with a decode, each framing and
 * parameter that changes how it reads), byte 1 the element size
 * (1 + b % 16) and bitshuffle's block (b / 16 * 8 elements), bytes 2-3
 * the room given (little-endian, bytes), the rest is the chunk.  Chunk
 * and room are each a buffer of exactly their size, so that a read or
 * write past either stops the run.  Invariants: a decode that succeeds
 * made at most its room; a row with an encode encodes the chunk's bytes
 * into exactly its bound, and they decode back to them; bitshuffle's
 * plain, SSE2 and AVX2 transposes agree on the chunk's bytes taken as one
 * block.
 *
 * Seeds: `fuzz_codec -write_seeds=DIR` writes a valid chunk of each pick
 * this build has (encoded here with liblz4, libzstd, libblosc, liblzf and
 * libdeflate's encoders, or the row's own encode), each decoding to what
 * was encoded.
 */
#include "config.h"

#include <stdint.h>

#include "fuzz.h"
#include "internal.h"
#include "codec/rows.h"

#ifdef HAVE_LZ4
#include <lz4.h>
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef HAVE_BLOSC
#include <blosc.h>
#endif
#ifdef HAVE_LZF
#include <lzf.h>
#endif

/* The rows, with the client data HDF5 would give them (cd[2] of
 * bitshuffle and Blosc, the element size, set from byte 1), or (id 0) a
 * row and its params as a Zarr store's metadata gives them. */
static const struct pick {
	uint32_t id;
	unsigned cd[7];
	size_t ncd;
	parload__codec codec; /* id 0 */
} picks[] = {
	{ 2, { 0 }, 1 },                       /* shuffle */
	{ 3, { 0 }, 0 },                       /* fletcher32 */
	{ 32000, { 4, 261, 0 }, 3 },           /* lzf */
	{ 32001, { 2, 2, 0, 0, 5, 1, 1 }, 7 }, /* blosc */
	{ 32004, { 0 }, 0 },                   /* lz4 */
	{ 32008, { 0, 4, 0, 0, 0 }, 5 },       /* bitshuffle */
	{ 32008, { 0, 4, 0, 0, 2 }, 5 },       /* bitshuffle + lz4 */
	{ 32008, { 0, 4, 0, 0, 3, 3 }, 6 },    /* bitshuffle + zstd */
	{ 32015, { 3 }, 1 },                   /* zstd */
	{ 1, { 6 }, 1 },                       /* deflate */
	{ 307, { 9 }, 1 },                     /* bzip2 */
	{ 0, { 6 }, 1, PARLOAD__CODEC_GZIP },
	{ 0, { PARLOAD__LZ4_NUMCODECS, 1 }, 2, PARLOAD__CODEC_LZ4 },
	{ 0, { 0 }, 0, PARLOAD__CODEC_CRC32C },
	{ 0, { 1, 5, 2 }, 3, PARLOAD__CODEC_BLOSC }, /* lz4, bit shuffle */
	{ 0, { 1 }, 1, PARLOAD__CODEC_ZSTD },
};
#define NPICKS (sizeof(picks) / sizeof(picks[0]))

/* Row and filter of pick p for element size elem and block, or NULL
 * where this build lacks it. */
static const parload__codec_row *row_of(unsigned p, uint32_t elem,
					uint32_t block, parload__filter *f)
{
	const parload__codec c = picks[p].id ?
		parload__codec_of_hdf5(picks[p].id) : picks[p].codec;
	const parload__codec_row *row = parload__codec_get(c);
	unsigned cd[7];

	if (c >= PARLOAD__CODEC_COUNT || !row->decode)
		return NULL;
	if (!picks[p].id) {
		memset(f, 0, sizeof(*f));
		f->codec = c;
		f->elem = elem;
		for (size_t i = 0; i < picks[p].ncd; i++)
			f->param[i] = picks[p].cd[i];
		return row;
	}
	memcpy(cd, picks[p].cd, sizeof(cd));
	if (picks[p].id == 2)
		cd[0] = elem;
	if (picks[p].id == 32008 || picks[p].id == 32001) {
		cd[2] = elem;
		cd[3] = picks[p].id == 32008 ? block : cd[3];
	}
	memset(f, 0, sizeof(*f));
	f->codec = c;
	return row->hdf5_params(cd, picks[p].ncd, elem, f) ? NULL : row;
}

static void transposes_agree(const uint8_t *d, size_t len, size_t elem)
{
	const size_t n = len / elem & ~(size_t)7;
	unsigned char *a, *b;

	if (n == 0)
		return;
	a = malloc(n * elem);
	b = malloc(n * elem);
	REQUIRE(a && b);
	parload__bitunshuffle_plain(d, a, n, elem);
	parload__bitunshuffle_vector(d, b, n, elem);
	REQUIRE(memcmp(a, b, n * elem) == 0);
	if (parload__bitunshuffle_avx2(d, b, n, elem))
		REQUIRE(memcmp(a, b, n * elem) == 0);
	free(a);
	free(b);
}

/* A row with an encode (and params it encodes with): n bytes of in
 * encoded into exactly its bound decode back to them. */
static void round_trip(const parload__codec_row *row, const parload__filter *f,
		       void *state, const unsigned char *in, size_t n)
{
	size_t bound, got = 0, back = 0;
	unsigned char *enc, *dec;
	const char *why;

	if (!row->encode ||
	    (f->codec == PARLOAD__CODEC_LZ4 &&
	     f->param[0] != PARLOAD__LZ4_NUMCODECS))
		return;
	bound = row->bound(f, n);
	REQUIRE(bound >= n);
	enc = malloc(bound);
	dec = malloc(n ? n : 1);
	REQUIRE(enc && dec);
	why = row->encode(state, f, in, n, enc, bound, &got);
	REQUIRE(!why && got <= bound);
	why = row->decode(state, f, enc, got, dec, n, &back);
	REQUIRE(!why && back == n && memcmp(dec, in, n) == 0);
	free(enc);
	free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const parload__codec_row *row;
	parload__filter f;
	uint32_t elem, block;
	size_t cap, got = 0;
	unsigned char *in, *out;
	void *state = NULL;
	const char *why;

	if (size < 4)
		return 0;
	elem = 1 + data[1] % 16;
	block = data[1] / 16 * 8;
	cap = (size_t)data[2] | (size_t)data[3] << 8;
	if (!(row = row_of(data[0] % NPICKS, elem, block, &f)))
		return 0;
	in = malloc(size - 4 ? size - 4 : 1);
	out = malloc(cap ? cap : 1);
	REQUIRE(in && out);
	memcpy(in, data + 4, size - 4);
	if (row->open)
		REQUIRE((state = row->open()) != NULL);
	why = row->decode(state, &f, in, size - 4, out, cap, &got);
	REQUIRE(why || got <= cap);
	round_trip(row, &f, state, in, size - 4);
	if (row->close)
		row->close(state);
	if (picks[data[0] % NPICKS].id == 32008)
		transposes_agree(in, size - 4, elem);
	free(in);
	free(out);
	return 0;
}

/* ---- seeds ---- */

static const char *seed_dir;

/* Write pick p's chunk (with its header bytes) and check it decodes to
 * raw. */
static void seed(unsigned p, uint8_t b1, const unsigned char *chunk,
		 size_t len, const unsigned char *raw, size_t rawlen)
{
	unsigned char *buf = malloc(len + 4);
	char path[4096];
	FILE *fp;

	buf[0] = (uint8_t)p;
	buf[1] = b1;
	buf[2] = (uint8_t)rawlen;
	buf[3] = (uint8_t)(rawlen >> 8);
	memcpy(buf + 4, chunk, len);
	snprintf(path, sizeof(path), "%s/pick%u-%u", seed_dir, p, b1);
	REQUIRE((fp = fopen(path, "wb")) != NULL);
	REQUIRE(fwrite(buf, 1, len + 4, fp) == len + 4 && fclose(fp) == 0);
	{
		parload__filter f;
		const parload__codec_row *row =
			row_of(p, 1 + b1 % 16, b1 / 16 * 8, &f);
		unsigned char *out = malloc(rawlen);
		void *state = row && row->open ? row->open() : NULL;
		size_t got = 0;

		REQUIRE(row);
		REQUIRE(!row->decode(state, &f, chunk, len, out, rawlen, &got));
		REQUIRE(got == rawlen && memcmp(out, raw, rawlen) == 0);
		if (row->close)
			row->close(state);
		free(out);
	}
	free(buf);
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

/* Bitshuffle's transpose of one block, bit by bit. */
static void bitshuffle_block(const unsigned char *in, unsigned char *out,
			     size_t n, size_t elem)
{
	memset(out, 0, n * elem);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < elem; j++)
			for (unsigned k = 0; k < 8; k++)
				if (in[i * elem + j] >> k & 1)
					out[(j * 8 + k) * (n / 8) + i / 8] |=
						(unsigned char)(1u << (i % 8));
}

static void seed_plain(const unsigned char *raw, size_t len)
{
	unsigned char c[2048];
	uint32_t sum;

	/* shuffle of 2-byte elements; fletcher32; bitshuffle, 2 bytes, one
	 * block of 64 (b1 = 4 * 16 + 1: block 32 elements). */
	for (size_t e = 0; e < len / 2; e++) {
		c[e] = raw[2 * e];
		c[len / 2 + e] = raw[2 * e + 1];
	}
	seed(0, 1, c, len, raw, len);
	sum = parload__fletcher32(raw, len);
	memcpy(c, raw, len);
	for (int i = 0; i < 4; i++)
		c[len + i] = (unsigned char)(sum >> (8 * i));
	seed(1, 1, c, len + 4, raw, len);
	for (size_t b = 0; b < len / 64; b++)
		bitshuffle_block(raw + 64 * b, c + 64 * b, 32, 2);
	seed(5, 4 * 16 + 1, c, len, raw, len);
}

static void seed_libs(const unsigned char *raw, size_t len)
{
	unsigned char c[4096];
	int n = 0;

	(void)n;
	(void)c;
#ifdef HAVE_LZ4
	put_be(c, len, 8);
	put_be(c + 8, 256, 4);
	n = 12;
	for (size_t at = 0; at < len; at += 256) {
		int k = LZ4_compress_default((const char *)raw + at,
					     (char *)c + n + 4, 256, 512);
		put_be(c + n, (uint64_t)k, 4);
		n += 4 + k;
	}
	seed(4, 1, c, (size_t)n, raw, len);
	/* bitshuffle + LZ4, 2-byte elements, blocks of 32 (b1 = 65), the
	 * last 7 elements as they are. */
	{
		unsigned char t[64];
		const size_t elems = len / 2 - 7;

		put_be(c, elems * 2, 8);
		put_be(c + 8, 64, 4);
		n = 12;
		size_t e = 0, b;

		while ((b = ((elems - e) & ~(size_t)7) < 32 ?
				    (elems - e) & ~(size_t)7 : 32) > 0) {
			int k;

			bitshuffle_block(raw + 2 * e, t, b, 2);
			k = LZ4_compress_default((const char *)t,
						 (char *)c + n + 4,
						 (int)(2 * b), 128);
			put_be(c + n, (uint64_t)k, 4);
			n += 4 + k;
			e += b;
		}
		memcpy(c + n, raw + 2 * e, (elems - e) * 2);
		n += (int)((elems - e) * 2);
		seed(6, 65, c, (size_t)n, raw, elems * 2);
	}
#endif
#ifdef HAVE_ZSTD
	seed(8, 1, c, ZSTD_compress(c, sizeof(c), raw, len, 3), raw, len);
#endif
#ifdef HAVE_BLOSC
	n = blosc_compress_ctx(5, 1, 2, len, raw, c, sizeof(c), "lz4", 0, 1);
	seed(3, 1, c, (size_t)n, raw, len);
#endif
#ifdef HAVE_LZF
	seed(2, 1, c, lzf_compress(raw, (unsigned)len, c, sizeof(c)), raw,
	     len);
#endif
}

/* The picks with an encode of their own, from raw. */
static void seed_encoded(const unsigned char *raw, size_t len)
{
	for (unsigned p = 0; p < NPICKS; p++) {
		parload__filter f;
		const parload__codec_row *row = row_of(p, 2, 0, &f);
		void *state;
		unsigned char *c;
		size_t got = 0;

		const char *why;

		if (!row || !row->encode)
			continue;
		state = row->open ? row->open() : NULL;
		c = malloc(row->bound(&f, len));
		REQUIRE(c != NULL);
		/* (The LZ4 filter's framing is not encoded.) */
		why = row->encode(state, &f, raw, len, c, row->bound(&f, len),
				  &got);
		if (row->close)
			row->close(state);
		if (!why)
			seed(p, 1, c, got, raw, len);
		free(c);
	}
}

static void write_seeds(const char *dir)
{
	unsigned char raw[1024];

	fuzz_seed_dir(dir);
	seed_dir = dir;
	srand(1);
	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (unsigned char)(i % 5 ? rand() % 3 : rand());
	seed_plain(raw, sizeof(raw));
	seed_libs(raw, sizeof(raw));
	seed_encoded(raw, sizeof(raw));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_seeds_option(*argc, *argv, write_seeds);
	return 0;
}
