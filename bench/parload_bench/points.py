"""What is measured: the files, the points (one configuration on one file)
and the sessions (the points that share a file and a cache state, their
runs interleaved); sessions.py makes the experiments of them."""
import os

from . import MIB, human_bytes

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

    def layout_flags(self):
        """The command's flags that say how to read it: none, its header
        does."""
        return []

    def operands(self):
        return [self.path]


class RawLayout:
    """Experiment 13's files: a stream (source) read through a --raw
    description, or a file (a folder of files for frames) that
    bench/rawfiles.py derives from it, in another layout, and the --raw
    SPEC that reads it.  kind: own (the source itself, its own format
    described byte for byte), be (its payloads byte-swapped: read as
    u16be they are the generator's pixels), bare (the payloads alone),
    frames (each payload a file of its own, one stream with --concat),
    mono12p (the pixels' low 12 bits, packed).  It has what the harness
    reads of a Stream: views, width, height, bpp and payload (of what a
    load delivers), size (the bytes the layout describes, as the
    command's JSON reports them), seed, path and describe()."""

    # kind: (type, offset, header, what it is)
    KINDS = {
        "own": ("u16", 64, 32, "parload's own format, described by --raw"),
        "be": ("u16be", 64, 32, "its payloads byte-swapped (big-endian)"),
        "bare": ("u16", 0, 0, "the payloads alone, one file"),
        "frames": ("u16", 0, 0, "the payloads alone, one file each"),
        "mono12p": ("mono12p", 0, 0, "the pixels' low 12 bits, packed"),
    }

    def __init__(self, kind, source):
        self.kind, self.source = kind, source
        self.type, self.offset, self.header, self.what = self.KINDS[kind]
        self.name = "%s-%s" % (source.name, kind)
        self.views, self.width, self.height = (source.views, source.width,
                                               source.height)
        self.ptype, self.bpp, self.seed = "u16", 2, source.seed
        self.payload = self.width * self.height * self.bpp
        # What the file holds of each view's pixels: 12 bits each packed.
        self.in_payload = self.payload * 3 // 4 if kind == "mono12p" \
            else self.payload
        self.files = self.views if kind == "frames" else 1
        self.size = self.offset * self.files + self.views * (
            self.header + self.in_payload)
        self.dataset = self.views * (self.header + self.payload)
        # --verify-seed checks what the generator wrote; mono12p keeps 12
        # of its 16 bits (checked by bench/rawfiles.py instead).
        self.seed_checks = kind != "mono12p"
        self._path = None

    @property
    def path(self):
        return self.source.path if self.kind == "own" else self._path

    @path.setter
    def path(self, value):
        self._path = value

    @property
    def spec(self):
        text = "width=%d,height=%d,type=%s" % (self.width, self.height,
                                               self.type)
        for key in ("offset", "header"):
            if getattr(self, key):
                text += ",%s=%d" % (key, getattr(self, key))
        return text

    def layout_flags(self):
        return ["--raw", self.spec] + (["--concat"] if self.files > 1
                                       else [])

    def operands(self):
        if self.files == 1:
            return [self.path]
        return [os.path.join(self.path, "frame_%05d.raw" % i)
                for i in range(self.files)]

    def describe(self):
        return "the %s stream, %s: %d views of %d x %d, `--raw %s%s`, %s" % (
            self.source.name, self.what, self.views, self.width,
            self.height, self.spec, " --concat" if self.files > 1 else "",
            "%d files of %s" % (self.files, human_bytes(self.size //
                                                          self.files))
            if self.files > 1 else human_bytes(self.size))


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
    "--map-sinograms": "copied from the mapped file",
}

# bench/nprawload.py's loads, by the kind of file they read.
NPRAW_TEXT = {"mono12p": "numpy fromfile + mono12p unpacking",
              "frames": "numpy fromfile loop into a preallocated array"}

# Point.compute_us of experiment 11's overlap points before the run: set
# from the I/O-alone point measured first (plan.calibrate).
CALIBRATE = "calibrate"


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class Point:
    """One configuration.  tool: parload, parload-version (the process
    alone: `parload --version`), copyfloor, copyfloor-whole, freshfloor,
    sinofloor (freshfloor --sinograms: the floor of the sinogram layout),
    sinofloor-map (the same with --map: from the file mapped),
    uringfloor and uringfloor-direct (the fresh-memory floor read with
    io_uring, buffered or O_DIRECT: threads rings of depth requests),
    dd, dd-direct (iflag=direct bs=8M), fio, fio-direct (--direct=1, one
    job per core), numpy.  For parload, strategy None is the plain `parload FILE` (no
    --strategy, no --threads: the defaults, threads is what they come to);
    extra: more command-line flags (--preallocate, --no-hugepages); verify
    False: no --verify-seed (only for the whole-process points, whose wall
    would hold the check); stream: a file of its own instead of its
    session's; cache: parload's --cache MODE (None: the flag not given,
    the default keep)."""

    def __init__(self, tool, exps, strategy=None, io=None, buffer=None,
                 threads=1, extra=(), verify=True, stream=None, select=None,
                 threads_flag=False, window=None, compute_us=None,
                 compute_only=False, ranks=None, split=None, cache=None,
                 depth=None, busy=False):
        self.tool = tool
        self.cache = cache
        self.depth = depth        # uringfloor: requests in flight a ring
        # bench/batches: read through windows of this many bytes; give
        # the callback compute_us of CPU time per batch, its check
        # included (CALIBRATE: chosen by the run); compute_only: that
        # alone, compute_batches batches; busy: a thread of its own
        # spinning beside the load.
        self.window, self.compute_us = window, compute_us
        self.compute_only, self.compute_batches = compute_only, None
        self.busy = busy
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
        # The point that results.md's table compares it with, and which
        # field (experiment 13).
        self.base, self.base_field = None, "seconds"

    @property
    def key(self):
        return (self.tool, self.strategy, self.io, self.buffer, self.threads,
                self.threads_flag, self.extra, self.verify,
                self.stream.name if self.stream else None,
                self.select.name if self.select else None,
                self.window, self.compute_only, self.compute_us is not None,
                self.ranks, self.split, self.cache, self.depth, self.busy)

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
        if self.cache:
            text += ", --cache " + self.cache
        if self.select:
            text += ": " + self.select.name
        if self.stream:
            text += ", file %s" % self.stream.name
        if self.tool == "parload" and not self.verify:
            text += " (not verified)"
        return text

    def base_label(self):
        fixed = {"parload-version": "parload --version", "dd": "dd bs=1M",
                 "dd-direct": "dd iflag=direct bs=8M",
                 "fio": "fio read bs=1M", "numpy": "numpy fromfile+copy",
                 "npselect": "numpy memmap+slice+copy",
                 "pyimport": "import parload (after numpy)"}
        if self.tool in fixed:
            return fixed[self.tool]
        if self.tool == "npraw":
            return NPRAW_TEXT[self.stream.kind]
        threads = plural(self.threads, "thread")
        if self.tool == "parload" and self.strategy is None:
            if self.threads_flag:
                return "parload --threads %d FILE" % self.threads
            return "parload FILE (defaults: %s)" % threads
        if self.tool == "copyfloor":
            return "copy floor, " + threads
        if self.tool == "freshfloor":
            return "fresh-memory floor, " + threads
        if self.tool == "sinofloor":
            return "sinogram floor, " + threads
        if self.tool == "sinofloor-map":
            return "sinogram floor from the mapped file, " + threads
        if self.tool in ("uringfloor", "uringfloor-direct"):
            return "io_uring floor%s, %s, a ring of depth %d each" % (
                ", O_DIRECT" if self.tool == "uringfloor-direct" else "",
                threads, self.depth)
        if self.tool == "fio-direct":
            return "fio --direct=1 read bs=1M, %s" % plural(self.threads,
                                                              "job")
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
        if self.busy:
            out += ["--busy"]
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
        if self.busy:
            text += ", beside a thread that spins"
        return text

    def is_plain(self):
        """parload with no extra flags, verified, on its session's file."""
        return (self.tool == "parload" and not self.extra and self.verify
                and self.stream is None and self.select is None and
                self.cache is None)

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
                self.stream is None and self.cache is None and
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
        own (after the files each of those is made of, its parts: the
        references of experiment 16), each once."""
        out = [self.stream]
        for p in self.points:
            for f in getattr(p.stream, "parts", ()) + (p.stream,):
                if f and f not in out:
                    out.append(f)
        return out
