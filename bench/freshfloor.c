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
 * With --sinograms OFFSET,HEADER,ROWS,ROW_BYTES, the floor of a load in
 * sinogram layout of a file of views (OFFSET bytes of file header, then
 * views of HEADER bytes of header and ROWS rows of ROW_BYTES bytes): the
 * region holds the pixels as sinograms, row r of view v at (r x views +
 * v) x ROW_BYTES, and thread w of N reads band w of every view's rows
 * (ROWS x w / N to ROWS x (w + 1) / N; thread 0 the view's header too)
 * with one pread() into a buffer of its own that stays in the core's
 * cache, then stores each row at its place with stores that bypass the
 * cache (SSE2's streaming stores; memcpy elsewhere).  The headers go to
 * an array of their own.  That is the least a loader that returns new
 * sinograms must do: one more pass over every byte, from the cache, than
 * the view layout's floor.  With --map too, the threads copy their bands
 * from the file mapped into memory (mmap) instead: one copy of each byte,
 * from the page cache to its sinogram, and no read call; the time then
 * includes the mapping and its page faults.
 *
 * Usage: freshfloor [--threads N] [--sinograms O,H,R,B [--map]] FILE
 * Prints {"seconds":S,"bytes":B,"threads":N,"verified":true} with the time
 * from open until every thread has finished and the file is closed.  The
 * check that the measurement is real: the bytes read must equal the
 * file's size, or "verified" is false and the exit status 1.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "floor.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define STREAMING 1
#endif

/* One read call asks for at most this much (Linux moves at most about
 * 2 GiB a call). */
#define MAX_CALL ((uint64_t)1 << 30)

/* Sinogram layout: the file's geometry, and where the threads put it. */
struct sino {
	uint64_t offset, header, rows, row_bytes, views;
	unsigned n; /* threads */
	unsigned char *pixels, *headers;
	const unsigned char *map; /* --map: the file, mapped */
};

/* n bytes from src to dst with stores that do not first read dst's
 * lines (the rows land far apart), or memcpy. */
static void store_far(unsigned char *dst, const unsigned char *src, size_t n)
{
#ifdef STREAMING
	const size_t head = (size_t)(-(uintptr_t)dst & 15);

	if (n >= 256 && head < n) {
		memcpy(dst, src, head);
		dst += head, src += head, n -= head;
		for (; n >= 64; n -= 64, dst += 64, src += 64)
			for (int k = 0; k < 64; k += 16)
				_mm_stream_si128((__m128i *)(dst + k),
						 _mm_loadu_si128((const __m128i
								  *)(src + k)));
	}
#endif
	memcpy(dst, src, n);
}

/* Thread s's band of every view, the file header and the view headers
 * too for thread 0; s->buf holds a band and a header. */
static void read_band(struct floor_share *s)
{
	const struct sino *g = s->arg;
	const unsigned w = s->index;
	const uint64_t r0 = g->rows * w / g->n, r1 = g->rows * (w + 1) / g->n;
	const uint64_t record = g->header + g->rows * g->row_bytes;
	const uint64_t head = w == 0 ? g->header : 0;
	const size_t len = (size_t)(head + (r1 - r0) * g->row_bytes);

	if (w == 0 && g->offset && g->map) {
		memcpy(s->buf, g->map, (size_t)g->offset);
		s->bytes += g->offset;
	} else if (w == 0 && g->offset) {
		if (pread(s->fd, s->buf, (size_t)g->offset, 0) !=
		    (ssize_t)g->offset) {
			s->err = EIO;
			return;
		}
		s->bytes += g->offset;
	}
	for (uint64_t v = 0; v < g->views && len; v++) {
		const uint64_t at = g->offset + v * record + g->header +
				    r0 * g->row_bytes - head;
		const unsigned char *band = s->buf;

		if (g->map) {
			band = g->map + at;
		} else {
			ssize_t got = pread(s->fd, s->buf, len, (off_t)at);

			if (got != (ssize_t)len) {
				s->err = got < 0 ? errno : EIO;
				return;
			}
		}
		s->bytes += len;
		memcpy(g->headers + v * g->header, band, (size_t)head);
		for (uint64_t r = r0; r < r1; r++)
			store_far(g->pixels + (r * g->views + v) * g->row_bytes,
				  band + head + (r - r0) * g->row_bytes,
				  (size_t)g->row_bytes);
	}
#ifdef STREAMING
	_mm_sfence();
#endif
}

/* --sinograms O,H,R,B: 0, or -1 when it is not four numbers, R and B
 * not 0. */
static int parse_sino(const char *text, struct sino *g)
{
	unsigned long long o, h, r, b;
	char end;

	if (sscanf(text, "%llu,%llu,%llu,%llu%c", &o, &h, &r, &b, &end) != 4 ||
	    r == 0 || b == 0)
		return -1;
	g->offset = o, g->header = h, g->rows = r, g->row_bytes = b;
	return 0;
}

static int parse(int argc, char **argv, unsigned *n, const char **path,
		 struct sino *g, int *map)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			*n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--sinograms") == 0 && i + 1 < argc) {
			if (parse_sino(argv[++i], g) != 0)
				return -1;
		} else if (strcmp(argv[i], "--map") == 0) {
			*map = 1;
		}
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
	uint64_t size;
	int fd, bad;
	unsigned n = 1;
	const char *path = NULL;
	unsigned char *dest;
	struct sino g = { 0 };
	int map = 0;
	struct floor_share *pt;
	pthread_t *tid;

	if (parse(argc, argv, &n, &path, &g, &map) != 0 || (map && !g.rows)) {
		fprintf(stderr, "usage: freshfloor [--threads N] "
			"[--sinograms OFFSET,HEADER,ROWS,ROW_BYTES [--map]] FILE\n");
		return 2;
	}
	pt = calloc(n, sizeof(*pt));
	tid = calloc(n, sizeof(*tid));
	if (!pt || !tid)
		return 1;
	/* Sinograms: each thread's buffer, for its band and a header (the
	 * file header for thread 0), made before the clock. */
	for (unsigned w = 0; g.rows && w < n; w++) {
		const uint64_t band = (g.rows + n - 1) / n * g.row_bytes;
		const uint64_t len = g.header + band > g.offset ?
					     g.header + band : g.offset;

		pt[w].read = read_band;
		pt[w].arg = &g;
		pt[w].buf = aligned_alloc(4096, (size_t)(len + 4095) / 4096 *
							4096);
		if (!pt[w].buf)
			return 1;
	}
	if (floor_start("freshfloor", tid, pt, n) != 0)
		return 1;
	t0 = floor_now();
	fd = floor_open("freshfloor", path, &st, 0);
	if (fd < 0)
		return 1;
	size = (uint64_t)st.st_size;
	if (g.rows) {
		const uint64_t record = g.header + g.rows * g.row_bytes;

		g.n = n;
		g.views = size > g.offset ? (size - g.offset) / record : 0;
		if (g.offset + g.views * record != size) {
			fprintf(stderr, "freshfloor: %s: %llu bytes are not "
				"whole views of this layout\n", path,
				(unsigned long long)size);
			return 1;
		}
		if (map) {
			void *m = mmap(NULL, (size_t)size, PROT_READ,
				       MAP_SHARED, fd, 0);

			if (m == MAP_FAILED) {
				fprintf(stderr, "freshfloor: %s: cannot map "
					"the file: %s\n", path,
					strerror(errno));
				return 1;
			}
			g.map = m;
		}
		g.pixels = floor_fresh(g.views * g.rows * g.row_bytes);
		g.headers = floor_fresh(g.views * g.header);
		if (!g.pixels || !g.headers) {
			fprintf(stderr, "freshfloor: %s: cannot map the "
				"sinograms\n", path);
			return 1;
		}
		for (unsigned w = 0; w < n; w++)
			pt[w].fd = fd;
		floor_finish(tid, pt, n);
		close(fd);
		t1 = floor_now();
		bad = floor_report("freshfloor", path, pt, n, size, t1 - t0);
		return bad;
	}
	dest = floor_fresh(size);
	if (!dest) {
		fprintf(stderr, "freshfloor: %s: cannot map %llu bytes\n", path,
			(unsigned long long)size);
		return 1;
	}
	for (unsigned w = 0; w < n; w++) {
		floor_part(&pt[w], w, n, fd, dest, size);
		pt[w].whole = 1;
		pt[w].chunk = MAX_CALL;
	}
	floor_finish(tid, pt, n);
	close(fd);
	t1 = floor_now();

	bad = floor_report("freshfloor", path, pt, n, size, t1 - t0);
	free(pt);
	free(tid);
	return bad;
}
