/*
 * nrrd_files.c - what the NRRD header's parser (nrrd.c) leans on: the
 * messages of a header's lines and data files, and the data files it
 * names: one file, a LIST of them or a pattern (a printf format and its
 * range), each joined to the header's directory; their number against
 * the views; with PARLOAD_SRC_CONFINE each resolved below that directory
 * before any is opened, and checked again once opened; and where the data
 * starts in each (byte skip, line skip, the end of an attached header).
 * It calls nothing of nrrd.c.
 */
#include "formats/nrrd/nrrd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages ---- */

static int vfail(hdr *h, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static int vfail(hdr *h, int code, const char *fmt, va_list ap)
{
	char what[1024];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (h->field)
		return parload__fail_path(h->err, code, 0, h->path,
					  "line %u: field '%s': %s", h->line,
					  PARLOAD__Q(h->field), what);
	return parload__fail_path(h->err, code, 0, h->path, "line %u: %s",
				  h->line, what);
}

int parload__nrrd_fail(hdr *h, int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(h, code, fmt, ap);
	va_end(ap);
	return rc;
}

/* The line that names data file i: the "data file" line, or the list's
 * line of it. */
unsigned parload__nrrd_file_line(unsigned line, bool list, size_t i)
{
	return list ? line + 1 + (unsigned)i : line;
}

/* "HEADER: line L: data file 'FILE': TEXT"; without a line (the data
 * follows the header), the file's own failure. */
static int vfail_file(parload_error *err, const char *header, unsigned line,
		      const char *file, int code, int sys_errno,
		      const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));

static int vfail_file(parload_error *err, const char *header, unsigned line,
		      const char *file, int code, int sys_errno,
		      const char *fmt, va_list ap)
{
	char what[1024];

	if (!line)
		return parload__vfail(err, code, sys_errno, file, PARLOAD_NONE,
				      PARLOAD_NONE, fmt, ap);
	vsnprintf(what, sizeof(what), fmt, ap);
	return parload__fail_path(err, code, sys_errno, header,
				  "line %u: data file '%s': %s", line,
				  PARLOAD__Q(file), what);
}

/* The same for data file i of the header being read. */
int parload__nrrd_fail_file(hdr *h, size_t i, int code, int sys_errno,
		     const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail_file(h->err, h->path,
			h->form == DF_NONE ? 0 :
			parload__nrrd_file_line(h->df_line, h->form == DF_LIST, i),
			h->paths[i], code, sys_errno, fmt, ap);
	va_end(ap);
	return rc;
}

int parload__nrrd_vfail(const parload__nrrd *n, size_t i, parload_error *err,
			int code, int sys_errno, const char *fmt, va_list ap)
{
	return vfail_file(err, n->header, parload__nrrd_file_line(n->line, n->list, i),
			  n->paths[i], code, sys_errno, fmt, ap);
}

/* A format with exactly one integer conversion (%d %i %u %o %x %X, with
 * flags, a width and a precision of at most 3 digits each) and '%%' for a
 * percent sign; *is_signed tells %d and %i. */
bool parload__nrrd_one_conversion(const char *f, bool *is_signed)
{
	int convs = 0;

	for (; *f; f++) {
		int digits = 0;

		if (*f != '%')
			continue;
		if (*++f == '%')
			continue;
		while (*f && strchr("-+ 0#", *f))
			f++;
		for (; *f >= '0' && *f <= '9'; f++)
			digits++;
		if (*f == '.')
			for (f++; *f >= '0' && *f <= '9'; f++)
				digits++;
		if (!*f || !strchr("diuoxX", *f) || digits > 6)
			return false;
		*is_signed = *f == 'd' || *f == 'i';
		convs++;
	}
	return convs == 1;
}

/* ---- the data files ---- */

int parload__nrrd_nomem(hdr *h)
{
	return parload__fail_nomem(h->err, h->path);
}

/* Append the directory of the header and name (unless absolute). */
int parload__nrrd_add_path(hdr *h, const char *name)
{
	const size_t dir = name[0] == '/' ? 0 : h->dirlen;
	char *p;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		char **grown = parload__sys_malloc(cap * sizeof(*grown));

		if (!grown)
			return parload__nrrd_nomem(h);
		if (h->n)
			memcpy(grown, h->paths, h->n * sizeof(*grown));
		parload__sys_free(h->paths);
		h->paths = grown;
		h->cap = cap;
	}
	p = parload__sys_malloc(dir + strlen(name) + 1);
	if (!p)
		return parload__nrrd_nomem(h);
	memcpy(p, h->path, dir);
	strcpy(p + dir, name);
	h->paths[h->n++] = p;
	return 0;
}

/* The pattern's files, from first to last by step. */
static int add_pattern(hdr *h, uint64_t n)
{
	char name[PATH_MAX];
	int64_t i = h->first;
	bool is_signed = true;
	int rc = 0;

	(void)parload__nrrd_one_conversion(h->name, &is_signed);
	for (uint64_t k = 0; rc == 0 && k < n; k++, i += h->step) {
		int len;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		/* The format has one checked integer conversion. */
		if (is_signed)
			len = snprintf(name, sizeof(name), h->name, (int)i);
		else
			len = snprintf(name, sizeof(name), h->name,
				       (unsigned)i);
#pragma GCC diagnostic pop
		if (len < 0 || (size_t)len >= sizeof(name))
			return parload__nrrd_fail(h, PARLOAD_EINVAL, "'%s' with %" PRId64
				    " is not a file name", PARLOAD__Q(h->name),
				    i);
		rc = parload__nrrd_add_path(h, name);
	}
	return rc;
}

/* How many files the pattern names. */
static uint64_t pattern_files(const hdr *h)
{
	const int64_t span = h->step > 0 ? h->last - h->first :
					   h->first - h->last;

	return (uint64_t)span / (uint64_t)(h->step > 0 ? h->step : -h->step)
	       + 1;
}

/* n files for the views: whole views in each, the same number. */
static int check_split(hdr *h, uint64_t n, uint64_t views)
{
	const int sub = h->subdim ? h->subdim : h->dim - 1;
	uint64_t pieces = 1;

	if (h->form == DF_ONE || h->form == DF_NONE)
		return 0;
	if (sub < 1 || sub > h->dim)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "subdim %d is not between 1 "
			    "and the dimension, %d", sub, h->dim);
	for (int i = sub; i < h->dim; i++)
		if (__builtin_mul_overflow(pieces, h->sizes[i], &pieces))
			pieces = UINT64_MAX; /* more than MAX_FILES */
	if (sub < h->dim && n != pieces)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "%" PRIu64 " files of %d-D "
			    "pieces, but the sizes make %" PRIu64 " of them",
			    n, sub, pieces);
	if (n > 1 && (sub < 2 || h->dim == 2))
		return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "each of the %" PRIu64
			    " files holds part of a view: parload reads whole "
			    "views from each file", n);
	if (views % n)
		return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "%" PRIu64 " slices do not "
			    "split evenly over %" PRIu64 " files", views, n);
	return 0;
}

/* The data files of the header: its own path (attached), one name, the
 * pattern's or the list's (already added). */
int parload__nrrd_data_files(hdr *h, uint64_t views)
{
	uint64_t n = h->form == DF_PATTERN ? pattern_files(h) :
		     h->form == DF_LIST    ? h->n :
					     1;
	int rc;

	if (h->form != DF_NONE) {
		h->field = "data file";
		h->line = h->df_line;
	}
	if (h->form == DF_LIST && n == 0)
		return parload__nrrd_fail(h, PARLOAD_EINVAL, "LIST names no files");
	if (n > MAX_FILES)
		return parload__nrrd_fail(h, PARLOAD_ENOTSUP, "%" PRIu64 " files: parload "
			    "reads at most %" PRIu64, n, MAX_FILES);
	rc = check_split(h, n, views);
	if (rc || h->form == DF_LIST)
		return rc;
	if (h->form == DF_PATTERN)
		return add_pattern(h, n);
	if (h->form == DF_ONE)
		return parload__nrrd_add_path(h, h->name);
	/* Attached: the header's own file, by its path as given. */
	h->dirlen = 0;
	return parload__nrrd_add_path(h, h->path);
}

/* ---- where the data files lie ---- */

/* PARLOAD_SRC_CONFINE: every data file, its links resolved, in the
 * header's directory or below it, before any is opened.  (The data of an
 * attached header is the header itself, which the caller named.) */
int parload__nrrd_confine(hdr *h)
{
	char dir[PATH_MAX], real[PATH_MAX];
	struct stat st;
	int rc;

	if (h->form == DF_NONE)
		return 0;
	rc = parload__dir_of(h->path, dir, h->err);
	if (rc == 0 && !(h->ids = parload__sys_malloc(h->n * sizeof(*h->ids))))
		return parload__nrrd_nomem(h);
	for (size_t i = 0; rc == 0 && i < h->n; i++) {
		/* What the open finds must be the file resolved here (the
		 * device and inode): not one swapped in meanwhile. */
		if (!realpath(h->paths[i], real) ||
		    parload__sys_stat(real, &st) != 0) {
			const int e = errno;
			char why[128];

			return parload__nrrd_fail_file(h, i, PARLOAD_EOPEN, e, "%s",
					 parload__open_why(e, h->paths[i], why,
							   sizeof(why)));
		}
		if (!parload__path_below(dir, real))
			return parload__nrrd_fail_file(h, i, PARLOAD_EOPEN, 0,
					 "the file is '%s', outside '%s', the "
					 "header's directory, to which the "
					 "source is confined "
					 "(PARLOAD_SRC_CONFINE)",
					 PARLOAD__Q(real), PARLOAD__Q(dir));
		h->ids[i].dev = st.st_dev;
		h->ids[i].ino = st.st_ino;
	}
	return rc;
}

static int opened(parload_error *err, const struct parload__file_id *ids,
		  size_t i, const struct stat *st, const char *header,
		  unsigned line, const char *file)
{
	if (!ids || (ids[i].dev == st->st_dev && ids[i].ino == st->st_ino))
		return 0;
	return parload__fail_path(err, PARLOAD_EOPEN, 0, header,
				  "line %u: data file '%s': not the file "
				  "checked under the header's directory: it "
				  "was replaced before it was opened "
				  "(PARLOAD_SRC_CONFINE)",
				  line, PARLOAD__Q(file));
}

int parload__nrrd_opened(const parload__nrrd *n, size_t i,
			 const struct stat *st, parload_error *err)
{
	return opened(err, n->ids, i, st, n->header,
		      parload__nrrd_file_line(n->line, n->list, i), n->paths[i]);
}

/* ---- where the data starts ---- */

/* The offset after n lines from base in the open file fd. */
static int skip_lines(hdr *h, int fd, const char *file, uint64_t base,
		      uint64_t *off)
{
	char buf[4096];
	uint64_t lines = 0, at = base;

	while (lines < h->line_skip) {
		ssize_t got = parload__sys_pread(fd, buf, sizeof(buf),
						 (off_t)at);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return parload__fail(h->err, PARLOAD_EIO, errno, file,
					     PARLOAD_NONE, at, NULL);
		if (got == 0)
			return parload__fail(h->err, PARLOAD_ETRUNCATED, 0,
					     file, PARLOAD_NONE, at,
					     "file ends after %" PRIu64 " of "
					     "the %" PRIu64 " lines that %s "
					     "skips", lines, h->line_skip,
					     h->path);
		for (ssize_t i = 0; i < got && lines < h->line_skip; i++, at++)
			lines += buf[i] == '\n';
	}
	*off = at;
	return 0;
}

/* byte skip -1: the data is the last bytes of file (size bytes). */
static int from_end(hdr *h, const char *file, uint64_t size, uint64_t base,
		    uint64_t bytes, uint64_t *off)
{
	if (size < base + bytes)
		return parload__fail(h->err, PARLOAD_ETRUNCATED, 0, file,
				     PARLOAD_NONE, size,
				     "file is shorter than the %" PRIu64
				     " data bytes %s gives it", bytes, h->path);
	*off = size - bytes;
	return 0;
}

/* A file of several (not the last) ends where its share of the views
 * does: at byte end. */
static int whole_share(hdr *h, const char *file, uint64_t size, uint64_t end)
{
	if (size == end)
		return 0;
	return parload__fail(h->err,
			     size < end ? PARLOAD_ETRUNCATED : PARLOAD_ENOTSUP,
			     0, file, PARLOAD_NONE, size,
			     "file is %" PRIu64 " bytes, not the %" PRIu64
			     " its share of the views of %s ends at: parload "
			     "reads each file's views back to back", size, end,
			     h->path);
}

/* File i's data: its offset (after line skip and byte skip, or the last
 * bytes of the file for byte skip -1), and, for all but the last of
 * several, its size checked: exactly its share of the views. */
static int place(hdr *h, size_t i, uint64_t base, uint64_t bytes,
		 uint64_t *off)
{
	const char *file = h->paths[i];
	const bool sized = h->n > 1 && i + 1 < h->n;
	struct stat st;
	int fd, rc = 0;

	if (!sized && h->line_skip == 0 && h->byte_skip >= 0) {
		*off = base + (uint64_t)h->byte_skip;
		return 0;
	}
	/* O_NONBLOCK: a FIFO, which would wait here for a writer, is
	 * refused below instead (a data file is a regular file). */
	fd = parload__sys_open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY |
					     O_NONBLOCK);
	if (fd < 0) {
		const int e = errno;
		char why[128];

		return parload__nrrd_fail_file(h, i, PARLOAD_EOPEN, e, "%s",
				 parload__open_why(e, file, why, sizeof(why)));
	}
	if (parload__sys_fstat(fd, &st) != 0)
		rc = parload__fail_path(h->err, PARLOAD_EIO, errno, file, NULL);
	else if (!S_ISREG(st.st_mode))
		rc = parload__nrrd_fail_file(h, i, PARLOAD_ENOTREG, 0,
			       "not a regular file (a %s)",
			       parload__file_kind(st.st_mode));
	else
		rc = opened(h->err, h->ids, i, &st, h->path,
			    parload__nrrd_file_line(h->df_line, h->form == DF_LIST, i),
			    file);
	if (rc == 0 && h->byte_skip == -1)
		rc = from_end(h, file, (uint64_t)st.st_size, base, bytes, off);
	else if (rc == 0 && (rc = skip_lines(h, fd, file, base, off)) == 0)
		*off += (uint64_t)h->byte_skip;
	parload__sys_close(fd);
	if (rc == 0 && sized)
		rc = whole_share(h, file, (uint64_t)st.st_size, *off + bytes);
	return rc;
}

/* The offset of every file's data, which must be one. */
int parload__nrrd_offsets(hdr *h, parload_desc *d)
{
	const uint64_t base = h->form == DF_NONE ? h->end : 0;
	uint64_t bytes, off = 0;

	if (__builtin_mul_overflow(d->payload_size, d->count / h->n, &bytes))
		return parload__fail_path(h->err, PARLOAD_EOVERFLOW, 0,
					  h->path, "data sizes overflow");
	for (size_t i = 0; i < h->n; i++) {
		uint64_t o = 0;
		int rc = place(h, i, base, bytes, &o);

		if (rc)
			return rc;
		if (i && o != off)
			return parload__fail_path(h->err, PARLOAD_ENOTSUP, 0,
						  h->path,
						  "the data of '%s' starts at "
						  "byte %" PRIu64 ", that of "
						  "'%s' at %" PRIu64 ": "
						  "parload reads every file "
						  "from one offset",
						  PARLOAD__Q(h->paths[0]), off,
						  PARLOAD__Q(h->paths[i]), o);
		off = o;
	}
	d->offset = off;
	return 0;
}
