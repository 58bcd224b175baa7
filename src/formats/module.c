/*
 * module.c - the code that needs libtiff or libhdf5, loaded on first use.
 *
 * Linking libtiff and libhdf5 into libparload would make every process
 * that loads it pay for them at start-up (Debian's libhdf5 brings libcurl
 * and GnuTLS, whose initialisation runs at load: 12 ms and 8 MiB before
 * main).  So the readers and writers that call them (tiff_libtiff.c,
 * hdf5.c) are built as modules, parload_tiff.so and parload_hdf5.so in
 * PARLOAD_MODULEDIR, and opened here the first time a load or a save
 * needs one.  A module calls back into the library only through the host
 * table below (module_host.c is its side), so it depends on nothing but
 * its own library and libc.
 *
 * A binary that has the readers compiled in (the fault-injection build,
 * the test programs, the Python wheel) defines the module tables itself:
 * the weak references below find them, and nothing is opened.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/tiff/tiff.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Makefile.am says where the modules are installed; a build that links
 * the readers in (setup.py's) opens none. */
#ifndef PARLOAD_MODULEDIR
#define PARLOAD_MODULEDIR ""
#endif

/* A module's table, when it is linked into this binary: always in a build
 * without modules (a strong reference, so that a static link takes it
 * in), where one links it in with modules (a weak one).  NULL for a
 * format built without its library. */
#ifdef PARLOAD_MODULES
#define LINKED __attribute__((weak, visibility("hidden")))
#else
#define LINKED __attribute__((visibility("hidden")))
#endif
#if defined(HAVE_TIFF) || defined(PARLOAD_MODULES)
extern const parload__module parload__tiff_module LINKED;
#define TIFF_TABLE &parload__tiff_module
#else
#define TIFF_TABLE NULL
#endif
#if defined(HAVE_HDF5) || defined(PARLOAD_MODULES)
extern const parload__module parload__hdf5_module LINKED;
#define HDF5_TABLE &parload__hdf5_module
#else
#define HDF5_TABLE NULL
#endif

#ifdef PARLOAD_MODULES
/* What a module may call of the library. */
static const parload__host host = {
	.abi = PARLOAD__MODULE_ABI,
	.vfail = parload__vfail,
	.error_prefix = parload__error_prefix,
	.fail_open = parload__fail_open,
	.container_free = parload__container_free,
	.h5index_walk = parload__h5index_walk,
	.chunks_put = parload__chunks_put,
	.chunks_finish = parload__chunks_finish,
	.chunks_reset = parload__chunks_reset,
	.codec_of_hdf5 = parload__codec_of_hdf5,
	.codec_get = parload__codec_get,
	.strips_add = parload__strips_add,
	.strips_clear = parload__strips_clear,
	.strips_find = parload__strips_find,
	.memory_check = parload__memory_check,
	.desc_check = parload_desc_check,
	.pixel_size = parload_pixel_size,
};
#endif

typedef struct slot {
	const char *file;      /* the module's file name */
	const char *table;     /* its table's name */
	const char *what;      /* what it reads */
	const char *lib;       /* the library it needs, how to build it in */
	bool built;            /* configure found its library */
	const parload__module *builtin;
	pthread_once_t once;
	const parload__module *m; /* once loaded */
	char why[400];            /* why not, once tried */
} slot;

static slot slots[] = {
	{ .file = "parload_tiff.so", .table = "parload__tiff_module",
	  .what = "TIFF", .builtin = TIFF_TABLE,
	  .lib = "libtiff (configure --with-tiff, libtiff-dev)",
#ifdef HAVE_TIFF
	  .built = true,
#endif
	  .once = PTHREAD_ONCE_INIT },
	{ .file = "parload_hdf5.so", .table = "parload__hdf5_module",
	  .what = "HDF5", .builtin = HDF5_TABLE,
	  .lib = "HDF5 (configure --with-hdf5, libhdf5-dev)",
#ifdef HAVE_HDF5
	  .built = true,
#endif
	  .once = PTHREAD_ONCE_INIT },
};

#ifdef PARLOAD_MODULES
/* Where s's module is: in PARLOAD_MODULE_DIR when it is set (not for
 * set-user-ID programs), else beside the libparload this code is part of
 * when it is there (a build tree, a moved installation), else where
 * `make install` put it. */
static void module_path(const slot *s, char *path, size_t cap)
{
	const char *d = secure_getenv("PARLOAD_MODULE_DIR");
	Dl_info me;

	if (d && *d) {
		snprintf(path, cap, "%s/%s", d, s->file);
		return;
	}
	if (dladdr((void *)parload__module_get, &me) && me.dli_fname) {
		const char *slash = strrchr(me.dli_fname, '/');
		const int n = slash ? (int)(slash - me.dli_fname) : 0;

		snprintf(path, cap, "%.*s/%s", n, me.dli_fname, s->file);
		if (slash && access(path, F_OK) == 0)
			return;
	}
	snprintf(path, cap, "%s/%s", PARLOAD_MODULEDIR, s->file);
}

static void open_module(slot *s)
{
	char path[4096];
	void *h;
	const parload__module *m;
	void (*init)(const parload__host *);

	module_path(s, path, sizeof(path));
	/* RTLD_NODELETE: decoders and strings of the module outlive any
	 * handle; it is never closed. */
	if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))) {
		snprintf(s->why, sizeof(s->why), "%s support is not "
			 "installed: %s", s->what, dlerror());
		return;
	}
	m = dlsym(h, s->table);
	*(void **)&init = dlsym(h, "parload__module_init");
	if (!m || !init || m->abi != PARLOAD__MODULE_ABI) {
		snprintf(s->why, sizeof(s->why), "%.300s is not a %s module of "
			 "this libparload (interface %u, this one %u)", path,
			 s->what, m ? m->abi : 0u, PARLOAD__MODULE_ABI);
		return;
	}
	init(&host);
	s->m = m;
}
#endif

static void load(slot *s)
{
	if (s->builtin)
		s->m = s->builtin;
	else if (!s->built)
		snprintf(s->why, sizeof(s->why), "this libparload was built "
			 "without %s", s->lib);
#ifdef PARLOAD_MODULES
	else
		open_module(s);
#endif
	if (s->m && s->m->ready)
		s->m->ready();
}

static void load_tiff(void)
{
	load(&slots[0]);
}

static void load_hdf5(void)
{
	load(&slots[1]);
}

/* The module that reads and writes format (PARLOAD_FORMAT_TIFF or
 * PARLOAD_FORMAT_HDF5), or NULL with PARLOAD_ENOTSUP naming path. */
const parload__module *parload__module_get(int format, const char *path,
					   parload_error *err)
{
	const bool tiff = format == PARLOAD_FORMAT_TIFF;
	slot *s = &slots[tiff ? 0 : 1];

	pthread_once(&s->once, tiff ? load_tiff : load_hdf5);
	if (!s->m && err)
		parload__fail_path(err, PARLOAD_ENOTSUP, 0, path, "%s",
				   s->why);
	return s->m;
}
