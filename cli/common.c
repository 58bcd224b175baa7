/*
 * common.c - what every subcommand of the parload command shares (see
 * common.h): messages and usage errors, byte counts.  Numbers and JSON
 * are number.c and json.c, which parload-mpi shares.
 */
#include "config.h"

#include <inttypes.h>
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
