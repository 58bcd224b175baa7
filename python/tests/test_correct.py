"""Corrected loads (flats=, darks=, reduce=, minus_log=, bin=) against a
float64 NumPy reference written here from the formulas of parload.h:
(P - D) / max(F - D, 1e-6), darks only P - D, then -ln(max(x, 1e-6));
mean or median (an even count: the mean of the two middle values) per
pixel.  Random scans of u16 (parload's format), u16be, f32 and mono12p
(raw layouts), both layouts, row bands, column crops, view steps,
references as files and as arrays, 1 to 4 threads."""

import numpy as np
import pytest

import parload
from conftest import write_raw

H, W, V = 6, 10, 7
EPS = 1e-6


def pack_mono12p(p):
    """Pixel pairs into 3 bytes: p0 low byte, p0 high nibble | p1 low
    nibble << 4, p1 >> 4 (issue 19's bit order)."""
    p = p.astype(np.uint16).reshape(-1, 2)
    p0, p1 = p[:, 0], p[:, 1]
    return np.stack([p0 & 0xFF, (p0 >> 8) | ((p1 & 0x0F) << 4), p1 >> 4],
                    axis=1).astype(np.uint8).tobytes()


def write(path, kind, frames):
    """frames (N, H, W) as a file of kind; its raw= (None: parload's)."""
    if kind == "u16":
        write_raw(path, frames.astype("<u2"))
        return None
    if kind == "mono12p":
        path.write_bytes(pack_mono12p(frames))
    else:
        path.write_bytes(frames.astype({"u16be": ">u2", "f32": "<f4"}
                                       [kind]).tobytes())
    return "width=%d,height=%d,type=%s" % (W, H, kind)


def reduce_ref(frames, how):
    f = frames.astype(np.float64)
    return f.mean(axis=0) if how == "mean" else np.median(f, axis=0)


def corrected(p, d, f, minus_log):
    x = p.astype(np.float64)
    if d is not None:
        x = x - d
    if f is not None:
        x = x / np.maximum(f - (d if d is not None else 0.0), EPS)
    return -np.log(np.maximum(x, EPS)) if minus_log else x


def frames_of(rng, kind, n, lo, hi):
    v = rng.integers(lo, hi, size=(n, H, W))
    if kind == "f32":
        v = v + rng.random((n, H, W))
    return v


def make_scan(tmp_path, rng, kind, ndark, nflat, how):
    """The scan, darks and flats of kind, written; the projections kept
    at least 0.05 away from the reduced darks (a float32 difference of
    nearly equal values would test rounding, not the formula)."""
    darks = frames_of(rng, kind, ndark, 90, 130)
    flats = frames_of(rng, kind, nflat, 2500, 3500)
    proj = frames_of(rng, kind, V, 40, 3400)
    d = reduce_ref(darks, how)
    proj = np.where(np.abs(proj - d) < 0.05, proj + 1, proj)
    raw = write(tmp_path / "scan", kind, proj)
    write(tmp_path / "darks", kind, darks)
    write(tmp_path / "flats", kind, flats)
    return raw, proj, darks, flats


def check(got, want):
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5,
                               atol=1e-6)


SELECTIONS = [
    dict(),
    dict(rows=(1, 5), layout="sinograms"),
    dict(cols=(2, 9), views=slice(0, None, 2)),
    dict(rows=(2, 3), cols=(4, 10), layout="sinograms", views=slice(1, 6, 3)),
]


@pytest.mark.parametrize("kind", ["u16", "u16be", "f32", "mono12p"])
@pytest.mark.parametrize("how,ndark,nflat", [("mean", 3, 4),
                                             ("median", 3, 5),
                                             ("median", 4, 2)])
@pytest.mark.parametrize("sel", range(len(SELECTIONS)))
@pytest.mark.parametrize("as_arrays", [False, True])
def test_matches_the_reference(tmp_path, kind, how, ndark, nflat, sel,
                               as_arrays):
    rng = np.random.default_rng([ndark, nflat, sel, len(kind)])
    raw, proj, darks, flats = make_scan(tmp_path, rng, kind, ndark, nflat,
                                        how)
    s = SELECTIONS[sel]
    rows = slice(*s.get("rows", (0, H)))
    cols = slice(*s.get("cols", (0, W)))
    views = s.get("views", slice(None))
    p = proj[views][:, rows, cols]
    d = reduce_ref(darks, how)[rows, cols]
    f = reduce_ref(flats, how)[rows, cols]
    refs = (dict(darks=darks, flats=flats) if as_arrays else
            dict(darks=str(tmp_path / "darks"), flats=str(tmp_path / "flats")))
    # Sinograms read, and (2 and 4 threads) copied from the mapped file.
    for threads, minus_log in ((1, False), (2, True), (3, False), (4, True)):
        with parload.Loader(threads=threads,
                            map_sinograms=threads % 2 == 0) as loader:
            ds = loader.load(str(tmp_path / "scan"), raw=raw, reduce=how,
                             minus_log=minus_log, **refs, **s)
        want = corrected(p, d, f, minus_log)
        if s.get("layout") == "sinograms":
            want = want.transpose(1, 0, 2)
        check(ds.pixels, want)


def test_darks_only_flats_only_and_log_alone(tmp_path):
    rng = np.random.default_rng(7)
    raw, proj, darks, flats = make_scan(tmp_path, rng, "u16be", 2, 3, "mean")
    scan = str(tmp_path / "scan")
    d, f = reduce_ref(darks, "mean"), reduce_ref(flats, "mean")
    check(parload.load(scan, raw=raw, darks=darks).pixels,
          corrected(proj, d, None, False))
    check(parload.load(scan, raw=raw, flats=flats[0]).pixels,
          corrected(proj, None, flats[0].astype(np.float64), False))
    check(parload.load(scan, raw=raw, darks=darks, minus_log=True).pixels,
          corrected(proj, d, None, True))
    check(parload.load(scan, raw=raw, minus_log=True).pixels,
          corrected(proj, None, None, True))
    # No correction asked: the file's pixels, as before.
    assert parload.load(scan, raw=raw).pixels.dtype == np.uint16


def test_arrays_of_other_types_are_converted(tmp_path):
    rng = np.random.default_rng(8)
    raw, proj, darks, flats = make_scan(tmp_path, rng, "u16", 2, 2, "mean")
    ds = parload.load(str(tmp_path / "scan"), darks=darks.astype(np.uint16),
                      flats=np.asfortranarray(flats.astype(np.float64)))
    check(ds.pixels, corrected(proj, reduce_ref(darks, "mean"),
                               reduce_ref(flats, "mean"), False))


def scan_file(tmp_path):
    rng = np.random.default_rng(9)
    make_scan(tmp_path, rng, "u16", 2, 2, "mean")
    return str(tmp_path / "scan")


def test_references_of_another_shape(tmp_path):
    scan = scan_file(tmp_path)
    with pytest.raises(ValueError) as e:
        parload.load(scan, flats=np.ones((2, H, W + 1), np.float32))
    assert "(2, 6, 11)" in str(e.value) and "(6, 10)" in str(e.value)
    with pytest.raises(ValueError) as e:
        parload.load(scan, darks=np.ones((H + 1, W), np.float32))
    assert "(7, 10)" in str(e.value) and "(6, 10)" in str(e.value)
    with pytest.raises(ValueError):
        parload.load(scan, darks=np.ones(W, np.float32))
    other = tmp_path / "other"
    write_raw(other, np.ones((2, H, W + 2), "<u2"))
    with pytest.raises(parload.Error) as e:
        parload.load(scan, darks=str(other))
    assert str(W + 2) in str(e.value) and str(W) in str(e.value)


def test_empty_references(tmp_path):
    scan = scan_file(tmp_path)
    with pytest.raises(ValueError, match="no frames"):
        parload.load(scan, darks=np.zeros((0, H, W), np.float32))


@pytest.mark.parametrize("kw", ["flats", "darks"])
def test_reference_file_without_frames(tmp_path, kw):
    """A reference file that holds no frames is refused naming it, not
    the scan: parload's own format of 0 views, an empty raw file."""
    scan = scan_file(tmp_path)
    zero = tmp_path / "zero.raw"
    write_raw(zero, np.zeros((0, H, W), "<u2"))
    what = kw[:-1]
    with pytest.raises(parload.Error) as e:
        parload.load(scan, **{kw: str(zero)})
    assert str(e.value) == f"{zero}: the {what} source holds no frames"
    empty = tmp_path / "empty.raw"
    empty.write_bytes(b"")
    raw = "width=%d,height=%d,type=u16" % (W, H)
    (tmp_path / "scan.raw").write_bytes(np.zeros((2, H, W), "<u2").tobytes())
    with pytest.raises(parload.Error) as e:
        parload.load(tmp_path / "scan.raw", raw=raw, **{kw: str(empty)})
    assert str(e.value) == f"{empty}: the {what} source holds no frames"


@pytest.mark.parametrize("kw", ["flats", "darks"])
def test_references_are_not_descriptors(tmp_path, kw):
    """An int (or an open file) is no reference set: flats=3 in a fresh
    interpreter named the library's own descriptor of the scan, which
    then "corrected" itself without a word.  Every way a correction is
    asked for refuses it, saying what is accepted."""
    scan = scan_file(tmp_path)
    flat = tmp_path / "flat.raw"
    write_raw(flat, np.ones((2, H, W), "<u2"))
    with open(flat, "rb") as f:
        for refs in (3, f.fileno(), True, f):
            for load in (lambda **k: parload.load(scan, **k),
                         lambda **k: parload.Loader().load(scan, **k),
                         lambda **k: parload.stream(scan, **k)):
                with pytest.raises(TypeError) as e:
                    load(**{kw: refs})
                msg = str(e.value)
                assert msg.startswith(f"{kw} must be a path (str, bytes "
                                      "or os.PathLike), a list of paths, "
                                      "'same' or an array of frames"), msg
                assert msg.endswith(f"not {type(refs).__name__}") or \
                    msg.endswith(f"not {type(refs).__module__}."
                                 f"{type(refs).__name__}"), msg
    # What is accepted still is.
    assert parload.load(scan, **{kw: str(flat)}).pixels.dtype == np.float32


def binned(a, n):
    """The mean of n x n pixels of the last two axes, from the first row
    and column; what does not fill a bin is dropped."""
    a = a.astype(np.float64)
    h, w = a.shape[-2] // n, a.shape[-1] // n
    a = a[..., :h * n, :w * n]
    return a.reshape(a.shape[:-2] + (h, n, w, n)).mean(axis=(-3, -1))


@pytest.mark.parametrize("kind", ["u16", "u16be", "f32", "mono12p"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("sel", range(len(SELECTIONS)))
def test_binning_matches_the_reference(tmp_path, kind, n, sel):
    """The scan and each reference frame binned first, then reduced,
    corrected and -log (issue 22's order), in either layout."""
    rng = np.random.default_rng([n, sel, len(kind), 22])
    how = ("mean", "median")[sel % 2]
    raw, proj, darks, flats = make_scan(tmp_path, rng, kind, 3, 4, how)
    s = SELECTIONS[sel]
    rows = slice(*s.get("rows", (0, H)))
    cols = slice(*s.get("cols", (0, W)))
    views = s.get("views", slice(None))
    rr, cc = proj[:, rows, cols].shape[1:]
    if n > rr or n > cols.stop - cols.start:
        with pytest.raises(parload.Error) as e:
            parload.load(str(tmp_path / "scan"), raw=raw, darks=darks,
                         bin=n, **s)
        assert e.value.code == "PARLOAD_ESELECT" and "bin" in str(e.value)
        return
    p = binned(proj[views][:, rows, cols], n)
    d = reduce_ref(binned(darks[:, rows, cols], n), how)
    f = reduce_ref(binned(flats[:, rows, cols], n), how)
    for threads in (1, 3):
        with parload.Loader(threads=threads,
                            map_sinograms=threads == 3) as loader:
            ds = loader.load(str(tmp_path / "scan"), raw=raw, reduce=how,
                             minus_log=True, bin=n, darks=darks,
                             flats=str(tmp_path / "flats"), **s)
        want = corrected(p, d, f, True)
        if s.get("layout") == "sinograms":
            want = want.transpose(1, 0, 2)
        assert ds.pixels.shape == want.shape
        check(ds.pixels, want)


def test_binning_alone_is_the_mean(tmp_path):
    rng = np.random.default_rng(12)
    raw, proj, darks, flats = make_scan(tmp_path, rng, "u16", 2, 2, "mean")
    ds = parload.load(str(tmp_path / "scan"), bin=2)
    check(ds.pixels, binned(proj, 2))
    assert ds.bin == 2
    assert ds.rows == range(0, H // 2 * 2, 2)
    assert ds.cols == range(0, W // 2 * 2, 2)
    assert parload.load(str(tmp_path / "scan")).bin == 1


@pytest.mark.parametrize("layout", ["views", "sinograms"])
def test_verify_checks_the_raw_rows(tmp_path, layout):
    """verify=True with a correction checks each payload's CRC-32C over
    the raw rows as they are read, before the correction."""
    rng = np.random.default_rng(13)
    proj = frames_of(rng, "u16", V, 40, 3400).astype("<u2")
    scan = tmp_path / "crc"
    write_raw(scan, proj, crc=True)
    darks = frames_of(rng, "u16", 2, 90, 130)
    for threads in (1, 2, 3):
        with parload.Loader(threads=threads, verify=True) as loader:
            ds = loader.load(str(scan), darks=darks, layout=layout)
        assert ds.stats["crc_checked"] == V
        want = corrected(proj, reduce_ref(darks, "mean"), None, False)
        if layout == "sinograms":
            want = want.transpose(1, 0, 2)
        check(ds.pixels, want)
    data = bytearray(scan.read_bytes())
    data[64 + 3 * (32 + H * W * 2) + 32 + 5] ^= 0xFF  # view 3's pixels
    scan.write_bytes(bytes(data))
    with pytest.raises(parload.Error) as e:
        parload.load(str(scan), darks=darks, layout=layout, verify=True)
    assert e.value.code == "PARLOAD_ECRC" and e.value.view == 3
    with pytest.raises(parload.Error) as e:
        parload.load(str(scan), darks=darks, verify=True, rows=(0, 2))
    assert e.value.code == "PARLOAD_ENOTSUP" and "CRC" in str(e.value)


def test_reduce_and_bin_are_checked(tmp_path):
    scan = scan_file(tmp_path)
    with pytest.raises(ValueError, match="reduce"):
        parload.load(scan, darks=str(tmp_path / "darks"), reduce="max")
    with pytest.raises(ValueError, match="bin"):
        parload.load(scan, darks=str(tmp_path / "darks"), bin=0)


@pytest.mark.parametrize("window", [None, 3 * H * W * 4])
@pytest.mark.parametrize("as_arrays", [False, True])
def test_stream_batches_are_corrected(tmp_path, window, as_arrays):
    rng = np.random.default_rng(10)
    raw, proj, darks, flats = make_scan(tmp_path, rng, "mono12p", 3, 4,
                                        "median")
    refs = (dict(darks=darks, flats=flats) if as_arrays else
            dict(darks=str(tmp_path / "darks"), flats=str(tmp_path / "flats")))
    want = corrected(proj[1:][:, 1:5, 2:8],
                     reduce_ref(darks, "median")[1:5, 2:8],
                     reduce_ref(flats, "median")[1:5, 2:8], True)
    got = []
    with parload.stream(str(tmp_path / "scan"), raw=raw, batch_views=2,
                        window=window, views=slice(1, None), rows=(1, 5),
                        cols=(2, 8), reduce="median", minus_log=True,
                        threads=2, **refs) as s:
        for b in s:
            assert b.pixels.dtype == np.float32
            got.append(np.array(b.pixels))
    check(np.concatenate(got), want)


def test_dask_chunks_are_corrected(tmp_path):
    pytest.importorskip("dask")
    import parload.dask

    rng = np.random.default_rng(11)
    raw, proj, darks, flats = make_scan(tmp_path, rng, "u16be", 2, 3, "mean")
    arr = parload.dask.from_file(str(tmp_path / "scan"), (3, 4, 5), raw=raw,
                                 darks=str(tmp_path / "darks"), flats=flats,
                                 minus_log=True, layout="sinograms")
    assert arr.dtype == np.float32
    want = corrected(proj, reduce_ref(darks, "mean"),
                     reduce_ref(flats, "mean"), True).transpose(1, 0, 2)
    check(arr.compute(scheduler="synchronous"), want)
