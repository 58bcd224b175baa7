/*
 * fault.h - the fault-injection seam (built with --enable-fault-injection;
 * src/base/sys.h routes the library's calls here).
 *
 * Every system, allocation, thread and hwloc call that libparload makes
 * goes through one of the parload__sys_x names below.  In a normal build
 * each name is a macro for the plain call, so a release build compiles to
 * exactly what it would without the seam.  Configured with
 * --enable-fault-injection (PARLOAD_FAULT_INJECTION), the names call the
 * wrappers of fault.c instead, which the tests drive through the
 * parload__fault_x controls to:
 *
 *  - fail the N-th call (optionally only among some kinds of call) with a
 *    chosen errno, or the errno that call most plausibly fails with;
 *  - make read and write calls short (at most so many bytes a call);
 *  - interrupt every K-th interruptible call with EINTR;
 *  - stop reads short of a file offset and fail with EIO there, as a disk
 *    with a bad sector does;
 *  - count the bytes reads put into one buffer (which reads went straight
 *    into a caller's buffer);
 *
 * and count the resources the library holds (descriptors, streams, heap
 * blocks, mappings, threads, locks, topologies, bitmaps), so a test can
 * tell that a failed call left nothing behind.
 *
 * Release calls (close, fclose, munmap, free, pthread_join, the destroys)
 * are counted, and close and fclose can be made to report an error, but
 * they always release: that is what the kernel and libc do (a close that
 * fails has still closed the descriptor), and a seam that kept the
 * resource would only model a leak the code could not avoid.
 *
 * The hwloc wrappers take void pointers so that this header does not need
 * hwloc.h: in the fault-injection build only, an hwloc call's arguments are
 * not type-checked against hwloc's prototypes (the normal build checks
 * them).
 */
#ifndef PARLOAD_FAULT_H
#define PARLOAD_FAULT_H

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

/*
 * The calls that can be made to fail: name, the errno they fail with by
 * default, and whether a signal can interrupt them (EINTR).  Failing a
 * best-effort call (madvise, the bindings, the topology's process binding)
 * must not fail a load.
 */
#define PARLOAD__FAULT_KINDS(X)                                                \
	X(OPEN, "open", EMFILE, true)                                          \
	X(CLOSE, "close", EIO, false)                                          \
	X(FSTAT, "fstat", EIO, false)                                          \
	X(STAT, "stat", EACCES, false)                                         \
	X(FADVISE, "posix_fadvise", EINVAL, false)                             \
	X(MINCORE, "mincore", ENOMEM, false)                                   \
	X(RENAME, "rename", EXDEV, false)                                      \
	X(MKDIR, "mkdir", ENOSPC, false)                                       \
	X(RMDIR, "rmdir", EBUSY, false)                                        \
	X(UNLINK, "unlink", EACCES, false)                                     \
	X(OPENDIR, "opendir", EMFILE, false)                                   \
	X(READ, "read", EIO, true)                                             \
	X(PREAD, "pread", EIO, true)                                           \
	X(PREADV, "preadv", EIO, true)                                         \
	X(LSEEK, "lseek", EOVERFLOW, false)                                    \
	X(WRITE, "write", ENOSPC, true)                                        \
	X(FOPEN, "fopen", EMFILE, true)                                        \
	X(FCLOSE, "fclose", EIO, false)                                        \
	X(FREAD, "fread", EIO, true)                                           \
	X(FSEEKO, "fseeko", EIO, false)                                        \
	X(FCNTL, "fcntl", EMFILE, false)                                       \
	X(FDOPEN, "fdopen", ENOMEM, false)                                     \
	X(POLL, "poll", ENOMEM, true)                                          \
	X(PROCESS_VM_READV, "process_vm_readv", EPERM, false)                  \
	X(MMAP, "mmap", ENOMEM, false)                                         \
	X(MADVISE, "madvise", EINVAL, false)                                   \
	X(IO_SETUP, "io_setup", EAGAIN, false)                                 \
	X(IO_SUBMIT, "io_submit", EAGAIN, false)                               \
	X(IO_GETEVENTS, "io_getevents", EINVAL, true)                          \
	X(IO_URING_SETUP, "io_uring_setup", EPERM, false)                      \
	X(IO_URING_ENTER, "io_uring_enter", EAGAIN, true)                      \
	X(MALLOC, "malloc", ENOMEM, false)                                     \
	X(CALLOC, "calloc", ENOMEM, false)                                     \
	X(STRDUP, "strdup", ENOMEM, false)                                     \
	X(PTHREAD_CREATE, "pthread_create", EAGAIN, false)                     \
	X(MUTEX_INIT, "pthread_mutex_init", ENOMEM, false)                     \
	X(COND_INIT, "pthread_cond_init", ENOMEM, false)                       \
	X(TOPOLOGY_INIT, "hwloc_topology_init", ENOMEM, false)                 \
	X(TOPOLOGY_LOAD, "hwloc_topology_load", EINVAL, false)                 \
	X(BITMAP_ALLOC, "hwloc_bitmap_alloc", ENOMEM, false)                   \
	X(BITMAP_DUP, "hwloc_bitmap_dup", ENOMEM, false)                       \
	X(GET_CPUBIND, "hwloc_get_cpubind", ENOSYS, false)                     \
	X(SET_CPUBIND, "hwloc_set_cpubind", EXDEV, false)                      \
	X(SET_MEMBIND, "hwloc_set_area_membind", EXDEV, false)

typedef enum parload__fault_kind {
#define PARLOAD__FAULT_ENUM_(k, name, err, intr) PARLOAD__FK_##k,
	PARLOAD__FAULT_KINDS(PARLOAD__FAULT_ENUM_)
#undef PARLOAD__FAULT_ENUM_
	PARLOAD__FK_COUNT
} parload__fault_kind;

#define PARLOAD__FK_BIT(k) ((uint64_t)1 << PARLOAD__FK_##k)
/* Every kind whose calls a load makes a fixed number of times, which a
 * walk over the N-th call counts on: not io_getevents nor io_uring_enter
 * (which both hands reads over and waits for them), called as often as
 * the device's timing has it (aio.c waits until the read it needs is
 * done), which tests arm by their own bits. */
#define PARLOAD__FK_ALL                                                        \
	((((uint64_t)1 << PARLOAD__FK_COUNT) - 1) &                            \
	 ~PARLOAD__FK_BIT(IO_GETEVENTS) & ~PARLOAD__FK_BIT(IO_URING_ENTER))
#define PARLOAD__FK_EVERY (((uint64_t)1 << PARLOAD__FK_COUNT) - 1)

/* What the library holds: acquired by a wrapped call, released by its
 * counterpart. */
typedef enum parload__fault_res {
	PARLOAD__FR_FD,       /* open, fcntl F_DUPFD(_CLOEXEC) - close, fdopen */
	PARLOAD__FR_STREAM,   /* fopen, fdopen - fclose */
	PARLOAD__FR_HEAP,     /* malloc, calloc, strdup - free */
	PARLOAD__FR_MAP,      /* mmap - munmap */
	PARLOAD__FR_AIO,      /* a queue of reads in flight: io_setup -
			       * io_destroy, io_uring_setup - its close */
	PARLOAD__FR_THREAD,   /* pthread_create - pthread_join */
	PARLOAD__FR_SYNC,     /* mutex and condition init - destroy */
	PARLOAD__FR_TOPOLOGY, /* hwloc_topology_init - destroy */
	PARLOAD__FR_BITMAP,   /* hwloc_bitmap_alloc, dup - free */
	PARLOAD__FR_COUNT
} parload__fault_res;

/* ---- controls, for the tests ---- */

/* Disarm every fault and zero the call counters (not the resource
 * counts, which are absolute). */
void parload__fault_reset(void);
/* Fail the n-th call from now (1 is the next) among the kinds in mask
 * (PARLOAD__FK_ALL for any but io_getevents) with errno err, or with the kind's own errno
 * when err is 0.  Only that one call fails. */
void parload__fault_fail_nth(uint64_t n, uint64_t mask, int err);
/* read, pread, preadv(2) and write move at most max bytes a call; 0 turns
 * this off.  fread is not shortened: a short fread means end of file or
 * error, and glibc already loops over the short reads beneath it. */
void parload__fault_short(size_t max);
/* Count the bytes that pread and preadv put into [buf, buf + len) from
 * now on (parload__fault_watched): which reads went straight into a
 * caller's buffer.  parload__fault_reset stops watching. */
void parload__fault_watch(const void *buf, size_t len);
uint64_t parload__fault_watched(void);
/* The bytes that pread and preadv put, since the last reset, into memory
 * advised MADV_HUGEPAGE and not unmapped since: which reads went through
 * memory the kernel may back with huge pages. */
uint64_t parload__fault_advised_reads(void);
/* The most reads in flight at once (submitted, not yet reaped: Linux
 * AIO's or io_uring's) since the last reset. */
long parload__fault_aio_peak(void);
/* Whether io_uring_setup makes a ring (true) or fails with ENOSYS as on a
 * kernel without io_uring (false, the default, so that the suites that
 * count AIO's calls see Linux AIO); parload__fault_reset leaves it. */
void parload__fault_ring(bool on);
/* Every k-th interruptible call (k >= 2) fails with EINTR before doing
 * anything; 0 turns this off. */
void parload__fault_eintr_every(uint64_t k);
/* Reads (read, pread, preadv, fread) of any file stop short of byte
 * offset off and fail with EIO when they start there; UINT64_MAX turns
 * this off. */
void parload__fault_eio_at(uint64_t off);
/* Calls among the armed mask seen since the last reset. */
uint64_t parload__fault_calls(void);
/* The kind of the call that fail_nth failed, or -1 if it has not
 * happened. */
int parload__fault_fired(void);
/* Resources of each class held now. */
long parload__fault_live(parload__fault_res r);
const char *parload__fault_kind_name(int kind);
const char *parload__fault_res_name(int res);
/* The kind's default errno, and whether it is interruptible. */
int parload__fault_kind_errno(int kind);
bool parload__fault_kind_interruptible(int kind);

/* ---- the wrappers ---- */

int parload__fault_open(const char *path, int flags, ...);
int parload__fault_close(int fd);
int parload__fault_fstat(int fd, struct stat *st);
ssize_t parload__fault_read(int fd, void *buf, size_t n);
ssize_t parload__fault_pread(int fd, void *buf, size_t n, off_t off);
ssize_t parload__fault_preadv(int fd, const struct iovec *iov, int cnt,
			      off_t off);
off_t parload__fault_lseek(int fd, off_t off, int whence);
ssize_t parload__fault_write(int fd, const void *buf, size_t n);
FILE *parload__fault_fopen(const char *path, const char *mode);
int parload__fault_fclose(FILE *fp);
size_t parload__fault_fread(void *buf, size_t size, size_t n, FILE *fp);
int parload__fault_fseeko(FILE *fp, off_t off, int whence);
int parload__fault_ferror(FILE *fp);
void parload__fault_clearerr(FILE *fp);
/* fcntl with one int argument (0 for the commands that take none). */
int parload__fault_fcntl(int fd, int cmd, int arg);
FILE *parload__fault_fdopen(int fd, const char *mode);
int parload__fault_poll(struct pollfd *fds, nfds_t n, int timeout);
/* stat and lstat (both of kind STAT), rename. */
int parload__fault_stat(const char *path, struct stat *st);
int parload__fault_lstat(const char *path, struct stat *st);
int parload__fault_rename(const char *from, const char *to);
/* Directories: mkdir, rmdir, unlink, opendir (readdir and closedir pass
 * through: a directory's listing is not counted as a resource). */
/* renameat2 is of kind rename. */
int parload__fault_renameat2(int from_dir, const char *from, int to_dir,
			     const char *to, unsigned flags);
int parload__fault_mkdir(const char *path, mode_t mode);
int parload__fault_rmdir(const char *path);
int parload__fault_unlink(const char *path);
DIR *parload__fault_opendir(const char *path);
/* posix_fadvise returns the error number, as the call does. */
int parload__fault_posix_fadvise(int fd, off_t off, off_t len, int advice);
int parload__fault_mincore(void *addr, size_t len, unsigned char *vec);
ssize_t parload__fault_process_vm_readv(pid_t pid, const struct iovec *local,
					unsigned long nlocal,
					const struct iovec *remote,
					unsigned long nremote,
					unsigned long flags);
void *parload__fault_mmap(void *addr, size_t len, int prot, int flags,
			  int fd, off_t off);
int parload__fault_munmap(void *addr, size_t len);
int parload__fault_madvise(void *addr, size_t len, int advice);
/* Linux AIO's system calls (the types are the kernel's: aio_context_t,
 * struct iocb **, struct io_event *).  io_submit's reads are cut as
 * pread's are (a read cut to a length O_DIRECT refuses fails when it is
 * submitted or done, as the kernel's would); io_getevents counts the
 * bytes each finished read put into the watched buffer and advised
 * memory; io_destroy always releases. */
long parload__fault_io_setup(unsigned n, unsigned long *ctx);
long parload__fault_io_submit(unsigned long ctx, long n, void *cbs);
long parload__fault_io_getevents(unsigned long ctx, long min, long max,
				 void *ev);
long parload__fault_io_destroy(unsigned long ctx);
/* io_uring's (params is a struct io_uring_params *).  A ring counts as
 * one AIO resource until parload__fault_io_uring_close.  enter names the
 * read it hands over (iov, a struct iovec *, and its file offset; NULL
 * when it only waits): the read is cut as io_submit's are, and counted in
 * flight until parload__fault_io_uring_reaped, which aio.c calls for each
 * read it takes off the completion ring and which counts its bytes as
 * io_getevents does. */
long parload__fault_io_uring_setup(unsigned n, void *params);
long parload__fault_io_uring_enter(int fd, unsigned n, unsigned min,
				   unsigned flags, void *iov, uint64_t off);
void parload__fault_io_uring_reaped(const void *iov, long res);
int parload__fault_io_uring_close(int fd);
void *parload__fault_malloc(size_t n);
void *parload__fault_calloc(size_t n, size_t size);
char *parload__fault_strdup(const char *s);
void parload__fault_free(void *p);
int parload__fault_pthread_create(pthread_t *t, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg);
int parload__fault_pthread_join(pthread_t t, void **ret);
int parload__fault_pthread_mutex_init(pthread_mutex_t *m,
				      const pthread_mutexattr_t *attr);
int parload__fault_pthread_mutex_destroy(pthread_mutex_t *m);
int parload__fault_pthread_cond_init(pthread_cond_t *c,
				     const pthread_condattr_t *attr);
int parload__fault_pthread_cond_destroy(pthread_cond_t *c);
int parload__fault_hwloc_topology_init(void *topop);
int parload__fault_hwloc_topology_load(void *topo);
void parload__fault_hwloc_topology_destroy(void *topo);
void *parload__fault_hwloc_bitmap_alloc(void);
void *parload__fault_hwloc_bitmap_dup(const void *set);
void parload__fault_hwloc_bitmap_free(void *set);
int parload__fault_hwloc_get_cpubind(void *topo, void *set, int flags);
int parload__fault_hwloc_set_cpubind(void *topo, const void *set, int flags);
int parload__fault_hwloc_set_area_membind(void *topo, const void *addr,
					  size_t len, const void *set,
					  int policy, int flags);

#define parload__sys_open parload__fault_open
#define parload__sys_close parload__fault_close
#define parload__sys_fstat parload__fault_fstat
#define parload__sys_read parload__fault_read
#define parload__sys_pread parload__fault_pread
#define parload__sys_preadv parload__fault_preadv
#define parload__sys_lseek parload__fault_lseek
#define parload__sys_write parload__fault_write
#define parload__sys_fopen parload__fault_fopen
#define parload__sys_fclose parload__fault_fclose
#define parload__sys_fread parload__fault_fread
#define parload__sys_fseeko parload__fault_fseeko
#define parload__sys_ferror parload__fault_ferror
#define parload__sys_clearerr parload__fault_clearerr
#define parload__sys_fcntl parload__fault_fcntl
#define parload__sys_fdopen parload__fault_fdopen
#define parload__sys_poll parload__fault_poll
#define parload__sys_stat parload__fault_stat
#define parload__sys_lstat parload__fault_lstat
#define parload__sys_rename parload__fault_rename
#define parload__sys_renameat2 parload__fault_renameat2
#define parload__sys_mkdir parload__fault_mkdir
#define parload__sys_rmdir parload__fault_rmdir
#define parload__sys_unlink parload__fault_unlink
#define parload__sys_opendir parload__fault_opendir
#define parload__sys_readdir readdir
#define parload__sys_closedir closedir
#define parload__sys_posix_fadvise parload__fault_posix_fadvise
#define parload__sys_mincore parload__fault_mincore
#define parload__sys_process_vm_readv parload__fault_process_vm_readv
#define parload__sys_mmap parload__fault_mmap
#define parload__sys_munmap parload__fault_munmap
#define parload__sys_madvise parload__fault_madvise
#define parload__sys_io_setup parload__fault_io_setup
#define parload__sys_io_submit parload__fault_io_submit
#define parload__sys_io_getevents parload__fault_io_getevents
#define parload__sys_io_destroy parload__fault_io_destroy
#define parload__sys_io_uring_setup parload__fault_io_uring_setup
#define parload__sys_io_uring_enter parload__fault_io_uring_enter
#define parload__sys_io_uring_reaped parload__fault_io_uring_reaped
#define parload__sys_io_uring_close parload__fault_io_uring_close
#define parload__sys_malloc parload__fault_malloc
#define parload__sys_calloc parload__fault_calloc
#define parload__sys_strdup parload__fault_strdup
#define parload__sys_free parload__fault_free
#define parload__sys_pthread_create parload__fault_pthread_create
#define parload__sys_pthread_join parload__fault_pthread_join
#define parload__sys_pthread_mutex_init parload__fault_pthread_mutex_init
#define parload__sys_pthread_mutex_destroy parload__fault_pthread_mutex_destroy
#define parload__sys_pthread_cond_init parload__fault_pthread_cond_init
#define parload__sys_pthread_cond_destroy parload__fault_pthread_cond_destroy
#define parload__sys_hwloc_topology_init parload__fault_hwloc_topology_init
#define parload__sys_hwloc_topology_load parload__fault_hwloc_topology_load
#define parload__sys_hwloc_topology_destroy parload__fault_hwloc_topology_destroy
#define parload__sys_hwloc_bitmap_alloc parload__fault_hwloc_bitmap_alloc
#define parload__sys_hwloc_bitmap_dup parload__fault_hwloc_bitmap_dup
#define parload__sys_hwloc_bitmap_free parload__fault_hwloc_bitmap_free
#define parload__sys_hwloc_get_cpubind parload__fault_hwloc_get_cpubind
#define parload__sys_hwloc_set_cpubind parload__fault_hwloc_set_cpubind
#define parload__sys_hwloc_set_area_membind parload__fault_hwloc_set_area_membind
#endif /* PARLOAD_FAULT_H */
