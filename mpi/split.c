/*
 * split.c - which part of a load each rank takes.  Pure functions of the
 * header and the selection: every rank computes every rank's part itself,
 * so the split costs no communication and the parts agree by construction.
 */
#include "internal.h"

void parload_mpi__range(uint64_t n, uint64_t parts, uint64_t index,
			uint64_t *begin, uint64_t *end)
{
	/* q and r rather than n * index / parts, which would overflow. */
	uint64_t q = n / parts, r = n % parts;

	*begin = index * q + (index < r ? index : r);
	*end = *begin + q + (index < r ? 1 : 0);
}

/* A slice of the file's views that selects output views [b, e) of s. */
static parload_slice view_slice(const parload_shape *s, uint64_t b,
				uint64_t e)
{
	parload_slice v;

	v.start = (int64_t)parload_shape_view(s, b);
	v.stop = (int64_t)parload_shape_view(s, e - 1) + 1;
	v.step = (int64_t)s->view_step;
	return v;
}

int parload_mpi__part_selection(const parload_shape *global,
				parload_mpi_split_kind kind, int ranks,
				int rank, parload_selection *sel,
				uint64_t *view_begin, uint64_t *view_end,
				uint32_t *row_begin, uint32_t *row_end)
{
	uint64_t vb = 0, ve = global->views, rb = 0, re = global->rows;

	if (kind == PARLOAD_MPI_SPLIT_ROWS)
		parload_mpi__range(global->rows, (uint64_t)ranks,
				   (uint64_t)rank, &rb, &re);
	else
		parload_mpi__range(global->views, (uint64_t)ranks,
				   (uint64_t)rank, &vb, &ve);
	*view_begin = vb;
	*view_end = ve;
	*row_begin = (uint32_t)rb;
	*row_end = (uint32_t)re;
	if (vb == ve || rb == re)
		return 0;
	parload_selection_init(sel);
	sel->views = view_slice(global, vb, ve);
	sel->rows.start = (int64_t)global->row_start + (int64_t)rb;
	sel->rows.stop = (int64_t)global->row_start + (int64_t)re;
	sel->rows.step = PARLOAD_OMIT;
	sel->cols.start = global->col_start;
	sel->cols.stop = (int64_t)global->col_start + global->cols;
	sel->cols.step = PARLOAD_OMIT;
	/* A row slab is what reconstruction reads: sinograms, always. */
	sel->layout = kind == PARLOAD_MPI_SPLIT_ROWS ?
		PARLOAD_LAYOUT_SINOGRAMS : global->layout;
	return 1;
}

void parload_mpi__divide(unsigned units, unsigned group, unsigned index,
			 unsigned requested, unsigned *threads,
			 unsigned *offset)
{
	unsigned t = requested;

	if (t == 0)
		t = group && units / group ? units / group : 1;
	*threads = t;
	/* Wraps (libparload takes it modulo its cores) only when the group
	 * asks for more threads than there are cores. */
	*offset = index * t;
}

uint64_t parload_mpi__complete_views(const parload_desc *d, uint64_t size)
{
	uint64_t n;

	if (size < d->offset || d->record_size == 0)
		return 0;
	/* The last record's gap may be missing. */
	n = (size - d->offset + d->gap) / d->record_size;
	return n < d->count ? n : d->count;
}
