/*
 * check_mpi_errors.c - a failure on one rank fails every rank, with the
 * failing rank's code and message, and no rank hangs (the launcher's
 * timeout and each rank's alarm turn a hang into a failure).
 *
 * The damage is placed where one rank alone sees it: a payload byte of the
 * last view, which only the last rank reads in a views split; a selection
 * that only rank 1 asks for; and the file header, which only rank 0 reads.
 */
#include "config.h"

#include "mpitest.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void expect(const char *what, const char *path,
		   const parload_mpi_options *o, const parload_mpi_split *split,
		   int code, int failing_rank, const char *needle,
		   const char *needle2)
{
	parload_mpi_options opts = *o;
	parload_mpi_part p;
	parload_error err;
	char head[32];
	int rc;

	opts.error = &err;
	memset(&p, 0xab, sizeof(p));
	rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
			      &opts, split, &p);
	snprintf(head, sizeof(head), "rank %d: ", failing_rank);
	MT_CHECK(rc == code && err.code == code,
		 "%s: returned %d (%s), want %d (%s): %s", what, rc,
		 parload_err_name(rc), code, parload_err_name(code),
		 err.message);
	MT_CHECK(strncmp(err.message, head, strlen(head)) == 0 &&
		 strstr(err.message, needle) &&
		 (!needle2 || strstr(err.message, needle2)),
		 "%s: message \"%s\" lacks \"%s\", \"%s\" or \"%s\"",
		 what, err.message, head, needle, needle2 ? needle2 : "");
	MT_CHECK(p.dataset.pixels == NULL && p.dataset.headers == NULL,
		 "%s: a failed load left arrays", what);
}

/* Flip one byte of path at offset (rank 0, then everyone). */
static void damage(const char *path, uint64_t offset)
{
	if (mt_rank == 0) {
		int fd = open(path, O_RDWR);
		unsigned char b;

		MT_CHECK(fd >= 0 && pread(fd, &b, 1, (off_t)offset) == 1,
			 "damage %s", path);
		b ^= 0x5a;
		MT_CHECK(pwrite(fd, &b, 1, (off_t)offset) == 1, "damage %s",
			 path);
		close(fd);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void body(const char *dir)
{
	const uint64_t views = 6;
	const uint32_t w = 4, h = 3;
	parload_file_header fh;
	parload_mpi_options o;
	parload_mpi_split split;
	parload_mpi_part p;
	parload_error err;
	char path[512], missing[512], what[64];
	const int last = mt_size - 1;
	int rc;

	snprintf(path, sizeof(path), "%s/crc.raw", dir);
	snprintf(missing, sizeof(missing), "%s/missing.raw", dir);
	mt_write(path, views, w, h, PARLOAD_PIXEL_U16, 1, 99);
	parload_file_header_init(&fh, views, w, h, PARLOAD_PIXEL_U16,
				 PARLOAD_FLAG_CRC32C);
	memset(&split, 0, sizeof(split));
	split.kind = PARLOAD_MPI_SPLIT_VIEWS;

	for (int io = 0; io < 2; io++) {
		parload_mpi_options_init(&o);
		o.io = (parload_mpi_io)io;
		o.load.flags = PARLOAD_OPT_NO_BIND;
		snprintf(what, sizeof(what), "missing file (%s)",
			 parload_mpi_io_name(io));
		/* Only rank 0 looks for the file: its error is everyone's. */
		expect(what, missing, &o, &split, PARLOAD_EOPEN, 0,
		       "missing.raw", NULL);
	}

	/* A bad payload byte in the last view: the last rank's part. */
	damage(path, parload_view_offset(&fh, views - 1) +
			     PARLOAD_VIEW_HEADER_SIZE + 1);
	for (int io = 0; io < 2; io++) {
		parload_mpi_options_init(&o);
		o.io = (parload_mpi_io)io;
		o.load.flags = PARLOAD_OPT_NO_BIND | PARLOAD_OPT_VERIFY_CRC;
		snprintf(what, sizeof(what), "CRC mismatch (%s)",
			 parload_mpi_io_name(io));
		/* libparload's message, from either reader. */
		expect(what, path, &o, &split, PARLOAD_ECRC, last, "view 5",
		       "payload CRC-32C is 0x");
		/* --keep-going: every rank loads, the last lists the view. */
		o.load.flags |= PARLOAD_OPT_KEEP_GOING;
		o.error = &err;
		rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
				      &o, &split, &p);
		MT_CHECK(rc == 0, "%s, keep going: %s", what, err.message);
		if (mt_rank == last)
			MT_CHECK(p.dataset.bad_view_count == 1 &&
				 p.dataset.bad_views[0] == views - 1,
				 "%s, keep going: %" PRIu64 " bad views", what,
				 p.dataset.bad_view_count);
		else
			MT_CHECK(p.dataset.bad_view_count == 0,
				 "%s, keep going: rank %d has bad views",
				 what, mt_rank);
		parload_mpi_part_free(&p);
	}

	/* A wrong view_index in the last view's header, then put back:
	 * both readers fail it with libparload's check and message. */
	damage(path, parload_view_offset(&fh, views - 1));
	for (int io = 0; io < 2; io++) {
		parload_mpi_options_init(&o);
		o.io = (parload_mpi_io)io;
		o.load.flags = PARLOAD_OPT_NO_BIND;
		snprintf(what, sizeof(what), "view_index (%s)",
			 parload_mpi_io_name(io));
		expect(what, path, &o, &split, PARLOAD_EVIEWINDEX, last,
		       "view 5", "view header says view_index");
	}
	damage(path, parload_view_offset(&fh, views - 1));

	/* Row slabs hold part of each payload: their CRCs cannot be
	 * checked, and the load says so rather than skip them. */
	for (int io = 0; io < 2; io++) {
		parload_mpi_options_init(&o);
		o.io = (parload_mpi_io)io;
		o.load.flags = PARLOAD_OPT_NO_BIND | PARLOAD_OPT_VERIFY_CRC;
		split.kind = PARLOAD_MPI_SPLIT_ROWS;
		snprintf(what, sizeof(what), "CRCs of row slabs (%s)",
			 parload_mpi_io_name(io));
		expect(what, path, &o, &split, PARLOAD_ENOTSUP, 0, "CRC-32C",
		       "cannot be verified (select them all");
		split.kind = PARLOAD_MPI_SPLIT_VIEWS;
	}

	/* A selection past the end, asked for by rank 1 alone. */
	if (mt_size > 1) {
		parload_mpi_options_init(&o);
		o.load.flags = PARLOAD_OPT_NO_BIND;
		split.kind = PARLOAD_MPI_SPLIT_EXPLICIT;
		parload_selection_init(&split.selection);
		if (mt_rank == 1) {
			split.selection.views.start = 100;
			split.selection.views.stop = 200;
		}
		expect("rank 1's selection", path, &o, &split, PARLOAD_ESELECT,
		       1, "crc.raw", NULL);
		split.kind = PARLOAD_MPI_SPLIT_VIEWS;
	}

	/* A file cut short in view 4: an error, or with
	 * PARLOAD_OPT_ALLOW_TRUNCATED its 4 complete views shared out. */
	if (mt_rank == 0)
		MT_CHECK(truncate(path, (off_t)parload_view_offset(&fh, 4) + 10) ==
			 0, "truncate");
	MPI_Barrier(MPI_COMM_WORLD);
	parload_mpi_options_init(&o);
	o.load.flags = PARLOAD_OPT_NO_BIND;
	expect("truncated", path, &o, &split, PARLOAD_ETRUNCATED, 0,
	       "crc.raw", NULL);
	for (int io = 0; io < 2; io++) {
		uint64_t held = 0, all = 0;

		o.io = (parload_mpi_io)io;
		o.load.flags = PARLOAD_OPT_NO_BIND | PARLOAD_OPT_ALLOW_TRUNCATED;
		o.error = &err;
		rc = parload_mpi_load(MPI_COMM_WORLD, mt_request(path, NULL),
				      &o, &split, &p);
		MT_CHECK(rc == 0 && p.global.views == 4,
			 "truncated, allowed (%s): %d, %" PRIu64 " views: %s",
			 parload_mpi_io_name(io), rc, p.global.views,
			 err.message);
		held = p.dataset.shape.views;
		MT_CHECK(held == 0 || (p.dataset.desc.count == 4 &&
				       p.dataset.stats.declared_views == views),
			 "truncated, allowed (%s): %" PRIu64 " views of %" PRIu64
			 " declared", parload_mpi_io_name(io),
			 p.dataset.desc.count,
			 p.dataset.stats.declared_views);
		MPI_Allreduce(&held, &all, 1, MPI_UINT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		MT_CHECK(all == 4, "truncated, allowed: %" PRIu64 " views held",
			 all);
		parload_mpi_part_free(&p);
	}

	/* A bad magic: rank 0's error. */
	if (mt_rank == 0) {
		int fd = open(path, O_WRONLY);

		MT_CHECK(fd >= 0 && pwrite(fd, "X", 1, 1) == 1, "damage magic");
		close(fd);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	parload_mpi_options_init(&o);
	expect("bad magic", path, &o, &split, PARLOAD_EMAGIC, 0, "crc.raw",
	       NULL);
}

int main(int argc, char **argv)
{
	static const int counts[] = { 2, 3 };

	return mpitest_main(argc, argv, counts, 2, body);
}
