/*
 * errors.c - parload.Error and its subclasses, and the mapping of
 * libparload's failures onto them.
 */
#include "_parload.h"

static PyObject *Error;         /* parload.Error(OSError) */
static PyObject *NotFoundError; /* (Error, FileNotFoundError) */
static PyObject *PermissionErr; /* (Error, PermissionError) */

static PyObject *u64_or_none(uint64_t v)
{
	if (v == PARLOAD_NONE)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(v);
}

PyObject *py_text(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "backslashreplace");
}

/* Raise parload.Error (or its FileNotFoundError or PermissionError kin)
 * for a failed call; filename is what the caller passed, or NULL. */
PyObject *py_raise_error(int code, const parload_error *err,
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
	msg = py_text(text);
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
		SET_("strerror", py_text(strerror(sys_errno)));
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
	 "None).  str() is the library's message (bytes that are not\n"
	 "UTF-8 escaped, \\xff).  A missing file is\n"
	 "also a FileNotFoundError, a forbidden one a PermissionError."},
	{0, NULL},
};

static PyType_Spec Error_spec = {
	.name = "parload.Error",
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = Error_slots,
};

/* Error(OSError) and two subclasses that are also the builtin kinds. */
int py_make_errors(PyObject *m)
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
