/*
 * loader.c - options, and the reusable loader that owns the machine's
 * topology and the worker threads from load to load.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

struct parload_loader {
	parload_options opts;
	parload__engine engine;
};

#define KNOWN_FLAGS                                                            \
	(PARLOAD_OPT_NO_BIND | PARLOAD_OPT_NO_HUGEPAGES |                      \
	 PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING |                     \
	 PARLOAD_OPT_ALLOW_TRUNCATED)

void parload_options_init(parload_options *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->strategy = PARLOAD_STRATEGY_PARALLEL;
	opts->io = PARLOAD_IO_POSIX;
	opts->buffer_size = PARLOAD_BUFFER_DEFAULT;
	parload_selection_init(&opts->selection);
}

static void bind_worker(void *arg, unsigned w)
{
	parload__engine *e = arg;

	(void)parload__topology_bind_thread(e->topo, &e->places[w]);
}

static void engine_free(parload__engine *e)
{
	if (e->pool)
		parload__pool_free(e->pool);
	if (e->topo)
		parload__topology_close(e->topo);
	parload__sys_free(e->places);
	memset(e, 0, sizeof(*e));
}

static int engine_init(parload__engine *e, const parload_options *o,
		       parload_error *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	/* One explicit thread needs neither the topology nor a pool: the
	 * caller reads, and nothing is paid for discovery. */
	if (o->threads == 1) {
		e->workers = 1;
		return 0;
	}
	rc = parload__topology_open(&e->topo, err);
	if (rc)
		return rc;
	e->workers = o->threads ? o->threads :
				  PARLOAD__MAX(1u, parload__topology_cores(e->topo));
	e->places = parload__sys_calloc(e->workers, sizeof(*e->places));
	if (!e->places) {
		engine_free(e);
		return parload__fail_nomem(err, NULL);
	}
	parload__topology_place(e->topo, e->workers, o->core_offset, e->places);
	if (e->workers > 1) {
		bool bind = !(o->flags & PARLOAD_OPT_NO_BIND);

		rc = parload__pool_new(&e->pool, e->workers,
				       bind ? bind_worker : NULL, e, err);
		if (rc) {
			engine_free(e);
			return rc;
		}
	}
	return 0;
}

void parload__engine_run(parload__engine *e, parload__job_fn fn, void *arg)
{
	if (e->pool)
		parload__pool_run(e->pool, fn, arg);
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

void parload__engine_wait(parload__engine *e)
{
	if (e->pool)
		parload__pool_wait(e->pool);
}

static int check_options(const parload_options *o, parload_error *err)
{
	if (!parload__strategy_get(o->strategy))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "unknown strategy %d",
					  (int)o->strategy);
	if (!parload_io_name(o->io))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "unknown I/O API %d", (int)o->io);
	if (o->flags & ~KNOWN_FLAGS)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "unknown option flags 0x%x",
					  o->flags);
	return 0;
}

int parload_loader_new(parload_loader **out, const parload_options *opts,
		       parload_error *err)
{
	parload_loader *l;
	int rc;

	if (!out)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL, NULL);
	*out = NULL;
	l = parload__sys_calloc(1, sizeof(*l));
	if (!l)
		return parload__fail_nomem(err, NULL);
	if (opts)
		l->opts = *opts;
	else
		parload_options_init(&l->opts);
	l->opts.error = NULL;
	rc = check_options(&l->opts, err);
	if (rc == 0 && l->opts.strategy == PARLOAD_STRATEGY_PARALLEL)
		rc = engine_init(&l->engine, &l->opts, err);
	if (rc) {
		parload__sys_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

unsigned parload_loader_threads(const parload_loader *l)
{
	if (!l)
		return 0;
	return l->opts.strategy == PARLOAD_STRATEGY_PARALLEL ? l->engine.workers :
							      1;
}

void parload_loader_free(parload_loader *loader)
{
	if (!loader)
		return;
	engine_free(&loader->engine);
	parload__sys_free(loader);
}

const parload_options *parload__loader_options(const parload_loader *l)
{
	return &l->opts;
}

parload__engine *parload__loader_engine(parload_loader *l)
{
	return &l->engine;
}
