#!/usr/bin/env python3
"""ctrload.py - a container loaded from Python: by parload, by h5py or by
tifffile, as a user calls each; checked against the stream it was
written from.

Usage: ctrload.py TOOL SRC FILE [--threads N] [--rows A:B]
                  [--layout views|sinograms] [--describe]

TOOL:
  parload   parload.load(FILE, threads=N, rows=(A, B), layout=L): FILE a
            .h5, a .tif or a folder of TIFFs; with --describe,
            parload.describe(FILE) alone (the metadata: the TIFF's
            directory walk, the HDF5 chunk table)
  h5py      h5py.File(FILE)["/exchange/data"][...]; with --rows, dset[:,
            A:B, :]; with --layout sinograms,
            np.ascontiguousarray(dset[:, A:B, :].transpose(1, 0, 2))
  tifffile  tifffile.imread(FILE); for a folder, tifffile.imread(files),
            the list of its .tif files in name order made before the clock

Imports numpy and the tool's module first (for parload, also its HDF5 or
TIFF module, which libparload opens on first use), then times, in this fresh
process, from the call (the file's opening) until the array is complete;
then checks the array against SRC's pixels (ctrfiles.py's check, the
selection applied) and prints one JSON object: {"seconds", "views",
"shape", "out_bytes", "verified"}, with parload's own "load_seconds" and
"serial" (stats).  --describe: "seconds" is the describe call, verified
when it gives SRC's view count and view shape.  Exit status 1 when the
array does not match.
"""
import argparse
import glob
import json
import os
import sys
import time

import numpy as np

from ctrfiles import DATASET, expected, parse_rows, pixels, same


def with_parload(args):
    import parload
    # The format's module opened before the clock, as importing h5py or
    # tifffile loads libhdf5 or libtiff before theirs: has_hdf5() and
    # has_tiff() open it (libparload opens it on first use otherwise).
    parload.has_hdf5() if args.file.endswith(".h5") else parload.has_tiff()
    if args.describe:
        t0 = time.perf_counter()
        d = parload.describe(args.file)
        t1 = time.perf_counter()
        return t1 - t0, d, {}
    kw = {"threads": args.threads, "layout": args.layout}
    if args.rows:
        kw["rows"] = args.rows
    t0 = time.perf_counter()
    ds = parload.load(args.file, **kw)
    t1 = time.perf_counter()
    stats = ds.stats
    return t1 - t0, ds.pixels, {"load_seconds": float(stats["seconds"]),
                                "serial": stats.get("serial")}


def with_h5py(args):
    import h5py
    r0, r1 = args.rows or (None, None)
    t0 = time.perf_counter()
    with h5py.File(args.file, "r") as f:
        dset = f[DATASET]
        if args.layout == "sinograms":
            out = np.ascontiguousarray(dset[:, r0:r1, :].transpose(1, 0, 2))
        elif args.rows:
            out = dset[:, r0:r1, :]
        else:
            out = dset[...]
    t1 = time.perf_counter()
    return t1 - t0, out, {}


def with_tifffile(args):
    import tifffile
    if args.rows or args.layout != "views":
        raise SystemExit("ctrload: tifffile reads whole files only")
    what = args.file
    if os.path.isdir(what):
        what = sorted(glob.glob(os.path.join(what, "*.tif")))
    t0 = time.perf_counter()
    out = tifffile.imread(what)
    t1 = time.perf_counter()
    return t1 - t0, out, {}


TOOLS = {"parload": with_parload, "h5py": with_h5py,
         "tifffile": with_tifffile}


def described(d, src):
    """Whether parload.describe's dict gives SRC's views and their
    shape."""
    a = pixels(src)
    return (d.get("count"), d.get("height"), d.get("width")) == a.shape


def main():
    ap = argparse.ArgumentParser(prog="ctrload.py")
    ap.add_argument("tool", choices=sorted(TOOLS))
    ap.add_argument("src")
    ap.add_argument("file")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rows", type=parse_rows)
    ap.add_argument("--layout", default="views",
                    choices=("views", "sinograms"))
    ap.add_argument("--describe", action="store_true")
    args = ap.parse_args()
    if args.describe and args.tool != "parload":
        raise SystemExit("ctrload: --describe is parload's")
    seconds, got, extra = TOOLS[args.tool](args)
    out = {"seconds": seconds}
    if args.describe:
        out.update(verified=described(got, args.src),
                   views=got.get("count"))
    else:
        want = expected(args.src, args.rows, args.layout)
        views = got.shape[1] if args.layout == "sinograms" else got.shape[0]
        out.update(verified=same(got, want, "%s's load of %s" % (
            args.tool, args.file)), views=views, shape=list(got.shape),
            out_bytes=got.nbytes)
    out.update(extra)
    print(json.dumps(out))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
