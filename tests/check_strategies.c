/*
 * check_strategies.c - the single-threaded strategies (bulk, sequential,
 * two-pass, mmap), with each I/O API and buffering, load every shape byte
 * for byte as the serial reference and the parallel loader do, fail with
 * the parallel loader's codes and messages, and report honest counters;
 * and every strategy does what its capabilities say and refuses more than
 * PARLOAD_THREADS_MAX threads.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "damage.h"
#include "matrix.h"
#include "testutil.h"

/* The parallel loader the others are compared with. */
static const tu_config *parallel(void)
{
	return tu_parallel(2);
}

/* A single-threaded strategy that does not read through an I/O API must
 * ignore the API and buffering it is given: it is tried with every one. */
static int variants(const tu_config *c)
{
	return parload_strategy_caps(c->strategy) &
			       (PARLOAD_CAP_IO | PARLOAD_CAP_THREADS) ?
		       1 :
		       tu_io_variants();
}

static tu_config variant(const tu_config *c, int k)
{
	tu_config v = *c;

	if (variants(c) > 1) {
		tu_io_variant(k, &v.io, &v.buffer);
		snprintf(v.label, sizeof(v.label), "%.40s, io %d, buffer %zu",
			 c->label, v.io, v.buffer);
	}
	return v;
}

/* Load path with c, at most max_read bytes a read call (0: the default);
 * err is cleared first. */
static int load_capped(const char *path, const tu_config *c, size_t max_read,
		       parload_dataset *ds, parload_error *err)
{
	parload_options o;

	tu_config_options(&o, c, 0);
	o.error = err;
	o.max_read = max_read;
	memset(err, 0, sizeof(*err));
	return parload_load(path, &o, ds);
}

static int load(const char *path, const tu_config *c, parload_dataset *ds,
		parload_error *err)
{
	return load_capped(path, c, 0, ds, err);
}

static void assert_same_dataset(const parload_dataset *a,
				const parload_dataset *b, const char *what)
{
	const parload_file_header ha = tu_ds_header(a), hb = tu_ds_header(b);
	const parload_file_header *h = &ha;

	ck_assert_msg(memcmp(&ha, &hb, sizeof(*h)) == 0,
		      "%s: file header differs", what);
	if (!h->view_count)
		return;
	ck_assert_msg(memcmp(a->headers, b->headers,
			     h->view_count * PARLOAD_VIEW_HEADER_SIZE) == 0,
		      "%s: view headers differ", what);
	ck_assert_msg(memcmp(a->pixels, b->pixels,
			     h->view_count * h->payload_size) == 0,
		      "%s: pixels differ", what);
}

/* ---- every shape, every combination ---- */

static const tu_shape shapes[] = {
	{ 0, 4, 4, PARLOAD_PIXEL_U16, 0 },        /* empty stream */
	{ 1, 96, 64, PARLOAD_PIXEL_U16, 0 },      /* one view */
	{ 9, 1, 1, PARLOAD_PIXEL_U8, 0 },         /* 1-pixel views */
	{ 13, 7, 3, PARLOAD_PIXEL_U8, 0 },        /* odd sizes */
	{ 5, 3, 5, PARLOAD_PIXEL_U16, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_I16, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_U32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_I32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_F32, 0 },
	{ 5, 3, 5, PARLOAD_PIXEL_F64, 0 },
	{ 1000, 4, 2, PARLOAD_PIXEL_U16, 0 },     /* 1000 tiny views */
	{ 3, 300, 301, PARLOAD_PIXEL_U16, 0 },    /* views > 4 KiB buffer */
	{ 7, 33, 17, PARLOAD_PIXEL_U8, PARLOAD_FLAG_CRC32C },
};
#define N_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

/* Every shape is written, read by the reference and loaded by the
 * parallel loader once, before Check forks for the tests; so is the
 * stream loaded a few bytes a read call. */
static char *shape_path[N_SHAPES];
static tu_soa shape_ref[N_SHAPES];
static parload_dataset shape_par[N_SHAPES];
static char *capped_path;
static tu_soa capped_ref;

static void shapes_setup(void)
{
	for (int i = 0; i < N_SHAPES; i++) {
		const tu_shape *s = &shapes[i];
		parload_error err;
		char name[64];

		snprintf(name, sizeof(name), "shape%d.raw", i);
		shape_path[i] = tu_path(name);
		tu_write_shape(shape_path[i], s, 1000 + (uint64_t)i);
		ck_assert_int_eq(tu_serial_read(shape_path[i], &shape_ref[i]),
				 0);
		ck_assert_msg(load(shape_path[i], parallel(), &shape_par[i],
				   &err) == 0,
			      "parallel: %s", err.message);
		tu_assert_same(&shape_par[i], &shape_ref[i]);
	}
	capped_path = tu_path("maxread.raw");
	tu_write_stream(capped_path, 11, 13, 7, PARLOAD_PIXEL_U16, 0, 77);
	ck_assert_int_eq(tu_serial_read(capped_path, &capped_ref), 0);
}

static void shapes_teardown(void)
{
	for (int i = 0; i < N_SHAPES; i++) {
		parload_dataset_free(&shape_par[i]);
		tu_soa_free(&shape_ref[i]);
		free(shape_path[i]);
	}
	tu_soa_free(&capped_ref);
	free(capped_path);
}

/* One configuration loads every shape as the reference and the parallel
 * loader do, and says which strategy it used. */
START_TEST(test_every_combination_identical)
{
	const tu_config *c = tu_matrix(_i);

	for (int si = 0; si < N_SHAPES; si++) {
		for (int k = 0; k < variants(c); k++) {
			tu_config v = variant(c, k);
			parload_dataset ds;
			parload_error err;
			char what[160];

			snprintf(what, sizeof(what), "%s (shape %d)", v.label,
				 si);
			ck_assert_msg(load(shape_path[si], &v, &ds, &err) == 0,
				      "%s: %s", what, err.message);
			tu_assert_same(&ds, &shape_ref[si]);
			assert_same_dataset(&ds, &shape_par[si], what);
			ck_assert_int_eq(ds.stats.strategy, c->strategy);
			if (c->strategy != PARLOAD_STRATEGY_PARALLEL)
				ck_assert_uint_eq(ds.stats.threads, 1);
			parload_dataset_free(&ds);
		}
	}
}
END_TEST

/* A cap of a few bytes per read call drives every loop that splits
 * requests; the data must not change. */
START_TEST(test_tiny_max_read_identical)
{
	const tu_config *c = tu_matrix(_i);
	parload_dataset ds;
	parload_error err;

	ck_assert_msg(load_capped(capped_path, c, 7, &ds, &err) == 0, "%s: %s",
		      c->label, err.message);
	tu_assert_same(&ds, &capped_ref);
	parload_dataset_free(&ds);
}
END_TEST

/* ---- the same errors as the parallel loader ---- */

/* Every damaged file (damage.h) is made, and loaded by the parallel
 * loader, once before Check forks. */
static char *damage_path[64];
static parload_error damage_err[64];

static void damages_setup(void)
{
	static const parload_dataset zero;

	ck_assert_int_le(tu_n_damages, 64);
	for (int i = 0; i < tu_n_damages; i++) {
		parload_dataset ds;

		damage_path[i] = tu_damaged_file(i);
		ck_assert_int_eq(load(damage_path[i], parallel(), &ds,
				      &damage_err[i]),
				 tu_damages[i].code);
		ck_assert_int_eq(memcmp(&ds, &zero, sizeof(ds)), 0);
	}
}

static void damages_teardown(void)
{
	for (int i = 0; i < tu_n_damages; i++)
		free(damage_path[i]);
}

START_TEST(test_same_errors_as_parallel)
{
	static const parload_dataset zero;
	const tu_config *c = tu_matrix(_i);

	for (int i = 0; i < tu_n_damages; i++) {
		const parload_error *perr = &damage_err[i];

		for (int k = 0; k < variants(c); k++) {
			tu_config v = variant(c, k);
			parload_dataset ds;
			parload_error err;
			int rc = load(damage_path[i], &v, &ds, &err);

			ck_assert_msg(rc == perr->code,
				      "%s, %s: %s, parallel %s", v.label,
				      tu_damages[i].what, parload_err_name(rc),
				      parload_err_name(perr->code));
			ck_assert_str_eq(err.message, perr->message);
			ck_assert_uint_eq(err.view, perr->view);
			ck_assert_uint_eq(err.offset, perr->offset);
			ck_assert_int_eq(err.sys_errno, perr->sys_errno);
			/* Nothing is left behind. */
			ck_assert_int_eq(memcmp(&ds, &zero, sizeof(ds)), 0);
		}
	}
}
END_TEST

/* ---- the counters ---- */

/* n views of 16-byte payloads: every read fits in one call. */
static char *tiny_stream(const char *name, uint64_t n)
{
	char *path = tu_path(name);

	tu_write_stream(path, n, 4, 2, PARLOAD_PIXEL_U16, 0, 9);
	return path;
}

/* A configuration outside the matrix: s with io and buffer. */
static tu_config setting(int s, int io, size_t buffer)
{
	tu_config c = { "", s, 0, io, buffer };

	return c;
}

static uint64_t calls(const char *path, int s, int io, size_t buffer,
		      size_t max_read)
{
	const tu_config cf = setting(s, io, buffer);
	parload_dataset ds;
	parload_error err;
	uint64_t c;

	ck_assert_msg(load_capped(path, &cf, max_read, &ds, &err) == 0, "%s",
		      err.message);
	ck_assert_double_gt(ds.stats.seconds, 0.0);
	c = ds.stats.read_calls;
	parload_dataset_free(&ds);
	return c;
}

/* The stdio counts are the kernel's count of this thread's reads, which
 * under valgrind include valgrind's own (it reads a pipe around every
 * system call): exact only without it.  Why they are not exact here, or
 * NULL. */
static const char *why_stdio_inexact(void)
{
	if (access("/proc/thread-self/io", R_OK) != 0)
		return "/proc/thread-self/io is not readable: no count of the "
		       "kernel's reads for stdio";
	if (tu_under_valgrind())
		return "under valgrind the kernel's count of reads includes "
		       "valgrind's own";
	return NULL;
}

/* One read for the file header and two per view; the size came from
 * fstat, so no read is spent finding the end of the file. */
START_TEST(test_sequential_posix_unbuffered_calls)
{
	char *path = tiny_stream("seqcalls.raw", 50);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, 0, 0), 1 + 2 * 50);
	/* POSIX has no buffer of its own: the default is unbuffered. */
	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, PARLOAD_BUFFER_DEFAULT, 0),
			  1 + 2 * 50);
	free(path);
}
END_TEST

START_TEST(test_two_pass_posix_unbuffered_calls)
{
	char *path = tiny_stream("twocalls.raw", 50);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_TWO_PASS,
				PARLOAD_IO_POSIX, 0, 0), 1 + 2 * 50);
	free(path);
}
END_TEST

START_TEST(test_bulk_posix_calls_follow_max_read)
{
	char *path = tiny_stream("bulkcalls.raw", 50);
	const uint64_t records = 50 * 48;

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_BULK,
				PARLOAD_IO_POSIX, 0, 0), 2);
	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_BULK,
				PARLOAD_IO_POSIX, 0, 100),
			  1 + (records + 99) / 100);
	free(path);
}
END_TEST

/* A buffered POSIX reader reads the file in buffer-sized steps, whatever
 * the records. */
START_TEST(test_buffered_posix_reads_buffer_sized_steps)
{
	char *path = tiny_stream("bufsteps.raw", 1000);
	uint64_t size = tu_file_size(path);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_POSIX, 4096, 0),
			  (size + 4095) / 4096);
	/* Two passes over the file, each in 4 KiB steps from its start. */
	ck_assert_uint_le(calls(path, PARLOAD_STRATEGY_TWO_PASS,
				PARLOAD_IO_POSIX, 4096, 0),
			  2 * ((size + 4095) / 4096) + 1);
	free(path);
}
END_TEST

/* The stdio count comes from the kernel's per-thread counters; glibc's
 * unbuffered fread issues one read per call, which pins the method. */
START_TEST(test_stdio_unbuffered_calls_counted)
{
	char *path = tiny_stream("stdiocalls.raw", 50);

	ck_assert_uint_eq(calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
				PARLOAD_IO_STDIO, 0, 0), 1 + 2 * 50);
	free(path);
}
END_TEST

/* A stdio buffer cuts the kernel's reads of tiny views tenfold, and a
 * bigger one does not add any. */
START_TEST(test_stdio_buffer_reduces_calls)
{
	char *path = tiny_stream("stdiobuf.raw", 50);
	uint64_t unbuf = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
			       PARLOAD_IO_STDIO, 0, 0);
	uint64_t def = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
			     PARLOAD_IO_STDIO, PARLOAD_BUFFER_DEFAULT, 0);
	uint64_t big = calls(path, PARLOAD_STRATEGY_SEQUENTIAL,
			     PARLOAD_IO_STDIO, (size_t)1 << 20, 0);

	ck_assert_uint_gt(def, 0);
	ck_assert_uint_lt(def * 10, unbuf);
	ck_assert_uint_le(big, def);
	free(path);
}
END_TEST

START_TEST(test_buffer_reduces_calls_for_tiny_views)
{
	char *path = tiny_stream("tinybuf.raw", 1000);

	for (int s = 0; s < PARLOAD_STRATEGY_COUNT_; s++) {
		uint64_t unbuf, buf;

		if (!parload_strategy_uses_io(s))
			continue;
		unbuf = calls(path, s, PARLOAD_IO_POSIX, 0, 0);
		buf = calls(path, s, PARLOAD_IO_POSIX, 4096, 0);
		ck_assert_uint_gt(unbuf, 0);
		ck_assert_uint_gt(buf, 0);
		if (s != PARLOAD_STRATEGY_BULK)
			ck_assert_uint_lt(buf * 10, unbuf);
		else
			ck_assert_uint_le(buf, unbuf);
	}
	free(path);
}
END_TEST

START_TEST(test_mmap_counts_no_reads)
{
	char *path = tiny_stream("mmapstats.raw", 20);
	parload_dataset ds;
	parload_error err;
	const tu_config mm = setting(PARLOAD_STRATEGY_MMAP, PARLOAD_IO_POSIX,
				     0);

	ck_assert_int_eq(load(path, &mm, &ds, &err), 0);
	ck_assert_uint_eq(ds.stats.read_calls, 0);
	ck_assert_uint_eq(ds.stats.bytes_read, tu_file_size(path));
	ck_assert_uint_eq(ds.stats.threads, 1);
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* Every byte of the file is read at least once. */
START_TEST(test_bytes_read_cover_the_file)
{
	const tu_config *c = tu_matrix(_i);
	char *path = tiny_stream("bytes.raw", 300);
	parload_dataset ds;
	parload_error err;

	ck_assert_int_eq(load(path, c, &ds, &err), 0);
	ck_assert_uint_ge(ds.stats.bytes_read, tu_file_size(path));
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* The configurations that read each byte once (unbuffered, in one pass)
 * through the I/O API io: indices into the matrix. */
static int once[TU_MATRIX_MAX], n_once;

static void list_read_once(int io)
{
	n_once = 0;
	for (int i = 0; i < tu_matrix_size(); i++) {
		const tu_config *c = tu_matrix(i);

		if (parload_strategy_uses_io(c->strategy) && c->io == io &&
		    c->buffer == 0 && c->strategy != PARLOAD_STRATEGY_TWO_PASS)
			once[n_once++] = i;
	}
}

/* Bulk and sequential unbuffered read nothing twice. */
START_TEST(test_bytes_read_once)
{
	const tu_config *c = tu_matrix(once[_i]);
	char *path = tiny_stream("once.raw", 300);
	parload_dataset ds;
	parload_error err;

	ck_assert_int_eq(load(path, c, &ds, &err), 0);
	ck_assert_msg(ds.stats.bytes_read == tu_file_size(path),
		      "%s: %" PRIu64 " bytes read of %" PRIu64, c->label,
		      ds.stats.bytes_read, tu_file_size(path));
	parload_dataset_free(&ds);
	free(path);
}
END_TEST

/* ---- what the strategies say they can do, and the limits ---- */

static int count_batch(const parload_batch *b, void *arg)
{
	(void)b;
	++*(unsigned *)arg;
	return 0;
}

/* Load path with l as a request with on_batch; the batches delivered are
 * counted in *n. */
static int load_batched(parload_loader *l, const char *path, unsigned *n,
			parload_error *err)
{
	parload_request r;
	parload_dataset ds;
	int rc;

	parload_request_init(&r);
	r.source.path = path;
	r.on_batch = count_batch;
	r.batch_arg = n;
	r.batch_views = 2;
	rc = parload_loader_run(l, &r, &ds, err);
	parload_dataset_free(&ds);
	return rc;
}

/* ds is views 2 to 6 of path, as the parallel loader reads them. */
static void assert_views_2_to_6(const char *path, const parload_dataset *ds)
{
	const uint64_t vb = ds->shape.view_bytes;
	parload_dataset all;

	ck_assert_int_eq(parload_load(path, NULL, &all), 0);
	ck_assert_uint_eq(ds->shape.views, 4);
	ck_assert_int_eq(memcmp(ds->headers, all.headers + 2,
				4 * sizeof(*ds->headers)), 0);
	ck_assert_int_eq(memcmp(ds->pixels, (char *)all.pixels + 2 * vb,
				4 * vb), 0);
	parload_dataset_free(&all);
}

/* Each capability strategy _i claims is what it does: a selection loads
 * or is refused, batches are delivered or refused, the loader's threads
 * are its workers or one.  Unknown strategies can do nothing. */
START_TEST(test_caps_are_what_strategies_do)
{
	const unsigned caps = parload_strategy_caps(_i);
	char *path = tiny_stream("caps.raw", 8);
	parload_selection sel;
	parload_options o;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;
	unsigned batches = 0;

	ck_assert_int_eq(parload_strategy_uses_io(_i),
			 (caps & PARLOAD_CAP_IO) != 0);
	ck_assert_uint_eq(parload_strategy_caps(-1), 0);
	ck_assert_uint_eq(parload_strategy_caps(PARLOAD_STRATEGY_COUNT_), 0);
	parload_options_init(&o);
	o.strategy = (parload_strategy)_i;
	o.threads = 3;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	ck_assert_uint_eq(parload_loader_threads(l),
			  caps & PARLOAD_CAP_THREADS ? 3 : 1);
	parload_selection_init(&sel);
	sel.views.start = 2;
	sel.views.stop = 6;
	ck_assert_int_eq(tu_load(l, path, &sel, NULL, &ds,
						    &err),
			 caps & PARLOAD_CAP_SELECT ? 0 : PARLOAD_ENOTSUP);
	if (caps & PARLOAD_CAP_SELECT)
		assert_views_2_to_6(path, &ds);
	parload_dataset_free(&ds);
	ck_assert_int_eq(load_batched(l, path, &batches, &err),
			 caps & PARLOAD_CAP_BATCHES ? 0 : PARLOAD_ENOTSUP);
	ck_assert_uint_eq(batches, caps & PARLOAD_CAP_BATCHES ? 4 : 0);
	parload_loader_free(l);
	free(path);
}
END_TEST

/* More threads than PARLOAD_THREADS_MAX is refused by the library, with
 * every strategy, before a thread starts: PARLOAD_EINVAL naming the
 * limit, not PARLOAD_ETHREAD once the process runs out of threads.  The
 * limit itself is accepted (the workers start with the first load). */
START_TEST(test_threads_over_the_limit_refused)
{
	char *path = tiny_stream("limit.raw", 2);
	parload_options o;
	parload_loader *l;
	parload_dataset ds;
	parload_error err;

	parload_options_init(&o);
	o.strategy = (parload_strategy)_i;
	o.threads = PARLOAD_THREADS_MAX + 1;
	o.error = &err;
	ck_assert_int_eq(parload_load(path, &o, &ds), PARLOAD_EINVAL);
	ck_assert_ptr_null(ds.pixels);
	ck_assert_msg(strstr(err.message, "at most 4096 "
					  "(PARLOAD_THREADS_MAX)"),
		      "%s", err.message);
	o.threads = UINT_MAX;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), PARLOAD_EINVAL);
	ck_assert_ptr_null(l);
	o.threads = PARLOAD_THREADS_MAX;
	ck_assert_int_eq(parload_loader_new(&l, &o, &err), 0);
	parload_loader_free(l);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("strategies");
	TCase *t = tu_tcase(s, "identical", 60);

	tcase_add_unchecked_fixture(t, shapes_setup, shapes_teardown);
	tu_add_matrix_test(t, test_every_combination_identical);
	tu_add_matrix_test(t, test_tiny_max_read_identical);

	t = tu_tcase(s, "errors", 0);
	tcase_add_unchecked_fixture(t, damages_setup, damages_teardown);
	tu_add_matrix_test(t, test_same_errors_as_parallel);

	t = tu_tcase(s, "stats", 0);
	tcase_add_test(t, test_sequential_posix_unbuffered_calls);
	tcase_add_test(t, test_two_pass_posix_unbuffered_calls);
	tcase_add_test(t, test_bulk_posix_calls_follow_max_read);
	tcase_add_test(t, test_buffered_posix_reads_buffer_sized_steps);
	tcase_add_test(t, test_buffer_reduces_calls_for_tiny_views);
	tcase_add_test(t, test_mmap_counts_no_reads);
	/* Every configuration that reads through an I/O API. */
	for (int st = 0; st < PARLOAD_STRATEGY_COUNT_; st++)
		if (parload_strategy_uses_io(st))
			tcase_add_loop_test(t, test_bytes_read_cover_the_file,
					    tu_matrix_first(st),
					    tu_matrix_end(st));
	list_read_once(PARLOAD_IO_POSIX);
	tcase_add_loop_test(t, test_bytes_read_once, 0, n_once);
	t = tu_tcase(s, "capabilities", 0);
	tcase_add_loop_test(t, test_caps_are_what_strategies_do, 0,
			    PARLOAD_STRATEGY_COUNT_);
	tcase_add_loop_test(t, test_threads_over_the_limit_refused, 0,
			    PARLOAD_STRATEGY_COUNT_);
	return s;
}

/* What the kernel's count of a thread's reads pins (part 1). */
static Suite *stdio_suite(void)
{
	Suite *s = suite_create("strategies_stdio");
	TCase *t = tu_tcase(s, "stdio stats", 0);

	tcase_add_test(t, test_stdio_unbuffered_calls_counted);
	tcase_add_test(t, test_stdio_buffer_reduces_calls);
	list_read_once(PARLOAD_IO_STDIO);
	tcase_add_loop_test(t, test_bytes_read_once, 0, n_once);
	return s;
}

static const tu_part parts[] = {
	{ "check_strategies", NULL, suite },
	{ "check_strategies_stdio", why_stdio_inexact, stdio_suite },
};

int main(void)
{
	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
