/*
 * check_reference.c - libparload against an independent implementation of
 * docs/FORMAT.md.
 *
 * tests/refstream.py was written from the format document alone, in Python
 * with its own content generator.  For each shape below it writes a stream
 * and, next to it, the structure of arrays a loader must produce
 * (FILE.headers, FILE.pixels).  These tests load the streams with
 * libparload at several thread counts and with every strategy and compare
 * byte for byte, and check that both implementations reject damaged files
 * with the same error.
 *
 * The tests need python3 ($PYTHON3, set by `make check`); without it they
 * are skipped (exit status 77).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parload.h"
#include "testutil.h"

static const char *python;
static char script[4096];
static char tmpdir[4096];

/* ---- what refstream.py writes ---- */

typedef struct shape {
	unsigned views, width, height;
	const char *type;
	int crc;
} shape;

static const shape shapes[] = {
	{ 0, 4, 4, "u16", 0 },      /* empty stream */
	{ 0, 3, 5, "f64", 1 },      /* empty, with the CRC flag */
	{ 1, 1, 1, "u8", 0 },       /* one view of one pixel */
	{ 1, 1, 1, "f64", 1 },
	{ 1, 17, 3, "u16", 1 },     /* one view, odd size */
	{ 3, 7, 5, "u8", 1 },       /* every pixel type, odd sizes */
	{ 3, 7, 5, "u16", 0 },
	{ 3, 7, 5, "i16", 1 },
	{ 3, 7, 5, "u32", 0 },
	{ 3, 7, 5, "i32", 1 },
	{ 3, 7, 5, "f32", 0 },
	{ 3, 7, 5, "f64", 1 },
	{ 13, 33, 7, "i16", 1 },    /* more views than most thread counts */
	{ 6, 999, 1, "u8", 0 },     /* payloads of odd length */
	{ 100, 3, 1, "u8", 0 },     /* many tiny views */
	{ 40, 896, 8, "u16", 1 },   /* the reference shape, fewer rows */
	{ 1, 1024, 300, "u32", 1 }, /* one large view split between workers */
	{ 2, 4099, 129, "u8", 1 },  /* two large views of odd size */
};
#define NSHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))

/* Written with every reserved byte non-zero and version_minor 7. */
static const shape reserved_shape = { 5, 9, 3, "i32", 1 };

typedef struct damage {
	const char *actions; /* refstream.py corrupt actions */
	int code;            /* what libparload must return */
} damage;

/* Applied to damage_shape, 4 views of 10 x 3 u16 pixels with CRCs: payload
 * 60 bytes, records of 92, a file of 64 + 4 * 92 = 432 bytes. */
static const shape damage_shape = { 4, 10, 3, "u16", 1 };
static const damage damages[] = {
	{ "set:magic=8952415700000000", PARLOAD_EMAGIC },
	{ "set:version_major=2", PARLOAD_EVERSION },
	{ "set:version_major=0", PARLOAD_EVERSION },
	{ "set:file_header_size=128", PARLOAD_EHDRSIZE },
	{ "set:view_header_size=64", PARLOAD_EHDRSIZE },
	{ "set:width=0", PARLOAD_EGEOMETRY },
	{ "set:height=0", PARLOAD_EGEOMETRY },
	{ "set:pixel_type=0", PARLOAD_EPIXTYPE },
	{ "set:pixel_type=8", PARLOAD_EPIXTYPE },
	{ "set:bytes_per_pixel=1", PARLOAD_EGEOMETRY },
	{ "set:payload_size=61", PARLOAD_EGEOMETRY },
	{ "set:flags=3", PARLOAD_EFLAGS },
	{ "set:flags=0x80000000", PARLOAD_EFLAGS },
	/* (2^32 - 1)^2 pixels of 2 bytes do not fit in 64 bits. */
	{ "set:width=0xffffffff set:height=0xffffffff", PARLOAD_EOVERFLOW },
	{ "set:view_count=0x4000000000000000", PARLOAD_EOVERFLOW },
	{ "set:view_count=5", PARLOAD_ETRUNCATED },
	{ "truncate:431", PARLOAD_ETRUNCATED },
	{ "truncate:63", PARLOAD_ETRUNCATED },
	{ "truncate:0", PARLOAD_ETRUNCATED },
	{ "set:view_count=3", PARLOAD_ETRAILING },
	{ "append:1", PARLOAD_ETRAILING },
	{ "view:0:view_index=1", PARLOAD_EVIEWINDEX },
	{ "view:3:view_index=0xffffffffffffffff", PARLOAD_EVIEWINDEX },
};
#define NDAMAGES (int)(sizeof(damages) / sizeof(damages[0]))

/* The path of a file in the test's directory: DIR/STEM-I.SUFFIX. */
static void path_of(char *buf, size_t len, const char *stem, int i,
		    const char *suffix)
{
	snprintf(buf, len, "%s/%s-%d.%s", tmpdir, stem, i, suffix);
}

static void write_shape(FILE *batch, const shape *s, const char *path,
			const char *extra)
{
	fprintf(batch, "write --views %u --width %u --height %u --type %s "
		"--seed 20240601%s %s '%s'\n", s->views, s->width, s->height,
		s->type, s->crc ? " --crc" : "", extra ? extra : "", path);
}

/* One Python process writes every file the tests read: starting Python
 * once per file would take most of the suite's time. */
static int write_all(void)
{
	char cmd[16384], path[8192], verdict[8192];
	FILE *batch;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' batch", python, script);
	fflush(NULL);
	batch = popen(cmd, "w");
	if (!batch)
		return -1;
	for (int i = 0; i < NSHAPES; i++) {
		path_of(path, sizeof(path), "shape", i, "raw");
		write_shape(batch, &shapes[i], path, NULL);
	}
	path_of(path, sizeof(path), "reserved", 0, "raw");
	write_shape(batch, &reserved_shape, path, "--junk-reserved");
	fprintf(batch, "corrupt '%s' set:version_minor=7\n", path);
	for (int i = 0; i < NDAMAGES; i++) {
		path_of(path, sizeof(path), "damage", i, "raw");
		path_of(verdict, sizeof(verdict), "damage", i, "verdict");
		write_shape(batch, &damage_shape, path, NULL);
		fprintf(batch, "corrupt '%s' %s\n", path, damages[i].actions);
		/* refstream.py's own reader's verdict on the damaged file. */
		fprintf(batch, "read --to '%s' '%s'\n", verdict, path);
	}
	status = pclose(batch);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* ---- helpers ---- */

/* The whole of path + suffix in a malloc'd buffer (never NULL). */
static unsigned char *slurp(const char *path, const char *suffix,
			    size_t *len)
{
	char name[8192];
	unsigned char *buf;
	struct stat st;
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", path, suffix);
	f = fopen(name, "rb");
	ck_assert_msg(f != NULL, "%s: %s", name, strerror(errno));
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* ds must be exactly what refstream.py said the file holds. */
static void compare(const parload_dataset *ds, const char *path,
		    const char *how)
{
	size_t hlen, plen, flen;
	unsigned char *hdrs = slurp(path, ".headers", &hlen);
	unsigned char *pix = slurp(path, ".pixels", &plen);
	unsigned char *file = slurp(path, "", &flen);
	const parload_file_header hh = tu_ds_header(ds);
	const parload_file_header *h = &hh;

	/* The file header up to its reserved bytes, as the file has it, but
	 * for the minor version, which a description does not keep. */
	ck_assert_uint_ge(flen, PARLOAD_FILE_HEADER_SIZE);
	ck_assert_msg(memcmp(h, file,
			     offsetof(parload_file_header, version_minor)) ==
				      0 &&
			      memcmp(&h->file_header_size, file + 12,
				     offsetof(parload_file_header, reserved) -
					     12) == 0,
		      "%s: file header differs (%s)", path, how);
	ck_assert_uint_eq(h->view_count * PARLOAD_VIEW_HEADER_SIZE, hlen);
	ck_assert_uint_eq(h->view_count * h->payload_size, plen);
	if (hlen)
		ck_assert_msg(memcmp(ds->headers, hdrs, hlen) == 0,
			      "%s: view headers differ (%s)", path, how);
	if (plen)
		ck_assert_msg(memcmp(ds->pixels, pix, plen) == 0,
			      "%s: pixels differ (%s)", path, how);
	free(hdrs);
	free(pix);
	free(file);
}

static int load(const char *path, unsigned threads, parload_strategy strategy,
		parload_dataset *ds, parload_error *err)
{
	parload_options o;

	parload_options_init(&o);
	o.threads = threads;
	o.strategy = strategy;
	o.error = err;
	memset(err, 0, sizeof(*err));
	return parload_load(path, &o, ds);
}

static void load_and_compare(const char *path, unsigned threads,
			     parload_strategy strategy)
{
	parload_dataset ds;
	parload_error err;
	char how[64];
	int rc;

	snprintf(how, sizeof(how), "strategy %d, %u threads", (int)strategy,
		 threads);
	rc = load(path, threads, strategy, &ds, &err);
	ck_assert_msg(rc == 0, "%s: %s: %s", how, parload_err_name(rc),
		      err.message);
	compare(&ds, path, how);
	parload_dataset_free(&ds);
}

/* ---- loading: every shape, thread count and strategy ---- */

/* The parallel loader at 1, 2, 3 and 7 threads and at more threads than
 * the file has views. */
START_TEST(test_parallel_matches_reference)
{
	const shape *s = &shapes[_i];
	const unsigned threads[] = { 1, 2, 3, 7, s->views + 2 };
	char path[8192];

	path_of(path, sizeof(path), "shape", _i, "raw");
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++)
		load_and_compare(path, threads[k], PARLOAD_STRATEGY_PARALLEL);
}
END_TEST

/* One loader object serves every load, each of a different shape. */
START_TEST(test_reused_loader_matches_reference)
{
	parload_loader *loader;
	parload_options o;
	parload_error err;

	parload_options_init(&o);
	o.threads = 3;
	ck_assert_int_eq(parload_loader_new(&loader, &o, &err), 0);
	for (int i = 0; i < NSHAPES; i++) {
		parload_dataset ds;
		char path[8192];
		int rc;

		path_of(path, sizeof(path), "shape", i, "raw");
		rc = tu_load(loader, path, NULL, NULL, &ds, &err);
		ck_assert_msg(rc == 0, "%s: %s", path, err.message);
		compare(&ds, path, "reused loader");
		parload_dataset_free(&ds);
	}
	parload_loader_free(loader);
}
END_TEST

/* The single-threaded strategies produce the same arrays. */
START_TEST(test_strategies_match_reference)
{
	const parload_strategy strategies[] = {
		PARLOAD_STRATEGY_BULK, PARLOAD_STRATEGY_SEQUENTIAL,
		PARLOAD_STRATEGY_TWO_PASS, PARLOAD_STRATEGY_MMAP
	};
	char path[8192];

	path_of(path, sizeof(path), "shape", _i, "raw");
	for (size_t k = 0; k < sizeof(strategies) / sizeof(strategies[0]); k++)
		load_and_compare(path, 1, strategies[k]);
}
END_TEST

/* Reserved bytes are ignored and a newer minor version is accepted; the
 * view headers, reserved bytes included, still arrive as the file has
 * them. */
START_TEST(test_reserved_and_minor_ignored)
{
	const unsigned threads[] = { 1, 2, 7 };
	char path[8192];

	path_of(path, sizeof(path), "reserved", 0, "raw");
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++)
		load_and_compare(path, threads[k], PARLOAD_STRATEGY_PARALLEL);
}
END_TEST

/* ---- CRC-32C ---- */

/* The check value of FORMAT.md section 7. */
START_TEST(test_crc32c_check_value)
{
	ck_assert_uint_eq(parload_crc32c(0, "123456789", 9), 0xE3069283u);
	/* Continuing a CRC over a split buffer gives the same result. */
	ck_assert_uint_eq(parload_crc32c(parload_crc32c(0, "1234", 4),
					 "56789", 5),
			  0xE3069283u);
}
END_TEST

/* Every CRC refstream.py stored is parload_crc32c of that payload, and a
 * file without the flag stores 0. */
START_TEST(test_crc_matches_reference)
{
	const shape *s = &shapes[_i];
	size_t hlen, plen;
	unsigned char *hdrs, *pix;
	uint64_t payload;
	char path[8192];

	path_of(path, sizeof(path), "shape", _i, "raw");
	hdrs = slurp(path, ".headers", &hlen);
	pix = slurp(path, ".pixels", &plen);
	ck_assert_uint_eq(hlen, (size_t)s->views * PARLOAD_VIEW_HEADER_SIZE);
	payload = s->views ? plen / s->views : 0;
	for (unsigned i = 0; i < s->views; i++) {
		parload_view_header vh;
		uint32_t want;

		memcpy(&vh, hdrs + (size_t)i * PARLOAD_VIEW_HEADER_SIZE,
		       sizeof(vh));
		want = s->crc ? parload_crc32c(0, pix + i * payload, payload) :
				0;
		ck_assert_msg(vh.crc32c == want,
			      "view %u: refstream.py stored 0x%08" PRIx32
			      ", parload_crc32c says 0x%08" PRIx32,
			      i, vh.crc32c, want);
	}
	free(hdrs);
	free(pix);
}
END_TEST

/* ---- damaged files: both implementations reject them alike ---- */

START_TEST(test_damaged_rejected_alike)
{
	const damage *d = &damages[_i];
	const unsigned threads[] = { 1, 3 };
	const char *want = parload_err_name(d->code);
	char path[8192], verdict_path[8192];
	unsigned char *verdict;
	size_t len;

	path_of(path, sizeof(path), "damage", _i, "raw");
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		parload_dataset ds;
		parload_error err;
		int rc = load(path, threads[k], PARLOAD_STRATEGY_PARALLEL, &ds,
			      &err);

		ck_assert_msg(rc == d->code,
			      "%s with %u threads: got %s, want %s (%s)",
			      d->actions, threads[k], parload_err_name(rc),
			      want, err.message);
		ck_assert_int_eq(err.code, d->code);
		/* The message names the file. */
		ck_assert_msg(strstr(err.message, path) != NULL,
			      "message does not name the file: %s",
			      err.message);
		/* Nothing is left allocated on failure. */
		ck_assert_ptr_null(ds.headers);
		ck_assert_ptr_null(ds.pixels);
	}

	/* refstream.py's reader names the same error first. */
	path_of(verdict_path, sizeof(verdict_path), "damage", _i, "verdict");
	verdict = slurp(verdict_path, "", &len);
	ck_assert_msg(strncmp((char *)verdict, want, strlen(want)) == 0 &&
			      verdict[strlen(want)] == ':',
		      "%s: refstream.py read says %s, want %s", d->actions,
		      (char *)verdict, want);
	free(verdict);
}
END_TEST

static Suite *reference_suite(void)
{
	Suite *s = suite_create("reference");
	TCase *tc;

	tc = tcase_create("load");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_parallel_matches_reference, 0, NSHAPES);
	tcase_add_test(tc, test_reused_loader_matches_reference);
	tcase_add_loop_test(tc, test_strategies_match_reference, 0, NSHAPES);
	tcase_add_test(tc, test_reserved_and_minor_ignored);
	suite_add_tcase(s, tc);

	tc = tcase_create("crc32c");
	tcase_add_test(tc, test_crc32c_check_value);
	tcase_add_loop_test(tc, test_crc_matches_reference, 0, NSHAPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("damaged");
	tcase_add_loop_test(tc, test_damaged_rejected_alike, 0, NDAMAGES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *srcdir = getenv("PARLOAD_SRCDIR");
	const char *env = getenv("PYTHON3");
	const char *base = getenv("TMPDIR");
	int failed;

	/* make check sets PYTHON3 to what configure found, empty if none;
	 * run by hand, the test looks for python3 on PATH. */
	python = env ? env : "python3";
	if (!*python) {
		fprintf(stderr, "check_reference: SKIP: configure found no "
			"python3, which runs the independent implementation "
			"tests/refstream.py\n");
		return 77;
	}
	snprintf(script, sizeof(script), "%s/tests/refstream.py",
		 srcdir && *srcdir ? srcdir : ".");
	if (access(script, R_OK) != 0) {
		fprintf(stderr, "check_reference: cannot read %s (set "
			"PARLOAD_SRCDIR to the source tree): %s\n", script,
			strerror(errno));
		return 99;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/check_reference.XXXXXX",
		 base && *base ? base : "/tmp");
	/* Paths go through a shell quoted in '...'. */
	if (strchr(script, '\'') || strchr(python, '\'') ||
	    strchr(tmpdir, '\'')) {
		fprintf(stderr, "check_reference: SKIP: a quote in %s, %s or "
			"%s\n", script, python, tmpdir);
		return 77;
	}
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "check_reference: mkdtemp %s: %s\n", tmpdir,
			strerror(errno));
		return 99;
	}
	if (write_all() != 0) {
		fprintf(stderr, "check_reference: %s %s batch failed\n",
			python, script);
		nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
		return 99;
	}

	failed = tu_run(reference_suite()) != EXIT_SUCCESS;
	nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
