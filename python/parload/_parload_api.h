/*
 * _parload_api.h - what parload._parload lends the package's other C
 * modules (parload._parload_mpi): its error, selection and array helpers,
 * so that every module raises the same parload.Error and builds arrays the
 * same way.  _parload exports them in the capsule parload._parload._C_API;
 * a module calls parload_py_import_api() once at its initialisation.
 */
#ifndef PARLOAD_PY_API_H
#define PARLOAD_PY_API_H

#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <parload.h>

#define PARLOAD_PY_API_CAPSULE "parload._parload._C_API"

typedef struct parload_py_api {
	/* Raise parload.Error for a failed call (NULL returned). */
	PyObject *(*raise_error)(int code, const parload_error *err,
				 PyObject *filename);
	/* views=, rows=, cols=, layout= (NULL: views) into *sel; -1 with an
	 * exception. */
	int (*selection_from)(PyObject *views, PyObject *rows, PyObject *cols,
			      const char *layout, parload_selection *sel);
	/* An ndarray over data that base keeps alive (descr and base
	 * stolen; strides NULL: C order). */
	PyObject *(*array_over)(PyArray_Descr *descr, int nd, npy_intp *dims,
				npy_intp *strides, void *data, PyObject *base);
	/* The pixel array's dimensions for a resolved selection. */
	void (*shape_dims)(const parload_shape *s, npy_intp dims[3]);
	/* The NumPy type number of a pixel type. */
	int (*pixel_typenum)(int pixel_type);
	/* A new reference to parload.header_dtype. */
	PyArray_Descr *(*header_descr)(void);
	/* parload's header a description stands for, or None. */
	PyObject *(*file_header_of)(const parload_desc *d);
	PyObject *(*stats_dict)(const parload_stats *st);
	/* range(start, start + n * step, step) */
	PyObject *(*range3)(uint64_t start, uint64_t n, uint64_t step);
	/* A non-negative int that fits a size_t; -1 with an exception. */
	int (*size_arg)(PyObject *obj, size_t *out, const char *what);
	/* parload_options.flags from verify=, keep_going=,
	 * allow_truncated=, numa_bind=, hugepages=, map_sinograms=. */
	unsigned (*option_flags)(int verify, int keep_going,
				 int allow_truncated, int numa_bind,
				 int hugepages, int map_sinograms);
	/* raw= (a str or a dict of the layout's keys) into *d; -1 with an
	 * exception. */
	int (*raw_parse)(PyObject *raw, parload_desc *d);
	/* A description as Dataset.desc's dict. */
	PyObject *(*desc_dict)(const parload_desc *d);
	/* views x size bytes of raw view headers as a (views, size) uint8
	 * array that base (stolen) keeps alive; None when there are none. */
	PyObject *(*raw_headers_array)(const unsigned char *data,
				       uint64_t views, uint64_t size,
				       PyObject *base);
	/* cache= (a mode's name, NULL: keep) into *out; -1 with
	 * ValueError. */
	int (*cache_from)(const char *name, parload_cache *out);
	/* frames= (NULL: projections); -1 with ValueError. */
	int (*frames_from)(const char *name, parload_frames *out);
	/* The correction keywords (flats, darks, bin in kw) of a load of
	 * path, with raw=, dataset=, frames=: a holder, *out the correction
	 * (NULL: none); NULL with an exception.  correction_free takes
	 * NULL. */
	void *(*correction_new)(PyObject *path, PyObject *const kw[3],
				const char *reduce, int minus_log,
				PyObject *raw, PyObject *dataset,
				const char *frames,
				const parload_correction **out);
	void (*correction_free)(void *holder);
} parload_py_api;

/* parload._parload's table, or NULL with ImportError. */
static inline const parload_py_api *parload_py_import_api(void)
{
	return PyCapsule_Import(PARLOAD_PY_API_CAPSULE, 0);
}

#endif /* PARLOAD_PY_API_H */
