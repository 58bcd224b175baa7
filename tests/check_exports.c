/*
 * check_exports.c - the shared library exports the public interface and
 * nothing else.
 *
 * libparload shares processes with other image libraries, so every name it
 * exports must carry its prefix: parload_ for the interface, never the
 * internal parload__, and no stray helper under a name some other library
 * might also use.  The test runs `nm -D --defined-only` on the built shared
 * library and compares its dynamic symbol table with the functions that
 * include/parload.h declares PARLOAD_API.
 *
 * Skipped (exit status 77) where the library is built static only or nm is
 * missing.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define MAX_NAMES 512

typedef struct symbol {
	char type;     /* nm's letter: T text, D data, ... */
	char name[128];
} symbol;

static symbol exported[MAX_NAMES];
static int nexported;
static char declared[MAX_NAMES][128];
static int ndeclared;
static char library[4096];

static bool is_exported(const char *name, char *type)
{
	for (int i = 0; i < nexported; i++)
		if (strcmp(exported[i].name, name) == 0) {
			*type = exported[i].type;
			return true;
		}
	return false;
}

static bool is_declared(const char *name)
{
	for (int i = 0; i < ndeclared; i++)
		if (strcmp(declared[i], name) == 0)
			return true;
	return false;
}

/* ---- tests ---- */

/* Guard against a parser that silently finds nothing: the declarations
 * every user needs are among those found. */
START_TEST(test_header_declarations_found)
{
	static const char *const core[] = {
		"parload_options_init", "parload_load", "parload_dataset_free",
		"parload_strerror", "parload_crc32c", "parload_loader_new",
		"parload_writer_open",
	};

	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++)
		ck_assert_msg(is_declared(core[i]),
			      "%s not found among parload.h's PARLOAD_API "
			      "declarations",
			      core[i]);
}
END_TEST

/* Every exported symbol is parload_x, never parload__x or anything else. */
START_TEST(test_exports_carry_prefix)
{
	ck_assert_msg(nexported > 0, "%s exports nothing", library);
	for (int i = 0; i < nexported; i++) {
		const char *n = exported[i].name;

		ck_assert_msg(strncmp(n, "parload_", 8) == 0,
			      "%s exports %s, which lacks the parload_ prefix",
			      library, n);
		ck_assert_msg(n[8] != '_',
			      "%s exports the internal name %s", library, n);
	}
}
END_TEST

/* Every function parload.h declares PARLOAD_API is exported, as code. */
START_TEST(test_declared_functions_exported)
{
	for (int i = 0; i < ndeclared; i++) {
		char type = 0;

		ck_assert_msg(is_exported(declared[i], &type),
			      "%s is declared PARLOAD_API but %s does not "
			      "export it",
			      declared[i], library);
		ck_assert_msg(type == 'T' || type == 'i',
			      "%s is exported as nm type %c, not a function",
			      declared[i], type);
	}
}
END_TEST

/* Nothing is exported that parload.h does not declare: an exported
 * helper would be an interface nobody promised to keep. */
START_TEST(test_exports_declared)
{
	for (int i = 0; i < nexported; i++)
		ck_assert_msg(is_declared(exported[i].name),
			      "%s exports %s, which parload.h does not declare "
			      "PARLOAD_API",
			      library, exported[i].name);
}
END_TEST

/* ---- gathering the two lists ---- */

/* Blank out comments and preprocessor lines (with their continuations),
 * keeping the text's length, so that only declarations remain. */
static void strip(char *s)
{
	bool line_start = true;

	for (char *p = s; *p;) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			char *end = e ? e + 2 : p + strlen(p);

			for (; p < end; p++)
				if (*p != '\n')
					*p = ' ';
			continue;
		}
		if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++)
				*p = ' ';
			continue;
		}
		if (line_start && *p == '#') {
			for (; *p; p++) {
				if (*p == '\n' && p[-1] != '\\')
					break;
				if (*p != '\n')
					*p = ' ';
			}
			continue;
		}
		if (*p == '\n')
			line_start = true;
		else if (!isspace((unsigned char)*p))
			line_start = false;
		p++;
	}
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The functions declared PARLOAD_API: in each declaration, the identifier
 * just before the first '('. */
static int read_header(const char *path)
{
	static char text[1 << 20];
	size_t len;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "check_exports: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	strip(text);

	for (char *p = text; (p = strstr(p, "PARLOAD_API")) != NULL;) {
		char *paren, *end, *begin;

		if ((p > text && ident_char(p[-1])) || ident_char(p[11])) {
			p += 11;
			continue;
		}
		p += 11;
		paren = strchr(p, '(');
		if (!paren)
			break;
		end = paren;
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		begin = end;
		while (begin > p && ident_char(begin[-1]))
			begin--;
		if (begin == end || end - begin >= 128 ||
		    ndeclared == MAX_NAMES) {
			fprintf(stderr, "check_exports: cannot parse a "
				"PARLOAD_API declaration in %s\n", path);
			return -1;
		}
		memcpy(declared[ndeclared], begin, (size_t)(end - begin));
		declared[ndeclared][end - begin] = '\0';
		ndeclared++;
		p = paren;
	}
	return 0;
}

/* The shared library's file, from libtool's description of it: dlname is
 * empty when shared libraries are disabled.  Returns 1 to skip. */
static int find_library(const char *builddir)
{
	char la[4096], line[4096], dlname[1024] = "";
	FILE *f;

	snprintf(la, sizeof(la), "%s/src/libparload.la", builddir);
	f = fopen(la, "r");
	if (!f) {
		fprintf(stderr, "check_exports: %s: %s (build the library "
			"first; set PARLOAD_BUILDDIR)\n", la, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "dlname='%1023[^']'", dlname) == 1)
			break;
	fclose(f);
	if (!dlname[0]) {
		fprintf(stderr, "check_exports: SKIP: no shared library "
			"(configured with --disable-shared)\n");
		return 1;
	}
	snprintf(library, sizeof(library), "%s/src/.libs/%s", builddir,
		 dlname);
	if (access(library, R_OK) != 0) {
		fprintf(stderr, "check_exports: %s: %s\n", library,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Run nm on the library.  Returns 1 to skip (no nm). */
static int read_exports(void)
{
	const char *nm = getenv("NM");
	char cmd[8192], line[1024];
	FILE *f;
	int status;

	/* libtool's NM may carry options ("nm -B"); that is fine here. */
	if (!nm || !*nm)
		nm = "nm";
	if (strchr(library, '\'')) {
		fprintf(stderr, "check_exports: SKIP: a quote in %s\n",
			library);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "%s -D --defined-only '%s'", nm, library);
	f = popen(cmd, "r");
	if (!f) {
		fprintf(stderr, "check_exports: popen: %s\n", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char type, name[512];
		char *at;

		/* "ADDRESS TYPE NAME", ADDRESS blank for some types. */
		if (sscanf(line, "%*s %c %511s", &type, name) != 2 &&
		    sscanf(line, " %c %511s", &type, name) != 2)
			continue;
		/* A version node of the library itself is no symbol. */
		if (type == 'A')
			continue;
		at = strchr(name, '@');
		if (at)
			*at = '\0';
		if (nexported == MAX_NAMES || strlen(name) >= 128) {
			pclose(f);
			fprintf(stderr, "check_exports: too many or too long "
				"symbols in %s\n", library);
			return -1;
		}
		exported[nexported].type = type;
		strcpy(exported[nexported].name, name);
		nexported++;
	}
	status = pclose(f);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		fprintf(stderr, "check_exports: SKIP: cannot run %s\n", nm);
		return 1;
	}
	if (status != 0) {
		fprintf(stderr, "check_exports: %s failed (status %d)\n", cmd,
			status);
		return -1;
	}
	return 0;
}

static Suite *exports_suite(void)
{
	Suite *s = suite_create("exports");
	TCase *tc = tcase_create("shared library");

	tcase_add_test(tc, test_header_declarations_found);
	tcase_add_test(tc, test_exports_carry_prefix);
	tcase_add_test(tc, test_declared_functions_exported);
	tcase_add_test(tc, test_exports_declared);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *srcdir = getenv("PARLOAD_SRCDIR");
	const char *builddir = getenv("PARLOAD_BUILDDIR");
	char header[4096];
	int rc, failed;

	snprintf(header, sizeof(header), "%s/include/parload.h",
		 srcdir && *srcdir ? srcdir : ".");
	if (read_header(header) != 0)
		return 99;
	rc = find_library(builddir && *builddir ? builddir : ".");
	if (rc == 0)
		rc = read_exports();
	if (rc != 0)
		return rc > 0 ? 77 : 99;

	failed = tu_run(exports_suite()) != EXIT_SUCCESS;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
