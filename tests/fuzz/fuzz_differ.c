/*
 * fuzz_differ.c - libFuzzer differential harness: parload's own readers
 * against libtiff's and libhdf5's on the same file (fuzz_files.h: a TIFF
 * where it starts with II or MM, else HDF5), the whole library compiled
 * in.  Any disagreement stops the run, saying what differs:
 *
 * - TIFF: the direct walk (tiff_walk.c) against libtiff's walk
 *   (tiff_libtiff.c).  Where the direct walk takes the file (it answers
 *   "fall back" for what it leaves to libtiff), libtiff's must take it
 *   too, with the same description, and the pixels read through both
 *   tables must be the same; and they must be what libtiff itself
 *   decodes, page by page (TIFFReadEncodedStrip), for every view that
 *   has a directory of its own (an ImageJ stack in one directory: its
 *   first image).
 * - HDF5, for each dataset the seeds name: the native reader
 *   (hdf5_native.c: superblock, object headers, its own chunk index;
 *   PARLOAD_HDF5=native) against the reader through libhdf5 alone
 *   (hdf5.c, H5Dget_chunk_info for each chunk; PARLOAD_HDF5=libhdf5):
 *   where the native one takes the file, the libhdf5 one must too, with
 *   the same description and angles and the same pixels; the pixels of
 *   the libhdf5 one's table against what libhdf5 itself reads (H5Dread),
 *   frame by frame; and the default reader's (the native one, else
 *   libhdf5's with the chunk index as hdf5_index.c reads it, the version
 *   1 B-tree, where it can) against the libhdf5 one's: the same
 *   description, angles and pixels.
 *
 * An HDF5 input libhdf5 crashes on by itself is skipped, saying so
 * (fuzz_files.h).  Pixels are compared where the views take at most 1 MiB (PIXELS_CAP).
 * The seeds are fuzz_describe's (fuzz_files.h).
 */
#include "config.h"

#include "fuzz_files.h"
#include "../../src/formats/tiff/tiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define PIXELS_CAP ((size_t)1 << 20)

#define DISAGREE(...)                                                          \
	do {                                                                   \
		fprintf(stderr, "fuzz_differ: the readers disagree: ");        \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		abort();                                                       \
	} while (0)

static void same_desc(const parload_desc *a, const parload_desc *b,
		      const char *what)
{
	if (a->count != b->count || a->width != b->width ||
	    a->height != b->height || a->pixel_type != b->pixel_type)
		DISAGREE("%s: %" PRIu64 " views %" PRIu32 " x %" PRIu32
			 " %s, against %" PRIu64 " views %" PRIu32 " x %"
			 PRIu32 " %s", what, a->count, a->width, a->height,
			 parload_pixel_name(a->pixel_type), b->count,
			 b->width, b->height,
			 parload_pixel_name(b->pixel_type));
}

/* The pixels through both tables alike (where they take at most
 * PIXELS_CAP); a's pixels kept in *keep (NULL where not read). */
static void same_pixels(const parload__container *a,
			const parload__container *b, const char *what,
			unsigned char **keep, size_t *keep_len)
{
	parload_error ea, eb;
	size_t la, lb;
	unsigned char *pa = fuzz_pixels(a, PIXELS_CAP, &la, &ea);
	unsigned char *pb = fuzz_pixels(b, PIXELS_CAP, &lb, &eb);

	if (la == 1 && lb == 1)
		;
	else if (la == 1 || lb == 1)
		DISAGREE("%s: %s reads its pixels, %s fails: %s", what,
			 la == 1 ? "the second" : "the first",
			 la == 1 ? "the first" : "the second",
			 la == 1 ? ea.message : eb.message);
	else if (la != lb || (pa && memcmp(pa, pb, la) != 0))
		DISAGREE("%s: the pixels differ", what);
	free(pb);
	*keep = pa;
	*keep_len = pa ? la : 0;
}

/* src read by fn with the back-end backend picked (var: PARLOAD_TIFF or
 * PARLOAD_HDF5), the choice every program has. */
static int read_by(const char *var, const char *backend,
		   int (*fn)(const parload_source *, parload__container *,
			     parload_error *),
		   const parload_source *src, parload__container *c,
		   parload_error *err)
{
	int rc;

	REQUIRE(setenv(var, backend, 1) == 0);
	rc = fn(src, c, err);
	REQUIRE(unsetenv(var) == 0);
	return rc;
}

/* ---- TIFF ---- */

/* Whether libtiff's own decoding of every page of path is what px holds
 * for its view (views of view bytes): each page a view, but for an ImageJ
 * stack in one directory (views > 1, one directory), its first. */
static void libtiff_pixels(const char *path, const unsigned char *px,
			   uint64_t views, size_t view)
{
	TIFF *tif = TIFFOpen(path, "rm");
	unsigned char *buf = malloc(view + 1);
	uint64_t v = 0;

	REQUIRE(buf);
	if (!tif)
		DISAGREE("TIFF: the walks read %s, TIFFOpen does not", path);
	do {
		const tstrip_t n = TIFFNumberOfStrips(tif);
		size_t at = 0;

		if (v >= views)
			DISAGREE("TIFF: %" PRIu64 " views, libtiff reads "
				 "more pages", views);
		for (tstrip_t s = 0; s < n && at < view; s++) {
			const tmsize_t got = TIFFReadEncodedStrip(
				tif, s, buf + at, (tmsize_t)(view - at));

			if (got <= 0)
				DISAGREE("TIFF: page %" PRIu64 " strip %" PRIu32
					 ": the walks read it, libtiff does "
					 "not decode it", v, s);
			at += (size_t)got;
		}
		if (at != view || memcmp(buf, px + v * view, view) != 0)
			DISAGREE("TIFF: page %" PRIu64 ": libtiff decodes "
				 "other pixels (%zu bytes of %zu) than the "
				 "walks read", v, at, view);
		v++;
	} while (TIFFReadDirectory(tif));
	if (v != views && v != 1)
		DISAGREE("TIFF: %" PRIu64 " views, libtiff reads %" PRIu64
			 " pages", views, v);
	TIFFClose(tif);
	free(buf);
}

static void tiff_differ(const char *path)
{
	parload_source src;
	parload__container a, b;
	parload_error ea, eb;
	unsigned char *px;
	size_t len;
	int ra, rb;

	parload_source_init(&src);
	src.path = path;
	ra = read_by("PARLOAD_TIFF", "native", parload__tiff_read, &src, &a,
		     &ea);
	if (ra != 0)
		return; /* libtiff's alone (or a system error) */
	rb = read_by("PARLOAD_TIFF", "libtiff", parload__tiff_read, &src, &b,
		     &eb);
	if (rb != 0)
		DISAGREE("TIFF: the direct walk reads %" PRIu64 " views, "
			 "libtiff's walk fails: %s", a.desc.count, eb.message);
	same_desc(&a.desc, &b.desc, "TIFF: direct walk, libtiff's walk");
	same_pixels(&a, &b, "TIFF: direct walk, libtiff's walk", &px, &len);
	if (px)
		libtiff_pixels(path, px, a.desc.count,
			       (size_t)(a.desc.row_size * a.desc.height));
	free(px);
	parload__container_free(&a);
	parload__container_free(&b);
}

/* ---- HDF5 ---- */

/* The default reader's table of dataset name (the native reader's, else
 * libhdf5's reader with the chunks parload's parser reads, where it
 * can), c, against the table of libhdf5's calls alone, b: the same
 * description, angles and pixels. */
static void same_chunks(const parload_source *src, const char *name,
			const parload__container *b)
{
	parload__container c;
	parload_error ec;
	unsigned char *px;
	size_t len;
	const int rc = parload__hdf5_read(src, &c, &ec);

	fuzz_closed();
	if (rc != 0)
		return;
	same_desc(&c.desc, &b->desc, "HDF5: default, libhdf5's calls");
	if (!c.strips.angles != !b->strips.angles ||
	    (c.strips.angles &&
	     memcmp(c.strips.angles, b->strips.angles,
		    c.desc.count * sizeof(*c.strips.angles)) != 0))
		DISAGREE("HDF5 %s: default, libhdf5's calls: the angles "
			 "differ", name);
	same_pixels(&c, b, "HDF5: default, libhdf5's calls", &px, &len);
	free(px);
	parload__container_free(&c);
}

/* What libhdf5 itself reads of dataset name (H5Dread, in the host's
 * order) for each view of c: NULL where it takes more than PIXELS_CAP
 * (*len 0) or where libhdf5 does not read it (*len 1). */
static unsigned char *h5_reference(const char *path, const char *name,
				   const parload__container *c, size_t *len)
{
	const parload_desc *d = &c->desc;
	const parload__strips *t = &c->strips;
	const size_t view = (size_t)(d->row_size * d->height);
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t ds = f < 0 ? -1 : H5Dopen2(f, name, H5P_DEFAULT);
	hid_t s = ds < 0 ? -1 : H5Dget_space(ds);
	hid_t ft = ds < 0 ? -1 : H5Dget_type(ds);
	hid_t mt = ft < 0 ? -1 : H5Tget_native_type(ft, H5T_DIR_ASCEND);
	const int rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
	hsize_t dims[3] = { 1, 0, 0 };
	unsigned char *all = NULL, *out = NULL;

	*len = 1;
	if ((rank == 2 || rank == 3) && mt >= 0 &&
	    H5Sget_simple_extent_dims(s, dims + 3 - rank, NULL) == rank) {
		if (dims[2] != d->width || dims[1] != d->height ||
		    H5Tget_size(mt) != d->bytes_per_pixel)
			DISAGREE("HDF5 %s: parload reads %" PRIu64 " x %"
				 PRIu32 " x %" PRIu32 " of %u bytes, libhdf5 "
				 "has %" PRIu64 " x %" PRIu64 " x %" PRIu64
				 " of %zu", name, d->count, d->height,
				 d->width, d->bytes_per_pixel,
				 (uint64_t)dims[0], (uint64_t)dims[1],
				 (uint64_t)dims[2], H5Tget_size(mt));
		if (view && dims[0] <= PIXELS_CAP / view &&
		    t->views <= PIXELS_CAP / view) {
			all = malloc(dims[0] * view + 1);
			out = malloc(t->views * view + 1);
			REQUIRE(all && out);
			*len = H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT,
				       all) < 0 ? 1 : t->views * view;
		} else {
			*len = 0;
		}
	}
	for (uint64_t v = 0; *len > 1 && v < t->views; v++) {
		const uint32_t page =
			parload__strip_of(t, v * t->per_view, NULL).page;

		REQUIRE(page < dims[0]);
		memcpy(out + v * view, all + (size_t)page * view, view);
	}
	free(all);
	if (*len <= 1) {
		free(out);
		out = NULL;
	}
	if (mt >= 0)
		H5Tclose(mt);
	if (ft >= 0)
		H5Tclose(ft);
	if (s >= 0)
		H5Sclose(s);
	if (ds >= 0)
		H5Dclose(ds);
	if (f >= 0)
		H5Fclose(f);
	return out;
}

/* The pixels of c, read through its table, against libhdf5's own
 * reading of dataset name. */
static void libhdf5_pixels(const char *path, const char *name,
			   const parload__container *c)
{
	parload_error err;
	size_t lp, lr;
	unsigned char *px = fuzz_pixels(c, PIXELS_CAP, &lp, &err);
	unsigned char *ref = h5_reference(path, name, c, &lr);

	fuzz_closed();
	if (lp == 0 || lr == 0 || (lp == 1 && lr == 1))
		;
	else if (lp == 1 || lr == 1)
		DISAGREE("HDF5 %s: %s reads its pixels, %s does not%s%s",
			 name, lp == 1 ? "libhdf5" : "parload",
			 lp == 1 ? "parload" : "libhdf5", lp == 1 ? ": " : "",
			 lp == 1 ? err.message : "");
	else if (lp != lr || memcmp(px, ref, lp) != 0)
		DISAGREE("HDF5 %s: parload's pixels are not those libhdf5 "
			 "reads", name);
	free(px);
	free(ref);
}

/* Dataset name of path: the native reader's container against the
 * libhdf5 one's, and the latter's pixels against libhdf5's own reading
 * (H5Dread); its chunk index against libhdf5's. */
static void h5_dataset(const char *path, const char *name)
{
	parload_source src;
	parload__container a, b;
	parload_error ea, eb;
	unsigned char *px;
	size_t len;
	int ra, rb;

	parload_source_init(&src);
	src.path = path;
	src.dataset = name;
	ra = read_by("PARLOAD_HDF5", "native", parload__hdf5_read, &src, &a,
		     &ea);
	rb = read_by("PARLOAD_HDF5", "libhdf5", parload__hdf5_read, &src, &b,
		     &eb);
	fuzz_closed();
	if (ra == 0 && rb != 0)
		DISAGREE("HDF5 %s: the native reader reads %" PRIu64 " views, "
			 "libhdf5's fails: %s", name, a.desc.count,
			 eb.message);
	if (ra == 0) {
		same_desc(&a.desc, &b.desc, "HDF5: native, libhdf5's");
		if (!a.strips.angles != !b.strips.angles ||
		    (a.strips.angles &&
		     memcmp(a.strips.angles, b.strips.angles,
			    a.desc.count * sizeof(*a.strips.angles)) != 0))
			DISAGREE("HDF5 %s: native, libhdf5's: the angles "
				 "differ", name);
		same_pixels(&a, &b, "HDF5: native, libhdf5's", &px, &len);
		free(px);
		parload__container_free(&a);
	}
	if (rb == 0) {
		libhdf5_pixels(path, name, &b);
		same_chunks(&src, name, &b);
		parload__container_free(&b);
	}
}

/* The datasets the seeds hold. */
static void h5_differ(const char *path)
{
	static const char *const names[] = { "/exchange/data", "/scan",
					     "/entry/data/data" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		h5_dataset(path, names[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_put(data, size);

	if (fuzz_is_tiff(data, size))
		tiff_differ(path);
	else if (fuzz_not_libhdf5s(h5_differ, path))
		h5_differ(path);
	return 0;
}

static void write_seeds(const char *dir)
{
	printf("fuzz_differ: wrote %zu seeds to %s\n", fuzz_write_seeds(dir),
	       dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_seeds_option(*argc, *argv, write_seeds);
	fuzz_files_init("fuzz_differ");
	return 0;
}
