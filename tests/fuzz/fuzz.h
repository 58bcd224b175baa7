/*
 * fuzz.h - what the libFuzzer harnesses share: a broken invariant stops
 * the run (libFuzzer keeps the input), and 128-bit sizes for models that
 * must not overflow where the library's arithmetic might.
 */
#ifndef PARLOAD_FUZZ_H
#define PARLOAD_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",       \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

typedef unsigned __int128 u128;

#endif
