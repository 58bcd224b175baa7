/*
 * agree.c - one outcome on every rank.
 *
 * A collective call must not leave some ranks waiting in a collective
 * that a failed rank never enters, nor report success on one rank and
 * failure on another.  Every phase of a load ends here: an MPI_Allreduce
 * finds the lowest failing rank, and that rank broadcasts its error, so
 * that every rank returns the same code and message and every rank leaves
 * the phase together.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void clear(parload_error *err, int code)
{
	memset(err, 0, sizeof(*err));
	err->code = code;
	err->view = PARLOAD_NONE;
	err->offset = PARLOAD_NONE;
}

int parload_mpi__fail(parload_error *err, int code, const char *path,
		      const char *fmt, ...)
{
	va_list ap;
	int n;

	clear(err, code);
	n = snprintf(err->message, sizeof(err->message), "%s: ",
		     path ? path : "(no file)");
	if (n < 0 || (size_t)n >= sizeof(err->message))
		return code;
	va_start(ap, fmt);
	vsnprintf(err->message + n, sizeof(err->message) - (size_t)n, fmt,
		  ap);
	va_end(ap);
	return code;
}

int parload_mpi__mpi_fail(parload_error *err, const char *path,
			  const char *call, int mpi_rc)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS || len <= 0)
		snprintf(text, sizeof(text), "MPI error %d", mpi_rc);
	return parload_mpi__fail(err, PARLOAD_EMPI, path, "%s failed: %s",
				 call, text);
}

/* "rank R: text", cut to fit: the text's end is what may be lost. */
static void prefix(parload_error *e, int rank, const char *text)
{
	size_t n = (size_t)snprintf(e->message, sizeof(e->message),
				    "rank %d: ", rank);
	size_t len = strlen(text);

	if (n >= sizeof(e->message))
		return;
	if (len > sizeof(e->message) - 1 - n)
		len = sizeof(e->message) - 1 - n;
	memcpy(e->message + n, text, len);
	e->message[n + len] = '\0';
}

/* The lowest rank of comm whose rc failed (*lowest; *size: none), this
 * rank *rank. */
static int lowest_failing(MPI_Comm comm, int rc, int *rank, int *size,
			  int *lowest, parload_error *err)
{
	int mine, mrc;

	if (MPI_Comm_rank(comm, rank) != MPI_SUCCESS ||
	    MPI_Comm_size(comm, size) != MPI_SUCCESS)
		return parload_mpi__fail(err, PARLOAD_EMPI, NULL,
					 "the communicator is not usable");
	mine = rc < 0 ? *rank : *size;
	mrc = MPI_Allreduce(&mine, lowest, 1, MPI_INT, MPI_MIN, comm);
	return mrc == MPI_SUCCESS ? 0 :
		parload_mpi__mpi_fail(err, NULL, "MPI_Allreduce", mrc);
}

/* The failing rank's error rc as every rank will report it: err's,
 * prefixed with the rank. */
static void rank_error(parload_error *e, int rank, int rc,
		       const parload_error *err)
{
	clear(e, rc);
	e->sys_errno = err->sys_errno;
	e->view = err->view;
	e->offset = err->offset;
	/* The failing call may have left no message: its code's text then
	 * says what failed. */
	prefix(e, rank, err->message[0] ? err->message : parload_strerror(rc));
}

int parload_mpi__agree(MPI_Comm comm, int rc, parload_error *err)
{
	parload_error e;
	int rank, size, lowest, mrc;

	mrc = lowest_failing(comm, rc, &rank, &size, &lowest, err);
	if (mrc)
		return mrc;
	if (lowest == size)
		return 0;
	if (rank == lowest)
		rank_error(&e, rank, rc, err);
	/* parload_error is plain data, the same on every rank of one
	 * program: bytes travel as they are. */
	mrc = MPI_Bcast(&e, (int)sizeof(e), MPI_BYTE, lowest, comm);
	if (mrc != MPI_SUCCESS)
		return parload_mpi__mpi_fail(err, NULL, "MPI_Bcast", mrc);
	*err = e;
	return e.code < 0 ? e.code : PARLOAD_EMPI;
}
