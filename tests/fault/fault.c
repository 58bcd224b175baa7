/*
 * fault.c - the fault-injection wrappers and their controls (fault.h).
 *
 * Built only with ./configure --enable-fault-injection.  Every wrapper
 * first asks should_fail() whether this call is the one to fail, then
 * either sets errno and returns the call's failure value without doing
 * anything, or makes the real call - shortened, for reads and writes, when
 * a test asked for short transfers or for an I/O error further on - and
 * counts the resource it acquired or released.
 *
 * State is global and atomic: the parallel loader's workers call these
 * from several threads at once.  Which thread gets the N-th call of a
 * parallel load is not fixed, but exactly one call is the N-th, so a walk
 * over N covers every call however the threads interleave.  The controls
 * are meant to be set while no load is running.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <hwloc.h>

#include "fault.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
#define NO_OFFSET UINT64_MAX

static const struct {
	const char *name;
	int err;
	bool intr;
} kinds[PARLOAD__FK_COUNT] = {
#define KIND_(k, name, err, intr) [PARLOAD__FK_##k] = { name, err, intr },
	PARLOAD__FAULT_KINDS(KIND_)
#undef KIND_
};

static const char *const res_names[PARLOAD__FR_COUNT] = {
	"descriptors", "streams", "heap blocks", "mappings", "AIO contexts",
	"threads", "locks", "topologies", "bitmaps",
};

static _Atomic uint64_t mask = PARLOAD__FK_ALL;
static _Atomic uint64_t calls;          /* calls among mask since reset */
static _Atomic uint64_t target;         /* the call to fail; 0: none */
static _Atomic int fail_errno;          /* 0: the kind's own */
static _Atomic int fired = -1;          /* the kind that failed */
static _Atomic size_t short_max;        /* 0: transfers are not cut */
static _Atomic uint64_t eintr_every;    /* 0: no EINTR */
static _Atomic uint64_t intr_calls;     /* interruptible calls seen */
static _Atomic uint64_t eio_offset = NO_OFFSET;
/* parload__fault_watch: the buffer, and the bytes reads put in it. */
static _Atomic uintptr_t watch_lo, watch_hi;
static atomic_uint_fast64_t watched;
static _Atomic long live[PARLOAD__FR_COUNT];
/* The ranges advised MADV_HUGEPAGE and still mapped (a few at a time:
 * datasets, windows, the workers' bounce buffers), and the bytes reads
 * put into them. */
#define ADVISED_MAX 256
static pthread_mutex_t advised_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t advised[ADVISED_MAX][2];
static int n_advised;
static atomic_uint_fast64_t advised_read;

/* Linux AIO and io_uring: reads submitted and not yet reaped, and the
 * most at once since the last reset (parload__fault_aio_peak). */
static atomic_long aio_flying, aio_peak;
/* parload__fault_ring: whether io_uring_setup makes rings. */
static atomic_bool ring_on;

/* The stream whose last fread this seam failed: ferror() must then say
 * so, as it would after a real failure.  Per thread, like errno. */
static _Thread_local FILE *failed_stream;

/* ---- controls ---- */

void parload__fault_reset(void)
{
	atomic_store(&target, 0);
	atomic_store(&mask, PARLOAD__FK_ALL);
	atomic_store(&calls, 0);
	atomic_store(&fail_errno, 0);
	atomic_store(&fired, -1);
	atomic_store(&short_max, 0);
	atomic_store(&eintr_every, 0);
	atomic_store(&intr_calls, 0);
	atomic_store(&eio_offset, NO_OFFSET);
	atomic_store(&watch_lo, 0);
	atomic_store(&watch_hi, 0);
	atomic_store(&watched, 0);
	atomic_store(&advised_read, 0);
	atomic_store(&aio_flying, 0);
	atomic_store(&aio_peak, 0);
}

void parload__fault_watch(const void *buf, size_t len)
{
	atomic_store(&watch_lo, (uintptr_t)buf);
	atomic_store(&watch_hi, (uintptr_t)buf + len);
	atomic_store(&watched, 0);
}

uint64_t parload__fault_watched(void)
{
	return atomic_load(&watched);
}

long parload__fault_aio_peak(void)
{
	return atomic_load(&aio_peak);
}

void parload__fault_ring(bool on)
{
	atomic_store(&ring_on, on);
}

uint64_t parload__fault_advised_reads(void)
{
	return atomic_load(&advised_read);
}

/* [a, b) advised MADV_HUGEPAGE. */
static void advise_add(uintptr_t a, uintptr_t b)
{
	pthread_mutex_lock(&advised_lock);
	if (n_advised < ADVISED_MAX) {
		advised[n_advised][0] = a;
		advised[n_advised++][1] = b;
	}
	pthread_mutex_unlock(&advised_lock);
}

/* [a, b) unmapped: the advised ranges in it are gone. */
static void advise_forget(uintptr_t a, uintptr_t b)
{
	pthread_mutex_lock(&advised_lock);
	for (int i = 0; i < n_advised;)
		if (advised[i][0] >= a && advised[i][1] <= b) {
			advised[i][0] = advised[--n_advised][0];
			advised[i][1] = advised[n_advised][1];
		} else {
			i++;
		}
	pthread_mutex_unlock(&advised_lock);
}

/* The bytes of [a, b) in an advised range (the ranges do not overlap). */
static void advised_count(uintptr_t a, uintptr_t b)
{
	uint64_t n = 0;

	pthread_mutex_lock(&advised_lock);
	for (int i = 0; i < n_advised; i++) {
		const uintptr_t lo = a > advised[i][0] ? a : advised[i][0];
		const uintptr_t hi = b < advised[i][1] ? b : advised[i][1];

		if (hi > lo)
			n += hi - lo;
	}
	pthread_mutex_unlock(&advised_lock);
	if (n)
		atomic_fetch_add(&advised_read, n);
}

/* The part of the n bytes read into buf that lies in the watched buffer,
 * and in advised ranges. */
static void watch_read(const void *buf, size_t n)
{
	const uintptr_t lo = atomic_load(&watch_lo), hi = atomic_load(&watch_hi);
	uintptr_t a = (uintptr_t)buf, b = a + n;

	advised_count(a, b);
	a = a > lo ? a : lo;
	b = b < hi ? b : hi;
	if (b > a)
		atomic_fetch_add(&watched, b - a);
}

/* The same for a vector read that returned r. */
static ssize_t watch_vector(const struct iovec *iov, int cnt, ssize_t r)
{
	size_t left = r > 0 ? (size_t)r : 0;

	for (int i = 0; i < cnt && left > 0; i++) {
		const size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		watch_read(iov[i].iov_base, n);
		left -= n;
	}
	return r;
}

void parload__fault_fail_nth(uint64_t n, uint64_t m, int err)
{
	atomic_store(&target, 0);
	atomic_store(&calls, 0);
	atomic_store(&fired, -1);
	atomic_store(&mask, m & PARLOAD__FK_EVERY);
	atomic_store(&fail_errno, err);
	atomic_store(&target, n);
}

void parload__fault_short(size_t max)
{
	atomic_store(&short_max, max);
}

void parload__fault_eintr_every(uint64_t k)
{
	/* Every call interrupted would never let a retry through. */
	atomic_store(&intr_calls, 0);
	atomic_store(&eintr_every, k == 1 ? 2 : k);
}

void parload__fault_eio_at(uint64_t off)
{
	atomic_store(&eio_offset, off);
}

uint64_t parload__fault_calls(void)
{
	return atomic_load(&calls);
}

int parload__fault_fired(void)
{
	return atomic_load(&fired);
}

long parload__fault_live(parload__fault_res r)
{
	return (unsigned)r < PARLOAD__FR_COUNT ? atomic_load(&live[r]) : 0;
}

const char *parload__fault_kind_name(int k)
{
	return k >= 0 && k < PARLOAD__FK_COUNT ? kinds[k].name : "none";
}

const char *parload__fault_res_name(int r)
{
	return r >= 0 && r < PARLOAD__FR_COUNT ? res_names[r] : "?";
}

int parload__fault_kind_errno(int k)
{
	return k >= 0 && k < PARLOAD__FK_COUNT ? kinds[k].err : 0;
}

bool parload__fault_kind_interruptible(int k)
{
	return k >= 0 && k < PARLOAD__FK_COUNT && kinds[k].intr;
}

/* ---- deciding ---- */

/* 0 to go ahead, or the errno this call fails with. */
static int should_fail(parload__fault_kind k)
{
	uint64_t every;

	if ((atomic_load_explicit(&mask, memory_order_relaxed) >> k) & 1) {
		uint64_t n = atomic_fetch_add_explicit(&calls, 1,
						       memory_order_relaxed) + 1;

		if (n == atomic_load_explicit(&target, memory_order_relaxed)) {
			int e = atomic_load(&fail_errno);

			atomic_store(&fired, (int)k);
			return e ? e : kinds[k].err;
		}
	}
	every = atomic_load_explicit(&eintr_every, memory_order_relaxed);
	if (every && kinds[k].intr &&
	    (atomic_fetch_add(&intr_calls, 1) + 1) % every == 0)
		return EINTR;
	return 0;
}

static void acquired(parload__fault_res r)
{
	atomic_fetch_add(&live[r], 1);
}

static void released(parload__fault_res r)
{
	atomic_fetch_sub(&live[r], 1);
}

/*
 * Cut a transfer of *n bytes at file offset off (NO_OFFSET when unknown):
 * a read that would cross the bad offset stops just before it, one that
 * starts there fails with EIO (returned), and short transfers are cut to
 * their size.
 */
static int cut(size_t *n, uint64_t off, bool reading)
{
	uint64_t bad = atomic_load_explicit(&eio_offset, memory_order_relaxed);
	size_t s = atomic_load_explicit(&short_max, memory_order_relaxed);

	if (*n == 0)
		return 0;
	if (reading && bad != NO_OFFSET && off != NO_OFFSET) {
		if (off == bad)
			return EIO;
		if (off < bad && bad - off < *n)
			*n = (size_t)(bad - off);
	}
	if (s && *n > s)
		*n = s;
	return 0;
}

/* The file position of fd, looked up only when an offset matters. */
static uint64_t position(int fd)
{
	off_t p;

	if (atomic_load_explicit(&eio_offset, memory_order_relaxed) ==
	    NO_OFFSET)
		return NO_OFFSET;
	p = lseek(fd, 0, SEEK_CUR);
	return p < 0 ? NO_OFFSET : (uint64_t)p;
}

#define FAIL_WITH(e, value)                                                    \
	do {                                                                   \
		errno = (e);                                                   \
		return (value);                                                \
	} while (0)

/* ---- files ---- */

int parload__fault_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int e = should_fail(PARLOAD__FK_OPEN), fd;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (e)
		FAIL_WITH(e, -1);
	fd = open(path, flags, mode);
	if (fd >= 0)
		acquired(PARLOAD__FR_FD);
	return fd;
}

int parload__fault_close(int fd)
{
	int r = close(fd), e;

	/* Linux releases the descriptor even when close reports an error. */
	if (r == 0 || errno != EBADF)
		released(PARLOAD__FR_FD);
	e = should_fail(PARLOAD__FK_CLOSE);
	if (e)
		FAIL_WITH(e, -1);
	return r;
}

int parload__fault_fstat(int fd, struct stat *st)
{
	int e = should_fail(PARLOAD__FK_FSTAT);

	if (e)
		FAIL_WITH(e, -1);
	return fstat(fd, st);
}

ssize_t parload__fault_read(int fd, void *buf, size_t n)
{
	int e = should_fail(PARLOAD__FK_READ);

	if (e == 0)
		e = cut(&n, position(fd), true);
	if (e)
		FAIL_WITH(e, -1);
	return read(fd, buf, n);
}

ssize_t parload__fault_pread(int fd, void *buf, size_t n, off_t off)
{
	int e = should_fail(PARLOAD__FK_PREAD);

	if (e == 0)
		e = cut(&n, off < 0 ? NO_OFFSET : (uint64_t)off, true);
	if (e)
		FAIL_WITH(e, -1);
	{
		const ssize_t r = pread(fd, buf, n, off);

		if (r > 0)
			watch_read(buf, (size_t)r);
		return r;
	}
}

/* preadv: the vector cut short as the controls say, the caller's left as
 * it was. */
ssize_t parload__fault_preadv(int fd, const struct iovec *iov, int cnt,
			      off_t off)
{
	struct iovec v[IOV_MAX];
	size_t total = 0, n;
	int e = should_fail(PARLOAD__FK_PREADV), k = 0;

	if (e)
		FAIL_WITH(e, -1);
	/* Out-of-range vectors go to the kernel as they are: it says no. */
	if (cnt <= 0 || cnt > IOV_MAX)
		return watch_vector(iov, cnt, preadv(fd, iov, cnt, off));
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	n = total;
	e = cut(&n, off < 0 ? NO_OFFSET : (uint64_t)off, true);
	if (e)
		FAIL_WITH(e, -1);
	if (n == total)
		return watch_vector(iov, cnt, preadv(fd, iov, cnt, off));
	for (size_t left = n; left > 0; k++) {
		v[k] = iov[k];
		if (v[k].iov_len > left)
			v[k].iov_len = left;
		left -= v[k].iov_len;
	}
	return watch_vector(v, k, preadv(fd, v, k, off));
}

off_t parload__fault_lseek(int fd, off_t off, int whence)
{
	int e = should_fail(PARLOAD__FK_LSEEK);

	if (e)
		FAIL_WITH(e, (off_t)-1);
	return lseek(fd, off, whence);
}

ssize_t parload__fault_write(int fd, const void *buf, size_t n)
{
	int e = should_fail(PARLOAD__FK_WRITE);

	if (e == 0)
		e = cut(&n, NO_OFFSET, false);
	if (e)
		FAIL_WITH(e, -1);
	return write(fd, buf, n);
}

/* ---- stdio ---- */

FILE *parload__fault_fopen(const char *path, const char *mode)
{
	int e = should_fail(PARLOAD__FK_FOPEN);
	FILE *fp;

	if (e)
		FAIL_WITH(e, NULL);
	fp = fopen(path, mode);
	if (fp)
		acquired(PARLOAD__FR_STREAM);
	return fp;
}

int parload__fault_fclose(FILE *fp)
{
	int r, e;

	if (fp == failed_stream)
		failed_stream = NULL;
	/* The stream is gone whatever fclose returns. */
	r = fclose(fp);
	released(PARLOAD__FR_STREAM);
	e = should_fail(PARLOAD__FK_FCLOSE);
	if (e)
		FAIL_WITH(e, EOF);
	return r;
}

size_t parload__fault_fread(void *buf, size_t size, size_t n, FILE *fp)
{
	uint64_t bad = atomic_load_explicit(&eio_offset, memory_order_relaxed);
	int e = should_fail(PARLOAD__FK_FREAD);
	size_t got = 0;

	if (e == 0 && bad != NO_OFFSET && size && n) {
		off_t pos = ftello(fp);

		if (pos >= 0 && (uint64_t)pos == bad) {
			e = EIO;
		} else if (pos >= 0 && (uint64_t)pos < bad &&
			   (bad - (uint64_t)pos) / size < n) {
			/* Deliver what lies before the bad offset, then fail
			 * as fread does: a short count and the error flag. */
			got = fread(buf, size,
				    (size_t)((bad - (uint64_t)pos) / size), fp);
			e = EIO;
		}
	}
	if (e) {
		failed_stream = fp;
		FAIL_WITH(e, got);
	}
	return fread(buf, size, n, fp);
}

int parload__fault_fseeko(FILE *fp, off_t off, int whence)
{
	int e = should_fail(PARLOAD__FK_FSEEKO);

	if (e)
		FAIL_WITH(e, -1);
	return fseeko(fp, off, whence);
}

int parload__fault_ferror(FILE *fp)
{
	return ferror(fp) || (fp && fp == failed_stream);
}

void parload__fault_clearerr(FILE *fp)
{
	if (fp == failed_stream)
		failed_stream = NULL;
	clearerr(fp);
}

/* ---- descriptors: duplicates, streams over them, waits ---- */

int parload__fault_fcntl(int fd, int cmd, int arg)
{
	int e = should_fail(PARLOAD__FK_FCNTL);
	int r;

	if (e)
		FAIL_WITH(e, -1);
	r = fcntl(fd, cmd, arg);
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		acquired(PARLOAD__FR_FD);
	return r;
}

/* The stream owns the descriptor from now on: its fclose closes it. */
FILE *parload__fault_fdopen(int fd, const char *mode)
{
	int e = should_fail(PARLOAD__FK_FDOPEN);
	FILE *fp;

	if (e)
		FAIL_WITH(e, NULL);
	fp = fdopen(fd, mode);
	if (fp) {
		released(PARLOAD__FR_FD);
		acquired(PARLOAD__FR_STREAM);
	}
	return fp;
}

int parload__fault_stat(const char *path, struct stat *st)
{
	int e = should_fail(PARLOAD__FK_STAT);

	if (e)
		FAIL_WITH(e, -1);
	return stat(path, st);
}

int parload__fault_lstat(const char *path, struct stat *st)
{
	int e = should_fail(PARLOAD__FK_STAT);

	if (e)
		FAIL_WITH(e, -1);
	return lstat(path, st);
}

int parload__fault_posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	int e = should_fail(PARLOAD__FK_FADVISE);

	return e ? e : posix_fadvise(fd, off, len, advice);
}

int parload__fault_mincore(void *addr, size_t len, unsigned char *vec)
{
	int e = should_fail(PARLOAD__FK_MINCORE);

	if (e)
		FAIL_WITH(e, -1);
	return mincore(addr, len, vec);
}

int parload__fault_rename(const char *from, const char *to)
{
	int e = should_fail(PARLOAD__FK_RENAME);

	if (e)
		FAIL_WITH(e, -1);
	return rename(from, to);
}

int parload__fault_renameat2(int from_dir, const char *from, int to_dir,
			     const char *to, unsigned flags)
{
	int e = should_fail(PARLOAD__FK_RENAME);

	if (e)
		FAIL_WITH(e, -1);
#ifdef HAVE_RENAMEAT2
	return renameat2(from_dir, from, to_dir, to, flags);
#else
	(void)from_dir, (void)from, (void)to_dir, (void)to, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

int parload__fault_mkdir(const char *path, mode_t mode)
{
	int e = should_fail(PARLOAD__FK_MKDIR);

	if (e)
		FAIL_WITH(e, -1);
	return mkdir(path, mode);
}

int parload__fault_rmdir(const char *path)
{
	int e = should_fail(PARLOAD__FK_RMDIR);

	if (e)
		FAIL_WITH(e, -1);
	return rmdir(path);
}

int parload__fault_unlink(const char *path)
{
	int e = should_fail(PARLOAD__FK_UNLINK);

	if (e)
		FAIL_WITH(e, -1);
	return unlink(path);
}

DIR *parload__fault_opendir(const char *path)
{
	int e = should_fail(PARLOAD__FK_OPENDIR);

	if (e)
		FAIL_WITH(e, NULL);
	return opendir(path);
}

int parload__fault_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int e = should_fail(PARLOAD__FK_POLL);

	if (e)
		FAIL_WITH(e, -1);
	return poll(fds, n, timeout);
}

ssize_t parload__fault_process_vm_readv(pid_t pid, const struct iovec *local,
					unsigned long nlocal,
					const struct iovec *remote,
					unsigned long nremote,
					unsigned long flags)
{
	int e = should_fail(PARLOAD__FK_PROCESS_VM_READV);

	if (e)
		FAIL_WITH(e, -1);
	return process_vm_readv(pid, local, nlocal, remote, nremote, flags);
}

/* ---- memory ---- */

void *parload__fault_mmap(void *addr, size_t len, int prot, int flags,
			  int fd, off_t off)
{
	int e = should_fail(PARLOAD__FK_MMAP);
	void *p;

	if (e)
		FAIL_WITH(e, MAP_FAILED);
	p = mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		acquired(PARLOAD__FR_MAP);
	return p;
}

int parload__fault_munmap(void *addr, size_t len)
{
	int r = munmap(addr, len);

	if (r == 0) {
		released(PARLOAD__FR_MAP);
		advise_forget((uintptr_t)addr, (uintptr_t)addr + len);
	}
	return r;
}

/* ---- Linux AIO and io_uring ---- */

#if defined(HAVE_LINUX_IO_URING_H) || defined(HAVE_LINUX_AIO_ABI_H)
/* A queued read of *len bytes at off, cut as pread's are; one that
 * starts at the bad offset reads nothing: its reader reads it again, and
 * fails there. */
static void cut_queued(size_t *len, uint64_t off)
{
	if (cut(len, off, true))
		*len = 0;
}

/* n more reads in flight. */
static void flying(long n)
{
	long now = atomic_fetch_add(&aio_flying, n) + n;
	long peak = atomic_load(&aio_peak);

	while (now > peak &&
	       !atomic_compare_exchange_weak(&aio_peak, &peak, now))
		;
}
#endif

#if defined(HAVE_LINUX_IO_URING_H) && defined(SYS_io_uring_setup)
long parload__fault_io_uring_setup(unsigned n, void *params)
{
	int e = should_fail(PARLOAD__FK_IO_URING_SETUP);
	long r;

	if (e)
		FAIL_WITH(e, -1);
	if (!atomic_load(&ring_on))
		FAIL_WITH(ENOSYS, -1);
	r = syscall(SYS_io_uring_setup, n, params);
	if (r >= 0)
		acquired(PARLOAD__FR_AIO);
	return r;
}

long parload__fault_io_uring_enter(int fd, unsigned n, unsigned min,
				   unsigned flags, void *iov, uint64_t off)
{
	struct iovec *v = iov;
	int e = should_fail(PARLOAD__FK_IO_URING_ENTER);
	long r;

	if (e)
		FAIL_WITH(e, -1);
	if (v)
		cut_queued(&v->iov_len, off);
	r = syscall(SYS_io_uring_enter, fd, n, min, flags, NULL, 0);
	if (v && r > 0)
		flying(r);
	return r;
}

void parload__fault_io_uring_reaped(const void *iov, long res)
{
	const struct iovec *v = iov;

	atomic_fetch_sub(&aio_flying, 1);
	if (res > 0)
		watch_read(v->iov_base, (size_t)res);
}

int parload__fault_io_uring_close(int fd)
{
	released(PARLOAD__FR_AIO);
	return close(fd);
}
#else
long parload__fault_io_uring_setup(unsigned n, void *params)
{
	(void)n, (void)params;
	FAIL_WITH(ENOSYS, -1);
}

long parload__fault_io_uring_enter(int fd, unsigned n, unsigned min,
				   unsigned flags, void *iov, uint64_t off)
{
	(void)fd, (void)n, (void)min, (void)flags, (void)iov, (void)off;
	FAIL_WITH(ENOSYS, -1);
}

void parload__fault_io_uring_reaped(const void *iov, long res)
{
	(void)iov, (void)res;
}

int parload__fault_io_uring_close(int fd)
{
	return close(fd);
}
#endif

#ifdef HAVE_LINUX_AIO_ABI_H
#include <linux/aio_abi.h>
#include <sys/syscall.h>

long parload__fault_io_setup(unsigned n, unsigned long *ctx)
{
	int e = should_fail(PARLOAD__FK_IO_SETUP);
	long r;

	if (e)
		FAIL_WITH(e, -1);
	r = syscall(SYS_io_setup, n, ctx);
	if (r == 0)
		acquired(PARLOAD__FR_AIO);
	return r;
}

long parload__fault_io_submit(unsigned long ctx, long n, void *cbs)
{
	struct iocb **cb = cbs;
	int e = should_fail(PARLOAD__FK_IO_SUBMIT);
	long r;

	if (e)
		FAIL_WITH(e, -1);
	for (long i = 0; i < n; i++) {
		size_t len = (size_t)cb[i]->aio_nbytes;

		cut_queued(&len, (uint64_t)cb[i]->aio_offset);
		cb[i]->aio_nbytes = len;
	}
	r = syscall(SYS_io_submit, ctx, n, cbs);
	if (r > 0)
		flying(r);
	return r;
}

long parload__fault_io_getevents(unsigned long ctx, long min, long max,
				 void *ev)
{
	struct io_event *v = ev;
	int e = should_fail(PARLOAD__FK_IO_GETEVENTS);
	long r;

	if (e)
		FAIL_WITH(e, -1);
	r = syscall(SYS_io_getevents, ctx, min, max, ev, NULL);
	if (r > 0)
		atomic_fetch_sub(&aio_flying, r);
	for (long i = 0; i < r; i++) {
		const struct iocb *cb = (const void *)(uintptr_t)v[i].obj;

		if (v[i].res > 0)
			watch_read((const void *)(uintptr_t)cb->aio_buf,
				   (size_t)v[i].res);
	}
	return r;
}

long parload__fault_io_destroy(unsigned long ctx)
{
	long r = syscall(SYS_io_destroy, ctx);

	released(PARLOAD__FR_AIO);
	return r;
}
#else
long parload__fault_io_setup(unsigned n, unsigned long *ctx)
{
	(void)n, (void)ctx;
	FAIL_WITH(ENOSYS, -1);
}

long parload__fault_io_submit(unsigned long ctx, long n, void *cbs)
{
	(void)ctx, (void)n, (void)cbs;
	FAIL_WITH(ENOSYS, -1);
}

long parload__fault_io_getevents(unsigned long ctx, long min, long max,
				 void *ev)
{
	(void)ctx, (void)min, (void)max, (void)ev;
	FAIL_WITH(ENOSYS, -1);
}

long parload__fault_io_destroy(unsigned long ctx)
{
	(void)ctx;
	FAIL_WITH(ENOSYS, -1);
}
#endif

int parload__fault_madvise(void *addr, size_t len, int advice)
{
	int e = should_fail(PARLOAD__FK_MADVISE), r;

	if (e)
		FAIL_WITH(e, -1);
	r = madvise(addr, len, advice);
	if (r == 0 && advice == MADV_HUGEPAGE)
		advise_add((uintptr_t)addr, (uintptr_t)addr + len);
	return r;
}

void *parload__fault_malloc(size_t n)
{
	int e = should_fail(PARLOAD__FK_MALLOC);
	void *p;

	if (e)
		FAIL_WITH(e, NULL);
	p = malloc(n);
	if (p)
		acquired(PARLOAD__FR_HEAP);
	return p;
}

void *parload__fault_calloc(size_t n, size_t size)
{
	int e = should_fail(PARLOAD__FK_CALLOC);
	void *p;

	if (e)
		FAIL_WITH(e, NULL);
	p = calloc(n, size);
	if (p)
		acquired(PARLOAD__FR_HEAP);
	return p;
}

char *parload__fault_strdup(const char *s)
{
	int e = should_fail(PARLOAD__FK_STRDUP);
	char *p;

	if (e)
		FAIL_WITH(e, NULL);
	p = strdup(s);
	if (p)
		acquired(PARLOAD__FR_HEAP);
	return p;
}

void parload__fault_free(void *p)
{
	if (p)
		released(PARLOAD__FR_HEAP);
	free(p);
}

/* ---- threads ---- */

int parload__fault_pthread_create(pthread_t *t, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg)
{
	int e = should_fail(PARLOAD__FK_PTHREAD_CREATE);

	if (e)
		return e;
	e = pthread_create(t, attr, fn, arg);
	if (e == 0)
		acquired(PARLOAD__FR_THREAD);
	return e;
}

int parload__fault_pthread_join(pthread_t t, void **ret)
{
	int e = pthread_join(t, ret);

	if (e == 0)
		released(PARLOAD__FR_THREAD);
	return e;
}

int parload__fault_pthread_mutex_init(pthread_mutex_t *m,
				      const pthread_mutexattr_t *attr)
{
	int e = should_fail(PARLOAD__FK_MUTEX_INIT);

	if (e)
		return e;
	e = pthread_mutex_init(m, attr);
	if (e == 0)
		acquired(PARLOAD__FR_SYNC);
	return e;
}

int parload__fault_pthread_mutex_destroy(pthread_mutex_t *m)
{
	int e = pthread_mutex_destroy(m);

	if (e == 0)
		released(PARLOAD__FR_SYNC);
	return e;
}

int parload__fault_pthread_cond_init(pthread_cond_t *c,
				     const pthread_condattr_t *attr)
{
	int e = should_fail(PARLOAD__FK_COND_INIT);

	if (e)
		return e;
	e = pthread_cond_init(c, attr);
	if (e == 0)
		acquired(PARLOAD__FR_SYNC);
	return e;
}

int parload__fault_pthread_cond_destroy(pthread_cond_t *c)
{
	int e = pthread_cond_destroy(c);

	if (e == 0)
		released(PARLOAD__FR_SYNC);
	return e;
}

/* ---- hwloc ---- */

int parload__fault_hwloc_topology_init(void *topop)
{
	int e = should_fail(PARLOAD__FK_TOPOLOGY_INIT), r;

	if (e)
		FAIL_WITH(e, -1);
	r = hwloc_topology_init((hwloc_topology_t *)topop);
	if (r == 0)
		acquired(PARLOAD__FR_TOPOLOGY);
	return r;
}

int parload__fault_hwloc_topology_load(void *topo)
{
	int e = should_fail(PARLOAD__FK_TOPOLOGY_LOAD);

	if (e)
		FAIL_WITH(e, -1);
	return hwloc_topology_load((hwloc_topology_t)topo);
}

void parload__fault_hwloc_topology_destroy(void *topo)
{
	hwloc_topology_destroy((hwloc_topology_t)topo);
	released(PARLOAD__FR_TOPOLOGY);
}

void *parload__fault_hwloc_bitmap_alloc(void)
{
	int e = should_fail(PARLOAD__FK_BITMAP_ALLOC);
	hwloc_bitmap_t b;

	if (e)
		FAIL_WITH(e, NULL);
	b = hwloc_bitmap_alloc();
	if (b)
		acquired(PARLOAD__FR_BITMAP);
	return b;
}

void *parload__fault_hwloc_bitmap_dup(const void *set)
{
	int e = should_fail(PARLOAD__FK_BITMAP_DUP);
	hwloc_bitmap_t b;

	if (e)
		FAIL_WITH(e, NULL);
	b = hwloc_bitmap_dup((hwloc_const_bitmap_t)set);
	if (b)
		acquired(PARLOAD__FR_BITMAP);
	return b;
}

void parload__fault_hwloc_bitmap_free(void *set)
{
	if (set)
		released(PARLOAD__FR_BITMAP);
	hwloc_bitmap_free((hwloc_bitmap_t)set);
}

int parload__fault_hwloc_get_cpubind(void *topo, void *set, int flags)
{
	int e = should_fail(PARLOAD__FK_GET_CPUBIND);

	if (e)
		FAIL_WITH(e, -1);
	return hwloc_get_cpubind((hwloc_topology_t)topo, (hwloc_bitmap_t)set,
				 flags);
}

int parload__fault_hwloc_set_cpubind(void *topo, const void *set, int flags)
{
	int e = should_fail(PARLOAD__FK_SET_CPUBIND);

	if (e)
		FAIL_WITH(e, -1);
	return hwloc_set_cpubind((hwloc_topology_t)topo,
				 (hwloc_const_bitmap_t)set, flags);
}

int parload__fault_hwloc_set_area_membind(void *topo, const void *addr,
					  size_t len, const void *set,
					  int policy, int flags)
{
	int e = should_fail(PARLOAD__FK_SET_MEMBIND);

	if (e)
		FAIL_WITH(e, -1);
	return hwloc_set_area_membind((hwloc_topology_t)topo, addr, len,
				      (hwloc_const_bitmap_t)set,
				      (hwloc_membind_policy_t)policy, flags);
}
