/*
 * check_truncation.c - files and streams cut anywhere: refused, or with
 * PARLOAD_OPT_ALLOW_TRUNCATED loaded up to their last complete view, in
 * every configuration.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

#include "matrix.h"
#include "testutil.h"

#define VERIFY PARLOAD_OPT_VERIFY_CRC
#define TRUNC PARLOAD_OPT_ALLOW_TRUNCATED

/* 5 views of 13 x 7 u16: 182-byte payloads, 214-byte records. */
#define TR_VIEWS 5
#define TR_PS ((uint64_t)13 * 7 * 2)
#define TR_REC (32 + TR_PS)
#define TR_FULL (64 + TR_VIEWS * TR_REC)

static const struct cut {
	const char *what;
	uint64_t len;
	int strict;      /* the code without the option */
	int allowed;     /* the code with it */
	uint64_t views;  /* the complete views it then holds */
} cuts[] = {
	{ "empty", 0, PARLOAD_ETRUNCATED, PARLOAD_ETRUNCATED, 0 },
	{ "inside the file header", 40, PARLOAD_ETRUNCATED, PARLOAD_ETRUNCATED,
	  0 },
	{ "the file header only", 64, PARLOAD_ETRUNCATED, 0, 0 },
	{ "inside the first view header", 64 + 10, PARLOAD_ETRUNCATED, 0, 0 },
	{ "inside the first payload", 64 + 32 + 50, PARLOAD_ETRUNCATED, 0, 0 },
	{ "at a record boundary", 64 + TR_REC, PARLOAD_ETRUNCATED, 0, 1 },
	{ "a byte short of a view header", 64 + 2 * TR_REC + 31,
	  PARLOAD_ETRUNCATED, 0, 2 },
	{ "just after a view header", 64 + 3 * TR_REC + 32, PARLOAD_ETRUNCATED,
	  0, 3 },
	{ "one byte short", TR_FULL - 1, PARLOAD_ETRUNCATED, 0, TR_VIEWS - 1 },
	{ "complete", TR_FULL, 0, 0, TR_VIEWS },
	{ "a trailing byte", TR_FULL + 1, PARLOAD_ETRAILING, PARLOAD_ETRAILING,
	  0 },
};

/* A complete stream with a trailing byte appended, for the cuts. */
static unsigned char *truncation_source(tu_soa *ref)
{
	char *path = tu_path("trsrc.raw");
	unsigned char *data;
	size_t len;

	tu_write_stream(path, TR_VIEWS, 13, 7, PARLOAD_PIXEL_U16,
			PARLOAD_FLAG_CRC32C, 11);
	ck_assert_int_eq(tu_serial_read(path, ref), 0);
	data = tu_read_all(path, &len);
	ck_assert_uint_eq(len, TR_FULL);
	data[TR_FULL] = 0x5a;
	free(path);
	return data;
}

static void check_cut(const struct cut *c, int rc, const parload_dataset *ds,
		      const parload_error *err, const tu_soa *ref,
		      bool allowed, const char *what)
{
	const int want = allowed ? c->allowed : c->strict;

	ck_assert_msg(rc == want, "%s, cut %s: %s, expected %s (%s)", what,
		      c->what, parload_err_name(rc), parload_err_name(want),
		      err->message);
	if (rc) {
		tu_assert_empty(ds, what);
		return;
	}
	tu_assert_prefix(ds, ref, c->views, what);
	ck_assert_uint_eq(ds->stats.declared_views, TR_VIEWS);
	ck_assert_uint_eq(ds->stats.crc_checked, c->views);
}

START_TEST(test_allow_truncated_file)
{
	const tu_config *m = tu_matrix(_i);
	char *path = tu_path("cut.raw");
	unsigned char *data;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	data = truncation_source(&ref);
	for (int k = 0; k < TU_COUNT(cuts); k++) {
		tu_write_file(path, data, cuts[k].len);
		for (int allowed = 0; allowed < 2; allowed++) {
			int rc = tu_config_load(m,
						VERIFY | (allowed ? TRUNC : 0),
						path, &ds, &err);

			check_cut(&cuts[k], rc, &ds, &err, &ref, allowed,
				  m->label);
			parload_dataset_free(&ds);
		}
	}
	tu_soa_free(&ref);
	free(data);
	free(path);
}
END_TEST

START_TEST(test_allow_truncated_stream)
{
	const struct cut *c = &cuts[_i];
	unsigned char *data;
	parload_dataset ds;
	parload_error err;
	tu_soa ref;

	data = truncation_source(&ref);
	for (int allowed = 0; allowed < 2; allowed++) {
		int rc = tu_config_load_fed(data, c->len, 77, TU_VIA_PIPE,
					    tu_parallel(1),
					    VERIFY | (allowed ? TRUNC : 0),
					    &ds, &err);

		check_cut(c, rc, &ds, &err, &ref, allowed, "pipe");
		parload_dataset_free(&ds);
	}
	tu_soa_free(&ref);
	free(data);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("truncation");
	TCase *t = tu_tcase(s, "truncated", 60);

	tu_add_matrix_test(t, test_allow_truncated_file);
	tcase_add_loop_test(t, test_allow_truncated_stream, 0, TU_COUNT(cuts));
	return s;
}

int main(void)
{
	return tu_run(suite());
}
