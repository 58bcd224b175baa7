/*
 * check_cli_python.c - the command's output read by other software:
 * every --json line parses as JSON for Python's json module, and NumPy
 * reads what `parload extract` writes as .npy equal to its own slicing of
 * the stream.  check_cli checks the same outputs byte by byte.
 *
 * The interpreter is $PARLOAD_PYTHON (the one the Python package is built
 * for) or else $PYTHON3, both set by `make check` from configure; skipped
 * (exit 77) where it cannot import numpy, or without $PARLOAD_BIN.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parload.h"
#include "testutil.h"

static const char *bin, *python;

/* Run python with script and args (NULL-terminated); its status. */
static int run_python(const char *script, const char *const *args)
{
	const char *argv[16] = { python, "-c", script };
	tu_result r;
	int n = 3, status;

	for (; *args; args++) {
		ck_assert(n < TU_COUNT(argv) - 1);
		argv[n++] = *args;
	}
	argv[n] = NULL;
	tu_run_cmd(&(tu_cmd){ .argv = argv, .timeout = 60 }, &r);
	status = r.status;
	if (status != 0)
		fprintf(stderr, "%s: %s", python, r.err);
	tu_result_free(&r);
	return status;
}

/* The command with args after its name ("@x" is the scratch file x):
 * its exit status and standard output (saved in the scratch file out). */
static int run_parload(tu_result *r, const char *const *args)
{
	const char *argv[24] = { bin };
	char *paths[24] = { NULL };
	int n = 1;

	for (; *args; args++, n++) {
		ck_assert(n < TU_COUNT(argv) - 1);
		if ((*args)[0] == '@')
			paths[n] = tu_path(*args + 1);
		argv[n] = paths[n] ? paths[n] : *args;
	}
	argv[n] = NULL;
	tu_run_cmd(&(tu_cmd){ .argv = argv, .timeout = 60 }, r);
	for (int i = 0; i < n; i++)
		free(paths[i]);
	return r->status;
}

#define PARLOAD(r, ...)                                                    \
	run_parload((r), (const char *const[]){ __VA_ARGS__, NULL })

/* gen's stream of 10 views of 16 x 8 pixels of type, seed 5, in the
 * scratch file name; with CRCs if crc. */
static void gen(const char *name, const char *type, bool crc)
{
	char at[64];
	tu_result r;

	snprintf(at, sizeof(at), "@%s", name);
	PARLOAD(&r, "gen", "--views", "10", "--width", "16", "--height", "8",
		"--type", type, "--seed", "5", crc ? "--crc" : at,
		crc ? at : NULL);
	ck_assert_msg(r.status == 0, "gen %s: %s", name, r.err);
	tu_result_free(&r);
}

/* ---------------------------------------------------------------------
 * JSON lines
 * ------------------------------------------------------------------- */

#define ODD "q\"b\\s\x01\xff\xc3\xa9.raw"

/* A run whose standard output is JSON lines: its arguments, its status,
 * how many lines. */
static const struct {
	const char *args[10];
	int status;
	unsigned lines;
} json_runs[] = {
	{ { "--json", "-t", "2", "--verify-seed", "5", "@a.raw", "@c.raw" },
	  0, 2 },
	/* Quotes, backslashes, control characters and bytes that are not
	 * UTF-8 in a file name. */
	{ { "--json", "@" ODD }, 0, 1 },
	{ { "--verify", "--json", "@c.raw" }, 0, 1 },
	{ { "--keep-going", "--json", "@bad.raw" }, 1, 1 },
	{ { "--allow-truncated", "--json", "@t.raw" }, 0, 1 },
	{ { "info", "--json", "@c.raw", "@t.raw" }, 1, 2 },
	/* Raw layouts: the layout object, file by file. */
	{ { "info", "--json", "--raw",
	    "width=16,height=8,type=u16be,offset=64,header=32,count=9",
	    "@a.raw" }, 0, 1 },
	{ { "info", "--json", "--raw",
	    "width=16,height=8,type=u16,offset=64,header=32", "--concat",
	    "@a.raw", "@c.raw", "@t.raw" }, 1, 1 },
	{ { "--json", "--raw", "width=16,height=8,type=u16,offset=64,header=32",
	    "--concat", "@a.raw", "@c.raw" }, 0, 1 },
};

static const char json_script[] =
	"import json, sys\n"
	"for line in open(sys.argv[1], encoding='utf-8'):\n"
	"    json.loads(line)\n";

START_TEST(test_json_lines)
{
	char *out = tu_path("out.json"), *bad = tu_path("bad.raw");
	char *trunc = tu_path("t.raw");
	unsigned lines = 0;
	tu_result r;

	gen("a.raw", "u16", false);
	gen("c.raw", "u16", true);
	gen("bad.raw", "u16", true);
	tu_flip(bad, tu_payload_off(256, 2));
	gen("t.raw", "u16", false);
	tu_truncate(trunc, 2000); /* 6 whole views */
	gen(ODD, "u16", false);
	run_parload(&r, json_runs[_i].args);
	ck_assert_msg(r.status == json_runs[_i].status, "status %d: %s",
		      r.status, r.err);
	for (size_t i = 0; i < r.out_len; i++)
		lines += r.out[i] == '\n';
	ck_assert_uint_eq(lines, json_runs[_i].lines);
	tu_write_file(out, r.out, r.out_len);
	ck_assert_msg(run_python(json_script, (const char *const[]){ out,
								     NULL }) ==
			      0,
		      "not JSON lines: %s", r.out);
	tu_result_free(&r);
	free(out);
	free(bad);
	free(trunc);
}
END_TEST

/* ---------------------------------------------------------------------
 * NumPy reads extract's .npy
 * ------------------------------------------------------------------- */

/* A selection: the pixel type and the options, which are Python slices
 * of the views, the rows and the columns as well (NULL: all). */
static const struct {
	const char *type, *views, *rows, *cols, *layout;
} selections[] = {
	{ "u16", "::4", NULL, NULL, NULL },
	{ "u16", "-3:", "2:6", "3:11", NULL },
	{ "u8", "1:9:3", "7:8", "0:1", "sinograms" },
	{ "f64", NULL, "2:6", NULL, "sinograms" },
	{ "i32", "7:8", ":3", "-5:", "views" },
	{ "u16", "2::5", "1:8", "1:15", "sinograms" },
};

/* numpy reads the stream with a record dtype and slices it. */
static const char numpy_script[] =
	"import numpy as np, sys\n"
	"npy, raw, t, views, rows, cols, layout = sys.argv[1:]\n"
	"a = np.load(npy)\n"
	"t = np.dtype(t)\n"
	"rec = np.dtype([('h', 'V32'), ('p', t, (8, 16))])\n"
	"v = np.fromfile(raw, rec, offset=64)['p']\n"
	"s = lambda x: slice(*[int(p) if p else None for p in x.split(':')])\n"
	"v = v[s(views)][:, s(rows), s(cols)]\n"
	"if layout == 'sinograms': v = v.transpose(1, 0, 2)\n"
	"sys.exit(0 if a.dtype == t and np.array_equal(a, v) else 1)\n";

/* args[n...] of selection i's options; the next n. */
static int sel_args(int i, const char **args, int n)
{
	const char *opt[] = { "--views", "--rows", "--cols", "--layout" };
	const char *val[] = { selections[i].views, selections[i].rows,
			      selections[i].cols, selections[i].layout };

	return tu_add_options(args, n, opt, val, 4);
}

/* An option's value as a Python slice (NULL: all). */
static const char *or_all(const char *value)
{
	return value ? value : ":";
}

/* The JSON line of a load with the selection, and info's. */
START_TEST(test_json_selection)
{
	char *out = tu_path("out.json");

	gen("a.raw", selections[_i].type, false);
	for (int info = 0; info < 2; info++) {
		const char *args[16] = { "info", "--json" };
		const char **a = info ? args : args + 1;
		int n = sel_args(_i, a, info ? 2 : 1);
		tu_result r;

		a[n++] = "@a.raw";
		a[n] = NULL;
		ck_assert_msg(run_parload(&r, a) == 0, "%s", r.err);
		tu_write_file(out, r.out, r.out_len);
		ck_assert_msg(run_python(json_script,
					 (const char *const[]){ out, NULL }) ==
				      0,
			      "not JSON lines: %s", r.out);
		tu_result_free(&r);
	}
	free(out);
}
END_TEST

START_TEST(test_numpy_reads_npy)
{
	const char *args[16] = { "extract" };
	char *npy = tu_path("s.npy"), *raw = tu_path("a.raw"), dtype[16];
	const char *type = selections[_i].type;
	const int bytes = atoi(type + 1) / 8;
	tu_result r;
	int n = sel_args(_i, args, 1);

	gen("a.raw", type, false);
	remove(npy); /* the last test's, when they share a process */
	args[n++] = "-o";
	args[n++] = "@s.npy";
	args[n++] = "@a.raw";
	args[n] = NULL;
	ck_assert_msg(run_parload(&r, args) == 0, "%s", r.err);
	tu_result_free(&r);
	/* '<u2', '|u1', '<f8': the type's letter and size, little-endian. */
	snprintf(dtype, sizeof(dtype), "%c%c%d", bytes == 1 ? '|' : '<',
		 type[0], bytes);
	ck_assert_msg(run_python(numpy_script,
				 (const char *const[]){
					 npy, raw, dtype,
					 or_all(selections[_i].views),
					 or_all(selections[_i].rows),
					 or_all(selections[_i].cols),
					 selections[_i].layout ?
						 selections[_i].layout :
						 "views",
					 NULL }) == 0,
		      "numpy disagrees: selection %d", _i);
	free(npy);
	free(raw);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_python");
	char cmd[4200];
	TCase *tc;

	/* The interpreter the Python package is built for, with numpy,
	 * else configure's python3. */
	python = getenv("PARLOAD_PYTHON");
	if (!python || !*python)
		python = getenv("PYTHON3");
	if (!python || !*python)
		return tu_skip("check_cli_python", "no python3 configured");
	/* Not through the harness: its assertions need a running test. */
	snprintf(cmd, sizeof(cmd), "'%s' -c 'import numpy' 2>/dev/null",
		 python);
	if (strchr(python, '\'') || system(cmd) != 0)
		return tu_skip("check_cli_python", "its python3 has no numpy");
	if (!(bin = tu_parload_bin()))
		return tu_skip("check_cli_python", "PARLOAD_BIN is not set");
	tc = tu_tcase(s, "python", 60);
	tcase_add_loop_test(tc, test_json_lines, 0, TU_COUNT(json_runs));
	tcase_add_loop_test(tc, test_json_selection, 0, TU_COUNT(selections));
	tcase_add_loop_test(tc, test_numpy_reads_npy, 0,
			    TU_COUNT(selections));
	return tu_run(s);
}
