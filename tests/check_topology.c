/*
 * check_topology.c - worker placement over known topologies, and the
 * persistent worker pool.
 *
 * Placement is tested on synthetic hwloc topologies (several NUMA nodes,
 * nodes of unequal size, nodes that do not contain whole cores), which
 * describe machines other than this one; the real machine is only asked
 * for what holds everywhere.
 */
#include "internal.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <hwloc.h>

#include "testutil.h"

/* ---- helpers ---- */

static hwloc_topology_t load_synthetic(const char *desc)
{
	hwloc_topology_t h;

	ck_assert_int_eq(hwloc_topology_init(&h), 0);
	ck_assert_int_eq(hwloc_topology_set_synthetic(h, desc), 0);
	ck_assert_int_eq(hwloc_topology_load(h), 0);
	return h;
}

/* Wrap a synthetic topology; *h keeps a (borrowed) handle on it. */
static parload__topology *synthetic(const char *desc, hwloc_topology_t *h)
{
	parload__topology *t = NULL;
	parload_error err;
	hwloc_topology_t hh = load_synthetic(desc);

	ck_assert_int_eq(parload__topology_wrap(&t, hh, &err), 0);
	ck_assert_ptr_nonnull(t);
	if (h)
		*h = hh;
	return t;
}

static parload__place *place(parload__topology *t, unsigned n)
{
	parload__place *p = calloc(n, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	parload__topology_place(t, n, 0, p);
	return p;
}

/* The first `cores` places name each core once, and each on its node. */
static void assert_each_core_once_on_its_node(hwloc_topology_t h,
					      const parload__place *p,
					      unsigned cores)
{
	unsigned char *used = calloc(cores, 1);

	ck_assert_ptr_nonnull(used);
	for (unsigned w = 0; w < cores; w++) {
		hwloc_obj_t core, node;

		ck_assert_int_ge(p[w].core, 0);
		ck_assert_int_lt(p[w].core, (int)cores);
		ck_assert_msg(!used[p[w].core], "core %d placed twice",
			      p[w].core);
		used[p[w].core] = 1;
		core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, p[w].core);
		node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, p[w].node);
		ck_assert_ptr_nonnull(core);
		ck_assert_ptr_nonnull(node);
		ck_assert_msg(hwloc_bitmap_isincluded(core->cpuset,
						      node->cpuset),
			      "worker %u: core %d is not on node %d", w,
			      p[w].core, p[w].node);
	}
	free(used);
}

/* ---- placement on synthetic topologies ---- */

START_TEST(test_counts_two_packages)
{
	parload__topology *t = synthetic("pack:2 numa:2 core:4 pu:2", NULL);

	ck_assert_uint_eq(parload__topology_cores(t), 16);
	ck_assert_uint_eq(parload__topology_nodes(t), 4);
	ck_assert(!parload__topology_is_this_system(t));
	parload__topology_close(t);
}
END_TEST

START_TEST(test_workers_rotate_over_nodes)
{
	hwloc_topology_t h;
	parload__topology *t = synthetic("pack:2 numa:2 core:4 pu:2", &h);
	parload__place *p = place(t, 16);

	/* node 0, 1, 2, 3, 0, 1, ...: one core of each node per round */
	for (unsigned w = 0; w < 16; w++)
		ck_assert_int_eq(p[w].node, (int)(w % 4));
	assert_each_core_once_on_its_node(h, p, 16);
	/* within a node, cores are taken in order */
	for (unsigned w = 4; w < 16; w++)
		ck_assert_int_eq(p[w].core, p[w - 4].core + 1);
	free(p);
	parload__topology_close(t);
}
END_TEST

START_TEST(test_fewer_workers_than_nodes_use_distinct_nodes)
{
	parload__topology *t = synthetic("numa:4 core:3 pu:1", NULL);
	parload__place *p = place(t, 3);

	ck_assert_uint_eq(parload__topology_cores(t), 12);
	ck_assert_uint_eq(parload__topology_nodes(t), 4);
	ck_assert_int_eq(p[0].node, 0);
	ck_assert_int_eq(p[1].node, 1);
	ck_assert_int_eq(p[2].node, 2);
	free(p);
	parload__topology_close(t);
}
END_TEST

START_TEST(test_more_workers_than_cores_wrap)
{
	hwloc_topology_t h;
	parload__topology *t = synthetic("numa:4 core:3 pu:1", &h);
	parload__place *p = place(t, 40);

	assert_each_core_once_on_its_node(h, p, 12);
	for (unsigned w = 12; w < 40; w++) {
		ck_assert_int_eq(p[w].core, p[w % 12].core);
		ck_assert_int_eq(p[w].node, p[w % 12].node);
	}
	free(p);
	parload__topology_close(t);
}
END_TEST

START_TEST(test_one_worker)
{
	parload__topology *t = synthetic("numa:4 core:3 pu:1", NULL);
	parload__place p = { -1, -1 };

	parload__topology_place(t, 1, 0, &p);
	ck_assert_int_eq(p.core, 0);
	ck_assert_int_eq(p.node, 0);
	parload__topology_close(t);
}
END_TEST

START_TEST(test_single_node)
{
	hwloc_topology_t h;
	parload__topology *t = synthetic("core:2 pu:2", &h);
	parload__place *p = place(t, 3);

	ck_assert_uint_eq(parload__topology_cores(t), 2);
	ck_assert_uint_eq(parload__topology_nodes(t), 1);
	assert_each_core_once_on_its_node(h, p, 2);
	ck_assert_int_eq(p[0].core, 0);
	ck_assert_int_eq(p[1].core, 1);
	ck_assert_int_eq(p[2].core, 0);
	for (unsigned w = 0; w < 3; w++)
		ck_assert_int_eq(p[w].node, 0);
	free(p);
	parload__topology_close(t);
}
END_TEST

/* Three nodes of 4, 1 and 3 cores: a node that runs out drops out of the
 * rotation, the others go on taking turns, and no core is used twice. */
START_TEST(test_unequal_nodes)
{
	hwloc_topology_t h = load_synthetic("numa:3 core:4 pu:1");
	hwloc_bitmap_t keep = hwloc_bitmap_alloc();
	parload__topology *t = NULL;
	parload_error err;
	parload__place *p;
	const int nodes[8] = { 0, 1, 2, 0, 2, 0, 2, 0 };

	ck_assert_ptr_nonnull(keep);
	hwloc_bitmap_set_range(keep, 0, 4);   /* node 0: all 4, node 1: one */
	hwloc_bitmap_set_range(keep, 8, 10);  /* node 2: three of 4 */
	ck_assert_int_eq(hwloc_topology_restrict(h, keep, 0), 0);
	hwloc_bitmap_free(keep);
	ck_assert_int_eq(parload__topology_wrap(&t, h, &err), 0);

	ck_assert_uint_eq(parload__topology_cores(t), 8);
	ck_assert_uint_eq(parload__topology_nodes(t), 3);
	p = place(t, 8);
	for (unsigned w = 0; w < 8; w++)
		ck_assert_int_eq(p[w].node, nodes[w]);
	assert_each_core_once_on_its_node(h, p, 8);
	free(p);
	parload__topology_close(t);
}
END_TEST

/* Here each PU has its own NUMA node, so no node holds a whole core: a
 * core is placed on the first node it shares a CPU with. */
START_TEST(test_nodes_smaller_than_cores)
{
	hwloc_topology_t h;
	parload__topology *t = synthetic("core:2 pu:2 [numa]", &h);
	parload__place *p = place(t, 2);

	ck_assert_int_eq(hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE), 4);
	ck_assert_uint_eq(parload__topology_cores(t), 2);
	ck_assert_uint_eq(parload__topology_nodes(t), 2);
	for (unsigned w = 0; w < 2; w++) {
		hwloc_obj_t core =
			hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, p[w].core);
		hwloc_obj_t node = hwloc_get_obj_by_type(
			h, HWLOC_OBJ_NUMANODE, p[w].node);

		ck_assert(hwloc_bitmap_intersects(core->cpuset, node->cpuset));
	}
	ck_assert_int_ne(p[0].core, p[1].core);
	ck_assert_int_ne(p[0].node, p[1].node);
	free(p);
	parload__topology_close(t);
}
END_TEST

/* A synthetic topology is another machine: binding does nothing. */
START_TEST(test_synthetic_binds_nothing)
{
	parload__topology *t = synthetic("pack:2 numa:2 core:4 pu:2", NULL);
	parload__place p = { 7, 3 };
	cpu_set_t before, after;
	static char buf[1 << 16];

	ck_assert_int_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	ck_assert_int_eq(parload__topology_bind_thread(t, &p), 0);
	ck_assert_int_eq(parload__topology_bind_memory(t, &p, buf,
						       sizeof(buf)), 0);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(after), &after), 0);
	ck_assert(CPU_EQUAL(&before, &after));
	parload__topology_close(t);
}
END_TEST

START_TEST(test_wrap_null_fails_with_message)
{
	parload__topology *t = (parload__topology *)&t;
	parload_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload__topology_wrap(&t, NULL, &err),
			 PARLOAD_EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(err.code, PARLOAD_EINVAL);
	ck_assert_str_ne(err.message, "");
	ck_assert_ptr_null(strstr(err.message, "NULL"));
	ck_assert_ptr_null(strstr(err.message, "(null)"));
}
END_TEST

/* ---- this machine, and the environment ---- */

START_TEST(test_this_system)
{
	parload__topology *t = NULL;
	parload_error err;
	unsigned cores;
	parload__place *p;

	ck_assert_int_eq(parload__topology_open(&t, &err), 0);
	ck_assert(parload__topology_is_this_system(t));
	cores = parload__topology_cores(t);
	ck_assert_uint_ge(cores, 1);
	ck_assert_uint_ge(parload__topology_nodes(t), 1);
	ck_assert_uint_le(parload__topology_nodes(t), cores);
	p = place(t, cores);
	for (unsigned a = 0; a < cores; a++)
		for (unsigned b = a + 1; b < cores; b++)
			ck_assert_int_ne(p[a].core, p[b].core);
	free(p);
	parload__topology_close(t);
}
END_TEST

struct bind_check {
	parload__topology *t;
	parload__place place;
	int ret;
	cpu_set_t after;
};

static void *bind_in_thread(void *arg)
{
	struct bind_check *b = arg;

	b->ret = parload__topology_bind_thread(b->t, &b->place);
	sched_getaffinity(0, sizeof(b->after), &b->after);
	return NULL;
}

/* Binding a thread to the last worker's core leaves it only that core's
 * CPUs (checked against an independent hwloc view of the machine). */
START_TEST(test_bind_thread_this_system)
{
	struct bind_check b;
	parload_error err;
	pthread_t th;
	hwloc_topology_t h;
	hwloc_obj_t core;
	unsigned cores;

	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(parload__topology_open(&b.t, &err), 0);
	cores = parload__topology_cores(b.t);
	{
		parload__place *p = place(b.t, cores);

		b.place = p[cores - 1];
		free(p);
	}
	ck_assert_int_eq(pthread_create(&th, NULL, bind_in_thread, &b), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(b.ret, 0);

	ck_assert_int_eq(hwloc_topology_init(&h), 0);
	ck_assert_int_eq(hwloc_topology_load(h), 0);
	core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, b.place.core);
	ck_assert_ptr_nonnull(core);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &b.after))
			ck_assert_msg(hwloc_bitmap_isset(core->cpuset, cpu),
				      "cpu %d is outside core %d", cpu,
				      b.place.core);
	ck_assert_int_gt(CPU_COUNT(&b.after), 0);
	hwloc_topology_destroy(h);

	/* One node here at most matters: binding memory is then a no-op,
	 * and on several nodes it must at least not fail on a mapping. */
	{
		static char buf[1 << 16];

		ck_assert_int_eq(parload__topology_bind_memory(
					 b.t, &b.place, buf, sizeof(buf)),
				 0);
	}
	parload__topology_close(b.t);
}
END_TEST

START_TEST(test_env_synthetic_honoured)
{
	parload__topology *t = NULL;
	parload_error err;

	ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", "numa:3 core:2 pu:1", 1),
			 0);
	ck_assert_int_eq(parload__topology_open(&t, &err), 0);
	unsetenv("HWLOC_SYNTHETIC");
	ck_assert_uint_eq(parload__topology_nodes(t), 3);
	ck_assert_uint_eq(parload__topology_cores(t), 6);
	ck_assert(!parload__topology_is_this_system(t));
	parload__topology_close(t);
}
END_TEST

START_TEST(test_env_xmlfile_honoured)
{
	hwloc_topology_t h = load_synthetic("pack:5 core:2 pu:2");
	const char *dir = getenv("TMPDIR");
	char path[4096];
	parload__topology *t = NULL;
	parload_error err;
	int fd;

	snprintf(path, sizeof(path), "%s/check_topology_XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(hwloc_topology_export_xml(h, path, 0), 0);
	hwloc_topology_destroy(h);

	ck_assert_int_eq(setenv("HWLOC_XMLFILE", path, 1), 0);
	ck_assert_int_eq(parload__topology_open(&t, &err), 0);
	unsetenv("HWLOC_XMLFILE");
	unlink(path);
	ck_assert_uint_eq(parload__topology_cores(t), 10);
	ck_assert_uint_eq(parload__topology_nodes(t), 1);
	ck_assert(!parload__topology_is_this_system(t));
	parload__topology_close(t);
}
END_TEST

/* ---- the pool ---- */

#define RUNS 10000

struct counter {
	unsigned n;
	unsigned long run;       /* set by the caller before each run */
	unsigned long *count;    /* runs done, per worker */
	unsigned *started;       /* start callbacks, per worker */
	unsigned bad;            /* jobs that saw something wrong */
	pthread_mutex_t lock;
};

static void counter_init(struct counter *c, unsigned n)
{
	memset(c, 0, sizeof(*c));
	c->n = n;
	c->count = calloc(n, sizeof(*c->count));
	c->started = calloc(n, sizeof(*c->started));
	ck_assert_ptr_nonnull(c->count);
	ck_assert_ptr_nonnull(c->started);
	pthread_mutex_init(&c->lock, NULL);
}

static void counter_free(struct counter *c)
{
	free(c->count);
	free(c->started);
	pthread_mutex_destroy(&c->lock);
}

static void count_start(void *arg, unsigned w)
{
	struct counter *c = arg;

	pthread_mutex_lock(&c->lock);
	if (w >= c->n)
		c->bad++;
	else
		c->started[w]++;
	pthread_mutex_unlock(&c->lock);
}

/* Each worker writes only its own slot; the run number was written before
 * the run started, so both are race-free if the pool is. */
static void count_job(void *arg, unsigned w)
{
	struct counter *c = arg;
	bool ok = w < c->n;

	if (ok) {
		ok = c->count[w] == c->run;
		c->count[w]++;
	}
	if (!ok) {
		pthread_mutex_lock(&c->lock);
		c->bad++;
		pthread_mutex_unlock(&c->lock);
	}
}

static void run_many(unsigned n, unsigned long runs)
{
	struct counter c;
	parload__pool *p = NULL;
	parload_error err;

	counter_init(&c, n);
	ck_assert_int_eq(parload__pool_new(&p, n, count_start, &c, &err), 0);
	for (c.run = 0; c.run < runs; c.run++) {
		parload__pool_run(p, count_job, &c, NULL);
		/* every worker has finished this run when run returns */
		for (unsigned w = 0; w < n; w++)
			ck_assert_uint_eq(c.count[w], c.run + 1);
	}
	parload__pool_free(p);
	ck_assert_uint_eq(c.bad, 0);
	for (unsigned w = 0; w < n; w++) {
		ck_assert_uint_eq(c.count[w], runs);
		ck_assert_uint_eq(c.started[w], 1);
	}
	counter_free(&c);
}

static unsigned long runs_wanted(void)
{
	/* fewer under valgrind or a sanitizer, where each run is slow */
	const char *s = getenv("PARLOAD_TEST_POOL_RUNS");

	return s ? strtoul(s, NULL, 10) : RUNS;
}

START_TEST(test_pool_each_worker_once_per_run_8)
{
	run_many(8, runs_wanted());
}
END_TEST

START_TEST(test_pool_each_worker_once_per_run_1)
{
	run_many(1, runs_wanted());
}
END_TEST

START_TEST(test_pool_free_without_run)
{
	struct counter c;
	parload__pool *p = NULL;
	parload_error err;

	counter_init(&c, 8);
	ck_assert_int_eq(parload__pool_new(&p, 8, count_start, &c, &err), 0);
	parload__pool_free(p);
	for (unsigned w = 0; w < 8; w++)
		ck_assert_uint_eq(c.started[w], 1);
	ck_assert_uint_eq(c.bad, 0);
	counter_free(&c);
}
END_TEST

START_TEST(test_pool_without_start_callback)
{
	struct counter c;
	parload__pool *p = NULL;
	parload_error err;

	counter_init(&c, 3);
	ck_assert_int_eq(parload__pool_new(&p, 3, NULL, NULL, &err), 0);
	parload__pool_run(p, count_job, &c, NULL);
	parload__pool_free(p);
	for (unsigned w = 0; w < 3; w++)
		ck_assert_uint_eq(c.count[w], 1);
	counter_free(&c);
}
END_TEST

START_TEST(test_pool_zero_workers_refused)
{
	parload__pool *p = (parload__pool *)&p;
	parload_error err;

	ck_assert_int_eq(parload__pool_new(&p, 0, NULL, NULL, &err),
			 PARLOAD_EINVAL);
	ck_assert_ptr_null(p);
}
END_TEST

struct masks {
	pthread_mutex_t lock;
	unsigned int_open, segv_blocked;
};

static void check_mask(void *arg, unsigned w)
{
	struct masks *m = arg;
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	pthread_mutex_lock(&m->lock);
	if (!sigismember(&cur, SIGINT) || !sigismember(&cur, SIGTERM) ||
	    !sigismember(&cur, SIGUSR1))
		m->int_open++;
	if (sigismember(&cur, SIGSEGV) || sigismember(&cur, SIGBUS))
		m->segv_blocked++;
	pthread_mutex_unlock(&m->lock);
}

/* Workers keep asynchronous signals away from themselves (the
 * application's threads handle them) but not fault signals; the caller's
 * own mask is left as it was. */
START_TEST(test_pool_workers_block_signals)
{
	struct masks m = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };
	parload__pool *p = NULL;
	parload_error err;
	sigset_t before, after;

	pthread_sigmask(SIG_BLOCK, NULL, &before);
	ck_assert(!sigismember(&before, SIGUSR1));
	ck_assert_int_eq(parload__pool_new(&p, 4, NULL, NULL, &err), 0);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	ck_assert(!sigismember(&after, SIGUSR1));
	ck_assert(!sigismember(&after, SIGINT));
	parload__pool_run(p, check_mask, &m, NULL);
	parload__pool_free(p);
	ck_assert_uint_eq(m.int_open, 0);
	ck_assert_uint_eq(m.segv_blocked, 0);
}
END_TEST

static unsigned threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static unsigned long vm_size_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kb = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	return kb * 1024;
}

/* When a thread cannot be created (here: the address space limit leaves
 * room for a few 8 MiB stacks, not for 64), the pool fails with ETHREAD
 * and no thread is left behind.  Part 1 (check_topology_rlimit): it
 * skips where the limit cannot be used (sanitizers and valgrind map their
 * own memory) or the stack limit does not size the threads' stacks. */
START_TEST(test_pool_thread_failure_leaves_nothing)
{
	struct rlimit saved, lim, stack;
	struct counter c;
	parload__pool *p = (parload__pool *)&p;
	parload_error err;
	unsigned before;
	int ret;

	ck_assert_int_eq(getrlimit(RLIMIT_STACK, &stack), 0);
	counter_init(&c, 64);
	before = threads_now();
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved), 0);
	lim = saved;
	lim.rlim_cur = vm_size_bytes() + 3 * stack.rlim_cur;
	if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < lim.rlim_cur)
		lim.rlim_cur = saved.rlim_cur;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
	memset(&err, 0, sizeof(err));
	ret = parload__pool_new(&p, 64, count_start, &c, &err);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved), 0);

	ck_assert_int_eq(ret, PARLOAD_ETHREAD);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(err.code, PARLOAD_ETHREAD);
	ck_assert_int_ne(err.sys_errno, 0);
	ck_assert_ptr_nonnull(strstr(err.message, "worker thread"));
	ck_assert_uint_eq(threads_now(), before);
	/* the threads that did start ran their start callback and left */
	for (unsigned w = 0; w < 64; w++)
		ck_assert_uint_le(c.started[w], 1);
	ck_assert_uint_eq(c.bad, 0);
	counter_free(&c);
}
END_TEST

static const char *why_no_thread_limit(void)
{
	struct rlimit stack;

	if (tu_why_no_rlimit())
		return tu_why_no_rlimit();
	if (getrlimit(RLIMIT_STACK, &stack) != 0 ||
	    stack.rlim_cur == RLIM_INFINITY || stack.rlim_cur < (1 << 20))
		return "the stack limit is unlimited or under 1 MiB: threads' "
		       "stacks too small to exhaust the address space quickly";
	return NULL;
}

/* ---- the loader's workers: how many, and where ---- */

static void nothing(void *arg, unsigned w)
{
	(void)arg;
	(void)w;
}

static void clear_hwloc_env(void)
{
	unsetenv("HWLOC_SYNTHETIC");
	unsetenv("HWLOC_XMLFILE");
	unsetenv("HWLOC_FSROOT");
}

/* Whether this machine has more than one NUMA node (the loader then asks
 * hwloc, which counts cores rather than CPUs). */
static bool several_nodes(void)
{
	return access("/sys/devices/system/node/node1", F_OK) == 0;
}

/* Threads of this process whose affinity is narrower than full. */
static unsigned tasks_narrowed(const cpu_set_t *full)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		cpu_set_t set;

		if (e->d_name[0] == '.')
			continue;
		if (sched_getaffinity((pid_t)atoi(e->d_name), sizeof(set),
				      &set) == 0 &&
		    !CPU_EQUAL(&set, full))
			n++;
	}
	closedir(d);
	return n;
}

/* The same once the threads joined just before have left: a joined
 * thread can linger in /proc/self/task for a moment after
 * pthread_join returns, still bound (a second at most). */
static unsigned narrowed_after_join(const cpu_set_t *full)
{
	unsigned n = tasks_narrowed(full);

	for (int tries = 0; n > 0 && tries < 1000; tries++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		n = tasks_narrowed(full);
	}
	return n;
}

/* Make a loader and run one job on its workers: each has started (and
 * bound itself, if it binds) by the time the job returns. */
static parload_loader *started_loader(const parload_options *o)
{
	parload_loader *l = NULL;
	parload_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_msg(parload_loader_new(&l, o, &err) == 0, "%s", err.message);
	/* The workers start with the first load that needs them. */
	ck_assert_int_eq(parload__engine_ready(parload__loader_engine(l), false,
					       &err),
			 0);
	parload__engine_run(parload__loader_engine(l), nothing, NULL, NULL);
	return l;
}

/* By default the loader runs one worker per CPU of the process's affinity
 * mask: a process confined to one CPU (taskset -c 0, a batch slot) gets
 * one worker. */
START_TEST(test_default_threads_follow_affinity)
{
	cpu_set_t full, one;
	parload_loader *l;
	int first = -1;

	clear_hwloc_env();
	ck_assert_int_eq(sched_getaffinity(0, sizeof(full), &full), 0);
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &full))
			first = c;
	ck_assert_int_ge(first, 0);

	CPU_ZERO(&one);
	CPU_SET(first, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	l = started_loader(NULL);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(full), &full), 0);
	ck_assert_uint_eq(parload_loader_threads(l), 1);
	parload_loader_free(l);
}
END_TEST

/* On one NUMA node, the whole mask gets as many workers as it holds CPUs
 * (part 2, check_topology_one_node: on several nodes the loader asks
 * hwloc, which counts cores). */
START_TEST(test_default_threads_fill_the_mask)
{
	cpu_set_t full;
	parload_loader *l;

	clear_hwloc_env();
	ck_assert_int_eq(sched_getaffinity(0, sizeof(full), &full), 0);
	l = started_loader(NULL);
	ck_assert_uint_eq(parload_loader_threads(l),
			  (unsigned)CPU_COUNT(&full));
	parload_loader_free(l);
}
END_TEST

static const char *why_several_nodes(void)
{
	return several_nodes() ? "more than one NUMA node: the default thread "
				 "count is hwloc's cores, not the CPUs" :
				 NULL;
}

/* A topology from the environment is still the one the loader uses: its
 * cores, not this machine's CPUs, set the default thread count. */
START_TEST(test_default_threads_follow_synthetic)
{
	parload_loader *l = NULL;

	clear_hwloc_env();
	ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", "numa:2 core:3 pu:2", 1),
			 0);
	ck_assert_int_eq(parload_loader_new(&l, NULL, NULL), 0);
	unsetenv("HWLOC_SYNTHETIC");
	ck_assert_uint_eq(parload_loader_threads(l), 6);
	parload_loader_free(l);
}
END_TEST

/* Workers beyond the CPUs are not pinned: pinned, two would share a core
 * for the whole load while another core idles once its worker is done.
 * Every thread keeps the process's mask, and the count asked for is the
 * count that runs. */
START_TEST(test_workers_beyond_cpus_not_pinned)
{
	parload_options o;
	parload_loader *l;
	cpu_set_t full;

	clear_hwloc_env();
	ck_assert_int_eq(sched_getaffinity(0, sizeof(full), &full), 0);
	parload_options_init(&o);
	o.threads = (unsigned)CPU_COUNT(&full) + 1;
	l = started_loader(&o);
	ck_assert_uint_eq(parload_loader_threads(l), o.threads);
	ck_assert_uint_eq(tasks_narrowed(&full), 0);
	parload_loader_free(l);
}
END_TEST

/* core_offset asks for placement: the workers are bound, each to one core
 * the process may use, from that index on. */
START_TEST(test_core_offset_binds_workers)
{
	parload_options o;
	parload_loader *l;
	parload__engine *e;
	cpu_set_t full;

	clear_hwloc_env();
	ck_assert_int_eq(sched_getaffinity(0, sizeof(full), &full), 0);
	parload_options_init(&o);
	o.threads = 2;
	o.core_offset = 1;
	l = started_loader(&o);
	e = parload__loader_engine(l);
	ck_assert_ptr_nonnull(e->topo);
	ck_assert_uint_eq(e->workers, 2);
	if (parload__topology_cores(e->topo) >= 2) {
		/* A core that is every CPU of the mask narrows nothing. */
		ck_assert_uint_eq(tasks_narrowed(&full), 2);
		ck_assert_int_ne(e->places[0].core, e->places[1].core);
	}
	parload_loader_free(l);
	ck_assert_uint_eq(narrowed_after_join(&full), 0);
}
END_TEST

/* View layout: share boundaries fall on multiples of the alignment in
 * memory, wherever the pixel array starts (a caller's buffer need not
 * start on a huge page), and the shares still tile the array. */
START_TEST(test_split_aligned_in_memory)
{
	parload_file_header h;
	parload_shape sh;
	parload__share s[5];
	parload__plan p;
	const uint64_t align = PARLOAD__HUGE_PAGE;
	/* Never dereferenced: the split is arithmetic. */
	unsigned char *pixels = (unsigned char *)(uintptr_t)(
		(64 * PARLOAD__HUGE_PAGE) + 3 * PARLOAD__PAGE);
	uint64_t total;

	ck_assert_int_eq(parload_file_header_init(&h, 7, 4096, 1024,
						  PARLOAD_PIXEL_U16, 0), 0);
	ck_assert_int_eq(tu_resolve(&h, NULL, &sh, NULL), 0);
	total = sh.views * sh.view_bytes;
	tu_plan_init(&p, &h, &sh, NULL, pixels);
	parload__plan_split(&p, 5, align, s);
	ck_assert_uint_eq(s[0].dst_begin, 0);
	ck_assert_uint_eq(s[4].dst_end, total);
	for (unsigned w = 0; w < 5; w++) {
		ck_assert_uint_le(s[w].dst_begin, s[w].dst_end);
		if (w > 0) {
			ck_assert_uint_eq(s[w].dst_begin, s[w - 1].dst_end);
			ck_assert_uint_eq(s[w].begin, s[w - 1].end);
			ck_assert_uint_eq(((uintptr_t)pixels + s[w].dst_begin) %
						  align,
					  0);
		}
		ck_assert_uint_le(s[w].dst_end - s[w].dst_begin,
				  total / 5 + align + 1);
	}
	/* Before this, boundaries were multiples of align of the array, and
	 * so 3 pages off every huge page here. */
	ck_assert_uint_ne(s[1].dst_begin % align, 0);
}
END_TEST

static Suite *topology_suite(void)
{
	Suite *s = suite_create("topology");
	TCase *tc;

	tc = tcase_create("placement");
	tcase_add_test(tc, test_counts_two_packages);
	tcase_add_test(tc, test_workers_rotate_over_nodes);
	tcase_add_test(tc, test_fewer_workers_than_nodes_use_distinct_nodes);
	tcase_add_test(tc, test_more_workers_than_cores_wrap);
	tcase_add_test(tc, test_one_worker);
	tcase_add_test(tc, test_single_node);
	tcase_add_test(tc, test_unequal_nodes);
	tcase_add_test(tc, test_nodes_smaller_than_cores);
	tcase_add_test(tc, test_synthetic_binds_nothing);
	tcase_add_test(tc, test_wrap_null_fails_with_message);
	suite_add_tcase(s, tc);

	tc = tcase_create("machine");
	tcase_add_test(tc, test_this_system);
	tcase_add_test(tc, test_bind_thread_this_system);
	tcase_add_test(tc, test_env_synthetic_honoured);
	tcase_add_test(tc, test_env_xmlfile_honoured);
	suite_add_tcase(s, tc);

	tc = tcase_create("loader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_default_threads_follow_affinity);
	tcase_add_test(tc, test_default_threads_follow_synthetic);
	tcase_add_test(tc, test_workers_beyond_cpus_not_pinned);
	tcase_add_test(tc, test_core_offset_binds_workers);
	tcase_add_test(tc, test_split_aligned_in_memory);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pool_each_worker_once_per_run_8);
	tcase_add_test(tc, test_pool_each_worker_once_per_run_1);
	tcase_add_test(tc, test_pool_free_without_run);
	tcase_add_test(tc, test_pool_without_start_callback);
	tcase_add_test(tc, test_pool_zero_workers_refused);
	tcase_add_test(tc, test_pool_workers_block_signals);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *thread_limit_suite(void)
{
	Suite *s = suite_create("topology_rlimit");
	TCase *tc = tu_tcase(s, "pool", 60);

	tcase_add_test(tc, test_pool_thread_failure_leaves_nothing);
	return s;
}

static Suite *one_node_suite(void)
{
	Suite *s = suite_create("topology_one_node");
	TCase *tc = tu_tcase(s, "loader", 60);

	tcase_add_test(tc, test_default_threads_fill_the_mask);
	return s;
}

static const tu_part parts[] = {
	{ "check_topology", NULL, topology_suite },
	{ "check_topology_rlimit", why_no_thread_limit, thread_limit_suite },
	{ "check_topology_one_node", why_several_nodes, one_node_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
