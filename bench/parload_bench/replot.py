"""--replot DIR: the plots of a recorded run drawn again from its
runs.csv, without measuring anything.  The points are planned again as
the run planned them (give the run's --quick and --only; the core count
is machine.txt's) and each recorded measurement goes back to the point
whose naming columns it carries."""
import csv
import os
import re

from . import BenchError, log
from .plots import make_plots
from .report import point_fields
from .sessions import experiments


def recorded_cores(out):
    """The run's core count (machine.txt), or None."""
    try:
        with open(os.path.join(out, "machine.txt")) as f:
            m = re.search(r"^cores this process may use: (\d+)$", f.read(),
                          re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def key_of(fields):
    """A point's naming columns, less the file's size (known only once a
    container file is written)."""
    return tuple(sorted((k, str(v)) for k, v in fields.items()
                        if k != "file_bytes"))


def measurement(row):
    """A runs.csv row as plan.run_session records a run."""
    def num(k, kind=float):
        v = row.get(k, "")
        return kind(v) if v != "" else None
    return {"seconds": num("seconds"), "wall": num("wall_seconds"),
            "peak_rss_kib": num("peak_rss_kib", int),
            "harness_rss_kib": num("harness_rss_kib", int),
            "read_calls": num("read_calls", int),
            "bytes_read": num("bytes_read", int),
            "first_batch_seconds": num("first_batch_seconds"),
            "call_seconds": num("call_seconds"),
            "cache_used": row.get("cache_used") or None,
            "cached": num("cached_share"), "run": num("run", int),
            "rewarmed": row.get("rewarmed", "")}


def replot(args, tools):
    """Draw DIR's plots again; 0, or BenchError saying what did not
    match."""
    out = args.replot
    n = recorded_cores(out)
    if n is None:
        raise BenchError("%s/machine.txt does not say the run's cores"
                         % out)
    sessions = experiments(args.quick, n, tools, args.only)
    points = {}
    for s in sessions:
        for p in s.points:
            points.setdefault(key_of(point_fields(s, p)), p)
    unmatched = 0
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        for row in csv.DictReader(f):
            names = {k: row[k] for k in point_fields(
                sessions[0], sessions[0].points[0])}
            p = points.get(key_of(names))
            if p is None:
                unmatched += 1
                continue
            p.runs.append(measurement(row))
    if unmatched:
        raise BenchError("%d run(s) of %s/runs.csv match no point planned "
                         "here: give the run's --quick and --only"
                         % (unmatched, out))
    plots = make_plots(tools, out, sessions, n)
    for exp in sorted(plots):
        for png in plots[exp]:
            log("  experiment %d: %s" % (exp, os.path.join(out, png)))
    return 0
