/*
 * cache.c - what a load leaves in the page cache (parload_request.cache):
 * keep (buffered reads, the default), drop (buffered reads whose pages
 * leave the cache once they are in the dataset), direct (O_DIRECT through
 * aligned buffers) and auto (one of keep and drop, chosen per load from
 * what is cheap to know).
 *
 * A drop load ends by dropping its files whole (parload__cache_after):
 * strategies that do not drop as they read leave everything to it, and
 * with the pool a worker's readahead past the end of its share may bring
 * in pages after the next worker has let go of them.
 *
 * The mode is settled once the source is described (parload__cache_prepare):
 * auto looks at a sample of the file's pages (mincore) and at the memory
 * available; direct opens each file a second time with O_DIRECT, and a
 * file system that refuses it gets drop.  A drop load's workers read as
 * a keep load's do and report each range as they read it
 * (parload__drop_read); each worker's dropper asks the kernel to let go
 * of those pages a few megabytes at a time (POSIX_FADV_DONTNEED), except
 * the first bytes of its share, which it holds until the pass is over:
 * the kernel reads ahead of a buffered reader by up to two readahead
 * windows of its device, so the worker before it in the file reads into
 * them as it ends its own share, and pages let go of by then came from
 * the device a second time.  On this VM's virtio disk (read_ahead_kb
 * 8192) drop loads of the 229 MB reference stream read 242.0 MB from the
 * device with 2 workers and 265.0 MB with 4 (229.4 MB with one, and with
 * keep), the 1 GiB file 1,090.5 MB against 1,073.8 MB; holding each
 * share's first 16 MiB, every one read 229.4 MB and 1,073.8 MB.  Cold, 2
 * threads, 40 rounds alternated: drop took 1.069 x keep's time before,
 * 1.023-1.027 x after.
 *
 * Not preadv2's RWF_DONTCACHE (Linux 6.14 on), whose pages the kernel
 * lets go of as it copies them out: on Linux 6.18 and ext4 over virtio
 * (2 threads, cold, medians of 5 alternated rounds) drop loads read so
 * took 132, 483 and 1,775 ms for files of 229 MB, 1 GiB and 4 GiB,
 * against 120, 370 and 1,565 ms let go of with POSIX_FADV_DONTNEED (keep:
 * 104, 361 and 1,524 ms); both left none of the file cached.
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

/* Ranges are let go of this many bytes at a time: one call per range
 * read would cost more than the reads of small views. */
#define DROP_BATCH ((uint64_t)8 << 20)
/* The largest folio the page cache keeps a file in (a PMD's 2 MiB on
 * x86-64 and on arm64 with 4 KiB pages), which POSIX_FADV_DONTNEED lets
 * go of only when the range holds all of it.  Readahead makes large
 * folios (ext4 and XFS on Linux 6.x), so a worker's ranges are let go of
 * between folio boundaries: ranges cut at views' offsets left the folio
 * of each cut cached until the load's end: a cold drop load of a 4 GiB
 * file (2 threads) held up to 1,065 MiB of it in the page cache (26%),
 * 84 MiB now; in 32 MiB batches 157-317 MiB at a batch, 48 MiB now; on a
 * loop device, 0.5-1.25 MiB of each 2 MiB view a worker had let go of. */
#define DROP_FOLIO ((uint64_t)2 << 20)
/* Pages of a file auto looks at, spread evenly: every AUTO_FIRST-th of
 * them first, and the rest only when those disagree
 * (parload__cache_resident). */
#define AUTO_SAMPLES 64
#define AUTO_FIRST 8

/* ---- auto ---- */

/* Whether sample i of n of the pages of f (mapped at map) is in the page
 * cache. */
static bool sample_cached(const unsigned char *map, uint64_t pages,
			  unsigned i, unsigned n)
{
	const uint64_t at = n > 1 ? (pages - 1) * i / (n - 1) : 0;
	unsigned char vec;

	return parload__sys_mincore((void *)(map + at * PARLOAD__PAGE),
				    PARLOAD__PAGE, &vec) == 0 &&
	       (vec & 1);
}

/* The share of f's sampled pages (AUTO_SAMPLES, or every page of a
 * smaller file) that are in the page cache, in [0, 1]; 0 when it cannot
 * be told.  A mincore call costs about 1.5 us on the development VM, so
 * the 64 samples took 0.10 ms, 0.7% of a warm load of the 229 MB
 * reference stream and more than the whole load of a small file: the
 * first AUTO_FIRST, spread over the file, settle a file cached whole or
 * not at all, the usual cases; the rest are looked at only when they
 * disagree (a file cached in stripes that every first sample falls in
 * reads as cached whole). */
double parload__cache_resident(const parload__file *f)
{
	const uint64_t pages = f->size / PARLOAD__PAGE;
	const unsigned n = (unsigned)PARLOAD__MIN(pages, AUTO_SAMPLES);
	unsigned char *map;
	unsigned in = 0, looked = 0;

	if (pages == 0)
		return 0.0;
	map = parload__sys_mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED,
				f->fd, 0);
	if (map == MAP_FAILED)
		return 0.0;
	for (unsigned i = 0; i < n; i += AUTO_FIRST, looked++)
		in += sample_cached(map, pages, i, n);
	if (in != 0 && in != looked) {
		for (unsigned i = 0; i < n; i++)
			if (i % AUTO_FIRST)
				in += sample_cached(map, pages, i, n);
		looked = n;
	}
	(void)parload__sys_munmap(map, (size_t)f->size);
	return (double)in / looked;
}

/* Bytes of memory free and of buffers (sysinfo: the page cache is not
 * among them, so a cold file is dropped sooner than it needs to be). */
static uint64_t available(void)
{
	struct sysinfo si;

	if (sysinfo(&si) != 0)
		return UINT64_MAX;
	return ((uint64_t)si.freeram + si.bufferram) *
	       (si.mem_unit ? si.mem_unit : 1);
}

/* Keep a warm source, and a cold one that fits easily; drop a cold one
 * larger than half of what is available. */
static parload_cache choose(const parload__ctx *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->nfiles; i++)
		total += c->files[i].size;
	if (parload__cache_resident(&c->files[0]) >= 0.5)
		return PARLOAD_CACHE_KEEP;
	return total > available() / 2 ? PARLOAD_CACHE_DROP : PARLOAD_CACHE_KEEP;
}

/* ---- direct ---- */

/* A second descriptor of each file, opened O_DIRECT: false when the file
 * system refuses (tmpfs, some FUSE and network file systems). */
static int open_direct(parload__ctx *c, bool *refused)
{
	*refused = false;
	for (size_t i = 0; i < c->nfiles; i++) {
		parload__file *f = &c->files[i];

		f->dfd = parload__sys_open(f->path, O_RDONLY | O_CLOEXEC |
							O_DIRECT);
		if (f->dfd >= 0)
			continue;
		if (errno == EINVAL || errno == EOPNOTSUPP) {
			*refused = true;
			return 0;
		}
		return parload__fail_open(c->err, errno, f->path);
	}
	return 0;
}

/* ---- the mode of a load ---- */

static int settle_mode(parload__ctx *c, bool direct_ok)
{
	const parload_cache asked = c->req->cache;
	bool refused = false;
	int rc;

	for (size_t i = 0; i < c->nfiles; i++)
		c->files[i].dfd = -1;
	if ((int)asked < PARLOAD_CACHE_KEEP || asked > PARLOAD_CACHE_AUTO)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "unknown page-cache mode %d",
					  (int)asked);
	/* A pipe or a caller's descriptor of no path: nothing to spare or
	 * to reopen. */
	if (c->stream) {
		c->cache = PARLOAD_CACHE_KEEP;
		return 0;
	}
	c->cache = asked == PARLOAD_CACHE_AUTO ? choose(c) : asked;
	/* Direct I/O reopens the files by name: not a caller's descriptor. */
	if (c->cache == PARLOAD_CACHE_DIRECT &&
	    (!direct_ok || !c->files[0].own)) {
		c->cache = PARLOAD_CACHE_DROP;
		return 0;
	}
	if (c->cache != PARLOAD_CACHE_DIRECT)
		return 0;
	rc = open_direct(c, &refused);
	if (rc == 0 && refused) {
		parload__cache_close(c);
		c->cache = PARLOAD_CACHE_DROP;
	}
	return rc;
}

int parload__cache_prepare(parload__ctx *c, bool direct_ok)
{
	const int rc = settle_mode(c, direct_ok);

	c->drop_hold = rc == 0 && c->cache == PARLOAD_CACHE_DROP ?
			       parload__readahead_reach(&c->files[0]) :
			       0;
	return rc;
}

void parload__cache_close(parload__ctx *c)
{
	for (size_t i = 0; c->files && i < c->nfiles; i++) {
		if (c->files[i].dfd >= 0)
			(void)parload__sys_close(c->files[i].dfd);
		c->files[i].dfd = -1;
	}
}

/* A drop load's last let-go: mincore a window of this many pages at a
 * time, and at most this many rounds. */
#define RESIDENT_WINDOW 4096
#define DROP_TRIES 4

/* Whether any page of f is in the page cache (mincore over the file
 * mapped, never touched: no read, no fault), a window at a time.  It and
 * the let-go it leads to call the system directly, not through sys.h's
 * seam: they run as many times as pages are left, which differs from run
 * to run, and the fault injection's walk needs the same calls in every
 * run; a failure of theirs leaves the load as it is. */
static bool any_resident(const parload__file *f)
{
	const size_t page = PARLOAD__PAGE;
	unsigned char vec[RESIDENT_WINDOW];
	unsigned char *map;
	bool found = false;

	if (f->size == 0)
		return false;
	map = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd, 0);
	if (map == MAP_FAILED)
		return false;
	for (uint64_t at = 0; !found && at < f->size;
	     at += (uint64_t)RESIDENT_WINDOW * page) {
		const size_t len = (size_t)PARLOAD__MIN(
			f->size - at, (uint64_t)RESIDENT_WINDOW * page);

		if (mincore(map + at, len, vec) != 0)
			break;
		for (size_t k = 0; !found && k < (len + page - 1) / page; k++)
			found = vec[k] & 1;
	}
	(void)munmap(map, (size_t)f->size);
	return found;
}

/* After a drop load: every file let go of.  A page whose readahead was
 * still in flight is locked, and POSIX_FADV_DONTNEED passes it by; it
 * would stay once the read completes (a worker's readahead past the end
 * of its share).  So the files are looked at (mincore) and let go of
 * again while pages are left, a millisecond apart, up to DROP_TRIES - 1
 * times: under valgrind and beside a second process, a drop load of a
 * 50 MiB file left 35-46% of it cached in 3 runs of 9 without that, 0.1%
 * in 11 of 11 with it. */
void parload__cache_after(parload__ctx *c)
{
	const struct timespec nap = { 0, 1000 * 1000 };
	bool left = true;

	if (c->cache != PARLOAD_CACHE_DROP)
		return;
	for (size_t i = 0; i < c->nfiles; i++)
		(void)parload__sys_posix_fadvise(c->files[i].fd, 0, 0,
						 POSIX_FADV_DONTNEED);
	for (int tries = 1; left && tries < DROP_TRIES; tries++) {
		left = false;
		for (size_t i = 0; i < c->nfiles; i++) {
			if (!any_resident(&c->files[i]))
				continue;
			left = true;
			(void)nanosleep(&nap, NULL);
			(void)posix_fadvise(c->files[i].fd, 0, 0,
					    POSIX_FADV_DONTNEED);
		}
	}
}

/* ---- drop, as the workers read ---- */

/* The number in sysfs file `path`, in KiB, as bytes; 0 where there is
 * none.  (Plain calls, not the fault seam's: what they find only sets how
 * much a drop load holds for a while.) */
static uint64_t sysfs_kib(const char *path)
{
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned long long kb;
	char text[24];
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	(void)close(fd);
	text[n > 0 ? n : 0] = '\0';
	return n > 0 && sscanf(text, "%llu", &kb) == 1 ? (uint64_t)kb << 10 :
							 0;
}

/* Setting name of the queue of device dev in sysfs, in bytes, or 0: a
 * whole disk's own queue, or a partition's disk's. */
static uint64_t queue_kib(dev_t dev, const char *name)
{
	char path[80];
	uint64_t v;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s",
		 major(dev), minor(dev), name);
	v = sysfs_kib(path);
	if (v)
		return v;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/%s",
		 major(dev), minor(dev), name);
	return sysfs_kib(path);
}

/* The most the kernel reads ahead of a reader of f in one window, in
 * bytes, or 0 where sysfs does not say: read_ahead_kb of its device
 * (/sys/class/bdi/MAJ:MIN names a whole disk, a device-mapper volume or a
 * network file system; a partition reads ahead as its disk's queue), or,
 * where larger, the device's largest request (max_sectors_kb, the
 * kernel's io_pages), up to which a read larger than read_ahead_kb has
 * its window grown (ractl_max_pages, mm/readahead.c).  A loop device's
 * are 128 and 1,280 KiB: holding twice read_ahead_kb, drop loads of the
 * 229 MB reference stream (2 threads) read 229.9-231.2 MB from it, the
 * worker before reading again what the next had let go of; holding twice
 * max_sectors_kb, 229.4 MB, the file's size. */
static uint64_t read_ahead_of(const parload__file *f)
{
	struct stat st;
	char path[64];
	uint64_t ra;

	if (fstat(f->fd, &st) != 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb",
		 major(st.st_dev), minor(st.st_dev));
	ra = sysfs_kib(path);
	if (!ra)
		ra = queue_kib(st.st_dev, "read_ahead_kb");
	return ra ? PARLOAD__MAX(ra, queue_kib(st.st_dev, "max_sectors_kb")) :
		    0;
}

uint64_t parload__readahead_reach(const parload__file *f)
{
	const uint64_t ra = read_ahead_of(f);

	return ra ? 2 * ra : PARLOAD__READAHEAD_UNKNOWN;
}

void parload__drop_init(parload__dropper *dr, parload__ctx *c, bool gaps)
{
	const parload__file *tail_f = dr->tail_f;
	const uint64_t tail_begin = dr->tail_begin, tail_end = dr->tail_end;

	memset(dr, 0, sizeof(*dr));
	dr->on = c->cache == PARLOAD_CACHE_DROP;
	/* Where the gaps may be another reader's (a worker's or another
	 * process's rows), exactly what was read, as ranges cut at views'
	 * offsets leave folios behind. */
	dr->gaps = gaps;
	dr->folio = gaps ? DROP_FOLIO : 1;
	dr->hold = c->drop_hold;
	/* The last pass's tail, let go of at this one's end. */
	dr->tail_f = tail_f;
	dr->tail_begin = tail_begin;
	dr->tail_end = tail_end;
}

/* To the end of the file (let_go). */
#define TO_END UINT64_MAX

/* off rounded down and up to dr's folio boundaries. */
static uint64_t folio_down(const parload__dropper *dr, uint64_t off)
{
	return off & ~(dr->folio - 1);
}

static uint64_t folio_up(const parload__dropper *dr, uint64_t off)
{
	return off > TO_END - dr->folio ? TO_END :
					  folio_down(dr, off + dr->folio - 1);
}

static void let_go(const parload__file *f, uint64_t begin, uint64_t end)
{
	if (f && end > begin)
		(void)parload__sys_posix_fadvise(f->fd, (off_t)begin,
						 end == TO_END ?
							 0 :
							 (off_t)(end - begin),
						 POSIX_FADV_DONTNEED);
}

void parload__drop_flush(parload__dropper *dr)
{
	if (dr->f && folio_down(dr, dr->pos) > dr->mark) {
		let_go(dr->f, dr->mark, folio_down(dr, dr->pos));
		dr->mark = folio_down(dr, dr->pos);
	}
}

/*
 * The worker's share is over: let go of the held bytes, from the folio
 * they begin in (the share before is read: it is this pass's or the last
 * one's), and keep the folio the share ends in (its tail), whose rest is
 * the next share's, or the next pass's first bytes, which the kernel may
 * have read ahead already: let go of at once, they came from the device
 * a second time (6% more of a 4 GiB file read in 32 MiB batches).  The
 * next share's release lets go of it from its first folio; the tail is
 * let go of at the next pass's end too (a selection whose next pass
 * starts further on), or with the file at the load's end.
 */
void parload__drop_release(parload__dropper *dr)
{
	const parload__file *tf = dr->f ? dr->f : dr->held_f;
	const uint64_t end = dr->f ? dr->pos : dr->held_end;

	let_go(dr->tail_f, dr->tail_begin, dr->tail_end);
	if (dr->held_f) {
		uint64_t to = folio_up(dr, dr->held_end);

		if (dr->held_f == tf)
			to = PARLOAD__MIN(to, folio_down(dr, end));
		let_go(dr->held_f, folio_down(dr, dr->held_begin), to);
	}
	dr->tail_f = tf;
	dr->tail_begin = folio_down(dr, end);
	dr->tail_end = end > folio_down(dr, end) ? folio_up(dr, end) : end;
	dr->f = dr->held_f = NULL;
	dr->mark = dr->pos = dr->held_begin = dr->held_end = dr->hold = 0;
}

void parload__drop_read(parload__dropper *dr, const parload__file *f,
			uint64_t off, uint64_t len)
{
	if (!dr->on || len == 0)
		return;
	/* The first bytes read, while they follow each other in one file,
	 * up to a folio's boundary. */
	if (dr->hold && (!dr->held_f || (dr->held_f == f &&
					 off == dr->held_end))) {
		uint64_t n;

		if (!dr->held_f) {
			dr->held_begin = off;
			dr->hold = folio_up(dr, off + dr->hold) - off;
		}
		n = PARLOAD__MIN(len, dr->hold);
		dr->held_f = f;
		dr->held_end = off + n;
		dr->hold -= n;
		off += n;
		len -= n;
		if (len == 0)
			return;
	}
	dr->hold = 0;
	/* What follows the held bytes is let go of from their end. */
	if (!dr->f && dr->held_f) {
		dr->f = dr->held_f;
		dr->mark = dr->pos = dr->held_end;
	}
	/* Another file: the rest of the last one is this worker's share,
	 * or nobody's, and so is what comes before off in this one; with
	 * gaps another worker reads, neither is, nor the gap (the folio each
	 * side of it stays, until the pass's end for the last, the load's
	 * for the rest). */
	if (dr->f != f || (!dr->gaps && off != dr->pos)) {
		if (dr->gaps)
			let_go(dr->f, dr->mark, TO_END);
		else
			parload__drop_flush(dr);
		dr->f = f;
		dr->mark = dr->gaps ? folio_down(dr, off) : folio_up(dr, off);
	}
	dr->pos = off + len;
	if (folio_down(dr, dr->pos) >= dr->mark + DROP_BATCH)
		parload__drop_flush(dr);
}
