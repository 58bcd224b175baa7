/*
 * zstd.c - HDF5 filter 32015: the chunk is one zstd frame (the client
 * data holds only the writer's level).  Each worker keeps one
 * decompression context (its state), and a compression context once it
 * encodes; the frame's content size, where the frame gives it, is checked
 * against the chunk before anything is decoded.
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

typedef struct zstd_state {
	ZSTD_DCtx *d;
	ZSTD_CCtx *c;
} zstd_state;

void *parload__zstd_open(void)
{
	zstd_state *s = parload__sys_calloc(1, sizeof(*s));

	if (s && !(s->d = ZSTD_createDCtx())) {
		parload__sys_free(s);
		return NULL;
	}
	return s;
}

void parload__zstd_close(void *state)
{
	zstd_state *s = state;

	if (!s)
		return;
	ZSTD_freeDCtx(s->d);
	ZSTD_freeCCtx(s->c);
	parload__sys_free(s);
}

/* SIZE_UNKNOWN and _ERROR, written so that no sanitizer of
 * unsigned overflow stops at zstd.h's (0ULL - 1) and (0ULL - 2). */
#define SIZE_UNKNOWN (~0ULL)
#define SIZE_ERROR (~0ULL - 1)

/* One frame, stored bytes of it, into out (cap bytes): its size in *got. */
static const char *frame(ZSTD_DCtx *dctx, const unsigned char *in, size_t stored,
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

const char *parload__zstd_block(void *state, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size)
{
	size_t got = 0;
	const char *why = frame(((zstd_state *)state)->d, in, stored, out,
				size, &got);

	if (!why && got != size)
		return "has a zstd block that decodes to fewer bytes than its "
		       "block";
	return why;
}

const char *parload__zstd_decode(PARLOAD__DECODE_SIG)
{
	(void)f;
	return frame(((zstd_state *)state)->d, in, stored, out, cap, got);
}

const char *parload__zstd_encode(PARLOAD__ENCODE_SIG)
{
	zstd_state *s = state;
	const int level = (int)f->param[0];
	size_t r;

	if (f->param[0] > (unsigned)ZSTD_maxCLevel())
		return "has a zstd level libzstd lacks";
	if (!s->c && !(s->c = ZSTD_createCCtx()))
		return PARLOAD__NO_MEMORY;
	r = ZSTD_compressCCtx(s->c, out, cap, in, n, level);
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ?
			       PARLOAD__NO_ROOM :
			       "cannot be compressed by libzstd";
	*got = r;
	return NULL;
}

size_t parload__zstd_bound(const parload__filter *f, size_t n)
{
	const size_t r = ZSTD_compressBound(n);

	(void)f;
	return ZSTD_isError(r) ? 0 : r;
}
#else
const char *parload__zstd_block(void *state, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size)
{
	(void)state;
	(void)in;
	(void)stored;
	(void)out;
	(void)size;
	return "is zstd, which needs a libparload built with libzstd";
}

#endif
