/*
 * mpitest.h - running a test program under the MPI launcher.
 *
 * make check runs each MPI test program directly.  mpitest_main() then
 * starts the program again under $PARLOAD_MPIEXEC once per rank count,
 * each run under timeout(1) (and each rank under alarm()), so that a hang
 * fails the test instead of stalling the build.  In the ranks it calls
 * the test body between MPI_Init and MPI_Finalize.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <stdint.h>

#include <parload_mpi.h>

/* The body of a test, run on every rank; dir is a directory of its own,
 * shared by the ranks of one run.  Fails through MT_CHECK. */
typedef void (*mpitest_fn)(const char *dir);

/* Runs body under 1..n ranks as counts[0..ncounts) says. */
int mpitest_main(int argc, char **argv, const int *counts, int ncounts,
		 mpitest_fn body);

/* 77 (and why, on stdout) where MPI tests cannot run, else 0; in an
 * AddressSanitizer build, the environment its ranks need. */
int mpitest_skip(void);

extern int mt_rank, mt_size;

/* A failed check ends the whole job (MPI_Abort): the other ranks may be
 * waiting in a collective. */
void mt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
#define MT_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond))                                                   \
			mt_fail(__FILE__, __LINE__, __VA_ARGS__);              \
	} while (0)

/* Write a stream of n views of w x h pixels of type, with CRCs when crc,
 * whose bytes follow from seed; rank 0 writes, every rank returns once it
 * is there. */
/* The request of a load of path, corrected by corr (NULL: not), in
 * storage of its own, valid until the next call. */
const parload_request *mt_request(const char *path,
				  const parload_correction *corr);

void mt_write(const char *path, uint64_t n, uint32_t w, uint32_t h,
	      int type, int crc, uint64_t seed);
/* The index of pixel (output view k, row r, column c) of a dataset of
 * shape s, in its layout. */
uint64_t mt_at(const parload_shape *s, uint64_t k, uint64_t r, uint64_t c);
/* The file loaded whole by one process with libparload: the reference
 * every part is compared with. */
void mt_reference(const char *path, parload_dataset *ds);

#endif
