/*
 * copyfloor.c - the copy floor of the benchmark: the fastest any loader can
 * move a file into user memory.  N threads each pread() their share of the
 * file, 1 MiB at a time, into one reused, page-aligned 1 MiB buffer of
 * their own (what `dd bs=1M of=/dev/null` does, on every core).  Nothing is
 * kept, and the buffers are allocated and touched before the clock starts,
 * so no page fault is timed: this is the cost of the copy alone (and the
 * floor for loading into memory the caller already owns and has touched).
 * The threads, too, are started before the clock and wait at a barrier, as
 * parload's pool is started when its loader is made, before a load's clock.
 *
 * With --whole, each thread reads its share into its own slice of one
 * buffer the size of the file instead, allocated, advised for transparent
 * huge pages and touched before the clock: the floor for a load into memory
 * the caller already owns, whose destination, unlike a reused 1 MiB buffer,
 * does not stay in the cache.
 *
 * Usage: copyfloor [--threads N] [--whole] FILE
 * Prints {"seconds":S,"bytes":B,"threads":N} with the time from open until
 * every thread has finished and the file is closed.  The check that the
 * measurement is real: the bytes read must equal the file's size, or the
 * exit status is 1.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "floor.h"

#define CHUNK ((size_t)1 << 20)

int main(int argc, char **argv)
{
	unsigned n = 1;
	const char *path = NULL;
	struct floor_share *sh;
	pthread_t *tid;
	struct stat st;
	uint64_t size, chunks;
	double t0, t1;
	int fd, bad, whole = 0;
	unsigned char *map = NULL, *dest = NULL;
	size_t map_len = 0;
	uint64_t planned = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--whole") == 0)
			whole = 1;
		else if (!path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || n == 0) {
		fprintf(stderr,
			"usage: copyfloor [--threads N] [--whole] FILE\n");
		return 2;
	}
	sh = calloc(n, sizeof(*sh));
	tid = calloc(n, sizeof(*tid));
	if (!sh || !tid)
		return 1;

	for (unsigned w = 0; w < n && !whole; w++) {
		void *b;

		if (posix_memalign(&b, 4096, CHUNK) != 0) {
			fprintf(stderr, "copyfloor: out of memory\n");
			return 1;
		}
		memset(b, 0, CHUNK); /* fault it in now, not on the clock */
		sh[w].buf = b;
	}

	if (whole) {
		/* The destination: file-sized, on a 2 MiB boundary, advised
		 * for huge pages and touched, all before the clock. */
		const size_t huge = (size_t)2 << 20;

		if (stat(path, &st) != 0) {
			fprintf(stderr, "copyfloor: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
		planned = (uint64_t)st.st_size;
		map_len = ((size_t)planned + huge - 1) / huge * huge + huge;
		map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "copyfloor: out of memory\n");
			return 1;
		}
		dest = (unsigned char *)(((uintptr_t)map + huge - 1) &
					 ~(uintptr_t)(huge - 1));
		(void)madvise(map, map_len, MADV_HUGEPAGE);
		memset(dest, 0, (size_t)planned);
	}

	if (floor_start("copyfloor", tid, sh, n) != 0)
		return 1;
	t0 = floor_now();
	fd = floor_open("copyfloor", path, &st, 0);
	if (fd < 0)
		return 1;
	size = (uint64_t)st.st_size;
	if (whole && size > planned) {
		fprintf(stderr, "copyfloor: %s: grew while starting\n", path);
		return 1;
	}
	/* Shares of whole 1 MiB chunks, as even as they come. */
	chunks = (size + CHUNK - 1) / CHUNK;
	for (unsigned w = 0; w < n; w++) {
		uint64_t b = chunks * w / n * CHUNK, e = chunks * (w + 1) / n * CHUNK;

		sh[w].fd = fd;
		sh[w].chunk = CHUNK;
		sh[w].begin = b < size ? b : size;
		sh[w].end = e < size ? e : size;
		if (whole) {
			sh[w].whole = 1;
			sh[w].buf = dest + sh[w].begin;
		}
	}
	floor_finish(tid, sh, n);
	close(fd);
	t1 = floor_now();

	bad = floor_report("copyfloor", path, sh, n, size, t1 - t0);
	for (unsigned w = 0; w < n; w++)
		if (!whole)
			free(sh[w].buf);
	if (map)
		munmap(map, map_len);
	free(sh);
	free(tid);
	return bad;
}
