/*
 * nrrd_write.c - a NRRD detached header (.nhdr) that describes raw files
 * in place, so that NRRD readers (teem, ITK, 3D Slicer, pynrrd) open what
 * parload loads.  The header is written to a temporary name beside it and
 * renamed into place.
 */
#include "formats/formats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The header text on its way to the temporary file. */
typedef struct out {
	int fd;
	const char *path; /* the header's path, which messages name (not
			   * its temporary file's) */
	parload_error *err;
	size_t used;
	char buf[2 * PATH_MAX];
} out;

static int flush(out *o)
{
	const char *p = o->buf;

	while (o->used) {
		ssize_t n = parload__sys_write(o->fd, p, o->used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return parload__fail_path(o->err, PARLOAD_EWRITE,
						  n < 0 ? errno : ENOSPC,
						  o->path, "cannot write");
		p += n;
		o->used -= (size_t)n;
	}
	return 0;
}

/* Append formatted text (less than the buffer, as every line is). */
static int put(out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int put(out *o, const char *fmt, ...)
{
	va_list ap;
	int n, rc = 0;

	for (int pass = 0; pass < 2; pass++) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->used, sizeof(o->buf) - o->used, fmt,
			      ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < sizeof(o->buf) - o->used) {
			o->used += (size_t)n;
			return 0;
		}
		if (pass == 0 && (rc = flush(o)) != 0)
			return rc;
	}
	return parload__fail_path(o->err, PARLOAD_EINVAL, 0, o->path,
				  "a header line is too long");
}

static const char *nrrd_type(int pixel_type)
{
	switch (pixel_type) {
	case PARLOAD_PIXEL_U8: return "uint8";
	case PARLOAD_PIXEL_U16: return "uint16";
	case PARLOAD_PIXEL_I16: return "int16";
	case PARLOAD_PIXEL_U32: return "uint32";
	case PARLOAD_PIXEL_I32: return "int32";
	case PARLOAD_PIXEL_F32: return "float";
	default: return "double";
	}
}

/* PARLOAD_ENOTSUP for path, with the reason. */
#define refuse(err, path, ...)                                               \
	parload__fail(err, PARLOAD_ENOTSUP, 0, path, PARLOAD_NONE,             \
		      PARLOAD_NONE, __VA_ARGS__)

/* What NRRD cannot say about the layout d of nfiles files. */
static int expressible(const char *path, const parload_desc *d,
		       size_t nfiles, parload_error *err)
{
	if (parload__packed_bits(d->encoding))
		return refuse(err, path, "type %s packs its pixels: a NRRD "
			      "sample is whole bytes",
			      parload_type_name(d->pixel_type, d->encoding));
	if (d->count == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "the layout's count must be given: "
					  "a NRRD header states its sizes");
	if (d->header && d->count > 1)
		return refuse(err, path, "each view has a %" PRIu64 "-byte "
			      "header: NRRD data has nothing between views",
			      d->header);
	if (d->gap && d->count > 1)
		return refuse(err, path, "a %" PRIu64 "-byte gap follows each "
			      "view: NRRD data has nothing between views",
			      d->gap);
	if (d->count % nfiles)
		return refuse(err, path, "%" PRIu64 " views do not split "
			      "evenly over %zu files: each NRRD data file "
			      "holds the same share", d->count, nfiles);
	return 0;
}

/* A file holds its share of the views: need bytes, more only if it is
 * the last (the bytes after its views are not read). */
static int check_size(const char *file, uint64_t need, bool last,
		      parload_error *err)
{
	struct stat st;
	int fd = parload__sys_open(file, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return parload__fail_open(err, errno, file);
	if (parload__sys_fstat(fd, &st) != 0)
		rc = parload__fail_path(err, PARLOAD_EIO, errno, file, NULL);
	parload__sys_close(fd);
	if (rc == 0 && (uint64_t)st.st_size < need)
		rc = parload__fail_path(err, PARLOAD_ETRUNCATED, 0, file,
					"file is %" PRIu64 " bytes, shorter "
					"than the %" PRIu64 " its share of the "
					"views ends at", (uint64_t)st.st_size,
					need);
	else if (rc == 0 && !last && (uint64_t)st.st_size != need)
		rc = refuse(err, file, "file is %" PRIu64 " bytes, more than "
			    "the %" PRIu64 " its share of the views ends at: "
			    "the files of a NRRD header hold the same number "
			    "of views", (uint64_t)st.st_size, need);
	return rc;
}

/* Every file holds d->count / nfiles views from d->offset (the last
 * view's gap may be missing). */
static int check_sizes(const parload_desc *d, const char *const *files,
		       size_t nfiles, parload_error *err)
{
	const uint64_t need = d->offset + d->count / nfiles * d->record_size -
			      d->gap;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < nfiles; i++)
		rc = check_size(files[i], need, i + 1 == nfiles, err);
	return rc;
}

/* The name of file as the header gives it: below the header's directory
 * dir (resolved), relative to it; else absolute. */
static int data_name(const char *dir, const char *file, char *buf,
		     const char **name, parload_error *err)
{
	const char *below;

	if (!realpath(file, buf))
		return parload__fail_open(err, errno, file);
	below = parload__path_below(dir, buf);
	*name = below ? below : buf;
	if (strpbrk(buf, "\n\r"))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, file,
					  "a line break in a file name: a NRRD "
					  "header names one file a line");
	return 0;
}

/* One name that reads back as itself: no blanks (which could make it a
 * pattern), and not the word LIST. */
static bool plain_name(const char *name)
{
	return !strpbrk(name, " \t") && strcmp(name, "LIST") != 0;
}

/* The fields, then the data files. */
static int write_text(out *o, const parload_desc *d, const char *dir,
		      const char *const *files, size_t nfiles)
{
	char real[PATH_MAX];
	const char *name = NULL;
	const int dim = d->count > 1 ? 3 : 2;
	int rc;

	rc = put(o, "NRRD0004\n# written by parload %s\ntype: %s\n"
		    "dimension: %d\nsizes: %" PRIu32 " %" PRIu32,
		 parload_version(), nrrd_type(d->pixel_type), dim, d->width,
		 d->height);
	if (rc == 0 && dim == 3)
		rc = put(o, " %" PRIu64, d->count);
	if (rc == 0 && d->bytes_per_pixel > 1)
		rc = put(o, "\nendian: %s",
			 d->encoding == PARLOAD_ENC_BE ? "big" : "little");
	if (rc == 0)
		rc = put(o, "\nencoding: raw\nbyte skip: %" PRIu64 "\n",
			 d->offset + (d->count == 1 ? d->header : 0));
	if (rc == 0 && nfiles == 1)
		rc = data_name(dir, files[0], real, &name, o->err);
	if (rc == 0 && nfiles == 1 && plain_name(name))
		return put(o, "data file: %s\n", name);
	/* Several files, or one whose name needs a line of its own: a LIST
	 * of files that each hold an equal share (subdim: the dimension). */
	if (rc == 0)
		rc = put(o, "data file: LIST %d\n", dim);
	for (size_t i = 0; rc == 0 && i < nfiles; i++) {
		rc = data_name(dir, files[i], real, &name, o->err);
		if (rc == 0)
			rc = put(o, "%s\n", name);
	}
	return rc;
}

int parload_nrrd_write(const char *nhdr_path, const parload_desc *d,
		       const char *const *files, size_t nfiles,
		       parload_error *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX] = "";
	parload_desc c;
	out *o;
	int rc;

	if (!nhdr_path || !d || !files || nfiles == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, nhdr_path,
					  "a header path, a layout and at "
					  "least one file");
	c = *d;
	if ((rc = parload_desc_check(&c, err)) != 0) {
		parload__error_prefix(err, nhdr_path);
		return rc;
	}
	if ((rc = expressible(nhdr_path, &c, nfiles, err)) != 0 ||
	    (rc = parload__dir_of(nhdr_path, dir, err)) != 0 ||
	    (rc = check_sizes(&c, files, nfiles, err)) != 0)
		return rc;
	if (!(o = parload__sys_malloc(sizeof(*o))))
		return parload__fail_nomem(err, nhdr_path);
	/* The temporary file every writer makes (tempfile.c); written
	 * through a descriptor of its own, without O_TRUNC (it is empty). */
	o->fd = -1;
	o->path = nhdr_path;
	o->err = err;
	o->used = 0;
	rc = parload_temp_create(nhdr_path, tmp, sizeof(tmp), err);
	if (rc == 0 && (o->fd = parload__sys_open(tmp, O_WRONLY |
							   O_CLOEXEC)) < 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, nhdr_path,
					"cannot write");
	if (rc == 0)
		rc = write_text(o, &c, dir, files, nfiles);
	if (rc == 0)
		rc = flush(o);
	if (o->fd >= 0 && parload__sys_close(o->fd) != 0 && rc == 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, nhdr_path,
					"cannot write");
	/* A header replaces the one there (the caller checks first, as the
	 * parload command does). */
	if (rc == 0)
		rc = parload_temp_place(tmp, nhdr_path, PARLOAD_SAVE_FORCE, err);
	if (rc && tmp[0]) /* "" when parload_temp_create failed */
		(void)unlink(tmp);
	parload__sys_free(o);
	return rc;
}
