/*
 * cmd_info.c - parload info [OPTIONS] FILE...: show each file's header and
 * whether the file is valid.
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
"      --views A:B[:S]    views A to B (B excluded) in steps of S; any part\n"
"                         may be omitted, negative values count from the end\n"
"      --rows A:B         detector rows A to B of each view\n"
"      --cols A:B         columns A to B of each row\n"
"      --layout L         views (view after view, the default) or sinograms\n"
"                         (for each row, that row of every selected view)\n"
"      --json             one JSON object per file instead\n"
"  -h, --help             show this help and exit\n";

/* What is known of one file. */
struct info {
	const char *path;
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
	printf("%" PRIu64, in->h.view_count);
	print_shape_json(&in->shape);
	printf(",\"shape\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]"
	       ",\"selected_bytes\":%" PRIu64 ",\"read_bytes\":%" PRIu64 "}",
	       d[0], d[1], d[2], shape_bytes(&in->shape), read_bytes(in));
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

static void info_human(const struct info *in)
{
	printf("file:              %s\n", in->path);
	if (in->have_fields)
		info_human_fields(&in->h, in->valid);
	if (in->have_st)
		printf("file_size:         %jd\n", (intmax_t)in->st.st_size);
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
	if (!in->valid) {
		fputs(",\"error\":", stdout);
		json_str(stdout, in->err.message);
	}
	if (in->valid && in->sel)
		info_json_selection(in);
	puts("}");
}

/* Resolve the selection against a valid header; the library's message
 * names the bad part but not the file. */
static void resolve(struct info *in)
{
	char msg[sizeof(in->sel_err.message)];
	int rc;

	parload_desc_from_header(&in->d, &in->h);
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

static const struct option info_longopts[] = {
	SELECT_LONGOPTS,
	{ "json", no_argument, NULL, OPT_JSON },
	HELP_LONGOPTS_END,
};

struct info_args {
	parload_selection sel;
	bool json;
};

static int info_option(void *ctx, int c, const char *arg)
{
	struct info_args *a = ctx;

	if (c != OPT_JSON)
		return parse_select_option(&a->sel, c, arg);
	a->json = true;
	return ARG_OK;
}

static const struct option_parser info_parser = {
	":h", info_longopts, "info", cmd_info_help, info_option,
};

int cmd_info(int argc, char **argv)
{
	struct info_args a = { .json = false };
	const parload_selection *sel;
	int status;

	parload_selection_init(&a.sel);
	status = parse_options(argc, argv, &info_parser, &a);
	if (status != ARG_OK)
		return status;
	if (optind == argc)
		return usage_error("info: missing file");
	sel = selection_is_whole(&a.sel) ? NULL : &a.sel;
	status = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		/* Blank line between the human blocks. */
		if (!a.json && i > optind)
			putchar('\n');
		if (info_one(argv[i], sel, a.json) != EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}
