#!/usr/bin/env python3
"""One worker's bitshuffle+LZ4 decode rate: parload's row (bench/bslz4rate,
a C helper) against bitshuffle.decompress_lz4 (Debian's bitshuffle), on
the same chunks, in the same run, alternated; decoded bytes per CPU
second, medians.

    bslz4rate.py [--frames N] [--rounds R] [--mean M] [--helper PATH]

The chunks: N frames of 512 x 512 uint16, Poisson counts of mean M (a
detector's: mostly 0-3), each compressed by bitshuffle.compress_lz4 with
its default block and framed as its HDF5 filter frames it (the 12-byte
header).  Each round decodes every chunk once in each decoder; the
helper's CPU time is its thread's, Python's the process's (with
OMP_NUM_THREADS=1: one thread, as one worker).
"""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import bitshuffle  # noqa: E402


def chunks(frames, mean, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(frames):
        a = rng.poisson(mean, (512, 512)).astype(np.uint16)
        body = bitshuffle.compress_lz4(a).tobytes()
        # bitshuffle's default block: 8 KiB, in elements.
        block = max(8192 // a.itemsize // 8 * 8, 128)
        out.append((a, struct.pack(">QI", a.nbytes, block * a.itemsize) +
                    body))
    return out


def python_round(cs):
    t0 = time.process_time()
    total = 0
    check = 0
    for a, c in cs:
        b = bitshuffle.decompress_lz4(np.frombuffer(c, np.uint8, offset=12),
                                      a.shape, a.dtype)
        total += b.nbytes
        raw = b.view(np.uint8).reshape(-1)
        check += int(raw[raw.size // 3]) + int(raw[-1])
    return time.process_time() - t0, total, check


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--mean", type=float, default=1.0)
    ap.add_argument("--helper", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "bslz4rate"))
    o = ap.parse_args()
    cs = chunks(o.frames, o.mean)
    stored = sum(len(c) for _, c in cs)
    with tempfile.NamedTemporaryFile(suffix=".chunks") as f:
        for _, c in cs:
            f.write(struct.pack("<QQ", len(c), 2) + c)
        f.flush()
        helper = subprocess.Popen([o.helper, f.name], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        ours, theirs = [], []
        for r in range(o.rounds + 1):
            helper.stdin.write("1\n")
            helper.stdin.flush()
            cpu, total, check = helper.stdout.readline().split()
            pcpu, ptotal, pcheck = python_round(cs)
            if int(total) != ptotal or int(check) != pcheck:
                sys.exit("the decoders disagree: %s %s against %d %d" %
                         (total, check, ptotal, pcheck))
            if r:  # the first round warms both up
                ours.append(int(total) / float(cpu))
                theirs.append(ptotal / pcpu)
        helper.stdin.close()
        helper.wait()
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print("chunks: %d frames of 512x512 uint16, Poisson mean %g, %.2f MB "
          "stored for %.2f MB (ratio %.2f)" % (
              o.frames, o.mean, stored / 1e6, o.frames * 512 * 512 * 2 / 1e6,
              o.frames * 512 * 512 * 2 / stored))
    print("parload bitshuffle row: %.0f MB/s of CPU (median of %d rounds, "
          "min %.0f, max %.0f)" % (mo / 1e6, len(ours), min(ours) / 1e6,
                                   max(ours) / 1e6))
    print("bitshuffle.decompress_lz4: %.0f MB/s of CPU (median of %d, "
          "min %.0f, max %.0f)" % (mt / 1e6, len(theirs), min(theirs) / 1e6,
                                   max(theirs) / 1e6))
    print("ratio: %.2fx (target >= 0.9x)" % (mo / mt))


if __name__ == "__main__":
    main()
