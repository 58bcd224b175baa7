/*
 * cmd_load.c - parload [OPTIONS] [FILE...]: load each file, verify it when
 * asked, and report one line (or one JSON object) per file; with no FILE,
 * the embedded default.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "gen.h"

/* How messages and the report name standard input ('-'). */
#define STDIN_NAME "<stdin>"

SUBCOMMAND(load);

const char cmd_load_help[] =
"[OPTIONS] [FILE...]\n"
"\n"
"Load raw image streams into a structure of arrays (all view headers in one\n"
"array, all pixels in another) and report, one line per FILE: views,\n"
"dimensions, pixel type, file size, seconds from open until the dataset is\n"
"complete, GB/s (file bytes per second, 1 GB = 10^9 bytes), threads and\n"
"strategy.  All FILEs are loaded by one loader, so the machine's topology\n"
"is discovered and the worker threads started once.  A FILE of - is\n"
"standard input (named <stdin> in the output), read sequentially as the\n"
"records arrive when it is a pipe or a socket; it may be given once.\n"
"\n"
"With no FILE, run the embedded default: write the reference stream (2000\n"
"views of 896 x 64 u16 pixels, about 229 MB, seed 1) to a temporary file in\n"
"$TMPDIR (or /tmp), load it, verify every view, report, remove the file.\n"
"\n"
"Load options:\n"
"  -t, --threads N        worker threads of the parallel strategy; 0 (the\n"
"                         default) is one per core the process may run on\n"
"      --strategy NAME    parallel (default), bulk, sequential, two-pass\n"
"                         or mmap\n"
"      --io API           posix (default) or stdio, for bulk, sequential\n"
"                         and two-pass\n"
"      --buffer SIZE      user-space read buffer of bulk, sequential and\n"
"                         two-pass; 0 is unbuffered; default: the API's own\n"
"      --max-read SIZE    largest request of one read call; 0 is the\n"
"                         default (8M)\n"
"      --no-bind          do not bind threads or memory to NUMA nodes\n"
"      --no-hugepages     do not advise transparent huge pages\n"
"      --preallocate      allocate the arrays (parload_buffers_alloc, huge\n"
"                         pages unless --no-hugepages) and touch them, then\n"
"                         load into them (parload_loader_load_into), as a\n"
"                         program that keeps its own buffers does; the time\n"
"                         reported excludes the allocation\n"
"      --verify           check every payload against the CRC-32C in its view\n"
"                         header (files written with 'parload gen --crc');\n"
"                         the first bad view fails the file; a file without\n"
"                         CRCs loads and says there was nothing to verify\n"
"      --keep-going       with --verify (implied): load every view and list\n"
"                         each bad one on standard error; the file fails\n"
"      --allow-truncated  load the complete views of a file cut short (an\n"
"                         acquisition that died) instead of failing; the\n"
"                         line says how many of the promised views it holds\n"
"      --verify-seed S    check every loaded view against the stream that\n"
"                         'parload gen --seed S' writes; a difference fails\n"
"                         the file\n"
"      --json             one JSON object per line per file instead\n"
"  -q, --quiet            print nothing but errors; the exit status tells\n"
"      --list-strategies  print the strategies' names, one a line, and exit\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"SIZE is a number of bytes, optionally followed by K, M, G or T (powers of\n"
"1024; KiB, MiB, GiB and TiB also read), e.g. 4096, 64K, 1M.\n";

/* What a load reports, besides the load options. */
struct report_cfg {
	bool json;
	bool quiet;
};

/* ---------------------------------------------------------------------
 * The report
 * ------------------------------------------------------------------- */

/* What --verify found, for the line: NULL when it was not asked. */
static const char *crc_note(const parload_dataset *ds, unsigned flags)
{
	if (!(flags & PARLOAD_OPT_VERIFY_CRC))
		return NULL;
	if (!(ds->file_header.flags & PARLOAD_FLAG_CRC32C))
		return "no CRC-32C to verify";
	return ds->bad_view_count ? "CRC-32C mismatch" : "CRC-32C verified";
}

/* What one report line says, worked out once for both forms. */
struct load_line {
	const char *label, *type, *strategy, *io, *crc;
	uint64_t file_size;
	double seconds, gbps;
	bool truncated, verified;
};

static void print_load_json(const struct load_line *l,
			    const parload_dataset *ds)
{
	const parload_file_header *h = &ds->file_header;
	const parload_stats *st = &ds->stats;

	fputs("{\"file\":", stdout);
	json_str(stdout, l->label);
	printf(",\"views\":%" PRIu64 ",\"width\":%" PRIu32
	       ",\"height\":%" PRIu32 ",\"pixel_type\":\"%s\""
	       ",\"bytes_per_pixel\":%u,\"crc32c\":%s"
	       ",\"bytes\":%" PRIu64 ",\"bytes_read\":%" PRIu64
	       ",\"read_calls\":%" PRIu64 ",\"seconds\":%.9f"
	       ",\"gbps\":%.6g,\"threads\":%u,\"strategy\":\"%s\""
	       ",\"io\":\"%s\",\"verified\":%s"
	       ",\"declared_views\":%" PRIu64 ",\"truncated\":%s"
	       ",\"crc_checked\":%" PRIu64 ",\"bad_views\":%" PRIu64 "}\n",
	       h->view_count, h->width, h->height, l->type,
	       (unsigned)h->bytes_per_pixel,
	       (h->flags & PARLOAD_FLAG_CRC32C) ? "true" : "false",
	       l->file_size, st->bytes_read, st->read_calls, l->seconds,
	       l->gbps, st->threads, l->strategy, l->io,
	       l->verified ? "true" : "false", st->declared_views,
	       l->truncated ? "true" : "false", st->crc_checked,
	       ds->bad_view_count);
}

static void print_load_human(const struct load_line *l,
			     const parload_dataset *ds)
{
	const parload_file_header *h = &ds->file_header;
	const parload_stats *st = &ds->stats;

	printf("%s: %" PRIu64 " view%s %" PRIu32 "x%" PRIu32 " %s", l->label,
	       h->view_count, h->view_count == 1 ? "" : "s", h->width,
	       h->height, l->type);
	if (l->truncated)
		printf(" (truncated: %" PRIu64 " of %" PRIu64 " views)",
		       h->view_count, st->declared_views);
	fputs(", ", stdout);
	print_bytes(l->file_size);
	printf(l->seconds >= 0.001 ? " in %.4f s" : " in %.6f s", l->seconds);
	printf(", %.2f GB/s, %u thread%s (%s", l->gbps, st->threads,
	       st->threads == 1 ? "" : "s", l->strategy);
	if (parload_strategy_uses_io(st->strategy))
		printf(", %s", l->io);
	fputs(")", stdout);
	if (l->crc)
		printf(", %s", l->crc);
	putchar('\n');
}

static void print_load(const char *label, const parload_dataset *ds,
		       const char *io, const struct load_cfg *cfg,
		       const struct report_cfg *rep)
{
	struct load_line l = {
		.label = label,
		.type = parload_pixel_name(ds->file_header.pixel_type),
		.strategy = parload_strategy_name(ds->stats.strategy),
		.io = io,
		.crc = crc_note(ds, cfg->opts.flags),
		.seconds = finite_or_zero(ds->stats.seconds),
		.truncated = ds->stats.declared_views >
			     ds->file_header.view_count,
		.verified = cfg->verify,
	};

	if (parload_file_size(&ds->file_header, &l.file_size) < 0)
		l.file_size = ds->stats.bytes_read;
	if (ds->stats.seconds > 0.0)
		l.gbps = finite_or_zero((double)l.file_size /
					ds->stats.seconds / 1e9);
	if (!l.type)
		l.type = "?";
	if (!l.strategy)
		l.strategy = "unknown";
	if (rep->json)
		print_load_json(&l, ds);
	else
		print_load_human(&l, ds);
}

/* ---------------------------------------------------------------------
 * Loading one file
 * ------------------------------------------------------------------- */

/* --preallocate: size the arrays from the header, allocate them with
 * parload_buffers_alloc() (huge pages unless --no-hugepages) and touch
 * every page, all before the clock, then load into them.  On success *b
 * holds the buffers, which the caller frees with parload_buffers_free(). */
static int load_preallocated(parload_loader *loader, const char *path,
			     unsigned flags, parload_buffers *b,
			     parload_dataset *ds, parload_error *err)
{
	parload_file_header h;
	int rc;

	rc = parload_read_header(path, &h, err);
	if (rc < 0)
		return rc;
	rc = parload_buffers_alloc(b, &h, flags, err);
	if (rc < 0) {
		/* The header names no file; the message should. */
		char msg[sizeof(err->message)];

		if (snprintf(msg, sizeof(msg), "%s: %s", path,
			     err->message) > 0)
			memcpy(err->message, msg, sizeof(msg));
		return rc;
	}
	if (h.view_count) { /* an empty stream has NULL arrays */
		memset(b->headers, 0, b->headers_size);
		memset(b->pixels, 0, b->pixels_size);
	}
	rc = parload_loader_load_into(loader, path, b, ds, err);
	if (rc < 0)
		parload_buffers_free(b);
	return rc;
}

/* Load path (standard input for "-") the way cfg asks; *io becomes
 * "stream" when standard input is read as a stream. */
static int load_file(parload_loader *loader, const char *path,
		     const struct load_cfg *cfg, const char **io,
		     parload_buffers *b, parload_dataset *ds,
		     parload_error *err)
{
	struct stat st;

	if (strcmp(path, "-") != 0 && cfg->preallocate)
		return load_preallocated(loader, path, cfg->opts.flags, b, ds,
					 err);
	if (strcmp(path, "-") != 0)
		return parload_loader_load(loader, path, ds, err);
	/* A pipe or socket is read as a stream, whatever the strategy; a
	 * redirected file is loaded as files are. */
	if (fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode))
		*io = "stream";
	return parload_loader_load_fd(loader, STDIN_FILENO, STDIN_NAME, ds,
				      err);
}

/* --keep-going: the file loaded, and these views are bad.  Returns
 * whether there were any. */
static bool report_bad_views(const char *name, const parload_dataset *ds)
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

/* --verify-seed: whether the dataset is what gen wrote with seed. */
static bool verify_seed(const char *name, const parload_dataset *ds,
			uint64_t seed)
{
	uint64_t bad_view = PARLOAD_NONE;
	bool bad_header = false;

	if (pgen_verify(ds, seed, &bad_view, &bad_header))
		return true;
	if (bad_view == PARLOAD_NONE)
		error_msg("%s: out of memory while verifying", name);
	else
		error_msg("%s: view %" PRIu64 ": %s differs from the stream "
			  "of seed %" PRIu64, name, bad_view,
			  bad_header ? "header" : "payload", seed);
	return false;
}

/* Load one file, verify it when asked and report.  label names the file in
 * the report (the path, or what the embedded default calls its stream). */
static int load_one(parload_loader *loader, const char *path,
		    const char *label, const struct load_cfg *cfg,
		    const struct report_cfg *rep)
{
	const char *name = strcmp(path, "-") == 0 ? STDIN_NAME : path;
	const char *io = parload_io_name(cfg->opts.io);
	parload_dataset ds;
	parload_buffers buffers;
	parload_error err;
	int rc, status = EXIT_OK;

	memset(&ds, 0, sizeof(ds));
	memset(&buffers, 0, sizeof(buffers));
	memset(&err, 0, sizeof(err));
	rc = load_file(loader, path, cfg, &io, &buffers, &ds, &err);
	if (rc < 0) {
		report(name, rc, &err);
		return EXIT_FAIL;
	}
	if (name != path)
		label = name;
	if (report_bad_views(name, &ds))
		status = EXIT_FAIL;
	if (cfg->verify && !verify_seed(name, &ds, cfg->seed))
		status = EXIT_FAIL;
	else if (!rep->quiet)
		print_load(label, &ds, io, cfg, rep);
	parload_dataset_free(&ds);
	parload_buffers_free(&buffers);
	return status;
}

/* ---------------------------------------------------------------------
 * The embedded default and its temporary file
 * ------------------------------------------------------------------- */

/* The temporary file is removed on every return path, and by the handler
 * below when a signal ends the process while it exists. */
static char tmp_path[4096];
static volatile sig_atomic_t tmp_armed;

static void on_fatal_signal(int sig)
{
	if (tmp_armed)
		unlink(tmp_path); /* async-signal-safe, as are the others */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
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

static void tmp_remove(void)
{
	if (tmp_armed) {
		unlink(tmp_path);
		tmp_armed = 0;
	}
}

/* Create the temporary file; no other thread exists yet, so blocking
 * signals here closes the window between mkstemp() and arming. */
static int tmp_create(void)
{
	const char *dir = getenv("TMPDIR");
	sigset_t all, old;
	int n, fd, saved;

	if (!dir || !*dir)
		dir = "/tmp";
	n = snprintf(tmp_path, sizeof(tmp_path), "%s/parload-XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof(tmp_path)) {
		error_msg("%s: temporary directory name too long", dir);
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
	close(fd);
	return EXIT_OK;
}

static int run_default(parload_loader *loader, struct load_cfg *cfg,
		       const struct report_cfg *rep)
{
	parload_file_header h;
	parload_error err;
	int rc;

	rc = parload_file_header_init(&h, REF_VIEWS, REF_WIDTH, REF_HEIGHT,
				      REF_TYPE, 0);
	if (rc < 0) {
		error_msg("reference stream: %s", parload_strerror(rc));
		return EXIT_FAIL;
	}
	memset(&err, 0, sizeof(err));
	rc = pgen_write(tmp_path, &h, REF_SEED, &err);
	if (rc < 0) {
		report(tmp_path, rc, &err);
		return EXIT_FAIL;
	}
	/* Every view is checked, against --verify-seed when given. */
	if (!cfg->verify) {
		cfg->verify = true;
		cfg->seed = REF_SEED;
	}
	return load_one(loader, tmp_path, "reference stream", cfg, rep);
}

/* ---------------------------------------------------------------------
 * parload [OPTIONS] [FILE...]
 * ------------------------------------------------------------------- */

enum { OPT_LIST_STRATEGIES = OPT_LOCAL };

static const struct option load_longopts[] = {
	LOAD_LONGOPTS,
	{ "list-strategies", no_argument, NULL, OPT_LIST_STRATEGIES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int print_version(void)
{
	printf(PROG " %s\n", parload_version());
	return EXIT_OK;
}

/* --list-strategies: the library's names, for scripts (the bench). */
static int list_strategies(void)
{
	for (int s = 0; parload_strategy_name(s); s++)
		puts(parload_strategy_name(s));
	return EXIT_OK;
}

/* Parse the options.  Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct load_cfg *cfg,
		      struct report_cfg *rep)
{
	int c, rc;

	getopt_reset();
	while ((c = getopt_long(argc, argv, ":" LOAD_SHORTOPTS "qhV",
				load_longopts, NULL)) != -1) {
		if (c == OPT_JSON)
			rep->json = true;
		else if (c == 'q' || c == OPT_QUIET)
			rep->quiet = true;
		else if (c == 'h' || c == OPT_HELP)
			return print_full_help();
		else if (c == 'V' || c == OPT_VERSION)
			return print_version();
		else if (c == OPT_LIST_STRATEGIES)
			return list_strategies();
		else if ((rc = parse_load_option(cfg, c, optarg)) >= 0) {
			if (rc != EXIT_OK)
				return rc;
		} else
			return bad_option(c, argv, load_longopts);
	}
	return -1;
}

/* Standard input can be read once, and has no header to read ahead of the
 * load. */
static int check_stdin(int argc, char **argv, const struct load_cfg *cfg)
{
	for (int i = optind, seen = 0; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0)
			continue;
		if (seen++)
			return usage_error("standard input ('-') can be read "
					   "only once");
		if (cfg->preallocate)
			return usage_error("--preallocate cannot be used with "
					   "standard input ('-')");
	}
	return EXIT_OK;
}

static int new_loader(parload_loader **loader, const struct load_cfg *cfg)
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

int cmd_load(int argc, char **argv)
{
	struct load_cfg cfg;
	struct report_cfg rep = { false, false };
	parload_loader *loader = NULL;
	int status;

	load_cfg_init(&cfg);
	status = parse_args(argc, argv, &cfg, &rep);
	if (status >= 0)
		return status;
	status = check_stdin(argc, argv, &cfg);
	if (status != EXIT_OK)
		return status;
	/* The temporary file exists before any library thread does (see
	 * tmp_create). */
	if (optind == argc) {
		catch_fatal_signals();
		status = tmp_create();
	}
	if (status == EXIT_OK)
		status = new_loader(&loader, &cfg);
	if (status == EXIT_OK && optind == argc)
		status = run_default(loader, &cfg, &rep);
	tmp_remove();
	for (int i = optind; loader && i < argc; i++)
		if (load_one(loader, argv[i], argv[i], &cfg, &rep) != EXIT_OK)
			status = EXIT_FAIL;
	parload_loader_free(loader);
	return status;
}
