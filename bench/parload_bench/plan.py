"""Running the plan: the files to generate (and remove), the sessions run
with their points interleaved, warm-up and settling runs, evictions."""
import os
import shutil
import subprocess

from . import HERE, BenchError, log
from .measure import (cached_share, check_by_extract, evict, measure,
                      resident_pages)
from .points import CALIBRATE, Point, RawLayout
from .sessions import ALIGNED, PAGE_CACHE


def generate(tools, stream, data_dir):
    """Write the stream, unless a kept data dir already holds it (a marker
    file records what was generated)."""
    stream.path = os.path.join(data_dir, stream.name + ".raw")
    params = ["--views", str(stream.views), "--width", str(stream.width),
              "--height", str(stream.height), "--type", stream.ptype,
              "--seed", str(stream.seed)] + (["--crc"] if stream.crc else [])
    marker = " ".join(params) + "\n"
    try:
        with open(stream.path + ".ok") as f:
            if f.read() == marker and \
                    os.path.getsize(stream.path) == stream.size:
                return
    except OSError:
        pass
    cmd = [tools.parload, "gen"] + params + [stream.path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or os.path.getsize(stream.path) != stream.size:
        raise BenchError("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
    with open(stream.path + ".ok", "w") as f:
        f.write(marker)


def generate_raw(tools, lay, data_dir):
    """Write experiment 13's file (folder) lay from its source stream with
    bench/rawfiles.py, unless a kept data dir already holds it."""
    generate(tools, lay.source, data_dir)
    if lay.kind == "own":
        return
    lay.path = os.path.join(data_dir, lay.name + ("" if lay.files > 1
                                                  else ".raw"))
    marker = "rawfiles.py write %s %s\n" % (lay.kind, lay.source.name)
    try:
        with open(lay.path + ".ok") as f:
            if f.read() == marker and sum(
                    os.path.getsize(x) for x in lay.operands()) == lay.size:
                return
    except OSError:
        pass
    cmd = [tools.numpy, os.path.join(HERE, "rawfiles.py"), "write", lay.kind,
           lay.source.path, lay.path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or sum(os.path.getsize(x)
                                for x in lay.operands()) != lay.size:
        raise BenchError("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
    with open(lay.path + ".ok", "w") as f:
        f.write(marker)


def files(sessions):
    """Every file the sessions read, each once, in the order first used;
    a file derived from another (experiments 13 and 15) after its
    source."""
    out = []
    for s in sessions:
        for f in s.streams():
            for g in (getattr(f, "source", None), f):
                if g is not None and g not in out:
                    out.append(g)
    return out


def generate_all(tools, sessions, data_dir):
    for f in files(sessions):
        if hasattr(f, "generate"):
            # Experiment 15's containers (containers.py) and 16's files
            # (correct.py) write themselves, gen first where they need it.
            f.generate(tools, data_dir, generate)
        elif isinstance(f, RawLayout):
            generate_raw(tools, f, data_dir)
        else:
            generate(tools, f, data_dir)


def remove_all(sessions):
    for f in files(sessions):
        for path in (f.path, (f.path or "") + ".ok"):
            if path and os.path.isdir(path):
                shutil.rmtree(path)
            elif path and os.path.exists(path):
                os.remove(path)


def file_paths(f):
    """The files a stream is read from (a folder's, a list's)."""
    return f.paths() if hasattr(f, "paths") else f.operands()


def warm(tools, f):
    """One untimed read of a file (of each file of a folder) into the page
    cache: the copy floor with one thread, or, for many files, a read in
    this process."""
    if len(file_paths(f)) == 1:
        measure(tools, Point("copyfloor", [], threads=1), f)
        return
    buf = bytearray(1 << 20)
    for path in file_paths(f):
        with open(path, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass


# A run longer than this is followed by an untimed run of the next point.
# Measured on a 2-core virtual machine whose guest reports free memory to
# its host: after a 0.7 s load, the next process's fresh-memory load took
# 50-560 ms where it otherwise took 41-75 ms, with the kernel's page zeroing
# (clear_page_erms) at 88% of its time; a second load was back to normal.
SETTLE_SECONDS = 0.25

# Cold runs: each timed one follows an untimed run of the
# same point, then the eviction.  Measured on the same VM, the 1 GiB file
# cold, two sets of 7 rounds with the points in two orders: a `--cache
# keep` load (2 or 4 threads) took 0.78-1.27 s in each of the 14 runs
# that followed a `--cache direct` load, which leaves no page cache to
# free, and 0.48-0.58 s in 9 of the 14 that followed a keep load (0.88-
# 0.99 s in the other 5): a keep load needs the file's size in page
# cache as well as its dataset, and memory freed seconds before has gone
# back to the host.

# The tools whose time depends on fresh memory (see SETTLE_SECONDS).
FRESH_MEMORY = ("parload", "numpy", "npselect", "selcopy", "pyload",
                "npraw", "freshfloor", "sinofloor",
                "sinofloor-map", "uringfloor", "uringfloor-direct",
                "ctr-command", "ctr-python",
                "ctr-extract", "corrload")


def run_session(tools, s, runs, measured):
    """Run every point of s `runs` times, interleaved; append (session,
    point, measurement) to `measured` as each run ends."""
    st = s.stream
    log("  %s, %s cache: %d points x %d runs" % (st.describe(), s.cache,
                                                len(s.points), runs))
    if s.cache == "warm":
        # One untimed pass so that every timed run finds the file cached.
        for f in s.streams():
            if f.views:
                warm(tools, f)
    calibrate(tools, s)
    for p in s.points:
        # A load that --verify-seed cannot check: once, untimed, by
        # `parload extract` with the same options, before its runs (a
        # point may say how: experiment 15's commands).
        if getattr(p, "check_once", None):
            p.check_once(tools, p, p.file(s))
        elif p.tool == "parload" and p.verify and \
                not getattr(p.file(s), "seed_checks", True):
            check_by_extract(tools, p, p.file(s))
    slow = False
    for run in range(runs):
        for p in s.points:
            # After a run of most of a second, the next fresh-memory load
            # can find its memory handed back to the host of a virtual
            # machine and pay for it again (see SETTLE_SECONDS): one
            # untimed run of this point first, so that no point's time
            # depends on which point ran before it.  A point that says
            # so (experiment 15's extracts, which write as much as they
            # load) gets that run before every timed one.  So does every
            # point of a cold session, whatever its tool: there the memory
            # a run needs (its page cache too) and what the run before it
            # freed differ from point to point (see "Cold runs" above).
            if s.cache == "cold" or ((slow or getattr(
                    p, "settle_always", False)) and p.tool in FRESH_MEMORY):
                measure(tools, p, st)
            rewarmed = prepare(tools, s, p)
            m = measure(tools, p, st)
            m["run"] = run + 1
            m["rewarmed"] = rewarmed
            if s.note in (PAGE_CACHE, ALIGNED):
                # Experiment 14: what the run left of the file cached.
                m["cached"] = cached_share(tools, st)
            p.runs.append(m)
            measured.append((s, p, m))
            slow = m["wall"] > SETTLE_SECONDS


def prepare(tools, s, p):
    """Before a run of p: a cold session's file evicted (and checked); in a
    warm session, each file the run reads that is not wholly in the page
    cache read in again, and how many were (experiment 14's loads may leave
    a file partly out of it; the kernel of the virtual machine the bench
    was written on pages out file pages that are not being read, DAMON's
    pageout scheme: 0.7% of a file 3 s after it was read whole)."""
    st = s.stream
    if s.cache == "cold":
        resident, total = evict(tools, st)
        if total and resident > total // 20:
            raise BenchError(
                "cannot evict %s from the page cache (%d of %d pages "
                "stay resident): the cold-cache experiment needs a "
                "disk-backed file system (not tmpfs); set "
                "PARLOAD_BENCH_DIR" % (st.path, resident, total))
        return 0
    rewarmed = 0
    f = p.file(s)
    for g in getattr(f, "parts", ()) + (f,):
        if not g or not getattr(g, "views", True):
            continue
        resident, total = resident_pages(tools, file_paths(g))
        if resident < total:
            warm(tools, g)
            rewarmed += 1
    return rewarmed


# Untimed runs of the I/O alone that set experiment 11's compute.
CALIBRATION_RUNS = 3


def calibrate(tools, s):
    """Experiment 11's compute overlap: the compute per batch of the
    session's CALIBRATE points is the I/O-alone point's median time over
    its batches, so that the compute in all takes as long as the I/O."""
    pts = [p for p in s.points if p.compute_us == CALIBRATE]
    io = [p for p in s.points if p.tool == "batches" and
          p.compute_us is None and not p.busy]
    if not pts or not io:
        return
    ms = [measure(tools, io[0], s.stream) for _ in range(CALIBRATION_RUNS)]
    secs = sorted(m["seconds"] for m in ms)[len(ms) // 2]
    batches = ms[0]["batches"]
    us = max(1, round(secs / batches * 1e6))
    for p in pts:
        p.compute_us = us
        p.compute_batches = batches
    log("    compute per batch: %d us (the I/O alone: %.1f ms in %d "
        "batches)" % (us, secs * 1e3, batches))


def print_plan(sessions, runs):
    """--dry-run: the sessions, their files and points, and the count."""
    total = 0
    for s in sessions:
        log("  %s: %s, %s: %d points" % (s.stream.name, s.stream.describe(),
                                         s.cache, len(s.points)))
        for f in s.streams()[1:]:
            log("    (and file %s: %s)" % (f.name, f.describe()))
        for p in s.points:
            log("    %-62s exps %s" % (p.label(), sorted(p.exps)))
        total += len(s.points) * runs
    log("%d measurements" % total)
