/*
 * matrix.c - the configurations the suites load with (see matrix.h).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "testutil.h"

/* The parallel strategy's worker counts: one (no pool), and pools whose
 * shares split the test streams' views unevenly. */
static const unsigned worker_counts[] = { 1, 2, 3, 5 };
/* Unbuffered, the API's default, buffers smaller than a record and
 * larger than a view, and one larger than the test streams. */
static const size_t buffers[] = { 0, PARLOAD_BUFFER_DEFAULT, 512, 4096,
				  (size_t)1 << 20 };

static tu_config table[TU_MATRIX_MAX];
static int n_configs = -1;
static int first[PARLOAD_STRATEGY_COUNT_], end[PARLOAD_STRATEGY_COUNT_];

static void buffer_text(char *out, size_t len, size_t b)
{
	if (b == 0)
		snprintf(out, len, "unbuffered");
	else if (b == PARLOAD_BUFFER_DEFAULT)
		snprintf(out, len, "default buffer");
	else if (b % (1024 * 1024) == 0)
		snprintf(out, len, "%zu MiB buffer", b / (1024 * 1024));
	else if (b % 1024 == 0)
		snprintf(out, len, "%zu KiB buffer", b / 1024);
	else
		snprintf(out, len, "%zu-byte buffer", b);
}

static void add(int s, unsigned threads, int io, size_t buffer)
{
	tu_config *c;
	char b[48];

	/* Called while Check builds its suites, before any test runs. */
	if (n_configs == TU_MATRIX_MAX) {
		fprintf(stderr, "more than %d configurations\n", TU_MATRIX_MAX);
		exit(EXIT_FAILURE);
	}
	c = &table[n_configs++];
	c->strategy = s;
	c->threads = threads;
	c->io = io;
	c->buffer = buffer;
	buffer_text(b, sizeof(b), buffer);
	if (threads)
		snprintf(c->label, sizeof(c->label), "%s, %u thread%s",
			 parload_strategy_name(s), threads,
			 threads == 1 ? "" : "s");
	else if (parload_strategy_uses_io(s))
		snprintf(c->label, sizeof(c->label), "%s, %s, %s",
			 parload_strategy_name(s), parload_io_name(io), b);
	else
		snprintf(c->label, sizeof(c->label), "%s",
			 parload_strategy_name(s));
}

int tu_io_variants(void)
{
	int n = 0;

	while (parload_io_name(n))
		n++;
	return n * (int)(sizeof(buffers) / sizeof(*buffers));
}

void tu_io_variant(int k, int *io, size_t *buffer)
{
	const int nb = (int)(sizeof(buffers) / sizeof(*buffers));

	*io = k / nb;
	*buffer = buffers[k % nb];
}

static void build(void)
{
	n_configs = 0;
	for (int s = 0; s < PARLOAD_STRATEGY_COUNT_; s++) {
		first[s] = n_configs;
		if (parload_strategy_caps(s) & PARLOAD_CAP_THREADS) {
			for (size_t k = 0; k < sizeof(worker_counts) /
						       sizeof(*worker_counts);
			     k++)
				add(s, worker_counts[k], PARLOAD_IO_POSIX,
				    PARLOAD_BUFFER_DEFAULT);
		} else if (parload_strategy_uses_io(s)) {
			for (int k = 0; k < tu_io_variants(); k++) {
				int io;
				size_t b;

				tu_io_variant(k, &io, &b);
				add(s, 0, io, b);
			}
		} else {
			add(s, 0, PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT);
		}
		end[s] = n_configs;
	}
}

int tu_matrix_size(void)
{
	if (n_configs < 0)
		build();
	return n_configs;
}

const tu_config *tu_matrix(int i)
{
	tu_matrix_size();
	return &table[i];
}

int tu_matrix_first(int strategy)
{
	tu_matrix_size();
	return first[strategy];
}

int tu_matrix_end(int strategy)
{
	tu_matrix_size();
	return end[strategy];
}

const tu_config *tu_matrix_find(int strategy, unsigned threads, int io,
				size_t buffer)
{
	for (int i = tu_matrix_first(strategy); i < tu_matrix_end(strategy);
	     i++) {
		const tu_config *c = &table[i];

		if (c->threads == threads && c->io == io && c->buffer == buffer)
			return c;
	}
	ck_abort_msg("no configuration %s/%u/%d/%zu",
		     parload_strategy_name(strategy), threads, io, buffer);
	return NULL;
}

const tu_config *tu_parallel(unsigned threads)
{
	return tu_matrix_find(PARLOAD_STRATEGY_PARALLEL, threads,
			      PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT);
}

void tu_config_options(parload_options *o, const tu_config *c,
		       unsigned flags)
{
	parload_options_init(o);
	o->strategy = (parload_strategy)c->strategy;
	o->threads = c->threads;
	o->io = (parload_io)c->io;
	o->buffer_size = c->buffer;
	o->flags = flags;
}

parload_loader *tu_config_loader(const tu_config *c, unsigned flags)
{
	parload_options o;
	parload_loader *l;
	parload_error err;

	tu_config_options(&o, c, flags | PARLOAD_OPT_NO_BIND);
	ck_assert_msg(parload_loader_new(&l, &o, &err) == 0, "%s: %s",
		      c->label, err.message);
	return l;
}

int tu_config_load(const tu_config *c, unsigned flags, const char *path,
		   parload_dataset *ds, parload_error *err)
{
	parload_options o;

	tu_config_options(&o, c, flags | PARLOAD_OPT_NO_BIND);
	o.error = err;
	memset(err, 0, sizeof(*err));
	return parload_load(path, &o, ds);
}

int tu_config_load_fed(const unsigned char *data, size_t len, size_t chunk,
		       int via, const tu_config *c, unsigned flags,
		       parload_dataset *ds, parload_error *err)
{
	parload_loader *l = tu_config_loader(c, flags);
	int rc = tu_load_fed(l, data, len, chunk, via, "stream", ds, err);

	parload_loader_free(l);
	return rc;
}
