/*
 * check_tempfile.c - a file written whole or not at all, the one way
 * every writer of libparload and the command does it (src/io/tempfile.c):
 * parload_temp_create's hidden name beside the output, its mode, its
 * failures; parload_temp_place refusing an existing file (atomically,
 * link(2)) or replacing it with PARLOAD_SAVE_FORCE; parload_save writing
 * the caller's temporary file and leaving it to the caller; a Zarr
 * store's directory made, placed and removed whole; and
 * parload_nrrd_write's failures naming the header, not its temporary
 * file, and leaving neither.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

/* A fresh directory of the scratch one. */
static char *new_dir(void)
{
	static int serial;
	char name[32], *dir;

	snprintf(name, sizeof(name), "d-%d-%ld", serial++, (long)getpid());
	dir = tu_path(name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	return dir;
}

static char *join(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);

	ck_assert_ptr_nonnull(p);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

START_TEST(test_create)
{
	char *dir = new_dir(), *path = join(dir, "out.h5"), tmp[4096];
	const size_t stem = strlen(dir) + strlen("/.out.h5.");
	parload_error err;
	struct stat st;

	umask(022);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err), 0);
	/* DIR/.NAME.XXXXXX: six letters or digits. */
	ck_assert_msg(strncmp(tmp, dir, strlen(dir)) == 0 &&
			      strncmp(tmp + strlen(dir), "/.out.h5.", 9) == 0 &&
			      strlen(tmp) == stem + 6,
		      "%s", tmp);
	for (size_t i = stem; i < stem + 6; i++)
		ck_assert_msg(isalnum((unsigned char)tmp[i]), "%s", tmp);
	ck_assert_int_eq(lstat(tmp, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	/* A second one: another name. */
	{
		char tmp2[4096];

		ck_assert_int_eq(parload_temp_create(path, tmp2, sizeof(tmp2),
						     &err), 0);
		ck_assert_str_ne(tmp, tmp2);
		ck_assert_int_eq(unlink(tmp2), 0);
	}
	ck_assert_int_eq(unlink(tmp), 0);
	/* The umask as any new file has it. */
	umask(077);
	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err), 0);
	ck_assert_int_eq(lstat(tmp, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(unlink(tmp), 0);
	umask(022);
	/* A name without a directory: beside it in ".". */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(parload_temp_create("x.tif", tmp, sizeof(tmp), &err),
			 0);
	ck_assert_msg(strncmp(tmp, ".x.tif.", 7) == 0, "%s", tmp);
	ck_assert_int_eq(unlink(tmp), 0);
	ck_assert_int_eq(tu_count_entries(dir), 0);
	free(path);
	free(dir);
}
END_TEST

START_TEST(test_create_fails)
{
	char *dir = new_dir(), *path = join(dir, "no/such/out.tif");
	char tmp[4096], small[8];
	parload_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err),
			 PARLOAD_EWRITE);
	ck_assert_str_eq(tmp, "");
	ck_assert_int_eq(err.sys_errno, ENOENT);
	ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0 &&
			      strstr(err.message, strerror(ENOENT)),
		      "%s", err.message);
	free(path);
	path = join(dir, "out.tif");
	ck_assert_int_eq(parload_temp_create(path, small, sizeof(small), &err),
			 PARLOAD_EINVAL);
	ck_assert_str_eq(small, "");
	ck_assert_int_eq(parload_temp_create("sub/", tmp, sizeof(tmp), &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(tu_count_entries(dir), 0);
	free(path);
	free(dir);
}
END_TEST

/* Put in place: a new name, then one that exists (refused, both files as
 * they were), then replaced with force. */
START_TEST(test_place)
{
	char *dir = new_dir(), *path = join(dir, "out.npy"), tmp[4096];
	parload_error err;
	unsigned char *got;
	size_t len;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err), 0);
	tu_write_file(tmp, "first", 5);
	ck_assert_int_eq(parload_temp_place(tmp, path, 0, &err), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(tu_count_entries(dir), 1);

	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err), 0);
	tu_write_file(tmp, "second", 6);
	ck_assert_int_eq(parload_temp_place(tmp, path, 0, &err),
			 PARLOAD_EEXIST);
	ck_assert_int_eq(err.code, PARLOAD_EEXIST);
	ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0,
		      "%s", err.message);
	got = tu_read_all(path, &len);
	ck_assert(len == 5 && memcmp(got, "first", 5) == 0);
	free(got);
	ck_assert_int_eq(access(tmp, F_OK), 0);

	/* A dangling symbolic link is a name that exists too. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink("nowhere", path), 0);
	ck_assert_int_eq(parload_temp_place(tmp, path, 0, &err),
			 PARLOAD_EEXIST);
	ck_assert_int_eq(unlink(path), 0);
	tu_write_file(path, "first", 5);

	ck_assert_int_eq(parload_temp_place(tmp, path, PARLOAD_SAVE_FORCE,
					    &err), 0);
	got = tu_read_all(path, &len);
	ck_assert(len == 6 && memcmp(got, "second", 6) == 0);
	free(got);
	ck_assert_int_eq(tu_count_entries(dir), 1);

	/* Anything else: PARLOAD_EWRITE naming the path and the cause. */
	ck_assert_int_eq(parload_temp_place(tmp, path, 0, &err),
			 PARLOAD_EWRITE);
	ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0 &&
			      strstr(err.message, strerror(ENOENT)),
		      "%s", err.message);
	free(path);
	free(dir);
}
END_TEST

static void stack_of(parload_stack *st, uint16_t *px, uint64_t n)
{
	for (uint64_t i = 0; i < n * 4 * 3; i++)
		px[i] = (uint16_t)i;
	memset(st, 0, sizeof(*st));
	st->pixels = px;
	st->pixel_type = PARLOAD_PIXEL_U16;
	st->layout = PARLOAD_LAYOUT_VIEWS;
	st->n = n;
	st->rows = 3;
	st->cols = 4;
}

/* parload_save with the caller's temporary file: it writes that file,
 * makes none of its own and puts nothing in place; the caller does. */
START_TEST(test_save_into_callers_temp)
{
	char *dir = new_dir(), *path = join(dir, "out.tif"), tmp[4096];
	parload_save_options o;
	parload_dataset ds;
	parload_error err;
	parload_stack st;
	uint16_t px[2 * 12];
	struct stat sb;

	stack_of(&st, px, 2);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_temp_create(path, tmp, sizeof(tmp), &err), 0);
	parload_save_options_init(&o);
	o.tmp = tmp;
	ck_assert_int_eq(parload_save(path, &st, &o, &err), 0);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(stat(tmp, &sb), 0);
	ck_assert_int_gt(sb.st_size, (off_t)sizeof(px));
	ck_assert_int_eq(parload_temp_place(tmp, path, 0, &err), 0);
	memset(&ds, 0, sizeof(ds));
	ck_assert_int_eq(parload_load(path, NULL, &ds), 0);
	ck_assert(ds.shape.views == 2 && memcmp(ds.pixels, px, sizeof(px)) ==
						   0);
	parload_dataset_free(&ds);

	/* Without one: its own, and an existing path refused, nothing left
	 * beside it. */
	ck_assert_int_eq(parload_save(path, &st, NULL, &err), PARLOAD_EEXIST);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	o.tmp = NULL;
	o.flags = PARLOAD_SAVE_FORCE;
	ck_assert_int_eq(parload_save(path, &st, &o, &err), 0);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	free(path);
	free(dir);
}
END_TEST

/* A Zarr store, the caller's way: parload_temp_create_dir's hidden
 * directory, parload_save filling it, parload_save_place putting it in
 * place (refusing an existing path, replacing only a store with force),
 * parload_temp_remove removing a tree without following its links. */
START_TEST(test_store_place)
{
	char *dir = new_dir(), *path = join(dir, "out.zarr"), tmp[4096];
	char *keep = join(dir, "keep"), *link = NULL, *other = NULL;
	parload_save_options o;
	parload_error err;
	parload_stack st;
	uint16_t px[2 * 12];
	struct stat sb;

	stack_of(&st, px, 2);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_temp_create_dir(path, tmp, sizeof(tmp), &err),
			 0);
	ck_assert_msg(strstr(tmp, "/.out.zarr.") != NULL, "%s", tmp);
	ck_assert(stat(tmp, &sb) == 0 && S_ISDIR(sb.st_mode));
	parload_save_options_init(&o);
	o.tmp = tmp;
	ck_assert_int_eq(parload_save(path, &st, &o, &err), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* .zarray, .zattrs, 0.0.0, 1.0.0 */
	ck_assert_int_eq(tu_count_entries(tmp), 4);
	o.tmp = NULL;
	ck_assert_int_eq(parload_save_place(tmp, path, &o, &err), 0);
	ck_assert_int_eq(tu_count_entries(dir), 1);

	/* An existing path: refused, the caller's directory left. */
	ck_assert_int_eq(parload_temp_create_dir(path, tmp, sizeof(tmp), &err),
			 0);
	ck_assert_int_eq(parload_save_place(tmp, path, &o, &err),
			 PARLOAD_EEXIST);
	ck_assert_int_eq(access(tmp, F_OK), 0);
	/* With force, a store is replaced... */
	o.flags = PARLOAD_SAVE_FORCE;
	ck_assert_int_eq(parload_save_place(tmp, path, &o, &err), 0);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	ck_assert_int_eq(tu_count_entries(path), 0);
	/* ...and nothing else: the empty directory now there is none. */
	ck_assert_int_eq(parload_temp_create_dir(path, tmp, sizeof(tmp), &err),
			 0);
	ck_assert_int_eq(parload_save_place(tmp, path, &o, &err),
			 PARLOAD_EEXIST);
	ck_assert_msg(strstr(err.message, "not a Zarr store"), "%s",
		      err.message);

	/* The tree goes whole; a link in it goes, never what it names. */
	tu_write_file(keep, "k", 1);
	link = join(tmp, "link");
	other = join(tmp, "sub");
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_int_eq(mkdir(other, 0700), 0);
	free(other);
	other = join(tmp, "sub/f");
	tu_write_file(other, "f", 1);
	ck_assert_int_eq(parload_temp_remove(tmp), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(access(keep, F_OK), 0);
	ck_assert_int_eq(tu_count_entries(dir), 2); /* out.zarr, keep */
	free(other);
	free(link);
	free(keep);
	free(path);
	free(dir);
}
END_TEST

/* A write that fails (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG, as a full
 * disk's ENOSPC): the message names the output and the cause, never the
 * temporary file, and nothing is left. */
START_TEST(test_write_fails)
{
	char *dir = new_dir(), *path = join(dir, "x.nhdr");
	char *data = join(dir, "x.raw"), *tif = join(dir, "big.tif");
	const char *files[] = { data };
	struct rlimit lim = { 64, RLIM_INFINITY };
	uint16_t px[2 * 12];
	parload_error err, err2;
	parload_stack st;
	parload_desc d;
	struct rlimit was;
	int rc, rc2;

	stack_of(&st, px, 2);
	tu_write_file(data, px, sizeof(px));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_desc_parse("width=4,height=3,type=u16,count=2",
					    &d, &err), 0);

	/* The limit only around the two calls: Check's own reports are
	 * files too. */
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
	lim.rlim_max = was.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	memset(&err2, 0, sizeof(err2));
	rc = parload_nrrd_write(path, &d, files, 1, &err);
	rc2 = parload_save(tif, &st, NULL, &err2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
	ck_assert_int_eq(rc, PARLOAD_EWRITE);
	ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0 &&
			      strstr(err.message, strerror(EFBIG)) &&
			      !strstr(err.message, "/.x.nhdr."),
		      "%s", err.message);
	ck_assert_int_eq(rc2, PARLOAD_EWRITE);
	ck_assert_msg(strncmp(err2.message, tif, strlen(tif)) == 0 &&
			      strstr(err2.message, strerror(EFBIG)) &&
			      !strstr(err2.message, "/.big.tif."),
		      "%s", err2.message);
	ck_assert_int_eq(tu_count_entries(dir), 1); /* x.raw */
	free(path);
	free(data);
	free(tif);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tempfile");
	TCase *t = tu_tcase(s, "tempfile", 30);

	tcase_add_test(t, test_create);
	tcase_add_test(t, test_create_fails);
	tcase_add_test(t, test_place);
	tcase_add_test(t, test_save_into_callers_temp);
	tcase_add_test(t, test_store_place);
	tcase_add_test(t, test_write_fails);
	return tu_run(s);
}
