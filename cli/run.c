/*
 * run.c - loading one file for a subcommand: the request, the progress
 * line (drawn from the load's progress counters while this thread waits
 * for the workers, or from a stream's batches), Ctrl-C through the
 * request's cancel, and
 * the temporary files a command must not leave behind (see common.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "gen.h"

/* How messages and the report name standard input ('-'). */
#define STDIN_NAME "<stdin>"

/* SIGINT or SIGTERM during a load with a progress line or batches
 * (cancel_armed) asks it to stop (interrupted, which is the request's
 * cancel): the workers' next read or the next batch cancels it, the
 * command cleans up and ends by the same signal.  A load that does not
 * stop within a second (a pipe that stalls) is ended by SIGALRM as any
 * other fatal signal ends the command. */
static volatile sig_atomic_t cancel_armed;
static volatile sig_atomic_t interrupted;
_Static_assert(_Generic((sig_atomic_t)0, int: 1, default: 0),
	       "the request's cancel is an int");
/* The workers read interrupted, and the handler line_drawn, from other
 * threads: both are stored and loaded as (lock-free) atomics, as are the
 * load's progress counters. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* A progress line is on the terminal, to clear before a message. */
static volatile sig_atomic_t line_drawn;
/* ---------------------------------------------------------------------
 * Progress: a line on standard error while a load runs, drawn from its
 * batches; the batches also let SIGINT and SIGTERM cancel it.
 * ------------------------------------------------------------------- */

/* Auto progress starts after this long, and redraws at most this often. */
#define PROGRESS_AFTER 0.5
#define PROGRESS_EVERY 0.1
/* A file's line is drawn from the load's progress counters
 * (parload_request.progress) by this thread while it waits for the
 * workers (parload_request.on_wait), every PROGRESS_EVERY, with no thread
 * of its own: batches would make the load a pass of the workers per
 * batch, each ending by waiting for the slowest.  The reference stream
 * with the line took 1.52 x the time without in batches of 4 MiB (63
 * against 41 ms, 11 alternated rounds, 2 threads) and 1.08 x in batches of
 * 64 MiB (41.9 against 38.9 ms, 21 rounds).  A stream's line is drawn
 * from its batches, its records as they arrive: no pass of the workers,
 * and a slow pipe's line moves. */

struct progress {
	const char *name;
	bool draw;  /* a line at all (batches may be there for --follow) */
	bool force;
	bool shown;
	double drawn; /* batch->seconds of the last line */
};

static void print_eta(const parload_batch *b)
{
	double eta = 0.0;

	if (b->bytes_done && b->seconds > 0.0)
		eta = b->seconds * (double)(b->bytes_total - b->bytes_done) /
		      (double)b->bytes_done;
	fprintf(stderr, ", ETA %.0f s", finite_or_zero(eta));
}

static void draw(const parload_batch *b, const char *name)
{
	double rate = 0.0;

	if (b->seconds > 0.0)
		rate = finite_or_zero((double)b->bytes_done / b->seconds / 1e9);
	fprintf(stderr, "\r%s: %" PRIu64 "/%" PRIu64 " views, %.1f/%.1f MB, "
		"%.2f GB/s", name, b->views_done, b->views_total,
		(double)b->bytes_done / 1e6, (double)b->bytes_total / 1e6,
		rate);
	print_eta(b);
	fputs("\033[K", stderr); /* erase what a longer line left */
	fflush(stderr);
	STORE(line_drawn, 1);
}

/* Draw b's line if it is time to: auto progress after PROGRESS_AFTER,
 * at most every PROGRESS_EVERY, and the last line in any case once one
 * was shown (or when forced). */
static void maybe_draw(struct progress *p, const parload_batch *b)
{
	const bool last = b->views_done == b->views_total;

	if (!p->draw || (!p->force && b->seconds < PROGRESS_AFTER))
		return;
	if (p->shown && !last && b->seconds - p->drawn < PROGRESS_EVERY)
		return;
	draw(b, p->name);
	p->shown = true;
	p->drawn = b->seconds;
}

static int on_batch(const parload_batch *b, void *arg)
{
	if (LOAD(interrupted))
		return 1;
	maybe_draw(arg, b);
	return 0;
}

/* A file's line: the load's counters, and when the load began. */
struct counting {
	struct progress *p;
	parload_progress counts;
	double t0;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The counters as a batch of the views so far (views in proportion to
 * the bytes: the workers fill views side by side). */
static void counted(const struct counting *d, parload_batch *b)
{
	const parload_progress *c = &d->counts;

	memset(b, 0, sizeof(*b));
	b->views_total = LOAD(c->views_total);
	b->bytes_total = LOAD(c->bytes_total);
	b->bytes_done = LOAD(c->bytes_done);
	b->bytes_done = b->bytes_done < b->bytes_total ? b->bytes_done :
							 b->bytes_total;
	b->views_done = b->bytes_done == b->bytes_total ?
				b->views_total :
				(uint64_t)((double)b->views_total *
					   (double)b->bytes_done /
					   (double)b->bytes_total);
	b->seconds = mono_now() - d->t0;
}

/* on_wait of a file's load with a line: its line, from the counters.
 * Before the first read is in (the load's first turn comes as it
 * starts), and at the end (run_request draws the last line), nothing. */
static int draw_turn(void *arg)
{
	const struct counting *d = arg;
	parload_batch b;

	counted(d, &b);
	if (b.bytes_done && b.bytes_done < b.bytes_total)
		maybe_draw(d->p, &b);
	return 0;
}

void progress_auto(struct load_cfg *cfg, bool quiet)
{
	if (cfg->progress < 0)
		cfg->progress = !quiet && isatty(STDERR_FILENO) ? 2 : 0;
}

/* Whether the load can deliver batches: a strategy that can, or a
 * stream, view after view. */
static bool batches_possible(const struct load_cfg *cfg, bool stream)
{
	return cfg->opts.selection.layout == PARLOAD_LAYOUT_VIEWS &&
	       (stream || (parload_strategy_caps(cfg->opts.strategy) &
			   PARLOAD_CAP_BATCHES));
}

/* ---------------------------------------------------------------------
 * Loading one file
 * ------------------------------------------------------------------- */

/* --preallocate: size the arrays from the source's description and the
 * selection, allocate them with parload_buffers_alloc() (huge pages
 * unless --no-hugepages) and touch every page, all before the clock.
 * name: the input, in messages. */
static int preallocate(const parload_source *src, const char *name,
		       const parload_options *o, parload_buffers *b,
		       parload_error *err)
{
	parload_desc d;
	int rc;

	rc = parload_describe(src, (o->flags & PARLOAD_OPT_ALLOW_TRUNCATED) != 0,
			      &d, err);
	if (rc < 0)
		return rc;
	rc = parload_buffers_alloc(b, &d, &o->selection, o->flags, err);
	if (rc < 0) {
		/* The layout names no file; the message should. */
		char msg[sizeof(err->message)];

		if (snprintf(msg, sizeof(msg), "%s: %s", name,
			     err->message) > 0)
			memcpy(err->message, msg, sizeof(msg));
		return rc;
	}
	if (b->headers_size) { /* an empty stream has NULL arrays */
		memset(b->headers, 0, b->headers_size);
		memset(b->pixels, 0, b->pixels_size);
		if (b->raw_headers_size)
			memset(b->raw_headers, 0, b->raw_headers_size);
	}
	return 0;
}

/* Whether the input is read as a stream: standard input that is not a
 * regular file, or a path that is a FIFO or a character device. */
static bool is_stream(const struct input *in)
{
	struct stat st;

	if (in->paths)
		return false; /* a list holds regular files (the library) */
	if (strcmp(in->path, "-") == 0)
		return fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode);
	return stat(in->path, &st) == 0 &&
	       (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

/* The request for in.  What is not a regular file (a pipe, a socket, a
 * FIFO, a terminal) is read as a stream whatever the strategy, and l->io
 * says so. */
static int make_request(const struct input *in, const struct load_cfg *cfg,
			struct loaded *l, parload_request *req,
			parload_error *err)
{
	const bool stream = is_stream(in);

	parload_request_init(req);
	input_source(&req->source, in, &cfg->layout);
	if (!in->paths && strcmp(in->path, "-") == 0) {
		req->source.path = NULL;
		req->source.fd = STDIN_FILENO;
		req->source.name = STDIN_NAME;
	}
	l->set = cfg->set;
	parload_settings_apply(&l->set, req);
	req->flags &= ~PARLOAD_REQ_FOLLOW; /* below */
	if (check_same_refs(&l->set, &req->source, l->name, err))
		return err->code;
	if (stream)
		l->io = "stream";
	/* A stream's line, and --follow, come from batches; a file's line
	 * from the load's counters (run_request). */
	if (((cfg->progress > 0 && stream) || cfg->follow) &&
	    batches_possible(cfg, stream))
		req->on_batch = on_batch;
	if (cfg->follow && !stream) {
		if (!req->on_batch) {
			err->code = PARLOAD_EINVAL;
			snprintf(err->message, sizeof(err->message),
				 "%s: --follow reads with the parallel strategy "
				 "in view layout", l->name);
			return PARLOAD_EINVAL;
		}
		req->flags |= PARLOAD_REQ_FOLLOW;
		req->timeout = cfg->timeout;
	}
	/* A stream is read as it comes: following one, the timeout bounds
	 * the library's wait for a FIFO's writer. */
	if (cfg->follow && stream) {
		req->flags |= PARLOAD_REQ_FOLLOW;
		req->timeout = cfg->timeout;
	}
	if (!cfg->preallocate || req->source.fd >= 0)
		return 0;
	req->into = &l->buffers;
	return preallocate(&req->source, l->name, &cfg->opts, &l->buffers,
			   err);
}

/* Run the request, with a file's progress line drawn from the load's
 * counters while it waits (a strategy that keeps them: the parallel one),
 * and SIGINT and SIGTERM cancelling a load that has a line or batches. */
static int run_request(parload_loader *loader, parload_request *req,
		       const struct load_cfg *cfg, struct loaded *l,
		       parload_error *err)
{
	struct progress p = { l->name, cfg->progress > 0, cfg->progress == 1,
			      false, 0.0 };
	struct counting d = { &p, { 0, 0, 0 }, 0.0 };
	bool drawing = false;
	parload_batch b;
	int rc;

	req->batch_arg = &p;
	if (!req->on_batch && cfg->progress > 0 &&
	    (parload_strategy_caps(cfg->opts.strategy) & PARLOAD_CAP_BATCHES)) {
		drawing = true;
		d.t0 = mono_now();
		req->progress = &d.counts;
		req->on_wait = draw_turn;
		req->wait_arg = &d;
		req->wait_interval = PROGRESS_EVERY;
		req->cancel = (const volatile int *)&interrupted;
	}
	cancel_armed = req->on_batch != NULL || drawing;
	rc = parload_loader_run(loader, req, &l->ds, err);
	cancel_armed = 0;
	/* A load that succeeded gets its last line. */
	if (drawing && rc == 0) {
		counted(&d, &b);
		if (b.bytes_total)
			maybe_draw(&p, &b);
	}
	if (p.shown) /* the line goes; what follows starts clean */
		fputs("\r\033[K", stderr);
	STORE(line_drawn, 0);
	return rc;
}

bool report_bad_views(const char *name, const parload_dataset *ds)
{
	for (uint64_t k = 0; k < ds->bad_view_count; k++) {
		const uint64_t v = ds->bad_views[k];

		error_msg("%s: view %" PRIu64 ": payload CRC-32C mismatch "
			  "(byte offset %" PRIu64 ")", name, v,
			  ds->desc.offset + v * ds->desc.record_size +
				  ds->desc.header);
	}
	return ds->bad_view_count > 0;
}

bool verify_seed(const char *name, const parload_dataset *ds, uint64_t seed)
{
	uint64_t bad_view = PARLOAD_NONE;
	bool bad_header = false;

	if (pgen_verify_shape(ds, &ds->shape, seed, &bad_view, &bad_header))
		return true;
	if (bad_view == PARLOAD_NONE)
		error_msg("%s: out of memory while verifying", name);
	else
		error_msg("%s: view %" PRIu64 ": %s differs from the stream "
			  "of seed %" PRIu64, name, bad_view,
			  bad_header ? "header" : "payload", seed);
	return false;
}

int load_input(parload_loader *loader, const struct input *in,
	       const struct load_cfg *cfg, struct loaded *l)
{
	parload_request req;
	parload_error err;
	int rc;

	memset(l, 0, sizeof(*l));
	memset(&err, 0, sizeof(err));
	l->name = !in->paths && strcmp(in->path, "-") == 0 ? STDIN_NAME :
							      in->label;
	l->io = parload_io_name(cfg->opts.io);
	l->files = in->n;
	rc = make_request(in, cfg, l, &req, &err);
	if (rc == 0)
		rc = run_request(loader, &req, cfg, l, &err);
	if (rc < 0) {
		report(l->name, rc, &err);
		parload_buffers_free(&l->buffers);
	}
	return rc;
}

void loaded_free(struct loaded *l)
{
	parload_dataset_free(&l->ds);
	parload_buffers_free(&l->buffers);
}

/* The loader kept until the process ends (end_loader).  volatile: a
 * store the program never reads back must still happen, or the loader
 * would look lost to a leak checker. */
static parload_loader *volatile kept_loader;

void end_loader(parload_loader *loader)
{
	/* The command is about to exit, and the kernel ends the loader's idle
	 * workers and takes back its memory with the process: joining each
	 * worker first costs system calls a user waits for and does nothing
	 * the exit does not.  Kept here, the loader stays reachable, so a
	 * leak checker counts nothing lost.  Sanitized builds free it, so
	 * that ThreadSanitizer sees every thread joined. */
#ifdef PARLOAD_SANITIZED
	parload_loader_free(loader);
#else
	kept_loader = loader;
#endif
}

int new_loader(parload_loader **loader, const struct load_cfg *cfg)
{
	parload_error err;

	memset(&err, 0, sizeof(err));
	if (parload_loader_new(loader, &cfg->opts, &err) == 0)
		return EXIT_OK;
	if (err.message[0])
		error_msg("%s", err.message);
	else
		error_msg("cannot start the loader");
	return EXIT_FAIL;
}

/* ---------------------------------------------------------------------
 * Temporary files
 * ------------------------------------------------------------------- */

/* The temporary file is removed on every return path, and by the handler
 * below when a signal ends the process while it exists. */
static char tmp_path[4096];
enum { TMP_NONE, TMP_FILE, TMP_DIR };
static volatile sig_atomic_t tmp_armed;

static void die_by(int sig)
{
	/* async-signal-safe, as are the others; a store's directory is
	 * empty whenever a fatal signal may run this (tmp_hold). */
	if (tmp_armed == TMP_FILE)
		unlink(tmp_path);
	else if (tmp_armed == TMP_DIR)
		rmdir(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One line for a load cut short by SIGINT or SIGTERM, after clearing
 * the progress line. */
static void say_interrupted(void)
{
	static const char clear[] = "\r\033[K", line[] = PROG ": interrupted\n";

	if (LOAD(line_drawn))
		(void)!write(STDERR_FILENO, clear, sizeof(clear) - 1);
	(void)!write(STDERR_FILENO, line, sizeof(line) - 1);
}

static void on_fatal_signal(int sig)
{
	if (cancel_armed && !LOAD(interrupted) &&
	    (sig == SIGINT || sig == SIGTERM)) {
		STORE(interrupted, sig);
		alarm(1);
		return;
	}
	if (sig == SIGALRM && LOAD(interrupted))
		sig = LOAD(interrupted);
	if (sig == SIGINT || sig == SIGTERM)
		say_interrupted();
	die_by(sig);
}

void catch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
				    SIGALRM };
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* A signal the caller ignores (nohup) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

bool was_interrupted(void)
{
	return LOAD(interrupted) != 0;
}

void end_if_interrupted(void)
{
	if (LOAD(interrupted)) {
		alarm(0);
		fflush(stdout);
		tmp_remove();
		die_by(LOAD(interrupted));
	}
}

void tmp_remove(void)
{
	if (tmp_armed == TMP_FILE)
		unlink(tmp_path);
	else if (tmp_armed == TMP_DIR)
		(void)parload_temp_remove(tmp_path);
	tmp_armed = TMP_NONE;
}

const char *tmp_file(void)
{
	return tmp_path;
}

/* Create the temporary file (or directory), the library's way
 * (parload_temp_create); blocking signals here closes the window between
 * its creation and arming (no library thread exists yet, so the signal
 * can only come to this thread). */
static int tmp_make(const char *path, bool dir)
{
	char scratch[4096];
	parload_error err;
	sigset_t all, old;
	int rc;

	if (!path) {
		const char *tmpdir = getenv("TMPDIR");

		if (!tmpdir || !*tmpdir)
			tmpdir = "/tmp";
		snprintf(scratch, sizeof(scratch), "%s/parload", tmpdir);
		path = scratch;
	}
	memset(&err, 0, sizeof(err));
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	rc = dir ? parload_temp_create_dir(path, tmp_path, sizeof(tmp_path),
					   &err) :
		   parload_temp_create(path, tmp_path, sizeof(tmp_path), &err);
	if (rc == 0)
		tmp_armed = dir ? TMP_DIR : TMP_FILE;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		error_msg("%s", err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int tmp_create(const char *path)
{
	return tmp_make(path, false);
}

int tmp_create_dir(const char *path)
{
	return tmp_make(path, true);
}

/* The signals that end the command, held while a store is written. */
static void fatal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGALRM);
}

void tmp_hold(bool hold)
{
	sigset_t set, pending;
	bool any = false;

	fatal_set(&set);
	if (hold) {
		sigprocmask(SIG_BLOCK, &set, NULL);
		return;
	}
	/* One came while the store was written: it goes, then the signal
	 * ends the command as it would have. */
	if (sigpending(&pending) == 0)
		for (int s = 1; s < NSIG; s++)
			any |= sigismember(&set, s) == 1 &&
			       sigismember(&pending, s) == 1;
	if (any)
		tmp_remove();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int tmp_commit(const char *path, bool force)
{
	parload_save_options o;
	parload_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	parload_save_options_init(&o);
	o.flags = force ? PARLOAD_SAVE_FORCE : 0;
	/* A store, as parload_save puts one in place; a file as any. */
	o.format = tmp_armed == TMP_DIR ? PARLOAD_SAVE_ZARR : PARLOAD_SAVE_AUTO;
	rc = tmp_armed == TMP_DIR ?
		     parload_save_place(tmp_path, path, &o, &err) :
		     parload_temp_place(tmp_path, path, o.flags, &err);
	if (rc == PARLOAD_EEXIST && tmp_armed != TMP_DIR)
		error_msg("%s: file exists (--force replaces it)", path);
	else if (rc < 0)
		error_msg("%s", err.message);
	if (rc < 0) {
		tmp_remove();
		return EXIT_FAIL;
	}
	tmp_armed = TMP_NONE;
	return EXIT_OK;
}
