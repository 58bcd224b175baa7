/*
 * node.c - ranks that share a node share its cores.
 *
 * libparload gives a process one worker per core it may run on.  Two
 * ranks on one node would each start that many and fight over the cores.
 * Here the ranks of a node (MPI_COMM_TYPE_SHARED) that may run on the same
 * cores divide them: each takes cores / ranks workers, starting at its own
 * offset into the cores (parload_options.core_offset), so that 2 ranks x 1
 * thread and 1 rank x 2 threads use the same cores.  Ranks the launcher
 * has already bound to cores of their own divide nothing.
 */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

/* The CPUs this process may run on: those allowed, narrowed to those it
 * is bound to where the two meet (NULL: no memory). */
static hwloc_bitmap_t usable_cpus(hwloc_topology_t topo)
{
	hwloc_bitmap_t set, bound;

	set = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
	if (!set)
		return NULL;
	bound = hwloc_bitmap_alloc();
	if (bound &&
	    hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0 &&
	    hwloc_bitmap_intersects(set, bound))
		hwloc_bitmap_and(set, set, bound);
	hwloc_bitmap_free(bound);
	return set;
}

/* The cores (PUs where the topology has none) that intersect set. */
static int cores_in(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
	hwloc_obj_type_t type = HWLOC_OBJ_CORE;
	int n = hwloc_get_nbobjs_by_type(topo, type), count = 0;

	if (n <= 0)
		n = hwloc_get_nbobjs_by_type(topo, type = HWLOC_OBJ_PU);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);

		if (o && o->cpuset && hwloc_bitmap_intersects(o->cpuset, set))
			count++;
	}
	return count;
}

/* The cores this process may run on, counted as libparload counts them:
 * cores (PUs where the topology has none) that intersect the CPUs both
 * allowed and bound to. */
static int count_units_once(unsigned *units, parload_error *err)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t set;
	int count;

	if (hwloc_topology_init(&topo) != 0)
		return parload_mpi__fail(err, PARLOAD_ETOPOLOGY, NULL,
					 "hwloc_topology_init failed");
	if (hwloc_topology_load(topo) != 0) {
		hwloc_topology_destroy(topo);
		return parload_mpi__fail(err, PARLOAD_ETOPOLOGY, NULL,
					 "hwloc_topology_load failed");
	}
	set = usable_cpus(topo);
	if (!set) {
		hwloc_topology_destroy(topo);
		return parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
					 "no memory for a cpuset");
	}
	count = cores_in(topo, set);
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(topo);
	*units = count > 0 ? (unsigned)count : 1;
	return 0;
}

/* Loading the topology costs tens of milliseconds, more than a small
 * load: the count is taken once per process (a process that changes its
 * own binding between loads keeps the first count). */
static pthread_once_t units_once = PTHREAD_ONCE_INIT;
static unsigned units_cached;
static int units_rc;
static parload_error units_err;

static void count_units_init(void)
{
	units_rc = count_units_once(&units_cached, &units_err);
}

static int count_units(unsigned *units, parload_error *err)
{
	pthread_once(&units_once, count_units_init);
	if (units_rc) {
		*err = units_err;
		return units_rc;
	}
	*units = units_cached;
	return 0;
}

/* The ranks of comm that share this node (*node), this rank among them
 * (*lr of *ln). */
static int node_comm(MPI_Comm comm, MPI_Comm *node, int *lr, int *ln,
		     parload_error *err)
{
	int mrc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0,
				      MPI_INFO_NULL, node);

	if (mrc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, NULL, "MPI_Comm_split_type",
					     mrc);
	MPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN);
	MPI_Comm_rank(*node, lr);
	MPI_Comm_size(*node, ln);
	return 0;
}

/* This process's affinity mask and the cores it may run on, and room
 * for the masks of the node's ln ranks (*masks, malloc'd). */
static int own_mask(cpu_set_t *mask, unsigned *units, int ln,
		    cpu_set_t **masks, parload_error *err)
{
	int rc;

	CPU_ZERO(mask);
	rc = sched_getaffinity(0, sizeof(*mask), mask) == 0 ? 0 :
		parload_mpi__fail(err, PARLOAD_ETOPOLOGY, NULL,
				  "sched_getaffinity failed");
	if (rc == 0)
		rc = count_units(units, err);
	if (rc == 0 && !(*masks = calloc((size_t)ln, sizeof(**masks))))
		rc = parload_mpi__fail(err, PARLOAD_ENOMEM, NULL,
				       "no memory for %d masks", ln);
	return rc;
}

/* Of the node's ln ranks, those whose mask is mask (*group), and how
 * many of them come before rank lr (*index). */
static void same_cores(const cpu_set_t *masks, int ln, const cpu_set_t *mask,
		       int lr, unsigned *group, unsigned *index)
{
	for (int i = 0; i < ln; i++) {
		if (!CPU_EQUAL(&masks[i], mask))
			continue;
		if (i < lr)
			(*index)++;
		(*group)++;
	}
}

int parload_mpi_node_threads(MPI_Comm comm, unsigned requested,
			     unsigned *threads, unsigned *core_offset,
			     int *local_rank, int *local_ranks,
			     parload_error *err)
{
	parload_error local;
	MPI_Comm node = MPI_COMM_NULL;
	cpu_set_t mask, *masks = NULL;
	unsigned units = 1, group = 0, index = 0, t = 0, off = 0;
	int rc, mrc, lr = 0, ln = 1;

	if (!err)
		err = &local;
	rc = node_comm(comm, &node, &lr, &ln, err);
	if (rc)
		return rc;
	/* The affinity mask tells which ranks may run on the same cores:
	 * all of them when the launcher binds nothing, none when it bound
	 * each rank to cores of its own. */
	rc = parload_mpi__agree(comm, own_mask(&mask, &units, ln, &masks, err),
				err);
	if (rc == 0) {
		mrc = MPI_Allgather(&mask, (int)sizeof(mask), MPI_BYTE, masks,
				    (int)sizeof(mask), MPI_BYTE, node);
		rc = mrc == MPI_SUCCESS ? 0 :
			parload_mpi__mpi_fail(err, NULL, "MPI_Allgather", mrc);
		rc = parload_mpi__agree(comm, rc, err);
	}
	if (rc == 0) {
		same_cores(masks, ln, &mask, lr, &group, &index);
		parload_mpi__divide(units, group, index, requested, &t, &off);
	}
	free(masks);
	MPI_Comm_free(&node);
	if (rc)
		return rc;
	if (threads)
		*threads = t;
	if (core_offset)
		*core_offset = off;
	if (local_rank)
		*local_rank = lr;
	if (local_ranks)
		*local_ranks = ln;
	return 0;
}
