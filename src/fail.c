/*
 * fail.c - the variadic doors to parload__vfail (errors.c), which makes
 * every message.  Compiled into the library and into each module
 * (module.c), whose parload__vfail is the library's, through the host
 * table (module_host.c).
 */
#include "internal.h"

#include <errno.h>

int parload__fail(parload_error *err, int code, int sys_errno,
		  const char *path, uint64_t view, uint64_t offset,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	parload__vfail(err, code, sys_errno, path, view, offset, fmt, ap);
	va_end(ap);
	return code;
}

int parload__fail_path(parload_error *err, int code, int sys_errno,
		       const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	parload__vfail(err, code, sys_errno, path, PARLOAD_NONE, PARLOAD_NONE,
		       fmt, ap);
	va_end(ap);
	return code;
}

int parload__fail_nomem(parload_error *err, const char *path)
{
	return parload__fail_path(err, PARLOAD_ENOMEM, ENOMEM, path, NULL);
}
