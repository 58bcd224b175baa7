/*
 * json_names.h - file names that are not UTF-8 (and one that is), for the
 * tests of both commands' --json (tests/check_json.c for parload,
 * tests/mpi/check_mpi_cli.c for parload-mpi): the name's bytes, and the
 * JSON string that the end of its "file" member must read as once a
 * strict parser has decoded it.
 */
#ifndef PARLOAD_TESTS_JSON_NAMES_H
#define PARLOAD_TESTS_JSON_NAMES_H

static const struct json_name {
	const char *bytes, *json;
} json_names[] = {
	{ "ff\xff.raw", "\"ff\\ufffd.raw\"" },                /* 0xff */
	{ "lone\x80.raw", "\"lone\\ufffd.raw\"" },            /* lone continuation */
	{ "cut\xe2\x82.raw", "\"cut\\ufffd\\ufffd.raw\"" },   /* truncated */
	{ "long\xc0\xaf.raw", "\"long\\ufffd\\ufffd.raw\"" }, /* overlong */
	{ "ok\xc3\xa9.raw", "\"ok\\u00e9.raw\"" },            /* UTF-8 */
};

#define JSON_NAMES ((int)(sizeof(json_names) / sizeof(json_names[0])))

#endif
