/*
 * checksum.c - HDF5 filter 3, Fletcher32: the chunk's bytes, then the
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

const char *parload__fletcher32_decode(PARLOAD__DECODE_SIG)
{
	size_t len;
	uint32_t want, sum, swapped;

	(void)state;
	(void)f;
	if (stored < 4)
		return "is shorter than its Fletcher32 checksum";
	len = stored - 4;
	if (len > cap)
		return PARLOAD__TOO_BIG;
	want = (uint32_t)in[len] | (uint32_t)in[len + 1] << 8 |
	       (uint32_t)in[len + 2] << 16 | (uint32_t)in[len + 3] << 24;
	sum = parload__fletcher32(in, len);
	swapped = (sum & 0x00ff00ffU) << 8 | (sum >> 8 & 0x00ff00ffU);
	if (want != sum && want != swapped)
		return "fails its Fletcher32 checksum";
	memcpy(out, in, len);
	*got = len;
	return NULL;
}
