#!/usr/bin/env python3
"""zarrload.py - experiment 18: Zarr stores, parload against zarr-python
in the same process (bench/README.md).

Usage: zarrload.py [--quick] [--runs N] [--out DIR] [--data-dir DIR]
                   [--keep] [--only CASE,...] [--parload PATH]

(make bench runs it as experiment 18; --data-dir DIR writes the stores in
DIR/zarr, removed at the end unless --keep.  Not named zarr.py: run as a
script, its directory comes first on sys.path, and it would be imported
as the zarr package.)

Writes FRAMES frames of 512 x 512 u16 Poisson counts (400 frames;
--quick: 40 of 128 x 128), one frame a chunk: Zarr v2 stores by
zarr-python (Debian's python3-zarr 2.13) uncompressed, Zstd 3 and Blosc
(LZ4, byte shuffle); v3 stores by the tests' writer
(python/tests/zarr_fixtures.py, from the specification): Zstd 3 chunks,
and the same chunks in shards of 16 frames (index at the end, bytes +
crc32c); and the same frames as a raw stream.  Then, in this one process,
warm cache, each case's two loads alternated (A, B, A, B, ...) after an
untimed run of each:

- parload.load(STORE) against zarr.open(STORE)[...] on each v2 store;
- parload.load() of the sharded v3 store against the unsharded one;
- a 32-row band as sinograms of the uncompressed store:
  parload.load(layout="sinograms", rows=(r, r + 32)) against zarr's
  z[:, r:r + 32, :].transpose(1, 0, 2) copied into a contiguous array;
- `parload extract -o OUT.zarr --compress zstd` of the raw stream against
  `parload extract -o OUT.npy`, as whole processes (only where this
  parload writes Zarr; skipped, saying so, where it does not); and
  `--compress zstd=1` and `--compress blosc` beside them, for
  information.

Every load is compared with the frames written (an extract's output read
back with zarr-python or NumPy) before its time counts; a load that fails
is recorded with its error and the case has no figure.  Each ratio is the
ratio of the medians, with the median of each round's ratio and the
middle 50% of the times beside it, and the issue's target.  Results:
DIR/results.md and DIR/runs.csv (default
bench/results/DATE-HOST-zarr/).
"""
import os
import shutil
import subprocess
import sys

import numpy as np

import numcodecs
import zarr

import parload

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import zarr_fixtures as zfx  # noqa: E402
sys.path.insert(0, HERE)
from inproc import Case, arguments, equal_to, run, stats_lines  # noqa: E402
from inproc import table  # noqa: E402

BAND = 32  # rows of the sinogram case
SHARD = 16  # frames of a shard


class Size:
    def __init__(self, quick):
        self.frames, self.side = (40, 128) if quick else (400, 512)
        self.runs = 3 if quick else 7


# --------------------------------------------------------------------------
# The stores.

def write_stores(size, d):
    """({case name: path}, the frames)."""
    data = zfx.pixels((size.frames, size.side, size.side), "u2", 1)
    one = (1, size.side, size.side)
    files = {}
    for name, comp in (("none", None), ("zstd", numcodecs.Zstd(level=3)),
                       ("blosc", numcodecs.Blosc(
                           cname="lz4", clevel=5,
                           shuffle=numcodecs.Blosc.SHUFFLE))):
        files[name] = os.path.join(d, "v2-%s.zarr" % name)
        zfx.v2(files[name], data, one, compressor=comp)
    chunk = [zfx.bytes_codec(), zfx.zstd_codec(3)]
    files["v3"] = os.path.join(d, "v3-zstd.zarr")
    zfx.write_v3(files["v3"], data, one, chunk)
    files["shard"] = os.path.join(d, "v3-shard.zarr")
    zfx.write_v3(files["shard"], data, (SHARD, size.side, size.side),
                 [zfx.shard_codec(one, chunk)])
    files["raw"] = os.path.join(d, "frames.raw")
    with parload.Writer(files["raw"], *data.shape, data.dtype) as w:
        for frame in data:
            w.write(None, frame)
    return files, data


# --------------------------------------------------------------------------
# The loads.

def pl(path, **kw):
    return lambda: parload.load(path, **kw).pixels


def zarr_whole(path):
    return lambda: zarr.open(path, mode="r")[...]


def zarr_band(path, r):
    return lambda: np.ascontiguousarray(
        zarr.open(path, mode="r")[:, r:r + BAND, :].transpose(1, 0, 2))


def extract_case(parload_bin, files, data, d, compress, target):
    """extract -o OUT.zarr --compress COMPRESS against -o OUT.npy, whole
    processes; each output read back, compared and removed after its
    time is taken."""
    what = "extract of the raw stream, -o OUT.zarr --compress %s / " \
        "-o OUT.npy (whole processes)" % compress
    labels = ("parload extract -o OUT.zarr --compress " + compress,
              "parload extract -o OUT.npy")
    skip = writer_missing(parload_bin)
    zout, nout = os.path.join(d, "out.zarr"), os.path.join(d, "out.npy")

    def run(out, *opts):
        def go():
            r = subprocess.run([parload_bin, "extract", "-o", out, *opts,
                                files["raw"]], capture_output=True,
                               text=True)
            if r.returncode:
                raise RuntimeError("parload extract: " + r.stderr.strip())
            return out
        return go

    def check(read, out, remove):
        def ok(_):
            try:
                return equal_to(data)(read(out))
            finally:
                remove(out)
        return ok
    return Case("extract-" + compress.replace("=", ""), what,
                run(zout, "--compress", compress), run(nout), target,
                *labels, check(lambda p: zarr.open(p, mode="r")[...], zout,
                               lambda p: shutil.rmtree(p,
                                                       ignore_errors=True)),
                check(np.load, nout, os.remove), skip=skip)


def writer_missing(parload_bin):
    """Why this parload cannot write Zarr (its extract --help says
    nothing of it), or None."""
    try:
        r = subprocess.run([parload_bin, "extract", "--help"],
                           capture_output=True, text=True)
    except OSError as e:
        return "no parload command (%s)" % e
    if "zarr" not in (r.stdout + r.stderr).lower():
        return "this parload's extract does not write Zarr"
    return None


def cases(files, data, size, parload_bin, d):
    """(a, b) alternated; ratio b / a unless cmp is "<=" (a / b)."""
    same = equal_to(data)
    out = []
    for key, what, target in (
            ("none", "v2, uncompressed", 2.0),
            ("zstd", "v2, Zstd 3", 2.0),
            ("blosc", "v2, Blosc (LZ4, byte shuffle)", 1.5)):
        p = files[key]
        out.append(Case(key, what, pl(p), zarr_whole(p), target,
                        "parload.load()", "zarr.open(...)[...]", same, same))
        out[-1].path = p
    out.append(Case("shard", "v3 Zstd 3, shards of %d frames / the same "
                    "chunks unsharded" % SHARD, pl(files["shard"]),
                    pl(files["v3"]), 1.10, "parload.load(sharded)",
                    "parload.load(unsharded)", same, same, cmp="<="))
    out[-1].path = files["shard"]
    r = size.side // 2 - BAND // 2
    band = np.ascontiguousarray(data[:, r:r + BAND].transpose(1, 0, 2))
    out.append(Case("sino", "%d-row band as sinograms, v2 uncompressed"
                    % BAND, pl(files["none"], layout="sinograms",
                               rows=(r, r + BAND)),
                    zarr_band(files["none"], r), 3.0,
                    "parload.load(layout='sinograms', rows=)",
                    "zarr z[:, r:r+%d, :].transpose(1, 0, 2) copied" % BAND,
                    equal_to(band), equal_to(band)))
    # The target is Zstd's default level; a faster level and
    # Blosc beside it, for information.
    for compress, target in (("zstd", 0.5), ("zstd=1", None),
                             ("blosc", None)):
        out.append(extract_case(parload_bin, files, data, d, compress,
                                target))
    return out


TEXT = """\
%d frames of %d x %d u16 (Poisson counts), one frame a chunk, v2 stores
written by zarr-python %s with numcodecs %s, v3 stores by the tests'
writer (python/tests/zarr_fixtures.py); parload %s, %d cores, load
average %s at the start.  Each case's two loads alternate in this one
process, warm cache, %d timed rounds after an untimed run of each; every
load checked against the frames written before its time counts.
*ratio*: how many times faster A is than B (B / A) for a target >=, A's
cost over B (A / B) for a target <=; ratio of the medians, and the
median of each round's ratio."""


def store_lines(cs, files, size):
    """What parload's stats say of each store, and the bytes the band's
    load read against the band's share of the store."""
    out = stats_lines(cs)
    r = size.side // 2 - BAND // 2
    try:
        st = parload.load(files["none"], layout="sinograms",
                          rows=(r, r + BAND)).stats
        out.append("- the band as sinograms read %d bytes; the band's rows "
                   "are %d bytes of the store's %d" % (
                       st["bytes_read"], size.frames * BAND * size.side * 2,
                       size.frames * size.side * size.side * 2))
    except Exception as e:
        out.append("- the band as sinograms: %s" % e)
    return out


def markdown(cs, files, size, started_load):
    md = ["## 18. Zarr stores (in-process against zarr-python)", "",
          TEXT % (size.frames, size.side, size.side, zarr.__version__,
                  numcodecs.__version__, parload.library_version,
                  len(os.sched_getaffinity(0)), started_load, size.runs),
          ""] + table(cs)
    return md + ["", "What parload's stats say of each store:", ""] + \
        store_lines(cs, files, size) + [""]


def main(argv=None):
    ap = arguments(__doc__, "zstd,shard")
    ap.add_argument("--parload", default=os.environ.get("PARLOAD_BIN",
                                                        "parload"),
                    help="the parload command, for the extract case")
    args = ap.parse_args(argv)
    size = Size(args.quick)
    if args.runs:
        size.runs = args.runs
    return run(args, "zarr", size.runs, lambda d: write_stores(size, d),
               lambda state, d: cases(*state, size, args.parload, d),
               lambda cs, state, load: markdown(cs, state[0], size, load))


if __name__ == "__main__":
    sys.exit(main())
