/*
 * vocab.c - a request in text (parload_settings): the keys every program
 * that loads takes as its options (the parload command, parload-mpi,
 * python -m parload), each key's value, limits and message written once,
 * and the request the settings make.
 */
#include "load/load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct key;
typedef int (*key_fn)(parload_settings *s, const struct key *k,
		      const char *v, parload_error *err);

/* A key: its name, what sets it, and for a name its table (kind), for a
 * switch (a key without a value) the flags it sets. */
struct key {
	const char *name;
	key_fn fn;
	int kind;
	unsigned options, source, request, correct;
};

static int fail(parload_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(parload_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	parload__vfail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE, PARLOAD_NONE,
		       fmt, ap);
	va_end(ap);
	return PARLOAD_EINVAL;
}

/* Digits only: no sign, no space, no overflow, at most max. */
static bool whole(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* ---- numbers and sizes ---- */

static int set_threads(parload_settings *s, const struct key *k,
		       const char *v, parload_error *err)
{
	uint64_t n;

	(void)k;
	if (!whole(v, PARLOAD_THREADS_MAX, &n))
		return fail(err, "invalid thread count '%s' (0 to %u)", v,
			    PARLOAD_THREADS_MAX);
	s->options.threads = (unsigned)n;
	return 0;
}

static int set_size(parload_settings *s, const struct key *k,
		    const char *v, parload_error *err)
{
	const bool buffer = strcmp(k->name, "buffer") == 0;
	uint64_t n;
	int rc = parload_size_parse(v, &n);

	if (rc == 0 && n > SIZE_MAX)
		rc = PARLOAD_EOVERFLOW;
	if (rc)
		return fail(err, "invalid %s size '%s'%s",
			    buffer ? "buffer" : "read", v,
			    rc != PARLOAD_EOVERFLOW ? "" :
			    SIZE_MAX == UINT64_MAX ?
						     " (overflows 64 bits)" :
						     " (too large for this machine)");
	*(buffer ? &s->options.buffer_size : &s->options.max_read) =
		(size_t)n;
	return 0;
}

static int set_seed(parload_settings *s, const struct key *k,
		    const char *v, parload_error *err)
{
	(void)k;
	if (!whole(v, UINT64_MAX, &s->seed))
		return fail(err, "invalid seed '%s'", v);
	s->verify_seed = 1;
	return 0;
}

static int set_timeout(parload_settings *s, const struct key *k,
		       const char *v, parload_error *err)
{
	char *end;
	double t;

	(void)k;
	errno = 0;
	t = strtod(v, &end);
	if (errno || end == v || *end || !(t > 0.0) || t > 86400.0)
		return fail(err, "invalid timeout '%s' (seconds, above 0 and "
			    "at most 86400)", v);
	s->timeout = t;
	return 0;
}

static int set_bin(parload_settings *s, const struct key *k,
		   const char *v, parload_error *err)
{
	uint64_t n;

	(void)k;
	if (!whole(v, UINT32_MAX, &n) || n < 1)
		return fail(err, "invalid --bin '%s' (a factor of 1 or more)",
			    v);
	s->correct.bin = (unsigned)n;
	if (n > 1)
		s->correct_on = 1;
	return 0;
}

/* ---- names ---- */

static int set_name(parload_settings *s, const struct key *k,
		    const char *v, parload_error *err)
{
	const int n = parload_name_parse(k->kind, v, err);

	if (n < 0)
		return n;
	switch (k->kind) {
	case PARLOAD_NAMES_STRATEGY: s->options.strategy = n; break;
	case PARLOAD_NAMES_IO: s->options.io = n; break;
	case PARLOAD_NAMES_CACHE: s->cache = n; break;
	case PARLOAD_NAMES_FRAMES: s->frames = n; break;
	case PARLOAD_NAMES_LAYOUT: s->options.selection.layout = n; break;
	default: s->correct.reduce = n; break;
	}
	return 0;
}

/* ---- the layout, the source and the selection ---- */

static int set_raw(parload_settings *s, const struct key *k,
		   const char *v, parload_error *err)
{
	parload_desc d;
	int rc;

	(void)k;
	if (s->raw)
		return fail(err, "--raw given twice");
	rc = parload_desc_parse(v, &d, err);
	if (rc < 0) {
		if (err) {
			parload__error_prefix(err, "--raw");
			err->code = PARLOAD_EINVAL;
		}
		return PARLOAD_EINVAL;
	}
	s->desc = d;
	s->raw = 1;
	return 0;
}

static int set_text(parload_settings *s, const struct key *k,
		    const char *v, parload_error *err)
{
	(void)err;
	if (strcmp(k->name, "dataset") == 0) {
		s->dataset = v;
		return 0;
	}
	s->refs[strcmp(k->name, "flats") == 0] = v;
	s->correct_on = 1;
	return 0;
}

/* views=A:B:S, rows=A:B, cols=A:B: the library's slices, a step checked
 * now, whatever the file. */
static int set_slice(parload_settings *s, const struct key *k,
		     const char *v, parload_error *err)
{
	parload_selection *sel = &s->options.selection;
	const bool views = strcmp(k->name, "views") == 0;
	parload_slice *to = views			  ? &sel->views :
			    strcmp(k->name, "rows") == 0 ? &sel->rows :
							   &sel->cols;
	parload_error mine;
	parload_slice x;

	memset(&mine, 0, sizeof(mine));
	if (parload_slice_parse(v, views, &x, &mine) < 0)
		return fail(err, "invalid --%s '%s': %s", k->name, v,
			    mine.message[0] ? mine.message :
					      parload_strerror(mine.code));
	if (x.step != PARLOAD_OMIT && x.step < 1)
		return fail(err, "invalid --%s '%s': the step must be 1 or "
			    "more", k->name, v);
	*to = x;
	return 0;
}

/* ---- keys without a value ---- */

static int set_switch(parload_settings *s, const struct key *k,
		      const char *v, parload_error *err)
{
	(void)v;
	(void)err;
	s->options.flags |= k->options;
	s->source_flags |= k->source;
	s->request_flags |= k->request;
	s->correct.flags |= k->correct;
	if (k->correct)
		s->correct_on = 1;
	return 0;
}

/* ---- the keys ---- */

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define TAKES(f) .fn = f
#define NAMED(k) .fn = set_name, .kind = PARLOAD_NAMES_##k
#define SWITCH(o, s, r, c)                                                     \
	.fn = set_switch, .options = o, .source = s, .request = r, .correct = c

static const struct key keys[] = {
	{ .name = "threads", TAKES(set_threads) },
	{ .name = "strategy", NAMED(STRATEGY) },
	{ .name = "io", NAMED(IO) },
	{ .name = "buffer", TAKES(set_size) },
	{ .name = "max-read", TAKES(set_size) },
	{ .name = "verify-seed", TAKES(set_seed) },
	{ .name = "timeout", TAKES(set_timeout) },
	{ .name = "cache", NAMED(CACHE) },
	{ .name = "raw", TAKES(set_raw) },
	{ .name = "dataset", TAKES(set_text) },
	{ .name = "frames", NAMED(FRAMES) },
	{ .name = "views", TAKES(set_slice) },
	{ .name = "rows", TAKES(set_slice) },
	{ .name = "cols", TAKES(set_slice) },
	{ .name = "layout", NAMED(LAYOUT) },
	{ .name = "darks", TAKES(set_text) },
	{ .name = "flats", TAKES(set_text) },
	{ .name = "reduce", NAMED(REDUCE) },
	{ .name = "bin", TAKES(set_bin) },
	{ .name = "no-bind", SWITCH(PARLOAD_OPT_NO_BIND, 0, 0, 0) },
	{ .name = "no-hugepages", SWITCH(PARLOAD_OPT_NO_HUGEPAGES, 0, 0, 0) },
	{ .name = "verify", SWITCH(PARLOAD_OPT_VERIFY_CRC, 0, 0, 0) },
	{ .name = "keep-going",
	  SWITCH(PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING, 0, 0, 0) },
	{ .name = "allow-truncated",
	  SWITCH(PARLOAD_OPT_ALLOW_TRUNCATED, 0, 0, 0) },
	{ .name = "map-sinograms", SWITCH(PARLOAD_OPT_MAP_SINOGRAMS, 0, 0, 0) },
	{ .name = "confine", SWITCH(0, PARLOAD_SRC_CONFINE, 0, 0) },
	{ .name = "follow", SWITCH(0, 0, PARLOAD_REQ_FOLLOW, 0) },
	{ .name = "minus-log", SWITCH(0, 0, 0, PARLOAD_CORR_MINUS_LOG) },
};

static const struct key *key_of(const char *name, size_t len)
{
	for (size_t i = 0; i < COUNT_OF(keys); i++)
		if (strlen(keys[i].name) == len &&
		    strncmp(keys[i].name, name, len) == 0)
			return &keys[i];
	return NULL;
}

void parload_settings_init(parload_settings *s)
{
	if (!s)
		return;
	memset(s, 0, sizeof(*s));
	parload_options_init(&s->options);
	parload_desc_init(&s->desc);
	s->frames = PARLOAD_FRAMES_PROJECTIONS;
	s->cache = PARLOAD_CACHE_KEEP;
	s->timeout = 10.0;
	s->correct.reduce = PARLOAD_REDUCE_MEAN;
}

int parload_settings_set(parload_settings *s, const char *key,
			 const char *value, parload_error *err)
{
	const char *eq = key && !value ? strchr(key, '=') : NULL;
	const size_t len = key ? (eq ? (size_t)(eq - key) : strlen(key)) : 0;
	const struct key *k = key ? key_of(key, len) : NULL;
	parload_settings next;
	int rc;

	if (!s || !key)
		return fail(err, "no settings or no key");
	if (eq)
		value = eq + 1;
	if (!k)
		return fail(err, "unknown key '%.*s'", (int)len, key);
	if (k->fn == set_switch && value)
		return fail(err, "--%s takes no value", k->name);
	if (k->fn != set_switch && !value)
		return fail(err, "--%s needs a value", k->name);
	next = *s;
	rc = k->fn(&next, k, value, err);
	if (rc == 0 && next.verify_seed && next.correct_on)
		rc = fail(err, "--verify-seed checks the file's pixels; a "
			  "corrected load delivers float32 (leave one out)");
	if (rc == 0)
		*s = next;
	return rc;
}

/* "same": the scan's own file's darks (i 0) or flats (1). */
static bool is_same(const char *path)
{
	return path && strcmp(path, "same") == 0;
}

/* A NRRD header states its own layout: raw= is not its (the name rule
 * of the command's and Python's references, parload_format_named). */
static bool states_own_layout(const char *path)
{
	const char *f = parload_format_named(path);

	return f && strcmp(f, "nhdr") == 0;
}

static void refs_source(parload_settings *s, int i, const parload_source *scan)
{
	parload_source *out = &s->refs_[i].source;

	memset(&s->refs_[i], 0, sizeof(s->refs_[i]));
	if (is_same(s->refs[i])) {
		*out = *scan;
		out->frames = i ? PARLOAD_FRAMES_FLATS : PARLOAD_FRAMES_DARKS;
		return;
	}
	parload_source_init(out);
	out->path = s->refs[i];
	out->flags = s->source_flags;
	if (s->raw && !states_own_layout(s->refs[i]))
		out->desc = &s->desc;
}

void parload_settings_apply(parload_settings *s, parload_request *req)
{
	parload_source *src = &req->source;

	if (!s || !req)
		return;
	src->desc = s->raw ? &s->desc : NULL;
	src->dataset = s->dataset;
	src->frames = s->frames;
	src->flags |= s->source_flags;
	req->selection = &s->options.selection;
	req->cache = s->cache;
	req->flags |= s->request_flags;
	req->timeout = s->timeout;
	req->correct = NULL;
	if (!s->correct_on)
		return;
	for (int i = 0; i < 2; i++)
		if (s->refs[i])
			refs_source(s, i, src);
	s->correct.darks = s->refs[0] ? &s->refs_[0] : NULL;
	s->correct.flats = s->refs[1] ? &s->refs_[1] : NULL;
	req->correct = &s->correct;
}
