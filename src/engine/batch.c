/*
 * batch.c - views delivered while the load runs (parload_request.on_batch):
 * in file order, each batch completely read and checked before the caller
 * sees it, the next batch already being read while the caller works on
 * this one.
 *
 * A batch is one pass of the workers (pass.c) over a range of views,
 * so every batch is read by all the workers and placed by first touch as a
 * whole load is.  The caller's thread starts the pass for batch b + 1,
 * then hands batch b to the callback, then waits for b + 1: reading and the
 * caller's work overlap, and the load takes about the longer of the two.
 *
 * With a window (window_bytes), batches go to two buffers of at most that
 * size used in turn instead of a dataset that holds every view: a file far
 * larger than memory runs through twice the window.
 *
 * Following a file still being written (PARLOAD_REQ_FOLLOW), a batch is
 * the complete views there are, up to its size: the load waits (sleeping,
 * from 1 ms up to 10 ms between looks at the file's size) while the file
 * has no new complete view, and gives up after timeout seconds without
 * growth.
 */
#include "engine/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* About this many pixel bytes a batch, by default: small enough that the
 * first views arrive within milliseconds.  A file's batches then double,
 * up to GROWN_BATCH_BYTES: each is a pass of the workers, which ends
 * waiting for the slowest (the one whose part starts on a huge page
 * nobody has touched zeroes it).  The reference stream, 2 threads
 * (bench/batches, 11 alternated runs): 54.4 ms in batches of 4 MiB, 51.0
 * in 8, 40.4 in 16, 38.1 in 32, 36.2 in one; the first batch after 1.9,
 * 4.2, 5.5 and 8.3 ms.  Windows keep batches of DEFAULT_BATCH_BYTES: their
 * memory is touched already, and a batch that fits in the cache is read
 * back faster by the callback (bench/batches' checksum through a window of
 * 16 MiB, one thread: 49.1 ms in 4 MiB batches, 56.1 growing to 16 MiB). */
#define DEFAULT_BATCH_BYTES ((uint64_t)4 << 20)
#define GROWN_BATCH_BYTES ((uint64_t)32 << 20)

typedef struct batches {
	parload__ctx *c;
	parload__pass *pass;
	uint64_t per;            /* views per batch (the next one's) */
	uint64_t max_per;        /* ... which doubles up to this */
	parload_buffers win[2];  /* windows, or none */
	bool windowed;
	uint64_t avail;          /* selected views complete in the file */
} batches;

uint64_t parload__batch_views(const parload__ctx *c)
{
	const parload_request *r = c->req;
	const uint64_t vb = c->shape.view_bytes;
	uint64_t n;

	if (r->batch_views)
		n = r->batch_views;
	else
		n = (r->batch_bytes ? r->batch_bytes : DEFAULT_BATCH_BYTES) / vb;
	if (r->window_bytes)
		n = PARLOAD__MIN(n ? n : 1, r->window_bytes /
						    (vb + PARLOAD_VIEW_HEADER_SIZE +
							     (c->raw_headers ?
								      c->d.header :
								      0)));
	return PARLOAD__MAX(n, 1);
}

uint64_t parload__view_read_bytes(const parload__ctx *c)
{
	/* A binned load reads bin detector rows for each of its rows. */
	const uint64_t bin = c->corr.on && c->corr.bin ? c->corr.bin : 1;

	return (c->raw_headers || c->d.format == PARLOAD_FORMAT_PARLOAD ?
			c->d.header :
			0) +
	       (uint64_t)c->shape.rows * bin * c->d.row_size;
}

int parload__deliver(parload__ctx *c, uint64_t k_begin, uint64_t k_end,
		     const parload_view_header *headers,
		     const unsigned char *raw_headers, const void *pixels,
		     parload_error *err)
{
	const parload_shape *s = &c->shape;
	/* Progress in the file's bytes: what a view's record costs to read. */
	const uint64_t rec = parload__view_read_bytes(c);
	parload_batch b;

	b.first = k_begin;
	b.count = k_end - k_begin;
	b.headers = headers;
	b.raw_headers = raw_headers;
	b.raw_header_size = raw_headers ? c->d.header : 0;
	b.pixels = pixels;
	b.view_bytes = s->view_bytes;
	b.views_done = k_end;
	b.views_total = s->views;
	b.bytes_done = k_end * rec;
	b.bytes_total = s->views * rec;
	b.seconds = parload__now() - c->t0;
	if (c->req->on_batch(&b, c->req->batch_arg) == 0)
		return 0;
	return parload__fail_path(err, PARLOAD_ECANCELED, 0, c->path,
				  "load canceled after %" PRIu64 " of %" PRIu64
				  " views",
				  k_end, s->views);
}

static int fail_canceled(parload__ctx *c, uint64_t k)
{
	return parload__fail_path(c->err, PARLOAD_ECANCELED, 0, c->path,
				  "load canceled after %" PRIu64 " of %" PRIu64
				  " views",
				  k, c->shape.views);
}

/* The selected views whose records lie wholly within size bytes. */
static uint64_t complete(const parload__ctx *c, uint64_t size)
{
	const parload_shape *s = &c->shape;
	uint64_t files;

	if (size < c->d.offset)
		return 0;
	/* The last record's gap may be missing. */
	files = (size - c->d.offset + c->d.gap) / c->d.record_size;
	files = PARLOAD__MIN(files, c->declared);
	if (files <= s->view_start)
		return 0;
	return PARLOAD__MIN(s->views,
			    (files - s->view_start + s->view_step - 1) /
				    s->view_step);
}

/* How many selected views the file holds now. */
static int look(batches *bs)
{
	parload__ctx *c = bs->c;
	struct stat st;

	if (parload__sys_fstat(c->fd, &st) != 0)
		return parload__fail_path(c->err, PARLOAD_EIO, errno, c->path,
					  "cannot stat file");
	c->size = (uint64_t)st.st_size;
	bs->avail = complete(c, c->size);
	return 0;
}

/* Following: wait until the file holds output view k (more than k
 * selected views), or until it has not grown for the request's timeout
 * (then *stalled). */
static int wait_for_views(batches *bs, uint64_t k, bool *stalled)
{
	parload__ctx *c = bs->c;
	const uint64_t need = parload__record_at(
		&c->d, parload_shape_view(&c->shape, k) + 1) - c->d.gap;
	int rc = parload__source_wait(c, need, k);

	bs->avail = complete(c, c->size);
	*stalled = rc == 0 && bs->avail <= k;
	return rc;
}

/* Where output view k goes: the dataset, or window i. */
static void dest(batches *bs, int i, uint64_t k, parload_buffers *to)
{
	parload_dataset *ds = bs->c->out;
	const uint64_t raw = bs->c->raw_headers ? bs->c->d.header : 0;

	if (bs->windowed) {
		*to = bs->win[i];
		return;
	}
	to->headers = ds->headers + k;
	to->raw_headers = raw ? ds->raw_headers + k * raw : NULL;
	to->pixels = (unsigned char *)ds->pixels + k * bs->c->shape.view_bytes;
}

static void start(batches *bs, int i, uint64_t k, uint64_t end)
{
	parload_buffers to;

	dest(bs, i, k, &to);
	parload__pass_start(bs->pass, k, end, to.headers, to.raw_headers,
			    to.pixels);
}

/* The file stopped growing after k views: the complete views are the
 * load (allowed truncation), or the error says how many there are. */
static int stalled(batches *bs, uint64_t k)
{
	parload__ctx *c = bs->c;

	if (!(c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED))
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
				     PARLOAD_NONE, c->size,
				     "file stopped growing: %" PRIu64 " of the "
				     "%" PRIu64 " selected views are complete "
				     "after %g s without growth",
				     k, c->shape.views, c->req->timeout);
	c->shape.views = c->out->shape.views = k;
	c->d.count = c->out->desc.count =
		(c->size - c->d.offset + c->d.gap) / c->d.record_size;
	return 0;
}

/* The next batch's end, from k: its size, or what the file holds; the
 * batch after it grows. */
static uint64_t batch_end(batches *bs, uint64_t k)
{
	const uint64_t end = PARLOAD__MIN(k + bs->per, bs->avail);

	bs->per = PARLOAD__MIN(2 * bs->per, bs->max_per);
	return end;
}

/* The batch from output view k started, into window i, unless the
 * caller asked to stop (cancel or on_wait); following, once the file
 * holds view k (*stop: it stopped growing first).  *end: its end. */
static int begin(batches *bs, int i, uint64_t k, uint64_t *end, bool *stop)
{
	parload__ctx *c = bs->c;
	int rc = 0;

	if (parload__waiter_stopped(&c->wait))
		return fail_canceled(c, k);
	if ((c->req->flags & PARLOAD_REQ_FOLLOW) && bs->avail <= k)
		rc = wait_for_views(bs, k, stop);
	if (rc || *stop)
		return rc;
	*end = batch_end(bs, k);
	start(bs, i, k, *end);
	return 0;
}

/* Read ahead: the batch after end (*next_end), into the other window,
 * while the caller works on the one before; false when the file holds
 * no view after end yet, or there is none. */
static bool read_ahead(batches *bs, int i, uint64_t end, uint64_t *next_end)
{
	if (end >= bs->c->shape.views || bs->avail <= end)
		return false;
	*next_end = batch_end(bs, end);
	start(bs, bs->windowed ? i ^ 1 : i, end, *next_end);
	return true;
}

static int run_batches(batches *bs)
{
	parload__ctx *c = bs->c;
	const bool follow = c->req->flags & PARLOAD_REQ_FOLLOW;
	uint64_t k = 0, end = 0, next_end = 0;
	bool pending = false, stop = false, halted = false;
	parload_error stopped;
	int i = 0, rc = 0;

	while (rc == 0 && k < c->shape.views) {
		parload_buffers to;

		if (!pending && ((rc = begin(bs, i, k, &end, &stop)) || stop))
			break;
		rc = parload__pass_wait(bs->pass);
		if (rc)
			break;
		dest(bs, i, k, &to);
		pending = false;
		if (end < c->shape.views && follow)
			rc = look(bs);
		if (rc == 0)
			pending = read_ahead(bs, i, end, &next_end);
		/* The callback runs while the next pass reads.  Its stop is
		 * the load's error, written once that pass has joined: the
		 * pass's workers write theirs to c->err as they fail. */
		if (rc == 0) {
			rc = parload__deliver(c, k, end, to.headers,
					      to.raw_headers, to.pixels,
					      &stopped);
			halted = rc != 0;
		}
		/* Stopped or failed: wait for the pass in flight. */
		if (pending && rc)
			(void)parload__pass_wait(bs->pass);
		if (halted && c->err)
			*c->err = stopped;
		k = end;
		if (pending) {
			i = bs->windowed ? i ^ 1 : i;
			end = next_end;
		}
	}
	return rc == 0 && stop ? stalled(bs, k) : rc;
}

int parload__read_batches(parload__ctx *c)
{
	batches bs;
	int rc;

	memset(&bs, 0, sizeof(bs));
	bs.c = c;
	bs.per = bs.max_per = parload__batch_views(c);
	/* The default grows; a size asked for, or a window's, does not. */
	if (!c->req->batch_views && !c->req->batch_bytes &&
	    !c->req->window_bytes)
		bs.max_per = PARLOAD__MAX(bs.per, GROWN_BATCH_BYTES /
							  c->shape.view_bytes);
	bs.windowed = c->req->window_bytes != 0;
	bs.avail = c->shape.views;
	if (c->req->flags & PARLOAD_REQ_FOLLOW)
		bs.avail = complete(c, c->size);
	/* The windows first: the pass binds them to nodes only if they are
	 * mappings (c->arrays_mapped). */
	rc = 0;
	for (int i = 0; rc == 0 && bs.windowed && i < 2; i++)
		rc = parload__window_alloc(c, bs.per, &bs.win[i]);
	if (rc == 0)
		rc = parload__pass_new(c, &bs.pass);
	if (rc == 0)
		rc = run_batches(&bs);
	parload__pass_free(bs.pass);
	for (int i = 0; i < 2; i++)
		parload_buffers_free(&bs.win[i]);
	return rc;
}
