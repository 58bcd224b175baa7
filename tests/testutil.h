/*
 * testutil.h - what the Check suites share: scratch files, deterministic
 * streams, an independent serial reader to compare loads against, streams
 * fed through pipes, and what the process holds.
 */
#ifndef PARLOAD_TESTUTIL_H
#define PARLOAD_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "parload.h"

#define TU_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A path in this process's scratch directory (made on first use, removed
 * at exit).  The string is the caller's to free. */
char *tu_path(const char *name);

/* Write a stream of the generator's content (cli/gen.c); aborts the test on
 * failure. */
void tu_write_stream(const char *path, uint64_t views, uint32_t width,
		     uint32_t height, int pixel_type, uint32_t flags,
		     uint64_t seed);

/* The shape of a stream, for tables of them. */
typedef struct tu_shape {
	uint64_t views;
	uint32_t width, height;
	int type;       /* PARLOAD_PIXEL_* */
	uint32_t flags; /* PARLOAD_FLAG_* */
} tu_shape;

/* tu_write_stream() of that shape. */
void tu_write_shape(const char *path, const tu_shape *s, uint64_t seed);

/* Write len bytes to path, replacing it. */
void tu_write_file(const char *path, const void *data, size_t len);
/* Overwrite len bytes at offset. */
void tu_patch(const char *path, uint64_t offset, const void *data, size_t len);
/* Cut or extend (with zeros) to len bytes. */
void tu_truncate(const char *path, uint64_t len);
/* Flip every bit of the byte at offset (twice restores it). */
void tu_flip(const char *path, uint64_t offset);
/* The whole file in a fresh buffer one byte longer than *len, for a
 * trailing byte. */
unsigned char *tu_read_all(const char *path, size_t *len);
uint64_t tu_file_size(const char *path);

/* Where view v's header and its payload start in a stream of payloads of
 * payload_size bytes. */
uint64_t tu_view_off(uint64_t payload_size, uint64_t v);
uint64_t tu_payload_off(uint64_t payload_size, uint64_t v);

/* A stream of TU_CRC_VIEWS views of 33 x 17 u16 (TU_CRC_PS bytes each),
 * with flags (PARLOAD_FLAG_CRC32C or 0). */
#define TU_CRC_VIEWS 10
#define TU_CRC_PS ((uint64_t)33 * 17 * 2)
char *tu_crc_stream(const char *name, uint32_t flags);

/* The caller's memory for views views of payload_size bytes each, from
 * malloc (not zeroed); tu_buffers_free() gives it back. */
void tu_buffers_new(parload_buffers *b, uint64_t views,
		    uint64_t payload_size);
void tu_buffers_free(parload_buffers *b);

/* The reference: read path with nothing but fread, one record after the
 * other, into freshly allocated arrays.  Returns 0, or -1 if the file is
 * not a complete stream. */
typedef struct tu_soa {
	unsigned char file_header[64];
	uint64_t view_count;
	uint64_t payload_size;
	unsigned char *headers; /* view_count * 32 bytes */
	unsigned char *pixels;  /* view_count * payload_size bytes */
} tu_soa;
int tu_serial_read(const char *path, tu_soa *out);
void tu_soa_free(tu_soa *s);

/* Assert that a dataset equals the reference byte for byte. */
void tu_assert_same(const parload_dataset *ds, const tu_soa *ref);
/* ds holds the first n views of ref, byte for byte. */
void tu_assert_prefix(const parload_dataset *ds, const tu_soa *ref,
		      uint64_t n, const char *what);
/* A failed load left nothing behind. */
void tu_assert_empty(const parload_dataset *ds, const char *what);
/* ds lists exactly the n bad views in want. */
void tu_assert_bad_views(const parload_dataset *ds, const uint64_t *want,
			 uint64_t n, const char *what);

/* How tu_load_fed() hands the bytes over. */
enum { TU_VIA_PIPE, TU_VIA_SOCKET, TU_VIA_PIPE_NONBLOCK };

/* parload_loader_load_fd() of a pipe or socket into which a thread writes
 * len bytes of data, chunk bytes per write(), and closes its end; the
 * stream is named name, and err is cleared first.  A writer whose reader
 * stopped early gets EPIPE, not a signal. */
int tu_load_fed(parload_loader *l, const unsigned char *data, size_t len,
		size_t chunk, int via, const char *name, parload_dataset *ds,
		parload_error *err);
/* The same, read as the layout d says (NULL: parload's own format). */
int tu_load_fed_as(parload_loader *l, const parload_desc *d,
		   const unsigned char *data, size_t len, size_t chunk,
		   int via, const char *name, parload_dataset *ds,
		   parload_error *err);

/* Entries of a directory, "." and ".." aside, hidden ones (a temporary
 * file's) included (/proc/self/task, fd; what a writer left). */
int tu_count_entries(const char *dir);
/* Under valgrind everything is slower and memory is valgrind's. */
bool tu_under_valgrind(void);

/* ---- running a program: the one harness the Check programs share ---- */

/* What to run and how. */
typedef struct tu_cmd {
	const char *const *argv; /* argv[0] is the program's path; NULL ends */
	const char *const *env;  /* "NAME=value" sets, "NAME" unsets; NULL
				  * ends it, and NULL is the test's own */
	const char *in;  /* standard input opened from this path (a file, a
			  * FIFO); NULL: /dev/null */
	bool in_pipe;    /* standard input is a pipe: tu_proc.in writes it */
	const char *out; /* standard output opened on this path (a terminal,
			  * /dev/full); NULL: captured */
	const char *err; /* the same for standard error */
	const char *dir; /* where captures go; NULL: tu_path()'s directory */
	double timeout;  /* tu_wait() kills it and fails the test after this
			  * many seconds; 0: no limit of its own */
} tu_cmd;

/* A program that runs. */
typedef struct tu_proc {
	pid_t pid;
	int in;                  /* the write end of its stdin pipe, or -1 */
	char *out_path, *err_path; /* its captures (NULL: not captured) */
	double timeout;
} tu_proc;

/* How it ended and what it wrote. */
typedef struct tu_result {
	int status;  /* exit status, or 128 + signal as a shell shows it */
	int signal;  /* the signal that ended it, or 0 */
	char *out;   /* captured standard output, NUL-terminated ("" when it
		      * went elsewhere) */
	char *err;
	size_t out_len, err_len;
} tu_result;

/* Start c.  SIGINT, SIGTERM and SIGPIPE are the default ones in the
 * program (as in a shell's foreground) whatever this process does; this
 * process ignores SIGPIPE from then on. */
void tu_spawn(const tu_cmd *c, tu_proc *p);
/* Whether p has ended (it is then reaped into r); never blocks. */
bool tu_ended(tu_proc *p, tu_result *r);
/* Wait for p to end, within its timeout, and read its captures (which
 * are then removed); then close p->in if still open. */
void tu_wait(tu_proc *p, tu_result *r);
/* tu_spawn() then tu_wait(). */
void tu_run_cmd(const tu_cmd *c, tu_result *r);
void tu_result_free(tu_result *r);
/* What p has written to standard error so far (the caller frees it). */
char *tu_err_so_far(const tu_proc *p);
/* Append to args, from args[n], each of the count options names[i] with
 * its values[i], those whose value is not NULL; the new n. */
int tu_add_options(const char **args, int n, const char *const *names,
		   const char *const *values, int count);
/* Write len bytes to fd; false once the reader is gone. */
bool tu_feed(int fd, const void *data, size_t len);

/* The parload command that `make check` built ($PARLOAD_BIN), or NULL
 * when it is not set. */
const char *tu_parload_bin(void);
/* For main(): say why prog cannot run here, and return 77, which
 * automake reports as SKIP. */
int tu_skip(const char *prog, const char *why);

/* A test case of s, each test stopped after timeout seconds (0: Check's
 * default). */
TCase *tu_tcase(Suite *s, const char *name, double timeout);
/* Run a suite; the exit status for main(). */
int tu_run(Suite *s);

/* A loader of threads workers (unbound), strategy and option flags. */
parload_loader *tu_loader(unsigned threads, int strategy, unsigned flags);
/* parload_loader_run of path (a selection and the caller's buffers may
 * be NULL), or of descriptor fd named name. */
int tu_load(parload_loader *l, const char *path, const parload_selection *sel,
	    const parload_buffers *into, parload_dataset *ds,
	    parload_error *err);
int tu_load_fd(parload_loader *l, int fd, const char *name,
	       parload_dataset *ds, parload_error *err);
/* The 64-byte header of parload's own format that a dataset's
 * description stands for (all zeros for a raw layout). */
parload_file_header tu_ds_header(const parload_dataset *ds);
/* parload_buffers_alloc and parload_selection_resolve for a file of
 * parload's own format with header h. */
int tu_buffers_alloc(parload_buffers *b, const parload_file_header *h,
		     const parload_selection *sel, unsigned flags,
		     parload_error *err);
int tu_resolve(const parload_file_header *h, const parload_selection *sel,
	       parload_shape *out, parload_error *err);

/* The extent plan (src/model/plan.c) of shape s of a file of parload's own
 * format with header h, into the given arrays. */
struct parload__plan;
void tu_plan_init(struct parload__plan *p, const parload_file_header *h,
		  const parload_shape *s, void *headers, void *pixels);

/* parload__readahead_reach (src/io/cache.c) of the file at path: how much
 * of each share a drop load's worker holds. */
uint64_t tu_readahead_reach(const char *path);

/* A program's tests in parts: part 0 runs everywhere, and each other part
 * is its own check_PROGRAMS entry (the same source built with
 * -DTU_PART=k) whose tests need something a machine may lack. */
typedef struct tu_part {
	const char *program;          /* its name in make check's summary */
	const char *(*why_not)(void); /* why it cannot run here, or NULL;
				       * NULL: it always runs */
	Suite *(*suite)(void);
} tu_part;
#ifndef TU_PART
#define TU_PART 0
#endif
/* Run part k of the n parts: its suite (tu_run), or, where its why_not()
 * gives a reason, print "program: SKIP: reason" and return 77, which make
 * check reports as SKIP. */
int tu_run_part(const tu_part *parts, int n, int k);

/* Why an RLIMIT_AS limit cannot be tried here (a sanitizer build, or
 * PARLOAD_TEST_NO_RLIMIT set, as make check-valgrind does), or NULL. */
const char *tu_why_no_rlimit(void);
/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM", "VmSize"). */
uint64_t tu_status_kib(const char *field);

#endif
