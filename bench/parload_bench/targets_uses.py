"""The targets of start-up and the ways parload is used besides one
load by the command: Python, views delivered while the load runs, MPI
(experiments 4, 7, 8, 10-12)."""
import statistics

from . import MIB, human_bytes
from .medians import (find_point, median, on_floor, overlap, overlap_busy,
                      overlap_points, point_stats, scaling)
from .sessions import MPI_RANKS, PAGES_4K, WINDOW
from .target import (Measured, Note, Pick, Target, by_round, difference,
                     floor_n, parallel_n, ratio, ref)
from .targets_load import huge_relative, process_wall_ratio


# ---- start-up and the whole process (experiments 8, 4, 7) ----

def empty_load(threads_flag):
    """`parload EMPTY`, the 0-view file; threads_flag: `--threads 1`."""
    return lambda p, n: (p.tool == "parload" and p.stream is not None and
                         p.stream.views == 0 and
                         p.threads_flag == threads_flag)


def user_run(p, n):
    return p.is_default_process()


def wall(file, pred, note=None):
    return Pick(file, "warm", pred, "wall", note)


VERSION_WALL = wall("reference", lambda p, n: p.tool == "parload-version")


def v2_user(io, buffer=None, extra=()):
    return lambda p, n: p.is_unverified("sequential", io, buffer, extra)


def threads_over_cores(run):
    """The largest T(t) / T(n) for n < t <= 2n (experiment 4)."""
    sc = scaling(run.sessions)
    tn = sc.get(run.n, (None, None))[0]
    xs = [(sc[t][0] / tn, t) for t in sorted(sc)
          if run.n < t <= 2 * run.n and sc[t][0] and tn]
    if not xs:
        return None
    worst, t = max(xs)
    return Measured(worst, "at %d threads; %s" % (t, ", ".join(
        "%d: %.2f" % (u, x) for x, u in sorted(xs, key=lambda x: x[1]))))


STARTUP_TARGETS = [
    Target("10a", "Start-up", "8",
           "`parload EMPTY` (0 views, default threads) wall - `parload "
           "--version` wall",
           difference(wall("reference", empty_load(False)), VERSION_WALL),
           "<=", 0.5, "ms"),
    Target("10b", "Whole process", "8",
           "`parload FILE` process wall / reported load",
           process_wall_ratio, "<=", 1.10),
    Target("10e", "Whole process, reference stream", "8",
           "`parload FILE` wall / copy floor wall",
           ratio(wall("reference", user_run), wall("reference", floor_n)),
           "<=", 2.0),
    Target("10h", "More threads than cores", "4",
           "parallel time at n < t <= 2n threads / at n, largest",
           threads_over_cores, "<=", 1.1),
    Target("10i", "Few, huge views", "7",
           "as 5: huge-file speed-up / the reference stream's, smallest",
           huge_relative, ">=", 0.95),
]

# The article's ratios of the whole process: reported, not targets (each
# says the bar it had).
STARTUP_ARTICLE = [
    Note("10c", "The article's ratio (reported; it was a target, >= 2.2): "
         "tiny views, V2 stdio buffered wall / `parload FILE` wall = %s.",
         ratio(wall("tiny", v2_user("stdio")), wall("tiny", user_run))),
    Note("10d", "The article's ratio (reported; it was a target, >= 12): "
         "tiny views, V2 POSIX unbuffered wall / `parload FILE` wall = %s.",
         ratio(wall("tiny", v2_user("posix")), wall("tiny", user_run))),
    Note("10f", "The article's ratio (reported; it was a target, >= 5): "
         "V2 as the article allocates (`--no-hugepages`) wall / `parload "
         "FILE` wall (4 KiB-page session) = %s.",
         ratio(wall("reference", v2_user("posix", None,
                                         ("--no-hugepages",)), PAGES_4K),
               wall("reference", user_run, PAGES_4K))),
    Note("10g", "The article's ratio (reported; it was a target, >= 1.8): "
         "V2 POSIX (parload's allocator) wall / `parload FILE` wall = %s.",
         ratio(wall("reference", v2_user("posix")),
               wall("reference", user_run))),
]

# ---- Python (experiment 10, on whichever file it ran) ----

def exp10(pred, field="seconds"):
    return Pick(None, "warm", lambda p, n: 10 in p.exps and pred(p, n),
                field)


def numpy_best(run):
    """The faster of numpy's fromfile + copy and memmap + copy, over
    parload.load() in Python."""
    py = exp10(lambda p, n: p.tool == "pyload").get(run)
    peers = [x for x in (exp10(lambda p, n: p.tool == "numpy").get(run),
                         exp10(lambda p, n: p.tool == "npselect").get(run))
             if x]
    return Measured(min(peers) / py) if py and peers else None


def ms_of(pick):
    def value(run):
        x = run.get(pick)
        return Measured(x * 1e3) if x is not None else None
    return value


PYTHON_TARGETS = [
    Target("11a", "Python", "10",
           "parload.load() in Python time / the command's load time",
           ratio(exp10(lambda p, n: p.tool == "pyload"),
                 exp10(parallel_n)), "<=", 1.1),
    Target("11b", "Python", "10",
           "the faster of numpy fromfile + copy and memmap + copy / "
           "parload.load() in Python", numpy_best, ">=", 3),
    Target("11c", "Python", "10",
           "`import parload` after `import numpy`, fresh interpreter",
           ms_of(exp10(lambda p, n: p.tool == "pyimport")), "<=", 20, "ms"),
]

# ---- views delivered while the load runs (experiment 11) ----

def batches(window=None):
    """bench/batches with every core, no compute (window: that window)."""
    return lambda p, n: (p.tool == "batches" and p.threads == n and
                         p.window == window and p.compute_us is None)


FIRST_BATCH = ref(batches(), "first_batch_seconds")
SCAN_WINDOWED = Pick("scan", "warm", batches(WINDOW))
SCAN_WHOLE = Pick("scan", "warm", lambda p, n: 11 in p.exps and
                  p.is_parallel(n))
# Peak RSS of the out-of-core load: two windows and 16 MiB.
WINDOW_RSS_BAR = (2 * WINDOW + 16 * MIB) / MIB


def window_rss(run):
    s, p = find_point(run.sessions, "scan", "warm",
                      lambda p: batches(WINDOW)(p, run.n))
    if not p or not median(p, "peak_rss_kib"):
        return None
    t = point_stats(s, p, run.n)
    return Measured(t["peak_rss_kib"] / 1024, "file %s%s" % (
        human_bytes(s.stream.size), ", at the harness's own size: at most "
        "this" if on_floor(t) else ""))


def overlap_rounds(sessions):
    """The median over the rounds of together / max(I/O alone, compute
    alone), each from the three points' runs of the same round (a round
    the machine slows slows all three), or None."""
    pts = overlap_points(sessions)
    if not pts:
        return None
    io, comp, both = (by_round(p) for p in pts)
    xs = [both[r] / max(io[r], comp[r]) for r in both
          if r in io and r in comp]
    return statistics.median(xs) if xs else None


def overlap_ratio(of_sum=False):
    """I/O and compute together / the max (of_sum: the sum) of each
    alone."""
    def value(run):
        ov = overlap(run.sessions)
        if not ov:
            return None
        io, comp, both = ov
        rounds = overlap_rounds(run.sessions)
        return Measured(both / ((io + comp) if of_sum else max(io, comp)),
                        "" if of_sum else "I/O %.1f ms, compute %.1f ms, "
                        "together %.1f ms%s" % (
                            io * 1e3, comp * 1e3, both * 1e3,
                            "; median of each round's ratio %.2f" % rounds
                            if rounds else ""))
    return value


def overlap_cpu_bound(run):
    """12c against the bound the cores set: the work of both sides, in CPU
    time, shared by every core, takes (I/O's + compute's) / cores at the
    least; a Measured without a verdict (None), its text the detail."""
    ov, cpu = overlap(run.sessions), overlap(run.sessions, "cpu_seconds")
    if not ov or not cpu:
        return None
    io, comp, both = ov
    bound = (cpu[0] + cpu[1]) / run.n
    return Measured(None, "CPU time of the I/O alone %.1f ms, of the "
                    "compute alone %.1f ms, together %.1f ms; (I/O's + "
                    "compute's) / %d cores = %.1f ms; together / max(I/O "
                    "alone, compute alone, that bound) = %.2f" % (
                        cpu[0] * 1e3, cpu[1] * 1e3, cpu[2] * 1e3, run.n,
                        bound * 1e3, both / max(io, comp, bound)))


def overlap_contention(run):
    """12c against what the two sides contend for: the I/O alone beside a
    thread that spins (the core the callback's compute takes, busy, with
    no wait of the callback's); a Measured without a verdict."""
    ov, busy = overlap(run.sessions), overlap_busy(run.sessions)
    if not ov or not busy:
        return None
    io, comp, both = ov
    return Measured(None, "the I/O alone beside a thread that spins %.1f "
                    "ms, %.2f x the I/O alone; together / max(that, the "
                    "compute alone) = %.2f" % (busy * 1e3, busy / io,
                                               both / max(busy, comp)))


STREAM_NOTES = [
    Note("12c", "The bound that the cores set: %s.", overlap_cpu_bound),
    Note("12c", "What the two sides contend for: %s.",
         overlap_contention),
]

STREAM_TARGETS = [
    Target("12a", "Time to first view", "11",
           "first batch of the reference stream, from just before "
           "parload_loader_run (every core)", ms_of(FIRST_BATCH), "<=", 5,
           "ms"),
    Target("12b", "Out-of-core windows", "11",
           "peak RSS of the scan file's load through %s windows (bar: 2 "
           "windows + 16 MiB)" % human_bytes(WINDOW), window_rss, "<=",
           WINDOW_RSS_BAR, "MiB"),
    Target("12c", "Compute overlap", "11",
           "I/O and per-batch compute together / max(I/O alone, compute "
           "alone), compute in all about the I/O's time", overlap_ratio(),
           "<=", 1.15),
]

# ---- MPI on one node (experiment 12) ----

def mpi(ranks, split="views"):
    return lambda p, n: (
        p.tool == "parload-mpi" and p.ranks == ranks and p.split == split
        and p.threads == (n if ranks == 1 else max(1, n // ranks)))


MPI_SINGLE = Pick("reference-crc", "warm", lambda p, n: p.is_flags(
    "parallel", ("--verify",), n))


def rank_rows(s, r, layout):
    """Rank r's rows loaded by one process in layout (experiment 12)."""
    return median(s.find(lambda q: q.select is not None and
                         q.select.name.startswith("rank %d's" % r) and
                         q.select.layout == layout))


def slab_ratios(run, over):
    """[(x, rank)]: the rows split's load of each rank / over(session,
    rank), the largest first."""
    s, p = find_point(run.sessions, "reference-crc", "warm",
                      lambda p: p.tool == "parload-mpi" and
                      p.split == "rows")
    xs = []
    for r in range(p.ranks if p else 0):
        mine = statistics.median(m["rank_seconds"][r] for m in p.runs)
        base = over(s, r)
        if base:
            xs.append((mine / base, r))
    return sorted(xs, reverse=True)


def slab_worst(run):
    """The largest rank's rows-split load / that rank's rows in view layout
    (one process, the rank's threads)."""
    xs = slab_ratios(run, lambda s, r: rank_rows(s, r, "views"))
    if not xs:
        return None
    return Measured(xs[0][0], "rank %d; %s" % (xs[0][1], ", ".join(
        "rank %d %.2f" % (q, x) for x, q in sorted(xs, key=lambda x: x[1]))))


def layout_cost(run):
    """Informational: one process's sinograms / its view layout, and the
    rows split / one process's sinograms, for each rank's rows."""
    s = find_point(run.sessions, "reference-crc", "warm",
                   lambda p: p.tool == "parload-mpi")[0]
    if not s:
        return None
    lay = [(rank_rows(s, r, "sinograms"), rank_rows(s, r, "views"), r)
           for r in range(MPI_RANKS)]
    lay = ["rank %d %.2f" % (r, a / b) for a, b, r in lay if a and b]
    split = ["rank %d %.2f" % (r, x) for x, r in sorted(slab_ratios(
        run, lambda s, r: rank_rows(s, r, "sinograms")),
        key=lambda x: x[1])]
    if not lay:
        return None
    return Measured(None, "one process, sinograms / view layout: %s; the "
                    "rows split / one process's sinograms: %s" % (
                        ", ".join(lay), ", ".join(split) or "not measured"))


def mpi_pick(ranks, field="seconds"):
    return Pick("reference-crc", "warm", mpi(ranks), field)


MPI_TARGETS = [
    Target("13a", "MPI, %d ranks sharing the cores" % MPI_RANKS, "12",
           "slowest rank's load (views split) / single-process load, "
           "same file and cores", ratio(mpi_pick(MPI_RANKS), MPI_SINGLE),
           "<=", 1.10),
    Target("13b", "MPI, 1 rank with every core", "12",
           "the rank's load / single-process load",
           ratio(mpi_pick(1), MPI_SINGLE), "<=", 1.10),
    Target("13c", "MPI row slabs", "12",
           "a rank's sinograms (rows split) / its rows in view layout, "
           "largest over the ranks", slab_worst, "<=", 1.2),
]
