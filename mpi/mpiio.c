/*
 * mpiio.c - the MPI-IO strategy: each rank's part in two collective reads.
 *
 * A file view describes exactly the bytes of the rank's selection (its
 * views' headers, then their selected rows and columns), and a memory
 * datatype where they go (view after view, or scattered into sinograms),
 * so MPI_File_read_all moves only selected bytes and the MPI library may
 * merge the ranks' requests into large ones (collective buffering): what
 * a parallel file system rewards.  One thread per rank; the views are
 * checked after the read by libparload's own check (parload_check_views:
 * view_index, the CRCs when asked, keep-going), whose rule that a CRC
 * needs whole payloads is asked before the read.
 */
#include "internal.h"

#include <limits.h>
#include <string.h>

struct types {
	MPI_Datatype hfile, pfile, pmem;
	MPI_Offset hdisp, pdisp;
};

static void free_types(struct types *t)
{
	parload_mpi__type_free(&t->hfile);
	parload_mpi__type_free(&t->pfile);
	parload_mpi__type_free(&t->pmem);
}

/* MPI's counts are int: a part whose views, rows or row length (line
 * bytes) do not fit one is PARLOAD_ENOTSUP rather than a wrapped count. */
static int check_counts(const parload_desc *h, const parload_shape *s,
			uint64_t line, const char *path, parload_error *err)
{
	if (s->views > INT_MAX || s->rows > INT_MAX || line > INT_MAX ||
	    s->views * s->view_step >
		    (uint64_t)INT64_MAX / (uint64_t)h->record_size)
		return parload_mpi__fail(err, PARLOAD_ENOTSUP, path,
					 "a part of %llu views of %u rows of %llu bytes is too large for MPI-IO's int counts",
					 (unsigned long long)s->views, s->rows,
					 (unsigned long long)line);
	return 0;
}

/* The file views: where the headers and the pixels of shape s start in
 * a file with header h, and their types (not committed). */
static int file_types(const parload_desc *h, const parload_shape *s,
		      uint64_t line, struct types *t)
{
	const MPI_Aint record = (MPI_Aint)h->record_size;
	const MPI_Aint row = (MPI_Aint)h->row_size;
	MPI_Datatype view = MPI_DATATYPE_NULL;
	int rc;

	t->hdisp = (MPI_Offset)(h->offset + s->view_start * record);
	t->pdisp = t->hdisp + (MPI_Offset)h->header +
		(MPI_Offset)s->row_start * row +
		(MPI_Offset)s->col_start * h->bytes_per_pixel;
	/* Headers: one per selected view, a record's length apart times the
	 * step. */
	rc = MPI_Type_create_hvector((int)s->views, PARLOAD_VIEW_HEADER_SIZE,
				     record * (MPI_Aint)s->view_step, MPI_BYTE,
				     &t->hfile);
	/* Pixels: the selected rows of a view, then the views. */
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_create_hvector((int)s->rows, (int)line, row,
					     MPI_BYTE, &view);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_create_hvector((int)s->views, 1,
					     record * (MPI_Aint)s->view_step,
					     view, &t->pfile);
	parload_mpi__type_free(&view);
	return rc;
}

/* Where the pixels go in memory (committed): view after view, or each
 * row of output view k to [r][k] of the sinograms. */
static int memory_type(const parload_shape *s, uint64_t line,
		       struct types *t)
{
	MPI_Datatype sino = MPI_DATATYPE_NULL, sized = MPI_DATATYPE_NULL;
	int rc;

	if (s->layout != PARLOAD_LAYOUT_SINOGRAMS)
		return parload_mpi__type_count(
			(MPI_Count)(s->views * s->view_bytes), MPI_BYTE,
			INT_MAX, &t->pmem);
	/* A view's rows are views lines apart, and the next view starts one
	 * line on. */
	rc = MPI_Type_create_hvector((int)s->rows, (int)line,
				     (MPI_Aint)(s->views * line), MPI_BYTE,
				     &sino);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_create_resized(sino, 0, (MPI_Aint)line, &sized);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_contiguous((int)s->views, sized, &t->pmem);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(&t->pmem);
	parload_mpi__type_free(&sino);
	parload_mpi__type_free(&sized);
	return rc;
}

/* The file views and the memory layout of shape s in a file with header
 * h. */
static int build_types(const parload_desc *h, const parload_shape *s,
		       struct types *t, const char *path, parload_error *err)
{
	const uint64_t line = (uint64_t)s->cols * s->bytes_per_pixel;
	int rc = check_counts(h, s, line, path, err);

	if (rc)
		return rc;
	rc = file_types(h, s, line, t);
	if (rc == MPI_SUCCESS)
		rc = memory_type(s, line, t);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(&t->hfile);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(&t->pfile);
	return rc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, path, "building the file view", rc);
}

/* One collective read through a file view; every rank calls it, a rank
 * with nothing to read with want 0 and MPI_BYTE everywhere. */
static int read_view(MPI_File fh, MPI_Offset disp, MPI_Datatype ftype,
		     void *buf, int count, MPI_Datatype mtype,
		     MPI_Count want, const char *path, parload_error *err)
{
	MPI_Status st;
	MPI_Count got = 0;
	int rc;

	rc = MPI_File_set_view(fh, disp, MPI_BYTE, ftype, "native",
			       MPI_INFO_NULL);
	if (rc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, path, "MPI_File_set_view",
					     rc);
	rc = MPI_File_read_all(fh, buf, count, mtype, &st);
	if (rc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, path, "MPI_File_read_all",
					     rc);
	if (count && MPI_Get_elements_x(&st, MPI_BYTE, &got) != MPI_SUCCESS)
		got = 0;
	if (got != want) {
		parload_mpi__fail(err, PARLOAD_ETRUNCATED, path,
				  "file is truncated: read %lld of %lld bytes from byte offset %lld",
				  (long long)got, (long long)want,
				  (long long)disp);
		err->offset = (uint64_t)disp;
		return PARLOAD_ETRUNCATED;
	}
	return 0;
}

/* This rank's part before the read (sel NULL: none): its shape, the
 * CRC rule asked, its buffers and its types. */
static int prepare(const char *path, const parload_desc *h,
		   const parload_selection *sel, unsigned flags,
		   parload_dataset *ds, parload_buffers *owned,
		   parload_shape *s, struct types *t, parload_error *err)
{
	int rc;

	if (!sel)
		return 0;
	if (h->format != PARLOAD_FORMAT_PARLOAD)
		return parload_mpi__fail(err, PARLOAD_ENOTSUP, path,
					 "MPI-IO reads parload's own format: "
					 "load a raw layout with the pool");
	rc = parload_selection_resolve(h, sel, s, err);
	ds->desc = *h;
	ds->shape = *s;
	/* No headers yet: libparload's rule alone, that a CRC covers a
	 * whole payload, refused before anything is read. */
	if (rc == 0)
		rc = parload_check_views(ds, flags, path, err);
	if (rc == 0)
		rc = parload_buffers_alloc(owned, h, sel, flags, err);
	if (rc == 0)
		rc = build_types(h, s, t, path, err);
	return rc;
}

static int open_file(MPI_Comm comm, const char *path, MPI_File *fh,
		     parload_error *err)
{
	int mrc = MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
				fh);

	if (mrc == MPI_SUCCESS)
		return 0;
	parload_mpi__mpi_fail(err, path, "MPI_File_open", mrc);
	return err->code = PARLOAD_EOPEN;
}

/* The part's headers, then its pixels, in two collective reads (every
 * rank reads both, or fails the same), and its views checked. */
static int read_part(MPI_Comm comm, MPI_File fh, const char *path,
		     const parload_desc *h, const parload_selection *sel,
		     unsigned flags, const parload_shape *s,
		     const struct types *t, parload_dataset *ds,
		     parload_buffers *owned, parload_error *err)
{
	int rc = read_view(fh, t->hdisp, sel ? t->hfile : MPI_BYTE,
			   owned->headers,
			   sel ? (int)(s->views * PARLOAD_VIEW_HEADER_SIZE) : 0,
			   MPI_BYTE,
			   (MPI_Count)(s->views * PARLOAD_VIEW_HEADER_SIZE),
			   path, err);

	rc = parload_mpi__agree(comm, rc, err);
	if (rc)
		return rc;
	rc = read_view(fh, t->pdisp, sel ? t->pfile : MPI_BYTE, owned->pixels,
		       sel ? 1 : 0, sel ? t->pmem : MPI_BYTE,
		       (MPI_Count)(s->views * s->view_bytes), path, err);
	if (rc || !sel)
		return rc;
	ds->desc = *h;
	ds->headers = owned->headers;
	ds->pixels = owned->pixels;
	ds->shape = *s;
	return parload_check_views(ds, flags, path, err);
}

int parload_mpi__read_mpiio(MPI_Comm comm, const char *path,
			    const parload_desc *h,
			    const parload_selection *sel, unsigned flags,
			    parload_dataset *ds, parload_buffers *owned,
			    parload_error *err)
{
	struct types t = { MPI_DATATYPE_NULL, MPI_DATATYPE_NULL,
			   MPI_DATATYPE_NULL, 0, 0 };
	parload_shape s;
	MPI_File fh = MPI_FILE_NULL;
	double t0 = MPI_Wtime();
	int rc;

	memset(ds, 0, sizeof(*ds));
	memset(owned, 0, sizeof(*owned));
	memset(&s, 0, sizeof(s));
	rc = prepare(path, h, sel, flags, ds, owned, &s, &t, err);
	rc = parload_mpi__agree(comm, rc, err);
	if (rc == 0)
		rc = parload_mpi__agree(comm, open_file(comm, path, &fh, err),
					err);
	if (rc == 0) {
		MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
		rc = read_part(comm, fh, path, h, sel, flags, &s, &t, ds,
			       owned, err);
	}
	if (fh != MPI_FILE_NULL)
		MPI_File_close(&fh);
	free_types(&t);
	if (rc) {
		parload_dataset_free(ds);
		parload_buffers_free(owned);
		return rc;
	}
	ds->stats.seconds = MPI_Wtime() - t0;
	ds->stats.bytes_read = s.views * (PARLOAD_VIEW_HEADER_SIZE + s.view_bytes);
	ds->stats.read_calls = sel ? 2 : 0;
	ds->stats.threads = 1;
	ds->stats.declared_views = h->count;
	return 0;
}
