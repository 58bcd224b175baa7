/*
 * zstd.c - HDF5 filter 32015: the chunk is one zstd frame (the client
 * data holds only the writer's level).  Each worker keeps one
 * decompression context (its state); the frame's content size, where the
 * frame gives it, is checked against the chunk before anything is decoded.
 */
#include "codec/rows.h"

#ifdef HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>

const char *parload__zstd_params(PARLOAD__PARAMS_SIG)
{
	(void)cd;
	(void)n;
	f->elem = elem;
	return NULL;
}

void *parload__zstd_open(void)
{
	return ZSTD_createDCtx();
}

void parload__zstd_close(void *state)
{
	ZSTD_freeDCtx(state);
}

/* SIZE_UNKNOWN and _ERROR, written so that no sanitizer of
 * unsigned overflow stops at zstd.h's (0ULL - 1) and (0ULL - 2). */
#define SIZE_UNKNOWN (~0ULL)
#define SIZE_ERROR (~0ULL - 1)

/* One frame, stored bytes of it, into out (cap bytes): its size in *got. */
static const char *frame(void *dctx, const unsigned char *in, size_t stored,
			 unsigned char *out, size_t cap, size_t *got)
{
	const unsigned long long want = ZSTD_getFrameContentSize(in, stored);
	size_t len, r;

	if (want == SIZE_ERROR)
		return "is not a zstd frame";
	if (want != SIZE_UNKNOWN && want > cap)
		return PARLOAD__TOO_BIG;
	len = ZSTD_findFrameCompressedSize(in, stored);
	if (ZSTD_isError(len))
		return "is not a whole zstd frame (truncated)";
	if (len != stored)
		return "has bytes after its zstd frame";
	r = ZSTD_decompressDCtx(dctx, out, cap, in, stored);
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ?
			       PARLOAD__TOO_BIG :
			       "is not a valid zstd frame";
	if (want != SIZE_UNKNOWN && r != want)
		return "decodes to other than its zstd frame's size";
	*got = r;
	return NULL;
}

const char *parload__zstd_block(void *dctx, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size)
{
	size_t got = 0;
	const char *why = frame(dctx, in, stored, out, size, &got);

	if (!why && got != size)
		return "has a zstd block that decodes to fewer bytes than its "
		       "block";
	return why;
}

const char *parload__zstd_decode(PARLOAD__DECODE_SIG)
{
	(void)f;
	return frame(state, in, stored, out, cap, got);
}
#else
const char *parload__zstd_block(void *dctx, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size)
{
	(void)dctx;
	(void)in;
	(void)stored;
	(void)out;
	(void)size;
	return "is zstd, which needs a libparload built with libzstd";
}

#endif
