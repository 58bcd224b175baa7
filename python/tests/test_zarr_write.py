"""Zarr output: parload.save("x.zarr", ...) and `parload extract -o
OUT.zarr`.

v2 stores are read back by zarr-python (Debian's python3-zarr, 2.13), an
independent reader; v3 stores, which zarr 2.13 does not read, by
zarr_fixtures.read_v3, written from the v3 specification with json, NumPy
and numcodecs alone (the shard index parsed and its CRC-32C computed
there); and every kind by parload itself.
"""

import json
import re
import resource
import signal
import subprocess

import numpy as np
import pytest

import parload
from conftest import random_pixels, run_cli, write_raw

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
import zarr_fixtures  # noqa: E402 (needs zarr and numcodecs)

DTYPES = ["<u1", "<u2", "<i2", "<u4", "<i4", "<f4", "<f8"]
COMPRESSORS = ["zstd", "blosc", "gzip", "zstd=9", "blosc=2", "gzip=1"]


def listing(d):
    return sorted(p.name for p in d.iterdir())


# ---- v3: zarr_fixtures' independent reader, from the specification ----

def read_v3(path):
    """(array, attributes) of a v3 store parload wrote, read by
    zarr_fixtures.read_v3 (json, numcodecs, the shard index parsed and
    its CRC-32C computed there, sharing no code with parload)."""
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["zarr_format"] == 3 and meta["node_type"] == "array"
    assert meta["chunk_key_encoding"] == {
        "name": "default", "configuration": {"separator": "/"}}
    return zarr_fixtures.read_v3(str(path)), meta["attributes"]


# ---- v2, read by zarr-python ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_v2_every_type(tmp_path, rng, dtype):
    a = random_pixels(rng, (5, 7, 9), dtype)
    angles = np.linspace(0, 180, 5, dtype=np.float32)
    p = tmp_path / "a.zarr"
    parload.save(p, a, angles=angles)
    z = zarr.open(str(p), mode="r")
    assert z.dtype == np.dtype(dtype) and z.shape == a.shape
    assert z.chunks == (1, 7, 9) and z.compressor is None
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(np.float32(z.attrs["angles"]), angles)
    assert listing(p) == sorted([".zarray", ".zattrs"] +
                                ["%d.0.0" % k for k in range(5)])
    assert listing(tmp_path) == ["a.zarr"]


@pytest.mark.parametrize("compress", COMPRESSORS)
def test_v2_every_compressor(tmp_path, rng, compress):
    # Compressible: rows of a ramp, a little noise.
    a = (np.arange(30, dtype="<u2") * 3 +
         random_pixels(rng, (6, 20, 30), "<u2") % 4).astype("<u2")
    p = tmp_path / "c.zarr"
    parload.save(p, a, compress=compress, chunks=(4, 8, -1))
    z = zarr.open(str(p), mode="r")
    name, _, level = compress.partition("=")
    assert z.compressor.codec_id == name
    want = int(level) if level else {"zstd": 3, "blosc": 5, "gzip": 4}[name]
    cfg = z.compressor.get_config()
    assert cfg.get("level", cfg.get("clevel")) == want
    if name == "blosc":
        assert cfg["cname"] == "lz4" and cfg["shuffle"] == 1
    np.testing.assert_array_equal(z[...], a)
    # Compressed: the chunk files hold fewer bytes than the pixels.
    stored = sum(f.stat().st_size for f in p.iterdir()
                 if not f.name.startswith("."))
    assert stored < a.nbytes * 0.75


def test_v2_partial_edges(tmp_path, rng):
    """Chunks past the array's edge hold the whole chunk shape, padded
    with the fill value (0), as Zarr wants."""
    a = random_pixels(rng, (5, 7, 9), "<i2")
    p = tmp_path / "e.zarr"
    parload.save(p, a, chunks=(2, 3, 4))
    z = zarr.open(str(p), mode="r")
    assert z.chunks == (2, 3, 4)
    np.testing.assert_array_equal(z[...], a)
    meta = json.loads((p / ".zarray").read_text())
    assert meta["fill_value"] == 0 and meta["order"] == "C"
    assert meta["dimension_separator"] == "."
    corner = np.frombuffer((p / "2.2.2").read_bytes(), "<i2")
    assert corner.size == 2 * 3 * 4
    corner = corner.reshape(2, 3, 4)
    np.testing.assert_array_equal(corner[:1, :1, :1], a[4:, 6:, 8:])
    assert not corner[1:].any() and not corner[:, 1:].any()
    assert not corner[:, :, 1:].any()
    assert len([f for f in p.iterdir() if f.name[0] != "."]) == 3 * 3 * 3


def test_v2_chunk_sizes_past_the_array_are_cut(tmp_path, rng):
    a = random_pixels(rng, (3, 4, 5), "<u1")
    p = tmp_path / "w.zarr"
    parload.save(p, a, chunks=(-1, -1, -1))
    z = zarr.open(str(p), mode="r")
    assert z.chunks == (3, 4, 5)
    np.testing.assert_array_equal(z[...], a)
    parload.save(tmp_path / "x.zarr", a, chunks=(100,))
    assert zarr.open(str(tmp_path / "x.zarr"), mode="r").chunks == (3, 4, 5)


def test_no_angles_no_attributes(tmp_path):
    a = np.arange(24, dtype="<u2").reshape(2, 3, 4)
    parload.save(tmp_path / "n.zarr", a)
    assert json.loads((tmp_path / "n.zarr" / ".zattrs").read_text()) == {}


# ---- v3, read by the reader above ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_v3_every_type(tmp_path, rng, dtype):
    a = random_pixels(rng, (4, 6, 5), dtype)
    angles = np.float32([0, 0.5, 1.25, 90])
    p = tmp_path / "a.zarr"
    parload.save(p, a, zarr_format=3, angles=angles)
    got, attrs = read_v3(p)
    np.testing.assert_array_equal(got, a)
    np.testing.assert_array_equal(np.float32(attrs["angles"]), angles)
    assert listing(p) == ["c", "zarr.json"]


@pytest.mark.parametrize("compress", [None] + COMPRESSORS[:3])
def test_v3_compressors_and_edges(tmp_path, rng, compress):
    a = random_pixels(rng, (5, 11, 13), "<f4")
    p = tmp_path / "b.zarr"
    parload.save(p, a, zarr_format=3, compress=compress, chunks=(2, 4, 6))
    got, _ = read_v3(p)
    np.testing.assert_array_equal(got, a)
    meta = json.loads((p / "zarr.json").read_text())
    names = [c["name"] for c in meta["codecs"]]
    assert names == ["bytes"] + ([compress] if compress else [])
    assert meta["fill_value"] == 0


@pytest.mark.parametrize("shard,views", [(1, 4), (2, 5), (3, 7), (8, 3)])
def test_v3_shards(tmp_path, rng, shard, views):
    """N chunks along the views a shard (more than the views: cut to
    them); the last shard's chunks past the array are missing (2^64 - 1
    twice in the index)."""
    a = random_pixels(rng, (views, 6, 7), "<u2")
    p = tmp_path / "s.zarr"
    parload.save(p, a, zarr_format=3, shard=shard, compress="zstd")
    shard = min(shard, views)
    got, _ = read_v3(p)
    np.testing.assert_array_equal(got, a)
    meta = json.loads((p / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == \
        [shard, 6, 7]
    cfg = meta["codecs"][0]["configuration"]
    assert cfg["chunk_shape"] == [1, 6, 7]
    assert [c["name"] for c in cfg["index_codecs"]] == ["bytes", "crc32c"]
    assert cfg["index_location"] == "end"
    shards = sorted(int(d.name) for d in (p / "c").iterdir())
    assert shards == list(range(-(-views // shard)))
    last = (p / "c" / str(shards[-1]) / "0" / "0").read_bytes()
    index = np.frombuffer(last[-(16 * shard + 4):-4], "<u8").reshape(-1, 2)
    missing = (index == 2**64 - 1).all(axis=1)
    assert missing.sum() == shard * len(shards) - views


def test_v3_shard_index_is_checked_by_the_reader(tmp_path, rng):
    """The test's reader fails a shard whose index was changed: its CRC is
    really checked."""
    a = random_pixels(rng, (2, 3, 4), "<u2")
    p = tmp_path / "s.zarr"
    parload.save(p, a, zarr_format=3, shard=2)
    f = p / "c" / "0" / "0" / "0"
    b = bytearray(f.read_bytes())
    b[-5] ^= 1
    f.write_bytes(bytes(b))
    with pytest.raises(ValueError, match="crc32c"):
        read_v3(p)


# ---- the options refused ----

def test_bad_options(tmp_path):
    a = np.zeros((2, 3, 4), "<u2")
    with pytest.raises(ValueError, match="unknown compression"):
        parload.save(tmp_path / "a.zarr", a, compress="lz4")
    with pytest.raises(ValueError, match="unknown compression"):
        parload.save(tmp_path / "a.zarr", a, compress="zstd=23")
    with pytest.raises(ValueError, match="HDF5 and Zarr output only"):
        parload.save(tmp_path / "a.npy", a, compress="zstd")
    with pytest.raises(ValueError, match="Zarr output only"):
        parload.save(tmp_path / "a.npy", a, chunks=(1,))
    with pytest.raises(ValueError, match="2 or 3"):
        parload.save(tmp_path / "a.zarr", a, zarr_format=4)
    with pytest.raises(ValueError, match="chunks"):
        parload.save(tmp_path / "a.zarr", a, chunks=(0, 1))
    with pytest.raises(parload.Error, match="zarr_format 3"):
        parload.save(tmp_path / "a.zarr", a, shard=2)
    assert listing(tmp_path) == []


def test_h5_takes_gzip_only(tmp_path):
    a = np.zeros((2, 3, 4), "<u2")
    with pytest.raises(parload.Error, match="gzip only"):
        parload.save(tmp_path / "a.h5", a, compress="zstd")
    assert listing(tmp_path) == []


# ---- in place, whole or not at all ----

def test_existing_refused_and_force_replaces(tmp_path):
    a = np.arange(24, dtype="<u2").reshape(2, 3, 4)
    p = tmp_path / "a.zarr"
    parload.save(p, a, chunks=(1, 1, 1))
    with pytest.raises(parload.Error, match="exists"):
        parload.save(p, a + 1)
    np.testing.assert_array_equal(zarr.open(str(p), mode="r")[...], a)
    parload.save(p, a + 1, force=True, zarr_format=3)
    got, _ = read_v3(p)
    np.testing.assert_array_equal(got, a + 1)
    # The old store is gone whole: no v2 chunk is left beside zarr.json.
    assert listing(p) == ["c", "zarr.json"]
    assert listing(tmp_path) == ["a.zarr"]


def test_force_replaces_only_a_store(tmp_path):
    a = np.zeros((1, 2, 2), "<u1")
    d = tmp_path / "d.zarr"
    d.mkdir()
    (d / "precious").write_text("keep")
    f = tmp_path / "f.zarr"
    f.write_text("keep")
    for p in (d, f):
        with pytest.raises(parload.Error, match="not a Zarr store"):
            parload.save(p, a, force=True)
    assert (d / "precious").read_text() == "keep"
    assert f.read_text() == "keep"
    assert listing(tmp_path) == ["d.zarr", "f.zarr"]


def test_nothing_left_behind_on_failure(tmp_path, parload_bin, rng):
    """A write that fails mid-store (a file size limit: each chunk file
    is too large) fails naming the chunk's file, and leaves nothing: no
    store, no temporary directory; an old store replaced with --force is
    kept as it was."""
    src = tmp_path / "s.raw"
    write_raw(src, random_pixels(rng, (4, 40, 50), np.uint16))
    old = tmp_path / "o.zarr"
    parload.save(old, np.ones((1, 2, 2), "<u1"))

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    for args in (["-o", tmp_path / "n.zarr"], ["--force", "-o", old]):
        r = subprocess.run([parload_bin, "extract", *map(str, args),
                            str(src)], capture_output=True, text=True,
                           preexec_fn=limit, timeout=120)
        assert r.returncode == 1, r.stderr
        assert re.search(r"\.zarr/[0-3]\.0\.0: cannot write: File too "
                         r"large$", r.stderr), r.stderr
        assert listing(tmp_path) == ["o.zarr", "s.raw"]
    np.testing.assert_array_equal(zarr.open(str(old), mode="r")[...],
                                  np.ones((1, 2, 2), "<u1"))


# ---- the command ----

def test_extract_from_raw_and_npy(tmp_path, parload_bin, rng):
    px = random_pixels(rng, (6, 10, 12), np.uint16)
    angles = np.linspace(0, 90, 6, dtype=np.float32)
    src = tmp_path / "s.raw"
    write_raw(src, px, angles=angles)
    out = tmp_path / "o.zarr"
    r = run_cli(parload_bin, "extract", "--compress", "zstd", "-o", out, src)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    z = zarr.open(str(out), mode="r")
    np.testing.assert_array_equal(z[...], px)
    np.testing.assert_array_equal(np.float32(z.attrs["angles"]), angles)
    # A selection, in sinogram layout, v3 in shards, from a .npy source.
    np.save(tmp_path / "s.npy", px)
    out3 = tmp_path / "o3.zarr"
    r = run_cli(parload_bin, "extract", "--rows", "2:7", "--layout",
                "sinograms", "--zarr-format", "3", "--shard", "4",
                "--chunks", "2,3", "--compress", "gzip=6", "-o", out3,
                tmp_path / "s.npy")
    assert r.returncode == 0, r.stderr
    got, _ = read_v3(out3)
    np.testing.assert_array_equal(got, px[:, 2:7].transpose(1, 0, 2))


def test_extract_refuses(tmp_path, parload_bin, rng):
    src = tmp_path / "s.raw"
    write_raw(src, random_pixels(rng, (2, 4, 4), np.uint16))
    out = tmp_path / "o.zarr"
    assert run_cli(parload_bin, "extract", "-o", out, src).returncode == 0
    r = run_cli(parload_bin, "extract", "-o", out, src)
    assert r.returncode == 1
    assert "o.zarr: directory exists (--force replaces it)" in r.stderr
    for args, msg in [
            (["--shard", "2"], "--shard needs --zarr-format 3"),
            (["--zarr-format", "4"], "--zarr-format '4': 2 or 3"),
            (["--chunks", "0"], "--chunks '0'"),
            (["--chunks", "1,2,3,4"], "--chunks '1,2,3,4'"),
            (["--compress", "lz4"], "unknown compression 'lz4'")]:
        r = run_cli(parload_bin, "extract", *args, "-o", tmp_path / "n.zarr",
                    src)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
    r = run_cli(parload_bin, "extract", "--chunks", "2", "-o",
                tmp_path / "n.npy", src)
    assert r.returncode == 2
    assert "--chunks applies to Zarr output only" in r.stderr
    r = run_cli(parload_bin, "extract", "--compress", "blosc", "-o",
                tmp_path / "n.h5", src)
    assert r.returncode == 2 and "gzip only" in r.stderr
    assert listing(tmp_path) == ["o.zarr", "s.raw"]
    r = run_cli(parload_bin, "extract", "--force", "--zarr-format", "3",
                "-o", out, src)
    assert r.returncode == 0, r.stderr
    assert listing(out) == ["c", "zarr.json"]


# ---- parload reads back what it wrote ----

@pytest.mark.parametrize("kw", [
    {}, {"compress": "zstd", "chunks": (2, 3, 4)},
    {"zarr_format": 3, "shard": 2, "compress": "blosc"},
    {"zarr_format": 3, "compress": "gzip", "chunks": (2, 5, -1)}])
def test_parload_reads_it_back(tmp_path, rng, kw):
    a = random_pixels(rng, (5, 7, 9), "<u2")
    angles = np.float32([0, 1.5, 3, 4.5, 6])
    p = tmp_path / "r.zarr"
    parload.save(p, a, angles=angles, **kw)
    ds = parload.load(p)
    np.testing.assert_array_equal(ds.pixels, a)
    np.testing.assert_array_equal(ds.angles, angles)
