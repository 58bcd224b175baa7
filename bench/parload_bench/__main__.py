"""The command line: `python3 bench/run.py` (or `python3 -m parload_bench`
from bench/); `--help` lists the options."""
import argparse
import datetime
import os
import re
import shutil
import socket
import sys
import tempfile
import time

from . import HERE, BenchError, log
from . import plan, report, scripts, targets
from .tools import Tools, snapshot_programs
from .plots import make_plots
from .replot import replot
from .sessions import experiments


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="run.py",
        description="Reproduce the raw-image-stream article's experiments "
        "with parload's strategies, put the parallel loader, the copy floor "
        "and peer tools beside them, and write CSV, a markdown table, plots "
        "and a machine record.")
    ap.add_argument("--parload", default=os.environ.get("PARLOAD_BIN", "parload"),
                    help="the parload command (default: $PARLOAD_BIN or parload)")
    ap.add_argument("--tools", default=HERE,
                    help="directory with the built copyfloor, freshfloor and "
                    "evict helpers")
    ap.add_argument("--copyfloor", help="the copyfloor helper (default: TOOLS/copyfloor)")
    ap.add_argument("--freshfloor", help="the freshfloor helper (default: "
                    "TOOLS/freshfloor)")
    ap.add_argument("--evict", help="the evict helper (default: TOOLS/evict)")
    ap.add_argument("--selcopy", help="the selcopy helper (default: "
                    "TOOLS/selcopy; experiment 9 runs without it)")
    ap.add_argument("--batches", help="the batches helper (default: "
                    "TOOLS/batches; experiment 11 is skipped without it)")
    ap.add_argument("--uringfloor", help="the uringfloor helper (default: "
                    "TOOLS/uringfloor, built where liburing is found; "
                    "experiment 14 runs without its io_uring floors)")
    ap.add_argument("--parload-mpi", default=os.environ.get("PARLOAD_MPI_BIN")
                    or next((p for p in ("mpi/parload-mpi", "src/parload-mpi")
                             if os.access(p, os.X_OK)), None),
                    help="the parload-mpi command (default: $PARLOAD_MPI_BIN, "
                    "or mpi/parload-mpi of the build tree; experiment 12 is "
                    "skipped without it)")
    ap.add_argument("--mpiexec", help="the MPI launcher (default: mpirun or "
                    "mpiexec on the PATH)")
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
    ap.add_argument("--only", help="comma-separated experiments to run (1-18)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"),
                    help="the compiler, for machine.txt")
    ap.add_argument("--numpy-python", help="a python3 with numpy for the numpy peer")
    ap.add_argument("--python-path",
                    default=os.environ.get("PARLOAD_BENCH_PYTHONPATH") or
                    ("python/stage" if os.path.isdir("python/stage") else None),
                    help="where that python3 finds the parload module "
                    "(default: $PARLOAD_BENCH_PYTHONPATH, or python/stage "
                    "of the build tree)")
    ap.add_argument("--replot", metavar="DIR",
                    help="draw the plots of the run recorded in DIR again "
                    "from its runs.csv, measuring nothing (give the run's "
                    "--quick and --only)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and exit")
    args = ap.parse_args(argv)
    if args.runs is None:
        args.runs = 3 if args.quick else 10
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    try:
        args.only = set(int(x) for x in args.only.split(",")) \
            if args.only else set()
    except ValueError:
        ap.error("--only takes experiment numbers, e.g. 1,4")
    return args


def main(argv=None):
    args = parse_args(argv)
    args.copyfloor = args.copyfloor or os.path.join(args.tools, "copyfloor")
    args.freshfloor = args.freshfloor or os.path.join(args.tools,
                                                      "freshfloor")
    args.evict = args.evict or os.path.join(args.tools, "evict")
    args.selcopy = args.selcopy or os.path.join(args.tools, "selcopy")
    args.batches = args.batches or os.path.join(args.tools, "batches")
    args.uringfloor = args.uringfloor or os.path.join(args.tools,
                                                      "uringfloor")
    for tool in (args.copyfloor, args.freshfloor, args.evict):
        if not os.access(tool, os.X_OK):
            sys.exit("run.py: %s is not built (make bench builds it)" % tool)
    if not shutil.which(args.parload) and not os.access(args.parload, os.X_OK):
        sys.exit("run.py: no parload command at %s" % args.parload)

    snapshot = tempfile.mkdtemp(prefix="parload-bench-bin-")
    try:
        try:
            snapshot_programs(args, snapshot)
        except (OSError, shutil.Error) as e:
            sys.exit("run.py: cannot copy the programs under test: %s" % e)
        try:
            return run(args)
        except BenchError as e:
            sys.exit("run.py: %s" % e)
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def out_dir(args, stamp):
    """(results directory, whether it is a temporary one to remove)."""
    if args.out:
        return args.out, False
    if args.quick:
        return tempfile.mkdtemp(prefix="parload-bench-quick-"), True
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())
    return os.path.join("bench", "results", "%s-%s" % (stamp, host)), False


def run(args):
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)
    tools = Tools(args)
    if args.replot:
        return replot(args, tools)
    sessions = experiments(args.quick, n, tools, args.only)
    if args.quick and tools.numpy:
        tools.missing.append("numpy's whole load (experiment 6; left out of "
                             "--quick: about a second per run)")
    if args.dry_run:
        for m in tools.missing:
            log("  skipped: " + m)
        plan.print_plan(sessions, args.runs)
        for sc in scripts.SCRIPTS:
            if not args.only or sc.number in args.only:
                log("experiment %d: bench/%s%s (%s)" % (
                    sc.number, sc.script, " --quick" if args.quick else "",
                    scripts.missing(sc, tools) or "runs"))
        return 0

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out, temp_out = out_dir(args, stamp)
    os.makedirs(out, exist_ok=True)
    data_dir = args.data_dir or os.path.join(out, "data")
    made_data_dir = not os.path.isdir(data_dir)
    os.makedirs(data_dir, exist_ok=True)

    machine = report.machine_text(args, tools, data_dir, n)
    t_start = time.perf_counter()
    log("parload bench (%s): %d runs per point, %d cores, results in %s" % (
        "quick" if args.quick else "full", args.runs, n, out))
    for m in tools.missing:
        log("  skipped: " + m)

    measured = []
    failure = None
    scripts_md = []
    try:
        plan.generate_all(tools, sessions, data_dir)
        for s in sessions:
            plan.run_session(tools, s, args.runs, measured)
        for sc in scripts.SCRIPTS:
            if not args.only or sc.number in args.only:
                scripts_md += scripts.run(sc, args, tools, out, data_dir)
    except (BenchError, OSError) as e:
        failure = str(e)
        log("run.py: " + failure)
    finally:
        if not args.keep:
            plan.remove_all(sessions)
            if made_data_dir:
                try:
                    os.rmdir(data_dir)
                except OSError:
                    pass

    # ---- write everything ----
    report.write_csv(os.path.join(out, "runs.csv"), report.run_rows(measured),
                     report.RUN_FIELDS)
    srows = report.summary_rows(sessions, n)
    if srows:
        report.write_csv(os.path.join(out, "summary.csv"), srows,
                         list(srows[0]))
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write(machine)
    plots = make_plots(tools, out, sessions, n)
    elapsed = time.perf_counter() - t_start
    md = report.results_md(stamp, args, n, tools, sessions, failure, plots,
                           targets.markdown(sessions, n), elapsed)
    md[-2:-2] = scripts_md  # before the bench's time
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))

    log("done in %.0f s" % elapsed)
    if temp_out:
        sys.stdout.write("\n".join(md) + "\n")
        shutil.rmtree(out, ignore_errors=True)
    else:
        log("results: %s" % os.path.join(out, "results.md"))
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
