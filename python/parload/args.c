/*
 * args.c - library arguments from Python ones: sources (a path, a list
 * of paths or a descriptor, and their layout), selections, sizes and
 * option flags.
 */
#include "_parload.h"

/* ---------------------------------------------------------------------
 * Sources: paths, lists of paths and descriptors
 * ------------------------------------------------------------------- */

void py_source_clear(source *s)
{
	Py_CLEAR(s->path);
	Py_CLEAR(s->paths);
	Py_CLEAR(s->name);
	Py_CLEAR(s->name_bytes);
	Py_CLEAR(s->dataset);
	PyMem_Free(s->pathv);
	s->pathv = NULL;
	s->npaths = 0;
}

int py_is_path(PyObject *obj)
{
	return PyUnicode_Check(obj) || PyBytes_Check(obj) ||
	       PyObject_HasAttrString(obj, "__fspath__");
}

/* A list or tuple of paths: one stream of them, in the order given.  Its
 * name is the tuple of the paths as given (str or bytes). */
static int source_list(PyObject *obj, source *s)
{
	Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
	PyObject **items = PySequence_Fast_ITEMS(obj);

	if (n == 0) {
		PyErr_SetString(PyExc_ValueError,
				"an empty list of files: give at least one");
		return -1;
	}
	s->paths = PyTuple_New(n);
	s->name = PyTuple_New(n);
	s->pathv = PyMem_Calloc((size_t)n, sizeof(*s->pathv));
	if (!s->paths || !s->name || !s->pathv) {
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *b = NULL, *p;

		if (!py_is_path(items[i])) {
			PyErr_Format(PyExc_TypeError,
				     "a list of files holds paths (str, bytes "
				     "or os.PathLike), not %.100s (item %zd)",
				     Py_TYPE(items[i])->tp_name, i);
			return -1;
		}
		if (!PyUnicode_FSConverter(items[i], &b))
			return -1;
		PyTuple_SET_ITEM(s->paths, i, b);
		s->pathv[i] = PyBytes_AS_STRING(b);
		if (!(p = PyOS_FSPath(items[i])))
			return -1;
		PyTuple_SET_ITEM(s->name, i, p);
	}
	s->npaths = (size_t)n;
	s->name_bytes = Py_NewRef(PyTuple_GET_ITEM(s->paths, 0));
	return 0;
}

/* str, bytes or os.PathLike: a path.  A list or tuple of them: one
 * stream.  An int: a descriptor.  Anything with fileno(): its
 * descriptor, named by its .name when that is text. */
static int source_of(PyObject *obj, source *s)
{
	if (PyList_Check(obj) || PyTuple_Check(obj)) {
		PyObject *seq = PySequence_Fast(obj, "a list of files");
		int rc = seq ? source_list(seq, s) : -1;

		Py_XDECREF(seq);
		return rc;
	}
	if (PyLong_Check(obj)) {
		s->fd = PyObject_AsFileDescriptor(obj);
		if (s->fd < 0)
			return -1;
		s->name = PyUnicode_FromFormat("fd %d", s->fd);
	} else if (py_is_path(obj)) {
		if (!PyUnicode_FSConverter(obj, &s->path))
			return -1;
		s->name = PyOS_FSPath(obj);
		if (!s->name)
			return -1;
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
			     "list of paths, a file descriptor or a file "
			     "object, not %.100s",
			     Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (!s->name || !PyUnicode_FSConverter(s->name, &s->name_bytes))
		return -1;
	return 0;
}

/* The source obj with its layout raw (None: parload's own format, or
 * what a .nhdr says). */
int py_source_parse(PyObject *obj, PyObject *raw, source *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (source_of(obj, s) ||
	    (raw && raw != Py_None && py_raw_parse(raw, &s->desc))) {
		py_source_clear(s);
		return -1;
	}
	s->has_desc = raw && raw != Py_None;
	return 0;
}

int py_source_copy(const source *from, source *to)
{
	*to = *from;
	Py_XINCREF(to->path);
	Py_XINCREF(to->paths);
	Py_XINCREF(to->name);
	Py_XINCREF(to->name_bytes);
	Py_XINCREF(to->dataset);
	to->pathv = NULL;
	if (!from->npaths)
		return 0;
	/* The texts stay those of the shared paths tuple. */
	to->pathv = PyMem_Calloc(from->npaths, sizeof(*to->pathv));
	if (!to->pathv) {
		py_source_clear(to);
		PyErr_NoMemory();
		return -1;
	}
	memcpy(to->pathv, from->pathv, from->npaths * sizeof(*to->pathv));
	return 0;
}

int py_name_from(int kind, const char *what, const char *name, int dflt,
		 int *out)
{
	parload_error err;
	int v = name ? parload_name_parse(kind, name, &err) : dflt;

	if (v < 0) {
		PyErr_Format(PyExc_ValueError, "%s: %s", what, err.message);
		return -1;
	}
	*out = v;
	return 0;
}

int py_frames_from(const char *name, parload_frames *out)
{
	int v;

	if (py_name_from(PARLOAD_NAMES_FRAMES, "frames", name,
			 PARLOAD_FRAMES_PROJECTIONS, &v))
		return -1;
	*out = (parload_frames)v;
	return 0;
}

int py_source_container(source *s, PyObject *dataset, const char *frames,
			int confine)
{
	s->flags = confine ? PARLOAD_SRC_CONFINE : 0;
	if (py_frames_from(frames, &s->frames) ||
	    (dataset && dataset != Py_None &&
	     !PyUnicode_FSConverter(dataset, &s->dataset))) {
		py_source_clear(s);
		return -1;
	}
	return 0;
}

const char *py_source_path(const source *s)
{
	return s->path ? PyBytes_AS_STRING(s->path) : NULL;
}

/* The library's source for s, valid while s is. */
void py_source_request(const source *s, parload_source *out)
{
	parload_source_init(out);
	if (s->npaths) {
		out->paths = s->pathv;
		out->path_count = s->npaths;
	} else if (s->path) {
		out->path = py_source_path(s);
	} else {
		out->fd = s->fd;
		out->name = PyBytes_AS_STRING(s->name_bytes);
	}
	out->desc = s->has_desc ? &s->desc : NULL;
	out->dataset = s->dataset ? PyBytes_AS_STRING(s->dataset) : NULL;
	out->frames = s->frames;
	out->flags = s->flags;
}

/* What s holds (parload_describe; with chunk, parload_describe_chunks),
 * or -1 with parload.Error. */
int py_describe(const source *s, int allow_truncated, parload_desc *d,
		uint64_t *chunk)
{
	parload_source src;
	parload_error err;
	int rc;

	py_source_request(s, &src);
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = chunk ? parload_describe_chunks(&src, allow_truncated, d, chunk,
					     &err) :
		     parload_describe(&src, allow_truncated, d, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		py_raise_error(rc, &err, s->name);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Layouts: raw= as the text of the command's --raw, or a dict of its keys
 * ------------------------------------------------------------------- */

/* One "key=value" of a raw= dict: a str key, an int or str value, neither
 * holding what separates pairs in the text. */
static PyObject *raw_pair(PyObject *key, PyObject *value)
{
	PyObject *v, *pair;

	if (!PyUnicode_Check(key)) {
		PyErr_Format(PyExc_TypeError,
			     "raw: keys are str, not %.100s",
			     Py_TYPE(key)->tp_name);
		return NULL;
	}
	if (PyBool_Check(value) ||
	    !(PyLong_Check(value) || PyUnicode_Check(value))) {
		PyErr_Format(PyExc_TypeError,
			     "raw: the value of %R is an int or a str, not "
			     "%.100s",
			     key, Py_TYPE(value)->tp_name);
		return NULL;
	}
	v = PyObject_Str(value);
	pair = v ? PyUnicode_FromFormat("%U=%U", key, v) : NULL;
	Py_XDECREF(v);
	if (pair && PyUnicode_FindChar(pair, '\n', 0, PyUnicode_GET_LENGTH(pair),
				       1) >= 0) {
		Py_CLEAR(pair);
		PyErr_Format(PyExc_ValueError,
			     "raw: the key %R or its value holds a newline",
			     key);
	}
	for (const char *sep = ",#"; pair && *sep; sep++)
		if (PyUnicode_FindChar(pair, (Py_UCS4)*sep, 0,
				       PyUnicode_GET_LENGTH(pair), 1) >= 0) {
			Py_CLEAR(pair);
			PyErr_Format(PyExc_ValueError,
				     "raw: the key %R or its value holds "
				     "'%c'",
				     key, *sep);
		}
	return pair;
}

/* A raw= dict as the text parload_desc_parse reads: "k=v,k=v". */
static PyObject *raw_text(PyObject *dict)
{
	PyObject *parts = PyList_New(0), *key, *value, *pair, *sep, *r = NULL;
	Py_ssize_t pos = 0;

	if (!parts)
		return NULL;
	while (PyDict_Next(dict, &pos, &key, &value)) {
		pair = raw_pair(key, value);
		if (!pair || PyList_Append(parts, pair) < 0) {
			Py_XDECREF(pair);
			Py_DECREF(parts);
			return NULL;
		}
		Py_DECREF(pair);
	}
	sep = PyUnicode_FromString(",");
	if (sep)
		r = PyUnicode_Join(sep, parts);
	Py_XDECREF(sep);
	Py_DECREF(parts);
	return r;
}

/* raw=: the text of the command's --raw ("width=...,type=..." or
 * "@PATH"), str or bytes, or a dict of the same keys, parsed by
 * parload_desc_parse (one path for both).  -1 with an exception. */
int py_raw_parse(PyObject *raw, parload_desc *d)
{
	PyObject *text = NULL, *bytes = NULL;
	parload_error err;
	int rc;

	if (PyDict_Check(raw))
		text = raw_text(raw);
	else if (PyUnicode_Check(raw) || PyBytes_Check(raw))
		text = Py_NewRef(raw);
	else
		PyErr_Format(PyExc_TypeError,
			     "raw: expected a str (\"width=...,height=...,"
			     "type=...\") or a dict of the same keys, not "
			     "%.100s",
			     Py_TYPE(raw)->tp_name);
	if (!text)
		return -1;
	rc = PyUnicode_FSConverter(text, &bytes);
	Py_DECREF(text);
	if (!rc)
		return -1;
	memset(&err, 0, sizeof(err));
	rc = parload_desc_parse(PyBytes_AS_STRING(bytes), d, &err);
	Py_DECREF(bytes);
	if (rc) {
		py_raise_error(rc, &err, NULL);
		return -1;
	}
	return 0;
}

/* The resolved description as a dict: what Dataset.desc says. */
PyObject *py_desc_dict(const parload_desc *d)
{
	const char *type = parload_type_name(d->pixel_type, d->encoding);
	PyObject *dtype = (PyObject *)PyArray_DescrFromType(
		py_pixel_typenum(d->pixel_type));

	if (!dtype)
		return NULL;
	return Py_BuildValue(
		"{s:s,s:I,s:I,s:s,s:N,s:K,s:K,s:K,s:K,s:K,s:K}", "format",
		parload_format_name(d->format), "width",
		d->width, "height", d->height, "type", type ? type : "?",
		"dtype", dtype, "offset", (unsigned long long)d->offset, "header",
		(unsigned long long)d->header, "gap",
		(unsigned long long)d->gap, "count",
		(unsigned long long)d->count, "payload_size",
		(unsigned long long)d->payload_size, "record_size",
		(unsigned long long)d->record_size);
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
	if (py_name_from(PARLOAD_NAMES_LAYOUT, "layout", layout,
			 PARLOAD_LAYOUT_VIEWS, &l))
		return -1;
	sel->layout = (parload_layout)l;
	return 0;
}

/* cache= ("keep", "drop", "direct" or "auto"; NULL: keep) into *out. */
int py_cache_from(const char *name, parload_cache *out)
{
	int m;

	if (py_name_from(PARLOAD_NAMES_CACHE, "cache", name,
			 PARLOAD_CACHE_KEEP, &m))
		return -1;
	*out = (parload_cache)m;
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
				int numa_bind, int hugepages, int map_sinograms)
{
	return (map_sinograms ? PARLOAD_OPT_MAP_SINOGRAMS : 0) |
	       (verify ? PARLOAD_OPT_VERIFY_CRC : 0) |
	       (keep_going ? PARLOAD_OPT_KEEP_GOING : 0) |
	       (allow_truncated ? PARLOAD_OPT_ALLOW_TRUNCATED : 0) |
	       (numa_bind ? 0 : PARLOAD_OPT_NO_BIND) |
	       (hugepages ? 0 : PARLOAD_OPT_NO_HUGEPAGES);
}
