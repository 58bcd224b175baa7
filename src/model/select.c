/*
 * select.c - selections: which views, rows and columns a load reads and the
 * layout it delivers them in, parsed from text and resolved against a layout
 * description into a parload_shape.  Pure functions; the plan (plan.c) turns a
 * shape into the reads.
 *
 * Slices mean what Python's do, with two differences a loader needs: a
 * slice that reaches past the end or selects nothing is an error rather
 * than silently clipped (a preview of "views 0:5000" of a 2,000-view file
 * is a mistake worth hearing about), and steps are positive.
 */
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static parload_slice all(void)
{
	parload_slice s = { PARLOAD_OMIT, PARLOAD_OMIT, PARLOAD_OMIT };

	return s;
}

void parload_selection_init(parload_selection *sel)
{
	if (!sel)
		return;
	sel->views = all();
	sel->rows = all();
	sel->cols = all();
	sel->layout = PARLOAD_LAYOUT_VIEWS;
}

/* One part of a slice: empty (omitted) or an optionally signed integer. */
static bool parse_part(const char *p, size_t len, int64_t *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0) {
		*out = PARLOAD_OMIT;
		return true;
	}
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, p, len);
	buf[len] = '\0';
	if (!(buf[0] == '-' || buf[0] == '+' || (buf[0] >= '0' && buf[0] <= '9')))
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end || end == buf || v == INT64_MIN)
		return false;
	*out = v;
	return true;
}

int parload_slice_parse(const char *text, int allow_step, parload_slice *out,
			parload_error *err)
{
	const char *c1, *c2 = NULL;
	parload_slice s = all();
	bool ok;

	if (!text || !out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no slice to parse");
	c1 = strchr(text, ':');
	if (c1)
		c2 = strchr(c1 + 1, ':');
	if (!c1) {
		/* One index: that element alone. */
		ok = parse_part(text, strlen(text), &s.start) &&
		     s.start != PARLOAD_OMIT;
		s.stop = ok && s.start != -1 ? s.start + 1 : PARLOAD_OMIT;
	} else {
		ok = parse_part(text, (size_t)(c1 - text), &s.start) &&
		     parse_part(c1 + 1,
				c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1),
				&s.stop) &&
		     (!c2 || (allow_step && !strchr(c2 + 1, ':') &&
			      parse_part(c2 + 1, strlen(c2 + 1), &s.step)));
	}
	if (!ok)
		return parload__fail_path(
			err, PARLOAD_ESELECT, 0, NULL,
			"invalid slice '%s': expected %s", text,
			allow_step ? "START:STOP:STEP (each part optional)" :
				     "START:STOP (each part optional)");
	*out = s;
	return 0;
}

/* Resolve one bound against n elements: omitted is dflt, negative counts
 * from the end.  False when it falls outside [0, n]. */
static bool bound(int64_t x, uint64_t n, uint64_t dflt, uint64_t *out)
{
	if (x == PARLOAD_OMIT) {
		*out = dflt;
		return true;
	}
	if (x < 0) {
		if ((uint64_t)-(x + 1) >= n)
			return false;
		*out = n - (uint64_t)-(x + 1) - 1;
		return true;
	}
	if ((uint64_t)x > n)
		return false;
	*out = (uint64_t)x;
	return true;
}

/* "A:B:S" as given, omitted parts left out. */
static void slice_text(const parload_slice *sl, char *buf, size_t n)
{
	char a[24] = "", b[24] = "", c[26] = "";

	if (sl->start != PARLOAD_OMIT)
		snprintf(a, sizeof(a), "%" PRId64, sl->start);
	if (sl->stop != PARLOAD_OMIT)
		snprintf(b, sizeof(b), "%" PRId64, sl->stop);
	if (sl->step != PARLOAD_OMIT)
		snprintf(c, sizeof(c), ":%" PRId64, sl->step);
	snprintf(buf, n, "%s:%s%s", a, b, c);
}

/* Resolve sl against n elements into first, count and step. */
static int resolve(const parload_slice *sl, uint64_t n, const char *what,
		   bool stepped, uint64_t *first, uint64_t *count,
		   uint64_t *step, parload_error *err)
{
	uint64_t a, b;
	int64_t st = sl->step == PARLOAD_OMIT ? 1 : sl->step;

	if (!stepped && st != 1)
		return parload__fail_path(err, PARLOAD_ESELECT, 0, NULL,
					  "invalid selection: %s take no step",
					  what);
	if (st <= 0)
		return parload__fail_path(err, PARLOAD_ESELECT, 0, NULL,
					  "invalid selection: the step of %s "
					  "is %" PRId64 ", it must be 1 or more",
					  what, st);
	if (!bound(sl->start, n, 0, &a) || !bound(sl->stop, n, n, &b) ||
	    (sl->start != PARLOAD_OMIT && a == n)) {
		char t[64];

		slice_text(sl, t, sizeof(t));
		return parload__fail_path(err, PARLOAD_ESELECT, 0, NULL,
					  "invalid selection: %s %s reach "
					  "outside the %" PRIu64 " there are",
					  what, t, n);
	}
	if (b <= a)
		return parload__fail_path(err, PARLOAD_ESELECT, 0, NULL,
					  "invalid selection: %s [%" PRIu64
					  ", %" PRIu64 ") select nothing",
					  what, a, b);
	*first = a;
	*step = (uint64_t)st;
	*count = (b - a + *step - 1) / *step;
	return 0;
}

int parload_selection_resolve(const parload_desc *d,
			      const parload_selection *sel, parload_shape *out,
			      parload_error *err)
{
	parload_selection whole;
	uint64_t first, count, step;
	int rc;

	if (!d || !out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no layout or no shape");
	memset(out, 0, sizeof(*out));
	if (!sel) {
		parload_selection_init(&whole);
		sel = &whole;
	}
	if (sel->layout != PARLOAD_LAYOUT_VIEWS &&
	    sel->layout != PARLOAD_LAYOUT_SINOGRAMS)
		return parload__fail_path(err, PARLOAD_ESELECT, 0, NULL,
					  "invalid selection: unknown layout %d",
					  (int)sel->layout);
	out->layout = sel->layout;
	out->bytes_per_pixel = d->bytes_per_pixel;
	out->view_step = 1;
	/* A file of no views has nothing to select from: only the whole
	 * file (omitted bounds) is valid, and it is empty. */
	if (d->count == 0 && sel->views.start == PARLOAD_OMIT &&
	    sel->views.stop == PARLOAD_OMIT &&
	    (sel->views.step == PARLOAD_OMIT || sel->views.step > 0)) {
		first = count = 0;
		step = sel->views.step == PARLOAD_OMIT ? 1 :
			(uint64_t)sel->views.step;
	} else {
		rc = resolve(&sel->views, d->count, "views", true, &first,
			     &count, &step, err);
		if (rc)
			return rc;
	}
	out->views = count;
	out->view_start = first;
	out->view_step = step;
	rc = resolve(&sel->rows, d->height, "rows", false, &first, &count,
		     &step, err);
	if (rc)
		return rc;
	out->row_start = (uint32_t)first;
	out->rows = (uint32_t)count;
	rc = resolve(&sel->cols, d->width, "columns", false, &first, &count,
		     &step, err);
	if (rc)
		return rc;
	out->col_start = (uint32_t)first;
	out->cols = (uint32_t)count;
	out->view_bytes = (uint64_t)out->rows * out->cols * d->bytes_per_pixel;
	out->pixel_type = d->pixel_type;
	out->bin = 1;
	return 0;
}

uint64_t parload_shape_view(const parload_shape *s, uint64_t k)
{
	return s->view_start + k * s->view_step;
}

bool parload__shape_is_whole(const parload_shape *s, const parload_desc *d)
{
	return s->layout == PARLOAD_LAYOUT_VIEWS && s->view_start == 0 &&
	       (s->view_step == 1 || s->views <= 1) &&
	       s->views == d->count && s->row_start == 0 &&
	       s->rows == d->height && s->col_start == 0 &&
	       s->cols == d->width;
}

bool parload__shape_full_payload(const parload_shape *s,
				 const parload_desc *d)
{
	return s->row_start == 0 && s->rows == d->height &&
	       s->col_start == 0 && s->cols == d->width;
}
