/*
 * evict.c - drop files from the page cache for the cold-cache experiment.
 *
 * For each FILE: write back any dirty pages (fdatasync: dirty pages cannot
 * be dropped), advise POSIX_FADV_DONTNEED over the whole file, then count
 * with mincore() how many of its pages are still resident, so the harness
 * can tell whether eviction worked (it does not on tmpfs, and a page mapped
 * by a running process stays).  No root needed.  With --count it only
 * counts: what a load left of each file in the page cache (experiment 14).
 *
 * Usage: evict [--count] FILE...
 * Prints "RESIDENT_PAGES TOTAL_PAGES FILE" per file; exit status 1 if a
 * file could not be opened or advised.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int evict(const char *path, int count_only)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	size_t pages, resident = 0;
	unsigned char *vec;
	void *map;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "evict: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!count_only)
		(void)fdatasync(fd);
	rc = count_only ? 0 : posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (rc != 0) {
		fprintf(stderr, "evict: %s: %s\n", path, strerror(rc));
		close(fd);
		return 1;
	}
	pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	if (pages) {
		/* Mapping does not fault pages in; mincore only looks. */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd,
			   0);
		vec = malloc(pages);
		if (map != MAP_FAILED && vec &&
		    mincore(map, (size_t)st.st_size, vec) == 0) {
			for (size_t i = 0; i < pages; i++)
				resident += vec[i] & 1;
		} else {
			resident = pages; /* unknown: assume the worst */
		}
		if (map != MAP_FAILED)
			munmap(map, (size_t)st.st_size);
		free(vec);
	}
	close(fd);
	printf("%zu %zu %s\n", resident, pages, path);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, count_only = argc > 1 && strcmp(argv[1], "--count") == 0;

	if (argc < 2 + count_only) {
		fprintf(stderr, "usage: evict [--count] FILE...\n");
		return 2;
	}
	for (int i = 1 + count_only; i < argc; i++)
		bad |= evict(argv[i], count_only);
	return bad;
}
