/*
 * batchutil.h - what check_batches, check_windows, check_follow,
 * check_iterator and check_batch_faults share: the stream they load, a
 * callback that checks every batch as it arrives and keeps a copy of it,
 * and one batched load under test (a fixture).
 */
#ifndef PARLOAD_BATCHUTIL_H
#define PARLOAD_BATCHUTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "testutil.h"

/* The stream most tests load: 37 views (a prime: no batch size but 1 and
 * 37 divides it) of 24 x 10 u16. */
#define BU_VIEWS 37
#define BU_WIDTH 24
#define BU_HEIGHT 10
#define BU_PS ((uint64_t)BU_WIDTH * BU_HEIGHT * 2)
#define BU_NEVER UINT64_MAX

/* CLOCK_MONOTONIC, in seconds. */
double bu_now(void);

/* The test stream as name, with CRCs when flags says so; damaged, views 5
 * and 22 do not match their CRCs.  *ref is its serial reading. */
char *bu_stream(const char *name, uint32_t flags, bool damaged,
		tu_soa *ref);
/* The dataset is all zero bytes, as a failed load leaves it. */
bool bu_zeroed(const parload_dataset *ds);
/* The process runs tasks threads (given a second to settle). */
void bu_assert_tasks(int tasks, const char *what);

/* What the callback saw. */
typedef struct bu_got {
	const parload_dataset *ds; /* batches point into it (no window) */
	uint64_t view_bytes;       /* of the selection */
	uint64_t stop_at;          /* stop the load at this batch */
	/* Set to 1 at stop_at as well, where not NULL: the request's cancel,
	 * raised as parload_stream_close() raises it. */
	volatile int *cancel;
	bool keep;                 /* copy what arrives */
	bool windowed;
	uint64_t batches, views, max_count;
	uint64_t total, bytes_done, bytes_total;
	double seconds;
	const void *windows[3];    /* distinct pixel addresses of batches */
	const parload_view_header *base; /* pulled: headers of view 0 */
	int n_windows;
	unsigned char *headers, *pixels; /* copies of every view delivered */
	double *when;              /* when each view arrived, or NULL */
	/* Checks a batch against the file itself (the windows test). */
	void (*check)(struct bu_got *g, const parload_batch *b);
	void *check_arg;
} bu_got;

/* Ready to collect up to capacity views of view_bytes each. */
void bu_got_init(bu_got *g, uint64_t view_bytes, uint64_t capacity);
void bu_got_free(bu_got *g);
/* The on_batch callback (arg: a bu_got): asserts that the batch follows
 * the previous one, that its counters are consistent and that it points
 * where it must, and keeps a copy; returns nonzero at batch stop_at. */
int bu_on_batch(const parload_batch *b, void *arg);
/* The first n views that arrived are those of the selection s of ref. */
void bu_assert_got(const bu_got *g, const tu_soa *ref, const parload_shape *s,
		   uint64_t n, const char *what);

/* parload_loader_run() of r with bu_on_batch collecting into g, into a
 * dataset full of garbage; err is cleared first. */
int bu_run(parload_loader *l, parload_request *r, bu_got *g,
	   parload_dataset *ds, parload_error *err);
/* A batched request for sel of path (NULL: the whole file): batches of
 * per views, through windows of window views (0: none); *s is the
 * selection resolved, and g is ready to collect it. */
void bu_prepare(parload_request *r, bu_got *g, parload_shape *s,
		const char *path, const parload_selection *sel, uint64_t per,
		uint64_t window);

/* One batched load under test: the loader, the file and its serial
 * reading, the request, what arrived, and what the load returned. */
typedef struct bu_fixture {
	parload_loader *l;
	char *path;
	tu_soa ref;
	parload_request r;
	parload_shape s;
	bu_got g;
	parload_dataset ds;
	parload_error err;
	int rc;
} bu_fixture;

/* The test stream as name (file_flags: PARLOAD_FLAG_*; damaged: see
 * bu_stream()), a loader of threads with opts (PARLOAD_OPT_*), and a
 * request for sel as bu_prepare() makes it. */
void bu_fixture_init(bu_fixture *f, const char *name, uint32_t file_flags,
		     bool damaged, unsigned threads, unsigned opts,
		     const parload_selection *sel, uint64_t per,
		     uint64_t window);
int bu_fixture_run(bu_fixture *f);
void bu_fixture_free(bu_fixture *f);
/* Another whole-file batched load of f's file in batches of per views:
 * every view, the dataset equal to the serial reading. */
void bu_assert_loads(bu_fixture *f, uint64_t per, const char *what);

#endif
