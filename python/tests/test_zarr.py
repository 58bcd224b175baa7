"""Zarr stores as zarr-python 2.13 and numcodecs write them (version 2)
and as the version 3 specification states them (written by hand in
zarr_fixtures.py), loaded by parload and compared with zarr-python's own
read (v2) or the fixtures' independent reader (v3): every compressor and
Blosc inner codec and shuffle, every pixel type in both byte orders, both
dimension separators, chunks of one frame, of 16, row bands, tiles,
blocks, partial edge chunks and one chunk larger than the array, chunks
never written (the fill value), groups, consolidated metadata, OME-Zarr
multiscales, v3's chunk key encodings, bytes, transpose, crc32c and
sharded arrays with the index at either end; whole loads, selections,
sinograms, batches, corrections, 1 to 4 threads, the command, Dask and
MPI; and the errors of damaged stores, each naming the store's file and
what is wrong."""

import json
import os
import re
import shutil

import numpy as np
import pytest

import parload
from conftest import SELECTIONS, expected, run_cli, sel_id
from conftest import crc32c as crc32c_bitwise
from test_correct import check, corrected

zarr = pytest.importorskip("zarr")
pytest.importorskip("numcodecs")
import zarr_fixtures as zfx  # noqa: E402  (needs zarr, numcodecs)

THREADS = [1, 2, 3, 4]


@pytest.fixture(scope="session")
def zx(tmp_path_factory):
    """Every store, written once for the session."""
    return zfx.write_all(str(tmp_path_factory.mktemp("zarr")))


def readable(s):
    return s.refused is None


NAMES = sorted(n for n, (_, _, _) in zfx.v2_specs().items()) + [
    "v2-fill-7", "v2-fill-null", "v2-fill-nan", "v2-2d", "v2-group",
    "v2-group-consolidated", "ome-zyx", "ome-tczyx"] + sorted(
    zfx.v3_specs()) + ["v3-transpose-swap", "v3-group", "v3-2d"]
REFUSED = ["v2-order-F", "v2-filter-delta", "v2-filter-astype",
           "v2-type-bool", "v2-type-i8", "v2-type-string",
           "v2-type-structured", "v2-shape-4d", "v3-codec-unknown",
           "v3-type-bool"]


def load(s, **kw):
    """parload.load() of store s (its dataset= where it has one)."""
    if s.dataset is not None:
        kw.setdefault("dataset", s.dataset)
    return parload.load(s.path, **kw)


def load_or_refused(s, **kw):
    """The Dataset, or None where s may be refused and was, as it may."""
    if not s.may_refuse:
        return load(s, **kw)
    try:
        return load(s, **kw)
    except parload.Error as e:
        code, words = s.may_refuse
        assert e.code == code, (e.code, str(e))
        for w in words:
            assert re.search(w, str(e), re.I), str(e)
        return None


def grid(shape, chunks):
    return int(np.prod([-(-a // c) for a, c in zip(shape, chunks)]))


def chunks_decoded(s, ds, threads, touched=None):
    """Each chunk decoded once: as many decodes as chunks touched (every
    chunk by default), and at most one more of each chunk a cut between
    two workers' shares crosses."""
    if not s.codec:
        return
    shape = s.want.shape
    chunks = s.chunks if len(s.chunks) == 3 else (1,) + tuple(s.chunks)
    total = touched if touched is not None else grid(shape, chunks)
    across = grid(shape[1:], chunks[1:])
    st = ds.stats
    # Chunks never written are no decode (however the table counts their
    # fill): at most the chunks there are.
    least = 0 if s.notes.get("missing") else total
    assert least <= st["strips_decoded"] <= total + (threads - 1) * across, \
        (s.name, total, across, st)


def names_codec(s, stats):
    """stats["codec"] names the store's codecs (stages joined by +)."""
    if not s.codec:
        return
    have = set((stats.get("codec") or "").split("+"))
    assert set(s.codec.split("+")) <= have, (s.name, stats.get("codec"))


# ---------------------------------------------------------------------------
# The fixtures and the test's own CRC-32C.

def test_crc32c_of_the_fixtures():
    """The table-driven CRC-32C of the v3 fixtures: the check value, RFC
    3720's vectors and the conftest's bitwise one."""
    assert zfx.crc32c(b"123456789") == 0xE3069283
    assert zfx.crc32c(bytes(32)) == 0x8A9136AA
    assert zfx.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert zfx.crc32c(bytes(range(32))) == 0x46DD794E
    data = np.random.default_rng(1).integers(0, 256, 1000, np.uint8)
    assert zfx.crc32c(data.tobytes()) == crc32c_bitwise(data.tobytes())


def test_fixtures_are_what_they_say(zx):
    """The stores themselves: each v2 store's metadata says what its name
    says, chunks never written have no file, shard files hold their index
    where they say, so that a test that passes does so on the store it
    claims."""
    ids = {"zstd": "zstd", "gzip": "gzip", "zlib": "zlib", "lz4": "lz4",
           "bz2": "bz2", "blosc": "blosc"}
    for name in NAMES + REFUSED:
        s = zx[name]
        assert os.path.isdir(s.path), name
        if s.version == 3:
            with open(os.path.join(s.path, "zarr.json")) as f:
                assert json.load(f)["zarr_format"] == 3
            continue
        if name.startswith("v2-codec-"):
            with open(os.path.join(s.path, ".zarray")) as f:
                meta = json.load(f)
            kind = name[len("v2-codec-"):].split("-")[0]
            kind = "zstd" if kind.startswith("zstd") else kind
            comp = meta["compressor"]
            assert (comp is None) if kind == "none" else \
                comp["id"] == ids[kind], (name, comp)
            if kind == "blosc":
                cname, shuffle = name.split("-")[3:5]
                assert comp["cname"] == cname and \
                    comp["shuffle"] == int(shuffle)
    with open(os.path.join(zx["v2-sep-slash"].path, ".zarray")) as f:
        assert json.load(f)["dimension_separator"] == "/"
    assert os.path.isfile(os.path.join(zx["v2-sep-slash"].path, "0", "0",
                                       "0"))
    with open(os.path.join(zx["v2-order-F"].path, ".zarray")) as f:
        assert json.load(f)["order"] == "F"
    for k in ("5.0.0", "6.0.0", "12.1.2", "20.0.0"):
        assert not os.path.exists(os.path.join(zx["v2-fill-7"].path, k))
    assert os.path.exists(os.path.join(zx["v2-fill-7"].path, "20.1.0"))
    assert os.path.isfile(os.path.join(zx["v3-bytes-le"].path, "c", "0",
                                       "0", "0"))
    assert os.path.isfile(os.path.join(zx["v3-key-default-dot"].path,
                                       "c.0.0.0"))
    assert os.path.isfile(os.path.join(zx["v3-key-v2-dot"].path, "0.0.0"))
    assert os.path.isfile(os.path.join(zx["v3-key-v2-slash"].path, "0",
                                       "0", "0"))
    assert not os.path.exists(os.path.join(zx["v3-fill"].path, "c", "3",
                                           "0", "0"))
    # A shard of 8 frames: the index is 8 x 16 bytes + a CRC-32C, at the
    # end or the start; an inner chunk never written is 2^64-1 twice.
    for name, at_end in (("v3-shard-end", True), ("v3-shard-start", False)):
        with open(os.path.join(zx[name].path, "c", "0", "0", "0"),
                  "rb") as f:
            raw = f.read()
        idx = raw[-132:] if at_end else raw[:132]
        assert zfx.crc32c(idx[:128]) == int.from_bytes(idx[128:], "little")
        entries = np.frombuffer(idx[:128], "<u8").reshape(8, 2)
        for off, n in entries:
            if off != zfx.NONE:
                assert (off + n <= len(raw) - 132) if at_end else off >= 132
        missing = (entries == zfx.NONE).all(axis=1)
        assert missing.tolist() == [k in ((2,) if at_end else (5,))
                                    for k in range(8)]


# ---------------------------------------------------------------------------
# Every store, whole.

@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("name", NAMES)
def test_whole_load_equals_zarr(zx, name, threads):
    s = zx[name]
    ds = load_or_refused(s, threads=threads)
    if ds is None:
        return
    want = s.want
    assert ds.pixels.shape == want.shape, (ds.pixels.shape, want.shape)
    assert ds.pixels.dtype == want.dtype.newbyteorder("="), ds.pixels.dtype
    assert np.array_equal(ds.pixels, want, equal_nan=want.dtype.kind == "f")
    assert ds.stats["serial"] is None or name == "v2-codec-bz2", \
        ds.stats["serial"]
    names_codec(s, ds.stats)
    chunks_decoded(s, ds, threads)


@pytest.mark.parametrize("name", ["v2-codec-zstd1", "v2-chunks-block-zstd1",
                                  "v2-chunks-bigger-none", "v2-2d",
                                  "v2-group", "ome-tczyx", "v3-shard-end",
                                  "v3-shard-tiles"])
def test_describe(zx, name):
    """The shape, the type and the stored chunks (views, rows, columns; a
    sharded array's inner chunks) of a store."""
    s = zx[name]
    d = parload.describe(s.path, dataset=s.dataset)
    assert (d["count"], d["height"], d["width"]) == s.want.shape
    assert np.dtype(d["dtype"]) == s.want.dtype.newbyteorder("=")
    chunks = s.chunks if len(s.chunks) == 3 else (1,) + tuple(s.chunks)
    assert tuple(d["chunks"]) == tuple(chunks), d["chunks"]


@pytest.mark.parametrize("name", REFUSED)
def test_refused_saying_what(zx, name):
    """F order, the Delta and AsType filters, the dtypes parload cannot
    hold (bool, int64, strings, structured), 4 dimensions that are not
    1, a codec parload has not: each refused, naming it."""
    s = zx[name]
    code, words = s.refused
    with pytest.raises(parload.Error) as e:
        load(s, threads=2)
    msg = str(e.value)
    assert e.value.code == code, (e.value.code, msg)
    assert os.path.basename(s.path) in msg, msg
    for w in words:
        assert re.search(w, msg, re.I), (w, msg)


# ---------------------------------------------------------------------------
# Groups, OME-Zarr.

@pytest.mark.parametrize("name", ["v2-group", "v2-group-consolidated",
                                  "v3-group"])
def test_group_array_by_path(zx, name):
    """dataset= and STORE:/path name an array inside a group; the
    store's root group alone lists its arrays (PARLOAD_EINVAL)."""
    s = zx[name]
    for ds in (parload.load(s.path, dataset=s.dataset, threads=2),
               parload.load(s.path, dataset="/" + s.dataset, threads=2),
               parload.load("%s:/%s" % (s.path, s.dataset), threads=2)):
        assert np.array_equal(ds.pixels, s.want)
    if "dark" in s.notes:
        ds = parload.load(s.path, dataset="dark")
        assert np.array_equal(ds.pixels, s.notes["dark"])
    with pytest.raises(parload.Error) as e:
        parload.load(s.path)
    msg = str(e.value)
    assert e.value.code == "PARLOAD_EINVAL", (e.value.code, msg)
    # Every array of the group by its path, those of its groups too.
    listed = msg.split(":")[-1]
    assert re.search(r"(^|[\s,/])%s\b" % re.escape(s.dataset), listed), msg
    if "dark" in s.notes:
        assert re.search(r"\bdark\b", listed), msg


def test_group_dataset_that_is_not_there(zx):
    s = zx["v2-group"]
    with pytest.raises(parload.Error) as e:
        parload.load(s.path, dataset="scan/nothing")
    assert "nothing" in str(e.value), str(e.value)


@pytest.mark.parametrize("name", ["ome-zyx", "ome-tczyx"])
def test_ome_levels(zx, name):
    """Level 0 by default (multiscales[0].datasets[0].path), level 1 by
    dataset="1", the leading t and c of size 1 dropped."""
    s = zx[name]
    ds = parload.load(s.path, threads=3)
    assert np.array_equal(ds.pixels, s.want)
    ds = parload.load(s.path, dataset="1", threads=3)
    assert np.array_equal(ds.pixels, s.notes["level1"])
    assert ds.pixels.shape == (zfx.N, zfx.H // 2, zfx.W // 2)


# ---------------------------------------------------------------------------
# Selections (conftest.SELECTIONS) on the stores whose chunks a selection
# cuts in every way.

SELECTED = sorted(n for n in NAMES if n.startswith("v2-chunks-")) + [
    "v2-codec-blosc-lz4-2", "v2-codec-lz4", "v2-type-be-f8-blosc",
    "v2-sep-slash", "v2-fill-7", "v2-group", "ome-tczyx", "v3-bytes-be",
    "v3-key-v2-slash", "v3-fill", "v3-shard-end", "v3-shard-start",
    "v3-shard-tiles", "v3-zstd-crc32c", "v3-transpose-swap"]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("sel", SELECTIONS, ids=sel_id)
@pytest.mark.parametrize("name", SELECTED)
def test_selection_equals_zarr(zx, name, sel, threads):
    s = zx[name]
    ds = load_or_refused(s, threads=threads, **sel)
    if ds is None:
        return
    assert np.array_equal(ds.pixels, expected(s.want, sel))
    assert ds.stats["serial"] is None, ds.stats["serial"]


def test_a_selection_decodes_only_its_chunks(zx):
    """Every 4th frame of a store of 16-frame chunks decodes each chunk it
    touches once; a band of rows of a row-band store only its bands; a
    tile only its tiles; a sharded store only the inner chunks."""
    def decoded(name, **sel):
        return load(zx[name], threads=1, **sel).stats["strips_decoded"]
    assert decoded("v2-chunks-frames16-zstd1", views=slice(0, 37, 4)) == 3
    assert decoded("v2-chunks-band32-zstd1", rows=(40, 60)) == zfx.N
    assert decoded("v2-chunks-tile32-zstd1", views=slice(0, 10),
                   rows=(40, 60), cols=(40, 60)) == 10
    assert decoded("v2-chunks-block-zstd1", views=slice(8, 16),
                   rows=(0, 32), cols=(32, 64)) == 1
    assert decoded("v3-shard-end", views=slice(0, 37, 4)) == 10
    assert decoded("v3-shard-tiles", views=slice(20, 22), rows=(0, 32),
                   cols=(64, 96)) == 2


@pytest.mark.parametrize("name", ["v2-chunks-frame-none",
                                  "v2-chunks-band32-none", "v3-bytes-le",
                                  "v3-shard-noindexcrc"])
def test_uncompressed_band_reads_only_its_bytes(zx, name):
    """A band of rows as sinograms from uncompressed chunks (of whole
    frames, or of bands the band cuts) reads the band's bytes alone,
    besides a sharded store's indexes."""
    s = zx[name]
    ds = load(s, rows=(20, 52), layout="sinograms", threads=2)
    assert np.array_equal(ds.pixels, expected(s.want, {
        "rows": (20, 52), "layout": "sinograms"}))
    want = zfx.N * 32 * zfx.W * 2
    index = 0 if "shard" not in name else -(-zfx.N // 16) * 16 * 16
    assert want <= ds.stats["bytes_read"] <= want + index, ds.stats


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("name", ["v2-chunks-frame-zstd1",
                                  "v2-chunks-frames16-zstd1",
                                  "v2-chunks-tile32-none", "v3-shard-end"])
def test_batches_and_windows(zx, name, threads):
    s = zx[name]
    kw = {"dataset": s.dataset} if s.dataset else {}
    for part in ({"batch_views": 5}, {"window": 64 << 10}):
        starts = []
        with parload.stream(s.path, threads=threads, views=(3, 33),
                            rows=(10, 60), copy=True, **part, **kw) as st:
            for b in st:
                v = slice(b.views.start, b.views.stop)
                assert np.array_equal(b.pixels, s.want[v, 10:60])
                starts.append(b.views.start)
            assert st.stats["serial"] is None
        assert starts[0] == 3 and len(starts) > 1


@pytest.mark.parametrize("version", [2, 3])
def test_angles_from_the_attributes(tmp_path, version):
    """The array's attribute "angles" (degrees, one a view) are the
    views' angles, the selected ones with a selection."""
    data = zfx.pixels((zfx.N, zfx.H, zfx.W), "u2", 12)
    angles = np.linspace(0, 180, zfx.N, endpoint=False)
    p = str(tmp_path / "a.zarr")
    if version == 2:
        zfx.v2(p, data, (4, zfx.H, zfx.W),
               compressor=zfx.COMPRESSORS["zstd1"][0]).attrs["angles"] = \
            angles.tolist()
    else:
        zfx.write_v3(p, data, (4, zfx.H, zfx.W), [zfx.bytes_codec()],
                     attributes={"angles": angles.tolist()})
    ds = parload.load(p, views=slice(3, 30, 3), threads=2)
    assert np.array_equal(ds.pixels, data[3:30:3])
    assert np.allclose(ds.angles, angles[3:30:3].astype(np.float32))


@pytest.mark.parametrize("name", ["v2-codec-zstd1", "v2-codec-none",
                                  "v3-shard-end"])
def test_page_cache_drop(zx, name):
    """cache="drop": the chunk files read and dropped from the page
    cache, the pixels the same."""
    s = zx[name]
    ds = load(s, cache="drop", threads=2)
    assert np.array_equal(ds.pixels, s.want)


# ---------------------------------------------------------------------------
# Corrections: -log((p - d) / (f - d)) in float32, flats and darks given
# as arrays (their means per pixel), against NumPy's float64 formula.

@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("sel", [{}, {"rows": (20, 52),
                                      "layout": "sinograms"}], ids=sel_id)
@pytest.mark.parametrize("name", ["v2-codec-zstd1", "v3-shard-end"])
def test_corrected(zx, name, sel, threads):
    s = zx[name]
    rng = np.random.default_rng(7)
    darks = rng.integers(0, 20, (3, zfx.H, zfx.W)).astype("u2")
    flats = rng.integers(2000, 2500, (4, zfx.H, zfx.W)).astype("u2")
    for log in (True, False):
        ds = load(s, flats=flats, darks=darks, minus_log=log,
                  threads=threads, **sel)
        want = corrected(s.want, darks.astype(np.float64).mean(axis=0),
                         flats.astype(np.float64).mean(axis=0), log)
        check(ds.pixels, expected(want, sel))
        assert ds.stats["serial"] is None


# ---------------------------------------------------------------------------
# Damaged and wrong stores: each a parload.Error of its code naming the
# store's file and what is wrong.

def copy(zx, name, tmp_path):
    dest = str(tmp_path / (name + ".zarr"))
    shutil.copytree(zx[name].path, dest)
    return dest


def refused(path, code, *words, **kw):
    """parload.load(path) raises parload.Error of code (one of a tuple),
    its message matching every word (regular expressions, case aside)."""
    with pytest.raises(parload.Error) as e:
        parload.load(path, threads=2, **kw)
    msg = str(e.value)
    codes = code if isinstance(code, tuple) else (code,)
    assert e.value.code in codes, (e.value.code, msg)
    for w in words:
        assert re.search(w, msg, re.I), (w, msg)
    return e.value


def edit_json(path, change):
    with open(path) as f:
        meta = json.load(f)
    change(meta)
    with open(path, "w") as f:
        json.dump(meta, f)


def meta_file(store, name):
    """The metadata file as a message names it: STORE.zarr/.zarray."""
    return re.escape(os.path.basename(store) + "/" + name)


def test_zarray_not_json(zx, tmp_path):
    p = copy(zx, "v2-codec-zstd1", tmp_path)
    with open(os.path.join(p, ".zarray"), "w") as f:
        f.write('{"zarr_format": 2, "shape": [37, 70,')
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, ".zarray"), "JSON")


@pytest.mark.parametrize("key", ["shape", "chunks", "dtype", "compressor"])
def test_zarray_missing_key(zx, tmp_path, key):
    p = copy(zx, "v2-codec-zstd1", tmp_path)
    edit_json(os.path.join(p, ".zarray"), lambda m: m.pop(key))
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, ".zarray"), key)


@pytest.mark.parametrize("chunks", [[1, 70], [1, 70, 100, 1], [0, 70, 100],
                                    [-1, 70, 100]])
def test_chunks_disagree_with_shape(zx, tmp_path, chunks):
    p = copy(zx, "v2-codec-zstd1", tmp_path)
    edit_json(os.path.join(p, ".zarray"),
              lambda m: m.__setitem__("chunks", chunks))
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, ".zarray"), "chunks")


def test_v3_zarr_json_wrong(zx, tmp_path):
    p = copy(zx, "v3-zstd", tmp_path)
    meta = os.path.join(p, "zarr.json")
    with open(meta) as f:
        good = f.read()
    with open(meta, "w") as f:
        f.write(good[:40])
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, "zarr.json"), "JSON")
    with open(meta, "w") as f:
        f.write(good)
    edit_json(meta, lambda m: m.pop("shape"))
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, "zarr.json"), "shape")
    with open(meta, "w") as f:
        f.write(good)
    edit_json(meta, lambda m: m["chunk_grid"]["configuration"].__setitem__(
        "chunk_shape", [1, 70]))
    refused(p, "PARLOAD_ECONTAINER", meta_file(p, "zarr.json"),
            "chunk_shape|chunks")


# A chunk whose decoded size is wrong: the key and where.
CHUNK_DAMAGE = [
    ("v2-codec-none", "5.0.0", "truncated"),
    ("v2-codec-none", "5.0.0", "longer"),
    ("v2-codec-zstd1", "5.0.0", "truncated"),
    ("v2-codec-zstd1", "5.0.0", "garbage"),
    ("v2-codec-blosc-lz4-1", "5.0.0", "truncated"),
    ("v2-codec-gzip", "5.0.0", "truncated"),
    ("v2-codec-lz4", "5.0.0", "truncated"),
    ("v2-sep-slash", "1/1/2", "truncated"),
    ("v3-zstd", "c/5/0/0", "truncated"),
    ("v3-bytes-le", "c/5/0/0", "truncated"),
    ("v3-crc32c", "c/5/0/0", "flipped"),
]


@pytest.mark.parametrize("name,key,how", CHUNK_DAMAGE)
def test_damaged_chunk(zx, tmp_path, name, key, how):
    p = copy(zx, name, tmp_path)
    f = os.path.join(p, *key.split("/"))
    with open(f, "rb") as fh:
        raw = bytearray(fh.read())
    if how == "truncated":
        raw = raw[:len(raw) // 2]
    elif how == "longer":
        raw += b"\0" * 100
    elif how == "garbage":
        raw = bytearray(np.random.default_rng(3).integers(
            0, 256, len(raw), np.uint8).tobytes())
    elif how == "flipped":
        raw[100] ^= 0x5A
    with open(f, "wb") as fh:
        fh.write(raw)
    e = refused(p, ("PARLOAD_ECONTAINER", "PARLOAD_ECRC",
                    "PARLOAD_ETRUNCATED"), re.escape(os.path.basename(p)),
                re.escape(key), r"byte|offset")
    if how == "flipped":
        assert re.search("crc|checksum", str(e), re.I), str(e)


def shard_path(p, key="c/0/0/0"):
    return os.path.join(p, *key.split("/"))


def rewrite_index(path, change, crc=True):
    """The index at the end of a shard (bytes + crc32c) changed by
    change(entries), the CRC-32C computed again when crc."""
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    n = len(raw) - 132
    entries = np.frombuffer(bytes(raw[n:n + 128]), "<u8").reshape(-1, 2)
    entries = entries.copy()
    change(entries)
    idx = entries.astype("<u8").tobytes()
    raw[n:n + 128] = idx
    if crc:
        raw[n + 128:] = zfx.crc32c(idx).to_bytes(4, "little")
    with open(path, "wb") as f:
        f.write(raw)
    return len(raw)


def test_shard_index_points_outside_its_file(zx, tmp_path):
    p = copy(zx, "v3-shard-end", tmp_path)
    size = os.path.getsize(shard_path(p))

    def out(e):
        e[3] = (size - 100, 5000)
    rewrite_index(shard_path(p), out)
    refused(p, "PARLOAD_ECONTAINER", re.escape(os.path.basename(p)),
            re.escape("c/0/0/0"), "index|outside|beyond|past")


def test_shard_index_crc32c_mismatch(zx, tmp_path):
    p = copy(zx, "v3-shard-end", tmp_path)

    def swap(e):
        e[[0, 1]] = e[[1, 0]]
    rewrite_index(shard_path(p), swap, crc=False)
    refused(p, ("PARLOAD_ECONTAINER", "PARLOAD_ECRC"),
            re.escape(os.path.basename(p)), re.escape("c/0/0/0"),
            "crc|checksum")


def test_shard_shorter_than_its_index(zx, tmp_path):
    p = copy(zx, "v3-shard-end", tmp_path)
    with open(shard_path(p), "wb") as f:
        f.write(b"\0" * 50)
    refused(p, ("PARLOAD_ECONTAINER", "PARLOAD_ETRUNCATED"),
            re.escape("c/0/0/0"))


def test_unknown_v2_compressor_named(zx, tmp_path):
    p = copy(zx, "v2-codec-zstd1", tmp_path)
    edit_json(os.path.join(p, ".zarray"), lambda m: m.__setitem__(
        "compressor", {"id": "frobnicate", "level": 3}))
    refused(p, "PARLOAD_ENOTSUP", "frobnicate",
            re.escape(os.path.basename(p)))


@pytest.mark.parametrize("dataset", ["../x", "scan/../../x", ".."])
def test_dataset_climbing_out_of_the_store(zx, dataset):
    refused(zx["v2-group"].path, "PARLOAD_EINVAL", re.escape(".."),
            dataset=dataset)


def test_metadata_path_climbing_out_of_the_store(zx, tmp_path):
    """An OME multiscales level whose path climbs out: refused, nothing
    read outside."""
    p = copy(zx, "ome-zyx", tmp_path)
    shutil.copytree(os.path.join(p, "0"), str(tmp_path / "outside"))
    edit_json(os.path.join(p, ".zattrs"), lambda m: m["multiscales"][0][
        "datasets"][0].__setitem__("path", "../outside"))
    refused(p, ("PARLOAD_EINVAL", "PARLOAD_ECONTAINER"), re.escape(".."))


# ---------------------------------------------------------------------------
# The command.

def test_command_loads_a_store(zx, parload_bin):
    s = zx["v2-codec-zstd1"]
    r = run_cli(parload_bin, "--json", "--threads", "2", s.path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.splitlines()[-1])
    assert d["serial"] is None and d["strips_decoded"] == zfx.N, d
    assert d["codec"] == "zstd", d
    r = run_cli(parload_bin, "--threads", "2", s.path)
    assert r.returncode == 0, r.stderr
    assert "%d views %dx%d u16" % (zfx.N, zfx.W, zfx.H) in r.stdout, r.stdout


def test_command_dataset_of_a_group(zx, parload_bin, tmp_path):
    s = zx["v2-group"]
    for args in (["--dataset", s.dataset, s.path],
                 ["%s:/%s" % (s.path, s.dataset)]):
        out = tmp_path / "x.npy"
        r = run_cli(parload_bin, "extract", "--threads", "2", "--views",
                    "3:30", "-o", out, *args)
        assert r.returncode == 0, r.stderr
        assert np.array_equal(np.load(out), s.want[3:30])
        out.unlink()
    r = run_cli(parload_bin, s.path)
    assert r.returncode != 0 and "dark" in r.stderr, r.stderr


def test_command_names_a_damaged_chunk(zx, parload_bin, tmp_path):
    p = copy(zx, "v2-codec-zstd1", tmp_path)
    with open(os.path.join(p, "7.0.0"), "r+b") as f:
        f.truncate(20)
    r = run_cli(parload_bin, p)
    assert r.returncode != 0
    assert "7.0.0" in r.stderr and os.path.basename(p) in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# Dask and MPI.

@pytest.mark.parametrize("name", ["v2-chunks-frames16-zstd1",
                                  "v2-chunks-block-zstd1", "v3-shard-end"])
def test_dask(zx, name):
    """Equal to zarr's read with chunks given, in both layouts; the
    default chunks are aligned to the store's (every dask chunk's views
    begin at a chunk of the store, or a shard), so that no chunk is
    decoded twice."""
    pytest.importorskip("dask.array")
    import parload.dask
    s = zx[name]
    kw = {"dataset": s.dataset} if s.dataset else {}
    arr = parload.dask.from_file(s.path, chunks=(8, 40, -1), threads=2, **kw)
    assert arr.shape == s.want.shape and arr.dtype == s.want.dtype
    assert np.array_equal(arr.compute(scheduler="threads"), s.want)
    sino = parload.dask.from_file(s.path, chunks=(16, 9, -1),
                                  layout="sinograms", **kw)
    assert np.array_equal(sino.compute(scheduler="threads"),
                          s.want.transpose(1, 0, 2))
    arr = parload.dask.from_file(s.path, **kw)
    assert np.array_equal(arr.compute(scheduler="threads"), s.want)
    for axis, step in enumerate(s.chunks):  # a sharded store's: inner
        bounds = np.cumsum((0,) + arr.chunks[axis])[:-1]
        assert all(b % step == 0 for b in bounds), (axis, s.chunks,
                                                    arr.chunks)


def test_mpi():
    """mpi_zarr.py on 2 ranks (see test_mpi.py: under timeout(1), so that
    a rank left waiting fails instead of hanging)."""
    from test_mpi import run_on_ranks
    run_on_ranks("mpi_zarr.py", 2, 120)


@pytest.mark.parametrize("name", ["v2-fill-7", "v3-fill"])
def test_chunks_never_written_are_no_decode(zx, name):
    """A chunk file that does not exist is the fill value, and no decode:
    strips_decoded counts the chunk files there are, on one thread."""
    s = zx[name]
    files = sum(len([f for f in fs if not f.startswith(".") and
                     f != "zarr.json"])
                for _, _, fs in os.walk(s.path))
    ds = parload.load(s.path, threads=1)
    assert np.array_equal(ds.pixels, s.want, equal_nan=True)
    assert ds.stats["strips_decoded"] == files, (files, ds.stats)


@pytest.mark.parametrize("chunks", [(1, 32, 32), (2, 32, 32), (3, 16, 48)])
@pytest.mark.parametrize("threads", [1, 3])
def test_missing_first_tiles_are_not_taken_for_each_other(tmp_path, chunks,
                                                          threads):
    """Chunks never written in the first column of tiles, the others
    written: each strip's tiles are its own (a worker keeps a decoded
    chunk by where it lies; chunks never written lie nowhere, and each
    is still told from the others)."""
    import zarr
    a = np.arange(4 * 64 * 96, dtype="<u2").reshape(4, 64, 96)
    p = str(tmp_path / "tiles.zarr")
    z = zarr.open(p, mode="w", shape=a.shape, chunks=chunks, dtype="<u2",
                  compressor=None, fill_value=5)
    z[...] = a
    gz, gy = -(-4 // chunks[0]), -(-64 // chunks[1])
    for i in range(gz):
        for j in range(gy):
            os.remove(os.path.join(p, "%d.%d.0" % (i, j)))
    want = zarr.open(p, mode="r")[...]
    assert (want[:, :, :chunks[2]] == 5).all()
    ds = parload.load(p, threads=threads)
    assert np.array_equal(ds.pixels, want)
    s = parload.load(p, threads=threads, layout="sinograms", rows=(10, 50),
                     cols=(5, 90))
    assert np.array_equal(s.pixels, want[:, 10:50, 5:90].transpose(1, 0, 2))
