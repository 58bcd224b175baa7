/*
 * args.c - library arguments from Python ones: sources (a path or a
 * descriptor), selections, sizes and option flags.
 */
#include "_parload.h"

/* ---------------------------------------------------------------------
 * Paths, descriptors and selections from Python arguments
 * ------------------------------------------------------------------- */

void py_source_clear(source *s)
{
	Py_CLEAR(s->path);
	Py_CLEAR(s->name);
	Py_CLEAR(s->name_bytes);
}

/* str, bytes or os.PathLike: a path.  An int: a descriptor.  Anything
 * with fileno(): its descriptor, named by its .name when that is text. */
int py_source_parse(PyObject *obj, source *s)
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
			py_source_clear(s);
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
		py_source_clear(s);
		return -1;
	}
	return 0;
}

const char *py_source_path(const source *s)
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
int py_selection_from(PyObject *views, PyObject *rows, PyObject *cols,
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
void py_shape_dims(const parload_shape *s, npy_intp dims[3])
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

int py_size_arg(PyObject *obj, size_t *out, const char *what)
{
	unsigned long long v;
	long long sv;
	int overflow;

	if (!PyLong_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s",
			     what, Py_TYPE(obj)->tp_name);
		return -1;
	}
	/* The sign: overflow says which way a value past long long went. */
	sv = PyLong_AsLongLongAndOverflow(obj, &overflow);
	if (sv == -1 && !overflow && PyErr_Occurred())
		return -1;
	if (overflow < 0 || (!overflow && sv < 0)) {
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
unsigned py_option_flags(int verify, int keep_going, int allow_truncated,
				int numa_bind, int hugepages)
{
	return (verify ? PARLOAD_OPT_VERIFY_CRC : 0) |
	       (keep_going ? PARLOAD_OPT_KEEP_GOING : 0) |
	       (allow_truncated ? PARLOAD_OPT_ALLOW_TRUNCATED : 0) |
	       (numa_bind ? 0 : PARLOAD_OPT_NO_BIND) |
	       (hugepages ? 0 : PARLOAD_OPT_NO_HUGEPAGES);
}
