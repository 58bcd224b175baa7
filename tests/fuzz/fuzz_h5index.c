/*
 * fuzz_h5index.c - libFuzzer harness for parload's own HDF5 chunk index
 * parser (src/formats/hdf5/hdf5_index.c, hdf5_index4.c).  At start it
 * writes small HDF5 files with libhdf5 (a version 1 object header over a
 * B-tree of three levels, a version 2 header, a user block; libver latest:
 * a fixed array, paged, filtered or not, an extensible array with super
 * blocks, a version 2 B-tree with internal nodes, a single chunk, filtered
 * or not, implicit chunks) and asks libhdf5 once where each dataset
 * is.  Each input then corrupts one of them: byte 0 picks the
 * file, byte 1 (when not 0) cuts it to byte/256 of its length, and each
 * following 3 bytes XOR a byte (a 16-bit offset, modulo the length, then
 * the value).  Only parload__h5index_walk runs over the result, never
 * libhdf5: it must answer "fall back" or "corrupt" (a key that is no
 * chunk's), or give chunks that lie in the file, on the chunk grid,
 * inside the dataset, no more of them than the grid has; the untouched
 * files give every chunk.
 *
 *
 * The last two files hold a contiguous /exchange/data and its theta, in
 * units of a variable-length string (symbol table groups; Link messages
 * after a user block): over them
 * parload__hdf5_native runs instead, and must answer "fall back" holding
 * nothing, or a container whose strips lie in the file, one per view;
 * untouched, the container with its angles.  It runs over the chunked
 * files too, after the parser (/scan): "fall back", or strips of whole
 * chunks in the file; untouched, every strip.
 *
 * Seeds: `fuzz_h5index -write_seeds=DIR` writes a few inputs, then exits.
 */
#include "config.h"

#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <unistd.h>

#include "../../src/formats/hdf5/hdf5_core.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define UNL H5S_UNLIMITED

/* The files: how each is made, then what it holds. */
static struct base {
	unsigned istore_k;
	hsize_t userblock;
	bool v18;           /* libver 1.8: an "OHDR" header */
	hsize_t dims[3], chunk[3]; /* chunk[0] == 0: contiguous */
	bool latest;        /* libver latest: a version 4 layout */
	hsize_t max[3];     /* its maximum (max[0] == 0: dims) */
	int gzip;
	bool early;         /* allocated when made: implicit chunks */
	bool lib_only;      /* not one the native reader takes */
	unsigned char *bytes;
	size_t len;
	parload__h5where w;
} bases[] = {
	{ 2, 0, false, { 12, 4, 6 }, { 1, 4, 6 } },
	{ 0, 0, true, { 3, 8, 5 }, { 1, 4, 5 } },
	{ 0, 512, false, { 4, 2, 3 }, { 1, 2, 3 } },
	{ 0, 0, false, { 5, 3, 4 }, { 0 } },
	{ 0, 512, true, { 5, 3, 4 }, { 0 } },
	/* A fixed array; paged, filtered. */
	{ 0, 0, false, { 12, 4, 6 }, { 1, 2, 6 }, true },
	{ 0, 0, false, { 40, 8, 4 }, { 1, 1, 1 }, true, .gzip = 1,
	  .lib_only = true },
	/* An extensible array; with super blocks. */
	{ 0, 0, false, { 12, 4, 6 }, { 1, 2, 6 }, true, { UNL, 4, 6 } },
	{ 0, 512, false, { 300, 2, 2 }, { 1, 2, 2 }, true, { UNL, 2, 2 } },
	/* A version 2 B-tree; with internal nodes, filtered. */
	{ 0, 0, false, { 12, 4, 6 }, { 1, 2, 6 }, true, { UNL, UNL, 6 } },
	{ 0, 0, false, { 400, 4, 2 }, { 1, 1, 2 }, true, { UNL, UNL, UNL },
	  .gzip = 1, .lib_only = true },
	/* A single chunk, filtered or not; implicit chunks. */
	{ 0, 0, false, { 1, 4, 6 }, { 1, 4, 6 }, true },
	{ 0, 0, false, { 3, 4, 6 }, { 3, 4, 6 }, true, .gzip = 1,
	  .lib_only = true },
	{ 0, 0, false, { 6, 4, 6 }, { 1, 2, 6 }, true, { 9, 4, 6 },
	  .early = true },
};

#define NBASES (sizeof(bases) / sizeof(bases[0]))

static char input[64];
static int fd = -1;

/* /exchange/data in space s, contiguous, after /exchange/theta of n
 * angles (f64, big-endian) whose units are "degrees", a variable-length
 * string (in the global heap). */
static hid_t contiguous(hid_t f, hid_t s, hsize_t n)
{
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t ts = H5Screate_simple(1, &n, NULL);
	hid_t str = H5Tcopy(H5T_C_S1), scalar = H5Screate(H5S_SCALAR);
	const double deg[8] = { 0, 10, 20, 30, 40, 50, 60, 70 };
	const char *units = "degrees";
	hid_t t, d, a;

	REQUIRE(n <= 8 && H5Pset_create_intermediate_group(lcpl, 1) >= 0);
	t = H5Dcreate2(f, "/exchange/theta", H5T_IEEE_F64BE, ts, lcpl,
		       H5P_DEFAULT, H5P_DEFAULT);
	REQUIRE(t >= 0 && H5Dwrite(t, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
				   H5P_DEFAULT, deg) >= 0);
	REQUIRE(H5Tset_size(str, H5T_VARIABLE) >= 0);
	a = H5Acreate2(t, "units", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
	REQUIRE(a >= 0 && H5Awrite(a, str, &units) >= 0);
	H5Aclose(a);
	H5Sclose(scalar);
	H5Tclose(str);
	d = H5Dcreate2(f, "/exchange/data", H5T_STD_U8LE, s, lcpl,
		       H5P_DEFAULT, H5P_DEFAULT);
	H5Dclose(t);
	H5Sclose(ts);
	H5Pclose(lcpl);
	return d;
}

/* What libhdf5 says of b's file at path and its /scan, for the parser. */
static void where(const char *path, struct base *b)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t fcpl = f < 0 ? -1 : H5Fget_create_plist(f);
	hsize_t ub = 0;
	size_t so = 0, sl = 0;
	unsigned ik = 0;
#if H5_VERSION_GE(1, 12, 0)
	H5O_info1_t info;

	REQUIRE(fcpl >= 0 &&
		H5Oget_info_by_name1(f, "/scan", &info, H5P_DEFAULT) >= 0);
#else
	H5O_info_t info;

	REQUIRE(fcpl >= 0 && H5Oget_info_by_name2(f, "/scan", &info,
						  H5O_INFO_BASIC,
						  H5P_DEFAULT) >= 0);
#endif
	REQUIRE(H5Pget_userblock(fcpl, &ub) >= 0 &&
		H5Pget_sizes(fcpl, &so, &sl) >= 0 &&
		H5Pget_istore_k(fcpl, &ik) >= 0);
	b->w = (parload__h5where){ .super = ub, .header = info.addr,
				   .istore_k = ik, .so = (unsigned)so,
				   .sl = (unsigned)sl, .rank = 3, .elem = 1 };
	for (int k = 0; k < 3; k++) {
		b->w.dims[k] = b->dims[k];
		b->w.chunk[k] = b->chunk[k];
	}
	H5Pclose(fcpl);
	H5Fclose(f);
}

/* The chunks a walk gives, in its order. */
typedef struct index {
	parload__chunk c[4096];
	uint64_t n;
} index_t;

static int append(void *ctx, const parload__chunk *c)
{
	index_t *x = ctx;

	REQUIRE(x->n < sizeof(x->c) / sizeof(x->c[0]));
	x->c[x->n++] = *c;
	return 0;
}

static void make_base(struct base *b, const char *path)
{
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t f, s, d;
	unsigned char *pix = malloc(b->dims[0] * b->dims[1] * b->dims[2]);
	FILE *in;

	REQUIRE(pix);
	for (size_t i = 0; i < b->dims[0] * b->dims[1] * b->dims[2]; i++)
		pix[i] = (unsigned char)(0x5a + i * 7);
	REQUIRE(!b->istore_k || H5Pset_istore_k(fcpl, b->istore_k) >= 0);
	REQUIRE(!b->userblock || H5Pset_userblock(fcpl, b->userblock) >= 0);
	REQUIRE(!b->v18 || H5Pset_libver_bounds(fapl, H5F_LIBVER_V18,
						H5F_LIBVER_V18) >= 0);
	REQUIRE(!b->latest || H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST,
						   H5F_LIBVER_LATEST) >= 0);
	REQUIRE(!b->chunk[0] || H5Pset_chunk(dcpl, 3, b->chunk) >= 0);
	REQUIRE(!b->gzip || H5Pset_deflate(dcpl, (unsigned)b->gzip) >= 0);
	REQUIRE(!b->early ||
		H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0);
	f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	s = H5Screate_simple(3, b->dims, b->max[0] ? b->max : NULL);
	d = b->chunk[0] ? H5Dcreate2(f, "/scan", H5T_STD_U8LE, s, H5P_DEFAULT,
				     dcpl, H5P_DEFAULT) :
			  contiguous(f, s, b->dims[0]);
	REQUIRE(d >= 0 && H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL,
				   H5P_DEFAULT, pix) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Fclose(f);
	H5Pclose(dcpl);
	H5Pclose(fapl);
	H5Pclose(fcpl);
	free(pix);
	if (b->chunk[0])
		where(path, b);
	in = fopen(path, "rb");
	REQUIRE(in && fseek(in, 0, SEEK_END) == 0);
	b->len = (size_t)ftell(in);
	b->bytes = malloc(b->len);
	REQUIRE(b->bytes && fseek(in, 0, SEEK_SET) == 0 &&
		fread(b->bytes, 1, b->len, in) == b->len);
	fclose(in);
}

static uint64_t grid(const parload__h5where *w)
{
	uint64_t n = 1;

	for (int k = 0; k < w->rank; k++)
		n *= (w->dims[k] + w->chunk[k] - 1) / w->chunk[k];
	return n;
}

static void check_table(const index_t *x, const parload__h5where *w,
			uint64_t len)
{
	REQUIRE(x->n <= grid(w));
	for (uint64_t i = 0; i < x->n; i++) {
		const parload__chunk *c = &x->c[i];

		REQUIRE(c->bytes >= 1 && c->addr <= len &&
			c->bytes <= len - c->addr);
		for (int k = 0; k < w->rank; k++) {
			const uint64_t at = c->at[3 - w->rank + k];

			REQUIRE(at < w->dims[k] && at % w->chunk[k] == 0);
		}
	}
}

/* The native reader over the file open as fd (size bytes of input; its
 * chunked /scan, or the contiguous /exchange/data): "fall back" holding
 * nothing, or views whose strips (one each when contiguous; rows of the
 * chunk's height, whole, when chunked) lie inside the file. */
static int native(const struct base *b, uint64_t len, size_t size)
{
	char path[64];
	parload__container c;
	int rc;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = parload__hdf5_native(path, b->chunk[0] ? "/scan" : NULL,
				  PARLOAD_FRAMES_PROJECTIONS, &c);
	REQUIRE(rc == 0 || (rc == 1 && !c.paths && !c.strips.run));
	if (rc == 1)
		return 1;
	REQUIRE(c.n == 1 && c.strips.views == c.desc.count &&
		c.desc.count <= len);
	if (b->chunk[0])
		REQUIRE(c.strips.rows == b->chunk[1] &&
			c.strips.per_view == (c.desc.height + c.strips.rows -
					      1) / c.strips.rows &&
			c.desc.count == b->dims[0]);
	else /* untouched, theta is there */
		REQUIRE(c.strips.per_view == 1 &&
			(c.strips.angles || len != b->len || size > 2));
	REQUIRE(c.strips.added == c.strips.views * c.strips.per_view);
	for (uint64_t i = 0; i < c.strips.views * c.strips.per_view; i++) {
		const parload__strip ps = parload__strip_of(&c.strips, i, NULL);
		const parload__strip *p = &ps;

		REQUIRE(p->off <= len && p->bytes <= len - p->off &&
			p->bytes == (uint64_t)c.strips.rows *
					    c.desc.row_size);
	}
	parload__container_free(&c);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct base *b = &bases[size ? data[0] % NBASES : 0];
	const size_t len = size > 1 && data[1] ? b->len * data[1] / 256 :
						 b->len;
	unsigned char *file = malloc(b->len);
	static index_t x;
	parload_error err;
	int rc;

	REQUIRE(file);
	memcpy(file, b->bytes, b->len);
	for (size_t i = 2; i + 3 <= size; i += 3)
		file[(data[i] | (size_t)data[i + 1] << 8) % b->len] ^=
			data[i + 2];
	REQUIRE(ftruncate(fd, 0) == 0 &&
		pwrite(fd, file, len, 0) == (ssize_t)len);
	free(file);
	if (!b->chunk[0]) {
		rc = native(b, len, size);
		REQUIRE(rc == 0 || size > 2 || len != b->len);
		return 0;
	}
	x.n = 0;
	rc = parload__h5index_walk(fd, &b->w, append, &x, input, "/scan",
				   &err);
	REQUIRE(rc == 0 || rc == 1 || rc == PARLOAD_ECONTAINER);
	if (rc == 0)
		check_table(&x, &b->w, len);
	/* Untouched, every chunk is there, and the native reader has them
	 * all. */
	if (size <= 2 && len == b->len)
		REQUIRE(rc == 0 && x.n == grid(&b->w));
	rc = native(b, len, size);
	REQUIRE(rc == 0 || b->lib_only || size > 2 || len != b->len);
	return 0;
}

/* ---- seeds ---- */

static void write_seeds(const char *dir)
{
	/* Each file untouched, cut short, and with a byte of its header
	 * and of its B-tree flipped; and inputs that once failed (the
	 * last: a chunked file whose rows and chunk rows are near 2^31
	 * each, their sum past 32 bits). */
	static const uint8_t seeds[][10] = {
		{ 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 },
		{ 0, 200 }, { 1, 128 }, { 3, 250 },
		{ 3, 0, 0x60, 0x00, 0x01, 0x30, 0x01, 0x08 },
		{ 4, 0, 0x40, 0x02, 0x02, 0x90, 0x02, 0x10 },
		{ 0, 0, 0x20, 0x03, 0xff, 0x08, 0x04, 0x01 },
		{ 1, 0, 0x10, 0x02, 0x80, 0x40, 0x05, 0x02 },
		{ 1, 0xf9, 0x3f, 0x01, 0x80, 0xee, 0x00, 0x80, 0x01, 0x02 },
		/* The version 4 layouts' indexes, whole and cut. */
		{ 5, 0 }, { 6, 0 }, { 7, 0 }, { 8, 0 }, { 9, 0 }, { 10, 0 },
		{ 11, 0 }, { 12, 0 }, { 13, 0 }, { 6, 240 }, { 8, 250 },
		{ 10, 248 },
	};
	char path[4096];

	fuzz_seed_dir(dir);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		const size_t n = seeds[i][8] || seeds[i][9] ? 10 :
				 seeds[i][2] || seeds[i][3] ? 8 :
							      2;
		FILE *f;

		snprintf(path, sizeof(path), "%s/seed-%zu", dir, i);
		f = fopen(path, "wb");
		REQUIRE(f && fwrite(seeds[i], 1, n, f) == n && fclose(f) == 0);
	}
	printf("fuzz_h5index: wrote %zu seeds to %s\n",
	       sizeof(seeds) / sizeof(seeds[0]), dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[80];

	fuzz_seeds_option(*argc, *argv, write_seeds);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	snprintf(path, sizeof(path), "/tmp/fuzz_h5index.%d.base.h5",
		 (int)getpid());
	for (size_t i = 0; i < NBASES; i++)
		make_base(&bases[i], path);
	unlink(path);
	snprintf(input, sizeof(input), "/tmp/fuzz_h5index.%d.h5",
		 (int)getpid());
	fd = open(input, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	/* The file is gone when the fuzzer is; fd stays open. */
	unlink(input);
	return 0;
}
