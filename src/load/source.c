/*
 * source.c - where a load reads from: a path or the caller's descriptor,
 * a regular file (whose size is known up front, so the header is checked
 * against it before anything is allocated) or a stream (a pipe, socket or
 * character device, read once, in order).  Also the file header: read,
 * validated, and fitted to the file's size.
 */
#include "load/load.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- a list's files, on the workers ---- */

/* A list of at least this many files is opened, and after the load
 * checked and closed, by every worker at once, each taking a run of the
 * files: an open, an fstat, a second fstat after the load and a close
 * cost about 5 us a file on one thread.  2,000 one-view files loaded at
 * 0.70x the speed of the same bytes in one file when opened here, at
 * 0.78-0.80x by two workers (the rest is the kernel's, per file). */
#define LIST_ON_WORKERS 64

typedef int (*file_fn)(parload__ctx *c, parload__file *f, uint64_t arg,
		       parload_error *err);

typedef struct file_job {
	parload__ctx *c;
	file_fn fn;
	uint64_t arg;
	size_t from, n;       /* files [from, from + n) */
	unsigned workers;
	size_t *bad;          /* each worker's first failing file, or n */
	int *rc;
	parload_error *errs;
} file_job;

static size_t file_part(size_t n, unsigned w, unsigned workers)
{
	return (size_t)((uint64_t)n * w / workers);
}

static void file_work(void *arg, unsigned w)
{
	file_job *j = arg;
	size_t i = file_part(j->n, w, j->workers);
	const size_t end = file_part(j->n, w + 1, j->workers);

	j->bad[w] = j->n;
	for (; i < end; i++)
		if ((j->rc[w] = j->fn(j->c, &j->c->files[j->from + i], j->arg,
				      &j->errs[w])) != 0) {
			j->bad[w] = i;
			return;
		}
}

/* fn(c, file, arg) on files [from, from + n): on the workers for a long
 * list, each a run of them, else here; the failure of the first failing
 * file in the list's order is the result. */
static int each_file(parload__ctx *c, size_t from, size_t n, file_fn fn,
		     uint64_t arg)
{
	parload__engine *e = c->engine;
	file_job j = { c, fn, arg, from, n, e ? e->workers : 1, NULL, NULL,
		       NULL };
	int rc = 0;

	if (j.workers > 1 && n >= LIST_ON_WORKERS) {
		j.bad = parload__sys_calloc(j.workers, sizeof(*j.bad));
		j.rc = parload__sys_calloc(j.workers, sizeof(*j.rc));
		j.errs = parload__sys_calloc(j.workers, sizeof(*j.errs));
	}
	if (!j.bad || !j.rc || !j.errs ||
	    parload__engine_ready(e, false, NULL) != 0) {
		/* Here, one file after another. */
		for (size_t i = from; rc == 0 && i < from + n; i++)
			rc = fn(c, &c->files[i], arg, c->err);
	} else {
		parload__engine_run(e, file_work, &j, &c->wait);
		for (unsigned w = 0; w < j.workers; w++)
			if (j.bad[w] < n) {
				rc = j.rc[w];
				if (c->err)
					*c->err = j.errs[w];
				break;
			}
	}
	parload__sys_free(j.bad);
	parload__sys_free(j.rc);
	parload__sys_free(j.errs);
	return rc;
}

/* A failure of a file of a list: a driver may name more than the file
 * (a .nhdr's data file: the header and its line too). */
static int member_fail(const parload__ctx *c, const parload__file *f,
		       parload_error *err, int code, int sys_errno,
		       const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int member_fail(const parload__ctx *c, const parload__file *f,
		       parload_error *err, int code, int sys_errno,
		       const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (c->described && c->driver->file_vfail)
		rc = c->driver->file_vfail(c->described, (size_t)(f - c->files),
					   err, code, sys_errno, fmt, ap);
	else
		rc = parload__vfail(err, code, sys_errno, f->path,
				    PARLOAD_NONE, PARLOAD_NONE, fmt, ap);
	va_end(ap);
	return rc;
}

/* A file of a list: opened without looking first (a list holds regular
 * files: one stat less for each of 2,000 frames; O_NONBLOCK, so that a
 * FIFO cannot hang the open) and sized. */
static int open_member(parload__ctx *c, parload__file *f, uint64_t arg,
		       parload_error *err)
{
	struct stat st;
	char why[128];
	int e;

	(void)arg;
	do
		f->fd = parload__sys_open(f->path, O_RDONLY | O_CLOEXEC |
						   O_NOCTTY | O_NONBLOCK);
	while (f->fd < 0 && errno == EINTR);
	if (f->fd < 0) {
		e = errno;
		return member_fail(c, f, err, PARLOAD_EOPEN, e, "%s",
				   parload__open_why(e, f->path, why,
						     sizeof(why)));
	}
	f->own = true;
	if (parload__sys_fstat(f->fd, &st) != 0)
		return member_fail(c, f, err, PARLOAD_EIO, errno,
				   "cannot stat file");
	if (S_ISREG(st.st_mode)) {
		f->size = (uint64_t)st.st_size;
		return c->described && c->driver->file_opened ?
			       c->driver->file_opened(c->described,
						      (size_t)(f - c->files),
						      &st, err) :
			       0;
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		return member_fail(c, f, err, PARLOAD_ENOTREG, 0,
				   "not a regular file: a list holds regular "
				   "files");
	return member_fail(c, f, err, PARLOAD_ENOTREG, 0,
			   "not a regular file (a %s)",
			   parload__file_kind(st.st_mode));
}

static int close_file(parload__ctx *c, parload__file *f, uint64_t arg,
		      parload_error *err)
{
	(void)c;
	(void)arg;
	(void)err;
	if (f->fd >= 0 && f->own)
		parload__sys_close(f->fd);
	return 0;
}

/* Many files, one stream: each a regular file. */
static int open_list(parload__ctx *c, const char *const *paths, size_t n)
{
	int rc;

	c->files = parload__sys_calloc(n, sizeof(*c->files));
	if (!c->files)
		return parload__fail_nomem(c->err, c->path);
	c->nfiles = n;
	for (size_t i = 0; i < n; i++) {
		c->files[i].fd = c->files[i].dfd = -1;
		c->files[i].path = paths[i];
		if (!paths[i])
			return parload__fail_path(c->err, PARLOAD_EINVAL, 0,
						  NULL, "file %zu of the list "
						  "is NULL", i);
	}
	/* The first here, and room for the rest in the descriptor table
	 * while it may still be the process's only thread: the kernel grows
	 * a table that threads share only after an RCU grace period, and it
	 * grew five times over 2,000 files opened by the workers (72 ms
	 * against 30 ms for the whole load).  Best effort: past the limit
	 * on open files, the open that meets it fails with its name. */
	rc = open_member(c, &c->files[0], 0, c->err);
	if (rc == 0 && n >= LIST_ON_WORKERS) {
		const int fd = parload__sys_fcntl(
			c->files[0].fd, F_DUPFD_CLOEXEC,
			c->files[0].fd + (int)PARLOAD__MIN(n, (size_t)4 << 20));

		if (fd >= 0)
			parload__sys_close(fd);
	}
	if (rc == 0)
		rc = each_file(c, 1, n - 1, open_member, 0);
	c->fd = c->files[0].fd;
	c->size = c->files[0].size;
	return rc;
}


/* The source as given: one path (a regular file or a stream: a FIFO's
 * writer waited for when wait) or the caller's descriptor. */
static int open_given(parload__ctx *c, const parload_source *src, bool wait)
{
	parload__file *f = &c->one;
	int rc;

	if (src->path)
		rc = parload__source_open_path(c, f, wait);
	else
		rc = parload__source_take_fd(c, f, src->fd);
	c->fd = f->fd;
	c->size = f->size;
	return rc;
}

/* The source's driver (driver.h) finds what it is; one that describes
 * it names its files (a container's with their strips), else the source
 * is opened as given. */
int parload__source_open(parload__ctx *c, const parload_request *req,
			 bool wait)
{
	const parload_source *src = &req->source;
	parload__described *x;
	int rc;

	c->fd = -1;
	c->one.fd = c->one.dfd = -1;
	c->one.path = c->path;
	c->files = &c->one;
	c->nfiles = 1;
	rc = parload__driver_find(src, &c->driver, c->err);
	if (rc == 0)
		rc = parload__driver_describe(c->driver, src, &c->described,
					      c->err);
	if (rc)
		return rc;
	if ((x = c->described) != NULL) {
		c->strips = x->strips ? &x->got.strips : NULL;
		return open_list(c, (const char *const *)x->got.paths,
				 x->got.n);
	}
	if (src->path_count)
		return open_list(c, src->paths, src->path_count);
	return open_given(c, src, wait);
}

static int close_file(parload__ctx *c, parload__file *f, uint64_t arg,
		      parload_error *err);

void parload__source_close(parload__ctx *c)
{
	parload__cache_close(c);
	if (c->files)
		(void)each_file(c, 0, c->nfiles, close_file, 0);
	if (c->files != &c->one)
		parload__sys_free(c->files);
	parload__driver_drop(c->driver, c->described);
	c->described = NULL;
	c->strips = NULL;
	c->files = NULL;
	c->nfiles = 0;
	c->fd = -1;
}

/* Fit parload's own header h to the file's size: with
 * PARLOAD_OPT_ALLOW_TRUNCATED a file cut short keeps its complete views; a
 * file being followed may be short now (batch.c waits for its views). */
static int fit_native(parload__ctx *c, parload_file_header *h)
{
	uint64_t want;

	if (parload__following(c) && parload_file_size(h, &want) == 0 && c->size < want)
		return 0;

	if ((c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) &&
	    c->size >= PARLOAD_FILE_HEADER_SIZE &&
	    parload_file_size(h, &want) == 0 && c->size < want) {
		/* What an acquisition that died left: its complete views.
		 * A partial record at the end is the truncation itself. */
		h->view_count = (c->size - PARLOAD_FILE_HEADER_SIZE) /
				parload__record_size(h);
		return 0;
	}
	return parload__check_file_size(h, c->size, c->path, c->err);
}

/* parload's own format, its header h validated: fitted to the file, it
 * becomes the load's description. */
static int native(parload__ctx *c, parload_file_header *h)
{
	int rc = 0;

	if (c->nfiles > 1)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a list of files is one stream of a "
					  "raw layout: give its description");
	c->declared = h->view_count;
	/* A stream has no size to check: it must end where the header says
	 * (pipe.c). */
	if (!c->stream)
		rc = fit_native(c, h);
	if (rc == 0) {
		parload_desc_from_header(&c->d, h);
		c->one.first = 0;
		c->one.views = h->view_count;
	}
	return rc;
}

int parload__source_header(parload__ctx *c, const unsigned char *b)
{
	parload_file_header h;
	int rc;

	rc = parload_parse_file_header(b, PARLOAD_FILE_HEADER_SIZE, c->path,
				       &h, c->err);
	return rc ? rc : native(c, &h);
}

/* Whole records in file f (the last one's gap may be missing): *n, and
 * *part, the bytes of a partial record after them (0: none). */
static void whole_records(const parload_desc *d, const parload__file *f,
			  uint64_t *n, uint64_t *part)
{
	const uint64_t body = f->size - d->offset;

	*n = (body + d->gap) / d->record_size;
	*part = body - (*n ? *n * d->record_size - d->gap : 0);
	/* Bytes of the last gap are no record. */
	*part = *n && *part <= d->gap ? 0 : *part - (*n ? d->gap : 0);
}

/* A raw stream of files whose size is below its offset, or that end in a
 * partial record: the error, unless the load may be short. */
static int fit_file(parload__ctx *c, parload__file *f, uint64_t total)
{
	const parload_desc *d = &c->d;
	const bool allow = (c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED) ||
			   parload__following(c);
	uint64_t n = 0, part = 0;

	if (f->size < d->offset) {
		if (allow)
			goto out;
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, f->path,
				     total, f->size,
				     "file is %" PRIu64 " bytes, shorter than "
				     "the layout's offset of %" PRIu64 " bytes",
				     f->size, d->offset);
	}
	whole_records(d, f, &n, &part);
	if (d->count && total + n >= d->count)
		n = d->count - total, part = 0; /* the rest is ignored */
	if (part && !allow)
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, f->path,
				     total + n, parload__record_at(d, n),
				     "file ends inside the record of view %"
				     PRIu64 ": %" PRIu64 " of its %" PRIu64
				     " bytes (a partial record; the file holds %"
				     PRIu64 " complete views)",
				     total + n, part, d->record_size, n);
out:
	f->first = total;
	f->views = n;
	return 0;
}

/* A raw stream: as many views as its files hold, or its count. */
static int fit_raw(parload__ctx *c)
{
	parload_desc *d = &c->d;
	const parload__file *last;
	uint64_t total = 0;
	int rc;

	if (c->stream && !d->count)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a raw stream read from a pipe or "
					  "device needs the layout's count: "
					  "it has no size to count its views");
	if (c->stream) {
		/* Read as it arrives (pipe.c): the count is the promise. */
		c->declared = c->one.views = d->count;
		return 0;
	}
	if (parload__following(c) && (!d->count || c->nfiles > 1))
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "following a raw stream needs one "
					  "file and the layout's count");
	for (size_t i = 0; i < c->nfiles; i++) {
		rc = fit_file(c, &c->files[i], total);
		if (rc)
			return rc;
		total += c->files[i].views;
	}
	c->declared = d->count ? d->count : total;
	last = &c->files[c->nfiles - 1];
	if (total < c->declared && !parload__following(c) &&
	    !(c->opts->flags & PARLOAD_OPT_ALLOW_TRUNCATED))
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, last->path,
				     total, last->size,
				     "the layout's count is %" PRIu64
				     " views, the file%s hold%s %" PRIu64
				     " complete views",
				     d->count, c->nfiles > 1 ? "s" : "",
				     c->nfiles > 1 ? "" : "s", total);
	/* A file being followed holds its count, some of it still to come
	 * (batch.c waits for those views), as parload's own format keeps
	 * its header's view_count. */
	if (parload__following(c))
		total = c->files[0].views = c->declared;
	d->count = total;
	return 0;
}

/* Bytes of strip j of a view that hold its rows: a plain table's strip is
 * read as rows, the view's last one up to the view's end; a chunk is read
 * whole. */
static uint64_t strip_need(const parload__strips *t, const parload_desc *d,
			   uint64_t j)
{
	const uint64_t r0 = j * t->rows;
	const uint64_t rows = PARLOAD__MIN((uint64_t)t->rows, d->height - r0);

	return rows * d->row_size;
}

/* The end, in its file, of what entry e of the table (p) is read from. */
static uint64_t strip_end(const parload__strips *t, const parload_desc *d,
			  const parload__strip *p, uint64_t e)
{
	return p->off + (parload__strips_plain(t) ?
				 strip_need(t, d, e % t->per_view) :
				 p->bytes);
}

/* The farthest end in its file of what run r's strips up to strip upto
 * are read from.  A run's offsets go up, and every strip but the short
 * last one of a view is read whole: the farthest is its last strip's, or
 * the one's before it when the last is short. */
static uint64_t run_end(const parload__ctx *c, uint64_t r, uint64_t upto)
{
	const parload__strips *t = c->strips;
	const parload__strip_run *u = &t->run[r];
	const uint64_t e = PARLOAD__MIN(upto, u->i0 + u->n - 1);
	uint64_t hint = r, end = 0;

	/* Chunks never written read nothing (their offsets are places in
	 * their grid, not in a file). */
	if (u->mask & PARLOAD__STRIP_FILL)
		return 0;

	for (uint64_t i = e > u->i0 ? e - 1 : e; i <= e; i++) {
		const parload__strip p = parload__strip_of(t, i, &hint);

		end = PARLOAD__MAX(end, strip_end(t, &c->d, &p, i));
	}
	return end;
}

/* Strip p, strip j of view v, past its file's end: the file was cut (or
 * its table lies). */
static int strip_past_end(parload__ctx *c, uint64_t e,
			  const parload__strip *p, const parload__file *f)
{
	const parload__strips *t = c->strips;
	const uint64_t v = e / parload__strips_step(t);
	const uint64_t j = e / parload__strips_tiles(t) % t->per_view;

	return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, f->path, v, p->off,
			     "strip %" PRIu64 " of view %" PRIu64 " ends at "
			     "byte %" PRIu64 ", past the end of the file (%"
			     PRIu64 " bytes)", j, v, strip_end(t, &c->d, p, e),
			     f->size);
}

/* The strips table against the description: one entry per strip of
 * every view, each run inside it. */
static int check_table(parload__ctx *c)
{
	const parload__strips *t = c->strips;

	if (t->views != c->d.count ||
	    t->per_view != parload__strips_per_view(c->d.height, t->rows))
		return parload__fail_path(c->err, PARLOAD_ECONTAINER, 0,
					  c->path, "its strips table does not "
					  "match its %" PRIu64 " views of %"
					  PRIu32 " rows", c->d.count,
					  c->d.height);
	if (t->added != t->views * parload__strips_step(t) ||
	    (t->runs && t->run[t->runs - 1].i0 + t->run[t->runs - 1].n >
				t->views * parload__strips_step(t)))
		return parload__fail_path(c->err, PARLOAD_ECONTAINER, 0,
					  c->path, "its strips table holds %"
					  PRIu64 " of its %" PRIu64 " entries",
					  t->added,
					  t->views * parload__strips_step(t));
	return 0;
}

/* Run r: its strips inside its file, whose first view and views (for
 * the messages) it counts in; a view is in the file of its first strip
 * (run_end: a run at a time). */
static int fit_run(parload__ctx *c, uint64_t r)
{
	const parload__strips *t = c->strips;
	const parload__strip_run *u = &t->run[r];
	const uint64_t pv = parload__strips_step(t);
	const uint64_t v0 = (u->i0 + pv - 1) / pv;
	const uint64_t v1 = (u->i0 + u->n + pv - 1) / pv;
	parload__file *f;

	if (u->file >= c->nfiles)
		return parload__fail_path(c->err, PARLOAD_ECONTAINER, 0,
					  c->path, "strip of view %" PRIu64
					  " in file %" PRIu32 " of %zu",
					  u->i0 / pv, u->file, c->nfiles);
	f = &c->files[u->file];
	if (run_end(c, r, UINT64_MAX) > f->size)
		for (uint64_t i = u->i0, hint = r; i < u->i0 + u->n; i++) {
			const parload__strip p = parload__strip_of(t, i, &hint);

			if (strip_end(t, &c->d, &p, i) > f->size)
				return strip_past_end(c, i, &p, f);
		}
	if (v1 > v0) {
		f->first = PARLOAD__MIN(f->first, v0);
		f->views += v1 - v0;
	}
	return 0;
}

/* A container: its table says where every view lies; each file's first
 * view and views (for the messages) from the strips, which must lie in
 * their files. */
static int fit_container(parload__ctx *c)
{
	const parload__strips *t = c->strips;
	int rc;

	if (!t || c->stream)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "a TIFF or HDF5 description comes "
					  "from its file");
	if (parload__following(c))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "a TIFF or HDF5 file cannot be "
					  "followed: its metadata is read "
					  "first, whole");
	for (size_t i = 0; i < c->nfiles; i++) {
		c->files[i].first = UINT64_MAX;
		c->files[i].views = 0;
		c->files[i].strips = t;
		c->files[i].index = (uint32_t)i;
	}
	if ((rc = check_table(c)) != 0)
		return rc;
	for (uint64_t r = 0; r < t->runs; r++)
		if ((rc = fit_run(c, r)) != 0)
			return rc;
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].first == UINT64_MAX)
			c->files[i].first = i ? c->files[i - 1].first +
							c->files[i - 1].views :
						0;
	c->declared = c->d.count;
	return 0;
}

/* Name the source in a description's message ("layout: ..."). */
static int fail_desc(parload__ctx *c, int rc)
{
	if (c->err && c->path)
		parload__error_prefix(c->err, c->path);
	return rc;
}

int parload__source_describe(parload__ctx *c, const parload_desc *given)
{
	parload_file_header h;
	int rc;

	c->d = *given;
	rc = parload_desc_check(&c->d, c->err);
	if (rc)
		return fail_desc(c, rc);
	c->raw_headers = c->d.format == PARLOAD_FORMAT_RAW && c->d.header &&
			 !(c->req->flags & PARLOAD_REQ_NO_RAW_HEADERS);
	if (c->d.format == PARLOAD_FORMAT_RAW)
		return fit_raw(c);
	if (c->d.format != PARLOAD_FORMAT_PARLOAD)
		return fit_container(c);
	/* A header read elsewhere: trusted, fitted to the file. */
	rc = parload_file_header_init(&h, c->d.count, c->d.width, c->d.height,
				      c->d.pixel_type,
				      (c->d.flags & PARLOAD_DESC_CRC32C) ?
					      PARLOAD_FLAG_CRC32C :
					      0);
	if (rc)
		return parload__fail_path(c->err, rc, 0, c->path, NULL);
	return native(c, &h);
}

const parload_desc *parload__source_given(const parload__ctx *c)
{
	if (c->described)
		return &c->described->got.desc;
	return c->req->source.desc;
}

static int file_cut(parload_error *err, const parload__file *f, off_t size)
{
	return parload__fail(err, PARLOAD_ETRUNCATED, 0, f->path,
			     PARLOAD_NONE, (uint64_t)size,
			     "file ended early: it was truncated to %jd bytes "
			     "while being read", (intmax_t)size);
}

/* A container's files, each against the end of its last strip up to
 * stream view last. */
static int recheck_strips(parload__ctx *c, uint64_t last)
{
	const parload__strips *t = c->strips;
	const uint64_t upto = (PARLOAD__MIN(last, t->views - 1) + 1) *
				      parload__strips_step(t) - 1;
	uint64_t *need = parload__sys_calloc(c->nfiles, sizeof(*need));
	struct stat st;
	int rc = 0;

	if (!need)
		return parload__fail_nomem(c->err, c->path);
	for (uint64_t r = 0; r < t->runs && t->run[r].i0 <= upto; r++)
		need[t->run[r].file] = PARLOAD__MAX(need[t->run[r].file],
						    run_end(c, r, upto));
	for (size_t i = 0; rc == 0 && i < c->nfiles; i++) {
		if (!need[i])
			continue;
		if (parload__sys_fstat(c->files[i].fd, &st) != 0)
			rc = parload__fail_path(c->err, PARLOAD_EIO, errno,
						c->files[i].path,
						"cannot stat file");
		else if ((uint64_t)st.st_size < need[i])
			rc = file_cut(c->err, &c->files[i], st.st_size);
	}
	parload__sys_free(need);
	return rc;
}

/* File f against the views of it up to stream view last (arg). */
static int recheck_file(parload__ctx *c, parload__file *f, uint64_t last,
			parload_error *err)
{
	const parload_desc *d = &c->d;
	uint64_t n, need;
	struct stat st;

	if (f->views == 0 || f->first > last)
		return 0;
	n = PARLOAD__MIN(f->views, last - f->first + 1);
	need = parload__record_at(d, n) - d->gap;
	if (parload__sys_fstat(f->fd, &st) != 0)
		return parload__fail_path(err, PARLOAD_EIO, errno, f->path,
					  "cannot stat file");
	return (uint64_t)st.st_size < need ? file_cut(err, f, st.st_size) : 0;
}

int parload__source_recheck(parload__ctx *c, uint64_t last)
{
	if (c->stream)
		return 0;
	if (c->strips)
		return recheck_strips(c, last);
	return each_file(c, 0,
			 parload__file_of(c->files, c->nfiles, last) + 1,
			 recheck_file, last);
}

/* ---- header-only calls ---- */

/* Open path as a load would, read its first 64 bytes into b, close it;
 * *size is its size.  A header alone is not worth waiting for a FIFO's
 * writer: a stream is refused at once (the open never waits). */
static int peek(const char *path, void *out, unsigned char *b,
		uint64_t *size, parload_error *err)
{
	/* No flags, the default max_read: all a header's read looks at. */
	static const parload_options o;
	parload__ctx c;
	struct stat st;
	int rc;

	if (!out || !path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  path ? NULL : "no file given");
	memset(&c, 0, sizeof(c));
	c.opts = &o;
	c.err = err;
	c.path = path;
	c.one.path = path;
	c.one.fd = c.one.dfd = -1;
	c.files = &c.one;
	c.nfiles = 1;
	rc = parload__source_open_path(&c, &c.one, false);
	c.fd = c.one.fd;
	c.size = c.one.size;
	if (rc == 0 && c.stream && parload__sys_fstat(c.fd, &st) == 0)
		rc = parload__fail_path(err, PARLOAD_ENOTREG, 0, path,
					"not a regular file (a %s)",
					parload__file_kind(st.st_mode));
	if (rc == 0)
		rc = parload__source_read_header(&c, b);
	*size = c.size;
	parload__source_close(&c);
	return rc;
}

int parload_read_header(const char *path, parload_file_header *out,
			parload_error *err)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	uint64_t size;
	int rc = peek(path, out, b, &size, err);

	if (rc == 0)
		rc = parload_parse_file_header(b, sizeof(b), path, out, err);
	if (rc == 0)
		rc = parload__check_file_size(out, size, path, err);
	return rc;
}

int parload_peek_header(const char *path, parload_file_header *out,
			parload_error *err)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	uint64_t size;
	int rc = peek(path, out, b, &size, err);

	if (rc == 0 && memcmp(b, PARLOAD_MAGIC, 8) != 0)
		rc = parload__fail(err, PARLOAD_EMAGIC, 0, path, PARLOAD_NONE,
				   0, NULL);
	/* parload.h: the struct is the on-disk layout on little-endian
	 * hosts, the only ones parload builds on. */
	if (rc == 0)
		memcpy(out, b, sizeof(*out));
	else if (out)
		memset(out, 0, sizeof(*out));
	return rc;
}
