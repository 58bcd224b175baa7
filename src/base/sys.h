/*
 * sys.h - the system calls of libparload, by the names that the
 * fault-injection seam can take over.
 *
 * Every system, allocation, thread and hwloc call that libparload makes
 * goes through one of the parload__sys_x names below.  In a normal build
 * each is a macro for the plain call, so a release build compiles to
 * exactly what it would without the seam.  Configured with
 * --enable-fault-injection, the names call the wrappers of
 * tests/fault/fault.c instead (tests/fault/fault.h says what they do),
 * which tests/check_faults drives.  The seam lives with the tests: the
 * library's sources only name the calls.
 */
#ifndef PARLOAD_SYS_H
#define PARLOAD_SYS_H

#ifdef PARLOAD_FAULT_INJECTION
#include "../../tests/fault/fault.h"
#else
#include <stdlib.h> /* malloc, calloc, free */

#define parload__sys_open open
#define parload__sys_close close
#define parload__sys_fstat fstat
#define parload__sys_read read
#define parload__sys_pread pread
#define parload__sys_preadv preadv
#define parload__sys_lseek lseek
#define parload__sys_write write
#define parload__sys_fopen fopen
#define parload__sys_fclose fclose
#define parload__sys_fread fread
#define parload__sys_fseeko fseeko
#define parload__sys_ferror ferror
#define parload__sys_clearerr clearerr
/* fcntl with one int argument (0 for the commands that take none), the
 * form the fault wrapper takes. */
#define parload__sys_fcntl fcntl
#define parload__sys_fdopen fdopen
#define parload__sys_poll poll
#define parload__sys_posix_fadvise posix_fadvise
#define parload__sys_mincore mincore
#define parload__sys_stat stat
#define parload__sys_lstat lstat
#define parload__sys_rename rename
#define parload__sys_renameat2 renameat2
/* Directories (a Zarr store written under a temporary name). */
#define parload__sys_mkdir mkdir
#define parload__sys_rmdir rmdir
#define parload__sys_unlink unlink
#define parload__sys_opendir opendir
#define parload__sys_readdir readdir
#define parload__sys_closedir closedir
#define parload__sys_process_vm_readv process_vm_readv
#define parload__sys_mmap mmap
#define parload__sys_munmap munmap
#define parload__sys_madvise madvise
/* Linux AIO has no libc wrappers: the system calls themselves. */
#define parload__sys_io_setup(n, ctx) syscall(SYS_io_setup, (n), (ctx))
#define parload__sys_io_submit(ctx, n, cbs)                                   \
	syscall(SYS_io_submit, (ctx), (n), (cbs))
#define parload__sys_io_getevents(ctx, min, max, ev)                          \
	syscall(SYS_io_getevents, (ctx), (min), (max), (ev), NULL)
#define parload__sys_io_destroy(ctx) syscall(SYS_io_destroy, (ctx))
/* Nor has io_uring.  enter names the read it hands over (its struct iovec
 * and file offset) and reaped each read taken off the completion ring,
 * for the seam alone: here they are dropped. */
#define parload__sys_io_uring_setup(n, params)                                \
	syscall(SYS_io_uring_setup, (n), (params))
#define parload__sys_io_uring_enter(fd, n, min, flags, iov, off)              \
	syscall(SYS_io_uring_enter, (fd), (n), (min), (flags), NULL, 0)
#define parload__sys_io_uring_reaped(iov, res) ((void)0)
#define parload__sys_io_uring_close close
#define parload__sys_malloc malloc
#define parload__sys_calloc calloc
#define parload__sys_strdup strdup
#define parload__sys_free free
#define parload__sys_pthread_create pthread_create
#define parload__sys_pthread_join pthread_join
#define parload__sys_pthread_mutex_init pthread_mutex_init
#define parload__sys_pthread_mutex_destroy pthread_mutex_destroy
#define parload__sys_pthread_cond_init pthread_cond_init
#define parload__sys_pthread_cond_destroy pthread_cond_destroy
#define parload__sys_hwloc_topology_init hwloc_topology_init
#define parload__sys_hwloc_topology_load hwloc_topology_load
#define parload__sys_hwloc_topology_destroy hwloc_topology_destroy
#define parload__sys_hwloc_bitmap_alloc hwloc_bitmap_alloc
#define parload__sys_hwloc_bitmap_dup hwloc_bitmap_dup
#define parload__sys_hwloc_bitmap_free hwloc_bitmap_free
#define parload__sys_hwloc_get_cpubind hwloc_get_cpubind
#define parload__sys_hwloc_set_cpubind hwloc_set_cpubind
#define parload__sys_hwloc_set_area_membind hwloc_set_area_membind
#endif /* PARLOAD_FAULT_INJECTION */
#endif /* PARLOAD_SYS_H */
