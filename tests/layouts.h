/*
 * layouts.h - raw layouts for the tests (check_layouts, check_faults): the
 * reference of what a load must deliver and a writer of their files made
 * from it, both from the test's own formulas (never parload's code):
 * pixel values, the byte orders, the packed bit orders of parload.h
 * inverted, view headers, offsets and gaps.
 */
#ifndef PARLOAD_TEST_LAYOUTS_H
#define PARLOAD_TEST_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "parload.h"

#define LT_MAX_FILES 5

/* A layout and the files written for it. */
typedef struct lt_stream {
	parload_desc d;         /* as given: d.count 0, or the count */
	int nfiles;
	uint64_t views[LT_MAX_FILES]; /* records written into each file */
	bool cut_gap[LT_MAX_FILES];   /* its last record lacks its gap */
	uint64_t junk;          /* bytes after the last file's records */
	uint64_t total;         /* views of the stream (d.count when given) */
	uint64_t seed;
	char *paths[LT_MAX_FILES];
	/* The reference: every view's pixels as the dataset holds them
	 * (little-endian, unpacked) and every view's own header bytes, for
	 * each view written (those past a count too: the files' bytes are
	 * made from it). */
	unsigned char *pixels;
	unsigned char *headers;
	uint64_t view_bytes;    /* width * height * bytes per pixel */
	uint64_t payload;       /* bytes of one view's pixels in the file */
} lt_stream;

/* Bits of a stored pixel of encoding e: 12, 10, or 0 (not packed). */
unsigned lt_packed_bits(int e);
/* Bytes of a row of w pixels of type t stored as e. */
uint64_t lt_row_bytes(uint32_t w, int t, int e);

/* Fill s->d (init, then the given fields) for a layout; the rest of s
 * zeroed, one file of views records. */
void lt_layout(lt_stream *s, uint32_t w, uint32_t h, int type, int enc,
	       uint64_t offset, uint64_t header, uint64_t gap, uint64_t views);
/* Write s's files (named name.0, name.1, ... in the scratch directory)
 * and build its reference. */
void lt_write(lt_stream *s, const char *name);
void lt_free(lt_stream *s);

/* A request for s: its files (one path, or the list), its description. */
void lt_request(const lt_stream *s, parload_request *r);

/* A selection given as plain numbers (all within the stream) and its
 * expected shape, by the test's own arithmetic. */
typedef struct lt_sel {
	uint64_t v0, v1, vstep; /* views [v0, v1) every vstep */
	uint32_t r0, r1, c0, c1;
	int layout;
} lt_sel;

void lt_sel_all(const lt_stream *s, lt_sel *q);
/* Part 0: all of s; 1: rows [r0, r1) of every other view cropped to
 * columns [c0, c1); 2: the same rows of every other view as sinograms. */
void lt_sel_part(const lt_stream *s, int part, uint32_t r0, uint32_t r1,
		 uint32_t c0, uint32_t c1, lt_sel *q);
void lt_sel_to(const lt_sel *q, parload_selection *sel);
uint64_t lt_sel_views(const lt_sel *q);

/* What a load of q must deliver: pixels (views or sinograms) and the
 * selected views' own header bytes, in fresh buffers. */
void lt_expect(const lt_stream *s, const lt_sel *q, unsigned char **pixels,
	       unsigned char **headers, uint64_t *pixel_bytes,
	       uint64_t *header_bytes);
/* Assert that ds holds q of s (raw headers too, unless no_raw: then
 * none); what names the case. */
void lt_assert_loaded(const lt_stream *s, const lt_sel *q,
		      const parload_dataset *ds, bool no_raw,
		      const char *what);

/* A small deterministic generator. */
uint64_t lt_rand(uint64_t *state);
uint64_t lt_below(uint64_t *state, uint64_t n);

#endif
