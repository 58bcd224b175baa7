/*
 * check_cli.c - the parload command, run as a user runs it: exit statuses,
 * messages, output formats, gen, info, selections and extract.
 *
 * Most behaviours are rows of one table (cases[]): the files to make, the
 * arguments, the exit status and what standard output and standard error
 * must hold; test_case runs each row as a test of its own.  The tests
 * below the table compare runs with each other or with an oracle.  The
 * stateful cases have programs of their own: check_cli_signals (SIGINT,
 * SIGTERM), check_cli_tty (a terminal), check_cli_full (/dev/full),
 * check_cli_default (the embedded default) and check_cli_python (the
 * JSON lines parsed by Python, .npy files read by NumPy).
 *
 * The command under test is $PARLOAD_BIN (set by `make check`); without it
 * the suite is skipped (exit 77).  Every test gets a scratch directory of
 * its own, and the command's $TMPDIR is a folder inside it that must be
 * empty again when the command has finished.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *bin;
static char scratch[1024]; /* this test's directory */
static char tmpdir[1100];  /* the command's $TMPDIR */

/* A command may take this long before the test fails (Check's own limit
 * for the test case is longer, so that the command is killed first). */
#define CMD_TIMEOUT 60
#define TCASE_TIMEOUT 90

/* ---------------------------------------------------------------------
 * Fixture: a scratch directory per test
 * ------------------------------------------------------------------- */

static void setup(void)
{
	/* The $TMPDIR the suite started with: a test points $TMPDIR into
	 * its scratch directory, which is gone when the next test starts in
	 * the same process (CK_FORK=no, as make check-valgrind runs). */
	static char base[512];

	if (!base[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(base, sizeof(base), "%s", t && *t ? t : "/tmp");
	}
	snprintf(scratch, sizeof(scratch), "%s/check_cli-XXXXXX", base);
	ck_assert_msg(mkdtemp(scratch) != NULL, "mkdtemp %s: %s", scratch,
		      strerror(errno));
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", scratch);
	ck_assert_int_eq(mkdir(tmpdir, 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", tmpdir, 1), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void teardown(void)
{
	nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path in the scratch directory; a few stay valid at once. */
static const char *P(const char *name)
{
	static char bufs[8][1200];
	static unsigned next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", scratch, name);
	return b;
}

/* ---------------------------------------------------------------------
 * Running the command (tests/testutil.h's harness)
 * ------------------------------------------------------------------- */

typedef tu_result result;
#define result_free tu_result_free

/* The command with args (NULL-terminated) as a tu_cmd: its captures in
 * the scratch directory, standard input /dev/null unless the caller
 * says otherwise.  argv is the caller's, 64 entries. */
static tu_cmd command(const char **argv, const char *const *args)
{
	int n = 0;

	argv[n++] = bin;
	for (; *args; args++) {
		ck_assert(n < 63);
		argv[n++] = *args;
	}
	argv[n] = NULL;
	return (tu_cmd){ .argv = argv, .dir = scratch,
			 .timeout = CMD_TIMEOUT };
}

static void run_args(result *r, const char *const *args)
{
	const char *argv[64];
	tu_cmd c = command(argv, args);

	tu_run_cmd(&c, r);
}

#define RUN(r, ...) run_args((r), (const char *const[]){ __VA_ARGS__, NULL })

static char *slurp(const char *path)
{
	size_t len;
	char *b = (char *)tu_read_all(path, &len);

	b[len] = '\0';
	return b;
}

/* Write a small stream with `parload gen`: 10 views of 16 x 8 u16 unless
 * the extra arguments say otherwise (later options win). */
#define GEN(name, ...)                                                     \
	do {                                                               \
		result g_;                                                 \
		RUN(&g_, "gen", "--views", "10", "--width", "16",          \
		    "--height", "8", ##__VA_ARGS__, P(name));              \
		ck_assert_msg(g_.status == 0, "gen %s: %s", name, g_.err); \
		result_free(&g_);                                          \
	} while (0)

/* ---------------------------------------------------------------------
 * Small helpers for assertions
 * ------------------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The value of "key:" in info's human output, up to the end of its line
 * (NULL if there is no such line).  Static storage. */
static const char *field(const char *out, const char *key)
{
	static char val[256];
	size_t klen = strlen(key);
	const char *line = out;

	while (line && *line) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;
			size_t n;

			v += strspn(v, " ");
			n = strcspn(v, "\n");
			if (n >= sizeof(val))
				n = sizeof(val) - 1;
			memcpy(val, v, n);
			val[n] = '\0';
			return val;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

/* The unsigned number after "key": in a JSON line. */
static uint64_t json_u64(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	ck_assert_msg(p != NULL, "no %s in %s", pat, json);
	return strtoull(p + strlen(pat), NULL, 10);
}

static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	ck_assert_msg(d != NULL, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static void patch(const char *path, off_t offset, const void *data,
		  size_t len)
{
	tu_patch(path, (uint64_t)offset, data, len);
}

/* GEN's default stream: 10 views of 256-byte payloads, 288-byte records,
 * 2944 bytes in all. */
#define PAYLOAD_OFF(v) (64 + (v) * 288 + 32)

/* ---------------------------------------------------------------------
 * The table: one run of the command per row
 *
 * Every '@' in argv[], env[] and the patterns is the scratch directory.
 * A pattern of out[], err[] and out_not[] is a substring of what the
 * command wrote, or, when it starts with '^', an extended regular
 * expression anchored at the start of it ("^$": nothing written; '.'
 * matches newlines too).  Names of files are in the scratch directory.
 * ------------------------------------------------------------------- */

/* A file made before the command runs: `parload gen` with GEN's defaults
 * (10 views of 16 x 8 u16) and gen[] after them, or gen[] alone when bare;
 * then cut to cut bytes, then patched. */
typedef struct cli_file {
	const char *name;
	const char *gen[10];
	bool bare;
	long cut; /* > 0: truncate to this many bytes */
	struct {
		long at;
		const char *bytes; /* strlen(bytes) of them */
	} patch[2];
} cli_file;

typedef struct cli_case {
	const char *name;
	cli_file files[3];
	const char *mkdir;   /* a directory made first */
	const char *argv[16];
	const char *env[2];  /* for tu_cmd.env */
	const char *in;      /* standard input redirected from this file */
	const char *in_pipe; /* standard input a pipe that gets this file */
	int status;          /* the exit status expected */
	const char *out[20], *err[4], *out_not[2];
	unsigned out_lines, err_lines; /* > 0: exactly this many lines */
	const char *absent;   /* no such file afterwards */
	const char *empty;    /* this directory is empty afterwards */
	const char *made;     /* this file exists afterwards ... */
	long made_size;       /* ... of this size (-1: any) */
	const char *made_holds; /* ... and holds these bytes */
} cli_case;

/* A line "key: value" of info's human output (value a regex). */
#define FIELD(key, value) "^(.*\n)?" key ": *" value "\n"
/* key in the second line of standard output. */
#define LINE2(key) "^[^\n]*\n[^\n]*" key
/* 9 views of 33 x 3, seed 5 (gen's arguments). */
#define SMALL_SEED5                                                        \
	{ "--views", "9", "--width", "33", "--height", "3", "--seed", "5" }
/* c.raw with CRCs and two bad payloads (views 2 and 7), and what
 * --keep-going says of them. */
#define TWO_BAD_CRCS                                                       \
	{ "c.raw", { "--crc" },                                            \
	  .patch = { { PAYLOAD_OFF(2), "\x01" },                           \
		     { PAYLOAD_OFF(7) + 255, "\x01" } } }
#define TWO_BAD_LINES                                                      \
	"^parload: @/c\\.raw: view 2: payload CRC-32C mismatch "            \
	"\\(byte offset 672\\)\n"                                           \
	"parload: @/c\\.raw: view 7: payload CRC-32C mismatch "             \
	"\\(byte offset 2112\\)\n$"
/* GEN's stream (10 views of 16 x 8 u16) as a raw layout, byte for byte. */
#define RAW16 "width=16,height=8,type=u16,offset=64,header=32"
/* 40 views of 512 KiB: a load that takes a few batches. */
#define BIG40 { "--views", "40", "--width", "512", "--height", "512" }

static const cli_case cases[] = {
	/* ---- usage ---- */
	{ .name = "help", .argv = { "--help" },
	  .out = { "^Usage: parload" }, .err = { "^$" } },
	{ .name = "help wins over files", .argv = { "@/absent.raw", "--help" },
	  .out = { "^Usage: parload" }, .err = { "^$" } },
	{ .name = "version", .argv = { "--version" },
	  .out = { "^parload [0-9]" }, .out_lines = 1, .err = { "^$" } },
	{ .name = "version short", .argv = { "-V" },
	  .out = { "^parload [0-9]" }, .out_lines = 1, .err = { "^$" } },

	/* ---- loading ---- */
	{ .name = "gen writes quietly",
	  .argv = { "gen", "--views", "10", "--width", "16", "--height", "8",
		    "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "a.raw",
	  .made_size = 2944 },
	{ .name = "load reports", .files = { { "a.raw" } },
	  .argv = { "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16, 2\\.9 kB in ", " s, ",
		   " GB/s, ", "(parallel)\n" },
	  .out_lines = 1, .err = { "^$" } },
	{ .name = "one thread reported", .files = { { "a.raw" } },
	  .argv = { "-t", "1", "@/a.raw" },
	  .out = { ", 1 thread (parallel)\n" } },
	{ .name = "threads reported", .files = { { "a.raw" } },
	  .argv = { "--threads", "3", "@/a.raw" },
	  .out = { ", 3 threads (parallel)\n" } },
	/* Large sizes parse (the parallel strategy allocates no buffer). */
	{ .name = "large sizes parse", .files = { { "a.raw" } },
	  .argv = { "--buffer", "1G", "--max-read", "1GiB", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views " } },
	{ .name = "terabyte buffer parses", .files = { { "a.raw" } },
	  .argv = { "--buffer", "2T", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views " } },
	{ .name = "no bind, no huge pages", .files = { { "a.raw" } },
	  .argv = { "--no-bind", "--no-hugepages", "--verify-seed", "1",
		    "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views " } },
	/* --preallocate loads into the command's own touched buffers. */
	{ .name = "preallocate parallel",
	  .files = { { "a.raw", SMALL_SEED5 } },
	  .argv = { "--preallocate", "--strategy", "parallel", "--threads",
		    "2", "--verify-seed", "5", "@/a.raw" },
	  .out = { "9 views 33x3" } },
	{ .name = "preallocate sequential",
	  .files = { { "a.raw", SMALL_SEED5 } },
	  .argv = { "--preallocate", "--strategy", "sequential", "--threads",
		    "2", "--verify-seed", "5", "@/a.raw" },
	  .out = { "9 views 33x3" } },
	{ .name = "preallocate mmap",
	  .files = { { "a.raw", SMALL_SEED5 } },
	  .argv = { "--preallocate", "--strategy", "mmap", "--threads", "2",
		    "--verify-seed", "5", "@/a.raw" },
	  .out = { "9 views 33x3" } },
	{ .name = "preallocate verifies",
	  .files = { { "a.raw", { "--seed", "5" } } },
	  .argv = { "--preallocate", "--verify-seed", "6", "@/a.raw" },
	  .status = 1, .out = { "^$" }, .err = { ": view 0: " } },
	/* Pixels of a few MB take the huge-page layout, with and without
	 * the advice. */
	{ .name = "preallocate huge pages",
	  .files = { { "big.raw", { "--views", "3", "--width", "1024",
				    "--height", "700", "--seed", "7" } } },
	  .argv = { "--preallocate", "--verify-seed", "7", "@/big.raw" },
	  .out = { "^@/big\\.raw: 3 views 1024x700 " } },
	{ .name = "preallocate no huge pages",
	  .files = { { "big.raw", { "--views", "3", "--width", "1024",
				    "--height", "700", "--seed", "7" } } },
	  .argv = { "--preallocate", "--no-hugepages", "--verify-seed", "7",
		    "@/big.raw" },
	  .out = { "^@/big\\.raw: 3 views 1024x700 " } },
	{ .name = "preallocate empty stream",
	  .files = { { "e.raw", { "--views", "0" } } },
	  .argv = { "--preallocate", "@/e.raw" }, .out = { ": 0 views " } },
	{ .name = "json lines", .files = { { "a.raw" }, { "b.raw" } },
	  .argv = { "--json", "-t", "2", "--verify-seed", "1", "@/a.raw",
		    "@/b.raw" },
	  .out = { "^\\{\"file\":\"@/a\\.raw\",[^\n]*\\}\n"
		   "\\{\"file\":\"@/b\\.raw\",[^\n]*\\}\n$",
		   LINE2("\"views\":10,"), LINE2("\"width\":16,"),
		   LINE2("\"height\":8,"), LINE2("\"pixel_type\":\"u16\""),
		   LINE2("\"bytes_per_pixel\":2,"), LINE2("\"bytes\":2944,"),
		   LINE2("\"bytes_read\":"), LINE2("\"read_calls\":"),
		   LINE2("\"seconds\":"), LINE2("\"gbps\":"),
		   LINE2("\"threads\":2,"), LINE2("\"strategy\":\"parallel\""),
		   LINE2("\"io\":\"posix\""), LINE2("\"crc32c\":false"),
		   LINE2("\"verified\":true") },
	  .out_lines = 2, .err = { "^$" } },
	{ .name = "json not verified", .files = { { "a.raw" } },
	  .argv = { "--json", "--strategy", "two-pass", "--io", "stdio",
		    "@/a.raw" },
	  .out = { "\"verified\":false", "\"strategy\":\"two-pass\"",
		   "\"io\":\"stdio\"", "\"threads\":1," } },
	/* --cache: the mode used is on the line when it is not keep. */
	{ .name = "cache drop", .files = { { "a.raw" } },
	  .argv = { "--cache", "drop", "--verify-seed", "1", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16, ", "(parallel), cache "
		   "drop\n" }, .err = { "^$" } },
	{ .name = "cache direct",
	  .files = { { "a.raw", { "--views", "300" } } },
	  .argv = { "--cache", "direct", "--verify-seed", "1", "@/a.raw" },
	  .out = { "^[^\n]*\\(parallel\\), cache (direct|drop \\(direct "
		   "refused\\))\n$" }, .err = { "^$" } },
	{ .name = "cache direct other strategy", .files = { { "a.raw" } },
	  .argv = { "--cache", "direct", "--strategy", "bulk", "@/a.raw" },
	  .out = { "(bulk, posix), cache drop (direct refused)\n" } },
	{ .name = "cache keep says nothing", .files = { { "a.raw" } },
	  .argv = { "--cache", "keep", "@/a.raw" },
	  .out = { "(parallel)\n" }, .out_not = { "cache" } },
	{ .name = "cache json", .files = { { "a.raw" } },
	  .argv = { "--json", "--cache", "drop", "@/a.raw" },
	  .out = { "\"io\":\"posix\",\"cache\":\"drop\"," } },
	{ .name = "cache json keep", .files = { { "a.raw" } },
	  .argv = { "--json", "@/a.raw" }, .out = { "\"cache\":\"keep\"," } },
	{ .name = "cache bogus", .files = { { "a.raw" } },
	  .argv = { "--cache", "bogus", "@/a.raw" }, .status = 2,
	  .out = { "^$" },
	  .err = { "^parload: unknown page-cache mode 'bogus' \\(keep, drop, "
		   "direct or auto\\)\n" } },
	{ .name = "extract cache drop", .files = { { "a.raw" } },
	  .argv = { "extract", "--cache", "drop", "--views", "2:5", "-o",
		    "@/x.bin", "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "x.bin",
	  .made_size = 3 * 256 },
	/* Quotes, backslashes, control characters and bytes that are not
	 * UTF-8 in a file name still make a JSON line. */
	{ .name = "json escapes",
	  .files = { { "q\"b\\s\x01\xff\xc3\xa9.raw" } },
	  .argv = { "--json", "@/q\"b\\s\x01\xff\xc3\xa9.raw" },
	  .out = { "^\\{\"file\":\"@/q\\\\\"b\\\\\\\\s\\\\u0001\\\\ufffd"
		   "\xc3\xa9\\.raw\"," } },
	{ .name = "quiet", .files = { { "a.raw" } },
	  .argv = { "-q", "@/a.raw" }, .out = { "^$" }, .err = { "^$" } },
	{ .name = "quiet still reports failures", .files = { { "a.raw" } },
	  .argv = { "--quiet", "--json", "@/a.raw", "@/absent.raw" },
	  .status = 1, .out = { "^$" }, .err = { "@/absent.raw" } },
	{ .name = "verify seed", .files = { { "a.raw", { "--seed", "7" } } },
	  .argv = { "--verify-seed", "7", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views" } },
	{ .name = "verify seed wrong",
	  .files = { { "a.raw", { "--seed", "7" } } },
	  .argv = { "--verify-seed", "8", "@/a.raw" }, .status = 1,
	  .out = { "^$" }, .err = { "^parload: @/a\\.raw: view 0: " } },
	/* A payload byte changed behind the loader's back. */
	{ .name = "verify names the view",
	  .files = { { "a.raw", .patch = { { PAYLOAD_OFF(3) + 5,
					     "\x5a\xa5" } } } },
	  .argv = { "--verify-seed", "1", "@/a.raw" }, .status = 1,
	  .err = { "^parload: @/a\\.raw: view 3: payload " } },
	{ .name = "empty and single",
	  .files = { { "empty.raw", { "--views", "0" } },
		     { "one.raw", { "--views", "1", "--width", "1",
				    "--height", "1", "--type", "u8" } } },
	  .argv = { "--verify-seed", "1", "@/empty.raw", "@/one.raw" },
	  .out = { ": 0 views 16x8 u16, 64 B in ",
		   ": 1 view 1x1 u8, 97 B in " } },

	/* ---- failures ---- */
	{ .name = "missing file", .argv = { "@/absent.raw" }, .status = 1,
	  .out = { "^$" }, .err = { "^parload: @/absent\\.raw: " },
	  .err_lines = 1 },
	{ .name = "bad magic",
	  .files = { { "a.raw", .patch = { { 1, "X" } } } },
	  .argv = { "@/a.raw" }, .status = 1, .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: ", "magic" } },
	{ .name = "truncated", .files = { { "a.raw", .cut = 2944 - 100 } },
	  .argv = { "@/a.raw" }, .status = 1, .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: " } },
	/* --follow of a file that stopped growing (4 of its 10 views). */
	{ .name = "follow times out",
	  .files = { { "grow.raw", .cut = 64 + 4 * 288 } },
	  .argv = { "--follow", "--timeout", "0.2", "@/grow.raw" },
	  .status = 1, .err = { "4 of the 10" } },
	{ .name = "follow allows truncated",
	  .files = { { "grow.raw", .cut = 64 + 4 * 288 } },
	  .argv = { "--follow", "--timeout", "0.2", "--allow-truncated",
		    "@/grow.raw" },
	  .out = { "4 of 10" } },
	{ .name = "follow needs parallel", .files = { { "full.raw" } },
	  .argv = { "--follow", "--strategy", "bulk", "@/full.raw" },
	  .status = 1, .err = { "--follow" } },
	{ .name = "follow timeout zero", .files = { { "full.raw" } },
	  .argv = { "--follow", "--timeout", "0", "@/full.raw" },
	  .status = 2, .out = { "^$" } },
	/* A failed file does not stop the others, and costs status 1. */
	{ .name = "good and bad", .files = { { "good.raw" } },
	  .argv = { "@/bad.raw", "@/good.raw" }, .status = 1,
	  .out = { "^@/good\\.raw: 10 views 16x8 u16, " }, .out_lines = 1,
	  .err = { "^parload: @/bad\\.raw: " } },
	/* '-' is standard input (here /dev/null, an empty stream); a file
	 * named '-' is loaded when written with a directory. */
	{ .name = "dash is stdin", .argv = { "-" }, .status = 1,
	  .err = { "^parload: <stdin>: stream is empty" } },
	{ .name = "file named dash", .files = { { "-" } },
	  .argv = { "@/-" }, .out = { "^@/-: 10 views" } },
	{ .name = "directory", .argv = { "@" }, .status = 1,
	  .err = { "^parload: @: " } },

	/* ---- reliability: --verify, --keep-going, --allow-truncated ---- */
	{ .name = "verify crc", .files = { { "c.raw", { "--crc" } } },
	  .argv = { "--verify", "@/c.raw" }, .err = { "^$" },
	  .out = { "(parallel), CRC-32C verified\n" } },
	{ .name = "verify crc json", .files = { { "c.raw", { "--crc" } } },
	  .argv = { "--verify", "--json", "@/c.raw" },
	  .out = { "\"crc_checked\":10,", "\"bad_views\":0," } },
	{ .name = "verify without crcs", .files = { { "n.raw" } },
	  .argv = { "--verify", "@/n.raw" },
	  .out = { ", no CRC-32C to verify\n" } },
	{ .name = "verify without crcs json", .files = { { "n.raw" } },
	  .argv = { "--verify", "--json", "@/n.raw" },
	  .out = { "\"crc_checked\":0," } },
	/* Without --keep-going the first bad view fails the file. */
	{ .name = "verify bad view",
	  .files = { { "c.raw", { "--crc" },
		       .patch = { { PAYLOAD_OFF(3) + 17, "\x01" },
				  { PAYLOAD_OFF(8) + 17, "\x01" } } } },
	  .argv = { "--verify", "@/c.raw" }, .status = 1, .out = { "^$" },
	  .err = { "^parload: @/c\\.raw: payload CRC-32C ",
		   "(view 3, byte offset 960)\n" },
	  .err_lines = 1 },
	{ .name = "crc not checked unasked",
	  .files = { { "c.raw", { "--crc" },
		       .patch = { { PAYLOAD_OFF(3) + 17, "\x01" } } } },
	  .argv = { "@/c.raw" }, .err = { "^$" } },
	/* --keep-going loads the file, lists every bad view on standard
	 * error, one line each, and fails (check_reliability tries every
	 * strategy; here, the command). */
	{ .name = "keep going parallel",
	  .files = { TWO_BAD_CRCS },
	  .argv = { "--keep-going", "--strategy", "parallel", "@/c.raw" },
	  .status = 1,
	  .err = { TWO_BAD_LINES },
	  .out = { "10 views", ", CRC-32C mismatch\n" } },
	{ .name = "keep going mmap",
	  .files = { TWO_BAD_CRCS },
	  .argv = { "--keep-going", "--strategy", "mmap", "@/c.raw" },
	  .status = 1,
	  .err = { TWO_BAD_LINES },
	  .out = { "10 views", ", CRC-32C mismatch\n" } },
	{ .name = "keep going json",
	  .files = { TWO_BAD_CRCS },
	  .argv = { "--keep-going", "--json", "@/c.raw" }, .status = 1,
	  .out = { "\"bad_views\":2,", "\"crc_checked\":10," } },
	/* Six whole views and part of the seventh. */
	{ .name = "truncated names complete views",
	  .files = { { "t.raw", .cut = 64 + 6 * 288 + 100 } },
	  .argv = { "@/t.raw" }, .status = 1,
	  .err = { "holds 6 complete views" } },
	{ .name = "allow truncated",
	  .files = { { "t.raw", .cut = 64 + 6 * 288 + 100 } },
	  .argv = { "--allow-truncated", "@/t.raw" }, .err = { "^$" },
	  .out = { "^@/t\\.raw: 6 views 16x8 u16 \\(truncated: 6 of 10 "
		   "views\\), " } },
	{ .name = "allow truncated json",
	  .files = { { "t.raw", .cut = 64 + 6 * 288 + 100 } },
	  .argv = { "--allow-truncated", "--json", "--verify-seed", "1",
		    "@/t.raw" },
	  .out = { "\"views\":6,", "\"declared_views\":10,",
		   "\"truncated\":true" } },
	{ .name = "trailing bytes still fail",
	  .files = { { "t.raw", .patch = { { 2944, "x" } } } },
	  .argv = { "--allow-truncated", "@/t.raw" }, .status = 1,
	  .err = { "after the last" } },

	/* ---- standard input: a redirected file as files are loaded, a
	 * pipe as a stream, with the same result ---- */
	{ .name = "stdin redirected",
	  .files = { { "s.raw", { "--crc", "--seed", "3" } } },
	  .in = "s.raw", .argv = { "--verify", "--verify-seed", "3", "-" },
	  .out = { "^<stdin>: 10 views 16x8 u16, ", "CRC-32C verified" } },
	{ .name = "stdin pipe",
	  .files = { { "s.raw", { "--crc", "--seed", "3" } } },
	  .in_pipe = "s.raw",
	  .argv = { "--verify", "--verify-seed", "3", "-" }, .err = { "^$" },
	  .out = { "^<stdin>: 10 views 16x8 u16, ",
		   "(sequential, stream), CRC-32C verified" } },
	{ .name = "stdin pipe json",
	  .files = { { "s.raw", { "--crc", "--seed", "3" } } },
	  .in_pipe = "s.raw", .argv = { "--json", "-" },
	  .out = { "\"file\":\"<stdin>\"", "\"io\":\"stream\"",
		   "\"bytes_read\":2944," } },
	{ .name = "stdin ends early",
	  .files = { { "s.raw", .cut = 2944 - 10 } }, .in_pipe = "s.raw",
	  .argv = { "-" }, .status = 1,
	  .err = { "^parload: <stdin>: stream ended early" } },
	{ .name = "stdin truncated allowed",
	  .files = { { "s.raw", .cut = 2944 - 10 } }, .in_pipe = "s.raw",
	  .argv = { "--allow-truncated", "-" },
	  .out = { "(truncated: 9 of 10 views)" } },
	{ .name = "stdin goes on",
	  .files = { { "s.raw", .patch = { { 2944, "xyz" } } } },
	  .in_pipe = "s.raw", .argv = { "-" }, .status = 1,
	  .err = { "stream goes on after the last" } },
	/* Standard input can be read once, and not ahead of its load. */
	{ .name = "stdin only once", .files = { { "s.raw" } },
	  .argv = { "-", "@/s.raw", "-" }, .status = 2, .out = { "^$" },
	  .err = { "only once" } },
	{ .name = "stdin not preallocated", .argv = { "--preallocate", "-" },
	  .status = 2, .out = { "^$" }, .err = { "--preallocate" } },
	/* /dev/stdin is read as a stream, as '-' is, and the line says so
	 * (a FIFO given as a path: test_stream_fifo). */
	{ .name = "dev stdin is a stream", .files = { { "a.raw" } },
	  .in_pipe = "a.raw", .argv = { "/dev/stdin" },
	  .out = { "^/dev/stdin: 10 views 16x8 u16, ",
		   "(sequential, stream)\n" } },

	/* ---- gen ---- */
	{ .name = "gen crc flag", .files = { { "a.raw", { "--crc" } } },
	  .argv = { "info", "@/a.raw" },
	  .out = { FIELD("flags", "0x1 \\(crc32c\\)") } },
	{ .name = "gen crc json", .files = { { "a.raw", { "--crc" } } },
	  .argv = { "--json", "--verify-seed", "1", "@/a.raw" },
	  .out = { "\"crc32c\":true" } },
	{ .name = "gen missing output", .argv = { "gen" }, .status = 2,
	  .err = { "parload: gen: missing output file\n" } },
	{ .name = "gen one output only",
	  .argv = { "gen", "@/a.raw", "@/b.raw" }, .status = 2,
	  .err = { "one output file only" }, .absent = "a.raw" },
	{ .name = "gen option lacks value", .argv = { "gen", "--views" },
	  .status = 2,
	  .err = { "parload: option '--views' requires an argument\n" } },
	{ .name = "gen cannot write",
	  .argv = { "gen", "--views", "1", "@/no/such/dir.raw" },
	  .status = 1, .err = { "^parload: @/no/such/dir\\.raw: " } },
	/* gen's defaults are the article's reference stream: 2000 views of
	 * 896 x 64 u16, seed 1, no CRCs; one override at a time keeps the
	 * files small. */
	{ .name = "gen default shape",
	  .files = { { "a.raw", { "--views", "2" }, .bare = true } },
	  .argv = { "info", "@/a.raw" },
	  .out = { FIELD("width", "896"), FIELD("height", "64"),
		   FIELD("pixel_type", "u16 \\(2\\)"),
		   FIELD("flags", "0x0") } },
	{ .name = "gen default seed",
	  .files = { { "a.raw", { "--views", "2" }, .bare = true } },
	  .argv = { "-q", "--verify-seed", "1", "@/a.raw" }, .out = { "^$" } },
	{ .name = "gen default views",
	  .files = { { "b.raw", { "--width", "1", "--height", "1" },
		       .bare = true } },
	  .argv = { "info", "@/b.raw" },
	  /* 64 + 2000 * (32 + 2) */
	  .out = { FIELD("view_count", "2000"),
		   FIELD("file_size", "68064") } },

	/* ---- info ---- */
	{ .name = "info valid", .files = { { "a.raw" } },
	  .argv = { "info", "@/a.raw" }, .err = { "^$" },
	  .out = { FIELD("file", "@/a\\.raw"), FIELD("magic", "ok"),
		   FIELD("version", "1\\.0"),
		   FIELD("file_header_size", "64"),
		   FIELD("view_header_size", "32"),
		   FIELD("view_count", "10"), FIELD("width", "16"),
		   FIELD("height", "8"), FIELD("pixel_type", "u16 \\(2\\)"),
		   FIELD("bytes_per_pixel", "2"), FIELD("flags", "0x0"),
		   FIELD("payload_size", "256"),
		   FIELD("expected_size", "2944"),
		   FIELD("file_size", "2944"), FIELD("valid", "yes") } },
	/* A file cut short still shows its header, and is not valid. */
	{ .name = "info truncated", .files = { { "a.raw", .cut = 1000 } },
	  .argv = { "info", "@/a.raw" }, .status = 1,
	  .out = { FIELD("view_count", "10"), FIELD("file_size", "1000"),
		   FIELD("valid", "no") },
	  .err = { "^parload: @/a\\.raw: " } },
	{ .name = "info bad magic",
	  .files = { { "a.raw", .patch = { { 0, "GIF8" } } } },
	  .argv = { "info", "@/a.raw" }, .status = 1,
	  .out = { FIELD("valid", "no") },
	  .out_not = { "^(.*\n)?view_count:" }, .err = { "magic" } },
	{ .name = "info json",
	  .files = { { "a.raw", { "--crc" } }, { "b.raw", .cut = 2000 } },
	  .argv = { "info", "--json", "@/a.raw", "@/b.raw" }, .status = 1,
	  .out = { "\"valid\":true,\"version_major\":1,", "\"view_count\":10,",
		   "\"pixel_type\":\"u16\"", "\"crc32c\":true",
		   "\"expected_size\":2944,\"file_size\":2944,"
		   "\"layout\":{\"format\":\"parload\",",
		   "\"valid\":false,", "\"file_size\":2000,\"error\":\"" },
	  .out_lines = 2 },
	{ .name = "info missing file argument", .argv = { "info" },
	  .status = 2, .err = { "parload: info: missing file\n" } },
	{ .name = "info bad option", .argv = { "info", "--bogus", "@/a.raw" },
	  .status = 2, .out = { "^$" }, .err = { "'--bogus'" } },
	{ .name = "info goes on after a missing file",
	  .files = { { "a.raw" } },
	  .argv = { "info", "@/absent.raw", "@/a.raw" }, .status = 1,
	  .err = { "@/absent.raw" },
	  .out = { "valid:             yes", "valid:             no" } },

	/* ---- selections ---- */
	/* The human line says what was selected. */
	{ .name = "selection line", .files = { { "a.raw" } },
	  .argv = { "--views", "::4", "--cols", "2:10", "--layout",
		    "sinograms", "@/a.raw" },
	  .out = { ": 3 views 8x8 u16 (views 0:9:4 of 10, rows 0:8 of 8, "
		   "cols 2:10 of 16, layout sinograms), 480 B in " } },
	{ .name = "info selection", .files = { { "a.raw" } },
	  .argv = { "info", "--rows", "1:3", "@/a.raw" },
	  .out = { FIELD("shape", "10 x 2 x 16 \\(views x rows x cols\\)"),
		   FIELD("selected_bytes", "960") } },
	/* A selection that this file cannot give fails the file (status
	 * 1), naming it; the other files are still loaded. */
	{ .name = "selection out of range",
	  .files = { { "a.raw" }, { "big.raw", { "--views", "30" } } },
	  .argv = { "--views", "20:25", "@/a.raw", "@/big.raw" },
	  .status = 1, .err = { "^parload: ", "@/a.raw" },
	  .out = { "^@/big\\.raw: 5 views " }, .out_lines = 1 },
	{ .name = "info selection out of range", .files = { { "a.raw" } },
	  .argv = { "info", "--rows", "4:9", "@/a.raw" }, .status = 1,
	  .err = { "@/a.raw" }, .out = { FIELD("selection", "invalid") } },

	/* ---- extract: a failed one leaves no file, half written or
	 * temporary ---- */
	{ .name = "extract of a truncated file",
	  .files = { { "short.raw", .cut = 1000 } }, .mkdir = "out",
	  .argv = { "extract", "-o", "@/out/s.npy", "@/short.raw" },
	  .status = 1, .err = { "truncated" }, .empty = "out" },
	{ .name = "extract of a bad crc",
	  .files = { { "crc.raw", { "--crc" },
		       .patch = { { PAYLOAD_OFF(7) + 3, "\xff" } } } },
	  .mkdir = "out",
	  .argv = { "extract", "--verify", "--views", "::7", "-o",
		    "@/out/s.raw", "@/crc.raw" },
	  .status = 1, .err = { "view 7" }, .empty = "out" },
	{ .name = "extract of the wrong seed",
	  .files = { { "crc.raw", { "--crc" } } }, .mkdir = "out",
	  .argv = { "extract", "--verify-seed", "9", "-o", "@/out/s.bin",
		    "@/crc.raw" },
	  .status = 1, .err = { "differs" }, .empty = "out" },
	{ .name = "extract into a missing directory",
	  .files = { { "crc.raw", { "--crc" } } },
	  .argv = { "extract", "-o", "@/absent/s.npy", "@/crc.raw" },
	  .status = 1, .err = { "cannot create a temporary file" } },

	/* ---- extract to TIFF (parload_save; check_tiff and
	 * python/tests/test_save.py read such files back) ---- */
	{ .name = "extract writes a tif",
	  .files = { { "a.raw", { "--width", "64", "--height", "32" } } },
	  .argv = { "extract", "--views", "2:5", "-o", "@/x.tif", "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "x.tif", .made_size = -1,
	  .made_holds = "{\"shape\": [3, 32, 64]}" },
	{ .name = "extract writes sinograms to a tif",
	  .files = { { "a.raw", { "--width", "64", "--height", "32" } } },
	  .argv = { "extract", "--layout", "sinograms", "-o", "@/x.tif",
		    "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "x.tif", .made_size = -1,
	  .made_holds = "{\"shape\": [32, 10, 64]}" },
#ifdef PARLOAD_MODULES
	/* ---- the TIFF and HDF5 code as modules (src/formats/module.c) ---- */
#ifdef HAVE_TIFF
#endif
	/* TIFF is written by libparload itself, in every build. */
	{ .name = "a tif written without the TIFF module",
	  .files = { { "a.raw" } }, .mkdir = "nomods",
	  .env = { "PARLOAD_MODULE_DIR=@/nomods" },
	  .argv = { "extract", "-o", "@/x.tif", "@/a.raw" }, .out = { "^$" },
	  .err = { "^$" }, .made = "x.tif", .made_size = -1,
	  .made_holds = "{\"shape\": [" },
#ifdef HAVE_HDF5
	/* HDF5's signature (the first bytes say what a file is), the rest
	 * no HDF5 parload reads itself: the module's. */
	{ .name = "an h5 without the HDF5 module",
	  .files = { { "a.h5", .patch = { { 0, "\x89HDF\r\n\x1a\n" } } } },
	  .mkdir = "nomods",
	  .env = { "PARLOAD_MODULE_DIR=@/nomods" },
	  .argv = { "@/a.h5" }, .status = 1, .out = { "^$" },
	  .err = { "^parload: @/a\\.h5: HDF5 support is not installed: "
		   "@/nomods/parload_hdf5\\.so: cannot open" },
	  .err_lines = 1 },
#endif
	{ .name = "a raw stream opens no module",
	  .files = { { "a.raw" } }, .mkdir = "nomods",
	  .env = { "PARLOAD_MODULE_DIR=@/nomods" },
	  .argv = { "--json", "@/a.raw" }, .out = { "\"views\":10," },
	  .err = { "^$" } },
#endif
	{ .name = "extract refuses an existing tif",
	  .files = { { "a.raw" }, { "x.tif" } },
	  .argv = { "extract", "-o", "@/x.tif", "@/a.raw" }, .status = 1,
	  .out = { "^$" },
	  .err = { "^parload: @/x\\.tif: file exists \\(--force replaces "
		   "it\\)\n$" } },
	{ .name = "extract --compress is for h5", .files = { { "a.raw" } },
	  .argv = { "extract", "--compress", "gzip", "-o", "@/x.tif",
		    "@/a.raw" },
	  .status = 2, .absent = "x.tif",
	  .err = { "^parload: extract: --compress applies to HDF5 and Zarr "
		   "output only\n" } },
	{ .name = "extract --compress level", .files = { { "a.raw" } },
	  .argv = { "extract", "--compress", "gzip=0", "-o", "@/x.h5",
		    "@/a.raw" },
	  .status = 2, .absent = "x.h5",
	  .err = { "^parload: unknown compression 'gzip=0' \\(zstd, blosc "
		   "or gzip, or NAME=LEVEL: zstd 1 to 22, blosc and gzip 1 "
		   "to 9\\)\n" } },
	{ .name = "extract tif to standard output", .files = { { "a.raw" } },
	  .argv = { "extract", "--format", "tif", "-o", "-", "@/a.raw" },
	  .status = 2,
	  .err = { "^parload: extract: a TIFF, HDF5 or PNG file is written to a "
		   "file, not to standard output\n" } },

	/* ---- corrections: --flats, --darks, --reduce, --minus-log ---- */
	{ .name = "darks and minus-log load",
	  .files = { { "a.raw" }, { "d.raw", { "--seed", "3" } } },
	  .argv = { "--darks", "@/d.raw", "--minus-log", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16 \\(views 0:10:1 of 10, ",
		   "), corrected to f32, 5.4 kB in " },
	  .out_lines = 1, .err = { "^$" } },
	{ .name = "corrected load in JSON",
	  .files = { { "a.raw" }, { "d.raw", { "--seed", "3" } } },
	  .argv = { "--json", "--darks", "@/d.raw", "--reduce", "median",
		    "@/a.raw" },
	  .out = { "\"selected_bytes\":5440,", "\"corrected\":true}\n" },
	  .err = { "^$" } },
	/* 128 bytes of header, 10 x 8 x 16 float32 pixels. */
	{ .name = "corrected extract writes float32 npy",
	  .files = { { "a.raw" }, { "d.raw", { "--seed", "3" } },
		     { "f.raw", { "--seed", "4" } } },
	  .argv = { "extract", "--darks", "@/d.raw", "--flats", "@/f.raw",
		    "--minus-log", "-o", "@/x.npy", "@/a.raw" },
	  .status = 0, .out = { "^$" }, .err = { "^$" }, .made = "x.npy",
	  .made_size = 128 + 10 * 8 * 16 * 4,
	  .made_holds = "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (10, 8, 16), }" },
	{ .name = "corrected extract writes an f32 stream",
	  .files = { { "a.raw" }, { "d.raw", { "--seed", "3" } } },
	  .argv = { "extract", "--raw", RAW16, "--darks", "@/d.raw", "-o",
		    "@/x.raw", "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "x.raw",
	  .made_size = 64 + 10 * (32 + 8 * 16 * 4) },
	/* 2 x 2 bins of 8 x 16: 4 x 8 float32 per view. */
	{ .name = "binned extract", .files = { { "a.raw" }, { "d.raw" } },
	  .argv = { "extract", "--darks", "@/d.raw", "--bin", "2", "-o",
		    "@/x.npy", "@/a.raw" },
	  .out = { "^$" }, .err = { "^$" }, .made = "x.npy",
	  .made_size = 128 + 10 * 4 * 8 * 4,
	  .made_holds = "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (10, 4, 8), }" },
	{ .name = "bin larger than the selection",
	  .files = { { "a.raw" }, { "d.raw" } },
	  .argv = { "--darks", "@/d.raw", "--bin", "9", "@/a.raw" },
	  .status = 1, .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: a 9 x 9 bin is larger than the "
		   "selection's 8 rows x 16 columns\n$" } },
	/* The CRCs of the raw rows, before they are corrected. */
	{ .name = "verify with a correction",
	  .files = { { "a.raw", { "--crc" } }, { "d.raw" } },
	  .argv = { "--verify", "--darks", "@/d.raw", "@/a.raw" },
	  .out = { "corrected to f32", "CRC-32C verified" },
	  .err = { "^$" } },
	{ .name = "verify of a correction's rows refused",
	  .files = { { "a.raw", { "--crc" } }, { "d.raw" } },
	  .argv = { "--verify", "--darks", "@/d.raw", "--rows", "0:2",
		    "@/a.raw" },
	  .status = 1, .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: a payload's CRC-32C covers all" } },
	/* "same": the references of the scan's own HDF5 file (pytest's
	 * test_hdf5 loads them from h5py-written files). */
	{ .name = "flats same refused for a stream",
	  .files = { { "a.raw" } },
	  .argv = { "--flats", "same", "@/a.raw" }, .status = 1,
	  .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: --flats same names the references "
		   "stored in the scan's own HDF5 file, and this is not an "
		   "HDF5 file; give the references' file\n$" } },
	{ .name = "darks same refused for a raw layout",
	  .files = { { "a.raw" } },
	  .argv = { "extract", "--raw", RAW16, "--darks", "same", "-o",
		    "@/x.npy", "@/a.raw" },
	  .status = 1, .out = { "^$" }, .absent = "x.npy",
	  .err = { "^parload: @/a\\.raw: --darks same names the references "
		   "stored in the scan's own HDF5 file, and this is a raw "
		   "stream \\(--raw\\)" } },
	{ .name = "reduce bogus", .files = { { "a.raw" } },
	  .argv = { "extract", "--reduce", "bogus", "-o", "@/x.npy",
		    "@/a.raw" },
	  .status = 2, .out = { "^$" }, .absent = "x.npy",
	  .err = { "^parload: unknown reduction 'bogus' \\(mean or median\\)\n"
		   "Try " } },
	{ .name = "bin zero", .files = { { "a.raw" } },
	  .argv = { "--bin", "0", "@/a.raw" }, .status = 2, .out = { "^$" },
	  .err = { "^parload: invalid --bin '0'" } },
	{ .name = "correction with preallocate", .files = { { "a.raw" } },
	  .argv = { "--minus-log", "--preallocate", "@/a.raw" },
	  .status = 2, .out = { "^$" },
	  .err = { "^parload: --preallocate sizes the file's pixels" } },
	{ .name = "missing darks", .files = { { "a.raw" } },
	  .argv = { "--darks", "@/absent.raw", "@/a.raw" }, .status = 1,
	  .out = { "^$" }, .err = { "absent.raw: cannot open file" } },

	/* ---- raw layouts: --raw, --concat, .nhdr, parload nhdr ---- */
	/* GEN's stream described as a raw layout, byte for byte: the same
	 * pixels, and the 32-byte view headers read as raw bytes that
	 * --verify-seed checks too. */
	{ .name = "raw load verifies seed",
	  .files = { { "a.raw", { "--seed", "7" } } },
	  .argv = { "--raw", RAW16, "--verify-seed", "7", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16, 2\\.9 kB in " },
	  .err = { "^$" } },
	{ .name = "raw overrides a header",
	  .files = { { "a.raw", { "--seed", "7" } } },
	  .argv = { "--raw", "width=16,height=8,type=u16,offset=96,gap=32",
		    "--verify-seed", "7", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16, " } },
	{ .name = "raw big-endian", .files = { { "a.raw" } },
	  .argv = { "--raw", "width=16,height=8,type=u16be,offset=64,"
			     "header=32", "@/a.raw" },
	  .out = { "^@/a\\.raw: 10 views 16x8 u16be, " } },
	/* 12 u16 pixels a row are 24 bytes: 16 mono12p pixels. */
	{ .name = "raw mono12p", .files = { { "m.raw", { "--width", "12" } } },
	  .argv = { "--raw", "width=16,height=8,type=mono12p,offset=64,"
			     "header=32", "--json", "@/m.raw" },
	  .out = { "\"views\":10,", "\"width\":16,",
		   "\"pixel_type\":\"mono12p\"", "\"bytes_per_pixel\":2," } },
	{ .name = "raw concat three files",
	  .files = { { "a.raw" }, { "b.raw" }, { "c.raw" } },
	  .argv = { "--raw", RAW16, "--concat", "@/a.raw", "@/b.raw",
		    "@/c.raw" },
	  .out = { "^@/a\\.raw \\.\\.\\. @/c\\.raw \\(3 files\\): 30 views "
		   "16x8 u16, 8\\.8 kB in " },
	  .out_lines = 1, .err = { "^$" } },
	{ .name = "raw files one by one", .files = { { "a.raw" }, { "b.raw" } },
	  .argv = { "--raw", RAW16, "@/a.raw", "@/b.raw" },
	  .out = { "^@/a\\.raw: 10 views [^\n]*\n@/b\\.raw: 10 views " },
	  .out_lines = 2 },
	{ .name = "info raw", .files = { { "a.raw" } },
	  .argv = { "info", "--raw", RAW16, "@/a.raw" }, .err = { "^$" },
	  .out = { FIELD("format", "raw"),
		   FIELD("layout", "width=16,height=8,type=u16,offset=64,"
				   "header=32,gap=0"),
		   FIELD("record_size", "288"), FIELD("payload_size", "256"),
		   FIELD("views", "10"), FIELD("first_record", "64"),
		   FIELD("count", "none \\(as many as the files hold\\)"),
		   FIELD("trailing_bytes", "0"), FIELD("file_size", "2944"),
		   FIELD("valid", "yes") } },
	{ .name = "info raw partial record",
	  .files = { { "a.raw", .cut = 2900 } },
	  .argv = { "info", "--raw", RAW16, "@/a.raw" }, .status = 1,
	  .out = { FIELD("views", "9"),
		   FIELD("trailing_bytes", "244 bytes after the last complete "
					   "record \\(a partial record\\)"),
		   FIELD("valid", "no") },
	  .err = { "^parload: @/a\\.raw: file ends inside the record of "
		   "view 9: 244 of its 288 bytes", "byte offset 2656" } },
	{ .name = "info raw count leaves bytes", .files = { { "a.raw" } },
	  .argv = { "info", "--raw", RAW16 ",count=4", "@/a.raw" },
	  .out = { FIELD("count", "4"), FIELD("views", "4"),
		   FIELD("trailing_bytes", "1728 bytes after the last complete "
					   "record \\(ignored after the "
					   "counted views\\)"),
		   FIELD("valid", "yes") } },
	{ .name = "info raw concat",
	  .files = { { "a.raw" }, { "b.raw", .cut = 64 + 3 * 288 },
		     { "c.raw" } },
	  .argv = { "info", "--raw", RAW16, "--concat", "@/a.raw", "@/b.raw",
		    "@/c.raw" },
	  .out = { FIELD("file", "@/a\\.raw \\.\\.\\. @/c\\.raw \\(3 files\\)"),
		   FIELD("views", "23"),
		   FIELD("file 1", "@/b\\.raw: views 10:13, 928 bytes, 0 "
				   "bytes after the last complete record"),
		   FIELD("file 2", "@/c\\.raw: views 13:23, 2944 bytes, [^\n]*") },
	  .out_not = { "^(.*\n)?file_size:" } },
	{ .name = "info raw json", .files = { { "a.raw" } },
	  .argv = { "info", "--json", "--raw", RAW16 ",count=9", "@/a.raw" },
	  .out = { "^\\{\"file\":\"@/a\\.raw\",\"valid\":true,\"layout\":"
		   "\\{\"format\":\"raw\",",
		   "\"count\":9,", "\"record_size\":288,", "\"views\":9,",
		   "\"first_record\":64,", "\"trailing_bytes\":288,",
		   "\"trailing\":\"ignored after the counted views\"" },
	  .out_lines = 1 },
	/* Bad descriptions: usage errors with the library's message. */
	{ .name = "raw unknown key", .files = { { "a.raw" } },
	  .argv = { "--raw", "wdth=16,height=8,type=u16", "@/a.raw" },
	  .status = 2, .out = { "^$" },
	  .err = { "^parload: --raw: layout: unknown key 'wdth' ",
		   "Try 'parload --help'." } },
	{ .name = "raw missing width", .files = { { "a.raw" } },
	  .argv = { "--raw", "height=8,type=u16", "@/a.raw" }, .status = 2,
	  .out = { "^$" }, .err = { "^parload: --raw: layout: width is "
				    "missing" } },
	{ .name = "raw missing height", .files = { { "a.raw" } },
	  .argv = { "info", "--raw", "width=8,type=u16", "@/a.raw" },
	  .status = 2, .out = { "^$" },
	  .err = { "^parload: --raw: layout: height is missing" } },
	{ .name = "raw missing type", .files = { { "a.raw" } },
	  .argv = { "extract", "--raw", "width=8,height=8", "-o", "@/x.npy",
		    "@/a.raw" },
	  .status = 2, .out = { "^$" }, .absent = "x.npy",
	  .err = { "^parload: --raw: layout: type is missing" } },
	{ .name = "raw zero width", .files = { { "a.raw" } },
	  .argv = { "--raw", "width=0,height=8,type=u16", "@/a.raw" },
	  .status = 2, .out = { "^$" },
	  .err = { "^parload: --raw: layout: width=0 must be between 1 " } },
	{ .name = "raw packed row not whole bytes", .files = { { "a.raw" } },
	  .argv = { "--raw", "width=3,height=8,type=mono12p", "@/a.raw" },
	  .status = 2, .out = { "^$" },
	  .err = { "^parload: --raw: layout: a row of 3 mono12p pixels is 36 "
		   "bits, not whole bytes" } },
	{ .name = "raw count past the end", .files = { { "a.raw" } },
	  .argv = { "--raw", RAW16 ",count=11", "@/a.raw" }, .status = 1,
	  .out = { "^$" },
	  .err = { "^parload: @/a\\.raw: the layout's count is 11 views, the "
		   "file holds 10 complete views \\(view 10, byte offset "
		   "2944\\)\n$" } },
	{ .name = "raw shorter than offset", .files = { { "a.raw" } },
	  .argv = { "--raw", "width=16,height=8,type=u16,offset=4K",
		    "@/a.raw" }, .status = 1,
	  .err = { "^parload: @/a\\.raw: file is 2944 bytes, shorter than the "
		   "layout's offset of 4096 bytes" } },
	{ .name = "raw concat partial record",
	  .files = { { "a.raw" }, { "b.raw", .cut = 2900 }, { "c.raw" } },
	  .argv = { "--raw", RAW16, "--concat", "@/a.raw", "@/b.raw",
		    "@/c.raw" },
	  .status = 1, .out = { "^$" },
	  .err = { "^parload: @/b\\.raw: file ends inside the record of view "
		   "19: ", "(view 19, byte offset 2656)\n" } },
	{ .name = "raw with a nhdr", .files = { { "a.raw" } },
	  .argv = { "--raw", RAW16, "@/a.nhdr" }, .status = 2,
	  .out = { "^$" },
	  .err = { "^parload: --raw: '@/a.nhdr' is a NRRD header, which "
		   "states its own layout" } },
	{ .name = "concat needs raw", .files = { { "a.raw" }, { "b.raw" } },
	  .argv = { "--concat", "@/a.raw", "@/b.raw" }, .status = 2,
	  .out = { "^$" }, .err = { "^parload: --concat needs --raw SPEC" } },
	{ .name = "raw given twice", .files = { { "a.raw" } },
	  .argv = { "--raw", RAW16, "--raw", RAW16, "@/a.raw" }, .status = 2,
	  .err = { "--raw given twice" } },
	/* parload nhdr refuses what NRRD cannot express, with the reason,
	 * and leaves no file. */
	{ .name = "nhdr of a parload file", .files = { { "a.raw" } },
	  .argv = { "nhdr", "-o", "@/a.nhdr", "@/a.raw" }, .status = 1,
	  .out = { "^$" }, .absent = "a.nhdr",
	  .err = { "^parload: @/a\\.nhdr: each view has a 32-byte header: "
		   "NRRD data has nothing between views\n",
		   "a file in parload's own format has a 32-byte header "
		   "before each view" } },
	{ .name = "nhdr of packed pixels",
	  .files = { { "m.raw", { "--width", "12" } } },
	  .argv = { "nhdr", "--raw", "width=16,height=8,type=mono12p,"
				     "offset=64,header=32", "-o", "@/m.nhdr",
		    "@/m.raw" },
	  .status = 1, .absent = "m.nhdr",
	  .err = { "type mono12p packs its pixels" } },
	{ .name = "nhdr does not overwrite",
	  .files = { { "o.nhdr" }, { "one.raw", { "--views", "1" } } },
	  .argv = { "nhdr", "-o", "@/o.nhdr", "@/one.raw" }, .status = 1,
	  .err = { "^parload: @/o\\.nhdr: file exists \\(--force replaces "
		   "it\\)" } },
	{ .name = "nhdr of several files needs concat",
	  .files = { { "a.raw" }, { "b.raw" } },
	  .argv = { "nhdr", "--raw", RAW16, "-o", "@/x.nhdr", "@/a.raw",
		    "@/b.raw" },
	  .status = 2, .absent = "x.nhdr", .err = { "give --concat" } },

	/* ---- progress (on a terminal: check_cli_tty) ---- */
	/* --progress draws on standard error from the load's batches, and
	 * clears its line at the end; the report is unchanged. */
	{ .name = "progress forced", .files = { { "a.raw", BIG40 } },
	  .argv = { "--progress", "-t", "2", "@/a.raw" },
	  .err = { "^\r.*40/40 views, .*\r\033\\[K$" },
	  .out = { "^@/a\\.raw: 40 views " }, .out_lines = 1 },
	{ .name = "no progress wins", .files = { { "a.raw", BIG40 } },
	  .argv = { "--progress", "--no-progress", "@/a.raw" },
	  .err = { "^$" }, .out = { "^@/a\\.raw: 40 views " } },
};

/* s with every '@' the scratch directory, escaped for a regular
 * expression when re; a few results stay valid at once. */
static const char *expand(const char *s, bool re)
{
	static char bufs[24][2048];
	static unsigned next;
	char *b = bufs[next++ % 24];
	size_t n = 0;

	for (; *s; s++) {
		const char *from = *s == '@' ? scratch : (char[2]){ *s, 0 };
		const bool dir = *s == '@';

		for (; *from; from++) {
			ck_assert(n + 2 < sizeof(bufs[0]));
			if (dir && re && strchr(".[]()*+?{}|^$\\", *from))
				b[n++] = '\\';
			b[n++] = *from;
		}
	}
	b[n] = '\0';
	return b;
}

/* Whether text holds pattern (see the table's rules). */
static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool found;

	if (pattern[0] != '^')
		return strstr(text, expand(pattern, false)) != NULL;
	ck_assert_msg(regcomp(&re, expand(pattern, true),
			      REG_EXTENDED | REG_NOSUB) == 0,
		      "bad pattern %s", pattern);
	found = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return found;
}

/* Make f in the scratch directory. */
static void make_file(const cli_file *f)
{
	static const char *const defaults[] = { "--views", "10", "--width",
						"16", "--height", "8" };
	const char *args[32] = { "gen" };
	int n = 1;
	result g;

	for (int i = 0; !f->bare && i < TU_COUNT(defaults); i++)
		args[n++] = defaults[i];
	for (int i = 0; i < TU_COUNT(f->gen) && f->gen[i]; i++)
		args[n++] = f->gen[i];
	args[n++] = P(f->name);
	args[n] = NULL;
	run_args(&g, args);
	ck_assert_msg(g.status == 0, "gen %s: %s", f->name, g.err);
	result_free(&g);
	if (f->cut > 0)
		tu_truncate(P(f->name), (uint64_t)f->cut);
	for (int i = 0; i < TU_COUNT(f->patch) && f->patch[i].bytes; i++)
		patch(P(f->name), f->patch[i].at, f->patch[i].bytes,
		      strlen(f->patch[i].bytes));
}

/* Run c's command, its standard input as c says. */
static void run_case(const cli_case *c, result *r)
{
	const char *args[17], *env[3] = { NULL }, *argv[64];
	tu_cmd cmd;
	tu_proc p;
	int n = 0;

	for (; n < TU_COUNT(c->argv) && c->argv[n]; n++)
		args[n] = expand(c->argv[n], false);
	args[n] = NULL;
	for (int i = 0; i < TU_COUNT(c->env) && c->env[i]; i++)
		env[i] = expand(c->env[i], false);
	cmd = command(argv, args);
	cmd.env = env[0] ? env : NULL;
	cmd.in = c->in ? P(c->in) : NULL;
	cmd.in_pipe = c->in_pipe != NULL;
	tu_spawn(&cmd, &p);
	if (c->in_pipe) {
		size_t len;
		unsigned char *data = tu_read_all(P(c->in_pipe), &len);

		/* It stops early when the command stops reading. */
		tu_feed(p.in, data, len);
		close(p.in);
		p.in = -1;
		free(data);
	}
	tu_wait(&p, r);
}

/* What one stream (what: "stdout" or "stderr") must and must not hold. */
static void check_stream(const cli_case *c, const char *what,
			 const char *text, const char *const *want, int n_want,
			 const char *const *not, int n_not, unsigned lines)
{
	for (int i = 0; i < n_want && want[i]; i++)
		ck_assert_msg(matches(text, want[i]),
			      "%s: %s lacks \"%s\":\n%s", c->name, what,
			      want[i], text);
	for (int i = 0; i < n_not && not[i]; i++)
		ck_assert_msg(!matches(text, not[i]),
			      "%s: %s holds \"%s\":\n%s", c->name, what,
			      not[i], text);
	ck_assert_msg(!lines || count_lines(text) == lines,
		      "%s: %u lines on %s, expected %u:\n%s", c->name,
		      count_lines(text), what, lines, text);
}

/* c->made holds the bytes c->made_holds. */
static void check_holds(const cli_case *c)
{
	size_t len;
	unsigned char *b = tu_read_all(P(c->made), &len);

	ck_assert_msg(memmem(b, len, c->made_holds, strlen(c->made_holds)),
		      "%s: %s lacks \"%s\"", c->name, c->made, c->made_holds);
	free(b);
}

START_TEST(test_case)
{
	const cli_case *c = &cases[_i];
	result r;

	for (int i = 0; i < TU_COUNT(c->files) && c->files[i].name; i++)
		make_file(&c->files[i]);
	if (c->mkdir)
		ck_assert_int_eq(mkdir(P(c->mkdir), 0700), 0);
	run_case(c, &r);
	ck_assert_msg(r.status == c->status, "%s: status %d, expected %d:\n%s",
		      c->name, r.status, c->status, r.err);
	check_stream(c, "stdout", r.out, c->out, TU_COUNT(c->out), c->out_not,
		     TU_COUNT(c->out_not), c->out_lines);
	check_stream(c, "stderr", r.err, c->err, TU_COUNT(c->err), NULL, 0,
		     c->err_lines);
	if (c->absent)
		ck_assert_msg(access(P(c->absent), F_OK) != 0, "%s: %s made",
			      c->name, c->absent);
	if (c->empty)
		ck_assert_msg(dir_is_empty(P(c->empty)), "%s: a file left in %s",
			      c->name, c->empty);
	if (c->made && c->made_size >= 0)
		ck_assert_msg(tu_file_size(P(c->made)) == (uint64_t)c->made_size,
			      "%s: %s is not %ld bytes", c->name, c->made,
			      c->made_size);
	if (c->made_holds)
		check_holds(c);
	ck_assert_msg(dir_is_empty(tmpdir), "%s: a temporary file left behind",
		      c->name);
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Usage: what the table cannot say
 * ------------------------------------------------------------------- */

/* What --help documents, one test each. */
static const char *const documented[] = {
	"--threads", "--strategy", "--io", "--buffer", "--max-read",
	"--no-bind", "--no-hugepages", "--preallocate", "--verify-seed",
	"--verify", "--keep-going", "--allow-truncated", "<stdin>",
	"--json", "--quiet",
	"--help", "--version", "gen", "info", "--views", "--width", "--height",
	"--type", "--crc", "--seed", "Exit status", "--raw", "--concat",
	".nhdr", "nhdr", "mono12p", "u16be", "--cache", "direct", "--flats",
	"--darks", "--reduce", "--minus-log", "--bin", "'same'", "--confine",
};

START_TEST(test_help_mentions)
{
	result r;

	RUN(&r, "--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, documented[_i]),
		      "--help does not mention %s", documented[_i]);
	result_free(&r);
}
END_TEST

START_TEST(test_help_forms_agree)
{
	result a, b, c;

	RUN(&a, "--help");
	RUN(&b, "-h");
	RUN(&c, "help");
	ck_assert_int_eq(b.status, 0);
	ck_assert_int_eq(c.status, 0);
	ck_assert_str_eq(a.out, b.out);
	ck_assert_str_eq(a.out, c.out);
	result_free(&a);
	result_free(&b);
	result_free(&c);
}
END_TEST

/* Each usage error: its arguments, the message it must give. */
static const struct {
	const char *args[4];
	const char *message;
} usage_errors[] = {
	{ { "--bogus" }, "parload: unknown option '--bogus'\n" },
	{ { "-z" }, "parload: unknown option '-z'\n" },
	{ { "--no" }, "parload: ambiguous option '--no'\n" },
	{ { "--json=yes" }, "parload: option '--json' takes no argument\n" },
	{ { "--threads" }, "parload: option '--threads' requires an argument\n" },
	{ { "-t" }, "parload: option '-t' requires an argument\n" },
	{ { "--strategy", "x" }, "parload: unknown strategy 'x' (parallel, bulk, "
	  "sequential, two-pass or mmap)\n" },
	{ { "--strategy", "" }, "parload: unknown strategy '' (parallel" },
	{ { "--io", "mmap" }, "parload: unknown I/O API 'mmap' (posix or "
	  "stdio)\n" },
	{ { "--cache", "" }, "parload: unknown page-cache mode ''" },
	{ { "--cache", "DROP" }, "parload: unknown page-cache mode 'DROP'" },
	{ { "--verify-seed", "-1" }, "parload: invalid seed '-1'\n" },
	{ { "--verify-seed", "18446744073709551616" }, "invalid seed" },
	{ { "--max-read", "1X" }, "parload: invalid read size '1X'\n" },
	{ { "-t", "abc" }, "parload: invalid thread count 'abc'" },
	{ { "-t", "-1" }, "invalid thread count" },
	{ { "-t", "+2" }, "invalid thread count" },
	{ { "-t", " 2" }, "invalid thread count" },
	{ { "-t", "2x" }, "invalid thread count" },
	{ { "-t", "" }, "invalid thread count" },
	{ { "-t", "4097" }, "invalid thread count" },
	{ { "--threads", "99999999999999999999" }, "invalid thread count" },
	{ { "--buffer", "abc" }, "parload: invalid buffer size 'abc'\n" },
	{ { "--buffer", "" }, "invalid buffer size" },
	{ { "--buffer", "-1" }, "invalid buffer size" },
	{ { "--buffer", "1.5M" }, "invalid buffer size" },
	{ { "--buffer", "1KK" }, "invalid buffer size" },
	{ { "--buffer", "1 K" }, "invalid buffer size" },
	{ { "--buffer", "0x10" }, "invalid buffer size" },
	{ { "--buffer", "1Kb" }, "invalid buffer size" },
	{ { "--buffer", "K" }, "invalid buffer size" },
	{ { "--buffer", "18446744073709551616" }, "invalid buffer size" },
	{ { "--buffer", "17179869184G" }, "invalid buffer size" },
	{ { "--buffer", "16777216T" }, "invalid buffer size" },
	{ { "--buffer", "17179869184T" },
	  "parload: invalid buffer size '17179869184T' (overflows 64 bits)\n" },
	{ { "--max-read", "18446744073709551616" },
	  "invalid read size '18446744073709551616' (overflows 64 bits)\n" },
	{ { "--raw", "width=4,height=4,type=u8,offset=17179869184T" },
	  "parload: --raw: layout: offset=17179869184T overflows 64 bits\n" },
};

START_TEST(test_usage_error)
{
	const char *args[6] = { NULL };
	result r;
	int n = 0;

	/* A good file first: nothing may be loaded. */
	GEN("a.raw");
	args[n++] = P("a.raw");
	for (int i = 0; i < 4 && usage_errors[_i].args[i]; i++)
		args[n++] = usage_errors[_i].args[i];
	run_args(&r, args);
	ck_assert_msg(r.status == 2, "%s: status %d", args[1], r.status);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, usage_errors[_i].message),
		      "expected '%s' in '%s'", usage_errors[_i].message,
		      r.err);
	ck_assert_msg(strstr(r.err, "Try 'parload --help'.\n"), "%s", r.err);
	result_free(&r);
}
END_TEST


static const char *const strategies[] = {
	"parallel", "bulk", "sequential", "two-pass", "mmap",
};

/* Every strategy with each I/O API loads, verifies, and says which it was
 * (the API only where the strategy uses it). */
START_TEST(test_strategy)
{
	const char *s = strategies[_i / 2];
	const char *io = _i % 2 ? "stdio" : "posix";
	bool uses_io = strcmp(s, "parallel") && strcmp(s, "mmap");
	char want[64];
	result r;

	GEN("a.raw", "--seed", "5");
	RUN(&r, "--strategy", s, "--io", io, "--verify-seed", "5", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s/%s: %s", s, io, r.err);
	if (uses_io)
		snprintf(want, sizeof(want), "(%s, %s)\n", s, io);
	else
		snprintf(want, sizeof(want), "(%s)\n", s);
	ck_assert_msg(strstr(r.out, want), "want %s in %s", want, r.out);
	result_free(&r);
}
END_TEST

static const char *const good_sizes[] = {
	"0", "1", "4096", "4K", "4k", "64KiB", "1M", "1m", "1MiB",
};

START_TEST(test_buffer_sizes)
{
	result r;

	GEN("a.raw");
	RUN(&r, "--strategy", "sequential", "--io", _i % 2 ? "stdio" : "posix",
	    "--buffer", good_sizes[_i], "--verify-seed", "1", P("a.raw"));
	ck_assert_msg(r.status == 0, "--buffer %s: %s", good_sizes[_i], r.err);
	result_free(&r);
}
END_TEST


/* --max-read reaches the loader: smaller requests, more of them. */
START_TEST(test_max_read)
{
	result a, b;

	/* 10 views of 100 x 50 u16: 10,000-byte payloads. */
	GEN("a.raw", "--width", "100", "--height", "50");
	RUN(&a, "--json", "--strategy", "sequential", P("a.raw"));
	RUN(&b, "--json", "--strategy", "sequential", "--max-read", "1K",
	    "--verify-seed", "1", P("a.raw"));
	ck_assert_int_eq(a.status, 0);
	ck_assert_int_eq(b.status, 0);
	ck_assert_uint_ge(json_u64(b.out, "read_calls"),
			  json_u64(a.out, "read_calls") + 10 * 9);
	result_free(&a);
	result_free(&b);
}
END_TEST


/* --map-sinograms reaches the loader: the same sinograms (--verify-seed),
 * copied from the mapped file with no read call but the file header's;
 * --cache drop and the view layout read as without it. */
START_TEST(test_map_sinograms)
{
	result a, b, c, d;

	GEN("m.raw", "--width", "100", "--height", "50");
	RUN(&a, "--json", "-t", "2", "--layout", "sinograms", "--rows",
	    "3:40", "--verify-seed", "1", P("m.raw"));
	RUN(&b, "--json", "-t", "2", "--layout", "sinograms", "--rows",
	    "3:40", "--map-sinograms", "--verify-seed", "1", P("m.raw"));
	RUN(&c, "--json", "-t", "2", "--layout", "sinograms",
	    "--map-sinograms", "--cache", "drop", "--verify-seed", "1",
	    P("m.raw"));
	RUN(&d, "--json", "-t", "2", "--map-sinograms", "--verify-seed", "1",
	    P("m.raw"));
	ck_assert_int_eq(a.status, 0);
	ck_assert_int_eq(b.status, 0);
	ck_assert_int_eq(c.status, 0);
	ck_assert_int_eq(d.status, 0);
	ck_assert_uint_gt(json_u64(a.out, "read_calls"), 1);
	ck_assert_uint_eq(json_u64(b.out, "read_calls"), 1);
	ck_assert_uint_eq(json_u64(b.out, "bytes_read"),
			  json_u64(a.out, "bytes_read"));
	ck_assert_uint_gt(json_u64(c.out, "read_calls"), 1);
	ck_assert_uint_gt(json_u64(d.out, "read_calls"), 1);
	result_free(&a);
	result_free(&b);
	result_free(&c);
	result_free(&d);
}
END_TEST

/* ---------------------------------------------------------------------
 * gen
 * ------------------------------------------------------------------- */

static const char *const types[] = {
	"u8", "u16", "i16", "u32", "i32", "f32", "f64",
};
static const unsigned type_sizes[] = { 1, 2, 2, 4, 4, 4, 8 };

START_TEST(test_gen_type)
{
	char want[64], size[32];
	result r;

	GEN("a.raw", "--views", "3", "--width", "5", "--height", "3",
	    "--type", types[_i]);
	RUN(&r, "--verify-seed", "1", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s: %s", types[_i], r.err);
	snprintf(want, sizeof(want), ": 3 views 5x3 %s, ", types[_i]);
	ck_assert_msg(strstr(r.out, want), "%s", r.out);
	result_free(&r);

	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert(starts_with(field(r.out, "pixel_type"), types[_i]));
	snprintf(size, sizeof(size), "%u", type_sizes[_i]);
	ck_assert_str_eq(field(r.out, "bytes_per_pixel"), size);
	snprintf(size, sizeof(size), "%u", 15 * type_sizes[_i]);
	ck_assert_str_eq(field(r.out, "payload_size"), size);
	result_free(&r);
}
END_TEST


/* --concat of 100 frames under a soft limit of 40 open files: the
 * command raises its soft limit to the hard one and loads them all; with
 * the hard limit at 40 too, the load fails naming a frame and the limit
 * (EMFILE, RLIMIT_NOFILE), status 1. */
START_TEST(test_concat_open_files_limit)
{
	char cmd[4000];
	char *out;

	ck_assert_int_eq(mkdir(P("fr"), 0755), 0);
	for (int v = 0; v < 100; v++) {
		char name[32];
		uint16_t px[6];

		for (int i = 0; i < 6; i++)
			px[i] = (uint16_t)(v * 6 + i);
		snprintf(name, sizeof(name), "fr/v%03d.raw", v);
		tu_write_file(P(name), px, sizeof(px));
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && ulimit -S -n 40 && '%s' --raw "
		 "width=3,height=2,type=u16 --concat fr/*.raw > soft.out 2>&1",
		 scratch, bin);
	ck_assert_msg(system(cmd) == 0, "%s", slurp(P("soft.out")));
	out = slurp(P("soft.out"));
	ck_assert_msg(strstr(out, "100 views 3x2 u16"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && ulimit -n 40 && '%s' --raw "
		 "width=3,height=2,type=u16 --concat fr/*.raw > hard.out 2>&1",
		 scratch, bin);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
	out = slurp(P("hard.out"));
	ck_assert_msg(strstr(out, "fr/v0") && strstr(out, "limit of 40 open "
							   "files (RLIMIT_NOFILE"),
		      "%s", out);
	free(out);
}
END_TEST

/* Same arguments, same bytes; another seed, other bytes. */
START_TEST(test_gen_deterministic)
{
	char cmd[4000];

	GEN("a.raw", "--seed", "3");
	GEN("b.raw", "--seed", "3");
	GEN("c.raw", "--seed", "4");
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", P("a.raw"), P("b.raw"));
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", P("a.raw"), P("c.raw"));
	ck_assert_int_ne(system(cmd), 0);
}
END_TEST

/* Each of gen's usage errors; OUT follows the arguments unless an option
 * lacks its value (OUT would become the value). */
static const struct {
	const char *args[6];
	const char *message;
} gen_errors[] = {
	{ { "--type", "u64" }, "parload: unknown pixel type 'u64' (u8, u16, " },
	{ { "--width", "0" }, "parload: invalid width '0'" },
	{ { "--height", "0" }, "parload: invalid height '0'" },
	{ { "--width", "4294967296" }, "invalid width" },
	{ { "--views", "-1" }, "parload: invalid view count '-1'\n" },
	{ { "--seed", "x" }, "parload: invalid seed 'x'\n" },
	{ { "--threads", "2" }, "parload: unknown option '--threads'\n" },
	{ { "--crc=1" }, "parload: option '--crc' takes no argument\n" },
	/* payload_size overflows 64 bits */
	{ { "--width", "4294967295", "--height", "4294967295", "--type", "f64" },
	  "parload: gen: cannot describe " },
};

START_TEST(test_gen_usage_error)
{
	const char *args[9] = { "gen" };
	result r;
	int n = 1;

	for (int i = 0; i < 6 && gen_errors[_i].args[i]; i++)
		args[n++] = gen_errors[_i].args[i];
	args[n++] = P("a.raw");
	run_args(&r, args);
	ck_assert_msg(r.status == 2, "%s: %d", args[1], r.status);
	ck_assert_msg(strstr(r.err, gen_errors[_i].message), "want %s got %s",
		      gen_errors[_i].message, r.err);
	ck_assert(strstr(r.err, "Try 'parload --help'."));
	ck_assert_int_ne(access(P("a.raw"), F_OK), 0);
	result_free(&r);
}
END_TEST


/* ---------------------------------------------------------------------
 * Files that grow, FIFOs
 * ------------------------------------------------------------------- */

/* Start the command with args; its standard input /dev/null. */
static void start(tu_proc *p, const char *const *args)
{
	const char *argv[64];
	tu_cmd c = command(argv, args);

	tu_spawn(&c, p);
}

/* --follow: a file that grows while it is loaded loads whole (checked
 * against the generator); the table has one that stops growing. */
START_TEST(test_follow_grows)
{
	const size_t part = 64 + 4 * (32 + 256);
	char *whole;
	result r;
	tu_proc p;
	int fd;

	GEN("full.raw");
	whole = slurp(P("full.raw"));
	fd = open(P("grow.raw"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(tu_feed(fd, whole, part));
	start(&p, (const char *const[]){ "--follow", "--timeout", "5",
					 "--verify-seed", "1", P("grow.raw"),
					 NULL });
	usleep(300 * 1000);
	ck_assert(tu_feed(fd, whole + part, 2944 - part));
	close(fd);
	tu_wait(&p, &r);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "10 views"), "%s", r.out);
	result_free(&r);
	free(whole);
}
END_TEST

/* A FIFO given as a path is read as a stream, as '-' is, and the line
 * says so. */
START_TEST(test_stream_fifo)
{
	char *data;
	result r;
	tu_proc p;
	int fd;

	GEN("a.raw");
	data = slurp(P("a.raw"));
	ck_assert_int_eq(mkfifo(P("fifo"), 0600), 0);
	start(&p, (const char *const[]){ P("fifo"), NULL });
	fd = open(P("fifo"), O_WRONLY); /* waits for the command */
	ck_assert(fd >= 0);
	ck_assert(tu_feed(fd, data, 2944));
	close(fd);
	tu_wait(&p, &r);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(starts_with(r.out, P("fifo")) &&
			      strstr(r.out, ": 10 views 16x8 u16, ") &&
			      strstr(r.out, "(sequential, stream)\n"),
		      "%s", r.out);
	result_free(&r);
	free(data);
}
END_TEST

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A FIFO no writer opens: info refuses it at once, as it refuses
 * /dev/null, and --follow's --timeout covers the wait for the writer
 * (in view layout, with batches, and in sinograms, without).  Each run
 * is killed, failing the test, after 10 s. */
START_TEST(test_fifo_no_writer)
{
	static const char *const layouts[] = { "views", "sinograms" };
	const char *argv[64];
	double t0, t;
	result r;
	tu_cmd c;

	ck_assert_int_eq(mkfifo(P("lonely"), 0600), 0);
	c = command(argv, (const char *const[]){ "info", P("lonely"), NULL });
	c.timeout = 10;
	t0 = seconds_now();
	tu_run_cmd(&c, &r);
	t = seconds_now() - t0;
	ck_assert_msg(r.status == 1 &&
			      strstr(r.err, "not a regular file (a FIFO)"),
		      "%d %s", r.status, r.err);
	ck_assert_msg(t < 5, "info took %.1f s", t);
	result_free(&r);
	for (int i = 0; i < TU_COUNT(layouts); i++) {
		c = command(argv, (const char *const[]){
			"--follow", "--timeout", "0.5", "--layout", layouts[i],
			P("lonely"), NULL });
		c.timeout = 10;
		t0 = seconds_now();
		tu_run_cmd(&c, &r);
		t = seconds_now() - t0;
		ck_assert_msg(r.status == 1 &&
				      strstr(r.err, "stream is empty: no writer "
						    "opened the FIFO in 0.5 s"),
			      "%s: %d %s", layouts[i], r.status, r.err);
		ck_assert_msg(t >= 0.5 && t < 5, "%s: --timeout 0.5 took "
			      "%.1f s", layouts[i], t);
		result_free(&r);
	}
}
END_TEST

/* ---------------------------------------------------------------------
 * Subcommands: their own help, the library's strategy names
 * ------------------------------------------------------------------- */

START_TEST(test_subcommand_help)
{
	static const char *const names[] = { "gen", "info", "extract",
					      "nhdr" };
	result full;

	RUN(&full, "--help");
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char want[64];
		result r;

		snprintf(want, sizeof(want), "Usage: parload %s ", names[i]);
		RUN(&r, names[i], "--help");
		ck_assert_int_eq(r.status, 0);
		ck_assert_msg(starts_with(r.out, want), "%s", r.out);
		/* The whole help holds each subcommand's, less its
		 * "Usage: " prefix. */
		ck_assert_msg(strstr(full.out, r.out + 7), "%s", names[i]);
		result_free(&r);
	}
	result_free(&full);
}
END_TEST

START_TEST(test_list_strategies)
{
	char want[256] = "";
	result r;

	for (int s = 0; parload_strategy_name(s); s++) {
		strcat(want, parload_strategy_name(s));
		strcat(want, "\n");
	}
	RUN(&r, "--list-strategies");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, want);
	ck_assert(strstr(r.out, "parallel\n"));
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Selections: --views, --rows, --cols, --layout; parload extract
 *
 * The oracle is the test's own reading of the file: its bytes, cut by
 * hand, with no help from the library.
 * ------------------------------------------------------------------- */

/* A stream file read whole, with its header's fields. */
typedef struct rawfile {
	unsigned char *data;
	size_t size;
	parload_file_header h;
} rawfile;

static void raw_read(const char *path, rawfile *f)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	f->data = (unsigned char *)slurp(path);
	f->size = (size_t)st.st_size;
	ck_assert(f->size >= sizeof(f->h));
	memcpy(&f->h, f->data, sizeof(f->h));
}

/* View v's header and payload in the file's bytes. */
static const unsigned char *raw_view(const rawfile *f, uint64_t v)
{
	const uint64_t at = 64 + v * (32 + f->h.payload_size);

	ck_assert(at + 32 + f->h.payload_size <= f->size);
	return f->data + at;
}

/* One selection: the options, and what they select of GEN's stream (10
 * views of 16 x 8 pixels): nv views from v0 by vstep, nr rows from r0, nc
 * columns from c0. */
typedef struct sel_case {
	const char *type;
	const char *views, *rows, *cols, *layout;
	uint64_t v0, vstep, nv;
	uint32_t r0, nr, c0, nc;
} sel_case;

static const sel_case sel_cases[] = {
	{ "u16", "::4", NULL, NULL, NULL, 0, 4, 3, 0, 8, 0, 16 },
	{ "u16", "-3:", "2:6", "3:11", NULL, 7, 1, 3, 2, 4, 3, 8 },
	{ "u8", "1:9:3", "7:8", "0:1", "sinograms", 1, 3, 3, 7, 1, 0, 1 },
	{ "f64", NULL, "2:6", NULL, "sinograms", 0, 1, 10, 2, 4, 0, 16 },
	{ "i32", "7", ":3", "-5:", "views", 7, 1, 1, 0, 3, 11, 5 },
	{ "u16", "2::5", "1:8", "1:15", "sinograms", 2, 5, 2, 1, 7, 1, 14 },
};

static bool sel_sino(const sel_case *c)
{
	return c->layout && strcmp(c->layout, "sinograms") == 0;
}

/* The selection's pixels, cut from the file by hand (len bytes). */
static unsigned char *sel_expect(const rawfile *f, const sel_case *c,
				 size_t *len)
{
	const size_t bpp = f->h.bytes_per_pixel, line = c->nc * bpp;
	unsigned char *out;

	*len = c->nv * c->nr * line;
	out = malloc(*len);
	ck_assert(out != NULL);
	for (uint64_t k = 0; k < c->nv; k++) {
		const unsigned char *pix = raw_view(f, c->v0 + k * c->vstep) + 32;

		for (uint32_t r = 0; r < c->nr; r++) {
			const uint64_t at = sel_sino(c) ? r * c->nv + k :
							  k * c->nr + r;

			memcpy(out + at * line,
			       pix + ((c->r0 + r) * f->h.width + c->c0) * bpp,
			       line);
		}
	}
	return out;
}

/* args[] of one command: the case's selection options appended. */
static int sel_args(const sel_case *c, const char **args, int n)
{
	const char *opt[] = { "--views", "--rows", "--cols", "--layout" };
	const char *val[] = { c->views, c->rows, c->cols, c->layout };

	return tu_add_options(args, n, opt, val, 4);
}

/* Write GEN's stream of the case's pixel type (seed 5) to name. */
static void sel_gen(const sel_case *c, const char *name, bool crc)
{
	if (crc)
		GEN(name, "--type", c->type, "--seed", "5", "--crc");
	else
		GEN(name, "--type", c->type, "--seed", "5");
}

/* parload extract with the case's selection and extra arguments. */
static void sel_extract(result *r, const sel_case *c, const char *const *extra)
{
	const char *args[32] = { "extract" };
	int n = sel_args(c, args, 1);

	for (; *extra; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	run_args(r, args);
}

#define EXTRACT(r, c, ...)                                                 \
	sel_extract((r), (c), (const char *const[]){ __VA_ARGS__, NULL })

static off_t file_size(const char *path)
{
	struct stat st;

	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	return st.st_size;
}

static void assert_file_eq(const char *path, const void *want, size_t len)
{
	char *got;

	ck_assert_int_eq(file_size(path), (off_t)len);
	got = slurp(path);
	ck_assert_msg(memcmp(got, want, len) == 0, "%s differs", path);
	free(got);
}

/* --format bin: the selection's pixels, in the layout asked. */
START_TEST(test_select_bin)
{
	const sel_case *c = &sel_cases[_i];
	unsigned char *want;
	rawfile f;
	size_t len;
	result r;

	sel_gen(c, "a.raw", false);
	raw_read(P("a.raw"), &f);
	want = sel_expect(&f, c, &len);
	EXTRACT(&r, c, "-t", "3", "--format", "bin", "-o", P("s.bin"),
		P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "");
	assert_file_eq(P("s.bin"), want, len);
	result_free(&r);
	/* Standard output gets the same bytes. */
	EXTRACT(&r, c, "--format", "bin", "-o", "-", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out_len, len);
	ck_assert(memcmp(r.out, want, len) == 0);
	result_free(&r);
	free(want);
	free(f.data);
}
END_TEST

/* --verify-seed checks the selected views, rows and columns against the
 * generator, and names the first file view that differs. */
START_TEST(test_select_verify_seed)
{
	const sel_case *c = &sel_cases[_i];
	const char *args[32] = { "-t", "2", "--verify-seed", "5" };
	char want[64];
	int n;
	result r;

	sel_gen(c, "a.raw", false);
	n = sel_args(c, args, 4);
	args[n++] = P("a.raw");
	args[n] = NULL;
	run_args(&r, args);
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	args[3] = "6";
	run_args(&r, args);
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), ": view %" PRIu64 ": ", c->v0);
	ck_assert_msg(strstr(r.err, want), "want %s in %s", want, r.err);
	ck_assert_str_eq(r.out, "");
	result_free(&r);
}
END_TEST

/* The JSON line and info --json show the shape; info's read_bytes is what
 * the load read. */
START_TEST(test_select_json)
{
	const sel_case *c = &sel_cases[_i];
	const char *args[32] = { "--json" }, *iargs[32] = { "info", "--json" };
	const char *sel;
	int n, ni;
	result r, info;

	sel_gen(c, "a.raw", false);
	n = sel_args(c, args, 1);
	args[n++] = P("a.raw");
	args[n] = NULL;
	run_args(&r, args);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(json_u64(r.out, "views"), c->nv);
	ck_assert_int_eq(json_u64(r.out, "view_start"), c->v0);
	ck_assert_int_eq(json_u64(r.out, "view_step"), c->vstep);
	ck_assert_int_eq(json_u64(r.out, "rows"), c->nr);
	ck_assert_int_eq(json_u64(r.out, "row_start"), c->r0);
	ck_assert_int_eq(json_u64(r.out, "cols"), c->nc);
	ck_assert_int_eq(json_u64(r.out, "col_start"), c->c0);
	ck_assert_int_eq(json_u64(r.out, "file_views"), 10);
	ck_assert(strstr(r.out, sel_sino(c) ? "\"layout\":\"sinograms\"" :
					      "\"layout\":\"views\""));
	ni = sel_args(c, iargs, 2);
	iargs[ni++] = P("a.raw");
	iargs[ni] = NULL;
	run_args(&info, iargs);
	ck_assert_msg(info.status == 0, "%s", info.err);
	sel = strstr(info.out, "\"selection\":{");
	ck_assert_msg(sel != NULL, "%s", info.out);
	ck_assert_int_eq(json_u64(sel, "views"), c->nv);
	ck_assert_int_eq(json_u64(sel, "rows"), c->nr);
	ck_assert_int_eq(json_u64(sel, "cols"), c->nc);
	ck_assert_int_eq(json_u64(sel, "selected_bytes"),
			 json_u64(r.out, "selected_bytes"));
	ck_assert_int_eq(json_u64(sel, "read_bytes"),
			 json_u64(r.out, "bytes_read"));
	result_free(&r);
	result_free(&info);
}
END_TEST

/* Bad selection options are usage errors naming the option, for every
 * subcommand that takes them; nothing is loaded or written. */
static const struct {
	const char *opt, *value, *message;
} sel_errors[] = {
	{ "--views", "1:2:0", "parload: invalid --views '1:2:0'" },
	{ "--views", "a:b", "parload: invalid --views 'a:b'" },
	{ "--rows", "::2", "parload: invalid --rows '::2'" },
	{ "--cols", "1:2:3", "parload: invalid --cols '1:2:3'" },
	{ "--layout", "rows", "parload: unknown layout 'rows' (views or "
	  "sinograms)" },
};

START_TEST(test_select_usage)
{
	const char *cmds[][3] = { { NULL }, { "info" }, { "extract", "-o",
							  NULL } };

	GEN("a.raw");
	cmds[2][2] = P("s.npy");
	for (int i = 0; i < 3; i++) {
		const char *args[8];
		int n = 0;
		result r;

		for (int j = 0; j < 3 && cmds[i][j]; j++)
			args[n++] = cmds[i][j];
		args[n++] = sel_errors[_i].opt;
		args[n++] = sel_errors[_i].value;
		args[n++] = P("a.raw");
		args[n] = NULL;
		run_args(&r, args);
		ck_assert_msg(r.status == 2, "%s: %d", args[0], r.status);
		ck_assert_str_eq(r.out, "");
		ck_assert_msg(strstr(r.err, sel_errors[_i].message), "%s",
			      r.err);
		result_free(&r);
	}
	ck_assert_int_ne(access(P("s.npy"), F_OK), 0);
}
END_TEST

/* NumPy's format, checked byte by byte (numpy itself reads it in
 * check_cli_python). */
START_TEST(test_extract_npy)
{
	const sel_case *c = &sel_cases[_i];
	unsigned char *want, *got;
	char head[256];
	size_t len, hlen;
	rawfile f;
	result r;

	sel_gen(c, "a.raw", false);
	raw_read(P("a.raw"), &f);
	want = sel_expect(&f, c, &len);
	EXTRACT(&r, c, "-o", P("s.npy"), P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	got = (unsigned char *)slurp(P("s.npy"));
	ck_assert(memcmp(got, "\x93NUMPY\x01\x00", 8) == 0);
	hlen = 10 + got[8] + 256u * got[9];
	ck_assert_int_eq(hlen % 64, 0);
	ck_assert_int_eq(got[hlen - 1], '\n');
	snprintf(head, sizeof(head),
		 "{'descr': '%c%c%d', 'fortran_order': False, 'shape': "
		 "(%" PRIu64 ", %" PRIu64 ", %" PRIu32 "), }",
		 f.h.bytes_per_pixel == 1 ? '|' : '<', c->type[0],
		 f.h.bytes_per_pixel,
		 sel_sino(c) ? (uint64_t)c->nr : c->nv,
		 sel_sino(c) ? c->nv : (uint64_t)c->nr, c->nc);
	ck_assert_msg(memcmp(got + 10, head, strlen(head)) == 0, "%.*s",
		      (int)hlen - 10, got + 10);
	ck_assert_int_eq(file_size(P("s.npy")), (off_t)(hlen + len));
	ck_assert(memcmp(got + hlen, want, len) == 0);
	free(got);
	free(want);
	free(f.data);
}
END_TEST

/* The sel_cases in the view layout, the only ones a raw stream can
 * hold (filled by the suite). */
static int raw_cases[TU_COUNT(sel_cases)];
static int n_raw_cases;

/* .raw: a stream parload reads back, holding the selected views with
 * their headers (view_index renumbered, CRCs computed anew). */
START_TEST(test_extract_raw)
{
	const sel_case *c = &sel_cases[raw_cases[_i]];
	unsigned char *want;
	rawfile f, g;
	size_t len;
	result r;

	/* Generated for view-layout cases only (raw_cases): a raw stream
	 * holds views (test_extract_usage). */
	ck_assert(!sel_sino(c));
	sel_gen(c, "a.raw", true);
	raw_read(P("a.raw"), &f);
	want = sel_expect(&f, c, &len);
	/* A payload's CRC covers whole views: a cut of their rows or
	 * columns cannot be verified, and says so. */
	EXTRACT(&r, c, "--verify", "-o", P("s.raw"), P("a.raw"));
	if (c->nr < 8 || c->nc < 16) {
		ck_assert_int_eq(r.status, 1);
		ck_assert_msg(strstr(r.err, "verif"), "%s", r.err);
		ck_assert_int_ne(access(P("s.raw"), F_OK), 0);
		result_free(&r);
		EXTRACT(&r, c, "-o", P("s.raw"), P("a.raw"));
	}
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	RUN(&r, "--verify", "--json", P("s.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(json_u64(r.out, "views"), c->nv);
	ck_assert_int_eq(json_u64(r.out, "width"), c->nc);
	ck_assert_int_eq(json_u64(r.out, "height"), c->nr);
	ck_assert_int_eq(json_u64(r.out, "crc_checked"), c->nv);
	result_free(&r);
	raw_read(P("s.raw"), &g);
	ck_assert_int_eq(g.h.pixel_type, f.h.pixel_type);
	for (uint64_t k = 0; k < c->nv; k++) {
		parload_view_header in, out;

		memcpy(&in, raw_view(&f, c->v0 + k * c->vstep), 32);
		memcpy(&out, raw_view(&g, k), 32);
		ck_assert_int_eq(out.view_index, k);
		ck_assert_int_eq(out.timestamp_ns, in.timestamp_ns);
		ck_assert(out.angle_deg == in.angle_deg);
		ck_assert(memcmp(raw_view(&g, k) + 32,
				 want + k * (len / c->nv), len / c->nv) == 0);
	}
	free(want);
	free(f.data);
	free(g.data);
}
END_TEST

/* An existing OUT is kept unless --force; --force replaces a file only. */
START_TEST(test_extract_force)
{
	const char junk[] = "keep me";
	result r;

	GEN("a.raw");
	ck_assert_int_eq(mkdir(P("out"), 0700), 0);
	close(open(P("out/s.bin"), O_WRONLY | O_CREAT, 0600));
	patch(P("out/s.bin"), 0, junk, sizeof(junk));
	RUN(&r, "extract", "-o", P("out/s.bin"), P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "--force"), "%s", r.err);
	assert_file_eq(P("out/s.bin"), junk, sizeof(junk));
	result_free(&r);
	RUN(&r, "extract", "--force", "-o", P("out/s.bin"), P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(file_size(P("out/s.bin")), 10 * 256);
	result_free(&r);
	RUN(&r, "extract", "--force", "--format", "bin", "-o", P("out"),
	    P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	result_free(&r);
	/* Only the output: no temporary file left beside it. */
	ck_assert_int_eq(unlink(P("out/s.bin")), 0);
	ck_assert_msg(dir_is_empty(P("out")), "temporary file left behind");
}
END_TEST

/* Each of extract's usage errors; none writes anything.  A is the input,
 * O.ext an output. */
static const struct {
	const char *args[6];
	const char *message;
} extract_errors[] = {
	{ { "A" }, "extract: no output file (-o OUT)" },
	{ { "-o", "O.npy" }, "extract: missing input file" },
	{ { "-o", "O.npy", "A", "A" }, "extract: one input file only" },
	{ { "-o", "O.txt", "A" }, "cannot tell the format of" },
	{ { "-o", "-", "A" }, "-o - needs --format" },
	{ { "--format", "raw", "-o", "-", "A" }, "not to standard output" },
	{ { "--layout", "sinograms", "-o", "O.raw", "A" }, "holds views" },
	{ { "--format", "jpeg", "-o", "O.npy", "A" }, "unknown format 'jpeg'" },
	{ { "--bogus", "-o", "O.npy", "A" }, "unknown option '--bogus'" },
};

START_TEST(test_extract_usage)
{
	const char *args[8] = { "extract" };
	int n = 1;
	result r;

	GEN("a.raw");
	ck_assert_int_eq(mkdir(P("out"), 0700), 0);
	for (int i = 0; i < 6 && extract_errors[_i].args[i]; i++) {
		const char *a = extract_errors[_i].args[i];
		char name[64];

		/* A: the input; O.ext: an output in out/. */
		snprintf(name, sizeof(name), "out/%s", a);
		args[n++] = strcmp(a, "A") == 0 ? P("a.raw") :
			    a[0] == 'O' ? P(name) : a;
	}
	args[n] = NULL;
	run_args(&r, args);
	ck_assert_msg(r.status == 2, "%s: %d", extract_errors[_i].message,
		      r.status);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, extract_errors[_i].message), "%s", r.err);
	ck_assert(dir_is_empty(P("out")));
	result_free(&r);
}
END_TEST


/* ---------------------------------------------------------------------
 * Raw layouts: the pixels a layout reads, against the test's own reading
 * of the bytes
 * ------------------------------------------------------------------- */

/* The payloads of GEN's stream in file name: 10 x 256 bytes, as written. */
static unsigned char *gen_payloads(const char *name)
{
	unsigned char *p = malloc(10 * 256);
	rawfile f;

	ck_assert(p != NULL);
	raw_read(P(name), &f);
	for (uint64_t v = 0; v < 10; v++)
		memcpy(p + v * 256, raw_view(&f, v) + 32, 256);
	free(f.data);
	return p;
}

/* Big-endian u16: each pair of bytes swapped. */
START_TEST(test_raw_big_endian)
{
	unsigned char *want;
	result r;

	GEN("a.raw", "--seed", "4");
	want = gen_payloads("a.raw");
	for (size_t i = 0; i < 10 * 256; i += 2) {
		unsigned char t = want[i];

		want[i] = want[i + 1];
		want[i + 1] = t;
	}
	RUN(&r, "extract", "--raw", "width=16,height=8,type=u16be,offset=64,"
	    "header=32", "-o", P("x.bin"), P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	assert_file_eq(P("x.bin"), want, 10 * 256);
	result_free(&r);
	free(want);
}
END_TEST

/* mono12p from the formula: b0 b1 b2 -> p0 = b0 | (b1 & 0xF) << 8,
 * p1 = b1 >> 4 | b2 << 4; 192 bytes a view are 128 pixels. */
START_TEST(test_raw_mono12p)
{
	uint16_t want[10 * 128];
	unsigned char *in;
	rawfile f;
	result r;

	GEN("m.raw", "--width", "12", "--seed", "6");
	raw_read(P("m.raw"), &f);
	for (uint64_t v = 0; v < 10; v++) {
		in = (unsigned char *)raw_view(&f, v) + 32;
		for (int g = 0; g < 64; g++, in += 3) {
			want[v * 128 + 2 * g] = (uint16_t)(in[0] |
							   (in[1] & 0xF) << 8);
			want[v * 128 + 2 * g + 1] = (uint16_t)(in[1] >> 4 |
							       in[2] << 4);
		}
	}
	RUN(&r, "extract", "--raw", "width=16,height=8,type=mono12p,offset=64,"
	    "header=32", "-o", P("x.bin"), P("m.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	assert_file_eq(P("x.bin"), want, sizeof(want));
	result_free(&r);
	free(f.data);
}
END_TEST

/* --concat over 3 files: the views of each, in the order given. */
START_TEST(test_raw_concat)
{
	const char *names[3] = { "c.raw", "a.raw", "b.raw" };
	unsigned char want[3 * 10 * 256];
	result r;

	GEN("a.raw", "--seed", "1");
	GEN("b.raw", "--seed", "2");
	GEN("c.raw", "--seed", "3");
	for (int i = 0; i < 3; i++) {
		unsigned char *p = gen_payloads(names[i]);

		memcpy(want + i * 2560, p, 2560);
		free(p);
	}
	RUN(&r, "extract", "--raw", RAW16, "--concat", "-o", P("x.bin"),
	    P("c.raw"), P("a.raw"), P("b.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	assert_file_eq(P("x.bin"), want, sizeof(want));
	result_free(&r);
}
END_TEST

/* A raw file written here (100 bytes of file header, 3 views of 4 x 2
 * u16), its .nhdr written by parload nhdr, loaded back: the same bytes;
 * and the SPEC read from a file (@PATH, with newlines and a comment). */
START_TEST(test_nhdr_round_trip)
{
	static const char spec[] = "width=4,height=2 # a comment\n"
				   "type=u16\noffset=100\n";
	unsigned char data[100 + 3 * 16];
	char at[1300];
	result r;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 1);
	tu_write_file(P("d.dat"), data, sizeof(data));
	tu_write_file(P("spec.txt"), spec, strlen(spec));
	snprintf(at, sizeof(at), "@%s", P("spec.txt"));
	RUN(&r, "nhdr", "--raw", at, "-o", P("d.nhdr"), P("d.dat"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "");
	result_free(&r);
	RUN(&r, "extract", "-o", P("x.bin"), P("d.nhdr"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	assert_file_eq(P("x.bin"), data + 100, 3 * 16);
	result_free(&r);
	RUN(&r, "info", P("d.nhdr"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(field(r.out, "views"), "3");
	ck_assert_str_eq(field(r.out, "offset"), "100");
	result_free(&r);
	/* Once written, it is not replaced without --force. */
	RUN(&r, "nhdr", "--raw", at, "-o", P("d.nhdr"), P("d.dat"));
	ck_assert_int_eq(r.status, 1);
	result_free(&r);
	RUN(&r, "nhdr", "--force", "--raw", at, "-o", P("d.nhdr"), P("d.dat"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
}
END_TEST

/* --confine: a .nhdr's data file outside the header's directory is
 * refused by every subcommand that reads the source (the load, its
 * references, info, extract), naming the header, its line and the file;
 * without it the file is read, as NRRD allows. */
START_TEST(test_confine)
{
	static const char head[] = "NRRD0004\ntype: uint8\ndimension: 3\n"
				   "sizes: 2 2 2\nencoding: raw\n";
	unsigned char data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char text[256];
	result r;

	ck_assert_int_eq(mkdir(P("sub"), 0755), 0);
	tu_write_file(P("d.dat"), data, sizeof(data));
	tu_write_file(P("sub/in.dat"), data, sizeof(data));
	snprintf(text, sizeof(text), "%sdata file: ../d.dat\n", head);
	tu_write_file(P("sub/out.nhdr"), text, strlen(text));
	snprintf(text, sizeof(text), "%sdata file: in.dat\n", head);
	tu_write_file(P("sub/in.nhdr"), text, strlen(text));

	RUN(&r, P("sub/out.nhdr"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	RUN(&r, "--confine", P("sub/in.nhdr"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	RUN(&r, "info", "--confine", P("sub/in.nhdr"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	{
		const char *const runs[][8] = {
			{ "--confine", P("sub/out.nhdr") },
			{ "info", "--confine", P("sub/out.nhdr") },
			{ "extract", "--confine", "-o", P("x.bin"),
			  P("sub/out.nhdr") },
			{ "--confine", "--flats", P("sub/out.nhdr"),
			  P("sub/in.nhdr") },
		};

		for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
			run_args(&r, runs[i]);
			ck_assert_msg(r.status == 1, "%s: %d: %s", runs[i][0],
				      r.status, r.err);
			ck_assert_msg(strstr(r.err, "sub/out.nhdr: line 6: "
						    "data file '"),
				      "%s", r.err);
			ck_assert_msg(strstr(r.err, "/sub/../d.dat': the file "
						    "is '"),
				      "%s", r.err);
			ck_assert_msg(strstr(r.err, "outside"), "%s", r.err);
			result_free(&r);
		}
	}
	ck_assert_int_ne(access(P("x.bin"), F_OK), 0);
	RUN(&r, "nhdr", "--confine", "--raw", "width=2,height=2,type=u8",
	    "-o", P("n.nhdr"), P("d.dat"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--confine"), "%s", r.err);
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Suite
 * ------------------------------------------------------------------- */

/* A test case of s with the scratch fixture. */
static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tu_tcase(s, name, TCASE_TIMEOUT);

	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = tcase(s, "table");
	tcase_add_loop_test(tc, test_case, 0, TU_COUNT(cases));

	tc = tcase(s, "usage");
	tcase_add_loop_test(tc, test_help_mentions, 0, TU_COUNT(documented));
	tcase_add_test(tc, test_help_forms_agree);
	tcase_add_loop_test(tc, test_usage_error, 0, TU_COUNT(usage_errors));
	tcase_add_test(tc, test_subcommand_help);
	tcase_add_test(tc, test_list_strategies);

	tc = tcase(s, "load");
	tcase_add_loop_test(tc, test_strategy, 0, 2 * TU_COUNT(strategies));
	tcase_add_loop_test(tc, test_buffer_sizes, 0, TU_COUNT(good_sizes));
	tcase_add_test(tc, test_max_read);
	tcase_add_test(tc, test_map_sinograms);
	tcase_add_test(tc, test_follow_grows);
	tcase_add_test(tc, test_stream_fifo);
	tcase_add_test(tc, test_fifo_no_writer);
	tcase_add_test(tc, test_concat_open_files_limit);

	tc = tcase(s, "gen");
	tcase_add_loop_test(tc, test_gen_type, 0, TU_COUNT(types));
	tcase_add_test(tc, test_gen_deterministic);
	tcase_add_loop_test(tc, test_gen_usage_error, 0, TU_COUNT(gen_errors));

	tc = tcase(s, "select");
	tcase_add_loop_test(tc, test_select_bin, 0, TU_COUNT(sel_cases));
	tcase_add_loop_test(tc, test_select_verify_seed, 0,
			    TU_COUNT(sel_cases));
	tcase_add_loop_test(tc, test_select_json, 0, TU_COUNT(sel_cases));
	tcase_add_loop_test(tc, test_select_usage, 0, TU_COUNT(sel_errors));

	tc = tcase(s, "extract");
	tcase_add_loop_test(tc, test_extract_npy, 0, TU_COUNT(sel_cases));
	for (int i = 0; i < TU_COUNT(sel_cases); i++)
		if (!sel_sino(&sel_cases[i]))
			raw_cases[n_raw_cases++] = i;
	tcase_add_loop_test(tc, test_extract_raw, 0, n_raw_cases);
	tcase_add_test(tc, test_extract_force);
	tcase_add_loop_test(tc, test_extract_usage, 0,
			    TU_COUNT(extract_errors));

	tc = tcase(s, "layouts");
	tcase_add_test(tc, test_raw_big_endian);
	tcase_add_test(tc, test_raw_mono12p);
	tcase_add_test(tc, test_raw_concat);
	tcase_add_test(tc, test_nhdr_round_trip);
	tcase_add_test(tc, test_confine);
	return s;
}

int main(void)
{
	bin = tu_parload_bin();
	return bin ? tu_run(cli_suite()) :
		     tu_skip("check_cli", "PARLOAD_BIN is not set");
}
