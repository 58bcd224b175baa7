"""The targets against the floor that bounds each load, and of the page
cache: the fresh-memory floor (experiments 1, 2, 4), sinograms against
the view layout of the same selection (experiment 13), the rows split
against the views split (experiment 12), Python against the command
(experiment 10), and the page-cache modes (experiment 14)."""
import statistics

from .sessions import (ALIGNED, BAND_32, BAND_32_SINOGRAMS, MAPPED,
                       MPI_RANKS, PAGE_CACHE, RAW_LAYOUTS)
from .points import SINOGRAMS
from .target import (Measured, Note, Pick, Target, by_round, paired,
                     parallel_n, ratio)
from .targets_uses import exp10, mpi_pick


def fresh(file, threads=None, tool="freshfloor", note=None):
    """The fresh-memory floor on a warm file (threads None: n), or
    another floor (tool), in the session with that note."""
    return Pick(file, "warm", lambda p, n: p.tool == tool and
                p.threads == (threads or n), note=note)


def reference_worst(run):
    """The largest parallel t / fresh floor t on the warm reference
    stream, 1 <= t <= n."""
    xs = []
    for t in range(1, run.n + 1):
        par = Pick("reference", "warm", lambda p, n, t=t:
                   p.is_parallel(t)).get(run)
        fl = fresh("reference", t).get(run)
        if par and fl:
            xs.append((par / fl, t))
    if not xs or len(xs) < run.n:
        return None
    worst = max(xs)
    return Measured(worst[0], "at t = %d; %s" % (worst[1], ", ".join(
        "t = %d: %.2f" % (t, x) for x, t in sorted(xs, key=lambda x: x[1]))))


def layout_load(select, extra=()):
    """Experiment 13's verified parallel load of the reference stream, of
    the selection named select (None: the whole file), with the flags
    extra."""
    return Pick("reference", "warm", lambda p, n: (
        p.tool == "parload" and p.strategy == "parallel" and p.verify and
        p.threads == n and p.stream is None and p.extra == tuple(extra) and
        (p.select.name if p.select else None) == select), note=RAW_LAYOUTS)


def rows_split(run):
    """The slowest rank of the rows split / the slowest rank of the views
    split (--verify), MPI_RANKS ranks sharing the cores."""
    rows = Pick("reference-crc", "warm", lambda p, n: (
        p.tool == "parload-mpi" and p.ranks == MPI_RANKS and
        p.split == "rows")).get(run)
    views = mpi_pick(MPI_RANKS).get(run)
    return Measured(rows / views) if rows and views else None


FLOOR_TARGETS = [
    Target("15a", "Reference stream, fresh-memory floor", "1,4",
           "parallel time with t threads / fresh-memory floor with t "
           "threads, largest at 1 <= t <= the cores", reference_worst,
           "<=", 1.10),
    Target("15b", "Tiny views, fresh-memory floor", "2",
           "parallel time / fresh-memory floor (every core)",
           paired(Pick("tiny", "warm", parallel_n), fresh("tiny")), "<=",
           1.30),
    Target("15c", "Sinograms, whole file", "13",
           "sinogram layout time, --map-sinograms / the view layout's (the "
           "whole reference stream)",
           paired(layout_load(SINOGRAMS, MAPPED), layout_load(None)),
           "<=", 1.10),
    Target("15d", "Sinograms, a 32-row band", "13",
           "%s time, --map-sinograms / %s in view layout" % (
               BAND_32_SINOGRAMS.name, BAND_32.name),
           paired(layout_load(BAND_32_SINOGRAMS.name, MAPPED),
                  layout_load(BAND_32.name)), "<=", 1.10),
    Target("15e", "MPI rows split", "12",
           "%d ranks, rows split, slowest rank / the views split's "
           "(--verify), same threads" % MPI_RANKS, rows_split, "<=", 1.20),
    Target("15f", "Python in-process", "10",
           "parload.load() in Python time / the command's reported load",
           paired(exp10(lambda p, n: p.tool == "pyload"),
                  exp10(parallel_n)), "<=", 1.05),
]

# The floors of experiment 13: the sinogram floor (bench/freshfloor
# --sinograms: all cores read their band of each view's rows into a buffer
# in the cache and stream the rows to their sinograms in a fresh mapping),
# the same from the mapped file (--map), and the fresh-memory floor.
SINO_FLOOR, SINO_MAPPED, FRESH_13 = (
    fresh("reference", tool=t, note=RAW_LAYOUTS)
    for t in ("sinofloor", "sinofloor-map", "freshfloor"))

FLOOR_NOTES = [
    Note("15c", "The whole file's sinograms read (the default, without "
         "--map-sinograms) / the view layout = %s.  A loader that reads "
         "makes two copies of each byte (the kernel's into a buffer in "
         "the cache, then the rows to their sinograms), from the mapped "
         "file one; but a file truncated under a mapped load kills the "
         "process with SIGBUS.",
         paired(layout_load(SINOGRAMS), layout_load(None))),
    Note("15c", "The floor that bounds 15c for a loader that reads with "
         "read calls: the sinogram floor (all cores "
         "read their band of each view's rows into a buffer that stays in "
         "the cache, then stream the rows to their sinograms in a fresh "
         "mapping) / the fresh-memory floor, same run = %s.",
         ratio(SINO_FLOOR, FRESH_13)),
    Note("15c", "The whole reference stream as sinograms, read / the "
         "sinogram floor = %s.", ratio(layout_load(SINOGRAMS), SINO_FLOOR)),
    Note("15c", "The sinogram floor from the mapped file (the same, the "
         "bands copied from the file mapped into memory: one copy of each "
         "byte, no read call: what --map-sinograms does) / the "
         "fresh-memory floor = %s.",
         ratio(SINO_MAPPED, FRESH_13)),
    Note("15d", "The band's sinograms read (the default) / the band in "
         "view layout = %s.",
         paired(layout_load(BAND_32_SINOGRAMS.name),
                layout_load(BAND_32.name))),
    Note("15e", "The rows split's ranks write sinograms, the views "
         "split's views: the sinogram floor / the fresh-memory floor of "
         "experiment 13 (15c's, every core) = %s is the least the layout "
         "costs (measured with every core in one process, not in two "
         "ranks).", ratio(SINO_FLOOR, FRESH_13)),
    Note("15f", "What the Python layer adds: parload.load()'s time / the "
         "library's reported time of the same load in the same process = "
         "%s (the rest of 15f is the library's own time, which differs "
         "between the two processes).",
         ratio(exp10(lambda p, n: p.tool == "pyload"),
               exp10(lambda p, n: p.tool == "pyload", "load_seconds"))),
]

# ---- the page cache (experiment 14) ----

CACHE_FILES = ("reference", "scan", "big")


def cache_pick(file, cache, pred, field="seconds"):
    return Pick(file, cache, lambda p, n: 14 in p.exps and pred(p, n),
                field, note=PAGE_CACHE)


def mode(m):
    return lambda p, n: p.tool == "parload" and p.cache == m


def tools(*names):
    return lambda p, n: p.tool in names


def best_of(run, file, cache, *names):
    xs = [cache_pick(file, cache, tools(x)).get(run) for x in names]
    xs = [x for x in xs if x]
    return min(xs) if xs else None


def over_files(each, worst=max, fmt="%.2f"):
    """A target's figure over experiment 14's files: each(run, file) is
    a figure or None; the worst of them, each file's in the detail."""
    def value(run):
        xs = [(each(run, f), f) for f in CACHE_FILES]
        xs = [(x, f) for x, f in xs if x is not None]
        if not xs:
            return None
        w = worst(xs)
        return Measured(w[0], "at %s; %s" % (w[1], ", ".join(
            "%s %s" % (f, fmt % x) for x, f in xs)))
    return value


def cached_target(id, m, bar):
    """The share of the file that mode m leaves cached after a cold load,
    the largest over the files, at most bar."""
    def each(run, file):
        return cache_pick(file, "cold", mode(m), "cached").get(run)
    return Target(id, "--cache %s, cold" % m, "14", "share of the file in "
                  "the page cache after the load, largest over the files",
                  over_files(each, fmt="%.3f"), "<=", bar, "%")


def over(a, b):
    """The figure of a file: a(run, file) / b(run, file), each a time."""
    def each(run, file):
        x, y = a(run, file), b(run, file)
        return x / y if x and y else None
    return each


def load(m, cache="cold", field="seconds"):
    """Mode m's time on a file (field "wall": its process's, start to
    exit)."""
    return lambda run, file: cache_pick(file, cache, mode(m),
                                        field).get(run)


def direct_peers(run, file):
    return best_of(run, file, "cold", "dd-direct", "fio-direct")


def buffered_peer(run, file):
    """The better of dd bs=1M and fio (buffered) on a file, cold."""
    return best_of(run, file, "cold", "dd", "fio")


def slowest_load(run, file):
    """The slowest of parload's cold loads over the modes."""
    xs = [load(m)(run, file) for m in ("keep", "drop", "direct", "auto")]
    xs = [x for x in xs if x]
    return max(xs) if xs else None


def cold_peer(run, file):
    """The better of dd bs=1M and fio (buffered) / the slowest cold
    load over the modes."""
    return over(buffered_peer, slowest_load)(run, file)


# ---- would an io_uring reader beat the pool? (experiment 14) ----

def uring(direct=False, rings=True, cache="cold"):
    """An io_uring floor's time on a file: buffered or O_DIRECT; rings:
    one ring a core with many requests in flight, else as many threads
    with one request each."""
    tool = "uringfloor-direct" if direct else "uringfloor"
    return lambda run, file: cache_pick(
        file, cache, lambda p, n: p.tool == tool and
        (p.threads == n) == rings).get(run)


def pread_floor(cache="cold"):
    """The fresh-memory floor's time (pread, a thread a core) on a file."""
    return lambda run, file: cache_pick(
        file, cache, lambda p, n: p.tool == "freshfloor" and
        p.threads == n).get(run)


def faster_direct_floor(run, file):
    """The faster of the file's two cold O_DIRECT floors."""
    xs = [x for x in (uring(True)(run, file), uring(True, False)(run, file))
          if x]
    return min(xs) if xs else None


def per_file(a, b):
    """a / b on each of experiment 14's files, as text (no verdict)."""
    def value(run):
        xs = [(f, a(run, f), b(run, f)) for f in CACHE_FILES]
        xs = ["%s %.2f" % (f, x / y) for f, x, y in xs if x and y]
        return Measured(None, ", ".join(xs)) if xs else None
    return value


def per_round(a, b, cache="cold"):
    """Mode a's time / mode b's on each of experiment 14's files, as the
    median of each round's ratio (run k of both points: a machine that
    other work slows for a while slows a round), as text (no verdict)."""
    def value(run):
        out = []
        for f in CACHE_FILES:
            pa = cache_pick(f, cache, mode(a)).point(run)
            pb = cache_pick(f, cache, mode(b)).point(run)
            if not pa or not pb:
                continue
            x, y = by_round(pa), by_round(pb)
            rs = [x[r] / y[r] for r in y if r in x]
            if rs:
                out.append("%s %.2f" % (f, statistics.median(rs)))
        return Measured(None, ", ".join(out)) if out else None
    return value


def aligned(pred):
    """A point of experiment 14's cold session on the headerless
    reference stream (sessions.direct_aligned)."""
    return Pick("reference-bare", "cold", pred, note=ALIGNED)


ALIGNED_DIRECT = aligned(lambda p, n: p.tool == "parload" and
                         p.cache == "direct")


def aligned_floor(wide):
    """That file's O_DIRECT floor, one read a thread: as many threads as
    the load's, or (wide) 8 a core."""
    return aligned(lambda p, n: p.tool == "uringfloor-direct" and
                   (p.threads > n) == wide)


URING_NOTES = [
    Note("16b", "The same as the median of each round's ratio (a round: a "
         "cold load in each mode in turn), per file: %s.",
         per_round("keep", "drop")),
    Note("16e", "The same as the median of each round's ratio, per file: "
         "%s.", per_round("auto", "keep", "warm")),
    Note("16d", "--cache direct of the reference stream's payloads alone "
         "(no view headers: read straight into place) / the O_DIRECT floor "
         "of as many threads, one read each, same file = %s.",
         ratio(ALIGNED_DIRECT, aligned_floor(False))),
    Note("16d", "The same / the O_DIRECT floor of 8 threads a core = %s "
         "(what more reads in flight would give).",
         ratio(ALIGNED_DIRECT, aligned_floor(True))),
    Note("16d", "The same / its keep load, cold = %s.",
         ratio(ALIGNED_DIRECT, aligned(lambda p, n: p.tool == "parload" and
                                       p.cache == "keep"))),
    Note("16d", "--cache direct's whole process / keep's, cold (each "
         "command's wall from start to exit, its --verify-seed check "
         "included), per file: %s.  The workers read ahead through an "
         "io_uring ring each, whose teardown the kernel runs in the "
         "background; freeing a Linux AIO queue instead (the fallback "
         "where rings are refused) makes the exit wait for RCU grace "
         "periods, 30-40 ms.",
         per_file(load("direct", field="wall"), load("keep", field="wall"))),
    Note("16f", "The bound under 16f: the better of dd bs=1M and fio / "
         "the fresh-memory floor, cold (a thread a core pread the file "
         "into fresh memory: the least a loader that returns new memory "
         "can take; dd and fio reuse one buffer), per file: %s.",
         per_file(buffered_peer, pread_floor())),
    Note("16f", "The slowest of keep, drop, direct and auto / the "
         "fresh-memory floor, cold, per file: %s.",
         per_file(slowest_load, pread_floor())),
    Note("16f", "io_uring, warm: the io_uring floor (a ring a core, 8 reads "
         "of 1 MiB in flight each, into a fresh mapping) / the fresh-memory "
         "floor (pread, a thread a core), per file: %s.",
         per_file(uring(cache="warm"), pread_floor("warm"))),
    Note("16f", "io_uring, cold: the same, buffered / the fresh-memory "
         "floor, cold, per file: %s.", per_file(uring(), pread_floor())),
    Note("16f", "io_uring, cold, O_DIRECT: a ring a core, 8 reads in flight "
         "each / as many threads with one read each (io_uring at depth 1, "
         "as pread), per file: %s.",
         per_file(uring(True), uring(True, rings=False))),
    Note("16f", "--cache direct / the faster of those two O_DIRECT floors, "
         "per file: %s.",
         per_file(load("direct"), faster_direct_floor)),
    Note("16f", "The bound under 16f for --cache direct: the better of dd "
         "bs=1M and fio (buffered, with the kernel's readahead) / the "
         "faster O_DIRECT floor, per file: %s (on a file where it is "
         "under 0.95, no direct load there can meet 16f).",
         per_file(buffered_peer, faster_direct_floor)),
]

CACHE_TARGETS = [
    cached_target("16a", "drop", 0.02),
    Target("16b", "--cache drop, cold", "14",
           "keep's time / drop's (drop's speed relative to keep), smallest "
           "over the files", over_files(over(load("keep"), load("drop")),
                                        min), ">=", 0.95),
    cached_target("16c", "direct", 0.01),
    Target("16d", "--cache direct, cold", "14",
           "the better of dd iflag=direct bs=8M and fio --direct=1 / "
           "direct's time, smallest over the files",
           over_files(over(direct_peers, load("direct")), min), ">=", 0.95),
    Target("16e", "--cache auto, warm", "14",
           "auto's time / keep's, largest over the files",
           over_files(over(load("auto", "warm"), load("keep", "warm"))),
           "<=", 1.02),
    Target("16f", "Every cold load", "14",
           "the better of dd bs=1M and fio / the slowest of keep, drop, "
           "direct and auto, smallest over the files",
           over_files(cold_peer, min), ">=", 0.95),
]
