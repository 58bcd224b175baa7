"""Writer: streams from NumPy arrays, read back by parload and by an
independent reader."""

import numpy as np
import pytest

import parload
from conftest import PIXEL_TYPES, crc32c, random_pixels, read_raw


@pytest.mark.parametrize("crc", [False, True])
@pytest.mark.parametrize("dtype", sorted(set(PIXEL_TYPES.values())))
def test_round_trip(tmp_path, rng, dtype, crc):
    v, h, w = 9, 5, 7
    px = random_pixels(rng, (v, h, w), dtype)
    ts = rng.integers(0, 2**64, v, dtype=np.uint64)
    angles = rng.random(v, dtype=np.float32) * 360
    path = tmp_path / "w.raw"
    with parload.Writer(path, v, h, w, dtype, crc=crc) as wr:
        assert wr.file_header.view_count == v
        for i in range(v):
            wr.write({"timestamp_ns": int(ts[i]), "angle_deg": angles[i]},
                     px[i])
        assert wr.written == v
    assert wr.closed
    ds = parload.load(path, verify=True)
    assert np.array_equal(ds.pixels, px, equal_nan=True)
    assert np.array_equal(ds.headers["timestamp_ns"], ts)
    assert np.array_equal(ds.angles, angles)
    assert ds.headers["view_index"].tolist() == list(range(v))
    assert ds.stats["crc_checked"] == (v if crc else 0)
    fields, headers, pixels = read_raw(path)
    assert fields["view_count"] == v and fields["flags"] == int(crc)
    assert np.array_equal(pixels, px, equal_nan=True)
    expect = [crc32c(p.tobytes()) for p in px] if crc else [0] * v
    assert headers["crc32c"].tolist() == expect


def test_header_forms(tmp_path):
    path = tmp_path / "h.raw"
    rec = np.zeros(1, parload.header_dtype)[0]
    rec["timestamp_ns"], rec["angle_deg"] = 30, 3.5
    forms = [None, {}, {"timestamp_ns": 10}, {"angle_deg": 2.5},
             (20, 1.5), rec]
    with parload.Writer(path, len(forms), 1, 2, np.float64) as w:
        for i, f in enumerate(forms):
            w.write(f, [[i, -i]])
    ds = parload.load(path)
    assert ds.headers["timestamp_ns"].tolist() == [0, 0, 10, 0, 20, 30]
    assert ds.angles.tolist() == [0, 0, 0, 2.5, 1.5, 3.5]
    assert ds.pixels[:, 0, 1].tolist() == [0, -1, -2, -3, -4, -5]


def test_exception_in_with_block_is_not_hidden(tmp_path):
    path = tmp_path / "x.raw"
    with pytest.raises(KeyError):
        with parload.Writer(path, 5, 2, 2, "u1") as w:
            w.write(None, np.zeros((2, 2), "u1"))
            raise KeyError("mine")
    assert w.closed


def test_flush_makes_views_visible(tmp_path):
    path = tmp_path / "f.raw"
    w = parload.Writer(path, 3, 2, 2, "u1")
    w.write(None, np.full((2, 2), 7, "u1"))
    w.flush()
    assert path.stat().st_size >= 64 + 32 + 4
    w.write(None, np.zeros((2, 2), "u1"))
    w.write(None, np.zeros((2, 2), "u1"))
    w.close()
    w.close()  # a second close does nothing
    assert parload.load(path).pixels[0].tolist() == [[7, 7], [7, 7]]
