"""Experiment 15: containers, HDF5 and TIFF (warm cache).  The files
(written by bench/ctrfiles.py with h5py and tifffile from a stream that
`parload gen` writes), the points (parload's command and its Python
module on them, h5py and tifffile as a user calls them, `parload
extract` to .npy, .h5 and .tif), their runners and the checks of what
they loaded, and the session that interleaves them all."""
import os
import subprocess
import tempfile

from . import HERE, BenchError, human_bytes
from . import measure
from .measure import last_json, result, run_checked
from .points import Point, RawLayout, Stream, plural
from .sessions import BAND_32_SINOGRAMS, REFERENCE, based, session

# The note of experiment 15's session, and the name of the stream of many
# small views whose containers the metadata points read.
CONTAINERS = "containers"
PAGES = "pages"


class Container:
    """A container that bench/ctrfiles.py writes from source (a Stream):
    kind h5 (contiguous), h5gz (chunks of one view, gzip level 4 +
    shuffle), h5chunks (chunks of one view, uncompressed), tif (a
    multi-page TIFF) or tifdir (a folder of single-page TIFFs).  It has
    what the harness reads of a stream: views, width, height, bpp,
    payload, dataset (what a load delivers), size (its bytes on disk,
    known once written), path and describe()."""

    KINDS = {
        "h5": ("HDF5 /exchange/data, contiguous", ".h5"),
        "h5gz": ("HDF5 /exchange/data, chunks of one view, gzip level 4 "
                 "after shuffle", ".h5"),
        "h5chunks": ("HDF5 /exchange/data, chunks of one view, "
                     "uncompressed", ".h5"),
        "tif": ("one multi-page TIFF, uncompressed", ".tif"),
        "tifdir": ("a folder of single-page TIFFs", ""),
    }

    def __init__(self, kind, source):
        self.kind, self.source = kind, source
        self.what, self.ext = self.KINDS[kind]
        self.name = "%s-%s" % (source.name, kind)
        self.views, self.width, self.height = (source.views, source.width,
                                               source.height)
        self.ptype, self.bpp, self.seed = source.ptype, source.bpp, \
            source.seed
        self.payload = source.payload
        self.dataset = source.dataset
        self.size = source.views * source.payload  # until written
        self.path = None

    def operands(self):
        return [self.path]

    def layout_flags(self):
        return []

    def paths(self):
        """The files it is made of (the folder's TIFFs, in name order)."""
        if self.kind != "tifdir":
            return [self.path]
        return [os.path.join(self.path, x)
                for x in sorted(os.listdir(self.path))]

    def describe(self):
        return "the %s stream's pixels as %s: %d views of %d x %d %s, %s" % (
            self.source.name, self.what, self.views, self.width, self.height,
            self.ptype, "%d files, %s" % (self.views, human_bytes(self.size))
            if self.kind == "tifdir" else human_bytes(self.size))

    def generate(self, tools, data_dir, gen):
        """Write it with bench/ctrfiles.py from its source (written first
        by gen, plan.generate), unless a kept data dir already holds
        it."""
        gen(tools, self.source, data_dir)
        self.path = os.path.join(data_dir, self.name + self.ext)
        marker = "ctrfiles.py write %s %s\n" % (self.kind, self.source.name)
        try:
            with open(self.path + ".ok") as f:
                if f.read() == marker:
                    self.size = sum(os.path.getsize(x) for x in self.paths())
                    return
        except OSError:
            pass
        cmd = [tools.numpy, os.path.join(HERE, "ctrfiles.py"), "write",
               self.kind, self.source.path, self.path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError("%s failed: %s" % (" ".join(cmd),
                                                r.stderr.strip()))
        self.size = sum(os.path.getsize(x) for x in self.paths())
        with open(self.path + ".ok", "w") as f:
            f.write(marker)


# What each peer's call is, by tool and layout.
PEER_TEXT = {("h5py", "views"): "h5py dset[...]",
             ("h5py", "sinograms"): "h5py np.ascontiguousarray(dset[:, "
             "r0:r1, :].transpose(1, 0, 2))",
             ("tifffile", "views"): "tifffile.imread"}

# The output formats of the extract points.
EXTRACT_FORMATS = ("npy", "h5", "tif")


class ContainerPoint(Point):
    """A point of experiment 15.  tool: ctr-command (`parload --json
    [SELECTION] FILE`, as a user runs it: unverified, its
    options checked once before the runs by an extract), ctr-python
    (bench/ctrload.py: `who` is parload, h5py or tifffile; describe:
    parload.describe alone), ctr-info (`parload info --json FILE`, the
    metadata alone as a user asks for it), ctr-extract (`parload extract
    -o OUT.out FILE`, the output checked after every run and removed)."""

    def __init__(self, tool, who=None, describe=False, out=None, **kw):
        super().__init__(tool, [15], **kw)
        self.who, self.describe, self.out = who, describe, out
        self.verify = tool != "ctr-command"

    @property
    def key(self):
        return (self.tool, self.who, self.describe, self.out, self.threads,
                self.stream.name if self.stream else None,
                self.select.name if self.select else None)

    def base_label(self):
        threads = plural(self.threads, "thread")
        if self.tool == "ctr-extract":
            return "parload extract -o OUT.%s FILE (whole process)" % self.out
        if self.tool == "ctr-info":
            return "parload info FILE (whole process)"
        if self.tool == "ctr-command":
            return "parload FILE (defaults: %s)" % threads
        if self.who == "parload" and self.describe:
            return "parload.describe() in Python"
        if self.who == "parload":
            return "parload.load() in Python, " + threads
        layout = self.select.layout if self.select else "views"
        text = PEER_TEXT[(self.who, layout)]
        if self.who == "tifffile" and self.stream.kind == "tifdir":
            text += "(list of files)"
        return text

    def label(self):
        text = self.base_label()
        if self.select:
            text += ": " + self.select.name
        if self.stream:
            text += ", file %s" % self.stream.name
        if self.tool == "ctr-command":
            text += " (not verified)"
        return text


def selection_flags(p):
    """bench/ctrload.py's and ctrfiles.py's flags of p's selection (a row
    band, a layout)."""
    if not p.select:
        return []
    out = ["--rows", "%d:%d" % p.select.rows] if p.select.rows else []
    return out + ["--layout", p.select.layout]


def command(tools, p, stream):
    return [tools.parload, "--json"] + (p.select.flags if p.select else []) \
        + stream.operands()


def check_json(cmd, p, stream, d):
    """The command's JSON names the shape delivered: the views, rows and
    columns of the selection, in its layout."""
    views, rows, cols = p.select.shape(stream) if p.select else (
        stream.views, stream.height, stream.width)
    layout = p.select.layout if p.select else "views"
    got = tuple(d.get(k) for k in ("views", "rows", "cols", "layout",
                                   "file_views"))
    if got != (views, rows, cols, layout, stream.views):
        raise BenchError("%s: delivered %s, not %s" % (
            " ".join(cmd), got, (views, rows, cols, layout, stream.views)))


def run_command(tools, p, stream):
    cmd = command(tools, p, stream)
    r, proc = run_checked(cmd, None)
    d = last_json(r.stdout)
    check_json(cmd, p, stream, d)
    return result(float(d["seconds"]), proc, d.get("read_calls"),
                  d.get("bytes_read"))


def check_file(tools, src, path, flags, what):
    """bench/ctrfiles.py check: path holds src's pixels (the selection of
    flags)."""
    run_checked([tools.numpy, os.path.join(HERE, "ctrfiles.py"), "check",
                 src.path, path] + flags, "the check of %s" % what)


def check_command(tools, p, stream):
    """Once before the runs, untimed: the command's options through
    `parload extract` to a .npy file, compared with the source."""
    with tempfile.TemporaryDirectory(
            dir=os.path.dirname(stream.source.path)) as tmp:
        npy = os.path.join(tmp, "check.npy")
        run_checked([tools.parload, "extract", "-o", npy] +
                    command(tools, p, stream)[2:],
                    "parload extract (the check of %s)" % p.label())
        check_file(tools, stream.source, npy, selection_flags(p), p.label())


def run_python(tools, p, stream):
    """bench/ctrload.py: the load (or describe) by parload's module, h5py
    or tifffile, checked in that process against the source."""
    cmd = [tools.numpy, os.path.join(HERE, "ctrload.py"), p.who,
           stream.source.path, stream.path] + selection_flags(p)
    if p.who == "parload":
        cmd += ["--threads", str(p.threads)]
    if p.describe:
        cmd.append("--describe")
    r, proc = run_checked(cmd, p.label(), tools.pyenv)
    d = last_json(r.stdout)
    views = p.select.shape(stream)[0] if p.select else stream.views
    if d.get("verified") is not True or d.get("views") != views:
        raise BenchError("%s: not verified: %s" % (" ".join(cmd), d))
    m = result(float(d["seconds"]), proc)
    m["serial"] = d.get("serial")
    return m


def run_info(tools, p, stream):
    """`parload info --json FILE`, the whole process (its wall): the file
    valid, of the container's views and their shape."""
    cmd = [tools.parload, "info", "--json"] + stream.operands()
    r, proc = run_checked(cmd, p.label())
    d = last_json(r.stdout)
    lay = d.get("layout") or {}
    if d.get("valid") is not True or (lay.get("count"), lay.get("height"),
                                      lay.get("width")) != (
            stream.views, stream.height, stream.width):
        raise BenchError("%s: not the file written: %s" % (" ".join(cmd),
                                                          d))
    return result(None, proc)


def run_extract(tools, p, stream):
    """`parload extract -o OUT FILE`, the whole process (its wall: there
    is no reported time); then, after the clock, OUT read back by its own
    reader (NumPy, h5py, tifffile) and compared with the file, and
    removed."""
    out = os.path.join(os.path.dirname(stream.path),
                       "extract-check." + p.out)
    if os.path.exists(out):
        os.remove(out)
    try:
        _, proc = run_checked([tools.parload, "extract", "-o", out] +
                              stream.operands(), p.label())
        check_file(tools, stream, out, [], p.label())
    finally:
        if os.path.exists(out):
            os.remove(out)
    return result(None, proc)


measure.RUNNERS.update({"ctr-command": run_command,
                        "ctr-python": run_python,
                        "ctr-info": run_info,
                        "ctr-extract": run_extract})


def missing(tools):
    """Why experiment 15 cannot run here, or None."""
    if not tools.numpy or not tools.pyenv:
        return ("the parload Python module or numpy (experiment 15 loads "
                "and checks in Python): experiment 15 is skipped")
    r = subprocess.run([tools.numpy, "-c", "import h5py, tifffile"],
                       capture_output=True, env=tools.pyenv)
    if r.returncode != 0:
        return ("h5py or tifffile (%s cannot import them: python3-h5py, "
                "python3-tifffile): experiment 15 is skipped" % tools.numpy)
    r = subprocess.run([tools.parload, "--help"], capture_output=True,
                       text=True)
    if "--dataset" not in r.stdout:
        return ("parload's containers (this parload has no --dataset): "
                "experiment 15 is skipped")
    return None


def extract_formats(tools):
    """The extract points' formats that the command writes: .npy, and .h5
    and .tif where `parload extract --help` names them (said in the
    output when not)."""
    r = subprocess.run([tools.parload, "extract", "--help"],
                       capture_output=True, text=True)
    have = [x for x in EXTRACT_FORMATS[1:] if "OUT.%s" % x in r.stdout or
            "\n  %s " % x in r.stdout]
    for x in EXTRACT_FORMATS[1:]:
        if x not in have:
            tools.missing.append("`parload extract -o OUT.%s` (this "
                                 "parload's extract does not write it): "
                                 "experiment 15 has no such point" % x)
    return ["npy"] + have


# Writes a tiny HDF5 and TIFF file into the folder argv[1] (the probe of
# what this parload reads): 2 views of 8 x 16 (tifffile takes a last
# axis of 3 or 4 for colour samples).
PROBE = ("import sys, h5py, numpy, tifffile\n"
         "a = numpy.arange(256, dtype='u2').reshape(2, 8, 16)\n"
         "with h5py.File(sys.argv[1] + '/probe.h5', 'w') as f:\n"
         "    f['/exchange/data'] = a\n"
         "tifffile.imwrite(sys.argv[1] + '/probe.tif', a)\n")


def readable(tools):
    """The container formats ("h5", "tif") that this parload loads: a
    tiny file of each, written with h5py and tifffile, loaded by the
    command (said in the output when one is not)."""
    have = []
    with tempfile.TemporaryDirectory(prefix="parload-bench-probe-") as tmp:
        run_checked([tools.numpy, "-c", PROBE, tmp], "h5py and tifffile "
                    "(the probe of the containers)", tools.pyenv)
        for ext in ("h5", "tif"):
            r = subprocess.run([tools.parload, os.path.join(
                tmp, "probe." + ext)], capture_output=True, text=True)
            if r.returncode == 0:
                have.append(ext)
            else:
                tools.missing.append(
                    "parload's .%s loads (%s): experiment 15 has no point "
                    "of that format" % (ext, r.stderr.strip()[-200:]))
    return have


def sources(quick):
    """The stream the containers hold (the reference stream; 200 views of
    it with --quick) and the many small views of the metadata points
    (20,000 views of 64 x 64 u16; 2,000 with --quick)."""
    if quick:
        return (Stream("ctr-quick", 200, 896, 64, "u16", seed=1),
                Stream(PAGES + "-quick", 2000, 64, 64, "u16", seed=8))
    return REFERENCE, Stream(PAGES, 20000, 64, 64, "u16", seed=8)


def command_twin(python, raw_user):
    """`parload FILE` with python's file and selection, after python (the
    verified load of the same), checked once by an extract; its wall
    compared with raw_user's, the raw stream's."""
    p = ContainerPoint("ctr-command", threads=python.threads,
                       stream=python.stream, select=python.select)
    p.check_once = check_command
    return based(p, raw_user, "wall")


def compared(n, c, peer, raw_user, select=None):
    """parload.load() of container c (every core), the command after it,
    and the peer (h5py, tifffile), compared with parload.load()."""
    par = ContainerPoint("ctr-python", "parload", threads=n, stream=c,
                         select=select)
    return [par, command_twin(par, raw_user),
            based(ContainerPoint("ctr-python", peer, stream=c,
                                 select=select), par)]


def hdf5_points(src, n, raw_user):
    """The contiguous HDF5 file whole and its band as sinograms, and the
    gzip file, each by parload.load(), the command and h5py; the gzip
    file's parload.load() at 1 to n threads too."""
    h5, gz = Container("h5", src), Container("h5gz", src)
    pts = compared(n, h5, "h5py", raw_user)
    pts += compared(n, h5, "h5py", raw_user, BAND_32_SINOGRAMS)
    gz_pts = compared(n, gz, "h5py", raw_user)
    # The gzip file's speed-up against threads: 1 to n.
    return pts + gz_pts + [
        based(ContainerPoint("ctr-python", "parload", threads=t, stream=gz),
              gz_pts[0]) for t in range(1, n)]


def container_session(quick, n, tools):
    """Experiment 15, every point interleaved in one session on the
    source stream: the raw stream of the containers' bytes (--raw, the
    payloads alone; verified and as a user runs it); each container
    loaded by parload.load(), by `parload FILE` and by its Python peer;
    a 32-row band as sinograms; the gzip file at every thread count; the
    metadata alone (parload.describe, `parload info`) of many small views
    against their load; and extract to .npy, .h5 and .tif."""
    src, pages = sources(quick)
    bare = RawLayout("bare", src)
    raw = Point("parload", [15], "parallel", threads=n, stream=bare)
    raw_user = based(Point("parload", [15], None, threads=n, verify=False,
                           stream=bare), raw, "wall")
    pts = [raw, raw_user]
    formats = readable(tools)
    if "h5" in formats:
        pts += hdf5_points(src, n, raw_user)
    if "tif" in formats:
        pts += compared(n, Container("tif", src), "tifffile", raw_user)
        pts += compared(n, Container("tifdir", src), "tifffile", raw_user)
    # The fresh-memory floor of the contiguous HDF5 file and the TIFF, with
    # one thread (the peers read with one) and every core (the ceilings of
    # 17a2 and 17d2).
    for c in {p.stream.kind: p.stream for p in pts
              if getattr(p.stream, "kind", None) in ("h5", "tif")}.values():
        pts += [Point("freshfloor", [15], threads=t, stream=c)
                for t in sorted({1, n})]
    # The metadata alone (the directory walk, the chunk table) against the
    # load of the same file.
    for kind, ext in (("tif", "tif"), ("h5chunks", "h5")):
        if ext not in formats:
            continue
        c = Container(kind, pages)
        load = ContainerPoint("ctr-python", "parload", threads=n, stream=c)
        pts += [load, based(ContainerPoint("ctr-python", "parload",
                                           describe=True, threads=n,
                                           stream=c), load)]
        # The same as whole processes: `parload info` against `parload`.
        user = command_twin(load, raw_user)
        pts += [user, based(ContainerPoint("ctr-info", threads=n, stream=c),
                            user, "wall")]
    npy = ContainerPoint("ctr-extract", out="npy", threads=n)
    pts += [npy] + [based(ContainerPoint("ctr-extract", out=x, threads=n),
                          npy, "wall") for x in extract_formats(tools)[1:]]
    for p in pts:
        # Each extract after an untimed one of its own: in a full run the
        # first of them came after short processes and took 3x as long as
        # the two after it, which the settling run of a long one preceded.
        p.settle_always = p.tool == "ctr-extract"
    return session(src, "warm", pts, note=CONTAINERS)
