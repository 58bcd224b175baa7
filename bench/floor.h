/*
 * floor.h - what the floors of the benchmark share (copyfloor.c,
 * freshfloor.c, uringfloor.c): threads that each read their share of a
 * file (pread(), or the program's own way), started before the clock and
 * let go at a barrier; the fresh region a loader's dataset would be; and
 * the report of what they read.  Each program includes it once; everything here is static.
 */
#ifndef PARLOAD_BENCH_FLOOR_H
#define PARLOAD_BENCH_FLOOR_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One thread's share: [begin, end) of the file, read `chunk` bytes a
 * call into buf (whole: buf is the share's own slice, buf + (off -
 * begin); otherwise one reused buffer of chunk bytes).  With `read` set,
 * the thread does that instead (freshfloor's sinograms), with `arg`;
 * `index` is the thread's, 0 to n - 1 (set by floor_start). */
struct floor_share {
	void (*read)(struct floor_share *s);
	const void *arg;
	unsigned index;
	int fd;
	int whole;
	unsigned char *buf;
	uint64_t chunk;
	uint64_t begin, end;
	uint64_t bytes;
	int err;
};

/* The threads wait here until the shares are set (floor_start). */
static pthread_barrier_t floor_go;

static double floor_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A thread's work: wait for the shares, then read its own. */
static void *floor_reader(void *arg)
{
	struct floor_share *s = arg;
	uint64_t off;

	pthread_barrier_wait(&floor_go);
	if (s->read) {
		s->read(s);
		return NULL;
	}
	off = s->begin;
	while (off < s->end) {
		uint64_t want = s->end - off < s->chunk ? s->end - off :
							   s->chunk;
		ssize_t n = pread(s->fd, s->whole ? s->buf + (off - s->begin) :
						   s->buf,
				  (size_t)want, (off_t)off);

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

/* Threads 1 to n - 1 started, waiting at the barrier for the shares
 * (thread 0 is the caller's); 0, or -1 (said on stderr) when one cannot
 * be started. */
static int floor_start(const char *prog, pthread_t *tid,
		       struct floor_share *sh, unsigned n)
{
	pthread_barrier_init(&floor_go, NULL, n);
	for (unsigned w = 0; w < n; w++)
		sh[w].index = w;
	for (unsigned w = 1; w < n; w++)
		if (pthread_create(&tid[w], NULL, floor_reader, &sh[w]) != 0) {
			fprintf(stderr, "%s: cannot start threads\n", prog);
			return -1;
		}
	return 0;
}

/* The fresh region's parts are whole huge pages. */
#define FLOOR_HUGE ((uint64_t)2 << 20)

/* A fresh region for size bytes, as a loader's new dataset is: mapped
 * with a huge page to spare, so that its start can sit on a 2 MiB
 * boundary, and advised for huge pages.  NULL when it cannot be mapped;
 * left to the exit. */
static inline unsigned char *floor_fresh(uint64_t size)
{
	size_t len = (size_t)((size + FLOOR_HUGE - 1) / FLOOR_HUGE *
				      FLOOR_HUGE + FLOOR_HUGE);
	unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *dest;

	if (map == MAP_FAILED)
		return NULL;
	dest = (unsigned char *)(((uintptr_t)map + FLOOR_HUGE - 1) &
				 ~(uintptr_t)(FLOOR_HUGE - 1));
	(void)madvise(dest, (size_t)(len - (size_t)(dest - map)),
		      MADV_HUGEPAGE);
	return dest;
}

/* Thread w's part of n of a file read into the fresh region dest: [0,
 * end) cut in contiguous parts of whole huge pages, as even as they
 * come, each into its place in dest. */
static inline void floor_part(struct floor_share *sh, unsigned w, unsigned n,
			      int fd, unsigned char *dest, uint64_t end)
{
	const uint64_t units = (end + FLOOR_HUGE - 1) / FLOOR_HUGE;
	const uint64_t b = units * w / n * FLOOR_HUGE;
	const uint64_t e = units * (w + 1) / n * FLOOR_HUGE;

	sh->fd = fd;
	sh->begin = b < end ? b : end;
	sh->end = e < end ? e : end;
	sh->buf = dest + sh->begin;
}

/* The file opened for reading (with flags too, such as O_DIRECT) and its
 * status in st: the descriptor, or -1 (said on stderr). */
static int floor_open(const char *prog, const char *path, struct stat *st,
		      int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);

	if (fd < 0 || fstat(fd, st) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The caller's share read, then the other threads joined. */
static void floor_finish(pthread_t *tid, struct floor_share *sh, unsigned n)
{
	floor_reader(&sh[0]);
	for (unsigned w = 1; w < n; w++)
		pthread_join(tid[w], NULL);
}

/* The JSON line of the measurement: the time, the bytes read and whether
 * they are the file's size with no error (each error said on stderr).
 * Returns 0 when they are, 1 otherwise. */
static int floor_report(const char *prog, const char *path,
			const struct floor_share *sh, unsigned n,
			uint64_t size, double seconds)
{
	uint64_t total = 0;
	int bad = 0;

	for (unsigned w = 0; w < n; w++) {
		total += sh[w].bytes;
		if (sh[w].err) {
			fprintf(stderr, "%s: %s: %s\n", prog, path,
				strerror(sh[w].err));
			bad = 1;
		}
	}
	if (total != size) {
		fprintf(stderr, "%s: %s: read %llu of %llu bytes\n", prog, path,
			(unsigned long long)total, (unsigned long long)size);
		bad = 1;
	}
	printf("{\"seconds\":%.9f,\"bytes\":%llu,\"threads\":%u,"
	       "\"verified\":%s}\n",
	       seconds, (unsigned long long)total, n, bad ? "false" : "true");
	return bad;
}

#endif
