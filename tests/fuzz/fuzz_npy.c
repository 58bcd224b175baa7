/*
 * fuzz_npy.c - libFuzzer harness for NumPy's .npy (src/formats/npy.c): each
 * input is a whole file, given to the header's parser
 * (parload__npy_parse) and then, written as a file, to parload_describe
 * and a whole load, as `parload FILE` runs them (the driver found by the
 * file's first bytes, the layout fitted to the file, a cut file allowed
 * for every other size).
 *
 * Each must succeed with a description parload_desc_check takes, its
 * data starting inside the file (and, described, every view it counts
 * inside it), a load of little-endian pixels equal to the file's bytes;
 * or fail with a code of the table and a message naming the file.
 * Nothing may allocate beyond what the input describes (fuzz_files.h's
 * allocation limit): every count in the header is checked against the
 * file's size before it sizes anything.
 *
 * Seeds: `fuzz_npy -write_seeds=DIR` writes .npy files as numpy.save
 * writes them (versions 1.0 to 3.0, 2-D and 3-D, several types and both
 * byte orders, Fortran order, a file cut short), then exits.
 */
#include "config.h"

#include "fuzz_files.h"
#include "../../src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char npy_path[128];

static void failed_well(int rc, const parload_error *err)
{
	REQUIRE(rc < 0 && err->code == rc && parload_strerror(rc));
	if (!strstr(err->message, fuzz_dir)) {
		fprintf(stderr, "fails without naming the file: %s\n",
			err->message);
		REQUIRE(strstr(err->message, fuzz_dir));
	}
}

/* The parser on the bytes alone. */
static void parse(const uint8_t *data, size_t size)
{
	parload_error err;
	parload_desc d;
	int rc = parload__npy_parse(data, size, size, npy_path, &d, &err);

	if (rc) {
		failed_well(rc, &err);
		return;
	}
	REQUIRE(d.format == PARLOAD_FORMAT_RAW && d.offset <= size);
	REQUIRE(d.count >= 1 && d.width >= 1 && d.height >= 1);
	REQUIRE(parload_desc_check(&d, &err) == 0);
}

/* A whole load of the file described as d: little-endian pixels are the
 * file's bytes. */
static void load(const uint8_t *data, size_t size, const parload_desc *d,
		 int allow_truncated)
{
	parload_options o;
	parload_dataset ds;
	parload_error err;
	int rc;

	parload_options_init(&o);
	o.threads = 1;
	o.flags = allow_truncated ? PARLOAD_OPT_ALLOW_TRUNCATED : 0;
	o.error = &err;
	rc = parload_load(npy_path, &o, &ds);
	if (rc) {
		failed_well(rc, &err);
		return;
	}
	REQUIRE(ds.shape.views == d->count);
	if (d->count &&
	    (d->encoding == PARLOAD_ENC_LE || d->bytes_per_pixel == 1))
		REQUIRE(memcmp(ds.pixels, data + d->offset,
			       d->count * d->payload_size) == 0);
	(void)size;
	parload_dataset_free(&ds);
}

/* The file: described, fitted to its size, loaded. */
static void describe(const uint8_t *data, size_t size)
{
	const int cut = (int)(size % 2);
	parload_source src;
	parload_error err;
	parload_desc d;
	int rc;

	parload_source_init(&src);
	src.path = npy_path;
	rc = parload_describe(&src, cut, &d, &err);
	if (rc) {
		failed_well(rc, &err);
		return;
	}
	/* A cut file allowed keeps its complete views, maybe none. */
	REQUIRE(d.format == PARLOAD_FORMAT_RAW && (d.count >= 1 || cut));
	REQUIRE(d.offset + d.count * d.record_size <= size);
	load(data, size, &d, cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const int fd = open(npy_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0600);

	REQUIRE(fd >= 0 && write(fd, data, size) == (ssize_t)size &&
		close(fd) == 0);
	fuzz_in_input = true;
	parse(data, size);
	/* Only what the driver would take: its magic, then whatever. */
	if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0)
		describe(data, size);
	fuzz_in_input = false;
	return 0;
}

/* ---- seeds ---- */

static void seed(const char *dir, int k, int major, const char *descr,
		 const char *shape, const char *order, size_t data, size_t cut)
{
	unsigned char b[1024] = { 0 };
	const size_t pre = major == 1 ? 10 : 12;
	char dict[200], path[512];
	size_t n, len;
	FILE *f;

	n = (size_t)snprintf(dict, sizeof(dict),
			     "{'descr': '%s', 'fortran_order': %s, "
			     "'shape': %s, }", descr, order, shape);
	len = (pre + n + 1 + 63) / 64 * 64;
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major;
	b[8] = (unsigned char)((len - pre) & 0xff);
	b[9] = (unsigned char)((len - pre) >> 8);
	memcpy(b + pre, dict, n);
	memset(b + pre + n, ' ', len - pre - n - 1);
	b[len - 1] = '\n';
	for (size_t i = 0; i < data; i++)
		b[len + i] = (unsigned char)(i * 7);
	snprintf(path, sizeof(path), "%s/seed-%02d.npy", dir, k);
	REQUIRE((f = fopen(path, "wb")) != NULL);
	REQUIRE(fwrite(b, 1, len + data - cut, f) == len + data - cut);
	REQUIRE(fclose(f) == 0);
}

static void write_seeds(const char *dir)
{
	fuzz_seed_dir(dir);
	seed(dir, 0, 1, "<u2", "(2, 3, 4)", "False", 48, 0);
	seed(dir, 1, 2, ">f4", "(3, 4)", "False", 48, 0);
	seed(dir, 2, 3, "|u1", "(5, 2, 3)", "False", 30, 0);
	seed(dir, 3, 1, "<f8", "(1, 2, 2)", "False", 32, 0);
	seed(dir, 4, 1, ">i2", "(4, 2, 2)", "False", 32, 7);
	seed(dir, 5, 1, "<u2", "(2, 3)", "True", 12, 0);
	seed(dir, 6, 1, "<i4", "(2, 2, 2,)", "False", 32, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_files_init("fuzz_npy");
	snprintf(npy_path, sizeof(npy_path), "%s/in.npy", fuzz_dir);
	fuzz_seeds_option(*argc, *argv, write_seeds);
	return 0;
}
