/*
 * strips.c - a container's strips table, kept in runs: strips that follow
 * one another at one stride in one file, of one size, their pages counting
 * up one a view (parload__strip_run, model.h).  Readers give the strips
 * in order and each joins the last run where it continues it; a strip is
 * computed from its run (parload__strip_of), its run found by a binary
 * search where the caller's hint does not hold it.  A TIFF of pages one
 * after another is one run; an HDF5 dataset's chunks, a run between two
 * nodes of its index.
 */
#include "model/model.h"

#include <stdint.h>
#include <string.h>

/* Whether strip i (s) continues run u, which ends at strip i - 1.  (No
 * division where a view is one strip: this runs for every strip.) */
static bool continues(const parload__strips *t, const parload__strip_run *u,
		      uint64_t i, const parload__strip *s)
{
	const uint64_t last = u->off + (u->n - 1) * u->step;
	const uint64_t pv = parload__strips_step(t);
	const uint64_t views = pv == 1 ? u->n : i / pv - u->i0 / pv;

	if (s->file != u->file || s->bytes != u->bytes || s->mask != u->mask ||
	    views > UINT32_MAX || s->page < u->page ||
	    s->page - u->page != views || s->off < last)
		return false;
	/* A run of one strip takes its stride from the second. */
	return u->n == 1 || s->off - last == u->step;
}

int parload__strips_add(parload__strips *t, uint64_t i, const parload__strip *s)
{
	parload__strip_run *u = t->runs ? &t->run[t->runs - 1] : NULL;

	if (u && i < u->i0 + u->n)
		return 1;
	t->added++;
	t->fills |= (s->mask & PARLOAD__STRIP_FILL) != 0;
	if (u && i == u->i0 + u->n && continues(t, u, i, s)) {
		if (u->n == 1)
			u->step = s->off - u->off;
		u->n++;
		return 0;
	}
	if (t->runs == t->run_cap) {
		const uint64_t cap = t->run_cap ? 2 * t->run_cap : 16;
		parload__strip_run *r;

		if (cap > SIZE_MAX / sizeof(*r) ||
		    !(r = parload__sys_malloc((size_t)cap * sizeof(*r)))) {
			t->added--;
			return -1;
		}
		if (t->runs)
			memcpy(r, t->run, (size_t)t->runs * sizeof(*r));
		parload__sys_free(t->run);
		t->run = r;
		t->run_cap = cap;
	}
	t->run[t->runs++] = (parload__strip_run){ .i0 = i, .n = 1,
						  .off = s->off,
						  .bytes = s->bytes,
						  .file = s->file,
						  .page = s->page,
						  .mask = s->mask };
	return 0;
}

int parload__strips_add_stepped(parload__strips *t, uint64_t i, uint64_t n,
				const parload__strip *s, uint64_t step)
{
	parload__strip_run *u;

	for (uint64_t k = 0; k < n; k++) {
		const parload__strip x = { .off = s->off + k * step,
					   .bytes = s->bytes, .file = s->file,
					   .page = s->page + (uint32_t)k,
					   .mask = s->mask };
		const int rc = parload__strips_add(t, i + k, &x);

		if (rc)
			return rc;
		/* Once a run holds two of them at their step, it holds the
		 * rest: no test for each. */
		u = &t->run[t->runs - 1];
		if (k >= 1 && u->n >= 2 && u->step == step &&
		    u->i0 + u->n == i + k + 1 && parload__strips_step(t) == 1) {
			u->n += n - k - 1;
			t->added += n - k - 1;
			return 0;
		}
	}
	return 0;
}

void parload__strips_clear(parload__strips *t)
{
	t->runs = 0;
	t->added = 0;
	t->fills = false;
}

uint64_t parload__strips_find(const parload__strips *t, uint64_t i)
{
	uint64_t lo = 0, hi = t->runs;

	/* The last run that starts at or before i. */
	while (hi - lo > 1) {
		const uint64_t mid = lo + (hi - lo) / 2;

		if (t->run[mid].i0 <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo < t->runs && parload__run_holds(&t->run[lo], i) ? lo :
								     t->runs;
}

