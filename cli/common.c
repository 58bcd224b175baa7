/*
 * common.c - what the parload command's subcommands share (see common.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* More worker threads than this is a typo, not a machine. */
#define MAX_THREADS 4096

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

void getopt_reset(void)
{
	opterr = 0;
	optind = 1;
}

int print_help(const char *name, const char *help)
{
	printf("Usage: " PROG " %s %s", name, help);
	return EXIT_OK;
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
	return EXIT_OK;
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
		return EXIT_OK;
	case OPT_BUFFER:
		if (!parse_size(arg, &cfg->opts.buffer_size))
			return usage_error("invalid buffer size '%s'", arg);
		return EXIT_OK;
	case OPT_MAX_READ:
		if (!parse_size(arg, &cfg->opts.max_read))
			return usage_error("invalid read size '%s'", arg);
		return EXIT_OK;
	case OPT_VERIFY_SEED:
		if (!parse_u64(arg, UINT64_MAX, &cfg->seed))
			return usage_error("invalid seed '%s'", arg);
		cfg->verify = true;
		return EXIT_OK;
	default:
		return -1;
	}
}

int parse_load_option(struct load_cfg *cfg, int c, const char *arg)
{
	for (size_t i = 0; i < sizeof(flag_options) / sizeof(*flag_options);
	     i++) {
		if (flag_options[i].opt == c) {
			cfg->opts.flags |= flag_options[i].flags;
			return EXIT_OK;
		}
	}
	if (c == OPT_PREALLOCATE) {
		cfg->preallocate = true;
		return EXIT_OK;
	}
	if (c == OPT_STRATEGY || c == OPT_IO)
		return parse_names(&cfg->opts, c, arg);
	return parse_numbers(cfg, c, arg);
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
