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
"of a damaged file that begins with the magic are shown too.\n"
"      --json             one JSON object per file instead\n"
"  -h, --help             show this help and exit\n";

/* What is known of one file. */
struct info {
	const char *path;
	parload_file_header h;
	parload_error err;
	struct stat st;
	bool valid;       /* parload_read_header accepted it */
	bool have_fields; /* h holds the file's first 64 bytes */
	bool have_st;
};

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
	puts("}");
}

static int info_one(const char *path, bool json)
{
	struct info in;
	parload_error peek_err;
	int rc;

	memset(&in, 0, sizeof(in));
	in.path = path;
	rc = parload_read_header(path, &in.h, &in.err);
	in.valid = rc == 0;
	if (!in.valid && !in.err.message[0])
		snprintf(in.err.message, sizeof(in.err.message), "%s: %s",
			 path, parload_strerror(rc));
	/* The fields of a damaged file, when it begins with the magic. */
	in.have_fields = in.valid || parload_peek_header(path, &in.h,
							 &peek_err) == 0;
	in.have_st = stat(path, &in.st) == 0;
	if (json)
		info_json(&in);
	else
		info_human(&in);
	if (!in.valid) {
		error_msg("%s", in.err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static const struct option info_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

int cmd_info(int argc, char **argv)
{
	bool json = false;
	int c, status = EXIT_OK;

	getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", info_longopts, NULL)) != -1) {
		if (c == 'h' || c == OPT_HELP)
			return print_help("info", cmd_info_help);
		if (c != OPT_JSON)
			return bad_option(c, argv, info_longopts);
		json = true;
	}
	if (optind == argc)
		return usage_error("info: missing file");
	for (int i = optind; i < argc; i++) {
		/* Blank line between the human blocks. */
		if (!json && i > optind)
			putchar('\n');
		if (info_one(argv[i], json) != EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}
