/*
 * testutil.h - what the Check suites share: scratch files, deterministic
 * streams, and an independent serial reader to compare loads against.
 */
#ifndef PARLOAD_TESTUTIL_H
#define PARLOAD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "parload.h"

/* A path in this process's scratch directory (made on first use, removed
 * at exit).  The string is the caller's to free. */
char *tu_path(const char *name);

/* Write a stream of the generator's content (cli/gen.c); aborts the test on
 * failure. */
void tu_write_stream(const char *path, uint64_t views, uint32_t width,
		     uint32_t height, int pixel_type, uint32_t flags,
		     uint64_t seed);

/* Write len bytes to path, replacing it. */
void tu_write_file(const char *path, const void *data, size_t len);
/* Overwrite len bytes at offset. */
void tu_patch(const char *path, uint64_t offset, const void *data, size_t len);
/* Cut or extend (with zeros) to len bytes. */
void tu_truncate(const char *path, uint64_t len);

/* The reference: read path with nothing but fread, one record after the
 * other, into freshly allocated arrays.  Returns 0, or -1 if the file is
 * not a complete stream. */
typedef struct tu_soa {
	unsigned char file_header[64];
	uint64_t view_count;
	uint64_t payload_size;
	unsigned char *headers; /* view_count * 32 bytes */
	unsigned char *pixels;  /* view_count * payload_size bytes */
} tu_soa;
int tu_serial_read(const char *path, tu_soa *out);
void tu_soa_free(tu_soa *s);

/* Assert that a dataset equals the reference byte for byte. */
void tu_assert_same(const parload_dataset *ds, const tu_soa *ref);

#endif
