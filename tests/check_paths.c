/*
 * check_paths.c - paths that are not regular files: FIFOs (refused
 * without waiting for a writer), dangling symbolic links, character
 * devices, empty files, in every configuration.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

/* A FIFO is refused at once (opening it must not wait for a writer), a
 * dangling symbolic link says so, /dev/null is a character device and an
 * empty file is too short, for every strategy. */
START_TEST(test_not_regular_files)
{
	const tu_config *m = tu_matrix(_i);
	char *fifo = tu_path("fifo");
	char *link = tu_path("dangling");
	char *empty = tu_path("empty.raw");
	parload_dataset ds;
	parload_error err;

	unlink(fifo);
	unlink(link);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("no-such-target", link), 0);
	tu_write_file(empty, "", 0);

	ck_assert_int_eq(tu_config_load(m, 0, fifo, &ds, &err),
			 PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a FIFO)"), "%s", err.message);
	tu_assert_empty(&ds, "fifo");
	ck_assert_int_eq(tu_config_load(m, 0, link, &ds, &err), PARLOAD_EOPEN);
	ck_assert_msg(strstr(err.message, "dangling symbolic link"), "%s",
		      err.message);
	ck_assert_int_eq(tu_config_load(m, 0, "/dev/null", &ds, &err),
			 PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "character device"), "%s",
		      err.message);
	ck_assert_int_eq(tu_config_load(m, 0, empty, &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "0 bytes"), "%s", err.message);
	free(fifo);
	free(link);
	free(empty);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("paths");
	TCase *t = tu_tcase(s, "paths", 60);

	tu_add_matrix_test(t, test_not_regular_files);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
