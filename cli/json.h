/*
 * json.h - JSON output shared by the two commands, parload (cli/) and
 * parload-mpi (mpi/cli.c): compiled into each program, not part of any
 * library.
 */
#ifndef PARLOAD_CLI_JSON_H
#define PARLOAD_CLI_JSON_H

#include <stdio.h>

/* A JSON string of the bytes s: '"' and '\\' and control characters
 * escaped, well-formed UTF-8 as it is, and every byte that is not part of
 * well-formed UTF-8 (a file name's, say) as \ufffd, so that the output is
 * always valid JSON in valid UTF-8. */
void json_str(FILE *f, const char *s);
/* x, or 0 where x is inf or nan, which JSON cannot write. */
double finite_or_zero(double x);

#endif
