"""What is measured: the files, the points (one configuration on one file),
the sessions (the points that share a file and a cache state, their runs
interleaved) and the experiments that make them."""
from . import KIB, MIB, human_bytes

# --------------------------------------------------------------------------
# Files: generated deterministically by `parload gen`, verified by seed.


class Stream:
    def __init__(self, name, views, width, height, ptype="u16", seed=1,
                 crc=False):
        self.name, self.views, self.width, self.height = name, views, width, height
        self.ptype, self.seed = ptype, seed
        self.crc = crc  # `parload gen --crc`: every view header has a CRC
        self.bpp = {"u8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4,
                    "f32": 4, "f64": 8}[ptype]
        self.payload = width * height * self.bpp
        # What a load delivers (view headers and payloads) and the file.
        self.dataset = views * (32 + self.payload)
        self.size = 64 + self.dataset
        self.path = None

    def describe(self):
        return "%d view%s of %d x %d %s (%s payloads, %s%s)" % (
            self.views, "" if self.views == 1 else "s", self.width,
            self.height, self.ptype,
            human_bytes(self.payload), human_bytes(self.size),
            ", CRC-32C" if self.crc else "")


def sweep_target(quick):
    return 16 * MIB if quick else 64 * MIB


def sweep_stream(payload, target):
    """A stream of u16 views of `payload` bytes, about `target` bytes."""
    width = min(payload // 2, 1024)
    height = payload // 2 // width
    views = max(1, round(target / (32 + payload)))
    return Stream("sweep-%d" % payload, views, width, height, "u16",
                  seed=100 + payload.bit_length())


class Selection:
    """Part of a file, or the file reshaped: views start:stop:step, rows
    and columns start:stop (None: the whole axis), layout views or
    sinograms.  flags: the same for parload, bench/selcopy and
    bench/npselect.py (non-negative bounds, so the three read them
    alike)."""

    def __init__(self, name, views=None, rows=None, cols=None,
                 layout="views"):
        self.name, self.views, self.rows, self.cols = name, views, rows, cols
        self.layout = layout

    @property
    def flags(self):
        out = []
        if self.views:
            out += ["--views", "%s:%s:%s" % tuple(
                "" if x is None else x for x in self.views)]
        for opt, sl in (("--rows", self.rows), ("--cols", self.cols)):
            if sl:
                out += [opt, "%d:%d" % sl]
        if self.layout != "views":
            out += ["--layout", self.layout]
        return out

    def shape(self, st):
        """(views, rows, columns) that it selects of stream st."""
        start, stop, step = self.views or (None, None, None)
        views = len(range(st.views)[slice(start, stop, step)])
        rows = self.rows[1] - self.rows[0] if self.rows else st.height
        cols = self.cols[1] - self.cols[0] if self.cols else st.width
        return views, rows, cols

    def output(self, st):
        """What a load of it delivers: pixels and the views' headers."""
        v, r, c = self.shape(st)
        return v * (32 + r * c * st.bpp)

    def file_bytes(self, st):
        """The bytes of the file it covers when whole rows are read: the
        file header, the selected views' headers and their rows."""
        v, r, _ = self.shape(st)
        return 64 + v * (32 + r * st.width * st.bpp)


# The selections of experiment 9 (and the whole file, experiment 10), by
# name.
STEP4, BAND, CROP, SINOGRAMS, WHOLE = (
    "views ::4", "rows 1/8", "centre columns", "sinograms", "whole file")


def selections(st):
    """Experiment 9 on stream st: every 4th view, a band of 1/8 of the
    rows and a crop of the centre half of the columns (views layout), and
    the whole file as sinograms."""
    band = max(1, st.height // 8)
    r0 = (st.height - band) // 2
    return [Selection(STEP4, views=(None, None, 4)),
            Selection(BAND, rows=(r0, r0 + band)),
            Selection(CROP, cols=(st.width // 4, st.width - st.width // 4)),
            Selection(SINOGRAMS, layout="sinograms")]


# --------------------------------------------------------------------------
# Points: one configuration measured on one file.

# The article's names of its three loaders.
V = {"bulk": "V1", "sequential": "V2", "two-pass": "V3"}

# How a label names each extra flag of parload.
EXTRA_TEXT = {
    "--preallocate": "into touched caller memory",
    "--no-hugepages": "4 KiB pages",
    "--verify": "CRC-32C checked",
}

# Point.compute_us of experiment 11's overlap points before the run: set
# from the I/O-alone point measured first (plan.calibrate).
CALIBRATE = "calibrate"


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class Point:
    """One configuration.  tool: parload, parload-version (the process
    alone: `parload --version`), copyfloor, copyfloor-whole, dd, fio,
    numpy.  For parload, strategy None is the plain `parload FILE` (no
    --strategy, no --threads: the defaults, threads is what they come to);
    extra: more command-line flags (--preallocate, --no-hugepages); verify
    False: no --verify-seed (only for the whole-process points, whose wall
    would hold the check); stream: a file of its own instead of its
    session's."""

    def __init__(self, tool, exps, strategy=None, io=None, buffer=None,
                 threads=1, extra=(), verify=True, stream=None, select=None,
                 threads_flag=False, window=None, compute_us=None,
                 compute_only=False, ranks=None, split=None):
        self.tool = tool
        # bench/batches: read through windows of this many bytes; burn
        # compute_us of CPU time per batch (CALIBRATE: chosen by the run);
        # compute_only: the burning alone, compute_batches batches.
        self.window, self.compute_us = window, compute_us
        self.compute_only, self.compute_batches = compute_only, None
        # parload-mpi: ranks under the launcher, threads each, the split.
        self.ranks, self.split = ranks, split
        # With strategy None: pass --threads anyway (the defaults but the
        # thread count).
        self.threads_flag = threads_flag
        self.select = select      # a Selection, or None: the whole file
        self.exps = set(exps)     # experiments that report it
        self.strategy, self.io, self.buffer = strategy, io, buffer
        self.threads = threads
        self.extra = tuple(extra)
        self.verify = verify
        self.stream = stream
        self.runs = []            # dicts: seconds, wall, peak_rss_kib, ...

    @property
    def key(self):
        return (self.tool, self.strategy, self.io, self.buffer, self.threads,
                self.threads_flag, self.extra, self.verify,
                self.stream.name if self.stream else None,
                self.select.name if self.select else None,
                self.window, self.compute_only, self.compute_us is not None,
                self.ranks, self.split)

    def file(self, session):
        return self.stream or session.stream

    def buffer_text(self):
        if self.tool != "parload" or self.strategy not in V:
            return ""
        if self.buffer == 0 or (self.buffer is None and self.io == "posix"):
            return "none"
        if self.buffer is None:
            return "stdio default"
        return human_bytes(self.buffer) + (" (own)" if self.io == "posix"
                                           else " (setvbuf)")

    def label(self):
        text = self.base_label()
        for flag in self.extra:
            text += ", " + EXTRA_TEXT.get(flag, flag)
        if self.select:
            text += ": " + self.select.name
        if self.stream:
            text += ", file %s" % self.stream.name
        if self.tool == "parload" and not self.verify:
            text += " (not verified)"
        return text

    def base_label(self):
        fixed = {"parload-version": "parload --version", "dd": "dd bs=1M",
                 "fio": "fio read bs=1M", "numpy": "numpy fromfile+copy",
                 "npselect": "numpy memmap+slice+copy",
                 "pyimport": "import parload (after numpy)"}
        if self.tool in fixed:
            return fixed[self.tool]
        threads = plural(self.threads, "thread")
        if self.tool == "parload" and self.strategy is None:
            if self.threads_flag:
                return "parload --threads %d FILE" % self.threads
            return "parload FILE (defaults: %s)" % threads
        if self.tool == "copyfloor":
            return "copy floor, " + threads
        if self.tool == "pyload":
            return "parload.load() in Python, " + threads
        if self.tool == "selcopy":
            return "parallel full load + copy, " + threads
        if self.tool == "batches":
            return self.batches_label(threads)
        if self.tool == "parload-mpi":
            return "mpirun -n %d parload-mpi --split %s, %s each" % (
                self.ranks, self.split, threads)
        if self.tool == "copyfloor-whole":
            return "copy floor into a touched file-sized buffer, " + threads
        if self.strategy == "parallel":
            return "parallel, " + threads
        if self.strategy not in V:
            return self.strategy
        text = "%s %s %s" % (V[self.strategy], self.strategy, self.io)
        if self.buffer == 0 and self.io == "stdio":
            text += " unbuffered"
        elif self.buffer not in (None, 0):
            text += " +%s buffer" % human_bytes(self.buffer).replace(" ", "")
        return text

    def tool_flags(self):
        """bench/batches' and parload-mpi's settings, for the CSV files."""
        out = []
        if self.window:
            out += ["--window", str(self.window)]
        if self.compute_only:
            out += ["--compute-only", str(self.compute_batches)]
        if self.compute_us is not None:
            out += ["--compute-us", str(self.compute_us)]
        if self.ranks:
            out += ["-n", str(self.ranks), "--split", self.split]
        return out

    def compute_text(self):
        if self.compute_us == CALIBRATE:
            return "I/O time / batches"
        return "%d us" % self.compute_us

    def batches_label(self, threads):
        if self.compute_only:
            return "compute alone (%s x %s)" % (
                self.compute_batches or "batches", self.compute_text())
        text = "batches (on_batch), " + threads
        if self.window:
            text += ", window %s" % human_bytes(self.window)
        if self.compute_us is not None:
            text += ", compute %s per batch" % self.compute_text()
        return text

    def is_plain(self):
        """parload with no extra flags, verified, on its session's file."""
        return (self.tool == "parload" and not self.extra and self.verify
                and self.stream is None and self.select is None)

    def is_v2_posix(self):
        return (self.is_plain() and self.strategy == "sequential" and
                self.io == "posix" and self.buffer in (None, 0))

    def is_parallel(self, threads):
        return (self.is_plain() and self.strategy == "parallel" and
                self.threads == threads)

    def is_article(self):
        return self.is_plain() and self.strategy in V

    def is_flags(self, strategy, extra, threads=None):
        """parload with exactly these extra flags, verified, on its
        session's file."""
        return (self.tool == "parload" and self.strategy == strategy and
                self.extra == tuple(extra) and self.verify and
                self.stream is None and
                (threads is None or self.threads == threads))

    def is_default_process(self):
        """The whole-process point: plain `parload FILE`, unverified."""
        return (self.tool == "parload" and self.strategy is None and
                not self.verify and not self.extra and self.stream is None
                and not self.threads_flag)

    def is_unverified(self, strategy, io, buffer=None, extra=()):
        """A whole-process point of experiment 8: an article loader as a
        user runs it, unverified, on its session's file."""
        return (self.tool == "parload" and not self.verify and
                self.strategy == strategy and self.io == io and
                self.buffer == buffer and self.extra == tuple(extra) and
                self.stream is None)


class Session:
    """Points measured on one file in one cache state, runs interleaved;
    note: what sets it apart from another session on the same file."""

    def __init__(self, stream, cache, points, note=None):
        self.stream, self.cache, self.note = stream, cache, note
        self.points = []
        for p in points:
            same = [q for q in self.points if q.key == p.key]
            if same:
                same[0].exps |= p.exps
            else:
                self.points.append(p)

    def find(self, pred):
        for p in self.points:
            if pred(p) and p.runs:
                return p
        return None

    def streams(self):
        """The session's file, then those of its points that have their
        own, each once."""
        out = [self.stream]
        for p in self.points:
            if p.stream and p.stream not in out:
                out.append(p.stream)
        return out


# --------------------------------------------------------------------------
# The experiments.

EXPERIMENTS = {
    1: "Strategies on the reference stream (warm cache)",
    2: "Buffering on tiny views (warm cache)",
    3: "View-size sweep (warm cache, file size held about constant)",
    4: "Thread scaling (warm cache)",
    5: "Cold cache (file evicted before each run)",
    6: "Floors and peers",
    7: "Few, huge views (warm cache)",
    8: "The whole process (warm cache)",
    9: "Partial and reshaped loads (warm cache)",
    10: "Python (warm cache)",
    11: "Views delivered while the load runs (warm cache)",
    12: "MPI on one node (warm cache)",
}

# The article's buffering of its loaders: POSIX unbuffered and with the
# loader's own 4 KiB buffer, stdio unbuffered and with its default buffer.
BUFFERINGS = (("posix", None), ("posix", 4096), ("stdio", 0), ("stdio", None))


def buffering(exp, strategy):
    return [Point("parload", [exp], strategy, io, buf)
            for io, buf in BUFFERINGS]


# The note of the session of 4 KiB-page points, and of experiment 11's
# compute overlap.
PAGES_4K = "4 KiB-page session"
OVERLAP = "compute overlap"

REFERENCE = Stream("reference", 2000, 896, 64, "u16", seed=1)


def scan_stream(quick):
    """Experiment 9's larger file: 1 GiB of 1,024 views of 2048 x 256 u16
    (16 MiB of 256 views of 512 x 64 with --quick)."""
    if quick:
        return Stream("scan", 256, 512, 64, "u16", seed=6)
    return Stream("scan", 1024, 2048, 256, "u16", seed=6)


# Experiment 11: the window of the out-of-core load; experiment 12: the
# ranks.
WINDOW = 16 * MIB
MPI_RANKS = 2


def slabs(n, parts):
    """[(begin, end)] of n rows split in `parts` balanced ranges, the
    first n % parts one longer: parload-mpi's row split."""
    q, r = divmod(n, parts)
    out, b = [], 0
    for i in range(parts):
        e = b + q + (1 if i < r else 0)
        out.append((b, e))
        b = e
    return out


def mpi_session(n):
    """Experiment 12 on the reference stream written with CRCs (so that
    every views-split load checks every payload it delivers): the single
    process, MPI_RANKS ranks sharing the cores, one rank with all of
    them, a row-slab split, and each rank's rows in view layout loaded by
    one process with that rank's threads (checked against the
    generator)."""
    st = Stream("reference-crc", 2000, 896, 64, "u16", seed=1, crc=True)
    per_rank = max(1, n // MPI_RANKS)
    pts = [Point("parload", [12], "parallel", threads=n, extra=("--verify",)),
           Point("parload-mpi", [12], threads=per_rank, ranks=MPI_RANKS,
                 split="views", extra=("--verify",)),
           Point("parload-mpi", [12], threads=n, ranks=1, split="views",
                 extra=("--verify",)),
           Point("parload-mpi", [12], threads=per_rank, ranks=MPI_RANKS,
                 split="rows")]
    # Each rank's rows in one process, in view layout (the target's
    # yardstick) and as sinograms (what the layout costs without MPI).
    for r, (a, b) in enumerate(slabs(st.height, MPI_RANKS)):
        for layout in ("views", "sinograms"):
            name = "rank %d's rows %d:%d" % (r, a, b)
            if layout != "views":
                name += " as sinograms"
            pts.append(Point("parload", [12], "parallel", threads=per_rank,
                             select=Selection(name, rows=(a, b),
                                              layout=layout)))
    return Session(st, "warm", pts)


def selection_session(st, n, tools):
    """Experiment 9 on st: the full load, then each selection by parload,
    by NumPy and by parload's full load and a copy."""
    pts = [Point("parload", [9], "parallel", threads=n)]
    for sel in selections(st):
        if tools.selections:
            pts.append(Point("parload", [9], "parallel", threads=n,
                             select=sel))
        if tools.numpy:
            pts.append(Point("npselect", [9], select=sel))
        if tools.selcopy:
            pts.append(Point("selcopy", [9], threads=n, select=sel))
    return Session(st, "warm", pts)


def experiments(quick, n, tools, only):
    """Sessions, in the order they run (cold last: warm data stays warm).
    n: the cores; tools.strategies: the command's strategies, in its
    order.  Experiments 1, 2 and 5 run every strategy the command has (the
    article's loaders with each I/O API); --quick keeps V2 and the
    parallel loader."""
    ref = REFERENCE
    scan = scan_stream(quick)
    tiny = Stream("tiny", 200000, 128, 1, "u16", seed=2)
    empty = Stream("empty", 0, 896, 64, "u16", seed=3)
    huge = [Stream("huge-1", 1, 8192, 16384, "u16", seed=4),   # 256 MiB
            Stream("huge-3", 3, 10240, 5120, "u16", seed=5)]   # 3 x 100 MiB
    apis = ("posix", "stdio")
    strategies = tools.strategies
    # The article's loaders that the experiments run, and the command's
    # other single-threaded strategies (mmap, ...): V2 alone when quick.
    article = [s for s in strategies if s in V and
               (not quick or s == "sequential")]
    others = [] if quick else [s for s in strategies
                               if s not in V and s != "parallel"]
    has = set(strategies).__contains__
    sessions = []

    def want(e):
        return not only or e in only

    def at_defaults(exp, strategies=others):
        """The strategies at their defaults, then the parallel loader and
        the copy floor with every core."""
        return [Point("parload", [exp], s) for s in strategies] + [
            Point("parload", [exp], "parallel", threads=n),
            Point("copyfloor", [exp], threads=n)]

    # Experiments 1, 4 and 6 (warm) share the reference stream.
    pts = []
    if want(1):
        for s in article:
            for io in apis:
                pts.append(Point("parload", [1], s, io))
        for s in others:
            pts.append(Point("parload", [1], s))
        pts.append(Point("parload", [1], "parallel", threads=1))
        pts.append(Point("parload", [1], "parallel", threads=n))
        # Target 2: into memory the caller owns and has touched, and the
        # copy floor with a destination as large as the file.
        pts.append(Point("parload", [1], "parallel", threads=n,
                         extra=("--preallocate",)))
        pts.append(Point("copyfloor-whole", [1], threads=n))
    if want(4):
        # Quick: 1, and the cores to twice as many (more threads than
        # cores must not slow a load).
        ts = [1] + list(range(n, 2 * n + 1)) if quick else \
            list(range(1, 2 * n + 1))
        for t in ts:
            pts.append(Point("parload", [4], "parallel", threads=t))
            pts.append(Point("copyfloor", [4, 6], threads=t))
    if want(1) or want(4) or want(6):
        pts.append(Point("copyfloor", [1, 6], threads=n))
        if has("sequential"):
            pts.append(Point("parload", [1, 6], "sequential", "posix"))
    if want(6):
        pts.append(Point("copyfloor", [6], threads=1))
        pts.append(Point("parload", [6], "parallel", threads=n))
        if tools.dd:
            pts.append(Point("dd", [6]))
        if tools.fio:
            pts.append(Point("fio", [6]))
        if tools.numpy and not quick:
            pts.append(Point("numpy", [6]))
    if want(8):
        # The whole process: `parload FILE` as a user runs it (no
        # --verify-seed: its check would be inside the wall measured; the
        # same load, verified, is the parallel point beside it), and the
        # fixed costs: a process that loads nothing, and a 0-view load
        # (process, topology discovery, thread pool, exit).
        pts.append(Point("parload", [8], None, threads=n, verify=False))
        pts.append(Point("parload", [8], "parallel", threads=n))
        pts.append(Point("parload-version", [8]))
        pts.append(Point("parload", [8], None, threads=n, stream=empty))
        # Start-up: the 0-view load with one thread (no pool to speak of),
        # and V2 as a user runs it, for the whole-process ratios.
        pts.append(Point("parload", [8], None, threads=1, threads_flag=True,
                         stream=empty))
        if has("sequential"):
            pts.append(Point("parload", [8], "sequential", "posix",
                             verify=False))
    if want(11) and tools.batches:
        # Time to the first batch, beside the whole load (with --quick,
        # this one point alone).
        pts.append(Point("batches", [11], threads=n))
        if not quick:
            pts.append(Point("parload", [11], "parallel", threads=n))
    if pts:
        sessions.append(Session(ref, "warm", pts))

    # The 4 KiB-page points of experiment 1 (V2 as the article allocates,
    # and caller memory in 4 KiB pages) take most of a second each.  On a
    # virtual machine that hands free memory back to its host, a load that
    # long leaves the next process's fresh memory to be faulted in again by
    # the host (perf: the kernel's page zeroing then runs at 0.5 GB/s), so
    # interleaved with the others they would slow whichever point follows.
    # They run in a session of their own, after the others.
    # Experiment 8 compares the whole process with V2 as the article
    # allocates here, `parload FILE` beside it.
    pts = []
    if want(1):
        if has("sequential"):
            pts.append(Point("parload", [1], "sequential", "posix",
                             extra=("--no-hugepages",)))
        if not quick:
            pts.append(Point("parload", [1], "parallel", threads=n,
                             extra=("--preallocate", "--no-hugepages")))
        pts.append(Point("copyfloor", [1], threads=n))
    if want(8) and has("sequential"):
        pts.append(Point("parload", [8], "sequential", "posix",
                         extra=("--no-hugepages",), verify=False))
        pts.append(Point("parload", [8], None, threads=n, verify=False))
    if pts:
        sessions.append(Session(ref, "warm", pts, note=PAGES_4K))

    # Experiment 2: buffering on tiny views; experiment 8: the whole
    # process there, against V2 as a user runs it.
    pts = []
    if want(2):
        for s in article:
            pts += buffering(2, s)
        pts += at_defaults(2)
    if want(8):
        pts.append(Point("parload", [8], None, threads=n, verify=False))
        if has("sequential"):
            pts.append(Point("parload", [8], "sequential", "posix",
                             verify=False))
            pts.append(Point("parload", [8], "sequential", "stdio",
                             verify=False))
    if pts:
        sessions.append(Session(tiny, "warm", pts))

    # Experiment 3: the view-size sweep, file size held about constant.
    if want(3):
        target = sweep_target(quick)
        if quick:
            sizes = [256, 16 * KIB, MIB]
        else:
            sizes = [1 << k for k in range(8, 21)]
        buffered = [s for s in (("sequential",) if quick else
                                ("sequential", "two-pass")) if has(s)]
        for size in sizes:
            st = sweep_stream(size, target)
            pts = []
            for s in buffered:
                pts += buffering(3, s)
            if not quick:
                if has("bulk"):
                    pts.append(Point("parload", [3], "bulk", "posix", None))
                    pts.append(Point("parload", [3], "bulk", "stdio", None))
            pts += at_defaults(3, others if not quick else ())
            sessions.append(Session(st, "warm", pts))

    # Experiment 7: few, huge views; fewer views than workers.
    if want(7):
        for st in (huge[1:] if quick else huge):
            pts = [Point("parload", [7], "parallel", threads=1),
                   Point("parload", [7], "parallel", threads=n)]
            if not quick:
                pts.append(Point("copyfloor", [7], threads=1))
                pts.append(Point("copyfloor", [7], threads=n))
            if has("sequential"):
                pts.append(Point("parload", [7], "sequential", "posix"))
            sessions.append(Session(st, "warm", pts))

    # Experiment 9: selections, on the reference stream and a larger file
    # (with --quick, a small one only).
    if want(9):
        for st in ([] if quick else [ref]) + [scan]:
            sessions.append(selection_session(st, n, tools))

    # Experiment 10: parload from Python, beside the command and NumPy, on
    # the reference stream (with --quick, the small file of experiment 9).
    if want(10) and tools.numpy and tools.pyenv:
        st = scan if quick else ref
        sessions.append(Session(st, "warm", [
            Point("parload", [10], "parallel", threads=n),
            Point("pyload", [10], threads=n),
            Point("numpy", [10]),
            Point("npselect", [10], select=Selection(WHOLE)),
            Point("pyimport", [10])]))

    # Experiment 11: the out-of-core load of the 1 GiB file through two
    # windows, beside the whole load; and the compute overlap: the callback
    # burns CPU time per batch, as much in all as the load's I/O takes,
    # with one core fewer for the workers so that the callback's thread
    # has a core of its own.  The overlap loads read through windows too:
    # reused memory, so that the kernel's faulting in of fresh pages (on a
    # virtual machine, at the host's pace) is not what is measured.
    if want(11) and tools.batches and not quick:
        sessions.append(Session(scan, "warm", [
            Point("parload", [11], "parallel", threads=n),
            Point("batches", [11], threads=n, window=WINDOW)]))
        io = max(1, n - 1)
        sessions.append(Session(ref, "warm", [
            Point("batches", [11], threads=io, window=WINDOW),
            Point("batches", [11], threads=io, window=WINDOW,
                  compute_us=CALIBRATE),
            Point("batches", [11], compute_only=True, compute_us=CALIBRATE)],
            note=OVERLAP))

    # Experiment 12: MPI, when parload-mpi and a launcher are there.
    if want(12) and tools.mpi and not quick:
        sessions.append(mpi_session(n))

    # Experiment 5: cold cache, experiments 1 and 4 again, with floors.
    if want(5):
        pts = []
        for s in article:
            for io in (("posix",) if quick else apis):
                pts.append(Point("parload", [5], s, io))
        for s in others:
            pts.append(Point("parload", [5], s))
        ts = [1, n] if quick else list(range(1, 2 * n + 1))
        for t in ts:
            pts.append(Point("parload", [5, 6] if t == n else [5], "parallel",
                             threads=t))
        pts.append(Point("copyfloor", [5, 6], threads=n))
        if tools.dd:
            pts.append(Point("dd", [5, 6]))
        if tools.fio:
            pts.append(Point("fio", [5, 6]))
        sessions.append(Session(ref, "cold", pts))
    return sessions
