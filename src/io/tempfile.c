/*
 * tempfile.c - a file written whole or not at all: made under a hidden
 * temporary name beside it (parload_temp_create), put in place once
 * complete (parload_temp_place).  The one way every writer that names its
 * output does it: parload_save, parload_nrrd_write and the parload
 * command (which owns its temporary file, so that its signal handling can
 * remove it, and hands it to parload_save).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"

/* Six characters of [A-Za-z0-9] for the name's XXXXXX, as mkstemp's:
 * the clock, the process and a counter, mixed (splitmix64).  A name
 * taken is tried again with the next. */
static void fill_name(char *x)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned counter;
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_REALTIME, &ts);
	z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
	    ((uint64_t)getpid() << 42) ^
	    (uint64_t)__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED) *
		    0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	for (int i = 0; i < 6; i++, z /= 62)
		x[i] = set[z % 62];
}

int parload_temp_create(const char *path, char *tmp, size_t cap,
			parload_error *err)
{
	const char *slash, *base;
	size_t dir;
	int n, fd, rc;

	if (!path || !*path || !tmp || cap == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "a temporary file for what?");
	tmp[0] = '\0'; /* until it is made: no name to remove */
	/* Beside path, so that putting it in place stays on one file
	 * system: DIR/.NAME.XXXXXX */
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	dir = (size_t)(base - path);
	if (!*base)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "names a directory, not a file");
	n = snprintf(tmp, cap, "%.*s.%s.XXXXXX", (int)dir, path, base);
	if (n < 0 || (size_t)n >= cap) {
		tmp[0] = '\0';
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "name too long for a temporary "
					  "file beside it");
	}
	/* Mode 0666 less the umask, as any new file: the file becomes the
	 * output as it is (no chmod, and no umask(2), which is the
	 * process's, not a thread's, to read). */
	for (int tries = 0; tries < 100; tries++) {
		fill_name(tmp + n - 6);
		fd = parload__sys_open(tmp, O_WRONLY | O_CREAT | O_EXCL |
						    O_CLOEXEC, 0666);
		if (fd >= 0) {
			parload__sys_close(fd);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	rc = errno;
	tmp[0] = '\0';
	return parload__fail_path(err, PARLOAD_EWRITE, rc, path,
				  "cannot create a temporary file beside it");
}

/* link() refuses an existing name atomically; on a file system without
 * hard links, rename() after a last check. */
static int place(const char *tmp, const char *path, bool force)
{
	struct stat st;

	if (force)
		return parload__sys_rename(tmp, path);
	if (link(tmp, path) == 0) {
		(void)unlink(tmp);
		return 0;
	}
	if (errno != EPERM && errno != ENOTSUP)
		return -1;
	if (parload__sys_lstat(path, &st) == 0) {
		errno = EEXIST;
		return -1;
	}
	return parload__sys_rename(tmp, path);
}

int parload_temp_place(const char *tmp, const char *path, unsigned flags,
		       parload_error *err)
{
	if (!tmp || !path || !*path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "no file to put in place");
	if (place(tmp, path, (flags & PARLOAD_SAVE_FORCE) != 0) == 0)
		return 0;
	if (errno == EEXIST)
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists (replace it with force)");
	return parload__fail_path(err, PARLOAD_EWRITE, errno, path,
				  "cannot put it in place");
}
