/*
 * check_json_reader.c - the JSON reader of Zarr's metadata
 * (src/formats/zarr/zarr_json.c), from tables as jansson's test suite
 * has them: valid texts and the tree each must become (written back in a
 * compact form: types, keys, member counts, decoded strings, numbers' text
 * as written), invalid texts and the byte offset each refusal names, the
 * number helpers at the edges of their ranges; the limits (nesting 64
 * deep, 64 MiB of text); and, in a build with the fault-injection seam,
 * every allocation failing in turn.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/zarr/zarr.h"
#include "testutil.h"

/* ---- the tree written back ---- */

/* v in the compact form: null n, true t, false f, a number #TEXT, a
 * string "BYTES" (bytes outside printable ASCII, '"' and '\' as \xNN), an
 * array [a,b], an object {"k":v,...}.  Checks each n against the members
 * it links. */
static void put(char *out, size_t size, const char *fmt, const void *a)
{
	const size_t k = strlen(out);

	ck_assert_uint_lt(k, size - 1);
	snprintf(out + k, size - k, fmt, a);
}

static void put_string(char *out, size_t size, const char *s, size_t len)
{
	ck_assert_uint_eq(strlen(s), len);
	put(out, size, "%s", "\"");
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		char b[8];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			snprintf(b, sizeof(b), "%c", c);
		else
			snprintf(b, sizeof(b), "\\x%02x", c);
		put(out, size, "%s", b);
	}
	put(out, size, "%s", "\"");
}

static void dump(const parload__json *v, char *out, size_t size)
{
	const bool obj = v->type == PARLOAD__JSON_OBJECT;
	uint32_t n = 0;

	switch (v->type) {
	case PARLOAD__JSON_NULL: put(out, size, "%s", "n"); return;
	case PARLOAD__JSON_TRUE: put(out, size, "%s", "t"); return;
	case PARLOAD__JSON_FALSE: put(out, size, "%s", "f"); return;
	case PARLOAD__JSON_NUMBER:
		ck_assert_uint_eq(strlen(v->s), v->len);
		put(out, size, "#%s", v->s);
		return;
	case PARLOAD__JSON_STRING: put_string(out, size, v->s, v->len); return;
	default: break;
	}
	put(out, size, "%s", obj ? "{" : "[");
	for (const parload__json *m = v->kid; m; m = m->next, n++) {
		put(out, size, "%s", n ? "," : "");
		ck_assert(obj ? m->key != NULL : m->key == NULL);
		if (obj) {
			put_string(out, size, m->key, strlen(m->key));
			put(out, size, "%s", ":");
		}
		dump(m, out, size);
	}
	ck_assert_uint_eq(n, v->n);
	put(out, size, "%s", obj ? "}" : "]");
}

/* ---- valid texts ---- */

static const struct valid {
	const char *text, *tree;
} valid[] = {
	{ "null", "n" },
	{ " true ", "t" },
	{ "\t\r\nfalse\n", "f" },
	{ "0", "#0" },
	{ "-0", "#-0" },
	{ "-0.0e-0", "#-0.0e-0" },
	{ "12.5E+3", "#12.5E+3" },
	{ "1e3", "#1e3" },
	{ "18446744073709551616", "#18446744073709551616" },
	{ "NaN", "#NaN" },
	{ "Infinity", "#Infinity" },
	{ "-Infinity", "#-Infinity" },
	{ "[NaN,-Infinity,Infinity]", "[#NaN,#-Infinity,#Infinity]" },
	{ "\"\"", "\"\"" },
	{ "\"abc\"", "\"abc\"" },
	{ "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
	  "\"\\x22\\x5c/\\x08\\x0c\\x0a\\x0d\\x09\"" },
	{ "\"\\u0041\\u00e9\\u20AC\"", "\"A\\xc3\\xa9\\xe2\\x82\\xac\"" },
	/* U+1F600 as a surrogate pair, and written as UTF-8. */
	{ "\"\\ud83d\\ude00\"", "\"\\xf0\\x9f\\x98\\x80\"" },
	{ "\"\xf0\x9f\x98\x80\"", "\"\\xf0\\x9f\\x98\\x80\"" },
	{ "\"\\uDBFF\\uDFFF\"", "\"\\xf4\\x8f\\xbf\\xbf\"" },
	{ "\"\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\x7f\"",
	  "\"\\xc3\\xa9\\xe2\\x82\\xac\\xf4\\x8f\\xbf\\xbf\\x7f\"" },
	{ "[]", "[]" },
	{ "{}", "{}" },
	{ " [ ] ", "[]" },
	{ "[[],{},[[]]]", "[[],{},[[]]]" },
	{ "[1, \"a\" ,null,true,false]", "[#1,\"a\",n,t,f]" },
	{ "{\"a\":1,\"b\":[2,3],\"c\":{\"d\":null}}",
	  "{\"a\":#1,\"b\":[#2,#3],\"c\":{\"d\":n}}" },
	{ "{\"\\u00e9t\\u00e9\" : \"x\"}", "{\"\\xc3\\xa9t\\xc3\\xa9\":\"x\"}" },
	{ "{\"a\":1,\"a\":2}", "{\"a\":#1,\"a\":#2}" },
	{ "{\"\":0}", "{\"\":#0}" },
	/* A .zarray as zarr-python 2 writes it. */
	{ "{\n    \"chunks\": [\n        1,\n        64,\n        64\n    ],\n"
	  "    \"compressor\": {\n        \"blocksize\": 0,\n"
	  "        \"clevel\": 5,\n        \"cname\": \"lz4\",\n"
	  "        \"id\": \"blosc\",\n        \"shuffle\": 1\n    },\n"
	  "    \"dtype\": \"<u2\",\n    \"fill_value\": 0,\n"
	  "    \"filters\": null,\n    \"order\": \"C\",\n"
	  "    \"shape\": [\n        10,\n        128,\n        128\n    ],\n"
	  "    \"zarr_format\": 2\n}",
	  "{\"chunks\":[#1,#64,#64],\"compressor\":{\"blocksize\":#0,"
	  "\"clevel\":#5,\"cname\":\"lz4\",\"id\":\"blosc\",\"shuffle\":#1},"
	  "\"dtype\":\"<u2\",\"fill_value\":#0,\"filters\":n,\"order\":\"C\","
	  "\"shape\":[#10,#128,#128],\"zarr_format\":#2}" },
};

static void parse_ok(const char *text, size_t n, parload__json_doc *doc)
{
	parload_error err;
	const int rc = parload__json_parse(text, n, "a.zarr/.zarray", doc,
					   &err);

	ck_assert_msg(rc == 0, "%s: %s", text, err.message);
	ck_assert_ptr_nonnull(doc->root);
}

START_TEST(test_valid)
{
	const struct valid *t = &valid[_i];
	parload__json_doc doc;
	char out[1024] = "";

	parse_ok(t->text, strlen(t->text), &doc);
	dump(doc.root, out, sizeof(out));
	ck_assert_str_eq(out, t->tree);
	ck_assert_ptr_null(doc.root->key);
	ck_assert_ptr_null(doc.root->next);
	parload__json_free(&doc);
	ck_assert_ptr_null(doc.mem);
	ck_assert_ptr_null(doc.root);
}
END_TEST

/* The text need not end with a NUL: parsing stops at n. */
START_TEST(test_not_nul_ended)
{
	const char text[] = { '[', '1', '2', ']', '3' };
	parload__json_doc doc;
	char out[64] = "";

	parse_ok(text, 4, &doc);
	dump(doc.root, out, sizeof(out));
	ck_assert_str_eq(out, "[#12]");
	parload__json_free(&doc);
	parse_ok(text + 1, 1, &doc);
	ck_assert_str_eq(doc.root->s, "1");
	parload__json_free(&doc);
}
END_TEST

/* Where each value begins; get and at. */
START_TEST(test_lookup)
{
	const char *text = " {\"a\": [10, \"x\"], \"b\": {}, \"a\": 3}";
	parload__json_doc doc;
	const parload__json *a, *b;

	parse_ok(text, strlen(text), &doc);
	ck_assert_uint_eq(doc.root->at, 1);
	a = parload__json_get(doc.root, "a");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, PARLOAD__JSON_ARRAY);
	ck_assert_uint_eq(a->at, 7);
	ck_assert_uint_eq(parload__json_at(a, 0)->at, 8);
	ck_assert_uint_eq(parload__json_at(a, 1)->at, 12);
	ck_assert(parload__json_is(parload__json_at(a, 1), "x"));
	ck_assert(!parload__json_is(parload__json_at(a, 1), "xy"));
	ck_assert(!parload__json_is(parload__json_at(a, 0), "10"));
	ck_assert_ptr_null(parload__json_at(a, 2));
	ck_assert_ptr_null(parload__json_at(doc.root, 0));
	b = parload__json_get(doc.root, "b");
	ck_assert_int_eq(b->type, PARLOAD__JSON_OBJECT);
	ck_assert_uint_eq(b->at, 23);
	ck_assert_uint_eq(b->n, 0);
	ck_assert_ptr_null(b->kid);
	ck_assert_ptr_null(parload__json_get(b, "a"));
	ck_assert_ptr_null(parload__json_get(doc.root, "c"));
	ck_assert_ptr_null(parload__json_get(a, "a"));
	ck_assert_ptr_null(parload__json_get(NULL, "a"));
	ck_assert_ptr_null(parload__json_at(NULL, 0));
	ck_assert_uint_eq(parload__json_get(doc.root, "b")->next->at, 32);
	parload__json_free(&doc);
	parload__json_free(&doc);
}
END_TEST

/* ---- invalid texts ---- */

static const struct invalid {
	const char *text;
	size_t len;   /* 0: strlen(text) */
	uint64_t at;  /* the byte offset named */
	const char *what;
} invalid[] = {
	{ "", 0, 0, "the text ends where a value should be" },
	{ "   ", 0, 3, "the text ends where a value should be" },
	{ "[", 0, 1, "the text ends where a value should be" },
	{ "[1", 0, 2, "the text ends inside an array" },
	{ "{", 0, 1, "the text ends inside an object" },
	{ "{\"a\"", 0, 4, "the text ends inside an object" },
	{ "{\"a\":", 0, 5, "the text ends where a value should be" },
	{ "{\"a\":1", 0, 6, "the text ends inside an object" },
	{ "1 2", 0, 2, "'2' where the end of the text should be" },
	{ "{} x", 0, 3, "'x' where the end of the text should be" },
	{ "nullx", 0, 4, "'x' where the end of the text should be" },
	{ "[1,]", 0, 3, "']' where a value should be" },
	{ "[,1]", 0, 1, "',' where a value should be" },
	{ "[1 2]", 0, 3, "'2' where ',' or ']' should be" },
	{ "{\"a\":1,}", 0, 7, "'}' where a key should be" },
	{ "{\"a\" 1}", 0, 5, "'1' where ':' should be" },
	{ "{a:1}", 0, 1, "'a' where a key should be" },
	{ "{1:1}", 0, 1, "'1' where a key should be" },
	{ "{\"a\":1 \"b\":2}", 0, 7, "'\"' where ',' or '}' should be" },
	{ "[1}", 0, 2, "'}' where ',' or ']' should be" },
	{ "'a'", 0, 0, "''' where a value should be" },
	{ "nul", 0, 0, "'n' where a value should be" },
	{ "True", 0, 0, "'T' where a value should be" },
	{ "nan", 0, 0, "'n' where a value should be" },
	{ "inf", 0, 0, "'i' where a value should be" },
	{ "+1", 0, 0, "'+' where a value should be" },
	{ "+Infinity", 0, 0, "'+' where a value should be" },
	{ "-", 0, 1, "a number without digits" },
	{ "-a", 0, 1, "a number without digits" },
	{ "-NaN", 0, 1, "a number without digits" },
	{ "01", 0, 1, "a digit after a leading 0" },
	{ "-012", 0, 2, "a digit after a leading 0" },
	{ ".5", 0, 0, "'.' where a value should be" },
	{ "1.", 0, 2, "no digit after a decimal point" },
	{ "1.e3", 0, 2, "no digit after a decimal point" },
	{ "1e", 0, 2, "an exponent without digits" },
	{ "1e+", 0, 3, "an exponent without digits" },
	{ "[1E-x]", 0, 4, "an exponent without digits" },
	{ "0x10", 0, 1, "'x' where the end of the text should be" },
	{ "\"abc", 0, 0, "a string not closed" },
	{ "[\"a\\\"]", 0, 1, "a string not closed" },
	{ "\"\\", 0, 0, "a string not closed" },
	{ "\"a\nb\"", 0, 2, "a control character in a string" },
	{ "\"\t\"", 0, 1, "a control character in a string" },
	{ "\"\x1f\"", 0, 1, "a control character in a string" },
	{ "\"a\0b\"", 5, 2, "a control character in a string" },
	{ "\"\\x41\"", 0, 1, "an unknown escape in a string" },
	{ "\"\\U0041\"", 0, 1, "an unknown escape in a string" },
	{ "\"\\'\"", 0, 1, "an unknown escape in a string" },
	{ "\"\\u004\"", 0, 1, "\\u without four hex digits" },
	{ "\"\\u00g1\"", 0, 5, "\\u without four hex digits" },
	{ "\"\\u0000\"", 0, 1, "\\u0000 in a string" },
	{ "{\"a\\u0000b\":1}", 0, 3, "\\u0000 in a string" },
	{ "\"\\ud83d\"", 0, 1, "a high surrogate without its low one" },
	{ "\"\\ud83dx\"", 0, 1, "a high surrogate without its low one" },
	{ "\"\\ud83d\\n\"", 0, 1, "a high surrogate without its low one" },
	{ "\"\\ud83d\\u0041\"", 0, 1, "a high surrogate without its low one" },
	{ "\"\\ud83d\\ud83d\"", 0, 1, "a high surrogate without its low one" },
	{ "\"\\ude00\"", 0, 1, "a low surrogate without its high one" },
	{ "\"a\x80\"", 0, 2, "bytes that are not UTF-8" },
	{ "\"\xc0\xaf\"", 0, 1, "bytes that are not UTF-8" },
	{ "\"\xc3\"", 0, 1, "bytes that are not UTF-8" },
	{ "\"\xe0\x80\xaf\"", 0, 1, "bytes that are not UTF-8" },
	{ "\"ab\xed\xa0\x80\"", 0, 3, "bytes that are not UTF-8" },
	{ "\"\xf4\x90\x80\x80\"", 0, 1, "bytes that are not UTF-8" },
	{ "\"\xf5\x80\x80\x80\"", 0, 1, "bytes that are not UTF-8" },
	{ "\"\xff\"", 0, 1, "bytes that are not UTF-8" },
	{ "\xef\xbb\xbf{}", 0, 0, "byte 0xef where a value should be" },
	{ "[1]\0", 4, 3, "byte 0x00 where the end of the text should be" },
	{ "[1]\x0b", 0, 3, "byte 0x0b where the end of the text should be" },
	{ "{\"a\":[1,{\"b\":[tru]}]}", 0, 14, "'t' where a value should be" },
};

START_TEST(test_invalid)
{
	const struct invalid *t = &invalid[_i];
	const size_t len = t->len ? t->len : strlen(t->text);
	parload__json_doc doc = { (parload__json *)1, (void *)1 };
	parload_error err;
	char want[256];
	int rc;

	rc = parload__json_parse(t->text, len, "s.zarr/.zattrs", &doc, &err);
	ck_assert_msg(rc == PARLOAD_ECONTAINER, "%s: %d", t->text, rc);
	ck_assert_int_eq(err.code, PARLOAD_ECONTAINER);
	ck_assert_msg(err.offset == t->at, "%s: at %llu, not %llu: %s",
		      t->text, (unsigned long long)err.offset,
		      (unsigned long long)t->at, err.message);
	snprintf(want, sizeof(want),
		 "s.zarr/.zattrs: not JSON: %s (byte offset %llu)", t->what,
		 (unsigned long long)t->at);
	ck_assert_str_eq(err.message, want);
	ck_assert_ptr_null(doc.root);
	ck_assert_ptr_null(doc.mem);
}
END_TEST

/* ---- the number helpers ---- */

enum { NO = 0, YES = 1 };

static const struct num {
	const char *text;
	int u_ok;
	uint64_t u;
	int i_ok;
	int64_t i;
	int d_ok;
	double d;
} nums[] = {
	{ "0", YES, 0, YES, 0, YES, 0.0 },
	{ "-0", YES, 0, YES, 0, YES, -0.0 },
	{ "7", YES, 7, YES, 7, YES, 7.0 },
	{ "-7", NO, 0, YES, -7, YES, -7.0 },
	{ "18446744073709551615", YES, UINT64_MAX, NO, 0, YES,
	  18446744073709551615.0 },
	{ "18446744073709551616", NO, 0, NO, 0, YES, 18446744073709551616.0 },
	{ "99999999999999999999", NO, 0, NO, 0, YES, 1e20 },
	{ "9223372036854775807", YES, INT64_MAX, YES, INT64_MAX, YES,
	  9223372036854775807.0 },
	{ "9223372036854775808", YES, (uint64_t)INT64_MAX + 1, NO, 0, YES,
	  9223372036854775808.0 },
	{ "-9223372036854775808", NO, 0, YES, INT64_MIN, YES,
	  -9223372036854775808.0 },
	{ "-9223372036854775809", NO, 0, NO, 0, YES, -9223372036854775809.0 },
	{ "1e3", NO, 0, NO, 0, YES, 1000.0 },
	{ "1.0", NO, 0, NO, 0, YES, 1.0 },
	{ "-2.5e-3", NO, 0, NO, 0, YES, -0.0025 },
	{ "1E400", NO, 0, NO, 0, YES, HUGE_VAL },
	{ "NaN", NO, 0, NO, 0, YES, NAN },
	{ "Infinity", NO, 0, NO, 0, YES, HUGE_VAL },
	{ "-Infinity", NO, 0, NO, 0, YES, -HUGE_VAL },
	{ "\"1\"", NO, 0, NO, 0, NO, 0 },
	{ "null", NO, 0, NO, 0, NO, 0 },
	{ "[1]", NO, 0, NO, 0, NO, 0 },
};

START_TEST(test_numbers)
{
	const struct num *t = &nums[_i];
	parload__json_doc doc;
	uint64_t u = 12345;
	int64_t i = 12345;
	double d = 12345;

	parse_ok(t->text, strlen(t->text), &doc);
	ck_assert_msg(parload__json_u64(doc.root, &u) == t->u_ok, "%s",
		      t->text);
	ck_assert_uint_eq(u, t->u_ok ? t->u : 12345);
	ck_assert_msg(parload__json_i64(doc.root, &i) == t->i_ok, "%s",
		      t->text);
	ck_assert_int_eq(i, t->i_ok ? t->i : 12345);
	ck_assert_msg(parload__json_double(doc.root, &d) == t->d_ok, "%s",
		      t->text);
	if (!t->d_ok)
		ck_assert(d == 12345);
	else if (isnan(t->d))
		ck_assert(isnan(d));
	else
		ck_assert_msg(d == t->d && signbit(d) == signbit(t->d),
			      "%s: %g", t->text, d);
	ck_assert(!parload__json_u64(NULL, &u));
	ck_assert(!parload__json_double(NULL, &d));
	parload__json_free(&doc);
}
END_TEST

/* ---- the limits ---- */

/* depth arrays (or objects) nested, each holding the next (the
 * innermost object holding 0). */
static char *nested(int depth, bool objects, size_t *len)
{
	char *t = malloc((size_t)depth * 6 + 2);
	size_t k = 0;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < depth; i++)
		k += (size_t)sprintf(t + k, "%s", objects ? "{\"a\":" : "[");
	if (objects)
		t[k++] = '0';
	for (int i = 0; i < depth; i++)
		t[k++] = objects ? '}' : ']';
	t[k] = '\0';
	*len = k;
	return t;
}

START_TEST(test_depth)
{
	const bool objects = _i;
	const size_t step = objects ? 5 : 1;
	parload__json_doc doc;
	parload_error err;
	const parload__json *v;
	size_t len;
	char *t = nested(PARLOAD__JSON_MAX_DEPTH, objects, &len);
	int depth = 0;

	ck_assert_int_eq(PARLOAD__JSON_MAX_DEPTH, 64);
	parse_ok(t, len, &doc);
	for (v = doc.root; v && v->type != PARLOAD__JSON_NUMBER; v = v->kid)
		depth++;
	ck_assert_int_eq(depth, 64);
	parload__json_free(&doc);
	free(t);
	t = nested(PARLOAD__JSON_MAX_DEPTH + 1, objects, &len);
	ck_assert_int_eq(parload__json_parse(t, len, "d.json", &doc, &err),
			 PARLOAD_ECONTAINER);
	ck_assert_uint_eq(err.offset, 64 * step);
	ck_assert_str_eq(err.message, objects ?
			 "d.json: not JSON: arrays and objects nested deeper "
			 "than 64 (byte offset 320)" :
			 "d.json: not JSON: arrays and objects nested deeper "
			 "than 64 (byte offset 64)");
	ck_assert_ptr_null(doc.mem);
	free(t);
}
END_TEST

/* 64 MiB of text is read; a byte more is refused before any is. */
START_TEST(test_size)
{
	const size_t max = (size_t)64 << 20;
	char *t = malloc(max + 1);
	parload__json_doc doc;
	parload_error err;

	ck_assert_ptr_nonnull(t);
	memset(t, ' ', max + 1);
	t[0] = '[';
	t[max - 1] = ']';
	parse_ok(t, max, &doc);
	ck_assert_int_eq(doc.root->type, PARLOAD__JSON_ARRAY);
	parload__json_free(&doc);
	ck_assert_int_eq(parload__json_parse(t, max + 1, "big.json", &doc,
					     &err), PARLOAD_ECONTAINER);
	ck_assert_str_eq(err.message, "big.json: JSON text of 67108865 "
			 "bytes, over the 64 MiB parload reads");
	ck_assert_uint_eq(err.offset, PARLOAD_NONE);
	ck_assert_ptr_null(doc.mem);
	free(t);
}
END_TEST

/* A long document: members past one block of the arena, strings longer
 * than a block, all read back. */
START_TEST(test_large)
{
	const size_t members = 20000, slen = 200000;
	size_t cap = members * 24 + slen + 64, k = 0;
	char *t = malloc(cap);
	parload__json_doc doc;
	const parload__json *v;
	size_t i = 0;

	ck_assert_ptr_nonnull(t);
	k += (size_t)sprintf(t + k, "{\"s\":\"");
	memset(t + k, 'x', slen);
	k += slen;
	k += (size_t)sprintf(t + k, "\",\"a\":[");
	for (i = 0; i < members; i++)
		k += (size_t)sprintf(t + k, "%s%zu", i ? "," : "", i);
	k += (size_t)sprintf(t + k, "]}");
	parse_ok(t, k, &doc);
	v = parload__json_get(doc.root, "s");
	ck_assert_uint_eq(v->len, slen);
	ck_assert_uint_eq(strspn(v->s, "x"), slen);
	v = parload__json_get(doc.root, "a");
	ck_assert_uint_eq(v->n, members);
	i = 0;
	for (const parload__json *m = v->kid; m; m = m->next, i++) {
		uint64_t u;

		ck_assert(parload__json_u64(m, &u));
		ck_assert_uint_eq(u, i);
	}
	ck_assert_uint_eq(i, members);
	parload__json_free(&doc);
	free(t);
}
END_TEST

#ifdef PARLOAD_FAULT_INJECTION
/* Each allocation of a parse failing in turn (a string longer than a
 * block of the arena between nodes, so that there are several):
 * PARLOAD_ENOMEM naming the file, nothing held; then the parse that needs
 * no more succeeds. */
START_TEST(test_alloc_faults)
{
	const size_t slen = 100000;
	char *text = malloc(slen + 64);
	const long heap = parload__fault_live(PARLOAD__FR_HEAP);
	parload__json_doc doc;
	parload_error err;
	uint64_t nth;
	size_t k;
	int rc = -1;

	ck_assert_ptr_nonnull(text);
	k = (size_t)sprintf(text, "{\"zarr_format\":3,\"s\":\"");
	memset(text + k, 'x', slen);
	k += slen;
	k += (size_t)sprintf(text + k, "\",\"a\":[1,2,{\"b\":[null]}]}");
	for (nth = 1; rc != 0; nth++) {
		parload__fault_reset();
		parload__fault_fail_nth(nth, PARLOAD__FK_BIT(MALLOC), 0);
		rc = parload__json_parse(text, k, "f.json", &doc, &err);
		parload__fault_reset();
		if (rc == 0)
			break;
		ck_assert_int_eq(rc, PARLOAD_ENOMEM);
		ck_assert_ptr_nonnull(strstr(err.message, "f.json"));
		ck_assert_ptr_null(doc.mem);
		ck_assert_int_eq(parload__fault_live(PARLOAD__FR_HEAP), heap);
	}
	ck_assert_uint_eq(nth, 4); /* three blocks */
	ck_assert_uint_eq(parload__json_get(doc.root, "s")->len, slen);
	ck_assert_uint_eq(parload__json_get(doc.root, "a")->n, 3);
	parload__json_free(&doc);
	ck_assert_int_eq(parload__fault_live(PARLOAD__FR_HEAP), heap);
	free(text);
}
END_TEST
#endif

static Suite *suite(void)
{
	Suite *s = suite_create("json_reader");
	TCase *tc = tu_tcase(s, "valid", 0);

	tcase_add_loop_test(tc, test_valid, 0, TU_COUNT(valid));
	tcase_add_test(tc, test_not_nul_ended);
	tcase_add_test(tc, test_lookup);
	tc = tu_tcase(s, "invalid", 0);
	tcase_add_loop_test(tc, test_invalid, 0, TU_COUNT(invalid));
	tc = tu_tcase(s, "numbers", 0);
	tcase_add_loop_test(tc, test_numbers, 0, TU_COUNT(nums));
	tc = tu_tcase(s, "limits", 60);
	tcase_add_loop_test(tc, test_depth, 0, 2);
	tcase_add_test(tc, test_size);
	tcase_add_test(tc, test_large);
#ifdef PARLOAD_FAULT_INJECTION
	tc = tu_tcase(s, "faults", 0);
	tcase_add_test(tc, test_alloc_faults);
#endif
	return s;
}

int main(void)
{
	return tu_run(suite());
}
