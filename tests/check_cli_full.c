/*
 * check_cli_full.c - output the command cannot write fails it (status 1,
 * one line naming what could not be written and why, never a temporary
 * file, and nothing left behind).
 *
 * Part 0 (check_cli_full): a file gen writes, and standard output, on
 * /dev/full; and each output format of extract (but .h5: see
 * test_file_too_large), and nhdr, under an RLIMIT_FSIZE with SIGXFSZ
 * ignored, whose writes fail with EFBIG ("File too large") as a full
 * disk's fail with ENOSPC.  Skipped (exit 77) where /dev/full is not
 * there to write to, or without $PARLOAD_BIN.
 *
 * Part 1 (check_cli_full_tmpfs): the same outputs on a full disk, a
 * tmpfs of 1 MiB mounted in a mount namespace of the test's own: ENOSPC,
 * "No space left on device".  Skipped where no such namespace can be made
 * (it takes root, CAP_SYS_ADMIN).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *bin;

/* ---- /dev/full ---- */

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

/* ---- a file that cannot be written whole ---- */

/* The outputs: extract's formats, and nhdr's header of a LIST of many
 * files (so that it is larger than part 0's limit allows). */
static const char *const outputs[] = { "o.raw", "o.npy", "o.tif", "o.h5",
				       "o.nhdr" };

#define NHDR_FILES 400

/* In the current directory: "in.raw", 64 views of 256 x 128 u16 (4 MiB),
 * or for nhdr NHDR_FILES files of 2 views of 4 x 2 u8, each with a long
 * name, and the arguments that write OUT from them into argv. */
static void inputs(const char *out, const char **argv, char **names)
{
	int n = 0;

	argv[n++] = bin;
	if (strstr(out, ".nhdr")) {
		static char name[NHDR_FILES][64];

		argv[n++] = "nhdr";
		argv[n++] = "--raw";
		argv[n++] = "width=4,height=2,type=u8";
		argv[n++] = "--concat";
		argv[n++] = "-o";
		argv[n++] = names[0];
		for (int i = 0; i < NHDR_FILES; i++) {
			snprintf(name[i], sizeof(name[i]),
				 "a-rather-long-name-for-a-data-file-%04d.raw",
				 i);
			tu_write_file(name[i], "0123456789abcdef", 16);
			argv[n++] = name[i];
		}
	} else {
		tu_write_stream("in.raw", 64, 256, 128, PARLOAD_PIXEL_U16, 0,
				1);
		argv[n++] = "extract";
		argv[n++] = "--no-progress";
		argv[n++] = "-o";
		argv[n++] = names[0];
		argv[n++] = "in.raw";
	}
	argv[n] = NULL;
}

/* Run argv with writes beyond limit bytes failing (0: none). */
static void run_limited(const char **argv, rlim_t limit, tu_result *r)
{
	struct rlimit was, lim;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
	lim = was;
	if (limit) {
		signal(SIGXFSZ, SIG_IGN); /* write() fails instead */
		lim.rlim_cur = limit;
	}
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	tu_run_cmd(&(tu_cmd){ .argv = argv, .timeout = 60 }, r);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
}

/* The output of case i, in dir out_dir, fails with cause: status 1, one
 * line "parload: OUT: ...cause" that names no temporary file, and
 * nothing left in out_dir but its left entries from before. */
static void assert_fails(int i, const char *out_dir, rlim_t limit,
			 const char *cause, int left)
{
	const char *argv[NHDR_FILES + 16];
	char out[4200], *names[1] = { out }, prefix[4300], hidden[64];
	tu_result r;

	snprintf(out, sizeof(out), "%s/%s", out_dir, outputs[i]);
	inputs(out, argv, names);
	run_limited(argv, limit, &r);
	snprintf(prefix, sizeof(prefix), "parload: %s: ", out);
	snprintf(hidden, sizeof(hidden), "/.%s.", outputs[i]);
	ck_assert_msg(r.status == 1, "%s: status %d: %s", out, r.status,
		      r.err);
	ck_assert_msg(strncmp(r.err, prefix, strlen(prefix)) == 0 &&
			      strstr(r.err, cause),
		      "%s: want '%s...%s', got: %s", out, prefix, cause,
		      r.err);
	ck_assert_msg(!strstr(r.err, hidden), "%s: names its temporary "
		      "file: %s", out, r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		      "%s: more than one line: %s", out, r.err);
	ck_assert_msg(tu_count_entries(out_dir) == left,
		      "%s: a file left in %s", out, out_dir);
	tu_result_free(&r);
}

/* Whether case i can run in this build (HDF5 needs libhdf5). */
/* Why output i cannot be written in this build (NULL: it can). */
static const char *why_not_written(int i)
{
	if (strstr(outputs[i], ".h5") && !parload_has_hdf5())
		return "no HDF5 in this build";
	return NULL;
}

/* Why output i is not tried under RLIMIT_FSIZE (NULL: it is). */
static const char *why_not_limited(int i)
{
	if (strstr(outputs[i], ".h5"))
		return "libhdf5 1.10 crashes at exit after a write cut short";
#ifdef PARLOAD_SANITIZED
	/* ThreadSanitizer's runtime writes a file of 512 KiB as the command
	 * starts (tsan.rodata), which a limit of 2 KiB cuts short. */
	if (strstr(outputs[i], ".nhdr"))
		return "a sanitizer's runtime writes past the limit itself";
#endif
	return why_not_written(i);
}

/* Each output a case of fn, but those that cannot run here: not added,
 * each said as a skipped case (Check has no skip of its own). */
static void add_outputs(TCase *t, const TTest *fn, const char *name,
			const char *(*why_not)(int i))
{
	for (int i = 0; i < (int)TU_COUNT(outputs); i++) {
		const char *why = why_not(i);

		if (why)
			printf("%s %s: SKIP: %s\n", name, outputs[i], why);
		else
			tcase_add_loop_test(t, fn, i, i + 1);
	}
}

/* A directory of the scratch one to work in, and one in it for OUT. */
static char *work_dir(const char *what, int i)
{
	char name[64], *dir;

	snprintf(name, sizeof(name), "%s-%d", what, i);
	dir = tu_path(name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(mkdir("out", 0700), 0);
	return dir;
}

/* RLIMIT_FSIZE of 1 MiB: extract's 4 MiB fail; 2 KiB, in nhdr's case, of
 * a header of about 20 KiB.  The messages are shorter than either.  Not
 * .h5: libhdf5 (1.10.8) fails to close a file whose writes past the limit
 * fail (its close writes there again), and its handler at the process's
 * exit then closes that file again and dies by SIGSEGV; a full disk
 * (part 1) it survives. */
START_TEST(test_file_too_large)
{
	char *dir;

	dir = work_dir("fsize", _i);
	assert_fails(_i, "out", strstr(outputs[_i], ".nhdr") ? 2048 : 1 << 20,
		     strerror(EFBIG), 0);
	free(dir);
}
END_TEST

/* ---- part 1: a full tmpfs ---- */

/* A tmpfs of size bytes on dir, in a mount namespace of this process's
 * own (gone with it): NULL, or why not. */
static const char *mount_small_tmpfs(const char *dir, const char *size)
{
	char opts[64];

	if (unshare(CLONE_NEWNS) != 0)
		return "no mount namespace of its own (unshare: it takes "
		       "root)";
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
		return "cannot make the mounts private";
	snprintf(opts, sizeof(opts), "size=%s", size);
	if (mount("tmpfs", dir, "tmpfs", 0, opts) != 0)
		return "cannot mount a tmpfs";
	return NULL;
}

static const char *why_no_tmpfs(void)
{
	static char why[128];
	char dir[] = "/tmp/parload-full-XXXXXX";
	int status;
	pid_t pid;

	if (!(bin = tu_parload_bin()))
		return "PARLOAD_BIN is not set";
	if (!mkdtemp(dir))
		return "no directory to mount on";
	pid = fork();
	if (pid == 0) {
		const char *w = mount_small_tmpfs(dir, "64k");

		if (w)
			(void)!write(STDOUT_FILENO, w, strlen(w));
		_exit(w ? 1 : 0);
	}
	why[0] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		snprintf(why, sizeof(why), "a full tmpfs cannot be made here "
			 "(it takes root)");
	rmdir(dir);
	return why[0] ? why : NULL;
}

/* Each output on a tmpfs of 1 MiB, nhdr's filled first (its data files
 * elsewhere). */
START_TEST(test_disk_full)
{
	char *dir;
	const char *why;

	dir = work_dir("tmpfs", _i);
	why = mount_small_tmpfs("out", "1m");
	ck_assert_msg(!why, "%s", why);
	/* nhdr's header is small: the disk is full before it. */
	if (strstr(outputs[_i], ".nhdr")) {
		static char block[4096];
		FILE *f = fopen("out/filler", "w");

		ck_assert_ptr_nonnull(f);
		while (fwrite(block, 1, sizeof(block), f) == sizeof(block))
			;
		fclose(f);
	}
	assert_fails(_i, "out", 0, strerror(ENOSPC),
		     strstr(outputs[_i], ".nhdr") != NULL);
	ck_assert_int_eq(umount2("out", MNT_DETACH), 0);
	free(dir);
}
END_TEST

static const char *why_not_full(void)
{
	if (access("/dev/full", W_OK) != 0)
		return "no /dev/full to write to";
	if (!(bin = tu_parload_bin()))
		return "PARLOAD_BIN is not set";
	return NULL;
}

static Suite *suite(void)
{
	Suite *s = suite_create("cli_full");

	tcase_add_loop_test(tu_tcase(s, "full", 60), test_full, 0,
			    TU_COUNT(cases));
	add_outputs(tu_tcase(s, "fsize", 60), test_file_too_large, "fsize",
		    why_not_limited);
	return s;
}

static Suite *tmpfs_suite(void)
{
	Suite *s = suite_create("cli_full_tmpfs");

	add_outputs(tu_tcase(s, "tmpfs", 60), test_disk_full, "tmpfs",
		    why_not_written);
	return s;
}

static const tu_part parts[] = {
	{ "check_cli_full", why_not_full, suite },
	{ "check_cli_full_tmpfs", why_no_tmpfs, tmpfs_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
