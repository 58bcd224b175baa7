/*
 * cmd_load.c - parload [OPTIONS] [FILE...]: load each file, verify it when
 * asked, and report one line (or one JSON object) per file; with no FILE,
 * the embedded default.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "common.h"
#include "gen.h"

SUBCOMMAND(load);

const char cmd_load_help[] =
"[OPTIONS] [FILE...]\n"
"\n"
"Load raw image streams into a structure of arrays (all view headers in one\n"
"array, all pixels in another) and report, one line per FILE: views,\n"
"dimensions, pixel type, file size, seconds from open until the dataset is\n"
"complete, GB/s (file bytes per second, 1 GB = 10^9 bytes), threads and\n"
"strategy.  All FILEs are loaded by one loader, so the machine's topology\n"
"is discovered and the worker threads started once.  A FILE of - is\n"
"standard input (named <stdin> in the output), read sequentially as the\n"
"records arrive when it is a pipe or a socket; it may be given once.  A\n"
"FILE that is a FIFO or a character device (mkfifo, <(...), /dev/stdin) is\n"
"read the same way, a FIFO once its writer has come (--follow gives it\n"
"--timeout seconds).\n"
"\n"
"With no FILE, run the embedded default: write the reference stream (2000\n"
"views of 896 x 64 u16 pixels, about 229 MB, seed 1) to a temporary file in\n"
"$TMPDIR (or /tmp), load it, verify every view, report, remove the file.\n"
"\n"
"Load options:\n"
"  -t, --threads N        worker threads of the parallel strategy; 0 (the\n"
"                         default) is one per core the process may run on\n"
"      --strategy NAME    parallel (default), bulk, sequential, two-pass\n"
"                         or mmap\n"
"      --io API           posix (default) or stdio, for bulk, sequential\n"
"                         and two-pass\n"
"      --buffer SIZE      user-space read buffer of bulk, sequential and\n"
"                         two-pass; 0 is unbuffered; default: the API's own\n"
"      --max-read SIZE    largest request of one read call; 0 is the\n"
"                         default (8M); --cache direct rounds it down to\n"
"                         whole 4K blocks\n"
"      --no-bind          do not bind threads or memory to NUMA nodes\n"
"      --no-hugepages     do not advise transparent huge pages\n"
"      --preallocate      allocate the arrays (parload_buffers_alloc, huge\n"
"                         pages unless --no-hugepages) and touch them, then\n"
"                         load into them (parload_loader_load_into), as a\n"
"                         program that keeps its own buffers does; the time\n"
"                         reported excludes the allocation\n"
"      --verify           check every payload against the CRC-32C in its view\n"
"                         header (files written with 'parload gen --crc');\n"
"                         the first bad view fails the file; a file without\n"
"                         CRCs loads and says there was nothing to verify\n"
"      --keep-going       with --verify (implied): load every view and list\n"
"                         each bad one on standard error; the file fails\n"
"      --allow-truncated  load the complete views of a file cut short (an\n"
"                         acquisition that died) instead of failing; the\n"
"                         line says how many of the promised views it holds\n"
"      --verify-seed S    check every loaded view against the stream that\n"
"                         'parload gen --seed S' writes; a difference fails\n"
"                         the file\n"
"      --progress         show a progress line on standard error while a\n"
"                         file loads (default: on a terminal, for loads\n"
"                         that take over half a second, unless --json or\n"
"                         --quiet); --no-progress never\n"
"      --follow           follow a file still being written: load its views\n"
"                         as they are appended, until its header's view\n"
"                         count is reached or --timeout passes without\n"
"                         growth (then the file fails, or with\n"
"                         --allow-truncated loads its complete views)\n"
"      --timeout S        seconds without growth that end --follow\n"
"                         (default 10)\n"
"      --cache MODE       what the load leaves in the page cache: keep (the\n"
"                         default: buffered reads, the file stays cached),\n"
"                         drop (buffered reads whose pages leave the cache\n"
"                         once loaded: a file read once, larger than what\n"
"                         else the node caches), direct (O_DIRECT, no page\n"
"                         cache; parallel strategy; a file system that\n"
"                         refuses it gets drop) or auto (keep a cached file\n"
"                         or one that fits in half the free memory, else\n"
"                         drop); the line says the mode when not keep\n"
"      --json             one JSON object per line per file instead\n"
"  -q, --quiet            print nothing but errors; the exit status tells\n"
"      --list-strategies  print the strategies' names, one a line, and exit\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"Selection (read only part of each file, straight into its place):\n"
"      --views A:B[:S]    views A to B (B excluded) in steps of S, as Python\n"
"                         slices: any part may be omitted (::8 is every 8th\n"
"                         view), negative values count from the end\n"
"      --rows A:B         detector rows A to B of each view\n"
"      --cols A:B         columns A to B of each row\n"
"      --layout L         views (view after view, the default) or sinograms\n"
"                         (for each row, that row of every selected view)\n"
"      --map-sinograms    copy sinograms' rows straight from FILE mapped into\n"
"                         memory: one copy, not two, as fast as views; but\n"
"                         if FILE is truncated while it loads, parload dies\n"
"                         of SIGBUS instead of failing the file (--cache\n"
"                         keep, the parallel strategy; else rows are read)\n"
"A selection that reaches past the end or selects nothing fails the file.\n"
"The line then shows the selection and the size of what it delivered.\n"
"\n"
"Layout (files that are not parload's own format):\n"
"      --raw SPEC         each FILE is a raw stream laid out as SPEC says:\n"
"                         key=value pairs separated by commas, keys width,\n"
"                         height, type (u8 u16 i16 u32 i32 f32 f64, each\n"
"                         with an optional be or le, as in u16be; or the\n"
"                         packed mono10p mono12p mono12packed u12msb,\n"
"                         read into u16),\n"
"                         offset (bytes before the first view, in each\n"
"                         file), header (bytes of each view's own header),\n"
"                         gap (bytes after each view), count (views; default\n"
"                         as many whole ones as the files hold; bytes after\n"
"                         them are then ignored); sizes take K, M, G, T.\n"
"                         @PATH reads SPEC from a file (pairs separated by\n"
"                         commas or newlines, # starts a comment).  SPEC\n"
"                         overrides a parload header: the file is read as\n"
"                         SPEC says.  Parallel strategy, regular files only\n"
"      --concat           all FILEs are one stream (needs --raw, but for\n"
"                         TIFF and HDF5 files): views numbered across\n"
"                         them in the order given\n"
"      --dataset PATH     an HDF5 FILE's dataset (also FILE.h5:/PATH);\n"
"                         default /exchange/data, else the NXtomo entry's\n"
"                         data, else a master file's /entry/data/data_*\n"
"                         links as one stream, else the file's only 3-D\n"
"                         dataset.  A Zarr store's array (also\n"
"                         STORE.zarr:/PATH); default the store's root\n"
"                         array, or an OME-Zarr image's first level\n"
"      --frames KIND      projections (default), flats or darks: NXtomo's\n"
"                         image_key 0, 1, 2; DXchange's /exchange/data,\n"
"                         data_white, data_dark\n"
"      --confine          the files a FILE names (a .nhdr's data files, an\n"
"                         HDF5 file's external links and storage) must lie\n"
"                         in its directory or below it, links resolved: for\n"
"                         files from someone else (a .nhdr may name any\n"
"                         file, /etc/shadow or ../x included)\n"
"A FILE is what its first bytes say, else its name in any case: a NRRD\n"
"header (.nhdr: its data files loaded as it describes; .nrrd: its data\n"
"after it), a NumPy .npy, a TIFF, an HDF5 file, else parload's own format;\n"
"a directory with .zarray or zarr.json (Zarr v2 or v3) is a Zarr store, a\n"
"directory of TIFFs one stream of them.\n"
"\n"
"Correction (flat- and dark-field, computed by the workers as they read;\n"
"the pixels are then float32, whatever the file's type):\n"
"      --darks SRC        dark frames (beam off): a FILE as above, read\n"
"                         with --raw's layout unless it is a .nhdr, with\n"
"                         the rows and columns the selection reads; or\n"
"                         'same': those of the scan's own HDF5 FILE\n"
"                         (DXchange data_dark, NXtomo image_key 2)\n"
"      --flats SRC        flat frames (beam on, no sample), the same way\n"
"                         ('same': data_white, image_key 1)\n"
"      --reduce R         mean (default) or median of each set per pixel\n"
"                         (an even count: the mean of the middle two)\n"
"      --minus-log        then -ln(max(x, 1e-6))\n"
"      --bin N            bin N x N pixels (their mean) first, from the\n"
"                         selection's first row and column; a partial bin\n"
"                         at the end is dropped\n"
"Per pixel: (P - D) / max(F - D, 1e-6); darks only P - D; flats only\n"
"P / max(F, 1e-6).  Values at or below zero clamp to 1e-6 before the log,\n"
"the one difference from TomoPy's normalize and minus_log.  --verify\n"
"checks the CRCs of the raw rows, before the correction.  Not with\n"
"--preallocate, --verify-seed or standard input.\n"
"e.g. " PROG " --raw width=2048,height=2048,type=u16 --darks d.raw \\\n"
"       --flats f.raw --minus-log --rows 100:132 --layout sinograms scan.raw\n"
"e.g. " PROG " --darks same --flats same --minus-log --rows 100:132 \\\n"
"       --layout sinograms scan.h5\n"
"e.g. " PROG " --raw width=2048,height=2048,type=u16,header=512 scan.edf\n"
"\n"
"SIZE is a number of bytes, optionally followed by K, M, G or T (powers of\n"
"1024; KiB, MiB, GiB and TiB also read), e.g. 4096, 64K, 1M.\n";

/* What a load reports, besides the load options. */
struct report_cfg {
	bool json;
	bool quiet;
};

/* All the options. */
struct load_args {
	struct load_cfg cfg;
	struct report_cfg rep;
};

/* ---------------------------------------------------------------------
 * The report
 * ------------------------------------------------------------------- */

/* What --verify found, for the line: NULL when it was not asked. */
static const char *crc_note(const parload_dataset *ds, unsigned flags)
{
	if (!(flags & PARLOAD_OPT_VERIFY_CRC))
		return NULL;
	if (!(ds->desc.flags & PARLOAD_DESC_CRC32C))
		return "no CRC-32C to verify";
	return ds->bad_view_count ? "CRC-32C mismatch" : "CRC-32C verified";
}

/* What one report line says, worked out once for both forms. */
struct load_line {
	const char *label, *type, *strategy, *io, *crc;
	const char *cache, *asked; /* the page-cache mode used, and asked */
	parload_cache used, want;  /* the same */
	uint64_t file_size;
	uint64_t size; /* the file's, or for a selection what it delivers */
	double seconds, gbps;
	bool selected, truncated, verified;
	bool corrected; /* float32 corrected pixels delivered */
};

static void print_load_json(const struct load_line *l,
			    const parload_dataset *ds)
{
	const parload_desc *h = &ds->desc;
	const parload_stats *st = &ds->stats;

	fputs("{\"file\":", stdout);
	json_str(stdout, l->label);
	print_shape_json(&ds->shape);
	printf(",\"file_views\":%" PRIu64 ",\"width\":%" PRIu32
	       ",\"height\":%" PRIu32 ",\"pixel_type\":\"%s\""
	       ",\"bytes_per_pixel\":%u,\"crc32c\":%s"
	       ",\"bytes\":%" PRIu64 ",\"selected_bytes\":%" PRIu64
	       ",\"bytes_read\":%" PRIu64
	       ",\"read_calls\":%" PRIu64 ",\"seconds\":%.9f"
	       ",\"gbps\":%.6g,\"threads\":%u,\"strategy\":\"%s\""
	       ",\"io\":\"%s\",\"cache\":\"%s\",\"verified\":%s"
	       ",\"declared_views\":%" PRIu64 ",\"truncated\":%s"
	       ",\"crc_checked\":%" PRIu64 ",\"bad_views\":%" PRIu64
	       ",\"format\":\"%s\",\"strips_decoded\":%" PRIu64 ",\"codec\":\"%s\""
	       ",\"serial\":",
	       h->count, h->width, h->height, l->type,
	       (unsigned)h->bytes_per_pixel,
	       (h->flags & PARLOAD_DESC_CRC32C) ? "true" : "false",
	       l->file_size, shape_bytes(&ds->shape), st->bytes_read,
	       st->read_calls, l->seconds, l->gbps, st->threads, l->strategy,
	       l->io, l->cache, l->verified ? "true" : "false",
	       st->declared_views,
	       l->truncated ? "true" : "false", st->crc_checked,
	       ds->bad_view_count, parload_format_name(h->format),
	       st->strips_decoded, st->codec);
	/* Why the pixels were read one thread at a time, or null. */
	if (st->serial)
		json_str(stdout, st->serial);
	else
		fputs("null", stdout);
	printf("%s}\n", l->corrected ? ",\"corrected\":true" : "");
}

/* ", cache drop" when the load did not keep the file cached; what was
 * asked when it was not what ran: "(auto)", "(direct refused)" (a file
 * system or strategy without O_DIRECT), "(drop does not apply)" (a
 * stream has no page cache to spare). */
static void print_cache(const struct load_line *l)
{
	if (l->used == l->want) {
		if (l->used != PARLOAD_CACHE_KEEP)
			printf(", cache %s", l->cache);
	} else if (l->want == PARLOAD_CACHE_AUTO) {
		printf(", cache %s (auto)", l->cache);
	} else if (l->want == PARLOAD_CACHE_DIRECT &&
		   l->used == PARLOAD_CACHE_DROP) {
		printf(", cache drop (direct refused)");
	} else if (l->want != PARLOAD_CACHE_KEEP) {
		printf(", cache %s (%s does not apply)", l->cache, l->asked);
	}
}

static void print_load_human(const struct load_line *l,
			     const parload_dataset *ds)
{
	const parload_desc *h = &ds->desc;
	const parload_shape *s = &ds->shape;
	const parload_stats *st = &ds->stats;

	printf("%s: %" PRIu64 " view%s %" PRIu32 "x%" PRIu32 " %s", l->label,
	       s->views, s->views == 1 ? "" : "s", s->cols, s->rows, l->type);
	if (l->selected) {
		fputs(" (", stdout);
		print_shape_human(s, h);
		fputs(")", stdout);
	}
	if (l->truncated)
		printf(" (truncated: %" PRIu64 " of %" PRIu64 " views)",
		       h->count, st->declared_views);
	if (l->corrected)
		fputs(", corrected to f32", stdout);
	fputs(", ", stdout);
	print_bytes(l->size);
	printf(l->seconds >= 0.001 ? " in %.4f s" : " in %.6f s", l->seconds);
	printf(", %.2f GB/s, %u thread%s (%s", l->gbps, st->threads,
	       st->threads == 1 ? "" : "s", l->strategy);
	if (parload_strategy_uses_io(st->strategy))
		printf(", %s", l->io);
	fputs(")", stdout);
	if (l->crc)
		printf(", %s", l->crc);
	print_cache(l);
	if (st->strips_decoded)
		printf(", %" PRIu64 " chunks decoded (%s)", st->strips_decoded,
		       st->codec);
	if (st->serial)
		printf(", serial: %s", st->serial);
	putchar('\n');
}

static void print_load(const char *label, const parload_dataset *ds,
		       const char *io, size_t files, const struct load_cfg *cfg,
		       const struct report_cfg *rep)
{
	struct load_line l = {
		.label = label,
		.type = parload_type_name(ds->desc.pixel_type,
					  ds->desc.encoding),
		.strategy = parload_strategy_name(ds->stats.strategy),
		.io = io,
		.crc = crc_note(ds, cfg->opts.flags),
		.seconds = finite_or_zero(ds->stats.seconds),
		.truncated = ds->stats.declared_views >
			     ds->desc.count,
		.cache = parload_cache_name(ds->stats.cache),
		.asked = parload_cache_name(cfg->cache),
		.used = ds->stats.cache,
		.want = cfg->cache,
		.verified = cfg->verify,
		.selected = !selection_is_whole(&cfg->opts.selection) ||
			    cfg->corrected,
		.corrected = cfg->corrected,
	};

	/* The records the layout describes, after each file's offset. */
	l.file_size = ds->desc.offset * files +
		      ds->desc.count * ds->desc.record_size;
	l.size = l.selected ? shape_bytes(&ds->shape) : l.file_size;
	if (ds->stats.seconds > 0.0)
		l.gbps = finite_or_zero((double)l.size / ds->stats.seconds /
					1e9);
	if (!l.type)
		l.type = "?";
	if (!l.strategy)
		l.strategy = "unknown";
	if (!l.cache)
		l.cache = "unknown";
	if (!l.asked)
		l.asked = l.cache;
	if (rep->json)
		print_load_json(&l, ds);
	else
		print_load_human(&l, ds);
}

/* Load one input, verify it when asked and report.  label names it in the
 * report (its own label, or what the embedded default calls its stream). */
static int load_one(parload_loader *loader, const struct input *in,
		    const char *label, const struct load_cfg *cfg,
		    const struct report_cfg *rep)
{
	struct loaded l;
	int status = EXIT_OK;

	if (load_input(loader, in, cfg, &l) < 0)
		return EXIT_FAIL;
	if (l.name != in->label)
		label = l.name;
	/* Bad views fail the file, which is still reported; a load that is
	 * not the seed's stream is not. */
	if (report_bad_views(l.name, &l.ds))
		status = EXIT_FAIL;
	if (cfg->verify && !verify_seed(l.name, &l.ds, cfg->seed))
		status = EXIT_FAIL;
	else if (!rep->quiet)
		print_load(label, &l.ds, l.io, l.files, cfg, rep);
	loaded_free(&l);
	return status;
}

/* ---------------------------------------------------------------------
 * The embedded default
 * ------------------------------------------------------------------- */

static int run_default(parload_loader *loader, struct load_cfg *cfg,
		       const struct report_cfg *rep)
{
	parload_file_header h;
	parload_error err;
	struct input in;
	char *path = (char *)tmp_file();
	int rc;

	rc = parload_file_header_init(&h, REF_VIEWS, REF_WIDTH, REF_HEIGHT,
				      REF_TYPE, 0);
	if (rc < 0) {
		error_msg("reference stream: %s", parload_strerror(rc));
		return EXIT_FAIL;
	}
	memset(&err, 0, sizeof(err));
	rc = pgen_write(tmp_file(), &h, REF_SEED, &err);
	if (rc < 0) {
		report(tmp_file(), rc, &err);
		return EXIT_FAIL;
	}
	/* Every view is checked, against --verify-seed when given. */
	if (!cfg->verify) {
		cfg->verify = true;
		cfg->seed = REF_SEED;
	}
	input_at(&in, &cfg->layout, 1, &path, 0);
	return load_one(loader, &in, "reference stream", cfg, rep);
}

/* ---------------------------------------------------------------------
 * parload [OPTIONS] [FILE...]
 * ------------------------------------------------------------------- */

enum { OPT_LIST_STRATEGIES = OPT_LOCAL };

static const struct option load_longopts[] = {
	LOAD_LONGOPTS,
	CORRECT_LONGOPTS,
	{ "list-strategies", no_argument, NULL, OPT_LIST_STRATEGIES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "version", no_argument, NULL, OPT_VERSION },
	HELP_LONGOPTS_END,
};

static int print_version(void)
{
	printf(PROG " %s\n", parload_version());
	return EXIT_OK;
}

/* --list-strategies: the library's names, for scripts (the bench). */
static int list_strategies(void)
{
	for (int s = 0; parload_strategy_name(s); s++)
		puts(parload_strategy_name(s));
	return EXIT_OK;
}

/* The load's own options, then the load options. */
static int load_option(void *ctx, int c, const char *arg)
{
	struct load_args *a = ctx;

	switch (c) {
	case OPT_JSON:
		a->rep.json = true;
		return ARG_OK;
	case 'q':
	case OPT_QUIET:
		a->rep.quiet = true;
		return ARG_OK;
	case 'V':
	case OPT_VERSION:
		return print_version();
	case OPT_LIST_STRATEGIES:
		return list_strategies();
	default:
		return parse_load_option(&a->cfg, c, arg);
	}
}

static const struct option_parser load_parser = {
	":" LOAD_SHORTOPTS "qhV", load_longopts, NULL, NULL, load_option,
};

/* Standard input can be read once, and has no header to read ahead of the
 * load. */
static int check_stdin(int argc, char **argv, const struct load_cfg *cfg)
{
	for (int i = optind, seen = 0; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0)
			continue;
		if (seen++)
			return usage_error("standard input ('-') can be read "
					   "only once");
		if (cfg->preallocate)
			return usage_error("--preallocate cannot be used with "
					   "standard input ('-')");
	}
	return EXIT_OK;
}

int cmd_load(int argc, char **argv)
{
	struct load_args a = { .rep = { false, false } };
	parload_loader *loader = NULL;
	int status, n;

	load_cfg_init(&a.cfg);
	status = parse_options(argc, argv, &load_parser, &a);
	if (status != ARG_OK)
		return status;
	status = check_stdin(argc, argv, &a.cfg);
	if (status == EXIT_OK)
		status = check_inputs(&a.cfg.layout, argc - optind,
				      argv + optind);
	if (status == EXIT_OK && optind == argc && a.cfg.layout.raw)
		status = usage_error("--raw describes FILEs: give at least "
				     "one");
	if (status == EXIT_OK && optind == argc && a.cfg.corrected)
		status = usage_error("a correction applies to FILEs: give at "
				     "least one");
	if (status == EXIT_OK)
		status = check_correction(&a.cfg);
	if (status != EXIT_OK)
		return status;
	progress_auto(&a.cfg, a.rep.quiet || a.rep.json);
	/* The temporary file exists before any library thread does (see
	 * tmp_create). */
	if (optind == argc)
		status = tmp_create(NULL);
	if (status == EXIT_OK)
		status = new_loader(&loader, &a.cfg);
	if (status == EXIT_OK && optind == argc)
		status = run_default(loader, &a.cfg, &a.rep);
	tmp_remove();
	n = input_count(&a.cfg.layout, argc - optind);
	for (int i = 0; loader && i < n && !was_interrupted(); i++) {
		struct input in;

		input_at(&in, &a.cfg.layout, argc - optind, argv + optind, i);
		if (load_one(loader, &in, in.label, &a.cfg, &a.rep) != EXIT_OK)
			status = EXIT_FAIL;
	}
	end_loader(loader);
	return status;
}
