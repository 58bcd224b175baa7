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
static int check_memory(const parload__load *l, const parload_file_header *h,
			uint64_t bytes)
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
	return parload__fail(l->err, PARLOAD_ENOMEM, 0, l->path, PARLOAD_NONE,
			     PARLOAD_NONE,
			     "out of memory: %" PRIu64 " views of %" PRIu64
			     " bytes need %" PRIu64 " bytes, more than the %"
			     PRIu64 " bytes of %s",
			     h->view_count, h->payload_size, bytes, limit,
			     what);
}

static int alloc_arrays(const parload__load *l, const parload_file_header *h)
{
	parload_dataset *ds = l->out;
	const char *path = l->path;
	parload_error *err = l->err;
	uint64_t hbytes, pbytes;
	size_t hround, len;
	unsigned char *base, *pixels;
	bool huge;

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
	if (hbytes > SIZE_MAX / 2 || pbytes > SIZE_MAX / 2 ||
	    hbytes + pbytes > SIZE_MAX / 2 - 2 * HUGE_PAGE)
		return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "out of memory: %" PRIu64 " views of %"
				     PRIu64 " bytes do not fit in this "
				     "address space",
				     h->view_count, h->payload_size);
	if (check_memory(l, h, hbytes + pbytes) != 0)
		return PARLOAD_ENOMEM;
	huge = pbytes >= HUGE_PAGE &&
	       !(l->opts->flags & PARLOAD_OPT_NO_HUGEPAGES);
	hround = round_up((size_t)hbytes, 64);
	/* With huge pages the pixels start on a 2 MiB boundary and the
	 * headers end there; the slack lets every 2 MiB block that holds
	 * either array lie wholly inside the mapping, which THP needs.
	 * Untouched slack costs address space, not memory. */
	len = huge ? round_up(hround, HUGE_PAGE) +
			     round_up((size_t)pbytes, HUGE_PAGE) + HUGE_PAGE :
		     hround + (size_t)pbytes;
	base = parload__sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return parload__fail(err, PARLOAD_ENOMEM, errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "out of memory: cannot map %zu bytes for "
				     "%" PRIu64 " views",
				     len, h->view_count);
	pixels = base + hround;
	if (huge) {
		pixels = (unsigned char *)round_up(
			(uintptr_t)base + round_up(hround, HUGE_PAGE),
			HUGE_PAGE);
		/* Advice only: a kernel without THP loads just as well.  The
		 * headers are advised too: 200,000 tiny views have 6.4 MB of
		 * them, 1,600 page faults at 4 KiB. */
		(void)parload__sys_madvise(base, len, MADV_HUGEPAGE);
	}
	ds->headers = (parload_view_header *)(pixels - hround);
	ds->pixels = pixels;
	ds->internal_[0] = base;
	ds->internal_[1] = (void *)(uintptr_t)len;
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
