/*
 * check_codecs.c - the codec rows (src/codec/), each decoding chunks that
 * the reference implementations encoded, and refusing bad ones.
 *
 * Part 0 (check_codecs) runs everywhere: bitshuffle's plain, SSE2 and (where
 * the CPU has it) AVX2 bit transposes against a bit-by-bit transpose
 * written here, on every element size and on lengths that are not a
 * multiple of 16 columns; and bad input, one test each, every decode into
 * a buffer with a guard region after it that must come back untouched: a
 * chunk whose stored or decoded size disagrees with its header, an LZ4
 * block that would write past its output, a bitshuffle block size that is
 * not a multiple of 8, a Blosc header that lies, truncated chunks (every
 * length), a Fletcher32 mismatch, a gzip member whose CRC-32 or size is
 * wrong or with bytes after it, numcodecs' LZ4 whose size lies, a
 * CRC-32C mismatch (and its check value), a bzip2 stream with bytes
 * after it or damaged.  Every
 * encoder (encode and bound) against
 * its row's decode, and into less room than it needs (refused, the guard
 * untouched).  A row this build lacks is checked to say what it needs
 * instead.
 *
 * Parts 1-3 decode chunks that tests/codec_refs.py wrote with the
 * references (the Python $PARLOAD_PYTHON, else $PYTHON3): 1, the chunks
 * h5py and hdf5plugin store (read with read_direct_chunk, with the client
 * data HDF5 keeps, through parload__codec_of_hdf5 and the row's
 * hdf5_params); 2, numcodecs' Blosc (every compressor and shuffle it
 * carries), Zstd, GZip, Zlib, LZ4 and BZ2, CRC-32C (written in Python from
 * its definition, which numcodecs 0.11 lacks), and parload's encoders' output decoded
 * by numcodecs; 3, bitshuffle's Python module (its transpose against
 * each of parload's, compress_lz4 with its HDF5 framing).  Each chunk is
 * decoded into exactly its bytes, into more room, and into one byte less
 * (which must fail, the guard untouched).  A part whose reference is
 * missing, or whose rows this build lacks, is a skip saying which.
 */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "codec/rows.h"
#include "testutil.h"

#ifdef HAVE_LZ4
#include <lz4.h>
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef HAVE_BLOSC
#include <blosc.h>
#endif

#define GUARD 4096
#define GUARD_BYTE 0xA5

/* ---- decoding with a guard ---- */

/* The row of HDF5 filter id, or NULL. */
static const parload__codec_row *row_of_hdf5(uint32_t id)
{
	const parload__codec c = parload__codec_of_hdf5(id);

	return c < PARLOAD__CODEC_COUNT ? parload__codec_get(c) : NULL;
}

typedef struct decoded {
	const char *why;
	size_t got;
	unsigned char *out; /* cap bytes, then the guard (freed by caller) */
} decoded;

/* A row's decode or encode (the same signature). */
typedef const char *(*stage_fn)(void *state, const parload__filter *f,
				const unsigned char *in, size_t n,
				unsigned char *out, size_t cap, size_t *got);

/* Row's decode (or encode) of len bytes of chunk (copied into a buffer
 * of exactly that size) into cap bytes of room; the guard after them
 * checked. */
static decoded run_guarded(const parload__codec_row *row, stage_fn fn,
			   const parload__filter *f,
			   const unsigned char *chunk, size_t len, size_t cap)
{
	unsigned char *in = malloc(len ? len : 1);
	void *state = NULL;
	decoded d = { .out = malloc(cap + GUARD) };

	ck_assert(in && d.out);
	memcpy(in, chunk, len);
	memset(d.out, GUARD_BYTE, cap + GUARD);
	ck_assert_msg(fn, "row %s has no decode or encode (needs %s)",
		      row->name, row->needs);
	if (row->open)
		ck_assert((state = row->open()) != NULL);
	d.why = fn(state, f, in, len, d.out, cap, &d.got);
	if (row->close)
		row->close(state);
	size_t i = 0;

	while (i < GUARD && d.out[cap + i] == GUARD_BYTE)
		i++;
	/* (One assertion: each of Check's costs a write to its pipe.) */
	ck_assert_msg(i == GUARD, "row %s wrote byte %zu past its room of %zu",
		      row->name, i, cap);
	free(in);
	return d;
}

static decoded decode_guarded(const parload__codec_row *row,
			      const parload__filter *f,
			      const unsigned char *chunk, size_t len,
			      size_t cap)
{
	return run_guarded(row, row->decode, f, chunk, len, cap);
}

/* The filter of HDF5 filter id with client data cd, as the row reads it. */
static const parload__codec_row *row_params(uint32_t id, const unsigned *cd,
					    size_t n, uint32_t elem,
					    parload__filter *f)
{
	const parload__codec_row *row = row_of_hdf5(id);
	const char *why;

	ck_assert_msg(row, "no row for HDF5 filter %u", id);
	memset(f, 0, sizeof(*f));
	f->codec = parload__codec_of_hdf5(id);
	ck_assert_msg(row->hdf5_params, "row %s reads no client data",
		      row->name);
	why = row->hdf5_params(cd, n, elem, f);
	ck_assert_msg(!why, "row %s refuses its client data: %s", row->name,
		      why);
	return row;
}

/* ---- the references' chunks (parts 1-3) ---- */

typedef struct ref_case {
	char kind;               /* 'C' a chunk, 'N' a chunk of a row named
				  * with its params, 'T' a transpose */
	char name[32];           /* N: the row's */
	uint32_t id, elem, n;    /* n: client data or params (C, N),
				  * elements (T) */
	unsigned cd[16];
	char data[16], chunk[16];
	char label[200];
} ref_case;

static char refdir[4096];
static ref_case *cases;
static int ncases;
static int nchunks, ntransposes;

static unsigned char *ref_file(const char *name, size_t *len)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", refdir, name);
	return tu_read_all(path, len);
}

static void read_chunk_line(ref_case *c, char *rest)
{
	char *tok = strtok(rest, " ");

	if (c->kind == 'N')
		snprintf(c->name, sizeof(c->name), "%s", tok);
	else
		c->id = (uint32_t)strtoul(tok, NULL, 10);
	c->elem = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
	c->n = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
	if (c->n == 0)
		strtok(NULL, " "); /* "-" */
	for (uint32_t i = 0; i < c->n && i < 16; i++)
		c->cd[i] = (unsigned)strtoul(strtok(NULL, " "), NULL, 10);
	snprintf(c->data, sizeof(c->data), "%s", strtok(NULL, " "));
	snprintf(c->chunk, sizeof(c->chunk), "%s", strtok(NULL, " "));
	snprintf(c->label, sizeof(c->label), "%s", strtok(NULL, "\n"));
}

static void read_transpose_line(ref_case *c, char *rest)
{
	c->elem = (uint32_t)strtoul(strtok(rest, " "), NULL, 10);
	c->n = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
	snprintf(c->data, sizeof(c->data), "%s", strtok(NULL, " "));
	snprintf(c->chunk, sizeof(c->chunk), "%s", strtok(NULL, " "));
	snprintf(c->label, sizeof(c->label), "%s", strtok(NULL, "\n"));
}

/* cases.txt into cases[], chunks first, then transposes. */
static int read_cases(void)
{
	char path[4200], line[1024];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cases.txt", refdir);
	if (!(fp = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		ref_case c = { .kind = line[0] };

		if (line[0] == 'C' || line[0] == 'N')
			read_chunk_line(&c, line + 2);
		else if (line[0] == 'T')
			read_transpose_line(&c, line + 2);
		else
			continue;
		cases = realloc(cases, (size_t)(ncases + 1) * sizeof(*cases));
		cases[ncases++] = c;
		*(c.kind != 'T' ? &nchunks : &ntransposes) += 1;
	}
	fclose(fp);
	/* Chunks first: the loop tests index them apart. */
	for (int i = 0, j = 0; i < ncases; i++)
		if (cases[i].kind != 'T') {
			ref_case t = cases[j];

			cases[j++] = cases[i];
			cases[i] = t;
		}
	return 0;
}

/* The filter of the row named name, with params p (n of them). */
static const parload__codec_row *row_named(const char *name,
					   const unsigned *p, size_t n,
					   uint32_t elem, parload__filter *f)
{
	const parload__codec c = parload__codec_named(name);

	ck_assert_msg(c < PARLOAD__CODEC_COUNT, "no row named %s", name);
	memset(f, 0, sizeof(*f));
	f->codec = c;
	f->elem = elem;
	for (size_t i = 0; i < n && i < TU_COUNT(f->param); i++)
		f->param[i] = p[i];
	return parload__codec_get(c);
}

START_TEST(test_reference_chunk)
{
	const ref_case *c = &cases[_i];
	size_t dlen, clen;
	unsigned char *data = ref_file(c->data, &dlen);
	unsigned char *chunk = ref_file(c->chunk, &clen);
	parload__filter f;
	const parload__codec_row *row =
		c->kind == 'N' ?
			row_named(c->name, c->cd, c->n, c->elem, &f) :
			row_params(c->id, c->cd, c->n, c->elem, &f);
	const size_t rooms[] = { dlen, dlen + 1000 };
	decoded d;

	for (int r = 0; r < 2; r++) {
		d = decode_guarded(row, &f, chunk, clen, rooms[r]);
		ck_assert_msg(!d.why, "%s: row %s: %s", c->label, row->name,
			      d.why);
		ck_assert_msg(d.got == dlen, "%s: row %s made %zu bytes, not "
			      "%zu", c->label, row->name, d.got, dlen);
		ck_assert_msg(memcmp(d.out, data, dlen) == 0,
			      "%s: row %s decodes other bytes", c->label,
			      row->name);
		free(d.out);
	}
	if (dlen > 0) {
		d = decode_guarded(row, &f, chunk, clen, dlen - 1);
		ck_assert_msg(d.why, "%s: row %s fits %zu bytes in %zu",
			      c->label, row->name, dlen, dlen - 1);
		free(d.out);
	}
	free(data);
	free(chunk);
}
END_TEST

START_TEST(test_reference_transpose)
{
	const ref_case *c = &cases[nchunks + _i];
	const size_t n8 = c->n - c->n % 8, bytes = n8 * c->elem;
	size_t dlen, slen;
	unsigned char *data = ref_file(c->data, &dlen);
	unsigned char *shuf = ref_file(c->chunk, &slen);
	unsigned char *plain = malloc(bytes + 1), *vec = malloc(bytes + 1);

	ck_assert(dlen == slen && dlen == (size_t)c->n * c->elem);
	parload__bitunshuffle_plain(shuf, plain, n8, c->elem);
	parload__bitunshuffle_vector(shuf, vec, n8, c->elem);
	ck_assert_msg(memcmp(plain, data, bytes) == 0,
		      "%s: the plain transpose disagrees with bitshuffle's",
		      c->label);
	ck_assert_msg(memcmp(vec, data, bytes) == 0,
		      "%s: the vector transpose disagrees with bitshuffle's",
		      c->label);
	memset(vec, 0, bytes);
	if (parload__bitunshuffle_avx2(shuf, vec, n8, c->elem))
		ck_assert_msg(memcmp(vec, data, bytes) == 0, "%s: the AVX2 "
			      "transpose disagrees with bitshuffle's",
			      c->label);
	/* The last n % 8 elements are stored as they are. */
	ck_assert(memcmp(shuf + bytes, data + bytes, dlen - bytes) == 0);
	free(plain);
	free(vec);
	free(data);
	free(shuf);
}
END_TEST

static Suite *reference_suite(void)
{
	Suite *s = suite_create("codecs_reference");
	TCase *tc = tu_tcase(s, "reference", 120);

	tcase_add_loop_test(tc, test_reference_chunk, 0, nchunks);
	if (ntransposes)
		tcase_add_loop_test(tc, test_reference_transpose, 0,
				    ntransposes);
	return s;
}

/* ---- part 0: the transposes, and bad input ---- */

/* Bitshuffle's transpose of one block, bit by bit, as its format says:
 * bit k of byte j of element i is bit i % 8 of byte i / 8 of bit row
 * j * 8 + k. */
static void ref_bitshuffle(const unsigned char *in, unsigned char *out,
			   size_t n, size_t elem)
{
	const size_t nb = n / 8;

	memset(out, 0, n * elem);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < elem; j++)
			for (unsigned k = 0; k < 8; k++)
				if (in[i * elem + j] >> k & 1)
					out[(j * 8 + k) * nb + i / 8] |=
						(unsigned char)(1u << (i % 8));
}

static unsigned char *random_bytes(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len ? len : 1);

	srand(seed);
	for (size_t i = 0; i < len; i++)
		/* Mostly small counts, as a detector's, some noise. */
		p[i] = (unsigned char)(i % 7 ? rand() % 3 : rand());
	return p;
}

static const size_t t_elems[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32 };
static const size_t t_lens[] = { 8, 16, 120, 128, 136, 256, 1000, 1032, 4096 };

START_TEST(test_transposes_agree)
{
	const size_t elem = t_elems[_i];

	for (int l = 0; l < TU_COUNT(t_lens); l++) {
		const size_t n = t_lens[l], bytes = n * elem;
		unsigned char *data = random_bytes(bytes, (unsigned)(n + elem));
		unsigned char *shuf = malloc(bytes), *a = malloc(bytes),
			      *b = malloc(bytes);

		ref_bitshuffle(data, shuf, n, elem);
		parload__bitunshuffle_plain(shuf, a, n, elem);
		parload__bitunshuffle_vector(shuf, b, n, elem);
		ck_assert_msg(memcmp(a, data, bytes) == 0,
			      "plain transpose: elem %zu n %zu", elem, n);
		ck_assert_msg(memcmp(b, data, bytes) == 0,
			      "vector transpose: elem %zu n %zu", elem, n);
		memset(b, 0, bytes);
		if (parload__bitunshuffle_avx2(shuf, b, n, elem))
			ck_assert_msg(memcmp(b, data, bytes) == 0,
				      "AVX2 transpose: elem %zu n %zu", elem,
				      n);
		parload__bitunshuffle(shuf, a, n, elem);
		ck_assert(memcmp(a, data, bytes) == 0);
		free(data);
		free(shuf);
		free(a);
		free(b);
	}
}
END_TEST

static void put_be32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

/* A chunk of len bytes, each byte's own value (a 32-byte period) and
 * some noise, as a filter writes it; NULL where this build lacks it.
 * *elem: the element size its client data gives, *cd and *ncd: those. */
typedef struct made {
	unsigned char *chunk;
	size_t len;
	uint32_t id;          /* its HDF5 filter, or 0: codec with params cd */
	parload__codec codec;
	unsigned cd[8];
	size_t ncd;
	uint32_t elem;
} made;

#ifdef HAVE_LZ4
/* HDF5's LZ4 framing of data in blocks of block bytes. */
static made make_lz4(const unsigned char *data, size_t len, size_t block)
{
	made m = { .chunk = malloc(12 + len / block * 4 + 4 +
				   (size_t)LZ4_compressBound((int)len) * 2),
		   .id = 32004, .elem = 1 };
	size_t at = 12;

	put_be64(m.chunk, len);
	put_be32(m.chunk + 8, (uint32_t)block);
	for (size_t done = 0; done < len; done += block) {
		const size_t b = len - done < block ? len - done : block;
		int c = LZ4_compress_default((const char *)data + done,
					     (char *)m.chunk + at + 4, (int)b,
					     LZ4_compressBound((int)b));

		if (c <= 0 || (size_t)c >= b) {
			c = (int)b;
			memcpy(m.chunk + at + 4, data + done, b);
		}
		put_be32(m.chunk + at, (uint32_t)c);
		at += 4 + (size_t)c;
	}
	m.len = at;
	return m;
}

/* One block compressed (how: 2 LZ4, 3 zstd) into out: its size. */
static size_t squeeze(unsigned how, const unsigned char *in, size_t len,
		      unsigned char *out, size_t room)
{
#ifdef HAVE_ZSTD
	if (how == 3)
		return ZSTD_compress(out, room, in, len, 3);
#endif
	ck_assert(how == 2);
	return (size_t)LZ4_compress_default((const char *)in, (char *)out,
					    (int)len, (int)room);
}

/* Bitshuffle's HDF5 filter with LZ4 (how 2) or zstd (3) of n elements of
 * elem bytes. */
static made make_bs(unsigned how, const unsigned char *data, size_t n,
		    size_t elem, size_t block)
{
	made m = { .chunk = malloc(12 + n * elem * 2 + 64 * (n / 8 + 1)),
		   .id = 32008, .elem = (uint32_t)elem,
		   .cd = { 0, 4, (unsigned)elem, (unsigned)block, how },
		   .ncd = 5 };
	size_t at = 12, done = 0, b;

	put_be64(m.chunk, n * elem);
	/* 0: the default block, which the header then says as 0 too. */
	put_be32(m.chunk + 8, (uint32_t)(block * elem));
	if (block == 0)
		block = parload__bitshuffle_default_block(elem);
	unsigned char *t = malloc(block * elem);
	while ((b = ((n - done) & ~(size_t)7) < block ?
			    (n - done) & ~(size_t)7 : block) > 0) {
		size_t c;

		ref_bitshuffle(data + done * elem, t, b, elem);
		c = squeeze(how, t, b * elem, m.chunk + at + 4,
			    b * elem * 2 + 64);
		put_be32(m.chunk + at, (uint32_t)c);
		at += 4 + c;
		done += b;
	}
	memcpy(m.chunk + at, data + done * elem, (n - done) * elem);
	m.len = at + (n - done) * elem;
	free(t);
	return m;
}

static made make_bslz4(const unsigned char *data, size_t n, size_t elem,
		       size_t block)
{
	return make_bs(2, data, n, elem, block);
}
#endif

static made make_fletcher32(const unsigned char *data, size_t len)
{
	made m = { .chunk = malloc(len + 4), .len = len + 4, .id = 3,
		   .elem = 1 };
	const uint32_t sum = parload__fletcher32(data, len);

	memcpy(m.chunk, data, len);
	for (int i = 0; i < 4; i++)
		m.chunk[len + i] = (unsigned char)(sum >> (8 * i));
	return m;
}

/* The row and filter of m. */
static const parload__codec_row *made_row(const made *m, parload__filter *f)
{
	if (m->id)
		return row_params(m->id, m->cd, m->ncd, m->elem, f);
	return row_named(parload__codec_get(m->codec)->name, m->cd, m->ncd,
			 m->elem, f);
}

/* What the row's own encode makes of data (params p). */
static made make_encoded(parload__codec c, uint32_t elem, unsigned p0,
			 const unsigned char *data, size_t len)
{
	made m = { .codec = c, .elem = elem, .cd = { p0 }, .ncd = 1 };
	parload__filter f;
	const parload__codec_row *row = made_row(&m, &f);
	void *state = row->open ? row->open() : NULL;

	m.chunk = malloc(row->bound(&f, len));
	ck_assert(!row->encode(state, &f, data, len, m.chunk,
			       row->bound(&f, len), &m.len));
	if (row->close)
		row->close(state);
	return m;
}

/* What each row this build has makes of len bytes of data. */
static int make_all(const unsigned char *data, size_t len, made *m)
{
	int n = 0;

	m[n++] = make_fletcher32(data, len);
	m[n++] = make_encoded(PARLOAD__CODEC_CRC32C, 1, 0, data, len);
	if (parload__codec_get(PARLOAD__CODEC_BZIP2)->encode)
		m[n++] = make_encoded(PARLOAD__CODEC_BZIP2, 1, 9, data, len);
	if (parload__codec_get(PARLOAD__CODEC_GZIP)->encode)
		m[n++] = make_encoded(PARLOAD__CODEC_GZIP, 1, 6, data, len);
#ifdef HAVE_LZ4
	m[n++] = make_encoded(PARLOAD__CODEC_LZ4, 1, PARLOAD__LZ4_NUMCODECS,
			      data, len);
	m[n++] = make_lz4(data, len, 300);
	m[n++] = make_bslz4(data, len / 2, 2, 64);
	m[n++] = make_bslz4(data, len / 4 - 1, 4, 0);
#endif
#if defined(HAVE_LZ4) && defined(HAVE_ZSTD)
	m[n++] = make_bs(3, data, len / 8 - 3, 8, 16);
#endif
#ifdef HAVE_ZSTD
	m[n] = (made){ .chunk = malloc(ZSTD_compressBound(len)), .id = 32015,
		       .elem = 1 };
	m[n].len = ZSTD_compress(m[n].chunk, ZSTD_compressBound(len), data,
				 len, 3);
	n++;
#endif
#ifdef HAVE_BLOSC
	m[n] = (made){ .chunk = malloc(len + BLOSC_MAX_OVERHEAD),
		       .id = 32001, .elem = 2 };
	m[n].len = (size_t)blosc_compress_ctx(5, 1, 2, len, data, m[n].chunk,
					      len + BLOSC_MAX_OVERHEAD, "lz4",
					      256, 1);
	n++;
#endif
	return n;
}

static size_t made_bytes(const made *m, size_t len)
{
	/* make_bslz4 takes whole elements of the data. */
	if (m->id == 32008 && m->cd[2] == 8)
		return (len / 8 - 3) * 8;
	if (m->id == 32008)
		return m->cd[2] == 2 ? len / 2 * 2 : (len / 4 - 1) * 4;
	return len;
}

/* Every chunk whole, then cut at every length: a cut one never decodes
 * to the whole chunk's bytes, and never writes past its room. */
START_TEST(test_truncated)
{
	const size_t len = 2000;
	unsigned char *data = random_bytes(len, 3);
	made m[12];
	const int n = make_all(data, len, m);

	for (int i = 0; i < n; i++) {
		const size_t want = made_bytes(&m[i], len);
		parload__filter f;
		const parload__codec_row *row = made_row(&m[i], &f);
		decoded d = decode_guarded(row, &f, m[i].chunk, m[i].len,
					   want);

		ck_assert_msg(!d.why && d.got == want &&
				      memcmp(d.out, data, want) == 0,
			      "row %s: %s", row->name, d.why);
		free(d.out);
		for (size_t cut = 0; cut < m[i].len; cut++) {
			d = decode_guarded(row, &f, m[i].chunk, cut, want);
			ck_assert_msg(d.why || d.got < want,
				      "row %s: %zu of %zu bytes decode whole",
				      row->name, cut, m[i].len);
			free(d.out);
		}
		free(m[i].chunk);
	}
	free(data);
}
END_TEST

/* Decode expecting a phrase (the guard checked by decode_guarded). */
static void assert_refused(const made *m, size_t cap, const char *what)
{
	parload__filter f;
	const parload__codec_row *row = made_row(m, &f);
	decoded d = decode_guarded(row, &f, m->chunk, m->len, cap);

	ck_assert_msg(d.why, "row %s takes %s", row->name, what);
	free(d.out);
}

START_TEST(test_fletcher32_mismatch)
{
	unsigned char *data = random_bytes(1001, 5);
	made m = make_fletcher32(data, 1001);
	parload__filter f;
	const parload__codec_row *row = row_params(3, NULL, 0, 2, &f);
	decoded d;

	for (size_t i = 0; i < m.len; i += 37) {
		m.chunk[i] ^= 0x10;
		d = decode_guarded(row, &f, m.chunk, m.len, 1001);
		ck_assert_str_eq(d.why, "fails its Fletcher32 checksum");
		free(d.out);
		m.chunk[i] ^= 0x10;
	}
	/* libhdf5 also takes the sum with each 16-bit half's bytes swapped
	 * (as versions before 1.6.3 wrote it). */
	unsigned char t = m.chunk[1001];
	m.chunk[1001] = m.chunk[1002];
	m.chunk[1002] = t;
	t = m.chunk[1003];
	m.chunk[1003] = m.chunk[1004];
	m.chunk[1004] = t;
	d = decode_guarded(row, &f, m.chunk, m.len, 1001);
	ck_assert_msg(!d.why && d.got == 1001 && !memcmp(d.out, data, 1001),
		      "%s", d.why);
	free(d.out);
	free(m.chunk);
	free(data);
}
END_TEST

/* CRC-32C's check value ("123456789": 0xE3069283), then every flipped
 * bit of a chunk (in the bytes or the sum) refused. */
START_TEST(test_crc32c_mismatch)
{
	made m = { .chunk = malloc(1005), .len = 13,
		   .codec = PARLOAD__CODEC_CRC32C, .elem = 1 };
	parload__filter f;
	const parload__codec_row *row = made_row(&m, &f);
	unsigned char *data = random_bytes(1001, 23);
	decoded d;

	memcpy(m.chunk, "123456789\x83\x92\x06\xe3", 13);
	d = decode_guarded(row, &f, m.chunk, m.len, 9);
	ck_assert_msg(!d.why && d.got == 9 && !memcmp(d.out, "123456789", 9),
		      "%s", d.why);
	free(d.out);
	free(m.chunk);
	m = make_encoded(PARLOAD__CODEC_CRC32C, 1, 0, data, 1001);
	ck_assert_uint_eq(m.len, 1005);
	for (size_t i = 0; i < m.len * 8; i += 13) {
		m.chunk[i / 8] ^= (unsigned char)(1u << (i % 8));
		d = decode_guarded(row, &f, m.chunk, m.len, 1001);
		ck_assert_str_eq(d.why, "fails its CRC-32C checksum");
		free(d.out);
		m.chunk[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
	assert_refused(&m, 1000, "1001 bytes in 1000");
	free(m.chunk);
	free(data);
}
END_TEST

START_TEST(test_bitshuffle_block_not_8)
{
	const unsigned cd[] = { 0, 4, 2, 12, 2 };
	parload__filter f = { 0 };
	const parload__codec_row *row = row_of_hdf5(32008);

	ck_assert_ptr_nonnull(row);
	ck_assert_str_eq(row->hdf5_params(cd, 5, 2, &f),
			 "has a bitshuffle block size that is not a multiple "
			 "of 8");
#ifdef HAVE_LZ4
	unsigned char *data = random_bytes(2000, 7);
	made m = make_bslz4(data, 1000, 2, 64);

	put_be32(m.chunk + 8, 12 * 2); /* the header's block: 12 elements */
	assert_refused(&m, 2000, "a block of 12 elements");
	put_be32(m.chunk + 8, 4 * 2);
	assert_refused(&m, 2000, "a block of 4 elements");
	free(m.chunk);
	free(data);
#endif
}
END_TEST

#ifdef HAVE_LZ4
/* The header's decoded size more or less than the blocks hold, and more
 * than the chunk. */
START_TEST(test_header_sizes)
{
	unsigned char *data = random_bytes(4000, 9);
	made l = make_lz4(data, 4000, 1000), b = make_bslz4(data, 2000, 2, 0);
	const uint64_t sizes[] = { 8000, 4001, 3999, 3000, 0 };

	for (int i = 0; i < TU_COUNT(sizes); i++) {
		put_be64(l.chunk, sizes[i]);
		assert_refused(&l, 4000, "a header that disagrees");
		put_be64(b.chunk, sizes[i]);
		assert_refused(&b, 4000, "a header that disagrees");
	}
	/* A stored size one more than the chunk: a byte after it. */
	put_be64(l.chunk, 4000);
	l.chunk[l.len++] = 0;
	assert_refused(&l, 4000, "a byte after its last block");
	free(l.chunk);
	free(b.chunk);
	free(data);
}
END_TEST

/* numcodecs' LZ4 whose size says more or fewer bytes than its block
 * holds, or more than the chunk. */
START_TEST(test_lz4_numcodecs_sizes)
{
	unsigned char *data = random_bytes(4000, 21);
	made m = make_encoded(PARLOAD__CODEC_LZ4, 1, PARLOAD__LZ4_NUMCODECS,
			      data, 4000);
	const uint32_t sizes[] = { 8000, 4001, 3999, 1, 0, 0xffffffffu };

	for (int i = 0; i < TU_COUNT(sizes); i++) {
		for (int b = 0; b < 4; b++)
			m.chunk[b] = (unsigned char)(sizes[i] >> (8 * b));
		assert_refused(&m, 4000, "a size that disagrees");
	}
	/* Its own size, into less room than it. */
	for (int b = 0; b < 4; b++)
		m.chunk[b] = (unsigned char)(4000 >> (8 * b));
	assert_refused(&m, 3999, "4000 bytes in 3999");
	/* The HDF5 filter's framing is not written. */
	made h = { .codec = PARLOAD__CODEC_LZ4, .elem = 1, .ncd = 1 };
	parload__filter f;
	const parload__codec_row *row = made_row(&h, &f);
	decoded d = run_guarded(row, row->encode, &f, data, 4000,
				row->bound(&f, 4000));

	ck_assert_ptr_nonnull(d.why);
	free(d.out);
	free(m.chunk);
	free(data);
}
END_TEST

/* A block whose LZ4 stream decodes to more than its block: never past
 * its block, whatever the room after it. */
START_TEST(test_lz4_block_overruns)
{
	unsigned char zeros[256] = { 0 };
	made m = { .chunk = malloc(512), .id = 32004, .elem = 1 };
	int c;

	put_be64(m.chunk, 16);
	put_be32(m.chunk + 8, 16);
	c = LZ4_compress_default((const char *)zeros, (char *)m.chunk + 16,
				 256, 496);
	ck_assert(c > 0 && c != 16);
	put_be32(m.chunk + 12, (uint32_t)c);
	m.len = 16 + (size_t)c;
	assert_refused(&m, 16, "a block decoding to 256 bytes in 16");
	free(m.chunk);
}
END_TEST
#endif

#ifdef HAVE_BLOSC
/* A Blosc header that lies about its sizes. */
START_TEST(test_blosc_header_lies)
{
	unsigned char *data = random_bytes(4096, 11);
	made m = { .chunk = malloc(4096 + BLOSC_MAX_OVERHEAD), .id = 32001,
		   .elem = 2 };
	const struct { int at; int32_t by; } lies[] = {
		{ 4, 4096 }, { 4, 1 }, { 4, -1 }, { 4, -4000 },
		{ 12, 1 }, { 12, -1 }, { 8, 1 << 20 },
	};

	m.len = (size_t)blosc_compress_ctx(5, 1, 2, 4096, data, m.chunk,
					   4096 + BLOSC_MAX_OVERHEAD, "lz4",
					   1024, 1);
	for (int i = 0; i < TU_COUNT(lies); i++) {
		uint32_t v;

		memcpy(&v, m.chunk + lies[i].at, 4);
		v = v + (uint32_t)lies[i].by;
		memcpy(m.chunk + lies[i].at, &v, 4);
		assert_refused(&m, 4096, "a Blosc header that lies");
		v = v - (uint32_t)lies[i].by;
		memcpy(m.chunk + lies[i].at, &v, 4);
	}
	free(m.chunk);
	free(data);
}
END_TEST
#endif

#ifdef HAVE_ZSTD
/* A frame whose content size is more than its chunk, or with a byte
 * after it. */
START_TEST(test_zstd_sizes)
{
	unsigned char *data = random_bytes(1000, 13);
	made m = { .chunk = malloc(ZSTD_compressBound(1000) + 1),
		   .id = 32015, .elem = 1 };

	m.len = ZSTD_compress(m.chunk, ZSTD_compressBound(1000), data, 1000,
			      3);
	assert_refused(&m, 999, "a frame of 1000 bytes in 999");
	m.chunk[m.len++] = 0;
	assert_refused(&m, 1000, "a byte after its frame");
	free(m.chunk);
	free(data);
}
END_TEST
#endif

/* ---- encode: each encoder against its row's decode (part 0) and
 * numcodecs' (part 2) ---- */

static const struct enc_case {
	parload__codec codec;
	uint32_t elem;
	unsigned param[3];
} enc_cases[] = {
	{ PARLOAD__CODEC_NONE, 1, { 0 } },
	{ PARLOAD__CODEC_ZSTD, 1, { 0 } },
	{ PARLOAD__CODEC_ZSTD, 2, { 1 } },
	{ PARLOAD__CODEC_ZSTD, 4, { 19 } },
	{ PARLOAD__CODEC_DEFLATE, 1, { 0 } },
	{ PARLOAD__CODEC_DEFLATE, 2, { 1 } },
	{ PARLOAD__CODEC_DEFLATE, 2, { 6 } },
	{ PARLOAD__CODEC_DEFLATE, 4, { 9 } },
	{ PARLOAD__CODEC_DEFLATE, 4, { 12 } },
	{ PARLOAD__CODEC_GZIP, 1, { 1 } },
	{ PARLOAD__CODEC_GZIP, 2, { 5 } },
	{ PARLOAD__CODEC_GZIP, 8, { 9 } },
	{ PARLOAD__CODEC_CRC32C, 1, { 0 } },
	{ PARLOAD__CODEC_BZIP2, 1, { 1 } },
	{ PARLOAD__CODEC_BZIP2, 2, { 9 } },
	/* LZ4: numcodecs' framing, acceleration. */
	{ PARLOAD__CODEC_LZ4, 1, { PARLOAD__LZ4_NUMCODECS, 0 } },
	{ PARLOAD__CODEC_LZ4, 4, { PARLOAD__LZ4_NUMCODECS, 10 } },
	/* Blosc: compressor code, level, shuffle. */
	{ PARLOAD__CODEC_BLOSC, 1, { 0, 5, 1 } },
	{ PARLOAD__CODEC_BLOSC, 2, { 1, 5, 1 } },
	{ PARLOAD__CODEC_BLOSC, 2, { 1, 9, 2 } },
	{ PARLOAD__CODEC_BLOSC, 4, { 2, 9, 0 } },
	{ PARLOAD__CODEC_BLOSC, 4, { 4, 1, 1 } },
	{ PARLOAD__CODEC_BLOSC, 8, { 5, 3, 2 } },
	{ PARLOAD__CODEC_BLOSC, 2, { 5, 0, 0 } },
};
static const size_t enc_lens[] = { 0, 1, 7, 1000, 65541 };

static void enc_filter(const struct enc_case *e, parload__filter *f)
{
	memset(f, 0, sizeof(*f));
	f->codec = e->codec;
	f->elem = e->elem;
	memcpy(f->param, e->param, sizeof(e->param));
}

/* Detector-like counts (kind 0) or noise (1). */
static unsigned char *enc_data(size_t len, int kind, unsigned seed)
{
	unsigned char *p = random_bytes(len, seed);

	for (size_t i = 0; kind && i < len; i++)
		p[i] = (unsigned char)rand();
	return p;
}

/* e's encoding of len bytes of data into its bound (the guard checked):
 * *got bytes at the result's out. */
static decoded encode_one(const struct enc_case *e,
			  const unsigned char *data, size_t len)
{
	const parload__codec_row *row = parload__codec_get(e->codec);
	parload__filter f;
	size_t bound;
	decoded d;

	enc_filter(e, &f);
	bound = row->bound(&f, len);
	ck_assert_msg(bound >= len, "row %s: bound %zu of %zu bytes",
		      row->name, bound, len);
	d = run_guarded(row, row->encode, &f, data, len, bound);
	ck_assert_msg(!d.why && d.got <= bound, "row %s (%u %u %u) of %zu "
		      "bytes: %s (%zu of %zu)", row->name, e->param[0],
		      e->param[1], e->param[2], len, d.why, d.got, bound);
	return d;
}

/* Every encoder this build has: its bytes decode to the data through its
 * row (into exactly their size; one byte less fails), and an encode into
 * one byte less than it made fails without writing past that room.  A row
 * this build lacks has no encode. */
START_TEST(test_encode_roundtrip)
{
	const struct enc_case *e = &enc_cases[_i];
	const parload__codec_row *row = parload__codec_get(e->codec);
	parload__filter f;

	enc_filter(e, &f);
	if (!row->decode && e->codec != PARLOAD__CODEC_NONE) {
		/* A row this build lacks: asserted to have no encode either,
		 * and said in the log (the encoders are not run). */
		ck_assert_msg(!row->encode && row->needs, "%s", row->name);
		printf("encode %s: not in this build (needs %s)\n", row->name,
		       row->needs);
		return;
	}
	ck_assert_msg(row->encode && row->bound, "row %s has no encode",
		      row->name);
	for (int l = 0; l < TU_COUNT(enc_lens); l++)
		for (int kind = 0; kind < 2; kind++) {
			const size_t len = enc_lens[l];
			unsigned char *data = enc_data(len, kind, 17 + l);
			decoded c = encode_one(e, data, len), d;

			if (row->decode) {
				d = decode_guarded(row, &f, c.out, c.got, len);
				ck_assert_msg(!d.why && d.got == len &&
					      !memcmp(d.out, data, len),
					      "row %s of %zu bytes: %s",
					      row->name, len, d.why);
				free(d.out);
			} else {
				ck_assert(c.got == len &&
					  !memcmp(c.out, data, len));
			}
			if (c.got > 0) {
				d = run_guarded(row, row->encode, &f, data,
						len, c.got - 1);
				ck_assert_msg(d.why, "row %s encodes %zu "
					      "bytes in %zu", row->name,
					      c.got, c.got - 1);
				free(d.out);
			}
			free(c.out);
			free(data);
		}
}
END_TEST

/* One stream of 3000 bytes (m, room for two): refused into 2999 bytes,
 * with a byte after it, with a second stream after it. */
static void assert_one_stream(made *m)
{
	const size_t len = m->len;

	assert_refused(m, 2999, "3000 bytes in 2999");
	m->chunk[m->len++] = 0;
	assert_refused(m, 3000, "a byte after its stream");
	memcpy(m->chunk + len, m->chunk, len);
	m->len = 2 * len;
	assert_refused(m, 6000, "a second stream");
	m->len = len;
}

/* A gzip member whose CRC-32 or size (ISIZE) is wrong, with a byte or a
 * second member after it, or decoding to more than its chunk. */
START_TEST(test_gzip_members)
{
	unsigned char *data = random_bytes(3000, 19);
	made m = make_encoded(PARLOAD__CODEC_GZIP, 1, 6, data, 3000);

	m.chunk = realloc(m.chunk, 2 * m.len);
	for (size_t at = m.len - 8; at < m.len; at++) {
		m.chunk[at] ^= 1;
		assert_refused(&m, 3000, "a wrong CRC-32 or ISIZE");
		m.chunk[at] ^= 1;
	}
	assert_one_stream(&m);
	free(m.chunk);
	free(data);
}
END_TEST

/* A bzip2 stream with a byte or a second stream after it, or decoding
 * to more than its chunk; a damaged block (its CRC). */
START_TEST(test_bzip2_streams)
{
	unsigned char *data = random_bytes(3000, 29);
	made m = make_encoded(PARLOAD__CODEC_BZIP2, 1, 9, data, 3000);

	m.chunk = realloc(m.chunk, 2 * m.len);
	m.chunk[m.len / 2] ^= 0x40;
	assert_refused(&m, 3000, "a damaged block");
	m.chunk[m.len / 2] ^= 0x40;
	assert_one_stream(&m);
	free(m.chunk);
	free(data);
}
END_TEST

/* Each filter id has its row; a row this build lacks says what it needs
 * and has no decode (the HDF5 reader then leaves such data to libhdf5,
 * naming what a build needs); a row with a decode reads its client
 * data. */
START_TEST(test_rows)
{
	static const struct { uint32_t id; const char *name; } ids[] = {
		{ 1, "deflate" }, { 2, "shuffle" }, { 3, "fletcher32" },
		{ 32000, "lzf" },
		{ 32001, "blosc" }, { 32004, "lz4" }, { 32008, "bitshuffle" },
		{ 32015, "zstd" }, { 307, "bzip2" },
	};

	for (int i = 0; i < TU_COUNT(ids); i++) {
		const parload__codec_row *row = row_of_hdf5(ids[i].id);

		ck_assert_ptr_nonnull(row);
		ck_assert_str_eq(row->name, ids[i].name);
		ck_assert_uint_eq(row->hdf5_id, ids[i].id);
		ck_assert_msg(!row->decode == !!row->needs, "%s", row->name);
		ck_assert_msg(!row->decode || row->hdf5_params, "%s",
			      row->name);
	}
	ck_assert_ptr_null(row_of_hdf5(32017)); /* SZ */
	ck_assert_ptr_null(row_of_hdf5(0));
}
END_TEST

static Suite *bad_suite(void)
{
	Suite *s = suite_create("codecs");
	TCase *tc = tu_tcase(s, "transpose", 60);

	tcase_add_loop_test(tc, test_transposes_agree, 0, TU_COUNT(t_elems));
	tc = tu_tcase(s, "bad", 60);
	tcase_add_test(tc, test_rows);
	tcase_add_loop_test(tc, test_encode_roundtrip, 0, TU_COUNT(enc_cases));
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_fletcher32_mismatch);
	tcase_add_test(tc, test_crc32c_mismatch);
	if (parload__codec_get(PARLOAD__CODEC_GZIP)->decode)
		tcase_add_test(tc, test_gzip_members);
	if (parload__codec_get(PARLOAD__CODEC_BZIP2)->decode)
		tcase_add_test(tc, test_bzip2_streams);
	tcase_add_test(tc, test_bitshuffle_block_not_8);
#ifdef HAVE_LZ4
	tcase_add_test(tc, test_header_sizes);
	tcase_add_test(tc, test_lz4_block_overruns);
	tcase_add_test(tc, test_lz4_numcodecs_sizes);
#endif
#ifdef HAVE_BLOSC
	tcase_add_test(tc, test_blosc_header_lies);
#endif
#ifdef HAVE_ZSTD
	tcase_add_test(tc, test_zstd_sizes);
#endif
	return s;
}

/* ---- the parts ---- */

static char why_buf[8192];

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static pid_t refdir_owner;

/* At the end of the program, not of each test's child (Check forks). */
static void remove_refdir(void)
{
	if (refdir[0] && getpid() == refdir_owner)
		nftw(refdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* What this build lacks of the rows a part's chunks need, or NULL. */
static const char *lacks(const parload__codec *need, int n)
{
	for (int i = 0; i < n; i++) {
		const parload__codec_row *row = parload__codec_get(need[i]);

		if (!row->decode) {
			snprintf(why_buf, sizeof(why_buf), "this libparload "
				 "has no %s row (it needs %s)", row->name,
				 row->needs);
			return why_buf;
		}
	}
	return NULL;
}

/* Outside a test (no assertions there): say what failed, exit 99. */
static void setup_failed(const char *what, const char *detail)
{
	fprintf(stderr, "check_codecs: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	remove_refdir();
	exit(99);
}

/* The Python and source tree codec_refs.py ran with. */
static const char *ref_python, *ref_src;

/* What this build lacks of the rows part names ("bzip2,crc32c", "-":
 * none), for codec_refs.py, which then writes no chunks of theirs. */
static const char *lacking(void)
{
	static char buf[512];
	size_t at = 0;

	for (int c = 0; c < PARLOAD__CODEC_COUNT; c++) {
		const parload__codec_row *row =
			parload__codec_get((parload__codec)c);

		if (row->needs && at < sizeof(buf))
			at += (size_t)snprintf(buf + at, sizeof(buf) - at,
					       "%s%s", at ? "," : "",
					       row->name);
	}
	return at ? buf : "-";
}

/* The part's chunks written by codec_refs.py, or why not. */
static const char *write_refs(const char *part)
{
	const char *py = getenv("PARLOAD_PYTHON"), *src, *tmp;
	char cmd[8192];
	FILE *p;
	int rc;
	size_t len;

	if (!py || !*py)
		py = getenv("PYTHON3");
	if (!py || !*py)
		return "no python3 configured (PARLOAD_PYTHON, PYTHON3)";
	src = getenv("PARLOAD_SRCDIR");
	tmp = getenv("TMPDIR");
	snprintf(refdir, sizeof(refdir), "%s/check_codecs.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(refdir))
		setup_failed("mkdtemp", refdir);
	refdir_owner = getpid();
	atexit(remove_refdir);
	ref_python = py;
	ref_src = src && *src ? src : ".";
	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/codec_refs.py' %s '%s' %s",
		 py, ref_src, part, refdir, lacking());
	if (strchr(py, '\'') || strchr(refdir, '\'') ||
	    (src && strchr(src, '\'')))
		return "a quote in the python's, the source's or TMPDIR's path";
	if (!(p = popen(cmd, "r")))
		setup_failed("cannot run", cmd);
	len = fread(why_buf, 1, sizeof(why_buf) - 1, p);
	why_buf[len] = 0;
	rc = pclose(p);
	fputs(why_buf, stdout); /* what it could not test, if anything */
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
		return why_buf;
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
		setup_failed(cmd, why_buf);
	if (read_cases() != 0 || ncases == 0)
		setup_failed(cmd, "wrote no cases");
	return NULL;
}

/* Every encoder this build has, over data of several sizes: its bytes
 * written for codec_refs.py, which decodes them with numcodecs (and
 * CRC-32C written from its definition) and compares. */
START_TEST(test_encoded_numcodecs)
{
	char path[4300], cmd[9000], out[8192];
	FILE *list, *p;
	size_t n;
	int k = 0, rc;

	snprintf(path, sizeof(path), "%s/encoded.txt", refdir);
	ck_assert((list = fopen(path, "w")) != NULL);
	for (int i = 0; i < TU_COUNT(enc_cases); i++) {
		const struct enc_case *e = &enc_cases[i];
		const parload__codec_row *row = parload__codec_get(e->codec);

		for (int l = 2; row->encode && l < TU_COUNT(enc_lens); l++)
			for (int kind = 0; kind < 2; kind++) {
				const size_t len = enc_lens[l];
				unsigned char *data =
					enc_data(len, kind, 31 + l);
				decoded c = encode_one(e, data, len);

				snprintf(path, sizeof(path), "%s/e%d.raw",
					 refdir, k);
				tu_write_file(path, data, len);
				snprintf(path, sizeof(path), "%s/e%d.enc",
					 refdir, k);
				tu_write_file(path, c.out, c.got);
				fprintf(list, "%s %u %u %u %u e%d.raw e%d.enc\n",
					row->name, e->elem, e->param[0],
					e->param[1], e->param[2], k, k);
				k++;
				free(c.out);
				free(data);
			}
	}
	ck_assert(fclose(list) == 0 && k > 0);
	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/codec_refs.py' decode "
		 "'%s' 2>&1", ref_python, ref_src, refdir);
	ck_assert((p = popen(cmd, "r")) != NULL);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	rc = pclose(p);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
		      "numcodecs decodes other bytes:\n%s", out);
}
END_TEST

static Suite *numcodecs_suite(void)
{
	Suite *s = reference_suite();
	TCase *tc = tu_tcase(s, "encoded", 120);

	tcase_add_test(tc, test_encoded_numcodecs);
	return s;
}

static const char *why_not_hdf5(void)
{
	static const parload__codec need[] = {
		PARLOAD__CODEC_DEFLATE, PARLOAD__CODEC_LZF,
		PARLOAD__CODEC_BLOSC, PARLOAD__CODEC_LZ4, PARLOAD__CODEC_ZSTD,
	};
	const char *why = lacks(need, TU_COUNT(need));

	return why ? why : write_refs("hdf5");
}

static const char *why_not_numcodecs(void)
{
	static const parload__codec need[] = { PARLOAD__CODEC_BLOSC,
					       PARLOAD__CODEC_ZSTD };
	const char *why = lacks(need, TU_COUNT(need));

	return why ? why : write_refs("numcodecs");
}

static const char *why_not_bitshuffle(void)
{
	static const parload__codec need[] = { PARLOAD__CODEC_LZ4 };
	const char *why = lacks(need, TU_COUNT(need));

	return why ? why : write_refs("bitshuffle");
}

int main(void)
{
	static const tu_part parts[] = {
		{ "check_codecs", NULL, bad_suite },
		{ "check_codecs_hdf5", why_not_hdf5, reference_suite },
		{ "check_codecs_numcodecs", why_not_numcodecs,
		  numcodecs_suite },
		{ "check_codecs_bitshuffle", why_not_bitshuffle,
		  reference_suite },
	};

	return tu_run_part(parts, TU_COUNT(parts), TU_PART);
}
