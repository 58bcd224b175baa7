/*
 * check_streams.c - streams from pipes, sockets and other processes load
 * as their files do and are validated as files are; descriptors of
 * regular files load in every configuration and are left as they were;
 * bad descriptors are refused.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "matrix.h"
#include "testutil.h"

#define VERIFY PARLOAD_OPT_VERIFY_CRC

static const tu_shape shapes[] = {
	{ 0, 4, 4, PARLOAD_PIXEL_U8, 0 },
	{ 1, 96, 64, PARLOAD_PIXEL_U16, PARLOAD_FLAG_CRC32C },
	{ 300, 5, 3, PARLOAD_PIXEL_U8, 0 },
	{ 7, 301, 200, PARLOAD_PIXEL_F32, PARLOAD_FLAG_CRC32C },
};

/* Through a pipe, a socket and a non-blocking pipe, written in odd
 * pieces, a stream loads byte for byte as its file does. */
START_TEST(test_stream_equals_file)
{
	const tu_shape *s = &shapes[_i];
	static const size_t chunks[] = { 1, 333, 65536, 1 << 22 };
	char *path = tu_path("stream.raw");
	parload_dataset file, ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	tu_write_shape(path, s, 21);
	ck_assert_int_eq(tu_config_load(tu_parallel(2), VERIFY, path, &file,
					 &err),
			 0);
	data = tu_read_all(path, &len);
	for (int via = TU_VIA_PIPE; via <= TU_VIA_PIPE_NONBLOCK; via++) {
		for (int k = 0; k < TU_COUNT(chunks); k++) {
			/* A byte at a time is slow for big shapes. */
			if (chunks[k] == 1 && len > 100000)
				continue;
			/* The parallel loaders: a stream is read by one
			 * thread whatever the loader's workers. */
			const tu_config *c = tu_matrix(k % tu_matrix_size());

			ck_assert_msg(tu_config_load_fed(data, len, chunks[k],
							 via, c, VERIFY, &ds,
							 &err) == 0,
				      "via %d, chunk %zu: %s", via, chunks[k],
				      err.message);
			ck_assert_mem_eq(&ds.desc, &file.desc,
					 sizeof(ds.desc));
			if (s->views) {
				ck_assert_int_eq(
					memcmp(ds.headers, file.headers,
					       s->views * 32),
					0);
				ck_assert_int_eq(
					memcmp(ds.pixels, file.pixels,
					       s->views *
						       file.desc.payload_size),
					0);
			}
			ck_assert_uint_eq(ds.stats.bytes_read, len);
			ck_assert_uint_eq(ds.stats.threads, 1);
			ck_assert_int_eq(ds.stats.strategy,
					 PARLOAD_STRATEGY_SEQUENTIAL);
			parload_dataset_free(&ds);
		}
	}
	parload_dataset_free(&file);
	free(data);
	free(path);
}
END_TEST

/* A writer in another process: `cat FILE` into a pipe. */
START_TEST(test_stream_from_child_process)
{
	char *path = tu_path("forked.raw");
	parload_loader *l = tu_config_loader(tu_parallel(2), VERIFY);
	parload_dataset ds;
	parload_error err;
	tu_soa ref;
	int fds[2], status;
	pid_t pid;

	tu_write_stream(path, 40, 64, 32, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 4);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(126);
		close(fds[1]);
		execlp("cat", "cat", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ck_assert_msg(tu_load_fd(l, fds[0], "child", &ds, &err) ==
			      0,
		      "%s", err.message);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* A stream is validated as a file is. */
START_TEST(test_stream_errors)
{
	const tu_config *p1 = tu_parallel(1);
	char *path = tu_path("streamerr.raw");
	parload_dataset ds;
	parload_error err;
	unsigned char *data;
	size_t len;

	tu_write_stream(path, 4, 8, 8, PARLOAD_PIXEL_U8, 0, 1);
	data = tu_read_all(path, &len);
	data[len] = 'x'; /* the trailing byte */

	ck_assert_int_eq(tu_config_load_fed(data, 0, 64, TU_VIA_PIPE, p1, 0,
					    &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "stream is empty"), "%s",
		      err.message);
	ck_assert_int_eq(tu_config_load_fed(data, 30, 64, TU_VIA_SOCKET, p1, 0,
					    &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_msg(strstr(err.message, "inside the 64-byte file header"),
		      "%s", err.message);
	ck_assert_int_eq(tu_config_load_fed(data, len - 3, 64, TU_VIA_PIPE,
					    p1, 0, &ds, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_uint_eq(err.view, 3);
	ck_assert_uint_eq(err.offset, len - 3);
	ck_assert_int_eq(tu_config_load_fed(data, len + 1, 64, TU_VIA_PIPE,
					    p1, 0, &ds, &err),
			 PARLOAD_ETRAILING);
	ck_assert_uint_eq(err.offset, len);
	tu_assert_empty(&ds, "trailing");
	data[0] ^= 1;
	ck_assert_int_eq(tu_config_load_fed(data, len, 64, TU_VIA_PIPE, p1, 0,
					    &ds, &err),
			 PARLOAD_EMAGIC);
	ck_assert_msg(strncmp(err.message, "stream: ", 8) == 0, "%s",
		      err.message);
	free(data);
	free(path);
}
END_TEST

/* A regular file given as a descriptor: every strategy, wherever its
 * offset was, which is put back, and the descriptor stays open. */
START_TEST(test_fd_regular_file)
{
	const tu_config *m = tu_matrix(_i);
	char *path = tu_crc_stream("fd.raw", PARLOAD_FLAG_CRC32C);
	int fd = open(path, O_RDONLY);
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, 1000, SEEK_SET), 1000);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	l = tu_config_loader(m, VERIFY);
	ck_assert_msg(tu_load_fd(l, fd, "regular", &ds, &err) == 0,
		      "%s: %s", m->label, err.message);
	tu_assert_same(&ds, &ref);
	ck_assert_int_eq(ds.stats.strategy, m->strategy);
	ck_assert_uint_eq(ds.stats.crc_checked, TU_CRC_VIEWS);
	parload_dataset_free(&ds);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 1000);
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1);
	close(fd);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_fd_bad_descriptors)
{
	parload_loader *l = tu_config_loader(tu_parallel(2), 0);
	char *dir = tu_path("");
	parload_dataset ds;
	parload_error err;
	int fd;

	ck_assert_int_eq(tu_load_fd(l, -1, "x", &ds, &err),
			 PARLOAD_EOPEN);
	ck_assert_int_eq(tu_load_fd(l, 1000000, NULL, &ds, &err),
			 PARLOAD_EOPEN);
	ck_assert_msg(strncmp(err.message, "fd 1000000: ", 12) == 0, "%s",
		      err.message);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(tu_load_fd(l, fd, "dir", &ds, &err),
			 PARLOAD_ENOTREG);
	close(fd);
	/* A character device is a stream: /dev/null is an empty one, and
	 * /dev/zero is not a raw image stream. */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(tu_load_fd(l, fd, "null", &ds, &err),
			 PARLOAD_ETRUNCATED);
	close(fd);
	fd = open("/dev/zero", O_RDONLY);
	ck_assert_int_eq(tu_load_fd(l, fd, "zero", &ds, &err),
			 PARLOAD_EMAGIC);
	close(fd);
	ck_assert_int_eq(tu_load_fd(NULL, 0, "x", &ds, &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(tu_load_fd(l, 0, "x", NULL, &err),
			 PARLOAD_EINVAL);
	parload_loader_free(l);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("streams");
	TCase *t = tu_tcase(s, "streams", 60);

	tcase_add_loop_test(t, test_stream_equals_file, 0, TU_COUNT(shapes));
	tcase_add_test(t, test_stream_from_child_process);
	tcase_add_test(t, test_stream_errors);

	t = tu_tcase(s, "descriptors", 60);
	tu_add_matrix_test(t, test_fd_regular_file);
	tcase_add_test(t, test_fd_bad_descriptors);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
