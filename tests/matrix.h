/*
 * matrix.h - the configurations every suite loads with: each strategy the
 * library names, the parallel one with several worker counts, and those
 * that read through an I/O API with each API and each kind of buffering.
 *
 * The table is built once, from the library's own list of strategies and
 * I/O APIs, and entries of one strategy are contiguous: a suite iterates
 * all of it, or one strategy's range, with tcase_add_loop_test().
 */
#ifndef PARLOAD_MATRIX_H
#define PARLOAD_MATRIX_H

#include <stddef.h>

#include "parload.h"

typedef struct tu_config {
	char label[96];    /* "sequential, stdio, 4 KiB buffer" */
	int strategy;      /* PARLOAD_STRATEGY_* */
	unsigned threads;  /* the parallel strategy's workers; else 0 */
	int io;            /* PARLOAD_IO_* */
	size_t buffer;     /* parload_options.buffer_size */
} tu_config;

/* The number of configurations (at most TU_MATRIX_MAX), and the i-th
 * (0 <= i < tu_matrix_size()). */
#define TU_MATRIX_MAX 128
int tu_matrix_size(void);
const tu_config *tu_matrix(int i);
/* Add tf to t as a loop test over every configuration (_i is its index). */
#define tu_add_matrix_test(t, tf) \
	tcase_add_loop_test(t, tf, 0, tu_matrix_size())
/* The entries of one strategy: [tu_matrix_first(s), tu_matrix_end(s)). */
int tu_matrix_first(int strategy);
int tu_matrix_end(int strategy);
/* The I/O API and buffering of the k-th of the tu_io_variants() entries
 * each strategy that reads through an I/O API has. */
int tu_io_variants(void);
void tu_io_variant(int k, int *io, size_t *buffer);
/* The entry with these settings; fails the test if there is none. */
const tu_config *tu_matrix_find(int strategy, unsigned threads, int io,
				size_t buffer);

/* The parallel strategy's entry with that many workers. */
const tu_config *tu_parallel(unsigned threads);

/* parload_options_init() with c's strategy, threads, I/O API and
 * buffering, and flags (PARLOAD_OPT_*). */
void tu_config_options(parload_options *o, const tu_config *c,
		       unsigned flags);

/* The calls below add PARLOAD_OPT_NO_BIND: binding is irrelevant to what
 * they serve and costs time on big machines. */

/* A loader for c with flags; fails the test if it cannot be made. */
parload_loader *tu_config_loader(const tu_config *c, unsigned flags);
/* parload_load() of path with c and flags; err is cleared first. */
int tu_config_load(const tu_config *c, unsigned flags, const char *path,
		   parload_dataset *ds, parload_error *err);

/* tu_load_fed() (testutil.h) with a loader of c and flags made for it,
 * the stream named "stream". */
int tu_config_load_fed(const unsigned char *data, size_t len, size_t chunk,
		       int via, const tu_config *c, unsigned flags,
		       parload_dataset *ds, parload_error *err);

#endif
