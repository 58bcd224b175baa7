/*
 * fuzz.h - what the libFuzzer harnesses share: a broken invariant stops
 * the run (libFuzzer keeps the input), and 128-bit sizes for models that
 * must not overflow where the library's arithmetic might.
 */
#ifndef PARLOAD_FUZZ_H
#define PARLOAD_FUZZ_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",       \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

typedef unsigned __int128 u128;

/* LLVMFuzzerInitialize's -write_seeds=DIR: write_seeds(DIR) (which makes
 * DIR with fuzz_seed_dir), then exit. */
static inline void fuzz_seeds_option(int argc, char **argv,
				     void (*write_seeds)(const char *dir))
{
	static const char opt[] = "-write_seeds=";

	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], opt, sizeof(opt) - 1) == 0) {
			write_seeds(argv[i] + sizeof(opt) - 1);
			exit(0);
		}
}

static inline void fuzz_seed_dir(const char *dir)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		exit(1);
	}
}

#endif
