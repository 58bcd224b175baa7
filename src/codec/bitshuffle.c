/*
 * bitshuffle.c - HDF5 filter 32008 (bitshuffle, as DECTRIS and most new
 * detectors write it) and its bit transpose, written here: Debian has no
 * C library of bitshuffle.
 *
 * The filter's client data: [major, minor, element bytes, block size in
 * elements (0: the default), compression (0 none, 2 LZ4, 3 zstd), level].
 * Its data is n elements cut into blocks of `block` elements, then one
 * last block of what remains rounded down to 8 elements, then the last
 * n % 8 elements as they are.  Each block is bit-transposed: bit k of
 * byte j of element i is bit i % 8 of byte i / 8 of bit row j * 8 + k,
 * each bit row n_block / 8 bytes.  With compression the chunk starts with
 * the decoded bytes (8, big-endian) and the block size in bytes (4,
 * big-endian; 0: the default), and each block is its compressed size (4,
 * big-endian) and the block compressed; without it there is no header
 * and the blocks follow one another.
 */
#include "codec/rows.h"

#include <stdlib.h>
#include <string.h>

/* ---- the bit transpose ---- */

/* The 8 x 8 bit matrix in x (byte r, bit c) transposed. */
static inline uint64_t trans8x8(uint64_t x)
{
	uint64_t t;

	t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
	x ^= t ^ (t << 7);
	t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
	x ^= t ^ (t << 14);
	t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
	x ^= t ^ (t << 28);
	return x;
}

/* Columns [c0, nb) of every bit row: byte j of elements 8c .. 8c + 7. */
static void plain_columns(const unsigned char *in, unsigned char *out,
			  size_t nb, size_t elem, size_t c0)
{
	for (size_t j = 0; j < elem; j++) {
		const unsigned char *row = in + j * 8 * nb;

		for (size_t c = c0; c < nb; c++) {
			uint64_t x = 0;

			for (unsigned k = 0; k < 8; k++)
				x |= (uint64_t)row[k * nb + c] << (8 * k);
			x = trans8x8(x);
			for (unsigned m = 0; m < 8; m++)
				out[(8 * c + m) * elem + j] =
					(unsigned char)(x >> (8 * m));
		}
	}
}

void parload__bitunshuffle_plain(const unsigned char *in, unsigned char *out,
				 size_t n, size_t elem)
{
	plain_columns(in, out, n / 8, elem, 0);
}

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>

/* Bit rows row .. row + 7, columns c .. c + 15, as eight vectors: d[i]
 * holds column c + 2i's eight bytes (bit rows in order) in its low half
 * and column c + 2i + 1's in its high half. */
static inline void gather8(const unsigned char *in, size_t nb, size_t row,
			   size_t c, __m128i d[8])
{
	__m128i r[8], a[8], b[8];

	for (unsigned k = 0; k < 8; k++)
		r[k] = _mm_loadu_si128(
			(const __m128i *)(in + (row + k) * nb + c));
	for (unsigned k = 0; k < 8; k += 2) {
		a[k] = _mm_unpacklo_epi8(r[k], r[k + 1]);
		a[k + 1] = _mm_unpackhi_epi8(r[k], r[k + 1]);
	}
	for (unsigned i = 0; i < 4; i++) {
		const unsigned s = i >> 1;

		b[i] = i & 1 ? _mm_unpackhi_epi16(a[s], a[s + 2]) :
			       _mm_unpacklo_epi16(a[s], a[s + 2]);
		b[i + 4] = i & 1 ? _mm_unpackhi_epi16(a[s + 4], a[s + 6]) :
				   _mm_unpacklo_epi16(a[s + 4], a[s + 6]);
	}
	for (unsigned i = 0; i < 4; i++) {
		d[2 * i] = _mm_unpacklo_epi32(b[i], b[i + 4]);
		d[2 * i + 1] = _mm_unpackhi_epi32(b[i], b[i + 4]);
	}
}

/* Byte j of the sixteen elements of columns c, c + 1 (v: their bytes of
 * bit rows j * 8 ..), where the element is one byte: sixteen bytes. */
static inline void bytes_one(__m128i v, unsigned char *o)
{
	uint64_t lo = 0, hi = 0;

	for (int m = 7; m >= 0; m--) {
		const unsigned w = (unsigned)_mm_movemask_epi8(v);

		lo |= (uint64_t)(w & 0xff) << (8 * m);
		hi |= (uint64_t)(w >> 8) << (8 * m);
		v = _mm_add_epi8(v, v);
	}
	memcpy(o, &lo, 8);
	memcpy(o + 8, &hi, 8);
}

/* The same for a byte j of wider elements: one byte every elem. */
static inline void bytes_strided(__m128i v, unsigned char *o, size_t elem)
{
	for (int m = 7; m >= 0; m--) {
		const unsigned w = (unsigned)_mm_movemask_epi8(v);

		o[m * elem] = (unsigned char)w;
		o[(8 + m) * elem] = (unsigned char)(w >> 8);
		v = _mm_add_epi8(v, v);
	}
}

/* Bytes j, j + 1 of the eight elements of one column (v: its bytes of
 * bit rows j * 8 .. j * 8 + 15): two bytes every elem. */
static inline void bytes_pair(__m128i v, unsigned char *o, size_t elem)
{
	if (elem == 2) {
		uint64_t lo = 0, hi = 0;

		for (int m = 7; m >= 0; m--) {
			const uint64_t w = (unsigned)_mm_movemask_epi8(v);

			if (m >= 4)
				hi |= w << (16 * (m - 4));
			else
				lo |= w << (16 * m);
			v = _mm_add_epi8(v, v);
		}
		memcpy(o, &lo, 8);
		memcpy(o + 8, &hi, 8);
		return;
	}
	for (int m = 7; m >= 0; m--) {
		const uint16_t w = (uint16_t)_mm_movemask_epi8(v);

		memcpy(o + m * elem, &w, 2);
		v = _mm_add_epi8(v, v);
	}
}

/* Bytes j, j + 1 of the elements of columns c .. c + 15. */
static void vector_pair(const unsigned char *in, unsigned char *out,
			size_t nb, size_t elem, size_t j, size_t c)
{
	__m128i d[8], e[8];

	gather8(in, nb, j * 8, c, d);
	gather8(in, nb, j * 8 + 8, c, e);
	for (unsigned i = 0; i < 8; i++) {
		unsigned char *o = out + 8 * (c + 2 * i) * elem + j;

		bytes_pair(_mm_unpacklo_epi64(d[i], e[i]), o, elem);
		bytes_pair(_mm_unpackhi_epi64(d[i], e[i]), o + 8 * elem, elem);
	}
}

/* Byte j alone of the elements of columns c .. c + 15. */
static void vector_single(const unsigned char *in, unsigned char *out,
			  size_t nb, size_t elem, size_t j, size_t c)
{
	__m128i d[8];

	gather8(in, nb, j * 8, c, d);
	for (unsigned i = 0; i < 8; i++) {
		unsigned char *o = out + 8 * (c + 2 * i) * elem + j;

		if (elem == 1)
			bytes_one(d[i], o);
		else
			bytes_strided(d[i], o, elem);
	}
}

void parload__bitunshuffle_vector(const unsigned char *in, unsigned char *out,
				  size_t n, size_t elem)
{
	const size_t nb = n / 8, whole = nb - nb % 16;

	for (size_t c = 0; c < whole; c += 16) {
		size_t j = 0;

		for (; j + 1 < elem; j += 2)
			vector_pair(in, out, nb, elem, j, c);
		if (j < elem)
			vector_single(in, out, nb, elem, j, c);
	}
	plain_columns(in, out, nb, elem, whole);
}

bool parload__bitunshuffle_has_vector(void)
{
	return true;
}
#else
void parload__bitunshuffle_vector(const unsigned char *in, unsigned char *out,
				  size_t n, size_t elem)
{
	parload__bitunshuffle_plain(in, out, n, elem);
}

bool parload__bitunshuffle_has_vector(void)
{
	return false;
}
#endif

void parload__bitunshuffle(const unsigned char *in, unsigned char *out,
			   size_t n, size_t elem)
{
	/* SSE2 is every x86-64's: the choice is made when this is built. */
	if (parload__bitunshuffle_has_vector())
		parload__bitunshuffle_vector(in, out, n, elem);
	else
		parload__bitunshuffle_plain(in, out, n, elem);
}

size_t parload__bitshuffle_default_block(size_t elem)
{
	const size_t block = 8192 / elem / 8 * 8;

	return block > 128 ? block : 128;
}

/* ---- the filter ---- */

enum { BS_NONE = 0, BS_LZ4 = 2, BS_ZSTD = 3 };

const char *parload__bitshuffle_params(PARLOAD__PARAMS_SIG)
{
	(void)elem;
	if (n < 3 || cd[2] == 0)
		return "has no element size in its bitshuffle parameters";
	f->elem = cd[2];
	f->param[0] = n > 3 ? cd[3] : 0;
	f->param[1] = n > 4 ? cd[4] : BS_NONE;
	if (f->param[0] % 8)
		return "has a bitshuffle block size that is not a multiple of 8";
	switch (f->param[1]) {
	case BS_NONE:
		return NULL;
	case BS_LZ4:
#ifdef HAVE_LZ4
		return NULL;
#else
		return "is bitshuffle with LZ4, which needs a libparload "
		       "built with liblz4";
#endif
	case BS_ZSTD:
#ifdef HAVE_ZSTD
		return NULL;
#else
		return "is bitshuffle with zstd, which needs a libparload "
		       "built with libzstd";
#endif
	default:
		return "is bitshuffle with a compression parload does not know";
	}
}

/* A worker's: the block being decompressed, a zstd context. */
typedef struct bs_state {
	unsigned char *block;
	size_t cap;
	void *zstd;
} bs_state;

void *parload__bitshuffle_open(void)
{
	return parload__sys_calloc(1, sizeof(bs_state));
}

void parload__bitshuffle_close(void *state)
{
	bs_state *s = state;

	parload__sys_free(s->block);
#ifdef HAVE_ZSTD
	parload__zstd_close(s->zstd);
#endif
	parload__sys_free(s);
}

/* One block's bytes decompressed (stored of them at in) into s->block. */
static const char *inflate_block(bs_state *s, uint32_t how,
				 const unsigned char *in, size_t stored,
				 size_t size)
{
	if (size > s->cap) {
		unsigned char *p = parload__sys_malloc(size);

		if (!p)
			return PARLOAD__NO_MEMORY;
		parload__sys_free(s->block);
		s->block = p;
		s->cap = size;
	}
	if (how == BS_LZ4)
		return parload__lz4_block(in, stored, s->block, size);
	if (how != BS_ZSTD)
		return "is bitshuffle with a compression parload does not know";
#ifdef HAVE_ZSTD
	if (!s->zstd && !(s->zstd = parload__zstd_open()))
		return PARLOAD__NO_MEMORY;
#endif
	return parload__zstd_block(s->zstd, in, stored, s->block, size);
}

/* The blocks of a chunk of n elements, as the filter cuts them. */
typedef struct bs_walk {
	size_t n, elem, block; /* elements */
	size_t done;           /* elements decoded */
} bs_walk;

/* The next block's elements, 0 when only the last n % 8 remain. */
static size_t next_block(const bs_walk *w)
{
	const size_t left = (w->n - w->done) & ~(size_t)7;

	return left < w->block ? left : w->block;
}

/* Compressed blocks from in (past the header) into out. */
static const char *compressed_blocks(bs_state *s, uint32_t how, bs_walk *w,
				     const unsigned char *in, size_t stored,
				     unsigned char *out, size_t *used)
{
	size_t at = 0, b;

	while ((b = next_block(w)) > 0) {
		const size_t size = b * w->elem;
		uint32_t len;
		const char *why;

		if (stored - at < 4 || stored - at - 4 <
				(len = parload__be32(in + at)))
			return PARLOAD__TRUNCATED;
		why = inflate_block(s, how, in + at + 4, len, size);
		if (why)
			return why;
		parload__bitunshuffle(s->block, out + w->done * w->elem, b,
				      w->elem);
		at += 4 + (size_t)len;
		w->done += b;
	}
	*used = at;
	return NULL;
}

/* Blocks stored as they were transposed, one after another. */
static void plain_blocks(bs_walk *w, const unsigned char *in,
			 unsigned char *out)
{
	size_t b;

	while ((b = next_block(w)) > 0) {
		const size_t at = w->done * w->elem;

		parload__bitunshuffle(in + at, out + at, b, w->elem);
		w->done += b;
	}
}

/* The last n % 8 elements, stored as they are, and nothing after them. */
static const char *tail(const bs_walk *w, const unsigned char *in,
			size_t left, unsigned char *out)
{
	const size_t bytes = (w->n - w->done) * w->elem;

	if (left < bytes)
		return PARLOAD__TRUNCATED;
	if (left > bytes)
		return PARLOAD__TRAILING;
	memcpy(out + w->done * w->elem, in, bytes);
	return NULL;
}

/* The walk of a chunk of total bytes, block elements a block (0: the
 * default), or why there is none. */
static const char *walk_of(bs_walk *w, uint64_t total, uint64_t block,
			   size_t elem, size_t cap)
{
	if (total > cap)
		return PARLOAD__TOO_BIG;
	if (total % elem)
		return "is not a whole number of its elements";
	w->elem = elem;
	w->n = (size_t)total / elem;
	w->done = 0;
	if (block == 0)
		block = parload__bitshuffle_default_block(elem);
	if (block % 8)
		return "has a bitshuffle block size that is not a multiple "
		       "of 8";
	/* No block is larger than the chunk's elements. */
	w->block = block < w->n ? (size_t)block : w->n;
	if (w->block < 8)
		w->block = 8;
	return NULL;
}

static const char *decode_compressed(bs_state *s, const parload__filter *f,
				     const unsigned char *in, size_t stored,
				     unsigned char *out, size_t cap,
				     size_t *got)
{
	bs_walk w;
	size_t used = 0;
	const char *why;

	if (stored < 12)
		return PARLOAD__SHORT_HEADER;
	why = walk_of(&w, parload__be64(in), parload__be32(in + 8) / f->elem,
		      f->elem, cap);
	if (!why)
		why = compressed_blocks(s, f->param[1], &w, in + 12,
					stored - 12, out, &used);
	if (!why)
		why = tail(&w, in + 12 + used, stored - 12 - used, out);
	if (!why)
		*got = w.n * w.elem;
	return why;
}

const char *parload__bitshuffle_decode(PARLOAD__DECODE_SIG)
{
	bs_walk w;
	const char *why;

	if (f->elem == 0)
		return "has no element size";
	if (f->param[1] != BS_NONE)
		return decode_compressed(state, f, in, stored, out, cap, got);
	why = walk_of(&w, stored, f->param[0], f->elem, cap);
	if (why)
		return why;
	plain_blocks(&w, in, out);
	why = tail(&w, in + w.done * w.elem, stored - w.done * w.elem, out);
	if (!why)
		*got = stored;
	return why;
}
