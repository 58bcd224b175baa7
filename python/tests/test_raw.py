"""raw=: foreign layouts (offsets, per-view headers, gaps, byte orders,
many files as one stream) against an independent reading with NumPy
(conftest.read_layout), for whole loads, selections and sinograms."""

import numpy as np
import pytest

import parload
from conftest import (RAW_TYPES, raw_spec, read_layout, write_layout)

TYPE_NAMES = [t + order for t in RAW_TYPES for order in ("", "be")]


def random_layout(rng, tmp_path, type_name, nfiles=None):
    """A random description and files written for it: (paths, layout
    keys, pixels, raw headers)."""
    nfiles = nfiles or int(rng.integers(1, 6))
    keys = {"width": int(rng.integers(1, 24)),
            "height": int(rng.integers(1, 12)),
            "type": type_name,
            "offset": int(rng.choice([0, rng.integers(1, 300)])),
            "header": int(rng.choice([0, rng.integers(1, 600)])),
            "gap": int(rng.choice([0, rng.integers(1, 40)]))}
    views = [int(n) for n in rng.integers(1, 5, size=nfiles)]
    paths = [tmp_path / f"f{i}.bin" for i in range(nfiles)]
    px, hd = write_layout(rng, paths, views, keys["width"], keys["height"],
                          type_name, keys["offset"], keys["header"],
                          keys["gap"], last_gap=bool(rng.integers(0, 2)))
    return paths, keys, px, hd


def reference(paths, keys, count=None):
    return read_layout(paths, keys["width"], keys["height"], keys["type"],
                       keys["offset"], keys["header"], keys["gap"], count)


def spec(keys):
    return raw_spec(keys["width"], keys["height"], keys["type"],
                    offset=keys["offset"], header=keys["header"],
                    gap=keys["gap"], count=keys.get("count"))


def source(paths):
    return paths if len(paths) > 1 else paths[0]


def check_selections(rng, src, raw, ref_px, ref_hd, threads):
    """Random views A:B:S, row bands, column ranges, in both layouts."""
    v, h, w = ref_px.shape
    for _ in range(3):
        a = int(rng.integers(0, v))
        b = int(rng.integers(a + 1, v + 1))
        s = int(rng.integers(1, 4))
        r0 = int(rng.integers(0, h))
        r1 = int(rng.integers(r0 + 1, h + 1))
        c0 = int(rng.integers(0, w))
        c1 = int(rng.integers(c0 + 1, w + 1))
        want = ref_px[a:b:s, r0:r1, c0:c1]
        ds = parload.load(src, raw=raw, threads=threads, views=slice(a, b, s),
                          rows=(r0, r1), cols=(c0, c1))
        np.testing.assert_array_equal(ds.pixels, want)
        assert list(ds.views) == list(range(v))[a:b:s]
        if ref_hd.shape[1]:
            np.testing.assert_array_equal(ds.raw_headers, ref_hd[a:b:s])
        sino = parload.load(src, raw=raw, threads=threads,
                            views=slice(a, b, s), rows=(r0, r1),
                            cols=(c0, c1), layout="sinograms")
        np.testing.assert_array_equal(sino.pixels, want.transpose(1, 0, 2))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_type_in_both_byte_orders(tmp_path, type_name):
    rng = np.random.default_rng(TYPE_NAMES.index(type_name))
    paths, keys, px, hd = random_layout(rng, tmp_path, type_name)
    ref_px, ref_hd = reference(paths, keys)
    np.testing.assert_array_equal(ref_px, px)  # the reference reads back
    ds = parload.load(source(paths), raw=spec(keys))
    assert ds.pixels.dtype == ref_px.dtype.newbyteorder("=")
    np.testing.assert_array_equal(ds.pixels, ref_px)
    if keys["header"]:
        assert ds.raw_headers.shape == (len(ref_px), keys["header"])
        np.testing.assert_array_equal(ds.raw_headers, ref_hd)
    else:
        assert ds.raw_headers is None
    assert ds.file_header is None
    np.testing.assert_array_equal(ds.headers["view_index"],
                                  np.arange(len(ref_px)))
    check_selections(rng, source(paths), spec(keys), ref_px, ref_hd, 2)


@pytest.mark.parametrize("seed", range(12))
def test_random_layouts_and_selections(tmp_path, seed):
    """Random descriptions over 1 to 5 files, 1 to 4 threads, with and
    without a count (the bytes after the counted views ignored)."""
    rng = np.random.default_rng(1000 + seed)
    type_name = TYPE_NAMES[int(rng.integers(0, len(TYPE_NAMES)))]
    paths, keys, px, hd = random_layout(rng, tmp_path, type_name)
    threads = seed % 4 + 1
    if seed % 3 == 0:
        keys["count"] = int(rng.integers(1, len(px) + 1))
    ref_px, ref_hd = reference(paths, keys, keys.get("count"))
    ds = parload.load(source(paths), raw=spec(keys), threads=threads)
    np.testing.assert_array_equal(ds.pixels, ref_px)
    assert ds.desc["count"] == len(ref_px)
    assert ds.stats["threads"] == threads
    if keys["header"]:
        np.testing.assert_array_equal(ds.raw_headers, ref_hd)
    check_selections(rng, source(paths), spec(keys), ref_px, ref_hd, threads)


def test_count_ignores_trailing_bytes(tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "t.bin"
    px, hd = write_layout(rng, [path], [5], 6, 4, "i32be", 100, 16, 8,
                          trailing=b"junk after the views")
    raw = raw_spec(6, 4, "i32be", offset=100, header=16, gap=8, count=5)
    ds = parload.load(path, raw=raw)
    np.testing.assert_array_equal(ds.pixels, px)
    np.testing.assert_array_equal(ds.raw_headers, hd)
    # Without the count the trailing bytes are a partial record.
    with pytest.raises(parload.Error, match="partial record") as e:
        parload.load(path, raw=raw_spec(6, 4, "i32be", offset=100,
                                        header=16, gap=8))
    assert e.value.code == "PARLOAD_ETRUNCATED" and e.value.view == 5


def test_desc_is_the_resolved_layout(tmp_path):
    rng = np.random.default_rng(8)
    paths = [tmp_path / "a.bin", tmp_path / "b.bin"]
    write_layout(rng, paths, [2, 3], 10, 3, "f32be", 64, 512, 4)
    ds = parload.load(paths, raw="width=10,height=3,type=f32be,offset=64,"
                      "header=512,gap=4")
    assert ds.desc == {"format": "raw", "width": 10, "height": 3,
                       "type": "f32be", "dtype": np.dtype(np.float32),
                       "offset": 64, "header": 512, "gap": 4, "count": 5,
                       "payload_size": 120, "record_size": 636}
    # describe() says also how the source is stored: views of 3 x 10.
    assert parload.describe(paths, raw="width=10,height=3,type=f32be,"
                            "offset=64,header=512,gap=4") == \
        dict(ds.desc, chunks=(1, 3, 10))
    assert len(ds) == 5 and ds.file_header is None


def test_dict_and_text_give_the_same_load(tmp_path):
    rng = np.random.default_rng(9)
    path = tmp_path / "d.bin"
    write_layout(rng, [path], [4], 8, 8, "u16be", 65536, 512, 0)
    text = parload.load(path, raw="width=8,height=8,type=u16be,offset=64K,"
                        "header=512")
    for raw in ({"width": 8, "height": 8, "type": "u16be", "offset": "64K",
                 "header": 512},
                {"width": "8", "height": 8, "type": "u16be",
                 "offset": 65536, "header": "512", "gap": 0}):
        d = parload.load(path, raw=raw)
        np.testing.assert_array_equal(d.pixels, text.pixels)
        np.testing.assert_array_equal(d.raw_headers, text.raw_headers)
        assert d.desc == text.desc


def test_spec_from_a_file(tmp_path):
    rng = np.random.default_rng(10)
    path = tmp_path / "s.bin"
    px, _ = write_layout(rng, [path], [3], 5, 2, "u32", 10, 0, 6)
    (tmp_path / "layout.txt").write_text(
        "# the camera's dump\nwidth=5\nheight=2  # rows\ntype=u32le\n"
        "offset=10\ngap=6\n")
    ds = parload.load(path, raw="@" + str(tmp_path / "layout.txt"))
    np.testing.assert_array_equal(ds.pixels, px)


def test_desc_overrides_parloads_own_header(tmp_path):
    """raw= given for a file of parload's own format reads it as the
    description says: its 64-byte header and 32-byte view headers become
    offset and header."""
    from conftest import write_raw
    path = tmp_path / "own.raw"
    px = np.arange(3 * 4 * 5, dtype=np.uint16).reshape(3, 4, 5)
    write_raw(path, px)
    ds = parload.load(path, raw="width=5,height=4,type=u16,offset=64,"
                      "header=32")
    np.testing.assert_array_equal(ds.pixels, px)
    body = np.fromfile(path, np.uint8)[64:].reshape(3, 32 + 40)
    np.testing.assert_array_equal(ds.raw_headers, body[:, :32])
    assert list(ds.raw_headers.view("<u8")[:, 0]) == [0, 1, 2]
    assert ds.file_header is None and ds.desc["format"] == "raw"


def test_loader_into_caller_arrays(tmp_path):
    rng = np.random.default_rng(11)
    paths = [tmp_path / f"{i}.bin" for i in range(3)]
    px, hd = write_layout(rng, paths, [2, 1, 2], 7, 5, "i16be", 3, 20, 1)
    raw = {"width": 7, "height": 5, "type": "i16be", "offset": 3,
           "header": 20, "gap": 1}
    pixels, headers = parload.empty_like_file(paths, raw=raw, rows=(1, 4))
    assert pixels.shape == (5, 3, 7) and pixels.dtype == np.int16
    with parload.Loader(threads=2) as ld:
        ds = ld.load_into(paths, pixels, headers, raw=raw, rows=(1, 4))
        assert ds.pixels is pixels
        np.testing.assert_array_equal(pixels, px[:, 1:4])
        np.testing.assert_array_equal(ds.raw_headers, hd)
        mine = np.zeros((5, 20), np.uint8)
        ds = ld.load_into(paths, pixels, raw=raw, raw_headers=mine,
                          rows=(1, 4))
        assert ds.raw_headers is mine
        np.testing.assert_array_equal(mine, hd)
        with pytest.raises(ValueError, match="shape"):
            ld.load_into(paths, pixels, raw=raw, rows=(1, 4),
                         raw_headers=np.zeros((5, 19), np.uint8))
        bare = tmp_path / "bare.bin"
        write_layout(rng, [bare], [5], 7, 3, "i16be")
        with pytest.raises(ValueError, match="no view headers"):
            ld.load_into(bare, pixels, raw=dict(raw, height=3, header=0,
                                                offset=0, gap=0),
                         raw_headers=mine)


def test_raw_headers_outlive_the_dataset(tmp_path):
    rng = np.random.default_rng(12)
    path = tmp_path / "l.bin"
    _, hd = write_layout(rng, [path], [4], 3, 3, "u8", 0, 100, 0)
    heads = parload.load(path, raw="width=3,height=3,type=u8,header=100")\
        .raw_headers
    assert not heads.flags.owndata and heads.base is not None
    np.testing.assert_array_equal(heads, hd)


def test_stream_batches_carry_raw_headers(tmp_path):
    rng = np.random.default_rng(13)
    paths = [tmp_path / f"{i}.bin" for i in range(4)]
    px, hd = write_layout(rng, paths, [3, 1, 2, 4], 9, 6, "f64be", 17, 33, 5)
    raw = raw_spec(9, 6, "f64be", offset=17, header=33, gap=5)
    for window in (None, 2 * (9 * 6 * 8 + 33 + 32)):
        got_px, got_hd = [], []
        with parload.stream(paths, raw=raw, batch_views=2, threads=3,
                            window=window) as s:
            assert s.shape == (10, 6, 9) and s.dtype == np.float64
            for b in s:
                assert b.raw_headers.shape == (b.count, 33)
                got_px.append(b.pixels.copy())
                got_hd.append(b.raw_headers.copy())
        np.testing.assert_array_equal(np.concatenate(got_px), px)
        np.testing.assert_array_equal(np.concatenate(got_hd), hd)


def test_stream_without_raw_headers_gives_none(tmp_path):
    rng = np.random.default_rng(14)
    path = tmp_path / "n.bin"
    px, _ = write_layout(rng, [path], [5], 4, 4, "u16", 8, 0, 0)
    batches = list(parload.stream(path, raw="width=4,height=4,type=u16,"
                                  "offset=8", batch_views=2))
    assert [b.raw_headers for b in batches] == [None] * 3
    np.testing.assert_array_equal(
        np.concatenate([b.pixels for b in batches]), px)


def test_dask_from_a_list_of_files(tmp_path):
    pytest.importorskip("dask.array")
    import parload.dask
    rng = np.random.default_rng(15)
    paths = [tmp_path / f"{i}.bin" for i in range(3)]
    px, _ = write_layout(rng, paths, [2, 2, 2], 6, 5, "u32be", 0, 12, 0)
    raw = {"width": 6, "height": 5, "type": "u32be", "header": 12}
    arr = parload.dask.from_file(paths, chunks=(4, 2, -1), raw=raw)
    assert arr.shape == (6, 5, 6) and arr.dtype == np.uint32
    np.testing.assert_array_equal(arr.compute(), px)
    sino = parload.dask.from_file(paths, raw=raw, layout="sinograms")
    np.testing.assert_array_equal(sino.compute(), px.transpose(1, 0, 2))


def test_follow_a_raw_layout_waits_for_its_count(tmp_path):
    """A raw file being written, followed with a count: the views not yet
    written are waited for, not dropped; a writer that stops short is
    PARLOAD_ETRUNCATED naming the complete views."""
    import threading
    import time
    rng = np.random.default_rng(16)
    path = tmp_path / "live.bin"
    px = rng.integers(0, 1 << 16, size=(4, 3, 5), dtype=np.uint16)
    recs = [b"h" * 6 + v.astype(">u2").tobytes() for v in px]
    path.write_bytes(b"o" * 9 + recs[0] + recs[1])

    def writer():
        for r in recs[2:]:
            time.sleep(0.2)
            with open(path, "ab") as f:
                f.write(r)

    raw = "width=5,height=3,type=u16be,offset=9,header=6,count=4"
    t = threading.Thread(target=writer)
    t.start()
    try:
        got = [b.pixels.copy() for b in
               parload.stream(path, raw=raw, follow=True, timeout=10,
                              batch_views=1)]
    finally:
        t.join()
    np.testing.assert_array_equal(np.concatenate(got), px)
    path.write_bytes(b"o" * 9 + recs[0] + recs[1])
    with pytest.raises(parload.Error, match="2 of the 4") as e:
        list(parload.stream(path, raw=raw, follow=True, timeout=0.3))
    assert e.value.code == "PARLOAD_ETRUNCATED"
