/*
 * parallel.c - the default strategy: every worker reads its share of the
 * file with preadv straight into its slices of the header and pixel arrays.
 *
 * The calling thread parses the file header and lays out the dataset; the
 * workers then each walk one contiguous file range (plan.c), so together
 * they read the file exactly once, with no staging copy, and each fills
 * (and so first-touches, placing on its own NUMA node) its own pages.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
/* Buffers per preadv: 512 header/payload pairs of tiny views per call. */
#define BATCH_IOV PARLOAD__MIN(IOV_MAX, 1024)
#define HUGE_PAGE ((size_t)2 << 20)
#define PAGE ((size_t)4096)
/* Bytes per preadv when CRCs are checked: each batch is checked right
 * after it is read, while it is still in the core's cache (see
 * PARLOAD_OPT_VERIFY_CRC). */
#define VERIFY_BATCH ((size_t)1 << 20)
/* Records this small are read through a bounce buffer that stays in the
 * core's cache: one pread per BOUNCE bytes, then memcpy to the two arrays.
 * The kernel charges tens of nanoseconds per preadv buffer, which for
 * 256-byte views costs more than copying the bytes twice (bench/,
 * experiments 2 and 3). */
#define BOUNCE_BELOW ((uint64_t)4096)
#define BOUNCE ((size_t)64 << 10)

typedef struct job {
	parload__engine *e;
	const parload__load *l;
	int fd;
	const parload_file_header *h;
	parload_view_header *headers;
	unsigned char *pixels;
	parload__slice *slices;
	parload__io_stats *stats; /* one per worker */
	size_t max_read;
	size_t batch;      /* bytes per preadv */
	bool bounce;       /* small records: read through a bounce buffer */
	bool bind_memory;
	atomic_int failed; /* the first error's code, 0 while none */
	parload__verify verify;
	parload__badlist *bad; /* one per worker, when verify.crc */
	uint64_t first_bad;    /* lowest bad view found by the workers */
} job;

/* Keep the first error only: the one that stopped the load. */
static void report(job *j, const parload_error *e)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&j->failed, &expected, e->code) &&
	    j->l->err)
		*j->l->err = *e;
}

/* The end of the views that lie wholly in s: all of its views but a last
 * one that continues into the next worker's share (plan.c splits views
 * when they are large or few). */
static uint64_t whole_end(const parload__slice *s, uint64_t payload_size)
{
	if (s->view_end > s->view_begin &&
	    s->view_end * payload_size > s->pix_end)
		return s->view_end - 1;
	return s->view_end;
}

/* Read one batch into buf, then scatter it to the places iov names. */
static int read_bounced(job *j, unsigned w, unsigned char *buf,
			const struct iovec *iov, int cnt, uint64_t off,
			parload_error *e)
{
	struct iovec one = { buf, 0 };
	int rc;

	for (int k = 0; k < cnt; k++)
		one.iov_len += iov[k].iov_len;
	/* One buffer through preadv_full, so that a failure names the view
	 * at the failing offset, not the batch's first. */
	rc = parload__preadv_full(j->fd, &one, 1, off, j->max_read,
				  &j->stats[w], j->h, j->l->path, e);
	for (int k = 0; rc == 0 && k < cnt; k++) {
		memcpy(iov[k].iov_base, buf, iov[k].iov_len);
		buf += iov[k].iov_len;
	}
	return rc;
}

static void work(void *arg, unsigned w)
{
	job *j = arg;
	const parload__slice *s = &j->slices[w];
	const uint64_t ps = j->h->payload_size;
	const uint64_t whole = whole_end(s, ps);
	struct iovec iov[BATCH_IOV];
	parload__cursor c;
	parload_error e;
	uint64_t off, next = s->view_begin;
	unsigned char *bounce;
	int cnt, rc = 0;

	if (s->file_begin == s->file_end)
		return;
	if (j->bind_memory) {
		/* Whole pages only: an edge page shared with a neighbour
		 * stays wherever first touch puts it. */
		uintptr_t a = (uintptr_t)(j->pixels + s->pix_begin);
		uintptr_t b = (uintptr_t)(j->pixels + s->pix_end);

		a = (a + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
		b &= ~(uintptr_t)(PAGE - 1);
		if (b > a)
			(void)parload__topology_bind_memory(
				j->e->topo, &j->e->places[w], (void *)a, b - a);
	}
	bounce = j->bounce ? parload__sys_malloc(BOUNCE) : NULL;
	if (j->bounce && !bounce) {
		/* The loop below does not start; the error is reported. */
		rc = parload__fail(&e, PARLOAD_ENOMEM, ENOMEM, j->l->path,
				   PARLOAD_NONE, PARLOAD_NONE, NULL);
	}
	parload__cursor_init(&c, j->h, s, j->headers, j->pixels);
	while (rc == 0 && !atomic_load_explicit(&j->failed,
						memory_order_relaxed)) {
		cnt = parload__cursor_next(&c, iov, BATCH_IOV,
					   bounce ? PARLOAD__MIN(j->batch, BOUNCE) :
						    j->batch,
					   &off);
		if (cnt == 0)
			break;
		if (bounce)
			rc = read_bounced(j, w, bounce, iov, cnt, off, &e);
		else
			rc = parload__preadv_full(j->fd, iov, cnt, off,
						  j->max_read, &j->stats[w],
						  j->h, j->l->path, &e);
		if (rc == 0 && j->verify.crc) {
			/* The views this batch completed, checked while
			 * they are still in this core's cache.  A last
			 * view that continues in the next share waits for
			 * the join (verify_split). */
			uint64_t done = (c.pos - PARLOAD_FILE_HEADER_SIZE) /
					parload__record_size(j->h);

			done = PARLOAD__MIN(done, whole);
			if (done <= next)
				continue;
			rc = parload__verify_views(
				&j->verify, j->headers + next,
				j->pixels + next * ps, next, done - next,
				&j->bad[w], &e);
			next = done;
			/* The share's first bad view is in its list: that
			 * is all the load needs to fail.  The other workers
			 * go on, so that the lowest bad view of the file is
			 * the one reported. */
			if (rc == PARLOAD_ECRC)
				goto out;
		}
	}
	/* Check the headers while they are still in this core's cache (those
	 * the CRC checks above have not). */
	if (rc == 0 && !atomic_load(&j->failed))
		rc = parload__check_views(j->h, j->headers + next, NULL, next,
					  s->view_end - next, false,
					  j->l->path, &e);
	if (rc != 0)
		report(j, &e);
out:
	parload__sys_free(bounce);
}

/* After the join: worker w checks the CRC of its share's last view when
 * that view continues into the next share (every part is in memory now).
 * Without keep-going, a view after the lowest bad view found needs no
 * check: the load fails at that one, and the parts of this one may not
 * all have been read. */
static void verify_split(void *arg, unsigned w)
{
	job *j = arg;
	const parload__slice *s = &j->slices[w];
	const uint64_t ps = j->h->payload_size;
	const uint64_t v = whole_end(s, ps);
	parload_error e;
	int rc;

	if (v == s->view_end || v >= j->first_bad)
		return;
	rc = parload__verify_views(&j->verify, j->headers + v,
				   j->pixels + v * ps, v, 1, &j->bad[w], &e);
	if (rc != 0 && rc != PARLOAD_ECRC)
		report(j, &e);
}

/* The end of a load whose CRCs were checked: the views split between
 * workers, then every worker's bad views, in order. */
static int finish_crc(job *j, unsigned workers)
{
	parload__badlist all = { NULL, 0, 0 };
	bool split = false;
	int rc;

	j->first_bad = UINT64_MAX;
	for (unsigned w = 0; w < workers; w++) {
		if (!j->verify.keep_going && j->bad[w].n)
			j->first_bad = PARLOAD__MIN(j->first_bad,
						    j->bad[w].v[0]);
		if (whole_end(&j->slices[w], j->h->payload_size) !=
		    j->slices[w].view_end)
			split = true;
	}
	if (split) {
		if (j->e->pool)
			parload__pool_run(j->e->pool, verify_split, j);
		else
			for (unsigned w = 0; w < workers; w++)
				verify_split(j, w);
		rc = atomic_load(&j->failed);
		if (rc)
			return rc;
	}
	/* Worker w's views all come before worker w + 1's. */
	for (unsigned w = 0; w < workers; w++) {
		if (parload__badlist_append(&all, &j->bad[w]) != 0) {
			parload__badlist_free(&all);
			return parload__fail(j->l->err, PARLOAD_ENOMEM, ENOMEM,
					     j->l->path, PARLOAD_NONE,
					     PARLOAD_NONE,
					     "out of memory: cannot list the "
					     "views with a bad CRC-32C");
		}
	}
	return parload__verify_finish(&j->verify, &all, j->l->out, j->l->err);
}

/* Pixel boundaries between workers: 2 MiB when each share is large, so a
 * huge page is never filled by two workers, else 4 KiB. */
static size_t plan_align(const parload_file_header *h, unsigned n)
{
	uint64_t total = h->view_count * h->payload_size;

	return total / n >= 16 * HUGE_PAGE ? HUGE_PAGE : PAGE;
}

int parload__load_parallel(parload__engine *e, const parload__load *l)
{
	const double t0 = parload__now();
	const parload_options *o = l->opts;
	parload__io_stats head = { 0, 0 };
	parload_file_header h;
	uint64_t size, declared = 0;
	job j;
	int fd, rc;

	memset(&j, 0, sizeof(j));
	rc = parload__load_open(l, &fd, &size);
	if (rc)
		return rc;
	rc = parload__load_header(l, fd, size, &h, &declared, &head);
	if (rc == 0)
		rc = parload__dataset_alloc(l, &h);
	if (rc) {
		parload__load_close(l, fd);
		return rc;
	}

	j.e = e;
	j.l = l;
	j.fd = fd;
	j.h = &l->out->file_header;
	j.headers = l->out->headers;
	j.pixels = l->out->pixels;
	j.max_read = o->max_read ? PARLOAD__MIN(o->max_read,
						 PARLOAD__KERNEL_MAX_READ) :
				   PARLOAD__DEFAULT_MAX_READ;
	/* The caller's buffers stay where the caller put them. */
	j.bind_memory = !(o->flags & PARLOAD_OPT_NO_BIND) && !l->into &&
			e->topo && parload__topology_nodes(e->topo) > 1;
	atomic_init(&j.failed, 0);
	parload__verify_init(&j.verify, l, j.h);
	j.batch = j.verify.crc ? PARLOAD__MIN(j.max_read, VERIFY_BATCH) :
				 j.max_read;
	j.bounce = h.payload_size < BOUNCE_BELOW;
	j.slices = parload__sys_calloc(e->workers, sizeof(*j.slices));
	j.stats = parload__sys_calloc(e->workers, sizeof(*j.stats));
	if (j.verify.crc)
		j.bad = parload__sys_calloc(e->workers, sizeof(*j.bad));
	if (!j.slices || !j.stats || (j.verify.crc && !j.bad)) {
		rc = parload__fail(l->err, PARLOAD_ENOMEM, 0, l->path,
				   PARLOAD_NONE, PARLOAD_NONE, NULL);
		goto out;
	}
	if (h.view_count) {
		parload__plan(&h, e->workers, plan_align(&h, e->workers),
			      j.slices);
		if (e->pool)
			parload__pool_run(e->pool, work, &j);
		else
			work(&j, 0);
		rc = atomic_load(&j.failed);
		if (rc == 0 && j.verify.crc)
			rc = finish_crc(&j, e->workers);
	}
	if (rc == 0)
		rc = parload__load_recheck(l, fd, parload__view_offset(
						       &h, h.view_count));
out:
	parload__load_close(l, fd);
	if (rc == 0) {
		parload_stats *st = &l->out->stats;

		st->read_calls = head.calls;
		st->bytes_read = head.bytes;
		for (unsigned w = 0; w < e->workers; w++) {
			st->read_calls += j.stats[w].calls;
			st->bytes_read += j.stats[w].bytes;
		}
		st->threads = e->workers;
		st->strategy = PARLOAD_STRATEGY_PARALLEL;
		st->declared_views = declared;
		st->crc_checked = j.verify.crc ? h.view_count : 0;
		st->seconds = parload__now() - t0;
	} else {
		parload_dataset_free(l->out);
	}
	for (unsigned w = 0; j.bad && w < e->workers; w++)
		parload__badlist_free(&j.bad[w]);
	parload__sys_free(j.bad);
	parload__sys_free(j.slices);
	parload__sys_free(j.stats);
	return rc;
}
