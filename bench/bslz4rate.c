/*
 * bslz4rate.c - one worker's decode rate of the bitshuffle+LZ4 row
 * (src/codec/bitshuffle.c), for bench/bslz4rate.py, which runs it beside
 * bitshuffle.decompress_lz4 in the same run, alternated.
 *
 *     bslz4rate CHUNKS
 *
 * CHUNKS: chunks as HDF5's bitshuffle filter stores them, each after a
 * 16-byte head (its stored bytes and its element size, both 8 bytes
 * little-endian).  Each line on standard input, a number of rounds R,
 * decodes every chunk R times, one worker, and answers one line: the CPU
 * seconds of this thread, the bytes decoded, and a sum of them (so that
 * nothing is left out and the decoding is checked against Python's).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "codec/rows.h"

typedef struct chunk {
	unsigned char *bytes;
	size_t len;
	uint32_t elem;
} chunk;

static chunk *read_chunks(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	uint64_t head[2];
	chunk *c = NULL;

	*n = 0;
	if (!fp)
		return NULL;
	while (fread(head, 8, 2, fp) == 2) {
		c = realloc(c, (*n + 1) * sizeof(*c));
		c[*n].len = (size_t)head[0];
		c[*n].elem = (uint32_t)head[1];
		c[*n].bytes = malloc(c[*n].len);
		if (!c[*n].bytes ||
		    fread(c[*n].bytes, 1, c[*n].len, fp) != c[*n].len)
			exit(1);
		(*n)++;
	}
	fclose(fp);
	return c;
}

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const parload__codec_row *row =
		parload__codec_get(PARLOAD__CODEC_BITSHUFFLE);
	size_t n, cap = 0;
	chunk *c = argc == 2 ? read_chunks(argv[1], &n) : NULL;
	unsigned char *out;
	void *state;
	long rounds;

	if (!c || !row->decode) {
		fprintf(stderr, "usage: bslz4rate CHUNKS (a build with "
			"liblz4)\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		cap = parload__be64(c[i].bytes) > cap ?
			      (size_t)parload__be64(c[i].bytes) : cap;
	out = malloc(cap);
	state = row->open();
	while (scanf("%ld", &rounds) == 1) {
		uint64_t bytes = 0, sum = 0;
		const double t0 = cpu_now();

		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++) {
				const unsigned cd[] = { 0, 4, c[i].elem, 0, 2 };
				parload__filter f = {
					.codec = PARLOAD__CODEC_BITSHUFFLE };
				size_t got = 0;
				const char *why;

				row->hdf5_params(cd, 5, c[i].elem, &f);
				why = row->decode(state, &f, c[i].bytes,
						  c[i].len, out, cap, &got);
				if (why) {
					fprintf(stderr, "chunk %zu %s\n", i,
						why);
					return 1;
				}
				bytes += got;
				sum += out[got / 3] + out[got - 1];
			}
		printf("%.6f %llu %llu\n", cpu_now() - t0,
		       (unsigned long long)bytes, (unsigned long long)sum);
		fflush(stdout);
	}
	row->close(state);
	return 0;
}
