/*
 * _parload_mpi.c - parload.mpi's C part: parload_mpi_load() over the
 * MPI_Comm of an mpi4py communicator, each rank's part a Python object
 * whose arrays view its memory (zero copy, as Dataset's).
 */
#define PY_SSIZE_T_CLEAN
#include "_parload_api.h"

#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <parload_mpi.h>

static const parload_py_api *api;

/* ---------------------------------------------------------------------
 * Part: one rank's part; its arrays hold it as their base.
 * ------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	parload_mpi_part part;
	parload_desc desc; /* raw=: the layout the load was given */
	PyObject *name;
	PyObject *weakrefs;
} PartObject;

static void Part_dealloc(PartObject *self)
{
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	parload_mpi_part_free(&self->part);
	Py_XDECREF(self->name);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static const parload_shape *part_shape(const PartObject *self)
{
	return &self->part.dataset.shape;
}

/* A rows split delivers sinograms, a views split views (also on a rank
 * with nothing, whose dataset is all zero). */
static parload_layout part_layout(const PartObject *self)
{
	return self->part.split == PARLOAD_MPI_SPLIT_ROWS ?
		       PARLOAD_LAYOUT_SINOGRAMS :
		       PARLOAD_LAYOUT_VIEWS;
}

static void global_dims(const PartObject *self, npy_intp dims[3]);

static PyObject *Part_pixels(PartObject *self, void *closure)
{
	const parload_dataset *ds = &self->part.dataset;
	npy_intp dims[3];

	/* A rank with nothing still has the others' row and column shape,
	 * so that the parts concatenate. */
	if (!ds->pixels) {
		global_dims(self, dims);
		dims[0] = 0;
	} else {
		api->shape_dims(&ds->shape, dims);
	}
	return api->array_over(
		/* The delivered type: float32 for a corrected load. */
		PyArray_DescrFromType(api->pixel_typenum(
			self->part.global.pixel_type)),
		3, dims, NULL, ds->pixels, Py_NewRef((PyObject *)self));
}

static PyObject *Part_headers(PartObject *self, void *closure)
{
	npy_intp n = (npy_intp)part_shape(self)->views;

	return api->array_over(api->header_descr(), 1, &n, NULL,
			       self->part.dataset.headers,
			       Py_NewRef((PyObject *)self));
}

static PyObject *Part_bad_views(PartObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->part.dataset.bad_view_count;

	return api->array_over(PyArray_DescrFromType(NPY_UINT64), 1, &n, NULL,
			       self->part.dataset.bad_views,
			       Py_NewRef((PyObject *)self));
}

/* The global array's dimensions in the part's layout. */
static void global_dims(const PartObject *self, npy_intp dims[3])
{
	parload_shape g = self->part.global;

	g.layout = part_layout(self);
	api->shape_dims(&g, dims);
}

static PyObject *Part_global_shape(PartObject *self, void *closure)
{
	npy_intp d[3];

	global_dims(self, d);
	return Py_BuildValue("(nnn)", (Py_ssize_t)d[0], (Py_ssize_t)d[1],
			     (Py_ssize_t)d[2]);
}

/* Where the part sits in the global array: (first, last) of its first
 * axis (views for a views split, rows for a rows split). */
static void part_range(const PartObject *self, uint64_t *b, uint64_t *e)
{
	const parload_mpi_part *p = &self->part;

	if (p->split == PARLOAD_MPI_SPLIT_ROWS) {
		*b = p->row_begin;
		*e = p->row_end;
	} else {
		*b = p->view_begin;
		*e = p->view_end;
	}
}

static PyObject *Part_index(PartObject *self, void *closure)
{
	uint64_t b, e;
	PyObject *lo, *hi, *sl = NULL, *all, *t;

	part_range(self, &b, &e);
	lo = PyLong_FromUnsignedLongLong(b);
	hi = PyLong_FromUnsignedLongLong(e);
	if (lo && hi)
		sl = PySlice_New(lo, hi, NULL);
	Py_XDECREF(lo);
	Py_XDECREF(hi);
	all = PySlice_New(NULL, NULL, NULL);
	t = sl && all ? PyTuple_Pack(3, sl, all, all) : NULL;
	Py_XDECREF(sl);
	Py_XDECREF(all);
	return t;
}

static PyObject *Part_views(PartObject *self, void *closure)
{
	const parload_shape *s = part_shape(self);

	return api->range3(s->view_start, s->views,
			   s->view_step ? s->view_step : 1);
}

static PyObject *Part_rows(PartObject *self, void *closure)
{
	return api->range3(part_shape(self)->row_start,
			   part_shape(self)->rows, 1);
}

static PyObject *Part_split(PartObject *self, void *closure)
{
	return PyUnicode_FromString(parload_mpi_split_name(self->part.split));
}

static PyObject *Part_layout(PartObject *self, void *closure)
{
	return PyUnicode_FromString(parload_layout_name(part_layout(self)));
}

static PyObject *Part_file_header(PartObject *self, void *closure)
{
	return api->file_header_of(&self->part.desc);
}

static PyObject *Part_raw_headers(PartObject *self, void *closure)
{
	const parload_mpi_part *p = &self->part;

	return api->raw_headers_array(
		p->dataset.raw_headers, p->dataset.shape.views,
		p->desc.format == PARLOAD_FORMAT_RAW ? p->desc.header : 0,
		Py_NewRef((PyObject *)self));
}

static PyObject *Part_desc(PartObject *self, void *closure)
{
	return api->desc_dict(&self->part.desc);
}

static PyObject *Part_stats(PartObject *self, void *closure)
{
	return api->stats_dict(&self->part.dataset.stats);
}

static PyObject *Part_placement(PartObject *self, void *closure)
{
	const parload_mpi_part *p = &self->part;

	return Py_BuildValue("{s:i,s:i,s:I,s:I,s:d}", "local_rank",
			     p->local_rank, "local_ranks", p->local_ranks,
			     "threads", p->threads, "core_offset",
			     p->core_offset, "seconds", p->seconds);
}

static PyObject *Part_rank(PartObject *self, void *closure)
{
	return PyLong_FromLong(closure ? self->part.ranks : self->part.rank);
}

static PyObject *Part_repr(PartObject *self)
{
	uint64_t b, e;

	part_range(self, &b, &e);
	return PyUnicode_FromFormat("<parload.mpi.Part %R: rank %d of %d, %s "
				    "%llu:%llu>",
				    self->name ? self->name : Py_None,
				    self->part.rank, self->part.ranks,
				    parload_mpi_split_name(self->part.split),
				    (unsigned long long)b,
				    (unsigned long long)e);
}

static PyGetSetDef Part_getset[] = {
	{"pixels", (getter)Part_pixels, NULL,
	 "The rank's pixels, viewing the part's memory (no copy): shape\n"
	 "(views, rows, cols) for split=\"views\", (rows, views, cols)\n"
	 "(sinograms) for split=\"rows\".  global[part.index] is this array.",
	 NULL},
	{"headers", (getter)Part_headers, NULL,
	 "The view headers of the part's views (header_dtype, no copy).", NULL},
	{"bad_views", (getter)Part_bad_views, NULL,
	 "With verify and keep_going: the part's views whose CRC-32C does\n"
	 "not match (uint64 ndarray).", NULL},
	{"global_shape", (getter)Part_global_shape, NULL,
	 "The shape of the whole selection in the part's layout.", NULL},
	{"index", (getter)Part_index, NULL,
	 "The part's place in the whole: a tuple of slices, so that a whole\n"
	 "load in the same layout, indexed with it, equals pixels.", NULL},
	{"views", (getter)Part_views, NULL,
	 "The file indices of the part's views, a range.", NULL},
	{"rows", (getter)Part_rows, NULL,
	 "The detector rows of the part, a range.", NULL},
	{"split", (getter)Part_split, NULL, "\"views\" or \"rows\".", NULL},
	{"layout", (getter)Part_layout, NULL,
	 "The pixels' layout: \"views\" or \"sinograms\".", NULL},
	{"raw_headers", (getter)Part_raw_headers, NULL,
	 "A raw layout's view headers of the part's views: a (views, header)\n"
	 "uint8 ndarray (no copy), None without any (as Dataset.raw_headers).",
	 NULL},
	{"desc", (getter)Part_desc, NULL,
	 "The layout rank 0 described, a dict as Dataset.desc.", NULL},
	{"file_header", (getter)Part_file_header, NULL,
	 "The file header rank 0 read (a parload.FileHeader); None for a raw\n"
	 "layout.", NULL},
	{"stats", (getter)Part_stats, NULL,
	 "What this rank's load did, a dict as Dataset.stats.", NULL},
	{"placement", (getter)Part_placement, NULL,
	 "This rank's place on its node: local_rank, local_ranks, the\n"
	 "threads and core_offset of its workers, and the seconds the whole\n"
	 "collective call took here.", NULL},
	{"rank", (getter)Part_rank, NULL, "This rank in the communicator.",
	 NULL},
	{"ranks", (getter)Part_rank, NULL, "The communicator's size.",
	 (void *)1},
	{NULL},
};

static PyTypeObject PartType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.mpi.Part",
	.tp_basicsize = sizeof(PartObject),
	.tp_dealloc = (destructor)Part_dealloc,
	.tp_repr = (reprfunc)Part_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One rank's part of a parload.mpi.load(): its arrays, where "
		  "it sits in the whole, and how it was loaded.",
	.tp_weaklistoffset = offsetof(PartObject, weakrefs),
	.tp_getset = Part_getset,
};

/* ---------------------------------------------------------------------
 * load()
 * ------------------------------------------------------------------- */

/* split= and io= as the library's values; -1 with ValueError. */
static int split_io(const char *split_name, const char *io_name, int *kind,
		    int *io)
{
	*kind = parload_mpi_split_from_name(split_name);
	if (*kind != PARLOAD_MPI_SPLIT_VIEWS &&
	    *kind != PARLOAD_MPI_SPLIT_ROWS) {
		PyErr_Format(PyExc_ValueError,
			     "split: \"%s\" is not \"views\" or \"rows\"",
			     split_name);
		return -1;
	}
	*io = parload_mpi_io_from_name(io_name);
	if (*io < 0) {
		PyErr_Format(PyExc_ValueError,
			     "io: \"%s\" is not \"pool\" or \"mpiio\"",
			     io_name);
		return -1;
	}
	return 0;
}

/* Collective: raw= parsed on every rank (each is given its own), and
 * whether any failed (an "@PATH" that only some can read), so that every
 * rank fails or none, before the load's collective calls.  -1 with an
 * exception. */
static int raw_agree(MPI_Comm comm, PyObject *raw, parload_desc *d)
{
	int bad = api->raw_parse(raw, d) != 0, any = bad, rc;

	Py_BEGIN_ALLOW_THREADS
	rc = MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
	Py_END_ALLOW_THREADS
	if (rc != MPI_SUCCESS) {
		if (!bad)
			PyErr_SetString(PyExc_RuntimeError,
					"raw: MPI_Allreduce failed");
		return -1;
	}
	if (any && !bad)
		PyErr_SetString(PyExc_ValueError,
				"raw: the layout is invalid on another rank");
	return any ? -1 : 0;
}

/* The collective load of path_obj, laid out as raw (None: parload's own
 * format), into a new Part (opts->error set). */
static PyObject *part_load(MPI_Comm comm, PyObject *path_obj, PyObject *raw,
			   parload_mpi_options *opts,
			   const parload_mpi_split *split)
{
	PyObject *path = NULL;
	PartObject *self;
	int rc;

	if (!PyUnicode_FSConverter(path_obj, &path))
		return NULL;
	self = PyObject_New(PartObject, &PartType);
	if (!self) {
		Py_DECREF(path);
		return NULL;
	}
	memset(&self->part, 0, sizeof(self->part));
	self->weakrefs = NULL;
	self->name = PyOS_FSPath(path_obj);
	if (raw != Py_None) {
		if (raw_agree(comm, raw, &self->desc)) {
			Py_DECREF(path);
			Py_DECREF(self);
			return NULL;
		}
		opts->desc = &self->desc;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = parload_mpi_load(comm, PyBytes_AS_STRING(path), opts, split,
			      &self->part);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (rc) {
		api->raise_error(rc, opts->error, self->name);
		Py_DECREF(self);
		return NULL;
	}
	if (!self->name) {
		Py_DECREF(self);
		return NULL;
	}
	return (PyObject *)self;
}

/* load()'s arguments, as given. */
typedef struct load_args {
	PyObject *comm, *path, *threads, *raw, *views, *rows, *cols, *dataset;
	PyObject *refs[3]; /* flats darks bin */
	const char *split, *io, *cache, *frames, *reduce;
	int verify, keep_going, truncated, bind, huge, node_split, map_sino;
	int minus_log;
} load_args;

static int load_parse(PyObject *args, PyObject *kw, load_args *a)
{
	static char *kwlist[] = {"comm", "path", "split", "raw", "threads", "io",
				 "verify", "keep_going", "allow_truncated",
				 "numa_bind", "hugepages", "node_split",
				 "views", "rows", "cols", "cache", "dataset",
				 "frames", "flats", "darks", "reduce",
				 "minus_log", "bin", "map_sinograms", NULL};

	memset(a, 0, sizeof(*a));
	a->raw = a->views = a->rows = a->cols = a->dataset = Py_None;
	a->refs[0] = a->refs[1] = a->refs[2] = Py_None;
	a->split = "views";
	a->io = "pool";
	a->bind = a->huge = a->node_split = 1;
	return PyArg_ParseTupleAndKeywords(
		       args, kw, "OO|s$OOsppppppOOOzOzOOzpOp:load", kwlist,
		       &a->comm, &a->path, &a->split, &a->raw, &a->threads,
		       &a->io, &a->verify, &a->keep_going, &a->truncated,
		       &a->bind, &a->huge, &a->node_split, &a->views, &a->rows,
		       &a->cols, &a->cache, &a->dataset, &a->frames,
		       &a->refs[0], &a->refs[1], &a->reduce, &a->minus_log,
		       &a->refs[2], &a->map_sino) ?
		       0 :
		       -1;
}

/* The load's options and split from a's; opts->dataset points into
 * *dataset_bytes (a new reference, or NULL). */
static int load_options(const load_args *a, parload_mpi_options *opts,
			parload_mpi_split *split, PyObject **dataset_bytes)
{
	size_t threads = 0;
	int kind, io;

	if (split_io(a->split, a->io, &kind, &io))
		return -1;
	parload_mpi_options_init(opts);
	if (a->threads && api->size_arg(a->threads, &threads, "threads"))
		return -1;
	if (threads > UINT_MAX) {
		PyErr_Format(PyExc_OverflowError, "threads is too large");
		return -1;
	}
	if (api->selection_from(a->views, a->rows, a->cols, NULL,
				&opts->load.selection) ||
	    api->cache_from(a->cache, &opts->cache) ||
	    api->frames_from(a->frames, &opts->frames))
		return -1;
	if (a->dataset != Py_None) {
		if (!PyUnicode_FSConverter(a->dataset, dataset_bytes))
			return -1;
		opts->dataset = PyBytes_AS_STRING(*dataset_bytes);
	}
	opts->load.threads = (unsigned)threads;
	opts->load.flags = api->option_flags(a->verify, a->keep_going,
					     a->truncated, a->bind, a->huge,
					     a->map_sino);
	opts->io = (parload_mpi_io)io;
	opts->flags = a->node_split ? 0 : PARLOAD_MPI_OPT_NO_NODE_SPLIT;
	memset(split, 0, sizeof(*split));
	split->kind = (parload_mpi_split_kind)kind;
	return 0;
}

static PyObject *mod_load(PyObject *mod, PyObject *args, PyObject *kw)
{
	PyObject *dataset_bytes = NULL, *result = NULL;
	parload_mpi_options opts;
	parload_mpi_split split;
	parload_error err;
	MPI_Comm *comm;
	load_args a;
	void *corr;

	if (load_parse(args, kw, &a) || !(comm = PyMPIComm_Get(a.comm)))
		return NULL;
	if (load_options(&a, &opts, &split, &dataset_bytes)) {
		Py_XDECREF(dataset_bytes);
		return NULL;
	}
	memset(&err, 0, sizeof(err));
	opts.error = &err;
	/* The references, checked against the scan as parload.load does;
	 * each rank reads and reduces them over its own rows. */
	corr = api->correction_new(a.path, a.refs, a.reduce, a.minus_log, a.raw,
				   a.dataset, a.frames, &opts.correct);
	if (corr)
		result = part_load(*comm, a.path, a.raw, &opts, &split);
	api->correction_free(corr);
	Py_XDECREF(dataset_bytes);
	return result;
}

static PyMethodDef module_methods[] = {
	{"load", (PyCFunction)(void (*)(void))mod_load,
	 METH_VARARGS | METH_KEYWORDS,
	 "load(comm, path, split='views', *, raw=None, threads=0, io='pool',\n"
	 "     ...)\n--\n\n"
	 "Collective: this rank's part of path; see parload.mpi.load."},
	{NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "parload._parload_mpi",
	.m_doc = "The C part of parload.mpi; use parload.mpi instead.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__parload_mpi(void);
PyMODINIT_FUNC PyInit__parload_mpi(void)
{
	PyObject *m;

	import_array();
	if (import_mpi4py() < 0)
		return NULL;
	api = parload_py_import_api();
	if (!api || PyType_Ready(&PartType) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Part", (PyObject *)&PartType) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
