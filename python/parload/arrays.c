/*
 * arrays.c - NumPy dtypes of pixel types, arrays over libparload's
 * memory, the view header dtype and the FileHeader type.
 */
#include "_parload.h"

PyTypeObject *FileHeaderType;
PyArray_Descr *py_header_descr;

/* ---------------------------------------------------------------------
 * Pixel types and NumPy dtypes
 * ------------------------------------------------------------------- */

int py_pixel_typenum(int pixel_type)
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
int py_dtype_pixel_type(PyArray_Descr *d, const char *what)
{
	static const int types[] = {
		PARLOAD_PIXEL_U8, PARLOAD_PIXEL_U16, PARLOAD_PIXEL_I16,
		PARLOAD_PIXEL_U32, PARLOAD_PIXEL_I32, PARLOAD_PIXEL_F32,
		PARLOAD_PIXEL_F64,
	};

	if (PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d)) {
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (d->type_num == py_pixel_typenum(types[i]))
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
PyObject *py_array_over(PyArray_Descr *descr, int nd, npy_intp *dims,
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

PyArray_Descr *py_new_header_descr(void)
{
	Py_INCREF(py_header_descr);
	return py_header_descr;
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

PyStructSequence_Desc py_file_header_desc = {
	"parload.FileHeader",
	"The 64-byte header of a raw image stream (docs/FORMAT.md), as a named\n"
	"tuple.  view_count is the number of complete views loaded when a\n"
	"truncated file was allowed.",
	file_header_fields,
	12,
};

PyObject *py_file_header_new(const parload_file_header *h)
{
	PyObject *t = PyStructSequence_New(FileHeaderType), *v;
	const char *name = parload_pixel_name(h->pixel_type);
	int typenum = py_pixel_typenum(h->pixel_type);
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

/* parload's own header that the description of a load stands for; None
 * for a raw layout. */
PyObject *py_file_header_of(const parload_desc *d)
{
	parload_file_header h;

	if (d->format != PARLOAD_FORMAT_PARLOAD ||
	    parload_file_header_init(&h, d->count, d->width, d->height,
				     d->pixel_type,
				     (d->flags & PARLOAD_DESC_CRC32C) ?
					     PARLOAD_FLAG_CRC32C : 0) != 0)
		Py_RETURN_NONE;
	return py_file_header_new(&h);
}


/* header_dtype: the 32-byte view header, its reserved bytes as padding. */
int py_make_header_dtype(PyObject *m)
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
	ok = PyArray_DescrConverter(spec, &py_header_descr);
	Py_DECREF(spec);
	if (!ok)
		return -1;
	return PyModule_AddObjectRef(m, "header_dtype",
				     (PyObject *)py_header_descr);
}
