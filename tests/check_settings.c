/*
 * check_settings.c - the library's settings (parload_settings_set,
 * parload_settings_apply): each key sets its field, a refused value leaves
 * the settings as they were with the message the programs print, and
 * apply makes the request the keys describe.  (tests/options_agree.sh runs
 * the three programs over a table of options.)
 */
#include <string.h>

#include <check.h>

#include "parload.h"
#include "testutil.h"

static int set(parload_settings *s, const char *key, const char *value,
	       parload_error *err)
{
	memset(err, 0, sizeof(*err));
	return parload_settings_set(s, key, value, err);
}

START_TEST(test_keys_set_fields)
{
	parload_settings s;
	parload_error err;

	parload_settings_init(&s);
	ck_assert_int_eq(set(&s, "threads", "4096", &err), 0);
	ck_assert_int_eq(set(&s, "strategy=two-pass", NULL, &err), 0);
	ck_assert_int_eq(set(&s, "max-read", "64K", &err), 0);
	ck_assert_int_eq(set(&s, "keep-going", NULL, &err), 0);
	ck_assert_int_eq(set(&s, "views", "-3::2", &err), 0);
	ck_assert_int_eq(set(&s, "layout", "sinograms", &err), 0);
	ck_assert_int_eq(set(&s, "cache", "direct", &err), 0);
	ck_assert_int_eq(set(&s, "timeout", "0.5", &err), 0);
	ck_assert_int_eq(set(&s, "follow", NULL, &err), 0);
	ck_assert_uint_eq(s.options.threads, 4096);
	ck_assert_int_eq(s.options.strategy, PARLOAD_STRATEGY_TWO_PASS);
	ck_assert_uint_eq(s.options.max_read, 65536);
	/* keep-going is verify too, as in every program */
	ck_assert_uint_eq(s.options.flags,
			  PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING);
	ck_assert_int_eq(s.options.selection.views.start, -3);
	ck_assert_int_eq(s.options.selection.views.stop, PARLOAD_OMIT);
	ck_assert_int_eq(s.options.selection.views.step, 2);
	ck_assert_int_eq(s.options.selection.layout, PARLOAD_LAYOUT_SINOGRAMS);
	ck_assert_int_eq(s.cache, PARLOAD_CACHE_DIRECT);
	ck_assert(s.timeout == 0.5);
	ck_assert_uint_eq(s.request_flags, PARLOAD_REQ_FOLLOW);
	ck_assert_int_eq(s.correct_on, 0);
	/* bin 1 asks for no correction; bin 2 and minus-log do */
	ck_assert_int_eq(set(&s, "bin", "1", &err), 0);
	ck_assert_int_eq(s.correct_on, 0);
	ck_assert_int_eq(set(&s, "minus-log", NULL, &err), 0);
	ck_assert_int_eq(s.correct_on, 1);
	ck_assert_uint_eq(s.correct.flags, PARLOAD_CORR_MINUS_LOG);
}
END_TEST

/* Each refused value: PARLOAD_EINVAL, the programs' message, and the
 * settings untouched. */
static const struct {
	const char *key, *value, *message;
} refused[] = {
	{ "threads", "4097", "invalid thread count '4097' (0 to 4096)" },
	{ "threads", "-1", "invalid thread count '-1' (0 to 4096)" },
	{ "threads", " 1", "invalid thread count ' 1' (0 to 4096)" },
	{ "strategy", "Parallel", "unknown strategy 'Parallel' (parallel, "
				  "bulk, sequential, two-pass or mmap)" },
	{ "buffer", "1Q", "invalid buffer size '1Q'" },
	{ "max-read", "17179869184T",
	  "invalid read size '17179869184T' (overflows 64 bits)" },
	{ "timeout", "0", "invalid timeout '0' (seconds, above 0 and at most "
			  "86400)" },
	{ "timeout", "86401", "invalid timeout '86401' (seconds, above 0 and "
			      "at most 86400)" },
	{ "views", "1:2:0", "invalid --views '1:2:0': the step must be 1 or "
			    "more" },
	{ "bin", "0", "invalid --bin '0' (a factor of 1 or more)" },
	{ "frames", "whites", "unknown frames 'whites' (projections, flats or "
			      "darks)" },
	{ "raw", "width=4", "--raw: " },
	{ "verify", "1", "--verify takes no value" },
	{ "threads", NULL, "--threads needs a value" },
	{ "thread", "1", "unknown key 'thread'" },
	{ "verify-seed", "18446744073709551616",
	  "invalid seed '18446744073709551616'" },
};

START_TEST(test_refused_values)
{
	parload_settings s, before;
	parload_error err;

	parload_settings_init(&s);
	ck_assert_int_eq(set(&s, "threads", "3", &err), 0);
	before = s;
	ck_assert_int_eq(set(&s, refused[_i].key, refused[_i].value, &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(err.code, PARLOAD_EINVAL);
	ck_assert_msg(strncmp(err.message, refused[_i].message,
			      strlen(refused[_i].message)) == 0,
		      "%s=%s: %s", refused[_i].key, refused[_i].value,
		      err.message);
	ck_assert_int_eq(memcmp(&s, &before, sizeof(s)), 0);
	ck_assert_int_eq(parload_settings_set(&s, refused[_i].key,
					      refused[_i].value, NULL),
			 PARLOAD_EINVAL);
}
END_TEST

/* verify-seed checks the file's pixels, a correction delivers others:
 * either after the other is refused. */
START_TEST(test_seed_and_correction_exclude)
{
	static const char *const corrections[][2] = {
		{ "minus-log", NULL }, { "bin", "2" }, { "flats", "f.raw" },
	};
	parload_settings s;
	parload_error err;

	for (int k = 0; k < 3; k++) {
		const char *key = corrections[k][0], *v = corrections[k][1];

		parload_settings_init(&s);
		ck_assert_int_eq(set(&s, "verify-seed", "3", &err), 0);
		ck_assert_int_eq(set(&s, key, v, &err), PARLOAD_EINVAL);
		ck_assert_ptr_nonnull(strstr(err.message, "--verify-seed"));
		parload_settings_init(&s);
		ck_assert_int_eq(set(&s, key, v, &err), 0);
		ck_assert_int_eq(set(&s, "verify-seed", "3", &err),
				 PARLOAD_EINVAL);
	}
}
END_TEST

START_TEST(test_apply)
{
	parload_settings s;
	parload_request req;
	parload_error err;

	parload_settings_init(&s);
	ck_assert_int_eq(set(&s, "raw", "width=4,height=2,type=u16", &err), 0);
	ck_assert_int_eq(set(&s, "rows", "0:1", &err), 0);
	ck_assert_int_eq(set(&s, "cache", "drop", &err), 0);
	ck_assert_int_eq(set(&s, "confine", NULL, &err), 0);
	ck_assert_int_eq(set(&s, "darks", "d.raw", &err), 0);
	ck_assert_int_eq(set(&s, "flats", "same", &err), 0);
	ck_assert_int_eq(set(&s, "reduce", "median", &err), 0);
	parload_request_init(&req);
	req.source.path = "scan.h5";
	parload_settings_apply(&s, &req);
	ck_assert_ptr_eq(req.source.desc, &s.desc);
	ck_assert_uint_eq(req.source.flags, PARLOAD_SRC_CONFINE);
	ck_assert_ptr_eq(req.selection, &s.options.selection);
	ck_assert_int_eq(req.selection->rows.stop, 1);
	ck_assert_int_eq(req.cache, PARLOAD_CACHE_DROP);
	ck_assert_uint_eq(req.flags, 0);
	ck_assert_ptr_nonnull(req.correct);
	ck_assert_int_eq(req.correct->reduce, PARLOAD_REDUCE_MEDIAN);
	/* darks: a file of the settings' layout; flats: the scan's own */
	ck_assert_str_eq(req.correct->darks->source.path, "d.raw");
	ck_assert_ptr_eq(req.correct->darks->source.desc, &s.desc);
	ck_assert_uint_eq(req.correct->darks->source.flags,
			  PARLOAD_SRC_CONFINE);
	ck_assert_str_eq(req.correct->flats->source.path, "scan.h5");
	ck_assert_int_eq(req.correct->flats->source.frames,
			 PARLOAD_FRAMES_FLATS);
	/* no correction asked: none made */
	parload_settings_init(&s);
	parload_request_init(&req);
	req.source.path = "scan.raw";
	parload_settings_apply(&s, &req);
	ck_assert_ptr_null(req.correct);
	ck_assert_ptr_null(req.source.desc);
	ck_assert(req.timeout == 10.0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("settings");
	TCase *t = tcase_create("settings");

	tcase_add_test(t, test_keys_set_fields);
	tcase_add_loop_test(t, test_refused_values, 0,
			    (int)(sizeof(refused) / sizeof(refused[0])));
	tcase_add_test(t, test_seed_and_correction_exclude);
	tcase_add_test(t, test_apply);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
