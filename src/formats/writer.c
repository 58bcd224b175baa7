/*
 * writer.c - producing valid streams from the caller's data: the API behind
 * `parload gen`.  Records go out through a buffer of the writer's own, so
 * tiny views cost one write per megabyte rather than two per view; payloads
 * larger than the buffer are written straight from the caller's memory.
 */
#include "formats/formats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRITE_BUFFER ((size_t)1 << 20)

struct parload_writer {
	int fd;
	char *path;
	parload_file_header h;
	uint64_t added;
	uint64_t offset; /* file offset of the first byte not yet written */
	size_t used;
	unsigned char buf[WRITE_BUFFER];
};

static int write_all(parload_writer *w, const void *data, size_t len,
		     parload_error *err)
{
	const unsigned char *p = data;

	while (len) {
		ssize_t n = parload__sys_write(w->fd, p,
					       PARLOAD__MIN(len,
						PARLOAD__KERNEL_MAX_READ));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return parload__fail(err, PARLOAD_EWRITE,
					     n < 0 ? errno : ENOSPC, w->path,
					     PARLOAD_NONE, w->offset,
					     "cannot write file");
		p += n;
		len -= (size_t)n;
		w->offset += (uint64_t)n;
	}
	return 0;
}

static int flush(parload_writer *w, parload_error *err)
{
	int rc = write_all(w, w->buf, w->used, err);

	w->used = 0;
	return rc;
}

/* Queue len bytes: copied into the buffer when they fit, else written
 * directly after what is buffered. */
static int put(parload_writer *w, const void *data, size_t len,
	       parload_error *err)
{
	int rc;

	if (len <= WRITE_BUFFER - w->used) {
		memcpy(w->buf + w->used, data, len);
		w->used += len;
		return 0;
	}
	rc = flush(w, err);
	if (rc == 0 && len >= WRITE_BUFFER)
		return write_all(w, data, len, err);
	if (rc == 0) {
		memcpy(w->buf, data, len);
		w->used = len;
	}
	return rc;
}

/* Only what a reader accepts may be written: h as a reader parses it,
 * into *check, its views small enough to be written from memory. */
static int check_header(const char *path, const parload_file_header *h,
			parload_file_header *check, parload_error *err)
{
	int rc = parload_parse_file_header(h, sizeof(*h), path, check, err);

	if (rc == 0 && h->payload_size > SIZE_MAX)
		rc = parload__fail(err, PARLOAD_EOVERFLOW, 0, path,
				   PARLOAD_NONE, PARLOAD_NONE,
				   "views of %" PRIu64 " bytes do not fit in "
				   "this address space", h->payload_size);
	return rc;
}

/* A writer of path, its file created (or emptied); nothing held on
 * failure. */
static int create(const char *path, parload_writer **out, parload_error *err)
{
	parload_writer *w = parload__sys_malloc(sizeof(*w));
	int rc;

	if (!w || !(w->path = parload__sys_strdup(path))) {
		parload__sys_free(w);
		return parload__fail(err, PARLOAD_ENOMEM, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	}
	do
		w->fd = parload__sys_open(path, O_WRONLY | O_CREAT | O_TRUNC |
						  O_CLOEXEC, 0666);
	while (w->fd < 0 && errno == EINTR);
	if (w->fd < 0) {
		rc = parload__fail(err, PARLOAD_EWRITE, errno, path,
				   PARLOAD_NONE, PARLOAD_NONE,
				   "cannot create file");
		parload__sys_free(w->path);
		parload__sys_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int parload_writer_open(parload_writer **out, const char *path,
			const parload_file_header *h, parload_error *err)
{
	parload_file_header check;
	parload_writer *w = NULL;
	int rc;

	if (!out)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	*out = NULL;
	if (!path || !h)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     "no file or no header given");
	if ((rc = check_header(path, h, &check, err)) != 0 ||
	    (rc = create(path, &w, err)) != 0)
		return rc;
	w->h = check;
	memset(w->h.reserved, 0, sizeof(w->h.reserved));
	w->added = 0;
	w->offset = 0;
	/* On a little-endian host the struct is the on-disk header. */
	memcpy(w->buf, &w->h, sizeof(w->h));
	w->used = sizeof(w->h);
	*out = w;
	return 0;
}

int parload_writer_add(parload_writer *w, const parload_view_header *vh,
		       const void *pixels, parload_error *err)
{
	parload_view_header v;
	int rc;

	if (!w || (!pixels && w->h.payload_size))
		return parload__fail(err, PARLOAD_EINVAL, 0,
				     w ? w->path : NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "no writer or no pixels");
	if (w->added >= w->h.view_count)
		return parload__fail(err, PARLOAD_ECOUNT, 0, w->path, w->added,
				     PARLOAD_NONE,
				     "the header declares %" PRIu64
				     " views; no more can be added",
				     w->h.view_count);
	if (vh)
		v = *vh;
	else
		memset(&v, 0, sizeof(v));
	v.view_index = w->added;
	v.crc32c = (w->h.flags & PARLOAD_FLAG_CRC32C) ?
			   parload_crc32c(0, pixels, w->h.payload_size) : 0;
	memset(v.reserved, 0, sizeof(v.reserved));
	rc = put(w, &v, sizeof(v), err);
	if (rc == 0)
		rc = put(w, pixels, (size_t)w->h.payload_size, err);
	if (rc == 0)
		w->added++;
	return rc;
}

int parload_writer_flush(parload_writer *w, parload_error *err)
{
	if (!w)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "no writer");
	return flush(w, err);
}

int parload_writer_close(parload_writer *w, parload_error *err)
{
	int rc;

	if (!w)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "no writer");
	rc = flush(w, err);
	if (rc == 0 && w->added != w->h.view_count)
		rc = parload__fail(err, PARLOAD_ECOUNT, 0, w->path,
				   PARLOAD_NONE, PARLOAD_NONE,
				   "%" PRIu64 " views written, the header "
				   "declares %" PRIu64,
				   w->added, w->h.view_count);
	if (parload__sys_close(w->fd) != 0 && rc == 0)
		rc = parload__fail(err, PARLOAD_EWRITE, errno, w->path,
				   PARLOAD_NONE, PARLOAD_NONE,
				   "cannot close file");
	parload__sys_free(w->path);
	parload__sys_free(w);
	return rc;
}
