/*
 * convert.c - rows stored otherwise than the dataset holds them: pixels of
 * the other byte order, and 12- and 10-bit integers packed into a bit
 * stream.  A worker converts each row right after reading it into its
 * bounce buffer, while the row is in the core's cache, writing only the
 * selected columns to their place in the dataset (plan.c, parallel.c).
 *
 * The packed layouts (parload.h, parload_encoding) are bit streams of the
 * whole view; a row is whole bytes (desc.c refuses other widths), so every
 * row starts a group: 2 pixels in 3 bytes, or 4 in 5.
 */
#include "internal.h"

#include <string.h>

/* ---- the other byte order ---- */

static void swap16(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	uint16_t *o = dst;

	src += (size_t)col * 2;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t v;

		memcpy(&v, src + (size_t)i * 2, 2);
		o[i] = __builtin_bswap16(v);
	}
}

static void swap32(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	uint32_t *o = dst;

	src += (size_t)col * 4;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, src + (size_t)i * 4, 4);
		o[i] = __builtin_bswap32(v);
	}
}

static void swap64(void *dst, const unsigned char *src, uint32_t col,
		   uint32_t n)
{
	uint64_t *o = dst;

	src += (size_t)col * 8;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, src + (size_t)i * 8, 8);
		o[i] = __builtin_bswap64(v);
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

/* Pixels [col, col + n) of a row of 12-bit pairs: a lone odd pixel
 * first, then whole pairs, then a lone even one. */
#define UNPACK12(name)                                                         \
	static void name(void *dst, const unsigned char *src, uint32_t col,    \
			 uint32_t n)                                           \
	{                                                                      \
		uint16_t *o = dst;                                             \
		uint64_t c = col;                                              \
		const uint64_t end = (uint64_t)col + n;                        \
                                                                               \
		if ((c & 1) && c < end) {                                      \
			*o++ = name##_odd(src + 3 * (c / 2));                  \
			c++;                                                   \
		}                                                              \
		for (; c + 1 < end; c += 2, o += 2) {                          \
			const unsigned char *b = src + 3 * (c / 2);            \
                                                                               \
			o[0] = name##_even(b);                                 \
			o[1] = name##_odd(b);                                  \
		}                                                              \
		if (c < end)                                                   \
			*o = name##_even(src + 3 * (c / 2));                   \
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

static void mono10p(void *dst, const unsigned char *src, uint32_t col,
		    uint32_t n)
{
	uint16_t *o = dst;
	uint64_t c = col;
	const uint64_t end = (uint64_t)col + n;

	for (; (c & 3) && c < end; c++)
		*o++ = mono10p_at(src + 5 * (c / 4), c & 3);
	for (; c + 3 < end; c += 4, o += 4) {
		const unsigned char *b = src + 5 * (c / 4);

		o[0] = (uint16_t)(b[0] | (b[1] & 0x03) << 8);
		o[1] = (uint16_t)(b[1] >> 2 | (b[2] & 0x0F) << 6);
		o[2] = (uint16_t)(b[2] >> 4 | (b[3] & 0x3F) << 4);
		o[3] = (uint16_t)(b[3] >> 6 | b[4] << 2);
	}
	for (; c < end; c++)
		*o++ = mono10p_at(src + 5 * (c / 4), c & 3);
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
