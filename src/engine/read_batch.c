/*
 * read_batch.c - a worker's read of one batch of its cursor: with preadv
 * straight into the places, through the bounce buffer (then scattered,
 * scatter.c), a range of tiny views' whole records compacted where they
 * land, sinograms stored far from a mapped window of the file, and for
 * direct I/O the whole blocks of each piece that agrees with its place
 * straight in, the rest through the bounce buffer, a batch ahead where
 * the kernel takes reads in flight (read_ahead.c).
 */
#include "engine/pass.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* PARLOAD_OPT_MAP_SINOGRAMS: each worker maps the file a window of this
 * many bytes at a time (page tables for 64 MiB are 128 KiB, however
 * large the file), checks before each batch that the file still holds
 * it (fstat), and stores the batch's rows far straight from the mapping.
 * A batch the window cannot give (past the size the load described or
 * the file's size now, a mapping refused) is read through the bounce
 * buffer as without the option, so a file cut short before a batch
 * fails with PARLOAD_ETRUNCATED.  A truncation during a batch's copy
 * raises SIGBUS, and the workers copy nearly all the time: the reference
 * stream cut to 100 MB by another process 5 to 60 ms into a mapped load
 * killed 11 of 12 loads (read, all 12 failed cleanly or completed).
 * Faulting each batch in first with MADV_POPULATE_READ, which answers a
 * page past the end with EFAULT, leaves the same window and cost more
 * than the faults the copy takes (whole file 1.08-1.17 x the view layout
 * against 0.98-1.07 x with the size check; medians of each round's
 * ratio, 15 alternated rounds).  The reference stream as sinograms, 2
 * threads, over its view layout: whole file 0.97-1.10, rows 16:48
 * 1.00-1.13, where the reads give 1.11-1.21 and 1.09-1.31. */
#define MAP_WINDOW ((uint64_t)64 << 20)

void parload__unmap_window(parload__worker_io *io)
{
	if (io->win)
		(void)parload__sys_munmap((void *)io->win, io->win_len);
	io->win = NULL;
}


/* Tiny views, compacted in place: a range of whole records (the
 * cursor's, parload__cursor.compact: each a header of hb bytes, then its
 * view's vb bytes of pixels) is read as it lies in the file straight into
 * the views' pixels, from the first view's, and compacted there while it
 * is in the core's cache: each header copied out to its place, each
 * view's pixels moved down over the headers before them.  Record m's
 * bytes start at m x (hb + vb), its pixels' place at m x vb: no later
 * record's bytes are written over before they are read.  Against the
 * bounce buffer this saves a copy into memory that is not in the cache:
 * the kernel's copy lands in the pixels' pages, as the fresh-memory
 * floor's does.  The cursor yields the range as one buffer, so nothing
 * is done a view but the copy, the move and the check below.  200,000
 * views of 256 bytes over the fresh-memory floor (medians of each
 * round's ratio, alternated rounds): 2 threads 1.42 through the bounce
 * buffer, 1.37 compacted from two iovecs a view, 1.13 from one range (21
 * rounds; 1.26 for the iovecs in the same run); 1 thread 1.41, 1.34,
 * 1.13 (15 rounds).  A one-thread load ran 27 M instructions of its own
 * from the iovecs, 12 M from the range, half of them memmove's.
 *
 * The headers are checked as they are copied (view_index, as
 * parload__check_views does for the rest), when they are the share's
 * next unchecked ones: the check at the share's end then has nothing to
 * read back from memory.  Loads that verify CRCs check views as they
 * complete instead (check_done). */
static int read_records(parload__pass *j, parload__worker_io *io,
			const struct iovec *range, uint64_t off,
			const parload__file *f, unsigned w, parload_error *e)
{
	const parload__plan *p = &j->plan;
	const uint64_t n = io->records, k = io->k;
	const size_t vb = (size_t)p->s->view_bytes;
	const size_t hb = range->iov_len / n - vb;
	const bool typed = p->native && hb == sizeof(parload_view_header);
	const bool check = typed && j->check && !j->c->verify.crc &&
			   k == io->next;
	const uint64_t step = p->s->view_step;
	unsigned char *pix = range->iov_base;
	const unsigned char *src = pix;
	parload_view_header *vh = typed ? parload__pass_header(j, k) : NULL;
	unsigned char *raw = !typed && p->raw_headers ?
				     p->raw_headers + (k - p->k_begin) * hb :
				     NULL;
	uint64_t want = parload_shape_view(p->s, k);
	bool bad = false;
	int rc;

	rc = parload__pread_upto(f->fd, pix, range->iov_len, range->iov_len,
				 off, j->max_read, &j->stats[w], p->d, f, e);
	if (rc)
		return rc;
	for (uint64_t m = 0; m < n; m++) {
		if (vh) {
			memcpy(vh, src, sizeof(*vh));
			bad |= vh->view_index != want;
			want += step;
			vh++;
		} else if (raw && hb == sizeof(*vh)) {
			memcpy(raw, src, sizeof(*vh)); /* written inline */
			raw += hb;
		} else if (raw) {
			memcpy(raw, src, hb);
			raw += hb;
		}
		memmove(pix, src + hb, vb);
		pix += vb;
		src += hb + vb;
	}
	parload__drop_read(io->drop, f, off, range->iov_len);
	if (!check)
		return 0;
	/* The error names the first bad one. */
	if (bad)
		return parload__check_views(&j->c->d, p->s, parload__pass_header(j, k),
					    NULL, k, n, false, j->c->path, e);
	io->next += n;
	return 0;
}

/* Bytes [off, off + n) of f in memory, from the worker's window of the
 * file mapped (moved on when it does not hold them); NULL when they are
 * to be read instead (MAP_WINDOW). */
static const unsigned char *mapped_batch(parload__worker_io *io,
					 const parload__file *f,
					 uint64_t off, uint64_t n)
{
	const uint64_t page = PARLOAD__PAGE, from = off & ~(page - 1);
	struct stat st;
	void *p;

	if (!io->win || io->win_file != f || from < io->win_off ||
	    off + n > io->win_off + io->win_len) {
		const uint64_t len = PARLOAD__MIN(
			PARLOAD__MAX(MAP_WINDOW, off + n - from),
			f->size > from ? f->size - from : 0);

		if (off + n > from + len || len > SIZE_MAX)
			return NULL; /* past the end: the read says so */
		parload__unmap_window(io);
		p = parload__sys_mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED,
				      f->fd, (off_t)from);
		if (p == MAP_FAILED) {
			io->no_map = true;
			return NULL;
		}
		io->win = p;
		io->win_file = f;
		io->win_off = from;
		io->win_len = (size_t)len;
	}
	/* The file as it is now must hold the batch: a page past its end
	 * would raise SIGBUS. */
	if (parload__sys_fstat(f->fd, &st) != 0 ||
	    (uint64_t)st.st_size < off + n)
		return NULL;
	return io->win + (off - io->win_off);
}


/* Read one batch, cnt places from off in f: straight into them, through
 * the bounce buffer, or, for direct I/O, as the whole aligned blocks that
 * hold it, through the bounce buffer. */
static int read_bounced(parload__pass *j, unsigned w, parload__worker_io *io,
			struct iovec *iov, const bool *rows, int cnt,
		      uint64_t off, const parload__file *f, parload_error *e)
{
	const uint64_t n = parload__iov_bytes(iov, cnt);
	const uint64_t at = j->direct ? off & ~(PARLOAD__DIRECT_ALIGN - 1) : off;
	const uint64_t need = off - at + n;
	int rc;

	if (io->records)
		return read_records(j, io, iov, off, f, w, e);
	if (j->mapped && !io->no_map) {
		const unsigned char *src = mapped_batch(io, f, off, n);

		if (src) {
			j->stats[w].bytes += n;
			return parload__scatter(j, io, src, iov, rows, cnt, e);
		}
	}
	if (io->aio)
		return parload__ahead_bounced(j, w, io, iov, rows, cnt, off, f,
					      e);
	if (!io->bounce)
		rc = parload__preadv_full(f->fd, iov, cnt, off, j->max_read,
					  &j->stats[w], j->plan.d, f,
					  j->c->path, e);
	else
		/* One buffer, so that a failure names the view at the
		 * failing offset, not the batch's first. */
		rc = parload__pread_upto(
			j->direct ? f->dfd : f->fd, io->bounce,
			j->direct ? (need + PARLOAD__DIRECT_ALIGN - 1) &
					    ~(PARLOAD__DIRECT_ALIGN - 1) :
				    need,
			need, at, j->max_read, &j->stats[w], j->plan.d, f, e);
	if (rc == 0 && io->bounce)
		rc = parload__scatter(j, io, io->bounce + (off - at), iov, rows, cnt, e);
	else if (rc == 0 && j->plan.in_place)
		parload__convert_read(j, iov, rows, cnt);
	if (rc == 0)
		parload__drop_read(io->drop, f, off, n);
	return rc;
}

/* What a direct batch reads through the bounce buffer: a run of pieces
 * that follow each other in the file, from off (at most one more than the
 * batch's pieces: a straight piece's tail starts the next run). */
typedef struct bounce_run {
	struct iovec iov[PARLOAD__BATCH_IOV + 1];
	bool rows[PARLOAD__BATCH_IOV + 1];
	uint64_t off;
	int n;
} bounce_run;

static void run_add(bounce_run *r, uint64_t at, unsigned char *place,
		    uint64_t len, bool row)
{
	if (r->n == 0)
		r->off = at;
	r->rows[r->n] = row;
	r->iov[r->n++] = (struct iovec){ place, (size_t)len };
}

static int run_flush(parload__pass *j, unsigned w, parload__worker_io *io,
		     bounce_run *r, const parload__file *f, parload_error *e)
{
	const int n = r->n;

	r->n = 0;
	return n ? read_bounced(j, w, io, r->iov, r->rows, n, r->off, f, e) : 0;
}

/* Direct I/O: the whole blocks of each piece whose file offset and place
 * agree modulo the block, straight into the place, one request for the
 * pieces that follow each other in memory too; every other byte of the
 * batch through the bounce buffer, in runs of the pieces between (a
 * straight piece's head and tail are such runs' ends).  A headerless
 * 229 MB stream, cold, 2 threads: 123 ms, against 156 ms through the
 * bounce buffer and 122 ms for two threads reading it O_DIRECT straight
 * into a fresh mapping (bench/uringfloor --direct --depth 1; medians of 11
 * shuffled rounds); with 8 and 16 threads, as fast as that floor with as
 * many. */
static int read_direct(parload__pass *j, unsigned w, parload__worker_io *io,
		       const struct iovec *iov, const bool *rows, int cnt,
		       uint64_t off, const parload__file *f, parload_error *e)
{
	bounce_run r;
	uint64_t pos = off;
	int rc = 0;

	r.n = 0;
	for (int k = 0; rc == 0 && k < cnt; k++) {
		unsigned char *place = iov[k].iov_base;
		const bool row = rows[k];
		uint64_t len = iov[k].iov_len, a, b;

		/* Pieces that follow each other in memory too (whole views,
		 * the headers apart) are one span. */
		while (place && k + 1 < cnt &&
		       iov[k + 1].iov_base == place + len)
			len += iov[++k].iov_len;
		a = (pos + PARLOAD__DIRECT_ALIGN - 1) & ~(PARLOAD__DIRECT_ALIGN - 1);
		b = (pos + len) & ~(PARLOAD__DIRECT_ALIGN - 1);
		if (!place || (((uintptr_t)place - pos) & (PARLOAD__DIRECT_ALIGN - 1)) ||
		    b <= a) {
			run_add(&r, pos, place, len, row);
			pos += len;
			continue;
		}
		if (a > pos)
			run_add(&r, pos, place, a - pos, row);
		rc = run_flush(j, w, io, &r, f, e);
		if (rc == 0 && io->aio)
			rc = parload__ahead_straight(j, w, io, place + (a - pos),
						     b - a, a, f, e);
		else if (rc == 0)
			rc = parload__pread_upto(f->dfd, place + (a - pos),
						 (size_t)(b - a), (size_t)(b - a),
						 a, j->max_read, &j->stats[w],
						 j->plan.d, f, e);
		if (b < pos + len)
			run_add(&r, b, place + (b - pos), pos + len - b, row);
		pos += len;
	}
	return rc ? rc : run_flush(j, w, io, &r, f, e);
}

int parload__read_batch(parload__pass *j, unsigned w, parload__worker_io *io,
			struct iovec *iov, const bool *rows, int cnt,
			uint64_t off, const parload__file *f, parload_error *e)
{
	return j->straight ? read_direct(j, w, io, iov, rows, cnt, off, f, e) :
			     read_bounced(j, w, io, iov, rows, cnt, off, f, e);
}
