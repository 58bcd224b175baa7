/*
 * base.h - the floor every layer stands on: the public header, the system
 * seam (sys.h: every system call the library makes, through
 * parload__sys_x), a few numbers, and the messages (errors.c, fail.c: one
 * table of codes, every failure naming its file, view and byte offset).
 * Nothing here knows what a load is.
 */
#ifndef PARLOAD_BASE_H
#define PARLOAD_BASE_H

#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "parload.h"
/* System, allocation, thread and hwloc calls go through parload__sys_x:
 * the plain call, or a fault-injection wrapper (tests/fault/fault.h). */
#include "sys.h"

#define PARLOAD__UNUSED(x) ((void)(x))
#define PARLOAD__MIN(a, b) ((a) < (b) ? (a) : (b))
#define PARLOAD__MAX(a, b) ((a) > (b) ? (a) : (b))

/* Linux moves at most this many bytes in one read/pread/preadv call
 * (MAX_RW_COUNT: INT_MAX rounded down to a page). */
#define PARLOAD__KERNEL_MAX_READ ((size_t)0x7ffff000)
#define PARLOAD__DEFAULT_MAX_READ ((size_t)8 << 20)
#define PARLOAD__HUGE_PAGE ((size_t)2 << 20)
#define PARLOAD__PAGE ((size_t)4096)

/* a * b into *out: false when it does not fit in 64 bits (*out then
 * unset).  Every count read from a file is multiplied by a size through
 * this before it sizes anything. */
static inline bool parload__mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* Whether this host stores its numbers big-endian. */
static inline bool parload__host_be(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 0;
}

/* ---- errors.c: the error table and the messages ---- */

/* Fill *err (when not NULL) and return code.  The message reads
 * "PATH: TEXT (view V, byte offset O)", TEXT being fmt or, when fmt is NULL,
 * parload_strerror(code); the parenthesis names only what is not
 * PARLOAD_NONE, and sys_errno, when not 0, is appended as ": strerror".
 * PATH and TEXT are escaped (parload__escape); where the message would
 * not fit in parload_error.message, the reason and the parenthesis are
 * kept whole and PATH and TEXT are shortened in their middle. */
int parload__fail(parload_error *err, int code, int sys_errno,
		  const char *path, uint64_t view, uint64_t offset,
		  const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
int parload__vfail(parload_error *err, int code, int sys_errno,
		   const char *path, uint64_t view, uint64_t offset,
		   const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));
/* The same with no view and no offset: a failure of the file as a whole. */
int parload__fail_path(parload_error *err, int code, int sys_errno,
		       const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Put "prefix: " before err's message, as parload__vfail puts a path. */
void parload__error_prefix(parload_error *err, const char *prefix);
/* PARLOAD_ENOMEM for path, with the code's own text. */
int parload__fail_nomem(parload_error *err, const char *path);

/* fail.c: text as a message shows it.  Every byte a terminal would act on
 * instead of printing is escaped: \n, \t, \r, and \xNN for the other
 * control bytes, bytes that are not well-formed UTF-8, C1 controls and the
 * Unicode marks that reorder text; the rest (backslash included) is kept,
 * so escaping escaped text changes nothing.  parload__escape writes the
 * escaped s[0..len) into dst, at most size bytes with the NUL, leaving out
 * its middle ("first part...last part") when it is longer, and returns the
 * bytes written; parload__escaped_len is its whole length. */
size_t parload__escape(char *dst, size_t size, const char *s, size_t len);
size_t parload__escaped_len(const char *s, size_t len);
/* The well-formed UTF-8 character s[0..n) starts with (n >= 1): the bytes
 * it takes (1 to 4) and its code point in *cp; 0 when it is not well
 * formed (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, cut short).  The one UTF-8 rule: messages (escaping what is
 * not well formed) and the JSON reader (refusing it) use it. */
size_t parload__utf8(const unsigned char *s, size_t n, uint32_t *cp);
/* A name taken from a file (a .nhdr's data file or field, an HDF5 link, a
 * TIFF string), as a message quotes it ('%s'): s, at most its first n
 * bytes, escaped into buf (size bytes, the middle of a longer name left
 * out); returns buf.  s NULL: "(none)". */
const char *parload__quote(char *buf, size_t size, const char *s, size_t n);
#define PARLOAD__NAME_SIZE 200
/* parload__quote into a buffer of its own, which lives until the end of
 * the enclosing block: fail(..., "data file '%s'", PARLOAD__Q(name)). */
#define PARLOAD__Q(s)                                                          \
	parload__quote((char[PARLOAD__NAME_SIZE]){0}, PARLOAD__NAME_SIZE, (s), \
		       SIZE_MAX)
#define PARLOAD__QN(s, n)                                                      \
	parload__quote((char[PARLOAD__NAME_SIZE]){0}, PARLOAD__NAME_SIZE, (s), \
		       (n))


/* PARLOAD_EOPEN for path and the errno open() gave, naming a dangling
 * symbolic link as such. */
int parload__fail_open(parload_error *err, int sys_errno, const char *path);
/* Its text: "cannot open file" and what errno leaves unsaid (a dangling
 * link, the limit on open files), in buf (size bytes) or a constant. */
const char *parload__open_why(int sys_errno, const char *path, char *buf,
			     size_t size);

#endif /* PARLOAD_BASE_H */
