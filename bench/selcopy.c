/*
 * selcopy.c - a selection the way a program gets one without parload's
 * selections: load the whole file with parload's parallel loader, then
 * copy the selected views, rows and columns into an array of their own,
 * in view or sinogram layout, with the selected views' headers beside it.
 * The loader (its topology and thread pool) is made before the clock, as
 * the command does; the clock runs from the load's start until the copy
 * is complete, what `parload --views/--rows/--cols/--layout` reports.  The
 * output is allocated as parload allocates a dataset (2 MiB aligned,
 * advised for huge pages) and faulted in by the copy, on the clock.
 *
 * Usage: selcopy [--threads N] [--views A:B:S] [--rows A:B] [--cols A:B]
 *                [--layout views|sinograms] --seed S FILE
 * Slices take non-negative start and stop (stop excluded) and a positive
 * step; an omitted slice is the whole axis.  After the clock, every
 * output byte and header is checked against the stream that
 * `parload gen --seed S` writes (cli/gen.c).  Prints one JSON object:
 * {"seconds", "load_seconds", "bytes" (the file), "views" (selected),
 * "out_bytes", "verified"}; exit status 1 on any failure or difference.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <parload.h>

#include "gen.h"

#define HUGE_PAGE ((size_t)2 << 20)

struct slice {
	uint64_t start, stop, step; /* stop 0: to the end */
};

struct sel {
	struct slice views, rows, cols;
	int sinograms;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "A:B" or "A:B:S" (either part of A:B may be empty). */
static int parse_slice(const char *text, int allow_step, struct slice *s)
{
	char *end;

	s->start = strtoull(text, &end, 10);
	if (*end != ':')
		return -1;
	s->stop = strtoull(end + 1, &end, 10);
	s->step = 1;
	if (*end == ':' && allow_step)
		s->step = strtoull(end + 1, &end, 10);
	return *end == '\0' && s->step > 0 ? 0 : -1;
}

/* Resolve an axis of length n: the count of selected indices, or 0 if
 * the slice does not fit. */
static uint64_t resolve(struct slice *s, uint64_t n)
{
	if (s->stop == 0)
		s->stop = n;
	if (s->start >= s->stop || s->stop > n)
		return 0;
	return (s->stop - s->start + s->step - 1) / s->step;
}

static void *alloc_output(size_t len, void **map, size_t *map_len)
{
	unsigned char *m;

	*map_len = len + HUGE_PAGE;
	m = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	*map = m;
	(void)madvise(m, *map_len, MADV_HUGEPAGE);
	return (void *)(((uintptr_t)m + HUGE_PAGE - 1) &
			~(uintptr_t)(HUGE_PAGE - 1));
}

/* Output row r of output view k starts here (bytes). */
static size_t out_offset(const struct sel *s, uint64_t nv, uint64_t nr,
			 size_t row_bytes, uint64_t k, uint64_t r)
{
	return s->sinograms ? (size_t)((r * nv + k) * row_bytes) :
			      (size_t)((k * nr + r) * row_bytes);
}

/* Row r (of the selection) of output view k, in the loaded dataset. */
static const unsigned char *in_row_at(const parload_dataset *ds,
				      const struct sel *s, uint64_t k,
				      uint64_t r)
{
	const parload_desc *h = &ds->desc;
	uint64_t v = s->views.start + k * s->views.step;

	return (const unsigned char *)ds->pixels + v * h->payload_size +
	       ((s->rows.start + r) * h->width + s->cols.start) *
		       h->bytes_per_pixel;
}

/* The copy as a program writes it: in the output's order, so that the
 * output is written (and faulted in) front to back; a view's whole rows
 * are one block. */
static void copy_selection(const parload_dataset *ds, const struct sel *s,
			   uint64_t nv, uint64_t nr, unsigned char *out,
			   parload_view_header *hout)
{
	const parload_desc *h = &ds->desc;
	size_t row_bytes = (size_t)(s->cols.stop - s->cols.start) *
			   h->bytes_per_pixel;
	int block = !s->sinograms && s->cols.stop - s->cols.start == h->width;
	uint64_t outer = s->sinograms ? nr : nv, inner = s->sinograms ? nv : nr;

	for (uint64_t k = 0; k < nv; k++)
		hout[k] = ds->headers[s->views.start + k * s->views.step];
	for (uint64_t i = 0; i < outer; i++) {
		if (block) {
			memcpy(out, in_row_at(ds, s, i, 0), nr * row_bytes);
			out += nr * row_bytes;
			continue;
		}
		for (uint64_t j = 0; j < inner; j++, out += row_bytes)
			memcpy(out, s->sinograms ? in_row_at(ds, s, j, i) :
						   in_row_at(ds, s, i, j),
			       row_bytes);
	}
}

/* Every output byte and header against the generator. */
static int check(const parload_desc *h, const struct sel *s,
		 uint64_t seed, uint64_t nv, uint64_t nr,
		 const unsigned char *out, const parload_view_header *hout)
{
	size_t bpp = h->bytes_per_pixel, in_row = (size_t)h->width * bpp;
	size_t row_bytes = (size_t)(s->cols.stop - s->cols.start) * bpp;
	unsigned char *want = malloc(h->payload_size ? h->payload_size : 1);
	int ok = want != NULL;

	for (uint64_t k = 0; ok && k < nv; k++) {
		uint64_t v = s->views.start + k * s->views.step;
		parload_view_header vh;

		pgen_view_header(seed, v, h->count, &vh);
		pgen_payload(seed, v, want, h->payload_size);
		if (memcmp(&vh, &hout[k], sizeof(vh)) != 0) {
			fprintf(stderr, "selcopy: view %" PRIu64
				": header differs\n", v);
			ok = 0;
		}
		for (uint64_t r = 0; ok && r < nr; r++)
			if (memcmp(out + out_offset(s, nv, nr, row_bytes, k, r),
				   want + (s->rows.start + r) * in_row +
					   s->cols.start * bpp,
				   row_bytes) != 0) {
				fprintf(stderr, "selcopy: view %" PRIu64
					", row %" PRIu64 ": pixels differ\n",
					v, s->rows.start + r);
				ok = 0;
			}
	}
	free(want);
	return ok;
}

static int usage(void)
{
	fprintf(stderr, "usage: selcopy [--threads N] [--views A:B:S] "
			"[--rows A:B] [--cols A:B] [--layout views|sinograms] "
			"--seed S FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct sel s = { { 0, 0, 1 }, { 0, 0, 1 }, { 0, 0, 1 }, 0 };
	const char *path = NULL;
	uint64_t seed = 0, nv, nr, nc, out_bytes, file_bytes;
	int have_seed = 0, ok;
	parload_options opts;
	parload_error err;
	parload_loader *loader;
	parload_request req;
	parload_dataset ds;
	parload_view_header *hout;
	unsigned char *out;
	void *map = NULL;
	size_t map_len = 0;
	double t0, t1, t2;

	parload_options_init(&opts);
	for (int i = 1; i < argc; i++) {
		/* argv[argc] is NULL: v is the option's value or NULL. */
		const char *a = argv[i], *v = argv[i + 1];
		int bad = 0;

		if (a[0] != '-') {
			if (path)
				return usage();
			path = a;
			continue;
		}
		if (!v)
			return usage();
		if (strcmp(a, "--threads") == 0)
			opts.threads = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(a, "--views") == 0)
			bad = parse_slice(v, 1, &s.views);
		else if (strcmp(a, "--rows") == 0)
			bad = parse_slice(v, 0, &s.rows);
		else if (strcmp(a, "--cols") == 0)
			bad = parse_slice(v, 0, &s.cols);
		else if (strcmp(a, "--layout") == 0) {
			s.sinograms = strcmp(v, "sinograms") == 0;
			bad = !s.sinograms && strcmp(v, "views") != 0;
		}
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, NULL, 10), have_seed = 1;
		else
			bad = 1;
		if (bad)
			return usage();
		i++;
	}
	if (!path || !have_seed)
		return usage();

	if (parload_loader_new(&loader, &opts, &err) != 0) {
		fprintf(stderr, "selcopy: %s\n", err.message);
		return 1;
	}
	t0 = now();
	parload_request_init(&req);
	req.source.path = path;
	if (parload_loader_run(loader, &req, &ds, &err) != 0) {
		fprintf(stderr, "selcopy: %s\n", err.message);
		return 1;
	}
	t1 = now();
	nv = resolve(&s.views, ds.desc.count);
	nr = resolve(&s.rows, ds.desc.height);
	nc = resolve(&s.cols, ds.desc.width);
	if (!nv || !nr || !nc) {
		fprintf(stderr, "selcopy: %s: the selection does not fit the "
				"file\n", path);
		return 1;
	}
	out_bytes = nv * nr * nc * ds.desc.bytes_per_pixel;
	out = alloc_output((size_t)out_bytes, &map, &map_len);
	hout = malloc((size_t)nv * sizeof(*hout));
	if (!out || !hout) {
		fprintf(stderr, "selcopy: out of memory\n");
		return 1;
	}
	copy_selection(&ds, &s, nv, nr, out, hout);
	t2 = now();

	ok = check(&ds.desc, &s, seed, nv, nr, out, hout);
	file_bytes = ds.desc.offset + ds.desc.count * ds.desc.record_size;
	printf("{\"seconds\":%.9f,\"load_seconds\":%.9f,\"bytes\":%" PRIu64
	       ",\"views\":%" PRIu64 ",\"out_bytes\":%" PRIu64
	       ",\"verified\":%s}\n",
	       t2 - t0, t1 - t0, file_bytes, nv, out_bytes,
	       ok ? "true" : "false");
	/* Freed so that valgrind can run it clean; not on the clock. */
	free(hout);
	munmap(map, map_len);
	parload_dataset_free(&ds);
	parload_loader_free(loader);
	return ok ? 0 : 1;
}
