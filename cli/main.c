/*
 * main.c - the parload command.
 *
 *   parload [OPTIONS] [FILE...]   load each file and report what it took
 *   parload gen [OPTIONS] OUT     write a deterministic stream
 *   parload info [--json] FILE... show and check a file's header
 *   parload help                  the usage text
 *
 * The command uses libparload's public interface only, plus the generator
 * in cli/gen.c.  It never calls exit(): every path returns through main() so
 * that the loader, datasets and the embedded default's temporary file are
 * always released.  Exit status: 0 success, 1 a file failed, 2 usage error.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parload.h"
#include "gen.h"

#define PROG "parload"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* More worker threads than this is a typo, not a machine. */
#define MAX_THREADS 4096

/* How messages and the report name standard input ('-'). */
#define STDIN_NAME "<stdin>"

/* The article's reference stream: the embedded default and gen's default. */
#define REF_VIEWS 2000
#define REF_WIDTH 896
#define REF_HEIGHT 64
#define REF_TYPE PARLOAD_PIXEL_U16
#define REF_SEED 1

static const char usage_text[] =
"Usage: parload [OPTIONS] [FILE...]\n"
"       parload gen [GEN-OPTIONS] OUT\n"
"       parload info [--json] FILE...\n"
"       parload help\n"
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
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"SIZE is a number of bytes, optionally followed by K, M, G or T (powers of\n"
"1024; KiB, MiB, GiB and TiB also read), e.g. 4096, 64K, 1M.\n"
"\n"
"parload gen [GEN-OPTIONS] OUT writes a deterministic stream to OUT:\n"
"      --views N          number of views (default 2000; 0 is allowed)\n"
"      --width W          pixels per row (default 896)\n"
"      --height H         rows per view (default 64)\n"
"      --type T           u8, u16 (default), i16, u32, i32, f32 or f64\n"
"      --crc              store each payload's CRC-32C in its view header\n"
"      --seed S           content seed (default 1)\n"
"\n"
"parload info FILE... prints each file's header fields and whether the file\n"
"is valid; --json prints one JSON object per file instead.\n"
"\n"
"A COMMAND (gen, info, help) is recognised only as the first argument;\n"
"write ./gen to load a file of that name.\n"
"\n"
"Exit status: 0 every file loaded (or written, or valid); 1 a file failed,\n"
"the others are still processed; 2 usage error.\n"
"\n"
"See parload(1) and docs/FORMAT.md for the file format.\n";

/* getopt_long values of the long options: none is a short option's letter
 * (see bad_option). */
enum {
	OPT_LONG = 256,
	OPT_THREADS = OPT_LONG,
	OPT_STRATEGY,
	OPT_IO,
	OPT_BUFFER,
	OPT_MAX_READ,
	OPT_NO_BIND,
	OPT_NO_HUGEPAGES,
	OPT_PREALLOCATE,
	OPT_VERIFY,
	OPT_KEEP_GOING,
	OPT_ALLOW_TRUNCATED,
	OPT_JSON,
	OPT_VERIFY_SEED,
	OPT_QUIET,
	OPT_HELP,
	OPT_VERSION,
	OPT_VIEWS,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_TYPE,
	OPT_CRC,
	OPT_SEED,
};

/* ---------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------- */

static void __attribute__((format(printf, 1, 2)))
error_msg(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROG " --help'.\n", stderr);
	return EXIT_USAGE;
}

/* getopt_long said '?' or ':' (opterr is 0, so it printed nothing).  Every
 * long option has a value of its own, at least OPT_LONG, so optopt tells a
 * short option (its letter), a long one (its value) and an unknown long one
 * (0) apart; a long one is named by the argument getopt just stepped over. */
static int bad_option(int c, char **argv, const struct option *longopts)
{
	const char *text = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };
	size_t len = strcspn(text, "=");
	unsigned matches = 0;

	if (optopt > 0 && optopt < OPT_LONG)
		text = shortopt;
	if (c == ':')
		return usage_error("option '%s' requires an argument", text);
	if (optopt >= OPT_LONG)
		return usage_error("option '%.*s' takes no argument", (int)len,
				   text);
	/* getopt_long takes any unique prefix of a long option. */
	if (optopt == 0 && strncmp(text, "--", 2) == 0 && len > 2) {
		for (const struct option *o = longopts; o->name; o++)
			if (strncmp(o->name, text + 2, len - 2) == 0)
				matches++;
	}
	if (matches > 1)
		return usage_error("ambiguous option '%.*s'", (int)len, text);
	return usage_error("unknown option '%s'", text);
}

/* The library's message already begins with the file's name; fall back on
 * the code's text where a failure left no message. */
static void report(const char *path, int rc, const parload_error *err)
{
	if (err->message[0])
		error_msg("%s", err->message);
	else
		error_msg("%s: %s", path, parload_strerror(rc));
}

/* ---------------------------------------------------------------------
 * Strict number parsing: digits only, no sign, no space, no overflow.
 * ------------------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
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

/* "4096", "64K", "1M", "2GiB": binary multiples. */
static bool parse_size(const char *s, size_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (*end) {
		/* & ~0x20 folds k, m, g, t to upper case. */
		int up = end[0] & ~0x20;
		const char *u = up ? strchr(units, up) : NULL;

		if (!u)
			return false;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
		if (strcmp(end, "") != 0 && strcmp(end, "iB") != 0)
			return false;
	}
	if (v > (unsigned long long)(SIZE_MAX >> shift))
		return false;
	*out = (size_t)v << shift;
	return true;
}

/* ---------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------- */

static const char *const strategy_names[] = {
	[PARLOAD_STRATEGY_PARALLEL] = "parallel",
	[PARLOAD_STRATEGY_BULK] = "bulk",
	[PARLOAD_STRATEGY_SEQUENTIAL] = "sequential",
	[PARLOAD_STRATEGY_TWO_PASS] = "two-pass",
	[PARLOAD_STRATEGY_MMAP] = "mmap",
};
#define N_STRATEGIES (sizeof(strategy_names) / sizeof(strategy_names[0]))

static const char *strategy_name(parload_strategy s)
{
	if ((unsigned)s < N_STRATEGIES && strategy_names[s])
		return strategy_names[s];
	return "unknown";
}

static bool strategy_from_name(const char *name, parload_strategy *out)
{
	for (unsigned i = 0; i < N_STRATEGIES; i++) {
		if (strcmp(name, strategy_names[i]) == 0) {
			*out = (parload_strategy)i;
			return true;
		}
	}
	return false;
}

/* Whether a strategy reads through the --io API (and its --buffer). */
static bool strategy_uses_io(parload_strategy s)
{
	return s == PARLOAD_STRATEGY_BULK || s == PARLOAD_STRATEGY_SEQUENTIAL ||
	       s == PARLOAD_STRATEGY_TWO_PASS;
}

static const char *io_name(parload_io io)
{
	return io == PARLOAD_IO_STDIO ? "stdio" : "posix";
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

/* A JSON string.  File names are bytes, JSON is Unicode: a byte that is not
 * part of well-formed UTF-8 becomes U+FFFD, so the line always parses. */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':
			fputs("\\\"", f);
			p++;
			continue;
		case '\\':
			fputs("\\\\", f);
			p++;
			continue;
		case '\n':
			fputs("\\n", f);
			p++;
			continue;
		case '\r':
			fputs("\\r", f);
			p++;
			continue;
		case '\t':
			fputs("\\t", f);
			p++;
			continue;
		default:
			break;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/* A JSON number never reads inf or nan. */
static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0.0;
}

/* ---------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------- */

struct load_cfg {
	parload_options opts;
	bool json;
	bool quiet;
	bool verify;
	bool preallocate;
	uint64_t seed;
};

static void print_bytes(uint64_t n)
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

/* What --verify found, for the line: NULL when it was not asked. */
static const char *crc_note(const parload_dataset *ds,
			    const struct load_cfg *cfg)
{
	if (!(cfg->opts.flags & PARLOAD_OPT_VERIFY_CRC))
		return NULL;
	if (!(ds->file_header.flags & PARLOAD_FLAG_CRC32C))
		return "no CRC-32C to verify";
	return ds->bad_view_count ? "CRC-32C mismatch" : "CRC-32C verified";
}

static void print_load(const char *label, const parload_dataset *ds,
		       uint64_t file_size, const char *io,
		       const struct load_cfg *cfg)
{
	const parload_file_header *h = &ds->file_header;
	const parload_stats *st = &ds->stats;
	const char *type = parload_pixel_name(h->pixel_type);
	const char *crc = crc_note(ds, cfg);
	const bool truncated = st->declared_views > h->view_count;
	double gbps = 0.0;

	if (st->seconds > 0.0)
		gbps = finite_or_zero((double)file_size / st->seconds / 1e9);
	if (!type)
		type = "?";
	if (cfg->json) {
		fputs("{\"file\":", stdout);
		json_str(stdout, label);
		printf(",\"views\":%" PRIu64 ",\"width\":%" PRIu32
		       ",\"height\":%" PRIu32 ",\"pixel_type\":\"%s\""
		       ",\"bytes_per_pixel\":%u,\"crc32c\":%s"
		       ",\"bytes\":%" PRIu64 ",\"bytes_read\":%" PRIu64
		       ",\"read_calls\":%" PRIu64 ",\"seconds\":%.9f"
		       ",\"gbps\":%.6g,\"threads\":%u,\"strategy\":\"%s\""
		       ",\"io\":\"%s\",\"verified\":%s"
		       ",\"declared_views\":%" PRIu64 ",\"truncated\":%s"
		       ",\"crc_checked\":%" PRIu64 ",\"bad_views\":%" PRIu64
		       "}\n",
		       h->view_count, h->width, h->height, type,
		       (unsigned)h->bytes_per_pixel,
		       (h->flags & PARLOAD_FLAG_CRC32C) ? "true" : "false",
		       file_size, st->bytes_read, st->read_calls,
		       finite_or_zero(st->seconds), gbps, st->threads,
		       strategy_name(st->strategy), io,
		       cfg->verify ? "true" : "false", st->declared_views,
		       truncated ? "true" : "false", st->crc_checked,
		       ds->bad_view_count);
		return;
	}
	printf("%s: %" PRIu64 " view%s %" PRIu32 "x%" PRIu32 " %s", label,
	       h->view_count, h->view_count == 1 ? "" : "s", h->width,
	       h->height, type);
	if (truncated)
		printf(" (truncated: %" PRIu64 " of %" PRIu64 " views)",
		       h->view_count, st->declared_views);
	fputs(", ", stdout);
	print_bytes(file_size);
	printf(st->seconds >= 0.001 ? " in %.4f s" : " in %.6f s",
	       finite_or_zero(st->seconds));
	printf(", %.2f GB/s, %u thread%s (%s", gbps, st->threads,
	       st->threads == 1 ? "" : "s", strategy_name(st->strategy));
	if (strategy_uses_io(st->strategy))
		printf(", %s", io);
	fputs(")", stdout);
	if (crc)
		printf(", %s", crc);
	putchar('\n');
}

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

/* Load one file, verify it when asked and report.  label names the file in
 * the report (the path, or what the embedded default calls its stream). */
static int load_one(parload_loader *loader, const char *path,
		    const char *label, const struct load_cfg *cfg)
{
	const bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? STDIN_NAME : path;
	const char *io = io_name(cfg->opts.io);
	parload_dataset ds;
	parload_buffers buffers;
	parload_error err;
	uint64_t file_size = 0;
	int rc, status = EXIT_OK;

	memset(&ds, 0, sizeof(ds));
	memset(&buffers, 0, sizeof(buffers));
	memset(&err, 0, sizeof(err));
	if (is_stdin) {
		struct stat st;

		/* A pipe or socket is read as a stream, whatever the
		 * strategy; a redirected file is loaded as files are. */
		if (fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode))
			io = "stream";
		label = name;
		rc = parload_loader_load_fd(loader, STDIN_FILENO, name, &ds,
					    &err);
	} else if (cfg->preallocate) {
		rc = load_preallocated(loader, path, cfg->opts.flags,
				       &buffers, &ds, &err);
	} else {
		rc = parload_loader_load(loader, path, &ds, &err);
	}
	if (rc < 0) {
		report(name, rc, &err);
		return EXIT_FAIL;
	}
	/* --keep-going: the file loaded, and these views are bad. */
	for (uint64_t k = 0; k < ds.bad_view_count; k++) {
		const uint64_t v = ds.bad_views[k];

		error_msg("%s: view %" PRIu64 ": payload CRC-32C mismatch "
			  "(byte offset %" PRIu64 ")", name, v,
			  PARLOAD_FILE_HEADER_SIZE +
				  v * (PARLOAD_VIEW_HEADER_SIZE +
				       ds.file_header.payload_size) +
				  PARLOAD_VIEW_HEADER_SIZE);
		status = EXIT_FAIL;
	}
	if (cfg->verify) {
		uint64_t bad_view = PARLOAD_NONE;
		bool bad_header = false;

		if (!pgen_verify(&ds, cfg->seed, &bad_view,
					&bad_header)) {
			if (bad_view == PARLOAD_NONE)
				error_msg("%s: out of memory while verifying",
					  name);
			else
				error_msg("%s: view %" PRIu64 ": %s differs "
					  "from the stream of seed %" PRIu64,
					  name, bad_view,
					  bad_header ? "header" : "payload",
					  cfg->seed);
			status = EXIT_FAIL;
			goto out;
		}
	}
	if (parload_file_size(&ds.file_header, &file_size) < 0)
		file_size = ds.stats.bytes_read;
	if (!cfg->quiet)
		print_load(label, &ds, file_size, io, cfg);
out:
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

static int run_default(parload_loader *loader, struct load_cfg *cfg)
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
	return load_one(loader, tmp_path, "reference stream", cfg);
}

/* ---------------------------------------------------------------------
 * parload [OPTIONS] [FILE...]
 * ------------------------------------------------------------------- */

static const struct option load_longopts[] = {
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "io", required_argument, NULL, OPT_IO },
	{ "buffer", required_argument, NULL, OPT_BUFFER },
	{ "max-read", required_argument, NULL, OPT_MAX_READ },
	{ "no-bind", no_argument, NULL, OPT_NO_BIND },
	{ "no-hugepages", no_argument, NULL, OPT_NO_HUGEPAGES },
	{ "preallocate", no_argument, NULL, OPT_PREALLOCATE },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "keep-going", no_argument, NULL, OPT_KEEP_GOING },
	{ "allow-truncated", no_argument, NULL, OPT_ALLOW_TRUNCATED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verify-seed", required_argument, NULL, OPT_VERIFY_SEED },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int cmd_load(int argc, char **argv)
{
	struct load_cfg cfg;
	parload_loader *loader = NULL;
	parload_error err;
	uint64_t v;
	int c, status = EXIT_OK;

	memset(&cfg, 0, sizeof(cfg));
	parload_options_init(&cfg.opts);
	cfg.opts.error = NULL;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":t:qhV", load_longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 't':
		case OPT_THREADS:
			if (!parse_u64(optarg, MAX_THREADS, &v))
				return usage_error("invalid thread count '%s' "
						   "(0 to %d)", optarg,
						   MAX_THREADS);
			cfg.opts.threads = (unsigned)v;
			break;
		case OPT_STRATEGY:
			if (!strategy_from_name(optarg, &cfg.opts.strategy))
				return usage_error("unknown strategy '%s'",
						   optarg);
			break;
		case OPT_IO:
			if (strcmp(optarg, "posix") == 0)
				cfg.opts.io = PARLOAD_IO_POSIX;
			else if (strcmp(optarg, "stdio") == 0)
				cfg.opts.io = PARLOAD_IO_STDIO;
			else
				return usage_error("unknown I/O API '%s'",
						   optarg);
			break;
		case OPT_BUFFER:
			if (!parse_size(optarg, &cfg.opts.buffer_size))
				return usage_error("invalid buffer size '%s'",
						   optarg);
			break;
		case OPT_MAX_READ:
			if (!parse_size(optarg, &cfg.opts.max_read))
				return usage_error("invalid read size '%s'",
						   optarg);
			break;
		case OPT_NO_BIND:
			cfg.opts.flags |= PARLOAD_OPT_NO_BIND;
			break;
		case OPT_NO_HUGEPAGES:
			cfg.opts.flags |= PARLOAD_OPT_NO_HUGEPAGES;
			break;
		case OPT_PREALLOCATE:
			cfg.preallocate = true;
			break;
		case OPT_VERIFY:
			cfg.opts.flags |= PARLOAD_OPT_VERIFY_CRC;
			break;
		case OPT_KEEP_GOING:
			cfg.opts.flags |= PARLOAD_OPT_VERIFY_CRC |
					  PARLOAD_OPT_KEEP_GOING;
			break;
		case OPT_ALLOW_TRUNCATED:
			cfg.opts.flags |= PARLOAD_OPT_ALLOW_TRUNCATED;
			break;
		case OPT_JSON:
			cfg.json = true;
			break;
		case OPT_VERIFY_SEED:
			if (!parse_u64(optarg, UINT64_MAX, &cfg.seed))
				return usage_error("invalid seed '%s'", optarg);
			cfg.verify = true;
			break;
		case 'q':
		case OPT_QUIET:
			cfg.quiet = true;
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage_text, stdout);
			return EXIT_OK;
		case 'V':
		case OPT_VERSION:
			printf(PROG " %s\n", parload_version());
			return EXIT_OK;
		default:
			return bad_option(c, argv, load_longopts);
		}
	}

	/* Standard input can be read once, and has no header to read
	 * ahead of the load. */
	for (int i = optind, seen = 0; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0)
			continue;
		if (seen++)
			return usage_error("standard input ('-') can be read "
					   "only once");
		if (cfg.preallocate)
			return usage_error("--preallocate cannot be used with "
					   "standard input ('-')");
	}

	/* The temporary file exists before any library thread does (see
	 * tmp_create). */
	if (optind == argc) {
		catch_fatal_signals();
		status = tmp_create();
		if (status != EXIT_OK)
			return status;
	}
	memset(&err, 0, sizeof(err));
	if (parload_loader_new(&loader, &cfg.opts, &err) < 0) {
		if (err.message[0])
			error_msg("%s", err.message);
		else
			error_msg("cannot start the loader");
		tmp_remove();
		return EXIT_FAIL;
	}
	if (optind == argc) {
		status = run_default(loader, &cfg);
		tmp_remove();
	}
	for (int i = optind; i < argc; i++) {
		if (load_one(loader, argv[i], argv[i], &cfg) != EXIT_OK)
			status = EXIT_FAIL;
	}
	parload_loader_free(loader);
	return status;
}

/* ---------------------------------------------------------------------
 * parload gen
 * ------------------------------------------------------------------- */

static const struct option gen_longopts[] = {
	{ "views", required_argument, NULL, OPT_VIEWS },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "height", required_argument, NULL, OPT_HEIGHT },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "crc", no_argument, NULL, OPT_CRC },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int cmd_gen(int argc, char **argv)
{
	uint64_t views = REF_VIEWS, width = REF_WIDTH, height = REF_HEIGHT;
	uint64_t seed = REF_SEED;
	int type = REF_TYPE;
	uint32_t flags = 0;
	parload_file_header h;
	parload_error err;
	struct stat st;
	const char *out;
	bool existed;
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", gen_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_VIEWS:
			if (!parse_u64(optarg, UINT64_MAX, &views))
				return usage_error("invalid view count '%s'",
						   optarg);
			break;
		case OPT_WIDTH:
			if (!parse_u64(optarg, UINT32_MAX, &width) || !width)
				return usage_error("invalid width '%s' "
						   "(1 to %" PRIu32 ")",
						   optarg, UINT32_MAX);
			break;
		case OPT_HEIGHT:
			if (!parse_u64(optarg, UINT32_MAX, &height) || !height)
				return usage_error("invalid height '%s' "
						   "(1 to %" PRIu32 ")",
						   optarg, UINT32_MAX);
			break;
		case OPT_TYPE:
			type = parload_pixel_from_name(optarg);
			if (type <= 0)
				return usage_error("unknown pixel type '%s'",
						   optarg);
			break;
		case OPT_CRC:
			flags |= PARLOAD_FLAG_CRC32C;
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, UINT64_MAX, &seed))
				return usage_error("invalid seed '%s'", optarg);
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return bad_option(c, argv, gen_longopts);
		}
	}
	if (optind == argc)
		return usage_error("gen: missing output file");
	if (argc - optind > 1)
		return usage_error("gen: one output file only, not '%s'",
				   argv[optind + 1]);
	out = argv[optind];

	rc = parload_file_header_init(&h, views, (uint32_t)width,
				      (uint32_t)height, type, flags);
	if (rc < 0)
		return usage_error("gen: cannot describe %" PRIu64 " views of "
				   "%" PRIu64 " x %" PRIu64 " %s: %s", views,
				   width, height, parload_pixel_name(type),
				   parload_strerror(rc));

	/* A failed write leaves no half-written file behind, but never
	 * removes a file that was there before (it may be one the writer
	 * could not even open). */
	existed = lstat(out, &st) == 0;
	memset(&err, 0, sizeof(err));
	rc = pgen_write(out, &h, seed, &err);
	if (rc < 0) {
		report(out, rc, &err);
		if (!existed)
			unlink(out);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* ---------------------------------------------------------------------
 * parload info
 * ------------------------------------------------------------------- */

/* The first 64 bytes of a file, decoded as a header without validating it,
 * when the file begins with the magic: enough to show the fields of a file
 * that parload_read_header() rejects.  Returns false otherwise. */
static bool read_raw_header(const char *path, parload_file_header *h)
{
	unsigned char buf[PARLOAD_FILE_HEADER_SIZE];
	size_t got = 0;
	/* O_NONBLOCK: a FIFO must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got < sizeof(buf) || memcmp(buf, PARLOAD_MAGIC, 8) != 0)
		return false;
	/* parload.h: the struct is the on-disk layout on little-endian
	 * hosts, the only ones parload builds on. */
	memcpy(h, buf, sizeof(*h));
	return true;
}

static void info_human(const char *path, const parload_file_header *h,
		       bool valid, bool have_fields, const struct stat *st,
		       bool have_st)
{
	const char *type;
	uint64_t size;

	printf("file:              %s\n", path);
	if (have_fields) {
		type = parload_pixel_name(h->pixel_type);
		printf("magic:             ok\n");
		printf("version:           %u.%u\n",
		       (unsigned)h->version_major, (unsigned)h->version_minor);
		printf("file_header_size:  %u\n",
		       (unsigned)h->file_header_size);
		printf("view_header_size:  %u\n",
		       (unsigned)h->view_header_size);
		printf("view_count:        %" PRIu64 "\n", h->view_count);
		printf("width:             %" PRIu32 "\n", h->width);
		printf("height:            %" PRIu32 "\n", h->height);
		if (type)
			printf("pixel_type:        %s (%u)\n", type,
			       (unsigned)h->pixel_type);
		else
			printf("pixel_type:        unknown (%u)\n",
			       (unsigned)h->pixel_type);
		printf("bytes_per_pixel:   %u\n",
		       (unsigned)h->bytes_per_pixel);
		printf("flags:             0x%" PRIx32 "%s\n", h->flags,
		       (h->flags & PARLOAD_FLAG_CRC32C) ? " (crc32c)" : "");
		printf("payload_size:      %" PRIu64 "\n", h->payload_size);
		if (valid && parload_file_size(h, &size) == 0)
			printf("expected_size:     %" PRIu64 "\n", size);
	}
	if (have_st)
		printf("file_size:         %jd\n", (intmax_t)st->st_size);
	printf("valid:             %s\n", valid ? "yes" : "no");
}

static void info_json(const char *path, const parload_file_header *h,
		      bool valid, bool have_fields, const struct stat *st,
		      bool have_st, const parload_error *err)
{
	uint64_t size;

	fputs("{\"file\":", stdout);
	json_str(stdout, path);
	printf(",\"valid\":%s", valid ? "true" : "false");
	if (have_fields) {
		const char *type = parload_pixel_name(h->pixel_type);

		printf(",\"version_major\":%u,\"version_minor\":%u"
		       ",\"file_header_size\":%u,\"view_header_size\":%u"
		       ",\"view_count\":%" PRIu64 ",\"width\":%" PRIu32
		       ",\"height\":%" PRIu32 ",\"pixel_type\":",
		       (unsigned)h->version_major, (unsigned)h->version_minor,
		       (unsigned)h->file_header_size,
		       (unsigned)h->view_header_size, h->view_count, h->width,
		       h->height);
		if (type)
			printf("\"%s\"", type);
		else
			fputs("null", stdout);
		printf(",\"bytes_per_pixel\":%u,\"flags\":%" PRIu32
		       ",\"crc32c\":%s,\"payload_size\":%" PRIu64,
		       (unsigned)h->bytes_per_pixel, h->flags,
		       (h->flags & PARLOAD_FLAG_CRC32C) ? "true" : "false",
		       h->payload_size);
		if (valid && parload_file_size(h, &size) == 0)
			printf(",\"expected_size\":%" PRIu64, size);
	}
	if (have_st)
		printf(",\"file_size\":%jd", (intmax_t)st->st_size);
	if (!valid) {
		fputs(",\"error\":", stdout);
		json_str(stdout, err->message);
	}
	puts("}");
}

static int info_one(const char *path, bool json)
{
	parload_file_header h;
	parload_error err;
	struct stat st;
	bool valid, have_fields, have_st;
	int rc;

	memset(&h, 0, sizeof(h));
	memset(&err, 0, sizeof(err));
	rc = parload_read_header(path, &h, &err);
	valid = rc == 0;
	if (!valid && !err.message[0])
		snprintf(err.message, sizeof(err.message), "%s: %s", path,
			 parload_strerror(rc));
	have_fields = valid || read_raw_header(path, &h);
	have_st = stat(path, &st) == 0;
	if (json)
		info_json(path, &h, valid, have_fields, &st, have_st, &err);
	else
		info_human(path, &h, valid, have_fields, &st, have_st);
	if (!valid) {
		error_msg("%s", err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static const struct option info_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int cmd_info(int argc, char **argv)
{
	bool json = false;
	int c, status = EXIT_OK;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", info_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return bad_option(c, argv, info_longopts);
		}
	}
	if (optind == argc)
		return usage_error("info: missing file");
	for (int i = optind; i < argc; i++) {
		/* Blank line between the human blocks. */
		if (!json && i > optind)
			putchar('\n');
		if (info_one(argv[i], json) != EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}

/* ---------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int status;

	if (argc >= 2 && strcmp(argv[1], "gen") == 0)
		status = cmd_gen(argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "info") == 0)
		status = cmd_info(argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		status = EXIT_OK;
	} else
		status = cmd_load(argc, argv);

	/* Output that could not be written is a failure too (parload >
	 * /dev/full). */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error_msg("write error: %s", strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}
