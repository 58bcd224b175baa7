/*
 * dataset.c - parload.Dataset: a loaded file, its arrays views of the
 * library's memory that keep the Dataset alive.
 */
#include "_parload.h"

#include "gen.h"

typedef struct {
	PyObject_HEAD
	parload_dataset ds;
	/* load_into(): the caller's arrays, which ds points into */
	PyObject *pixels;
	PyObject *headers;
	PyObject *raw_headers;
	PyObject *name;
	PyObject *weakrefs;
} DatasetObject;

static void Dataset_dealloc(DatasetObject *self)
{
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	parload_dataset_free(&self->ds);
	Py_XDECREF(self->pixels);
	Py_XDECREF(self->headers);
	Py_XDECREF(self->raw_headers);
	Py_XDECREF(self->name);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A Dataset that takes over *ds (zeroed here). */
PyObject *py_dataset_wrap(parload_dataset *ds, PyObject *name,
			  PyObject *pixels, PyObject *headers,
			  PyObject *raw_headers)
{
	DatasetObject *self = PyObject_New(DatasetObject, &DatasetType);

	if (!self) {
		parload_dataset_free(ds);
		return NULL;
	}
	self->ds = *ds;
	memset(ds, 0, sizeof(*ds));
	self->pixels = Py_XNewRef(pixels);
	self->headers = Py_XNewRef(headers);
	self->raw_headers = Py_XNewRef(raw_headers);
	self->name = Py_XNewRef(name);
	self->weakrefs = NULL;
	return (PyObject *)self;
}

static PyObject *Dataset_pixels(DatasetObject *self, void *closure)
{
	npy_intp dims[3];
	int typenum;

	if (self->pixels)
		return Py_NewRef(self->pixels);
	py_shape_dims(&self->ds.shape, dims);
	typenum = py_pixel_typenum(self->ds.shape.pixel_type);
	return py_array_over(PyArray_DescrFromType(typenum), 3, dims, NULL,
			     self->ds.pixels, Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_headers(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.shape.views;

	if (self->headers)
		return Py_NewRef(self->headers);
	return py_array_over(py_new_header_descr(), 1, &n, NULL,
			     self->ds.headers, Py_NewRef((PyObject *)self));
}

/* A raw stream's view headers, views x size bytes at data: a (views,
 * size) uint8 array that base (stolen) keeps alive; None without any. */
PyObject *py_raw_headers_array(const unsigned char *data, uint64_t views,
			       uint64_t size, PyObject *base)
{
	npy_intp dims[2] = {(npy_intp)views, (npy_intp)size};

	if (!data || !size) {
		Py_DECREF(base);
		Py_RETURN_NONE;
	}
	return py_array_over(PyArray_DescrFromType(NPY_UINT8), 2, dims, NULL,
			     (void *)data, base);
}

static PyObject *Dataset_raw_headers(DatasetObject *self, void *closure)
{
	if (self->raw_headers)
		return Py_NewRef(self->raw_headers);
	return py_raw_headers_array(self->ds.raw_headers, self->ds.shape.views,
				    self->ds.desc.header,
				    Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_desc(DatasetObject *self, void *closure)
{
	return py_desc_dict(&self->ds.desc);
}

static PyObject *Dataset_angles(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.shape.views;
	npy_intp stride = sizeof(parload_view_header);
	char *base = (char *)self->ds.headers;
	PyObject *owner = self->headers ? self->headers : (PyObject *)self;

	if (base)
		base += offsetof(parload_view_header, angle_deg);
	return py_array_over(PyArray_DescrFromType(NPY_FLOAT32), 1, &n, &stride,
			     base, Py_NewRef(owner));
}

static PyObject *Dataset_bad_views(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.bad_view_count;

	return py_array_over(PyArray_DescrFromType(NPY_UINT64), 1, &n, NULL,
			     self->ds.bad_views, Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_file_header(DatasetObject *self, void *closure)
{
	return py_file_header_of(&self->ds.desc);
}

PyObject *py_stats_dict(const parload_stats *st)
{
	const char *strategy = parload_strategy_name(st->strategy);
	const char *cache = parload_cache_name(st->cache);

	/* serial: None where the pixels were read in parallel; its text may
	 * name an HDF5 filter as the file does. */
	return Py_BuildValue("{s:d,s:K,s:K,s:I,s:s,s:K,s:K,s:s,s:K,s:s,s:N,"
			     "s:K}",
			     "seconds", st->seconds, "bytes_read",
			     (unsigned long long)st->bytes_read, "read_calls",
			     (unsigned long long)st->read_calls, "threads",
			     st->threads, "strategy",
			     strategy ? strategy : "unknown", "crc_checked",
			     (unsigned long long)st->crc_checked,
			     "declared_views",
			     (unsigned long long)st->declared_views, "cache",
			     cache ? cache : "unknown", "strips_decoded",
			     (unsigned long long)st->strips_decoded, "codec",
			     st->codec, "serial",
			     py_text(st->serial), "fallback_files",
			     (unsigned long long)st->fallback_files);
}

static PyObject *Dataset_stats(DatasetObject *self, void *closure)
{
	return py_stats_dict(&self->ds.stats);
}

PyObject *py_range3(uint64_t start, uint64_t n, uint64_t step)
{
	return PyObject_CallFunction((PyObject *)&PyRange_Type, "KKK",
				     (unsigned long long)start,
				     (unsigned long long)(start + n * step),
				     (unsigned long long)step);
}

static PyObject *Dataset_views(DatasetObject *self, void *closure)
{
	const parload_shape *s = &self->ds.shape;

	return py_range3(s->view_start, s->views,
			 s->view_step ? s->view_step : 1);
}

/* A binned load's rows and columns step by the bin: each the first
 * detector row or column of its bin. */
static uint64_t bin_of(const DatasetObject *self)
{
	return self->ds.shape.bin > 1 ? self->ds.shape.bin : 1;
}

static PyObject *Dataset_rows(DatasetObject *self, void *closure)
{
	return py_range3(self->ds.shape.row_start, self->ds.shape.rows,
			 bin_of(self));
}

static PyObject *Dataset_cols(DatasetObject *self, void *closure)
{
	return py_range3(self->ds.shape.col_start, self->ds.shape.cols,
			 bin_of(self));
}

static PyObject *Dataset_bin(DatasetObject *self, void *closure)
{
	return PyLong_FromUnsignedLongLong(bin_of(self));
}

static PyObject *Dataset_layout(DatasetObject *self, void *closure)
{
	return PyUnicode_FromString(parload_layout_name(self->ds.shape.layout));
}

static Py_ssize_t Dataset_len(DatasetObject *self)
{
	return (Py_ssize_t)self->ds.shape.views;
}

static PyObject *Dataset_repr(DatasetObject *self)
{
	const parload_shape *s = &self->ds.shape;
	const char *px = parload_pixel_name(s->pixel_type);

	return PyUnicode_FromFormat("<parload.Dataset %R: %llu views of %ux%u "
				    "%s, %s layout>",
				    self->name ? self->name : Py_None,
				    (unsigned long long)s->views, s->cols,
				    s->rows, px ? px : "?",
				    parload_layout_name(s->layout));
}

static PyGetSetDef Dataset_getset[] = {
	{"pixels", (getter)Dataset_pixels, NULL,
	 "The pixels: an ndarray of shape (views, rows, cols), or (rows, views,\n"
	 "cols) in the sinograms layout, with the file's pixel dtype.  It views\n"
	 "the dataset's memory (its base is the Dataset): no copy is made, and\n"
	 "the memory lives as long as any array that views it.",
	 NULL},
	{"headers", (getter)Dataset_headers, NULL,
	 "The view headers: a structured ndarray of header_dtype (view_index,\n"
	 "timestamp_ns, angle_deg, crc32c), one per loaded view, viewing the\n"
	 "dataset's memory.  view_index is the view's index in the file.",
	 NULL},
	{"angles", (getter)Dataset_angles, NULL,
	 "headers['angle_deg']: a float32 view (strided, no copy); degrees,\n"
	 "an HDF5 file's radians (its units attribute) converted.", NULL},
	{"bad_views", (getter)Dataset_bad_views, NULL,
	 "With verify and keep_going: the views (file indices) whose payload\n"
	 "does not match its CRC-32C, as a uint64 ndarray (empty if none).",
	 NULL},
	{"raw_headers", (getter)Dataset_raw_headers, NULL,
	 "A raw layout's own view headers (raw= with header=N): a (views, N)\n"
	 "uint8 ndarray, the header bytes of each loaded view as the file\n"
	 "has them, viewing the dataset's memory (no copy).  None when the\n"
	 "layout has no view headers, and for parload's own format (whose\n"
	 "view headers are headers).",
	 NULL},
	{"desc", (getter)Dataset_desc, NULL,
	 "The layout that was read, resolved, a dict: format (\"parload\" or\n"
	 "\"raw\"), width, height, type (\"u16\", \"u16be\", \"mono12p\", ...),\n"
	 "dtype (the pixels' in memory), offset, header, gap, count (the\n"
	 "views there are), payload_size and\n"
	 "record_size (bytes of one view's pixels, and of its whole record,\n"
	 "in the file).",
	 NULL},
	{"file_header", (getter)Dataset_file_header, NULL,
	 "parload's own file header, a FileHeader named tuple; None for a\n"
	 "raw layout (see desc).", NULL},
	{"stats", (getter)Dataset_stats, NULL,
	 "What the load did, a dict: seconds (from opening the file until the\n"
	 "dataset was complete), bytes_read, read_calls, threads, strategy,\n"
	 "crc_checked, declared_views (the header's view count), cache\n"
	 "(the page-cache mode used: keep, drop or direct; see Loader.load),\n"
	 "strips_decoded (chunks the workers decoded), codec (what decoded\n"
	 "them: 'bitshuffle', 'shuffle+deflate', 'libhdf5'; '' for none),\n"
	 "serial (why a container's pixels were read one\n"
	 "thread at a time, or None; a name the file stores in bytes that\n"
	 "are not UTF-8 has them escaped, \\xff) and fallback_files (files\n"
	 "of a TIFF or HDF5 source read with libtiff or libhdf5 because\n"
	 "parload's own reader could not take them).",
	 NULL},
	{"views", (getter)Dataset_views, NULL,
	 "The file indices of the loaded views, a range.", NULL},
	{"rows", (getter)Dataset_rows, NULL,
	 "The detector rows loaded, a range.", NULL},
	{"cols", (getter)Dataset_cols, NULL, "The columns loaded, a range.",
	 NULL},
	{"bin", (getter)Dataset_bin, NULL,
	 "The binning factor (1: none): each pixel the mean of bin x bin "
	 "detector pixels, rows and cols the first row and column of each "
	 "bin.", NULL},
	{"layout", (getter)Dataset_layout, NULL,
	 "The pixels' layout: \"views\" or \"sinograms\".", NULL},
	{NULL},
};

/* _verify_seed(seed): None when the dataset holds what 'parload gen
 * --seed seed' wrote (its selection of it), else where it does not, as
 * the parload command says it. */
static PyObject *Dataset_verify_seed(DatasetObject *self, PyObject *arg)
{
	unsigned long long seed = PyLong_AsUnsignedLongLong(arg);
	uint64_t bad = PARLOAD_NONE;
	bool header = false, ok;

	if (seed == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ok = pgen_verify_shape(&self->ds, &self->ds.shape, seed, &bad,
			       &header);
	Py_END_ALLOW_THREADS
	if (ok)
		Py_RETURN_NONE;
	if (bad == PARLOAD_NONE)
		return PyUnicode_FromString("out of memory while verifying");
	return PyUnicode_FromFormat("view %llu: %s differs from the stream of "
				    "seed %llu", (unsigned long long)bad,
				    header ? "header" : "payload", seed);
}

static PyMethodDef Dataset_methods[] = {
	{"_verify_seed", (PyCFunction)Dataset_verify_seed, METH_O,
	 "_verify_seed(seed)\n--\n\nNone when the pixels and headers are "
	 "what 'parload gen --seed seed' wrote, else where they differ "
	 "(python -m parload --verify-seed)."},
	{NULL},
};

static PySequenceMethods Dataset_as_sequence = {
	.sq_length = (lenfunc)Dataset_len,
};

PyTypeObject DatasetType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.Dataset",
	.tp_basicsize = sizeof(DatasetObject),
	.tp_dealloc = (destructor)Dataset_dealloc,
	.tp_repr = (reprfunc)Dataset_repr,
	.tp_as_sequence = &Dataset_as_sequence,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A loaded stream: pixels, headers and what the load did.\n\n"
		  "Made by load() and Loader.load(); len() is the number of "
		  "views.",
	.tp_weaklistoffset = offsetof(DatasetObject, weakrefs),
	.tp_getset = Dataset_getset,
	.tp_methods = Dataset_methods,
};
