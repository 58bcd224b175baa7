/*
 * hdf5_index.c - a chunked HDF5 dataset's chunk index, read from the file
 * with pread and no libhdf5 (which makes one call per chunk, each walking
 * the index again).  From the superblock (versions 0-3: its base address,
 * sizes of offsets and lengths) and the dataset's object header (versions
 * 1 and 2, with continuation blocks) to the data layout message (version
 * 3, chunked; version 4's indexes are hdf5_index4.c's, which needs the
 * dataspace's maximum and whether there are filters, from the same
 * header) and its version 1 B-tree, whose leaves hold each chunk's
 * coordinates, stored size, filter mask and address, each given to the
 * caller's put as the walk meets it (hdf5.c adds it to the strips table,
 * whose runs it joins: no table of chunks between, and no 24 bytes a
 * chunk).  Every read is
 * bounded by the file; anything else (other versions, loops, counts past
 * the dataset's chunks) makes it answer "fall back",
 * and hdf5.c asks libhdf5 instead.  The reads, the superblock and the
 * object header's walk are shared with hdf5_native.c (internal.h).
 */
#include "formats/formats.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FALL_BACK 1
#define MAX_LEVELS 64
#define MAX_BLOCKS 64              /* object header blocks */
#define MAX_BLOCK ((size_t)1 << 24) /* bytes of one */

typedef struct h5in {
	parload__h5file f;
	const parload__h5where *w;
	uint64_t btree;    /* the B-tree's address */
	bool found;        /* the layout message */
	bool v4;           /* of version 4: l4 (hdf5_index4.c) */
	parload__h5layout4 l4;
	bool space;        /* the dataspace message read: maxdims */
	unsigned spaces;   /* dataspace messages met */
	uint64_t maxdims[3];
	bool filtered;     /* a filter pipeline message */
	uint64_t most;     /* chunks the dataset can have */
	uint64_t got;      /* chunks given to put */
	uint64_t nodes;    /* B-tree nodes left to visit */
	parload__h5put put;
	void *ctx;
	const char *file, *name; /* in failures */
	parload_error *err;
	int rc;            /* put's failure or a corrupt key's, which ends
			    * the walk */
} h5in;

/* ---- what hdf5_native.c shares: reads, the superblock, headers ---- */

bool parload__h5_undefined(uint64_t a, unsigned so)
{
	return a == (so == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * so)) - 1);
}

bool parload__h5_get_abs(const parload__h5file *f, uint64_t at, size_t n,
			 void *buf)
{
	unsigned char *b = buf;
	size_t done = 0;

	if (at > f->size || n > f->size - at)
		return false;
	while (done < n) {
		const ssize_t got = parload__sys_pread(f->fd, b + done,
						       n - done,
						       (off_t)(at + done));

		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

/* Bob Jenkins' lookup3 hash of n bytes (hashlittle, initial value 0):
 * the checksum of HDF5's version 2 metadata.  Its sums are taken modulo
 * 2^32 in 64 bits, the fuzzers' unsigned overflow check being on. */
static uint32_t add32(uint32_t a, uint32_t b)
{
	return (uint32_t)((uint64_t)a + b);
}

static uint32_t sub32(uint32_t a, uint32_t b)
{
	return (uint32_t)((uint64_t)a + ((uint64_t)1 << 32) - b);
}

static uint32_t rot32(uint32_t x, unsigned k)
{
	return x << k | x >> (32 - k);
}

static void mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*a = sub32(*a, *c), *a ^= rot32(*c, 4), *c = add32(*c, *b);
	*b = sub32(*b, *a), *b ^= rot32(*a, 6), *a = add32(*a, *c);
	*c = sub32(*c, *b), *c ^= rot32(*b, 8), *b = add32(*b, *a);
	*a = sub32(*a, *c), *a ^= rot32(*c, 16), *c = add32(*c, *b);
	*b = sub32(*b, *a), *b ^= rot32(*a, 19), *a = add32(*a, *c);
	*c = sub32(*c, *b), *c ^= rot32(*b, 4), *b = add32(*b, *a);
}

static void final(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*c ^= *b, *c = sub32(*c, rot32(*b, 14));
	*a ^= *c, *a = sub32(*a, rot32(*c, 11));
	*b ^= *a, *b = sub32(*b, rot32(*a, 25));
	*c ^= *b, *c = sub32(*c, rot32(*b, 16));
	*a ^= *c, *a = sub32(*a, rot32(*c, 4));
	*b ^= *a, *b = sub32(*b, rot32(*a, 14));
	*c ^= *b, *c = sub32(*c, rot32(*b, 24));
}

static uint32_t lookup3(const unsigned char *k, size_t n)
{
	uint32_t v[3];

	v[0] = v[1] = v[2] = add32(0xdeadbeef, (uint32_t)n);
	for (; n > 12; n -= 12, k += 12) {
		for (int w = 0; w < 3; w++)
			v[w] = add32(v[w], (uint32_t)parload__h5_le(k + 4 * w, 4));
		mix(&v[0], &v[1], &v[2]);
	}
	if (n == 0)
		return v[2];
	for (size_t i = 0; i < n; i++)
		v[i / 4] = add32(v[i / 4], (uint32_t)k[i] << (8 * (i % 4)));
	final(&v[0], &v[1], &v[2]);
	return v[2];
}

uint32_t parload__h5_checksum(const unsigned char *b, size_t n)
{
	return lookup3(b, n);
}

bool parload__h5_checksum_ok(const unsigned char *b, size_t n)
{
	return n >= 4 && lookup3(b, n - 4) == parload__h5_le(b + n - 4, 4);
}

bool parload__h5_in_file(const parload__h5file *f, uint64_t a, uint64_t n)
{
	return f->base <= f->size && a <= f->size - f->base &&
	       n <= f->size - f->base - a;
}

bool parload__h5_get(const parload__h5file *f, uint64_t a, size_t n,
		     void *buf)
{
	return parload__h5_in_file(f, a, n) &&
	       parload__h5_get_abs(f, f->base + a, n, buf);
}

void *parload__h5_fetch(const parload__h5file *f, uint64_t a, uint64_t n)
{
	unsigned char *b;

	if (!parload__h5_in_file(f, a, n) || n >= SIZE_MAX ||
	    !(b = parload__sys_malloc((size_t)n + 1)))
		return NULL;
	if (!parload__h5_get(f, a, (size_t)n, b)) {
		parload__sys_free(b);
		return NULL;
	}
	return b;
}

/* The K's of superblock b, version v (f->so set). */
static void superblock_ks(parload__h5file *f, unsigned v,
			  const unsigned char *b)
{
	const unsigned so = f->so;

	/* Version 1 states the chunk B-tree's K, version 0 has the default;
	 * versions 2 and 3 have it unless their extension says otherwise. */
	f->istore_k = v == 1 ? (uint32_t)parload__h5_le(b + 24, 2) :
		      v == 0 || parload__h5_undefined(
					parload__h5_le(b + 12 + so, so), so) ?
				     32u :
				     0u;
	/* Symbol table nodes hold 2K entries, group B-tree nodes 2K
	 * children: the superblock's K's, or the defaults (4, 16) unless an
	 * extension says otherwise. */
	f->sym_k = v <= 1 ? (uint32_t)parload__h5_le(b + 16, 2) :
		   f->istore_k ? 4u : 0u;
	f->group_k = v <= 1 ? (uint32_t)parload__h5_le(b + 18, 2) :
		     f->istore_k ? 16u : 0u;
}

int parload__h5_superblock(parload__h5file *f, uint64_t at)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n',
					      0x1a, '\n' };
	unsigned char b[96];
	unsigned v, fields, so;
	uint64_t eof;

	if (!parload__h5_get_abs(f, at, 16, b) || memcmp(b, sig, 8))
		return 0;
	v = b[8];
	if (v > 3)
		return -1;
	f->so = v <= 1 ? b[13] : b[9];
	f->sl = v <= 1 ? b[14] : b[10];
	so = f->so;
	if ((f->so != 2 && f->so != 4 && f->so != 8) ||
	    (f->sl != 2 && f->sl != 4 && f->sl != 8))
		return -1;
	/* Versions 0 and 1: the versions of the free space, the root's
	 * symbol table entry and shared headers (0), the symbol table
	 * nodes' K and the group B-trees' (not 0); base, free space, end of
	 * file, driver, then the root's symbol table entry (its name's
	 * offset, its header, its cache type); versions 2 and 3: base,
	 * extension, end of file, the root's header, the checksum. */
	fields = v == 0 ? 24 : v == 1 ? 28 : 12;
	if (!parload__h5_get_abs(f, at, fields + (v <= 1 ? 6u : 4u) * so + 4,
				 b))
		return -1;
	if (v <= 1 && (b[9] || b[10] || b[12] || !parload__h5_le(b + 16, 2) ||
		       !parload__h5_le(b + 18, 2) ||
		       (v == 1 && !parload__h5_le(b + 24, 2)) ||
		       !parload__h5_undefined(
			       parload__h5_le(b + fields + 3 * so, so), so) ||
		       parload__h5_le(b + fields + 6 * so, 4) > 2))
		return -1;
	if (v >= 2 && !parload__h5_checksum_ok(b, fields + 4 * so + 4))
		return -1;
	f->base = parload__h5_le(b + fields, so);
	f->root = parload__h5_le(b + fields + (v <= 1 ? 5u : 3u) * so, so);
	/* The end of file (its offset, user block included) where libhdf5
	 * ends what it reads: a file shorter than that is truncated (libhdf5
	 * refuses it), one longer is read up to it. */
	eof = parload__h5_le(b + fields + 2 * so, so);
	if (eof > f->size || eof < at ||
	    eof - at < fields + (v <= 1 ? 6u * so + 24 : 4u * so + 4))
		return -1;
	f->size = eof;
	superblock_ks(f, v, b);
	return 1;
}

/* The superblock at w->super: its sizes libhdf5's, its base there. */
static bool superblock(h5in *in)
{
	return parload__h5_superblock(&in->f, in->w->super) == 1 &&
	       in->f.so == in->w->so && in->f.sl == in->w->sl &&
	       in->f.base == in->w->super;
}

typedef struct block {
	uint64_t addr, len;
} block;

/* An object header being walked: its blocks, the caller's function. */
typedef struct ohdr {
	const parload__h5file *f;
	parload__h5msg_fn fn;
	void *ctx;
	int version;
	unsigned flags;    /* v2: the header's flags */
	size_t prefix;     /* v2: the prefix's bytes, before chunk 0's
			    * messages (chunk 0 is read with it, which its
			    * checksum covers) */
	block todo[MAX_BLOCKS];
	unsigned n, next;
	bool stop;
} ohdr;

/* A message's flags as libhdf5 checks them when it loads the header:
 * shared and not to be shared, "was unknown" without "mark if unknown"
 * or with "fail if unknown and open for writing", shareable for a class
 * that cannot be shared (all but dataspace, datatype, fill values, filter
 * pipeline and attribute), "fail if unknown" on a type it does not know
 * (past 0x18). */
static bool flags_ok(unsigned type, unsigned flags)
{
	const bool shareable = type == 0x01 || type == 0x03 || type == 0x04 ||
			       type == 0x05 || type == 0x0b || type == 0x0c;

	return (flags & 0x06) != 0x06 && (flags & 0x28) != 0x28 &&
	       (flags & 0x30) != 0x20 && (shareable || !(flags & 0x40)) &&
	       (type <= 0x18 || !(flags & 0x80));
}

/* A continuation message: the block it names (address, length) queued
 * to read after this one. */
static bool continuation(ohdr *h, const unsigned char *m, size_t len)
{
	const unsigned so = h->f->so, sl = h->f->sl;

	if (len < so + sl || h->n == MAX_BLOCKS)
		return false;
	h->todo[h->n++] = (block){ parload__h5_le(m, so),
				   parload__h5_le(m + so, sl) };
	return true;
}

/* One message: a continuation to queue, else the caller's. */
static bool message(ohdr *h, unsigned type, unsigned flags,
		    const unsigned char *m, size_t len)
{
	int rc;

	if (!flags_ok(type, flags))
		return false;
	if (type == 0x0010)
		return continuation(h, m, len);
	if (h->stop)
		return true;
	rc = h->fn(h->ctx, type, flags, m, len);
	h->stop = rc > 0;
	return rc >= 0;
}

/* The messages of a block's bytes b (len of them).  A version 2
 * message's creation order is there when the header tracks it. */
static bool messages(ohdr *h, const unsigned char *b, size_t len)
{
	const bool v1 = h->version == 1;
	const size_t head = v1 ? 8 : 4 + (h->flags & 4 ? 2 : 0);
	size_t at = 0;

	for (;;) {
		unsigned type;
		size_t size;

		if (len - at < head)
			return true; /* v2: a gap shorter than a message */
		type = v1 ? (unsigned)parload__h5_le(b + at, 2) : b[at];
		size = (size_t)parload__h5_le(b + at + (v1 ? 2 : 1), 2);
		/* libhdf5: "corrupt object header", "message not aligned". */
		if (size > len - at - head || (v1 && size % 8))
			return false;
		if (!message(h, type, b[at + (v1 ? 4 : 3)], b + at + head,
			     size))
			return false;
		at += head + size;
	}
	return true;
}

/* A block: its bytes, then its messages (v2: past "OCHK", before the
 * checksum). */
static bool one_block(ohdr *h, block bl, bool first)
{
	unsigned char *b;
	size_t skip = 0, keep;
	bool ok;

	if (bl.len > MAX_BLOCK || bl.len < 8 ||
	    parload__h5_undefined(bl.addr, h->f->so) ||
	    !(b = parload__h5_fetch(h->f, bl.addr, bl.len)))
		return false;
	ok = true;
	/* Version 2: the prefix or "OCHK" first, the checksum of all the
	 * block's bytes last, as libhdf5 checks it. */
	if (ok && h->version == 2) {
		ok = first || memcmp(b, "OCHK", 4) == 0;
		skip = first ? h->prefix : 4;
		ok = ok && skip + 4 <= bl.len &&
		     parload__h5_checksum_ok(b, (size_t)bl.len);
	}
	keep = (size_t)bl.len - skip - (h->version == 2 ? 4 : 0);
	ok = ok && messages(h, b + skip, keep);
	parload__sys_free(b);
	return ok;
}

/* The prefix at the header's address a: chunk 0 (its messages' place). */
static bool prefix(ohdr *h, uint64_t a, block *first)
{
	unsigned char p[40];
	size_t n = 6;
	unsigned width;
	uint64_t size;

	memset(p, 0, sizeof(p));
	if (parload__h5_undefined(a, h->f->so) ||
	    !parload__h5_get(h->f, a, 16, p))
		return false;
	if (p[0] == 1) {
		/* Messages, then chunk 0's bytes: none without any, and
		 * room for one with some ("bad object header chunk size"). */
		const uint64_t count = parload__h5_le(p + 2, 2);

		h->version = 1;
		*first = (block){ a + 16, parload__h5_le(p + 8, 4) };
		return count == 0 ? first->len == 0 : first->len >= 8;
	}
	/* Flags libhdf5 knows (bits 0-5). */
	if (memcmp(p, "OHDR", 4) || p[4] != 2 || p[5] & 0xc0)
		return false;
	h->version = 2;
	h->flags = p[5];
	n += (p[5] & 0x20 ? 16 : 0) + (p[5] & 0x10 ? 4 : 0);
	width = 1u << (p[5] & 3);
	if (!parload__h5_get(h->f, a, n + width, p))
		return false;
	/* The prefix, chunk 0's messages, and its checksum after them. */
	h->prefix = n + width;
	size = parload__h5_le(p + n, width);
	if (size > MAX_BLOCK)
		return false;
	*first = (block){ a, n + width + size + 4 };
	return first->len >= h->prefix + 4;
}

bool parload__h5_header(const parload__h5file *f, uint64_t addr,
			parload__h5msg_fn fn, void *ctx)
{
	ohdr h = { .f = f, .fn = fn, .ctx = ctx };
	block first;

	if (!prefix(&h, addr, &first) || !one_block(&h, first, true))
		return false;
	while (h.next < h.n)
		if (!one_block(&h, h.todo[h.next++], false))
			return false;
	return true;
}

/* ---- the chunk index ---- */

/* The chunk's shape at s (dims sizes of 4 bytes, the element's last) is
 * the dataset's. */
static bool same_chunk(const parload__h5where *w, const unsigned char *s,
		       unsigned dims)
{
	for (unsigned k = 0; k < dims; k++) {
		const uint64_t want = k < dims - 1 ? w->chunk[k] : w->elem;

		if (parload__h5_le(s + 4 * k, 4) != want)
			return false;
	}
	return true;
}

/* The data layout message, chunked: version 3 (a version 1 B-tree: its
 * address, the chunk's shape, which must be the dataset's), or version
 * 4 (hdf5_index4.c reads it). */
static bool layout(h5in *in, const unsigned char *m, size_t len)
{
	const parload__h5where *w = in->w;
	const unsigned dims = (unsigned)w->rank + 1, so = in->f.so;

	if (len >= 1 && m[0] == 4) {
		in->v4 = true;
		return parload__h5_layout4(m, len, so, in->f.sl, &in->l4);
	}
	if (len < 3 || m[0] != 3 || m[1] != 2 || m[2] != dims ||
	    len < 3 + so + 4 * (size_t)dims)
		return false;
	in->btree = parload__h5_le(m + 3, so);
	return same_chunk(w, m + 3 + so, dims);
}

/* The dataspace message (versions 1 and 2, simple): the dataset's
 * shape, and its maximum (UINT64_MAX: unlimited), which the indexes of
 * a version 4 layout need. */
static bool dataspace(h5in *in, const unsigned char *m, size_t len)
{
	const parload__h5where *w = in->w;
	const unsigned sl = in->f.sl;
	const size_t at = len && m[0] == 1 ? 8 : 4;

	if (len < 4 || (m[0] != 1 && m[0] != 2) || m[1] != w->rank ||
	    len < at + (m[2] & 1 ? 2u : 1u) * (size_t)w->rank * sl)
		return false;
	for (int k = 0; k < w->rank; k++) {
		const uint64_t max = m[2] & 1 ?
			parload__h5_le(m + at + (w->rank + k) * sl, sl) :
			w->dims[k];

		if (parload__h5_le(m + at + k * sl, sl) != w->dims[k])
			return false;
		in->maxdims[k] = parload__h5_undefined(max, sl) ? UINT64_MAX :
								  max;
	}
	return true;
}

/* The messages the walk needs: dataspace, filter pipeline, layout (the
 * header is read whole in any case). */
static int layout_message(void *ctx, unsigned type, unsigned flags,
			  const unsigned char *m, size_t len)
{
	h5in *in = ctx;

	/* A dataspace the walk does not read (shared, or a second) leaves
	 * the version 4 indexes to libhdf5. */
	if (type == 0x0001) {
		in->space = !in->spaces++ && !(flags & 0x02) &&
			    dataspace(in, m, len);
		return 0;
	}
	in->filtered |= type == 0x000b;
	if (type != 0x0008)
		return 0;
	if (in->found)
		return -1;
	in->found = true;
	return layout(in, m, len) ? 0 : -1;
}

static size_t key_size(const h5in *in)
{
	return 8 + 8 * ((size_t)in->w->rank + 1);
}

/* A key whose coordinate k (of rank + 1) is x, which is not a chunk's
 * of the dataset: a corrupt index (PARLOAD_ECONTAINER naming the key's
 * byte offset), not "fall back": libhdf5 would give such a chunk's place
 * its fill values (a coordinate past the dataset, or an element
 * coordinate not 0) or read it at another (one off the chunk grid), and
 * its own table of chunks has it all the same. */
static bool corrupt_key(h5in *in, uint64_t off, int k, uint64_t x)
{
	const parload__h5where *w = in->w;

	in->rc = parload__fail(in->err, PARLOAD_ECONTAINER, 0, in->file,
			       PARLOAD_NONE, off,
			       "%s: a corrupt chunk index: a key's coordinate "
			       "%d of %d is %" PRIu64 ", %s %" PRIu64 "%s",
			       in->name ? in->name : "the dataset", k + 1,
			       w->rank + 1, x,
			       k == w->rank ? "where the element's is always" :
			       x >= w->dims[k] ? "past the dataset's" :
						 "off the chunk grid of",
			       k == w->rank ? 0 :
			       x >= w->dims[k] ? (uint64_t)w->dims[k] :
						 (uint64_t)w->chunk[k],
			       k == w->rank && x >= w->elem ?
				       " (libhdf5 finds no chunk there and "
				       "reads fill values)" :
				       "");
	return false;
}

/* A leaf's key, at byte offset off of the file, checked against the
 * dataset's shape; then its chunk, to put (whose failure ends the walk
 * with its code). */
static bool key_ok(h5in *in, const unsigned char *key, uint64_t off)
{
	const parload__h5where *w = in->w;

	for (int k = 0; k <= w->rank; k++) {
		const uint64_t x = parload__h5_le(key + 8 + 8 * k, 8);

		/* (Most coordinates are 0, or of a chunk of one frame.) */
		if (k == w->rank ? x != 0 :
				   x >= w->dims[k] ||
					   (x && w->chunk[k] != 1 &&
					    x % w->chunk[k]))
			return corrupt_key(in, off, k, x);
	}
	return true;
}

static bool chunk(h5in *in, const unsigned char *key, uint64_t addr)
{
	const parload__h5where *w = in->w;
	parload__chunk c = { .bytes = parload__h5_le(key, 4),
			       .mask = (uint32_t)parload__h5_le(key + 4, 4) };

	for (int k = 0; k < w->rank; k++)
		c.at[3 - w->rank + k] = parload__h5_le(key + 8 + 8 * k, 8);
	if (c.bytes == 0 || parload__h5_undefined(addr, in->f.so) ||
	    !parload__h5_in_file(&in->f, addr, c.bytes) || in->got == in->most)
		return false;
	c.addr = in->f.base + addr;
	in->got++;
	in->rc = in->put(in->ctx, &c);
	return in->rc == 0;
}

static bool node(h5in *in, uint64_t addr, int level,
		 const unsigned char *lo, const unsigned char *hi);

/* Key a against key b (of rank + 1 coordinates each) as libhdf5 1.10
 * orders them in its lookups (H5D__btree_cmp3): their coordinates
 * scaled by the chunk's shape (the element's by its size), compared in
 * turn; < 0, 0 or > 0. */
static int key_cmp(const h5in *in, const unsigned char *a,
		   const unsigned char *b)
{
	const parload__h5where *w = in->w;

	for (int k = 0; k <= w->rank; k++) {
		const uint64_t d = k < w->rank ? w->chunk[k] : w->elem;
		const uint64_t x = parload__h5_le(a + 8 + 8 * k, 8) / d;
		const uint64_t y = parload__h5_le(b + 8 + 8 * k, 8) / d;

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* The entries of the node at addr read into b: chunks, or the nodes
 * below.  libhdf5 finds a chunk by a binary search over each node's keys
 * (H5B_find): only where they rise strictly, each child's keys within
 * its entry's in the parent (lo and hi, NULL at the root), does it find
 * every chunk the walk meets; anything else falls back (hdf5.c then
 * asks libhdf5 for each chunk listed, and whether its reads find it). */
static bool entries(h5in *in, uint64_t addr, const unsigned char *b,
		    unsigned used, int level, const unsigned char *lo,
		    const unsigned char *hi)
{
	const size_t ks = key_size(in), step = ks + in->f.so;
	const size_t at = 8 + 2 * (size_t)in->f.so;

	for (unsigned k = 0; level == 0 && k < used; k++)
		if (!key_ok(in, b + at + k * step,
			    in->f.base + addr + at + k * step))
			return false;
	if ((lo && key_cmp(in, b + at, lo) < 0) ||
	    (hi && key_cmp(in, b + at + used * step, hi) > 0))
		return false;
	for (unsigned k = 0; k < used; k++)
		if (key_cmp(in, b + at + k * step,
			    b + at + (k + 1) * step) >= 0)
			return false;
	for (unsigned k = 0; k < used; k++) {
		const unsigned char *key = b + at + k * step;
		const uint64_t child = parload__h5_le(key + ks, in->f.so);

		if (level == 0 ? !chunk(in, key, child) :
				 !node(in, child, level - 1, key, key + step))
			return false;
	}
	return true;
}

/* The node at addr, of the level its parent expects (-1: the root),
 * its keys within lo and hi (its entry's in the parent). */
static bool node(h5in *in, uint64_t addr, int level,
		 const unsigned char *lo, const unsigned char *hi)
{
	const uint64_t k2 = 2 * (uint64_t)in->w->istore_k;
	const size_t size = 8 + 2 * (size_t)in->f.so +
			    (size_t)(k2 + 1) * key_size(in) +
			    (size_t)k2 * in->f.so;
	unsigned char *b;
	unsigned used;
	bool ok;

	if (parload__h5_undefined(addr, in->f.so) || in->nodes == 0)
		return false;
	in->nodes--;
	if (!(b = parload__h5_fetch(&in->f, addr, size)))
		return false;
	ok = memcmp(b, "TREE", 4) == 0 && b[4] == 1;
	used = ok ? (unsigned)parload__h5_le(b + 6, 2) : 0;
	if (ok && level < 0)
		level = b[5];
	ok = ok && b[5] == level && level < MAX_LEVELS && used <= k2;
	ok = ok && entries(in, addr, b, used, level, lo, hi);
	parload__sys_free(b);
	return ok;
}

/* Chunks the dataset's shape has room for (0 when past 64 bits). */
static uint64_t most_chunks(const parload__h5where *w)
{
	uint64_t n = 1;

	for (int k = 0; k < w->rank; k++) {
		const uint64_t c = w->chunk[k] ?
					   (w->dims[k] + w->chunk[k] - 1) /
						   w->chunk[k] :
					   0;

		if (!c || n > UINT64_MAX / c)
			return 0;
		n *= c;
	}
	return n;
}

/* The chunks of a version 4 layout (hdf5_index4.c): 0, 1 to fall
 * back, or put's code. */
static int walk4(h5in *in)
{
	parload__h5ix x = { .f = &in->f, .w = in->w, .l = &in->l4,
			    .filtered = in->filtered, .put = in->put,
			    .ctx = in->ctx };

	if (!in->space)
		return FALL_BACK;
	memcpy(x.maxdims, in->maxdims, sizeof(x.maxdims));
	return parload__h5index4_walk(&x);
}

/* The header's layout, then its index: 0, 1 to fall back, or the walk's
 * code (in->rc). */
static int walk(h5in *in)
{
	struct stat sb;

	if (in->w->rank < 1 || in->w->rank > 3 || in->w->elem == 0 ||
	    !(in->most = most_chunks(in->w)) ||
	    parload__sys_fstat(in->f.fd, &sb) != 0 || sb.st_size < 0)
		return FALL_BACK;
	/* Each node holds an entry at least, or is a root with none. */
	in->nodes = in->most < UINT64_MAX / 2 - MAX_LEVELS ?
			    2 * in->most + MAX_LEVELS :
			    UINT64_MAX;
	in->f.size = (uint64_t)sb.st_size;
	if (!superblock(in) ||
	    !parload__h5_header(&in->f, in->w->header, layout_message, in) ||
	    !in->found)
		return FALL_BACK;
	if (in->v4)
		return walk4(in);
	if (in->w->istore_k == 0 || in->w->istore_k > 0xffff)
		return FALL_BACK;
	/* No B-tree: no chunk was ever written. */
	if (parload__h5_undefined(in->btree, in->f.so) ||
	    node(in, in->btree, -1, NULL, NULL))
		return 0;
	return in->rc ? in->rc : FALL_BACK;
}

int parload__h5index_walk(int fd, const parload__h5where *w,
			  parload__h5put put, void *ctx, const char *file,
			  const char *name, parload_error *err)
{
	h5in in = { .f = { .fd = fd }, .w = w, .put = put, .ctx = ctx,
		    .file = file, .name = name, .err = err };

	return walk(&in);
}

