/*
 * correct.c - flat- and dark-field correction (parload_request.correct).
 *
 * Before the scan is read, each set of reference frames is reduced to one
 * frame (mean or median per pixel) over the rows and columns the scan's
 * selection reads: frames in memory are sliced; a source is loaded with
 * that selection by the load itself (load.c), before its pass, and
 * handed over here.  The load then delivers float32: each row a worker has
 * read is converted to the layout's pixel type as usual, then to float
 * and corrected (parload.h gives the formulas) while it is still in the
 * worker's cache, straight into its place in the dataset.
 */
#include "engine/engine.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-6f

/* max(x, EPS), but NaN stays NaN. */
static inline float clamp(float x)
{
	return x < EPS ? EPS : x;
}

/* ---- pixels to float ---- */

static inline float pixel_at(const unsigned char *p, int type, size_t i)
{
	return (float)parload__pixel_value(p, type, i);
}

/* n pixels of type at p as float at out (the references, once). */
static void to_float(float *out, const unsigned char *p, int type, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = pixel_at(p, type, i);
}

/* The row loops work LANES pixels at a time in the vector extension GCC
 * and Clang share, which -O2 does not do by itself for a loop of a count
 * known at run time only.  The kernel is compiled twice: for the baseline
 * (SSE2 on x86-64: two instructions a vector; any other target lowers
 * it) and, on x86-64, for AVX2 with FMA (one), chosen at run time. */
#define LANES 8
typedef float vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));
typedef uint16_t vu16 __attribute__((vector_size(2 * LANES)));
#define KERNEL static inline __attribute__((always_inline))
/* The kernels' vectors never cross a call (every kernel is inlined into
 * row_base or row_avx2), so the ABI GCC warns of (for the rest of this
 * file, where it reports it) is never used. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* a where mask is set, else b. */
KERNEL vf pick(vi mask, vf a, vf b)
{
	return (vf)((mask & (vi)a) | (~mask & (vi)b));
}

/* -ln(max(x, EPS)) without a call: x = 2^e * m with m in [sqrt(1/2),
 * sqrt(2)), ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.172, by
 * its series to t^9 (relative error below 1e-7, the float's own).  NaN
 * and infinity come back as they are (-ln(inf) is -inf). */
KERNEL vf neg_log_v(vf x)
{
	const vf eps = (vf){ 0 } + EPS;
	const vf v = pick(x < eps, eps, x);
	const vi u = (vi)v;
	vi e = ((u >> 23) & 0xff) - 127;
	const vi special = e == 128;
	vf m = (vf)((u & 0x007fffff) | 0x3f800000);
	const vi big = m > 1.41421356f;
	vf t, t2, lm, r;

	m = pick(big, m * 0.5f, m);
	e -= big; /* a set mask is -1 */
	t = (m - 1.0f) / (m + 1.0f);
	t2 = t * t;
	lm = 2.0f * t *
	     (1.0f + t2 * (1.0f / 3 + t2 * (1.0f / 5 + t2 * (1.0f / 7 +
							     t2 * (1.0f / 9)))));
	r = __builtin_convertvector(e, vf) * 0.693147181f + lm;
	return -pick(special, v, r);
}

/* The pixels [i, i + LANES) of x, or of the u16 row px, corrected. */
KERNEL vf correct_v(vf v, const float *d, const float *s, bool log)
{
	vf a, b;

	if (d) {
		memcpy(&a, d, sizeof(a));
		v -= a;
	}
	if (s) {
		memcpy(&b, s, sizeof(b));
		v *= b;
	}
	return log ? neg_log_v(v) : v;
}

/* x[i] = the correction of px[i] (u16, or x's own floats when px is
 * NULL) by darks d and scales s (NULL: none), then -ln with log. */
KERNEL void row_kernel(float *x, const unsigned char *px, const float *d,
		       const float *s, bool log, size_t n)
{
	float tmp[LANES], dt[LANES], st[LANES];
	size_t i = 0;
	vf v;

	for (; i + LANES <= n; i += LANES) {
		if (px) {
			vu16 h;

			memcpy(&h, px + 2 * i, sizeof(h));
			v = __builtin_convertvector(h, vf);
		} else {
			memcpy(&v, x + i, sizeof(v));
		}
		v = correct_v(v, d ? d + i : NULL, s ? s + i : NULL, log);
		memcpy(x + i, &v, sizeof(v));
	}
	if (i == n)
		return;
	/* The last pixels, padded with values that stay finite. */
	for (size_t j = 0; j < LANES; j++) {
		const bool in = i + j < n;

		tmp[j] = !in ? 1.0f : px ? pixel_at(px, PARLOAD_PIXEL_U16, i + j) :
					   x[i + j];
		dt[j] = in && d ? d[i + j] : 0.0f;
		st[j] = in && s ? s[i + j] : 1.0f;
	}
	memcpy(&v, tmp, sizeof(v));
	v = correct_v(v, dt, st, log);
	memcpy(tmp, &v, sizeof(v));
	memcpy(x + i, tmp, (n - i) * sizeof(float));
}

static void row_base(float *x, const unsigned char *px, const float *d,
		     const float *s, bool log, size_t n)
{
	row_kernel(x, px, d, s, log, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) static void
row_avx2(float *x, const unsigned char *px, const float *d, const float *s,
	 bool log, size_t n)
{
	row_kernel(x, px, d, s, log, n);
}

/* cpuid, read once by libgcc's constructor: a load and a test. */
static bool have_avx2(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* Row rr of the selection: the u16 pixels px, or (px NULL) the floats
 * already in x, corrected into x. */
static void apply(const parload__correct *k, float *x,
		  const unsigned char *px, uint64_t rr)
{
	const size_t n = k->cols;
	const float *d = k->dark ? k->dark + rr * n : NULL;
	const float *s = k->scale ? k->scale + rr * n : NULL;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (have_avx2()) {
		row_avx2(x, px, d, s, k->minus_log, n);
		return;
	}
#endif
	row_base(x, px, d, s, k->minus_log, n);
}

void parload__correct_row(const parload__correct *k, float *dst,
			  const unsigned char *px, uint64_t rr)
{
	if (k->type == PARLOAD_PIXEL_U16) {
		apply(k, dst, px, rr);
		return;
	}
	for (size_t i = 0; i < k->cols; i++)
		dst[i] = pixel_at(px, k->type, i);
	apply(k, dst, NULL, rr);
}

/* Sums of bin consecutive pixels of px (k->cols * bin of them) added to
 * acc (k->cols floats). */
void parload__bin_add(const parload__correct *k, float *acc,
		      const unsigned char *px)
{
	const size_t n = k->cols, b = k->bin;

	for (size_t i = 0; i < n; i++) {
		float sum = 0.0f;

		for (size_t j = 0; j < b; j++)
			sum += pixel_at(px, k->type, i * b + j);
		acc[i] += sum;
	}
}

void parload__correct_binned(const parload__correct *k, float *dst,
			     const float *acc, uint64_t rr)
{
	const float scale = 1.0f / ((float)k->bin * (float)k->bin);

	for (size_t i = 0; i < k->cols; i++)
		dst[i] = acc[i] * scale;
	apply(k, dst, NULL, rr);
}

/* Frames of the file band (rows * bin x cols * bin each, back to back)
 * binned in place into frames of rows x cols. */
static void bin_frames(float *f, uint64_t n, uint32_t rows, uint32_t cols,
		       uint32_t bin)
{
	const size_t in = (size_t)rows * bin * cols * bin;
	const float scale = 1.0f / ((float)bin * (float)bin);

	for (uint64_t j = 0; j < n; j++) {
		const float *src = f + j * in;
		float *dst = f + j * (size_t)rows * cols;

		for (uint32_t y = 0; y < rows; y++)
			for (uint32_t x = 0; x < cols; x++) {
				double sum = 0.0;

				for (uint32_t a = 0; a < bin; a++)
					for (uint32_t b = 0; b < bin; b++)
						sum += src[((size_t)y * bin + a) *
								   cols * bin +
							   (size_t)x * bin + b];
				dst[(size_t)y * cols + x] =
					(float)(sum * scale);
			}
	}
}

/* ---- the references, reduced ---- */

static int cmp_float(const void *a, const void *b)
{
	const float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* One frame of n frames (at frames, each stride floats apart, a pixel
 * count apart) per pixel, into out (count floats). */
static int reduce(const float *frames, uint64_t n, size_t count,
		  size_t stride, parload_reduce how, float *out,
		  parload_error *err)
{
	float *v = how == PARLOAD_REDUCE_MEDIAN ?
			   parload__sys_malloc(n * sizeof(*v)) :
			   NULL;

	if (how == PARLOAD_REDUCE_MEDIAN && !v)
		return parload__fail_nomem(err, NULL);
	for (size_t i = 0; i < count; i++) {
		double sum = 0;

		if (how == PARLOAD_REDUCE_MEAN) {
			for (uint64_t j = 0; j < n; j++)
				sum += frames[j * stride + i];
			out[i] = (float)(sum / (double)n);
			continue;
		}
		for (uint64_t j = 0; j < n; j++)
			v[j] = frames[j * stride + i];
		qsort(v, n, sizeof(*v), cmp_float);
		out[i] = n % 2 ? v[n / 2] :
				 (float)(((double)v[n / 2 - 1] + v[n / 2]) / 2);
	}
	parload__sys_free(v);
	return 0;
}

/* The frames of r in memory over the selected rows and columns of c's
 * shape (before binning), as float: n frames of rows x cols (*out,
 * malloc'd). */
static int slice_frames(parload__ctx *c, const parload_refs *r,
			const char *what, float **out, uint64_t *n)
{
	const parload_shape *s = &c->shape;
	const uint32_t bin = s->bin > 1 ? s->bin : 1;
	const uint32_t rows = s->rows * bin, cols = s->cols * bin;
	const size_t px = (size_t)rows * cols;
	float *f;

	if (!r->frames || !r->count)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "no %s frames", what);
	*n = r->count;
	if (!(f = parload__sys_malloc(*n * px * sizeof(*f))))
		return parload__fail_nomem(c->err, c->path);
	for (uint64_t j = 0; j < *n; j++)
		for (uint32_t y = 0; y < rows; y++)
			memcpy(f + (j * rows + y) * cols,
			       r->frames + (j * c->d.height + s->row_start + y) *
						   c->d.width +
				       s->col_start,
			       cols * sizeof(*f));
	*out = f;
	return 0;
}

/* The frames of a loaded reference source (its views those rows and
 * columns already) as float, the same way. */
static int float_frames(parload__ctx *c, const parload_dataset *ds,
			float **out, uint64_t *n)
{
	const size_t px = (size_t)ds->shape.rows * ds->shape.cols;
	float *f;

	*n = ds->shape.views;
	if (!(f = parload__sys_malloc(*n * px * sizeof(*f))))
		return parload__fail_nomem(c->err, c->path);
	for (uint64_t j = 0; j < *n; j++)
		to_float(f + j * px,
			 (const unsigned char *)ds->pixels +
				 j * ds->shape.view_bytes,
			 ds->shape.pixel_type, px);
	*out = f;
	return 0;
}

int parload__correct_reduce(parload__ctx *c, const parload_refs *r,
			    const parload_dataset *loaded, const char *what,
			    float **out)
{
	const size_t px = (size_t)c->shape.rows * c->shape.cols;
	float *frames = NULL;
	uint64_t n = 0;
	int rc = loaded ? float_frames(c, loaded, &frames, &n) :
			  slice_frames(c, r, what, &frames, &n);

	/* Binned first: the reduction is of the binned frames. */
	if (rc == 0 && c->shape.bin > 1)
		bin_frames(frames, n, c->shape.rows, c->shape.cols,
			   c->shape.bin);
	if (rc == 0 && !(*out = parload__sys_malloc(px * sizeof(**out))))
		rc = parload__fail_nomem(c->err, c->path);
	if (rc == 0)
		rc = reduce(frames, n, px, px, c->req->correct->reduce, *out,
			    c->err);
	parload__sys_free(frames);
	return rc;
}

/* What a corrected load cannot do, said before anything is read. */
static int check(const parload__ctx *c, const parload_correction *k,
		 const parload__strategy *st)
{
	if (k->bin > 1 && (k->bin > c->shape.rows || k->bin > c->shape.cols))
		return parload__fail_path(c->err, PARLOAD_ESELECT, 0, c->path,
					  "a %u x %u bin is larger than the "
					  "selection's %" PRIu32 " rows x %"
					  PRIu32 " columns", k->bin, k->bin,
					  c->shape.rows, c->shape.cols);
	if ((int)k->reduce != PARLOAD_REDUCE_MEAN &&
	    (int)k->reduce != PARLOAD_REDUCE_MEDIAN)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "unknown reduction %d",
					  (int)k->reduce);
	if (k->flags & ~PARLOAD_CORR_MINUS_LOG)
		return parload__fail_path(c->err, PARLOAD_EINVAL, 0, c->path,
					  "unknown correction flags 0x%x",
					  k->flags);
	if (!(st->caps & PARLOAD_CAP_LAYOUTS) || c->stream)
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "a corrected load needs the parallel "
					  "strategy and a regular file");
	if (c->verify.crc && k->bin > 1 &&
	    (c->shape.rows % k->bin || c->shape.cols % k->bin))
		return parload__fail_path(c->err, PARLOAD_ENOTSUP, 0, c->path,
					  "a payload's CRC-32C covers all of "
					  "its rows and columns: %u x %u bins "
					  "drop some of %" PRIu32 " rows x %"
					  PRIu32 " columns (verify without "
					  "binning, or bin by a divisor)",
					  k->bin, k->bin, c->shape.rows,
					  c->shape.cols);
	return 0;
}

int parload__correct_check(parload__ctx *c, const parload__strategy *st)
{
	const parload_correction *k = c->req->correct;
	parload_shape *s = &c->shape;
	int rc;

	memset(&c->corr, 0, sizeof(c->corr));
	if (!k)
		return 0;
	rc = check(c, k, st);
	if (rc == 0 && k->bin > 1) {
		/* Whole bins from the selection's first row and column. */
		s->bin = k->bin;
		s->rows /= k->bin;
		s->cols /= k->bin;
	}
	return rc;
}

void parload__correct_ready(parload__ctx *c)
{
	const parload_correction *k = c->req->correct;
	parload_shape *s = &c->shape;

	/* The flat becomes the scale each pixel is multiplied by, computed
	 * once: 1 / max(F - D, EPS) (NaN stays NaN, 1 / inf is 0). */
	for (size_t i = 0; c->corr.scale &&
			   i < (size_t)s->rows * s->cols; i++)
		c->corr.scale[i] = 1.0f /
				   clamp(c->corr.scale[i] -
					 (c->corr.dark ? c->corr.dark[i] : 0.0f));
	c->corr.on = true;
	/* The CRCs are of the raw rows the workers read, before they are
	 * corrected: the dataset will not hold those bytes. */
	c->verify.rows = c->verify.crc;
	c->corr.minus_log = (k->flags & PARLOAD_CORR_MINUS_LOG) != 0;
	c->corr.cols = s->cols;
	c->corr.bin = s->bin > 1 ? s->bin : 1;
	c->corr.type = c->d.pixel_type;
	/* What the load delivers from now on. */
	s->pixel_type = PARLOAD_PIXEL_F32;
	s->bytes_per_pixel = sizeof(float);
	s->view_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
	c->whole = false;
}

void parload__correct_free(parload__ctx *c)
{
	parload__sys_free(c->corr.dark);
	parload__sys_free(c->corr.scale);
	memset(&c->corr, 0, sizeof(c->corr));
}
