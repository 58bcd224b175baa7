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
#include <string.h>
#include <sys/mman.h>

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

int parload__dataset_alloc(const parload__load *l, const parload_file_header *h)
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
	huge = pbytes >= HUGE_PAGE &&
	       !(l->opts->flags & PARLOAD_OPT_NO_HUGEPAGES);
	hround = round_up((size_t)hbytes, 64);
	len = huge ? hround + (size_t)pbytes + 2 * HUGE_PAGE :
		     hround + (size_t)pbytes;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return parload__fail(err, PARLOAD_ENOMEM, errno, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "out of memory: cannot map %zu bytes for "
				     "%" PRIu64 " views",
				     len, h->view_count);
	pixels = base + hround;
	if (huge) {
		pixels = (unsigned char *)round_up((uintptr_t)pixels, HUGE_PAGE);
		/* Advice only: a kernel without THP loads just as well. */
		(void)madvise(pixels, round_up((size_t)pbytes, HUGE_PAGE),
			      MADV_HUGEPAGE);
	}
	ds->headers = (parload_view_header *)(pixels - hround);
	ds->pixels = pixels;
	ds->internal_[0] = base;
	ds->internal_[1] = (void *)(uintptr_t)len;
	return 0;
}

void parload_dataset_free(parload_dataset *ds)
{
	if (!ds)
		return;
	if (ds->internal_[0])
		munmap(ds->internal_[0], (size_t)(uintptr_t)ds->internal_[1]);
	memset(ds, 0, sizeof(*ds));
}
