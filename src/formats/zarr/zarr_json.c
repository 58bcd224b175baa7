/*
 * zarr_json.c - the JSON reader of Zarr's metadata (RFC 8259, and the bare
 * NaN, Infinity and -Infinity that Python's json writes): one recursive
 * descent over the bytes, never nested deeper than
 * PARLOAD__JSON_MAX_DEPTH, every node and decoded string taken from one
 * arena of blocks that parload__json_free releases.  Numbers are checked
 * against RFC 8259's grammar here and kept as written; only
 * parload__json_double converts one (strtod).  Nothing here depends on the
 * locale.
 */
#include "formats/zarr/zarr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_MIN ((size_t)64 << 10) /* bytes of a block of the arena */

/* A block of the arena: doc->mem is the newest, each names the one made
 * before it. */
struct block {
	struct block *prev;
	size_t used, cap;
	max_align_t data[];
};

/* The text being parsed. */
typedef struct ps {
	const unsigned char *p;
	size_t n, i;            /* bytes, and the one being read */
	const char *path;
	parload_error *err;
	struct block *mem;      /* the arena */
	int depth;              /* arrays and objects open */
} ps;

static int bad(ps *s, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* PARLOAD_ECONTAINER: the text is not JSON at byte at. */
static int bad(ps *s, size_t at, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return parload__fail(s->err, PARLOAD_ECONTAINER, 0, s->path,
			     PARLOAD_NONE, at, "not JSON: %s", what);
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *prev = b->prev;

		parload__sys_free(b);
		b = prev;
	}
}

/* size bytes of the arena aligned to align (a power of 2), or NULL with
 * PARLOAD_ENOMEM in s->err. */
static void *take(ps *s, size_t size, size_t align)
{
	struct block *b = s->mem;
	size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;

	if (!b || at > b->cap || b->cap - at < size) {
		const size_t cap = size > BLOCK_MIN ? size : BLOCK_MIN;

		b = parload__sys_malloc(sizeof(*b) + cap);
		if (!b) {
			parload__fail_nomem(s->err, s->path);
			return NULL;
		}
		b->prev = s->mem;
		b->cap = cap;
		s->mem = b;
		at = 0;
	}
	b->used = at + size;
	return (unsigned char *)b->data + at;
}

static parload__json *node(ps *s, parload__json_type type, size_t at)
{
	parload__json *v = take(s, sizeof(*v), _Alignof(parload__json));

	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = type;
		v->at = at;
	}
	return v;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static void skip_ws(ps *s)
{
	while (s->i < s->n && (s->p[s->i] == ' ' || s->p[s->i] == '\t' ||
			       s->p[s->i] == '\n' || s->p[s->i] == '\r'))
		s->i++;
}

/* What stands at byte at, for a message. */
static int unexpected(ps *s, size_t at, const char *wanted)
{
	const unsigned char c = s->p[at];

	if (c > 0x20 && c < 0x7f)
		return bad(s, at, "'%c' where %s should be", c, wanted);
	return bad(s, at, "byte 0x%02x where %s should be", c, wanted);
}

/* v->s: a copy of the text from s->i to end, which is then read. */
static int keep_text(ps *s, parload__json *v, size_t end)
{
	char *t = take(s, end - s->i + 1, 1);

	if (!t)
		return PARLOAD_ENOMEM;
	memcpy(t, s->p + s->i, end - s->i);
	t[end - s->i] = '\0';
	v->s = t;
	v->len = end - s->i;
	s->i = end;
	return 0;
}

/* Past the digits at *j: whether there was one. */
static bool digits(const ps *s, size_t *j)
{
	const size_t from = *j;

	while (*j < s->n && is_digit(s->p[*j]))
		(*j)++;
	return *j > from;
}

/* A number (RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?). */
static int number(ps *s, parload__json *v)
{
	size_t j = s->i;

	if (s->p[j] == '-')
		j++;
	if (j < s->n && s->p[j] == '0') {
		if (++j < s->n && is_digit(s->p[j]))
			return bad(s, j, "a digit after a leading 0");
	} else if (!digits(s, &j)) {
		return bad(s, j, "a number without digits");
	}
	if (j < s->n && s->p[j] == '.' && (++j, !digits(s, &j)))
		return bad(s, j, "no digit after a decimal point");
	if (j < s->n && (s->p[j] == 'e' || s->p[j] == 'E')) {
		if (++j < s->n && (s->p[j] == '+' || s->p[j] == '-'))
			j++;
		if (!digits(s, &j))
			return bad(s, j, "an exponent without digits");
	}
	return keep_text(s, v, j);
}

/* The literal at s->i (null, true, false, NaN, Infinity, -Infinity) into
 * *out: 0, 1 when there is none, or what failed. */
static int word(ps *s, parload__json **out)
{
	static const struct {
		const char *text;
		parload__json_type type;
	} words[] = {
		{ "null", PARLOAD__JSON_NULL }, { "true", PARLOAD__JSON_TRUE },
		{ "false", PARLOAD__JSON_FALSE },
		{ "NaN", PARLOAD__JSON_NUMBER },
		{ "Infinity", PARLOAD__JSON_NUMBER },
		{ "-Infinity", PARLOAD__JSON_NUMBER },
	};

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		const size_t len = strlen(words[w].text);
		parload__json *v;

		if (s->n - s->i < len || memcmp(s->p + s->i, words[w].text, len))
			continue;
		v = *out = node(s, words[w].type, s->i);
		if (!v)
			return PARLOAD_ENOMEM;
		if (v->type == PARLOAD__JSON_NUMBER)
			return keep_text(s, v, s->i + len);
		s->i += len;
		return 0;
	}
	return 1;
}

/* The closing quote of the string opened at s->i, or s->n. */
static size_t string_end(const ps *s)
{
	size_t i = s->i + 1;

	while (i < s->n && s->p[i] != '"')
		i += s->p[i] == '\\' ? 2 : 1;
	return i < s->n ? i : s->n;
}

/* Four hex digits after the \u at s->i, read. */
static int hex4(ps *s, size_t end, uint32_t *v)
{
	*v = 0;
	if (end - s->i < 6)
		return bad(s, s->i, "\\u without four hex digits");
	for (size_t j = s->i + 2; j < s->i + 6; j++) {
		const unsigned char c = s->p[j];
		const unsigned char l = c | 0x20;

		if (!is_digit(c) && !(l >= 'a' && l <= 'f'))
			return bad(s, j, "\\u without four hex digits");
		*v = *v << 4 | (uint32_t)(is_digit(c) ? c - '0' : l - 'a' + 10);
	}
	s->i += 6;
	return 0;
}

/* The character of the \u escape at s->i (two for a surrogate pair). */
static int code_point(ps *s, size_t end, uint32_t *cp)
{
	const size_t at = s->i;
	uint32_t lo;
	int rc = hex4(s, end, cp);

	if (rc)
		return rc;
	if (*cp == 0)
		return bad(s, at, "\\u0000 in a string");
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return bad(s, at, "a low surrogate without its high one");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	if (end - s->i < 2 || s->p[s->i] != '\\' || s->p[s->i + 1] != 'u')
		return bad(s, at, "a high surrogate without its low one");
	rc = hex4(s, end, &lo);
	if (rc)
		return rc;
	if (lo < 0xdc00 || lo > 0xdfff)
		return bad(s, at, "a high surrogate without its low one");
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* cp as UTF-8 at d + *k. */
static void put_utf8(char *d, size_t *k, uint32_t cp)
{
	unsigned char *o = (unsigned char *)d + *k;

	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		*k += 1;
	} else if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		*k += 2;
	} else if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		*k += 3;
	} else {
		o[0] = (unsigned char)(0xf0 | cp >> 18);
		o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[3] = (unsigned char)(0x80 | (cp & 0x3f));
		*k += 4;
	}
}

/* The escape at s->i (a backslash before end), decoded to d + *k. */
static int escape(ps *s, size_t end, char *d, size_t *k)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const unsigned char c = s->p[s->i + 1];
	const char *e = c ? strchr(from, c) : NULL;
	uint32_t cp;
	int rc;

	if (e) {
		d[(*k)++] = to[e - from];
		s->i += 2;
		return 0;
	}
	if (c != 'u')
		return bad(s, s->i, "an unknown escape in a string");
	rc = code_point(s, end, &cp);
	if (!rc)
		put_utf8(d, k, cp);
	return rc;
}

/* The string whose opening quote is at s->i, decoded (escapes, UTF-8
 * checked) into the arena: *out, *len bytes. */
static int string(ps *s, const char **out, size_t *len)
{
	const size_t open = s->i, end = string_end(s);
	size_t k = 0;
	char *d;

	if (end == s->n)
		return bad(s, open, "a string not closed");
	/* What an escape says is never longer than the escape. */
	d = take(s, end - open, 1);
	if (!d)
		return PARLOAD_ENOMEM;
	for (s->i = open + 1; s->i < end;) {
		const unsigned char c = s->p[s->i];
		uint32_t cp;
		size_t m;
		int rc;

		if (c == '\\') {
			rc = escape(s, end, d, &k);
			if (rc)
				return rc;
			continue;
		}
		if (c < 0x20)
			return bad(s, s->i, "a control character in a string");
		m = parload__utf8(s->p + s->i, end - s->i, &cp);
		if (!m)
			return bad(s, s->i, "bytes that are not UTF-8");
		memcpy(d + k, s->p + s->i, m);
		k += m;
		s->i += m;
	}
	d[k] = '\0';
	*out = d;
	*len = k;
	s->i = end + 1;
	return 0;
}

static int value(ps *s, parload__json **out);

/* After a member of the array or object that close ends: 1 after a comma
 * (another member follows), 0 at its end, or what failed. */
static int more(ps *s, unsigned char close)
{
	skip_ws(s);
	if (s->i == s->n)
		return bad(s, s->i, "the text ends inside %s",
			   close == ']' ? "an array" : "an object");
	if (s->p[s->i] != ',' && s->p[s->i] != close)
		return unexpected(s, s->i, close == ']' ? "',' or ']'" :
				  "',' or '}'");
	return s->p[s->i++] == ',';
}

/* A key and its ':' in an object. */
static int key(ps *s, const char **k)
{
	size_t len;
	int rc;

	skip_ws(s);
	if (s->i == s->n)
		return bad(s, s->i, "the text ends inside an object");
	if (s->p[s->i] != '"')
		return unexpected(s, s->i, "a key");
	rc = string(s, k, &len);
	if (rc)
		return rc;
	skip_ws(s);
	if (s->i == s->n)
		return bad(s, s->i, "the text ends inside an object");
	if (s->p[s->i] != ':')
		return unexpected(s, s->i, "':'");
	s->i++;
	return 0;
}

/* The members of the array or object v, whose '[' or '{' is at s->i. */
static int members(ps *s, parload__json *v)
{
	const bool obj = v->type == PARLOAD__JSON_OBJECT;
	const unsigned char close = obj ? '}' : ']';
	parload__json **tail = &v->kid;
	const char *k = NULL;
	int rc;

	s->i++;
	skip_ws(s);
	if (s->i < s->n && s->p[s->i] == close) {
		s->i++;
		return 0;
	}
	do {
		rc = obj ? key(s, &k) : 0;
		if (!rc)
			rc = value(s, tail);
		if (rc)
			return rc;
		(*tail)->key = k;
		v->n++;
		tail = &(*tail)->next;
		rc = more(s, close);
	} while (rc == 1);
	return rc;
}

/* The array or object at s->i, one level deeper. */
static int container(ps *s, parload__json **out)
{
	const bool arr = s->p[s->i] == '[';
	parload__json *v;
	int rc;

	if (s->depth == PARLOAD__JSON_MAX_DEPTH)
		return bad(s, s->i, "arrays and objects nested deeper than %d",
			   PARLOAD__JSON_MAX_DEPTH);
	v = *out = node(s, arr ? PARLOAD__JSON_ARRAY : PARLOAD__JSON_OBJECT,
			s->i);
	if (!v)
		return PARLOAD_ENOMEM;
	s->depth++;
	rc = members(s, v);
	s->depth--;
	return rc;
}

/* The value at s->i (after white space) into *out. */
static int value(ps *s, parload__json **out)
{
	parload__json *v;
	unsigned char c;
	int rc;

	skip_ws(s);
	if (s->i == s->n)
		return bad(s, s->i, "the text ends where a value should be");
	c = s->p[s->i];
	if (c == '[' || c == '{')
		return container(s, out);
	rc = word(s, out);
	if (rc <= 0)
		return rc;
	if (c != '"' && c != '-' && !is_digit(c))
		return unexpected(s, s->i, "a value");
	v = *out = node(s, c == '"' ? PARLOAD__JSON_STRING :
			PARLOAD__JSON_NUMBER, s->i);
	if (!v)
		return PARLOAD_ENOMEM;
	return c == '"' ? string(s, &v->s, &v->len) : number(s, v);
}

int parload__json_parse(const char *text, size_t n, const char *path,
			parload__json_doc *doc, parload_error *err)
{
	ps s = { .p = (const unsigned char *)text, .n = n, .path = path,
		 .err = err };
	parload__json *root = NULL;
	int rc;

	doc->root = NULL;
	doc->mem = NULL;
	if (n > PARLOAD__JSON_MAX_TEXT)
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, path,
					  "JSON text of %zu bytes, over the "
					  "%zu MiB parload reads", n,
					  PARLOAD__JSON_MAX_TEXT >> 20);
	rc = value(&s, &root);
	if (!rc) {
		skip_ws(&s);
		if (s.i < n)
			rc = unexpected(&s, s.i, "the end of the text");
	}
	if (rc) {
		free_blocks(s.mem);
		return rc;
	}
	doc->root = root;
	doc->mem = s.mem;
	return 0;
}

void parload__json_free(parload__json_doc *doc)
{
	if (!doc)
		return;
	free_blocks(doc->mem);
	doc->mem = NULL;
	doc->root = NULL;
}

const parload__json *parload__json_get(const parload__json *obj,
				       const char *key)
{
	if (!obj || obj->type != PARLOAD__JSON_OBJECT)
		return NULL;
	for (const parload__json *m = obj->kid; m; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

const parload__json *parload__json_at(const parload__json *arr, uint32_t i)
{
	const parload__json *m;

	if (!arr || arr->type != PARLOAD__JSON_ARRAY || i >= arr->n)
		return NULL;
	for (m = arr->kid; i; i--)
		m = m->next;
	return m;
}

/* The digits of v, a NUMBER written as an integer (no fraction, no
 * exponent), with its sign in *neg; else NULL. */
static const char *integer(const parload__json *v, bool *neg)
{
	const char *t;

	if (!v || v->type != PARLOAD__JSON_NUMBER)
		return NULL;
	t = v->s + (*neg = v->s[0] == '-');
	if (!is_digit((unsigned char)*t) ||
	    t[strspn(t, "0123456789")] != '\0')
		return NULL;
	return t;
}

/* The value of the digits t when it is at most max. */
static bool magnitude(const char *t, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;

	for (; *t; t++) {
		const unsigned d = (unsigned)(*t - '0');

		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*out = x;
	return true;
}

bool parload__json_u64(const parload__json *v, uint64_t *out)
{
	bool neg;
	const char *t = integer(v, &neg);
	uint64_t x;

	if (!t || !magnitude(t, UINT64_MAX, &x) || (neg && x))
		return false;
	*out = x;
	return true;
}

bool parload__json_i64(const parload__json *v, int64_t *out)
{
	bool neg;
	const char *t = integer(v, &neg);
	uint64_t x;

	if (!t || !magnitude(t, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &x))
		return false;
	*out = !neg ? (int64_t)x : x ? -(int64_t)(x - 1) - 1 : 0;
	return true;
}

bool parload__json_double(const parload__json *v, double *out)
{
	char *end;
	double d;

	if (!v || v->type != PARLOAD__JSON_NUMBER)
		return false;
	d = strtod(v->s, &end);
	if (end != v->s + v->len)
		return false;
	*out = d;
	return true;
}

bool parload__json_is(const parload__json *v, const char *s)
{
	return v && v->type == PARLOAD__JSON_STRING && strcmp(v->s, s) == 0;
}
