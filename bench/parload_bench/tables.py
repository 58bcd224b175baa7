"""The markdown tables of results.md, one per experiment that has its own,
and the texts that explain their columns."""
import statistics

from . import MIB, human_bytes
from .sessions import RAW_LAYOUTS
from .medians import (efficiency, find_median, find_point, huge_names, median,
                      on_floor, overlap, overlap_busy, point_stats, scaling,
                      speedup, summary)


def ms(x):
    return "%.2f" % (x * 1e3) if x < 10 else "%.0f" % (x * 1e3)


def fmt_ratio(x):
    return "" if x is None else "%.2fx" % x


def pct(x):
    return "%.0f%%" % (x * 100)


def mib(kib):
    return "%.1f" % (kib / 1024)


def row(cells):
    return "| " + " | ".join(cells) + " |"


def head(cells):
    return [row(cells), "|" + "|".join("---" for _ in cells) + "|"]


def table_rows(sessions, exp, n, timed=True):
    """(session, point, stats) of every measured point of exp; timed: only
    those that report a time (all but parload --version)."""
    rows = []
    for s in sessions:
        for p in s.points:
            if exp in p.exps and p.runs:
                t = point_stats(s, p, n)
                if t["median"] is not None or not timed:
                    rows.append((s, p, t))
    return rows


def markdown_table(rows, with_file):
    cols = ["point", "buffer", "median ms", "middle 50% ms", "GB/s",
            "read calls", "vs V2 POSIX", "vs copy floor", "vs fresh floor"]
    out = head((["file"] if with_file else []) + cols)
    for s, p, t in rows:
        cells = [p.label(), p.buffer_text(), ms(t["median"]),
                 "%s - %s" % (ms(t["q1"]), ms(t["q3"])), "%.2f" % t["gbps"],
                 "" if t["read_calls"] is None else "%d" % t["read_calls"],
                 fmt_ratio(t["vs_v2"]), fmt_ratio(t["vs_floor"]),
                 fmt_ratio(t["vs_fresh"])]
        if with_file:
            cells.insert(0, "%s (%s)" % (s.stream.name, s.cache))
        out.append(row(cells))
    return out


def sweep_table(series):
    """Experiment 3: the article's crossover and parload against the best
    article strategy at every size."""
    out = head(["view payload", "views", "unbuf/buf V2 posix", "V2 stdio",
                "V3 posix", "V3 stdio", "best article strategy", "its ms",
                "parallel ms", "parallel speed-up", "parallel vs copy floor",
                "parallel vs fresh floor", "ceiling"])
    for payload, views, ratios, best, best_ms, par, floor, _, fresh in \
            series:
        out.append(row(
            [human_bytes(payload), "%d" % views] +
            [("%.2f" % r if r else "") for r in ratios] +
            ["%s (buffer: %s)" % (best.label(), best.buffer_text() or "-")
             if best else "",
             ms(best_ms) if best_ms else "", ms(par) if par else "",
             fmt_ratio(best_ms / par if best_ms and par else None),
             fmt_ratio(par / floor if par and floor else None),
             fmt_ratio(par / fresh if par and fresh else None),
             fmt_ratio(best_ms / floor if best_ms and floor else None)]))
    return out


def scaling_table(sessions, n):
    sc = scaling(sessions)
    if not sc:
        return []
    p1, f1, _ = sc.get(1, (None, None, None))
    out = ["Parallel efficiency at t threads: T(1 thread) / (t x T(t)); "
           "100%% is perfect scaling.  This machine has %d core%s: beyond "
           "that, threads share cores and the efficiency must fall.  *vs "
           "fresh floor*: parallel over the fresh-memory floor with the "
           "same threads." % (n, "s" if n > 1 else ""), ""]
    out += head(["threads", "parallel ms", "parallel efficiency",
                 "copy floor ms", "copy floor efficiency", "fresh floor ms",
                 "vs fresh floor"])
    for t in sorted(sc):
        pt, ft, fr = sc[t]
        pe, fe = efficiency(p1, t, pt), efficiency(f1, t, ft)
        out.append(row(["%d" % t, ms(pt) if pt else "", pct(pe) if pe else "",
                        ms(ft) if ft else "", pct(fe) if fe else "",
                        ms(fr) if fr else "",
                        fmt_ratio(pt / fr if pt and fr else None)]))
    return out + [""]


def huge_table(sessions, n):
    names = huge_names(sessions)
    if not names:
        return []
    ref = speedup(sessions, "reference", n)
    out = ["Parallel speed-up: T(parallel, 1 thread) / T(parallel, %d "
           "threads); the copy floor's likewise.  The reference stream's "
           "(2,000 views; experiments 1 and 4) is the yardstick: a huge "
           "view must be split between the workers as many small views "
           "are." % n, ""]
    out += head(["file", "views", "parallel, 1 thread ms",
                 "parallel, %d threads ms" % n, "parallel speed-up",
                 "copy floor speed-up", "speed-up / reference's"])
    rows = [("reference", ref)] + [(name, speedup(sessions, name, n))
                                   for name in names]
    for name, (t1, tn, su) in rows:
        s = find_point(sessions, name, "warm", lambda p: True)[0]
        f1 = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == 1)
        fn = find_median(sessions, name, "warm",
                         lambda p: p.tool == "copyfloor" and p.threads == n)
        rel = su / ref[2] if su and ref[2] and name != "reference" else None
        out.append(row([name, "%d" % s.stream.views if s else "",
                        ms(t1) if t1 else "", ms(tn) if tn else "",
                        fmt_ratio(su),
                        fmt_ratio(f1 / fn if f1 and fn else None),
                        fmt_ratio(rel)]))
    return out + [""]


SELECTION_TEXT = (
    "Each selection side by side with the full load of the same file, "
    "runs interleaved: *parallel: SELECTION* is parload's own selection "
    "(`--views`, `--rows`, `--cols`, `--layout`, checked by --verify-seed); "
    "*numpy memmap+slice+copy* is bench/npselect.py (np.memmap with a "
    "structured record dtype, slicing, np.ascontiguousarray; for sinograms "
    "of the transpose), timed after numpy is imported; *parallel full load "
    "+ copy* is bench/selcopy (parload's full load, then a copy of the "
    "selection into an array of its own).  Every one checked against the "
    "generator.  *vs full*: time over the full load; *numpy / this*: how "
    "many times faster than numpy's; *read / needed*: bytes read over the "
    "file header, the selected views' headers and their selected rows "
    "(whole rows); *RSS - output*: peak RSS over the headers and pixels "
    "delivered.")


def selection_table(sessions, n):
    """Experiment 9: every selection point against the full load and
    numpy's, with bytes read and peak RSS over the output."""
    out = [SELECTION_TEXT, ""]
    out += head(["file", "point", "median ms", "middle 50% ms", "vs full",
                 "numpy / this", "MB read", "read / needed", "peak RSS MiB",
                 "output MiB", "RSS - output MiB"])
    for s in sessions:
        if not any(9 in p.exps and p.runs for p in s.points):
            continue
        st = s.stream
        full = median(s.find(lambda p: 9 in p.exps and p.is_parallel(n)))
        for p in s.points:
            if 9 not in p.exps or not p.runs:
                continue
            t = point_stats(s, p, n)
            med, rss = t["median"], t["peak_rss_kib"]
            npy = median(s.find(lambda q: q.tool == "npselect" and
                                q.select is p.select)) if p.select else None
            got = median(p, "bytes_read")
            outb = p.select.output(st) if p.select else st.dataset
            need = p.select.file_bytes(st) if p.select else st.size
            out.append(row([
                st.name, p.label(), ms(med),
                "%s - %s" % (ms(t["q1"]), ms(t["q3"])),
                fmt_ratio(med / full if full else None),
                fmt_ratio(npy / med if npy and p.tool != "npselect"
                          else None),
                "%.1f" % (got / 1e6) if got else "",
                "%.3f" % (got / need) if got else "",
                (mib(rss) + ("*" if on_floor(t) else "")) if rss else "",
                "%.1f" % (outb / MIB),
                "%+.1f" % (rss / 1024 - outb / MIB) if rss else ""]))
    return out + ["", "\\*: at the harness's own resident size (see "
                  "experiment 8): the process used at most this much.", ""]


PROCESS_TEXT = (
    "*process wall*: measured by this harness from just before it spawns "
    "the process until it has reaped it (perf_counter around Popen and "
    "wait4), so it includes the fork and exec of a child of a Python "
    "process, the dynamic linking, and everything the program does before "
    "and after the load.  *reported load*: the `seconds` the process "
    "reports (open until complete).  *peak RSS*: the child's ru_maxrss "
    "from wait4.  Medians over the runs; *wall - load* is the difference "
    "of the medians.  `parload FILE` runs as a user runs it, without "
    "--verify-seed, whose check would be inside the wall measured; it is "
    "still checked for every view and byte, and the same load verified "
    "against the generator is the next row, interleaved with it (its wall "
    "includes that check).  `parload --version` is the process alone; the "
    "0-view file adds topology discovery, the thread pool, opening and "
    "reading a header, and exit (with the default thread count, and with "
    "`--threads 1`: start-up).  V2 (`--strategy sequential`) runs here "
    "as a user runs it too, unverified, for the whole-process ratios; its "
    "verified twins are in experiments 1 and 2.  The rows marked [4 KiB-"
    "page session] ran in the session of the 4 KiB-page points (V2 as the "
    "article allocates, `--no-hugepages`), with `parload FILE` beside "
    "them.")


PYTHON_TEXT = (
    "*parload.load() in Python*: bench/pyload.py, the call in a fresh "
    "interpreter after numpy and parload are imported, timed around the "
    "call, then checked against the generator.  *numpy fromfile+copy*: "
    "bench/npload.py; *numpy memmap+slice+copy: whole file*: "
    "bench/npselect.py with no selection.  *import parload*: the time of "
    "`import parload` after `import numpy`, in a fresh interpreter.  *vs "
    "C*: time over the command's load of the same file (first row).")


def python_table(sessions, n):
    """Experiment 10: the Python module against the command and NumPy."""
    out = [PYTHON_TEXT, ""] + head(["file", "point", "median ms",
                                    "middle 50% ms", "vs C"])
    for s in sessions:
        c = median(s.find(lambda p: 10 in p.exps and p.is_parallel(n)))
        for p in s.points:
            if 10 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            out.append(row([s.stream.name, p.label(), ms(med),
                            "%s - %s" % (ms(q1), ms(q3)),
                            fmt_ratio(med / c) if c and
                            p.tool != "pyimport" else ""]))
    return out + [""]


STREAM_TEXT = (
    "*batches (on_batch)*: bench/batches, a load delivered in batches "
    "(`parload_request.on_batch`, `parload_loader_run`, the library's "
    "default batches: about 4 MiB of pixels at first, each next twice the "
    "last up to 32 MiB; through a window, 4 MiB at most), timed from just "
    "before the call until it returns (*median ms*) and until the first "
    "batch reaches the callback (*first batch ms*); the loader is made "
    "before the clock, as the command's "
    "is.  Every view is checked against the generator and the batches "
    "must deliver each view once, in order: after the clock without a "
    "window; with one, whose windows are reused, the callback checks each "
    "batch's headers and sums its pixels (on the clock: *verify ms*), and "
    "the sum must equal the generator's content's after the clock.  "
    "*parallel*: `parload --verify-seed`, the whole load.  *compute*: the "
    "callback burns that much of its thread's CPU "
    "time per batch, chosen by the run as the I/O alone's time over its "
    "batches; *compute alone*: the burning without a load.  *peak RSS*: "
    "the process's ru_maxrss.")


def stream_table(sessions, n):
    """Experiment 11: time to the first batch, the windowed load and the
    compute overlap, each beside the whole load."""
    out = [STREAM_TEXT, ""] + head([
        "file", "point", "median ms", "middle 50% ms", "first batch ms",
        "batches", "compute ms", "verify ms", "peak RSS MiB"])
    for s in sessions:
        for p in s.points:
            if 11 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            t = point_stats(s, p, n)

            def cell(field, fmt="%.2f", scale=1e3):
                x = median(p, field)
                return fmt % (x * scale) if x else ""
            rss = t["peak_rss_kib"]
            out.append(row([
                s.stream.name + (" (%s)" % s.note if s.note else ""),
                p.label(), ms(med), "%s - %s" % (ms(q1), ms(q3)),
                cell("first_batch_seconds"), cell("batches", "%.0f", 1),
                cell("compute_seconds"), cell("verify_seconds"),
                (mib(rss) + ("*" if on_floor(t) else "")) if rss else ""]))
    out.append("")
    ov, busy = overlap(sessions), overlap_busy(sessions)
    if ov:
        io, comp, both = ov
        out += ["Compute overlap (file %s, median ms): I/O alone %s, "
                "compute alone %s, their sum %s and max %s; I/O and "
                "compute together %s: %.2f x the max, %.2f x the sum.%s" % (
                    "reference", ms(io), ms(comp), ms(io + comp),
                    ms(max(io, comp)), ms(both), both / max(io, comp),
                    both / (io + comp),
                    "  The I/O alone beside a thread that spins: %s "
                    "(%.2f x the I/O alone)." % (ms(busy), busy / io)
                    if busy else ""), ""]
    return out


MPI_TEXT = (
    "`mpirun -n R parload-mpi --json` (Open MPI with `--oversubscribe "
    "--bind-to none`: parload-mpi divides the cores between the ranks "
    "itself), on the reference stream written with CRC-32Cs.  *median "
    "ms*: the slowest rank's load, from opening the file until its part "
    "is complete (the clock of parload's own `seconds`); *whole call ms*: "
    "the slowest rank's parload_mpi_load (communicator, header broadcast, "
    "loader, load).  The views splits and the single process check every "
    "payload against its CRC (`--verify`); the single process and the "
    "rows in view layout are also checked against the generator.  A row "
    "slab holds part of each view, which no CRC covers: the rows split is "
    "checked for its shape only (every rank's slab, all views, the slabs "
    "covering the rows once).  *per rank ms*: each rank's load.")


def mpi_table(sessions, n):
    """Experiment 12: the ranks against the single process."""
    cols = ["point", "median ms", "middle 50% ms", "whole call ms",
            "vs single process", "per rank ms"]
    out = [MPI_TEXT, ""] + head(cols)
    for s in sessions:
        single = median(s.find(lambda p: 12 in p.exps and
                               p.is_flags("parallel", ("--verify",), n)))
        for p in s.points:
            if 12 not in p.exps or not p.runs:
                continue
            med, q1, q3 = summary(p.runs)
            ranks = ""
            if p.tool == "parload-mpi":
                ranks = ", ".join(ms(statistics.median(
                    r["rank_seconds"][i] for r in p.runs))
                    for i in range(p.ranks))
            call = median(p, "call_seconds")
            out.append(row([p.label(), ms(med), "%s - %s" % (ms(q1), ms(q3)),
                            ms(call) if call else "",
                            fmt_ratio(med / single) if single and
                            p.split != "rows" and not p.select else "",
                            ranks]))
    return out + [""]


def process_rank(row):
    """The order of experiment 8's rows: --version, the files of their
    own (the 0-view file), the user's run, the verified twin."""
    p = row[1]
    if p.tool == "parload-version":
        return 0
    if p.stream is not None:
        return 1
    return 2 if not p.verify else 3


def process_table(sessions, n):
    """Experiment 8: the whole process against the load it reports, and
    the fixed costs, on the warm reference session."""
    rows = table_rows(sessions, 8, n, timed=False)
    if not rows:
        return []
    out = [PROCESS_TEXT, ""]
    out += head(["point", "file", "process wall ms", "reported load ms",
                 "wall - load ms", "wall / load", "peak RSS MiB",
                 "dataset bytes", "RSS - dataset MiB"])
    floors = []
    order = {id(s): i for i, s in enumerate(sessions)}
    for s, p, t in sorted(rows, key=lambda r: (order[id(r[0])],
                                                process_rank(r))):
        st = p.file(s)
        wall, load, rss = t["wall"], t["median"], t["peak_rss_kib"]
        floored = on_floor(t)
        if floored:
            floors.append(t["harness_rss_kib"])
        dataset = None if p.tool == "parload-version" else st.dataset
        label = p.label()
        if p.stream:
            label = label.replace(", file %s" % p.stream.name, "")
        elif p.tool == "parload" and p.verify:
            label += ", --verify-seed (the wall holds the check)"
        if s.note:
            label += " [%s]" % s.note
        out.append(row([
            label, "" if dataset is None else st.name, ms(wall),
            ms(load) if load is not None else "",
            ms(wall - load) if load is not None else "",
            "%.2f" % (wall / load) if load and st.views else "",
            (mib(rss) + ("*" if floored else "")) if rss else "",
            "" if dataset is None else "%d" % dataset,
            "" if dataset is None or rss is None or floored
            else "%+.1f" % (rss / 1024 - dataset / MIB)]))
    out.append("")
    if floors:
        out += ["\\*: at the harness's own resident size when it spawned the "
                "process (about %s MiB): Linux gives a child that stays below "
                "the peak of the process that spawned it that peak (exec "
                "carries it over), so the process used at most this much.  "
                "The harness resets its own peak before each spawn." %
                mib(max(floors)), ""]
    return out


LAYOUTS_TEXT = (
    "Every point on the same files in one session, runs interleaved.  "
    "*parallel*: `parload --threads n --strategy parallel --verify-seed "
    "S`, with `--raw SPEC` (and `--concat` and the 2,000 files) for a "
    "file in another layout; the big-endian file's payloads are the "
    "generator's byte-swapped and the headerless ones its payloads, so "
    "that --verify-seed checks them in the process.  mono12p keeps 12 of "
    "the generator's 16 bits, which --verify-seed cannot check: its load "
    "is checked once before its runs, untimed, by `parload extract` with "
    "the same options to a .npy file that bench/rawfiles.py compares with "
    "the generator's pixels & 0xFFF.  *parload FILE (not verified)*: as "
    "a user runs it, the defaults, for the whole-process ratio (compared "
    "by the process walls), each after a verified load of the same file; "
    "its verified twin is a row of its own.  "
    "*numpy*: bench/nprawload.py, timed after numpy is imported, then "
    "checked against the generator.  *input MB*: the bytes of the file "
    "(files) the layout describes; *ratio*: this point's time (wall for "
    "the unverified points) over that of the point it is compared with.")


def layout_ratio(p, field="seconds"):
    """p's median field over its base's, or None."""
    a, b = median(p, field), median(p.base, field) if p.base else None
    return a / b if a and b else None


def layouts_table(sessions, n):
    """Experiment 13: each layout's load against the one it is compared
    with, then a band of rows and sinograms of the big-endian file beside
    those of parload's own format."""
    out = [LAYOUTS_TEXT, ""] + head([
        "point", "layout", "input MB", "median ms", "middle 50% ms",
        "process wall ms", "peak RSS MiB", "ratio", "compared with"])
    for s, p, t in table_rows(sessions, 13, n):
        st = p.file(s)
        rss = t["peak_rss_kib"]
        out.append(row([
            p.label(), "--raw " + st.spec if hasattr(st, "spec") else
            "parload's format", "%.1f" % (st.size / 1e6), ms(t["median"]),
            "%s - %s" % (ms(t["q1"]), ms(t["q3"])), ms(t["wall"]),
            (mib(rss) + ("*" if on_floor(t) else "")) if rss else "",
            fmt_ratio(layout_ratio(p, p.base_field)),
            "%s (%s)" % (p.base.label(), p.base_field) if p.base else ""]))
    out.append("")
    return out + layout_selections(sessions, n)


def layout_selections(sessions, n):
    """The band and the sinograms over the full load, of each file."""
    out = []
    for s in sessions:
        if s.note != RAW_LAYOUTS:
            continue
        fulls = [p for p in s.points if p.runs and p.select is None and
                 any(q.base is p and q.select for q in s.points)]
        for full in fulls:
            sels = [q for q in s.points if q.base is full and q.select and
                    q.runs]
            if not out:
                out += ["A band of rows and sinograms, each over the full "
                        "load of its file:", ""]
                out += head(["file", "full load ms"] + [
                    x for q in sels for x in ("%s ms" % q.select.name,
                                              "%s / full" % q.select.name)])
            out.append(row([full.file(s).name, ms(median(full))] + [
                x for q in sels for x in (ms(median(q)),
                                          fmt_ratio(layout_ratio(q)))]))
    return out + [""] if out else []


FLOORS_TEXT = (
    "Both floors beside parload's whole-file load, in every session that "
    "measures them, at each thread count: the *copy floor* "
    "(bench/copyfloor: each thread reads its share 1 MiB at a time into "
    "one reused buffer, touched before the clock) bounds a load into "
    "memory the caller owns; the *fresh-memory floor* (bench/freshfloor: "
    "on the clock, one fresh anonymous mapping the size of the file, "
    "advised for huge pages, each thread `pread`s its contiguous part "
    "straight into it) bounds a loader that returns a new dataset, whose "
    "every page the kernel must fault in and zero.  *parallel*: `parload "
    "--strategy parallel --threads t --verify-seed` (in experiment 14's "
    "sessions, `--cache keep`).")


def parallel_at(s, t):
    """The session's verified parallel whole-file load with t threads
    (experiment 14's: --cache keep)."""
    return s.find(lambda q: q.is_parallel(t) or (
        q.tool == "parload" and q.strategy == "parallel" and
        q.threads == t and q.cache == "keep" and q.stream is None and
        q.select is None and not q.extra))


def floors_table(sessions):
    """Every session's floors and its parallel load at each thread count
    where the fresh-memory floor was measured."""
    out = []
    for s in sessions:
        for f in s.points:
            if f.tool != "freshfloor" or not f.runs:
                continue
            t = f.threads
            copy = median(s.find(lambda q: q.tool == "copyfloor" and
                                 q.threads == t))
            fresh, par = median(f), median(parallel_at(s, t))
            out.append(row([
                s.stream.name, s.cache + (" (%s)" % s.note if s.note else ""),
                "%d" % t, ms(copy) if copy else "", ms(fresh),
                ms(par) if par else "",
                fmt_ratio(par / copy if par and copy else None),
                fmt_ratio(par / fresh if par else None),
                fmt_ratio(fresh / copy if copy else None)]))
    if not out:
        return []
    return ["## Both floors", "", FLOORS_TEXT, ""] + head([
        "file", "cache", "threads", "copy floor ms", "fresh floor ms",
        "parallel ms", "parallel / copy floor", "parallel / fresh floor",
        "fresh floor / copy floor"]) + out + [""]


CACHE_TEXT = (
    "`parload --strategy parallel --threads n --verify-seed --cache MODE` "
    "in each page-cache mode, against the readers a user could reach for "
    "on the same file: `dd bs=1M` and `dd iflag=direct bs=8M` to "
    "/dev/null (their own reported time), `fio --readonly --rw=read "
    "--bs=1M --ioengine=psync` with one job (time in the read calls) and "
    "with `--direct=1` and one job per core, each its contiguous part "
    "(the slowest job's run time); and the io_uring floors "
    "(bench/uringfloor, where built: the fresh-memory floor read by a "
    "ring a thread, buffered or O_DIRECT, depth 8 or 1), which say "
    "whether an io_uring reader would beat the pool's pread (the "
    "fresh-memory floor).  Cold: an untimed run of the same point, "
    "then the file evicted, before every run (bench/evict); warm: read "
    "in again before a run unless all of it is cached.  *cached after*: "
    "the share of the file's pages in the page cache just after the run "
    "(mincore, `bench/evict --count`), median.  *mode used*: the `cache` of "
    "parload's JSON (what auto "
    "chose; drop where direct was refused).  *vs keep*: time over `--cache "
    "keep`'s in the same session; *buffered peer / this*, *direct peer / "
    "this*: the better of dd bs=1M and fio (buffered), of dd iflag=direct "
    "and fio --direct=1, over this point's time (above 1: faster than the "
    "peer).")


def cache_peer(s, tools):
    """The smallest median of the session's points of those tools."""
    xs = [median(q) for q in s.points if q.tool in tools and q.runs]
    xs = [x for x in xs if x]
    return min(xs) if xs else None


def mode_used(p):
    used = [m.get("cache_used") for m in p.runs if m.get("cache_used")]
    return max(set(used), key=used.count) if used else ""


def cache_table(sessions, n):
    """Experiment 14: every point's time, what it left cached and its
    ratios to keep and to the peers."""
    out = [CACHE_TEXT, ""] + head([
        "file", "cache", "point", "median ms", "middle 50% ms", "GB/s",
        "cached after", "mode used", "vs keep", "buffered peer / this",
        "direct peer / this"])
    for s in sessions:
        if not any(14 in p.exps and p.runs for p in s.points):
            continue
        keep = median(s.find(lambda q: q.cache == "keep"))
        buffered = cache_peer(s, ("dd", "fio"))
        direct = cache_peer(s, ("dd-direct", "fio-direct"))
        for p in s.points:
            if 14 not in p.exps or not p.runs:
                continue
            t = point_stats(s, p, n)
            med = t["median"]
            out.append(row([
                s.stream.name, s.cache, p.label(), ms(med),
                "%s - %s" % (ms(t["q1"]), ms(t["q3"])), "%.2f" % t["gbps"],
                "" if t["cached"] is None else "%.1f%%" % (t["cached"] * 100),
                mode_used(p),
                fmt_ratio(med / keep if keep and p.cache else None),
                fmt_ratio(buffered / med if buffered else None),
                fmt_ratio(direct / med if direct else None)]))
    return out + [""]
