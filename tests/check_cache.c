/*
 * check_cache.c - the page-cache modes (parload_request.cache: keep, drop,
 * direct, auto).
 *
 * check_cache: every mode loads what a keep load of the same request
 * loads, byte for byte (typed headers, pixels, a raw layout's own
 * headers, bad views): a whole file, views larger than a direct worker's
 * buffer, the caller's buffers, reads capped below a block, selections, sinograms, batches, windows,
 * a followed file, a raw layout of three files converted from u16be, and
 * parload's own format with its CRCs checked, and a raw layout whose
 * views agree with their places modulo 4 KiB (which direct loads read
 * straight into place: in the fault-injection build the seam counts the
 * bytes that land there); stats.cache says the mode
 * used (drop for direct only where this file system refuses O_DIRECT,
 * which the test finds out by trying it, and says so; drop for a
 * caller's descriptor or another strategy; keep for a pipe).  An unknown
 * mode is PARLOAD_EINVAL.
 *
 * check_cache_resident (part 1): what a load leaves in the page cache,
 * counted with mincore over a mapping of the file.  A keep load of a cold
 * file leaves it cached, a drop or direct load leaves at most a quarter
 * of it, auto on a warm file keeps.  A drop load's worker holds the first
 * bytes of its share (the reach of the kernel's readahead, twice the
 * larger of the device's read_ahead_kb and max_sectors_kb) and lets go
 * of the rest as it reads; what it holds leaves when its pass is over,
 * so each batch of a load in batches is out of the cache by its
 * callback.  It skips where the page cache of
 * $TMPDIR's file system cannot be emptied of a file or does not keep
 * what is read (tmpfs, some network file systems).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "batchutil.h"
#include "internal.h"
#include "layouts.h"
#include "testutil.h"
#ifdef PARLOAD_FAULT_INJECTION
#include "fault/fault.h"
#endif

/* The modes, in the order of the loop tests' index. */
#define N_MODES 4
static const parload_cache modes[N_MODES] = {
	PARLOAD_CACHE_KEEP, PARLOAD_CACHE_DROP, PARLOAD_CACHE_DIRECT,
	PARLOAD_CACHE_AUTO
};

/* The stream most tests load: 150 views of 301 x 37 u16, 22,306-byte
 * records, so that no view starts on a 4 KiB block (direct I/O reads
 * the blocks around them). */
#define VIEWS 150
#define WIDTH 301
#define HEIGHT 37

static const char *mode_name(parload_cache m)
{
	return parload_cache_name(m);
}

/* Whether this file system refuses O_DIRECT for path, tried here as the
 * library tries it; said once. */
static bool direct_refused(const char *path)
{
	static bool said;
	int fd = open(path, O_RDONLY | O_DIRECT);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	ck_assert_msg(errno == EINVAL || errno == EOPNOTSUPP,
		      "open(%s, O_DIRECT): %s", path, strerror(errno));
	if (!said)
		printf("check_cache: O_DIRECT is refused on the file system of "
		       "%s (%s): direct loads must drop\n", path,
		       strerror(errno));
	said = true;
	return true;
}

/* The mode a load asked m uses: direct drops where O_DIRECT is refused,
 * auto keeps a file of a few megabytes (cold or warm, it fits in half of
 * any free memory these tests run with). */
static parload_cache mode_used(parload_cache m, const char *path)
{
	if (m == PARLOAD_CACHE_DIRECT && direct_refused(path))
		return PARLOAD_CACHE_DROP;
	return m == PARLOAD_CACHE_AUTO ? PARLOAD_CACHE_KEEP : m;
}

static void assert_mode(const parload_dataset *ds, parload_cache want,
			const char *what)
{
	ck_assert_msg(ds->stats.cache == want, "%s: stats.cache %s, want %s",
		      what, mode_name(ds->stats.cache), mode_name(want));
}

/* r run with mode m into ds; its return code (err cleared first). */
static int run_as(parload_loader *l, parload_request *r, parload_cache m,
		  parload_dataset *ds, parload_error *err)
{
	memset(err, 0, sizeof(*err));
	r->cache = m;
	return parload_loader_run(l, r, ds, err);
}

static void load_as(parload_loader *l, parload_request *r, parload_cache m,
		    parload_dataset *ds, const char *what)
{
	parload_error err;

	ck_assert_msg(run_as(l, r, m, ds, &err) == 0, "%s, cache %s: %s",
		      what, mode_name(m), err.message);
}

/* Every byte a and b deliver is the same. */
static void assert_same(const parload_dataset *a, const parload_dataset *b,
			const char *what)
{
	const parload_shape *s = &a->shape;

	ck_assert_msg(s->views == b->shape.views &&
			      s->view_bytes == b->shape.view_bytes &&
			      s->layout == b->shape.layout,
		      "%s: shapes differ", what);
	ck_assert_msg(memcmp(a->headers, b->headers,
			     s->views * sizeof(*a->headers)) == 0,
		      "%s: view headers differ", what);
	ck_assert_msg(memcmp(a->pixels, b->pixels, s->views * s->view_bytes) ==
			      0,
		      "%s: pixels differ", what);
	ck_assert_msg((a->raw_headers == NULL) == (b->raw_headers == NULL),
		      "%s: raw headers in one load only", what);
	if (a->raw_headers)
		ck_assert_msg(memcmp(a->raw_headers, b->raw_headers,
				     s->views * a->desc.header) == 0,
			      "%s: raw headers differ", what);
	ck_assert_msg(a->bad_view_count == b->bad_view_count &&
			      (a->bad_view_count == 0 ||
			       memcmp(a->bad_views, b->bad_views,
				      a->bad_view_count *
					      sizeof(*a->bad_views)) == 0),
		      "%s: bad views differ", what);
	ck_assert_uint_eq(a->stats.crc_checked, b->stats.crc_checked);
}

/* r loaded with keep and with m: the same bytes, and the mode m must use
 * (want) in stats.  r's own cache field is overwritten. */
static void assert_mode_loads(parload_loader *l, parload_request *r,
			      parload_cache m, parload_cache want,
			      const char *what)
{
	parload_dataset keep, ds;
	char text[256];

	snprintf(text, sizeof(text), "%s, cache %s", what, mode_name(m));
	load_as(l, r, PARLOAD_CACHE_KEEP, &keep, what);
	assert_mode(&keep, PARLOAD_CACHE_KEEP, what);
	load_as(l, r, m, &ds, what);
	assert_mode(&ds, want, text);
	assert_same(&keep, &ds, text);
	parload_dataset_free(&ds);
	parload_dataset_free(&keep);
}

static char *stream(const char *name, uint64_t views, uint32_t w,
		    uint32_t h, uint32_t flags)
{
	char *path = tu_path(name);

	tu_write_stream(path, views, w, h, PARLOAD_PIXEL_U16, flags, 3);
	return path;
}

/* ---- what every mode loads ---- */

/* The whole file, with 1 and 3 workers; views of 1.3 MB, more than a
 * direct worker's 1 MiB buffer; into the caller's buffers. */
START_TEST(test_whole)
{
	const parload_cache m = modes[_i];
	char *path = stream("whole.raw", VIEWS, WIDTH, HEIGHT, 0);
	char *big = stream("big.raw", 3, 1100, 600, 0);
	parload_loader *one = tu_loader(1, PARLOAD_STRATEGY_PARALLEL, 0), *three = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	parload_buffers b;
	parload_desc d;
	parload_error err;
	tu_soa ref;

	parload_request_init(&r);
	r.source.path = path;
	assert_mode_loads(one, &r, m, mode_used(m, path), "whole, 1 thread");
	assert_mode_loads(three, &r, m, mode_used(m, path),
			  "whole, 3 threads");
	r.source.path = big;
	assert_mode_loads(three, &r, m, mode_used(m, big), "views of 1.3 MB");
	/* The caller's buffers, against the serial reading. */
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(parload_describe(&(parload_source){ .path = path,
							     .fd = -1 },
					  false, &d, &err), 0);
	ck_assert_int_eq(parload_buffers_alloc(&b, &d, NULL, 0, &err), 0);
	r.source.path = path;
	r.into = &b;
	{
		parload_dataset ds;

		load_as(three, &r, m, &ds, "into the caller's buffers");
		assert_mode(&ds, mode_used(m, path), "into");
		tu_assert_same(&ds, &ref);
		parload_dataset_free(&ds);
	}
	parload_buffers_free(&b);
	tu_soa_free(&ref);
	parload_loader_free(one);
	parload_loader_free(three);
	free(big);
	free(path);
}
END_TEST

/* Reads no larger than --max-read, which need not be a multiple of the
 * 4 KiB blocks direct I/O reads in: 1000 and 5000 bytes. */
START_TEST(test_max_read)
{
	const parload_cache m = modes[_i];
	const size_t sizes[] = { 1000, 5000 };
	char *path = stream("maxread.raw", 20, WIDTH, HEIGHT, 0);
	parload_request r;

	parload_request_init(&r);
	r.source.path = path;
	for (int k = 0; k < TU_COUNT(sizes); k++) {
		parload_options o;
		parload_loader *l;
		parload_error err;
		char what[64];

		parload_options_init(&o);
		o.threads = 2;
		o.max_read = sizes[k];
		ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
		snprintf(what, sizeof(what), "max_read %zu", sizes[k]);
		assert_mode_loads(l, &r, m, mode_used(m, path), what);
		parload_loader_free(l);
	}
	free(path);
}
END_TEST

/* Selections: a band of rows and a crop of columns of every 7th view; a
 * band alone; sinograms of every other view. */
START_TEST(test_selection)
{
	const parload_cache m = modes[_i];
	char *path = stream("sel.raw", VIEWS, WIDTH, HEIGHT, 0);
	parload_loader *l = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_selection sel[3];
	parload_request r;

	for (int k = 0; k < 3; k++)
		parload_selection_init(&sel[k]);
	sel[0].views = (parload_slice){ 3, 140, 7 };
	sel[0].rows = (parload_slice){ 5, 30, PARLOAD_OMIT };
	sel[0].cols = (parload_slice){ 3, 290, PARLOAD_OMIT };
	sel[1].rows = (parload_slice){ 10, 20, PARLOAD_OMIT };
	sel[2].views.step = 2;
	sel[2].rows = (parload_slice){ 2, 35, PARLOAD_OMIT };
	sel[2].layout = PARLOAD_LAYOUT_SINOGRAMS;
	parload_request_init(&r);
	r.source.path = path;
	for (int k = 0; k < 3; k++) {
		char what[64];

		snprintf(what, sizeof(what), "selection %d", k);
		r.selection = &sel[k];
		assert_mode_loads(l, &r, m, mode_used(m, path), what);
	}
	parload_loader_free(l);
	free(path);
}
END_TEST

/* A batched load (window: views per window, 0 none) of path with keep
 * and with m: the same views arrive, as the serial reading has them. */
static void assert_batches(const char *path, parload_cache m, uint64_t window,
			   const char *what)
{
	parload_loader *l = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r[2];
	parload_dataset ds[2];
	parload_error err;
	parload_shape s;
	bu_got g[2];
	tu_soa ref;

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	for (int k = 0; k < 2; k++) {
		const parload_cache mode = k ? m : PARLOAD_CACHE_KEEP;

		bu_prepare(&r[k], &g[k], &s, path, NULL, 7, window);
		r[k].cache = mode;
		ck_assert_msg(bu_run(l, &r[k], &g[k], &ds[k], &err) == 0,
			      "%s, cache %s: %s", what, mode_name(mode),
			      err.message);
		assert_mode(&ds[k], mode_used(mode, path), what);
		ck_assert_uint_eq(g[k].views, VIEWS);
		bu_assert_got(&g[k], &ref, &s, VIEWS, what);
	}
	ck_assert_msg(memcmp(g[0].headers, g[1].headers, VIEWS * 32) == 0 &&
			      memcmp(g[0].pixels, g[1].pixels,
				     VIEWS * s.view_bytes) == 0,
		      "%s: the batches differ", what);
	for (int k = 0; k < 2; k++) {
		parload_dataset_free(&ds[k]);
		bu_got_free(&g[k]);
	}
	tu_soa_free(&ref);
	parload_loader_free(l);
}

START_TEST(test_batches)
{
	char *path = stream("batches.raw", VIEWS, WIDTH, HEIGHT, 0);

	assert_batches(path, modes[_i], 0, "batches of 7 views");
	free(path);
}
END_TEST

START_TEST(test_windows)
{
	char *path = stream("windows.raw", VIEWS, WIDTH, HEIGHT, 0);

	assert_batches(path, modes[_i], 11, "windows of 11 views");
	free(path);
}
END_TEST

/* A followed file (complete, so the load ends at its count). */
START_TEST(test_follow)
{
	const parload_cache m = modes[_i];
	char *path = stream("follow.raw", VIEWS, WIDTH, HEIGHT, 0);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_dataset ds;
	parload_error err;
	parload_request r;
	parload_shape s;
	bu_got g;
	tu_soa ref;

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	bu_prepare(&r, &g, &s, path, NULL, 9, 0);
	r.flags |= PARLOAD_REQ_FOLLOW;
	r.timeout = 5.0;
	r.cache = m;
	ck_assert_msg(bu_run(l, &r, &g, &ds, &err) == 0, "follow: %s",
		      err.message);
	assert_mode(&ds, mode_used(m, path), "follow");
	tu_assert_same(&ds, &ref);
	bu_assert_got(&g, &ref, &s, VIEWS, "follow");
	parload_dataset_free(&ds);
	bu_got_free(&g);
	tu_soa_free(&ref);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* Stream s loaded whole, cropped (rows 3 to r1 of every other view, from
 * column 5 to c1) and as sinograms: in mode m what keep loads, and what
 * the test's own reference holds. */
static void assert_parts(parload_loader *l, const lt_stream *s,
			 parload_cache m, uint32_t r1, uint32_t c1,
			 const char *name)
{
	const char *const parts[] = { "whole", "crop", "sinograms" };

	for (int part = 0; part < 3; part++) {
		parload_selection sel;
		parload_request r;
		parload_dataset ds;
		char what[80];
		lt_sel q;

		snprintf(what, sizeof(what), "%s, %s", name, parts[part]);
		lt_sel_part(s, part, 3, r1, 5, c1, &q);
		lt_sel_to(&q, &sel);
		lt_request(s, &r);
		r.selection = &sel;
		assert_mode_loads(l, &r, m, mode_used(m, s->paths[0]), what);
		load_as(l, &r, m, &ds, what);
		lt_assert_loaded(s, &q, &ds, false, what);
		parload_dataset_free(&ds);
	}
}

/* A raw layout of three files (an offset, view headers, gaps, the last
 * file's last gap missing), big-endian, converted in the workers: whole,
 * a crop of every other view from an odd column, and sinograms. */
START_TEST(test_raw_files)
{
	const parload_cache m = modes[_i];
	parload_loader *l = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0);
	lt_stream s;

	lt_layout(&s, 333, 50, PARLOAD_PIXEL_U16, PARLOAD_ENC_BE, 100, 24, 7,
		  20);
	s.nfiles = 3;
	s.views[1] = 13;
	s.views[2] = 9;
	s.cut_gap[2] = true;
	lt_write(&s, "rawcache");
	assert_parts(l, &s, m, 41, 300, "raw");
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* A raw layout whose views agree with their places in the dataset modulo
 * 4 KiB (offset 4096, no view headers, no gaps), which a direct load reads
 * straight into them, their heads and tails through the bounce buffer:
 * payloads of 8,200 bytes (two blocks and 8 bytes) over 3 files, whole, a
 * crop and sinograms, 1 and 3 workers; and views of 1.32 MB, more than a
 * batch, in one file. */
START_TEST(test_aligned)
{
	const parload_cache m = modes[_i];
	parload_loader *ls[2] = { tu_loader(1, PARLOAD_STRATEGY_PARALLEL, 0),
				  tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0) };
	parload_request r;
	lt_stream s, big;
	lt_sel q;

	lt_layout(&s, 100, 41, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4096, 0, 0,
		  20);
	s.nfiles = 3;
	s.views[1] = 7;
	s.views[2] = 11;
	lt_write(&s, "aligned");
	assert_parts(ls[0], &s, m, 37, 90, "aligned, 1 worker");
	assert_parts(ls[1], &s, m, 37, 90, "aligned, 3 workers");
	lt_layout(&big, 1100, 600, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 0, 0, 0,
		  3);
	lt_write(&big, "alignedbig");
	lt_sel_all(&big, &q);
	lt_request(&big, &r);
	assert_mode_loads(ls[1], &r, m, mode_used(m, big.paths[0]),
			  "aligned, views of 1.32 MB");
	{
		parload_dataset ds;

		load_as(ls[1], &r, m, &ds, "aligned, views of 1.32 MB");
		lt_assert_loaded(&big, &q, &ds, false, "aligned, 1.32 MB");
		parload_dataset_free(&ds);
	}
	parload_loader_free(ls[0]);
	parload_loader_free(ls[1]);
	lt_free(&big);
	lt_free(&s);
}
END_TEST

#ifdef PARLOAD_FAULT_INJECTION
/* Where a direct load's reads land (the seam counts the bytes reads put
 * into the caller's pixel buffer, which parload_buffers_alloc puts on a
 * 2 MiB boundary as it fills a huge page: 260 views of 8,200 bytes, 3
 * workers): a layout whose views agree with their places modulo 4 KiB
 * has all but each batch's head and tail read straight into them (the
 * bound: 9 of 10 bytes); one that does not (offset 100) none, every byte
 * through the bounce buffer; a keep load reads every pixel straight into
 * place (what the count itself is checked by). */
START_TEST(test_direct_straight)
{
	const uint64_t offsets[] = { 4096, 100 };
	parload_loader *l = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, 0);

	for (int i = 0; i < 2; i++) {
		const uint64_t bytes = 260 * 8200;
		parload_request r;
		parload_buffers b;
		parload_dataset ds;
		parload_error err;
		parload_desc d;
		uint64_t in_place;
		lt_stream s;
		lt_sel q;

		lt_layout(&s, 100, 41, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE,
			  offsets[i], 0, 0, 260);
		lt_write(&s, i ? "straight100" : "straight4096");
		lt_sel_all(&s, &q);
		lt_request(&s, &r);
		ck_assert_int_eq(parload_describe(&r.source, false, &d, &err),
				 0);
		ck_assert_int_eq(parload_buffers_alloc(&b, &d, NULL, 0, &err),
				 0);
		ck_assert_uint_eq(b.pixels_size, bytes);
		r.into = &b;
		for (int k = 0; k < 2; k++) {
			const parload_cache m = k ? PARLOAD_CACHE_DIRECT :
						    PARLOAD_CACHE_KEEP;

			parload__fault_watch(b.pixels, b.pixels_size);
			load_as(l, &r, m, &ds, "straight");
			in_place = parload__fault_watched();
			parload__fault_reset();
			assert_mode(&ds, mode_used(m, s.paths[0]), "straight");
			lt_assert_loaded(&s, &q, &ds, false, "straight");
			parload_dataset_free(&ds);
			if (mode_used(m, s.paths[0]) != PARLOAD_CACHE_DIRECT)
				ck_assert_msg(in_place == bytes, "offset %" PRIu64
					      ", %s: %" PRIu64 " of %" PRIu64
					      " bytes read into place",
					      offsets[i], mode_name(m),
					      in_place, bytes);
			else if (i == 0)
				ck_assert_msg(in_place >= bytes / 10 * 9 &&
						      in_place <= bytes,
					      "aligned, direct: %" PRIu64 " of %"
					      PRIu64 " bytes read into place",
					      in_place, bytes);
			else
				ck_assert_msg(in_place == 0,
					      "offset 100, direct: %" PRIu64
					      " bytes read into place",
					      in_place);
		}
		parload_buffers_free(&b);
		lt_free(&s);
	}
	parload_loader_free(l);
}
END_TEST

/* A direct load reads through bounce buffers advised for huge pages (a
 * device takes a read into 4 KiB pages as a segment a page, and a virtio
 * disk read so at a third of the speed): of a layout that no read takes
 * straight into place (offset 100), every pixel byte lands in memory
 * advised MADV_HUGEPAGE; with PARLOAD_OPT_NO_HUGEPAGES, none. */
START_TEST(test_direct_bounce_huge)
{
	const uint64_t bytes = 260 * 8200;
	const unsigned opts[] = { 0, PARLOAD_OPT_NO_HUGEPAGES };
	parload_request r;
	parload_dataset ds;
	lt_stream s;
	lt_sel q;

	lt_layout(&s, 100, 41, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 100, 0, 0,
		  260);
	lt_write(&s, "bouncehuge");
	lt_sel_all(&s, &q);
	lt_request(&s, &r);
	for (int i = 0; i < 2; i++) {
		parload_loader *l = tu_loader(3, PARLOAD_STRATEGY_PARALLEL,
					      opts[i]);
		uint64_t advised;

		parload__fault_reset();
		load_as(l, &r, PARLOAD_CACHE_DIRECT, &ds, "bounce");
		advised = parload__fault_advised_reads();
		lt_assert_loaded(&s, &q, &ds, false, "bounce");
		if (mode_used(PARLOAD_CACHE_DIRECT, s.paths[0]) ==
		    PARLOAD_CACHE_DIRECT) {
			ck_assert_uint_ge(ds.stats.bytes_read, bytes);
			if (i == 0)
				ck_assert_msg(advised >= bytes,
					      "%" PRIu64 " of %" PRIu64 " bytes"
					      " read into advised memory",
					      advised, bytes);
			else
				ck_assert_msg(advised == 0,
					      "no huge pages: %" PRIu64
					      " bytes read into advised memory",
					      advised);
		}
		parload_dataset_free(&ds);
		parload_loader_free(l);
	}
	lt_free(&s);
}
END_TEST

/* A direct load reads a batch ahead (aio.c): one worker reading 8 MB
 * that no read takes straight into place (offset 100), in batches of its
 * bounce buffers, hands the kernel its reads, one in flight at a time
 * (the device read slower with more on the development VM), and loads
 * what the file holds, its progress counting every byte once.  With
 * every read cut to one block (so that each queued read comes back
 * short, and the worker reads it again itself, a block a call), the
 * same.  Through Linux AIO (_i 0) and an io_uring ring (_i 1). */
START_TEST(test_direct_in_flight)
{
	parload_loader *l;
	parload_request r;
	parload_dataset ds;
	lt_stream s;
	lt_sel q;

	parload__fault_ring(_i == 1);
	l = tu_loader(1, PARLOAD_STRATEGY_PARALLEL, 0);
	lt_layout(&s, 100, 41, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 100, 0, 0,
		  1000);
	lt_write(&s, "inflight");
	lt_sel_all(&s, &q);
	lt_request(&s, &r);
	for (int cut = 0; cut < 2; cut++) {
		parload_progress pr = { 0, 0, 0 };
		long peak;

		r.progress = &pr;
		parload__fault_reset();
		if (cut)
			parload__fault_short(4096);
		load_as(l, &r, PARLOAD_CACHE_DIRECT, &ds, "in flight");
		peak = parload__fault_aio_peak();
		parload__fault_reset();
		lt_assert_loaded(&s, &q, &ds, false, "in flight");
		ck_assert_uint_eq(pr.bytes_done, pr.bytes_total);
		ck_assert_uint_gt(pr.bytes_total, 0);
		assert_mode(&ds, mode_used(PARLOAD_CACHE_DIRECT, s.paths[0]),
			    "in flight");
		if (!cut && ds.stats.cache == PARLOAD_CACHE_DIRECT)
			ck_assert_msg(peak == 1, "%ld reads in flight at most",
				      peak);
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	parload__fault_ring(false);
	lt_free(&s);
}
END_TEST

/* Reads straight into place (no view headers, offset and views of whole
 * blocks: 64 views of 128 KiB) are handed to the kernel while the one
 * before is still in flight, two at most, so that io_submit's faulting
 * in of the dataset's pages overlaps the device; every byte of the file
 * goes straight into the dataset, none through a bounce buffer.  Through
 * Linux AIO (_i 0) and an io_uring ring (_i 1). */
START_TEST(test_direct_straight_in_flight)
{
	parload_loader *l;
	parload_request r;
	parload_dataset ds;
	lt_stream s;
	lt_sel q;
	long peak;

	parload__fault_ring(_i == 1);
	l = tu_loader(1, PARLOAD_STRATEGY_PARALLEL, 0);
	lt_layout(&s, 1024, 64, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4096, 0,
		  0, 64);
	lt_write(&s, "straight");
	lt_sel_all(&s, &q);
	lt_request(&s, &r);
	parload__fault_reset();
	load_as(l, &r, PARLOAD_CACHE_DIRECT, &ds, "straight");
	peak = parload__fault_aio_peak();
	parload__fault_reset();
	lt_assert_loaded(&s, &q, &ds, false, "straight");
	if (ds.stats.cache == PARLOAD_CACHE_DIRECT) {
		ck_assert_msg(peak == 2, "%ld reads in flight at most", peak);
		ck_assert_uint_eq(ds.stats.bytes_read, 64 * 131072);
	}
	parload_dataset_free(&ds);
	parload_loader_free(l);
	parload__fault_ring(false);
	lt_free(&s);
}
END_TEST
#endif

/* parload's own format with CRCs checked: every payload checked in every
 * mode; a damaged view is found and listed (keep going), or fails the
 * load, in every mode. */
START_TEST(test_crc)
{
	const parload_cache m = modes[_i];
	const uint64_t ps = (uint64_t)WIDTH * HEIGHT * 2;
	char *path = stream("crc.raw", VIEWS, WIDTH, HEIGHT,
			    PARLOAD_FLAG_CRC32C);
	parload_loader *verify = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, PARLOAD_OPT_VERIFY_CRC);
	parload_loader *going = tu_loader(3, PARLOAD_STRATEGY_PARALLEL, PARLOAD_OPT_VERIFY_CRC |
						     PARLOAD_OPT_KEEP_GOING);
	parload_request r;
	parload_dataset ds;
	parload_error err;

	parload_request_init(&r);
	r.source.path = path;
	load_as(verify, &r, m, &ds, "CRCs");
	ck_assert_uint_eq(ds.stats.crc_checked, VIEWS);
	ck_assert_uint_eq(ds.bad_view_count, 0);
	parload_dataset_free(&ds);
	assert_mode_loads(verify, &r, m, mode_used(m, path), "CRCs");
	tu_flip(path, tu_payload_off(ps, 17) + 4001);
	ck_assert_int_eq(run_as(verify, &r, m, &ds, &err), PARLOAD_ECRC);
	ck_assert_msg(strstr(err.message, path) && err.view == 17,
		      "a bad CRC, cache %s: %s", mode_name(m), err.message);
	load_as(going, &r, m, &ds, "a bad CRC, keep going");
	ck_assert_uint_eq(ds.bad_view_count, 1);
	ck_assert_uint_eq(ds.bad_views[0], 17);
	parload_dataset_free(&ds);
	assert_mode_loads(going, &r, m, mode_used(m, path),
			  "a bad CRC, keep going");
	parload_loader_free(verify);
	parload_loader_free(going);
	free(path);
}
END_TEST

/* The caller's descriptor: direct cannot reopen it and drops; a
 * strategy other than parallel drops for direct too. */
START_TEST(test_fd_and_strategies)
{
	const parload_cache m = modes[_i];
	const parload_cache dropped = m == PARLOAD_CACHE_DIRECT ?
					      PARLOAD_CACHE_DROP :
					      mode_used(m, "");
	char *path = stream("fd.raw", 40, WIDTH, HEIGHT, 0);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	int fd = open(path, O_RDONLY);
	const int strategies[] = { PARLOAD_STRATEGY_SEQUENTIAL,
				   PARLOAD_STRATEGY_MMAP,
				   PARLOAD_STRATEGY_TWO_PASS };

	ck_assert_int_ge(fd, 0);
	parload_request_init(&r);
	r.source.fd = fd;
	r.source.name = path;
	assert_mode_loads(l, &r, m, dropped, "a caller's descriptor");
	close(fd);
	parload_loader_free(l);
	for (int k = 0; k < TU_COUNT(strategies); k++) {
		parload_options o;
		parload_error err;

		parload_options_init(&o);
		o.strategy = (parload_strategy)strategies[k];
		o.threads = 1;
		ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
		parload_request_init(&r);
		r.source.path = path;
		assert_mode_loads(l, &r, m, dropped,
				  parload_strategy_name(strategies[k]));
		parload_loader_free(l);
	}
	free(path);
}
END_TEST

/* A pipe has no page cache to spare: every mode reads it as keep. */
START_TEST(test_pipe)
{
	const parload_cache m = modes[_i];
	char *path = stream("pipe.raw", 10, 16, 8, 0);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	parload_dataset ds;
	parload_error err;
	size_t len;
	unsigned char *data = tu_read_all(path, &len);
	tu_soa ref;
	int p[2];

	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	/* 2,944 bytes: the pipe holds them all before the load begins. */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert(tu_feed(p[1], data, len));
	close(p[1]);
	parload_request_init(&r);
	r.source.fd = p[0];
	r.source.name = "pipe";
	ck_assert_msg(run_as(l, &r, m, &ds, &err) == 0, "pipe: %s",
		      err.message);
	assert_mode(&ds, PARLOAD_CACHE_KEEP, "pipe");
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	close(p[0]);
	free(data);
	tu_soa_free(&ref);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* The names, and a mode that is none of them. */
START_TEST(test_names_and_unknown)
{
	const int bad[] = { -1, 4, 99 };
	char *path = stream("names.raw", 4, 16, 8, 0);
	parload_loader *l = tu_loader(1, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request r;
	parload_dataset ds;
	parload_error err;

	for (int k = 0; k < N_MODES; k++)
		ck_assert_int_eq(parload_cache_from_name(mode_name(modes[k])),
				 modes[k]);
	ck_assert_str_eq(mode_name(PARLOAD_CACHE_DIRECT), "direct");
	ck_assert_ptr_null(parload_cache_name(4));
	ck_assert_ptr_null(parload_cache_name(-1));
	ck_assert_int_eq(parload_cache_from_name("Drop"), -1);
	ck_assert_int_eq(parload_cache_from_name(""), -1);
	ck_assert_int_eq(parload_cache_from_name(NULL), -1);
	parload_request_init(&r);
	r.source.path = path;
	ck_assert_int_eq(r.cache, PARLOAD_CACHE_KEEP);
	for (int k = 0; k < TU_COUNT(bad); k++) {
		memset(&ds, 0x5a, sizeof(ds));
		ck_assert_int_eq(run_as(l, &r, (parload_cache)bad[k], &ds,
					&err),
				 PARLOAD_EINVAL);
		ck_assert_msg(strstr(err.message, path) &&
				      strstr(err.message, "page-cache mode"),
			      "mode %d: %s", bad[k], err.message);
		ck_assert(bu_zeroed(&ds));
	}
	parload_loader_free(l);
	free(path);
}
END_TEST

/* ---- what a load leaves in the page cache (part 1) ---- */

/* The share of path's pages in the page cache, in [0, 1], counted with
 * mincore over a mapping of it; -1 if it cannot be told.  (No Check
 * assertion: the probe runs outside any test.) */
static double cached_range(const char *path, uint64_t begin, uint64_t end)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const int fd = open(path, O_RDONLY);
	const off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	const size_t pages = ((size_t)size + page - 1) / page;
	unsigned char *vec = size > 0 ? malloc(pages) : NULL;
	void *map = vec ? mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd,
			       0) : MAP_FAILED;
	double share = -1.0;

	end = end < (uint64_t)size ? end : (uint64_t)size;
	if (map != MAP_FAILED && mincore(map, (size_t)size, vec) == 0 &&
	    begin < end) {
		size_t n = 0;

		for (size_t i = begin / page; i < (end + page - 1) / page; i++)
			n += vec[i] & 1;
		share = (double)n / (double)((end + page - 1) / page -
					     begin / page);
	}
	if (map != MAP_FAILED)
		munmap(map, (size_t)size);
	if (fd >= 0)
		close(fd);
	free(vec);
	return share;
}

static double cached_share(const char *path)
{
	return cached_range(path, 0, UINT64_MAX);
}

static double resident(const char *path)
{
	const double share = cached_share(path);

	ck_assert_msg(share >= 0.0, "mincore over %s failed", path);
	return share;
}

/* Write path's pages back and ask the kernel to let go of them; 0, or -1
 * if it cannot be asked. */
static int drop_pages(const char *path)
{
	const int fd = open(path, O_RDONLY);
	int rc = fd >= 0 ? 0 : -1;

	if (rc == 0 && (fsync(fd) != 0 ||
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0))
		rc = -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

static void evict(const char *path)
{
	ck_assert_msg(drop_pages(path) == 0, "%s: fsync or posix_fadvise: %s",
		      path, strerror(errno));
}

/* A file of n bytes written and read back with plain calls; 0 or -1. */
static int probe_file(const char *path, size_t n, bool read_back)
{
	unsigned char *b = calloc(1, n);
	const int fd = b ? open(path, read_back ? O_RDONLY :
				      O_WRONLY | O_CREAT | O_TRUNC, 0600) :
			   -1;
	const ssize_t done = fd < 0 ? -1 :
			     read_back ? read(fd, b, n) : write(fd, b, n);

	if (fd >= 0)
		close(fd);
	free(b);
	return done == (ssize_t)n ? 0 : -1;
}

/* At most this share of a file is cached after a drop or direct load
 * (generous: readahead, the pages at the ends of each worker's ranges;
 * it still fails when the modes do nothing). */
#define AFTER_DROP 0.25
/* A keep load of a cold file leaves at least this share cached. */
#define AFTER_KEEP 0.90

/* Why this machine cannot tell what a load leaves in the page cache: a
 * file that cannot be evicted, or that a read does not leave cached. */
static const char *why_no_residency(void)
{
	static char why[256];
	const size_t n = (size_t)8 << 20;
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	double cold = -1.0, warm = -1.0;

	/* tu_path() asserts, which only a test may do. */
	snprintf(path, sizeof(path), "%s/parload-cache-probe-%ld",
		 tmp && *tmp ? tmp : "/tmp", (long)getpid());

	if (probe_file(path, n, false) == 0 && drop_pages(path) == 0) {
		cold = cached_share(path);
		if (probe_file(path, n, true) == 0)
			warm = cached_share(path);
	}
	unlink(path);
	if (cold < 0.0 || warm < 0.0)
		snprintf(why, sizeof(why), "a probe file in $TMPDIR could not "
			 "be written, evicted, read or counted: %s",
			 strerror(errno));
	else if (cold > 0.05)
		snprintf(why, sizeof(why), "a file on the file system of "
			 "$TMPDIR stays %.0f%% in the page cache after fsync "
			 "and POSIX_FADV_DONTNEED (tmpfs?)", 100 * cold);
	else if (warm < AFTER_KEEP)
		snprintf(why, sizeof(why), "a file read on the file system of "
			 "$TMPDIR is only %.0f%% in the page cache afterwards",
			 100 * warm);
	else
		return NULL;
	return why;
}

static double load_resident(parload_loader *l, const char *path,
			    parload_cache m, parload_cache want)
{
	parload_request r;
	parload_dataset ds;

	parload_request_init(&r);
	r.source.path = path;
	load_as(l, &r, m, &ds, path);
	assert_mode(&ds, want, mode_name(m));
	parload_dataset_free(&ds);
	return resident(path);
}

/* drop and direct (_i 0, 1), with the parallel strategy and with
 * sequential, which drops the file after the load: a keep load of the
 * cold file leaves it cached, one in mode m at most AFTER_DROP of it;
 * drop lets go of a warm file's pages too. */
START_TEST(test_resident)
{
	const parload_cache m = _i % 2 ? PARLOAD_CACHE_DIRECT :
					 PARLOAD_CACHE_DROP;
	const bool sequential = _i >= 2;
	char *path = stream("resident.raw", 400, WIDTH, 64, 0);
	parload_loader *l;
	parload_options o;
	parload_error err;
	double keep, after;
	const char *how = sequential ? "sequential" : "parallel";

	parload_options_init(&o);
	o.threads = sequential ? 1 : 3;
	o.strategy = sequential ? PARLOAD_STRATEGY_SEQUENTIAL :
				  PARLOAD_STRATEGY_PARALLEL;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	evict(path);
	keep = load_resident(l, path, PARLOAD_CACHE_KEEP, PARLOAD_CACHE_KEEP);
	ck_assert_msg(keep >= AFTER_KEEP, "%s: a keep load left %.1f%% of "
		      "the file cached", how, 100 * keep);
	evict(path);
	after = load_resident(l, path, m, sequential ? PARLOAD_CACHE_DROP :
				      mode_used(m, path));
	printf("%s, cache %s: %.1f%% of the file cached after a cold load "
	       "(keep: %.1f%%)\n", how, mode_name(m), 100 * after,
	       100 * keep);
	ck_assert_msg(after <= AFTER_DROP, "%s, cache %s: %.1f%% of the file "
		      "cached after the load", how, mode_name(m), 100 * after);
	if (m == PARLOAD_CACHE_DROP) {
		(void)load_resident(l, path, PARLOAD_CACHE_KEEP,
				    PARLOAD_CACHE_KEEP);
		after = load_resident(l, path, m, PARLOAD_CACHE_DROP);
		ck_assert_msg(after <= AFTER_DROP, "%s, drop of a warm file: "
			      "%.1f%% cached after the load", how, 100 * after);
	}
	parload_loader_free(l);
	free(path);
}
END_TEST

/* A number of KiB in sysfs file path, or 0 where there is none. */
static unsigned long long sysfs_kb(const char *path)
{
	unsigned long long kb = 0;
	FILE *in = fopen(path, "r");

	if (in && fscanf(in, "%llu", &kb) != 1)
		kb = 0;
	if (in)
		fclose(in);
	return kb;
}

/* The reach parload__readahead_reach gives a file: where
 * /sys/class/bdi names the device, twice the larger of its read_ahead_kb
 * and its queue's max_sectors_kb (a read larger than read_ahead_kb has
 * its window grown up to that), as read here. */
static void assert_reach(const parload__file *f)
{
	const uint64_t reach = parload__readahead_reach(f);
	unsigned long long ra, io;
	struct stat st;
	char bdi[64], q[80];

	ck_assert_int_eq(fstat(f->fd, &st), 0);
	snprintf(bdi, sizeof(bdi), "/sys/class/bdi/%u:%u/read_ahead_kb",
		 major(st.st_dev), minor(st.st_dev));
	snprintf(q, sizeof(q), "/sys/dev/block/%u:%u/queue/max_sectors_kb",
		 major(st.st_dev), minor(st.st_dev));
	ra = sysfs_kb(bdi);
	io = sysfs_kb(q);
	if (!io) {
		snprintf(q, sizeof(q),
			 "/sys/dev/block/%u:%u/../queue/max_sectors_kb",
			 major(st.st_dev), minor(st.st_dev));
		io = sysfs_kb(q);
	}
	printf("readahead reach of %s: %" PRIu64 " KiB (%s: %llu, "
	       "max_sectors_kb: %llu)\n", f->path, reach >> 10, bdi, ra, io);
	if (ra)
		ck_assert_uint_eq(reach, 2 * ((uint64_t)(ra > io ? ra : io)
					      << 10));
	ck_assert_uint_gt(reach, 0);
}

/* What the dropper tests share: a warm file of size bytes at path
 * (written back first: dirty pages are not let go of), opened; a drop
 * load's context holding hold bytes a worker; and a dropper started for
 * a pass of it. */
typedef struct drop_rig {
	parload__ctx c;
	parload__file f;
	parload__dropper dr;
} drop_rig;

static void drop_rig_init(drop_rig *r, const char *path, uint64_t size,
			  uint64_t hold, bool gaps)
{
	ck_assert_int_eq(probe_file(path, (size_t)size, false), 0);
	evict(path);
	ck_assert_int_eq(probe_file(path, (size_t)size, true), 0);
	ck_assert_double_ge(resident(path), AFTER_KEEP);
	memset(r, 0, sizeof(*r));
	r->c.cache = PARLOAD_CACHE_DROP;
	r->c.drop_hold = hold;
	r->f.path = path;
	r->f.fd = open(path, O_RDONLY);
	r->f.size = size;
	ck_assert_int_ge(r->f.fd, 0);
	parload__drop_init(&r->dr, &r->c, gaps);
}

/* A drop load's worker lets go of what it reads 8 MiB at a time, except
 * the first bytes, which it holds until its pass is over: the worker
 * before it in the file reads ahead into them as it ends its share, and
 * would read them from the device again.  A warm 64 MiB file fed to a
 * dropper in reads of 4 MiB with a hold of 16 MiB: the first 16 MiB stay
 * cached until parload__drop_release, each 8 MiB past them leaves once
 * read, and nothing not yet read leaves. */
START_TEST(test_drop_hold)
{
	const uint64_t mib = (uint64_t)1 << 20, size = 64 * mib,
		       hold = 16 * mib, step = 4 * mib, batch = 8 * mib;
	char *path = tu_path("hold.raw");
	drop_rig r;

	drop_rig_init(&r, path, size, hold, true);
	assert_reach(&r.f);
	for (uint64_t off = 0; off < size; off += step) {
		const uint64_t read = off + step;
		const uint64_t gone = read > hold ?
			hold + (read - hold) / batch * batch : hold;

		parload__drop_read(&r.dr, &r.f, off, step);
		ck_assert_msg(cached_range(path, 0, hold) >= AFTER_KEEP,
			      "after %" PRIu64 " MiB: the held bytes left",
			      read / mib);
		if (gone > hold)
			ck_assert_msg(cached_range(path, hold, gone) <= 0.01,
				      "after %" PRIu64 " MiB: bytes %" PRIu64
				      "-%" PRIu64 " MiB still cached",
				      read / mib, hold / mib, gone / mib);
		if (gone < size)
			ck_assert_msg(cached_range(path, gone, size) >=
					      AFTER_KEEP,
				      "after %" PRIu64 " MiB: bytes from %"
				      PRIu64 " MiB left early", read / mib,
				      gone / mib);
	}
	parload__drop_flush(&r.dr);
	ck_assert_double_ge(cached_range(path, 0, hold), AFTER_KEEP);
	ck_assert_double_le(cached_range(path, hold, size), 0.01);
	parload__drop_release(&r.dr);
	ck_assert_double_le(resident(path), 0.01);
	close(r.f.fd);
	free(path);
}
END_TEST

/* A drop load's worker lets go of what it has read between folio
 * boundaries (2 MiB): the kernel reads a file ahead into large folios,
 * which POSIX_FADV_DONTNEED lets go of only when the range holds all of
 * one, so ranges cut at views' offsets left the folio of each cut cached
 * until the load's end.  A warm 32 MiB file (read in one call, its
 * folios the kernel's choice) fed to a dropper as records of 1 MiB and
 * 32 bytes from byte 100, holding 3 MiB: once flushed, everything
 * between the held bytes' folio and the last read's is out; once
 * released, everything but the folio the last read ended in (the next
 * share's first bytes may be in it); the next pass's release lets go of
 * that one. */
START_TEST(test_drop_folios)
{
	const uint64_t mib = (uint64_t)1 << 20, size = 32 * mib,
		       folio = 2 * mib, first = 100, rec = mib + 32;
	char *path = tu_path("folios.raw");
	const uint64_t end = first + 30 * rec;
	drop_rig r;

	drop_rig_init(&r, path, size, 3 * mib, true);
	for (uint64_t off = first; off < end; off += rec)
		parload__drop_read(&r.dr, &r.f, off, rec);
	parload__drop_flush(&r.dr);
	/* Held: up to the folio boundary past 3 MiB from byte 100. */
	ck_assert_double_ge(cached_range(path, first, 4 * mib), AFTER_KEEP);
	ck_assert_msg(cached_range(path, 4 * mib, end / folio * folio) <= 0.01,
		      "%.1f%% of what was let go of still cached",
		      100 * cached_range(path, 4 * mib, end / folio * folio));
	ck_assert_double_ge(cached_range(path, end, size), AFTER_KEEP);
	parload__drop_release(&r.dr);
	ck_assert_msg(cached_range(path, 0, end / folio * folio) <= 0.01,
		      "%.1f%% of the share still cached once released",
		      100 * cached_range(path, 0, end / folio * folio));
	ck_assert_double_ge(cached_range(path, end, size), AFTER_KEEP);
	/* The next pass, which reads nothing here. */
	parload__drop_init(&r.dr, &r.c, true);
	parload__drop_release(&r.dr);
	ck_assert_msg(cached_range(path, 0, (end / folio + 1) * folio) <= 0.01,
		      "the last folio read still cached after the next pass");
	close(r.f.fd);
	free(path);
}
END_TEST

/* What a drop load's worker skips between its reads: let go of with the
 * rest, whole folios, where it is nobody's (unselected views); kept
 * where it may be another reader's (rows: another worker's band, another
 * process's rows), the worker letting go of exactly what it read.  A
 * warm 32 MiB file read as 5 MiB ranges 1 MiB apart, nothing held. */
START_TEST(test_drop_gaps)
{
	const uint64_t mib = (uint64_t)1 << 20, size = 32 * mib;
	const bool gaps = _i == 1;
	char *path = tu_path(gaps ? "gaps1.raw" : "gaps0.raw");
	drop_rig r;

	drop_rig_init(&r, path, size, 0, gaps);
	for (uint64_t k = 0; k < 5; k++)
		parload__drop_read(&r.dr, &r.f, 6 * k * mib, 5 * mib);
	parload__drop_flush(&r.dr);
	if (gaps) {
		ck_assert_msg(cached_range(path, 0, 28 * mib) <= 0.01,
			      "%.1f%% of the ranges and gaps still cached",
			      100 * cached_range(path, 0, 28 * mib));
	} else {
		for (uint64_t k = 0; k < 5; k++) {
			const uint64_t at = 6 * k * mib;

			ck_assert_msg(cached_range(path, at, at + 4 * mib) <=
					      0.01,
				      "range %" PRIu64 ": %.1f%% still cached",
				      k, 100 * cached_range(path, at,
							    at + 4 * mib));
			ck_assert_msg(cached_range(path, at + 5 * mib,
						   at + 6 * mib) >= AFTER_KEEP,
				      "gap %" PRIu64 " let go of", k);
		}
	}
	ck_assert_double_ge(cached_range(path, 30 * mib, size), AFTER_KEEP);
	close(r.f.fd);
	free(path);
}
END_TEST

/* What a drop load's workers hold is let go of when their pass is over,
 * not when the load is: in batches twice the readahead reach, 2 workers
 * (each holding the whole of its half), each batch's bytes are out of
 * the page cache when its callback runs, while the next pass reads. */
typedef struct batch_cached {
	const char *path;
	uint64_t record;
	double worst;
} batch_cached;

static int note_cached(const parload_batch *b, void *arg)
{
	batch_cached *bc = arg;
	const double share = cached_range(
		bc->path, PARLOAD_FILE_HEADER_SIZE + b->first * bc->record,
		PARLOAD_FILE_HEADER_SIZE + (b->first + b->count) * bc->record);

	bc->worst = share > bc->worst ? share : bc->worst;
	return 0;
}

START_TEST(test_drop_batches)
{
	const uint32_t w = 1024, h = 1024;
	const uint64_t view = (uint64_t)w * h * 2;
	char *path = stream("dropbatches.raw", 1, w, h, 0);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	batch_cached bc = { path, view + PARLOAD_VIEW_HEADER_SIZE, 0.0 };
	parload_request r;
	parload_dataset ds;
	parload_error err;
	uint64_t per;

	/* The reach of this file system's device, then the file. */
	per = 2 * tu_readahead_reach(path) / view;
	per = per < 2 ? 2 : per;
	tu_write_stream(path, 3 * per, w, h, PARLOAD_PIXEL_U16, 0, 3);
	evict(path);
	parload_request_init(&r);
	r.source.path = path;
	r.on_batch = note_cached;
	r.batch_arg = &bc;
	r.batch_views = per;
	ck_assert_msg(run_as(l, &r, PARLOAD_CACHE_DROP, &ds, &err) == 0, "%s",
		      err.message);
	printf("drop in batches of %" PRIu64 " views of 2 MiB: at most %.1f%% "
	       "of a batch cached when its callback ran\n", per,
	       100 * bc.worst);
	ck_assert_msg(bc.worst <= AFTER_DROP, "%.1f%% of a batch cached when "
		      "its callback ran", 100 * bc.worst);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* auto on a warm file (just read) keeps it, and it stays cached. */
START_TEST(test_auto_warm)
{
	char *path = stream("warm.raw", 400, WIDTH, 64, 0);
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	size_t len;
	unsigned char *data = tu_read_all(path, &len);
	double after;

	free(data);
	after = load_resident(l, path, PARLOAD_CACHE_AUTO, PARLOAD_CACHE_KEEP);
	ck_assert_msg(after >= AFTER_KEEP, "auto on a warm file: %.1f%% "
		      "cached after the load", 100 * after);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* Let go of pages [from, to) of path (written back already). */
static void evict_pages(const char *path, uint64_t from, uint64_t to)
{
	const struct timespec nap = { 0, 10 * 1000 * 1000 };
	int fd;

	if (from >= to)
		return; /* a length of 0 would mean to the end */
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	/* A page the kernel holds a moment longer stays: again, until none
	 * does. */
	for (int tries = 1;; tries++) {
		ck_assert_int_eq(posix_fadvise(fd, (off_t)(from * 4096),
					       (off_t)((to - from) * 4096),
					       POSIX_FADV_DONTNEED),
				 0);
		if (cached_range(path, from * 4096, to * 4096) == 0.0)
			break;
		ck_assert_msg(tries < 100, "pages %" PRIu64 "-%" PRIu64
			      " of %s stay cached", from, to, path);
		nanosleep(&nap, NULL);
	}
	close(fd);
}

/* Read pages [from, to) of path back into the page cache, with readahead
 * off so that the pages around them stay out. */
static void read_pages(const char *path, uint64_t from, uint64_t to)
{
	const size_t n = (size_t)(to - from) * 4096;
	unsigned char *b = malloc(n);
	int fd = open(path, O_RDONLY);

	ck_assert_ptr_nonnull(b);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	ck_assert_int_eq(pread(fd, b, n, (off_t)(from * 4096)), (ssize_t)n);
	close(fd);
	free(b);
}

/* Leave pages [from, to) of the pages-page file at path cached and no
 * other: read it whole, let go of the rest.  The kernel may take some of
 * the pages kept meanwhile (memory pressure: a sanitizer's build beside
 * other suites; a large folio across from or to let go of whole): those
 * are read again and the rest let go of again, a few times at most. */
static void keep_only(const char *path, uint64_t pages, uint64_t from,
		      uint64_t to, int i)
{
	ck_assert_int_eq(probe_file(path, pages * 4096, true), 0);
	for (int tries = 1;; tries++) {
		evict_pages(path, 0, from);
		evict_pages(path, to, pages);
		if (from == to ||
		    cached_range(path, from * 4096, to * 4096) == 1.0)
			return;
		ck_assert_msg(tries < 10, "case %d: pages %" PRIu64 "-%" PRIu64
			      " read %d times are not all cached", i, from, to,
			      tries);
		read_pages(path, from, to);
	}
}

/* auto's look at a file (parload__cache_resident): 64 pages spread over
 * it, or each page of a smaller one; 8 of them first, which settle a file
 * cached whole or not at all; the rest when those disagree, which gives
 * the share of a file cached in part. */
START_TEST(test_auto_samples)
{
	static const struct {
		uint64_t pages, keep_from, keep_to; /* cached: [from, to) */
		double want;
	} cases[] = {
		{ 1024, 0, 0, 0.0 },       /* cold */
		{ 1024, 0, 1024, 1.0 },    /* warm */
		{ 1024, 0, 512, 0.5 },     /* samples 0-31 of 64 */
		{ 1024, 512, 1024, 0.5 },  /* samples 32-63 */
		{ 1024, 0, 256, 0.25 },    /* 0-15 */
		{ 10, 0, 5, 0.5 },         /* each of 10 pages */
		{ 10, 0, 10, 1.0 },
		{ 1, 0, 1, 1.0 },
	};
	char *path = tu_path("samples.raw");

	for (int i = 0; i < TU_COUNT(cases); i++) {
		parload__file f;
		double got;

		memset(&f, 0, sizeof(f));
		ck_assert_int_eq(probe_file(path, cases[i].pages * 4096, false),
				 0);
		evict(path);
		keep_only(path, cases[i].pages, cases[i].keep_from,
			  cases[i].keep_to, i);
		f.fd = open(path, O_RDONLY);
		ck_assert_int_ge(f.fd, 0);
		f.size = cases[i].pages * 4096;
		got = parload__cache_resident(&f);
		close(f.fd);
		ck_assert_msg(got == cases[i].want, "case %d: %g of the samples "
			      "cached, want %g", i, got, cases[i].want);
	}
	free(path);
}
END_TEST

static Suite *modes_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *t = tu_tcase(s, "every mode loads what keep loads", 60);

	tcase_add_loop_test(t, test_whole, 0, N_MODES);
	tcase_add_loop_test(t, test_max_read, 0, N_MODES);
	tcase_add_loop_test(t, test_selection, 0, N_MODES);
	tcase_add_loop_test(t, test_batches, 0, N_MODES);
	tcase_add_loop_test(t, test_windows, 0, N_MODES);
	tcase_add_loop_test(t, test_follow, 0, N_MODES);
	tcase_add_loop_test(t, test_raw_files, 0, N_MODES);
	tcase_add_loop_test(t, test_aligned, 0, N_MODES);
#ifdef PARLOAD_FAULT_INJECTION
	tcase_add_test(t, test_direct_straight);
	tcase_add_test(t, test_direct_bounce_huge);
	tcase_add_loop_test(t, test_direct_in_flight, 0, 2);
	tcase_add_loop_test(t, test_direct_straight_in_flight, 0, 2);
#endif
	tcase_add_loop_test(t, test_crc, 0, N_MODES);
	tcase_add_loop_test(t, test_fd_and_strategies, 0, N_MODES);
	tcase_add_loop_test(t, test_pipe, 0, N_MODES);
	tcase_add_test(t, test_names_and_unknown);
	return s;
}

static Suite *resident_suite(void)
{
	Suite *s = suite_create("cache_resident");
	TCase *t = tu_tcase(s, "the page cache after a load", 60);

	tcase_add_loop_test(t, test_resident, 0, 4);
	tcase_add_test(t, test_drop_hold);
	tcase_add_test(t, test_drop_folios);
	tcase_add_loop_test(t, test_drop_gaps, 0, 2);
	tcase_add_test(t, test_drop_batches);
	tcase_add_test(t, test_auto_warm);
	return s;
}

/* Valgrind reads the first bytes of every file mapped (for an ELF
 * header), and the kernel reads ahead with them: the probe's own mapping
 * would bring back what the test let go of. */
static const char *why_no_samples(void)
{
	if (tu_under_valgrind())
		return "under valgrind, which reads the first bytes of every "
		       "file mapped (the probe maps the file), so a file's "
		       "first sampled page cannot be kept out of the page "
		       "cache";
	return why_no_residency();
}

static Suite *samples_suite(void)
{
	Suite *s = suite_create("cache_samples");
	TCase *t = tu_tcase(s, "auto's sample of the page cache", 60);

	tcase_add_test(t, test_auto_samples);
	return s;
}

static const tu_part parts[] = {
	{ "check_cache", NULL, modes_suite },
	{ "check_cache_resident", why_no_residency, resident_suite },
	{ "check_cache_samples", why_no_samples, samples_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
