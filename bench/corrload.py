#!/usr/bin/env python3
"""corrload.py - corrected sinograms from Python: parload's and NumPy's.

Usage: corrload.py corrected SCAN DARKS FLATS SEED THREADS [A:B]
       corrload.py numpy SCAN DARKS FLATS SEED THREADS [A:B]
       corrload.py raw FILE SEED THREADS [A:B]
       corrload.py check NPY SCAN DARKS FLATS [A:B]
       corrload.py refs darks|flats FILE

corrected: times, in this fresh process after numpy and parload are
imported, parload.load(SCAN, rows=(A, B), layout="sinograms",
darks=DARKS, flats=FLATS, minus_log=True, threads=THREADS) from the call
until it returns (the references' load and reduction included), then
checks the float32 sinograms against a float64 NumPy reference of the
formula, -ln(max((P - D) / max(F - D, 1e-6), 1e-6)) with D and F the
per-pixel means of the references (relative 1e-5, or 1e-6 absolute near
zero), and the view headers against the generator (seed SEED).  Without
A:B, every row.

numpy: the pipeline a user writes today, timed the same way: parload's
raw sinogram load of the band and of the references (views layout),
NumPy's mean of each set per pixel, then astype(float32), subtract the
dark mean, divide by the flat mean minus the dark mean (clamped at
1e-6), clamp at 1e-6, np.log and negate, in place where NumPy allows;
checked against the same reference.

raw: parload.load(FILE, rows=(A, B), layout="sinograms",
threads=THREADS), timed likewise, every header and pixel (compared as
bits: a float32 file of random bits holds NaNs) checked against the
stream that `parload gen --seed SEED` writes.

check: the float32 sinograms in NPY (`parload extract` of the command's
corrected load) against the reference.

refs: rewrites in place the pixels of a u16 file that `parload gen`
wrote, as a detector's references are: darks low (the generator's pixels
>> 10: 0 to 63), flats high (40000 + pixels >> 4), so that most
corrected values pass the logarithm unclamped.

Each prints one JSON object {"seconds", "views", "rows", "out_bytes",
"verified"} (check and refs: "verified" alone); exit status 1 when the
data does not match.
"""
import json
import sys
import time

import numpy as np

from npload import FILE_HEADER, PIXEL, VIEW_HEADER, blocks, headers_match, \
    payloads

EPS = 1e-6


def records(path):
    """(file header, memmap of the view records) of a parload stream."""
    fh = np.fromfile(path, dtype=FILE_HEADER, count=1)[0]
    n, w, h = int(fh["view_count"]), int(fh["width"]), int(fh["height"])
    pixel = np.dtype(PIXEL[int(fh["pixel_type"])])
    rec = np.dtype([("header", VIEW_HEADER), ("pixels", pixel, (h, w))])
    return fh, np.memmap(path, dtype=rec, mode="r", offset=64, shape=(n,))


def band(text, height):
    if not text:
        return 0, height
    a, b = text.split(":")
    return int(a), int(b)


def reference_mean(path, r0, r1):
    """The per-pixel mean of a reference file's rows r0:r1, float64."""
    return records(path)[1]["pixels"][:, r0:r1].astype(np.float64).mean(
        axis=0)


def matches(out, scan, darks, flats, r0, r1):
    """Whether out (rows, views, cols float32) is the corrected -log of
    SCAN's rows r0:r1 within 1e-5 relative (1e-6 absolute)."""
    d = reference_mean(darks, r0, r1)
    den = np.maximum(reference_mean(flats, r0, r1) - d, EPS)
    fh, recs = records(scan)
    n = int(fh["view_count"])
    if out.dtype != np.float32 or out.shape != (r1 - r0, n,
                                                int(fh["width"])):
        return False
    step = max(1, (32 << 20) // max(1, out[:, 0].nbytes * 2))
    for v0 in range(0, n, step):
        p = recs["pixels"][v0:v0 + step, r0:r1].astype(np.float64)
        want = -np.log(np.maximum((p - d) / den, EPS)).transpose(1, 0, 2)
        if not np.allclose(out[:, v0:v0 + step], want, rtol=1e-5,
                           atol=1e-6):
            return False
    return True


def headers_ok(ds, seed, path):
    fh = records(path)[0]
    n = int(fh["view_count"])
    return headers_match(ds.headers, np.arange(n, dtype=np.uint64), n, seed,
                         int(fh["flags"]))


def numpy_pipeline(parload, scan, darks, flats, threads, rows):
    """parload's raw loads, then NumPy's reduction and correction."""
    sino = parload.load(scan, rows=rows, layout="sinograms", threads=threads)
    d = parload.load(darks, rows=rows, threads=threads).pixels.mean(
        axis=0).astype(np.float32)
    f = parload.load(flats, rows=rows, threads=threads).pixels.mean(
        axis=0).astype(np.float32)
    den = np.maximum(f - d, np.float32(EPS))
    s = sino.pixels.astype(np.float32)
    s -= d[:, None, :]
    s /= den[:, None, :]
    np.maximum(s, np.float32(EPS), out=s)
    np.log(s, out=s)
    np.negative(s, out=s)
    return sino, s


def timed_correction(mode, argv):
    scan, darks, flats = argv[:3]
    seed, threads = int(argv[3]), int(argv[4])
    import parload
    r0, r1 = band(argv[5] if len(argv) > 5 else None,
                  int(records(scan)[0]["height"]))
    t0 = time.perf_counter()
    if mode == "corrected":
        ds = parload.load(scan, rows=(r0, r1), layout="sinograms",
                          darks=darks, flats=flats, minus_log=True,
                          threads=threads)
        out = ds.pixels
    else:
        ds, out = numpy_pipeline(parload, scan, darks, flats, threads,
                                 (r0, r1))
    t1 = time.perf_counter()
    ok = headers_ok(ds, seed, scan) and matches(out, scan, darks, flats,
                                                r0, r1)
    return report(t1 - t0, out, ok)


def report(seconds, out, ok):
    print(json.dumps({"seconds": seconds, "views": int(out.shape[1]),
                      "rows": int(out.shape[0]), "out_bytes": out.nbytes,
                      "verified": bool(ok)}))
    return 0 if ok else 1


def raw_matches(ds, seed, path, r0, r1):
    """Every header and pixel of sinograms ds of rows r0:r1, as bits."""
    fh = records(path)[0]
    n, w = int(fh["view_count"]), int(fh["width"])
    out = ds.pixels
    if not headers_ok(ds, seed, path) or out.shape != (r1 - r0, n, w):
        return False
    bits = np.dtype("<u%d" % out.itemsize)
    row = w * out.itemsize
    for first, last in blocks(n, (r1 - r0) * row):
        want = payloads(seed, np.arange(first, last, dtype=np.uint64),
                        int(fh["payload_size"]), r0 * row, r1 * row)
        want = want.view(bits).reshape(last - first, r1 - r0, w)
        if not np.array_equal(out[:, first:last].view(bits),
                              want.transpose(1, 0, 2)):
            return False
    return True


def timed_raw(argv):
    path, seed, threads = argv[0], int(argv[1]), int(argv[2])
    import parload
    r0, r1 = band(argv[3] if len(argv) > 3 else None,
                  int(records(path)[0]["height"]))
    t0 = time.perf_counter()
    ds = parload.load(path, rows=(r0, r1), layout="sinograms",
                      threads=threads)
    t1 = time.perf_counter()
    return report(t1 - t0, ds.pixels, raw_matches(ds, seed, path, r0, r1))


def check(argv):
    npy, scan, darks, flats = argv[:4]
    r0, r1 = band(argv[4] if len(argv) > 4 else None,
                  int(records(scan)[0]["height"]))
    ok = matches(np.load(npy, mmap_mode="r"), scan, darks, flats, r0, r1)
    print(json.dumps({"verified": bool(ok)}))
    return 0 if ok else 1


def rewrite_refs(kind, path):
    fh, recs = records(path)
    mm = np.memmap(path, dtype=recs.dtype, mode="r+", offset=64,
                   shape=recs.shape)
    px = mm["pixels"]
    px[...] = px >> 10 if kind == "darks" else 40000 + (px >> 4)
    mm.flush()
    print(json.dumps({"verified": True}))
    return 0


def main():
    mode, argv = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else \
        (None, [])
    counts = {"corrected": (5, 6), "numpy": (5, 6), "raw": (3, 4),
              "check": (4, 5)}
    if mode == "refs" and len(argv) == 2 and argv[0] in ("darks", "flats"):
        return rewrite_refs(*argv)
    if mode not in counts or len(argv) not in counts[mode]:
        raise SystemExit(__doc__.split("\n\n")[1])
    if mode == "raw":
        return timed_raw(argv)
    if mode == "check":
        return check(argv)
    return timed_correction(mode, argv)


if __name__ == "__main__":
    sys.exit(main())
