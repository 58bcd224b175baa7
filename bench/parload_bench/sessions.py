"""The experiments: their titles and the sessions they run, each the
points measured on one file in one cache state."""
from . import KIB, MIB
from .correct import CORRECTED, correct_points
from .points import (CALIBRATE, SINOGRAMS, V, WHOLE, Point, RawLayout,
                     Selection, Session, Stream, selections, sweep_stream,
                     sweep_target)


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
    13: "Raw layouts (warm cache)",
    14: "The page cache: what a load leaves cached (cold and warm)",
    15: "Containers: HDF5 and TIFF (warm cache)",
    16: "Corrected sinograms (warm cache)",
}

# The article's buffering of its loaders: POSIX unbuffered and with the
# loader's own 4 KiB buffer, stdio unbuffered and with its default buffer.
BUFFERINGS = (("posix", None), ("posix", 4096), ("stdio", 0), ("stdio", None))


def with_fresh_floors(pts):
    """pts, and the fresh-memory floor at every thread count at which a
    parload point loads the session's whole file (reported with the
    experiments of those points)."""
    exps = {}
    for p in pts:
        if p.tool == "parload" and p.stream is None and p.select is None:
            exps.setdefault(p.threads, set()).update(p.exps)
    return pts + [Point("freshfloor", sorted(e), threads=t)
                  for t, e in sorted(exps.items())]


def session(stream, cache, pts, note=None):
    """A Session of pts and their fresh-memory floors."""
    return Session(stream, cache, with_fresh_floors(pts), note)


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
    return session(st, "warm", pts)


# The note of experiment 13's session, and its band of rows (32 of the
# reference stream's 64, in the middle).
RAW_LAYOUTS = "raw layouts"
# Sinograms copied from the file mapped into memory (experiment 13).
MAPPED = ("--map-sinograms",)
BAND_32 = Selection("rows 16:48", rows=(16, 48))
BAND_32_SINOGRAMS = Selection("rows 16:48 as sinograms", rows=(16, 48),
                              layout="sinograms")


def based(p, base, field="seconds"):
    """p, compared in results.md's table with base (its field)."""
    p.base, p.base_field = base, field
    return p


def layout_session(quick, n, tools):
    """Experiment 13 on the reference stream, every point interleaved:
    the stream as `parload FILE` and through --raw describing its own
    format (both unverified, as a user runs them, for the whole-process
    ratio), the --raw load verified and (not quick) the native load
    verified; then (with numpy to write the files) the same layout
    big-endian, the payloads alone in one file, in 2,000 files and
    packed as mono12p, NumPy's loads of the last two, and a band of rows
    and sinograms of the native and the big-endian file; the native
    file's sinograms also copied from the mapped file
    (--map-sinograms)."""
    ref = REFERENCE
    own = RawLayout("own", ref)

    def par(stream=None, select=None, extra=()):
        return Point("parload", [13], "parallel", threads=n, stream=stream,
                     select=select, extra=extra)
    user = Point("parload", [13], None, threads=n, verify=False)
    user_own = based(Point("parload", [13], None, threads=n, verify=False,
                           stream=own), user, "wall")
    raw_own = par(own)
    if quick:
        return session(ref, "warm", [user, user_own, raw_own],
                       note=RAW_LAYOUTS)
    native = par()
    raw_own.base = native
    # Each of the unverified pair after a verified load of the same file
    # (on a virtual machine a load's time depends on what ran before it).
    pts = [raw_own, user, native, user_own]
    if tools.numpy:
        be, bare, frames, packed = (RawLayout(k, ref) for k in (
            "be", "bare", "frames", "mono12p"))
        u16 = based(par(bare), native)
        big, mono, many = (based(par(be), raw_own), based(par(packed), u16),
                           based(par(frames), u16))
        pts += [big, u16, mono, many,
                based(Point("npraw", [13], stream=packed), mono),
                based(Point("npraw", [13], stream=frames), many)]
        for full, stream in ((native, None), (big, be)):
            for sel in (BAND_32, Selection(SINOGRAMS, layout="sinograms")):
                pts.append(based(par(stream, sel), full))
    # The band as sinograms, against the same band in view layout.
    band = next((q for q in pts if q.select is BAND_32 and
                 q.stream is None), None)
    if band is None:
        band = based(par(None, BAND_32), native)
        pts.append(band)
    pts.append(based(par(None, BAND_32_SINOGRAMS), band))
    # The same two copied from the mapped file (15c and 15d).
    pts += [based(par(None, Selection(SINOGRAMS, layout="sinograms"),
                      MAPPED), native),
            based(par(None, BAND_32_SINOGRAMS, MAPPED), band)]
    # The floors of the whole file as sinograms, read and mapped (15c's
    # notes).
    pts += [Point("sinofloor", [13], threads=n),
            Point("sinofloor-map", [13], threads=n)]
    return session(ref, "warm", pts, note=RAW_LAYOUTS)


def selection_session(st, n, tools):
    """Experiment 9 on st: the full load and the copy floor, then each
    selection by parload, by NumPy and by parload's full load and a
    copy."""
    pts = [Point("parload", [9], "parallel", threads=n),
           Point("copyfloor", [9], threads=n)]
    for sel in selections(st):
        if tools.selections:
            pts.append(Point("parload", [9], "parallel", threads=n,
                             select=sel))
        if tools.numpy:
            pts.append(Point("npselect", [9], select=sel))
        if tools.selcopy:
            pts.append(Point("selcopy", [9], threads=n, select=sel))
    return session(st, "warm", pts)


# Experiment 14: the note of its sessions, the page-cache modes, and its
# largest file (4 GiB; not in --quick).
PAGE_CACHE = "page cache"
CACHE_MODES = ("keep", "drop", "direct", "auto")
BIG = Stream("big", 4096, 2048, 256, "u16", seed=7)


def cache_files(quick, scan):
    """Experiment 14's files: the reference stream, and (not quick) the
    1 GiB scan file and the 4 GiB one."""
    return [REFERENCE] + ([] if quick else [scan, BIG])


# The io_uring floors' requests in flight a ring; the threads that reach
# as many O_DIRECT reads in flight with one each (as pread would).
URING_DEPTH = 8


def uring_floors(quick, n, tools, cache):
    """Experiment 14's answer to whether an io_uring reader would beat the
    pool (not --quick, and where bench/uringfloor was built): the
    fresh-memory floor read with io_uring, a ring of URING_DEPTH requests
    for each core; cold, the same O_DIRECT, and O_DIRECT with as many
    requests in flight from that many threads, one request each."""
    if quick or not tools.uringfloor:
        return []
    pts = [Point("uringfloor", [14], threads=n, depth=URING_DEPTH)]
    if cache == "cold":
        pts += [Point("uringfloor-direct", [14], threads=n,
                      depth=URING_DEPTH),
                Point("uringfloor-direct", [14], threads=n * URING_DEPTH,
                      depth=1)]
    return pts


def cache_cold(st, quick, n, tools):
    """Experiment 14, cold, on st: parload's parallel load (every core) in
    each page-cache mode, and the readers it is held against: dd bs=1M,
    dd iflag=direct bs=8M, fio buffered (one job), fio --direct=1 (one
    job per core) and the io_uring floors (uring_floors).  --quick: keep,
    drop and direct, and dd (bs=1M and iflag=direct)."""
    modes = ("keep", "drop", "direct") if quick else CACHE_MODES
    pts = [Point("parload", [14], "parallel", threads=n, cache=m)
           for m in modes]
    if tools.dd:
        pts += [Point("dd", [14]), Point("dd-direct", [14])]
    if tools.fio and not quick:
        pts += [Point("fio", [14]), Point("fio-direct", [14], threads=n)]
    pts += uring_floors(quick, n, tools, "cold")
    return session(st, "cold", pts, note=PAGE_CACHE)


# Experiment 14's direct loads of a layout that agrees with its dataset
# modulo 4 KiB: the reference stream's payloads alone, no headers.
ALIGNED = "aligned"


def direct_aligned(quick, n, tools):
    """Experiment 14, cold, on the reference stream's payloads alone (the
    bare raw layout, which a direct load reads straight into place):
    --cache direct and keep against the O_DIRECT floor of as many threads
    with one read each, and of 8 threads a core, and dd iflag=direct.
    None with --quick, or without NumPy (which writes the file) or
    bench/uringfloor."""
    if quick or not tools.numpy or not tools.uringfloor:
        return None
    pts = [Point("parload", [14], "parallel", threads=n, cache=m)
           for m in ("keep", "direct")]
    pts += [Point("uringfloor-direct", [14], threads=t, depth=1)
            for t in (n, n * URING_DEPTH)]
    if tools.dd:
        pts.append(Point("dd-direct", [14]))
    return Session(RawLayout("bare", REFERENCE), "cold", pts, ALIGNED)


def cache_warm(st, quick, n, tools):
    """Experiment 14, warm, on st: auto against keep, and the io_uring
    floor (uring_floors)."""
    return session(st, "warm", [
        Point("parload", [14], "parallel", threads=n, cache=m)
        for m in ("keep", "auto")] + uring_floors(quick, n, tools, "warm"),
        note=PAGE_CACHE)


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
        sessions.append(session(ref, "warm", pts))

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
        sessions.append(session(ref, "warm", pts, note=PAGES_4K))

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
        sessions.append(session(tiny, "warm", pts))

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
            sessions.append(session(st, "warm", pts))

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
            sessions.append(session(st, "warm", pts))

    # Experiment 9: selections, on the reference stream and a larger file
    # (with --quick, a small one only).
    if want(9):
        for st in ([] if quick else [ref]) + [scan]:
            sessions.append(selection_session(st, n, tools))

    # Experiment 10: parload from Python, beside the command and NumPy, on
    # the reference stream (with --quick, the small file of experiment 9).
    if want(10) and tools.numpy and tools.pyenv:
        st = scan if quick else ref
        sessions.append(session(st, "warm", [
            Point("parload", [10], "parallel", threads=n),
            Point("pyload", [10], threads=n),
            Point("numpy", [10]),
            Point("npselect", [10], select=Selection(WHOLE)),
            Point("pyimport", [10])]))

    # Experiment 11: the out-of-core load of the 1 GiB file through two
    # windows, beside the whole load; and the compute overlap: the callback
    # takes CPU time per batch (its check of the window included), as much
    # in all as the load's I/O takes, with one core fewer for the workers
    # so that the callback's thread has a core of its own; and the I/O
    # beside a thread that spins, what the compute's core costs the I/O.
    # The overlap loads read through windows too: reused memory, so that
    # the kernel's faulting in of fresh pages (on a virtual machine, at
    # the host's pace) is not what is measured.
    if want(11) and tools.batches and not quick:
        sessions.append(session(scan, "warm", [
            Point("parload", [11], "parallel", threads=n),
            Point("batches", [11], threads=n, window=WINDOW)]))
        io = max(1, n - 1)
        sessions.append(session(ref, "warm", [
            Point("batches", [11], threads=io, window=WINDOW),
            Point("batches", [11], threads=io, window=WINDOW,
                  compute_us=CALIBRATE),
            Point("batches", [11], threads=io, window=WINDOW, busy=True),
            Point("batches", [11], compute_only=True, compute_us=CALIBRATE)],
            note=OVERLAP))

    # Experiment 12: MPI, when parload-mpi and a launcher are there.
    if want(12) and tools.mpi and not quick:
        sessions.append(mpi_session(n))

    # Experiment 13: raw layouts, beside parload's own format.
    if want(13) and tools.layouts:
        sessions.append(layout_session(quick, n, tools))

    # Experiment 15: HDF5 and TIFF, beside the raw stream of their bytes
    # and the Python readers (containers.py, which uses this module).
    if want(15):
        from .containers import container_session, missing
        why = missing(tools)
        if why:
            tools.missing.append(why)
        else:
            sessions.append(container_session(quick, n, tools))

    # Experiment 16: corrected sinograms, with the Python module.
    if want(16) and tools.numpy and tools.pyenv and tools.corrections:
        sessions.append(session(ref, "warm", correct_points(quick, n, ref),
                                note=CORRECTED))

    # Experiment 14, warm: auto against keep (before any cold session).
    cache_exp = want(14) and tools.cache_modes
    if cache_exp:
        sessions += [cache_warm(st, quick, n, tools)
                     for st in cache_files(quick, scan)]

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
        sessions.append(session(ref, "cold", pts))

    # Experiment 14, cold: every mode against dd and fio, buffered and
    # direct.
    if cache_exp:
        sessions += [cache_cold(st, quick, n, tools)
                     for st in cache_files(quick, scan)]
        aligned = direct_aligned(quick, n, tools)
        if aligned:
            sessions.append(aligned)
    if quick:
        for s in sessions:
            s.points = [p for p in s.points if quick_floor(s, p, n)]
    return sessions


def quick_floor(s, p, n):
    """Whether --quick keeps point p of session s: all but the fresh-memory
    floors, which it keeps on the files of targets 15a and 15b and of
    experiment 9 (the reference stream, the tiny views, scan), warm, in
    sessions of no note, at up to n threads where the parallel loader
    (or `parload FILE`) loads the whole file with as many."""
    if p.tool != "freshfloor":
        return True
    return s.cache == "warm" and s.note is None and p.threads <= n and \
        s.stream.name in ("reference", "tiny", "scan") and any(
        q.tool == "parload" and q.strategy in ("parallel", None) and
        q.threads == p.threads and q.stream is None and q.select is None
        for q in s.points)
