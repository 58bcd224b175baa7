/*
 * check_names.c - every table of names (parload.h, "Names") walked: each
 * name parses to its value and back, through the generic calls and the
 * enum's own pair; names are matched exactly (no other case, no prefix);
 * an unknown name, NULL or an unknown table is PARLOAD_EINVAL with a
 * message that lists the names, as the documentation writes them.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "parload.h"
#include "testutil.h"

/* The largest value any table names, and then some. */
#define VALUES 64

typedef const char *(*name_fn)(int);
typedef int (*parse_fn)(const char *);

/* Each table as the man page lists it, with its enum's own pair (NULL:
 * none) and one value by its enum name. */
static const struct table {
	int kind;
	const char *what;
	const char *list; /* the message's list, in value order */
	name_fn name;
	parse_fn parse;
	int value;
	const char *value_name;
} tables[] = {
	{ PARLOAD_NAMES_PIXEL, "pixel type",
	  "u8, u16, i16, u32, i32, f32 or f64", parload_pixel_name,
	  parload_pixel_from_name, PARLOAD_PIXEL_I32, "i32" },
	{ PARLOAD_NAMES_FORMAT, "format", "parload, raw, tiff, hdf5 or zarr",
	  parload_format_name, NULL, PARLOAD_FORMAT_HDF5, "hdf5" },
	{ PARLOAD_NAMES_FRAMES, "frames", "projections, flats or darks",
	  parload_frames_name, parload_frames_from_name, PARLOAD_FRAMES_DARKS,
	  "darks" },
	{ PARLOAD_NAMES_STRATEGY, "strategy",
	  "parallel, bulk, sequential, two-pass or mmap",
	  parload_strategy_name, parload_strategy_from_name,
	  PARLOAD_STRATEGY_TWO_PASS, "two-pass" },
	{ PARLOAD_NAMES_IO, "I/O API", "posix or stdio", parload_io_name,
	  parload_io_from_name, PARLOAD_IO_STDIO, "stdio" },
	{ PARLOAD_NAMES_LAYOUT, "layout", "views or sinograms",
	  parload_layout_name, parload_layout_from_name,
	  PARLOAD_LAYOUT_SINOGRAMS, "sinograms" },
	{ PARLOAD_NAMES_CACHE, "page-cache mode", "keep, drop, direct or auto",
	  parload_cache_name, parload_cache_from_name, PARLOAD_CACHE_DIRECT,
	  "direct" },
	{ PARLOAD_NAMES_REDUCE, "reduction", "mean or median",
	  parload_reduce_name, parload_reduce_from_name, PARLOAD_REDUCE_MEDIAN,
	  "median" },
	{ PARLOAD_NAMES_COMPRESS, "compression", "none, zstd, blosc or gzip",
	  parload_compress_name, parload_compress_from_name,
	  PARLOAD_COMPRESS_BLOSC, "blosc" },
};

#define NTABLES ((int)(sizeof(tables) / sizeof(tables[0])))

/* Every kind the header declares is a row above. */
START_TEST(test_every_table_listed)
{
	ck_assert_int_eq(NTABLES, PARLOAD_NAMES_COUNT_);
	for (int k = 0; k < NTABLES; k++)
		ck_assert_int_eq(tables[k].kind, k);
}
END_TEST

/* Each name to its value and back, both ways agreeing with the pair. */
START_TEST(test_round_trip)
{
	const struct table *t = &tables[_i];
	parload_error err;
	int named = 0;

	for (int v = -2; v < VALUES; v++) {
		const char *name = parload_name(t->kind, v);

		ck_assert_ptr_eq(t->name(v), name);
		if (!name)
			continue;
		named++;
		memset(&err, 0, sizeof(err));
		ck_assert_int_eq(parload_name_parse(t->kind, name, &err), v);
		ck_assert_int_eq(err.code, 0);
		if (t->parse)
			ck_assert_int_eq(t->parse(name), v);
	}
	ck_assert_int_gt(named, 1);
	ck_assert_str_eq(parload_name(t->kind, t->value), t->value_name);
}
END_TEST

/* Exactly as written: another case, a prefix, a name with a space or
 * the empty name is no name. */
START_TEST(test_exact_match)
{
	const struct table *t = &tables[_i];

	for (int v = 0; v < VALUES; v++) {
		const char *name = parload_name(t->kind, v);
		char upper[64], prefix[64], padded[66];

		if (!name)
			continue;
		snprintf(upper, sizeof(upper), "%s", name);
		for (char *p = upper; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		snprintf(prefix, sizeof(prefix), "%.*s", (int)strlen(name) - 1,
			 name);
		snprintf(padded, sizeof(padded), " %s", name);
		ck_assert_int_eq(parload_name_parse(t->kind, upper, NULL),
				 PARLOAD_EINVAL);
		ck_assert_int_eq(parload_name_parse(t->kind, prefix, NULL),
				 PARLOAD_EINVAL);
		ck_assert_int_eq(parload_name_parse(t->kind, padded, NULL),
				 PARLOAD_EINVAL);
		if (t->parse)
			ck_assert_int_eq(t->parse(upper), PARLOAD_EINVAL);
	}
	ck_assert_int_eq(parload_name_parse(t->kind, "", NULL), PARLOAD_EINVAL);
}
END_TEST

/* An unknown name fails with the table's list. */
START_TEST(test_unknown_lists_names)
{
	const struct table *t = &tables[_i];
	char want[512];
	parload_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_name_parse(t->kind, "no-such", &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(err.code, PARLOAD_EINVAL);
	snprintf(want, sizeof(want), "unknown %s 'no-such' (%s)", t->what,
		 t->list);
	ck_assert_str_eq(err.message, want);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_name_parse(t->kind, NULL, &err),
			 PARLOAD_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, t->list));
	if (t->parse)
		ck_assert_int_eq(t->parse(NULL), PARLOAD_EINVAL);
	ck_assert_ptr_null(parload_name(t->kind, VALUES));
	ck_assert_ptr_null(parload_name(t->kind, -1));
}
END_TEST

START_TEST(test_unknown_table)
{
	parload_error err;

	ck_assert_ptr_null(parload_name(PARLOAD_NAMES_COUNT_, 0));
	ck_assert_ptr_null(parload_name(-1, 0));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_name_parse(PARLOAD_NAMES_COUNT_, "views",
					    &err), PARLOAD_EINVAL);
	ck_assert_int_eq(err.code, PARLOAD_EINVAL);
	ck_assert_int_eq(parload_name_parse(-1, "views", NULL),
			 PARLOAD_EINVAL);
}
END_TEST

/* A caller's table (libparload-mpi's): holes skipped, the same message. */
START_TEST(test_caller_table)
{
	static const char *const names[] = { NULL, "one", NULL, "three",
					     "four" };
	parload_error err;

	ck_assert_int_eq(parload_name_find("thing", names, 5, "three", NULL),
			 3);
	ck_assert_int_eq(parload_name_find("thing", names, 3, "three", NULL),
			 PARLOAD_EINVAL);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_name_find("thing", names, 5, "two", &err),
			 PARLOAD_EINVAL);
	ck_assert_str_eq(err.message,
			 "unknown thing 'two' (one, three or four)");
	ck_assert_int_eq(parload_name_find("thing", NULL, 0, "one", &err),
			 PARLOAD_EINVAL);
}
END_TEST

/* The description's type names, made from the pixel table: each pixel
 * type in either byte order to its name and back; one byte has no order. */
START_TEST(test_type_names)
{
	for (int t = 0; t < VALUES; t++) {
		const char *pixel = parload_pixel_name(t);

		for (int e = PARLOAD_ENC_LE; e <= PARLOAD_ENC_BE; e++) {
			const char *name = parload_type_name(t, e);
			char want[16];
			int pt = 0, enc = -1;

			if (!pixel) {
				ck_assert_ptr_null(name);
				continue;
			}
			snprintf(want, sizeof(want), "%s%s", pixel,
				 e == PARLOAD_ENC_BE && t != PARLOAD_PIXEL_U8 ?
					 "be" :
					 "");
			ck_assert_str_eq(name, want);
			ck_assert_int_eq(parload_type_from_name(name, &pt, &enc),
					 0);
			ck_assert_int_eq(pt, t);
			ck_assert_int_eq(enc, t == PARLOAD_PIXEL_U8 ?
						      PARLOAD_ENC_LE :
						      e);
		}
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("names");
	TCase *t = tcase_create("names");

	tcase_add_test(t, test_every_table_listed);
	tcase_add_loop_test(t, test_round_trip, 0, NTABLES);
	tcase_add_loop_test(t, test_exact_match, 0, NTABLES);
	tcase_add_loop_test(t, test_unknown_lists_names, 0, NTABLES);
	tcase_add_test(t, test_unknown_table);
	tcase_add_test(t, test_caller_table);
	tcase_add_test(t, test_type_names);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
