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

/* trans8x8 of each 64-bit half. */
static inline __m128i trans8x8_x2(__m128i x)
{
	__m128i t;

	t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)),
			  _mm_set1_epi64x(0x00AA00AA00AA00AALL));
	x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 7)));
	t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)),
			  _mm_set1_epi64x(0x0000CCCC0000CCCCLL));
	x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 14)));
	t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)),
			  _mm_set1_epi64x(0x00000000F0F0F0F0LL));
	return _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 28)));
}

/* Byte j of elements 8c .. 8c + 127 (bit rows j * 8 .., columns c ..
 * c + 15): d[i] holds it for elements 8c + 16i .. 8c + 16i + 15. */
static inline void byte_of_128(const unsigned char *in, size_t nb, size_t j,
			       size_t c, __m128i d[8])
{
	gather8(in, nb, j * 8, c, d);
	for (unsigned i = 0; i < 8; i++)
		d[i] = trans8x8_x2(d[i]);
}

static inline void put(unsigned char *o, __m128i v)
{
	_mm_storeu_si128((__m128i *)o, v);
}

/* Sixteen elements of elem bytes (1, 2, 4 or 8) from their bytes b[j]
 * (b[j]: byte j of the sixteen), in order at o. */
static inline void interleave(const __m128i *b, size_t elem, unsigned char *o)
{
	__m128i p[8], q[8];

	if (elem == 1) {
		put(o, b[0]);
		return;
	}
	for (size_t j = 0; j < elem; j += 2) {
		p[j] = _mm_unpacklo_epi8(b[j], b[j + 1]);
		p[j + 1] = _mm_unpackhi_epi8(b[j], b[j + 1]);
	}
	if (elem == 2) {
		put(o, p[0]);
		put(o + 16, p[1]);
		return;
	}
	/* p[2k], p[2k + 1]: bytes 2k, 2k + 1 of elements 0-7 and 8-15. */
	for (size_t k = 0; k < elem / 2; k += 2)
		for (size_t h = 0; h < 2; h++) {
			q[2 * k + 2 * h] = _mm_unpacklo_epi16(
				p[2 * k + h], p[2 * k + 2 + h]);
			q[2 * k + 2 * h + 1] = _mm_unpackhi_epi16(
				p[2 * k + h], p[2 * k + 2 + h]);
		}
	if (elem == 4) {
		for (unsigned r = 0; r < 4; r++)
			put(o + 16 * r, q[r]);
		return;
	}
	/* q[r] (r < 4): bytes 0-3 of elements 4r .. 4r + 3; q[4 + r]:
	 * bytes 4-7. */
	for (unsigned r = 0; r < 4; r++) {
		put(o + 32 * r, _mm_unpacklo_epi32(q[r], q[4 + r]));
		put(o + 32 * r + 16, _mm_unpackhi_epi32(q[r], q[4 + r]));
	}
}

/* Elements 8c .. 8c + 127, whole. */
static void vector_columns(const unsigned char *in, unsigned char *out,
			   size_t nb, size_t elem, size_t c)
{
	__m128i d[8][8], b[8];

	if (elem == 1 || elem == 2 || elem == 4 || elem == 8) {
		for (size_t j = 0; j < elem; j++)
			byte_of_128(in, nb, j, c, d[j]);
		for (unsigned i = 0; i < 8; i++) {
			for (size_t j = 0; j < elem; j++)
				b[j] = d[j][i];
			interleave(b, elem, out + (8 * c + 16 * i) * elem);
		}
		return;
	}
	for (size_t j = 0; j < elem; j++) {
		unsigned char bytes[16];

		byte_of_128(in, nb, j, c, d[0]);
		for (unsigned i = 0; i < 8; i++) {
			unsigned char *o = out + (8 * c + 16 * i) * elem + j;

			put(bytes, d[0][i]);
			for (unsigned m = 0; m < 16; m++)
				o[m * elem] = bytes[m];
		}
	}
}

void parload__bitunshuffle_vector(const unsigned char *in, unsigned char *out,
				  size_t n, size_t elem)
{
	const size_t nb = n / 8, whole = nb - nb % 16;

	for (size_t c = 0; c < whole; c += 16)
		vector_columns(in, out, nb, elem, c);
	plain_columns(in, out, nb, elem, whole);
}

bool parload__bitunshuffle_has_vector(void)
{
	return true;
}

/* ---- the same 32 columns at a time where the CPU has AVX2: each
 * 128-bit lane does what the SSE2 path does for 16 of them ---- */
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))

AVX2 static inline void gather8_avx2(const unsigned char *in, size_t nb,
				     size_t row, size_t c, __m256i d[8])
{
	__m256i r[8], a[8], b[8];

	for (unsigned k = 0; k < 8; k++)
		r[k] = _mm256_loadu_si256(
			(const __m256i *)(in + (row + k) * nb + c));
	for (unsigned k = 0; k < 8; k += 2) {
		a[k] = _mm256_unpacklo_epi8(r[k], r[k + 1]);
		a[k + 1] = _mm256_unpackhi_epi8(r[k], r[k + 1]);
	}
	for (unsigned i = 0; i < 4; i++) {
		const unsigned s = i >> 1;

		b[i] = i & 1 ? _mm256_unpackhi_epi16(a[s], a[s + 2]) :
			       _mm256_unpacklo_epi16(a[s], a[s + 2]);
		b[i + 4] = i & 1 ? _mm256_unpackhi_epi16(a[s + 4], a[s + 6]) :
				   _mm256_unpacklo_epi16(a[s + 4], a[s + 6]);
	}
	for (unsigned i = 0; i < 4; i++) {
		d[2 * i] = _mm256_unpacklo_epi32(b[i], b[i + 4]);
		d[2 * i + 1] = _mm256_unpackhi_epi32(b[i], b[i + 4]);
	}
}

AVX2 static inline __m256i trans8x8_x4(__m256i x)
{
	static const long long mask[3] = { 0x00AA00AA00AA00AALL,
					   0x0000CCCC0000CCCCLL,
					   0x00000000F0F0F0F0LL };

	for (int k = 0; k < 3; k++) {
		const int sh = 7 << k;
		__m256i t = _mm256_and_si256(
			_mm256_xor_si256(x, _mm256_srli_epi64(x, sh)),
			_mm256_set1_epi64x(mask[k]));

		x = _mm256_xor_si256(x, _mm256_xor_si256(
						t, _mm256_slli_epi64(t, sh)));
	}
	return x;
}

/* A lane's sixteen elements (b[j]: byte j of them) in order at o, as
 * interleave() does. */
AVX2 static inline void put2(unsigned char *o, unsigned char *o2, __m256i v)
{
	_mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(v));
	_mm_storeu_si128((__m128i *)o2, _mm256_extracti128_si256(v, 1));
}

/* Lane 0's elements go to o, lane 1's to o2. */
AVX2 static inline void interleave_avx2(const __m256i *b, size_t elem,
					unsigned char *o, unsigned char *o2)
{
	__m256i p[8], q[8];

	if (elem == 1) {
		put2(o, o2, b[0]);
		return;
	}
	for (size_t j = 0; j < elem; j += 2) {
		p[j] = _mm256_unpacklo_epi8(b[j], b[j + 1]);
		p[j + 1] = _mm256_unpackhi_epi8(b[j], b[j + 1]);
	}
	if (elem == 2) {
		put2(o, o2, p[0]);
		put2(o + 16, o2 + 16, p[1]);
		return;
	}
	for (size_t k = 0; k < elem / 2; k += 2)
		for (size_t h = 0; h < 2; h++) {
			q[2 * k + 2 * h] = _mm256_unpacklo_epi16(
				p[2 * k + h], p[2 * k + 2 + h]);
			q[2 * k + 2 * h + 1] = _mm256_unpackhi_epi16(
				p[2 * k + h], p[2 * k + 2 + h]);
		}
	if (elem == 4) {
		for (unsigned r = 0; r < 4; r++)
			put2(o + 16 * r, o2 + 16 * r, q[r]);
		return;
	}
	for (unsigned r = 0; r < 4; r++) {
		put2(o + 32 * r, o2 + 32 * r,
		     _mm256_unpacklo_epi32(q[r], q[4 + r]));
		put2(o + 32 * r + 16, o2 + 32 * r + 16,
		     _mm256_unpackhi_epi32(q[r], q[4 + r]));
	}
}

/* Elements 8c .. 8c + 255 (elem 1, 2, 4 or 8): lane 0 the first 128,
 * lane 1 the next. */
AVX2 static void avx2_columns(const unsigned char *in, unsigned char *out,
			      size_t nb, size_t elem, size_t c)
{
	__m256i d[8][8], b[8];

	for (size_t j = 0; j < elem; j++) {
		gather8_avx2(in, nb, j * 8, c, d[j]);
		for (unsigned i = 0; i < 8; i++)
			d[j][i] = trans8x8_x4(d[j][i]);
	}
	for (unsigned i = 0; i < 8; i++) {
		unsigned char *o = out + (8 * c + 16 * i) * elem;

		for (size_t j = 0; j < elem; j++)
			b[j] = d[j][i];
		interleave_avx2(b, elem, o, o + 128 * elem);
	}
}

bool parload__bitunshuffle_avx2(const unsigned char *in, unsigned char *out,
				size_t n, size_t elem)
{
	const size_t nb = n / 8, whole = nb - nb % 32;

	if (!__builtin_cpu_supports("avx2") ||
	    (elem != 1 && elem != 2 && elem != 4 && elem != 8))
		return false;
	for (size_t c = 0; c < whole; c += 32)
		avx2_columns(in, out, nb, elem, c);
	/* The rest 16 columns at a time, then plain. */
	for (size_t c = whole; c + 16 <= nb; c += 16)
		vector_columns(in, out, nb, elem, c);
	plain_columns(in, out, nb, elem, nb - nb % 16);
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

bool parload__bitunshuffle_avx2(const unsigned char *in, unsigned char *out,
				size_t n, size_t elem)
{
	(void)in, (void)out, (void)n, (void)elem;
	return false;
}
#endif

/* Which path runs: 0 not chosen yet, 1 plain, 2 SSE2, 3 AVX2 where the
 * element size has it (else SSE2); chosen once, by the first call. */
static int chosen;

static int choose(void)
{
	int c = __atomic_load_n(&chosen, __ATOMIC_RELAXED);

	if (c == 0) {
		unsigned char probe[8] = { 0 }, out[8];

		c = !parload__bitunshuffle_has_vector() ? 1 :
		    parload__bitunshuffle_avx2(probe, out, 8, 1) ? 3 : 2;
		__atomic_store_n(&chosen, c, __ATOMIC_RELAXED);
	}
	return c;
}

void parload__bitunshuffle(const unsigned char *in, unsigned char *out,
			   size_t n, size_t elem)
{
	switch (choose()) {
	case 3:
		if (parload__bitunshuffle_avx2(in, out, n, elem))
			return;
		/* fall through */
	case 2:
		parload__bitunshuffle_vector(in, out, n, elem);
		return;
	default:
		parload__bitunshuffle_plain(in, out, n, elem);
	}
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
