/*
 * save.c - parload._save(), behind parload.save(): a C-contiguous NumPy
 * array of 2 or 3 dimensions written as TIFF, HDF5, .npy or PNG by
 * parload_save, the GIL released while it writes.
 */
#include "_parload.h"

/* The stack of arr (pages, rows, cols; 2-D: one page); -1 with an
 * exception for a shape parload_stack cannot hold. */
static int stack_of(PyArrayObject *arr, const char *layout, parload_stack *st)
{
	const int nd = PyArray_NDIM(arr);
	int l;
	const npy_intp *dims = PyArray_DIMS(arr);

	memset(st, 0, sizeof(*st));
	if (nd != 2 && nd != 3) {
		PyErr_Format(PyExc_ValueError, "save: data has %d dimensions, "
			     "not 2 (one page) or 3 (pages, rows, cols)", nd);
		return -1;
	}
	if (dims[nd - 1] > UINT32_MAX || dims[nd - 2] > UINT32_MAX) {
		PyErr_SetString(PyExc_ValueError,
				"save: rows and cols must fit in 32 bits");
		return -1;
	}
	st->pixel_type = py_dtype_pixel_type(PyArray_DESCR(arr), "save");
	if (!st->pixel_type)
		return -1;
	if (py_name_from(PARLOAD_NAMES_LAYOUT, "save", layout,
			 PARLOAD_LAYOUT_VIEWS, &l))
		return -1;
	st->layout = (parload_layout)l;
	st->pixels = PyArray_DATA(arr);
	st->n = nd == 3 ? (uint64_t)dims[0] : 1;
	st->rows = (uint32_t)dims[nd - 2];
	st->cols = (uint32_t)dims[nd - 1];
	return 0;
}

/* chunks=: a sequence of 1 to 3 sizes (pages, rows, cols), -1 or None
 * for all of a dimension; the dimensions it leaves out whole. */
static int chunks_of(parload_save_options *o, PyObject *chunks)
{
	PyObject *seq;
	Py_ssize_t n;

	if (chunks == Py_None)
		return 0;
	seq = PySequence_Fast(chunks, "chunks: a tuple of 1 to 3 sizes");
	if (!seq)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	for (Py_ssize_t i = 0; i < n && i < 3; i++) {
		PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
		long long k = v == Py_None ? -1 : PyLong_AsLongLong(v);

		if (k == -1 && PyErr_Occurred())
			break;
		if (k == 0 || k < -1) {
			PyErr_Format(PyExc_ValueError, "chunks: %lld is not a "
				     "size (1 or more, or -1 for all)", k);
			break;
		}
		o->chunks[i] = k < 0 ? 0 : (uint64_t)k;
	}
	Py_DECREF(seq);
	if (!PyErr_Occurred() && (n < 1 || n > 3))
		PyErr_SetString(PyExc_ValueError,
				"chunks: a tuple of 1 to 3 sizes");
	if (!PyErr_Occurred() && !o->chunks[0] && !o->chunks[1] &&
	    !o->chunks[2])
		o->chunks[0] = UINT64_MAX; /* all of it: cut to the array */
	return PyErr_Occurred() ? -1 : 0;
}

/* The options asked for path: a format's own only for that format (the
 * library's table of names says which); -1 with an exception. */
static int options_for(parload_save_options *o, const char *path,
		       const char *compress, PyObject *window, int force)
{
	const parload_save_format f = parload_save_format_of(path);
	parload_error err;

	o->flags = force ? PARLOAD_SAVE_FORCE : 0;
	memset(&err, 0, sizeof(err));
	if (compress && parload_save_compress(o, compress, &err)) {
		PyErr_SetString(PyExc_ValueError, err.message);
		return -1;
	}
	if (o->compress && f != PARLOAD_SAVE_HDF5 && f != PARLOAD_SAVE_ZARR) {
		PyErr_SetString(PyExc_ValueError,
				"compress applies to HDF5 and Zarr output only");
		return -1;
	}
	if ((o->chunks[0] || o->chunks[1] || o->chunks[2] || o->zarr_format ||
	     o->shard) && f != PARLOAD_SAVE_ZARR) {
		PyErr_SetString(PyExc_ValueError, "chunks, zarr_format and "
				"shard apply to Zarr output only");
		return -1;
	}
	if ((window != Py_None || o->png_depth != 8) &&
	    f != PARLOAD_SAVE_PNG) {
		PyErr_SetString(PyExc_ValueError,
				"window and png_depth apply to PNG output only");
		return -1;
	}
	if (window == Py_None)
		return 0;
	if (!PyArg_ParseTuple(window, "dd:window", &o->window_lo,
			      &o->window_hi))
		return -1;
	o->flags |= PARLOAD_SAVE_WINDOW;
	return 0;
}

PyObject *py_mod_save(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"path",  "data",      "layout",
				 "angles", "dataset",  "compress",
				 "force", "window",    "png_depth",
				 "chunks", "zarr_format", "shard",
				 NULL};
	PyObject *path, *data, *angles = Py_None, *window = Py_None;
	PyObject *chunks = Py_None;
	const char *compress = NULL;
	PyObject *bytes = NULL, *r = NULL;
	PyArrayObject *arr = NULL, *ang = NULL;
	const char *layout = "views";
	int force = 0, rc;
	parload_save_options o;
	parload_stack st;
	parload_error err;

	parload_save_options_init(&o);
	o.png_depth = 8;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$sOzzpOiOiI:_save",
					 kwlist, &path, &data, &layout,
					 &angles, &o.dataset, &compress,
					 &force, &window, &o.png_depth,
					 &chunks, &o.zarr_format, &o.shard) ||
	    !PyUnicode_FSConverter(path, &bytes))
		return NULL;
	arr = (PyArrayObject *)PyArray_FromAny(
		data, NULL, 0, 0, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_NOTSWAPPED,
		NULL);
	if (!arr || stack_of(arr, layout, &st) || chunks_of(&o, chunks) ||
	    options_for(&o, PyBytes_AS_STRING(bytes), compress, window,
			force))
		goto out;
	if (angles != Py_None) {
		ang = (PyArrayObject *)PyArray_FROMANY(angles, NPY_FLOAT32, 1,
						       1, NPY_ARRAY_IN_ARRAY);
		if (!ang)
			goto out;
		st.angles = PyArray_DATA(ang);
		st.angle_count = (uint64_t)PyArray_DIM(ang, 0);
	}
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_save(PyBytes_AS_STRING(bytes), &st, &o, &err);
	Py_END_ALLOW_THREADS
	if (rc)
		py_raise_error(rc, &err, path);
	else
		r = Py_NewRef(Py_None);
out:
	Py_XDECREF(ang);
	Py_XDECREF(arr);
	Py_DECREF(bytes);
	return r;
}
