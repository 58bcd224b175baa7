/*
 * common.h - what the parload command's subcommands share: messages and
 * usage errors, strict number and size parsing, JSON output, byte counts,
 * and the load options that every subcommand reading a stream accepts.
 *
 * A subcommand is one file, cli/cmd_NAME.c, that defines
 *
 *   int cmd_NAME(int argc, char **argv);  argv[0] is NAME; returns EXIT_*
 *   const char cmd_NAME_help[];           "ARGS\n" (its synopsis after
 *                                         "parload NAME"), then its help
 *
 * (declared by SUBCOMMAND(NAME)),
 * and one row of SUBCOMMANDS in cli/main.c.
 */
#ifndef PARLOAD_CLI_COMMON_H
#define PARLOAD_CLI_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parload.h"

#define PROG "parload"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* The article's reference stream: the embedded default and gen's default. */
#define REF_VIEWS 2000
#define REF_WIDTH 896
#define REF_HEIGHT 64
#define REF_TYPE PARLOAD_PIXEL_U16
#define REF_SEED 1

/* getopt_long values of the long options.  None is a short option's letter
 * (see bad_option): the shared ones count up from OPT_LONG, and a
 * subcommand numbers its own from OPT_LOCAL. */
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
	OPT_VERIFY_SEED,
	OPT_JSON,
	OPT_QUIET,
	OPT_HELP,
	OPT_VERSION,
	OPT_LOCAL,
};

/* The long options of parse_load_option, to put in a subcommand's table. */
#define LOAD_LONGOPTS                                                        \
	{ "threads", required_argument, NULL, OPT_THREADS },                 \
	{ "strategy", required_argument, NULL, OPT_STRATEGY },               \
	{ "io", required_argument, NULL, OPT_IO },                           \
	{ "buffer", required_argument, NULL, OPT_BUFFER },                   \
	{ "max-read", required_argument, NULL, OPT_MAX_READ },               \
	{ "no-bind", no_argument, NULL, OPT_NO_BIND },                       \
	{ "no-hugepages", no_argument, NULL, OPT_NO_HUGEPAGES },             \
	{ "preallocate", no_argument, NULL, OPT_PREALLOCATE },               \
	{ "verify", no_argument, NULL, OPT_VERIFY },                         \
	{ "keep-going", no_argument, NULL, OPT_KEEP_GOING },                 \
	{ "allow-truncated", no_argument, NULL, OPT_ALLOW_TRUNCATED },       \
	{ "verify-seed", required_argument, NULL, OPT_VERIFY_SEED }
#define LOAD_SHORTOPTS "t:"

/* The prototypes of subcommand NAME; its file says SUBCOMMAND(NAME);. */
#define SUBCOMMAND(name)                                                     \
	int cmd_##name(int argc, char **argv);                               \
	extern const char cmd_##name##_help[]

/* What the load options ask for. */
struct load_cfg {
	parload_options opts;
	bool preallocate;
	bool verify; /* --verify-seed */
	uint64_t seed;
};

/* Messages: "parload: ...\n" on standard error. */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then "Try 'parload --help'."; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned '?' or ':' (with opterr 0): say why; EXIT_USAGE. */
int bad_option(int c, char **argv, const struct option *longopts);
/* A library failure of path: its message, or the code's text. */
void report(const char *path, int rc, const parload_error *err);
/* Reset getopt for a subcommand's arguments. */
void getopt_reset(void);
/* The whole usage text: the load's --help and 'parload help' (main.c). */
int print_full_help(void);
/* --help of subcommand name: "Usage: parload NAME " and its help text. */
int print_help(const char *name, const char *help);

/* Strict numbers: digits only, no sign, no space, no overflow.  Sizes take
 * a K, M, G or T suffix (binary multiples; KiB ... TiB too). */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
bool parse_size(const char *s, size_t *out);

/* Load options (LOAD_LONGOPTS and -t): apply option c to cfg.  Returns
 * EXIT_OK, EXIT_USAGE (after saying why) or -1 when c is not one. */
void load_cfg_init(struct load_cfg *cfg);
int parse_load_option(struct load_cfg *cfg, int c, const char *arg);

/* JSON: a string (bytes that are not UTF-8 become U+FFFD) and a number
 * that never reads inf or nan. */
void json_str(FILE *f, const char *s);
double finite_or_zero(double x);

/* "512 B", "1.5 kB", "229.4 MB", "2.10 GB" (powers of 1000). */
void print_bytes(uint64_t n);

#endif
