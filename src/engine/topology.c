/*
 * topology.c - the machine as hwloc sees it, and where workers run.
 *
 * The loader wants one worker per core, spread over the NUMA nodes so that
 * every node's memory controller is busy, each worker first-touching (and,
 * on a multi-node machine, binding) the part of the pixel array it reads
 * into.  Everything here is computed once when the topology is opened: the
 * cores the process may use, the node each of them belongs to, and the order
 * in which workers take them.  Placing workers is then a table lookup.
 */
#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <hwloc.h>

struct parload__topology {
	hwloc_topology_t topo;
	bool this_system;      /* binding calls reach the real machine */
	hwloc_bitmap_t allowed; /* CPUs the process may run on */
	/* Workers run on cores, or on PUs in a topology that has no cores. */
	hwloc_obj_type_t unit_type;
	unsigned units;        /* allowed cores (or PUs) */
	unsigned nodes;        /* NUMA nodes that hold at least one of them */
	/* The order in which workers take the allowed units: logical index of
	 * the unit and of its node, round-robin over the nodes. */
	int *order_unit;
	int *order_node;
};

/*
 * The NUMA node a core (or PU) belongs to.  In hwloc 2 nodes hang off the
 * tree as memory children, not as ancestors, so rather than walking parents
 * we look for the node whose CPUs contain the core's: the one with the
 * fewest CPUs is the most local (a package's DRAM rather than memory
 * attached to the whole machine); ties go to the lowest logical index,
 * which hwloc gives to ordinary DRAM before HBM or CPU-less expansion nodes.
 * A core that no node covers (a node attached below the core, in an odd XML
 * topology) takes the first node it shares a CPU with.  hwloc 2 always has
 * at least one node, so this finds one unless the topology is inconsistent,
 * and then node 0 is as good an answer as any.
 */
static int node_of(hwloc_topology_t topo, hwloc_obj_t unit)
{
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	int best = -1, best_weight = 0, overlap = -1;

	for (int i = 0; i < n; i++) {
		hwloc_obj_t node =
			hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
		int w;

		if (!node || !node->cpuset)
			continue;
		if (hwloc_bitmap_isincluded(unit->cpuset, node->cpuset)) {
			w = hwloc_bitmap_weight(node->cpuset);
			if (best < 0 || (w >= 0 && w < best_weight)) {
				best = i;
				best_weight = w;
			}
		} else if (overlap < 0 &&
			   hwloc_bitmap_intersects(unit->cpuset, node->cpuset)) {
			overlap = i;
		}
	}
	if (best >= 0)
		return best;
	return overlap >= 0 ? overlap : 0;
}

/* The allowed units grouped by node: unit_node[i] is unit i's node (-1
 * if not allowed), count[k] how many node k holds.  Returns how many are
 * allowed. */
static unsigned group_units(parload__topology *t, int nunits, int nnodes,
			    int *unit_node, int *count)
{
	unsigned units = 0;

	for (int i = 0; i < nunits; i++) {
		hwloc_obj_t u = hwloc_get_obj_by_type(t->topo, t->unit_type, i);

		unit_node[i] = -1;
		if (!u || !u->cpuset ||
		    !hwloc_bitmap_intersects(u->cpuset, t->allowed))
			continue;
		unit_node[i] = node_of(t->topo, u);
		if (unit_node[i] >= nnodes)
			unit_node[i] = 0;
		count[unit_node[i]]++;
		units++;
	}
	return units;
}

/* Deal the units out one round at a time into t's order: node 0's first
 * unit, node 1's first, ..., node 0's second, ...  by_node lists the
 * allowed units node after node, start[k] where node k's begin. */
static int deal(parload__topology *t, unsigned units, int nnodes,
		const int *by_node, const int *start, const int *count)
{
	int max_count = 0;
	unsigned w = 0, nodes = 0;

	parload__sys_free(t->order_unit);
	parload__sys_free(t->order_node);
	t->order_unit = parload__sys_malloc(sizeof(*t->order_unit) * units);
	t->order_node = parload__sys_malloc(sizeof(*t->order_node) * units);
	if (!t->order_unit || !t->order_node)
		return -ENOMEM;
	for (int k = 0; k < nnodes; k++) {
		max_count = PARLOAD__MAX(max_count, count[k]);
		nodes += count[k] > 0;
	}
	for (int r = 0; r < max_count; r++) {
		for (int k = 0; k < nnodes; k++) {
			if (r >= count[k])
				continue;
			t->order_unit[w] = by_node[start[k] + r];
			t->order_node[w] = k;
			w++;
		}
	}
	t->units = units;
	t->nodes = nodes;
	return 0;
}

/*
 * Build the placement order over the units that intersect t->allowed:
 * node 0's first unit, node 1's first, ..., node 0's second, node 1's
 * second, ...; a node that runs out of units drops out of the rotation, so
 * every allowed unit appears exactly once even when nodes differ in size.
 * Returns 0, -ENOENT when no unit is allowed, or -ENOMEM.
 */
static int build_order(parload__topology *t)
{
	int nunits = hwloc_get_nbobjs_by_type(t->topo, t->unit_type);
	int nnodes = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_NUMANODE);
	int *unit_node = NULL, *count = NULL, *start = NULL, *fill = NULL;
	int *by_node = NULL;
	unsigned units;
	int ret = -ENOMEM;

	if (nunits <= 0)
		return -ENOENT;
	if (nnodes <= 0)
		nnodes = 1;
	unit_node = parload__sys_malloc(sizeof(*unit_node) * (size_t)nunits);
	by_node = parload__sys_malloc(sizeof(*by_node) * (size_t)nunits);
	count = parload__sys_calloc((size_t)nnodes, sizeof(*count));
	start = parload__sys_calloc((size_t)nnodes, sizeof(*start));
	fill = parload__sys_calloc((size_t)nnodes, sizeof(*fill));
	if (!unit_node || !by_node || !count || !start || !fill)
		goto out;
	units = group_units(t, nunits, nnodes, unit_node, count);
	ret = -ENOENT;
	if (units == 0)
		goto out;
	/* Group the allowed units by node, in logical order within each. */
	for (int k = 0, sum = 0; k < nnodes; k++) {
		start[k] = sum;
		sum += count[k];
	}
	for (int i = 0; i < nunits; i++)
		if (unit_node[i] >= 0)
			by_node[start[unit_node[i]] + fill[unit_node[i]]++] = i;
	ret = deal(t, units, nnodes, by_node, start, count);
out:
	parload__sys_free(unit_node);
	parload__sys_free(by_node);
	parload__sys_free(count);
	parload__sys_free(start);
	parload__sys_free(fill);
	return ret;
}

/*
 * The CPUs the process may run on.  On the real machine that is the
 * process's binding (taskset, a batch scheduler's cpuset, numactl) within
 * what the topology allows; a synthetic or XML topology describes another
 * machine, so there it is simply everything the topology allows.
 */
static int find_allowed(parload__topology *t)
{
	hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(t->topo);

	t->allowed = parload__sys_hwloc_bitmap_dup(all);
	if (!t->allowed)
		return -ENOMEM;
	if (t->this_system) {
		hwloc_bitmap_t bound = parload__sys_hwloc_bitmap_alloc();

		if (!bound)
			return -ENOMEM;
		/* Where the binding cannot be read, or does not meet the
		 * topology (it should always), keep everything allowed. */
		if (parload__sys_hwloc_get_cpubind(t->topo, bound,
						   HWLOC_CPUBIND_PROCESS) == 0 &&
		    hwloc_bitmap_intersects(bound, all))
			hwloc_bitmap_and(t->allowed, all, bound);
		parload__sys_hwloc_bitmap_free(bound);
	}
	return 0;
}

/* Fill in everything derived from a loaded topology. */
static int analyse(parload__topology *t)
{
	int ret;

	t->this_system = hwloc_topology_is_thissystem(t->topo) != 0;
	t->unit_type =
		hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE) > 0 ?
			HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
	ret = find_allowed(t);
	if (ret < 0)
		return ret;
	ret = build_order(t);
	if (ret == -ENOENT) {
		/* The binding names no CPU of the topology: do not leave the
		 * loader without a core, use them all. */
		hwloc_bitmap_copy(t->allowed,
				  hwloc_topology_get_topology_cpuset(t->topo));
		ret = build_order(t);
	}
	return ret;
}

static void destroy(parload__topology *t)
{
	if (t->allowed)
		parload__sys_hwloc_bitmap_free(t->allowed);
	parload__sys_free(t->order_unit);
	parload__sys_free(t->order_node);
	parload__sys_free(t);
}

/* Take ownership of a loaded hwloc topology; destroyed on failure. */
static int take(parload__topology **out, hwloc_topology_t topo,
		parload_error *err)
{
	parload__topology *t = parload__sys_calloc(1, sizeof(*t));
	int ret;

	if (!t) {
		parload__sys_hwloc_topology_destroy(topo);
		return parload__fail(err, PARLOAD_ENOMEM, ENOMEM, NULL,
				     PARLOAD_NONE, PARLOAD_NONE, NULL);
	}
	t->topo = topo;
	ret = analyse(t);
	if (ret < 0) {
		parload__sys_hwloc_topology_destroy(topo);
		destroy(t);
		if (ret == -ENOMEM)
			return parload__fail(err, PARLOAD_ENOMEM, ENOMEM, NULL,
					     PARLOAD_NONE, PARLOAD_NONE, NULL);
		return parload__fail(err, PARLOAD_ETOPOLOGY, 0, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "the machine topology has no cores");
	}
	*out = t;
	return 0;
}

int parload__topology_open(parload__topology **out, parload_error *err)
{
	hwloc_topology_t topo;
	const char *what;
	int e;

	*out = NULL;
	if (parload__sys_hwloc_topology_init(&topo) < 0)
		return parload__fail(err, PARLOAD_ETOPOLOGY, errno, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "cannot initialise hwloc");
	/*
	 * Placement needs NUMA nodes, cores and PUs only.  Caches (read from
	 * sysfs for every core), I/O devices, memory-side caches and Misc
	 * objects are the slow part of discovery and unused here, so they
	 * are filtered out: that takes loading from several milliseconds to
	 * one or two, which matters to short-lived processes that load one
	 * file.  Packages and groups stay: they come with the cores' own
	 * sysfs files at no cost, and a synthetic "numa:N" level is built of
	 * groups.  HWLOC_SYNTHETIC, HWLOC_XMLFILE and HWLOC_FSROOT in the
	 * environment still select another source: hwloc_topology_load()
	 * honours them because we select none ourselves.
	 */
	what = "cannot configure hwloc";
	if (hwloc_topology_set_io_types_filter(topo,
					       HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_cache_types_filter(topo,
						  HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_icache_types_filter(topo,
						   HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MEMCACHE,
					   HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC,
					   HWLOC_TYPE_FILTER_KEEP_NONE) < 0)
		goto fail;
	what = "cannot load the machine topology";
	if (parload__sys_hwloc_topology_load(topo) < 0)
		goto fail;
	return take(out, topo, err);

fail:
	e = errno;
	parload__sys_hwloc_topology_destroy(topo);
	return parload__fail(err, PARLOAD_ETOPOLOGY, e, NULL, PARLOAD_NONE,
			     PARLOAD_NONE, "%s", what);
}

int parload__topology_wrap(parload__topology **out, void *hwloc_topology,
			   parload_error *err)
{
	*out = NULL;
	if (!hwloc_topology)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "no topology to wrap");
	return take(out, (hwloc_topology_t)hwloc_topology, err);
}

void parload__topology_close(parload__topology *t)
{
	if (!t)
		return;
	parload__sys_hwloc_topology_destroy(t->topo);
	destroy(t);
}

unsigned parload__topology_cores(const parload__topology *t)
{
	return t->units;
}

unsigned parload__topology_nodes(const parload__topology *t)
{
	return t->nodes;
}

bool parload__topology_is_this_system(const parload__topology *t)
{
	return t->this_system;
}

void parload__topology_place(const parload__topology *t, unsigned n,
			     unsigned offset, parload__place *places)
{
	/* More workers than cores wrap around and share, in the same order,
	 * so the extra ones are spread over the nodes as well. */
	for (unsigned w = 0; w < n; w++) {
		unsigned u = (unsigned)(((uint64_t)offset + w) % t->units);

		places[w].core = t->order_unit[u];
		places[w].node = t->order_node[u];
	}
}

int parload__topology_bind_thread(parload__topology *t,
				  const parload__place *p)
{
	hwloc_obj_t unit;
	hwloc_bitmap_t set;
	int ret = 0;

	if (!t->this_system)
		return 0;
	unit = hwloc_get_obj_by_type(t->topo, t->unit_type,
				     (unsigned)p->core);
	if (!unit || !unit->cpuset)
		return -EINVAL;
	/* Only the core's CPUs the process may use: binding a thread to a
	 * hyperthread sibling outside `taskset -c` would escape it. */
	set = parload__sys_hwloc_bitmap_alloc();
	if (!set)
		return -ENOMEM;
	hwloc_bitmap_and(set, unit->cpuset, t->allowed);
	if (hwloc_bitmap_iszero(set))
		hwloc_bitmap_copy(set, unit->cpuset);
	if (parload__sys_hwloc_set_cpubind(t->topo, set,
					   HWLOC_CPUBIND_THREAD) < 0)
		ret = errno > 0 ? -errno : -EINVAL;
	parload__sys_hwloc_bitmap_free(set);
	return ret;
}

int parload__topology_bind_memory(parload__topology *t,
				  const parload__place *p, void *addr,
				  size_t len)
{
	hwloc_obj_t node;
	uintptr_t page, begin, end;
	long ps;

	if (!t->this_system || t->nodes < 2 || len == 0)
		return 0;
	node = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_NUMANODE,
				     (unsigned)p->node);
	if (!node || !node->nodeset)
		return -EINVAL;
	/*
	 * The kernel binds whole pages.  Bind only the pages that lie
	 * entirely inside the range: a page shared with the neighbouring
	 * worker's range is left to first touch rather than bound by both.
	 */
	ps = sysconf(_SC_PAGESIZE);
	page = ps > 0 ? (uintptr_t)ps : 4096;
	begin = ((uintptr_t)addr + page - 1) & ~(page - 1);
	end = ((uintptr_t)addr + len) & ~(page - 1);
	if (end <= begin)
		return 0;
	if (parload__sys_hwloc_set_area_membind(t->topo, (void *)begin,
						end - begin, node->nodeset,
						HWLOC_MEMBIND_BIND,
						HWLOC_MEMBIND_BYNODESET) < 0)
		return errno > 0 ? -errno : -EINVAL;
	return 0;
}
