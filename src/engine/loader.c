/*
 * loader.c - options, and the reusable loader that owns the engine (the
 * machine's topology and the worker threads, engine.c) from load to load.
 */
#include "engine/engine.h"

#include <string.h>

struct parload_loader {
	parload_options opts;
	parload__engine engine;
};

#define KNOWN_FLAGS                                                            \
	(PARLOAD_OPT_NO_BIND | PARLOAD_OPT_NO_HUGEPAGES |                      \
	 PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING |                     \
	 PARLOAD_OPT_ALLOW_TRUNCATED | PARLOAD_OPT_MAP_SINOGRAMS)

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

static int check_options(const parload_options *o, parload_error *err)
{
	if (!parload__strategy_get(o->strategy))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "unknown strategy %d",
					  (int)o->strategy);
	if (o->threads > PARLOAD_THREADS_MAX)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "%u worker threads asked for: at most "
					  "%u (PARLOAD_THREADS_MAX)",
					  o->threads, PARLOAD_THREADS_MAX);
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
	if (rc == 0 &&
	    (parload_strategy_caps(l->opts.strategy) & PARLOAD_CAP_THREADS))
		rc = parload__engine_init(&l->engine, &l->opts, err);
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
	return parload_strategy_caps(l->opts.strategy) & PARLOAD_CAP_THREADS ?
		       l->engine.workers : 1;
}

void parload_loader_free(parload_loader *loader)
{
	if (!loader)
		return;
	parload__engine_free(&loader->engine);
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
