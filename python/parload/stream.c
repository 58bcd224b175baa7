/*
 * stream.c - parload.Stream and its Batch: batches while a load runs.
 */
#include "_parload.h"

/* ---------------------------------------------------------------------
 * Stream: batches while a load runs (parload_stream_*)
 *
 * Without a window the load goes into buffers the Stream allocates itself
 * (parload_request.into), and every batch's arrays view them with that
 * memory (a capsule) as their base: they stay valid after the next batch,
 * after the stream ends and after it is cancelled, as long as any array
 * refers to them.  With a window the library reuses two windows, so a
 * batch's arrays are read-only, valid until the next batch or close(),
 * and hold the Stream as their base: a stream never closed explicitly is
 * not freed under them.
 * ------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	LoaderObject *loader; /* held, its lock taken, while s is open */
	parload_stream *s;
	/* One call at a time on s: a close() from another thread waits for
	 * a next() in progress instead of freeing the stream under it. */
	PyThread_type_lock lock;
	/* A close() has begun: a next() called since stops the iteration
	 * without taking the lock, which the thread calling next() in a loop
	 * would otherwise take again and again before close() got it (read
	 * and written with the GIL held). */
	int closing;
	source src;           /* what the load reads (its paths, its layout) */
	PyObject *buffers;    /* capsule of the load's memory, or NULL */
	PyObject *stats;      /* the load's stats once it completed */
	PyObject *bad_views;  /* tuple, once it completed */
	parload_selection sel; /* the request's, read by the load's thread */
	parload_shape shape;
	int typenum;
	int copy;
	py_correction corr;   /* the request's, read by the load's thread */
} StreamObject;


PyTypeObject *BatchType;

static PyStructSequence_Field batch_fields[] = {
	{"first", "the batch's first view, counted in the selection"},
	{"count", "views in the batch"},
	{"views", "the file indices of the batch's views, a range"},
	{"headers", "count view headers, an ndarray of header_dtype"},
	{"pixels", "an ndarray of shape (count, rows, cols)"},
	{"raw_headers", "a raw layout's view headers, a (count, header) uint8 "
			"ndarray, or None"},
	{"views_done", "views delivered so far, this batch included"},
	{"views_total", "views the stream delivers in all"},
	{"bytes_done", "file bytes delivered so far, this batch included"},
	{"bytes_total", "file bytes the stream delivers in all"},
	{"seconds", "seconds since the load began"},
	{NULL, NULL},
};

PyStructSequence_Desc py_batch_desc = {
	"parload.Batch",
	"One batch of views from stream(), in file order, each view completely\n"
	"read (and with verify, checked).  Without a window, headers and pixels\n"
	"view memory that lives as long as they do; with a window they are\n"
	"read-only and valid only until the next batch or the stream's close()\n"
	"(copy=True gives independent copies).",
	batch_fields,
	11,
};

/* What the stream reads, before the load: its description, for the
 * buffers and the shape, as the load will describe it
 * (parload_describe_request).  Following, a file still shorter than its
 * header is waited for as the load waits for its views (until timeout
 * seconds pass without growth; Ctrl-C stops the wait), and a followed
 * file describes the views it promises: its header's view_count, a raw
 * layout's count. */
static int stream_desc(StreamObject *self, int follow, double timeout,
		       parload_desc *d)
{
	const int truncated = follow || (self->loader->flags &
					 PARLOAD_OPT_ALLOW_TRUNCATED);
	parload_request req;
	parload_error err;
	int rc;

	parload_request_init(&req);
	py_source_request(&self->src, &req.source);
	req.flags = follow ? PARLOAD_REQ_FOLLOW : 0;
	req.timeout = timeout;
	py_request_signals(&req);
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_describe_request(&req, truncated, d, &err);
	Py_END_ALLOW_THREADS
	if (rc && !PyErr_Occurred())
		py_raise_error(rc, &err, self->src.name);
	return rc ? -1 : 0;
}

static int stream_end(StreamObject *self, parload_dataset *out)
{
	parload_stream *s = self->s;
	int rc;

	self->s = NULL;
	if (!s)
		return 0;
	/* In a child of fork() the stream's threads do not exist. */
	if (self->loader->pid != getpid())
		return 0;
	Py_BEGIN_ALLOW_THREADS
	rc = parload_stream_close(s, out);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->loader->lock);
	return rc;
}

static void Stream_dealloc(StreamObject *self)
{
	(void)stream_end(self, NULL);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_XDECREF(self->loader);
	py_source_clear(&self->src);
	py_correction_clear(&self->corr);
	Py_XDECREF(self->buffers);
	Py_XDECREF(self->stats);
	Py_XDECREF(self->bad_views);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int u64_arg(PyObject *obj, uint64_t *out, const char *what)
{
	size_t v = 0;

	if (obj && obj != Py_None && py_size_arg(obj, &v, what))
		return -1;
	*out = v;
	return 0;
}

/* A Stream reads a path or a list of them: a descriptor can't be
 * followed or reopened. */
static int stream_source(PyObject *obj, PyObject *raw, source *src)
{
	if (PyLong_Check(obj) ||
	    !(PyUnicode_Check(obj) || PyBytes_Check(obj) || PyList_Check(obj) ||
	      PyTuple_Check(obj) || PyObject_HasAttrString(obj, "__fspath__"))) {
		PyErr_Format(PyExc_TypeError,
			     "stream() reads a path (str, bytes or "
			     "os.PathLike) or a list of paths, not %.100s",
			     Py_TYPE(obj)->tp_name);
		return -1;
	}
	return py_source_parse(obj, raw, src);
}

/* A Stream of loader over src (taken over here), not yet open. */
static StreamObject *stream_alloc(PyTypeObject *type, PyObject *loader,
				  source *src, int copy)
{
	StreamObject *self = (StreamObject *)type->tp_alloc(type, 0);

	if (!self) {
		py_source_clear(src);
		return NULL;
	}
	self->loader = (LoaderObject *)Py_NewRef(loader);
	self->lock = PyThread_allocate_lock();
	self->src = *src;
	memset(src, 0, sizeof(*src));
	self->copy = copy;
	if (!self->lock) {
		PyErr_NoMemory();
		Py_DECREF(self);
		return NULL;
	}
	return self;
}

/* Without a window: the buffers the load goes into (req->into), held by
 * self->buffers, a capsule that the batches' arrays keep alive. */
static int stream_alloc_buffers(StreamObject *self,
				const parload_desc *h,
				const parload_selection *sel,
				parload_request *req)
{
	parload_buffers *b;

	self->buffers = py_buffers_new(
		h, sel, self->loader->flags & PARLOAD_OPT_NO_HUGEPAGES,
		self->src.name, &b);
	if (!self->buffers)
		return -1;
	req->into = b;
	return 0;
}

/* Take the loader (its lock stays taken while the stream is open) and
 * start the load. */
static int stream_open(StreamObject *self, parload_request *req)
{
	parload_error err;
	int rc;

	if (py_loader_enter(self->loader))
		return -1;
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_stream_open(&self->s, self->loader->loader, req, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		PyThread_release_lock(self->loader->lock);
		self->s = NULL;
		py_raise_error(rc, &err, self->src.name);
		return -1;
	}
	return 0;
}

/* Stream()'s arguments, as given. */
typedef struct stream_args {
	PyObject *loader, *obj, *raw, *bv, *bb, *win, *dataset;
	PyObject *views, *rows, *cols;
	PyObject *refs[3]; /* flats darks bin */
	const char *cache, *reduce, *frames;
	int follow, copy, minus_log, confine;
	double timeout;
} stream_args;

static int stream_parse(PyObject *args, PyObject *kw, stream_args *a)
{
	static char *kwlist[] = {"loader", "path", "raw", "batch_views",
				 "batch_bytes", "window", "follow", "timeout",
				 "views", "rows", "cols", "copy", "cache", "flats",
				 "darks", "reduce", "minus_log", "bin",
				 "dataset", "frames", "confine", NULL};

	memset(a, 0, sizeof(*a));
	a->raw = a->bv = a->bb = a->win = a->dataset = Py_None;
	a->views = a->rows = a->cols = Py_None;
	a->refs[0] = a->refs[1] = a->refs[2] = Py_None;
	a->timeout = 10.0;
	if (!PyArg_ParseTupleAndKeywords(
		    args, kw, "O!O|$OOOOpdOOOpzOOzpOOzp:Stream", kwlist,
		    &LoaderType, &a->loader, &a->obj, &a->raw, &a->bv, &a->bb,
		    &a->win, &a->follow, &a->timeout, &a->views, &a->rows,
		    &a->cols, &a->copy, &a->cache, &a->refs[0], &a->refs[1],
		    &a->reduce, &a->minus_log, &a->refs[2], &a->dataset,
		    &a->frames, &a->confine))
		return -1;
	if (!(a->timeout >= 0)) {
		PyErr_Format(PyExc_ValueError,
			     "timeout must be a number of seconds >= 0");
		return -1;
	}
	return 0;
}

/* The request's sizes, selection and cache mode, and its source. */
static int stream_request(const stream_args *a, parload_request *req,
			  parload_selection *sel, source *src)
{
	parload_request_init(req);
	req->flags = a->follow ? PARLOAD_REQ_FOLLOW : 0;
	req->timeout = a->timeout;
	if (u64_arg(a->bv, &req->batch_views, "batch_views") ||
	    u64_arg(a->bb, &req->batch_bytes, "batch_bytes") ||
	    u64_arg(a->win, &req->window_bytes, "window") ||
	    py_selection_from(a->views, a->rows, a->cols, NULL, sel) ||
	    py_cache_from(a->cache, &req->cache) ||
	    stream_source(a->obj, a->raw, src) ||
	    py_source_container(src, a->dataset, a->frames, a->confine))
		return -1;
	return 0;
}

/* What the stream delivers, before the load: its shape, its dtype (a
 * corrected load's float32), and without a window the buffers the load
 * goes into. */
static int stream_prepare(StreamObject *self, const stream_args *a,
			  const parload_selection *sel, parload_request *req)
{
	parload_desc d;

	if (stream_desc(self, a->follow, a->timeout, &d) ||
	    py_resolve_shape(&d, sel, PyBytes_AS_STRING(self->src.name_bytes),
			     self->src.name, &self->shape) ||
	    py_correction_for(&self->src, 1, a->refs, a->reduce, a->minus_log,
			      a->raw, &self->corr))
		return -1;
	req->correct = py_correction_of(&self->corr);
	if (req->correct) { /* the load delivers float32: buffers of it */
		d.pixel_type = PARLOAD_PIXEL_F32;
		d.encoding = PARLOAD_ENC_LE;
	}
	self->typenum = py_pixel_typenum(d.pixel_type);
	if (!req->window_bytes && stream_alloc_buffers(self, &d, sel, req))
		return -1;
	return 0;
}

static PyObject *Stream_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	parload_selection sel;
	parload_request req;
	StreamObject *self;
	stream_args a;
	source src;

	if (stream_parse(args, kw, &a) || stream_request(&a, &req, &sel, &src))
		return NULL;
	self = stream_alloc(type, a.loader, &src, a.copy);
	if (!self)
		return NULL;
	if (stream_prepare(self, &a, &sel, &req))
		goto fail;
	py_source_request(&self->src, &req.source);
	self->sel = sel;
	req.selection = &self->sel;
	if (stream_open(self, &req))
		goto fail;
	return (PyObject *)self;
fail:
	Py_DECREF(self);
	return NULL;
}

/* An array over a batch's memory: a view of the stream's buffers, a
 * read-only view of a window, or a copy. */
static PyObject *batch_array(StreamObject *self, PyArray_Descr *descr,
			     int nd, npy_intp *dims, const void *data)
{
	PyObject *a, *c;

	if (self->buffers && !self->copy)
		return py_array_over(descr, nd, dims, NULL, (void *)data,
				     Py_NewRef(self->buffers));
	a = py_array_over(descr, nd, dims, NULL, (void *)data,
			  Py_NewRef((PyObject *)self));
	if (!a)
		return NULL;
	if (!self->copy) {
		PyArray_CLEARFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
		return a;
	}
	c = PyArray_NewCopy((PyArrayObject *)a, NPY_CORDER);
	Py_DECREF(a);
	return c;
}

/* A batch's raw view headers: a (count, header) uint8 array, or None. */
static PyObject *batch_raw_headers(StreamObject *self, const parload_batch *b)
{
	npy_intp dims[2] = {(npy_intp)b->count, (npy_intp)b->raw_header_size};

	if (!b->raw_headers || !b->raw_header_size)
		Py_RETURN_NONE;
	return batch_array(self, PyArray_DescrFromType(NPY_UINT8), 2, dims,
			   b->raw_headers);
}

static PyObject *batch_new(StreamObject *self, const parload_batch *b)
{
	const parload_shape *s = &self->shape;
	PyObject *t = PyStructSequence_New(BatchType), *v;
	npy_intp dims[3] = {(npy_intp)b->count, s->rows, s->cols};
	npy_intp n = (npy_intp)b->count;
	uint64_t step = s->view_step ? s->view_step : 1;
	Py_ssize_t i = 0;

	if (!t)
		return NULL;
	PUT_(PyLong_FromUnsignedLongLong(b->first));
	PUT_(PyLong_FromUnsignedLongLong(b->count));
	PUT_(py_range3(s->view_start + b->first * step, b->count, step));
	PUT_(batch_array(self, py_new_header_descr(), 1, &n, b->headers));
	PUT_(batch_array(self, PyArray_DescrFromType(self->typenum), 3, dims,
			 b->pixels));
	PUT_(batch_raw_headers(self, b));
	PUT_(PyLong_FromUnsignedLongLong(b->views_done));
	PUT_(PyLong_FromUnsignedLongLong(b->views_total));
	PUT_(PyLong_FromUnsignedLongLong(b->bytes_done));
	PUT_(PyLong_FromUnsignedLongLong(b->bytes_total));
	PUT_(PyFloat_FromDouble(b->seconds));
	return t;
}

/* The load completed: keep what it did. */
static int stream_done(StreamObject *self, parload_error *err)
{
	parload_dataset ds;
	int rc = stream_end(self, &ds);

	if (rc)
		return rc;
	self->stats = py_stats_dict(&ds.stats);
	self->bad_views = PyTuple_New((Py_ssize_t)ds.bad_view_count);
	for (uint64_t i = 0; self->bad_views && i < ds.bad_view_count; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(ds.bad_views[i]);

		if (!v) {
			Py_CLEAR(self->bad_views);
			break;
		}
		PyTuple_SET_ITEM(self->bad_views, (Py_ssize_t)i, v);
	}
	/* The pixels are the stream's buffers, which this leaves alone. */
	parload_dataset_free(&ds);
	return 0;
}

static PyObject *stream_next(StreamObject *self)
{
	parload_batch b;
	parload_error err;
	int rc;

	if (!self->s)
		return NULL;
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_stream_next(self->s, &b, &err);
	Py_END_ALLOW_THREADS
	/* Ctrl-C while waiting: the handler runs now, and the load stops. */
	if (PyErr_CheckSignals() < 0) {
		(void)stream_end(self, NULL);
		return NULL;
	}
	if (rc == 1)
		return batch_new(self, &b);
	if (rc == 0)
		rc = stream_done(self, &err);
	else
		(void)stream_end(self, NULL);
	if (rc)
		return py_raise_error(rc, &err, self->src.name);
	if (PyErr_Occurred())
		return NULL;
	return NULL; /* StopIteration */
}

static PyObject *Stream_next(StreamObject *self)
{
	PyObject *r;

	if (self->closing)
		return NULL; /* StopIteration */
	lock_take(self->lock);
	r = stream_next(self);
	PyThread_release_lock(self->lock);
	return r;
}

static PyObject *Stream_close(StreamObject *self, PyObject *unused)
{
	self->closing = 1;
	lock_take(self->lock);
	(void)stream_end(self, NULL);
	PyThread_release_lock(self->lock);
	Py_RETURN_NONE;
}

static PyObject *Stream_enter_ctx(StreamObject *self, PyObject *unused)
{
	return Py_NewRef((PyObject *)self);
}

static PyObject *Stream_exit_ctx(StreamObject *self, PyObject *args)
{
	return Stream_close(self, NULL);
}

static PyObject *Stream_get_closed(StreamObject *self, void *closure)
{
	return PyBool_FromLong(self->s == NULL);
}

static PyObject *Stream_get_stats(StreamObject *self, void *closure)
{
	return Py_NewRef(self->stats ? self->stats : Py_None);
}

static PyObject *Stream_get_bad_views(StreamObject *self, void *closure)
{
	return Py_NewRef(self->bad_views ? self->bad_views : Py_None);
}

static PyObject *Stream_get_shape(StreamObject *self, void *closure)
{
	return Py_BuildValue("(KII)", (unsigned long long)self->shape.views,
			     self->shape.rows, self->shape.cols);
}

static PyObject *Stream_get_dtype(StreamObject *self, void *closure)
{
	return (PyObject *)PyArray_DescrFromType(self->typenum);
}

static PyMethodDef Stream_methods[] = {
	{"close", (PyCFunction)Stream_close, METH_NOARGS,
	 "close()\n--\n\nEnd the stream, cancelling the load if it is still\n"
	 "running (no error).  Arrays of earlier batches stay valid without\n"
	 "a window; with one they must not be used after this."},
	{"__enter__", (PyCFunction)Stream_enter_ctx, METH_NOARGS, NULL},
	{"__exit__", (PyCFunction)Stream_exit_ctx, METH_VARARGS, NULL},
	{NULL},
};

static PyGetSetDef Stream_getset[] = {
	{"closed", (getter)Stream_get_closed, NULL,
	 "Whether the stream ended (every batch delivered, an error, or\n"
	 "close()).", NULL},
	{"stats", (getter)Stream_get_stats, NULL,
	 "Once every batch was delivered, what the load did (a dict, as\n"
	 "Dataset.stats); None before, or after an error or close().", NULL},
	{"bad_views", (getter)Stream_get_bad_views, NULL,
	 "With verify and keep_going, once every batch was delivered: the\n"
	 "views whose CRC-32C does not match, a tuple; None before.", NULL},
	{"shape", (getter)Stream_get_shape, NULL,
	 "(views, rows, cols) of the whole selection, from the description\n"
	 "(a followed or truncated file may deliver fewer views).", NULL},
	{"dtype", (getter)Stream_get_dtype, NULL, "The pixels' dtype.", NULL},
	{NULL},
};

PyTypeObject StreamType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.Stream",
	.tp_basicsize = sizeof(StreamObject),
	.tp_dealloc = (destructor)Stream_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A load delivering Batch objects as it runs; made by "
		  "parload.stream().",
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)Stream_next,
	.tp_methods = Stream_methods,
	.tp_getset = Stream_getset,
	.tp_new = Stream_new,
};
