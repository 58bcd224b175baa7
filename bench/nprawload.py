#!/usr/bin/env python3
"""nprawload.py - raw layouts the way a NumPy user loads them.

Usage: nprawload.py mono12p SEED VIEWS HEIGHT WIDTH FILE
       nprawload.py frames SEED VIEWS HEIGHT WIDTH FILE...

mono12p: np.fromfile of the packed file (GenICam Mono12p, no headers),
then the usual vectorised unpacking on uint16 arrays: of each three
bytes b0 b1 b2, p0 = b0 | (b1 & 0xF) << 8 and p1 = b1 >> 4 | b2 << 4,
into a (VIEWS, HEIGHT, WIDTH) uint16 array.
frames: one view per FILE (little-endian u16 pixels, no headers), each
read by np.fromfile in a loop into a preallocated (VIEWS, HEIGHT, WIDTH)
array; the list of files is made before the clock, as the command gets
its operands.

Times, in this fresh process and after numpy is imported, from the first
open until the array is complete; then checks every pixel against the
stream that `parload gen --seed SEED` writes (npload.py's transcription
of the generator; for mono12p its pixels' low 12 bits) and prints one
JSON object: {"seconds", "views", "out_bytes", "verified"}.  Exit status
1 when the data does not match.
"""
import json
import sys
import time

import numpy as np

from npload import blocks, payloads


def mono12p(path, views, height, width):
    data = np.fromfile(path, dtype=np.uint8)
    b = data.reshape(-1, 3).astype(np.uint16)
    out = np.empty((b.shape[0], 2), np.uint16)
    out[:, 0] = b[:, 0] | ((b[:, 1] & 0xF) << 8)
    out[:, 1] = (b[:, 1] >> 4) | (b[:, 2] << 4)
    return out.reshape(views, height, width)


def frames(paths, views, height, width):
    out = np.empty((views, height, width), "<u2")
    for i, path in enumerate(paths):
        out[i] = np.fromfile(path, dtype="<u2").reshape(height, width)
    return out


def verify(pixels, seed, mask):
    """Whether pixels (views, rows, cols of u16) are the generator's
    (masked)."""
    n = pixels.shape[0]
    payload = pixels[0].nbytes if n else 0
    for first, last in blocks(n, payload):
        want = payloads(seed, np.arange(first, last, dtype=np.uint64),
                        payload).view("<u2") & mask
        if not np.array_equal(pixels[first:last].reshape(last - first, -1),
                              want):
            return False
    return True


def main():
    if len(sys.argv) < 7 or sys.argv[1] not in ("mono12p", "frames"):
        raise SystemExit(__doc__.split("\n\n")[1])
    kind, seed = sys.argv[1], int(sys.argv[2])
    views, height, width = (int(x) for x in sys.argv[3:6])
    paths = sys.argv[6:]
    t0 = time.perf_counter()
    if kind == "mono12p":
        pixels = mono12p(paths[0], views, height, width)
    else:
        pixels = frames(paths, views, height, width)
    t1 = time.perf_counter()
    ok = pixels.shape == (views, height, width) and \
        verify(pixels, seed, 0x0FFF if kind == "mono12p" else 0xFFFF)
    print(json.dumps({"seconds": t1 - t0, "views": views,
                      "out_bytes": pixels.nbytes, "verified": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
