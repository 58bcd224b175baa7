"""Medians of the points, and finding the points a ratio is made of:
the figures that the tables (tables.py), the CSV and results.md
(report.py) and the targets (targets.py) are made of."""
import statistics

from .points import Point
from .sessions import OVERLAP


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
         "vs_floor": None, "vs_fresh": None, "read_calls": None,
         "cached": median(p, "cached"),
         "wall": median(p, "wall"), "peak_rss_kib": median(p, "peak_rss_kib"),
         "harness_rss_kib": median(p, "harness_rss_kib")}
    if med is None:
        return t
    t["gbps"] = st.size / med / 1e9 if med > 0 else 0.0
    if p.stream is None:
        v2 = median(s.find(Point.is_v2_posix))
        floor = median(s.find(lambda q: q.tool == "copyfloor" and
                              q.threads == n))
        fresh = median(s.find(lambda q: q.tool == "freshfloor" and
                              q.threads == n))
        t["vs_v2"] = v2 / med if v2 and med > 0 else None
        t["vs_floor"] = med / floor if floor else None
        t["vs_fresh"] = med / fresh if fresh else None
    if p.tool == "parload":
        t["read_calls"] = median(p, "read_calls")
    return t


def scaling(sessions):
    """Experiment 4 on the warm reference stream: {threads: (parallel
    median, copy floor median, fresh-memory floor median)}; any may be
    None."""
    out = {}
    for s in sessions:
        if s.stream.name != "reference" or s.cache != "warm":
            continue
        for p in s.points:
            if 4 not in p.exps or not p.runs:
                continue
            at = out.setdefault(p.threads, [None, None, None])
            if p.is_parallel(p.threads):
                at[0] = median(p)
            elif p.tool == "copyfloor":
                at[1] = median(p)
            elif p.tool == "freshfloor":
                at[2] = median(p)
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
    POSIX, fresh-memory floor)."""
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
                       med(Point.is_v2_posix),
                       med(lambda p: p.tool == "freshfloor" and
                           p.threads == n)))
    return series


def overlap_points(sessions):
    """Experiment 11's compute overlap: the points (I/O alone, compute
    alone, both), or None."""
    for s in sessions:
        if s.note != OVERLAP:
            continue
        pts = [p for p in s.points if p.tool == "batches" and p.runs and
               not p.busy]
        io = [p for p in pts if p.compute_us is None]
        comp = [p for p in pts if p.compute_only]
        both = [p for p in pts
                if p.compute_us is not None and not p.compute_only]
        if io and comp and both:
            return io[0], comp[0], both[0]
    return None


def overlap_busy(sessions):
    """Experiment 11: the median of the I/O alone beside a thread that
    spins, or None."""
    for s in sessions:
        if s.note == OVERLAP:
            for p in s.points:
                if p.tool == "batches" and p.busy and p.runs:
                    return median(p, "seconds")
    return None


def overlap(sessions, field="seconds"):
    """Experiment 11: (I/O alone, compute alone, both) medians of field
    (seconds, or cpu_seconds: the process's CPU time), or None."""
    pts = overlap_points(sessions)
    ms = pts and [median(p, field) for p in pts]
    return tuple(ms) if ms and None not in ms else None


def on_floor(t):
    """Whether a point's peak RSS is at the harness's own size (see
    harness_rss_kib): the process used at most that much."""
    rss, floor = t["peak_rss_kib"], t["harness_rss_kib"]
    return rss is not None and floor is not None and rss <= floor + 2048
