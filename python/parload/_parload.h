/*
 * _parload.h - what the source files of parload._parload share: the
 * object types, the error and array helpers and the argument parsers,
 * named py_x.
 * Everything here stays inside the module (-fvisibility=hidden); what
 * other modules may use goes through the capsule of _parload_api.h.
 */
#ifndef PARLOAD_PY_INTERNAL_H
#define PARLOAD_PY_INTERNAL_H

#define PY_SSIZE_T_CLEAN
/* One NumPy API table for the whole module, filled by module.c's
 * import_array(). */
#define PY_ARRAY_UNIQUE_SYMBOL parload_py_numpy_api
#ifndef PARLOAD_PY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include "_parload_api.h"
#include <pythread.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <parload.h>

/* errors.c */
/* Text the library hands over (its messages, a load's stats), which may
 * hold bytes of a file (a path, an HDF5 filter's or dataset's name) that
 * are not UTF-8: a str, with such bytes as backslash escapes, never a
 * UnicodeDecodeError.  s NULL: None. */
PyObject *py_text(const char *s);
PyObject *py_raise_error(int code, const parload_error *err,
				 PyObject *filename);
int py_make_errors(PyObject *m);

/* arrays.c */
extern PyTypeObject *FileHeaderType;
extern PyArray_Descr *py_header_descr;
extern PyStructSequence_Desc py_file_header_desc;
int py_pixel_typenum(int pixel_type);
int py_dtype_pixel_type(PyArray_Descr *d, const char *what);
PyObject *py_array_over(PyArray_Descr *descr, int nd, npy_intp *dims,
				npy_intp *strides, void *data, PyObject *base);
PyArray_Descr *py_new_header_descr(void);
PyObject *py_file_header_new(const parload_file_header *h);
PyObject *py_file_header_of(const parload_desc *d);
int py_make_header_dtype(PyObject *m);

/* args.c: what a load reads, a path (bytes, in the file system's
 * encoding), a list of paths read as one stream, or a descriptor; its
 * layout (raw=); and the object that names it in errors. */
typedef struct source {
	PyObject *path; /* bytes, or NULL for a list or fd */
	PyObject *paths; /* a list's paths, a tuple of bytes, or NULL */
	const char **pathv; /* their text, PyMem_Malloc'd */
	size_t npaths;
	int fd;
	PyObject *name; /* for messages and Error.filename */
	PyObject *name_bytes; /* name (a list's first path) in the file
			       * system's encoding */
	int has_desc; /* raw= given: desc is the layout */
	parload_desc desc;
	PyObject *dataset; /* dataset= (bytes), or NULL */
	parload_frames frames; /* frames= */
	unsigned flags; /* PARLOAD_SRC_CONFINE with confine=True */
} source;

void py_source_clear(source *s);
/* str, bytes or os.PathLike. */
int py_is_path(PyObject *obj);
int py_source_parse(PyObject *obj, PyObject *raw, source *s);
/* dataset= (a str, or None) and frames= ("projections", "flats",
 * "darks", or NULL) of a TIFF or HDF5 source, and confine= (the files a
 * .nhdr or an HDF5 file names kept in its directory), into s; -1 with an
 * exception (s cleared). */
int py_source_container(source *s, PyObject *dataset, const char *frames,
			int confine);
/* to: a second reference to what from holds; -1 with an exception. */
int py_source_copy(const source *from, source *to);
/* A keyword's name in the library's table kind (PARLOAD_NAMES_*) into
 * *out (NULL: dflt); -1 with ValueError, the library's message after
 * "what: ". */
int py_name_from(int kind, const char *what, const char *name, int dflt,
		 int *out);
/* frames= (NULL: projections) into *out; -1 with ValueError. */
int py_frames_from(const char *name, parload_frames *out);
int py_raw_parse(PyObject *raw, parload_desc *d);
const char *py_source_path(const source *s);
void py_source_request(const source *s, parload_source *out);
int py_describe(const source *s, int allow_truncated, parload_desc *d,
		uint64_t *chunk);
PyObject *py_desc_dict(const parload_desc *d);
int py_selection_from(PyObject *views, PyObject *rows, PyObject *cols,
			      const char *layout, parload_selection *sel);
void py_shape_dims(const parload_shape *s, npy_intp dims[3]);
int py_cache_from(const char *name, parload_cache *out);
int py_size_arg(PyObject *obj, size_t *out, const char *what);
unsigned py_option_flags(int verify, int keep_going,
				 int allow_truncated, int numa_bind,
				 int hugepages, int map_sinograms);

/* correct.c: the correction keywords of a load (flats=, darks=,
 * reduce=, minus_log=, bin=): on when any asks for one. */
typedef struct py_correction {
	parload_correction corr;
	parload_refs refs[2];     /* darks, flats */
	source src[2];            /* a set given as a source */
	int has_src[2];
	PyArrayObject *arr[2];    /* a set given as an array, float32 */
	int same[2];              /* "same": the scan's own flats, darks */
	int on;
} py_correction;

/* scan: the source the references "same" are read from. */
int py_correction_parse(PyObject *flats, PyObject *darks, const char *reduce,
			int minus_log, PyObject *bin, PyObject *raw,
			const source *scan, py_correction *c);
int py_correction_check(const py_correction *c, const parload_desc *d);
/* The correction of a load of src: kw is flats, darks, bin; the arrays
 * checked against src's frames.  0, or -1 with an exception. */
int py_correction_for(const source *src, int allow_truncated,
		      PyObject *const kw[3], const char *reduce, int minus_log,
		      PyObject *raw, py_correction *c);
const parload_correction *py_correction_of(const py_correction *c);
/* The correction keywords of a load of path (kw: flats, darks, bin), with
 * the scan's raw=, dataset= and frames=, in a holder of their own (*out:
 * the correction, NULL for none), or NULL with an exception; freed by
 * py_correction_free (which takes NULL). */
void *py_correction_new(PyObject *path, PyObject *const kw[3],
			const char *reduce, int minus_log, PyObject *raw,
			PyObject *dataset, const char *frames,
			const parload_correction **out);
void py_correction_free(void *h);
void py_correction_clear(py_correction *c);

/* settings.c: parload._settings */
PyObject *py_mod_settings(PyObject *mod, PyObject *pairs);

/* save.c: parload._save */
PyObject *py_mod_save(PyObject *mod, PyObject *args, PyObject *kw);

/* dataset.c */
extern PyTypeObject DatasetType;
PyObject *py_dataset_wrap(parload_dataset *ds, PyObject *name,
			  PyObject *pixels, PyObject *headers,
			  PyObject *raw_headers);
PyObject *py_raw_headers_array(const unsigned char *data, uint64_t views,
			       uint64_t size, PyObject *base);
PyObject *py_stats_dict(const parload_stats *st);
PyObject *py_range3(uint64_t start, uint64_t n, uint64_t step);

/* loader.c */
typedef struct {
	PyObject_HEAD
	parload_loader *loader;
	PyThread_type_lock lock;
	pid_t pid; /* the process that made the loader and owns its threads */
	unsigned flags;
	parload_strategy strategy;
} LoaderObject;

extern PyTypeObject LoaderType;
extern unsigned long py_main_thread;
/* Ctrl-C while the library waits on this thread, when it is the main one:
 * req's on_wait runs the signal handlers, and one that raises
 * (KeyboardInterrupt) stops the wait (PARLOAD_ECANCELED, the exception
 * set). */
void py_request_signals(parload_request *req);
int py_set_main_thread(void);
int py_loader_enter(LoaderObject *self);
int py_resolve_shape(const parload_desc *h,
			     const parload_selection *sel, const char *path,
			     PyObject *name, parload_shape *out);
PyObject *py_buffers_new(const parload_desc *h,
			 const parload_selection *sel, unsigned flags,
			 PyObject *name, parload_buffers **out);
PyObject *py_mod_read_header(PyObject *mod, PyObject *arg);
PyObject *py_mod_describe(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *py_mod_empty_like_file(PyObject *mod, PyObject *args,
					 PyObject *kw);

/* stream.c */
extern PyTypeObject StreamType;
extern PyTypeObject *BatchType;
extern PyStructSequence_Desc py_batch_desc;

/* writer.c */
extern PyTypeObject WriterType;

/* A lock for objects that serve one call at a time (a loader, a writer).
 * Waiting for it releases the GIL. */
static inline void lock_take(PyThread_type_lock lock)
{
	if (!PyThread_acquire_lock(lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
}

/* Set the next item i of the struct sequence t to expr (a new reference
 * held in v), or free t and return NULL when expr fails. */
#define PUT_(expr)                                                           \
	do {                                                                 \
		if (!(v = (expr))) {                                         \
			Py_DECREF(t);                                        \
			return NULL;                                         \
		}                                                            \
		PyStructSequence_SET_ITEM(t, i++, v);                        \
	} while (0)

#endif /* PARLOAD_PY_INTERNAL_H */
