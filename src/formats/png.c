/*
 * png.c - PNG, written (parload_save's .png): one page as a grey image,
 * for a quick look at the data in any viewer.  8-bit through a contrast
 * window (the caller's, or by default the 0.5th and 99.5th percentiles
 * of the page's values), or 16-bit with the values unscaled (integer
 * types).  Written with libpng (HAVE_PNG); a build without it says what
 * PNG needs.  parload does not read PNG: a .png source is refused saying
 * so.
 */
#include "formats/formats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_PNG
#include <png.h>
#endif

#define MAGIC "\x89PNG\r\n\x1a\n"
#define P_LO 0.005 /* the default window's percentiles */
#define P_HI 0.995

static bool png_magic(const unsigned char *b, size_t n)
{
	return n >= 8 && memcmp(b, MAGIC, 8) == 0;
}

static int png_describe(const parload_source *src, parload__described *out,
			parload_error *err)
{
	(void)out;
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0,
				  parload__source_path(src),
				  "PNG is written by parload (a quick look: "
				  "extract -o OUT.png), not read");
}

/* One image, of integer values for 16 bits: else why not. */
static int check_png(const char *path, const parload_stack *st,
		     const parload_save_options *o, parload_error *err)
{
	const bool sino = st->layout == PARLOAD_LAYOUT_SINOGRAMS;
	const int t = st->pixel_type;

	if (st->n != 1)
		return parload__fail_path(
			err, PARLOAD_EINVAL, 0, path,
			"a PNG holds one image, not %" PRIu64 " %s: select "
			"one view (views K:K+1) or one sinogram (rows R:R+1 "
			"in sinogram layout)", st->n,
			sino ? "sinograms" : "views");
	if (o->png_depth != 0 && o->png_depth != 8 && o->png_depth != 16)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "PNG depth %d: 8 or 16",
					  o->png_depth);
	if (o->png_depth == 16 && (o->flags & PARLOAD_SAVE_WINDOW))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "a window applies to 8-bit PNG; "
					  "16-bit PNG holds the values "
					  "unscaled");
	if (o->png_depth == 16 &&
	    (t == PARLOAD_PIXEL_F32 || t == PARLOAD_PIXEL_F64))
		return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
					  "16-bit PNG holds integers unscaled, "
					  "not %s pixels (8-bit PNG windows "
					  "them)", parload_pixel_name(t));
	if ((o->flags & PARLOAD_SAVE_WINDOW) &&
	    !(o->window_lo < o->window_hi))
		return parload__fail_path(err, PARLOAD_EINVAL, 0, path,
					  "window %g:%g: LO must be below HI",
					  o->window_lo, o->window_hi);
	return 0;
}

#ifdef HAVE_PNG

/* What the writer needs, and what went wrong. */
struct job {
	const parload_stack *st;
	const char *path;
	int fd;
	int depth;
	bool window; /* lo and hi are the caller's */
	double lo, hi;
	unsigned char *row;
	int sys_errno;
	char msg[160];
};

/* ---- the window ---- */

static void swap_d(double *a, double *b)
{
	const double t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest of v[0..n) (k < n), v reordered: a three-way
 * partition around the middle value, then the part that holds k. */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		const double pivot = v[lo + (hi - lo) / 2];
		size_t lt = lo, i = lo, gt = hi;

		/* [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot */
		while (i < gt) {
			if (v[i] < pivot)
				swap_d(&v[lt++], &v[i++]);
			else if (v[i] > pivot)
				swap_d(&v[i], &v[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[k];
}

/* The default window: the percentiles P_LO and P_HI of the values, NaN
 * left out (none left: 0:0). */
static int auto_window(struct job *j, parload_error *err)
{
	const parload_stack *st = j->st;
	const size_t n = (size_t)st->rows * st->cols;
	double *v = parload__sys_malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;

	if (!v)
		return parload__fail_nomem(err, j->path);
	for (size_t i = 0; i < n; i++) {
		const double x = parload__pixel_value(st->pixels,
						      st->pixel_type, i);

		if (!isnan(x))
			v[m++] = x;
	}
	j->lo = j->hi = 0;
	if (m) {
		j->lo = select_kth(v, m, (size_t)floor(P_LO * (double)(m - 1)));
		j->hi = select_kth(v, m, (size_t)floor(P_HI * (double)(m - 1)));
	}
	parload__sys_free(v);
	return 0;
}

/* ---- the rows ---- */

static unsigned char grey8(double v, double lo, double hi)
{
	double t;

	if (isnan(v))
		return 0;
	if (!(lo < hi))
		return v > lo ? 255 : 0;
	t = (v - lo) / (hi - lo) * 255.0;
	return t <= 0 ? 0 : t >= 255 ? 255 : (unsigned char)floor(t + 0.5);
}

/* 16 bits unscaled: every value must fit (checked before writing). */
static int check_16(const struct job *j, parload_error *err)
{
	const parload_stack *st = j->st;

	for (uint32_t r = 0; r < st->rows; r++)
		for (uint32_t c = 0; c < st->cols; c++) {
			const double x = parload__pixel_value(
				st->pixels, st->pixel_type,
				(size_t)r * st->cols + c);

			if (x < 0 || x > 65535)
				return parload__fail_path(
					err, PARLOAD_EINVAL, 0, j->path,
					"value %.0f at row %" PRIu32
					", column %" PRIu32 " does not fit "
					"16-bit PNG unscaled (8-bit PNG "
					"windows it)", x, r, c);
		}
	return 0;
}

/* Row r as PNG wants it: grey bytes, or 16-bit big-endian values. */
static void make_row(struct job *j, uint32_t r)
{
	const parload_stack *st = j->st;
	const size_t at = (size_t)r * st->cols;

	for (uint32_t c = 0; c < st->cols; c++) {
		const double x = parload__pixel_value(st->pixels,
						      st->pixel_type, at + c);

		if (j->depth == 8) {
			j->row[c] = grey8(x, j->lo, j->hi);
		} else {
			j->row[2 * c] = (unsigned char)((unsigned)x >> 8);
			j->row[2 * c + 1] = (unsigned char)((unsigned)x & 0xff);
		}
	}
}

/* ---- libpng ---- */

static void on_error(png_structp png, png_const_charp msg)
{
	struct job *j = png_get_error_ptr(png);

	if (!j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void on_write(png_structp png, png_bytep data, size_t len)
{
	struct job *j = png_get_io_ptr(png);

	while (len) {
		const ssize_t n = parload__sys_write(j->fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			j->sys_errno = n < 0 ? errno : ENOSPC;
			snprintf(j->msg, sizeof(j->msg), "cannot write");
			png_error(png, "write");
		}
		data += n;
		len -= (size_t)n;
	}
}

static void on_flush(png_structp png)
{
	(void)png;
}

/* The image, through libpng; -1 with j->msg on failure. */
static int encode(struct job *j)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, j,
						  on_error, on_warning);
	png_infop info = png ? png_create_info_struct(png) : NULL;

	if (!info) {
		png_destroy_write_struct(&png, NULL);
		snprintf(j->msg, sizeof(j->msg), "out of memory");
		return -1;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return -1;
	}
	png_set_write_fn(png, j, on_write, on_flush);
	/* zlib's fastest level: a quick look, not an archive. */
	png_set_compression_level(png, 1);
	png_set_IHDR(png, info, j->st->cols, j->st->rows, j->depth,
		     PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (uint32_t r = 0; r < j->st->rows; r++) {
		make_row(j, r);
		png_write_row(png, j->row);
	}
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return 0;
}

/* The window and the checks, then the image into tmp. */
static int write_image(struct job *j, const char *tmp, parload_error *err)
{
	int rc = 0;

	if (j->depth == 16)
		rc = check_16(j, err);
	else if (!j->window)
		rc = auto_window(j, err);
	if (rc)
		return rc;
	j->row = parload__sys_malloc((size_t)j->st->cols * 2);
	if (!j->row)
		return parload__fail_nomem(err, j->path);
	j->fd = parload__sys_open(tmp, O_WRONLY | O_CLOEXEC);
	if (j->fd < 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, j->path,
					"cannot write");
	else if (encode(j) != 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, j->sys_errno,
					j->path, "PNG: %s", j->msg);
	if (j->fd >= 0 && parload__sys_close(j->fd) != 0 && rc == 0)
		rc = parload__fail_path(err, PARLOAD_EWRITE, errno, j->path,
					"cannot write");
	parload__sys_free(j->row);
	return rc;
}

/* tmp is the empty file parload_temp_create made: opened without
 * O_TRUNC, as npy.c's. */
static int png_write(const char *tmp, const char *path,
		     const parload_stack *st, const parload_save_options *o,
		     parload_error *err)
{
	struct job j = { .st = st, .path = path, .fd = -1,
			 .depth = o->png_depth == 16 ? 16 : 8 };
	int rc = check_png(path, st, o, err);

	if (rc)
		return rc;
	if (o->flags & PARLOAD_SAVE_WINDOW) {
		j.window = true;
		j.lo = o->window_lo;
		j.hi = o->window_hi;
	}
	return write_image(&j, tmp, err);
}

#else /* !HAVE_PNG */

static int png_write(const char *tmp, const char *path,
		     const parload_stack *st, const parload_save_options *o,
		     parload_error *err)
{
	int rc = check_png(path, st, o, err);

	(void)tmp;
	if (rc)
		return rc;
	return parload__fail_path(err, PARLOAD_ENOTSUP, 0, path,
				  "writing PNG needs libpng: this libparload "
				  "was built without it (apt-get install "
				  "libpng-dev, then configure --with-png)");
}

#endif

static const char *const png_exts[] = { ".png", NULL };

const parload__driver parload__driver_png = {
	.name = "png",
	.title = "PNG",
	.format = PARLOAD_FORMAT_RAW,
	.magic = png_magic,
	.exts = png_exts,
	.describe = png_describe,
	.save = PARLOAD_SAVE_PNG,
	.write = png_write,
};
