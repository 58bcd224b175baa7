/*
 * module.c - the parload Python module's C part: libparload's loader,
 * datasets, buffers and writer as Python objects whose arrays are NumPy
 * arrays over the library's memory.
 *
 * Zero copy: a Dataset owns its parload_dataset; every array it hands out
 * views that memory and holds the Dataset as its base, so the memory is
 * released when the last of them (or the Dataset itself) goes away.
 * Every load and write runs with the GIL released.
 *
 * This file makes the module: its functions that list names, its types
 * and the capsule of _parload_api.h.
 */
#define PARLOAD_PY_MODULE_C
#include "_parload.h"

static PyObject *names_tuple(const char *(*to_name)(int))
{
	Py_ssize_t n = 0;
	PyObject *t;

	while (to_name((int)n))
		n++;
	t = PyTuple_New(n);
	for (Py_ssize_t i = 0; t && i < n; i++) {
		PyObject *s = PyUnicode_FromString(to_name((int)i));

		if (!s) {
			Py_DECREF(t);
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
 * The module
 * ------------------------------------------------------------------- */

static PyObject *mod_has_tiff(PyObject *mod, PyObject *unused)
{
	return PyBool_FromLong(parload_has_tiff());
}

static PyObject *mod_has_hdf5(PyObject *mod, PyObject *unused)
{
	return PyBool_FromLong(parload_has_hdf5());
}

static PyMethodDef module_methods[] = {
	{"has_tiff", (PyCFunction)mod_has_tiff, METH_NOARGS,
	 "has_tiff()\n--\n\nWhether this build has libtiff: compressed "
	 "and tiled TIFF, and writing TIFF (uncompressed striped TIFF is "
	 "read without it); its module found where it is one."},
	{"has_hdf5", (PyCFunction)mod_has_hdf5, METH_NOARGS,
	 "has_hdf5()\n--\n\nWhether this build reads and writes HDF5 "
	 "(libhdf5): built with it, and its module found where it is one."},
	{"read_header", (PyCFunction)py_mod_read_header, METH_O,
	 "read_header(source)\n--\n\n"
	 "Read and validate a file's header (and check it against the file's\n"
	 "size); return a FileHeader.  source: a path or a descriptor."},
	{"describe", (PyCFunction)(void (*)(void))py_mod_describe,
	 METH_VARARGS | METH_KEYWORDS,
	 "describe(source, *, raw=None, allow_truncated=False, dataset=None,\n"
	 "         frames=None, confine=False)\n--\n\n"
	 "What source holds, without loading it: its layout resolved against\n"
	 "its files, a dict as Dataset.desc (count: the views there are),\n"
	 "and chunks: (views, rows, cols) of the pieces it is stored in (a\n"
	 "Zarr or HDF5 chunk, a TIFF strip or tile, else one view).\n"
	 "source, raw, dataset, frames and confine are load()'s (not a pipe:\n"
	 "a stream\n"
	 "is described as it\n"
	 "is read).  Raises parload.Error as load() would for the same\n"
	 "source: a file that is missing, shorter than its views or (without\n"
	 "a count, unless allow_truncated) ending in a partial record."},
	{"_save", (PyCFunction)(void (*)(void))py_mod_save,
	 METH_VARARGS | METH_KEYWORDS,
	 "_save(path, data, *, layout='views', angles=None, dataset=None,\n"
	 "      gzip=0, force=False)\n--\n\n"
	 "parload_save of a C-contiguous array (parload.save's worker)."},
	{"empty_like_file", (PyCFunction)(void (*)(void))py_mod_empty_like_file,
	 METH_VARARGS | METH_KEYWORDS,
	 "empty_like_file(source, *, raw=None, views=None, rows=None,\n"
	 "                cols=None, layout=None, hugepages=True)\n"
	 "--\n\n"
	 "Return (pixels, headers): uninitialised arrays for Loader.load_into()\n"
	 "of this source (or selection; source and raw as in load()), allocated as parload allocates its own\n"
	 "datasets: one mapping, the pixels on a 2 MiB boundary, advised for\n"
	 "transparent huge pages unless hugepages is false.  Reuse them for\n"
	 "files of the same shape."},
	{"_settings", (PyCFunction)py_mod_settings, METH_O,
	 "_settings(pairs)\n--\n\n(Loader keywords, load keywords, seed or "
	 "None) of (key, value) pairs of the library's settings "
	 "(parload_settings_set: the parload command's options); ValueError "
	 "with the library's message."},
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

/* What parload._parload_mpi borrows (_parload_api.h). */
static const parload_py_api py_api = {
	.raise_error = py_raise_error,
	.selection_from = py_selection_from,
	.array_over = py_array_over,
	.shape_dims = py_shape_dims,
	.pixel_typenum = py_pixel_typenum,
	.header_descr = py_new_header_descr,
	.file_header_of = py_file_header_of,
	.stats_dict = py_stats_dict,
	.range3 = py_range3,
	.size_arg = py_size_arg,
	.option_flags = py_option_flags,
	.raw_parse = py_raw_parse,
	.desc_dict = py_desc_dict,
	.raw_headers_array = py_raw_headers_array,
	.cache_from = py_cache_from,
	.frames_from = py_frames_from,
	.correction_new = py_correction_new,
	.correction_free = py_correction_free,
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
	if (!m || py_set_main_thread() < 0) {
		Py_XDECREF(m);
		return NULL;
	}
	FileHeaderType = PyStructSequence_NewType(&py_file_header_desc);
	BatchType = PyStructSequence_NewType(&py_batch_desc);
	if (!FileHeaderType || !BatchType || py_make_errors(m) < 0 ||
	    py_make_header_dtype(m) < 0 ||
	    PyModule_AddObjectRef(m, "FileHeader", (PyObject *)FileHeaderType) ||
	    PyModule_AddObjectRef(m, "Dataset", (PyObject *)&DatasetType) ||
	    PyModule_AddObjectRef(m, "Loader", (PyObject *)&LoaderType) ||
	    PyModule_AddObjectRef(m, "Writer", (PyObject *)&WriterType) ||
	    PyModule_AddObjectRef(m, "Stream", (PyObject *)&StreamType) ||
	    PyModule_AddObjectRef(m, "Batch", (PyObject *)BatchType) ||
	    add_api(m) < 0 ||
	    PyModule_AddIntConstant(m, "THREADS_MAX", PARLOAD_THREADS_MAX) ||
	    PyModule_AddStringConstant(m, "library_version",
				       parload_version()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
