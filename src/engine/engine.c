/*
 * engine.c - the workers a loader keeps from load to load: how many, on
 * which cores (the topology, read only where it places them), their pool
 * (pool.c), started by the first load that needs it, and their direct-read
 * queues (aio.c).  A job runs on every worker, or on the caller's thread
 * when there is one worker and no pool.
 */
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void bind_worker(void *arg, unsigned w)
{
	parload__engine *e = arg;

	(void)parload__topology_bind_thread(e->topo, &e->places[w]);
}

/* Worker w closes its own direct-read queue: where they are AIO
 * contexts, the workers' io_destroy calls wait out their grace periods
 * together (a ring closes at once). */
static void close_aio(void *arg, unsigned w)
{
	parload__engine *e = arg;

	parload__aio_close(&e->aio[w]);
}

void parload__engine_free(parload__engine *e)
{
	if (e->aio) {
		parload__engine_run(e, close_aio, e, NULL);
		parload__sys_free(e->aio);
	}
	if (e->pool)
		parload__pool_free(e->pool);
	if (e->topo)
		parload__topology_close(e->topo);
	parload__sys_free(e->places);
	memset(e, 0, sizeof(*e));
}

/*
 * The probes below decide whether the loader needs hwloc at all.  They are
 * plain calls, not parload__sys_x ones: a probe that fails only sends the
 * loader to hwloc, which is always right, so a failure there is no failure
 * of the load for the fault seam to provoke.
 */

/* CPUs in the calling thread's affinity mask (taskset, numactl, a batch
 * scheduler's cpuset): what the process may run on.  0 if unknown. */
static unsigned affinity_cpus(void)
{
	cpu_set_t fixed;

	if (sched_getaffinity(0, sizeof(fixed), &fixed) == 0)
		return (unsigned)CPU_COUNT(&fixed);
	/* More CPUs than a cpu_set_t holds (1024): the kernel says EINVAL
	 * until the set is as large as its own. */
	for (size_t n = 2 * CPU_SETSIZE; errno == EINVAL && n <= (1u << 22);
	     n *= 2) {
		const size_t size = CPU_ALLOC_SIZE(n);
		cpu_set_t *set = parload__sys_calloc(1, size);
		unsigned count = 0;

		if (!set)
			return 0;
		if (sched_getaffinity(0, size, set) == 0)
			count = (unsigned)CPU_COUNT_S(size, set);
		parload__sys_free(set);
		if (count)
			return count;
	}
	return 0;
}

/* Whether the machine has one NUMA node: the kernel lists the online nodes
 * ("0", "0-1", "0,2") in sysfs, and a kernel without NUMA has no such
 * directory at all. */
static bool one_node(void)
{
	char b[64];
	ssize_t n;
	int fd;

	fd = open("/sys/devices/system/node/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT && access("/sys/devices/system/node",
						 F_OK) != 0;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return false;
	b[n] = '\0';
	return strspn(b, "0123456789") == strcspn(b, "\n") &&
	       strcspn(b, "\n") > 0;
}

/*
 * Whether the load needs hwloc: to place workers on a machine of several
 * NUMA nodes (binding then decides whose memory a worker fills), to honour
 * core_offset, or because the environment describes another machine
 * (HWLOC_SYNTHETIC, HWLOC_XMLFILE, HWLOC_FSROOT: tests and users who mean
 * it).  Otherwise the kernel's affinity mask says all the loader needs:
 * discovering the topology would cost milliseconds of sysfs reading -
 * most of a short-lived process's start - for nothing.
 */
static bool needs_topology(const parload_options *o)
{
	if (getenv("HWLOC_SYNTHETIC") || getenv("HWLOC_XMLFILE") ||
	    getenv("HWLOC_FSROOT"))
		return true;
	if (o->core_offset)
		return true;
	if (o->flags & PARLOAD_OPT_NO_BIND)
		return false;
	return !one_node();
}

/*
 * The workers, on the topology: one per allowed core unless the options
 * say how many.  Each is bound to its core while there are enough cores to
 * go round (or core_offset names them).  Workers beyond the cores are not
 * bound: pinned, the extra ones would share a core with others for the
 * whole load while another core finishes early and idles (3 workers on 2
 * cores: one core does two thirds of the work), whereas the scheduler
 * moves an unbound worker to the core that becomes free.
 */
static int engine_topology(parload__engine *e, const parload_options *o,
			   parload_error *err)
{
	int rc;

	rc = parload__topology_open(&e->topo, err);
	if (rc)
		return rc;
	e->workers = o->threads ? o->threads :
				  PARLOAD__MAX(1u, parload__topology_cores(e->topo));
	e->places = parload__sys_calloc(e->workers, sizeof(*e->places));
	if (!e->places)
		return parload__fail_nomem(err, NULL);
	parload__topology_place(e->topo, e->workers, o->core_offset, e->places);
	return 0;
}

int parload__engine_init(parload__engine *e, const parload_options *o,
			 parload_error *err)
{
	bool bind = false;
	int rc;

	memset(e, 0, sizeof(*e));
	/* One explicit thread needs neither the topology nor a pool: the
	 * caller reads, and nothing is paid for discovery. */
	if (o->threads == 1) {
		e->workers = 1;
		return 0;
	}
	if (needs_topology(o)) {
		rc = engine_topology(e, o, err);
		if (rc) {
			parload__engine_free(e);
			return rc;
		}
		bind = !(o->flags & PARLOAD_OPT_NO_BIND) &&
		       (e->workers <= parload__topology_cores(e->topo) ||
			o->core_offset);
	} else {
		/* One node: a worker's memory is local wherever it runs, and
		 * the scheduler keeps the workers apart. */
		const unsigned cpus = o->threads ? 0 : affinity_cpus();

		e->workers = o->threads ? o->threads : PARLOAD__MAX(1u, cpus);
	}
	/* The pool starts with the first load that needs it
	 * (parload__engine_ready). */
	e->bind = bind;
	return 0;
}

int parload__engine_ready(parload__engine *e, bool background,
			  parload_error *err)
{
	if (e->pool || (e->workers <= 1 && !background))
		return 0;
	return parload__pool_new(&e->pool, e->workers,
				 e->bind ? bind_worker : NULL, e, err);
}

void parload__engine_run(parload__engine *e, parload__job_fn fn, void *arg,
			 parload__waiter *w)
{
	if (e->pool)
		parload__pool_run(e->pool, fn, arg, w);
	else
		fn(arg, 0);
}

void parload__engine_start(parload__engine *e, parload__job_fn fn, void *arg)
{
	if (e->pool)
		parload__pool_start(e->pool, fn, arg);
	else
		fn(arg, 0);
}

void parload__engine_wait(parload__engine *e, parload__waiter *w)
{
	if (e->pool)
		parload__pool_wait(e->pool, w);
}

int parload__engine_aio_ready(parload__engine *e)
{
	if (!e->aio)
		e->aio = parload__sys_calloc(PARLOAD__MAX(e->workers, 1u),
					     sizeof(*e->aio));
	return e->aio ? 0 : -1;
}

parload__aio *parload__engine_aio(parload__engine *e, unsigned w)
{
	return &e->aio[w];
}
