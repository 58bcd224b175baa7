/*
 * loaders.c - the article's single-threaded strategies.
 *
 *   bulk        V1: the file header, then every record in one logical read
 *               into a temporary buffer, then split into the two arrays.
 *   sequential  V2: header, payload, header, payload ... each read straight
 *               into its final place.
 *   two-pass    V3: every view header first, seeking over the payloads, then
 *               every payload, seeking over the headers.
 *   mmap        map the file read-only and copy headers and payloads out.
 *
 * The first three are written once over a small reader that hides the I/O
 * API (opts->io) and the buffering (opts->buffer_size):
 *
 *   POSIX, unbuffered   open/read/lseek; every read() is one system call
 *                       straight into the destination.  buffer_size 0 and
 *                       PARLOAD_BUFFER_DEFAULT (POSIX has no buffer of its
 *                       own) both mean this.
 *   POSIX, buffered     a read buffer of buffer_size bytes owned by the
 *                       loader: small reads are served from it, reads at
 *                       least as large as the buffer go straight into the
 *                       destination, and a seek that lands inside the
 *                       buffered bytes costs nothing (what glibc's stdio
 *                       does too).
 *   stdio               fopen/fread/fseeko; buffer_size 0 sets _IONBF,
 *                       PARLOAD_BUFFER_DEFAULT leaves stdio's own buffer
 *                       (st_blksize, usually 4 KiB, with glibc), anything
 *                       else a buffer of that size through setvbuf.
 *
 * Every strategy starts its clock before opening the file and stops it after
 * the file is closed and the dataset is complete and checked, as the
 * parallel loader does, and fails with the same codes: the file header is
 * validated and the file's size checked against it before anything large is
 * allocated, every view's view_index is checked, and a read that fails
 * names the view and the byte offset.  A request never exceeds
 * opts->max_read (default 8 MiB) nor the kernel's limit for one call, so V1
 * works for files of any size.
 *
 * stats.read_calls counts read system calls:
 *  - POSIX: counted exactly, one per read() issued, buffer refills and calls
 *    interrupted by a signal included; lseek() is not a read.  The file's
 *    size is known from fstat, so no read is spent discovering its end:
 *    sequential loading of N views that each fit in one read costs exactly
 *    1 + 2N calls unbuffered.
 *  - stdio: the library decides when to call read(), so the loader asks the
 *    kernel instead: syscr and rchar of /proc/thread-self/io (this thread's
 *    read system calls and bytes, pread included) are sampled before and
 *    after the stdio calls.  Each sample is itself one pread() of that file
 *    and is subtracted, as are the bytes it returned; dataset allocation is
 *    left outside the samples.  The count is the thread's, so reads that a
 *    tool makes on it (valgrind reads a pipe around every system call) are
 *    in it too.  Where that file cannot be read (no /proc,
 *    a kernel without task I/O accounting) read_calls is 0, meaning
 *    unknown, and bytes_read is the bytes fread() delivered.
 *  - mmap: 0; the data is copied out of the mapping (below), not read,
 *    unless the copy call is not allowed and pread() stands in.
 * stats.bytes_read is the bytes the read calls returned (for buffered
 * reading this includes buffered bytes that were skipped over; for mmap,
 * the bytes copied out of the mapping).
 *
 * mmap and a file that shrinks while mapped: touching a page beyond the new
 * end raises SIGBUS and kills the process.  The mmap strategy never touches
 * the mapping itself (see its section below), so a file truncated under it
 * is an error, not a crash.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* ---- the reader ---- */

enum rd_kind { RD_POSIX, RD_POSIX_BUFFERED, RD_STDIO };

typedef struct reader {
	enum rd_kind kind;
	const parload__load *l;
	const char *path;
	parload_error *err;
	const parload_file_header *h; /* once parsed: names views in errors */
	size_t max_read;
	uint64_t size;  /* the file's size (fstat) */
	uint64_t off;   /* file offset of the next byte the strategy gets */
	uint64_t calls; /* read system calls (POSIX) */
	uint64_t bytes; /* bytes they returned, or fread delivered (stdio) */

	/* POSIX */
	int fd;
	uint64_t kpos;  /* the kernel's file position */
	unsigned char *buf;
	size_t cap;     /* buffer size; 0 when unbuffered */
	size_t pos;     /* next unread byte in buf */
	size_t len;     /* valid bytes in buf */
	uint64_t bufoff; /* file offset of buf[0] */

	/* stdio */
	FILE *fp;
	bool fp_dup;    /* fp is fdopen() of a copy of the caller's descriptor */
	char *vbuf;     /* the setvbuf buffer of an explicit size */
	sysio sio;
} reader;

static uint64_t rd_view(const reader *r, uint64_t off)
{
	return r->h ? parload__view_at(r->h, off) : PARLOAD_NONE;
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

/* fopen with the checks and messages of parload__open. */
static int rd_open_stdio(reader *r, size_t buffer_size)
{
	struct stat st;
	int rc;

	if (r->l->fd >= 0) {
		/* The caller's descriptor: a copy for stdio to own and
		 * close (the offset they share is restored by the caller). */
		int d = fcntl(r->l->fd, F_DUPFD_CLOEXEC, 0);

		r->fp = d < 0 ? NULL : fdopen(d, "rb");
		if (!r->fp) {
			int e = errno;

			if (d >= 0)
				close(d);
			return parload__fail(r->err, PARLOAD_EOPEN, e, r->path,
					     PARLOAD_NONE, PARLOAD_NONE,
					     "cannot open a stream on the "
					     "descriptor");
		}
		r->fp_dup = true;
		/* The descriptor may be anywhere in the file. */
		if (fseeko(r->fp, 0, SEEK_SET) != 0)
			return parload__fail(r->err, PARLOAD_EIO, errno,
					     r->path, PARLOAD_NONE, 0,
					     "cannot seek");
	} else {
		/* fopen() of a FIFO would wait for a writer: look first. */
		if (stat(r->path, &st) == 0 && !S_ISREG(st.st_mode))
			return parload__fail(r->err, PARLOAD_ENOTREG, 0,
					     r->path, PARLOAD_NONE,
					     PARLOAD_NONE,
					     "not a regular file (a %s)",
					     parload__file_kind(st.st_mode));
		do {
			errno = 0;
			r->fp = parload__sys_fopen(r->path, "rbe");
		} while (!r->fp && errno == EINTR);
		if (!r->fp)
			return parload__fail_open(r->err, errno, r->path);
	}
	rc = parload__check_regular(fileno(r->fp), r->path, &r->size, r->err);
	if (rc)
		return rc;

	/* setvbuf before the first read.  glibc ignores the size when it
	 * allocates the buffer itself, so an explicit size brings its own. */
	if (buffer_size == 0) {
		setvbuf(r->fp, NULL, _IONBF, 0);
	} else if (buffer_size != PARLOAD_BUFFER_DEFAULT) {
		r->vbuf = parload__sys_malloc(buffer_size);
		if (!r->vbuf)
			return parload__fail(r->err, PARLOAD_ENOMEM, ENOMEM,
					     r->path, PARLOAD_NONE,
					     PARLOAD_NONE,
					     "out of memory: cannot allocate a "
					     "%zu-byte stdio buffer",
					     buffer_size);
		if (setvbuf(r->fp, r->vbuf, _IOFBF, buffer_size) != 0)
			return parload__fail(r->err, PARLOAD_EINVAL, 0, r->path,
					     PARLOAD_NONE, PARLOAD_NONE,
					     "setvbuf refused a %zu-byte buffer",
					     buffer_size);
	}
	return 0;
}

/* Prepare r; on failure the caller still calls rd_close. */
static void rd_init(reader *r, const parload__load *l)
{
	const parload_options *o = l->opts;

	memset(r, 0, sizeof(*r));
	r->l = l;
	r->path = l->path;
	r->err = l->err;
	r->fd = -1;
	r->sio.fd = -1;
	r->max_read = o->max_read ? o->max_read : PARLOAD__DEFAULT_MAX_READ;
	r->max_read = PARLOAD__MIN(r->max_read, PARLOAD__KERNEL_MAX_READ);
	r->kind = o->io == PARLOAD_IO_STDIO ? RD_STDIO : RD_POSIX;
}

static int rd_open(reader *r, const parload_options *o)
{
	size_t bs = o->buffer_size;
	int rc;

	if (o->io != PARLOAD_IO_POSIX && o->io != PARLOAD_IO_STDIO)
		return parload__fail(r->err, PARLOAD_EINVAL, 0, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "unknown I/O API %d", (int)o->io);
	if (r->kind == RD_STDIO)
		return rd_open_stdio(r, bs);
	rc = parload__load_open(r->l, &r->fd, &r->size);
	/* The caller's descriptor may be anywhere in the file: the first
	 * read seeks. */
	if (rc == 0 && r->l->fd >= 0)
		r->kpos = UINT64_MAX;
	if (rc == 0 && bs != 0 && bs != PARLOAD_BUFFER_DEFAULT) {
		r->buf = parload__sys_malloc(bs);
		if (!r->buf)
			return parload__fail(r->err, PARLOAD_ENOMEM, ENOMEM,
					     r->path, PARLOAD_NONE,
					     PARLOAD_NONE,
					     "out of memory: cannot allocate a "
					     "%zu-byte read buffer", bs);
		r->cap = bs;
		r->kind = RD_POSIX_BUFFERED;
	}
	return rc;
}

static void rd_close(reader *r)
{
	if (r->fp && r->fp_dup)
		fclose(r->fp); /* opened by fdopen, outside the seam */
	else if (r->fp)
		parload__sys_fclose(r->fp);
	parload__load_close(r->l, r->fd);
	parload__sys_free(r->vbuf);
	parload__sys_free(r->buf);
	r->fp = NULL;
	r->fd = -1;
	r->vbuf = NULL;
	r->buf = NULL;
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
static int rd_read(reader *r, void *dst, size_t n)
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
static int rd_seek(reader *r, uint64_t off)
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

/* ---- what every strategy shares ---- */

typedef struct run {
	const parload__load *l;
	double t0;
	reader r;
	parload_file_header h;
	uint64_t declared; /* the header's view_count */
} run;

static int fail_short_header(const char *path, uint64_t size,
			     parload_error *err)
{
	return parload__fail(err, PARLOAD_ETRUNCATED, 0, path, PARLOAD_NONE,
			     size,
			     "file is %" PRIu64 " bytes, shorter than the "
			     "%d-byte file header",
			     size, PARLOAD_FILE_HEADER_SIZE);
}

/* Open, read and validate the file header with the reader, check the
 * file's size and allocate the dataset. */
static int run_begin(run *u, const parload__load *l)
{
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	reader *r = &u->r;
	int rc;

	memset(u, 0, sizeof(*u));
	u->l = l;
	memset(l->out, 0, sizeof(*l->out));
	rd_init(r, l);
	if (r->kind == RD_STDIO) {
		/* Opened and sampled before the clock starts: what counting
		 * costs is not the strategy's. */
		sysio_open(&r->sio);
		sysio_begin(&r->sio);
	}
	u->t0 = parload__now();
	rc = rd_open(r, l->opts);
	if (rc)
		return rc;
	if (r->size < sizeof(b))
		return fail_short_header(l->path, r->size, l->err);
	rc = rd_read(r, b, sizeof(b));
	if (rc)
		return rc;
	rc = parload_parse_file_header(b, sizeof(b), l->path, &u->h, l->err);
	if (rc)
		return rc;
	rc = parload__fit_size(l, &u->h, r->size, &u->declared);
	if (rc)
		return rc;
	r->h = &u->h;
	if (r->kind == RD_STDIO)
		sysio_end(&r->sio);
	rc = parload__dataset_alloc(l, &u->h);
	if (r->kind == RD_STDIO)
		sysio_begin(&r->sio);
	return rc;
}

/* Check the views, close, and fill the stats; or undo everything. */
static int run_end(run *u, int rc, parload_strategy strategy)
{
	const parload__load *l = u->l;
	reader *r = &u->r;
	parload_dataset *ds = l->out;

	/* view_index, and the CRCs when asked. */
	if (rc == 0)
		rc = parload__verify_all(l, &u->h, ds);
	if (rc == 0)
		rc = parload__load_recheck(l, r->fp ? fileno(r->fp) : r->fd,
					   parload__view_offset(
						   &u->h, u->h.view_count));
	rd_close(r);
	if (rc) {
		sysio_off(&r->sio);
		parload_dataset_free(ds);
		return rc;
	}
	ds->stats.seconds = parload__now() - u->t0;
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
	ds->stats.read_calls = r->calls;
	ds->stats.bytes_read = r->bytes;
	ds->stats.threads = 1;
	ds->stats.strategy = strategy;
	ds->stats.declared_views = u->declared;
	ds->stats.crc_checked = (l->opts->flags & PARLOAD_OPT_VERIFY_CRC) &&
					(u->h.flags & PARLOAD_FLAG_CRC32C) ?
				u->h.view_count : 0;
	return 0;
}

/* ---- V1: bulk ---- */

#define HUGE_PAGE ((size_t)2 << 20)

typedef struct stage {
	void *base;
	size_t len;
	unsigned char *p; /* len - (p - base) >= the size asked for */
} stage;

/* V1's temporary buffer, made as the dataset's memory is (dataset.c): an
 * anonymous mapping, advised for transparent huge pages unless the caller
 * said not to.  A plain malloc would fault it in 4 KiB at a time while the
 * dataset gets huge pages, and V1 would be measured against the allocator
 * instead of against the other read patterns. */
static int stage_alloc(stage *st, size_t size, unsigned flags)
{
	const bool huge = size >= HUGE_PAGE &&
			  !(flags & PARLOAD_OPT_NO_HUGEPAGES);

	st->len = huge ? size + HUGE_PAGE : size;
	st->base = parload__sys_mmap(NULL, st->len, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->base == MAP_FAILED) {
		st->base = NULL;
		return -1;
	}
	st->p = st->base;
	if (huge) {
		uintptr_t a = ((uintptr_t)st->base + HUGE_PAGE - 1) &
			      ~(uintptr_t)(HUGE_PAGE - 1);

		st->p = (unsigned char *)a;
		/* Advice only: without THP the buffer works the same. */
		(void)parload__sys_madvise(st->p, size & ~(HUGE_PAGE - 1),
					   MADV_HUGEPAGE);
	}
	return 0;
}

int parload__load_bulk(const parload__load *l)
{
	run u;
	int rc = run_begin(&u, l);
	uint64_t n = u.h.view_count;

	if (rc == 0 && n) {
		const size_t ps = (size_t)u.h.payload_size;
		const size_t rec = PARLOAD_VIEW_HEADER_SIZE + ps;
		/* The dataset fit in memory, so n * rec fits in size_t. */
		const size_t total = (size_t)n * rec;
		unsigned char *pix = l->out->pixels;
		stage st;

		if (stage_alloc(&st, total, l->opts->flags) != 0) {
			rc = parload__fail(l->err, PARLOAD_ENOMEM, errno,
					   l->path, PARLOAD_NONE, PARLOAD_NONE,
					   "out of memory: cannot map %zu "
					   "bytes to read the file into",
					   total);
		} else {
			const unsigned char *tmp = st.p;

			rc = rd_read(&u.r, st.p, total);
			for (uint64_t i = 0; rc == 0 && i < n; i++) {
				const unsigned char *p = tmp + i * rec;

				memcpy(&l->out->headers[i], p,
				       PARLOAD_VIEW_HEADER_SIZE);
				memcpy(pix + i * ps,
				       p + PARLOAD_VIEW_HEADER_SIZE, ps);
			}
			parload__sys_munmap(st.base, st.len);
		}
	}
	return run_end(&u, rc, PARLOAD_STRATEGY_BULK);
}

/* ---- V2: sequential ---- */

int parload__load_sequential(const parload__load *l)
{
	run u;
	int rc = run_begin(&u, l);
	const size_t ps = (size_t)u.h.payload_size;
	unsigned char *pix = rc ? NULL : l->out->pixels;

	for (uint64_t i = 0; rc == 0 && i < u.h.view_count; i++) {
		rc = rd_read(&u.r, &l->out->headers[i],
			     PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0)
			rc = rd_read(&u.r, pix + i * ps, ps);
	}
	return run_end(&u, rc, PARLOAD_STRATEGY_SEQUENTIAL);
}

/* ---- V3: two passes ---- */

int parload__load_two_pass(const parload__load *l)
{
	run u;
	int rc = run_begin(&u, l);
	const size_t ps = (size_t)u.h.payload_size;
	unsigned char *pix = rc ? NULL : l->out->pixels;
	const uint64_t n = u.h.view_count;

	/* Headers: read one, seek over its payload. */
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		rc = rd_read(&u.r, &l->out->headers[i],
			     PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0 && i + 1 < n)
			rc = rd_seek(&u.r, parload__view_offset(&u.h, i + 1));
	}
	/* Payloads: seek over a header, read its payload. */
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		rc = rd_seek(&u.r, parload__view_offset(&u.h, i) +
					   PARLOAD_VIEW_HEADER_SIZE);
		if (rc == 0)
			rc = rd_read(&u.r, pix + i * ps, ps);
	}
	return run_end(&u, rc, PARLOAD_STRATEGY_TWO_PASS);
}

/* ---- mmap ---- */

/*
 * Another process may truncate the file while it is mapped, and touching a
 * mapped page past the new end of the file raises SIGBUS, which kills the
 * process.  A library must not take over the process's signal handlers, so
 * nothing here touches the mapping directly: the bytes are copied out of it
 * with process_vm_readv() on our own pid, for which the kernel walks the
 * mapping as a debugger would and answers a page past the end of the file
 * with EFAULT, a short copy, instead of a signal.  One call copies a whole
 * batch of records, up to max_read bytes, into up to IOV_MAX destinations,
 * and comes out faster than memcpy() from the mapping, which takes a page
 * fault for every few pages (README, "Reliability").  A copy that stops
 * short is retried from where it stopped; if the file has become shorter
 * than the bytes asked for, the load fails with PARLOAD_ETRUNCATED.  Where
 * process_vm_readv() is not allowed (a seccomp filter, a kernel without
 * it) the same bytes are read with pread() instead, and counted as reads.
 */

#define MAP_BATCH_IOV 1024 /* IOV_MAX on Linux */

typedef struct mapcopy {
	const parload__load *l;
	const parload_file_header *h; /* once parsed: names views in errors */
	int fd;          /* kept open: the size, and the pread fallback */
	const unsigned char *map;
	pid_t pid;
	size_t max_read;
	bool use_pread;
	uint64_t bytes;  /* copied out of the mapping */
	parload__io_stats io; /* the fallback's reads */
} mapcopy;

/* Nothing could be copied at off: the file shrank (an error), or a page
 * came back between the copy and the look (worth another copy, a few
 * times). */
static int map_stuck(mapcopy *m, uint64_t off, int sys_errno, int tries)
{
	const parload__load *l = m->l;
	uint64_t view = m->h ? parload__view_at(m->h, off) : PARLOAD_NONE;
	struct stat st;

	if (parload__sys_fstat(m->fd, &st) == 0 && (uint64_t)st.st_size <= off)
		return parload__fail(l->err, PARLOAD_ETRUNCATED, 0, l->path,
				     view, off,
				     "file ended early: it was truncated to "
				     "%jd bytes while being read",
				     (intmax_t)st.st_size);
	if (tries < 3)
		return 0;
	return parload__fail(l->err, PARLOAD_EIO, sys_errno, l->path, view,
			     off, "cannot copy from the mapped file");
}

/* Copy the file's bytes from off on out of the mapping into iov (cnt
 * buffers, consumed). */
static int map_read(mapcopy *m, struct iovec *iov, int cnt, uint64_t off)
{
	int tries = 0, rc;

	while (cnt > 0) {
		struct iovec remote;
		size_t want = 0;
		ssize_t got;

		if (m->use_pread)
			return parload__preadv_full(m->fd, iov, cnt, off,
						    m->max_read, &m->io, m->h,
						    m->l->path, m->l->err);
		for (int k = 0; k < cnt; k++)
			want += iov[k].iov_len;
		remote.iov_base = (void *)(m->map + off);
		remote.iov_len = want;
		got = process_vm_readv(m->pid, iov, (unsigned long)cnt, &remote,
				       1, 0);
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
		m->bytes += (uint64_t)got;
		off += (uint64_t)got;
		parload__iov_advance(&iov, &cnt, (size_t)got);
	}
	return 0;
}

int parload__load_mmap(const parload__load *l)
{
	const double t0 = parload__now();
	parload_dataset *ds = l->out;
	unsigned char b[PARLOAD_FILE_HEADER_SIZE];
	parload_file_header h;
	uint64_t size = 0, declared = 0;
	struct iovec iov[MAP_BATCH_IOV];
	mapcopy m;
	int fd, rc;

	memset(ds, 0, sizeof(*ds));
	memset(&m, 0, sizeof(m));
	rc = parload__load_open(l, &fd, &size);
	if (rc)
		return rc;
	m.l = l;
	m.fd = fd;
	m.pid = getpid();
	m.max_read = l->opts->max_read ? l->opts->max_read :
					 PARLOAD__DEFAULT_MAX_READ;
	m.max_read = PARLOAD__MIN(m.max_read, PARLOAD__KERNEL_MAX_READ);
	if (size < PARLOAD_FILE_HEADER_SIZE) {
		rc = fail_short_header(l->path, size, l->err);
	} else if (size > SIZE_MAX) {
		rc = parload__fail(l->err, PARLOAD_ENOMEM, 0, l->path,
				   PARLOAD_NONE, PARLOAD_NONE,
				   "out of memory: a %" PRIu64 "-byte file "
				   "does not fit in this address space",
				   size);
	} else {
		m.map = parload__sys_mmap(NULL, (size_t)size, PROT_READ,
					  MAP_PRIVATE, fd, 0);
		if (m.map == MAP_FAILED) {
			m.map = NULL;
			rc = parload__fail(l->err,
					   errno == ENOMEM ? PARLOAD_ENOMEM :
							     PARLOAD_EIO,
					   errno, l->path, PARLOAD_NONE,
					   PARLOAD_NONE,
					   "cannot map the file");
		}
	}
	if (rc == 0) {
		/* Advice only: read-ahead in larger steps. */
		(void)parload__sys_madvise((void *)m.map, (size_t)size,
					   MADV_SEQUENTIAL);
		iov[0].iov_base = b;
		iov[0].iov_len = sizeof(b);
		rc = map_read(&m, iov, 1, 0);
	}
	if (rc == 0)
		rc = parload_parse_file_header(b, sizeof(b), l->path, &h,
					       l->err);
	if (rc == 0)
		rc = parload__fit_size(l, &h, size, &declared);
	if (rc == 0)
		rc = parload__dataset_alloc(l, &h);
	if (rc == 0 && h.view_count) {
		parload__slice all;
		parload__cursor c;
		uint64_t off;
		int cnt;

		/* The records, in batches, straight into both arrays. */
		m.h = &h;
		memset(&all, 0, sizeof(all));
		all.file_begin = PARLOAD_FILE_HEADER_SIZE;
		all.file_end = parload__view_offset(&h, h.view_count);
		parload__cursor_init(&c, &h, &all, ds->headers, ds->pixels);
		while (rc == 0 && (cnt = parload__cursor_next(
					   &c, iov, MAP_BATCH_IOV, m.max_read,
					   &off)) > 0)
			rc = map_read(&m, iov, cnt, off);
		if (rc == 0)
			rc = parload__load_recheck(l, fd, all.file_end);
		if (rc == 0)
			rc = parload__verify_all(l, &h, ds);
	}
	if (m.map)
		parload__sys_munmap((void *)m.map, (size_t)size);
	parload__load_close(l, fd);
	if (rc) {
		parload_dataset_free(ds);
		return rc;
	}
	ds->stats.seconds = parload__now() - t0;
	ds->stats.bytes_read = m.bytes + m.io.bytes;
	ds->stats.read_calls = m.io.calls;
	ds->stats.threads = 1;
	ds->stats.strategy = PARLOAD_STRATEGY_MMAP;
	ds->stats.declared_views = declared;
	ds->stats.crc_checked = (l->opts->flags & PARLOAD_OPT_VERIFY_CRC) &&
					(h.flags & PARLOAD_FLAG_CRC32C) ?
				h.view_count : 0;
	return 0;
}
