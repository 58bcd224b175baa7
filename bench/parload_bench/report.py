"""Reporting: runs.csv, summary.csv, machine.txt and results.md, whose
tables are tables.py's and whose figures are medians.py's."""
import csv
import datetime
import os
import platform
import re
import shutil
import socket
import subprocess

from . import human_bytes
from .correct import correct_table
from .medians import point_stats, sweep_series
from .points import sweep_target
from .sessions import EXPERIMENTS
from .tables import (cache_table, floors_table, huge_table, layouts_table,
                     markdown_table, mpi_table, process_table, python_table,
                     scaling_table, selection_table, stream_table,
                     sweep_table, table_rows)
from .tables_containers import containers_table


# --------------------------------------------------------------------------
# CSV.

def blank(x, fmt="%s"):
    return "" if x is None else fmt % x


RUN_FIELDS = ["experiments", "point", "tool", "strategy", "io", "buffer",
              "threads", "flags", "selection", "verified", "cache",
              "cache_mode", "file", "views",
              "payload_bytes", "file_bytes", "run", "seconds", "wall_seconds",
              "peak_rss_kib", "harness_rss_kib", "read_calls", "bytes_read",
              "first_batch_seconds", "call_seconds", "cache_used",
              "cached_share", "rewarmed"]


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
        "cache": s.cache, "cache_mode": p.cache or "",
        "file": st.name, "views": st.views,
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
            "cache_used": m.get("cache_used") or "",
            "cached_share": blank(m.get("cached"), "%.4f"),
            "rewarmed": m.get("rewarmed", ""),
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
                "time_vs_fresh_floor": blank(t["vs_fresh"], "%.4f"),
                "median_cached_share": blank(t["cached"], "%.4f"),
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
        "load average at the start (1, 5, 15 min, runnable/total): %s" %
        sh("cat /proc/loadavg"),
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
    "whole-process points of experiments 8 and 13 and experiment 13's "
    "mono12p load, which say why).  *vs V2 POSIX*: "
    "how many times faster than the article's best loader (`--strategy "
    "sequential --io posix`) on the same file and cache state; *vs copy "
    "floor*: time over the copy floor (bench/copyfloor with one thread per "
    "core: reads into one reused buffer) on the same file and cache "
    "state; *vs fresh floor*: time over the fresh-memory floor "
    "(bench/freshfloor with one thread per core: reads straight into a "
    "fresh, huge-page-advised mapping the size of the file, what a loader "
    "that returns a new dataset cannot beat).  Section *Both floors* "
    "gives both at every thread count.")

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
    elif exp == 13:
        md += layouts_table(sessions, n)
    elif exp == 14:
        md += cache_table(sessions, n)
    elif exp == 15:
        md += containers_table(sessions, n)
    elif exp == 16:
        md += correct_table(sessions, n)
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
    rewarmed = sum(1 for s in sessions if s.cache == "warm"
                   for p in s.points for m in p.runs if m.get("rewarmed"))
    if rewarmed:
        md += ["Warm runs that found a file of theirs partly out of the "
               "page cache, and read it in again before the clock: %d "
               "(runs.csv, *rewarmed*)." % rewarmed, ""]
    if failure:
        md += ["**The run stopped early: %s**" % failure, ""]
    md += ["- skipped: " + m for m in tools.missing]
    if tools.missing:
        md.append("")
    for exp in sorted(EXPERIMENTS):
        md += experiment_section(exp, sessions, args, n, plots)
    md += floors_table(sessions)
    if targets_md:
        md += ["## Performance targets measured here", ""] + targets_md + [""]
    md += ["Bench time: %.0f s." % elapsed, ""]
    return md
