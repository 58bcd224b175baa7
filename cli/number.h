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
 * max.  Sizes take a K, M, G or T suffix (binary multiples; KiB ... TiB
 * too). */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
bool parse_size(const char *s, size_t *out);

#endif
