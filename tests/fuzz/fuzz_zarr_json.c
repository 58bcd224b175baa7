/*
 * fuzz_zarr_json.c - libFuzzer harness for the JSON reader of Zarr's
 * metadata (src/formats/zarr/zarr_json.c): each input is the text of a
 * .zarray, .zattrs, .zgroup, .zmetadata or zarr.json.
 *
 * The parse must succeed with a tree that holds (each node begins inside
 * the text at the byte its type says: a quote, '[', '{', the literal, a
 * number's own text; each n counts the members linked; keys exactly on an
 * object's members; each string's len its strlen and well-formed UTF-8;
 * u64/i64 give back the digits they read), and that tree written back as
 * JSON must parse to the same tree; or it must fail with
 * PARLOAD_ECONTAINER naming the file and a byte offset inside the text
 * (or just past it), or PARLOAD_ENOMEM.
 *
 * Seeds: `fuzz_zarr_json -write_seeds=DIR` writes Zarr v2 and v3 metadata
 * as zarr-python writes it (an array's .zarray, a group's .zgroup and
 * .zattrs with OME's multiscales, a consolidated .zmetadata, a v3
 * zarr.json with sharding), and texts with escapes, surrogate pairs and
 * NaN, then exits.
 *
 * Built by `make fuzz` as fuzz_header is, with zarr_json.c added.
 */
#include "config.h"

#include "fuzz.h"
#include "formats/zarr/zarr.h"

#include <inttypes.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char path[] = "s.zarr/.zarray";

/* A growing text: the tree written back. */
typedef struct out {
	char *p;
	size_t n, cap;
} out;

static void emit(out *o, const char *s, size_t n)
{
	if (o->n + n + 1 > o->cap) {
		o->cap = (o->n + n + 1) * 2;
		o->p = realloc(o->p, o->cap);
		REQUIRE(o->p);
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
	o->p[o->n] = '\0';
}

/* s as a JSON string: every byte below 0x20, '"' and '\' escaped. */
static void emit_string(out *o, const char *s, size_t len)
{
	emit(o, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		char e[8];

		if (c < 0x20 || c == '"' || c == '\\') {
			snprintf(e, sizeof(e), "\\u%04x", c);
			emit(o, e, 6);
		} else {
			emit(o, s + i, 1);
		}
	}
	emit(o, "\"", 1);
}

static void check_string(const char *s, size_t len)
{
	uint32_t cp;

	REQUIRE(s && strlen(s) == len);
	for (size_t i = 0, m; i < len; i += m) {
		m = parload__utf8((const unsigned char *)s + i, len - i, &cp);
		REQUIRE(m > 0);
	}
}

/* A number's helpers agree with its text. */
static void check_number(const parload__json *v)
{
	char back[32];
	uint64_t u;
	int64_t i;
	double d;
	const bool neg_zero = strcmp(v->s, "-0") == 0;

	if (parload__json_u64(v, &u)) {
		snprintf(back, sizeof(back), "%" PRIu64, u);
		REQUIRE(strcmp(back, v->s) == 0 || (neg_zero && u == 0));
	}
	if (parload__json_i64(v, &i)) {
		snprintf(back, sizeof(back), "%" PRId64, i);
		REQUIRE(strcmp(back, v->s) == 0 || (neg_zero && i == 0));
	}
	REQUIRE(parload__json_double(v, &d));
}

/* v, which begins at data[v->at], checked and written back into o. */
static void walk(const parload__json *v, const uint8_t *data, size_t size,
		 out *o)
{
	static const char *const words[] = { "null", "false", "true" };
	const bool obj = v->type == PARLOAD__JSON_OBJECT;
	uint32_t n = 0;

	REQUIRE(v->at < size);
	switch (v->type) {
	case PARLOAD__JSON_NULL:
	case PARLOAD__JSON_FALSE:
	case PARLOAD__JSON_TRUE:
		REQUIRE(size - v->at >= strlen(words[v->type]) &&
			memcmp(data + v->at, words[v->type],
			       strlen(words[v->type])) == 0);
		emit(o, words[v->type], strlen(words[v->type]));
		return;
	case PARLOAD__JSON_NUMBER:
		REQUIRE(v->len && strlen(v->s) == v->len &&
			size - v->at >= v->len &&
			memcmp(data + v->at, v->s, v->len) == 0);
		check_number(v);
		emit(o, v->s, v->len);
		return;
	case PARLOAD__JSON_STRING:
		REQUIRE(data[v->at] == '"' && !v->kid && !v->n);
		check_string(v->s, v->len);
		emit_string(o, v->s, v->len);
		return;
	case PARLOAD__JSON_ARRAY:
	case PARLOAD__JSON_OBJECT:
		break;
	default:
		REQUIRE(!"a node of no type");
	}
	REQUIRE(data[v->at] == (obj ? '{' : '['));
	emit(o, obj ? "{" : "[", 1);
	for (const parload__json *m = v->kid; m; m = m->next, n++) {
		REQUIRE(m->at > v->at && (m->key != NULL) == obj);
		if (n)
			emit(o, ",", 1);
		if (obj) {
			check_string(m->key, strlen(m->key));
			emit_string(o, m->key, strlen(m->key));
			emit(o, ":", 1);
		}
		REQUIRE(n < v->n);
		if (n < 64) /* _at walks from the first */
			REQUIRE(parload__json_at(v, n) == (obj ? NULL : m));
		walk(m, data, size, o);
	}
	REQUIRE(n == v->n);
	emit(o, obj ? "}" : "]", 1);
}

static void failed_well(int rc, const parload_error *err, size_t size)
{
	REQUIRE(err->code == rc);
	REQUIRE(rc == PARLOAD_ECONTAINER || rc == PARLOAD_ENOMEM);
	REQUIRE(strncmp(err->message, path, strlen(path)) == 0);
	if (rc == PARLOAD_ECONTAINER)
		REQUIRE(err->offset <= size &&
			strstr(err->message, "not JSON: "));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parload__json_doc doc, again;
	parload_error err;
	out o = { 0 }, o2 = { 0 };
	int rc = parload__json_parse((const char *)data, size, path, &doc,
				     &err);

	if (rc) {
		failed_well(rc, &err, size);
		REQUIRE(!doc.root && !doc.mem);
		return 0;
	}
	REQUIRE(doc.root && !doc.root->key && !doc.root->next);
	walk(doc.root, data, size, &o);
	/* Written back, it reads as the same tree. */
	rc = parload__json_parse(o.p, o.n, path, &again, &err);
	if (rc) {
		fprintf(stderr, "written back: %s\n%s\n", o.p, err.message);
		REQUIRE(rc == 0);
	}
	walk(again.root, (const uint8_t *)o.p, o.n, &o2);
	REQUIRE(o2.n == o.n && memcmp(o2.p, o.p, o.n) == 0);
	parload__json_free(&again);
	parload__json_free(&doc);
	REQUIRE(!doc.mem && !doc.root);
	free(o.p);
	free(o2.p);
	return 0;
}

/* ---- seeds ---- */

static const char *const seeds[] = {
	/* .zarray, zarr-python 2 */
	"{\n    \"chunks\": [\n        1,\n        64,\n        64\n    ],\n"
	"    \"compressor\": {\n        \"blocksize\": 0,\n"
	"        \"clevel\": 5,\n        \"cname\": \"lz4\",\n"
	"        \"id\": \"blosc\",\n        \"shuffle\": 1\n    },\n"
	"    \"dimension_separator\": \"/\",\n"
	"    \"dtype\": \"<u2\",\n    \"fill_value\": 0,\n"
	"    \"filters\": null,\n    \"order\": \"C\",\n"
	"    \"shape\": [\n        10,\n        128,\n        128\n    ],\n"
	"    \"zarr_format\": 2\n}",
	"{\"chunks\":[4,32],\"compressor\":{\"id\":\"zstd\",\"level\":1},"
	"\"dtype\":\"<f4\",\"fill_value\":\"NaN\",\"filters\":[{\"id\":"
	"\"delta\",\"dtype\":\"<f4\"}],\"order\":\"F\",\"shape\":[8,64],"
	"\"zarr_format\":2}",
	"{\"zarr_format\": 2}",
	/* .zattrs of an OME-Zarr group */
	"{\n    \"multiscales\": [\n        {\n            \"axes\": [\n"
	"                {\"name\": \"z\", \"type\": \"space\", \"unit\": "
	"\"micrometer\"},\n                {\"name\": \"y\", \"type\": "
	"\"space\"},\n                {\"name\": \"x\", \"type\": \"space\"}"
	"\n            ],\n            \"datasets\": [\n                {"
	"\"coordinateTransformations\": [{\"scale\": [1.0, 0.5, 0.5], "
	"\"type\": \"scale\"}], \"path\": \"0\"},\n                {\"path\": "
	"\"1\"}\n            ],\n            \"name\": \"scan\",\n"
	"            \"version\": \"0.4\"\n        }\n    ],\n"
	"    \"angles\": [0.0, 0.1, -1e-3, 3.14159265358979, 1E+2]\n}",
	/* .zmetadata, consolidated */
	"{\"metadata\":{\".zattrs\":{},\".zgroup\":{\"zarr_format\":2},"
	"\"data/.zarray\":{\"chunks\":[1,2,2],\"compressor\":null,"
	"\"dtype\":\"|u1\",\"fill_value\":null,\"filters\":null,\"order\":"
	"\"C\",\"shape\":[3,2,2],\"zarr_format\":2}},"
	"\"zarr_consolidated_format\":1}",
	/* zarr.json, v3 with sharding */
	"{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[16,256,256],"
	"\"data_type\":\"uint16\",\"chunk_grid\":{\"name\":\"regular\","
	"\"configuration\":{\"chunk_shape\":[4,256,256]}},"
	"\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":"
	"{\"separator\":\"/\"}},\"fill_value\":0,\"codecs\":[{\"name\":"
	"\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[1,256,256],"
	"\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
	"\"little\"}},{\"name\":\"zstd\",\"configuration\":{\"level\":3,"
	"\"checksum\":false}}],\"index_codecs\":[{\"name\":\"bytes\","
	"\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
	"\"index_location\":\"end\"}}],\"attributes\":{},"
	"\"dimension_names\":[\"z\",null,\"x\"]}",
	"{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}",
	/* strings and numbers at their edges */
	"[\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\xc3\xa9\","
	" NaN, Infinity, -Infinity, -0, 18446744073709551615, "
	"-9223372036854775808, 1.5e-300, {\"a\":1,\"a\":2}, [[[]]], "
	"true, false, null]",
};

static void write_seeds(const char *dir)
{
	char p[4096];

	fuzz_seed_dir(dir);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		FILE *f;

		snprintf(p, sizeof(p), "%s/zarr-json-%zu", dir, i);
		f = fopen(p, "wb");
		if (!f || fwrite(seeds[i], 1, strlen(seeds[i]), f) !=
			  strlen(seeds[i]) || fclose(f) != 0) {
			fprintf(stderr, "%s: cannot write\n", p);
			exit(1);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_seeds_option(*argc, *argv, write_seeds);
	return 0;
}
