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
#include "json.h"
#include "number.h"

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
"  --keep-going           with --verify: load everything, list bad views\n"
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

enum {
	OPT_LONG = 256,
	OPT_SPLIT,
	OPT_IO,
	OPT_VIEWS,
	OPT_ROWS,
	OPT_COLS,
	OPT_LAYOUT,
	OPT_VERIFY,
	OPT_KEEP_GOING,
	OPT_ALLOW_TRUNCATED,
	OPT_NO_BIND,
	OPT_NO_HUGEPAGES,
	OPT_JSON,
	OPT_RAW,
	OPT_CACHE,
	OPT_DATASET,
	OPT_FRAMES,
	OPT_DARKS,
	OPT_FLATS,
	OPT_REDUCE,
	OPT_MINUS_LOG,
	OPT_BIN,
	OPT_MAP_SINOGRAMS,
};

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
			const parload_mpi_options *o, const struct figures *f,
			int n, uint64_t bytes, double seconds,
			unsigned threads, int nodes)
{
	const parload_desc *h = &p->desc;

	printf("%s: %" PRIu64 " views %" PRIu32 "x%" PRIu32 " %s%s, split by "
	       "%s over %d rank%s on %d node%s (%s)\n", path, h->count,
	       h->width, h->height, parload_pixel_name(h->pixel_type),
	       o->correct ? ", corrected to f32" : "",
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

static int load_one(const char *path, const parload_mpi_options *opts,
		    const parload_mpi_split *split, bool json)
{
	parload_mpi_options o = *opts;
	parload_mpi_part p;
	parload_error err;
	struct figures mine, *all = NULL;
	uint64_t bytes = 0, bad = 0;
	double seconds = 0.0;
	unsigned threads = 0;
	int n, rc, nodes = 0, status = EXIT_OK;
	const parload_shape *s;

	o.error = &err;
	rc = parload_mpi_load(MPI_COMM_WORLD, path, &o, split, &p);
	if (rc < 0) {
		/* Every rank has the same message: one prints it. */
		if (rank == 0)
			fprintf(stderr, PROG ": %s\n", err.message);
		return EXIT_FAIL;
	}
	s = &p.dataset.shape;
	memset(&mine, 0, sizeof(mine));
	mine.rank = p.rank;
	mine.local_rank = p.local_rank;
	mine.local_ranks = p.local_ranks;
	mine.threads = p.threads;
	mine.core_offset = p.core_offset;
	mine.view_begin = p.view_begin;
	mine.view_end = p.view_end;
	mine.row_begin = p.row_begin;
	mine.row_end = p.row_end;
	mine.views = s->views;
	mine.rows = s->rows;
	mine.cols = s->cols;
	mine.bytes = s->views * (PARLOAD_VIEW_HEADER_SIZE + s->view_bytes);
	mine.bytes_read = p.dataset.stats.bytes_read;
	mine.read_calls = p.dataset.stats.read_calls;
	mine.crc_checked = p.dataset.stats.crc_checked;
	mine.bad_views = p.dataset.bad_view_count;
	mine.cache = (int)p.dataset.stats.cache;
	mine.seconds = p.seconds;
	mine.load_seconds = p.dataset.stats.seconds;
	/* --keep-going: each rank names its own bad views. */
	for (uint64_t k = 0; k < p.dataset.bad_view_count; k++)
		fprintf(stderr, PROG ": rank %d: %s: view %" PRIu64
			": payload CRC-32C mismatch\n", p.rank, path,
			p.dataset.bad_views[k]);
	n = p.ranks;
	if (rank == 0)
		all = calloc((size_t)n, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all,
		   (int)sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (rank == 0 && all) {
		for (int r = 0; r < n; r++) {
			bytes += all[r].bytes;
			bad += all[r].bad_views;
			threads += all[r].views ? all[r].threads : 0;
			nodes += all[r].local_rank == 0;
			if (all[r].seconds > seconds)
				seconds = all[r].seconds;
		}
		if (json)
			print_json(path, &p, &o, all, n, bytes, seconds,
				   threads, bad, nodes);
		else
			print_human(path, &p, &o, all, n, bytes, seconds,
				    threads, nodes);
		fflush(stdout);
	}
	free(all);
	MPI_Bcast(&bad, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (bad)
		status = EXIT_FAIL;
	parload_mpi_part_free(&p);
	return status;
}

/* --views A:B:S, --rows A:B, --cols A:B into the selection. */
static int slice_option(int c, const char *text, parload_selection *sel)
{
	parload_slice *target = c == OPT_VIEWS ? &sel->views :
		c == OPT_ROWS ? &sel->rows : &sel->cols;
	const char *name = c == OPT_VIEWS ? "--views" :
		c == OPT_ROWS ? "--rows" : "--cols";
	parload_error err;

	if (parload_slice_parse(text, c == OPT_VIEWS, target, &err) != 0)
		return usage_error("%s: %s", name, err.message);
	return 0;
}

/* The options that set a libparload flag. */
static bool set_flag(int c, unsigned *flags)
{
	static const struct {
		int option;
		unsigned flag;
	} table[] = {
		{ OPT_VERIFY, PARLOAD_OPT_VERIFY_CRC },
		{ OPT_KEEP_GOING, PARLOAD_OPT_KEEP_GOING },
		{ OPT_ALLOW_TRUNCATED, PARLOAD_OPT_ALLOW_TRUNCATED },
		{ OPT_NO_BIND, PARLOAD_OPT_NO_BIND },
		{ OPT_NO_HUGEPAGES, PARLOAD_OPT_NO_HUGEPAGES },
		{ OPT_MAP_SINOGRAMS, PARLOAD_OPT_MAP_SINOGRAMS },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].option == c) {
			*flags |= table[i].flag;
			return true;
		}
	}
	return false;
}

static const struct option longopts[] = {
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "threads", required_argument, NULL, 't' },
	{ "io", required_argument, NULL, OPT_IO },
	{ "views", required_argument, NULL, OPT_VIEWS },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "cols", required_argument, NULL, OPT_COLS },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "keep-going", no_argument, NULL, OPT_KEEP_GOING },
	{ "allow-truncated", no_argument, NULL, OPT_ALLOW_TRUNCATED },
	{ "no-bind", no_argument, NULL, OPT_NO_BIND },
	{ "no-hugepages", no_argument, NULL, OPT_NO_HUGEPAGES },
	{ "map-sinograms", no_argument, NULL, OPT_MAP_SINOGRAMS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "raw", required_argument, NULL, OPT_RAW },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "dataset", required_argument, NULL, OPT_DATASET },
	{ "frames", required_argument, NULL, OPT_FRAMES },
	{ "darks", required_argument, NULL, OPT_DARKS },
	{ "flats", required_argument, NULL, OPT_FLATS },
	{ "reduce", required_argument, NULL, OPT_REDUCE },
	{ "minus-log", no_argument, NULL, OPT_MINUS_LOG },
	{ "bin", required_argument, NULL, OPT_BIN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* What the options ask for. */
struct cfg {
	parload_mpi_options opts;
	parload_desc desc; /* --raw SPEC: opts.desc points here */
	parload_mpi_split split;
	bool json;
	/* --darks, --flats, --reduce, --minus-log, --bin: opts.correct
	 * points at corr when one is given. */
	parload_refs darks, flats;
	parload_correction corr;
};

/* A name from libparload's table kind into *out; -1 to go on, else the
 * exit status, after the library's message. */
static int name_option(int kind, const char *arg, int *out)
{
	parload_error err;
	int v = parload_name_parse(kind, arg, &err);

	if (v < 0)
		return usage_error("%s", err.message);
	*out = v;
	return -1;
}

/* The same from one of libparload-mpi's tables: the first count values
 * of name_of. */
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

/* The correction options. */
static int correct_option(struct cfg *g, int c, const char *arg)
{
	uint64_t v;
	int red, rc;

	g->opts.correct = &g->corr;
	switch (c) {
	case OPT_DARKS:
	case OPT_FLATS: {
		parload_refs *r = c == OPT_DARKS ? &g->darks : &g->flats;

		r->source.path = arg;
		*(c == OPT_DARKS ? &g->corr.darks : &g->corr.flats) = r;
		return -1;
	}
	case OPT_REDUCE:
		rc = name_option(PARLOAD_NAMES_REDUCE, arg, &red);
		if (rc < 0)
			g->corr.reduce = (parload_reduce)red;
		return rc;
	case OPT_MINUS_LOG:
		g->corr.flags |= PARLOAD_CORR_MINUS_LOG;
		return -1;
	default: /* OPT_BIN */
		if (!parse_u64(arg, UINT32_MAX, &v) || v == 0)
			return usage_error("--bin takes a factor of 1 or more, "
					   "not '%s'", arg);
		g->corr.bin = (unsigned)v;
		return -1;
	}
}

/* The options that take a name: -1 to go on, else the exit status. */
static int parse_name(struct cfg *g, int c, const char *arg)
{
	int v = 0, rc;

	switch (c) {
	case OPT_SPLIT: /* views or rows: explicit is the API's alone */
		rc = mpi_name_option("split", parload_mpi_split_name,
				     PARLOAD_MPI_SPLIT_ROWS + 1, arg, &v);
		g->split.kind = (parload_mpi_split_kind)v;
		return rc;
	case OPT_IO:
		rc = mpi_name_option("MPI I/O", parload_mpi_io_name,
				     PARLOAD_MPI_IO_MPIIO + 1, arg, &v);
		g->opts.io = (parload_mpi_io)v;
		return rc;
	case OPT_CACHE:
		rc = name_option(PARLOAD_NAMES_CACHE, arg, &v);
		g->opts.cache = (parload_cache)v;
		return rc;
	case OPT_FRAMES:
		rc = name_option(PARLOAD_NAMES_FRAMES, arg, &v);
		g->opts.frames = (parload_frames)v;
		return rc;
	default: /* OPT_LAYOUT */
		rc = name_option(PARLOAD_NAMES_LAYOUT, arg, &v);
		g->opts.load.selection.layout = (parload_layout)v;
		return rc;
	}
}

/* --raw SPEC: parsed by libparload, whose message a bad SPEC gets. */
static int raw_option(struct cfg *g, const char *spec)
{
	parload_error err;
	int rc;

	if (g->opts.desc)
		return usage_error("%s", "--raw given twice");
	memset(&err, 0, sizeof(err));
	rc = parload_desc_parse(spec, &g->desc, &err);
	if (rc < 0)
		return usage_error("--raw: %s", err.message[0] ? err.message :
				   parload_strerror(rc));
	g->opts.desc = &g->desc;
	return -1;
}

/* One option; -1 to go on, else the exit status to end with. */
static int parse_option(struct cfg *g, int c, char **argv)
{
	uint64_t t;

	switch (c) {
	case 't':
		if (!parse_u64(optarg, 4096, &t))
			return usage_error("--threads takes a number from 0 to "
					   "4096, not '%s'", optarg);
		g->opts.load.threads = (unsigned)t;
		return -1;
	case OPT_SPLIT:
	case OPT_IO:
	case OPT_CACHE:
	case OPT_FRAMES:
	case OPT_LAYOUT:
		return parse_name(g, c, optarg);
	case OPT_VIEWS:
	case OPT_ROWS:
	case OPT_COLS:
		return slice_option(c, optarg, &g->opts.load.selection) ?
			       EXIT_USAGE : -1;
	case OPT_JSON:
		g->json = true;
		return -1;
	case OPT_RAW:
		return raw_option(g, optarg);
	case OPT_DATASET:
		g->opts.dataset = optarg;
		return -1;
	case OPT_DARKS:
	case OPT_FLATS:
	case OPT_REDUCE:
	case OPT_MINUS_LOG:
	case OPT_BIN:
		return correct_option(g, c, optarg);
	case 'h':
		if (rank == 0)
			fputs(usage_text, stdout);
		return EXIT_OK;
	case 'V':
		if (rank == 0)
			printf(PROG " %s\n", parload_version());
		return EXIT_OK;
	default:
		if (!set_flag(c, &g->opts.load.flags))
			return usage_error("unknown option or missing argument: "
					   "'%s'", argv[optind - 1]);
		return -1;
	}
}

static int run(int argc, char **argv)
{
	struct cfg g;
	int c, rc, status = EXIT_OK;

	parload_mpi_options_init(&g.opts);
	memset(&g.corr, 0, sizeof(g.corr));
	memset(&g.darks, 0, sizeof(g.darks));
	memset(&g.flats, 0, sizeof(g.flats));
	parload_source_init(&g.darks.source);
	parload_source_init(&g.flats.source);
	memset(&g.split, 0, sizeof(g.split));
	g.split.kind = PARLOAD_MPI_SPLIT_VIEWS;
	g.json = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:hV", longopts, NULL)) != -1)
		if ((rc = parse_option(&g, c, argv)) >= 0)
			return rc;
	if (optind >= argc)
		return usage_error("%s", "no FILE given");
	/* References in --raw's layout, as the scan (a .nhdr states its
	 * own). */
	g.darks.source.desc = g.flats.source.desc = g.opts.desc;
	for (int i = optind; i < argc; i++)
		if (load_one(argv[i], &g.opts, &g.split, g.json) != EXIT_OK)
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
