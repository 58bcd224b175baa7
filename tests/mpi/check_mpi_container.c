/*
 * check_mpi_container.c - TIFF, HDF5 and NumPy .npy files over MPI: rank
 * 0 reads the file's metadata, each rank its part; every part equals the
 * same slice of the raw stream the file was written from (rank 0 writes
 * the .tif, the .h5 and the .npy with parload_save of that stream's
 * pixels and angles).  Split by views and by rows; MPI-IO refused.  A
 * container is skipped, saying so, in a build without its library.
 */
#include "config.h"

#include "mpitest.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEWS 7
#define W 5
#define H 4

/* Rank 0 writes ref's pixels and angles to path; all wait for it. */
static void save(const char *path, const parload_dataset *ref)
{
	float angles[VIEWS];
	parload_stack st;
	parload_error err;

	if (mt_rank == 0) {
		parload_stack_of(&st, ref, angles);
		MT_CHECK(parload_save(path, &st, NULL, &err) == 0, "save %s: %s",
			 path, err.message);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* angles: the container keeps them (HDF5's /exchange/theta; a TIFF has
 * none, 0). */
static void check_part(const char *what, const parload_mpi_part *p,
		       const parload_dataset *ref, bool angles)
{
	const parload_shape *s = &p->dataset.shape;
	const uint16_t *out = p->dataset.pixels, *in = ref->pixels;

	MT_CHECK(p->desc.count == VIEWS && p->desc.width == W &&
		 p->desc.height == H, "%s: %" PRIu64 " views of %ux%u", what,
		 p->desc.count, p->desc.width, p->desc.height);
	for (uint64_t k = 0; k < s->views; k++) {
		const uint64_t v = parload_shape_view(s, k);

		MT_CHECK(p->dataset.headers[k].view_index == v &&
			 p->dataset.headers[k].angle_deg ==
				 (angles ? ref->headers[v].angle_deg : 0.0f),
			 "%s: header of view %" PRIu64, what, v);
		for (uint64_t r = 0; r < s->rows; r++)
			for (uint64_t c = 0; c < s->cols; c++) {
				const uint64_t at = mt_at(s, k, r, c);

				MT_CHECK(out[at] ==
						 in[(v * H + s->row_start + r) * W +
						    s->col_start + c],
					 "%s: view %" PRIu64 " row %" PRIu64
					 " col %" PRIu64, what, v, r, c);
			}
	}
}

static void one(const char *path, const parload_dataset *ref, bool angles)
{
	parload_mpi_options o;
	parload_mpi_split split;
	parload_mpi_part p;
	parload_error err;
	char what[600];
	int rc;

	save(path, ref);
	for (int kind = PARLOAD_MPI_SPLIT_VIEWS; kind <= PARLOAD_MPI_SPLIT_ROWS;
	     kind++) {
		parload_mpi_options_init(&o);
		o.load.flags = PARLOAD_OPT_NO_BIND;
		o.error = &err;
		memset(&split, 0, sizeof(split));
		split.kind = (parload_mpi_split_kind)kind;
		snprintf(what, sizeof(what), "%s, %s split", path,
			 parload_mpi_split_name(kind));
		rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
				      &o, &split, &p);
		MT_CHECK(rc == 0, "%s: %s", what, err.message);
		check_part(what, &p, ref, angles);
		parload_mpi_part_free(&p);
	}
	o.io = PARLOAD_MPI_IO_MPIIO;
	rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
			      &o, NULL, &p);
	MT_CHECK(rc == PARLOAD_ENOTSUP && strstr(err.message, "MPI-IO"),
		 "%s with MPI-IO: %d %s", path, rc, err.message);
}

static void body(const char *dir)
{
	char raw[512], tif[512], h5[512], npy[512];
	parload_dataset ref;

	snprintf(raw, sizeof(raw), "%s/scan.raw", dir);
	snprintf(tif, sizeof(tif), "%s/scan.tif", dir);
	snprintf(h5, sizeof(h5), "%s/scan.h5", dir);
	snprintf(npy, sizeof(npy), "%s/scan.npy", dir);
	mt_write(raw, VIEWS, W, H, PARLOAD_PIXEL_U16, 0, 5);
	mt_reference(raw, &ref);
	if (parload_has_tiff())
		one(tif, &ref, false);
	else if (mt_rank == 0)
		printf("TIFF: skipped, this build has no libtiff\n");
	if (parload_has_hdf5())
		one(h5, &ref, true);
	else if (mt_rank == 0)
		printf("HDF5: skipped, this build has no libhdf5\n");
	one(npy, &ref, false);
	parload_dataset_free(&ref);
}

int main(int argc, char **argv)
{
	static const int counts[] = { 1, 3 };

	return mpitest_main(argc, argv, counts, 2, body);
}
