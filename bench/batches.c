/*
 * batches.c - a load delivered in batches while it runs, as a program
 * that consumes views during the load sees it (parload_request.on_batch,
 * parload_loader_run).  The loader (its topology and thread pool) is made
 * before the clock, as the command does; the clock starts just before
 * parload_loader_run and stops when it returns.
 *
 * Usage: batches [--threads N] [--window BYTES] [--batch-views N]
 *                [--compute-us N] [--busy] --seed S FILE
 *        batches --compute-only K --compute-us N
 *
 * --compute-us N gives the callback N microseconds of its thread's CPU
 * time per batch (a busy loop on CLOCK_THREAD_CPUTIME_ID: time the thread
 * is not given a core does not count), a consumer that computes on each
 * batch; a window's check (below) is part of that time, the loop burns
 * the rest.  --compute-only K burns K such batches without a load: the
 * compute alone, the callback's whole work, beside which the loads with
 * compute are compared.  (Burning N on top of the check made the callback
 * of a load with compute do more than the compute alone: the reference
 * stream's check, 8.9 ms in 56 batches, put the run with compute at 1.22
 * x the compute alone before any reading.)  --busy keeps a thread of its
 * own spinning while the clock runs (started before it, stopped after):
 * the load beside a core taken by other work, as the callback's compute
 * takes one, without the callback's waits.
 *
 * Every view is checked against the stream that `parload gen --seed S`
 * writes (cli/gen.c), and the batches must deliver every view once, in
 * order.  Without a window the views stay in the dataset and are checked
 * after the clock.  With --window BYTES the windows are reused: the
 * callback checks each batch's headers and folds its pixels into a
 * checksum (on the clock: verify_seconds says how long that took), which
 * after the clock must equal the checksum of the generator's content.
 *
 * Prints one JSON object: {"seconds" (the call), "first_batch_seconds"
 * (from just before the call until the first batch reached the
 * callback), "load_seconds" (the load's own stats.seconds), "batches",
 * "views", "bytes" (the file), "window", "compute_us",
 * "compute_seconds" (CPU time burned in the callbacks), "verify_seconds"
 * (wall time of the windows' checks), "verify_cpu_seconds" (their CPU
 * time, which counts in the compute's), "cpu_seconds" (the CPU time of
 * the whole process, every thread, user and system, while the clock ran;
 * with --busy the spinning thread's too), "verified"}; exit status 1 on
 * any failure or difference.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <parload.h>

#include "gen.h"

struct consumer {
	const parload_file_header *h;
	uint64_t seed;
	bool windowed;  /* check each batch now: its window is reused */
	uint64_t compute_ns;
	double t0, first;
	uint64_t batches, next_view;
	double compute_seconds, verify_seconds, verify_cpu_seconds;
	uint64_t sum;  /* windowed: the checksum of every pixel delivered */
	bool ok;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Burn ns nanoseconds of this thread's CPU time; returns what it burnt. */
static double burn(uint64_t ns)
{
	double start = clock_s(CLOCK_THREAD_CPUTIME_ID), t = start;

	while (t - start < (double)ns * 1e-9)
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
	return t - start;
}

/* --busy: a thread that spins until told to stop. */
static atomic_bool spin_stop;

static void *spin(void *arg)
{
	volatile uint64_t x = 0;

	(void)arg;
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	return NULL;
}

/* A view's pixels folded into the running checksum: their 64-bit words
 * summed (a loop the compiler vectorises: near memory speed), then mixed
 * with the view's index, so that a view out of place or a byte changed
 * shows. */
static uint64_t fold(uint64_t acc, uint64_t view, const unsigned char *p,
		     size_t len)
{
	uint64_t sum = 0, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		sum += w;
	}
	for (; i < len; i++)
		sum += (uint64_t)p[i] << (8 * (i % 8));
	return (acc ^ (sum + view)) * 0x100000001b3u;
}

/* A windowed batch, whose window is reused once the callback returns: its
 * headers against the generator, its pixels into the checksum that the
 * generator's content must give after the clock. */
static bool check_batch(struct consumer *c, const parload_batch *b)
{
	const unsigned char *pix = b->pixels;

	for (uint64_t k = 0; k < b->count; k++) {
		parload_view_header want, got = b->headers[k];

		pgen_view_header(c->seed, b->first + k, c->h->view_count, &want);
		got.crc32c = 0; /* the writer's, where the file has CRCs */
		if (memcmp(&want, &got, sizeof(want)) != 0) {
			fprintf(stderr, "batches: view %" PRIu64
				": header differs\n", b->first + k);
			return false;
		}
		c->sum = fold(c->sum, b->first + k, pix + k * b->view_bytes,
			      (size_t)b->view_bytes);
	}
	return true;
}

/* The checksum of what `parload gen --seed S` wrote, view by view. */
static bool expected_sum(const struct consumer *c, uint64_t *out)
{
	unsigned char *buf = malloc(c->h->payload_size ? c->h->payload_size : 1);
	uint64_t acc = 0;

	if (!buf)
		return false;
	for (uint64_t v = 0; v < c->h->view_count; v++) {
		pgen_payload(c->seed, v, buf, (size_t)c->h->payload_size);
		acc = fold(acc, v, buf, (size_t)c->h->payload_size);
	}
	free(buf);
	*out = acc;
	return true;
}

static int on_batch(const parload_batch *b, void *arg)
{
	struct consumer *c = arg;
	double checked = 0.0;

	if (c->batches++ == 0)
		c->first = now() - c->t0;
	if (b->first != c->next_view || b->count == 0) {
		fprintf(stderr, "batches: batch %" PRIu64 " holds views %" PRIu64
			" to %" PRIu64 ", expected view %" PRIu64 " next\n",
			c->batches, b->first, b->first + b->count,
			c->next_view);
		c->ok = false;
		return 1;
	}
	c->next_view += b->count;
	if (c->windowed) {
		const double t = now();
		const double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID);

		if (!check_batch(c, b)) {
			c->ok = false;
			return 1;
		}
		checked = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu;
		c->verify_seconds += now() - t;
		c->verify_cpu_seconds += checked;
	}
	/* The check counts in the batch's compute; the loop burns the rest. */
	if (c->compute_ns && checked < (double)c->compute_ns * 1e-9)
		c->compute_seconds += burn(c->compute_ns -
					   (uint64_t)(checked * 1e9));
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: batches [--threads N] [--window BYTES] "
			"[--batch-views N] [--compute-us N] [--busy]\n"
			"               --seed S FILE\n"
			"       batches --compute-only K --compute-us N\n");
	return 2;
}

/* The compute alone: k batches' worth of burning, no load. */
static int compute_only(uint64_t k, uint64_t ns)
{
	double t0 = now(), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	double burnt = 0.0;

	for (uint64_t i = 0; i < k; i++)
		burnt += burn(ns);
	printf("{\"seconds\":%.9f,\"batches\":%" PRIu64 ",\"compute_us\":%"
	       PRIu64 ",\"compute_seconds\":%.9f,\"cpu_seconds\":%.9f"
	       ",\"verified\":true}\n",
	       now() - t0, k, ns / 1000, burnt,
	       clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "window", required_argument, NULL, 'w' },
		{ "batch-views", required_argument, NULL, 'b' },
		{ "compute-us", required_argument, NULL, 'c' },
		{ "compute-only", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "busy", no_argument, NULL, 'y' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	uint64_t seed = 0, compute_us = 0, only = 0, file_bytes = 0;
	int have_seed = 0, busy = 0, rc, opt;
	pthread_t spinner;
	parload_options opts;
	parload_request req;
	parload_error err;
	parload_loader *loader;
	parload_dataset ds;
	parload_file_header h;
	struct consumer c;
	double seconds, cpu;

	parload_options_init(&opts);
	parload_request_init(&req);
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		unsigned long long v = optarg ? strtoull(optarg, NULL, 10) : 0;

		switch (opt) {
		case 't':
			opts.threads = (unsigned)v;
			break;
		case 'w':
			req.window_bytes = v;
			break;
		case 'b':
			req.batch_views = v;
			break;
		case 'c':
			compute_us = v;
			break;
		case 'o':
			only = v;
			break;
		case 's':
			seed = v;
			have_seed = 1;
			break;
		case 'y':
			busy = 1;
			break;
		default:
			return usage();
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage();
	if (only)
		return path ? usage() : compute_only(only, compute_us * 1000);
	if (!path || !have_seed)
		return usage();

	/* The header, for the checks; read before the clock. */
	if (parload_read_header(path, &h, &err) != 0 ||
	    parload_file_size(&h, &file_bytes) != 0 ||
	    parload_loader_new(&loader, &opts, &err) != 0) {
		fprintf(stderr, "batches: %s\n", err.message);
		return 1;
	}
	memset(&c, 0, sizeof(c));
	c.h = &h;
	c.seed = seed;
	c.windowed = req.window_bytes != 0;
	c.compute_ns = compute_us * 1000;
	c.ok = true;
	req.source.path = path;
	req.on_batch = on_batch;
	req.batch_arg = &c;

	if (busy && pthread_create(&spinner, NULL, spin, NULL) != 0) {
		fprintf(stderr, "batches: cannot start the busy thread\n");
		return 1;
	}
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	c.t0 = now();
	rc = parload_loader_run(loader, &req, &ds, &err);
	seconds = now() - c.t0;
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	if (busy) {
		atomic_store(&spin_stop, true);
		pthread_join(spinner, NULL);
	}
	if (rc != 0) {
		if (c.ok)
			fprintf(stderr, "batches: %s\n", err.message);
		return 1;
	}
	if (c.next_view != h.view_count) {
		fprintf(stderr, "batches: %s: the batches delivered %" PRIu64
			" of %" PRIu64 " views\n", path, c.next_view,
			h.view_count);
		c.ok = false;
	}
	if (c.ok && c.windowed) {
		uint64_t want = 0;

		if (!expected_sum(&c, &want) || want != c.sum) {
			fprintf(stderr, "batches: %s: the pixels delivered do not "
				"sum to the generator's (checksum %016" PRIx64
				", expected %016" PRIx64 ")\n", path, c.sum, want);
			c.ok = false;
		}
	}
	if (c.ok && !c.windowed) {
		uint64_t bad;
		bool bad_header;

		if (!pgen_verify(&ds, seed, &bad, &bad_header)) {
			fprintf(stderr, "batches: %s: view %" PRIu64
				": %s differs\n", path, bad,
				bad_header ? "header" : "payload");
			c.ok = false;
		}
	}
	printf("{\"seconds\":%.9f,\"first_batch_seconds\":%.9f"
	       ",\"load_seconds\":%.9f,\"batches\":%" PRIu64
	       ",\"views\":%" PRIu64 ",\"bytes\":%" PRIu64
	       ",\"window\":%" PRIu64 ",\"compute_us\":%" PRIu64
	       ",\"compute_seconds\":%.9f,\"verify_seconds\":%.9f"
	       ",\"verify_cpu_seconds\":%.9f"
	       ",\"cpu_seconds\":%.9f,\"threads\":%u,\"verified\":%s}\n",
	       seconds, c.first, ds.stats.seconds, c.batches, c.next_view,
	       file_bytes, (uint64_t)req.window_bytes, compute_us,
	       c.compute_seconds, c.verify_seconds, c.verify_cpu_seconds, cpu,
	       parload_loader_threads(loader), c.ok ? "true" : "false");
	/* Freed so that valgrind can run it clean; not on the clock. */
	parload_dataset_free(&ds);
	parload_loader_free(loader);
	return c.ok ? 0 : 1;
}
