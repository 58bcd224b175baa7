"""parload_bench - reproduce the raw-image-stream article's experiments
with parload's strategies, put the parallel loader, the copy floor and peer
tools beside them, and write CSV, a markdown table, plots and a machine
record.

Run it through `make bench` (or `make bench-quick`, or bench/run.py); see
bench/README.md.  Only the Python standard library is needed.  gnuplot
(plots), fio and numpy (peers) are used when present and skipped, with a
note, when not.

Method (the article's): time from opening the file until the dataset is
complete, one fresh process per measurement, every load verified against
the generated data in that same process before its time counts, 10 runs
per point (3 with --quick), median and middle 50% reported.  The runs of
the points that share a file are interleaved (run 1 of every point, then
run 2, ...) so that a machine that gets busier or quieter over time biases
no point against another.

The modules, by job:
  points    what is measured: files, points, sessions, the experiments
  measure   one measurement: a fresh process, wait4, wall and peak RSS,
            the check of what it loaded
  plan      generating the files, running sessions interleaved, settling
  report    results.md, runs.csv, summary.csv, machine.txt
  plots     gnuplot
  targets   the performance targets, as data, and their verdicts
"""
import os

# bench/: the helpers' sources and npload.py live there.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
