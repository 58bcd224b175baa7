/*
 * gen.c - the deterministic test stream (see gen.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gen.h"

#define PGEN_MAX(a, b) ((a) > (b) ? (a) : (b))

/* splitmix64: small, fast, and good enough to make every byte matter. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void pgen_view_header(uint64_t seed, uint64_t i, uint64_t view_count,
			     parload_view_header *vh)
{
	memset(vh, 0, sizeof(*vh));
	vh->view_index = i;
	vh->timestamp_ns = (mix(seed) & 0xffffffffull) + i * 1000003ull;
	vh->angle_deg = view_count ? (float)(360.0 * (double)i / (double)view_count) : 0.0f;
}

void pgen_payload(uint64_t seed, uint64_t i, void *buf, size_t len)
{
	unsigned char *p = buf;
	uint64_t state = mix(seed ^ mix(i + 1));
	size_t n = 0;

	for (; n + 8 <= len; n += 8) {
		uint64_t w = mix(state + n);
		memcpy(p + n, &w, 8);
	}
	if (n < len) {
		uint64_t w = mix(state + n);
		memcpy(p + n, &w, len - n);
	}
}

int pgen_write(const char *path, const parload_file_header *h,
		      uint64_t seed, parload_error *err)
{
	parload_writer *w;
	void *buf;
	int rc;

	if (h->payload_size > SIZE_MAX)
		return PARLOAD_EOVERFLOW;
	buf = malloc(h->payload_size ? h->payload_size : 1);
	if (!buf)
		return PARLOAD_ENOMEM;
	rc = parload_writer_open(&w, path, h, err);
	for (uint64_t i = 0; rc == 0 && i < h->view_count; i++) {
		parload_view_header vh;

		pgen_view_header(seed, i, h->view_count, &vh);
		pgen_payload(seed, i, buf, h->payload_size);
		rc = parload_writer_add(w, &vh, buf, err);
	}
	if (rc == 0)
		rc = parload_writer_close(w, err);
	else if (w)
		parload_writer_close(w, NULL);
	free(buf);
	return rc;
}

/* Whether output view k of ds (file view i) holds view i's rows and
 * columns of the selection s; payload is scratch of payload_size bytes. */
static bool pgen_view_matches(const parload_dataset *ds,
			      const parload_shape *s, uint64_t k, uint64_t i,
			      uint64_t seed, unsigned char *payload)
{
	const parload_desc *h = &ds->desc;
	const size_t bpp = s->bytes_per_pixel, line = (size_t)s->cols * bpp;
	const unsigned char *pix = ds->pixels;

	pgen_payload(seed, i, payload, h->payload_size);
	for (uint64_t r = 0; r < s->rows; r++) {
		/* pixels[k][r] (views) or pixels[r][k] (sinograms) */
		const uint64_t at = s->layout == PARLOAD_LAYOUT_SINOGRAMS ?
					    r * s->views + k :
					    k * s->rows + r;
		const unsigned char *want =
			payload + ((s->row_start + r) * (uint64_t)h->width +
				   s->col_start) * bpp;

		if (memcmp(want, pix + at * line, line) != 0)
			return false;
	}
	return true;
}

bool pgen_verify_shape(const parload_dataset *ds, const parload_shape *s,
		       uint64_t seed, uint64_t *bad_view, bool *bad_header)
{
	const parload_desc *h = &ds->desc;
	unsigned char *buf = malloc(h->payload_size ? h->payload_size : 1);
	/* The angles were written for the views the header promised, more
	 * than were loaded when a truncated file was allowed. */
	const uint64_t written = PGEN_MAX(ds->stats.declared_views,
					  h->count);
	/* The stream's own view headers: typed (parload's format), or the
	 * raw bytes of a layout that reads them as such. */
	const bool raw = h->format == PARLOAD_FORMAT_RAW;
	const bool headers = !raw || (ds->raw_headers &&
				      h->header == sizeof(parload_view_header));
	bool ok = buf != NULL;

	*bad_view = PARLOAD_NONE;
	*bad_header = false;
	for (uint64_t k = 0; ok && k < s->views; k++) {
		const uint64_t i = s->view_start + k * s->view_step;
		parload_view_header vh;
		parload_view_header got = ds->headers[k];

		if (raw && headers)
			memcpy(&got, ds->raw_headers + k * sizeof(got),
			       sizeof(got));
		pgen_view_header(seed, i, written, &vh);
		/* The CRC is the writer's; compare it only where the file has
		 * none, where it must be 0. */
		if ((h->flags & PARLOAD_DESC_CRC32C) || raw)
			got.crc32c = vh.crc32c = 0;
		*bad_header = headers && memcmp(&vh, &got, sizeof(vh)) != 0;
		ok = !*bad_header &&
		     pgen_view_matches(ds, s, k, i, seed, buf);
		if (!ok)
			*bad_view = i;
	}
	free(buf);
	return ok;
}

bool pgen_verify(const parload_dataset *ds, uint64_t seed,
		 uint64_t *bad_view, bool *bad_header)
{
	const parload_desc *h = &ds->desc;
	const parload_shape whole = {
		.views = h->count,
		.view_step = 1,
		.rows = h->height,
		.cols = h->width,
		.layout = PARLOAD_LAYOUT_VIEWS,
		.bytes_per_pixel = h->bytes_per_pixel,
		.view_bytes = h->payload_size,
	};

	return pgen_verify_shape(ds, &whole, seed, bad_view, bad_header);
}
