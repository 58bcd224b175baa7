/*
 * lz4.c - HDF5 filter 32004, the LZ4 filter's framing: the decoded bytes
 * (8, big-endian), the block size (4, big-endian), then for each block its
 * stored size (4, big-endian) and the block, LZ4-compressed, or as it is
 * where its stored size is its decoded size; the last block may be
 * shorter.  The client data holds only the block size the writer asked
 * for, which the header repeats.  numcodecs' LZ4 (param[0]
 * PARLOAD__LZ4_NUMCODECS) is the decoded size (4, little-endian), then one
 * LZ4 block of all of it; encode writes that framing.  Blocks are decoded
 * with liblz4's LZ4_decompress_safe, which never writes past the room it
 * is given.
 */
#include "codec/rows.h"

#ifdef HAVE_LZ4
#include <lz4.h>
#include <limits.h>

const char *parload__lz4_block(const unsigned char *in, size_t stored,
			       unsigned char *out, size_t size)
{
	int r;

	if (stored > INT_MAX || size > INT_MAX)
		return "has an LZ4 block larger than LZ4 can hold";
	r = LZ4_decompress_safe((const char *)in, (char *)out, (int)stored,
				(int)size);
	if (r < 0)
		return "is not a valid LZ4 block (or decodes past its block)";
	if ((size_t)r != size)
		return "has an LZ4 block that decodes to fewer bytes than its "
		       "block";
	return NULL;
}

const char *parload__lz4_params(PARLOAD__PARAMS_SIG)
{
	(void)cd;
	(void)n;
	f->elem = elem;
	f->param[0] = 0; /* the filter's framing */
	return NULL;
}

/* Each block from in into out, size bytes in all, block bytes a block. */
static const char *lz4_blocks(const unsigned char *in, size_t stored,
			      unsigned char *out, uint64_t size,
			      uint64_t block)
{
	size_t at = 0;

	for (uint64_t done = 0; done < size; done += block) {
		const size_t b = (size_t)(size - done < block ? size - done :
								block);
		uint32_t len;
		const char *why;

		if (stored - at < 4 ||
		    stored - at - 4 < (len = parload__be32(in + at)))
			return PARLOAD__TRUNCATED;
		at += 4;
		if (len == b)
			memcpy(out + done, in + at, b);
		else if ((why = parload__lz4_block(in + at, len, out + done,
						   b)))
			return why;
		at += len;
	}
	return at == stored ? NULL : PARLOAD__TRAILING;
}

/* numcodecs' framing: the size, then one block. */
static const char *numcodecs_decode(const unsigned char *in, size_t stored,
				    unsigned char *out, size_t cap,
				    size_t *got)
{
	uint32_t size;
	const char *why;

	if (stored < 5)
		return PARLOAD__SHORT_HEADER;
	size = (uint32_t)in[0] | (uint32_t)in[1] << 8 |
	       (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
	if (size > cap)
		return PARLOAD__TOO_BIG;
	why = parload__lz4_block(in + 4, stored - 4, out, size);
	if (!why)
		*got = size;
	return why;
}

const char *parload__lz4_decode(PARLOAD__DECODE_SIG)
{
	uint64_t size, block;
	const char *why;

	(void)state;
	if (f->param[0] == PARLOAD__LZ4_NUMCODECS)
		return numcodecs_decode(in, stored, out, cap, got);
	if (stored < 12)
		return PARLOAD__SHORT_HEADER;
	size = parload__be64(in);
	block = parload__be32(in + 8);
	if (size > cap)
		return PARLOAD__TOO_BIG;
	if (block == 0 && size > 0)
		return "has an LZ4 block size of 0";
	why = lz4_blocks(in + 12, stored - 12, out, size, block);
	if (!why)
		*got = (size_t)size;
	return why;
}

const char *parload__lz4_encode(PARLOAD__ENCODE_SIG)
{
	const int fast = f->param[1] ? (int)PARLOAD__MIN(f->param[1], 65537) :
				       1;
	int r;

	(void)state;
	if (f->param[0] != PARLOAD__LZ4_NUMCODECS)
		return "is LZ4 in the HDF5 filter's framing, which parload "
		       "does not write";
	if (n > LZ4_MAX_INPUT_SIZE)
		return "is more than LZ4 takes in one block";
	if (cap < 4)
		return PARLOAD__NO_ROOM;
	r = LZ4_compress_fast((const char *)in, (char *)out + 4, (int)n,
			      (int)PARLOAD__MIN(cap - 4, (size_t)INT_MAX),
			      fast);
	if (r <= 0)
		return PARLOAD__NO_ROOM;
	for (int i = 0; i < 4; i++)
		out[i] = (unsigned char)(n >> (8 * i));
	*got = 4 + (size_t)r;
	return NULL;
}

size_t parload__lz4_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return n > LZ4_MAX_INPUT_SIZE ? 0 :
					4 + (size_t)LZ4_compressBound((int)n);
}
#else
const char *parload__lz4_block(const unsigned char *in, size_t stored,
			       unsigned char *out, size_t size)
{
	(void)in;
	(void)stored;
	(void)out;
	(void)size;
	return "is LZ4, which needs a libparload built with liblz4";
}

#endif
