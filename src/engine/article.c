/*
 * article.c - the article's single-threaded strategies, each one read step
 * over the reader (reader.c), so every I/O API and buffering applies:
 *
 *   bulk        V1: every record in one logical read into a temporary
 *               buffer, then split into the two arrays.
 *   sequential  V2: header, payload, header, payload ... each read straight
 *               into its final place.
 *   two-pass    V3: every view header first, seeking over the payloads, then
 *               every payload, seeking over the headers.
 *
 * Each reads the file header through its reader too (the strategy's header
 * step), so the whole file goes through one I/O API as in the article.
 * They read whole files only; the load (load.c) does everything around the
 * reads, the checks of every view included.
 */
#include "engine/engine.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* ---- what the three share: the reader, from the file header on ---- */

static int reader_header(parload__ctx *c, unsigned char *bytes)
{
	parload__reader *r = NULL;
	int rc;

	if (c->size < PARLOAD_FILE_HEADER_SIZE)
		return parload__fail_short_header(c, c->size);
	rc = parload__reader_open(c, &r);
	c->state = r;
	return rc ? rc : parload__reader_read(r, bytes,
					      PARLOAD_FILE_HEADER_SIZE);
}

/* The reader the header step opened; with a header given by the request
 * (parload_request.header) there was none, and the records start here. */
static int reader_of(parload__ctx *c, parload__reader **r)
{
	int rc = 0;

	if (!c->state) {
		rc = parload__reader_open(c, r);
		c->state = *r;
		if (rc == 0)
			rc = parload__reader_seek(*r, PARLOAD_FILE_HEADER_SIZE);
	}
	*r = c->state;
	return rc;
}

static void reader_release(parload__ctx *c)
{
	parload__reader_close(c->state, c);
	c->state = NULL;
}

/* ---- V1: bulk ---- */

typedef struct stage {
	void *base;
	size_t len;
	unsigned char *p; /* len - (p - base) >= the size asked for */
} stage;

/* V1's temporary buffer, made as the dataset's memory is (dataset.c): an
 * anonymous mapping, advised for transparent huge pages unless the caller
 * said not to.  A plain malloc would fault it in 4 KiB at a time while the
 * dataset gets huge pages, and V1 would be measured against the allocator
 * instead of against the other read patterns. */
static int stage_alloc(stage *st, size_t size, unsigned flags)
{
	const size_t huge_page = PARLOAD__HUGE_PAGE;
	const bool huge = size >= huge_page &&
			  !(flags & PARLOAD_OPT_NO_HUGEPAGES);

	st->len = huge ? size + huge_page : size;
	st->base = parload__sys_mmap(NULL, st->len, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->base == MAP_FAILED) {
		st->base = NULL;
		return -1;
	}
	st->p = st->base;
	if (huge) {
		uintptr_t a = ((uintptr_t)st->base + huge_page - 1) &
			      ~(uintptr_t)(huge_page - 1);

		st->p = (unsigned char *)a;
		/* Advice only: without THP the buffer works the same. */
		(void)parload__sys_madvise(st->p, size & ~(huge_page - 1),
					   MADV_HUGEPAGE);
	}
	return 0;
}

/* Split n records at tmp into the dataset's two arrays. */
static void split(parload__ctx *c, const unsigned char *tmp, uint64_t n)
{
	const size_t ps = (size_t)c->d.payload_size;
	const size_t rec = PARLOAD_VIEW_HEADER_SIZE + ps;
	unsigned char *pix = c->out->pixels;

	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *p = tmp + i * rec;

		memcpy(&c->out->headers[i], p, PARLOAD_VIEW_HEADER_SIZE);
		memcpy(pix + i * ps, p + PARLOAD_VIEW_HEADER_SIZE, ps);
	}
}

static int read_bulk(parload__ctx *c)
{
	const uint64_t n = c->d.count;
	/* The dataset fit in memory, so the records fit in size_t. */
	const size_t total = (size_t)(n * c->d.record_size);
	parload__reader *r;
	stage st = { NULL, 0, NULL };
	int rc = reader_of(c, &r);

	if (rc == 0 && n) {
		if (stage_alloc(&st, total, c->opts->flags) != 0)
			rc = parload__fail_path(c->err, PARLOAD_ENOMEM, errno,
						c->path,
						"out of memory: cannot map %zu "
						"bytes to read the file into",
						total);
		if (rc == 0) {
			rc = parload__reader_read(r, st.p, total);
			if (rc == 0)
				split(c, st.p, n);
			parload__sys_munmap(st.base, st.len);
		}
	}
	return rc;
}

/* ---- V2: sequential ---- */

static int read_sequential(parload__ctx *c)
{
	const size_t ps = (size_t)c->d.payload_size;
	unsigned char *pix = c->out->pixels;
	parload__reader *r;
	int rc = reader_of(c, &r);

	for (uint64_t i = 0; rc == 0 && i < c->d.count; i++) {
		rc = parload__reader_read(r, &c->out->headers[i],
					  PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0)
			rc = parload__reader_read(r, pix + i * ps, ps);
	}
	return rc;
}

/* ---- V3: two passes ---- */

static int read_two_pass(parload__ctx *c)
{
	const size_t ps = (size_t)c->d.payload_size;
	const uint64_t n = c->d.count;
	unsigned char *pix = c->out->pixels;
	parload__reader *r;
	int rc = reader_of(c, &r);

	/* Headers: read one, seek over its payload. */
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		rc = parload__reader_read(r, &c->out->headers[i],
					  PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0 && i + 1 < n)
			rc = parload__reader_seek(
				r, parload__record_at(&c->d, i + 1));
	}
	/* Payloads: seek over a header, read its payload. */
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		rc = parload__reader_seek(r, parload__record_at(&c->d, i) +
						     PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0)
			rc = parload__reader_read(r, pix + i * ps, ps);
	}
	return rc;
}

const parload__strategy parload__strategy_bulk = {
	.caps = PARLOAD_CAP_IO,
	.read = read_bulk,
	.header = reader_header,
	.release = reader_release,
};
const parload__strategy parload__strategy_sequential = {
	.caps = PARLOAD_CAP_IO,
	.read = read_sequential,
	.header = reader_header,
	.release = reader_release,
};
const parload__strategy parload__strategy_two_pass = {
	.caps = PARLOAD_CAP_IO,
	.read = read_two_pass,
	.header = reader_header,
	.release = reader_release,
};
