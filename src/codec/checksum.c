/*
 * checksum.c - the checksums after a chunk's bytes.  Zarr v3's crc32c:
 * the bytes, then their CRC-32C (4 bytes, little-endian; parload_crc32c,
 * as parload's own stream's); encode appends it.
 *
 * HDF5 filter 3, Fletcher32: the chunk's bytes, then the
 * checksum of them (4 bytes, little-endian), computed as libhdf5's
 * H5_checksum_fletcher32 does (16-bit big-endian words summed from 0, an
 * odd last byte as the high byte of a word).  libhdf5 also takes the
 * checksum with the bytes of each 16-bit half swapped, which versions
 * before 1.6.3 wrote on little-endian machines; so does this row.
 */
#include "codec/rows.h"

uint32_t parload__fletcher32(const unsigned char *p, size_t len)
{
	uint32_t sum1 = 0, sum2 = 0;
	size_t words = len / 2;

	while (words) {
		size_t run = words > 360 ? 360 : words;

		words -= run;
		for (; run; run--, p += 2) {
			sum1 += (uint32_t)p[0] << 8 | p[1];
			sum2 += sum1;
		}
		sum1 = (sum1 & 0xffff) + (sum1 >> 16);
		sum2 = (sum2 & 0xffff) + (sum2 >> 16);
	}
	if (len % 2) {
		sum1 += (uint32_t)p[0] << 8;
		sum2 += sum1;
		sum1 = (sum1 & 0xffff) + (sum1 >> 16);
		sum2 = (sum2 & 0xffff) + (sum2 >> 16);
	}
	sum1 = (sum1 & 0xffff) + (sum1 >> 16);
	sum2 = (sum2 & 0xffff) + (sum2 >> 16);
	return sum2 << 16 | sum1;
}

const char *parload__fletcher32_params(PARLOAD__PARAMS_SIG)
{
	(void)cd;
	(void)n;
	f->elem = elem;
	return NULL;
}

/* The 4 bytes at p, little-endian. */
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The bytes before a checksum of 4 bytes (little-endian) in stored bytes
 * of in: *len of them, *sum the checksum; NULL, or what is wrong (named,
 * too short). */
static const char *split(const unsigned char *in, size_t stored, size_t cap,
			 const char *named, size_t *len, uint32_t *sum)
{
	if (stored < 4)
		return named;
	*len = stored - 4;
	if (*len > cap)
		return PARLOAD__TOO_BIG;
	*sum = le32(in + *len);
	return NULL;
}

const char *parload__crc32c_decode(PARLOAD__DECODE_SIG)
{
	size_t len = 0;
	uint32_t want = 0;
	const char *why = split(in, stored, cap, "is shorter than its CRC-32C "
				"checksum", &len, &want);

	(void)state;
	(void)f;
	if (why)
		return why;
	if (parload_crc32c(0, in, len) != want)
		return "fails its CRC-32C checksum";
	memcpy(out, in, len);
	*got = len;
	return NULL;
}

const char *parload__crc32c_encode(PARLOAD__ENCODE_SIG)
{
	uint32_t sum;

	(void)state;
	(void)f;
	if (cap < 4 || n > cap - 4)
		return PARLOAD__NO_ROOM;
	sum = parload_crc32c(0, in, n);
	memcpy(out, in, n);
	for (int i = 0; i < 4; i++)
		out[n + i] = (unsigned char)(sum >> (8 * i));
	*got = n + 4;
	return NULL;
}

size_t parload__crc32c_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return n > SIZE_MAX - 4 ? 0 : n + 4;
}

const char *parload__fletcher32_decode(PARLOAD__DECODE_SIG)
{
	size_t len = 0;
	uint32_t want = 0, sum, swapped;
	const char *why = split(in, stored, cap, "is shorter than its "
				"Fletcher32 checksum", &len, &want);

	(void)state;
	(void)f;
	if (why)
		return why;
	sum = parload__fletcher32(in, len);
	swapped = (sum & 0x00ff00ffU) << 8 | (sum >> 8 & 0x00ff00ffU);
	if (want != sum && want != swapped)
		return "fails its Fletcher32 checksum";
	memcpy(out, in, len);
	*got = len;
	return NULL;
}
