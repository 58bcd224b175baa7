/*
 * config.h for the Python build (setup.py), which runs no configure: what
 * src/ and mpi/ take from configure's config.h.  setup.py puts this
 * directory on the include path of those sources only, and passes
 * PACKAGE_VERSION (from the file VERSION) on the command line.
 *
 * Everything else configure may define is optional and stays off here:
 * PARLOAD_FAULT_INJECTION (the test seam of src/base/sys.h) and
 * PARLOAD_SANITIZED (--enable-sanitizers).
 */
#ifndef PARLOAD_PY_CONFIG_H
#define PARLOAD_PY_CONFIG_H

/* AC_USE_SYSTEM_EXTENSIONS: the GNU and POSIX interfaces of glibc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION is not defined: build the Python package with setup.py (pip install .)"
#endif

#endif /* PARLOAD_PY_CONFIG_H */
