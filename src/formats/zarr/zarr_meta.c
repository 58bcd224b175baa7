/*
 * zarr_meta.c - a Zarr array's metadata as parload holds it: which array
 * a source names (a store, a path in it, an OME-Zarr image's first
 * level), and what its .zarray (v2) or zarr.json (v3) says: shape,
 * chunks, data type and byte order, fill value, and the codecs as a
 * filter pipeline of the codec table's rows.  Every count is checked
 * before it sizes anything; what parload does not read is refused by
 * name.
 */
#include "formats/zarr/zarr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most bytes of metadata read. */
#define MAX_META ((uint64_t)64 << 20)

#define BAD(z, ...) \
	parload__fail_path(err, PARLOAD_ECONTAINER, 0, (z)->meta, __VA_ARGS__)
#define NOTSUP(z, ...) \
	parload__fail_path(err, PARLOAD_ENOTSUP, 0, (z)->meta, __VA_ARGS__)

/* "a/b" joined as a path (b may be ""); NULL when out of memory. */
static char *join(const char *a, const char *b)
{
	const size_t n = strlen(a) + strlen(b) + 2;
	char *s = parload__sys_malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", a, *b ? "/" : "", b);
	return s;
}

/* path's text, whole: 0, 1 where it does not exist, or a code. */
static int slurp(const char *path, char **text, size_t *n,
		 parload_error *err)
{
	parload__io_stats io = { 0 };
	struct stat st;
	int fd, rc = 0;

	*text = NULL;
	do
		fd = parload__sys_open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ?
			       1 :
			       parload__fail_open(err, errno, path);
	if (parload__sys_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0, path,
					"not a regular file");
	else if ((uint64_t)st.st_size > MAX_META)
		rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0, path,
					"%" PRIu64 " bytes of metadata (at "
					"most %" PRIu64 ")",
					(uint64_t)st.st_size, MAX_META);
	else if (!(*text = parload__sys_malloc((size_t)st.st_size + 1)))
		rc = parload__fail_nomem(err, path);
	else
		rc = parload__pread_full(fd, *text, (size_t)st.st_size, 0, 0,
					 &io, path, PARLOAD_NONE, err);
	*n = rc ? 0 : (size_t)st.st_size;
	if (rc) {
		parload__sys_free(*text);
		*text = NULL;
	}
	parload__sys_close(fd);
	return rc;
}

/* The JSON document at dir/name: 0, 1 where there is none, or a code;
 * *path the file's (owned, also for 1). */
static int read_doc(const char *dir, const char *name, char **path,
		    parload__json_doc *doc, parload_error *err)
{
	char *text = NULL;
	size_t n = 0;
	int rc;

	memset(doc, 0, sizeof(*doc));
	if (!(*path = join(dir, name)))
		return parload__fail_nomem(err, dir);
	rc = slurp(*path, &text, &n, err);
	if (rc == 0)
		rc = parload__json_parse(text, n, *path, doc, err);
	parload__sys_free(text);
	return rc;
}

/* ---- which array ---- */

/* A path inside a store: no element "..", none empty but at the ends. */
static int inner_path_ok(const char *p, const char *what, const char *store,
			 parload_error *err)
{
	for (const char *s = p; *s;) {
		const size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.')
			return parload__fail_path(err, PARLOAD_EINVAL, 0,
						  store, "%s '%s' climbs out "
						  "of the store (..)", what,
						  p);
		s += n + (s[n] == '/');
	}
	return 0;
}

/* The metadata files a Zarr node is known by, in the order a node is
 * read: v3's, then v2's array, then v2's group. */
static const char *const node_files[] = { "zarr.json", ".zarray",
					  ".zgroup" };
#define N_NODE_FILES (sizeof(node_files) / sizeof(node_files[0]))

bool parload__zarr_is(const char *path)
{
	const char *colon = strstr(path, ":/");
	char buf[4096];
	struct stat st;

	if (colon && parload__sys_stat(path, &st) != 0 &&
	    (size_t)(colon - path) < sizeof(buf)) {
		memcpy(buf, path, (size_t)(colon - path));
		buf[colon - path] = '\0';
		return parload__zarr_is(buf);
	}
	for (size_t i = 0; i < N_NODE_FILES; i++) {
		if (snprintf(buf, sizeof(buf), "%s/%s", path, node_files[i]) <
			    (int)sizeof(buf) &&
		    parload__sys_stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* The store and the array's path in it, from src. */
static int names(const parload_source *src, parload__zarr *z,
		 const char **inner, parload_error *err)
{
	const char *path = parload__source_path(src);
	const char *colon = path ? strstr(path, ":/") : NULL;
	struct stat st;

	*inner = src->dataset ? src->dataset : "";
	if (colon && parload__sys_stat(path, &st) != 0) {
		z->store = parload__sys_malloc((size_t)(colon - path) + 1);
		if (z->store) {
			memcpy(z->store, path, (size_t)(colon - path));
			z->store[colon - path] = '\0';
		}
		if (!src->dataset)
			*inner = colon + 1;
	} else {
		z->store = path ? parload__sys_strdup(path) : NULL;
	}
	if (!z->store)
		return parload__fail_nomem(err, path);
	if (parload__sys_stat(z->store, &st) != 0)
		return parload__fail_open(err, errno, z->store);
	while (**inner == '/')
		(*inner)++;
	return inner_path_ok(*inner, "the array", z->store, err);
}

static int read_doc(const char *dir, const char *name, char **path,
		    parload__json_doc *doc, parload_error *err);

/* What dir/name holds: 2 an array, 1 a group, 0 neither. */
static int node_kind(const char *dir, const char *name)
{
	char sub[4096], p[4200], *meta = NULL;
	parload__json_doc doc;
	parload_error err;
	struct stat st;
	int kind = 0;

	snprintf(sub, sizeof(sub), "%s/%s", dir, name);
	snprintf(p, sizeof(p), "%s/.zarray", sub);
	if (parload__sys_stat(p, &st) == 0)
		return 2;
	snprintf(p, sizeof(p), "%s/.zgroup", sub);
	if (parload__sys_stat(p, &st) == 0)
		return 1;
	if (read_doc(sub, "zarr.json", &meta, &doc, &err) == 0) {
		kind = parload__json_is(parload__json_get(doc.root,
							  "node_type"),
					"group") ? 1 : 2;
		parload__json_free(&doc);
	}
	parload__sys_free(meta);
	return kind;
}

/* The arrays inside group dir (their paths after prefix; depth groups
 * deep at most), for a message: "dark, scan/data" from buf + *at. */
static void arrays_in(const char *dir, const char *prefix, int depth,
		      char *buf, size_t size, size_t *at)
{
	DIR *d = depth > 0 ? opendir(dir) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)) && *at + 1 < size) {
		const int kind = e->d_name[0] == '.' ? 0 :
						       node_kind(dir, e->d_name);
		char sub[4096], name[1024];

		snprintf(name, sizeof(name), "%s%s", prefix, e->d_name);
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (kind == 2)
			*at += (size_t)snprintf(buf + *at, size - *at, "%s%s",
						*at ? ", " : "", name);
		if (kind == 1 && strlen(name) + 2 < sizeof(name)) {
			strcat(name, "/");
			arrays_in(sub, name, depth - 1, buf, size, at);
		}
	}
	if (d)
		closedir(d);
	if (*at >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/* ---- the data type, the fill value ---- */

/* A type by its v2 kind and size (u2, f4, ...) or v3 name. */
static const struct ztype {
	const char *v2, *v3;
	int pixel;
} types[] = {
	{ "u1", "uint8", PARLOAD_PIXEL_U8 },
	{ "u2", "uint16", PARLOAD_PIXEL_U16 },
	{ "i2", "int16", PARLOAD_PIXEL_I16 },
	{ "u4", "uint32", PARLOAD_PIXEL_U32 },
	{ "i4", "int32", PARLOAD_PIXEL_I32 },
	{ "f4", "float32", PARLOAD_PIXEL_F32 },
	{ "f8", "float64", PARLOAD_PIXEL_F64 },
};

/* The type named name (shown: as the metadata writes it). */
static int set_type(parload__zarr *z, const char *name, const char *shown,
		    bool v3, parload_error *err)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(v3 ? types[i].v3 : types[i].v2, name) == 0) {
			z->pixel_type = types[i].pixel;
			z->elem = parload_pixel_size(types[i].pixel);
			return 0;
		}
	return NOTSUP(z, "%s '%s' is not a type parload holds (%s)",
		      v3 ? "data_type" : "dtype", shown,
		      v3 ? "uint8 uint16 int16 uint32 int32 float32 float64" :
			   "u1 u2 i2 u4 i4 f4 f8, either byte order");
}

/* v2's dtype: a byte order (<, >, |) and a type ("<u2"). */
static int v2_dtype(parload__zarr *z, const parload__json *v,
		    parload_error *err)
{
	if (!v)
		return BAD(z, "dtype: missing");
	if (v->type != PARLOAD__JSON_STRING)
		return NOTSUP(z, "dtype: a structured type is not read");
	z->enc = v->s[0] == '>' ? PARLOAD_ENC_BE : PARLOAD_ENC_LE;
	return set_type(z, v->len == 3 && strchr("<>|", v->s[0]) ? v->s + 1 :
								  "",
			v->s, false, err);
}

/* The fill value v as one element in z->fill (null: 0). */
static int set_fill(parload__zarr *z, const parload__json *v,
		    parload_error *err)
{
	const bool flt = z->pixel_type == PARLOAD_PIXEL_F32 ||
			 z->pixel_type == PARLOAD_PIXEL_F64;
	unsigned char b[8] = { 0 };
	int64_t i = 0;
	uint64_t u = 0;
	double d = 0;

	memset(z->fill, 0, sizeof(z->fill));
	if (!v || v->type == PARLOAD__JSON_NULL)
		return 0;
	if (flt && v->type == PARLOAD__JSON_STRING)
		d = parload__json_is(v, "NaN")	     ? NAN :
		    parload__json_is(v, "Infinity")  ? INFINITY :
		    parload__json_is(v, "-Infinity") ? -INFINITY :
						       0;
	if (flt && v->type == PARLOAD__JSON_STRING && d == 0)
		return NOTSUP(z, "fill_value '%s' is not read", v->s);
	if (v->type != PARLOAD__JSON_STRING &&
	    !(flt ? parload__json_double(v, &d) :
		    parload__json_i64(v, &i) ||
			    (parload__json_u64(v, &u) && (i = (int64_t)u, 1))))
		return BAD(z, "fill_value is not a %s", flt ? "number" :
							    "whole number");
	if (z->pixel_type == PARLOAD_PIXEL_F32) {
		const float f = (float)d;

		memcpy(b, &f, 4);
	} else if (flt) {
		memcpy(b, &d, 8);
	} else {
		for (uint32_t k = 0; k < z->elem; k++)
			b[k] = (unsigned char)((uint64_t)i >> (8 * k));
	}
	/* As the chunks hold it: in the array's byte order. */
	for (uint32_t k = 0; k < z->elem; k++)
		z->fill[k] = z->enc == PARLOAD_ENC_BE ? b[z->elem - 1 - k] : b[k];
	return 0;
}

/* shape and chunks: rank numbers each, every one >= 1 (chunks) and
 * within 2^63 (shape). */
static int dims(parload__zarr *z, const parload__json *v, uint64_t *out,
		const char *key, bool chunk, parload_error *err)
{
	if (!v || v->type != PARLOAD__JSON_ARRAY)
		return BAD(z, "%s: %s", key, v ? "not a list" : "missing");
	if (v->n == 0 || v->n > PARLOAD__ZARR_MAX_RANK)
		return NOTSUP(z, "%s: %" PRIu32 " dimensions (1 to %d are "
			      "read)", key, v->n, PARLOAD__ZARR_MAX_RANK);
	if (z->rank && v->n != z->rank)
		return BAD(z, "%s: %" PRIu32 " dimensions, the shape %u", key,
			   v->n, z->rank);
	z->rank = v->n;
	for (uint32_t k = 0; k < v->n; k++)
		if (!parload__json_u64(parload__json_at(v, k), &out[k]) ||
		    out[k] > INT64_MAX || (chunk && out[k] == 0))
			return BAD(z, "%s[%" PRIu32 "] is not a %s", key, k,
				   chunk ? "size >= 1" : "size");
	return 0;
}

/* ---- codecs ---- */

/* A compressor by its numcodecs id or v3 name, as a row of the codec
 * table: the row's name and the parameter that tells its framing. */
static const struct zcodec {
	const char *zarr, *row;
	uint32_t param0;
} codecs[] = {
	{ "zstd", "zstd", 0 },	   { "blosc", "blosc", 0 },
	{ "zlib", "deflate", 0 },  { "gzip", "gzip", 0 },
	{ "lz4", "lz4", 1 },	   { "bz2", "bzip2", 0 },
	{ "crc32c", "crc32c", 0 },
};

/* One more stage of the pipeline: the compressor named name. */
static int add_codec(parload__zarr *z, const char *name, bool v3,
		     parload_error *err)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		parload__codec c;

		if (strcmp(codecs[i].zarr, name) != 0 ||
		    (v3 && (!strcmp(name, "zlib") || !strcmp(name, "lz4") ||
			    !strcmp(name, "bz2"))) ||
		    (!v3 && !strcmp(name, "crc32c")))
			continue;
		c = parload__codec_named(codecs[i].row);
		if (c == PARLOAD__CODEC_COUNT)
			break;
		if (z->nfilters == PARLOAD__MAX_FILTERS)
			return NOTSUP(z, "more than %d codecs",
				      PARLOAD__MAX_FILTERS);
		z->filter[z->nfilters++] = (parload__filter){
			.codec = c, .elem = z->elem,
			.param = { codecs[i].param0 } };
		return 0;
	}
	return NOTSUP(z, "Zarr codec '%s' is not read by parload", name);
}

/* v2: compressor (null or {"id": ...}) and filters (null or none). */
static int v2_codecs(parload__zarr *z, const parload__json *root,
		     parload_error *err)
{
	const parload__json *c = parload__json_get(root, "compressor");
	const parload__json *f = parload__json_get(root, "filters");
	const parload__json *id = parload__json_get(c, "id");

	if (!c)
		return BAD(z, "compressor: missing (null for none)");
	if (f && f->type == PARLOAD__JSON_ARRAY && f->n) {
		const parload__json *fid =
			parload__json_get(parload__json_at(f, 0), "id");

		return NOTSUP(z, "Zarr filter '%s' is not read",
			      fid && fid->type == PARLOAD__JSON_STRING ?
				      fid->s :
				      "?");
	}
	if (f && f->type != PARLOAD__JSON_NULL &&
	    f->type != PARLOAD__JSON_ARRAY)
		return BAD(z, "filters: not a list");
	if (c->type == PARLOAD__JSON_NULL)
		return 0;
	if (!id || id->type != PARLOAD__JSON_STRING)
		return BAD(z, "compressor: no id");
	return add_codec(z, id->s, false, err);
}

/* The string member key of obj, or NULL. */
static const char *str(const parload__json *obj, const char *key)
{
	const parload__json *v = parload__json_get(obj, key);

	return v && v->type == PARLOAD__JSON_STRING ? v->s : NULL;
}

static int v2_array(parload__zarr *z, const parload__json *r,
		    parload_error *err)
{
	const char *order = str(r, "order"), *sep =
		str(r, "dimension_separator");
	uint64_t fmt = 0;
	int rc;

	if (!parload__json_u64(parload__json_get(r, "zarr_format"), &fmt) ||
	    fmt != 2)
		return BAD(z, "zarr_format is not 2");
	if ((rc = dims(z, parload__json_get(r, "shape"), z->shape, "shape",
		       false, err)) ||
	    (rc = dims(z, parload__json_get(r, "chunks"), z->chunk, "chunks",
		       true, err)) ||
	    (rc = v2_dtype(z, parload__json_get(r, "dtype"), err)) ||
	    (rc = set_fill(z, parload__json_get(r, "fill_value"), err)) ||
	    (rc = v2_codecs(z, r, err)))
		return rc;
	if (order && strcmp(order, "C") != 0)
		return NOTSUP(z, "order '%s': only C order (the last "
			      "dimension fastest) is read", order);
	if (sep && strcmp(sep, ".") != 0 && strcmp(sep, "/") != 0)
		return BAD(z, "dimension_separator '%s'", sep);
	z->sep = sep ? sep[0] : '.';
	return 0;
}

/* v3 "transpose": read only where it changes nothing. */
static int v3_transpose(parload__zarr *z, const parload__json *conf,
			parload_error *err)
{
	const parload__json *o = parload__json_get(conf, "order");
	uint64_t k = 0;

	if (o && o->type == PARLOAD__JSON_STRING && parload__json_is(o, "C"))
		return 0;
	for (uint32_t i = 0; o && o->type == PARLOAD__JSON_ARRAY && i < o->n;
	     i++)
		if (!parload__json_u64(parload__json_at(o, i), &k) || k != i)
			return NOTSUP(z, "transpose order: only the identity "
				      "is read (any other moves the frames' "
				      "pixels apart)");
	return o ? 0 : BAD(z, "transpose: no order");
}

/* v3 "bytes": the byte order. */
static int v3_bytes(parload__zarr *z, const parload__json *conf,
		    parload_error *err)
{
	const char *e = str(conf, "endian");

	if (!e && z->elem > 1)
		return BAD(z, "bytes: no endian for a %" PRIu32 "-byte type",
			   z->elem);
	if (e && strcmp(e, "little") && strcmp(e, "big"))
		return BAD(z, "bytes: endian '%s'", e);
	z->enc = e && !strcmp(e, "big") ? PARLOAD_ENC_BE : PARLOAD_ENC_LE;
	return 0;
}

static int v3_codecs(parload__zarr *z, const parload__json *list,
		     bool inner, parload_error *err);

/* v3 "sharding_indexed": the inner chunks, their codecs, the index's. */
static int v3_shard(parload__zarr *z, const parload__json *conf,
		    parload_error *err)
{
	const parload__json *ic = parload__json_get(conf, "index_codecs");
	const parload__json *b = parload__json_at(ic, 0);
	const char *loc = str(conf, "index_location");
	int rc;

	z->sharded = true;
	if ((rc = dims(z, parload__json_get(conf, "chunk_shape"), z->inner,
		       "sharding_indexed chunk_shape", true, err)))
		return rc;
	for (unsigned k = 0; k < z->rank; k++)
		if (z->chunk[k] % z->inner[k])
			return BAD(z, "sharding_indexed: chunk_shape[%u] %"
				   PRIu64 " does not divide the shard's %"
				   PRIu64, k, z->inner[k], z->chunk[k]);
	if (!ic || ic->type != PARLOAD__JSON_ARRAY || ic->n < 1 || ic->n > 2 ||
	    !parload__json_is(parload__json_get(b, "name"), "bytes") ||
	    (str(parload__json_get(b, "configuration"), "endian") &&
	     strcmp(str(parload__json_get(b, "configuration"), "endian"),
		    "little")) ||
	    (ic->n == 2 && !parload__json_is(parload__json_get(
				   parload__json_at(ic, 1), "name"), "crc32c")))
		return NOTSUP(z, "sharding_indexed index_codecs: only bytes "
			      "(little-endian), then crc32c or nothing, are "
			      "read");
	z->index_crc = ic->n == 2;
	if (loc && strcmp(loc, "end") && strcmp(loc, "start"))
		return BAD(z, "sharding_indexed index_location '%s'", loc);
	z->index_first = loc && !strcmp(loc, "start");
	return v3_codecs(z, parload__json_get(conf, "codecs"), true, err);
}

/* One codec of a v3 list; *bytes: the array-to-bytes one was seen. */
static int v3_codec(parload__zarr *z, const parload__json *c, bool inner,
		    bool *bytes, parload_error *err)
{
	const char *name = str(c, "name");
	const parload__json *conf = parload__json_get(c, "configuration");

	if (!name)
		return BAD(z, "codecs: a codec without a name");
	if (!strcmp(name, "transpose") && !*bytes)
		return v3_transpose(z, conf, err);
	if (!strcmp(name, "bytes") && !*bytes)
		return *bytes = true, v3_bytes(z, conf, err);
	if (!strcmp(name, "sharding_indexed") && !*bytes && !inner)
		return *bytes = true, v3_shard(z, conf, err);
	if (!*bytes || (z->sharded && !inner))
		return NOTSUP(z, "codec '%s' at that place in the codecs is "
			      "not read", name);
	return add_codec(z, name, true, err);
}

static int v3_codecs(parload__zarr *z, const parload__json *list,
		     bool inner, parload_error *err)
{
	bool bytes = false;
	int rc = 0;

	if (!list || list->type != PARLOAD__JSON_ARRAY)
		return BAD(z, "%scodecs: %s", inner ? "sharding_indexed " : "",
			   list ? "not a list" : "missing");
	for (uint32_t i = 0; rc == 0 && i < list->n; i++)
		rc = v3_codec(z, parload__json_at(list, i), inner, &bytes, err);
	if (rc == 0 && !bytes)
		rc = BAD(z, "codecs: no bytes codec");
	return rc;
}

/* v3's chunk grid and chunk key encoding. */
static int v3_grid(parload__zarr *z, const parload__json *r,
		   parload_error *err)
{
	const parload__json *g = parload__json_get(r, "chunk_grid");
	const parload__json *k = parload__json_get(r, "chunk_key_encoding");
	const char *kn = str(k, "name");
	const char *sep = str(parload__json_get(k, "configuration"),
			      "separator");

	if (!parload__json_is(parload__json_get(g, "name"), "regular"))
		return NOTSUP(z, "chunk_grid: only the regular grid is read");
	if (!kn || (strcmp(kn, "default") && strcmp(kn, "v2")))
		return NOTSUP(z, "chunk_key_encoding '%s' is not read",
			      kn ? kn : "(none)");
	z->prefix = !strcmp(kn, "default");
	if (sep && strcmp(sep, ".") && strcmp(sep, "/"))
		return BAD(z, "chunk_key_encoding separator '%s'", sep);
	z->sep = sep ? sep[0] : z->prefix ? '/' : '.';
	return dims(z, parload__json_get(parload__json_get(g, "configuration"),
					 "chunk_shape"),
		    z->chunk, "chunk_grid chunk_shape", true, err);
}

static int v3_array(parload__zarr *z, const parload__json *r,
		    parload_error *err)
{
	const parload__json *tr = parload__json_get(r, "storage_transformers");
	const char *type = str(r, "data_type");
	uint64_t fmt = 0;
	int rc;

	if (!parload__json_u64(parload__json_get(r, "zarr_format"), &fmt) ||
	    fmt != 3 || !parload__json_is(parload__json_get(r, "node_type"),
					  "array"))
		return BAD(z, "zarr_format is not 3 or node_type not array");

	if (tr && tr->type == PARLOAD__JSON_ARRAY && tr->n)
		return NOTSUP(z, "storage_transformers are not read");
	if (!type)
		return BAD(z, "data_type: missing");
	if ((rc = dims(z, parload__json_get(r, "shape"), z->shape, "shape",
		       false, err)) ||
	    (rc = v3_grid(z, r, err)) ||
	    (rc = set_type(z, type, type, true, err)))
		return rc;
	z->enc = PARLOAD_ENC_LE;
	if ((rc = v3_codecs(z, parload__json_get(r, "codecs"), false, err)))
		return rc;
	return set_fill(z, parload__json_get(r, "fill_value"), err);
}

/* ---- attributes ---- */

/* Attribute "angles": one number per frame (the first dimension). */
static int angles(parload__zarr *z, const parload__json *attrs,
		  parload_error *err)
{
	const parload__json *a = parload__json_get(attrs, "angles");
	double d;

	if (!a || a->type != PARLOAD__JSON_ARRAY || a->n != z->shape[0] ||
	    z->rank < 3)
		return 0;
	z->angles = parload__sys_calloc(a->n ? a->n : 1, sizeof(float));
	if (!z->angles)
		return parload__fail_nomem(err, z->meta);
	z->nangles = a->n;
	for (uint32_t i = 0; i < a->n; i++) {
		if (!parload__json_double(parload__json_at(a, i), &d))
			return BAD(z, "attribute angles[%" PRIu32 "] is not "
				   "a number", i);
		z->angles[i] = (float)d;
	}
	return 0;
}

/* An OME-Zarr image's first level: multiscales[0].datasets[0].path
 * (NULL: not one). */
static const char *first_level(const parload__json *attrs)
{
	const parload__json *m = parload__json_get(attrs, "multiscales");
	const parload__json *d =
		parload__json_get(parload__json_at(m, 0), "datasets");

	return str(parload__json_at(d, 0), "path");
}

/* ---- the node a path names ---- */

typedef struct node {
	parload__json_doc doc;   /* zarr.json, .zarray or .zgroup */
	parload__json_doc attrs; /* v2's .zattrs */
	int version;
	bool group;
} node;

static void node_free(node *n)
{
	parload__json_free(&n->doc);
	parload__json_free(&n->attrs);
	memset(n, 0, sizeof(*n));
}

/* The node at z->array: 0, or a code (naming what the directory lacks). */
static int read_node(parload__zarr *z, node *n, parload_error *err)
{
	char *path = NULL;
	int rc = 1;

	memset(n, 0, sizeof(*n));
	for (size_t i = 0; rc == 1 && i < N_NODE_FILES; i++) {
		parload__sys_free(z->meta);
		z->meta = NULL;
		rc = read_doc(z->array, node_files[i], &path, &n->doc, err);
		z->meta = path;
		n->version = i == 0 ? 3 : 2;
		n->group = i == 2;
	}
	if (rc == 1)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, z->array,
					  "not a Zarr array or group (no "
					  "zarr.json, .zarray or .zgroup)");
	if (rc == 0 && n->version == 3)
		n->group = parload__json_is(parload__json_get(n->doc.root,
							      "node_type"),
					    "group");
	if (rc == 0 && n->version == 2) {
		rc = read_doc(z->array, ".zattrs", &path, &n->attrs, err);
		parload__sys_free(path);
		rc = rc == 1 ? 0 : rc;
	}
	return rc;
}

static const parload__json *attributes(const node *n)
{
	return n->version == 3 ? parload__json_get(n->doc.root, "attributes") :
				 n->attrs.root;
}

/* A group: its OME-Zarr image's first level (once), else refused. */
static int into_level(parload__zarr *z, const node *n, bool again,
		      parload_error *err)
{
	const char *level = first_level(attributes(n));
	char list[512], *dir;
	int rc;

	if (!level || again) {
		size_t at = 0;

		list[0] = '\0';
		arrays_in(z->array, "", 4, list, sizeof(list), &at);
		return parload__fail_path(err, PARLOAD_EINVAL, 0, z->array,
					  "a Zarr group: name an array in it "
					  "(dataset=, --dataset or "
					  "STORE:/PATH)%s%s", *list ?
					  "; its arrays: " : "", list);
	}
	if ((rc = inner_path_ok(level, "multiscales' level", z->meta, err)))
		return rc;
	if (!(dir = join(z->array, level)))
		return parload__fail_nomem(err, z->array);
	parload__sys_free(z->array);
	z->array = dir;
	return 0;
}

int parload__zarr_open(const parload_source *src, parload__zarr *z,
		       parload_error *err)
{
	const char *inner;
	node n = { 0 };
	int rc;

	memset(z, 0, sizeof(*z));
	rc = names(src, z, &inner, err);
	if (rc == 0 && !(z->array = join(z->store, inner)))
		rc = parload__fail_nomem(err, z->store);
	for (int i = 0; rc == 0 && i < 2; i++) {
		if ((rc = read_node(z, &n, err)) != 0 || !n.group)
			break;
		rc = into_level(z, &n, i == 1, err);
		node_free(&n);
	}
	if (rc == 0) {
		z->version = n.version;
		rc = n.version == 3 ? v3_array(z, n.doc.root, err) :
				      v2_array(z, n.doc.root, err);
	}
	if (rc == 0)
		rc = angles(z, attributes(&n), err);
	node_free(&n);
	if (rc)
		parload__zarr_free(z);
	return rc;
}

void parload__zarr_free(parload__zarr *z)
{
	parload__sys_free(z->store);
	parload__sys_free(z->array);
	parload__sys_free(z->meta);
	parload__sys_free(z->angles);
	memset(z, 0, sizeof(*z));
}
