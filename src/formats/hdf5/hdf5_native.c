/*
 * hdf5_native.c - the common HDF5 cases read without libhdf5: a
 * contiguous dataset, or one chunked by whole rows of one frame and
 * stored as it is (no filter), of a plainly written file, whose metadata
 * are a superblock, groups, one object header and, when chunked, the
 * chunk index of any kind (hdf5_index.c and hdf5_index4.c walk it).
 * The superblock (versions 0-3, after a user block of 0, 512, 1024, ...
 * bytes, offsets and lengths of 8 bytes) gives the root group; each name
 * on the dataset's path is a link of its group: a compact Link message
 * (hard links) or an old-style symbol table (a version 1 B-tree of group
 * nodes over symbol table nodes, the names in a local heap).  The dataset's header gives its
 * dataspace, datatype and layout.  The dataset, its frames and angles
 * are hdf5_choose.c's choice, from this reader's answers (a dataset,
 * absent, DXchange's theta; "unsure" for NXtomo, an image_key, the
 * file's 3-D datasets): DXchange's /exchange/data (its flats, darks and
 * theta) and a dataset named with no image_key or rotation_angle beside
 * it; the container is the one hdf5.c would make.  Anything else, or
 * anything inconsistent, answers "fall back", and hdf5.c's reader
 * (libhdf5) runs as before.
 * Every read is bounded by the file, every count and walk by a limit.
 */
#include "formats/hdf5/hdf5_core.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FALL_BACK 1
#define MAX_NAME 1024       /* a dataset's name, as hdf5.c keeps it */
#define MAX_PARTS 64        /* names on a path */
#define MAX_NODES 4096      /* group B-tree nodes of one lookup */
#define MAX_LEVEL 32        /* a group B-tree's levels */
#define MAX_ENTRIES 0xffff  /* entries of one node */
#define MAX_GCOL (1u << 20) /* bytes of a global heap collection read */

/* A lookup's answer: the object, none of that name, or "fall back". */
enum { FOUND, ABSENT, UNSURE };

/* ---- a group's link of one name ---- */

typedef struct h5link {
	const parload__h5file *f;
	const char *name;
	size_t len;
	bool group;         /* a Link Info or Symbol Table message seen */
	bool linfo;         /* Link Info: libhdf5 reads its Link messages,
			     * not a symbol table */
	bool table;         /* old style: btree and heap */
	uint64_t btree, heap;
	uint64_t heap_data, heap_size;
	unsigned nodes;     /* B-tree nodes left to visit */
	bool hit;
	uint64_t addr;      /* the object's header, when hit */
} h5link;

/* A Link message (version 1): the name's hard link stops the walk; a
 * soft or external one fails it. */
static int link_message(h5link *l, const unsigned char *m, size_t len)
{
	size_t at = 2, w, n;

	/* As libhdf5 decodes every one it meets: its flags, link type (hard,
	 * soft, 64 and up), character set (ASCII, UTF-8), a name. */
	if (len < 2 || m[0] != 1 || m[1] & ~0x1fu)
		return -1;
	at += (m[1] & 0x08 ? 1 : 0) + (m[1] & 0x04 ? 8 : 0);
	at += m[1] & 0x10 ? 1 : 0;
	w = (size_t)1 << (m[1] & 3);
	if (at + w > len || (m[1] & 0x08 && m[2] > 1 && m[2] < 64) ||
	    (m[1] & 0x10 && m[at - 1] > 1))
		return -1;
	n = (size_t)parload__h5_le(m + at, (unsigned)w);
	at += w;
	if (n == 0 || n > len - at)
		return -1;
	if (n != l->len || memcmp(m + at, l->name, n) != 0)
		return 0;
	if ((m[1] & 0x08 && m[2] != 0) || len - at - n < l->f->so)
		return -1;
	l->hit = true;
	l->addr = parload__h5_le(m + at + n, l->f->so);
	return 1;
}

/* A group's messages: Link Info (a dense group's fractal heap fails
 * the walk), Symbol Table, Link. */
static int group_message(void *ctx, unsigned type, unsigned flags,
			 const unsigned char *m, size_t len)
{
	h5link *l = ctx;
	const unsigned so = l->f->so;

	(void)flags;
	if (type == 0x0002) {
		const size_t at = 2 + (len > 1 && m[1] & 1 ? 8 : 0);

		l->group = l->linfo = true;
		return len >= at + so && m[0] == 0 && !(m[1] & ~3u) &&
		       parload__h5_undefined(parload__h5_le(m + at, so), so) ?
			       0 :
			       -1;
	}
	if (type == 0x0011) {
		if (len < 2 * (size_t)so || l->table)
			return -1;
		l->group = l->table = true;
		l->btree = parload__h5_le(m, so);
		l->heap = parload__h5_le(m + so, so);
		return 0;
	}
	return type == 0x0006 ? link_message(l, m, len) : 0;
}

/* The local heap ("HEAP", version 0): its data segment in the file, and
 * its free list as libhdf5 checks it when it loads the heap: each free
 * block inside the segment, its next one's offset not 0 (1 ends the
 * list).  A list longer than the segment has room for loops: unsure. */
static bool local_heap(h5link *l)
{
	const parload__h5file *f = l->f;
	const unsigned sl = f->sl;
	unsigned char b[8 + 2 * 8 + 8];
	uint64_t free, left;

	if (!parload__h5_get(f, l->heap, 8 + 2 * (size_t)sl + f->so, b) ||
	    memcmp(b, "HEAP", 4) || b[4] != 0)
		return false;
	l->heap_size = parload__h5_le(b + 8, sl);
	free = parload__h5_le(b + 8 + sl, sl);
	l->heap_data = parload__h5_le(b + 8 + 2 * sl, f->so);
	if (l->heap_size == 0 || parload__h5_undefined(l->heap_data, f->so) ||
	    !parload__h5_in_file(f, l->heap_data, l->heap_size))
		return false;
	for (left = l->heap_size / (2 * sl); free != 1; left--) {
		unsigned char fb[2 * 8];
		uint64_t size;

		if (left == 0 || free >= l->heap_size ||
		    l->heap_size - free < 2 * sl ||
		    !parload__h5_get(f, l->heap_data + free, 2 * sl, fb))
			return false;
		size = parload__h5_le(fb + sl, sl);
		if (size > l->heap_size - free)
			return false;
		free = parload__h5_le(fb, sl);
		if (free == 0)
			return false;
	}
	return true;
}

/* The name sought against the heap's at offset off, as libhdf5's
 * strcmp() compares them (its lookups search by name): < 0, 0 or > 0
 * into *cmp; false (unsure) when off is not in the heap, or the heap ends
 * before the comparison does. */
static bool heap_cmp(const h5link *l, uint64_t off, int *cmp)
{
	unsigned char buf[MAX_NAME + 1];
	size_t n;

	if (off >= l->heap_size)
		return false;
	n = l->heap_size - off < l->len + 1 ? (size_t)(l->heap_size - off) :
					      l->len + 1;
	if (!parload__h5_get(l->f, l->heap_data + off, n, buf))
		return false;
	for (size_t k = 0; k <= l->len; k++) {
		const unsigned char c = k < l->len ? (unsigned char)l->name[k] :
						     0;

		if (k == n)
			return false;
		if (c != buf[k] || c == 0) {
			*cmp = (int)c - (int)buf[k];
			return true;
		}
	}
	return false;
}

/* A symbol table node ("SNOD", version 1): the name's entry, if there. */
static int symbol_node(h5link *l, uint64_t addr)
{
	const parload__h5file *f = l->f;
	const size_t step = 2 * (size_t)f->so + 24;
	unsigned char head[8], *b;
	unsigned n;
	int rc = ABSENT;

	if (!parload__h5_get(f, addr, 8, head) || memcmp(head, "SNOD", 4) ||
	    head[4] != 1)
		return UNSURE;
	/* libhdf5 reads the node's 2K entries and decodes its n: each
	 * entry's cache type one it knows (0-2). */
	n = (unsigned)parload__h5_le(head + 6, 2);
	if (f->sym_k == 0 || n > 2 * f->sym_k ||
	    !parload__h5_in_file(f, addr, 8 + 2 * (uint64_t)f->sym_k * step) ||
	    !(b = parload__h5_fetch(f, addr + 8, n * step)))
		return UNSURE;
	for (unsigned k = 0; rc == ABSENT && k < n; k++)
		if (parload__h5_le(b + k * step + 2 * f->so, 4) > 2)
			rc = UNSURE;
	/* libhdf5's binary search by name (H5G__node_found): what it does
	 * not find is not there, whatever entries the node holds. */
	for (unsigned lt = 0, rt = n, k; rc == ABSENT && lt < rt;) {
		const unsigned char *e = b + (k = (lt + rt) / 2) * step;
		int cmp;

		if (!heap_cmp(l, parload__h5_le(e, f->so), &cmp)) {
			rc = UNSURE;
		} else if (cmp < 0) {
			rt = k;
		} else if (cmp > 0) {
			lt = k + 1;
		} else {
			/* Cache type 2: a soft link. */
			l->addr = parload__h5_le(e + f->so, f->so);
			rc = parload__h5_le(e + 2 * f->so, 4) == 2 ||
					     parload__h5_undefined(l->addr,
								   f->so) ?
				     UNSURE :
				     FOUND;
		}
	}
	parload__sys_free(b);
	return rc;
}

static int group_node(h5link *l, uint64_t addr, int level);

/* A group node's children (its keys and children read into b): the one
 * libhdf5's binary search chooses (H5B_find, H5G__node_cmp3: the child
 * whose left key's name is below the name sought and whose right key's
 * is not), a node of the level below or a symbol table node; none when
 * it chooses none. */
static int children(h5link *l, const unsigned char *b, unsigned used,
		    int level)
{
	const size_t so = l->f->so, sl = l->f->sl, step = sl + so;
	unsigned lt = 0, rt = used, k = 0;
	int cmp = 1;

	while (lt < rt && cmp) {
		int left, right;

		k = (lt + rt) / 2;
		if (!heap_cmp(l, parload__h5_le(b + k * step, (unsigned)sl),
			      &left))
			return UNSURE;
		if (left <= 0) {
			cmp = -1;
		} else if (!heap_cmp(l, parload__h5_le(b + (k + 1) * step,
						       (unsigned)sl),
				     &right)) {
			return UNSURE;
		} else {
			cmp = right > 0;
		}
		if (cmp < 0)
			rt = k;
		else
			lt = k + 1;
	}
	if (cmp)
		return ABSENT;
	return level == 0 ? symbol_node(l, parload__h5_le(b + k * step + sl,
							  (unsigned)so)) :
			    group_node(l, parload__h5_le(b + k * step + sl,
							 (unsigned)so),
				       level - 1);
}

/* A v1 B-tree node of type 0 at addr, of the level its parent expects
 * (-1: the root). */
static int group_node(h5link *l, uint64_t addr, int level)
{
	const parload__h5file *f = l->f;
	const size_t head = 8 + 2 * (size_t)f->so, step = f->so + f->sl;
	unsigned char h[8 + 2 * 8], *b;
	unsigned used;
	int rc;

	if (l->nodes == 0 || !parload__h5_get(f, addr, head, h) ||
	    memcmp(h, "TREE", 4) || h[4] != 0 || h[5] >= MAX_LEVEL ||
	    (level >= 0 && h[5] != level))
		return UNSURE;
	l->nodes--;
	/* libhdf5 reads the node's 2K children and 2K + 1 keys. */
	used = (unsigned)parload__h5_le(h + 6, 2);
	if (f->group_k == 0 || used > 2 * f->group_k ||
	    !parload__h5_in_file(f, addr,
				 head + 2 * (uint64_t)f->group_k * step +
					 f->sl) ||
	    !(b = parload__h5_fetch(f, addr + head, used * step + f->sl)))
		return UNSURE;
	rc = children(l, b, used, h[5]);
	parload__sys_free(b);
	return rc;
}

/* The object named name (len bytes) in the group whose header is at g. */
static int child(const parload__h5file *f, uint64_t g, const char *name,
		 size_t len, uint64_t *addr)
{
	h5link l = { .f = f, .name = name, .len = len, .nodes = MAX_NODES };
	int rc;

	if (len > MAX_NAME || !parload__h5_header(f, g, group_message, &l) ||
	    !l.group || (l.linfo && l.table))
		return UNSURE;
	if (l.hit)
		rc = l.table ? UNSURE : FOUND;
	else if (!l.table)
		rc = ABSENT;
	else
		rc = local_heap(&l) ? group_node(&l, l.btree, -1) : UNSURE;
	*addr = l.addr;
	return rc;
}

/* The object at path ("/a/b"; "." and empty names are libhdf5's). */
static int lookup(const parload__h5file *f, const char *path,
		  uint64_t *addr)
{
	const char *p = path + 1;
	uint64_t at = f->root;

	if (path[0] != '/' || strlen(path) >= MAX_NAME)
		return UNSURE;
	for (int k = 0; *p; k++) {
		const char *e = strchr(p, '/');
		const size_t len = e ? (size_t)(e - p) : strlen(p);
		int rc;

		if (k == MAX_PARTS || len == 0 || (len == 1 && *p == '.') ||
		    (e && !e[1]))
			return UNSURE;
		if ((rc = child(f, at, p, len, &at)) != FOUND)
			return rc;
		p += len + (e ? 1 : 0);
	}
	*addr = at;
	return FOUND;
}

/* ---- a dataset's header ---- */

typedef struct dset {
	const parload__h5file *f;
	unsigned seen;      /* bit 0: dataspace, 1: datatype, 2: layout */
	int rank;
	uint64_t dims[3];
	bool is_float, sgn, be;
	unsigned size;      /* bytes per element */
	uint64_t addr, bytes; /* the contiguous storage */
	uint64_t header;    /* the object header's address */
	bool chunked;       /* else contiguous */
	bool v4;            /* a layout of version 4: not a v1 B-tree */
	uint64_t chunk[4];  /* the chunk's shape, then the element's size */
	unsigned cdims;     /* rank + 1 of them */
} dset;

/* Dataspace, versions 1 and 2: simple, of rank 1-3. */
static bool dataspace(dset *d, const unsigned char *m, size_t len)
{
	const size_t at = len > 0 && m[0] == 1 ? 8 : 4;

	if (len < 4 || (m[0] != 1 && m[0] != 2) || m[1] < 1 || m[1] > 3 ||
	    (m[0] == 2 && m[3] != 1) || len < at + (size_t)m[1] * 8)
		return false;
	d->rank = m[1];
	for (int k = 0; k < d->rank; k++)
		d->dims[k] = parload__h5_le(m + at + 8 * k, 8);
	return true;
}

/* IEEE floating point of size bytes, as libhdf5 writes it: sign, then
 * exponent, then mantissa with an implied leading bit, no padding. */
static bool ieee(const unsigned char *m, size_t len, unsigned size)
{
	const unsigned exp = size == 4 ? 8 : 11, mant = 8 * size - 1 - exp;

	return len >= 20 && (m[1] & ~1u) == 0x20 && m[2] == 8 * size - 1 &&
	       m[3] == 0 && parload__h5_le(m + 8, 2) == 0 &&
	       parload__h5_le(m + 10, 2) == 8 * size && m[12] == mant &&
	       m[13] == exp && m[14] == 0 && m[15] == mant &&
	       parload__h5_le(m + 16, 4) == (1u << (exp - 1)) - 1;
}

/* Fixed point of size bytes as parload reads it: either byte order,
 * signed or not, no padding bits, of 1, 2 or 4 bytes, all of them used
 * (bit offset 0, precision 8 * size). */
static bool fixed_point(const unsigned char *m, unsigned size)
{
	return (m[1] & ~0x09u) == 0 && m[2] == 0 && m[3] == 0 &&
	       (size == 1 || size == 2 || size == 4) &&
	       parload__h5_le(m + 8, 2) == 0 &&
	       parload__h5_le(m + 10, 2) == 8 * size;
}

/* Datatype, versions 1-3: fixed point of 1, 2 or 4 bytes, all bits
 * used; floating point of 4 or 8 (what parload reads of them:
 * parload__h5_pixel_type, in describe()). */
static bool datatype(dset *d, const unsigned char *m, size_t len)
{
	const unsigned cls = len ? m[0] & 0x0f : 99, ver = len ? m[0] >> 4 : 0;

	if (len < 12 || ver < 1 || ver > 3)
		return false;
	d->size = (unsigned)parload__h5_le(m + 4, 4);
	d->be = m[1] & 1;
	if (cls == 1) {
		d->is_float = true;
		return (d->size == 4 || d->size == 8) && ieee(m, len, d->size);
	}
	d->sgn = m[1] & 0x08;
	return cls == 0 && fixed_point(m, d->size);
}

/* A chunked data layout (version 3, class 2): the chunk's shape, its
 * last dimension the element's size (2 to 4 dimensions in all). */
static bool chunked_layout(dset *d, const unsigned char *m, size_t len)
{
	d->cdims = m[2];
	if (d->cdims < 2 || d->cdims > 4 ||
	    len < 3 + 8 + 4 * (size_t)d->cdims)
		return false;
	d->chunked = true;
	for (unsigned k = 0; k < d->cdims; k++)
		d->chunk[k] = parload__h5_le(m + 11 + 4 * k, 4);
	return true;
}

/* A chunked data layout of version 4 (hdf5_index4.c reads it, and its
 * index): the chunk's shape and the element's size. */
static bool chunked_layout4(dset *d, const unsigned char *m, size_t len)
{
	parload__h5layout4 l;

	if (!parload__h5_layout4(m, len, d->f->so, d->f->sl, &l))
		return false;
	d->cdims = l.dims;
	d->chunked = d->v4 = true;
	memcpy(d->chunk, l.chunk, sizeof(d->chunk));
	return true;
}

/* Data layout, versions 3 and 4 (the same for this class): contiguous,
 * its address and size; or chunked, version 3 (a version 1 B-tree of
 * chunks, whose address hdf5_index.c's walk reads from the same
 * message) or 4 (another index): the chunk's shape and the element's
 * size. */
static bool layout(dset *d, const unsigned char *m, size_t len)
{
	if (len >= 3 && m[0] == 3 && m[1] == 2)
		return chunked_layout(d, m, len);
	if (len >= 2 && m[0] == 4 && m[1] == 2)
		return chunked_layout4(d, m, len);
	if (len < 2 + 8 + 8 || (m[0] != 3 && m[0] != 4) || m[1] != 1)
		return false;
	d->addr = parload__h5_le(m + 2, 8);
	d->bytes = parload__h5_le(m + 10, 8);
	return !parload__h5_undefined(d->addr, 8);
}

/* A fill value message as libhdf5 decodes it when it opens the dataset
 * (0x0005, versions 1-3; the old one, 0x0004, a size and the value):
 * its version, version 3's flags ("unknown flag"), its value inside the
 * message ("fill size exceeds buffer size"); versions 1 and 2 have a
 * value where it is said defined, of a signed size (-1: none).  Anything
 * else: unsure. */
static bool fill_ok(unsigned type, const unsigned char *m, size_t len)
{
	if (type == 0x0004)
		return len >= 4 && parload__h5_le(m, 4) <= len - 4;
	if (len < 2 || m[0] < 1 || m[0] > 3)
		return false;
	if (m[0] == 3)
		return !(m[1] & 0xc0) &&
		       (m[1] & 0x10 || !(m[1] & 0x20) ||
			(len >= 6 && parload__h5_le(m + 2, 4) <= len - 6));
	return len >= 4 &&
	       (m[3] == 0 ||
		(len >= 8 && (parload__h5_le(m + 4, 4) <= len - 8 ||
			      parload__h5_le(m + 4, 4) == UINT32_MAX)));
}

/* A dataset's messages: each of the three once, not shared (flag bit
 * 1); external files and filters fail the walk; fill values checked. */
static int dset_message(void *ctx, unsigned type, unsigned flags,
			const unsigned char *m, size_t len)
{
	dset *d = ctx;
	const unsigned bit = type == 0x0001 ? 1 : type == 0x0003 ? 2 :
			     type == 0x0008 ? 4 : 0;
	bool ok;

	if (type == 0x0007 || type == 0x000b)
		return -1;
	if (type == 0x0004 || type == 0x0005)
		return fill_ok(type, m, len) ? 0 : -1;
	if (!bit)
		return 0;
	if (d->seen & bit || flags & 0x02)
		return -1;
	d->seen |= bit;
	ok = bit == 1 ? dataspace(d, m, len) :
	     bit == 2 ? datatype(d, m, len) : layout(d, m, len);
	return ok ? 0 : -1;
}

/* The dataset at path: its header read; contiguous storage exactly its
 * elements' bytes, inside the file, or chunks of one frame's whole rows
 * (each of the index's chunks checked as the walk gives it). */
static bool dataset(const parload__h5file *f, const char *path, dset *d)
{
	uint64_t addr, n = 1;

	memset(d, 0, sizeof(*d));
	d->f = f;
	if (lookup(f, path, &addr) != FOUND ||
	    !parload__h5_header(f, addr, dset_message, d) || d->seen != 7)
		return false;
	d->header = addr;
	for (int k = 0; k < d->rank; k++) {
		if (d->dims[k] == 0 || n > UINT64_MAX / d->dims[k])
			return false;
		n *= d->dims[k];
	}
	if (d->chunked)
		return d->rank >= 2 && d->cdims == (unsigned)d->rank + 1 &&
		       d->chunk[d->rank] == d->size &&
		       (d->rank == 2 || d->chunk[0] == 1) &&
		       d->chunk[d->rank - 1] == d->dims[d->rank - 1] &&
		       d->chunk[d->rank - 2] > 0 &&
		       d->chunk[d->rank - 2] <= d->dims[d->rank - 2] &&
		       (d->v4 || f->istore_k > 0);
	return n <= UINT64_MAX / d->size && n * d->size == d->bytes &&
	       f->base <= f->size && d->addr <= f->size - f->base &&
	       d->bytes <= f->size - f->base - d->addr;
}

/* ---- the container ---- */

typedef struct nat {
	parload__h5file f;
	const char *path;   /* the file */
	parload__h5pick p;  /* the dataset, its frames (hdf5_choose.c) */
	dset d;
	parload_error scratch; /* a fall back says nothing */
} nat;

/* The first signature at 0, 512, 1024, ... (where libhdf5 stops too):
 * a superblock whose base is where it lies. */
static bool find_superblock(parload__h5file *f)
{
	for (uint64_t at = 0; at < f->size; at = at ? 2 * at : 512) {
		const int rc = parload__h5_superblock(f, at);

		if (rc != 0)
			return rc == 1 && f->so == 8 && f->sl == 8 &&
			       f->base == at;
	}
	return false;
}

/* An IEEE float of size bytes (4 or 8) at p, as a double. */
static double to_double(const unsigned char *p, unsigned size, bool be)
{
	unsigned char v[8];
	uint64_t bits;

	for (unsigned k = 0; k < size; k++)
		v[k] = p[be ? size - 1 - k : k];
	bits = parload__h5_le(v, size);
	if (size == 4) {
		const uint32_t b32 = (uint32_t)bits;
		float x;

		memcpy(&x, &b32, 4);
		return x;
	} else {
		double x;

		memcpy(&x, &bits, 8);
		return x;
	}
}

/* The units of an angles' dataset, from its header's attributes. */
typedef struct units {
	const parload__h5file *f;
	double deg;         /* degrees per unit stored */
	bool sure;          /* false: leave them to hdf5.c */
} units;

/* Object index of the global heap collection ("GCOL", version 1) at
 * addr: its bytes into text (fewer than cap of them, then a '\0');
 * false when it is not there or the collection is malformed. */
static bool heap_object(const parload__h5file *f, uint64_t addr,
			uint32_t index, char *text, size_t cap)
{
	const size_t sl = f->sl, head = 8 + sl;
	unsigned char h[8 + 8], *b;
	uint64_t size;
	bool ok = false;

	if (!parload__h5_get(f, addr, head, h) || memcmp(h, "GCOL", 4) ||
	    h[4] != 1)
		return false;
	size = parload__h5_le(h + 8, f->sl);
	if (size < head || size > MAX_GCOL ||
	    !(b = parload__h5_fetch(f, addr, size)))
		return false;
	/* Objects: index (0 ends them: free space), references, 4 bytes,
	 * size, then the data padded to 8 bytes. */
	for (size_t at = head; at <= size - head;) {
		const uint64_t k = parload__h5_le(b + at, 2);
		const uint64_t n = parload__h5_le(b + at + 8, f->sl);

		if (k == 0 || n > size - at - head)
			break;
		if (k == index) {
			ok = n < cap;
			if (ok) {
				memcpy(text, b + at + head, n);
				text[n] = '\0';
			}
			break;
		}
		at += head + ((n + 7) & ~(uint64_t)7);
	}
	parload__sys_free(b);
	return ok;
}

/* An attribute's datatype at t, a string: class 3 (fixed length, its
 * bytes into *n); or class 9, type 1 (*vlen, a variable-length string:
 * *n the bytes of its length, then its global heap ID). */
static bool string_type(const unsigned char *t, size_t so, bool *vlen,
			size_t *n)
{
	*vlen = (t[0] & 0x0f) == 9 && (t[1] & 0x0f) == 1;
	if ((t[0] & 0x0f) != 3 && !*vlen)
		return false;
	*n = *vlen ? 4 + so + 4 : (size_t)parload__h5_le(t + 4, 4);
	return true;
}

/* An attribute's dataspace at s (ds bytes), of one value: a scalar, or
 * one dimension of 1 (its sizes 8). */
static bool one_value(const unsigned char *s, size_t ds)
{
	const size_t rank = s[1];

	if ((s[0] != 1 && s[0] != 2) || rank > 1 ||
	    (s[0] == 2 && s[3] != (rank ? 1 : 0)) ||
	    (rank && (ds < (s[0] == 1 ? 8u : 4u) + 8 ||
		      parload__h5_le(s + (s[0] == 1 ? 8 : 4), 8) != 1)))
		return false;
	return true;
}

/* A string attribute's value at s into text (cap bytes), its padding
 * cut: its n bytes, or (vlen) the global heap object its ID there names;
 * false when that object is not there or does not fit. */
static bool string_value(const parload__h5file *f, const unsigned char *s,
			 size_t n, bool vlen, char *text, size_t cap)
{
	if (vlen && !heap_object(f, parload__h5_le(s + 4, f->so),
				 (uint32_t)parload__h5_le(s + 4 + f->so, 4),
				 text, cap))
		return false;
	if (vlen)
		n = strlen(text);
	else
		memcpy(text, s, n);
	parload__h5_unpad(text, n);
	return true;
}

/* An Attribute message (versions 1-3): "units", one string, fixed-length
 * or variable-length (its bytes in the global heap; its datatype and
 * dataspace not shared), of a unit hdf5.c reads alike
 * (parload__angle_units); anything else named so, or a unit it does not
 * know, leaves the angles to hdf5.c, which names what it refuses. */
static int units_message(units *u, const unsigned char *m, size_t len)
{
	const unsigned v = len ? m[0] : 0;
	const size_t head = v == 3 ? 9 : 8, so = u->f->so;
	size_t name, dt, ds, at, n;
	bool vlen;
	char text[64];

	if (len < head || v < 1 || v > 3)
		return -1;
	name = (size_t)parload__h5_le(m + 2, 2);
	dt = (size_t)parload__h5_le(m + 4, 2);
	ds = (size_t)parload__h5_le(m + 6, 2);
	if (name > len - head || name != sizeof("units") ||
	    memcmp(m + head, "units", sizeof("units")) != 0)
		return 0;
	/* Version 1 pads each part to 8 bytes. */
	if (v == 1) {
		name = (name + 7) & ~(size_t)7;
		dt = (dt + 7) & ~(size_t)7;
		ds = (ds + 7) & ~(size_t)7;
	}
	at = head + name;
	u->sure = false;
	if ((v > 1 && m[1] & 3) || dt < 8 || ds < 4 || dt > len - at ||
	    ds > len - at - dt)
		return 1;
	if (!string_type(m + at, so, &vlen, &n) || !one_value(m + at + dt, ds))
		return 1;
	at += dt + ds;
	if (n >= sizeof(text) || n > len - at)
		return 1;
	if (!string_value(u->f, m + at, n, vlen, text, sizeof(text)))
		return 1;
	u->sure = parload__angle_units(text, &u->deg);
	return 1;
}

/* An angles' header's messages: its Attribute messages, and an Attribute
 * Info message's dense storage, which only libhdf5 reads. */
static int angle_message(void *ctx, unsigned type, unsigned flags,
			 const unsigned char *m, size_t len)
{
	units *u = ctx;
	const unsigned so = u->f->so;

	(void)flags;
	if (type == 0x000c)
		return units_message(u, m, len);
	if (type == 0x0015) {
		const size_t at = 2 + (len > 1 && m[1] & 1 ? 2 : 0);

		if (len < at + so || !parload__h5_undefined(
					     parload__h5_le(m + at, so), so)) {
			u->sure = false;
			return 1;
		}
	}
	return 0;
}

/* /exchange/theta, 1-D of count float entries (angles), into v as
 * doubles, *deg degrees per unit by its units attribute; false where it
 * is anything else (libhdf5's reader says what). */
static bool theta(nat *n, uint64_t count, double *v, double *deg)
{
	dset t;
	unsigned char *b;
	units u = { .f = &n->f, .deg = 1.0, .sure = true };

	if (!dataset(&n->f, PARLOAD__H5_THETA, &t) || t.chunked ||
	    t.rank != 1 || t.dims[0] != count || !t.is_float ||
	    !parload__h5_header(&n->f, t.header, angle_message, &u) ||
	    !u.sure || !(b = parload__h5_fetch(&n->f, t.addr, t.bytes)))
		return false;
	for (uint64_t i = 0; i < count; i++)
		v[i] = to_double(b + i * t.size, t.size, t.be);
	*deg = u.deg;
	parload__sys_free(b);
	return true;
}

/* ---- the back-end's answers (hdf5_core.h's parload__h5be) ---- */

/* A dataset whose header this reader reads; absent; or unsure. */
static int be_is_dataset(void *ctx, const char *path)
{
	nat *n = ctx;
	uint64_t addr;
	dset d;
	const int rc = lookup(&n->f, path, &addr);

	if (rc == ABSENT)
		return 0;
	return rc == FOUND && dataset(&n->f, path, &d) ? 1 :
							 PARLOAD__H5_UNSURE;
}

/* What only libhdf5's reader answers: a missing dataset's error (it
 * lists the file's datasets), NXtomo's entries, the file's 3-D
 * datasets. */
static int be_no_such(void *ctx, const char *path)
{
	(void)ctx, (void)path;
	return PARLOAD__H5_UNSURE;
}

static int be_nxtomo(void *ctx)
{
	(void)ctx;
	return PARLOAD__H5_UNSURE;
}

static int be_find3(void *ctx, parload__h5found3 *fd)
{
	(void)ctx, (void)fd;
	return PARLOAD__H5_UNSURE;
}

/* A 1-D dataset: absent, or DXchange's theta as theta() reads it; any
 * other (an image_key, NXtomo's angles) is libhdf5's. */
static int be_read_1d(void *ctx, const char *path, bool angles, void *buf,
		      uint64_t want, double *deg)
{
	nat *n = ctx;
	uint64_t addr;
	const int rc = lookup(&n->f, path, &addr);

	if (rc == ABSENT)
		return 1;
	return rc == FOUND && angles && strcmp(path, PARLOAD__H5_THETA) == 0 &&
			       theta(n, want, buf, deg) ?
		       0 :
		       PARLOAD__H5_UNSURE;
}

/* A master file's datasets: libhdf5's (its links to other files). */
static int be_members(void *ctx, const char *group, char ***names, size_t *n)
{
	(void)ctx, (void)group;
	*names = NULL;
	*n = 0;
	return PARLOAD__H5_UNSURE;
}

/* desc as libhdf5's reader makes it (parload__h5_describe); false for a
 * type parload does not read, which libhdf5's reader names. */
static bool describe(const nat *n, parload_desc *d, uint64_t views)
{
	const dset *s = &n->d;
	const int type = parload__h5_pixel_type(s->is_float, s->sgn, s->size);
	parload_error scratch;

	memset(&scratch, 0, sizeof(scratch));
	return type && parload__h5_describe(d, type, s->be,
					    (uint32_t)s->dims[s->rank - 1],
					    (uint32_t)s->dims[s->rank - 2],
					    views, &scratch) == 0;
}

/* As many views as the file has room for: each view's bytes, or, chunked,
 * its chunks stored whole (checked before any table of views is made: a
 * damaged header may claim 2^62 frames). */
static bool room_for(const nat *n, uint64_t views, const parload_desc *desc)
{
	const dset *s = &n->d;
	const uint64_t rows = s->chunk[s->rank - 2];
	const uint64_t want = rows * desc->row_size;

	if (!s->chunked)
		return desc->payload_size * views == s->bytes;
	return want != 0 && n->f.base <= n->f.size &&
	       views <= (n->f.size - n->f.base) / want /
				parload__strips_per_view(desc->height,
							 (uint32_t)rows);
}

/* A chunked dataset's strips, a chunk of rows each, from the chunk
 * index (hdf5_index.c): every chunk written, stored as it is. */
static bool chunks(nat *n, parload__strips *t, uint64_t views,
		   const parload_desc *desc)
{
	const dset *s = &n->d;
	parload__h5where w = { .super = n->f.base, .header = s->header,
			       .istore_k = n->f.istore_k, .so = n->f.so,
			       .sl = n->f.sl, .rank = s->rank,
			       .elem = s->size };
	parload_error scratch;
	parload__chunks p = { .t = t,
				.dims = { views, desc->height, desc->width },
				.chunk = { 1, 1, 1 },
				.views = views, .plain = true,
				.elem = s->size,
				.file = n->path, .name = n->p.name,
				.err = &scratch };
	int rc;

	for (int k = 0; k < s->rank; k++) {
		w.dims[k] = s->dims[k];
		w.chunk[k] = s->chunk[k];
		p.chunk[3 - s->rank + k] = s->chunk[k];
	}
	rc = parload__h5index_walk(n->f.fd, &w, parload__chunks_put, &p,
				   n->path, n->p.name, &scratch);
	if (rc != 0) {
		parload__sys_free(p.got);
		return false;
	}
	return parload__chunks_finish(&p) == 0;
}

/* The container of the dataset chosen: its views, one strip each (a
 * chunk of rows each when chunked), its frames and angles as
 * hdf5_choose.c reads them (every frame: this reader reads no
 * image_key). */
static bool fill(nat *n, const parload__h5be *be, parload_frames fr,
		 parload__container *out)
{
	const dset *s = &n->d;
	const uint64_t views = s->rank == 3 ? s->dims[0] : 1;
	const uint64_t at = n->f.base + s->addr;
	parload__strips *t = &out->strips;

	if ((s->rank != 2 && s->rank != 3) ||
	    s->dims[s->rank - 1] > UINT32_MAX ||
	    s->dims[s->rank - 2] > UINT32_MAX ||
	    s->chunk[s->rank - 2] > UINT32_MAX ||
	    !describe(n, &out->desc, views) ||
	    !room_for(n, views, &out->desc) ||
	    parload__h5_frames(be, &n->p, fr, views) != 0 ||
	    n->p.n != views ||
	    parload__h5_angles(be, &n->p, views, &t->angles) != 0)
		return false;
	t->views = views;
	if (s->chunked)
		return chunks(n, t, views, &out->desc);
	t->per_view = 1;
	return parload__h5_contiguous(t, at, out->desc.payload_size,
				      out->desc.height, NULL, views, 0) == 0;
}

/* The file open as n->f.fd: its dataset's container. */
static bool read_file(nat *n, const char *named, parload_frames fr,
		      parload__container *out)
{
	const parload__h5be be = { n, be_is_dataset, be_no_such, be_nxtomo,
				   be_find3, be_read_1d, be_members };
	struct stat sb;

	if (parload__sys_fstat(n->f.fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return false;
	n->f.size = (uint64_t)sb.st_size;
	return (unsigned)fr <= PARLOAD_FRAMES_DARKS &&
	       (!named || strlen(named) < MAX_NAME - 1) &&
	       find_superblock(&n->f) &&
	       parload__h5_choose(&be, &n->p, named, fr) == 0 &&
	       dataset(&n->f, n->p.name, &n->d) && fill(n, &be, fr, out);
}

int parload__hdf5_native(const char *file, const char *dataset,
			 parload_frames fr, parload__container *out)
{
	nat n = { .f = { .fd = -1 } };
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!(out->paths = parload__sys_calloc(1, sizeof(*out->paths))) ||
	    !(out->paths[0] = parload__sys_strdup(file))) {
		parload__container_free(out);
		return FALL_BACK;
	}
	out->n = 1;
	n.path = n.p.file = out->paths[0];
	n.p.err = &n.scratch;
	n.f.fd = parload__sys_open(file, O_RDONLY | O_CLOEXEC);
	ok = n.f.fd >= 0 && read_file(&n, dataset, fr, out);
	if (n.f.fd >= 0)
		parload__sys_close(n.f.fd);
	parload__h5_pick_free(&n.p);
	if (!ok) {
		parload__container_free(out);
		return FALL_BACK;
	}
	out->strips.path = out->paths[0];
	return 0;
}
