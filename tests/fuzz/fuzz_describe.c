/*
 * fuzz_describe.c - libFuzzer harness for the whole describe of a TIFF
 * or an HDF5 file: parload_describe (load.c), as `parload FILE` and
 * `parload info` begin, with the whole library compiled in: the source
 * opened, its kind, the container's metadata (tiff.c's walks, libtiff's;
 * hdf5_native.c, else hdf5.c through libhdf5: which dataset, its frames
 * and angles, its chunks by hdf5_index.c or libhdf5) and the views
 * fitted to the file.  Each input is a file (fuzz_files.h: a TIFF where
 * it starts with II or MM, else HDF5), described for its projections
 * and, an HDF5 file, for its flats or darks as its size modulo 3 picks,
 * a file cut short allowed for every other size, with
 * PARLOAD_SRC_CONFINE (an external link stays in the input's directory).
 * It must succeed with a description of its format that
 * parload_desc_check takes, of at least one view, or fail with a code of
 * the table and a message naming the file, every libhdf5 object closed
 * again.
 *
 * Nothing may allocate far beyond what a file of at most max_len bytes
 * describes: `make fuzz` runs it with a malloc limit (Makefile.am), so a
 * count read from the file that sizes an allocation before it is checked
 * is a finding, not an allocation that happens to succeed.
 *
 * An HDF5 input libhdf5 crashes on by itself (not parload's: libhdf5
 * 1.10 on damaged files) is skipped, saying so (fuzz_files.h).
 *
 * Seeds: `fuzz_describe -write_seeds=DIR` writes small HDF5 files
 * (DXchange contiguous, chunked with shuffle and deflate in 1.8's format,
 * NXtomo with image_key and angles, a user block, a deeper B-tree, a 2-D
 * dataset) and TIFFs (fuzz_files.h), then exits.
 */
#include "config.h"

#include "fuzz_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The file at path described for frames fr, a file cut short allowed or
 * not. */
static void describe(const char *path, bool tiff, parload_frames fr,
		     int allow_truncated)
{
	parload_source src;
	parload_desc d;
	parload_error err;
	int rc;

	parload_source_init(&src);
	src.path = path;
	src.frames = fr;
	src.flags = PARLOAD_SRC_CONFINE;
	rc = parload_describe(&src, allow_truncated, &d, &err);
	fuzz_closed();
	if (rc == 0) {
		parload_desc copy = d;

		REQUIRE(d.format == (tiff ? PARLOAD_FORMAT_TIFF :
					    PARLOAD_FORMAT_HDF5));
		REQUIRE(d.count >= 1 && d.width >= 1 && d.height >= 1);
		REQUIRE(parload_desc_check(&copy, &err) == 0);
	} else {
		REQUIRE(rc < 0 && err.code == rc && parload_strerror(rc));
		if (!strstr(err.message, fuzz_dir)) {
			fprintf(stderr, "fails without naming the file: %s\n",
				err.message);
			REQUIRE(strstr(err.message, fuzz_dir));
		}
	}
}

static size_t input_size;

/* The projections (what `parload FILE` reads), then, for an HDF5 file,
 * the flats or the darks as its size picks. */
static void describe_all(const char *path)
{
	const bool tiff = path == fuzz_tif;
	const int cut = (int)(input_size / 3 % 2);

	describe(path, tiff, PARLOAD_FRAMES_PROJECTIONS, cut);
	if (!tiff && input_size % 3)
		describe(path, tiff, (parload_frames)(input_size % 3), cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_put(data, size);

	input_size = size;
	if (path == fuzz_tif || fuzz_not_libhdf5s(describe_all, path))
		describe_all(path);
	return 0;
}

static void write_seeds(const char *dir)
{
	printf("fuzz_describe: wrote %zu seeds to %s\n",
	       fuzz_write_seeds(dir), dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_seeds_option(*argc, *argv, write_seeds);
	fuzz_files_init("fuzz_describe");
	return 0;
}
