/*
 * parload.h - load raw image streams into a structure of arrays.
 *
 * A raw image stream is a 64-byte file header followed, for each view, by a
 * 32-byte view header and the view's pixels (docs/FORMAT.md).  libparload
 * loads such a file into two arrays: every view header in one, every pixel
 * in the other.  The default loader reads the file with a NUMA-aware pool of
 * threads, each reading its share of the views with pread/preadv straight
 * into its slice of the two arrays.
 *
 * Conventions:
 *  - Functions that can fail return 0 or a negative PARLOAD_E* code; the
 *    code's text comes from parload_strerror(), and a parload_error filled in
 *    by the failing call names the file, the view and the byte offset.
 *  - Nothing is left allocated by a call that fails.
 *  - Every exported name starts with parload_ or PARLOAD_.
 */
#ifndef PARLOAD_H
#define PARLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define PARLOAD_API __attribute__((visibility("default")))
#else
#define PARLOAD_API
#endif

/* ---------------------------------------------------------------------
 * The format (docs/FORMAT.md).  Both structs match the on-disk layout byte
 * for byte on a little-endian host, which is what lets a loader read them
 * straight into place.
 * ------------------------------------------------------------------- */

#define PARLOAD_MAGIC "\x89RAW\r\n\x1a\n" /* 8 bytes, no terminator on disk */
#define PARLOAD_FORMAT_MAJOR 1
#define PARLOAD_FORMAT_MINOR 0
#define PARLOAD_FILE_HEADER_SIZE 64
#define PARLOAD_VIEW_HEADER_SIZE 32

/* file_header.flags */
#define PARLOAD_FLAG_CRC32C 0x1u /* each view header carries its payload's CRC-32C */
#define PARLOAD_FLAGS_KNOWN PARLOAD_FLAG_CRC32C

/* The pixel types: enum name, value (the file header's pixel_type), name
 * (parload_pixel_name) and bytes per pixel. */
#define PARLOAD_PIXEL_MAP(X)                                                   \
	X(U8, 1, "u8", 1)                                                      \
	X(U16, 2, "u16", 2)                                                    \
	X(I16, 3, "i16", 2)                                                    \
	X(U32, 4, "u32", 4)                                                    \
	X(I32, 5, "i32", 4)                                                    \
	X(F32, 6, "f32", 4)                                                    \
	X(F64, 7, "f64", 8)

typedef enum parload_pixel_type {
#define PARLOAD_PIXEL_ENUM_(name, value, text, size) PARLOAD_PIXEL_##name = (value),
	PARLOAD_PIXEL_MAP(PARLOAD_PIXEL_ENUM_)
#undef PARLOAD_PIXEL_ENUM_
} parload_pixel_type;

typedef struct parload_file_header {
	uint8_t magic[8];
	uint16_t version_major;
	uint16_t version_minor;
	uint16_t file_header_size;
	uint16_t view_header_size;
	uint64_t view_count;
	uint32_t width;
	uint32_t height;
	uint16_t pixel_type;
	uint16_t bytes_per_pixel;
	uint32_t flags;
	uint64_t payload_size;
	uint8_t reserved[16];
} parload_file_header;

typedef struct parload_view_header {
	uint64_t view_index;
	uint64_t timestamp_ns;
	float angle_deg;
	uint32_t crc32c;
	uint8_t reserved[8];
} parload_view_header;

#ifdef __cplusplus
#define PARLOAD_STATIC_ASSERT_ static_assert
#else
#define PARLOAD_STATIC_ASSERT_ _Static_assert
#endif
PARLOAD_STATIC_ASSERT_(sizeof(parload_file_header) == PARLOAD_FILE_HEADER_SIZE,
		       "parload_file_header must be 64 bytes");
PARLOAD_STATIC_ASSERT_(sizeof(parload_view_header) == PARLOAD_VIEW_HEADER_SIZE,
		       "parload_view_header must be 32 bytes");

/* ---------------------------------------------------------------------
 * Errors: 0 is success, every failure a negative code from this table.
 * ------------------------------------------------------------------- */

#define PARLOAD_ERRNO_MAP(X)                                                   \
	X(EINVAL, -1, "invalid argument")                                      \
	X(EOPEN, -2, "cannot open file")                                       \
	X(ENOTREG, -3, "not a regular file")                                   \
	X(EMAGIC, -4, "bad magic: not a raw image stream")                     \
	X(EVERSION, -5, "unsupported format version")                          \
	X(EHDRSIZE, -6, "bad header sizes")                                    \
	X(EPIXTYPE, -7, "unknown pixel type")                                  \
	X(EGEOMETRY, -8, "dimensions, bytes_per_pixel and payload_size disagree") \
	X(EFLAGS, -9, "unsupported flags")                                     \
	X(EOVERFLOW, -10, "sizes overflow")                                    \
	X(ETRUNCATED, -11, "file is shorter than its header promises")         \
	X(ETRAILING, -12, "file is longer than its header promises")           \
	X(EVIEWINDEX, -13, "view_index does not match the view's position")    \
	X(ENOMEM, -14, "out of memory")                                        \
	X(EIO, -15, "I/O error")                                               \
	X(ETHREAD, -16, "cannot start worker threads")                         \
	X(ETOPOLOGY, -17, "cannot discover the machine topology")              \
	X(ECRC, -18, "payload CRC-32C mismatch")                               \
	X(ESPACE, -19, "destination buffer too small")                         \
	X(EWRITE, -20, "cannot write file")                                    \
	X(ECOUNT, -21, "wrong number of views written")                        \
	X(ESELECT, -22, "invalid selection")                                   \
	X(ENOTSUP, -23, "not supported")                                       \
	X(ECANCELED, -24, "load canceled")                                     \
	X(EMPI, -25, "MPI error")                                              \
	X(EEXIST, -26, "file exists")                                          \
	X(ECONTAINER, -27, "invalid TIFF or HDF5 metadata")

typedef enum parload_errno {
#define PARLOAD_ERRNO_ENUM_(name, value, text) PARLOAD_##name = (value),
	PARLOAD_ERRNO_MAP(PARLOAD_ERRNO_ENUM_)
#undef PARLOAD_ERRNO_ENUM_
	PARLOAD_ERRNO_LAST_ = -28
} parload_errno;

/* Returned where a parload_error has no view or no byte offset to name. */
#define PARLOAD_NONE UINT64_MAX

/* Details of a failure, filled in by the call that failed. */
typedef struct parload_error {
	int code;           /* the negative code the call returned */
	int sys_errno;      /* errno behind it, or 0 */
	uint64_t view;      /* the view concerned, or PARLOAD_NONE */
	uint64_t offset;    /* the byte offset in the file, or PARLOAD_NONE */
	/* "FILE: what went wrong (view V, byte offset O)": one line, names
	 * escaped (\n, \x1b), FILE and the text shortened in their middle
	 * ("a...b") where the whole would not fit, the reason kept. */
	char message[512];
} parload_error;

/* The text of a code ("bad magic: ..."); never NULL. */
PARLOAD_API const char *parload_strerror(int code);
/* The name of a code ("PARLOAD_EMAGIC"); never NULL. */
PARLOAD_API const char *parload_err_name(int code);

/* ---------------------------------------------------------------------
 * Names: each enum that users name in text (a pixel type, a strategy, a
 * page-cache mode, ...) has one table, its PARLOAD_*_MAP below, from which
 * come the enum, its parload_X_name() and parload_X_from_name(), and the
 * two calls here.  One convention for every table: a name is matched
 * exactly, in the lower case the table writes it ("Drop" is not a mode);
 * a name not in the table, or NULL, is PARLOAD_EINVAL, whose message
 * (parload_name_parse) lists the names there are:
 * "unknown page-cache mode 'x' (keep, drop, direct or auto)".
 * ------------------------------------------------------------------- */

/* The tables, and what a name of each is called in messages. */
#define PARLOAD_NAMES_MAP(X)                                                   \
	X(PIXEL, "pixel type")                                                 \
	X(FORMAT, "format")                                                    \
	X(FRAMES, "frames")                                                    \
	X(STRATEGY, "strategy")                                                \
	X(IO, "I/O API")                                                       \
	X(LAYOUT, "layout")                                                    \
	X(CACHE, "page-cache mode")                                            \
	X(REDUCE, "reduction")                                                 \
	X(COMPRESS, "compression")

typedef enum parload_names {
#define PARLOAD_NAMES_ENUM_(name, what) PARLOAD_NAMES_##name,
	PARLOAD_NAMES_MAP(PARLOAD_NAMES_ENUM_)
#undef PARLOAD_NAMES_ENUM_
	PARLOAD_NAMES_COUNT_
} parload_names;

/* The name of value in table kind (PARLOAD_NAMES_*); NULL for a value
 * the table does not name, or an unknown kind. */
PARLOAD_API const char *parload_name(int kind, int value);
/* The value text names in table kind (0 or more); PARLOAD_EINVAL for a
 * name not in it, NULL or an unknown kind, with err (may be NULL) saying
 * "unknown WHAT 'TEXT' (A, B or C)". */
PARLOAD_API int parload_name_parse(int kind, const char *text,
				   parload_error *err);
/* The same over a table of the caller's (libparload-mpi's names, say):
 * names[v] names value v (NULL: no value v), count entries; what names a
 * name of it in the message. */
PARLOAD_API int parload_name_find(const char *what,
				  const char *const *names, int count,
				  const char *text, parload_error *err);

/* ---------------------------------------------------------------------
 * Layouts: where a source's views lie.  Every load works from a
 * description: parload's own format is one (read from its 64-byte
 * header), and so is any fixed-record raw stream (a camera's or a
 * detector's dump: a file header of some size, then for each view a header
 * of its own, its pixels and a gap), given as a parload_desc or as text
 * ("width=2048,height=2048,type=u16be,header=512"; parload_desc_parse).
 * Nothing after the description knows which format it came from.
 * ------------------------------------------------------------------- */

/* How the file stores each pixel.  The dataset holds desc.pixel_type in
 * the host's (little-endian) order; the workers convert as they read. */
typedef enum parload_encoding {
	PARLOAD_ENC_LE = 0,       /* the pixel type, little-endian */
	PARLOAD_ENC_BE,           /* the pixel type, big-endian: swapped */
	/* Packed 12- and 10-bit integers, unpacked into u16.  A view is one
	 * bit stream of width x height pixels; a row must be whole bytes. */
	PARLOAD_ENC_MONO12P,      /* GenICam PFNC Mono12p, LSB first:
				   * p0 = b0 | (b1 & 0xF) << 8,
				   * p1 = b1 >> 4 | b2 << 4 */
	PARLOAD_ENC_MONO12PACKED, /* GigE Vision Mono12Packed:
				   * p0 = b0 << 4 | (b1 & 0xF),
				   * p1 = b2 << 4 | b1 >> 4 */
	PARLOAD_ENC_U12MSB,       /* MSB first (Photron MRAW):
				   * p0 = b0 << 4 | b1 >> 4,
				   * p1 = (b1 & 0xF) << 8 | b2 */
	PARLOAD_ENC_MONO10P,      /* PFNC Mono10p, 4 pixels in 5 bytes, LSB
				   * first */
	PARLOAD_ENC_COUNT_
} parload_encoding;

/* The formats: enum name, value and name (parload_format_name). */
#define PARLOAD_FORMAT_MAP(X)                                                  \
	X(PARLOAD, 0, "parload")                                               \
	X(RAW, 1, "raw")                                                       \
	X(TIFF, 2, "tiff")                                                     \
	X(HDF5, 3, "hdf5")                                                      \
	X(ZARR, 4, "zarr")

typedef enum parload_format {
#define PARLOAD_FORMAT_ENUM_(name, value, text) PARLOAD_FORMAT_##name = (value),
	PARLOAD_FORMAT_MAP(PARLOAD_FORMAT_ENUM_)
#undef PARLOAD_FORMAT_ENUM_
} parload_format;
/* PARLOAD_FORMAT_PARLOAD: parload's own stream: the file header says everything, each view
	 * header is a parload_view_header (view_index checked, CRC-32C when
 * the file has them) and the file must end after its last view.
 * PARLOAD_FORMAT_RAW: a raw stream: the description says everything.  Each view's own
	 * header (desc.header bytes, maybe 0) is delivered as bytes
	 * (dataset.raw_headers), and bytes after the last counted record are
 * ignored when desc.count is given.
 * PARLOAD_FORMAT_TIFF, PARLOAD_FORMAT_HDF5, PARLOAD_FORMAT_ZARR: a container, whose metadata the load reads first: a TIFF (one file
	 * of pages, or single-page files read as one stream), an HDF5
	 * dataset or a Zarr array.  The description gives width, height, pixel_type, count
	 * and the encoding of the rows as the file (or its decoder) yields
	 * them; offset, header and gap are 0 (record_size is the payload's):
	 * where each view's rows lie is the container's table, not a
	 * formula.  Typed
	 * view headers are made (view_index, and angle_deg where the file
 * has angles: DXchange /exchange/theta, NXtomo rotation_angle, a Zarr
 * array's attribute "angles"). */

/* Whether format f is a container (its metadata says where the rows lie). */
static inline int parload_format_is_container(int f)
{
	return f == PARLOAD_FORMAT_TIFF || f == PARLOAD_FORMAT_HDF5 ||
	       f == PARLOAD_FORMAT_ZARR;
}

/* "parload", "raw", "tiff", "hdf5" or "zarr"; NULL for another value
 * (there is no parse: a format is what a source is, never asked for by
 * name). */
PARLOAD_API const char *parload_format_name(int format);

/* parload_source.frames: which frames of a tomography file a load reads.
 * NXtomo: the frames whose image_key is 0, 1 or 2; DXchange:
 * /exchange/data, /exchange/data_white or /exchange/data_dark. */
#define PARLOAD_FRAMES_MAP(X)                                                  \
	X(PROJECTIONS, 0, "projections")                                       \
	X(FLATS, 1, "flats")                                                   \
	X(DARKS, 2, "darks")

typedef enum parload_frames {
#define PARLOAD_FRAMES_ENUM_(name, value, text) PARLOAD_FRAMES_##name = (value),
	PARLOAD_FRAMES_MAP(PARLOAD_FRAMES_ENUM_)
#undef PARLOAD_FRAMES_ENUM_
} parload_frames;
/* "projections", "flats" or "darks", NULL for another value; and back
 * (the value, or PARLOAD_EINVAL). */
PARLOAD_API const char *parload_frames_name(int frames);
PARLOAD_API int parload_frames_from_name(const char *name);

/* parload_desc.flags (parload's own format) */
#define PARLOAD_DESC_CRC32C 0x1u /* each view header carries its payload's CRC-32C */

typedef struct parload_desc {
	parload_format format;
	uint32_t width, height;   /* pixels of a view's row, rows of a view */
	int pixel_type;           /* PARLOAD_PIXEL_*: what the dataset holds
				   * (u16 for the packed encodings) */
	parload_encoding encoding;
	uint64_t offset;          /* bytes before the first record, in each file */
	uint64_t header;          /* bytes of each view's own header */
	uint64_t gap;             /* bytes after each view's pixels; the last
				   * view's may be missing from the file */
	/* Views: for a raw stream 0 means as many whole records as the files
	 * hold; resolved (parload_describe, dataset.desc), the views there
	 * are. */
	uint64_t count;
	unsigned flags;           /* PARLOAD_DESC_* */
	/* Derived by parload_desc_check() from the fields above: */
	uint32_t bytes_per_pixel; /* of pixel_type in the dataset */
	uint64_t row_size;        /* bytes of one row in the file */
	uint64_t payload_size;    /* bytes of one view's pixels in the file */
	uint64_t record_size;     /* header + payload_size + gap */
} parload_desc;

/* A raw stream of nothing yet: format RAW, u16 little-endian, every size
 * 0 (width, height and the type must then be set). */
PARLOAD_API void parload_desc_init(parload_desc *d);
/* Parse a description from text: key=value pairs separated by commas (or
 * newlines; '#' starts a comment to the end of its line), keys width,
 * height, type (u8 u16 i16 u32 i32 f32 f64, each with an optional le or
 * be, or mono10p mono12p mono12packed u12msb), offset, header, gap and
 * count; sizes take K, M, G, T (powers of 1024).  "@PATH" reads the text
 * from the file PATH.  Fails with PARLOAD_EINVAL naming the key for an
 * unknown or repeated key, a missing width, height or type, a bad number,
 * a zero width or height, or a packed row that is not whole bytes;
 * PARLOAD_EOVERFLOW naming the key for a size past 64 bits. */
PARLOAD_API int parload_desc_parse(const char *text, parload_desc *out,
				   parload_error *err);
/* A size as the description and the command take it: digits, then
 * optionally K, M, G or T (powers of 1024, either case, optionally
 * followed by "iB"): "4096", "64K", "2GiB".  0; PARLOAD_EOVERFLOW for
 * such a size past 64 bits ("17179869184T"); PARLOAD_EINVAL for anything
 * else. */
PARLOAD_API int parload_size_parse(const char *text, uint64_t *out);
/* Validate a description and derive its sizes (the fields after flags):
 * PARLOAD_EINVAL or PARLOAD_EOVERFLOW naming what is wrong. */
PARLOAD_API int parload_desc_check(parload_desc *d, parload_error *err);
/* Write d as the text parload_desc_parse reads ("width=...,type=...");
 * returns the length it needs, as snprintf does. */
PARLOAD_API int parload_desc_format(const parload_desc *d, char *buf,
				    size_t size);
/* The type's text ("u16be", "mono12p"), NULL for an invalid pair; and the
 * pair from such a text (0, or PARLOAD_EINVAL). */
PARLOAD_API const char *parload_type_name(int pixel_type, int encoding);
PARLOAD_API int parload_type_from_name(const char *name, int *pixel_type,
				       int *encoding);
/* The description of parload's own stream with header h. */
PARLOAD_API void parload_desc_from_header(parload_desc *d,
					  const parload_file_header *h);

/* Write a NRRD detached header (NRRD0004) at nhdr_path that describes
 * the nfiles raw files in place, laid out as d (views numbered across the
 * files, each holding d->count / nfiles of them from d->offset), so that
 * NRRD readers open them, and parload too (a source path ending in
 * ".nhdr").  The header gives type, dimension (2 for one view, else 3),
 * sizes (width, height[, count]), endian (types wider than a byte),
 * encoding raw, byte skip and the data file: its name, or a LIST of names,
 * each relative to the header's directory when the file lies below it,
 * else absolute.  It is written to a temporary name beside nhdr_path and
 * renamed into place; nothing is left behind on failure.  PARLOAD_ENOTSUP
 * with the reason for what NRRD cannot express: a view header between
 * views (d->header with more than one view), a gap between views, a packed
 * encoding (mono12p, ...), views that do not split evenly over the files,
 * a file other than the last that holds more than its share;
 * PARLOAD_ETRUNCATED for a file shorter than its share; PARLOAD_EINVAL
 * for an invalid layout or no count; PARLOAD_EOPEN for a file that does
 * not exist; PARLOAD_EWRITE if the header cannot be written. */
PARLOAD_API int parload_nrrd_write(const char *nhdr_path,
				   const parload_desc *d,
				   const char *const *files, size_t nfiles,
				   parload_error *err);

/* Where a load reads from: one file, many files read as one stream (views
 * numbered across them in the order given; desc.offset applies to each),
 * or an open descriptor (a regular file, or a pipe, socket or character
 * device read in order).  desc NULL: parload's own format, or, for a path
 * ending in ".nhdr", the NRRD detached header it names. */
typedef struct parload_source {
	const char *path;          /* one file */
	const char *const *paths;  /* or path_count files */
	size_t path_count;
	int fd;                    /* or a descriptor (-1: none), not closed */
	const char *name;          /* names fd in messages (NULL: "fd N") */
	/* The layout; NULL: as above.  A description of parload's own format
	 * (parload_desc_from_header of a header read elsewhere: an MPI rank 0
	 * that broadcast it) is trusted to describe the file: it is checked
	 * against the file's size, and the header is not read again. */
	const parload_desc *desc;
	/* HDF5: the dataset to read ("/exchange/data"); NULL: the one a path
	 * "FILE.h5:/name" names, else /exchange/data when the file has it,
	 * else the NXtomo entry's data, else the file's only 3-D dataset
	 * (PARLOAD_EINVAL listing the 3-D datasets there are otherwise). */
	const char *dataset;
	/* NXtomo and DXchange: projections (the default), flats or darks. */
	parload_frames frames;
	unsigned flags; /* PARLOAD_SRC_* */
} parload_source;

/* parload_source.flags */
/* Confine the files a file names to its own directory: a .nhdr's data
 * files, an HDF5 file's external links and external storage must lie in
 * the directory of the file that names them, or below it, after every
 * symbolic link is resolved; any other is PARLOAD_EOPEN naming both
 * files.  Off by default, as NRRD and HDF5 define these names (absolute
 * paths and "../" allowed, and parload_nrrd_write writes absolute paths
 * for files outside the header's directory): set it where the files come
 * from someone else (a service that loads what users upload). */
#define PARLOAD_SRC_CONFINE 0x1u

/* An empty source: no file, fd -1, no description. */
PARLOAD_API void parload_source_init(parload_source *src);
/* What src holds, checked against its files' sizes: the description with
 * count resolved to the views there are.  The errors of a load: a file
 * that cannot be opened, a header that is not valid, a file shorter than
 * its views or (without a count) ending in a partial record, each naming
 * the file, the view and the byte offset.  allow_truncated: a file cut
 * short describes its complete views (PARLOAD_OPT_ALLOW_TRUNCATED).  On
 * failure *out is zeroed but for format, which is PARLOAD_FORMAT_TIFF,
 * PARLOAD_FORMAT_HDF5 or PARLOAD_FORMAT_ZARR when src was read as that container (its failure
 * is the container's: damaged metadata, a file it names),
 * PARLOAD_FORMAT_RAW when it was read as a file that describes itself as
 * a raw layout (a NRRD header, a NumPy .npy), else 0. */
PARLOAD_API int parload_describe(const parload_source *src,
				 int allow_truncated, parload_desc *out,
				 parload_error *err);
/* A TIFF or HDF5 source whose views lie as a raw stream's would (each
 * view one range of bytes stored as they are, the views at one stride in
 * one file: a contiguous HDF5 dataset, a TIFF of one uncompressed strip
 * a page, back to back): that stream's description in *raw (format RAW,
 * offset the first view's byte offset, gap the bytes between views, count
 * the views) and the file that holds it in file (size bytes: the source's
 * own, or the file an HDF5 external link leads to; NULL: not wanted).
 * PARLOAD_ENOTSUP where the views lie otherwise (chunks, compressed,
 * scattered, several files), PARLOAD_EINVAL for a source that is no
 * container, PARLOAD_ESPACE when the name does not fit; the errors of
 * parload_describe. */
PARLOAD_API int parload_describe_raw(const parload_source *src,
				     parload_desc *raw, char *file,
				     size_t size, parload_error *err);
/* parload_describe, and the shape of the pieces src is stored in, as
 * chunk[0] views of chunk[1] rows of chunk[2] columns each: a chunk of a
 * chunked HDF5 dataset or Zarr array (a shard's inner chunk), a TIFF's
 * strip or tile; one whole view for a source stored as views.  A
 * selection of whole pieces reads each piece once (parload.dask aligns its
 * chunks to them). */
PARLOAD_API int parload_describe_chunks(const parload_source *src,
					int allow_truncated,
					parload_desc *out, uint64_t chunk[3],
					parload_error *err);

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

/* The strategies: enum name, the strategy's id in the library (the file of
 * its family in src/ defines parload__strategy_ID, with what it can do),
 * and the name users give (parload_strategy_name; this row is the only
 * place that names it).  Adding a strategy is one row here, its file in
 * src/ and that file's line in Makefile.am (docs/ARCHITECTURE.md). */
#define PARLOAD_STRATEGY_MAP(X)                                                \
	X(PARALLEL, parallel, "parallel")  /* the thread pool with pread/preadv (default) */ \
	X(BULK, bulk, "bulk")              /* read the whole file into a buffer, then split */ \
	X(SEQUENTIAL, sequential, "sequential") /* header, payload, ... each read into place */ \
	X(TWO_PASS, two_pass, "two-pass")  /* all headers, then all payloads */ \
	X(MMAP, mmap, "mmap")              /* map the file, copy out */

typedef enum parload_strategy {
#define PARLOAD_STRATEGY_ENUM_(name, id, text) PARLOAD_STRATEGY_##name,
	PARLOAD_STRATEGY_MAP(PARLOAD_STRATEGY_ENUM_)
#undef PARLOAD_STRATEGY_ENUM_
	PARLOAD_STRATEGY_COUNT_
} parload_strategy;

/* "parallel", "bulk", ... or NULL if unknown; and back (the value, or
 * PARLOAD_EINVAL: parload_name_parse). */
PARLOAD_API const char *parload_strategy_name(int strategy);
PARLOAD_API int parload_strategy_from_name(const char *name);

/* What a strategy can do: parload_strategy_caps() returns these bits (0 for
 * an unknown strategy).  Code that must know asks for the capability, never
 * for a strategy by name. */
#define PARLOAD_CAP_IO 0x1u      /* reads through options.io and buffer_size */
#define PARLOAD_CAP_SELECT 0x2u  /* reads selections, not only whole files */
#define PARLOAD_CAP_BATCHES 0x4u /* delivers batches (parload_request.on_batch) */
#define PARLOAD_CAP_THREADS 0x8u /* reads with options.threads worker threads */
#define PARLOAD_CAP_LAYOUTS 0x10u /* reads raw layouts and many files, not only
				   * parload's own format */
#define PARLOAD_CAP_DIRECT 0x20u  /* reads with O_DIRECT and drops what it read
				   * as it goes (parload_request.cache) */
PARLOAD_API unsigned parload_strategy_caps(int strategy);
/* Whether a strategy reads through parload_options.io and buffer_size
 * (the article's single-threaded readers): its PARLOAD_CAP_IO bit. */
PARLOAD_API int parload_strategy_uses_io(int strategy);

/* The I/O APIs: posix (open/read/lseek), stdio (fopen/fread/fseek). */
#define PARLOAD_IO_MAP(X)                                                      \
	X(POSIX, 0, "posix")                                                   \
	X(STDIO, 1, "stdio")

typedef enum parload_io {
#define PARLOAD_IO_ENUM_(name, value, text) PARLOAD_IO_##name = (value),
	PARLOAD_IO_MAP(PARLOAD_IO_ENUM_)
#undef PARLOAD_IO_ENUM_
} parload_io;

/* "posix", "stdio" or NULL; and back (the value, or PARLOAD_EINVAL). */
PARLOAD_API const char *parload_io_name(int io);
PARLOAD_API int parload_io_from_name(const char *name);

/* ---------------------------------------------------------------------
 * Selections: which views, detector rows and columns a load reads, and the
 * layout of the pixels it delivers.
 * ------------------------------------------------------------------- */

/* An omitted part of a slice ("::4" has no start and no stop). */
#define PARLOAD_OMIT INT64_MIN

/* start:stop:step with Python's meaning: stop excluded, negative values
 * count from the end, an omitted start or stop (PARLOAD_OMIT) is the
 * beginning or the end, an omitted step is 1.  Unlike Python, a slice that
 * reaches past the end or selects nothing is an error (PARLOAD_ESELECT),
 * never silently clipped, and step must be positive.  Rows and columns
 * take no step. */
typedef struct parload_slice {
	int64_t start, stop, step;
} parload_slice;

/* The layouts: views, pixels[v][r][c], view after view as the file
 * stores them; sinograms, pixels[r][v][c], for each detector row that row
 * of every selected view (a sinogram), what tomographic reconstruction
 * reads. */
#define PARLOAD_LAYOUT_MAP(X)                                                  \
	X(VIEWS, 0, "views")                                                   \
	X(SINOGRAMS, 1, "sinograms")

typedef enum parload_layout {
#define PARLOAD_LAYOUT_ENUM_(name, value, text) PARLOAD_LAYOUT_##name = (value),
	PARLOAD_LAYOUT_MAP(PARLOAD_LAYOUT_ENUM_)
#undef PARLOAD_LAYOUT_ENUM_
} parload_layout;

typedef struct parload_selection {
	parload_slice views;
	parload_slice rows;
	parload_slice cols;
	parload_layout layout;
} parload_selection;

/* The whole file in view layout: what a load without a selection reads. */
PARLOAD_API void parload_selection_init(parload_selection *sel);
/* Parse "A:B:S", "A:B", ":B", "::4", "7" (one index) into *out; rows and
 * columns pass allow_step 0.  PARLOAD_ESELECT for anything else. */
PARLOAD_API int parload_slice_parse(const char *text, int allow_step,
				    parload_slice *out, parload_error *err);
/* "views", "sinograms" or NULL; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_layout_name(int layout);
PARLOAD_API int parload_layout_from_name(const char *name);

/* A selection resolved against a file: what a load delivers. */
typedef struct parload_shape {
	uint64_t views;      /* selected views */
	uint64_t view_start; /* output view k is file view */
	uint64_t view_step;  /*   view_start + k * view_step */
	uint32_t row_start;  /* first detector row */
	uint32_t rows;       /* detector rows per view */
	uint32_t col_start;  /* first column */
	uint32_t cols;       /* columns per row */
	parload_layout layout;
	uint32_t bytes_per_pixel;
	uint64_t view_bytes; /* rows * cols * bytes_per_pixel */
	/* The type the pixels are delivered in: the layout's pixel_type, or
	 * PARLOAD_PIXEL_F32 for a corrected load (parload_request.correct). */
	int pixel_type;
	/* pixels: views * view_bytes bytes; pixels[k][r][c] (views layout)
	 * or pixels[r][k][c] (sinograms), C order */
	/* Binning (parload_correction.bin): 1 none; else each delivered
	 * pixel is the mean of bin x bin detector pixels, rows and cols are
	 * the binned counts, and the load reads rows * bin detector rows from
	 * row_start and cols * bin columns from col_start (the selection's
	 * rows or columns past the last whole bin are dropped). */
	uint32_t bin;
} parload_shape;

/* Resolve sel (NULL: the whole file) against a resolved description (its
 * count the views there are: parload_describe).  Fails with
 * PARLOAD_ESELECT, naming the bad part, for an empty selection, a slice
 * past the end, a step of 0 or below, more rows or columns than a view
 * has, or an unknown layout. */
PARLOAD_API int parload_selection_resolve(const parload_desc *d,
					  const parload_selection *sel,
					  parload_shape *out,
					  parload_error *err);
/* The file view that output view k holds. */
PARLOAD_API uint64_t parload_shape_view(const parload_shape *s, uint64_t k);

/* parload_options.buffer_size: the I/O API's own default buffering. */
#define PARLOAD_BUFFER_DEFAULT SIZE_MAX

/* parload_options.flags */
#define PARLOAD_OPT_NO_BIND 0x1u    /* do not bind workers or memory to NUMA nodes */
#define PARLOAD_OPT_NO_HUGEPAGES 0x2u /* do not advise transparent huge pages */
/* Check every payload against the CRC-32C in its view header, while the
 * data is still in the reading core's cache.  A file without CRCs (flags
 * bit 0 clear) loads normally and stats.crc_checked says 0.  Without
 * PARLOAD_OPT_KEEP_GOING the first bad view fails the load with
 * PARLOAD_ECRC, naming the view and its payload's byte offset. */
#define PARLOAD_OPT_VERIFY_CRC 0x4u
/* With PARLOAD_OPT_VERIFY_CRC: do not stop at a bad view.  The load reads
 * everything and succeeds, and dataset.bad_views lists every view whose
 * payload does not match its CRC (the caller must look).  No effect
 * without PARLOAD_OPT_VERIFY_CRC. */
#define PARLOAD_OPT_KEEP_GOING 0x8u
/* A file cut short (an acquisition that died) loads its complete views:
 * dataset.desc.count becomes their number and stats.declared_views
 * keeps the header's.  A partial last record is dropped; a file shorter
 * than its file header, or longer than the header promises, still
 * fails. */
#define PARLOAD_OPT_ALLOW_TRUNCATED 0x10u
/* Sinograms (PARLOAD_LAYOUT_SINOGRAMS) copied straight from the file
 * mapped into memory instead of read through a buffer: one copy of each
 * byte, not two, so they load about as fast as the view layout (the
 * reference stream, 2 threads: 0.97-1.10 x its view layout's time, where
 * reads take 1.11-1.21 x).  The hazard: if another process truncates the
 * file while the load runs, the kernel will almost surely kill the
 * process with SIGBUS (a worker is copying from past the new end), where
 * a read fails with PARLOAD_ETRUNCATED.  A file cut short before a batch
 * starts still fails cleanly: each batch is checked against the file's
 * size first, and a batch it does not hold, or that the kernel will not
 * map, is read.  Set it only for files that nothing shortens while they
 * load.  Parallel strategy, regular files, PARLOAD_CACHE_KEEP (drop and
 * direct read); stats.read_calls counts only what was read. */
#define PARLOAD_OPT_MAP_SINOGRAMS 0x20u

/* The most worker threads parload_options.threads may ask for: more is a
 * mistake, not a machine, and would exhaust the process's threads. */
#define PARLOAD_THREADS_MAX 4096u

typedef struct parload_options {
	/* Worker threads for the parallel strategy; 0 means one per CPU of
	 * the process's affinity mask (taskset, a batch scheduler's cpuset),
	 * or, where workers are placed (several NUMA nodes without
	 * PARLOAD_OPT_NO_BIND, core_offset, an hwloc topology in the
	 * environment), one per core the process may run on.  More threads
	 * than that all run, unbound unless core_offset places them, so that
	 * the scheduler shares the cores out evenly; stats.threads counts
	 * them.  The other strategies use one thread.  More than
	 * PARLOAD_THREADS_MAX is refused (PARLOAD_EINVAL) before any thread
	 * starts. */
	unsigned threads;
	parload_strategy strategy;
	/* I/O API and user-space buffer of the single-threaded strategies:
	 * buffer_size 0 is unbuffered, PARLOAD_BUFFER_DEFAULT the API's own
	 * default (stdio's buffer; none for POSIX), anything else a buffer of
	 * that many bytes. */
	parload_io io;
	size_t buffer_size;
	/* Largest request of one read system call; 0 means the default
	 * (8 MiB).  Never more than the kernel's limit for one call.  A
	 * direct load (PARLOAD_CACHE_DIRECT) rounds it down to a multiple of
	 * 4 KiB, at least 4 KiB. */
	size_t max_read;
	unsigned flags; /* PARLOAD_OPT_* */
	/* Where parload_load() stores the details of a failure; may be NULL. */
	parload_error *error;
	/* What every load of a loader reads unless a parload_request names
	 * another selection; parload_options_init() selects the whole file. */
	parload_selection selection;
	/* Workers take the cores the process may run on from this index on
	 * (modulo their number): processes that share a machine (MPI ranks)
	 * give each a disjoint set with threads and core_offset.  0 by
	 * default. */
	unsigned core_offset;
} parload_options;

/* Set every field to its default. */
PARLOAD_API void parload_options_init(parload_options *opts);

/* ---------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------- */

/* What a load leaves in the page cache (parload_request.cache).  A load
 * that returns a new dataset holds the data once in it; keep leaves a
 * second copy in the page cache, which may evict what else the node had
 * cached (and makes the next load of the file warm). */
/* The modes, each by its name:
 *  keep    buffered reads; the file's pages stay cached (the default).
 *  drop    buffered reads whose pages leave the page cache once they are
 *          in the dataset: the parallel strategy's workers advise
 *          POSIX_FADV_DONTNEED on the ranges they have read, 8 MiB at a
 *          time, each holding the first bytes of its share (twice the
 *          device's read_ahead_kb) until its pass is over, so that the
 *          readahead of the share before does not read them twice; the
 *          page cache grows by no more than the ranges in flight, those
 *          held and the kernel's readahead.  The files are dropped whole
 *          when the load ends (pages cached before it too).
 *  direct  O_DIRECT: the device's data goes to the dataset without the
 *          page cache, straight into place where the layout allows, else
 *          through a per-worker buffer on a huge page, with the same NUMA
 *          placement; a file system that refuses O_DIRECT falls back to
 *          drop (stats.cache says so).  Parallel strategy; the others
 *          drop.  The loader's workers each open a queue of reads in
 *          flight on its first direct load and keep it, idle between
 *          loads, until parload_loader_free: an io_uring ring (a
 *          descriptor, close-on-exec), or where the kernel refuses rings a
 *          Linux AIO context (whose freeing waits 30-40 ms, in
 *          parload_loader_free or at exit).
 *  auto    chosen per load: keep when most of a sample of the file's pages
 *          is cached (a warm file), drop when a cold file is larger than
 *          half the memory available, else keep. */
#define PARLOAD_CACHE_MAP(X)                                                   \
	X(KEEP, 0, "keep")                                                     \
	X(DROP, 1, "drop")                                                     \
	X(DIRECT, 2, "direct")                                                 \
	X(AUTO, 3, "auto")

typedef enum parload_cache {
#define PARLOAD_CACHE_ENUM_(name, value, text) PARLOAD_CACHE_##name = (value),
	PARLOAD_CACHE_MAP(PARLOAD_CACHE_ENUM_)
#undef PARLOAD_CACHE_ENUM_
} parload_cache;

/* "keep", "drop", "direct", "auto" or NULL; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_cache_name(int cache);
PARLOAD_API int parload_cache_from_name(const char *name);

/* ---------------------------------------------------------------------
 * Corrections: flat- and dark-field correction and -log, computed by the
 * workers on the rows they have just read, in float32.  Per selected
 * pixel, with D the darks and F the flats reduced to one frame:
 *   flats and darks  (P - D) / max(F - D, 1e-6)
 *   darks only       P - D
 *   flats only       P / max(F, 1e-6)
 *   neither          P (the pixels converted to float32)
 * and with PARLOAD_CORR_MINUS_LOG then -ln(max(x, 1e-6)): values at or
 * below zero clamp instead of becoming NaN or infinity, the one difference
 * from TomoPy's normalize and minus_log.  NaN and infinity in the inputs
 * propagate as IEEE arithmetic does.
 * ------------------------------------------------------------------- */

/* How a set of reference frames becomes one: per pixel. */
/* mean, or median: the middle value (the mean of the two middle values
 * for an even count, as NumPy's median), which removes zingers. */
#define PARLOAD_REDUCE_MAP(X)                                                  \
	X(MEAN, 0, "mean")                                                     \
	X(MEDIAN, 1, "median")

typedef enum parload_reduce {
#define PARLOAD_REDUCE_ENUM_(name, value, text) PARLOAD_REDUCE_##name = (value),
	PARLOAD_REDUCE_MAP(PARLOAD_REDUCE_ENUM_)
#undef PARLOAD_REDUCE_ENUM_
} parload_reduce;

/* Reference frames (flats or darks), with the scan's width and height:
 * a source of any layout parload reads, loaded with the rows and columns
 * the scan's selection reads (all its views), or frames in memory. */
typedef struct parload_refs {
	parload_source source; /* the frames' source; or, with none given, */
	const float *frames;   /* count frames of height x width pixels */
	uint64_t count;
} parload_refs;

/* "mean" or "median", NULL for another value; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_reduce_name(int reduce);
PARLOAD_API int parload_reduce_from_name(const char *name);

/* parload_correction.flags */
#define PARLOAD_CORR_MINUS_LOG 0x1u

typedef struct parload_correction {
	const parload_refs *flats; /* NULL: none */
	const parload_refs *darks; /* NULL: none */
	parload_reduce reduce;
	unsigned flags;            /* PARLOAD_CORR_* */
	/* Binning by N x N detector pixels (0 or 1: none): bins start at the
	 * selection's first row and column, a partial bin at its end is
	 * dropped (shape.bin, rows, cols say what is delivered), and the
	 * scan's and the references' raw pixels are binned (the mean of the
	 * N x N) before the reduction, the correction and the -log.  A
	 * factor larger than the selected rows or columns is
	 * PARLOAD_ESELECT. */
	unsigned bin;
} parload_correction;

/* Room for parload_stats.codec, its terminating 0 included. */
#define PARLOAD_CODEC_NAME_MAX 64

/* What one load did. */
typedef struct parload_stats {
	double seconds;       /* from opening the file until the dataset was complete */
	uint64_t bytes_read;  /* bytes moved from the file into user memory */
	uint64_t read_calls;  /* read system calls issued (read, pread, preadv) */
	unsigned threads;     /* threads that read */
	parload_strategy strategy;
	/* The views the header (or the description's count) promises; more
	 * than desc.count only when PARLOAD_OPT_ALLOW_TRUNCATED loaded a
	 * truncated file. */
	uint64_t declared_views;
	/* Payloads whose CRC-32C was checked: every view with
	 * PARLOAD_OPT_VERIFY_CRC when the file stores CRCs, else 0. */
	uint64_t crc_checked;
	/* The page-cache mode the load used: the request's, what auto chose,
	 * or drop where direct I/O was refused or does not apply. */
	parload_cache cache;
	/* A container's strips (TIFF strips or tiles, HDF5 chunks) that the
	 * workers decompressed, and, when the pixels could not be read in
	 * parallel, why (a static string: "HDF5 filter 32004 (lz4) is read
	 * through libhdf5, one thread at a time"); NULL otherwise. */
	uint64_t strips_decoded;
	const char *serial;
	/* The codecs that decoded them, first applied first
	 * ("bitshuffle", "shuffle+deflate"), or the library that did
	 * ("libhdf5", "libtiff"); "" when nothing was decoded. */
	char codec[PARLOAD_CODEC_NAME_MAX];
	/* Files of a TIFF or HDF5 source whose metadata the library's reader
	 * (libtiff, libhdf5) read because parload's own could not take them
	 * (a compressed or tiled TIFF, an HDF5 layout or filter it does not
	 * know); the others were read without it.  PARLOAD_TIFF and
	 * PARLOAD_HDF5 pick one reader for all (libparload(3)). */
	uint64_t fallback_files;
} parload_stats;

typedef struct parload_dataset {
	/* What was read (count: the complete views of a truncated file
	 * loaded with PARLOAD_OPT_ALLOW_TRUNCATED). */
	parload_desc desc;
	/* shape.views entries: the selected views' headers, whose view_index
	 * is the view's index in the stream.  parload's own format reads them
	 * from the file; for a raw stream they are made here (view_index set,
	 * the rest 0) and the file's own view headers are raw_headers. */
	parload_view_header *headers;
	/* A raw stream with desc.header bytes of header per view: those bytes
	 * of each selected view, back to back (shape.views * desc.header
	 * bytes), unless the request said PARLOAD_REQ_NO_RAW_HEADERS.  NULL
	 * otherwise. */
	unsigned char *raw_headers;
	/* shape.views * shape.view_bytes bytes laid out as shape says; for a
	 * whole-file load, view i at (char *)pixels + i * shape.view_bytes. */
	void *pixels;
	parload_stats stats;
	void *internal_[2];           /* owned by libparload */
	/* With PARLOAD_OPT_KEEP_GOING: the views (file indices) whose payload
	 * does not match its CRC-32C, in ascending order (NULL and 0 when
	 * there are none).  Owned by the dataset, freed by
	 * parload_dataset_free(), also after a load into the caller's memory. */
	uint64_t *bad_views;
	uint64_t bad_view_count;
	/* What the dataset holds: the selection resolved against the file. */
	parload_shape shape;
} parload_dataset;

/* Load a whole file of parload's own format (or any other format that
 * describes itself: a NRRD header, a NumPy .npy, a TIFF, an HDF5 file)
 * with one call.  opts may be NULL for the defaults.  On success *out owns its
 * arrays until parload_dataset_free(); on failure it owns nothing and
 * opts->error (if set) tells why.  A load whose arrays need more memory
 * than the machine has (RAM plus swap) or than the process may map
 * (RLIMIT_AS, RLIMIT_DATA) fails with PARLOAD_ENOMEM, naming the bytes,
 * before anything is allocated.  A file truncated or extended by another
 * process during the load gives an error or a complete dataset, never a
 * partial one reported as success.  Anything else (a raw layout, many
 * files, a descriptor, a selection, the caller's memory, batches) is a
 * parload_request given to parload_loader_run(). */
PARLOAD_API int parload_load(const char *path, const parload_options *opts,
			     parload_dataset *out);

/* Release what a dataset owns and zero it.  NULL and zeroed datasets are
 * fine. */
PARLOAD_API void parload_dataset_free(parload_dataset *ds);

/* A reusable loader: it owns the topology and the thread pool, so a program
 * that loads many files discovers the machine and starts threads once.  One
 * loader serves one load at a time; use one loader per application thread
 * that loads concurrently. */
typedef struct parload_loader parload_loader;

PARLOAD_API int parload_loader_new(parload_loader **out,
				   const parload_options *opts,
				   parload_error *err);
PARLOAD_API void parload_loader_free(parload_loader *loader);
/* The number of worker threads the loader runs. */
PARLOAD_API unsigned parload_loader_threads(const parload_loader *loader);

/* Memory the caller owns (parload_request.into): pinned buffers, buffers
 * reused from file to file, or arrays of a library that wants to own its
 * memory.  Sizes are in bytes. */
typedef struct parload_buffers {
	parload_view_header *headers;
	size_t headers_size;
	void *pixels;
	size_t pixels_size;
	/* A raw stream's view headers (dataset.raw_headers); may be NULL
	 * with size 0 when the request says PARLOAD_REQ_NO_RAW_HEADERS or
	 * the layout has none. */
	unsigned char *raw_headers;
	size_t raw_headers_size;
} parload_buffers;

/* Allocate buffers for a selection (sel NULL: everything) of a source
 * described by d (resolved: parload_describe) in one anonymous mapping,
 * laid out the way parload lays out its own datasets (which, under a huge
 * page of pixels, are heap blocks instead): the headers ending where the
 * pixels begin, the pixels on a 2 MiB boundary when they fill a huge page,
 * and the whole advised for transparent huge pages unless flags holds
 * PARLOAD_OPT_NO_HUGEPAGES.  A first load into them costs far
 * fewer page faults than one into 4 KiB pages of malloc().  The sizes are
 * exactly what the selection needs; nothing selected gets NULL arrays.
 * Pages are not touched here, so each lands on the NUMA node of the
 * worker that first writes it.  PARLOAD_EINVAL for an invalid
 * description, PARLOAD_ESELECT for an invalid selection, PARLOAD_ENOMEM
 * when the memory cannot be had (checked against RAM, swap and the
 * process's limits first).  Release with parload_buffers_free(), passing
 * the struct as this call filled it in. */
PARLOAD_API int parload_buffers_alloc(parload_buffers *out,
				      const parload_desc *d,
				      const parload_selection *sel,
				      unsigned flags, parload_error *err);
PARLOAD_API void parload_buffers_free(parload_buffers *b);
/* Check views a caller read itself (into such buffers, say) as a load
 * checks them: ds->headers and ds->pixels hold the ds->shape.views views
 * of ds->shape, laid out as a load lays them out, of a stream described by
 * ds->desc.  In parload's own format each view's view_index must be its
 * index in the file (PARLOAD_EVIEWINDEX).  With PARLOAD_OPT_VERIFY_CRC in
 * flags, on a file that stores CRCs, each payload must match its CRC-32C:
 * the first that does not fails with PARLOAD_ECRC or, with
 * PARLOAD_OPT_KEEP_GOING, every one is listed in ds->bad_views (which must
 * be NULL before; freed by parload_dataset_free(), which leaves the arrays
 * alone when ds->internal_ is zeroed) and the check succeeds.
 * ds->stats.crc_checked says how many payloads were checked.  A CRC
 * covers a whole payload: PARLOAD_OPT_VERIFY_CRC on a shape of some rows
 * or columns is PARLOAD_ENOTSUP before any view is looked at, so
 * ds->headers NULL asks only that, before reading.  A raw stream has
 * nothing to check.  path names the stream in messages. */
PARLOAD_API int parload_check_views(parload_dataset *ds, unsigned flags,
				    const char *path, parload_error *err);

/* ---------------------------------------------------------------------
 * Requests: one load described in full, the one door into the library.
 * ------------------------------------------------------------------- */

/* One batch of views delivered while a load runs (parload_request.on_batch
 * or parload_stream_next): output views [first, first + count), in file
 * order, each completely read and, with PARLOAD_OPT_VERIFY_CRC, checked. */
typedef struct parload_batch {
	uint64_t first;
	uint64_t count;
	/* count headers and count * shape.view_bytes pixel bytes in view
	 * layout.  Into the dataset's arrays, valid as long as the dataset;
	 * with a window (parload_request.window_bytes), into a window that is
	 * reused once the callback returns or the next batch is asked for. */
	const parload_view_header *headers;
	const void *pixels;
	uint64_t view_bytes; /* pixel bytes of one view: shape.view_bytes */
	/* count * raw_header_size bytes of a raw stream's view headers, or
	 * NULL (dataset.raw_headers). */
	const unsigned char *raw_headers;
	uint64_t raw_header_size;
	/* Progress: of the whole load, this batch included. */
	uint64_t views_done, views_total;
	uint64_t bytes_done, bytes_total;
	double seconds; /* since the load began */
} parload_batch;

/* A load's progress (parload_request.progress), kept as it runs, for a
 * display on another thread without batches, which reads the fields with
 * relaxed atomic loads (__atomic_load_n(&p->bytes_done, __ATOMIC_RELAXED)).
 * The bytes are those the load reads of each selected view, its header
 * where read and its rows (parload_batch's bytes_done and bytes_total). */
typedef struct parload_progress {
	/* Set once the load knows them, before it reads; 0 until then. */
	uint64_t views_total, bytes_total;
	/* Added to by the parallel strategy's workers after each read; the
	 * other strategies and streams set it to bytes_total at the end. */
	uint64_t bytes_done;
} parload_progress;

/* Called on the thread that made the request, once per batch, in order.
 * Return 0 to go on; anything else stops the load, which then returns
 * PARLOAD_ECANCELED. */
typedef int (*parload_batch_fn)(const parload_batch *batch, void *arg);

/* Called on the thread that made the request while it waits for the load
 * (parload_request.on_wait).  Return 0 to go on; anything else stops the
 * load, which then returns PARLOAD_ECANCELED. */
typedef int (*parload_wait_fn)(void *arg);

/* parload_request.flags */
/* Follow a file still being written: wait for views not yet in the file
 * (and for a file shorter than its header) until the header's view_count
 * (a raw stream's count, which must then be given) is reached or timeout
 * seconds pass with no growth.  Then the load fails with
 * PARLOAD_ETRUNCATED naming the complete views, or, with
 * PARLOAD_OPT_ALLOW_TRUNCATED, succeeds with them.  A stream is read as
 * it comes: following one (with or without on_batch) gives a FIFO's
 * writer timeout seconds to come, then PARLOAD_ETRUNCATED. */
#define PARLOAD_REQ_FOLLOW 0x1u
/* Do not read a raw stream's own view headers (dataset.raw_headers NULL):
 * only the pixels are read. */
#define PARLOAD_REQ_NO_RAW_HEADERS 0x2u

typedef struct parload_request {
	parload_source source; /* what to read */
	/* NULL: the loader's options.selection. */
	const parload_selection *selection;
	/* NULL: the dataset owns its arrays; else the caller's memory, sized
	 * for the selection (parload_buffers_alloc). */
	const parload_buffers *into;

	/* Delivery while the load runs (parallel strategy, view layout). */
	parload_batch_fn on_batch;
	void *batch_arg;
	uint64_t batch_views;  /* views per batch; 0: the default below */
	uint64_t batch_bytes;  /* or pixel bytes per batch (if batch_views 0);
				* 0 and 0: about 4 MiB at first, and
				* a file's next batches each twice the
				* last, up to 32 MiB (through a window,
				* 4 MiB at most) */
	/* Out-of-core: with on_batch, read through windows of at most this
	 * many bytes (at least one view each), reused, instead of a dataset
	 * that holds every view: the dataset then has no arrays (headers and
	 * pixels NULL), only its shape and stats.  0: no windows. */
	uint64_t window_bytes;
	unsigned flags;        /* PARLOAD_REQ_* */
	double timeout;        /* PARLOAD_REQ_FOLLOW: seconds without growth */
	/* When not NULL: the load ends with PARLOAD_ECANCELED once *cancel
	 * is non-zero, checked before each batch, while it waits for a file
	 * still being written or for a FIFO's writer, and, with the
	 * parallel strategy, by each worker before each of its reads (so a
	 * load without batches ends within a read of max_read bytes a
	 * worker too).  Set it from another thread or a signal handler. */
	const volatile int *cancel;
	/* What the load leaves in the page cache (PARLOAD_CACHE_KEEP by
	 * default); pipes and sockets have no page cache to spare. */
	parload_cache cache;
	/* NULL: the pixels as the file holds them.  Else they are corrected
	 * (above) and delivered as float32 (shape.pixel_type), by the
	 * parallel strategy from a regular file; the references are reduced
	 * once, before the scan is read.  A CRC covers the raw payload, which
	 * a corrected load does not keep: PARLOAD_OPT_VERIFY_CRC with a
	 * correction is PARLOAD_ENOTSUP. */
	const parload_correction *correct;
	/* When not NULL: the load's progress (above), which the caller zeroes
	 * first. */
	parload_progress *progress;
	/* The caller's turn while the parallel strategy's workers read: when
	 * not NULL, on_wait(wait_arg) is called on the thread that made the
	 * request as soon as it waits for the workers (each pass: the whole
	 * file, a batch, a list of files opened, a correction's references)
	 * and then every wait_interval seconds (0: 0.02) until they finish,
	 * and so while it waits for a followed file to grow or, whatever
	 * the strategy, for a FIFO's writer; with one thread, which reads
	 * on the caller's thread, before its first read and then between
	 * reads when due.  wait_interval runs from 0 to 86400, else
	 * PARLOAD_EINVAL.  A non-zero return stops the load: the
	 * workers stop before their next read and the load returns
	 * PARLOAD_ECANCELED, even if every byte was in already (the answer
	 * stands), its dataset empty.  For what must run on the caller's
	 * thread while the load runs, where a cancel flag set from another
	 * thread cannot reach: Python's signal handlers (Ctrl-C), an event
	 * loop.  Not with parload_stream_open, whose caller waits in
	 * parload_stream_next. */
	parload_wait_fn on_wait;
	void *wait_arg;
	double wait_interval;
} parload_request;

/* Defaults: an empty source, the loader's selection, own memory, no
 * batches, 10 s follow timeout. */
PARLOAD_API void parload_request_init(parload_request *req);
/* parload_describe of req->source as parload_loader_run would describe
 * it for req: with PARLOAD_REQ_FOLLOW a file still shorter than its
 * header is waited for as the load waits for it (sleeping from 1 ms up
 * to 10 ms between looks at its size, until req->timeout seconds pass
 * without growth; req->cancel and req->on_wait stop the wait, which is
 * then PARLOAD_ECANCELED), and a followed file describes the views it
 * promises (its header's view_count, a raw layout's count).  The rest of
 * req (selection, batches, correction) is not looked at. */
PARLOAD_API int parload_describe_request(const parload_request *req,
					 int allow_truncated,
					 parload_desc *out,
					 parload_error *err);
/* Run one load.  A regular file is read by the loader's strategy with
 * pread where it can (a caller's descriptor keeps its file offset).  A
 * pipe, socket or character device (standard input, say) is read
 * sequentially, each record as it arrives, with the same checks and the
 * same result as a load of the file: the header is validated, the arrays
 * are allocated for its view count, and the stream must then end exactly
 * after the last view (PARLOAD_ETRAILING if it goes on, PARLOAD_ETRUNCATED
 * or, with PARLOAD_OPT_ALLOW_TRUNCATED, the complete views if it stops
 * early); such a load reports the sequential strategy and one thread.  A
 * directory is PARLOAD_ENOTREG. */
PARLOAD_API int parload_loader_run(parload_loader *loader,
				   const parload_request *req,
				   parload_dataset *out, parload_error *err);
/* The pull form of on_batch, for callers that prefer asking for the next
 * batch (an iterator): req->on_batch must be NULL.  The load runs on a
 * thread of its own and waits, at most one batch ahead, for each
 * parload_stream_next(). */
typedef struct parload_stream parload_stream;
PARLOAD_API int parload_stream_open(parload_stream **out,
				    parload_loader *loader,
				    const parload_request *req,
				    parload_error *err);
/* 1: *batch is the next batch, valid until the next call; 0: every view
 * was delivered; or a negative code (the load failed or was closed). */
PARLOAD_API int parload_stream_next(parload_stream *s, parload_batch *batch,
				    parload_error *err);
/* End the stream, cancelling the load if it is still running, and free
 * it.  Returns the load's result: 0 once every view was delivered (then
 * *out, when not NULL, receives the dataset, as parload_loader_run would
 * fill it), PARLOAD_ECANCELED for a stream closed early, or the load's
 * error.  The loader is free for another load once it returns. */
PARLOAD_API int parload_stream_close(parload_stream *s, parload_dataset *out);

/* ---------------------------------------------------------------------
 * Settings: a request in text, the vocabulary of every program that loads
 * (the parload command's load options, parload-mpi's, python -m parload's
 * and Python's keywords): one key each, its value's rules, its limits and
 * its message written once, here.
 * ------------------------------------------------------------------- */

/* What the keys set.  Strings (raw's text aside) are kept as pointers to
 * the value given, which must outlive the settings. */
typedef struct parload_settings {
	/* threads, strategy, io, buffer, max-read, the flags (no-bind,
	 * no-hugepages, verify, keep-going, allow-truncated, map-sinograms)
	 * and the selection (views, rows, cols, layout). */
	parload_options options;
	parload_desc desc;      /* raw=SPEC (parload_desc_parse) */
	int raw;                /* raw given: desc is the source's layout */
	const char *dataset;    /* dataset=PATH */
	parload_frames frames;  /* frames=NAME */
	unsigned source_flags;  /* confine: PARLOAD_SRC_CONFINE */
	parload_cache cache;    /* cache=NAME */
	unsigned request_flags; /* follow: PARLOAD_REQ_FOLLOW */
	double timeout;         /* timeout=SECONDS (10 by default) */
	/* darks=SRC, flats=SRC ("same": the scan's own file's darks or
	 * flats), reduce=NAME, minus-log, bin=N: on once any asks for a
	 * correction (bin=1 does not). */
	const char *refs[2];    /* darks, flats */
	parload_correction correct;
	int correct_on;
	/* verify-seed=N: the data is parload gen's with this seed, which a
	 * program checks after the load (the library does not); not with a
	 * correction, which delivers other pixels. */
	int verify_seed;
	uint64_t seed;
	/* Filled by parload_settings_apply: what the request points to. */
	parload_refs refs_[2];
} parload_settings;

/* The defaults: parload_options_init's, the whole file, keep, 10 s. */
PARLOAD_API void parload_settings_init(parload_settings *s);
/* Set key to value (NULL for a key that takes none), as the programs'
 * options --KEY VALUE do.  The keys: threads (0 to PARLOAD_THREADS_MAX),
 * strategy, io, buffer and max-read (sizes, parload_size_parse), no-bind,
 * no-hugepages, verify, keep-going (and verify), allow-truncated,
 * map-sinograms, verify-seed (0 to 2^64 - 1), follow, timeout (seconds,
 * above 0 and at most 86400), cache, raw (once), dataset, frames,
 * confine, views (A:B:S), rows and cols (A:B), layout, darks, flats,
 * reduce, minus-log and bin (1 or more); names as parload_name_parse
 * takes them.  "key=value" with value NULL is the same as key and value
 * apart.  PARLOAD_EINVAL with err (may be NULL) saying what is wrong, in
 * the words every program prints: "invalid thread count '5000' (0 to
 * 4096)", "unknown key 'x'", "--minus-log takes no value"; *s is then as
 * it was. */
PARLOAD_API int parload_settings_set(parload_settings *s, const char *key,
				     const char *value, parload_error *err);
/* Fill req (its source, path or paths, already set by the caller) from s:
 * the source's layout, dataset, frames and flags, the selection, the
 * page-cache mode, follow and its timeout, and the correction (its
 * references' sources: the file with s's layout, or "same").  req points
 * into s, which must outlive the load. */
PARLOAD_API void parload_settings_apply(parload_settings *s,
					parload_request *req);

/* ---------------------------------------------------------------------
 * Format helpers
 * ------------------------------------------------------------------- */

/* Bytes per pixel of a pixel type, 0 if the type is unknown. */
PARLOAD_API unsigned parload_pixel_size(int pixel_type);
/* "u8", "u16", ... or NULL if unknown; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_pixel_name(int pixel_type);
PARLOAD_API int parload_pixel_from_name(const char *name);

/* Fill a valid header for view_count views of width x height pixels. */
PARLOAD_API int parload_file_header_init(parload_file_header *h,
					 uint64_t view_count, uint32_t width,
					 uint32_t height, int pixel_type,
					 uint32_t flags);

/* Decode and validate a file header from len bytes (no I/O): byte order,
 * magic, version, sizes, pixel type, geometry, flags and overflow.  path only
 * names the source in messages and may be NULL. */
PARLOAD_API int parload_parse_file_header(const void *bytes, size_t len,
					  const char *path,
					  parload_file_header *out,
					  parload_error *err);

/* The file size a valid header promises; PARLOAD_EOVERFLOW if it does not
 * fit in 64 bits. */
PARLOAD_API int parload_file_size(const parload_file_header *h, uint64_t *size);

/* Read, validate and check a file's header against the file's size. */
PARLOAD_API int parload_read_header(const char *path, parload_file_header *out,
				    parload_error *err);
/* Read the first 64 bytes of path and decode them field by field without
 * validating anything but the magic: what `parload info` shows of a
 * damaged file.  PARLOAD_ETRUNCATED if the file is shorter, PARLOAD_EMAGIC
 * if it is not a raw image stream.  Never waits for a FIFO's writer. */
PARLOAD_API int parload_peek_header(const char *path, parload_file_header *out,
				    parload_error *err);
/* Byte offset of view i's header in a file with header h; view_count
 * (one past the last view) gives the size the file must have. */
PARLOAD_API uint64_t parload_view_offset(const parload_file_header *h,
					 uint64_t i);

/* ---------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------- */

typedef struct parload_writer parload_writer;

/* Create (or truncate) path and write the file header h, which must be
 * valid (parload_file_header_init makes one). */
PARLOAD_API int parload_writer_open(parload_writer **out, const char *path,
				    const parload_file_header *h,
				    parload_error *err);
/* Append one view.  vh may be NULL for a zero header; view_index is set to
 * the view's position, and crc32c is computed when the file header asks for
 * it.  pixels holds payload_size bytes. */
PARLOAD_API int parload_writer_add(parload_writer *w,
				   const parload_view_header *vh,
				   const void *pixels, parload_error *err);
/* Write out what is buffered, so that a reader following the file
 * (PARLOAD_REQ_FOLLOW) sees every view added so far. */
PARLOAD_API int parload_writer_flush(parload_writer *w, parload_error *err);
/* Flush and close.  Fails with PARLOAD_ECOUNT if fewer views than
 * view_count were added.  The writer is freed either way. */
PARLOAD_API int parload_writer_close(parload_writer *w, parload_error *err);

/* ---------------------------------------------------------------------
 * Writing TIFF and HDF5 (what ImageJ, tifffile, h5py, TomoPy open)
 * ------------------------------------------------------------------- */

/* Pixels in memory to write: n pages of rows x cols pixels of pixel_type,
 * C order, the host's byte order.  In views layout page k is view k; in
 * sinogram layout (pixels[r][k][c]) page r is the sinogram of row r,
 * rows being its views. */
typedef struct parload_stack {
	const void *pixels;
	int pixel_type;         /* PARLOAD_PIXEL_* */
	uint64_t n;             /* pages */
	uint32_t rows, cols;    /* of a page */
	parload_layout layout;
	const float *angles;    /* of the views, in degrees, or NULL */
	uint64_t angle_count;   /* entries of angles */
} parload_stack;

/* The stack of a loaded dataset: its pixels, type, shape and layout, and
 * the angles of its view headers when any is not 0.  NULL angles for a
 * dataset without headers.  The angles live in the dataset's headers: the
 * stack holds a pointer only when the caller passes an array of
 * ds->shape.views floats to fill (angles_buf), else none. */
PARLOAD_API void parload_stack_of(parload_stack *st, const parload_dataset *ds,
				  float *angles_buf);

typedef enum parload_save_format {
	PARLOAD_SAVE_AUTO = 0, /* from the path's extension
				* (parload_save_format_of) */
	PARLOAD_SAVE_TIFF = 1, /* one page per view (or sinogram); classic
				* TIFF when the file stays below 4 GiB, else
				* BigTIFF */
	PARLOAD_SAVE_HDF5 = 2, /* DXchange: the pages as a 3-D dataset chunked
				* one page per chunk, /exchange/theta from the
				* angles */
	PARLOAD_SAVE_NPY = 3,  /* NumPy's .npy 1.0: (pages, rows, cols), C
				* order, little-endian; no angles */
	PARLOAD_SAVE_PNG = 4,  /* one page as a grey image: 8-bit through a
				* contrast window, or 16-bit unscaled
				* (png_depth); a stack of several pages is
				* refused; needs libpng */
	PARLOAD_SAVE_ZARR = 5  /* a Zarr store (a directory): v2 by default
				* (zarr_format 3: v3, shard), the array
				* (pages, rows, cols) in chunks (chunks), each
				* compressed (compress), the angles in the
				* array's attributes as "angles" */
} parload_save_format;

/* The format a file's name says, case-insensitively, by the extension
 * of its last element (which has a name before the dot): .tif .tiff
 * (TIFF), .h5 .hdf5 .hdf .nxs .cxi (HDF5), .npy, .png, .zarr;
 * PARLOAD_SAVE_AUTO for none.  The one table parload_save, `parload extract -o` and Python's
 * parload.save share. */
PARLOAD_API parload_save_format parload_save_format_of(const char *path);
/* The format that reads path by its name alone, case-insensitively:
 * "nhdr" (a NRRD detached header), "nrrd" (attached), "tiff", "hdf5",
 * "npy", "png" (written only: a load refuses it), "zarr", or NULL for none
 * (parload's own format, or a raw layout).  A
 * load looks at a regular file's first bytes before its name: this is
 * the rule it falls back to, for a file that does not exist yet. */
PARLOAD_API const char *parload_format_named(const char *path);

#define PARLOAD_SAVE_FORCE 0x1u /* replace an existing file (or Zarr
				 * store: a directory holding .zarray,
				 * .zgroup or zarr.json, never another) */
#define PARLOAD_SAVE_WINDOW 0x2u /* PNG: window_lo and window_hi are set */

typedef struct parload_save_options {
	parload_save_format format;
	/* HDF5: the dataset's path; NULL: /exchange/data for views, and for
	 * sinograms /exchange/sinograms (with an attribute axes =
	 * "rows:views:columns"), so that a DXchange reader never takes
	 * sinograms for projections. */
	const char *dataset;
	int gzip;               /* HDF5: deflate level 1-9 with shuffle; 0 none */
	unsigned flags;         /* PARLOAD_SAVE_* */
	/* NULL: parload_save makes its own temporary file beside path
	 * (parload_temp_create) and puts it in place (parload_temp_place).
	 * Else the caller's: an empty file parload_temp_create made for
	 * path, which parload_save writes (errors still name path) and
	 * leaves where it is, written or not, for the caller to put in place
	 * or remove; a program that removes its temporary file when a signal
	 * ends it (as the parload command does) so knows its name all the
	 * time it exists.  flags' PARLOAD_SAVE_FORCE is then the caller's to
	 * pass to parload_temp_place. */
	const char *tmp;
	/* PNG: 8 (or 0) for 8-bit grey, value v written as
	 * round(255 * (v - lo) / (hi - lo)) clamped to 0..255 (NaN: 0), lo
	 * and hi being window_lo and window_hi with PARLOAD_SAVE_WINDOW, else
	 * the 0.5th and 99.5th percentiles of the page's values (NaN left
	 * out; of the n sorted values, those at floor(p * (n - 1))); lo ==
	 * hi writes 0 up to lo, 255 above.  16 for 16-bit grey with the
	 * values unscaled: integer pixel types, every value 0 to 65535. */
	int png_depth;
	double window_lo, window_hi;
	/* HDF5 and Zarr: the chunks' compression (PARLOAD_COMPRESS_*; HDF5
	 * takes gzip only, as gzip above) and its level, 0 for the codec's
	 * default (parload_save_compress parses "zstd=5" into both). */
	int compress;
	int level;
	/* Zarr: the chunk's shape (pages, rows, cols), 0 in a dimension for
	 * all of it, a size past the array's cut to it; all three 0 (the
	 * default): one page per chunk.  A chunk past the array's edge is
	 * padded with zeros (the fill value), as Zarr wants. */
	uint64_t chunks[3];
	int zarr_format;        /* Zarr: 2 (or 0) or 3 */
	uint32_t shard;         /* Zarr v3: shards of this many chunks along the
				 * pages (sharding_indexed, its index at the
				 * end, with crc32c), cut to the chunks there
				 * are; 0 none */
	unsigned threads;       /* Zarr: the threads that encode and write the
				 * chunks; 0: one a CPU the process may use */
} parload_save_options;

PARLOAD_API void parload_save_options_init(parload_save_options *o);

/* The compressions parload_save writes (HDF5: gzip alone): zstd (level 1
 * to 22, default 3), blosc (Blosc 1 with LZ4 inside and byte shuffle,
 * level 1 to 9, default 5), gzip (level 1 to 9, default 4). */
#define PARLOAD_COMPRESS_MAP(X)                                                \
	X(NONE, 0, "none")                                                     \
	X(ZSTD, 1, "zstd")                                                     \
	X(BLOSC, 2, "blosc")                                                   \
	X(GZIP, 3, "gzip")

typedef enum parload_compress {
#define PARLOAD_COMPRESS_ENUM_(name, value, text)                              \
	PARLOAD_COMPRESS_##name = (value),
	PARLOAD_COMPRESS_MAP(PARLOAD_COMPRESS_ENUM_)
#undef PARLOAD_COMPRESS_ENUM_
} parload_compress;

/* "none", "zstd", "blosc", "gzip" or NULL; and back (the value, or
 * PARLOAD_EINVAL). */
PARLOAD_API const char *parload_compress_name(int compress);
PARLOAD_API int parload_compress_from_name(const char *name);
/* "NAME" or "NAME=LEVEL" (zstd, blosc, gzip, none; `--compress` and
 * Python's compress=) into o->compress and o->level, the level checked
 * against the codec's range.  0, or PARLOAD_EINVAL saying what is
 * wrong (err may be NULL); o unchanged then. */
PARLOAD_API int parload_save_compress(parload_save_options *o,
				      const char *spec, parload_error *err);
/* Write st to path in the format o says (NULL: the defaults), through a
 * temporary file beside it put in place (parload_temp_place): nothing is
 * left behind on failure, and an existing path is refused (PARLOAD_EEXIST)
 * without PARLOAD_SAVE_FORCE.  PARLOAD_ENOTSUP for a format this build has
 * no library for (naming the configure option) or a type the format
 * cannot hold; PARLOAD_EINVAL for an unknown extension; PARLOAD_EWRITE
 * naming the path and the cause (errno's text: "No space left on device")
 * for a write that fails. */
PARLOAD_API int parload_save(const char *path, const parload_stack *st,
			     const parload_save_options *o,
			     parload_error *err);
/* A file written whole or not at all, as parload_save, parload_nrrd_write
 * and the parload command write theirs: under a hidden temporary name
 * beside path, DIR/.NAME.XXXXXX (the same file system), then put in
 * place.  parload_temp_create makes that file, empty, mode 0666 less the
 * umask, its name into tmp (cap bytes; PARLOAD_EINVAL if too short, or
 * for a path naming a directory; PARLOAD_EWRITE naming path and the
 * cause if it cannot be made; tmp is then "").  parload_temp_place puts
 * the complete file tmp in place as path: without PARLOAD_SAVE_FORCE
 * (flags) an existing path is refused atomically (link(2);
 * PARLOAD_EEXIST, tmp left as it is), on a file system without hard links
 * by a last check before the rename; with it path is replaced
 * (rename(2)).  PARLOAD_EWRITE naming path and the cause for anything
 * else; tmp is then the caller's to remove (unlink(2)).  A process killed
 * (SIGKILL, a crash, power lost) before either removes it leaves the
 * temporary file behind, which may be deleted. */
PARLOAD_API int parload_temp_create(const char *path, char *tmp, size_t cap,
				    parload_error *err);
PARLOAD_API int parload_temp_place(const char *tmp, const char *path,
				   unsigned flags, parload_error *err);
/* The same for a Zarr store, a directory: parload_temp_create_dir makes
 * the empty directory DIR/.NAME.XXXXXX beside path (mode 0777 less the
 * umask) for parload_save to fill (o->tmp), and parload_save_place puts
 * the complete tmp (a file or a store: the format o->format or path's
 * extension names) in place as path: a file as parload_temp_place does; a
 * store without PARLOAD_SAVE_FORCE only where path does not exist
 * (PARLOAD_EEXIST; refused atomically by renameat2(2)'s RENAME_NOREPLACE,
 * where the file system lacks it after a last check), with it replacing
 * only a Zarr store (a directory holding .zarray, .zgroup or zarr.json;
 * anything else is PARLOAD_EEXIST), which is renamed aside, the new one
 * renamed in, then the old removed.  parload_temp_remove removes tmp, a
 * file or a directory with everything in it (links not followed): 0, or
 * -1 with errno. */
PARLOAD_API int parload_temp_create_dir(const char *path, char *tmp,
					size_t cap, parload_error *err);
PARLOAD_API int parload_save_place(const char *tmp, const char *path,
				   const parload_save_options *o,
				   parload_error *err);
PARLOAD_API int parload_temp_remove(const char *tmp);
/* Whether this libparload has libtiff (compressed and tiled TIFF;
 * uncompressed striped TIFF is read, and TIFF written, without it) and
 * libhdf5 (HDF5, read and written; a contiguous dataset of a plainly
 * written file is read without it): built with the library and, where
 * that code is a module (the default build), the module found and opened
 * (which the first call does, once per process; see libparload(3)
 * "Modules"). */
PARLOAD_API int parload_has_tiff(void);
PARLOAD_API int parload_has_hdf5(void);

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (0 to start). */
PARLOAD_API uint32_t parload_crc32c(uint32_t crc, const void *data, size_t len);

/* The library's version, "0.1.0" */
PARLOAD_API const char *parload_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PARLOAD_H */
