/*
 * backend.h - which reader takes a container's files.
 *
 * TIFF and HDF5 each have two back-ends behind one meaning: parload's own
 * reader (tiff_walk.c; hdf5_native.c with hdf5_index.c), fast and without
 * the library, and the library's (libtiff, libhdf5, in their modules).
 * By default (auto) parload's own reads each file it can take and the
 * library each file it cannot, file by file; the environment variables
 * PARLOAD_TIFF and PARLOAD_HDF5 (auto, native, libtiff or libhdf5) pick
 * one back-end alone: native then fails where the library would have been
 * needed, saying why, as a build without the library does.  The tests and
 * the fuzzers prove the two back-ends agree through this choice.
 */
#ifndef PARLOAD_BACKEND_H
#define PARLOAD_BACKEND_H
#include "formats/formats.h"

typedef enum parload__backend {
	PARLOAD__BACKEND_AUTO = 0, /* native, the library where it cannot */
	PARLOAD__BACKEND_NATIVE,   /* parload's own reader alone */
	PARLOAD__BACKEND_LIBRARY   /* libtiff's or libhdf5's alone */
} parload__backend;

/* The back-end of format (PARLOAD_FORMAT_TIFF or _HDF5) that the
 * environment asks for into *out: 0, or PARLOAD_EINVAL naming path and
 * the variable's value where it is none of its names. */
int parload__backend_get(int format, const char *path, parload__backend *out,
			 parload_error *err);

#endif
