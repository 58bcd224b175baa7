/*
 * errors.c - the one table of error codes (PARLOAD_ERRNO_MAP in parload.h)
 * and the messages that name the file, the view and the byte offset.
 */
#include "base/base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static const struct {
	int code;
	const char *name;
	const char *text;
} errors[] = {
#define PARLOAD_ERRNO_ROW_(name, value, text) { value, "PARLOAD_" #name, text },
	PARLOAD_ERRNO_MAP(PARLOAD_ERRNO_ROW_)
#undef PARLOAD_ERRNO_ROW_
};

static int error_row(int code)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

const char *parload_strerror(int code)
{
	int row;

	if (code == 0)
		return "success";
	row = error_row(code);
	return row < 0 ? "unknown error" : errors[row].text;
}

const char *parload_err_name(int code)
{
	int row;

	if (code == 0)
		return "PARLOAD_OK";
	row = error_row(code);
	return row < 0 ? "PARLOAD_EUNKNOWN" : errors[row].name;
}

/* Append to the message at *n, keeping *n within cap however long the parts
 * are: a message is cut, never overrun. */
static void append(char *m, size_t cap, size_t *n, const char *fmt,
		   va_list ap)
{
	int k;

	if (*n >= cap)
		return;
	k = vsnprintf(m + *n, cap - *n, fmt, ap);
	*n = k < 0 ? cap : PARLOAD__MIN(cap, *n + (size_t)k);
}

static void appendf(char *m, size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void appendf(char *m, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(m, cap, n, fmt, ap);
	va_end(ap);
}

/* err's message from its parts: path (NULL: none), text and tail (the
 * system's reason, the view and offset, printable and short).  The tail is
 * kept whole; path and text are escaped, and where both do not fit in
 * the rest each is shortened in its middle, the shorter kept whole when it
 * takes at most half of the rest. */
static void compose(parload_error *err, const char *path, const char *text,
		    const char *tail)
{
	const size_t cap = sizeof(err->message), t = strlen(tail);
	const size_t plen = path ? strlen(path) : 0, tlen = strlen(text);
	const size_t room = cap - 1 - t - (path ? 2 : 0);
	size_t pb = path ? parload__escaped_len(path, plen) : 0;
	size_t tb = parload__escaped_len(text, tlen), n = 0;
	char *m = err->message;

	if (pb + tb > room) {
		if (tb <= room / 2)
			pb = room - tb;
		else if (pb <= room / 2)
			tb = room - pb;
		else
			pb = room / 2, tb = room - room / 2;
	}
	if (path) {
		n = parload__escape(m, pb + 1, path, plen);
		memcpy(m + n, ": ", 2);
		n += 2;
	}
	n += parload__escape(m + n, tb + 1, text, tlen);
	memcpy(m + n, tail, t + 1);
}

int parload__vfail(parload_error *err, int code, int sys_errno,
		   const char *path, uint64_t view, uint64_t offset,
		   const char *fmt, va_list ap)
{
	char text[8192], tail[128]; /* text: two paths of PATH_MAX and more */
	size_t n = 0;

	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys_errno;
	err->view = view;
	err->offset = offset;
	/* Formatted apart from the message, which an argument may be. */
	if (fmt)
		vsnprintf(text, sizeof(text), fmt, ap);
	else
		snprintf(text, sizeof(text), "%s", parload_strerror(code));
	tail[0] = '\0';
	if (sys_errno)
		appendf(tail, sizeof(tail), &n, ": %s", strerror(sys_errno));
	if (view != PARLOAD_NONE && offset != PARLOAD_NONE)
		appendf(tail, sizeof(tail), &n, " (view %" PRIu64
			", byte offset %" PRIu64 ")", view, offset);
	else if (view != PARLOAD_NONE)
		appendf(tail, sizeof(tail), &n, " (view %" PRIu64 ")", view);
	else if (offset != PARLOAD_NONE)
		appendf(tail, sizeof(tail), &n, " (byte offset %" PRIu64 ")",
			offset);
	compose(err, path, text, tail);
	return code;
}

void parload__error_prefix(parload_error *err, const char *prefix)
{
	char text[sizeof(err->message)];
	const size_t m = strnlen(err->message, sizeof(text) - 1);

	memcpy(text, err->message, m);
	text[m] = '\0';
	compose(err, prefix, text, "");
}

const char *parload__open_why(int sys_errno, const char *path, char *buf,
			     size_t size)
{
	struct rlimit rl;
	struct stat st;

	/* open() says only ENOENT; lstat() tells a link whose target is
	 * missing from a missing name. */
	if (sys_errno == ENOENT && path && parload__sys_lstat(path, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return "cannot open file (a dangling symbolic link)";
	/* A list of many files meets the limit on open files: say which
	 * and how to raise it. */
	if (sys_errno == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		snprintf(buf, size, "cannot open file: the process has its "
			 "limit of %ju open files (RLIMIT_NOFILE; ulimit -n "
			 "raises it)", (uintmax_t)rl.rlim_cur);
		return buf;
	}
	return "cannot open file";
}

int parload__fail_open(parload_error *err, int sys_errno, const char *path)
{
	char why[128];

	return parload__fail_path(err, PARLOAD_EOPEN, sys_errno, path, "%s",
				  parload__open_why(sys_errno, path, why,
						    sizeof(why)));
}
