/*
 * check_faults.c - every system and allocation call the loader and the
 * writer make, failed in turn.
 *
 * Built against the fault-injection seam (./configure
 * --enable-fault-injection, tests/fault/fault.h); in a normal build it skips.
 *
 * The walks fail the 1st, 2nd, ... N-th call of a load until a load runs
 * without reaching the N-th call, as SQLite's tests do: for every strategy
 * and I/O API (with a loader made beforehand, and through parload_load(),
 * which makes the loader, its topology and its threads too), for the
 * workers' binding, for loads from a descriptor and from a pipe, with CRCs
 * checked past a bad view, and for the writer.  After each injected
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
 * Short transfers, EINTR at any call and EIO at a given offset must be
 * handled: retried where the kernel allows, reported with the view and the
 * offset where not.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PARLOAD_FAULT_INJECTION

int main(void)
{
	printf("check_faults: SKIP: the fault-injection seam is not built; "
	       "configure with --enable-fault-injection to run these "
	       "tests\n");
	return 77;
}

#else

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "matrix.h"
#include "testutil.h"

/* ---- the loads under test ---- */

/* A configuration of the matrix (matrix.h), and the options it is walked
 * with. */
typedef struct config {
	const tu_config *m;
	unsigned flags; /* PARLOAD_OPT_* */
	char name[128];
} config;

/* With CRCs checked, view BAD_VIEW's payload does not match its CRC and
 * the load goes on past it (PARLOAD_OPT_KEEP_GOING), listing it. */
#define CRC_KEEP_GOING (PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING)
#define BAD_VIEW 3

/* Every configuration of the matrix, then two of them with CRCs checked
 * past a bad view: built with the suite. */
static config configs[TU_MATRIX_MAX + 2];
static int n_configs;

static void add_config(const tu_config *m, unsigned flags, const char *how)
{
	config *c = &configs[n_configs++];

	c->m = m;
	c->flags = flags;
	snprintf(c->name, sizeof(c->name), "%s%s", m->label, how);
}

static void build_configs(void)
{
	for (int i = 0; i < tu_matrix_size(); i++)
		add_config(tu_matrix(i), 0, "");
	add_config(tu_parallel(3), CRC_KEEP_GOING,
		   ", CRCs checked, keep going");
	add_config(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
				  PARLOAD_IO_POSIX, 0),
		   CRC_KEEP_GOING, ", CRCs checked, keep going");
}

/* The configuration for m with no flags. */
static const config *config_of(const tu_config *m)
{
	return &configs[m - tu_matrix(0)];
}

/* 7 views of 16 x 40 u16: 1280-byte payloads, bigger than MAX_READ, so a
 * payload takes two reads and a worker's share several. */
#define VIEWS 7
#define WIDTH 16
#define HEIGHT 40
#define MAX_READ 1000
#define SEED 5

static void options(parload_options *o, const config *c)
{
	tu_config_options(o, c->m, c->flags);
	/* A single-threaded strategy is given one thread: with the default,
	 * its loader would start a pool whose workers bind themselves at
	 * moments a walk cannot foresee. */
	if (!o->threads)
		o->threads = 1;
	o->max_read = MAX_READ;
}

/* The configuration under test: what a good dataset must hold besides the
 * file's bytes. */
static const config *current;

/* Write the test stream (for c, or the plain one when c is NULL) and read
 * the reference. */
static char *stream_for(const config *c, const char *name, tu_soa *ref)
{
	char *path = tu_path(name);
	const bool crc = c && (c->flags & PARLOAD_OPT_VERIFY_CRC);

	current = c;
	tu_write_stream(path, VIEWS, WIDTH, HEIGHT, PARLOAD_PIXEL_U16,
			crc ? PARLOAD_FLAG_CRC32C : 0, SEED);
	if (crc) {
		const unsigned char junk = 0xee;

		tu_patch(path, PARLOAD_FILE_HEADER_SIZE +
				       BAD_VIEW * (PARLOAD_VIEW_HEADER_SIZE +
						   WIDTH * HEIGHT * 2) +
				       PARLOAD_VIEW_HEADER_SIZE + 17,
			 &junk, 1);
	}
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	return path;
}

static char *stream(const char *name, tu_soa *ref)
{
	return stream_for(NULL, name, ref);
}

/* A good dataset: the file's bytes, and the bad view listed when CRCs
 * were checked. */
static void assert_same(const parload_dataset *ds, const tu_soa *ref)
{
	tu_assert_same(ds, ref);
	if (current && (current->flags & PARLOAD_OPT_KEEP_GOING)) {
		ck_assert_uint_eq(ds->bad_view_count, 1);
		ck_assert_uint_eq(ds->bad_views[0], BAD_VIEW);
		ck_assert_uint_eq(ds->stats.crc_checked, VIEWS);
	} else {
		ck_assert_uint_eq(ds->bad_view_count, 0);
	}
}

/* ---- what the process holds ---- */

typedef struct snapshot {
	long live[PARLOAD__FR_COUNT];
	int tasks;
	int fds;
} snapshot;

static void snap(snapshot *s)
{
	for (int r = 0; r < PARLOAD__FR_COUNT; r++)
		s->live[r] = parload__fault_live(r);
	s->tasks = tu_count_entries("/proc/self/task");
	s->fds = tu_count_entries("/proc/self/fd");
}

/*
 * Assert that the process holds what it held at base.  A joined thread
 * can linger in /proc/self/task for a moment after pthread_join returns
 * (the kernel wakes the joiner before it unlists the thread), so the
 * thread count is given a second to settle; nothing else is.
 */
static void assert_as_before(const snapshot *base, const char *what)
{
	snapshot now;

	for (int tries = 0;; tries++) {
		snap(&now);
		if (now.tasks == base->tasks || tries == 1000)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	for (int r = 0; r < PARLOAD__FR_COUNT; r++)
		ck_assert_msg(now.live[r] == base->live[r],
			      "%s: %ld %s held, %ld before",
			      what, now.live[r], parload__fault_res_name(r),
			      base->live[r]);
	ck_assert_msg(now.tasks == base->tasks,
		      "%s: %d threads running, %d before", what, now.tasks,
		      base->tasks);
	ck_assert_msg(now.fds == base->fds,
		      "%s: %d descriptors open, %d before", what, now.fds,
		      base->fds);
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* Which kinds of call a walk failed, for its log line. */
typedef struct tally {
	unsigned n[PARLOAD__FK_COUNT];
	char text[1024];
} tally;

static const char *tally_text(tally *t)
{
	size_t len = 0;

	t->text[0] = '\0';
	for (int k = 0; k < PARLOAD__FK_COUNT && len < sizeof(t->text); k++) {
		int w;

		if (!t->n[k])
			continue;
		w = snprintf(t->text + len, sizeof(t->text) - len, "%s%s %u",
			     len ? ", " : "", parload__fault_kind_name(k),
			     t->n[k]);
		len = w < 0 ? sizeof(t->text) : len + (size_t)w;
	}
	return t->text;
}

/* ---- what a failure must look like ---- */

/* The code a failure of kind k means; 0 for the calls whose failure must
 * not fail a load (best effort, or measurement only). */
static int code_for(int k, bool writing)
{
	switch (k) {
	case PARLOAD__FK_OPEN:
	case PARLOAD__FK_FOPEN:
		return writing ? PARLOAD_EWRITE : PARLOAD_EOPEN;
	case PARLOAD__FK_WRITE:
		return PARLOAD_EWRITE;
	case PARLOAD__FK_CLOSE:
		/* A reader has what it read; a writer's data may be lost. */
		return writing ? PARLOAD_EWRITE : 0;
	case PARLOAD__FK_FSTAT:
	case PARLOAD__FK_READ:
	case PARLOAD__FK_PREAD:
	case PARLOAD__FK_PREADV:
	case PARLOAD__FK_LSEEK:
	case PARLOAD__FK_FREAD:
	case PARLOAD__FK_FSEEKO:
		return PARLOAD_EIO;
	case PARLOAD__FK_MMAP:
	case PARLOAD__FK_MALLOC:
	case PARLOAD__FK_CALLOC:
	case PARLOAD__FK_STRDUP:
	case PARLOAD__FK_BITMAP_ALLOC:
	case PARLOAD__FK_BITMAP_DUP:
		return PARLOAD_ENOMEM;
	case PARLOAD__FK_PTHREAD_CREATE:
	case PARLOAD__FK_MUTEX_INIT:
	case PARLOAD__FK_COND_INIT:
		return PARLOAD_ETHREAD;
	case PARLOAD__FK_TOPOLOGY_INIT:
	case PARLOAD__FK_TOPOLOGY_LOAD:
		return PARLOAD_ETOPOLOGY;
	default: /* fclose, madvise, the bindings */
		return 0;
	}
}

/* Whether a failure of kind k may also end in success (with exact data):
 * the calls that serve only the stdio read counters (open and pread of
 * /proc/thread-self/io) and the per-thread binding's bitmap. */
static bool may_succeed(const config *c, int k)
{
	if (code_for(k, false) == 0)
		return true;
	if (c && c->m->io == PARLOAD_IO_STDIO &&
	    parload_strategy_uses_io(c->m->strategy) &&
	    (k == PARLOAD__FK_OPEN || k == PARLOAD__FK_PREAD))
		return true;
	return k == PARLOAD__FK_BITMAP_ALLOC;
}

/* The errno an I/O failure must pass on in sys_errno. */
static bool passes_errno(int k)
{
	switch (k) {
	case PARLOAD__FK_OPEN:
	case PARLOAD__FK_FOPEN:
	case PARLOAD__FK_FSTAT:
	case PARLOAD__FK_READ:
	case PARLOAD__FK_PREAD:
	case PARLOAD__FK_PREADV:
	case PARLOAD__FK_LSEEK:
	case PARLOAD__FK_FREAD:
	case PARLOAD__FK_FSEEKO:
	case PARLOAD__FK_WRITE:
	case PARLOAD__FK_MMAP:
		return true;
	default:
		return false;
	}
}

static void assert_failure(const char *what, int k, int rc,
			   const parload_error *err, const char *path,
			   bool writing)
{
	int want = code_for(k, writing);

	ck_assert_msg(rc == want,
		      "%s: %s failed: returned %s (%s), want %s", what,
		      parload__fault_kind_name(k), parload_err_name(rc),
		      err->message, parload_err_name(want));
	ck_assert_msg(err->code == rc, "%s: error code %d, returned %d",
		      what, err->code, rc);
	ck_assert_msg(err->message[0] != '\0', "%s: no message", what);
	if (path)
		ck_assert_msg(strstr(err->message, path) != NULL,
			      "%s: message does not name the file: %s", what,
			      err->message);
	if (passes_errno(k)) {
		int e = parload__fault_kind_errno(k);

		ck_assert_msg(err->sys_errno == e,
			      "%s: %s failed with %s, reported errno %d (%s)",
			      what, parload__fault_kind_name(k), strerror(e),
			      err->sys_errno, err->message);
		ck_assert_msg(strstr(err->message, strerror(e)) != NULL,
			      "%s: message does not say \"%s\": %s", what,
			      strerror(e), err->message);
	}
	if (k == PARLOAD__FK_READ || k == PARLOAD__FK_PREAD ||
	    k == PARLOAD__FK_PREADV || k == PARLOAD__FK_FREAD)
		ck_assert_msg(err->offset != PARLOAD_NONE,
			      "%s: a read failed but no offset is named: %s",
			      what, err->message);
}

/* ---- loads ---- */

static int load(parload_loader *l, const char *path, parload_dataset *ds,
		parload_error *err)
{
	/* Garbage in: a failed load must leave the dataset zeroed. */
	memset(ds, 0x5a, sizeof(*ds));
	memset(err, 0, sizeof(*err));
	return parload_loader_load(l, path, ds, err);
}

static void assert_loads_exactly(parload_loader *l, const char *path,
				 const tu_soa *ref, const char *what)
{
	parload_dataset ds;
	parload_error err;
	int rc = load(l, path, &ds, &err);

	ck_assert_msg(rc == 0, "%s: %s", what, err.message);
	assert_same(&ds, ref);
	parload_dataset_free(&ds);
}

/* A first load: the pool's workers bind themselves as they start, after
 * parload_loader_new() has returned, and are sure to have done so only
 * once they have run a job.  Snapshots are taken after this. */
static void warm_up(parload_loader *l, const char *path, const tu_soa *ref)
{
	assert_loads_exactly(l, path, ref, "first load");
}

/*
 * After a load with a fault armed: the outcome is right for the fault
 * that fired (k, or -1 if none did), and nothing is left behind.
 */
static void check_outcome(const config *c, int k, int rc, parload_dataset *ds,
			  const parload_error *err, const char *path,
			  const tu_soa *ref, const char *what)
{
	if (rc == 0) {
		ck_assert_msg(k < 0 || may_succeed(c, k),
			      "%s: %s failed, yet the load succeeded", what,
			      parload__fault_kind_name(k));
		assert_same(ds, ref);
		parload_dataset_free(ds);
		return;
	}
	ck_assert_msg(k >= 0, "%s: failed with no fault: %s", what,
		      err->message);
	assert_failure(what, k, rc, err, path, false);
	ck_assert_msg(all_zero(ds, sizeof(*ds)),
		      "%s: %s failed and the dataset was not zeroed", what,
		      parload__fault_kind_name(k));
}

/*
 * After an attempt with a fault armed at the N-th call: the kind of call
 * that failed, or -1 if the attempt ran past its last call with none
 * failing, and the seam disarmed.  That last attempt must have loaded
 * exactly ref (its dataset is freed); a failure is tallied in t.
 */
static int fired(int rc, parload_dataset *ds, const parload_error *err,
		 const tu_soa *ref, tally *t, const char *what)
{
	int k = parload__fault_fired();

	parload__fault_reset();
	if (k < 0) {
		ck_assert_msg(rc == 0, "%s: %s", what, err->message);
		assert_same(ds, ref);
		parload_dataset_free(ds);
	} else {
		t->n[k]++;
	}
	return k;
}

/* The N-th call fails, for every N, on a loader made beforehand; the
 * loader then loads the file exactly. */
START_TEST(test_walk_load)
{
	const config *c = &configs[_i];
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "walk.raw", &ref);
	uint64_t calls, n;
	char what[160];
	tally t = { { 0 }, "" };
	int rc;

	options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	warm_up(l, path, &ref);
	parload__fault_reset();
	assert_loads_exactly(l, path, &ref, c->name);
	calls = parload__fault_calls();
	ck_assert_uint_gt(calls, 3);
	snap(&base);

	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "%s, call %" PRIu64, c->name, n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = load(l, path, &ds, &err);
		k = fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		assert_as_before(&base, what);
		assert_loads_exactly(l, path, &ref, what);
		assert_as_before(&base, what);
	}
	/* Every call of a clean load was failed once. */
	ck_assert_uint_eq(n - 1, calls);
	printf("walk load, %s: %" PRIu64 " faults (%s)\n", c->name, n - 1,
	       tally_text(&t));
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* The same over the whole life of a loader: parload_load() makes the
 * loader (topology, pool, threads), loads and frees it. */
START_TEST(test_walk_lifecycle)
{
	const config *c = &configs[_i];
	parload_options o;
	parload_error err;
	parload_dataset ds;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "life.raw", &ref);
	uint64_t calls, n;
	char what[160];
	tally t = { { 0 }, "" };
	int rc;

	options(&o, c);
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
	snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "parload_load, %s, call %" PRIu64,
			 c->name, n);
		memset(&err, 0, sizeof(err));
		memset(&ds, 0x5a, sizeof(ds));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = parload_load(path, &o, &ds);
		k = fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		if (rc == 0) {
			check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		} else {
			/* Making the loader fails without naming a file. */
			assert_failure(what, k, rc, &err, NULL, false);
			ck_assert_msg(all_zero(&ds, sizeof(ds)),
				      "%s: dataset not zeroed", what);
		}
		assert_as_before(&base, what);
	}
	ck_assert_uint_eq(n - 1, calls);
	printf("walk parload_load, %s: %" PRIu64 " faults (%s)\n", c->name,
	       n - 1, tally_text(&t));
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
	snapshot base;
	tu_soa ref;
	const config *bind = config_of(tu_parallel(3));
	char *path = stream("bind.raw", &ref);
	tally t = { { 0 }, "" };
	uint64_t n;
	int rc;

	options(&o, bind);
	o.error = &err;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	parload_dataset_free(&ds);
	snap(&base);
	for (n = 1;; n++) {
		char what[160];
		int k;

		parload__fault_fail_nth(n, mask, 0);
		rc = parload_load(path, &o, &ds);
		snprintf(what, sizeof(what), "binding, call %" PRIu64, n);
		k = fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		snprintf(what, sizeof(what), "binding, call %" PRIu64 " (%s)",
			 n, parload__fault_kind_name(k));
		if (rc == 0) {
			assert_same(&ds, &ref);
			parload_dataset_free(&ds);
		} else {
			ck_assert_msg(n == 1 && rc == PARLOAD_ENOMEM,
				      "%s: %s", what, err.message);
		}
		assert_as_before(&base, what);
	}
	/* The topology's bitmap and get_cpubind, then two calls per
	 * worker. */
	ck_assert_uint_ge(n - 1, 2 + 2 * 3);
	printf("walk binding, %s: %" PRIu64 " faults (%s)\n", bind->name,
	       n - 1, tally_text(&t));
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- loads from a descriptor ---- */

/* The configurations the descriptor walks use: the parallel loader, the
 * buffered single-threaded readers and mmap. */
static const config *fd_config(int i)
{
	switch (i) {
	case 0:
		return config_of(tu_parallel(3));
	case 1:
		return config_of(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
						PARLOAD_IO_POSIX, 512));
	case 2:
		return config_of(tu_matrix_find(PARLOAD_STRATEGY_TWO_PASS, 0,
						PARLOAD_IO_POSIX, 512));
	default:
		return config_of(tu_matrix_find(PARLOAD_STRATEGY_MMAP, 0,
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
	const config *c = fd_config(_i);
	const off_t start = 123;
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "fd.raw", &ref);
	tally t = { { 0 }, "" };
	char what[160];
	uint64_t n;
	int fd = open(path, O_RDONLY), rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, start, SEEK_SET), start);
	options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ck_assert_int_eq(parload_loader_load_fd(l, fd, path, &ds, &err), 0);
	assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), start);
	parload__fault_reset();
	snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "load_fd, %s, call %" PRIu64,
			 c->name, n);
		memset(&ds, 0x5a, sizeof(ds));
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = parload_loader_load_fd(l, fd, path, &ds, &err);
		k = fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		if (rc == 0) {
			ck_assert_msg(may_succeed(c, k) ||
					      k == PARLOAD__FK_LSEEK,
				      "%s: %s failed, yet the load succeeded",
				      what, parload__fault_kind_name(k));
			assert_same(&ds, &ref);
			parload_dataset_free(&ds);
		} else if (k == PARLOAD__FK_FSTAT && rc == PARLOAD_EOPEN) {
			ck_assert(all_zero(&ds, sizeof(ds)));
		} else {
			check_outcome(c, k, rc, &ds, &err, path, &ref, what);
		}
		if (k != PARLOAD__FK_LSEEK)
			ck_assert_msg(lseek(fd, 0, SEEK_CUR) == start,
				      "%s: the descriptor's offset moved", what);
		else
			ck_assert_int_ge(lseek(fd, start, SEEK_SET), 0);
		assert_as_before(&base, what);
		assert_loads_exactly(l, path, &ref, what);
	}
	printf("walk load_fd, %s: %" PRIu64 " faults (%s)\n", c->name, n - 1,
	       tally_text(&t));
	parload_loader_free(l);
	close(fd);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static uint64_t interruptible_mask(void);

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
	snapshot base;
	tu_soa ref;
	char *path = stream("pipe.raw", &ref);
	size_t len;
	unsigned char *data = tu_read_all(path, &len);
	tally t = { { 0 }, "" };
	char what[160];
	uint64_t n, intr;
	int rc;

	options(&o, config_of(tu_parallel(3)));
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	warm_up(l, path, &ref);
	ck_assert_int_eq(load_pipe(l, data, len, &ds, &err), 0);
	assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	parload__fault_reset();
	snap(&base);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "pipe, call %" PRIu64, n);
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = load_pipe(l, data, len, &ds, &err);
		k = fired(rc, &ds, &err, &ref, &t, what);
		if (k < 0)
			break;
		snprintf(what, sizeof(what), "pipe, call %" PRIu64 " (%s, %s)",
			 n, parload__fault_kind_name(k), parload_err_name(rc));
		if (k == PARLOAD__FK_FSTAT) {
			ck_assert_int_eq(rc, PARLOAD_EOPEN);
			ck_assert(all_zero(&ds, sizeof(ds)));
		} else {
			check_outcome(NULL, k, rc, &ds, &err, "pipe", &ref,
				      what);
		}
		assert_as_before(&base, what);
	}
	printf("walk pipe: %" PRIu64 " faults (%s)\n", n - 1, tally_text(&t));
	for (intr = 1;; intr++) {
		int k;

		parload__fault_fail_nth(intr, interruptible_mask(), EINTR);
		rc = load_pipe(l, data, len, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ck_assert_msg(rc == 0, "pipe, EINTR at call %" PRIu64 ": %s",
			      intr, err.message);
		assert_same(&ds, &ref);
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
		assert_same(&ds, &ref);
		parload_dataset_free(&ds);
	}
	assert_as_before(&base, "pipe");
	parload_loader_free(l);
	free(data);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- the writer ---- */

typedef struct shape {
	const char *name;
	uint64_t views;
	uint32_t width, height;
} shape;

/* Views that all fit the writer's 1 MiB buffer, and views bigger than it
 * (written straight from the caller's memory). */
static const shape shapes[] = {
	{ "small views", 5, 64, 64 },
	{ "views larger than the buffer", 3, 1200, 1000 },
};

/* Write the shape's stream with the writer API; returns the first
 * failure. */
static int write_stream(const char *path, const shape *s, parload_error *err)
{
	parload_file_header h;
	parload_writer *w = NULL;
	size_t ps;
	unsigned char *pix;
	int rc;

	ck_assert_int_eq(parload_file_header_init(&h, s->views, s->width,
						  s->height, PARLOAD_PIXEL_U8,
						  PARLOAD_FLAG_CRC32C), 0);
	ps = (size_t)h.payload_size;
	pix = malloc(ps);
	ck_assert_ptr_nonnull(pix);
	rc = parload_writer_open(&w, path, &h, err);
	if (rc) {
		ck_assert_ptr_null(w);
		free(pix);
		return rc;
	}
	for (uint64_t i = 0; i < s->views && rc == 0; i++) {
		parload_view_header vh;

		memset(&vh, 0, sizeof(vh));
		vh.timestamp_ns = 1000 * i;
		vh.angle_deg = (float)i;
		for (size_t b = 0; b < ps; b++)
			pix[b] = (unsigned char)(b * 7 + i * 13);
		rc = parload_writer_add(w, &vh, pix, err);
	}
	if (rc) {
		parload_error ignored;

		/* The writer must still be freed, and must not claim the
		 * short file is good. */
		ck_assert_int_ne(parload_writer_close(w, &ignored), 0);
	} else {
		rc = parload_writer_close(w, err);
	}
	free(pix);
	return rc;
}

static void assert_same_file(const char *a, const char *b, const char *what)
{
	size_t la, lb;
	unsigned char *x = tu_read_all(a, &la), *y = tu_read_all(b, &lb);

	ck_assert_msg(la == lb && memcmp(x, y, la) == 0,
		      "%s: %s differs from the reference", what, b);
	free(x);
	free(y);
}

START_TEST(test_walk_writer)
{
	const shape *s = &shapes[_i];
	char *ref = tu_path("wref.raw"), *out = tu_path("wout.raw");
	parload_error err;
	snapshot base;
	uint64_t calls, n;
	char what[160];
	tally t = { { 0 }, "" };
	int rc;

	parload__fault_reset();
	snap(&base);
	ck_assert_int_eq(write_stream(ref, s, &err), 0);
	calls = parload__fault_calls();
	assert_as_before(&base, s->name);
	for (n = 1;; n++) {
		int k;

		snprintf(what, sizeof(what), "writer, %s, call %" PRIu64,
			 s->name, n);
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = write_stream(out, s, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		assert_as_before(&base, what);
		if (k < 0) {
			ck_assert_msg(rc == 0, "%s: %s", what, err.message);
			break;
		}
		t.n[k]++;
		assert_failure(what, k, rc, &err, out, true);
	}
	ck_assert_uint_eq(n - 1, calls);
	assert_same_file(ref, out, s->name);
	printf("walk writer, %s: %" PRIu64 " faults (%s)\n", s->name, n - 1,
	       tally_text(&t));
	free(ref);
	free(out);
}
END_TEST

/* Short writes of 1 byte and of an odd size, and EINTR on every other
 * interruptible call, write the same file. */
START_TEST(test_writer_short_and_interrupted)
{
	const shape *s = &shapes[_i];
	char *ref = tu_path("wref.raw"), *out = tu_path("wout.raw");
	/* One-byte writes of the large shape would take seconds. */
	const size_t sizes[] = { _i == 0 ? 1 : 4093, 4093 };
	parload_error err;

	parload__fault_reset();
	ck_assert_int_eq(write_stream(ref, s, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		parload__fault_short(sizes[i]);
		ck_assert_int_eq(write_stream(out, s, &err), 0);
		parload__fault_reset();
		assert_same_file(ref, out, "short writes");
	}
	parload__fault_eintr_every(2);
	ck_assert_int_eq(write_stream(out, s, &err), 0);
	parload__fault_reset();
	assert_same_file(ref, out, "interrupted writes");
	free(ref);
	free(out);
}
END_TEST

/* ---- short reads and EINTR ---- */

/* Reads cut to 1 byte and to odd sizes load the same data.  stdio is left
 * out: a short fread means end of file or an error, and glibc loops over
 * the short reads beneath it itself; mmap makes no read calls. */
START_TEST(test_short_reads)
{
	const config *c = &configs[_i];
	const size_t sizes[] = { 1, 7, 37, 999 };
	parload_options o;
	parload_loader *l;
	parload_error err;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "short.raw", &ref);

	if (c->m->io == PARLOAD_IO_STDIO ||
	    c->m->strategy == PARLOAD_STRATEGY_MMAP)
		goto out;
	options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload__fault_reset();
	warm_up(l, path, &ref);
	snap(&base);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char what[160];
		parload_dataset ds;

		snprintf(what, sizeof(what), "%s, reads of at most %zu bytes",
			 c->name, sizes[i]);
		parload__fault_short(sizes[i]);
		ck_assert_int_eq(load(l, path, &ds, &err), 0);
		parload__fault_reset();
		assert_same(&ds, &ref);
		/* One-byte reads: one call a byte at the least. */
		if (sizes[i] == 1)
			ck_assert_uint_ge(ds.stats.read_calls,
					  tu_file_size(path));
		parload_dataset_free(&ds);
		assert_as_before(&base, what);
	}
	parload_loader_free(l);
out:
	tu_soa_free(&ref);
	free(path);
}
END_TEST

static uint64_t interruptible_mask(void)
{
	uint64_t m = 0;

	for (int k = 0; k < PARLOAD__FK_COUNT; k++)
		if (parload__fault_kind_interruptible(k))
			m |= (uint64_t)1 << k;
	return m;
}

/* EINTR at the N-th interruptible call, for every N: retried, and the
 * load is exact. */
START_TEST(test_walk_eintr)
{
	const config *c = &configs[_i];
	const uint64_t mask = interruptible_mask();
	parload_options o;
	parload_loader *l;
	parload_error err;
	parload_dataset ds;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "eintr.raw", &ref);
	tally t = { { 0 }, "" };
	uint64_t n;

	options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload__fault_reset();
	warm_up(l, path, &ref);
	snap(&base);
	for (n = 1;; n++) {
		int k, rc;

		parload__fault_fail_nth(n, mask, EINTR);
		rc = load(l, path, &ds, &err);
		k = parload__fault_fired();
		parload__fault_reset();
		ck_assert_msg(rc == 0, "%s: EINTR at %s (call %" PRIu64
			      "): %s", c->name, parload__fault_kind_name(k), n,
			      err.message);
		assert_same(&ds, &ref);
		parload_dataset_free(&ds);
		assert_as_before(&base, c->name);
		if (k < 0)
			break;
		t.n[k]++;
	}
	/* EINTR every other call, all through the load. */
	parload__fault_eintr_every(2);
	ck_assert_int_eq(load(l, path, &ds, &err), 0);
	parload__fault_reset();
	assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	printf("walk EINTR, %s: %" PRIu64 " interruptions (%s)\n", c->name,
	       n - 1, tally_text(&t));
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* ---- EIO at an offset ---- */

/* A bad sector at a given offset: the load fails with EIO naming that
 * offset and the view that holds it, and the loader is still usable. */
START_TEST(test_eio_at_offset)
{
	const config *c = &configs[_i];
	const uint64_t rec = PARLOAD_VIEW_HEADER_SIZE + WIDTH * HEIGHT * 2;
	const uint64_t vo3 = PARLOAD_FILE_HEADER_SIZE + 3 * rec;
	const uint64_t vo5 = PARLOAD_FILE_HEADER_SIZE + 5 * rec;
	parload_options o;
	parload_loader *l;
	parload_error err;
	snapshot base;
	tu_soa ref;
	char *path = stream_for(c, "eio.raw", &ref);
	const uint64_t offsets[] = {
		0, 20, PARLOAD_FILE_HEADER_SIZE, vo3 + 5,
		vo5 + PARLOAD_VIEW_HEADER_SIZE + 1001, tu_file_size(path) - 1,
	};

	/* A mapped file's I/O errors arrive as SIGBUS, not as a return
	 * value: not something this seam can inject. */
	if (c->m->strategy == PARLOAD_STRATEGY_MMAP)
		goto out;
	options(&o, c);
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload__fault_reset();
	warm_up(l, path, &ref);
	snap(&base);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		const uint64_t off = offsets[i];
		const uint64_t view =
			off < PARLOAD_FILE_HEADER_SIZE ?
				PARLOAD_NONE :
				(off - PARLOAD_FILE_HEADER_SIZE) / rec;
		char what[160], where[96];
		parload_dataset ds;
		int rc;

		snprintf(what, sizeof(what), "%s, EIO at byte %" PRIu64,
			 c->name, off);
		parload__fault_eio_at(off);
		rc = load(l, path, &ds, &err);
		parload__fault_reset();
		ck_assert_msg(rc == PARLOAD_EIO, "%s: returned %s: %s", what,
			      parload_err_name(rc), err.message);
		ck_assert_int_eq(err.sys_errno, EIO);
		ck_assert_msg(err.offset == off,
			      "%s: reported offset %" PRIu64 ": %s", what,
			      err.offset, err.message);
		ck_assert_msg(err.view == view,
			      "%s: reported view %" PRIu64 ", want %" PRIu64
			      ": %s", what, err.view, view, err.message);
		if (view == PARLOAD_NONE)
			snprintf(where, sizeof(where),
				 "(byte offset %" PRIu64 ")", off);
		else
			snprintf(where, sizeof(where),
				 "(view %" PRIu64 ", byte offset %" PRIu64 ")",
				 view, off);
		ck_assert_msg(strstr(err.message, where) &&
				      strstr(err.message, path) &&
				      strstr(err.message, strerror(EIO)),
			      "%s: message \"%s\" lacks \"%s\"", what,
			      err.message, where);
		ck_assert(all_zero(&ds, sizeof(ds)));
		assert_as_before(&base, what);
		assert_loads_exactly(l, path, &ref, what);
	}
	parload_loader_free(l);
out:
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* parload_buffers_alloc: every call it makes failed in turn.  A failed
 * mapping is PARLOAD_ENOMEM with nothing held and empty buffers; failed
 * advice costs nothing but the advice.  The buffers hold 4.3 MB of pixels,
 * so the aligned layout and its trimming are the ones walked. */
START_TEST(test_walk_buffers_alloc)
{
	parload_file_header h;
	parload_buffers b;
	parload_error err;
	snapshot base;
	uint64_t calls, n;
	char what[96];
	tally t = { { 0 }, "" };

	ck_assert_int_eq(parload_file_header_init(&h, 3, 1024, 700,
						  PARLOAD_PIXEL_U16, 0),
			 0);
	parload__fault_reset();
	snap(&base);
	ck_assert_int_eq(parload_buffers_alloc(&b, &h, 0, &err), 0);
	calls = parload__fault_calls();
	parload_buffers_free(&b);
	assert_as_before(&base, "buffers");
	for (n = 1;; n++) {
		int rc, k;

		snprintf(what, sizeof(what), "buffers, call %" PRIu64, n);
		memset(&err, 0, sizeof(err));
		parload__fault_fail_nth(n, PARLOAD__FK_ALL, 0);
		rc = parload_buffers_alloc(&b, &h, 0, &err);
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
		assert_as_before(&base, what);
	}
	ck_assert_uint_eq(n - 1, calls);
	ck_assert_uint_ge(calls, 2); /* the mapping and its advice */
	printf("walk buffers_alloc: %" PRIu64 " faults (%s)\n", n - 1,
	       tally_text(&t));
}
END_TEST

/* The seam itself: a normal load counts its calls, an armed fault fires
 * once and is reported, and the resource counts come back to zero. */
START_TEST(test_seam_counts_and_fires)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	char *path = stream("seam.raw", &ref);

	options(&o, config_of(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
					     PARLOAD_IO_POSIX, 0)));
	o.error = &err;
	parload__fault_reset();
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	ck_assert_uint_gt(parload__fault_calls(), 2 * VIEWS);
	ck_assert_int_eq(parload__fault_fired(), -1);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_MAP), 1);
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

	build_configs();
	t = tu_tcase(s, "seam", 0);
	tcase_add_test(t, test_seam_counts_and_fires);

	t = tu_tcase(s, "walk", 120);
	tcase_add_loop_test(t, test_walk_load, 0, n_configs);
	tcase_add_loop_test(t, test_walk_lifecycle, 0, n_configs);
	tcase_add_loop_test(t, test_walk_writer, 0, 2);
	tcase_add_test(t, test_walk_bind);
	tcase_add_loop_test(t, test_walk_load_fd, 0, N_FD_CONFIGS);
	tcase_add_test(t, test_walk_pipe);
	tcase_add_test(t, test_walk_buffers_alloc);

	t = tu_tcase(s, "retry", 60);
	tcase_add_loop_test(t, test_short_reads, 0, n_configs);
	tcase_add_loop_test(t, test_walk_eintr, 0, n_configs);
	tcase_add_loop_test(t, test_writer_short_and_interrupted, 0, 2);

	t = tu_tcase(s, "eio", 0);
	tcase_add_loop_test(t, test_eio_at_offset, 0, n_configs);
	return s;
}

int main(void)
{
	return tu_run(suite());
}

#endif /* PARLOAD_FAULT_INJECTION */
