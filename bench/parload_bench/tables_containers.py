"""results.md's table of experiment 15 (containers): every point beside
the point it is compared with."""
from .containers import CONTAINERS
from .medians import median, on_floor, point_stats, summary
from .tables import fmt_ratio, head, mib, ms, row

CONTAINERS_TEXT = (
    "Every point in one session, runs interleaved; the containers hold "
    "the pixels of the file named, written once by bench/ctrfiles.py with "
    "h5py and tifffile.  *parload.load() in Python*, *h5py*, *tifffile*: "
    "bench/ctrload.py in a fresh interpreter with numpy and the module "
    "imported, timed from the call (the file's opening) until the array "
    "is complete, then checked in that process against the stream's "
    "pixels (NumPy's memmap of it).  *parload FILE (not verified)*: "
    "`parload --json [SELECTION] FILE` as a user runs it, for the "
    "whole-process ratios (compared by the process walls, each after "
    "the verified parload.load() of the same file); its options are "
    "checked once before the runs, untimed, by `parload extract` to a "
    ".npy file compared with the stream.  The raw stream of the same "
    "bytes is the payloads alone read with `--raw` (verified by "
    "--verify-seed, and as a user runs it).  *parload.describe()*: the "
    "metadata alone (the TIFF's directory walk, the HDF5 chunk table).  "
    "*parload extract -o OUT*: the whole process (no reported time: "
    "*median ms* is its wall), its output read back after every run by "
    "NumPy, h5py or tifffile, compared with the stream, and removed.  "
    "*ratio*: this point's time (its wall where *compared with* says "
    "wall) over the other point's.")


def shown_time(p):
    """(median, q1, q3) of p's reported time, or of its wall when it
    reports none (extract)."""
    return summary(p.runs) or summary(p.runs, "wall")


def base_ratio(p):
    if not p.base:
        return None
    a, b = median(p, p.base_field), median(p.base, p.base_field)
    return a / b if a and b else None


def containers_table(sessions, n):
    """Experiment 15: each point with its file, time, process wall and
    peak RSS, and its ratio to the point it is compared with."""
    out = [CONTAINERS_TEXT, ""] + head([
        "point", "file", "MB on disk", "median ms", "middle 50% ms",
        "process wall ms", "peak RSS MiB", "ratio", "compared with"])
    for s in sessions:
        if s.note != CONTAINERS:
            continue
        for p in s.points:
            if not p.runs:
                continue
            st = p.file(s)
            med, q1, q3 = shown_time(p)
            t = point_stats(s, p, n)
            rss = t["peak_rss_kib"]
            label = p.label().replace(", file %s" % st.name, "")
            out.append(row([
                label, st.name,
                "%.1f" % (st.size / 1e6), ms(med),
                "%s - %s" % (ms(q1), ms(q3)), ms(t["wall"]),
                (mib(rss) + ("*" if on_floor(t) else "")) if rss else "",
                fmt_ratio(base_ratio(p)),
                "%s (%s)" % (p.base.label(), p.base_field) if p.base
                else ""]))
    return out + [""]
