/*
 * freshfloor.c - the fresh-memory floor of the benchmark: the fastest a
 * loader that returns a new dataset can move a file into memory.  Such a
 * loader cannot reuse a buffer (the copy floor's, bench/copyfloor.c): every
 * page of what it returns is new memory that the kernel must fault in and
 * zero before the bytes are copied into it.  So this program, on the clock,
 * opens the file, maps one fresh anonymous region the size of the file (on
 * a 2 MiB boundary, advised MADV_HUGEPAGE, as parload's arrays are), and N
 * threads each pread() their contiguous part of the file straight into
 * their part of the region; then it closes the file and stops the clock.
 * Nothing else: no header, no views, no check of the content.  The threads
 * are started before the clock and wait at a barrier, as parload's pool is
 * started when its loader is made.  The mapping is left to the exit.
 *
 * Usage: freshfloor [--threads N] FILE
 * Prints {"seconds":S,"bytes":B,"threads":N,"verified":true} with the time
 * from open until every thread has finished and the file is closed.  The
 * check that the measurement is real: the bytes read must equal the
 * file's size, or "verified" is false and the exit status 1.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "floor.h"

/* The parts are whole huge pages; one read call asks for at most this
 * much (Linux moves at most about 2 GiB a call). */
#define HUGE ((uint64_t)2 << 20)
#define MAX_CALL ((uint64_t)1 << 30)

/* The fresh region for size bytes: mapped with a huge page to spare, so
 * that its start can sit on a 2 MiB boundary, and advised for huge pages.
 * NULL when it cannot be mapped. */
static unsigned char *fresh(uint64_t size)
{
	size_t len = (size_t)((size + HUGE - 1) / HUGE * HUGE + HUGE);
	unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *dest;

	if (map == MAP_FAILED)
		return NULL;
	dest = (unsigned char *)(((uintptr_t)map + HUGE - 1) &
				 ~(uintptr_t)(HUGE - 1));
	(void)madvise(dest, (size_t)(len - (size_t)(dest - map)),
		      MADV_HUGEPAGE);
	return dest;
}

static int parse(int argc, char **argv, unsigned *n, const char **path)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			*n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!*path)
			*path = argv[i];
		else
			return -1;
	}
	return *path && *n ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct stat st;
	double t0, t1;
	uint64_t size, units;
	int fd, bad;
	unsigned n = 1;
	const char *path = NULL;
	unsigned char *dest;
	struct floor_share *pt;
	pthread_t *tid;

	if (parse(argc, argv, &n, &path) != 0) {
		fprintf(stderr, "usage: freshfloor [--threads N] FILE\n");
		return 2;
	}
	pt = calloc(n, sizeof(*pt));
	tid = calloc(n, sizeof(*tid));
	if (!pt || !tid)
		return 1;
	if (floor_start("freshfloor", tid, pt, n) != 0)
		return 1;
	t0 = floor_now();
	fd = floor_open("freshfloor", path, &st);
	if (fd < 0)
		return 1;
	size = (uint64_t)st.st_size;
	dest = fresh(size);
	if (!dest) {
		fprintf(stderr, "freshfloor: %s: cannot map %llu bytes\n", path,
			(unsigned long long)size);
		return 1;
	}
	/* Contiguous parts of whole huge pages, as even as they come. */
	units = (size + HUGE - 1) / HUGE;
	for (unsigned w = 0; w < n; w++) {
		uint64_t b = units * w / n * HUGE, e = units * (w + 1) / n * HUGE;

		pt[w].fd = fd;
		pt[w].whole = 1;
		pt[w].chunk = MAX_CALL;
		pt[w].begin = b < size ? b : size;
		pt[w].end = e < size ? e : size;
		pt[w].buf = dest + pt[w].begin;
	}
	floor_finish(tid, pt, n);
	close(fd);
	t1 = floor_now();

	bad = floor_report("freshfloor", path, pt, n, size, t1 - t0);
	free(pt);
	free(tid);
	return bad;
}
