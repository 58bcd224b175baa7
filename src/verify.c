/*
 * verify.c - payload CRCs and the list of bad views.
 *
 * The check of one view (view_index, then the payload's CRC-32C) is
 * parload__check_views in format.c, a pure function the fuzzer drives too;
 * this file adds what a load needs around it: knowing whether to check
 * CRCs at all, carrying on past a bad payload when asked, and keeping the
 * list of bad views that ends up in the dataset.
 *
 * parload_check_views, the public call, runs the same check on views a
 * caller read itself (libparload-mpi's MPI-IO reader does).
 *
 * A reader checks its views in ascending order and adds each bad one to
 * its own list, so every list is sorted without being sorted, and the
 * parallel loader joins its workers' lists in worker order.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What flags ask of views of shape s of the stream described by d. */
static void verify_set(parload__verify *v, const parload_desc *d,
		       const parload_shape *s, const char *path,
		       unsigned flags)
{
	v->d = d;
	v->s = s;
	v->path = path;
	v->crc = (flags & PARLOAD_OPT_VERIFY_CRC) &&
		 (d->flags & PARLOAD_DESC_CRC32C);
	v->keep_going = (flags & PARLOAD_OPT_KEEP_GOING) != 0;
}

void parload__verify_init(parload__verify *v, const parload__ctx *c)
{
	verify_set(v, &c->d, &c->shape, c->path, c->opts->flags);
}

int parload__verify_supported(const parload__verify *v, parload_error *err)
{
	if (v->crc && !parload__shape_full_payload(v->s, v->d))
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, v->path,
					  "a payload's CRC-32C covers all of "
					  "its rows and columns: a selection "
					  "of some rows or columns cannot be "
					  "verified (select them all, or load "
					  "without verification)");
	return 0;
}

int parload__badlist_add(parload__badlist *b, uint64_t view)
{
	if (b->n == b->cap) {
		/* Bad views are rare: start small, double.  No realloc in the
		 * fault-injection seam, so grow by hand. */
		size_t cap = b->cap ? 2 * b->cap : 16;
		uint64_t *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return PARLOAD_ENOMEM;
		v = parload__sys_malloc(cap * sizeof(*v));
		if (!v)
			return PARLOAD_ENOMEM;
		if (b->n)
			memcpy(v, b->v, b->n * sizeof(*v));
		parload__sys_free(b->v);
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = view;
	return 0;
}

int parload__badlist_append(parload__badlist *dst, parload__badlist *src)
{
	if (!dst->v) {
		*dst = *src;
	} else {
		for (size_t i = 0; i < src->n; i++)
			if (parload__badlist_add(dst, src->v[i]) != 0)
				return PARLOAD_ENOMEM;
		parload__sys_free(src->v);
	}
	memset(src, 0, sizeof(*src));
	return 0;
}

void parload__badlist_free(parload__badlist *b)
{
	parload__sys_free(b->v);
	memset(b, 0, sizeof(*b));
}

int parload__verify_views(const parload__verify *v,
			  const parload_view_header *vh, const void *pixels,
			  uint64_t first, uint64_t n, parload__badlist *bad,
			  parload_error *err)
{
	const parload_desc *d = v->d;
	const unsigned char *pix = pixels;
	parload_error e;
	int rc;

	/* The common case, every view good, costs one call. */
	rc = parload__check_views(d, v->s, vh, pix, first, n, v->crc, v->path,
				  &e);
	while (rc == PARLOAD_ECRC) {
		/* e.view is the file's index: find the output view. */
		uint64_t k = (e.view - v->s->view_start) / v->s->view_step -
			     first;

		if (parload__badlist_add(bad, first + k) != 0)
			return parload__fail_path(err, PARLOAD_ENOMEM, ENOMEM,
						  v->path,
						  "out of memory: cannot list "
						  "the views with a bad CRC-32C");
		if (!v->keep_going)
			break;
		/* The views up to k were good; carry on after it. */
		k++;
		rc = parload__check_views(d, v->s, vh + k,
					  pix + k * d->payload_size, first + k,
					  n - k, v->crc, v->path, &e);
	}
	if (rc && err)
		*err = e;
	return rc;
}

/* The CRC-32C of output view k's rows, wherever the layout put them. */
static uint32_t scattered_crc(const parload__verify *v,
			      const unsigned char *pixels, uint64_t k)
{
	const parload_shape *s = v->s;
	const uint64_t row = (uint64_t)s->cols * s->bytes_per_pixel;
	uint32_t crc = 0;

	for (uint64_t r = 0; r < s->rows; r++)
		crc = parload_crc32c(crc, pixels + (r * s->views + k) * row,
				     row);
	return crc;
}

int parload__verify_scattered(const parload__verify *v,
			      const parload_view_header *vh,
			      const unsigned char *pixels, uint64_t first,
			      uint64_t n, parload__badlist *bad,
			      parload_error *err)
{
	int rc;

	/* view_index first, with no CRC, as every load checks it. */
	rc = parload__check_views(v->d, v->s, vh + first, NULL, first, n,
				  false, v->path, err);
	for (uint64_t k = first; rc == 0 && v->crc && k < first + n; k++) {
		uint64_t i = parload_shape_view(v->s, k);

		if (scattered_crc(v, pixels, k) == vh[k].crc32c)
			continue;
		if (parload__badlist_add(bad, k) != 0)
			return parload__fail_nomem(err, v->path);
		if (!v->keep_going)
			rc = parload__fail(err, PARLOAD_ECRC, 0, v->path, i,
					   parload__record_at(v->d, i) +
						   v->d->header,
					   NULL);
	}
	return rc;
}

/* Output indices to file indices, in place: the order is kept. */
static void to_file_views(const parload_shape *s, parload__badlist *bad)
{
	for (size_t i = 0; i < bad->n; i++)
		bad->v[i] = parload_shape_view(s, bad->v[i]);
}

int parload__verify_finish(const parload__verify *v, parload__badlist *bad,
			   parload_dataset *ds, parload_error *err)
{
	const parload_desc *d = v->d;
	uint64_t k, i;

	if (bad->n == 0) {
		parload__badlist_free(bad);
		return 0;
	}
	if (v->keep_going) {
		to_file_views(v->s, bad);
		ds->bad_views = bad->v;
		ds->bad_view_count = bad->n;
		memset(bad, 0, sizeof(*bad));
		return 0;
	}
	/* The first bad view, described again now that every reader is done:
	 * the message of whichever worker found it first is not necessarily
	 * about the lowest view. */
	k = bad->v[0];
	i = parload_shape_view(v->s, k);
	parload__badlist_free(bad);
	if (v->s->layout == PARLOAD_LAYOUT_VIEWS &&
	    parload__check_views(d, v->s, &ds->headers[k],
				 (const unsigned char *)ds->pixels +
					 k * d->payload_size,
				 k, 1, true, v->path, err) == PARLOAD_ECRC)
		return PARLOAD_ECRC;
	return parload__fail(err, PARLOAD_ECRC, 0, v->path, i,
			     parload__record_at(d, i) + d->header,
			     "payload CRC-32C does not match the view header's "
			     "0x%08" PRIx32, ds->headers[k].crc32c);
}

/* Every view of ds, in its layout; then, as parload__verify_finish says,
 * the end of the check. */
static int check_dataset(const parload__verify *v, parload_dataset *ds,
			 parload__badlist *bad, parload_error *err)
{
	int rc;

	if (v->s->views == 0)
		return 0;
	if (v->s->layout == PARLOAD_LAYOUT_VIEWS)
		rc = parload__verify_views(v, ds->headers, ds->pixels, 0,
					   v->s->views, bad, err);
	else
		rc = parload__verify_scattered(v, ds->headers, ds->pixels, 0,
					       v->s->views, bad, err);
	if (rc == PARLOAD_ECRC && !v->keep_going)
		return rc; /* stopped at the first bad view: that is the error */
	if (rc)
		return rc;
	return parload__verify_finish(v, bad, ds, err);
}

int parload__verify_all(parload__ctx *c)
{
	return check_dataset(&c->verify, c->out, &c->bad, c->err);
}

/* The public check (parload.h): the load's own, on views read elsewhere. */
int parload_check_views(parload_dataset *ds, unsigned flags,
			const char *path, parload_error *err)
{
	parload__badlist bad = { NULL, 0, 0 };
	parload__verify v;
	int rc;

	if (!ds)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "no dataset to check");
	verify_set(&v, &ds->desc, &ds->shape, path, flags);
	rc = parload__verify_supported(&v, err);
	if (rc || !ds->headers)
		return rc;
	rc = check_dataset(&v, ds, &bad, err);
	parload__badlist_free(&bad);
	if (rc == 0)
		ds->stats.crc_checked = v.crc ? ds->shape.views : 0;
	return rc;
}
