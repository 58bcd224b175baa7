/*
 * verify.c - payload CRCs and the list of bad views.
 *
 * The check of one view (view_index, then the payload's CRC-32C) is
 * parload__check_views in format.c, a pure function the fuzzer drives too;
 * this file adds what a load needs around it: knowing whether to check
 * CRCs at all, carrying on past a bad payload when asked, and keeping the
 * list of bad views that ends up in the dataset.
 *
 * A reader checks its views in ascending order and adds each bad one to
 * its own list, so every list is sorted without being sorted, and the
 * parallel loader joins its workers' lists in worker order.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void parload__verify_init(parload__verify *v, const parload__load *l,
			  const parload_file_header *h)
{
	const unsigned flags = l->opts->flags;

	v->h = h;
	v->path = l->path;
	v->crc = (flags & PARLOAD_OPT_VERIFY_CRC) &&
		 (h->flags & PARLOAD_FLAG_CRC32C);
	v->keep_going = (flags & PARLOAD_OPT_KEEP_GOING) != 0;
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
	const parload_file_header *h = v->h;
	const unsigned char *pix = pixels;
	parload_error e;
	int rc;

	/* The common case, every view good, costs one call. */
	rc = parload__check_views(h, vh, pix, first, n, v->crc, v->path, &e);
	while (rc == PARLOAD_ECRC) {
		uint64_t k = e.view - first;

		if (parload__badlist_add(bad, e.view) != 0)
			return parload__fail(err, PARLOAD_ENOMEM, ENOMEM,
					     v->path, PARLOAD_NONE,
					     PARLOAD_NONE,
					     "out of memory: cannot list the "
					     "views with a bad CRC-32C");
		if (!v->keep_going)
			break;
		/* The views up to k were good; carry on after it. */
		k++;
		rc = parload__check_views(h, vh + k, pix + k * h->payload_size,
					  first + k, n - k, v->crc, v->path,
					  &e);
	}
	if (rc && err)
		*err = e;
	return rc;
}

int parload__verify_finish(const parload__verify *v, parload__badlist *bad,
			   parload_dataset *ds, parload_error *err)
{
	const parload_file_header *h = v->h;
	uint64_t i;
	int rc;

	if (bad->n == 0) {
		parload__badlist_free(bad);
		return 0;
	}
	if (v->keep_going) {
		ds->bad_views = bad->v;
		ds->bad_view_count = bad->n;
		memset(bad, 0, sizeof(*bad));
		return 0;
	}
	/* The first bad view, described again now that every reader is done:
	 * the message of whichever worker found it first is not necessarily
	 * about the lowest view. */
	i = bad->v[0];
	parload__badlist_free(bad);
	rc = parload__check_views(h, &ds->headers[i],
				  (const unsigned char *)ds->pixels +
					  i * h->payload_size,
				  i, 1, true, v->path, err);
	if (rc == 0) /* cannot happen: the bytes have not changed */
		rc = parload__fail(err, PARLOAD_ECRC, 0, v->path, i,
				   parload__view_offset(h, i) +
					   PARLOAD_VIEW_HEADER_SIZE,
				   NULL);
	return rc;
}

int parload__verify_all(const parload__load *l, const parload_file_header *h,
			parload_dataset *ds)
{
	parload__verify v;
	parload__badlist bad = { NULL, 0, 0 };
	int rc;

	if (h->view_count == 0)
		return 0;
	parload__verify_init(&v, l, h);
	rc = parload__verify_views(&v, ds->headers, ds->pixels, 0,
				   h->view_count, &bad, l->err);
	if (rc == PARLOAD_ECRC) {
		/* Stopped at the first bad view: that is the error. */
		parload__badlist_free(&bad);
		return rc;
	}
	if (rc == 0)
		return parload__verify_finish(&v, &bad, ds, l->err);
	parload__badlist_free(&bad);
	return rc;
}
