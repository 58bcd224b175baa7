/*
 * names.c - the names users give the library's enums, each table made from
 * its PARLOAD_*_MAP in parload.h (the one place a name is written), and the
 * one way a name is looked up: exactly, an unknown name PARLOAD_EINVAL with
 * a message that lists the names there are.
 */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A row of a map whose rows are (NAME, value, "text", ...). */
#define TEXT_AT_(name, value, text, ...) [value] = text,
#define TEXT_AT(name, value, ...) TEXT_AT_(name, value, __VA_ARGS__, 0)

static const char *const pixel_names[] = { PARLOAD_PIXEL_MAP(TEXT_AT) };
static const char *const format_names[] = { PARLOAD_FORMAT_MAP(TEXT_AT) };
static const char *const frames_names[] = { PARLOAD_FRAMES_MAP(TEXT_AT) };
static const char *const io_names[] = { PARLOAD_IO_MAP(TEXT_AT) };
static const char *const layout_names[] = { PARLOAD_LAYOUT_MAP(TEXT_AT) };
static const char *const cache_names[] = { PARLOAD_CACHE_MAP(TEXT_AT) };
static const char *const reduce_names[] = { PARLOAD_REDUCE_MAP(TEXT_AT) };
static const char *const compress_names[] = {
	PARLOAD_COMPRESS_MAP(TEXT_AT)
};

static const char *const strategy_names[] = {
#define STRATEGY_AT(name, id, text) [PARLOAD_STRATEGY_##name] = text,
	PARLOAD_STRATEGY_MAP(STRATEGY_AT)
#undef STRATEGY_AT
};

static const struct table {
	const char *what;
	const char *const *names;
	int count;
} tables[] = {
#define TABLE_AT(kind, text, array)                                            \
	[PARLOAD_NAMES_##kind] = { text, array, COUNT_OF(array) },
#define TABLE_OF(kind, text) TABLE_AT(kind, text, NAMES_##kind)
#define NAMES_PIXEL pixel_names
#define NAMES_FORMAT format_names
#define NAMES_FRAMES frames_names
#define NAMES_STRATEGY strategy_names
#define NAMES_IO io_names
#define NAMES_LAYOUT layout_names
#define NAMES_CACHE cache_names
#define NAMES_REDUCE reduce_names
#define NAMES_COMPRESS compress_names
	PARLOAD_NAMES_MAP(TABLE_OF)
};

static const char *name_at(const char *const *names, int count, int value)
{
	return names && value >= 0 && value < count ? names[value] : NULL;
}

/* "a, b or c": the names of a table, into buf. */
static void list_names(const char *const *names, int count, char *buf,
		       size_t size)
{
	int total = 0, seen = 0;
	size_t n = 0;

	for (int v = 0; v < count; v++)
		total += names[v] != NULL;
	buf[0] = '\0';
	for (int v = 0; v < count && n < size; v++) {
		if (!names[v])
			continue;
		seen++;
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
				      seen == 1 ? "" :
				      seen == total ? " or " : ", ",
				      names[v]);
	}
}

int parload_name_find(const char *what, const char *const *names, int count,
		      const char *text, parload_error *err)
{
	char list[512];

	for (int v = 0; text && names && v < count; v++)
		if (names[v] && strcmp(text, names[v]) == 0)
			return v;
	if (!names || count <= 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no names of %s", what ? what : "");
	list_names(names, count, list, sizeof(list));
	return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
				  "unknown %s '%s' (%s)", what ? what : "name",
				  text ? text : "", list);
}

static const struct table *table_of(int kind)
{
	return kind >= 0 && kind < PARLOAD_NAMES_COUNT_ ? &tables[kind] : NULL;
}

const char *parload_name(int kind, int value)
{
	const struct table *t = table_of(kind);

	return t ? name_at(t->names, t->count, value) : NULL;
}

int parload_name_parse(int kind, const char *text, parload_error *err)
{
	const struct table *t = table_of(kind);

	if (!t)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "unknown table of names %d", kind);
	return parload_name_find(t->what, t->names, t->count, text, err);
}

/* Each enum's pair, for callers that know which table they want. */
#define NAME_PAIR(kind, id)                                                    \
	const char *parload_##id##_name(int value)                             \
	{                                                                      \
		return parload_name(PARLOAD_NAMES_##kind, value);              \
	}                                                                      \
	int parload_##id##_from_name(const char *name)                         \
	{                                                                      \
		return parload_name_parse(PARLOAD_NAMES_##kind, name, NULL);   \
	}

NAME_PAIR(PIXEL, pixel)
NAME_PAIR(FRAMES, frames)
NAME_PAIR(STRATEGY, strategy)
NAME_PAIR(IO, io)
NAME_PAIR(LAYOUT, layout)
NAME_PAIR(CACHE, cache)
NAME_PAIR(REDUCE, reduce)
NAME_PAIR(COMPRESS, compress)

const char *parload_format_name(int format)
{
	return parload_name(PARLOAD_NAMES_FORMAT, format);
}
