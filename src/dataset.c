/*
 * dataset.c - the memory a dataset owns.
 *
 * Both arrays live in one anonymous mapping: the view headers, then the
 * pixels starting on a 2 MiB boundary so that transparent huge pages can
 * back them from the first byte.  Pages are left untouched here: a fresh
 * page costs a fault and a zeroing, and that work belongs to the worker that
 * fills the page, on that worker's NUMA node.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The caller's buffers: check they are large enough and use them. */
static int use_buffers(const parload__load *l, uint64_t hbytes,
		       uint64_t pbytes)
{
	const parload_buffers *b = l->into;

	if (hbytes > b->headers_size || pbytes > b->pixels_size)
		return parload__fail(l->err, PARLOAD_ESPACE, 0, l->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "destination buffer too small: the file "
				     "needs %" PRIu64 " bytes of view headers "
				     "and %" PRIu64 " bytes of pixels, the "
				     "buffers hold %zu and %zu",
				     hbytes, pbytes, b->headers_size,
				     b->pixels_size);
	if ((hbytes && !b->headers) || (pbytes && !b->pixels))
		return parload__fail(l->err, PARLOAD_EINVAL, 0, l->path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "destination buffer is NULL");
	l->out->headers = hbytes ? b->headers : NULL;
	l->out->pixels = pbytes ? b->pixels : NULL;
	return 0;
}

/* Refuse arrays that cannot be had before asking for them: with
 * overcommit, mmap of more than the machine holds may succeed and the
 * process die of it later, far from the cause. */
static int check_memory(parload_error *err, const char *path,
			const parload_file_header *h, uint64_t bytes)
{
	struct sysinfo si;
	struct rlimit rl;
	const char *what = NULL;
	uint64_t limit = 0;

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
			     "out of memory: %" PRIu64 " views of %" PRIu64
			     " bytes need %" PRIu64 " bytes, more than the %"
			     PRIu64 " bytes of %s",
			     h->view_count, h->payload_size, bytes, limit,
			     what);
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

/* Map the arrays of h (hbytes and pbytes > 0) as layout() says; on success
 * *map is the mapping, of layout().span bytes.  Fresh pages are not
 * touched. */
static int map_arrays(parload_error *err, const char *path,
		      const parload_file_header *h, uint64_t hbytes,
		      uint64_t pbytes, unsigned flags, unsigned char **map)
{
	struct arrays a;
	unsigned char *base, *start;
	size_t len;

	if (hbytes > SIZE_MAX / 2 || pbytes > SIZE_MAX / 2 ||
	    hbytes + pbytes > SIZE_MAX / 2 - 4 * HUGE_PAGE)
		return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "out of memory: %" PRIu64 " views of %"
				     PRIu64 " bytes do not fit in this "
				     "address space",
				     h->view_count, h->payload_size);
	if (check_memory(err, path, h, hbytes + pbytes) != 0)
		return PARLOAD_ENOMEM;
	a = layout((size_t)hbytes, (size_t)pbytes);
	/* An aligned mapping is cut from one a huge page longer. */
	len = a.aligned ? a.span + HUGE_PAGE : a.span;
	base = parload__sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return parload__fail(err, PARLOAD_ENOMEM, errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "out of memory: cannot map %zu bytes for "
				     "%" PRIu64 " views",
				     len, h->view_count);
	start = base;
	if (a.aligned) {
		/* Trim to the aligned span.  Cutting the ends off a fresh
		 * mapping cannot fail (it adds no mapping to the process);
		 * it is plain munmap because it releases no mapping the
		 * process holds, it only shortens the one just made. */
		start = (unsigned char *)round_up((uintptr_t)base, HUGE_PAGE);
		if (start > base)
			(void)munmap(base, (size_t)(start - base));
		if (base + len > start + a.span)
			(void)munmap(start + a.span,
				     (size_t)(base + len - (start + a.span)));
	}
	/* Advice only: a kernel without THP loads just as well.  The headers
	 * are advised too: 200,000 tiny views have 6.4 MB of them, 1,600
	 * page faults at 4 KiB. */
	if (a.aligned && !(flags & PARLOAD_OPT_NO_HUGEPAGES))
		(void)parload__sys_madvise(start, a.span, MADV_HUGEPAGE);
	*map = start;
	return 0;
}

static int alloc_arrays(const parload__load *l, const parload_file_header *h)
{
	parload_dataset *ds = l->out;
	uint64_t hbytes, pbytes;
	unsigned char *map;
	struct arrays a;
	int rc;

	memset(ds, 0, sizeof(*ds));
	ds->file_header = *h;
	/* The header was validated, so the file size fits in 64 bits and so
	 * do these; what remains is whether they fit in this address
	 * space. */
	hbytes = h->view_count * PARLOAD_VIEW_HEADER_SIZE;
	pbytes = h->view_count * h->payload_size;
	if (l->into)
		return use_buffers(l, hbytes, pbytes);
	if (h->view_count == 0)
		return 0;
	rc = map_arrays(l->err, l->path, h, hbytes, pbytes, l->opts->flags,
			&map);
	if (rc)
		return rc;
	a = layout((size_t)hbytes, (size_t)pbytes);
	ds->pixels = map + a.lead;
	ds->headers = (parload_view_header *)(map + a.lead - a.hround);
	ds->internal_[0] = map;
	ds->internal_[1] = (void *)(uintptr_t)a.span;
	return 0;
}

int parload__dataset_alloc(const parload__load *l, const parload_file_header *h)
{
	int rc = alloc_arrays(l, h);

	/* A failed load leaves the caller a zeroed dataset, not one that
	 * holds a file header and nothing else. */
	if (rc)
		memset(l->out, 0, sizeof(*l->out));
	return rc;
}

int parload_buffers_alloc(parload_buffers *out, const parload_file_header *h,
			  unsigned flags, parload_error *err)
{
	uint64_t hbytes, pbytes, size;
	unsigned char *map;
	struct arrays a;
	int rc;

	if (!out || !h)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "no buffers or no header");
	memset(out, 0, sizeof(*out));
	if (h->view_count && (h->payload_size == 0 ||
			      parload_file_size(h, &size) < 0))
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "invalid header: %" PRIu64 " views of %"
				     PRIu64 " bytes",
				     h->view_count, h->payload_size);
	if (h->view_count == 0)
		return 0;
	hbytes = h->view_count * PARLOAD_VIEW_HEADER_SIZE;
	pbytes = h->view_count * h->payload_size;
	rc = map_arrays(err, NULL, h, hbytes, pbytes, flags, &map);
	if (rc)
		return rc;
	a = layout((size_t)hbytes, (size_t)pbytes);
	out->pixels = map + a.lead;
	out->pixels_size = (size_t)pbytes;
	out->headers = (parload_view_header *)(map + a.lead - a.hround);
	out->headers_size = (size_t)hbytes;
	return 0;
}

void parload_buffers_free(parload_buffers *b)
{
	if (!b)
		return;
	if (b->pixels) {
		struct arrays a = layout(b->headers_size, b->pixels_size);

		parload__sys_munmap((unsigned char *)b->pixels - a.lead,
				    a.span);
	}
	memset(b, 0, sizeof(*b));
}

void parload_dataset_free(parload_dataset *ds)
{
	if (!ds)
		return;
	if (ds->internal_[0])
		parload__sys_munmap(ds->internal_[0],
				    (size_t)(uintptr_t)ds->internal_[1]);
	/* Owned by the dataset even when the arrays are the caller's. */
	parload__sys_free(ds->bad_views);
	memset(ds, 0, sizeof(*ds));
}
