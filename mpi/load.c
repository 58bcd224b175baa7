/*
 * load.c - parload_mpi_load: every rank its part of one file.
 *
 * The phases, each ended by an agreement (agree.c) so that a failure on
 * one rank fails every rank at the same point:
 *   1. the node's cores divided between its ranks (node.c);
 *   2. rank 0 reads and validates the header, and the file's size, once,
 *      and broadcasts them: N ranks do not each ask the metadata server;
 *   3. every rank resolves the shared selection and computes its own part
 *      (split.c: no communication);
 *   4. every rank loads its part: with libparload's pool, the header
 *      passed in so that it is not read again, or with MPI-IO (mpiio.c).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What rank 0 broadcasts: the layout (count: the views promised) and
 * the file's size. */
struct meta {
	parload_desc desc;
	uint64_t size;
	/* The file describes itself otherwise than by parload's header (a
	 * TIFF, an HDF5 file, a NRRD header, a .npy): its description is
	 * the library's, and each rank's loader reads it again. */
	bool described;
};

/* An MPI-IO part owns its buffers; a pool part's dataset owns its own. */
struct owned {
	parload_buffers buffers;
};

#define NAME_AT(name, value, text) [value] = text,
static const char *const split_names[] = { PARLOAD_MPI_SPLIT_MAP(NAME_AT) };
static const char *const io_names[] = { PARLOAD_MPI_IO_MAP(NAME_AT) };
#undef NAME_AT
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define PARLOAD_MPI_SPLIT_WHAT "split"
#define PARLOAD_MPI_IO_WHAT "MPI I/O"

const char *parload_mpi_split_name(int kind)
{
	return kind >= 0 && kind < COUNT_OF(split_names) ? split_names[kind] :
							   NULL;
}

int parload_mpi_split_from_name(const char *name)
{
	return parload_name_find(PARLOAD_MPI_SPLIT_WHAT, split_names,
				 COUNT_OF(split_names), name, NULL);
}

const char *parload_mpi_io_name(int io)
{
	return io >= 0 && io < COUNT_OF(io_names) ? io_names[io] : NULL;
}

int parload_mpi_io_from_name(const char *name)
{
	return parload_name_find(PARLOAD_MPI_IO_WHAT, io_names,
				 COUNT_OF(io_names), name, NULL);
}

void parload_mpi_options_init(parload_mpi_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	parload_options_init(&opts->load);
	opts->io = PARLOAD_MPI_IO_POOL;
}

/* Rank 0: the header, validated against the file's size.  A file cut
 * short, where the options allow it, keeps its header (the ranks load its
 * complete views) and reports its real size. */
static int read_header(const char *path, unsigned flags,
		       parload_file_header *h, uint64_t *size,
		       parload_error *err)
{
	unsigned char bytes[PARLOAD_FILE_HEADER_SIZE];
	struct stat st;
	int rc, fd;
	ssize_t got;

	rc = parload_read_header(path, h, err);
	if (rc == 0)
		return parload_file_size(h, size);
	if (rc != PARLOAD_ETRUNCATED || !(flags & PARLOAD_OPT_ALLOW_TRUNCATED))
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return parload_mpi__fail(err, PARLOAD_EOPEN, path, "%s",
					 strerror(errno));
	got = pread(fd, bytes, sizeof(bytes), 0);
	rc = fstat(fd, &st);
	close(fd);
	if (got != (ssize_t)sizeof(bytes) || rc != 0)
		return parload_mpi__fail(err, PARLOAD_ETRUNCATED, path,
					 "cannot read the %d-byte file header",
					 PARLOAD_FILE_HEADER_SIZE);
	rc = parload_parse_file_header(bytes, sizeof(bytes), path, h, err);
	*size = (uint64_t)st.st_size;
	return rc;
}

static bool is_container(const parload_desc *d)
{
	return parload_format_is_container(d->format);
}

/* The request's source laid out as d (a container's: as it is). */
static void source_of(parload_source *src, const parload_request *req,
		      const parload_desc *d)
{
	*src = req->source;
	src->desc = d && !is_container(d) ? d : NULL;
}

/* Rank 0: the layout (that of a file that describes itself, parload's
 * own header, or the given one fitted to the file) and the file's size. */
static int read_meta(const parload_request *req,
		     const parload_mpi_options *o, struct meta *m,
		     parload_error *err)
{
	const char *path = req->source.path;
	const parload_desc *given = req->source.desc;
	const unsigned flags = o->load.flags;
	parload_file_header h;
	parload_source src;
	struct stat st;
	int rc;

	memset(m, 0, sizeof(*m));
	source_of(&src, req, given);
	if (!given &&
	    parload_describe(&src, (flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0,
			     &m->desc, NULL) == 0 &&
	    m->desc.format != PARLOAD_FORMAT_PARLOAD) {
		/* Its size says nothing of its views (and a folder or
		 * "FILE.h5:/name" has none): the library counted them. */
		m->described = true;
		m->size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
		return 0;
	} else if (!given) {
		rc = read_header(path, flags, &h, &m->size, err);
		if (rc == 0)
			parload_desc_from_header(&m->desc, &h);
		return rc;
	} else {
		rc = parload_describe(&src,
				      (flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0,
				      &m->desc, err);
	}
	if (rc == 0 && stat(path, &st) != 0)
		rc = parload_mpi__fail(err, PARLOAD_EIO, path, "%s",
				       strerror(errno));
	m->size = rc == 0 ? (uint64_t)st.st_size : 0;
	return rc;
}

/* Phase 4 with libparload's pool. */
static int load_pool(const parload_request *whole,
		     const parload_mpi_options *opts, const parload_desc *d,
		     const parload_selection *sel, unsigned threads,
		     unsigned core_offset, parload_dataset *ds,
		     parload_error *err)
{
	parload_options o = opts->load;
	parload_loader *loader = NULL;
	parload_request req = *whole;
	int rc;

	o.threads = threads;
	o.core_offset = core_offset;
	o.error = NULL;
	rc = parload_loader_new(&loader, &o, err);
	if (rc)
		return rc;
	source_of(&req.source, whole, d);
	req.selection = sel;
	rc = parload_loader_run(loader, &req, ds, err);
	parload_loader_free(loader);
	return rc;
}

/* One collective load: what every phase below shares. */
struct job {
	MPI_Comm c;
	const char *path;
	const parload_request *req;
	const parload_mpi_options *opts;
	const parload_mpi_split *split;
	parload_mpi_part *out;
	parload_error *err;
	struct meta meta;
	parload_desc complete; /* the layout, with its complete views */
	parload_selection sel;        /* this rank's part */
	int has_part;
	struct owned *owned;
};

/* What a request asks that a load across ranks does not do: 0, or the
 * failure. */
static int check_request(const struct job *j)
{
	const parload_request *r = j->req;

	if (!r->source.path || r->source.paths || r->source.fd >= 0)
		return parload_mpi__fail(j->err, PARLOAD_EINVAL, j->path,
					 "a load across ranks reads one file "
					 "named by source.path");
	if (r->into || r->on_batch || r->window_bytes || r->flags ||
	    r->on_wait || r->progress || r->cancel)
		return parload_mpi__fail(j->err, PARLOAD_ENOTSUP, j->path,
					 "a load across ranks takes no caller's "
					 "memory, batches, window, flags, "
					 "waits, progress or cancel");
	if (!parload_cache_name(r->cache))
		return parload_mpi__fail(j->err, PARLOAD_EINVAL, j->path,
					 "unknown page-cache mode %d",
					 (int)r->cache);
	if (r->correct && j->opts->io == PARLOAD_MPI_IO_MPIIO)
		return parload_mpi__fail(j->err, PARLOAD_ENOTSUP, j->path,
					 "a corrected load reads with the pool "
					 "(io pool), not MPI-IO");
	return 0;
}

/* 1.  The arguments, and the node's cores divided between its ranks. */
static int check_and_place(struct job *j)
{
	const parload_mpi_options *o = j->opts;
	parload_mpi_part *out = j->out;
	int rc = 0;

	if (j->split->kind < PARLOAD_MPI_SPLIT_VIEWS ||
	    j->split->kind > PARLOAD_MPI_SPLIT_EXPLICIT ||
	    (o->io != PARLOAD_MPI_IO_POOL && o->io != PARLOAD_MPI_IO_MPIIO))
		rc = parload_mpi__fail(j->err, PARLOAD_EINVAL, j->path,
				       "unknown split (%d) or io (%d)",
				       (int)j->split->kind, (int)o->io);
	else
		rc = check_request(j);
	rc = parload_mpi__agree(j->c, rc, j->err);
	if (rc)
		return rc;
	if (o->flags & PARLOAD_MPI_OPT_NO_NODE_SPLIT) {
		out->threads = o->load.threads;
		out->core_offset = o->load.core_offset;
		rc = parload_mpi_node_threads(j->c, 1, NULL, NULL,
					      &out->local_rank,
					      &out->local_ranks, j->err);
	} else {
		rc = parload_mpi_node_threads(j->c, o->load.threads,
					      &out->threads, &out->core_offset,
					      &out->local_rank,
					      &out->local_ranks, j->err);
	}
	if (o->io == PARLOAD_MPI_IO_MPIIO)
		out->threads = 1;
	return rc;
}

/* 2.  Rank 0 reads the header and the file's size once, for all. */
static int share_meta(struct job *j)
{
	int rc, mrc;

	rc = j->out->rank == 0 ?
		     read_meta(j->req, j->opts, &j->meta, j->err) :
		     0;
	rc = parload_mpi__agree(j->c, rc, j->err);
	if (rc)
		return rc;
	mrc = MPI_Bcast(&j->meta, (int)sizeof(j->meta), MPI_BYTE, 0, j->c);
	rc = mrc == MPI_SUCCESS ?
		     0 :
		     parload_mpi__mpi_fail(j->err, j->path, "MPI_Bcast", mrc);
	rc = parload_mpi__agree(j->c, rc, j->err);
	j->out->desc = j->meta.desc;
	j->out->file_size = j->meta.size;
	return rc;
}

/* Binning: the global shape in bins (whole bins from its first row and
 * column), so that the ranks share out whole bins. */
static unsigned bin_of(const struct job *j)
{
	const parload_correction *k = j->req->correct;

	return k && k->bin > 1 ? k->bin : 1;
}

static int bin_global(struct job *j)
{
	parload_shape *g = &j->out->global;
	const unsigned bin = bin_of(j);

	if (bin == 1)
		return 0;
	if (bin > g->rows || bin > g->cols)
		return parload_mpi__fail(j->err, PARLOAD_ESELECT, j->path,
					 "a %u x %u bin is larger than the "
					 "selection's %u rows x %u columns",
					 bin, bin, g->rows, g->cols);
	g->rows /= bin;
	g->cols /= bin;
	g->bin = bin;
	return 0;
}

/* The part's selection back in detector rows and columns. */
static void unbin_part(struct job *j)
{
	const parload_shape *g = &j->out->global;
	const unsigned bin = bin_of(j);

	if (bin == 1)
		return;
	j->sel.rows.start = (int64_t)g->row_start +
			    (int64_t)j->out->row_begin * bin;
	j->sel.rows.stop = (int64_t)g->row_start +
			   (int64_t)j->out->row_end * bin;
	j->sel.cols.stop = (int64_t)g->col_start + (int64_t)g->cols * bin;
}

/* 3.  This rank's part.  Selections are resolved against the complete
 * views: a part past them would fail on one rank only. */
/* An explicit split: this rank's selection, as given, of the whole
 * scan. */
static int explicit_part(struct job *j, parload_shape *mine)
{
	int rc = parload_selection_resolve(&j->complete, NULL, &j->out->global,
					   j->err);

	if (rc == 0)
		rc = parload_selection_resolve(&j->complete,
					       &j->split->selection, mine,
					       j->err);
	j->sel = j->split->selection;
	j->has_part = 1;
	return rc;
}

/* A split by views or rows: this rank's part of the load's selection
 * (binned, of whole bins). */
static int split_part(struct job *j)
{
	parload_mpi_part *out = j->out;
	int rc = parload_selection_resolve(&j->complete,
					   j->req->selection ?
						   j->req->selection :
						   &j->opts->load.selection,
					   &out->global, j->err);

	if (rc == 0)
		rc = bin_global(j);
	if (rc == 0)
		j->has_part = parload_mpi__part_selection(
			&out->global, j->split->kind, out->ranks, out->rank,
			&j->sel, &out->view_begin, &out->view_end,
			&out->row_begin, &out->row_end);
	if (rc == 0 && j->has_part)
		unbin_part(j);
	return rc;
}

/* A corrected load delivers float32 (of bins, when binned). */
static void corrected_shape(parload_shape *global)
{
	global->pixel_type = PARLOAD_PIXEL_F32;
	global->bytes_per_pixel = 4;
	global->view_bytes = (uint64_t)global->rows * global->cols * 4;
}

static int choose_part(struct job *j)
{
	parload_error *err = j->err;
	parload_shape mine;
	int rc;

	j->complete = j->meta.desc;
	/* A file that describes itself counted its views already. */
	if (!j->meta.described)
		j->complete.count = parload_mpi__complete_views(&j->meta.desc,
								j->meta.size);
	rc = j->split->kind == PARLOAD_MPI_SPLIT_EXPLICIT ?
		     explicit_part(j, &mine) :
		     split_part(j);
	if (rc == 0 && j->req->correct)
		corrected_shape(&j->out->global);
	if (rc) {
		/* A selection knows no file: name it. */
		char text[sizeof(err->message)];

		memcpy(text, err->message, sizeof(text));
		parload_mpi__fail(err, rc, j->path, "%s", text);
	}
	return parload_mpi__agree(j->c, rc, err);
}

/* 4.  Read it: libparload's pool, or MPI-IO. */
static int read_part(struct job *j)
{
	const parload_mpi_options *o = j->opts;
	parload_mpi_part *out = j->out;
	int rc = 0;

	if (o->io == PARLOAD_MPI_IO_MPIIO && j->meta.described) {
		rc = parload_mpi__fail(j->err, PARLOAD_ENOTSUP, j->path,
				       "a TIFF, HDF5, NRRD or .npy file is "
				       "read with the pool (io pool), not "
				       "MPI-IO");
	} else if (o->io == PARLOAD_MPI_IO_MPIIO) {
		j->owned = calloc(1, sizeof(*j->owned));
		rc = j->owned ? 0 :
				parload_mpi__fail(j->err, PARLOAD_ENOMEM,
						  j->path, "out of memory");
		rc = parload_mpi__agree(j->c, rc, j->err);
		if (rc == 0)
			rc = parload_mpi__read_mpiio(
				j->c, j->path, &j->meta.desc,
				j->has_part ? &j->sel : NULL, o->load.flags,
				&out->dataset, &j->owned->buffers, j->err);
		/* As libparload reports a truncated file: its complete
		 * views, and the count its header declared. */
		if (rc == 0 && j->has_part)
			out->dataset.desc.count = j->complete.count;
	} else if (j->has_part) {
		rc = load_pool(j->req, o,
			       j->meta.described ? NULL : &j->meta.desc,
			       &j->sel,
			       out->threads, out->core_offset, &out->dataset,
			       j->err);
	}
	return parload_mpi__agree(j->c, rc, j->err);
}

/* A failed load: what it holds released, *out zeroed; rc. */
static int undo(struct job *j, int rc)
{
	/* An MPI-IO part's dataset owns its list of bad views only:
	 * parload_dataset_free leaves the buffers' arrays alone. */
	if (j->owned)
		parload_buffers_free(&j->owned->buffers);
	parload_dataset_free(&j->out->dataset);
	free(j->owned);
	memset(j->out, 0, sizeof(*j->out));
	return rc;
}

int parload_mpi_load(MPI_Comm comm, const parload_request *req,
		     const parload_mpi_options *opts,
		     const parload_mpi_split *split, parload_mpi_part *out)
{
	const char *path = req ? req->source.path : NULL;
	parload_mpi_options defaults;
	parload_mpi_split by_views;
	parload_error local;
	double t0 = MPI_Wtime();
	struct job j;
	int rc, mrc;

	if (!opts) {
		parload_mpi_options_init(&defaults);
		opts = &defaults;
	}
	if (!split) {
		memset(&by_views, 0, sizeof(by_views));
		by_views.kind = PARLOAD_MPI_SPLIT_VIEWS;
		split = &by_views;
	}
	memset(&j, 0, sizeof(j));
	j.path = path ? path : "(no path)";
	j.req = req;
	j.opts = opts;
	j.split = split;
	j.out = out;
	j.err = opts->error ? opts->error : &local;
	memset(j.err, 0, sizeof(*j.err));
	memset(out, 0, sizeof(*out));
	if (!req)
		return parload_mpi__fail(j.err, PARLOAD_EINVAL, j.path,
					 "no request");
	/* A communicator of our own, which returns errors instead of
	 * aborting the job, and whose collectives cannot mix with the
	 * caller's. */
	mrc = MPI_Comm_dup(comm, &j.c);
	if (mrc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(j.err, j.path, "MPI_Comm_dup", mrc);
	MPI_Comm_set_errhandler(j.c, MPI_ERRORS_RETURN);
	MPI_Comm_rank(j.c, &out->rank);
	MPI_Comm_size(j.c, &out->ranks);
	out->split = split->kind;
	rc = check_and_place(&j);
	if (rc == 0)
		rc = share_meta(&j);
	if (rc == 0)
		rc = choose_part(&j);
	if (rc == 0)
		rc = read_part(&j);
	MPI_Comm_free(&j.c);
	if (rc)
		return undo(&j, rc);
	out->internal_ = j.owned;
	out->seconds = MPI_Wtime() - t0;
	return 0;
}

void parload_mpi_part_free(parload_mpi_part *part)
{
	struct owned *owned;

	if (!part)
		return;
	owned = part->internal_;
	/* An MPI-IO part's arrays are the buffers': only the list of bad
	 * views belongs to its dataset, and parload_dataset_free frees just
	 * that. */
	parload_dataset_free(&part->dataset);
	if (owned) {
		parload_buffers_free(&owned->buffers);
		free(owned);
	}
	memset(part, 0, sizeof(*part));
}
