/*
 * pass.c - a pass of the workers: the extent plan (plan.c) of a range of
 * output views split into one share per worker, the workers started on
 * their shares (share.c) and joined, and the bad views they found
 * gathered, in order, into the load's list.  A load without batches is
 * one pass over every view; batches (batch.c) are one pass each.
 *
 * How a pass reads is settled here, once, from the load: the bytes a
 * preadv, a bounce buffer or not and its size, direct I/O and its reads
 * a batch ahead, sinograms stored far, from a mapped window or not.
 */
#include "engine/pass.h"

#include <errno.h>
#include <stdlib.h>

/* Bytes per preadv when CRCs are checked or pixels swapped in place:
 * each batch is checked (see PARLOAD_OPT_VERIFY_CRC) or swapped right
 * after it is read, while it is still in the core's cache.  A u16be load
 * of 2,000 x 64 x 896 (in-process, best of 9, 1 and 2 threads) took
 * 1.05-1.08 x the little-endian time of the same file in batches of 1
 * MiB, 1.11-1.16 x in batches of 8 MiB, the default max_read. */
#define CACHE_BATCH ((size_t)1 << 20)
/* Runs of memory this small are read through a bounce buffer: one pread
 * per BOUNCE bytes, then memcpy to their places.  The kernel charges tens
 * of nanoseconds per preadv buffer, which for 256-byte views (two buffers
 * each, header and payload) costs more than copying the bytes twice
 * (bench/, experiments 2 and 3).  Sinograms go through it whatever their
 * rows' size: the kernel's copy of a row of 1,792 bytes (the reference
 * stream) to its own place, far from the last, read each line of the
 * place from memory before writing it; a row copied from the bounce
 * buffer with stores that bypass the cache (store_far) does not.  The
 * whole reference stream as sinograms took 1.30-1.42 x its view layout's
 * time so (1.41-1.60 x straight to the rows' places), rows 16:48 1.12-1.36
 * x (1.23-1.45 x): medians of 12 to 20 alternated runs each, 2 threads.
 * Rows stored far straight from the file mapped into memory (one copy of
 * each byte, no read call) match the view layout's time, but a load that
 * touches a mapping dies of SIGBUS when the file is truncated under it
 * (mmap.c), where a read fails with an error naming the view and offset:
 * so the rows are read unless the caller asks for the mapping
 * (PARLOAD_OPT_MAP_SINOGRAMS, MAP_WINDOW below). */
#define BOUNCE_BELOW ((uint64_t)4096)
#define BOUNCE ((size_t)64 << 10)
/* Sinograms split by views read runs of whole views: this much a read,
 * what stays in a core's cache until it is scattered (the reference
 * stream as sinograms, 2 threads: 42.2 ms through 256 KiB, 41.2 through
 * 512 KiB, 41.5 through 1 MiB, 46.2 through 4 MiB, 44.1 through 64 KiB;
 * medians of 11 alternated runs). */
#define FAR_BOUNCE ((size_t)512 << 10)

/* After the join, view layout: worker w checks the CRC of its share's last
 * view when that view continues into the next share (every part is in
 * memory now).  Without keep-going, a view after the lowest bad view found
 * needs no check: the load fails at that one, and the parts of this one
 * may not all have been read. */
static void check_split(void *arg, unsigned w)
{
	parload__pass *j = arg;
	uint64_t hb, he, whole;
	parload_error e;
	int rc;

	whole = parload__share_views(j, &j->shares[w], &hb, &he);
	/* Row CRCs join their runs in gather_bad instead. */
	if (whole >= he || whole >= j->first_bad || j->rowcrc)
		return;
	rc = parload__verify_views(&j->c->verify, parload__pass_header(j, whole),
				   parload__pass_pixels(j, whole), whole, 1, &j->bad[w],
				   &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		parload__pass_keep_error(j, &e);
}

/* After the join, sinogram layout: each worker checks a range of views,
 * whose rows every worker had a part in. */
static void check_scattered(void *arg, unsigned w)
{
	parload__pass *j = arg;
	const uint64_t n = j->plan.s->views, workers = j->c->engine->workers;
	const uint64_t a = n * w / workers, b = n * (w + 1) / workers;
	/* Row CRCs are not the pixels': view_index alone here. */
	parload__verify v = j->c->verify;

	/* Sinograms are one pass over every view: the arrays start at 0. */
	parload_error e;
	int rc;

	if (a >= b)
		return;
	v.crc = v.crc && !j->rowcrc;
	rc = parload__verify_scattered(&v, j->plan.headers,
				       j->plan.pixels, a, b - a, &j->bad[w],
				       &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		parload__pass_keep_error(j, &e);
}

/* The first bad view of a pass, without keep-going: the load fails with
 * it, described now, while its bytes are in the pass's arrays (a window
 * may be reused once the pass is over). */
static int fail_bad(parload__pass *j, uint64_t k)
{
	const parload__verify *v = &j->c->verify;
	const uint64_t i = parload_shape_view(v->s, k);

	if (j->check && !j->rowcrc &&
	    parload__check_views(&j->c->d, v->s, parload__pass_header(j, k),
					     parload__pass_pixels(j, k), k, 1, true,
					     v->path, j->c->err) == PARLOAD_ECRC)
		return PARLOAD_ECRC;
	return parload__fail(j->c->err, PARLOAD_ECRC, 0, v->path, i,
			     parload__record_at(&j->c->d, i) + j->c->d.header,
			     NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Row CRCs: the views several workers read joined and checked, then every
 * bad view into the load's list, in order (a joined view's may fall
 * between a worker's).  A bad CRC found here is described with the others
 * by fail_bad. */
static int gather_rows(parload__pass *j, parload__badlist *all)
{
	const unsigned n = j->c->engine->workers;
	parload__badlist joined = { NULL, 0, 0 };
	parload_error e;
	int rc = parload__rowcrc_finish(j->rowcrc, n, &joined, &e);

	for (unsigned w = 0; w < n; w++)
		parload__rowcrc_free(&j->rowcrc[w]);
	if (rc != 0 && rc != PARLOAD_ECRC) {
		parload__badlist_free(&joined);
		*j->c->err = e;
		return rc;
	}
	rc = parload__badlist_append(all, &joined);
	for (unsigned w = 0; rc == 0 && w < n; w++)
		rc = parload__badlist_append(all, &j->bad[w]);
	if (rc)
		return parload__fail_nomem(j->c->err, j->c->path);
	if (all->n)
		qsort(all->v, all->n, sizeof(*all->v), cmp_u64);
	if (all->n && !j->c->verify.keep_going)
		return fail_bad(j, all->v[0]);
	return 0;
}

/* Join the workers' bad views, in order, into the load's list. */
static int gather_bad(parload__pass *j)
{
	parload__engine *e = j->c->engine;
	parload__badlist *all = &j->c->bad;
	bool split = false;

	j->first_bad = UINT64_MAX;
	for (unsigned w = 0; w < e->workers; w++) {
		uint64_t hb, he;

		if (!j->c->verify.keep_going && j->bad[w].n)
			j->first_bad = PARLOAD__MIN(j->first_bad,
						    j->bad[w].v[0]);
		if (parload__share_views(j, &j->shares[w], &hb, &he) < he)
			split = true;
	}
	if (j->check && split && j->c->verify.crc)
		parload__engine_run(e, check_split, j, &j->c->wait);
	if (!j->check)
		parload__engine_run(e, check_scattered, j, &j->c->wait);
	if (atomic_load(&j->failed))
		return atomic_load(&j->failed);
	if (j->rowcrc)
		return gather_rows(j, all);
	/* Worker w's views all come before worker w + 1's. */
	for (unsigned w = 0; w < e->workers; w++)
		if (parload__badlist_append(all, &j->bad[w]) != 0)
			return parload__fail_path(j->c->err, PARLOAD_ENOMEM,
						  ENOMEM, j->c->path,
						  "out of memory: cannot list "
						  "the views with a bad "
						  "CRC-32C");
	if (all->n && !j->c->verify.keep_going)
		return fail_bad(j, all->v[0]);
	return 0;
}

/* Pixel boundaries between workers: 2 MiB when each share of a pass is
 * large, so a huge page is never filled by two workers, else 4 KiB (a
 * batch of a few megabytes still splits evenly). */
static size_t plan_align(uint64_t bytes, unsigned n)
{
	return bytes / n >= 16 * PARLOAD__HUGE_PAGE ? PARLOAD__HUGE_PAGE :
						      PARLOAD__PAGE;
}

/* How the pass reads, from the load: the bytes a preadv, direct I/O and
 * its reads a batch ahead, a bounce buffer and its size, sinograms stored
 * far (from a mapped window or not), pages bound to nodes. */
static void choose_reads(parload__pass *j)
{
	const parload__ctx *c = j->c;
	parload__engine *e = c->engine;

	j->direct = c->cache == PARLOAD_CACHE_DIRECT;
	j->max_read = parload__max_read(c->opts);
	/* O_DIRECT takes whole blocks only: each request a multiple of one,
	 * max_read rounded down (to one block at least). */
	if (j->direct)
		j->max_read = PARLOAD__MAX(
			j->max_read & ~(size_t)(PARLOAD__DIRECT_ALIGN - 1),
			(size_t)PARLOAD__DIRECT_ALIGN);
	/* The caller's buffers stay where the caller put them, a heap block
	 * where the heap put it. */
	j->bind_memory = !(c->opts->flags & PARLOAD_OPT_NO_BIND) &&
			 c->arrays_mapped && e->topo &&
			 parload__topology_nodes(e->topo) > 1;
	/* Sinograms in bands where memory is bound to nodes: each
	 * worker's sinograms whole on its node. */
	j->plan.bands = j->bind_memory;
	j->check = c->shape.layout == PARLOAD_LAYOUT_VIEWS;
	j->batch = c->verify.crc || j->plan.in_place ?
			   PARLOAD__MIN(j->max_read, CACHE_BATCH) :
			   j->max_read;
	/* Sinograms: every row through it, then stored far. */
	j->far = c->shape.layout != PARLOAD_LAYOUT_VIEWS;
	j->mapped = j->far && c->cache == PARLOAD_CACHE_KEEP &&
		    (c->opts->flags & PARLOAD_OPT_MAP_SINOGRAMS);
	j->bounce = j->far || j->plan.run < BOUNCE_BELOW;
	/* A converted row is read whole into it.  Direct I/O reads every
	 * batch through it, in requests a device likes. */
	j->bounce |= j->direct;
	/* Views checked as they complete (check_done) must be in memory
	 * when their batch's read returns; decoded strips are read by the
	 * strip reader. */
	j->aio = j->direct && !j->plan.decoded &&
		 !(j->check && c->verify.crc && !j->rowcrc);
	if (j->aio && parload__engine_aio_ready(e) != 0)
		j->aio = false;
	j->straight = j->direct && !j->far && !j->plan.correct &&
		      !j->plan.in_place && !j->plan.convert && !j->rowcrc;
	j->bounce_size = PARLOAD__MAX(j->direct ? PARLOAD__DIRECT_BOUNCE :
				      j->far	? FAR_BOUNCE :
						  BOUNCE,
				      j->plan.row_bytes);
}

/* What each of the n workers keeps of the pass: its share, its reads'
 * counts, its bad views, its dropper. */
static int worker_arrays(parload__pass *j, unsigned n)
{
	j->shares = parload__sys_calloc(n, sizeof(*j->shares));
	j->stats = parload__sys_calloc(n, sizeof(*j->stats));
	j->bad = parload__sys_calloc(n, sizeof(*j->bad));
	j->drop = parload__sys_calloc(n, sizeof(*j->drop));
	if (!j->shares || !j->stats || !j->bad || !j->drop)
		return parload__fail_nomem(j->c->err, j->c->path);
	return 0;
}

int parload__pass_new(parload__ctx *c, parload__pass **out)
{
	const unsigned n = c->engine->workers;
	parload__pass *j;
	int rc = parload__engine_ready(c->engine, c->req->on_batch != NULL,
				       c->err);

	*out = j = rc ? NULL : parload__sys_calloc(1, sizeof(*j));
	if (rc)
		return rc;
	if (!j)
		return parload__fail_nomem(c->err, c->path);
	j->c = c;
	c->threads = n;
	c->checked = true;
	atomic_init(&j->failed, 0);
	atomic_init(&j->decoded, 0);
	parload__plan_init(&j->plan, &c->d, c->files, c->nfiles,
			   c->raw_headers, &c->shape);
	if (c->corr.on)
		parload__plan_correct(&j->plan, &c->corr);
	parload__plan_strips(&j->plan, c->strips);
	if (c->corr.on && c->verify.crc &&
	    !(j->rowcrc = parload__sys_calloc(n, sizeof(*j->rowcrc))))
		return parload__fail_nomem(c->err, c->path);
	choose_reads(j);
	return worker_arrays(j, n);
}

void parload__pass_start(parload__pass *j, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels)
{
	const unsigned n = j->c->engine->workers;

	parload__plan_views(&j->plan, k_begin, k_end, headers, raw_headers,
			    pixels);
	for (unsigned w = 0; j->rowcrc && w < n; w++) {
		j->rowcrc[w].v = &j->c->verify;
		j->rowcrc[w].headers = headers;
		j->rowcrc[w].k_begin = k_begin;
	}
	parload__plan_split(&j->plan, n,
			    plan_align((k_end - k_begin) *
					       j->c->shape.view_bytes, n),
			    j->shares);
	parload__engine_start(j->c->engine, parload__share_work, j);
}

int parload__pass_wait(parload__pass *j)
{
	int rc;

	parload__engine_wait(j->c->engine, &j->c->wait);
	for (unsigned w = 0; w < j->c->engine->workers; w++)
		parload__drop_release(&j->drop[w]);
	rc = atomic_load(&j->failed);
	return rc ? rc : gather_bad(j);
}

void parload__pass_free(parload__pass *j)
{
	parload__engine *e;

	if (!j)
		return;
	e = j->c->engine;
	j->c->decoded += atomic_load(&j->decoded);
	for (unsigned w = 0; j->stats && w < e->workers; w++) {
		j->c->io.calls += j->stats[w].calls;
		j->c->io.bytes += j->stats[w].bytes;
	}
	for (unsigned w = 0; j->bad && w < e->workers; w++)
		parload__badlist_free(&j->bad[w]);
	for (unsigned w = 0; j->rowcrc && w < e->workers; w++)
		parload__rowcrc_free(&j->rowcrc[w]);
	parload__sys_free(j->rowcrc);
	parload__sys_free(j->bad);
	parload__sys_free(j->shares);
	parload__sys_free(j->stats);
	parload__sys_free(j->drop);
	parload__sys_free(j);
}
