/*
 * cmd_extract.c - parload extract [OPTIONS] -o OUT FILE: load a selection of
 * FILE and write it as a NumPy array, a raw image stream, bare pixels, a
 * TIFF, an HDF5 file, a PNG image or a Zarr store (the last four through
 * parload_save).
 *
 * OUT is written under a temporary name in its own directory (the
 * library's parload_temp_create, or parload_temp_create_dir for a store,
 * the command's to remove when a signal ends it) and put in place when it
 * is complete (parload_temp_place, parload_save_place), so a failed or
 * interrupted extract leaves nothing.  A store is written with the fatal
 * signals held (tmp_hold): one that comes meanwhile removes it whole once
 * its chunks are written, then ends the command.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

SUBCOMMAND(extract);

const char cmd_extract_help[] =
"[OPTIONS] -o OUT FILE...\n"
"\n"
"Load the selection of FILE (the load, layout and selection options of\n"
"'parload': --raw SPEC, a .nhdr FILE, --concat for several FILEs as one\n"
"stream, --confine for files from someone else; --cache drop or direct\n"
"leaves FILE out of the page cache) and\n"
"write it to OUT, which must not exist unless --force is given:\n"
"  npy   a NumPy array (numpy.load reads it): shape (views, rows, cols), or\n"
"        (rows, views, cols) with --layout sinograms; C order, the file's\n"
"        pixel type, little-endian\n"
"  raw   a raw image stream of the selected views, which parload reads: the\n"
"        views keep their headers (time stamp, angle), but view_index is\n"
"        renumbered 0, 1, ... (the format wants it equal to the position)\n"
"        and CRCs are computed anew for the cut payloads when FILE has\n"
"        them; views layout only.  From a raw layout the views get parload\n"
"        headers with only view_index set (the stream's own view headers\n"
"        are not kept)\n"
"  bin   the pixels alone, as the npy array holds them\n"
"  tif   a TIFF (.tif, .tiff): one uncompressed page per view, or per\n"
"        sinogram with --layout sinograms; BigTIFF from 4 GiB; tifffile\n"
"        reads it as one (pages, rows, cols) array\n"
"  h5    an HDF5 file (.h5, .hdf5, .hdf, .nxs): DXchange /exchange/data (or\n"
"        /exchange/sinograms), the angles in /exchange/theta\n"
"  zarr  a Zarr store (.zarr), a directory: Zarr v2 (zarr.open reads it), or\n"
"        v3 with --zarr-format 3; one chunk per view unless --chunks says\n"
"        otherwise, uncompressed unless --compress says; the angles in the\n"
"        array's attributes as \"angles\"\n"
"  png   a grey PNG image of one view (--views K:K+1) or one sinogram\n"
"        (--rows R:R+1 --layout sinograms); a selection of several is\n"
"        refused.  8-bit: value v is round(255 * (v - LO) / (HI - LO)),\n"
"        clamped to 0..255, LO:HI being --window or by default the 0.5th\n"
"        and 99.5th percentiles of the image's values; 16-bit\n"
"        (--png-depth 16): the values unscaled, integer types only\n"
"With --darks, --flats, --minus-log (the correction options of 'parload')\n"
"the pixels are corrected float32: npy '<f4', raw a parload stream of f32\n"
"pixels, bin float32.\n"
"  -o, --output OUT       the file to write; - is standard output (npy and\n"
"                         bin only, and --format is then required)\n"
"      --format F         npy, raw, bin, tif, h5, png or zarr; default: OUT's\n"
"                         extension (.npy, .raw, .bin, .tif, .h5, .png,\n"
"                         .zarr, ...)\n"
"      --compress C[=LEVEL]  h5: gzip (deflate with shuffle, LEVEL 1-9,\n"
"                         default 4); zarr: zstd (LEVEL 1-22, default 3),\n"
"                         blosc (LZ4, byte shuffle; 1-9, default 5) or gzip\n"
"      --chunks V[,R,C]   zarr: chunks of V views (R rows, C columns; by\n"
"                         default all), partial edge chunks padded with 0\n"
"      --zarr-format 2|3  zarr: the format version (default 2)\n"
"      --shard N          zarr v3: shards of N chunks along the views\n"
"      --output-dataset PATH  h5: the dataset to write (default\n"
"                         /exchange/data; --dataset names the input's)\n"
"      --window LO:HI     png: the values shown black (LO) to white (HI)\n"
"      --png-depth 8|16   png: 8-bit windowed (default) or 16-bit unscaled\n"
"      --force            replace OUT if it exists (a Zarr store only\n"
"                         replaces a Zarr store)\n"
"      --progress, --no-progress  as for a load\n"
"  -h, --help             show this help and exit\n"
"OUT is written under a hidden temporary name in its directory, .OUT.XXXXXX,\n"
"then put in place: a failed or interrupted extract leaves no file behind.\n"
"Only SIGKILL (or a crash) leaves that temporary file, which may be deleted.\n"
"An interrupt while a store's chunks are written takes effect when they\n"
"are: the store is then removed.\n";

/* A format: parload_save's (PARLOAD_SAVE_TIFF, _HDF5, _NPY: the
 * library's table of names and extensions), or the command's own. */
enum { FMT_NONE = -1, FMT_TIF = PARLOAD_SAVE_TIFF, FMT_H5 = PARLOAD_SAVE_HDF5,
       FMT_NPY = PARLOAD_SAVE_NPY, FMT_PNG = PARLOAD_SAVE_PNG,
       FMT_ZARR = PARLOAD_SAVE_ZARR, FMT_RAW = 100, FMT_BIN };

enum { OPT_OUTPUT = OPT_LOCAL, OPT_FORMAT, OPT_FORCE, OPT_COMPRESS,
       OPT_OUTPUT_DATASET, OPT_WINDOW, OPT_PNG_DEPTH, OPT_CHUNKS,
       OPT_ZARR_FORMAT, OPT_SHARD };

static const struct option extract_longopts[] = {
	LOAD_LONGOPTS,
	CORRECT_LONGOPTS,
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "output-dataset", required_argument, NULL, OPT_OUTPUT_DATASET },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "png-depth", required_argument, NULL, OPT_PNG_DEPTH },
	{ "chunks", required_argument, NULL, OPT_CHUNKS },
	{ "zarr-format", required_argument, NULL, OPT_ZARR_FORMAT },
	{ "shard", required_argument, NULL, OPT_SHARD },
	HELP_LONGOPTS_END,
};

struct extract_cfg {
	struct load_cfg load;
	const char *out;
	struct input in;
	int format;
	bool force;
	/* --compress (compress, level), --chunks, --zarr-format, --shard */
	parload_save_options save;
	const char *dataset; /* --output-dataset */
	bool window;         /* --window LO:HI */
	double lo, hi;
	int png_depth;       /* --png-depth: 8, 16, or 0 (not given) */
};

/* The format an extension or --format names (tif, TIFF, h5, npy, ...),
 * or FMT_NONE. */
static int format_from_name(const char *name)
{
	char file[64];

	if (strcasecmp(name, "raw") == 0)
		return FMT_RAW;
	if (strcasecmp(name, "bin") == 0)
		return FMT_BIN;
	/* The library's format of a file with that extension. */
	snprintf(file, sizeof(file), "x.%s", name);
	return strlen(name) < 32 && parload_save_format_of(file) ?
		       (int)parload_save_format_of(file) :
		       FMT_NONE;
}

/* The format OUT's extension names, or FMT_NONE. */
static int format_from_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');

	return dot && dot > base ? format_from_name(dot + 1) : FMT_NONE;
}

/* --compress NAME[=LEVEL], the library's rule. */
static int parse_compress(struct extract_cfg *x, const char *arg)
{
	parload_error err;

	memset(&err, 0, sizeof(err));
	if (parload_save_compress(&x->save, arg, &err) == 0)
		return ARG_OK;
	return usage_error("%s", err.message);
}

/* --chunks V[,R,C]: sizes of 1 or more; those left out, all. */
static int parse_chunks(struct extract_cfg *x, const char *arg)
{
	const char *p = arg;
	char *end;

	for (int i = 0; i < 3; i++) {
		unsigned long long v;

		errno = 0;
		v = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
		if (v == 0 || errno || (*end && *end != ','))
			break;
		x->save.chunks[i] = v;
		if (!*end)
			return ARG_OK;
		p = end + 1;
	}
	return usage_error("--chunks '%s': V, V,R or V,R,C, sizes of 1 or "
			   "more (views, rows, columns)", arg);
}

/* --shard N, 1 or more chunks. */
static int parse_shard(struct extract_cfg *x, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = isdigit((unsigned char)*arg) ? strtoul(arg, &end, 10) : 0;
	if (v == 0 || errno || *end || v > UINT32_MAX)
		return usage_error("--shard '%s': a number of chunks, 1 or "
				   "more", arg);
	x->save.shard = (uint32_t)v;
	return ARG_OK;
}

/* --window LO:HI, two finite numbers with LO < HI. */
static int parse_window(struct extract_cfg *x, const char *arg)
{
	char *end = NULL;

	errno = 0;
	x->lo = strtod(arg, &end);
	if (end != arg && *end == ':') {
		const char *hi = end + 1;

		x->hi = strtod(hi, &end);
		if (end != hi && *end == '\0' && errno == 0 &&
		    isfinite(x->lo) && isfinite(x->hi) && x->lo < x->hi) {
			x->window = true;
			return ARG_OK;
		}
	}
	return usage_error("--window '%s': LO:HI, two numbers with LO below "
			   "HI (e.g. 100:4000)", arg);
}

static int extract_option(void *ctx, int c, const char *arg)
{
	struct extract_cfg *x = ctx;

	switch (c) {
	case 'o':
	case OPT_OUTPUT:
		x->out = arg;
		return ARG_OK;
	case OPT_FORMAT:
		x->format = format_from_name(arg);
		if (x->format == FMT_NONE)
			return usage_error("unknown format '%s' (npy, raw, "
					   "bin, tif, h5, png or zarr)", arg);
		return ARG_OK;
	case OPT_FORCE:
		x->force = true;
		return ARG_OK;
	case OPT_COMPRESS:
		return parse_compress(x, arg);
	case OPT_OUTPUT_DATASET:
		x->dataset = arg;
		return ARG_OK;
	case OPT_WINDOW:
		return parse_window(x, arg);
	case OPT_PNG_DEPTH:
		if (strcmp(arg, "8") && strcmp(arg, "16"))
			return usage_error("--png-depth '%s': 8 or 16", arg);
		x->png_depth = atoi(arg);
		return ARG_OK;
	case OPT_CHUNKS:
		return parse_chunks(x, arg);
	case OPT_ZARR_FORMAT:
		if (strcmp(arg, "2") && strcmp(arg, "3"))
			return usage_error("--zarr-format '%s': 2 or 3", arg);
		x->save.zarr_format = atoi(arg);
		return ARG_OK;
	case OPT_SHARD:
		return parse_shard(x, arg);
	default:
		return parse_load_option(&x->load, c, arg);
	}
}

static int check_output_args(const struct extract_cfg *x);
static int check_store_args(const struct extract_cfg *x);

/* What the options say together: one input (one FILE, or --concat), an
 * OUT, a format that fits. */
static int check_args(struct extract_cfg *x, int nfiles, char **files)
{
	int rc;

	if (!x->out)
		return usage_error("extract: no output file (-o OUT)");
	if (nfiles == 0)
		return usage_error("extract: missing input file");
	if (nfiles > 1 && !x->load.layout.concat)
		return usage_error("extract: one input file only, not '%s' "
				   "(--concat reads the files as one stream)",
				   files[1]);
	rc = check_inputs(&x->load.layout, nfiles, files);
	if (rc == EXIT_OK)
		rc = check_correction(&x->load);
	if (rc != EXIT_OK)
		return rc;
	input_at(&x->in, &x->load.layout, nfiles, files, 0);
	if (x->format == FMT_NONE && strcmp(x->out, "-") == 0)
		return usage_error("extract: -o - needs --format npy or bin");
	if (x->format == FMT_NONE)
		x->format = format_from_path(x->out);
	if (x->format == FMT_NONE)
		return usage_error("extract: cannot tell the format of '%s' "
				   "(.npy, .raw, .bin, .tif, .h5, .png, .zarr "
				   "or --format)", x->out);
	if ((x->format == FMT_TIF || x->format == FMT_H5 ||
	     x->format == FMT_PNG) && strcmp(x->out, "-") == 0)
		return usage_error("extract: a TIFF, HDF5 or PNG file is "
				   "written to a file, not to standard output");
	if (x->format == FMT_ZARR && strcmp(x->out, "-") == 0)
		return usage_error("extract: a Zarr store is a directory, not "
				   "standard output");
	return check_output_args(x);
}

/* The options of one output format given for its format only. */
static int check_output_args(const struct extract_cfg *x)
{
	if (x->format != FMT_PNG && (x->window || x->png_depth))
		return usage_error("extract: %s applies to PNG output only",
				   x->window ? "--window" : "--png-depth");
	if (x->window && x->png_depth == 16)
		return usage_error("extract: --window applies to 8-bit PNG; "
				   "--png-depth 16 writes the values "
				   "unscaled");
	if (x->format != FMT_H5 && x->dataset)
		return usage_error("extract: --output-dataset applies to HDF5 "
				   "output only");
	return check_store_args(x);
}

/* The options of HDF5's and Zarr's chunks. */
static int check_store_args(const struct extract_cfg *x)
{
	const parload_save_options *o = &x->save;

	if (x->format != FMT_H5 && x->format != FMT_ZARR && o->compress)
		return usage_error("extract: --compress applies to HDF5 and "
				   "Zarr output only");
	if (x->format == FMT_H5 && o->compress &&
	    o->compress != PARLOAD_COMPRESS_GZIP)
		return usage_error("extract: HDF5 output compresses with gzip "
				   "only (--compress gzip[=LEVEL])");
	if (x->format != FMT_ZARR &&
	    (o->chunks[0] || o->zarr_format || o->shard))
		return usage_error("extract: %s applies to Zarr output only",
				   o->chunks[0] ? "--chunks" :
				   o->zarr_format ? "--zarr-format" :
						    "--shard");
	if (o->shard && o->zarr_format != 3)
		return usage_error("extract: --shard needs --zarr-format 3 "
				   "(shards are Zarr v3's)");
	if (x->format == FMT_RAW && strcmp(x->out, "-") == 0)
		return usage_error("extract: a raw stream is written to a "
				   "file, not to standard output");
	if (x->format == FMT_RAW &&
	    x->load.opts.selection.layout == PARLOAD_LAYOUT_SINOGRAMS)
		return usage_error("extract: a raw stream holds views; "
				   "--layout sinograms needs npy or bin");
	return EXIT_OK;
}

static const struct option_parser extract_parser = {
	":" LOAD_SHORTOPTS "o:h", extract_longopts, "extract",
	cmd_extract_help, extract_option,
};

/* Parse the arguments.  ARG_OK to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct extract_cfg *x)
{
	int rc = parse_options(argc, argv, &extract_parser, x);

	if (rc != ARG_OK)
		return rc;
	rc = check_args(x, argc - optind, argv + optind);
	return rc == EXIT_OK ? ARG_OK : rc;
}

/* ---------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------- */

/* NumPy's format 1.0: magic, version, the header's length (16 bits, little
 * endian), then a Python dict literal padded with spaces and ended by a
 * newline so that the data begins on a multiple of 64 bytes. */
static size_t npy_header(const parload_dataset *ds, char *buf, size_t cap)
{
	const parload_shape *s = &ds->shape;
	const bool sino = s->layout == PARLOAD_LAYOUT_SINOGRAMS;
	const char *type = parload_pixel_name(s->pixel_type);
	size_t n, len;

	/* "u16" is '<u2': NumPy's kind letters are parload's (u, i, f). */
	n = (size_t)snprintf(buf + 10, cap - 10,
			     "{'descr': '%c%c%u', 'fortran_order': False, "
			     "'shape': (%" PRIu64 ", %" PRIu64 ", %" PRIu64
			     "), }",
			     s->bytes_per_pixel == 1 ? '|' : '<', type[0],
			     s->bytes_per_pixel, sino ? (uint64_t)s->rows :
							 s->views,
			     sino ? s->views : (uint64_t)s->rows,
			     (uint64_t)s->cols);
	len = (10 + n + 1 + 63) / 64 * 64;
	memset(buf + 10 + n, ' ', len - 10 - n - 1);
	buf[len - 1] = '\n';
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((len - 10) & 0xff);
	buf[9] = (char)((len - 10) >> 8);
	return len;
}

/* npy and bin: the header (npy) and the pixels, to f. */
static bool write_array(FILE *f, const parload_dataset *ds, bool npy)
{
	char header[256];
	const size_t len = npy ? npy_header(ds, header, sizeof(header)) : 0;
	const size_t size = ds->shape.views * ds->shape.view_bytes;

	return fwrite(header, 1, len, f) == len &&
	       (size == 0 || fwrite(ds->pixels, 1, size, f) == size);
}

/* path is the empty temporary file tmp_create made: opened without
 * O_TRUNC (fopen's "w"), since on ext4 a file truncated at its opening
 * has all its dirty pages sent to the disk by the close (the
 * replace-via-truncate heuristic), which the command then waits for. */
static int write_array_file(const char *out, const char *path,
			    const parload_dataset *ds, bool npy)
{
	const int fd = open(path, O_WRONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	bool ok = f && write_array(f, ds, npy);

	if (fd >= 0 && !f)
		close(fd);
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		error_msg("%s: cannot write: %s", out, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* raw: the selected views as a stream of their own, through the writer
 * (which numbers the views and computes the CRCs). */
static int write_raw(const char *out, const char *path,
		     const parload_dataset *ds)
{
	const parload_shape *s = &ds->shape;
	const unsigned char *pix = ds->pixels;
	parload_file_header h;
	parload_writer *w = NULL;
	parload_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	rc = parload_file_header_init(&h, s->views, s->cols, s->rows,
				      s->pixel_type,
				      (ds->desc.flags & PARLOAD_DESC_CRC32C) ?
					      PARLOAD_FLAG_CRC32C : 0);
	/* The writer creates path anew: opening the empty temporary file
	 * with its O_TRUNC would make ext4 send all of it to the disk at the
	 * close (see write_array_file); O_TRUNC on a file it creates does
	 * nothing. */
	if (rc == 0 && unlink(path) != 0 && errno != ENOENT) {
		error_msg("%s: cannot write: %s", out, strerror(errno));
		return EXIT_FAIL;
	}
	if (rc == 0)
		rc = parload_writer_open(&w, path, &h, &err);
	for (uint64_t k = 0; rc == 0 && k < s->views; k++)
		rc = parload_writer_add(w, &ds->headers[k],
					pix + k * s->view_bytes, &err);
	if (rc == 0)
		rc = parload_writer_close(w, &err);
	else if (w)
		parload_writer_close(w, NULL);
	/* The writer's message names the temporary file: OUT, and the
	 * cause ("No space left on device") where a system call gave one. */
	if (rc < 0) {
		error_msg("%s: cannot write: %s", out,
			  err.sys_errno ? strerror(err.sys_errno) :
					  parload_strerror(rc));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* tif, h5, npy, png and zarr: parload_save writes the command's temporary
 * file or store (path), which the command puts in place as it does the
 * others': one owner, whom a signal finds.  A store is written with the
 * fatal signals held (tmp_hold), so that a signal never finds it
 * half-written: it is removed whole once written if one came. */
static int write_container(const struct extract_cfg *x, const char *path,
			   const parload_dataset *ds)
{
	float *angles = malloc((ds->shape.views ? ds->shape.views : 1) *
			       sizeof(float));
	parload_save_options o;
	parload_stack st;
	parload_error err;
	int rc;

	if (!angles) {
		error_msg("%s: out of memory", x->out);
		return EXIT_FAIL;
	}
	parload_stack_of(&st, ds, angles);
	o = x->save;
	o.format = (parload_save_format)x->format;
	o.dataset = x->dataset;
	o.png_depth = x->png_depth;
	if (x->window) {
		o.flags |= PARLOAD_SAVE_WINDOW;
		o.window_lo = x->lo;
		o.window_hi = x->hi;
	}
	o.tmp = path;
	memset(&err, 0, sizeof(err));
	if (x->format == FMT_ZARR)
		tmp_hold(true);
	rc = parload_save(x->out, &st, &o, &err);
	if (x->format == FMT_ZARR)
		tmp_hold(false);
	free(angles);
	if (rc < 0) {
		error_msg("%s", err.message);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int write_out(const struct extract_cfg *x, const parload_dataset *ds)
{
	if (strcmp(x->out, "-") == 0)
		return write_array(stdout, ds, x->format == FMT_NPY) ?
			       EXIT_OK : EXIT_FAIL;
	if (x->format == FMT_RAW)
		return write_raw(x->out, tmp_file(), ds);
	if (x->format == FMT_BIN)
		return write_array_file(x->out, tmp_file(), ds, false);
	return was_interrupted() ? EXIT_OK :
				   write_container(x, tmp_file(), ds);
}

/* ---------------------------------------------------------------------
 * parload extract
 * ------------------------------------------------------------------- */

/* Refuse an existing OUT before loading, and make the temporary file
 * beside it (before the loader's threads exist: see tmp_create). */
static int prepare_out(const struct extract_cfg *x)
{
	struct stat st;

	if (strcmp(x->out, "-") == 0)
		return EXIT_OK;
	/* --force replaces a file, never a directory, a device or a FIFO
	 * (write to those with -o -); a store replaces a store, which the
	 * library checks again when it puts the new one in place. */
	if (lstat(x->out, &st) == 0 && !x->force) {
		error_msg("%s: %s exists (--force replaces it)", x->out,
			  S_ISDIR(st.st_mode) ? "directory" : "file");
		return EXIT_FAIL;
	}
	if (x->format == FMT_ZARR && x->force && lstat(x->out, &st) == 0 &&
	    !S_ISDIR(st.st_mode)) {
		error_msg("%s: not a Zarr store; --force replaces only one",
			  x->out);
		return EXIT_FAIL;
	}
	if (x->format == FMT_ZARR)
		return tmp_create_dir(x->out);
	if (x->force && lstat(x->out, &st) == 0 && !S_ISREG(st.st_mode)) {
		error_msg("%s: not a regular file; --force replaces only "
			  "those (-o - writes to standard output)", x->out);
		return EXIT_FAIL;
	}
	return tmp_create(x->out);
}

/* Load, check as asked, write. */
static int extract(parload_loader *loader, const struct extract_cfg *x)
{
	struct loaded l;
	int status = EXIT_FAIL;

	if (load_input(loader, &x->in, &x->load, &l) < 0)
		return EXIT_FAIL;
	if (!report_bad_views(l.name, &l.ds) &&
	    (!x->load.verify || verify_seed(l.name, &l.ds, x->load.seed)))
		status = write_out(x, &l.ds);
	loaded_free(&l);
	return status;
}

int cmd_extract(int argc, char **argv)
{
	struct extract_cfg x = { .format = FMT_NONE };
	parload_loader *loader = NULL;
	int status;

	load_cfg_init(&x.load);
	parload_save_options_init(&x.save);
	status = parse_args(argc, argv, &x);
	if (status != ARG_OK)
		return status;
	progress_auto(&x.load, false);
	status = prepare_out(&x);
	if (status == EXIT_OK)
		status = new_loader(&loader, &x.load);
	if (status == EXIT_OK)
		status = extract(loader, &x);
	end_loader(loader);
	/* Interrupted after the load: the file is not wanted any more. */
	if (status == EXIT_OK && strcmp(x.out, "-") != 0 && !was_interrupted())
		return tmp_commit(x.out, x.force);
	tmp_remove();
	return status;
}
