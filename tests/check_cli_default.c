/*
 * check_cli_default.c - `parload` with no file: the embedded default
 * writes the reference stream (2000 views of 896 x 64 u16, 229 MB) to a
 * temporary file in $TMPDIR, loads and verifies it, and removes the file
 * on every way out, a signal included.
 *
 * Each test gives the command a $TMPDIR of its own.  $PARLOAD_BIN is the
 * command (exit 77 without it).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"

static const char *bin;

/* A fresh folder for the command's $TMPDIR (the caller frees it). */
static char *fresh_tmp(void)
{
	static int serial;
	char name[32], *tmp;

	snprintf(name, sizeof(name), "tmp-%d", serial++);
	tmp = tu_path(name);
	ck_assert_int_eq(mkdir(tmp, 0700), 0);
	return tmp;
}

/* The command's temporary files in tmp (".parload.*").  Only those: a
 * sanitizer's runtime makes files of its own in $TMPDIR before main()
 * (ThreadSanitizer's tsan.rodata.PID, gone a moment later), which are no
 * sign that the command is at work. */
static int tmp_files(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strncmp(e->d_name, ".parload.", 9) == 0;
	closedir(d);
	return n;
}

/* Start the command with args after its name and $TMPDIR tmp. */
static void start(tu_proc *p, const char *tmp, const char *const *args)
{
	const char *argv[16] = { bin }, *env[2] = { NULL };
	char var[4200];
	int n = 1;

	snprintf(var, sizeof(var), "TMPDIR=%s", tmp);
	env[0] = var;
	for (; *args; args++)
		argv[n++] = *args;
	tu_spawn(&(tu_cmd){ .argv = argv, .env = env, .timeout = 100 }, p);
}

static void run(tu_result *r, const char *tmp, const char *const *args)
{
	tu_proc p;

	start(&p, tmp, args);
	tu_wait(&p, r);
}

#define RUN(r, tmp, ...)                                                   \
	run((r), (tmp), (const char *const[]){ __VA_ARGS__, NULL })

START_TEST(test_default)
{
	char *tmp = fresh_tmp();
	tu_result r;

	RUN(&r, tmp, "-t", "2");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "reference stream: 2000 views 896x64 u16, "
				    "229.4 MB in ") == r.out,
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, ", 2 threads (parallel)\n"), "%s", r.out);
	ck_assert_msg(strchr(r.out, '\n') == r.out + r.out_len - 1, "%s",
		      r.out);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(tu_count_entries(tmp) == 0, "temporary file left behind");
	tu_result_free(&r);
	free(tmp);
}
END_TEST

/* A failed verification still removes the temporary file. */
START_TEST(test_default_fails_clean)
{
	char *tmp = fresh_tmp();
	tu_result r;

	RUN(&r, tmp, "--verify-seed", "2", "--strategy", "mmap");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, ": view 0: "), "%s", r.err);
	ck_assert_msg(tu_count_entries(tmp) == 0, "temporary file left behind");
	tu_result_free(&r);
	free(tmp);
}
END_TEST

START_TEST(test_default_no_tmpdir)
{
	char *gone = tu_path("absent");
	tu_result r;

	RUN(&r, gone, "--json");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, "cannot create a temporary file"), "%s",
		      r.err);
	tu_result_free(&r);
	free(gone);
}
END_TEST

/* SIGINT or SIGTERM while the default works ends the command by that
 * signal, and the temporary file goes with it.  The command needs no
 * input to hold it back, so the test stops it (SIGSTOP) once its file is
 * there: stopped with the file still in place, it is mid-work, and the
 * signal is handled as soon as it goes on (SIGCONT).  A command that got
 * to the end before it could be stopped (a busy machine can hold the
 * test back that long) proves nothing either way: the test starts it
 * again, up to ATTEMPTS times. */
static const int signals[] = { SIGINT, SIGTERM };
#define ATTEMPTS 5

/* Start the default and stop it mid-work: true, or false when it got to
 * the end first (*r then says how it ended). */
static bool start_stopped(tu_proc *p, const char *tmp, tu_result *r)
{
	const struct timespec nap = { 0, 1000 * 1000 };
	siginfo_t info;
	bool stopped;

	start(p, tmp, (const char *const[]){ NULL });
	while (tmp_files(tmp) == 0) {
		ck_assert_msg(!tu_ended(p, r), "ended (status %d) without a "
			      "temporary file: %s", r->status, r->err);
		nanosleep(&nap, NULL);
	}
	ck_assert_int_eq(kill(p->pid, SIGSTOP), 0);
	/* WNOWAIT: an end stays there for tu_wait to collect. */
	memset(&info, 0, sizeof(info));
	ck_assert_int_eq(waitid(P_PID, (id_t)p->pid, &info,
				WSTOPPED | WEXITED | WNOWAIT), 0);
	stopped = info.si_code == CLD_STOPPED;
	if (stopped && tmp_files(tmp) == 1)
		return true;
	if (stopped)
		ck_assert_int_eq(kill(p->pid, SIGCONT), 0);
	tu_wait(p, r);
	ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
	ck_assert_msg(tu_count_entries(tmp) == 0, "temporary file left behind");
	tu_result_free(r);
	return false;
}

START_TEST(test_default_signal)
{
	const int sig = signals[_i];
	char *tmp = fresh_tmp();
	tu_result r;
	tu_proc p;
	int n = 0;

	while (!start_stopped(&p, tmp, &r))
		ck_assert_msg(++n < ATTEMPTS, "%d loads ended before they could "
			      "be stopped", ATTEMPTS);
	ck_assert_int_eq(kill(p.pid, sig), 0);
	ck_assert_int_eq(kill(p.pid, SIGCONT), 0);
	tu_wait(&p, &r);
	ck_assert_msg(r.status == 128 + sig, "status %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "parload: interrupted\n");
	ck_assert_msg(tu_count_entries(tmp) == 0, "temporary file left behind");
	tu_result_free(&r);
	free(tmp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_default");
	/* 229 MB written and read per test: time on slow disks. */
	TCase *tc = tu_tcase(s, "default", 120);

	if (!(bin = tu_parload_bin()))
		return tu_skip("check_cli_default", "PARLOAD_BIN is not set");
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_default_fails_clean);
	tcase_add_test(tc, test_default_no_tmpdir);
	tcase_add_loop_test(tc, test_default_signal, 0, TU_COUNT(signals));
	return tu_run(s);
}
