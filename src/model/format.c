/*
 * format.c - the stream format: decoding and validating the file header, the
 * geometry that follows from it, and the checks of each view.  Everything
 * here is a pure function over bytes; no I/O.
 */
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

/* ---- pixel types ---- */

static const unsigned pixel_sizes[] = {
#define PIXEL_SIZE_AT(name, value, text, size) [value] = size,
	PARLOAD_PIXEL_MAP(PIXEL_SIZE_AT)
#undef PIXEL_SIZE_AT
};

unsigned parload_pixel_size(int pixel_type)
{
	return pixel_type >= 0 &&
			       pixel_type < (int)(sizeof(pixel_sizes) /
						  sizeof(pixel_sizes[0])) ?
		       pixel_sizes[pixel_type] :
		       0;
}

/* ---- the file header ---- */

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int parload_file_header_init(parload_file_header *h, uint64_t view_count,
			     uint32_t width, uint32_t height, int pixel_type,
			     uint32_t flags)
{
	unsigned bpp = parload_pixel_size(pixel_type);
	uint64_t payload;

	if (!h)
		return PARLOAD_EINVAL;
	memset(h, 0, sizeof(*h));
	if (!bpp)
		return PARLOAD_EPIXTYPE;
	if (!width || !height)
		return PARLOAD_EGEOMETRY;
	if (flags & ~PARLOAD_FLAGS_KNOWN)
		return PARLOAD_EFLAGS;
	/* width * height fits in 64 bits; times at most 8 it may not. */
	payload = (uint64_t)width * height;
	if (payload > UINT64_MAX / bpp)
		return PARLOAD_EOVERFLOW;
	memcpy(h->magic, PARLOAD_MAGIC, sizeof(h->magic));
	h->version_major = PARLOAD_FORMAT_MAJOR;
	h->version_minor = PARLOAD_FORMAT_MINOR;
	h->file_header_size = PARLOAD_FILE_HEADER_SIZE;
	h->view_header_size = PARLOAD_VIEW_HEADER_SIZE;
	h->view_count = view_count;
	h->width = width;
	h->height = height;
	h->pixel_type = (uint16_t)pixel_type;
	h->bytes_per_pixel = (uint16_t)bpp;
	h->flags = flags;
	h->payload_size = payload * bpp;
	{
		uint64_t size;

		if (parload_file_size(h, &size) != 0) {
			memset(h, 0, sizeof(*h));
			return PARLOAD_EOVERFLOW;
		}
	}
	return 0;
}

int parload_file_size(const parload_file_header *h, uint64_t *size)
{
	uint64_t record;

	if (h->payload_size > UINT64_MAX - PARLOAD_VIEW_HEADER_SIZE)
		return PARLOAD_EOVERFLOW;
	record = PARLOAD_VIEW_HEADER_SIZE + h->payload_size;
	if (h->view_count &&
	    record > (UINT64_MAX - PARLOAD_FILE_HEADER_SIZE) / h->view_count)
		return PARLOAD_EOVERFLOW;
	*size = PARLOAD_FILE_HEADER_SIZE + h->view_count * record;
	return 0;
}

/* The fields of a header, decoded one by one: the on-disk layout is
 * little-endian whatever the host. */
static void decode(const unsigned char *b, parload_file_header *h)
{
	memcpy(h->magic, b, 8);
	h->version_major = le16(b + 8);
	h->version_minor = le16(b + 10);
	h->file_header_size = le16(b + 12);
	h->view_header_size = le16(b + 14);
	h->view_count = le64(b + 16);
	h->width = le32(b + 24);
	h->height = le32(b + 28);
	h->pixel_type = le16(b + 32);
	h->bytes_per_pixel = le16(b + 34);
	h->flags = le32(b + 36);
	h->payload_size = le64(b + 40);
	memcpy(h->reserved, b + 48, 16);
}

/* What the file is: the magic, a version this reader knows, the header
 * sizes it knows.  Each failure names the field's byte offset. */
static int check_identity(const parload_file_header *h, const char *path,
			  parload_error *err)
{
	const unsigned char *m = h->magic;

	if (memcmp(m, PARLOAD_MAGIC, 8) != 0)
		return parload__fail(err, PARLOAD_EMAGIC, 0, path, PARLOAD_NONE,
				     0,
				     "bad magic: not a raw image stream "
				     "(found %02x %02x %02x %02x %02x %02x %02x %02x)",
				     m[0], m[1], m[2], m[3], m[4], m[5], m[6],
				     m[7]);
	if (h->version_major != PARLOAD_FORMAT_MAJOR)
		return parload__fail(err, PARLOAD_EVERSION, 0, path,
				     PARLOAD_NONE, 8,
				     "unsupported format version %u.%u "
				     "(this reader knows major version %d)",
				     h->version_major, h->version_minor,
				     PARLOAD_FORMAT_MAJOR);
	if (h->file_header_size != PARLOAD_FILE_HEADER_SIZE)
		return parload__fail(err, PARLOAD_EHDRSIZE, 0, path,
				     PARLOAD_NONE, 12,
				     "bad header sizes: file_header_size is "
				     "%u, expected %d",
				     h->file_header_size,
				     PARLOAD_FILE_HEADER_SIZE);
	if (h->view_header_size != PARLOAD_VIEW_HEADER_SIZE)
		return parload__fail(err, PARLOAD_EHDRSIZE, 0, path,
				     PARLOAD_NONE, 14,
				     "bad header sizes: view_header_size is "
				     "%u, expected %d",
				     h->view_header_size,
				     PARLOAD_VIEW_HEADER_SIZE);
	return 0;
}

/* The pixels: dimensions, type and size agree with each other. */
static int check_pixels(const parload_file_header *h, const char *path,
			parload_error *err)
{
	const unsigned bpp = parload_pixel_size(h->pixel_type);

	if (h->width == 0 || h->height == 0)
		return parload__fail(err, PARLOAD_EGEOMETRY, 0, path,
				     PARLOAD_NONE, h->width ? 28 : 24,
				     "bad dimensions %" PRIu32 " x %" PRIu32
				     ": width and height must be > 0",
				     h->width, h->height);
	if (!bpp)
		return parload__fail(err, PARLOAD_EPIXTYPE, 0, path,
				     PARLOAD_NONE, 32,
				     "unknown pixel type %u", h->pixel_type);
	if (h->bytes_per_pixel != bpp)
		return parload__fail(err, PARLOAD_EGEOMETRY, 0, path,
				     PARLOAD_NONE, 34,
				     "bytes_per_pixel is %u, but pixel type "
				     "%s has %u",
				     h->bytes_per_pixel,
				     parload_pixel_name(h->pixel_type), bpp);
	if (h->flags & ~PARLOAD_FLAGS_KNOWN)
		return parload__fail(err, PARLOAD_EFLAGS, 0, path, PARLOAD_NONE,
				     36,
				     "unsupported flags 0x%08" PRIx32
				     " (known: 0x%08x)",
				     h->flags, PARLOAD_FLAGS_KNOWN);
	return 0;
}

/* The sizes: the payload is what the dimensions make, and the file's size
 * fits in 64 bits. */
static int check_sizes(const parload_file_header *h, const char *path,
		       parload_error *err)
{
	const unsigned bpp = h->bytes_per_pixel;
	/* width * height cannot overflow 64 bits; times bpp (<= 8) can. */
	const uint64_t pixels = (uint64_t)h->width * h->height;
	uint64_t size;

	if (pixels > UINT64_MAX / bpp)
		return parload__fail(err, PARLOAD_EOVERFLOW, 0, path,
				     PARLOAD_NONE, 24,
				     "sizes overflow: %" PRIu32 " x %" PRIu32
				     " pixels of %u bytes",
				     h->width, h->height, bpp);
	if (h->payload_size != pixels * bpp)
		return parload__fail(err, PARLOAD_EGEOMETRY, 0, path,
				     PARLOAD_NONE, 40,
				     "payload_size is %" PRIu64 ", but %" PRIu32
				     " x %" PRIu32 " pixels of %u bytes make %"
				     PRIu64,
				     h->payload_size, h->width, h->height, bpp,
				     pixels * bpp);
	if (parload_file_size(h, &size) != 0)
		return parload__fail(err, PARLOAD_EOVERFLOW, 0, path,
				     PARLOAD_NONE, 16,
				     "sizes overflow: %" PRIu64 " views of %"
				     PRIu64 " bytes do not fit in 64 bits",
				     h->view_count,
				     h->payload_size + PARLOAD_VIEW_HEADER_SIZE);
	return 0;
}

int parload_parse_file_header(const void *bytes, size_t len, const char *path,
			      parload_file_header *out, parload_error *err)
{
	parload_file_header h;
	int rc;

	if (!bytes || !out)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	memset(out, 0, sizeof(*out));
	if (len < PARLOAD_FILE_HEADER_SIZE)
		return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "file is %zu bytes, shorter than the "
				     "%d-byte file header",
				     len, PARLOAD_FILE_HEADER_SIZE);
	decode(bytes, &h);
	rc = check_identity(&h, path, err);
	if (rc == 0)
		rc = check_pixels(&h, path, err);
	if (rc == 0)
		rc = check_sizes(&h, path, err);
	if (rc == 0)
		*out = h;
	return rc;
}

int parload__check_file_size(const parload_file_header *h, uint64_t file_size,
			     const char *path, parload_error *err)
{
	uint64_t want;

	if (parload_file_size(h, &want) != 0)
		return parload__fail(err, PARLOAD_EOVERFLOW, 0, path,
				     PARLOAD_NONE, PARLOAD_NONE, NULL);
	if (file_size < want) {
		uint64_t whole = file_size < PARLOAD_FILE_HEADER_SIZE ? 0 :
			(file_size - PARLOAD_FILE_HEADER_SIZE) /
			parload__record_size(h);

		return parload__fail(err, PARLOAD_ETRUNCATED, 0, path,
				     PARLOAD_NONE, file_size,
				     "file is truncated: the header promises %"
				     PRIu64 " views (%" PRIu64 " bytes), the "
				     "file has %" PRIu64 " bytes and holds %"
				     PRIu64 " complete views",
				     h->view_count, want, file_size, whole);
	}
	if (file_size > want)
		return parload__fail(err, PARLOAD_ETRAILING, 0, path,
				     PARLOAD_NONE, want,
				     "file has %" PRIu64 " bytes after the last "
				     "of its %" PRIu64 " views (%" PRIu64
				     " bytes expected, %" PRIu64 " found)",
				     file_size - want, h->view_count, want,
				     file_size);
	return 0;
}

uint32_t parload_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* isa-l takes an int length and works on the un-inverted register. */
	crc = ~crc;
	while (len) {
		size_t n = PARLOAD__MIN(len, (size_t)1 << 30);

		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return ~crc;
}

int parload__check_views(const parload_desc *d, const parload_shape *s,
			 const parload_view_header *vh, const void *pixels,
			 uint64_t first, uint64_t n, bool verify_crc,
			 const char *path, parload_error *err)
{
	const unsigned char *pix = pixels;
	/* Stream view of output view first + k: start + k * step (what
	 * parload_shape_view says, without a call a view). */
	const uint64_t step = s ? s->view_step : 1;
	const uint64_t start = s ? parload_shape_view(s, first) : first;

	if (d->format != PARLOAD_FORMAT_PARLOAD)
		return 0;
	for (uint64_t k = 0; k < n; k++) {
		const uint64_t i = start + k * step;

		if (vh[k].view_index != i)
			return parload__fail(err, PARLOAD_EVIEWINDEX, 0, path,
					     i, parload__record_at(d, i),
					     "view header says view_index %"
					     PRIu64 ", but it is view %" PRIu64
					     " of the file",
					     vh[k].view_index, i);
		if (verify_crc && (d->flags & PARLOAD_DESC_CRC32C)) {
			uint32_t crc = parload_crc32c(
				0, pix + k * d->payload_size, d->payload_size);

			if (crc != vh[k].crc32c)
				return parload__fail(
					err, PARLOAD_ECRC, 0, path, i,
					parload__record_at(d, i) + d->header,
					"payload CRC-32C is 0x%08" PRIx32
					", the view header says 0x%08" PRIx32,
					crc, vh[k].crc32c);
		}
	}
	return 0;
}

uint64_t parload_view_offset(const parload_file_header *h, uint64_t i)
{
	return h ? parload__view_offset(h, i) : 0;
}

const char *parload_version(void)
{
	return PACKAGE_VERSION;
}
