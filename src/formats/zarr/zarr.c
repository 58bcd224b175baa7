/*
 * zarr.c - the Zarr driver's row: a store's array (zarr_meta.c says
 * which, and what it holds) as a container: its description, its files
 * (the metadata file first, then every chunk file or shard that exists)
 * and its strips table, built by chunks.c from the chunk grid as an HDF5
 * dataset's is.  A chunk file that does not exist, or a shard's empty
 * slot, is the fill value.  A shard's index is read here, checked (its
 * CRC-32C, every slot inside the shard) and its inner chunks become the
 * table's entries: the workers read and decode each, as any chunk.
 *
 * An array of rank 3 is (views, rows, columns); of rank 2, one view;
 * leading dimensions of size 1 (OME-Zarr's time and channel) are
 * dropped.
 */
#include "formats/zarr/zarr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most chunk files (or shards) a store's array may have. */
#define MAX_CHUNK_FILES ((uint64_t)1 << 24)
/* The most inner chunks of one shard. */
#define MAX_INNER ((uint64_t)1 << 24)

typedef struct build {
	parload__zarr z;
	parload__container *c;
	parload_error *err;
	unsigned lead;             /* dimensions dropped (size 1) */
	uint64_t dims[3], chunk[3]; /* as (frames, rows, columns) */
	const uint64_t *grid_of;   /* z.chunk: a file's (a shard's) shape */
	uint64_t grid[PARLOAD__ZARR_MAX_RANK]; /* files along each dim */
	parload__chunks p;         /* the chunks found, for chunks.c */
	size_t paths_cap;
	unsigned char *index;      /* a shard's index */
} build;

/* ---- shape ---- */

/* (frames, rows, columns) of s, a shape or a place: its last three
 * dimensions; a 2-D array's frame is def (1 of a shape, 0 of a place). */
static void three(const build *b, const uint64_t *s, uint64_t *out,
		  uint64_t def)
{
	const unsigned r = b->z.rank;

	out[0] = r >= 3 ? s[r - 3] : def;
	out[1] = s[r - 2];
	out[2] = s[r - 1];
}

/* "shape 2 x 3 x 70 x 100": refused. */
static int shape_refused(const parload__zarr *z, parload_error *err)
{
	char text[PARLOAD__ZARR_MAX_RANK * 22];
	size_t at = 0;

	for (unsigned k = 0; k < z->rank; k++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%" PRIu64,
				       k ? " x " : "", z->shape[k]);
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, z->meta,
				  "shape %s: of an array of %u dimensions "
				  "only the last three may be larger than 1",
				  text, z->rank);
}

static int shape(build *b)
{
	const parload__zarr *z = &b->z;
	parload_error *err = b->err;

	if (z->rank < 2)
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, z->meta,
					  "a %u-dimensional array (parload "
					  "reads images: 2 or more "
					  "dimensions)", z->rank);
	b->lead = z->rank > 3 ? z->rank - 3 : 0;
	for (unsigned k = 0; k < b->lead; k++)
		if (z->shape[k] != 1)
			return shape_refused(z, err);
	three(b, z->shape, b->dims, 1);
	three(b, z->sharded ? z->inner : z->chunk, b->chunk, 1);
	if (b->dims[1] > UINT32_MAX || b->dims[2] > UINT32_MAX ||
	    b->dims[0] == 0 || b->dims[1] == 0 || b->dims[2] == 0)
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, z->meta,
					  "an array of %" PRIu64 " x %" PRIu64
					  " x %" PRIu64 " is not read (each "
					  "at least 1; rows and columns below "
					  "2^32)", b->dims[0], b->dims[1],
					  b->dims[2]);
	return 0;
}

static void describe_as(const build *b, parload_desc *d)
{
	parload_desc_init(d);
	d->format = PARLOAD_FORMAT_ZARR;
	d->width = (uint32_t)b->dims[2];
	d->height = (uint32_t)b->dims[1];
	d->pixel_type = b->z.pixel_type;
	d->encoding = b->z.enc;
	d->count = b->dims[0];
	d->bytes_per_pixel = b->z.elem;
	d->row_size = (uint64_t)d->width * d->bytes_per_pixel;
	d->payload_size = d->row_size * d->height;
	d->record_size = d->payload_size;
}

/* ---- files and chunks ---- */

/* One more file of the container (path owned by it): its index. */
static int add_path(build *b, char *path, uint32_t *index)
{
	parload__container *c = b->c;

	if (!path)
		return parload__fail_nomem(b->err, b->z.meta);
	if (c->n == b->paths_cap) {
		const size_t cap = b->paths_cap ? 2 * b->paths_cap : 64;
		char **p = parload__sys_malloc(cap * sizeof(*p));

		if (!p) {
			parload__sys_free(path);
			return parload__fail_nomem(b->err, b->z.meta);
		}
		if (c->n)
			memcpy(p, c->paths, c->n * sizeof(*p));
		parload__sys_free(c->paths);
		c->paths = p;
		b->paths_cap = cap;
	}
	*index = (uint32_t)c->n;
	c->paths[c->n++] = path;
	return 0;
}

/* A chunk found: kept by chunks.c, which names its file in messages. */
static int add_chunk(build *b, const parload__chunk *ch)
{
	b->p.paths = b->c->paths;
	return parload__chunks_put(&b->p, ch);
}

/* The path of the chunk file (or shard) at grid index idx. */
static char *key_path(const build *b, const uint64_t *idx)
{
	const parload__zarr *z = &b->z;
	const size_t n = strlen(z->array) + 4 + z->rank * 21;
	char *p = parload__sys_malloc(n);
	size_t at;

	if (!p)
		return NULL;
	at = (size_t)snprintf(p, n, "%s/%s", z->array,
			      z->prefix ? (z->sep == '/' ? "c/" : "c.") : "");
	for (unsigned k = 0; k < z->rank; k++)
		at += (size_t)snprintf(p + at, n - at, "%s%" PRIu64,
				       k ? (char[]){ z->sep, 0 } : "", idx[k]);
	return p;
}

/* ---- shards ---- */

static uint64_t le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned k = n; k > 0; k--)
		v = v << 8 | p[k - 1];
	return v;
}

/* Inner chunks along each dimension of a shard, and their count. */
static int inner_grid(const build *b, uint64_t *ig, uint64_t *n,
		      const char *path)
{
	const parload__zarr *z = &b->z;

	*n = 1;
	for (unsigned k = 0; k < z->rank; k++) {
		ig[k] = z->chunk[k] / z->inner[k];
		if (!parload__mul_ok(*n, ig[k], n) || *n > MAX_INNER)
			return parload__fail_path(b->err, PARLOAD_ENOTSUP, 0,
						  path, "a shard of more than "
						  "%" PRIu64 " chunks is not "
						  "read", MAX_INNER);
	}
	return 0;
}

/* A shard's index (len bytes, of n slots) read from path (size bytes) and
 * its CRC-32C checked: *at, where it lies. */
static int read_index(build *b, const char *path, uint64_t size,
		      uint64_t n, uint64_t len, uint64_t *at)
{
	const parload__zarr *z = &b->z;
	parload__io_stats io = { 0 };
	int fd, rc;

	if (len > size)
		return parload__fail(b->err, PARLOAD_ECONTAINER, 0, path,
				     PARLOAD_NONE, 0, "a shard of %" PRIu64
				     " bytes cannot hold its index of %"
				     PRIu64, size, len);
	*at = z->index_first ? 0 : size - len;
	parload__sys_free(b->index);
	if (!(b->index = parload__sys_malloc((size_t)len)))
		return parload__fail_nomem(b->err, path);
	do
		fd = parload__sys_open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return parload__fail_open(b->err, errno, path);
	rc = parload__pread_full(fd, b->index, (size_t)len, *at, 0, &io,
				 path, PARLOAD_NONE, b->err);
	parload__sys_close(fd);
	if (rc == 0 && z->index_crc &&
	    parload_crc32c(0, b->index, (size_t)n * 16) !=
		    (uint32_t)le(b->index + n * 16, 4))
		rc = parload__fail(b->err, PARLOAD_ECONTAINER, 0, path,
				   PARLOAD_NONE, *at + n * 16, "the shard's "
				   "index fails its CRC-32C");
	return rc;
}

/* Slot i of the shard at grid index idx (file, size bytes): a chunk,
 * none (empty: the fill value), or one outside the array (skipped). */
static int slot(build *b, const uint64_t *idx, const uint64_t *ig,
		uint64_t i, uint32_t file, uint64_t size, uint64_t at)
{
	const parload__zarr *z = &b->z;
	const uint64_t off = le(b->index + 16 * i, 8);
	const uint64_t nb = le(b->index + 16 * i + 8, 8);
	uint64_t e[PARLOAD__ZARR_MAX_RANK], q = i;
	parload__chunk ch = { .addr = off, .bytes = nb, .file = file };

	if (off == UINT64_MAX && nb == UINT64_MAX)
		return 0;
	if (off > size || nb > size - off)
		return parload__fail(b->err, PARLOAD_ECONTAINER, 0,
				     b->c->paths[file], PARLOAD_NONE,
				     at + 16 * i, "the shard's index puts "
				     "chunk %" PRIu64 " at bytes %" PRIu64
				     " to %" PRIu64 ", past the shard's %"
				     PRIu64, i, off, off + nb, size);
	for (unsigned k = z->rank; k > 0; k--) {
		e[k - 1] = idx[k - 1] * z->chunk[k - 1] +
			   q % ig[k - 1] * z->inner[k - 1];
		q /= ig[k - 1];
		if (e[k - 1] >= z->shape[k - 1])
			return 0;
	}
	three(b, e, ch.at, 0);
	return add_chunk(b, &ch);
}

static int shard(build *b, const uint64_t *idx, uint32_t file,
		 uint64_t size)
{
	const char *path = b->c->paths[file];
	uint64_t ig[PARLOAD__ZARR_MAX_RANK], n = 0, at = 0;
	int rc = inner_grid(b, ig, &n, path);

	if (rc == 0)
		rc = read_index(b, path, size, n,
				n * 16 + (b->z.index_crc ? 4 : 0), &at);
	for (uint64_t i = 0; rc == 0 && i < n; i++)
		rc = slot(b, idx, ig, i, file, size, at);
	return rc;
}

/* ---- the grid ---- */

/* The chunk file (or shard) at grid index idx, where it exists. */
static int one_file(build *b, const uint64_t *idx)
{
	char *p = key_path(b, idx);
	uint64_t e[PARLOAD__ZARR_MAX_RANK];
	parload__chunk ch = { 0 };
	struct stat st;
	int rc;

	if (!p)
		return parload__fail_nomem(b->err, b->z.meta);
	if (parload__sys_stat(p, &st) != 0) {
		rc = errno == ENOENT ? 0 : parload__fail_open(b->err, errno, p);
		parload__sys_free(p);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = parload__fail_path(b->err, PARLOAD_ECONTAINER, 0, p,
					"a chunk that is not a regular file");
		parload__sys_free(p);
		return rc;
	}
	if ((rc = add_path(b, p, &ch.file)) != 0)
		return rc;
	if (b->z.sharded)
		return shard(b, idx, ch.file, (uint64_t)st.st_size);
	for (unsigned k = 0; k < b->z.rank; k++)
		e[k] = idx[k] * b->z.chunk[k];
	three(b, e, ch.at, 0);
	ch.bytes = (uint64_t)st.st_size;
	return add_chunk(b, &ch);
}

/* The grid index after idx (C order: the last dimension fastest) in a
 * grid of g; false past the last. */
static bool next_index(uint64_t *idx, const uint64_t *g, unsigned rank)
{
	for (unsigned k = rank; k > 0; k--) {
		if (++idx[k - 1] < g[k - 1])
			return true;
		idx[k - 1] = 0;
	}
	return false;
}

/* Every chunk file (or shard) of the grid, in C order. */
static int walk(build *b)
{
	const parload__zarr *z = &b->z;
	uint64_t g[PARLOAD__ZARR_MAX_RANK], idx[PARLOAD__ZARR_MAX_RANK] = { 0 };
	uint64_t n = 1;
	int rc = 0;

	for (unsigned k = 0; k < z->rank; k++) {
		g[k] = (z->shape[k] + z->chunk[k] - 1) / z->chunk[k];
		if (!parload__mul_ok(n, g[k], &n) || n > MAX_CHUNK_FILES)
			return parload__fail_path(b->err, PARLOAD_ENOTSUP, 0,
						  z->meta, "more than %"
						  PRIu64 " chunk files",
						  MAX_CHUNK_FILES);
	}
	do
		rc = one_file(b, idx);
	while (rc == 0 && next_index(idx, g, z->rank));
	return rc;
}

/* ---- the table ---- */

/* What chunks.c is given: the array's geometry (after shape()). */
static void chunks_of(build *b)
{
	b->p = (parload__chunks){
		.t = &b->c->strips,
		.dims = { b->dims[0], b->dims[1], b->dims[2] },
		.chunk = { b->chunk[0], b->chunk[1], b->chunk[2] },
		.views = b->dims[0], .elem = b->z.elem,
		.plain = b->z.nfilters == 0, .file = b->z.meta,
		.name = "array", .err = b->err, .fill = true };
}

static int table(build *b)
{
	parload__container *c = b->c;
	parload__strips *t = &c->strips;
	int rc;

	describe_as(b, &c->desc);
	t->views = b->dims[0];
	t->path = c->paths[0];
	memcpy(t->filter, b->z.filter, sizeof(t->filter));
	t->nfilters = b->z.nfilters;
	memcpy(t->fill, b->z.fill, sizeof(t->fill));
	t->fill_size = b->z.elem;
	if (b->z.nangles == b->dims[0]) {
		t->angles = b->z.angles;
		b->z.angles = NULL;
	}
	b->p.paths = c->paths;
	rc = parload__chunks_finish(&b->p);
	if (rc == 1)
		rc = parload__fail_path(b->err, PARLOAD_ENOTSUP, 0, c->paths[0],
					"chunks of %" PRIu64 " x %" PRIu64
					" x %" PRIu64 " elements are not read "
					"(a worker holds at most 1 GiB of a "
					"decoded chunk's frames)", b->chunk[0],
					b->chunk[1], b->chunk[2]);
	return rc;
}

/* ---- the row ---- */

static int zarr_describe(const parload_source *src, parload__described *out,
			 parload_error *err)
{
	build b = { .c = &out->got, .err = err };
	uint32_t meta;
	int rc;

	out->strips = true;
	rc = parload__zarr_open(src, &b.z, err);
	if (rc == 0)
		rc = shape(&b);
	if (rc == 0) {
		chunks_of(&b);
		rc = add_path(&b, parload__sys_strdup(b.z.meta), &meta);
	}
	if (rc == 0)
		rc = walk(&b);
	if (rc == 0)
		rc = table(&b);
	else
		parload__sys_free(b.p.got);
	parload__sys_free(b.index);
	parload__zarr_free(&b.z);
	if (rc)
		parload__container_free(&out->got);
	return rc;
}

static const char *const zarr_exts[] = { ".zarr", NULL };

/* A store is a directory: no first bytes to know it by; driver.c asks
 * parload__zarr_is. */
const parload__driver parload__driver_zarr = {
	.name = "zarr",
	.title = "Zarr",
	.format = PARLOAD_FORMAT_ZARR,
	.exts = zarr_exts,
	.describe = zarr_describe,
	.save = PARLOAD_SAVE_ZARR,
	.write = parload__zarr_write,
	.dir = parload__zarr_is,
	.codecs = (1u << PARLOAD__CODEC_COUNT) - 1,
};
