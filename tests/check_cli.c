/*
 * check_cli.c - the parload command, run as a user runs it: exit statuses,
 * messages, output formats, gen, info and the embedded default.
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
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "parload.h"

extern char **environ;

static const char *bin;
static char scratch[1024]; /* this test's directory */
static char tmpdir[1100];  /* the command's $TMPDIR */

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
 * Running the command
 * ------------------------------------------------------------------- */

typedef struct result {
	int status; /* exit status, or 128 + signal */
	char *out;
	char *err;
} result;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert(buf != NULL);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Start the command with args (NULL-terminated), its stdout and stderr
 * going to files in the scratch directory, its stdin /dev/null. */
static pid_t start(const char *const *args)
{
	const char *argv[64];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int n = 0, rc;

	argv[n++] = bin;
	for (; *args; args++) {
		ck_assert(n < 63);
		argv[n++] = *args;
	}
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, P(".stdout"),
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, P(".stderr"),
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_msg(rc == 0, "posix_spawn %s: %s", bin, strerror(rc));
	return pid;
}

static void finish(pid_t pid, result *r)
{
	int ws;

	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r->out = slurp(P(".stdout"));
	r->err = slurp(P(".stderr"));
}

static void run_args(result *r, const char *const *args)
{
	finish(start(args), r);
}

#define RUN(r, ...) run_args((r), (const char *const[]){ __VA_ARGS__, NULL })

static void result_free(result *r)
{
	free(r->out);
	free(r->err);
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

	ck_assert(d != NULL);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static void patch(const char *path, off_t offset, const void *data,
		  size_t len)
{
	int fd = open(path, O_WRONLY);

	ck_assert(fd >= 0);
	ck_assert_int_eq(pwrite(fd, data, len, offset), (ssize_t)len);
	close(fd);
}

/* Every line parses as JSON, when python3 is there to say so. */
static void assert_json_lines(const char *text)
{
	const char *py = getenv("PYTHON3");
	char cmd[2048];
	FILE *f;

	if (!py || !*py)
		return;
	f = fopen(P(".json"), "w");
	ck_assert(f != NULL);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "'%s' -c 'import json,sys\n"
		 "for l in open(sys.argv[1], encoding=\"utf-8\"): json.loads(l)"
		 "' '%s'", py, P(".json"));
	ck_assert_msg(system(cmd) == 0, "not JSON lines: %s", text);
}

/* ---------------------------------------------------------------------
 * Usage
 * ------------------------------------------------------------------- */

static const char *const documented[] = {
	"--threads", "--strategy", "--io", "--buffer", "--max-read",
	"--no-bind", "--no-hugepages", "--preallocate", "--verify-seed",
	"--verify", "--keep-going", "--allow-truncated", "<stdin>",
	"--json", "--quiet",
	"--help", "--version", "gen", "info", "--views", "--width", "--height",
	"--type", "--crc", "--seed", "Exit status",
};

START_TEST(test_help)
{
	result r;

	RUN(&r, "--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert(starts_with(r.out, "Usage: parload"));
	for (size_t i = 0; i < sizeof(documented) / sizeof(*documented); i++)
		ck_assert_msg(strstr(r.out, documented[i]),
			      "--help does not mention %s", documented[i]);
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

START_TEST(test_help_wins_over_files)
{
	result r;

	RUN(&r, P("absent.raw"), "--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	result_free(&r);
}
END_TEST

START_TEST(test_version)
{
	const char *forms[] = { "--version", "-V" };

	for (int i = 0; i < 2; i++) {
		result r;

		RUN(&r, forms[i]);
		ck_assert_int_eq(r.status, 0);
		ck_assert(starts_with(r.out, "parload "));
		ck_assert(r.out[8] >= '0' && r.out[8] <= '9');
		ck_assert_int_eq(count_lines(r.out), 1);
		ck_assert_str_eq(r.err, "");
		result_free(&r);
	}
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
	{ { "--strategy", "x" }, "parload: unknown strategy 'x'\n" },
	{ { "--strategy", "" }, "parload: unknown strategy ''\n" },
	{ { "--io", "mmap" }, "parload: unknown I/O API 'mmap'\n" },
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

/* ---------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------- */

START_TEST(test_gen_then_load)
{
	char prefix[1300];
	result r;

	RUN(&r, "gen", "--views", "10", "--width", "16", "--height", "8",
	    P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	result_free(&r);

	RUN(&r, P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	/* 64 + 10 * (32 + 16 * 8 * 2) = 2944 bytes */
	snprintf(prefix, sizeof(prefix), "%s: 10 views 16x8 u16, 2.9 kB in ",
		 P("a.raw"));
	ck_assert_msg(starts_with(r.out, prefix), "%s", r.out);
	ck_assert(strstr(r.out, " s, "));
	ck_assert(strstr(r.out, " GB/s, "));
	ck_assert(strstr(r.out, "(parallel)\n"));
	ck_assert_int_eq(count_lines(r.out), 1);
	result_free(&r);
}
END_TEST

START_TEST(test_threads_reported)
{
	result r;

	GEN("a.raw");
	RUN(&r, "-t", "1", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, ", 1 thread (parallel)\n"), "%s", r.out);
	result_free(&r);
	RUN(&r, "--threads", "3", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, ", 3 threads (parallel)\n"), "%s", r.out);
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

/* Large sizes parse (the parallel strategy does not allocate a buffer). */
START_TEST(test_large_sizes_parse)
{
	result r;

	GEN("a.raw");
	RUN(&r, "--buffer", "1G", "--max-read", "1GiB", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	RUN(&r, "--buffer", "2T", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
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

START_TEST(test_no_bind_no_hugepages)
{
	result r;

	GEN("a.raw");
	RUN(&r, "--no-bind", "--no-hugepages", "--verify-seed", "1",
	    P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
}
END_TEST

/* --preallocate loads into the command's own touched buffers: same data,
 * every strategy, huge pages or not, and an empty stream. */
START_TEST(test_preallocate)
{
	static const char *const strategies_here[] = { "parallel", "sequential",
						       "mmap" };
	result r;

	GEN("a.raw", "--views", "9", "--width", "33", "--height", "3",
	    "--seed", "5");
	for (size_t i = 0; i < 3; i++) {
		RUN(&r, "--preallocate", "--strategy", strategies_here[i],
		    "--threads", "2", "--verify-seed", "5", P("a.raw"));
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_ptr_nonnull(strstr(r.out, "9 views 33x3"));
		result_free(&r);
	}
	RUN(&r, "--preallocate", "--verify-seed", "6", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	result_free(&r);
	/* Pixels of a few MB take the huge-page layout, with and without
	 * the advice. */
	GEN("big.raw", "--views", "3", "--width", "1024", "--height", "700",
	    "--seed", "7");
	RUN(&r, "--preallocate", "--verify-seed", "7", P("big.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	RUN(&r, "--preallocate", "--no-hugepages", "--verify-seed", "7",
	    P("big.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
	GEN("e.raw", "--views", "0");
	RUN(&r, "--preallocate", P("e.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	result_free(&r);
}
END_TEST

START_TEST(test_json)
{
	static const char *const keys[] = {
		"\"views\":10,", "\"width\":16,", "\"height\":8,",
		"\"pixel_type\":\"u16\"", "\"bytes_per_pixel\":2,",
		"\"bytes\":2944,", "\"bytes_read\":", "\"read_calls\":",
		"\"seconds\":", "\"gbps\":", "\"threads\":2,",
		"\"strategy\":\"parallel\"", "\"io\":\"posix\"",
		"\"crc32c\":false", "\"verified\":true",
	};
	char file[1300];
	result r;
	char *second;

	GEN("a.raw");
	GEN("b.raw");
	RUN(&r, "--json", "-t", "2", "--verify-seed", "1", P("a.raw"),
	    P("b.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_int_eq(count_lines(r.out), 2);
	snprintf(file, sizeof(file), "{\"file\":\"%s\",", P("a.raw"));
	ck_assert_msg(starts_with(r.out, file), "%s", r.out);
	second = strchr(r.out, '\n') + 1;
	snprintf(file, sizeof(file), "{\"file\":\"%s\",", P("b.raw"));
	ck_assert_msg(starts_with(second, file), "%s", second);
	ck_assert(second[-2] == '}');
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		ck_assert_msg(strstr(second, keys[i]), "no %s in %s", keys[i],
			      second);
	assert_json_lines(r.out);
	result_free(&r);
}
END_TEST

START_TEST(test_json_not_verified)
{
	result r;

	GEN("a.raw");
	RUN(&r, "--json", "--strategy", "two-pass", "--io", "stdio",
	    P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "\"verified\":false"));
	ck_assert(strstr(r.out, "\"strategy\":\"two-pass\""));
	ck_assert(strstr(r.out, "\"io\":\"stdio\""));
	ck_assert(strstr(r.out, "\"threads\":1,"));
	result_free(&r);
}
END_TEST

/* Quotes, backslashes, control characters and bytes that are not UTF-8 in
 * a file name still make a JSON line. */
START_TEST(test_json_escapes)
{
	const char *name = "q\"b\\s\x01\xff\xc3\xa9.raw";
	char want[1400];
	result r;

	GEN(name);
	RUN(&r, "--json", P(name));
	ck_assert_int_eq(r.status, 0);
	snprintf(want, sizeof(want),
		 "{\"file\":\"%s/q\\\"b\\\\s\\u0001\\ufffd\xc3\xa9.raw\",",
		 scratch);
	ck_assert_msg(starts_with(r.out, want), "want %s got %s", want, r.out);
	assert_json_lines(r.out);
	result_free(&r);
}
END_TEST

START_TEST(test_quiet)
{
	result r;

	GEN("a.raw");
	RUN(&r, "-q", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	result_free(&r);
	RUN(&r, "--quiet", "--json", P("a.raw"), P("absent.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert(strstr(r.err, P("absent.raw")));
	result_free(&r);
}
END_TEST

START_TEST(test_verify_seed)
{
	result r;

	GEN("a.raw", "--seed", "7");
	RUN(&r, "--verify-seed", "7", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	result_free(&r);
}
END_TEST

START_TEST(test_verify_seed_wrong)
{
	char want[1300];
	result r;

	GEN("a.raw", "--seed", "7");
	RUN(&r, "--verify-seed", "8", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	snprintf(want, sizeof(want), "parload: %s: view 0: ", P("a.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

/* A payload byte changed behind the loader's back: verification names the
 * view. */
START_TEST(test_verify_names_view)
{
	char want[1300];
	result r;

	GEN("a.raw");
	/* view 3's payload: 64 + 3 * 288 + 32 */
	patch(P("a.raw"), 64 + 3 * 288 + 32 + 5, "\x5a\xa5", 2);
	RUN(&r, "--verify-seed", "1", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "parload: %s: view 3: payload ",
		 P("a.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

START_TEST(test_empty_and_single)
{
	result r;

	GEN("empty.raw", "--views", "0");
	GEN("one.raw", "--views", "1", "--width", "1", "--height", "1",
	    "--type", "u8");
	RUN(&r, "--verify-seed", "1", P("empty.raw"), P("one.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, ": 0 views 16x8 u16, 64 B in "), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, ": 1 view 1x1 u8, 97 B in "), "%s", r.out);
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Failures
 * ------------------------------------------------------------------- */

START_TEST(test_missing_file)
{
	char want[1300];
	result r;

	RUN(&r, P("absent.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	snprintf(want, sizeof(want), "parload: %s: ", P("absent.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	result_free(&r);
}
END_TEST

START_TEST(test_bad_magic)
{
	char want[1300];
	result r;

	GEN("a.raw");
	patch(P("a.raw"), 1, "X", 1);
	RUN(&r, P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	snprintf(want, sizeof(want), "parload: %s: ", P("a.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	ck_assert_msg(strstr(r.err, "magic"), "%s", r.err);
	result_free(&r);
}
END_TEST

START_TEST(test_truncated)
{
	char want[1300];
	result r;

	GEN("a.raw");
	ck_assert_int_eq(truncate(P("a.raw"), 2944 - 100), 0);
	RUN(&r, P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "parload: %s: ", P("a.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

/* --follow: a file that grows while it is loaded loads whole (checked
 * against the generator); one that stops growing fails after --timeout,
 * or loads its complete views with --allow-truncated; --follow needs the
 * parallel strategy; a bad --timeout is a usage error. */
START_TEST(test_follow)
{
	const off_t part = 64 + 4 * (32 + 256);
	char *whole;
	result r;
	pid_t pid;
	int fd;

	GEN("full.raw");
	whole = slurp(P("full.raw"));
	fd = open(P("grow.raw"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(write(fd, whole, (size_t)part), part);
	pid = start((const char *const[]){ "--follow", "--timeout", "5",
					   "--verify-seed", "1",
					   P("grow.raw"), NULL });
	usleep(300 * 1000);
	ck_assert_int_eq(write(fd, whole + part, 2944 - (size_t)part),
			 2944 - part);
	close(fd);
	finish(pid, &r);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "10 views"), "%s", r.out);
	result_free(&r);

	ck_assert_int_eq(truncate(P("grow.raw"), part), 0);
	RUN(&r, "--follow", "--timeout", "0.2", P("grow.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "4 of the 10"), "%s", r.err);
	result_free(&r);
	RUN(&r, "--follow", "--timeout", "0.2", "--allow-truncated",
	    P("grow.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "4 of 10"), "%s", r.out);
	result_free(&r);
	RUN(&r, "--follow", "--strategy", "bulk", P("full.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "--follow"), "%s", r.err);
	result_free(&r);
	RUN(&r, "--follow", "--timeout", "0", P("full.raw"));
	ck_assert_int_eq(r.status, 2);
	result_free(&r);
	free(whole);
}
END_TEST

/* A failed file does not stop the others, and costs exit status 1. */
START_TEST(test_good_and_bad)
{
	char want[1300];
	result r;

	GEN("good.raw");
	RUN(&r, P("bad.raw"), P("good.raw"));
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "%s: 10 views 16x8 u16, ", P("good.raw"));
	ck_assert_msg(starts_with(r.out, want), "%s", r.out);
	ck_assert_int_eq(count_lines(r.out), 1);
	snprintf(want, sizeof(want), "parload: %s: ", P("bad.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

/* '-' is standard input (here /dev/null, an empty stream); a file named
 * '-' is loaded when written with a directory. */
START_TEST(test_dash_is_stdin)
{
	char want[1300];
	result r;

	RUN(&r, "-");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(starts_with(r.err, "parload: <stdin>: stream is empty"),
		      "%s", r.err);
	result_free(&r);
	GEN("-");
	RUN(&r, P("-"));
	ck_assert_int_eq(r.status, 0);
	snprintf(want, sizeof(want), "%s: 10 views", P("-"));
	ck_assert_msg(starts_with(r.out, want), "%s", r.out);
	result_free(&r);
}
END_TEST

START_TEST(test_directory)
{
	char want[1300];
	result r;

	RUN(&r, scratch);
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "parload: %s: ", scratch);
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
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

START_TEST(test_gen_crc)
{
	result r;

	GEN("a.raw", "--crc");
	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(field(r.out, "flags"), "0x1 (crc32c)");
	result_free(&r);
	RUN(&r, "--json", "--verify-seed", "1", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "\"crc32c\":true"));
	result_free(&r);
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
	{ { "--type", "u64" }, "parload: unknown pixel type 'u64'\n" },
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

START_TEST(test_gen_needs_one_output)
{
	result r;

	RUN(&r, "gen");
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err, "parload: gen: missing output file\n"));
	result_free(&r);
	RUN(&r, "gen", P("a.raw"), P("b.raw"));
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err, "one output file only"));
	ck_assert_int_ne(access(P("a.raw"), F_OK), 0);
	result_free(&r);
	RUN(&r, "gen", "--views");
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err,
			 "parload: option '--views' requires an argument\n"));
	result_free(&r);
}
END_TEST

START_TEST(test_gen_cannot_write)
{
	char want[1300];
	result r;

	RUN(&r, "gen", "--views", "1", P("no/such/dir.raw"));
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "parload: %s: ", P("no/such/dir.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

/* A write that fails half way (no space left) fails the command. */
START_TEST(test_gen_disk_full)
{
	result r;

	if (access("/dev/full", W_OK) != 0)
		return;
	RUN(&r, "gen", "--views", "100", "/dev/full");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(starts_with(r.err, "parload: /dev/full: "), "%s", r.err);
	result_free(&r);
}
END_TEST

/* gen's defaults are the article's reference stream: 2000 views of 896 x 64
 * u16, seed 1, no CRCs.  Checked one override at a time to keep the files
 * small. */
START_TEST(test_gen_defaults)
{
	result r;

	RUN(&r, "gen", "--views", "2", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	result_free(&r);
	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(field(r.out, "width"), "896");
	ck_assert_str_eq(field(r.out, "height"), "64");
	ck_assert_str_eq(field(r.out, "pixel_type"), "u16 (2)");
	ck_assert_str_eq(field(r.out, "flags"), "0x0");
	result_free(&r);
	RUN(&r, "-q", "--verify-seed", "1", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	result_free(&r);

	RUN(&r, "gen", "--width", "1", "--height", "1", P("b.raw"));
	ck_assert_int_eq(r.status, 0);
	result_free(&r);
	RUN(&r, "info", P("b.raw"));
	ck_assert_str_eq(field(r.out, "view_count"), "2000");
	/* 64 + 2000 * (32 + 2) */
	ck_assert_str_eq(field(r.out, "file_size"), "68064");
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * info
 * ------------------------------------------------------------------- */

START_TEST(test_info_valid)
{
	result r;

	GEN("a.raw");
	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_str_eq(field(r.out, "file"), P("a.raw"));
	ck_assert_str_eq(field(r.out, "magic"), "ok");
	ck_assert_str_eq(field(r.out, "version"), "1.0");
	ck_assert_str_eq(field(r.out, "file_header_size"), "64");
	ck_assert_str_eq(field(r.out, "view_header_size"), "32");
	ck_assert_str_eq(field(r.out, "view_count"), "10");
	ck_assert_str_eq(field(r.out, "width"), "16");
	ck_assert_str_eq(field(r.out, "height"), "8");
	ck_assert_str_eq(field(r.out, "pixel_type"), "u16 (2)");
	ck_assert_str_eq(field(r.out, "bytes_per_pixel"), "2");
	ck_assert_str_eq(field(r.out, "flags"), "0x0");
	ck_assert_str_eq(field(r.out, "payload_size"), "256");
	ck_assert_str_eq(field(r.out, "expected_size"), "2944");
	ck_assert_str_eq(field(r.out, "file_size"), "2944");
	ck_assert_str_eq(field(r.out, "valid"), "yes");
	result_free(&r);
}
END_TEST

/* A file cut short still shows its header, and says it is not valid. */
START_TEST(test_info_truncated)
{
	char want[1300];
	result r;

	GEN("a.raw");
	ck_assert_int_eq(truncate(P("a.raw"), 1000), 0);
	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(field(r.out, "view_count"), "10");
	ck_assert_str_eq(field(r.out, "file_size"), "1000");
	ck_assert_str_eq(field(r.out, "valid"), "no");
	snprintf(want, sizeof(want), "parload: %s: ", P("a.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	result_free(&r);
}
END_TEST

START_TEST(test_info_bad_magic)
{
	result r;

	GEN("a.raw");
	patch(P("a.raw"), 0, "GIF8", 4);
	RUN(&r, "info", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_null(field(r.out, "view_count"));
	ck_assert_str_eq(field(r.out, "valid"), "no");
	ck_assert(strstr(r.err, "magic"));
	result_free(&r);
}
END_TEST

START_TEST(test_info_json)
{
	result r;

	GEN("a.raw", "--crc");
	GEN("b.raw");
	ck_assert_int_eq(truncate(P("b.raw"), 2000), 0);
	RUN(&r, "info", "--json", P("a.raw"), P("b.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_int_eq(count_lines(r.out), 2);
	ck_assert(strstr(r.out, "\"valid\":true,\"version_major\":1,"));
	ck_assert(strstr(r.out, "\"view_count\":10,"));
	ck_assert(strstr(r.out, "\"pixel_type\":\"u16\""));
	ck_assert(strstr(r.out, "\"crc32c\":true"));
	ck_assert(strstr(r.out, "\"expected_size\":2944,\"file_size\":2944}"));
	ck_assert(strstr(r.out, "\"valid\":false,"));
	ck_assert(strstr(r.out, "\"file_size\":2000,\"error\":\""));
	assert_json_lines(r.out);
	result_free(&r);
}
END_TEST

START_TEST(test_info_usage)
{
	result r;

	RUN(&r, "info");
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err, "parload: info: missing file\n"));
	result_free(&r);
	RUN(&r, "info", "--bogus", P("a.raw"));
	ck_assert_int_eq(r.status, 2);
	result_free(&r);
}
END_TEST

START_TEST(test_info_missing)
{
	result r;

	GEN("a.raw");
	RUN(&r, "info", P("absent.raw"), P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert(strstr(r.err, P("absent.raw")));
	ck_assert(strstr(r.out, "valid:             yes"));
	ck_assert(strstr(r.out, "valid:             no"));
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * The embedded default (writes and loads 229 MB: a few seconds)
 * ------------------------------------------------------------------- */

START_TEST(test_default)
{
	result r;

	RUN(&r, "-t", "2");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(starts_with(r.out, "reference stream: 2000 views "
					 "896x64 u16, 229.4 MB in "),
		      "%s", r.out);
	ck_assert(strstr(r.out, ", 2 threads (parallel)\n"));
	ck_assert_int_eq(count_lines(r.out), 1);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(dir_is_empty(tmpdir), "temporary file left behind");
	result_free(&r);
}
END_TEST

/* A failed verification still removes the temporary file. */
START_TEST(test_default_fails_clean)
{
	result r;

	RUN(&r, "--verify-seed", "2", "--strategy", "mmap");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, ": view 0: "), "%s", r.err);
	ck_assert_msg(dir_is_empty(tmpdir), "temporary file left behind");
	result_free(&r);
}
END_TEST

START_TEST(test_default_no_tmpdir)
{
	result r;

	ck_assert_int_eq(setenv("TMPDIR", P("absent"), 1), 0);
	RUN(&r, "--json");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, "cannot create a temporary file"), "%s",
		      r.err);
	result_free(&r);
}
END_TEST

/* Killed while it works, it still removes the temporary file. */
START_TEST(test_default_signal)
{
	struct timespec ts = { 0, 150 * 1000 * 1000 };
	const char *args[] = { NULL };
	result r;
	pid_t pid;

	pid = start(args);
	nanosleep(&ts, NULL);
	kill(pid, SIGTERM);
	finish(pid, &r);
	ck_assert_msg(r.status == 128 + SIGTERM || r.status == 0, "status %d",
		      r.status);
	ck_assert_msg(dir_is_empty(tmpdir), "temporary file left behind");
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Reliability: --verify, --keep-going, --allow-truncated, '-'
 * ------------------------------------------------------------------- */

/* GEN's default stream: 10 views of 256-byte payloads, 288-byte records. */
#define PAYLOAD_OFF(v) (64 + (v) * 288 + 32)

/* Start the command (args) with its standard input read from file, or
 * with file NULL from a pipe whose write end *wfd this process fills.
 * SIGINT and SIGPIPE are the default ones in the command, as in a shell's
 * foreground; this process ignores SIGPIPE. */
static pid_t start_stdin(const char *const *args, const char *file, int *wfd)
{
	const char *argv[64];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	int p[2] = { -1, -1 }, n = 0, rc;
	pid_t pid;

	argv[n++] = bin;
	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	if (!file) {
		ck_assert_int_eq(pipe(p), 0);
		posix_spawn_file_actions_adddup2(&fa, p[0], 0);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		posix_spawn_file_actions_addclose(&fa, p[1]);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0, file, O_RDONLY, 0);
	}
	posix_spawn_file_actions_addopen(&fa, 1, P(".stdout"),
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, P(".stderr"),
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	signal(SIGPIPE, SIG_IGN);
	rc = posix_spawn(&pid, bin, &fa, &attr, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	ck_assert_msg(rc == 0, "posix_spawn %s: %s", bin, strerror(rc));
	if (!file) {
		close(p[0]);
		*wfd = p[1];
	}
	return pid;
}

/* Write data[from, to) to fd; false once the reader is gone. */
static bool feed(int fd, const char *data, size_t from, size_t to)
{
	while (from < to) {
		ssize_t k = write(fd, data + from, to - from);

		if (k <= 0)
			return false;
		from += (size_t)k;
	}
	return true;
}

/* Run the command with its standard input read from file: redirected
 * (`parload - < FILE`), or, with through_pipe, through a pipe that this
 * process fills with the file's bytes (`cat FILE | parload -`). */
static void run_stdin(result *r, const char *file, bool through_pipe,
		      const char *const *args)
{
	int fd = -1;
	pid_t pid = start_stdin(args, through_pipe ? NULL : file, &fd);

	if (through_pipe) {
		char *data = slurp(file);
		struct stat st;

		ck_assert_int_eq(stat(file, &st), 0);
		/* It stops early when the command stops reading. */
		feed(fd, data, 0, (size_t)st.st_size);
		close(fd);
		free(data);
	}
	finish(pid, r);
}

#define RUN_STDIN(r, file, through_pipe, ...)                              \
	run_stdin((r), (file), (through_pipe),                             \
		  (const char *const[]){ __VA_ARGS__, NULL })

START_TEST(test_verify_crc)
{
	result r;

	GEN("c.raw", "--crc");
	RUN(&r, "--verify", P("c.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(strstr(r.out, "(parallel), CRC-32C verified\n"), "%s",
		      r.out);
	result_free(&r);
	RUN(&r, "--verify", "--json", P("c.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_u64(r.out, "crc_checked"), 10);
	ck_assert_uint_eq(json_u64(r.out, "bad_views"), 0);
	assert_json_lines(r.out);
	result_free(&r);
}
END_TEST

/* A file without CRCs loads, and the line says nothing was checked. */
START_TEST(test_verify_without_crcs)
{
	result r;

	GEN("n.raw");
	RUN(&r, "--verify", P("n.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, ", no CRC-32C to verify\n"), "%s", r.out);
	result_free(&r);
	RUN(&r, "--verify", "--json", P("n.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_u64(r.out, "crc_checked"), 0);
	result_free(&r);
}
END_TEST

/* Without --keep-going the first bad view fails the file. */
START_TEST(test_verify_bad_view)
{
	char want[1300];
	result r;

	GEN("c.raw", "--crc");
	patch(P("c.raw"), PAYLOAD_OFF(3) + 17, "\x01", 1);
	patch(P("c.raw"), PAYLOAD_OFF(8) + 17, "\x01", 1);
	RUN(&r, "--verify", P("c.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	snprintf(want, sizeof(want), "parload: %s: payload CRC-32C ",
		 P("c.raw"));
	ck_assert_msg(starts_with(r.err, want), "%s", r.err);
	snprintf(want, sizeof(want), "(view 3, byte offset %d)\n",
		 PAYLOAD_OFF(3));
	ck_assert_msg(strstr(r.err, want), "%s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	result_free(&r);
	/* Not asked, not checked. */
	RUN(&r, P("c.raw"));
	ck_assert_int_eq(r.status, 0);
	result_free(&r);
}
END_TEST

/* --keep-going loads the file, lists every bad view on standard error,
 * one line each, and fails. */
START_TEST(test_keep_going)
{
	/* check_reliability tries every strategy; here, the command. */
	static const char *const strategies_[] = { "parallel", "mmap" };
	char want[2600];
	result r;

	GEN("c.raw", "--crc");
	patch(P("c.raw"), PAYLOAD_OFF(2), "\x01", 1);
	patch(P("c.raw"), PAYLOAD_OFF(7) + 255, "\x01", 1);
	snprintf(want, sizeof(want),
		 "parload: %s: view 2: payload CRC-32C mismatch "
		 "(byte offset %d)\n"
		 "parload: %s: view 7: payload CRC-32C mismatch "
		 "(byte offset %d)\n",
		 P("c.raw"), PAYLOAD_OFF(2), P("c.raw"), PAYLOAD_OFF(7));
	for (size_t i = 0; i < sizeof(strategies_) / sizeof(*strategies_);
	     i++) {
		RUN(&r, "--keep-going", "--strategy", strategies_[i],
		    P("c.raw"));
		ck_assert_int_eq(r.status, 1);
		ck_assert_str_eq(r.err, want);
		ck_assert_msg(strstr(r.out, "10 views") &&
				      strstr(r.out, ", CRC-32C mismatch\n"),
			      "%s", r.out);
		result_free(&r);
	}
	RUN(&r, "--keep-going", "--json", P("c.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_uint_eq(json_u64(r.out, "bad_views"), 2);
	ck_assert_uint_eq(json_u64(r.out, "crc_checked"), 10);
	assert_json_lines(r.out);
	result_free(&r);
}
END_TEST

START_TEST(test_allow_truncated)
{
	char want[1300];
	result r;

	GEN("t.raw");
	/* Six whole views and part of the seventh. */
	ck_assert_int_eq(truncate(P("t.raw"), 64 + 6 * 288 + 100), 0);
	RUN(&r, P("t.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "holds 6 complete views"), "%s", r.err);
	result_free(&r);
	RUN(&r, "--allow-truncated", P("t.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	snprintf(want, sizeof(want),
		 "%s: 6 views 16x8 u16 (truncated: 6 of 10 views), ",
		 P("t.raw"));
	ck_assert_msg(starts_with(r.out, want), "%s", r.out);
	result_free(&r);
	RUN(&r, "--allow-truncated", "--json", "--verify-seed", "1",
	    P("t.raw"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_u64(r.out, "views"), 6);
	ck_assert_uint_eq(json_u64(r.out, "declared_views"), 10);
	ck_assert_msg(strstr(r.out, "\"truncated\":true"), "%s", r.out);
	result_free(&r);
	/* Trailing bytes are still an error. */
	GEN("t.raw");
	patch(P("t.raw"), 2944, "x", 1);
	RUN(&r, "--allow-truncated", P("t.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "after the last"), "%s", r.err);
	result_free(&r);
}
END_TEST

/* '-' reads standard input: a redirected file as files are loaded, a pipe
 * as a stream, with the same result. */
START_TEST(test_stdin)
{
	result r;

	GEN("s.raw", "--crc", "--seed", "3");
	RUN_STDIN(&r, P("s.raw"), false, "--verify", "--verify-seed", "3",
		  "-");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(starts_with(r.out, "<stdin>: 10 views 16x8 u16, "),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "CRC-32C verified"), "%s", r.out);
	result_free(&r);
	RUN_STDIN(&r, P("s.raw"), true, "--verify", "--verify-seed", "3",
		  "-");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(starts_with(r.out, "<stdin>: 10 views 16x8 u16, "),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "(sequential, stream), CRC-32C verified"),
		      "%s", r.out);
	result_free(&r);
	RUN_STDIN(&r, P("s.raw"), true, "--json", "-");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "\"file\":\"<stdin>\""), "%s", r.out);
	ck_assert_msg(strstr(r.out, "\"io\":\"stream\""), "%s", r.out);
	ck_assert_uint_eq(json_u64(r.out, "bytes_read"), 2944);
	result_free(&r);
}
END_TEST

START_TEST(test_stdin_errors)
{
	result r;

	GEN("s.raw");
	ck_assert_int_eq(truncate(P("s.raw"), 2944 - 10), 0);
	RUN_STDIN(&r, P("s.raw"), true, "-");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(starts_with(r.err, "parload: <stdin>: stream ended "
					 "early"),
		      "%s", r.err);
	result_free(&r);
	RUN_STDIN(&r, P("s.raw"), true, "--allow-truncated", "-");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "(truncated: 9 of 10 views)"), "%s",
		      r.out);
	result_free(&r);
	GEN("s.raw");
	patch(P("s.raw"), 2944, "xyz", 3);
	RUN_STDIN(&r, P("s.raw"), true, "-");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "stream goes on after the last"), "%s",
		      r.err);
	result_free(&r);
}
END_TEST

/* Standard input can be read once, and not ahead of its load. */
START_TEST(test_stdin_usage)
{
	result r;

	GEN("s.raw");
	RUN(&r, "-", P("s.raw"), "-");
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, "only once"), "%s", r.err);
	result_free(&r);
	RUN(&r, "--preallocate", "-");
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--preallocate"), "%s", r.err);
	result_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------
 * Subcommands: their own help, the library's strategy names
 * ------------------------------------------------------------------- */

START_TEST(test_subcommand_help)
{
	static const char *const names[] = { "gen", "info", "extract" };
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

	for (int i = 0; i < 4; i++) {
		if (!val[i])
			continue;
		args[n++] = opt[i];
		args[n++] = val[i];
	}
	return n;
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
	ck_assert(memcmp(r.out, want, len) == 0);
	assert_file_eq(P(".stdout"), want, len);
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
	assert_json_lines(r.out);
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
	assert_json_lines(info.out);
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

/* The human line says what was selected; a whole file's line is as it
 * always was. */
START_TEST(test_select_human)
{
	result r;

	GEN("a.raw");
	RUN(&r, "--views", "::4", "--cols", "2:10", "--layout", "sinograms",
	    P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, ": 3 views 8x8 u16 (views 0:9:4 of 10, "
				    "rows 0:8 of 8, cols 2:10 of 16, layout "
				    "sinograms), 480 B in "),
		      "%s", r.out);
	result_free(&r);
	RUN(&r, "info", "--rows", "1:3", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(field(r.out, "shape"),
			 "10 x 2 x 16 (views x rows x cols)");
	ck_assert_str_eq(field(r.out, "selected_bytes"), "960");
	result_free(&r);
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
	{ "--layout", "rows", "parload: invalid --layout 'rows'" },
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

/* A selection that this file cannot give fails the file (status 1),
 * naming it; the other files are still loaded. */
START_TEST(test_select_out_of_range)
{
	result r;

	GEN("a.raw");
	GEN("big.raw", "--views", "30");
	RUN(&r, "--views", "20:25", P("a.raw"), P("big.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(starts_with(r.err, "parload: ") &&
			      strstr(r.err, P("a.raw")), "%s", r.err);
	ck_assert_int_eq(count_lines(r.out), 1);
	ck_assert(strstr(r.out, P("big.raw")));
	result_free(&r);
	RUN(&r, "info", "--rows", "4:9", P("a.raw"));
	ck_assert_int_eq(r.status, 1);
	ck_assert(strstr(r.err, P("a.raw")));
	ck_assert_str_eq(field(r.out, "selection"), "invalid");
	result_free(&r);
}
END_TEST

/* NumPy's format, checked byte by byte, and by numpy itself against its
 * own reading of the stream when Debian's numpy is there. */
START_TEST(test_extract_npy)
{
	const sel_case *c = &sel_cases[_i];
	unsigned char *want, *got;
	char head[256], cmd[4096];
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
	if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0) {
		/* numpy reads the stream with a record dtype and slices it. */
		snprintf(cmd, sizeof(cmd),
			 "/usr/bin/python3 -c 'import numpy as np, sys\n"
			 "a = np.load(sys.argv[1])\n"
			 "t = np.dtype(sys.argv[3])\n"
			 "rec = np.dtype([(\"h\", \"V32\"), (\"p\", t, (8, 16))])\n"
			 "v = np.fromfile(sys.argv[2], rec, offset=64)[\"p\"]\n"
			 "v = v[%s][:, %s, %s]\n"
			 "if sys.argv[4] == \"sinograms\": v = v.transpose(1, 0, 2)\n"
			 "sys.exit(0 if a.dtype == t and np.array_equal(a, v) else 1)'"
			 " '%s' '%s' '%c%c%d' '%s'",
			 c->views ? (strchr(c->views, ':') ? c->views : "7:8") : ":",
			 c->rows ? c->rows : ":", c->cols ? c->cols : ":",
			 P("s.npy"), P("a.raw"),
			 f.h.bytes_per_pixel == 1 ? '|' : '<', c->type[0],
			 f.h.bytes_per_pixel, sel_sino(c) ? "sinograms" : "views");
		ck_assert_msg(system(cmd) == 0, "numpy disagrees: %s", cmd);
	}
	free(want);
	free(f.data);
}
END_TEST

/* .raw: a stream parload reads back, holding the selected views with
 * their headers (view_index renumbered, CRCs computed anew). */
START_TEST(test_extract_raw)
{
	const sel_case *c = &sel_cases[_i];
	unsigned char *want;
	rawfile f, g;
	size_t len;
	result r;

	if (sel_sino(c))
		return; /* a raw stream holds views (test_extract_usage) */
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

/* Run the command, which must fail (status 1) saying what is expected. */
static void run_fails(const char *expected, const char *const *args)
{
	result r;

	run_args(&r, args);
	ck_assert_msg(r.status == 1, "%s: status %d", args[0], r.status);
	ck_assert_msg(strstr(r.err, expected), "want %s in %s", expected,
		      r.err);
	result_free(&r);
}

#define FAILS(expected, ...)                                               \
	run_fails((expected), (const char *const[]){ __VA_ARGS__, NULL })

/* A failed extract leaves no file, half written or temporary. */
START_TEST(test_extract_no_half_file)
{
	static const unsigned char bad = 0xff;

	GEN("short.raw");
	ck_assert_int_eq(truncate(P("short.raw"), 1000), 0);
	GEN("crc.raw", "--crc");
	patch(P("crc.raw"), PAYLOAD_OFF(7) + 3, &bad, 1);
	ck_assert_int_eq(mkdir(P("out"), 0700), 0);
	FAILS("truncated", "extract", "-o", P("out/s.npy"), P("short.raw"));
	FAILS("view 7", "extract", "--verify", "--views", "::7", "-o",
	      P("out/s.raw"), P("crc.raw"));
	FAILS("differs", "extract", "--verify-seed", "9", "-o",
	      P("out/s.bin"), P("crc.raw"));
	ck_assert_msg(dir_is_empty(P("out")), "a failed extract left a file");
	FAILS("cannot create a temporary file", "extract", "-o",
	      P("absent/s.npy"), P("crc.raw"));
}
END_TEST

/* Standard output that cannot take the array fails the command. */
START_TEST(test_extract_stdout_full)
{
	char cmd[2048];

	if (access("/dev/full", W_OK) != 0)
		return;
	GEN("a.raw");
	snprintf(cmd, sizeof(cmd),
		 "'%s' extract --format npy -o - '%s' >/dev/full 2>'%s'", bin,
		 P("a.raw"), P("err"));
	ck_assert_int_eq(system(cmd), 1 << 8);
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
	{ { "--format", "tiff", "-o", "O.npy", "A" }, "unknown format 'tiff'" },
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
 * Progress and cancelling: --progress, --no-progress, SIGINT
 * ------------------------------------------------------------------- */

/* --progress draws on standard error from the load's batches, and clears
 * its line at the end; the report is unchanged. */
START_TEST(test_progress_forced)
{
	result r;

	GEN("a.raw", "--views", "40", "--width", "512", "--height", "512");
	RUN(&r, "--progress", "-t", "2", P("a.raw"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(starts_with(r.err, "\r") && strstr(r.err, "/40 views, "),
		      "%s", r.err);
	ck_assert_msg(strstr(r.err, "40/40 views, "), "%s", r.err);
	ck_assert(strlen(r.err) >= 4);
	ck_assert_str_eq(r.err + strlen(r.err) - 4, "\r\033[K");
	ck_assert_int_eq(count_lines(r.out), 1);
	result_free(&r);
	RUN(&r, "--progress", "--no-progress", P("a.raw"));
	ck_assert_str_eq(r.err, "");
	result_free(&r);
}
END_TEST

/* On a terminal: --no-progress draws nothing, --progress draws (through
 * script(1), when it is there). */
START_TEST(test_progress_terminal)
{
	char cmd[4096], *out;

	if (system("command -v script >/dev/null 2>&1") != 0)
		return;
	GEN("a.raw", "--views", "40", "--width", "512", "--height", "512");
	snprintf(cmd, sizeof(cmd),
		 "script -qec \"'%s' --no-progress '%s'\" /dev/null >'%s' "
		 "2>&1 </dev/null", bin, P("a.raw"), P("tty"));
	ck_assert_int_eq(system(cmd), 0);
	out = slurp(P("tty"));
	ck_assert_msg(!strstr(out, "views, "), "drawn: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "script -qec \"'%s' --progress '%s'\" /dev/null >'%s' "
		 "2>&1 </dev/null", bin, P("a.raw"), P("tty"));
	ck_assert_int_eq(system(cmd), 0);
	out = slurp(P("tty"));
	ck_assert_msg(strstr(out, "40/40 views, "), "not drawn: %s", out);
	free(out);
}
END_TEST

/* Wait (without a deadline of its own: Check's timeout ends a hang) until
 * the command's standard error holds text. */
static void wait_for_stderr(const char *text)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (;;) {
		char *err = slurp(P(".stderr"));
		bool found = strstr(err, text) != NULL;

		free(err);
		if (found)
			return;
		nanosleep(&ts, NULL);
	}
}

/* 64 views of 512 KiB: the default batches (4 MiB) are 8 views. */
#define BIG_VIEW (32 + 512 * 512 * 2)

/* SIGINT while views still arrive: the next batch cancels the load, which
 * says so in one line; the command ends by SIGINT (a shell sees 130) and
 * leaves no output file.  While the pipe stalls: within a second. */
START_TEST(test_cancel)
{
	const bool stall = _i == 1;
	char *data;
	result r;
	int fd;
	pid_t pid;

	GEN("a.raw", "--views", "64", "--width", "512", "--height", "512");
	data = slurp(P("a.raw"));
	ck_assert_int_eq(mkdir(P("out"), 0700), 0);
	pid = start_stdin((const char *const[]){ "extract", "--progress",
						 "-o", P("out/s.npy"), "-",
						 NULL }, NULL, &fd);
	feed(fd, data, 0, 64 + 20 * BIG_VIEW);
	wait_for_stderr("8/64 views");
	ck_assert_int_eq(kill(pid, SIGINT), 0);
	if (!stall)
		feed(fd, data, 64 + 20 * BIG_VIEW, 64 + 64 * BIG_VIEW);
	finish(pid, &r);
	close(fd);
	ck_assert_int_eq(r.status, 128 + SIGINT);
	ck_assert_msg(strstr(r.err, stall ? "parload: interrupted\n" :
					    ": load canceled after "),
		      "%s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	ck_assert_msg(dir_is_empty(P("out")), "an interrupted extract left a file");
	result_free(&r);
	free(data);
}
END_TEST

/* A FIFO given as a path, and /dev/stdin, are read as streams as '-'
 * is, and the line says so. */
START_TEST(test_stream_paths)
{
	char *data;
	result r;
	pid_t pid;
	int fd;

	GEN("a.raw");
	data = slurp(P("a.raw"));
	ck_assert_int_eq(mkfifo(P("fifo"), 0600), 0);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "/dev/stdin" : P("fifo");

		if (i) {
			pid = start_stdin((const char *const[]){ name, NULL },
					  NULL, &fd);
		} else {
			pid = start((const char *const[]){ name, NULL });
			fd = open(name, O_WRONLY); /* waits for the command */
		}
		ck_assert(fd >= 0);
		ck_assert(feed(fd, data, 0, 64 + 10 * 288));
		close(fd);
		finish(pid, &r);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_msg(starts_with(r.out, name) &&
				      strstr(r.out, ": 10 views 16x8 u16, ") &&
				      strstr(r.out, "(sequential, stream)\n"),
			      "%s", r.out);
		result_free(&r);
	}
	free(data);
}
END_TEST

/* ---------------------------------------------------------------------
 * Suite
 * ------------------------------------------------------------------- */

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = tcase_create("usage");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_help_forms_agree);
	tcase_add_test(tc, test_help_wins_over_files);
	tcase_add_test(tc, test_version);
	tcase_add_loop_test(tc, test_usage_error, 0, N(usage_errors));
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_gen_then_load);
	tcase_add_test(tc, test_threads_reported);
	tcase_add_loop_test(tc, test_strategy, 0, 2 * N(strategies));
	tcase_add_loop_test(tc, test_buffer_sizes, 0, N(good_sizes));
	tcase_add_test(tc, test_large_sizes_parse);
	tcase_add_test(tc, test_max_read);
	tcase_add_test(tc, test_no_bind_no_hugepages);
	tcase_add_test(tc, test_preallocate);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_json_not_verified);
	tcase_add_test(tc, test_json_escapes);
	tcase_add_test(tc, test_quiet);
	tcase_add_test(tc, test_verify_seed);
	tcase_add_test(tc, test_verify_seed_wrong);
	tcase_add_test(tc, test_verify_names_view);
	tcase_add_test(tc, test_empty_and_single);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_bad_magic);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_follow);
	tcase_add_test(tc, test_good_and_bad);
	tcase_add_test(tc, test_dash_is_stdin);
	tcase_add_test(tc, test_directory);
	suite_add_tcase(s, tc);

	tc = tcase_create("reliability");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_verify_crc);
	tcase_add_test(tc, test_verify_without_crcs);
	tcase_add_test(tc, test_verify_bad_view);
	tcase_add_test(tc, test_keep_going);
	tcase_add_test(tc, test_allow_truncated);
	tcase_add_test(tc, test_stdin);
	tcase_add_test(tc, test_stdin_errors);
	tcase_add_test(tc, test_stdin_usage);
	suite_add_tcase(s, tc);

	tc = tcase_create("gen");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_gen_type, 0, N(types));
	tcase_add_test(tc, test_gen_crc);
	tcase_add_test(tc, test_gen_deterministic);
	tcase_add_loop_test(tc, test_gen_usage_error, 0, N(gen_errors));
	tcase_add_test(tc, test_gen_needs_one_output);
	tcase_add_test(tc, test_gen_cannot_write);
	tcase_add_test(tc, test_gen_disk_full);
	tcase_add_test(tc, test_gen_defaults);
	suite_add_tcase(s, tc);

	tc = tcase_create("info");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_info_valid);
	tcase_add_test(tc, test_info_truncated);
	tcase_add_test(tc, test_info_bad_magic);
	tcase_add_test(tc, test_info_json);
	tcase_add_test(tc, test_info_usage);
	tcase_add_test(tc, test_info_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("subcommands");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_subcommand_help);
	tcase_add_test(tc, test_list_strategies);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_select_bin, 0, N(sel_cases));
	tcase_add_loop_test(tc, test_select_verify_seed, 0, N(sel_cases));
	tcase_add_loop_test(tc, test_select_json, 0, N(sel_cases));
	tcase_add_test(tc, test_select_human);
	tcase_add_loop_test(tc, test_select_usage, 0, N(sel_errors));
	tcase_add_test(tc, test_select_out_of_range);
	suite_add_tcase(s, tc);

	tc = tcase_create("extract");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_extract_npy, 0, N(sel_cases));
	tcase_add_loop_test(tc, test_extract_raw, 0, N(sel_cases));
	tcase_add_test(tc, test_extract_force);
	tcase_add_test(tc, test_extract_no_half_file);
	tcase_add_test(tc, test_extract_stdout_full);
	tcase_add_loop_test(tc, test_extract_usage, 0, N(extract_errors));
	suite_add_tcase(s, tc);

	tc = tcase_create("progress");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_progress_forced);
	tcase_add_test(tc, test_progress_terminal);
	tcase_add_loop_test(tc, test_cancel, 0, 2);
	tcase_add_test(tc, test_stream_paths);
	suite_add_tcase(s, tc);

	/* 229 MB written and read per test: give them time on slow disks. */
	tc = tcase_create("default");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_default_fails_clean);
	tcase_add_test(tc, test_default_no_tmpdir);
	tcase_add_test(tc, test_default_signal);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	bin = getenv("PARLOAD_BIN");
	if (!bin || !*bin) {
		fputs("check_cli: PARLOAD_BIN is not set; skipped\n", stderr);
		return 77;
	}
	sr = srunner_create(cli_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
