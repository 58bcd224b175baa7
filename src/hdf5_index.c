/*
 * hdf5_index.c - a chunked HDF5 dataset's chunk index, read from the file
 * with pread and no libhdf5 (which makes one call per chunk, each walking
 * the index again).  From the superblock (versions 0-3: its base address,
 * sizes of offsets and lengths) and the dataset's object header (versions
 * 1 and 2, with continuation blocks) to the data layout message (version
 * 3, chunked) and its version 1 B-tree, whose leaves hold each chunk's
 * coordinates, stored size, filter mask and address.  Every read is
 * bounded by the file; anything else (other versions, other index types,
 * loops, counts past the dataset's chunks) makes it answer "fall back",
 * and hdf5.c asks libhdf5 instead.
 */
#include "internal.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FALL_BACK 1
#define MAX_LEVELS 64
#define MAX_BLOCKS 64              /* object header blocks */
#define MAX_BLOCK ((size_t)1 << 24) /* bytes of one */

typedef struct h5in {
	int fd;
	const parload__h5where *w;
	uint64_t size;     /* the file's bytes */
	uint64_t base;     /* where address 0 is */
	unsigned so, sl;
	uint64_t btree;    /* the B-tree's address */
	uint64_t most;     /* chunks the dataset can have */
	uint64_t nodes;    /* B-tree nodes left to visit */
	parload__h5index *out;
	uint64_t cap;
} h5in;

static uint64_t le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned k = n; k > 0; k--)
		v = v << 8 | p[k - 1];
	return v;
}

/* The undefined address (all bits set) of so bytes. */
static bool undefined(uint64_t a, unsigned so)
{
	return a == (so == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * so)) - 1);
}

/* n bytes at absolute offset at; false unless they are all in the file. */
static bool get_abs(const h5in *in, uint64_t at, size_t n, unsigned char *buf)
{
	size_t done = 0;

	if (at > in->size || n > in->size - at)
		return false;
	while (done < n) {
		const ssize_t got = parload__sys_pread(in->fd, buf + done,
						       n - done,
						       (off_t)(at + done));

		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

/* n bytes at address a (relative to the base). */
static bool get(const h5in *in, uint64_t a, size_t n, unsigned char *buf)
{
	return a <= in->size - in->base && get_abs(in, in->base + a, n, buf);
}

/* The superblock at w->super: its signature, version, sizes, base. */
static bool superblock(h5in *in)
{
	static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n',
					      0x1a, '\n' };
	unsigned char b[40];
	unsigned at;

	if (!get_abs(in, in->w->super, sizeof(b), b) || memcmp(b, sig, 8))
		return false;
	if (b[8] <= 1) {
		in->so = b[13];
		in->sl = b[14];
		at = b[8] ? 28 : 24;
	} else if (b[8] <= 3) {
		in->so = b[9];
		in->sl = b[10];
		at = 12;
	} else {
		return false;
	}
	if ((in->so != 2 && in->so != 4 && in->so != 8) ||
	    (in->sl != 2 && in->sl != 4 && in->sl != 8) ||
	    in->so != in->w->so || in->sl != in->w->sl)
		return false;
	in->base = le(b + at, in->so);
	return in->base == in->w->super;
}

/* ---- the object header: its blocks of messages ---- */

typedef struct block {
	uint64_t addr, len;
} block;

typedef struct ohdr {
	int version;
	block todo[MAX_BLOCKS];
	unsigned n, next;
	bool found;
} ohdr;

/* The data layout message (version 3, chunked): the B-tree's address and
 * the chunk's shape, which must be the dataset's. */
static bool layout(h5in *in, const unsigned char *m, size_t len)
{
	const parload__h5where *w = in->w;
	const unsigned dims = (unsigned)w->rank + 1;

	if (len < 3 || m[0] != 3 || m[1] != 2 || m[2] != dims ||
	    len < 3 + in->so + 4 * (size_t)dims)
		return false;
	in->btree = le(m + 3, in->so);
	for (unsigned k = 0; k < dims; k++) {
		const uint64_t want = k < dims - 1 ? w->chunk[k] : w->elem;

		if (le(m + 3 + in->so + 4 * k, 4) != want)
			return false;
	}
	return true;
}

/* One message: the layout, or a continuation to queue. */
static bool message(h5in *in, ohdr *h, unsigned type,
		    const unsigned char *m, size_t len)
{
	if (type == 0x0008) {
		h->found = true;
		return layout(in, m, len);
	}
	if (type != 0x0010)
		return true;
	if (len < in->so + in->sl || h->n == MAX_BLOCKS)
		return false;
	h->todo[h->n++] = (block){ le(m, in->so), le(m + in->so, in->sl) };
	return true;
}

/* The messages of a block's bytes b (len of them). */
static bool messages(h5in *in, ohdr *h, const unsigned char *b, size_t len)
{
	size_t at = 0;

	while (!h->found) {
		const size_t head = h->version == 1 ? 8 :
				    4 + (at + 4 <= len && (b[at + 3] & 4) ?
						 2 : 0);
		unsigned type;
		size_t size;

		if (len - at < head)
			return true; /* v2: a gap shorter than a message */
		type = h->version == 1 ? (unsigned)le(b + at, 2) : b[at];
		size = (size_t)le(b + at + (h->version == 1 ? 2 : 1), 2);
		if (size > len - at - head)
			return false;
		if (!message(in, h, type, b + at + head, size))
			return false;
		at += head + size;
	}
	return true;
}

/* A block: its bytes, then its messages (v2: past "OCHK", before the
 * checksum). */
static bool one_block(h5in *in, ohdr *h, block bl, bool first)
{
	unsigned char *b;
	size_t skip = 0, keep;
	bool ok;

	if (bl.len > MAX_BLOCK || bl.len < 8 || undefined(bl.addr, in->so))
		return false;
	if (!(b = parload__sys_malloc(bl.len)))
		return false;
	ok = get(in, bl.addr, bl.len, b);
	if (ok && h->version == 2 && !first) {
		ok = memcmp(b, "OCHK", 4) == 0;
		skip = 4;
	}
	keep = (size_t)bl.len - skip - (h->version == 2 ? 4 : 0);
	ok = ok && messages(in, h, b + skip, keep);
	parload__sys_free(b);
	return ok;
}

/* The prefix at the header's address: chunk 0 (its messages' place). */
static bool prefix(h5in *in, ohdr *h, block *first)
{
	const uint64_t a = in->w->header;
	unsigned char p[40];
	size_t n = 6;
	unsigned width;

	memset(p, 0, sizeof(p));
	if (!get(in, a, 16, p))
		return false;
	if (p[0] == 1) {
		h->version = 1;
		*first = (block){ a + 16, le(p + 8, 4) };
		return true;
	}
	if (memcmp(p, "OHDR", 4) || p[4] != 2)
		return false;
	h->version = 2;
	n += (p[5] & 0x20 ? 16 : 0) + (p[5] & 0x10 ? 4 : 0);
	width = 1u << (p[5] & 3);
	if (!get(in, a, n + width, p))
		return false;
	/* Chunk 0's messages, and its checksum after them. */
	*first = (block){ a + n + width, le(p + n, width) + 4 };
	return first->len >= 4;
}

/* The data layout message, wherever the header's blocks hold it. */
static bool find_layout(h5in *in)
{
	ohdr h = { 0 };
	block first;

	if (!prefix(in, &h, &first))
		return false;
	if (!one_block(in, &h, first, true))
		return false;
	while (!h.found && h.next < h.n)
		if (!one_block(in, &h, h.todo[h.next++], false))
			return false;
	return h.found;
}

/* ---- the B-tree ---- */

static size_t key_size(const h5in *in)
{
	return 8 + 8 * ((size_t)in->w->rank + 1);
}

/* A leaf's entry k: a chunk, checked against the dataset's shape. */
static bool chunk(h5in *in, const unsigned char *key, uint64_t addr)
{
	const parload__h5where *w = in->w;
	parload__h5chunk c = { .bytes = le(key, 4),
			       .mask = (uint32_t)le(key + 4, 4) };
	parload__h5index *o = in->out;

	for (int k = 0; k <= w->rank; k++) {
		const uint64_t x = le(key + 8 + 8 * k, 8);

		if (k == w->rank ? x != 0 : x >= w->dims[k] || x % w->chunk[k])
			return false;
		if (k < w->rank)
			c.at[3 - w->rank + k] = x;
	}
	if (c.bytes == 0 || undefined(addr, in->so) ||
	    addr > in->size - in->base ||
	    c.bytes > in->size - in->base - addr || o->n == in->most)
		return false;
	c.addr = in->base + addr;
	if (o->n == in->cap) {
		const uint64_t cap = in->cap ? 2 * in->cap : 64;
		parload__h5chunk *p = parload__sys_malloc(cap * sizeof(*p));

		if (!p)
			return false;
		if (o->n)
			memcpy(p, o->c, o->n * sizeof(*p));
		parload__sys_free(o->c);
		o->c = p;
		in->cap = cap;
	}
	o->c[o->n++] = c;
	return true;
}

static bool node(h5in *in, uint64_t addr, int level);

/* The entries of a node read into b: chunks, or the nodes below. */
static bool entries(h5in *in, const unsigned char *b, unsigned used,
		    int level)
{
	const size_t ks = key_size(in), step = ks + in->so;
	const size_t at = 8 + 2 * (size_t)in->so;

	for (unsigned k = 0; k < used; k++) {
		const unsigned char *key = b + at + k * step;
		const uint64_t child = le(key + ks, in->so);

		if (level == 0 ? !chunk(in, key, child) :
				 !node(in, child, level - 1))
			return false;
	}
	return true;
}

/* The node at addr, of the level its parent expects (-1: the root). */
static bool node(h5in *in, uint64_t addr, int level)
{
	const uint64_t k2 = 2 * (uint64_t)in->w->istore_k;
	const size_t size = 8 + 2 * (size_t)in->so +
			    (size_t)(k2 + 1) * key_size(in) +
			    (size_t)k2 * in->so;
	unsigned char *b;
	unsigned used;
	bool ok;

	if (undefined(addr, in->so) || in->nodes == 0)
		return false;
	in->nodes--;
	if (!(b = parload__sys_malloc(size)))
		return false;
	ok = get(in, addr, size, b) && memcmp(b, "TREE", 4) == 0 && b[4] == 1;
	used = ok ? (unsigned)le(b + 6, 2) : 0;
	if (ok && level < 0)
		level = b[5];
	ok = ok && b[5] == level && level < MAX_LEVELS && used <= k2;
	ok = ok && entries(in, b, used, level);
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

static bool walk(h5in *in)
{
	struct stat sb;

	if (in->w->rank < 1 || in->w->rank > 3 || in->w->istore_k == 0 ||
	    in->w->istore_k > 0xffff || !(in->most = most_chunks(in->w)) ||
	    parload__sys_fstat(in->fd, &sb) != 0 || sb.st_size < 0)
		return false;
	in->size = (uint64_t)sb.st_size;
	/* Each node holds an entry at least, or is a root with none. */
	in->nodes = in->most < UINT64_MAX / 2 - MAX_LEVELS ?
			    2 * in->most + MAX_LEVELS :
			    UINT64_MAX;
	if (!superblock(in) || !find_layout(in))
		return false;
	/* No B-tree: no chunk was ever written. */
	return undefined(in->btree, in->so) || node(in, in->btree, -1);
}

int parload__h5index_read(int fd, const parload__h5where *w,
			  parload__h5index *out)
{
	h5in in = { .fd = fd, .w = w, .out = out };

	memset(out, 0, sizeof(*out));
	if (walk(&in))
		return 0;
	parload__h5index_free(out);
	return FALL_BACK;
}

void parload__h5index_free(parload__h5index *x)
{
	parload__sys_free(x->c);
	x->c = NULL;
	x->n = 0;
}
