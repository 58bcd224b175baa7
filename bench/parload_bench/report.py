"""Reporting: the medians and ratios of the points, the tables of
results.md, runs.csv, summary.csv and machine.txt."""
import csv
import datetime
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess

from . import MIB, human_bytes
from .points import EXPERIMENTS, OVERLAP, Point, sweep_target

# --------------------------------------------------------------------------
# Medians, and finding the points a ratio is made of.


def summary(runs, field="seconds"):
    """(median, first quartile, third quartile) of one field of the runs,
    or None when no run has it."""
    xs = sorted(r[field] for r in runs if r.get(field) is not None)
    if not xs:
        return None
    med = statistics.median(xs)
    if len(xs) >= 2:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        q1 = q3 = xs[0]
    return med, q1, q3


def median(p, field="seconds"):
    """The median of one field of a point's runs; None when there is none
    (no point, no runs, or a field the point does not have)."""
    sm = summary(p.runs, field) if p else None
    return sm[0] if sm else None


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


def point_stats(s, p, n):
    """Medians and ratios of one point.  The time fields are None for a
    point that reports no time of its own (parload --version); the ratios
    to V2 POSIX and the copy floor (n threads) only for a point on its
    session's file."""
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
                              q.threads == n))
        t["vs_v2"] = v2 / med if v2 and med > 0 else None
        t["vs_floor"] = med / floor if floor else None
    if p.tool == "parload":
        t["read_calls"] = median(p, "read_calls")
    return t


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


def speedup(sessions, name, n):
    """(T(1), T(n), T(1) / T(n)) of the parallel loader on a warm file."""
    t1 = find_median(sessions, name, "warm", lambda p: p.is_parallel(1))
    tn = find_median(sessions, name, "warm", lambda p: p.is_parallel(n))
    return (t1, tn, t1 / tn if t1 and tn else None)


def huge_names(sessions):
    return [s.stream.name for s in sessions
            if s.stream.name.startswith("huge-") and
            any(p.runs for p in s.points)]


def sweep_series(sessions, n):
    """Experiment 3, one tuple per size: (payload, views, [unbuffered /
    buffered time of V2 posix, V2 stdio, V3 posix, V3 stdio], the best
    article point, its median, parallel (n threads), copy floor, V2
    POSIX)."""
    series = []
    for s in sessions:
        if not s.stream.name.startswith("sweep-"):
            continue

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
        best = min(article, key=lambda p: summary(p.runs)[0]) if article \
            else None
        series.append((s.stream.payload, s.stream.views, ratios, best,
                       summary(best.runs)[0] if best else None,
                       med(lambda p: p.is_parallel(n)),
                       med(lambda p: p.tool == "copyfloor"),
                       med(Point.is_v2_posix)))
    return series


# --------------------------------------------------------------------------
# Tables.

def ms(x):
    return "%.2f" % (x * 1e3) if x < 10 else "%.0f" % (x * 1e3)


def fmt_ratio(x):
    return "" if x is None else "%.2fx" % x


def pct(x):
    return "%.0f%%" % (x * 100)


def mib(kib):
    return "%.1f" % (kib / 1024)


def row(cells):
    return "| " + " | ".join(cells) + " |"


def head(cells):
    return [row(cells), "|" + "|".join("---" for _ in cells) + "|"]


def table_rows(sessions, exp, n, timed=True):
    """(session, point, stats) of every measured point of exp; timed: only
    those that report a time (all but parload --version)."""
    rows = []
    for s in sessions:
        for p in s.points:
            if exp in p.exps and p.runs:
                t = point_stats(s, p, n)
                if t["median"] is not None or not timed:
                    rows.append((s, p, t))
    return rows


def markdown_table(rows, with_file):
    cols = ["point", "buffer", "median ms", "middle 50% ms", "GB/s",
            "read calls", "vs V2 POSIX", "vs copy floor"]
    out = head((["file"] if with_file else []) + cols)
    for s, p, t in rows:
        cells = [p.label(), p.buffer_text(), ms(t["median"]),
                 "%s - %s" % (ms(t["q1"]), ms(t["q3"])), "%.2f" % t["gbps"],
                 "" if t["read_calls"] is None else "%d" % t["read_calls"],
                 fmt_ratio(t["vs_v2"]), fmt_ratio(t["vs_floor"])]
        if with_file:
            cells.insert(0, "%s (%s)" % (s.stream.name, s.cache))
        out.append(row(cells))
    return out


def sweep_table(series):
    """Experiment 3: the article's crossover and parload against the best
    article strategy at every size."""
    out = head(["view payload", "views", "unbuf/buf V2 posix", "V2 stdio",
                "V3 posix", "V3 stdio", "best article strategy", "its ms",
                "parallel ms", "parallel speed-up", "parallel vs copy floor",
                "ceiling"])
    for payload, views, ratios, best, best_ms, par, floor, _ in series:
        out.append(row(
            [human_bytes(payload), "%d" % views] +
            [("%.2f" % r if r else "") for r in ratios] +
            ["%s (buffer: %s)" % (best.label(), best.buffer_text() or "-")
             if best else "",
             ms(best_ms) if best_ms else "", ms(par) if par else "",
             fmt_ratio(best_ms / par if best_ms and par else None),
             fmt_ratio(par / floor if par and floor else None),
             fmt_ratio(best_ms / floor if best_ms and floor else None)]))
    return out


def scaling_table(sessions, n):
    sc = scaling(sessions)
    if not sc:
        return []
    p1, f1 = sc.get(1, (None, None))
    out = ["Parallel efficiency at t threads: T(1 thread) / (t x T(t)); "
           "100%% is perfect scaling.  This machine has %d core%s: beyond "
           "that, threads share cores and the efficiency must fall." %
           (n, "s" if n > 1 else ""), ""]
    out += head(["threads", "parallel ms", "parallel efficiency",
                 "copy floor ms", "copy floor efficiency"])
    for t in sorted(sc):
        pt, ft = sc[t]
        pe, fe = efficiency(p1, t, pt), efficiency(f1, t, ft)
        out.append(row(["%d" % t, ms(pt) if pt else "", pct(pe) if pe else "",
                        ms(ft) if ft else "", pct(fe) if fe else ""]))
    return out + [""]


def huge_table(sessions, n):
    names = huge_names(sessions)
    if not names:
        return []
    ref = speedup(sessions, "reference", n)
    out = ["Parallel speed-up: T(parallel, 1 thread) / T(parallel, %d "
           "threads); the copy floor's likewise.  The reference stream's "
           "(2,000 views; experiments 1 and 4) is the yardstick: a huge "
           "view must be split between the workers as many small views "
           "are." % n, ""]
    out += head(["file", "views", "parallel, 1 thread ms",
                 "parallel, %d threads ms" % n, "parallel speed-up",
                 "copy floor speed-up", "speed-up / reference's"])
    rows = [("reference", ref)] + [(name, speedup(sessions, name, n))
                                   for name in names]
    for name, (t1, tn, su) in rows:
        s = find_point(sessions, name, "warm", lambda p: True)[0]
        f1 = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == 1)
        fn = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == n)
        rel = su / ref[2] if su and ref[2] and name != "reference" else None
        out.append(row([name, "%d" % s.stream.views if s else "",
                        ms(t1) if t1 else "", ms(tn) if tn else "",
                        fmt_ratio(su),
                        fmt_ratio(f1 / fn if f1 and fn else None),
                        fmt_ratio(rel)]))
    return out + [""]


SELECTION_TEXT = (
    "Each selection side by side with the full load of the same file, "
    "runs interleaved: *parallel: SELECTION* is parload's own selection "
    "(`--views`, `--rows`, `--cols`, `--layout`, checked by --verify-seed); "
    "*numpy memmap+slice+copy* is bench/npselect.py (np.memmap with a "
    "structured record dtype, slicing, np.ascontiguousarray; for sinograms "
    "of the transpose), timed after numpy is imported; *parallel full load "
    "+ copy* is bench/selcopy (parload's full load, then a copy of the "
    "selection into an array of its own).  Every one checked against the "
    "generator.  *vs full*: time over the full load; *numpy / this*: how "
    "many times faster than numpy's; *read / needed*: bytes read over the "
    "file header, the selected views' headers and their selected rows "
    "(whole rows); *RSS - output*: peak RSS over the headers and pixels "
    "delivered.")


def selection_table(sessions, n):
    """Experiment 9: every selection point against the full load and
    numpy's, with bytes read and peak RSS over the output."""
    out = [SELECTION_TEXT, ""]
    out += head(["file", "point", "median ms", "middle 50% ms", "vs full",
                 "numpy / this", "MB read", "read / needed", "peak RSS MiB",
                 "output MiB", "RSS - output MiB"])
    for s in sessions:
        if not any(9 in p.exps and p.runs for p in s.points):
            continue
        st = s.stream
        full = median(s.find(lambda p: 9 in p.exps and p.is_parallel(n)))
        for p in s.points:
            if 9 not in p.exps or not p.runs:
                continue
            t = point_stats(s, p, n)
            med, rss = t["median"], t["peak_rss_kib"]
            npy = median(s.find(lambda q: q.tool == "npselect" and
                                q.select is p.select)) if p.select else None
            got = median(p, "bytes_read")
            outb = p.select.output(st) if p.select else st.dataset
            need = p.select.file_bytes(st) if p.select else st.size
            out.append(row([
                st.name, p.label(), ms(med),
                "%s - %s" % (ms(t["q1"]), ms(t["q3"])),
                fmt_ratio(med / full if full else None),
                fmt_ratio(npy / med if npy and p.tool != "npselect"
                          else None),
                "%.1f" % (got / 1e6) if got else "",
                "%.3f" % (got / need) if got else "",
                (mib(rss) + ("*" if on_floor(t) else "")) if rss else "",
                "%.1f" % (outb / MIB),
                "%+.1f" % (rss / 1024 - outb / MIB) if rss else ""]))
    return out + ["", "\\*: at the harness's own resident size (see "
                  "experiment 8): the process used at most this much.", ""]


PROCESS_TEXT = (
    "*process wall*: measured by this harness from just before it spawns "
    "the process until it has reaped it (perf_counter around Popen and "
    "wait4), so it includes the fork and exec of a child of a Python "
    "process, the dynamic linking, and everything the program does before "
    "and after the load.  *reported load*: the `seconds` the process "
    "reports (open until complete).  *peak RSS*: the child's ru_maxrss "
    "from wait4.  Medians over the runs; *wall - load* is the difference "
    "of the medians.  `parload FILE` runs as a user runs it, without "
    "--verify-seed, whose check would be inside the wall measured; it is "
    "still checked for every view and byte, and the same load verified "
    "against the generator is the next row, interleaved with it (its wall "
    "includes that check).  `parload --version` is the process alone; the "
    "0-view file adds topology discovery, the thread pool, opening and "
    "reading a header, and exit (with the default thread count, and with "
    "`--threads 1`: start-up).  V2 (`--strategy sequential`) runs here "
    "as a user runs it too, unverified, for the whole-process ratios; its "
    "verified twins are in experiments 1 and 2.  The rows marked [4 KiB-"
    "page session] ran in the session of the 4 KiB-page points (V2 as the "
    "article allocates, `--no-hugepages`), with `parload FILE` beside "
    "them.")


PYTHON_TEXT = (
    "*parload.load() in Python*: bench/pyload.py, the call in a fresh "
    "interpreter after numpy and parload are imported, timed around the "
    "call, then checked against the generator.  *numpy fromfile+copy*: "
    "bench/npload.py; *numpy memmap+slice+copy: whole file*: "
    "bench/npselect.py with no selection.  *import parload*: the time of "
    "`import parload` after `import numpy`, in a fresh interpreter.  *vs "
    "C*: time over the command's load of the same file (first row).")


def python_table(sessions, n):
    """Experiment 10: the Python module against the command and NumPy."""
    out = [PYTHON_TEXT, ""] + head(["file", "point", "median ms",
                                    "middle 50% ms", "vs C"])
    for s in sessions:
        c = median(s.find(lambda p: 10 in p.exps and p.is_parallel(n)))
        for p in s.points:
            if 10 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            out.append(row([s.stream.name, p.label(), ms(med),
                            "%s - %s" % (ms(q1), ms(q3)),
                            fmt_ratio(med / c) if c and
                            p.tool != "pyimport" else ""]))
    return out + [""]


STREAM_TEXT = (
    "*batches (on_batch)*: bench/batches, a load delivered in batches "
    "(`parload_request.on_batch`, `parload_loader_run`, about 4 MiB of "
    "pixels a batch), timed from just before the call until it returns "
    "(*median ms*) and until the first batch reaches the callback (*first "
    "batch ms*); the loader is made before the clock, as the command's "
    "is.  Every view is checked against the generator and the batches "
    "must deliver each view once, in order: after the clock without a "
    "window; with one, whose windows are reused, the callback checks each "
    "batch's headers and sums its pixels (on the clock: *verify ms*), and "
    "the sum must equal the generator's content's after the clock.  *parallel*: `parload --verify-seed`, the whole "
    "load.  *compute*: the callback burns that much of its thread's CPU "
    "time per batch, chosen by the run as the I/O alone's time over its "
    "batches; *compute alone*: the burning without a load.  *peak RSS*: "
    "the process's ru_maxrss.")


def stream_table(sessions, n):
    """Experiment 11: time to the first batch, the windowed load and the
    compute overlap, each beside the whole load."""
    out = [STREAM_TEXT, ""] + head([
        "file", "point", "median ms", "middle 50% ms", "first batch ms",
        "batches", "compute ms", "verify ms", "peak RSS MiB"])
    for s in sessions:
        for p in s.points:
            if 11 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            t = point_stats(s, p, n)

            def cell(field, fmt="%.2f", scale=1e3):
                x = median(p, field)
                return fmt % (x * scale) if x else ""
            rss = t["peak_rss_kib"]
            out.append(row([
                s.stream.name + (" (%s)" % s.note if s.note else ""),
                p.label(), ms(med), "%s - %s" % (ms(q1), ms(q3)),
                cell("first_batch_seconds"), cell("batches", "%.0f", 1),
                cell("compute_seconds"), cell("verify_seconds"),
                (mib(rss) + ("*" if on_floor(t) else "")) if rss else ""]))
    out.append("")
    ov = overlap(sessions)
    if ov:
        io, comp, both = ov
        out += ["Compute overlap (file %s, median ms): I/O alone %s, "
                "compute alone %s, their sum %s and max %s; I/O and "
                "compute together %s: %.2f x the max, %.2f x the sum." % (
                    "reference", ms(io), ms(comp), ms(io + comp),
                    ms(max(io, comp)), ms(both), both / max(io, comp),
                    both / (io + comp)), ""]
    return out


def overlap(sessions):
    """Experiment 11: (I/O alone, compute alone, both) medians, or None."""
    for s in sessions:
        if s.note != OVERLAP:
            continue
        pts = [p for p in s.points if p.tool == "batches" and p.runs]
        io = [median(p) for p in pts if p.compute_us is None]
        comp = [median(p) for p in pts if p.compute_only]
        both = [median(p) for p in pts
                if p.compute_us is not None and not p.compute_only]
        if io and comp and both:
            return io[0], comp[0], both[0]
    return None


MPI_TEXT = (
    "`mpirun -n R parload-mpi --json` (Open MPI with `--oversubscribe "
    "--bind-to none`: parload-mpi divides the cores between the ranks "
    "itself), on the reference stream written with CRC-32Cs.  *median "
    "ms*: the slowest rank's load, from opening the file until its part "
    "is complete (the clock of parload's own `seconds`); *whole call ms*: "
    "the slowest rank's parload_mpi_load (communicator, header broadcast, "
    "loader, load).  The views splits and the single process check every "
    "payload against its CRC (`--verify`); the single process and the "
    "rows in view layout are also checked against the generator.  A row "
    "slab holds part of each view, which no CRC covers: the rows split is "
    "checked for its shape only (every rank's slab, all views, the slabs "
    "covering the rows once).  *per rank ms*: each rank's load.")


def mpi_table(sessions, n):
    """Experiment 12: the ranks against the single process."""
    cols = ["point", "median ms", "middle 50% ms", "whole call ms",
            "vs single process", "per rank ms"]
    out = [MPI_TEXT, ""] + head(cols)
    for s in sessions:
        single = median(s.find(lambda p: 12 in p.exps and
                               p.is_flags("parallel", ("--verify",), n)))
        for p in s.points:
            if 12 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            ranks = ""
            if p.tool == "parload-mpi":
                ranks = ", ".join(ms(statistics.median(
                    r["rank_seconds"][i] for r in p.runs))
                    for i in range(p.ranks))
            call = median(p, "call_seconds")
            out.append(row([p.label(), ms(med), "%s - %s" % (ms(q1), ms(q3)),
                            ms(call) if call else "",
                            fmt_ratio(med / single) if single and
                            p.split != "rows" and not p.select else "",
                            ranks]))
    return out + [""]


def on_floor(t):
    """Whether a point's peak RSS is at the harness's own size (see
    harness_rss_kib): the process used at most that much."""
    rss, floor = t["peak_rss_kib"], t["harness_rss_kib"]
    return rss is not None and floor is not None and rss <= floor + 2048


def process_rank(row):
    """The order of experiment 8's rows: --version, the files of their
    own (the 0-view file), the user's run, the verified twin."""
    p = row[1]
    if p.tool == "parload-version":
        return 0
    if p.stream is not None:
        return 1
    return 2 if not p.verify else 3


def process_table(sessions, n):
    """Experiment 8: the whole process against the load it reports, and
    the fixed costs, on the warm reference session."""
    rows = table_rows(sessions, 8, n, timed=False)
    if not rows:
        return []
    out = [PROCESS_TEXT, ""]
    out += head(["point", "file", "process wall ms", "reported load ms",
                 "wall - load ms", "wall / load", "peak RSS MiB",
                 "dataset bytes", "RSS - dataset MiB"])
    floors = []
    order = {id(s): i for i, s in enumerate(sessions)}
    for s, p, t in sorted(rows, key=lambda r: (order[id(r[0])],
                                                process_rank(r))):
        st = p.file(s)
        wall, load, rss = t["wall"], t["median"], t["peak_rss_kib"]
        floored = on_floor(t)
        if floored:
            floors.append(t["harness_rss_kib"])
        dataset = None if p.tool == "parload-version" else st.dataset
        label = p.label()
        if p.stream:
            label = label.replace(", file %s" % p.stream.name, "")
        elif p.tool == "parload" and p.verify:
            label += ", --verify-seed (the wall holds the check)"
        if s.note:
            label += " [%s]" % s.note
        out.append(row([
            label, "" if dataset is None else st.name, ms(wall),
            ms(load) if load is not None else "",
            ms(wall - load) if load is not None else "",
            "%.2f" % (wall / load) if load and st.views else "",
            (mib(rss) + ("*" if floored else "")) if rss else "",
            "" if dataset is None else "%d" % dataset,
            "" if dataset is None or rss is None or floored
            else "%+.1f" % (rss / 1024 - dataset / MIB)]))
    out.append("")
    if floors:
        out += ["\\*: at the harness's own resident size when it spawned the "
                "process (about %s MiB): Linux gives a child that stays below "
                "the peak of the process that spawned it that peak (exec "
                "carries it over), so the process used at most this much.  "
                "The harness resets its own peak before each spawn." %
                mib(max(floors)), ""]
    return out


# --------------------------------------------------------------------------
# CSV.

def blank(x, fmt="%s"):
    return "" if x is None else fmt % x


RUN_FIELDS = ["experiments", "point", "tool", "strategy", "io", "buffer",
              "threads", "flags", "selection", "verified", "cache", "file",
              "views",
              "payload_bytes", "file_bytes", "run", "seconds", "wall_seconds",
              "peak_rss_kib", "harness_rss_kib", "read_calls", "bytes_read",
              "first_batch_seconds", "call_seconds"]


def point_fields(s, p):
    """The columns that name a point, shared by runs.csv and summary.csv."""
    st = p.file(s)
    out = {
        "experiments": " ".join(str(e) for e in sorted(p.exps)),
        "point": p.label(), "tool": p.tool, "strategy": p.strategy or "",
        "io": p.io or "", "buffer": p.buffer_text(), "threads": p.threads,
        "flags": " ".join(list(p.extra) + p.tool_flags()),
        "selection": " ".join(p.select.flags) if p.select else "",
        "verified": "" if p.tool != "parload" else
        ("yes" if p.verify else "no"),
        "cache": s.cache, "file": st.name, "views": st.views,
        "payload_bytes": st.payload, "file_bytes": st.size,
    }
    if p.tool == "parload-version":  # no file, no threads
        for k in ("threads", "file", "views", "payload_bytes", "file_bytes"):
            out[k] = ""
    return out


def run_rows(measured):
    """runs.csv: one row per measurement, in the order they ran."""
    rows = []
    for s, p, m in measured:
        r = point_fields(s, p)
        r.update({
            "run": m.get("run", ""), "seconds": blank(m["seconds"], "%.9f"),
            "wall_seconds": "%.6f" % m["wall"],
            "peak_rss_kib": blank(m["peak_rss_kib"], "%d"),
            "harness_rss_kib": blank(m["harness_rss_kib"], "%d"),
            "read_calls": blank(m["read_calls"]),
            "bytes_read": blank(m["bytes_read"]),
            "first_batch_seconds": blank(m.get("first_batch_seconds"),
                                         "%.9f"),
            "call_seconds": blank(m.get("call_seconds"), "%.9f"),
        })
        rows.append(r)
    return rows


def summary_rows(sessions, n):
    rows = []
    for s in sessions:
        for p in s.points:
            if not p.runs:
                continue
            t = point_stats(s, p, n)
            r = point_fields(s, p)
            r.update({
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
            rows.append(r)
    return rows


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)


# --------------------------------------------------------------------------
# The machine.

def sh(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                           shell=isinstance(cmd, str))
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def first_line(text):
    return (text.splitlines() or ["unknown"])[0]


def machine_text(args, tools, data_dir, n):
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
    cc = first_line(sh(args.cc + " --version")) if args.cc else "unknown"

    def version(prog, *cmd):
        return first_line(sh([prog] + list(cmd))) if prog else "missing"

    lines = [
        "date: %s" % datetime.datetime.now().isoformat(timespec="seconds"),
        "host: %s" % socket.gethostname(),
        "cpu: %s" % cpu,
        "cores (logical, online): %d" % (os.cpu_count() or 0),
        "cores this process may use: %d" % n,
        "numa nodes: %d" % max(1, len(nodes)),
        "memory: %s" % mem.replace("MemTotal:", "").strip(),
        "kernel: %s" % " ".join(platform.uname()),
        "transparent huge pages: %s" % thp,
        "data dir file system: %s %s" % (fs, ("(" + mnt + ")") if mnt else ""),
        "compiler: %s" % cc,
        "parload: %s" % version(tools.parload, "--version"),
        "strategies: %s" % " ".join(tools.strategies),
        "python: %s" % platform.python_version(),
        "dd: %s" % version(tools.dd, "--version"),
        "fio: %s" % version(tools.fio, "--version"),
        "numpy: %s" % version(tools.numpy, "-c",
                              "import numpy; print(numpy.__version__)"),
        "gnuplot: %s" % version(tools.gnuplot, "--version"),
        "mode: %s, %d runs per point" % ("quick" if args.quick else "full",
                                         args.runs),
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# results.md

INTRO = (
    "Machine: see machine.txt.  %s mode, %d runs per point, %d cores.  "
    "Times are from opening the file until the dataset is complete, "
    "measured by each fresh process and verified in it (all but the "
    "whole-process points of experiment 8, which say why).  *vs V2 POSIX*: "
    "how many times faster than the article's best loader (`--strategy "
    "sequential --io posix`) on the same file and cache state; *vs copy "
    "floor*: time over the copy floor (bench/copyfloor with one thread per "
    "core) on the same file and cache state.")

EXTRA_FLAGS_TEXT = (
    "*4 KiB pages*: `--no-hugepages`, the arrays are not advised for "
    "transparent huge pages (V2 so is the article's own allocation; every "
    "other point is advised).  *into touched caller memory*: "
    "`--preallocate`, the process allocates the arrays and touches every "
    "page before the clock starts, then loads into them, as a program that "
    "reuses its buffers does.  The 4 KiB-page points run last, in a session "
    "of their own with a copy floor of its own: a load that runs for most "
    "of a second slows the next fresh-memory load on a virtual machine that "
    "hands free memory back to its host (bench/README.md).")

SWEEP_TEXT = (
    "Each file about %s.  Columns 3-6: time unbuffered / buffered (POSIX: "
    "the loader's own 4 KiB buffer; stdio: its default buffer); above 1 "
    "the buffer wins.  Speed-up: best article strategy time / parallel "
    "time.  Ceiling: best article strategy time / copy floor, the lead of "
    "a load as fast as the copy floor.")


def files_text(rows_e):
    out, described = [], []
    for s, p, _ in rows_e:
        f = p.file(s)
        if p.tool != "parload-version" and f.name not in described:
            described.append(f.name)
            out.append("File %s: %s." % (f.name, f.describe()))
    return out + [""]


def experiment_section(exp, sessions, args, n, plots):
    """The markdown of one experiment; plots: the images made for it."""
    rows_e = table_rows(sessions, exp, n, timed=exp != 8)
    if not rows_e:
        return []
    md = ["## %d. %s" % (exp, EXPERIMENTS[exp]), ""]
    if exp == 11:  # the file of compute alone is no file
        rows_e = [r for r in rows_e if not r[1].compute_only]
    if exp != 3:
        md += files_text(rows_e)
    if any(set(p.extra) & {"--preallocate", "--no-hugepages"}
           for _, p, _ in rows_e):
        md += [EXTRA_FLAGS_TEXT, ""]
    if exp == 3:
        md += [SWEEP_TEXT % human_bytes(sweep_target(args.quick)), ""]
        md += sweep_table(sweep_series(sessions, n)) + [""]
        md += ["<details><summary>every point</summary>", ""]
        md += markdown_table(rows_e, True) + ["", "</details>", ""]
    elif exp == 8:
        md += process_table(sessions, n)
    elif exp == 9:
        md += selection_table(sessions, n)
    elif exp == 10:
        md += python_table(sessions, n)
    elif exp == 11:
        md += stream_table(sessions, n)
    elif exp == 12:
        md += mpi_table(sessions, n)
    else:
        md += markdown_table(rows_e, exp in (5, 6, 7)) + [""]
        if exp == 4:
            md += scaling_table(sessions, n)
        if exp == 7:
            md += huge_table(sessions, n)
    for png in plots.get(exp, []):
        md += ["![experiment %d](%s)" % (exp, png), ""]
    return md


def results_md(stamp, args, n, tools, sessions, failure, plots, targets_md,
               elapsed):
    md = ["# parload bench, %s" % stamp, "",
          INTRO % ("Quick" if args.quick else "Full", args.runs, n), ""]
    if failure:
        md += ["**The run stopped early: %s**" % failure, ""]
    md += ["- skipped: " + m for m in tools.missing]
    if tools.missing:
        md.append("")
    for exp in sorted(EXPERIMENTS):
        md += experiment_section(exp, sessions, args, n, plots)
    if targets_md:
        md += ["## Performance targets measured here", ""] + targets_md + [""]
    md += ["Bench time: %.0f s." % elapsed, ""]
    return md
