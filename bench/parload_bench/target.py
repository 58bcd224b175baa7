"""What a performance target is (targets.py lists them): a figure
(Measured) computed from the run (Run), usually a ratio or difference of
medians of points picked on a file (Pick), with its bar (Target), or an
informational figure (Note)."""
import statistics

from .medians import median


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

    def point(self, run):
        """The point picked, or None."""
        for s in run.sessions:
            if self.file and s.stream.name != self.file or \
                    s.cache != self.cache or \
                    (self.note is not None and s.note != self.note):
                continue
            p = s.find(lambda p: self.pred(p, run.n))
            if p:
                return p
        return None

    def get(self, run):
        p = self.point(run)
        return median(p, self.field) if p else None


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


def by_round(point, field="seconds"):
    """A point's measured field by its run number (run k of every point
    is one round), where it was measured."""
    return {m["run"]: m[field] for m in point.runs if m[field]}


def paired(a, b):
    """a / b, two Picks, as the ratio of their medians (the bench's
    method), with the median of the ratios of the two points' runs of the
    same round (run k of every point, then run k + 1: a machine that other
    work slows for a while slows a round) in the detail."""
    def value(run):
        x, y = run.get(a), run.get(b)
        if not x or not y:
            return None
        mine = by_round(a.point(run), a.field)
        theirs = by_round(b.point(run), b.field)
        own = [mine[r] / theirs[r] for r in theirs if r in mine]
        return Measured(x / y, "median of each round's ratio %.2f" %
                        statistics.median(own) if own else "")
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
        return "%.0f%%" % (x * 100) if bar or x >= 0.095 else \
            "%.2f%%" % (x * 100)
    text = "%g" % x if bar else "%.2f" % x
    return text if unit == "x" else "%s %s" % (text, unit)
