/*
 * check_hdf5.c - the HDF5 reader (src/formats/hdf5/hdf5.c) on fixtures this test writes
 * with libhdf5: the description and the strips table it makes, and every
 * strip's pixels (read back by codec: pread, inflate with libdeflate and
 * unshuffle, or the reader's own decoder) against the array written; the
 * chunk index parload reads itself (src/formats/hdf5/hdf5_index.c) against libhdf5's,
 * chunk by chunk, and where it falls back; the inputs it refuses; and
 * parload_save's .h5 read back with libhdf5.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "formats/hdf5/hdf5_core.h"

#include "testutil.h"

#ifndef HAVE_HDF5
int main(void)
{
	return tu_skip("check_hdf5", "this build has no HDF5 (configure "
				     "--with-hdf5, libhdf5-dev)");
}
#else
#include <fcntl.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <libdeflate.h>
#include <unistd.h>

/* What a fixture's dataset is. */
typedef struct fx {
	const char *name;
	hid_t type;         /* the file's type */
	int rank;
	hsize_t dims[3];
	hsize_t chunk[3];   /* chunk[0] == 0: contiguous */
	int gzip;
	bool shuffle;
	int filter;         /* another filter (optional), or 0 */
	bool unwritten;     /* frame 0 only (chunked), nothing (contiguous) */
	const struct fopts *file; /* how the file is made, or NULL */
} fx;

/* How a fixture's file is made (libhdf5's defaults when all 0). */
typedef struct fopts {
	unsigned istore_k;  /* B-tree nodes of 2K chunks */
	hsize_t userblock;
	H5F_libver_t low, high; /* libver bounds, when high is set */
} fopts;

static size_t fx_count(const fx *f)
{
	size_t n = 1;

	for (int k = 0; k < f->rank; k++)
		n *= f->dims[k];
	return n;
}

/* Pixel i of a fixture in its native type, as bytes of elem. */
static void *fx_pixels(const fx *f, size_t *elem)
{
	const size_t n = fx_count(f);
	unsigned char *p;

	*elem = H5Tget_size(f->type);
	p = malloc(n * *elem);
	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++) {
		const uint64_t v = (i * 2654435761u) >> 7;

		if (H5Tget_class(f->type) == H5T_FLOAT && *elem == 4) {
			float x = (float)(v % 100000) / 8.0f;

			memcpy(p + i * 4, &x, 4);
		} else if (H5Tget_class(f->type) == H5T_FLOAT) {
			double x = (double)(v % 100000) / 8.0;

			memcpy(p + i * 8, &x, 8);
		} else {
			memcpy(p + i * *elem, &v, *elem);
		}
	}
	return p;
}

static void fx_write_in(hid_t file, const fx *f, const void *pix)
{
	hid_t s = H5Screate_simple(f->rank, f->dims, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t mt = H5Tget_native_type(f->type, H5T_DIR_ASCEND);
	hid_t d;

	H5Pset_create_intermediate_group(lcpl, 1);
	if (f->chunk[0]) {
		ck_assert_int_ge(H5Pset_chunk(dcpl, f->rank, f->rank == 3 ?
						    f->chunk : f->chunk + 1), 0);
		if (f->shuffle)
			H5Pset_shuffle(dcpl);
		if (f->gzip)
			H5Pset_deflate(dcpl, (unsigned)f->gzip);
		if (f->filter)
			ck_assert_int_ge(H5Pset_filter(dcpl, (H5Z_filter_t)
							f->filter,
							H5Z_FLAG_OPTIONAL, 0,
							NULL), 0);
	}
	d = H5Dcreate2(file, f->name, f->type, s, lcpl, dcpl, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	if (!f->unwritten) {
		ck_assert_int_ge(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT,
					  pix), 0);
	} else if (f->chunk[0]) {
		hsize_t start[3] = { 0, 0, 0 }, count[3];
		hid_t ms;

		memcpy(count, f->dims, sizeof(count));
		count[0] = 1;
		ms = H5Screate_simple(3, count, NULL);
		H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count,
				    NULL);
		ck_assert_int_ge(H5Dwrite(d, mt, ms, s, H5P_DEFAULT, pix), 0);
		H5Sclose(ms);
	}
	H5Dclose(d);
	H5Tclose(mt);
	H5Pclose(lcpl);
	H5Pclose(dcpl);
	H5Sclose(s);
}

static hid_t create_with(const char *path, const fopts *o)
{
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	hid_t f;

	if (o && o->istore_k)
		ck_assert_int_ge(H5Pset_istore_k(fcpl, o->istore_k), 0);
	if (o && o->userblock)
		ck_assert_int_ge(H5Pset_userblock(fcpl, o->userblock), 0);
	if (o && o->high)
		ck_assert_int_ge(H5Pset_libver_bounds(fapl, o->low, o->high),
				 0);
	f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	ck_assert_int_ge(f, 0);
	H5Pclose(fapl);
	H5Pclose(fcpl);
	return f;
}

static hid_t create(const char *path)
{
	return create_with(path, NULL);
}

/* A file of one dataset; its pixels (native) to compare with. */
static void *fx_file(const char *path, const fx *f, size_t *elem)
{
	void *pix = fx_pixels(f, elem);
	hid_t file = create_with(path, f->file);

	fx_write_in(file, f, pix);
	H5Fclose(file);
	return pix;
}

static void write_1d(hid_t file, const char *name, hid_t type,
		     const void *v, hsize_t n)
{
	hid_t s = H5Screate_simple(1, &n, NULL);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t d;

	H5Pset_create_intermediate_group(lcpl, 1);
	d = H5Dcreate2(file, name, type, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v),
			 0);
	H5Dclose(d);
	H5Pclose(lcpl);
	H5Sclose(s);
}

static void set_class(hid_t file, const char *obj, const char *cls)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
	hid_t o = H5Oopen(file, obj, H5P_DEFAULT);
	hid_t a;

	H5Tset_size(t, strlen(cls) + 1);
	a = H5Acreate2(o, "NX_class", t, s, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Awrite(a, t, cls), 0);
	H5Aclose(a);
	H5Oclose(o);
	H5Sclose(s);
	H5Tclose(t);
}

/* ---- reading the table back ---- */

/* The reader left no libhdf5 object open. */
static void none_open(void)
{
	ck_assert_int_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

/* dataset of path read by the back-end PARLOAD_HDF5 names ("native",
 * "libhdf5"; NULL: auto, the default), the public choice between
 * parload's own reader and libhdf5's. */
static int h5read_by(const char *backend, const char *path,
		     const char *dataset, parload_frames fr,
		     parload__container *c, parload_error *err)
{
	parload_source src = { .path = path, .fd = -1, .dataset = dataset,
			       .frames = fr };
	int rc;

	if (backend)
		ck_assert_int_eq(setenv("PARLOAD_HDF5", backend, 1), 0);
	memset(err, 0, sizeof(*err));
	rc = parload__hdf5_read(&src, c, err);
	ck_assert_int_eq(unsetenv("PARLOAD_HDF5"), 0);
	return rc;
}

static int h5read(const char *path, const char *dataset, parload_frames fr,
		  parload__container *c, parload_error *err)
{
	return h5read_by(NULL, path, dataset, fr, c, err);
}

static void read_ok(const char *path, const char *dataset, parload_frames fr,
		    parload__container *c)
{
	parload_error err;
	const int rc = h5read(path, dataset, fr, c, &err);

	ck_assert_msg(rc == 0, "%s: %d %s", path, rc, err.message);
	none_open();
	ck_assert_int_eq(c->desc.format, PARLOAD_FORMAT_HDF5);
	ck_assert_uint_eq(c->n, 1);
	ck_assert_uint_eq(c->strips.views, c->desc.count);
}

/* dataset of path fails to be read by the back-end backend picks
 * (h5read_by), with code and a message holding says, nothing held. */
static void fails_by(const char *backend, const char *path,
		     const char *dataset, int code, const char *says)
{
	parload__container c;
	parload_error err;
	const int rc = h5read_by(backend, path, dataset,
				 PARLOAD_FRAMES_PROJECTIONS, &c, &err);

	ck_assert_msg(rc == code, "%s: %d, not %d: %s", path, rc, code,
		      err.message);
	ck_assert_msg(strstr(err.message, says), "%s lacks \"%s\"",
		      err.message, says);
	none_open();
	ck_assert_ptr_null(c.paths);
	ck_assert_ptr_null(c.strips.run);
}

static void read_fails(const char *path, const char *dataset, int code,
		       const char *says)
{
	fails_by(NULL, path, dataset, code, says);
}

/* The same failure with PARLOAD_HDF5=libhdf5: libhdf5's calls alone. */
static void lib_fails(const char *path, int code, const char *says)
{
	fails_by("libhdf5", path, NULL, code, says);
}

/* ---- the chunk index: parload's own parser against libhdf5's calls ---- */

/* The chunks a fixture's file holds. */
static uint64_t fx_chunks(const fx *f)
{
	const hsize_t *c = f->rank == 3 ? f->chunk : f->chunk + 1;
	uint64_t n = 1;

	for (int k = f->unwritten ? 1 : 0; k < f->rank; k++)
		n *= (f->dims[k] + c[k] - 1) / c[k];
	return n;
}

/* A table's codec as these tests name it: its strips as they are, one
 * deflate filter, shuffle then deflate, or the container's decoder. */
enum { K_NONE, K_DEFLATE, K_SHUFFLE_DEFLATE, K_CUSTOM, K_OTHER,
       K_FLETCHER32 };

static int kind(const parload__strips *t)
{
	if (t->decoder)
		return K_CUSTOM;
	if (t->nfilters == 0)
		return K_NONE;
	if (t->nfilters == 1 && t->filter[0].codec == PARLOAD__CODEC_DEFLATE)
		return K_DEFLATE;
	if (t->nfilters == 2 && t->filter[0].codec == PARLOAD__CODEC_SHUFFLE &&
	    t->filter[1].codec == PARLOAD__CODEC_DEFLATE)
		return K_SHUFFLE_DEFLATE;
	if (t->nfilters == 1 && t->filter[0].codec == PARLOAD__CODEC_FLETCHER32)
		return K_FLETCHER32;
	return K_OTHER;
}

/* Two containers' tables of one dataset, strip by strip alike: the same
 * shape, codec, files, and each strip's place, size and frame. */
static void same_strips(const char *path, const parload__container *a,
			const parload__container *b)
{
	const parload__strips *x = &a->strips, *y = &b->strips;

	ck_assert_mem_eq(&a->desc, &b->desc, sizeof(a->desc));
	ck_assert_uint_eq(a->n, b->n);
	for (size_t k = 0; k < a->n; k++)
		ck_assert_str_eq(a->paths[k], b->paths[k]);
	ck_assert_uint_eq(x->rows, y->rows);
	ck_assert_uint_eq(x->per_view, y->per_view);
	ck_assert_uint_eq(x->views, y->views);
	ck_assert_int_eq(kind(x), kind(y));
	ck_assert_uint_eq(x->added, y->added);
	for (uint64_t i = 0; i < x->views * x->per_view; i++) {
		const parload__strip p = parload__strip_of(x, i, NULL);
		const parload__strip q = parload__strip_of(y, i, NULL);

		ck_assert_msg(p.off == q.off && p.bytes == q.bytes &&
				      p.file == q.file && p.page == q.page,
			      "%s: strip %" PRIu64 " at %" PRIu64 ", %" PRIu64
			      " bytes, file %u, frame %u; other: at %" PRIu64
			      ", %" PRIu64 " bytes, file %u, frame %u", path,
			      i, p.off, p.bytes, p.file, p.page, q.off,
			      q.bytes, q.file, q.page);
	}
	ck_assert_int_eq(x->angles != NULL, y->angles != NULL);
	for (uint64_t v = 0; x->angles && v < x->views; v++)
		ck_assert_float_eq(x->angles[v], y->angles[v]);
}

/* The table of dataset in path by default (parload's parser of the chunk
 * index, where libhdf5 says where the dataset is) is the one libhdf5's
 * calls make (PARLOAD_HDF5=libhdf5), strip by strip; plain or deflated,
 * it has a strip for each of count chunks. */
static void same_index(const char *path, const char *dataset, uint64_t count)
{
	parload__container mine, lib;
	parload_error err;

	ck_assert_msg(h5read_by(NULL, path, dataset,
				PARLOAD_FRAMES_PROJECTIONS, &mine, &err) == 0,
		      "%s", err.message);
	ck_assert_msg(h5read_by("libhdf5", path, dataset,
				PARLOAD_FRAMES_PROJECTIONS, &lib, &err) == 0,
		      "%s", err.message);
	same_strips(path, &mine, &lib);
	if (kind(&lib.strips) != K_CUSTOM)
		ck_assert_uint_eq(lib.strips.added, count);
	ck_assert_uint_eq(lib.fallback_files, 1);
	parload__container_free(&mine);
	parload__container_free(&lib);
	none_open();
}

/* Strip i's decoded rows into out (strip_size bytes), by its codec. */
static void strip_rows(const parload__container *c, uint64_t i,
		       unsigned char *out, size_t len)
{
	const parload__strips *t = &c->strips;
	const parload__strip strip = parload__strip_of(t, i, NULL);
	const parload__strip *s = &strip;
	unsigned char *in;
	int fd;

	if (kind(t) == K_CUSTOM) {
		void *state = NULL;
		parload_error err;

		ck_assert_int_eq(t->decoder->open(t, &state, &err), 0);
		ck_assert_msg(t->decoder->decode(state, t, i, out, len, &err) ==
				      0, "%s", err.message);
		t->decoder->close(state);
		return;
	}
	in = malloc(s->bytes + 1);
	fd = open(c->paths[s->file], O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, in, s->bytes, (off_t)s->off),
			 (ssize_t)s->bytes);
	close(fd);
	if (kind(t) == K_NONE) {
		memcpy(out, in, len < s->bytes ? len : s->bytes);
	} else if (kind(t) == K_FLETCHER32) {
		/* The bytes, then their 4-byte checksum. */
		ck_assert_uint_eq(s->bytes, len + 4);
		memcpy(out, in, len);
	} else {
		struct libdeflate_decompressor *z =
			libdeflate_alloc_decompressor();
		unsigned char *tmp = malloc(len);
		size_t got = 0;

		ck_assert_int_eq(libdeflate_zlib_decompress(z, in, s->bytes, tmp,
							    len, &got), 0);
		ck_assert_uint_eq(got, len);
		libdeflate_free_decompressor(z);
		if (kind(t) == K_DEFLATE) {
			memcpy(out, tmp, len);
		} else {
			const uint32_t elem = t->filter[0].elem;
			const size_t n = len / elem;

			for (size_t e = 0; e < n; e++)
				for (uint32_t b = 0; b < elem; b++)
					out[e * elem + b] = tmp[b * n + e];
		}
		free(tmp);
	}
	free(in);
}

/* Every view of c holds frames[k] of pix (native, elem bytes). */
static void assert_pixels(const parload__container *c, const void *pix,
			  size_t elem, const uint64_t *frames)
{
	const parload_desc *d = &c->desc;
	const parload__strips *t = &c->strips;
	const size_t len = parload__strip_size(t, d);
	const size_t view = (size_t)d->width * d->height * elem;
	unsigned char *out = malloc(len);

	for (uint64_t v = 0; v < t->views; v++)
		for (uint32_t j = 0; j < t->per_view; j++) {
			const uint64_t r0 = (uint64_t)j * t->rows;
			const uint64_t rows = d->height - r0 < t->rows ?
						      d->height - r0 :
						      t->rows;
			const unsigned char *want =
				(const unsigned char *)pix +
				(frames ? frames[v] : v) * view +
				r0 * d->row_size;

			strip_rows(c, v * t->per_view + j, out, len);
			for (size_t b = 0; d->encoding == PARLOAD_ENC_BE &&
					   b < rows * d->row_size;
			     b += elem)
				for (size_t k = 0; k < elem / 2; k++) {
					const unsigned char x = out[b + k];

					out[b + k] = out[b + elem - 1 - k];
					out[b + elem - 1 - k] = x;
				}
			ck_assert_msg(memcmp(out, want, rows * d->row_size) ==
					      0, "view %" PRIu64 " strip %u",
				      v, j);
		}
	free(out);
}

/* A fixture's file at path (pix, elem bytes a pixel), read, its table
 * checked, its pixels compared. */
static void one_at(const char *path, const fx *f, const void *pix,
		   size_t elem, int type, int enc, uint32_t rows,
		   int codec)
{
	parload__container c;

	/* A 2-D dataset is never found without its name. */
	read_ok(path, f->rank == 2 ? f->name : NULL,
		PARLOAD_FRAMES_PROJECTIONS, &c);
	if (f->chunk[0])
		same_index(path, f->name, fx_chunks(f));
	ck_assert_int_eq(c.desc.pixel_type, type);
	ck_assert_int_eq(c.desc.encoding, enc);
	ck_assert_uint_eq(c.desc.width, f->dims[f->rank - 1]);
	ck_assert_uint_eq(c.desc.height, f->dims[f->rank - 2]);
	ck_assert_uint_eq(c.desc.count, f->rank == 3 ? f->dims[0] : 1);
	ck_assert_uint_eq(c.strips.rows, rows);
	ck_assert_uint_eq(c.strips.per_view,
			  (c.desc.height + rows - 1) / rows);
	ck_assert_int_eq(kind(&c.strips), codec);
	ck_assert_ptr_null(c.strips.angles);
	ck_assert_str_eq(c.paths[0], path);
	/* Every strip in the table; a contiguous dataset's, one run. */
	ck_assert_uint_eq(c.strips.added, c.desc.count * c.strips.per_view);
	if (!f->chunk[0])
		ck_assert_uint_eq(c.strips.runs, 1);
	assert_pixels(&c, pix, elem, NULL);
	parload__container_free(&c);
}

/* One fixture, written, then checked as above. */
static void one(const char *file, const fx *f, int type, int enc,
		uint32_t rows, int codec)
{
	char *path = tu_path(file);
	size_t elem;
	void *pix = fx_file(path, f, &elem);

	one_at(path, f, pix, elem, type, enc, rows, codec);
	free(pix);
	free(path);
}

START_TEST(contiguous_u16)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 5, 7, 9 } };

	one("c16.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 7,
	    K_NONE);
}
END_TEST

START_TEST(big_endian_i16)
{
	const fx f = { "/scan", H5T_STD_I16BE, 3, { 4, 6, 5 } };

	one("be.h5", &f, PARLOAD_PIXEL_I16, PARLOAD_ENC_BE, 6,
	    K_NONE);
}
END_TEST

START_TEST(every_type)
{
	static const struct {
		hid_t *t;
		int type;
	} all[] = {
		{ &H5T_STD_U8LE_g, PARLOAD_PIXEL_U8 },
		{ &H5T_STD_U32BE_g, PARLOAD_PIXEL_U32 },
		{ &H5T_STD_I32LE_g, PARLOAD_PIXEL_I32 },
		{ &H5T_IEEE_F32BE_g, PARLOAD_PIXEL_F32 },
		{ &H5T_IEEE_F64LE_g, PARLOAD_PIXEL_F64 },
	};

	H5open(); /* the H5T_ globals */
	for (int k = 0; k < TU_COUNT(all); k++) {
		const hid_t t = *all[k].t;
		const fx f = { "/v", t, 3, { 3, 4, 5 } };

		one("types.h5", &f, all[k].type,
		    H5Tget_order(t) == H5T_ORDER_BE ? PARLOAD_ENC_BE :
						      PARLOAD_ENC_LE,
		    4, K_NONE);
	}
}
END_TEST

START_TEST(chunked_views)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 6, 10, 12 }, { 1, 10, 12 } };

	one("ch.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 10,
	    K_NONE);
}
END_TEST

START_TEST(chunked_bands)
{
	/* 40 rows in chunks of 16: the third is 8 rows of a padded chunk. */
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 4, 40, 12 }, { 1, 16, 12 } };

	one("band.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 16,
	    K_NONE);
}
END_TEST

START_TEST(gzip_shuffle)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 5, 16, 20 }, { 1, 8, 20 },
		       4, true };

	one("gzs.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 8,
	    K_SHUFFLE_DEFLATE);
}
END_TEST

START_TEST(gzip_alone)
{
	const fx f = { "/scan", H5T_IEEE_F32LE, 3, { 3, 9, 7 }, { 1, 9, 7 },
		       6 };

	one("gz.h5", &f, PARLOAD_PIXEL_F32, PARLOAD_ENC_LE, 9,
	    K_DEFLATE);
}
END_TEST

START_TEST(two_d)
{
	const fx f = { "/image", H5T_STD_U16LE, 2, { 11, 13 } };

	one("2d.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 11,
	    K_NONE);
}
END_TEST

/* Filters, chunk shapes and unwritten chunks parload leaves to libhdf5. */
static void through_libhdf5(const char *file, const fx *f, uint32_t rows,
			    const char *why)
{
	char *path = tu_path(file);
	size_t elem;
	void *pix = fx_file(path, f, &elem);
	parload__container c;

	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	same_index(path, f->name, fx_chunks(f));
	ck_assert_int_eq(kind(&c.strips), K_CUSTOM);
	ck_assert_uint_eq(c.strips.rows, rows);
	ck_assert_ptr_nonnull(c.strips.serial);
	ck_assert_msg(strstr(c.strips.serial, why), "%s", c.strips.serial);
	if (!f->unwritten) {
		assert_pixels(&c, pix, elem, NULL);
	} else {
		/* Frame 0 as written, the others the fill value (0). */
		const size_t view = f->dims[1] * f->dims[2] * elem;
		unsigned char *zero = calloc(f->dims[0], view);

		memcpy(zero, pix, view);
		assert_pixels(&c, zero, elem, NULL);
		free(zero);
	}
	parload__container_free(&c);
	free(pix);
	free(path);
}

START_TEST(other_filter)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 8, 6 }, { 1, 4, 6 }, 0,
		       false, H5Z_FILTER_NBIT };

	through_libhdf5("nbit.h5", &f, 4, "HDF5 filter 5 (");
}
END_TEST

/* Fletcher32 is checked and taken off by the worker (src/codec/). */
START_TEST(fletcher32_filter)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 8, 6 }, { 1, 4, 6 }, 0,
		       false, H5Z_FILTER_FLETCHER32 };

	one("f32.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4,
	    K_FLETCHER32);
}
END_TEST

/* Chunks of any shape are read by the pool, each decoded once: several
 * frames a chunk, tiles across the row, partial edge chunks in every
 * dimension, stored as they are or deflated (with shuffle), 1 and 3
 * threads; the table has an entry for each tile of each strip of each
 * view, and no decoder. */
START_TEST(any_chunks)
{
	const fx cases[] = {
		{ "/scan", H5T_STD_U16LE, 3, { 4, 8, 6 }, { 2, 4, 3 } },
		{ "/scan", H5T_STD_U16LE, 3, { 5, 8, 6 }, { 2, 8, 6 } },
		{ "/scan", H5T_STD_I32LE, 3, { 5, 7, 9 }, { 3, 3, 4 }, 4 },
		{ "/scan", H5T_IEEE_F32LE, 3, { 3, 9, 5 }, { 2, 2, 2 }, 1, true },
		{ "/scan", H5T_STD_U16BE, 3, { 3, 5, 7 }, { 1, 5, 4 }, 6 },
	};
	/* What decoded them (stats.codec): nothing where read in place. */
	static const char *const codec[] = { "none", "", "deflate",
					     "shuffle+deflate", "deflate" };
	char *path = tu_path("anyc.h5");

	for (size_t i = 0; i < TU_COUNT(cases); i++) {
		const fx *f = &cases[i];
		size_t elem;
		void *pix = fx_file(path, f, &elem);
		const uint32_t tiles = (uint32_t)((f->dims[2] + f->chunk[2] - 1) /
						  f->chunk[2]);
		parload__container c;

		read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
		ck_assert_ptr_null(c.strips.decoder);
		ck_assert_ptr_null(c.strips.serial);
		ck_assert_uint_eq(c.strips.rows, f->chunk[1]);
		ck_assert_uint_eq(parload__strips_tiles(&c.strips), tiles);
		ck_assert_uint_eq(c.strips.added,
				  f->dims[0] * c.strips.per_view * tiles);
		parload__container_free(&c);
		for (unsigned threads = 1; threads <= 3; threads += 2) {
			parload_options o;
			parload_dataset ds;
			parload_error err;

			parload_options_init(&o);
			o.error = &err;
			o.threads = threads;
			ck_assert_msg(parload_load(path, &o, &ds) == 0, "%s",
				      err.message);
			ck_assert_uint_eq(ds.stats.fallback_files, 1);
			ck_assert_ptr_null(ds.stats.serial);
			ck_assert_str_eq(ds.stats.codec, codec[i]);
			/* One worker decodes each chunk once; nothing is
			 * decoded where the chunks are read in place. */
			if (threads == 1)
				ck_assert_uint_eq(ds.stats.strips_decoded,
						  codec[i][0] ? fx_chunks(f) : 0);
			ck_assert_msg(memcmp(ds.pixels, pix,
					     fx_count(f) * elem) == 0,
				      "case %zu, %u threads", i, threads);
			parload_dataset_free(&ds);
		}
		free(pix);
	}
	free(path);
}
END_TEST

START_TEST(unwritten_chunks)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 8, 6 }, { 1, 8, 6 }, 0,
		       false, 0, true };

	through_libhdf5("uw.h5", &f, 8, "not all written");
}
END_TEST

/* Levels of the file's chunk B-tree: its highest node's level, + 1. */
static int btree_levels(const char *path)
{
	size_t len;
	unsigned char *b = tu_read_all(path, &len);
	int top = -1;

	for (size_t i = 0; i + 6 < len; i++)
		if (memcmp(b + i, "TREE", 4) == 0 && b[i + 4] == 1 &&
		    b[i + 5] > top)
			top = b[i + 5];
	free(b);
	return top + 1;
}

/* B-trees of 1, 2 and 3 levels (nodes of 4 chunks), read directly. */
START_TEST(index_levels)
{
	static const fopts k2 = { .istore_k = 2 };
	static const uint64_t frames[] = { 3, 12, 40 };

	for (int k = 0; k < TU_COUNT(frames); k++) {
		const fx f = { "/scan", H5T_STD_U16LE, 3, { frames[k], 4, 6 },
			       { 1, 4, 6 }, .file = &k2 };
		char *path = tu_path("levels.h5");

		one("levels.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4,
		    K_NONE);
		ck_assert_int_eq(btree_levels(path), k + 1);
		free(path);
	}
}
END_TEST

/* 20,000 chunks (a B-tree of several levels at libhdf5's K of 32). */
START_TEST(index_many)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 20000, 8, 64 },
		       { 1, 8, 64 } };
	char *path = tu_path("many.h5");

	one("many.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 8,
	    K_NONE);
	ck_assert_int_ge(btree_levels(path), 3);
	free(path);
}
END_TEST

/* libver 1.8: a version 2 object header ("OHDR") and superblock over a
 * version 3 layout; a user block moves every address by its size. */
START_TEST(index_headers)
{
	static const fopts v18 = { .low = H5F_LIBVER_V18,
				   .high = H5F_LIBVER_V18 };
	static const fopts ub = { .userblock = 1024 };
	const fx a = { "/scan", H5T_STD_U16LE, 3, { 7, 9, 5 }, { 1, 3, 5 },
		       .file = &v18 };
	const fx b = { "/g/scan", H5T_STD_I32BE, 3, { 5, 6, 4 }, { 1, 6, 4 },
		       4, true, .file = &ub };

	one("v18.h5", &a, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 3,
	    K_NONE);
	one("ub.h5", &b, PARLOAD_PIXEL_I32, PARLOAD_ENC_BE, 6,
	    K_SHUFFLE_DEFLATE);
}
END_TEST

/* libver latest: a version 4 layout (a fixed array index), which the
 * parser reads as libhdf5's calls do (check_h5index4 has every index);
 * the loads are the same. */
START_TEST(index_latest)
{
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 6, 8, 5 }, { 1, 4, 5 },
		       .file = &latest };

	one("latest.h5", &f, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 4,
	    K_NONE);
}
END_TEST

/* The offset of the version 1 object header message of type want in
 * b (a header at h with its messages after a 16-byte prefix). */
static uint64_t v1_message(const unsigned char *b, uint64_t h, unsigned want)
{
	uint32_t len;
	uint64_t at = h + 16;

	ck_assert_int_eq(b[h], 1);
	memcpy(&len, b + h + 8, 4);
	while (at < h + 16 + len) {
		uint16_t type, size;

		memcpy(&type, b + at, 2);
		memcpy(&size, b + at + 2, 2);
		if (type == want)
			return at;
		at += 8 + size;
	}
	ck_abort_msg("no message of type %u", want);
	return 0;
}

/* The address of object name's header in path (a file without a user
 * block), as libhdf5 says it. */
static uint64_t header_at(const char *path, const char *name)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
#if H5_VERSION_GE(1, 12, 0)
	H5O_info1_t info;

	ck_assert_int_ge(f, 0);
	ck_assert_int_ge(H5Oget_info_by_name1(f, name, &info, H5P_DEFAULT), 0);
#else
	H5O_info_t info;

	ck_assert_int_ge(f, 0);
	ck_assert_int_ge(H5Oget_info_by_name2(f, name, &info, H5O_INFO_BASIC,
					      H5P_DEFAULT), 0);
#endif
	H5Fclose(f);
	return (uint64_t)info.addr;
}

/* The layout message moved to a continuation block at the file's end:
 * in its place a continuation message and a null message; the header
 * counts 2 messages more and the superblock's end of file moves. */
START_TEST(index_continuation)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 5, 6, 4 }, { 1, 3, 4 } };
	char *path = tu_path("cont.h5");
	size_t elem, len;
	void *pix = fx_file(path, &f, &elem);
	unsigned char *b = tu_read_all(path, &len);
	const uint64_t header = header_at(path, f.name);
	uint64_t at, eof = len, block[2] = { len, 0 };
	/* A continuation message (8 + 16 bytes), a null message's header. */
	unsigned char cont[32] = { 0x10, 0, 16, 0 };
	uint16_t size, n;

	at = v1_message(b, header, 8);
	memcpy(&size, b + at + 2, 2);
	ck_assert_uint_ge(size, 24);
	block[1] = 8 + size;
	tu_patch(path, len, b + at, 8 + size);
	memcpy(cont + 8, block, 16);
	size -= 24;
	memcpy(cont + 26, &size, 2); /* the null message: what is left */
	tu_patch(path, at, cont, sizeof(cont));
	memcpy(&n, b + header + 2, 2);
	n += 2;
	tu_patch(path, header + 2, &n, 2);
	eof += block[1];
	tu_patch(path, 40, &eof, 8); /* superblock 0: its end of file */
	one_at(path, &f, pix, elem, PARLOAD_PIXEL_U16, PARLOAD_ENC_LE, 3,
	       K_NONE);
	free(b);
	free(pix);
	free(path);
}
END_TEST

/* A file at path of 3 views of 4 x 6 u16 (/scan), a chunk each; its
 * bytes (*len of them) and the offset of its first chunk B-tree node
 * ("TREE", type 1). */
static unsigned char *tree_file(const char *path, size_t *len,
				uint64_t *tree)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 4, 6 }, { 1, 4, 6 } };
	size_t elem;
	unsigned char *b;

	free(fx_file(path, &f, &elem));
	b = tu_read_all(path, len);
	for (size_t i = 0; i + 28 < *len; i++)
		if (memcmp(b + i, "TREE", 4) == 0 && b[i + 4] == 1) {
			*tree = i;
			return b;
		}
	ck_abort_msg("no chunk B-tree node");
	return b;
}

/* A B-tree node whose signature is broken: the parser falls back, and
 * libhdf5 cannot read the index either (by default, and with
 * PARLOAD_HDF5=libhdf5). */
START_TEST(index_broken)
{
	char *path = tu_path("broken.h5");
	size_t len;
	uint64_t tree;

	free(tree_file(path, &len, &tree));
	tu_patch(path, tree + 2, "X", 1);
	read_fails(path, NULL, PARLOAD_ECONTAINER, "chunk");
	lib_fails(path, PARLOAD_ECONTAINER, "chunk");
	free(path);
}
END_TEST

/* A chunk B-tree leaf whose last key (the right bound of its last chunk)
 * is zeroed: libhdf5's binary search over the keys no longer finds the
 * last chunk, whose place H5Dread fills; the parser, which met every
 * chunk in turn, falls back, and the reader, asking libhdf5's reads of
 * each chunk listed, finds the index corrupt (found by fuzz_differ:
 * parload read the chunk's bytes). */
START_TEST(index_keys_out_of_order)
{
	char *path = tu_path("order.h5");
	const unsigned char zero[32] = { 0 };
	size_t len;
	uint64_t tree;
	unsigned char *b = tree_file(path, &len, &tree);

	/* 3 entries: keys of 40 bytes (size, mask, 4 coordinates) and
	 * children of 8, after 24 bytes of header. */
	ck_assert_uint_eq(b[tree + 6], 3);
	tu_patch(path, tree + 24 + 3 * 48 + 8, zero, sizeof(zero));
	read_fails(path, NULL, PARLOAD_ECONTAINER, "corrupt chunk index");
	lib_fails(path, PARLOAD_ECONTAINER, "corrupt chunk index");
	free(b);
	free(path);
}
END_TEST

/* A chunked dataset never written: no B-tree, no chunks, fill values. */
START_TEST(index_empty)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 2, 4, 6 }, { 1, 4, 6 } };
	char *path = tu_path("empty.h5");
	hid_t file = create(path);
	hid_t s = H5Screate_simple(3, f.dims, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t d;
	parload__container c;

	H5Pset_chunk(dcpl, 3, f.chunk);
	d = H5Dcreate2(file, f.name, f.type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(s);
	H5Fclose(file);
	same_index(path, f.name, 0);
	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_int_eq(kind(&c.strips), K_CUSTOM);
	parload__container_free(&c);
	free(path);
}
END_TEST

/* ---- DXchange and NXtomo ---- */

/* dataset (NULL: the default) of path with frames fr is count views,
 * frames[k] (NULL: k) of pix, with angles or without. */
static void frames_are(const char *path, const char *dataset,
		       parload_frames fr, uint64_t count, const void *pix,
		       size_t elem, const uint64_t *frames, bool angles)
{
	parload__container c;

	read_ok(path, dataset, fr, &c);
	ck_assert_uint_eq(c.desc.count, count);
	ck_assert_int_eq(c.strips.angles != NULL, angles);
	assert_pixels(&c, pix, elem, frames);
	parload__container_free(&c);
}

START_TEST(dxchange)
{
	char *path = tu_path("dx.h5");
	const fx data = { "/exchange/data", H5T_STD_U16LE, 3, { 4, 5, 6 } };
	const fx white = { "/exchange/data_white", H5T_STD_U16LE, 3,
			   { 2, 5, 6 } };
	const fx dark = { "/exchange/data_dark", H5T_STD_U16LE, 3,
			  { 3, 5, 6 }, { 1, 5, 6 } };
	const fx other = { "/other", H5T_STD_U16LE, 3, { 2, 2, 2 } };
	const double theta[4] = { 0, 45.5, 90, 135.25 };
	size_t elem;
	void *pd = fx_pixels(&data, &elem), *pw = fx_pixels(&white, &elem);
	void *pk = fx_pixels(&dark, &elem), *po = fx_pixels(&other, &elem);
	hid_t file = create(path);
	parload__container c;

	fx_write_in(file, &data, pd);
	fx_write_in(file, &white, pw);
	fx_write_in(file, &dark, pk);
	fx_write_in(file, &other, po);
	write_1d(file, "/exchange/theta", H5T_NATIVE_DOUBLE, theta, 4);
	H5Fclose(file);

	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_uint_eq(c.desc.count, 4);
	ck_assert_ptr_nonnull(c.strips.angles);
	for (int k = 0; k < 4; k++)
		ck_assert_float_eq(c.strips.angles[k], (float)theta[k]);
	assert_pixels(&c, pd, elem, NULL);
	parload__container_free(&c);
	frames_are(path, NULL, PARLOAD_FRAMES_FLATS, 2, pw, elem, NULL, false);
	frames_are(path, NULL, PARLOAD_FRAMES_DARKS, 3, pk, elem, NULL, false);
	/* By name, and as "FILE.h5:/name". */
	frames_are(path, "/other", PARLOAD_FRAMES_PROJECTIONS, 2, po, elem,
		   NULL, false);
	{
		char with[4200];

		snprintf(with, sizeof(with), "%s:/exchange/data_white", path);
		read_ok(with, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
		ck_assert_str_eq(c.paths[0], path);
		assert_pixels(&c, pw, elem, NULL);
		parload__container_free(&c);
	}
	free(pd), free(pw), free(pk), free(po);
	free(path);
}
END_TEST

START_TEST(nxtomo)
{
	char *path = tu_path("nx.nxs");
	const fx data = { "/entry/instrument/detector/data", H5T_STD_U16LE, 3,
			  { 7, 4, 5 }, { 1, 4, 5 }, 3, true };
	const int8_t key[7] = { 2, 2, 1, 0, 0, 0, 1 };
	const float angle[7] = { 0, 0, 0, 10, 20, 30, 0 };
	static const uint64_t proj[] = { 3, 4, 5 }, flat[] = { 2, 6 },
			      dark[] = { 0, 1 };
	size_t elem;
	void *pix = fx_pixels(&data, &elem);
	hid_t file = create(path);
	parload__container c;

	fx_write_in(file, &data, pix);
	write_1d(file, "/entry/instrument/detector/image_key", H5T_NATIVE_INT8,
		 key, 7);
	write_1d(file, "/entry/sample/rotation_angle", H5T_NATIVE_FLOAT, angle,
		 7);
	set_class(file, "/entry", "NXentry");
	set_class(file, "/entry/instrument/detector", "NXdetector");
	H5Fclose(file);

	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_uint_eq(c.desc.count, 3);
	ck_assert_int_eq(kind(&c.strips), K_SHUFFLE_DEFLATE);
	ck_assert_ptr_nonnull(c.strips.angles);
	for (int k = 0; k < 3; k++) {
		ck_assert_float_eq(c.strips.angles[k], angle[proj[k]]);
		ck_assert_uint_eq(parload__strip_of(&c.strips, k, NULL).page,
				  proj[k]);
	}
	assert_pixels(&c, pix, elem, proj);
	parload__container_free(&c);
	frames_are(path, NULL, PARLOAD_FRAMES_FLATS, 2, pix, elem, flat, true);
	frames_are(path, NULL, PARLOAD_FRAMES_DARKS, 2, pix, elem, dark, true);
	free(pix);
	free(path);
}
END_TEST

/* ---- hdf5_native.c: the same container without libhdf5 ---- */

static parload_source source(const char *path, const char *dataset,
			     parload_frames fr)
{
	return (parload_source){ .path = path, .fd = -1, .dataset = dataset,
				 .frames = fr };
}

/* The native reader's container of dataset in path
 * (PARLOAD_HDF5=native) is libhdf5's reader's (PARLOAD_HDF5=libhdf5),
 * field by field, every strip and angle. */
static void same_native(const char *path, const char *dataset,
			parload_frames fr)
{
	parload__container a, b;
	parload_error err;

	ck_assert_msg(h5read_by("native", path, dataset, fr, &a, &err) == 0,
		      "%s %s frames %d: the native reader fell back: %s",
		      path, dataset ? dataset : "(unnamed)", (int)fr,
		      err.message);
	ck_assert_uint_eq(a.fallback_files, 0);
	ck_assert_msg(h5read_by("libhdf5", path, dataset, fr, &b, &err) == 0,
		      "%s", err.message);
	ck_assert_uint_eq(b.fallback_files, 1);
	none_open();
	ck_assert_mem_eq(&a.desc, &b.desc, sizeof(a.desc));
	ck_assert_uint_eq(a.n, b.n);
	ck_assert_str_eq(a.paths[0], b.paths[0]);
	ck_assert_ptr_eq(a.strips.path, a.paths[0]);
	ck_assert_uint_eq(a.strips.rows, b.strips.rows);
	ck_assert_uint_eq(a.strips.per_view, b.strips.per_view);
	ck_assert_uint_eq(a.strips.views, b.strips.views);
	ck_assert_int_eq(kind(&a.strips), kind(&b.strips));
	ck_assert_mem_eq(a.strips.filter, b.strips.filter, sizeof(a.strips.filter));
	ck_assert_uint_eq(a.strips.depth, b.strips.depth);
	ck_assert_uint_eq(a.strips.tiles, b.strips.tiles);
	ck_assert_ptr_null(a.strips.decoder);
	ck_assert_ptr_null(a.strips.serial);
	ck_assert_ptr_eq(b.strips.decoder, NULL);
	for (uint64_t i = 0; i < a.strips.views * a.strips.per_view; i++) {
		const parload__strip x = parload__strip_of(&a.strips, i, NULL);
		const parload__strip y = parload__strip_of(&b.strips, i, NULL);

		ck_assert(x.off == y.off && x.bytes == y.bytes &&
			  x.file == y.file && x.page == y.page &&
			  x.mask == y.mask);
	}
	ck_assert_uint_eq(a.strips.added, a.strips.views * a.strips.per_view);
	ck_assert_uint_eq(b.strips.added, b.strips.views * b.strips.per_view);
	ck_assert_int_eq(a.strips.angles != NULL, b.strips.angles != NULL);
	for (uint64_t v = 0; a.strips.angles && v < a.strips.views; v++)
		ck_assert_float_eq(a.strips.angles[v], b.strips.angles[v]);
	parload__container_free(&a);
	parload__container_free(&b);
}

/* The native reader leaves dataset of path to libhdf5: alone
 * (PARLOAD_HDF5=native) it refuses it, saying so, nothing held. */
static void native_falls_back(const char *path, const char *dataset,
			      parload_frames fr)
{
	parload__container c;
	parload_error err;

	ck_assert_msg(h5read_by("native", path, dataset, fr, &c, &err) ==
			      PARLOAD_ENOTSUP,
		      "%s %s: read natively", path, dataset ? dataset : "");
	ck_assert_msg(strstr(err.message, "PARLOAD_HDF5=native") &&
			      strstr(err.message, path),
		      "%s", err.message);
	ck_assert_ptr_null(c.paths);
	ck_assert_ptr_null(c.strips.run);
	ck_assert_ptr_null(c.strips.angles);
}

/* A DXchange file of type t (its flats, darks, a 2-D /a/b/c beside, and
 * theta of type theta, or none where it is 0), made as o says; chunked:
 * in chunks of rows, of a view (/exchange/data: 2 rows, the last chunk
 * of a view cut short; /a/b/c: 3 rows), else contiguous. */
static void dx_file(const char *path, const fopts *o, hid_t t, hid_t theta,
		    bool chunked)
{
	const fx parts[] = {
		{ "/exchange/data", t, 3, { 4, 5, 6 }, { 1, 2, 6 } },
		{ "/exchange/data_white", t, 3, { 2, 5, 6 }, { 1, 5, 6 } },
		{ "/exchange/data_dark", t, 3, { 1, 5, 6 }, { 1, 5, 6 } },
		{ "/a/b/c", t, 2, { 7, 3 }, { 1, 3, 3 } },
	};
	const double deg[4] = { 0, 30.25, 60.5, 179.75 };
	hid_t file = create_with(path, o);

	for (int k = 0; k < TU_COUNT(parts); k++) {
		size_t elem;
		fx part = parts[k];
		void *pix = fx_pixels(&part, &elem);

		if (!chunked)
			memset(part.chunk, 0, sizeof(part.chunk));
		fx_write_in(file, &part, pix);
		free(pix);
	}
	if (theta >= 0) {
		hsize_t n = 4;
		hid_t s = H5Screate_simple(1, &n, NULL);
		hid_t d = H5Dcreate2(file, "/exchange/theta", theta, s,
				     H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

		ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL,
					  H5S_ALL, H5P_DEFAULT, deg), 0);
		H5Dclose(d);
		H5Sclose(s);
	}
	H5Fclose(file);
}

/* dx_file's datasets at path (with: path:/a/b/c) read natively as
 * libhdf5's reader reads them. */
static void native_file(const char *path, const char *with, const fopts *o,
			hid_t t, hid_t theta, bool chunked)
{
	dx_file(path, o, t, theta, chunked);
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	same_native(path, NULL, PARLOAD_FRAMES_FLATS);
	same_native(path, NULL, PARLOAD_FRAMES_DARKS);
	same_native(path, "exchange/data", PARLOAD_FRAMES_DARKS);
	same_native(path, "/a/b/c", PARLOAD_FRAMES_PROJECTIONS);
	same_native(with, NULL, PARLOAD_FRAMES_PROJECTIONS);
}

/* Every pixel type in both byte orders, theta absent, f32 or f64 of
 * either order, in files of libhdf5's defaults, libver latest, a user
 * block and a chunk B-tree K of its own: projections, flats, darks, the
 * named ones; contiguous and chunked (libver latest: a fixed array
 * index). */
START_TEST(native_matrix)
{
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	static const fopts ub = { .userblock = 512 };
	static const fopts k2 = { .istore_k = 2 };
	const fopts *files[] = { NULL, &latest, &ub, &k2 };
	hid_t *types[] = { &H5T_STD_U8LE_g,   &H5T_STD_U16LE_g,
			   &H5T_STD_U16BE_g,  &H5T_STD_I16LE_g,
			   &H5T_STD_I16BE_g,  &H5T_STD_U32LE_g,
			   &H5T_STD_U32BE_g,  &H5T_STD_I32LE_g,
			   &H5T_STD_I32BE_g,  &H5T_IEEE_F32LE_g,
			   &H5T_IEEE_F32BE_g, &H5T_IEEE_F64LE_g,
			   &H5T_IEEE_F64BE_g };
	hid_t *thetas[] = { NULL, &H5T_IEEE_F32LE_g, &H5T_IEEE_F32BE_g,
			    &H5T_IEEE_F64LE_g, &H5T_IEEE_F64BE_g };
	char *path = tu_path("native.h5");
	char with[4200];

	H5open();
	snprintf(with, sizeof(with), "%s:/a/b/c", path);
	for (int c = 0; c < 2; c++)
		for (int f = 0; f < TU_COUNT(files); f++)
			for (int k = 0; k < TU_COUNT(types); k++) {
				hid_t *th = thetas[(k + f) % TU_COUNT(thetas)];

				native_file(path, with, files[f], *types[k],
					    th ? *th : -1, c);
			}
	free(path);
}
END_TEST

/* The native container's pixels are the array written. */
START_TEST(native_pixels)
{
	const fx f = { "/exchange/data", H5T_STD_I16BE, 3, { 5, 7, 9 } };
	const parload_source src = source(NULL, NULL,
					  PARLOAD_FRAMES_PROJECTIONS);
	parload_source at = src;
	char *path = tu_path("npix.h5");
	size_t elem;
	void *pix = fx_file(path, &f, &elem);
	parload__container c;
	parload_error err;

	at.path = path;
	ck_assert_int_eq(h5read_by("native", at.path, at.dataset, at.frames,
				   &c, &err), 0);
	ck_assert_int_eq(c.desc.pixel_type, PARLOAD_PIXEL_I16);
	ck_assert_int_eq(c.desc.encoding, PARLOAD_ENC_BE);
	ck_assert_ptr_null(c.strips.angles);
	assert_pixels(&c, pix, elem, NULL);
	parload__container_free(&c);
	free(pix);
	free(path);
}
END_TEST

/* A file at name of one dataset /exchange/data (4 x 5 x 6 u16) made with
 * dcpl (NULL: contiguous) and fcpl; its path. */
static char *one_dataset(const char *name, hid_t fcpl, hid_t dcpl)
{
	char *path = tu_path(name);
	hsize_t dims[3] = { 4, 5, 6 };
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC,
			    fcpl >= 0 ? fcpl : H5P_DEFAULT, H5P_DEFAULT);
	hid_t s = H5Screate_simple(3, dims, NULL);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t d;
	uint16_t pix[4 * 5 * 6] = { 1, 2, 3 };

	H5Pset_create_intermediate_group(lcpl, 1);
	d = H5Dcreate2(f, "/exchange/data", H5T_STD_U16LE, s, lcpl,
		       dcpl >= 0 ? dcpl : H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL,
				  H5P_DEFAULT, pix), 0);
	H5Dclose(d), H5Pclose(lcpl), H5Sclose(s), H5Fclose(f);
	return path;
}

/* Chunks of whole rows of a frame, stored plainly: native.  Chunks that
 * span frames or cut rows, compressed chunks, compact and external
 * storage, chunks never written: libhdf5's. */
START_TEST(native_layouts)
{
	const hsize_t rows[3] = { 1, 5, 6 }, two[3] = { 2, 5, 6 },
		      cut[3] = { 1, 5, 3 };
	hid_t dcpl[6];
	const char *names[6] = { "nch.h5", "ngz.h5", "ncp.h5",
				 "next.h5", "n2f.h5", "ncut.h5" };
	char *raw = tu_path("next.raw"), *path;

	for (int k = 0; k < 6; k++)
		dcpl[k] = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl[0], 3, rows);
	H5Pset_chunk(dcpl[1], 3, rows);
	H5Pset_deflate(dcpl[1], 4);
	H5Pset_layout(dcpl[2], H5D_COMPACT);
	ck_assert_int_ge(H5Pset_external(dcpl[3], raw, 0, 4 * 5 * 6 * 2), 0);
	H5Pset_chunk(dcpl[4], 3, two);
	H5Pset_chunk(dcpl[5], 3, cut);
	for (int k = 0; k < 6; k++) {
		path = one_dataset(names[k], -1, dcpl[k]);
		if (k == 0)
			same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
		else
			native_falls_back(path, NULL,
					  PARLOAD_FRAMES_PROJECTIONS);
		H5Pclose(dcpl[k]);
		free(path);
	}
	free(raw);
	{
		const fx f = { "/exchange/data", H5T_STD_U16LE, 3, { 3, 8, 6 },
			       { 1, 8, 6 }, 0, false, 0, true };
		size_t elem;

		static const fopts latest = { .low = H5F_LIBVER_LATEST,
					      .high = H5F_LIBVER_LATEST };

		path = tu_path("nuw.h5");
		free(fx_file(path, &f, &elem));
		native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
		free(path);
		/* libver latest: a layout of version 4, a fixed array index,
		 * read natively too. */
		path = tu_path("nv4.h5");
		dx_file(path, &latest, H5T_STD_U16LE, -1, true);
		same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
		free(path);
	}
}
END_TEST

/* A group of more than 8 links under libver latest is dense (a fractal
 * heap): libhdf5's; one of a few links that tracks and indexes their
 * creation order is compact (Link messages with their order): native. */
START_TEST(native_dense)
{
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	char *path = tu_path("dense.h5");
	hid_t f = create_with(path, &latest);
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	char *tracked;

	for (int k = 0; k < 10; k++) {
		const fx one = { NULL, H5T_STD_U16LE, 3, { 2, 3, 4 } };
		char name[32];
		fx named = one;
		size_t elem;
		void *pix = fx_pixels(&one, &elem);

		snprintf(name, sizeof(name), "/g/d%d", k);
		named.name = name;
		fx_write_in(f, &named, pix);
		free(pix);
	}
	H5Fclose(f);
	native_falls_back(path, "/g/d5", PARLOAD_FRAMES_PROJECTIONS);
	ck_assert_int_ge(H5Pset_link_creation_order(fcpl,
						    H5P_CRT_ORDER_TRACKED |
						    H5P_CRT_ORDER_INDEXED), 0);
	tracked = one_dataset("order.h5", fcpl, -1);
	same_native(tracked, NULL, PARLOAD_FRAMES_PROJECTIONS);
	H5Pclose(fcpl);
	free(tracked);
	free(path);
}
END_TEST

/* NXtomo's image_key or angles beside the dataset, a soft link, a missing
 * dataset, the only 3-D dataset unnamed, flats of a named one, a file
 * cut short: libhdf5's reader decides. */
START_TEST(native_leaves)
{
	char *path = one_dataset("leaves.h5", -1, -1);
	const fx m = { "/m/data", H5T_STD_U16LE, 3, { 4, 2, 3 } };
	const int8_t key[4] = { 0, 0, 1, 2 };
	const float angle[4] = { 0 };
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	size_t elem;
	void *pix = fx_pixels(&m, &elem);

	fx_write_in(f, &m, pix);
	write_1d(f, "/m/image_key", H5T_NATIVE_INT8, key, 4);
	write_1d(f, "/n/data", H5T_NATIVE_INT8, key, 4);
	write_1d(f, "/n/rotation_angle", H5T_NATIVE_FLOAT, angle, 4);
	ck_assert_int_ge(H5Lcreate_soft("/exchange/data", f, "/alias",
					H5P_DEFAULT, H5P_DEFAULT), 0);
	ck_assert_int_ge(H5Lmove(f, "/exchange/data", f, "/scan",
				 H5P_DEFAULT, H5P_DEFAULT), 0);
	H5Fclose(f);
	native_falls_back(path, "/m/data", PARLOAD_FRAMES_PROJECTIONS);
	native_falls_back(path, "/n/data", PARLOAD_FRAMES_PROJECTIONS);
	native_falls_back(path, "/scan", PARLOAD_FRAMES_FLATS);
	native_falls_back(path, "/alias", PARLOAD_FRAMES_PROJECTIONS);
	native_falls_back(path, "/nope", PARLOAD_FRAMES_PROJECTIONS);
	native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	same_native(path, "/scan", PARLOAD_FRAMES_PROJECTIONS);
	free(pix);
	free(path);
	path = one_dataset("short.h5", -1, -1);
	tu_truncate(path, tu_file_size(path) - 20);
	native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	read_fails(path, NULL, PARLOAD_ETRUNCATED, "truncated");
	native_falls_back("no-such.h5", NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(path);
}
END_TEST

#ifdef PARLOAD_MODULES
/* `parload FILE.h5` with no module to open: a contiguous dataset and an
 * uncompressed chunked one load (hdf5_native.c), a compressed one says
 * the module is missing. */
START_TEST(native_without_module)
{
	const hsize_t chunk[3] = { 1, 5, 6 };
	const char *bin = tu_parload_bin();
	char *path[3], *dir = tu_path("nomods");
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	char env[4200];
	const char *env_v[] = { env, NULL };
	tu_result r;

	if (!bin)
		ck_abort_msg("PARLOAD_BIN is not set");
	path[0] = one_dataset("plain.h5", -1, -1);
	H5Pset_chunk(dcpl, 3, chunk);
	path[1] = one_dataset("chunked.h5", -1, dcpl);
	H5Pset_deflate(dcpl, 4);
	path[2] = one_dataset("gzip.h5", -1, dcpl);
	H5Pclose(dcpl);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(env, sizeof(env), "PARLOAD_MODULE_DIR=%s", dir);
	for (int k = 0; k < 3; k++) {
		const char *argv[] = { bin, "--json", path[k], NULL };
		const tu_cmd c = { .argv = argv, .env = env_v, .timeout = 60 };
		const bool fails = k == 2;

		tu_run_cmd(&c, &r);
		ck_assert_msg(r.status == fails, "%s: status %d: %s", path[k],
			      r.status, r.err);
		ck_assert_msg(strstr(fails ? r.err : r.out,
				     fails ? "HDF5 support is not installed" :
					     "\"views\":4,"),
			      "%s%s", r.out, r.err);
		tu_result_free(&r);
		free(path[k]);
	}
	free(dir);
}
END_TEST
#endif

/* ---- bad inputs ---- */

START_TEST(which_dataset)
{
	char *path = tu_path("three.h5");
	const fx a = { "/a", H5T_STD_U16LE, 3, { 2, 2, 2 } };
	const fx b = { "/g/b", H5T_STD_U16LE, 3, { 2, 2, 2 } };
	const fx flat = { "/flat", H5T_STD_U16LE, 2, { 2, 2 } };
	size_t elem;
	void *pix = fx_pixels(&a, &elem);
	hid_t file = create(path);

	fx_write_in(file, &a, pix);
	fx_write_in(file, &b, pix);
	fx_write_in(file, &flat, pix);
	H5Fclose(file);
	read_fails(path, NULL, PARLOAD_EINVAL,
		   "has no dataset given and 2 3-D datasets: /a, /g/b");
	read_fails(path, "/nope/x", PARLOAD_EINVAL,
		   "no dataset /nope/x; its 3-D datasets: /a, /g/b");
	read_fails(path, "/g", PARLOAD_EINVAL, "no dataset /g;");
	free(pix);
	free(path);
}
END_TEST

START_TEST(unsupported)
{
	char *path = tu_path("bad.h5");
	hsize_t d4[4] = { 2, 2, 2, 2 }, d3[3] = { 2, 2, 2 };
	hid_t file = create(path);
	hid_t ct = H5Tcreate(H5T_COMPOUND, 4);
	hid_t s4 = H5Screate_simple(4, d4, NULL), s3 = H5Screate_simple(3, d3,
									  NULL);
	hid_t cont = H5Pcreate(H5P_DATASET_CREATE);

	H5Tinsert(ct, "a", 0, H5T_NATIVE_UINT16);
	H5Tinsert(ct, "b", 2, H5T_NATIVE_UINT16);
	H5Dclose(H5Dcreate2(file, "/compound", ct, s3, H5P_DEFAULT,
			    H5P_DEFAULT, H5P_DEFAULT));
	H5Dclose(H5Dcreate2(file, "/4d", H5T_STD_U16LE, s4, H5P_DEFAULT,
			    H5P_DEFAULT, H5P_DEFAULT));
	H5Dclose(H5Dcreate2(file, "/u64", H5T_STD_U64LE, s3, H5P_DEFAULT,
			    H5P_DEFAULT, H5P_DEFAULT));
	H5Dclose(H5Dcreate2(file, "/empty", H5T_STD_U16LE, s3, H5P_DEFAULT,
			    cont, H5P_DEFAULT));
	H5Tclose(ct), H5Sclose(s4), H5Sclose(s3), H5Pclose(cont);
	H5Fclose(file);
	read_fails(path, "/compound", PARLOAD_ENOTSUP, "a compound type");
	read_fails(path, "/4d", PARLOAD_ENOTSUP, "a 4-D dataset");
	read_fails(path, "/u64", PARLOAD_ENOTSUP,
		   "an unsigned integer of 8 bytes");
	read_fails(path, "/empty", PARLOAD_ENOTSUP, "no storage allocated");
	free(path);
}
END_TEST

START_TEST(truncated)
{
	char *path = tu_path("cut.h5");
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 4, 8, 8 } };
	size_t elem;
	void *pix = fx_file(path, &f, &elem);

	tu_truncate(path, tu_file_size(path) - 100);
	read_fails(path, NULL, PARLOAD_ETRUNCATED, "truncated");
	tu_truncate(path, 20);
	read_fails(path, NULL, PARLOAD_ECONTAINER, "not an HDF5 file");
	read_fails("no-such.h5", NULL, PARLOAD_EOPEN, "no-such.h5");
	free(pix);
	free(path);
}
END_TEST

/* What libhdf5 allocates while x runs is not a leak to LeakSanitizer
 * (ASan builds): its reports of libhdf5's blocks stop at libhdf5's first
 * frame, too little to suppress one leak narrowly, as valgrind.supp
 * does. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifdef ASAN_BUILD
#include <sanitizer/lsan_interface.h>
#define LIBHDF5_LEAKS(x)                                                       \
	do {                                                                   \
		__lsan_disable();                                              \
		x;                                                             \
		__lsan_enable();                                               \
	} while (0)
#else
#define LIBHDF5_LEAKS(x) x
#endif

/* A damaged file: a version 2 object header (libver latest) whose
 * checksum does not match, the root group's or the dataset's.  libhdf5
 * opens the file and cannot read the header; the reader fails, holding
 * nothing (libhdf5 1.10 leaks the header it was loading: 424 bytes,
 * suppressed in tests/valgrind.supp, so that this runs clean under
 * make check-valgrind, and not counted by LeakSanitizer). */
START_TEST(damaged_header)
{
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 4, 6 }, .file = &latest };
	char *path = tu_path("damaged.h5");

	for (int k = 0; k < 2; k++) {
		size_t elem, len, at = 0;
		unsigned char *b;
		int n = 0;

		free(fx_file(path, &f, &elem));
		b = tu_read_all(path, &len);
		/* The k-th "OHDR": the root group's, then /scan's; a byte
		 * of it its checksum covers. */
		for (; at + 8 < len; at++)
			if (memcmp(b + at, "OHDR", 4) == 0 && n++ == k)
				break;
		ck_assert_uint_lt(at + 8, len);
		b[at + 8] ^= 0x55;
		tu_patch(path, at + 8, b + at + 8, 1);
		LIBHDF5_LEAKS(read_fails(path, NULL, PARLOAD_EINVAL,
					 "has no dataset given and 0 3-D "
					 "datasets"));
		LIBHDF5_LEAKS(read_fails(path, "/scan", PARLOAD_EINVAL,
					 "no dataset /scan"));
		free(b);
	}
	free(path);
}
END_TEST

/* A damaged file both readers refuse: the native one falls back, the
 * libhdf5 one fails. */
static void both_refuse(const char *path, const char *what)
{
	parload__container c;
	parload_error err;
	int rc;

	native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	rc = h5read(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c, &err);
	ck_assert_msg(rc < 0, "%s: libhdf5's reader reads it (%d)", what, rc);
	none_open();
	ck_assert_ptr_null(c.paths);
}

/* Both readers refuse path with n bytes at its byte at patched to
 * bytes; then path holds b's again there (b: its whole first form). */
static void refused_patched(const char *path, const unsigned char *b,
			    size_t at, const void *bytes, size_t n,
			    const char *what)
{
	tu_patch(path, at, bytes, n);
	LIBHDF5_LEAKS(both_refuse(path, what));
	tu_patch(path, at, b + at, n);
}

/* Offset of the k-th (from 0) occurrence of the 4 bytes sig in b. */
static size_t nth(const unsigned char *b, size_t len, const char *sig,
		  int k)
{
	for (size_t at = 0; at + 4 <= len; at++)
		if (memcmp(b + at, sig, 4) == 0 && k-- == 0)
			return at;
	ck_abort_msg("no %s number %d", sig, k);
	return 0;
}

/* Damage libhdf5 refuses and the native reader used to read (found by
 * fuzz_differ): an end of file past the file's (libhdf5: "truncated
 * file"), a symbol table entry's cache type it does not know (the
 * superblock's root entry, a node's entry), a local heap's free list
 * that leaves its segment or whose next block is at 0.  The file is one
 * of libhdf5's default format (superblock version 0, old-style groups:
 * the root and /exchange, a node and a heap each). */
static char *damaged_native(unsigned char **b, size_t *len)
{
	char *path = one_dataset("damaged-native.h5", -1, -1);

	*b = tu_read_all(path, len);
	ck_assert_uint_eq((*b)[8], 0);
	return path;
}

START_TEST(native_eof)
{
	size_t len;
	unsigned char *b;
	char *path = damaged_native(&b, &len);
	const uint64_t eof = len + 1;

	tu_patch(path, 40, &eof, 8);
	LIBHDF5_LEAKS(both_refuse(path, "end of file past the file's"));
	/* A shorter one: libhdf5 reads no byte past it (the last pixels it
	 * reads as zeros): the native reader leaves the file to it. */
	tu_patch(path, 40, &(uint64_t){ len - 1 }, 8);
	native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	tu_patch(path, 40, &(uint64_t){ len }, 8);
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* An end of file (the superblock's) inside the dataset's data: libhdf5
 * reads none of the file past it (H5Dread gives fill values for a
 * contiguous dataset's bytes there, fails on a chunk there); both
 * readers refuse the dataset, contiguous or chunked, with a user block
 * or none. */
START_TEST(eof_inside_data)
{
	const hsize_t chunk[3] = { 1, 5, 6 };

	for (int k = 0; k < 4; k++) {
		const bool chunked = k & 1;
		const hsize_t ub = k & 2 ? 512 : 0;
		hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
		hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
		char *path;
		uint64_t eof;

		ck_assert_int_ge(H5Pset_userblock(fcpl, ub), 0);
		if (chunked)
			ck_assert_int_ge(H5Pset_chunk(dcpl, 3, chunk), 0);
		path = one_dataset("eof-inside.h5", fcpl, dcpl);
		H5Pclose(fcpl);
		H5Pclose(dcpl);
		/* The last frame's data (the last chunk's, libhdf5's
		 * default format writes it last) ends the file. */
		eof = tu_file_size(path) - 10;
		tu_patch(path, ub + 40, &eof, 8);
		native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
		read_fails(path, NULL, PARLOAD_ECONTAINER,
			   "past the end of the file its superblock states");
		free(path);
	}
}
END_TEST

START_TEST(native_cache_type)
{
	size_t len;
	unsigned char *b;
	char *path = damaged_native(&b, &len);
	const uint32_t three = 3;

	/* The root entry's cache type, then each node's first entry's. */
	refused_patched(path, b, 72, &three, 4,
			"root entry's cache type 3");
	for (int k = 0; k < 2; k++) {
		const size_t at = nth(b, len, "SNOD", k) + 8 + 16;

		refused_patched(path, b, at, &three, 4,
				"a node's cache type 3");
	}
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* A group B-tree's right key named "" (the heap's offset 0): libhdf5's
 * search (H5B_find) then looks no further than the left key, and finds
 * no name; the native reader, which read every child, follows it: both
 * find nothing, the root's group and /exchange's alike. */
START_TEST(native_group_keys)
{
	size_t len;
	unsigned char *b;
	char *path = damaged_native(&b, &len);
	const uint64_t empty = 0;

	for (int k = 0; k < 2; k++) {
		const size_t at = nth(b, len, "TREE", k) + 8 + 2 * 8 + 8 + 8;

		ck_assert_uint_eq(b[nth(b, len, "TREE", k) + 4], 0);
		refused_patched(path, b, at, &empty, 8,
				"a right key of \"\"");
	}
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* Message flags libhdf5 refuses when it loads a header ("bad flag
 * combination", "unshareable class flagged as shareable", "unknown
 * message with 'fail if unknown'"): on /exchange/data's dataspace
 * message, then its layout message, then its null message made a type
 * libhdf5 does not know. */
START_TEST(native_message_flags)
{
	static const struct {
		unsigned type, flags, as;
	} bad[] = { { 1, 0x06, 1 },    { 1, 0x20, 1 },    { 1, 0x28, 1 },
		    { 8, 0x40, 8 },    { 0, 0x80, 0x19 } };
	const uint64_t dims[3] = { 4, 5, 6 };
	size_t len, sp = 0;
	unsigned char *b;
	char *path = damaged_native(&b, &len);

	/* The dataspace message's body: version 1, rank 3, 8 bytes, then
	 * the dimensions; the header's messages follow it. */
	while (sp + 24 <= len && memcmp(b + sp, dims, 24) != 0)
		sp++;
	ck_assert_uint_lt(sp + 24, len);
	sp -= 16;
	ck_assert_uint_eq(b[sp], 1);
	for (int k = 0; k < TU_COUNT(bad); k++) {
		size_t at = sp;
		uint16_t as = (uint16_t)bad[k].as;

		while (b[at] != bad[k].type || b[at + 1] != 0)
			at += 8 + (b[at + 2] | (size_t)b[at + 3] << 8);
		tu_patch(path, at, &as, 2);
		tu_patch(path, at + 4, &(uint8_t){ (uint8_t)bad[k].flags }, 1);
		LIBHDF5_LEAKS(both_refuse(path, "message flags"));
		tu_patch(path, at, b + at, 5);
	}
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* A version 1 header libhdf5 refuses: no messages in a chunk of some
 * ("bad object header chunk size"), a message of a size not a multiple
 * of 8 (its null message 4 bytes shorter: "message not aligned"). */
START_TEST(native_header_v1)
{
	const uint64_t dims[3] = { 4, 5, 6 };
	const uint16_t none = 0;
	size_t len, h = 0, at;
	unsigned char *b;
	char *path = damaged_native(&b, &len);
	uint16_t size;

	/* /exchange/data's header: its prefix, then the dataspace
	 * message, whose body's dimensions follow 8 bytes. */
	while (h + 24 <= len && memcmp(b + h, dims, 24) != 0)
		h++;
	ck_assert_uint_lt(h + 24, len);
	h -= 32;
	ck_assert_uint_eq(b[h], 1);
	refused_patched(path, b, h + 2, &none, 2,
			"no messages");
	for (at = h + 16; b[at] != 0 || b[at + 1] != 0;)
		at += 8 + (b[at + 2] | (size_t)b[at + 3] << 8);
	size = (uint16_t)((b[at + 2] | b[at + 3] << 8) - 4);
	refused_patched(path, b, at + 2, &size, 2,
			"a message not aligned");
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* A fill value message libhdf5 refuses when it opens the dataset: of
 * version 0 or 4, or whose value's size is past the message ("fill size
 * exceeds buffer size"); the old message (0x0004) too. */
START_TEST(native_fill_value)
{
	const uint64_t dims[3] = { 4, 5, 6 };
	const uint32_t big = 4;
	size_t len, at = 0;
	unsigned char *b;
	char *path = damaged_native(&b, &len);

	while (at + 24 <= len && memcmp(b + at, dims, 24) != 0)
		at++;
	ck_assert_uint_lt(at + 24, len);
	for (at -= 16; b[at] != 5 || b[at + 1] != 0;)
		at += 8 + (b[at + 2] | (size_t)b[at + 3] << 8);
	/* Version 2, 8 bytes: times, defined, the value's size (0). */
	ck_assert_uint_eq(b[at + 8], 2);
	ck_assert_uint_eq(b[at + 2], 8);
	refused_patched(path, b, at + 8, &(uint8_t){ 0 }, 1,
			"fill value version 0");
	refused_patched(path, b, at + 8, &(uint8_t){ 4 }, 1,
			"fill value version 4");
	refused_patched(path, b, at + 12, &big, 4,
			"fill value past its message");
	refused_patched(path, b, at, &(uint16_t){ 4 }, 2,
			"old fill value past its message");
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* A group of Link messages (its links' creation order tracked, in a
 * version 1 header), /g/aaaa's before /g/data's: a damaged one before
 * the name sought is one libhdf5 decodes and refuses (its version, a flag
 * it does not know, a name of no bytes: "bad version number", "bad flag
 * value", "invalid name length"), and so does not open /g/data; the
 * native reader falls back.  (libhdf5's reader is not run on them:
 * libhdf5 1.10.8's H5Ovisit, which it calls to name the datasets there
 * are, crashes on such a link.) */
START_TEST(native_links)
{
	char *path = tu_path("links.h5");
	const fx a = { "/g/aaaa", H5T_STD_U16LE, 2, { 2, 2 } };
	const fx d = { "/g/data", H5T_STD_U16LE, 3, { 4, 5, 6 } };
	const uint8_t bad[3][2] = { { 11, 2 }, { 10, 0x44 }, { 1, 0 } };
	hid_t f = create(path), gcpl = H5Pcreate(H5P_GROUP_CREATE), g;
	size_t elem, len, at = 0;
	void *pix;
	unsigned char *b;

	ck_assert_int_ge(H5Pset_link_creation_order(gcpl,
						    H5P_CRT_ORDER_TRACKED),
			 0);
	g = H5Gcreate2(f, "/g", H5P_DEFAULT, gcpl, H5P_DEFAULT);
	ck_assert_int_ge(g, 0);
	H5Gclose(g);
	H5Pclose(gcpl);
	pix = fx_pixels(&a, &elem);
	fx_write_in(f, &a, pix);
	free(pix);
	pix = fx_pixels(&d, &elem);
	fx_write_in(f, &d, pix);
	free(pix);
	H5Fclose(f);
	same_native(path, "/g/data", PARLOAD_FRAMES_PROJECTIONS);
	/* aaaa's message: version 1, flags 0x04 (its creation order),
	 * 8 bytes of it, the name's length (1 byte), the name. */
	b = tu_read_all(path, &len);
	while (at + 4 <= len && memcmp(b + at, "aaaa", 4) != 0)
		at++;
	ck_assert_uint_lt(at + 4, len);
	ck_assert_uint_eq(b[at - 11], 1);
	ck_assert_uint_eq(b[at - 10], 0x04);
	ck_assert_uint_eq(b[at - 1], 4);
	for (int k = 0; k < 3; k++) {
		tu_patch(path, at - bad[k][0], &bad[k][1], 1);
		native_falls_back(path, "/g/data",
				  PARLOAD_FRAMES_PROJECTIONS);
		tu_patch(path, at - bad[k][0], b + at - bad[k][0], 1);
	}
	same_native(path, "/g/data", PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

START_TEST(native_heap)
{
	size_t len;
	unsigned char *b;
	char *path = damaged_native(&b, &len);
	const uint64_t zero = 0;

	/* Each heap: its free list's head past the segment; its first free
	 * block's next at 0, its size past the segment. */
	for (int k = 0; k < 2; k++) {
		const size_t at = nth(b, len, "HEAP", k);
		uint64_t size, head, data;

		memcpy(&size, b + at + 8, 8);
		memcpy(&head, b + at + 16, 8);
		memcpy(&data, b + at + 24, 8);
		ck_assert_uint_lt(head, size);
		tu_patch(path, at + 16, &size, 8);
		LIBHDF5_LEAKS(both_refuse(path, "free list past the heap"));
		tu_patch(path, at + 16, &head, 8);
		refused_patched(path, b, data + head, &zero, 8,
				"a free block's next at 0");
		refused_patched(path, b, data + head + 8, &size, 8,
				"a free block past the heap");
	}
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	free(b);
	free(path);
}
END_TEST

/* The first v1 B-tree chunk key's size (the bytes after "TREE", a node of
 * type 1, 24 bytes of node header) gets 8 more. */
START_TEST(chunk_size_wrong)
{
	char *path = tu_path("size.h5");
	size_t len;
	uint64_t tree;
	unsigned char *b = tree_file(path, &len, &tree);
	uint32_t size;

	memcpy(&size, b + tree + 24, 4);
	ck_assert_uint_eq(size, 4 * 6 * 2);
	size += 8;
	tu_patch(path, tree + 24, &size, 4);
	read_fails(path, NULL, PARLOAD_ECONTAINER,
		   "recorded size 56, expected 48");
	free(b);
	free(path);
}
END_TEST

START_TEST(filter_missing)
{
	char *path = tu_path("plugin.h5");
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 2, 4, 6 }, { 1, 4, 6 }, 0,
		       false, 32123 };
	size_t elem;
	void *pix = fx_file(path, &f, &elem);

	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "HDF5 filter 32123 (unnamed) is not available");
	free(pix);
	free(path);
}
END_TEST

/* ---- counts read from the file ---- */

/* The bytes seq (n of them) at one place only of the file at path: its
 * offset there. */
static uint64_t find_once(const char *path, const void *seq, size_t n)
{
	size_t len;
	unsigned char *b = tu_read_all(path, &len);
	uint64_t at = UINT64_MAX;

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(b + i, seq, n) == 0) {
			ck_assert_msg(at == UINT64_MAX, "%s: twice", path);
			at = i;
		}
	free(b);
	ck_assert_msg(at != UINT64_MAX, "%s: not found", path);
	return at;
}

/* /scan, 3 x 6 x 5 u16 (chunked by views or contiguous), written here,
 * then its first dimension patched to frames: its dataspace message holds
 * (3, 6, 5) then the same maximum; only the dimension changes (libhdf5
 * opens a dimension past its maximum). */
static char *claims_frames(const char *file, bool chunked, uint64_t frames)
{
	const fx f = { "/scan", H5T_STD_U16LE, 3, { 3, 6, 5 },
		       { chunked ? 1 : 0, 6, 5 } };
	const uint64_t dims[6] = { 3, 6, 5, 3, 6, 5 };
	char *path = tu_path(file);
	size_t elem;

	free(fx_file(path, &f, &elem));
	tu_patch(path, find_once(path, dims, sizeof(dims)), &frames, 8);
	return path;
}

/* The whole load of path fails with code, saying says, holding nothing. */
static void load_fails(const char *path, int code, const char *says)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	int rc;

	parload_options_init(&o);
	o.error = &err;
	rc = parload_load(path, &o, &ds);
	ck_assert_msg(rc == code, "%s: %d, not %d: %s", path, rc, code,
		      err.message);
	ck_assert_msg(strstr(err.message, says), "%s lacks \"%s\"",
		      err.message, says);
	tu_assert_empty(&ds, path);
}

/* Which reader read an HDF5 file, as a load reports it
 * (stats.fallback_files): a contiguous /exchange/data parload's own (0),
 * deflated chunks libhdf5's (1), every file libhdf5's with
 * PARLOAD_HDF5=libhdf5 (1), the same pixels each way;
 * PARLOAD_HDF5=native refuses the deflated one, saying so; another value
 * of PARLOAD_HDF5 is refused, naming the ones there are. */
START_TEST(backend_choice)
{
	const fx plain = { "/exchange/data", H5T_STD_U16LE, 3, { 4, 5, 6 } };
	const fx gz = { "/exchange/data", H5T_STD_U16LE, 3, { 4, 5, 6 },
			{ 1, 5, 6 }, .gzip = 4 };
	const struct {
		const fx *f;
		const char *how;
		uint64_t fallbacks;
	} cases[] = { { &plain, NULL, 0 }, { &plain, "libhdf5", 1 },
		      { &plain, "native", 0 }, { &gz, NULL, 1 },
		      { &gz, "libhdf5", 1 } };
	char *path = tu_path("choice.h5");

	for (size_t i = 0; i < TU_COUNT(cases); i++) {
		size_t elem;
		void *pix = fx_file(path, cases[i].f, &elem);
		parload_options o;
		parload_dataset ds;
		parload_error err;

		parload_options_init(&o);
		o.error = &err;
		if (cases[i].how)
			ck_assert_int_eq(setenv("PARLOAD_HDF5", cases[i].how, 1),
					 0);
		ck_assert_msg(parload_load(path, &o, &ds) == 0, "%s",
			      err.message);
		ck_assert_uint_eq(ds.stats.fallback_files,
				  cases[i].fallbacks);
		ck_assert_mem_eq(ds.pixels, pix, 4 * 5 * 6 * elem);
		parload_dataset_free(&ds);
		if (cases[i].f == &gz) {
			ck_assert_int_eq(setenv("PARLOAD_HDF5", "native", 1),
					 0);
			load_fails(path, PARLOAD_ENOTSUP, "PARLOAD_HDF5=native");
		}
		ck_assert_int_eq(setenv("PARLOAD_HDF5", "h5py", 1), 0);
		load_fails(path, PARLOAD_EINVAL,
			   "PARLOAD_HDF5=h5py: auto, native or libhdf5");
		ck_assert_int_eq(unsetenv("PARLOAD_HDF5"), 0);
		free(pix);
	}
	free(path);
}
END_TEST

/* A file of libhdf5's latest format (superblock version 3, "OHDR"
 * headers) whose checksums no longer match: the superblock's (its
 * extension's address set), the dataset's header's (its dimensions and
 * maximum 4 x 5 x 6 made 4 x 6 x 5, as many bytes).  libhdf5 refuses both; the
 * native reader, which read both, falls back. */
START_TEST(native_checksums)
{
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	const uint64_t dims[3] = { 4, 5, 6 }, swapped[3] = { 4, 6, 5 };
	const uint64_t ext = 48;
	char *path = tu_path("checksums.h5");
	const fx f = { "/exchange/data", H5T_STD_U16LE, 3, { 4, 5, 6 },
		       .file = &latest };
	size_t elem, len;
	unsigned char *b;
	int n = 0;

	free(fx_file(path, &f, &elem));
	same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	tu_patch(path, 20, &ext, 8);
	LIBHDF5_LEAKS(both_refuse(path, "superblock checksum"));
	free(fx_file(path, &f, &elem));
	/* The dimensions, then the same maximum. */
	b = tu_read_all(path, &len);
	for (size_t at = 0; at + sizeof(dims) <= len; at++)
		if (memcmp(b + at, dims, sizeof(dims)) == 0)
			tu_patch(path, at, swapped, sizeof(swapped)), n++;
	ck_assert_int_eq(n, 2);
	free(b);
	LIBHDF5_LEAKS(both_refuse(path, "header checksum"));
	free(path);
}
END_TEST

/* A first dimension of 2^62 + 1 (its tables' bytes past 64 bits, which
 * once wrapped to a few and were filled 2^62 times) or 2^40 (32 TiB of
 * tables, more than any machine here) is refused before any table is
 * made, naming the bytes: contiguous or chunked, read or loaded. */
START_TEST(frames_past_memory)
{
	static const struct {
		uint64_t frames;
		const char *says;
	} cases[] = {
		{ ((uint64_t)1 << 62) + 1,
		  "4611686018427387905 table entries (the frames of /scan) of "
		  "32 bytes need more bytes than 64 bits count" },
		{ (uint64_t)1 << 40,
		  "1099511627776 table entries (the frames of /scan) of 32 "
		  "bytes need 35184372088832 bytes, more than the" },
	};

	for (int k = 0; k < TU_COUNT(cases); k++)
		for (int chunked = 0; chunked < 2; chunked++) {
			char *path = claims_frames("claims.h5", chunked,
						   cases[k].frames);

			read_fails(path, NULL, PARLOAD_ENOMEM, cases[k].says);
			load_fails(path, PARLOAD_ENOMEM, cases[k].says);
			free(path);
		}
}
END_TEST

/* 2^33 frames (an 11 KB file's claim; 256 GiB of tables) under an
 * address-space limit of 4 GiB, so that no machine makes the tables: the
 * bytes are named. */
START_TEST(frames_past_the_limit)
{
	char *path;
	struct rlimit saved, lim;

	path = claims_frames("limit.h5", true, (uint64_t)1 << 33);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved), 0);
	lim = saved;
	lim.rlim_cur = (rlim_t)4 << 30;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
	/* (Or the machine's RAM and swap, where they are less.) */
	load_fails(path, PARLOAD_ENOMEM,
		   "8589934592 table entries (the frames of /scan) of 32 bytes "
		   "need 274877906944 bytes, more than the ");
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved), 0);
	free(path);
}
END_TEST

/* 4 entries of buf (of memory type mt) as dataset name of file type ft. */
static void write_as(hid_t file, const char *name, hid_t ft, hid_t mt,
		     const void *buf)
{
	hsize_t n = 4;
	hid_t s = H5Screate_simple(1, &n, NULL);
	hid_t d = H5Dcreate2(file, name, ft, s, H5P_DEFAULT, H5P_DEFAULT,
			     H5P_DEFAULT);

	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf),
			 0);
	H5Dclose(d);
	H5Sclose(s);
}

/* An NXtomo file (/entry/data: data 4 x 3 x 2 u16, image_key 0 of type
 * key, rotation_angle 0, 30, 60, 90 of type angle) at path. */
static void nx_typed(const char *path, hid_t key, hid_t angle)
{
	const fx data = { "/entry/data/data", H5T_STD_U16LE, 3, { 4, 3, 2 } };
	const int32_t keys[4] = { 0, 0, 0, 0 };
	const double deg[4] = { 0, 30, 60, 90 };
	const char *text[4] = { "0", "30", "60", "90" };
	size_t elem;
	void *pix = fx_pixels(&data, &elem);
	hid_t file = create(path);

	fx_write_in(file, &data, pix);
	set_class(file, "/entry", "NXentry");
	write_as(file, "/entry/data/image_key", key, H5T_NATIVE_INT32, keys);
	if (H5Tget_class(angle) == H5T_STRING)
		write_as(file, "/entry/data/rotation_angle", angle, angle,
			 text);
	else
		write_as(file, "/entry/data/rotation_angle", angle,
			 H5T_NATIVE_DOUBLE, deg);
	H5Fclose(file);
	free(pix);
}

/* image_key and rotation_angle of types parload does not read are
 * refused before libhdf5 reads them, naming them and their types: an
 * image_key whose 4-byte integer type is patched to 2^31 bytes an element
 * (once 2.1 GB of libhdf5's conversion buffers), floats or strings. */
START_TEST(column_types)
{
	char *path = tu_path("types.nxs");
	const uint8_t i32[12] = { 0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0 };
	const uint32_t huge = (uint32_t)1 << 31;
	hid_t vstr;
	parload__container c;

	nx_typed(path, H5T_STD_I32LE, H5T_IEEE_F64LE);
	none_open();
	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_float_eq(c.strips.angles[3], 90.0f);
	parload__container_free(&c);
	tu_patch(path, find_once(path, i32, sizeof(i32)) + 4, &huge, 4);
	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "/entry/data/image_key: an integer of 2147483648 bytes (an "
		   "image_key holds integers of 1 to 8 bytes)");
	nx_typed(path, H5T_IEEE_F32LE, H5T_IEEE_F64LE);
	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "/entry/data/image_key: a float of 4 bytes");
	vstr = H5Tcopy(H5T_C_S1);
	H5Tset_size(vstr, H5T_VARIABLE);
	nx_typed(path, H5T_STD_I8LE, vstr);
	H5Tclose(vstr);
	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "/entry/data/rotation_angle: a string of");
	/* Integer angles are angles. */
	nx_typed(path, H5T_STD_U8LE, H5T_STD_I16BE);
	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_float_eq(c.strips.angles[2], 60.0f);
	parload__container_free(&c);
	free(path);
}
END_TEST

/* A B-tree key (the first, of frame 0) whose coordinates are no chunk's
 * of the dataset: the element's not 0 (libhdf5 finds no chunk at 2 and
 * reads fill values, where the chunk's bytes were read), a frame past
 * the dataset's, a row off the chunk grid.  The parser does not fall back
 * to libhdf5's table (which has the key all the same): the index is
 * corrupt, an error naming the file, the dataset and the key's byte
 * offset, in the parser's table, the reader's and a load; the native
 * reader leaves it to them. */
START_TEST(index_corrupt_keys)
{
	static const struct {
		int k;              /* the coordinate: frame, row, column,
				     * element */
		uint64_t x;
		const char *says;
	} keys[] = {
		{ 3, 2, "coordinate 4 of 4 is 2, where the element's is "
			"always 0 (libhdf5 finds no chunk there and reads "
			"fill values)" },
		{ 3, 1, "coordinate 4 of 4 is 1, where the element's is "
			"always 0 (byte" },
		{ 0, 3, "coordinate 1 of 4 is 3, past the dataset's 3" },
		{ 1, 2, "coordinate 2 of 4 is 2, off the chunk grid of 4" },
	};
	char *path = tu_path("keys.h5");

	for (int i = 0; i < TU_COUNT(keys); i++) {
		size_t len;
		uint64_t tree, key;
		unsigned char *b = tree_file(path, &len, &tree);
		parload__container c;
		parload_error err;
		char at[64], says[200];

		key = tree + 24; /* after the node's header: key 0 */
		tu_patch(path, key + 8 + 8 * keys[i].k, &keys[i].x, 8);
		if (keys[i].k == 3 && keys[i].x == 2) {
			/* libhdf5 reads frame 0 as fill values (the
			 * fixture's pixel 1 is not 0). */
			hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
			hid_t d = H5Dopen2(f, "/scan", H5P_DEFAULT);
			uint16_t px[3 * 4 * 6], zero[4 * 6] = { 0 };

			ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT16, H5S_ALL,
						 H5S_ALL, H5P_DEFAULT, px), 0);
			H5Dclose(d), H5Fclose(f);
			ck_assert_mem_eq(px, zero, sizeof(zero));
			/* libhdf5's own table lists the chunk, at frame 0;
			 * parload asks its reads where that is. */
			lib_fails(path, PARLOAD_ECONTAINER,
				  "/scan: a corrupt chunk index: chunk 0, "
				  "listed at (0, 0, 0), is not what libhdf5 "
				  "reads there");
		}
		snprintf(at, sizeof(at), "(byte offset %" PRIu64 ")", key);
		snprintf(says, sizeof(says), "/scan: a corrupt chunk index: a "
			 "key's %s", keys[i].says);
		ck_assert_int_eq(h5read(path, NULL, PARLOAD_FRAMES_PROJECTIONS,
					&c, &err),
				 PARLOAD_ECONTAINER);
		ck_assert_ptr_null(c.paths);
		ck_assert_msg(strstr(err.message, says) &&
				      strstr(err.message, at) &&
				      strstr(err.message, path),
			      "%s lacks \"%s\" or \"%s\"", err.message, says,
			      at);
		read_fails(path, NULL, PARLOAD_ECONTAINER, says);
		read_fails(path, NULL, PARLOAD_ECONTAINER, at);
		load_fails(path, PARLOAD_ECONTAINER, says);
		native_falls_back(path, "/scan", PARLOAD_FRAMES_PROJECTIONS);
		free(b);
	}
	free(path);
}
END_TEST

/* ---- the units of angles ---- */

/* A units attribute of text on object obj of the file at path: a
 * fixed-length string 3 bytes longer than text, padded as pad says, or
 * (pad < 0) a variable-length one (-2: written under libver latest, an
 * Attribute message of version 3). */
static void put_units(const char *path, const char *obj, const char *text,
		      int pad)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), f, o, a;
	char buf[64];

	if (pad == -2)
		H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST,
				     H5F_LIBVER_LATEST);
	f = H5Fopen(path, H5F_ACC_RDWR, fapl);
	o = H5Oopen(f, obj, H5P_DEFAULT);
	ck_assert_int_ge(o, 0);
	memset(buf, pad == H5T_STR_SPACEPAD ? ' ' : 0, sizeof(buf));
	memcpy(buf, text, strlen(text));
	if (pad < 0)
		H5Tset_size(t, H5T_VARIABLE);
	else
		H5Tset_size(t, strlen(text) + 3), H5Tset_strpad(t, pad);
	a = H5Acreate2(o, "units", t, s, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Awrite(a, t, pad < 0 ? (void *)&text : buf), 0);
	H5Aclose(a), H5Sclose(s), H5Tclose(t), H5Oclose(o), H5Fclose(f);
	H5Pclose(fapl);
}

/* The angles of path's projections are deg[k] (degrees) times scale. */
static void angles_are(const char *path, const double *deg, int n,
		       double scale)
{
	parload__container c;

	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_uint_eq(c.desc.count, (uint64_t)n);
	ck_assert_ptr_nonnull(c.strips.angles);
	for (int k = 0; k < n; k++)
		ck_assert_msg(c.strips.angles[k] == (float)(deg[k] * scale),
			      "%s: angle %d: %.9g, not %.9g", path, k,
			      (double)c.strips.angles[k], deg[k] * scale);
	parload__container_free(&c);
}

/* theta and rotation_angle in radians (units "rad", "radian", "radians",
 * any case, as fixed-length or variable-length strings) are delivered in
 * degrees, x * 180 / pi; in degrees (units "deg", "degree", "degrees", or
 * none) as they are; in units parload does not know refused, naming the
 * dataset and the unit.  The native reader reads them alike (a
 * variable-length string from the global heap) and leaves a unit it does
 * not know to libhdf5's reader. */
START_TEST(angle_units)
{
	static const struct {
		const char *text;
		int pad;       /* fixed-length padding, or -1: vlen */
		bool radians;
		bool native;   /* the native reader reads it itself */
	} units[] = {
		{ "RAD", -2, true, true }, /* libver latest: v3 messages */
		{ "rad", H5T_STR_NULLTERM, true, true },
		{ "Radians", H5T_STR_SPACEPAD, true, true },
		{ "radian", H5T_STR_NULLPAD, true, true },
		{ "radians", -1, true, true },
		{ "deg", H5T_STR_NULLTERM, false, true },
		{ "degrees", -1, false, true },
		{ "DEGREE", H5T_STR_SPACEPAD, false, true },
	};
	const double dx[4] = { 0, 30.25, 60.5, 179.75 };
	const double nx[4] = { 0, 30, 60, 90 };
	const double per_rad = 180.0 / 3.14159265358979323846;
	static const fopts latest = { .low = H5F_LIBVER_LATEST,
				      .high = H5F_LIBVER_LATEST };
	char *path = tu_path("units.h5");

	for (int k = 0; k < TU_COUNT(units); k++) {
		const double scale = units[k].radians ? per_rad : 1.0;

		dx_file(path, units[k].pad == -2 ? &latest : NULL,
			H5T_STD_U16LE, H5T_IEEE_F64LE, false);
		put_units(path, "/exchange/theta", units[k].text,
			  units[k].pad);
		angles_are(path, dx, 4, scale);
		if (units[k].native)
			same_native(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
		else
			native_falls_back(path, NULL,
					  PARLOAD_FRAMES_PROJECTIONS);
		nx_typed(path, H5T_STD_I32LE, H5T_IEEE_F32BE);
		put_units(path, "/entry/data/rotation_angle", units[k].text,
			  units[k].pad);
		angles_are(path, nx, 4, scale);
	}
	/* Units parload does not know. */
	dx_file(path, NULL, H5T_STD_U16LE, H5T_IEEE_F32LE, false);
	put_units(path, "/exchange/theta", "grad", H5T_STR_NULLTERM);
	native_falls_back(path, NULL, PARLOAD_FRAMES_PROJECTIONS);
	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "/exchange/theta: angles in units \"grad\" (parload reads "
		   "deg, degree, degrees, rad, radian, radians)");
	nx_typed(path, H5T_STD_I32LE, H5T_IEEE_F64LE);
	put_units(path, "/entry/data/rotation_angle", "rad/s", -1);
	read_fails(path, NULL, PARLOAD_ENOTSUP,
		   "/entry/data/rotation_angle: angles in units \"rad/s\"");
	free(path);
}
END_TEST

/* ---- parload_save ---- */

static void saved(const char *path, const char *name, hsize_t *dims,
		  hsize_t *chunk, int *nfilters, void *pixels)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	hid_t s = H5Dget_space(d), p = H5Dget_create_plist(d);

	ck_assert_int_ge(d, 0);
	ck_assert_int_eq(H5Sget_simple_extent_dims(s, dims, NULL), 3);
	ck_assert_int_eq(H5Pget_chunk(p, 3, chunk), 3);
	*nfilters = H5Pget_nfilters(p);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL,
				 H5P_DEFAULT, pixels), 0);
	H5Pclose(p), H5Sclose(s), H5Dclose(d), H5Fclose(f);
}

START_TEST(save_views)
{
	char *path = tu_path("out.h5");
	enum { N = 3, R = 5, C = 4 };
	uint16_t pix[N * R * C], back[N * R * C];
	const float ang[N] = { 0, 60, 120 };
	const parload_stack st = { pix, PARLOAD_PIXEL_U16, N, R, C,
				   PARLOAD_LAYOUT_VIEWS, ang, N };
	parload_save_options o;
	parload_error err;
	hsize_t dims[3], chunk[3];
	int nf;
	double theta[N];
	hid_t f, d;
	parload__container c;

	for (int i = 0; i < N * R * C; i++)
		pix[i] = (uint16_t)(i * 977);
	parload_save_options_init(&o);
	o.gzip = 4;
	ck_assert_msg(parload_save(path, &st, &o, &err) == 0, "%s",
		      err.message);
	saved(path, "/exchange/data", dims, chunk, &nf, back);
	ck_assert_uint_eq(dims[0], N);
	ck_assert_uint_eq(dims[1], R);
	ck_assert_uint_eq(dims[2], C);
	ck_assert_uint_eq(chunk[0], 1);
	ck_assert_uint_eq(chunk[1], R);
	ck_assert_int_eq(nf, 2);
	ck_assert_mem_eq(back, pix, sizeof(pix));
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_gt(H5Aexists(f, "implements"), 0);
	d = H5Dopen2(f, "/exchange/theta", H5P_DEFAULT);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
				 H5P_DEFAULT, theta), 0);
	H5Dclose(d), H5Fclose(f);
	for (int k = 0; k < N; k++)
		ck_assert_double_eq(theta[k], ang[k]);
	/* parload reads it back: shuffle + deflate, the angles. */
	read_ok(path, NULL, PARLOAD_FRAMES_PROJECTIONS, &c);
	ck_assert_int_eq(kind(&c.strips), K_SHUFFLE_DEFLATE);
	ck_assert_float_eq(c.strips.angles[2], 120.0f);
	assert_pixels(&c, pix, 2, NULL);
	parload__container_free(&c);
	ck_assert_int_eq(parload_save(path, &st, &o, &err), PARLOAD_EEXIST);
	free(path);
}
END_TEST

START_TEST(save_sinograms)
{
	char *path = tu_path("sino.h5");
	enum { N = 2, R = 6, C = 3 };
	uint16_t pix[N * R * C], back[N * R * C];
	const parload_stack st = { pix, PARLOAD_PIXEL_U16, N, R, C,
				   PARLOAD_LAYOUT_SINOGRAMS };
	parload_error err;
	hsize_t dims[3], chunk[3];
	int nf;
	hid_t f;

	for (int i = 0; i < N * R * C; i++)
		pix[i] = (uint16_t)(i * 31);
	ck_assert_msg(parload_save(path, &st, NULL, &err) == 0, "%s",
		      err.message);
	saved(path, "/exchange/sinograms", dims, chunk, &nf, back);
	ck_assert_uint_eq(dims[0], N);
	ck_assert_uint_eq(dims[1], R);
	ck_assert_int_eq(nf, 0);
	ck_assert_mem_eq(back, pix, sizeof(pix));
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_eq(H5Lexists(f, "/exchange/data", H5P_DEFAULT), 0);
	ck_assert_int_gt(H5Aexists_by_name(f, "/exchange/sinograms", "axes",
					   H5P_DEFAULT), 0);
	H5Fclose(f);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hdf5");
	TCase *t = tu_tcase(s, "read", 0);
	const char *why;

	tcase_add_test(t, contiguous_u16);
	tcase_add_test(t, big_endian_i16);
	tcase_add_test(t, every_type);
	tcase_add_test(t, chunked_views);
	tcase_add_test(t, chunked_bands);
	tcase_add_test(t, gzip_shuffle);
	tcase_add_test(t, gzip_alone);
	tcase_add_test(t, two_d);
	tcase_add_test(t, other_filter);
	tcase_add_test(t, fletcher32_filter);
	tcase_add_test(t, any_chunks);
	tcase_add_test(t, unwritten_chunks);
	tcase_add_test(t, dxchange);
	tcase_add_test(t, nxtomo);
	tcase_add_test(t, angle_units);
	t = tu_tcase(s, "native", 60);
	tcase_add_test(t, native_matrix);
	tcase_add_test(t, native_pixels);
	tcase_add_test(t, backend_choice);
	tcase_add_test(t, native_layouts);
	tcase_add_test(t, native_dense);
	tcase_add_test(t, native_leaves);
#ifdef PARLOAD_MODULES
	tcase_add_test(t, native_without_module);
#endif
	t = tu_tcase(s, "index", 60);
	tcase_add_test(t, index_levels);
	tcase_add_test(t, index_many);
	tcase_add_test(t, index_headers);
	tcase_add_test(t, index_latest);
	tcase_add_test(t, index_empty);
	tcase_add_test(t, index_continuation);
	tcase_add_test(t, index_broken);
	tcase_add_test(t, index_corrupt_keys);
	tcase_add_test(t, index_keys_out_of_order);
	t = tu_tcase(s, "refused", 0);
	tcase_add_test(t, which_dataset);
	tcase_add_test(t, unsupported);
	tcase_add_test(t, truncated);
	tcase_add_test(t, chunk_size_wrong);
	tcase_add_test(t, filter_missing);
	tcase_add_test(t, frames_past_memory);
	/* Not added where it cannot run: said as a skipped case. */
	if ((why = tu_why_no_rlimit()))
		printf("frames_past_the_limit: SKIP: %s\n", why);
	else
		tcase_add_test(t, frames_past_the_limit);
	tcase_add_test(t, column_types);
	tcase_add_test(t, damaged_header);
	tcase_add_test(t, native_eof);
	tcase_add_test(t, native_cache_type);
	tcase_add_test(t, native_heap);
	tcase_add_test(t, native_group_keys);
	tcase_add_test(t, native_message_flags);
	tcase_add_test(t, native_header_v1);
	tcase_add_test(t, native_fill_value);
	tcase_add_test(t, native_links);
	tcase_add_test(t, eof_inside_data);
	tcase_add_test(t, native_checksums);
	t = tu_tcase(s, "save", 0);
	tcase_add_test(t, save_views);
	tcase_add_test(t, save_sinograms);
	return s;
}

int main(void)
{
	/* libhdf5 keeps no freed block on its free lists: a block it
	 * loses (damaged_header) is then reported by valgrind where it was
	 * allocated, which tests/valgrind.supp names, not where an earlier
	 * test's file first had it. */
	H5set_free_list_limits(0, 0, 0, 0, 0, 0);
	return tu_run(suite());
}
#endif /* HAVE_HDF5 */
