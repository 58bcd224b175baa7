/*
 * check_plan.c - partitioning: every header and every pixel byte is read by
 * exactly one worker, each worker's file range is contiguous, the ranges
 * tile the file, and the cursor maps that range onto the right places in
 * the two arrays.  Pure arithmetic: no files.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static parload_file_header header(uint64_t views, uint32_t w, uint32_t h,
				  int type)
{
	parload_file_header fh;

	ck_assert_int_eq(parload_file_header_init(&fh, views, w, h, type, 0),
			 0);
	return fh;
}

/* The partition invariants for one (stream, workers, align). */
static void check_partition(const parload_file_header *h, unsigned n,
			    size_t align)
{
	parload__slice *s = calloc(n, sizeof(*s));
	uint64_t total = h->view_count * h->payload_size, size;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(parload_file_size(h, &size), 0);
	parload__plan(h, n, align, s);
	ck_assert_uint_eq(s[0].pix_begin, 0);
	ck_assert_uint_eq(s[0].view_begin, 0);
	ck_assert_uint_eq(s[0].file_begin, 64);
	ck_assert_uint_eq(s[n - 1].pix_end, total);
	ck_assert_uint_eq(s[n - 1].view_end, h->view_count);
	ck_assert_uint_eq(s[n - 1].file_end, size);
	for (unsigned w = 0; w < n; w++) {
		ck_assert_uint_le(s[w].pix_begin, s[w].pix_end);
		ck_assert_uint_le(s[w].view_begin, s[w].view_end);
		ck_assert_uint_le(s[w].file_begin, s[w].file_end);
		/* Inner boundaries are aligned. */
		if (w > 0 && s[w].pix_begin != s[w - 1].pix_end)
			ck_abort_msg("gap between workers %u and %u", w - 1, w);
		if (w > 0 && s[w].pix_begin % align && s[w].pix_begin != total)
			ck_abort_msg("worker %u starts unaligned", w);
		if (w > 0) {
			ck_assert_uint_eq(s[w].view_begin, s[w - 1].view_end);
			ck_assert_uint_eq(s[w].file_begin, s[w - 1].file_end);
		}
		/* The file range holds exactly the worker's bytes. */
		ck_assert_uint_eq(s[w].file_end - s[w].file_begin,
				  (s[w].pix_end - s[w].pix_begin) +
					  32 * (s[w].view_end - s[w].view_begin));
	}
	/* Balanced: no worker has more than its share plus one boundary
	 * step. */
	for (unsigned w = 0; w < n; w++)
		ck_assert_uint_le(s[w].pix_end - s[w].pix_begin,
				  total / n + align + 1);
	free(s);
}

START_TEST(test_partition_shapes)
{
	static const struct {
		uint64_t views;
		uint32_t w, h;
		int type;
	} shapes[] = {
		{ 0, 4, 4, PARLOAD_PIXEL_U8 },
		{ 1, 1, 1, PARLOAD_PIXEL_U8 },
		{ 1, 1024, 1024, PARLOAD_PIXEL_F32 },
		{ 3, 7, 5, PARLOAD_PIXEL_U16 },
		{ 2000, 896, 64, PARLOAD_PIXEL_U16 },
		{ 200000, 256, 1, PARLOAD_PIXEL_U8 },
		{ 17, 33, 3, PARLOAD_PIXEL_F64 },
	};
	static const unsigned workers[] = { 1, 2, 3, 7, 16, 64 };
	static const size_t aligns[] = { 1, 64, 4096, 2 << 20 };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		parload_file_header h = header(shapes[i].views, shapes[i].w,
					       shapes[i].h, shapes[i].type);

		for (size_t k = 0; k < sizeof(workers) / sizeof(workers[0]); k++)
			for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++)
				check_partition(&h, workers[k], aligns[a]);
	}
}
END_TEST

START_TEST(test_one_huge_view_is_split)
{
	/* One 256 MiB view over four workers: each reads a quarter. */
	parload_file_header h = header(1, 16384, 4096, PARLOAD_PIXEL_F32);
	parload__slice s[4];

	parload__plan(&h, 4, 4096, s);
	for (unsigned w = 0; w < 4; w++)
		ck_assert_uint_eq(s[w].pix_end - s[w].pix_begin, 64ull << 20);
	/* Only the first worker reads the header. */
	ck_assert_uint_eq(s[0].view_end, 1);
	ck_assert_uint_eq(s[1].view_begin, 1);
	ck_assert_uint_eq(s[1].file_begin, 64 + 32 + (64ull << 20));
}
END_TEST

/* Serve a worker's slice from an in-memory image of the file through the
 * cursor, as preadv would, and check every byte lands where a serial
 * reading would put it. */
static void cursor_fill(const parload_file_header *h, unsigned n,
			size_t max_bytes, int max_iov)
{
	uint64_t size;
	unsigned char *file, *pixels, *want_pixels;
	parload_view_header *headers, *want_headers;
	parload__slice *s = calloc(n, sizeof(*s));
	struct iovec iov[64];

	ck_assert_int_eq(parload_file_size(h, &size), 0);
	file = malloc(size);
	headers = calloc(h->view_count + 1, 32);
	want_headers = calloc(h->view_count + 1, 32);
	pixels = calloc(h->view_count * h->payload_size + 1, 1);
	want_pixels = calloc(h->view_count * h->payload_size + 1, 1);
	for (uint64_t i = 0; i < size; i++)
		file[i] = (unsigned char)(i * 131 + (i >> 8));
	for (uint64_t v = 0; v < h->view_count; v++) {
		uint64_t o = 64 + v * (32 + h->payload_size);

		memcpy(&want_headers[v], file + o, 32);
		memcpy(want_pixels + v * h->payload_size, file + o + 32,
		       h->payload_size);
	}
	parload__plan(h, n, 64, s);
	for (unsigned w = 0; w < n; w++) {
		parload__cursor c;
		uint64_t off;
		int cnt;

		parload__cursor_init(&c, h, &s[w], headers, pixels);
		while ((cnt = parload__cursor_next(&c, iov, max_iov, max_bytes,
						   &off)) > 0) {
			size_t got = 0;

			ck_assert_int_le(cnt, max_iov);
			for (int k = 0; k < cnt; k++) {
				ck_assert_uint_gt(iov[k].iov_len, 0);
				memcpy(iov[k].iov_base, file + off + got,
				       iov[k].iov_len);
				got += iov[k].iov_len;
			}
			ck_assert_uint_le(got, max_bytes);
		}
		ck_assert_uint_eq(c.pos, s[w].file_end);
	}
	ck_assert_int_eq(memcmp(headers, want_headers, h->view_count * 32), 0);
	ck_assert_int_eq(memcmp(pixels, want_pixels,
				h->view_count * h->payload_size), 0);
	free(s);
	free(file);
	free(headers);
	free(want_headers);
	free(pixels);
	free(want_pixels);
}

START_TEST(test_cursor_places_every_byte)
{
	parload_file_header a = header(50, 3, 5, PARLOAD_PIXEL_U16);
	parload_file_header b = header(1, 1000, 3, PARLOAD_PIXEL_U8);
	parload_file_header c = header(300, 1, 1, PARLOAD_PIXEL_U8);

	for (unsigned n = 1; n <= 9; n += 4) {
		cursor_fill(&a, n, 1 << 20, 64);
		cursor_fill(&a, n, 7, 64);   /* byte budget cuts buffers */
		cursor_fill(&a, n, 4096, 3); /* buffer count cuts batches */
		cursor_fill(&b, n, 100, 64);
		cursor_fill(&c, n, 1 << 20, 64);
		cursor_fill(&c, n, 33, 2);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plan");
	TCase *t = tcase_create("partition");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_partition_shapes);
	tcase_add_test(t, test_one_huge_view_is_split);
	tcase_add_test(t, test_cursor_places_every_byte);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
