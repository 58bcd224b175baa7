#!/usr/bin/env python3
"""pyload.py - parload from Python, as a user calls it.

Usage: pyload.py FILE SEED THREADS
       pyload.py --import

With FILE: imports numpy and parload, then times, in this fresh process,
parload.load(FILE, threads=THREADS) from the call until it returns the
dataset; then checks every header and pixel against the stream that
`parload gen --seed SEED` writes (npload.py's transcription of the
generator) and prints one JSON object: {"seconds", "load_seconds" (what
the library reports), "bytes", "views", "verified"}.  Exit status 1 when
the data does not match.

With --import: times `import parload` after `import numpy` in this fresh
interpreter (what the module adds to a program that has numpy) and prints
{"seconds", "numpy_seconds", "verified"} (verified: the module loads and
has load()).
"""
import json
import os
import sys
import time


def import_cost():
    t0 = time.perf_counter()
    import numpy  # noqa: F401
    t1 = time.perf_counter()
    import parload
    t2 = time.perf_counter()
    print(json.dumps({"seconds": t2 - t1, "numpy_seconds": t1 - t0,
                      "verified": callable(getattr(parload, "load", None))}))
    return 0


def main():
    if sys.argv[1:] == ["--import"]:
        return import_cost()
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.split("\n\n")[1])
    path, seed, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    import numpy as np
    import parload
    from npload import blocks, headers_match, payloads

    t0 = time.perf_counter()
    ds = parload.load(path, threads=threads)
    t1 = time.perf_counter()
    fh = parload.read_header(path)
    n = ds.pixels.shape[0]
    payload = ds.pixels[0].nbytes if n else 0
    ok = headers_match(ds.headers, np.arange(n, dtype=np.uint64), n, seed,
                       int(fh.flags))
    raw = ds.pixels.reshape(n, -1).view(np.uint8)
    for first, last in blocks(n, payload):
        if not ok:
            break
        ok = np.array_equal(raw[first:last], payloads(
            seed, np.arange(first, last, dtype=np.uint64), payload))
    print(json.dumps({"seconds": t1 - t0,
                      "load_seconds": float(ds.stats["seconds"]),
                      "bytes": os.path.getsize(path), "views": n,
                      "verified": bool(ok)}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
