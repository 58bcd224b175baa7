/*
 * hdf5_parts.c - a stream of several HDF5 datasets read as one table
 * (hdf5_lib.h): a master file's datasets (the links data_000001,
 * data_000002, ... of its /entry/data, as DECTRIS's NXmx files hold
 * them), a virtual dataset's sources where each maps whole frames onto
 * consecutive frames of it.  Each part is checked against the first
 * (type, rows, columns), laid out alone (hdf5_layout.c) and its table
 * appended after the parts before it; a virtual dataset mapped any other
 * way is read through libhdf5 (the decoder of hdf5_layout.c).
 */
#include "config.h"

#include "formats/hdf5/hdf5_lib.h"

#ifdef HAVE_HDF5
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a master file's datasets ---- */

typedef struct members {
	const char *group;
	char **name;
	size_t n, cap;
	int rc;
	parload_error *err;
	const char *file;
} members;

/* data_ and digits (at most 18): its number; 0 for another name. */
static uint64_t member_number(const char *name)
{
	uint64_t v = 0;
	size_t k = 5;

	if (strncmp(name, "data_", 5) != 0 || !name[5] || strlen(name) > 23)
		return 0;
	for (; name[k]; k++) {
		if (name[k] < '0' || name[k] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[k] - '0');
	}
	return v + 1;
}

static herr_t visit_member(hid_t g, const char *name, const H5L_info_t *li,
			   void *data)
{
	members *m = data;
	char **more;

	(void)g, (void)li;
	if (!member_number(name))
		return 0;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		if (!(more = parload__sys_malloc(m->cap * sizeof(*more)))) {
			m->rc = parload__fail_nomem(m->err, m->file);
			return -1;
		}
		if (m->n)
			memcpy(more, m->name, m->n * sizeof(*more));
		parload__sys_free(m->name);
		m->name = more;
	}
	m->name[m->n] = parload__sys_malloc(strlen(m->group) + strlen(name) +
					    2);
	if (!m->name[m->n]) {
		m->rc = parload__fail_nomem(m->err, m->file);
		return -1;
	}
	sprintf(m->name[m->n++], "%s/%s", m->group, name);
	return 0;
}

static int by_number(const void *a, const void *b)
{
	const char *x = strrchr(*(char *const *)a, '/') + 1;
	const char *y = strrchr(*(char *const *)b, '/') + 1;
	const uint64_t u = member_number(x), v = member_number(y);

	return u < v ? -1 : u > v;
}

int parload__h5lib_members(h5r *r, const char *group, char ***names,
			   size_t *n)
{
	members m = { .group = group, .err = r->err, .file = r->file };
	H5O_info_t info;
	hid_t g;

	*names = NULL;
	*n = 0;
	if (H5Lexists(r->f, group, H5P_DEFAULT) <= 0 ||
	    H5Oget_info_by_name2(r->f, group, &info, H5O_INFO_BASIC,
				 H5P_DEFAULT) < 0 ||
	    info.type != H5O_TYPE_GROUP ||
	    (g = H5Gopen2(r->f, group, H5P_DEFAULT)) < 0)
		return 0;
	H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, visit_member, &m);
	H5Gclose(g);
	if (m.rc) {
		parload__h5_names_free(m.name, m.n);
		return m.rc;
	}
	if (m.n)
		qsort(m.name, m.n, sizeof(*m.name), by_number);
	*names = m.name;
	*n = m.n;
	return 0;
}

static int parts_alloc(h5r *r, size_t n);
static int part_set(h5r *r, size_t k, const char *file, const char *name,
		    uint64_t first, uint64_t n, bool all);

/* ---- a virtual dataset's sources ---- */

/* One mapping: the virtual dataset's frames at .. at + n - 1 are frames
 * first .. of dataset name of file (NULL: the virtual dataset's). */
typedef struct mapping {
	uint64_t at, n, first;
	bool all;               /* every frame of the source */
	char *file, *name;
} mapping;

/* Selection s, of rank dimensions, a solid box of elements (every
 * dimension bounded): its first and last element. */
static bool box(hid_t s, int rank, hsize_t *lo, hsize_t *hi)
{
	const H5S_sel_type t = H5Sget_select_type(s);
	hsize_t start[3], stride[3], count[3], block[3], all = 1;
	hssize_t n;

	if (H5Sget_simple_extent_ndims(s) != rank ||
	    (t != H5S_SEL_ALL && t != H5S_SEL_HYPERSLABS))
		return false;
	if (t == H5S_SEL_HYPERSLABS &&
	    (H5Sis_regular_hyperslab(s) <= 0 ||
	     H5Sget_regular_hyperslab(s, start, stride, count, block) < 0))
		return false;
	for (int k = 0; t == H5S_SEL_HYPERSLABS && k < rank; k++)
		if (count[k] == H5S_UNLIMITED || block[k] == H5S_UNLIMITED)
			return false;
	if (H5Sget_select_bounds(s, lo, hi) < 0 ||
	    (n = H5Sget_select_npoints(s)) <= 0)
		return false;
	for (int k = 0; k < rank; k++)
		all *= hi[k] - lo[k] + 1;
	return all == (hsize_t)n;
}

/* Mapping i's frames, whole (every row and column of the virtual
 * dataset's and of its source's): false for another selection. */
static bool whole_frames(h5r *r, size_t i, mapping *m)
{
	hid_t vs = H5Pget_virtual_vspace(r->dcpl, i);
	hid_t ss = H5Pget_virtual_srcspace(r->dcpl, i);
	/* The whole source (its extent unknown here: checked when it is
	 * opened, part_fits), or a box of it. */
	const bool all = ss >= 0 && H5Sget_select_type(ss) == H5S_SEL_ALL;
	const int rank = ss < 0 ? -1 : H5Sget_simple_extent_ndims(ss);
	hsize_t vlo[3], vhi[3], slo[3] = { 0 }, shi[3] = { 0 }, ext[3];
	bool ok = vs >= 0 && box(vs, 3, vlo, vhi) && vlo[1] == 0 &&
		  vlo[2] == 0 && vhi[1] == r->dims[1] - 1 &&
		  vhi[2] == r->dims[2] - 1;

	if (ok && !all)
		ok = (rank == 2 || rank == 3) &&
		     box(ss, rank, slo + 3 - rank, shi + 3 - rank) &&
		     H5Sget_simple_extent_dims(ss, ext + 3 - rank, NULL) ==
			     rank &&
		     slo[1] == 0 && slo[2] == 0 && shi[1] == vhi[1] &&
		     shi[2] == vhi[2] && ext[1] == r->dims[1] &&
		     ext[2] == r->dims[2] && shi[0] - slo[0] == vhi[0] - vlo[0];
	if (ok) {
		m->at = vlo[0];
		m->n = vhi[0] - vlo[0] + 1;
		m->first = slo[0];
		m->all = all;
	}
	h5_close(&vs, H5Sclose);
	h5_close(&ss, H5Sclose);
	return ok;
}

/* A text libhdf5 gives by a call of (dcpl, i, buf, size), to free. */
static char *vds_text(h5r *r, size_t i,
		      ssize_t (*get)(hid_t, size_t, char *, size_t))
{
	const ssize_t n = get(r->dcpl, i, NULL, 0);
	char *t = n < 0 ? NULL : parload__sys_malloc((size_t)n + 1);

	if (t && get(r->dcpl, i, t, (size_t)n + 1) < 0) {
		parload__sys_free(t);
		t = NULL;
	}
	return t;
}

/* dir of path then name into out (cap bytes); false if it does not fit. */
static bool beside(const char *path, const char *name, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	const int n = slash ? (int)(slash - path) + 1 : 0;

	return snprintf(out, cap, "%.*s%s", n, path, name) < (int)cap;
}

/* A source file's name as libhdf5 finds it for the virtual dataset of
 * r->file: "." that file (*out NULL); an absolute name as it is, else
 * its last part; a relative one beside that file, else from the current
 * directory.  1 where it is found elsewhere (a prefix: libhdf5 reads). */
static int source_file(h5r *r, const char *name, char **out)
{
	hid_t dapl = H5Dget_access_plist(r->d);
	const ssize_t prefix = dapl < 0 ? -1 :
					  H5Pget_virtual_prefix(dapl, NULL, 0);
	const char *rel = name[0] == '/' ? strrchr(name, '/') + 1 : name;
	char path[4096];
	struct stat sb;

	h5_close(&dapl, H5Pclose);
	*out = NULL;
	if (strcmp(name, ".") == 0)
		return 0;
	if (prefix != 0)
		return 1;
	if (name[0] == '/' && parload__sys_stat(name, &sb) == 0)
		snprintf(path, sizeof(path), "%s", name);
	else if (!beside(r->file, rel, path, sizeof(path)) ||
		 parload__sys_stat(path, &sb) != 0)
		snprintf(path, sizeof(path), "%s", rel);
	if (parload__sys_stat(path, &sb) != 0)
		return parload__fail_path(r->err, PARLOAD_EOPEN, errno, r->file,
					  "%s: its source file %s is missing "
					  "(libhdf5 would read fill values)",
					  r->p.name, name);
	*out = parload__sys_strdup(path);
	return *out ? 0 : parload__fail_nomem(r->err, r->file);
}

static int by_at(const void *a, const void *b)
{
	const mapping *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* Mapping i's source selection is unlimited (its file and dataset
 * names printf patterns, HDF5's "%b"): libhdf5's alone. */
static bool unlimited(h5r *r, size_t i)
{
	hid_t vs = H5Pget_virtual_vspace(r->dcpl, i);
	hsize_t start[3], stride[3], count[3], block[3];
	bool u = false;

	if (vs >= 0 && H5Sget_select_type(vs) == H5S_SEL_HYPERSLABS &&
	    H5Sis_regular_hyperslab(vs) > 0 &&
	    H5Sget_simple_extent_ndims(vs) == 3 &&
	    H5Sget_regular_hyperslab(vs, start, stride, count, block) >= 0)
		for (int k = 0; k < 3; k++)
			u |= count[k] == H5S_UNLIMITED ||
			     block[k] == H5S_UNLIMITED;
	h5_close(&vs, H5Sclose);
	return u;
}

/* Mapping m's source dataset is of the virtual dataset's type: libhdf5
 * converts any type into another as it reads; parload does not. */
static int source_type(h5r *r, const mapping *m)
{
	hid_t f = m->file ? H5Fopen(m->file, H5F_ACC_RDONLY, H5P_DEFAULT) :
			    r->f;
	hid_t d = f < 0 ? -1 : H5Dopen2(f, m->name, H5P_DEFAULT);
	hid_t t = d < 0 ? -1 : H5Dget_type(d);
	const htri_t same = t < 0 ? -1 : H5Tequal(t, r->type);
	char why[200];

	h5_why(why);
	h5_close(&t, H5Tclose);
	h5_close(&d, H5Dclose);
	if (m->file)
		h5_close(&f, H5Fclose);
	if (same < 0)
		return parload__fail_path(r->err, PARLOAD_EOPEN, 0, r->file,
					  "%s: its source %s:%s cannot be "
					  "opened (%s)", r->p.name,
					  m->file ? m->file : ".", m->name,
					  why[0] ? why : "no reason given");
	if (same == 0)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: its source %s:%s is of another "
					  "type (parload reads a virtual "
					  "dataset's sources of its own type)",
					  r->p.name, m->file ? m->file : ".",
					  m->name);
	return 0;
}

/* Mapping i read and its source checked: 0, 1 for one libhdf5 reads
 * (*why says why), or an error. */
static int mapping_at(h5r *r, size_t i, mapping *m, const char **why)
{
	char *file;
	int rc;

	if (unlimited(r, i)) {
		*why = "a virtual dataset of unlimited mappings is read "
		       "through libhdf5, one thread at a time";
		return 1;
	}
	if (!(file = vds_text(r, i, H5Pget_virtual_filename)) ||
	    !(m->name = vds_text(r, i, H5Pget_virtual_dsetname))) {
		parload__sys_free(file);
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: mapping %zu "
					  "unreadable", r->p.name, i);
	}
	rc = source_file(r, file, &m->file);
	parload__sys_free(file);
	/* One of the load's files, whichever reads it (confined, checked). */
	if (rc == 0 && m->file &&
	    (rc = parload__h5lib_add_file(r, m->file, &(uint32_t){ 0 })))
		return rc;
	if (rc == 1) {
		*why = "a virtual dataset whose sources libhdf5 finds after a "
		       "prefix is read through libhdf5, one thread at a time";
		return 1;
	}
	if (rc || (rc = source_type(r, m)))
		return rc;
	if (whole_frames(r, i, m))
		return 0;
	*why = "a virtual dataset whose mappings are not whole frames of its "
	       "sources is read through libhdf5, one thread at a time";
	return 1;
}

/* The mappings, in the order of their frames, tile the virtual
 * dataset's frames. */
static bool tiles(mapping *m, size_t n, uint64_t frames)
{
	uint64_t at = 0;

	qsort(m, n, sizeof(*m), by_at);
	for (size_t i = 0; i < n; i++) {
		if (m[i].at != at)
			return false;
		at += m[i].n;
	}
	return at == frames;
}

/* The mappings as parts, or why not (r->vds_why). */
static int vds_mappings(h5r *r, mapping *m, size_t n)
{
	const char *why = NULL;
	int rc = 0;

	/* Every source checked, whichever reads them. */
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		const int got = mapping_at(r, i, &m[i], &why);

		rc = got ? got : rc;
	}
	if (rc == 0 && !tiles(m, n, r->dims[0])) {
		why = "a virtual dataset whose sources leave some of its "
		      "frames unmapped, or map some twice, is read through "
		      "libhdf5, one thread at a time";
		rc = 1;
	}
	if (rc == 1)
		r->vds_why = why;
	if (rc)
		return rc;
	if ((rc = parts_alloc(r, n)))
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = part_set(r, i, m[i].file, m[i].name, m[i].first, m[i].n,
			      m[i].all);
	r->sources = rc == 0;
	return rc ? rc : 1;
}

/* A virtual dataset's parts: 1 (its sources), 0 (read through libhdf5,
 * r->vds_why), or an error. */
static int vds_parts(h5r *r)
{
	size_t n = 0;
	mapping *m;
	int rc;

	if (H5Pget_virtual_count(r->dcpl, &n) < 0 || n == 0)
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0,
					  r->file, "%s: a virtual dataset "
					  "without mappings", r->p.name);
	if (!(m = table(r, n, sizeof(*m))))
		return PARLOAD_ENOMEM;
	rc = vds_mappings(r, m, n);
	for (size_t i = 0; i < n; i++) {
		parload__sys_free(m[i].file);
		parload__sys_free(m[i].name);
	}
	parload__sys_free(m);
	return rc == 1 && r->vds_why ? 0 : rc;
}

/* ---- the parts ---- */

/* Part k's name (and file) as given, copied. */
static int part_set(h5r *r, size_t k, const char *file, const char *name,
		    uint64_t first, uint64_t n, bool all)
{
	h5part *p = &r->part[k];

	p->all = all;
	p->first = first;
	p->n = n;
	p->name = parload__sys_strdup(name);
	p->file = file ? parload__sys_strdup(file) : NULL;
	return p->name && (!file || p->file) ?
		       0 :
		       parload__fail_nomem(r->err, r->file);
}

static int parts_alloc(h5r *r, size_t n)
{
	r->part = parload__sys_calloc(n ? n : 1, sizeof(*r->part));
	if (!r->part)
		return parload__fail_nomem(r->err, r->file);
	r->parts = n;
	return 0;
}

/* The file named (part->file NULL) or the part's. */
static const char *part_file(const h5r *r, const h5part *p)
{
	return p->file ? p->file : r->c->paths[0];
}

/* Part k open in r (the one open before closed): its dataset, its data
 * file among the container's files, its shape. */
static int part_open(h5r *r, size_t k)
{
	const h5part *p = &r->part[k];
	char why[200];

	parload__h5lib_close_dataset(r);
	snprintf(r->p.name, sizeof(r->p.name), "%s", p->name);
	r->file = part_file(r, p);
	if (p->file && (r->pf = H5Fopen(p->file, H5F_ACC_RDONLY,
					 H5P_DEFAULT)) < 0)
		return parload__fail_path(r->err, PARLOAD_EOPEN, 0, p->file,
					  "a source of virtual dataset %s: "
					  "libhdf5 cannot open it (%s)",
					  r->p.name, h5_why(why));
	int rc = parload__h5lib_open_dataset(r, p->file ? r->pf : r->f);

	return rc ? rc : parload__h5lib_shape(r);
}

/* Part k (open) is of the stream's type and frame shape (rows, columns
 * of the first, rows0 x cols0), and holds its frames. */
static int part_fits(h5r *r, size_t k, const char *ref, hsize_t rows0,
		     hsize_t cols0)
{
	const h5part *p = &r->part[k];

	if (H5Tequal(r->type, r->type0) <= 0)
		return parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					  "%s: another type than %s's (one "
					  "stream is of one type)", p->name,
					  ref);
	if (r->dims[1] != rows0 || r->dims[2] != cols0)
		return parload__fail_path(r->err, PARLOAD_EINVAL, 0, r->file,
					  "%s: frames of %" PRIu64 " x %" PRIu64
					  " (rows x columns), not %" PRIu64
					  " x %" PRIu64 " as %s's", p->name,
					  (uint64_t)r->dims[1],
					  (uint64_t)r->dims[2], (uint64_t)rows0,
					  (uint64_t)cols0, ref);
	if (p->first > r->dims[0] || p->n > r->dims[0] - p->first ||
	    (p->all && p->n != r->dims[0]))
		return parload__fail_path(r->err, PARLOAD_ECONTAINER, 0, r->file,
					  "%s: frames %" PRIu64 " to %" PRIu64
					  " mapped, of its %" PRIu64, p->name,
					  p->first, p->first + p->n - 1,
					  (uint64_t)r->dims[0]);
	return 0;
}

/* The parts of the dataset chosen (open): a master file's links, a
 * virtual dataset's sources, else the one. */
static int parts_of(h5r *r)
{
	const bool vds = H5Pget_layout(r->dcpl) == H5D_VIRTUAL;
	int rc;

	if (vds && (rc = vds_parts(r)) != 0)
		return rc < 0 ? rc : 0;
	if (r->p.parts == 0 || vds) {
		if ((rc = parts_alloc(r, 1)))
			return rc;
		return part_set(r, 0, NULL, r->p.name, 0, r->dims[0], true);
	}
	if ((rc = parts_alloc(r, r->p.parts)))
		return rc;
	for (size_t k = 0; rc == 0 && k < r->p.parts; k++)
		rc = part_set(r, k, NULL, r->p.part[k], 0, UINT64_MAX, true);
	return rc;
}

int parload__h5lib_parts(h5r *r, uint64_t *all)
{
	const hsize_t rows0 = r->dims[1], cols0 = r->dims[2];
	char ref[sizeof(r->p.name)];
	int rc;

	*all = r->dims[0];
	if ((rc = parts_of(r)) || (r->parts == 1 && !r->sources))
		return rc;
	if ((r->type0 = H5Tcopy(r->type)) < 0)
		return parload__fail_nomem(r->err, r->file);
	snprintf(ref, sizeof(ref), "%s", r->p.name);
	*all = 0;
	for (size_t k = 0; rc == 0 && k < r->parts; k++) {
		h5part *p = &r->part[k];

		if ((rc = part_open(r, k)))
			break;
		if (p->n == UINT64_MAX)
			p->n = r->dims[0];
		if ((rc = part_fits(r, k, ref, rows0, cols0)))
			break;
		p->at = *all;
		*all += p->n;
	}
	r->file = r->c->paths[0];
	snprintf(r->p.name, sizeof(r->p.name), "%s", ref);
	return rc;
}

/* ---- the table ---- */

/* Part k's frames of the stream's frames read (r->p.frame, in order):
 * *v0 the view of its first, *n of them, frames[0 .. n) its own frame
 * numbers (a table of the stream's count, to fill). */
static void part_frames(const h5r *r, const h5part *p, const uint64_t *all,
			uint64_t all_n, uint64_t *v0, uint64_t *frames,
			uint64_t *n)
{
	*n = 0;
	*v0 = 0;
	for (uint64_t v = 0; v < all_n; v++) {
		if (all[v] < p->at || all[v] - p->at >= p->n)
			continue;
		if (*n == 0)
			*v0 = v;
		frames[(*n)++] = p->first + all[v] - p->at;
	}
	(void)r;
}

/* Part k's table (swapped into the container while it is laid out)
 * appended to the stream's, t, the first one laid out (part first) taken
 * as it is.  1: a virtual dataset's sources stored otherwise than one
 * another (libhdf5 reads it whole). */
static int part_table(h5r *r, size_t k, const parload_desc *d, uint64_t v0,
		      size_t first)
{
	parload__strips t = r->c->strips, mine;
	char why[200];
	const char *unlike;
	int rc;

	if (k == first)
		return parload__h5lib_layout(r, d);
	memset(&r->c->strips, 0, sizeof(r->c->strips));
	rc = parload__h5lib_layout(r, d);
	mine = r->c->strips;
	r->c->strips = t;
	unlike = rc ? NULL : parload__h5_unlike(&t, &mine, why, sizeof(why));
	if (unlike && r->sources)
		rc = 1;
	else if (unlike)
		rc = parload__fail_path(r->err, PARLOAD_ENOTSUP, 0, r->file,
					"%s: stored otherwise than %s (%s): "
					"the datasets of one stream are read "
					"as one table; load each alone",
					r->part[k].name, r->part[first].name,
					unlike);
	if (rc == 0 && parload__h5_append(&r->c->strips, &mine, v0, NULL))
		rc = parload__fail_nomem(r->err, r->file);
	if (rc == 0 && mine.decoder)
		rc = parload__h5lib_custom_join(&r->c->strips, &mine, v0,
						r->file, r->err);
	parload__sys_free(mine.run);
	if (mine.decoder && mine.arg)
		mine.decoder->free_arg(mine.arg);
	return rc;
}

/* The virtual dataset vds itself, through libhdf5: its sources are
 * stored otherwise than one another.  The table made of them dropped. */
static int vds_whole(h5r *r, const parload_desc *d, const char *vds)
{
	parload__strips *t = &r->c->strips;
	int rc;

	if (t->decoder && t->arg)
		t->decoder->free_arg(t->arg);
	t->decoder = NULL;
	t->arg = NULL;
	parload__strips_clear(t);
	r->vds_why = "a virtual dataset whose sources are stored otherwise "
		     "than one another is read through libhdf5, one thread "
		     "at a time";
	parload__h5lib_close_dataset(r);
	snprintf(r->p.name, sizeof(r->p.name), "%s", vds);
	if ((rc = parload__h5lib_open_dataset(r, r->f)) ||
	    (rc = parload__h5lib_shape(r)))
		return rc;
	return parload__h5lib_layout(r, d);
}

int parload__h5lib_parts_layout(h5r *r, const parload_desc *d)
{
	uint64_t *all = r->p.frame, all_n = r->p.n, v0, *frames;
	char vds[sizeof(r->p.name)];
	size_t first = SIZE_MAX;
	int rc = 0;

	if (r->parts == 1 && !r->sources)
		return parload__h5lib_layout(r, d);
	if (!(frames = table(r, all_n, sizeof(*frames))))
		return PARLOAD_ENOMEM;
	snprintf(vds, sizeof(vds), "%s", r->p.name);
	for (size_t k = 0; rc == 0 && k < r->parts; k++) {
		part_frames(r, &r->part[k], all, all_n, &v0, frames, &r->p.n);
		if (r->p.n == 0)
			continue;
		r->p.frame = frames;
		first = first == SIZE_MAX ? k : first;
		if ((rc = part_open(r, k)) == 0)
			rc = part_table(r, k, d, v0, first);
	}
	r->p.frame = all;
	r->p.n = all_n;
	r->file = r->c->paths[0];
	parload__sys_free(frames);
	return rc == 1 ? vds_whole(r, d, vds) : rc;
}
#endif /* HAVE_HDF5 */
