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

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 20)

static pthread_barrier_t go;

struct share {
	int fd;
	int whole;          /* buf is this share's slice of the whole file */
	unsigned char *buf;
	uint64_t begin, end;
	uint64_t bytes;
	int err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *reader(void *arg)
{
	struct share *s = arg;
	unsigned char *buf;
	uint64_t off;

	pthread_barrier_wait(&go); /* the shares are set once this returns */
	buf = s->buf;
	off = s->begin;
	while (off < s->end) {
		size_t want = s->end - off < CHUNK ? (size_t)(s->end - off) :
						     CHUNK;
		ssize_t n = pread(s->fd, s->whole ? buf + (off - s->begin) : buf,
				  want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s->err = n < 0 ? errno : EIO;
			break;
		}
		off += (uint64_t)n;
		s->bytes += (uint64_t)n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = 1;
	const char *path = NULL;
	struct share *sh;
	pthread_t *tid;
	struct stat st;
	uint64_t size, chunks, total = 0;
	double t0, t1;
	int fd, bad = 0, whole = 0;
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

	pthread_barrier_init(&go, NULL, n);
	for (unsigned w = 1; w < n; w++)
		if (pthread_create(&tid[w], NULL, reader, &sh[w]) != 0) {
			fprintf(stderr, "copyfloor: cannot start threads\n");
			return 1;
		}

	t0 = now();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "copyfloor: %s: %s\n", path, strerror(errno));
		return 1;
	}
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
		sh[w].begin = b < size ? b : size;
		sh[w].end = e < size ? e : size;
		if (whole) {
			sh[w].whole = 1;
			sh[w].buf = dest + sh[w].begin;
		}
	}
	reader(&sh[0]);
	for (unsigned w = 1; w < n; w++)
		pthread_join(tid[w], NULL);
	close(fd);
	t1 = now();

	for (unsigned w = 0; w < n; w++) {
		total += sh[w].bytes;
		if (sh[w].err) {
			fprintf(stderr, "copyfloor: %s: %s\n", path,
				strerror(sh[w].err));
			bad = 1;
		}
	}
	if (total != size) {
		fprintf(stderr, "copyfloor: %s: read %llu of %llu bytes\n",
			path, (unsigned long long)total,
			(unsigned long long)size);
		bad = 1;
	}
	printf("{\"seconds\":%.9f,\"bytes\":%llu,\"threads\":%u,"
	       "\"verified\":%s}\n",
	       t1 - t0, (unsigned long long)total, n, bad ? "false" : "true");
	for (unsigned w = 0; w < n; w++)
		if (!whole)
			free(sh[w].buf);
	if (map)
		munmap(map, map_len);
	free(sh);
	free(tid);
	return bad;
}
