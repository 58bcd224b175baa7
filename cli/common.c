/*
 * common.c - what the parload command's subcommands share (see common.h).
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
#include <unistd.h>

#include "common.h"
#include "gen.h"

/* How messages and the report name standard input ('-'). */
#define STDIN_NAME "<stdin>"

/* More worker threads than this is a typo, not a machine. */
#define MAX_THREADS 4096

/* SIGINT or SIGTERM during a load that delivers batches (cancel_armed)
 * asks it to stop (interrupted): the next batch cancels it, the command
 * cleans up and ends by the same signal.  A load that does not come to a
 * batch within a second (a pipe that stalls) is ended by SIGALRM as any
 * other fatal signal ends the command. */
static volatile sig_atomic_t cancel_armed;
static volatile sig_atomic_t interrupted;
/* A progress line is on the terminal, to clear before a message. */
static volatile sig_atomic_t line_drawn;

/* ---------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------- */

static void vmessage(const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputs("Try '" PROG " --help'.\n", stderr);
	return EXIT_USAGE;
}

/* How many long options text ("--x" up to len) is a prefix of:
 * getopt_long takes any unique prefix of a long option. */
static unsigned prefix_matches(const char *text, size_t len,
			       const struct option *longopts)
{
	unsigned matches = 0;

	if (strncmp(text, "--", 2) != 0 || len <= 2)
		return 0;
	for (const struct option *o = longopts; o->name; o++)
		if (strncmp(o->name, text + 2, len - 2) == 0)
			matches++;
	return matches;
}

/* opterr is 0, so getopt printed nothing.  Every long option has a value
 * of its own, at least OPT_LONG, so optopt tells a short option (its
 * letter), a long one (its value) and an unknown long one (0) apart; a long
 * one is named by the argument getopt just stepped over. */
int bad_option(int c, char **argv, const struct option *longopts)
{
	const char *text = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };
	size_t len = strcspn(text, "=");

	if (optopt > 0 && optopt < OPT_LONG)
		text = shortopt;
	if (c == ':')
		return usage_error("option '%s' requires an argument", text);
	if (optopt >= OPT_LONG)
		return usage_error("option '%.*s' takes no argument", (int)len,
				   text);
	if (optopt == 0 && prefix_matches(text, len, longopts) > 1)
		return usage_error("ambiguous option '%.*s'", (int)len, text);
	return usage_error("unknown option '%s'", text);
}

/* The library's message already begins with the file's name; fall back on
 * the code's text where a failure left no message. */
void report(const char *path, int rc, const parload_error *err)
{
	if (err->message[0])
		error_msg("%s", err->message);
	else
		error_msg("%s: %s", path, parload_strerror(rc));
}

int print_help(const char *name, const char *help)
{
	printf("Usage: " PROG " %s %s", name, help);
	return EXIT_OK;
}

int parse_options(int argc, char **argv, const struct option_parser *p,
		  void *ctx)
{
	int c, rc;

	/* Messages are ours (bad_option); a subcommand parses its own
	 * arguments from the start. */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, p->shortopts, p->longopts,
				NULL)) != -1) {
		if ((c == 'h' || c == OPT_HELP) && p->name)
			return print_help(p->name, p->help);
		if (c == 'h' || c == OPT_HELP)
			return print_full_help();
		rc = p->fn(ctx, c, optarg);
		if (rc == ARG_UNKNOWN)
			return bad_option(c, argv, p->longopts);
		if (rc != ARG_OK)
			return rc;
	}
	return ARG_OK;
}

/* ---------------------------------------------------------------------
 * Strict number parsing
 * ------------------------------------------------------------------- */

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v > max)
		return false;
	*out = v;
	return true;
}

/* "", "K", "KiB", "m", ...: the shift of the unit, or -1. */
static int unit_shift(const char *s)
{
	static const char units[] = "KMGT";
	/* & ~0x20 folds k, m, g, t to upper case. */
	const int up = s[0] & ~0x20;
	const char *u = up ? strchr(units, up) : NULL;

	if (!s[0])
		return 0;
	if (!u || (strcmp(s + 1, "") != 0 && strcmp(s + 1, "iB") != 0))
		return -1;
	return 10 * (int)(u - units + 1);
}

/* "4096", "64K", "1M", "2GiB": binary multiples. */
bool parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;
	int shift;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	shift = unit_shift(end);
	if (shift < 0 || v > (unsigned long long)(SIZE_MAX >> shift))
		return false;
	*out = (size_t)v << shift;
	return true;
}

/* ---------------------------------------------------------------------
 * Load options
 * ------------------------------------------------------------------- */

void load_cfg_init(struct load_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	parload_options_init(&cfg->opts);
	cfg->opts.error = NULL;
	cfg->progress = -1;
}

/* The options that only set flags, and the flags they set. */
static const struct {
	int opt;
	unsigned flags;
} flag_options[] = {
	{ OPT_NO_BIND, PARLOAD_OPT_NO_BIND },
	{ OPT_NO_HUGEPAGES, PARLOAD_OPT_NO_HUGEPAGES },
	{ OPT_VERIFY, PARLOAD_OPT_VERIFY_CRC },
	{ OPT_KEEP_GOING, PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING },
	{ OPT_ALLOW_TRUNCATED, PARLOAD_OPT_ALLOW_TRUNCATED },
};

/* --strategy and --io take the library's names. */
static int parse_names(parload_options *o, int c, const char *arg)
{
	int v;

	if (c == OPT_STRATEGY) {
		v = parload_strategy_from_name(arg);
		if (v < 0)
			return usage_error("unknown strategy '%s'", arg);
		o->strategy = (parload_strategy)v;
	} else {
		v = parload_io_from_name(arg);
		if (v < 0)
			return usage_error("unknown I/O API '%s'", arg);
		o->io = (parload_io)v;
	}
	return ARG_OK;
}

static int parse_numbers(struct load_cfg *cfg, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 't':
	case OPT_THREADS:
		if (!parse_u64(arg, MAX_THREADS, &v))
			return usage_error("invalid thread count '%s' "
					   "(0 to %d)", arg, MAX_THREADS);
		cfg->opts.threads = (unsigned)v;
		return ARG_OK;
	case OPT_BUFFER:
		if (!parse_size(arg, &cfg->opts.buffer_size))
			return usage_error("invalid buffer size '%s'", arg);
		return ARG_OK;
	case OPT_MAX_READ:
		if (!parse_size(arg, &cfg->opts.max_read))
			return usage_error("invalid read size '%s'", arg);
		return ARG_OK;
	case OPT_VERIFY_SEED:
		if (!parse_u64(arg, UINT64_MAX, &cfg->seed))
			return usage_error("invalid seed '%s'", arg);
		cfg->verify = true;
		return ARG_OK;
	default:
		return ARG_UNKNOWN;
	}
}

int parse_load_option(struct load_cfg *cfg, int c, const char *arg)
{
	int rc = parse_select_option(&cfg->opts.selection, c, arg);

	if (rc != ARG_UNKNOWN)
		return rc;
	for (size_t i = 0; i < sizeof(flag_options) / sizeof(*flag_options);
	     i++) {
		if (flag_options[i].opt == c) {
			cfg->opts.flags |= flag_options[i].flags;
			return ARG_OK;
		}
	}
	if (c == OPT_PREALLOCATE) {
		cfg->preallocate = true;
		return ARG_OK;
	}
	if (c == OPT_PROGRESS || c == OPT_NO_PROGRESS) {
		cfg->progress = c == OPT_PROGRESS;
		return ARG_OK;
	}
	if (c == OPT_STRATEGY || c == OPT_IO)
		return parse_names(&cfg->opts, c, arg);
	return parse_numbers(cfg, c, arg);
}

/* ---------------------------------------------------------------------
 * Selections
 * ------------------------------------------------------------------- */

/* --views A:B:S, --rows A:B, --cols A:B: the library parses, the message
 * names the option. */
static int parse_slice(const char *opt, const char *arg, int allow_step,
		       parload_slice *out)
{
	parload_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = parload_slice_parse(arg, allow_step, out, &err);
	if (rc < 0)
		return usage_error("invalid %s '%s': %s", opt, arg,
				   err.message[0] ? err.message :
						    parload_strerror(rc));
	/* A step is wrong whatever the file; say so before any load. */
	if (out->step != PARLOAD_OMIT && out->step < 1)
		return usage_error("invalid %s '%s': the step must be 1 or "
				   "more", opt, arg);
	return ARG_OK;
}

int parse_select_option(parload_selection *sel, int c, const char *arg)
{
	int layout;

	switch (c) {
	case OPT_SEL_VIEWS:
		return parse_slice("--views", arg, 1, &sel->views);
	case OPT_SEL_ROWS:
		return parse_slice("--rows", arg, 0, &sel->rows);
	case OPT_SEL_COLS:
		return parse_slice("--cols", arg, 0, &sel->cols);
	case OPT_SEL_LAYOUT:
		layout = parload_layout_from_name(arg);
		if (layout < 0)
			return usage_error("invalid --layout '%s' (views or "
					   "sinograms)", arg);
		sel->layout = (parload_layout)layout;
		return ARG_OK;
	default:
		return ARG_UNKNOWN;
	}
}

static bool slice_eq(const parload_slice *a, const parload_slice *b)
{
	return a->start == b->start && a->stop == b->stop &&
	       a->step == b->step;
}

bool selection_is_whole(const parload_selection *sel)
{
	parload_selection whole;

	parload_selection_init(&whole);
	return slice_eq(&sel->views, &whole.views) &&
	       slice_eq(&sel->rows, &whole.rows) &&
	       slice_eq(&sel->cols, &whole.cols) &&
	       sel->layout == whole.layout;
}

uint64_t shape_bytes(const parload_shape *s)
{
	return s->views * (PARLOAD_VIEW_HEADER_SIZE + s->view_bytes);
}

static const char *layout_name(parload_layout layout)
{
	const char *name = parload_layout_name(layout);

	return name ? name : "unknown";
}

/* "views 0:10:4 of 10, rows 2:6 of 8, cols 0:16 of 16, layout views" */
void print_shape_human(const parload_shape *s, const parload_file_header *h)
{
	const uint64_t last = s->view_start + (s->views - 1) * s->view_step;

	printf("views %" PRIu64 ":%" PRIu64 ":%" PRIu64 " of %" PRIu64
	       ", rows %" PRIu32 ":%" PRIu32 " of %" PRIu32
	       ", cols %" PRIu32 ":%" PRIu32 " of %" PRIu32 ", layout %s",
	       s->view_start, s->views ? last + 1 : s->view_start,
	       s->view_step, h->view_count, s->row_start,
	       s->row_start + s->rows, h->height, s->col_start,
	       s->col_start + s->cols, h->width, layout_name(s->layout));
}

void print_shape_json(const parload_shape *s)
{
	printf(",\"views\":%" PRIu64 ",\"view_start\":%" PRIu64
	       ",\"view_step\":%" PRIu64 ",\"rows\":%" PRIu32
	       ",\"row_start\":%" PRIu32 ",\"cols\":%" PRIu32
	       ",\"col_start\":%" PRIu32 ",\"layout\":\"%s\"",
	       s->views, s->view_start, s->view_step, s->rows, s->row_start,
	       s->cols, s->col_start, layout_name(s->layout));
}

/* ---------------------------------------------------------------------
 * Progress: a line on standard error while a load runs, drawn from its
 * batches; the batches also let SIGINT and SIGTERM cancel it.
 * ------------------------------------------------------------------- */

/* Auto progress starts after this long, and redraws at most this often. */
#define PROGRESS_AFTER 0.5
#define PROGRESS_EVERY 0.1

struct progress {
	const char *name;
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
	line_drawn = 1;
}

static int on_batch(const parload_batch *b, void *arg)
{
	struct progress *p = arg;
	const bool last = b->views_done == b->views_total;

	if (interrupted)
		return 1;
	if (!p->force && b->seconds < PROGRESS_AFTER)
		return 0;
	if (p->shown && !last && b->seconds - p->drawn < PROGRESS_EVERY)
		return 0;
	draw(b, p->name);
	p->shown = true;
	p->drawn = b->seconds;
	return 0;
}

void progress_auto(struct load_cfg *cfg, bool quiet)
{
	if (cfg->progress < 0)
		cfg->progress = !quiet && isatty(STDERR_FILENO) ? 2 : 0;
}

/* Whether the load can deliver batches: the parallel strategy or a
 * stream, view after view. */
static bool batches_possible(const struct load_cfg *cfg, bool stream)
{
	return cfg->opts.selection.layout == PARLOAD_LAYOUT_VIEWS &&
	       (stream || cfg->opts.strategy == PARLOAD_STRATEGY_PARALLEL);
}

/* ---------------------------------------------------------------------
 * Loading one file
 * ------------------------------------------------------------------- */

/* --preallocate: size the arrays from the header and the selection,
 * allocate them with parload_buffers_alloc_select() (huge pages unless
 * --no-hugepages) and touch every page, all before the clock. */
static int preallocate(const char *path, const parload_options *o,
		       parload_buffers *b, parload_error *err)
{
	parload_file_header h;
	int rc;

	rc = parload_read_header(path, &h, err);
	if (rc < 0)
		return rc;
	rc = parload_buffers_alloc_select(b, &h, &o->selection, o->flags, err);
	if (rc < 0) {
		/* The header names no file; the message should. */
		char msg[sizeof(err->message)];

		if (snprintf(msg, sizeof(msg), "%s: %s", path,
			     err->message) > 0)
			memcpy(err->message, msg, sizeof(msg));
		return rc;
	}
	if (b->headers_size) { /* an empty stream has NULL arrays */
		memset(b->headers, 0, b->headers_size);
		memset(b->pixels, 0, b->pixels_size);
	}
	return 0;
}

/* The request for path ("-": standard input).  What is not a regular
 * file (a pipe, a socket, a FIFO, a terminal) is read as a stream whatever
 * the strategy, and l->io says so. */
static int make_request(const char *path, const struct load_cfg *cfg,
			struct loaded *l, parload_request *req,
			parload_error *err)
{
	struct stat st;
	bool stream;

	parload_request_init(req);
	if (strcmp(path, "-") == 0) {
		req->fd = STDIN_FILENO;
		req->name = STDIN_NAME;
		stream = fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode);
	} else {
		req->path = path;
		stream = stat(path, &st) == 0 &&
			 (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
	}
	if (stream)
		l->io = "stream";
	if (cfg->progress > 0 && batches_possible(cfg, stream))
		req->on_batch = on_batch;
	if (!cfg->preallocate || !req->path)
		return 0;
	req->into = &l->buffers;
	return preallocate(path, &cfg->opts, &l->buffers, err);
}

/* Run the request, with SIGINT and SIGTERM cancelling it when it delivers
 * batches. */
static int run_request(parload_loader *loader, parload_request *req,
		       const struct load_cfg *cfg, struct loaded *l,
		       parload_error *err)
{
	struct progress p = { l->name, cfg->progress == 1, false, 0.0 };
	int rc;

	req->batch_arg = &p;
	cancel_armed = req->on_batch != NULL;
	rc = parload_loader_run(loader, req, &l->ds, err);
	cancel_armed = 0;
	if (p.shown) /* the line goes; what follows starts clean */
		fputs("\r\033[K", stderr);
	line_drawn = 0;
	return rc;
}

bool report_bad_views(const char *name, const parload_dataset *ds)
{
	for (uint64_t k = 0; k < ds->bad_view_count; k++) {
		const uint64_t v = ds->bad_views[k];

		error_msg("%s: view %" PRIu64 ": payload CRC-32C mismatch "
			  "(byte offset %" PRIu64 ")", name, v,
			  parload_view_offset(&ds->file_header, v) +
				  PARLOAD_VIEW_HEADER_SIZE);
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

int load_path(parload_loader *loader, const char *path,
	      const struct load_cfg *cfg, struct loaded *l)
{
	parload_request req;
	parload_error err;
	int rc;

	memset(l, 0, sizeof(*l));
	memset(&err, 0, sizeof(err));
	l->name = strcmp(path, "-") == 0 ? STDIN_NAME : path;
	l->io = parload_io_name(cfg->opts.io);
	rc = make_request(path, cfg, l, &req, &err);
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
static volatile sig_atomic_t tmp_armed;

static void die_by(int sig)
{
	if (tmp_armed)
		unlink(tmp_path); /* async-signal-safe, as are the others */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One line for a load cut short by SIGINT or SIGTERM, after clearing
 * the progress line. */
static void say_interrupted(void)
{
	static const char clear[] = "\r\033[K", line[] = PROG ": interrupted\n";

	if (line_drawn)
		(void)!write(STDERR_FILENO, clear, sizeof(clear) - 1);
	(void)!write(STDERR_FILENO, line, sizeof(line) - 1);
}

static void on_fatal_signal(int sig)
{
	if (cancel_armed && !interrupted && (sig == SIGINT || sig == SIGTERM)) {
		interrupted = sig;
		alarm(1);
		return;
	}
	if (sig == SIGALRM && interrupted)
		sig = interrupted;
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
	return interrupted != 0;
}

void end_if_interrupted(void)
{
	if (interrupted) {
		alarm(0);
		fflush(stdout);
		tmp_remove();
		die_by(interrupted);
	}
}

void tmp_remove(void)
{
	if (tmp_armed) {
		unlink(tmp_path);
		tmp_armed = 0;
	}
}

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

const char *tmp_file(void)
{
	return tmp_path;
}

/* Create the temporary file; blocking signals here closes the window
 * between mkstemp() and arming (no library thread exists yet, so the
 * signal can only come to this thread). */
int tmp_create(const char *dir, const char *base)
{
	sigset_t all, old;
	int n, fd, saved;

	if (!dir) {
		dir = getenv("TMPDIR");
		if (!dir || !*dir)
			dir = "/tmp";
	}
	if (base)
		n = snprintf(tmp_path, sizeof(tmp_path), "%s/.%s.XXXXXX", dir,
			     base);
	else
		n = snprintf(tmp_path, sizeof(tmp_path), "%s/parload-XXXXXX",
			     dir);
	if (n < 0 || (size_t)n >= sizeof(tmp_path)) {
		error_msg("%s: temporary file name too long", dir);
		return EXIT_FAIL;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fd = mkstemp(tmp_path);
	saved = errno;
	if (fd >= 0)
		tmp_armed = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		error_msg("%s: cannot create a temporary file: %s", dir,
			  strerror(saved));
		return EXIT_FAIL;
	}
	/* mkstemp() makes it private; a file that becomes the user's
	 * output gets the mode any new file would. */
	if (base)
		fchmod(fd, 0666 & ~current_umask());
	close(fd);
	return EXIT_OK;
}

/* link() refuses an existing name atomically; a file system without hard
 * links falls back on rename() after a last check. */
static int tmp_place(const char *path, bool force)
{
	struct stat st;

	if (force)
		return rename(tmp_path, path);
	if (link(tmp_path, path) == 0)
		return unlink(tmp_path);
	if (errno != EPERM && errno != ENOTSUP && errno != EXDEV)
		return -1;
	if (lstat(path, &st) == 0) {
		errno = EEXIST;
		return -1;
	}
	return rename(tmp_path, path);
}

int tmp_commit(const char *path, bool force)
{
	if (tmp_place(path, force) != 0) {
		error_msg("%s: %s%s", path, strerror(errno),
			  errno == EEXIST ? " (--force replaces it)" : "");
		tmp_remove();
		return EXIT_FAIL;
	}
	tmp_armed = 0;
	return EXIT_OK;
}

/* ---------------------------------------------------------------------
 * JSON output
 * ------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* The escape of an ASCII byte that JSON wants escaped, or NULL. */
static const char *json_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

/* File names are bytes, JSON is Unicode: a byte that is not part of
 * well-formed UTF-8 becomes U+FFFD, so the line always parses. */
void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		const char *esc = json_escape(*p);
		size_t n = esc ? 1 : utf8_len(p);

		if (esc)
			fputs(esc, f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else if (n == 0)
			fputs("\\ufffd", f);
		else
			fwrite(p, 1, n, f);
		p += n ? n : 1;
	}
	fputc('"', f);
}

double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0.0;
}

void print_bytes(uint64_t n)
{
	if (n < 1000)
		printf("%" PRIu64 " B", n);
	else if (n < 1000000)
		printf("%.1f kB", (double)n / 1e3);
	else if (n < 1000000000)
		printf("%.1f MB", (double)n / 1e6);
	else
		printf("%.2f GB", (double)n / 1e9);
}
