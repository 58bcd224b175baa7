/*
 * cmd_nhdr.c - parload nhdr [--raw SPEC] [--concat] -o OUT.nhdr FILE...:
 * write a NRRD detached header that describes the files in place
 * (parload_nrrd_write), so that NRRD readers, and parload, open them.
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

SUBCOMMAND(nhdr);

const char cmd_nhdr_help[] =
"[--raw SPEC] [--concat] [--force] -o OUT.nhdr FILE...\n"
"\n"
"Write a NRRD detached header (NRRD0004) that describes FILE in place, so\n"
"that NRRD readers (teem, ITK, 3D Slicer, pynrrd) open the data and parload\n"
"loads OUT.nhdr as it loads FILE.  The layout is --raw SPEC, or FILE's own\n"
"parload header.  Several FILEs are one stream (--concat), named in a LIST,\n"
"each holding the same number of views.  A layout NRRD cannot express is\n"
"refused with the reason: a header or a gap between views (so parload's own\n"
"files of more than one view, which have a 32-byte header before each\n"
"view), packed pixels, views that do not split evenly over the files.\n"
"  -o, --output OUT.nhdr  the header to write; it must not exist unless\n"
"                         --force is given\n"
"      --raw SPEC         the files' layout (see 'parload --help')\n"
"      --concat           all FILEs are one stream (needs --raw)\n"
"      --force            replace OUT.nhdr if it exists\n"
"  -h, --help             show this help and exit\n";

enum { OPT_OUTPUT = OPT_LOCAL, OPT_FORCE };

static const struct option nhdr_longopts[] = {
	LAYOUT_LONGOPTS,
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	HELP_LONGOPTS_END,
};

struct nhdr_args {
	struct layout_cfg layout;
	const char *out;
	bool force;
};

static int nhdr_option(void *ctx, int c, const char *arg)
{
	struct nhdr_args *a = ctx;

	switch (c) {
	case 'o':
	case OPT_OUTPUT:
		a->out = arg;
		return ARG_OK;
	case OPT_FORCE:
		a->force = true;
		return ARG_OK;
	default:
		return parse_layout_option(&a->layout, c, arg);
	}
}

static const struct option_parser nhdr_parser = {
	":o:h", nhdr_longopts, "nhdr", cmd_nhdr_help, nhdr_option,
};

/* One input (one FILE, or --concat), an OUT that is a .nhdr, no .nhdr
 * read. */
static int check_args(const struct nhdr_args *a, int nfiles, char **files)
{
	if (!a->out)
		return usage_error("nhdr: no output file (-o OUT.nhdr)");
	if (!is_nhdr(a->out))
		return usage_error("nhdr: the output's name must end in "
				   ".nhdr, not '%s'", a->out);
	if (nfiles == 0)
		return usage_error("nhdr: missing input file");
	if (a->layout.dataset || a->layout.frames)
		return usage_error("nhdr: --dataset and --frames name HDF5 "
				   "data, which a NRRD header cannot point at");
	if (a->layout.confine)
		return usage_error("nhdr: --confine keeps the files a .nhdr or "
				   "an HDF5 file names in its directory; nhdr "
				   "reads neither");
	if (nfiles > 1 && !a->layout.concat)
		return usage_error("nhdr: several files are one stream: give "
				   "--concat (and --raw SPEC)");
	for (int i = 0; i < nfiles; i++)
		if (is_nhdr(files[i]))
			return usage_error("nhdr: '%s' is already a NRRD header",
					   files[i]);
	return check_inputs(&a->layout, nfiles, files);
}

/* The writer's refusal, and why parload's own files meet it. */
static void report_refusal(const struct input *in, const parload_desc *d,
			   int rc, const parload_error *err)
{
	report(in->label, rc, err);
	if (rc == PARLOAD_ENOTSUP && d->format == PARLOAD_FORMAT_PARLOAD &&
	    d->count > 1)
		error_msg("%s: a file in parload's own format has a %u-byte "
			  "header before each view, which NRRD cannot skip; "
			  "only a one-view file can be described", in->label,
			  (unsigned)PARLOAD_VIEW_HEADER_SIZE);
}

/* Describe the input (count resolved), then write the header. */
static int write_nhdr(const struct nhdr_args *a, const struct input *in)
{
	const char *const *files = in->paths ? in->paths : &in->path;
	parload_source src;
	parload_error err;
	sigset_t all, old;
	parload_desc d;
	struct stat st;
	int rc;

	if (!a->force && lstat(a->out, &st) == 0) {
		error_msg("%s: file exists (--force replaces it)", a->out);
		return EXIT_FAIL;
	}
	memset(&err, 0, sizeof(err));
	input_source(&src, in, &a->layout);
	rc = parload_describe(&src, 0, &d, &err);
	if (rc < 0) {
		report(in->label, rc, &err);
		return EXIT_FAIL;
	}
	/* The library's temporary file lives for the call alone: a signal
	 * that would end the command meanwhile waits until it is gone. */
	memset(&err, 0, sizeof(err));
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	rc = parload_nrrd_write(a->out, &d, files, in->n, &err);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		report_refusal(in, &d, rc, &err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cmd_nhdr(int argc, char **argv)
{
	struct nhdr_args a = { .out = NULL };
	struct input in;
	int status;

	status = parse_options(argc, argv, &nhdr_parser, &a);
	if (status != ARG_OK)
		return status;
	status = check_args(&a, argc - optind, argv + optind);
	if (status != EXIT_OK)
		return status;
	input_at(&in, &a.layout, argc - optind, argv + optind, 0);
	return write_nhdr(&a, &in);
}
