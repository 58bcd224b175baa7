/*
 * reader.c - the article's I/O APIs, as the single-threaded strategies
 * (article.c) read through them: POSIX or stdio, buffered or not.
 *
 *   POSIX, unbuffered   read/lseek on the load's descriptor; every read()
 *                       is one system call straight into the destination.
 *                       buffer_size 0 and PARLOAD_BUFFER_DEFAULT (POSIX has
 *                       no buffer of its own) both mean this.
 *   POSIX, buffered     a read buffer of buffer_size bytes owned by the
 *                       reader: small reads are served from it, reads at
 *                       least as large as the buffer go straight into the
 *                       destination, and a seek that lands inside the
 *                       buffered bytes costs nothing (what glibc's stdio
 *                       does too).
 *   stdio               fread/fseeko on a stream over a copy of the
 *                       descriptor; buffer_size 0 sets _IONBF,
 *                       PARLOAD_BUFFER_DEFAULT leaves stdio's own buffer
 *                       (st_blksize, usually 4 KiB, with glibc), anything
 *                       else a buffer of that size through setvbuf.
 *
 * The reader starts at the file header, which the strategies read through
 * it as the article's loaders do.  A request never exceeds opts->max_read (default 8 MiB) nor the kernel's
 * limit for one call, so V1 works for files of any size.  A read that
 * fails names the view and the byte offset.
 *
 * The reader counts its read system calls for stats.read_calls:
 *  - POSIX: exactly, one per read() issued, buffer refills and calls
 *    interrupted by a signal included; lseek() is not a read.  The file's
 *    size is known from fstat, so no read is spent discovering its end:
 *    sequential loading of N views that each fit in one read costs exactly
 *    2N calls here, 1 + 2N with the load's read of the file header.
 *  - stdio: the library decides when to call read(), so the reader asks the
 *    kernel instead: syscr and rchar of /proc/thread-self/io (this thread's
 *    read system calls and bytes, pread included) are sampled before and
 *    after the stdio calls.  Each sample is itself one pread() of that file
 *    and is subtracted, as are the bytes it returned.  The count is the
 *    thread's, so reads that a tool makes on it (valgrind reads a pipe
 *    around every system call) are in it too.  Where that file cannot be
 *    read (no /proc, a kernel without task I/O accounting) read_calls is 0,
 *    meaning unknown, and bytes_read is the bytes fread() delivered.
 * bytes_read is the bytes the read calls returned (for buffered reading
 * this includes buffered bytes that were skipped over).
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- counting stdio's read system calls ---- */

typedef struct sysio {
	int fd;            /* /proc/thread-self/io, or -1: counts unknown */
	uint64_t syscr;    /* at the last sample */
	uint64_t rchar;
	size_t len;        /* bytes that sample's pread returned */
	uint64_t calls;    /* accumulated between begin and end */
	uint64_t bytes;
} sysio;

/* One sample: exactly one pread() system call (seq_file regenerates the
 * text at offset 0).  Returns false when the counters are not readable. */
static bool sysio_sample(sysio *s, uint64_t *syscr, uint64_t *rchar,
			 size_t *len)
{
	char buf[512];
	ssize_t n;
	const char *p;

	if (s->fd < 0)
		return false;
	n = parload__sys_pread(s->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	*len = (size_t)n;
	p = strstr(buf, "rchar:");
	if (!p || sscanf(p, "rchar: %" SCNu64, rchar) != 1)
		return false;
	p = strstr(buf, "syscr:");
	if (!p || sscanf(p, "syscr: %" SCNu64, syscr) != 1)
		return false;
	return true;
}

static void sysio_off(sysio *s)
{
	if (s->fd >= 0)
		parload__sys_close(s->fd);
	s->fd = -1;
}

static void sysio_open(sysio *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = parload__sys_open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
}

/* Start counting.  Kernel semantics aside (whether a read counts itself
 * in the text it returns), the difference of two samples is the reads
 * between them plus one sample, and the rchar difference is those reads'
 * bytes plus what the first sample returned. */
static void sysio_begin(sysio *s)
{
	if (s->fd >= 0 && !sysio_sample(s, &s->syscr, &s->rchar, &s->len))
		sysio_off(s);
}

static void sysio_end(sysio *s)
{
	uint64_t syscr, rchar;
	size_t len;

	if (s->fd < 0)
		return;
	if (!sysio_sample(s, &syscr, &rchar, &len) || syscr < s->syscr + 1 ||
	    rchar < s->rchar + s->len) {
		sysio_off(s);
		return;
	}
	s->calls += syscr - s->syscr - 1;
	s->bytes += rchar - s->rchar - s->len;
}


enum rd_kind { RD_POSIX, RD_POSIX_BUFFERED, RD_STDIO };

struct parload__reader {
	enum rd_kind kind;
	const char *path;
	parload_error *err;
	const parload_desc *d;      /* names views in errors */
	const parload__file *f;
	size_t max_read;
	uint64_t off;   /* file offset of the next byte the strategy gets */
	uint64_t calls; /* read system calls (POSIX) */
	uint64_t bytes; /* bytes they returned, or fread delivered (stdio) */

	/* POSIX: the load's descriptor */
	int fd;
	uint64_t kpos;  /* the kernel's file position; UINT64_MAX: unknown */
	unsigned char *buf;
	size_t cap;     /* buffer size; 0 when unbuffered */
	size_t pos;     /* next unread byte in buf */
	size_t len;     /* valid bytes in buf */
	uint64_t bufoff; /* file offset of buf[0] */

	/* stdio: a stream over a copy of the load's descriptor */
	FILE *fp;
	char *vbuf;     /* the setvbuf buffer of an explicit size */
	sysio sio;
};

typedef struct parload__reader reader;

static uint64_t rd_view(const reader *r, uint64_t off)
{
	/* Views exist once the header is parsed. */
	return r->d->payload_size ? parload__view_at(r->d, r->f, off) :
				    PARLOAD_NONE;
}

static int rd_eio(reader *r, int sys_errno, uint64_t off)
{
	return parload__fail(r->err, PARLOAD_EIO, sys_errno, r->path,
			     rd_view(r, off), off, "read failed");
}

static int rd_truncated(reader *r, uint64_t off)
{
	/* The size was checked before reading, so the file shrank. */
	return parload__fail(r->err, PARLOAD_ETRUNCATED, 0, r->path,
			     rd_view(r, off), off,
			     "file ended early: it was truncated while being "
			     "read");
}

/* A stream over a copy of the load's descriptor, for stdio to own and
 * close, at the first record. */
static int rd_open_stdio(reader *r, size_t buffer_size)
{
	int d = parload__sys_fcntl(r->fd, F_DUPFD_CLOEXEC, 0);

	r->fp = d < 0 ? NULL : parload__sys_fdopen(d, "rb");
	if (!r->fp) {
		int e = errno;

		if (d >= 0)
			parload__sys_close(d);
		return parload__fail_path(r->err, PARLOAD_EOPEN, e, r->path,
					  "cannot open a stream on the file");
	}
	if (parload__sys_fseeko(r->fp, 0, SEEK_SET) != 0)
		return rd_eio(r, errno, 0);
	/* setvbuf before the first read.  glibc ignores the size when it
	 * allocates the buffer itself, so an explicit size brings its own. */
	if (buffer_size == 0) {
		setvbuf(r->fp, NULL, _IONBF, 0);
	} else if (buffer_size != PARLOAD_BUFFER_DEFAULT) {
		r->vbuf = parload__sys_malloc(buffer_size);
		if (!r->vbuf)
			return parload__fail_path(r->err, PARLOAD_ENOMEM, ENOMEM,
						  r->path,
						  "out of memory: cannot "
						  "allocate a %zu-byte stdio "
						  "buffer",
						  buffer_size);
		if (setvbuf(r->fp, r->vbuf, _IOFBF, buffer_size) != 0)
			return parload__fail_path(r->err, PARLOAD_EINVAL, 0,
						  r->path,
						  "setvbuf refused a %zu-byte "
						  "buffer",
						  buffer_size);
	}
	return 0;
}

/* A buffer of the loader's own for POSIX reads of buffer_size bytes. */
static int rd_open_posix(reader *r, size_t bs)
{
	if (bs == 0 || bs == PARLOAD_BUFFER_DEFAULT)
		return 0;
	r->buf = parload__sys_malloc(bs);
	if (!r->buf)
		return parload__fail_path(r->err, PARLOAD_ENOMEM, ENOMEM,
					  r->path,
					  "out of memory: cannot allocate a "
					  "%zu-byte read buffer", bs);
	r->cap = bs;
	r->kind = RD_POSIX_BUFFERED;
	return 0;
}

int parload__reader_open(parload__ctx *c, parload__reader **out)
{
	const parload_options *o = c->opts;
	reader *r;
	int rc;

	*out = r = parload__sys_calloc(1, sizeof(*r));
	if (!r)
		return parload__fail_nomem(c->err, c->path);
	r->path = c->path;
	r->err = c->err;
	r->d = &c->d;
	r->f = &c->one;
	r->fd = c->fd;
	r->sio.fd = -1;
	r->max_read = parload__max_read(o);
	r->off = 0;
	/* The descriptor may be anywhere: the first read seeks. */
	r->kpos = UINT64_MAX;
	r->kind = o->io == PARLOAD_IO_STDIO ? RD_STDIO : RD_POSIX;
	if (r->kind == RD_STDIO) {
		/* What counting costs is not the strategy's: the counters
		 * are opened before, and sampled around, the reads. */
		sysio_open(&r->sio);
		rc = rd_open_stdio(r, o->buffer_size);
		sysio_begin(&r->sio);
	} else {
		rc = rd_open_posix(r, o->buffer_size);
	}
	return rc;
}

void parload__reader_close(parload__reader *r, parload__ctx *c)
{
	if (!r)
		return;
	if (r->kind == RD_STDIO) {
		sysio_end(&r->sio);
		if (r->sio.fd >= 0) {
			r->calls = r->sio.calls;
			r->bytes = r->sio.bytes;
		} else {
			r->calls = 0; /* unknown */
		}
		sysio_off(&r->sio);
	}
	c->io.calls += r->calls;
	c->io.bytes += r->bytes;
	c->threads = 1;
	if (r->fp)
		(void)parload__sys_fclose(r->fp); /* a reader has what it read */
	parload__sys_free(r->vbuf);
	parload__sys_free(r->buf);
	parload__sys_free(r);
}

/* One read() of at most n bytes at r->off (after an lseek if the kernel's
 * position is elsewhere).  Returns the bytes read, 0 at the end of the
 * file, or a negative code.  r->off is the caller's to advance. */
static ssize_t posix_read_once(reader *r, void *dst, size_t n)
{
	ssize_t k;

	if (r->kpos != r->off) {
		if (parload__sys_lseek(r->fd, (off_t)r->off, SEEK_SET) < 0)
			return rd_eio(r, errno, r->off);
		r->kpos = r->off;
	}
	n = PARLOAD__MIN(n, r->max_read);
	do {
		k = parload__sys_read(r->fd, dst, n);
		r->calls++;
	} while (k < 0 && errno == EINTR);
	if (k < 0)
		return rd_eio(r, errno, r->off);
	r->kpos += (uint64_t)k;
	r->bytes += (uint64_t)k;
	return k;
}

/* stdio: fread, retrying a call that a signal interrupted.  Returns the
 * bytes delivered (fewer than n only at the end of the file) or a negative
 * code. */
static ssize_t stdio_read(reader *r, unsigned char *d, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t ask = PARLOAD__MIN(n - done, r->max_read);
		size_t k;

		errno = 0;
		k = parload__sys_fread(d + done, 1, ask, r->fp);
		done += k;
		r->off += k;
		r->bytes += k;
		if (k == ask)
			continue;
		if (!parload__sys_ferror(r->fp))
			break; /* end of file */
		if (errno != EINTR)
			return rd_eio(r, errno, r->off);
		parload__sys_clearerr(r->fp);
	}
	return (ssize_t)done;
}

/* Read n bytes at r->off into dst.  The end of the file before n bytes is
 * ETRUNCATED: the size was checked, so the file shrank under us. */
int parload__reader_read(parload__reader *r, void *dst, size_t n)
{
	unsigned char *d = dst;
	size_t done = 0;
	ssize_t k;

	if (r->kind == RD_STDIO) {
		k = stdio_read(r, d, n);
		if (k < 0)
			return (int)k;
		return (size_t)k < n ? rd_truncated(r, r->off) : 0;
	}
	while (done < n) {
		size_t want = n - done;

		if (r->kind == RD_POSIX_BUFFERED && r->pos < r->len) {
			k = (ssize_t)PARLOAD__MIN(r->len - r->pos, want);
			memcpy(d + done, r->buf + r->pos, (size_t)k);
			r->pos += (size_t)k;
		} else if (r->kind == RD_POSIX || want >= r->cap) {
			/* Unbuffered, or at least as large as the buffer:
			 * straight into the destination. */
			k = posix_read_once(r, d + done, want);
		} else {
			/* Refill; the bytes are taken on the next turn. */
			k = posix_read_once(r, r->buf, r->cap);
			if (k > 0) {
				r->bufoff = r->off;
				r->pos = 0;
				r->len = (size_t)k;
				continue;
			}
		}
		if (k < 0)
			return (int)k;
		if (k == 0)
			return rd_truncated(r, r->off);
		done += (size_t)k;
		r->off += (uint64_t)k;
	}
	return 0;
}

/* Move to file offset off.  POSIX seeks lazily (the next read issues the
 * lseek), a buffered reader seeks inside its buffer when it can, stdio
 * calls fseeko as the article's loaders do. */
int parload__reader_seek(parload__reader *r, uint64_t off)
{
	if (r->kind == RD_STDIO) {
		if (parload__sys_fseeko(r->fp, (off_t)off, SEEK_SET) != 0)
			return rd_eio(r, errno, off);
	} else if (r->kind == RD_POSIX_BUFFERED) {
		if (off >= r->bufoff && off - r->bufoff <= r->len) {
			r->pos = (size_t)(off - r->bufoff);
		} else {
			r->pos = 0;
			r->len = 0;
		}
	}
	r->off = off;
	return 0;
}

