/*
 * check_mpi_gather.c - gathering view headers, and the derived datatypes
 * that carry counts past INT_MAX.
 *
 * No 2 GiB array is needed to test the big-count path: the datatype for a
 * synthetic count of 3 * 2^31 + 5 headers is built and its size and extent
 * checked without sending it, and the broadcast path that uses such types
 * runs on small arrays with the piece limit lowered to 3 elements.
 */
#include "../../mpi/internal.h"

#include "mpitest.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void check_type(MPI_Count count, MPI_Count limit)
{
	MPI_Datatype unit, t;
	MPI_Count size, lb, extent, tlb, textent;
	int rc;

	MPI_Type_contiguous(PARLOAD_VIEW_HEADER_SIZE, MPI_BYTE, &unit);
	MPI_Type_commit(&unit);
	rc = parload_mpi__type_count(count, unit, limit, &t);
	MT_CHECK(rc == MPI_SUCCESS, "type of %lld: MPI error %d",
		 (long long)count, rc);
	MPI_Type_size_x(t, &size);
	MPI_Type_get_extent_x(t, &lb, &extent);
	MPI_Type_get_true_extent_x(t, &tlb, &textent);
	MT_CHECK(size == count * PARLOAD_VIEW_HEADER_SIZE && lb == 0 &&
		 extent == size && tlb == 0 && textent == size,
		 "type of %lld headers (pieces of %lld): size %lld, extent %lld+%lld, true extent %lld+%lld",
		 (long long)count, (long long)limit, (long long)size,
		 (long long)lb, (long long)extent, (long long)tlb,
		 (long long)textent);
	MPI_Type_free(&t);
	MPI_Type_free(&unit);
}

/* Each rank contributes rank + 2 headers numbered globally; every rank
 * must receive all of them in rank order, through Allgatherv (limit
 * INT_MAX) and through the per-rank broadcasts (limit 3). */
static void check_gather(MPI_Count limit)
{
	parload_view_header mine[64], *all = NULL;
	parload_error err;
	MPI_Datatype unit;
	uint64_t n = (uint64_t)mt_rank + 2, first = 0, total = 0;
	int rc;

	for (int r = 0; r < mt_rank; r++)
		first += (uint64_t)r + 2;
	memset(mine, 0, sizeof(mine));
	for (uint64_t k = 0; k < n; k++) {
		mine[k].view_index = first + k;
		mine[k].timestamp_ns = (first + k) * 1000 + 7;
	}
	MPI_Type_contiguous(PARLOAD_VIEW_HEADER_SIZE, MPI_BYTE, &unit);
	MPI_Type_commit(&unit);
	rc = parload_mpi__allgather(MPI_COMM_WORLD, mine, n, unit,
				    sizeof(parload_view_header), limit,
				    (void **)&all, &total, &err);
	MT_CHECK(rc == 0, "limit %lld: %s", (long long)limit, err.message);
	MT_CHECK(total == (uint64_t)mt_size * (mt_size + 3) / 2,
		 "limit %lld: %llu headers", (long long)limit,
		 (unsigned long long)total);
	for (uint64_t k = 0; k < total; k++)
		MT_CHECK(all[k].view_index == k &&
			 all[k].timestamp_ns == k * 1000 + 7,
			 "limit %lld: header %llu holds %llu",
			 (long long)limit, (unsigned long long)k,
			 (unsigned long long)all[k].view_index);
	free(all);
	MPI_Type_free(&unit);
}

/* The public helper, over parts as a views split leaves them. */
static void check_public(void)
{
	parload_view_header h[3], *all = NULL;
	parload_mpi_part part;
	uint64_t total = 0;
	int rc;

	memset(&part, 0, sizeof(part));
	memset(h, 0, sizeof(h));
	part.split = PARLOAD_MPI_SPLIT_VIEWS;
	part.rank = mt_rank;
	part.ranks = mt_size;
	/* Rank r holds views 3r .. 3r + 2; the last rank holds none, as a
	 * rank with no views does. */
	if (mt_rank < mt_size - 1 || mt_size == 1) {
		for (int k = 0; k < 3; k++)
			h[k].view_index = (uint64_t)(3 * mt_rank + k);
		part.dataset.headers = h;
		part.dataset.shape.views = 3;
	}
	rc = parload_mpi_gather_headers(MPI_COMM_WORLD, &part, &all, &total,
					NULL);
	MT_CHECK(rc == 0, "gather_headers: %d", rc);
	MT_CHECK(total == (uint64_t)(mt_size == 1 ? 3 : 3 * (mt_size - 1)),
		 "gather_headers: %llu", (unsigned long long)total);
	for (uint64_t k = 0; k < total; k++)
		MT_CHECK(all[k].view_index == k, "gather_headers: %llu",
			 (unsigned long long)k);
	free(all);
	/* A rows split: every rank has every header; one copy comes back. */
	part.split = PARLOAD_MPI_SPLIT_ROWS;
	for (int k = 0; k < 3; k++)
		h[k].view_index = (uint64_t)k;
	part.dataset.headers = h;
	part.dataset.shape.views = 3;
	rc = parload_mpi_gather_headers(MPI_COMM_WORLD, &part, &all, &total,
					NULL);
	MT_CHECK(rc == 0 && total == 3 && all[2].view_index == 2,
		 "gather_headers of a rows split: %d, %llu", rc,
		 (unsigned long long)total);
	free(all);
}

static void body(const char *dir)
{
	(void)dir;
	/* Counts past INT_MAX: pieces and a remainder, pieces alone, and
	 * one piece; then the same construction with small pieces. */
	check_type(3 * ((MPI_Count)1 << 31) + 5, INT_MAX);
	check_type(2 * (MPI_Count)INT_MAX, INT_MAX);
	check_type(INT_MAX, INT_MAX);
	check_type(10, 3);
	check_type(0, 3);
	check_gather(INT_MAX);
	check_gather(3);
	check_public();
}

int main(int argc, char **argv)
{
	static const int counts[] = { 1, 3 };

	return mpitest_main(argc, argv, counts, 2, body);
}
