/*
 * options.c - the options of every subcommand that reads a stream: the
 * load options, the layout (--raw, --concat) and the inputs the FILE
 * operands make, and the selection (see common.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "gen.h"

/* ---------------------------------------------------------------------
 * Load options
 * ------------------------------------------------------------------- */

void load_cfg_init(struct load_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	parload_options_init(&cfg->opts);
	cfg->opts.error = NULL;
	cfg->progress = -1;
	cfg->timeout = 10.0;
}

/* The options that only set flags, and the flags they set. */
static const struct {
	int opt;
	unsigned flags;
} flag_options[] = {
	{ OPT_NO_BIND, PARLOAD_OPT_NO_BIND },
	{ OPT_NO_HUGEPAGES, PARLOAD_OPT_NO_HUGEPAGES },
	{ OPT_VERIFY, PARLOAD_OPT_VERIFY_CRC },
	{ OPT_KEEP_GOING, PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING },
	{ OPT_ALLOW_TRUNCATED, PARLOAD_OPT_ALLOW_TRUNCATED },
	{ OPT_MAP_SINOGRAMS, PARLOAD_OPT_MAP_SINOGRAMS },
};

/* A name from the library's table kind into *out, or the library's
 * message. */
static int parse_name(int kind, const char *arg, int *out)
{
	parload_error err;
	int v = parload_name_parse(kind, arg, &err);

	if (v < 0)
		return usage_error("%s", err.message);
	*out = v;
	return ARG_OK;
}

/* --strategy, --io and --cache take the library's names. */
static int parse_names(struct load_cfg *cfg, int c, const char *arg)
{
	parload_options *o = &cfg->opts;
	int v, rc;

	rc = parse_name(c == OPT_CACHE	  ? PARLOAD_NAMES_CACHE :
			c == OPT_STRATEGY ? PARLOAD_NAMES_STRATEGY :
					    PARLOAD_NAMES_IO,
			arg, &v);
	if (rc != ARG_OK)
		return rc;
	if (c == OPT_CACHE)
		cfg->cache = (parload_cache)v;
	else if (c == OPT_STRATEGY)
		o->strategy = (parload_strategy)v;
	else
		o->io = (parload_io)v;
	return ARG_OK;
}

/* --timeout S: seconds, a decimal number above 0 and at most a day. */
static int parse_seconds(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0.0) || v > 86400.0)
		return usage_error("invalid timeout '%s' (seconds, above 0 and "
				   "at most 86400)", arg);
	*out = v;
	return ARG_OK;
}

static int parse_numbers(struct load_cfg *cfg, int c, const char *arg)
{
	uint64_t v;
	int rc;

	switch (c) {
	case 't':
	case OPT_THREADS:
		if (!parse_u64(arg, PARLOAD_THREADS_MAX, &v))
			return usage_error("invalid thread count '%s' "
					   "(0 to %u)", arg,
					   PARLOAD_THREADS_MAX);
		cfg->opts.threads = (unsigned)v;
		return ARG_OK;
	case OPT_BUFFER:
		rc = parse_size(arg, &cfg->opts.buffer_size);
		if (rc)
			return usage_error("invalid buffer size '%s'%s", arg,
					   size_why(rc));
		return ARG_OK;
	case OPT_MAX_READ:
		rc = parse_size(arg, &cfg->opts.max_read);
		if (rc)
			return usage_error("invalid read size '%s'%s", arg,
					   size_why(rc));
		return ARG_OK;
	case OPT_VERIFY_SEED:
		if (!parse_u64(arg, UINT64_MAX, &cfg->seed))
			return usage_error("invalid seed '%s'", arg);
		cfg->verify = true;
		return ARG_OK;
	case OPT_TIMEOUT:
		return parse_seconds(arg, &cfg->timeout);
	default:
		return ARG_UNKNOWN;
	}
}

/* --flats, --darks, --reduce, --minus-log, --bin. */
static int parse_correct_option(struct corr_cfg *k, int c, const char *arg)
{
	uint64_t v;
	int r, rc;

	switch (c) {
	case OPT_DARKS:
	case OPT_FLATS:
		k->path[c == OPT_FLATS] = arg;
		break;
	case OPT_REDUCE:
		rc = parse_name(PARLOAD_NAMES_REDUCE, arg, &r);
		if (rc == ARG_OK)
			k->corr.reduce = (parload_reduce)r;
		return rc;
	case OPT_MINUS_LOG:
		k->corr.flags |= PARLOAD_CORR_MINUS_LOG;
		break;
	case OPT_BIN:
		if (!parse_u64(arg, UINT32_MAX, &v) || v < 1)
			return usage_error("invalid --bin '%s' (a factor of 1 "
					   "or more)", arg);
		k->corr.bin = (unsigned)v;
		if (v == 1)
			return ARG_OK;
		break;
	default:
		return ARG_UNKNOWN;
	}
	k->on = true;
	return ARG_OK;
}

int parse_load_option(struct load_cfg *cfg, int c, const char *arg)
{
	int rc = parse_select_option(&cfg->opts.selection, c, arg);

	if (rc == ARG_UNKNOWN)
		rc = parse_correct_option(&cfg->correct, c, arg);

	if (rc == ARG_UNKNOWN)
		rc = parse_layout_option(&cfg->layout, c, arg);
	if (rc != ARG_UNKNOWN)
		return rc;
	for (size_t i = 0; i < sizeof(flag_options) / sizeof(*flag_options);
	     i++) {
		if (flag_options[i].opt == c) {
			cfg->opts.flags |= flag_options[i].flags;
			return ARG_OK;
		}
	}
	if (c == OPT_PREALLOCATE) {
		cfg->preallocate = true;
		return ARG_OK;
	}
	if (c == OPT_PROGRESS || c == OPT_NO_PROGRESS) {
		cfg->progress = c == OPT_PROGRESS;
		return ARG_OK;
	}
	if (c == OPT_FOLLOW) {
		cfg->follow = true;
		return ARG_OK;
	}
	if (c == OPT_STRATEGY || c == OPT_IO || c == OPT_CACHE)
		return parse_names(cfg, c, arg);
	return parse_numbers(cfg, c, arg);
}

/* ---------------------------------------------------------------------
 * Layouts and inputs
 * ------------------------------------------------------------------- */

int parse_layout_option(struct layout_cfg *lc, int c, const char *arg)
{
	parload_error err;
	int rc, v = 0;

	if (c == OPT_CONCAT) {
		lc->concat = true;
		return ARG_OK;
	}
	if (c == OPT_DATASET) {
		lc->dataset = arg;
		return ARG_OK;
	}
	if (c == OPT_CONFINE) {
		lc->confine = true;
		return ARG_OK;
	}
	if (c == OPT_FRAMES) {
		rc = parse_name(PARLOAD_NAMES_FRAMES, arg, &v);
		if (rc == ARG_OK)
			lc->frames = (parload_frames)v;
		return rc;
	}
	if (c != OPT_RAW)
		return ARG_UNKNOWN;
	if (lc->raw)
		return usage_error("--raw given twice");
	memset(&err, 0, sizeof(err));
	rc = parload_desc_parse(arg, &lc->desc, &err);
	if (rc < 0)
		return usage_error("--raw: %s", err.message[0] ?
				   err.message : parload_strerror(rc));
	lc->raw = true;
	return ARG_OK;
}

bool is_nhdr(const char *path)
{
	size_t n = strlen(path);

	return n >= 5 && strcmp(path + n - 5, ".nhdr") == 0;
}

int check_inputs(const struct layout_cfg *lc, int nfiles, char **files)
{
	if (lc->concat && !lc->raw)
		return usage_error("--concat needs --raw SPEC: the files of "
				   "one stream share one layout");
	for (int i = 0; i < nfiles; i++) {
		if (!is_nhdr(files[i]))
			continue;
		if (lc->raw)
			return usage_error("--raw: '%s' is a NRRD header, which "
					   "states its own layout; --raw "
					   "describes raw data files", files[i]);
		if (lc->concat)
			return usage_error("--concat: '%s' is a NRRD header, "
					   "which names its own data files",
					   files[i]);
	}
	return EXIT_OK;
}

int input_count(const struct layout_cfg *lc, int nfiles)
{
	return lc->concat && nfiles > 0 ? 1 : nfiles;
}

void input_at(struct input *in, const struct layout_cfg *lc, int nfiles,
	      char **files, int i)
{
	memset(in, 0, sizeof(*in));
	in->path = files[i];
	in->n = 1;
	if (lc->concat) {
		in->paths = (const char *const *)files;
		in->n = (size_t)nfiles;
	}
	if (in->n > 1)
		snprintf(in->label, sizeof(in->label), "%s ... %s (%zu files)",
			 files[0], files[nfiles - 1], in->n);
	else
		snprintf(in->label, sizeof(in->label), "%s", in->path);
}

void input_source(parload_source *src, const struct input *in,
		  const struct layout_cfg *lc)
{
	parload_source_init(src);
	if (in->paths) {
		src->paths = in->paths;
		src->path_count = in->n;
	} else {
		src->path = in->path;
	}
	src->desc = lc->raw ? &lc->desc : NULL;
	src->dataset = lc->dataset;
	src->frames = lc->frames;
	src->flags = lc->confine ? PARLOAD_SRC_CONFINE : 0;
}

/* "--flats same": the references the scan's own container holds. */
static bool is_same(const char *path)
{
	return path && strcmp(path, "same") == 0;
}

/* Reference set i (darks, flats) given as path: a file of the layout
 * --raw gives (a .nhdr states its own), or "same": the scan's source
 * with its frames set to the flats or darks. */
static void refs_source(parload_source *out, const char *path, int i,
			const parload_source *scan,
			const struct layout_cfg *lc)
{
	if (is_same(path)) {
		*out = *scan;
		out->frames = i ? PARLOAD_FRAMES_FLATS : PARLOAD_FRAMES_DARKS;
		return;
	}
	parload_source_init(out);
	out->path = path;
	out->flags = lc->confine ? PARLOAD_SRC_CONFINE : 0;
	if (lc->raw && path && !is_nhdr(path))
		out->desc = &lc->desc;
}

/* The correction of a load of scan; NULL when none is asked. */
const parload_correction *correction_of(const struct corr_cfg *k,
					const struct layout_cfg *lc,
					const parload_source *scan,
					struct correction *out)
{
	if (!k->on)
		return NULL;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 2; i++)
		refs_source(&out->refs[i].source, k->path[i], i, scan, lc);
	out->corr = k->corr;
	out->corr.darks = k->path[0] ? &out->refs[0] : NULL;
	out->corr.flats = k->path[1] ? &out->refs[1] : NULL;
	return &out->corr;
}

int check_same_refs(const struct corr_cfg *k, const parload_source *scan,
		    const char *name, parload_error *err)
{
	const char *opt = is_same(k->path[1]) ? "--flats" : "--darks";
	parload_desc d;
	int rc;

	if (!is_same(k->path[0]) && !is_same(k->path[1]))
		return 0;
	if (scan->fd >= 0 || scan->desc)
		goto refuse;
	rc = parload_describe(scan, 0, &d, err);
	if (rc || d.format == PARLOAD_FORMAT_HDF5)
		return rc;
refuse:
	err->code = PARLOAD_EINVAL;
	snprintf(err->message, sizeof(err->message),
		 "%s: %s same names the references stored in the scan's own "
		 "HDF5 file, and this is %s; give the references' file",
		 name, opt,
		 scan->fd >= 0 ? "not a file" :
		 scan->desc    ? "a raw stream (--raw)" :
		 d.format == PARLOAD_FORMAT_TIFF ? "a TIFF" :
						   "not an HDF5 file");
	return PARLOAD_EINVAL;
}

/* What a corrected load cannot be asked for with the options: arrays
 * sized from the file's pixel type, a check of the file's pixels. */
int check_correction(const struct load_cfg *cfg)
{
	if (!cfg->correct.on)
		return EXIT_OK;
	if (cfg->preallocate)
		return usage_error("--preallocate sizes the file's pixels; a "
				   "corrected load delivers float32 (leave "
				   "one out)");
	if (cfg->verify)
		return usage_error("--verify-seed checks the file's pixels; a "
				   "corrected load delivers float32 (leave "
				   "one out)");
	return EXIT_OK;
}

/* ---------------------------------------------------------------------
 * Selections
 * ------------------------------------------------------------------- */

/* --views A:B:S, --rows A:B, --cols A:B: the library parses, the message
 * names the option. */
static int parse_slice(const char *opt, const char *arg, int allow_step,
		       parload_slice *out)
{
	parload_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = parload_slice_parse(arg, allow_step, out, &err);
	if (rc < 0)
		return usage_error("invalid %s '%s': %s", opt, arg,
				   err.message[0] ? err.message :
						    parload_strerror(rc));
	/* A step is wrong whatever the file; say so before any load. */
	if (out->step != PARLOAD_OMIT && out->step < 1)
		return usage_error("invalid %s '%s': the step must be 1 or "
				   "more", opt, arg);
	return ARG_OK;
}

int parse_select_option(parload_selection *sel, int c, const char *arg)
{
	int layout, rc;

	switch (c) {
	case OPT_SEL_VIEWS:
		return parse_slice("--views", arg, 1, &sel->views);
	case OPT_SEL_ROWS:
		return parse_slice("--rows", arg, 0, &sel->rows);
	case OPT_SEL_COLS:
		return parse_slice("--cols", arg, 0, &sel->cols);
	case OPT_SEL_LAYOUT:
		rc = parse_name(PARLOAD_NAMES_LAYOUT, arg, &layout);
		if (rc == ARG_OK)
			sel->layout = (parload_layout)layout;
		return rc;
	default:
		return ARG_UNKNOWN;
	}
}

static bool slice_eq(const parload_slice *a, const parload_slice *b)
{
	return a->start == b->start && a->stop == b->stop &&
	       a->step == b->step;
}

bool selection_is_whole(const parload_selection *sel)
{
	parload_selection whole;

	parload_selection_init(&whole);
	return slice_eq(&sel->views, &whole.views) &&
	       slice_eq(&sel->rows, &whole.rows) &&
	       slice_eq(&sel->cols, &whole.cols) &&
	       sel->layout == whole.layout;
}

uint64_t shape_bytes(const parload_shape *s)
{
	return s->views * (PARLOAD_VIEW_HEADER_SIZE + s->view_bytes);
}

static const char *layout_name(parload_layout layout)
{
	const char *name = parload_layout_name(layout);

	return name ? name : "unknown";
}

/* "views 0:10:4 of 10, rows 2:6 of 8, cols 0:16 of 16, layout views" */
void print_shape_human(const parload_shape *s, const parload_desc *h)
{
	const uint64_t last = s->view_start + (s->views - 1) * s->view_step;

	printf("views %" PRIu64 ":%" PRIu64 ":%" PRIu64 " of %" PRIu64
	       ", rows %" PRIu32 ":%" PRIu32 " of %" PRIu32
	       ", cols %" PRIu32 ":%" PRIu32 " of %" PRIu32 ", layout %s",
	       s->view_start, s->views ? last + 1 : s->view_start,
	       s->view_step, h->count, s->row_start,
	       s->row_start + s->rows, h->height, s->col_start,
	       s->col_start + s->cols, h->width, layout_name(s->layout));
}

void print_shape_json(const parload_shape *s)
{
	printf(",\"views\":%" PRIu64 ",\"view_start\":%" PRIu64
	       ",\"view_step\":%" PRIu64 ",\"rows\":%" PRIu32
	       ",\"row_start\":%" PRIu32 ",\"cols\":%" PRIu32
	       ",\"col_start\":%" PRIu32 ",\"layout\":\"%s\"",
	       s->views, s->view_start, s->view_step, s->rows, s->row_start,
	       s->cols, s->col_start, layout_name(s->layout));
}
