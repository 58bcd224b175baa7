/*
 * plan.c - the extent plan: which bytes of the file go where, and which
 * worker reads them.
 *
 * A load reads, for each selected view, its 32-byte header and a band of
 * its detector rows, whole rows of the file: a row is the unit the format
 * stores contiguously, so a band of rows is one contiguous range and a
 * crop of columns costs no extra read (the columns left out are read into
 * a bounce buffer and dropped).  Where the bytes land depends on the
 * layout: view after view (pixels[k][r][c]), or sinograms
 * (pixels[r][k][c]), each row of a view scattered to its sinogram as the
 * view arrives.  The whole file in view layout is the special case in
 * which consecutive views' ranges touch, and one preadv can fill many
 * views.
 *
 * The unit of work is bytes, not views: with fewer views than workers, or
 * views of hundreds of megabytes, whole views would leave workers idle.  In
 * view layout the workers split the pixel array by bytes; in sinogram
 * layout each worker takes a band of rows of every view, so that it writes
 * whole sinograms and first-touches (places on its NUMA node) exactly the
 * pages it fills.  A cursor then walks a share and yields, for each
 * contiguous range of the file, the destinations of its bytes as an iovec
 * array for preadv.
 */
#include "model/model.h"

#include <string.h>

static uint64_t hdr_bytes(const parload__plan *p, const parload__share *sh)
{
	return sh->headers ? p->hdr : 0;
}

void parload__plan_init(parload__plan *p, const parload_desc *d,
			const parload__file *files, size_t nfiles,
			bool raw_headers, const parload_shape *s)
{
	const uint64_t bpp = d->bytes_per_pixel;

	memset(p, 0, sizeof(*p));
	p->d = d;
	p->files = files;
	p->nfiles = nfiles;
	p->s = s;
	p->k_end = s->views;
	p->bin = s->bin > 1 ? s->bin : 1;
	/* parload's own view headers land in the typed array; a raw
	 * stream's, when wanted, in raw_headers. */
	p->native = d->format == PARLOAD_FORMAT_PARLOAD;
	p->hdr = p->native || raw_headers ? d->header : 0;
	p->convert = parload__convert_get(d);
	/* The other byte order or packed pixels, every column: read as if
	 * unconverted, converted where they land. */
	p->in_place = p->convert && s->cols == d->width &&
		      s->bytes_per_pixel == bpp;
	p->unit_in = p->unit_out = 1;
	if (p->in_place && d->encoding == PARLOAD_ENC_BE) {
		p->unit_in = p->unit_out = (uint32_t)bpp;
	} else if (p->in_place) {
		/* The fewest pixels that fill whole bytes: 2 of 12 bits in
		 * 3 bytes, 4 of 10 bits in 5. */
		const unsigned bits = parload__packed_bits(d->encoding);
		const uint32_t px = bits % 4 == 0 ? 2 : 4;

		p->unit_in = px * bits / 8;
		p->unit_out = px * (uint32_t)bpp;
	}
	p->whole_rows = p->convert != NULL && !p->in_place;
	p->row_bytes = d->row_size;
	p->skip = (uint64_t)s->col_start * bpp;
	/* Of the delivered pixels (float32 for a corrected load). */
	p->take = (uint64_t)s->cols * s->bytes_per_pixel;
	p->crop = !p->whole_rows && p->take < p->row_bytes;
	p->dst_row = s->layout == PARLOAD_LAYOUT_VIEWS ? p->take :
							 s->views * p->take;
	/* Rows of a view lie back to back in view layout; in sinogram layout
	 * each row is a run of its own.  Converted rows always go through
	 * the bounce buffer (its bytes are not the destination's), but for
	 * a conversion in place. */
	p->run = p->crop || p->whole_rows ? 0 :
		 s->layout == PARLOAD_LAYOUT_VIEWS ? s->view_bytes : p->take;
}

/* Every row read whole through the bounce buffer, converted there. */
static void rows_bounced(parload__plan *p)
{
	p->whole_rows = true;
	p->in_place = false;
	p->unit_in = p->unit_out = 1;
	p->crop = false;
	p->run = 0;
}

void parload__plan_correct(parload__plan *p, const parload__correct *k)
{
	p->correct = k;
	rows_bounced(p);
}

void parload__plan_strips(parload__plan *p, const parload__strips *t)
{
	p->strips = t;
	p->decoded = t && !parload__strips_plain(t);
	/* A decoded strip is in the worker's memory: its rows are copied
	 * from there, as from a bounce buffer. */
	if (p->decoded)
		p->run = 0;
	if (p->decoded && p->in_place)
		rows_bounced(p);
}

void parload__plan_views(parload__plan *p, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels)
{
	p->k_begin = k_begin;
	p->k_end = k_end;
	p->headers = headers;
	p->raw_headers = raw_headers;
	p->pixels = pixels;
}

uint64_t parload__share_stride(const parload__plan *p,
			       const parload__share *sh)
{
	return hdr_bytes(p, sh) + (uint64_t)(sh->row_end - sh->row_begin) *
					  p->row_bytes;
}

/* floor(total * w / n) without overflowing 64 bits. */
static uint64_t part(uint64_t total, uint64_t w, uint64_t n)
{
	return (total / n) * w + (total % n) * w / n;
}

/* The position, in a view-layout share's stream, of pixel byte x of the
 * output: a pixel that starts a view maps to the view's header, which goes
 * with the view's first pixel. */
static uint64_t pixel_pos(const parload__plan *p, uint64_t stride, uint64_t x)
{
	const uint64_t k = x / p->s->view_bytes, rem = x % p->s->view_bytes;
	const uint64_t row = rem / p->take, b = rem % p->take;

	if (rem == 0)
		return k * stride;
	return k * stride + p->hdr + row * p->bin * p->row_bytes +
	       (b ? p->skip + b / p->unit_out * p->unit_in : 0);
}

static void split_views(const parload__plan *p, unsigned n, size_t align,
			parload__share *shares)
{
	const parload_shape *s = p->s;
	const uint64_t total = (p->k_end - p->k_begin) * s->view_bytes;
	parload__share proto = { s->row_start,
				 s->row_start + s->rows * p->bin, true, 0, 0,
				 0, 0 };
	const uint64_t stride = parload__share_stride(p, &proto);
	const uint64_t base = p->k_begin * stride;
	/* Boundaries align in memory, not in the plan: a batch's views may
	 * start anywhere in a page. */
	const uint64_t at = (uint64_t)(uintptr_t)p->pixels;
	const uint64_t unit = p->whole_rows ? p->take :
			      p->in_place ? p->unit_out :
					    s->bytes_per_pixel;
	uint64_t begin = 0;

	for (unsigned w = 0; w < n; w++) {
		uint64_t end = total;

		if (w + 1 < n) {
			uint64_t x = (at + part(total, w + 1, n)) &
				     ~((uint64_t)align - 1);

			end = x > at + begin ? PARLOAD__MIN(x - at, total) :
					       begin;
			/* A converted row is read whole, by one worker; a
			 * unit converted in place too; a decoded view too,
			 * so that no two workers decode one chunk. */
			if (p->whole_rows || p->in_place || p->decoded)
				end = PARLOAD__MAX(end - end % (p->decoded ?
						   s->view_bytes : unit), begin);
		}
		shares[w] = proto;
		shares[w].dst_begin = begin;
		shares[w].dst_end = end;
		shares[w].begin = base + pixel_pos(p, stride, begin);
		shares[w].end = base + (end == total ?
						(p->k_end - p->k_begin) * stride :
						pixel_pos(p, stride, end));
		begin = end;
	}
}

/* Sinograms: g bands of rows, and within a band its workers split the
 * views.  The band that starts at the first row reads the headers.
 * Without bands (one band of every row), each worker's part of the file
 * is one run of whole views, read in large batches; a band's part is a
 * run of rows in every view, a read apiece.  The reference stream as
 * sinograms, 2 threads: 1.25-1.31 x its view layout's time in bands,
 * 1.14-1.16 x by views (medians of 11 alternated runs each). */
static void split_rows(const parload__plan *p, unsigned n,
		       parload__share *shares)
{
	const parload_shape *s = p->s;
	/* Decoded strips: each worker takes whole views, every row of the
	 * band, so that it decodes each strip once. */
	const unsigned g = p->decoded || !p->bands ?
				   1u :
				   (unsigned)PARLOAD__MIN((uint64_t)n, s->rows);

	for (unsigned j = 0; j < g; j++) {
		const unsigned w0 = (unsigned)part(n, j, g);
		const unsigned m = (unsigned)part(n, j + 1, g) - w0;
		/* Output rows [a, b) of the band: detector rows from a *
		 * bin (whole bins). */
		const uint32_t a = (uint32_t)part(s->rows, j, g);
		const uint32_t b = (uint32_t)part(s->rows, j + 1, g);
		parload__share band = { s->row_start + a * p->bin,
					s->row_start + b * p->bin, j == 0, 0, 0,
					0, 0 };
		const uint64_t stride = parload__share_stride(p, &band);

		for (unsigned i = 0; i < m; i++) {
			shares[w0 + i] = band;
			shares[w0 + i].begin = part(s->views, i, m) * stride;
			shares[w0 + i].end = part(s->views, i + 1, m) * stride;
			if (m == 1) {
				shares[w0].dst_begin = a * p->dst_row;
				shares[w0].dst_end = b * p->dst_row;
			}
		}
	}
}

void parload__plan_split(const parload__plan *p, unsigned n, size_t align,
			 parload__share *shares)
{
	for (unsigned w = 0; w < n; w++) {
		parload__share none = { 0, 0, false, 0, 0, 0, 0 };

		shares[w] = none;
	}
	if (p->k_end <= p->k_begin)
		return;
	if (p->s->layout == PARLOAD_LAYOUT_VIEWS)
		split_views(p, n, align, shares);
	else
		split_rows(p, n, shares);
}

void parload__cursor_init(parload__cursor *c, const parload__plan *p,
			  const parload__share *sh)
{
	c->p = p;
	c->sh = sh;
	c->stride = parload__share_stride(p, sh);
	c->pos = sh->begin;
	c->file = 0;
	c->strip = c->range_strip = UINT64_MAX;
	c->run = 0;
	c->k = c->stride ? c->pos / c->stride : 0;
	c->q = c->stride ? c->pos % c->stride : 0;
	c->hdr = hdr_bytes(p, sh);
	c->band = (uint64_t)(sh->row_end - sh->row_begin) * p->row_bytes;
	c->pix_off = p->d->header + sh->row_begin * p->row_bytes;
	c->pix_dst = (sh->row_begin - p->s->row_start) / p->bin * p->take;
	c->plain = p->s->layout == PARLOAD_LAYOUT_VIEWS && p->s->view_step &&
		   !p->strips && !p->crop && !p->whole_rows && !p->in_place &&
		   c->band && c->stride == c->hdr + c->band &&
		   (!c->hdr || c->pix_off == c->hdr);
	c->compact = false;
	c->records = 0;
}

uint64_t parload__cursor_done(const parload__cursor *c)
{
	return c->k;
}

/* The destination of the pixel bytes at byte b of file row r (an absolute
 * row) of output view k: where they go and how many follow contiguously in
 * both the file and memory, up to the end of the share's band. */
static unsigned char *row_dest(const parload__plan *p, const parload__share *sh,
			       uint64_t k, uint64_t r, uint64_t b,
			       uint64_t *len)
{
	const parload_shape *s = p->s;
	/* The output row: a bin's detector rows all land on it. */
	const uint64_t rr = (r - s->row_start) / p->bin;
	unsigned char *row;

	/* Sinograms are read in one plan of every view (k_begin 0). */
	row = s->layout == PARLOAD_LAYOUT_VIEWS ?
		      p->pixels + (k - p->k_begin) * s->view_bytes +
			      rr * p->take :
		      p->pixels + (rr * s->views + k) * p->take;
	if (p->whole_rows) {
		/* One file row, converted into its selected columns. */
		*len = p->row_bytes - b;
		return row;
	}
	if (!p->crop) {
		/* Whole rows: in view layout the rest of the band follows. */
		*len = s->layout == PARLOAD_LAYOUT_VIEWS ?
			       (sh->row_end - r) * p->row_bytes - b :
			       p->row_bytes - b;
		return row + (p->unit_in == p->unit_out ?
				      b :
				      b / p->unit_in * p->unit_out);
	}
	if (b < p->skip) {
		*len = p->skip - b;
		return NULL;
	}
	if (b < p->skip + p->take) {
		*len = p->skip + p->take - b;
		return row + b - p->skip;
	}
	*len = p->row_bytes - b;
	return NULL;
}

/* The file holding stream view v and the offset of v's record in it;
 * views come in order, so the last answer is tried first. */
static uint64_t record_of(parload__cursor *c, uint64_t v)
{
	const parload__plan *p = c->p;
	const parload__file *f = &p->files[c->file];

	if (v < f->first || v >= f->first + f->views) {
		c->file = parload__file_of(p->files, p->nfiles, v);
		f = &p->files[c->file];
	}
	return parload__record_at(p->d, v - f->first);
}

/* Row r (absolute), byte b of stream view v in a container: the strip
 * that holds it, where in its file (or, decoded, in its rows) and how many
 * of its bytes follow up to the strip's last row. */
static uint64_t strip_pos(parload__cursor *c, uint64_t v, uint64_t r,
			  uint64_t b, uint64_t *len)
{
	const parload__plan *p = c->p;
	const parload__strips *t = p->strips;
	const uint64_t j = r / t->rows, r0 = j * t->rows;
	const uint64_t end = PARLOAD__MIN(r0 + t->rows, (uint64_t)p->d->height);
	const parload__strip st = parload__strip_of(
		t, (v * t->per_view + j) * parload__strips_tiles(t), &c->run);
	const uint64_t at = (r - r0) * p->row_bytes + b;

	c->file = st.file;
	c->strip = v * t->per_view + j;
	*len = PARLOAD__MIN(*len, (end - r) * p->row_bytes - b);
	return p->decoded ? at : st.off + at;
}

/* The cursor's position (view k, byte q of its stream): its file offset,
 * destination and the bytes that follow it contiguously in both; *row
 * says the bytes are a file row to convert.  The common positions, a
 * view's start and the start of its rows, need no division. */
static unsigned char *locate(parload__cursor *c, uint64_t *off, uint64_t *len,
			     bool *row)
{
	const parload__plan *p = c->p;
	const parload__share *sh = c->sh;
	const uint64_t k = c->k, hb = hdr_bytes(p, sh);
	const uint64_t v = p->s->view_start + k * p->s->view_step;
	uint64_t q = c->q, r, b, rec = 0;
	unsigned char *dst;

	*row = false;
	if (!p->strips)
		rec = record_of(c, v);
	if (q < hb) {
		*off = rec + q;
		*len = hb - q;
		return p->native ?
			       (unsigned char *)&p->headers[k - p->k_begin] + q :
			       p->raw_headers + (k - p->k_begin) * hb + q;
	}
	q -= hb;
	r = sh->row_begin + (q ? q / p->row_bytes : 0);
	b = q ? q % p->row_bytes : 0;
	*row = p->whole_rows || p->in_place;
	dst = row_dest(p, sh, k, r, b, len);
	*off = p->strips ? strip_pos(c, v, r, b, len) :
			   rec + p->d->header + r * p->row_bytes + b;
	return dst;
}

/* The most bytes a piece may take of the room left in its batch: all of
 * it, or where the piece is converted in place (row, the plan's
 * in_place), whole units (one at least, to start a batch). */
static uint64_t cut_at(const parload__cursor *c, uint64_t room, bool row,
		       int cnt)
{
	const uint64_t unit = c->p->unit_in;

	if (!row)
		return room;
	room -= room % unit;
	return cnt ? room : PARLOAD__MAX(room, unit);
}

/* Piece i: len bytes to place, copied as they are. */
static inline void put(struct iovec *iov, bool *rows, int i, void *place,
		       uint64_t len)
{
	iov[i].iov_base = place;
	iov[i].iov_len = (size_t)len;
	if (rows)
		rows[i] = false;
}

/* Whole records from view c->k on as one range (c->compact): as many as
 * the batch, the share, the file and the share's pixels hold, when each
 * record is a header and all of its view's pixels and the next record
 * follows it in the file.  The range goes to view c->k's pixels: the
 * records take hdr bytes a view more than their pixels, so it may reach
 * past the last view's pixels, but no further than dst_end, which no
 * other worker writes.  Per range, not per view: the reader finds each
 * piece by strides as it compacts.  Returns 1 (the range is iov[0]) or 0
 * when none starts here. */
static int records_range(parload__cursor *c, struct iovec *iov, bool *rows,
			 size_t max_bytes, uint64_t *off, size_t *in_file)
{
	const parload__plan *p = c->p;
	const parload_shape *s = p->s;
	const parload__share *sh = c->sh;
	const parload__file *f = &p->files[c->file];
	const uint64_t stride = c->stride, step = s->view_step;
	const uint64_t v = s->view_start + c->k * step;
	const uint64_t place = (c->k - p->k_begin) * s->view_bytes;
	uint64_t n;

	if (!c->compact || !c->hdr || c->band != s->view_bytes ||
	    (p->native && c->hdr != sizeof(*p->headers)) ||
	    p->d->record_size * step != stride || v < f->first ||
	    v - f->first >= f->views || place < sh->dst_begin ||
	    place >= sh->dst_end)
		return 0;
	n = max_bytes / stride;
	n = PARLOAD__MIN(n, (sh->end - c->pos) / stride);
	n = PARLOAD__MIN(n, (f->first + f->views - v + step - 1) / step);
	n = PARLOAD__MIN(n, (sh->dst_end - place) / stride);
	if (n == 0)
		return 0;
	*off = parload__record_at(p->d, v - f->first);
	*in_file = c->file;
	put(iov, rows, 0, p->pixels + place, n * stride);
	c->pos += n * stride;
	c->k += n;
	c->records = n;
	return 1;
}

/* The pieces of whole views of plain records (c->plain) from view c->k
 * on, while they fit in the batch and follow each other in the file: what
 * locate() yields for them, each view's header and band placed by adding
 * a stride.  Tiny views are two pieces of a few hundred bytes each, and
 * locate()'s general case cost more than copying them: a one-thread load
 * of 200,000 views of 256 bytes ran 51 M instructions here (128 a piece,
 * a fifth of its samples); this takes 6 M.  Returns the new count; stops
 * before the first view it does not take whole, which the general case
 * then takes. */
static int plain_views(parload__cursor *c, struct iovec *iov, bool *rows,
		       int cnt, int max_iov, size_t *total, size_t max_bytes,
		       uint64_t *off, size_t *in_file, uint64_t *next_off)
{
	const parload__plan *p = c->p;
	const parload_shape *s = p->s;
	const parload__file *f = &p->files[c->file];
	const uint64_t stride = c->stride, hdr = c->hdr, band = c->band;
	const uint64_t step = s->view_step, v = s->view_start + c->k * step;
	const uint64_t i = c->k - p->k_begin, apart = p->d->record_size * step;
	/* Where view k's pieces start in the file, and their places. */
	const uint64_t lead = hdr ? 0 : c->pix_off;
	const size_t view_bytes = (size_t)s->view_bytes;
	const size_t head_bytes = p->native ? sizeof(*p->headers) : (size_t)hdr;
	unsigned char *pix = p->pixels + i * view_bytes + c->pix_dst;
	unsigned char *head = p->native ? (unsigned char *)&p->headers[i] :
			      p->raw_headers ? p->raw_headers + i * hdr :
					       NULL;
	uint64_t at, n;

	if (v < f->first || v - f->first >= f->views)
		return cnt; /* another file: the general case finds it */
	at = parload__record_at(p->d, v - f->first) + lead;
	/* With pieces in the batch, c->file is the batch's file: the
	 * general case ends a batch at a file change before adding to it. */
	if (cnt > 0 && at != *next_off)
		return cnt; /* a gap in the file: the next read starts here */
	/* The views that fit whole in the iovecs, the batch, the share and
	 * the file; one, unless each view's pieces end where the next
	 * view's start (the record holds nothing else). */
	n = (uint64_t)(max_iov - cnt) / (hdr ? 2 : 1);
	n = PARLOAD__MIN(n, (max_bytes - *total) / stride);
	n = PARLOAD__MIN(n, (c->sh->end - c->pos) / stride);
	n = PARLOAD__MIN(n, (f->first + f->views - v + step - 1) / step);
	if (apart != stride)
		n = PARLOAD__MIN(n, 1);
	if (n == 0)
		return cnt;
	if (cnt == 0) {
		*off = at;
		*in_file = c->file;
	}
	for (uint64_t j = 0; j < n; j++) {
		if (hdr) {
			put(iov, rows, cnt++, head, hdr);
			head += head_bytes;
		}
		put(iov, rows, cnt++, pix, band);
		pix += view_bytes;
	}
	*next_off = at + (n - 1) * apart + stride;
	c->pos += n * stride;
	c->k += n;
	*total += (size_t)(n * stride);
	return cnt;
}

/* Whether a batch of views far smaller than itself (cnt pieces, total
 * bytes, at most max_bytes) ends here, between two views, the next not
 * fitting whole: the next batch starts with a whole view (tiny views are
 * then read in whole records, see read_batch.c's read_records), at the
 * cost of less than a sixteenth of the batch, and every load of the same
 * views cuts its reads alike, whatever it converts.  Larger views keep
 * batches of max_bytes: a cold load wants its requests whole. */
static bool ends_between_views(const parload__cursor *c, int cnt,
			       size_t total, size_t max_bytes, uint64_t end)
{
	return cnt > 0 && c->q == 0 && c->stride <= max_bytes / 16 &&
	       total + c->stride > max_bytes && c->pos + c->stride <= end;
}

/* How much of the piece at the cursor (len bytes of it, a row to convert
 * or not, whole: the plan's whole_rows) the batch takes, with room bytes
 * left in it, no further than the share's end: 0 when it waits for the
 * next batch.  A row to convert is never cut: it goes whole or waits (a
 * bounce buffer holds at least one).  A piece converted in place is cut
 * between two units. */
static uint64_t piece_fits(const parload__cursor *c, uint64_t len, bool row,
			   bool whole, int cnt, uint64_t room, uint64_t end)
{
	len = PARLOAD__MIN(len, end - c->pos);
	if (row && whole && cnt > 0 && len > room)
		return 0;
	if (!row || !whole)
		len = PARLOAD__MIN(len, cut_at(c, room, row, cnt));
	return len;
}

/* The piece, len bytes for dst, as the batch's iov[cnt], and the cursor
 * past it: a packed piece's bytes go to the tail of its place, and a
 * piece ends at its view's end at the most. */
static void take_piece(parload__cursor *c, struct iovec *iov, bool *rows,
		       int cnt, unsigned char *dst, uint64_t len, bool row,
		       bool whole)
{
	if (row && !whole && c->p->unit_in != c->p->unit_out)
		dst += len / c->p->unit_in * c->p->unit_out - len;
	iov[cnt].iov_base = dst;
	iov[cnt].iov_len = (size_t)len;
	if (rows)
		rows[cnt] = row;
	c->pos += len;
	c->q += len;
	if (c->q >= c->stride) {
		c->k++;
		c->q -= c->stride;
	}
}

int parload__cursor_next(parload__cursor *c, struct iovec *iov, bool *rows,
			 int max_iov, size_t max_bytes, uint64_t *off,
			 const parload__file **file)
{
	const uint64_t end = c->sh->end;
	const bool whole = c->p->whole_rows;
	uint64_t next_off = 0, in_strip = UINT64_MAX;
	size_t total = 0, in_file = 0;
	int cnt = 0;

	c->records = 0;
	if (c->plain && c->q == 0 && c->pos < end &&
	    records_range(c, iov, rows, max_bytes, off, &in_file)) {
		*file = &c->p->files[in_file];
		c->range_strip = in_strip;
		return 1;
	}
	while (cnt < max_iov && total < max_bytes && c->pos < end) {
		uint64_t o, len;
		bool row;
		unsigned char *dst;

		if (c->plain && c->q == 0) {
			const int was = cnt;

			cnt = plain_views(c, iov, rows, cnt, max_iov, &total,
					  max_bytes, off, &in_file, &next_off);
			if (cnt > was)
				continue;
			if (cnt > 0 && cnt + (c->hdr ? 2 : 1) > max_iov &&
			    c->pos + c->stride <= end)
				break;
		}
		if (ends_between_views(c, cnt, total, max_bytes, end))
			break;
		dst = locate(c, &o, &len, &row);
		if (cnt == 0) {
			*off = o;
			in_file = c->file;
			in_strip = c->strip;
		} else if (o != next_off || c->file != in_file ||
			   (c->p->decoded && c->strip != in_strip)) {
			break; /* a gap in the file: the next read starts here */
		}
		len = piece_fits(c, len, row, whole, cnt, max_bytes - total,
				 end);
		if (len == 0)
			break;
		take_piece(c, iov, rows, cnt++, dst, len, row, whole);
		total += (size_t)len;
		next_off = o + len;
	}
	if (cnt) {
		*file = &c->p->files[in_file];
		c->range_strip = in_strip;
	}
	return cnt;
}

void parload__piece_convert(const parload__plan *p, const struct iovec *piece,
			    const unsigned char *src)
{
	const uint64_t units = piece->iov_len / p->unit_in;
	unsigned char *head = (unsigned char *)piece->iov_base -
			      (units * p->unit_out - piece->iov_len);

	if (p->unit_in == p->unit_out && src == piece->iov_base)
		parload__swap_in_place(head, piece->iov_len, p->unit_in);
	else
		p->convert(head, src, 0,
			   (uint32_t)(units * p->unit_out /
				      p->d->bytes_per_pixel));
}
