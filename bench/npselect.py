#!/usr/bin/env python3
"""npselect.py - a selection the way a NumPy user takes one.

Usage: npselect.py FILE SEED [--views A:B:S] [--rows A:B] [--cols A:B]
                   [--layout views|sinograms]

np.memmap of the file with a structured record dtype (one record = view
header + payload), Python slicing of the views, rows and columns, then a
copy of the selection into a contiguous array (np.ascontiguousarray; in
sinogram layout np.ascontiguousarray(a.transpose(1, 0, 2))) and of the
selected views' headers.  Times, in this fresh process and after numpy
is imported, what parload's selections time: from opening FILE until the
copy is complete.  Then checks every output header and pixel against the
stream that `parload gen --seed SEED` writes (npload.py's transcription
of the generator) and prints one JSON object: {"seconds", "bytes",
"views", "out_bytes", "verified"}.  Exit status 1 when the data does not
match.  Slices take Python's meaning.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from npload import FILE_HEADER, PIXEL, VIEW_HEADER, blocks, headers_match, \
    payloads


def parse_slice(text):
    parts = [int(x) if x else None for x in text.split(":")]
    return slice(*parts)


def select(path, views, rows, cols, sinograms):
    fh = np.fromfile(path, dtype=FILE_HEADER, count=1)[0]
    n, w, h = int(fh["view_count"]), int(fh["width"]), int(fh["height"])
    pixel = np.dtype(PIXEL[int(fh["pixel_type"])])
    record = np.dtype([("header", VIEW_HEADER), ("pixels", pixel, (h, w))])
    records = np.memmap(path, dtype=record, mode="r", offset=64, shape=(n,))
    chosen = records[views]
    headers = chosen["header"].copy()
    a = chosen["pixels"][:, rows, cols]
    out = np.ascontiguousarray(a.transpose(1, 0, 2) if sinograms else a)
    return fh, headers, out


def verify(fh, headers, out, seed, views, rows, cols, sinograms):
    n, w, h = int(fh["view_count"]), int(fh["width"]), int(fh["height"])
    payload = int(fh["payload_size"])
    pixel = np.dtype(PIXEL[int(fh["pixel_type"])])
    idx = np.arange(n, dtype=np.uint64)[views]
    if not headers_match(headers, idx, n, seed, int(fh["flags"])):
        return False
    # Only the bytes of the selected rows are generated.
    r0, r1, _ = rows.indices(h)
    row_bytes = w * pixel.itemsize
    for first, last in blocks(len(idx), (r1 - r0) * row_bytes):
        want = payloads(seed, idx[first:last], payload, r0 * row_bytes,
                        r1 * row_bytes).view(pixel)
        want = want.reshape(last - first, r1 - r0, w)[:, :, cols]
        got = out[:, first:last] if sinograms else out[first:last]
        if sinograms:
            want = want.transpose(1, 0, 2)
        if not np.array_equal(got, want):
            return False
    return True


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    ap.add_argument("file")
    ap.add_argument("seed", type=int)
    ap.add_argument("--views", type=parse_slice, default=slice(None))
    ap.add_argument("--rows", type=parse_slice, default=slice(None))
    ap.add_argument("--cols", type=parse_slice, default=slice(None))
    ap.add_argument("--layout", choices=("views", "sinograms"),
                    default="views")
    a = ap.parse_args()
    sinograms = a.layout == "sinograms"
    t0 = time.perf_counter()
    fh, headers, out = select(a.file, a.views, a.rows, a.cols, sinograms)
    t1 = time.perf_counter()
    ok = verify(fh, headers, out, a.seed, a.views, a.rows, a.cols,
                sinograms)
    print(json.dumps({"seconds": t1 - t0, "bytes": os.path.getsize(a.file),
                      "views": len(headers), "out_bytes": out.nbytes,
                      "verified": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
