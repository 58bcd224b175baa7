/*
 * zarr.h - what the Zarr files share: the folder reads and writes Zarr
 * stores (v2 and v3), whose metadata is JSON; zarr_json.c is the JSON
 * reader the metadata is parsed with.
 */
#ifndef PARLOAD_FORMATS_ZARR_H
#define PARLOAD_FORMATS_ZARR_H

#include "formats/formats.h"

/* ---- zarr_json.c: the JSON reader (RFC 8259) ---- */

typedef enum parload__json_type {
	PARLOAD__JSON_NULL, PARLOAD__JSON_FALSE, PARLOAD__JSON_TRUE,
	PARLOAD__JSON_NUMBER, PARLOAD__JSON_STRING, PARLOAD__JSON_ARRAY,
	PARLOAD__JSON_OBJECT
} parload__json_type;

typedef struct parload__json {
	parload__json_type type;
	const char *key;     /* its name in its object (decoded, NUL-ended), or NULL */
	const char *s;       /* STRING: decoded UTF-8, NUL-ended (an embedded
			      * \u0000 is refused); NUMBER: its text as written */
	size_t len;          /* strlen of s */
	uint32_t n;          /* ARRAY/OBJECT: members */
	struct parload__json *kid;  /* first member, or NULL */
	struct parload__json *next; /* next member of its parent, or NULL */
	uint64_t at;         /* byte offset in the text where it begins */
} parload__json;

typedef struct parload__json_doc {
	parload__json *root;
	void *mem;           /* owned: every node and string */
} parload__json_doc;

#define PARLOAD__JSON_MAX_DEPTH 64             /* arrays and objects nested */
#define PARLOAD__JSON_MAX_TEXT ((size_t)64 << 20) /* bytes of text */

/* Parse text (n bytes; need not be NUL-ended) as one JSON value (RFC 8259;
 * also the bare tokens NaN, Infinity, -Infinity as NUMBERs, which Python's
 * json writes).  0, or PARLOAD_ECONTAINER naming path and the byte offset
 * ("not JSON: ... at byte N"), PARLOAD_ENOMEM.  Limits: nesting 64 deep,
 * text at most 64 MiB (PARLOAD_ECONTAINER past them).  Nothing held on
 * failure.  Strings must be well-formed UTF-8 without raw control
 * characters; an object may name a key twice (both kept, _get finds the
 * first). */
int parload__json_parse(const char *text, size_t n, const char *path,
			parload__json_doc *doc, parload_error *err);
/* Free what doc holds (doc->mem) and clear it; a cleared doc is fine. */
void parload__json_free(parload__json_doc *doc);
/* Object member named key (the first), or NULL (also for a non-object). */
const parload__json *parload__json_get(const parload__json *obj,
				       const char *key);
/* Array member i, or NULL. */
const parload__json *parload__json_at(const parload__json *arr, uint32_t i);
/* A NUMBER that is an integer written without fraction or exponent,
 * within range: true and *out; else false.  "-0" is 0. */
bool parload__json_u64(const parload__json *v, uint64_t *out);
bool parload__json_i64(const parload__json *v, int64_t *out);
/* A NUMBER as a double (strtod of its text, NaN/Infinity included). */
bool parload__json_double(const parload__json *v, double *out);
/* STRING equal to s. */
bool parload__json_is(const parload__json *v, const char *s);

#endif /* PARLOAD_FORMATS_ZARR_H */
