/*
 * fuzz_files.h - what fuzz_describe and fuzz_differ share: each input is
 * a whole file, a TIFF where it starts with II or MM, else HDF5, written
 * to a directory of the process's own (the container's readers read
 * files by name, libhdf5 too); their seeds, the same for both, written
 * with libhdf5, libtiff and parload's own TIFF writer, deterministic (no
 * times in the HDF5 object headers); and, for fuzz_differ, every view's
 * pixels read through a container's strips table as the workers read it.
 */
#ifndef PARLOAD_FUZZ_FILES_H
#define PARLOAD_FUZZ_FILES_H

#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <tiffio.h>
#include <unistd.h>

#include "../../src/internal.h"
#include "fuzz.h"

/* ---- parload's allocations ----
 *
 * The harnesses are linked with --wrap=malloc,--wrap=calloc
 * (Makefile.am): every allocation of parload's code (and the harness's)
 * comes here, libhdf5's and libtiff's, in their shared libraries, do
 * not.  During an input none may take more than FUZZ_ALLOC_LIMIT: an
 * input is at most 16 KiB (max_len), and what it describes takes far
 * less where every count read from it is checked against its size before
 * it sizes anything; a larger one is a finding, and stops the run with
 * its stack.  (The libraries size their own buffers from damaged files
 * too: theirs are left to ASan, which gives them NULL beyond its
 * maximum, and to libFuzzer's RSS limit.) */
#define FUZZ_ALLOC_LIMIT ((size_t)4 << 20)
/* FUZZ_ALLOC_LIMIT, or PARLOAD_FUZZ_ALLOC_MB's (to look past a finding
 * that is known already). */
static size_t fuzz_alloc_limit = FUZZ_ALLOC_LIMIT;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);

static bool fuzz_in_input; /* an input is being read */

static void fuzz_alloc_check(size_t n, size_t size)
{
	if (fuzz_in_input &&
	    (size && n > fuzz_alloc_limit / size)) {
		fprintf(stderr, "fuzz: an allocation of %zu x %zu bytes, "
			"beyond %zu: sized by a count from the file that was "
			"not checked against its size\n", n, size,
			fuzz_alloc_limit);
		abort();
	}
}

void *__wrap_malloc(size_t n)
{
	fuzz_alloc_check(n, 1);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	fuzz_alloc_check(n, size);
	return __real_calloc(n, size);
}

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	/* The libraries' requests past ASan's maximum get NULL, as they
	 * would from malloc (libhdf5 asks for a metadata block's size as a
	 * damaged file gives it): not parload's. */
	return "allocator_may_return_null=1:quarantine_size_mb=16";
}

/* The process's directory and the input's two names in it. */
static char fuzz_dir[64], fuzz_tif[96], fuzz_h5[96];

static void fuzz_files_init(const char *harness)
{
	const char *mb = getenv("PARLOAD_FUZZ_ALLOC_MB");

	if (mb && atoi(mb) > 0)
		fuzz_alloc_limit = (size_t)atoi(mb) << 20;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/%s.XXXXXX", harness);
	REQUIRE(mkdtemp(fuzz_dir));
	snprintf(fuzz_tif, sizeof(fuzz_tif), "%s/in.tif", fuzz_dir);
	snprintf(fuzz_h5, sizeof(fuzz_h5), "%s/in.h5", fuzz_dir);
	/* (One process reads its files alone: no locks.) */
	setenv("HDF5_USE_FILE_LOCKING", "FALSE", 1);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	TIFFSetErrorHandler(NULL);
	TIFFSetWarningHandler(NULL);
}

/* libhdf5 leaks on some damaged files, in its own error paths (its
 * objects are all closed: fuzz_closed checks that after each input): not
 * parload's, and not a finding. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libhdf5\n";
}

/* Every libhdf5 object a reader opened is closed again. */
static void fuzz_closed(void)
{
	REQUIRE(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
}

static bool fuzz_is_tiff(const uint8_t *data, size_t size)
{
	return size >= 2 && data[0] == data[1] &&
	       (data[0] == 'I' || data[0] == 'M');
}

/* The input written as the file it is; its path.  From here until the
 * next input, parload's allocations are checked. */
static const char *fuzz_put(const uint8_t *data, size_t size)
{
	const char *path = fuzz_is_tiff(data, size) ? fuzz_tif : fuzz_h5;
	const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0600);

	REQUIRE(fd >= 0 && write(fd, data, size) == (ssize_t)size &&
		close(fd) == 0);
	fuzz_in_input = true;
	return path;
}

/* ---- libhdf5's own crashes ----
 *
 * libhdf5 1.10 crashes on some damaged files by itself (a metadata block
 * of a size the file gives, allocated and read without a check: a NULL or
 * a short block read into), however its caller calls it; parload can only
 * refrain from calling it, and the harness would stop on libhdf5's bugs
 * instead of finding parload's.  So an HDF5 input runs first in a child
 * process: where it dies of a signal (or hangs past 5 s) in libhdf5's code
 * - the innermost frame outside libc and the sanitizers' interceptors
 * lies in libhdf5 - the input is skipped, saying so; otherwise (it ended,
 * or died anywhere else) it runs again here, where a finding of parload's
 * is reported with its stack as any other. */

#include <dlfcn.h>
#include <execinfo.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <sys/wait.h>
#include <ucontext.h>

#define FUZZ_LIB_CRASH 93 /* (libFuzzer exits 77 on a crash) */

/* Whether pc lies in libc or in the sanitizers' runtime (an interceptor,
 * the only code of the executable whose symbols it exports). */
static bool fuzz_runtime(void *pc)
{
	Dl_info i;

	if (!dladdr(pc, &i) || !i.dli_fname)
		return false;
	return strstr(i.dli_fname, "/libc.so") || i.dli_sname;
}

static void fuzz_on_crash(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
	void *frames[128];
	const int n = backtrace(frames, 128);
	int k = 0;
	Dl_info i;

	(void)sig, (void)si;
	while (k < n && frames[k] != pc)
		k++;
	if (k == n) /* (the interrupted frame not found: from the top) */
		frames[k = 0] = pc;
	while (k < n && fuzz_runtime(frames[k]))
		k++;
	_exit(k < n && dladdr(frames[k], &i) && i.dli_fname &&
			      strstr(i.dli_fname, "libhdf5") ?
		      FUZZ_LIB_CRASH :
		      1);
}

/* AddressSanitizer's report of a bad access that an interceptor (memcpy,
 * ...) found: libhdf5's own when the interceptor's caller lies in
 * libhdf5 (H5Dread over-reads a block of its own on some damaged files):
 * above the sanitizer's frames, all in the executable, the first frame
 * outside it is libhdf5's and the one below it an interceptor (an
 * exported name: parload's code has none).  Anything else dies as ASan
 * has it. */
static void fuzz_on_sanitizer_death(void)
{
	void *frames[128];
	const int n = backtrace(frames, 128);
	Dl_info self, i;
	const char *below = NULL;
	int k = 1;

	if (!dladdr((void *)fuzz_on_sanitizer_death, &self))
		return;
	for (; k < n && dladdr(frames[k], &i) && i.dli_fbase == self.dli_fbase;
	     k++)
		below = i.dli_sname;
	if (k < n && below && dladdr(frames[k], &i) && i.dli_fname &&
	    strstr(i.dli_fname, "libhdf5"))
		_exit(FUZZ_LIB_CRASH);
}

/* Whether fn(path) is to run here: not where, in a child, libhdf5 crashed
 * on it by itself. */
static bool fuzz_not_libhdf5s(void (*fn)(const char *), const char *path)
{
	const pid_t pid = fork();
	pid_t r;
	int st;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct sigaction sa;
		static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
					    SIGALRM };

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = fuzz_on_crash;
		sa.sa_flags = SA_SIGINFO;
		for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
			sigaction(sigs[k], &sa, NULL);
		__sanitizer_set_death_callback(fuzz_on_sanitizer_death);
		alarm(5);
		fn(path);
		_exit(0);
	}
	/* (libFuzzer's timer interrupts the wait every second.) */
	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	REQUIRE(r == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == FUZZ_LIB_CRASH) {
		fprintf(stderr, "fuzz: skipped an input libhdf5 crashes on "
			"by itself\n");
		return false;
	}
	return true;
}

/* ---- pixels through a table ---- */

static void fuzz_swap(unsigned char *p, size_t n, size_t bpp)
{
	for (size_t i = 0; i + bpp <= n; i += bpp)
		for (size_t a = 0, b = bpp - 1; a < b; a++, b--) {
			const unsigned char c = p[i + a];

			p[i + a] = p[i + b];
			p[i + b] = c;
		}
}

/* Every view of c, in the host's byte order, into a new block of *len
 * bytes: uncompressed strips read in place, the others through the
 * strip reader (decode.c: deflate, or the container's decoder).  NULL
 * where the views take more than cap bytes (*len 0), or with *err set
 * (*len 1) where a strip cannot be read or decoded. */
static unsigned char *fuzz_pixels(const parload__container *c, size_t cap,
				  size_t *len, parload_error *err)
{
	const parload__strips *t = &c->strips;
	const parload_desc *d = &c->desc;
	const uint64_t view = d->row_size * d->height;
	parload__file files[8];
	parload__strip_reader r;
	parload__io_stats st;
	unsigned char *out;
	int rc = 0;

	*len = 0;
	if (c->n > 8 || !view || view > cap || t->views > cap / view)
		return NULL;
	out = malloc((size_t)(view * t->views) + 1);
	REQUIRE(out);
	memset(files, 0, sizeof(files));
	memset(&st, 0, sizeof(st));
	for (size_t k = 0; k < c->n; k++) {
		files[k].path = c->paths[k];
		files[k].fd = open(c->paths[k], O_RDONLY | O_CLOEXEC);
		files[k].dfd = -1;
		REQUIRE(files[k].fd >= 0);
	}
	if (!parload__strips_plain(t))
		rc = parload__strip_reader_open(&r, t, d, files, err);
	for (uint64_t i = 0; rc == 0 && i < t->views * t->per_view; i++) {
		const parload__strip s = parload__strip_of(t, i, NULL);
		const uint64_t y = (i % t->per_view) * t->rows;
		const uint64_t rows = d->height - y < t->rows ? d->height - y :
								t->rows;
		unsigned char *to = out + (i / t->per_view) * view +
				    y * d->row_size;
		const unsigned char *got;

		if (parload__strips_plain(t)) {
			const size_t n = (size_t)(rows * d->row_size);

			REQUIRE(s.file < c->n);
			if (pread(files[s.file].fd, to, n, (off_t)s.off) !=
			    (ssize_t)n)
				rc = parload__fail(err, PARLOAD_ETRUNCATED, 0,
						   c->paths[s.file],
						   i / t->per_view, s.off,
						   "a strip past the end");
		} else if (!(got = parload__strip_get(&r, i, 0,
						      rows * d->row_size, &st,
						      err))) {
			rc = err->code;
		} else {
			memcpy(to, got, (size_t)(rows * d->row_size));
		}
	}
	if (!parload__strips_plain(t))
		parload__strip_reader_close(&r);
	for (size_t k = 0; k < c->n; k++)
		close(files[k].fd);
	if (rc) {
		free(out);
		*len = 1;
		return NULL;
	}
	*len = (size_t)(view * t->views);
	if (d->encoding == (parload__host_be() ? PARLOAD_ENC_LE :
						 PARLOAD_ENC_BE))
		fuzz_swap(out, *len, d->bytes_per_pixel);
	return out;
}

/* ---- seeds ---- */

static void fuzz_seed_copy(const char *from, const char *dir,
			   const char *name)
{
	char path[4096];
	unsigned char b[1 << 16];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "wb");
	REQUIRE(in && out);
	n = fread(b, 1, sizeof(b), in);
	REQUIRE(n < sizeof(b) && fwrite(b, 1, n, out) == n);
	REQUIRE(fclose(in) == 0 && fclose(out) == 0);
}

/* A dataset of type u16 (pixels i * 37 + k), its dims, contiguous or
 * in chunks (chunk[0] 0: contiguous), deflate (and shuffle). */
/* The maximum shape of the next datasets made (NULL: their shape). */
static const hsize_t *fuzz_h5_max;

static void fuzz_h5_dataset(hid_t f, const char *name, int rank,
			    const hsize_t *dims, const hsize_t *chunk,
			    int deflate, bool shuffle)
{
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t s = H5Screate_simple(rank, dims, fuzz_h5_max), d;
	uint16_t px[512];
	hsize_t n = 1;

	for (int k = 0; k < rank; k++)
		n *= dims[k];
	REQUIRE(n <= 512);
	for (hsize_t i = 0; i < n; i++)
		px[i] = (uint16_t)(i * 37 + 5);
	REQUIRE(H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
		H5Pset_obj_track_times(dcpl, 0) >= 0);
	REQUIRE(!chunk[0] || H5Pset_chunk(dcpl, rank, chunk) >= 0);
	REQUIRE(!shuffle || H5Pset_shuffle(dcpl) >= 0);
	REQUIRE(!deflate || H5Pset_deflate(dcpl, (unsigned)deflate) >= 0);
	d = H5Dcreate2(f, name, H5T_STD_U16LE, s, lcpl, dcpl, H5P_DEFAULT);
	REQUIRE(d >= 0 && H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL,
				   H5P_DEFAULT, px) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Pclose(dcpl);
	H5Pclose(lcpl);
}

/* A 1-D dataset of n values of mem, stored as file type ft. */
static void fuzz_h5_1d(hid_t f, const char *name, hid_t ft, hid_t mem,
		       hsize_t n, const void *v)
{
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t s = H5Screate_simple(1, &n, NULL), d;

	REQUIRE(H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
		H5Pset_obj_track_times(dcpl, 0) >= 0);
	d = H5Dcreate2(f, name, ft, s, lcpl, dcpl, H5P_DEFAULT);
	REQUIRE(d >= 0 && H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT,
				   v) >= 0);
	H5Dclose(d);
	H5Sclose(s);
	H5Pclose(dcpl);
	H5Pclose(lcpl);
}

static void fuzz_h5_class(hid_t f, const char *obj, const char *cls)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
	hid_t o = H5Oopen(f, obj, H5P_DEFAULT), a;

	REQUIRE(o >= 0 && H5Tset_size(t, strlen(cls) + 1) >= 0);
	a = H5Acreate2(o, "NX_class", t, s, H5P_DEFAULT, H5P_DEFAULT);
	REQUIRE(a >= 0 && H5Awrite(a, t, cls) >= 0);
	H5Aclose(a);
	H5Oclose(o);
	H5Sclose(s);
	H5Tclose(t);
}

/* HDF5 seed k (of FUZZ_H5_SEEDS) at path. */
#define FUZZ_H5_SEEDS 8
static void fuzz_h5_seed(const char *path, int k)
{
	const hsize_t ea[3] = { H5S_UNLIMITED, 3, 4 };
	const hsize_t bt2[3] = { H5S_UNLIMITED, H5S_UNLIMITED, 4 };
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;
	const hsize_t d3[3] = { 4, 3, 5 }, c3[3] = { 1, 3, 5 };
	const hsize_t half[3] = { 1, 2, 5 }, none[3] = { 0 };
	const hsize_t d6[3] = { 6, 3, 4 }, c6[3] = { 1, 3, 4 };
	const hsize_t half3[3] = { 1, 2, 4 };
	const hsize_t d2[2] = { 3, 4 };
	const float theta[6] = { 0, 30, 60, 90, 120, 150 };
	const int32_t key[6] = { 2, 1, 0, 0, 0, 1 };

	/* 1: libhdf5 1.8's format (an "OHDR" header, a version 2
	 * B-tree for chunks); 2: a user block; 3: B-trees of 2 keys. */
	REQUIRE(k != 1 || H5Pset_libver_bounds(fapl, H5F_LIBVER_V18,
					       H5F_LIBVER_V18) >= 0);
	REQUIRE(k != 2 || H5Pset_userblock(fcpl, 512) >= 0);
	REQUIRE(k != 3 || H5Pset_istore_k(fcpl, 2) >= 0);
	/* 5-7: libver latest, whose chunk indexes are a fixed array, an
	 * extensible array, a version 2 B-tree. */
	REQUIRE(k < 5 || H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST,
					      H5F_LIBVER_LATEST) >= 0);
	fuzz_h5_max = k == 6 ? ea : k == 7 ? bt2 : NULL;
	f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	REQUIRE(f >= 0);
	switch (k) {
	case 0: /* DXchange, contiguous, its flats, darks and angles */
		fuzz_h5_dataset(f, "/exchange/data", 3, d3, none, 0, false);
		fuzz_h5_dataset(f, "/exchange/data_white", 3, c3, none, 0,
				false);
		fuzz_h5_dataset(f, "/exchange/data_dark", 3, c3, none, 0,
				false);
		fuzz_h5_1d(f, "/exchange/theta", H5T_IEEE_F32LE,
			   H5T_NATIVE_FLOAT, 4, theta);
		break;
	case 1: /* chunks of half a frame, shuffled and deflated */
		fuzz_h5_dataset(f, "/scan", 3, d3, half, 4, true);
		break;
	case 2: /* NXtomo: chunks, its image_key and angles */
		fuzz_h5_dataset(f, "/entry/data/data", 3, d6, c6, 0, false);
		fuzz_h5_1d(f, "/entry/data/image_key", H5T_STD_I32LE,
			   H5T_NATIVE_INT32, 6, key);
		fuzz_h5_1d(f, "/entry/sample/rotation_angle", H5T_IEEE_F32LE,
			   H5T_NATIVE_FLOAT, 6, theta);
		fuzz_h5_class(f, "/entry", "NXentry");
		break;
	case 3: /* deflate, a deeper B-tree */
		fuzz_h5_dataset(f, "/exchange/data", 3, d6, c6, 1, false);
		break;
	case 5: /* chunks of rows (libver latest's indexes) */
	case 6:
	case 7:
		fuzz_h5_dataset(f, "/exchange/data", 3, d6, k == 6 ? c6 : half3,
				0, false);
		break;
	default: /* one frame, 2-D, DXchange without angles */
		fuzz_h5_dataset(f, "/exchange/data", 2, d2, none, 0, false);
		break;
	}
	fuzz_h5_max = NULL;
	H5Fclose(f);
	H5Pclose(fapl);
	H5Pclose(fcpl);
}

/* A TIFF of libtiff's: pages of w x h u16 in strips of rps rows (0:
 * tiles of 16), compressed as comp, in mode ("w", "wb", "w8"). */
static void fuzz_tiff_seed(const char *path, const char *mode, uint16_t comp,
			   uint32_t w, uint32_t h, uint32_t rps,
			   uint32_t pages)
{
	TIFF *tif = TIFFOpen(path, mode);
	uint16_t row[64];
	static uint16_t tile[16 * 16];

	REQUIRE(tif && w <= 64);
	for (uint32_t k = 0; k < pages; k++) {
		TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
		TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
		TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 16);
		TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
		TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
		TIFFSetField(tif, TIFFTAG_COMPRESSION, comp);
		if (!rps) {
			TIFFSetField(tif, TIFFTAG_TILEWIDTH, 16);
			TIFFSetField(tif, TIFFTAG_TILELENGTH, 16);
			for (uint32_t y = 0; y < h; y += 16)
				for (uint32_t x = 0; x < w; x += 16) {
					for (int i = 0; i < 16 * 16; i++)
						tile[i] = (uint16_t)(i + x + y +
								     k);
					TIFFWriteTile(tif, tile, x, y, 0, 0);
				}
		} else {
			TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rps);
			for (uint32_t y = 0; y < h; y++) {
				for (uint32_t x = 0; x < w; x++)
					row[x] = (uint16_t)(x * 7 + y * 131 +
							    k * 1009);
				TIFFWriteScanline(tif, row, y, 0);
			}
		}
		TIFFWriteDirectory(tif);
	}
	TIFFClose(tif);
}

/* An ImageJ stack of n images of w x h u16 in one directory, as
 * tifffile writes it with imagej=True, truncate=True (and ImageJ past
 * 4 GiB): the directory at 8, its description, then the pixels. */
static void fuzz_imagej_seed(const char *path, uint32_t w, uint32_t h,
			     uint32_t n)
{
	static const char desc[] = "ImageJ=1.11a\nimages=3\nchannels=3\n"
				   "hyperstack=true\nmode=grayscale";
	static const uint16_t e[][4] = {
		{ 256, 3, 1, 0 }, { 257, 3, 1, 0 }, { 258, 3, 1, 16 },
		{ 259, 3, 1, 1 }, { 262, 3, 1, 1 }, { 270, 2, 0, 0 },
		{ 273, 4, 1, 0 }, { 277, 3, 1, 1 }, { 278, 4, 1, 0 },
		{ 279, 4, 1, 0 },
	};
	const uint32_t ne = sizeof(e) / sizeof(e[0]);
	const uint32_t at_desc = 8 + 2 + 12 * ne + 4;
	const uint32_t data = at_desc + (uint32_t)sizeof(desc);
	unsigned char b[4096] = { 'I', 'I', 42, 0, 8, 0, 0, 0 };
	size_t at = 8;
	FILE *f;

	REQUIRE(n == 3 && data + 2 * w * h * n <= sizeof(b));
	b[at++] = (unsigned char)ne;
	b[at++] = 0;
	for (uint32_t i = 0; i < ne; i++, at += 12) {
		const uint32_t v = e[i][0] == 256 ? w : e[i][0] == 257 ? h :
				   e[i][0] == 270 ? at_desc :
				   e[i][0] == 273 ? data :
				   e[i][0] == 278 ? h :
				   e[i][0] == 279 ? 2 * w * h : e[i][3];
		const uint32_t count = e[i][0] == 270 ? (uint32_t)sizeof(desc) :
							 e[i][2];

		memcpy(b + at, &e[i][0], 2);
		memcpy(b + at + 2, &e[i][1], 2);
		memcpy(b + at + 4, &count, 4);
		memcpy(b + at + 8, &v, 4);
	}
	memcpy(b + at_desc, desc, sizeof(desc));
	for (uint32_t i = 0; i < w * h * n; i++) {
		const uint16_t v = (uint16_t)(i * 40503u + 17);

		memcpy(b + data + 2 * i, &v, 2);
	}
	f = fopen(path, "wb");
	REQUIRE(f && fwrite(b, 1, data + 2 * w * h * n, f) ==
			     data + 2 * w * h * n &&
		fclose(f) == 0);
}

/* Every seed into dir: the HDF5 files, libtiff's TIFFs (strips in both
 * byte orders, BigTIFF, LZW, deflate, tiles), parload's own, an ImageJ
 * stack in one directory. */
static size_t fuzz_write_seeds(const char *dir)
{
	static const struct {
		const char *name, *mode;
		uint16_t comp;
		uint32_t w, h, rps, pages;
	} tiffs[] = {
		{ "strips-le.tif", "w", COMPRESSION_NONE, 9, 7, 3, 3 },
		{ "strips-be.tif", "wb", COMPRESSION_NONE, 5, 4, 4, 2 },
		{ "bigtiff.tif", "w8", COMPRESSION_NONE, 6, 5, 2, 2 },
		{ "lzw.tif", "w", COMPRESSION_LZW, 12, 6, 3, 2 },
		{ "deflate.tif", "w", COMPRESSION_ADOBE_DEFLATE, 8, 5, 5, 2 },
		{ "tiles.tif", "w", COMPRESSION_NONE, 20, 18, 0, 1 },
	};
	const uint16_t px[4 * 3 * 5] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	const parload_stack st = { .pixels = px,
				   .pixel_type = PARLOAD_PIXEL_U16, .n = 4,
				   .rows = 3, .cols = 5 };
	char tmp[96], name[32];
	parload_error err;
	size_t n = 0;

	fuzz_seed_dir(dir);
	fuzz_files_init("fuzz_seeds");
	snprintf(tmp, sizeof(tmp), "%s/seed", fuzz_dir);
	for (int k = 0; k < FUZZ_H5_SEEDS; k++, n++) {
		fuzz_h5_seed(tmp, k);
		snprintf(name, sizeof(name), "h5-%d.h5", k);
		fuzz_seed_copy(tmp, dir, name);
	}
	for (size_t i = 0; i < sizeof(tiffs) / sizeof(tiffs[0]); i++, n++) {
		fuzz_tiff_seed(tmp, tiffs[i].mode, tiffs[i].comp, tiffs[i].w,
			       tiffs[i].h, tiffs[i].rps, tiffs[i].pages);
		fuzz_seed_copy(tmp, dir, tiffs[i].name);
	}
	for (int big = 0; big < 2; big++, n++) {
		FILE *f = fopen(tmp, "wb"); /* (the empty file it fills) */

		REQUIRE(f && fclose(f) == 0);
		REQUIRE(parload__tiff_save_as(tmp, tmp, &st, big, &err) == 0);
		fuzz_seed_copy(tmp, dir, big ? "own-big.tif" : "own.tif");
	}
	fuzz_imagej_seed(tmp, 5, 4, 3);
	fuzz_seed_copy(tmp, dir, "imagej.tif");
	n++;
	unlink(tmp);
	rmdir(fuzz_dir);
	return n;
}

#endif
