#!/usr/bin/env python3
"""rawfiles.py - experiment 13's files in other layouts, and the check of
a load that --verify-seed cannot check.

Usage: rawfiles.py write KIND SRC OUT
       rawfiles.py check KIND NPY SEED VIEWS

write: derive from SRC, a stream in parload's own format as `parload gen`
writes it, the file OUT (a folder for frames) in layout KIND:
  be       SRC with every u16 payload pixel byte-swapped (file header and
           view headers as they are): read as u16be it holds the
           generator's pixels; the same size as SRC
  bare     the payloads alone, one after the other (no file header, no
           view headers)
  frames   the folder OUT holding each payload as a file of its own,
           frame_00000.raw, frame_00001.raw, ... (the bytes of bare)
  mono12p  the payloads' pixels cut to their low 12 bits and packed as
           GenICam Mono12p (two pixels p0 p1 in three bytes: b0 = p0 &
           0xFF, b1 = p0 >> 8 | (p1 & 0xF) << 4, b2 = p1 >> 4), no headers
check: whether NPY, `parload extract` of a whole KIND file as a NumPy
array (VIEWS, rows, cols) of u16, holds what the layout holds of the
stream that
`parload gen --seed SEED` writes (npload.py's transcription of the
generator): for mono12p, the generator's u16 pixels & 0xFFF.  Exit status
0 when it does, 1 when it does not.
"""
import os
import sys

import numpy as np

from npload import FILE_HEADER, PIXEL, VIEW_HEADER, blocks
from nprawload import verify

# The low 12 bits of a pixel: what mono12p keeps.
MASK12 = 0x0FFF


def records(path):
    """The records of a parload stream (np.memmap: header, pixels)."""
    fh = np.fromfile(path, dtype=FILE_HEADER, count=1)[0]
    n, w, h = int(fh["view_count"]), int(fh["width"]), int(fh["height"])
    pixel = np.dtype(PIXEL[int(fh["pixel_type"])])
    if pixel != np.dtype("<u2"):
        raise SystemExit("rawfiles: %s: u16 pixels only" % path)
    record = np.dtype([("header", VIEW_HEADER), ("pixels", pixel, (h, w))])
    return np.memmap(path, dtype=record, mode="r", offset=64, shape=(n,))


def pack12(pixels):
    """u16 pixels (an even count per row) as Mono12p bytes."""
    p = (pixels & MASK12).reshape(-1, 2).astype(np.uint16)
    out = np.empty((p.shape[0], 3), np.uint8)
    out[:, 0] = p[:, 0] & 0xFF
    out[:, 1] = (p[:, 0] >> 8) | ((p[:, 1] & 0xF) << 4)
    out[:, 2] = p[:, 1] >> 4
    return out


def write(kind, src, out):
    recs = records(src)
    n = recs.shape[0]
    if kind == "frames":
        os.makedirs(out, exist_ok=True)
        for i in range(n):
            with open(os.path.join(out, "frame_%05d.raw" % i), "wb") as f:
                f.write(recs[i]["pixels"].tobytes())
        return
    with open(out, "wb") as f:
        if kind == "be":
            with open(src, "rb") as s:
                f.write(s.read(64))
        for first, last in blocks(n, recs.dtype["pixels"].itemsize):
            part = recs[first:last]
            if kind == "be":
                part = np.array(part)
                part["pixels"] = part["pixels"].byteswap()
                f.write(part.tobytes())
            elif kind == "bare":
                f.write(np.ascontiguousarray(part["pixels"]).tobytes())
            elif kind == "mono12p":
                f.write(pack12(part["pixels"]).tobytes())
            else:
                raise SystemExit("rawfiles: unknown kind %r" % kind)


def check(kind, npy, seed, views):
    if kind != "mono12p":
        raise SystemExit("rawfiles: check knows mono12p only (the other "
                         "layouts are checked by --verify-seed)")
    got = np.load(npy, mmap_mode="r")
    if got.dtype != np.dtype("<u2") or got.ndim != 3 or \
            got.shape[0] != views:
        print("rawfiles: %s: %s %s, not %d views of u16" % (
            npy, got.dtype, got.shape, views))
        return 1
    if not verify(got, seed, MASK12):
        print("rawfiles: %s differs from the generator's pixels" % npy)
        return 1
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) == 6 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                     int(sys.argv[5]))
    raise SystemExit("usage: rawfiles.py write KIND SRC OUT | "
                     "check KIND NPY SEED VIEWS")


if __name__ == "__main__":
    sys.exit(main())
