/*
 * _parload.c - the parload Python module's C part: libparload's loader,
 * datasets, buffers and writer as Python objects whose arrays are NumPy
 * arrays over the library's memory.
 *
 * Zero copy: a Dataset owns its parload_dataset; every array it hands out
 * views that memory and holds the Dataset as its base, so the memory is
 * released when the last of them (or the Dataset itself) goes away.
 * Every load and write runs with the GIL released.
 */
#define PY_SSIZE_T_CLEAN
#include "_parload_api.h"
#include <pythread.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <parload.h>

/* The exception types, the FileHeader type and the header dtype. */
static PyObject *Error;         /* parload.Error(OSError) */
static PyObject *NotFoundError; /* (Error, FileNotFoundError) */
static PyObject *PermissionErr; /* (Error, PermissionError) */
static PyTypeObject *FileHeaderType;
static PyArray_Descr *header_descr;

/* ---------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------- */

static PyObject *u64_or_none(uint64_t v)
{
	if (v == PARLOAD_NONE)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(v);
}

/* Raise parload.Error (or its FileNotFoundError or PermissionError kin)
 * for a failed call; filename is what the caller passed, or NULL. */
static PyObject *raise_error(int code, const parload_error *err,
			     PyObject *filename)
{
	PyObject *type = Error, *exc, *msg, *attr;
	const char *text = err->message[0] ? err->message
					   : parload_strerror(code);
	int sys_errno = err->code == code ? err->sys_errno : 0;
	int ok = 1;

	if (sys_errno == ENOENT)
		type = NotFoundError;
	else if (sys_errno == EACCES || sys_errno == EPERM)
		type = PermissionErr;
	msg = PyUnicode_DecodeFSDefault(text);
	if (!msg)
		return NULL;
	exc = PyObject_CallOneArg(type, msg);
	Py_DECREF(msg);
	if (!exc)
		return NULL;
#define SET_(name, expr)                                                     \
	do {                                                                 \
		attr = (expr);                                               \
		if (!attr || PyObject_SetAttrString(exc, name, attr) < 0)    \
			ok = 0;                                              \
		Py_XDECREF(attr);                                            \
	} while (0)
	SET_("code", PyUnicode_FromString(parload_err_name(code)));
	if (sys_errno) {
		SET_("errno", PyLong_FromLong(sys_errno));
		SET_("strerror", PyUnicode_FromString(strerror(sys_errno)));
	} else {
		SET_("strerror", PyUnicode_FromString(parload_strerror(code)));
	}
	SET_("view", u64_or_none(err->code == code ? err->view : PARLOAD_NONE));
	SET_("offset", u64_or_none(err->code == code ? err->offset
						     : PARLOAD_NONE));
	if (filename)
		SET_("filename", Py_NewRef(filename));
#undef SET_
	if (ok)
		PyErr_SetObject(type, exc);
	Py_DECREF(exc);
	return NULL;
}

/* ---------------------------------------------------------------------
 * Pixel types and NumPy dtypes
 * ------------------------------------------------------------------- */

static int pixel_typenum(int pixel_type)
{
	switch (pixel_type) {
	case PARLOAD_PIXEL_U8: return NPY_UINT8;
	case PARLOAD_PIXEL_U16: return NPY_UINT16;
	case PARLOAD_PIXEL_I16: return NPY_INT16;
	case PARLOAD_PIXEL_U32: return NPY_UINT32;
	case PARLOAD_PIXEL_I32: return NPY_INT32;
	case PARLOAD_PIXEL_F32: return NPY_FLOAT32;
	case PARLOAD_PIXEL_F64: return NPY_FLOAT64;
	}
	return -1;
}

/* The pixel type of a dtype: one of the seven, in the host's (little)
 * byte order; 0 with TypeError otherwise. */
static int dtype_pixel_type(PyArray_Descr *d, const char *what)
{
	static const int types[] = {
		PARLOAD_PIXEL_U8, PARLOAD_PIXEL_U16, PARLOAD_PIXEL_I16,
		PARLOAD_PIXEL_U32, PARLOAD_PIXEL_I32, PARLOAD_PIXEL_F32,
		PARLOAD_PIXEL_F64,
	};

	if (PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d)) {
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (d->type_num == pixel_typenum(types[i]))
				return types[i];
	}
	PyErr_Format(PyExc_TypeError,
		     "%s: dtype %R is not a pixel type (uint8, uint16, int16, "
		     "uint32, int32, float32 or float64, little-endian)",
		     what, (PyObject *)d);
	return 0;
}

/* A new array over memory that base keeps alive (descr and base: new
 * references, stolen).  data NULL (nothing to view) gives a fresh empty
 * array. */
static PyObject *array_over(PyArray_Descr *descr, int nd, npy_intp *dims,
			    npy_intp *strides, void *data, PyObject *base)
{
	PyObject *a;

	if (!data) {
		Py_DECREF(base);
		return PyArray_Zeros(nd, dims, descr, 0);
	}
	a = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides, data,
				 NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE |
					 (strides ? 0 : NPY_ARRAY_C_CONTIGUOUS),
				 NULL);
	if (!a || PyArray_SetBaseObject((PyArrayObject *)a, base) < 0) {
		Py_XDECREF(a);
		if (!a)
			Py_DECREF(base);
		return NULL;
	}
	return a;
}

static PyArray_Descr *new_header_descr(void)
{
	Py_INCREF(header_descr);
	return header_descr;
}

/* ---------------------------------------------------------------------
 * Paths, descriptors and selections from Python arguments
 * ------------------------------------------------------------------- */

/* What a load reads: a path (bytes, in the file system's encoding) or a
 * descriptor, and the object that names it in errors. */
typedef struct source {
	PyObject *path; /* bytes, or NULL for fd */
	int fd;
	PyObject *name; /* for messages and Error.filename */
	PyObject *name_bytes; /* name in the file system's encoding */
} source;

static void source_clear(source *s)
{
	Py_CLEAR(s->path);
	Py_CLEAR(s->name);
	Py_CLEAR(s->name_bytes);
}

/* str, bytes or os.PathLike: a path.  An int: a descriptor.  Anything
 * with fileno(): its descriptor, named by its .name when that is text. */
static int source_parse(PyObject *obj, source *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (PyLong_Check(obj)) {
		s->fd = PyObject_AsFileDescriptor(obj);
		if (s->fd < 0)
			return -1;
		s->name = PyUnicode_FromFormat("fd %d", s->fd);
	} else if (PyUnicode_Check(obj) || PyBytes_Check(obj) ||
		   PyObject_HasAttrString(obj, "__fspath__")) {
		if (!PyUnicode_FSConverter(obj, &s->path))
			return -1;
		s->name = PyOS_FSPath(obj);
		if (!s->name) {
			source_clear(s);
			return -1;
		}
		s->name_bytes = Py_NewRef(s->path);
		return 0;
	} else if (PyObject_HasAttrString(obj, "fileno")) {
		PyObject *n;

		s->fd = PyObject_AsFileDescriptor(obj);
		if (s->fd < 0)
			return -1;
		n = PyObject_GetAttrString(obj, "name");
		if (n && PyUnicode_Check(n)) {
			s->name = n;
		} else {
			Py_XDECREF(n);
			PyErr_Clear();
			s->name = PyUnicode_FromFormat("fd %d", s->fd);
		}
	} else {
		PyErr_Format(PyExc_TypeError,
			     "expected a path (str, bytes or os.PathLike), a "
			     "file descriptor or a file object, not %.100s",
			     Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (!s->name || !PyUnicode_FSConverter(s->name, &s->name_bytes)) {
		source_clear(s);
		return -1;
	}
	return 0;
}

static const char *source_path(const source *s)
{
	return s->path ? PyBytes_AS_STRING(s->path) : NULL;
}

/* ---------------------------------------------------------------------
 * Selections
 * ------------------------------------------------------------------- */

static int slice_part(PyObject *v, int64_t omitted, int64_t *out,
		      const char *what)
{
	long long x;

	if (v == Py_None) {
		*out = omitted;
		return 0;
	}
	x = PyLong_AsLongLong(v);
	if (x == -1 && PyErr_Occurred()) {
		if (PyErr_ExceptionMatches(PyExc_TypeError)) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError,
				     "%s: slice bounds must be integers or "
				     "None, not %.100s",
				     what, Py_TYPE(v)->tp_name);
		}
		return -1;
	}
	if (x == PARLOAD_OMIT) {
		PyErr_Format(PyExc_OverflowError, "%s: %lld is out of range",
			     what, x);
		return -1;
	}
	*out = x;
	return 0;
}

/* None, a slice, a range or a (start, stop) pair: one part of a
 * selection.  A range is absolute: its indices must not be negative. */
static int slice_from(PyObject *obj, parload_slice *out, const char *what)
{
	PyObject *start, *stop, *step;
	int rc;

	out->start = out->stop = PARLOAD_OMIT;
	out->step = 1;
	if (!obj || obj == Py_None)
		return 0;
	if (PySlice_Check(obj)) {
		PySliceObject *sl = (PySliceObject *)obj;

		if (slice_part(sl->start, PARLOAD_OMIT, &out->start, what) ||
		    slice_part(sl->stop, PARLOAD_OMIT, &out->stop, what) ||
		    slice_part(sl->step, 1, &out->step, what))
			return -1;
		return 0;
	}
	if (PyRange_Check(obj)) {
		start = PyObject_GetAttrString(obj, "start");
		stop = PyObject_GetAttrString(obj, "stop");
		step = PyObject_GetAttrString(obj, "step");
		rc = !start || !stop || !step ||
		     slice_part(start, 0, &out->start, what) ||
		     slice_part(stop, 0, &out->stop, what) ||
		     slice_part(step, 1, &out->step, what);
		Py_XDECREF(start);
		Py_XDECREF(stop);
		Py_XDECREF(step);
		if (rc)
			return -1;
		if (out->start < 0 || out->stop < 0) {
			PyErr_Format(PyExc_ValueError,
				     "%s: a range holds absolute indices and "
				     "must not be negative: %R",
				     what, obj);
			return -1;
		}
		return 0;
	}
	if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 2) {
		if (slice_part(PyTuple_GET_ITEM(obj, 0), PARLOAD_OMIT,
			       &out->start, what) ||
		    slice_part(PyTuple_GET_ITEM(obj, 1), PARLOAD_OMIT,
			       &out->stop, what))
			return -1;
		return 0;
	}
	PyErr_Format(PyExc_TypeError,
		     "%s: expected None, a slice, a range or a (start, stop) "
		     "tuple, not %.100s",
		     what, Py_TYPE(obj)->tp_name);
	return -1;
}

/* views=, rows=, cols=, layout= into *sel. */
static int selection_from(PyObject *views, PyObject *rows, PyObject *cols,
			  const char *layout, parload_selection *sel)
{
	int l;

	parload_selection_init(sel);
	if (slice_from(views, &sel->views, "views") ||
	    slice_from(rows, &sel->rows, "rows") ||
	    slice_from(cols, &sel->cols, "cols"))
		return -1;
	if (layout) {
		l = parload_layout_from_name(layout);
		if (l < 0) {
			PyErr_Format(PyExc_ValueError,
				     "layout: \"%s\" is not a layout (views "
				     "or sinograms)",
				     layout);
			return -1;
		}
		sel->layout = (parload_layout)l;
	}
	return 0;
}

/* The pixel array's shape for a resolved selection. */
static void shape_dims(const parload_shape *s, npy_intp dims[3])
{
	if (s->layout == PARLOAD_LAYOUT_SINOGRAMS) {
		dims[0] = s->rows;
		dims[1] = (npy_intp)s->views;
	} else {
		dims[0] = (npy_intp)s->views;
		dims[1] = s->rows;
	}
	dims[2] = s->cols;
}

/* ---------------------------------------------------------------------
 * FileHeader
 * ------------------------------------------------------------------- */

static PyStructSequence_Field file_header_fields[] = {
	{"version_major", "format major version"},
	{"version_minor", "format minor version"},
	{"file_header_size", "bytes of the file header (64)"},
	{"view_header_size", "bytes of each view header (32)"},
	{"view_count", "views in the file"},
	{"width", "pixels per detector row"},
	{"height", "detector rows per view"},
	{"pixel_type", "pixel type name: u8, u16, i16, u32, i32, f32 or f64"},
	{"bytes_per_pixel", "bytes per pixel"},
	{"flags", "format flags (1: each view header holds a CRC-32C)"},
	{"payload_size", "pixel bytes per view"},
	{"dtype", "the NumPy dtype of the pixels"},
	{NULL, NULL},
};

static PyStructSequence_Desc file_header_desc = {
	"parload.FileHeader",
	"The 64-byte header of a raw image stream (docs/FORMAT.md), as a named\n"
	"tuple.  view_count is the number of complete views loaded when a\n"
	"truncated file was allowed.",
	file_header_fields,
	12,
};

/* Set the next item i of the struct sequence t to expr (a new reference
 * held in v), or free t and return NULL when expr fails. */
#define PUT_(expr)                                                           \
	do {                                                                 \
		if (!(v = (expr))) {                                         \
			Py_DECREF(t);                                        \
			return NULL;                                         \
		}                                                            \
		PyStructSequence_SET_ITEM(t, i++, v);                        \
	} while (0)

static PyObject *file_header_new(const parload_file_header *h)
{
	PyObject *t = PyStructSequence_New(FileHeaderType), *v;
	const char *name = parload_pixel_name(h->pixel_type);
	int typenum = pixel_typenum(h->pixel_type);
	Py_ssize_t i = 0;

	if (!t)
		return NULL;
	PUT_(PyLong_FromUnsignedLong(h->version_major));
	PUT_(PyLong_FromUnsignedLong(h->version_minor));
	PUT_(PyLong_FromUnsignedLong(h->file_header_size));
	PUT_(PyLong_FromUnsignedLong(h->view_header_size));
	PUT_(PyLong_FromUnsignedLongLong(h->view_count));
	PUT_(PyLong_FromUnsignedLong(h->width));
	PUT_(PyLong_FromUnsignedLong(h->height));
	PUT_(name ? PyUnicode_FromString(name) : PyLong_FromLong(h->pixel_type));
	PUT_(PyLong_FromUnsignedLong(h->bytes_per_pixel));
	PUT_(PyLong_FromUnsignedLong(h->flags));
	PUT_(PyLong_FromUnsignedLongLong(h->payload_size));
	PUT_(typenum >= 0 ? (PyObject *)PyArray_DescrFromType(typenum)
			  : Py_NewRef(Py_None));
	return t;
}

/* ---------------------------------------------------------------------
 * Dataset
 * ------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	parload_dataset ds;
	/* load_into(): the caller's arrays, which ds points into */
	PyObject *pixels;
	PyObject *headers;
	PyObject *name;
	PyObject *weakrefs;
} DatasetObject;

static PyTypeObject DatasetType;

static void Dataset_dealloc(DatasetObject *self)
{
	if (self->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)self);
	parload_dataset_free(&self->ds);
	Py_XDECREF(self->pixels);
	Py_XDECREF(self->headers);
	Py_XDECREF(self->name);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A Dataset that takes over *ds (zeroed here). */
static PyObject *dataset_wrap(parload_dataset *ds, PyObject *name,
			      PyObject *pixels, PyObject *headers)
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
	self->name = Py_XNewRef(name);
	self->weakrefs = NULL;
	return (PyObject *)self;
}

static PyObject *Dataset_pixels(DatasetObject *self, void *closure)
{
	npy_intp dims[3];

	if (self->pixels)
		return Py_NewRef(self->pixels);
	shape_dims(&self->ds.shape, dims);
	return array_over(PyArray_DescrFromType(
				  pixel_typenum(self->ds.file_header.pixel_type)),
			  3, dims, NULL, self->ds.pixels,
			  Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_headers(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.shape.views;

	if (self->headers)
		return Py_NewRef(self->headers);
	return array_over(new_header_descr(), 1, &n, NULL, self->ds.headers,
			  Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_angles(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.shape.views;
	npy_intp stride = sizeof(parload_view_header);
	char *base = (char *)self->ds.headers;
	PyObject *owner = self->headers ? self->headers : (PyObject *)self;

	return array_over(PyArray_DescrFromType(NPY_FLOAT32), 1, &n, &stride,
			  base ? base + offsetof(parload_view_header, angle_deg)
			       : NULL,
			  Py_NewRef(owner));
}

static PyObject *Dataset_bad_views(DatasetObject *self, void *closure)
{
	npy_intp n = (npy_intp)self->ds.bad_view_count;

	return array_over(PyArray_DescrFromType(NPY_UINT64), 1, &n, NULL,
			  self->ds.bad_views, Py_NewRef((PyObject *)self));
}

static PyObject *Dataset_file_header(DatasetObject *self, void *closure)
{
	return file_header_new(&self->ds.file_header);
}

static PyObject *stats_dict(const parload_stats *st)
{
	const char *strategy = parload_strategy_name(st->strategy);

	return Py_BuildValue("{s:d,s:K,s:K,s:I,s:s,s:K,s:K}", "seconds",
			     st->seconds, "bytes_read",
			     (unsigned long long)st->bytes_read, "read_calls",
			     (unsigned long long)st->read_calls, "threads",
			     st->threads, "strategy",
			     strategy ? strategy : "unknown", "crc_checked",
			     (unsigned long long)st->crc_checked,
			     "declared_views",
			     (unsigned long long)st->declared_views);
}

static PyObject *Dataset_stats(DatasetObject *self, void *closure)
{
	return stats_dict(&self->ds.stats);
}

static PyObject *range3(uint64_t start, uint64_t n, uint64_t step)
{
	return PyObject_CallFunction((PyObject *)&PyRange_Type, "KKK",
				     (unsigned long long)start,
				     (unsigned long long)(start + n * step),
				     (unsigned long long)step);
}

static PyObject *Dataset_views(DatasetObject *self, void *closure)
{
	const parload_shape *s = &self->ds.shape;

	return range3(s->view_start, s->views, s->view_step ? s->view_step : 1);
}

static PyObject *Dataset_rows(DatasetObject *self, void *closure)
{
	return range3(self->ds.shape.row_start, self->ds.shape.rows, 1);
}

static PyObject *Dataset_cols(DatasetObject *self, void *closure)
{
	return range3(self->ds.shape.col_start, self->ds.shape.cols, 1);
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
	const char *px = parload_pixel_name(self->ds.file_header.pixel_type);

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
	 "headers['angle_deg']: a float32 view (strided, no copy).", NULL},
	{"bad_views", (getter)Dataset_bad_views, NULL,
	 "With verify and keep_going: the views (file indices) whose payload\n"
	 "does not match its CRC-32C, as a uint64 ndarray (empty if none).",
	 NULL},
	{"file_header", (getter)Dataset_file_header, NULL,
	 "The file's header, a FileHeader named tuple.", NULL},
	{"stats", (getter)Dataset_stats, NULL,
	 "What the load did, a dict: seconds (from opening the file until the\n"
	 "dataset was complete), bytes_read, read_calls, threads, strategy,\n"
	 "crc_checked and declared_views (the header's view count).",
	 NULL},
	{"views", (getter)Dataset_views, NULL,
	 "The file indices of the loaded views, a range.", NULL},
	{"rows", (getter)Dataset_rows, NULL,
	 "The detector rows loaded, a range.", NULL},
	{"cols", (getter)Dataset_cols, NULL, "The columns loaded, a range.",
	 NULL},
	{"layout", (getter)Dataset_layout, NULL,
	 "The pixels' layout: \"views\" or \"sinograms\".", NULL},
	{NULL},
};

static PySequenceMethods Dataset_as_sequence = {
	.sq_length = (lenfunc)Dataset_len,
};

static PyTypeObject DatasetType = {
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
};

/* ---------------------------------------------------------------------
 * A lock for objects that serve one call at a time (a loader, a writer).
 * Waiting for it releases the GIL.
 * ------------------------------------------------------------------- */

static void lock_take(PyThread_type_lock lock)
{
	if (!PyThread_acquire_lock(lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
}

/* ---------------------------------------------------------------------
 * Loader
 * ------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	parload_loader *loader;
	PyThread_type_lock lock;
	pid_t pid; /* the process that made the loader and owns its threads */
	unsigned flags;
	parload_strategy strategy;
} LoaderObject;

static PyTypeObject LoaderType;

static int name_arg(const char *name, int (*from_name)(const char *),
		    const char *(*to_name)(int), const char *what)
{
	int v = from_name(name);

	if (v < 0) {
		PyObject *names = PyList_New(0);

		for (int i = 0; names && to_name(i); i++) {
			PyObject *s = PyUnicode_FromString(to_name(i));

			if (!s || PyList_Append(names, s) < 0) {
				Py_XDECREF(s);
				Py_CLEAR(names);
				break;
			}
			Py_DECREF(s);
		}
		if (names) {
			PyErr_Format(PyExc_ValueError,
				     "%s: \"%s\" is unknown; one of %R", what,
				     name, names);
			Py_DECREF(names);
		}
	}
	return v;
}

static int size_arg(PyObject *obj, size_t *out, const char *what)
{
	unsigned long long v;

	if (!PyLong_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s",
			     what, Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (_PyLong_Sign(obj) < 0) {
		PyErr_Format(PyExc_ValueError, "%s must not be negative: %R",
			     what, obj);
		return -1;
	}
	v = PyLong_AsUnsignedLongLong(obj);
	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return -1;
	if (v > SIZE_MAX) {
		PyErr_Format(PyExc_OverflowError, "%s is too large: %R", what,
			     obj);
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

/* parload_options.flags from the keyword arguments of the same names. */
static unsigned option_flags(int verify, int keep_going, int allow_truncated,
			     int numa_bind, int hugepages)
{
	return (verify ? PARLOAD_OPT_VERIFY_CRC : 0) |
	       (keep_going ? PARLOAD_OPT_KEEP_GOING : 0) |
	       (allow_truncated ? PARLOAD_OPT_ALLOW_TRUNCATED : 0) |
	       (numa_bind ? 0 : PARLOAD_OPT_NO_BIND) |
	       (hugepages ? 0 : PARLOAD_OPT_NO_HUGEPAGES);
}

static int Loader_init(LoaderObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"threads", "strategy", "io", "buffer_size",
				 "max_read", "verify", "keep_going",
				 "allow_truncated", "numa_bind", "hugepages",
				 NULL};
	PyObject *threads_obj = NULL, *buffer = Py_None, *max_read = NULL;
	const char *strategy = "parallel", *io = "posix";
	int verify = 0, keep_going = 0, truncated = 0, bind = 1, huge = 1;
	parload_options opts;
	parload_error err;
	parload_loader *loader = NULL;
	size_t threads = 0;
	int rc, v;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OssOOppppp:Loader",
					 kwlist, &threads_obj, &strategy, &io,
					 &buffer, &max_read, &verify,
					 &keep_going, &truncated, &bind, &huge))
		return -1;
	if (self->loader) {
		PyErr_SetString(PyExc_RuntimeError,
				"Loader.__init__ called twice");
		return -1;
	}
	parload_options_init(&opts);
	if (threads_obj && size_arg(threads_obj, &threads, "threads"))
		return -1;
	if (threads > UINT_MAX) {
		PyErr_SetString(PyExc_OverflowError, "threads is too large");
		return -1;
	}
	opts.threads = (unsigned)threads;
	if ((v = name_arg(strategy, parload_strategy_from_name,
			  parload_strategy_name, "strategy")) < 0)
		return -1;
	opts.strategy = (parload_strategy)v;
	if ((v = name_arg(io, parload_io_from_name, parload_io_name, "io")) < 0)
		return -1;
	opts.io = (parload_io)v;
	if (buffer != Py_None && size_arg(buffer, &opts.buffer_size,
					  "buffer_size"))
		return -1;
	if (max_read && size_arg(max_read, &opts.max_read, "max_read"))
		return -1;
	opts.flags = option_flags(verify, keep_going, truncated, bind, huge);
	self->lock = PyThread_allocate_lock();
	if (!self->lock) {
		PyErr_NoMemory();
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = parload_loader_new(&loader, &opts, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		raise_error(rc, &err, NULL);
		return -1;
	}
	self->loader = loader;
	self->pid = getpid();
	self->flags = opts.flags;
	self->strategy = opts.strategy;
	return 0;
}

static void loader_release(LoaderObject *self)
{
	parload_loader *l = self->loader;

	self->loader = NULL;
	if (!l)
		return;
	/* In a child of fork() the workers do not exist: joining them
	 * could hang, so the loader's memory is left alone. */
	if (self->pid != getpid())
		return;
	Py_BEGIN_ALLOW_THREADS
	parload_loader_free(l);
	Py_END_ALLOW_THREADS
}

static void Loader_dealloc(LoaderObject *self)
{
	loader_release(self);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Take the loader for one call: 0, or -1 with an exception. */
static int loader_enter(LoaderObject *self)
{
	if (!self->lock) {
		PyErr_SetString(PyExc_ValueError, "Loader is not initialised");
		return -1;
	}
	lock_take(self->lock);
	if (!self->loader) {
		PyThread_release_lock(self->lock);
		PyErr_SetString(PyExc_ValueError,
				"I/O operation on a closed Loader");
		return -1;
	}
	if (self->pid != getpid()) {
		PyThread_release_lock(self->lock);
		PyErr_SetString(PyExc_RuntimeError,
				"this Loader was made before fork(): its "
				"threads are not in this process; make a new "
				"Loader in the child");
		return -1;
	}
	return 0;
}

/* The thread Python runs signal handlers on. */
static unsigned long main_thread;

/* Pixel bytes between two looks for Ctrl-C during a load. */
#define CANCEL_BATCH_BYTES ((uint64_t)32 << 20)

/* on_batch of a load made on the main thread: a signal that came during
 * the load (Ctrl-C) runs its Python handler here, and the exception the
 * handler raises (KeyboardInterrupt) cancels the load and stays set for
 * the caller. */
static int batch_check_signals(const parload_batch *batch, void *arg)
{
	PyGILState_STATE g = PyGILState_Ensure();
	int stop = PyErr_CheckSignals() < 0;

	PyGILState_Release(g);
	return stop;
}

/* One load.  The dataset, on success, still has to be wrapped. */
static int loader_run(LoaderObject *self, const source *src,
		      const parload_selection *sel, const parload_buffers *into,
		      parload_dataset *out)
{
	parload_request req;
	parload_error err;
	int rc;

	parload_request_init(&req);
	req.path = source_path(src);
	req.fd = src->fd;
	req.name = src->path ? NULL : PyBytes_AS_STRING(src->name_bytes);
	req.selection = sel;
	req.into = into;
	/* Batches come from the parallel strategy in view layout.  Each is a
	 * pass of every worker: large ones keep their cost out of sight and
	 * still end a load within a few hundredths of a second. */
	if (self->strategy == PARLOAD_STRATEGY_PARALLEL &&
	    sel->layout == PARLOAD_LAYOUT_VIEWS &&
	    PyThread_get_thread_ident() == main_thread) {
		req.on_batch = batch_check_signals;
		req.batch_bytes = CANCEL_BATCH_BYTES;
	}
	memset(&err, 0, sizeof(err));
	if (loader_enter(self))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	rc = parload_loader_run(self->loader, &req, out, &err);
	Py_END_ALLOW_THREADS
	PyThread_release_lock(self->lock);
	/* Ctrl-C during the load: its exception cancelled the load, or the
	 * handler runs now, after the last batch. */
	if (PyErr_Occurred() || PyErr_CheckSignals() < 0) {
		if (rc == 0)
			parload_dataset_free(out);
		return -1;
	}
	if (rc) {
		raise_error(rc, &err, src->name);
		return -1;
	}
	return 0;
}

#define SELECT_KWARGS "views", "rows", "cols", "layout"

static PyObject *Loader_load(LoaderObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"source", SELECT_KWARGS, NULL};
	PyObject *obj, *views = Py_None, *rows = Py_None, *cols = Py_None;
	const char *layout = NULL;
	parload_selection sel;
	parload_dataset ds;
	source src;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOz:load", kwlist, &obj,
					 &views, &rows, &cols, &layout))
		return NULL;
	if (selection_from(views, rows, cols, layout, &sel) ||
	    source_parse(obj, &src))
		return NULL;
	memset(&ds, 0, sizeof(ds));
	rc = loader_run(self, &src, &sel, NULL, &ds);
	obj = rc ? NULL : dataset_wrap(&ds, src.name, NULL, NULL);
	source_clear(&src);
	return obj;
}

/* The file header of a source without moving a descriptor's offset. */
static int source_header(const source *src, parload_file_header *h)
{
	parload_error err;
	unsigned char buf[PARLOAD_FILE_HEADER_SIZE];
	ssize_t n;
	int rc;

	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	if (src->path) {
		rc = parload_read_header(source_path(src), h, &err);
	} else {
		n = pread(src->fd, buf, sizeof(buf), 0);
		rc = n < 0 ? -1 : parload_parse_file_header(
					  buf, (size_t)n,
					  PyBytes_AS_STRING(src->name_bytes),
					  h, &err);
	}
	Py_END_ALLOW_THREADS
	if (rc == -1 && !src->path) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	if (rc) {
		raise_error(rc, &err, src->name);
		return -1;
	}
	return 0;
}

/* Resolve sel against h; the resolver knows no file, so its message gets
 * the file's name (path: in the file system's encoding). */
static int resolve_shape(const parload_file_header *h,
			 const parload_selection *sel, const char *path,
			 PyObject *name, parload_shape *shape)
{
	char text[2 * sizeof(((parload_error *)0)->message)];
	parload_error err;
	size_t n;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = parload_selection_resolve(h, sel, shape, &err);
	if (rc) {
		snprintf(text, sizeof(text), "%s: %s", path, err.message);
		n = strlen(text);
		if (n >= sizeof(err.message))
			n = sizeof(err.message) - 1;
		memcpy(err.message, text, n);
		err.message[n] = '\0';
		raise_error(rc, &err, name);
		return -1;
	}
	return 0;
}

/* The header of a source and a selection resolved against it. */
static int source_shape(const source *src, const parload_selection *sel,
			parload_file_header *h, parload_shape *shape)
{
	if (source_header(src, h))
		return -1;
	return resolve_shape(h, sel, PyBytes_AS_STRING(src->name_bytes),
			     src->name, shape);
}

/* Check a caller's array for load_into(): an ndarray of exactly this
 * dtype and shape, C-contiguous, aligned and writeable. */
static int check_into(PyObject *obj, PyArray_Descr *want, int nd,
		      const npy_intp *dims, const char *what)
{
	PyArrayObject *a = (PyArrayObject *)obj;
	PyObject *shape;

	if (!PyArray_Check(obj)) {
		PyErr_Format(PyExc_TypeError,
			     "%s must be a numpy.ndarray, not %.100s", what,
			     Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (!PyArray_EquivTypes(PyArray_DESCR(a), want)) {
		PyErr_Format(PyExc_TypeError,
			     "%s has dtype %R; the file needs %R", what,
			     (PyObject *)PyArray_DESCR(a), (PyObject *)want);
		return -1;
	}
	if (PyArray_NDIM(a) != nd ||
	    memcmp(PyArray_DIMS(a), dims, nd * sizeof(npy_intp)) != 0) {
		shape = PyArray_IntTupleFromIntp(nd, (npy_intp *)dims);
		if (shape) {
			PyObject *given = PyObject_GetAttrString(obj, "shape");

			if (given)
				PyErr_Format(PyExc_ValueError,
					     "%s has shape %R; the file needs %R",
					     what, given, shape);
			Py_XDECREF(given);
			Py_DECREF(shape);
		}
		return -1;
	}
	if (!PyArray_IS_C_CONTIGUOUS(a)) {
		PyErr_Format(PyExc_ValueError, "%s is not C-contiguous", what);
		return -1;
	}
	if (!PyArray_ISWRITEABLE(a)) {
		PyErr_Format(PyExc_ValueError, "%s is read-only", what);
		return -1;
	}
	if (!PyArray_ISALIGNED(a)) {
		PyErr_Format(PyExc_ValueError, "%s is not aligned", what);
		return -1;
	}
	return 0;
}

static PyObject *Loader_load_into(LoaderObject *self, PyObject *args,
				  PyObject *kw)
{
	static char *kwlist[] = {"source", "pixels", "headers", SELECT_KWARGS,
				 NULL};
	PyObject *obj, *pixels, *headers = Py_None, *result = NULL;
	PyObject *views = Py_None, *rows = Py_None, *cols = Py_None;
	const char *layout = NULL;
	PyArray_Descr *px = NULL;
	parload_selection sel;
	parload_file_header h;
	parload_shape shape;
	parload_buffers into;
	parload_dataset ds;
	npy_intp dims[3], n;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOz:load_into",
					 kwlist, &obj, &pixels, &headers,
					 &views, &rows, &cols, &layout))
		return NULL;
	if (selection_from(views, rows, cols, layout, &sel) ||
	    source_parse(obj, &src))
		return NULL;
	if (source_shape(&src, &sel, &h, &shape))
		goto out;
	shape_dims(&shape, dims);
	n = (npy_intp)shape.views;
	px = PyArray_DescrFromType(pixel_typenum(h.pixel_type));
	if (check_into(pixels, px, 3, dims, "pixels"))
		goto out;
	if (headers == Py_None) {
		Py_INCREF(header_descr);
		headers = PyArray_Empty(1, &n, header_descr, 0);
		if (!headers)
			goto out;
	} else {
		if (check_into(headers, header_descr, 1, &n, "headers"))
			goto out;
		Py_INCREF(headers);
	}
	into.pixels = PyArray_DATA((PyArrayObject *)pixels);
	into.pixels_size = PyArray_NBYTES((PyArrayObject *)pixels);
	into.headers = PyArray_DATA((PyArrayObject *)headers);
	into.headers_size = PyArray_NBYTES((PyArrayObject *)headers);
	memset(&ds, 0, sizeof(ds));
	if (loader_run(self, &src, &sel, &into, &ds) == 0)
		result = dataset_wrap(&ds, src.name, pixels, headers);
	Py_DECREF(headers);
out:
	Py_XDECREF(px);
	source_clear(&src);
	return result;
}

static PyObject *Loader_close(LoaderObject *self, PyObject *unused)
{
	if (self->lock) {
		lock_take(self->lock);
		loader_release(self);
		PyThread_release_lock(self->lock);
	}
	Py_RETURN_NONE;
}

static PyObject *Loader_enter_ctx(LoaderObject *self, PyObject *unused)
{
	return Py_NewRef((PyObject *)self);
}

static PyObject *Loader_exit_ctx(LoaderObject *self, PyObject *args)
{
	return Loader_close(self, NULL);
}

static PyObject *Loader_get_threads(LoaderObject *self, void *closure)
{
	if (!self->loader)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLong(parload_loader_threads(self->loader));
}

static PyObject *Loader_get_strategy(LoaderObject *self, void *closure)
{
	return PyUnicode_FromString(parload_strategy_name(self->strategy));
}

static PyObject *Loader_get_closed(LoaderObject *self, void *closure)
{
	return PyBool_FromLong(self->loader == NULL);
}

static PyMethodDef Loader_methods[] = {
	{"load", (PyCFunction)(void (*)(void))Loader_load,
	 METH_VARARGS | METH_KEYWORDS,
	 "load(source, *, views=None, rows=None, cols=None, layout=None)\n"
	 "--\n\n"
	 "Load source and return a Dataset.\n\n"
	 "source is a path (str, bytes, os.PathLike), a file descriptor or a\n"
	 "file object (a regular file is read with the loader's strategy, a\n"
	 "pipe or socket as a stream).  views takes a slice or a range of\n"
	 "file views; rows and cols a slice or a (start, stop) pair of\n"
	 "detector rows and columns (no step).  layout is \"views\" (pixels\n"
	 "[view, row, col]) or \"sinograms\" ([row, view, col]).  Slices\n"
	 "follow Python's meaning, except that one reaching past the end or\n"
	 "selecting nothing raises parload.Error (PARLOAD_ESELECT).  Any\n"
	 "selection but the whole file needs the parallel strategy, and CRCs\n"
	 "can be verified only for whole rows and columns (PARLOAD_ENOTSUP).\n"
	 "The GIL is released while the file loads.  Ctrl-C raises\n"
	 "KeyboardInterrupt: a load on the main thread with the parallel\n"
	 "strategy in view layout stops at its next batch (about 16 MiB),\n"
	 "any other once it returns."},
	{"load_into", (PyCFunction)(void (*)(void))Loader_load_into,
	 METH_VARARGS | METH_KEYWORDS,
	 "load_into(source, pixels, headers=None, *, views=None, rows=None,\n"
	 "          cols=None, layout=None)\n"
	 "--\n\n"
	 "Load source into the caller's arrays and return a Dataset whose\n"
	 "pixels and headers are those arrays.\n\n"
	 "pixels must be a C-contiguous, writeable ndarray of the file's\n"
	 "pixel dtype and the selection's shape; headers (made when None) one\n"
	 "of header_dtype and shape (views,).  empty_like_file() makes both.\n"
	 "Anything else raises TypeError (wrong type or dtype) or ValueError\n"
	 "(shape, layout in memory), naming what is wrong."},
	{"close", (PyCFunction)Loader_close, METH_NOARGS,
	 "close()\n--\n\nStop the threads and free the loader.  Datasets\n"
	 "already loaded stay valid."},
	{"__enter__", (PyCFunction)Loader_enter_ctx, METH_NOARGS, NULL},
	{"__exit__", (PyCFunction)Loader_exit_ctx, METH_VARARGS, NULL},
	{NULL},
};

static PyGetSetDef Loader_getset[] = {
	{"threads", (getter)Loader_get_threads, NULL,
	 "The number of worker threads (None once closed).", NULL},
	{"strategy", (getter)Loader_get_strategy, NULL,
	 "The strategy's name.", NULL},
	{"closed", (getter)Loader_get_closed, NULL, "Whether close() ran.",
	 NULL},
	{NULL},
};

static PyTypeObject LoaderType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.Loader",
	.tp_basicsize = sizeof(LoaderObject),
	.tp_dealloc = (destructor)Loader_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc =
		"Loader(*, threads=0, strategy='parallel', io='posix',\n"
		"       buffer_size=None, max_read=0, verify=False,\n"
		"       keep_going=False, allow_truncated=False, numa_bind=True,\n"
		"       hugepages=True)\n"
		"--\n\n"
		"A reusable loader: it discovers the machine and starts its\n"
		"threads once, for programs that load many files.  A context\n"
		"manager (close() on exit).\n\n"
		"threads: worker threads, 0 for one per core.  strategy: one of\n"
		"strategies().  io and buffer_size (None: the I/O API's own\n"
		"buffering, 0: none): the single-threaded strategies' reads.\n"
		"max_read: the largest read request, 0 for 8 MiB.  verify:\n"
		"check every payload's CRC-32C; keep_going: list bad views in\n"
		"Dataset.bad_views instead of failing.  allow_truncated: load\n"
		"the complete views of a file cut short.  numa_bind and\n"
		"hugepages: NUMA binding and transparent huge pages.\n\n"
		"One loader runs one load at a time: a second thread's load\n"
		"waits for the first (use one Loader per thread to load\n"
		"concurrently).  A Loader must not be used in a child of\n"
		"fork(): its threads are not there (it raises RuntimeError).",
	.tp_methods = Loader_methods,
	.tp_getset = Loader_getset,
	.tp_init = (initproc)Loader_init,
	.tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------
 * Module functions: headers, buffers, names
 * ------------------------------------------------------------------- */

static PyObject *mod_read_header(PyObject *mod, PyObject *arg)
{
	parload_file_header h;
	source src;
	PyObject *r;

	if (source_parse(arg, &src))
		return NULL;
	r = source_header(&src, &h) ? NULL : file_header_new(&h);
	source_clear(&src);
	return r;
}

static void buffers_capsule_free(PyObject *cap)
{
	parload_buffers *b = PyCapsule_GetPointer(cap, "parload.buffers");

	if (b) {
		parload_buffers_free(b);
		PyMem_Free(b);
	}
}

static PyObject *mod_empty_like_file(PyObject *mod, PyObject *args,
				     PyObject *kw)
{
	static char *kwlist[] = {"source", SELECT_KWARGS, "hugepages", NULL};
	PyObject *obj, *views = Py_None, *rows = Py_None, *cols = Py_None;
	PyObject *cap = NULL, *px = NULL, *hd = NULL, *r = NULL;
	const char *layout = NULL;
	int huge = 1, rc;
	parload_selection sel;
	parload_file_header h;
	parload_shape shape;
	parload_buffers *b;
	parload_error err;
	npy_intp dims[3], n;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOzp:empty_like_file",
					 kwlist, &obj, &views, &rows, &cols,
					 &layout, &huge))
		return NULL;
	if (selection_from(views, rows, cols, layout, &sel) ||
	    source_parse(obj, &src))
		return NULL;
	if (source_shape(&src, &sel, &h, &shape))
		goto out;
	b = PyMem_Calloc(1, sizeof(*b));
	if (!b) {
		PyErr_NoMemory();
		goto out;
	}
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_buffers_alloc_select(b, &h, &sel,
					  huge ? 0 : PARLOAD_OPT_NO_HUGEPAGES,
					  &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		PyMem_Free(b);
		raise_error(rc, &err, src.name);
		goto out;
	}
	cap = PyCapsule_New(b, "parload.buffers", buffers_capsule_free);
	if (!cap) {
		parload_buffers_free(b);
		PyMem_Free(b);
		goto out;
	}
	shape_dims(&shape, dims);
	n = (npy_intp)shape.views;
	px = array_over(PyArray_DescrFromType(pixel_typenum(h.pixel_type)), 3,
			dims, NULL, b->pixels, Py_NewRef(cap));
	hd = array_over(new_header_descr(), 1, &n, NULL, b->headers, Py_NewRef(cap));
	if (px && hd)
		r = PyTuple_Pack(2, px, hd);
out:
	Py_XDECREF(px);
	Py_XDECREF(hd);
	Py_XDECREF(cap);
	source_clear(&src);
	return r;
}

static PyObject *names_tuple(const char *(*to_name)(int))
{
	PyObject *t = PyTuple_New(0);

	for (int i = 0; t && to_name(i); i++) {
		PyObject *s = PyUnicode_FromString(to_name(i));

		if (!s || _PyTuple_Resize(&t, i + 1) < 0) {
			Py_XDECREF(s);
			Py_XDECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

static PyObject *mod_strategies(PyObject *mod, PyObject *unused)
{
	return names_tuple(parload_strategy_name);
}

static PyObject *mod_io_names(PyObject *mod, PyObject *unused)
{
	return names_tuple(parload_io_name);
}

static PyObject *mod_layouts(PyObject *mod, PyObject *unused)
{
	return names_tuple(parload_layout_name);
}

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
	PyObject *name;
	PyObject *path;       /* bytes */
	PyObject *buffers;    /* capsule of the load's memory, or NULL */
	PyObject *stats;      /* the load's stats once it completed */
	PyObject *bad_views;  /* tuple, once it completed */
	parload_selection sel; /* the request's, read by the load's thread */
	parload_shape shape;
	int typenum;
	int copy;
} StreamObject;

static PyTypeObject StreamType;
static PyTypeObject *BatchType;

static PyStructSequence_Field batch_fields[] = {
	{"first", "the batch's first view, counted in the selection"},
	{"count", "views in the batch"},
	{"views", "the file indices of the batch's views, a range"},
	{"headers", "count view headers, an ndarray of header_dtype"},
	{"pixels", "an ndarray of shape (count, rows, cols)"},
	{"views_done", "views delivered so far, this batch included"},
	{"views_total", "views the stream delivers in all"},
	{"bytes_done", "file bytes delivered so far, this batch included"},
	{"bytes_total", "file bytes the stream delivers in all"},
	{"seconds", "seconds since the load began"},
	{NULL, NULL},
};

static PyStructSequence_Desc batch_desc = {
	"parload.Batch",
	"One batch of views from stream(), in file order, each view completely\n"
	"read (and with verify, checked).  Without a window, headers and pixels\n"
	"view memory that lives as long as they do; with a window they are\n"
	"read-only and valid only until the next batch or the stream's close()\n"
	"(copy=True gives independent copies).",
	batch_fields,
	10,
};

/* Seconds to sleep between looks at a followed file still too short for
 * its header, as batch.c does for views. */
static void nap_ms(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The file header of a stream's file, before the load: the declared
 * views, for the buffers and the shape.  Following, a file still shorter
 * than its header is waited for (until timeout seconds pass without
 * growth; Ctrl-C stops the wait).  The header is validated; the file's
 * size is the load's business. */
static int stream_header(const char *path, PyObject *name, int follow,
			 double timeout, parload_file_header *h)
{
	unsigned char buf[PARLOAD_FILE_HEADER_SIZE];
	double quiet = 0, pause = 1;
	off_t seen = -1;
	parload_error err;
	struct stat st;
	ssize_t n = 0;
	int fd, rc = 0, e = 0;

	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = errno;
	while (fd >= 0 && (rc = fstat(fd, &st)) == 0 &&
	       st.st_size < PARLOAD_FILE_HEADER_SIZE && follow &&
	       quiet < timeout) {
		if (st.st_size != seen) {
			seen = st.st_size;
			quiet = 0;
			pause = 1;
		}
		nap_ms(pause);
		quiet += pause / 1e3;
		pause = pause < 10 ? pause * 2 : 10;
		Py_BLOCK_THREADS
		rc = PyErr_CheckSignals();
		Py_UNBLOCK_THREADS
		if (rc < 0)
			break;
	}
	if (fd >= 0 && rc == 0 && st.st_size >= PARLOAD_FILE_HEADER_SIZE) {
		n = pread(fd, buf, sizeof(buf), 0);
		e = errno;
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0 && n == (ssize_t)sizeof(buf))
		rc = parload_parse_file_header(buf, sizeof(buf), path, h, &err);
	else if (rc == 0)
		/* Missing, unreadable or short: the library says which. */
		rc = parload_read_header(path, h, &err);
	Py_END_ALLOW_THREADS
	(void)e;
	if (PyErr_Occurred())
		return -1;
	if (rc) {
		raise_error(rc, &err, name);
		return -1;
	}
	return 0;
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
	Py_XDECREF(self->name);
	Py_XDECREF(self->path);
	Py_XDECREF(self->buffers);
	Py_XDECREF(self->stats);
	Py_XDECREF(self->bad_views);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int u64_arg(PyObject *obj, uint64_t *out, const char *what)
{
	size_t v = 0;

	if (obj && obj != Py_None && size_arg(obj, &v, what))
		return -1;
	*out = v;
	return 0;
}

static PyObject *Stream_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"loader", "path", "batch_views",
				 "batch_bytes", "window", "follow", "timeout",
				 "views", "rows", "cols", "copy", NULL};
	PyObject *loader, *obj, *bv = Py_None, *bb = Py_None, *win = Py_None;
	PyObject *views = Py_None, *rows = Py_None, *cols = Py_None;
	int follow = 0, copy = 0, rc;
	double timeout = 10.0;
	parload_selection sel;
	parload_file_header h;
	parload_request req;
	parload_buffers *b = NULL;
	parload_error err;
	StreamObject *self;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|$OOOpdOOOp:Stream",
					 kwlist, &LoaderType, &loader, &obj,
					 &bv, &bb, &win, &follow, &timeout,
					 &views, &rows, &cols, &copy))
		return NULL;
	if (!(timeout >= 0)) {
		PyErr_Format(PyExc_ValueError,
			     "timeout must be a number of seconds >= 0");
		return NULL;
	}
	parload_request_init(&req);
	if (u64_arg(bv, &req.batch_views, "batch_views") ||
	    u64_arg(bb, &req.batch_bytes, "batch_bytes") ||
	    u64_arg(win, &req.window_bytes, "window") ||
	    selection_from(views, rows, cols, NULL, &sel))
		return NULL;
	if (PyLong_Check(obj) || !(PyUnicode_Check(obj) || PyBytes_Check(obj) ||
				   PyObject_HasAttrString(obj, "__fspath__"))) {
		PyErr_Format(PyExc_TypeError,
			     "stream() reads a path (str, bytes or "
			     "os.PathLike), not %.100s",
			     Py_TYPE(obj)->tp_name);
		return NULL;
	}
	if (source_parse(obj, &src))
		return NULL;
	self = (StreamObject *)type->tp_alloc(type, 0);
	if (!self) {
		source_clear(&src);
		return NULL;
	}
	self->loader = (LoaderObject *)Py_NewRef(loader);
	self->lock = PyThread_allocate_lock();
	self->name = Py_NewRef(src.name);
	self->path = Py_NewRef(src.path);
	self->copy = copy;
	source_clear(&src);
	if (!self->lock) {
		PyErr_NoMemory();
		goto fail;
	}
	if (stream_header(PyBytes_AS_STRING(self->path), self->name, follow,
			  timeout, &h))
		goto fail;
	if (resolve_shape(&h, &sel, PyBytes_AS_STRING(self->path), self->name,
			  &self->shape))
		goto fail;
	memset(&err, 0, sizeof(err));
	self->typenum = pixel_typenum(h.pixel_type);
	if (!req.window_bytes) {
		b = PyMem_Calloc(1, sizeof(*b));
		if (!b) {
			PyErr_NoMemory();
			goto fail;
		}
		Py_BEGIN_ALLOW_THREADS
		rc = parload_buffers_alloc_select(
			b, &h, &sel,
			self->loader->flags & PARLOAD_OPT_NO_HUGEPAGES, &err);
		Py_END_ALLOW_THREADS
		if (rc) {
			PyMem_Free(b);
			raise_error(rc, &err, self->name);
			goto fail;
		}
		self->buffers = PyCapsule_New(b, "parload.buffers",
					      buffers_capsule_free);
		if (!self->buffers) {
			parload_buffers_free(b);
			PyMem_Free(b);
			goto fail;
		}
		req.into = b;
	}
	req.path = PyBytes_AS_STRING(self->path);
	self->sel = sel;
	req.selection = &self->sel;
	req.flags = follow ? PARLOAD_REQ_FOLLOW : 0;
	req.timeout = timeout;
	if (loader_enter(self->loader))
		goto fail;
	Py_BEGIN_ALLOW_THREADS
	rc = parload_stream_open(&self->s, self->loader->loader, &req, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		PyThread_release_lock(self->loader->lock);
		self->s = NULL;
		raise_error(rc, &err, self->name);
		goto fail;
	}
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
		return array_over(descr, nd, dims, NULL, (void *)data,
				  Py_NewRef(self->buffers));
	a = array_over(descr, nd, dims, NULL, (void *)data,
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
	PUT_(range3(s->view_start + b->first * step, b->count, step));
	PUT_(batch_array(self, new_header_descr(), 1, &n, b->headers));
	PUT_(batch_array(self, PyArray_DescrFromType(self->typenum), 3, dims,
			 b->pixels));
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
	self->stats = stats_dict(&ds.stats);
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
		return raise_error(rc, &err, self->name);
	if (PyErr_Occurred())
		return NULL;
	return NULL; /* StopIteration */
}

static PyObject *Stream_next(StreamObject *self)
{
	PyObject *r;

	lock_take(self->lock);
	r = stream_next(self);
	PyThread_release_lock(self->lock);
	return r;
}

static PyObject *Stream_close(StreamObject *self, PyObject *unused)
{
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
	 "(views, rows, cols) of the whole selection, from the file's header\n"
	 "(a followed or truncated file may deliver fewer views).", NULL},
	{"dtype", (getter)Stream_get_dtype, NULL, "The pixels' dtype.", NULL},
	{NULL},
};

static PyTypeObject StreamType = {
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

/* ---------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	parload_writer *w;
	PyThread_type_lock lock;
	parload_file_header h;
	uint64_t written;
	PyObject *name;
	PyObject *path;
} WriterObject;

static int Writer_init(WriterObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"path", "n", "height", "width", "dtype",
				 "crc", NULL};
	PyObject *path_obj, *n_obj, *h_obj, *w_obj, *dt_obj;
	PyArray_Descr *dt = NULL;
	size_t n, height, width;
	parload_writer *w = NULL;
	parload_error err;
	int crc = 0, pt, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|$p:Writer", kwlist,
					 &path_obj, &n_obj, &h_obj, &w_obj,
					 &dt_obj, &crc))
		return -1;
	if (self->w || self->lock) {
		PyErr_SetString(PyExc_RuntimeError,
				"Writer.__init__ called twice");
		return -1;
	}
	if (size_arg(n_obj, &n, "n") || size_arg(h_obj, &height, "height") ||
	    size_arg(w_obj, &width, "width"))
		return -1;
	if (height > UINT32_MAX || width > UINT32_MAX) {
		PyErr_SetString(PyExc_OverflowError,
				"height and width must fit in 32 bits");
		return -1;
	}
	if (!PyArray_DescrConverter(dt_obj, &dt))
		return -1;
	pt = dtype_pixel_type(dt, "dtype");
	Py_DECREF(dt);
	if (!pt)
		return -1;
	memset(&err, 0, sizeof(err));
	rc = parload_file_header_init(&self->h, n, (uint32_t)width,
				      (uint32_t)height, pt,
				      crc ? PARLOAD_FLAG_CRC32C : 0);
	if (rc) {
		PyErr_Format(PyExc_ValueError,
			     "%zu views of %zu x %zu %s: %s", n, width, height,
			     parload_pixel_name(pt), parload_strerror(rc));
		return -1;
	}
	if (!PyUnicode_FSConverter(path_obj, &self->path))
		return -1;
	self->name = PyOS_FSPath(path_obj);
	self->lock = PyThread_allocate_lock();
	if (!self->name || !self->lock) {
		if (!self->lock)
			PyErr_NoMemory();
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = parload_writer_open(&w, PyBytes_AS_STRING(self->path), &self->h,
				 &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		raise_error(rc, &err, self->name);
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
		if (PyDict_Check(obj)) {
			PyObject *key;
			Py_ssize_t pos = 0;

			while (PyDict_Next(obj, &pos, &key, NULL)) {
				if (!PyUnicode_Check(key) ||
				    (PyUnicode_CompareWithASCIIString(
					     key, "timestamp_ns") &&
				     PyUnicode_CompareWithASCIIString(
					     key, "angle_deg") &&
				     PyUnicode_CompareWithASCIIString(
					     key, "view_index") &&
				     PyUnicode_CompareWithASCIIString(
					     key, "crc32c"))) {
					PyErr_Format(PyExc_ValueError,
						     "header: unknown field %R "
						     "(timestamp_ns, angle_deg)",
						     key);
					return -1;
				}
			}
		}
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
	if (ts) {
		PyObject *i = PyNumber_Index(ts);

		vh->timestamp_ns = i ? PyLong_AsUnsignedLongLong(i) : 0;
		Py_XDECREF(i);
		if (PyErr_Occurred())
			goto out;
	}
	if (angle) {
		vh->angle_deg = (float)PyFloat_AsDouble(angle);
		if (PyErr_Occurred())
			goto out;
	}
	rc = 0;
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
	descr = PyArray_DescrFromType(pixel_typenum(self->h.pixel_type));
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
		return raise_error(rc, &err, self->name);
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
		return raise_error(rc, &err, self->name);
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
		return raise_error(rc, &err, self->name);
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
	return file_header_new(&self->h);
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

static PyTypeObject WriterType = {
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

/* ---------------------------------------------------------------------
 * The module
 * ------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
	{"read_header", (PyCFunction)mod_read_header, METH_O,
	 "read_header(source)\n--\n\n"
	 "Read and validate a file's header (and check it against the file's\n"
	 "size); return a FileHeader.  source: a path or a descriptor."},
	{"empty_like_file", (PyCFunction)(void (*)(void))mod_empty_like_file,
	 METH_VARARGS | METH_KEYWORDS,
	 "empty_like_file(source, *, views=None, rows=None, cols=None,\n"
	 "                layout=None, hugepages=True)\n"
	 "--\n\n"
	 "Return (pixels, headers): uninitialised arrays for Loader.load_into()\n"
	 "of this file (or selection), allocated as parload allocates its own\n"
	 "datasets: one mapping, the pixels on a 2 MiB boundary, advised for\n"
	 "transparent huge pages unless hugepages is false.  Reuse them for\n"
	 "files of the same shape."},
	{"strategies", (PyCFunction)mod_strategies, METH_NOARGS,
	 "strategies()\n--\n\nThe names of the loading strategies, the "
	 "default first."},
	{"io_names", (PyCFunction)mod_io_names, METH_NOARGS,
	 "io_names()\n--\n\nThe names of the single-threaded strategies' I/O "
	 "APIs."},
	{"layouts", (PyCFunction)mod_layouts, METH_NOARGS,
	 "layouts()\n--\n\nThe names of the pixel layouts."},
	{NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "parload._parload",
	.m_doc = "The C part of the parload package; use parload instead.",
	.m_size = -1,
	.m_methods = module_methods,
};

/* str(parload.Error) is the library's message alone: OSError's own str()
 * would prefix "[Errno N]" and append the file name it already holds. */
static PyObject *Error_str(PyObject *self)
{
	PyObject *args = PyObject_GetAttrString(self, "args"), *r;

	if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1)
		r = PyObject_Str(PyTuple_GET_ITEM(args, 0));
	else
		r = args ? ((PyTypeObject *)PyExc_OSError)->tp_str(self) : NULL;
	Py_XDECREF(args);
	return r;
}

static PyType_Slot Error_slots[] = {
	{Py_tp_str, Error_str},
	{Py_tp_doc,
	 "A libparload failure.  Besides OSError's errno, strerror and\n"
	 "filename: code, the library's name for it (\"PARLOAD_ECRC\"),\n"
	 "and view and offset, the view and byte offset concerned (or\n"
	 "None).  str() is the library's message.  A missing file is\n"
	 "also a FileNotFoundError, a forbidden one a PermissionError."},
	{0, NULL},
};

static PyType_Spec Error_spec = {
	.name = "parload.Error",
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = Error_slots,
};

/* Error(OSError) and two subclasses that are also the builtin kinds. */
static int make_errors(PyObject *m)
{
	PyObject *bases;

	Error = PyType_FromSpecWithBases(&Error_spec, PyExc_OSError);
	if (!Error)
		return -1;
	bases = PyTuple_Pack(2, Error, PyExc_FileNotFoundError);
	NotFoundError = bases ? PyErr_NewException("parload.FileNotFoundError",
						   bases, NULL)
			      : NULL;
	Py_XDECREF(bases);
	bases = PyTuple_Pack(2, Error, PyExc_PermissionError);
	PermissionErr = bases ? PyErr_NewException("parload.PermissionError",
						   bases, NULL)
			      : NULL;
	Py_XDECREF(bases);
	if (!NotFoundError || !PermissionErr)
		return -1;
	if (PyModule_AddObjectRef(m, "Error", Error) < 0 ||
	    PyModule_AddObjectRef(m, "FileNotFoundError", NotFoundError) < 0 ||
	    PyModule_AddObjectRef(m, "PermissionError", PermissionErr) < 0)
		return -1;
	return 0;
}

/* header_dtype: the 32-byte view header, its reserved bytes as padding. */
static int make_header_dtype(PyObject *m)
{
	PyObject *spec = Py_BuildValue(
		"{s:[ssss],s:[ssss],s:[iiii],s:i}", "names", "view_index",
		"timestamp_ns", "angle_deg", "crc32c", "formats", "<u8", "<u8",
		"<f4", "<u4", "offsets",
		(int)offsetof(parload_view_header, view_index),
		(int)offsetof(parload_view_header, timestamp_ns),
		(int)offsetof(parload_view_header, angle_deg),
		(int)offsetof(parload_view_header, crc32c), "itemsize",
		(int)sizeof(parload_view_header));
	int ok;

	if (!spec)
		return -1;
	ok = PyArray_DescrConverter(spec, &header_descr);
	Py_DECREF(spec);
	if (!ok)
		return -1;
	return PyModule_AddObjectRef(m, "header_dtype",
				     (PyObject *)header_descr);
}

static int set_main_thread(void)
{
	PyObject *threading = PyImport_ImportModule("threading"), *t = NULL;
	PyObject *ident = NULL;

	if (threading)
		t = PyObject_CallMethod(threading, "main_thread", NULL);
	if (t)
		ident = PyObject_GetAttrString(t, "ident");
	if (ident)
		main_thread = PyLong_AsUnsignedLong(ident);
	Py_XDECREF(ident);
	Py_XDECREF(t);
	Py_XDECREF(threading);
	return ident && !PyErr_Occurred() ? 0 : -1;
}

/* What parload._parload_mpi borrows (_parload_api.h). */
static const parload_py_api py_api = {
	.raise_error = raise_error,
	.selection_from = selection_from,
	.array_over = array_over,
	.shape_dims = shape_dims,
	.pixel_typenum = pixel_typenum,
	.header_descr = new_header_descr,
	.file_header_new = file_header_new,
	.stats_dict = stats_dict,
	.range3 = range3,
	.size_arg = size_arg,
	.option_flags = option_flags,
};

static int add_api(PyObject *m)
{
	PyObject *cap = PyCapsule_New((void *)&py_api, PARLOAD_PY_API_CAPSULE,
				      NULL);
	int rc = cap ? PyModule_AddObjectRef(m, "_C_API", cap) : -1;

	Py_XDECREF(cap);
	return rc;
}

PyMODINIT_FUNC PyInit__parload(void);
PyMODINIT_FUNC PyInit__parload(void)
{
	PyObject *m;

	import_array();
	if (PyType_Ready(&DatasetType) < 0 || PyType_Ready(&LoaderType) < 0 ||
	    PyType_Ready(&WriterType) < 0 || PyType_Ready(&StreamType) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m || set_main_thread() < 0) {
		Py_XDECREF(m);
		return NULL;
	}
	FileHeaderType = PyStructSequence_NewType(&file_header_desc);
	BatchType = PyStructSequence_NewType(&batch_desc);
	if (!FileHeaderType || !BatchType || make_errors(m) < 0 || make_header_dtype(m) < 0 ||
	    PyModule_AddObjectRef(m, "FileHeader", (PyObject *)FileHeaderType) ||
	    PyModule_AddObjectRef(m, "Dataset", (PyObject *)&DatasetType) ||
	    PyModule_AddObjectRef(m, "Loader", (PyObject *)&LoaderType) ||
	    PyModule_AddObjectRef(m, "Writer", (PyObject *)&WriterType) ||
	    PyModule_AddObjectRef(m, "Stream", (PyObject *)&StreamType) ||
	    PyModule_AddObjectRef(m, "Batch", (PyObject *)BatchType) ||
	    add_api(m) < 0 ||
	    PyModule_AddStringConstant(m, "library_version",
				       parload_version()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
