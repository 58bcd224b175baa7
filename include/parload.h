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

typedef enum parload_pixel_type {
	PARLOAD_PIXEL_U8 = 1,
	PARLOAD_PIXEL_U16 = 2,
	PARLOAD_PIXEL_I16 = 3,
	PARLOAD_PIXEL_U32 = 4,
	PARLOAD_PIXEL_I32 = 5,
	PARLOAD_PIXEL_F32 = 6,
	PARLOAD_PIXEL_F64 = 7
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
	X(ECOUNT, -21, "wrong number of views written")

typedef enum parload_errno {
#define PARLOAD_ERRNO_ENUM_(name, value, text) PARLOAD_##name = (value),
	PARLOAD_ERRNO_MAP(PARLOAD_ERRNO_ENUM_)
#undef PARLOAD_ERRNO_ENUM_
	PARLOAD_ERRNO_LAST_ = -22
} parload_errno;

/* Returned where a parload_error has no view or no byte offset to name. */
#define PARLOAD_NONE UINT64_MAX

/* Details of a failure, filled in by the call that failed. */
typedef struct parload_error {
	int code;           /* the negative code the call returned */
	int sys_errno;      /* errno behind it, or 0 */
	uint64_t view;      /* the view concerned, or PARLOAD_NONE */
	uint64_t offset;    /* the byte offset in the file, or PARLOAD_NONE */
	char message[512];  /* "FILE: what went wrong (view V, byte offset O)" */
} parload_error;

/* The text of a code ("bad magic: ..."); never NULL. */
PARLOAD_API const char *parload_strerror(int code);
/* The name of a code ("PARLOAD_EMAGIC"); never NULL. */
PARLOAD_API const char *parload_err_name(int code);

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

typedef enum parload_strategy {
	PARLOAD_STRATEGY_PARALLEL = 0, /* the thread pool with pread/preadv (default) */
	PARLOAD_STRATEGY_BULK,         /* read the whole file into a buffer, then split */
	PARLOAD_STRATEGY_SEQUENTIAL,   /* header, payload, ... each read into place */
	PARLOAD_STRATEGY_TWO_PASS,     /* all headers, then all payloads */
	PARLOAD_STRATEGY_MMAP          /* map the file, copy out */
} parload_strategy;

typedef enum parload_io {
	PARLOAD_IO_POSIX = 0, /* open/read/lseek */
	PARLOAD_IO_STDIO      /* fopen/fread/fseek */
} parload_io;

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
 * file_header.view_count becomes their number and stats.declared_views
 * keeps the header's.  A partial last record is dropped; a file shorter
 * than its file header, or longer than the header promises, still
 * fails. */
#define PARLOAD_OPT_ALLOW_TRUNCATED 0x10u

typedef struct parload_options {
	/* Worker threads for the parallel strategy; 0 means one per core the
	 * process may run on.  The other strategies use one thread. */
	unsigned threads;
	parload_strategy strategy;
	/* I/O API and user-space buffer of the single-threaded strategies:
	 * buffer_size 0 is unbuffered, PARLOAD_BUFFER_DEFAULT the API's own
	 * default (stdio's buffer; none for POSIX), anything else a buffer of
	 * that many bytes. */
	parload_io io;
	size_t buffer_size;
	/* Largest request of one read system call; 0 means the default
	 * (8 MiB).  Never more than the kernel's limit for one call. */
	size_t max_read;
	unsigned flags; /* PARLOAD_OPT_* */
	/* Where parload_load() stores the details of a failure; may be NULL. */
	parload_error *error;
} parload_options;

/* Set every field to its default. */
PARLOAD_API void parload_options_init(parload_options *opts);

/* ---------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------- */

/* What one load did. */
typedef struct parload_stats {
	double seconds;       /* from opening the file until the dataset was complete */
	uint64_t bytes_read;  /* bytes moved from the file into user memory */
	uint64_t read_calls;  /* read system calls issued (read, pread, preadv) */
	unsigned threads;     /* threads that read */
	parload_strategy strategy;
	/* view_count in the file's header; more than file_header.view_count
	 * only when PARLOAD_OPT_ALLOW_TRUNCATED loaded a truncated file. */
	uint64_t declared_views;
	/* Payloads whose CRC-32C was checked: every view with
	 * PARLOAD_OPT_VERIFY_CRC when the file stores CRCs, else 0. */
	uint64_t crc_checked;
} parload_stats;

typedef struct parload_dataset {
	parload_file_header file_header;
	parload_view_header *headers; /* view_count entries */
	void *pixels;                 /* view i at (char *)pixels + i * payload_size */
	parload_stats stats;
	void *internal_[2];           /* owned by libparload */
	/* With PARLOAD_OPT_KEEP_GOING: the views whose payload does not match
	 * its CRC-32C, in ascending order (NULL and 0 when there are none).
	 * Owned by the dataset, freed by parload_dataset_free(), also after
	 * parload_loader_load_into(). */
	uint64_t *bad_views;
	uint64_t bad_view_count;
} parload_dataset;

/* Load a whole file with one call.  opts may be NULL for the defaults.  On
 * success *out owns its arrays until parload_dataset_free(); on failure it
 * owns nothing and opts->error (if set) tells why.  A header whose arrays
 * need more memory than the machine has (RAM plus swap) or than the
 * process may map (RLIMIT_AS, RLIMIT_DATA) fails with PARLOAD_ENOMEM,
 * naming the bytes, before anything is allocated.  A file truncated or
 * extended by another process during the load gives an error or a
 * complete dataset, never a partial one reported as success. */
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
PARLOAD_API int parload_loader_load(parload_loader *loader, const char *path,
				    parload_dataset *out, parload_error *err);
PARLOAD_API void parload_loader_free(parload_loader *loader);

/* Memory the caller owns, for parload_loader_load_into(): pinned buffers,
 * buffers reused from file to file, or arrays of a library that wants to
 * own its memory.  Sizes are in bytes. */
typedef struct parload_buffers {
	parload_view_header *headers;
	size_t headers_size;
	void *pixels;
	size_t pixels_size;
} parload_buffers;

/* Load path into the caller's buffers, which must hold view_count view
 * headers and view_count * payload_size pixel bytes (parload_read_header
 * tells both; PARLOAD_ESPACE if they do not).  On success *out describes
 * the load and points at the caller's buffers, which parload_dataset_free()
 * leaves alone.  On failure their contents are unspecified. */
PARLOAD_API int parload_loader_load_into(parload_loader *loader,
					 const char *path,
					 const parload_buffers *into,
					 parload_dataset *out,
					 parload_error *err);
/* Allocate buffers for the arrays of a stream with file header h, laid out
 * the way parload lays out its own datasets: one anonymous mapping, the
 * headers ending where the pixels begin, the pixels on a 2 MiB boundary
 * when they fill a huge page, and the whole advised for transparent huge
 * pages unless flags holds PARLOAD_OPT_NO_HUGEPAGES.  A first load into
 * them costs far fewer page faults than one into 4 KiB pages of malloc().
 * The sizes are exactly what h needs; a stream of no views gets NULL
 * arrays.  Pages are not touched here, so each lands on the NUMA node of
 * the worker that first writes it.  PARLOAD_EINVAL for an invalid header,
 * PARLOAD_ENOMEM when the memory cannot be had (checked against RAM, swap
 * and the process's limits first).  Release with parload_buffers_free(),
 * passing the struct as this call filled it in. */
PARLOAD_API int parload_buffers_alloc(parload_buffers *out,
				      const parload_file_header *h,
				      unsigned flags, parload_error *err);
PARLOAD_API void parload_buffers_free(parload_buffers *b);
/* Load from an open descriptor; name names it in messages (NULL: "fd N").
 * The descriptor is not closed.  A regular file is loaded by the loader's
 * strategy, reading with pread where it can; its file offset is restored
 * afterwards.  A pipe, socket or character device (standard input, say) is
 * read sequentially, each record as it arrives, with the same checks and
 * the same result as a load of the file: the header is validated, the
 * arrays are allocated for its view_count, and the stream must then end
 * exactly after the last view (PARLOAD_ETRAILING if it goes on,
 * PARLOAD_ETRUNCATED or, with PARLOAD_OPT_ALLOW_TRUNCATED, the complete
 * views if it stops early).  Such a load reports the sequential strategy
 * and one thread whatever the loader's options.  A directory is
 * PARLOAD_ENOTREG. */
PARLOAD_API int parload_loader_load_fd(parload_loader *loader, int fd,
				       const char *name, parload_dataset *out,
				       parload_error *err);
/* The number of worker threads the loader runs. */
PARLOAD_API unsigned parload_loader_threads(const parload_loader *loader);

/* ---------------------------------------------------------------------
 * Format helpers
 * ------------------------------------------------------------------- */

/* Bytes per pixel of a pixel type, 0 if the type is unknown. */
PARLOAD_API unsigned parload_pixel_size(int pixel_type);
/* "u8", "u16", ... or NULL if unknown; and back (0 if unknown). */
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
/* Flush and close.  Fails with PARLOAD_ECOUNT if fewer views than
 * view_count were added.  The writer is freed either way. */
PARLOAD_API int parload_writer_close(parload_writer *w, parload_error *err);

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (0 to start). */
PARLOAD_API uint32_t parload_crc32c(uint32_t crc, const void *data, size_t len);

/* "1.0.0" */
PARLOAD_API const char *parload_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PARLOAD_H */
