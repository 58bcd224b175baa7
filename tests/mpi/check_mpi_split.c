/*
 * check_mpi_split.c - the division of a load between ranks, without MPI:
 * view and row ranges, the selections built from them, the node's cores.
 * Each part is checked against the global selection resolved by
 * libparload: together the parts hold every selected view (or row)
 * exactly once, in order.
 */
#include "../../mpi/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);            \
			printf(__VA_ARGS__);                                   \
			putchar('\n');                                         \
			failures++;                                            \
		}                                                              \
	} while (0)

static void test_range(void)
{
	for (uint64_t n = 0; n < 40; n++) {
		for (uint64_t parts = 1; parts < 10; parts++) {
			uint64_t at = 0, lo = UINT64_MAX, hi = 0;

			for (uint64_t i = 0; i < parts; i++) {
				uint64_t b, e;

				parload_mpi__range(n, parts, i, &b, &e);
				CHECK(b == at && e >= b,
				      "n %" PRIu64 " parts %" PRIu64 " part %" PRIu64
				      ": [%" PRIu64 ", %" PRIu64 ") after %" PRIu64,
				      n, parts, i, b, e, at);
				/* The larger parts first. */
				CHECK(i == 0 || e - b <= hi,
				      "n %" PRIu64 " parts %" PRIu64
				      ": part %" PRIu64 " larger than one before",
				      n, parts, i);
				lo = e - b < lo ? e - b : lo;
				hi = e - b > hi ? e - b : hi;
				at = e;
			}
			CHECK(at == n && hi - lo <= 1,
			      "n %" PRIu64 " parts %" PRIu64
			      ": covers %" PRIu64 ", sizes %" PRIu64 "..%" PRIu64,
			      n, parts, at, lo, hi);
		}
	}
	/* No overflow where n * index would. */
	{
		uint64_t b, e;

		parload_mpi__range(UINT64_MAX, 3, 2, &b, &e);
		CHECK(e == UINT64_MAX && b == UINT64_MAX - UINT64_MAX / 3,
		      "huge n: [%" PRIu64 ", %" PRIu64 ")", b, e);
	}
}

/* Split the selection sel of header h between ranks by kind, and check the
 * parts against the global shape. */
static void check_split(const parload_file_header *h,
			const parload_selection *sel,
			parload_mpi_split_kind kind, int ranks)
{
	parload_shape g;
	parload_error err;
	uint64_t next_view = 0;
	uint32_t next_row = 0;
	parload_desc d;

	parload_desc_from_header(&d, h);
	if (parload_selection_resolve(&d, sel, &g, &err) != 0) {
		CHECK(0, "resolve: %s", err.message);
		return;
	}
	for (int r = 0; r < ranks; r++) {
		parload_selection part;
		parload_shape s;
		uint64_t vb, ve;
		uint32_t rb, re;
		int has;

		has = parload_mpi__part_selection(&g, kind, ranks, r, &part,
						  &vb, &ve, &rb, &re);
		CHECK(has == (ve > vb && re > rb), "rank %d: has %d", r, has);
		if (kind == PARLOAD_MPI_SPLIT_VIEWS) {
			CHECK(vb == next_view && rb == 0 && re == g.rows,
			      "views split, rank %d: views %" PRIu64 ":%" PRIu64
			      " rows %u:%u", r, vb, ve, rb, re);
			next_view = ve;
		} else {
			CHECK(rb == next_row && vb == 0 && ve == g.views,
			      "rows split, rank %d: views %" PRIu64 ":%" PRIu64
			      " rows %u:%u", r, vb, ve, rb, re);
			next_row = re;
		}
		if (!has)
			continue;
		if (parload_selection_resolve(&d, &part, &s, &err) != 0) {
			CHECK(0, "rank %d: its selection: %s", r, err.message);
			continue;
		}
		CHECK(s.views == ve - vb && s.rows == re - rb &&
		      s.cols == g.cols && s.col_start == g.col_start &&
		      s.row_start == g.row_start + rb,
		      "rank %d: shape %" PRIu64 " views %u rows from %u", r,
		      s.views, s.rows, s.row_start);
		CHECK(s.layout == (kind == PARLOAD_MPI_SPLIT_ROWS ?
				   PARLOAD_LAYOUT_SINOGRAMS : g.layout),
		      "rank %d: layout %d", r, (int)s.layout);
		/* The part's views are the global ones it was given. */
		for (uint64_t k = 0; k < s.views; k++)
			CHECK(parload_shape_view(&s, k) ==
			      parload_shape_view(&g, vb + k),
			      "rank %d: output view %" PRIu64, r, k);
	}
	if (kind == PARLOAD_MPI_SPLIT_VIEWS)
		CHECK(next_view == g.views, "views covered: %" PRIu64, next_view);
	else
		CHECK(next_row == g.rows, "rows covered: %u", next_row);
}

static void test_parts(void)
{
	parload_file_header h;
	parload_selection sel;
	uint64_t seed = 12345;

	parload_file_header_init(&h, 37, 11, 9, PARLOAD_PIXEL_U16, 0);
	for (int ranks = 1; ranks <= 12; ranks++) {
		parload_selection_init(&sel);
		check_split(&h, &sel, PARLOAD_MPI_SPLIT_VIEWS, ranks);
		check_split(&h, &sel, PARLOAD_MPI_SPLIT_ROWS, ranks);
	}
	/* Random selections: views with a step, row bands, column crops,
	 * both layouts, more ranks than views or rows. */
	for (int i = 0; i < 300; i++) {
		int64_t a, b;

		seed = seed * 6364136223846793005u + 1442695040888963407u;
		parload_selection_init(&sel);
		a = (int64_t)(seed >> 33) % 37;
		b = a + 1 + (int64_t)(seed >> 40) % (37 - a);
		sel.views.start = a;
		sel.views.stop = b;
		sel.views.step = 1 + (int64_t)(seed >> 20) % 5;
		a = (int64_t)(seed >> 13) % 9;
		sel.rows.start = a;
		sel.rows.stop = a + 1 + (int64_t)(seed >> 50) % (9 - a);
		a = (int64_t)(seed >> 7) % 11;
		sel.cols.start = a;
		sel.cols.stop = a + 1 + (int64_t)(seed >> 45) % (11 - a);
		sel.layout = (seed >> 60) & 1 ? PARLOAD_LAYOUT_SINOGRAMS :
			PARLOAD_LAYOUT_VIEWS;
		check_split(&h, &sel, PARLOAD_MPI_SPLIT_VIEWS,
			    1 + (int)((seed >> 3) % 12));
		check_split(&h, &sel, PARLOAD_MPI_SPLIT_ROWS,
			    1 + (int)((seed >> 5) % 12));
	}
}

static void test_divide(void)
{
	static const struct {
		unsigned units, group, index, requested, threads, offset;
	} cases[] = {
		{ 2, 1, 0, 0, 2, 0 },  /* 1 rank x 2 threads */
		{ 2, 2, 0, 0, 1, 0 },  /* 2 ranks x 1 thread, disjoint */
		{ 2, 2, 1, 0, 1, 1 },
		{ 8, 3, 2, 0, 2, 4 },  /* 8 cores, 3 ranks: 2 each */
		{ 2, 4, 3, 0, 1, 3 },  /* more ranks than cores: 1 each */
		{ 16, 4, 3, 2, 2, 6 }, /* threads asked for */
		{ 0, 1, 0, 0, 1, 0 },  /* never 0 threads */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned t, o;

		parload_mpi__divide(cases[i].units, cases[i].group,
				    cases[i].index, cases[i].requested, &t, &o);
		CHECK(t == cases[i].threads && o == cases[i].offset,
		      "case %zu: %u threads at %u, want %u at %u", i, t, o,
		      cases[i].threads, cases[i].offset);
	}
}

static void test_complete(void)
{
	parload_file_header fh;
	parload_desc h;
	uint64_t size;

	parload_file_header_init(&fh, 10, 4, 3, PARLOAD_PIXEL_U8, 0);
	parload_file_size(&fh, &size);
	parload_desc_from_header(&h, &fh);
	CHECK(parload_mpi__complete_views(&h, size) == 10, "whole file");
	CHECK(parload_mpi__complete_views(&h, size - 1) == 9, "cut short");
	CHECK(parload_mpi__complete_views(&h, size + 100) == 10, "longer");
	CHECK(parload_mpi__complete_views(&h, 70) == 0, "one partial view");
	CHECK(parload_mpi__complete_views(&h, 10) == 0, "no header");
}

static void test_names(void)
{
	for (int k = 0; k < 3; k++)
		CHECK(parload_mpi_split_from_name(parload_mpi_split_name(k)) == k,
		      "split %d", k);
	for (int k = 0; k < 2; k++)
		CHECK(parload_mpi_io_from_name(parload_mpi_io_name(k)) == k,
		      "io %d", k);
	CHECK(parload_mpi_split_name(3) == NULL &&
	      parload_mpi_split_from_name("slabs") == -1 &&
	      parload_mpi_io_from_name(NULL) == -1, "unknown names");
}

int main(void)
{
	test_range();
	test_parts();
	test_divide();
	test_complete();
	test_names();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
