/*
 * tempfile.c - a file written whole or not at all: made under a hidden
 * temporary name beside it (parload_temp_create), put in place once
 * complete (parload_temp_place).  The one way every writer that names its
 * output does it: parload_save, parload_nrrd_write and the parload
 * command (which owns its temporary file, so that its signal handling can
 * remove it, and hands it to parload_save).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

/* Make the empty file name (0, or -1 with errno). */
static int make_file(const char *name)
{
	const int fd = parload__sys_open(name, O_WRONLY | O_CREAT | O_EXCL |
						       O_CLOEXEC, 0666);

	if (fd < 0)
		return -1;
	parload__sys_close(fd);
	return 0;
}

/* Make the empty directory name. */
static int make_dir(const char *name)
{
	return parload__sys_mkdir(name, 0777);
}

/* DIR/.NAME.XXXXXX beside path, made by make (a file or a directory,
 * what): its name into tmp, or "" and the failure. */
static int temp_make(const char *path, char *tmp, size_t cap,
		     int (*make)(const char *), const char *what,
		     parload_error *err)
{
	const char *slash, *base;
	size_t dir;
	int n, rc;

	if (!path || !*path || !tmp || cap == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "a temporary %s for what?", what);
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
					  "%s beside it", what);
	}
	/* Mode 0666 (0777) less the umask, as anything new: it becomes the
	 * output as it is (no chmod, and no umask(2), which is the
	 * process's, not a thread's, to read). */
	for (int tries = 0; tries < 100; tries++) {
		fill_name(tmp + n - 6);
		if (make(tmp) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	rc = errno;
	tmp[0] = '\0';
	return parload__fail_path(err, PARLOAD_EWRITE, rc, path,
				  "cannot create a temporary %s beside it",
				  what);
}

int parload_temp_create(const char *path, char *tmp, size_t cap,
			parload_error *err)
{
	return temp_make(path, tmp, cap, make_file, "file", err);
}

int parload_temp_create_dir(const char *path, char *tmp, size_t cap,
			    parload_error *err)
{
	return temp_make(path, tmp, cap, make_dir, "directory", err);
}

#define TREE_DEPTH 16

/* Remove what dir holds, depth levels below the top. */
static int remove_in(const char *dir, int depth)
{
	DIR *d = parload__sys_opendir(dir);
	struct dirent *e;
	struct stat st;
	char sub[PATH_MAX];
	int rc = 0;

	if (!d)
		return -1;
	while ((e = parload__sys_readdir(d)) != NULL) {
		const char *n = e->d_name;
		int len;

		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		len = snprintf(sub, sizeof(sub), "%s/%s", dir, n);
		if (len < 0 || (size_t)len >= sizeof(sub))
			rc = -1;
		else if (parload__sys_lstat(sub, &st) == 0 &&
			 S_ISDIR(st.st_mode) && depth < TREE_DEPTH)
			rc |= remove_in(sub, depth + 1) |
			      parload__sys_rmdir(sub);
		else if (parload__sys_unlink(sub) != 0)
			rc = -1;
	}
	parload__sys_closedir(d);
	return rc ? -1 : 0;
}

int parload__tree_remove(const char *dir)
{
	const int rc = remove_in(dir, 1);

	return parload__sys_rmdir(dir) == 0 && rc == 0 ? 0 : -1;
}

int parload_temp_remove(const char *tmp)
{
	struct stat st;

	if (!tmp || !*tmp)
		return 0;
	if (parload__sys_lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode))
		return parload__tree_remove(tmp);
	return parload__sys_unlink(tmp);
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
