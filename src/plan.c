/*
 * plan.c - who reads what.
 *
 * The unit of work is a byte range of the pixel array, not a view: with
 * fewer views than workers, or views of hundreds of megabytes, whole views
 * would leave workers idle.  Each worker's pixel range maps back to one
 * contiguous range of the file (the payload bytes of its range plus the
 * headers of the views that start in it), so a worker reads its share with
 * a few large preadv calls whose buffers point straight into the two
 * arrays.
 */
#include "internal.h"

/* The file offset of pixel byte p (0 <= p <= total pixel bytes).  A pixel
 * that starts a view maps to the view's header, which belongs to the
 * worker that owns the view's first pixel. */
static uint64_t file_pos(const parload_file_header *h, uint64_t p)
{
	uint64_t v = p / h->payload_size, k = p % h->payload_size;

	return parload__view_offset(h, v) + (k ? PARLOAD_VIEW_HEADER_SIZE + k : 0);
}

/* floor(total * w / n) without overflowing 64 bits. */
static uint64_t share(uint64_t total, unsigned w, unsigned n)
{
	return (total / n) * w + (total % n) * w / n;
}

void parload__plan(const parload_file_header *h, unsigned n, size_t align,
		   parload__slice *slices)
{
	uint64_t total = h->view_count * h->payload_size;
	uint64_t begin = 0;

	for (unsigned w = 0; w < n; w++) {
		parload__slice *s = &slices[w];
		uint64_t end = total;

		if (w + 1 < n) {
			end = share(total, w + 1, n) & ~((uint64_t)align - 1);
			end = PARLOAD__MAX(end, begin);
		}
		s->pix_begin = begin;
		s->pix_end = end;
		/* Views whose first pixel lies in [begin, end). */
		s->view_begin = (begin + h->payload_size - 1) / h->payload_size;
		s->view_end = (end + h->payload_size - 1) / h->payload_size;
		if (total == 0) {
			s->file_begin = s->file_end = PARLOAD_FILE_HEADER_SIZE;
		} else {
			s->file_begin = file_pos(h, begin);
			s->file_end = file_pos(h, end);
		}
		begin = end;
	}
}

void parload__cursor_init(parload__cursor *c, const parload_file_header *h,
			  const parload__slice *s,
			  parload_view_header *headers, void *pixels)
{
	c->h = h;
	c->headers = headers;
	c->pixels = pixels;
	c->pos = s->file_begin;
	c->end = s->file_end;
}

int parload__cursor_next(parload__cursor *c, struct iovec *iov, int max_iov,
			 size_t max_bytes, uint64_t *off)
{
	const uint64_t record = parload__record_size(c->h);
	size_t total = 0;
	int cnt = 0;

	*off = c->pos;
	while (cnt < max_iov && total < max_bytes && c->pos < c->end) {
		uint64_t rel = c->pos - PARLOAD_FILE_HEADER_SIZE;
		uint64_t v = rel / record, k = rel % record;
		uint64_t left;
		unsigned char *dst;

		if (k < PARLOAD_VIEW_HEADER_SIZE) {
			dst = (unsigned char *)&c->headers[v] + k;
			left = PARLOAD_VIEW_HEADER_SIZE - k;
		} else {
			k -= PARLOAD_VIEW_HEADER_SIZE;
			dst = c->pixels + v * c->h->payload_size + k;
			left = c->h->payload_size - k;
		}
		left = PARLOAD__MIN(left, c->end - c->pos);
		left = PARLOAD__MIN(left, (uint64_t)(max_bytes - total));
		iov[cnt].iov_base = dst;
		iov[cnt].iov_len = (size_t)left;
		cnt++;
		total += (size_t)left;
		c->pos += left;
	}
	return cnt;
}
