"""PNG output: parload.save(..., "x.png") and `parload extract -o OUT.png`,
read back with Pillow and compared with the formula written here: 8-bit
grey round(255 * (v - lo) / (hi - lo)) clamped to 0..255, lo and hi the
window given or the 0.5th and 99.5th percentiles (the lower value,
numpy.percentile(method="lower")); 16-bit grey the values unscaled."""

import numpy as np
import pytest

import parload
from conftest import run_cli, write_raw

Image = pytest.importorskip("PIL.Image")


@pytest.fixture(autouse=True, scope="module")
def needs_libpng(tmp_path_factory):
    try:
        parload.save(tmp_path_factory.mktemp("probe") / "probe.png",
                     np.zeros((1, 1), np.uint8))
    except parload.Error as e:
        if "needs libpng" in str(e):
            pytest.skip("this libparload was built without libpng")
        raise


def expected8(a, lo=None, hi=None):
    v = a.astype(np.float64)
    if lo is None:
        finite = v[~np.isnan(v)]
        lo = np.percentile(finite, 0.5, method="lower")
        hi = np.percentile(finite, 99.5, method="lower")
    if lo == hi:
        out = np.where(v > lo, 255, 0)
    else:
        t = (v - lo) / (hi - lo) * 255.0
        out = np.floor(np.clip(t, 0, 255) + 0.5)
    return np.where(np.isnan(v), 0, out).astype(np.uint8)


def read_png(path):
    im = Image.open(path)
    return im, np.asarray(im)


@pytest.mark.parametrize("dtype", ["u1", "u2", "i2", "u4", "i4", "f4", "f8"])
def test_8bit_default_window_is_the_percentiles(tmp_path, dtype):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 250, (37, 53)).astype(dtype)
    a[3, 4] = 255 if dtype == "u1" else 30000  # an outlier
    p = tmp_path / "a.png"
    parload.save(p, a)
    im, got = read_png(p)
    assert im.mode == "L" and im.size == (53, 37)
    assert np.array_equal(got, expected8(a))
    # The window is the percentiles', not the extremes': the outlier
    # clips to white and the image still spans 0 to 255.
    assert got.min() == 0 and got.max() == 255


def test_8bit_window_given(tmp_path):
    a = np.arange(20 * 30, dtype=np.float32).reshape(20, 30) - 100.5
    a[0, 0] = np.nan
    p = tmp_path / "w.png"
    parload.save(p, a, window=(-50, 300))
    _, got = read_png(p)
    assert np.array_equal(got, expected8(a, -50.0, 300.0))
    assert got[0, 0] == 0 and got[0, 1] == 0 and got[-1, -1] == 255


def test_constant_image(tmp_path):
    a = np.full((4, 5), 9, np.uint16)
    parload.save(tmp_path / "c.png", a)
    _, got = read_png(tmp_path / "c.png")
    assert not got.any()


@pytest.mark.parametrize("dtype", ["u1", "u2", "i2", "u4", "i4"])
def test_16bit_unscaled_big_endian(tmp_path, dtype):
    a = (np.arange(12 * 7) * 700 % 65536).reshape(12, 7)
    if dtype in ("u1",):
        a = a % 256
    if dtype == "i2":
        a = a % 32768
    a = a.astype(dtype)
    p = tmp_path / "d.png"
    parload.save(p, a, png_depth=16)
    im, got = read_png(p)
    assert im.mode.startswith("I") and np.array_equal(got, a.astype(np.int64))
    # The file's own bytes: PNG's 16-bit samples are big-endian, each row
    # after a filter byte; with filter 0 (none) at row 0 the first row is
    # its values as >u2.  Read them through zlib, independently of Pillow.
    import struct
    import zlib
    raw = p.read_bytes()
    pos, idat = 8, b""
    while pos < len(raw):
        n, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", raw[pos + 8:pos + 18])
            assert (w, h, depth, colour) == (7, 12, 16, 0)
        if kind == b"IDAT":
            idat += raw[pos + 8:pos + 8 + n]
        pos += 12 + n
    rows = zlib.decompress(idat)
    assert len(rows) == 12 * (1 + 7 * 2)
    if rows[0] == 0:
        assert rows[1:15] == a[0].astype(">u2").tobytes()


def test_refusals(tmp_path):
    a = np.zeros((3, 4, 5), np.uint16)
    with pytest.raises(parload.Error, match="one image, not 3 views.*K:K\\+1"):
        parload.save(tmp_path / "m.png", a)
    with pytest.raises(parload.Error, match="integers unscaled, not f32"):
        parload.save(tmp_path / "f.png", a[0].astype(np.float32),
                     png_depth=16)
    with pytest.raises(parload.Error, match="does not fit 16-bit"):
        parload.save(tmp_path / "n.png", np.full((2, 2), -1, np.int16),
                     png_depth=16)
    with pytest.raises(parload.Error, match="does not fit 16-bit"):
        parload.save(tmp_path / "b.png", np.full((2, 2), 70000, np.uint32),
                     png_depth=16)
    with pytest.raises(ValueError, match="lo must be below hi"):
        parload.save(tmp_path / "x.png", a[0], window=(5, 5))
    with pytest.raises(ValueError, match="8 or 16"):
        parload.save(tmp_path / "x.png", a[0], png_depth=12)
    with pytest.raises(ValueError, match="PNG output only"):
        parload.save(tmp_path / "x.npy", a[0], window=(0, 1))
    with pytest.raises(parload.Error, match="window applies to 8-bit"):
        parload.save(tmp_path / "x.png", a[0], window=(0, 1), png_depth=16)
    assert not list(tmp_path.iterdir())


def test_force_and_temporary(tmp_path):
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    p = tmp_path / "e.png"
    parload.save(p, a)
    with pytest.raises(parload.Error, match="exists"):
        parload.save(p, a * 2)
    parload.save(p, a * 2, force=True, png_depth=16)
    assert np.array_equal(read_png(p)[1], a * 2)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["e.png"]


def test_png_is_not_read(tmp_path):
    parload.save(tmp_path / "a.png", np.zeros((2, 2), np.uint8))
    with pytest.raises(parload.Error, match="not read"):
        parload.load(tmp_path / "a.png")


# ---- the command ----

@pytest.fixture
def scan(tmp_path):
    rng = np.random.default_rng(3)
    px = rng.integers(0, 4000, (6, 10, 14)).astype(np.uint16)
    path = tmp_path / "s.raw"
    write_raw(path, px)
    return path, px


def test_extract_one_view(parload_bin, tmp_path, scan):
    path, px = scan
    out = tmp_path / "v.png"
    r = run_cli(parload_bin, "extract", "--views", "2:3", "-o", out, path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(read_png(out)[1], expected8(px[2]))
    out = tmp_path / "w.png"
    r = run_cli(parload_bin, "extract", "--views", "4:5", "--window",
                "100:3000.5", "-o", out, path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(read_png(out)[1], expected8(px[4], 100, 3000.5))
    out = tmp_path / "x.png"
    r = run_cli(parload_bin, "extract", "--views", "1:2", "--png-depth", "16",
                "-o", out, path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(read_png(out)[1], px[1])


def test_extract_one_sinogram(parload_bin, tmp_path, scan):
    path, px = scan
    out = tmp_path / "s.png"
    r = run_cli(parload_bin, "extract", "--rows", "7:8", "--layout",
                "sinograms", "--png-depth", "16", "-o", out, path)
    assert r.returncode == 0, r.stderr
    im, got = read_png(out)
    assert im.size == (14, 6) and np.array_equal(got, px[:, 7, :])


def test_extract_corrected(parload_bin, tmp_path, scan):
    path, px = scan
    dark = tmp_path / "d.raw"
    flat = tmp_path / "f.raw"
    write_raw(dark, np.full((2, 10, 14), 10, np.uint16))
    write_raw(flat, np.full((2, 10, 14), 5000, np.uint16))
    out = tmp_path / "c.png"
    r = run_cli(parload_bin, "extract", "--darks", dark, "--flats", flat,
                "--minus-log", "--views", "3:4", "-o", out, path)
    assert r.returncode == 0, r.stderr
    x = (px[3].astype(np.float32) - 10) / np.float32(4990)
    want = -np.log(np.maximum(x, np.float32(1e-6)))
    got = read_png(out)[1]
    # float32 in the library and here may differ in the last bit, which
    # may move a value across a rounding edge: at most one grey level.
    assert np.abs(got.astype(int) - expected8(want).astype(int)).max() <= 1


def test_extract_refusals(parload_bin, tmp_path, scan):
    path, _ = scan
    out = tmp_path / "r.png"
    r = run_cli(parload_bin, "extract", "-o", out, path)
    assert r.returncode == 1 and "one image, not 6 views" in r.stderr
    r = run_cli(parload_bin, "extract", "--rows", "0:2", "--layout",
                "sinograms", "-o", out, path)
    assert r.returncode == 1 and "not 2 sinograms" in r.stderr
    for bad, msg in ((["--window", "5:1"], "LO below HI"),
                     (["--window", "x"], "LO:HI"),
                     (["--png-depth", "12"], "8 or 16"),
                     (["--window", "1:2", "--png-depth", "16"],
                      "applies to 8-bit")):
        r = run_cli(parload_bin, "extract", "--views", "0:1", *bad, "-o",
                    out, path)
        assert r.returncode == 2 and msg in r.stderr, (bad, r.stderr)
    r = run_cli(parload_bin, "extract", "--window", "1:2", "-o",
                tmp_path / "r.npy", path)
    assert r.returncode == 2 and "PNG output only" in r.stderr
    r = run_cli(parload_bin, "extract", "--views", "0:1", "--format", "png",
                "-o", "-", path)
    assert r.returncode == 2 and "not to standard output" in r.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["s.raw"]
    # --force, as every output.
    r = run_cli(parload_bin, "extract", "--views", "0:1", "-o", out, path)
    assert r.returncode == 0
    r = run_cli(parload_bin, "extract", "--views", "1:2", "-o", out, path)
    assert r.returncode == 1 and "exists" in r.stderr
    r = run_cli(parload_bin, "extract", "--views", "1:2", "--force", "-o",
                out, path)
    assert r.returncode == 0
    assert sorted(q.name for q in tmp_path.iterdir()) == ["r.png", "s.raw"]
