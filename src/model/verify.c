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
#include "model/model.h"

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
	if (v->s->layout == PARLOAD_LAYOUT_VIEWS && !v->rows &&
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

/* ---------------------------------------------------------------------
 * CRCs of rows as they are read (a corrected load)
 * ------------------------------------------------------------------- */

/* GF(2) matrix (32 columns) times a vector. */
static uint32_t gf2_times(const uint32_t *m, uint32_t v)
{
	uint32_t sum = 0;

	for (int i = 0; v; i++, v >>= 1)
		if (v & 1)
			sum ^= m[i];
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *m)
{
	for (int i = 0; i < 32; i++)
		sq[i] = gf2_times(m, m[i]);
}

uint32_t parload__crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	uint32_t a[32], b[32], *op = a, *sq = b, *t;

	if (len2 == 0)
		return crc1;
	/* op: the shift of the CRC register by one zero bit (reflected
	 * Castagnoli polynomial), then squared to one zero byte. */
	op[0] = 0x82f63b78u;
	for (int i = 1; i < 32; i++)
		op[i] = 1u << (i - 1);
	gf2_square(sq, op); /* two bits */
	gf2_square(op, sq); /* four */
	gf2_square(sq, op); /* a byte */
	/* crc1 moved past len2 zero bytes: the operator of 2^j bytes for
	 * each bit j of len2. */
	for (t = op, op = sq, sq = t; len2; len2 >>= 1) {
		if (len2 & 1)
			crc1 = gf2_times(op, crc1);
		gf2_square(sq, op);
		t = op, op = sq, sq = t;
	}
	return crc1 ^ crc2;
}

/* Output view k's CRC against its header: bad, or failed without
 * keep-going. */
static int check_crc(const parload__rowcrc *r, uint64_t k, uint32_t crc,
		     parload__badlist *bad, parload_error *err)
{
	const parload__verify *v = r->v;
	const uint64_t i = parload_shape_view(v->s, k);

	if (crc == r->headers[k - r->k_begin].crc32c)
		return 0;
	if (parload__badlist_add(bad, k) != 0)
		return parload__fail_nomem(err, v->path);
	if (v->keep_going)
		return 0;
	return parload__fail(err, PARLOAD_ECRC, 0, v->path, i,
			     parload__record_at(v->d, i) + v->d->header,
			     "payload CRC-32C 0x%08" PRIx32 " of the rows read "
			     "does not match the view header's 0x%08" PRIx32,
			     crc, r->headers[k - r->k_begin].crc32c);
}

static int keep_part(parload__crcparts *l, const parload__crcpart *p)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		parload__crcpart *q = parload__sys_malloc(cap * sizeof(*q));

		if (!q)
			return PARLOAD_ENOMEM;
		if (l->n)
			memcpy(q, l->p, l->n * sizeof(*q));
		parload__sys_free(l->p);
		l->p = q;
		l->cap = cap;
	}
	l->p[l->n++] = *p;
	return 0;
}

int parload__rowcrc_flush(parload__rowcrc *r, parload__badlist *bad,
			  parload_error *err)
{
	if (!r->on)
		return 0;
	r->on = false;
	if (r->run.at == 0 && r->run.len == r->v->d->payload_size)
		return check_crc(r, r->run.k, r->run.crc, bad, err);
	return keep_part(&r->parts, &r->run) ?
		       parload__fail_nomem(err, r->v->path) :
		       0;
}

int parload__rowcrc_add(parload__rowcrc *r, uint64_t k, uint64_t at,
			const void *data, size_t len, parload__badlist *bad,
			parload_error *err)
{
	int rc = 0;

	if (r->on && (r->run.k != k || r->run.at + r->run.len != at))
		rc = parload__rowcrc_flush(r, bad, err);
	if (!r->on) {
		r->on = true;
		r->run = (parload__crcpart){ k, at, 0, 0 };
	}
	r->run.crc = parload_crc32c(r->run.crc, data, len);
	r->run.len += len;
	return rc;
}

static int cmp_part(const void *a, const void *b)
{
	const parload__crcpart *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int parload__rowcrc_finish(parload__rowcrc *r, unsigned n,
			   parload__badlist *bad, parload_error *err)
{
	parload__crcparts all = { NULL, 0, 0 };
	int rc = 0;

	for (unsigned w = 0; rc == 0 && w < n; w++)
		for (size_t i = 0; rc == 0 && i < r[w].parts.n; i++)
			rc = keep_part(&all, &r[w].parts.p[i]);
	if (rc)
		rc = parload__fail_nomem(err, r[0].v->path);
	if (all.n)
		qsort(all.p, all.n, sizeof(*all.p), cmp_part);
	/* Each view's runs, in order, make its payload. */
	for (size_t i = 0; rc == 0 && i < all.n;) {
		parload__crcpart sum = all.p[i++];

		for (; i < all.n && all.p[i].k == sum.k &&
		       all.p[i].at == sum.at + sum.len; i++) {
			sum.crc = parload__crc32c_combine(sum.crc, all.p[i].crc,
							  all.p[i].len);
			sum.len += all.p[i].len;
		}
		if (sum.at == 0 && sum.len == r[0].v->d->payload_size)
			rc = check_crc(&r[0], sum.k, sum.crc, bad, err);
	}
	parload__sys_free(all.p);
	return rc;
}

void parload__rowcrc_free(parload__rowcrc *r)
{
	parload__sys_free(r->parts.p);
	memset(&r->parts, 0, sizeof(r->parts));
	r->on = false;
}
