/*
 * load.c - one load, whatever the strategy: the pipeline every strategy
 * shares, written once.
 *
 *   1. open the source            source.c  (a path or a descriptor; a
 *                                           regular file or a stream)
 *   2. read the file header       source.c  (validated, fitted to the size)
 *   3. resolve the selection      select.c  (before anything is allocated)
 *   4. lay out the dataset        dataset.c (own memory or the caller's)
 *   5. read                       the strategy's one step (strategy.c)
 *   6. check the views            verify.c  (unless the strategy did)
 *   7. check the size again       source.c
 *   8. close and fill the stats
 *
 * A failure at any step undoes the steps before it: the caller gets a zeroed
 * dataset and nothing stays allocated or open.  The public entry points at
 * the end are all one request (parload_request) with some fields set.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Step 2: the header's bytes, from the request (validated elsewhere and
 * trusted to describe this file: validated again, not read), from the
 * strategy, or read from the file. */
static int header(parload__ctx *c, const parload__strategy *st,
		  const parload_file_header *given)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	int rc = 0;

	if (given && c->stream)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a known header needs a regular "
					  "file");
	if (given)
		memcpy(b, given, sizeof(b));
	else if (st->header)
		rc = st->header(c, b);
	else
		rc = parload__source_read_header(c, b);
	return rc ? rc : parload__source_header(c, b);
}

/* Step 3: the selection against the file, the name of the file in the
 * message.  With a truncated file allowed, a selection that reaches views
 * the header promises but the file lacks says so. */
static int resolve(parload__ctx *c, const parload_selection *sel)
{
	parload_file_header promised = c->h;
	parload_shape ignored;
	parload_error e;
	int rc;

	rc = parload_selection_resolve(&c->h, sel, &c->shape, &e);
	if (rc == 0) {
		c->whole = parload__shape_is_whole(&c->shape, &c->h);
		return 0;
	}
	promised.view_count = c->declared;
	if (c->declared > c->h.view_count &&
	    parload_selection_resolve(&promised, sel, &ignored, NULL) == 0)
		return parload__fail_path(c->err, PARLOAD_ETRUNCATED, 0,
					  c->path,
					  "the selection reaches past the %"
					  PRIu64 " complete views of the %"
					  PRIu64 " the header promises",
					  c->h.view_count, c->declared);
	return parload__fail_path(c->err, rc, 0, c->path, "%s", e.message);
}

/* What a batched load cannot do. */
static int check_batches(parload__ctx *c, const parload__strategy *st)
{
	const parload_request *r = c->req;
	const uint64_t need = c->shape.view_bytes + PARLOAD_VIEW_HEADER_SIZE;

	if (!r->on_batch && (r->window_bytes || (r->flags & PARLOAD_REQ_FOLLOW)))
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a window and following a file need "
					  "batches (on_batch)");
	if (!r->on_batch)
		return 0;
	if (st != &parload__strategy_parallel &&
	    st != &parload__strategy_pipe)
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "the %s strategy does not deliver "
					  "batches: use the parallel strategy",
					  st->name);
	if (c->shape.layout != PARLOAD_LAYOUT_VIEWS)
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "batches are delivered in view "
					  "layout: a sinogram needs every view "
					  "before it is complete");
	if (r->window_bytes && (c->stream || c->into))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "a window reads a regular file into "
					  "memory of its own");
	if (r->window_bytes && r->window_bytes < need)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a window of %" PRIu64 " bytes is "
					  "smaller than one view (%" PRIu64
					  " bytes with its header)",
					  r->window_bytes, need);
	return 0;
}

/* What the strategy cannot do, said before anything is read. */
static int check_support(parload__ctx *c, const parload__strategy *st)
{
	int rc = check_batches(c, st);

	if (rc)
		return rc;
	if (!c->whole && !st->selections)
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "the %s strategy loads whole files "
					  "only: a selection needs the "
					  "parallel strategy",
					  c->stream ? "stream" : st->name);
	return parload__verify_supported(&c->verify, c->err);
}

/* Step 8 for a load that succeeded. */
static void fill_stats(parload__ctx *c, int strategy)
{
	parload_stats *st = &c->out->stats;

	st->seconds = parload__now() - c->t0;
	st->bytes_read = c->io.bytes;
	st->read_calls = c->io.calls;
	st->threads = c->threads ? c->threads : 1;
	st->strategy = (parload_strategy)strategy;
	st->declared_views = c->declared;
	st->crc_checked = c->verify.crc ? c->shape.views : 0;
}

/* Steps 6 and 7. */
static int finish(parload__ctx *c)
{
	uint64_t last;
	int rc;

	if (c->checked)
		rc = parload__verify_finish(&c->verify, &c->bad, c->out,
					    c->err);
	else
		rc = parload__verify_all(c);
	if (rc || c->shape.views == 0)
		return rc;
	last = parload_shape_view(&c->shape, c->shape.views - 1);
	return parload__source_recheck(c, parload__view_offset(&c->h, last + 1));
}

static int run(parload_loader *loader, const parload_request *req,
	       parload_dataset *out, parload_error *err)
{
	const parload_options *o = parload__loader_options(loader);
	const parload__strategy *st = parload__strategy_get(o->strategy);
	const parload_selection *sel = req->selection ? req->selection :
							&o->selection;
	parload__ctx c;
	off_t pos = -1;
	int rc;

	memset(&c, 0, sizeof(c));
	c.req = req;
	c.path = req->path ? req->path : req->name;
	c.opts = o;
	c.err = err;
	c.into = req->into;
	c.engine = parload__loader_engine(loader);
	c.out = out;
	c.t0 = parload__now();
	rc = parload__source_open(&c, req);
	if (c.stream)
		st = &parload__strategy_pipe;
	/* A caller's regular file: strategies that read with read() move its
	 * offset, which is put back. */
	if (rc == 0 && !c.own_fd && !c.stream)
		pos = parload__sys_lseek(c.fd, 0, SEEK_CUR);
	if (rc == 0)
		rc = header(&c, st, req->header);
	if (rc == 0)
		rc = resolve(&c, sel);
	parload__verify_init(&c.verify, &c);
	if (rc == 0)
		rc = check_support(&c, st);
	if (rc == 0)
		rc = parload__dataset_alloc(&c);
	if (rc == 0)
		rc = st->read(&c);
	if (rc == 0)
		rc = finish(&c);
	if (st->release)
		st->release(&c);
	if (pos >= 0)
		(void)parload__sys_lseek(c.fd, pos, SEEK_SET);
	parload__source_close(&c);
	parload__badlist_free(&c.bad);
	if (rc) {
		parload_dataset_free(out);
		return rc;
	}
	fill_stats(&c, c.stream ? PARLOAD_STRATEGY_SEQUENTIAL : o->strategy);
	return 0;
}

/* ---- the public entry points: one request each ---- */

void parload_request_init(parload_request *req)
{
	if (!req)
		return;
	memset(req, 0, sizeof(*req));
	req->fd = -1;
	req->timeout = 10.0;
}

int parload_loader_run(parload_loader *loader, const parload_request *req,
		       parload_dataset *out, parload_error *err)
{
	char label[32];
	parload_request r;

	if (!out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0,
					  req ? req->path : NULL,
					  "no dataset to load into");
	memset(out, 0, sizeof(*out));
	if (!loader || !req)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  loader ? "no request" : "no loader");
	r = *req;
	if (!r.path && r.fd == -1 && !r.name)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no file given");
	if (r.flags & ~PARLOAD_REQ_FOLLOW)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, r.path,
					  "unknown request flags 0x%x",
					  r.flags);
	if (!r.path && !r.name) {
		snprintf(label, sizeof(label), "fd %d", r.fd);
		r.name = label;
	}
	return run(loader, &r, out, err);
}

int parload_loader_load_select(parload_loader *loader, const char *path,
			       const parload_selection *sel,
			       const parload_buffers *into,
			       parload_dataset *out, parload_error *err)
{
	parload_request r;

	if (!path) {
		if (out)
			memset(out, 0, sizeof(*out));
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no file given");
	}
	parload_request_init(&r);
	r.path = path;
	r.selection = sel;
	r.into = into;
	return parload_loader_run(loader, &r, out, err);
}

int parload_loader_load(parload_loader *loader, const char *path,
			parload_dataset *out, parload_error *err)
{
	return parload_loader_load_select(loader, path, NULL, NULL, out, err);
}

int parload_loader_load_into(parload_loader *loader, const char *path,
			     const parload_buffers *into, parload_dataset *out,
			     parload_error *err)
{
	if (!into) {
		if (out)
			memset(out, 0, sizeof(*out));
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "no buffers to load into");
	}
	return parload_loader_load_select(loader, path, NULL, into, out, err);
}

int parload_loader_load_fd(parload_loader *loader, int fd, const char *name,
			   parload_dataset *out, parload_error *err)
{
	char label[32];
	parload_request r;

	if (!name) {
		snprintf(label, sizeof(label), "fd %d", fd);
		name = label;
	}
	parload_request_init(&r);
	r.fd = fd;
	r.name = name;
	return parload_loader_run(loader, &r, out, err);
}

int parload_load(const char *path, const parload_options *opts,
		 parload_dataset *out)
{
	parload_error *err = opts ? opts->error : NULL;
	parload_loader *l;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	rc = parload_loader_new(&l, opts, err);
	if (rc)
		return rc;
	rc = parload_loader_load(l, path, out, err);
	parload_loader_free(l);
	return rc;
}
