/*
 * check_faults.c - every system and allocation call the loader and the
 * writer make, failed in turn (check_retry: calls interrupted, cut short
 * or failing at an offset).
 *
 * Built against the fault-injection seam (./configure
 * --enable-fault-injection, tests/fault/fault.h); in a normal build it skips.
 *
 * The walks fail the 1st, 2nd, ... N-th call of a load until a load runs
 * without reaching the N-th call, as SQLite's tests do: for every strategy
 * and I/O API (with a loader made beforehand, and through parload_load(),
 * which makes the loader, its topology and its threads too), for the
 * workers' binding, for loads from a descriptor and from a pipe, with CRCs
 * checked past a bad view, for a raw layout over three files (byte-swapped
 * and packed, and views read with O_DIRECT straight into their places;
 * whole and selections), for loads that drop what they read,
 * read with O_DIRECT or choose (the page-cache modes), for the
 * writer, and for a Zarr store saved new or replacing one.  After each
 * injected
 * failure:
 *  - the call returns the code that failure means (never success, except
 *    for best-effort calls, and then the data must be exact);
 *  - the dataset is zeroed and owns nothing;
 *  - every descriptor, stream, heap block, mapping, thread, lock,
 *    topology and bitmap the library took is given back (the seam counts
 *    them), and the process has as many threads and open descriptors as
 *    before (/proc/self/task, /proc/self/fd);
 *  - the same loader then loads the file byte for byte as the serial
 *    reference reads it.
 */
#include "config.h"

#include "faults.h"
#include "layouts.h"

#ifdef PARLOAD_FAULT_INJECTION

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* The N-th call fails, for every N, on a loader made beforehand; the
 * loader then loads the file exactly. */
START_TEST(test_walk_load)
{
	const ft_config *c = &ft_configs[_i];
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "walk.raw", &ref);
	uint64_t calls, n;
	char what[160];
	ft_tally t = { { 0 }, "" };
	int rc;

	ft_options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ft_warm_up(l, path, &ref);
	parload__fault_reset();
	ft_assert_loads_exactly(l, path, &ref, c->name);
	calls = parload__fault_calls();
	ck_assert_uint_gt(calls, 3);
	ft_snap(&base);

	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "%s, call %" PRIu64, c->name, n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = ft_load(l, path, &ds, &err);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		ft_check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		ft_assert_as_before(&base, what);
		ft_assert_loads_exactly(l, path, &ref, what);
		ft_assert_as_before(&base, what);
	}
	/* Every call of a clean load was failed once. */
	ck_assert_uint_eq(n - 1, calls);
	printf("walk load, %s: %" PRIu64 " faults (%s)\n", c->name, n - 1,
	       ft_tally_text(&t));
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A file of a format that describes itself (its driver, driver.h):
 * 0 a NumPy .npy, 1 a NRRD attached header, 2 a detached one and its
 * data file.  2 views of 3 x 4 u16. */
/* The 2 views of 3 x 4 u16 pixels k * 3 + 1 as a Zarr store: v2 of
 * chunks of 2 rows (kind 3: a partial edge chunk) or v3 of one shard of
 * both views, its index at the end with its CRC-32C (kind 4). */
static char *zarr_store(int kind)
{
	static const char v2[] =
		"{\"zarr_format\": 2, \"shape\": [2, 3, 4], \"chunks\": "
		"[1, 2, 4], \"dtype\": \"<u2\", \"compressor\": null, "
		"\"fill_value\": 0, \"order\": \"C\", \"filters\": null}";
	static const char v3[] =
		"{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": "
		"[2, 3, 4], \"data_type\": \"uint16\", \"chunk_grid\": "
		"{\"name\": \"regular\", \"configuration\": {\"chunk_shape\": "
		"[2, 3, 4]}}, \"chunk_key_encoding\": {\"name\": \"default\"}, "
		"\"fill_value\": 0, \"attributes\": {\"angles\": [0, 90]}, "
		"\"codecs\": [{\"name\": \"sharding_indexed\", "
		"\"configuration\": {\"chunk_shape\": [1, 3, 4], \"codecs\": "
		"[{\"name\": \"bytes\", \"configuration\": {\"endian\": "
		"\"little\"}}], \"index_codecs\": [{\"name\": \"bytes\", "
		"\"configuration\": {\"endian\": \"little\"}}, {\"name\": "
		"\"crc32c\"}], \"index_location\": \"end\"}}]}";
	char *path = tu_path(kind == 3 ? "walk2.zarr" : "walk3.zarr");
	unsigned char b[48 + 36] = { 0 };
	char name[4200], cmd[4300];
	uint32_t crc;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/c/0/0'", path,
		 path);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(name, sizeof(name), "%s/%s", path,
		 kind == 3 ? ".zarray" : "zarr.json");
	tu_write_file(name, kind == 3 ? v2 : v3,
		      strlen(kind == 3 ? v2 : v3));
	for (unsigned k = 0; k < 24; k++)
		b[2 * k] = (unsigned char)(k * 3 + 1);
	if (kind == 3) {
		for (unsigned v = 0; v < 2; v++)
			for (unsigned j = 0; j < 2; j++) {
				unsigned char c[16] = { 0 };

				memcpy(c, b + v * 24 + j * 16, j ? 8 : 16);
				snprintf(name, sizeof(name), "%s/%u.%u.0",
					 path, v, j);
				tu_write_file(name, c, 16);
			}
		return path;
	}
	for (unsigned i = 0; i < 2; i++) /* (offset, bytes) of each view */
		for (unsigned k = 0; k < 8; k++) {
			b[48 + 16 * i + k] =
				(unsigned char)((uint64_t)24 * i >> (8 * k));
			b[48 + 16 * i + 8 + k] =
				(unsigned char)((uint64_t)24 >> (8 * k));
		}
	crc = parload_crc32c(0, b + 48, 32);
	for (unsigned k = 0; k < 4; k++)
		b[80 + k] = (unsigned char)(crc >> (8 * k));
	snprintf(name, sizeof(name), "%s/c/0/0/0", path);
	tu_write_file(name, b, sizeof(b));
	return path;
}

static char *described_file(int kind)
{
	static const char *const heads[] = {
		"\x93NUMPY\x01_\x76_{'descr': '<u2', "
		"'fortran_order': False, 'shape': (2, 3, 4), }",
		"NRRD0004\ntype: uint16\ndimension: 3\nsizes: 4 3 2\n"
		"endian: little\nencoding: raw\n\n",
		"NRRD0004\ntype: uint16\ndimension: 3\nsizes: 4 3 2\n"
		"endian: little\nencoding: raw\ndata file: walk.dat\n",
	};
	static const char *const names[] = { "walk.npy", "walk.nrrd",
					     "walk.nhdr" };
	unsigned char b[256] = { 0 };
	size_t n;
	char *path, *data;

	if (kind >= 3)
		return zarr_store(kind);
	n = strlen(heads[kind]);
	path = tu_path(names[kind]);

	memcpy(b, heads[kind], n);
	if (kind == 0) { /* NumPy pads its header to 64 bytes: 128 */
		b[7] = b[9] = 0;
		memset(b + n, ' ', 127 - n);
		b[127] = '\n';
		n = 128;
	}
	if (kind == 2) {
		tu_write_file(path, b, n);
		data = tu_path("walk.dat");
		n = 0;
	} else {
		data = path;
	}
	for (unsigned k = 0; k < 24; k++) {
		b[n + 2 * k] = (unsigned char)(k * 3 + 1);
		b[n + 2 * k + 1] = 0;
	}
	tu_write_file(data, b, n + 48);
	if (data != path)
		free(data);
	return path;
}

/* The pixels of a described file, as written. */
static void assert_described(const parload_dataset *ds, const char *what)
{
	const uint16_t *px = ds->pixels;

	ck_assert_msg(ds->shape.views == 2, "%s: %" PRIu64 " views", what,
		      ds->shape.views);
	for (unsigned k = 0; k < 24; k++)
		ck_assert_msg(px[k] == k * 3 + 1, "%s: pixel %u", what, k);
}

/* Every call of a clean load of such a file (a .npy, a NRRD header
 * attached and detached, a Zarr store v2 and v3 sharded) failed in turn:
 * the load
 * fails as the fault says and leaves nothing behind, or (a best-effort
 * call) loads it exactly; the loader then loads it exactly. */
START_TEST(test_walk_described)
{
	char *path = described_file(_i);
	parload_loader *l = tu_loader(2, 0, 0);
	parload_dataset ds;
	parload_error err;
	ft_snapshot base;
	uint64_t calls, n;
	char what[160];
	int rc, k;

	ck_assert_msg(ft_load(l, path, &ds, &err) == 0, "%s", err.message);
	parload_dataset_free(&ds);
	parload__fault_reset();
	ck_assert_int_eq(ft_load(l, path, &ds, &err), 0);
	parload_dataset_free(&ds);
	calls = parload__fault_calls();
	ft_snap(&base);
	for (n = 1;; n++) {
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = ft_load(l, path, &ds, &err);
		k = parload__fault_fired();
		snprintf(what, sizeof(what), "%s, call %" PRIu64 " (%s)", path,
			 n, k < 0 ? "none" : parload__fault_kind_name(k));
		parload__fault_reset();
		if (k < 0 || rc == 0) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			assert_described(&ds, what);
			parload_dataset_free(&ds);
		} else {
			ck_assert_msg(rc < 0 && err.code == rc &&
					      ft_all_zero(&ds, sizeof(ds)),
				      "%s: %d %s", what, rc, err.message);
		}
		if (k < 0)
			break;
		ft_assert_as_before(&base, what);
		ck_assert_int_eq(ft_load(l, path, &ds, &err), 0);
		assert_described(&ds, what);
		parload_dataset_free(&ds);
	}
	ck_assert_uint_eq(n - 1, calls);
	printf("walk %s: %" PRIu64 " faults\n", path, n - 1);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* A selection (a band of rows and a crop of columns in view layout; every
 * other view as sinograms, read or copied from the file mapped) under a
 * fault at every call, with 1 to 3 workers: the result equals a clean
 * load of the same selection, or the load fails as the fault says and
 * leaves nothing behind (a mapping refused, or a file whose size cannot
 * be checked: the batch is read). */
START_TEST(test_walk_selection)
{
	const unsigned threads = 1 + (unsigned)(_i % 3);
	const int layout = _i / 3 ? 1 : 0;
	const bool mapped = _i / 3 == 2;
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds, want;
	parload_selection sel;
	ft_snapshot base;
	ft_config c;
	tu_soa ref;
	char *path = ft_stream("walksel.raw", &ref);
	char what[160];
	uint64_t n, calls, hb, pb;
	int rc;

	memset(&c, 0, sizeof(c));
	c.m = tu_matrix(0); /* parallel */
	c.flags = mapped ? PARLOAD_OPT_MAP_SINOGRAMS : 0;
	parload_options_init(&o);
	o.threads = threads;
	o.flags = c.flags;
	parload_selection_init(&sel);
	sel.rows.start = 3;
	sel.rows.stop = 30;
	if (layout) {
		sel.views.step = 2;
		sel.layout = PARLOAD_LAYOUT_SINOGRAMS;
	} else {
		sel.cols.start = 2;
		sel.cols.stop = -3;
	}
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ck_assert_int_eq(tu_load(l, path, &sel, NULL, &want,
						    &err), 0);
	hb = want.shape.views * 32;
	pb = want.shape.views * want.shape.view_bytes;
	parload__fault_reset();
	ck_assert_int_eq(tu_load(l, path, &sel, NULL, &ds,
						    &err), 0);
	parload_dataset_free(&ds);
	calls = parload__fault_calls();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "selection %d%s, %u threads, "
			 "call %" PRIu64, layout, mapped ? " mapped" : "",
			 threads, n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		memset(&ds, 0x5a, sizeof(ds));
		rc = tu_load(l, path, &sel, NULL, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		if (rc == 0) {
			ck_assert_msg(k < 0 || ft_may_succeed(&c, k), "%s: "
				      "succeeded past a fault", what);
			ck_assert_int_eq(memcmp(ds.headers, want.headers, hb), 0);
			ck_assert_int_eq(memcmp(ds.pixels, want.pixels, pb), 0);
			parload_dataset_free(&ds);
		} else {
			ft_assert_failure(what, k, rc, &err, path, false);
			ck_assert_msg(ft_all_zero(&ds, sizeof(ds)),
				      "%s: dataset not zeroed", what);
		}
		ft_assert_as_before(&base, what);
		if (k < 0)
			break;
	}
	ck_assert_uint_eq(n - 1, calls);
	printf("walk selection %d%s, %u threads: %" PRIu64 " faults\n",
	       layout, mapped ? " mapped" : "", threads, n - 1);
	parload_dataset_free(&want);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* The same over the whole life of a loader: parload_load() makes the
 * loader (topology, pool, threads), loads and frees it. */
START_TEST(test_walk_lifecycle)
{
	const ft_config *c = &ft_configs[_i];
	parload_options o;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "life.raw", &ref);
	uint64_t calls, n;
	char what[160];
	ft_tally t = { { 0 }, "" };
	int rc;

	ft_options(&o, c);
	o.error = &err;
	/* Workers bind themselves as they start, while parload_load() goes
	 * on: their calls would fall anywhere among its calls, and a walk
	 * over N could miss a call.  test_walk_bind walks those. */
	o.flags |= PARLOAD_OPT_NO_BIND;
	/* A clean load first: a runtime that starts a thread of its own
	 * with the process's first thread (ThreadSanitizer does) has then
	 * done so.  Then one to count the calls. */
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	parload_dataset_free(&ds);
	parload__fault_reset();
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	parload_dataset_free(&ds);
	calls = parload__fault_calls();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "parload_load, %s, call %" PRIu64,
			 c->name, n);
		memset(&err, 0, sizeof(err));
		memset(&ds, 0x5a, sizeof(ds));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = parload_load(path, &o, &ds);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		if (rc == 0) {
			ft_check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		} else {
			/* Making the loader fails without naming a file. */
			ft_assert_failure(what, k, rc, &err, NULL, false);
			ck_assert_msg(ft_all_zero(&ds, sizeof(ds)),
				      "%s: dataset not zeroed", what);
		}
		ft_assert_as_before(&base, what);
	}
	ck_assert_uint_eq(n - 1, calls);
	printf("walk parload_load, %s: %" PRIu64 " faults (%s)\n", c->name,
	       n - 1, ft_tally_text(&t));
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Binding, which the pool's workers do as they start: the N-th call
 * among the binding calls fails (the process binding's bitmap in the
 * topology, then each worker's bitmap and binding, in whatever order the
 * workers run).  Only the first may fail the loader; a worker that cannot
 * bind runs unbound. */
START_TEST(test_walk_bind)
{
	const uint64_t mask = PARLOAD__FK_BIT(BITMAP_ALLOC) |
			      PARLOAD__FK_BIT(GET_CPUBIND) |
			      PARLOAD__FK_BIT(SET_CPUBIND) |
			      PARLOAD__FK_BIT(SET_MEMBIND);
	parload_options o;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	const ft_config *bind = ft_config_of(tu_parallel(3));
	char *path = ft_stream("bind.raw", &ref);
	ft_tally t = { { 0 }, "" };
	uint64_t n;
	int rc;

	ft_options(&o, bind);
	/* Placement is asked for: a one-node machine binds nothing otherwise. */
	o.core_offset = 1;
	o.error = &err;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	parload_dataset_free(&ds);
	ft_snap(&base);
	for (n = 1;; n++) {
		char what[160];
		int k;

		parload__fault_fail_nth(n, mask, 0);
		rc = parload_load(path, &o, &ds);
		snprintf(what, sizeof(what), "binding, call %" PRIu64, n);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		snprintf(what, sizeof(what), "binding, call %" PRIu64 " (%s)",
			 n, parload__fault_kind_name(k));
		if (rc == 0) {
			ft_assert_same(&ds, &ref);
			parload_dataset_free(&ds);
		} else {
			ck_assert_msg(n == 1 && rc == PARLOAD_ENOMEM,
				      "%s: %s", what, err.message);
		}
		ft_assert_as_before(&base, what);
	}
	/* The topology's bitmap and get_cpubind, then two calls per
	 * worker. */
	ck_assert_uint_ge(n - 1, 2 + 2 * 3);
	printf("walk binding, %s: %" PRIu64 " faults (%s)\n", bind->name,
	       n - 1, ft_tally_text(&t));
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- the page-cache modes ---- */

/* A load of path in page-cache mode m into a dataset full of garbage. */
static int load_cached(parload_loader *l, const char *path, parload_cache m,
		       parload_dataset *ds, parload_error *err)
{
	parload_request r;

	memset(ds, 0x5a, sizeof(*ds));
	memset(err, 0, sizeof(*err));
	parload_request_init(&r);
	r.source.path = path;
	r.cache = m;
	return parload_loader_run(l, &r, ds, err);
}

/* A load in mode m that succeeded: the file's bytes, in mode want. */
static void assert_cached_load(int rc, parload_dataset *ds,
			       const parload_error *err, const tu_soa *ref,
			       parload_cache want, const char *what)
{
	ck_assert_msg(rc == 0, "%s: %s", what, err->message);
	ft_assert_same(ds, ref);
	ck_assert_msg(ds->stats.cache == want, "%s: stats.cache %s, want %s",
		      what, parload_cache_name(ds->stats.cache),
		      parload_cache_name(want));
	parload_dataset_free(ds);
}

/* The calls of the kinds in mask that count loads of path in mode m
 * make, each of which must load exactly. */
static uint64_t mode_calls(parload_loader *l, const char *path,
			   const tu_soa *ref, parload_cache m, uint64_t mask,
			   int count, const char *what)
{
	uint64_t n;

	parload__fault_reset();
	/* Nothing fails; the calls are counted. */
	parload__fault_fail_nth(0, mask, 0);
	for (int i = 0; i < count; i++) {
		parload_dataset ds;
		parload_error err;
		const int rc = load_cached(l, path, m, &ds, &err);

		assert_cached_load(rc, &ds, &err, ref, m, what);
	}
	n = parload__fault_calls();
	parload__fault_reset();
	return n;
}

/* A drop load's read calls (pread and preadv) and posix_fadvise calls. */
typedef struct drop_calls {
	uint64_t reads, fadvises;
} drop_calls;

static drop_calls drop_load(parload_loader *l, const char *path,
			    const tu_soa *ref, const char *what)
{
	return (drop_calls){
		mode_calls(l, path, ref, PARLOAD_CACHE_DROP,
			   PARLOAD__FK_BIT(PREAD) | PARLOAD__FK_BIT(PREADV), 1,
			   what),
		mode_calls(l, path, ref, PARLOAD_CACHE_DROP,
			   PARLOAD__FK_BIT(FADVISE), 1, what)
	};
}

/* How a drop load lets go of what it reads: 48 MiB of 2 MiB views, 2
 * workers, 8 MiB reads.  Each worker holds the first `reach` bytes of
 * its 24 MiB (parload__readahead_reach: 16 MiB here) and lets go of them
 * in one call when the pass is over; it lets go of the rest itself as it
 * reads it, a call for every 8 MiB or more; the load lets go of the
 * whole file when it ends.  So there are at least 1 + 2 x (1 +
 * ceil((24 MiB - reach) / 16 MiB)) posix_fadvise calls, and no more
 * reads than a keep load makes. */
START_TEST(test_drop_fadvise)
{
	char *path = tu_path("dropfadvise.raw");
	parload_options o;
	parload_loader *l;
	parload_error err;
	tu_soa ref;
	drop_calls drop;
	uint64_t keep_reads, reach, own, calls;
	parload_dataset ds;

	tu_write_stream(path, 24, 1024, 1024, PARLOAD_PIXEL_U16, 0, 7);
	reach = tu_readahead_reach(path);
	own = (uint64_t)24 << 20;
	calls = 1 + (own > reach ? (own - reach + (16 << 20) - 1) /
					   (16 << 20) :
				   0);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_options_init(&o);
	o.threads = 2;
	o.strategy = PARLOAD_STRATEGY_PARALLEL;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	drop = drop_load(l, path, &ref, "drop");
	parload__fault_fail_nth(0, PARLOAD__FK_BIT(PREAD) |
				   PARLOAD__FK_BIT(PREADV), 0);
	ck_assert_int_eq(load_cached(l, path, PARLOAD_CACHE_KEEP, &ds, &err),
			 0);
	keep_reads = parload__fault_calls();
	parload__fault_reset();
	assert_cached_load(0, &ds, &err, &ref, PARLOAD_CACHE_KEEP, "keep");
	printf("drop of 48 MiB: %" PRIu64 " reads (keep: %" PRIu64 "), %"
	       PRIu64 " posix_fadvise calls (reach %" PRIu64 " KiB)\n",
	       drop.reads, keep_reads, drop.fadvises, reach >> 10);
	ck_assert_uint_ge(drop.fadvises, 1 + 2 * calls);
	ck_assert_uint_eq(drop.reads, keep_reads);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* drop, direct and auto (_i 0, 1, 2) on the parallel loader, 3 workers:
 * the N-th call fails, for every N.  posix_fadvise (drop) and mincore
 * (auto) are best effort: their failure still loads the file exactly;
 * so does auto's mapping of the file to look at its pages.  Direct's
 * second open refused with EINVAL (a file system without O_DIRECT)
 * loads with drop. */
START_TEST(test_walk_cache)
{
	const parload_cache m = _i == 0 ? PARLOAD_CACHE_DROP :
				_i == 1 ? PARLOAD_CACHE_DIRECT :
					  PARLOAD_CACHE_AUTO;
	const parload_cache want = m == PARLOAD_CACHE_AUTO ? PARLOAD_CACHE_KEEP :
							     m;
	const ft_config *c = ft_config_of(tu_parallel(3));
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream("walkcache.raw", &ref);
	ft_tally t = { { 0 }, "" };
	uint64_t calls, n;
	char what[160];
	int rc;

	ft_options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ft_warm_up(l, path, &ref);
	/* The mode's first load: direct opens the workers' queues, which
	 * the loader keeps (test_direct_queues walks their opening). */
	rc = load_cached(l, path, m, &ds, &err);
	assert_cached_load(rc, &ds, &err, &ref, want, "first load");
	parload__fault_reset();
	rc = load_cached(l, path, m, &ds, &err);
	calls = parload__fault_calls();
	assert_cached_load(rc, &ds, &err, &ref, want, "clean load");
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "cache %s, call %" PRIu64,
			 parload_cache_name(m), n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = load_cached(l, path, m, &ds, &err);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		if (rc == 0 && m == PARLOAD_CACHE_AUTO && k == PARLOAD__FK_MMAP)
			assert_cached_load(rc, &ds, &err, &ref, want, what);
		else
			ft_check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		ft_assert_as_before(&base, what);
		ft_assert_loads_exactly(l, path, &ref, what);
		ft_assert_as_before(&base, what);
	}
	ck_assert_uint_eq(n - 1, calls);
	if (m == PARLOAD_CACHE_DROP)
		ck_assert_msg(t.n[PARLOAD__FK_FADVISE] > 0, "drop: no "
			      "posix_fadvise walked (%s)", ft_tally_text(&t));
	/* Reads of 1,000 bytes of a file far smaller than a folio (2 MiB):
	 * what each worker read lies in the folio its share ends in, which
	 * it keeps (the next share's bytes may be in it), so the load's
	 * one call is the file's, when it ends. */
	if (m == PARLOAD_CACHE_DROP)
		ck_assert_uint_eq(drop_load(l, path, &ref,
					    "drop, small reads").fadvises, 1);
	if (m == PARLOAD_CACHE_AUTO)
		ck_assert_msg(t.n[PARLOAD__FK_MINCORE] > 0, "auto: no mincore "
			      "walked (%s)", ft_tally_text(&t));
	printf("walk cache %s: %" PRIu64 " faults (%s)\n",
	       parload_cache_name(m), n - 1, ft_tally_text(&t));
	if (m == PARLOAD_CACHE_DIRECT) {
		/* The source's open, then the O_DIRECT one. */
		parload__fault_fail_nth(2, PARLOAD__FK_BIT(OPEN), EINVAL);
		rc = load_cached(l, path, m, &ds, &err);
		ck_assert_int_eq(parload__fault_fired(), PARLOAD__FK_OPEN);
		parload__fault_reset();
		assert_cached_load(rc, &ds, &err, &ref, PARLOAD_CACHE_DROP,
				   "O_DIRECT refused");
		ft_assert_as_before(&base, "O_DIRECT refused");
	}
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Direct reads in flight (aio.c), 3 workers, through Linux AIO (_i 0)
 * and io_uring (_i 1).  The call that waits for reads (io_getevents,
 * io_uring_enter) failing at its first call, then its second, and so on,
 * fails the load with PARLOAD_EIO naming the file, the dataset zeroed and
 * nothing left behind (the reads still in flight are waited for before
 * their buffers go); io_uring_enter also hands the reads over, and a read
 * it refuses is read synchronously, the load exact.  Interrupted (EINTR)
 * at any one call, the load is exact.  A device error at byte 8,192 fails
 * it naming that offset and the view there, whichever queued read met it
 * (each is read again by its worker, which meets the error itself). */
START_TEST(test_direct_in_flight_faults)
{
	const ft_config *c = ft_config_of(tu_parallel(3));
	const bool ring = _i == 1;
	const uint64_t waits = ring ? PARLOAD__FK_BIT(IO_URING_ENTER)
				    : PARLOAD__FK_BIT(IO_GETEVENTS);
	const char *call = ring ? "io_uring_enter" : "io_getevents";
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream("inflight.raw", &ref);
	char what[160];
	uint64_t n, exact = 0;
	int rc;

	parload__fault_ring(ring);
	ft_options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ft_warm_up(l, path, &ref);
	/* The workers' queues, opened once and kept by the loader. */
	rc = load_cached(l, path, PARLOAD_CACHE_DIRECT, &ds, &err);
	assert_cached_load(rc, &ds, &err, &ref, PARLOAD_CACHE_DIRECT,
			   "first direct load");
	parload__fault_reset();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "%s, call %" PRIu64, call, n);
		parload__fault_fail_nth(n, waits, 0);
		rc = load_cached(l, path, PARLOAD_CACHE_DIRECT, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		if (k < 0 || (ring && rc == 0)) {
			assert_cached_load(rc, &ds, &err, &ref,
					   PARLOAD_CACHE_DIRECT, what);
			if (k < 0)
				break;
			exact++;
			continue;
		}
		ft_assert_failure(what, k, rc, &err, path, false);
		ck_assert_msg(ft_all_zero(&ds, sizeof(ds)),
			      "%s: the dataset was not zeroed", what);
		ft_assert_as_before(&base, what);
	}
	ck_assert_msg(n > 1, "no %s: no direct read was in flight", call);
	/* The first call of each load hands its first read over. */
	ck_assert(!ring || exact >= 1);
	printf("walk %s, direct: %" PRIu64 " faults (%" PRIu64
	       " reads refused, read synchronously)\n", call, n - 1, exact);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "%s, EINTR at call %" PRIu64,
			 call, n);
		parload__fault_fail_nth(n, waits, EINTR);
		rc = load_cached(l, path, PARLOAD_CACHE_DIRECT, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		assert_cached_load(rc, &ds, &err, &ref, PARLOAD_CACHE_DIRECT,
				   what);
		if (k < 0)
			break;
	}
	parload__fault_eio_at(8192);
	rc = load_cached(l, path, PARLOAD_CACHE_DIRECT, &ds, &err);
	parload__fault_reset();
	ck_assert_msg(rc == PARLOAD_EIO, "device error at 8192: %s (%s)",
		      parload_err_name(rc), err.message);
	ck_assert_uint_eq(err.offset, 8192);
	ck_assert_uint_ne(err.view, PARLOAD_NONE);
	ck_assert_msg(strstr(err.message, path), "%s", err.message);
	ck_assert(ft_all_zero(&ds, sizeof(ds)));
	ft_assert_as_before(&base, "device error");
	parload_loader_free(l);
	parload__fault_ring(false);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A loader's workers open their direct-read queues on its first direct
 * load and keep them, each with nothing in flight, until the loader is
 * freed: later direct loads make none (io_destroy waits two RCU grace
 * periods, 30-40 ms, which a load paid per pass).  Where the kernel
 * gives no ring (_i 0, Linux AIO), a context the kernel will not make, at
 * any worker, leaves that worker reading synchronously for the load,
 * exactly, and the next load opens it.  Where it gives rings (_i 1), a
 * ring refused at any worker leaves that worker with an AIO context
 * instead, kept as a ring is, and the load is exact. */
START_TEST(test_direct_queues)
{
	const ft_config *c = ft_config_of(tu_parallel(3));
	const bool ring = _i == 1;
	const uint64_t setups = ring ? PARLOAD__FK_BIT(IO_URING_SETUP)
				     : PARLOAD__FK_BIT(IO_SETUP);
	const int kind = ring ? PARLOAD__FK_IO_URING_SETUP
			      : PARLOAD__FK_IO_SETUP;
	parload_options o;
	parload_loader *l;
	parload_error err;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream("queues.raw", &ref);
	const long before = parload__fault_live(PARLOAD__FR_AIO);
	char what[160];
	uint64_t k;

	parload__fault_ring(ring);
	ft_options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ft_warm_up(l, path, &ref);
	/* One queue a worker with a share of the file (two at least). */
	k = mode_calls(l, path, &ref, PARLOAD_CACHE_DIRECT, setups, 1,
		       "first");
	ck_assert_uint_ge(k, 2);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_AIO),
			 before + (long)k);
	ft_snap(&base);
	ck_assert_uint_eq(mode_calls(l, path, &ref, PARLOAD_CACHE_DIRECT,
				     setups, 3, "again"),
			  0);
	ft_assert_as_before(&base, "three more direct loads");
	parload_loader_free(l);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_AIO), before);

	for (uint64_t n = 1; n <= k; n++) {
		parload_dataset ds;
		int rc;

		snprintf(what, sizeof(what), "%s %" PRIu64 " refused",
			 parload__fault_kind_name(kind), n);
		ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
		ft_warm_up(l, path, &ref);
		parload__fault_reset();
		parload__fault_fail_nth(n, setups, 0);
		rc = load_cached(l, path, PARLOAD_CACHE_DIRECT, &ds, &err);
		ck_assert_int_eq(parload__fault_fired(), kind);
		parload__fault_reset();
		assert_cached_load(rc, &ds, &err, &ref, PARLOAD_CACHE_DIRECT,
				   what);
		/* A refused ring: an AIO context in its place. */
		ck_assert_int_eq(parload__fault_live(PARLOAD__FR_AIO),
				 before + (long)k - !ring);
		ck_assert_uint_eq(mode_calls(l, path, &ref,
					     PARLOAD_CACHE_DIRECT, setups, 1,
					     what),
				  !ring);
		ck_assert_int_eq(parload__fault_live(PARLOAD__FR_AIO),
				 before + (long)k);
		parload_loader_free(l);
	}
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_AIO), before);
	parload__fault_ring(false);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- loads from a descriptor ---- */

/* The configurations the descriptor walks use: the parallel loader, the
 * buffered single-threaded readers and mmap. */
static const ft_config *fd_config(int i)
{
	switch (i) {
	case 0:
		return ft_config_of(tu_parallel(3));
	case 1:
		return ft_config_of(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
						PARLOAD_IO_POSIX, 512));
	case 2:
		return ft_config_of(tu_matrix_find(PARLOAD_STRATEGY_TWO_PASS, 0,
						PARLOAD_IO_POSIX, 512));
	default:
		return ft_config_of(tu_matrix_find(PARLOAD_STRATEGY_MMAP, 0,
						PARLOAD_IO_POSIX,
						PARLOAD_BUFFER_DEFAULT));
	}
}
#define N_FD_CONFIGS 4

/* A load from the caller's descriptor of a regular file: the same walk.
 * parload_loader_load_fd's own fstat fails with EOPEN, a strategy's with
 * EIO; its lseeks that save and restore the descriptor's offset are best
 * effort.  Unless one of those failed, the offset is where it was. */
START_TEST(test_walk_load_fd)
{
	const ft_config *c = fd_config(_i);
	const off_t start = 123;
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream_for(c, "fd.raw", &ref);
	ft_tally t = { { 0 }, "" };
	char what[160];
	uint64_t n;
	int fd = open(path, O_RDONLY), rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, start, SEEK_SET), start);
	ft_options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ck_assert_int_eq(tu_load_fd(l, fd, path, &ds, &err), 0);
	ft_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), start);
	parload__fault_reset();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "load_fd, %s, call %" PRIu64,
			 c->name, n);
		memset(&ds, 0x5a, sizeof(ds));
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = tu_load_fd(l, fd, path, &ds, &err);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		if (rc == 0) {
			ck_assert_msg(ft_may_succeed(c, k) ||
					      k == PARLOAD__FK_LSEEK,
				      "%s: %s failed, yet the load succeeded",
				      what, parload__fault_kind_name(k));
			ft_assert_same(&ds, &ref);
			parload_dataset_free(&ds);
		} else if (k == PARLOAD__FK_FSTAT && rc == PARLOAD_EOPEN) {
			ck_assert(ft_all_zero(&ds, sizeof(ds)));
		} else {
			ft_check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		}
		if (k != PARLOAD__FK_LSEEK)
			ck_assert_msg(lseek(fd, 0, SEEK_CUR) == start,
				      "%s: the descriptor's offset moved", what);
		else
			ck_assert_int_ge(lseek(fd, start, SEEK_SET), 0);
		ft_assert_as_before(&base, what);
		ft_assert_loads_exactly(l, path, &ref, what);
	}
	printf("walk load_fd, %s: %" PRIu64 " faults (%s)\n", c->name, n - 1,
	       ft_tally_text(&t));
	parload_loader_free(l);
	close(fd);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Load from a pipe fed by another thread; the pipe is gone afterwards. */
static int load_pipe(parload_loader *l, const unsigned char *data, size_t len,
		     parload_dataset *ds, parload_error *err)
{
	memset(ds, 0x5a, sizeof(*ds));
	return tu_load_fed(l, data, len, len, TU_VIA_PIPE, "pipe", ds, err);
}

/* A stream from a pipe (parload -): every call failed in turn, then
 * EINTR at every interruptible call, then reads of 1 and 7 bytes. */
START_TEST(test_walk_pipe)
{
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	ft_snapshot base;
	tu_soa ref;
	char *path = ft_stream("pipe.raw", &ref);
	size_t len;
	unsigned char *data = tu_read_all(path, &len);
	ft_tally t = { { 0 }, "" };
	char what[160];
	uint64_t n, intr;
	int rc;

	ft_options(&o, ft_config_of(tu_parallel(3)));
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ft_warm_up(l, path, &ref);
	ck_assert_int_eq(load_pipe(l, data, len, &ds, &err), 0);
	ft_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	parload__fault_reset();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "pipe, call %" PRIu64, n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = load_pipe(l, data, len, &ds, &err);
		k = ft_fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		snprintf(what, sizeof(what), "pipe, call %" PRIu64 " (%s, %s)",
			 n, parload__fault_kind_name(k), parload_err_name(rc));
		if (k == PARLOAD__FK_FSTAT) {
			ck_assert_int_eq(rc, PARLOAD_EOPEN);
			ck_assert(ft_all_zero(&ds, sizeof(ds)));
		} else {
			ft_check_outcome(NULL, k, rc, &ds, &err, "pipe", &ref,
				      what);
		}
		ft_assert_as_before(&base, what);
	}
	printf("walk pipe: %" PRIu64 " faults (%s)\n", n - 1, ft_tally_text(&t));
	for (intr = 1;; intr++) {
		int k;

		parload__fault_fail_nth(intr, ft_interruptible_mask(), EINTR);
		rc = load_pipe(l, data, len, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ck_assert_msg(rc == 0, "pipe, EINTR at call %" PRIu64 ": %s",
			      intr, err.message);
		ft_assert_same(&ds, &ref);
		parload_dataset_free(&ds);
		if (k < 0)
			break;
	}
	printf("walk EINTR, pipe: %" PRIu64 " interruptions\n", intr - 1);
	for (size_t s = 1; s <= 7; s += 6) {
		parload__fault_short(s);
		rc = load_pipe(l, data, len, &ds, &err);
		parload__fault_reset();
		ck_assert_msg(rc == 0, "pipe, %zu-byte reads: %s", s,
			      err.message);
		ft_assert_same(&ds, &ref);
		parload_dataset_free(&ds);
	}
	ft_assert_as_before(&base, "pipe");
	parload_loader_free(l);
	free(data);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- raw layouts over many files ---- */

/* 3 files of a raw layout (offset, view headers, gaps, the last file's
 * last gap missing), converted (u16be) or packed (mono12p): payloads of
 * 1,260 and 945 bytes, so a payload takes two reads of FT_MAX_READ.
 * packed 2: u16 views of 8,200 bytes that agree with their places modulo
 * 4 KiB (offset 4096, no view headers, no gaps), which a direct load
 * reads straight into them, whole blocks, in reads of one block. */
static void raw_stream(lt_stream *s, int packed, const char *name)
{
	if (packed == 2)
		lt_layout(s, 100, 41, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4096,
			  0, 0, 2);
	else
		lt_layout(s, 30, 21, PARLOAD_PIXEL_U16,
			  packed ? PARLOAD_ENC_MONO12P : PARLOAD_ENC_BE, 40,
			  12, 5, 2);
	s->nfiles = 3;
	s->views[1] = 3;
	s->views[2] = 2;
	s->cut_gap[2] = true;
	lt_write(s, name);
}

static bool names_a_file(const lt_stream *s, const char *message)
{
	for (int f = 0; f < s->nfiles; f++)
		if (strstr(message, s->paths[f]))
			return true;
	return false;
}

/* A raw load of 3 files, whole or a selection (a crop from an odd column
 * and a band of rows of every other view, or sinograms), under a fault at
 * every call, with 2 workers: the result equals a clean load, or the load
 * fails as the fault says, naming one of the files, and leaves nothing
 * behind.  _i 0-5: u16be and mono12p; 6-8: the aligned layout, direct. */
START_TEST(test_walk_raw_files)
{
	const int packed = _i >= 6 ? 2 : _i & 1;
	const int part = _i >= 6 ? _i - 6 : _i >> 1;
	const char *const kinds[] = { "u16be", "mono12p", "aligned, direct" };
	const char *const parts[] = { "whole", "crop", "sinograms" };
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds, want;
	parload_selection sel;
	parload_request r;
	ft_snapshot base;
	ft_config c;
	lt_stream s;
	lt_sel q;
	char what[160];
	uint64_t n, calls, pb, hb;
	ft_tally t = { { 0 }, "" };
	int rc;

	memset(&c, 0, sizeof(c));
	c.m = tu_matrix(0); /* parallel */
	raw_stream(&s, packed, "walkraw");
	lt_sel_part(&s, part, 3, 19, 5, 27, &q);
	lt_sel_to(&q, &sel);
	lt_request(&s, &r);
	r.selection = &sel;
	if (packed == 2)
		r.cache = PARLOAD_CACHE_DIRECT;
	parload_options_init(&o);
	o.threads = 2;
	o.max_read = FT_MAX_READ;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ck_assert_msg(parload_loader_run(l, &r, &want, &err) == 0, "%s",
		      err.message);
	lt_assert_loaded(&s, &q, &want, false, "clean raw load");
	pb = want.shape.views * want.shape.view_bytes;
	hb = want.shape.views * s.d.header;
	parload__fault_reset();
	ck_assert_int_eq(parload_loader_run(l, &r, &ds, &err), 0);
	parload_dataset_free(&ds);
	calls = parload__fault_calls();
	ft_snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "raw %s, %s, call %" PRIu64,
			 kinds[packed], parts[part], n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		memset(&ds, 0x5a, sizeof(ds));
		rc = parload_loader_run(l, &r, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		if (k >= 0)
			t.n[k]++;
		if (rc == 0) {
			ck_assert_msg(k < 0 || ft_may_succeed(&c, k), "%s: "
				      "succeeded past a fault", what);
			ck_assert_int_eq(memcmp(ds.pixels, want.pixels, pb), 0);
			/* The aligned layout has no view headers. */
			ck_assert(hb == 0 ||
				  memcmp(ds.raw_headers, want.raw_headers,
					 hb) == 0);
			parload_dataset_free(&ds);
		} else {
			ft_assert_failure(what, k, rc, &err, NULL, false);
			ck_assert_msg(names_a_file(&s, err.message), "%s: no "
				      "file named: %s", what, err.message);
			ck_assert_msg(ft_all_zero(&ds, sizeof(ds)),
				      "%s: dataset not zeroed", what);
		}
		ft_assert_as_before(&base, what);
		if (k < 0)
			break;
	}
	ck_assert_uint_eq(n - 1, calls);
	printf("walk raw %s, 3 files, %s: %" PRIu64 " faults (%s)\n",
	       kinds[packed], parts[part], n - 1, ft_tally_text(&t));
	parload_dataset_free(&want);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* Bad raw layouts are refused before anything is read or mapped: with
 * the first read, pread, preadv, fread or mmap armed to fail, none
 * fires, and the load still says what is wrong. */
START_TEST(test_raw_refused_before_reading)
{
	const uint64_t io = PARLOAD__FK_BIT(READ) | PARLOAD__FK_BIT(PREAD) |
			    PARLOAD__FK_BIT(PREADV) | PARLOAD__FK_BIT(FREAD) |
			    PARLOAD__FK_BIT(MMAP);
	parload_options o;
	parload_loader *l, *seq;
	parload_error err;
	parload_dataset ds;
	parload_request r;
	ft_snapshot base;
	lt_stream s;
	uint64_t size1;
	struct {
		const char *what;
		int code;
	} cases[] = {
		{ "count past the end", PARLOAD_ETRUNCATED },
		{ "partial record in the list", PARLOAD_ETRUNCATED },
		{ "sizes overflow", PARLOAD_EOVERFLOW },
		{ "sequential strategy", PARLOAD_ENOTSUP },
	};

	raw_stream(&s, 1, "refused");
	size1 = tu_file_size(s.paths[1]);
	parload_options_init(&o);
	o.threads = 2;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	o.threads = 1;
	o.strategy = PARLOAD_STRATEGY_SEQUENTIAL;
	ck_assert_int_eq(parload_loader_new(&seq, &o, &err), 0);
	ft_snap(&base);
	for (int i = 0; i < TU_COUNT(cases); i++) {
		lt_stream t = s;
		int rc, k;

		if (i == 0)
			t.d.count = 8;
		if (i == 1)
			tu_truncate(s.paths[1], size1 - 10);
		if (i == 2)
			tu_truncate(s.paths[1], size1);
		if (i == 2)
			t.d.count = UINT64_MAX / 16;
		lt_request(&t, &r);
		parload__fault_reset();
		parload__fault_fail_nth(1, io, 0);
		memset(&ds, 0x5a, sizeof(ds));
		rc = parload_loader_run(i == 3 ? seq : l, &r, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ck_assert_msg(k < 0, "%s: %s was called", cases[i].what,
			      k < 0 ? "" : parload__fault_kind_name(k));
		ck_assert_msg(rc == cases[i].code, "%s: %s (%s)", cases[i].what,
			      parload_err_name(rc), err.message);
		ck_assert_msg(names_a_file(&s, err.message), "%s: %s",
			      cases[i].what, err.message);
		ck_assert(ft_all_zero(&ds, sizeof(ds)));
		ft_assert_as_before(&base, cases[i].what);
	}
	parload_loader_free(seq);
	parload_loader_free(l);
	lt_free(&s);
}
END_TEST

/* An HDF5 object header whose block claims 16 MiB - 1 past a file of 32
 * bytes: the walk (hdf5_index.c, shared with hdf5_native.c) fails it
 * before allocating the block (it allocated up to 16 MiB first; found
 * by fuzz_h5index). */
START_TEST(test_h5_block_checked_first)
{
	/* A version 1 prefix: version, reserved, 1 message, 1 reference,
	 * the block's bytes, padding; then 16 bytes of the block. */
	unsigned char b[32] = { 1, 0, 1, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff };
	char *path = tu_path("block.h5");
	parload__h5file f = { .size = sizeof(b), .so = 8, .sl = 8 };
	bool ok;
	int k;

	tu_write_file(path, b, sizeof(b));
	f.fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(f.fd, 0);
	parload__fault_reset();
	parload__fault_fail_nth(1, PARLOAD__FK_BIT(MALLOC) |
					   PARLOAD__FK_BIT(CALLOC),
				0);
	ok = parload__h5_header(&f, 0, NULL, NULL);
	k = parload__fault_fired();
	parload__fault_reset();
	ck_assert(!ok);
	ck_assert_msg(k < 0, "%s was called", parload__fault_kind_name(k));
	close(f.fd);
	free(path);
}
END_TEST

static int no_chunk(void *ctx, const parload__chunk *c)
{
	(void)ctx, (void)c;
	return 0;
}

/* A chunk index whose root node lies past a file of 152 bytes, in nodes
 * of 2 x 65535 keys (6 MB): the walk falls back before allocating the
 * node (it allocated the node first; found by fuzz_differ). */
START_TEST(test_h5_node_checked_first)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n',
					      0x1a, '\n' };
	/* Superblock version 0 (sizes 8, K's 4 and 16, the root's header
	 * at 96); a version 1 header of one message, the layout: version
	 * 3, chunked, 4 dimensions, the B-tree at 4096, chunks 1 x 2 x 2
	 * of 2 bytes. */
	unsigned char b[152] = { 0 };
	const parload__h5where w = { .header = 96, .istore_k = 0xffff,
				     .so = 8, .sl = 8, .rank = 3,
				     .dims = { 4, 2, 2 }, .chunk = { 1, 2, 2 },
				     .elem = 2 };
	const uint64_t eof = sizeof(b), header = 96, btree = 4096;
	char *path = tu_path("node.h5");
	parload_error err;
	int fd, rc, k;

	memcpy(b, sig, 8);
	b[13] = b[14] = 8, b[16] = 4, b[18] = 16;
	memset(b + 32, 0xff, 8);
	memcpy(b + 40, &eof, 8);
	memset(b + 48, 0xff, 8);
	memcpy(b + 64, &header, 8);
	memcpy(b + 96, (unsigned char[]){ 1, 0, 1, 0, 1, 0, 0, 0, 40 }, 9);
	memcpy(b + 112, (unsigned char[]){ 8, 0, 32 }, 3);
	memcpy(b + 120, (unsigned char[]){ 3, 2, 4 }, 3);
	memcpy(b + 123, &btree, 8);
	memcpy(b + 131, (unsigned char[]){ 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
					   2 },
	       13);
	tu_write_file(path, b, sizeof(b));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	/* The header's block is the walk's first allocation. */
	parload__fault_reset();
	parload__fault_fail_nth(2, PARLOAD__FK_BIT(MALLOC) |
					   PARLOAD__FK_BIT(CALLOC),
				0);
	rc = parload__h5index_walk(fd, &w, no_chunk, NULL, path, "/d", &err);
	k = parload__fault_fired();
	parload__fault_reset();
	ck_assert_int_eq(rc, 1);
	ck_assert_msg(k < 0, "%s was called", parload__fault_kind_name(k));
	close(fd);
	free(path);
}
END_TEST

/* ---- the writer ---- */

START_TEST(test_walk_writer)
{
	const ft_shape *s = &ft_shapes[_i];
	char *ref = tu_path("wref.raw"), *out = tu_path("wout.raw");
	parload_error err;
	ft_snapshot base;
	uint64_t calls, n;
	char what[160];
	ft_tally t = { { 0 }, "" };
	int rc;

	parload__fault_reset();
	ft_snap(&base);
	ck_assert_int_eq(ft_write_stream(ref, s, &err), 0);
	calls = parload__fault_calls();
	ft_assert_as_before(&base, s->name);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "writer, %s, call %" PRIu64,
			 s->name, n);
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = ft_write_stream(out, s, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ft_assert_as_before(&base, what);
		if (k < 0) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			break;
		}
		t.n[k]++;
		ft_assert_failure(what, k, rc, &err, out, true);
	}
	ck_assert_uint_eq(n - 1, calls);
	ft_assert_same_file(ref, out, s->name);
	printf("walk writer, %s: %" PRIu64 " faults (%s)\n", s->name, n - 1,
	       ft_tally_text(&t));
	free(ref);
	free(out);
}
END_TEST

/* ---- a Zarr store: a directory written whole or not at all ---- */

/* The names dir holds, sorted by readdir's order into one string. */
static void names_of(const char *dir, char *buf, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	buf[0] = '\0';
	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n += (size_t)snprintf(buf + n, size - n, "%s ",
					      e->d_name);
	if (d)
		closedir(d);
}

static int save_store(const char *path, unsigned flags, int seed,
		      parload_error *err)
{
	static uint16_t px[3 * 4 * 5];
	parload_save_options o;
	parload_stack st = { .pixels = px, .pixel_type = PARLOAD_PIXEL_U16,
			     .n = 3, .rows = 4, .cols = 5,
			     .layout = PARLOAD_LAYOUT_VIEWS };

	for (size_t i = 0; i < sizeof(px) / sizeof(px[0]); i++)
		px[i] = (uint16_t)(i * 7 + (size_t)seed);
	parload_save_options_init(&o);
	o.flags = flags;
	o.zarr_format = 3;
	o.shard = 2;
	o.threads = 1; /* one order of calls */
	return parload_save(path, &st, &o, err);
}

/* parload_save of a v3 sharded store, new (_i 0) or replacing one with
 * PARLOAD_SAVE_FORCE (_i 1): each call failed in turn.  A failure leaves
 * the directory as it was (no store, no temporary directory; the old
 * store whole), or, where only the removal of the old store failed, the
 * new one in place; every resource is given back. */
START_TEST(test_walk_zarr_save)
{
	const bool force = _i == 1;
	char *dir = tu_path(force ? "zforce" : "znew");
	char *out = tu_path(force ? "zforce/o.zarr" : "znew/o.zarr");
	char *meta = tu_path(force ? "zforce/o.zarr/c/1/0/0" :
				     "znew/o.zarr/c/1/0/0");
	char *old = tu_path("zold-shard");
	char before[4096], after[4096], what[96], cmd[8192];
	parload_error err;
	ft_snapshot base;
	uint64_t n;
	ft_tally t = { { 0 }, "" };

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	if (force) {
		ck_assert_int_eq(save_store(out, 0, 1, &err), 0);
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", meta, old);
		ck_assert_int_eq(system(cmd), 0);
	}
	names_of(dir, before, sizeof(before));
	parload__fault_reset();
	ft_snap(&base);
	for (n = 1;; n++) {
		int rc, k;

		snprintf(what, sizeof(what), "zarr %s, call %" PRIu64,
			 force ? "replaced" : "new", n);
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = save_store(out, force ? PARLOAD_SAVE_FORCE : 0, 2, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ft_assert_as_before(&base, what);
		names_of(dir, after, sizeof(after));
		if (k < 0) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			break;
		}
		t.n[k]++;
		if (rc == 0) {
			/* Only a failure that costs nothing but cleaning
			 * (the old store may stay under its hidden name). */
			ck_assert_msg(k == PARLOAD__FK_RMDIR ||
					      k == PARLOAD__FK_UNLINK ||
					      k == PARLOAD__FK_OPENDIR ||
					      k == PARLOAD__FK_STAT,
				      "%s: %s failed, and the save succeeded",
				      what, parload__fault_kind_name(k));
		} else {
			/* A store that cannot be looked at is not taken for
			 * one: force replaces it no more than another. */
			if (k == PARLOAD__FK_STAT && force)
				ck_assert_msg(rc == PARLOAD_EEXIST, "%s: %s",
					      what, err.message);
			else
				ft_assert_failure(what, k, rc, &err, out,
						  true);
			ck_assert_msg(strcmp(before, after) == 0,
				      "%s: left '%s' (before: '%s')", what,
				      after, before);
		}
		if (rc && force)
			ft_assert_same_file(old, meta, what);
		/* The next attempt starts from the same directory. */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'/.o.zarr.* '%s'", dir,
			 out);
		if (rc == 0 || force)
			ck_assert_int_eq(system(cmd), 0);
		if (force)
			ck_assert_int_eq(save_store(out, 0, 1, &err), 0);
	}
	ck_assert_int_eq(access(meta, F_OK), 0);
	printf("walk zarr save, %s: %" PRIu64 " faults (%s)\n",
	       force ? "replaced" : "new", n - 1, ft_tally_text(&t));
	free(dir);
	free(out);
	free(meta);
	free(old);
}
END_TEST

/* ---- the caller's buffers ---- */

/* parload_buffers_alloc: every call it makes failed in turn.  A failed
 * mapping is PARLOAD_ENOMEM with nothing held and empty buffers; failed
 * advice costs nothing but the advice.  The buffers hold 4.3 MB of pixels,
 * so the aligned layout and its trimming are the ones walked. */
START_TEST(test_walk_buffers_alloc)
{
	parload_file_header h;
	parload_buffers b;
	parload_error err;
	ft_snapshot base;
	uint64_t calls, n;
	char what[96];
	ft_tally t = { { 0 }, "" };

	ck_assert_int_eq(parload_file_header_init(&h, 3, 1024, 700,
						  PARLOAD_PIXEL_U16, 0),
			 0);
	parload__fault_reset();
	ft_snap(&base);
	ck_assert_int_eq(tu_buffers_alloc(&b, &h, NULL, 0, &err), 0);
	calls = parload__fault_calls();
	parload_buffers_free(&b);
	ft_assert_as_before(&base, "buffers");
	for (n = 1;; n++) {
		int rc, k;

		snprintf(what, sizeof(what), "buffers, call %" PRIu64, n);
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = tu_buffers_alloc(&b, &h, NULL, 0, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		if (k < 0) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			parload_buffers_free(&b);
			break;
		}
		t.n[k]++;
		if (k == PARLOAD__FK_MADVISE) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			ck_assert_ptr_nonnull(b.pixels);
			parload_buffers_free(&b);
		} else {
			ck_assert_msg(rc == PARLOAD_ENOMEM, "%s: %d (%s)",
				      what, rc, err.message);
			ck_assert_ptr_null(b.pixels);
			ck_assert_ptr_null(b.headers);
		}
		ft_assert_as_before(&base, what);
	}
	ck_assert_uint_eq(n - 1, calls);
	ck_assert_uint_ge(calls, 2); /* the mapping and its advice */
	printf("walk buffers_alloc: %" PRIu64 " faults (%s)\n", n - 1,
	       ft_tally_text(&t));
}
END_TEST

/* ---- the seam ---- */

/* The seam itself: a normal load counts its calls, an armed fault fires
 * once and is reported, and the resource counts come back to zero.  The
 * dataset (7 views of 16 x 40 u16, under a huge page of pixels) is the
 * one block it holds: a heap block, no mapping (dataset.c). */
START_TEST(test_seam_counts_and_fires)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	char *path = ft_stream("seam.raw", &ref);

	ft_options(&o, ft_config_of(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
					     PARLOAD_IO_POSIX, 0)));
	o.error = &err;
	parload__fault_reset();
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	ck_assert_uint_gt(parload__fault_calls(), 2 * FT_VIEWS);
	ck_assert_int_eq(parload__fault_fired(), -1);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_MAP), 0);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_HEAP), 1);
	parload_dataset_free(&ds);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_MAP), 0);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_FD), 0);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_HEAP), 0);

	/* The first read(): the file header. */
	parload__fault_fail_nth(1, PARLOAD__FK_BIT(READ), 0);
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_EIO);
	ck_assert_int_eq(parload__fault_fired(), PARLOAD__FK_READ);
	ck_assert_uint_eq(err.offset, 0);
	parload__fault_reset();
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("faults");
	TCase *t;

	ft_build_configs();
	t = tu_tcase(s, "seam", 0);
	tcase_add_test(t, test_seam_counts_and_fires);

	t = tu_tcase(s, "walk", 120);
	tcase_add_loop_test(t, test_walk_load, 0, ft_n_configs);
	tcase_add_loop_test(t, test_walk_lifecycle, 0, ft_n_configs);
	tcase_add_loop_test(t, test_walk_writer, 0, FT_N_SHAPES);
	tcase_add_loop_test(t, test_walk_zarr_save, 0, 2);
	tcase_add_test(t, test_walk_bind);
	tcase_add_loop_test(t, test_walk_load_fd, 0, N_FD_CONFIGS);
	tcase_add_test(t, test_walk_pipe);
	tcase_add_test(t, test_walk_buffers_alloc);
	tcase_add_loop_test(t, test_walk_selection, 0, 9);
	tcase_add_loop_test(t, test_walk_raw_files, 0, 9);
	tcase_add_loop_test(t, test_walk_described, 0, 5);
	tcase_add_test(t, test_raw_refused_before_reading);
	tcase_add_test(t, test_h5_block_checked_first);
	tcase_add_test(t, test_h5_node_checked_first);
	tcase_add_loop_test(t, test_walk_cache, 0, 3);
	tcase_add_loop_test(t, test_direct_in_flight_faults, 0, 2);
	tcase_add_loop_test(t, test_direct_queues, 0, 2);
	tcase_add_test(t, test_drop_fadvise);
	return s;
}

#endif /* PARLOAD_FAULT_INJECTION */

int main(void)
{
#ifdef PARLOAD_FAULT_INJECTION
	return tu_run(suite());
#else
	return ft_skip("check_faults");
#endif
}
