"""The targets of containers (experiment 15, issue 20): HDF5 and TIFF
against the raw stream of the same bytes and against the Python readers
a user has (h5py, tifffile), the metadata's share of a load, and extract
to .h5 and .tif against extract to .npy; each a ratio of medians of
points interleaved in experiment 15's one session.  The comparisons with
h5py and tifffile are of times inside the process (from the call until
the array is complete: parload.load() against the peer's read, both in a
fresh interpreter with their modules imported); the whole processes'
walls are in a note beside each (Python's start and imports make those
ratios larger)."""
from .containers import CONTAINERS, PAGES
from .sessions import BAND_32_SINOGRAMS
from .target import Measured, Note, Pick, Target, paired, ratio


def kind_of(p):
    """The container kind (or raw layout kind) of p's file."""
    return getattr(p.stream, "kind", None)


def small(p):
    """Whether p's file holds the many small views of the metadata
    points."""
    return getattr(getattr(p.stream, "source", None), "name",
                   "").startswith(PAGES)


def ctr(tool, kind, who=None, select=None, threads=None, describe=False,
        field="seconds", pages=False):
    """The point of experiment 15 on the container of that kind (pages:
    the file of many small views), by tool and who, of the selection
    named select (None: the whole file), with threads (None: n)."""
    return Pick(None, "warm", lambda p, n: (
        p.tool == tool and kind_of(p) == kind and
        getattr(p, "who", None) == who and
        getattr(p, "describe", False) == describe and
        (p.select.name if p.select else None) == select and
        small(p) == pages and
        (tool != "ctr-python" or who != "parload" or
         p.threads == (threads or n))), field, note=CONTAINERS)


def py(kind, who="parload", select=None, threads=None, describe=False,
       pages=False):
    return ctr("ctr-python", kind, who, select, threads, describe,
               pages=pages)


def wall_of(kind, select=None, field="wall", pages=False):
    """The process wall (or another field) of `parload FILE` on the
    container of that kind (as a user runs it; pages: of many small
    views)."""
    return ctr("ctr-command", kind, select=select, field=field,
               pages=pages)


def raw_user(field="wall"):
    """The raw stream of the containers' bytes (the payloads alone,
    --raw), as a user runs it: its process wall (or another field)."""
    return Pick(None, "warm", lambda p, n: (
        p.tool == "parload" and p.strategy is None and not p.verify and
        kind_of(p) == "bare"), field, note=CONTAINERS)


RAW_WALL = raw_user()


def peer_wall(kind, who, select=None):
    return ctr("ctr-python", kind, who, select, field="wall")


def extract(out):
    return Pick(None, "warm", lambda p, n: (
        p.tool == "ctr-extract" and p.out == out), "wall", note=CONTAINERS)


def info_wall(kind):
    """The process wall of `parload info FILE` on the pages file of that
    kind."""
    return Pick(None, "warm", lambda p, n: (
        p.tool == "ctr-info" and kind_of(p) == kind), "wall",
        note=CONTAINERS)


def worst_of(pairs, worst, fmt="%.2f"):
    """The worst (min or max) of the ratios a / b of named pairs of
    Picks that were measured, each in the detail, with those that were
    not."""
    def value(run):
        xs, absent = [], []
        for name, a, b in pairs:
            x, y = run.get(a), run.get(b)
            if x and y:
                xs.append((x / y, name))
            else:
                absent.append(name)
        if not xs:
            return None
        w = worst(xs)
        return Measured(w[0], "at %s; %s%s" % (w[1], ", ".join(
            "%s %s" % (name, fmt % x) for x, name in xs), "".join(
            "; %s not measured" % name for name in absent)))
    return value


def speedups(run):
    """The gzip file's parload.load() speed-up T(1) / T(t) at every
    thread count."""
    t1 = run.get(py("h5gz", threads=1))
    if not t1:
        return None
    parts = []
    for t in range(2, run.n + 1):
        tt = run.get(py("h5gz", threads=t))
        if tt:
            parts.append("%.2fx at %d threads" % (t1 / tt, t))
    return Measured(None, ", ".join(parts) or "one core only")


BAND = BAND_32_SINOGRAMS.name

CONTAINER_TARGETS = [
    Target("17a1", "HDF5 contiguous vs the raw stream", "15",
           "the raw stream's (`--raw`, the same bytes) process wall / "
           "`parload FILE.h5` process wall (speed, as a user runs them)",
           paired(RAW_WALL, wall_of("h5")), ">=", 0.9),
    Target("17a2", "HDF5 contiguous vs h5py", "15",
           "h5py `dset[...]` time / parload.load() time (in the process)",
           paired(py("h5", "h5py"), py("h5")), ">=", 1.7),
    Target("17b", "HDF5 band as sinograms vs h5py", "15",
           "h5py `np.ascontiguousarray(dset[:, 16:48, :].transpose(1, 0, "
           "2))` time / parload.load(rows=(16, 48), layout=\"sinograms\") "
           "time", paired(py("h5", "h5py", BAND), py("h5", select=BAND)),
           ">=", 3),
    Target("17c", "HDF5 gzip 4 + shuffle vs h5py", "15",
           "h5py `dset[...]` time / parload.load() time, every core",
           paired(py("h5gz", "h5py"), py("h5gz")), ">=", 1.7),
    Target("17d1", "Multi-page TIFF vs the raw stream", "15",
           "the raw stream's process wall / `parload FILE.tif` process "
           "wall", paired(RAW_WALL, wall_of("tif")), ">=", 0.9),
    Target("17d2", "Multi-page TIFF vs tifffile", "15",
           "tifffile.imread time / parload.load() time",
           paired(py("tif", "tifffile"), py("tif")), ">=", 1.7),
    Target("17e", "A folder of single-page TIFFs vs tifffile", "15",
           "tifffile.imread(list of files) time / parload.load(FOLDER) "
           "time", paired(py("tifdir", "tifffile"), py("tifdir")), ">=", 3),
    Target("17f", "Metadata of many small views", "15",
           "parload.describe() time / parload.load() time (the directory "
           "walk of a multi-page TIFF, the chunk table of a chunked HDF5 "
           "dataset), the larger",
           worst_of([("TIFF", py("tif", describe=True, pages=True),
                      py("tif", pages=True)),
                     ("HDF5", py("h5chunks", describe=True, pages=True),
                      py("h5chunks", pages=True))], max, "%.3f"),
           "<=", 0.05, "%"),
    Target("17g", "extract to .h5 and .tif", "15",
           "`parload extract -o OUT.npy` process wall / that of -o OUT.h5 "
           "and -o OUT.tif (speed), the smaller",
           worst_of([("h5", extract("npy"), extract("h5")),
                     ("tif", extract("npy"), extract("tif"))], min), ">=",
           0.5),
]


def wall_ratio(kind, who, select=None):
    """The peer's process wall / `parload FILE`'s (both whole)."""
    return ratio(peer_wall(kind, who, select), wall_of(kind, select))


def serial(run):
    """What parload's stats say of a serialised read of the gzip file."""
    p = py("h5gz").point(run)
    if not p:
        return None
    said = sorted(set(m.get("serial") or "none" for m in p.runs))
    return Measured(None, "; ".join(said))


def floor_of(kind, threads=None):
    """The fresh-memory floor of the container of that kind, with threads
    (None: n)."""
    return Pick(None, "warm", lambda p, n: (
        p.tool == "freshfloor" and kind_of(p) == kind and not small(p) and
        p.threads == (threads or n)), note=CONTAINERS)


CONTAINER_NOTES = [
    Note("17a1", "The same two as the loads they report (`seconds`): "
         "the raw stream's / `parload FILE.h5`'s = %s.",
         ratio(raw_user("seconds"), wall_of("h5", field="seconds"))),
    Note("17a1", "The gzip file's `parload FILE.h5` wall / the raw "
         "stream's = %s.", ratio(wall_of("h5gz"), RAW_WALL)),
    Note("17a2", "Whole processes: the h5py process wall / `parload "
         "FILE.h5` wall = %s.", wall_ratio("h5", "h5py")),
    Note("17a2", "Ceiling of 17a2: h5py / the fresh-memory floor of the "
         "same file (every core) = %s, the lead of a load as fast as a new "
         "dataset can be made.", ratio(py("h5", "h5py"), floor_of("h5"))),
    Note("17a2", "h5py / the fresh-memory floor with one thread, as h5py "
         "reads = %s.", ratio(py("h5", "h5py"), floor_of("h5", 1))),
    Note("17b", "Whole processes: the h5py band's process wall / `parload "
         "--rows 16:48 --layout sinograms FILE.h5` wall = %s.",
         wall_ratio("h5", "h5py", BAND)),
    Note("17c", "Whole processes: h5py / `parload FILE.h5` (gzip) = %s.",
         wall_ratio("h5gz", "h5py")),
    Note("17c", "parload.load() of the gzip file, speed-up against "
         "threads: %s.", speedups),
    Note("17c", "parload's stats on the gzip file, serial: %s.", serial),
    Note("17d1", "The same two as the loads they report (`seconds`): "
         "the raw stream's / `parload FILE.tif`'s = %s.",
         ratio(raw_user("seconds"), wall_of("tif", field="seconds"))),
    Note("17d2", "Whole processes: tifffile / `parload FILE.tif` = %s.",
         wall_ratio("tif", "tifffile")),
    Note("17d2", "Ceiling of 17d2: tifffile / the fresh-memory floor of "
         "the same file (every core) = %s, the lead of a load as fast as "
         "a new dataset can be made.",
         ratio(py("tif", "tifffile"), floor_of("tif"))),
    Note("17d2", "tifffile / the fresh-memory floor with one thread, as "
         "tifffile reads = %s.", ratio(py("tif", "tifffile"),
                                        floor_of("tif", 1))),
    Note("17e", "Whole processes: tifffile(list) / `parload FOLDER` = %s.",
         wall_ratio("tifdir", "tifffile")),
    Note("17e", "The folder's parload.load() / the multi-page TIFF's "
         "(the same bytes) = %s.", ratio(py("tifdir"), py("tif"))),
    Note("17f", "Whole processes: `parload info FILE` wall / `parload "
         "FILE` wall = %s.", worst_of([
             ("TIFF", info_wall("tif"), wall_of("tif", pages=True)),
             ("HDF5", info_wall("h5chunks"),
              wall_of("h5chunks", pages=True))], max, "%.3f"), "%"),
]
