/*
 * cli.c - parload-mpi: load a file across MPI ranks and report each rank's
 * part and the whole.  Run under the MPI launcher:
 *
 *   mpirun -n R parload-mpi [OPTIONS] FILE...
 *
 * Every rank parses the same arguments and takes part in every load; rank
 * 0 alone prints.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <parload_mpi.h>

/* Shared with the parload command (cli/). */
#include "gen.h"
#include "json.h"

#define PROG "parload-mpi"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
"Usage: mpirun -n R " PROG " [OPTIONS] FILE...\n"
"Load each FILE across the ranks, each rank its part, and report the parts.\n"
"\n"
"  --split views|rows     views: contiguous view ranges (default); rows:\n"
"                         detector-row slabs delivered as sinograms\n"
"  -t, --threads N        worker threads per rank (default: the node's\n"
"                         cores divided between the ranks on it)\n"
"  --io pool|mpiio        each rank reads with libparload's pool (default)\n"
"                         or with collective MPI-IO\n"
"  --cache MODE           keep (default), drop, direct or auto: what each\n"
"                         rank's load leaves in the page cache (see\n"
"                         parload(1)); --io pool only, MPI-IO ignores it\n"
"  --views A:B[:S]        share out these views only (default: all)\n"
"  --rows A:B, --cols A:B share out these detector rows and columns only\n"
"  --layout views|sinograms  the parts' layout with --split views\n"
"  --confine              the files a FILE names must lie in its directory\n"
"  --raw SPEC             FILE is a raw stream of this layout (key=value\n"
"                         pairs: width, height, type, offset, header, gap,\n"
"                         count; @PATH reads them from a file; see\n"
"                         parload(1)); it overrides a parload header; read\n"
"                         with --io pool only\n"
"  --dataset PATH         an HDF5 FILE's dataset (see parload(1))\n"
"  --frames F             projections (default), flats or darks of a\n"
"                         DXchange or NXtomo FILE\n"
"  --darks SRC, --flats SRC  correct each rank's part by these reference\n"
"                         frames (files read with --raw's layout), each\n"
"                         rank reading and reducing them over its rows:\n"
"                         float32 (P - D) / max(F - D, 1e-6); --io pool\n"
"  --reduce mean|median   how the references are reduced (default mean)\n"
"  --minus-log            then -ln(max(x, 1e-6))\n"
"  --bin N                average N x N pixels first (the ranks share out\n"
"                         whole bins)\n"
"  --verify               check every payload against its CRC-32C\n"
"  --keep-going           --verify, loading everything and listing the bad\n"
"                         views\n"
"  --verify-seed N        check each rank's part against 'parload gen\n"
"                         --seed N' (not with a correction)\n"
"  --max-read SIZE        largest single read (default 8M)\n"
"  --allow-truncated      load the complete views of a file cut short\n"
"  --no-bind              do not bind workers or memory to cores and nodes\n"
"  --no-hugepages         do not advise transparent huge pages\n"
"  --map-sinograms        copy sinograms' rows straight from FILE mapped\n"
"                         into memory (one copy, as fast as views; a FILE\n"
"                         truncated while it loads kills the rank with\n"
"                         SIGBUS; see parload(1)); --io pool, --cache keep\n"
"  --json                 one JSON object per file, with a per-rank array\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"Exit status: 0 when every file loaded on every rank, 1 when one failed,\n"
"2 for a usage error.\n";

/* getopt_long values: the options of parload-mpi's own, and OPT_KEY for
 * every option that is a key of the library's settings (its long name). */
enum { OPT_KEY = 256, OPT_SPLIT, OPT_IO, OPT_JSON };

/* One rank's figures, gathered to rank 0 as bytes (one program, one ABI). */
struct figures {
	int rank, local_rank, local_ranks, status;
	int cache; /* the page-cache mode the rank's load used */
	unsigned threads, core_offset;
	uint64_t view_begin, view_end, views;
	uint32_t row_begin, row_end, rows, cols;
	uint64_t bytes, bytes_read, read_calls, crc_checked, bad_views;
	double seconds, load_seconds;
};

static int rank;

static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	/* Every rank parses the arguments; one complains. */
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (rank == 0)
		fprintf(stderr, PROG ": %s\nTry '" PROG " --help'.\n", text);
	return EXIT_USAGE;
}

static double rate(uint64_t bytes, double seconds)
{
	return finite_or_zero(seconds > 0.0 ? (double)bytes / seconds / 1e9 :
					      0.0);
}

static const char *cache_name(int cache)
{
	const char *name = parload_cache_name(cache);

	return name ? name : "unknown";
}

static void print_json(const char *path, const parload_mpi_part *p,
		       const parload_mpi_options *o, const struct figures *f,
		       int n, uint64_t bytes, double seconds,
		       unsigned threads, uint64_t bad, int nodes)
{
	const parload_desc *h = &p->desc;

	fputs("{\"file\":", stdout);
	json_str(stdout, path);
	printf(",\"views\":%" PRIu64 ",\"width\":%" PRIu32
	       ",\"height\":%" PRIu32 ",\"pixel_type\":\"%s\""
	       ",\"split\":\"%s\",\"io\":\"%s\",\"ranks\":%d,\"nodes\":%d"
	       ",\"selected_views\":%" PRIu64 ",\"selected_rows\":%" PRIu32
	       ",\"selected_cols\":%" PRIu32 ",\"bytes\":%" PRIu64
	       ",\"seconds\":%.9f,\"gbps\":%.6g,\"threads\":%u"
	       ",\"bad_views\":%" PRIu64 ",\"format\":\"%s\""
	       ",\"delivered_type\":\"%s\",\"per_rank\":[",
	       h->count, h->width, h->height,
	       parload_pixel_name(h->pixel_type),
	       parload_mpi_split_name(p->split), parload_mpi_io_name(o->io),
	       n, nodes, p->global.views, p->global.rows, p->global.cols,
	       bytes, seconds, rate(bytes, seconds), threads, bad,
	       parload_format_name(h->format),
	       parload_pixel_name(p->global.pixel_type));
	for (int r = 0; r < n; r++) {
		const struct figures *x = &f[r];

		printf("%s{\"rank\":%d,\"node_rank\":%d,\"node_ranks\":%d"
		       ",\"threads\":%u,\"core_offset\":%u"
		       ",\"view_begin\":%" PRIu64 ",\"view_end\":%" PRIu64
		       ",\"row_begin\":%" PRIu32 ",\"row_end\":%" PRIu32
		       ",\"views\":%" PRIu64 ",\"rows\":%" PRIu32
		       ",\"bytes\":%" PRIu64 ",\"bytes_read\":%" PRIu64
		       ",\"read_calls\":%" PRIu64 ",\"crc_checked\":%" PRIu64
		       ",\"bad_views\":%" PRIu64 ",\"cache\":\"%s\""
		       ",\"seconds\":%.9f"
		       ",\"load_seconds\":%.9f,\"gbps\":%.6g}",
		       r ? "," : "", x->rank, x->local_rank, x->local_ranks,
		       x->threads, x->core_offset, x->view_begin, x->view_end,
		       x->row_begin, x->row_end, x->views, x->rows, x->bytes,
		       x->bytes_read, x->read_calls, x->crc_checked,
		       x->bad_views, cache_name(x->cache), x->seconds,
		       x->load_seconds,
		       rate(x->bytes, x->load_seconds));
	}
	puts("]}");
}

static void print_human(const char *path, const parload_mpi_part *p,
			const parload_mpi_options *o, int corrected,
			const struct figures *f,
			int n, uint64_t bytes, double seconds,
			unsigned threads, int nodes)
{
	const parload_desc *h = &p->desc;

	printf("%s: %" PRIu64 " views %" PRIu32 "x%" PRIu32 " %s%s, split by "
	       "%s over %d rank%s on %d node%s (%s)\n", path, h->count,
	       h->width, h->height, parload_pixel_name(h->pixel_type),
	       corrected ? ", corrected to f32" : "",
	       parload_mpi_split_name(p->split), n, n == 1 ? "" : "s", nodes,
	       nodes == 1 ? "" : "s", parload_mpi_io_name(o->io));
	for (int r = 0; r < n; r++) {
		const struct figures *x = &f[r];

		printf("  rank %d: ", r);
		if (p->split == PARLOAD_MPI_SPLIT_ROWS)
			printf("rows %" PRIu32 ":%" PRIu32, x->row_begin,
			       x->row_end);
		else if (p->split == PARLOAD_MPI_SPLIT_VIEWS)
			printf("views %" PRIu64 ":%" PRIu64, x->view_begin,
			       x->view_end);
		else
			printf("%" PRIu64 " views x %" PRIu32 " rows",
			       x->views, x->rows);
		printf(", %.1f MB in %.4f s, %.2f GB/s, %u thread%s from core"
		       " %u", (double)x->bytes / 1e6, x->load_seconds,
		       rate(x->bytes, x->load_seconds), x->threads,
		       x->threads == 1 ? "" : "s", x->core_offset);
		if (x->crc_checked)
			printf(", %" PRIu64 " CRC-32C checked", x->crc_checked);
		if (x->bad_views)
			printf(", %" PRIu64 " bad", x->bad_views);
		if (x->cache != PARLOAD_CACHE_KEEP)
			printf(", cache %s", cache_name(x->cache));
		putchar('\n');
	}
	printf("  all: %.1f MB in %.4f s, %.2f GB/s, %u thread%s\n",
	       (double)bytes / 1e6, seconds, rate(bytes, seconds), threads,
	       threads == 1 ? "" : "s");
}

/* What the options ask for. */
struct cfg {
	parload_settings set; /* every option that is a key of the library */
	parload_mpi_options opts;
	parload_mpi_split split;
	bool json;
};

/* --verify-seed: whether this rank's part is what 'parload gen --seed'
 * wrote; says where it is not. */
static bool part_verified(const parload_mpi_part *p, const char *path,
			  uint64_t seed)
{
	uint64_t bad = PARLOAD_NONE;
	bool header = false;

	if (!p->dataset.shape.views ||
	    pgen_verify_shape(&p->dataset, &p->dataset.shape, seed, &bad,
			      &header))
		return true;
	if (bad == PARLOAD_NONE)
		fprintf(stderr, PROG ": rank %d: %s: out of memory while "
			"verifying\n", p->rank, path);
	else
		fprintf(stderr, PROG ": rank %d: %s: view %" PRIu64 ": %s "
			"differs from the stream of seed %" PRIu64 "\n",
			p->rank, path, bad, header ? "header" : "payload",
			seed);
	return false;
}

/* This rank's figures, and its bad views named on standard error. */
static void my_figures(const parload_mpi_part *p, const char *path,
		       struct figures *mine)
{
	const parload_shape *s = &p->dataset.shape;

	memset(mine, 0, sizeof(*mine));
	mine->rank = p->rank;
	mine->local_rank = p->local_rank;
	mine->local_ranks = p->local_ranks;
	mine->threads = p->threads;
	mine->core_offset = p->core_offset;
	mine->view_begin = p->view_begin;
	mine->view_end = p->view_end;
	mine->row_begin = p->row_begin;
	mine->row_end = p->row_end;
	mine->views = s->views;
	mine->rows = s->rows;
	mine->cols = s->cols;
	mine->bytes = s->views * (PARLOAD_VIEW_HEADER_SIZE + s->view_bytes);
	mine->bytes_read = p->dataset.stats.bytes_read;
	mine->read_calls = p->dataset.stats.read_calls;
	mine->crc_checked = p->dataset.stats.crc_checked;
	mine->bad_views = p->dataset.bad_view_count;
	mine->cache = (int)p->dataset.stats.cache;
	mine->seconds = p->seconds;
	mine->load_seconds = p->dataset.stats.seconds;
	/* --keep-going: each rank names its own bad views. */
	for (uint64_t k = 0; k < p->dataset.bad_view_count; k++)
		fprintf(stderr, PROG ": rank %d: %s: view %" PRIu64
			": payload CRC-32C mismatch\n", p->rank, path,
			p->dataset.bad_views[k]);
}

/* Rank 0: the ranks' figures summed and printed. */
static void report_all(const char *path, const parload_mpi_part *p,
		       const struct cfg *g, const struct figures *all)
{
	uint64_t bytes = 0, bad = 0;
	double seconds = 0.0;
	unsigned threads = 0;
	int nodes = 0;

	for (int r = 0; r < p->ranks; r++) {
		bytes += all[r].bytes;
		bad += all[r].bad_views;
		threads += all[r].views ? all[r].threads : 0;
		nodes += all[r].local_rank == 0;
		if (all[r].seconds > seconds)
			seconds = all[r].seconds;
	}
	if (g->json)
		print_json(path, p, &g->opts, all, p->ranks, bytes, seconds,
			   threads, bad, nodes);
	else
		print_human(path, p, &g->opts, g->set.correct_on, all,
			    p->ranks, bytes, seconds, threads, nodes);
	fflush(stdout);
}

static int load_one(const char *path, struct cfg *g)
{
	parload_mpi_options o = g->opts;
	parload_request req;
	parload_mpi_part p;
	parload_error err;
	struct figures mine, *all = NULL;
	int bad;

	parload_request_init(&req);
	req.source.path = path;
	parload_settings_apply(&g->set, &req);
	o.load = g->set.options;
	o.error = &err;
	if (parload_mpi_load(MPI_COMM_WORLD, &req, &o, &g->split, &p) < 0) {
		/* Every rank has the same message: one prints it. */
		if (rank == 0)
			fprintf(stderr, PROG ": %s\n", err.message);
		return EXIT_FAIL;
	}
	my_figures(&p, path, &mine);
	bad = g->set.verify_seed && !part_verified(&p, path, g->set.seed);
	if (rank == 0)
		all = calloc((size_t)p.ranks, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all,
		   (int)sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (rank == 0 && all)
		report_all(path, &p, g, all);
	free(all);
	bad = bad || mine.bad_views;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	parload_mpi_part_free(&p);
	return bad ? EXIT_FAIL : EXIT_OK;
}

/* The options: the library's keys, by their names, and parload-mpi's
 * own. */
#define KEY(name, arg) { name, arg, NULL, OPT_KEY }
static const struct option longopts[] = {
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "io", required_argument, NULL, OPT_IO },
	{ "json", no_argument, NULL, OPT_JSON },
	KEY("threads", required_argument),
	KEY("views", required_argument),
	KEY("rows", required_argument),
	KEY("cols", required_argument),
	KEY("layout", required_argument),
	KEY("verify", no_argument),
	KEY("keep-going", no_argument),
	KEY("verify-seed", required_argument),
	KEY("allow-truncated", no_argument),
	KEY("no-bind", no_argument),
	KEY("no-hugepages", no_argument),
	KEY("map-sinograms", no_argument),
	KEY("max-read", required_argument),
	KEY("raw", required_argument),
	KEY("cache", required_argument),
	KEY("dataset", required_argument),
	KEY("frames", required_argument),
	KEY("confine", no_argument),
	KEY("darks", required_argument),
	KEY("flats", required_argument),
	KEY("reduce", required_argument),
	KEY("minus-log", no_argument),
	KEY("bin", required_argument),
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* A name from one of libparload-mpi's tables: the first count values of
 * name_of.  -1 to go on, else the exit status after the library's
 * message. */
static int mpi_name_option(const char *what, const char *(*name_of)(int),
			   int count, const char *arg, int *out)
{
	const char *names[4];
	parload_error err;
	int v;

	for (int i = 0; i < count; i++)
		names[i] = name_of(i);
	v = parload_name_find(what, names, count, arg, &err);
	if (v < 0)
		return usage_error("%s", err.message);
	*out = v;
	return -1;
}

/* A key of the library's settings: -1 to go on, else the exit status. */
static int key_option(struct cfg *g, const char *key, const char *arg)
{
	parload_error err;

	memset(&err, 0, sizeof(err));
	if (parload_settings_set(&g->set, key, arg, &err) < 0)
		return usage_error("%s", err.message);
	return -1;
}

/* One option (longopts[idx] for a long one); -1 to go on, else the exit
 * status to end with. */
static int parse_option(struct cfg *g, int c, int idx, char **argv)
{
	int v = 0, rc;

	switch (c) {
	case 't':
		return key_option(g, "threads", optarg);
	case OPT_KEY:
		return key_option(g, longopts[idx].name, optarg);
	case OPT_SPLIT: /* views or rows: explicit is the API's alone */
		rc = mpi_name_option("split", parload_mpi_split_name,
				     PARLOAD_MPI_SPLIT_ROWS + 1, optarg, &v);
		g->split.kind = (parload_mpi_split_kind)v;
		return rc;
	case OPT_IO:
		rc = mpi_name_option("MPI I/O", parload_mpi_io_name,
				     PARLOAD_MPI_IO_MPIIO + 1, optarg, &v);
		g->opts.io = (parload_mpi_io)v;
		return rc;
	case OPT_JSON:
		g->json = true;
		return -1;
	case 'h':
		if (rank == 0)
			fputs(usage_text, stdout);
		return EXIT_OK;
	case 'V':
		if (rank == 0)
			printf(PROG " %s\n", parload_version());
		return EXIT_OK;
	default:
		return usage_error("unknown option or missing argument: '%s'",
				   argv[optind - 1]);
	}
}

static int run(int argc, char **argv)
{
	struct cfg g;
	int c, idx = 0, rc, status = EXIT_OK;

	memset(&g, 0, sizeof(g));
	parload_settings_init(&g.set);
	parload_mpi_options_init(&g.opts);
	g.split.kind = PARLOAD_MPI_SPLIT_VIEWS;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:hV", longopts, &idx)) != -1)
		if ((rc = parse_option(&g, c, idx, argv)) >= 0)
			return rc;
	if (optind >= argc)
		return usage_error("%s", "no FILE given");
	for (int i = optind; i < argc; i++)
		if (load_one(argv[i], &g) != EXIT_OK)
			status = EXIT_FAIL;
	return status;
}

int main(int argc, char **argv)
{
	int status;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fputs(PROG ": MPI_Init failed\n", stderr);
		return EXIT_FAIL;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	status = run(argc, argv);
	MPI_Finalize();
	return status;
}
