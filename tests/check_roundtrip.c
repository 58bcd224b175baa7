/*
 * check_roundtrip.c - writer -> loader round trips.  Every load, over many
 * shapes and thread counts, must equal an independent serial reading of
 * the same file byte for byte.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gen.h"
#include "internal.h"
#include "testutil.h"

static const tu_shape shapes[] = {
	{ 0, 16, 16, PARLOAD_PIXEL_U16, 0 },
	{ 1, 16, 16, PARLOAD_PIXEL_U16, 0 },
	{ 1, 1, 1, PARLOAD_PIXEL_U8, 0 },
	{ 40, 1, 1, PARLOAD_PIXEL_U8, 0 },
	{ 13, 7, 3, PARLOAD_PIXEL_U8, PARLOAD_FLAG_CRC32C },
	{ 9, 5, 5, PARLOAD_PIXEL_I16, 0 },
	{ 6, 31, 3, PARLOAD_PIXEL_U32, 0 },
	{ 6, 3, 31, PARLOAD_PIXEL_I32, PARLOAD_FLAG_CRC32C },
	{ 5, 17, 9, PARLOAD_PIXEL_F32, 0 },
	{ 4, 9, 17, PARLOAD_PIXEL_F64, 0 },
	{ 2000, 16, 8, PARLOAD_PIXEL_U8, 0 },
	{ 3, 1024, 700, PARLOAD_PIXEL_U16, 0 }, /* few large views */
};

static const unsigned thread_counts[] = { 1, 2, 3, 7, 16, 0 };

static void load_and_compare(const char *path, const parload_options *base,
			     const tu_soa *ref)
{
	parload_options o = *base;
	parload_error err;
	parload_dataset ds;
	int rc;

	o.error = &err;
	rc = parload_load(path, &o, &ds);
	ck_assert_msg(rc == 0, "threads %u: %s", o.threads, err.message);
	tu_assert_same(&ds, ref);
	ck_assert_uint_eq(ds.stats.strategy, PARLOAD_STRATEGY_PARALLEL);
	if (o.threads)
		ck_assert_uint_eq(ds.stats.threads, o.threads);
	ck_assert_uint_eq(ds.stats.bytes_read,
			  64 + ref->view_count * (32 + ref->payload_size));
	ck_assert(ds.stats.seconds >= 0);
	parload_dataset_free(&ds);
	ck_assert_ptr_null(ds.pixels);
}

START_TEST(test_shape_every_thread_count)
{
	const tu_shape *s = &shapes[_i];
	char name[64];
	char *path;
	tu_soa ref;
	parload_options o;

	snprintf(name, sizeof(name), "shape%d.raw", _i);
	path = tu_path(name);
	tu_write_shape(path, s, 100 + (uint64_t)_i);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_options_init(&o);
	for (size_t k = 0; k < sizeof(thread_counts) / sizeof(*thread_counts);
	     k++) {
		o.threads = thread_counts[k];
		load_and_compare(path, &o, &ref);
	}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_tiny_reads_exercise_chunking)
{
	/* A cap of a few bytes per read system call forces every loop that
	 * splits, resumes and stitches reads. */
	static const size_t caps[] = { 1, 7, 31, 33, 4096 };
	char *path = tu_path("chunks.raw");
	parload_options o;
	tu_soa ref;

	tu_write_stream(path, 11, 13, 3, PARLOAD_PIXEL_U16, 0, 5);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_options_init(&o);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
		for (unsigned t = 1; t <= 3; t++) {
			parload_dataset ds;

			o.threads = t;
			o.max_read = caps[c];
			ck_assert_int_eq(parload_load(path, &o, &ds), 0);
			tu_assert_same(&ds, &ref);
			if (caps[c] == 1)
				ck_assert_uint_ge(ds.stats.read_calls,
						  ds.stats.bytes_read);
			parload_dataset_free(&ds);
		}
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_loader_reused)
{
	char *a = tu_path("a.raw"), *b = tu_path("b.raw");
	parload_loader *l;
	parload_options o;
	tu_soa ra, rb;

	tu_write_stream(a, 30, 8, 8, PARLOAD_PIXEL_U16, 0, 1);
	tu_write_stream(b, 7, 100, 3, PARLOAD_PIXEL_F32, 0, 2);
	ck_assert_int_eq(tu_serial_read(a, &ra), 0);
	ck_assert_int_eq(tu_serial_read(b, &rb), 0);
	parload_options_init(&o);
	o.threads = 3;
	ck_assert_int_eq(parload_loader_new(&l, &o, NULL), 0);
	ck_assert_uint_eq(parload_loader_threads(l), 3);
	for (int i = 0; i < 200; i++) {
		parload_dataset ds;
		const char *p = i % 2 ? b : a;

		ck_assert_int_eq(tu_load(l, p, NULL, NULL, &ds, NULL), 0);
		tu_assert_same(&ds, i % 2 ? &rb : &ra);
		parload_dataset_free(&ds);
	}
	/* A failed load leaves the loader ready for the next. */
	{
		parload_dataset ds;
		parload_error err;
		char *missing = tu_path("missing.raw");

		ck_assert_int_eq(tu_load(l, missing, NULL, NULL, &ds, &err),
				 PARLOAD_EOPEN);
		ck_assert_int_eq(tu_load(l, a, NULL, NULL, &ds, &err), 0);
		tu_assert_same(&ds, &ra);
		parload_dataset_free(&ds);
		free(missing);
	}
	parload_loader_free(l);
	tu_soa_free(&ra);
	tu_soa_free(&rb);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_options_flags)
{
	char *path = tu_path("flags.raw");
	parload_options o;
	parload_dataset ds;
	tu_soa ref;

	tu_write_stream(path, 3, 1024, 1024, PARLOAD_PIXEL_U8, 0, 9);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	parload_options_init(&o);
	o.threads = 2;
	o.flags = PARLOAD_OPT_NO_BIND | PARLOAD_OPT_NO_HUGEPAGES;
	ck_assert_int_eq(parload_load(path, &o, &ds), 0);
	tu_assert_same(&ds, &ref);
	parload_dataset_free(&ds);
	o.flags = 0x100;
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_EINVAL);
	parload_options_init(&o);
	o.strategy = (parload_strategy)42;
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_EINVAL);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_defaults_with_null_options)
{
	char *path = tu_path("null.raw");
	parload_dataset ds;
	tu_soa ref;

	tu_write_stream(path, 5, 10, 10, PARLOAD_PIXEL_U8, 0, 3);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(parload_load(path, NULL, &ds), 0);
	tu_assert_same(&ds, &ref);
	ck_assert_uint_ge(ds.stats.threads, 1);
	parload_dataset_free(&ds);
	parload_dataset_free(&ds); /* freeing twice is harmless */
	parload_dataset_free(NULL);
	ck_assert_int_eq(parload_load(NULL, NULL, &ds), PARLOAD_EINVAL);
	ck_assert_int_eq(parload_load(path, NULL, NULL), PARLOAD_EINVAL);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_synthetic_numa_machine)
{
	/* A made-up machine of 4 NUMA nodes and 8 cores: the default thread
	 * count follows it and the load is unchanged (nothing is bound on a
	 * topology that is not this machine's). */
	char *path = tu_path("numa.raw");
	parload_loader *l;
	parload_dataset ds;
	tu_soa ref;

	tu_write_stream(path, 100, 64, 33, PARLOAD_PIXEL_U16, 0, 4);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	setenv("HWLOC_SYNTHETIC", "pack:2 numa:2 core:2 pu:2", 1);
	ck_assert_int_eq(parload_loader_new(&l, NULL, NULL), 0);
	unsetenv("HWLOC_SYNTHETIC");
	ck_assert_uint_eq(parload_loader_threads(l), 8);
	ck_assert_int_eq(tu_load(l, path, NULL, NULL, &ds, NULL), 0);
	tu_assert_same(&ds, &ref);
	ck_assert_uint_eq(ds.stats.threads, 8);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

START_TEST(test_writer_counts_views)
{
	char *path = tu_path("count.raw");
	parload_file_header h;
	parload_writer *w;
	parload_error err;
	unsigned char px[4] = { 1, 2, 3, 4 };

	ck_assert_int_eq(parload_file_header_init(&h, 2, 2, 2, PARLOAD_PIXEL_U8,
						  0), 0);
	ck_assert_int_eq(parload_writer_open(&w, path, &h, &err), 0);
	ck_assert_int_eq(parload_writer_add(w, NULL, px, &err), 0);
	ck_assert_int_eq(parload_writer_close(w, &err), PARLOAD_ECOUNT);
	ck_assert_ptr_nonnull(strstr(err.message, "1 views written"));

	ck_assert_int_eq(parload_writer_open(&w, path, &h, &err), 0);
	ck_assert_int_eq(parload_writer_add(w, NULL, px, &err), 0);
	ck_assert_int_eq(parload_writer_add(w, NULL, px, &err), 0);
	ck_assert_int_eq(parload_writer_add(w, NULL, px, &err), PARLOAD_ECOUNT);
	ck_assert_int_eq(parload_writer_close(w, &err), 0);

	/* An invalid header is refused before anything is created. */
	h.pixel_type = 99;
	ck_assert_int_eq(parload_writer_open(&w, path, &h, &err),
			 PARLOAD_EPIXTYPE);
	ck_assert_ptr_null(w);
	free(path);
}
END_TEST

START_TEST(test_writer_fills_index_and_crc)
{
	char *path = tu_path("crc.raw");
	parload_file_header h;
	parload_writer *w;
	parload_view_header vh;
	parload_dataset ds;
	unsigned char px[6] = { 9, 8, 7, 6, 5, 4 };

	ck_assert_int_eq(parload_file_header_init(&h, 2, 3, 1,
						  PARLOAD_PIXEL_U16,
						  PARLOAD_FLAG_CRC32C), 0);
	ck_assert_int_eq(parload_writer_open(&w, path, &h, NULL), 0);
	memset(&vh, 0, sizeof(vh));
	vh.view_index = 77; /* the writer knows better */
	vh.timestamp_ns = 123;
	vh.angle_deg = 1.5f;
	ck_assert_int_eq(parload_writer_add(w, &vh, px, NULL), 0);
	ck_assert_int_eq(parload_writer_add(w, &vh, px, NULL), 0);
	ck_assert_int_eq(parload_writer_close(w, NULL), 0);
	ck_assert_int_eq(parload_load(path, NULL, &ds), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(ds.headers[i].view_index, (uint64_t)i);
		ck_assert_uint_eq(ds.headers[i].timestamp_ns, 123);
		ck_assert(ds.headers[i].angle_deg == 1.5f);
		ck_assert_uint_eq(ds.headers[i].crc32c,
				  parload_crc32c(0, px, 6));
	}
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

START_TEST(test_generator_verifies)
{
	char *path = tu_path("gen.raw");
	parload_dataset ds;
	uint64_t bad;
	bool bad_header;

	tu_write_stream(path, 20, 9, 9, PARLOAD_PIXEL_U16, PARLOAD_FLAG_CRC32C,
			42);
	ck_assert_int_eq(parload_load(path, NULL, &ds), 0);
	ck_assert(pgen_verify(&ds, 42, &bad, &bad_header));
	ck_assert(!pgen_verify(&ds, 43, &bad, &bad_header));
	ck_assert_uint_eq(bad, 0);
	((unsigned char *)ds.pixels)[13 * 162 + 5] ^= 1;
	ck_assert(!pgen_verify(&ds, 42, &bad, &bad_header));
	ck_assert_uint_eq(bad, 13);
	ck_assert(!bad_header);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

START_TEST(test_load_into_caller_buffers)
{
	static const parload_strategy strategies[] = {
		PARLOAD_STRATEGY_PARALLEL, PARLOAD_STRATEGY_BULK,
		PARLOAD_STRATEGY_SEQUENTIAL, PARLOAD_STRATEGY_TWO_PASS,
		PARLOAD_STRATEGY_MMAP,
	};
	char *path = tu_path("into.raw");
	parload_file_header h;
	parload_buffers b;
	tu_soa ref;

	tu_write_stream(path, 37, 21, 5, PARLOAD_PIXEL_U16, 0, 8);
	ck_assert_int_eq(tu_serial_read(path, &ref), 0);
	ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
	tu_buffers_new(&b, h.view_count, h.payload_size);
	for (size_t k = 0; k < sizeof(strategies) / sizeof(*strategies); k++)
		for (unsigned t = 1; t <= 3; t++) {
			parload_options o;
			parload_loader *l;
			parload_dataset ds;
			parload_error err;

			parload_options_init(&o);
			o.strategy = strategies[k];
			o.threads = t;
			ck_assert_int_eq(parload_loader_new(&l, &o, NULL), 0);
			memset(b.headers, 0xee, b.headers_size);
			memset(b.pixels, 0xee, b.pixels_size);
			ck_assert_int_eq(tu_load(l, path, NULL, &b,
								  &ds, &err),
					 0);
			ck_assert_ptr_eq(ds.headers, b.headers);
			ck_assert_ptr_eq(ds.pixels, b.pixels);
			tu_assert_same(&ds, &ref);
			/* Freeing the dataset leaves the caller's memory. */
			parload_dataset_free(&ds);
			ck_assert_int_eq(memcmp(b.pixels, ref.pixels,
						b.pixels_size), 0);

			/* One byte short is refused, naming both sizes. */
			b.pixels_size--;
			ck_assert_int_eq(tu_load(l, path, NULL, &b,
								  &ds, &err),
					 PARLOAD_ESPACE);
			ck_assert_ptr_nonnull(strstr(err.message,
						     "bytes of pixels"));
			ck_assert_ptr_null(ds.pixels);
			b.pixels_size++;
			parload_loader_free(l);
		}
	tu_buffers_free(&b);
	tu_soa_free(&ref);
	free(path);
}
END_TEST

/* Whether [p, p + len) is mapped: mincore() fails with ENOMEM on a range
 * that holds an unmapped page.  Ranges of up to 16 MiB. */
static bool mapped(const void *p, size_t len)
{
	static unsigned char vec[4096];
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t lo = (uintptr_t)p & ~(page - 1);
	const uintptr_t hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);

	/* No allocation here: it could map the very pages asked about. */
	if ((hi - lo) / page > sizeof(vec))
		return false;
	if (mincore((void *)lo, hi - lo, vec) == 0)
		return true;
	return errno != ENOMEM;
}

/* Whether the kernel lists MADV_HUGEPAGE ("hg") among the flags of the
 * mapping that holds p. */
static bool advised_huge(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, hg = false;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) ==
		    2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0)
			hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return hg;
}

/* parload_buffers_alloc: exact sizes, writable, pixels on a 2 MiB
 * boundary once they fill a huge page, advised for huge pages unless told
 * not to, a load into them equals the serial reading, and
 * parload_buffers_free unmaps both arrays. */
START_TEST(test_buffers_alloc)
{
	static const struct {
		uint64_t views;
		uint32_t width, height;
		unsigned flags;
	} cases[] = {
		{ 5, 4, 2, 0 },		      /* under a huge page */
		{ 3, 1024, 700, 0 },	      /* 4.3 MB of pixels */
		{ 3, 1024, 700, PARLOAD_OPT_NO_HUGEPAGES },
		{ 1, 1024, 1024, 0 },	      /* exactly one huge page */
		{ 70000, 16, 1, 0 },	      /* 2.2 MB of headers */
	};
	const size_t huge = (size_t)2 << 20;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *path = tu_path("balloc.raw");
		parload_file_header h;
		parload_buffers b;
		parload_dataset ds;
		parload_error err;
		parload_loader *l;
		void *headers, *pixels;
		size_t hsize, psize;
		bool gone_h, gone_p;
		tu_soa ref;

		tu_write_stream(path, cases[i].views, cases[i].width,
				cases[i].height, PARLOAD_PIXEL_U16, 0, 3);
		ck_assert_int_eq(tu_serial_read(path, &ref), 0);
		ck_assert_int_eq(parload_read_header(path, &h, NULL), 0);
		ck_assert_int_eq(tu_buffers_alloc(&b, &h, NULL, cases[i].flags, &err),
				 0);
		ck_assert_uint_eq(b.headers_size, h.view_count * 32);
		ck_assert_uint_eq(b.pixels_size,
				  h.view_count * h.payload_size);
		ck_assert((uintptr_t)b.headers % 64 == 0);
		ck_assert((unsigned char *)b.headers + b.headers_size <=
			  (unsigned char *)b.pixels);
		if (b.pixels_size >= huge) {
			ck_assert_msg((uintptr_t)b.pixels % huge == 0,
				      "case %zu: pixels at %p", i, b.pixels);
			ck_assert_int_eq(advised_huge(b.pixels),
					 !(cases[i].flags &
					   PARLOAD_OPT_NO_HUGEPAGES));
		}
		ck_assert(b.pixels_size <= ((size_t)16 << 20));
		ck_assert(mapped(b.headers, b.headers_size));
		ck_assert(mapped(b.pixels, b.pixels_size));
		/* Fresh memory reads as zeros and takes every byte. */
		ck_assert_uint_eq(((unsigned char *)b.pixels)[0], 0);
		memset(b.headers, 0xee, b.headers_size);
		memset(b.pixels, 0xee, b.pixels_size);

		ck_assert_int_eq(parload_loader_new(&l, NULL, NULL), 0);
		ck_assert_int_eq(tu_load(l, path, NULL, &b, &ds,
							  &err),
				 0);
		tu_assert_same(&ds, &ref);
		parload_dataset_free(&ds);
		parload_loader_free(l);

		headers = b.headers;
		pixels = b.pixels;
		hsize = b.headers_size;
		psize = b.pixels_size;
		parload_buffers_free(&b);
		/* Asked at once: any later call could map the freed pages
		 * again (Check's own bookkeeping does). */
		gone_h = !mapped(headers, hsize);
		gone_p = !mapped(pixels, psize);
		ck_assert_msg(gone_h && gone_p, "case %zu: still mapped", i);
		ck_assert_ptr_null(b.headers);
		ck_assert_ptr_null(b.pixels);
		ck_assert_uint_eq(b.pixels_size, 0);
		parload_buffers_free(&b); /* freed twice: a no-op */
		tu_soa_free(&ref);
		free(path);
	}
}
END_TEST

/* No views: no arrays, nothing to free.  A header that describes no valid
 * stream is PARLOAD_EINVAL, one larger than the machine PARLOAD_ENOMEM,
 * and both leave the buffers empty. */
START_TEST(test_buffers_alloc_edges)
{
	parload_file_header h;
	parload_desc d;
	parload_buffers b;
	parload_error err;

	ck_assert_int_eq(parload_file_header_init(&h, 0, 8, 8,
						  PARLOAD_PIXEL_U8, 0),
			 0);
	memset(&b, 0x55, sizeof(b));
	ck_assert_int_eq(tu_buffers_alloc(&b, &h, NULL, 0, &err), 0);
	ck_assert_ptr_null(b.headers);
	ck_assert_ptr_null(b.pixels);
	ck_assert_uint_eq(b.headers_size + b.pixels_size, 0);
	parload_buffers_free(&b);
	parload_buffers_free(NULL);

	/* A description of no width is refused, as is one whose sizes
	 * overflow. */
	parload_desc_from_header(&d, &h);
	d.count = 4;
	d.width = 0;
	memset(&b, 0x55, sizeof(b));
	ck_assert_int_eq(parload_buffers_alloc(&b, &d, NULL, 0, &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(err.code, PARLOAD_EINVAL);
	ck_assert_ptr_null(b.pixels);
	d.width = UINT32_MAX;
	d.height = UINT32_MAX;
	d.count = UINT64_MAX / 2;
	ck_assert_int_eq(parload_buffers_alloc(&b, &d, NULL, 0, &err),
			 PARLOAD_EOVERFLOW);
	ck_assert_int_eq(tu_buffers_alloc(NULL, &h, NULL, 0, &err),
			 PARLOAD_EINVAL);
	ck_assert_int_eq(parload_buffers_alloc(&b, NULL, NULL, 0, NULL),
			 PARLOAD_EINVAL);

	/* 2^20 views of 1 MiB: a valid header, and a TiB of pixels. */
	ck_assert_int_eq(parload_file_header_init(&h, (uint64_t)1 << 20, 1024,
						  512, PARLOAD_PIXEL_U16, 0),
			 0);
	ck_assert_int_eq(tu_buffers_alloc(&b, &h, NULL, 0, &err),
			 PARLOAD_ENOMEM);
	ck_assert_ptr_nonnull(strstr(err.message, "out of memory"));
	ck_assert_ptr_null(b.pixels);
	ck_assert_ptr_null(b.headers);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("roundtrip");
	TCase *t = tcase_create("shapes");

	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_shape_every_thread_count, 0,
			    sizeof(shapes) / sizeof(shapes[0]));
	tcase_add_test(t, test_tiny_reads_exercise_chunking);
	suite_add_tcase(s, t);

	t = tcase_create("api");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_loader_reused);
	tcase_add_test(t, test_options_flags);
	tcase_add_test(t, test_defaults_with_null_options);
	tcase_add_test(t, test_synthetic_numa_machine);
	tcase_add_test(t, test_writer_counts_views);
	tcase_add_test(t, test_writer_fills_index_and_crc);
	tcase_add_test(t, test_generator_verifies);
	tcase_add_test(t, test_load_into_caller_buffers);
	tcase_add_test(t, test_buffers_alloc);
	tcase_add_test(t, test_buffers_alloc_edges);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
