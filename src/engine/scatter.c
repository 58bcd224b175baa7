/*
 * scatter.c - a batch in a bounce buffer to its places: copied as it is,
 * its rows converted into their selected columns (convert.c), corrected
 * (correct.c) and binned, fed to their views' CRCs, or stored far with
 * non-temporal stores (sinograms); and a batch of the plan's in_place
 * conversion, read straight into its places, converted there.
 */
#include "engine/pass.h"

#include <string.h>


/* The row of the selection that destination dst starts. */
static uint64_t row_of(const parload__plan *p, const unsigned char *dst)
{
	const uint64_t at = (uint64_t)(dst - p->pixels);

	return p->s->layout == PARLOAD_LAYOUT_VIEWS ?
		       at % p->s->view_bytes / p->take :
		       at / p->take / p->s->views;
}

/* A corrected load's row: the file's row converted (or its selected
 * columns as they are), then corrected into float32 at dst. */
static void correct(const parload__pass *j, parload__worker_io *io,
		    unsigned char *dst, const unsigned char *row)
{
	const parload__plan *p = &j->plan;
	const unsigned char *px = row + p->skip;

	if (p->convert) {
		p->convert(io->row, row, p->s->col_start, p->s->cols * p->bin);
		px = io->row;
	}
	if (p->bin == 1) {
		parload__correct_row(p->correct, (float *)(void *)dst, px,
				     row_of(p, dst));
		return;
	}
	/* A bin's rows come one after another, all to this worker (its
	 * share holds whole output rows): sum them, then write the mean. */
	if (io->acc_dst != dst) {
		memset(io->acc, 0, p->s->cols * sizeof(*io->acc));
		io->acc_dst = dst;
		io->acc_n = 0;
	}
	parload__bin_add(p->correct, io->acc, px);
	if (++io->acc_n == p->bin) {
		parload__correct_binned(p->correct, (float *)(void *)dst,
					io->acc, row_of(p, dst));
		io->acc_dst = NULL;
	}
}

/* Row CRCs: the cnt bytes at data, the next of the worker's stream
 * (io->k, io->q): a header's are passed over, a row's go into its view's
 * CRC.  A piece never crosses a view's end. */
static int crc_feed(const parload__pass *j, parload__worker_io *io,
		    const unsigned char *data, size_t len, parload_error *e)
{
	const uint64_t hb = io->sh->headers ? j->plan.hdr : 0;
	int rc = 0;

	if (io->q >= hb)
		rc = parload__rowcrc_add(io->crc, io->k,
					 (uint64_t)io->sh->row_begin *
							 j->plan.row_bytes +
						 io->q - hb,
					 data, len, io->bad, e);
	io->q += len;
	if (io->q >= io->stride) {
		io->k++;
		io->q -= io->stride;
	}
	return rc;
}

/* n bytes from src to dst, a place this load will not read again, with
 * non-temporal stores where the CPU has them (SSE2, every x86-64): a row
 * of a sinogram lands far from the last one, and an ordinary store would
 * first read each of its lines from memory.  The stores are ordered
 * (sfence) before the batch's caller goes on. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>

static void store_far(unsigned char *dst, const unsigned char *src, size_t n)
{
	const size_t head = (size_t)(-(uintptr_t)dst & 15);

	if (n < 256 || head >= n) {
		memcpy(dst, src, n);
		return;
	}
	memcpy(dst, src, head);
	dst += head, src += head, n -= head;
	for (; n >= 64; n -= 64, dst += 64, src += 64) {
		const __m128i a = _mm_loadu_si128((const __m128i *)src);
		const __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
		const __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
		const __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));

		_mm_stream_si128((__m128i *)dst, a);
		_mm_stream_si128((__m128i *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(dst + 48), d);
	}
	memcpy(dst, src, n);
}

static void stores_done(void)
{
	_mm_sfence();
}
#else
static void store_far(unsigned char *dst, const unsigned char *src, size_t n)
{
	memcpy(dst, src, n);
}

static void stores_done(void)
{
}
#endif

/* Scatter what buf holds to the places iov names (a NULL place is bytes
 * to drop; a row, rows[k], is converted into its selected columns). */
int parload__scatter(const parload__pass *j, parload__worker_io *io,
		     const unsigned char *buf, const struct iovec *iov,
		     const bool *rows, int cnt, parload_error *e)
{
	const parload__plan *p = &j->plan;
	int rc = 0;

	/* Bytes copied as they are (tiny views: a header and a payload of a
	 * few hundred bytes each), with nothing to test a piece. */
	if (!io->crc && !p->correct && !p->in_place && !p->convert &&
	    !j->far) {
		for (int k = 0; k < cnt; k++) {
			if (iov[k].iov_base)
				memcpy(iov[k].iov_base, buf, iov[k].iov_len);
			buf += iov[k].iov_len;
		}
		return 0;
	}
	for (int k = 0; k < cnt; k++) {
		if (io->crc && rc == 0)
			rc = crc_feed(j, io, buf, iov[k].iov_len, e);
		if (p->correct && rows[k])
			correct(j, io, iov[k].iov_base, buf);
		else if (p->in_place && rows[k])
			parload__piece_convert(p, &iov[k], buf);
		else if (p->convert && rows[k])
			p->convert(iov[k].iov_base, buf, p->s->col_start,
				   p->s->cols);
		else if (iov[k].iov_base && j->far)
			store_far(iov[k].iov_base, buf, iov[k].iov_len);
		else if (iov[k].iov_base)
			memcpy(iov[k].iov_base, buf, iov[k].iov_len);
		buf += iov[k].iov_len;
	}
	if (j->far)
		stores_done();
	return rc;
}


/* A batch read straight into its places, of the plan's in_place: its
 * pixels converted where they landed, while they are in this core's
 * cache. */
void parload__convert_read(const parload__pass *j, const struct iovec *iov,
			   const bool *rows, int cnt)
{
	for (int k = 0; k < cnt; k++)
		if (rows[k])
			parload__piece_convert(&j->plan, &iov[k],
					       iov[k].iov_base);
}
