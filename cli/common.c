/*
 * common.c - what every subcommand of the parload command shares (see
 * common.h): messages and usage errors, strict numbers and sizes, JSON.
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
