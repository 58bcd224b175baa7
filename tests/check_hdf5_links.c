/*
 * check_hdf5_links.c - HDF5 files whose pixels lie in other files, loaded
 * whole through the library: datasets reached through external links (as
 * NeXus and Eiger master files hold them: contiguous, chunked, deflated,
 * chunked across frames, the master shorter than the data's offsets),
 * external storage (H5Pset_external: segments in raw files, named
 * relative to the current directory as libhdf5 1.10 takes them),
 * PARLOAD_SRC_CONFINE, and a list of HDF5 files (refused).  The files are
 * written here with libhdf5, as h5py writes them; the pixels loaded are
 * compared with the array written.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "testutil.h"

#ifndef HAVE_HDF5
int main(void)
{
	return tu_skip("check_hdf5_links", "this build has no HDF5 "
					   "(configure --with-hdf5, "
					   "libhdf5-dev)");
}
#else
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#define FRAMES 3
#define ROWS 8
#define COLS 7
#define PIXELS (FRAMES * ROWS * COLS)

/* The pixels every fixture holds, frame by frame. */
static void pixels(uint16_t *p)
{
	for (unsigned i = 0; i < PIXELS; i++)
		p[i] = (uint16_t)((i * 2654435761u) >> 9);
}

static hid_t space(void)
{
	const hsize_t dims[3] = { FRAMES, ROWS, COLS };

	return H5Screate_simple(3, dims, NULL);
}

/* name in file, stored as dcpl says, holding pixels(). */
static void put(hid_t file, const char *name, hid_t dcpl)
{
	uint16_t p[PIXELS];
	hid_t s = space(), lcpl = H5Pcreate(H5P_LINK_CREATE), d;

	pixels(p);
	H5Pset_create_intermediate_group(lcpl, 1);
	d = H5Dcreate2(file, name, H5T_STD_U16LE, s, lcpl, dcpl, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL,
				  H5P_DEFAULT, p), 0);
	H5Dclose(d);
	H5Pclose(lcpl);
	H5Sclose(s);
}

static hid_t chunks(hsize_t frames, hsize_t rows, int gzip)
{
	const hsize_t c[3] = { frames, rows, COLS };
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);

	ck_assert_int_ge(H5Pset_chunk(dcpl, 3, c), 0);
	if (gzip) {
		H5Pset_shuffle(dcpl);
		H5Pset_deflate(dcpl, (unsigned)gzip);
	}
	return dcpl;
}

/* The data file: 8 KiB of something else first, then /c contiguous, /k
 * chunked by frame, /z deflated and shuffled in chunks of half a frame,
 * /b in chunks of two frames' half rows (read through libhdf5). */
static void data_file(const char *path)
{
	static unsigned char pad[8192];
	const hsize_t n = sizeof(pad);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t s = H5Screate_simple(1, &n, NULL), d, dcpl;

	ck_assert_int_ge(f, 0);
	memset(pad, 0xa5, sizeof(pad));
	d = H5Dcreate2(f, "/pad", H5T_STD_U8LE, s, H5P_DEFAULT, H5P_DEFAULT,
		       H5P_DEFAULT);
	H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, pad);
	H5Dclose(d);
	H5Sclose(s);
	put(f, "/entry/data/data", H5P_DEFAULT);
	put(f, "/k", dcpl = chunks(1, ROWS, 0));
	H5Pclose(dcpl);
	put(f, "/z", dcpl = chunks(1, ROWS / 2, 4));
	H5Pclose(dcpl);
	put(f, "/b", dcpl = chunks(2, ROWS / 2, 0));
	H5Pclose(dcpl);
	H5Fclose(f);
}

/* A master file of external links, name -> target:object, each pair. */
static void master(const char *path, const char *const *links)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);

	ck_assert_int_ge(f, 0);
	H5Pset_create_intermediate_group(lcpl, 1);
	for (; links[0]; links += 3)
		ck_assert_int_ge(H5Lcreate_external(links[1], links[2], f,
						    links[0], lcpl,
						    H5P_DEFAULT), 0);
	H5Pclose(lcpl);
	H5Fclose(f);
}

/* The byte offset of name's contiguous storage in path. */
static uint64_t offset_of(const char *path, const char *name)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	const haddr_t at = H5Dget_offset(d);

	H5Dclose(d);
	H5Fclose(f);
	return at;
}

/* A load of dataset in path (flags: the source's): its code; on success
 * its pixels are pixels(). */
static int load(const char *path, const char *dataset, unsigned flags,
		parload_error *err)
{
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request req;
	parload_dataset ds;
	uint16_t want[PIXELS];
	int rc;

	pixels(want);
	parload_request_init(&req);
	req.source.path = path;
	req.source.dataset = dataset;
	req.source.flags = flags;
	memset(err, 0, sizeof(*err));
	rc = parload_loader_run(l, &req, &ds, err);
	if (rc == 0) {
		ck_assert_uint_eq(ds.shape.views, FRAMES);
		ck_assert_uint_eq(ds.shape.rows, ROWS);
		ck_assert_uint_eq(ds.shape.cols, COLS);
		ck_assert_msg(memcmp(ds.pixels, want, sizeof(want)) == 0,
			      "%s %s: other pixels", path, dataset);
		parload_dataset_free(&ds);
	}
	parload_loader_free(l);
	return rc;
}

static void loads(const char *path, const char *dataset, unsigned flags)
{
	parload_error err;
	const int rc = load(path, dataset, flags, &err);

	ck_assert_msg(rc == 0, "%s %s: %d %s", path, dataset, rc,
		      err.message);
}

static void fails(const char *path, const char *dataset, unsigned flags,
		  int code, const char *says, const char *says_too)
{
	parload_error err;
	const int rc = load(path, dataset, flags, &err);

	ck_assert_msg(rc == code, "%s %s: %d, not %d: %s", path, dataset, rc,
		      code, err.message);
	ck_assert_msg(strstr(err.message, says), "\"%s\" lacks \"%s\"",
		      err.message, says);
	ck_assert_msg(!says_too || strstr(err.message, says_too),
		      "\"%s\" lacks \"%s\"", err.message, says_too);
}

/* hdf5_native.c leaves path's dataset to libhdf5's reader: alone
 * (PARLOAD_HDF5=native) it refuses it, nothing held. */
static void native_falls_back(const char *path, const char *dataset)
{
	const parload_source src = { .path = path, .fd = -1,
				     .dataset = dataset };
	parload__container c;
	parload_error err;

	ck_assert_int_eq(setenv("PARLOAD_HDF5", "native", 1), 0);
	ck_assert_int_eq(parload__hdf5_read(&src, &c, &err), PARLOAD_ENOTSUP);
	ck_assert_int_eq(unsetenv("PARLOAD_HDF5"), 0);
	ck_assert_ptr_null(c.paths);
}

/* ---- external links ---- */

/* A master file of links to each kind of storage, shorter than the data
 * file's first pixel: every dataset's pixels come from the data file.
 * Before, parload read the master's bytes at the data file's offsets
 * (other pixels, or an error at view 18014398509481983). */
START_TEST(linked)
{
	char *data = tu_path("data_000001.h5"), *m = tu_path("master.h5");
	static const char *const links[] = {
		"/entry/data/data_000001", "data_000001.h5", "/entry/data/data",
		"/entry/data/k", "data_000001.h5", "/k",
		"/entry/data/z", "data_000001.h5", "/z",
		"/entry/data/b", "data_000001.h5", "/b",
		NULL
	};

	data_file(data);
	master(m, links);
	ck_assert_uint_lt(tu_file_size(m),
			  offset_of(data, "/entry/data/data"));
	for (int k = 0; links[k]; k += 3) {
		loads(m, links[k], 0);
		native_falls_back(m, links[k]);
	}
	free(data);
	free(m);
}
END_TEST

/* A link libhdf5 cannot follow says so, naming its target. */
START_TEST(link_dangling)
{
	char *m = tu_path("dangling.h5");
	static const char *const links[] = { "/entry/data/data",
					     "absent.h5", "/entry/data/data",
					     NULL };

	master(m, links);
	fails(m, "/entry/data/data", 0, PARLOAD_EOPEN,
	      "an external link to absent.h5:/entry/data/data", NULL);
	free(m);
}
END_TEST

/* A master file of links data_000001, data_000003, data_000010 (to one
 * dataset, chunked by frames) is one stream of their frames in the order
 * of their numbers, with no dataset named; one link to a missing file
 * fails naming it and the file, one to a dataset stored otherwise naming
 * it and what differs.  Before: "has no dataset given and 0 3-D
 * datasets". */
START_TEST(master_stream)
{
	char *data = tu_path("data_000001.h5"), *m = tu_path("m.h5");
	const char *const names[] = { "/entry/data/data_000010",
				      "/entry/data/data_000001",
				      "/entry/data/data_000003" };
	const char *links[3 * 5 + 1] = { NULL };
	parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request req;
	parload_dataset ds;
	parload_error err;
	uint16_t want[PIXELS];

	data_file(data);
	pixels(want);
	for (int k = 0; k < 3; k++) {
		links[3 * k] = names[k];
		links[3 * k + 1] = "data_000001.h5";
		links[3 * k + 2] = "/k";
	}
	master(m, links);
	parload_request_init(&req);
	req.source.path = m;
	ck_assert_int_eq(parload_loader_run(l, &req, &ds, &err), 0);
	ck_assert_uint_eq(ds.shape.views, 3 * FRAMES);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(memcmp((char *)ds.pixels + k * sizeof(want),
					want, sizeof(want)), 0);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	links[9] = "/entry/data/data_000004";
	links[10] = "absent.h5";
	links[11] = "/k";
	master(m, links);
	fails(m, NULL, 0, PARLOAD_EOPEN, "/entry/data/data_000004: an "
	      "external link to absent.h5:/k", "missing");
	links[10] = "data_000001.h5";
	links[11] = "/b";
	master(m, links);
	fails(m, NULL, 0, PARLOAD_ENOTSUP, "/entry/data/data_000004: stored "
	      "otherwise than /entry/data/data_000001", NULL);
	free(data);
	free(m);
}
END_TEST

/* ---- external storage ---- */

/* raw's bytes at off of name, then the rest of the file. */
static void raw_file(const char *name, uint64_t off, const void *b,
		     size_t len)
{
	char *path = tu_path(name);
	unsigned char *all = calloc(1, off + len + 5);

	memset(all, 0x5a, off);
	memcpy(all + off, b, len);
	tu_write_file(path, all, off + len + 5);
	free(all);
	free(path);
}

/* A dataset stored in segments {name, offset in its file, bytes}, the
 * files written holding pixels() there. */
typedef struct seg {
	const char *name;
	uint64_t off, len;
} seg;

static void stored(const char *path, const char *dataset, const seg *s,
		   bool write_files)
{
	uint16_t p[PIXELS];
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), sp = space(), d;
	uint64_t at = 0;

	pixels(p);
	ck_assert_int_ge(f, 0);
	for (; s->name; s++) {
		ck_assert_int_ge(H5Pset_external(dcpl, s->name, (off_t)s->off,
						 s->len), 0);
		if (write_files)
			raw_file(s->name, s->off, (unsigned char *)p + at,
				 PARLOAD__MIN(s->len, sizeof(p) - at));
		at += s->len;
	}
	d = H5Dcreate2(f, dataset, H5T_STD_U16LE, sp, H5P_DEFAULT, dcpl,
		       H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
	H5Fclose(f);
}

/* Names relative to the current directory, as libhdf5 1.10 opens them
 * (h5py reads the same): loaded from the scratch directory; from another
 * one, refused naming the file sought.  Before: "no storage allocated". */
START_TEST(external_storage)
{
	char *dir = tu_path(""), *m = tu_path("es.h5"),
	     *m1 = tu_path("es1.h5");
	const uint64_t row = COLS * 2, view = ROWS * row;
	/* Meeting between rows 3 and 4 of the second view, and whole. */
	const seg two[] = { { "s1.bin", 100, view + 3 * row },
			    { "s2.bin", 7, 2 * view - 3 * row },
			    { NULL } };
	const seg one[] = { { "one.bin", 33, H5F_UNLIMITED }, { NULL } };
	/* Meeting inside a row (then between rows): through libhdf5. */
	const seg odd[] = { { "o1.bin", 0, row + 3 },
			    { "o2.bin", 1, 2 * row - 3 },
			    { "o3.bin", 2, 1000 }, { NULL } };
	char cwd[4096];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	stored(m, "/two", two, true);
	loads(m, "/two", 0);
	native_falls_back(m, "/two");
	stored(m1, "/one", one, true);
	loads(m1, "/one", 0);
	stored(m, "/odd", odd, true);
	loads(m, "/odd", 0);
	/* A segment file cut short: its name, not zeros. */
	stored(m, "/two", two, true);
	free(dir);
	dir = tu_path("s2.bin");
	tu_truncate(dir, 7 + 2 * view - 3 * row - 1);
	fails(m, "/two", 0, PARLOAD_ETRUNCATED, "s2.bin", "past the end");
	ck_assert_int_eq(chdir("/"), 0);
	fails(m1, "/one", 0, PARLOAD_EOPEN, "one.bin",
	      "from the current directory");
	ck_assert_int_eq(chdir(cwd), 0);
	free(dir);
	free(m1);
	free(m);
}
END_TEST

/* ---- PARLOAD_SRC_CONFINE ---- */

/* in/m.h5 links to in/sub/d.h5, out/d.h5 (../out/d.h5, and a symbolic
 * link in/lnk.h5 to it), and stores /es in in/sub/raw.bin and out/raw.bin:
 * confined, only what lies in in/ loads, the rest refused naming both
 * files; not confined, everything loads. */
START_TEST(confine)
{
	char *in = tu_path("in"), *sub = tu_path("in/sub"),
	     *out = tu_path("out"), *m = tu_path("in/m.h5"),
	     *d_in = tu_path("in/sub/d.h5"), *d_out = tu_path("out/d.h5"),
	     *lnk = tu_path("in/lnk.h5"), *es = tu_path("in/es.h5");
	static const char *const links[] = {
		"/inside", "sub/d.h5", "/entry/data/data",
		"/outside", "../out/d.h5", "/entry/data/data",
		"/symlinked", "lnk.h5", "/entry/data/data",
		NULL
	};
	const seg raw_in[] = { { "in/sub/raw.bin", 0, H5F_UNLIMITED },
			       { NULL } };
	const seg raw_out[] = { { "out/raw.bin", 0, H5F_UNLIMITED },
				{ NULL } };
	char *dir = tu_path(""), cwd[4096];

	ck_assert_int_eq(mkdir(in, 0700), 0);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(mkdir(out, 0700), 0);
	data_file(d_in);
	data_file(d_out);
	ck_assert_int_eq(symlink("../out/d.h5", lnk), 0);
	master(m, links);
	for (int k = 0; links[k]; k += 3)
		loads(m, links[k], 0);
	loads(m, "/inside", PARLOAD_SRC_CONFINE);
	fails(m, "/outside", PARLOAD_SRC_CONFINE, PARLOAD_EOPEN, "in/m.h5",
	      "out/d.h5");
	fails(m, "/symlinked", PARLOAD_SRC_CONFINE, PARLOAD_EOPEN,
	      "lies outside its directory", "in/m.h5");
	/* External storage, named from the scratch directory. */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	stored(es, "/es", raw_in, true);
	loads(es, "/es", PARLOAD_SRC_CONFINE);
	stored(es, "/es", raw_out, true);
	loads(es, "/es", 0);
	fails(es, "/es", PARLOAD_SRC_CONFINE, PARLOAD_EOPEN, "out/raw.bin",
	      "in/es.h5");
	ck_assert_int_eq(chdir(cwd), 0);
	free(dir), free(in), free(sub), free(out), free(m), free(d_in);
	free(d_out), free(lnk), free(es);
}
END_TEST

/* ---- lists ---- */

/* A list of HDF5 files is one stream of their frames, known by the
 * first file's name or, first in the list, its first bytes (before: "a
 * list of HDF5 files is not read yet"); a file of the list that is no
 * HDF5 file fails naming it. */
START_TEST(hdf5_list)
{
	char *a = tu_path("a.h5"), *b = tu_path("b.frame");
	char *c = tu_path("c.raw");
	const char *lists[3][2] = { { b, a }, { a, b }, { a, c } };
	uint16_t want[PIXELS];
	parload_error err;
	parload_dataset ds;
	unsigned char *bytes;
	size_t len;

	data_file(a);
	bytes = tu_read_all(a, &len);
	tu_write_file(b, bytes, len);
	tu_write_file(c, bytes + 8, len - 8);
	pixels(want);
	for (int k = 0; k < 2; k++) {
		parload_loader *l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
		parload_request req;

		parload_request_init(&req);
		parload_source_init(&req.source);
		req.source.paths = lists[k];
		req.source.path_count = 2;
		req.source.dataset = "/entry/data/data";
		ck_assert_int_eq(parload_loader_run(l, &req, &ds, &err), 0);
		ck_assert_uint_eq(ds.shape.views, 2 * FRAMES);
		ck_assert_int_eq(memcmp(ds.pixels, want, sizeof(want)), 0);
		ck_assert_int_eq(memcmp((char *)ds.pixels + sizeof(want), want,
					sizeof(want)), 0);
		parload_dataset_free(&ds);
		parload_loader_free(l);
	}
	{
		parload_source src;

		parload_source_init(&src);
		src.paths = lists[2];
		src.path_count = 2;
		src.dataset = "/entry/data/data";
		ck_assert_int_ne(parload_describe(&src, 0, &ds.desc, &err), 0);
		ck_assert_msg(strstr(err.message, c) == err.message, "%s",
			      err.message);
	}
	free(bytes);
	free(a);
	free(b);
	free(c);
}
END_TEST

/* parload_describe_raw: a linked contiguous dataset is a raw stream of
 * the data file at its offset, which loads as the container; deflated
 * chunks are not; a damaged container's failed description says it is
 * one (format). */
START_TEST(describe_raw)
{
	char *data = tu_path("d.h5"), *m = tu_path("m.h5");
	static const char *const links[] = { "/linked", "d.h5",
					     "/entry/data/data",
					     "/z", "d.h5", "/z", NULL };
	parload_source src;
	parload_desc raw, d;
	parload_error err;
	parload_dataset ds;
	parload_loader *l;
	parload_request req;
	uint16_t want[PIXELS];
	char file[4096];

	data_file(data);
	master(m, links);
	parload_source_init(&src);
	src.path = m;
	src.dataset = "/linked";
	ck_assert_msg(parload_describe_raw(&src, &raw, file, sizeof(file),
					   &err) == 0, "%s", err.message);
	ck_assert_int_eq(raw.format, PARLOAD_FORMAT_RAW);
	ck_assert_uint_eq(raw.offset, offset_of(data, "/entry/data/data"));
	ck_assert_uint_eq(raw.gap, 0);
	ck_assert_uint_eq(raw.count, FRAMES);
	ck_assert_msg(strstr(file, "d.h5") && !strstr(file, "m.h5"), "%s",
		      file);
	ck_assert_int_eq(parload_describe_raw(&src, &raw, file, 3, &err),
			 PARLOAD_ESPACE);
	l = tu_loader(2, PARLOAD_STRATEGY_PARALLEL, 0);
	parload_request_init(&req);
	ck_assert_int_eq(parload_describe_raw(&src, &raw, file, sizeof(file),
					      &err), 0);
	req.source.path = file;
	req.source.desc = &raw;
	ck_assert_msg(parload_loader_run(l, &req, &ds, &err) == 0, "%s",
		      err.message);
	pixels(want);
	ck_assert_int_eq(memcmp(ds.pixels, want, sizeof(want)), 0);
	parload_dataset_free(&ds);
	parload_loader_free(l);
	src.dataset = "/z";
	ck_assert_int_eq(parload_describe_raw(&src, &raw, NULL, 0, &err),
			 PARLOAD_ENOTSUP);
	src.dataset = NULL;
	src.path = file;
	tu_truncate(data, 100);
	ck_assert_int_ne(parload_describe(&src, 0, &d, &err), 0);
	ck_assert_int_eq(d.format, PARLOAD_FORMAT_HDF5);
	free(data);
	free(m);
}
END_TEST

/* ---- parload info ---- */

/* The command with args (NULL-ended): r filled (the caller frees it). */
static void run(tu_result *r, const char *const *args)
{
	const char *argv[16] = { tu_parload_bin() };
	int n = 1;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	tu_run_cmd(&(tu_cmd){ .argv = argv, .timeout = 60 }, r);
}

#define RUN(r, ...) run((r), (const char *const[]){ __VA_ARGS__, NULL })

/* info on a damaged container fails as its load does, with the load's
 * message (before: "bad magic: not a raw image stream (found 89 48 44
 * 46 ...)", info's own check of parload's header). */
static void info_as_load(const char *path)
{
	tu_result info, load;

	RUN(&info, "info", path);
	RUN(&load, path);
	ck_assert_int_eq(info.status, 1);
	ck_assert_int_eq(load.status, 1);
	ck_assert_msg(!strstr(info.err, "magic"), "%s", info.err);
	ck_assert_str_eq(info.err, load.err);
	ck_assert_msg(strstr(info.out, "valid:             no"), "%s",
		      info.out);
	tu_result_free(&info);
	tu_result_free(&load);
	RUN(&info, "info", "--json", path);
	ck_assert_int_eq(info.status, 1);
	ck_assert_msg(strstr(info.out, "\"valid\":false") &&
		      !strstr(info.out, "magic"), "%s", info.out);
	tu_result_free(&info);
}

START_TEST(info_damaged)
{
	char *h5 = tu_path("cut.h5"), *tif = tu_path("cut.tif"),
	     *h5b = tu_path("cut.bin");
	/* A TIFF header whose first directory lies past the end. */
	static const unsigned char tiff[8] = { 'I', 'I', 42, 0, 0, 1, 0, 0 };
	unsigned char *b;
	size_t len;

	data_file(h5);
	tu_truncate(h5, tu_file_size(h5) / 2);
	b = tu_read_all(h5, &len);
	tu_write_file(h5b, b, len);
	tu_write_file(tif, tiff, sizeof(tiff));
	info_as_load(h5);
	info_as_load(h5b);
	info_as_load(tif);
	free(b);
	free(h5), free(h5b), free(tif);
}
END_TEST

/* The line of field in info's output, its value. */
static char *field(const char *out, const char *name)
{
	char key[64];
	const char *at;
	size_t n;

	snprintf(key, sizeof(key), "\n%s:", name);
	at = strstr(out, key);
	if (!at)
		return NULL;
	at += strlen(key);
	at += strspn(at, " ");
	n = strcspn(at, "\n");
	return strndup(at, n);
}

/* info prints where a contiguous dataset's pixels begin, in the file
 * that holds them (before: "offset: 0"); a chunked one has no offset. */
START_TEST(info_offset)
{
	char *data = tu_path("d.h5"), *m = tu_path("m.h5"), *arg;
	static const char *const links[] = { "/linked", "d.h5",
					     "/entry/data/data", NULL };
	char want[32], *v;
	tu_result r;

	data_file(data);
	master(m, links);
	snprintf(want, sizeof(want), "%" PRIu64,
		 offset_of(data, "/entry/data/data"));
	ck_assert_str_ne(want, "0");
	RUN(&r, "info", "--dataset", "/entry/data/data", data);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(v = field(r.out, "offset"), want);
	free(v);
	ck_assert_str_eq(v = field(r.out, "first_record"), want);
	free(v);
	tu_result_free(&r);
	RUN(&r, "info", "--dataset", "/linked", m);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(v = field(r.out, "offset"), want);
	free(v);
	ck_assert_msg((v = field(r.out, "data_file")) &&
		      strstr(v, "d.h5") && !strstr(v, "m.h5"), "%s", r.out);
	free(v);
	tu_result_free(&r);
	/* Deflated chunks: no offset, and null in the JSON (plain chunks of
	 * whole frames back to back have one). */
	if (asprintf(&arg, "%s:/z", data) < 0)
		ck_abort();
	RUN(&r, "info", arg);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_null(field(r.out, "offset"));
	ck_assert_ptr_null(field(r.out, "first_record"));
	ck_assert_msg(strstr(r.out, "format:            hdf5"), "%s", r.out);
	tu_result_free(&r);
	RUN(&r, "info", "--json", arg);
	ck_assert_msg(strstr(r.out, "\"offset\":null") &&
		      strstr(r.out, "\"first_record\":null"), "%s", r.out);
	tu_result_free(&r);
	free(arg);
	free(data);
	free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hdf5_links");
	TCase *t = tu_tcase(s, "links", 0);

	tcase_add_test(t, linked);
	tcase_add_test(t, link_dangling);
	tcase_add_test(t, master_stream);
	tcase_add_test(t, external_storage);
	tcase_add_test(t, confine);
	tcase_add_test(t, hdf5_list);
	tcase_add_test(t, describe_raw);
	/* The command's, from make check. */
	if (tu_parload_bin()) {
		t = tu_tcase(s, "info", 0);
		tcase_add_test(t, info_damaged);
		tcase_add_test(t, info_offset);
	} else {
		printf("check_hdf5_links: info not run: PARLOAD_BIN is not "
		       "set\n");
	}
	return s;
}

int main(void)
{
	return tu_run(suite());
}
#endif /* HAVE_HDF5 */
