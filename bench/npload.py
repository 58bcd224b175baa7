#!/usr/bin/env python3
"""npload.py - the loader a Python user would write instead of parload.

Usage: npload.py FILE SEED

Times, in this fresh process and after numpy is imported, what
parload's loaders time: from opening FILE until the dataset is complete,
here np.fromfile with a structured dtype (one record = view header +
payload) followed by copies into a separate header array and a contiguous
pixel array.  Then it checks the dataset against the stream that
`parload gen --seed SEED` writes (a numpy transcription of cli/gen.c) and
prints one JSON object: {"seconds", "bytes", "views", "verified"}.  Exit
status 1 when the data does not match.
"""
import json
import sys
import time

import numpy as np

MASK = (1 << 64) - 1
PIXEL = {1: "u1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<f8"}

FILE_HEADER = np.dtype([
    ("magic", "V8"), ("version_major", "<u2"), ("version_minor", "<u2"),
    ("file_header_size", "<u2"), ("view_header_size", "<u2"),
    ("view_count", "<u8"), ("width", "<u4"), ("height", "<u4"),
    ("pixel_type", "<u2"), ("bytes_per_pixel", "<u2"), ("flags", "<u4"),
    ("payload_size", "<u8"), ("reserved", "V16")])
VIEW_HEADER = np.dtype([
    ("view_index", "<u8"), ("timestamp_ns", "<u8"), ("angle_deg", "<f4"),
    ("crc32c", "<u4"), ("reserved", "V8")])


def mix_int(x):
    """splitmix64's finaliser on a Python int (cli/gen.c: mix)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def mix(x):
    """The same on a uint64 array (wrapping arithmetic)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def load(path):
    fh = np.fromfile(path, dtype=FILE_HEADER, count=1)
    if fh.size != 1 or fh["magic"][0].tobytes() != b"\x89RAW\r\n\x1a\n":
        raise SystemExit("npload: %s: not a raw image stream" % path)
    fh = fh[0]
    n, w, h = int(fh["view_count"]), int(fh["width"]), int(fh["height"])
    pixel = np.dtype(PIXEL[int(fh["pixel_type"])])
    record = np.dtype([("header", VIEW_HEADER), ("pixels", pixel, (h, w))])
    records = np.fromfile(path, dtype=record, count=n, offset=64)
    if records.shape[0] != n:
        raise SystemExit("npload: %s: file is truncated" % path)
    headers = records["header"].copy()
    pixels = np.ascontiguousarray(records["pixels"])
    return fh, headers, pixels


def headers_match(headers, idx, n, seed, flags):
    """Whether headers are those of file views idx (uint64) of an n-view
    stream that `parload gen --seed SEED` writes."""
    if not np.array_equal(headers["view_index"], idx):
        return False
    ts = np.uint64(mix_int(seed) & 0xFFFFFFFF) + idx * np.uint64(1000003)
    if not np.array_equal(headers["timestamp_ns"], ts):
        return False
    angle = (360.0 * idx.astype(np.float64) / n).astype(np.float32) if n \
        else np.zeros(0, np.float32)
    if headers["angle_deg"].view(np.uint32).tolist() != \
            angle.view(np.uint32).tolist():
        return False
    return bool(flags & 1) or not np.any(headers["crc32c"])


def payloads(seed, idx, payload, lo=0, hi=None):
    """Bytes [lo, hi) (default: all) of the payloads of file views idx
    (uint64), one row each: word k of view i is mix(state_i + 8k),
    state_i = mix(seed ^ mix(i + 1))."""
    hi = payload if hi is None else hi
    first = lo // 8
    offs = np.arange(first, (hi + 7) // 8, dtype=np.uint64) * np.uint64(8)
    state = mix(np.uint64(seed) ^ mix(idx + np.uint64(1)))
    want = mix(state[:, None] + offs[None, :])
    return want.astype("<u8").view(np.uint8)[:, lo - 8 * first:
                                              hi - 8 * first]


def blocks(n, payload):
    """View ranges of about 8 MiB of payload, to bound the check's
    memory."""
    step = max(1, (8 << 20) // max(payload, 1))
    for first in range(0, n, step):
        yield first, min(n, first + step)


def verify(fh, headers, pixels, seed):
    n = int(fh["view_count"])
    payload = int(fh["payload_size"])
    if not headers_match(headers, np.arange(n, dtype=np.uint64), n, seed,
                         int(fh["flags"])):
        return False
    raw = pixels.reshape(n, -1).view(np.uint8) if n else None
    for first, last in blocks(n, payload):
        want = payloads(seed, np.arange(first, last, dtype=np.uint64),
                        payload)
        if not np.array_equal(raw[first:last], want):
            return False
    return True


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: npload.py FILE SEED")
    path, seed = sys.argv[1], int(sys.argv[2])
    t0 = time.perf_counter()
    fh, headers, pixels = load(path)
    t1 = time.perf_counter()
    ok = verify(fh, headers, pixels, seed)
    size = 64 + int(fh["view_count"]) * (32 + int(fh["payload_size"]))
    print(json.dumps({"seconds": t1 - t0, "bytes": size,
                      "views": int(fh["view_count"]), "verified": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
