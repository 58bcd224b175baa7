/*
 * cmd_gen.c - parload gen [OPTIONS] OUT: write a deterministic stream.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "gen.h"

SUBCOMMAND(gen);

const char cmd_gen_help[] =
"[OPTIONS] OUT\n"
"\n"
"Write a deterministic stream to OUT: its content is a function of the seed,\n"
"the view and the byte, so 'parload --verify-seed S' can check a load.\n"
"      --views N          number of views (default 2000; 0 is allowed)\n"
"      --width W          pixels per row (default 896)\n"
"      --height H         rows per view (default 64)\n"
"      --type T           u8, u16 (default), i16, u32, i32, f32 or f64\n"
"      --crc              store each payload's CRC-32C in its view header\n"
"      --seed S           content seed (default 1)\n"
"  -h, --help             show this help and exit\n";

enum {
	OPT_VIEWS = OPT_LOCAL,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_TYPE,
	OPT_CRC,
	OPT_SEED,
};

static const struct option gen_longopts[] = {
	{ "views", required_argument, NULL, OPT_VIEWS },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "height", required_argument, NULL, OPT_HEIGHT },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "crc", no_argument, NULL, OPT_CRC },
	{ "seed", required_argument, NULL, OPT_SEED },
	HELP_LONGOPTS_END,
};

struct gen_cfg {
	uint64_t views, width, height, seed;
	int type;
	uint32_t flags;
};

/* A width or a height: 1 to 2^32 - 1. */
static int parse_dim(const char *what, const char *arg, uint64_t *out)
{
	if (!parse_u64(arg, UINT32_MAX, out) || !*out)
		return usage_error("invalid %s '%s' (1 to %" PRIu32 ")", what,
				   arg, UINT32_MAX);
	return ARG_OK;
}

static int gen_option(void *ctx, int c, const char *arg)
{
	struct gen_cfg *g = ctx;
	parload_error err;

	switch (c) {
	case OPT_VIEWS:
		if (!parse_u64(arg, UINT64_MAX, &g->views))
			return usage_error("invalid view count '%s'", arg);
		return ARG_OK;
	case OPT_WIDTH:
		return parse_dim("width", arg, &g->width);
	case OPT_HEIGHT:
		return parse_dim("height", arg, &g->height);
	case OPT_TYPE:
		g->type = parload_name_parse(PARLOAD_NAMES_PIXEL, arg, &err);
		if (g->type < 0)
			return usage_error("%s", err.message);
		return ARG_OK;
	case OPT_CRC:
		g->flags |= PARLOAD_FLAG_CRC32C;
		return ARG_OK;
	case OPT_SEED:
		if (!parse_u64(arg, UINT64_MAX, &g->seed))
			return usage_error("invalid seed '%s'", arg);
		return ARG_OK;
	default:
		return ARG_UNKNOWN;
	}
}

static const struct option_parser gen_parser = {
	":h", gen_longopts, "gen", cmd_gen_help, gen_option,
};

/* Parse the arguments.  ARG_OK to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct gen_cfg *g)
{
	int rc = parse_options(argc, argv, &gen_parser, g);

	if (rc != ARG_OK)
		return rc;
	if (optind == argc)
		return usage_error("gen: missing output file");
	if (argc - optind > 1)
		return usage_error("gen: one output file only, not '%s'",
				   argv[optind + 1]);
	return ARG_OK;
}

int cmd_gen(int argc, char **argv)
{
	struct gen_cfg g = { REF_VIEWS, REF_WIDTH, REF_HEIGHT, REF_SEED,
			     REF_TYPE, 0 };
	parload_file_header h;
	parload_error err;
	struct stat st;
	const char *out;
	bool existed;
	int rc;

	rc = parse_args(argc, argv, &g);
	if (rc != ARG_OK)
		return rc;
	out = argv[optind];
	rc = parload_file_header_init(&h, g.views, (uint32_t)g.width,
				      (uint32_t)g.height, g.type, g.flags);
	if (rc < 0)
		return usage_error("gen: cannot describe %" PRIu64 " views of "
				   "%" PRIu64 " x %" PRIu64 " %s: %s", g.views,
				   g.width, g.height,
				   parload_pixel_name(g.type),
				   parload_strerror(rc));

	/* A failed write leaves no half-written file behind, but never
	 * removes a file that was there before (it may be one the writer
	 * could not even open). */
	existed = lstat(out, &st) == 0;
	memset(&err, 0, sizeof(err));
	rc = pgen_write(out, &h, g.seed, &err);
	if (rc < 0) {
		report(out, rc, &err);
		if (!existed)
			unlink(out);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
