/*
 * fuzz_tiff.c - libFuzzer harness for the TIFF reader (src/formats/tiff/tiff.c): each
 * input is a file's bytes, walked by the direct walk alone
 * (src/formats/tiff/tiff_walk.c, PARLOAD_TIFF=native: a plain table or an error),
 * then read by parload__tiff_read as a TIFF source (auto: libtiff's walk
 * where the direct walk cannot take it).
 * It must fail with a code of the table, or succeed with a table that
 * holds: views as the description counts them, per_view strips of rows
 * covering the height (rows past it only in tiles), every strip in file 0, an uncompressed strip's
 * rows inside the file; and the decoder of a compressed or tiled table
 * decodes every strip or fails with a code, never a crash.
 *
 * Seeds: `fuzz_tiff -write_seeds=DIR` writes small TIFFs with libtiff
 * (strips, both byte orders, BigTIFF, LZW, deflate with a predictor,
 * tiles), then exits.
 */
#include "config.h"

#include <stdint.h>
#include <tiffio.h>
#include <unistd.h>

#include "../../src/internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char input[64];

/* Every strip of a CODEC_CUSTOM table through its decoder (small tables
 * only: the fuzzer's time goes to the metadata). */
static void decode_all(const parload__container *c)
{
	const parload__strips *t = &c->strips;
	const size_t len = parload__strip_size(t, &c->desc);
	unsigned char *out;
	void *state = NULL;
	parload_error err;

	if (len > (1u << 20) || t->views * t->per_view > 256)
		return;
	out = malloc(len ? len : 1);
	REQUIRE(out);
	if (t->decoder->open(t, &state, &err) == 0) {
		for (uint64_t i = 0; i < t->views * t->per_view; i++) {
			const int rc = t->decoder->decode(state, t, i, out, len,
							  &err);

			REQUIRE(rc == 0 || (rc < 0 && err.code == rc));
		}
		t->decoder->close(state);
	}
	free(out);
}

static void check_table(const parload__container *c, uint64_t size)
{
	const parload__strips *t = &c->strips;
	const parload_desc *d = &c->desc;

	REQUIRE(d->format == PARLOAD_FORMAT_TIFF && c->n == 1);
	REQUIRE(d->count == t->views && t->views >= 1);
	/* Tiles may be taller than the page: their rows past it are not
	 * delivered. */
	REQUIRE(t->rows >= 1 &&
		(t->rows <= d->height || t->decoder != NULL));
	REQUIRE(t->per_view == (d->height + t->rows - 1) / t->rows);
	REQUIRE(d->row_size == (uint64_t)d->width * d->bytes_per_pixel);
	REQUIRE(t->added == t->views * t->per_view);
	for (uint64_t i = 0; i < t->views * t->per_view; i++) {
		const parload__strip xs = parload__strip_of(t, i, NULL);
		const parload__strip *x = &xs;
		const uint64_t y = (i % t->per_view) * t->rows;
		const uint64_t rows = d->height - y < t->rows ? d->height - y :
								t->rows;

		REQUIRE(x->file == 0);
		if (parload__strips_plain(t))
			REQUIRE(x->off <= size &&
				rows * d->row_size <= size - x->off &&
				x->bytes >= rows * d->row_size);
	}
	if (t->decoder != NULL)
		decode_all(c);
	else
		REQUIRE(parload__strips_plain(t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parload_source src;
	parload__container c;
	parload_error err;
	FILE *f;
	int rc;

	if (!input[0])
		snprintf(input, sizeof(input), "/tmp/fuzz_tiff.%d.tif",
			 (int)getpid());
	f = fopen(input, "wb");
	REQUIRE(f && fwrite(data, 1, size, f) == size && fclose(f) == 0);
	memset(&src, 0, sizeof(src)); /* parload_source_init's, without load.c */
	src.fd = -1;
	src.path = input;
	/* The direct walk alone (PARLOAD_TIFF=native): a plain table, or an
	 * error (one that says why libtiff is needed among them). */
	REQUIRE(setenv("PARLOAD_TIFF", "native", 1) == 0);
	rc = parload__tiff_read(&src, &c, &err);
	REQUIRE(unsetenv("PARLOAD_TIFF") == 0);
	if (rc == 0) {
		REQUIRE(parload__strips_plain(&c.strips));
		REQUIRE(c.fallback_files == 0);
		check_table(&c, size);
		parload__container_free(&c);
	} else {
		REQUIRE(rc < 0 && err.code == rc && parload_strerror(rc));
	}
	rc = parload__tiff_read(&src, &c, &err);
	if (rc == 0) {
		check_table(&c, size);
		parload__container_free(&c);
	} else {
		REQUIRE(rc < 0 && err.code == rc && parload_strerror(rc));
	}
	unlink(input);
	return 0;
}

/* ---- seeds ---- */

static const struct seed {
	const char *name, *mode;
	uint16_t bits, comp, pred;
	uint32_t w, h, rps, tile, pages;
} seeds[] = {
	{ "strips-le", "w", 16, COMPRESSION_NONE, 0, 13, 9, 4, 0, 3 },
	{ "strips-be", "wb", 16, COMPRESSION_NONE, 0, 7, 5, 1, 0, 2 },
	{ "bigtiff", "w8", 32, COMPRESSION_NONE, 0, 6, 6, 6, 0, 2 },
	{ "lzw", "w", 8, COMPRESSION_LZW, 0, 20, 10, 3, 0, 2 },
	{ "deflate-pred", "w", 16, COMPRESSION_ADOBE_DEFLATE, 2, 9, 8, 8, 0, 2 },
	{ "tiles", "w", 16, COMPRESSION_NONE, 0, 20, 18, 0, 16, 1 },
	/* One strip a page: directories alike, a run of them. */
	{ "one-strip", "w", 16, COMPRESSION_NONE, 0, 4, 3, 3, 0, 8 },
};

/* parload's own writer (tifffile's layout: the directories back to back
 * after the pixels, a run), classic and BigTIFF. */
static void write_own(const char *dir, bool big)
{
	uint16_t px[10 * 12] = { 0 };
	const parload_stack st = { .pixels = px,
				   .pixel_type = PARLOAD_PIXEL_U16, .n = 10,
				   .rows = 3, .cols = 4 };
	char path[4096];
	parload_error err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/own%s.tif", dir, big ? "-big" : "");
	REQUIRE((f = fopen(path, "wb")) && fclose(f) == 0);
	REQUIRE(parload__tiff_save_as(path, path, &st, big, &err) == 0);
}

static void write_seed(const char *path, const struct seed *s)
{
	unsigned char row[64 * 4] = { 0 };
	TIFF *tif = TIFFOpen(path, s->mode);

	REQUIRE(tif);
	for (uint32_t k = 0; k < s->pages; k++) {
		TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, s->w);
		TIFFSetField(tif, TIFFTAG_IMAGELENGTH, s->h);
		TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, s->bits);
		TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
		TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
		TIFFSetField(tif, TIFFTAG_COMPRESSION, s->comp);
		if (s->pred)
			TIFFSetField(tif, TIFFTAG_PREDICTOR, s->pred);
		if (s->tile) {
			static unsigned char t[16 * 16 * 2];

			TIFFSetField(tif, TIFFTAG_TILEWIDTH, s->tile);
			TIFFSetField(tif, TIFFTAG_TILELENGTH, s->tile);
			for (uint32_t y = 0; y < s->h; y += s->tile)
				for (uint32_t x = 0; x < s->w; x += s->tile) {
					memset(t, (int)(x + y), sizeof(t));
					TIFFWriteTile(tif, t, x, y, 0, 0);
				}
		} else {
			TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, s->rps);
			for (uint32_t y = 0; y < s->h; y++) {
				memset(row, (int)(y * 7 + k), sizeof(row));
				TIFFWriteScanline(tif, row, y, 0);
			}
		}
		TIFFWriteDirectory(tif);
	}
	TIFFClose(tif);
}

static void write_seeds(const char *dir)
{
	char path[4096];

	fuzz_seed_dir(dir);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.tif", dir, seeds[i].name);
		write_seed(path, &seeds[i]);
	}
	write_own(dir, false);
	write_own(dir, true);
	printf("fuzz_tiff: wrote %zu seeds to %s\n",
	       sizeof(seeds) / sizeof(seeds[0]) + 2, dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_seeds_option(*argc, *argv, write_seeds);
	return 0;
}
