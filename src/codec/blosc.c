/*
 * blosc.c - HDF5 filter 32001: the chunk is one Blosc 1 buffer, whose
 * 16-byte header says its decoded and stored sizes, its type size, its
 * compressor and its shuffle.  The client data: [filter revision, Blosc
 * format, type size, chunk bytes, level, shuffle, compressor].  Every
 * compressor and both shuffles are libblosc's; the header is checked
 * against the stored bytes and the chunk (blosc_cbuffer_sizes,
 * blosc_cbuffer_validate) before blosc_decompress_ctx, which takes no
 * global lock, decodes it on the worker's thread.
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
#else
#endif
