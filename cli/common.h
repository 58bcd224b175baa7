/*
 * common.h - what the parload command's subcommands share: messages and
 * usage errors, byte counts (common.c); strict number and size parsing
 * (number.c) and JSON output (json.c), which parload-mpi shares; the load,
 * layout and selection options of every subcommand that reads a stream,
 * and the inputs the FILE operands make (options.c); what a source's
 * layout resolves to, file by file (layout.c); loading one input, its
 * progress line, Ctrl-C and temporary files (run.c).
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
/* Shared with parload-mpi: JSON output, strict numbers and sizes. */
#include "json.h"
#include "number.h"

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
	OPT_SEL_VIEWS,
	OPT_SEL_ROWS,
	OPT_SEL_COLS,
	OPT_SEL_LAYOUT,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_FOLLOW,
	OPT_TIMEOUT,
	OPT_RAW,
	OPT_CONCAT,
	OPT_CACHE,
	OPT_FLATS,
	OPT_DARKS,
	OPT_REDUCE,
	OPT_MINUS_LOG,
	OPT_BIN,
	OPT_DATASET,
	OPT_FRAMES,
	OPT_CONFINE,
	OPT_MAP_SINOGRAMS,
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
	{ "verify-seed", required_argument, NULL, OPT_VERIFY_SEED },         \
	{ "progress", no_argument, NULL, OPT_PROGRESS },                     \
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },               \
	{ "follow", no_argument, NULL, OPT_FOLLOW },                         \
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },                 \
	{ "cache", required_argument, NULL, OPT_CACHE },                     \
	{ "map-sinograms", no_argument, NULL, OPT_MAP_SINOGRAMS },           \
	LAYOUT_LONGOPTS,                                                     \
	SELECT_LONGOPTS
#define LOAD_SHORTOPTS "t:"

/* The correction options of parse_load_option: in the tables of the
 * subcommands that deliver pixels (the load and extract). */
#define CORRECT_LONGOPTS                                                     \
	{ "flats", required_argument, NULL, OPT_FLATS },                     \
	{ "darks", required_argument, NULL, OPT_DARKS },                     \
	{ "reduce", required_argument, NULL, OPT_REDUCE },                   \
	{ "minus-log", no_argument, NULL, OPT_MINUS_LOG },                   \
	{ "bin", required_argument, NULL, OPT_BIN }

/* Every table ends with --help and the end mark. */
#define HELP_LONGOPTS_END                                                    \
	{ "help", no_argument, NULL, OPT_HELP }, { NULL, 0, NULL, 0 }

/* The selection options of parse_select_option (part of LOAD_LONGOPTS). */
#define SELECT_LONGOPTS                                                      \
	{ "views", required_argument, NULL, OPT_SEL_VIEWS },                 \
	{ "rows", required_argument, NULL, OPT_SEL_ROWS },                   \
	{ "cols", required_argument, NULL, OPT_SEL_COLS },                   \
	{ "layout", required_argument, NULL, OPT_SEL_LAYOUT }

/* The layout options of parse_layout_option (part of LOAD_LONGOPTS). */
#define LAYOUT_LONGOPTS                                                      \
	{ "raw", required_argument, NULL, OPT_RAW },                         \
	{ "concat", no_argument, NULL, OPT_CONCAT },                         \
	{ "dataset", required_argument, NULL, OPT_DATASET },                 \
	{ "frames", required_argument, NULL, OPT_FRAMES },                   \
	{ "confine", no_argument, NULL, OPT_CONFINE }

/* The prototypes of subcommand NAME; its file says SUBCOMMAND(NAME);. */
#define SUBCOMMAND(name)                                                     \
	int cmd_##name(int argc, char **argv);                               \
	extern const char cmd_##name##_help[]

/* What --raw and --concat say of the FILE operands. */
struct layout_cfg {
	parload_desc desc; /* --raw SPEC, parsed */
	bool raw;          /* --raw given: desc is the files' layout */
	bool concat;       /* --concat: all FILEs are one stream */
	const char *dataset;   /* --dataset PATH: an HDF5 file's dataset */
	parload_frames frames; /* --frames: projections, flats or darks */
	bool confine; /* --confine: PARLOAD_SRC_CONFINE in every source */
};

/* What the load options ask for: the library's settings (set, which
 * parses every option that has a key), and the command's view of them,
 * cfg_sync()'d after each option. */
struct load_cfg {
	parload_settings set;
	parload_options opts;
	struct layout_cfg layout;
	bool preallocate;
	bool verify; /* --verify-seed */
	uint64_t seed;
	/* A progress line: -1 until decided (progress_auto), 0 never, 1
	 * always (--progress), 2 after half a second. */
	int progress;
	/* --follow: wait for views a writer has not appended yet, until
	 * timeout seconds pass without growth (--timeout). */
	bool follow;
	double timeout;
	bool corrected; /* a correction is asked for */
	/* --cache MODE: what the load leaves in the page cache. */
	parload_cache cache;
};

/* Messages: "parload: ...\n" on standard error. */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then "Try 'parload --help'."; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned '?' or ':' (with opterr 0): say why; EXIT_USAGE. */
int bad_option(int c, char **argv, const struct option *longopts);
/* A library failure of path: its message, or the code's text. */
void report(const char *path, int rc, const parload_error *err);
/* The whole usage text: the load's --help and 'parload help' (main.c). */
int print_full_help(void);
/* --help of subcommand name: "Usage: parload NAME " and its help text. */
int print_help(const char *name, const char *help);

/* What an option handler returns, besides an exit status that ends the
 * parsing (EXIT_USAGE after usage_error, EXIT_OK after --version). */
enum { ARG_OK = -1, ARG_UNKNOWN = -2 };

/* A subcommand's options: getopt's tables, its help (name NULL: the
 * whole usage text), and the handler of each option but -h/--help. */
struct option_parser {
	const char *shortopts; /* begins with ':' */
	const struct option *longopts;
	const char *name;
	const char *help;
	int (*fn)(void *ctx, int c, const char *arg);
};

/* Parse argv's options; ARG_OK, with optind at the first operand, or the
 * exit status to end with. */
int parse_options(int argc, char **argv, const struct option_parser *p,
		  void *ctx);

/* Load options (LOAD_LONGOPTS and -t): apply option c to cfg.  Returns
 * ARG_OK, EXIT_USAGE (after saying why) or ARG_UNKNOWN. */
void load_cfg_init(struct load_cfg *cfg);
int parse_load_option(struct load_cfg *cfg, int c, const char *arg);
/* cfg's fields from cfg->set. */
void cfg_sync(struct load_cfg *cfg);
/* What the options cannot ask for with a correction (EXIT_OK, or
 * EXIT_USAGE after saying why). */
int check_correction(const struct load_cfg *cfg);
/* --flats same / --darks same: 0 when scan (named name) is an HDF5 file,
 * whose flats or darks frames they are; else PARLOAD_EINVAL saying why
 * (or the failure to describe it) in err. */
int check_same_refs(const parload_settings *k, const parload_source *scan,
		    const char *name, parload_error *err);
/* The same for the layout options alone (LAYOUT_LONGOPTS): --raw SPEC
 * is parsed by the library, whose message a bad SPEC gets. */
int parse_layout_option(struct layout_cfg *lc, int c, const char *arg);
/* The same for the selection options alone (SELECT_LONGOPTS). */
int parse_select_option(parload_selection *sel, int c, const char *arg);
/* Whether a selection asks for anything but the whole file as it is. */
bool selection_is_whole(const parload_selection *sel);

/* A resolved selection: its parts as slices ("0:10:4 of 10"), in a human
 * line or as JSON members (",\"views\":3,..."), and the bytes it
 * delivers (view headers and pixels). */
void print_shape_human(const parload_shape *s, const parload_desc *h);
void print_shape_json(const parload_shape *s);
uint64_t shape_bytes(const parload_shape *s);

/* What a subcommand reads: one FILE operand, or with --concat all of
 * them as one stream (paths, n > 1 or n == 1), named in messages and
 * reports by label: the path, or "FIRST ... LAST (N files)". */
struct input {
	const char *path;         /* the FILE, or the first of paths */
	const char *const *paths; /* --concat: the n FILEs; else NULL */
	size_t n;
	char label[2 * 4096 + 32];
};

/* Whether path names a NRRD detached header (parload_format_named). */
bool is_nhdr(const char *path);
/* Whether the operands fit the layout options: --raw names raw files,
 * never a .nhdr (which states its own layout); --concat needs --raw
 * (but for TIFF files).
 * EXIT_OK, or EXIT_USAGE after saying why. */
int check_inputs(const struct layout_cfg *lc, int nfiles, char **files);
/* How many inputs nfiles operands make: 1 with --concat, else nfiles. */
int input_count(const struct layout_cfg *lc, int nfiles);
/* Input i of the operands. */
void input_at(struct input *in, const struct layout_cfg *lc, int nfiles,
	      char **files, int i);
/* The source of in, laid out as lc says (desc NULL: the file's own header,
 * or the .nhdr's). */
void input_source(parload_source *src, const struct input *in,
		  const struct layout_cfg *lc);

/* What a layout resolves to, file by file (layout.c): for 'parload info'. */
struct layout_file {
	const char *path;
	uint64_t size;     /* its bytes (0 if it cannot be seen) */
	uint64_t first;    /* its first view in the stream */
	uint64_t views;    /* the whole records it holds that count */
	uint64_t trailing; /* bytes after them (a partial record, or what a
			    * count leaves out) */
	bool short_offset; /* smaller than the layout's offset */
};

struct layout_view {
	parload_desc d;         /* resolved: count the views there are */
	uint64_t given_count;   /* the description's count; 0: none */
	struct layout_file *files; /* NULL: not known (a .nhdr's) */
	size_t nfiles;
	uint64_t trailing;      /* over the files */
	/* A TIFF or HDF5 source (d.format) has an offset, header and gap
	 * only where its views lie as a raw stream's (placed): raw, in
	 * data_file (parload_describe_raw). */
	bool placed;
	parload_desc raw;
	char data_file[4096];
};

void layout_init(struct layout_view *lv, const parload_desc *d,
		 uint64_t given_count);
/* Work out what each of the n files holds; false when out of memory. */
bool layout_add_files(struct layout_view *lv, const char *const *paths,
		      size_t n);
void layout_free(struct layout_view *lv);
/* A container's place as a raw stream, where it has one (src: the source
 * lv describes). */
void layout_place(struct layout_view *lv, const parload_source *src);
/* info's lines ("layout:", "record_size:", ...) and its JSON member
 * (",\"layout\":{...}"). */
void layout_print_human(const struct layout_view *lv);
void layout_print_json(const struct layout_view *lv);

/* One input loaded as the load options ask: its name in messages (the
 * path, or <stdin>), the I/O API for the report ("stream" for a pipe). */
struct loaded {
	const char *name;
	const char *io;
	size_t files; /* the files of the stream (1 but for --concat) */
	parload_dataset ds;
	parload_buffers buffers; /* --preallocate */
	parload_settings set; /* the request's settings (its correction) */
};

/* Start a loader with cfg's options; EXIT_OK or EXIT_FAIL (said why). */
int new_loader(parload_loader **loader, const struct load_cfg *cfg);
/* The end of a subcommand with its loader: released by the process's exit
 * (see run.c for why). */
void end_loader(parload_loader *loader);
/* Load in (its path "-": standard input).  0, or a negative code after
 * saying why; loaded_free() releases what a success holds. */
int load_input(parload_loader *loader, const struct input *in,
	       const struct load_cfg *cfg, struct loaded *l);
void loaded_free(struct loaded *l);
/* --keep-going: list the bad views; whether there were any. */
bool report_bad_views(const char *name, const parload_dataset *ds);
/* --verify-seed: whether the dataset is what 'parload gen --seed seed'
 * wrote (the selected part of it); says where it is not. */
bool verify_seed(const char *name, const parload_dataset *ds, uint64_t seed);

/* Settle cfg->progress: left to itself, a line on a terminal's standard
 * error unless the output is to be quiet. */
void progress_auto(struct load_cfg *cfg, bool quiet);

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE end the command without
 * leaving its temporary file; SIGINT and SIGTERM cancel a load that
 * delivers batches, after which end_if_interrupted() ends the command by
 * that signal (shells see 128 + its number). */
void catch_fatal_signals(void);
bool was_interrupted(void);
void end_if_interrupted(void);

/* One temporary file at a time, the library's (parload_temp_create),
 * removed when a fatal signal ends the process.  tmp_create(path):
 * DIR/.NAME.XXXXXX beside path; tmp_create(NULL): $TMPDIR/.parload.XXXXXX
 * (default /tmp).  Create it before the loader's threads exist. */
int tmp_create(const char *path);
/* The same for a store (a directory, parload_temp_create_dir), which a
 * fatal signal finds empty: the store is written between tmp_hold(true),
 * which holds those signals, and tmp_hold(false), which removes it whole
 * when one came meanwhile and lets it end the command. */
int tmp_create_dir(const char *path);
void tmp_hold(bool hold);
const char *tmp_file(void);
void tmp_remove(void);
/* Put it in place as path (parload_temp_place; a store
 * parload_save_place), which must not exist unless force; EXIT_OK, or EXIT_FAIL after saying why and removing it. */
int tmp_commit(const char *path, bool force);

/* "512 B", "1.5 kB", "229.4 MB", "2.10 GB" (powers of 1000). */
void print_bytes(uint64_t n);

#endif
