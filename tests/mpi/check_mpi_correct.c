/*
 * check_mpi_correct.c - a corrected load over MPI: each rank's part is
 * float32 (P - D) / max(F - D, 1e-6), then -ln(max(x, 1e-6)), of its own
 * views or rows, against the formula computed here in double from the
 * raw pixels of the scan, its darks and its flats (each loaded whole by
 * one process); split by views and by rows, binned 2 x 2 or not (the
 * ranks share out whole bins), and MPI-IO refused.
 */
#include "config.h"

#include "mpitest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEWS 7
#define W 5
#define H 4
#define REFS 3

/* Pixel i of a u16 dataset, as a double. */
static double px(const parload_dataset *d, uint64_t i)
{
	return (double)((const uint16_t *)d->pixels)[i];
}

/* The mean of the bin x bin pixels from (r, c) of frame v. */
static double binned(const parload_dataset *d, uint64_t v, uint64_t r,
		     uint64_t c, unsigned bin)
{
	double s = 0.0;

	for (unsigned a = 0; a < bin; a++)
		for (unsigned b = 0; b < bin; b++)
			s += px(d, v * W * H + (r + a) * W + c + b);
	return s / (bin * bin);
}

/* The mean over a reference set of its frames' bins at (r, c). */
static double mean(const parload_dataset *d, uint64_t r, uint64_t c,
		   unsigned bin)
{
	double s = 0.0;

	for (uint64_t k = 0; k < d->shape.views; k++)
		s += binned(d, k, r, c, bin);
	return s / (double)d->shape.views;
}

static double expected(const parload_dataset *scan, const parload_dataset *dk,
		       const parload_dataset *fl, uint64_t v, uint64_t r,
		       uint64_t c, unsigned bin)
{
	const double d = mean(dk, r, c, bin), f = mean(fl, r, c, bin);
	double x = (binned(scan, v, r, c, bin) - d) / fmax(f - d, 1e-6);

	return -log(fmax(x, 1e-6));
}

static void check_part(const char *what, const parload_mpi_part *p,
		       const parload_dataset *scan, const parload_dataset *dk,
		       const parload_dataset *fl)
{
	const parload_shape *s = &p->dataset.shape;
	const float *out = p->dataset.pixels;
	const unsigned bin = p->global.bin > 1 ? p->global.bin : 1;

	MT_CHECK(p->global.pixel_type == PARLOAD_PIXEL_F32 &&
		 (s->views == 0 || s->pixel_type == PARLOAD_PIXEL_F32),
		 "%s: float32 (global %d, part %d)", what,
		 p->global.pixel_type, s->pixel_type);
	for (uint64_t k = 0; k < s->views; k++)
		for (uint64_t r = 0; r < s->rows; r++)
			for (uint64_t c = 0; c < s->cols; c++) {
				const uint64_t at = mt_at(s, k, r, c);
				const double want = expected(
					scan, dk, fl, parload_shape_view(s, k),
					s->row_start + r * bin,
					s->col_start + c * bin, bin);

				MT_CHECK(fabs(out[at] - want) <=
						 1e-5 * fabs(want) + 1e-6,
					 "%s: view %" PRIu64 " row %" PRIu64
					 " col %" PRIu64 ": %g, expected %g",
					 what, k, r, c, (double)out[at], want);
			}
}

static void body(const char *dir)
{
	char scan_path[512], dark_path[512], flat_path[512];
	parload_dataset scan, dk, fl;
	parload_refs darks, flats;
	parload_correction corr;
	parload_mpi_options o;
	parload_mpi_split split;
	parload_mpi_part p;
	parload_error err;
	int rc;

	snprintf(scan_path, sizeof(scan_path), "%s/scan.raw", dir);
	snprintf(dark_path, sizeof(dark_path), "%s/darks.raw", dir);
	snprintf(flat_path, sizeof(flat_path), "%s/flats.raw", dir);
	mt_write(scan_path, VIEWS, W, H, PARLOAD_PIXEL_U16, 0, 11);
	mt_write(dark_path, REFS, W, H, PARLOAD_PIXEL_U16, 0, 12);
	mt_write(flat_path, REFS, W, H, PARLOAD_PIXEL_U16, 0, 13);
	mt_reference(scan_path, &scan);
	mt_reference(dark_path, &dk);
	mt_reference(flat_path, &fl);

	memset(&darks, 0, sizeof(darks));
	memset(&flats, 0, sizeof(flats));
	parload_source_init(&darks.source);
	parload_source_init(&flats.source);
	darks.source.path = dark_path;
	flats.source.path = flat_path;
	memset(&corr, 0, sizeof(corr));
	corr.darks = &darks;
	corr.flats = &flats;
	corr.flags = PARLOAD_CORR_MINUS_LOG;

	for (int i = 0; i < 4; i++) {
		const int kind = i % 2 ? PARLOAD_MPI_SPLIT_ROWS :
					 PARLOAD_MPI_SPLIT_VIEWS;
		char what[64];

		/* 4 x 5 pixels in 2 x 2 bins: 2 x 2, a column dropped. */
		corr.bin = i < 2 ? 1 : 2;
		snprintf(what, sizeof(what), "%s split, bin %u",
			 parload_mpi_split_name(kind), corr.bin);
		parload_mpi_options_init(&o);
		o.load.flags = PARLOAD_OPT_NO_BIND;
		o.error = &err;
		memset(&split, 0, sizeof(split));
		split.kind = (parload_mpi_split_kind)kind;
		rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(scan_path, &corr),
				      &o, &split, &p);
		MT_CHECK(rc == 0, "%s: %s", what, err.message);
		MT_CHECK(p.global.rows == H / corr.bin &&
			 p.global.cols == W / corr.bin,
			 "%s: global %u x %u", what, p.global.rows,
			 p.global.cols);
		check_part(what, &p, &scan, &dk, &fl);
		parload_mpi_part_free(&p);
	}
	/* MPI-IO reads no corrections: every rank says so. */
	o.io = PARLOAD_MPI_IO_MPIIO;
	rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(scan_path, &corr),
			      &o, NULL, &p);
	MT_CHECK(rc == PARLOAD_ENOTSUP && strstr(err.message, "MPI-IO"),
		 "MPI-IO with a correction: %d %s", rc, err.message);
	parload_dataset_free(&scan);
	parload_dataset_free(&dk);
	parload_dataset_free(&fl);
}

int main(int argc, char **argv)
{
	static const int counts[] = { 1, 3 };

	return mpitest_main(argc, argv, counts, 2, body);
}
