/*
 * check_mpi_cli.c - the parload-mpi command under the launcher: its
 * per-rank and aggregate figures (checked by Python's json module where
 * python3 is there), --json of file names that are not UTF-8 (parsed
 * strictly), its exit status, and one message for a failure.
 */
#include "config.h"

#include "mpitest.h"
#include "../json_names.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
static char dir[] = "/tmp/parload-mpicli.XXXXXX";
static char out[4096], err[4096];

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);            \
			printf(__VA_ARGS__);                                   \
			printf("\nstdout:\n%s\nstderr:\n%s\n", out, err);      \
			failures++;                                            \
		}                                                              \
	} while (0)

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Run parload-mpi with ranks ranks and args; its exit status. */
static int run(int ranks, const char *args)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd),
		 "timeout -k 5 60 '%s' %s -n %d '%s' %s >'%s/out' 2>'%s/err'",
		 getenv("PARLOAD_MPIEXEC"), getenv("PARLOAD_MPIEXEC_FLAGS") ?
		 getenv("PARLOAD_MPIEXEC_FLAGS") : "", ranks,
		 getenv("PARLOAD_MPI_BIN"), args, dir, dir);
	st = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	slurp(cmd, out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "%s/err", dir);
	slurp(cmd, err, sizeof(err));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* --json of file names that are not UTF-8 (json_names.h) writes each bad
 * byte as U+FFFD (cli/json.c), so a strict parser (a strict UTF-8 decode,
 * then json) takes the output. */
static void check_json_names(const char *py)
{
	char file[512], args[2048];
	int rc;

	for (int i = 0; i < JSON_NAMES; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir,
			 json_names[i].bytes);
		mt_write(file, 3, 4, 2, PARLOAD_PIXEL_U16, 0, 1);
		snprintf(args, sizeof(args),
			 "--json '%s' | '%s' -c 'import json,sys\n"
			 "d = json.loads(sys.stdin.buffer.read()"
			 ".decode(\"utf-8\", \"strict\"))\n"
			 "want = json.loads(sys.argv[1])\n"
			 "assert d[\"file\"].endswith(want), (d[\"file\"], want)\n"
			 "print(\"strict ok\")' '%s'",
			 file, py, json_names[i].json);
		rc = run(2, args);
		CHECK(rc == 0 && strstr(out, "strict ok"),
		      "--json of name %d (%s): exit %d", i, json_names[i].json,
		      rc);
	}
}

int main(void)
{
	const char *py = getenv("PYTHON3");
	char file[256], args[1024];
	int rc = mpitest_skip();

	if (rc)
		return rc;
	if (!getenv("PARLOAD_MPI_BIN")) {
		printf("SKIP: PARLOAD_MPI_BIN unset\n");
		return 77;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	/* 5 views of 6 x 4 u16 with CRCs: 5 * (32 + 48) bytes. */
	snprintf(file, sizeof(file), "%s/s.raw", dir);
	mt_write(file, 5, 6, 4, PARLOAD_PIXEL_U16, 1, 3);

	snprintf(args, sizeof(args), "--split views --verify '%s'", file);
	rc = run(2, args);
	CHECK(rc == 0, "views split: exit %d", rc);
	CHECK(strstr(out, "rank 0: views 0:3,") &&
	      strstr(out, "rank 1: views 3:5,") &&
	      strstr(out, "  all: 0.0 MB") && count(out, "\n") == 4,
	      "views split: the figures");

	if (py && *py) {
		/* The JSON, checked by an independent parser: the ranks'
		 * row slabs tile the rows and their bytes add up. */
		snprintf(args, sizeof(args),
			 "--json --split rows '%s' | '%s' -c 'import json,sys\n"
			 "d = json.loads(sys.stdin.read())\n"
			 "r = d[\"per_rank\"]\n"
			 "assert d[\"ranks\"] == 2 and len(r) == 2, d\n"
			 "assert [(x[\"row_begin\"], x[\"row_end\"]) for x in r]"
			 " == [(0, 2), (2, 4)], r\n"
			 "assert sum(x[\"bytes\"] for x in r) == d[\"bytes\"]"
			 " == 2 * 5 * 32 + 5 * 48, d\n"
			 "assert d[\"split\"] == \"rows\" and d[\"views\"] == 5\n"
			 "print(\"json ok\")'", file, py);
		rc = run(2, args);
		CHECK(rc == 0 && strstr(out, "json ok"), "--json: exit %d", rc);
	}

	if (py && *py)
		check_json_names(py);

	/* One message, from rank 0, with the rank; exit status 1. */
	snprintf(args, sizeof(args), "'%s/missing.raw'", dir);
	rc = run(2, args);
	CHECK(rc == 1 && count(err, "parload-mpi: rank 0: ") == 1 &&
	      strstr(err, "missing.raw"), "missing file: exit %d", rc);

	/* --raw: the same file read through a layout that states parload's
	 * format byte for byte, split over the ranks; a bad SPEC is the
	 * library's message, after "--raw: ". */
	snprintf(args, sizeof(args), "--raw width=6,height=4,type=u16,"
		 "offset=64,header=32 '%s'", file);
	rc = run(2, args);
	CHECK(rc == 0 && strstr(out, ": 5 views 6x4 u16, ") &&
	      strstr(out, "rank 1: views 3:5,"), "--raw: exit %d", rc);
	rc = run(2, "--raw width=6,height=4 x.raw");
	CHECK(rc == 2 && count(err, "parload-mpi: --raw: layout: type is "
			       "missing") == 1, "--raw usage error: exit %d", rc);

	/* --cache: each rank's line says the mode its load used (drop is
	 * drop on every file system); MPI-IO ignores it. */
	snprintf(args, sizeof(args), "--cache drop --verify '%s'", file);
	rc = run(2, args);
	CHECK(rc == 0 && count(out, ", cache drop\n") == 2,
	      "--cache drop: exit %d", rc);
	snprintf(args, sizeof(args), "--cache drop --io mpiio '%s'", file);
	rc = run(2, args);
	CHECK(rc == 0 && count(out, "cache") == 0,
	      "--cache drop --io mpiio: exit %d", rc);
	rc = run(2, "--cache sometimes x.raw");
	CHECK(rc == 2 && count(err, "unknown page-cache mode 'sometimes' "
			       "(keep, drop, direct or auto)") == 1,
	      "--cache usage error: exit %d", rc);

	rc = run(2, "--split diagonal x.raw");
	CHECK(rc == 2 && count(err, "unknown split 'diagonal' (views or "
			       "rows)") == 1,
	      "usage error: exit %d", rc);

	/* A damaged payload in view 4, rank 1's part. */
	{
		parload_file_header h;
		int fd = open(file, O_WRONLY);

		parload_file_header_init(&h, 5, 6, 4, PARLOAD_PIXEL_U16,
					 PARLOAD_FLAG_CRC32C);
		CHECK(fd >= 0 && pwrite(fd, "\x77", 1,
					(off_t)parload_view_offset(&h, 4) + 40) == 1,
		      "damage");
		if (fd >= 0)
			close(fd);
	}
	snprintf(args, sizeof(args), "--verify '%s'", file);
	rc = run(2, args);
	CHECK(rc == 1 && count(err, "parload-mpi: rank 1: ") == 1,
	      "CRC mismatch: exit %d", rc);
	snprintf(args, sizeof(args), "--verify --keep-going '%s'", file);
	rc = run(2, args);
	CHECK(rc == 1 && strstr(err, "rank 1: ") && strstr(err, "view 4") &&
	      strstr(out, "rank 1: views 3:5,"),
	      "CRC mismatch, --keep-going: exit %d", rc);

	snprintf(args, sizeof(args), "rm -rf '%s'", dir);
	if (system(args) != 0)
		printf("cannot remove %s\n", dir);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
