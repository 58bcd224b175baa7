/*
 * codec.h - how a strip's stored bytes become its rows: one worker's strip
 * reader (decode.c), which reads a strip through io and decodes it with
 * the codec its table names.  Calls go down only: codec calls io, model
 * and base.
 */
#ifndef PARLOAD_CODEC_H
#define PARLOAD_CODEC_H

#include "io/io.h"

/* codecs.c: one row per codec.  decode turns a strip's stored bytes
 * (in, stored of them; with scratch, size more bytes of room after them)
 * into its rows (out, size bytes): NULL, or what is wrong with the strip
 * (*got: the bytes it made).  A row without decode is read as it is
 * (NONE), by the container's decoder (CUSTOM), or needs what this build
 * lacks (needs). */
typedef struct parload__codec_row {
	const char *name;
	const char *needs;
	void *(*open)(void);          /* a worker's state; NULL: no memory */
	void (*close)(void *state);
	const char *(*decode)(void *state, unsigned char *in, size_t stored,
			      unsigned char *out, size_t size, uint32_t elem,
			      size_t *got);
	bool scratch;
} parload__codec_row;

/* The row of codec c. */
const parload__codec_row *parload__codec_get(parload__codec c);

/* decode.c: one worker's strip decoder; it keeps the last strip it
 * decoded, so that a share that reads a strip's rows one batch at a time
 * decodes it once. */
typedef struct parload__strip_reader {
	const parload__strips *t;
	const parload_desc *d;
	const parload__file *files;
	const parload__codec_row *codec; /* the table's codec */
	void *state;            /* its state, or the custom decoder's */
	unsigned char *in;      /* stored bytes */
	size_t in_cap;
	unsigned char *out;     /* the decoded strip */
	uint64_t have;          /* index of the strip in out, or UINT64_MAX */
	uint64_t decoded;       /* strips decoded */
	uint64_t run;           /* the table's run of the last strip asked */
	size_t max_read;        /* bytes per read call (the load's) */
	parload_error *err;     /* of the call in progress */
} parload__strip_reader;

int parload__strip_reader_open(parload__strip_reader *r,
			       const parload__strips *t, const parload_desc *d,
			       const parload__file *files, parload_error *err);
/* Bytes [at, at + len) of strip i's decoded rows; counts its reads in
 * st.  NULL with *err set on failure. */
const unsigned char *parload__strip_get(parload__strip_reader *r, uint64_t i,
					uint64_t at, size_t len,
					parload__io_stats *st,
					parload_error *err);
void parload__strip_reader_close(parload__strip_reader *r);


#endif /* PARLOAD_CODEC_H */
