/*
 * bzip2.c - BZip2 with libbz2: HDF5's filter 307 (PyTables', which
 * hdf5plugin carries; its client data holds the writer's block size,
 * 1-9) and numcodecs' BZ2 store one bzip2 stream as the chunk.  Exactly
 * one stream: bytes after it, a second stream too, are refused.  Encode
 * writes one at block size param[0] (1-9; 0: 9).  libbz2's stream
 * functions never write past the room they are given.
 */
#include "codec/rows.h"

#ifdef HAVE_BZ2
#include <bzlib.h>
#include <limits.h>

const char *parload__bzip2_params(PARLOAD__PARAMS_SIG)
{
	f->elem = elem;
	f->param[0] = n > 0 ? cd[0] : 9;
	return NULL;
}

/* What a libbz2 answer other than the stream's end says. */
static const char *bz_why(int r, const bz_stream *s)
{
	if (r == BZ_MEM_ERROR)
		return PARLOAD__NO_MEMORY;
	if (r == BZ_OK && s->avail_out == 0)
		return PARLOAD__TOO_BIG;
	if (r == BZ_OK)
		return "is not a whole bzip2 stream (truncated)";
	return "is not a valid bzip2 stream";
}

const char *parload__bzip2_decode(PARLOAD__DECODE_SIG)
{
	bz_stream s = { 0 };
	const char *why = NULL;
	int r;

	(void)state;
	(void)f;
	if (stored > UINT_MAX)
		return "is larger than libbz2 takes";
	if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
		return PARLOAD__NO_MEMORY;
	s.next_in = (char *)(uintptr_t)in;
	s.avail_in = (unsigned)stored;
	s.next_out = (char *)out;
	s.avail_out = (unsigned)PARLOAD__MIN(cap, (size_t)UINT_MAX);
	/* All of it in one call: libbz2 stops where the stream, its input
	 * or its room ends. */
	r = BZ2_bzDecompress(&s);
	if (r != BZ_STREAM_END)
		why = bz_why(r, &s);
	else if (s.avail_in)
		why = "has bytes after its bzip2 stream";
	else
		*got = (size_t)((char *)s.next_out - (char *)out);
	BZ2_bzDecompressEnd(&s);
	return why;
}

const char *parload__bzip2_encode(PARLOAD__ENCODE_SIG)
{
	unsigned room = (unsigned)PARLOAD__MIN(cap, (size_t)UINT_MAX);
	int r;

	(void)state;
	if (f->param[0] > 9)
		return "has a bzip2 block size libbz2 lacks (1-9)";
	if (n > UINT_MAX)
		return "is larger than libbz2 takes";
	r = BZ2_bzBuffToBuffCompress((char *)out, &room,
				     (char *)(uintptr_t)in, (unsigned)n,
				     f->param[0] ? (int)f->param[0] : 9, 0, 0);
	if (r == BZ_OUTBUFF_FULL)
		return PARLOAD__NO_ROOM;
	if (r != BZ_OK)
		return r == BZ_MEM_ERROR ? PARLOAD__NO_MEMORY :
					   "cannot be compressed by libbz2";
	*got = room;
	return NULL;
}

/* libbz2's: 1% more than the data, and 600 bytes. */
size_t parload__bzip2_bound(const parload__filter *f, size_t n)
{
	(void)f;
	return n > UINT_MAX - UINT_MAX / 100 - 600 ? 0 : n + n / 100 + 600;
}
#endif
