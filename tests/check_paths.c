/*
 * check_paths.c - paths that are not regular files, in every
 * configuration: a FIFO is read as a stream (as cat reads it, whatever the
 * strategy), /dev/null is an empty stream, a directory is not a file, a
 * dangling symbolic link says so and an empty file is too short.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

typedef struct fifo_feed {
	const char *path;
	const unsigned char *data;
	size_t len;
} fifo_feed;

/* Open the FIFO for writing (which waits for its reader) and write the
 * data in 1000-byte pieces. */
static void *fifo_writer(void *arg)
{
	const fifo_feed *f = arg;
	size_t done = 0;
	int fd = open(f->path, O_WRONLY | O_CLOEXEC);

	while (fd >= 0 && done < f->len) {
		size_t n = f->len - done < 1000 ? f->len - done : 1000;
		ssize_t k = write(fd, f->data + done, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		done += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_fifo_is_a_stream)
{
	const tu_config *m = tu_matrix(_i);
	char *fifo = tu_path("fifo");
	char *file = tu_path("fifo-src.raw");
	parload_dataset ds;
	parload_error err;
	pthread_t writer;
	fifo_feed f;
	tu_soa ref;

	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	tu_write_stream(file, 9, 16, 4, PARLOAD_PIXEL_U16, 0, 3);
	ck_assert_int_eq(tu_serial_read(file, &ref), 0);
	f.path = fifo;
	f.data = tu_read_all(file, &f.len);
	ck_assert_int_eq(pthread_create(&writer, NULL, fifo_writer, &f), 0);
	ck_assert_msg(tu_config_load(m, 0, fifo, &ds, &err) == 0, "%s",
		      err.message);
	pthread_join(writer, NULL);
	tu_assert_same(&ds, &ref);
	ck_assert_int_eq(ds.stats.strategy, PARLOAD_STRATEGY_SEQUENTIAL);
	parload_dataset_free(&ds);
	tu_soa_free(&ref);
	free((void *)f.data);
	free(fifo);
	free(file);
}
END_TEST

START_TEST(test_not_regular_files)
{
	const tu_config *m = tu_matrix(_i);
	char *link = tu_path("dangling");
	char *empty = tu_path("empty.raw");
	parload_dataset ds;
	parload_error err;

	unlink(link);
	ck_assert_int_eq(symlink("no-such-target", link), 0);
	tu_write_file(empty, "", 0);

	ck_assert_int_eq(tu_config_load(m, 0, link, &ds, &err), PARLOAD_EOPEN);
	ck_assert_msg(strstr(err.message, "dangling symbolic link"), "%s",
		      err.message);
	ck_assert_int_eq(tu_config_load(m, 0, "/dev/null", &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "stream is empty"), "%s",
		      err.message);
	tu_assert_empty(&ds, "/dev/null");
	ck_assert_int_eq(tu_config_load(m, 0, "/", &ds, &err),
			 PARLOAD_ENOTREG);
	ck_assert_msg(strstr(err.message, "(a directory)"), "%s", err.message);
	ck_assert_int_eq(tu_config_load(m, 0, empty, &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "0 bytes"), "%s", err.message);
	free(link);
	free(empty);
}
END_TEST

/* A long path that cannot be opened: the message keeps the reason,
 * whatever the path's length (its middle is left out instead). */
START_TEST(test_long_path_keeps_reason)
{
	static const struct {
		size_t len;
		const char *reason;
	} cases[] = {
		{600, "No such file or directory"},
		{5000, "File name too long"},
	};
	parload_options o;
	parload_dataset ds;
	parload_error err;

	parload_options_init(&o);
	o.error = &err;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *dir = tu_path("");
		size_t n = strlen(dir);
		char *path = malloc(cases[i].len + 1);

		ck_assert_ptr_nonnull(path);
		memcpy(path, dir, n);
		/* Directories of 99 letters (none of them there). */
		for (size_t k = n; k < cases[i].len; k++)
			path[k] = (k - n) % 100 == 99 ? '/' : 'n';
		memcpy(path + cases[i].len - 6, "/a.raw", 7);
		ck_assert_int_eq(parload_load(path, &o, &ds),
				 PARLOAD_EOPEN);
		ck_assert_uint_lt(strlen(err.message), sizeof(err.message));
		ck_assert_msg(strncmp(err.message, dir, n) == 0, "%s",
			      err.message);
		ck_assert_msg(strstr(err.message, "..."), "%s", err.message);
		ck_assert_msg(strstr(err.message, "nn/a.raw: cannot open "
						  "file: "),
			      "%s", err.message);
		ck_assert_msg(strstr(err.message, cases[i].reason), "%s",
			      err.message);
		free(path);
		free(dir);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("paths");
	TCase *t = tu_tcase(s, "paths", 60);

	tu_add_matrix_test(t, test_fifo_is_a_stream);
	tu_add_matrix_test(t, test_not_regular_files);
	tcase_add_test(t, test_long_path_keeps_reason);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
