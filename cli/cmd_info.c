/*
 * cmd_info.c - parload info [OPTIONS] FILE...: show each file's header and
 * whether the file is valid; for a raw layout (--raw, a .nhdr, --concat)
 * what the layout resolves to over the files.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

SUBCOMMAND(info);

const char cmd_info_help[] =
"[OPTIONS] FILE...\n"
"\n"
"Print each file's header fields and whether the file is valid; the fields\n"
"of a damaged file that begins with the magic are shown too.  With a\n"
"selection, also what a load of it would deliver (its shape, in the order\n"
"of the layout) and read; a selection the file cannot give fails the file.\n"
"With --raw SPEC (or for a NRRD header or a NumPy .npy, which state one),\n"
"the layout instead: its description, record size, views, the offset of\n"
"the first record and the bytes after the last complete record (a partial\n"
"record, or what the layout's count leaves out); with --concat, of all\n"
"the FILEs as one stream, file by file.  The JSON has the same as fields\n"
"(\"layout\"), for parload's own files too.  A TIFF or HDF5 FILE shows its\n"
"format, type and sizes, and where its views lie as a raw stream's (a\n"
"contiguous dataset) the layout that reads them from data_file (FILE, or\n"
"the file an external link leads to) and its offset; a damaged one fails\n"
"as its load does.\n"
"      --raw SPEC         the files' layout (see 'parload --help'); it\n"
"                         overrides a parload header\n"
"      --concat           all FILEs are one stream (needs --raw, but for\n"
"                         TIFF and HDF5 files)\n"
"      --dataset PATH     an HDF5 FILE's dataset (see 'parload --help')\n"
"      --frames KIND      projections (default), flats or darks\n"
"      --confine          the files a FILE names must lie in its directory\n"
"                         (see 'parload --help')\n"
"      --views A:B[:S]    views A to B (B excluded) in steps of S; any part\n"
"                         may be omitted, negative values count from the end\n"
"      --rows A:B         detector rows A to B of each view\n"
"      --cols A:B         columns A to B of each row\n"
"      --layout L         views (view after view, the default) or sinograms\n"
"                         (for each row, that row of every selected view)\n"
"      --json             one JSON object per file instead\n"
"  -h, --help             show this help and exit\n";

/* What is known of one file, or of one raw stream. */
struct info {
	const char *path; /* the input's label */
	parload_file_header h;
	parload_desc d;   /* what a load of it works from (when valid) */
	parload_error err;
	struct stat st;
	bool valid;       /* parload_read_header accepted it */
	bool have_fields; /* h holds the file's first 64 bytes */
	bool have_st;
	/* With a selection: the shape it resolves to, or why it does not. */
	const parload_selection *sel;
	parload_shape shape;
	parload_error sel_err;
	bool sel_ok;
};

/* What a load of the selection reads: the file header, then of each
 * selected view its header and the band of whole rows that holds the
 * selected ones (a column crop is cut out of whole rows). */
static uint64_t read_bytes(const struct info *in)
{
	const parload_shape *s = &in->shape;

	/* A raw stream: each view's own header and its band of rows. */
	if (in->d.format == PARLOAD_FORMAT_RAW)
		return s->views * (in->d.header + s->rows * in->d.row_size);
	return PARLOAD_FILE_HEADER_SIZE +
	       s->views * (PARLOAD_VIEW_HEADER_SIZE +
			   (uint64_t)s->rows * in->h.width * s->bytes_per_pixel);
}

/* The shape's dimensions in the order of its layout. */
static void shape_dims(const parload_shape *s, uint64_t dims[3])
{
	const bool sino = s->layout == PARLOAD_LAYOUT_SINOGRAMS;

	dims[0] = sino ? s->rows : s->views;
	dims[1] = sino ? s->views : s->rows;
	dims[2] = s->cols;
}

static void info_human_selection(const struct info *in)
{
	uint64_t d[3];

	if (!in->sel_ok) {
		printf("selection:         invalid\n");
		return;
	}
	shape_dims(&in->shape, d);
	fputs("selection:         ", stdout);
	print_shape_human(&in->shape, &in->d);
	printf("\nshape:             %" PRIu64 " x %" PRIu64 " x %" PRIu64
	       " (%s)\n", d[0], d[1], d[2],
	       in->shape.layout == PARLOAD_LAYOUT_SINOGRAMS ?
		       "rows x views x cols" : "views x rows x cols");
	printf("selected_bytes:    %" PRIu64 "\n", shape_bytes(&in->shape));
	printf("read_bytes:        %" PRIu64 "\n", read_bytes(in));
}

static void info_json_selection(const struct info *in)
{
	uint64_t d[3];

	if (!in->sel_ok) {
		fputs(",\"selection_error\":", stdout);
		json_str(stdout, in->sel_err.message);
		return;
	}
	shape_dims(&in->shape, d);
	fputs(",\"selection\":{\"file_views\":", stdout);
	printf("%" PRIu64, in->d.count);
	print_shape_json(&in->shape);
	printf(",\"shape\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]"
	       ",\"selected_bytes\":%" PRIu64 ",\"read_bytes\":%" PRIu64 "}",
	       d[0], d[1], d[2], shape_bytes(&in->shape), read_bytes(in));
}

/* The end of a JSON object: why it is not valid, or the selection. */
static void info_json_end(const struct info *in)
{
	if (!in->valid) {
		fputs(",\"error\":", stdout);
		json_str(stdout, in->err.message);
	}
	if (in->valid && in->sel)
		info_json_selection(in);
	puts("}");
}

static void info_human_fields(const parload_file_header *h, bool valid)
{
	const char *type = parload_pixel_name(h->pixel_type);
	uint64_t size;

	printf("magic:             ok\n");
	printf("version:           %u.%u\n", (unsigned)h->version_major,
	       (unsigned)h->version_minor);
	printf("file_header_size:  %u\n", (unsigned)h->file_header_size);
	printf("view_header_size:  %u\n", (unsigned)h->view_header_size);
	printf("view_count:        %" PRIu64 "\n", h->view_count);
	printf("width:             %" PRIu32 "\n", h->width);
	printf("height:            %" PRIu32 "\n", h->height);
	printf("pixel_type:        %s (%u)\n", type ? type : "unknown",
	       (unsigned)h->pixel_type);
	printf("bytes_per_pixel:   %u\n", (unsigned)h->bytes_per_pixel);
	printf("flags:             0x%" PRIx32 "%s\n", h->flags,
	       (h->flags & PARLOAD_FLAG_CRC32C) ? " (crc32c)" : "");
	printf("payload_size:      %" PRIu64 "\n", h->payload_size);
	if (valid && parload_file_size(h, &size) == 0)
		printf("expected_size:     %" PRIu64 "\n", size);
}

/* A valid file of parload's own format: its layout, as a raw one's. */
static void print_native_layout(const struct info *in, bool json)
{
	struct layout_view lv;
	char text[512];

	layout_init(&lv, &in->d, in->d.count);
	if (!json) {
		parload_desc_format(&in->d, text, sizeof(text));
		printf("layout:            %s\n", text);
		printf("record_size:       %" PRIu64 "\n", in->d.record_size);
		return;
	}
	if (layout_add_files(&lv, &in->path, 1))
		layout_print_json(&lv);
	layout_free(&lv);
}

static void info_human(const struct info *in)
{
	printf("file:              %s\n", in->path);
	if (in->have_fields)
		info_human_fields(&in->h, in->valid);
	if (in->have_st)
		printf("file_size:         %jd\n", (intmax_t)in->st.st_size);
	if (in->valid)
		print_native_layout(in, false);
	printf("valid:             %s\n", in->valid ? "yes" : "no");
	if (in->valid && in->sel)
		info_human_selection(in);
}

static void info_json_fields(const parload_file_header *h, bool valid)
{
	const char *type = parload_pixel_name(h->pixel_type);
	uint64_t size;

	printf(",\"version_major\":%u,\"version_minor\":%u"
	       ",\"file_header_size\":%u,\"view_header_size\":%u"
	       ",\"view_count\":%" PRIu64 ",\"width\":%" PRIu32
	       ",\"height\":%" PRIu32 ",\"pixel_type\":",
	       (unsigned)h->version_major, (unsigned)h->version_minor,
	       (unsigned)h->file_header_size, (unsigned)h->view_header_size,
	       h->view_count, h->width, h->height);
	if (type)
		printf("\"%s\"", type);
	else
		fputs("null", stdout);
	printf(",\"bytes_per_pixel\":%u,\"flags\":%" PRIu32
	       ",\"crc32c\":%s,\"payload_size\":%" PRIu64,
	       (unsigned)h->bytes_per_pixel, h->flags,
	       (h->flags & PARLOAD_FLAG_CRC32C) ? "true" : "false",
	       h->payload_size);
	if (valid && parload_file_size(h, &size) == 0)
		printf(",\"expected_size\":%" PRIu64, size);
}

static void info_json(const struct info *in)
{
	fputs("{\"file\":", stdout);
	json_str(stdout, in->path);
	printf(",\"valid\":%s", in->valid ? "true" : "false");
	if (in->have_fields)
		info_json_fields(&in->h, in->valid);
	if (in->have_st)
		printf(",\"file_size\":%jd", (intmax_t)in->st.st_size);
	if (in->valid)
		print_native_layout(in, true);
	info_json_end(in);
}

/* Resolve the selection against a valid header; the library's message
 * names the bad part but not the file. */
static void resolve(struct info *in)
{
	char msg[sizeof(in->sel_err.message)];
	int rc;

	rc = parload_selection_resolve(&in->d, in->sel, &in->shape,
				       &in->sel_err);

	in->sel_ok = rc == 0;
	if (in->sel_ok)
		return;
	if (snprintf(msg, sizeof(msg), "%s: %s", in->path,
		     in->sel_err.message[0] ? in->sel_err.message :
					      parload_strerror(rc)) > 0)
		memcpy(in->sel_err.message, msg, sizeof(msg));
}

static int info_one(const char *path, const parload_selection *sel,
		    bool json)
{
	struct info in;
	parload_error peek_err;
	int rc;

	memset(&in, 0, sizeof(in));
	in.path = path;
	in.sel = sel;
	rc = parload_read_header(path, &in.h, &in.err);
	in.valid = rc == 0;
	if (!in.valid && !in.err.message[0])
		snprintf(in.err.message, sizeof(in.err.message), "%s: %s",
			 path, parload_strerror(rc));
	/* The fields of a damaged file, when it begins with the magic. */
	in.have_fields = in.valid || parload_peek_header(path, &in.h,
							 &peek_err) == 0;
	in.have_st = stat(path, &in.st) == 0;
	if (in.valid)
		parload_desc_from_header(&in.d, &in.h);
	if (in.valid && sel)
		resolve(&in);
	if (json)
		info_json(&in);
	else
		info_human(&in);
	if (!in.valid || (sel && !in.sel_ok)) {
		error_msg("%s", in.valid ? in.sel_err.message : in.err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* ---- a raw stream: --raw, --concat or a .nhdr ---- */

static void stream_human(const struct info *in, const struct layout_view *lv,
			 bool have_layout)
{
	printf("file:              %s\n", in->path);
	if (have_layout)
		layout_print_human(lv);
	if (in->have_st && lv->nfiles == 1)
		printf("file_size:         %jd\n", (intmax_t)in->st.st_size);
	printf("valid:             %s\n", in->valid ? "yes" : "no");
	if (in->valid && in->sel)
		info_human_selection(in);
}

static void stream_json(const struct info *in, const struct layout_view *lv,
			bool have_layout)
{
	fputs("{\"file\":", stdout);
	json_str(stdout, in->path);
	printf(",\"valid\":%s", in->valid ? "true" : "false");
	if (have_layout)
		layout_print_json(lv);
	if (in->have_st && lv->nfiles == 1)
		printf(",\"file_size\":%jd", (intmax_t)in->st.st_size);
	info_json_end(in);
}

/* A source described already (a container): the description, or why
 * there is none. */
struct described {
	parload_desc d;
	int rc;
	parload_error err;
};

/* What the layout resolves to: as a load sees it (valid), else as far as
 * the complete records go, to show where the files fall short.  known: a
 * description already made of this source, or NULL. */
static bool describe_stream(struct info *in, const parload_source *src,
			    const struct input *inp,
			    const struct layout_cfg *lc, struct layout_view *lv,
			    const struct described *known)
{
	parload_error again;
	int rc = 0;

	if (known) {
		in->d = known->d;
		in->err = known->err;
		rc = known->rc;
	} else {
		rc = parload_describe(src, 0, &in->d, &in->err);
	}

	in->valid = rc == 0;
	if (!in->valid && !in->err.message[0])
		snprintf(in->err.message, sizeof(in->err.message), "%s: %s",
			 in->path, parload_strerror(rc));
	memset(&again, 0, sizeof(again));
	if (!in->valid && parload_describe(src, 1, &in->d, &again) != 0)
		return false;
	/* A .nhdr states its sizes; the files are its own. */
	layout_init(lv, &in->d, lc->raw ? lc->desc.count : in->d.count);
	if (in->valid)
		layout_place(lv, src);
	if (lc->raw)
		return layout_add_files(lv, inp->paths ? inp->paths :
							 &inp->path, inp->n);
	return true;
}

static int info_stream(const struct input *inp, const struct layout_cfg *lc,
		       const parload_selection *sel, bool json,
		       const struct described *known)
{
	struct layout_view lv;
	parload_source src;
	struct info in;
	bool have_layout;

	memset(&in, 0, sizeof(in));
	memset(&lv, 0, sizeof(lv));
	in.path = inp->label;
	in.sel = sel;
	input_source(&src, inp, lc);
	have_layout = describe_stream(&in, &src, inp, lc, &lv, known);
	in.have_st = stat(inp->path, &in.st) == 0;
	if (in.valid && sel)
		resolve(&in);
	if (json)
		stream_json(&in, &lv, have_layout);
	else
		stream_human(&in, &lv, have_layout);
	layout_free(&lv);
	if (!in.valid || (sel && !in.sel_ok)) {
		error_msg("%s", in.valid ? in.sel_err.message : in.err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* ---- parload info ---- */

static const struct option info_longopts[] = {
	LAYOUT_LONGOPTS,
	SELECT_LONGOPTS,
	{ "json", no_argument, NULL, OPT_JSON },
	HELP_LONGOPTS_END,
};

struct info_args {
	parload_selection sel;
	struct layout_cfg layout;
	bool json;
};

static int info_option(void *ctx, int c, const char *arg)
{
	struct info_args *a = ctx;
	int rc;

	if (c == OPT_JSON) {
		a->json = true;
		return ARG_OK;
	}
	rc = parse_layout_option(&a->layout, c, arg);
	return rc != ARG_UNKNOWN ? rc : parse_select_option(&a->sel, c, arg);
}

static const struct option_parser info_parser = {
	":h", info_longopts, "info", cmd_info_help, info_option,
};

/* A file that describes itself otherwise than by parload's header (a
 * TIFF, an HDF5 file, a NRRD header, a .npy), by what the library makes
 * of it (a list, a folder, a glob, "FILE.h5:/name" too): its
 * description, or the load's failure (damaged metadata), in *k, which
 * info_stream then prints without reading the metadata again. */
static bool is_described(const struct input *in, const struct layout_cfg *lc,
			 struct described *k)
{
	parload_source src;

	input_source(&src, in, lc);
	memset(k, 0, sizeof(*k));
	k->rc = parload_describe(&src, 0, &k->d, &k->err);
	return k->d.format != PARLOAD_FORMAT_PARLOAD;
}

/* Whether in is read through the layout given. */
static bool is_stream(const struct input *in, const struct layout_cfg *lc)
{
	(void)in;
	return lc->raw || lc->dataset ||
	       lc->frames != PARLOAD_FRAMES_PROJECTIONS;
}

int cmd_info(int argc, char **argv)
{
	struct info_args a = { .json = false };
	const parload_selection *sel;
	int status, n;

	parload_selection_init(&a.sel);
	status = parse_options(argc, argv, &info_parser, &a);
	if (status != ARG_OK)
		return status;
	if (optind == argc)
		return usage_error("info: missing file");
	status = check_inputs(&a.layout, argc - optind, argv + optind);
	if (status != EXIT_OK)
		return status;
	sel = selection_is_whole(&a.sel) ? NULL : &a.sel;
	n = input_count(&a.layout, argc - optind);
	for (int i = 0; i < n; i++) {
		struct described known;
		struct input in;
		int rc;

		input_at(&in, &a.layout, argc - optind, argv + optind, i);
		/* Blank line between the human blocks. */
		if (!a.json && i > 0)
			putchar('\n');
		if (is_stream(&in, &a.layout))
			rc = info_stream(&in, &a.layout, sel, a.json, NULL);
		else if (is_described(&in, &a.layout, &known))
			rc = info_stream(&in, &a.layout, sel, a.json, &known);
		else
			rc = info_one(in.path, sel, a.json);
		if (rc != EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}
