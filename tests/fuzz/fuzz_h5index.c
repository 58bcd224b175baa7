/*
 * fuzz_h5index.c - libFuzzer harness for parload's own HDF5 chunk index
 * parser (src/hdf5_index.c).  At start it writes small HDF5 files with
 * libhdf5 (a version 1 object header over a B-tree of three levels, a
 * version 2 header, a user block) and asks libhdf5 once where each
 * dataset is.  Each input then corrupts one of them: byte 0 picks the
 * file, byte 1 (when not 0) cuts it to byte/256 of its length, and each
 * following 3 bytes XOR a byte (a 16-bit offset, modulo the length, then
 * the value).  Only parload__h5index_read runs over the result, never
 * libhdf5: it must answer "fall back" holding nothing, or a table whose
 * chunks lie in the file, on the chunk grid, inside the dataset, no more
 * of them than the grid has; the untouched files give every chunk.
 *
 * Seeds: `fuzz_h5index -write_seeds=DIR` writes a few inputs, then exits.
 */
#include "config.h"

#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <unistd.h>

#include "../../src/internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The files: how each is made, then what it holds. */
static struct base {
	unsigned istore_k;
	hsize_t userblock;
	bool v18;           /* libver 1.8: an "OHDR" header */
	hsize_t dims[3], chunk[3];
	unsigned char *bytes;
	size_t len;
	parload__h5where w;
} bases[] = {
	{ 2, 0, false, { 12, 4, 6 }, { 1, 4, 6 } },
	{ 0, 0, true, { 3, 8, 5 }, { 1, 4, 5 } },
	{ 0, 512, false, { 4, 2, 3 }, { 1, 2, 3 } },
};

#define NBASES (sizeof(bases) / sizeof(bases[0]))

static char input[64];
static int fd = -1;

static void make_base(struct base *b, const char *path)
{
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t f, s, d;
	unsigned char pix[12 * 4 * 6];
	parload_error err;
	FILE *in;

	memset(pix, 0x5a, sizeof(pix));
	REQUIRE(!b->istore_k || H5Pset_istore_k(fcpl, b->istore_k) >= 0);
	REQUIRE(!b->userblock || H5Pset_userblock(fcpl, b->userblock) >= 0);
	REQUIRE(!b->v18 || H5Pset_libver_bounds(fapl, H5F_LIBVER_V18,
						H5F_LIBVER_V18) >= 0);
	REQUIRE(H5Pset_chunk(dcpl, 3, b->chunk) >= 0);
	f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	s = H5Screate_simple(3, b->dims, NULL);
	d = H5Dcreate2(f, "/scan", H5T_STD_U8LE, s, H5P_DEFAULT, dcpl,
		       H5P_DEFAULT);
	REQUIRE(d >= 0 && H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL,
				   H5P_DEFAULT, pix) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Fclose(f);
	H5Pclose(dcpl);
	H5Pclose(fapl);
	H5Pclose(fcpl);
	REQUIRE(parload__hdf5_where(path, "/scan", &b->w, &err) == 0);
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

static void check_table(const parload__h5index *x, const parload__h5where *w,
			uint64_t len)
{
	REQUIRE(x->n <= grid(w) && (x->n == 0 || x->c));
	for (uint64_t i = 0; i < x->n; i++) {
		const parload__h5chunk *c = &x->c[i];

		REQUIRE(c->bytes >= 1 && c->addr <= len &&
			c->bytes <= len - c->addr);
		for (int k = 0; k < w->rank; k++) {
			const uint64_t at = c->at[3 - w->rank + k];

			REQUIRE(at < w->dims[k] && at % w->chunk[k] == 0);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct base *b = &bases[size ? data[0] % NBASES : 0];
	const size_t len = size > 1 && data[1] ? b->len * data[1] / 256 :
						 b->len;
	unsigned char *file = malloc(b->len);
	parload__h5index x;
	int rc;

	REQUIRE(file);
	memcpy(file, b->bytes, b->len);
	for (size_t i = 2; i + 3 <= size; i += 3)
		file[(data[i] | (size_t)data[i + 1] << 8) % b->len] ^=
			data[i + 2];
	REQUIRE(ftruncate(fd, 0) == 0 &&
		pwrite(fd, file, len, 0) == (ssize_t)len);
	free(file);
	rc = parload__h5index_read(fd, &b->w, &x);
	REQUIRE(rc == 0 || (rc == 1 && !x.c && x.n == 0));
	if (rc == 0)
		check_table(&x, &b->w, len);
	/* Untouched, every chunk is there. */
	if (size <= 2 && len == b->len)
		REQUIRE(rc == 0 && x.n == grid(&b->w));
	parload__h5index_free(&x);
	return 0;
}

/* ---- seeds ---- */

static void write_seeds(const char *dir)
{
	/* Each file untouched, cut short, and with a byte of its header
	 * and of its B-tree flipped. */
	static const uint8_t seeds[][8] = {
		{ 0, 0 }, { 1, 0 }, { 2, 0 },
		{ 0, 200 }, { 1, 128 },
		{ 0, 0, 0x20, 0x03, 0xff, 0x08, 0x04, 0x01 },
		{ 1, 0, 0x10, 0x02, 0x80, 0x40, 0x05, 0x02 },
	};
	char path[4096];

	fuzz_seed_dir(dir);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		const size_t n = seeds[i][2] || seeds[i][3] ? 8 : 2;
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
