"""inproc.py - the in-process measurements of experiments 17
(bench/detector.py) and 18 (bench/zarrload.py): two loads of a case
alternated in one process (A, B, A, B, ... after an untimed run of each),
every result checked before its time counts, and the table of medians and
ratios beside the issue's target (bench/README.md)."""
import csv
import datetime
import os
import re
import socket
import statistics
import time

import numpy as np


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class Case:
    """Two loads a and b alternated; ratio b / a ("how many times faster
    a is") unless cmp is "<=" (a / b, a cost).  check_a and check_b take
    what a load returns and say whether it is right; cpu: time CPU
    seconds (process_time) instead of wall seconds; skip: why the case is
    not measured (it stays in the table, saying so)."""

    def __init__(self, id, what, a, b, target, label_a, label_b, check_a,
                 check_b=None, cmp=">=", cpu=False, skip=None):
        self.id, self.what, self.a, self.b = id, what, a, b
        self.target, self.cmp = target, cmp
        self.label_a, self.label_b = label_a, label_b
        self.check_a, self.check_b = check_a, check_b
        self.cpu, self.skip = cpu, skip
        self.path = None  # the file whose stats results.md gives
        self.ta, self.tb, self.error = [], [], None


def equal_to(want):
    return lambda got: got.shape == want.shape and got.dtype == want.dtype \
        and np.array_equal(got, want)


def clock(case, fn, check):
    """(seconds, or CPU seconds for a rate case); the check after."""
    c0 = time.process_time()
    t, out = timed(fn)
    cpu = time.process_time() - c0
    if not check(out):
        raise AssertionError("the load does not equal the reference read")
    return cpu if case.cpu else t


def measure(case, runs, log):
    if case.skip:
        log("  %-10s skipped: %s" % (case.id, case.skip))
        return
    try:
        for fn, chk in ((case.a, case.check_a), (case.b, case.check_b)):
            clock(case, fn, chk)  # untimed: the file warm, the code paged in
        for r in range(runs):
            case.ta.append(clock(case, case.a, case.check_a))
            case.tb.append(clock(case, case.b, case.check_b))
    except Exception as e:  # a load that fails: its error is the result
        case.error = "%s: %s" % (type(e).__name__, e)
    log("  %-10s %s" % (case.id, case.error or "%.3f s / %.3f s" % (
        statistics.median(case.ta), statistics.median(case.tb))))


def figures(case):
    """(ratio of medians, median of each round's ratio, verdict)."""
    if case.error or not case.ta:
        return None, None, "not measured"
    ma, mb = statistics.median(case.ta), statistics.median(case.tb)
    if case.cmp == "<=":
        ratio = ma / mb
        rounds = statistics.median(a / b for a, b in zip(case.ta, case.tb))
    else:
        ratio = mb / ma
        rounds = statistics.median(b / a for a, b in zip(case.ta, case.tb))
    if case.target is None:
        return ratio, rounds, "information"
    met = ratio >= case.target if case.cmp == ">=" else ratio <= case.target
    return ratio, rounds, "met" if met else "NOT met"


def spread(ts):
    if len(ts) < 2:
        return "%.1f" % (ts[0] * 1e3)
    q = statistics.quantiles(ts, n=4, method="inclusive")
    return "%.1f - %.1f" % (q[0] * 1e3, q[2] * 1e3)


def table(cs):
    """results.md's table of the cases: medians, spread, ratios, target
    and verdict; a case that failed or was skipped says so."""
    md = ["| case | A | B | A median ms (middle 50%) | B median ms (middle "
          "50%) | ratio | each round | target | verdict |",
          "|---|---|---|---|---|---|---|---|---|"]
    for c in cs:
        ratio, rounds, verdict = figures(c)
        target = "%s %.2f" % (c.cmp, c.target) if c.target else "-"
        if c.error or c.skip:
            why = ("fails: " + c.error) if c.error else \
                ("skipped: " + c.skip)
            md.append("| %s | %s | %s | %s | | | | %s | not measured |" % (
                c.what, c.label_a, c.label_b, why.replace("|", "/")[:300],
                target))
            continue
        md.append("| %s | %s | %s | %.1f (%s) | %.1f (%s) | %.2fx | %.2fx | "
                  "%s | %s |" % (c.what, c.label_a, c.label_b,
                                 statistics.median(c.ta) * 1e3, spread(c.ta),
                                 statistics.median(c.tb) * 1e3, spread(c.tb),
                                 ratio, rounds, target, verdict))
    return md


def write_runs(path, cs):
    """runs.csv: each case's timed rounds, and its error if it failed."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "run", "a_seconds", "b_seconds", "error"])
        for c in cs:
            for r, (a, b) in enumerate(zip(c.ta, c.tb)):
                w.writerow([c.id, r + 1, "%.6f" % a, "%.6f" % b, ""])
            if c.error or c.skip:
                w.writerow([c.id, "", "", "", c.error or "skipped: " +
                            c.skip])


def results_dir(out, suffix):
    """--out, or bench/results/DATE-HOST-SUFFIX; made."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())
    out = out or os.path.join("bench", "results",
                              "%s-%s-%s" % (stamp, host, suffix))
    os.makedirs(out, exist_ok=True)
    return out
