/*
 * share.c - one worker's share of a pass: its reading gear (bounce
 * buffers, a decoded plan's strip reader, a corrected row, a dropper),
 * its pages bound to its node, a raw stream's typed headers made, and the
 * walk of its cursor (plan.c), a batch at a time (read_batch.c), the
 * views checked while they are in this core's cache.
 */
#include "engine/pass.h"

#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

static int io_open(parload__pass *j, unsigned w, parload__worker_io *io,
		   parload_error *e)
{
	int rc;

	memset(io, 0, sizeof(*io));
	io->drop = &j->drop[w];
	/* Gaps of whole views are nobody's; those between rows may be
	 * another worker's (bands) or another process's (a parload-mpi
	 * rank's rows). */
	parload__drop_init(io->drop, j->c,
			   !j->plan.bands &&
				   parload__shape_full_payload(&j->c->shape,
							       &j->c->d));
	if (j->plan.decoded) {
		rc = parload__strip_reader_open(&io->strips, j->plan.strips,
						j->plan.d, j->plan.files, e);
		io->strips.max_read = j->max_read;
		io->strips.cols[0] = j->plan.s->col_start;
		io->strips.cols[1] = j->plan.s->col_start +
				     j->plan.s->cols * j->plan.bin;
		if (rc)
			return rc;
	}
	if (j->plan.correct && j->plan.convert &&
	    !(io->row = parload__sys_malloc((size_t)j->plan.s->cols *
					    j->plan.bin *
					    j->plan.d->bytes_per_pixel)))
		return parload__fail_nomem(e, j->c->path);
	if (j->plan.correct && j->plan.bin > 1 &&
	    !(io->acc = parload__sys_malloc((size_t)j->plan.s->cols *
					    sizeof(*io->acc))))
		return parload__fail_nomem(e, j->c->path);
	if (!j->bounce)
		return 0;
	io->len = j->bounce_size + (j->direct ? 2 * PARLOAD__DIRECT_ALIGN : 0);
	if (j->direct)
		return parload__direct_buffers(j, w, io, e);
	io->bounce = parload__sys_malloc(io->len);
	return io->bounce ? 0 : parload__fail_nomem(e, j->c->path);
}

static void io_close(parload__pass *j, parload__worker_io *io)
{
	/* No read may still be filling memory let go of below. */
	if (io->aio)
		parload__aio_settle(io->aio);
	parload__sys_free(io->b);
	parload__unmap_window(io);
	atomic_fetch_add(&j->decoded, io->strips.decoded);
	parload__strip_reader_close(&io->strips);
	parload__drop_flush(io->drop);
	parload__sys_free(io->row);
	parload__sys_free(io->acc);
	if (io->map_len)
		(void)parload__sys_munmap(io->bounce, io->map_len);
	else
		parload__sys_free(io->bounce);
}


/* The same from a decoded strip's rows: bytes [off, off + n) of strip
 * i, decoded by this worker (once, however many batches take its
 * rows). */
static int read_decoded(parload__pass *j, unsigned w, parload__worker_io *io,
			const struct iovec *iov, const bool *rows, int cnt,
			uint64_t off, uint64_t i, parload_error *e)
{
	const uint64_t n = parload__iov_bytes(iov, cnt);
	const parload__plan *p = &j->plan;
	const unsigned char *buf;
	int rc;

	/* A whole chunk of one frame whose rows go to one place as they
	 * are: decoded there, without the copy from the worker's buffer. */
	if (cnt == 1 && off == 0 && iov[0].iov_base && !io->crc &&
	    !p->correct && !p->in_place && !p->convert && !j->far &&
	    (rc = parload__strip_decode_into(&io->strips, i, iov[0].iov_base,
					     iov[0].iov_len, &j->stats[w],
					     e)) != 1)
		return rc;
	buf = parload__strip_get(&io->strips, i, off, (size_t)n, &j->stats[w],
				 e);
	if (!buf)
		return e->code;
	return parload__scatter(j, io, buf, iov, rows, cnt, e);
}

/* Bind the whole pages of the pixels a share fills to its worker's node:
 * an edge page shared with a neighbour stays wherever first touch puts it. */
static void bind_share(parload__pass *j, unsigned w, const parload__share *sh)
{
	parload__engine *e = j->c->engine;
	uintptr_t a = (uintptr_t)(j->plan.pixels + sh->dst_begin);
	uintptr_t b = (uintptr_t)(j->plan.pixels + sh->dst_end);

	a = (a + PARLOAD__PAGE - 1) & ~(uintptr_t)(PARLOAD__PAGE - 1);
	b &= ~(uintptr_t)(PARLOAD__PAGE - 1);
	if (sh->dst_end > sh->dst_begin && b > a)
		(void)parload__topology_bind_memory(e->topo, &e->places[w],
						    (void *)a, b - a);
}

/* Check the views from *next up to the last one the cursor has completed
 * (no further than whole, the end of those wholly in this share),
 * view_index and CRC, while they are still in this core's cache, and move
 * *next past them.  Returns parload__verify_views' code: 0 (with
 * keep-going, bad CRCs are only added to the worker's list), PARLOAD_ECRC
 * for the first bad CRC, or another failure; *e describes it. */
static int check_done(parload__pass *j, unsigned w, const parload__cursor *cur,
		      uint64_t whole, uint64_t *next, parload_error *e)
{
	const uint64_t done = PARLOAD__MIN(parload__cursor_done(cur), whole);
	int rc;

	if (done <= *next)
		return 0;
	rc = parload__verify_views(&j->c->verify, parload__pass_header(j, *next),
				   parload__pass_pixels(j, *next), *next, done - *next,
				   &j->bad[w], e);
	*next = done;
	return rc;
}

/* A raw stream's typed headers: output views [hb, he) are stream views
 * shape_view(k), and nothing else is known of them. */
static void make_headers(parload__pass *j, uint64_t hb, uint64_t he)
{
	const float *angles = j->plan.strips ? j->plan.strips->angles : NULL;
	const uint64_t step = j->plan.s->view_step;
	parload_view_header *vh = parload__pass_header(j, hb);
	uint64_t v = hb < he ? parload_shape_view(j->plan.s, hb) : 0;

	for (uint64_t k = hb; k < he; k++, vh++, v += step) {
		memset(vh, 0, sizeof(*vh));
		vh->view_index = v;
		if (angles)
			vh->angle_deg = angles[v];
	}
}

/* The caller asked to stop (parload_request.cancel or on_wait).  Workers
 * look before each read, so that a load in one pass (no batches) ends
 * within a read of each worker too; the one worker that reads on the
 * caller's thread (no pool) gives the caller its turns there. */
static bool canceled(const parload__pass *j)
{
	parload__waiter *w = &j->c->wait;

	return (!j->c->engine->pool && parload__waiter_due(w)) ||
	       parload__waiter_stopped(w);
}

static int fail_canceled(const parload__pass *j, parload_error *e)
{
	return parload__fail_path(e, PARLOAD_ECANCELED, 0, j->c->path,
				  "load canceled while views %" PRIu64
				  " to %" PRIu64 " of %" PRIu64 " were read",
				  j->plan.k_begin, j->plan.k_end - 1,
				  j->c->shape.views);
}

/* The share's start: its pages bound to its node, its gear opened, a raw
 * stream's typed headers made (output views [hb, he)), its cursor at its
 * first byte. */
static int share_open(parload__pass *j, unsigned w, uint64_t hb, uint64_t he,
		      parload__worker_io *io, parload__cursor *cur,
		      parload_error *e)
{
	const parload__share *sh = &j->shares[w];
	int rc;

	if (j->bind_memory)
		bind_share(j, w, sh);
	rc = io_open(j, w, io, e);
	io->next = hb;
	if (!j->plan.native && sh->headers)
		make_headers(j, hb, he);
	parload__cursor_init(cur, &j->plan, sh);
	if (j->rowcrc) {
		io->crc = &j->rowcrc[w];
		io->bad = &j->bad[w];
		io->sh = sh;
		io->stride = cur->stride;
	}
	/* Tiny records go through the bounce buffer unless they can be
	 * compacted where they land (read_records): bytes copied as they
	 * are, into the view layout. */
	cur->compact = io->bounce && !j->direct && !j->far && !io->crc &&
		       !j->plan.correct && !j->plan.in_place &&
		       !j->plan.convert;
	return rc;
}

/* The share's batches, one after the other, until its cursor ends, a
 * read fails, another worker has failed or the caller asks to stop; the
 * views of each checked (below whole, those wholly in the share) as
 * they complete. */
static int walk(parload__pass *j, unsigned w, parload__worker_io *io,
		parload__cursor *cur, uint64_t whole, parload_error *e)
{
	const size_t batch = io->bounce ? PARLOAD__MIN(j->batch,
						       j->bounce_size) :
					  j->batch;
	struct iovec iov[PARLOAD__BATCH_IOV];
	bool rows[PARLOAD__BATCH_IOV];
	const parload__file *f = NULL;
	uint64_t off;
	int cnt, rc = 0;

	while (rc == 0 && !atomic_load_explicit(&j->failed,
						memory_order_relaxed)) {
		if (canceled(j))
			return fail_canceled(j, e);
		io->k = cur->k;
		io->q = cur->q;
		cnt = parload__cursor_next(cur, iov, rows, PARLOAD__BATCH_IOV,
					   batch, &off, &f);
		if (cnt == 0)
			break;
		io->records = cur->records;
		rc = j->plan.decoded ?
			     read_decoded(j, w, io, iov, rows, cnt, off,
					  cur->range_strip, e) :
			     parload__read_batch(j, w, io, iov, rows, cnt, off,
						 f, e);
		/* Reads in flight count when they are in (finish_oldest). */
		if (rc == 0 && !io->aio)
			parload__pass_progress(j, parload__iov_bytes(iov, cnt));
		if (rc == 0 && j->check && j->c->verify.crc && !j->rowcrc)
			rc = check_done(j, w, cur, whole, &io->next, e);
	}
	return rc;
}

/* The share's end, after rc: the reads still in flight finished, its
 * row CRCs flushed, the headers of output views up to he that no check
 * has seen yet checked while they are still in this core's cache, and a
 * failure kept as the pass's.  A bad CRC is not: the share's first bad
 * view is in its list, which is all the load needs to fail, and the
 * other workers go on, so that the lowest bad view of the file is the
 * one reported. */
static void share_close(parload__pass *j, unsigned w, parload__worker_io *io,
			uint64_t he, int rc, parload_error *e)
{
	if (rc == 0 && io->fly_n)
		rc = parload__ahead_drain(j, w, io, e);
	if (rc == 0 && io->crc)
		rc = parload__rowcrc_flush(io->crc, io->bad, e);
	if (rc == 0 && j->check && io->next < he && !atomic_load(&j->failed))
		rc = parload__check_views(&j->c->d, j->plan.s,
					  parload__pass_header(j, io->next),
					  NULL, io->next, he - io->next, false,
					  j->c->path, e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		parload__pass_keep_error(j, e);
	io_close(j, io);
}

void parload__share_work(void *arg, unsigned w)
{
	parload__pass *j = arg;
	parload__cursor cur;
	parload__worker_io io;
	parload_error e;
	uint64_t hb, he, whole;
	int rc;

	if (j->shares[w].begin >= j->shares[w].end)
		return;
	memset(&e, 0, sizeof(e));
	whole = parload__share_views(j, &j->shares[w], &hb, &he);
	rc = share_open(j, w, hb, he, &io, &cur, &e);
	if (rc == 0)
		rc = walk(j, w, &io, &cur, whole, &e);
	share_close(j, w, &io, he, rc, &e);
}
