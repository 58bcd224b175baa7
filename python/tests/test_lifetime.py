"""Memory: arrays keep their dataset alive, and nothing else does."""

import gc
import weakref

import numpy as np

import parload
from conftest import needs_rss, rss_bytes, write_raw

MiB = 1 << 20


def test_array_outlives_dataset_and_loader(stream):
    path, px, hdr = stream
    with parload.Loader(threads=2) as ld:
        ds = ld.load(path)
    assert ld.closed
    pixels, headers, angles = ds.pixels, ds.headers, ds.angles
    alive = weakref.ref(ds)
    del ds
    gc.collect()
    assert alive() is not None
    assert np.array_equal(pixels, px)
    assert np.array_equal(headers["timestamp_ns"], hdr["timestamp_ns"])
    del pixels, headers
    assert alive() is not None  # angles still views it
    assert np.array_equal(angles, hdr["angle_deg"])
    del angles
    # Freed by reference counting, without waiting for the collector.
    assert alive() is None


@needs_rss
def test_memory_is_released_with_the_last_array(tmp_path):
    path = tmp_path / "big.raw"
    write_raw(path, np.ones((64, 512, 512), np.uint16))  # 32 MiB of pixels
    base = rss_bytes()
    ds = parload.load(path, threads=2)
    a = ds.pixels[10:20]
    del ds
    gc.collect()
    assert rss_bytes() - base > 24 * MiB
    assert int(a.sum()) == 10 * 512 * 512
    del a
    assert rss_bytes() - base < 8 * MiB


def test_empty_like_file_buffers(stream):
    path, px, _ = stream
    pixels, headers = parload.empty_like_file(path)
    assert pixels.shape == px.shape and pixels.dtype == px.dtype
    assert headers.dtype == parload.header_dtype and headers.shape == (23,)
    assert pixels.flags.c_contiguous and pixels.flags.writeable
    with parload.Loader(threads=2) as ld:
        for _ in range(3):
            pixels[...] = 0
            ds = ld.load_into(path, pixels, headers)
            assert ds.pixels is pixels and ds.headers is headers
            assert np.array_equal(pixels, px)
            assert ds.angles.base is headers or \
                np.shares_memory(ds.angles, headers)
    del ds, pixels
    # The headers keep the shared mapping alive.
    assert headers["view_index"].tolist() == list(range(23))


@needs_rss
def test_thousand_loads_keep_rss_flat(stream):
    path, px, _ = stream
    for _ in range(100):
        parload.load(path, threads=2)
    base = rss_bytes()
    with parload.Loader(threads=2) as ld:
        for i in range(1000):
            ds = parload.load(path, threads=2) if i % 2 else ld.load(path)
            assert ds.pixels[5, 5, 5] == px[5, 5, 5]
    del ds
    assert rss_bytes() - base < 16 * MiB


def test_no_reference_leaks(stream):
    """The getters and buffers hand out what they take, and no more."""
    import sys
    path, _, _ = stream
    ds = parload.load(path)
    watched = [ds, np.dtype(np.uint16), np.dtype(np.float32),
               np.dtype(np.uint64), parload.header_dtype]
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(200):
        ds.pixels, ds.headers, ds.angles, ds.bad_views, ds.stats
        ds.file_header, ds.views
        pixels, headers = parload.empty_like_file(path)
    del pixels, headers
    assert [sys.getrefcount(o) for o in watched] == before
