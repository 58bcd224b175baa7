/*
 * uringfloor.c - the fresh-memory floor read with io_uring instead of
 * pread: what an io_uring reader could do at best here, measured as
 * freshfloor measures the pool's way of reading (bench/freshfloor.c).
 * On the clock: the file opened, one fresh mapping the size of the file
 * (2 MiB aligned, advised for huge pages), and N threads, each with a
 * ring of its own, reading their contiguous part of the file straight
 * into their part of the mapping, BLOCK bytes a request with DEPTH
 * requests in flight; then the file closed and the clock stopped.  The
 * threads and their rings are made before the clock, as parload's pool
 * is made with its loader.
 *
 * --direct opens the file O_DIRECT (the mapping and the blocks are
 * aligned; the file's last block is read whole, past the end, and the
 * kernel stops at the end).  --async marks every request IOSQE_ASYNC, so
 * that the kernel's own workers do every read (a warm read is otherwise
 * copied by the thread that submits it, inside io_uring_enter).
 *
 * Usage: uringfloor [--threads N] [--depth D] [--block BYTES] [--direct]
 *                   [--async] FILE
 * Prints the same JSON line as the other floors, "verified" when the bytes
 * read are the file's size with no error.
 */
#include "config.h"

#include <liburing.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "floor.h"

/* One request in flight: where it reads from, how much, and where to. */
struct req {
	uint64_t off, len;
};

/* One thread's ring and its requests (depth slots). */
struct ring_share {
	struct io_uring ring;
	struct req *slot;
	unsigned depth;
	uint64_t block;
	unsigned flags; /* IOSQE_ASYNC or 0 */
	uint64_t size;  /* the file's: a direct read past it is short */
};

/* Queue slot k: the read of its range into its place of thread s's part. */
static void queue(struct ring_share *r, struct floor_share *s, unsigned k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	io_uring_prep_read(sqe, s->fd, s->buf + (r->slot[k].off - s->begin),
			   (unsigned)r->slot[k].len, r->slot[k].off);
	sqe->flags |= (unsigned char)r->flags;
	io_uring_sqe_set_data64(sqe, k);
}

/* Thread s's part, [begin, end) into buf, in blocks, depth of them in
 * flight.  A short read is asked again for its rest, unless it stopped
 * at the file's end (a direct read of the last, partial block). */
static void read_ring(struct floor_share *s)
{
	struct ring_share *r = (struct ring_share *)s->arg + s->index;
	uint64_t next = s->begin;
	unsigned inflight = 0, free_slots = r->depth;
	unsigned *idle = calloc(r->depth, sizeof(*idle));

	if (!idle) {
		s->err = ENOMEM;
		return;
	}
	for (unsigned k = 0; k < r->depth; k++)
		idle[k] = k;
	while (!s->err && (next < s->end || inflight)) {
		struct io_uring_cqe *cqe;
		int rc;

		for (; free_slots && next < s->end; inflight++) {
			const unsigned k = idle[--free_slots];

			r->slot[k].off = next;
			r->slot[k].len = s->end - next < r->block ?
						 s->end - next : r->block;
			next += r->slot[k].len;
			queue(r, s, k);
		}
		rc = io_uring_submit_and_wait(&r->ring, 1);
		if (rc < 0 && rc != -EINTR) {
			s->err = -rc;
			break;
		}
		while (!s->err && io_uring_peek_cqe(&r->ring, &cqe) == 0) {
			const unsigned k = (unsigned)io_uring_cqe_get_data64(cqe);
			const int res = cqe->res;
			struct req *q = &r->slot[k];

			io_uring_cqe_seen(&r->ring, cqe);
			if (res < 0 || (res == 0 && q->off < r->size)) {
				s->err = res < 0 ? -res : EIO;
				break;
			}
			s->bytes += (uint64_t)res;
			q->off += (uint64_t)res;
			q->len -= (uint64_t)res;
			if (q->len && q->off < r->size) {
				queue(r, s, k); /* the rest, in the same slot */
			} else {
				idle[free_slots++] = k;
				inflight--;
			}
		}
	}
	free(idle);
}

static int parse(int argc, char **argv, unsigned *n, unsigned *depth,
		 uint64_t *block, int *direct, int *async, const char **path)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			*n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
			*depth = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc)
			*block = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--direct") == 0)
			*direct = 1;
		else if (strcmp(argv[i], "--async") == 0)
			*async = 1;
		else if (!*path && argv[i][0] != '-')
			*path = argv[i];
		else
			return -1;
	}
	return *path && *n && *depth && *block && *block % 4096 == 0 &&
			       *block <= (1u << 30) ?
		       0 :
		       -1;
}

int main(int argc, char **argv)
{
	unsigned n = 1, depth = 8;
	uint64_t block = (uint64_t)1 << 20, size;
	int direct = 0, async = 0, fd, bad;
	const char *path = NULL;
	struct floor_share *pt;
	struct ring_share *rs;
	pthread_t *tid;
	unsigned char *dest;
	struct stat st;
	double t0, t1;

	if (parse(argc, argv, &n, &depth, &block, &direct, &async, &path)) {
		fprintf(stderr, "usage: uringfloor [--threads N] [--depth D] "
			"[--block BYTES (a multiple of 4096)] [--direct] "
			"[--async] FILE\n");
		return 2;
	}
	pt = calloc(n, sizeof(*pt));
	tid = calloc(n, sizeof(*tid));
	rs = calloc(n, sizeof(*rs));
	if (!pt || !tid || !rs)
		return 1;
	for (unsigned w = 0; w < n; w++) {
		int rc = io_uring_queue_init(2 * depth, &rs[w].ring, 0);

		if (rc < 0) {
			fprintf(stderr, "uringfloor: io_uring_queue_init: %s\n",
				strerror(-rc));
			return 1;
		}
		rs[w].slot = calloc(depth, sizeof(*rs[w].slot));
		if (!rs[w].slot)
			return 1;
		rs[w].depth = depth;
		rs[w].block = block;
		rs[w].flags = async ? IOSQE_ASYNC : 0;
		pt[w].read = read_ring;
		pt[w].arg = rs;
	}
	if (floor_start("uringfloor", tid, pt, n) != 0)
		return 1;
	t0 = floor_now();
	fd = floor_open("uringfloor", path, &st, direct ? O_DIRECT : 0);
	if (fd < 0)
		return 1;
	size = (uint64_t)st.st_size;
	dest = floor_fresh(size);
	if (!dest) {
		fprintf(stderr, "uringfloor: %s: cannot map %llu bytes\n", path,
			(unsigned long long)size);
		return 1;
	}
	/* freshfloor's parts; a direct read's last block asks for whole
	 * pages (the mapping has them). */
	for (unsigned w = 0; w < n; w++) {
		rs[w].size = size;
		floor_part(&pt[w], w, n, fd, dest,
			   direct ? (size + 4095) / 4096 * 4096 : size);
	}
	floor_finish(tid, pt, n);
	close(fd);
	t1 = floor_now();
	bad = floor_report("uringfloor", path, pt, n, size, t1 - t0);
	for (unsigned w = 0; w < n; w++) {
		io_uring_queue_exit(&rs[w].ring);
		free(rs[w].slot);
	}
	free(rs);
	free(pt);
	free(tid);
	return bad;
}
