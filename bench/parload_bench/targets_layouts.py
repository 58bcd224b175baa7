"""The targets of raw layouts (experiment 13): parload's own format
described by --raw, big-endian, mono12p, 2,000 one-view files, and a band
of rows and sinograms of a foreign layout, each a ratio of medians of
points interleaved in the one session of experiment 13."""
from .sessions import BAND_32, RAW_LAYOUTS
from .target import Measured, Note, Pick, Target, paired, ratio
from .points import SINOGRAMS


def kind_of(p):
    """The layout kind of p's file (None: the session's own stream read
    as parload's format)."""
    return p.stream.kind if p.stream is not None else None


def load(kind=None, select=None):
    """The verified parallel load (every core) of the file of that kind,
    whole or the selection named select."""
    return Pick("reference", "warm", lambda p, n: (
        p.tool == "parload" and p.strategy == "parallel" and p.verify and
        p.threads == n and not p.extra and kind_of(p) == kind and
        (p.select.name if p.select else None) == select), note=RAW_LAYOUTS)


def user_wall(kind=None):
    """The process wall of `parload [--raw SPEC] FILE` as a user runs it
    (the defaults, unverified)."""
    return Pick("reference", "warm", lambda p, n: (
        p.tool == "parload" and p.strategy is None and not p.verify and
        not p.threads_flag and not p.extra and p.select is None and
        kind_of(p) == kind), "wall", note=RAW_LAYOUTS)


def numpy_load(kind):
    return Pick("reference", "warm", lambda p, n: (
        p.tool == "npraw" and kind_of(p) == kind), note=RAW_LAYOUTS)


def relative(kind, select):
    """(select / full) of the file of that kind over the same of
    parload's own format, with both in the detail."""
    def value(run):
        xs = [(run.get(load(k, select)), run.get(load(k)))
              for k in (kind, None)]
        if not all(a and b for a, b in xs):
            return None
        (fa, fb), (na, nb) = xs
        return Measured((fa / fb) / (na / nb), "%s %.2f, own format %.2f" % (
            kind, fa / fb, na / nb))
    return value


LAYOUT_TARGETS = [
    Target("14a", "Raw layout of parload's own format", "13",
           "`parload --raw width=896,height=64,type=u16,offset=64,header=32 "
           "FILE` wall / `parload FILE` wall (as a user runs them)",
           paired(user_wall("own"), user_wall()), "<=", 1.03),
    Target("14b", "Big-endian u16", "13",
           "little-endian load time / big-endian load time, same layout "
           "and size (--raw u16 / u16be, offset 64, header 32)",
           paired(load("own"), load("be")), ">=", 0.90),
    Target("14c", "mono12p", "13",
           "mono12p load time / u16 load time, same pixel count "
           "(headerless files)", paired(load("mono12p"), load("bare")),
           "<=", 1.15),
    Target("14d", "mono12p", "13",
           "numpy fromfile + unpacking time / mono12p load time",
           paired(numpy_load("mono12p"), load("mono12p")), ">=", 5),
    Target("14e", "2,000 one-view files", "13",
           "one file's load time / `--concat` load time of the same bytes "
           "in 2,000 files", paired(load("bare"), load("frames")), ">=",
           0.7),
    Target("14f", "2,000 one-view files", "13",
           "numpy fromfile loop time / `--concat` load time",
           paired(numpy_load("frames"), load("frames")), ">=", 3),
    Target("14g", "Row band of a foreign layout", "13",
           "(%s / full load) of the big-endian file / the same of "
           "parload's own format" % BAND_32.name,
           relative("be", BAND_32.name), "<=", 1.10),
    Target("14h", "Sinograms of a foreign layout", "13",
           "(sinograms / full load) of the big-endian file / the same of "
           "parload's own format", relative("be", SINOGRAMS), "<=", 1.10),
]

LAYOUT_NOTES = [
    Note("14a", "The same two as reported loads, verified: --raw / "
         "parload's format = %s.", ratio(load("own"), load())),
    Note("14b", "The big-endian load / parload's own format's = %s.",
         ratio(load("be"), load())),
    Note("14c", "The headerless u16 load (`--raw` u16, offset 0, header 0) "
         "/ parload's own format's = %s.", ratio(load("bare"), load())),
    Note("14f", "Ceiling of 14f: NumPy's fromfile loop / the one file's "
         "load = %s, the lead of a `--concat` load as fast as one file's.",
         ratio(numpy_load("frames"), load("bare"))),
]
