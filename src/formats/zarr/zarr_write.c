/*
 * zarr_write.c - parload_save's Zarr store: an array (pages, rows, cols)
 * in a directory, written as zarr-python 2.13 reads it (v2: .zarray,
 * .zattrs, chunk files "i.j.k") or as the v3 specification says (zarr.json,
 * chunk files "c/i/j/k", shards of several chunks with their index at the
 * end).  The chunks are cut, encoded and written by workers in parallel,
 * each with buffers of its own; the first failure stops them all and is
 * the one reported, naming the chunk's key.
 */
#include "formats/zarr/zarr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 2^64 - 1 twice: an inner chunk a shard does not hold. */
#define MISSING UINT64_MAX

typedef struct zw {
	const parload_stack *st;
	const parload_save_options *o;
	const char *dir;       /* where it is written */
	const char *path;      /* what messages name */
	size_t elem;
	int version;           /* 2 or 3 */
	uint64_t shape[3];     /* pages, rows, cols */
	uint64_t chunk[3];     /* a chunk's (a shard's inner chunk's) shape */
	uint64_t grid[3];      /* chunks along each */
	uint64_t shard;        /* chunks along the pages a shard holds; 0 */
	uint64_t units;        /* files of chunks: chunks, or shards */
	size_t chunk_bytes;
	uint64_t next;         /* the next unit a worker takes (atomic) */
	int failed;            /* set by the first failure (atomic) */
	int rc;
	parload_error *err;
	/* The compressor: its row (NULL: none) and its parameters. */
	const parload__codec_row *row;
	parload__filter filter;
	size_t bound;          /* the most bytes it makes of a chunk */
} zw;

/* A worker's own: a chunk cut out of the stack, its encoding, the
 * compressor's state. */
typedef struct zbuf {
	unsigned char *cut;
	unsigned char *enc;
	void *state;
	parload_error err;
} zbuf;

/* ---- the store's shape ---- */

static uint64_t up_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* The chunk's shape: o->chunks, 0 for all of a dimension, cut to the
 * array; none given: one page per chunk. */
static void chunk_shape(zw *z)
{
	const uint64_t *c = z->o->chunks;
	const bool given = c[0] || c[1] || c[2];

	for (int i = 0; i < 3; i++) {
		uint64_t k = given ? c[i] : i == 0 ? 1 : 0;

		z->chunk[i] = k == 0 || k > z->shape[i] ? z->shape[i] : k;
		z->grid[i] = up_div(z->shape[i], z->chunk[i]);
	}
}

/* Everything o asks checked, the shape and the work laid out. */
static int layout(zw *z)
{
	const parload_save_options *o = z->o;
	const uint64_t page = z->chunk[1] * z->chunk[2];

	z->version = o->zarr_format ? o->zarr_format : 2;
	if (z->version != 2 && z->version != 3)
		return parload__fail_path(z->err, PARLOAD_EINVAL, 0, z->path,
					  "Zarr format %d: 2 or 3",
					  o->zarr_format);
	if (o->shard && z->version != 3)
		return parload__fail_path(z->err, PARLOAD_EINVAL, 0, z->path,
					  "shards are Zarr v3's: shard "
					  "needs zarr_format 3");
	if (page > SIZE_MAX / z->elem / z->chunk[0] ||
	    page * z->chunk[0] * z->elem > ((uint64_t)1 << 31))
		return parload__fail_path(z->err, PARLOAD_EINVAL, 0, z->path,
					  "chunks of %" PRIu64 " x %" PRIu64
					  " x %" PRIu64 " are over 2 GiB",
					  z->chunk[0], z->chunk[1],
					  z->chunk[2]);
	z->chunk_bytes = (size_t)(page * z->chunk[0]) * z->elem;
	/* A shard past the array's pages is cut to them, as a chunk is. */
	z->shard = PARLOAD__MIN((uint64_t)o->shard, z->grid[0]);
	z->units = (z->shard ? up_div(z->grid[0], z->shard) : z->grid[0]) *
		   z->grid[1] * z->grid[2];
	return 0;
}

/* Blosc's number for its LZ4 compressor (blosc.h's BLOSC_LZ4), and its
 * byte shuffle (BLOSC_SHUFFLE). */
#define BLOSC_LZ4_CODE 1
#define BLOSC_BYTE_SHUFFLE 1

/* The codec row o->compress names, its parameters, and the room its
 * encoding of a chunk may need; PARLOAD_ENOTSUP where this build lacks
 * its library. */
static int compressor(zw *z)
{
	static const parload__codec codecs[] = {
		[PARLOAD_COMPRESS_ZSTD] = PARLOAD__CODEC_ZSTD,
		[PARLOAD_COMPRESS_BLOSC] = PARLOAD__CODEC_BLOSC,
		[PARLOAD_COMPRESS_GZIP] = PARLOAD__CODEC_GZIP,
	};
	const int c = z->o->compress;

	if (c == PARLOAD_COMPRESS_NONE)
		return 0;
	z->filter.codec = codecs[c];
	z->filter.elem = (uint32_t)z->elem;
	z->filter.param[0] = c == PARLOAD_COMPRESS_BLOSC ? BLOSC_LZ4_CODE :
							  (uint32_t)z->o->level;
	z->filter.param[1] = (uint32_t)z->o->level;
	z->filter.param[2] = BLOSC_BYTE_SHUFFLE;
	z->row = parload__codec_get(z->filter.codec);
	if (!z->row->encode)
		return parload__fail_path(z->err, PARLOAD_ENOTSUP, 0, z->path,
					  "%s compression needs %s",
					  parload_compress_name(c),
					  z->row->needs ? z->row->needs :
							  "its library");
	z->bound = z->row->bound(&z->filter, z->chunk_bytes);
	if (z->bound == 0)
		return parload__fail_path(z->err, PARLOAD_EINVAL, 0, z->path,
					  "chunks too large to compress");
	return 0;
}

/* ---- text: the metadata's JSON ---- */

typedef struct jbuf {
	char *p;
	size_t n, cap;
} jbuf;

static void __attribute__((format(printf, 2, 3)))
put(jbuf *j, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(j->p + j->n, j->cap - j->n, fmt, ap);
	va_end(ap);
	j->n = w < 0 || (size_t)w >= j->cap - j->n ? j->cap : j->n + (size_t)w;
}

static void put_shape(jbuf *j, const char *name, const uint64_t s[3],
		      uint64_t first)
{
	put(j, "\"%s\": [%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", name,
	    first, s[1], s[2]);
}

/* A number as Python's json writes it (NaN, Infinity), a float32's
 * value exactly. */
static void put_number(jbuf *j, double v)
{
	if (isnan(v))
		put(j, "NaN");
	else if (isinf(v))
		put(j, v < 0 ? "-Infinity" : "Infinity");
	else
		put(j, "%.9g", v);
}

/* {"angles": [...]} where the stack has angles, else {}. */
static void put_attributes(jbuf *j, const parload_stack *st)
{
	if (!st->angles || !st->angle_count) {
		put(j, "{}");
		return;
	}
	put(j, "{\"angles\": [");
	for (uint64_t k = 0; k < st->angle_count; k++) {
		put(j, k ? ", " : "");
		put_number(j, st->angles[k]);
	}
	put(j, "]}");
}

/* numcodecs' configuration of the compressor (v2), or null. */
static void put_v2_compressor(jbuf *j, const zw *z)
{
	const int lv = z->o->level;

	switch (z->o->compress) {
	case PARLOAD_COMPRESS_ZSTD:
		put(j, "{\"id\": \"zstd\", \"level\": %d}", lv);
		break;
	case PARLOAD_COMPRESS_BLOSC:
		put(j, "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": %d, "
		    "\"shuffle\": 1, \"blocksize\": 0}", lv);
		break;
	case PARLOAD_COMPRESS_GZIP:
		put(j, "{\"id\": \"gzip\", \"level\": %d}", lv);
		break;
	default:
		put(j, "null");
	}
}

/* v3's codecs after "bytes": the compressor, if any. */
static void put_v3_compressor(jbuf *j, const zw *z)
{
	const int lv = z->o->level;

	switch (z->o->compress) {
	case PARLOAD_COMPRESS_ZSTD:
		put(j, ", {\"name\": \"zstd\", \"configuration\": {\"level\": "
		    "%d, \"checksum\": false}}", lv);
		break;
	case PARLOAD_COMPRESS_BLOSC:
		put(j, ", {\"name\": \"blosc\", \"configuration\": {\"cname\": "
		    "\"lz4\", \"clevel\": %d, \"shuffle\": \"shuffle\", "
		    "\"typesize\": %zu, \"blocksize\": 0}}", lv, z->elem);
		break;
	case PARLOAD_COMPRESS_GZIP:
		put(j, ", {\"name\": \"gzip\", \"configuration\": {\"level\": "
		    "%d}}", lv);
		break;
	default:
		break;
	}
}

#define BYTES_LE "{\"name\": \"bytes\", \"configuration\": {\"endian\": " \
		 "\"little\"}}"

/* v3's codecs: bytes and the compressor, inside a shard's where there
 * are shards. */
static void put_v3_codecs(jbuf *j, const zw *z)
{
	put(j, "\"codecs\": [");
	if (z->shard) {
		put(j, "{\"name\": \"sharding_indexed\", \"configuration\": {");
		put_shape(j, "chunk_shape", z->chunk, z->chunk[0]);
		put(j, ", \"codecs\": [");
	}
	put(j, BYTES_LE);
	put_v3_compressor(j, z);
	if (z->shard)
		put(j, "], \"index_codecs\": [" BYTES_LE ", {\"name\": "
		    "\"crc32c\"}], \"index_location\": \"end\"}}");
	put(j, "]");
}

/* "<u2", "|u1", "<f4": NumPy's type string (v2). */
static void put_v2_dtype(jbuf *j, const zw *z)
{
	const char *name = parload_pixel_name(z->st->pixel_type);

	put(j, "\"dtype\": \"%c%c%zu\"", z->elem == 1 ? '|' : '<', name[0],
	    z->elem);
}

/* "uint16", "int32", "float64" (v3). */
static void put_v3_dtype(jbuf *j, const zw *z)
{
	const char *name = parload_pixel_name(z->st->pixel_type);
	const char *kind = name[0] == 'u' ? "uint" :
			   name[0] == 'i' ? "int" : "float";

	put(j, "\"data_type\": \"%s%zu\"", kind, z->elem * 8);
}

static void zarray(jbuf *j, const zw *z)
{
	put(j, "{\"zarr_format\": 2, ");
	put_shape(j, "shape", z->shape, z->shape[0]);
	put(j, ", ");
	put_shape(j, "chunks", z->chunk, z->chunk[0]);
	put(j, ", ");
	put_v2_dtype(j, z);
	put(j, ", \"compressor\": ");
	put_v2_compressor(j, z);
	put(j, ", \"fill_value\": 0, \"order\": \"C\", \"filters\": null, "
	    "\"dimension_separator\": \".\"}\n");
}

static void zarr_json(jbuf *j, const zw *z)
{
	const uint64_t outer = z->shard ? z->shard * z->chunk[0] : z->chunk[0];

	put(j, "{\"zarr_format\": 3, \"node_type\": \"array\", ");
	put_shape(j, "shape", z->shape, z->shape[0]);
	put(j, ", ");
	put_v3_dtype(j, z);
	put(j, ", \"chunk_grid\": {\"name\": \"regular\", \"configuration\": "
	    "{");
	put_shape(j, "chunk_shape", z->chunk, outer);
	put(j, "}}, \"chunk_key_encoding\": {\"name\": \"default\", "
	    "\"configuration\": {\"separator\": \"/\"}}, \"fill_value\": 0, ");
	put_v3_codecs(j, z);
	put(j, ", \"attributes\": ");
	put_attributes(j, z->st);
	put(j, "}\n");
}

/* ---- files ---- */

/* dir/key into buf (PATH_MAX bytes), and the store's path/key, for
 * messages, into name. */
static int key_path(const zw *z, const char *key, char *buf, char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", z->dir, key) >= PATH_MAX)
		return parload__fail_path(z->err, PARLOAD_EINVAL, 0, z->path,
					  "name too long for its key %s", key);
	snprintf(name, PATH_MAX, "%s/%s", z->path, key);
	return 0;
}

/* A new file of the store, for writing: its descriptor, or -1 with
 * err naming it. */
static int create(const char *file, const char *name, parload_error *err)
{
	int fd;

	do
		fd = parload__sys_open(file, O_WRONLY | O_CREAT | O_EXCL |
						     O_CLOEXEC, 0666);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		parload__fail_path(err, PARLOAD_EWRITE, errno, name,
				   "cannot create file");
	return fd;
}

static int finish(int fd, const char *name, int rc, parload_error *err)
{
	if (parload__sys_close(fd) != 0 && rc == 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, name,
					"cannot write");
	return rc;
}

/* The file key, all n bytes of p in it. */
static int write_file(const zw *z, const char *key, const void *p, size_t n,
		      parload_error *err)
{
	char file[PATH_MAX], name[PATH_MAX];
	int fd, rc = key_path(z, key, file, name);

	if (rc)
		return rc;
	fd = create(file, name, err);
	if (fd < 0)
		return PARLOAD_EWRITE;
	return finish(fd, name, parload__write_full(fd, p, n, name, err), err);
}

/* The metadata file key: j's text, which must have fit. */
static int write_text(const zw *z, const char *key, const jbuf *j)
{
	if (j->n >= j->cap)
		return parload__fail_path(z->err, PARLOAD_EOVERFLOW, 0,
					  z->path, "%s would be over %zu bytes",
					  key, j->cap);
	return write_file(z, key, j->p, j->n, z->err);
}

/* The metadata: v2 .zarray and .zattrs, or v3 zarr.json. */
static int write_meta(const zw *z)
{
	jbuf j = { .cap = 4096 + 32 * (size_t)z->st->angle_count };
	int rc;

	if (z->st->angle_count > (SIZE_MAX - 4096) / 64 ||
	    !(j.p = parload__sys_malloc(j.cap)))
		return parload__fail_nomem(z->err, z->path);
	if (z->version == 3) {
		zarr_json(&j, z);
		rc = write_text(z, "zarr.json", &j);
	} else {
		zarray(&j, z);
		rc = write_text(z, ".zarray", &j);
		j.n = 0;
		put_attributes(&j, z->st);
		put(&j, "\n");
		if (rc == 0)
			rc = write_text(z, ".zattrs", &j);
	}
	parload__sys_free(j.p);
	return rc;
}

/* ---- chunks ---- */

/* Chunk c's pixels in C order over the whole chunk shape, zeros past the
 * array's edges: the stack itself where they lie there in one run, else
 * cut into buf. */
static const unsigned char *cut(const zw *z, const uint64_t c[3],
				unsigned char *buf)
{
	const uint64_t *s = z->shape, *k = z->chunk;
	const unsigned char *src = z->st->pixels;
	const uint64_t v0 = c[0] * k[0], r0 = c[1] * k[1], c0 = c[2] * k[2];
	const uint64_t nv = PARLOAD__MIN(k[0], s[0] - v0);
	const uint64_t nr = PARLOAD__MIN(k[1], s[1] - r0);
	const uint64_t nc = PARLOAD__MIN(k[2], s[2] - c0);

	if (k[1] == s[1] && k[2] == s[2] && nv == k[0])
		return src + v0 * s[1] * s[2] * z->elem;
	if (nv < k[0] || nr < k[1] || nc < k[2])
		memset(buf, 0, z->chunk_bytes);
	for (uint64_t v = 0; v < nv; v++)
		for (uint64_t r = 0; r < nr; r++)
			memcpy(buf + ((v * k[1] + r) * k[2]) * z->elem,
			       src + (((v0 + v) * s[1] + r0 + r) * s[2] + c0) *
					     z->elem,
			       nc * z->elem);
	return buf;
}

/* Chunk c as stored: its pixels cut and encoded; *n bytes.  NULL where
 * the compressor fails, naming the chunk's file (name) in b->err. */
static const unsigned char *chunk_bytes(const zw *z, const uint64_t c[3],
					zbuf *b, size_t *n, const char *name)
{
	const unsigned char *p = cut(z, c, b->cut);
	const char *why;

	*n = z->chunk_bytes;
	if (!z->row)
		return p;
	why = z->row->encode(b->state, &z->filter, p, *n, b->enc, z->bound, n);
	if (!why)
		return b->enc;
	parload__fail(&b->err, PARLOAD_EWRITE, 0, name, c[0] * z->chunk[0],
		      PARLOAD_NONE, "chunk (%" PRIu64 ", %" PRIu64 ", %" PRIu64
		      ") %s", c[0], c[1], c[2], why);
	return NULL;
}

/* The key of chunk (or shard) c: "i.j.k" (v2), "c/i/j/k" (v3). */
static void chunk_key(const zw *z, const uint64_t c[3], char *key)
{
	if (z->version == 2)
		snprintf(key, 80, "%" PRIu64 ".%" PRIu64 ".%" PRIu64, c[0],
			 c[1], c[2]);
	else
		snprintf(key, 80, "c/%" PRIu64 "/%" PRIu64 "/%" PRIu64, c[0],
			 c[1], c[2]);
}

/* v3: the folders of key (c/i, c/i/j), which other workers may be
 * making too. */
static int key_dirs(const zw *z, const char *key, parload_error *err)
{
	char file[PATH_MAX], name[PATH_MAX];
	int rc = key_path(z, key, file, name);
	char *slash = rc ? NULL : strchr(file + strlen(z->dir) + 3, '/');

	for (; slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (parload__sys_mkdir(file, 0777) != 0 && errno != EEXIST)
			return parload__fail_path(err, PARLOAD_EWRITE, errno,
						  name, "cannot create its "
						  "folder");
		*slash = '/';
	}
	return rc;
}

/* Unit u (a chunk's number in C order) as its place in the grid. */
static void unit_at(const uint64_t grid[3], uint64_t u, uint64_t c[3])
{
	c[2] = u % grid[2];
	c[1] = u / grid[2] % grid[1];
	c[0] = u / grid[2] / grid[1];
}

static int write_chunk(const zw *z, uint64_t u, zbuf *b)
{
	uint64_t c[3];
	char key[80], name[PATH_MAX];
	const unsigned char *p;
	size_t n;
	int rc;

	unit_at(z->grid, u, c);
	chunk_key(z, c, key);
	if (z->version == 3 && (rc = key_dirs(z, key, &b->err)) != 0)
		return rc;
	snprintf(name, sizeof(name), "%s/%s", z->path, key);
	p = chunk_bytes(z, c, b, &n, name);
	return p ? write_file(z, key, p, n, &b->err) : PARLOAD_EWRITE;
}

/* ---- shards (v3): inner chunks back to back, then their index ---- */

/* Shard s's inner chunks, written to fd from its start, their places
 * into index (offset, bytes; MISSING for one past the array). */
static int shard_chunks(const zw *z, const uint64_t s[3], int fd,
			const char *name, unsigned char *index, zbuf *b)
{
	uint64_t off = 0, c[3] = { 0, s[1], s[2] };
	const unsigned char *p;
	size_t n;
	int rc = 0;

	for (uint64_t i = 0; rc == 0 && i < z->shard; i++) {
		uint64_t ent[2] = { MISSING, MISSING };

		c[0] = s[0] * z->shard + i;
		if (c[0] < z->grid[0]) {
			p = chunk_bytes(z, c, b, &n, name);
			rc = p ? parload__write_full(fd, p, n, name, &b->err) :
				 PARLOAD_EWRITE;
			ent[0] = off;
			ent[1] = n;
			off += n;
		}
		memcpy(index + 16 * i, ent, 16); /* little-endian host */
	}
	return rc;
}

static int write_shard(const zw *z, uint64_t u, zbuf *b)
{
	const uint64_t grid[3] = { up_div(z->grid[0], z->shard), z->grid[1],
				   z->grid[2] };
	const size_t len = 16 * (size_t)z->shard;
	char key[80], file[PATH_MAX], name[PATH_MAX];
	unsigned char *index = parload__sys_malloc(len + 4);
	uint64_t s[3];
	uint32_t crc;
	int fd, rc;

	unit_at(grid, u, s);
	chunk_key(z, s, key);
	rc = index ? key_dirs(z, key, &b->err) :
		     parload__fail_nomem(&b->err, z->path);
	if (rc == 0 && (rc = key_path(z, key, file, name)) == 0 &&
	    (fd = create(file, name, &b->err)) < 0)
		rc = PARLOAD_EWRITE;
	if (rc == 0) {
		rc = shard_chunks(z, s, fd, name, index, b);
		crc = parload_crc32c(0, index, len);
		memcpy(index + len, &crc, 4);
		if (rc == 0)
			rc = parload__write_full(fd, index, len + 4, name,
						 &b->err);
		rc = finish(fd, name, rc, &b->err);
	}
	parload__sys_free(index);
	return rc;
}

/* ---- the workers ---- */

/* The first failure is the one reported; the others stop. */
static void failed(zw *z, int rc, const parload_error *e)
{
	int none = 0;

	if (__atomic_compare_exchange_n(&z->failed, &none, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		z->rc = rc;
		if (z->err)
			*z->err = *e;
	}
}

/* Worker w: units one after the other, as long as there are some and
 * nothing failed. */
static void work(void *arg, unsigned w)
{
	zw *z = arg;
	zbuf b = { 0 };
	uint64_t u;
	int rc = 0;

	(void)w;
	b.cut = parload__sys_malloc(z->chunk_bytes ? z->chunk_bytes : 1);
	if (z->row) {
		b.enc = parload__sys_malloc(z->bound);
		b.state = z->row->open ? z->row->open() : NULL;
	}
	if (!b.cut || (z->row && (!b.enc || (z->row->open && !b.state))))
		rc = parload__fail_nomem(&b.err, z->path);
	while (rc == 0 && !__atomic_load_n(&z->failed, __ATOMIC_ACQUIRE) &&
	       (u = __atomic_fetch_add(&z->next, 1, __ATOMIC_RELAXED)) <
		       z->units)
		rc = z->shard ? write_shard(z, u, &b) : write_chunk(z, u, &b);
	if (rc)
		failed(z, rc, &b.err);
	if (z->row && z->row->close && b.state)
		z->row->close(b.state);
	parload__sys_free(b.cut);
	parload__sys_free(b.enc);
}

/* Every unit, on as many workers as o->threads (0: the CPUs the process
 * may use) and the units allow. */
static int run(zw *z)
{
	parload_options lo;
	parload__engine e;
	int rc;

	parload_options_init(&lo);
	lo.threads = z->o->threads;
	lo.flags |= PARLOAD_OPT_NO_BIND;
	rc = parload__engine_init(&e, &lo, z->err);
	if (rc)
		return rc;
	if (e.workers > z->units)
		e.workers = (unsigned)PARLOAD__MAX(z->units, 1);
	rc = parload__engine_ready(&e, false, z->err);
	if (rc == 0)
		parload__engine_run(&e, work, z, NULL);
	parload__engine_free(&e);
	return rc ? rc : z->rc;
}

static int mkdir_c(const zw *z)
{
	char file[PATH_MAX], name[PATH_MAX];
	int rc = key_path(z, "c", file, name);

	if (rc == 0 && parload__sys_mkdir(file, 0777) != 0)
		rc = parload__fail_path(z->err, PARLOAD_EWRITE, errno, name,
					"cannot create folder");
	return rc;
}

int parload__zarr_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err)
{
	zw z = { .st = st, .o = o, .dir = tmp, .path = path, .err = err,
		 .elem = parload_pixel_size(st->pixel_type),
		 .shape = { st->n, st->rows, st->cols } };
	int rc;

	chunk_shape(&z);
	rc = layout(&z);
	if (rc == 0)
		rc = compressor(&z);
	if (rc == 0)
		rc = write_meta(&z);
	if (rc == 0 && z.version == 3)
		rc = mkdir_c(&z);
	return rc ? rc : run(&z);
}
