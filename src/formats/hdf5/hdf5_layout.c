/*
 * hdf5_layout.c - where the rows of the dataset libhdf5's reader chose
 * lie (hdf5_lib.h): contiguous storage (H5Dget_offset, within the end of
 * file its superblock states), external storage (each segment's file one
 * of the container's files), chunks (the index read by hdf5_index.c
 * where libhdf5 says where the dataset is, else H5Dget_chunk_info, a
 * call per chunk) stored plainly or with deflate and shuffle; anything
 * else is read through libhdf5 by a decoder that takes the lock for each
 * strip.
 */
#include "config.h"

#include "formats/hdf5/hdf5_lib.h"

#ifdef HAVE_HDF5
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One dataset the decoder reads: stream views from view0 on. */
typedef struct h5src {
	char *file, *name;
	int rank;
	uint64_t view0;
} h5src;

typedef struct h5arg {
	h5src *src;             /* n of them, in the order of their views */
	size_t n;
	uint32_t height, width;
	size_t elem;            /* bytes per pixel */
	size_t chunk;           /* bytes of a decoded chunk, 0: not chunked */
	size_t tiles;           /* chunks across a row */
} h5arg;

/* A worker's handles, one set a dataset, each opened when first read. */
typedef struct h5state {
	struct h5open {
		hid_t f, d, type;
	} *h;
	size_t n;
} h5state;

static void arg_free(void *p)
{
	h5arg *a = p;

	for (size_t k = 0; k < a->n; k++) {
		parload__sys_free(a->src[k].file);
		parload__sys_free(a->src[k].name);
	}
	parload__sys_free(a->src);
	parload__sys_free(a);
}

static void dec_close(void *p)
{
	h5state *s = p;

	if (!s)
		return;
	h5_enter();
	for (size_t k = 0; k < s->n; k++) {
		h5_close(&s->h[k].type, H5Tclose);
		h5_close(&s->h[k].d, H5Dclose);
		h5_close(&s->h[k].f, H5Fclose);
	}
	h5_leave();
	parload__sys_free(s->h);
	parload__sys_free(s);
}

/* The dataset, with a chunk cache that holds a few of its chunks: the
 * strips of a chunk's frames, asked one after another, decode it once
 * (libhdf5's default cache holds 1 MiB). */
static hid_t open_cached(hid_t f, const h5arg *a, const char *name)
{
	hid_t dapl = a->chunk ? H5Pcreate(H5P_DATASET_ACCESS) : H5P_DEFAULT;
	hid_t d;

	/* Every chunk across a row, and two: a tiled band's chunks are
	 * each decoded once for all of their frames. */
	if (a->chunk && dapl >= 0)
		(void)H5Pset_chunk_cache(dapl, 10007,
					 PARLOAD__MIN((a->tiles + 2) * a->chunk,
						      (size_t)1 << 28),
					 1.0);
	d = H5Dopen2(f, name, dapl >= 0 ? dapl : H5P_DEFAULT);
	if (a->chunk && dapl >= 0)
		H5Pclose(dapl);
	return d;
}

/* Dataset k of a open in s (held under h5_lock). */
static int src_open(const h5arg *a, h5state *s, size_t k, parload_error *err)
{
	struct h5open *o = &s->h[k];
	char why[200];

	if (o->type >= 0)
		return 0;
	o->f = H5Fopen(a->src[k].file, H5F_ACC_RDONLY, H5P_DEFAULT);
	o->d = o->f < 0 ? -1 : open_cached(o->f, a, a->src[k].name);
	o->type = o->d < 0 ? -1 : H5Dget_type(o->d);
	if (o->type >= 0)
		return 0;
	h5_why(why);
	h5_close(&o->d, H5Dclose);
	h5_close(&o->f, H5Fclose);
	return parload__fail_path(err, PARLOAD_EOPEN, 0, a->src[k].file,
				  "%s cannot be opened: %s", a->src[k].name,
				  why);
}

static int dec_open(const parload__strips *t, void **state,
		    parload_error *err)
{
	const h5arg *a = t->arg;
	h5state *s = parload__sys_calloc(1, sizeof(*s));
	int rc;

	if (!s || !(s->h = parload__sys_malloc(a->n * sizeof(*s->h)))) {
		parload__sys_free(s);
		return parload__fail_nomem(err, a->src[0].file);
	}
	s->n = a->n;
	for (size_t k = 0; k < a->n; k++)
		s->h[k] = (struct h5open){ -1, -1, -1 };
	h5_enter();
	rc = src_open(a, s, 0, err);
	h5_leave();
	*state = s;
	if (rc == 0)
		return 0;
	dec_close(s);
	*state = NULL;
	return rc;
}

/* The dataset of stream view v: the last whose first view is at or
 * before it. */
static size_t src_of(const h5arg *a, uint64_t v)
{
	size_t lo = 0, hi = a->n;

	while (hi - lo > 1) {
		const size_t mid = lo + (hi - lo) / 2;

		if (a->src[mid].view0 <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Strip i's rows through H5Dread, in the stored type (no conversion). */
static int dec_strip(void *p, const parload__strips *t, uint64_t i,
		     unsigned char *out, size_t out_len, parload_error *err)
{
	const h5arg *a = t->arg;
	h5state *s = p;
	const size_t k = src_of(a, i / t->per_view);
	const h5src *src = &a->src[k];
	const uint64_t j = i % t->per_view, r0 = j * t->rows;
	const uint64_t rows = a->height - r0 < t->rows ? a->height - r0 :
							 t->rows;
	const uint32_t page = parload__strip_of(t, i, NULL).page;
	hsize_t start[3] = { page, r0, 0 };
	hsize_t count[3] = { 1, rows, a->width };
	const hsize_t n = rows * a->width;
	hid_t fs, ms;
	herr_t ok = -1;
	char why[200] = "";

	if ((size_t)n * a->elem > out_len)
		return parload__fail(err, PARLOAD_EINVAL, 0, src->file,
				     i / t->per_view, PARLOAD_NONE,
				     "%s: a strip of %zu bytes into %zu",
				     src->name, (size_t)n * a->elem, out_len);
	h5_enter();
	if (src_open(a, s, k, err)) {
		h5_leave();
		return PARLOAD_EOPEN;
	}
	fs = H5Dget_space(s->h[k].d);
	/* In the selection's own shape: libhdf5 copies a (1, rows, width)
	 * block row by row, where a flat one costs an element at a time. */
	ms = H5Screate_simple(src->rank, src->rank == 3 ? count : count + 1,
			      NULL);
	if (fs >= 0 && ms >= 0 &&
	    H5Sselect_hyperslab(fs, H5S_SELECT_SET,
				src->rank == 3 ? start : start + 1, NULL,
				src->rank == 3 ? count : count + 1, NULL) >= 0)
		ok = H5Dread(s->h[k].d, s->h[k].type, ms, fs, H5P_DEFAULT,
			     out);
	if (ok < 0)
		h5_why(why);
	h5_close(&ms, H5Sclose);
	h5_close(&fs, H5Sclose);
	h5_leave();
	if (ok < 0)
		return parload__fail(err, PARLOAD_EIO, 0, src->file,
				     i / t->per_view, PARLOAD_NONE,
				     "%s: frame %" PRIu64 " rows %" PRIu64
				     "-%" PRIu64 " cannot be read: %s",
				     src->name, (uint64_t)page, r0,
				     r0 + rows - 1, why);
	return 0;
}

static const parload__decoder h5_decoder = {
	.name = "libhdf5",
	.open = dec_open,
	.decode = dec_strip,
	.close = dec_close,
	.free_arg = arg_free,
};

/* The serial reasons, kept for the life of the process (a table's
 * parload_stats.serial outlives it): one per distinct text. */
static const char *interned(const char *text)
{
	static char kept[32][200];
	static size_t n;
	const char *found = "HDF5 data is read through libhdf5, one thread "
			    "at a time";

	for (size_t i = 0; i < n; i++)
		if (strcmp(kept[i], text) == 0)
			return kept[i];
	if (n < sizeof(kept) / sizeof(kept[0])) {
		snprintf(kept[n], sizeof(kept[n]), "%s", text);
		found = kept[n++];
	}
	return found;
}

/* Bytes of one of the dataset's chunks, 0 when not chunked (or past
 * what a cache would hold). */
static size_t chunk_size(h5r *r, size_t elem, size_t *tiles)
{
	hsize_t cd[3] = { 1, 1, 1 };
	uint64_t n = elem;

	if (H5Pget_layout(r->dcpl) != H5D_CHUNKED ||
	    H5Pget_chunk(r->dcpl, r->rank, r->rank == 3 ? cd : cd + 1) !=
		    r->rank || cd[2] == 0)
		return 0;
	*tiles = (size_t)((r->dims[2] + cd[2] - 1) / cd[2]);
	for (int k = 0; k < 3; k++)
		if (!parload__mul_ok(n, cd[k], &n))
			return 0;
	return n <= ((uint64_t)1 << 30) ? (size_t)n : 0;
}

/* Strips of `rows` rows read through libhdf5 (held under h5_lock, so the
 * static table is safe). */
static int custom(h5r *r, uint32_t rows, const char *why)
{
	parload__strips *t = &r->c->strips;
	h5arg *a = parload__sys_calloc(1, sizeof(*a));

	if (!a || !(a->src = parload__sys_calloc(1, sizeof(*a->src))) ||
	    (a->n = 1, !(a->src->file = parload__sys_strdup(r->file))) ||
	    !(a->src->name = parload__sys_strdup(r->p.name))) {
		if (a)
			arg_free(a);
		return parload__fail_nomem(r->err, r->file);
	}
	a->src->rank = r->rank;
	a->height = (uint32_t)r->dims[1];
	a->width = (uint32_t)r->dims[2];
	a->elem = r->c->desc.bytes_per_pixel;
	a->chunk = chunk_size(r, a->elem, &a->tiles);
	t->nfilters = 0;
	t->depth = t->tiles = t->tile_cols = 0;
	t->decoder = &h5_decoder;
	t->arg = a;
	t->serial = interned(why);
	t->rows = rows;
	t->per_view = (uint32_t)((r->dims[1] + rows - 1) / rows);
	parload__strips_clear(t);
	for (uint64_t v = 0; v < r->p.n; v++)
		for (uint32_t j = 0; j < t->per_view; j++)
			if (parload__strips_add(t, v * t->per_view + j,
						&(parload__strip){
						.page = (uint32_t)r->p.frame[v] }))
				return parload__fail_nomem(r->err, r->file);
	return 0;
}

int parload__h5lib_custom_join(parload__strips *to, parload__strips *from,
			       uint64_t view0, const char *path,
			       parload_error *err)
{
	h5arg *a = to->arg, *b = from->arg;
	h5src *src;

	if (!(src = parload__sys_malloc((a->n + b->n) * sizeof(*src))))
		return parload__fail_nomem(err, path);
	memcpy(src, a->src, a->n * sizeof(*src));
	memcpy(src + a->n, b->src, b->n * sizeof(*src));
	for (size_t k = 0; k < b->n; k++)
		src[a->n + k].view0 += view0;
	parload__sys_free(a->src);
	parload__sys_free(b->src);
	a->src = src;
	a->n += b->n;
	b->src = NULL;
	b->n = 0;
	return 0;
}

/* The table's shape: its views, and strips a view. */
static void table_shape(h5r *r, uint32_t per_view)
{
	r->c->strips.views = r->p.n;
	r->c->strips.per_view = per_view;
}

/* file, one of the container's paths: its index there, added when it
 * is not yet (an external link's file, external storage's). */
int parload__h5lib_add_file(h5r *r, const char *file, uint32_t *index)
{
	parload__container *c = r->c;
	char **more;

	for (size_t k = 0; k < c->n; k++)
		if (strcmp(c->paths[k], file) == 0) {
			*index = (uint32_t)k;
			return 0;
		}
	if (c->n >= UINT32_MAX ||
	    !(more = parload__sys_malloc((c->n + 1) * sizeof(*more))))
		return parload__fail_nomem(r->err, r->file);
	memcpy(more, c->paths, c->n * sizeof(*more));
	if (!(more[c->n] = parload__sys_strdup(file))) {
		parload__sys_free(more);
		return parload__fail_nomem(r->err, r->file);
	}
	parload__sys_free(c->paths);
	c->paths = more;
	*index = (uint32_t)c->n++;
	return 0;
}

/* The file that holds the dataset's bytes: the file named, or the one an
 * external link leads to, which libhdf5 opened (its name as libhdf5
 * found it) and whose offsets H5Dget_offset and the chunk index give. */
int parload__h5lib_data_file(h5r *r)
{
	const ssize_t n = H5Fget_name(r->d, NULL, 0);
	char *name;
	int rc;

	r->df = H5Iget_file_id(r->d);
	if (n <= 0 || r->df < 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: its file is unknown "
					  "to libhdf5", r->p.name);
	if (!(name = parload__sys_malloc((size_t)n + 1)))
		return parload__fail_nomem(r->err, r->file);
	H5Fget_name(r->d, name, (size_t)n + 1);
	rc = parload__h5lib_add_file(r, name, &r->dfi);
	parload__sys_free(name);
	if (rc == 0)
		r->dfile = r->c->paths[r->dfi];
	return rc;
}

/* The offset in the file f where libhdf5's reads end: its end of
 * allocation (the end of file its superblock states, an offset in the
 * file: H5Fget_eoa counts the user block), past which H5Dread gives no
 * byte of the file (fill values for a contiguous dataset's, an error for
 * a chunk); UINT64_MAX where libhdf5 does not say. */
static uint64_t read_end(hid_t f)
{
#if H5_VERSION_GE(1, 10, 0)
	haddr_t eoa = HADDR_UNDEF;

	return H5Fget_eoa(f, &eoa) < 0 || eoa == HADDR_UNDEF ? UINT64_MAX :
							       (uint64_t)eoa;
#else
	(void)f;
	return UINT64_MAX;
#endif
}

/* Bytes at base, a view's each, in the dataset's file (every strip is
 * checked against that file's size where the files are opened:
 * source.c's fit_container). */
static int contiguous(h5r *r, uint64_t view_bytes)
{
	parload__strips *t = &r->c->strips;
	const haddr_t base = H5Dget_offset(r->d);
	struct stat sb;
	uint64_t all, end;

	table_shape(r, 1);
	if (base == HADDR_UNDEF)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: no storage allocated (the "
					  "dataset was never written)",
					  r->p.name);
	/* Every frame's bytes in the file that holds them (their sum past
	 * 64 bits too). */
	if (parload__sys_stat(r->dfile, &sb) == 0 &&
	    (!parload__mul_ok(r->dims[0], view_bytes, &all) ||
	     (uint64_t)sb.st_size < base || (uint64_t)sb.st_size - base < all))
		return parload__fail(r->err, PARLOAD_ETRUNCATED, 0, r->dfile,
				     (uint64_t)sb.st_size > base ?
					     ((uint64_t)sb.st_size - base) /
						     view_bytes :
					     0,
				     (uint64_t)sb.st_size,
				     "%s: %" PRIu64 " frames of %" PRIu64
				     " bytes at %" PRIu64 " past the file's "
				     "end", r->p.name, (uint64_t)r->dims[0],
				     view_bytes, (uint64_t)base);
	/* libhdf5 reads none of them past its end of allocation. */
	end = read_end(r->df);
	if (!parload__mul_ok(r->dims[0], view_bytes, &all) || end < base ||
	    end - base < all)
		return parload__fail(r->err, PARLOAD_ECONTAINER, 0, r->dfile,
				     PARLOAD_NONE, end,
				     "%s: %" PRIu64 " frames of %" PRIu64
				     " bytes at %" PRIu64 " past the end of "
				     "the file its superblock states",
				     r->p.name, (uint64_t)r->dims[0],
				     view_bytes, (uint64_t)base);
	return parload__h5_contiguous(t, base, view_bytes, (uint32_t)r->dims[1],
				      r->p.frame, r->p.n, r->dfi) ?
		       parload__fail_nomem(r->err, r->file) :
		       0;
}

/* One segment of external storage: bytes [at, at + len) of the dataset
 * at off of file. */
typedef struct segment {
	uint64_t at, len, off;
	uint32_t file;
} segment;

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		const uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* An external storage file's name as libhdf5 1.10 opens it: a relative
 * name after the prefix of the dataset's access list (HDF5_EXTFILE_PREFIX
 * as libhdf5 read it when it started, "${ORIGIN}" made the HDF5 file's
 * directory; H5Pset_efile_prefix), else as it is, from the current
 * directory (H5_combine_path).  into holds size bytes. */
static int segment_name(h5r *r, const char *prefix, const char *name,
			char *into, size_t size)
{
	const size_t n = strlen(prefix);

	if (name[0] == '/' || n == 0)
		snprintf(into, size, "%s", name);
	else if (snprintf(into, size, "%s%s%s", prefix,
			  prefix[n - 1] == '/' ? "" : "/", name) >= (int)size)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: an external file's "
					  "name past %zu bytes", r->p.name,
					  size - 1);
	return 0;
}

/* The dataset's segments that hold its bytes (total), each file in the
 * container's files: *segs (to free), *count. */
/* External file k of the dataset into *s: bytes [at, at + its size) of
 * the dataset's total (len 0: it holds none of them), its file one of
 * the container's files. */
static int segment_at(h5r *r, const char *prefix, int k, uint64_t at,
		      uint64_t total, segment *s)
{
	char name[4096], path[4096];
	off_t off = 0;
	hsize_t size = 0;
	struct stat sb;
	int rc;

	name[sizeof(name) - 1] = '\0';
	if (H5Pget_external(r->dcpl, (unsigned)k, sizeof(name), name, &off,
			    &size) < 0 || off < 0 || name[sizeof(name) - 1])
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: external file %d "
					  "unreadable", r->p.name, k);
	s->at = at;
	s->off = (uint64_t)off;
	s->len = PARLOAD__MIN((uint64_t)size, total - at);
	if (s->len == 0)
		return 0;
	if ((rc = segment_name(r, prefix, name, path, sizeof(path))))
		return rc;
	if (parload__sys_stat(path, &sb) != 0)
		return parload__fail_path(r->err, PARLOAD_EOPEN, errno, path,
					  "external storage of %s in %s "
					  "(\"%s\"%s)", r->p.name, r->file, name,
					  name[0] == '/' ? "" :
					  prefix[0] ? ", after libhdf5's "
					  "prefix" : ", from the current "
					  "directory, as libhdf5 finds it");
	if ((rc = parload__h5lib_add_file(r, path, &s->file)))
		return rc;
	if (s->off > UINT64_MAX - s->len)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, path,
					  "%s: external storage of %" PRIu64
					  " bytes at %" PRIu64 " past 64 bits",
					  r->p.name, s->len, s->off);
	return 0;
}

static int segments(h5r *r, uint64_t total, segment **segs, uint64_t *count)
{
	const int n = H5Pget_external_count(r->dcpl);
	hid_t dapl = H5Dget_access_plist(r->d);
	const ssize_t plen = dapl < 0 ? -1 :
					H5Pget_efile_prefix(dapl, NULL, 0);
	char *prefix = plen < 0 ? NULL : parload__sys_malloc((size_t)plen + 1);
	uint64_t at = 0;
	int rc = 0;

	*count = 0;
	*segs = n > 0 ? parload__sys_calloc((size_t)n, sizeof(**segs)) : NULL;
	if (!prefix || !*segs)
		rc = plen < 0 || n <= 0 ?
			     parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
						r->file, "%s: unreadable "
						"external storage", r->p.name) :
			     parload__fail_nomem(r->err, r->file);
	/* No prefix set: none written. */
	if (prefix)
		prefix[0] = '\0';
	if (rc == 0 && H5Pget_efile_prefix(dapl, prefix, (size_t)plen + 1) < 0)
		prefix[0] = '\0';
	for (int k = 0; rc == 0 && k < n && at < total; k++) {
		segment *s = &(*segs)[*count];

		rc = segment_at(r, prefix, k, at, total, s);
		if (rc == 0 && s->len) {
			at += s->len;
			++*count;
		}
	}
	if (rc == 0 && at < total)
		rc = parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					"%s: external storage of %" PRIu64
					" bytes for %" PRIu64, r->p.name, at,
					total);
	parload__sys_free(prefix);
	h5_close(&dapl, H5Pclose);
	return rc;
}

/* External storage (H5Pset_external): the dataset's bytes are its
 * segments' one after another, each in a file of its own; each view's
 * rows in strips of as many rows as lie in one segment wherever the
 * segments meet (when they all meet between rows; else through
 * libhdf5). */
static int external(h5r *r, uint64_t view_bytes)
{
	parload__strips *t = &r->c->strips;
	const uint64_t row = r->c->desc.row_size, height = r->dims[1];
	segment *seg;
	uint64_t n, g = height, k = 0;
	int rc = segments(r, r->dims[0] * view_bytes, &seg, &n);

	for (uint64_t i = 1; rc == 0 && g && i < n; i++)
		g = seg[i].at % row ? 0 : gcd(g, seg[i].at / row % height);
	if (rc == 0 && g == 0) {
		table_shape(r, 1);
		rc = custom(r, (uint32_t)height, "external storage whose files "
			    "meet inside a row is read through libhdf5, one "
			    "thread at a time");
	} else if (rc == 0) {
		table_shape(r, (uint32_t)(height / g));
		t->rows = (uint32_t)g;
	}
	for (uint64_t v = 0; rc == 0 && !t->decoder && v < r->p.n; v++)
		for (uint32_t j = 0; rc == 0 && j < t->per_view; j++) {
			const uint64_t at = r->p.frame[v] * view_bytes +
					    j * g * row;
			parload__strip p;

			while (at - seg[k].at >= seg[k].len)
				k++;
			p = (parload__strip){ .off = seg[k].off + at - seg[k].at,
					      .bytes = g * row,
					      .file = seg[k].file,
					      .page = (uint32_t)r->p.frame[v] };
			if (parload__strips_add(t, v * t->per_view + j, &p))
				rc = parload__fail_nomem(r->err, r->file);
		}
	parload__sys_free(seg);
	return rc;
}

/* Filter k of the pipeline as a stage parload decodes (t's filter k):
 * NULL, or why it cannot (libhdf5 reads the data); *lib: the why is the
 * library a build with the filter's row needs. */
static const char *one_filter(h5r *r, unsigned k, uint32_t elem,
			      parload__filter *f, H5Z_filter_t *id,
			      char *name, size_t cap, bool *lib)
{
	unsigned flags = 0, cd[16];
	size_t ncd = sizeof(cd) / sizeof(cd[0]);
	const parload__codec_row *row;

	name[0] = '\0';
	*id = H5Pget_filter2(r->dcpl, k, &flags, &ncd, cd, cap, name, NULL);
	f->codec = *id < 0 ? PARLOAD__CODEC_COUNT :
			     parload__codec_of_hdf5((uint32_t)*id);
	row = f->codec < PARLOAD__CODEC_COUNT ? parload__codec_get(f->codec) :
						NULL;
	*lib = row && !row->decode && row->needs;
	if (*lib)
		return row->needs;
	if (!row || !row->decode || !row->hdf5_params)
		return "parload has no decoder for it";
	return row->hdf5_params(cd, PARLOAD__MIN(ncd, sizeof(cd) /
						   sizeof(cd[0])),
				elem, f);
}

/* The filter pipeline into t's filters; *serial and why (size bytes)
 * where a filter is one parload does not decode (libhdf5 reads the
 * data); ENOTSUP when libhdf5 has no plugin for it either. */
static int pipeline(h5r *r, uint32_t elem, bool *serial, char *why,
		    size_t size)
{
	parload__strips *t = &r->c->strips;
	const int nf = H5Pget_nfilters(r->dcpl);

	*serial = nf > PARLOAD__MAX_FILTERS;
	t->nfilters = 0;
	for (int k = 0; !*serial && k < nf; k++) {
		char name[64];
		H5Z_filter_t id;
		bool lib;
		const char *no = one_filter(r, (unsigned)k, elem, &t->filter[k],
					    &id, name, sizeof(name), &lib);

		if (no && H5Zfilter_avail(id) <= 0)
			return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0,
						  r->file, "%s: HDF5 filter "
						  "%d (%s) is not available "
						  "(%s, and its plugin is not "
						  "installed)", r->p.name,
						  (int)id, name[0] ? name :
						  "unnamed", no);
		if (no)
			snprintf(why, size, "HDF5 filter %d (%s) is read "
				 "through libhdf5, one thread at a time: %s%s",
				 (int)id, name[0] ? name : "unnamed",
				 lib ? "libparload decodes it when built with " :
				       "", no);
		*serial = no != NULL;
	}
	if (!*serial)
		t->nfilters = (uint32_t)nf;
	return 0;
}

/* What libhdf5 says of where the dataset is, for the parser; false
 * when it does not say (1.12 and later name objects by tokens: those
 * fall back). */
static bool where(hid_t f, hid_t d, parload__h5where *w)
{
#if H5_VERSION_GE(1, 12, 0)
	(void)f, (void)d, (void)w;
	return false;
#else
	hid_t fcpl = H5Fget_create_plist(f), s = H5Dget_space(d);
	hid_t dcpl = H5Dget_create_plist(d), t = H5Dget_type(d);
	hsize_t ub = 0, dims[3], chunk[3];
	size_t so = 0, sl = 0;
	unsigned ik = 0;
	H5O_info_t info;
	bool ok;

	memset(w, 0, sizeof(*w));
	w->rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
	ok = fcpl >= 0 && t >= 0 && dcpl >= 0 && w->rank >= 1 &&
	     w->rank <= 3 && H5Pget_userblock(fcpl, &ub) >= 0 &&
	     H5Pget_sizes(fcpl, &so, &sl) >= 0 &&
	     H5Pget_istore_k(fcpl, &ik) >= 0 &&
	     H5Sget_simple_extent_dims(s, dims, NULL) == w->rank &&
	     H5Pget_chunk(dcpl, w->rank, chunk) == w->rank &&
	     H5Oget_info2(d, &info, H5O_INFO_BASIC) >= 0;
	if (ok) {
		*w = (parload__h5where){ .super = ub, .header = info.addr,
					 .istore_k = ik, .so = (unsigned)so,
					 .sl = (unsigned)sl, .rank = w->rank,
					 .elem = (uint32_t)H5Tget_size(t) };
		for (int k = 0; k < w->rank; k++) {
			w->dims[k] = dims[k];
			w->chunk[k] = chunk[k];
		}
	}
	h5_close(&t, H5Tclose);
	h5_close(&dcpl, H5Pclose);
	h5_close(&s, H5Sclose);
	h5_close(&fcpl, H5Pclose);
	return ok;
#endif
}

/* The chunk index of dataset name as parload's parser reads it from the
 * file, each chunk to put: 0, 1 to fall back, put's code, or a corrupt
 * key's (ECONTAINER). */
static int direct_chunks(const char *file, const char *name, hid_t f, hid_t d,
			 parload__h5put put, void *ctx, parload_error *err)
{
	parload__h5where w;
	int fd, rc;

	if (!where(f, d, &w) ||
	    (fd = parload__sys_open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	rc = parload__h5index_walk(fd, &w, put, ctx, file, name, err);
	parload__sys_close(fd);
	return rc;
}

/* The user block's size, which libhdf5 before 1.14.4 leaves out of the
 * chunks' addresses (HDF5 issue 3003); 0 from 1.14.4 on. */
static hsize_t chunk_base(hid_t f)
{
	hsize_t ub = 0;
#if !H5_VERSION_GE(1, 14, 4)
	hid_t fcpl = H5Fget_create_plist(f);

	if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0)
		ub = 0;
	h5_close(&fcpl, H5Pclose);
#else
	(void)f;
#endif
	return ub;
}

/* Whether libhdf5's reads of the chunk at `at` find a chunk of the bytes
 * its index listed there: a key listed whose place the reads look up
 * elsewhere (an element coordinate not 0: they find none, and give fill
 * values) is no chunk of the dataset's.  (H5Dget_chunk_storage_size
 * looks the chunk up as H5Dread does; H5Dget_chunk_info_by_coord of
 * 1.10.8 finds the key all the same.) */
static bool reads_find(hid_t d, const hsize_t *at, hsize_t bytes)
{
#if H5_VERSION_GE(1, 10, 2)
	hsize_t found = 0;

	return H5Dget_chunk_storage_size(d, at, &found) >= 0 && found == bytes;
#else
	(void)d, (void)at, (void)bytes;
	return true;
#endif
}

/* The chunk index through libhdf5: a call per chunk, each to put. */
static int lib_chunks(const char *file, const char *name, hid_t f, hid_t d,
		      parload__h5put put, void *ctx, parload_error *err)
{
	hid_t fs = H5Dget_space(d);
	const int rank = fs < 0 ? -1 : H5Sget_simple_extent_ndims(fs);
	const hsize_t base = chunk_base(f);
	const uint64_t end = read_end(f);
	hsize_t n = 0;
	int rc = 0;

	if (rank < 2 || rank > 3 || H5Dget_num_chunks(d, fs, &n) < 0) {
		h5_close(&fs, H5Sclose);
		return parload__fail_path(err, PARLOAD_ECONTAINER, 0, file,
					  "%s: unreadable chunk index", name);
	}
	for (hsize_t i = 0; rc == 0 && i < n; i++) {
		hsize_t at[3] = { 0, 0, 0 };
		unsigned mask = 0;
		haddr_t addr = HADDR_UNDEF;
		hsize_t bytes = 0;

		if (H5Dget_chunk_info(d, fs, i, rank == 3 ? at : at + 1, &mask,
				      &addr, &bytes) < 0 ||
		    addr == HADDR_UNDEF)
			rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0,
						file, "%s: chunk %" PRIu64
						" unreadable", name,
						(uint64_t)i);
		else if (base + addr > end || bytes > end - base - addr)
			rc = parload__fail(err, PARLOAD_ECONTAINER, 0, file,
					   PARLOAD_NONE, base + addr,
					   "%s: chunk %" PRIu64 " of %" PRIu64
					   " bytes past the end of the file "
					   "its superblock states (%" PRIu64
					   "), which libhdf5 does not read",
					   name, (uint64_t)i, (uint64_t)bytes,
					   end);
		else if (!reads_find(d, rank == 3 ? at : at + 1, bytes))
			rc = parload__fail(err, PARLOAD_ECONTAINER, 0, file,
					   PARLOAD_NONE, base + addr,
					   "%s: a corrupt chunk index: chunk %"
					   PRIu64 ", listed at (%" PRIu64 ", %"
					   PRIu64 ", %" PRIu64 "), is not what "
					   "libhdf5 reads there", name,
					   (uint64_t)i, (uint64_t)at[0],
					   (uint64_t)at[1], (uint64_t)at[2]);
		else
			rc = put(ctx, &(parload__chunk){
					      .at = { at[0], at[1], at[2] },
					      .addr = base + addr,
					      .bytes = bytes, .mask = mask });
	}
	h5_close(&fs, H5Sclose);
	return rc;
}

/* Every chunk of the dataset to p: by parload's walk of the index, else
 * by libhdf5's calls. */
static int chunk_table(h5r *r, parload__chunks *p)
{
	int rc = r->parser ? direct_chunks(r->dfile, r->p.name, r->df, r->d,
					   parload__chunks_put, p, r->err) :
			     1;

	if (rc == 1) {
		/* What the parser gave before it gave up is given again. */
		parload__chunks_reset(p);
		rc = lib_chunks(r->dfile, r->p.name, r->df, r->d,
				parload__chunks_put, p, r->err);
	}
	return rc;
}

/* Some frames read (NXtomo's image_key): each frame's view, UINT64_MAX
 * for one not read, into *view (to free); all of them: NULL. */
static int frame_views(h5r *r, uint64_t **view)
{
	*view = NULL;
	if (r->p.n == r->dims[0])
		return 0;
	if (!(*view = table(r, r->dims[0], sizeof(**view))))
		return PARLOAD_ENOMEM;
	memset(*view, 0xff, r->dims[0] * sizeof(**view));
	for (uint64_t v = 0; v < r->p.n; v++)
		(*view)[r->p.frame[v]] = v;
	return 0;
}

/* The chunks of the frames read into the table (its filters set), or
 * through libhdf5 where they are not all written, one skipped a filter
 * or a decoded chunk would be too large for a worker. */
static int chunk_strips(h5r *r, parload__chunks *p)
{
	const uint32_t rows = r->c->strips.rows;
	uint64_t *view = NULL;
	int rc;

	if ((rc = frame_views(r, &view)))
		return rc;
	p->view = view;
	rc = chunk_table(r, p);
	if (rc == 0)
		rc = parload__chunks_finish(p);
	parload__sys_free(p->got);
	p->got = NULL;
	parload__sys_free(view);
	if (rc == 1)
		rc = custom(r, rows, "HDF5 chunks that are not "
			    "all written, skipped a filter or decode to more "
			    "than a worker holds are read through libhdf5, "
			    "one thread at a time");
	return rc;
}

static int chunked(h5r *r, uint64_t elem)
{
	parload__strips *t = &r->c->strips;
	hsize_t cd[3] = { 1, 1, 1 };
	const int crank = H5Pget_chunk(r->dcpl, r->rank,
				       r->rank == 3 ? cd : cd + 1);
	char why[240] = "";
	bool serial;
	parload__chunks p = { .t = t,
				.dims = { r->dims[0], r->dims[1], r->dims[2] },
				.chunk = { cd[0], cd[1], cd[2] },
				.views = r->p.n, .elem = (uint32_t)elem,
				.file = r->dfile, .index = r->dfi,
				.name = r->p.name,
				.err = r->err };
	int rc;

	if (crank != r->rank || cd[0] == 0 || cd[1] == 0 || cd[2] == 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: unreadable chunk shape", r->p.name);
	p.chunk[0] = cd[0], p.chunk[1] = cd[1], p.chunk[2] = cd[2];
	rc = pipeline(r, (uint32_t)elem, &serial, why, sizeof(why));
	if (rc)
		return rc;
	/* Through libhdf5: strips of a chunk's rows, the view's at most. */
	t->rows = (uint32_t)(cd[1] < r->dims[1] ? cd[1] : r->dims[1]);
	table_shape(r, (uint32_t)((r->dims[1] + t->rows - 1) / t->rows));
	if (serial)
		return custom(r, t->rows, why);
	p.plain = t->nfilters == 0;
	return chunk_strips(r, &p);
}

int parload__h5lib_layout(h5r *r, const parload_desc *d)
{
	const H5D_layout_t l = H5Pget_layout(r->dcpl);

	if (l == H5D_CONTIGUOUS && H5Pget_external_count(r->dcpl) > 0)
		return external(r, d->payload_size);
	if (l == H5D_CONTIGUOUS)
		return contiguous(r, d->payload_size);
	if (l == H5D_CHUNKED)
		return chunked(r, d->bytes_per_pixel);
	if (l == H5D_VIRTUAL && r->vds_why) {
		table_shape(r, 1);
		return custom(r, (uint32_t)r->dims[1], r->vds_why);
	}
	if (l == H5D_COMPACT) {
		table_shape(r, 1);
		return custom(r, (uint32_t)r->dims[1],
			      "a compact HDF5 dataset is read through "
			      "libhdf5, one thread at a time");
	}
	return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
				  "%s: an HDF5 layout parload does not read "
				  "(virtual or unknown)", r->p.name);
}
#endif /* HAVE_HDF5 */
