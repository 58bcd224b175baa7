"""Experiment 16, corrected sinograms (warm cache): the files (the
reference stream with its darks and flats, and a float32 file of the same
shape), the points of its session (sessions.py runs them), the runs of
bench/corrload.py and the table of results.md.  Its targets are in
targets_correct.py."""
import os

from . import HERE, MIB, BenchError, human_bytes
from .points import Point, Selection, Stream

# The note of the session, and the references' frames per set.
CORRECTED = "corrected sinograms"
REF_FRAMES = 20
BAND = Selection("rows 16:48 as sinograms", rows=(16, 48),
                 layout="sinograms")
WHOLE = Selection("sinograms", layout="sinograms")
# What the command and parload.load() are asked for.
FLAGS_TEXT = "--darks D --flats F --minus-log"


class RefStream(Stream):
    """Darks or flats: REF_FRAMES views of the scan's shape, written by
    `parload gen`, then their pixels rewritten as a detector's are
    (bench/corrload.py refs: darks low, flats high)."""

    def __init__(self, kind, scan, seed):
        Stream.__init__(self, "%s-%s" % (scan.name, kind), REF_FRAMES,
                        scan.width, scan.height, scan.ptype, seed=seed)
        self.kind = kind

    def generate(self, tools, data_dir, gen):
        """gen (plan.generate), then the rewrite, unless a kept data dir
        holds both: the marker file names the rewrite, so that gen, which
        finds its own marker there, would write the file again."""
        marker = "parload gen --seed %d, then corrload.py refs %s\n" % (
            self.seed, self.kind)
        path = os.path.join(data_dir, self.name + ".raw")
        try:
            with open(path + ".ok") as f:
                if f.read() == marker and \
                        os.path.getsize(path) == self.size:
                    self.path = path
                    return
        except OSError:
            pass
        gen(tools, self, data_dir)
        # Imported here: measure.py imports this module's runner.
        from .measure import run_checked
        run_checked([tools.numpy, os.path.join(HERE, "corrload.py"), "refs",
                     self.kind, self.path],
                    "bench/corrload.py refs %s" % self.kind)
        with open(path + ".ok", "w") as f:
            f.write(marker)


class CorrectedScan:
    """The scan (a Stream) read with its darks and flats and --minus-log:
    what the harness reads of a Stream (name, views, width, height, bpp,
    size, seed, path, describe()), the command's flags and its check.
    --verify-seed is refused with a correction: the command's load is
    checked once before its runs, untimed, by `parload extract` with the
    same options to a .npy file that bench/corrload.py check compares
    with a float64 NumPy reference of the formula."""

    seed_checks = False

    def __init__(self, scan):
        self.source = scan
        self.darks = RefStream("darks", scan, scan.seed + 10)
        self.flats = RefStream("flats", scan, scan.seed + 11)
        self.parts = (self.darks, self.flats)
        self.name = scan.name + "-corrected"
        for key in ("views", "width", "height", "seed", "size"):
            setattr(self, key, getattr(scan, key))
        self.ptype, self.bpp = "f32", 4  # what the load delivers
        self.payload = self.width * self.height * 4
        self.dataset = self.views * (32 + self.payload)

    @property
    def path(self):
        return self.source.path

    def generate(self, tools, data_dir, gen):
        """Its file is the scan's (the references are files of their
        own)."""
        gen(tools, self.source, data_dir)

    def references(self):
        return [self.darks.path, self.flats.path]

    def layout_flags(self):
        return ["--darks", self.darks.path, "--flats", self.flats.path,
                "--minus-log"]

    def operands(self):
        return [self.source.path]

    def extract_check(self, tools, npy, select):
        """The command that checks `parload extract`'s .npy of select."""
        return [tools.numpy, os.path.join(HERE, "corrload.py"), "check",
                npy, self.path] + self.references() + rows_arg(select)

    def describe(self):
        return "the %s stream (%s) with %d darks and %d flats of its " \
            "shape (%s each), `%s`, delivered as float32" % (
                self.source.name, self.source.describe(), REF_FRAMES,
                REF_FRAMES, human_bytes(self.darks.size), FLAGS_TEXT)


def rows_arg(select):
    return ["%d:%d" % select.rows] if select and select.rows else []


class CorrPoint(Point):
    """bench/corrload.py in a fresh interpreter: mode corrected
    (parload.load() with the correction), numpy (parload's raw load,
    then NumPy's correction) or raw (parload.load() of the sinograms
    alone); stream: a CorrectedScan for the first two, a Stream (None:
    the session's) for raw."""

    def __init__(self, mode, threads, stream=None, select=None):
        Point.__init__(self, "corrload", [16], threads=threads,
                       stream=stream, select=select)
        self.mode = mode

    @property
    def key(self):
        return Point.key.fget(self) + (self.mode,)

    def base_label(self):
        threads = "%d thread%s" % (self.threads,
                                   "" if self.threads == 1 else "s")
        return {"corrected": "parload.load() corrected -log, " + threads,
                "numpy": "parload.load() raw + NumPy correction, " + threads,
                "raw": "parload.load() raw, " + threads}[self.mode]


def run_corrload(tools, p, stream):
    """bench/corrload.py: its time, after its check of the output."""
    from .measure import last_json, result, run_checked  # see generate
    py = os.path.join(HERE, "corrload.py")
    if p.mode == "raw":
        cmd = [tools.numpy, py, "raw", stream.path, str(stream.seed)]
    else:
        cmd = [tools.numpy, py, p.mode, stream.path] + \
            stream.references() + [str(stream.seed)]
    cmd += [str(p.threads)] + rows_arg(p.select)
    r, proc = run_checked(cmd, p.label(), tools.pyenv)
    d = last_json(r.stdout)
    v, rows, cols = p.select.shape(stream)
    if d.get("verified") is not True or d.get("views") != v or \
            d.get("rows") != rows or \
            d.get("out_bytes") != v * rows * cols * stream.bpp:
        raise BenchError("%s not verified: %s" % (" ".join(cmd), d))
    return result(float(d["seconds"]), proc)


def correct_points(quick, n, scan):
    """Experiment 16's points on scan, to run interleaved: for the 32-row
    band and (not quick) the whole file, as sinograms, parload.load()
    corrected, and the raw loads of the same selection from a float32
    file of the same shape (not quick) and from the scan; NumPy's
    pipeline on the band; and (not quick) the command's corrected load
    of the whole file (its peak RSS) beside its raw load of the float32
    file."""
    corr = CorrectedScan(scan)
    f32 = Stream(scan.name + "-f32", scan.views, scan.width, scan.height,
                 "f32", seed=scan.seed + 20)
    pts = []
    for sel in (BAND,) if quick else (BAND, WHOLE):
        pts += [CorrPoint("corrected", n, corr, sel)] + \
            ([] if quick else [CorrPoint("raw", n, f32, sel)]) + \
            [CorrPoint("raw", n, None, sel)]
        if sel is BAND:
            pts.append(CorrPoint("numpy", n, corr, sel))
    if not quick:
        pts += [Point("parload", [16], "parallel", threads=n, stream=s,
                      select=WHOLE) for s in (corr, f32)]
    return pts


# --------------------------------------------------------------------------
# results.md's table.

TEXT = (
    "One session on the reference stream, runs interleaved.  "
    "*parload.load() corrected -log*: bench/corrload.py, in a fresh "
    "interpreter after numpy and parload are imported, times "
    "`parload.load(FILE, rows=..., layout=\"sinograms\", darks=D, flats=F, "
    "minus_log=True)` (the references' load and reduction included), then "
    "checks the float32 sinograms against a float64 NumPy reference of "
    "-ln(max((P - D) / max(F - D, 1e-6), 1e-6)) (relative 1e-5, 1e-6 "
    "absolute) and the view headers against the generator.  The darks "
    "and flats are %d frames each of the scan's shape, u16, written by "
    "`parload gen` and rewritten as a detector's (darks 0-63, flats "
    "40000-44095), so that most values pass the logarithm unclamped.  "
    "*raw*: the same call without the correction (sinograms of the "
    "selection, checked bit for bit against the generator), of the u16 "
    "scan and of a float32 file of the same shape (`parload gen --type "
    "f32`: the same output bytes, twice the input).  *raw + NumPy "
    "correction*: parload's raw load of the band and of the references, "
    "NumPy's mean per pixel, then astype(float32), subtract, divide "
    "(clamped), clamp, np.log and negate in place; checked against the "
    "same reference.  *parallel ... file reference-corrected*: the "
    "command, `parload --json %s --layout sinograms FILE`, checked once "
    "before its runs by `parload extract` of the same options compared "
    "with the reference; beside it the command's raw load of the float32 "
    "file (--verify-seed).  *vs raw f32*, *vs raw u16*: time over the "
    "raw load of the same selection and tool; *NumPy / this*: the NumPy "
    "pipeline's time over this point's; *RSS - output*: peak RSS "
    "(ru_maxrss) over the sinograms and headers delivered (a Python "
    "point's holds the interpreter, numpy and its check).")


def is_raw(q, p, ptype):
    """q: the raw load, by the same tool, of p's selection from the
    file of that pixel type."""
    return q.tool == p.tool and q.select is p.select and (
        getattr(q, "mode", "raw") == "raw") and \
        (q.stream.ptype if q.stream else "u16") == ptype and \
        not isinstance(q.stream, CorrectedScan) and q.runs


def correct_table(sessions, n):
    """Experiment 16: every point against the raw loads of its selection
    and the NumPy pipeline, with its peak RSS over what it delivers."""
    # Imported here: medians imports sessions, which imports this module.
    from .medians import median, on_floor, point_stats
    out = [TEXT % (REF_FRAMES, FLAGS_TEXT), ""] + [
        "| point | output MiB | median ms | middle 50% ms | vs raw f32 | "
        "vs raw u16 | NumPy / this | peak RSS MiB | RSS - output MiB |",
        "|---|---|---|---|---|---|---|---|---|"]
    for s in sessions:
        if s.note != CORRECTED:
            continue
        numpy = median(s.find(lambda q: getattr(q, "mode", "") == "numpy"))
        for p in s.points:
            if not p.runs:
                continue
            t = point_stats(s, p, n)
            med, rss = t["median"], t["peak_rss_kib"]
            outb = p.select.output(p.file(s))
            f32, u16 = (median(s.find(lambda q: is_raw(q, p, k)))
                        for k in ("f32", "u16"))
            out.append("| " + " | ".join([
                p.label(), "%.1f" % (outb / MIB), "%.2f" % (med * 1e3),
                "%.2f - %.2f" % (t["q1"] * 1e3, t["q3"] * 1e3),
                "%.2fx" % (med / f32) if f32 else "",
                "%.2fx" % (med / u16) if u16 else "",
                "%.2fx" % (numpy / med) if numpy else "",
                ("%.1f" % (rss / 1024) + ("*" if on_floor(t) else ""))
                if rss else "",
                "%+.1f" % (rss / 1024 - outb / MIB) if rss else ""]) + " |")
    return out + ["", "\\*: at the harness's own resident size (see "
                  "experiment 8).", ""]
