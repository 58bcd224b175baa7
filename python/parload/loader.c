/*
 * loader.c - parload.Loader (load, load_into) and the module functions
 * read_header, describe and empty_like_file.
 */
#include "_parload.h"

/* strategy= and io= into *opts. */
static int loader_names(parload_options *opts, const char *strategy,
			const char *io)
{
	int v;

	if (py_name_from(PARLOAD_NAMES_STRATEGY, "strategy", strategy,
			 PARLOAD_STRATEGY_PARALLEL, &v))
		return -1;
	opts->strategy = (parload_strategy)v;
	if (py_name_from(PARLOAD_NAMES_IO, "io", io, PARLOAD_IO_POSIX, &v))
		return -1;
	opts->io = (parload_io)v;
	return 0;
}

/* threads= (absent: 0, the default) into opts->threads, an unsigned. */
static int loader_threads(parload_options *opts, PyObject *obj)
{
	size_t threads = 0;

	if (obj && py_size_arg(obj, &threads, "threads"))
		return -1;
	if (threads > UINT_MAX) {
		PyErr_SetString(PyExc_OverflowError, "threads is too large");
		return -1;
	}
	opts->threads = (unsigned)threads;
	return 0;
}

static int Loader_init(LoaderObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"threads", "strategy", "io", "buffer_size",
				 "max_read", "verify", "keep_going",
				 "allow_truncated", "numa_bind", "hugepages",
				 "map_sinograms", NULL};
	PyObject *threads_obj = NULL, *buffer = Py_None, *max_read = NULL;
	const char *strategy = "parallel", *io = "posix";
	int verify = 0, keep_going = 0, truncated = 0, bind = 1, huge = 1;
	int map_sino = 0;
	parload_options opts;
	parload_error err;
	parload_loader *loader = NULL;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OssOOpppppp:Loader",
					 kwlist, &threads_obj, &strategy, &io,
					 &buffer, &max_read, &verify,
					 &keep_going, &truncated, &bind, &huge,
					 &map_sino))
		return -1;
	if (self->loader) {
		PyErr_SetString(PyExc_RuntimeError,
				"Loader.__init__ called twice");
		return -1;
	}
	parload_options_init(&opts);
	if (loader_threads(&opts, threads_obj))
		return -1;
	if (loader_names(&opts, strategy, io))
		return -1;
	if (buffer != Py_None && py_size_arg(buffer, &opts.buffer_size,
					     "buffer_size"))
		return -1;
	if (max_read && py_size_arg(max_read, &opts.max_read, "max_read"))
		return -1;
	opts.flags = py_option_flags(verify, keep_going, truncated, bind, huge,
				     map_sino);
	self->lock = PyThread_allocate_lock();
	if (!self->lock) {
		PyErr_NoMemory();
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = parload_loader_new(&loader, &opts, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		py_raise_error(rc, &err, NULL);
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
int py_loader_enter(LoaderObject *self)
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
unsigned long py_main_thread;

/*
 * Ctrl-C during a load made on the main thread, the only thread Python
 * runs signal handlers on.  While the workers read a file, that thread
 * waits for them in the library, which gives it turns (the request's
 * on_wait): at once and then every LOOK_SECONDS, it runs the handlers, and
 * an exception one raises (KeyboardInterrupt) stops the load, the workers
 * at their next read, and stays set for the caller.  A load that ends
 * within the first interval costs one look.  A stream is read on this
 * thread itself and looks at each of its batches (records as they arrive,
 * CANCEL_BATCH_BYTES apiece).  Batches would cost a file's load a pass of
 * the workers each: fresh interpreters loading the reference stream took
 * a median 43.4 ms on the main thread in batches of 64 MiB against 38.6
 * ms in one pass (12 alternated rounds, 2 threads).
 */
#define CANCEL_BATCH_BYTES ((uint64_t)64 << 20)
#define LOOK_SECONDS 0.02

/* Run the handlers of the signals that came (on the main thread, without
 * the GIL); true when one raised. */
static bool signals_raised(void)
{
	PyGILState_STATE g = PyGILState_Ensure();
	int stop = PyErr_CheckSignals() < 0;

	PyGILState_Release(g);
	return stop;
}

/* on_batch of a stream's load made on the main thread. */
static int batch_check_signals(const parload_batch *batch, void *arg)
{
	return signals_raised();
}

/* on_wait of a file's load made on the main thread. */
static int wait_check_signals(void *arg)
{
	return signals_raised();
}

void py_request_signals(parload_request *req)
{
	if (PyThread_get_thread_ident() != py_main_thread)
		return;
	req->on_wait = wait_check_signals;
	req->wait_interval = LOOK_SECONDS;
}

/* Whether src is a stream (a pipe, socket or device, read as it comes);
 * a source the load cannot stat is not: the load says what is wrong. */
static bool is_stream(const source *src)
{
	const char *path = py_source_path(src);
	struct stat st;

	if (src->npaths)
		return false;
	if (path ? stat(path, &st) != 0 : fstat(src->fd, &st) != 0)
		return false;
	return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* One load.  The dataset, on success, still has to be wrapped. */
static int loader_run(LoaderObject *self, const source *src,
		      const parload_selection *sel, const parload_buffers *into,
		      parload_cache cache, const parload_correction *corr,
		      parload_dataset *out)
{
	parload_request req;
	parload_error err;
	int rc;

	parload_request_init(&req);
	py_source_request(src, &req.source);
	req.selection = sel;
	req.into = into;
	req.cache = cache;
	req.correct = corr;
	/* Ctrl-C stops the strategy that looks for stops (the parallel
	 * one); a stream at its batches, in view layout, and while it waits
	 * for a FIFO's writer, whatever the strategy. */
	if (PyThread_get_thread_ident() == py_main_thread) {
		const bool stream = is_stream(src);

		if (stream || (parload_strategy_caps(self->strategy) &
			       PARLOAD_CAP_BATCHES))
			py_request_signals(&req);
		if (stream && sel->layout == PARLOAD_LAYOUT_VIEWS &&
		    (parload_strategy_caps(self->strategy) &
		     PARLOAD_CAP_BATCHES)) {
			req.on_batch = batch_check_signals;
			req.batch_bytes = CANCEL_BATCH_BYTES;
		}
	}
	memset(&err, 0, sizeof(err));
	if (py_loader_enter(self))
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
		py_raise_error(rc, &err, src->name);
		return -1;
	}
	return 0;
}

#define SELECT_KWARGS "views", "rows", "cols", "layout"

#define CORRECT_KWARGS "flats", "darks", "reduce", "minus_log", "bin"

/* A TIFF or HDF5 source's dataset= and frames=, and confine= (the files
 * a .nhdr or HDF5 file names): py_source_container. */
#define CONTAINER_KWARGS "dataset", "frames", "confine"

static PyObject *Loader_load(LoaderObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"source", "raw", SELECT_KWARGS, "cache",
				 CORRECT_KWARGS, CONTAINER_KWARGS, NULL};
	PyObject *obj, *raw = Py_None, *dataset = Py_None;
	const char *frames = NULL;
	PyObject *views = Py_None, *rows = Py_None, *cols = Py_None;
	PyObject *refs[3] = { Py_None, Py_None, Py_None }; /* flats darks bin */
	const char *layout = NULL, *cache_name = NULL, *reduce = NULL;
	parload_cache cache;
	int minus_log = 0, confine = 0;
	parload_selection sel;
	parload_dataset ds;
	py_correction corr;
	source src;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOOzzOOzpOOzp:load",
					 kwlist, &obj, &raw, &views, &rows,
					 &cols, &layout, &cache_name, &refs[0],
					 &refs[1], &reduce, &minus_log,
					 &refs[2], &dataset, &frames,
					 &confine))
		return NULL;
	if (py_selection_from(views, rows, cols, layout, &sel) ||
	    py_cache_from(cache_name, &cache) ||
	    py_source_parse(obj, raw, &src) ||
	    py_source_container(&src, dataset, frames, confine))
		return NULL;
	if (py_correction_for(&src, self->flags & PARLOAD_OPT_ALLOW_TRUNCATED,
			      refs, reduce, minus_log, raw, &corr)) {
		py_source_clear(&src);
		return NULL;
	}
	memset(&ds, 0, sizeof(ds));
	rc = loader_run(self, &src, &sel, NULL, cache, py_correction_of(&corr),
			&ds);
	obj = rc ? NULL : py_dataset_wrap(&ds, src.name, NULL, NULL, NULL);
	py_correction_clear(&corr);
	py_source_clear(&src);
	return obj;
}

/* parload's own file header of a source (one file or a descriptor)
 * without moving a descriptor's offset. */
static int source_header(const source *src, parload_file_header *h)
{
	parload_error err;
	unsigned char buf[PARLOAD_FILE_HEADER_SIZE];
	ssize_t n;
	int rc;

	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	if (src->path) {
		rc = parload_read_header(py_source_path(src), h, &err);
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
		py_raise_error(rc, &err, src->name);
		return -1;
	}
	return 0;
}

/* Resolve sel against h; the resolver knows no file, so its message gets
 * the file's name (path: in the file system's encoding). */
int py_resolve_shape(const parload_desc *d, const parload_selection *sel,
		     const char *path, PyObject *name, parload_shape *shape)
{
	char text[2 * sizeof(((parload_error *)0)->message)];
	parload_error err;
	size_t n;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = parload_selection_resolve(d, sel, shape, &err);
	if (rc) {
		snprintf(text, sizeof(text), "%s: %s", path, err.message);
		n = strlen(text);
		if (n >= sizeof(err.message))
			n = sizeof(err.message) - 1;
		memcpy(err.message, text, n);
		err.message[n] = '\0';
		py_raise_error(rc, &err, name);
		return -1;
	}
	return 0;
}

/* What a source holds and a selection resolved against it. */
static int source_shape(const source *src, int allow_truncated,
			const parload_selection *sel, parload_desc *d,
			parload_shape *shape)
{
	if (py_describe(src, allow_truncated, d, NULL))
		return -1;
	return py_resolve_shape(d, sel, PyBytes_AS_STRING(src->name_bytes),
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

/* A caller's array for load_into(), or one made when it is None: a new
 * reference, or NULL with an exception. */
static PyObject *into_array(PyObject *given, PyArray_Descr *want, int nd,
			    npy_intp *dims, const char *what)
{
	if (given == Py_None) {
		Py_INCREF(want);
		return PyArray_Empty(nd, dims, want, 0);
	}
	if (check_into(given, want, nd, dims, what))
		return NULL;
	return Py_NewRef(given);
}

/* raw_headers= of load_into(): a (views, header) uint8 array for a raw
 * layout with view headers (made when None), None for any other. */
static PyObject *into_raw_headers(PyObject *given, const parload_desc *d,
				  const parload_shape *shape)
{
	npy_intp dims[2] = {(npy_intp)shape->views, (npy_intp)d->header};
	PyArray_Descr *u8;
	PyObject *r;

	if (d->format != PARLOAD_FORMAT_RAW || !d->header) {
		if (given == Py_None)
			Py_RETURN_NONE;
		PyErr_SetString(PyExc_ValueError,
				"raw_headers: the layout has no view headers "
				"of its own (raw= with header=N has)");
		return NULL;
	}
	u8 = PyArray_DescrFromType(NPY_UINT8);
	r = into_array(given, u8, 2, dims, "raw_headers");
	Py_DECREF(u8);
	return r;
}

/* The caller's arrays for a load of h's pixels in shape: pixels checked,
 * headers and raw headers made or checked (*headers, *rh: new
 * references, *rh Py_None for none). */
static int into_arrays(PyObject *pixels, PyObject *headers_in,
		       PyObject *raw_headers, const parload_desc *h,
		       const parload_shape *shape, PyObject **headers,
		       PyObject **rh)
{
	PyArray_Descr *px =
		PyArray_DescrFromType(py_pixel_typenum(h->pixel_type));
	npy_intp dims[3], n = (npy_intp)shape->views;
	int bad;

	py_shape_dims(shape, dims);
	bad = check_into(pixels, px, 3, dims, "pixels");
	Py_XDECREF(px);
	if (bad)
		return -1;
	*headers = into_array(headers_in, py_header_descr, 1, &n, "headers");
	if (!*headers)
		return -1;
	*rh = into_raw_headers(raw_headers, h, shape);
	if (!*rh) {
		Py_CLEAR(*headers);
		return -1;
	}
	return 0;
}

/* The memory of the caller's arrays (rh Py_None: no raw headers). */
static void into_buffers(PyObject *pixels, PyObject *headers, PyObject *rh,
			 parload_buffers *into)
{
	memset(into, 0, sizeof(*into));
	into->pixels = PyArray_DATA((PyArrayObject *)pixels);
	into->pixels_size = PyArray_NBYTES((PyArrayObject *)pixels);
	into->headers = PyArray_DATA((PyArrayObject *)headers);
	into->headers_size = PyArray_NBYTES((PyArrayObject *)headers);
	if (rh != Py_None) {
		into->raw_headers = PyArray_DATA((PyArrayObject *)rh);
		into->raw_headers_size = PyArray_NBYTES((PyArrayObject *)rh);
	}
}

static PyObject *Loader_load_into(LoaderObject *self, PyObject *args,
				  PyObject *kw)
{
	static char *kwlist[] = {"source", "pixels", "headers", "raw",
				 "raw_headers", SELECT_KWARGS, "cache",
				 CONTAINER_KWARGS, NULL};
	PyObject *obj, *pixels, *headers = Py_None, *result = NULL;
	PyObject *dataset = Py_None;
	const char *frames = NULL;
	PyObject *raw = Py_None, *raw_headers = Py_None, *rh = NULL;
	PyObject *views = Py_None, *rows = Py_None, *cols = Py_None;
	const char *layout = NULL, *cache_name = NULL;
	int confine = 0;
	parload_cache cache;
	parload_selection sel;
	parload_desc h;
	parload_shape shape;
	parload_buffers into;
	parload_dataset ds;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOOOzzOzp:load_into",
					 kwlist, &obj, &pixels, &headers, &raw,
					 &raw_headers, &views, &rows, &cols,
					 &layout, &cache_name, &dataset,
					 &frames, &confine))
		return NULL;
	if (py_selection_from(views, rows, cols, layout, &sel) ||
	    py_cache_from(cache_name, &cache) ||
	    py_source_parse(obj, raw, &src) ||
	    py_source_container(&src, dataset, frames, confine))
		return NULL;
	if (source_shape(&src, self->flags & PARLOAD_OPT_ALLOW_TRUNCATED, &sel,
			 &h, &shape) ||
	    into_arrays(pixels, headers, raw_headers, &h, &shape, &headers,
			&rh))
		goto out;
	into_buffers(pixels, headers, rh, &into);
	memset(&ds, 0, sizeof(ds));
	if (loader_run(self, &src, &sel, &into, cache, NULL, &ds) == 0)
		result = py_dataset_wrap(&ds, src.name, pixels, headers,
					 rh != Py_None ? rh : NULL);
	Py_DECREF(headers);
	Py_DECREF(rh);
out:
	py_source_clear(&src);
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
	 "load(source, *, raw=None, views=None, rows=None, cols=None,\n"
	 "     layout=None, cache=None, flats=None, darks=None,\n"
	 "     reduce='mean', minus_log=False, bin=1, dataset=None,\n"
	 "     frames=None, confine=False)\n"
	 "--\n\n"
	 "Load source and return a Dataset.\n\n"
	 "source is a path (str, bytes, os.PathLike), a list or tuple of\n"
	 "paths read as one stream (views numbered across the files in the\n"
	 "order given), a file descriptor or a file object (a regular file is\n"
	 "read with the loader's strategy, a pipe or socket as a stream).  A\n"
	 "path is what its first bytes say, else its name: a NRRD header\n"
	 "(.nhdr, .nrrd), a NumPy .npy, a TIFF, an HDF5 file, else parload's\n"
	 "own format; confine=True keeps a .nhdr's data files (and the files an HDF5 file's\n"
	 "external links and storage name) in its directory, as in\n"
	 "parload.load(): for files from someone else.\n"
	 "raw describes a raw layout, as the command's --raw: the text\n"
	 "\"width=W,height=H,type=T[,offset=N][,header=N][,gap=N][,count=N]\"\n"
	 "(or \"@PATH\" of a file holding it), or a dict of the same keys\n"
	 "(values int or str such as \"64K\").  T is u8 u16 i16 u32 i32 f32\n"
	 "f64, each with an optional le or be, or mono10p mono12p\n"
	 "mono12packed u12msb (unpacked into uint16).  A raw layout needs the\n"
	 "parallel strategy; given for a file of parload's own format it\n"
	 "overrides the file's header.  views takes a slice or a range of\n"
	 "file views; rows and cols a slice or a (start, stop) pair of\n"
	 "detector rows and columns (no step).  layout is \"views\" (pixels\n"
	 "[view, row, col]) or \"sinograms\" ([row, view, col]).  Slices\n"
	 "follow Python's meaning, except that one reaching past the end or\n"
	 "selecting nothing raises parload.Error (PARLOAD_ESELECT).  Any\n"
	 "selection but the whole file needs the parallel strategy, and CRCs\n"
	 "can be verified only for whole rows and columns (PARLOAD_ENOTSUP).\n"
	 "The GIL is released while the file loads.  Ctrl-C raises\n"
	 "KeyboardInterrupt: a file's load on the main thread with the\n"
	 "parallel strategy runs Python's signal handlers every 20 ms while\n"
	 "the workers read, and stops them before their next read, in any\n"
	 "layout; a pipe's stops at its next batch (every 64 MiB of pixels\n"
	 "in view layout); any other load raises it once it returns.\n\n"
	 "cache says what the load leaves in the page cache: \"keep\" (the\n"
	 "default, None too: buffered reads, the file stays cached),\n"
	 "\"drop\" (its pages leave the cache once they are in the dataset:\n"
	 "a large file read once), \"direct\" (O_DIRECT, no page cache; the\n"
	 "parallel strategy; a file system that refuses it, a descriptor or\n"
	 "another strategy drops instead) or \"auto\" (keep a cached file or\n"
	 "one that fits in half the free memory, else drop).\n"
	 "Dataset.stats[\"cache\"] says the mode used; another name raises\n"
	 "ValueError.  A pipe or socket is read as keep.\n\n"
	 "Corrections: flats and darks (each a path or a list of paths, read\n"
	 "with raw= unless it is a .nhdr, not a descriptor or a file object,\n"
	 "which raise TypeError; the string \"same\": the flats or darks\n"
	 "stored in the scan's own HDF5 file, its dataset with frames=\n"
	 "\"flats\" or \"darks\" (DXchange data_white and data_dark, NXtomo\n"
	 "image_key 1 and 2; another scan raises ValueError); or an array of\n"
	 "shape (N, H, W) or (H, W) with the scan's height and width,\n"
	 "converted to float32)\n"
	 "are reduced per pixel (reduce='mean' or 'median'; an even count's\n"
	 "median is the mean of the two middle values) over the selected\n"
	 "rows and columns, and the workers deliver float32 pixels:\n"
	 "(P - D) / max(F - D, 1e-6); darks only P - D; flats only\n"
	 "P / max(F, 1e-6); and with minus_log=True then -ln(max(x, 1e-6)).\n"
	 "The clamping to 1e-6 is the one difference from TomoPy's normalize\n"
	 "and minus_log; NaN and infinity propagate as IEEE arithmetic does.\n"
	 "minus_log alone takes the -log of the converted pixels.  bin=N > 1\n"
	 "delivers the mean of each N x N detector pixels (the scan's and\n"
	 "each reference frame's raw pixels binned before the references\n"
	 "are reduced), bins from the selection's first row and column, a\n"
	 "partial bin at the end dropped (Dataset.bin, rows and cols say\n"
	 "what was delivered); a bin larger than the selection raises\n"
	 "parload.Error (PARLOAD_ESELECT).  verify=True checks each\n"
	 "payload's CRC-32C over the raw rows before the correction (whole\n"
	 "payloads only).  A stream (pipe) with a correction raises\n"
	 "parload.Error (PARLOAD_ENOTSUP) in this version."},
	{"load_into", (PyCFunction)(void (*)(void))Loader_load_into,
	 METH_VARARGS | METH_KEYWORDS,
	 "load_into(source, pixels, headers=None, *, raw=None,\n"
	 "          raw_headers=None, views=None, rows=None, cols=None,\n"
	 "          layout=None, cache=None)\n"
	 "--\n\n"
	 "Load source into the caller's arrays and return a Dataset whose\n"
	 "pixels and headers are those arrays.\n\n"
	 "pixels must be a C-contiguous, writeable ndarray of the file's\n"
	 "pixel dtype and the selection's shape; headers (made when None) one\n"
	 "of header_dtype and shape (views,).  empty_like_file() makes both.\n"
	 "source, raw, the selection and cache are load()'s; a raw layout\n"
	 "with view headers reads\n"
	 "them into raw_headers, a (views, header) uint8 array (made when\n"
	 "None).\n"
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

PyTypeObject LoaderType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "parload.Loader",
	.tp_basicsize = sizeof(LoaderObject),
	.tp_dealloc = (destructor)Loader_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc =
		"Loader(*, threads=0, strategy='parallel', io='posix',\n"
		"       buffer_size=None, max_read=0, verify=False,\n"
		"       keep_going=False, allow_truncated=False, numa_bind=True,\n"
		"       hugepages=True, map_sinograms=False)\n"
		"--\n\n"
		"A reusable loader: it discovers the machine and starts its\n"
		"threads once, for programs that load many files.  A context\n"
		"manager (close() on exit).\n\n"
		"threads: worker threads, 0 for one per core, at most\n"
		"THREADS_MAX (4096; more raises parload.Error, PARLOAD_EINVAL,\n"
		"before any thread starts).  strategy: one of\n"
		"strategies().  io and buffer_size (None: the I/O API's own\n"
		"buffering, 0: none): the single-threaded strategies' reads.\n"
		"max_read: the largest read request, 0 for 8 MiB.  verify:\n"
		"check every payload's CRC-32C; keep_going: list bad views in\n"
		"Dataset.bad_views instead of failing.  allow_truncated: load\n"
		"the complete views of a file cut short.  numa_bind and\n"
		"hugepages: NUMA binding and transparent huge pages.\n"
		"map_sinograms: copy sinograms' rows straight from the file\n"
		"mapped into memory (one copy, as fast as views), at the risk\n"
		"of SIGBUS, which kills the process, if another process\n"
		"truncates the file during a load (cache='keep' only).\n\n"
		"One loader runs one load at a time: a second thread's load\n"
		"waits for the first (use one Loader per thread to load\n"
		"concurrently).  A Loader must not be used in a child of\n"
		"fork(): its threads are not there (it raises RuntimeError).",
	.tp_methods = Loader_methods,
	.tp_getset = Loader_getset,
	.tp_init = (initproc)Loader_init,
	.tp_new = PyType_GenericNew,
};

/* d["chunks"]: the pieces the source is stored in, (views, rows,
 * columns) each (parload_describe_chunks); -1 with an exception. */
static int put_chunks(PyObject *d, const uint64_t chunk[3])
{
	PyObject *t = Py_BuildValue("(KKK)", (unsigned long long)chunk[0],
				    (unsigned long long)chunk[1],
				    (unsigned long long)chunk[2]);
	int rc = t ? PyDict_SetItemString(d, "chunks", t) : -1;

	Py_XDECREF(t);
	return rc;
}

/* ---------------------------------------------------------------------
 * Module functions: headers, buffers
 * ------------------------------------------------------------------- */

PyObject *py_mod_read_header(PyObject *mod, PyObject *arg)
{
	parload_file_header h;
	source src;
	PyObject *r;

	if (py_source_parse(arg, NULL, &src))
		return NULL;
	if (src.npaths) {
		py_source_clear(&src);
		PyErr_SetString(PyExc_TypeError,
				"read_header reads one file's header, not a "
				"list's");
		return NULL;
	}
	r = source_header(&src, &h) ? NULL : py_file_header_new(&h);
	py_source_clear(&src);
	return r;
}

PyObject *py_mod_describe(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"source", "raw", "allow_truncated",
				 CONTAINER_KWARGS, NULL};
	PyObject *obj, *raw = Py_None, *r = NULL, *dataset = Py_None;
	const char *frames = NULL;
	int truncated = 0, confine = 0;
	uint64_t chunk[3];
	parload_desc d;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OpOzp:describe", kwlist,
					 &obj, &raw, &truncated, &dataset,
					 &frames, &confine))
		return NULL;
	if (py_source_parse(obj, raw, &src) ||
	    py_source_container(&src, dataset, frames, confine))
		return NULL;
	if (py_describe(&src, truncated, &d, chunk) == 0 &&
	    (r = py_desc_dict(&d)) != NULL && put_chunks(r, chunk)) {
		Py_DECREF(r);
		r = NULL;
	}
	py_source_clear(&src);
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

/* Buffers for the selection sel of a file with header h, allocated as
 * the library allocates a dataset's (flags: PARLOAD_OPT_NO_HUGEPAGES or
 * 0), in a new "parload.buffers" capsule that frees them; *out: the
 * buffers.  NULL with an exception that names name. */
PyObject *py_buffers_new(const parload_desc *h,
			 const parload_selection *sel, unsigned flags,
			 PyObject *name, parload_buffers **out)
{
	parload_buffers *b = PyMem_Calloc(1, sizeof(*b));
	parload_error err;
	PyObject *cap;
	int rc;

	if (!b)
		return PyErr_NoMemory();
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	rc = parload_buffers_alloc(b, h, sel, flags, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		PyMem_Free(b);
		return py_raise_error(rc, &err, name);
	}
	cap = PyCapsule_New(b, "parload.buffers", buffers_capsule_free);
	if (!cap) {
		parload_buffers_free(b);
		PyMem_Free(b);
		return NULL;
	}
	*out = b;
	return cap;
}

PyObject *py_mod_empty_like_file(PyObject *mod, PyObject *args,
					PyObject *kw)
{
	static char *kwlist[] = {"source", "raw", SELECT_KWARGS, "hugepages",
				 CONTAINER_KWARGS, NULL};
	PyObject *obj, *raw = Py_None, *dataset = Py_None;
	const char *frames = NULL;
	PyObject *views = Py_None, *rows = Py_None, *cols = Py_None;
	PyObject *cap = NULL, *px = NULL, *hd = NULL, *r = NULL;
	const char *layout = NULL;
	int huge = 1, confine = 0;
	parload_selection sel;
	parload_desc h;
	parload_shape shape;
	parload_buffers *b;
	npy_intp dims[3], n;
	source src;

	if (!PyArg_ParseTupleAndKeywords(args, kw,
					 "O|$OOOOzpOzp:empty_like_file", kwlist,
					 &obj, &raw, &views, &rows, &cols,
					 &layout, &huge, &dataset, &frames,
					 &confine))
		return NULL;
	if (py_selection_from(views, rows, cols, layout, &sel) ||
	    py_source_parse(obj, raw, &src) ||
	    py_source_container(&src, dataset, frames, confine))
		return NULL;
	if (source_shape(&src, 0, &sel, &h, &shape))
		goto out;
	cap = py_buffers_new(&h, &sel, huge ? 0 : PARLOAD_OPT_NO_HUGEPAGES,
			     src.name, &b);
	if (!cap)
		goto out;
	py_shape_dims(&shape, dims);
	n = (npy_intp)shape.views;
	px = py_array_over(PyArray_DescrFromType(py_pixel_typenum(h.pixel_type)),
			   3, dims, NULL, b->pixels, Py_NewRef(cap));
	hd = py_array_over(py_new_header_descr(), 1, &n, NULL, b->headers,
			   Py_NewRef(cap));
	if (px && hd)
		r = PyTuple_Pack(2, px, hd);
out:
	Py_XDECREF(px);
	Py_XDECREF(hd);
	Py_XDECREF(cap);
	py_source_clear(&src);
	return r;
}

int py_set_main_thread(void)
{
	PyObject *threading = PyImport_ImportModule("threading"), *t = NULL;
	PyObject *ident = NULL;

	if (threading)
		t = PyObject_CallMethod(threading, "main_thread", NULL);
	if (t)
		ident = PyObject_GetAttrString(t, "ident");
	if (ident)
		py_main_thread = PyLong_AsUnsignedLong(ident);
	Py_XDECREF(ident);
	Py_XDECREF(t);
	Py_XDECREF(threading);
	return ident && !PyErr_Occurred() ? 0 : -1;
}
