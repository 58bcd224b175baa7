/*
 * number.h - strict parsing of the numbers and sizes that the two
 * commands, parload (cli/) and parload-mpi (mpi/cli.c), take as option
 * arguments: compiled into each program, not part of any library.
 */
#ifndef PARLOAD_CLI_NUMBER_H
#define PARLOAD_CLI_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strict numbers: digits only, no sign, no space, no overflow, at most
 * max. */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
/* Sizes take a K, M, G or T suffix (binary multiples; KiB ... TiB too):
 * parload_size_parse's, within size_t.  0, or its code: PARLOAD_EOVERFLOW
 * for a size too large, PARLOAD_EINVAL for what is not a size. */
int parse_size(const char *s, size_t *out);
/* What to add to "invalid ... 'S'" for parse_size's code: why a size was
 * refused when it is one (" (overflows 64 bits)"), else "". */
const char *size_why(int rc);

#endif
