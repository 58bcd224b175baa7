/*
 * zarr.h - Zarr stores (v2 and v3), read and written: the JSON reader of
 * their metadata (zarr_json.c), an array's metadata as parload holds it
 * (zarr_meta.c), its chunks and shards as a strips table (zarr.c: the
 * driver's row), and the writer (zarr_write.c).
 */
#ifndef PARLOAD_ZARR_H
#define PARLOAD_ZARR_H

#include "formats/formats.h"
#include "formats/driver.h"

/* ---- zarr_json.c: the JSON reader (RFC 8259) ---- */

typedef enum parload__json_type {
	PARLOAD__JSON_NULL, PARLOAD__JSON_FALSE, PARLOAD__JSON_TRUE,
	PARLOAD__JSON_NUMBER, PARLOAD__JSON_STRING, PARLOAD__JSON_ARRAY,
	PARLOAD__JSON_OBJECT
} parload__json_type;

typedef struct parload__json {
	parload__json_type type;
	const char *key;     /* its name in its object (decoded, NUL-ended), or NULL */
	const char *s;       /* STRING: decoded UTF-8, NUL-ended (an embedded
			      * \u0000 is refused); NUMBER: its text as written */
	size_t len;          /* strlen of s */
	uint32_t n;          /* ARRAY/OBJECT: members */
	struct parload__json *kid;  /* first member, or NULL */
	struct parload__json *next; /* next member of its parent, or NULL */
	uint64_t at;         /* byte offset in the text where it begins */
} parload__json;

typedef struct parload__json_doc {
	parload__json *root;
	void *mem;           /* owned: every node and string */
} parload__json_doc;

#define PARLOAD__JSON_MAX_DEPTH 64             /* arrays and objects nested */
#define PARLOAD__JSON_MAX_TEXT ((size_t)64 << 20) /* bytes of text */

/* Parse text (n bytes; need not be NUL-ended) as one JSON value (RFC 8259;
 * also the bare tokens NaN, Infinity, -Infinity as NUMBERs, which Python's
 * json writes).  0, or PARLOAD_ECONTAINER naming path and the byte offset
 * ("not JSON: ... at byte N"), PARLOAD_ENOMEM.  Limits: nesting 64 deep,
 * text at most 64 MiB (PARLOAD_ECONTAINER past them).  Nothing held on
 * failure.  Strings must be well-formed UTF-8 without raw control
 * characters; an object may name a key twice (both kept, _get finds the
 * first). */
int parload__json_parse(const char *text, size_t n, const char *path,
			parload__json_doc *doc, parload_error *err);
/* Free what doc holds (doc->mem) and clear it; a cleared doc is fine. */
void parload__json_free(parload__json_doc *doc);
/* Object member named key (the first), or NULL (also for a non-object). */
const parload__json *parload__json_get(const parload__json *obj,
				       const char *key);
/* Array member i, or NULL. */
const parload__json *parload__json_at(const parload__json *arr, uint32_t i);
/* A NUMBER that is an integer written without fraction or exponent,
 * within range: true and *out; else false.  "-0" is 0. */
bool parload__json_u64(const parload__json *v, uint64_t *out);
bool parload__json_i64(const parload__json *v, int64_t *out);
/* A NUMBER as a double (strtod of its text, NaN/Infinity included). */
bool parload__json_double(const parload__json *v, double *out);
/* STRING equal to s. */
bool parload__json_is(const parload__json *v, const char *s);

/* ---- zarr_meta.c: an array's metadata ---- */

#define PARLOAD__ZARR_MAX_RANK 32

/* What a Zarr array's metadata says, as parload reads it. */
typedef struct parload__zarr {
	char *store;         /* the store's directory (owned) */
	char *array;         /* the array's directory (owned) */
	char *meta;          /* its metadata file, in messages (owned) */
	int version;         /* 2 or 3 */
	unsigned rank;
	uint64_t shape[PARLOAD__ZARR_MAX_RANK];
	uint64_t chunk[PARLOAD__ZARR_MAX_RANK]; /* a chunk file's, or a
						 * shard's */
	int pixel_type;      /* PARLOAD_PIXEL_* */
	parload_encoding enc;
	uint32_t elem;       /* bytes per element */
	unsigned char fill[8]; /* one element of the fill value, as stored */
	parload__filter filter[PARLOAD__MAX_FILTERS]; /* applied first first */
	uint32_t nfilters;
	char sep;            /* the chunk key's separator */
	bool prefix;         /* v3 default keys: "c" first */
	/* sharding_indexed: chunk is the shard's shape, inner its chunks'. */
	bool sharded;
	uint64_t inner[PARLOAD__ZARR_MAX_RANK];
	bool index_first;    /* the index at the shard's start */
	bool index_crc;      /* the index ends in its CRC-32C */
	float *angles;       /* attribute "angles": one per frame, or NULL */
	uint64_t nangles;
} parload__zarr;

/* The array src names: its store (src's path, or the part before ":/"),
 * the array in it (dataset, the part after ":/", an OME-Zarr image's
 * first level, or the root).  ECONTAINER naming the metadata file and
 * what is wrong, ENOTSUP naming what parload does not read, EINVAL for a
 * group with no array named; nothing held on failure. */
int parload__zarr_open(const parload_source *src, parload__zarr *z,
		       parload_error *err);
void parload__zarr_free(parload__zarr *z);
/* Whether path is a Zarr store or node (a directory with .zarray, .zgroup
 * or zarr.json), or a "STORE:/path" of one. */
bool parload__zarr_is(const char *path);

/* ---- zarr_write.c ---- */

/* Write st as a Zarr store into tmp, an empty directory beside path (the
 * store's name in messages): v2 by default, v3 with o->zarr_format 3
 * (o->shard: sharding_indexed), chunks of o->chunks encoded by o->compress
 * on as many threads as o->threads says.  0, or the first failure naming
 * path and the chunk's key; what was written is the caller's to remove.
 * The writer of parload__driver_zarr (zarr.c), whose dir is
 * parload__zarr_is: only a store may be replaced by one. */
int parload__zarr_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err);

#endif
