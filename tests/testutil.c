/*
 * testutil.c - shared test helpers (see testutil.h).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "testutil.h"

static char scratch[4096];
static pid_t scratch_owner;

/* Check runs each test in a forked child, which inherits atexit handlers:
 * only the process that made the directory removes it. */
static void remove_scratch(void)
{
	char cmd[4200];

	if (scratch[0] && getpid() == scratch_owner) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", scratch);
	}
}

char *tu_path(const char *name)
{
	char *p;

	if (!scratch[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(scratch, sizeof(scratch), "%s/parload-test-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		ck_assert_ptr_nonnull(mkdtemp(scratch));
		scratch_owner = getpid();
		atexit(remove_scratch);
	}
	p = malloc(strlen(scratch) + strlen(name) + 2);
	ck_assert_ptr_nonnull(p);
	sprintf(p, "%s/%s", scratch, name);
	return p;
}

void tu_write_stream(const char *path, uint64_t views, uint32_t width,
		     uint32_t height, int pixel_type, uint32_t flags,
		     uint64_t seed)
{
	parload_file_header h;
	parload_error err;
	int rc;

	ck_assert_int_eq(parload_file_header_init(&h, views, width, height,
						  pixel_type, flags), 0);
	rc = pgen_write(path, &h, seed, &err);
	ck_assert_msg(rc == 0, "writing %s: %s", path, err.message);
}

void tu_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

void tu_patch(const char *path, uint64_t offset, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, len, (off_t)offset), (ssize_t)len);
	close(fd);
}

void tu_truncate(const char *path, uint64_t len)
{
	ck_assert_int_eq(truncate(path, (off_t)len), 0);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int tu_serial_read(const char *path, tu_soa *out)
{
	FILE *f = fopen(path, "rb");
	int c;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -1;
	if (fread(out->file_header, 1, 64, f) != 64)
		goto bad;
	out->view_count = get64(out->file_header + 16);
	out->payload_size = get64(out->file_header + 40);
	out->headers = malloc(out->view_count * 32 + 1);
	out->pixels = malloc(out->view_count * out->payload_size + 1);
	if (!out->headers || !out->pixels)
		goto bad;
	for (uint64_t i = 0; i < out->view_count; i++) {
		if (fread(out->headers + i * 32, 1, 32, f) != 32)
			goto bad;
		if (fread(out->pixels + i * out->payload_size, 1,
			  out->payload_size, f) != out->payload_size)
			goto bad;
	}
	c = fgetc(f);
	fclose(f);
	if (c != EOF) {
		tu_soa_free(out);
		return -1;
	}
	return 0;
bad:
	fclose(f);
	tu_soa_free(out);
	return -1;
}

void tu_soa_free(tu_soa *s)
{
	free(s->headers);
	free(s->pixels);
	memset(s, 0, sizeof(*s));
}

void tu_assert_same(const parload_dataset *ds, const tu_soa *ref)
{
	ck_assert_mem_eq(&ds->file_header, ref->file_header, 64);
	ck_assert_uint_eq(ds->file_header.view_count, ref->view_count);
	if (ref->view_count == 0)
		return;
	ck_assert_int_eq(memcmp(ds->headers, ref->headers,
				ref->view_count * 32), 0);
	ck_assert_int_eq(memcmp(ds->pixels, ref->pixels,
				ref->view_count * ref->payload_size), 0);
}
