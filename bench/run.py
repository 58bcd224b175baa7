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
        self.size = 64 + views * (32 + self.payload)
        self.path = None

    def describe(self):
        return "%d views of %d x %d %s (%s payloads, %s)" % (
            self.views, self.width, self.height, self.ptype,
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


class Point:
    def __init__(self, tool, exps, strategy=None, io=None, buffer=None,
                 threads=1):
        self.tool = tool          # parload, copyfloor, dd, fio, numpy
        self.exps = set(exps)     # experiments that report it
        self.strategy, self.io, self.buffer = strategy, io, buffer
        self.threads = threads
        self.runs = []            # dicts: seconds, wall, read_calls, bytes_read

    @property
    def key(self):
        return (self.tool, self.strategy, self.io, self.buffer, self.threads)

    def buffer_text(self):
        if self.tool != "parload" or self.strategy in ("parallel", "mmap"):
            return ""
        if self.buffer == 0 or (self.buffer is None and self.io == "posix"):
            return "none"
        if self.buffer is None:
            return "stdio default"
        return human_bytes(self.buffer) + (" (own)" if self.io == "posix"
                                           else " (setvbuf)")

    def label(self):
        if self.tool == "copyfloor":
            return "copy floor, %d thread%s" % (self.threads,
                                                "s" if self.threads > 1 else "")
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

    def is_v2_posix(self):
        return (self.tool == "parload" and self.strategy == "sequential" and
                self.io == "posix" and self.buffer in (None, 0))

    def is_article(self):
        return self.tool == "parload" and self.strategy in V


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
            m = re.match(r"\s*(libparload\S*)\s+=>\s+(\S+)", line)
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


def run_process(cmd, env=None):
    for attempt in range(4):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        # A program that could not even start because its shared library
        # is being relinked (a build running in the same tree) measured
        # nothing: wait and start it again.  Any other failure counts.
        if r.returncode != 127 or \
                "error while loading shared libraries" not in r.stderr:
            break
        time.sleep(2)
    return r, wall


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise BenchError("no JSON in output: %r" % text[-300:])


def measure(tools, p, stream):
    path = stream.path
    if p.tool == "parload":
        cmd = [tools.parload, "--json", "--threads", str(p.threads),
               "--strategy", p.strategy]
        if p.strategy not in ("parallel", "mmap"):
            cmd += ["--io", p.io]
            if p.buffer is not None:
                cmd += ["--buffer", str(p.buffer)]
        cmd += ["--verify-seed", str(stream.seed), path]
        r, wall = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("%s failed (exit %d): %s" % (
                " ".join(cmd), r.returncode, r.stderr.strip()))
        d = last_json(r.stdout)
        if d.get("verified") is not True or d.get("bytes") != stream.size:
            raise BenchError("%s: load not verified: %s" % (" ".join(cmd), d))
        return {"seconds": float(d["seconds"]), "wall": wall,
                "read_calls": d.get("read_calls"),
                "bytes_read": d.get("bytes_read")}
    if p.tool == "copyfloor":
        cmd = [tools.copyfloor, "--threads", str(p.threads), path]
        r, wall = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
        d = last_json(r.stdout)
        if d.get("bytes") != stream.size or d.get("verified") is not True:
            raise BenchError("copy floor read %s of %d bytes" %
                             (d.get("bytes"), stream.size))
        return {"seconds": float(d["seconds"]), "wall": wall,
                "read_calls": None, "bytes_read": d["bytes"]}
    if p.tool == "dd":
        env = dict(os.environ, LC_ALL="C")
        cmd = [tools.dd, "if=" + path, "of=/dev/null", "bs=1M"]
        r, wall = run_process(cmd, env)
        m = re.search(r"^(\d+) bytes .*copied, ([0-9.e+-]+) s", r.stderr,
                      re.M)
        if r.returncode != 0 or not m:
            raise BenchError("dd failed: %s" % r.stderr.strip())
        if int(m.group(1)) != stream.size:
            raise BenchError("dd copied %s of %d bytes" %
                             (m.group(1), stream.size))
        return {"seconds": float(m.group(2)), "wall": wall,
                "read_calls": None, "bytes_read": int(m.group(1))}
    if p.tool == "fio":
        # --readonly always: a read job without it may lay out (write) the
        # file.  --invalidate=0: the harness decides what is cached.
        cmd = [tools.fio, "--name=seqread", "--filename=" + path,
               "--readonly", "--rw=read", "--bs=1M", "--ioengine=psync",
               "--numjobs=1", "--invalidate=0", "--size=%d" % stream.size,
               "--output-format=json"]
        r, wall = run_process(cmd)
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
        return {"seconds": secs, "wall": wall, "read_calls": rd["total_ios"],
                "bytes_read": rd["io_bytes"]}
    if p.tool == "numpy":
        cmd = [tools.numpy, os.path.join(HERE, "npload.py"), path,
               str(stream.seed)]
        r, wall = run_process(cmd)
        if r.returncode != 0:
            raise BenchError("numpy loader failed (exit %d): %s %s" % (
                r.returncode, r.stdout.strip(), r.stderr.strip()))
        d = last_json(r.stdout)
        if d.get("verified") is not True or d.get("bytes") != stream.size:
            raise BenchError("numpy load not verified: %s" % d)
        return {"seconds": float(d["seconds"]), "wall": wall,
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


def run_session(tools, s, runs, out_rows):
    st = s.stream
    log("  %s, %s cache: %d points x %d runs" % (st.describe(), s.cache,
                                                len(s.points), runs))
    if s.cache == "warm":
        # One untimed pass so that every timed run finds the file cached.
        measure(tools, Point("copyfloor", [], threads=1), st)
    for run in range(runs):
        for p in s.points:
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


def csv_row(s, p, m):
    st = s.stream
    return {
        "experiments": " ".join(str(e) for e in sorted(p.exps)),
        "point": p.label(), "tool": p.tool, "strategy": p.strategy or "",
        "io": p.io or "", "buffer": p.buffer_text(), "threads": p.threads,
        "cache": s.cache, "file": st.name, "views": st.views,
        "payload_bytes": st.payload, "file_bytes": st.size,
        "run": m.get("run", ""), "seconds": "%.9f" % m["seconds"],
        "wall_seconds": "%.6f" % m["wall"],
        "read_calls": "" if m["read_calls"] is None else m["read_calls"],
        "bytes_read": "" if m["bytes_read"] is None else m["bytes_read"],
    }


# --------------------------------------------------------------------------
# The experiments.

def sweep_target(quick):
    return 16 * MIB if quick else 64 * MIB


def plan(quick, cores, tools, only):
    """Sessions, in the order they run (cold last: warm data stays warm)."""
    n = cores
    ref = Stream("reference", 2000, 896, 64, "u16", seed=1)
    tiny = Stream("tiny", 200000, 128, 1, "u16", seed=2)
    apis = ("posix", "stdio")
    sessions = []

    def want(e):
        return not only or e in only

    # Experiments 1, 4 and 6 (warm) share the reference stream.
    pts = []
    if want(1):
        strategies = ("sequential",) if quick else ("bulk", "sequential",
                                                     "two-pass")
        for s in strategies:
            for io in apis:
                pts.append(Point("parload", [1], s, io))
        if not quick:
            pts.append(Point("parload", [1], "mmap"))
        pts.append(Point("parload", [1], "parallel", threads=1))
        pts.append(Point("parload", [1], "parallel", threads=n))
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
    if pts:
        sessions.append(Session(ref, "warm", pts))

    # Experiment 2: buffering on tiny views.
    if want(2):
        pts = []
        strategies = ("sequential",) if quick else ("bulk", "sequential",
                                                     "two-pass")
        for s in strategies:
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

    # Experiment 5: cold cache, experiments 1 and 4 again, with floors.
    if want(5):
        pts = []
        strategies = ("sequential",) if quick else ("bulk", "sequential",
                                                     "two-pass")
        for s in strategies:
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
}


# --------------------------------------------------------------------------
# Reporting.

def ms(x):
    return "%.2f" % (x * 1e3) if x < 10 else "%.0f" % (x * 1e3)


def point_stats(s, p):
    sm = summary(p.runs)
    med, q1, q3 = sm
    v2 = s.find(Point.is_v2_posix)
    floor = s.find(lambda q: q.tool == "copyfloor" and
                   q.threads == CORES)
    calls = summary(p.runs, "read_calls") if p.tool == "parload" else None
    return {
        "median": med, "q1": q1, "q3": q3,
        "gbps": s.stream.size / med / 1e9 if med > 0 else 0.0,
        "vs_v2": summary(v2.runs)[0] / med if v2 else None,
        "vs_floor": med / summary(floor.runs)[0] if floor else None,
        "read_calls": calls[0] if calls else None,
    }


def fmt_ratio(x):
    return "" if x is None else "%.2fx" % x


def table_rows(sessions, exp):
    rows = []
    for s in sessions:
        for p in s.points:
            if exp in p.exps and p.runs:
                rows.append((s, p, point_stats(s, p)))
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
           "parallel ms | parallel speed-up | parallel vs copy floor |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
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
        par = med(lambda p: p.strategy == "parallel")
        floor = med(lambda p: p.tool == "copyfloor")
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            human_bytes(st.payload), st.views,
            *[("%.2f" % r if r else "") for r in ratios],
            "%s (buffer: %s)" % (best.label(), best.buffer_text() or "-")
            if best else "",
            ms(best_ms) if best_ms else "", ms(par) if par else "",
            fmt_ratio(best_ms / par if best_ms and par else None),
            fmt_ratio(par / floor if par and floor else None)))
        series.append((st.payload, ratios, best_ms, par, floor,
                       med(Point.is_v2_posix)))
    return out, series


def targets(sessions, n):
    """The performance targets that this run measures, met or not."""
    lines = []

    def get(name, cache, pred):
        for s in sessions:
            if s.stream.name == name and s.cache == cache:
                p = s.find(pred)
                if p:
                    return summary(p.runs)[0]
        return None

    def par(p):
        return p.strategy == "parallel" and p.threads == n

    def verdict(ok):
        return "met" if ok else "NOT met"

    v2 = get("reference", "warm", Point.is_v2_posix)
    pr = get("reference", "warm", par)
    fl = get("reference", "warm", lambda p: p.tool == "copyfloor" and p.threads == n)
    if v2 and pr and fl:
        lines.append("- 1. Reference stream: V2 POSIX time / parallel time = "
                     "%.2f (target >= 5, %s); parallel time / copy floor = "
                     "%.2f (target <= 2.2, %s)." % (v2 / pr, verdict(v2 / pr >= 5),
                                                    pr / fl, verdict(pr / fl <= 2.2)))
    v2u = get("tiny", "warm", Point.is_v2_posix)
    v2s = get("tiny", "warm", lambda p: p.tool == "parload" and
              p.strategy == "sequential" and p.io == "stdio" and p.buffer is None)
    pt = get("tiny", "warm", par)
    if v2u and v2s and pt:
        lines.append("- 3. Tiny views: V2 POSIX unbuffered time / parallel "
                     "time = %.2f (target >= 12, %s); V2 stdio buffered time / "
                     "parallel time = %.2f (target >= 2.2, %s)." % (
                         v2u / pt, verdict(v2u / pt >= 12), v2s / pt,
                         verdict(v2s / pt >= 2.2)))
    _, series = sweep_table(sessions)
    leads = [(b / p, size) for size, _, b, p, _, _ in series if b and p]
    if leads:
        worst = min(leads)
        lines.append("- 4. View-size sweep: the smallest ratio best article "
                     "strategy time / parallel time is %.2f, at %s (target >= "
                     "1.5 at every size, %s)." % (worst[0],
                                                   human_bytes(worst[1]),
                                                   verdict(worst[0] >= 1.5)))
    pc = get("reference", "cold", par)
    peers = [x for x in (get("reference", "cold", lambda p: p.tool == "dd"),
                         get("reference", "cold", lambda p: p.tool == "fio"))
             if x]
    if pc and peers:
        best = min(peers)
        lines.append("- 7. Cold cache: time of the better of dd and fio / "
                     "parallel time = %.2f (target >= 0.95, %s)." % (
                         best / pc, verdict(best / pc >= 0.95)))
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
            rows.append({
                "experiments": " ".join(str(e) for e in sorted(p.exps)),
                "point": p.label(), "tool": p.tool,
                "strategy": p.strategy or "", "io": p.io or "",
                "buffer": p.buffer_text(), "threads": p.threads,
                "cache": s.cache, "file": s.stream.name,
                "views": s.stream.views, "payload_bytes": s.stream.payload,
                "file_bytes": s.stream.size, "runs": len(p.runs),
                "median_seconds": "%.9f" % t["median"],
                "q1_seconds": "%.9f" % t["q1"], "q3_seconds": "%.9f" % t["q3"],
                "gbps": "%.3f" % t["gbps"],
                "read_calls": "" if t["read_calls"] is None else "%d" % t["read_calls"],
                "speedup_vs_v2_posix": "" if t["vs_v2"] is None else "%.4f" % t["vs_v2"],
                "time_vs_copy_floor": "" if t["vs_floor"] is None else "%.4f" % t["vs_floor"],
            })
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
    ap.add_argument("--only", help="comma-separated experiments to run (1-6)")
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
            log("  %s, %s: %d points" % (s.stream.describe(), s.cache,
                                         len(s.points)))
            for p in s.points:
                log("    %-40s exps %s" % (p.label(), sorted(p.exps)))
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
            generate(tools, s.stream, data_dir)
        for s in sessions:
            run_session(tools, s, args.runs, rows)
    except (BenchError, OSError) as e:
        failure = str(e)
        log("run.py: " + failure)
    finally:
        if not args.keep:
            for s in sessions:
                for path in (s.stream.path, (s.stream.path or "") + ".ok"):
                    if path and os.path.exists(path):
                        os.remove(path)
            if made_data_dir:
                try:
                    os.rmdir(data_dir)
                except OSError:
                    pass

    # ---- write everything ----
    fields = ["experiments", "point", "tool", "strategy", "io", "buffer",
              "threads", "cache", "file", "views", "payload_bytes",
              "file_bytes", "run", "seconds", "wall_seconds", "read_calls",
              "bytes_read"]
    write_csv(os.path.join(out, "runs.csv"), rows, fields)
    srows = summary_rows(sessions)
    if srows:
        write_csv(os.path.join(out, "summary.csv"), srows, list(srows[0]))
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write(machine)

    md = ["# parload bench, %s" % stamp, "",
          "Machine: see machine.txt.  %s mode, %d runs per point, %d cores.  "
          "Times are from opening the file until the dataset is complete, "
          "measured by each fresh process and verified in it.  *vs V2 POSIX*: "
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
        rows_e = table_rows(sessions, exp)
        if not rows_e:
            continue
        md += ["## %d. %s" % (exp, EXPERIMENTS[exp]), ""]
        if exp != 3:
            described = []
            for s, _, _ in rows_e:
                if s.stream.name not in described:
                    described.append(s.stream.name)
                    md.append("File %s: %s." % (s.stream.name,
                                                s.stream.describe()))
            md.append("")
        if exp == 3:
            table, series = sweep_table(sessions)
            md += ["Each file about %s.  Columns 3-6: time unbuffered / "
                   "buffered (POSIX: the loader's own 4 KiB buffer; stdio: "
                   "its default buffer); above 1 the buffer wins.  Speed-up: "
                   "best article strategy time / parallel time." %
                   human_bytes(sweep_target(args.quick)), ""]
            md += table + [""]
            md += ["<details><summary>every point</summary>", ""]
            md += markdown_table(rows_e, True) + ["", "</details>", ""]
            if tools.gnuplot:
                plots[3] = plot_sweep(tools, out, series)
        else:
            md += markdown_table(rows_e, exp in (5, 6)) + [""]
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
