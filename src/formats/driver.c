/*
 * driver.c - the table of format drivers (driver.h) and the one place
 * that says which of them reads a source, or writes a file: first bytes,
 * then names, case-insensitively.  Also the rows of the formats the
 * engine reads as they are given: parload's own stream (format.c,
 * source.c), a raw layout or a list of files (source.c).  Every other
 * format's row lives with its reader: nrrd/nrrd.c, tiff/tiff.c,
 * hdf5/hdf5_core.c, npy.c, png.c (written only).
 */
#include "formats/formats.h"
#include "formats/zarr/zarr.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the table ---- */

/* Rows with a signature come first; nrrd before nhdr: a NRRD header
 * under neither name is read as the attached form names it. */
static const parload__driver *const table[] = {
	&parload__driver_parload, &parload__driver_nrrd,
	&parload__driver_nhdr,	  &parload__driver_tiff,
	&parload__driver_hdf5,	  &parload__driver_npy,
	&parload__driver_png,	  &parload__driver_zarr,
	&parload__driver_raw,	  &parload__driver_list,
};
#define N_TABLE (sizeof(table) / sizeof(table[0]))
#define MAX_EXTRA 4

static const parload__driver *extra[MAX_EXTRA];
static size_t n_extra;

int parload__driver_register(const parload__driver *d)
{
	if (n_extra == MAX_EXTRA)
		return PARLOAD_EINVAL;
	extra[n_extra++] = d;
	return 0;
}

/* Row i of the table and the registered ones; NULL past the last. */
static const parload__driver *row(size_t i)
{
	if (i < N_TABLE)
		return table[i];
	return i - N_TABLE < n_extra ? extra[i - N_TABLE] : NULL;
}

/* ---- names ---- */

static bool has_name(const parload__driver *d, const char *path)
{
	return parload__name_ends(path, d->exts);
}

const parload__driver *parload__driver_named(const char *path)
{
	const parload__driver *d;

	for (size_t i = 0; (d = row(i)) != NULL; i++)
		if (has_name(d, path))
			return d;
	return NULL;
}

const parload__driver *parload__driver_saving(parload_save_format f)
{
	const parload__driver *d;

	for (size_t i = 0; f != PARLOAD_SAVE_AUTO && (d = row(i)); i++)
		if (d->save == f && d->write)
			return d;
	return NULL;
}

/* "FILE.h5:/name": the part before ":/" is an HDF5 file's name. */
static bool hdf5_with_dataset(const char *s)
{
	const char *colon = strstr(s, ":/");
	char head[4096];
	size_t n;

	if (!colon || (n = (size_t)(colon - s)) >= sizeof(head))
		return false;
	memcpy(head, s, n);
	head[n] = '\0';
	return has_name(&parload__driver_hdf5, head);
}

/* A directory holding at least one TIFF by its name: a folder of TIFFs. */
static bool tiff_folder(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.' &&
			has_name(&parload__driver_tiff, e->d_name);
	if (d)
		closedir(d);
	return found;
}

/* ---- first bytes ---- */

#define SNIFF 16

/* The first bytes of the regular file path (*n of them, fewer for a
 * shorter file).  A file that cannot be opened or read fails here as its
 * load would. */
static int sniff(const char *path, unsigned char *b, size_t *n,
		 parload_error *err)
{
	FILE *f;
	size_t got;
	int e = 0;

	*n = 0;
	do
		f = parload__sys_fopen(path, "rb");
	while (!f && errno == EINTR);
	if (!f)
		return parload__fail_open(err, errno, path);
	/* A signal may cut a read short: go on from where it stopped. */
	do {
		got = parload__sys_fread(b + *n, 1, SNIFF - *n, f);
		*n += got;
		e = errno;
		if (got == 0 && parload__sys_ferror(f) && e == EINTR)
			parload__sys_clearerr(f);
		else if (got == 0)
			break;
	} while (*n < SNIFF);
	if (*n < SNIFF && parload__sys_ferror(f)) {
		parload__sys_fclose(f);
		return parload__fail(err, PARLOAD_EIO, e, path, PARLOAD_NONE,
				     *n, "cannot read file");
	}
	parload__sys_fclose(f);
	return 0;
}

/* The row b says path is: the first whose magic matches, or of those
 * that match, the one path names; NULL for none. */
static const parload__driver *by_content(const unsigned char *b, size_t n,
					 const char *path)
{
	const parload__driver *d, *first = NULL;

	for (size_t i = 0; (d = row(i)) != NULL; i++) {
		if (!d->magic || !d->magic(b, n))
			continue;
		if (has_name(d, path))
			return d;
		if (!first)
			first = d;
	}
	return first;
}

/* A regular file: its bytes, then its name, then parload's own. */
static int by_file(const char *path, const parload__driver **out,
		   parload_error *err)
{
	unsigned char b[SNIFF];
	size_t n;
	int rc = sniff(path, b, &n, err);

	if (rc)
		return rc;
	*out = by_content(b, n, path);
	if (!*out)
		*out = parload__driver_named(path);
	return 0;
}

/* What a path is: by what lies there (a regular file's bytes, a folder
 * of TIFFs), else by its name; parload's own when nothing says. */
static int by_path(const char *p, const parload__driver **out,
		   parload_error *err)
{
	struct stat st;
	int rc = 0;

	*out = NULL;
	/* stat is best effort: the name says, and the load's own open says
	 * what is wrong. */
	if (parload__sys_stat(p, &st) != 0) {
		if (parload__zarr_is(p))
			*out = &parload__driver_zarr;
		else if (hdf5_with_dataset(p))
			*out = &parload__driver_hdf5;
		else if (strpbrk(p, "*?[")) /* a glob the shell left */
			*out = has_name(&parload__driver_hdf5, p) ?
				       &parload__driver_hdf5 :
				       &parload__driver_tiff;
		else
			*out = parload__driver_named(p);
	} else if (S_ISDIR(st.st_mode)) {
		if (parload__zarr_is(p))
			*out = &parload__driver_zarr;
		else if (tiff_folder(p))
			*out = &parload__driver_tiff;
	} else if (S_ISREG(st.st_mode)) {
		rc = by_file(p, out, err);
	} else {
		*out = parload__driver_named(p);
	}
	if (!*out)
		*out = &parload__driver_parload;
	return rc;
}

/* File i of a list: the first by its bytes, else by its name. */
static int list_file(const parload_source *src, size_t i,
		     const parload__driver **d, parload_error *err)
{
	const char *p = src->paths[i];
	struct stat st;

	*d = NULL;
	if (!p)
		return 0;
	if (i == 0 && parload__sys_stat(p, &st) == 0 && S_ISREG(st.st_mode))
		return by_file(p, d, err);
	*d = hdf5_with_dataset(p) ? &parload__driver_hdf5 :
				    parload__driver_named(p);
	return 0;
}

/* A list: TIFFs or HDF5 files (the first file's bytes or name say) are
 * one source; a file of a format read one file at a time is the source
 * alone, and in a list of several not read yet; else the files are one
 * raw stream. */
static int by_list(const parload_source *src, const parload__driver **out,
		   parload_error *err)
{
	const parload__driver *d;
	int rc;

	*out = &parload__driver_list;
	for (size_t i = 0; i < src->path_count; i++) {
		if ((rc = list_file(src, i, &d, err)) != 0)
			return rc;
		if ((d == &parload__driver_tiff || d == &parload__driver_hdf5)
		    && i == 0) {
			*out = d;
			return 0;
		}
		if (d == &parload__driver_tiff || !d || !d->describe)
			continue;
		if (src->path_count > 1)
			return parload__fail_path(
				err, PARLOAD_ENOTSUP, 0, src->paths[i],
				"a list of %s files is not read yet (as one "
				"stream of views): load each file alone",
				d->title);
		*out = d;
	}
	return 0;
}

int parload__driver_find(const parload_source *src,
			 const parload__driver **out, parload_error *err)
{
	if (src->path_count)
		return src->desc ? (*out = &parload__driver_list, 0) :
				   by_list(src, out, err);
	if (src->desc) {
		*out = &parload__driver_raw;
		return 0;
	}
	if (src->fd >= 0 || !src->path) {
		*out = &parload__driver_parload;
		return 0;
	}
	if (src->dataset || src->frames != PARLOAD_FRAMES_PROJECTIONS) {
		*out = src->dataset && parload__zarr_is(src->path) ?
			       &parload__driver_zarr :
			       &parload__driver_hdf5;
		return 0;
	}
	return by_path(src->path, out, err);
}

/* ---- describing ---- */

/* The codecs a table's strips need: bits 1u << PARLOAD__CODEC_*. */
static unsigned strip_codecs(const parload__strips *t)
{
	unsigned bits = t->decoder ? 1u << PARLOAD__CODEC_CUSTOM :
				     1u << PARLOAD__CODEC_NONE;

	for (uint32_t k = 0; k < t->nfilters && k < PARLOAD__MAX_FILTERS; k++)
		bits |= 1u << t->filter[k].codec;
	return bits;
}

int parload__driver_describe(const parload__driver *d,
			     const parload_source *src,
			     parload__described **out, parload_error *err)
{
	parload__described *x;
	int rc;

	*out = NULL;
	if (!d->describe)
		return 0;
	x = parload__sys_calloc(1, sizeof(*x));
	if (!x)
		return parload__fail_nomem(err, parload__source_path(src));
	rc = d->describe(src, x, err);
	if (rc == 0 && x->strips && d->codecs &&
	    (strip_codecs(&x->got.strips) & ~d->codecs))
		rc = parload__fail_path(err, PARLOAD_ECONTAINER, 0,
					x->got.n ? x->got.paths[0] : NULL,
					"its strips need a codec the %s driver "
					"does not declare", d->title);
	if (rc) {
		parload__driver_drop(d, x);
		return rc;
	}
	*out = x;
	return 0;
}

void parload__driver_drop(const parload__driver *d, parload__described *x)
{
	if (!x)
		return;
	if (d && d->drop)
		d->drop(x);
	else
		parload__container_free(&x->got);
	parload__sys_free(x);
}

/* ---- parload_save: the row of the format asked or named writes ---- */

static int check_stack(const char *path, const parload_stack *st,
		       parload_error *err)
{
	if (!st || (!st->pixels && st->n && st->rows && st->cols))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "nothing to save");
	if (parload_pixel_size(st->pixel_type) == 0)
		return parload__fail_path(err, PARLOAD_EPIXTYPE, 0, path,
					  "unknown pixel type %d",
					  st->pixel_type);
	if (st->n == 0 || st->rows == 0 || st->cols == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "an empty stack (%" PRIu64 " pages "
					  "of %u x %u) cannot be saved",
					  st->n, st->cols, st->rows);
	if (st->layout != PARLOAD_LAYOUT_VIEWS &&
	    st->layout != PARLOAD_LAYOUT_SINOGRAMS)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "unknown layout %d", (int)st->layout);
	return 0;
}

/* "which format?": the extensions of the formats parload_save writes. */
static int which_format(const char *path, parload_error *err)
{
	char names[256] = "";
	size_t n = 0;
	const parload__driver *d;

	for (int f = PARLOAD_SAVE_AUTO + 1;
	     (d = parload__driver_saving((parload_save_format)f)); f++)
		for (const char *const *e = d->exts; e && *e; e++)
			n += (size_t)snprintf(names + n, sizeof(names) - n,
					      "%s%s", n ? " " : "", *e);
	return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
				  "which format? (an extension: %s)", names);
}

/* ---- the options of a format ---- */

/* Each compression's levels: lowest, highest, default. */
static const struct level {
	int lo, hi, dflt;
} levels[] = {
	[PARLOAD_COMPRESS_ZSTD] = { 1, 22, 3 },
	[PARLOAD_COMPRESS_BLOSC] = { 1, 9, 5 },
	[PARLOAD_COMPRESS_GZIP] = { 1, 9, 4 },
};
#define N_LEVELS ((int)(sizeof(levels) / sizeof(levels[0])))

static int bad_compress(const char *spec, parload_error *err)
{
	return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
				  "unknown compression '%s' (zstd, blosc or "
				  "gzip, or NAME=LEVEL: zstd 1 to 22, blosc "
				  "and gzip 1 to 9)", spec ? spec : "");
}

int parload_save_compress(parload_save_options *o, const char *spec,
			  parload_error *err)
{
	const char *eq = spec ? strchr(spec, '=') : NULL;
	char name[16], *end;
	size_t n = eq ? (size_t)(eq - spec) : spec ? strlen(spec) : 0;
	int c;
	long lv = 0;

	if (!o || !spec || n >= sizeof(name))
		return bad_compress(spec, err);
	memcpy(name, spec, n);
	name[n] = '\0';
	c = parload_name_parse(PARLOAD_NAMES_COMPRESS, name, NULL);
	if (c < 0 || (eq && c == PARLOAD_COMPRESS_NONE))
		return bad_compress(spec, err);
	if (eq) {
		errno = 0;
		lv = strtol(eq + 1, &end, 10);
		if (!isdigit((unsigned char)eq[1]) || *end || errno ||
		    lv < levels[c].lo || lv > levels[c].hi)
			return bad_compress(spec, err);
	}
	o->compress = c;
	o->level = (int)lv;
	return 0;
}

/* o as d writes it, into *fit: the compression and its level (0: the
 * codec's default; HDF5's gzip field, which Zarr takes too), refused
 * where d has none or another; Zarr's fields refused for other formats. */
static int options_fit(const parload__driver *d, const char *path,
		       const parload_save_options *o,
		       parload_save_options *fit, parload_error *err)
{
	const bool zarr = d->save == PARLOAD_SAVE_ZARR;
	const bool h5 = d->save == PARLOAD_SAVE_HDF5;

	*fit = *o;
	if (o->gzip && !o->compress) {
		fit->compress = PARLOAD_COMPRESS_GZIP;
		fit->level = o->gzip;
	}
	if (fit->compress < 0 || fit->compress >= N_LEVELS ||
	    (fit->compress && (fit->level < 0 ||
			       fit->level > levels[fit->compress].hi)))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "unknown compression %d, level %d",
					  fit->compress, fit->level);
	if (fit->compress && !fit->level)
		fit->level = levels[fit->compress].dflt;
	if (fit->compress && !zarr && !h5)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "compression applies to HDF5 and "
					  "Zarr output only");
	if (h5 && fit->compress && fit->compress != PARLOAD_COMPRESS_GZIP)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "HDF5 output compresses with gzip "
					  "only, not %s",
					  parload_compress_name(fit->compress));
	if (h5)
		fit->gzip = fit->compress ? fit->level : 0;
	if (!zarr && (o->chunks[0] || o->chunks[1] || o->chunks[2] ||
		      o->zarr_format || o->shard))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "chunks, zarr_format and shard apply "
					  "to Zarr output only");
	return 0;
}

/* ---- putting it in place ---- */

/* Whether path may become d's output: absent, or with force a file (d
 * writes files) or a store of d's own (d writes directories). */
static int path_free(const parload__driver *d, const char *path,
		     unsigned flags, parload_error *err)
{
	struct stat sb;

	if (parload__sys_lstat(path, &sb) != 0)
		return 0;
	if (!(flags & PARLOAD_SAVE_FORCE))
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists (replace it with force)");
	if (d->dir && !(S_ISDIR(sb.st_mode) && d->dir(path)))
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists and is not a %s store (force "
					  "replaces only one)", d->title);
	return 0;
}

/* The store tmp where none is: renamed, refusing an existing path
 * atomically where the file system can. */
static int place_new_dir(const char *tmp, const char *path,
			 parload_error *err)
{
	struct stat sb;

#ifdef HAVE_RENAMEAT2
	if (parload__sys_renameat2(AT_FDCWD, tmp, AT_FDCWD, path,
				   RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EEXIST)
		return parload__fail_path(err, PARLOAD_EWRITE, errno, path,
					  "cannot put it in place");
	if (errno != EEXIST)
#endif
		if (parload__sys_lstat(path, &sb) != 0 &&
		    parload__sys_rename(tmp, path) == 0)
			return 0;
	if (errno == EEXIST || errno == ENOTEMPTY || errno == 0 ||
	    parload__sys_lstat(path, &sb) == 0)
		return parload__fail_path(err, PARLOAD_EEXIST, 0, path,
					  "exists (replace it with force)");
	return parload__fail_path(err, PARLOAD_EWRITE, errno, path,
				  "cannot put it in place");
}

/* The store tmp in place of the store path: the old renamed aside (onto
 * an empty directory made for it), the new renamed in, the old removed;
 * the old put back where the new cannot go. */
static int replace_dir(const char *tmp, const char *path, parload_error *err)
{
	char old[PATH_MAX];
	int rc = parload_temp_create_dir(path, old, sizeof(old), err), e;

	if (rc)
		return rc;
	if (parload__sys_rename(path, old) != 0) {
		e = errno;
		(void)parload__sys_rmdir(old);
		return parload__fail_path(err, PARLOAD_EWRITE, e, path,
					  "cannot move the old store aside");
	}
	if (parload__sys_rename(tmp, path) != 0) {
		e = errno;
		(void)parload__sys_rename(old, path);
		return parload__fail_path(err, PARLOAD_EWRITE, e, path,
					  "cannot put it in place");
	}
	(void)parload__tree_remove(old);
	return 0;
}

static int place_dir(const parload__driver *d, const char *tmp,
		     const char *path, unsigned flags, parload_error *err)
{
	struct stat sb;
	int rc = path_free(d, path, flags, err);

	if (rc)
		return rc;
	if ((flags & PARLOAD_SAVE_FORCE) && parload__sys_lstat(path, &sb) == 0)
		return replace_dir(tmp, path, err);
	return place_new_dir(tmp, path, err);
}

/* d's writer to a temporary file (or directory) beside path, then put in
 * place; an existing path refused without PARLOAD_SAVE_FORCE, and also
 * with it where d writes directories and path is not one of its own. */
static int save_placed(const parload__driver *d, const char *path,
		       const parload_stack *st, const parload_save_options *o,
		       parload_error *err)
{
	char tmp[PATH_MAX];
	int rc;

	/* Refused before writing; the placing refuses it again, atomically,
	 * should path appear meanwhile. */
	rc = path_free(d, path, o->flags, err);
	if (rc == 0)
		rc = d->dir ? parload_temp_create_dir(path, tmp, sizeof(tmp),
						      err) :
			      parload_temp_create(path, tmp, sizeof(tmp), err);
	if (rc)
		return rc;
	rc = d->write(tmp, path, st, o, err);
	if (rc == 0)
		rc = d->dir ? place_dir(d, tmp, path, o->flags, err) :
			      parload_temp_place(tmp, path, o->flags, err);
	if (rc)
		(void)parload_temp_remove(tmp);
	return rc;
}

/* The row o asks for, or path's extension names. */
static const parload__driver *saving(const char *path,
				     const parload_save_options *o)
{
	return parload__driver_saving(o->format ? o->format :
					  parload_save_format_of(path));
}

int parload_save_place(const char *tmp, const char *path,
		       const parload_save_options *o, parload_error *err)
{
	parload_save_options dflt;
	const parload__driver *d;

	if (!o) {
		parload_save_options_init(&dflt);
		o = &dflt;
	}
	if (!tmp || !path || !*path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "no file to put in place");
	d = saving(path, o);
	if (d && d->dir)
		return place_dir(d, tmp, path, o->flags, err);
	return parload_temp_place(tmp, path, o->flags, err);
}

int parload_save(const char *path, const parload_stack *st,
		 const parload_save_options *o, parload_error *err)
{
	parload_save_options dflt, fit;
	const parload__driver *d;
	int rc;

	if (!o) {
		parload_save_options_init(&dflt);
		o = &dflt;
	}
	if (!path || !*path)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "parload_save: no path");
	rc = check_stack(path, st, err);
	if (rc)
		return rc;
	d = saving(path, o);
	if (!d)
		return which_format(path, err);
	rc = options_fit(d, path, o, &fit, err);
	if (rc)
		return rc;
	o = &fit;
	/* The caller's temporary file: written, and left to the caller. */
	if (o->tmp)
		return d->write(o->tmp, path, st, o, err);
	return save_placed(d, path, st, o, err);
}

/* ---- public: the table as names ---- */

parload_save_format parload_save_format_of(const char *path)
{
	const parload__driver *d = path ? parload__driver_named(path) : NULL;

	return d && d->write ? d->save : PARLOAD_SAVE_AUTO;
}

const char *parload_format_named(const char *path)
{
	const parload__driver *d = path ? parload__driver_named(path) : NULL;

	return d ? d->name : NULL;
}

/* ---- the rows of readers that live elsewhere ---- */

static bool parload_magic(const unsigned char *b, size_t n)
{
	return n >= 8 && memcmp(b, PARLOAD_MAGIC, 8) == 0;
}

/* parload's own stream: its 64-byte header, read by the load (format.c
 * checks it). */
const parload__driver parload__driver_parload = {
	.name = "parload",
	.title = "parload",
	.format = PARLOAD_FORMAT_PARLOAD,
	.magic = parload_magic,
};

/* The caller's layout over one path or descriptor. */
const parload__driver parload__driver_raw = {
	.name = "raw",
	.title = "raw",
	.format = PARLOAD_FORMAT_RAW,
};

/* Files read as one stream of the caller's layout. */
const parload__driver parload__driver_list = {
	.name = "list",
	.title = "list",
	.format = PARLOAD_FORMAT_RAW,
};
