/*
 * fuzz_header.c - libFuzzer harness for the format's pure functions.
 *
 * Each input is taken as a whole file: a file header, then records.  The
 * harness runs over it what a loader runs before and after reading:
 *
 *   parload_parse_file_header  on the input's bytes (any length);
 *   parload_file_size          on a header that parsed;
 *   parload__check_file_size   against the input's length, a size taken
 *                              from its last 8 bytes and the sizes either
 *                              side of the promised one;
 *   parload__check_views       over the complete records the input holds,
 *                              at view 0 and at the end of the stream, with
 *                              and without CRC checking;
 *   parload_file_header_init   with the header's fields as arguments;
 *   parload_selection_resolve  with a selection taken from the header's
 *                              reserved bytes, against a model of slices;
 *   the extent plan            (src/model/plan.c) of that selection, split
 *                              between 1 to 4 workers, walked by the cursor
 *                              over the input's records, against the test's
 *                              own slicing of them.
 *
 * Besides crashing, an input fails when a result disagrees with an
 * independent model of docs/FORMAT.md section 8 (the checks, their order
 * and their codes), written below with 128-bit arithmetic rather than the
 * library's division tests, or when a parload_error comes back malformed.
 *
 * Memory is bounded by the input: nothing is ever allocated in proportion
 * to a size a header claims.
 *
 * Seeds: `fuzz_header -write_seeds=DIR` writes a valid file of each kind
 * and one file for each named corruption to DIR, checks that each parses
 * to the error it is named for, and exits (see `make fuzz`).
 *
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined and
 * unsigned-integer-overflow (a size computation that wraps is a finding
 * too), src/model/format.c, src/model/select.c, src/model/plan.c and src/base/errors.c compiled
 * into the same binary.
 */
#include "internal.h"
#include "fuzz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

static void put_le(uint8_t *p, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---------------------------------------------------------------------
 * The model: docs/FORMAT.md section 8, steps 3 to 13, on raw bytes.
 * ------------------------------------------------------------------- */

static unsigned model_pixel_size(uint64_t t)
{
	static const unsigned size[] = { 0, 1, 2, 2, 4, 4, 4, 8 };

	return t < sizeof(size) / sizeof(size[0]) ? size[t] : 0;
}

static int model_parse(const uint8_t *b, size_t len)
{
	uint64_t width, height, bpp_type, payload;
	u128 pixels;

	if (len < 64)
		return PARLOAD_ETRUNCATED;
	if (memcmp(b, "\x89RAW\r\n\x1a\n", 8) != 0)
		return PARLOAD_EMAGIC;
	if (get_le(b + 8, 2) != 1)
		return PARLOAD_EVERSION;
	if (get_le(b + 12, 2) != 64 || get_le(b + 14, 2) != 32)
		return PARLOAD_EHDRSIZE;
	width = get_le(b + 24, 4);
	height = get_le(b + 28, 4);
	if (!width || !height)
		return PARLOAD_EGEOMETRY;
	bpp_type = model_pixel_size(get_le(b + 32, 2));
	if (!bpp_type)
		return PARLOAD_EPIXTYPE;
	if (get_le(b + 34, 2) != bpp_type)
		return PARLOAD_EGEOMETRY;
	if (get_le(b + 36, 4) & ~(uint64_t)1)
		return PARLOAD_EFLAGS;
	pixels = (u128)width * height * bpp_type;
	if (pixels > UINT64_MAX)
		return PARLOAD_EOVERFLOW;
	payload = get_le(b + 40, 8);
	if (payload != (uint64_t)pixels)
		return PARLOAD_EGEOMETRY;
	if (64 + (u128)get_le(b + 16, 8) * (32 + (u128)payload) > UINT64_MAX)
		return PARLOAD_EOVERFLOW;
	return 0;
}

/* ---------------------------------------------------------------------
 * Checking what came back
 * ------------------------------------------------------------------- */

/* Poison a parload_error so that fields a failure leaves unset show. */
static void poison(parload_error *err)
{
	memset(err, 0xa5, sizeof(*err));
}

static void check_failure(const parload_error *err, int ret, int want)
{
	REQUIRE(ret == want);
	REQUIRE(err->code == ret);
	REQUIRE(memchr(err->message, '\0', sizeof(err->message)) != NULL);
	REQUIRE(err->message[0] != '\0');
	REQUIRE(strcmp(parload_err_name(ret), "PARLOAD_EUNKNOWN") != 0);
	REQUIRE(strcmp(parload_strerror(ret), "unknown error") != 0);
}

/* A path longer than the message buffer: messages must be cut, not
 * overrun. */
static char long_path[700];

static void init_long_path(void)
{
	if (long_path[0])
		return;
	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
}

/* ---------------------------------------------------------------------
 * The functions under test
 * ------------------------------------------------------------------- */

static void fuzz_file_size(const parload_file_header *h, uint64_t size)
{
	parload_error err;
	uint64_t want;
	int ret;

	REQUIRE(parload_file_size(h, &want) == 0);
	poison(&err);
	ret = parload__check_file_size(h, size, long_path, &err);
	if (size == want) {
		REQUIRE(ret == 0);
	} else if (size < want) {
		check_failure(&err, ret, PARLOAD_ETRUNCATED);
		REQUIRE(err.offset == size);
	} else {
		check_failure(&err, ret, PARLOAD_ETRAILING);
		REQUIRE(err.offset == want);
	}
}

/* The first bad view of n records starting at view first, by the model. */
static uint64_t model_first_bad(const parload_file_header *h,
				const parload_view_header *vh,
				const uint8_t *pix, uint64_t first, uint64_t n,
				bool crc, int *code)
{
	for (uint64_t k = 0; k < n; k++) {
		if (vh[k].view_index != first + k) {
			*code = PARLOAD_EVIEWINDEX;
			return k;
		}
		if (crc && (h->flags & PARLOAD_FLAG_CRC32C) &&
		    parload_crc32c(0, pix + k * h->payload_size,
				   h->payload_size) != vh[k].crc32c) {
			*code = PARLOAD_ECRC;
			return k;
		}
	}
	*code = 0;
	return n;
}

static void fuzz_views(const parload_file_header *h, const uint8_t *rec,
		       size_t len)
{
	uint64_t record = PARLOAD_VIEW_HEADER_SIZE + h->payload_size;
	uint64_t n = len / record; /* complete records: at most len / 32 */
	parload_view_header *vh;
	uint8_t *pix;

	if (n > h->view_count)
		n = h->view_count;
	/* Split the records as a loader does: headers in one array, payloads
	 * in the other.  Both are smaller than the input. */
	vh = malloc(n ? n * sizeof(*vh) : 1);
	pix = malloc(n ? n * h->payload_size : 1);
	REQUIRE(vh && pix);
	for (uint64_t k = 0; k < n; k++) {
		memcpy(&vh[k], rec + k * record, PARLOAD_VIEW_HEADER_SIZE);
		memcpy(pix + k * h->payload_size,
		       rec + k * record + PARLOAD_VIEW_HEADER_SIZE,
		       h->payload_size);
	}
	/* At the start of the stream, and as its last n views. */
	for (int pass = 0; pass < 4; pass++) {
		uint64_t first = pass < 2 ? 0 : h->view_count - n;
		bool crc = pass & 1;
		parload_error err;
		parload_desc d;
		uint64_t bad;
		int ret, code;

		bad = model_first_bad(h, vh, pix, first, n, crc, &code);
		poison(&err);
		parload_desc_from_header(&d, h);
		ret = parload__check_views(&d, NULL, vh, pix, first, n, crc,
					   pass ? long_path : NULL, &err);
		if (!code) {
			REQUIRE(ret == 0);
			continue;
		}
		check_failure(&err, ret, code);
		REQUIRE(err.view == first + bad);
		REQUIRE(err.offset ==
			64 + err.view * record +
				(code == PARLOAD_ECRC ? 32 : 0));
	}
	free(vh);
	free(pix);
}

/* parload_file_header_init with this input's fields: a header it makes
 * must parse back to itself. */
static void fuzz_init(const uint8_t *b)
{
	parload_file_header h, back;
	uint8_t bytes[PARLOAD_FILE_HEADER_SIZE];
	parload_error err;
	int ret;

	ret = parload_file_header_init(&h, get_le(b + 16, 8),
				       (uint32_t)get_le(b + 24, 4),
				       (uint32_t)get_le(b + 28, 4),
				       (int)get_le(b + 32, 2),
				       (uint32_t)get_le(b + 36, 4));
	if (ret != 0) {
		REQUIRE(ret < 0 && ret > PARLOAD_ERRNO_LAST_);
		return;
	}
	memcpy(bytes, &h, sizeof(bytes)); /* little-endian host */
	REQUIRE(model_parse(bytes, sizeof(bytes)) == 0);
	REQUIRE(parload_parse_file_header(bytes, sizeof(bytes), NULL, &back,
					  &err) == 0);
	REQUIRE(memcmp(&h, &back, sizeof(h)) == 0);
}

/* ---- selections ---- */

/* A slice bound from two bytes: omitted (zero bytes: a valid file with
 * its reserved bytes zero selects the whole file), or small values either
 * side of 0. */
static int64_t bound_of(const uint8_t *b)
{
	int v = (int8_t)b[0];

	return b[1] & 1 ? v : PARLOAD_OMIT;
}

/* The model: Python's slice over n elements, except that a bound outside
 * the elements, an empty result or a step below 1 is an error. */
static bool model_slice(int64_t a, int64_t b, int64_t st, uint64_t n,
			uint64_t *first, uint64_t *count)
{
	__int128 lo = a == PARLOAD_OMIT ? 0 : a < 0 ? (__int128)n + a : a;
	__int128 hi = b == PARLOAD_OMIT ? (__int128)n :
		      b < 0 ? (__int128)n + b : b;

	if (st == PARLOAD_OMIT)
		st = 1;
	if (st < 1 || lo < 0 || hi < 0 || lo > (__int128)n || hi > (__int128)n ||
	    (a != PARLOAD_OMIT && lo == (__int128)n) || hi <= lo)
		return false;
	*first = (uint64_t)lo;
	*count = (uint64_t)((hi - lo + st - 1) / st);
	return true;
}

/* Walk the plan of shape s over the records at rec (have complete ones)
 * with n workers, and compare every byte with the model's slicing. */
static void fuzz_plan(const parload_file_header *h, const parload_shape *s,
		      const uint8_t *file, unsigned n)
{
	const uint64_t hb = s->views * 32, pb = s->views * s->view_bytes;
	const uint64_t bpp = h->bytes_per_pixel, take = s->cols * bpp;
	uint8_t *hd = malloc(hb + 1), *px = malloc(pb + 1);
	parload__share sh[4];
	struct iovec iov[16];
	parload__plan p;
	parload__file f = { .fd = -1, .views = h->view_count };
	parload_desc d;

	REQUIRE(hd && px);
	memset(hd, 0xa5, hb);
	memset(px, 0xa5, pb);
	parload_desc_from_header(&d, h);
	parload__plan_init(&p, &d, &f, 1, false, s);
	parload__plan_views(&p, 0, s->views, (parload_view_header *)hd, NULL,
			    px);
	parload__plan_split(&p, n, 64, sh);
	for (unsigned w = 0; w < n; w++) {
		parload__cursor c;
		const parload__file *at;
		uint64_t off;
		int cnt;

		parload__cursor_init(&c, &p, &sh[w]);
		while ((cnt = parload__cursor_next(&c, iov, NULL, 16, 1000, &off,
						   &at)) > 0)
			for (int k = 0; k < cnt; k++) {
				if (iov[k].iov_base)
					memcpy(iov[k].iov_base, file + off,
					       iov[k].iov_len);
				off += iov[k].iov_len;
			}
	}
	for (uint64_t k = 0; k < s->views; k++) {
		const uint8_t *r = file + parload__view_offset(
						  h, parload_shape_view(s, k));

		REQUIRE(memcmp(hd + k * 32, r, 32) == 0);
		for (uint64_t y = 0; y < s->rows; y++) {
			uint64_t at = s->layout == PARLOAD_LAYOUT_VIEWS ?
					      (k * s->rows + y) * take :
					      (y * s->views + k) * take;

			REQUIRE(memcmp(px + at,
				       r + 32 + ((s->row_start + y) * h->width +
						 s->col_start) * bpp,
				       take) == 0);
		}
	}
	free(hd);
	free(px);
}

static void fuzz_selection(const parload_file_header *h, const uint8_t *file,
			   size_t size)
{
	const uint8_t *r = h->reserved;
	parload_selection sel;
	parload_shape s;
	parload_error err;
	parload_desc d;
	uint64_t vf = 0, vn = 0, rf = 0, rn = 0, cf = 0, cn = 0;
	bool ok;
	int ret;

	parload_selection_init(&sel);
	sel.views.start = bound_of(r);
	sel.views.stop = bound_of(r + 2);
	sel.views.step = r[5] & 1 ? (int8_t)r[4] : PARLOAD_OMIT;
	sel.rows.start = bound_of(r + 6);
	sel.rows.stop = bound_of(r + 8);
	sel.cols.start = bound_of(r + 10);
	sel.cols.stop = bound_of(r + 12);
	sel.layout = (parload_layout)(r[14] & 1);
	poison(&err);
	parload_desc_from_header(&d, h);
	ret = parload_selection_resolve(&d, &sel, &s, &err);
	/* No views: the whole (empty) file is the one valid view slice. */
	ok = (h->view_count == 0 && sel.views.start == PARLOAD_OMIT &&
	      sel.views.stop == PARLOAD_OMIT &&
	      (sel.views.step == PARLOAD_OMIT || sel.views.step > 0)) ||
	     model_slice(sel.views.start, sel.views.stop, sel.views.step,
			 h->view_count, &vf, &vn);
	ok = ok && model_slice(sel.rows.start, sel.rows.stop, PARLOAD_OMIT,
			       h->height, &rf, &rn) &&
	     model_slice(sel.cols.start, sel.cols.stop, PARLOAD_OMIT, h->width,
			 &cf, &cn);
	if (ret) {
		check_failure(&err, ret, PARLOAD_ESELECT);
		REQUIRE(!ok);
		return;
	}
	REQUIRE(ok);
	REQUIRE(s.views == vn && s.view_start == vf);
	REQUIRE(s.row_start == rf && s.rows == rn);
	REQUIRE(s.col_start == cf && s.cols == cn);
	REQUIRE(s.view_bytes == rn * cn * h->bytes_per_pixel);
	/* The plan, where the input holds every selected record. */
	if (s.views && parload__view_offset(h, parload_shape_view(&s, s.views - 1) + 1) <= size &&
	    s.views * s.view_bytes <= (1u << 20))
		for (unsigned n = 1; n <= 4; n++)
			fuzz_plan(h, &s, file, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parload_file_header h, h2;
	parload_error err;
	uint64_t want;
	int ret, ret2, expect;

	init_long_path();
	expect = model_parse(data, size);

	/* With no path and with one too long for the message. */
	poison(&err);
	ret = parload_parse_file_header(data, size, NULL, &h, &err);
	ret2 = parload_parse_file_header(data, size, long_path, &h2, NULL);
	REQUIRE(ret == ret2);
	if (ret != 0) {
		check_failure(&err, ret, expect);
		if (size >= PARLOAD_FILE_HEADER_SIZE)
			fuzz_init(data);
		return 0;
	}
	REQUIRE(expect == 0);
	/* The decoded header is the bytes themselves on this host. */
	REQUIRE(memcmp(&h, data, sizeof(h)) == 0);
	REQUIRE(memcmp(&h, &h2, sizeof(h)) == 0);
	fuzz_init(data);

	REQUIRE(parload_file_size(&h, &want) == 0);
	REQUIRE((u128)want ==
		64 + (u128)h.view_count * (32 + (u128)h.payload_size));
	fuzz_file_size(&h, size);
	fuzz_file_size(&h, want);
	fuzz_file_size(&h, want - 1); /* want >= 64 */
	if (want < UINT64_MAX)
		fuzz_file_size(&h, want + 1);
	fuzz_file_size(&h, 0);
	if (size >= PARLOAD_FILE_HEADER_SIZE + 8)
		fuzz_file_size(&h, get_le(data + size - 8, 8));

	fuzz_views(&h, data + PARLOAD_FILE_HEADER_SIZE,
		   size - PARLOAD_FILE_HEADER_SIZE);
	fuzz_selection(&h, data, size);
	return 0;
}

/* ---------------------------------------------------------------------
 * Seeds
 * ------------------------------------------------------------------- */

static const char *seed_dir;
static unsigned seed_count;

/* A stream of views x (w x h) pixels of type t in memory, by bytes. */
static size_t make_stream(uint8_t *buf, size_t cap, uint64_t views, uint32_t w,
			  uint32_t hgt, int t, uint32_t flags)
{
	parload_file_header fh;
	size_t len;

	REQUIRE(parload_file_header_init(&fh, views, w, hgt, t, flags) == 0);
	len = PARLOAD_FILE_HEADER_SIZE +
	      views * (PARLOAD_VIEW_HEADER_SIZE + fh.payload_size);
	REQUIRE(len <= cap);
	memset(buf, 0, len);
	memcpy(buf, &fh, sizeof(fh));
	for (uint64_t i = 0; i < views; i++) {
		uint8_t *r = buf + PARLOAD_FILE_HEADER_SIZE +
			     i * (PARLOAD_VIEW_HEADER_SIZE + fh.payload_size);
		uint8_t *p = r + PARLOAD_VIEW_HEADER_SIZE;

		for (uint64_t k = 0; k < fh.payload_size; k++)
			p[k] = (uint8_t)(i * 31 + k * 7 + 1);
		put_le(r, 8, i);                     /* view_index */
		put_le(r + 8, 8, 1000000 * (i + 1)); /* timestamp_ns */
		if (flags & PARLOAD_FLAG_CRC32C)
			put_le(r + 20, 4,
			       parload_crc32c(0, p, fh.payload_size));
	}
	return len;
}

/* Write one seed and check that it parses as its name says. */
static void seed(const char *name, const uint8_t *b, size_t len, int want)
{
	parload_file_header h;
	char path[4096];
	FILE *f;
	int ret;

	ret = parload_parse_file_header(b, len, NULL, &h, NULL);
	if (ret == 0)
		ret = parload__check_file_size(&h, len, NULL, NULL);
	if (ret == 0 && len > PARLOAD_FILE_HEADER_SIZE) {
		/* view-level corruptions: check them as the harness does */
		uint64_t rec = PARLOAD_VIEW_HEADER_SIZE + h.payload_size;
		uint64_t n = (len - PARLOAD_FILE_HEADER_SIZE) / rec;

		for (uint64_t i = 0; i < n && ret == 0; i++) {
			const uint8_t *r = b + PARLOAD_FILE_HEADER_SIZE +
					   i * rec;
			parload_view_header vh;
			parload_desc d;

			memcpy(&vh, r, sizeof(vh));
			parload_desc_from_header(&d, &h);
			ret = parload__check_views(&d, NULL, &vh, r + 32, i, 1,
						   true, NULL, NULL);
		}
	}
	if (ret != want) {
		fprintf(stderr, "seed %s: got %s, expected %s\n", name,
			parload_err_name(ret), parload_err_name(want));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	seed_count++;
}

/* A valid single-view u16 header, then field f (offset, size) set to v. */
static void seed_field(const char *name, unsigned off, unsigned n, uint64_t v,
		       int want)
{
	uint8_t b[256];
	size_t len = make_stream(b, sizeof(b), 1, 4, 3, PARLOAD_PIXEL_U16, 0);

	put_le(b + off, n, v);
	seed(name, b, len, want);
}

static void write_seeds(void)
{
	uint8_t b[4096];
	size_t len;

	if (mkdir(seed_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", seed_dir, strerror(errno));
		exit(1);
	}

	/* valid files */
	seed("valid-u8", b, make_stream(b, sizeof(b), 1, 5, 3,
					PARLOAD_PIXEL_U8, 0), 0);
	seed("valid-u16-crc", b, make_stream(b, sizeof(b), 3, 4, 2,
					     PARLOAD_PIXEL_U16,
					     PARLOAD_FLAG_CRC32C), 0);
	seed("valid-i16", b, make_stream(b, sizeof(b), 2, 2, 2,
					 PARLOAD_PIXEL_I16, 0), 0);
	seed("valid-u32-crc", b, make_stream(b, sizeof(b), 2, 3, 1,
					     PARLOAD_PIXEL_U32,
					     PARLOAD_FLAG_CRC32C), 0);
	seed("valid-i32", b, make_stream(b, sizeof(b), 4, 1, 1,
					 PARLOAD_PIXEL_I32, 0), 0);
	seed("valid-f32", b, make_stream(b, sizeof(b), 2, 2, 3,
					 PARLOAD_PIXEL_F32, 0), 0);
	seed("valid-f64-crc", b, make_stream(b, sizeof(b), 5, 2, 2,
					     PARLOAD_PIXEL_F64,
					     PARLOAD_FLAG_CRC32C), 0);
	seed("valid-empty-stream", b, make_stream(b, sizeof(b), 0, 896, 64,
						  PARLOAD_PIXEL_U16, 0), 0);
	len = make_stream(b, sizeof(b), 1, 4, 3, PARLOAD_PIXEL_U16, 0);
	put_le(b + 10, 2, 9); /* minor versions are never checked */
	put_le(b + 48, 8, 0x1122334455667788u); /* nor reserved bytes */
	seed("valid-minor-reserved", b, len, 0);

	/* each named corruption of the file header */
	seed_field("bad-magic", 0, 1, 'P', PARLOAD_EMAGIC);
	seed_field("bad-magic-crlf", 4, 2, 0x0a0a, PARLOAD_EMAGIC);
	seed_field("bad-version", 8, 2, 2, PARLOAD_EVERSION);
	seed_field("bad-version-0", 8, 2, 0, PARLOAD_EVERSION);
	seed_field("bad-file-header-size", 12, 2, 128, PARLOAD_EHDRSIZE);
	seed_field("bad-view-header-size", 14, 2, 16, PARLOAD_EHDRSIZE);
	seed_field("bad-width", 24, 4, 0, PARLOAD_EGEOMETRY);
	seed_field("bad-height", 28, 4, 0, PARLOAD_EGEOMETRY);
	seed_field("bad-pixel-type", 32, 2, 0, PARLOAD_EPIXTYPE);
	seed_field("bad-pixel-type-8", 32, 2, 8, PARLOAD_EPIXTYPE);
	seed_field("bad-bpp", 34, 2, 4, PARLOAD_EGEOMETRY);
	seed_field("bad-payload", 40, 8, 25, PARLOAD_EGEOMETRY);
	seed_field("bad-payload-0", 40, 8, 0, PARLOAD_EGEOMETRY);
	seed_field("bad-flags", 36, 4, 0x2, PARLOAD_EFLAGS);
	seed_field("bad-flags-high", 36, 4, 0x80000001u, PARLOAD_EFLAGS);

	/* sizes that overflow 64 bits: the payload, then the file */
	len = make_stream(b, sizeof(b), 0, 4, 3, PARLOAD_PIXEL_F64, 0);
	put_le(b + 24, 4, UINT32_MAX);
	put_le(b + 28, 4, UINT32_MAX);
	put_le(b + 40, 8, 0); /* whatever it says, it cannot be right */
	seed("overflow-payload", b, len, PARLOAD_EOVERFLOW);
	len = make_stream(b, sizeof(b), 0, 65536, 65536, PARLOAD_PIXEL_U8, 0);
	put_le(b + 16, 8, (uint64_t)1 << 32); /* 2^32 views of 4 GiB */
	seed("overflow-views", b, len, PARLOAD_EOVERFLOW);
	len = make_stream(b, sizeof(b), 0, 1, 1, PARLOAD_PIXEL_U8, 0);
	put_le(b + 16, 8, UINT64_MAX);
	seed("overflow-view-count", b, len, PARLOAD_EOVERFLOW);
	/* Fits 64 bits but no machine: the header parses, the size does not
	 * match (the loader's out-of-memory check is not pure). */
	len = make_stream(b, sizeof(b), 0, 65536, 65536, PARLOAD_PIXEL_F64, 0);
	put_le(b + 16, 8, 1000000);
	seed("huge-views", b, len, PARLOAD_ETRUNCATED);

	/* files too short, or too long, for their header */
	seed("short-empty", b, 0, PARLOAD_ETRUNCATED);
	len = make_stream(b, sizeof(b), 1, 4, 3, PARLOAD_PIXEL_U16, 0);
	seed("short-header", b, 40, PARLOAD_ETRUNCATED);
	seed("short-header-63", b, 63, PARLOAD_ETRUNCATED);
	len = make_stream(b, sizeof(b), 3, 4, 3, PARLOAD_PIXEL_U16,
			  PARLOAD_FLAG_CRC32C);
	seed("truncated-record", b, len - 10, PARLOAD_ETRUNCATED);
	seed("truncated-header-only", b, PARLOAD_FILE_HEADER_SIZE,
	     PARLOAD_ETRUNCATED);
	len = make_stream(b, sizeof(b), 2, 4, 3, PARLOAD_PIXEL_U16, 0);
	memset(b + len, 0xee, 7);
	seed("trailing", b, len + 7, PARLOAD_ETRAILING);

	/* view-level corruptions */
	len = make_stream(b, sizeof(b), 3, 4, 3, PARLOAD_PIXEL_U16,
			  PARLOAD_FLAG_CRC32C);
	put_le(b + PARLOAD_FILE_HEADER_SIZE + 56, 8, 7); /* view 1 says 7 */
	seed("bad-view-index", b, len, PARLOAD_EVIEWINDEX);
	len = make_stream(b, sizeof(b), 3, 4, 3, PARLOAD_PIXEL_U16,
			  PARLOAD_FLAG_CRC32C);
	b[len - 1] ^= 0x10; /* last view's last pixel */
	seed("bad-crc", b, len, PARLOAD_ECRC);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char opt[] = "-write_seeds=";

	for (int i = 1; i < *argc; i++) {
		if (strncmp((*argv)[i], opt, sizeof(opt) - 1) != 0)
			continue;
		seed_dir = (*argv)[i] + sizeof(opt) - 1;
		write_seeds();
		printf("fuzz_header: wrote %u seeds to %s\n", seed_count,
		       seed_dir);
		exit(0);
	}
	return 0;
}
