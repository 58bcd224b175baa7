/*
 * correct.c - the correction keywords of a load (flats=, darks=, reduce=,
 * minus_log=, bin=) made into a parload_correction: each reference set a
 * source (a path, a list of paths, read with the scan's raw= unless it is
 * a .nhdr), "same" (the flats or darks frames of the scan's own HDF5
 * file), or a NumPy array of shape (N, H, W) or (H, W), converted to
 * float32 C order and checked against the scan's height and width.
 */
#include "_parload.h"

static const char *const names[2] = { "darks", "flats" };

/* A NRRD detached header, by the library's rule for its name. */
static int is_nhdr(const source *s)
{
	const char *p = py_source_path(s);
	const char *f = p ? parload_format_named(p) : NULL;

	return f && strcmp(f, "nhdr") == 0;
}

static int is_same(PyObject *obj)
{
	return PyUnicode_Check(obj) &&
	       PyUnicode_CompareWithASCIIString(obj, "same") == 0;
}

/* Set i as "same": the scan's source, its frames the flats or darks. */
static int same_of(const source *scan, py_correction *c, int i)
{
	if (py_source_copy(scan, &c->src[i]))
		return -1;
	c->src[i].frames = i ? PARLOAD_FRAMES_FLATS : PARLOAD_FRAMES_DARKS;
	c->has_src[i] = c->same[i] = 1;
	py_source_request(&c->src[i], &c->refs[i].source);
	return 0;
}

/* One reference set, obj (not None), as set i of c. */
static int refs_of(PyObject *obj, PyObject *raw, const source *scan,
		   py_correction *c, int i)
{
	PyArrayObject *a;

	if (is_same(obj))
		return same_of(scan, c, i);
	/* Not a descriptor or a file object, which a source may be: an int
	 * would name whatever the process has open there, the library's own
	 * descriptor of the scan among them. */
	if (!PyArray_Check(obj) && !py_is_path(obj) && !PyList_Check(obj) &&
	    !PyTuple_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "%s must be a path (str, bytes "
			     "or os.PathLike), a list of paths, 'same' or an "
			     "array of frames (N, H, W) or (H, W), not %.100s",
			     names[i], Py_TYPE(obj)->tp_name);
		return -1;
	}
	if (!PyArray_Check(obj)) {
		if (py_source_parse(obj, raw, &c->src[i]))
			return -1;
		c->src[i].flags = scan->flags; /* confine= holds for both */
		if (is_nhdr(&c->src[i]))
			c->src[i].has_desc = 0; /* it states its own layout */
		c->has_src[i] = 1;
		py_source_request(&c->src[i], &c->refs[i].source);
		return 0;
	}
	a = (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_FLOAT32,
					      NPY_ARRAY_IN_ARRAY |
						      NPY_ARRAY_FORCECAST);
	if (!a)
		return -1;
	c->arr[i] = a;
	if (PyArray_NDIM(a) != 2 && PyArray_NDIM(a) != 3) {
		PyErr_Format(PyExc_ValueError, "%s: an array of shape (N, H, W) "
			     "or (H, W), not of %d dimensions", names[i],
			     PyArray_NDIM(a));
		return -1;
	}
	if (PyArray_SIZE(a) == 0) {
		PyErr_Format(PyExc_ValueError, "%s: the array holds no frames",
			     names[i]);
		return -1;
	}
	parload_source_init(&c->refs[i].source);
	c->refs[i].frames = PyArray_DATA(a);
	c->refs[i].count = PyArray_NDIM(a) == 3 ?
				   (uint64_t)PyArray_DIM(a, 0) : 1;
	return 0;
}

static int reduce_of(const char *name, parload_reduce *out)
{
	int r;

	if (py_name_from(PARLOAD_NAMES_REDUCE, "reduce", name,
			 PARLOAD_REDUCE_MEAN, &r))
		return -1;
	*out = (parload_reduce)r;
	return 0;
}

int py_correction_parse(PyObject *flats, PyObject *darks, const char *reduce,
			int minus_log, PyObject *bin, PyObject *raw,
			const source *scan, py_correction *c)
{
	PyObject *set[2] = { darks, flats };
	unsigned long factor = 1;

	memset(c, 0, sizeof(*c));
	if (bin && bin != Py_None) {
		factor = PyLong_AsUnsignedLong(bin);
		if (PyErr_Occurred() || factor < 1 || factor > UINT32_MAX) {
			PyErr_Clear();
			PyErr_SetString(PyExc_ValueError,
					"bin must be an int of 1 or more");
			return -1;
		}
	}
	if (reduce_of(reduce, &c->corr.reduce))
		return -1;
	c->corr.bin = (unsigned)factor;
	c->corr.flags = minus_log ? PARLOAD_CORR_MINUS_LOG : 0;
	for (int i = 0; i < 2; i++) {
		if (!set[i] || set[i] == Py_None)
			continue;
		if (refs_of(set[i], raw, scan, c, i)) {
			py_correction_clear(c);
			return -1;
		}
		*(i ? &c->corr.flats : &c->corr.darks) = &c->refs[i];
	}
	c->on = c->corr.darks || c->corr.flats || minus_log || factor > 1;
	return 0;
}

/* The arrays' height and width against the scan's (d). */
int py_correction_check(const py_correction *c, const parload_desc *d)
{
	for (int i = 0; i < 2; i++) {
		PyArrayObject *a = c->arr[i];
		const int nd = a ? PyArray_NDIM(a) : 0;
		char shape[96];

		if (!a || ((uint64_t)PyArray_DIM(a, nd - 2) == d->height &&
			   (uint64_t)PyArray_DIM(a, nd - 1) == d->width))
			continue;
		if (nd == 3)
			snprintf(shape, sizeof(shape), "(%zd, %zd, %zd)",
				 (Py_ssize_t)PyArray_DIM(a, 0),
				 (Py_ssize_t)PyArray_DIM(a, 1),
				 (Py_ssize_t)PyArray_DIM(a, 2));
		else
			snprintf(shape, sizeof(shape), "(%zd, %zd)",
				 (Py_ssize_t)PyArray_DIM(a, 0),
				 (Py_ssize_t)PyArray_DIM(a, 1));
		PyErr_Format(PyExc_ValueError, "%s of shape %s do not match the "
			     "scan's frames of (height, width) (%u, %u)",
			     names[i], shape, d->height, d->width);
		return -1;
	}
	return 0;
}

/* "same" where the scan is not an HDF5 file (d: its description, NULL
 * when it is not described: a descriptor or a raw layout). */
static int same_refused(const py_correction *c, const source *src,
			const parload_desc *d)
{
	const int i = c->same[1];

	if (d && d->format == PARLOAD_FORMAT_HDF5)
		return 0;
	PyErr_Format(PyExc_ValueError, "%s='same' names the references "
		     "stored in the scan's own HDF5 file, and %R is %s; give "
		     "the references' source", names[i], src->name,
		     !d ? (src->has_desc ? "a raw layout (raw=)" :
				       "an open file or descriptor")
			: d->format == PARLOAD_FORMAT_TIFF ? "a TIFF" :
							     "not an HDF5 file");
	return -1;
}

int py_correction_for(const source *src, int allow_truncated,
		      PyObject *const kw[3], const char *reduce, int minus_log,
		      PyObject *raw, py_correction *c)
{
	parload_desc d;
	int same, arrays;

	if (py_correction_parse(kw[0], kw[1], reduce, minus_log, kw[2], raw,
				src, c))
		return -1;
	same = c->same[0] || c->same[1];
	arrays = c->arr[0] || c->arr[1];
	/* A descriptor is not described: that would read a pipe. */
	if ((same && (src->fd >= 0 || src->has_desc) &&
	     same_refused(c, src, NULL)) ||
	    ((arrays || same) && py_describe(src, allow_truncated, &d, NULL)) ||
	    (same && same_refused(c, src, &d)) ||
	    (arrays && py_correction_check(c, &d))) {
		py_correction_clear(c);
		return -1;
	}
	return 0;
}

const parload_correction *py_correction_of(const py_correction *c)
{
	return c->on ? &c->corr : NULL;
}

void py_correction_clear(py_correction *c)
{
	for (int i = 0; i < 2; i++) {
		Py_CLEAR(c->arr[i]);
		if (c->has_src[i])
			py_source_clear(&c->src[i]);
		c->has_src[i] = c->same[i] = 0;
	}
}

/* ---- for parload._parload_mpi (_parload_api.h) ---- */

/* A correction and the scan's source it was checked against, kept for
 * one collective load. */
typedef struct holder {
	source src;
	py_correction c;
} holder;

void *py_correction_new(PyObject *path, PyObject *const kw[3],
			const char *reduce, int minus_log, PyObject *raw,
			PyObject *dataset, const char *frames,
			const parload_correction **out)
{
	holder *h = PyMem_Calloc(1, sizeof(*h));

	if (!h)
		return PyErr_NoMemory();
	if (py_source_parse(path, raw, &h->src) ||
	    py_source_container(&h->src, dataset, frames, 0)) {
		PyMem_Free(h);
		return NULL;
	}
	if (py_correction_for(&h->src, 0, kw, reduce, minus_log, raw, &h->c)) {
		py_source_clear(&h->src);
		PyMem_Free(h);
		return NULL;
	}
	*out = py_correction_of(&h->c);
	return h;
}

void py_correction_free(void *p)
{
	holder *h = p;

	if (!h)
		return;
	py_correction_clear(&h->c);
	py_source_clear(&h->src);
	PyMem_Free(h);
}
