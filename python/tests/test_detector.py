"""Detector data as detectors write it (detector_fixtures.py: h5py with
Debian's python3-hdf5plugin and hdf5-filter-plugin), loaded by parload and
compared with h5py's read of the same files: every codec the pool decodes
(bitshuffle + LZ4, bitshuffle alone, LZ4, Blosc with three compressors and
three shuffles, Zstd, LZF, BZip2, Fletcher32, deflate with and without
shuffle) at two settings, scale-offset (no codec: the serial path, which
names it), every
pixel type, chunks of one frame, of 16, row bands, tiles and blocks with
partial edge chunks, libver='latest' indexes, SWMR, Eiger master files,
lists of files and virtual datasets; whole loads, selections, sinograms,
batches, corrections, the command, Dask and MPI on 1 and 3 threads; and
the errors of damaged chunks, each naming the file, the chunk and its
byte offset."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import parload
from conftest import run_cli
from test_correct import check, corrected

h5py = pytest.importorskip("h5py")
pytest.importorskip("hdf5plugin")
pytest.importorskip("numcodecs")
import detector_fixtures as dfx  # noqa: E402  (needs h5py, hdf5plugin)

MISSING = dfx.missing_plugins()
if MISSING:
    pytest.skip("h5py has no plugin for HDF5 filter%s %s (Debian: "
                "hdf5-filter-plugin, hdf5-filter-plugin-blosc-serial, "
                "bitshuffle)" % ("s" if len(MISSING) > 1 else "",
                                 ", ".join(map(str, MISSING))),
                allow_module_level=True)

THREADS = [1, 3]
SPECS = dfx.specs()
NAMES = sorted(SPECS) + ["latest-implicit", "swmr-bslz4"]


@pytest.fixture(scope="session")
def fx(tmp_path_factory):
    """Every fixture, written once for the session."""
    return dfx.write_all(str(tmp_path_factory.mktemp("detector")))


def nchunks(shape, chunks):
    return int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


def chunks_of(path, dataset=dfx.DATASET):
    """(chunks of the dataset, chunks across one frame)."""
    with h5py.File(path, "r") as f:
        d = f[dataset]
        if not d.chunks:
            return 0, 0
        return nchunks(d.shape, d.chunks), nchunks(d.shape[1:],
                                                   d.chunks[1:])


def check_stats(spec, ds, chunks, threads):
    """Nothing went serial and spec's pipeline decoded every chunk once (a
    chunk of several frames once, not once a frame): as many decodes as
    chunks, and at most one more of each chunk a cut between two
    workers' shares crosses (the chunks across one frame, at each of
    threads - 1 cuts).  A file with a filter parload has no codec for
    went serial, saying which, through libhdf5.  chunks: chunks_of()."""
    st = ds.stats
    if spec.serial:
        assert st["serial"] and spec.serial in st["serial"], st
        assert st["codec"] == "libhdf5", st
        return
    assert st["serial"] is None, st["serial"]
    if spec.codecs:
        total, across = chunks
        assert st["codec"] == "+".join(spec.codecs), st
        assert total <= st["strips_decoded"] <= \
            total + (threads - 1) * across, (total, across, st)


# ---------------------------------------------------------------------------
# Every file, whole.

def test_fixtures_are_what_they_say(fx):
    """The fixtures themselves: each dataset has the chunks, filters and
    index it is named for (checked with h5py, so that a test below that
    passes does so on the file it claims)."""
    ids = {"deflate": 1, "shuffle": 2, "fletcher32": 3, "lzf": 32000,
           "blosc": 32001, "lz4": 32004, "bitshuffle": 32008,
           "zstd": 32015, "bzip2": 307}
    for name, s in fx.files.items():
        with h5py.File(s.path, "r") as f:
            d = f[s.dataset]
            plist = d.id.get_create_plist()
            have = {plist.get_filter(i)[0]
                    for i in range(plist.get_nfilters())}
            assert d.shape == s.shape and d.dtype == np.dtype(s.dtype)
            chunks = d.chunks
        want = {dfx.SERIAL_ID} if s.serial else {ids[c] for c in s.codecs}
        assert have == want, (name, have, want)
        if name.startswith("chunks-"):
            assert tuple(chunks) == dfx.CHUNKS[name.split("-")[1]]
    with h5py.File(fx.files["swmr-bslz4"].path, "r") as f:
        assert f["data"].maxshape[0] is None
    with h5py.File(fx.files["latest-btree2-gzip"].path, "r") as f:
        assert f["data"].maxshape[:2] == (None, None)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("name", NAMES)
def test_whole_load_equals_h5py(fx, name, threads):
    spec = fx.files[name]
    want = fx.read(name)
    ds = parload.load(spec.path, threads=threads)
    assert ds.pixels.dtype == want.dtype
    assert np.array_equal(ds.pixels, want)
    check_stats(spec, ds, chunks_of(spec.path, spec.dataset), threads)


# Selections: views with a step, a band of rows, columns, all at once and
# as sinograms, on the files whose chunks a selection cuts in every way.
SELECTIONS = [
    {"views": slice(2, 35, 3)},
    {"rows": (5, 67)},
    {"cols": (3, 97)},
    {"views": slice(1, 36, 2), "rows": (30, 40), "cols": (31, 70)},
    {"rows": (20, 52), "layout": "sinograms"},
    {"views": slice(0, 37, 4), "rows": (0, 70), "cols": (33, 64),
     "layout": "sinograms"},
]


def sel_id(sel):
    """A selection's test id: views=2:35:3,rows=5:67,sinograms."""
    out = []
    for k, v in sel.items():
        if isinstance(v, slice):
            v = "%s:%s:%s" % (v.start, v.stop, v.step)
        elif isinstance(v, tuple):
            v = "%d:%d" % v
        out.append(v if k == "layout" else "%s=%s" % (k, v))
    return ",".join(out) or "whole"


SELECTED = sorted(n for n in NAMES if n.startswith(("chunks-", "latest-")))
SELECTED += ["codec-bslz4", "codec-bitshuffle-none", "codec-lz4-block4096",
             "codec-blosc-zstd-bitshuffle-9", "codec-zstd19", "codec-lzf",
             "codec-gzip-fletcher32", "codec-bzip2-9", "codec-scaleoffset",
             "swmr-bslz4",
             "type-f8-bslz4", "type-i2-blosc"]


def expected(a, sel):
    v = sel.get("views", slice(None))
    r = slice(*sel.get("rows", (None, None)))
    c = slice(*sel.get("cols", (None, None)))
    out = a[v, r, c]
    if sel.get("layout") == "sinograms":
        out = np.ascontiguousarray(out.transpose(1, 0, 2))
    return out


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("sel", SELECTIONS, ids=sel_id)
@pytest.mark.parametrize("name", SELECTED)
def test_selection_equals_h5py(fx, name, sel, threads):
    spec = fx.files[name]
    ds = parload.load(spec.path, threads=threads, **sel)
    assert np.array_equal(ds.pixels, expected(fx.read(name), sel))
    if spec.serial:
        assert spec.serial in (ds.stats["serial"] or "")
    else:
        assert ds.stats["serial"] is None, ds.stats["serial"]


def test_a_selection_decodes_only_its_chunks(fx):
    """Every 4th frame of a file of 16-frame chunks decodes each chunk it
    touches once; a band of rows of a row-band file only its bands."""
    spec = fx.files["chunks-frames16-bslz4"]
    ds = parload.load(spec.path, views=slice(0, 37, 4), threads=1)
    assert ds.stats["strips_decoded"] == 3
    spec = fx.files["chunks-band32-gzip"]
    ds = parload.load(spec.path, rows=(40, 60), threads=1)
    assert ds.stats["strips_decoded"] == dfx.N  # band 32:64 of each frame
    spec = fx.files["chunks-tile32-bslz4"]
    ds = parload.load(spec.path, views=slice(0, 10), rows=(40, 60),
                      cols=(40, 60), threads=1)
    assert ds.stats["strips_decoded"] == 10  # tile (32:64, 32:64)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("name", ["chunks-frame-bslz4",
                                  "chunks-frames16-gzip",
                                  "chunks-tile32-bslz4", "codec-lz4",
                                  "codec-zstd1"])
def test_batches_and_windows(fx, name, threads):
    spec = fx.files[name]
    want = fx.read(name)
    for kw in ({"batch_views": 5}, {"window": 64 << 10}):
        starts = []
        with parload.stream(spec.path, threads=threads, views=(3, 33),
                            rows=(10, 60), copy=True, **kw) as s:
            for b in s:
                v = slice(b.views.start, b.views.stop)
                assert np.array_equal(b.pixels, want[v, 10:60])
                starts.append(b.views.start)
            assert s.stats["serial"] is None
        assert starts[0] == 3 and len(starts) > 1


# ---------------------------------------------------------------------------
# Corrections.

@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("sel", [{}, {"rows": (20, 52),
                                      "layout": "sinograms"}], ids=sel_id)
def test_corrected_from_given_arrays(fx, sel, threads):
    """-log((p - d) / (f - d)) in float32 of a bitshuffle + LZ4 file,
    flats and darks given as arrays (their means per pixel)."""
    tomo = fx.tomo
    ds = parload.load(tomo.path, dataset="/exchange/data", flats=tomo.flats,
                      darks=tomo.darks, minus_log=True, threads=threads,
                      **sel)
    d = tomo.darks.astype(np.float64).mean(axis=0)
    f = tomo.flats.astype(np.float64).mean(axis=0)
    want = corrected(tomo.proj, d, f, True)
    check(ds.pixels, expected(want, sel))
    assert ds.stats["serial"] is None


@pytest.mark.parametrize("threads", THREADS)
def test_corrected_from_the_files_own_references(fx, threads):
    """flats="same", darks="same": DXchange's data_white and data_dark,
    bitshuffle + LZ4 like the projections."""
    tomo = fx.tomo
    ds = parload.load(tomo.path, flats="same", darks="same", minus_log=True,
                      threads=threads, views=slice(0, 37, 2))
    want = corrected(tomo.proj, tomo.darks.astype(np.float64).mean(axis=0),
                     tomo.flats.astype(np.float64).mean(axis=0), True)
    check(ds.pixels, want[::2])
    assert np.allclose(ds.angles, np.linspace(0, 180, dfx.N,
                                              endpoint=False)[::2])
    assert ds.stats["serial"] is None


def test_corrected_without_log(fx):
    tomo = fx.tomo
    ds = parload.load(tomo.path, flats="same", darks="same", threads=3)
    check(ds.pixels, corrected(tomo.proj,
                               tomo.darks.astype(np.float64).mean(axis=0),
                               tomo.flats.astype(np.float64).mean(axis=0),
                               False))


@pytest.mark.parametrize("threads", THREADS)
def test_nxtomo_sub_entry_as_diamond_writes_it(fx, threads):
    """/entry1/tomo_entry: projections, flats and darks by image_key,
    the angles of the projections, and flats="same" from the sub-entry."""
    t, theta = fx.diamond, fx.diamond_theta
    ds = parload.load(t.path, threads=threads)
    assert np.array_equal(ds.pixels, t.proj)
    assert np.allclose(ds.angles, theta.astype(np.float32))
    for frames, want in (("flats", t.flats), ("darks", t.darks)):
        got = parload.load(t.path, frames=frames, threads=threads).pixels
        assert np.array_equal(got, want)
    ds = parload.load(t.path, flats="same", darks="same", minus_log=True,
                      rows=(20, 52), layout="sinograms", threads=threads)
    want = corrected(t.proj, t.darks.astype(np.float64).mean(axis=0),
                     t.flats.astype(np.float64).mean(axis=0), True)
    check(ds.pixels, expected(want, {"rows": (20, 52),
                                     "layout": "sinograms"}))
    assert ds.stats["serial"] is None


# ---------------------------------------------------------------------------
# Eiger master files, lists of files, virtual datasets.

@pytest.mark.parametrize("threads", THREADS)
def test_master_file_is_one_stream(fx, threads):
    m = fx.master
    ds = parload.load(m.path, threads=threads)
    assert ds.pixels.shape == (dfx.EIGER_FILES * dfx.EIGER_FRAMES, dfx.H,
                               dfx.W)
    assert np.array_equal(ds.pixels, m.frames)
    assert ds.stats["serial"] is None
    check_stats(dfx.Spec("master", codecs=("bitshuffle",)), ds,
                (len(m.frames), 1), threads)
    assert parload.describe(m.path)["count"] == len(m.frames)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("sel", SELECTIONS[:2] + SELECTIONS[4:], ids=sel_id)
def test_master_file_selections(fx, sel, threads):
    """Views that cross from one data file to the next, rows, sinograms."""
    m = fx.master
    ds = parload.load(m.path, threads=threads, **sel)
    assert np.array_equal(ds.pixels, expected(m.frames, sel))
    ds = parload.load(m.path, threads=threads, views=slice(20, 60))
    assert np.array_equal(ds.pixels, m.frames[20:60])


def test_master_file_angles(fx):
    """NXmx's goniometer omega (degrees) comes with the frames."""
    m = fx.master
    ds = parload.load(m.path, views=slice(3, 97, 5))
    assert np.allclose(ds.angles, m.omega[3:97:5].astype(np.float32))


def test_master_file_one_link_by_name(fx):
    m = fx.master
    ds = parload.load(m.path, dataset="/entry/data/data_000002", threads=2)
    f = dfx.EIGER_FRAMES
    assert np.array_equal(ds.pixels, m.frames[f:2 * f])


def test_master_file_equals_h5py_through_its_links(fx):
    """The reference read the way a user reads a master file with h5py."""
    m = fx.master
    with h5py.File(m.path, "r") as f:
        g = f["/entry/data"]
        want = np.concatenate([g[k][...] for k in sorted(g)])
    assert np.array_equal(parload.load(m.path).pixels, want)


def copy_master(fx, tmp_path):
    m = fx.master
    for p in [m.path] + m.data_files:
        shutil.copy(p, tmp_path)
    return str(tmp_path / os.path.basename(m.path)), \
        [str(tmp_path / os.path.basename(p)) for p in m.data_files]


def test_master_file_with_a_missing_data_file(fx, tmp_path):
    master, data = copy_master(fx, tmp_path)
    os.remove(data[2])
    with pytest.raises(parload.Error) as e:
        parload.load(master)
    msg = str(e.value)
    assert "data_000003" in msg and os.path.basename(data[2]) in msg, msg


def test_master_file_whose_link_loops(fx, tmp_path):
    master, _ = copy_master(fx, tmp_path)
    with h5py.File(master, "r+") as f:
        del f["/entry/data/data_000002"]
        f["/entry/data/data_000002"] = h5py.ExternalLink(
            os.path.basename(master), "/entry/data/data_000002")
    with pytest.raises(parload.Error) as e:
        parload.load(master)
    assert "data_000002" in str(e.value), str(e.value)


@pytest.mark.parametrize("threads", THREADS)
def test_list_of_data_files_is_one_stream(fx, threads):
    m = fx.master
    ds = parload.load(m.data_files, threads=threads, views=slice(10, 90, 3))
    assert np.array_equal(ds.pixels, m.frames[10:90:3])
    assert ds.stats["serial"] is None


@pytest.mark.parametrize("threads", THREADS)
def test_virtual_dataset(fx, threads):
    v = fx.vds
    with h5py.File(v.path, "r") as f:
        want = f[v.dataset][...]
    assert np.array_equal(want, v.frames)
    ds = parload.load(v.path, threads=threads)
    assert np.array_equal(ds.pixels, want)
    assert ds.stats["serial"] is None
    ds = parload.load(v.path, threads=threads, views=slice(5, 35, 2),
                      rows=(20, 52), layout="sinograms")
    assert np.array_equal(ds.pixels, expected(want, {
        "views": slice(5, 35, 2), "rows": (20, 52), "layout": "sinograms"}))


def test_virtual_dataset_of_sources_stored_otherwise(fx):
    # One table has one filter pipeline: sources compressed otherwise than
    # one another are read through libhdf5, saying so.
    v = fx.vds_mixed
    with h5py.File(v.path, "r") as f:
        want = f[v.dataset][...]
    ds = parload.load(v.path, threads=3)
    assert np.array_equal(ds.pixels, want)
    assert ds.stats["serial"] and "virtual" in ds.stats["serial"], ds.stats
    assert ds.stats["codec"] == "libhdf5"


def test_strided_virtual_dataset_goes_through_libhdf5(fx):
    v = fx.vds_strided
    with h5py.File(v.path, "r") as f:
        want = f[v.dataset][...]
    ds = parload.load(v.path, threads=3)
    assert np.array_equal(ds.pixels, want)
    assert ds.stats["serial"] and "virtual" in ds.stats["serial"], ds.stats


def test_virtual_dataset_source_of_another_type(fx):
    with pytest.raises(parload.Error) as e:
        parload.load(fx.vds_mismatch)
    assert "vds-mismatch_src2.h5" in str(e.value), str(e.value)


# ---------------------------------------------------------------------------
# Damaged chunks: each a parload.Error naming the file, the chunk and its
# byte offset.  h5py's read of the same damage fails too where the
# filter's own checks catch it (the reference agrees that it is damage).

CHUNK = (5, 0, 0)


def damaged(fx, tmp_path, name, change, chunk=CHUNK):
    """A copy of fixture name with the stored bytes of the chunk at chunk
    replaced by change(bytes); (path, the chunk's byte offset)."""
    src = fx.files[name].path
    path = str(tmp_path / (name + "-damaged.h5"))
    shutil.copy(src, path)
    mask, stored = dfx.read_chunk(path, chunk)
    dfx.write_chunk(path, chunk, change(bytearray(stored)), mask)
    return path, dfx.chunk_offset(path, chunk)


# Each damaged file is read in a child process: a decoder that crashes on
# it (the Debian bitshuffle plugin does, on a truncated chunk of 16
# frames, in h5py as in libhdf5's path of parload today) fails its test,
# not the whole run.
CHILD = """
import json, sys
try:
    if sys.argv[1] == "parload":
        import parload
        parload.load(sys.argv[2], threads=2)
    else:
        import h5py, hdf5plugin
        with h5py.File(sys.argv[2], "r") as f:
            f[%r][...]
    print(json.dumps({"error": None}))
except Exception as e:
    print(json.dumps({"error": "%%s: %%s" %% (type(e).__name__, e)}))
""" % dfx.DATASET


def read_in_child(reader, path):
    """(exit status, the error the read raised or None)."""
    r = subprocess.run([sys.executable, "-c", CHILD, reader, path],
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    return r.returncode, json.loads(lines[-1])["error"] if lines else None


def refused(path, offset, h5py_too=True):
    """parload's load of path raises parload.Error naming the file, the
    chunk and its byte offset; h5py_too: h5py's read fails too (an error,
    or a crash of its plugin)."""
    rc, err = read_in_child("parload", path)
    assert rc == 0, "parload's load crashed (status %d)" % rc
    assert err and err.startswith("Error: "), err
    assert path in err and "chunk" in err and str(offset) in err, err
    if h5py_too:
        rc, h5err = read_in_child("h5py", path)
        assert rc != 0 or h5err, "h5py reads the damaged file"
    return err


@pytest.mark.parametrize("name", ["codec-bslz4", "codec-lz4",
                                  "codec-blosc-lz4-shuffle-1",
                                  "codec-blosc-zstd-bitshuffle-9",
                                  "codec-zstd1", "codec-gzip1-shuffle",
                                  "codec-lzf", "chunks-frames16-bslz4"])
def test_truncated_chunk(fx, tmp_path, name):
    chunk = (16, 0, 0) if "frames16" in name else CHUNK
    path, off = damaged(fx, tmp_path, name, lambda b: b[:len(b) // 2],
                        chunk)
    # h5py's own failure is no reference for Zstd (no plugin) nor for
    # Blosc: its plugin hands Blosc 1 the chunk without its stored size,
    # and Blosc reads the header's count of bytes past a truncated chunk,
    # without an error for some frames.
    refused(path, off, h5py_too="zstd1" not in name and "blosc" not in name)


def be(b, at, n, value):
    b[at:at + n] = value.to_bytes(n, "big")
    return b


def le(b, at, n, value):
    b[at:at + n] = value.to_bytes(n, "little")
    return b


def test_lz4_header_says_more_bytes_than_the_chunk(fx, tmp_path):
    """The LZ4 filter's framing: 8 bytes of the decoded size, big-endian,
    then the block size, then each block's stored size."""
    size = dfx.H * dfx.W * 2
    path, off = damaged(fx, tmp_path, "codec-lz4",
                        lambda b: be(b, 0, 8, 2 * size))
    refused(path, off, h5py_too=False)


def test_lz4_block_larger_than_what_is_stored(fx, tmp_path):
    path, off = damaged(fx, tmp_path, "codec-lz4-block4096",
                        lambda b: be(b, 12, 4, len(b)))
    refused(path, off, h5py_too=False)


def test_bitshuffle_block_size_not_a_multiple_of_8(fx, tmp_path):
    """Bitshuffle's header: the decoded size (8 bytes, big-endian), then
    the block size in bytes (4): 12 elements of 2 bytes."""
    path, off = damaged(fx, tmp_path, "codec-bslz4",
                        lambda b: be(b, 8, 4, 12 * 2))
    msg = refused(path, off)
    assert "8" in msg


@pytest.mark.parametrize("field,at", [("nbytes", 4), ("cbytes", 12)])
def test_blosc_header_that_lies(fx, tmp_path, field, at):
    """Blosc 1's 16-byte header: nbytes (decoded) at 4 and cbytes (the
    buffer's size) at 12, little-endian: each doubled."""
    def lie(b):
        return le(b, at, 4, 2 * int.from_bytes(b[at:at + 4], "little"))
    path, off = damaged(fx, tmp_path, "codec-blosc-lz4-shuffle-1", lie)
    refused(path, off, h5py_too=False)


@pytest.mark.parametrize("name,where", [("codec-fletcher32", 100),
                                        ("codec-gzip-fletcher32", -2)])
def test_fletcher32_mismatch(fx, tmp_path, name, where):
    """A byte of the data (Fletcher32 alone) or of the checksum (after
    gzip + shuffle) changed."""
    def flip(b):
        b[where] ^= 0x5A
        return b
    path, off = damaged(fx, tmp_path, name, flip)
    msg = refused(path, off)
    assert re.search("fletcher|checksum", msg, re.I), msg


# ---------------------------------------------------------------------------
# The command.

def test_command_loads_a_master_file(fx, parload_bin):
    m = fx.master
    r = run_cli(parload_bin, "--threads", "2", m.path)
    assert r.returncode == 0, r.stderr
    assert "%d views %dx%d u16" % (len(m.frames), dfx.W, dfx.H) in r.stdout
    assert "serial" not in r.stdout, r.stdout
    assert "%d chunks decoded (bitshuffle)" % len(m.frames) in r.stdout


def test_command_json_names_the_codec(fx, parload_bin):
    spec = fx.files["codec-bslz4"]
    r = run_cli(parload_bin, "--json", "--threads", "2", spec.path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.splitlines()[-1])
    assert d["serial"] is None and d["strips_decoded"] == dfx.N
    assert d["codec"] == "bitshuffle", d


def test_command_names_the_serial_filter(fx, parload_bin):
    r = run_cli(parload_bin, "--threads", "2",
                fx.files["codec-scaleoffset"].path)
    assert r.returncode == 0, r.stderr
    assert "serial" in r.stdout and dfx.SERIAL_NAME in r.stdout, r.stdout
    assert "(libhdf5)" in r.stdout, r.stdout


def test_command_extracts_a_master_file(fx, parload_bin, tmp_path):
    out = tmp_path / "all.npy"
    r = run_cli(parload_bin, "extract", "--threads", "2", "--views", "5:95",
                "-o", out, fx.master.path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), fx.master.frames[5:95])


def test_command_missing_data_file(fx, parload_bin, tmp_path):
    master, data = copy_master(fx, tmp_path)
    os.remove(data[0])
    r = run_cli(parload_bin, master)
    assert r.returncode != 0
    assert "data_000001" in r.stderr and os.path.basename(data[0]) in \
        r.stderr, r.stderr


# ---------------------------------------------------------------------------
# Dask and MPI.

@pytest.mark.parametrize("which", ["bslz4", "master"])
def test_dask(fx, which):
    pytest.importorskip("dask.array")
    import parload.dask
    if which == "master":
        path, want = fx.master.path, fx.master.frames
    else:
        path, want = fx.files["codec-bslz4"].path, fx.read("codec-bslz4")
    arr = parload.dask.from_file(path, chunks=(8, 40, -1), threads=2)
    assert arr.shape == want.shape and arr.dtype == want.dtype
    assert np.array_equal(arr.compute(scheduler="threads"), want)
    sino = parload.dask.from_file(path, chunks=(16, 9, -1),
                                  layout="sinograms")
    assert np.array_equal(sino.compute(scheduler="threads"),
                          want.transpose(1, 0, 2))


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi(ranks):
    """mpi_detector.py on every rank (see test_mpi.py: each run under
    timeout(1), so that a rank left waiting fails instead of hanging)."""
    from test_mpi import HERE, launcher
    cmd = ["timeout", "120", *launcher(), "-n", str(ranks), sys.executable,
           "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no",
           f"--rootdir={HERE}", str(HERE / "mpi_detector.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert " passed" in out and "skipped" not in out, out[-3000:]
