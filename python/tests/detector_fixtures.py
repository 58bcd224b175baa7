"""Detector files as detectors and their software write them, written by
h5py with Debian's python3-hdf5plugin (the filters of hdf5-filter-plugin):
every codec parload decodes in its pool at two settings, scale-offset
(which it has no codec for), every pixel type, chunks of one frame, of 16
frames, of row bands and of tiles with partial edge chunks, libver='latest'
files (fixed array, extensible array, version-2 B-tree, single-chunk and
implicit chunk indexes), a file written in SWMR mode, an Eiger master file
with its data files, virtual datasets and a DXchange file with its flats
and darks.

Importable by the tests (test_detector.py, mpi_detector.py) and the bench;
every writer takes a directory and returns what it wrote, and h5py's read
of each file is the reference the tests compare parload with.  Each file
is small (37 frames of 70 x 100 pixels: rows and columns not multiples of
the 32-pixel tiles and bands, frames not a multiple of 16) so that the
whole set is written in a few seconds.
"""

import os
from dataclasses import dataclass, field

import numpy as np

import h5py
import hdf5plugin

# Frames, rows, columns of every file: 37 = 2 x 16 + 5, 70 = 2 x 32 + 6,
# 100 = 3 x 32 + 4, so that 16-frame chunks, row bands and tiles all have
# partial chunks at the end.
N, H, W = 37, 70, 100
# The pixel types parload loads (include/parload.h's PARLOAD_U8 ... F64).
DTYPES = ("u1", "u2", "u4", "i2", "i4", "f4", "f8")
DATASET = "/data"


@dataclass
class Spec:
    """One file: its dataset's name, shape, type and h5py keywords; codecs
    the stages of its filter pipeline, first applied first, as parload's
    codec table names them (stats["codec"] joins them with "+"), serial
    what the stats' serial reason must contain when parload has no codec
    for one of its filters (None: nothing may go serial)."""
    name: str
    dtype: str = "u2"
    kw: dict = field(default_factory=dict)
    codecs: tuple = ()
    serial: object = None
    shape: tuple = (N, H, W)
    libver: object = None
    maxshape: object = None
    dataset: str = DATASET
    path: str = ""
    data: object = None  # the array written, where h5py cannot read it


def pixels(shape, dtype, seed):
    """Detector-like pixels: Poisson counts around a smooth beam, so that
    the codecs compress them as they compress a detector's, shifted to
    hold negatives in signed types and to fill the range of u1."""
    rng = np.random.default_rng(seed)
    _, h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    beam = 40 + 400 * np.exp(-((y - h / 2) ** 2 + (x - w / 3) ** 2) /
                             (2 * (min(h, w) / 4) ** 2))
    counts = rng.poisson(beam, size=shape)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (counts + rng.standard_normal(shape)).astype(dt)
    if dt.kind == "i":
        counts = counts - 100
    info = np.iinfo(dt)
    return np.clip(counts, info.min, info.max).astype(dt)


def references(shape, seed):
    """(darks, flats, projections) u16 as a detector's: darks near 100,
    flats near 4,000, projections between, so that every -log value is
    finite and away from the clamps."""
    rng = np.random.default_rng(seed)
    n, h, w = shape
    darks = rng.poisson(100, size=(5, h, w)).astype("u2")
    flats = rng.poisson(4000, size=(7, h, w)).astype("u2")
    gain = rng.uniform(0.2, 0.9, size=shape)
    proj = (100 + rng.poisson(3900 * gain)).astype("u2")
    return darks, flats, proj


# ---------------------------------------------------------------------------
# The codecs: (name, h5py keywords, the codec rows that decode it).  Two
# settings each where the codec has them (levels, or block sizes where it
# has no level).

def _gzip(level, shuffle=True):
    return {"compression": "gzip", "compression_opts": level,
            "shuffle": shuffle}


def _blosc(cname, clevel, shuffle):
    return dict(hdf5plugin.Blosc(cname=cname, clevel=clevel,
                                 shuffle=shuffle))


SHUFFLES = {"noshuffle": hdf5plugin.Blosc.NOSHUFFLE,
            "shuffle": hdf5plugin.Blosc.SHUFFLE,
            "bitshuffle": hdf5plugin.Blosc.BITSHUFFLE}


ZSTD_ID = 32015


def zstd(level):
    """Zstd (HDF5 filter 32015, one zstd frame a chunk).  Debian has no
    HDF5 plugin for it: the chunks are compressed by numcodecs' Zstd
    (python3-numcodecs, libzstd) and stored with write_direct_chunk under
    the filter's id and level, as hdf5plugin's Zstd writes them; the
    filter is marked optional so that libhdf5 lets the dataset be made
    without the plugin.  h5py cannot read them back here: the reference
    is the array written, and write_spec checks every stored chunk
    against it with numcodecs' decode."""
    return {"direct": (ZSTD_ID, (level,), level)}


def zstd_encode(raw, level):
    import numcodecs
    return numcodecs.Zstd(level=level).encode(raw)


def zstd_decode(stored):
    import numcodecs
    return numcodecs.Zstd().decode(stored)


# The filters h5py must have plugins for to write the fixtures (Zstd is
# written without one).
PLUGINS = (32000, 32001, 32004, 32008, 307)


def missing_plugins():
    return [f for f in PLUGINS if not h5py.h5z.filter_avail(f)]


def codec_table():
    """[(name, keywords, codec rows)] for every codec and setting."""
    rows = [
        ("gzip1-shuffle", _gzip(1), ("shuffle", "deflate")),
        ("gzip9-shuffle", _gzip(9), ("shuffle", "deflate")),
        ("gzip4", _gzip(4, False), ("deflate",)),
        # Bitshuffle + LZ4: the filter's automatic block size and a block
        # of 2,048 elements (the filter has no level).
        ("bslz4", dict(hdf5plugin.Bitshuffle(cname="lz4")), ("bitshuffle",)),
        ("bslz4-block2048", dict(hdf5plugin.Bitshuffle(nelems=2048,
                                                       cname="lz4")),
         ("bitshuffle",)),
        # The bit transpose alone, uncompressed (cname 'none').
        ("bitshuffle-none", dict(hdf5plugin.Bitshuffle(cname="none")),
         ("bitshuffle",)),
        # LZ4 with one block a chunk and with 4 KiB blocks (its framing
        # holds several).
        ("lz4", dict(hdf5plugin.LZ4()), ("lz4",)),
        ("lz4-block4096", dict(hdf5plugin.LZ4(nbytes=4096)), ("lz4",)),
        ("zstd1", zstd(1), ("zstd",)),
        ("zstd19", zstd(19), ("zstd",)),
        ("lzf", {"compression": "lzf"}, ("lzf",)),
        ("fletcher32", {"fletcher32": True}, ("fletcher32",)),
        ("gzip-fletcher32", dict(_gzip(4), fletcher32=True),
         ("shuffle", "deflate", "fletcher32")),
    ]
    for cname in ("lz4", "zstd", "blosclz"):
        for sname, shuffle in SHUFFLES.items():
            for clevel in (1, 9):
                rows.append(("blosc-%s-%s-%d" % (cname, sname, clevel),
                             _blosc(cname, clevel, shuffle), ("blosc",)))
    # (Last: each file's pixels come from its place in specs().)
    rows += [("bzip2-1", dict(hdf5plugin.BZip2(blocksize=1)), ("bzip2",)),
             ("bzip2-9", dict(hdf5plugin.BZip2(blocksize=9)), ("bzip2",))]
    return rows


# Scale-offset (HDF5 filter 6): parload has no codec for it; its chunks
# go through libhdf5 and the stats say so, naming the filter.
SERIAL = [("scaleoffset", {"scaleoffset": 0})]
SERIAL_ID = 6
SERIAL_NAME = "HDF5 filter %d" % SERIAL_ID

# Chunk shapes, each without a filter, with gzip + shuffle and with
# bitshuffle + LZ4.
CHUNKS = {
    "frame": (1, H, W),
    "frames16": (16, H, W),      # last chunk 5 frames
    "band32": (1, 32, W),        # last band 6 rows
    "tile32": (1, 32, 32),       # partial tiles on the right and bottom
    "block5x32x48": (5, 32, 48),  # frames, rows and columns at once
}
CHUNK_FILTERS = {"plain": ({}, ()),
                 "gzip": (_gzip(4), ("shuffle", "deflate")),
                 "bslz4": (dict(hdf5plugin.Bitshuffle(cname="lz4")),
                           ("bitshuffle",))}
# Pixel types, each through these codecs.
TYPE_FILTERS = {"bslz4": CHUNK_FILTERS["bslz4"],
                "gzip": CHUNK_FILTERS["gzip"],
                "lz4": (dict(hdf5plugin.LZ4()), ("lz4",)),
                "zstd": (zstd(3), ("zstd",)),
                "blosc": (_blosc("lz4", 5, hdf5plugin.Blosc.BITSHUFFLE),
                          ("blosc",))}


def specs():
    """Every single-dataset file, by name."""
    out = {}
    for name, kw, codecs in codec_table():
        out["codec-" + name] = Spec("codec-" + name,
                                    kw=dict(kw, chunks=(1, H, W)),
                                    codecs=codecs)
    for cname, chunks in CHUNKS.items():
        for fname, (kw, codecs) in CHUNK_FILTERS.items():
            name = "chunks-%s-%s" % (cname, fname)
            out[name] = Spec(name, kw=dict(kw, chunks=chunks), codecs=codecs)
    for dt in DTYPES:
        for fname, (kw, codecs) in TYPE_FILTERS.items():
            name = "type-%s-%s" % (dt, fname)
            out[name] = Spec(name, dtype=dt, kw=dict(kw, chunks=(1, H, W)),
                             codecs=codecs)
    bs = CHUNK_FILTERS["bslz4"][0]
    gz = CHUNK_FILTERS["gzip"][0]
    # libver='latest': a fixed array index (fixed dims), an extensible
    # array (one unlimited dimension), a version-2 B-tree (two), a single
    # chunk; with filters and without.
    gzc, bsc = CHUNK_FILTERS["gzip"][1], CHUNK_FILTERS["bslz4"][1]
    latest = [
        ("latest-fixed-gzip", dict(gz, chunks=(1, H, W)), None, gzc),
        ("latest-fixed-bslz4", dict(bs, chunks=(1, H, W)), None, bsc),
        ("latest-fixed-tiles", dict(gz, chunks=(1, 32, 32)), None, gzc),
        ("latest-unlimited-bslz4", dict(bs, chunks=(1, H, W)),
         (None, H, W), bsc),
        ("latest-unlimited-plain", dict(chunks=(1, H, W)), (None, H, W),
         ()),
        ("latest-btree2-gzip", dict(gz, chunks=(1, 32, W)),
         (None, None, W), gzc),
        ("latest-single-gzip", dict(gz, chunks=(N, H, W)), None, gzc),
    ]
    for name, kw, maxshape, codecs in latest:
        out[name] = Spec(name, kw=kw, libver="latest", maxshape=maxshape,
                         codecs=codecs)
    for name, kw in SERIAL:
        out["codec-" + name] = Spec("codec-" + name,
                                    kw=dict(kw, chunks=(1, H, W)),
                                    serial=SERIAL_NAME)
    return out


def write_spec(spec, directory, seed):
    """Write one Spec's file; its path is set and returned."""
    spec.path = os.path.join(directory, spec.name + ".h5")
    data = pixels(spec.shape, spec.dtype, seed)
    if "direct" in spec.kw:
        return write_direct(spec, data)
    with h5py.File(spec.path, "w", libver=spec.libver) as f:
        f.create_dataset(spec.dataset, data=data, dtype=spec.dtype,
                         maxshape=spec.maxshape, **spec.kw)
    return spec.path


def write_direct(spec, data):
    """A filter h5py cannot apply here (Zstd): the dataset made with the
    filter in its pipeline (optional), each frame's chunk compressed here
    and stored as it is, then read back raw and decoded to check it."""
    fid, cd, level = spec.kw["direct"]
    chunks = spec.kw.get("chunks", (1,) + spec.shape[1:])
    assert chunks == (1,) + tuple(spec.shape[1:]), "frame chunks only"
    spec.data = data
    with h5py.File(spec.path, "w", libver=spec.libver) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk(chunks)
        dcpl.set_filter(fid, h5py.h5z.FLAG_OPTIONAL, cd)
        space = h5py.h5s.create_simple(data.shape)
        tid = h5py.h5t.py_create(data.dtype)
        d = h5py.Dataset(h5py.h5d.create(f.id, spec.dataset.encode()[1:],
                                         tid, space, dcpl=dcpl))
        for i, frame in enumerate(data):
            d.id.write_direct_chunk((i, 0, 0),
                                    zstd_encode(frame.tobytes(), level), 0)
    with h5py.File(spec.path, "r") as f:
        d = f[spec.dataset]
        for i, frame in enumerate(data):
            assert zstd_decode(d.id.read_direct_chunk((i, 0, 0))[1]) == \
                frame.tobytes()
    return spec.path


def write_implicit(directory, seed):
    """libver='latest', fixed dims, no filter, space allocated early: the
    implicit chunk index (h5py's high level cannot ask for it)."""
    spec = Spec("latest-implicit", libver="latest", codecs=())
    spec.path = os.path.join(directory, spec.name + ".h5")
    data = pixels(spec.shape, spec.dtype, seed)
    with h5py.File(spec.path, "w", libver="latest") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((1, H, W))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        space = h5py.h5s.create_simple(data.shape)
        dsid = h5py.h5d.create(f.id, spec.dataset.encode()[1:],
                               h5py.h5t.NATIVE_UINT16, space, dcpl=dcpl)
        h5py.Dataset(dsid)[...] = data
    return spec


def write_swmr(directory, seed, kw=None, codecs=("bitshuffle",)):
    """A file written as a detector's SWMR writer does: libver='latest',
    an unlimited first dimension, swmr_mode on, then frames appended in
    runs with a flush after each."""
    spec = Spec("swmr-bslz4", libver="latest", maxshape=(None, H, W),
                codecs=codecs)
    spec.path = os.path.join(directory, spec.name + ".h5")
    data = pixels(spec.shape, spec.dtype, seed)
    kw = kw if kw is not None else dict(hdf5plugin.Bitshuffle(cname="lz4"))
    with h5py.File(spec.path, "w", libver="latest") as f:
        d = f.create_dataset(spec.dataset, shape=(0, H, W), dtype="u2",
                             maxshape=(None, H, W), chunks=(1, H, W), **kw)
        f.swmr_mode = True
        for first in range(0, N, 6):
            last = min(N, first + 6)
            d.resize(last, axis=0)
            d[first:last] = data[first:last]
            d.flush()
    return spec


# ---------------------------------------------------------------------------
# Eiger master files (NeXus NXmx as DECTRIS writes them: NAME_master.h5 with
# /entry/data/data_000001, ... external links to NAME_data_000001.h5's
# /entry/data/data, each holding a run of frames, image_nr_low and
# image_nr_high their 1-based frame numbers).

EIGER_FILES, EIGER_FRAMES = 4, 25


@dataclass
class Master:
    path: str
    data_files: list
    frames: np.ndarray  # every frame, in link order
    dataset: str = "/entry/data/data"
    omega: object = None  # the goniometer's angles, degrees


def nx(group, cls):
    group.attrs["NX_class"] = cls
    return group


def write_eiger(directory, name="eiger", files=EIGER_FILES,
                frames=EIGER_FRAMES, shape=(H, W), dtype="u2", seed=7,
                kw=None):
    """An Eiger master file and its data files (bitshuffle + LZ4, one
    frame a chunk, unless kw says otherwise)."""
    kw = kw if kw is not None else dict(hdf5plugin.Bitshuffle(cname="lz4"))
    data = pixels((files * frames,) + tuple(shape), dtype, seed)
    paths = []
    for i in range(files):
        base = "%s_data_%06d.h5" % (name, i + 1)
        paths.append(os.path.join(directory, base))
        with h5py.File(paths[-1], "w") as f:
            d = nx(nx(f.create_group("entry"), "NXentry").create_group(
                "data"), "NXdata").create_dataset(
                    "data", data=data[i * frames:(i + 1) * frames],
                    chunks=(1,) + tuple(shape), **kw)
            d.attrs["image_nr_low"] = np.int32(i * frames + 1)
            d.attrs["image_nr_high"] = np.int32((i + 1) * frames)
    master = os.path.join(directory, "%s_master.h5" % name)
    omega = np.arange(files * frames, dtype="f8") * 0.1
    with h5py.File(master, "w") as f:
        entry = nx(f.create_group("entry"), "NXentry")
        entry.attrs["default"] = "data"
        g = nx(entry.create_group("data"), "NXdata")
        for i, p in enumerate(paths):
            g["data_%06d" % (i + 1)] = h5py.ExternalLink(
                os.path.basename(p), "/entry/data/data")
        det = nx(nx(entry.create_group("instrument"), "NXinstrument")
                 .create_group("detector"), "NXdetector")
        det["x_pixel_size"] = 75e-6
        det["y_pixel_size"] = 75e-6
        spec = nx(det.create_group("detectorSpecific"), "NXcollection")
        spec["nimages"] = np.int64(files * frames)
        spec["ntrigger"] = np.int64(1)
        gon = nx(nx(entry.create_group("sample"), "NXsample")
                 .create_group("goniometer"), "NXtransformations")
        gon["omega"] = omega
        gon["omega"].attrs["units"] = "degree"
    return Master(master, paths, data, omega=omega)


def write_one_file_of(master, directory, name="eiger_one"):
    """The same frames as a master file's, in one file (one dataset,
    bitshuffle + LZ4, one frame a chunk): what a master file's load is
    compared with."""
    path = os.path.join(directory, name + ".h5")
    with h5py.File(path, "w") as f:
        f.create_dataset(master.dataset, data=master.frames,
                         chunks=(1,) + master.frames.shape[1:],
                         **hdf5plugin.Bitshuffle(cname="lz4"))
    return path


# ---------------------------------------------------------------------------
# Virtual datasets.

@dataclass
class Virtual:
    path: str
    sources: list
    frames: np.ndarray
    dataset: str = DATASET


def write_vds(directory, name="vds", counts=(12, 15, 10), seed=11,
              strided=False, mixed=False):
    """A virtual dataset stitching len(counts) source files (bitshuffle +
    LZ4, as one detector writes them; mixed: bitshuffle + LZ4, gzip +
    shuffle, none, in turn, which parload reads through libhdf5) along
    the frames; strided: the sources' frames interleaved (frame i from
    source i % k), a mapping parload reads through libhdf5."""
    kws = ([dict(hdf5plugin.Bitshuffle(cname="lz4")), _gzip(4), {}]
           if mixed else [dict(hdf5plugin.Bitshuffle(cname="lz4"))])
    total = sum(counts)
    data = pixels((total, H, W), "u2", seed)
    if strided:
        counts = [len(range(k, total, len(counts)))
                  for k in range(len(counts))]
    layout = h5py.VirtualLayout(shape=(total, H, W), dtype="u2")
    sources, first = [], 0
    for k, count in enumerate(counts):
        p = os.path.join(directory, "%s_src%d.h5" % (name, k + 1))
        sel = (slice(k, total, len(counts)) if strided
               else slice(first, first + count))
        with h5py.File(p, "w") as f:
            f.create_dataset("data", data=data[sel], chunks=(1, H, W),
                             **kws[k % len(kws)])
        layout[sel] = h5py.VirtualSource(os.path.basename(p), "data",
                                         shape=(count, H, W))
        sources.append(p)
        first += count
    path = os.path.join(directory, name + ".h5")
    with h5py.File(path, "w", libver="latest") as f:
        f.create_virtual_dataset(DATASET, layout, fillvalue=0)
    return Virtual(path, sources, data)


def write_vds_mismatch(directory, name="vds-mismatch"):
    """A virtual dataset whose second source is int32 where the layout
    says uint16 (libhdf5 converts; parload must refuse or convert, never
    read its bytes as uint16)."""
    layout = h5py.VirtualLayout(shape=(20, H, W), dtype="u2")
    for k, dt in enumerate(("u2", "i4")):
        p = os.path.join(directory, "%s_src%d.h5" % (name, k + 1))
        with h5py.File(p, "w") as f:
            f.create_dataset("data", data=pixels((10, H, W), dt, k),
                             chunks=(1, H, W))
        layout[k * 10:(k + 1) * 10] = h5py.VirtualSource(
            os.path.basename(p), "data", shape=(10, H, W), dtype=dt)
    path = os.path.join(directory, name + ".h5")
    with h5py.File(path, "w", libver="latest") as f:
        f.create_virtual_dataset(DATASET, layout, fillvalue=0)
    return path


# ---------------------------------------------------------------------------
# A tomography file with its references (DXchange), bitshuffle + LZ4.

@dataclass
class Tomo:
    path: str
    proj: np.ndarray
    flats: np.ndarray
    darks: np.ndarray


def write_dxchange(directory, name="dxchange-bslz4", seed=5):
    darks, flats, proj = references((N, H, W), seed)
    path = os.path.join(directory, name + ".h5")
    bs = dict(hdf5plugin.Bitshuffle(cname="lz4"))
    with h5py.File(path, "w") as f:
        f.attrs["implements"] = "exchange:measurement:process"
        ex = f.create_group("exchange")
        for key, a in (("data", proj), ("data_white", flats),
                       ("data_dark", darks)):
            ex.create_dataset(key, data=a, chunks=(1, H, W), **bs)
        ex["theta"] = np.linspace(0, 180, N, endpoint=False)
    return Tomo(path, proj, flats, darks)


def write_diamond_nxtomo(directory, name="diamond-nxtomo", seed=6):
    """NXtomo as Diamond writes it: a sub-entry /entry1/tomo_entry
    (NXsubentry, definition NXtomo) whose data/data holds darks, flats
    and projections in one bitshuffle + LZ4 dataset, told apart by
    instrument/detector/image_key (2, 1, 0), with sample/rotation_angle
    in degrees."""
    darks, flats, proj = references((N, H, W), seed)
    frames = np.concatenate([darks, flats, proj])
    key = np.array([2] * len(darks) + [1] * len(flats) + [0] * N, "i4")
    theta = np.linspace(0, 180, N, endpoint=False)
    angles = np.concatenate([np.zeros(len(darks) + len(flats)), theta])
    path = os.path.join(directory, name + ".nxs")
    with h5py.File(path, "w") as f:
        e = nx(f.create_group("entry1"), "NXentry")
        t = nx(e.create_group("tomo_entry"), "NXsubentry")
        t["definition"] = "NXtomo"
        nx(t.create_group("data"), "NXdata").create_dataset(
            "data", data=frames, chunks=(1, H, W),
            **hdf5plugin.Bitshuffle(cname="lz4"))
        det = nx(nx(t.create_group("instrument"), "NXinstrument")
                 .create_group("detector"), "NXdetector")
        det["image_key"] = key
        det["data"] = h5py.SoftLink("/entry1/tomo_entry/data/data")
        s = nx(t.create_group("sample"), "NXsample")
        s["rotation_angle"] = angles
        s["rotation_angle"].attrs["units"] = "degree"
    return Tomo(path, proj, flats, darks), theta


# ---------------------------------------------------------------------------
# Everything at once, for the session fixture.

@dataclass
class Fixtures:
    directory: str
    files: dict           # name -> Spec, every single-dataset file
    master: Master = None
    master_one: str = ""  # the master's frames in one file
    vds: Virtual = None
    vds_strided: Virtual = None
    vds_mismatch: str = ""
    tomo: Tomo = None
    diamond: Tomo = None
    diamond_theta: np.ndarray = None

    def read(self, name):
        """h5py's read of a file's dataset: the reference (the array
        written, checked against numcodecs' decode of every chunk, where
        h5py has no plugin for its filter: Zstd)."""
        s = self.files[name]
        if s.data is not None:
            return s.data
        with h5py.File(s.path, "r") as f:
            return f[s.dataset][...]


def write_all(directory):
    """Every fixture into directory (a few MB in all)."""
    files = specs()
    for seed, s in enumerate(files.values()):
        write_spec(s, directory, seed)
    for extra in (write_implicit(directory, 101), write_swmr(directory, 102)):
        files[extra.name] = extra
    fx = Fixtures(directory, files)
    fx.master = write_eiger(directory)
    fx.master_one = write_one_file_of(fx.master, directory)
    fx.vds = write_vds(directory)
    fx.vds_strided = write_vds(directory, "vds-strided", strided=True,
                               mixed=True)
    fx.vds_mixed = write_vds(directory, "vds-mixed", mixed=True)
    fx.vds_mismatch = write_vds_mismatch(directory)
    fx.tomo = write_dxchange(directory)
    fx.diamond, fx.diamond_theta = write_diamond_nxtomo(directory)
    return fx


# ---------------------------------------------------------------------------
# Damage: a chunk's stored bytes replaced, through h5py's direct chunk I/O
# (the filter mask kept), so that the file is otherwise intact.

def read_chunk(path, index, dataset=DATASET):
    """(filter mask, stored bytes) of the chunk at offset index."""
    with h5py.File(path, "r") as f:
        return f[dataset].id.read_direct_chunk(index)


def write_chunk(path, index, data, mask=0, dataset=DATASET):
    with h5py.File(path, "r+") as f:
        f[dataset].id.write_direct_chunk(index, bytes(data), mask)


def chunk_offset(path, index, dataset=DATASET):
    """The chunk's byte offset in the file (libhdf5's chunk info)."""
    with h5py.File(path, "r") as f:
        return f[dataset].id.get_chunk_info_by_coord(index).byte_offset
