/*
 * check_cli_full.c - output the command cannot write fails it (status 1,
 * a message naming what could not be written): a file gen writes, and
 * standard output, on /dev/full.  Skipped (exit 77) where /dev/full is
 * not there to write to, or without $PARLOAD_BIN.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *bin;

/* One run: its arguments ("IN" is a small stream), where its standard
 * output goes, and how standard error must start. */
typedef struct full_case {
	const char *name;
	const char *args[6];
	const char *out; /* NULL: captured */
	const char *err;
} full_case;

static const full_case cases[] = {
	{ "gen fails half way", { "gen", "--views", "100", "/dev/full" },
	  NULL, "parload: /dev/full: " },
	{ "extract to a full standard output",
	  { "extract", "--format", "npy", "-o", "-", "IN" }, "/dev/full",
	  "parload: write error: " },
	{ "the report to a full standard output", { "IN" }, "/dev/full",
	  "parload: write error: " },
};

START_TEST(test_full)
{
	const full_case *c = &cases[_i];
	const char *argv[8] = { bin };
	char *in = tu_path("in.raw");
	tu_result r;
	int n = 1;

	tu_write_stream(in, 10, 16, 8, PARLOAD_PIXEL_U16, 0, 1);
	for (int i = 0; i < TU_COUNT(c->args) && c->args[i]; i++)
		argv[n++] = strcmp(c->args[i], "IN") ? c->args[i] : in;
	argv[n] = NULL;
	tu_run_cmd(&(tu_cmd){ .argv = argv, .out = c->out, .timeout = 60 },
		   &r);
	ck_assert_msg(r.status == 1, "%s: status %d", c->name, r.status);
	ck_assert_msg(strncmp(r.err, c->err, strlen(c->err)) == 0, "%s: %s",
		      c->name, r.err);
	tu_result_free(&r);
	free(in);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_full");

	if (access("/dev/full", W_OK) != 0)
		return tu_skip("check_cli_full", "no /dev/full to write to");
	if (!(bin = tu_parload_bin()))
		return tu_skip("check_cli_full", "PARLOAD_BIN is not set");
	tcase_add_loop_test(tu_tcase(s, "full", 60), test_full, 0,
			    TU_COUNT(cases));
	return tu_run(s);
}
