#!/usr/bin/env python3
"""bench/run.py - reproduce the raw-image-stream article's experiments with
parload's strategies, put the parallel loader, the copy floor and peer tools
beside them, and write CSV, a markdown table, plots and a machine record.

Run it through `make bench` (or `make bench-quick`); see bench/README.md.
Only the Python standard library is needed.  gnuplot (plots), fio and numpy
(peers) are used when present and skipped, with a note, when not.

Method (the article's): time from opening the file until the dataset is
complete, one fresh process per measurement, every load verified against
the generated data in that same process before its time counts, 10 runs
per point (3 with --quick), median and middle 50% reported.  The runs of
the points that share a file are interleaved (run 1 of every point, then
run 2, ...) so that a machine that gets busier or quieter over time biases
no point against another.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIB = 1024
MIB = 1024 * 1024


class BenchError(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def human_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d %s" % (n // size, unit)
    if n >= MIB:
        return "%.1f MiB" % (n / MIB)
    return "%d B" % n


# --------------------------------------------------------------------------
# Files: generated deterministically by `parload gen`, verified by seed.

class Stream:
    def __init__(self, name, views, width, height, ptype="u16", seed=1):
        self.name, self.views, self.width, self.height = name, views, width, height
        self.ptype, self.seed = ptype, seed
        bpp = {"u8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "f32": 4,
               "f64": 8}[ptype]
        self.payload = width * height * bpp
        # What a load delivers (view headers and payloads) and the file.
        self.dataset = views * (32 + self.payload)
        self.size = 64 + self.dataset
        self.path = None

    def describe(self):
        return "%d view%s of %d x %d %s (%s payloads, %s)" % (
            self.views, "" if self.views == 1 else "s", self.width,
            self.height, self.ptype,
            human_bytes(self.payload), human_bytes(self.size))


def sweep_stream(payload, target):
    """A stream of u16 views of `payload` bytes, about `target` bytes."""
    width = min(payload // 2, 1024)
    height = payload // 2 // width
    views = max(1, round(target / (32 + payload)))
    return Stream("sweep-%d" % payload, views, width, height, "u16",
                  seed=100 + payload.bit_length())


# --------------------------------------------------------------------------
# Points: one configuration measured on one file.

V = {"bulk": "V1", "sequential": "V2", "two-pass": "V3"}

# How a label names each extra flag of parload.
EXTRA_TEXT = {
    "--preallocate": "into touched caller memory",
    "--no-hugepages": "4 KiB pages",
}


class Point:
    """One configuration.  tool: parload, parload-version (the process
    alone: `parload --version`), copyfloor, dd, fio, numpy.  For parload,
    strategy None is the plain `parload FILE` (no --strategy, no --threads:
    the defaults, threads is what they come to); extra: more command-line
    flags (--preallocate, --no-hugepages); verify False: no --verify-seed
    (only for the whole-process point, whose wall would hold the check);
    stream: a file of its own instead of its session's."""

    def __init__(self, tool, exps, strategy=None, io=None, buffer=None,
                 threads=1, extra=(), verify=True, stream=None):
        self.tool = tool
        self.exps = set(exps)     # experiments that report it
        self.strategy, self.io, self.buffer = strategy, io, buffer
        self.threads = threads
        self.extra = tuple(extra)
        self.verify = verify
        self.stream = stream
        self.runs = []            # dicts: seconds, wall, peak_rss_kib, ...

    @property
    def key(self):
        return (self.tool, self.strategy, self.io, self.buffer, self.threads,
                self.extra, self.verify,
                self.stream.name if self.stream else None)

    def file(self, session):
        return self.stream or session.stream

    def buffer_text(self):
        if self.tool != "parload" or self.strategy in (None, "parallel",
                                                       "mmap"):
            return ""
        if self.buffer == 0 or (self.buffer is None and self.io == "posix"):
            return "none"
        if self.buffer is None:
            return "stdio default"
        return human_bytes(self.buffer) + (" (own)" if self.io == "posix"
                                           else " (setvbuf)")

    def label(self):
        text = self.base_label()
        for flag in self.extra:
            text += ", " + EXTRA_TEXT.get(flag, flag)
        if self.stream:
            text += ", file %s" % self.stream.name
        if self.tool == "parload" and not self.verify:
            text += " (not verified)"
        return text

    def base_label(self):
        if self.tool == "parload-version":
            return "parload --version"
        if self.tool == "parload" and self.strategy is None:
            return "parload FILE (defaults: %d thread%s)" % (
                self.threads, "s" if self.threads > 1 else "")
        if self.tool == "copyfloor":
            return "copy floor, %d thread%s" % (self.threads,
                                                "s" if self.threads > 1 else "")
        if self.tool == "copyfloor-whole":
            return "copy floor into a touched file-sized buffer, %d " \
                "thread%s" % (self.threads, "s" if self.threads > 1 else "")
        if self.tool == "dd":
            return "dd bs=1M"
        if self.tool == "fio":
            return "fio read bs=1M"
        if self.tool == "numpy":
            return "numpy fromfile+copy"
        if self.strategy == "parallel":
            return "parallel, %d thread%s" % (self.threads,
                                              "s" if self.threads > 1 else "")
        if self.strategy == "mmap":
            return "mmap"
        text = "%s %s %s" % (V[self.strategy], self.strategy, self.io)
        if self.buffer == 0 and self.io == "stdio":
            text += " unbuffered"
        elif self.buffer not in (None, 0):
            text += " +%s buffer" % human_bytes(self.buffer).replace(" ", "")
        return text

    def is_plain(self):
        """parload with no extra flags, verified, on its session's file."""
        return (self.tool == "parload" and not self.extra and self.verify
                and self.stream is None)

    def is_v2_posix(self):
        return (self.is_plain() and self.strategy == "sequential" and
                self.io == "posix" and self.buffer in (None, 0))

    def is_parallel(self, threads):
        return (self.is_plain() and self.strategy == "parallel" and
                self.threads == threads)

    def is_article(self):
        return self.is_plain() and self.strategy in V


class Session:
    """Points measured on one file in one cache state, runs interleaved."""

    def __init__(self, stream, cache, points):
        self.stream, self.cache = stream, cache
        self.points = []
        self.skipped = []
        for p in points:
            same = [q for q in self.points if q.key == p.key]
            if same:
                same[0].exps |= p.exps
            else:
                self.points.append(p)

    def find(self, pred):
        for p in self.points:
            if pred(p) and p.runs:
                return p
        return None

    def streams(self):
        """The session's file, then those of its points that have their
        own, each once."""
        out = [self.stream]
        for p in self.points:
            if p.stream and p.stream not in out:
                out.append(p.stream)
        return out


def summary(runs, field="seconds"):
    xs = sorted(r[field] for r in runs if r.get(field) is not None)
    if not xs:
        return None
    med = statistics.median(xs)
    if len(xs) >= 2:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        q1 = q3 = xs[0]
    return med, q1, q3


# --------------------------------------------------------------------------
# Running one measurement, in a fresh process.

class Tools:
    def __init__(self, args):
        self.parload = args.parload
        self.copyfloor = args.copyfloor
        self.evict = args.evict
        self.dd = shutil.which("dd")
        self.fio = shutil.which("fio")
        self.gnuplot = shutil.which("gnuplot")
        self.numpy = find_numpy_python(args.numpy_python)
        self.missing = []
        if not self.fio:
            self.missing.append("fio (not installed: its peer points are skipped)")
        if not self.numpy:
            self.missing.append("numpy (no python3 with numpy found: the numpy "
                                "loader is skipped)")
        if not self.gnuplot:
            self.missing.append("gnuplot (not installed: no plots)")
        if not self.dd:
            self.missing.append("dd (not found: its peer points are skipped)")


def snapshot_programs(args, where):
    """Copy the programs under test, and the libparload they load, to
    `where`, so that the whole run measures one build even if the tree is
    rebuilt meanwhile (a relink leaves a missing or half-written file for a
    moment)."""
    parload = shutil.which(args.parload) or args.parload
    with open(parload, "rb") as f:
        if f.read(2) == b"#!":
            # A libtool wrapper script works only where it is: run the
            # harness through `libtool --mode=execute` (make bench does)
            # to get the real program.
            args.parload = parload
            parload = None
    env_path = os.environ.get("LD_LIBRARY_PATH", "")
    r = subprocess.run(["ldd", parload], capture_output=True, text=True) \
        if parload and shutil.which("ldd") else None
    libs = []
    if r and r.returncode == 0:
        for line in r.stdout.splitlines():
            m = re.match(r"\s*(libparload\S*)\s+=>\s+(/\S+)", line)
            if m:
                libs.append((m.group(1), m.group(2)))
    copies = {}
    progs = [("copyfloor", args.copyfloor), ("evict", args.evict)]
    if parload:
        progs.append(("parload", parload))
    for name, path in progs + libs:
        dest = os.path.join(where, name)
        shutil.copy2(path, dest)
        copies[name] = dest
    args.parload = copies.get("parload", args.parload)
    args.copyfloor = copies["copyfloor"]
    args.evict = copies["evict"]
    if libs:
        os.environ["LD_LIBRARY_PATH"] = where + (":" + env_path if env_path
                                                 else "")


def find_numpy_python(explicit):
    cands = [explicit] if explicit else [
        os.environ.get("PARLOAD_BENCH_PYTHON"), sys.executable,
        shutil.which("python3"), "/usr/bin/python3"]
    for py in cands:
        if not py or not os.path.exists(py):
            continue
        try:
            r = subprocess.run([py, "-c", "import numpy"],
                               capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return py
    return None


def harness_rss_kib():
    """Reset this process's peak resident size to its current size and
    return it (KiB).  On Linux a child's ru_maxrss is at least the peak of
    the process that spawned it: exec carries the old memory's high-water
    mark into the new program's.  So a child's peak RSS reads the harness's
    own size when it stays below it; resetting the mark before each spawn
    keeps that floor at the harness's current size, which this returns so
    that the report can say which figures sit on it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_process(cmd, env=None):
    """Run cmd in a fresh process; return (CompletedProcess, wall seconds,
    peak RSS KiB, harness RSS KiB at the spawn).  wall is the time from just
    before the spawn until the child is reaped, as this (Python) process
    sees it: fork and exec included.  The peak RSS is the child's ru_maxrss
    from wait4 (KiB on Linux)."""
    for attempt in range(4):
        floor = harness_rss_kib()
        # Output goes to files, not pipes: the child never blocks on a full
        # pipe, and nothing has to be read while it runs.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, env=env)
            try:
                _, status, usage = os.wait4(child.pid, 0)
            except BaseException:
                child.kill()
                child.wait()
                raise
            wall = time.perf_counter() - t0
            child.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            r = subprocess.CompletedProcess(
                cmd, child.returncode,
                out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"))
        # A program that could not even start because its shared library
        # is being relinked (a build running in the same tree) measured
        # nothing: wait and start it again.  Any other failure counts.
        if r.returncode != 127 or \
                "error while loading shared libraries" not in r.stderr:
            break
        time.sleep(2)
    return r, wall, usage.ru_maxrss, floor


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise BenchError("no JSON in output: %r" % text[-300:])


def measure(tools, p, stream):
    """One run of p, in a fresh process: a dict with seconds (what the
    program reports; None for parload --version), wall and peak_rss_kib
    (the process as the harness sees it), read_calls and bytes_read."""
    m = measure_one(tools, p, p.stream or stream)
    m["wall"], m["peak_rss_kib"], m["harness_rss_kib"] = m.pop("process")
    return m


def measure_one(tools, p, stream):
    path = stream.path
    if p.tool == "parload-version":
        # The process alone: start, link, print, exit.  No load.
        cmd = [tools.parload, "--version"]
        r, *proc = run_process(cmd)
        if r.returncode != 0 or not r.stdout.startswith("parload"):
            raise BenchError("%s failed (exit %d): %s" % (
                " ".join(cmd), r.returncode, r.stderr.strip()))
        return {"seconds": None, "process": proc, "read_calls": None,
                "bytes_read": None}
    if p.tool == "parload":
        cmd = [tools.parload, "--json"]
        if p.strategy is not None:
            cmd += ["--threads", str(p.threads), "--strategy", p.strategy]
        if p.strategy not in (None, "parallel", "mmap"):
            cmd += ["--io", p.io]
            if p.buffer is not None:
                cmd += ["--buffer", str(p.buffer)]
        cmd += list(p.extra)
        if p.verify:
            cmd += ["--verify-seed", str(stream.seed)]
        cmd.append(path)
        r, *proc = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("%s failed (exit %d): %s" % (
                " ".join(cmd), r.returncode, r.stderr.strip()))
        d = last_json(r.stdout)
        # An unverified load (the whole-process point) must still deliver
        # every view and byte; a verified one must also match the stream.
        if d.get("bytes") != stream.size or d.get("views") != stream.views \
                or (p.verify and d.get("verified") is not True):
            raise BenchError("%s: load not verified: %s" % (" ".join(cmd), d))
        return {"seconds": float(d["seconds"]), "process": proc,
                "read_calls": d.get("read_calls"),
                "bytes_read": d.get("bytes_read")}
    if p.tool in ("copyfloor", "copyfloor-whole"):
        cmd = [tools.copyfloor, "--threads", str(p.threads)]
        if p.tool == "copyfloor-whole":
            cmd.append("--whole")
        cmd.append(path)
        r, *proc = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
        d = last_json(r.stdout)
        if d.get("bytes") != stream.size or d.get("verified") is not True:
            raise BenchError("copy floor read %s of %d bytes" %
                             (d.get("bytes"), stream.size))
        return {"seconds": float(d["seconds"]), "process": proc,
                "read_calls": None, "bytes_read": d["bytes"]}
    if p.tool == "dd":
        env = dict(os.environ, LC_ALL="C")
        cmd = [tools.dd, "if=" + path, "of=/dev/null", "bs=1M"]
        r, *proc = run_process(cmd, env)
        m = re.search(r"^(\d+) bytes .*copied, ([0-9.e+-]+) s", r.stderr,
                      re.M)
        if r.returncode != 0 or not m:
            raise BenchError("dd failed: %s" % r.stderr.strip())
        if int(m.group(1)) != stream.size:
            raise BenchError("dd copied %s of %d bytes" %
                             (m.group(1), stream.size))
        return {"seconds": float(m.group(2)), "process": proc,
                "read_calls": None, "bytes_read": int(m.group(1))}
    if p.tool == "fio":
        # --readonly always: a read job without it may lay out (write) the
        # file.  --invalidate=0: the harness decides what is cached.
        cmd = [tools.fio, "--name=seqread", "--filename=" + path,
               "--readonly", "--rw=read", "--bs=1M", "--ioengine=psync",
               "--numjobs=1", "--invalidate=0", "--size=%d" % stream.size,
               "--output-format=json"]
        r, *proc = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("fio failed: %s" % r.stderr.strip())
        rd = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["read"]
        whole = stream.size // MIB * MIB  # fio reads whole blocks only
        if rd["io_bytes"] != whole or rd["io_bytes"] == 0:
            raise BenchError("fio read %d of %d bytes" %
                             (rd["io_bytes"], whole))
        # Time in the read calls (mean latency x requests), scaled to the
        # whole file; fio's start-up is not in it.
        secs = rd["lat_ns"]["mean"] * rd["lat_ns"]["N"] * 1e-9
        secs *= stream.size / rd["io_bytes"]
        return {"seconds": secs, "process": proc,
                "read_calls": rd["total_ios"],
                "bytes_read": rd["io_bytes"]}
    if p.tool == "numpy":
        cmd = [tools.numpy, os.path.join(HERE, "npload.py"), path,
               str(stream.seed)]
        r, *proc = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("numpy loader failed (exit %d): %s %s" % (
                r.returncode, r.stdout.strip(), r.stderr.strip()))
        d = last_json(r.stdout)
        if d.get("verified") is not True or d.get("bytes") != stream.size:
            raise BenchError("numpy load not verified: %s" % d)
        return {"seconds": float(d["seconds"]), "process": proc,
                "read_calls": None, "bytes_read": d["bytes"]}
    raise BenchError("unknown tool " + p.tool)


def evict(tools, stream):
    r = subprocess.run([tools.evict, stream.path], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise BenchError("evict failed: %s" % r.stderr.strip())
    resident, total = (int(x) for x in r.stdout.split()[:2])
    return resident, total


def generate(tools, stream, data_dir):
    """Write the stream, unless a kept data dir already holds it (a marker
    file records what was generated)."""
    stream.path = os.path.join(data_dir, stream.name + ".raw")
    params = ["--views", str(stream.views), "--width", str(stream.width),
              "--height", str(stream.height), "--type", stream.ptype,
              "--seed", str(stream.seed)]
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


# A run longer than this is followed by an untimed run of the next point.
# Measured on a 2-core virtual machine whose guest reports free memory to
# its host: after a 0.7 s load, the next process's fresh-memory load took
# 50-560 ms where it otherwise took 41-75 ms, with the kernel's page zeroing
# (clear_page_erms) at 88% of its time; a second load was back to normal.
SETTLE_SECONDS = 0.25


def run_session(tools, s, runs, out_rows):
    st = s.stream
    log("  %s, %s cache: %d points x %d runs" % (st.describe(), s.cache,
                                                len(s.points), runs))
    if s.cache == "warm":
        # One untimed pass so that every timed run finds the file cached.
        for f in s.streams():
            if f.views:
                measure(tools, Point("copyfloor", [], threads=1), f)
    slow = False
    for run in range(runs):
        for p in s.points:
            # After a run of most of a second, the next fresh-memory load
            # can find its memory handed back to the host of a virtual
            # machine and pay for it again (see SETTLE_SECONDS): one
            # untimed run of this point first, so that no point's time
            # depends on which point ran before it.
            if slow and p.tool in ("parload", "numpy"):
                measure(tools, p, st)
            if s.cache == "cold":
                resident, total = evict(tools, st)
                if total and resident > total // 20:
                    raise BenchError(
                        "cannot evict %s from the page cache (%d of %d pages "
                        "stay resident): the cold-cache experiment needs a "
                        "disk-backed file system (not tmpfs); set "
                        "PARLOAD_BENCH_DIR" % (st.path, resident, total))
            m = measure(tools, p, st)
            m["run"] = run + 1
            p.runs.append(m)
            out_rows.append(csv_row(s, p, m))
            slow = m["wall"] > SETTLE_SECONDS


def blank(x, fmt="%s"):
    return "" if x is None else fmt % x


RUN_FIELDS = ["experiments", "point", "tool", "strategy", "io", "buffer",
              "threads", "flags", "verified", "cache", "file", "views",
              "payload_bytes", "file_bytes", "run", "seconds", "wall_seconds",
              "peak_rss_kib", "harness_rss_kib", "read_calls", "bytes_read"]


def point_fields(s, p):
    """The columns that name a point, shared by runs.csv and summary.csv."""
    st = p.file(s)
    row = {
        "experiments": " ".join(str(e) for e in sorted(p.exps)),
        "point": p.label(), "tool": p.tool, "strategy": p.strategy or "",
        "io": p.io or "", "buffer": p.buffer_text(), "threads": p.threads,
        "flags": " ".join(p.extra),
        "verified": "" if p.tool != "parload" else
        ("yes" if p.verify else "no"),
        "cache": s.cache, "file": st.name, "views": st.views,
        "payload_bytes": st.payload, "file_bytes": st.size,
    }
    if p.tool == "parload-version":  # no file, no threads
        for k in ("threads", "file", "views", "payload_bytes", "file_bytes"):
            row[k] = ""
    return row


def csv_row(s, p, m):
    row = point_fields(s, p)
    row.update({
        "run": m.get("run", ""), "seconds": blank(m["seconds"], "%.9f"),
        "wall_seconds": "%.6f" % m["wall"],
        "peak_rss_kib": blank(m["peak_rss_kib"], "%d"),
        "harness_rss_kib": blank(m["harness_rss_kib"], "%d"),
        "read_calls": blank(m["read_calls"]),
        "bytes_read": blank(m["bytes_read"]),
    })
    return row


# --------------------------------------------------------------------------
# The experiments.

def sweep_target(quick):
    return 16 * MIB if quick else 64 * MIB


def plan(quick, cores, tools, only):
    """Sessions, in the order they run (cold last: warm data stays warm)."""
    n = cores
    ref = Stream("reference", 2000, 896, 64, "u16", seed=1)
    tiny = Stream("tiny", 200000, 128, 1, "u16", seed=2)
    empty = Stream("empty", 0, 896, 64, "u16", seed=3)
    huge = [Stream("huge-1", 1, 8192, 16384, "u16", seed=4),   # 256 MiB
            Stream("huge-3", 3, 10240, 5120, "u16", seed=5)]   # 3 x 100 MiB
    apis = ("posix", "stdio")
    # The article's loaders that the experiments run: V2 alone when quick.
    article = ("sequential",) if quick else ("bulk", "sequential",
                                             "two-pass")
    sessions = []

    def want(e):
        return not only or e in only

    # Experiments 1, 4 and 6 (warm) share the reference stream.
    pts = []
    if want(1):
        for s in article:
            for io in apis:
                pts.append(Point("parload", [1], s, io))
        if not quick:
            pts.append(Point("parload", [1], "mmap"))
        pts.append(Point("parload", [1], "parallel", threads=1))
        pts.append(Point("parload", [1], "parallel", threads=n))
        # Target 2: into memory the caller owns and has touched, and the
        # copy floor with a destination as large as the file.
        pts.append(Point("parload", [1], "parallel", threads=n,
                         extra=("--preallocate",)))
        pts.append(Point("copyfloor-whole", [1], threads=n))
    if want(4):
        ts = [1, n] if quick else list(range(1, 2 * n + 1))
        for t in ts:
            pts.append(Point("parload", [4], "parallel", threads=t))
            pts.append(Point("copyfloor", [4, 6], threads=t))
    if want(1) or want(4) or want(6):
        pts.append(Point("copyfloor", [1, 6], threads=n))
        pts.append(Point("parload", [1, 6], "sequential", "posix"))
    if want(6):
        pts.append(Point("copyfloor", [6], threads=1))
        pts.append(Point("parload", [6], "parallel", threads=n))
        if tools.dd:
            pts.append(Point("dd", [6]))
        if tools.fio:
            pts.append(Point("fio", [6]))
        if tools.numpy and not quick:
            pts.append(Point("numpy", [6]))
    if want(8):
        # The whole process: `parload FILE` as a user runs it (no
        # --verify-seed: its check would be inside the wall measured; the
        # same load, verified, is the parallel point beside it), and the
        # fixed costs: a process that loads nothing, and a 0-view load
        # (process, topology discovery, thread pool, exit).
        pts.append(Point("parload", [8], None, threads=n, verify=False))
        pts.append(Point("parload", [8], "parallel", threads=n))
        pts.append(Point("parload-version", [8]))
        pts.append(Point("parload", [8], None, threads=n, stream=empty))
    if pts:
        sessions.append(Session(ref, "warm", pts))

    # The 4 KiB-page points of experiment 1 (V2 as the article allocates,
    # and caller memory in 4 KiB pages) take most of a second each.  On a
    # virtual machine that hands free memory back to its host, a load that
    # long leaves the next process's fresh memory to be faulted in again by
    # the host (perf: the kernel's page zeroing then runs at 0.5 GB/s), so
    # interleaved with the others they would slow whichever point follows.
    # They run in a session of their own, after the others.
    if want(1):
        pts = [Point("parload", [1], "sequential", "posix",
                     extra=("--no-hugepages",))]
        if not quick:
            pts.append(Point("parload", [1], "parallel", threads=n,
                             extra=("--preallocate", "--no-hugepages")))
        pts.append(Point("copyfloor", [1], threads=n))
        sessions.append(Session(ref, "warm", pts))

    # Experiment 2: buffering on tiny views.
    if want(2):
        pts = []
        for s in article:
            pts.append(Point("parload", [2], s, "posix", None))
            pts.append(Point("parload", [2], s, "posix", 4096))
            pts.append(Point("parload", [2], s, "stdio", 0))
            pts.append(Point("parload", [2], s, "stdio", None))
        if not quick:
            pts.append(Point("parload", [2], "mmap"))
        pts.append(Point("parload", [2], "parallel", threads=n))
        pts.append(Point("copyfloor", [2], threads=n))
        sessions.append(Session(tiny, "warm", pts))

    # Experiment 3: the view-size sweep, file size held about constant.
    if want(3):
        target = sweep_target(quick)
        if quick:
            sizes = [256, 16 * KIB, MIB]
        else:
            sizes = [1 << k for k in range(8, 21)]
        for size in sizes:
            st = sweep_stream(size, target)
            pts = []
            for s in (("sequential",) if quick else ("sequential",
                                                     "two-pass")):
                pts.append(Point("parload", [3], s, "posix", None))
                pts.append(Point("parload", [3], s, "posix", 4096))
                pts.append(Point("parload", [3], s, "stdio", 0))
                pts.append(Point("parload", [3], s, "stdio", None))
            if not quick:
                pts.append(Point("parload", [3], "bulk", "posix", None))
                pts.append(Point("parload", [3], "bulk", "stdio", None))
                pts.append(Point("parload", [3], "mmap"))
            pts.append(Point("parload", [3], "parallel", threads=n))
            pts.append(Point("copyfloor", [3], threads=n))
            sessions.append(Session(st, "warm", pts))

    # Experiment 7: few, huge views; fewer views than workers.
    if want(7):
        for st in (huge[1:] if quick else huge):
            pts = [Point("parload", [7], "parallel", threads=1),
                   Point("parload", [7], "parallel", threads=n)]
            if not quick:
                pts.append(Point("copyfloor", [7], threads=1))
                pts.append(Point("copyfloor", [7], threads=n))
            pts.append(Point("parload", [7], "sequential", "posix"))
            sessions.append(Session(st, "warm", pts))

    # Experiment 5: cold cache, experiments 1 and 4 again, with floors.
    if want(5):
        pts = []
        for s in article:
            for io in (("posix",) if quick else apis):
                pts.append(Point("parload", [5], s, io))
        if not quick:
            pts.append(Point("parload", [5], "mmap"))
        ts = [1, n] if quick else list(range(1, 2 * n + 1))
        for t in ts:
            pts.append(Point("parload", [5, 6] if t == n else [5], "parallel",
                             threads=t))
        pts.append(Point("copyfloor", [5, 6], threads=n))
        if tools.dd:
            pts.append(Point("dd", [5, 6]))
        if tools.fio:
            pts.append(Point("fio", [5, 6]))
        sessions.append(Session(ref, "cold", pts))
    return sessions


EXPERIMENTS = {
    1: "Strategies on the reference stream (warm cache)",
    2: "Buffering on tiny views (warm cache)",
    3: "View-size sweep (warm cache, file size held about constant)",
    4: "Thread scaling (warm cache)",
    5: "Cold cache (file evicted before each run)",
    6: "Floors and peers",
    7: "Few, huge views (warm cache)",
    8: "The whole process (warm cache)",
}


# --------------------------------------------------------------------------
# Reporting.

def ms(x):
    return "%.2f" % (x * 1e3) if x < 10 else "%.0f" % (x * 1e3)


def median(p, field="seconds"):
    """The median of one field of a point's runs; None when there is none
    (no point, no runs, or a field the point does not have)."""
    sm = summary(p.runs, field) if p else None
    return sm[0] if sm else None


def point_stats(s, p):
    """Medians and ratios of one point.  The time fields are None for a
    point that reports no time of its own (parload --version); the ratios
    to V2 POSIX and the copy floor only for a point on its session's file."""
    sm = summary(p.runs)
    med, q1, q3 = sm if sm else (None, None, None)
    st = p.file(s)
    t = {"median": med, "q1": q1, "q3": q3, "gbps": None, "vs_v2": None,
         "vs_floor": None, "read_calls": None,
         "wall": median(p, "wall"), "peak_rss_kib": median(p, "peak_rss_kib"),
         "harness_rss_kib": median(p, "harness_rss_kib")}
    if med is None:
        return t
    t["gbps"] = st.size / med / 1e9 if med > 0 else 0.0
    if p.stream is None:
        v2 = median(s.find(Point.is_v2_posix))
        floor = median(s.find(lambda q: q.tool == "copyfloor" and
                              q.threads == CORES))
        t["vs_v2"] = v2 / med if v2 and med > 0 else None
        t["vs_floor"] = med / floor if floor else None
    if p.tool == "parload":
        t["read_calls"] = median(p, "read_calls")
    return t


def fmt_ratio(x):
    return "" if x is None else "%.2fx" % x


def table_rows(sessions, exp, timed=True):
    """(session, point, stats) of every measured point of exp; timed: only
    those that report a time (all but parload --version)."""
    rows = []
    for s in sessions:
        for p in s.points:
            if exp in p.exps and p.runs:
                t = point_stats(s, p)
                if t["median"] is not None or not timed:
                    rows.append((s, p, t))
    return rows


def markdown_table(rows, with_file):
    head = ["point", "buffer", "median ms", "middle 50% ms", "GB/s",
            "read calls", "vs V2 POSIX", "vs copy floor"]
    if with_file:
        head.insert(0, "file")
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    for s, p, t in rows:
        cells = [p.label(), p.buffer_text(), ms(t["median"]),
                 "%s - %s" % (ms(t["q1"]), ms(t["q3"])), "%.2f" % t["gbps"],
                 "" if t["read_calls"] is None else "%d" % t["read_calls"],
                 fmt_ratio(t["vs_v2"]), fmt_ratio(t["vs_floor"])]
        if with_file:
            cells.insert(0, "%s (%s)" % (s.stream.name, s.cache))
        out.append("| " + " | ".join(cells) + " |")
    return out


def sweep_table(sessions):
    """Experiment 3: the article's crossover and parload against the best
    article strategy at every size."""
    out = ["| view payload | views | unbuf/buf V2 posix | V2 stdio | "
           "V3 posix | V3 stdio | best article strategy | its ms | "
           "parallel ms | parallel speed-up | parallel vs copy floor | "
           "ceiling |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    series = []
    for s in sessions:
        if not s.stream.name.startswith("sweep-"):
            continue
        st = s.stream

        def med(pred):
            p = s.find(pred)
            return summary(p.runs)[0] if p else None

        ratios = []
        for strat in ("sequential", "two-pass"):
            for io in ("posix", "stdio"):
                buffered = 4096 if io == "posix" else None
                unbuf = None if io == "posix" else 0
                u = med(lambda p: p.tool == "parload" and p.strategy == strat
                        and p.io == io and p.buffer == unbuf)
                b = med(lambda p: p.tool == "parload" and p.strategy == strat
                        and p.io == io and p.buffer == buffered)
                ratios.append(u / b if u and b else None)
        article = [p for p in s.points if p.is_article() and p.runs]
        best = min(article, key=lambda p: summary(p.runs)[0]) if article else None
        best_ms = summary(best.runs)[0] if best else None
        par = med(lambda p: p.is_parallel(CORES))
        floor = med(lambda p: p.tool == "copyfloor")
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                   "| %s |" % (
            human_bytes(st.payload), st.views,
            *[("%.2f" % r if r else "") for r in ratios],
            "%s (buffer: %s)" % (best.label(), best.buffer_text() or "-")
            if best else "",
            ms(best_ms) if best_ms else "", ms(par) if par else "",
            fmt_ratio(best_ms / par if best_ms and par else None),
            fmt_ratio(par / floor if par and floor else None),
            fmt_ratio(best_ms / floor if best_ms and floor else None)))
        series.append((st.payload, ratios, best_ms, par, floor,
                       med(Point.is_v2_posix)))
    return out, series


def find_point(sessions, name, cache, pred):
    """The first measured point that pred accepts on file `name` in cache
    state `cache`: (session, point), or (None, None)."""
    for s in sessions:
        if s.stream.name == name and s.cache == cache:
            p = s.find(pred)
            if p:
                return s, p
    return None, None


def find_median(sessions, name, cache, pred, field="seconds"):
    return median(find_point(sessions, name, cache, pred)[1], field)


def is_flags(p, strategy, extra, threads=None):
    """parload with exactly these extra flags, verified, on its session's
    file."""
    return (p.tool == "parload" and p.strategy == strategy and
            p.extra == tuple(extra) and p.verify and p.stream is None and
            (threads is None or p.threads == threads))


def is_default_process(p):
    """The whole-process point: plain `parload FILE`, unverified."""
    return (p.tool == "parload" and p.strategy is None and not p.verify
            and not p.extra and p.stream is None)


def pct(x):
    return "%.0f%%" % (x * 100)


def mib(kib):
    return "%.1f" % (kib / 1024)


def scaling(sessions):
    """Experiment 4 on the warm reference stream: {threads: (parallel
    median, copy floor median)}; either may be None."""
    out = {}
    for s in sessions:
        if s.stream.name != "reference" or s.cache != "warm":
            continue
        for p in s.points:
            if 4 not in p.exps or not p.runs:
                continue
            if p.is_parallel(p.threads):
                out.setdefault(p.threads, [None, None])[0] = median(p)
            elif p.tool == "copyfloor":
                out.setdefault(p.threads, [None, None])[1] = median(p)
    return out


def efficiency(t1, t, tt):
    return t1 / (t * tt) if t1 and tt else None


def scaling_table(sessions, n):
    sc = scaling(sessions)
    if not sc:
        return []
    p1, f1 = sc.get(1, (None, None))
    out = ["Parallel efficiency at t threads: T(1 thread) / (t x T(t)); "
           "100%% is perfect scaling.  This machine has %d core%s: beyond "
           "that, threads share cores and the efficiency must fall." %
           (n, "s" if n > 1 else ""), "",
           "| threads | parallel ms | parallel efficiency | copy floor ms | "
           "copy floor efficiency |", "|---|---|---|---|---|"]
    for t in sorted(sc):
        pt, ft = sc[t]
        pe, fe = efficiency(p1, t, pt), efficiency(f1, t, ft)
        out.append("| %d | %s | %s | %s | %s |" % (
            t, ms(pt) if pt else "", pct(pe) if pe else "",
            ms(ft) if ft else "", pct(fe) if fe else ""))
    return out + [""]


def speedup(sessions, name, n):
    """T(parallel, 1 thread) / T(parallel, n threads) on a warm file."""
    t1 = find_median(sessions, name, "warm", lambda p: p.is_parallel(1))
    tn = find_median(sessions, name, "warm", lambda p: p.is_parallel(n))
    return (t1, tn, t1 / tn if t1 and tn else None)


def huge_names(sessions):
    return [s.stream.name for s in sessions
            if s.stream.name.startswith("huge-") and
            any(p.runs for p in s.points)]


def huge_table(sessions, n):
    names = huge_names(sessions)
    if not names:
        return []
    ref = speedup(sessions, "reference", n)
    out = ["Parallel speed-up: T(parallel, 1 thread) / T(parallel, %d "
           "threads); the copy floor's likewise.  The reference stream's "
           "(2,000 views; experiments 1 and 4) is the yardstick: a huge "
           "view must be split between the workers as many small views "
           "are." % n, "",
           "| file | views | parallel, 1 thread ms | parallel, %d threads ms "
           "| parallel speed-up | copy floor speed-up | speed-up / "
           "reference's |" % n, "|---|---|---|---|---|---|---|"]
    rows = [("reference", ref)] + [(name, speedup(sessions, name, n))
                                   for name in names]
    for name, (t1, tn, su) in rows:
        s = find_point(sessions, name, "warm", lambda p: True)[0]
        f1 = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == 1)
        fn = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == n)
        rel = su / ref[2] if su and ref[2] and name != "reference" else None
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            name, s.stream.views if s else "", ms(t1) if t1 else "",
            ms(tn) if tn else "", fmt_ratio(su),
            fmt_ratio(f1 / fn if f1 and fn else None), fmt_ratio(rel)))
    return out + [""]


def process_table(sessions, n):
    """Experiment 8: the whole process against the load it reports, and
    the fixed costs, on the warm reference session."""
    rows = table_rows(sessions, 8, timed=False)
    if not rows:
        return []

    def rank(row):
        p = row[1]
        if p.tool == "parload-version":
            return 0
        if p.stream is not None:
            return 1
        return 2 if not p.verify else 3

    out = ["*process wall*: measured by this harness from just before it "
           "spawns the process until it has reaped it (perf_counter around "
           "Popen and wait4), so it includes the fork and exec of a child "
           "of a Python process, the dynamic linking, and everything the "
           "program does before and after the load.  *reported load*: the "
           "`seconds` the process reports (open until complete).  *peak "
           "RSS*: the child's ru_maxrss from wait4.  Medians over the runs; "
           "*wall - load* is the difference of the medians.  `parload FILE` "
           "runs as a user runs it, without --verify-seed, whose check "
           "would be inside the wall measured; it is still checked for "
           "every view and byte, and the same load verified against the "
           "generator is the next row, interleaved with it (its wall "
           "includes that check).  `parload --version` is the process "
           "alone; the 0-view file adds topology discovery, the thread "
           "pool, opening and reading a header, and exit.", "",
           "| point | file | process wall ms | reported load ms | "
           "wall - load ms | wall / load | peak RSS MiB | dataset bytes | "
           "RSS - dataset MiB |",
           "|---|---|---|---|---|---|---|---|---|"]
    floors = []
    for s, p, t in sorted(rows, key=rank):
        st = p.file(s)
        wall, load, rss = t["wall"], t["median"], t["peak_rss_kib"]
        on_floor = (rss is not None and t["harness_rss_kib"] is not None and
                    rss <= t["harness_rss_kib"] + 2048)
        if on_floor:
            floors.append(t["harness_rss_kib"])
        dataset = None if p.tool == "parload-version" else st.dataset
        label = p.label()
        if p.stream:
            label = label.replace(", file %s" % p.stream.name, "")
        elif p.tool == "parload" and p.verify:
            label += ", --verify-seed (the wall holds the check)"
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, "" if dataset is None else st.name, ms(wall),
            ms(load) if load is not None else "",
            ms(wall - load) if load is not None else "",
            "%.2f" % (wall / load) if load and st.views else "",
            (mib(rss) + ("*" if on_floor else "")) if rss else "",
            "" if dataset is None else "%d" % dataset,
            "" if dataset is None or rss is None or on_floor
            else "%+.1f" % (rss / 1024 - dataset / MIB)))
    out.append("")
    if floors:
        out += ["\\*: at the harness's own resident size when it spawned the "
                "process (about %s MiB): Linux gives a child that stays below "
                "the peak of the process that spawned it that peak (exec "
                "carries it over), so the process used at most this much.  "
                "The harness resets its own peak before each spawn." %
                mib(max(floors)), ""]
    return out


def targets(sessions, n):
    """The performance targets, in order: each measured, with
    its ratio and met or not, or said not to be measured in this run."""
    lines = []

    def verdict(ok):
        return "met" if ok else "NOT met"

    def missing(num, what, exps):
        lines.append("- %d. %s: not measured in this run (experiment%s %s)."
                     % (num, what, "s" if "," in exps or " or " in exps
                        else "", exps))

    def ref(pred, field="seconds"):
        return find_median(sessions, "reference", "warm", pred, field)

    def get(name, cache, pred):
        return find_median(sessions, name, cache, pred)

    def par(p):
        return p.is_parallel(n)

    def floor_n(p):
        return p.tool == "copyfloor" and p.threads == n

    # 1. The reference stream.
    v2 = ref(Point.is_v2_posix)
    pr = ref(par)
    fl = ref(floor_n)
    if v2 and pr and fl:
        lines.append("- 1. Reference stream: V2 POSIX time / parallel time = "
                     "%.2f (target >= 5, %s); parallel time / copy floor = "
                     "%.2f (target <= 2.2, %s).  Ceiling: V2 POSIX / copy "
                     "floor = %.2f, the lead of a load as fast as the copy "
                     "floor; a 5x lead needs a load that much faster than "
                     "the floor." % (
                         v2 / pr, verdict(v2 / pr >= 5), pr / fl,
                         verdict(pr / fl <= 2.2), v2 / fl))
    else:
        missing(1, "Reference stream", "1")
    v2k = ref(lambda p: is_flags(p, "sequential", ("--no-hugepages",)) and
              p.io == "posix" and p.buffer is None)
    if v2k and pr:
        lines.append("  - V2 POSIX with 4 KiB pages / parallel = %.2f "
                     "(informational: the article's own allocation, not "
                     "advised for huge pages; the verdict above is against "
                     "V2 POSIX as the target defines it, `--strategy "
                     "sequential --io posix`)." % (v2k / pr))

    # 2. Into memory the caller owns and has touched.
    pre = ref(lambda p: is_flags(p, "parallel", ("--preallocate",), n))
    pre4 = ref(lambda p: is_flags(p, "parallel", ("--preallocate",
                                                  "--no-hugepages"), n))
    if pre and fl:
        text = ("- 2. Into touched caller memory: parallel --preallocate "
                "time / copy floor = %.2f (target <= 1.15, %s)" % (
                    pre / fl, verdict(pre / fl <= 1.15)))
        if pre4:
            text += ("; with the caller's memory in 4 KiB pages "
                     "(--no-hugepages): %.2f (informational)" % (pre4 / fl))
        whole = ref(lambda p: p.tool == "copyfloor-whole" and p.threads == n)
        if whole:
            text += ("; against the copy floor into a touched file-sized "
                     "buffer (a destination that, like a loader's, does not "
                     "stay in the cache): %.2f (informational)" % (pre / whole))
        lines.append(text + ".")
    else:
        missing(2, "Into touched caller memory", "1")

    # 3. Tiny views.
    v2u = get("tiny", "warm", Point.is_v2_posix)
    v2s = get("tiny", "warm", lambda p: p.is_plain() and
              p.strategy == "sequential" and p.io == "stdio" and
              p.buffer is None)
    pt = get("tiny", "warm", par)
    if v2u and v2s and pt:
        lines.append("- 3. Tiny views: V2 POSIX unbuffered time / parallel "
                     "time = %.2f (target >= 12, %s); V2 stdio buffered time / "
                     "parallel time = %.2f (target >= 2.2, %s)." % (
                         v2u / pt, verdict(v2u / pt >= 12), v2s / pt,
                         verdict(v2s / pt >= 2.2)))
    else:
        missing(3, "Tiny views", "2")

    # 4. The view-size sweep.
    _, series = sweep_table(sessions)
    leads = [(b / p, size) for size, _, b, p, _, _ in series if b and p]
    if leads:
        worst = min(leads)
        text = ("- 4. View-size sweep: the smallest ratio best article "
                "strategy time / parallel time is %.2f, at %s (target >= "
                "1.5 at every size, %s)." % (worst[0], human_bytes(worst[1]),
                                             verdict(worst[0] >= 1.5)))
        # The ceiling column: best article / copy floor, the lead of a
        # load as fast as the copy floor.  Where it is under 1.5, a 1.5x
        # lead needs a load faster than the floor.
        capped = [(b / f, size) for size, _, b, _, f, _ in series
                  if b and f and b / f < 1.5]
        if capped:
            text += ("  At %s the best article strategy is within 1.5x of "
                     "the copy floor (ceiling %s): a 1.5x lead there needs "
                     "a load faster than the copy floor." % (
                         ", ".join(human_bytes(sz) for _, sz in capped),
                         ", ".join("%.2f" % c for c, _ in capped)))
        lines.append(text)
    else:
        missing(4, "View-size sweep", "3")

    # 5. Few, huge views: the same parallel speed-up as many small ones.
    names = huge_names(sessions)
    sus = [(name, speedup(sessions, name, n)[2]) for name in names]
    sus = [(name, su) for name, su in sus if su]
    if sus:
        ref_su = speedup(sessions, "reference", n)[2]
        text = ("- 5. Few, huge views: parallel speed-up T(1 thread) / "
                "T(%d threads) = %s" % (n, ", ".join(
                    "%.2f on %s" % (su, name) for name, su in sus)))
        if ref_su:
            worst = min(su / ref_su for _, su in sus)
            text += ("; on the reference stream %.2f; the smallest huge / "
                     "reference = %.2f (target >= 0.9, %s)." % (
                         ref_su, worst, verdict(worst >= 0.9)))
        else:
            text += ("; no verdict: the reference stream's parallel points "
                     "with 1 and %d threads were not run (experiment 1 or "
                     "4)." % n)
        lines.append(text)
    else:
        missing(5, "Few, huge views", "7")

    # 6. The whole process.
    s6, dp = find_point(sessions, "reference", "warm", is_default_process)
    if dp:
        wall, load = median(dp, "wall"), median(dp)
        rss = median(dp, "peak_rss_kib")
        ds = dp.file(s6).dataset
        text = ("- 6. Whole process: `parload FILE` process wall / reported "
                "load = %.2f (target <= 1.15, %s)" % (
                    wall / load, verdict(wall / load <= 1.15)))
        if rss:
            extra = rss * KIB - ds
            text += ("; peak RSS %s MiB = dataset %s MiB %+.1f MiB (target "
                     "<= dataset + 16 MiB, %s)" % (
                         mib(rss), mib(ds / KIB), extra / MIB,
                         verdict(extra <= 16 * MIB)))
        lines.append(text + ".")
    else:
        missing(6, "Whole process", "8")

    # 7. Cold cache.
    pc = get("reference", "cold", par)
    peers = [x for x in (get("reference", "cold", lambda p: p.tool == "dd"),
                         get("reference", "cold", lambda p: p.tool == "fio"))
             if x]
    if pc and peers:
        best = min(peers)
        lines.append("- 7. Cold cache: time of the better of dd and fio / "
                     "parallel time = %.2f (target >= 0.95, %s)." % (
                         best / pc, verdict(best / pc >= 0.95)))
    else:
        missing(7, "Cold cache", "5")

    # 8. Thread scaling, measurable up to the machine's cores.
    sc = scaling(sessions)
    p1 = sc.get(1, (None, None))[0]
    # t = 1 is 100% by definition: the target is about 2 <= t <= cores.
    effs = [(efficiency(p1, t, sc[t][0]), t) for t in sorted(sc)
            if 1 < t <= n and sc[t][0]]
    effs = [(e, t) for e, t in effs if e]
    if n == 1 and p1:
        lines.append("- 8. Thread scaling: this machine has 1 core; there "
                     "is no efficiency to measure (no verdict).")
    elif p1 and effs and effs[-1][1] == n:
        worst = min(effs)
        f1 = sc.get(1, (None, None))[1]
        fe = efficiency(f1, n, sc.get(n, (None, None))[1])
        span = "t = 2" if n == 2 else "every t from 2 to %d" % n
        lines.append("- 8. Thread scaling (warm): parallel efficiency "
                     "T(1) / (t x T(t)) = %s at t = %d, the cores%s "
                     "(target >= 70%% at %s, %s)%s.  This machine has %d "
                     "cores: the efficiency can be measured only up to %d "
                     "threads." % (
                         pct(effs[-1][0]), n,
                         "; the lowest is %s, at t = %d" % (
                             pct(worst[0]), worst[1])
                         if len(effs) > 1 else "", span,
                         verdict(worst[0] >= 0.7),
                         "; copy floor at t = %d: %s" % (n, pct(fe))
                         if fe else "", n, n))
    else:
        missing(8, "Thread scaling", "4")
    return lines


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def summary_rows(sessions):
    rows = []
    for s in sessions:
        for p in s.points:
            if not p.runs:
                continue
            t = point_stats(s, p)
            row = point_fields(s, p)
            row.update({
                "runs": len(p.runs),
                "median_seconds": blank(t["median"], "%.9f"),
                "q1_seconds": blank(t["q1"], "%.9f"),
                "q3_seconds": blank(t["q3"], "%.9f"),
                "gbps": blank(t["gbps"], "%.3f"),
                "read_calls": blank(t["read_calls"], "%d"),
                "speedup_vs_v2_posix": blank(t["vs_v2"], "%.4f"),
                "time_vs_copy_floor": blank(t["vs_floor"], "%.4f"),
                "median_wall_seconds": blank(t["wall"], "%.6f"),
                "median_peak_rss_kib": blank(t["peak_rss_kib"], "%d"),
            })
            rows.append(row)
    return rows


# --------------------------------------------------------------------------
# Plots (gnuplot).

def gp_quote(s):
    return '"%s"' % s.replace('"', "'")


def plot_bars(tools, out, name, title, rows):
    if not rows:
        return None
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        for s, p, t in rows:
            label = p.label()
            if name in ("exp5", "exp6"):
                label = "%s, %s" % (label, s.cache)
            elif name == "exp7":
                label = "%s: %s" % (s.stream.name, label)
            f.write("%s %.6f %.6f %.6f\n" % (gp_quote(label), t["median"] * 1e3,
                                             t["q1"] * 1e3, t["q3"] * 1e3))
    width = max(900, 60 * len(rows) + 200)
    script = """
set terminal {term} size {w},650
set output {png}
set title {title}
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set boxwidth 0.8
set ylabel "ms from open to complete (median; whiskers: middle 50%)"
set yrange [0:*]
set xtics rotate by -40 scale 0 font ",9"
set grid ytics
set bmargin 12
plot {dat} using 2:3:4:xtic(1) notitle lc rgb "#3b6ea8"
""".format(term=TERM, w=width, png=gp_quote(os.path.join(out, name + ".png")),
           title=gp_quote(title), dat=gp_quote(dat))
    return run_gnuplot(tools, out, name, script)


def run_gnuplot(tools, out, name, script):
    gp = os.path.join(out, name + ".gp")
    with open(gp, "w") as f:
        f.write(script)
    r = subprocess.run([tools.gnuplot, gp], capture_output=True, text=True)
    if r.returncode != 0:
        log("  gnuplot failed for %s: %s" % (name, r.stderr.strip()[-300:]))
        return None
    return name + ".png"


def plot_sweep(tools, out, series):
    if not series:
        return []
    dat = os.path.join(out, "exp3.dat")
    with open(dat, "w") as f:
        f.write("# payload r_v2posix r_v2stdio r_v3posix r_v3stdio best_ms "
                "parallel_ms floor_ms v2posix_ms\n")
        for size, ratios, best, par, floor, v2 in series:
            vals = ["%.4f" % r if r else "NaN" for r in ratios]
            vals += ["%.4f" % (x * 1e3) if x else "NaN"
                     for x in (best, par, floor, v2)]
            f.write("%d %s\n" % (size, " ".join(vals)))
    common = """
set terminal {term} size 1000,600
set logscale x 2
set format x "%.0b%B"
set xlabel "view payload (bytes)"
set grid
set key outside right
""".format(term=TERM)
    a = common + """
set output {png}
set title "Unbuffered / buffered time (above 1: the buffer wins)"
set ylabel "time ratio unbuffered / buffered"
set logscale y 2
plot {dat} using 1:2 with linespoints title "V2 posix (own 4 KiB)", \\
     {dat} using 1:3 with linespoints title "V2 stdio", \\
     {dat} using 1:4 with linespoints title "V3 posix (own 4 KiB)", \\
     {dat} using 1:5 with linespoints title "V3 stdio", \\
     1 with lines lc rgb "black" notitle
""".format(png=gp_quote(os.path.join(out, "exp3-buffering.png")),
           dat=gp_quote(dat))
    b = common + """
set output {png}
set title "parload parallel against the best article strategy"
set ylabel "ms (median)"
set logscale y 10
plot {dat} using 1:7 with linespoints title "parallel", \\
     {dat} using 1:6 with linespoints title "best article strategy", \\
     {dat} using 1:9 with linespoints title "V2 posix", \\
     {dat} using 1:8 with linespoints title "copy floor"
""".format(png=gp_quote(os.path.join(out, "exp3-parallel.png")),
           dat=gp_quote(dat))
    return [x for x in (run_gnuplot(tools, out, "exp3-buffering", a),
                        run_gnuplot(tools, out, "exp3-parallel", b)) if x]


def plot_threads(tools, out, sessions):
    rows = {}
    for s in sessions:
        if s.stream.name != "reference":
            continue
        for p in s.points:
            if 4 in p.exps or (5 in p.exps and p.strategy == "parallel"):
                if not p.runs:
                    continue
                key = (p.tool, s.cache)
                rows.setdefault(key, []).append((p.threads, summary(p.runs)))
    if not rows:
        return None
    dat = os.path.join(out, "exp4.dat")
    plots = []
    with open(dat, "w") as f:
        for i, (key, pts) in enumerate(sorted(rows.items())):
            f.write("# %s %s\n" % key)
            for t, (med, q1, q3) in sorted(pts):
                f.write("%d %.6f %.6f %.6f\n" % (t, med * 1e3, q1 * 1e3, q3 * 1e3))
            f.write("\n\n")
            name = "parallel" if key[0] == "parload" else "copy floor"
            plots.append("%s index %d using 1:2:3:4 with yerrorlines title %s" % (
                gp_quote(dat), i, gp_quote("%s, %s cache" % (name, key[1]))))
    script = """
set terminal {term} size 1000,600
set output {png}
set title "Thread scaling on the reference stream"
set xlabel "threads"
set ylabel "ms (median; bars: middle 50%)"
set yrange [0:*]
set xtics 1
set grid
set key outside right
plot {plots}
""".format(term=TERM, png=gp_quote(os.path.join(out, "exp4.png")),
           plots=", \\\n     ".join(plots))
    return run_gnuplot(tools, out, "exp4", script)


# --------------------------------------------------------------------------
# The machine.

def sh(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                           shell=isinstance(cmd, str))
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def machine_text(args, tools, data_dir):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    nodes = [d for d in os.listdir("/sys/devices/system/node")
             if re.fullmatch(r"node\d+", d)] if os.path.isdir(
                 "/sys/devices/system/node") else []
    mem = sh("grep MemTotal /proc/meminfo")
    thp = sh("cat /sys/kernel/mm/transparent_hugepage/enabled")
    fs = sh(["stat", "-f", "-c", "%T", data_dir])
    mnt = sh(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "--target",
              data_dir]) if shutil.which("findmnt") else ""
    cc = sh(args.cc + " --version").splitlines()[0] if args.cc else "unknown"
    lines = [
        "date: %s" % datetime.datetime.now().isoformat(timespec="seconds"),
        "host: %s" % socket.gethostname(),
        "cpu: %s" % cpu,
        "cores (logical, online): %d" % (os.cpu_count() or 0),
        "cores this process may use: %d" % CORES,
        "numa nodes: %d" % max(1, len(nodes)),
        "memory: %s" % mem.replace("MemTotal:", "").strip(),
        "kernel: %s" % " ".join(platform.uname()),
        "transparent huge pages: %s" % thp,
        "data dir file system: %s %s" % (fs, ("(" + mnt + ")") if mnt else ""),
        "compiler: %s" % cc,
        "parload: %s" % sh([tools.parload, "--version"]).splitlines()[0],
        "python: %s" % platform.python_version(),
        "dd: %s" % (sh([tools.dd, "--version"]).splitlines()[0] if tools.dd else "missing"),
        "fio: %s" % (sh([tools.fio, "--version"]) if tools.fio else "missing"),
        "numpy: %s" % (sh([tools.numpy, "-c", "import numpy; print(numpy.__version__)"])
                       if tools.numpy else "missing"),
        "gnuplot: %s" % (sh([tools.gnuplot, "--version"]) if tools.gnuplot else "missing"),
        "mode: %s, %d runs per point" % ("quick" if args.quick else "full", args.runs),
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------

CORES = 1
TERM = "png"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parload", default=os.environ.get("PARLOAD_BIN", "parload"),
                    help="the parload command (default: $PARLOAD_BIN or parload)")
    ap.add_argument("--tools", default=HERE,
                    help="directory with the built copyfloor and evict helpers")
    ap.add_argument("--copyfloor", help="the copyfloor helper (default: TOOLS/copyfloor)")
    ap.add_argument("--evict", help="the evict helper (default: TOOLS/evict)")
    ap.add_argument("--quick", action="store_true",
                    help="a few points, 3 runs each, results in a temporary "
                         "directory unless --out (CI)")
    ap.add_argument("--runs", type=int, help="runs per point (default 10, 3 with --quick)")
    ap.add_argument("--out", help="results directory (default "
                    "bench/results/DATE-HOST)")
    ap.add_argument("--data-dir", default=os.environ.get("PARLOAD_BENCH_DIR"),
                    help="where to generate the data (default: $PARLOAD_BENCH_DIR "
                         "or OUT/data)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated data")
    ap.add_argument("--only", help="comma-separated experiments to run (1-8)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"),
                    help="the compiler, for machine.txt")
    ap.add_argument("--numpy-python", help="a python3 with numpy for the numpy peer")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and exit")
    args = ap.parse_args()

    if args.runs is None:
        args.runs = 3 if args.quick else 10
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    args.copyfloor = args.copyfloor or os.path.join(args.tools, "copyfloor")
    args.evict = args.evict or os.path.join(args.tools, "evict")
    for tool in (args.copyfloor, args.evict):
        if not os.access(tool, os.X_OK):
            sys.exit("run.py: %s is not built (make bench builds it)" % tool)
    if not shutil.which(args.parload) and not os.access(args.parload, os.X_OK):
        sys.exit("run.py: no parload command at %s" % args.parload)
    only = set(int(x) for x in args.only.split(",")) if args.only else set()

    snapshot = tempfile.mkdtemp(prefix="parload-bench-bin-")
    try:
        try:
            snapshot_programs(args, snapshot)
        except (OSError, shutil.Error) as e:
            sys.exit("run.py: cannot copy the programs under test: %s" % e)
        return run(args, only)
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def run(args, only):
    global CORES, TERM
    CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)
    tools = Tools(args)
    if tools.gnuplot:
        terms = sh([tools.gnuplot, "-e", "set terminal"])
        TERM = "pngcairo" if "pngcairo" in terms else "png"

    sessions = plan(args.quick, CORES, tools, only)
    if args.quick and tools.numpy:
        tools.missing.append("numpy (left out of --quick: about a second "
                             "per run)")
    if args.dry_run:
        total = 0
        for s in sessions:
            log("  %s: %s, %s: %d points" % (s.stream.name,
                                             s.stream.describe(), s.cache,
                                             len(s.points)))
            for f in s.streams()[1:]:
                log("    (and file %s: %s)" % (f.name, f.describe()))
            for p in s.points:
                log("    %-62s exps %s" % (p.label(), sorted(p.exps)))
            total += len(s.points) * args.runs
        log("%d measurements" % total)
        return 0

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())
    temp_out = None
    if args.out:
        out = args.out
    elif args.quick:
        out = temp_out = tempfile.mkdtemp(prefix="parload-bench-quick-")
    else:
        out = os.path.join("bench", "results", "%s-%s" % (stamp, host))
    os.makedirs(out, exist_ok=True)
    data_dir = args.data_dir or os.path.join(out, "data")
    made_data_dir = not os.path.isdir(data_dir)
    os.makedirs(data_dir, exist_ok=True)

    machine = machine_text(args, tools, data_dir)
    t_start = time.perf_counter()
    log("parload bench (%s): %d runs per point, %d cores, results in %s" % (
        "quick" if args.quick else "full", args.runs, CORES, out))
    for m in tools.missing:
        log("  skipped: " + m)

    rows = []
    failure = None
    try:
        for s in sessions:
            for f in s.streams():
                generate(tools, f, data_dir)
        for s in sessions:
            run_session(tools, s, args.runs, rows)
    except (BenchError, OSError) as e:
        failure = str(e)
        log("run.py: " + failure)
    finally:
        if not args.keep:
            for s in sessions:
                for f in s.streams():
                    for path in (f.path, (f.path or "") + ".ok"):
                        if path and os.path.exists(path):
                            os.remove(path)
            if made_data_dir:
                try:
                    os.rmdir(data_dir)
                except OSError:
                    pass

    # ---- write everything ----
    write_csv(os.path.join(out, "runs.csv"), rows, RUN_FIELDS)
    srows = summary_rows(sessions)
    if srows:
        write_csv(os.path.join(out, "summary.csv"), srows, list(srows[0]))
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write(machine)

    md = ["# parload bench, %s" % stamp, "",
          "Machine: see machine.txt.  %s mode, %d runs per point, %d cores.  "
          "Times are from opening the file until the dataset is complete, "
          "measured by each fresh process and verified in it (all but the "
          "whole-process point of experiment 8, which says why).  "
          "*vs V2 POSIX*: "
          "how many times faster than the article's best loader "
          "(`--strategy sequential --io posix`) on the same file and cache "
          "state; *vs copy floor*: time over the copy floor "
          "(bench/copyfloor with one thread per core) on the same file "
          "and cache state." % ("Quick" if args.quick else "Full", args.runs,
                                CORES), ""]
    if failure:
        md += ["**The run stopped early: %s**" % failure, ""]
    for m in tools.missing:
        md.append("- skipped: " + m)
    if tools.missing:
        md.append("")
    plots = {}
    for exp in sorted(EXPERIMENTS):
        rows_e = table_rows(sessions, exp, timed=exp != 8)
        if not rows_e:
            continue
        md += ["## %d. %s" % (exp, EXPERIMENTS[exp]), ""]
        if exp != 3:
            described = []
            for s, p, _ in rows_e:
                f = p.file(s)
                if p.tool != "parload-version" and f.name not in described:
                    described.append(f.name)
                    md.append("File %s: %s." % (f.name, f.describe()))
            md.append("")
        if any(p.extra for _, p, _ in rows_e):
            md += ["*4 KiB pages*: `--no-hugepages`, the arrays are not "
                   "advised for transparent huge pages (V2 so is the "
                   "article's own allocation; every other point is "
                   "advised).  *into touched caller memory*: "
                   "`--preallocate`, the process allocates the arrays and "
                   "touches every page before the clock starts, then loads "
                   "into them, as a program that reuses its buffers does.  "
                   "The 4 KiB-page points run last, in a session of their "
                   "own with a copy floor of its own: a load that runs for "
                   "most of a second slows the next fresh-memory load on a "
                   "virtual machine that hands free memory back to its host "
                   "(bench/README.md).", ""]
        if exp == 3:
            table, series = sweep_table(sessions)
            md += ["Each file about %s.  Columns 3-6: time unbuffered / "
                   "buffered (POSIX: the loader's own 4 KiB buffer; stdio: "
                   "its default buffer); above 1 the buffer wins.  Speed-up: "
                   "best article strategy time / parallel time.  Ceiling: "
                   "best article strategy time / copy floor, the lead of a "
                   "load as fast as the copy floor." %
                   human_bytes(sweep_target(args.quick)), ""]
            md += table + [""]
            md += ["<details><summary>every point</summary>", ""]
            md += markdown_table(rows_e, True) + ["", "</details>", ""]
            if tools.gnuplot:
                plots[3] = plot_sweep(tools, out, series)
        elif exp == 8:
            md += process_table(sessions, CORES)
        else:
            md += markdown_table(rows_e, exp in (5, 6, 7)) + [""]
            if exp == 4:
                md += scaling_table(sessions, CORES)
            if exp == 7:
                md += huge_table(sessions, CORES)
            if tools.gnuplot:
                if exp == 4:
                    p = plot_threads(tools, out, sessions)
                else:
                    p = plot_bars(tools, out, "exp%d" % exp,
                                  "%d. %s" % (exp, EXPERIMENTS[exp]), rows_e)
                plots[exp] = [p] if p else []
        for png in plots.get(exp, []):
            md += ["![experiment %d](%s)" % (exp, png), ""]
    tl = targets(sessions, CORES)
    if tl:
        md += ["## Performance targets measured here", ""] + tl + [""]
    elapsed = time.perf_counter() - t_start
    md += ["Bench time: %.0f s." % elapsed, ""]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))

    log("done in %.0f s" % elapsed)
    if temp_out:
        sys.stdout.write("\n".join(md) + "\n")
        shutil.rmtree(temp_out, ignore_errors=True)
    else:
        log("results: %s" % os.path.join(out, "results.md"))
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
