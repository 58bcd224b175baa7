"""The performance targets, as data: each names what it compares (a
ratio of medians measured in this run, or a difference), the experiments
that measure it, the bar and the direction.  results.md prints them as one
table with their verdicts, then the notes (ceilings and informational
ratios) that go with them.

A target's `value` is a function of the run (Run below) that returns a
Measured, or None when the points it needs were not run."""
import statistics

from . import MIB, human_bytes
from .points import BAND, MPI_RANKS, PAGES_4K, SINOGRAMS, STEP4, WINDOW
from .report import (efficiency, find_point, huge_names,
                     median, on_floor, overlap, point_stats, scaling,
                     speedup, sweep_series)


class Measured:
    """A target's figure; value None: measured, but no verdict (detail
    says why)."""

    def __init__(self, value, detail=""):
        self.value, self.detail = value, detail


class Run:
    """What the targets read: the sessions and the cores."""

    def __init__(self, sessions, n):
        self.sessions, self.n = sessions, n

    def get(self, pick):
        return pick.get(self)


class Pick:
    """The median of one field of the first measured point that pred(p, n)
    accepts, on a file in a cache state (note: only in the session with
    that note)."""

    def __init__(self, file, cache, pred, field="seconds", note=None):
        self.file, self.cache, self.pred, self.field = file, cache, pred, field
        self.note = note

    def get(self, run):
        for s in run.sessions:
            if self.file and s.stream.name != self.file or \
                    s.cache != self.cache or \
                    (self.note is not None and s.note != self.note):
                continue
            p = s.find(lambda p: self.pred(p, run.n))
            if p:
                return median(p, self.field)
        return None


# Points that targets compare.
def parallel_n(p, n):
    return p.is_parallel(n)


def v2_posix(p, n):
    return p.is_v2_posix()


def floor_n(p, n):
    return p.tool == "copyfloor" and p.threads == n


def ref(pred, field="seconds"):
    return Pick("reference", "warm", pred, field)


REF_V2 = ref(v2_posix)
REF_PAR = ref(parallel_n)
REF_FLOOR = ref(floor_n)


def ratio(a, b):
    """a / b, two Picks."""
    def value(run):
        x, y = run.get(a), run.get(b)
        return Measured(x / y) if x and y else None
    return value


def difference(a, b, scale=1e3):
    """(a - b) x scale, two Picks (default: seconds to ms)."""
    def value(run):
        x, y = run.get(a), run.get(b)
        return Measured((x - y) * scale) if x and y else None
    return value


class Target:
    def __init__(self, id, name, exps, what, value, cmp, bar, unit="x"):
        self.id, self.name, self.exps, self.what = id, name, exps, what
        self.value, self.cmp, self.bar, self.unit = value, cmp, bar, unit

    def met(self, x):
        return x >= self.bar if self.cmp == ">=" else x <= self.bar


class Note:
    """An informational figure printed under the table, after target
    `after`; text has one %s for the value."""

    def __init__(self, after, text, value, unit="x"):
        self.after, self.text, self.value, self.unit = after, text, value, unit


def fmt(x, unit, bar=False):
    """A figure (bar: a target's bar, as short as it is exact)."""
    if unit == "%":
        return "%.0f%%" % (x * 100)
    text = "%g" % x if bar else "%.2f" % x
    return text if unit == "x" else "%s %s" % (text, unit)


# ---- the computed targets ----

def sweep_worst(run):
    """Experiment 3: the smallest best-article / parallel over the sizes."""
    leads = [(best / par, size) for size, _, _, _, best, par, _, _ in
             sweep_series(run.sessions, run.n) if best and par]
    if not leads:
        return None
    worst = min(leads)
    return Measured(worst[0], "at %s" % human_bytes(worst[1]))


def sweep_capped(run):
    """The sizes where the best article strategy is within 1.5x of the
    copy floor (the ceiling of target 4)."""
    capped = [(best / floor, size) for size, _, _, _, best, _, floor, _ in
              sweep_series(run.sessions, run.n)
              if best and floor and best / floor < 1.5]
    if not capped:
        return None
    return Measured(None, "At %s the best article strategy is within 1.5x "
                    "of the copy floor (ceiling %s): a 1.5x lead there needs "
                    "a load faster than the copy floor." % (
                        ", ".join(human_bytes(sz) for _, sz in capped),
                        ", ".join("%.2f" % c for c, _ in capped)))


def huge_relative(run):
    """Experiment 7: the smallest huge-file speed-up over the reference
    stream's."""
    sus = [(name, speedup(run.sessions, name, run.n)[2])
           for name in huge_names(run.sessions)]
    sus = [(name, su) for name, su in sus if su]
    if not sus:
        return None
    text = "T(1) / T(%d): %s" % (run.n, ", ".join(
        "%.2f on %s" % (su, name) for name, su in sus))
    ref_su = speedup(run.sessions, "reference", run.n)[2]
    if not ref_su:
        return Measured(None, text + "; no verdict: the reference stream's "
                        "parallel points with 1 and %d threads were not run "
                        "(experiment 1 or 4)" % run.n)
    return Measured(min(su / ref_su for _, su in sus),
                    text + "; reference %.2f" % ref_su)


def process_wall_ratio(run):
    s, p = find_point(run.sessions, "reference", "warm",
                      lambda p: p.is_default_process())
    if not p:
        return None
    return Measured(median(p, "wall") / median(p))


def process_rss_over(run):
    s, p = find_point(run.sessions, "reference", "warm",
                      lambda p: p.is_default_process())
    rss = median(p, "peak_rss_kib") if p else None
    if not rss:
        return None
    ds = p.file(s).dataset
    return Measured((rss * 1024 - ds) / MIB, "peak RSS %.1f MiB, dataset "
                    "%.1f MiB" % (rss / 1024, ds / MIB))


def cold_best_peer(run):
    pc = Pick("reference", "cold", parallel_n).get(run)
    peers = [x for x in (
        Pick("reference", "cold", lambda p, n: p.tool == "dd").get(run),
        Pick("reference", "cold", lambda p, n: p.tool == "fio").get(run))
        if x]
    return Measured(min(peers) / pc) if pc and peers else None


def scaling_worst(run):
    """Experiment 4: the lowest efficiency T(1) / (t x T(t)), 2 <= t <= n."""
    n = run.n
    sc = scaling(run.sessions)
    p1 = sc.get(1, (None, None))[0]
    if n == 1 and p1:
        return Measured(None, "this machine has 1 core: there is no "
                        "efficiency to measure")
    effs = [(efficiency(p1, t, sc[t][0]), t) for t in sorted(sc)
            if 1 < t <= n and sc[t][0]]
    effs = [(e, t) for e, t in effs if e]
    if not p1 or not effs or effs[-1][1] != n:
        return None
    worst = min(effs)
    at = "at t = %d" % worst[1]
    if worst[1] != n:
        at += "; at t = %d, the cores: %.0f%%" % (n, effs[-1][0] * 100)
    return Measured(worst[0], at + "; measurable up to the %d cores" % n)


def floor_efficiency(run):
    sc = scaling(run.sessions)
    f1, fn = sc.get(1, (None, None))[1], sc.get(run.n, (None, None))[1]
    e = efficiency(f1, run.n, fn)
    return Measured(e) if e and run.n > 1 else None


def tiny(pred):
    return Pick("tiny", "warm", pred)


# ---- experiment 9: selections ----

def sel_pred(name, tool="parload"):
    """Experiment 9's point of one tool on the selection `name` (None:
    parload's full load)."""
    def pred(p, n):
        if 9 not in p.exps or p.tool != tool:
            return False
        if name is None:
            return p.is_parallel(n)
        return p.select is not None and p.select.name == name
    return pred


def sel(file, name, tool="parload", field="seconds"):
    return Pick(file, "warm", sel_pred(name, tool), field)


def full(file):
    return sel(file, None)


def sel_points(run, file, tool="parload"):
    """(session, point) of every selection of one tool on file."""
    out = []
    for s in run.sessions:
        if s.stream.name == file and s.cache == "warm":
            out += [(s, p) for p in s.points if 9 in p.exps and p.runs and
                    p.tool == tool and p.select is not None]
    return out


def band_bytes(file):
    """Bytes read by the row band over the bytes it needs: the file
    header, the views' headers and the band's whole rows."""
    def value(run):
        s, p = find_point(run.sessions, file, "warm",
                          lambda p: sel_pred(BAND)(p, run.n))
        got = median(p, "bytes_read") if p else None
        if not got:
            return None
        need = p.select.file_bytes(s.stream)
        return Measured(got / need, "%d of %d bytes" % (got, need))
    return value


def peer_ratios(run, file, tool):
    """[(peer time / parload's selection time, selection name)] of one
    peer (npselect, selcopy) over the selections on file."""
    xs = []
    for s, p in sel_points(run, file):
        peer = sel(file, p.select.name, tool).get(run)
        if peer and median(p):
            xs.append((peer / median(p), p.select.name))
    return xs


def numpy_worst(file):
    """The smallest numpy time / parload time over the selections."""
    def value(run):
        xs = peer_ratios(run, file, "npselect")
        if not xs:
            return None
        worst, name = min(xs)
        return Measured(worst, "at %s" % name)
    return value


def rss_worst(file):
    """The largest peak RSS - output (MiB) over the selections.  A peak at
    the harness's own size bounds the process from above only: it counts
    when even that bound meets the bar, and is said otherwise."""
    def value(run):
        xs, floored = [], []
        for s, p in sel_points(run, file):
            t = point_stats(s, p, run.n)
            if t["peak_rss_kib"]:
                over = (t["peak_rss_kib"] * 1024 -
                        p.select.output(s.stream)) / MIB
                if on_floor(t) and over > 16:
                    floored.append(p.select.name)
                else:
                    xs.append((over, p.select.name))
        note = ("; %s at the harness's own size, no figure" %
                ", ".join(floored)) if floored else ""
        if not xs:
            return Measured(None, note[2:]) if floored else None
        worst, name = max(xs)
        return Measured(worst, "at %s%s" % (name, note))
    return value


def copy_vs_select(file):
    """Informational: parload's full load + copy / its selection, each."""
    def value(run):
        xs = peer_ratios(run, file, "selcopy")
        return Measured(None, ", ".join("%s %.2f" % (name, x)
                                        for x, name in xs)) if xs else None
    return value


def selection_targets(file):
    """Experiment 9's targets on one file."""
    where = " (%s)" % file
    return [
        Target("9a", "Row band of 1/8" + where, "9",
               "bytes read / (the band's rows + headers)",
               band_bytes(file), "<=", 1.01),
        Target("9b", "Row band of 1/8" + where, "9",
               "row band time / full load time",
               ratio(sel(file, BAND), full(file)), "<=", 0.25),
        Target("9c", "Every 4th view" + where, "9",
               "views ::4 time / full load time",
               ratio(sel(file, STEP4), full(file)), "<=", 0.35),
        Target("9d", "Sinograms" + where, "9",
               "sinogram layout time / full load (views layout) time",
               ratio(sel(file, SINOGRAMS), full(file)), "<=", 1.5),
        Target("9e", "Sinograms" + where, "9",
               "numpy memmap + transpose copy time / sinogram layout time",
               ratio(sel(file, SINOGRAMS, "npselect"), sel(file, SINOGRAMS)),
               ">=", 3),
        Target("9f", "Every selection" + where, "9",
               "numpy memmap + slicing + copy time / parload selection "
               "time, smallest", numpy_worst(file), ">=", 3),
        Target("9g", "Every selection" + where, "9",
               "peak RSS - output (pixels and headers delivered), largest",
               rss_worst(file), "<=", 16, "MiB"),
    ]


# The files of experiment 9.
SELECTION_FILES = ("reference", "scan")

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
    Target("10c", "Whole process, tiny views", "8",
           "V2 stdio buffered wall / `parload FILE` wall",
           ratio(wall("tiny", v2_user("stdio")), wall("tiny", user_run)),
           ">=", 2.2),
    Target("10d", "Whole process, tiny views", "8",
           "V2 POSIX unbuffered wall / `parload FILE` wall",
           ratio(wall("tiny", v2_user("posix")), wall("tiny", user_run)),
           ">=", 12),
    Target("10e", "Whole process, reference stream", "8",
           "`parload FILE` wall / copy floor wall",
           ratio(wall("reference", user_run), wall("reference", floor_n)),
           "<=", 2.0),
    Target("10f", "Whole process, reference stream", "8",
           "V2 as the article allocates (`--no-hugepages`) wall / `parload "
           "FILE` wall (4 KiB-page session)",
           ratio(wall("reference", v2_user("posix", None,
                                           ("--no-hugepages",)), PAGES_4K),
                 wall("reference", user_run, PAGES_4K)), ">=", 5),
    Target("10g", "Whole process, reference stream", "8",
           "V2 POSIX (parload's allocator) wall / `parload FILE` wall",
           ratio(wall("reference", v2_user("posix")),
                 wall("reference", user_run)), ">=", 1.8),
    Target("10h", "More threads than cores", "4",
           "parallel time at n < t <= 2n threads / at n, largest",
           threads_over_cores, "<=", 1.1),
    Target("10i", "Few, huge views", "7",
           "as 5: huge-file speed-up / the reference stream's, smallest",
           huge_relative, ">=", 0.95),
]

# ---- Python (experiment 10, on whichever file it ran) ----

def exp10(pred):
    return Pick(None, "warm", lambda p, n: 10 in p.exps and pred(p, n))


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


def overlap_ratio(of_sum=False):
    """I/O and compute together / the max (of_sum: the sum) of each
    alone."""
    def value(run):
        ov = overlap(run.sessions)
        if not ov:
            return None
        io, comp, both = ov
        return Measured(both / ((io + comp) if of_sum else max(io, comp)),
                        "" if of_sum else "I/O %.1f ms, compute %.1f ms, "
                        "together %.1f ms" % (io * 1e3, comp * 1e3,
                                              both * 1e3))
    return value


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

TARGETS = [
    Target("1a", "Reference stream", "1",
           "V2 POSIX time / parallel time",
           ratio(REF_V2, REF_PAR), ">=", 5),
    Target("1b", "Reference stream", "1",
           "parallel time / copy floor",
           ratio(REF_PAR, REF_FLOOR), "<=", 2.2),
    Target("2", "Into touched caller memory", "1",
           "parallel --preallocate time / copy floor",
           ratio(ref(lambda p, n: p.is_flags("parallel", ("--preallocate",),
                                             n)), REF_FLOOR), "<=", 1.15),
    Target("3a", "Tiny views", "2",
           "V2 POSIX unbuffered time / parallel time",
           ratio(tiny(v2_posix), tiny(parallel_n)), ">=", 12),
    Target("3b", "Tiny views", "2",
           "V2 stdio buffered time / parallel time",
           ratio(tiny(lambda p, n: p.is_plain() and
                      p.strategy == "sequential" and p.io == "stdio" and
                      p.buffer is None), tiny(parallel_n)), ">=", 2.2),
    Target("4", "View-size sweep", "3",
           "best article strategy time / parallel time, smallest over the "
           "sizes", sweep_worst, ">=", 1.5),
    Target("5", "Few, huge views", "7",
           "parallel speed-up T(1 thread) / T(n threads) on a huge file / "
           "the reference stream's, smallest", huge_relative, ">=", 0.9),
    Target("6a", "Whole process", "8",
           "`parload FILE` process wall / reported load",
           process_wall_ratio, "<=", 1.15),
    Target("6b", "Whole process", "8",
           "`parload FILE` peak RSS - dataset",
           process_rss_over, "<=", 16, "MiB"),
    Target("7", "Cold cache", "5",
           "time of the better of dd and fio / parallel time",
           cold_best_peer, ">=", 0.95),
    Target("8", "Thread scaling (warm)", "4",
           "parallel efficiency T(1) / (t x T(t)), lowest at 2 <= t <= "
           "the cores", scaling_worst, ">=", 0.70, "%"),
] + [t for f in SELECTION_FILES for t in selection_targets(f)] + \
    STARTUP_TARGETS + PYTHON_TARGETS + STREAM_TARGETS + MPI_TARGETS

NOTES = [
    Note("1b", "Ceiling of 1a: V2 POSIX / copy floor = %s, the lead of a "
         "load as fast as the copy floor; a 5x lead needs a load that much "
         "faster than the floor.", ratio(REF_V2, REF_FLOOR)),
    Note("1b", "V2 POSIX with 4 KiB pages / parallel = %s (the article's "
         "own allocation, not advised for huge pages; 1a is against V2 "
         "POSIX as the target defines it, `--strategy sequential --io "
         "posix`).",
         ratio(ref(lambda p, n: p.is_flags("sequential", ("--no-hugepages",))
                   and p.io == "posix" and p.buffer is None), REF_PAR)),
    Note("2", "Into caller memory in 4 KiB pages (--preallocate "
         "--no-hugepages) / copy floor = %s.",
         ratio(ref(lambda p, n: p.is_flags(
             "parallel", ("--preallocate", "--no-hugepages"), n)),
             REF_FLOOR)),
    Note("2", "--preallocate / the copy floor into a touched file-sized "
         "buffer (a destination that, like a loader's, does not stay in "
         "the cache) = %s.",
         ratio(ref(lambda p, n: p.is_flags("parallel", ("--preallocate",),
                                           n)),
               ref(lambda p, n: p.tool == "copyfloor-whole" and
                   p.threads == n))),
    Note("4", "%s", sweep_capped),
    Note("8", "Copy floor efficiency at t = the cores: %s.",
         floor_efficiency, "%"),
] + [Note("9", "parload's full load + a copy / its selection (%s): %%s." % f,
          copy_vs_select(f)) for f in SELECTION_FILES] + [
    Note("10a", "`parload --threads 1 EMPTY` wall - `parload --version` "
         "wall = %s.", difference(wall("reference", empty_load(True)),
                                  VERSION_WALL), "ms"),
    Note("12a", "The whole load of the reference stream (`parload`, every "
         "core) takes %s.", ms_of(REF_PAR), "ms"),
    Note("12b", "The windowed load / the whole load of the scan file "
         "(time) = %s.", ratio(SCAN_WINDOWED, SCAN_WHOLE)),
    Note("12c", "I/O and compute together / their sum = %s.",
         overlap_ratio(of_sum=True)),
    Note("13a", "The whole parload_mpi_load call (communicator, header "
         "broadcast, loader, load) of %d ranks / the single-process "
         "load = %%s." % MPI_RANKS,
         ratio(mpi_pick(MPI_RANKS, "call_seconds"), MPI_SINGLE)),
    Note("13c", "Each rank's rows (%s).", layout_cost),
]


def evaluate(sessions, n, targets=None):
    """(target, Measured or None) for every target."""
    run = Run(sessions, n)
    return [(t, t.value(run)) for t in (targets or TARGETS)]


def markdown(sessions, n):
    """The targets table and its notes; [] when nothing was measured."""
    run = Run(sessions, n)
    results = evaluate(sessions, n)
    if not any(m for _, m in results):
        return []
    out = ["Each figure is measured in this run (n = %d cores this process "
           "may use), from the medians of the points named." % n, "",
           "| target | what is compared | measured | bar | verdict |",
           "|---|---|---|---|---|"]
    for t, m in results:
        bar = "%s %s" % (t.cmp, fmt(t.bar, t.unit, bar=True))
        if m is None:
            figure, verdict = "", "not measured in this run (experiment%s " \
                "%s)" % ("s" if "," in t.exps else "", t.exps)
        elif m.value is None:
            figure, verdict = m.detail, "no verdict"
        else:
            figure = fmt(m.value, t.unit)
            if t.unit == "x" and figure == "%.2f" % t.bar:
                figure = "%.3f" % m.value  # on the bar: one digit more
            figure += " (%s)" % m.detail if m.detail else ""
            verdict = "met" if t.met(m.value) else "**NOT met**"
        out.append("| %s. %s | %s | %s | %s | %s |" % (
            t.id, t.name, t.what, figure, bar, verdict))
    notes = []
    for note in NOTES:
        m = note.value(run)
        if m is None:
            continue
        text = note.text % (m.detail if m.value is None
                            else fmt(m.value, note.unit))
        notes.append("- %s: %s" % (note.after, text))
    if notes:
        out += ["", "Notes (informational, no verdict):", ""] + notes
    return out
