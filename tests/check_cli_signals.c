/*
 * check_cli_signals.c - SIGINT and SIGTERM while `parload extract` loads
 * a stream from a pipe: the command ends by that signal (a shell sees 128
 * + its number), says so in one line, and leaves no file, temporary or
 * half written.
 *
 * The test holds the pipe: the command has part of the stream and waits
 * for the rest when the signal comes, so that it cannot have finished
 * first.  With batches (--progress) the next batch cancels the load; a
 * pipe that stalls is ended by the command's one-second alarm; without
 * batches the signal ends the command at once.  A file's load with a
 * progress line (drawn from the load's counters) is cancelled at its
 * workers' next read.  A signal while a TIFF, an HDF5 file or a Zarr
 * store is being written (parload_save writing the command's temporary
 * file or directory) leaves no file either.  $PARLOAD_BIN is the command (exit 77 without it).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *bin;

/* 64 views of 512 x 512 u16: the default batches (4 MiB) are 8 views. */
#define VIEWS 64
#define BIG_VIEW ((size_t)32 + 512 * 512 * 2)
/* What the test writes before the signal: the header and 20 views. */
#define PART (64 + 20 * BIG_VIEW)

typedef struct sig_case {
	const char *name;
	int sig;
	bool batches;  /* --progress: batches, which cancel the load */
	bool rest;     /* the rest of the stream comes after the signal */
	const char *line; /* the one line on standard error */
} sig_case;

static const sig_case cases[] = {
	{ "SIGINT, views still arriving", SIGINT, true, true,
	  ": load canceled after " },
	{ "SIGINT, the pipe stalls", SIGINT, true, false,
	  "parload: interrupted\n" },
	{ "SIGTERM, views still arriving", SIGTERM, true, true,
	  ": load canceled after " },
	{ "SIGTERM, the pipe stalls", SIGTERM, true, false,
	  "parload: interrupted\n" },
	{ "SIGINT, no batches", SIGINT, false, false,
	  "parload: interrupted\n" },
	{ "SIGTERM, no batches", SIGTERM, false, false,
	  "parload: interrupted\n" },
};

/* Wait (Check's timeout ends a hang) until done() says so; the command
 * must not end meanwhile. */
static void wait_until(tu_proc *p, bool (*done)(const tu_proc *, void *),
		       void *arg, const char *what)
{
	const struct timespec nap = { 0, 5 * 1000 * 1000 };
	tu_result r;

	while (!done(p, arg)) {
		if (tu_ended(p, &r))
			ck_abort_msg("ended (status %d) before %s: %s",
				     r.status, what, r.err);
		nanosleep(&nap, NULL);
	}
}

static bool err_holds(const tu_proc *p, void *text)
{
	char *err = tu_err_so_far(p);
	bool found = strstr(err, text) != NULL;

	free(err);
	return found;
}

static bool dir_holds_a_file(const tu_proc *p, void *dir)
{
	(void)p;
	return tu_count_entries(dir) > 0;
}

START_TEST(test_signal)
{
	const sig_case *c = &cases[_i];
	char name[64], *in, *out, *dir;
	unsigned char *data;
	const char *argv[8];
	tu_result r;
	tu_proc p;
	size_t len;
	tu_cmd cmd;

	snprintf(name, sizeof(name), "in-%d.raw", _i);
	in = tu_path(name);
	tu_write_stream(in, VIEWS, 512, 512, PARLOAD_PIXEL_U16, 0, 1);
	data = tu_read_all(in, &len);
	snprintf(name, sizeof(name), "out-%d", _i);
	dir = tu_path(name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(name, sizeof(name), "out-%d/s.npy", _i);
	out = tu_path(name);
	argv[0] = bin;
	argv[1] = "extract";
	argv[2] = c->batches ? "--progress" : "--no-progress";
	argv[3] = "-o";
	argv[4] = out;
	argv[5] = "-";
	argv[6] = NULL;
	cmd = (tu_cmd){ .argv = argv, .in_pipe = true, .timeout = 60 };
	tu_spawn(&cmd, &p);
	ck_assert(tu_feed(p.in, data, PART));
	/* Mid-load: a batch drawn, or (without batches) the temporary file
	 * made before the load starts. */
	if (c->batches)
		wait_until(&p, err_holds, "8/64 views", "the first batch");
	else
		wait_until(&p, dir_holds_a_file, dir, "its temporary file");
	ck_assert_msg(tu_count_entries(dir) == 1,
		      "no temporary file beside %s", out);
	ck_assert_int_eq(kill(p.pid, c->sig), 0);
	if (c->rest) /* stops early when the command stops reading */
		tu_feed(p.in, data + PART, len - PART);
	tu_wait(&p, &r);
	ck_assert_msg(r.status == 128 + c->sig, "%s: status %d: %s", c->name,
		      r.status, r.err);
	ck_assert_msg(strstr(r.err, c->line), "%s: %s", c->name, r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		      "%s: more than one line: %s", c->name, r.err);
	ck_assert_msg(tu_count_entries(dir) == 0, "%s: a file left in %s",
		      c->name, dir);
	tu_result_free(&r);
	free(data);
	free(in);
	free(out);
	free(dir);
}
END_TEST

/* A file's load with a progress line (--progress): once a line is drawn
 * mid-load (64 views of 2 MiB read 512 bytes at a time, by one thread),
 * SIGINT cancels it at the worker's next read: status 130, a message
 * naming the views being read, no file left. */
START_TEST(test_file_with_a_line)
{
	char *in = tu_path("big-sparse.raw"), *dir = tu_path("out-file");
	char *out = tu_path("out-file/s.npy");
	const char *argv[] = { bin, "extract", "--progress", "--threads", "1",
			       "--max-read", "512", "--raw",
			       "width=1024,height=1024,type=u16", "-o", out,
			       in, NULL };
	tu_cmd cmd = { .argv = argv, .timeout = 60 };
	tu_result r;
	tu_proc p;
	int fd = open(in, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)128 << 20), 0);
	close(fd);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	tu_spawn(&cmd, &p);
	wait_until(&p, err_holds, "/64 views, ", "a line mid-load");
	ck_assert_int_eq(kill(p.pid, SIGINT), 0);
	tu_wait(&p, &r);
	ck_assert_msg(r.status == 128 + SIGINT, "status %d: %s", r.status,
		      r.err);
	ck_assert_msg(strstr(r.err, ": load canceled while views 0 to 63 "
				    "of 64 were read"),
		      "%s", r.err);
	ck_assert_msg(tu_count_entries(dir) == 0, "a file left in %s", dir);
	tu_result_free(&r);
	free(in);
	free(out);
	free(dir);
}
END_TEST

/* The size of the one hidden entry of dir (a temporary file; of a
 * temporary store, the entries it holds), or -1 when there is none. */
static off_t hidden_size(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	off_t size = -1;
	char sub[4096];

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") &&
		    strcmp(e->d_name, "..") &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0) {
			size = st.st_size;
			snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
			if (S_ISDIR(st.st_mode))
				size = tu_count_entries(sub);
		}
	closedir(d);
	return size;
}

/* SIGINT or SIGTERM while OUT.h5, OUT.tif or OUT.zarr is written, caught
 * half way (its temporary file holds bytes, its temporary store files;
 * 128 MiB of pixels to write): status 128 + the signal, "interrupted",
 * and nothing in OUT's directory, the temporary file or store
 * parload_save writes included (a store's chunks are written with the
 * signal held, then the store removed whole).  A run that finished
 * before it could be caught writing is tried again. */
static const struct write_case {
	const char *ext;
	int sig;
} write_cases[] = {
	{ "h5", SIGINT }, { "h5", SIGTERM }, { "tif", SIGINT },
	{ "tif", SIGTERM }, { "zarr", SIGINT }, { "zarr", SIGTERM },
};

START_TEST(test_signal_while_writing)
{
	const struct write_case *c = &write_cases[_i];
	const struct timespec nap = { 0, 500 * 1000 };
	char *in = tu_path("write-in.raw"), name[4200], *dir, *out;
	const char *argv[] = { bin, "extract", "--no-progress", "--raw",
			       "width=512,height=512,type=u16", "-o", NULL,
			       NULL, NULL };
	bool caught = false;
	tu_result r;
	tu_proc p;

	/* 256 views of 512 x 512 u16: 128 MiB, sparse (quick to make, under
	 * valgrind too). */
	if (access(in, F_OK) != 0) {
		tu_write_file(in, "", 0);
		tu_truncate(in, (uint64_t)128 << 20);
	}
	snprintf(name, sizeof(name), "write-%d", _i);
	dir = tu_path(name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(name, sizeof(name), "write-%d/s.%s", _i, c->ext);
	out = tu_path(name);
	argv[6] = out;
	argv[7] = in;
	for (int attempt = 0; attempt < 5 && !caught; attempt++) {
		tu_spawn(&(tu_cmd){ .argv = argv, .timeout = 120 }, &p);
		while (!(caught = hidden_size(dir) > 0) && !tu_ended(&p, &r))
			nanosleep(&nap, NULL);
		if (!caught) { /* done before it was seen writing */
			ck_assert_msg(r.status == 0, "status %d: %s", r.status,
				      r.err);
			tu_result_free(&r);
			snprintf(name, sizeof(name), "rm -rf '%s'", out);
			ck_assert_int_eq(system(name), 0);
			continue;
		}
		ck_assert_int_eq(kill(p.pid, c->sig), 0);
		tu_wait(&p, &r);
	}
	ck_assert_msg(caught, "never caught writing %s", out);
	ck_assert_msg(r.status == 128 + c->sig, "status %d: %s", r.status,
		      r.err);
	ck_assert_msg(strstr(r.err, "interrupted"), "%s", r.err);
	ck_assert_msg(tu_count_entries(dir) == 0, "a file left in %s (%s)", dir,
		      hidden_size(dir) >= 0 ? "a temporary file" : "OUT");
	tu_result_free(&r);
	free(in);
	free(out);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_signals");
	TCase *t;

	if (!(bin = tu_parload_bin()))
		return tu_skip("check_cli_signals", "PARLOAD_BIN is not set");
	tcase_add_loop_test(tu_tcase(s, "signals", 90), test_signal, 0,
			    TU_COUNT(cases));
	tcase_add_test(tu_tcase(s, "file", 90), test_file_with_a_line);
	t = tu_tcase(s, "writing", 240);
	for (int i = 0; i < (int)TU_COUNT(write_cases); i++) {
		/* Not added where it cannot run: said as a skipped case. */
		if (strcmp(write_cases[i].ext, "h5") == 0 &&
		    !parload_has_hdf5())
			printf("writing %s: SKIP: no HDF5 in this build\n",
			       write_cases[i].ext);
		else
			tcase_add_loop_test(t, test_signal_while_writing, i,
					    i + 1);
	}
	return tu_run(s);
}
