/*
 * convert.c - rows stored otherwise than the dataset holds them: pixels of
 * the other byte order, and 12- and 10-bit integers packed into a bit
 * stream.  A worker converts each row right after reading it into its
 * bounce buffer, while the row is in the core's cache, writing only the
 * selected columns to their place in the dataset (plan.c, scatter.c).
 * Whole rows of the other byte order and nothing else to do are read
 * into their place and swapped there (parload__swap_in_place).
 *
 * The packed layouts (parload.h, parload_encoding) are bit streams of the
 * whole view; a row is whole bytes (desc.c refuses other widths), so every
 * row starts a group: 2 pixels in 3 bytes, or 4 in 5.
 */
#include "model/model.h"

#include <string.h>

/* ---- the other byte order ----
 *
 * Thirty-two bytes at a time where AVX2 is there, else sixteen in a
 * vector register (GCC's and Clang's vector extensions: SSE2 on x86-64,
 * NEON on ARM), then what is left one pixel at a time.  GCC at -O2 does
 * not vectorize the plain loop, which runs at a third of the speed.
 * memcpy() is a plain load or store: rows in the bounce buffer may start
 * at any byte. */

typedef uint16_t v8u16 __attribute__((vector_size(16)));
typedef uint32_t v4u32 __attribute__((vector_size(16)));

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void store64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A u16 pixel at p, which a caller's buffer may leave at any address. */
static inline void store16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/* x86-64 with AVX2: 32 bytes a shuffle that reverses each pixel's bytes
 * (within each 16-byte half), 2 to 2.7 times the speed of the 16-byte
 * loop below on data in cache (u16 in place, 256 KiB to 4 MiB: 90-117
 * against 40-44 GB/s on an AMD EPYC).  Chosen at run time (cpuid), so
 * the build stays for any x86-64.  Returns the pixels it swapped: all of
 * the n of bpp bytes but fewer than 32 bytes' worth. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx2"))) static size_t
swap_avx2(unsigned char *o, const unsigned char *src, size_t n, unsigned bpp)
{
	static const signed char rev[3][16] = {
		{ 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14 },
		{ 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12 },
		{ 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8 },
	};
	const __m256i k = _mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)rev[bpp / 4]));
	const size_t bytes = n * bpp;
	size_t i = 0;

	for (; i + 32 <= bytes; i += 32) {
		const __m256i v = _mm256_loadu_si256((const __m256i *)(src + i));

		_mm256_storeu_si256((__m256i *)(o + i),
				    _mm256_shuffle_epi8(v, k));
	}
	return i / bpp;
}

static size_t swap_simd(unsigned char *o, const unsigned char *src, size_t n,
			unsigned bpp)
{
	return __builtin_cpu_supports("avx2") ? swap_avx2(o, src, n, bpp) : 0;
}
#else
static size_t swap_simd(unsigned char *o, const unsigned char *src, size_t n,
			unsigned bpp)
{
	(void)o, (void)src, (void)n, (void)bpp;
	return 0;
}
#endif

/* The swap kernels read each pixel's bytes (16 or 32 at a time) before
 * they write its result, and write no byte they have not read: they run
 * in place (o == src) as well as between separate buffers. */
static void swap16_run(unsigned char *o, const unsigned char *src, size_t n)
{
	size_t i = swap_simd(o, src, n, 2);

	for (; i + 8 <= n; i += 8) {
		v8u16 v;

		memcpy(&v, src + i * 2, 16);
		v = v << 8 | v >> 8;
		memcpy(o + i * 2, &v, 16);
	}
	for (; i < n; i++) {
		uint16_t v;

		memcpy(&v, src + i * 2, 2);
		v = __builtin_bswap16(v);
		memcpy(o + i * 2, &v, 2);
	}
}

static inline v4u32 bswap_v4u32(v4u32 v)
{
	const v4u32 mid = { 0xFF00, 0xFF00, 0xFF00, 0xFF00 };

	return v << 24 | (v & mid) << 8 | ((v >> 8) & mid) | v >> 24;
}

static void swap32_run(unsigned char *o, const unsigned char *src, size_t n)
{
	size_t i = swap_simd(o, src, n, 4);

	for (; i + 4 <= n; i += 4) {
		v4u32 v;

		memcpy(&v, src + i * 4, 16);
		v = bswap_v4u32(v);
		memcpy(o + i * 4, &v, 16);
	}
	for (; i < n; i++) {
		uint32_t v;

		memcpy(&v, src + i * 4, 4);
		v = __builtin_bswap32(v);
		memcpy(o + i * 4, &v, 4);
	}
}

/* Eight bytes reversed: one instruction a pixel. */
static void swap64_run(unsigned char *o, const unsigned char *src, size_t n)
{
	for (size_t i = swap_simd(o, src, n, 8); i < n; i++)
		store64(o + i * 8, __builtin_bswap64(load64(src + i * 8)));
}

/* As converters: pixels [col, col + n) of the stored row src. */
static void swap16(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	swap16_run(dst, src + (size_t)col * 2, n);
}

static void swap32(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	swap32_run(dst, src + (size_t)col * 4, n);
}

static void swap64(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	swap64_run(dst, src + (size_t)col * 8, n);
}

void parload__swap_in_place(void *buf, size_t bytes, unsigned bpp)
{
	switch (bpp) {
	case 2: swap16_run(buf, buf, bytes / 2); break;
	case 4: swap32_run(buf, buf, bytes / 4); break;
	case 8: swap64_run(buf, buf, bytes / 8); break;
	default: break; /* one byte has no order */
	}
}

/* ---- 12 bits: two pixels in three bytes b[0..2] ---- */

static inline uint16_t mono12p_even(const unsigned char *b)
{
	return (uint16_t)(b[0] | (b[1] & 0x0F) << 8);
}

static inline uint16_t mono12p_odd(const unsigned char *b)
{
	return (uint16_t)(b[1] >> 4 | b[2] << 4);
}

static inline uint16_t mono12packed_even(const unsigned char *b)
{
	return (uint16_t)(b[0] << 4 | (b[1] & 0x0F));
}

static inline uint16_t mono12packed_odd(const unsigned char *b)
{
	return (uint16_t)(b[2] << 4 | b[1] >> 4);
}

static inline uint16_t u12msb_even(const unsigned char *b)
{
	return (uint16_t)(b[0] << 4 | b[1] >> 4);
}

static inline uint16_t u12msb_odd(const unsigned char *b)
{
	return (uint16_t)((b[1] & 0x0F) << 8 | b[2]);
}

/* Four 12-bit pixels from the 64-bit little-endian load x at an even
 * pixel's group, spread into four 16-bit lanes. */
static inline uint64_t mono12p_four(uint64_t x)
{
	return (x & 0xFFFull) | (x & 0xFFF000ull) << 4 |
	       (x & 0xFFF000000ull) << 8 | (x & 0xFFF000000000ull) << 12;
}

static inline uint64_t mono12packed_four(uint64_t x)
{
	return ((x & 0xFF) << 4 | ((x >> 8) & 0xF)) |
	       (((x >> 16) & 0xFF) << 4 | ((x >> 12) & 0xF)) << 16 |
	       (((x >> 24) & 0xFF) << 4 | ((x >> 32) & 0xF)) << 32 |
	       (((x >> 40) & 0xFF) << 4 | ((x >> 36) & 0xF)) << 48;
}

static inline uint64_t u12msb_four(uint64_t x)
{
	const uint64_t v = __builtin_bswap64(x); /* b0 in the top byte */

	return (v >> 52) | ((v >> 40) & 0xFFF) << 16 |
	       ((v >> 28) & 0xFFF) << 32 | ((v >> 16) & 0xFFF) << 48;
}

/* ---- x86-64 with SSSE3: eight pixels per 16-byte shuffle ----
 *
 * A pshufb puts the two bytes each pixel straddles into its 16-bit lane;
 * a shift and two masks (or, for 10 bits, a multiply that shifts each lane
 * by its own amount) then leave the pixel.  Chosen at run time (cpuid), so
 * the build stays for any x86-64. */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PARLOAD__SSSE3 1

/* The bytes of each lane, and the masks of result = (lane >> 4 & hi) |
 * (lane & lo), for the three 12-bit layouts; lanes alternate even, odd. */
typedef struct unpack12_k {
	signed char shuf[16];
	uint16_t hi[2], lo[2];
} unpack12_k;

static const unpack12_k k_mono12p = {
	{ 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11 },
	{ 0, 0xFFFF }, { 0x0FFF, 0 }
};
static const unpack12_k k_mono12packed = {
	{ 1, 0, 1, 2, 4, 3, 4, 5, 7, 6, 7, 8, 10, 9, 10, 11 },
	{ 0x0FF0, 0xFFFF }, { 0x000F, 0 }
};
static const unpack12_k k_u12msb = {
	{ 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10 },
	{ 0xFFFF, 0 }, { 0, 0x0FFF }
};

static inline __m128i pair_mask(const uint16_t m[2])
{
	return _mm_set_epi16((short)m[1], (short)m[0], (short)m[1],
			     (short)m[0], (short)m[1], (short)m[0],
			     (short)m[1], (short)m[0]);
}

/* Pixels from the even pixel c on, eight at a time while a 16-byte load
 * stays within the selected pixels' bytes; returns where it stopped. */
__attribute__((target("ssse3"))) static uint64_t
unpack12_ssse3(unsigned char *o, const unsigned char *src, uint64_t c,
	       uint64_t end, const unpack12_k *k)
{
	const __m128i shuf = _mm_loadu_si128((const __m128i *)k->shuf);
	const __m128i hi = pair_mask(k->hi), lo = pair_mask(k->lo);
	const uint64_t c0 = c;

	for (; c + 16 <= end; c += 8) {
		__m128i v = _mm_loadu_si128(
			(const __m128i *)(src + 3 * (c / 2)));

		v = _mm_shuffle_epi8(v, shuf);
		v = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 4), hi),
				 _mm_and_si128(v, lo));
		_mm_storeu_si128((__m128i *)(o + 2 * (c - c0)), v);
	}
	return c;
}

/* Mono10p: lanes of bytes (5g + j, 5g + j + 1) hold pixel j of group g
 * from bit 2 j on; multiplying by 2^(6 - 2 j) and shifting right by 6
 * keeps its ten bits. */
__attribute__((target("ssse3"))) static uint64_t
unpack10_ssse3(unsigned char *o, const unsigned char *src, uint64_t c,
	       uint64_t end)
{
	const __m128i shuf = _mm_setr_epi8(0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7,
					   7, 8, 8, 9);
	const __m128i mul = _mm_setr_epi16(64, 16, 4, 1, 64, 16, 4, 1);
	const uint64_t c0 = c;

	for (; c + 16 <= end; c += 8) {
		__m128i v = _mm_loadu_si128(
			(const __m128i *)(src + 5 * (c / 4)));

		v = _mm_shuffle_epi8(v, shuf);
		v = _mm_srli_epi16(_mm_mullo_epi16(v, mul), 6);
		_mm_storeu_si128((__m128i *)(o + 2 * (c - c0)), v);
	}
	return c;
}

/* The same sixteen pixels at a time where the CPU has AVX2: each 128-bit
 * lane takes the 12 (or 10) bytes of its eight pixels from a load of its
 * own, then the lanes shuffle as above. */
__attribute__((target("avx2"))) static uint64_t
unpack12_avx2(unsigned char *o, const unsigned char *src, uint64_t c, uint64_t end,
	      const unpack12_k *k)
{
	const __m256i shuf = _mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)k->shuf));
	const __m256i hi = _mm256_broadcastsi128_si256(pair_mask(k->hi));
	const __m256i lo = _mm256_broadcastsi128_si256(pair_mask(k->lo));
	const uint64_t c0 = c;

	/* The second load ends at byte 3 c / 2 + 28: within the row's
	 * pixels while c + 19 <= end. */
	for (; c + 24 <= end; c += 16) {
		const unsigned char *b = src + 3 * (c / 2);
		__m256i v = _mm256_inserti128_si256(
			_mm256_castsi128_si256(
				_mm_loadu_si128((const __m128i *)b)),
			_mm_loadu_si128((const __m128i *)(b + 12)), 1);

		v = _mm256_shuffle_epi8(v, shuf);
		v = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4),
						     hi),
				    _mm256_and_si256(v, lo));
		_mm256_storeu_si256((__m256i *)(o + 2 * (c - c0)), v);
	}
	return c;
}

__attribute__((target("avx2"))) static uint64_t
unpack10_avx2(unsigned char *o, const unsigned char *src, uint64_t c, uint64_t end)
{
	const __m256i shuf = _mm256_setr_epi8(0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 6,
					      7, 7, 8, 8, 9, 0, 1, 1, 2, 2, 3,
					      3, 4, 5, 6, 6, 7, 7, 8, 8, 9);
	const __m256i mul = _mm256_setr_epi16(64, 16, 4, 1, 64, 16, 4, 1, 64,
					      16, 4, 1, 64, 16, 4, 1);
	const uint64_t c0 = c;

	/* The second load ends at byte 5 c / 4 + 26. */
	for (; c + 24 <= end; c += 16) {
		const unsigned char *b = src + 5 * (c / 4);
		__m256i v = _mm256_inserti128_si256(
			_mm256_castsi128_si256(
				_mm_loadu_si128((const __m128i *)b)),
			_mm_loadu_si128((const __m128i *)(b + 10)), 1);

		v = _mm256_shuffle_epi8(v, shuf);
		v = _mm256_srli_epi16(_mm256_mullo_epi16(v, mul), 6);
		_mm256_storeu_si256((__m256i *)(o + 2 * (c - c0)), v);
	}
	return c;
}

/* cpuid, read once by libgcc's constructor: a load and a test. */
static int have_ssse3(void)
{
	return __builtin_cpu_supports("ssse3");
}

static int have_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}
#endif

/* Pixels [col, col + n) of a row of 12-bit pairs: a lone odd pixel
 * first, then four at a time from one 8-byte load (while the load stays
 * within the selected pixels' bytes), then pairs, then a lone even one. */
#ifdef PARLOAD__SSSE3
#define UNPACK12_SIMD(name)                                                    \
	do {                                                                   \
		if (have_avx2()) {                                             \
			const uint64_t at = unpack12_avx2(o, src, c, end,      \
							  &k_##name);          \
			o += 2 * (at - c);                                     \
			c = at;                                                \
		}                                                              \
		if (have_ssse3()) {                                            \
			const uint64_t at = unpack12_ssse3(o, src, c, end,     \
							   &k_##name);         \
			o += 2 * (at - c);                                     \
			c = at;                                                \
		}                                                              \
	} while (0)
#else
#define UNPACK12_SIMD(name) ((void)0)
#endif

#define UNPACK12(name)                                                         \
	static void name(void *dst, const unsigned char *src, uint32_t col,    \
			 uint32_t n)                                           \
	{                                                                      \
		unsigned char *o = dst;                                        \
		uint64_t c = col;                                              \
		const uint64_t end = (uint64_t)col + n;                        \
                                                                               \
		if ((c & 1) && c < end) {                                      \
			store16(o, name##_odd(src + 3 * (c / 2)));             \
			o += 2;                                                \
			c++;                                                   \
		}                                                              \
		UNPACK12_SIMD(name);                                           \
		for (; c + 6 <= end; c += 4, o += 8)                           \
			store64(o, name##_four(load64(src + 3 * (c / 2))));    \
		for (; c + 1 < end; c += 2, o += 4) {                          \
			const unsigned char *b = src + 3 * (c / 2);            \
                                                                               \
			store16(o, name##_even(b));                            \
			store16(o + 2, name##_odd(b));                         \
		}                                                              \
		if (c < end)                                                   \
			store16(o, name##_even(src + 3 * (c / 2)));            \
	}

UNPACK12(mono12p)
UNPACK12(mono12packed)
UNPACK12(u12msb)

/* ---- 10 bits: four pixels in five bytes, LSB first (Mono10p) ---- */

static uint16_t mono10p_at(const unsigned char *b, unsigned j)
{
	switch (j) {
	case 0: return (uint16_t)(b[0] | (b[1] & 0x03) << 8);
	case 1: return (uint16_t)(b[1] >> 2 | (b[2] & 0x0F) << 6);
	case 2: return (uint16_t)(b[2] >> 4 | (b[3] & 0x3F) << 4);
	default: return (uint16_t)(b[3] >> 6 | b[4] << 2);
	}
}

/* A group of four is a 40-bit little-endian field: pixel j its bits
 * [10 j, 10 j + 10).  An 8-byte load of a group needs the next group's
 * bytes too. */
static void mono10p(void *dst, const unsigned char *src, uint32_t col,
		    uint32_t n)
{
	unsigned char *o = dst;
	uint64_t c = col;
	const uint64_t end = (uint64_t)col + n;

	for (; (c & 3) && c < end; c++, o += 2)
		store16(o, mono10p_at(src + 5 * (c / 4), c & 3));
#ifdef PARLOAD__SSSE3
	if (have_avx2()) {
		const uint64_t at = unpack10_avx2(o, src, c, end);

		o += 2 * (at - c);
		c = at;
	}
	if (have_ssse3()) {
		const uint64_t at = unpack10_ssse3(o, src, c, end);

		o += 2 * (at - c);
		c = at;
	}
#endif
	for (; c + 8 <= end; c += 4, o += 8) {
		const uint64_t x = load64(src + 5 * (c / 4));

		store64(o,
			(x & 0x3FFull) | (x & 0xFFC00ull) << 6 |
				(x & 0x3FF00000ull) << 12 |
				(x & 0xFFC0000000ull) << 18);
	}
	for (; c < end; c++, o += 2)
		store16(o, mono10p_at(src + 5 * (c / 4), c & 3));
}

parload__convert_fn parload__convert_get(const parload_desc *d)
{
	static const parload__convert_fn packed[PARLOAD_ENC_COUNT_] = {
		[PARLOAD_ENC_MONO12P] = mono12p,
		[PARLOAD_ENC_MONO12PACKED] = mono12packed,
		[PARLOAD_ENC_U12MSB] = u12msb,
		[PARLOAD_ENC_MONO10P] = mono10p,
	};

	if (d->encoding == PARLOAD_ENC_BE) {
		switch (d->bytes_per_pixel) {
		case 2: return swap16;
		case 4: return swap32;
		case 8: return swap64;
		default: return NULL; /* one byte has no order */
		}
	}
	if (d->encoding > PARLOAD_ENC_BE && d->encoding < PARLOAD_ENC_COUNT_)
		return packed[d->encoding];
	return NULL;
}
