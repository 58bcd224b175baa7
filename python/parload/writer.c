/*
 * writer.c - parload.Writer: files in the parload format.
 */
#include "_parload.h"

typedef struct {
	PyObject_HEAD
	parload_writer *w;
	PyThread_type_lock lock;
	parload_file_header h;
	uint64_t written;
	PyObject *name;
	PyObject *path;
} WriterObject;

/* self->h from Writer()'s n, height, width, dtype and crc. */
static int writer_header(WriterObject *self, PyObject *n_obj,
			 PyObject *h_obj, PyObject *w_obj, PyObject *dt_obj,
			 int crc)
{
	PyArray_Descr *dt = NULL;
	size_t n, height, width;
	int pt, rc;

	if (py_size_arg(n_obj, &n, "n") ||
	    py_size_arg(h_obj, &height, "height") ||
	    py_size_arg(w_obj, &width, "width"))
		return -1;
	if (height > UINT32_MAX || width > UINT32_MAX) {
		PyErr_SetString(PyExc_OverflowError,
				"height and width must fit in 32 bits");
		return -1;
	}
	if (!PyArray_DescrConverter(dt_obj, &dt))
		return -1;
	pt = py_dtype_pixel_type(dt, "dtype");
	Py_DECREF(dt);
	if (!pt)
		return -1;
	rc = parload_file_header_init(&self->h, n, (uint32_t)width,
				      (uint32_t)height, pt,
				      crc ? PARLOAD_FLAG_CRC32C : 0);
	if (rc) {
		PyErr_Format(PyExc_ValueError,
			     "%zu views of %zu x %zu %s: %s", n, width, height,
			     parload_pixel_name(pt), parload_strerror(rc));
		return -1;
	}
	return 0;
}

static int Writer_init(WriterObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"path", "n", "height", "width", "dtype",
				 "crc", NULL};
	PyObject *path_obj, *n_obj, *h_obj, *w_obj, *dt_obj;
	parload_writer *w = NULL;
	parload_error err;
	int crc = 0, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|$p:Writer", kwlist,
					 &path_obj, &n_obj, &h_obj, &w_obj,
					 &dt_obj, &crc))
		return -1;
	if (self->w || self->lock) {
		PyErr_SetString(PyExc_RuntimeError,
				"Writer.__init__ called twice");
		return -1;
	}
	if (writer_header(self, n_obj, h_obj, w_obj, dt_obj, crc))
		return -1;
	if (!PyUnicode_FSConverter(path_obj, &self->path))
		return -1;
	self->name = PyOS_FSPath(path_obj);
	self->lock = PyThread_allocate_lock();
	if (!self->name || !self->lock) {
		if (!self->lock)
			PyErr_NoMemory();
		return -1;
	}
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_writer_open(&w, PyBytes_AS_STRING(self->path), &self->h,
				 &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		py_raise_error(rc, &err, self->name);
		return -1;
	}
	self->w = w;
	return 0;
}

static int writer_enter(WriterObject *self)
{
	if (!self->lock) {
		PyErr_SetString(PyExc_ValueError, "Writer is not initialised");
		return -1;
	}
	lock_take(self->lock);
	if (!self->w) {
		PyThread_release_lock(self->lock);
		PyErr_SetString(PyExc_ValueError,
				"I/O operation on a closed Writer");
		return -1;
	}
	return 0;
}

/* A header field from a mapping or a structured record; absent: 0. */
static int header_field(PyObject *obj, const char *key, PyObject **out)
{
	*out = PyMapping_GetItemString(obj, key);
	if (*out)
		return 0;
	if (PyErr_ExceptionMatches(PyExc_KeyError) ||
	    PyErr_ExceptionMatches(PyExc_ValueError) ||
	    PyErr_ExceptionMatches(PyExc_IndexError)) {
		PyErr_Clear();
		return 0;
	}
	return -1;
}

/* None, {"timestamp_ns": t, "angle_deg": a}, a header_dtype record or a
 * (timestamp_ns, angle_deg) pair. */
/* A dict header names only the view header's fields. */
static int header_dict_check(PyObject *obj)
{
	static const char *const known[] = {"timestamp_ns", "angle_deg",
					    "view_index", "crc32c"};
	PyObject *key;
	Py_ssize_t pos = 0;

	while (PyDict_Next(obj, &pos, &key, NULL)) {
		size_t k = 0;

		if (PyUnicode_Check(key))
			while (k < 4 && PyUnicode_CompareWithASCIIString(
						key, known[k]))
				k++;
		if (!PyUnicode_Check(key) || k == 4) {
			PyErr_Format(PyExc_ValueError,
				     "header: unknown field %R "
				     "(timestamp_ns, angle_deg)",
				     key);
			return -1;
		}
	}
	return 0;
}

/* timestamp_ns and angle_deg (either NULL: 0) into *vh. */
static int header_values(PyObject *ts, PyObject *angle,
			 parload_view_header *vh)
{
	if (ts) {
		PyObject *i = PyNumber_Index(ts);

		vh->timestamp_ns = i ? PyLong_AsUnsignedLongLong(i) : 0;
		Py_XDECREF(i);
		if (PyErr_Occurred())
			return -1;
	}
	if (angle) {
		vh->angle_deg = (float)PyFloat_AsDouble(angle);
		if (PyErr_Occurred())
			return -1;
	}
	return 0;
}

static int view_header_from(PyObject *obj, parload_view_header *vh)
{
	PyObject *ts = NULL, *angle = NULL;
	int rc = -1;

	memset(vh, 0, sizeof(*vh));
	if (obj == Py_None)
		return 0;
	if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 2) {
		ts = Py_NewRef(PyTuple_GET_ITEM(obj, 0));
		angle = Py_NewRef(PyTuple_GET_ITEM(obj, 1));
	} else if (PyDict_Check(obj) ||
		   PyObject_TypeCheck(obj, &PyVoidArrType_Type)) {
		if (PyDict_Check(obj) && header_dict_check(obj))
			return -1;
		if (header_field(obj, "timestamp_ns", &ts) ||
		    header_field(obj, "angle_deg", &angle))
			goto out;
	} else {
		PyErr_Format(PyExc_TypeError,
			     "header: expected None, a dict, a header_dtype "
			     "record or a (timestamp_ns, angle_deg) tuple, not "
			     "%.100s",
			     Py_TYPE(obj)->tp_name);
		return -1;
	}
	rc = header_values(ts, angle, vh);
out:
	Py_XDECREF(ts);
	Py_XDECREF(angle);
	return rc;
}

static PyObject *Writer_write(WriterObject *self, PyObject *args,
			      PyObject *kw)
{
	static char *kwlist[] = {"header", "pixels", NULL};
	PyObject *hdr, *px_obj, *arr;
	PyArray_Descr *descr;
	parload_view_header vh;
	parload_error err;
	npy_intp size;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:write", kwlist, &hdr,
					 &px_obj))
		return NULL;
	if (view_header_from(hdr, &vh))
		return NULL;
	descr = PyArray_DescrFromType(py_pixel_typenum(self->h.pixel_type));
	/* Only safe casts: a float array is not silently truncated. */
	arr = PyArray_FromAny(px_obj, descr, 0, 0,
			      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
	if (!arr)
		return NULL;
	size = PyArray_SIZE((PyArrayObject *)arr);
	if ((uint64_t)size * self->h.bytes_per_pixel != self->h.payload_size ||
	    !(PyArray_NDIM((PyArrayObject *)arr) == 1 ||
	      (PyArray_NDIM((PyArrayObject *)arr) == 2 &&
	       PyArray_DIM((PyArrayObject *)arr, 0) == self->h.height))) {
		PyObject *given = PyObject_GetAttrString(arr, "shape");

		if (given)
			PyErr_Format(PyExc_ValueError,
				     "pixels has shape %R; a view is (%u, %u)",
				     given, self->h.height, self->h.width);
		Py_XDECREF(given);
		Py_DECREF(arr);
		return NULL;
	}
	if (writer_enter(self)) {
		Py_DECREF(arr);
		return NULL;
	}
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_writer_add(self->w, &vh,
				PyArray_DATA((PyArrayObject *)arr), &err);
	Py_END_ALLOW_THREADS
	if (rc == 0)
		self->written++;
	PyThread_release_lock(self->lock);
	Py_DECREF(arr);
	if (rc)
		return py_raise_error(rc, &err, self->name);
	Py_RETURN_NONE;
}

static PyObject *Writer_flush(WriterObject *self, PyObject *unused)
{
	parload_error err;
	int rc;

	if (writer_enter(self))
		return NULL;
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_writer_flush(self->w, &err);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	if (rc)
		return py_raise_error(rc, &err, self->name);
	Py_RETURN_NONE;
}

static int writer_close(WriterObject *self, parload_error *err)
{
	parload_writer *w = self->w;
	int rc = 0;

	self->w = NULL;
	if (w) {
		Py_BEGIN_ALLOW_THREADS
		rc = parload_writer_close(w, err);
		Py_END_ALLOW_THREADS
	}
	return rc;
}

static PyObject *Writer_close(WriterObject *self, PyObject *unused)
{
	parload_error err;
	int rc;

	if (!self->lock)
		Py_RETURN_NONE;
	lock_take(self->lock);
	memset(&err, 0, sizeof(err));
	rc = writer_close(self, &err);
	PyThread_release_lock(self->lock);
	if (rc)
		return py_raise_error(rc, &err, self->name);
	Py_RETURN_NONE;
}

static PyObject *Writer_enter_ctx(WriterObject *self, PyObject *unused)
{
	return Py_NewRef((PyObject *)self);
}

/* On an exception in the with block the file is closed and the close's
 * own error (too few views, surely) is not allowed to hide it. */
static PyObject *Writer_exit_ctx(WriterObject *self, PyObject *args)
{
	PyObject *r = Writer_close(self, NULL);

	if (!r && PyTuple_GET_SIZE(args) > 0 &&
	    PyTuple_GET_ITEM(args, 0) != Py_None) {
		PyErr_Clear();
		r = Py_NewRef(Py_None);
	}
	return r;
}

static void Writer_dealloc(WriterObject *self)
{
	parload_error err;

	writer_close(self, &err);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_XDECREF(self->name);
	Py_XDECREF(self->path);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Writer_get_written(WriterObject *self, void *closure)
{
	return PyLong_FromUnsignedLongLong(self->written);
}

static PyObject *Writer_get_header(WriterObject *self, void *closure)
{
	return py_file_header_new(&self->h);
}

static PyObject *Writer_get_closed(WriterObject *self, void *closure)
{
	return PyBool_FromLong(self->w == NULL);
}

static PyMethodDef Writer_methods[] = {
	{"write", (PyCFunction)(void (*)(void))Writer_write,
	 METH_VARARGS | METH_KEYWORDS,
	 "write(header, pixels)\n--\n\n"
	 "Append one view.  header: None, a dict with timestamp_ns and\n"
	 "angle_deg, a header_dtype record or a (timestamp_ns, angle_deg)\n"
	 "tuple; view_index is the view's position and crc32c is computed\n"
	 "when the file stores CRCs.  pixels: an array of shape (height,\n"
	 "width), or flat, of the writer's dtype (other dtypes only where\n"
	 "NumPy casts them safely)."},
	{"flush", (PyCFunction)Writer_flush, METH_NOARGS,
	 "flush()\n--\n\nWrite out what is buffered, so that a reader sees\n"
	 "every view written so far."},
	{"close", (PyCFunction)Writer_close, METH_NOARGS,
	 "close()\n--\n\nFlush and close; parload.Error (PARLOAD_ECOUNT) if\n"
	 "fewer than n views were written."},
	{"__enter__", (PyCFunction)Writer_enter_ctx, METH_NOARGS, NULL},
	{"__exit__", (PyCFunction)Writer_exit_ctx, METH_VARARGS, NULL},
	{NULL},
};

static PyGetSetDef Writer_getset[] = {
	{"written", (getter)Writer_get_written, NULL, "Views written so far.",
	 NULL},
	{"file_header", (getter)Writer_get_header, NULL,
	 "The header the file gets, a FileHeader.", NULL},
	{"closed", (getter)Writer_get_closed, NULL, "Whether close() ran.",
	 NULL},
	{NULL},
};

PyTypeObject WriterType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.Writer",
	.tp_basicsize = sizeof(WriterObject),
	.tp_dealloc = (destructor)Writer_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Writer(path, n, height, width, dtype, *, crc=False)\n--\n\n"
		  "Write a raw image stream of n views of height x width pixels\n"
		  "of dtype (uint8, uint16, int16, uint32, int32, float32 or\n"
		  "float64), with a CRC-32C per view when crc is true.  Call\n"
		  "write() n times, then close(); as a context manager it closes\n"
		  "on exit.",
	.tp_methods = Writer_methods,
	.tp_getset = Writer_getset,
	.tp_init = (initproc)Writer_init,
	.tp_new = PyType_GenericNew,
};
