/*
 * check_cli_tty.c - progress on a terminal: the command's standard error
 * is a pseudo-terminal that this program reads.  --progress draws there,
 * --no-progress and --quiet draw nothing; the report on standard output
 * is the same.  Skipped (exit 77) where no pseudo-terminal can be opened,
 * or without $PARLOAD_BIN.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *bin;

typedef struct tty_case {
	const char *name;
	const char *option;
	bool drawn;      /* "40/40 views, " on the terminal */
	bool reported;   /* the report line on standard output */
} tty_case;

static const tty_case cases[] = {
	{ "--progress draws", "--progress", true, true },
	{ "--no-progress draws nothing", "--no-progress", false, true },
	{ "--quiet draws nothing", "--quiet", false, false },
};

/* Open a pseudo-terminal: its master (non-blocking) in *master, the
 * path of its other end in slave (64 bytes); -1 with errno if there is
 * none. */
static int open_pty(int *master, char *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	if (m < 0)
		return -1;
	if (grantpt(m) != 0 || unlockpt(m) != 0 || !ptsname(m) ||
	    strlen(ptsname(m)) >= 64) {
		close(m);
		return -1;
	}
	strcpy(slave, ptsname(m));
	fcntl(m, F_SETFL, O_NONBLOCK);
	*master = m;
	return 0;
}

/* Append what the terminal has to *buf (of *len bytes). */
static void drain(int master, char **buf, size_t *len)
{
	char chunk[4096];
	ssize_t k;

	while ((k = read(master, chunk, sizeof(chunk))) > 0) {
		*buf = realloc(*buf, *len + (size_t)k + 1);
		ck_assert_ptr_nonnull(*buf);
		memcpy(*buf + *len, chunk, (size_t)k);
		*len += (size_t)k;
		(*buf)[*len] = '\0';
	}
}

START_TEST(test_tty)
{
	const struct timespec nap = { 0, 5 * 1000 * 1000 };
	const tty_case *c = &cases[_i];
	char slave[64], *in = tu_path("in.raw"), *tty = calloc(1, 1);
	const char *argv[] = { bin, c->option, in, NULL };
	int master, held;
	size_t len = 0;
	tu_result r;
	tu_proc p;

	ck_assert_ptr_nonnull(tty);
	tu_write_stream(in, 40, 512, 512, PARLOAD_PIXEL_U16, 0, 1);
	ck_assert_msg(open_pty(&master, slave) == 0, "pty: %s",
		      strerror(errno));
	/* Held open here, the terminal keeps what the command wrote after
	 * the command has gone. */
	held = open(slave, O_RDWR | O_NOCTTY);
	ck_assert_int_ge(held, 0);
	tu_spawn(&(tu_cmd){ .argv = argv, .err = slave, .timeout = 60 }, &p);
	while (!tu_ended(&p, &r)) {
		drain(master, &tty, &len);
		nanosleep(&nap, NULL);
	}
	drain(master, &tty, &len);
	ck_assert_msg(r.status == 0, "%s: status %d: %s", c->name, r.status,
		      tty);
	ck_assert_msg(!strstr(tty, "40/40 views, ") == !c->drawn, "%s: %s",
		      c->name, tty);
	ck_assert_msg(!strstr(tty, "views, ") == !c->drawn, "%s: %s", c->name,
		      tty);
	ck_assert_msg(!strstr(r.out, ": 40 views 512x512 u16, ") ==
			      !c->reported,
		      "%s: %s", c->name, r.out);
	tu_result_free(&r);
	close(held);
	close(master);
	free(tty);
	free(in);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_tty");
	char slave[64];
	int master;

	if (open_pty(&master, slave) != 0)
		return tu_skip("check_cli_tty", "no pseudo-terminal to open");
	close(master);
	if (!(bin = tu_parload_bin()))
		return tu_skip("check_cli_tty", "PARLOAD_BIN is not set");
	tcase_add_loop_test(tu_tcase(s, "tty", 60), test_tty, 0,
			    TU_COUNT(cases));
	return tu_run(s);
}
