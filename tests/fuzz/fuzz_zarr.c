/*
 * fuzz_zarr.c - libFuzzer harness for a Zarr store's metadata and shard
 * index as parload_describe and a load read them (zarr_meta.c, zarr.c,
 * chunks.c, the codec rows), with the whole library compiled in.  An
 * input is a store of one array: its first byte says v2 (even: .zarray)
 * or v3 (odd: zarr.json), the metadata text runs to the first NUL byte,
 * and the bytes after it are the file of a 3-D grid's first chunk
 * (0.0.0, 0/0/0, c/0/0/0 or c.0.0.0: the same bytes under each key the
 * metadata may name; a shard for a sharded v3 array).  Every other chunk
 * is missing: the fill value.  It must be described as a Zarr array
 * parload_desc_check takes and loaded, or fail with a code of the table
 * and a message naming the store.  As fuzz_describe, an allocation far
 * beyond what so small a store describes is a finding (fuzz_files.h).
 *
 * Seeds: `fuzz_zarr -write_seeds=DIR` writes v2 and v3 stores of each
 * kind the driver reads: plain, Zstd, gzip, crc32c, sharded with the
 * index at either end, a group with an OME-Zarr image.
 */
#include "config.h"

#include "fuzz_files.h"
#include "../../src/internal.h"

#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char store[128];

static const char *const keys[] = { "0.0.0", "0/0/0", "c/0/0/0",
				    "c.0.0.0" };

static void put(const char *name, const void *data, size_t size)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0 && write(fd, data, size) == (ssize_t)size &&
		close(fd) == 0);
}

static void failed_well(int rc, const parload_error *err)
{
	REQUIRE(rc < 0 && err->code == rc && parload_strerror(rc));
	if (!strstr(err->message, fuzz_dir)) {
		fprintf(stderr, "fails without naming the store: %s\n",
			err->message);
		REQUIRE(strstr(err->message, fuzz_dir));
	}
}

/* The store described, then loaded whole on one thread. */
static void describe_and_load(void)
{
	parload_source src;
	parload_options o;
	parload_dataset ds;
	parload_error err;
	parload_desc d;
	int rc;

	parload_source_init(&src);
	src.path = store;
	rc = parload_describe(&src, 0, &d, &err);
	if (rc) {
		failed_well(rc, &err);
		return;
	}
	REQUIRE(d.format == PARLOAD_FORMAT_ZARR && d.count >= 1);
	REQUIRE(parload_desc_check(&d, &err) == 0);
	/* Small arrays only: a load fills the whole array. */
	if (d.count * d.payload_size > ((uint64_t)16 << 20))
		return;
	parload_options_init(&o);
	o.threads = 1;
	o.error = &err;
	rc = parload_load(store, &o, &ds);
	if (rc) {
		failed_well(rc, &err);
		return;
	}
	REQUIRE(ds.shape.views == d.count);
	parload_dataset_free(&ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = size ? memchr(data + 1, 0, size - 1) : NULL;
	const size_t meta = nul ? (size_t)(nul - data - 1) :
				  (size ? size - 1 : 0);
	const size_t at = nul ? (size_t)(nul - data) + 1 : size;
	char path[256];

	if (size == 0)
		return 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", store, keys[i]);
		(void)unlink(path);
	}
	snprintf(path, sizeof(path), "%s/.zarray", store);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/zarr.json", store);
	(void)unlink(path);
	put(data[0] & 1 ? "zarr.json" : ".zarray", data + 1, meta);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		put(keys[i], data + at, size - at);
	fuzz_in_input = true;
	describe_and_load();
	fuzz_in_input = false;
	return 0;
}

/* ---- seeds ---- */

static void seed(const char *dir, int k, bool v3, const char *meta,
		 const void *chunk, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02d", dir, k);
	REQUIRE((f = fopen(path, "wb")) != NULL);
	REQUIRE(fputc(v3 ? 1 : 0, f) != EOF);
	REQUIRE(fwrite(meta, 1, strlen(meta) + 1, f) == strlen(meta) + 1);
	REQUIRE(fwrite(chunk, 1, n, f) == n);
	REQUIRE(fclose(f) == 0);
}

static void le64(unsigned char *p, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* A shard of two 1 x 4 x 4 u8 chunks (the second empty when hole), its
 * index (with its CRC-32C) at the start or the end: *n bytes. */
static size_t shard(unsigned char *b, bool first, bool hole)
{
	unsigned char idx[36];
	const size_t data = hole ? 16 : 32, base = first ? sizeof(idx) : 0;
	uint32_t crc;

	for (size_t i = 0; i < data; i++)
		b[base + i] = (unsigned char)(i * 3);
	le64(idx, base);
	le64(idx + 8, 16);
	le64(idx + 16, hole ? UINT64_MAX : base + 16);
	le64(idx + 24, hole ? UINT64_MAX : 16);
	crc = parload_crc32c(0, idx, 32);
	for (int k = 0; k < 4; k++)
		idx[32 + k] = (unsigned char)(crc >> (8 * k));
	memcpy(first ? b : b + data, idx, sizeof(idx));
	return data + sizeof(idx);
}

#define V2(dtype, comp, fill)                                                 \
	"{\"zarr_format\": 2, \"shape\": [3, 4, 4], \"chunks\": [2, 4, 4], "   \
	"\"dtype\": \"" dtype "\", \"compressor\": " comp ", \"fill_value\": " \
	fill ", \"order\": \"C\", \"filters\": null}"
#define V3(codecs)                                                            \
	"{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [3, 4, 4], " \
	"\"data_type\": \"uint8\", \"chunk_grid\": {\"name\": \"regular\", "   \
	"\"configuration\": {\"chunk_shape\": [2, 4, 4]}}, "                    \
	"\"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 9, "  \
	"\"codecs\": " codecs ", \"attributes\": {\"angles\": [0, 1, 2]}}"
#define SHARDING(where)                                                       \
	"[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": " \
	"[1, 4, 4], \"codecs\": [{\"name\": \"bytes\"}], \"index_codecs\": "    \
	"[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}, " \
	"{\"name\": \"crc32c\"}], \"index_location\": \"" where "\"}}]"

static void write_seeds(const char *dir)
{
	unsigned char b[128], c[64];
	uint32_t crc;

	fuzz_seed_dir(dir);
	for (size_t i = 0; i < 64; i++)
		c[i] = (unsigned char)(i * 5);
	seed(dir, 0, false, V2("<u2", "null", "0"), c, 64);
	seed(dir, 1, false, V2(">f4", "null", "\"NaN\""), c, 64);
	seed(dir, 2, false, V2("|u1", "{\"id\": \"zlib\", \"level\": 1}",
			       "3"), c, 32);
	seed(dir, 3, true, V3("[{\"name\": \"bytes\"}]"), c, 32);
	memcpy(b, c, 32);
	crc = parload_crc32c(0, b, 32);
	for (int k = 0; k < 4; k++)
		b[32 + k] = (unsigned char)(crc >> (8 * k));
	seed(dir, 4, true, V3("[{\"name\": \"bytes\"}, {\"name\": "
			      "\"crc32c\"}]"), b, 36);
	seed(dir, 5, true, V3(SHARDING("end")), b, shard(b, false, false));
	seed(dir, 6, true, V3(SHARDING("start")), b, shard(b, true, true));
	seed(dir, 7, true, V3("[{\"name\": \"transpose\", \"configuration\": "
			      "{\"order\": [0, 1, 2]}}, {\"name\": \"bytes\"}, "
			      "{\"name\": \"gzip\", \"configuration\": "
			      "{\"level\": 1}}]"), c, 32);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_files_init("fuzz_zarr");
	snprintf(store, sizeof(store), "%s/in.zarr", fuzz_dir);
	REQUIRE(mkdir(store, 0700) == 0);
	for (size_t i = 0; i < 5; i++) {
		static const char *const dirs[] = { "c", "c/0", "c/0/0", "0",
						    "0/0" };
		char c[160];

		snprintf(c, sizeof(c), "%s/%s", store, dirs[i]);
		REQUIRE(mkdir(c, 0700) == 0);
	}
	fuzz_seeds_option(*argc, *argv, write_seeds);
	return 0;
}
