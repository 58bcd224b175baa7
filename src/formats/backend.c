/*
 * backend.c - PARLOAD_TIFF and PARLOAD_HDF5: which reader takes a
 * container's files (backend.h).
 */
#include "formats/backend.h"

#include <stdlib.h>
#include <string.h>

int parload__backend_get(int format, const char *path, parload__backend *out,
			 parload_error *err)
{
	const bool tiff = format == PARLOAD_FORMAT_TIFF;
	const char *var = tiff ? "PARLOAD_TIFF" : "PARLOAD_HDF5";
	const char *lib = tiff ? "libtiff" : "libhdf5";
	const char *v = getenv(var);

	*out = PARLOAD__BACKEND_AUTO;
	if (!v || !*v || strcmp(v, "auto") == 0)
		return 0;
	if (strcmp(v, "native") == 0) {
		*out = PARLOAD__BACKEND_NATIVE;
		return 0;
	}
	if (strcmp(v, lib) == 0) {
		*out = PARLOAD__BACKEND_LIBRARY;
		return 0;
	}
	return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
				  "%s=%s: auto, native or %s", var,
				  PARLOAD__Q(v), lib);
}
