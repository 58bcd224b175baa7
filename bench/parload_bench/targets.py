"""The performance targets, as data: each names what it compares (a
ratio of medians measured in this run, or a difference), the experiments
that measure it, the bar and the direction.  results.md prints them as one
table with their verdicts, then the notes (ceilings and informational
ratios) that go with them.

A target's `value` is a function of the run (Run, target.py) that returns
a Measured, or None when the points it needs were not run.  The targets
themselves are defined in targets_load.py (a single load),
targets_uses.py (start-up, Python, batches, MPI), targets_layouts.py
(raw layouts), targets_floors.py (the floors, the page cache) and
targets_containers.py (HDF5 and TIFF)."""
from .sessions import MPI_RANKS
from .target import (REF_FLOOR, REF_PAR, REF_V2, Note, Run, Target, difference,
                     fmt, parallel_n, ratio, ref, v2_posix)
from .targets_load import (SELECTION_FILES, cold_best_peer, copy_vs_select,
                           floor_efficiency, huge_relative, process_rss_over,
                           process_wall_ratio, scaling_worst,
                           selection_targets, sweep_capped, sweep_worst, tiny)
from .targets_containers import CONTAINER_NOTES, CONTAINER_TARGETS
from .targets_floors import (CACHE_TARGETS, FLOOR_NOTES, FLOOR_TARGETS,
                             URING_NOTES)
from .targets_correct import CORRECT_NOTES, CORRECT_TARGETS
from .targets_layouts import LAYOUT_NOTES, LAYOUT_TARGETS
from .targets_uses import (MPI_SINGLE, MPI_TARGETS, PYTHON_TARGETS,
                           SCAN_WHOLE, SCAN_WINDOWED, STARTUP_ARTICLE,
                           STARTUP_TARGETS,
                           STREAM_NOTES, STREAM_TARGETS, VERSION_WALL,
                           empty_load,
                           layout_cost, mpi_pick, ms_of, overlap_ratio, wall)


TARGETS = [
    Target("1b", "Reference stream", "1",
           "parallel time / copy floor",
           ratio(REF_PAR, REF_FLOOR), "<=", 2.2),
    Target("2", "Into touched caller memory", "1",
           "parallel --preallocate time / copy floor",
           ratio(ref(lambda p, n: p.is_flags("parallel", ("--preallocate",),
                                             n)), REF_FLOOR), "<=", 1.15),
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
    STARTUP_TARGETS + PYTHON_TARGETS + STREAM_TARGETS + MPI_TARGETS + \
    LAYOUT_TARGETS + FLOOR_TARGETS + CACHE_TARGETS + CONTAINER_TARGETS + \
    CORRECT_TARGETS

# The article's ratios: reported figures, not targets (each says the bar
# it had as a target).
ARTICLE_NOTES = [
    Note("1a", "The article's ratio (reported; it was a target, >= 5): "
         "V2 POSIX time / parallel time = %s.", ratio(REF_V2, REF_PAR)),
    Note("3a", "The article's ratio (reported; it was a target, >= 12): "
         "tiny views, V2 POSIX unbuffered time / parallel time = %s.",
         ratio(tiny(v2_posix), tiny(parallel_n))),
    Note("3b", "The article's ratio (reported; it was a target, >= 2.2): "
         "tiny views, V2 stdio buffered time / parallel time = %s.",
         ratio(tiny(lambda p, n: p.is_plain() and
                    p.strategy == "sequential" and p.io == "stdio" and
                    p.buffer is None), tiny(parallel_n))),
    Note("4", "The article's ratio (reported; it was a target, >= 1.5): "
         "view-size sweep, best article strategy time / parallel time, "
         "smallest over the sizes = %s.", sweep_worst),
]

NOTES = ARTICLE_NOTES + STARTUP_ARTICLE + [
    Note("1b", "Ceiling of 1a: V2 POSIX / copy floor = %s, the lead of a "
         "load as fast as the copy floor; a 5x lead needs a load that much "
         "faster than the floor.", ratio(REF_V2, REF_FLOOR)),
    Note("1b", "Ceiling of 1a against the fresh-memory floor: V2 POSIX / "
         "fresh floor (every core) = %s, the lead of a load as fast as a "
         "new dataset can be.", ratio(REF_V2, ref(lambda p, n: p.tool ==
                                                   "freshfloor" and
                                                   p.threads == n))),
    Note("1a", "V2 POSIX with 4 KiB pages / parallel = %s (the article's "
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
] + STREAM_NOTES + LAYOUT_NOTES + FLOOR_NOTES + URING_NOTES + \
    CONTAINER_NOTES + CORRECT_NOTES


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
