/*
 * check_mpi_load.c - every rank's part equals the same slice of a
 * single-process load, and the parts cover the selection exactly once.
 *
 * For every pixel type, view counts that do not divide by the ranks, more
 * ranks than views or rows, slabs of one row, both splits, an explicit
 * split, a split of a selection, and both ways of reading (libparload's
 * pool, MPI-IO).  The reference is parload_load() of the whole file on
 * each rank, sliced here.
 */
#include "config.h"

#include "mpitest.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pixel (view v, row r, col c) of the reference. */
static const unsigned char *ref_pixel(const parload_dataset *ref, uint64_t v,
				      uint64_t r, uint64_t c)
{
	const parload_desc *h = &ref->desc;

	return (const unsigned char *)ref->pixels + v * h->payload_size +
		(r * h->width + c) * h->bytes_per_pixel;
}

/* The part against the reference: each of its views and rows, wherever
 * its layout puts them. */
static void compare(const char *what, const parload_mpi_part *p,
		    const parload_dataset *ref)
{
	const parload_shape *s = &p->dataset.shape;
	const size_t line = (size_t)s->cols * s->bytes_per_pixel;

	for (uint64_t k = 0; k < s->views; k++) {
		uint64_t v = parload_shape_view(s, k);

		MT_CHECK(memcmp(&p->dataset.headers[k], &ref->headers[v],
				sizeof(parload_view_header)) == 0,
			 "%s: header of output view %" PRIu64 " (file view %"
			 PRIu64 ")", what, k, v);
		for (uint64_t r = 0; r < s->rows; r++) {
			uint64_t at = s->layout == PARLOAD_LAYOUT_VIEWS ?
				k * s->rows + r : r * s->views + k;

			MT_CHECK(memcmp((const unsigned char *)p->dataset.pixels +
					at * line,
					ref_pixel(ref, v, s->row_start + r,
						  s->col_start),
					line) == 0,
				 "%s: output view %" PRIu64 " (file view %" PRIu64
				 "), row %" PRIu64 " (file row %" PRIu64 ")",
				 what, k, v, r, s->row_start + r);
		}
	}
}

/* The parts of all ranks tile the global selection in rank order, and
 * each part is where its range says. */
static void coverage(const char *what, const parload_mpi_part *p)
{
	uint64_t mine[4] = { p->view_begin, p->view_end, p->row_begin,
			     p->row_end };
	uint64_t *all = malloc(4 * sizeof(uint64_t) * (size_t)mt_size);
	uint64_t at = 0;
	const int views = p->split == PARLOAD_MPI_SPLIT_VIEWS;
	const uint64_t n = views ? p->global.views : p->global.rows;
	const uint64_t fair = (n + (uint64_t)mt_size - 1) / (uint64_t)mt_size;

	MT_CHECK(all, "out of memory");
	MPI_Allgather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T,
		      MPI_COMM_WORLD);
	for (int r = 0; r < mt_size; r++) {
		uint64_t b = all[4 * r + (views ? 0 : 2)];
		uint64_t e = all[4 * r + (views ? 1 : 3)];

		MT_CHECK(b == at && e >= b && e - b <= fair &&
			 e - b + 1 >= n / (uint64_t)mt_size,
			 "%s: rank %d holds %" PRIu64 ":%" PRIu64
			 " after %" PRIu64 " (of %" PRIu64 ")", what, r, b, e,
			 at, n);
		at = e;
	}
	MT_CHECK(at == n, "%s: the parts hold %" PRIu64 " of %" PRIu64, what,
		 at, n);
	free(all);
	/* The part's shape is its range. */
	if (p->dataset.shape.views == 0)
		return;
	if (views)
		MT_CHECK(p->dataset.shape.views == p->view_end - p->view_begin &&
			 p->dataset.shape.rows == p->global.rows &&
			 parload_shape_view(&p->dataset.shape, 0) ==
				 parload_shape_view(&p->global, p->view_begin),
			 "%s: shape of the part", what);
	else
		MT_CHECK(p->dataset.shape.rows == p->row_end - p->row_begin &&
			 p->dataset.shape.views == p->global.views &&
			 p->dataset.shape.row_start ==
				 p->global.row_start + p->row_begin &&
			 p->dataset.shape.layout == PARLOAD_LAYOUT_SINOGRAMS,
			 "%s: shape of the part", what);
}

static void load(const char *path, const char *what,
		 const parload_mpi_options *o, parload_mpi_split_kind kind,
		 const parload_dataset *ref)
{
	parload_mpi_options opts = *o;
	parload_mpi_split split;
	parload_mpi_part p;
	parload_error err;
	char label[256];
	int rc;

	memset(&split, 0, sizeof(split));
	split.kind = kind;
	opts.error = &err;
	snprintf(label, sizeof(label), "%s, %s split, %s", what,
		 parload_mpi_split_name(kind), parload_mpi_io_name(o->io));
	rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
			      &opts, &split, &p);
	MT_CHECK(rc == 0, "%s: %s", label, err.message);
	MT_CHECK(p.rank == mt_rank && p.ranks == mt_size && p.split == kind,
		 "%s: rank %d of %d", label, p.rank, p.ranks);
	MT_CHECK((p.dataset.shape.views == 0) == (p.dataset.pixels == NULL),
		 "%s: arrays of an empty part", label);
	coverage(label, &p);
	compare(label, &p, ref);
	if (o->load.flags & PARLOAD_OPT_VERIFY_CRC)
		MT_CHECK(p.dataset.stats.crc_checked == p.dataset.shape.views,
			 "%s: %" PRIu64 " CRCs checked of %" PRIu64, label,
			 p.dataset.stats.crc_checked, p.dataset.shape.views);
	if (kind == PARLOAD_MPI_SPLIT_VIEWS && o->load.selection.views.step ==
	    PARLOAD_OMIT) {
		parload_view_header *all;
		uint64_t n;

		rc = parload_mpi_gather_headers(MPI_COMM_WORLD, &p, &all, &n,
						&err);
		MT_CHECK(rc == 0 && n == p.global.views, "%s: gather: %s",
			 label, err.message);
		for (uint64_t k = 0; k < n; k++)
			MT_CHECK(memcmp(&all[k],
					&ref->headers[parload_shape_view(&p.global, k)],
					sizeof(*all)) == 0,
				 "%s: gathered header %" PRIu64, label, k);
		free(all);
	}
	parload_mpi_part_free(&p);
}

/* Each rank its own selection: views rank, rank + ranks, ... (or the
 * last view, for ranks past the views), a band of rows, a crop. */
static void load_explicit(const char *path, const parload_mpi_options *o,
			  const parload_dataset *ref)
{
	const parload_desc *h = &ref->desc;
	parload_mpi_options opts = *o;
	parload_mpi_split split;
	parload_mpi_part p;
	parload_error err;
	int rc;

	memset(&split, 0, sizeof(split));
	split.kind = PARLOAD_MPI_SPLIT_EXPLICIT;
	parload_selection_init(&split.selection);
	split.selection.views.start = (uint64_t)mt_rank < h->count ?
		mt_rank : (int64_t)h->count - 1;
	split.selection.views.step = mt_size;
	split.selection.rows.start = h->height > 1 ? 1 : 0;
	split.selection.cols.stop = h->width > 1 ? -1 : 1;
	split.selection.layout = mt_rank % 2 ? PARLOAD_LAYOUT_SINOGRAMS :
		PARLOAD_LAYOUT_VIEWS;
	opts.error = &err;
	rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
			      &opts, &split, &p);
	MT_CHECK(rc == 0, "explicit split: %s", err.message);
	MT_CHECK(p.dataset.shape.layout == split.selection.layout &&
		 parload_shape_view(&p.dataset.shape, 0) ==
			 (uint64_t)split.selection.views.start,
		 "explicit split: shape");
	compare("explicit split", &p, ref);
	parload_mpi_part_free(&p);
}

static void one_file(const char *dir, uint64_t n, uint32_t w, uint32_t h,
		     int type, int all_tests)
{
	parload_mpi_options o;
	parload_dataset ref;
	char path[512], what[128];

	snprintf(path, sizeof(path), "%s/%s-%" PRIu64 "x%ux%u.raw", dir,
		 parload_pixel_name(type), n, w, h);
	snprintf(what, sizeof(what), "%" PRIu64 " views %ux%u %s", n, w, h,
		 parload_pixel_name(type));
	mt_write(path, n, w, h, type, 1, (uint64_t)type * 1000 + n);
	mt_reference(path, &ref);
	for (int io = 0; io < 2; io++) {
		parload_mpi_options_init(&o);
		o.io = (parload_mpi_io)io;
		/* CRCs checked where the parts hold whole payloads. */
		o.load.flags = PARLOAD_OPT_NO_BIND | PARLOAD_OPT_VERIFY_CRC;
		load(path, what, &o, PARLOAD_MPI_SPLIT_VIEWS, &ref);
		if (mt_size == 1)
			load(path, what, &o, PARLOAD_MPI_SPLIT_ROWS, &ref);
		o.load.flags = PARLOAD_OPT_NO_BIND;
		load(path, what, &o, PARLOAD_MPI_SPLIT_ROWS, &ref);
		if (!all_tests)
			continue;
		load_explicit(path, &o, &ref);
		/* A selection shared out: every 2nd view from 1, rows 1:-1,
		 * a crop, in sinogram layout. */
		o.load.selection.views.start = 1;
		o.load.selection.views.step = 2;
		o.load.selection.rows.start = 1;
		o.load.selection.rows.stop = -1;
		o.load.selection.cols.start = 1;
		o.load.selection.layout = PARLOAD_LAYOUT_SINOGRAMS;
		load(path, "a selection", &o, PARLOAD_MPI_SPLIT_VIEWS, &ref);
		load(path, "a selection", &o, PARLOAD_MPI_SPLIT_ROWS, &ref);
	}
	parload_dataset_free(&ref);
}

/* Whether every rank may run on the same CPUs. */
static int same_masks(void)
{
	cpu_set_t mine, *all = calloc((size_t)mt_size, sizeof(cpu_set_t));
	int same = 1;

	MT_CHECK(all, "out of memory");
	CPU_ZERO(&mine);
	sched_getaffinity(0, sizeof(mine), &mine);
	MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all,
		      (int)sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
	for (int r = 0; r < mt_size; r++)
		same &= CPU_EQUAL(&all[r], &mine);
	free(all);
	return same;
}

static void body(const char *dir)
{
	/* 7 views: no rank count from 2 to 4 divides them; 4 rows: one-row
	 * slabs with 4 ranks, and unequal ones with 3. */
	for (int t = PARLOAD_PIXEL_U8; t <= PARLOAD_PIXEL_F64; t++)
		one_file(dir, 7, 5, 4, t, t == PARLOAD_PIXEL_U16);
	/* More ranks than views, and than rows. */
	one_file(dir, 2, 3, 2, PARLOAD_PIXEL_U8, 0);
	one_file(dir, 1, 7, 1, PARLOAD_PIXEL_F32, 0);
	/* The node's cores: ranks on one node that share cores divide
	 * them, each from its own offset. */
	{
		unsigned units, t, off;
		int lr, ln, rc;

		rc = parload_mpi_node_threads(MPI_COMM_SELF, 0, &units, &off,
					      &lr, &ln, NULL);
		MT_CHECK(rc == 0 && lr == 0 && ln == 1 && off == 0,
			 "node_threads alone: %d", rc);
		rc = parload_mpi_node_threads(MPI_COMM_WORLD, 0, &t, &off, &lr,
					      &ln, NULL);
		MT_CHECK(rc == 0 && ln == mt_size && lr == mt_rank,
			 "node_threads: local rank %d of %d", lr, ln);
		/* Unbound ranks share the cores; ranks the launcher bound to
		 * cores of their own (Open MPI binds 2 ranks or fewer to a
		 * core each) keep them. */
		if (same_masks())
			MT_CHECK(t == (units / (unsigned)ln ?
				       units / (unsigned)ln : 1) &&
				 off == (unsigned)lr * t,
				 "node_threads, shared cores: %u threads from %u of %u cores",
				 t, off, units);
		else
			MT_CHECK(t == units && off == 0,
				 "node_threads, bound ranks: %u threads from %u of %u cores",
				 t, off, units);
	}
}

int main(int argc, char **argv)
{
	static const int counts[] = { 1, 2, 3, 4 };

	return mpitest_main(argc, argv, counts, 4, body);
}
