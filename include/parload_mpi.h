/*
 * parload_mpi.h - load a raw image stream across the ranks of an MPI
 * communicator, each rank its part.
 *
 * libparload-mpi is a thin collective layer over libparload: rank 0 reads
 * and validates the file header and the file's size once and broadcasts
 * them, the selection is split between the ranks (by views, or by detector
 * rows delivered as sinograms, or as each rank asks), and every rank loads
 * its part with libparload's own thread pool.  Ranks that share a node
 * divide its cores between their pools.  Every call here is collective over
 * the communicator given, and either succeeds on every rank or fails on
 * every rank with the same code and message.
 *
 * Conventions are libparload's (parload.h): 0 or a negative PARLOAD_E*
 * code; a failure of MPI itself is PARLOAD_EMPI.
 */
#ifndef PARLOAD_MPI_H
#define PARLOAD_MPI_H

#include <mpi.h>

#include <parload.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the selection is divided between the ranks, each way by its name
 * (names as libparload's: parload.h, "Names"):
 *  views     contiguous ranges of the selected views, balanced by bytes
 *            (every view has the same size, so counts differ by at most
 *            one); each rank's part keeps the selection's layout.
 *  rows      contiguous slabs of the selected detector rows, every
 *            selected view, delivered in sinogram layout: what a rank that
 *            reconstructs its slices wants, with no all-to-all exchange.
 *  explicit  each rank loads the selection it passes in split.selection. */
#define PARLOAD_MPI_SPLIT_MAP(X)                                               \
	X(VIEWS, 0, "views")                                                   \
	X(ROWS, 1, "rows")                                                     \
	X(EXPLICIT, 2, "explicit")

typedef enum parload_mpi_split_kind {
#define PARLOAD_MPI_SPLIT_ENUM_(name, value, text)                             \
	PARLOAD_MPI_SPLIT_##name = (value),
	PARLOAD_MPI_SPLIT_MAP(PARLOAD_MPI_SPLIT_ENUM_)
#undef PARLOAD_MPI_SPLIT_ENUM_
} parload_mpi_split_kind;

typedef struct parload_mpi_split {
	parload_mpi_split_kind kind;
	/* PARLOAD_MPI_SPLIT_EXPLICIT: this rank's selection (ranks differ). */
	parload_selection selection;
} parload_mpi_split;

/* "views", "rows", "explicit" or NULL; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_mpi_split_name(int kind);
PARLOAD_API int parload_mpi_split_from_name(const char *name);

/* How each rank reads its part:
 *  pool   libparload's pool: pread/preadv on the rank's threads (default).
 *  mpiio  one collective MPI_File_read_at_all per rank with a file view
 *         built from its selection: lets MPI-IO aggregate requests on a
 *         parallel file system (collective buffering).  One thread per
 *         rank. */
#define PARLOAD_MPI_IO_MAP(X)                                                  \
	X(POOL, 0, "pool")                                                     \
	X(MPIIO, 1, "mpiio")

typedef enum parload_mpi_io {
#define PARLOAD_MPI_IO_ENUM_(name, value, text) PARLOAD_MPI_IO_##name = (value),
	PARLOAD_MPI_IO_MAP(PARLOAD_MPI_IO_ENUM_)
#undef PARLOAD_MPI_IO_ENUM_
} parload_mpi_io;

/* "pool", "mpiio" or NULL; and back (the value, or PARLOAD_EINVAL). */
PARLOAD_API const char *parload_mpi_io_name(int io);
PARLOAD_API int parload_mpi_io_from_name(const char *name);

/* parload_mpi_options.flags */
/* Take load.threads and load.core_offset as given instead of dividing the
 * node's cores between the ranks that share it. */
#define PARLOAD_MPI_OPT_NO_NODE_SPLIT 0x1u

typedef struct parload_mpi_options {
	/* libparload's options for each rank's loader.  load.selection is
	 * what the ranks share out (the whole file by default).  load.threads
	 * 0: the cores of the node divided between the ranks on it; with
	 * threads set, core_offset is still computed (unless
	 * PARLOAD_MPI_OPT_NO_NODE_SPLIT) so the ranks' workers do not share
	 * cores.  load.error is not used: see error below.  What to read,
	 * and how, is the request's (parload_mpi_load). */
	parload_options load;
	parload_mpi_io io;
	unsigned flags; /* PARLOAD_MPI_OPT_* */
	/* Where a failure is explained, on every rank; may be NULL.  The
	 * message begins with "rank R: ", R the lowest rank that failed. */
	parload_error *error;
} parload_mpi_options;

/* Set every field to its default. */
PARLOAD_API void parload_mpi_options_init(parload_mpi_options *opts);

/* One rank's part of a load, and where it sits in the whole. */
typedef struct parload_mpi_part {
	/* The rank's part: dataset.shape says what it holds, dataset.headers
	 * the views' headers (view_index as in the file).  A rank with
	 * nothing to load (more ranks than views or rows) has shape.views 0
	 * and NULL arrays. */
	parload_dataset dataset;
	int rank, ranks;               /* in the communicator given */
	parload_mpi_split_kind split;
	/* The selection shared out, resolved against the file: the global
	 * shape (for SPLIT_EXPLICIT, the whole file). */
	parload_shape global;
	/* The part within global: output views [view_begin, view_end) of
	 * global for SPLIT_VIEWS (all rows), rows [row_begin, row_end) of
	 * global (offsets from global.row_start) for SPLIT_ROWS (all views).
	 * SPLIT_EXPLICIT leaves both ranges 0, 0: dataset.shape says it. */
	uint64_t view_begin, view_end;
	uint32_t row_begin, row_end;
	/* What rank 0 described (count: the views the header or the layout
	 * promises), and the file's size. */
	parload_desc desc;
	uint64_t file_size;
	/* The rank's place on its node and the cores its workers use. */
	int local_rank, local_ranks;
	unsigned threads, core_offset;
	double seconds;  /* the whole collective call, on this rank */
	void *internal_; /* owned by libparload-mpi */
} parload_mpi_part;

/* Collective over comm: load this rank's part of what req asks for, the
 * same on every rank: one file, req->source.path, with its layout
 * (source.desc, parload_desc_parse: NULL for parload's own format, whose
 * header rank 0 reads), a TIFF's or HDF5 file's dataset and frames
 * (rank 0 reads its metadata to share the views out, each rank again for
 * its part) and source flags; the selection to share out (req->selection;
 * NULL: opts->load.selection, the whole file by default); the page-cache
 * mode of each rank's load with the pool (MPI-IO reads through the MPI
 * library, which does as it does: the mode is ignored there); and a
 * correction (req->correct; the pool only, else PARLOAD_ENOTSUP), each
 * rank reading and reducing the references over its own rows, its part
 * float32; with binning the ranks share out whole bins: global is the
 * binned shape and row_begin, row_end count binned rows.  A request of
 * several paths or a descriptor is PARLOAD_EINVAL; the caller's memory,
 * batches, a window, request flags, on_wait, progress or cancel
 * PARLOAD_ENOTSUP.  split NULL is PARLOAD_MPI_SPLIT_VIEWS.  Rank 0 reads
 * the header and the file size once and broadcasts them; each rank then
 * loads only its part.  On success every rank's *out holds its part until
 * parload_mpi_part_free(); on failure no rank holds anything, every rank
 * returns the same code, and opts->error (when set) carries the message
 * of the lowest failing rank, prefixed with "rank R: ". */
PARLOAD_API int parload_mpi_load(MPI_Comm comm, const parload_request *req,
				 const parload_mpi_options *opts,
				 const parload_mpi_split *split,
				 parload_mpi_part *out);
/* Release what a part owns and zero it (local, not collective). */
PARLOAD_API void parload_mpi_part_free(parload_mpi_part *part);

/* Collective: every rank receives the view headers of the whole load in
 * *out (malloc'd, free() it) and their number in *count: the ranks' parts
 * in rank order for SPLIT_VIEWS and SPLIT_EXPLICIT, the (shared) headers of
 * every selected view for SPLIT_ROWS.  Counts past what an int holds go
 * through derived datatypes, never a wrapped int. */
PARLOAD_API int parload_mpi_gather_headers(MPI_Comm comm,
					   const parload_mpi_part *part,
					   parload_view_header **out,
					   uint64_t *count,
					   parload_error *err);

/* Collective: how this rank's workers share its node (ranks of comm that
 * share memory, MPI_COMM_TYPE_SHARED).  Ranks that may run on the same
 * cores divide them: *threads is requested, or (0) those cores divided by
 * the ranks sharing them, at least 1; *core_offset places this rank's
 * workers after those of the ranks before it.  Ranks the launcher bound to
 * disjoint cores keep their own.  Any output pointer may be NULL. */
PARLOAD_API int parload_mpi_node_threads(MPI_Comm comm, unsigned requested,
					 unsigned *threads,
					 unsigned *core_offset,
					 int *local_rank, int *local_ranks,
					 parload_error *err);

#ifdef __cplusplus
}
#endif
#endif /* PARLOAD_MPI_H */
