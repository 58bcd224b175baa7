"""cache= (the page-cache mode) of parload.load, Loader.load, load_into,
parload.stream and parload.dask.from_file: every mode loads what keep
loads, checked against the plain reader of conftest.py too, and
Dataset.stats["cache"] says the mode used.  What each mode leaves in the
page cache is tests/check_cache.c's to count."""

import os
import threading

import numpy as np
import pytest

import parload
from conftest import random_pixels, raw_spec, read_raw, write_layout, write_raw

MODES = ["keep", "drop", "direct", "auto"]


def direct_refused(path):
    """Whether this file system refuses O_DIRECT, tried as the library
    tries it."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
        return False
    except OSError:
        return True


def used(mode, path):
    """The mode a load asked mode uses: direct drops where O_DIRECT is
    refused, auto keeps a small file."""
    if mode == "direct" and direct_refused(path):
        return "drop"
    return "keep" if mode == "auto" else mode


@pytest.fixture
def scan(tmp_path, rng):
    """60 views of 37 x 301 u16 (records not aligned to any block)."""
    path = tmp_path / "scan.raw"
    px = random_pixels(rng, (60, 37, 301), np.uint16)
    write_raw(path, px, timestamps=np.arange(60) * 3, crc=True)
    return path, px


@pytest.mark.parametrize("mode", MODES)
def test_load_equals_keep(scan, mode):
    path, px = scan
    keep = parload.load(path)
    ds = parload.load(path, cache=mode, verify=True)
    assert keep.stats["cache"] == "keep"
    assert ds.stats["cache"] == used(mode, path)
    assert ds.stats["crc_checked"] == 60
    assert np.array_equal(ds.pixels, keep.pixels)
    assert np.array_equal(ds.headers, keep.headers)
    _, headers, pixels = read_raw(path)
    assert np.array_equal(ds.pixels, pixels)
    assert np.array_equal(ds.headers, headers)


@pytest.mark.parametrize("mode", MODES)
def test_selections_and_loader(scan, mode):
    path, px = scan
    with parload.Loader(threads=3) as loader:
        for sel in (dict(views=slice(2, 50, 3), rows=(4, 30), cols=(5, 299)),
                    dict(rows=(3, 35), layout="sinograms")):
            keep = loader.load(path, **sel)
            ds = loader.load(path, cache=mode, **sel)
            assert ds.stats["cache"] == used(mode, path)
            assert np.array_equal(ds.pixels, keep.pixels)
            assert np.array_equal(ds.headers, keep.headers)
        pixels, headers = parload.empty_like_file(path)
        ds = loader.load_into(path, pixels, headers, cache=mode)
        assert ds.stats["cache"] == used(mode, path)
        assert np.array_equal(pixels, px)


@pytest.mark.parametrize("mode", MODES)
def test_raw_layout_of_files(tmp_path, rng, mode):
    paths = [tmp_path / f"f{i}.bin" for i in range(3)]
    px, heads = write_layout(rng, paths, [5, 4, 3], 333, 21, "u16be",
                             offset=100, header=24, gap=7)
    raw = raw_spec(333, 21, "u16be", offset=100, header=24, gap=7)
    ds = parload.load(paths, raw=raw, cache=mode)
    assert ds.stats["cache"] == used(mode, paths[0])
    assert np.array_equal(ds.pixels, px)
    assert np.array_equal(ds.raw_headers, heads)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("window", [None, 200_000])
def test_stream_equals_keep(scan, mode, window):
    path, px = scan
    with parload.stream(path, batch_views=7, window=window, copy=True,
                        cache=mode) as s:
        got = np.concatenate([b.pixels for b in s])
        assert s.stats["cache"] == used(mode, path)
    assert np.array_equal(got, px)


@pytest.mark.parametrize("mode", ["drop", "direct"])
def test_dask_chunks(scan, mode):
    pytest.importorskip("dask")
    import parload.dask
    path, px = scan
    arr = parload.dask.from_file(path, chunks=(16, -1, -1), cache=mode)
    assert np.array_equal(arr.compute(), px)


def test_a_pipe_is_read_as_keep(scan):
    """A pipe has no page cache to spare: every mode reads it as keep."""
    path, px = scan
    data = path.read_bytes()
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        ds = parload.load(r, cache="drop")
    finally:
        writer.join()
        os.close(r)
    assert ds.stats["cache"] == "keep"
    assert np.array_equal(ds.pixels, px)


@pytest.mark.parametrize("bad", ["", "Drop", "none", "sometimes"])
def test_unknown_mode_raises(scan, bad):
    path, _ = scan
    with pytest.raises(ValueError, match="page-cache mode"):
        parload.load(path, cache=bad)
    with parload.Loader() as loader, \
            pytest.raises(ValueError, match="page-cache mode"):
        loader.load(path, cache=bad)
    with pytest.raises(ValueError, match="page-cache mode"):
        parload.stream(path, cache=bad)


def test_cache_must_be_a_str(scan):
    path, _ = scan
    with pytest.raises(TypeError):
        parload.load(path, cache=1)
