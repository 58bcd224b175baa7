/*
 * load.c - one load, whatever the strategy: the pipeline every strategy
 * shares, written once.
 *
 *   1. open the source            source.c  (a path or a descriptor; a
 *                                           regular file or a stream)
 *   2. describe the source        source.c  (parload's header read, or the
 *                                           given layout checked; fitted
 *                                           to the files' sizes)
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
#include "load/load.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Step 2: the description, from the request (a raw layout, or parload's
 * own header read elsewhere and trusted to describe this file), from a
 * .nhdr, or from the file header the strategy or the source reads. */
static int describe(parload__ctx *c, const parload__strategy *st)
{
	const parload_desc *given = parload__source_given(c);
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	int rc;

	if (given && given->format == PARLOAD_FORMAT_PARLOAD && c->stream)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a known header needs a regular "
					  "file");
	if (given)
		return parload__source_describe(c, given);
	if (st && st->header)
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
	parload_desc promised = c->d;
	parload_shape ignored;
	parload_error e;
	int rc;

	rc = parload_selection_resolve(&c->d, sel, &c->shape, &e);
	if (rc == 0) {
		c->whole = parload__shape_is_whole(&c->shape, &c->d);
		return 0;
	}
	promised.count = c->declared;
	if (c->declared > c->d.count &&
	    parload_selection_resolve(&promised, sel, &ignored, NULL) == 0)
		return parload__fail_path(c->err, PARLOAD_ETRUNCATED, 0,
					  c->path,
					  "the selection reaches past the %"
					  PRIu64 " complete views of the %"
					  PRIu64 " the header promises",
					  c->d.count, c->declared);
	return parload__fail_path(c->err, rc, 0, c->path, "%s", e.message);
}

/* What a batched load cannot do. */
static int check_batches(parload__ctx *c, const parload__strategy *st)
{
	const parload_request *r = c->req;
	const uint64_t need = c->shape.view_bytes + PARLOAD_VIEW_HEADER_SIZE +
			      (c->raw_headers ? c->d.header : 0);

	/* A stream is read as it comes: following one bounds the wait for
	 * a FIFO's writer alone (source.c), batches or not. */
	if (!r->on_batch && (r->window_bytes ||
			     ((r->flags & PARLOAD_REQ_FOLLOW) && !c->stream)))
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a window and following a file need "
					  "batches (on_batch)");
	if (!r->on_batch)
		return 0;
	if (!(st->caps & PARLOAD_CAP_BATCHES))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "the %s strategy does not deliver "
					  "batches: use the parallel strategy",
					  parload_strategy_name(c->opts->strategy));
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
	if (!c->whole && !(st->caps & PARLOAD_CAP_SELECT))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "the %s strategy loads whole files "
					  "only: a selection needs the "
					  "parallel strategy",
					  c->stream ? "stream" :
					  parload_strategy_name(c->opts->strategy));
	if (c->d.format != PARLOAD_FORMAT_PARLOAD &&
	    !(st->caps & PARLOAD_CAP_LAYOUTS))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "the %s strategy reads parload's own "
					  "format: a raw layout, a TIFF or an "
					  "HDF5 file needs the parallel "
					  "strategy",
					  parload_strategy_name(c->opts->strategy));
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
	st->cache = c->cache;
	st->strips_decoded = c->decoded;
	st->serial = c->serial;
	memcpy(st->codec, c->codec, sizeof(st->codec));
	st->fallback_files = c->fallbacks;
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
	return parload__source_recheck(c, last);
}

/* What names source s in messages: its path, its first file, the
 * descriptor's name, or "fd N" written into label (size bytes; label
 * NULL: the name, NULL if none). */
static const char *source_label(const parload_source *s, char *label,
				size_t size)
{
	if (s->path || s->path_count)
		return s->path ? s->path : s->paths[0];
	if (s->name || !label)
		return s->name;
	snprintf(label, size, "fd %d", s->fd);
	return label;
}

/* A load's context before its first step; its messages name the source's
 * path, its first file or the descriptor's name. */
static void ctx_init(parload__ctx *c, const parload_request *req,
		     const parload_options *o, parload_error *err)
{
	memset(c, 0, sizeof(*c));
	c->req = req;
	c->path = source_label(&req->source, NULL, 0);
	c->opts = o;
	c->err = err;
	parload__waiter_init(&c->wait, req);
}

/* ---- a corrected load's references ---- */

static bool names_file(const parload_source *s)
{
	return s->path || s->path_count || s->fd >= 0;
}

/* References r's source loaded over the scan's rows and columns (before
 * binning) on the scan's loader, stopped as the scan's load is; what
 * names them in messages, which name their source. */
static int load_refs(parload__ctx *c, const parload_refs *r, const char *what,
		     parload_dataset *ds)
{
	const parload_shape *s = &c->shape;
	const uint32_t bin = s->bin > 1 ? s->bin : 1;
	char label[32];
	parload_selection sel;
	parload_request req;
	parload_desc d;
	int rc;

	parload_selection_init(&sel);
	sel.rows.start = s->row_start;
	sel.rows.stop = (int64_t)s->row_start + s->rows * bin;
	sel.cols.start = s->col_start;
	sel.cols.stop = (int64_t)s->col_start + s->cols * bin;
	parload_request_init(&req);
	req.source = r->source;
	req.selection = &sel;
	req.cancel = c->req->cancel;
	req.on_wait = c->req->on_wait;
	req.wait_arg = c->req->wait_arg;
	req.wait_interval = c->req->wait_interval;
	rc = parload_describe(&req.source, 0, &d, c->err);
	if (rc == 0 && (d.width != c->d.width || d.height != c->d.height))
		return parload__fail_path(
			c->err, PARLOAD_EINVAL, 0,
			source_label(&r->source, label, sizeof(label)),
			"the %s frames are %" PRIu32 " x %" PRIu32 " pixels, "
			"the scan's views %" PRIu32 " x %" PRIu32,
			what, d.width, d.height, c->d.width, c->d.height);
	if (rc == 0)
		rc = parload_loader_run(c->loader, &req, ds, c->err);
	if (rc == 0 && !ds->shape.views)
		return parload__fail_path(
			c->err, PARLOAD_EINVAL, 0,
			source_label(&r->source, label, sizeof(label)),
			"the %s source holds no frames", what);
	return rc;
}

/* References r, loaded if they name a source, reduced by the correction
 * into *out. */
static int reference(parload__ctx *c, const parload_refs *r,
		     const char *what, float **out)
{
	const bool load = names_file(&r->source);
	parload_dataset ds;
	int rc = 0;

	memset(&ds, 0, sizeof(ds));
	if (load)
		rc = load_refs(c, r, what, &ds);
	if (rc == 0)
		rc = parload__correct_reduce(c, r, load ? &ds : NULL, what,
					     out);
	parload_dataset_free(&ds);
	return rc;
}

/* Step 3b: the request's correction checked, then its references loaded
 * and reduced, here, before the scan is read: each a load of its own on
 * this loader, made before the scan's pass, and handed to the
 * correction. */
static int prepare_correction(parload__ctx *c, const parload__strategy *st)
{
	const parload_correction *k = c->req->correct;
	int rc = parload__correct_check(c, st);

	if (rc || !k)
		return rc;
	if (k->darks)
		rc = reference(c, k->darks, "dark", &c->corr.dark);
	if (rc == 0 && k->flats)
		rc = reference(c, k->flats, "flat", &c->corr.scale);
	if (rc == 0)
		parload__correct_ready(c);
	return rc;
}

/* The request's progress totals, from the load's shape; done: the load
 * is over, and what the workers did not count (another strategy, a
 * stream, a followed file that grew or stopped short) is counted now. */
static void progress_totals(parload__ctx *c, bool done)
{
	parload_progress *p = c->req->progress;
	const uint64_t bytes = c->shape.views * parload__view_read_bytes(c);

	if (!p)
		return;
	__atomic_store_n(&p->views_total, c->shape.views, __ATOMIC_RELAXED);
	__atomic_store_n(&p->bytes_total, bytes, __ATOMIC_RELAXED);
	if (done)
		__atomic_store_n(&p->bytes_done, bytes, __ATOMIC_RELAXED);
}

/* Steps 3a to 4, the source described and the selection resolved: what
 * the strategy cannot do refused, a correction's references loaded and
 * reduced, the page-cache mode settled, the dataset laid out. */
static int lay_out(parload__ctx *c, const parload__strategy *st)
{
	int rc = check_support(c, st);

	if (rc == 0)
		rc = prepare_correction(c, st);
	if (rc == 0)
		rc = parload__cache_prepare(c, st->caps & PARLOAD_CAP_DIRECT);
	if (rc == 0)
		rc = parload__dataset_alloc(c);
	if (rc == 0)
		progress_totals(c, false);
	return rc;
}

/* Steps 5 to 7: the strategy's read, then the checks. */
static int read_and_check(parload__ctx *c, const parload__strategy *st)
{
	int rc = st->read(c);

	/* on_wait's answer stands, even if every byte was in already. */
	if (rc == 0 && __atomic_load_n(&c->wait.stop, __ATOMIC_RELAXED))
		rc = parload__fail_path(c->err, PARLOAD_ECANCELED, 0, c->path,
					"load canceled by on_wait after its "
					"last read");
	if (rc == 0)
		rc = finish(c);
	if (rc == 0)
		progress_totals(c, true);
	if (rc == 0)
		parload__cache_after(c);
	return rc;
}

/* Step 8's undoing: what the strategy and the source hold let go of, a
 * caller's file offset put back (pos, or -1). */
static void close_load(parload__ctx *c, const parload__strategy *st,
		       off_t pos)
{
	if (st->release)
		st->release(c);
	if (pos >= 0)
		(void)parload__sys_lseek(c->fd, pos, SEEK_SET);
	/* A static string, which outlives the container's table. */
	c->serial = c->strips ? c->strips->serial : NULL;
	parload__codec_names(c->strips, c->codec, sizeof(c->codec));
	c->fallbacks = c->described ? c->described->got.fallback_files : 0;
	parload__source_close(c);
	parload__correct_free(c);
	parload__badlist_free(&c->bad);
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

	ctx_init(&c, req, o, err);
	c.into = req->into;
	c.engine = parload__loader_engine(loader);
	c.loader = loader;
	c.out = out;
	c.t0 = parload__now();
	rc = parload__source_open(&c, req, true);
	if (c.stream)
		st = &parload__strategy_pipe;
	/* A caller's regular file: strategies that read with read() move its
	 * offset, which is put back. */
	if (rc == 0 && !c.one.own && c.files == &c.one && !c.stream)
		pos = parload__sys_lseek(c.fd, 0, SEEK_CUR);
	if (rc == 0)
		rc = describe(&c, st);
	if (rc == 0)
		rc = resolve(&c, sel);
	parload__verify_init(&c.verify, &c);
	if (rc == 0)
		rc = lay_out(&c, st);
	if (rc == 0)
		rc = read_and_check(&c, st);
	close_load(&c, st, pos);
	if (rc) {
		parload_dataset_free(out);
		return rc;
	}
	/* A stream is read in order, view after view: it reports the
	 * sequential strategy (parload.h). */
	fill_stats(&c, c.stream ? PARLOAD_STRATEGY_SEQUENTIAL : o->strategy);
	return 0;
}

/* ---- the public entry points ---- */

void parload_request_init(parload_request *req)
{
	if (!req)
		return;
	memset(req, 0, sizeof(*req));
	parload_source_init(&req->source);
	req->timeout = 10.0;
}

void parload_source_init(parload_source *src)
{
	if (!src)
		return;
	memset(src, 0, sizeof(*src));
	src->fd = -1;
}

/* What a request must name: one source, known flags. */
static int check_request(const parload_request *r, parload_error *err)
{
	const parload_source *s = &r->source;
	const int given = (s->path != NULL) + (s->path_count != 0) +
			  (s->fd >= 0);

	if (given == 0 && s->fd == -1 && !s->name)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no file given");
	if (given > 1)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, s->path,
					  "a source is one of a path, a list "
					  "of paths or a descriptor");
	if (s->path_count && !s->paths)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "a list of %zu files with no paths",
					  s->path_count);
	if (!(r->wait_interval >= 0 && r->wait_interval <= 86400))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, s->path,
					  "wait_interval %g is not a number "
					  "of seconds from 0 to 86400",
					  r->wait_interval);
	if (s->flags & ~PARLOAD_SRC_CONFINE)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, s->path,
					  "unknown source flags 0x%x",
					  s->flags & ~PARLOAD_SRC_CONFINE);
	if (r->flags & ~(PARLOAD_REQ_FOLLOW | PARLOAD_REQ_NO_RAW_HEADERS))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, s->path,
					  "unknown request flags 0x%x",
					  r->flags);
	return 0;
}

int parload_loader_run(parload_loader *loader, const parload_request *req,
		       parload_dataset *out, parload_error *err)
{
	char label[32];
	parload_request r;
	int rc;

	if (!out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0,
					  req ? req->source.path : NULL,
					  "no dataset to load into");
	memset(out, 0, sizeof(*out));
	if (!loader || !req)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  loader ? "no request" : "no loader");
	rc = check_request(req, err);
	if (rc)
		return rc;
	r = *req;
	if (!r.source.path && !r.source.path_count)
		r.source.name = source_label(&r.source, label,
						      sizeof(label));
	return run(loader, &r, out, err);
}

/* A described source's container as a raw stream: its views one strip
 * each, stored as they are, at one stride in one file. */
static int raw_place(const parload__ctx *c, parload_desc *raw, char *file,
		     size_t size)
{
	const parload__strips *t = c->strips;
	const parload__strip_run *u = t && t->runs == 1 ? &t->run[0] : NULL;
	const uint64_t pay = c->d.payload_size;

	if (!t)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "not a TIFF or HDF5 source: "
					  "parload_describe describes it");
	if (!u || !parload__strips_plain(t) || t->per_view != 1 ||
	    u->n != t->views || (u->n > 1 && u->step < pay))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "its views do not lie as a raw "
					  "stream's (chunks, compressed, "
					  "scattered or several files)");
	*raw = c->d;
	raw->format = PARLOAD_FORMAT_RAW;
	raw->offset = u->off;
	raw->gap = u->n > 1 ? u->step - pay : 0;
	if (parload_desc_check(raw, c->err) != 0)
		return c->err ? c->err->code : PARLOAD_EINVAL;
	if (file && (size_t)snprintf(file, size, "%s",
				     c->files[u->file].path) >= size)
		return parload__fail_path(c->err, PARLOAD_ESPACE, 0,
					  c->files[u->file].path,
					  "the file's name does not fit in "
					  "%zu bytes", size);
	return 0;
}

/* parload_describe_request, and with raw parload_describe_raw. */
/* The pieces c's source is stored in (parload_describe_chunks). */
static void stored_pieces(const parload__ctx *c, uint64_t chunk[3])
{
	const parload__strips *t = c->strips;

	chunk[0] = t ? parload__strips_depth(t) : 1;
	chunk[1] = t ? t->rows : c->d.height;
	chunk[2] = t && t->tile_cols ? t->tile_cols : c->d.width;
}

static int describe_source(const parload_request *req, int allow_truncated,
			   parload_desc *out, parload_desc *raw, char *file,
			   size_t size, uint64_t *chunk, parload_error *err)
{
	parload_options o;
	parload__ctx c;
	int rc;

	if (!req || !out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no source or no description");
	memset(out, 0, sizeof(*out));
	parload_options_init(&o);
	if (allow_truncated)
		o.flags |= PARLOAD_OPT_ALLOW_TRUNCATED;
	rc = check_request(req, err);
	if (rc)
		return rc;
	ctx_init(&c, req, &o, err);
	rc = parload__source_open(&c, req, false);
	if (rc == 0 && c.stream)
		rc = parload__fail_path(err, PARLOAD_ENOTREG, 0, c.path,
					"a stream is described as it is read: "
					"load it");
	if (rc == 0)
		rc = describe(&c, NULL);
	if (rc == 0 && raw)
		rc = raw_place(&c, raw, file, size);
	if (rc == 0 && chunk)
		stored_pieces(&c, chunk);
	parload__source_close(&c);
	if (rc == 0)
		*out = c.d;
	else if (c.driver && c.driver->describe)
		out->format = c.driver->format;
	return rc;
}

/* A request for src alone (NULL: none). */
static const parload_request *request_of(const parload_source *src,
					 parload_request *r)
{
	if (!src)
		return NULL;
	parload_request_init(r);
	r->source = *src;
	return r;
}

int parload_describe(const parload_source *src, int allow_truncated,
		     parload_desc *out, parload_error *err)
{
	parload_request r;

	return describe_source(request_of(src, &r), allow_truncated, out, NULL,
			       NULL, 0, NULL, err);
}

int parload_describe_chunks(const parload_source *src, int allow_truncated,
			    parload_desc *out, uint64_t chunk[3],
			    parload_error *err)
{
	parload_request r;

	if (!chunk)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no chunk shape to fill");
	return describe_source(request_of(src, &r), allow_truncated, out, NULL,
			       NULL, 0, chunk, err);
}

int parload_describe_request(const parload_request *req, int allow_truncated,
			     parload_desc *out, parload_error *err)
{
	return describe_source(req, allow_truncated, out, NULL, NULL, 0, NULL,
			       err);
}

int parload_describe_raw(const parload_source *src, parload_desc *raw,
			 char *file, size_t size, parload_error *err)
{
	parload_request r;
	parload_desc d;

	if (!raw)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no description");
	memset(raw, 0, sizeof(*raw));
	return describe_source(request_of(src, &r), 0, &d, raw, file, size,
			       NULL, err);
}

int parload_load(const char *path, const parload_options *opts,
		 parload_dataset *out)
{
	parload_error *err = opts ? opts->error : NULL;
	parload_request r;
	parload_loader *l;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no file given");
	rc = parload_loader_new(&l, opts, err);
	if (rc)
		return rc;
	parload_request_init(&r);
	r.source.path = path;
	rc = parload_loader_run(l, &r, out, err);
	parload_loader_free(l);
	return rc;
}
