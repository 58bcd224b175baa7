/*
 * consumer.c - a program outside the parload tree that uses the installed
 * libparload, as any user would: #include <parload.h>, link with
 * `pkg-config --cflags --libs parload`.
 *
 * Usage: consumer FILE...
 *
 * Each FILE was written by tests/refstream.py, which also wrote FILE.headers
 * and FILE.pixels: the view header array and the pixel array a loader must
 * produce.  The consumer loads every FILE with parload_load() at every
 * thread count from 1 to 8, and once more through one reusable loader with
 * the default thread count, and compares the arrays byte for byte.  Exit
 * status 0 if every load matched, 1 otherwise.
 *
 * Only standard C and the public interface: nothing here may depend on the
 * source tree.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parload.h>

/* The whole of path + suffix in a malloc'd buffer, or NULL. */
static unsigned char *slurp(const char *path, const char *suffix, size_t *len)
{
	char name[4096];
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", path, suffix);
	f = fopen(name, "rb");
	if (!f) {
		fprintf(stderr, "consumer: %s: %s\n", name, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			unsigned char *b;

			cap = cap ? 2 * cap : 65536;
			b = realloc(buf, cap);
			if (!b) {
				free(buf);
				fclose(f);
				fprintf(stderr, "consumer: out of memory\n");
				return NULL;
			}
			buf = b;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "consumer: %s: read error\n", name);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

typedef struct expected {
	unsigned char *file, *headers, *pixels;
	size_t file_len, headers_len, pixels_len;
} expected;

/* 0 if ds holds exactly what the .headers and .pixels files say. */
static int compare(const parload_dataset *ds, const expected *e,
		   const char *path, const char *how)
{
	const parload_desc *h = &ds->desc;
	parload_file_header fh;

	/* The description a load of parload's own format works from is
	 * its file header's. */
	if (parload_file_header_init(&fh, h->count, h->width, h->height,
				     h->pixel_type,
				     (h->flags & PARLOAD_DESC_CRC32C) ?
					     PARLOAD_FLAG_CRC32C : 0) != 0 ||
	    e->file_len < PARLOAD_FILE_HEADER_SIZE ||
	    memcmp(&fh.file_header_size, e->file + 12,
		   offsetof(parload_file_header, reserved) - 12) != 0) {
		fprintf(stderr, "consumer: %s (%s): file header differs\n",
			path, how);
		return -1;
	}
	if (h->count * PARLOAD_VIEW_HEADER_SIZE != e->headers_len ||
	    h->count * h->payload_size != e->pixels_len) {
		fprintf(stderr, "consumer: %s (%s): sizes differ\n", path,
			how);
		return -1;
	}
	if (e->headers_len &&
	    memcmp(ds->headers, e->headers, e->headers_len) != 0) {
		fprintf(stderr, "consumer: %s (%s): view headers differ\n",
			path, how);
		return -1;
	}
	if (e->pixels_len &&
	    memcmp(ds->pixels, e->pixels, e->pixels_len) != 0) {
		fprintf(stderr, "consumer: %s (%s): pixels differ\n", path,
			how);
		return -1;
	}
	return 0;
}

static int check_file(const char *path, parload_loader *loader)
{
	parload_error err;
	expected e;
	int failed = 0;

	memset(&e, 0, sizeof(e));
	e.file = slurp(path, "", &e.file_len);
	e.headers = slurp(path, ".headers", &e.headers_len);
	e.pixels = slurp(path, ".pixels", &e.pixels_len);
	if (!e.file || !e.headers || !e.pixels) {
		failed = 1;
		goto out;
	}

	for (unsigned threads = 1; threads <= 8; threads++) {
		parload_options opts;
		parload_dataset ds;
		char how[32];
		int rc;

		parload_options_init(&opts);
		opts.threads = threads;
		opts.error = &err;
		snprintf(how, sizeof(how), "%u threads", threads);
		rc = parload_load(path, &opts, &ds);
		if (rc != 0) {
			fprintf(stderr, "consumer: %s: %s (%s)\n", how,
				err.message, parload_strerror(rc));
			failed = 1;
			continue;
		}
		if (compare(&ds, &e, path, how) != 0)
			failed = 1;
		parload_dataset_free(&ds);
	}

	{
		parload_dataset ds;
		parload_request req;
		int rc;

		parload_request_init(&req);
		req.source.path = path;
		rc = parload_loader_run(loader, &req, &ds, &err);

		if (rc != 0) {
			fprintf(stderr, "consumer: reused loader: %s\n",
				err.message);
			failed = 1;
		} else {
			if (compare(&ds, &e, path, "reused loader") != 0)
				failed = 1;
			parload_dataset_free(&ds);
		}
	}
	if (!failed) {
		parload_file_header h;

		if (parload_read_header(path, &h, &err) != 0) {
			fprintf(stderr, "consumer: %s\n", err.message);
			failed = 1;
			goto out;
		}
		printf("ok %s: %llu views of %u x %u %s, threads 1-8 and %u\n",
		       path, (unsigned long long)h.view_count,
		       (unsigned)h.width, (unsigned)h.height,
		       parload_pixel_name(h.pixel_type),
		       parload_loader_threads(loader));
	}
out:
	free(e.file);
	free(e.headers);
	free(e.pixels);
	return failed;
}

int main(int argc, char **argv)
{
	parload_loader *loader;
	parload_error err;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: consumer FILE...\n");
		return 2;
	}
	printf("libparload %s\n", parload_version());
	if (parload_loader_new(&loader, NULL, &err) != 0) {
		fprintf(stderr, "consumer: %s\n", err.message);
		return 1;
	}
	for (int i = 1; i < argc; i++)
		failed |= check_file(argv[i], loader);
	parload_loader_free(loader);
	return failed;
}
