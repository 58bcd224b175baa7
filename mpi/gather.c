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

/* One allgather's layout: every rank's count, and where its elements
 * land in the result. */
typedef struct layout {
	int size, rank;
	uint64_t *counts;       /* each rank's elements */
	int *icounts, *idispls; /* the same as MPI's int counts, if small */
	uint64_t sum, mine;     /* all of them, and where this rank's start */
	int small;              /* every rank's end fits in limit */
} layout;

static void layout_free(layout *l)
{
	free(l->counts);
	free(l->icounts);
	free(l->idispls);
}

static int layout_alloc(MPI_Comm comm, layout *l, parload_error *err)
{
	memset(l, 0, sizeof(*l));
	MPI_Comm_size(comm, &l->size);
	MPI_Comm_rank(comm, &l->rank);
	l->small = 1;
	l->counts = calloc((size_t)l->size, sizeof(*l->counts));
	l->icounts = calloc((size_t)l->size, sizeof(*l->icounts));
	l->idispls = calloc((size_t)l->size, sizeof(*l->idispls));
	return l->counts && l->icounts && l->idispls ? 0 :
		parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
				  "no memory for %d counts", l->size);
}

/* The ranks' counts added up into displacements; int ones where every
 * rank's displacement and end fit in limit. */
static int layout_sum(layout *l, MPI_Count limit, parload_error *err)
{
	for (int r = 0; r < l->size; r++) {
		if (l->counts[r] > UINT64_MAX - l->sum)
			return parload_mpi__fail(err, PARLOAD_EOVERFLOW, NULL,
						 "gathered counts overflow");
		if (r == l->rank)
			l->mine = l->sum;
		/* The displacement of a rank and its count must both fit,
		 * and so must their sum (the end of its data). */
		if (l->sum + l->counts[r] > (uint64_t)limit) {
			l->small = 0;
		} else {
			l->icounts[r] = (int)l->counts[r];
			l->idispls[r] = (int)l->sum;
		}
		l->sum += l->counts[r];
	}
	return 0;
}

/* Memory for every rank's elements, of unit_size bytes each. */
static int recv_alloc(const layout *l, size_t unit_size, unsigned char **recv,
		      parload_error *err)
{
	if (unit_size && l->sum > SIZE_MAX / unit_size)
		return parload_mpi__fail(err, PARLOAD_EOVERFLOW, NULL,
					 "%llu gathered elements overflow",
					 (unsigned long long)l->sum);
	*recv = malloc(l->sum ? l->sum * unit_size : 1);
	if (!*recv)
		return parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
					 "no memory for %llu gathered bytes",
					 (unsigned long long)(l->sum * unit_size));
	return 0;
}

/* Every rank's count elements at send into recv: one MPI_Allgatherv
 * where the counts fit MPI's ints, else a broadcast per rank. */
static int exchange(MPI_Comm comm, const layout *l, const void *send,
		    uint64_t count, MPI_Datatype unit, size_t unit_size,
		    MPI_Count limit, unsigned char *recv, parload_error *err)
{
	int mrc;

	if (l->small) {
		mrc = MPI_Allgatherv(send, (int)count, unit, recv, l->icounts,
				     l->idispls, unit, comm);
		return mrc == MPI_SUCCESS ? 0 :
			parload_mpi__mpi_fail(err, NULL, "MPI_Allgatherv", mrc);
	}
	/* The root's broadcast buffer is the source: its own slot. */
	if (count)
		memcpy(recv + l->mine * unit_size, send, count * unit_size);
	return gather_big(comm, l->counts, l->size, unit, unit_size, limit,
			  recv, err);
}

int parload_mpi__allgather(MPI_Comm comm, const void *send, uint64_t count,
			   MPI_Datatype unit, size_t unit_size,
			   MPI_Count limit, void **out, uint64_t *total,
			   parload_error *err)
{
	unsigned char *recv = NULL;
	layout l;
	int rc, mrc;

	*out = NULL;
	*total = 0;
	rc = parload_mpi__agree(comm, layout_alloc(comm, &l, err), err);
	if (rc)
		goto out;
	mrc = MPI_Allgather(&count, 1, MPI_UINT64_T, l.counts, 1,
			    MPI_UINT64_T, comm);
	rc = mrc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, NULL, "MPI_Allgather", mrc);
	if (rc == 0)
		rc = layout_sum(&l, limit, err);
	if (rc == 0)
		rc = recv_alloc(&l, unit_size, &recv, err);
	rc = parload_mpi__agree(comm, rc, err);
	if (rc)
		goto out;
	rc = exchange(comm, &l, send, count, unit, unit_size, limit, recv,
		      err);
	rc = parload_mpi__agree(comm, rc, err);
	if (rc == 0) {
		*out = recv;
		*total = l.sum;
		recv = NULL;
	}
out:
	free(recv);
	layout_free(&l);
	return rc;
}

/* The headers this rank sends: its views', or with a split by rows,
 * rank 0's alone (every rank with rows holds every selected view's
 * header; rank 0 always has rows, the larger slabs coming first). */
static uint64_t headers_sent(const parload_mpi_part *part)
{
	const uint64_t n = part->dataset.headers ? part->dataset.shape.views :
						   0;

	if (part->split == PARLOAD_MPI_SPLIT_ROWS && part->rank != 0)
		return 0;
	return n;
}

/* One view header as one MPI element (committed). */
static int header_type(MPI_Datatype *unit, parload_error *err)
{
	int mrc = MPI_Type_contiguous((int)sizeof(parload_view_header),
				      MPI_BYTE, unit);

	if (mrc == MPI_SUCCESS)
		mrc = MPI_Type_commit(unit);
	return mrc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, NULL, "MPI_Type_contiguous", mrc);
}

int parload_mpi_gather_headers(MPI_Comm comm, const parload_mpi_part *part,
			       parload_view_header **out, uint64_t *count,
			       parload_error *err)
{
	parload_error local;
	MPI_Datatype unit;
	MPI_Comm c;
	void *all = NULL;
	int rc, mrc;

	if (!err)
		err = &local;
	*out = NULL;
	*count = 0;
	mrc = MPI_Comm_dup(comm, &c);
	if (mrc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, NULL, "MPI_Comm_dup", mrc);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	rc = parload_mpi__agree(c, header_type(&unit, err), err);
	if (rc == 0) {
		rc = parload_mpi__allgather(c, part->dataset.headers,
					    headers_sent(part), unit,
					    sizeof(parload_view_header),
					    INT_MAX, &all, count, err);
		MPI_Type_free(&unit);
	}
	MPI_Comm_free(&c);
	*out = all;
	return rc;
}
