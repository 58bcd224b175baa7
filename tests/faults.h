/*
 * faults.h - what check_faults and check_retry share: the configurations
 * they walk, the stream they load, what the process holds, what a failure
 * must look like, and the writer under test.
 *
 * Everything here needs the fault-injection seam (./configure
 * --enable-fault-injection, tests/fault/fault.h) but ft_skip(), which a
 * program built without it runs instead of its tests.
 */
#ifndef PARLOAD_FAULTS_H
#define PARLOAD_FAULTS_H

/* Say why the program's tests do not run; returns 77. */
int ft_skip(const char *program);

#ifdef PARLOAD_FAULT_INJECTION

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "matrix.h"
#include "testutil.h"

/* ---- the loads under test ---- */

/* A configuration of the matrix (matrix.h), and the options it is walked
 * with. */
typedef struct ft_config {
	const tu_config *m;
	unsigned flags; /* PARLOAD_OPT_* */
	char name[128];
} ft_config;

/* With CRCs checked, view FT_BAD_VIEW's payload does not match its CRC
 * and the load goes on past it (PARLOAD_OPT_KEEP_GOING), listing it. */
#define FT_CRC_KEEP_GOING (PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING)
#define FT_BAD_VIEW 3

/* Every configuration of the matrix, then two of them with CRCs checked
 * past a bad view: ft_build_configs() makes them as the suite is built. */
extern ft_config ft_configs[TU_MATRIX_MAX + 2];
extern int ft_n_configs;
void ft_build_configs(void);
/* The configuration for m with no flags. */
const ft_config *ft_config_of(const tu_config *m);

/* 7 views of 16 x 40 u16: 1280-byte payloads, bigger than FT_MAX_READ,
 * so a payload takes two reads and a worker's share several. */
#define FT_VIEWS 7
#define FT_WIDTH 16
#define FT_HEIGHT 40
#define FT_MAX_READ 1000
#define FT_SEED 5

void ft_options(parload_options *o, const ft_config *c);
/* Write the test stream (for c, or the plain one when c is NULL) and read
 * the reference; c is then the configuration ft_assert_same() expects. */
char *ft_stream_for(const ft_config *c, const char *name, tu_soa *ref);
char *ft_stream(const char *name, tu_soa *ref);
/* A good dataset: the file's bytes, and the bad view listed when CRCs
 * were checked. */
void ft_assert_same(const parload_dataset *ds, const tu_soa *ref);

/* ---- what the process holds ---- */

typedef struct ft_snapshot {
	long live[PARLOAD__FR_COUNT];
	int tasks;
	int fds;
} ft_snapshot;

/* What the process holds (live resources, threads, descriptors), once
 * its thread count has settled: a base for ft_assert_as_before. */
void ft_snap(ft_snapshot *s);
/* Assert that the process holds what it held at base. */
void ft_assert_as_before(const ft_snapshot *base, const char *what);
bool ft_all_zero(const void *p, size_t n);

/* Which kinds of call a walk failed, for its log line. */
typedef struct ft_tally {
	unsigned n[PARLOAD__FK_COUNT];
	char text[1024];
} ft_tally;

const char *ft_tally_text(ft_tally *t);

/* ---- what a failure must look like ---- */

/* Whether a failure of kind k may also end in success (with exact
 * data). */
bool ft_may_succeed(const ft_config *c, int k);
/* A call failed by a fault of kind k returned rc and err as it must; path
 * is the file its message must name (NULL: none); writing says whether
 * the writer made the call. */
void ft_assert_failure(const char *what, int k, int rc,
		       const parload_error *err, const char *path,
		       bool writing);

/* ---- loads ---- */

/* parload_loader_load() into a dataset full of garbage. */
int ft_load(parload_loader *l, const char *path, parload_dataset *ds,
	    parload_error *err);
void ft_assert_loads_exactly(parload_loader *l, const char *path,
			     const tu_soa *ref, const char *what);
/* A first load, after which the pool's workers are bound. */
void ft_warm_up(parload_loader *l, const char *path, const tu_soa *ref);
/* A loader for c, with the seam's counts reset, warmed up on path
 * (ft_warm_up), and the process's holdings then in *base. */
parload_loader *ft_warm_loader(const ft_config *c, const char *path,
			       const tu_soa *ref, ft_snapshot *base);
/* After a load with a fault armed: the outcome is right for the fault
 * that fired (k, or -1 if none did), and nothing is left behind. */
void ft_check_outcome(const ft_config *c, int k, int rc, parload_dataset *ds,
		      const parload_error *err, const char *path,
		      const tu_soa *ref, const char *what);
/* After an attempt with a fault armed at the N-th call: the kind of call
 * that failed, or -1 if the attempt ran past its last call with none
 * failing (it must then have loaded ref exactly; its dataset is freed),
 * and the seam disarmed; a failure is tallied in t. */
int ft_fired(int rc, parload_dataset *ds, const parload_error *err,
	     const tu_soa *ref, ft_tally *t, const char *what);
/* The kinds of call that EINTR can interrupt. */
uint64_t ft_interruptible_mask(void);

/* ---- the writer ---- */

typedef struct ft_shape {
	const char *name;
	uint64_t views;
	uint32_t width, height;
} ft_shape;

/* Views that all fit the writer's 1 MiB buffer, and views bigger than
 * it (written straight from the caller's memory). */
#define FT_N_SHAPES 2
extern const ft_shape ft_shapes[FT_N_SHAPES];

/* Write the shape's stream with the writer API; returns the first
 * failure. */
int ft_write_stream(const char *path, const ft_shape *s, parload_error *err);
void ft_assert_same_file(const char *a, const char *b, const char *what);

#endif /* PARLOAD_FAULT_INJECTION */
#endif
