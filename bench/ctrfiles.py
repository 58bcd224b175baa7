#!/usr/bin/env python3
"""ctrfiles.py - experiment 15's containers, written from a stream with
h5py and tifffile, and the check of what a load or an extract holds.

Usage: ctrfiles.py write KIND SRC OUT
       ctrfiles.py check SRC FILE [--rows A:B] [--layout views|sinograms]

write: the pixels of SRC, a stream in parload's own format as `parload
gen` writes it (read with NumPy: np.memmap of its records), as the
container OUT, written under a temporary name and renamed:
  h5        HDF5 (h5py), /exchange/data (views, rows, columns), contiguous
  h5gz      HDF5, /exchange/data chunked one view a chunk (1, rows,
            columns), gzip level 4 after the shuffle filter
  h5chunks  HDF5, /exchange/data chunked one view a chunk, uncompressed
            (one chunk per view: a chunk table as long as the views)
  tif       one multi-page TIFF (tifffile.imwrite of the array: a page per
            view, uncompressed)
  tifdir    the folder OUT of single-page TIFFs, proj_00000.tif,
            proj_00001.tif, ..., one per view (tifffile.imwrite of each)
check: whether FILE (a .npy, the /exchange/data of a .h5 or the pages of
a .tif, as NumPy, h5py and tifffile read them) holds SRC's pixels, with
--rows the band A:B of each view, with --layout sinograms as (rows,
views, columns).  Exit status 0 when it does, 1 when it does not (what
differs printed).
"""
import argparse
import os
import sys

import numpy as np

from rawfiles import records

DATASET = "/exchange/data"
# The HDF5 gzip fixture: the level, after the shuffle filter.
GZIP_LEVEL = 4


def pixels(src):
    """SRC's pixels, (views, rows, columns), a view of its np.memmap."""
    return records(src)["pixels"]


def expected(src, rows=None, layout="views"):
    """What a load of SRC with that selection holds (a view, not a copy):
    the band of rows A:B of each view, as sinograms (rows, views,
    columns) in sinogram layout."""
    a = pixels(src)
    if rows:
        a = a[:, rows[0]:rows[1], :]
    return a.transpose(1, 0, 2) if layout == "sinograms" else a


def write_h5(a, out, kind):
    import h5py
    opts = {}
    if kind in ("h5gz", "h5chunks"):
        opts["chunks"] = (1,) + a.shape[1:]
    if kind == "h5gz":
        opts.update(compression="gzip", compression_opts=GZIP_LEVEL,
                    shuffle=True)
    with h5py.File(out, "w") as f:
        d = f.create_dataset(DATASET, shape=a.shape, dtype=a.dtype, **opts)
        step = max(1, (64 << 20) // max(1, a[0].nbytes))
        for first in range(0, a.shape[0], step):
            d[first:first + step] = np.ascontiguousarray(
                a[first:first + step])


def write_tifdir(a, out):
    import tifffile
    os.makedirs(out)
    for i in range(a.shape[0]):
        tifffile.imwrite(os.path.join(out, "proj_%05d.tif" % i), a[i])


def write(kind, src, out):
    a = pixels(src)
    tmp = out + ".part"
    if kind in ("h5", "h5gz", "h5chunks"):
        write_h5(a, tmp, kind)
    elif kind == "tif":
        import tifffile
        tifffile.imwrite(tmp, np.ascontiguousarray(a))
    elif kind == "tifdir":
        write_tifdir(a, tmp)
    else:
        raise SystemExit("ctrfiles: unknown kind %r" % kind)
    os.rename(tmp, out)


def read_back(path):
    """FILE as its own readers give it: NumPy, h5py, tifffile."""
    if path.endswith(".npy"):
        return np.load(path, mmap_mode="r")
    if path.endswith(".h5"):
        import h5py
        with h5py.File(path, "r") as f:
            return f[DATASET][...]
    if path.endswith((".tif", ".tiff")):
        import tifffile
        return tifffile.imread(path)
    raise SystemExit("ctrfiles: %s: not .npy, .h5 or .tif" % path)


def same(got, want, what):
    """Whether got equals want in shape, type and every pixel; says what
    differs when not."""
    if got.shape != want.shape or got.dtype.newbyteorder("=") != \
            want.dtype.newbyteorder("="):
        print("ctrfiles: %s is %s %s, expected %s %s" % (
            what, got.dtype, got.shape, want.dtype, want.shape))
        return False
    step = max(1, (64 << 20) // max(1, want[0].nbytes))
    for first in range(0, want.shape[0], step):
        if not np.array_equal(got[first:first + step],
                              want[first:first + step]):
            print("ctrfiles: %s differs from the source in [%d:%d]" % (
                what, first, min(first + step, want.shape[0])))
            return False
    return True


def parse_rows(text):
    a, b = text.split(":")
    return int(a), int(b)


def main():
    ap = argparse.ArgumentParser(prog="ctrfiles.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("kind")
    w.add_argument("src")
    w.add_argument("out")
    c = sub.add_parser("check")
    c.add_argument("src")
    c.add_argument("file")
    c.add_argument("--rows", type=parse_rows)
    c.add_argument("--layout", default="views",
                   choices=("views", "sinograms"))
    args = ap.parse_args()
    if args.cmd == "write":
        write(args.kind, args.src, args.out)
        return 0
    want = expected(args.src, args.rows, args.layout)
    return 0 if same(read_back(args.file), want, args.file) else 1


if __name__ == "__main__":
    sys.exit(main())
