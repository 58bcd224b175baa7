/*
 * internal.h - what the sources of libparload-mpi share.  Internal names
 * are parload_mpi__x: the exported symbols are parload_mpi_[a-z]* only.
 */
#ifndef PARLOAD_MPI_INTERNAL_H
#define PARLOAD_MPI_INTERNAL_H

#include "config.h"

#include <stdint.h>

#include <parload_mpi.h>

/* ---- split.c: the division of a load between ranks (pure, no MPI) ---- */

/* Part index of n items cut into parts contiguous ranges whose sizes
 * differ by at most one, the larger first: [*begin, *end). */
void parload_mpi__range(uint64_t n, uint64_t parts, uint64_t index,
			uint64_t *begin, uint64_t *end);

/* The selection that rank of ranks loads when global (a resolved
 * selection) is split by kind (VIEWS or ROWS), and its place in global.
 * Returns 1, or 0 when the rank has nothing to load (*sel is then
 * unspecified). */
int parload_mpi__part_selection(const parload_shape *global,
				parload_mpi_split_kind kind, int ranks,
				int rank, parload_selection *sel,
				uint64_t *view_begin, uint64_t *view_end,
				uint32_t *row_begin, uint32_t *row_end);

/* Divide units cores between the group ranks that may run on them: the
 * threads of member index (requested, or units / group, at least 1) and
 * the offset of its first core (libparload takes it modulo units). */
void parload_mpi__divide(unsigned units, unsigned group, unsigned index,
			 unsigned requested, unsigned *threads,
			 unsigned *offset);

/* The views of a file of size bytes with layout d that are complete: its
 * count, or fewer for a file cut short. */
uint64_t parload_mpi__complete_views(const parload_desc *d,
				     uint64_t size);

/* ---- agree.c: errors every rank agrees on ---- */

/* Fill err (code, message "PATH: text") and return code. */
int parload_mpi__fail(parload_error *err, int code, const char *path,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A failed MPI call: PARLOAD_EMPI with MPI's own text of mpi_rc. */
int parload_mpi__mpi_fail(parload_error *err, const char *path,
			  const char *call, int mpi_rc);
/* Collective: rc is this rank's status (0 or a PARLOAD_E* code with err
 * filled in).  Returns 0 on every rank when every rank passed 0; else, on
 * every rank, the code of the lowest failing rank R, whose err is copied
 * to every rank's err with its message prefixed "rank R: ".  comm must
 * return MPI errors (MPI_ERRORS_RETURN). */
int parload_mpi__agree(MPI_Comm comm, int rc, parload_error *err);

/* ---- gather.c: counts past INT_MAX ---- */

/* Free *t unless it is MPI_DATATYPE_NULL. */
void parload_mpi__type_free(MPI_Datatype *t);
/* A datatype of count elements of unit, contiguous, built from pieces of
 * at most limit elements so that no int count wraps (limit is INT_MAX but
 * for tests).  Committed; the caller frees it. */
int parload_mpi__type_count(MPI_Count count, MPI_Datatype unit,
			    MPI_Count limit, MPI_Datatype *out);
/* Collective: every rank's count elements of unit_size bytes (described
 * by unit) into one array on every rank, in rank order: *out (malloc'd),
 * *total elements.  MPI_Allgatherv while every count and displacement
 * fits limit, else one broadcast per rank of a parload_mpi__type_count
 * type. */
int parload_mpi__allgather(MPI_Comm comm, const void *send, uint64_t count,
			   MPI_Datatype unit, size_t unit_size,
			   MPI_Count limit, void **out, uint64_t *total,
			   parload_error *err);

/* ---- mpiio.c: the MPI-IO strategy ---- */

/* Collective: read this rank's selection (sel NULL: nothing) of path with
 * header h into buffers it allocates, through MPI_File_read_all and file
 * views; fill *ds as a libparload load would.  *owned receives the
 * buffers, which the part frees. */
int parload_mpi__read_mpiio(MPI_Comm comm, const char *path,
			    const parload_desc *h,
			    const parload_selection *sel, unsigned flags,
			    parload_dataset *ds, parload_buffers *owned,
			    parload_error *err);

#endif
