/*
 * hdf5_index4.c - the chunk indexes of a version 4 data layout message
 * (libver 'latest' and SWMR files), read with pread and no libhdf5, for
 * hdf5_index.c's walk: a single chunk (filtered or not: its size and
 * filter mask in the message), implicit (chunk k at the address plus k
 * chunks' bytes), a fixed array (header FAHD, data block FADB, paged
 * when large), an extensible array (header EAHD, index block EAIB,
 * super blocks EASB, data blocks EADB, paged when large) and a version 2
 * B-tree (header BTHD, internal nodes BTIN, leaves BTLF; records of type
 * 10, unfiltered, and 11, filtered).  Each chunk goes to put in the
 * order of its coordinates, as the version 1 B-tree gives them: the
 * indexes give that order, but for an extensible array whose unlimited
 * dimension is not the first (its chunks are kept and sorted).  Every
 * structure's signature, version, class, owner and checksum (lookup3)
 * are checked, every count against the dataset's chunks before it sizes
 * a read, every address and length against the file, every walk
 * bounded; anything else answers "fall back", and libhdf5 reads it.
 */
#include "formats/formats.h"

#include <stdlib.h>
#include <string.h>

#define FALL_BACK 1
#define MAX_PAGE_BITS 24   /* elements of a page or of a block: 2^24 */
#define MAX_DEPTH 16       /* a version 2 B-tree's levels */
#define MAX_NODE (1u << 20) /* a version 2 B-tree node's bytes */
#define MAX_EA_BITS 40     /* an extensible array's entries: 2^40 (its
			    * blocks' sizes and offsets then fit 64 bits) */

typedef struct w4 {
	const parload__h5ix *x;
	const parload__h5file *f;
	unsigned rank, so, sl;
	uint64_t bytes;      /* a chunk's, unfiltered */
	unsigned csl;        /* a filtered entry's width of its size */
	size_t esize;        /* an array entry's bytes */
	uint64_t grid[3];    /* chunks across the dataset's dimensions */
	uint64_t maxc[3];    /* across its maximum (0: unlimited) */
	uint64_t down[3];    /* an array index's steps (swizzled for an
			      * extensible array whose unlimited dimension
			      * is not the first) */
	int unlim;           /* the unlimited dimension, or -1 */
	uint64_t most;       /* chunks the dataset has room for */
	uint64_t got;        /* chunks given */
	uint64_t last[3];    /* the scaled coordinates of the last */
	parload__chunk *keep; /* chunks to sort (swizzled) */
	int rc;              /* put's code, which ends the walk */
} w4;

/* ---- the layout message ---- */

/* Version 4, chunked: flags, dimensions, their bytes and sizes, the
 * index's type, its parameters as libhdf5 checks them (none 0), its
 * address. */
bool parload__h5_layout4(const unsigned char *m, size_t len, unsigned so,
			 unsigned sl, parload__h5layout4 *l)
{
	static const unsigned char params[6] = { 0, 0, 0, 1, 5, 6 };
	size_t at = 5, n;

	memset(l, 0, sizeof(*l));
	if (len < 5 || m[0] != 4 || m[1] != 2 || m[2] & ~3u || m[3] < 2 ||
	    m[3] > 4 || m[4] < 1 || m[4] > 8 ||
	    len < at + (size_t)m[3] * m[4] + 1)
		return false;
	l->flags = m[2];
	l->dims = m[3];
	for (unsigned k = 0; k < l->dims; k++, at += m[4])
		l->chunk[k] = parload__h5_le(m + at, m[4]);
	l->index = m[at++];
	if (l->index < PARLOAD__H5_SINGLE || l->index > PARLOAD__H5_BTREE2)
		return false;
	n = params[l->index];
	if (l->index == PARLOAD__H5_SINGLE && l->flags & 2)
		n = sl + 4;
	if (len < at + n + so)
		return false;
	for (size_t k = 0; l->index != PARLOAD__H5_BTREE2 &&
			   l->index != PARLOAD__H5_SINGLE && k < n; k++)
		if (m[at + k] == 0)
			return false;
	if (l->index == PARLOAD__H5_SINGLE && l->flags & 2) {
		l->single_bytes = parload__h5_le(m + at, sl);
		l->single_mask = (uint32_t)parload__h5_le(m + at + sl, 4);
	}
	l->addr = parload__h5_le(m + at + n, so);
	return true;
}

/* ---- chunks to put ---- */

/* Scaled coordinates a after b (rank of them). */
static int scaled_cmp(const uint64_t *a, const uint64_t *b, unsigned rank)
{
	for (unsigned k = 0; k < rank; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

static int chunk_cmp(const void *a, const void *b)
{
	const parload__chunk *x = a, *y = b;

	return scaled_cmp(x->at, y->at, 3);
}

/* The chunk at scaled coordinates s, address addr (undefined: none
 * written), bytes and filter mask: inside the dataset and the file, no
 * more than it has room for, each after the last; to put, or kept to
 * sort.  false ends the walk (rc: put's code, else fall back). */
static bool give(w4 *w, const uint64_t *s, uint64_t addr, uint64_t bytes,
		 uint32_t mask)
{
	parload__chunk c = { .addr = w->f->base + addr, .bytes = bytes,
			       .mask = mask };
	const unsigned r = w->rank;

	if (parload__h5_undefined(addr, w->so))
		return true;
	for (unsigned k = 0; k < r; k++)
		if (s[k] >= w->grid[k])
			return false;
	if (bytes == 0 || !parload__h5_in_file(w->f, addr, bytes) ||
	    w->got == w->most || (w->got && !w->keep &&
				   scaled_cmp(s, w->last, r) <= 0))
		return false;
	for (unsigned k = 0; k < r; k++)
		c.at[3 - r + k] = s[k] * w->x->w->chunk[k];
	memcpy(w->last, s, r * sizeof(s[0]));
	if (w->keep) {
		w->keep[w->got++] = c;
		return true;
	}
	w->got++;
	w->rc = w->x->put(w->x->ctx, &c);
	return w->rc == 0;
}

/* Array entry idx at e: an address, and a filtered chunk's size and mask;
 * its coordinates from idx (the unlimited dimension first when the
 * array swizzles them). */
static bool entry(w4 *w, const unsigned char *e, uint64_t idx)
{
	const unsigned r = w->rank;
	const bool filt = w->x->filtered;
	uint64_t s[3], sw[3];

	for (unsigned k = 0; k < r; k++) {
		sw[k] = idx / w->down[k];
		idx %= w->down[k];
	}
	if (w->unlim > 0) {
		for (int k = 0; k < w->unlim; k++)
			s[k] = sw[k + 1];
		s[w->unlim] = sw[0];
		for (unsigned k = (unsigned)w->unlim + 1; k < r; k++)
			s[k] = sw[k];
	} else {
		memcpy(s, sw, sizeof(s));
	}
	return give(w, s, parload__h5_le(e, w->so),
		    filt ? parload__h5_le(e + w->so, w->csl) : w->bytes,
		    filt ? (uint32_t)parload__h5_le(e + w->so + w->csl, 4) :
			   0);
}

/* n entries at b, the first of index idx. */
static bool entries(w4 *w, const unsigned char *b, uint64_t n, uint64_t idx)
{
	for (uint64_t i = 0; i < n; i++)
		if (!entry(w, b + i * w->esize, idx + i))
			return false;
	return true;
}

/* The n bytes at addr, their signature sig, version 0 and class cls
 * (the array's, or the B-tree's type), their last 4 the checksum of the
 * others; NULL (to fall back) otherwise. */
static unsigned char *block(const w4 *w, uint64_t addr, uint64_t n,
			    const char *sig, unsigned cls)
{
	unsigned char *b;

	if (n < 10 || parload__h5_undefined(addr, w->so) ||
	    !(b = parload__h5_fetch(w->f, addr, n)))
		return NULL;
	if (memcmp(b, sig, 4) || b[4] != 0 || b[5] != cls ||
	    !parload__h5_checksum_ok(b, (size_t)n)) {
		parload__sys_free(b);
		return NULL;
	}
	return b;
}

/* A block's owner (its array's header) at b is the header at hdr. */
static bool owner(const w4 *w, const unsigned char *b, uint64_t hdr)
{
	return parload__h5_le(b, w->so) == hdr;
}

/* ---- single chunk, implicit ---- */

static bool single(w4 *w)
{
	const parload__h5layout4 *l = w->x->l;
	const uint64_t zero[3] = { 0, 0, 0 };

	if (w->x->filtered != ((l->flags & 2) != 0))
		return false;
	return l->flags & 2 ?
		       give(w, zero, l->addr, l->single_bytes, l->single_mask) :
		       give(w, zero, l->addr, w->bytes, 0);
}

/* The next scaled coordinates of the grid after s (row-major). */
static void next(uint64_t *s, const uint64_t *grid, unsigned rank)
{
	for (int k = (int)rank - 1; k >= 0; k--) {
		if (++s[k] < grid[k] || k == 0)
			return;
		s[k] = 0;
	}
}

/* Every chunk of the dataset's grid, at its index among the maximum's
 * chunks (which were all allocated, none filtered). */
static bool implicit(w4 *w)
{
	const uint64_t a = w->x->l->addr;
	uint64_t s[3] = { 0, 0, 0 }, room = w->bytes;

	if (parload__h5_undefined(a, w->so))
		return true;
	for (unsigned k = 0; k < w->rank; k++) {
		if (!w->maxc[k] || room > UINT64_MAX / w->maxc[k])
			return false;
		room *= w->maxc[k];
	}
	if (w->x->filtered || !parload__h5_in_file(w->f, a, room))
		return false;
	for (uint64_t n = 0; n < w->most; n++, next(s, w->grid, w->rank)) {
		uint64_t idx = 0;

		for (unsigned k = 0; k < w->rank; k++)
			idx += s[k] * w->down[k];
		if (!give(w, s, a + idx * w->bytes, w->bytes, 0))
			return false;
	}
	return true;
}

/* ---- fixed array ---- */

/* A page of n entries at addr, the first of index idx: the entries,
 * then their checksum; the first take of them walked. */
static bool page(w4 *w, uint64_t addr, uint64_t n, uint64_t take,
		 uint64_t idx)
{
	unsigned char *b = parload__h5_fetch(w->f, addr, n * w->esize + 4);
	bool ok = b && parload__h5_checksum_ok(b, (size_t)(n * w->esize + 4));

	ok = ok && entries(w, b, take, idx);
	parload__sys_free(b);
	return ok;
}

/* Page p of a data block's pages is there: its bit in init (the most
 * significant bit of byte 0 is page 0's). */
static bool page_init(const unsigned char *init, uint64_t p)
{
	return init[p / 8] & (0x80 >> (p % 8));
}

/* The data block at d of n entries, paged by 2^bits (hdr: its
 * header's address). */
static bool fa_block(w4 *w, uint64_t hdr, uint64_t d, uint64_t n,
		     unsigned bits)
{
	const uint64_t pn = (uint64_t)1 << bits;
	const uint64_t pages = n > pn ? (n + pn - 1) / pn : 0;
	const uint64_t pre = 6 + w->so + (pages + 7) / 8;
	unsigned char *b = block(w, d, pre + (pages ? 0 : n * w->esize) + 4,
				 "FADB", w->x->filtered);
	bool ok = b && owner(w, b + 6, hdr);

	if (ok && !pages)
		ok = entries(w, b + pre, n, 0);
	for (uint64_t p = 0; ok && p < pages; p++)
		if (page_init(b + 6 + w->so, p))
			ok = page(w, d + pre + 4 + p * (pn * w->esize + 4),
				  p + 1 < pages ? pn : n - p * pn,
				  p + 1 < pages ? pn : n - p * pn, p * pn);
	parload__sys_free(b);
	return ok;
}

static bool fixed_array(w4 *w)
{
	const unsigned so = w->so, sl = w->sl;
	const uint64_t a = w->x->l->addr;
	unsigned char *b;
	uint64_t n = 1;
	bool ok;

	if (parload__h5_undefined(a, so))
		return true;
	b = block(w, a, 8 + sl + so + 4, "FAHD", w->x->filtered);
	for (unsigned k = 0; k < w->rank; k++)
		n = w->maxc[k] && n <= UINT64_MAX / w->maxc[k] ?
			    n * w->maxc[k] :
			    0;
	ok = b && b[6] == w->esize && b[7] >= 1 && b[7] <= MAX_PAGE_BITS &&
	     parload__h5_le(b + 8, sl) == n && n > 0;
	if (ok && !parload__h5_undefined(parload__h5_le(b + 8 + sl, so), so))
		ok = fa_block(w, a, parload__h5_le(b + 8 + sl, so), n, b[7]);
	parload__sys_free(b);
	return ok;
}

/* ---- extensible array ---- */

/* An extensible array's header fields, and where the walk is. */
typedef struct ea {
	uint64_t hdr;        /* the header's address */
	unsigned max_bits, page_bits, aos; /* aos: bytes of a block offset */
	uint64_t ib_elmts, min_elmts, min_ptrs;
	uint64_t set;        /* entries set (max_idx_set): those walked */
	unsigned nsblks;     /* super blocks the array may have */
	unsigned ib_sblks;   /* of them, those whose data blocks the index
			      * block holds */
} ea;

static unsigned log2_64(uint64_t n)
{
	unsigned r = 0;

	while (n >>= 1)
		r++;
	return r;
}

/* Super block u: its data blocks, their entries, and where its first
 * entry is among those past the index block's. */
static uint64_t sb_ndblks(unsigned u)
{
	return (uint64_t)1 << (u / 2);
}

static uint64_t sb_nelmts(const ea *a, unsigned u)
{
	return ((uint64_t)1 << ((u + 1) / 2)) * a->min_elmts;
}

static uint64_t sb_start(const ea *a, unsigned u)
{
	uint64_t start = 0;

	for (unsigned k = 0; k < u; k++)
		start += sb_ndblks(k) * sb_nelmts(a, k);
	return start;
}

/* Entries of a data block of n entries starting at off (among those
 * past the index block's) that the walk takes: those before set. */
static uint64_t wanted(const ea *a, uint64_t off, uint64_t n)
{
	const uint64_t past = a->set > a->ib_elmts ? a->set - a->ib_elmts : 0;

	return off >= past ? 0 : past - off < n ? past - off : n;
}

/* The data block at d of n entries, at offset off; its pages' init
 * bits from bit first of init (NULL: not paged). */
static bool ea_dblock(w4 *w, const ea *a, uint64_t d, uint64_t n,
		      uint64_t off, const unsigned char *init, uint64_t first)
{
	const uint64_t pn = (uint64_t)1 << a->page_bits;
	const uint64_t pages = n > pn ? n / pn : 0;
	const uint64_t pre = 6 + w->so + a->aos, want = wanted(a, off, n);
	const uint64_t idx = a->ib_elmts + off;
	unsigned char *b;
	bool ok;

	if (parload__h5_undefined(d, w->so) || want == 0)
		return true;
	if ((pages != 0) != (init != NULL))
		return false;
	b = block(w, d, pre + (pages ? 0 : n * w->esize) + 4, "EADB",
		  w->x->filtered);
	/* (Its offset in the array, which libhdf5 does not read, is not
	 * always the one it means.) */
	ok = b && owner(w, b + 6, a->hdr);
	if (ok && !pages)
		ok = entries(w, b + pre, want, idx);
	for (uint64_t p = 0; ok && pages && p * pn < want; p++)
		if (page_init(init, first + p))
			ok = page(w, d + pre + 4 + p * (pn * w->esize + 4), pn,
				  want - p * pn < pn ? want - p * pn : pn,
				  idx + p * pn);
	parload__sys_free(b);
	return ok;
}

/* Super block u at s: its data blocks' addresses (and their pages' init
 * bits), each block walked. */
static bool ea_sblock(w4 *w, const ea *a, unsigned u, uint64_t s)
{
	const uint64_t nd = sb_ndblks(u), ne = sb_nelmts(a, u);
	const uint64_t pn = (uint64_t)1 << a->page_bits;
	const uint64_t init = ne > pn ? (ne / pn + 7) / 8 : 0;
	const uint64_t pre = 6 + w->so + a->aos, start = sb_start(a, u);
	unsigned char *b;
	bool ok;

	if (parload__h5_undefined(s, w->so) || !wanted(a, start, nd * ne))
		return true;
	b = block(w, s, pre + nd * (init + w->so) + 4, "EASB",
		  w->x->filtered);
	ok = b && owner(w, b + 6, a->hdr) &&
	     parload__h5_le(b + 6 + w->so, a->aos) == start;
	for (uint64_t k = 0; ok && k < nd; k++)
		ok = ea_dblock(w, a,
			       parload__h5_le(b + pre + nd * init + k * w->so,
					      w->so),
			       ne, start + k * ne, init ? b + pre : NULL,
			       k * (ne / pn));
	parload__sys_free(b);
	return ok;
}

/* The index block at i: its entries, the data blocks of its first super
 * blocks, then the other super blocks. */
static bool ea_iblock(w4 *w, const ea *a, uint64_t i)
{
	const uint64_t nd = 2 * (a->min_ptrs - 1);
	const uint64_t ns = a->nsblks - a->ib_sblks;
	const uint64_t at = 6 + w->so + a->ib_elmts * w->esize;
	unsigned char *b = block(w, i, at + (nd + ns) * w->so + 4, "EAIB",
				 w->x->filtered);
	bool ok = b && owner(w, b + 6, a->hdr);
	uint64_t k = 0;

	if (ok)
		ok = entries(w, b + 6 + w->so,
			     a->set < a->ib_elmts ? a->set : a->ib_elmts, 0);
	for (unsigned u = 0; ok && u < a->ib_sblks; u++)
		for (uint64_t j = 0; ok && j < sb_ndblks(u); j++, k++)
			ok = k < nd &&
			     ea_dblock(w, a,
				       parload__h5_le(b + at + k * w->so,
						      w->so),
				       sb_nelmts(a, u),
				       sb_start(a, u) + j * sb_nelmts(a, u),
				       NULL, 0);
	for (unsigned u = a->ib_sblks; ok && u < a->nsblks; u++)
		ok = ea_sblock(w, a, u,
			       parload__h5_le(b + at + (nd + u - a->ib_sblks) *
							       w->so,
					      w->so));
	parload__sys_free(b);
	return ok;
}

/* The header's parameters as libhdf5 requires them (the minimums powers
 * of 2, the super blocks of the index block among those the array may
 * have), entries set no more than the dataset's grid has room for. */
static bool ea_header(const w4 *w, const unsigned char *b, ea *a)
{
	const unsigned sl = w->sl;

	a->max_bits = b[7];
	a->ib_elmts = b[8];
	a->min_elmts = b[9];
	a->min_ptrs = b[10];
	a->page_bits = b[11];
	a->set = parload__h5_le(b + 12 + 4 * sl, sl);
	if (b[6] != w->esize || a->max_bits < 1 ||
	    a->max_bits > MAX_EA_BITS || !a->ib_elmts || !a->min_elmts ||
	    a->min_elmts & (a->min_elmts - 1) ||
	    !a->min_ptrs || a->min_ptrs & (a->min_ptrs - 1) ||
	    a->page_bits < 1 || a->page_bits > MAX_PAGE_BITS ||
	    log2_64(a->min_elmts) > a->max_bits)
		return false;
	a->nsblks = 1 + a->max_bits - log2_64(a->min_elmts);
	a->ib_sblks = 2 * log2_64(a->min_ptrs);
	a->aos = (a->max_bits + 7) / 8;
	/* No entry set past the last chunk the dataset's grid may have. */
	return a->ib_sblks <= a->nsblks &&
	       a->set / w->down[0] + (a->set % w->down[0] != 0) <=
		       w->grid[w->unlim] &&
	       a->set <= (uint64_t)1 << a->max_bits;
}

static bool extensible_array(w4 *w)
{
	const unsigned so = w->so, sl = w->sl;
	ea a = { .hdr = w->x->l->addr };
	unsigned char *b;
	bool ok;

	if (parload__h5_undefined(a.hdr, so))
		return true;
	b = block(w, a.hdr, 12 + 6 * sl + so + 4, "EAHD", w->x->filtered);
	ok = b && ea_header(w, b, &a);
	if (ok && a.set &&
	    !parload__h5_undefined(parload__h5_le(b + 12 + 6 * sl, so), so))
		ok = ea_iblock(w, &a, parload__h5_le(b + 12 + 6 * sl, so));
	parload__sys_free(b);
	return ok;
}

/* ---- version 2 B-tree ---- */

typedef struct bt2 {
	uint64_t node;       /* a node's bytes */
	size_t rrec;         /* a record's */
	unsigned type;       /* 10: chunks, 11: filtered chunks */
	unsigned depth;
	uint64_t max_nrec[MAX_DEPTH + 1]; /* records a node of a depth holds */
	unsigned ptr[MAX_DEPTH + 1];      /* a child pointer's bytes there */
	unsigned nrec_size;               /* a child's count of records */
	unsigned cum_size[MAX_DEPTH + 1]; /* a subtree's */
	uint64_t nodes;      /* nodes left to visit */
	uint64_t records;    /* records met */
} bt2;

/* Bytes that hold 0 to limit. */
static unsigned enc_size(uint64_t limit)
{
	return log2_64(limit) / 8 + 1;
}

/* The sizes of the nodes of each depth, as libhdf5 computes them from
 * the header's node and record sizes. */
static bool bt2_sizes(bt2 *t, unsigned so)
{
	uint64_t cum;

	if (t->node > MAX_NODE || t->node < 10 + t->rrec ||
	    t->depth > MAX_DEPTH)
		return false;
	t->max_nrec[0] = cum = (t->node - 10) / t->rrec;
	t->nrec_size = enc_size(cum);
	t->cum_size[0] = 0;
	for (unsigned d = 1; d <= t->depth; d++) {
		const unsigned p = so + t->nrec_size + t->cum_size[d - 1];

		if (t->node < 10 + p + t->rrec + p)
			return false;
		t->ptr[d] = p;
		t->max_nrec[d] = (t->node - 10 - p) / (t->rrec + p);
		if (cum > (UINT64_MAX - t->max_nrec[d]) / (t->max_nrec[d] + 1))
			return false;
		cum = (t->max_nrec[d] + 1) * cum + t->max_nrec[d];
		t->cum_size[d] = enc_size(cum);
	}
	return true;
}

/* A record at r: the chunk's address, a filtered chunk's size and mask,
 * its scaled coordinates. */
static bool record(w4 *w, bt2 *t, const unsigned char *r)
{
	const unsigned so = w->so, at = so + (t->type == 11 ? w->csl + 4 : 0);
	uint64_t s[3];

	for (unsigned k = 0; k < w->rank; k++)
		s[k] = parload__h5_le(r + at + 8 * k, 8);
	t->records++;
	return t->type == 11 ?
		       give(w, s, parload__h5_le(r, so),
			    parload__h5_le(r + so, w->csl),
			    (uint32_t)parload__h5_le(r + so + w->csl, 4)) :
		       give(w, s, parload__h5_le(r, so), w->bytes, 0);
}

/* The node at addr of nrec records and the depth its parent says: a
 * leaf's records, or an internal node's children and records in turn
 * (which is their coordinates' order). */
static bool bt2_node(w4 *w, bt2 *t, uint64_t addr, uint64_t nrec,
		     unsigned depth)
{
	const size_t recs = 6 + nrec * t->rrec;
	unsigned char *b;
	bool ok;

	if (t->nodes == 0 || nrec > t->max_nrec[depth] ||
	    !parload__h5_in_file(w->f, addr, t->node))
		return false;
	t->nodes--;
	b = block(w, addr, recs + (depth ? (nrec + 1) * t->ptr[depth] : 0) + 4,
		  depth ? "BTIN" : "BTLF", t->type);
	ok = b != NULL;
	for (uint64_t i = 0; ok && i <= nrec; i++) {
		const unsigned char *p = b + recs + i * t->ptr[depth];

		if (depth)
			ok = bt2_node(w, t, parload__h5_le(p, w->so),
				      parload__h5_le(p + w->so, t->nrec_size),
				      depth - 1);
		if (ok && i < nrec)
			ok = record(w, t, b + 6 + i * t->rrec);
	}
	parload__sys_free(b);
	return ok;
}

static bool btree2(w4 *w)
{
	const unsigned so = w->so, sl = w->sl;
	const uint64_t a = w->x->l->addr;
	bt2 t = { .type = w->x->filtered ? 11 : 10 };
	unsigned char *b;
	uint64_t total = 0;
	bool ok;

	if (parload__h5_undefined(a, so))
		return true;
	b = block(w, a, 16 + so + 2 + sl + 4, "BTHD", t.type);
	if (b) {
		t.node = parload__h5_le(b + 6, 4);
		t.rrec = (size_t)parload__h5_le(b + 10, 2);
		t.depth = (unsigned)parload__h5_le(b + 12, 2);
		total = parload__h5_le(b + 18 + so, sl);
	}
	/* Each record lies in the file. */
	ok = b &&
	     t.rrec == so + 8 * w->rank + (t.type == 11 ? w->csl + 4 : 0) &&
	     bt2_sizes(&t, so) && total <= w->most &&
	     total <= w->f->size / t.rrec;
	t.nodes = 2 * total + MAX_DEPTH + 1;
	if (ok && !parload__h5_undefined(parload__h5_le(b + 16, so), so))
		ok = bt2_node(w, &t, parload__h5_le(b + 16, so),
			      parload__h5_le(b + 16 + so, 2), t.depth);
	parload__sys_free(b);
	return ok && t.records == total;
}

/* ---- the walk ---- */

/* The index's order of dimensions: the unlimited one first where an
 * extensible array swizzles them, else as they are; its steps. */
static bool steps(w4 *w)
{
	unsigned order[3], n = 0;

	if (w->unlim > 0)
		order[n++] = (unsigned)w->unlim;
	for (unsigned k = 0; k < w->rank; k++)
		if ((int)k != w->unlim || w->unlim <= 0)
			order[n++] = k;
	w->down[w->rank - 1] = 1;
	for (int k = (int)w->rank - 2; k >= 0; k--) {
		const uint64_t c = w->maxc[order[k + 1]];

		if (!c || w->down[k + 1] > UINT64_MAX / c)
			return false;
		w->down[k] = w->down[k + 1] * c;
	}
	return true;
}

/* The dataset's grid and maximum against the layout: its chunk the
 * dataset's, the unlimited dimensions the index allows. */
static bool grid(w4 *w)
{
	const parload__h5where *d = w->x->w;
	const unsigned idx = w->x->l->index;
	unsigned unlimited = 0;

	w->most = 1;
	w->unlim = -1;
	for (unsigned k = 0; k < w->rank; k++) {
		const uint64_t m = w->x->maxdims[k], c = d->chunk[k];

		if (!c || m < d->dims[k])
			return false;
		w->grid[k] = d->dims[k] / c + (d->dims[k] % c != 0);
		w->maxc[k] = m == UINT64_MAX ? 0 : m / c + (m % c != 0);
		if (m == UINT64_MAX && unlimited++ == 0)
			w->unlim = (int)k;
		if (w->grid[k] && w->most > UINT64_MAX / w->grid[k])
			return false;
		w->most *= w->grid[k];
	}
	if (idx == PARLOAD__H5_EARRAY ? unlimited != 1 :
	    idx != PARLOAD__H5_BTREE2 && unlimited)
		return false;
	if (idx != PARLOAD__H5_EARRAY)
		w->unlim = -1;
	return idx == PARLOAD__H5_BTREE2 || steps(w);
}

/* The chunk's bytes from the layout (its shape the dataset's, its last
 * dimension the element's size), entries' widths. */
static bool setup(w4 *w)
{
	const parload__h5layout4 *l = w->x->l;
	const parload__h5where *d = w->x->w;

	w->bytes = 1;
	if (l->dims != w->rank + 1 || l->flags & 1 ||
	    l->chunk[w->rank] != d->elem)
		return false;
	for (unsigned k = 0; k < l->dims; k++) {
		if ((k < w->rank && l->chunk[k] != d->chunk[k]) ||
		    !l->chunk[k] || w->bytes > UINT64_MAX / l->chunk[k])
			return false;
		w->bytes *= l->chunk[k];
	}
	w->csl = 1 + (log2_64(w->bytes) + 8) / 8;
	if (w->csl > 8)
		w->csl = 8;
	w->esize = w->so + (w->x->filtered ? w->csl + 4 : 0);
	return grid(w);
}

static bool walk(w4 *w)
{
	switch (w->x->l->index) {
	case PARLOAD__H5_SINGLE:
		return single(w);
	case PARLOAD__H5_IMPLICIT:
		return implicit(w);
	case PARLOAD__H5_FARRAY:
		return fixed_array(w);
	case PARLOAD__H5_EARRAY:
		return extensible_array(w);
	default:
		return btree2(w);
	}
}

/* The chunks kept (a swizzled extensible array's), sorted, to put. */
static bool put_kept(w4 *w)
{
	qsort(w->keep, (size_t)w->got, sizeof(w->keep[0]), chunk_cmp);
	for (uint64_t i = 0; i < w->got; i++)
		if ((w->rc = w->x->put(w->x->ctx, &w->keep[i])) != 0)
			return false;
	return true;
}

int parload__h5index4_walk(const parload__h5ix *x)
{
	w4 w = { .x = x, .f = x->f, .rank = (unsigned)x->w->rank,
		 .so = x->f->so, .sl = x->f->sl };
	bool ok;

	if (w.rank < 1 || w.rank > 3 || !setup(&w))
		return FALL_BACK;
	if (w.unlim > 0) {
		/* Each chunk kept has an entry of its own in the file. */
		if (w.most > x->f->size / w.esize)
			w.most = x->f->size / w.esize;
		if (w.most &&
		    !(w.keep = parload__sys_calloc((size_t)w.most,
						   sizeof(*w.keep))))
			return FALL_BACK;
	}
	ok = walk(&w) && (!w.keep || put_kept(&w));
	parload__sys_free(w.keep);
	return ok ? 0 : w.rc ? w.rc : FALL_BACK;
}
