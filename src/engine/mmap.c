/*
 * mmap.c - the mmap strategy: map the file read-only and copy the header
 * and the records out of the mapping.
 *
 * Another process may truncate the file while it is mapped, and touching a
 * mapped page past the new end of the file raises SIGBUS, which kills the
 * process.  A library must not take over the process's signal handlers, so
 * nothing here touches the mapping directly: the bytes are copied out of it
 * with process_vm_readv() on our own pid, for which the kernel walks the
 * mapping as a debugger would and answers a page past the end of the file
 * with EFAULT, a short copy, instead of a signal.  One call copies a whole
 * batch of records, up to max_read bytes, into up to IOV_MAX destinations,
 * and comes out faster than memcpy() from the mapping, which takes a page
 * fault for every few pages (docs/reliability.md, "Sinograms from the mapped file").  A copy that stops
 * short is retried from where it stopped; if the file has become shorter
 * than the bytes asked for, the load fails with PARLOAD_ETRUNCATED.  Where
 * process_vm_readv() is not allowed (a seccomp filter, a kernel without
 * it) the same bytes are read with pread() instead, and counted as reads.
 *
 * stats.read_calls is 0 (the data is copied, not read) unless pread()
 * stands in; bytes_read is the bytes copied out of the mapping.
 */
#include "engine/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAP_BATCH_IOV 1024 /* IOV_MAX on Linux */

typedef struct mapcopy {
	parload__ctx *c;
	const unsigned char *map;
	size_t len;
	pid_t pid;
	size_t max_read;
	bool use_pread;
	bool have_header; /* c->d is known: errors can name views */
} mapcopy;

/* Nothing could be copied at off: the file shrank (an error), or a page
 * came back between the copy and the look (worth another copy, a few
 * times). */
static int map_stuck(mapcopy *m, uint64_t off, int sys_errno, int tries)
{
	parload__ctx *c = m->c;
	uint64_t view = m->have_header ? parload__view_at(&c->d, &c->one, off) :
					 PARLOAD_NONE;
	struct stat st;

	if (parload__sys_fstat(c->fd, &st) == 0 && (uint64_t)st.st_size <= off)
		return parload__fail(c->err, PARLOAD_ETRUNCATED, 0, c->path,
				     view, off,
				     "file ended early: it was truncated to "
				     "%jd bytes while being read",
				     (intmax_t)st.st_size);
	if (tries < 3)
		return 0;
	return parload__fail(c->err, PARLOAD_EIO, sys_errno, c->path, view,
			     off, "cannot copy from the mapped file");
}

/* Copy the file's bytes from off on out of the mapping into iov (cnt
 * buffers, consumed). */
static int map_read(mapcopy *m, struct iovec *iov, int cnt, uint64_t off)
{
	parload__ctx *c = m->c;
	int tries = 0, rc;

	while (cnt > 0) {
		struct iovec remote;
		size_t want = 0;
		ssize_t got;

		if (m->use_pread)
			return parload__preadv_full(
				c->fd, iov, cnt, off, m->max_read, &c->io,
				&c->d, m->have_header ? &c->one : NULL, c->path,
				c->err);
		for (int k = 0; k < cnt; k++)
			want += iov[k].iov_len;
		remote.iov_base = (void *)(m->map + off);
		remote.iov_len = want;
		got = parload__sys_process_vm_readv(m->pid, iov,
						    (unsigned long)cnt,
						    &remote, 1, 0);
		if (got < 0 && (errno == ENOSYS || errno == EPERM ||
				errno == EACCES || errno == ENOMEM)) {
			m->use_pread = true;
			continue;
		}
		if (got <= 0) {
			rc = map_stuck(m, off, got < 0 ? errno : 0, ++tries);
			if (rc)
				return rc;
			continue;
		}
		tries = 0;
		c->io.bytes += (uint64_t)got;
		off += (uint64_t)got;
		parload__iov_advance(&iov, &cnt, (size_t)got);
	}
	return 0;
}

/* Map the file and copy its header out of the mapping. */
static int map_header(parload__ctx *c, unsigned char *bytes)
{
	struct iovec iov = { bytes, PARLOAD_FILE_HEADER_SIZE };
	mapcopy *m;

	if (c->size < PARLOAD_FILE_HEADER_SIZE)
		return parload__fail_short_header(c, c->size);
	if (c->size > SIZE_MAX)
		return parload__fail_path(c->err, PARLOAD_ENOMEM, 0, c->path,
					  "out of memory: a %" PRIu64 "-byte "
					  "file does not fit in this address "
					  "space",
					  c->size);
	m = parload__sys_calloc(1, sizeof(*m));
	if (!m)
		return parload__fail_nomem(c->err, c->path);
	c->state = m;
	m->c = c;
	m->pid = getpid();
	m->max_read = parload__max_read(c->opts);
	m->len = (size_t)c->size;
	m->map = parload__sys_mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, c->fd,
				   0);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return parload__fail_path(c->err,
					  errno == ENOMEM ? PARLOAD_ENOMEM :
							    PARLOAD_EIO,
					  errno, c->path,
					  "cannot map the file");
	}
	/* Advice only: read-ahead in larger steps. */
	(void)parload__sys_madvise((void *)m->map, m->len, MADV_SEQUENTIAL);
	return map_read(m, &iov, 1, 0);
}

/* The records, in batches, straight into both arrays. */
static int map_records(parload__ctx *c)
{
	mapcopy *m = c->state;
	struct iovec iov[MAP_BATCH_IOV];
	parload__plan plan;
	parload__share all;
	parload__cursor cur;
	const parload__file *f;
	uint64_t off;
	int cnt, rc = 0;

	c->threads = 1;
	m->have_header = true;
	parload__plan_init(&plan, &c->d, c->files, c->nfiles, false,
			   &c->shape);
	parload__plan_views(&plan, 0, c->shape.views, c->out->headers, NULL,
			    c->out->pixels);
	parload__plan_split(&plan, 1, PARLOAD__PAGE, &all);
	parload__cursor_init(&cur, &plan, &all);
	while (rc == 0 && (cnt = parload__cursor_next(&cur, iov, NULL,
						      MAP_BATCH_IOV,
						      m->max_read, &off,
						      &f)) > 0)
		rc = map_read(m, iov, cnt, off);
	return rc;
}

static void map_release(parload__ctx *c)
{
	mapcopy *m = c->state;

	if (!m)
		return;
	if (m->map)
		parload__sys_munmap((void *)m->map, m->len);
	parload__sys_free(m);
	c->state = NULL;
}

const parload__strategy parload__strategy_mmap = {
	.caps = 0,
	.read = map_records,
	.header = map_header,
	.release = map_release,
};
