/*
 * settings.c - parload._settings(): options given as the library's keys
 * (parload_settings_set, the vocabulary every program shares) made into
 * the keyword arguments of parload.Loader and Loader.load, so that
 * python -m parload takes the command's options with its values, limits
 * and messages.
 */
#include "_parload.h"

/* A slice of the settings as a Python slice (None for an omitted part). */
static PyObject *part(int64_t v)
{
	if (v == PARLOAD_OMIT)
		Py_RETURN_NONE;
	return PyLong_FromLongLong(v);
}

static PyObject *slice_of(const parload_slice *s)
{
	PyObject *a = part(s->start), *b = part(s->stop), *c = part(s->step);
	PyObject *out = a && b && c ? PySlice_New(a, b, c) : NULL;

	Py_XDECREF(a);
	Py_XDECREF(b);
	Py_XDECREF(c);
	return out;
}

/* Loader's keywords. */
static PyObject *loader_kwargs(const parload_settings *s)
{
	const parload_options *o = &s->options;

	return Py_BuildValue(
		"{s:I,s:s,s:s,s:n,s:O,s:O,s:O,s:O,s:O,s:O}", "threads",
		o->threads, "strategy", parload_strategy_name(o->strategy),
		"io", parload_io_name(o->io), "max_read", (Py_ssize_t)o->max_read,
		"verify", o->flags & PARLOAD_OPT_VERIFY_CRC ? Py_True : Py_False,
		"keep_going",
		o->flags & PARLOAD_OPT_KEEP_GOING ? Py_True : Py_False,
		"allow_truncated",
		o->flags & PARLOAD_OPT_ALLOW_TRUNCATED ? Py_True : Py_False,
		"numa_bind", o->flags & PARLOAD_OPT_NO_BIND ? Py_False : Py_True,
		"hugepages",
		o->flags & PARLOAD_OPT_NO_HUGEPAGES ? Py_False : Py_True,
		"map_sinograms",
		o->flags & PARLOAD_OPT_MAP_SINOGRAMS ? Py_True : Py_False);
}

/* Loader.load's keywords (raw= is the caller's text: the key's value). */
static PyObject *load_kwargs(const parload_settings *s)
{
	const parload_selection *sel = &s->options.selection;
	PyObject *v = slice_of(&sel->views), *r = slice_of(&sel->rows);
	PyObject *c = slice_of(&sel->cols), *out = NULL;

	if (v && r && c)
		out = Py_BuildValue(
			"{s:O,s:O,s:O,s:s,s:s,s:z,s:z,s:s,s:O,s:I,s:z,s:s,s:O}",
			"views", v, "rows", r, "cols", c, "layout",
			parload_layout_name(sel->layout), "cache",
			parload_cache_name(s->cache), "darks", s->refs[0],
			"flats", s->refs[1], "reduce",
			parload_reduce_name(s->correct.reduce), "minus_log",
			s->correct.flags & PARLOAD_CORR_MINUS_LOG ? Py_True :
								    Py_False,
			"bin", s->correct.bin ? s->correct.bin : 1u, "dataset",
			s->dataset, "frames", parload_frames_name(s->frames),
			"confine",
			s->source_flags & PARLOAD_SRC_CONFINE ? Py_True :
								Py_False);
	Py_XDECREF(v);
	Py_XDECREF(r);
	Py_XDECREF(c);
	return out;
}

/* One (key, value) pair into s; -1 with ValueError (the library's
 * message) or TypeError. */
static int set_pair(parload_settings *s, PyObject *pair)
{
	const char *key, *value = NULL;
	parload_error err;

	if (!PyArg_ParseTuple(pair, "sz:_settings", &key, &value))
		return -1;
	memset(&err, 0, sizeof(err));
	if (parload_settings_set(s, key, value, &err) < 0) {
		PyErr_SetString(PyExc_ValueError, err.message);
		return -1;
	}
	return 0;
}

PyObject *py_mod_settings(PyObject *mod, PyObject *pairs)
{
	PyObject *seq = PySequence_Fast(pairs, "_settings takes (key, value) "
					       "pairs");
	PyObject *loader = NULL, *load = NULL, *out = NULL;
	parload_settings s;

	if (!seq)
		return NULL;
	parload_settings_init(&s);
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
		if (set_pair(&s, PySequence_Fast_GET_ITEM(seq, i))) {
			Py_DECREF(seq);
			return NULL;
		}
	Py_DECREF(seq);
	loader = loader_kwargs(&s);
	load = loader ? load_kwargs(&s) : NULL;
	if (load && s.verify_seed)
		out = Py_BuildValue("(OOK)", loader, load,
				    (unsigned long long)s.seed);
	else if (load)
		out = Py_BuildValue("(OOO)", loader, load, Py_None);
	Py_XDECREF(loader);
	Py_XDECREF(load);
	return out;
}
