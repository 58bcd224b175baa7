/*
 * rows.h - the codec rows that live in files of their own (bitshuffle.c,
 * lz4.c, blosc.c, zstd.c, lzf.c, checksum.c, deflate.c, bzip2.c): what
 * each gives
 * codecs.c's table, one PARLOAD__X_ROW initializer each, and the bit
 * transpose of bitshuffle, whose two paths the tests compare.
 *
 * A row whose library this build lacks keeps its name and HDF5 id, says
 * what it needs and has no decode, so that such a dataset goes through
 * libhdf5 (which may have the filter's plugin) instead, saying what a
 * build that decodes it needs.
 */
#ifndef PARLOAD_CODEC_ROWS_H
#define PARLOAD_CODEC_ROWS_H

#include "codec/codec.h"

/* Numbers as the filters store them. */
static inline uint32_t parload__be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t parload__be64(const unsigned char *p)
{
	return (uint64_t)parload__be32(p) << 32 | parload__be32(p + 4);
}

/* The phrases rows share (decode's answers). */
#define PARLOAD__TOO_BIG "decodes to more bytes than its chunk"
#define PARLOAD__SHORT_HEADER "is shorter than its header"
#define PARLOAD__TRUNCATED "ends inside one of its blocks (truncated)"
#define PARLOAD__TRAILING "has bytes after its last block"
#define PARLOAD__NO_MEMORY "needs more memory than there is to decode it"

#define PARLOAD__PARAMS_SIG                                                    \
	const unsigned *cd, size_t n, uint32_t elem, parload__filter *f
#define PARLOAD__DECODE_SIG                                                    \
	void *state, const parload__filter *f, const unsigned char *in,        \
		size_t stored, unsigned char *out, size_t cap, size_t *got
#define PARLOAD__ENCODE_SIG                                                    \
	void *state, const parload__filter *f, const unsigned char *in,        \
		size_t n, unsigned char *out, size_t cap, size_t *got
/* The phrase of an encode given less room than its bound. */
#define PARLOAD__NO_ROOM "does not fit in the room given"

/* ---- bitshuffle.c: HDF5 32008, and the bit transpose ---- */

/* Undo bitshuffle's bit transpose of one block: n elements (a multiple of
 * 8) of elem bytes, in and out not overlapping.  _plain is portable C,
 * _vector 16 columns at a time with SSE2 where the CPU has it (the rest
 * plain; on other machines all plain); parload__bitunshuffle runs the
 * one chosen for this machine, once (AVX2 where it has it). */
void parload__bitunshuffle_plain(const unsigned char *in, unsigned char *out,
				 size_t n, size_t elem);
void parload__bitunshuffle_vector(const unsigned char *in, unsigned char *out,
				  size_t n, size_t elem);
/* The same 32 columns at a time with AVX2, for elements of 1, 2, 4 or 8
 * bytes: false (nothing done) where the CPU or the element lacks it. */
bool parload__bitunshuffle_avx2(const unsigned char *in, unsigned char *out,
				size_t n, size_t elem);
void parload__bitunshuffle(const unsigned char *in, unsigned char *out,
			   size_t n, size_t elem);
/* Whether this machine has the vector path (else it is the plain one). */
bool parload__bitunshuffle_has_vector(void);
/* The block size bitshuffle picks for elements of elem bytes (block 0). */
size_t parload__bitshuffle_default_block(size_t elem);

const char *parload__bitshuffle_params(PARLOAD__PARAMS_SIG);
void *parload__bitshuffle_open(void);
void parload__bitshuffle_close(void *state);
const char *parload__bitshuffle_decode(PARLOAD__DECODE_SIG);
#define PARLOAD__BITSHUFFLE_ROW                                                \
	{ .name = "bitshuffle", .hdf5_id = 32008,                              \
	  .hdf5_params = parload__bitshuffle_params,                           \
	  .open = parload__bitshuffle_open,                                    \
	  .close = parload__bitshuffle_close,                                  \
	  .decode = parload__bitshuffle_decode }

/* ---- checksum.c: HDF5's Fletcher32 (3), Zarr v3's crc32c ---- */
const char *parload__crc32c_decode(PARLOAD__DECODE_SIG);
const char *parload__crc32c_encode(PARLOAD__ENCODE_SIG);
size_t parload__crc32c_bound(const parload__filter *f, size_t n);
#define PARLOAD__CRC32C_ROW                                                    \
	{ .name = "crc32c", .decode = parload__crc32c_decode,                  \
	  .encode = parload__crc32c_encode, .bound = parload__crc32c_bound }

/* HDF5's Fletcher32 of len bytes (H5_checksum_fletcher32's sums). */
uint32_t parload__fletcher32(const unsigned char *p, size_t len);
const char *parload__fletcher32_params(PARLOAD__PARAMS_SIG);
const char *parload__fletcher32_decode(PARLOAD__DECODE_SIG);
#define PARLOAD__FLETCHER32_ROW                                                \
	{ .name = "fletcher32", .hdf5_id = 3,                                  \
	  .hdf5_params = parload__fletcher32_params,                           \
	  .decode = parload__fletcher32_decode }

/* ---- deflate.c: zlib streams (HDF5 1, TIFF 8, numcodecs Zlib) and
 * gzip members (numcodecs GZip, Zarr v3 gzip), with libdeflate; param[0]
 * the level encode uses (0-12, libdeflate's).  Both rows share open():
 * a worker's decompressor, and its compressor once it encodes. ---- */
void *parload__deflate_open(void);
void parload__deflate_close(void *state);
const char *parload__deflate_decode(PARLOAD__DECODE_SIG);
const char *parload__deflate_encode(PARLOAD__ENCODE_SIG);
size_t parload__deflate_bound(const parload__filter *f, size_t n);
const char *parload__gzip_decode(PARLOAD__DECODE_SIG);
const char *parload__gzip_encode(PARLOAD__ENCODE_SIG);
size_t parload__gzip_bound(const parload__filter *f, size_t n);
#ifdef HAVE_HDF5
#define PARLOAD__DEFLATE_CODE(fn)                                              \
	.open = parload__deflate_open, .close = parload__deflate_close,        \
	.decode = parload__##fn##_decode, .encode = parload__##fn##_encode,    \
	.bound = parload__##fn##_bound
#else
#define PARLOAD__DEFLATE_CODE(fn)                                              \
	.needs = "HDF5 and libdeflate (configure --with-hdf5)"
#endif

/* ---- the rows of libraries a build may lack ---- */
#define PARLOAD__LIB_ROW(row_name, id, fn)                                     \
	{ .name = row_name, .hdf5_id = id,                                     \
	  .hdf5_params = parload__##fn##_params,                               \
	  .decode = parload__##fn##_decode }
#define PARLOAD__NEEDS_ROW(row_name, id, lib, fn)                              \
	{ .name = row_name, .hdf5_id = id, .needs = lib }
/* A row that encodes too. */
#define PARLOAD__CODER_ROW(row_name, id, fn)                                   \
	{ .name = row_name, .hdf5_id = id,                                     \
	  .hdf5_params = parload__##fn##_params,                               \
	  .decode = parload__##fn##_decode, .encode = parload__##fn##_encode,  \
	  .bound = parload__##fn##_bound }

/* lz4.c: HDF5 32004, the LZ4 filter's blocks (param[0] 0), or
 * numcodecs' LZ4 (param[0] PARLOAD__LZ4_NUMCODECS: the decoded size, 4
 * bytes little-endian, then one LZ4 block), which encode writes (param[1]
 * LZ4's acceleration, 0: 1). */
const char *parload__lz4_params(PARLOAD__PARAMS_SIG);
const char *parload__lz4_decode(PARLOAD__DECODE_SIG);
const char *parload__lz4_encode(PARLOAD__ENCODE_SIG);
size_t parload__lz4_bound(const parload__filter *f, size_t n);
/* One LZ4 block of exactly size bytes into out (bitshuffle's too). */
const char *parload__lz4_block(const unsigned char *in, size_t stored,
			       unsigned char *out, size_t size);
#ifdef HAVE_LZ4
#define PARLOAD__LZ4_ROW PARLOAD__CODER_ROW("lz4", 32004, lz4)
#else
#define PARLOAD__LZ4_ROW PARLOAD__NEEDS_ROW("lz4", 32004, "liblz4 (liblz4-dev)", lz4)
#endif

/* zstd.c: HDF5 32015, one zstd frame; a worker's decompression context. */
const char *parload__zstd_params(PARLOAD__PARAMS_SIG);
void *parload__zstd_open(void);
void parload__zstd_close(void *state);
const char *parload__zstd_decode(PARLOAD__DECODE_SIG);
/* One frame at level param[0] (0: zstd's default), with the worker's
 * compression context (made the first time). */
const char *parload__zstd_encode(PARLOAD__ENCODE_SIG);
size_t parload__zstd_bound(const parload__filter *f, size_t n);
/* One zstd frame of exactly size bytes into out with state (a worker's,
 * from parload__zstd_open). */
const char *parload__zstd_block(void *state, const unsigned char *in,
				size_t stored, unsigned char *out,
				size_t size);
#ifdef HAVE_ZSTD
#define PARLOAD__ZSTD_ROW                                                      \
	{ .name = "zstd", .hdf5_id = 32015,                                    \
	  .hdf5_params = parload__zstd_params, .open = parload__zstd_open,     \
	  .close = parload__zstd_close, .decode = parload__zstd_decode,        \
	  .encode = parload__zstd_encode, .bound = parload__zstd_bound }
#else
#define PARLOAD__ZSTD_ROW PARLOAD__NEEDS_ROW("zstd", 32015, "libzstd (libzstd-dev)", zstd)
#endif

/* blosc.c: HDF5 32001, one Blosc 1 buffer.  Encode: param[0] the
 * compressor's code (Blosc's: blosclz 0, lz4 1, lz4hc 2, zlib 4, zstd 5),
 * param[1] the level (0-9), param[2] the shuffle (0 none, 1 bytes,
 * 2 bits), of elements of f->elem bytes. */
const char *parload__blosc_params(PARLOAD__PARAMS_SIG);
const char *parload__blosc_decode(PARLOAD__DECODE_SIG);
const char *parload__blosc_encode(PARLOAD__ENCODE_SIG);
size_t parload__blosc_bound(const parload__filter *f, size_t n);
#ifdef HAVE_BLOSC
#define PARLOAD__BLOSC_ROW PARLOAD__CODER_ROW("blosc", 32001, blosc)
#else
#define PARLOAD__BLOSC_ROW PARLOAD__NEEDS_ROW("blosc", 32001, "libblosc (libblosc-dev)", blosc)
#endif

/* lzf.c: HDF5 32000, h5py's LZF (a bare LZF stream). */
const char *parload__lzf_params(PARLOAD__PARAMS_SIG);
const char *parload__lzf_decode(PARLOAD__DECODE_SIG);
#ifdef HAVE_LZF
#define PARLOAD__LZF_ROW PARLOAD__LIB_ROW("lzf", 32000, lzf)
#else
#define PARLOAD__LZF_ROW PARLOAD__NEEDS_ROW("lzf", 32000, "liblzf (liblzf-dev)", lzf)
#endif

/* bzip2.c: HDF5 307 and numcodecs' BZ2, one bzip2 stream; encode at
 * block size param[0] (1-9, 0: 9). */
const char *parload__bzip2_params(PARLOAD__PARAMS_SIG);
const char *parload__bzip2_decode(PARLOAD__DECODE_SIG);
const char *parload__bzip2_encode(PARLOAD__ENCODE_SIG);
size_t parload__bzip2_bound(const parload__filter *f, size_t n);
#ifdef HAVE_BZ2
#define PARLOAD__BZIP2_ROW PARLOAD__CODER_ROW("bzip2", 307, bzip2)
#else
#define PARLOAD__BZIP2_ROW PARLOAD__NEEDS_ROW("bzip2", 307, "libbz2 (configure --with-bz2)", bzip2)
#endif

#endif /* PARLOAD_CODEC_ROWS_H */
