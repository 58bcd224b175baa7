/*
 * codec.h - how a strip's stored bytes become its rows: one worker's strip
 * reader (decode.c), which reads a strip through io and decodes it with
 * the codec its table names.  Calls go down only: codec calls io, model
 * and base.
 */
#ifndef PARLOAD_CODEC_H
#define PARLOAD_CODEC_H

#include "io/io.h"

/* codecs.c: one row per codec (model.h's parload__codec).  A row gives
 * its name (messages, stats), its HDF5 filter id and how it reads that
 * filter's client data, what a build without it needs, a worker's state,
 * its decode: one stage of a strip's pipeline, and, for the codecs a
 * writer makes, its encode.  A row without decode is read as it is
 * (NONE), by the container's decoder (CUSTOM), or needs what this build
 * lacks (needs). */
typedef struct parload__codec_row {
	const char *name;
	const char *needs;     /* what a build without it needs, or NULL */
	uint32_t hdf5_id;      /* its HDF5 filter id, 0: none */
	/* A filter from HDF5's client data (cd, n of them) for elements of
	 * elem bytes: NULL, or why parload cannot decode it (the data then
	 * goes through libhdf5). */
	const char *(*hdf5_params)(const unsigned *cd, size_t n, uint32_t elem,
				   parload__filter *f);
	void *(*open)(void);   /* a worker's state; NULL: no memory */
	void (*close)(void *state);
	/* One stage: the stored bytes in (stored of them) into out (room for
	 * cap bytes), *got the bytes made: NULL, or what is wrong with them
	 * (a phrase: "is not a valid LZ4 block").  Never writes past
	 * out + cap nor reads past in + stored, whatever the bytes say. */
	const char *(*decode)(void *state, const parload__filter *f,
			      const unsigned char *in, size_t stored,
			      unsigned char *out, size_t cap, size_t *got);
	/* Encode n bytes of in into out (cap bytes: at least bound(f, n)):
	 * NULL and *got, or what failed (a phrase: "has no zstd level 40").
	 * f's param as decode reads them (its level, its compressor...); a
	 * worker's state from open(), as decode's.  A row without encode
	 * is not written; one whose library a build lacks has neither. */
	const char *(*encode)(void *state, const parload__filter *f,
			      const unsigned char *in, size_t n,
			      unsigned char *out, size_t cap, size_t *got);
	/* The most bytes encode makes of n bytes (0: more than a size_t). */
	size_t (*bound)(const parload__filter *f, size_t n);
} parload__codec_row;

/* The LZ4 row's param[0] for numcodecs' framing (0: HDF5's filter's). */
#define PARLOAD__LZ4_NUMCODECS 1

/* The row of codec c; the codec of HDF5 filter id (PARLOAD__CODEC_COUNT:
 * none). */
const parload__codec_row *parload__codec_get(parload__codec c);
parload__codec parload__codec_of_hdf5(uint32_t id);
/* The codec whose row is named name ("gzip"; PARLOAD__CODEC_COUNT: none). */
parload__codec parload__codec_named(const char *name);
/* What decodes t's strips into buf (size bytes): its filters' names,
 * first applied first ("shuffle+deflate"), its decoder's, "none" for
 * tiles stored as they are; "" for a plain table or none (t NULL); buf. */
const char *parload__codec_names(const parload__strips *t, char *buf,
				 size_t size);

/* decode.c: one worker's strip decoder; it keeps the last strip it
 * decoded, so that a share that reads a strip's rows one batch at a time
 * decodes it once. */
typedef struct parload__strip_reader {
	const parload__strips *t;
	const parload_desc *d;
	const parload__file *files;
	void *state[PARLOAD__MAX_FILTERS]; /* each filter's */
	void *custom;           /* the container's decoder's state */
	unsigned char *in;      /* stored bytes */
	size_t in_cap;
	unsigned char *mid[2];  /* between two filters */
	size_t mid_cap;
	unsigned char *tile;    /* one decoded tile (tiles > 1) */
	/* The decoded chunks kept: one for each strip of a view where a
	 * chunk holds several frames (a share takes a view's strips in turn,
	 * then the next view's, from the same chunks), else one. */
	struct parload__slab {
		unsigned char *out; /* depth frames of a strip's rows, whole
				     * width */
		unsigned char *tile_ok; /* tiles > 1: which are in out */
		bool have;          /* out holds the chunk at off of file
				     * (with tiles, those tile_ok says) */
		uint64_t off;
		uint32_t file;
		uint64_t strip;     /* the container's decoder: its strip */
	} *slab;
	uint32_t slabs;
	uint64_t decoded;       /* chunks decoded */
	uint64_t run;           /* the table's run of the last entry asked */
	size_t max_read;        /* bytes per read call (the load's) */
	uint32_t cols[2];       /* the columns [cols[0], cols[1]) the load
				 * takes (cols[1] 0: all): the tiles of the
				 * others are not decoded */
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
/* Strip i decoded straight into dst (size bytes: all of its decoded
 * rows), where it is a chunk of one frame and every column: 0, a code, or
 * 1 where it is not (parload__strip_get then decodes it and the caller
 * copies its rows). */
int parload__strip_decode_into(parload__strip_reader *r, uint64_t i,
			       unsigned char *dst, size_t size,
			       parload__io_stats *st, parload_error *err);
void parload__strip_reader_close(parload__strip_reader *r);


#endif /* PARLOAD_CODEC_H */
