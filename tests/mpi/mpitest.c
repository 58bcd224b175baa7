/*
 * mpitest.c - the launcher and the helpers of the MPI tests.
 */
#include "config.h"

#include "mpitest.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A run that takes longer has hung: the whole suite takes seconds. */
#define RUN_TIMEOUT 60

int mt_rank, mt_size;

void mt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rank %d of %d: FAIL %s:%d: ", mt_rank, mt_size,
		file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* Launch n ranks of self on dir.  Each launch keeps Open MPI's session
 * directory under dir (OMPI_MCA_orte_tmpdir_base; other MPIs ignore it):
 * Open MPI 4 makes /tmp/ompi.HOST.UID for every mpirun, and two that
 * start at once (make -j) race on that mkdir, one failing with "File
 * exists" before any rank runs (open-mpi/ompi#8510). */
static int launch(int argc, char **argv, const char *self, int n,
		  const char *dir)
{
	const char *mpiexec = getenv("PARLOAD_MPIEXEC");
	const char *flags = getenv("PARLOAD_MPIEXEC_FLAGS");
	char session[PATH_MAX];
	char timeout[16], count[16];
	char *args[64];
	int a = 0, status;
	pid_t pid;

	snprintf(timeout, sizeof(timeout), "%d", RUN_TIMEOUT);
	snprintf(count, sizeof(count), "%d", n);
	args[a++] = "timeout";
	args[a++] = "-k";
	args[a++] = "5";
	args[a++] = timeout;
	args[a++] = (char *)mpiexec;
	if (flags && *flags)
		args[a++] = (char *)flags;
	args[a++] = "-n";
	args[a++] = count;
	args[a++] = (char *)self;
	args[a++] = "--rank";
	args[a++] = (char *)dir;
	for (int i = 1; i < argc && a < 62; i++)
		args[a++] = argv[i];
	args[a] = NULL;
	snprintf(session, sizeof(session), "%s/mpi-session", dir);
	if (mkdir(session, 0700) != 0) {
		perror(session);
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("OMPI_MCA_orte_tmpdir_base", session, 1);
		execvp(args[0], args);
		perror("timeout");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 124)
		fprintf(stderr, "%d ranks: timed out after %d s\n", n,
			RUN_TIMEOUT);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* AddressSanitizer in the ranks: Open MPI's allocations that live as
 * long as the process are suppressed by library, on full stacks. */
static void asan_environment(void)
{
	const char *src = getenv("PARLOAD_SRCDIR");
	const char *asan = getenv("ASAN_OPTIONS");
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s%sfast_unwind_on_malloc=0",
		 asan ? asan : "", asan && *asan ? ":" : "");
	setenv("ASAN_OPTIONS", buf, 1);
	snprintf(buf, sizeof(buf), "suppressions=%s/tests/mpi/lsan.supp",
		 src ? src : ".");
	setenv("LSAN_OPTIONS", buf, 1);
}

int mpitest_skip(void)
{
	const char *san = getenv("PARLOAD_SANITIZERS");

	if (san && strstr(san, "thread")) {
		/* Open MPI is not built for ThreadSanitizer: it reports the
		 * progress threads of MPI itself, not ours. */
		printf("SKIP: MPI tests do not run under ThreadSanitizer\n");
		return 77;
	}
	if (san && strstr(san, "address"))
		asan_environment();
	if (!getenv("PARLOAD_MPIEXEC") || !*getenv("PARLOAD_MPIEXEC")) {
		printf("SKIP: no MPI launcher (PARLOAD_MPIEXEC unset)\n");
		return 77;
	}
	return 0;
}

int mpitest_main(int argc, char **argv, const int *counts, int ncounts,
		 mpitest_fn body)
{
	char self[PATH_MAX], dir[] = "/tmp/parload-mpitest.XXXXXX";
	ssize_t len;
	int status = mpitest_skip();

	if (argc >= 3 && strcmp(argv[1], "--rank") == 0) {
		MPI_Init(&argc, &argv);
		MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
		MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
		/* A rank that hangs dies, and takes the job with it. */
		alarm(RUN_TIMEOUT - 5);
		body(argv[2]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}
	if (status)
		return status;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		perror("/proc/self/exe");
		return 99;
	}
	self[len] = '\0';
	for (int i = 0; i < ncounts; i++) {
		struct timespec t0, t1;
		int rc;

		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 99;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = launch(argc, argv, self, counts[i], dir);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%d rank%s: %s (%.1f s)\n", counts[i],
		       counts[i] == 1 ? "" : "s", rc == 0 ? "ok" : "FAILED",
		       (double)(t1.tv_sec - t0.tv_sec) +
			       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		{
			char cmd[64 + sizeof(dir)];

			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
			if (system(cmd) != 0)
				fprintf(stderr, "cannot remove %s\n", dir);
		}
		strcpy(dir, "/tmp/parload-mpitest.XXXXXX");
		if (rc != 0)
			status = 1;
	}
	return status;
}

/* A small generator of its own (splitmix64): the tests need bytes that
 * differ from view to view and row to row, nothing more. */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void mt_write(const char *path, uint64_t n, uint32_t w, uint32_t h,
	      int type, int crc, uint64_t seed)
{
	if (mt_rank == 0) {
		parload_file_header fh;
		parload_writer *wr;
		parload_error err;
		unsigned char *px;
		int rc;

		rc = parload_file_header_init(&fh, n, w, h, type,
					      crc ? PARLOAD_FLAG_CRC32C : 0);
		MT_CHECK(rc == 0, "header init: %d", rc);
		px = malloc(fh.payload_size ? fh.payload_size : 1);
		MT_CHECK(px, "out of memory");
		rc = parload_writer_open(&wr, path, &fh, &err);
		MT_CHECK(rc == 0, "%s", err.message);
		for (uint64_t v = 0; v < n; v++) {
			parload_view_header vh;

			memset(&vh, 0, sizeof(vh));
			vh.timestamp_ns = mix(&seed);
			vh.angle_deg = (float)v * 0.5f;
			for (uint64_t i = 0; i < fh.payload_size; i++)
				px[i] = (unsigned char)mix(&seed);
			rc = parload_writer_add(wr, &vh, px, &err);
			MT_CHECK(rc == 0, "%s", err.message);
		}
		rc = parload_writer_close(wr, &err);
		MT_CHECK(rc == 0, "%s", err.message);
		free(px);
	}
	/* Also used outside MPI (check_mpi_cli). */
	{
		int init = 0;

		MPI_Initialized(&init);
		if (init)
			MPI_Barrier(MPI_COMM_WORLD);
	}
}

void mt_reference(const char *path, parload_dataset *ds)
{
	parload_options o;
	parload_error err;
	int rc;

	parload_options_init(&o);
	o.threads = 1;
	o.flags = PARLOAD_OPT_NO_BIND;
	o.error = &err;
	rc = parload_load(path, &o, ds);
	MT_CHECK(rc == 0, "reference load: %s", err.message);
}

uint64_t mt_at(const parload_shape *s, uint64_t k, uint64_t r, uint64_t c)
{
	return (s->layout == PARLOAD_LAYOUT_VIEWS ? k * s->rows + r :
						    r * s->views + k) *
		       s->cols +
	       c;
}

const parload_request *mt_request(const char *path,
				  const parload_correction *corr)
{
	static parload_request req;

	parload_request_init(&req);
	req.source.path = path;
	req.correct = corr;
	return &req;
}
