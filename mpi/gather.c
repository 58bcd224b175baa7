/*
 * gather.c - gathering arrays whose sizes MPI's int counts cannot hold.
 *
 * MPI counts and displacements are int: 2^31 - 1 elements.  A scan of a
 * few billion views would wrap one silently.  Past that limit the data
 * goes as one element of a derived datatype that holds the whole count:
 * pieces of limit elements, repeated, and the remainder after them.
 */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void parload_mpi__type_free(MPI_Datatype *t)
{
	if (*t != MPI_DATATYPE_NULL)
		MPI_Type_free(t);
}

int parload_mpi__type_count(MPI_Count count, MPI_Datatype unit,
			    MPI_Count limit, MPI_Datatype *out)
{
	MPI_Datatype piece = MPI_DATATYPE_NULL, pieces = MPI_DATATYPE_NULL;
	MPI_Datatype rest = MPI_DATATYPE_NULL;
	MPI_Count q, r;
	MPI_Aint lb, extent;
	int rc;

	if (count < 0 || limit <= 0 || limit > INT_MAX)
		return MPI_ERR_COUNT;
	if (count <= limit) {
		rc = MPI_Type_contiguous((int)count, unit, out);
		return rc == MPI_SUCCESS ? MPI_Type_commit(out) : rc;
	}
	q = count / limit;
	r = count % limit;
	if (q > INT_MAX)
		return MPI_ERR_COUNT;
	rc = MPI_Type_get_extent(unit, &lb, &extent);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_contiguous((int)limit, unit, &piece);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_contiguous((int)q, piece, &pieces);
	if (rc == MPI_SUCCESS && r == 0) {
		rc = MPI_Type_dup(pieces, out);
	} else if (rc == MPI_SUCCESS) {
		int lengths[2] = { 1, 1 };
		/* The remainder starts where the q pieces end: an MPI_Aint
		 * byte displacement, 64 bits here. */
		MPI_Aint displs[2] = { 0, (MPI_Aint)(q * limit) * extent };
		MPI_Datatype types[2] = { pieces, MPI_DATATYPE_NULL };

		rc = MPI_Type_contiguous((int)r, unit, &rest);
		types[1] = rest;
		if (rc == MPI_SUCCESS)
			rc = MPI_Type_create_struct(2, lengths, displs, types,
						    out);
	}
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(out);
	parload_mpi__type_free(&piece);
	parload_mpi__type_free(&pieces);
	parload_mpi__type_free(&rest);
	return rc;
}

/* One broadcast per rank, each rank's elements as one element of a type
 * that holds them all. */
static int gather_big(MPI_Comm comm, const uint64_t *counts, int size,
		      MPI_Datatype unit, size_t unit_size, MPI_Count limit,
		      unsigned char *recv, parload_error *err)
{
	uint64_t at = 0;

	for (int r = 0; r < size; r++) {
		MPI_Datatype t;
		int rc;

		if (counts[r] == 0)
			continue;
		rc = parload_mpi__type_count((MPI_Count)counts[r], unit, limit,
					     &t);
		if (rc != MPI_SUCCESS)
			return parload_mpi__mpi_fail(err, NULL,
						     "building a datatype", rc);
		rc = MPI_Bcast(recv + at * unit_size, 1, t, r, comm);
		MPI_Type_free(&t);
		if (rc != MPI_SUCCESS)
			return parload_mpi__mpi_fail(err, NULL, "MPI_Bcast", rc);
		at += counts[r];
	}
	return 0;
}

int parload_mpi__allgather(MPI_Comm comm, const void *send, uint64_t count,
			   MPI_Datatype unit, size_t unit_size,
			   MPI_Count limit, void **out, uint64_t *total,
			   parload_error *err)
{
	uint64_t *counts = NULL, sum = 0, mine = 0;
	int *icounts = NULL, *idispls = NULL;
	unsigned char *recv = NULL;
	int size, rank, rc, mrc, small = 1;

	*out = NULL;
	*total = 0;
	MPI_Comm_size(comm, &size);
	MPI_Comm_rank(comm, &rank);
	counts = calloc((size_t)size, sizeof(*counts));
	icounts = calloc((size_t)size, sizeof(*icounts));
	idispls = calloc((size_t)size, sizeof(*idispls));
	rc = counts && icounts && idispls ? 0 :
		parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
				  "no memory for %d counts", size);
	rc = parload_mpi__agree(comm, rc, err);
	if (rc)
		goto out;
	mrc = MPI_Allgather(&count, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T,
			    comm);
	rc = mrc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, NULL, "MPI_Allgather", mrc);
	for (int r = 0; rc == 0 && r < size; r++) {
		if (counts[r] > UINT64_MAX - sum) {
			rc = parload_mpi__fail(err, PARLOAD_EOVERFLOW, NULL,
					       "gathered counts overflow");
			break;
		}
		if (r == rank)
			mine = sum;
		/* The displacement of a rank and its count must both fit,
		 * and so must their sum (the end of its data). */
		if (sum + counts[r] > (uint64_t)limit)
			small = 0;
		else {
			icounts[r] = (int)counts[r];
			idispls[r] = (int)sum;
		}
		sum += counts[r];
	}
	if (rc == 0 && unit_size && sum > SIZE_MAX / unit_size)
		rc = parload_mpi__fail(err, PARLOAD_EOVERFLOW, NULL,
				       "%llu gathered elements overflow",
				       (unsigned long long)sum);
	if (rc == 0) {
		recv = malloc(sum ? sum * unit_size : 1);
		if (!recv)
			rc = parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
					       "no memory for %llu gathered bytes",
					       (unsigned long long)(sum * unit_size));
	}
	rc = parload_mpi__agree(comm, rc, err);
	if (rc)
		goto out;
	if (small) {
		mrc = MPI_Allgatherv(send, (int)count, unit, recv, icounts,
				     idispls, unit, comm);
		rc = mrc == MPI_SUCCESS ? 0 :
			parload_mpi__mpi_fail(err, NULL, "MPI_Allgatherv", mrc);
	} else {
		/* The root's broadcast buffer is the source: its own slot. */
		if (count)
			memcpy(recv + mine * unit_size, send, count * unit_size);
		rc = gather_big(comm, counts, size, unit, unit_size, limit,
				recv, err);
	}
	rc = parload_mpi__agree(comm, rc, err);
	if (rc == 0) {
		*out = recv;
		*total = sum;
		recv = NULL;
	}
out:
	free(recv);
	free(counts);
	free(icounts);
	free(idispls);
	return rc;
}

int parload_mpi_gather_headers(MPI_Comm comm, const parload_mpi_part *part,
			       parload_view_header **out, uint64_t *count,
			       parload_error *err)
{
	parload_error local;
	MPI_Datatype unit;
	MPI_Comm c;
	void *all = NULL;
	uint64_t n = part->dataset.headers ? part->dataset.shape.views : 0;
	int rc, mrc;

	if (!err)
		err = &local;
	*out = NULL;
	*count = 0;
	mrc = MPI_Comm_dup(comm, &c);
	if (mrc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, NULL, "MPI_Comm_dup", mrc);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	if (part->split == PARLOAD_MPI_SPLIT_ROWS) {
		/* Every rank with rows holds every selected view's header;
		 * rank 0 always has rows (the larger slabs come first). */
		n = part->rank == 0 ? n : 0;
	}
	mrc = MPI_Type_contiguous((int)sizeof(parload_view_header), MPI_BYTE,
				  &unit);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_commit(&unit);
	rc = mrc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, NULL, "MPI_Type_contiguous", mrc);
	rc = parload_mpi__agree(c, rc, err);
	if (rc == 0) {
		rc = parload_mpi__allgather(c, part->dataset.headers, n, unit,
					    sizeof(parload_view_header),
					    INT_MAX, &all, count, err);
		MPI_Type_free(&unit);
	}
	MPI_Comm_free(&c);
	*out = all;
	return rc;
}
