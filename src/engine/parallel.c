/*
 * parallel.c - the default strategy: every worker reads its share of the
 * extent plan (plan.c) with preadv straight into the dataset's arrays.
 *
 * The load (load.c) has parsed the file header and laid out the dataset;
 * the workers then each walk one share, so together they read every
 * selected byte exactly once, with no staging copy of the file, and each
 * fills (and so first-touches, placing on its own NUMA node) its own pages.
 * The read step is one pass of the workers over every view (pass.c), or,
 * with on_batch, a pass a batch (batch.c).
 */
#include "engine/engine.h"

static int read_parallel(parload__ctx *c)
{
	parload__pass *j;
	int rc;

	if (c->req->on_batch)
		return parload__read_batches(c);
	rc = parload__pass_new(c, &j);
	if (rc == 0 && c->shape.views) {
		parload__pass_start(j, 0, c->shape.views, c->out->headers,
				    c->out->raw_headers, c->out->pixels);
		rc = parload__pass_wait(j);
	}
	parload__pass_free(j);
	return rc;
}

/* The header step: the workers start (if they have not yet) while the
 * caller reads the file header, so that they are up and bound by the time
 * the first pass needs them. */
static int parallel_header(parload__ctx *c, unsigned char *bytes)
{
	int rc = parload__engine_ready(c->engine, c->req->on_batch != NULL,
				       c->err);

	return rc ? rc : parload__source_read_header(c, bytes);
}

const parload__strategy parload__strategy_parallel = {
	.caps = PARLOAD_CAP_SELECT | PARLOAD_CAP_BATCHES | PARLOAD_CAP_THREADS |
		PARLOAD_CAP_LAYOUTS | PARLOAD_CAP_DIRECT,
	.read = read_parallel,
	.header = parallel_header,
};
