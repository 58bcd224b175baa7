/*
 * faults.c - the ground the fault walks share (see faults.h).
 */
#include "config.h"

#include <stdio.h>

#include "faults.h"

int ft_skip(const char *program)
{
	printf("%s: SKIP: the fault-injection seam is not built; configure "
	       "with --enable-fault-injection to run these tests\n",
	       program);
	return 77;
}

#ifdef PARLOAD_FAULT_INJECTION

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ft_config ft_configs[TU_MATRIX_MAX + 2];
int ft_n_configs;

static void add_config(const tu_config *m, unsigned flags, const char *how)
{
	ft_config *c = &ft_configs[ft_n_configs++];

	c->m = m;
	c->flags = flags;
	snprintf(c->name, sizeof(c->name), "%s%s", m->label, how);
}

void ft_build_configs(void)
{
	for (int i = 0; i < tu_matrix_size(); i++)
		add_config(tu_matrix(i), 0, "");
	add_config(tu_parallel(3), FT_CRC_KEEP_GOING,
		   ", CRCs checked, keep going");
	add_config(tu_matrix_find(PARLOAD_STRATEGY_SEQUENTIAL, 0,
				  PARLOAD_IO_POSIX, 0),
		   FT_CRC_KEEP_GOING, ", CRCs checked, keep going");
}

/* The configuration for m with no flags. */
const ft_config *ft_config_of(const tu_config *m)
{
	return &ft_configs[m - tu_matrix(0)];
}

void ft_options(parload_options *o, const ft_config *c)
{
	tu_config_options(o, c->m, c->flags);
	/* A single-threaded strategy is given one thread: with the default,
	 * its loader would start a pool whose workers bind themselves at
	 * moments a walk cannot foresee. */
	if (!o->threads)
		o->threads = 1;
	o->max_read = FT_MAX_READ;
}

/* The configuration under test: what a good dataset must hold besides the
 * file's bytes. */
static const ft_config *current;

/* Write the test stream (for c, or the plain one when c is NULL) and read
 * the reference. */
char *ft_stream_for(const ft_config *c, const char *name, tu_soa *ref)
{
	char *path = tu_path(name);
	const bool crc = c && (c->flags & PARLOAD_OPT_VERIFY_CRC);

	current = c;
	tu_write_stream(path, FT_VIEWS, FT_WIDTH, FT_HEIGHT, PARLOAD_PIXEL_U16,
			crc ? PARLOAD_FLAG_CRC32C : 0, FT_SEED);
	if (crc) {
		const unsigned char junk = 0xee;

		tu_patch(path,
			 tu_payload_off(FT_WIDTH * FT_HEIGHT * 2, FT_BAD_VIEW) +
				 17,
			 &junk, 1);
	}
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	return path;
}

char *ft_stream(const char *name, tu_soa *ref)
{
	return ft_stream_for(NULL, name, ref);
}

/* A good dataset: the file's bytes, and the bad view listed when CRCs
 * were checked. */
void ft_assert_same(const parload_dataset *ds, const tu_soa *ref)
{
	tu_assert_same(ds, ref);
	if (current && (current->flags & PARLOAD_OPT_KEEP_GOING)) {
		ck_assert_uint_eq(ds->bad_view_count, 1);
		ck_assert_uint_eq(ds->bad_views[0], FT_BAD_VIEW);
		ck_assert_uint_eq(ds->stats.crc_checked, FT_VIEWS);
	} else {
		ck_assert_uint_eq(ds->bad_view_count, 0);
	}
}

/* ---- what the process holds ---- */

static void snap_now(ft_snapshot *s)
{
	for (int r = 0; r < PARLOAD__FR_COUNT; r++)
		s->live[r] = parload__fault_live(r);
	s->tasks = tu_count_entries("/proc/self/task");
	s->fds = tu_count_entries("/proc/self/fd");
}

/*
 * A base to compare with: what the process holds once its thread count
 * has settled.  A base is taken right after a load, whose workers were
 * joined just before, and a joined thread can linger in /proc/self/task
 * for a moment (see ft_assert_as_before): counted, it made a base one
 * thread too many, and a later check that found the process as it was
 * failed.  So the count is read again, a millisecond apart, until three
 * readings in a row agree (a second at most).
 */
void ft_snap(ft_snapshot *s)
{
	snap_now(s);
	for (int same = 0, tries = 0; same < 3 && tries < 1000; tries++) {
		ft_snapshot again;

		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		snap_now(&again);
		if (again.tasks == s->tasks) {
			same++;
		} else {
			same = 0;
			*s = again;
		}
	}
}

/*
 * Assert that the process holds what it held at base.  A joined thread
 * can linger in /proc/self/task for a moment after pthread_join returns
 * (the kernel wakes the joiner before it unlists the thread), so the
 * thread count is given a second to settle; nothing else is.
 */
void ft_assert_as_before(const ft_snapshot *base, const char *what)
{
	ft_snapshot now;

	for (int tries = 0;; tries++) {
		snap_now(&now);
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

bool ft_all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

const char *ft_tally_text(ft_tally *t)
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
	case PARLOAD__FK_FCNTL:  /* the stdio reader's copy of the descriptor */
	case PARLOAD__FK_FDOPEN: /* and its stream */
		return PARLOAD_EOPEN;
	case PARLOAD__FK_WRITE:
	case PARLOAD__FK_RENAME:
	case PARLOAD__FK_MKDIR:
	case PARLOAD__FK_OPENDIR:
		return PARLOAD_EWRITE;
	case PARLOAD__FK_RMDIR:  /* removing what a failure left */
	case PARLOAD__FK_UNLINK:
		return 0;
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
	case PARLOAD__FK_POLL:
	case PARLOAD__FK_IO_GETEVENTS:
	case PARLOAD__FK_IO_URING_ENTER: /* waiting (handing over: below) */
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
	case PARLOAD__FK_FADVISE: /* drop: the pages stay cached */
	case PARLOAD__FK_MINCORE: /* auto: the file looks cold */
	case PARLOAD__FK_IO_SETUP: /* direct: reads synchronous (aio.c) */
	case PARLOAD__FK_IO_SUBMIT: /* this read synchronous */
	case PARLOAD__FK_IO_URING_SETUP: /* direct: Linux AIO instead */
		return 0;
	default: /* fclose, madvise, the bindings, stat (which only tells a
		  * FIFO, or a dangling link in a message), and
		  * process_vm_readv, after which the mmap strategy copies
		  * with preadv */
		return 0;
	}
}

/* Whether a failure of kind k may also end in success (with exact data):
 * the calls that serve only the stdio read counters (open and pread of
 * /proc/thread-self/io) and the per-thread binding's bitmap. */
bool ft_may_succeed(const ft_config *c, int k)
{
	if (code_for(k, false) == 0)
		return true;
	/* Mapped sinograms: a window of the file the kernel would not map,
	 * or a batch whose place in the file could not be checked, is
	 * read instead. */
	if (c && (c->flags & PARLOAD_OPT_MAP_SINOGRAMS) &&
	    (k == PARLOAD__FK_MMAP || k == PARLOAD__FK_FSTAT))
		return true;
	if (c && c->m->io == PARLOAD_IO_STDIO &&
	    parload_strategy_uses_io(c->m->strategy) &&
	    (k == PARLOAD__FK_OPEN || k == PARLOAD__FK_PREAD))
		return true;
	/* io_uring_enter refusing a read hands it back to its worker, who
	 * reads it synchronously. */
	return k == PARLOAD__FK_BITMAP_ALLOC || k == PARLOAD__FK_IO_URING_ENTER;
}

/* The errno an I/O failure must pass on in sys_errno. */
static bool passes_errno(int k)
{
	const uint64_t io = PARLOAD__FK_BIT(OPEN) | PARLOAD__FK_BIT(FOPEN) |
			    PARLOAD__FK_BIT(FSTAT) | PARLOAD__FK_BIT(READ) |
			    PARLOAD__FK_BIT(PREAD) | PARLOAD__FK_BIT(PREADV) |
			    PARLOAD__FK_BIT(LSEEK) | PARLOAD__FK_BIT(FREAD) |
			    PARLOAD__FK_BIT(FSEEKO) | PARLOAD__FK_BIT(WRITE) |
			    PARLOAD__FK_BIT(MMAP) | PARLOAD__FK_BIT(FCNTL) |
			    PARLOAD__FK_BIT(FDOPEN) | PARLOAD__FK_BIT(POLL) |
			    PARLOAD__FK_BIT(IO_GETEVENTS) |
			    PARLOAD__FK_BIT(IO_URING_ENTER);

	return io >> k & 1;
}

void ft_assert_failure(const char *what, int k, int rc,
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

int ft_load(parload_loader *l, const char *path, parload_dataset *ds,
		parload_error *err)
{
	/* Garbage in: a failed load must leave the dataset zeroed. */
	memset(ds, 0x5a, sizeof(*ds));
	memset(err, 0, sizeof(*err));
	return tu_load(l, path, NULL, NULL, ds, err);
}

void ft_assert_loads_exactly(parload_loader *l, const char *path,
				 const tu_soa *ref, const char *what)
{
	parload_dataset ds;
	parload_error err;
	int rc = ft_load(l, path, &ds, &err);

	ck_assert_msg(rc == 0, "%s: %s", what, err.message);
	ft_assert_same(&ds, ref);
	parload_dataset_free(&ds);
}

/* A first load: the pool's workers bind themselves as they start, after
 * parload_loader_new() has returned, and are sure to have done so only
 * once they have run a job.  Snapshots are taken after this. */
void ft_warm_up(parload_loader *l, const char *path, const tu_soa *ref)
{
	ft_assert_loads_exactly(l, path, ref, "first load");
}

parload_loader *ft_warm_loader(const ft_config *c, const char *path,
			       const tu_soa *ref, ft_snapshot *base)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	ft_options(&o, c);
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s: %s",
		      c->name, err.message);
	parload__fault_reset();
	ft_warm_up(l, path, ref);
	ft_snap(base);
	return l;
}

/*
 * After a load with a fault armed: the outcome is right for the fault
 * that fired (k, or -1 if none did), and nothing is left behind.
 */
void ft_check_outcome(const ft_config *c, int k, int rc, parload_dataset *ds,
			  const parload_error *err, const char *path,
			  const tu_soa *ref, const char *what)
{
	if (rc == 0) {
		ck_assert_msg(k < 0 || ft_may_succeed(c, k),
			      "%s: %s failed, yet the load succeeded", what,
			      parload__fault_kind_name(k));
		ft_assert_same(ds, ref);
		parload_dataset_free(ds);
		return;
	}
	ck_assert_msg(k >= 0, "%s: failed with no fault: %s", what,
		      err->message);
	ft_assert_failure(what, k, rc, err, path, false);
	ck_assert_msg(ft_all_zero(ds, sizeof(*ds)),
		      "%s: %s failed and the dataset was not zeroed", what,
		      parload__fault_kind_name(k));
}

/*
 * After an attempt with a fault armed at the N-th call: the kind of call
 * that failed, or -1 if the attempt ran past its last call with none
 * failing, and the seam disarmed.  That last attempt must have loaded
 * exactly ref (its dataset is freed); a failure is tallied in t.
 */
int ft_fired(int rc, parload_dataset *ds, const parload_error *err,
		 const tu_soa *ref, ft_tally *t, const char *what)
{
	int k = parload__fault_fired();

	parload__fault_reset();
	if (k < 0) {
		ck_assert_msg(rc == 0, "%s: %s", what, err->message);
		ft_assert_same(ds, ref);
		parload_dataset_free(ds);
	} else {
		t->n[k]++;
	}
	return k;
}

uint64_t ft_interruptible_mask(void)
{
	uint64_t m = 0;

	for (int k = 0; k < PARLOAD__FK_COUNT; k++)
		if (parload__fault_kind_interruptible(k))
			m |= (uint64_t)1 << k;
	return m;
}

/* ---- the writer ---- */

/* Views that all fit the writer's 1 MiB buffer, and views bigger than it
 * (written straight from the caller's memory). */
const ft_shape ft_shapes[FT_N_SHAPES] = {
	{ "small views", 5, 64, 64 },
	{ "views larger than the buffer", 3, 1200, 1000 },
};

/* Write the shape's stream with the writer API; returns the first
 * failure. */
int ft_write_stream(const char *path, const ft_shape *s, parload_error *err)
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

void ft_assert_same_file(const char *a, const char *b, const char *what)
{
	size_t la, lb;
	unsigned char *x = tu_read_all(a, &la), *y = tu_read_all(b, &lb);

	ck_assert_msg(la == lb && memcmp(x, y, la) == 0,
		      "%s: %s differs from the reference", what, b);
	free(x);
	free(y);
}

#endif /* PARLOAD_FAULT_INJECTION */
