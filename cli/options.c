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
	parload_settings_init(&cfg->set);
	cfg->progress = -1;
	cfg_sync(cfg);
}

/* The library's key of an option: its long name (the keys are the long
 * options' names), -t's "threads". */
static const struct option key_options[] = { LOAD_LONGOPTS, CORRECT_LONGOPTS,
					     { NULL, 0, NULL, 0 } };

static const char *key_of(int c)
{
	if (c == 't')
		return "threads";
	for (const struct option *o = key_options; o->name; o++)
		if (o->val == c)
			return o->name;
	return NULL;
}

/* Option c through the library's settings s: ARG_OK, EXIT_USAGE after
 * the library's message, or ARG_UNKNOWN for an option it has no key
 * for. */
static int set_option(parload_settings *s, int c, const char *arg)
{
	const char *key = c == OPT_CONCAT ? NULL : key_of(c);
	parload_error err;

	if (!key)
		return ARG_UNKNOWN;
	memset(&err, 0, sizeof(err));
	if (parload_settings_set(s, key, arg, &err) < 0)
		return usage_error("%s", err.message);
	return ARG_OK;
}

/* The layout options' part of the settings, and back. */
static void layout_to(const struct layout_cfg *lc, parload_settings *s)
{
	s->desc = lc->desc;
	s->raw = lc->raw;
	s->dataset = lc->dataset;
	s->frames = lc->frames;
	s->source_flags = lc->confine ? PARLOAD_SRC_CONFINE : 0;
}

static void layout_from(struct layout_cfg *lc, const parload_settings *s)
{
	lc->desc = s->desc;
	lc->raw = s->raw != 0;
	lc->dataset = s->dataset;
	lc->frames = s->frames;
	lc->confine = (s->source_flags & PARLOAD_SRC_CONFINE) != 0;
}

void cfg_sync(struct load_cfg *cfg)
{
	const parload_settings *s = &cfg->set;

	cfg->opts = s->options;
	cfg->opts.error = NULL;
	layout_from(&cfg->layout, s);
	cfg->verify = s->verify_seed != 0;
	cfg->seed = s->seed;
	cfg->follow = (s->request_flags & PARLOAD_REQ_FOLLOW) != 0;
	cfg->timeout = s->timeout;
	cfg->corrected = s->correct_on != 0;
	cfg->cache = s->cache;
}

int parse_load_option(struct load_cfg *cfg, int c, const char *arg)
{
	int rc;

	switch (c) {
	case OPT_PREALLOCATE:
		cfg->preallocate = true;
		return ARG_OK;
	case OPT_PROGRESS:
	case OPT_NO_PROGRESS:
		cfg->progress = c == OPT_PROGRESS;
		return ARG_OK;
	case OPT_CONCAT:
		cfg->layout.concat = true;
		return ARG_OK;
	}
	rc = set_option(&cfg->set, c, arg);
	if (rc == ARG_OK)
		cfg_sync(cfg);
	return rc;
}

/* ---------------------------------------------------------------------
 * Layouts and inputs
 * ------------------------------------------------------------------- */

int parse_layout_option(struct layout_cfg *lc, int c, const char *arg)
{
	parload_settings s;
	int rc;

	if (c == OPT_CONCAT) {
		lc->concat = true;
		return ARG_OK;
	}
	if (c != OPT_RAW && c != OPT_DATASET && c != OPT_FRAMES &&
	    c != OPT_CONFINE)
		return ARG_UNKNOWN;
	parload_settings_init(&s);
	layout_to(lc, &s);
	rc = set_option(&s, c, arg);
	if (rc == ARG_OK)
		layout_from(lc, &s);
	return rc;
}

bool is_nhdr(const char *path)
{
	const char *f = parload_format_named(path);

	return f && strcmp(f, "nhdr") == 0;
}

int check_inputs(const struct layout_cfg *lc, int nfiles, char **files)
{
	const char *f = nfiles ? parload_format_named(files[0]) : NULL;

	/* TIFF and HDF5 files state their layout: the library reads their
	 * pages or frames as one stream. */
	if (lc->concat && !lc->raw &&
	    !(f && (strcmp(f, "tiff") == 0 || strcmp(f, "hdf5") == 0)))
		return usage_error("--concat needs --raw SPEC (or TIFF or "
				   "HDF5 files): the files of one stream "
				   "share one layout");
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

int check_same_refs(const parload_settings *k, const parload_source *scan,
		    const char *name, parload_error *err)
{
	const char *opt = is_same(k->refs[1]) ? "--flats" : "--darks";
	parload_desc d;
	int rc;

	if (!is_same(k->refs[0]) && !is_same(k->refs[1]))
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
	if (!cfg->corrected)
		return EXIT_OK;
	if (cfg->preallocate)
		return usage_error("--preallocate sizes the file's pixels; a "
				   "corrected load delivers float32 (leave "
				   "one out)");
	return EXIT_OK;
}

/* ---------------------------------------------------------------------
 * Selections
 * ------------------------------------------------------------------- */

int parse_select_option(parload_selection *sel, int c, const char *arg)
{
	parload_settings s;
	int rc;

	if (c != OPT_SEL_VIEWS && c != OPT_SEL_ROWS && c != OPT_SEL_COLS &&
	    c != OPT_SEL_LAYOUT)
		return ARG_UNKNOWN;
	parload_settings_init(&s);
	s.options.selection = *sel;
	rc = set_option(&s, c, arg);
	if (rc == ARG_OK)
		*sel = s.options.selection;
	return rc;
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
