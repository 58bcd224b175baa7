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
	bool bind_memory;
	atomic_int failed; /* the first error's code, 0 while none */
} job;

/* Keep the first error only: the one that stopped the load. */
static void report(job *j, const parload_error *e)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&j->failed, &expected, e->code) &&
	    j->l->err)
		*j->l->err = *e;
}

static void work(void *arg, unsigned w)
{
	job *j = arg;
	const parload__slice *s = &j->slices[w];
	struct iovec iov[BATCH_IOV];
	parload__cursor c;
	parload_error e;
	uint64_t off;
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
	parload__cursor_init(&c, j->h, s, j->headers, j->pixels);
	while (rc == 0 && !atomic_load_explicit(&j->failed,
						memory_order_relaxed)) {
		cnt = parload__cursor_next(&c, iov, BATCH_IOV, j->max_read,
					   &off);
		if (cnt == 0)
			break;
		rc = parload__preadv_full(j->fd, iov, cnt, off, j->max_read,
					  &j->stats[w], j->h, j->l->path, &e);
	}
	/* Check the headers while they are still in this core's cache. */
	if (rc == 0 && !atomic_load(&j->failed))
		rc = parload__check_views(j->h, j->headers + s->view_begin,
					  NULL, s->view_begin,
					  s->view_end - s->view_begin, false,
					  j->l->path, &e);
	if (rc != 0)
		report(j, &e);
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
	uint64_t size;
	job j;
	int fd, rc;

	memset(&j, 0, sizeof(j));
	rc = parload__open(l->path, &fd, &size, l->err);
	if (rc)
		return rc;
	rc = parload__read_file_header(fd, size, o->max_read, l->path, &h,
				       &head, l->err);
	if (rc == 0)
		rc = parload__dataset_alloc(l, &h);
	if (rc) {
		close(fd);
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
	j.slices = calloc(e->workers, sizeof(*j.slices));
	j.stats = calloc(e->workers, sizeof(*j.stats));
	if (!j.slices || !j.stats) {
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
	}
out:
	close(fd);
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
		st->seconds = parload__now() - t0;
	} else {
		parload_dataset_free(l->out);
	}
	free(j.slices);
	free(j.stats);
	return rc;
}
