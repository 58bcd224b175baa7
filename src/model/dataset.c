/*
 * dataset.c - the memory a dataset owns.
 *
 * Both arrays live in one anonymous mapping: the view headers, then the
 * pixels starting on a 2 MiB boundary so that transparent huge pages can
 * back them from the first byte.  Pages are left untouched here: a fresh
 * page costs a fault and a zeroing, and that work belongs to the worker that
 * fills the page, on that worker's NUMA node.  A dataset whose pixels fill
 * less than a huge page is a heap block instead (heap_arrays).
 */
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#define HUGE_PAGE PARLOAD__HUGE_PAGE

static size_t round_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The caller's buffers: check they are large enough and use them. */
static int use_buffers(parload__ctx *c, uint64_t hbytes, uint64_t rbytes,
		       uint64_t pbytes)
{
	const parload_buffers *b = c->into;

	if (rbytes > b->raw_headers_size || (rbytes && !b->raw_headers))
		return parload__fail(c->err, PARLOAD_ESPACE, 0, c->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "destination buffer too small: the load "
				     "needs %" PRIu64 " bytes of raw view "
				     "headers, the buffers hold %zu",
				     rbytes, b->raw_headers ?
					     b->raw_headers_size : 0);
	if (hbytes > b->headers_size || pbytes > b->pixels_size)
		return parload__fail(c->err, PARLOAD_ESPACE, 0, c->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "destination buffer too small: the load "
				     "needs %" PRIu64 " bytes of view headers "
				     "and %" PRIu64 " bytes of pixels, the "
				     "buffers hold %zu and %zu",
				     hbytes, pbytes, b->headers_size,
				     b->pixels_size);
	if ((hbytes && !b->headers) || (pbytes && !b->pixels))
		return parload__fail(c->err, PARLOAD_EINVAL, 0, c->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "destination buffer is NULL");
	c->out->headers = hbytes ? b->headers : NULL;
	c->out->raw_headers = rbytes ? b->raw_headers : NULL;
	c->out->pixels = pbytes ? b->pixels : NULL;
	return 0;
}

/* Refuse arrays that cannot be had before asking for them: with
 * overcommit, mmap of more than the machine holds may succeed and the
 * process die of it later, far from the cause. */
int parload__memory_check(parload_error *err, const char *path,
			  uint64_t count, const char *things, uint64_t each)
{
	struct sysinfo si;
	struct rlimit rl;
	const char *what = NULL;
	uint64_t limit = 0, bytes;

	if (!parload__mul_ok(count, each, &bytes))
		return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "out of memory: %" PRIu64 " %s of %" PRIu64
				     " bytes need more bytes than 64 bits "
				     "count", count, things, each);
	if (sysinfo(&si) == 0) {
		uint64_t unit = si.mem_unit ? si.mem_unit : 1;
		uint64_t have = (uint64_t)si.totalram + si.totalswap;

		if (have <= UINT64_MAX / unit && bytes > have * unit) {
			what = "this machine's RAM and swap";
			limit = have * unit;
		}
	}
	if (!what && getrlimit(RLIMIT_AS, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && bytes > (uint64_t)rl.rlim_cur) {
		what = "the process's address-space limit (RLIMIT_AS)";
		limit = (uint64_t)rl.rlim_cur;
	}
	if (!what && getrlimit(RLIMIT_DATA, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && bytes > (uint64_t)rl.rlim_cur) {
		what = "the process's data limit (RLIMIT_DATA)";
		limit = (uint64_t)rl.rlim_cur;
	}
	if (!what)
		return 0;
	return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
			     PARLOAD_NONE,
			     "out of memory: %" PRIu64 " %s of %" PRIu64
			     " bytes need %" PRIu64 " bytes, more than the %"
			     PRIu64 " bytes of %s",
			     count, things, each, bytes, limit, what);
}

/*
 * The layout of the two arrays in their mapping, a function of their sizes
 * alone so that parload_buffers_free() can find the mapping again from the
 * buffers it was given:
 *
 *   [ slack | headers ][ pixels | slack ]
 *   ^ map              ^ pixels = map + lead
 *
 * The headers end where the pixels begin.  When the pixels fill at least
 * one huge page, lead and the span are whole huge pages and the mapping
 * starts on a 2 MiB boundary, so every 2 MiB block of either array lies
 * inside it and transparent huge pages can back the pixels from their
 * first byte.  Untouched slack costs address space, not memory.
 */
struct arrays {
	size_t hround; /* the headers, rounded up to a cache line */
	size_t lead;   /* map to pixels */
	size_t span;   /* the whole mapping */
	bool aligned;  /* the mapping starts on a 2 MiB boundary */
};

static struct arrays layout(size_t hbytes, size_t pbytes)
{
	struct arrays a;

	a.hround = round_up(hbytes, 64);
	a.aligned = pbytes >= HUGE_PAGE;
	if (a.aligned) {
		a.lead = round_up(a.hround, HUGE_PAGE);
		a.span = a.lead + round_up(pbytes, HUGE_PAGE);
	} else {
		a.lead = a.hround;
		a.span = a.hround + pbytes;
	}
	return a;
}

/* A fresh private anonymous mapping of len bytes, or NULL. */
static void *map_fresh(size_t len)
{
	void *p = parload__sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *parload__map_huge_aligned(size_t len)
{
	/* Cut from a mapping one huge page longer.  Cutting the ends off a
	 * fresh mapping cannot fail (it adds no mapping to the process); it
	 * is plain munmap because it releases no mapping the process holds,
	 * it only shortens the one just made. */
	unsigned char *base = map_fresh(len + HUGE_PAGE), *start;

	if (!base)
		return NULL;
	start = (unsigned char *)round_up((uintptr_t)base, HUGE_PAGE);
	if (start > base)
		(void)munmap(base, (size_t)(start - base));
	if (base + HUGE_PAGE > start)
		(void)munmap(start + len, (size_t)(base + HUGE_PAGE - start));
	return start;
}

/*
 * A dataset whose pixels fill less than a huge page is laid out as
 * layout() says, but in a block of the process's heap, on a page boundary
 * (as a mapping starts, so that the workers split it alike).  Such pixels
 * would get no huge page, and the first touch of so few pages places
 * little; a block freed before (the last dataset's, say) most likely
 * comes back with its pages faulted in already, where each 4 KiB of a
 * fresh mapping costs a fault and a zeroing.  One loader loading and
 * freeing the same file again and again (2 threads, medians of 201 loads,
 * three runs): a 512 x 512 u16 frame took 0.90-0.96 ms a load in fresh
 * mappings (129 page faults each) and 0.07 ms in the heap (none); 100
 * views of 64 x 64 u16, 1.35-1.42 ms (201) against 0.06-0.10 ms; 100 of 96
 * x 80, 2.5-2.7 ms (376) against 0.08-0.10 ms.  The development VM's
 * faults cost about 7 us each; elsewhere the gap is narrower, the faults
 * gone all the same.  A heap block is not bound to NUMA nodes
 * (parload__ctx.arrays_mapped): a binding would split the heap's mapping
 * and outlive the dataset.  Buffers (parload_buffers_alloc) and windows,
 * made once and filled again and again, are always mappings.
 */
static bool heap_arrays(const struct arrays *a)
{
	return !a->aligned;
}

/* The memory for arrays laid out as a says: a heap block when on_heap,
 * *heap being what to free, else a mapping (*heap NULL).  Returns where
 * the arrays start, or NULL. */
static unsigned char *arrays_get(const struct arrays *a, bool on_heap,
				 void **heap)
{
	*heap = NULL;
	if (on_heap) {
		/* On a page boundary by hand: glibc serves aligned_alloc of
		 * a page boundary with a fresh mapping each time. */
		*heap = parload__sys_malloc(a->span + PARLOAD__PAGE);
		return *heap ? (unsigned char *)round_up((uintptr_t)*heap,
							 PARLOAD__PAGE) :
			       NULL;
	}
	return a->aligned ? parload__map_huge_aligned(a->span) :
			    map_fresh(a->span);
}

/* The arrays of views views with hper bytes of headers (typed and raw)
 * and view_bytes of pixels each, as layout() says: a heap block when heap
 * is not NULL and heap_arrays() agrees (*heap: what to free, NULL for a
 * mapping); on success *map is where they start.  Fresh pages are not
 * touched. */
static int map_arrays(parload_error *err, const char *path, uint64_t views,
		      uint64_t hper, uint64_t view_bytes, unsigned flags,
		      void **heap, unsigned char **map)
{
	const uint64_t hbytes = views * hper;
	const uint64_t pbytes = views * view_bytes;
	struct arrays a;
	unsigned char *start;
	void *block;
	bool on_heap;

	if (hbytes > SIZE_MAX / 2 || pbytes > SIZE_MAX / 2 ||
	    hbytes + pbytes > SIZE_MAX / 2 - 4 * HUGE_PAGE)
		return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "out of memory: %" PRIu64 " views of %"
				     PRIu64 " bytes do not fit in this "
				     "address space",
				     views, view_bytes);
	if (parload__memory_check(err, path, views, "views", hper + view_bytes))
		return PARLOAD_ENOMEM;
	a = layout((size_t)hbytes, (size_t)pbytes);
	on_heap = heap && heap_arrays(&a);
	start = arrays_get(&a, on_heap, &block);
	if (heap)
		*heap = block;
	if (!start)
		return parload__fail(err, PARLOAD_ENOMEM, errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "out of memory: cannot %s %zu bytes for "
				     "%" PRIu64 " views",
				     on_heap ? "allocate" : "map",
				     a.span + (a.aligned ? HUGE_PAGE :
					       on_heap ? PARLOAD__PAGE : 0),
				     views);
	/* Advice only: a kernel without THP loads just as well.  The headers
	 * are advised too: 200,000 tiny views have 6.4 MB of them, 1,600
	 * page faults at 4 KiB. */
	if (a.aligned && !(flags & PARLOAD_OPT_NO_HUGEPAGES))
		(void)parload__sys_madvise(start, a.span, MADV_HUGEPAGE);
	*map = start;
	return 0;
}

/* The arrays' places in a mapping of views * (32 + raw + view_bytes)
 * bytes: the typed headers, the raw headers (rbytes, maybe 0) right
 * after them, the pixels. */
static void place(parload_buffers *b, size_t hbytes, size_t rbytes,
		  size_t pbytes, unsigned char *map)
{
	struct arrays a = layout(hbytes + rbytes, pbytes);

	b->pixels = map + a.lead;
	b->headers = (parload_view_header *)(map + a.lead - a.hround);
	b->raw_headers = rbytes ? (unsigned char *)b->headers + hbytes : NULL;
	b->headers_size = hbytes;
	b->raw_headers_size = rbytes;
	b->pixels_size = pbytes;
}

/* Bytes of raw view headers per view a load of c delivers. */
static uint64_t raw_per_view(const parload__ctx *c)
{
	return c->raw_headers ? c->d.header : 0;
}

static int alloc_arrays(parload__ctx *c)
{
	parload_dataset *ds = c->out;
	const parload_shape *s = &c->shape;
	/* The layout was checked and the selection lies inside the files,
	 * so these fit in 64 bits; whether they fit in this address space
	 * is map_arrays's question. */
	const uint64_t hbytes = s->views * PARLOAD_VIEW_HEADER_SIZE;
	const uint64_t rbytes = s->views * raw_per_view(c);
	const uint64_t pbytes = s->views * s->view_bytes;
	parload_buffers b;
	unsigned char *map;
	void *heap;
	int rc;

	memset(ds, 0, sizeof(*ds));
	ds->desc = c->d;
	ds->shape = *s;
	if (c->into)
		return use_buffers(c, hbytes, rbytes, pbytes);
	/* A windowed load keeps no arrays: its batches come in windows. */
	if (s->views == 0 || c->req->window_bytes)
		return 0;
	rc = map_arrays(c->err, c->path, s->views,
			PARLOAD_VIEW_HEADER_SIZE + raw_per_view(c),
			s->view_bytes, c->opts->flags, &heap, &map);
	if (rc)
		return rc;
	place(&b, (size_t)hbytes, (size_t)rbytes, (size_t)pbytes, map);
	ds->headers = b.headers;
	ds->raw_headers = b.raw_headers;
	ds->pixels = b.pixels;
	c->arrays_mapped = heap == NULL;
	/* The heap block, else the mapping and its length. */
	ds->internal_[0] = heap ? heap : map;
	ds->internal_[1] = (void *)(uintptr_t)(
		heap ? 0 : layout((size_t)(hbytes + rbytes), (size_t)pbytes)
				   .span);
	return 0;
}

int parload__dataset_alloc(parload__ctx *c)
{
	int rc = alloc_arrays(c);

	/* A failed load leaves the caller a zeroed dataset, not one that
	 * holds a file header and nothing else. */
	if (rc)
		memset(c->out, 0, sizeof(*c->out));
	return rc;
}

int parload__window_alloc(parload__ctx *c, uint64_t views, parload_buffers *b)
{
	const uint64_t vb = c->shape.view_bytes, raw = raw_per_view(c);
	unsigned char *map;
	int rc;

	memset(b, 0, sizeof(*b));
	rc = map_arrays(c->err, c->path, views,
			PARLOAD_VIEW_HEADER_SIZE + raw, vb, c->opts->flags,
			NULL, &map);
	if (rc)
		return rc;
	c->arrays_mapped = true;
	place(b, (size_t)(views * PARLOAD_VIEW_HEADER_SIZE),
	      (size_t)(views * raw), (size_t)(views * vb), map);
	return 0;
}

int parload_buffers_alloc(parload_buffers *out, const parload_desc *d,
			  const parload_selection *sel, unsigned flags,
			  parload_error *err)
{
	parload_desc checked;
	parload_shape s;
	unsigned char *map;
	uint64_t raw;
	int rc;

	if (!out || !d)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no buffers or no layout");
	memset(out, 0, sizeof(*out));
	checked = *d;
	rc = parload_desc_check(&checked, err);
	if (rc == 0)
		rc = parload_selection_resolve(&checked, sel, &s, err);
	if (rc || s.views == 0)
		return rc;
	raw = checked.format == PARLOAD_FORMAT_RAW ? checked.header : 0;
	rc = map_arrays(err, NULL, s.views, PARLOAD_VIEW_HEADER_SIZE + raw,
			s.view_bytes, flags, NULL, &map);
	if (rc)
		return rc;
	place(out, (size_t)(s.views * PARLOAD_VIEW_HEADER_SIZE),
	      (size_t)(s.views * raw), (size_t)(s.views * s.view_bytes), map);
	return 0;
}

void parload_buffers_free(parload_buffers *b)
{
	if (!b)
		return;
	if (b->pixels) {
		struct arrays a = layout(b->headers_size +
						 (b->raw_headers ?
							  b->raw_headers_size :
							  0),
					 b->pixels_size);

		parload__sys_munmap((unsigned char *)b->pixels - a.lead,
				    a.span);
	}
	memset(b, 0, sizeof(*b));
}

void parload_dataset_free(parload_dataset *ds)
{
	if (!ds)
		return;
	if (ds->internal_[1])
		parload__sys_munmap(ds->internal_[0],
				    (size_t)(uintptr_t)ds->internal_[1]);
	else
		parload__sys_free(ds->internal_[0]);
	/* Owned by the dataset even when the arrays are the caller's. */
	parload__sys_free(ds->bad_views);
	memset(ds, 0, sizeof(*ds));
}
