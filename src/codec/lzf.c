/*
 * lzf.c - HDF5 filter 32000, h5py's LZF: the chunk is a bare LZF stream
 * (no header; the client data's third value is the chunk's bytes, which
 * h5py only uses to size its buffer).  liblzf's lzf_decompress checks its
 * input and never writes past the room it is given.
 */
#include "codec/rows.h"

#ifdef HAVE_LZF
#include <errno.h>
#include <limits.h>
#include <lzf.h>

const char *parload__lzf_params(PARLOAD__PARAMS_SIG)
{
	f->elem = elem;
	f->param[0] = n > 2 ? cd[2] : 0;
	return NULL;
}

const char *parload__lzf_decode(PARLOAD__DECODE_SIG)
{
	const unsigned room = cap > UINT_MAX ? UINT_MAX : (unsigned)cap;
	unsigned r;

	(void)state;
	(void)f;
	if (stored > UINT_MAX)
		return "is larger than an LZF stream can be";
	if (stored == 0) {
		*got = 0;
		return NULL;
	}
	errno = 0;
	r = lzf_decompress(in, (unsigned)stored, out, room);
	if (r == 0)
		return errno == E2BIG ? PARLOAD__TOO_BIG :
					"is not a valid LZF stream";
	*got = r;
	return NULL;
}
#else
#endif
