/*
 * gen.h - the deterministic test stream behind `parload gen`, the command's
 * embedded default and the benchmark.  Not part of libparload: the programs
 * that need it compile cli/gen.c themselves.
 *
 * Content is a pure function of (seed, view index, byte position), so a
 * loaded dataset can be checked against it without keeping the written
 * file's bytes anywhere.
 */
#ifndef PGEN_H
#define PGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parload.h"

/* View i's header as the generator writes it (crc32c left 0: the writer
 * fills it when the file has CRCs). */
void pgen_view_header(uint64_t seed, uint64_t i, uint64_t view_count,
			     parload_view_header *vh);

/* View i's payload, len bytes. */
void pgen_payload(uint64_t seed, uint64_t i, void *buf, size_t len);

/* Write a whole stream; returns 0 or a negative parload code. */
int pgen_write(const char *path, const parload_file_header *h,
		      uint64_t seed, parload_error *err);

/* Compare a loaded dataset with what pgen_write(seed) wrote.  On a
 * difference returns false and names the first differing view in *bad_view
 * (and whether its header or its payload differed in *bad_header). */
bool pgen_verify(const parload_dataset *ds, uint64_t seed,
			uint64_t *bad_view, bool *bad_header);

/* The same for a dataset that holds the selection s of the stream (view
 * k of the dataset is file view parload_shape_view(s, k)); *bad_view is
 * a file view index. */
bool pgen_verify_shape(const parload_dataset *ds, const parload_shape *s,
		       uint64_t seed, uint64_t *bad_view, bool *bad_header);

#endif
