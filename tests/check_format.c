/*
 * check_format.c - the format: header decoding, every validation error and
 * its message, the file-size checks, and the error table.
 *
 * The cases are data: each header row patches one field of a valid
 * header, and each damaged file (damage.h) one part of a valid stream, and
 * names the code and the words its message must carry.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damage.h"
#include "internal.h"
#include "matrix.h"
#include "testutil.h"

static void valid_header(unsigned char b[64], uint64_t views)
{
	parload_file_header h;

	ck_assert_int_eq(parload_file_header_init(&h, views, 4, 3,
						  PARLOAD_PIXEL_U16, 0), 0);
	memcpy(b, &h, 64);
}

static void put(unsigned char *b, size_t off, uint64_t v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[off + i] = (unsigned char)(v >> (8 * i));
}

struct header_case {
	const char *what;
	size_t offset;     /* field to patch */
	size_t len;        /* its size */
	uint64_t value;
	int code;          /* expected */
	const char *words; /* expected in the message */
	uint64_t err_off;  /* expected byte offset in the error */
};

static const struct header_case header_cases[] = {
	{ "magic", 0, 1, 0x88, PARLOAD_EMAGIC, "bad magic", 0 },
	{ "magic, last byte", 7, 1, 0x00, PARLOAD_EMAGIC, "found 89 52", 0 },
	{ "major version 2", 8, 2, 2, PARLOAD_EVERSION, "version 2.0", 8 },
	{ "major version 0", 8, 2, 0, PARLOAD_EVERSION, "unsupported", 8 },
	{ "file header size", 12, 2, 65, PARLOAD_EHDRSIZE,
	  "file_header_size is 65", 12 },
	{ "view header size", 14, 2, 16, PARLOAD_EHDRSIZE,
	  "view_header_size is 16", 14 },
	{ "width 0", 24, 4, 0, PARLOAD_EGEOMETRY, "width and height", 24 },
	{ "height 0", 28, 4, 0, PARLOAD_EGEOMETRY, "width and height", 28 },
	{ "pixel type 0", 32, 2, 0, PARLOAD_EPIXTYPE, "pixel type 0", 32 },
	{ "pixel type 8", 32, 2, 8, PARLOAD_EPIXTYPE, "pixel type 8", 32 },
	{ "bytes per pixel", 34, 2, 4, PARLOAD_EGEOMETRY,
	  "bytes_per_pixel is 4, but pixel type u16 has 2", 34 },
	{ "payload size", 40, 8, 25, PARLOAD_EGEOMETRY,
	  "payload_size is 25", 40 },
	{ "flag bit 1", 36, 4, 2, PARLOAD_EFLAGS, "unsupported flags", 36 },
	{ "flag bit 31", 36, 4, 0x80000001u, PARLOAD_EFLAGS,
	  "0x80000001", 36 },
	{ "view count overflows the file size", 16, 8, UINT64_MAX / 8,
	  PARLOAD_EOVERFLOW, "do not fit in 64 bits", 16 },
};

START_TEST(test_header_case)
{
	const struct header_case *c = &header_cases[_i];
	unsigned char b[64];
	parload_file_header h;
	parload_error err;

	valid_header(b, 10);
	put(b, c->offset, c->value, c->len);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(parload_parse_file_header(b, 64, "f.raw", &h, &err),
			 c->code);
	ck_assert_int_eq(err.code, c->code);
	ck_assert_msg(strstr(err.message, c->words) != NULL,
		      "%s: message '%s' lacks '%s'", c->what, err.message,
		      c->words);
	ck_assert_msg(strncmp(err.message, "f.raw: ", 7) == 0,
		      "%s: message '%s' does not name the file", c->what,
		      err.message);
	ck_assert_uint_eq(err.offset, c->err_off);
	ck_assert_uint_eq(err.view, PARLOAD_NONE);
}
END_TEST

START_TEST(test_dimensions_overflow)
{
	unsigned char b[64];
	parload_file_header h;
	parload_error err;

	valid_header(b, 1);
	put(b, 24, 0xffffffffu, 4);
	put(b, 28, 0xffffffffu, 4);
	put(b, 32, PARLOAD_PIXEL_F64, 2);
	put(b, 34, 8, 2);
	ck_assert_int_eq(parload_parse_file_header(b, 64, "f", &h, &err),
			 PARLOAD_EOVERFLOW);
}
END_TEST

START_TEST(test_minor_version_and_reserved_ignored)
{
	unsigned char b[64];
	parload_file_header h;

	valid_header(b, 3);
	put(b, 10, 9, 2);
	memset(b + 48, 0xab, 16);
	ck_assert_int_eq(parload_parse_file_header(b, 64, NULL, &h, NULL), 0);
	ck_assert_uint_eq(h.version_minor, 9);
	ck_assert_uint_eq(h.view_count, 3);
	ck_assert_uint_eq(h.payload_size, 24);
}
END_TEST

START_TEST(test_short_buffer)
{
	unsigned char b[64];
	parload_file_header h;
	parload_error err;

	valid_header(b, 3);
	ck_assert_int_eq(parload_parse_file_header(b, 63, "x", &h, &err),
			 PARLOAD_ETRUNCATED);
	ck_assert_ptr_nonnull(strstr(err.message, "63 bytes"));
}
END_TEST

START_TEST(test_header_init_rejects)
{
	parload_file_header h;

	ck_assert_int_eq(parload_file_header_init(&h, 1, 0, 1, 1, 0),
			 PARLOAD_EGEOMETRY);
	ck_assert_int_eq(parload_file_header_init(&h, 1, 1, 1, 9, 0),
			 PARLOAD_EPIXTYPE);
	ck_assert_int_eq(parload_file_header_init(&h, 1, 1, 1, 1, 4),
			 PARLOAD_EFLAGS);
	ck_assert_int_eq(parload_file_header_init(&h, UINT64_MAX, 64, 64, 2,
						  0),
			 PARLOAD_EOVERFLOW);
}
END_TEST

START_TEST(test_pixel_types)
{
	static const unsigned sizes[] = { 0, 1, 2, 2, 4, 4, 4, 8 };

	for (int t = 1; t <= 7; t++) {
		ck_assert_uint_eq(parload_pixel_size(t), sizes[t]);
		ck_assert_int_eq(parload_pixel_from_name(parload_pixel_name(t)),
				 t);
	}
	ck_assert_uint_eq(parload_pixel_size(0), 0);
	ck_assert_uint_eq(parload_pixel_size(8), 0);
	ck_assert_ptr_null(parload_pixel_name(8));
	ck_assert_int_eq(parload_pixel_from_name("u12"), PARLOAD_EINVAL);
}
END_TEST

/* ---- whole files ---- */

/* Every damaged file (damage.h), loaded by the parallel loader with the
 * configuration's workers: the code, the view and byte offset, a message
 * that starts with the file and says what is wrong and where, and nothing
 * left owned. */
START_TEST(test_damaged_files)
{
	const tu_config *c = tu_matrix(_i);

	for (int i = 0; i < tu_n_damages; i++) {
		const tu_damage *d = &tu_damages[i];
		char *p = tu_damaged_file(i);
		parload_options o;
		parload_dataset ds;
		parload_error err;
		char where[96];
		int rc;

		tu_config_options(&o, c, 0);
		o.error = &err;
		memset(&err, 0, sizeof(err));
		memset(&ds, 0xa5, sizeof(ds));
		rc = parload_load(p, &o, &ds);
		ck_assert_msg(rc == d->code, "%s, %s: %s, expected %s",
			      c->label, d->what, parload_err_name(rc),
			      parload_err_name(d->code));
		ck_assert_ptr_null(ds.headers);
		ck_assert_ptr_null(ds.pixels);
		ck_assert_ptr_null(ds.internal_[0]);
		ck_assert_msg(strncmp(err.message, p, strlen(p)) == 0,
			      "%s: message '%s' does not start with the file",
			      d->what, err.message);
		ck_assert_msg(strstr(err.message, d->words) != NULL,
			      "%s: message '%s' lacks '%s'", d->what,
			      err.message, d->words);
		ck_assert_uint_eq(err.view, d->view);
		ck_assert_uint_eq(err.offset, d->err_offset);
		if (d->view != PARLOAD_NONE)
			snprintf(where, sizeof(where),
				 "(view %" PRIu64 ", byte offset %" PRIu64 ")",
				 d->view, d->err_offset);
		else if (d->err_offset != PARLOAD_NONE)
			snprintf(where, sizeof(where),
				 "(byte offset %" PRIu64 ")", d->err_offset);
		else
			where[0] = '\0';
		ck_assert_msg(strstr(err.message, where) != NULL,
			      "%s: message '%s' lacks '%s'", d->what,
			      err.message, where);
		free(p);
	}
}
END_TEST

/* A view header that names the wrong view, among tiny views: their
 * records are read in whole batches straight into the pixels and
 * compacted there, and their headers checked while they are in the cache
 * (src/engine/read_batch.c); the last batch of a share, which would reach past it,
 * goes through a bounce buffer and the check at the share's end.  Either
 * way the load fails naming the view and its header's offset, wherever in
 * a worker's share the view lies. */
START_TEST(test_tiny_views_view_index)
{
	enum { VIEWS = 4096, PAYLOAD = 32 * 2 * 2 };
	const uint64_t bad[] = { 0, 1, 1000, 2047, 2048, 3000, 4095 };
	const unsigned threads[] = { 1, 2, 3 };
	char *p = tu_path("tiny-index.raw");

	tu_write_stream(p, VIEWS, 32, 2, PARLOAD_PIXEL_U16, 0, 7);
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		const uint64_t v = bad[b], off = tu_view_off(PAYLOAD, v);
		unsigned char wrong[8], right[8];

		for (int i = 0; i < 8; i++) {
			right[i] = (unsigned char)(v >> (8 * i));
			wrong[i] = (unsigned char)((v + 5) >> (8 * i));
		}
		tu_patch(p, off, wrong, sizeof(wrong));
		for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]);
		     t++) {
			parload_loader *l = tu_loader(
				threads[t], PARLOAD_STRATEGY_PARALLEL, 0);
			parload_dataset ds;
			parload_error err;
			int rc = tu_load(l, p, NULL, NULL, &ds, &err);

			ck_assert_msg(rc == PARLOAD_EVIEWINDEX,
				      "view %" PRIu64 ", %u threads: %s (%s)",
				      v, threads[t], parload_err_name(rc),
				      err.message);
			ck_assert_uint_eq(err.view, v);
			ck_assert_uint_eq(err.offset, off);
			ck_assert_ptr_null(ds.pixels);
			parload_loader_free(l);
		}
		tu_patch(p, off, right, sizeof(right));
	}
	free(p);
}
END_TEST

START_TEST(test_read_header_reports_size)
{
	char *p = tu_path("info.raw");
	parload_file_header h;
	parload_error err;

	tu_write_stream(p, 10, 4, 4, PARLOAD_PIXEL_U8, 0, 1);
	ck_assert_int_eq(parload_read_header(p, &h, &err), 0);
	ck_assert_uint_eq(h.view_count, 10);
	tu_truncate(p, 100);
	ck_assert_int_eq(parload_read_header(p, &h, &err), PARLOAD_ETRUNCATED);
	/* The decoded header stays available for reporting. */
	ck_assert_uint_eq(h.view_count, 10);
	free(p);
}
END_TEST

/* ---- the error table and messages ---- */

START_TEST(test_error_table)
{
	for (int c = -1; c > PARLOAD_ERRNO_LAST_; c--) {
		ck_assert_str_ne(parload_strerror(c), "unknown error");
		ck_assert_str_ne(parload_err_name(c), "PARLOAD_EUNKNOWN");
		for (int d = c - 1; d > PARLOAD_ERRNO_LAST_; d--)
			ck_assert_str_ne(parload_strerror(c),
					 parload_strerror(d));
	}
	ck_assert_str_eq(parload_err_name(PARLOAD_EMAGIC), "PARLOAD_EMAGIC");
	ck_assert_str_eq(parload_strerror(0), "success");
	ck_assert_str_eq(parload_strerror(-999), "unknown error");
	ck_assert_str_eq(parload_strerror(1), "unknown error");
}
END_TEST

START_TEST(test_message_format)
{
	parload_error err;

	ck_assert_int_eq(parload__fail(&err, PARLOAD_EIO, 5, "a.raw", 3, 99,
				       "read failed"),
			 PARLOAD_EIO);
	ck_assert_str_eq(err.message, "a.raw: read failed: "
				      "Input/output error (view 3, byte offset 99)");
	parload__fail(&err, PARLOAD_ENOMEM, 0, NULL, PARLOAD_NONE,
		      PARLOAD_NONE, NULL);
	ck_assert_str_eq(err.message, "out of memory");
	ck_assert_int_eq(parload__fail(NULL, PARLOAD_EIO, 0, "x", 0, 0, NULL),
			 PARLOAD_EIO);
}
END_TEST

START_TEST(test_message_cut_not_overrun)
{
	char path[2000];
	parload_error err;

	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = 0;
	parload__fail(&err, PARLOAD_EIO, 5, path, 1, 2, "read failed");
	ck_assert_uint_eq(strlen(err.message), sizeof(err.message) - 1);
}
END_TEST

/* A path too long for the message leaves its middle out, not the reason:
 * the message still ends with the system's reason and the view. */
START_TEST(test_message_long_path_keeps_reason)
{
	char path[3000];
	parload_error err;
	size_t n;

	memset(path, 'p', sizeof(path) - 1);
	memcpy(path + sizeof(path) - 7, "/x.raw", 7);
	parload__fail(&err, PARLOAD_EOPEN, ENOENT, path, 4, PARLOAD_NONE,
		      "cannot open file");
	n = strlen(err.message);
	ck_assert_uint_le(n, sizeof(err.message) - 1);
	ck_assert_msg(strncmp(err.message, "pppp", 4) == 0, "%s", err.message);
	ck_assert_msg(strstr(err.message, "p...p"), "%s", err.message);
	ck_assert_msg(strstr(err.message, "pp/x.raw: cannot open file: No such "
					  "file or directory (view 4)"),
		      "%s", err.message);
	/* A text too long as well: both shortened, the reason kept. */
	parload__fail(&err, PARLOAD_EOPEN, ENAMETOOLONG, path, PARLOAD_NONE,
		      PARLOAD_NONE, "data file '%s'", path);
	ck_assert_uint_le(strlen(err.message), sizeof(err.message) - 1);
	ck_assert_msg(strncmp(err.message, "pppp", 4) == 0, "%s", err.message);
	ck_assert_msg(strstr(err.message, "x.raw: data file 'pp"), "%s",
		      err.message);
	ck_assert_msg(strstr(err.message, "x.raw': File name too long"), "%s",
		      err.message);
	/* A prefix put before a message is shortened so too. */
	parload__fail(&err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
		      PARLOAD_NONE, "bad layout");
	parload__error_prefix(&err, path);
	ck_assert_msg(strstr(err.message, "p...p"), "%s", err.message);
	ck_assert_msg(strstr(err.message, "/x.raw: bad layout"), "%s",
		      err.message);
}
END_TEST

/* What a terminal would act on is escaped, in the path and in the text;
 * printable UTF-8 is kept; escaping escaped text changes nothing. */
START_TEST(test_message_escapes_names)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain.raw", "plain.raw"},
		{"a\x1b[31mred\x1b[0m", "a\\x1b[31mred\\x1b[0m"},
		{"line\nbreak\ttab\rret\x7f", "line\\nbreak\\ttab\\rret\\x7f"},
		{"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",
		 "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"},
		{"c1\xc2\x9b" "31m", "c1\\xc2\\x9b31m"},          /* CSI */
		{"bad\xff\xc3(", "bad\\xff\\xc3("},             /* not UTF-8 */
		{"over\xc0\xaflong", "over\\xc0\\xaflong"},     /* overlong / */
		{"rlo\xe2\x80\xaetxt", "rlo\\xe2\\x80\\xaetxt"},  /* U+202E */
		{"cut\xe6\x97", "cut\\xe6\\x97"},               /* truncated */
		{"back\\slash", "back\\slash"},
	};
	char buf[64], twice[64];
	parload_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		parload__escape(buf, sizeof(buf), cases[i].in,
				strlen(cases[i].in));
		ck_assert_str_eq(buf, cases[i].out);
		ck_assert_uint_eq(parload__escaped_len(cases[i].in,
						       strlen(cases[i].in)),
				  strlen(cases[i].out));
		parload__escape(twice, sizeof(twice), buf, strlen(buf));
		ck_assert_str_eq(twice, buf);
	}
	parload__fail(&err, PARLOAD_EINVAL, 0, "dir/\x1b]0;pwned\a.nhdr", 1,
		      PARLOAD_NONE, "data file '%s'", "x\n\x1b[2J.raw");
	ck_assert_str_eq(err.message, "dir/\\x1b]0;pwned\\x07.nhdr: data file "
				      "'x\\n\\x1b[2J.raw' (view 1)");
	for (const char *p = err.message; *p; p++)
		ck_assert_int_ge((unsigned char)*p, 0x20);
	/* Quoted names: bounded, their middle left out whole characters at
	 * a time. */
	ck_assert_str_eq(parload__quote(buf, 12, "\x1b\x1b\x1b\x1b\x1b\x1b",
					SIZE_MAX),
			 "\\x1b...\\x1b");
	ck_assert_str_eq(parload__quote(buf, 12, "\xe6\x97\xa5\xe6\x97\xa5"
					"\xe6\x97\xa5\xe6\x97\xa5",
					SIZE_MAX),
			 "\xe6\x97\xa5...\xe6\x97\xa5");
	ck_assert_str_eq(PARLOAD__QN("abc\x01zzz", 4), "abc\\x01");
	ck_assert_str_eq(PARLOAD__Q(NULL), "(none)");
	ck_assert_uint_eq(strlen(PARLOAD__Q(err.message)),
			  PARLOAD__NAME_SIZE - 1 < strlen(err.message) ?
				  PARLOAD__NAME_SIZE - 1 :
				  strlen(err.message));
}
END_TEST

START_TEST(test_crc32c_check_value)
{
	/* The standard check value of CRC-32C, and chaining. */
	ck_assert_uint_eq(parload_crc32c(0, "123456789", 9), 0xe3069283u);
	ck_assert_uint_eq(parload_crc32c(parload_crc32c(0, "1234", 4),
					 "56789", 5),
			  0xe3069283u);
	ck_assert_uint_eq(parload_crc32c(0, "", 0), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("format");
	TCase *t = tu_tcase(s, "header", 0);

	tcase_add_loop_test(t, test_header_case, 0,
			    sizeof(header_cases) / sizeof(header_cases[0]));
	tcase_add_test(t, test_dimensions_overflow);
	tcase_add_test(t, test_minor_version_and_reserved_ignored);
	tcase_add_test(t, test_short_buffer);
	tcase_add_test(t, test_header_init_rejects);
	tcase_add_test(t, test_pixel_types);

	t = tu_tcase(s, "files", 0);
	/* The parallel loader with each of its worker counts. */
	tcase_add_loop_test(t, test_damaged_files,
			    tu_matrix_first(PARLOAD_STRATEGY_PARALLEL),
			    tu_matrix_end(PARLOAD_STRATEGY_PARALLEL));
	tcase_add_test(t, test_tiny_views_view_index);
	tcase_add_test(t, test_read_header_reports_size);

	t = tu_tcase(s, "errors", 0);
	tcase_add_test(t, test_error_table);
	tcase_add_test(t, test_message_format);
	tcase_add_test(t, test_message_cut_not_overrun);
	tcase_add_test(t, test_message_long_path_keeps_reason);
	tcase_add_test(t, test_message_escapes_names);
	tcase_add_test(t, test_crc32c_check_value);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
