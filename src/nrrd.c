/*
 * nrrd.c - NRRD detached headers (.nhdr): the layout and the data files
 * they name.
 */
#include "internal.h"

#include <string.h>

int parload__nrrd_read(const char *path, parload__nrrd *out,
		       parload_error *err)
{
	memset(out, 0, sizeof(*out));
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "NRRD headers are not read yet");
}

void parload__nrrd_free(parload__nrrd *n)
{
	for (size_t i = 0; n && i < n->n; i++)
		parload__sys_free(n->paths[i]);
	if (n)
		parload__sys_free(n->paths);
	if (n)
		memset(n, 0, sizeof(*n));
}
