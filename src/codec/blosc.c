/*
 * blosc.c - HDF5 filter 32001: the chunk is one Blosc 1 buffer, whose
 * 16-byte header says its decoded and stored sizes, its type size, its
 * compressor and its shuffle.  The client data: [filter revision, Blosc
 * format, type size, chunk bytes, level, shuffle, compressor].  Every
 * compressor and both shuffles are libblosc's; the header is checked
 * against the stored bytes and the chunk (blosc_cbuffer_sizes,
 * blosc_cbuffer_validate) before blosc_decompress_ctx, which takes no
 * global lock, decodes it on the worker's thread.  Encode is
 * blosc_compress_ctx (no global state either): the compressor by its code
 * (blosc_compcode_to_compname), its level, its shuffle, the element size,
 * Blosc's own block size, one thread (the worker's).
 */
#include "codec/rows.h"

#ifdef HAVE_BLOSC
#include <blosc.h>

const char *parload__blosc_params(PARLOAD__PARAMS_SIG)
{
	const char *name;

	f->elem = n > 2 && cd[2] ? cd[2] : elem;
	if (n > 6 && blosc_compcode_to_compname((int)cd[6], &name) < 0)
		return "is Blosc with a compressor this libblosc lacks";
	return NULL;
}

const char *parload__blosc_decode(PARLOAD__DECODE_SIG)
{
	size_t nbytes = 0, cbytes = 0, block = 0;
	int r;

	(void)state;
	(void)f;
	if (stored < BLOSC_MIN_HEADER_LENGTH)
		return PARLOAD__SHORT_HEADER;
	blosc_cbuffer_sizes(in, &nbytes, &cbytes, &block);
	if (cbytes != stored)
		return "has a Blosc header whose stored size is not the "
		       "chunk's";
	if (nbytes > cap)
		return PARLOAD__TOO_BIG;
	if (blosc_cbuffer_validate(in, stored, &nbytes) != 0)
		return "has a Blosc header that is not valid";
	if (nbytes == 0) {
		*got = 0;
		return NULL;
	}
	r = blosc_decompress_ctx(in, out, cap, 1);
	if (r <= 0 || (size_t)r != nbytes)
		return "is not a valid Blosc buffer";
	*got = nbytes;
	return NULL;
}

const char *parload__blosc_encode(PARLOAD__ENCODE_SIG)
{
	const char *name;
	int r;

	(void)state;
	if (blosc_compcode_to_compname((int)f->param[0], &name) < 0)
		return "has a Blosc compressor this libblosc lacks";
	if (f->param[1] > 9 || f->param[2] > 2)
		return "has a Blosc level (0-9) or shuffle (0-2) Blosc lacks";
	if (n > BLOSC_MAX_BUFFERSIZE)
		return "is more than Blosc takes in one buffer";
	r = blosc_compress_ctx((int)f->param[1], (int)f->param[2],
			       f->elem ? f->elem : 1, n, in, out, cap, name,
			       0, 1);
	if (r < 0)
		return "cannot be compressed by libblosc";
	if (r == 0)
		return PARLOAD__NO_ROOM;
	*got = (size_t)r;
	return NULL;
}

size_t parload__blosc_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return n > BLOSC_MAX_BUFFERSIZE ? 0 : n + BLOSC_MAX_OVERHEAD;
}
#else
#endif
