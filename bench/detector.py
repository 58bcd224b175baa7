#!/usr/bin/env python3
"""detector.py - experiment 17: detector data, parload against h5py +
hdf5plugin in the same process (bench/README.md).

Usage: detector.py [--quick] [--runs N] [--out DIR] [--data-dir DIR]
                   [--keep] [--only CASE,...]

(make bench runs it as experiment 17; --data-dir DIR writes the files in
DIR/detector, removed at the end unless --keep.)

Writes, with h5py and Debian's python3-hdf5plugin and HDF5 filter plugins,
FRAMES frames of 512 x 512 u16 Poisson counts (400 frames; --quick: 40 of
128 x 128), one frame a chunk, with no filter, gzip 4 + shuffle,
bitshuffle + LZ4, LZ4, Blosc (LZ4, byte shuffle), Zstd (numcodecs' chunks
stored with write_direct_chunk: Debian has no Zstd plugin for h5py), LZF
and BZip2; gzip + shuffle in chunks of 16 frames; a libver='latest' file
of 32 x 32 gzip tiles (80 frames: 20,480 tiles); an Eiger master file of 4
data files holding the bitshuffle + LZ4 file's frames; and a virtual
dataset of the same 4 data files.  Then, in this one process, warm cache,
each case's two loads alternated (A, B, A, B, ...) after an untimed run of
each:

- parload.load(FILE) against h5py's File(FILE)[name][...] (Zstd: h5py's
  read_direct_chunk of every chunk and numcodecs' decode into the array,
  since h5py cannot read it here);
- the master file and the virtual dataset against the same frames in one
  file, both by parload.load();
- corrected -log float32 (flats and darks given as arrays) against the
  uncorrected load of the bitshuffle + LZ4 file;
- parload.load(threads=1) against threads=2 on the bitshuffle + LZ4 file;
- one worker's bitshuffle + LZ4 decode rate (decoded bytes per second of
  CPU, time.process_time around parload.load(threads=1)) against
  bitshuffle.decompress_lz4 (Debian's bitshuffle module) over the same
  chunks, read beforehand with read_direct_chunk.

Every parload load is compared with h5py's read of the same file (the
frames' bytes, or the float64 formula -log((P - D) / (F - D)) for the
corrected load) before its time counts; a load that fails is recorded with
its error and the case has no figure.  Each ratio is the ratio of the
medians, with the median of each round's ratio and the middle 50% of the
times beside it, and the issue's target.  Results: DIR/results.md and
DIR/runs.csv (default bench/results/DATE-HOST-detector/).
"""
import os
# One thread for bitshuffle's module (Debian builds it with OpenMP): the
# rate case compares one worker with one thread of it, in CPU seconds,
# which OpenMP's idle threads would inflate.  Set before it is loaded.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import shutil
import sys
import tempfile

import numpy as np

import h5py
import hdf5plugin

import parload

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import detector_fixtures as dfx  # noqa: E402
sys.path.insert(0, HERE)
from inproc import Case, equal_to, measure, results_dir, table  # noqa: E402
from inproc import write_runs  # noqa: E402


class Size:
    def __init__(self, quick):
        self.frames, self.side = (40, 128) if quick else (400, 512)
        self.tile_frames = 20 if quick else 80
        self.runs = 3 if quick else 5


# --------------------------------------------------------------------------
# The files.

def frames(size, seed=1, n=None):
    rng = np.random.default_rng(seed)
    h = w = size.side
    y, x = np.mgrid[0:h, 0:w]
    beam = 20 + 300 * np.exp(-((y - h / 2) ** 2 + (x - w / 2) ** 2) /
                             (2 * (h / 5) ** 2))
    return rng.poisson(beam, size=(n or size.frames, h, w)).astype("u2")


FILTERS = {
    "none": {},
    "gzip": {"compression": "gzip", "compression_opts": 4, "shuffle": True},
    "bslz4": dict(hdf5plugin.Bitshuffle(cname="lz4")),
    "lz4": dict(hdf5plugin.LZ4()),
    "blosc": dict(hdf5plugin.Blosc(cname="lz4", clevel=5,
                                   shuffle=hdf5plugin.Blosc.SHUFFLE)),
    "zstd": dfx.zstd(3),
    "lzf": {"compression": "lzf"},
    "bzip2": dict(hdf5plugin.BZip2(blocksize=9)),
}


def write(path, data, chunks, kw, libver=None):
    if "direct" in kw:
        spec = dfx.Spec(os.path.basename(path), kw=dict(kw, chunks=chunks),
                        shape=data.shape, libver=libver)
        spec.path = path
        return dfx.write_direct(spec, data)
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("data", data=data, chunks=chunks, **kw)
    return path


def write_files(size, d):
    """{case name: path} of the single files, the master file, the VDS."""
    data = frames(size)
    one = (1, size.side, size.side)
    files = {}
    for name, kw in FILTERS.items():
        files[name] = write(os.path.join(d, name + ".h5"), data, one, kw)
    files["gzip16"] = write(os.path.join(d, "gzip16.h5"), data,
                            (16, size.side, size.side), FILTERS["gzip"])
    tiles = frames(size, 2, size.tile_frames)
    files["tiles"] = write(os.path.join(d, "tiles.h5"), tiles, (1, 32, 32),
                           FILTERS["gzip"], libver="latest")
    # The master file: the bitshuffle + LZ4 file's frames in 4 data files.
    per = size.frames // 4
    paths = []
    for i in range(4):
        p = os.path.join(d, "scan_data_%06d.h5" % (i + 1))
        with h5py.File(p, "w") as f:
            f.create_group("entry").create_group("data").create_dataset(
                "data", data=data[i * per:(i + 1) * per], chunks=one,
                **FILTERS["bslz4"])
        paths.append(p)
    files["master"] = os.path.join(d, "scan_master.h5")
    with h5py.File(files["master"], "w") as f:
        g = f.create_group("entry")
        g.attrs["NX_class"] = "NXentry"
        g = g.create_group("data")
        g.attrs["NX_class"] = "NXdata"
        for i, p in enumerate(paths):
            g["data_%06d" % (i + 1)] = h5py.ExternalLink(
                os.path.basename(p), "/entry/data/data")
    layout = h5py.VirtualLayout(shape=data.shape, dtype="u2")
    for i, p in enumerate(paths):
        layout[i * per:(i + 1) * per] = h5py.VirtualSource(
            os.path.basename(p), "/entry/data/data",
            shape=(per,) + data.shape[1:])
    files["vds"] = os.path.join(d, "vds.h5")
    with h5py.File(files["vds"], "w", libver="latest") as f:
        f.create_virtual_dataset("data", layout)
    return files, data


# --------------------------------------------------------------------------
# The loads: each a function returning (seconds, array).

def h5py_read(path):
    with h5py.File(path, "r") as f:
        return f["data"][...]


def zstd_read(path):
    """What a user without the plugin does: every chunk read raw by h5py,
    decoded by numcodecs into place."""
    with h5py.File(path, "r") as f:
        d = f["data"]
        out = np.empty(d.shape, d.dtype)
        for i in range(d.shape[0]):
            out[i] = np.frombuffer(dfx.zstd_decode(
                d.id.read_direct_chunk((i, 0, 0))[1]), d.dtype).reshape(
                    d.shape[1:])
    return out


def pl(path, **kw):
    return lambda: parload.load(path, **kw).pixels


def corrected_check(data, darks, flats):
    d = darks.astype(np.float64).mean(axis=0)
    den = np.maximum(flats.astype(np.float64).mean(axis=0) - d, 1e-6)

    def ok(got):
        if got.dtype != np.float32 or got.shape != data.shape:
            return False
        for i in range(0, len(data), 50):
            want = -np.log(np.maximum((data[i:i + 50] - d) / den, 1e-6))
            if not np.allclose(got[i:i + 50], want, rtol=1e-5, atol=1e-6):
                return False
        return True
    return ok


def cases(files, data, size):
    """The cases: (a, b) alternated; ratio b / a ("how many times faster
    a is") unless cmp is "<=" (a / b, a cost)."""
    same = equal_to(data)
    out = []
    targets = {"none": None, "gzip": 1.7, "bslz4": 2.0, "lz4": 2.0,
               "blosc": 1.6, "zstd": 2.0, "lzf": 1.5, "bzip2": 1.0,
               "gzip16": 1.7, "tiles": 1.7}
    names = {"none": "no filter", "gzip": "gzip 4 + shuffle",
             "bslz4": "bitshuffle + LZ4", "lz4": "LZ4",
             "blosc": "Blosc (LZ4, byte shuffle)", "zstd": "Zstd 3",
             "lzf": "LZF", "bzip2": "BZip2 (block size 9)",
             "gzip16": "gzip 4 + shuffle, chunks of 16 frames",
             "tiles": "libver='latest', gzip 32 x 32 tiles"}
    # Every file holds data's frames: each run of h5py's read is checked
    # against them too, so that parload's equals h5py's bytes.
    for key, target in targets.items():
        p = files[key]
        peer = (lambda p=p: zstd_read(p)) if key == "zstd" else \
            (lambda p=p: h5py_read(p))
        want = same if key != "tiles" else equal_to(h5py_read(p))
        out.append(Case(key, names[key], pl(p), peer, target,
                        "parload.load()",
                        "h5py read_direct_chunk + numcodecs" if key == "zstd"
                        else "h5py dset[...]", want, want))
        out[-1].path = p
    one = files["bslz4"]
    out.append(Case("master", "Eiger master file of 4 data files / the same "
                    "frames in one file", pl(files["master"]), pl(one), 1.05,
                    "parload.load(master)", "parload.load(one file)", same,
                    same, cmp="<="))
    out.append(Case("vds", "virtual dataset of the 4 data files / one "
                    "file", pl(files["vds"]), pl(one), None,
                    "parload.load(vds)", "parload.load(one file)", same,
                    same, cmp="<="))
    darks = np.random.default_rng(3).poisson(
        5, size=(5,) + data.shape[1:]).astype("u2")
    flats = (np.random.default_rng(4).poisson(
        300, size=(5,) + data.shape[1:]) + 400).astype("u2")
    out.append(Case("corrected", "corrected -log float32 / uncorrected, "
                    "bitshuffle + LZ4", pl(one, flats=flats, darks=darks,
                                           minus_log=True), pl(one), 1.3,
                    "parload.load(flats, darks, minus_log)",
                    "parload.load()", corrected_check(data, darks, flats),
                    same, cmp="<="))
    out.append(Case("threads", "1 thread / 2 threads, bitshuffle + LZ4",
                    pl(one, threads=2), pl(one, threads=1), 1.7,
                    "parload.load(threads=2)", "parload.load(threads=1)",
                    same, same))
    out.append(bitshuffle_rate_case(one, data))
    return out


def bitshuffle_rate_case(path, data):
    """One worker's decode rate against bitshuffle.decompress_lz4, both
    in CPU seconds (process_time) for the same chunks' decoded bytes."""
    import bitshuffle
    with h5py.File(path, "r") as f:
        d = f["data"]
        chunks = [d.id.read_direct_chunk((i, 0, 0))[1]
                  for i in range(d.shape[0])]
    shape, dt = data.shape[1:], data.dtype

    def bshuf():
        out = np.empty(data.shape, dt)
        for i, c in enumerate(chunks):
            block = int.from_bytes(c[8:12], "big") // dt.itemsize
            out[i] = bitshuffle.decompress_lz4(
                np.frombuffer(c, np.uint8, offset=12), shape, dt, block)
        return out
    return Case("rate", "bitshuffle + LZ4 decode rate, one worker / "
                "bitshuffle.decompress_lz4 (CPU seconds of the same chunks)",
                pl(path, threads=1), bshuf, 0.9, "parload.load(threads=1)",
                "bitshuffle.decompress_lz4", equal_to(data), equal_to(data),
                cpu=True)


TEXT = """\
%d frames of %d x %d u16 (Poisson counts), one frame a chunk unless the
case says otherwise, written by h5py %s (HDF5 %s) with hdf5plugin %s;
parload %s, %d cores, load average %s at the start.  Each case's two
loads alternate in this one process, warm cache, %d timed rounds after an
untimed run of each; every load checked against h5py's read before its
time counts.  *ratio*: how many times faster A is than B (B / A) for a
target >=, A's cost over B (A / B) for a target <=; ratio of the medians,
and the median of each round's ratio.  The rate case times CPU seconds
(process_time) of one thread."""


def markdown(cs, size, started_load):
    md = ["## 17. Detector data (in-process against h5py + hdf5plugin)", "",
          TEXT % (size.frames, size.side, size.side, h5py.version.version,
                  h5py.version.hdf5_version, hdf5plugin.version,
                  parload.library_version, len(os.sched_getaffinity(0)),
                  started_load, size.runs), ""] + table(cs)
    serial = []
    for c in cs:
        if c.path:
            try:
                st = parload.load(c.path).stats
                serial.append("- %s: %d chunks decoded (%s)%s" % (
                    c.what, st["strips_decoded"], st.get("codec", "?"),
                    ", serial: " + st["serial"] if st["serial"] else ""))
            except Exception as e:
                serial.append("- %s: %s" % (c.what, e))
    return md + ["", "What parload's stats say of each file:", ""] + \
        serial + [""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--out")
    ap.add_argument("--data-dir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", help="cases, e.g. bslz4,master")
    args = ap.parse_args(argv)
    size = Size(args.quick)
    if args.runs:
        size.runs = args.runs
    out = results_dir(args.out, "detector")
    # Its own folder, removed at the end unless --keep (a later run with
    # the same --data-dir writes the files again).
    data_dir = os.path.join(args.data_dir, "detector") if args.data_dir \
        else tempfile.mkdtemp(prefix="parload-det-")
    os.makedirs(data_dir, exist_ok=True)
    started_load = "%.2f" % os.getloadavg()[0]
    try:
        print("detector: writing the files in %s" % data_dir, flush=True)
        files, data = write_files(size, data_dir)
        cs = cases(files, data, size)
        if args.only:
            keep = set(args.only.split(","))
            cs = [c for c in cs if c.id in keep]
        for c in cs:
            measure(c, size.runs, lambda m: print(m, flush=True))
        md = markdown(cs, size, started_load)
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    write_runs(os.path.join(out, "runs.csv"), cs)
    print("\n".join(md))
    print("results: %s" % os.path.join(out, "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
