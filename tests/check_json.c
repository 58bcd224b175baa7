/*
 * check_json.c - the JSON writer that both commands share (cli/json.c):
 * a table of input bytes and the JSON text each must become, and the
 * parload command's --json output for files whose names are not UTF-8,
 * parsed by a strict parser (Python's: a strict UTF-8 decode, then json).
 * tests/mpi/check_mpi_cli.c does the same for parload-mpi.
 *
 * The commands' part needs $PARLOAD_BIN and $PYTHON3 (set by make check);
 * without them the table is still checked and the program then reports a
 * skip (exit status 77), saying why.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "json_names.h"
#include "testutil.h"

/* json_str of the bytes in, as text: in's bytes and the JSON expected. */
static const struct escape {
	const char *in, *json;
} escapes[] = {
	{ "", "\"\"" },
	{ "plain.raw", "\"plain.raw\"" },
	{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
	{ "\n\r\t", "\"\\n\\r\\t\"" },
	{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
	/* Well-formed UTF-8 passes as it is: 2, 3 and 4 bytes. */
	{ "\xc3\xa9", "\"\xc3\xa9\"" },
	{ "\xe2\x82\xac", "\"\xe2\x82\xac\"" },
	{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },
	{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" },
	/* Each byte that is not part of it becomes U+FFFD. */
	{ "a\xff" "b", "\"a\\ufffdb\"" },
	{ "\xfe\xff", "\"\\ufffd\\ufffd\"" },
	{ "lone\x80", "\"lone\\ufffd\"" },
	{ "\xbf" "x", "\"\\ufffdx\"" },
	/* Truncated sequences, at the end and before ASCII. */
	{ "\xe2\x82", "\"\\ufffd\\ufffd\"" },
	{ "\xe2\x82x", "\"\\ufffd\\ufffdx\"" },
	{ "\xf0\x9f\x98", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "\xc3", "\"\\ufffd\"" },
	/* Overlong forms, surrogates, past U+10FFFF. */
	{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
	{ "\xc1\xbf", "\"\\ufffd\\ufffd\"" },
	{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "\xf5\x80", "\"\\ufffd\\ufffd\"" },
	/* A good sequence right after a bad byte is kept. */
	{ "\xff\xc3\xa9", "\"\\ufffd\xc3\xa9\"" },
};

START_TEST(test_json_str_table)
{
	for (int i = 0; i < TU_COUNT(escapes); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		ck_assert_ptr_nonnull(f);
		json_str(f, escapes[i].in);
		ck_assert_int_eq(fclose(f), 0);
		ck_assert_msg(strcmp(text, escapes[i].json) == 0,
			      "entry %d: got %s, want %s", i, text,
			      escapes[i].json);
		free(text);
	}
}
END_TEST

START_TEST(test_finite_or_zero)
{
	ck_assert(finite_or_zero(INFINITY) == 0.0);
	ck_assert(finite_or_zero(-INFINITY) == 0.0);
	ck_assert(finite_or_zero(NAN) == 0.0);
	ck_assert(finite_or_zero(1.5) == 1.5);
}
END_TEST

/* ---- the parload command ---- */

/* The strict parser: the file's bytes decoded as UTF-8 (strict), parsed
 * as JSON; its "file" ends with the name argv[2] says (a JSON string). */
static const char strict_parse[] =
	"import json, sys\n"
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8', 'strict'))\n"
	"want = json.loads(sys.argv[2])\n"
	"assert d['file'].endswith(want), (d['file'], want)\n";

/* Run argv with its standard output in out; its exit status. */
static int run(char *const argv[], const char *out)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600) :
			       -1;

		if (out && (fd < 0 || dup2(fd, STDOUT_FILENO) < 0))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* `parload --json` and `parload info --json` of each name (json_names.h)
 * print JSON that
 * the strict parser takes, the name's bad bytes as U+FFFD. */
START_TEST(test_commands_json_of_non_utf8_names)
{
	const char *bin = getenv("PARLOAD_BIN"), *py = getenv("PYTHON3");
	char *out = tu_path("out.json");

	for (int i = 0; i < JSON_NAMES; i++) {
		char *path = tu_path(json_names[i].bytes);
		char *load[] = { (char *)bin, "--json", path, NULL };
		char *info[] = { (char *)bin, "info", "--json", path, NULL };
		char *const *cmds[] = { load, info };

		tu_write_stream(path, 3, 4, 2, PARLOAD_PIXEL_U16, 0, 1);
		for (int c = 0; c < 2; c++) {
			char *parse[] = { (char *)py, "-c", (char *)strict_parse,
					  out, (char *)json_names[i].json, NULL };

			ck_assert_msg(run(cmds[c], out) == 0,
				      "parload %s of name %d failed",
				      c ? "info --json" : "--json", i);
			ck_assert_msg(run(parse, NULL) == 0,
				      "parload %s of name %d: not strict "
				      "JSON, or not the name %s",
				      c ? "info --json" : "--json", i,
				      json_names[i].json);
		}
		free(path);
	}
	free(out);
}
END_TEST

static Suite *suite(bool commands)
{
	Suite *s = suite_create("json");
	TCase *t = tu_tcase(s, "json", 60);

	tcase_add_test(t, test_json_str_table);
	tcase_add_test(t, test_finite_or_zero);
	if (commands)
		tcase_add_test(t, test_commands_json_of_non_utf8_names);
	return s;
}

int main(void)
{
	const char *bin = getenv("PARLOAD_BIN"), *py = getenv("PYTHON3");
	const bool commands = bin && *bin && py && *py;
	int rc = tu_run(suite(commands));

	if (rc == 0 && !commands) {
		printf("SKIP: the commands' JSON is not parsed: %s unset\n",
		       bin && *bin ? "PYTHON3" : "PARLOAD_BIN");
		return 77;
	}
	return rc;
}
