/*
 * check_h5index4.c - parload's own reader of the chunk indexes of a
 * version 4 layout (src/formats/hdf5/hdf5_index4.c, through
 * parload__h5index_walk) against libhdf5's answers, on files written
 * here with libhdf5 as h5py writes them with libver='latest': a fixed
 * array (paged when large), an extensible array (with super blocks and
 * paged data blocks; its unlimited dimension first or not), a version 2
 * B-tree (with internal nodes), a single chunk and implicit chunks,
 * filtered (gzip) or not, chunks never written, appends in SWMR mode.
 * Every chunk the walk gives is the one libhdf5's lookup finds at its
 * coordinates (H5Dget_chunk_storage_size, H5Dread_chunk: its bytes in
 * the file and its filter mask), there are as many as libhdf5 counts,
 * in the order H5Dget_chunk_info lists them (but where libhdf5 1.10's
 * list is wrong: a swizzled extensible array).  Damaged indexes (a
 * signature, a checksum, a count past its limit, an address past the
 * file) make it fall back.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "formats/formats.h"

#include "testutil.h"

#ifndef HAVE_HDF5
int main(void)
{
	return tu_skip("check_h5index4", "this build has no HDF5 "
					 "(configure --with-hdf5, "
					 "libhdf5-dev)");
}
#else
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#define UNL H5S_UNLIMITED

/* A dataset of u8, and the index libhdf5 gives it. */
typedef struct case4 {
	const char *name;
	H5D_chunk_index_t index;
	int rank;
	hsize_t dims[3], chunk[3];
	hsize_t max[3];     /* max[0] == 0: the dims */
	int gzip;
	bool early;         /* allocated when made: implicit */
	int every;          /* frames written: every every-th (0: all) */
	bool swmr;          /* written by appends in SWMR mode */
	bool swizzled;      /* libhdf5 1.10 lists its chunks wrongly */
} case4;

static const case4 cases[] = {
	{ "fa", H5D_CHUNK_IDX_FARRAY, 3, { 6, 8, 5 }, { 1, 4, 5 } },
	{ "fa_gz", H5D_CHUNK_IDX_FARRAY, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  .gzip = 4 },
	{ "fa_paged", H5D_CHUNK_IDX_FARRAY, 3, { 80, 8, 8 }, { 1, 2, 2 } },
	{ "fa_paged_gz", H5D_CHUNK_IDX_FARRAY, 3, { 80, 8, 8 }, { 1, 2, 2 },
	  .gzip = 1, .every = 3 },
	{ "fa_max", H5D_CHUNK_IDX_FARRAY, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  { 10, 9, 5 } },
	{ "fa_part", H5D_CHUNK_IDX_FARRAY, 3, { 6, 8, 5 }, { 1, 3, 5 },
	  .every = 2 },
	{ "fa_2d", H5D_CHUNK_IDX_FARRAY, 2, { 9, 5 }, { 2, 5 } },
	{ "ea", H5D_CHUNK_IDX_EARRAY, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  { UNL, 8, 5 } },
	{ "ea_gz", H5D_CHUNK_IDX_EARRAY, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  { UNL, 8, 5 }, .gzip = 4, .every = 4 },
	{ "ea_super", H5D_CHUNK_IDX_EARRAY, 3, { 3000, 2, 3 }, { 1, 1, 3 },
	  { UNL, 2, 3 }, .every = 7 },
	{ "ea_paged", H5D_CHUNK_IDX_EARRAY, 2, { 140000, 1 }, { 1, 1 },
	  { UNL, 1 } },
	{ "ea_mid", H5D_CHUNK_IDX_EARRAY, 3, { 7, 16, 5 }, { 1, 4, 5 },
	  { 7, UNL, 5 }, .swizzled = true },
	{ "ea_swmr", H5D_CHUNK_IDX_EARRAY, 3, { 300, 8, 8 }, { 1, 8, 8 },
	  { UNL, 8, 8 }, .gzip = 4, .swmr = true },
	{ "bt2", H5D_CHUNK_IDX_BT2, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  { UNL, UNL, 5 } },
	{ "bt2_gz", H5D_CHUNK_IDX_BT2, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  { UNL, UNL, 5 }, .gzip = 4, .every = 2 },
	{ "bt2_deep", H5D_CHUNK_IDX_BT2, 3, { 2000, 4, 10 }, { 1, 2, 10 },
	  { UNL, UNL, UNL } },
	{ "bt2_deep_gz", H5D_CHUNK_IDX_BT2, 3, { 2000, 4, 10 }, { 1, 2, 5 },
	  { UNL, UNL, UNL }, .gzip = 1 },
	{ "single", H5D_CHUNK_IDX_SINGLE, 3, { 6, 8, 5 }, { 6, 8, 5 } },
	{ "single_gz", H5D_CHUNK_IDX_SINGLE, 3, { 6, 8, 5 }, { 6, 8, 5 },
	  .gzip = 4 },
	{ "implicit", H5D_CHUNK_IDX_NONE, 3, { 6, 8, 5 }, { 1, 4, 5 },
	  .early = true },
	{ "implicit_max", H5D_CHUNK_IDX_NONE, 3, { 3, 8, 5 }, { 2, 4, 5 },
	  { 10, 8, 5 }, .early = true },
};

static uint64_t count(const case4 *c)
{
	uint64_t n = 1;

	for (int k = 0; k < c->rank; k++)
		n *= c->dims[k];
	return n;
}

/* Frames [0, n) of c's pixels: frame f's pixel i at f * per + i. */
static unsigned char *pixels(const case4 *c)
{
	const uint64_t n = count(c);
	unsigned char *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	for (uint64_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 2654435761u) >> 11);
	return p;
}

static hid_t dcpl_of(const case4 *c)
{
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);

	ck_assert_int_ge(H5Pset_chunk(dcpl, c->rank, c->chunk), 0);
	if (c->gzip)
		ck_assert_int_ge(H5Pset_deflate(dcpl, (unsigned)c->gzip), 0);
	if (c->early)
		ck_assert_int_ge(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY),
				 0);
	return dcpl;
}

/* Frames [f, f + n) of p into d (its slowest dimension's). */
static void write_frames(hid_t d, const case4 *c, const unsigned char *p,
			 hsize_t f, hsize_t n)
{
	hsize_t start[3] = { f, 0, 0 }, cnt[3];
	const uint64_t per = count(c) / c->dims[0];
	hid_t fs = H5Dget_space(d), ms;

	memcpy(cnt, c->dims, sizeof(cnt));
	cnt[0] = n;
	ms = H5Screate_simple(c->rank, cnt, NULL);
	ck_assert_int_ge(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL,
					     cnt, NULL), 0);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT,
				  p + f * per), 0);
	H5Sclose(ms);
	H5Sclose(fs);
}

/* SWMR: frame after frame appended, flushed now and then. */
static void append(hid_t file, const case4 *c, const unsigned char *p)
{
	hsize_t dims[3];
	hid_t s, dcpl = dcpl_of(c), d;

	memcpy(dims, c->dims, sizeof(dims));
	dims[0] = 0;
	s = H5Screate_simple(c->rank, dims, c->max);
	d = H5Dcreate2(file, c->name, H5T_STD_U8LE, s, H5P_DEFAULT, dcpl,
		       H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Fstart_swmr_write(file), 0);
	for (hsize_t f = 0; f < c->dims[0]; f++) {
		dims[0] = f + 1;
		ck_assert_int_ge(H5Dset_extent(d, dims), 0);
		write_frames(d, c, p, f, 1);
		if (f % 50 == 0)
			ck_assert_int_ge(H5Dflush(d), 0);
	}
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(s);
}

/* c's file at path (libver latest), its pixels written. */
static void make(const char *path, const case4 *c)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, s, dcpl, d;
	unsigned char *p = pixels(c);

	ck_assert_int_ge(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST,
					      H5F_LIBVER_LATEST), 0);
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	ck_assert_int_ge(f, 0);
	if (c->swmr) {
		append(f, c, p);
	} else {
		s = H5Screate_simple(c->rank, c->dims, c->max[0] ? c->max :
								   NULL);
		dcpl = dcpl_of(c);
		d = H5Dcreate2(f, c->name, H5T_STD_U8LE, s, H5P_DEFAULT, dcpl,
			       H5P_DEFAULT);
		ck_assert_int_ge(d, 0);
		if (!c->every)
			write_frames(d, c, p, 0, c->dims[0]);
		for (hsize_t k = 0; c->every && k < c->dims[0]; k += c->every)
			write_frames(d, c, p, k, 1);
		H5Dclose(d), H5Pclose(dcpl), H5Sclose(s);
	}
	H5Fclose(f);
	H5Pclose(fapl);
	free(p);
}

/* What libhdf5 says of where c's dataset is, for the walk. */
static parload__h5where where(hid_t f, hid_t d, const case4 *c)
{
	hid_t fcpl = H5Fget_create_plist(f);
	hsize_t ub = 0;
	size_t so = 0, sl = 0;
	unsigned ik = 0;
	H5O_info_t info;
	parload__h5where w;

	ck_assert_int_ge(H5Pget_userblock(fcpl, &ub), 0);
	ck_assert_int_ge(H5Pget_sizes(fcpl, &so, &sl), 0);
	ck_assert_int_ge(H5Pget_istore_k(fcpl, &ik), 0);
	ck_assert_int_ge(H5Oget_info2(d, &info, H5O_INFO_BASIC), 0);
	H5Pclose(fcpl);
	w = (parload__h5where){ .super = ub, .header = info.addr,
				.istore_k = ik, .so = (unsigned)so,
				.sl = (unsigned)sl, .rank = c->rank,
				.elem = 1 };
	for (int k = 0; k < c->rank; k++) {
		w.dims[k] = c->dims[k];
		w.chunk[k] = c->chunk[k];
	}
	return w;
}

/* The chunks a walk gives, in its order. */
typedef struct table {
	parload__chunk *c;
	uint64_t n, cap;
} table;

static int keep(void *ctx, const parload__chunk *c)
{
	table *t = ctx;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->c = realloc(t->c, t->cap * sizeof(*t->c));
		ck_assert_ptr_nonnull(t->c);
	}
	t->c[t->n++] = *c;
	return 0;
}

/* The walk over path's dataset c as libhdf5 says where it is: its code,
 * the chunks in *t. */
static int walk(const char *path, const case4 *c, table *t)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t d = H5Dopen2(f, c->name, H5P_DEFAULT);
	parload__h5where w = where(f, d, c);
	parload_error err;
	int fd = open(path, O_RDONLY), rc;

	ck_assert_int_ge(fd, 0);
	memset(t, 0, sizeof(*t));
	rc = parload__h5index_walk(fd, &w, keep, t, path, c->name, &err);
	close(fd);
	H5Dclose(d);
	H5Fclose(f);
	return rc;
}

/* Chunk i's coordinates (the dataset's rank of them). */
static void coords(const case4 *c, const parload__chunk *ch, hsize_t *at)
{
	for (int k = 0; k < c->rank; k++)
		at[k] = ch->at[3 - c->rank + k];
}

/* The chunk is what libhdf5's lookup finds at its coordinates: its
 * stored size, and the bytes and mask H5Dread_chunk reads there, which
 * are the file's at its address. */
static void found_there(hid_t d, const case4 *c, const parload__chunk *ch,
			const unsigned char *file, size_t len)
{
	hsize_t at[3], bytes = 0;
	uint32_t mask = 99;
	unsigned char *buf = malloc(ch->bytes + 1);

	coords(c, ch, at);
	ck_assert_int_ge(H5Dget_chunk_storage_size(d, at, &bytes), 0);
	ck_assert_uint_eq(bytes, ch->bytes);
	ck_assert_uint_le(ch->addr + ch->bytes, len);
	ck_assert_int_ge(H5Dread_chunk(d, H5P_DEFAULT, at, &mask, buf), 0);
	ck_assert_uint_eq(mask, ch->mask);
	ck_assert_mem_eq(buf, file + ch->addr, ch->bytes);
	free(buf);
}

/* Chunk i of libhdf5's list is the walk's. */
static void listed(hid_t d, const case4 *c, const parload__chunk *ch,
		   hsize_t i)
{
	hid_t s = H5Dget_space(d);
	hsize_t at[3] = { 0, 0, 0 }, want[3], bytes = 0;
	unsigned mask = 99;
	haddr_t addr = 0;

	ck_assert_int_ge(H5Dget_chunk_info(d, s, i, at, &mask, &addr, &bytes),
			 0);
	coords(c, ch, want);
	for (int k = 0; k < c->rank; k++)
		ck_assert_uint_eq(at[k], want[k]);
	ck_assert_uint_eq(addr, ch->addr);
	ck_assert_uint_eq(bytes, ch->bytes);
	ck_assert_uint_eq(mask, ch->mask);
	H5Sclose(s);
}

static void check_case(const case4 *c)
{
	char *path = tu_path("index4.h5");
	table t;
	size_t len;
	unsigned char *file;
	hid_t f, d, s;
	hsize_t n = 0;
	H5D_chunk_index_t index;

	make(path, c);
	ck_assert_msg(walk(path, c, &t) == 0, "%s: the walk fell back",
		      c->name);
	file = tu_read_all(path, &len);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	d = H5Dopen2(f, c->name, H5P_DEFAULT);
	s = H5Dget_space(d);
	ck_assert_int_ge(H5Dget_chunk_index_type(d, &index), 0);
	ck_assert_msg(index == c->index, "%s: index %d", c->name, (int)index);
	ck_assert_int_ge(H5Dget_num_chunks(d, s, &n), 0);
	ck_assert_msg(t.n == n, "%s: %" PRIu64 " chunks, libhdf5 %" PRIu64,
		      c->name, t.n, (uint64_t)n);
	for (uint64_t i = 0; i < t.n; i++) {
		/* (Each of libhdf5's lookups by index walks its list up to
		 * there: a sample of a long one.) */
		const uint64_t step = t.n / 256 + 1;

		if (i % (t.n / 16384 + 1) == 0 || i + 1 == t.n)
			found_there(d, c, &t.c[i], file, len);
		if (!c->swizzled && (i % step == 0 || i + 1 == t.n))
			listed(d, c, &t.c[i], i);
		/* In the order of the coordinates. */
		for (int k = 0; i && k < 3; k++)
			if (t.c[i].at[k] != t.c[i - 1].at[k]) {
				ck_assert_uint_gt(t.c[i].at[k],
						  t.c[i - 1].at[k]);
				break;
			}
	}
	H5Sclose(s), H5Dclose(d), H5Fclose(f);
	free(t.c);
	free(file);
	free(path);
}

START_TEST(every_index)
{
	check_case(&cases[_i]);
}
END_TEST

/* ---- damaged indexes fall back ---- */

/* The offset of the first sig in b (len bytes). */
static size_t find(const unsigned char *b, size_t len, const char *sig)
{
	for (size_t i = 0; i + 4 <= len; i++)
		if (memcmp(b + i, sig, 4) == 0)
			return i;
	ck_abort_msg("no %s", sig);
	return 0;
}

static const case4 *named(const char *name)
{
	for (int k = 0; k < TU_COUNT(cases); k++)
		if (strcmp(cases[k].name, name) == 0)
			return &cases[k];
	ck_abort_msg("no case %s", name);
	return NULL;
}

/* One damage: in case's file, at the structure of signature sig, the
 * field at off (of width bytes) set to value (or, where flip, its first
 * byte's bits flipped); its checksum over n bytes (0: left as it was)
 * made right again. */
typedef struct damage {
	const char *what, *name, *sig;
	size_t off;
	unsigned width;
	uint64_t value;
	bool flip;
	size_t n;
} damage;

static const damage damages[] = {
	{ "a bad signature", "fa_paged", "FADB", 0, 1, 0, true },
	{ "a checksum that fails", "fa", "FAHD", 8, 1, 0, true },
	{ "a count past its limit", "fa", "FAHD", 8, 8, 1000, false,
	  8 + 8 + 8 },
	{ "an address past the file", "fa", "FAHD", 16, 8, 1u << 30, false,
	  8 + 8 + 8 },
	{ "a bad signature", "ea_super", "EASB", 1, 1, 0, true },
	{ "a checksum that fails", "ea_super", "EAIB", 20, 1, 0, true },
	{ "a count past its limit", "ea", "EAHD", 12 + 4 * 8, 8, 1u << 20,
	  false, 12 + 6 * 8 + 8 },
	{ "an address past the file", "ea", "EAHD", 12 + 6 * 8, 8, 1u << 30,
	  false, 12 + 6 * 8 + 8 },
	{ "a bad signature", "bt2_deep", "BTIN", 2, 1, 0, true },
	{ "a checksum that fails", "bt2_deep", "BTLF", 12, 1, 0, true },
	{ "a count past its limit", "bt2", "BTHD", 18 + 8, 8, 1u << 20,
	  false, 18 + 8 + 8 + 8 },
	{ "an address past the file", "bt2", "BTHD", 16, 8, 1u << 30, false,
	  18 + 8 + 8 + 8 },
	{ "a depth past its limit", "bt2", "BTHD", 12, 2, 40, false,
	  18 + 8 + 8 + 8 },
	{ "a page whose checksum fails", "fa_paged", "FADB", 60, 1, 0, true },
};

START_TEST(damaged)
{
	const damage *g = &damages[_i];
	const case4 *c = named(g->name);
	char *path = tu_path("damaged4.h5");
	size_t len, at;
	unsigned char *b;
	table t;

	make(path, c);
	/* Undamaged, the walk reads it. */
	ck_assert_int_eq(walk(path, c, &t), 0);
	free(t.c);
	b = tu_read_all(path, &len);
	at = find(b, len, g->sig);
	if (g->flip) {
		tu_flip(path, at + g->off);
	} else {
		for (unsigned k = 0; k < g->width; k++)
			b[at + g->off + k] = (unsigned char)(g->value >> 8 * k);
		if (g->n) {
			const uint32_t sum = parload__h5_checksum(b + at,
								  g->n - 4);

			memcpy(b + at + g->n - 4, &sum, 4);
		}
		tu_write_file(path, b, len);
	}
	ck_assert_msg(walk(path, c, &t) == 1, "%s of %s in %s: not a fall back",
		      g->what, g->sig, g->name);
	free(t.c);
	free(b);
	free(path);
}
END_TEST

/* A dataset whose filter pipeline the index does not agree with (a
 * fixed array of unfiltered entries said to hold filtered ones): the
 * walk falls back rather than read sizes where addresses are. */
START_TEST(class_disagrees)
{
	const case4 *c = named("fa");
	char *path = tu_path("class4.h5");
	size_t len, at;
	unsigned char *b;
	uint32_t sum;
	table t;

	make(path, c);
	ck_assert_int_eq(walk(path, c, &t), 0);
	free(t.c);
	b = tu_read_all(path, &len);
	at = find(b, len, "FAHD");
	b[at + 5] = 1;
	sum = parload__h5_checksum(b + at, 8 + 8 + 8);
	memcpy(b + at + 24, &sum, 4);
	tu_write_file(path, b, len);
	ck_assert_int_eq(walk(path, c, &t), 1);
	free(t.c);
	free(b);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("h5index4");
	/* (ea_paged writes 140,000 chunks: seconds.) */
	TCase *t = tu_tcase(s, "indexes", 60);

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	tcase_add_loop_test(t, every_index, 0, TU_COUNT(cases));
	tcase_add_loop_test(t, damaged, 0, TU_COUNT(damages));
	tcase_add_test(t, class_disagrees);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
#endif /* HAVE_HDF5 */
