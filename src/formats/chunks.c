/*
 * chunks.c - a chunked dataset's chunks, as its index gives them
 * (hdf5_index.c's walk, or libhdf5's calls), into the strips table: any
 * chunk shape.  A chunk of cz frames, cy rows and cx columns is tile
 * x = column / cx of strip j = row / cy of each of its frames' views;
 * the table's rows are cy (the last strip of a view may reach past it),
 * its tiles ceil(width / cx).  Chunks stored as they are (no filter) and
 * as wide as a row are read straight into place: each frame's strips at
 * their offsets inside the chunk.  Any other chunk is decoded whole by
 * the worker that needs one of its strips (codec/decode.c), once for all
 * of its frames (depth cz).  The index gives chunks in any order its
 * structure has; they are kept, sorted by their coordinates, and given
 * to the table frame by frame.  A missing chunk (never written) is an
 * entry of the fill value where the format says what it is (Zarr); in
 * HDF5 it, or a chunk that skipped a filter, answers "fall back" (libhdf5
 * reads fill values and runs its pipeline).
 */
#include "formats/formats.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FALL_BACK 1
/* The most bytes of a worker's decoded chunk (depth frames of a strip's
 * rows, whole width): larger chunks go through libhdf5. */
#define MAX_DECODED ((uint64_t)1 << 30)

/* Bytes of a chunk as it decodes (cz * cy * cx elements), UINT64_MAX past
 * 64 bits. */
static uint64_t chunk_bytes(const parload__chunks *p)
{
	uint64_t n = p->elem;

	for (int k = 0; k < 3; k++)
		if (!parload__mul_ok(n, p->chunk[k], &n))
			return UINT64_MAX;
	return n;
}

/* Whether a worker may hold the decoded chunk: depth frames of a strip's
 * rows, whole width (a tile's columns when wider), and the chunk. */
static bool fits(const parload__chunks *p)
{
	const uint64_t cols = p->chunk[2] > p->dims[2] ? p->chunk[2] :
							 p->dims[2];
	uint64_t n = p->elem;

	for (int k = 0; k < 3; k++)
		if (p->chunk[k] == 0 || p->chunk[k] > UINT32_MAX ||
		    p->dims[k] == 0 || (k && p->dims[k] > UINT32_MAX))
			return false;
	return parload__mul_ok(n, cols, &n) &&
	       parload__mul_ok(n, p->chunk[1], &n) &&
	       parload__mul_ok(n, p->chunk[0], &n) && n <= MAX_DECODED &&
	       chunk_bytes(p) <= MAX_DECODED;
}

/* The file chunk ch lies in, for messages. */
static const char *chunk_file(const parload__chunks *p,
			      const parload__chunk *ch)
{
	return p->paths ? p->paths[p->index + ch->file] : p->file;
}

static int at_place(const parload__chunks *p, const parload__chunk *ch)
{
	for (int k = 0; k < 3; k++)
		if (ch->at[k] >= p->dims[k] || ch->at[k] % p->chunk[k])
			return parload__fail_path(p->err, PARLOAD_ECONTAINER,
						  0, chunk_file(p, ch), "%s: chunk %"
						  PRIu64 " at an impossible "
						  "place (%" PRIu64 ", %"
						  PRIu64 ", %" PRIu64 ")",
						  p->name, p->seen, ch->at[0],
						  ch->at[1], ch->at[2]);
	return 0;
}

/* Some bytes, a plain chunk's exactly its elements'. */
static int stored_ok(const parload__chunks *p, const parload__chunk *ch)
{
	const uint64_t want = chunk_bytes(p);

	if (ch->bytes == 0 || (p->plain && ch->bytes != want))
		return parload__fail(p->err, PARLOAD_ECONTAINER, 0,
				     chunk_file(p, ch), PARLOAD_NONE, ch->addr,
				     "%s: chunk %"
				     PRIu64 " at (%" PRIu64 ", %" PRIu64 ", %"
				     PRIu64 "): recorded size %" PRIu64
				     "%s%" PRIu64, p->name, p->seen,
				     ch->at[0], ch->at[1], ch->at[2],
				     ch->bytes,
				     p->plain ? ", expected " : ", expected > ",
				     p->plain ? want : 0);
	return 0;
}

int parload__chunks_put(void *ctx, const parload__chunk *ch)
{
	parload__chunks *p = ctx;
	int rc;

	if ((rc = at_place(p, ch)) != 0 || (rc = stored_ok(p, ch)) != 0)
		return rc;
	if (p->seen == p->cap) {
		const uint64_t cap = p->cap ? 2 * p->cap : 256;
		parload__chunk *g;

		if (cap > SIZE_MAX / sizeof(*g) ||
		    !(g = parload__sys_malloc((size_t)cap * sizeof(*g))))
			return parload__fail_nomem(p->err, p->file);
		if (p->seen)
			memcpy(g, p->got, (size_t)p->seen * sizeof(*g));
		parload__sys_free(p->got);
		p->got = g;
		p->cap = cap;
	}
	p->got[p->seen++] = *ch;
	/* A plain dataset's chunk has no filter to skip. */
	p->masked |= p->plain && ch->mask != 0;
	return 0;
}

void parload__chunks_reset(parload__chunks *p)
{
	p->seen = 0;
	p->masked = false;
}

static int cmp_at(const parload__chunk *a, const parload__chunk *b)
{
	for (int k = 0; k < 3; k++)
		if (a->at[k] != b->at[k])
			return a->at[k] < b->at[k] ? -1 : 1;
	return 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	return cmp_at(a, b);
}

/* The chunks in the order of their coordinates, each once. */
static int sort_chunks(parload__chunks *p)
{
	bool sorted = true;

	for (uint64_t k = 1; sorted && k < p->seen; k++)
		sorted = cmp_at(&p->got[k - 1], &p->got[k]) < 0;
	if (!sorted)
		qsort(p->got, (size_t)p->seen, sizeof(*p->got), cmp_chunk);
	for (uint64_t k = 1; k < p->seen; k++)
		if (cmp_at(&p->got[k - 1], &p->got[k]) == 0)
			return parload__fail(p->err, PARLOAD_ECONTAINER, 0,
					     chunk_file(p, &p->got[k]),
					     PARLOAD_NONE, p->got[k].addr,
					     "%s: a second "
					     "chunk at (%" PRIu64 ", %" PRIu64
					     ", %" PRIu64 ")", p->name,
					     p->got[k].at[0], p->got[k].at[1],
					     p->got[k].at[2]);
	return 0;
}

/* Whether the index gave every chunk of the grid. */
static bool complete(const parload__chunks *p)
{
	uint64_t n = 1;

	for (int k = 0; k < 3; k++)
		n *= (p->dims[k] + p->chunk[k] - 1) / p->chunk[k];
	return p->seen == n;
}

/* The table's geometry from the chunk shape: a plain chunk as wide as a
 * row is read a frame at a time, unless a chunk is missing (the fill
 * value is decoded). */
static void geometry(const parload__chunks *p, parload__strips *t)
{
	const uint64_t cx = p->chunk[2];

	t->rows = (uint32_t)p->chunk[1];
	t->per_view = parload__strips_per_view((uint32_t)p->dims[1], t->rows);
	t->tile_cols = cx == p->dims[2] ? 0 : (uint32_t)cx;
	t->tiles = (uint32_t)((p->dims[2] + cx - 1) / cx);
	t->depth = p->plain && !t->tile_cols && complete(p) ?
			   1 :
			   (uint32_t)p->chunk[0];
}

/* Entry e, of frame f (z of its chunk), from chunk c: its bytes, or a
 * frame's inside a plain chunk. */
static int add_chunk(parload__chunks *p, uint64_t e, uint64_t f, uint64_t z,
		     const parload__chunk *c)
{
	parload__strips *t = p->t;
	const uint64_t row = p->dims[2] * p->elem;
	parload__strip s = { .file = p->index + (c ? c->file : 0),
			     .page = (uint32_t)f,
			     .mask = c ? c->mask : PARLOAD__STRIP_FILL };
	int rc;

	if (c) {
		s.off = c->addr;
		s.bytes = c->bytes;
	} else {
		/* A chunk never written reads nothing: its offset is its
		 * place in the grid, which tells it from every other chunk
		 * (decode.c keeps a chunk by its file and offset) and is the
		 * same for each of its frames. */
		s.off = ((f - z) / p->chunk[0] * t->per_view +
			 e / parload__strips_tiles(t) % t->per_view) *
				parload__strips_tiles(t) +
			e % parload__strips_tiles(t);
	}
	if (c && parload__strips_plain(t) && complete(p)) {
		s.off += z * t->rows * row;
		s.bytes = t->rows * row;
	}
	rc = parload__strips_add(t, e, &s);
	if (rc)
		return rc < 0 ? parload__fail_nomem(p->err, p->file) : FALL_BACK;
	return 0;
}

/* Frame f's entries (view v of this dataset), from the chunks of its
 * frames, which start at got[k]: 0, FALL_BACK for one missing (without
 * fill), or a code. */
static int frame_entries(parload__chunks *p, uint64_t f, uint64_t v,
			 uint64_t k)
{
	parload__strips *t = p->t;
	const uint64_t tiles = parload__strips_tiles(t), z = f % p->chunk[0];
	const uint64_t z0 = f - z;
	uint64_t e = (p->view0 + v) * t->per_view * tiles;
	int rc = 0;

	for (uint64_t j = 0; rc == 0 && j < t->per_view; j++)
		for (uint64_t x = 0; rc == 0 && x < tiles; x++, e++) {
			const parload__chunk *c = k < p->seen ? &p->got[k] :
								  NULL;

			if (!c || c->at[0] != z0 || c->at[1] != j * t->rows ||
			    c->at[2] != x * p->chunk[2])
				c = NULL;
			else
				k++;
			rc = c || p->fill ? add_chunk(p, e, f, z, c) :
					    FALL_BACK;
		}
	return rc;
}

/* Every loaded frame's entries, frame by frame. */
static int entries(parload__chunks *p)
{
	uint64_t k = 0;
	int rc = 0;

	for (uint64_t f = 0; rc == 0 && f < p->dims[0]; f++) {
		const uint64_t v = p->view ? p->view[f] : f;
		const uint64_t z0 = f - f % p->chunk[0];

		while (k < p->seen && p->got[k].at[0] < z0)
			k++;
		if (v != UINT64_MAX)
			rc = frame_entries(p, f, v, k);
	}
	return rc;
}

int parload__chunks_finish(parload__chunks *p)
{
	int rc = p->masked || !fits(p) ? FALL_BACK : 0;

	if (rc == 0)
		rc = sort_chunks(p);
	if (rc == 0) {
		geometry(p, p->t);
		rc = entries(p);
	}
	parload__sys_free(p->got);
	p->got = NULL;
	p->seen = p->cap = 0;
	return rc;
}
