/*
 * engine.h - the engine: the machine and where workers run (topology.c),
 * the persistent pool (pool.c), the loader (loader.c), the strategies
 * (strategy.c's table; parallel.c, article.c, mmap.c, pipe.c), passes and
 * batches (batch.c), and the correction applied as rows land
 * (correct.c).  It reads what a driver described (model) through io and
 * codec.  Calls go down only.
 */
#ifndef PARLOAD_ENGINE_H
#define PARLOAD_ENGINE_H

#include "codec/codec.h"

/* Row rr (of the selection) of pixels px (cols of the layout's type, in
 * the host's order) corrected into dst (cols floats). */
void parload__correct_row(const parload__correct *k, float *dst,
			  const unsigned char *px, uint64_t rr);
/* Binning: the sums of each bin's pixels of one detector row px (cols *
 * bin pixels of the layout's type, host order) added into acc (cols
 * floats); and a bin's bin rows summed in acc, made means and corrected
 * into dst as row rr of the (binned) selection. */
void parload__bin_add(const parload__correct *k, float *acc,
		      const unsigned char *px);
void parload__correct_binned(const parload__correct *k, float *dst,
			     const float *acc, uint64_t rr);


/* ---- correct.c: a corrected load ---- */

struct parload__strategy;
/* The request's correction, if any, checked against the load (its
 * strategy, selection and CRCs), and its bins made of c->shape's rows
 * and columns; nothing without one. */
int parload__correct_check(parload__ctx *c,
			   const struct parload__strategy *st);
/* References r (what: "dark" or "flat") reduced to one frame of c->shape's
 * rows x cols floats (*out, malloc'd): r's frames in memory, or the
 * dataset loaded from its source (loaded: the scan's rows and columns
 * before binning, at least one view), binned first. */
int parload__correct_reduce(parload__ctx *c, const parload_refs *r,
			    const parload_dataset *loaded, const char *what,
			    float **out);
/* The references reduced (c->corr.dark, .scale, each or none): the flat
 * made the scale each pixel is multiplied by, c->shape made float32. */
void parload__correct_ready(parload__ctx *c);
void parload__correct_free(parload__ctx *c);


/* ---- topology.c: the machine, and where workers run (hwloc is loaded
 * only where workers are placed: several NUMA nodes, a core_offset, or a
 * topology given in the environment; else the affinity mask counts the
 * cores, engine.c) ---- */

typedef struct parload__topology parload__topology;

/* Where one worker runs and where its memory lives. */
typedef struct parload__place {
	int core;       /* logical index of its core in the topology */
	int node;       /* logical index of its NUMA node */
} parload__place;

/* Discover the machine (I/O devices and caches left out; HWLOC_SYNTHETIC
 * and HWLOC_XMLFILE are honoured, as hwloc does). */
int parload__topology_open(parload__topology **out, parload_error *err);
/* Wrap a topology loaded elsewhere (tests); it is destroyed with t. */
int parload__topology_wrap(parload__topology **out, void *hwloc_topology,
			   parload_error *err);
void parload__topology_close(parload__topology *t);
/* Cores the process may run on. */
unsigned parload__topology_cores(const parload__topology *t);
unsigned parload__topology_nodes(const parload__topology *t);
/* Whether the topology is this machine's (binding is possible). */
bool parload__topology_is_this_system(const parload__topology *t);
/* Place n workers: spread round-robin over the NUMA nodes that have allowed
 * cores, one core each, starting at the offset-th core of that order and
 * wrapping when n exceeds the cores. */
void parload__topology_place(const parload__topology *t, unsigned n,
			     unsigned offset, parload__place *places);
/* Bind the calling thread to a place's core; best effort, returns 0 or a
 * negative errno-style value. */
int parload__topology_bind_thread(parload__topology *t,
				  const parload__place *p);
/* Bind [addr, addr + len) to a place's node; best effort. */
int parload__topology_bind_memory(parload__topology *t,
				  const parload__place *p, void *addr,
				  size_t len);

/* ---- pool.c: persistent workers ---- */

typedef struct parload__pool parload__pool;
typedef void (*parload__job_fn)(void *arg, unsigned worker);
/* Called once by each worker thread as it starts. */
typedef void (*parload__start_fn)(void *arg, unsigned worker);

int parload__pool_new(parload__pool **out, unsigned n,
		      parload__start_fn start, void *start_arg,
		      parload_error *err);
/* Run fn(arg, w) on every worker w and wait until all have returned;
 * while it waits, the caller takes its turns (waiter's on_wait, if any:
 * at once, then every interval; w may be NULL). */
void parload__pool_run(parload__pool *p, parload__job_fn fn, void *arg,
		       parload__waiter *w);
/* The same in two halves: start the generation, and later wait for it;
 * the caller may work in between.  One generation at a time. */
void parload__pool_start(parload__pool *p, parload__job_fn fn, void *arg);
void parload__pool_wait(parload__pool *p, parload__waiter *w);
void parload__pool_free(parload__pool *p);

/* ---- engine.c: the loader's parallel machinery ---- */

typedef struct parload__engine {
	parload__topology *topo;
	/* NULL with one worker (it runs on the caller), and until the first
	 * load that reads with workers starts it. */
	parload__pool *pool;
	unsigned workers;
	parload__place *places;
	bool bind;            /* workers bind to their places as they start */
	/* Direct reads' queues (aio.c), one a worker: made by the first
	 * direct load (parload__engine_aio_ready), each opened by its
	 * worker, and closed only with the loader, each by its worker. */
	parload__aio *aio;
} parload__engine;

/* Start the workers if they are not running yet: a loader that only ever
 * loads empty files, streams or single-threaded strategies starts none.
 * One worker reads on the caller's thread, unless the reads must go on in
 * the background (batches, read while the caller works on the last one):
 * then it gets a thread too. */
int parload__engine_ready(parload__engine *e, bool background,
			  parload_error *err);

/* Run fn(arg, w) for every worker w: on the pool, the caller taking its
 * turns (w, may be NULL) while it waits, or on the caller. */
void parload__engine_run(parload__engine *e, parload__job_fn fn, void *arg,
			 parload__waiter *w);
/* Start it (on the caller, without a pool, it runs to the end here), and
 * wait for it. */
void parload__engine_start(parload__engine *e, parload__job_fn fn, void *arg);
void parload__engine_wait(parload__engine *e, parload__waiter *w);
/* The workers' queues for direct reads, made before the workers start:
 * 0, or -1 where memory is short (the load then reads synchronously). */
int parload__engine_aio_ready(parload__engine *e);
/* Worker w's queue, which only worker w touches (after
 * parload__engine_aio_ready). */
parload__aio *parload__engine_aio(parload__engine *e, unsigned w);
const parload_options *parload__loader_options(const parload_loader *l);
parload__engine *parload__loader_engine(parload_loader *l);

/* engine.c: the loader's workers, counted and placed by the options (the
 * pool starts with the first load that needs it), and freed. */
int parload__engine_init(parload__engine *e, const parload_options *o,
			 parload_error *err);
void parload__engine_free(parload__engine *e);

/* ---- the strategies: one read step each (strategy.c has the table) ---- */

/* A strategy reads the views of c->shape from c->fd into c->out's arrays
 * and counts its reads in c->io; everything around it (open, header,
 * checks, memory, stats, close) is load.c's.  It may check views as it
 * reads (then it sets c->checked and fills c->bad), or leave the checks to
 * the load.  Its name is its row's in PARLOAD_STRATEGY_MAP; the code
 * around it asks its caps, never which strategy it is.  Defined with
 * designated initialisers. */
typedef struct parload__strategy {
	unsigned caps; /* PARLOAD_CAP_* (parload.h): what it can do */
	int (*read)(parload__ctx *c);
	/* Optional: read the file header's 64 bytes its own way (mmap reads
	 * them from its mapping) instead of a pread, and release what that
	 * set up in c->state once the load is over. */
	int (*header)(parload__ctx *c, unsigned char *bytes);
	void (*release)(parload__ctx *c);
} parload__strategy;

#define PARLOAD__STRATEGY_DECL_(name, id, text)                                \
	extern const parload__strategy parload__strategy_##id;
PARLOAD_STRATEGY_MAP(PARLOAD__STRATEGY_DECL_)
#undef PARLOAD__STRATEGY_DECL_

/* pass.c: one pass of the workers over output views [k_begin, k_end)
 * of the load's plan, into arrays that hold view k_begin at index 0 (view
 * layout; a sinogram pass covers every view).  Start returns at once; wait
 * returns the pass's result, its bad views added to c->bad (without
 * keep-going the first fails it, described while its bytes are in the
 * arrays).  One pass at a time per load. */
typedef struct parload__pass parload__pass;
int parload__pass_new(parload__ctx *c, parload__pass **out);
void parload__pass_start(parload__pass *p, uint64_t k_begin, uint64_t k_end,
			 parload_view_header *headers,
			 unsigned char *raw_headers, void *pixels);
int parload__pass_wait(parload__pass *p);
/* Adds the pass's reads to c->io; takes NULL and a pass that failed to be
 * made. */
void parload__pass_free(parload__pass *p);

/* batch.c: the read step of a load with parload_request.on_batch. */
int parload__read_batches(parload__ctx *c);
/* Views per batch of the load's request (at least 1). */
uint64_t parload__batch_views(const parload__ctx *c);
/* The bytes a load reads of each selected view: its header where read,
 * its rows (parload_batch.bytes_done and parload_progress count these). */
uint64_t parload__view_read_bytes(const parload__ctx *c);
/* Hand output views [k_begin, k_end) to the caller's on_batch;
 * PARLOAD_ECANCELED, written to err, when it asks to stop. */
int parload__deliver(parload__ctx *c, uint64_t k_begin, uint64_t k_end,
		     const parload_view_header *headers,
		     const unsigned char *raw_headers, const void *pixels,
		     parload_error *err);

/* The strategy for code s, or NULL. */
const parload__strategy *parload__strategy_get(int s);
/* pipe.c: a pipe, socket or character device, whatever the strategy. */
extern const parload__strategy parload__strategy_pipe;


#endif /* PARLOAD_ENGINE_H */
