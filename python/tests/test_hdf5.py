"""HDF5 sources read by parload against h5py's reading of the same files,
written here with h5py: contiguous, chunked by views and by bands of
rows, gzip with and without shuffle, big-endian, 2-D, chunks that cut
views (read through libhdf5), DXchange and NXtomo files and every pixel
type; whole loads, view steps, rows, columns and sinograms on 1 to 3
threads; frames, angles, dataset names, describe, stream, dask and
corrected loads; datasets behind external links and in external storage,
against h5py; the errors of what is not read."""

import re
import struct

import numpy as np
import pytest

import parload
from conftest import run_cli, write_raw
from test_correct import check, corrected, reduce_ref

h5py = pytest.importorskip("h5py")

V, H, W = 13, 17, 19


def pixels(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True,
                        dtype=dtype.newbyteorder("="))


# (name, dtype, h5py.create_dataset keywords): one dataset each.
LAYOUTS = [
    ("contiguous", "u2", {}),
    ("chunks-1HW", "u2", {"chunks": (1, H, W)}),
    ("chunks-15W", "i4", {"chunks": (1, 5, W)}),
    ("gzip-shuffle", "u2", {"chunks": (1, H, W), "compression": "gzip",
                            "compression_opts": 4, "shuffle": True}),
    ("gzip", "f4", {"chunks": (1, 5, W), "compression": "gzip"}),
    ("big-endian-i2", ">i2", {}),
    ("big-endian-f4", ">f4", {"chunks": (1, 6, W), "compression": "gzip",
                              "shuffle": True}),
    ("chunks-444", "u2", {"chunks": (4, 4, 4)}),
]

SELECTIONS = [
    {},
    {"views": slice(2, 11, 3)},
    {"rows": (3, 14)},
    {"cols": (5, 16)},
    {"views": slice(1, 12, 2), "rows": (4, 13), "cols": (2, 17),
     "layout": "sinograms"},
]


def expected(d, sel):
    """What a selection of h5py dataset d must load as, sliced by h5py."""
    v = sel.get("views", slice(None))
    r = slice(*sel.get("rows", (None, None)))
    c = slice(*sel.get("cols", (None, None)))
    if sel.get("layout") == "sinograms":
        # The usual h5py idiom: a band of rows, then the transpose.
        return np.ascontiguousarray(d[v, r, :].transpose(1, 0, 2)[..., c])
    return d[v, r, c]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    path = tmp_path_factory.mktemp("h5") / "layouts.h5"
    with h5py.File(path, "w") as f:
        for i, (name, dtype, kw) in enumerate(LAYOUTS):
            f.create_dataset(name, data=pixels((V, H, W), dtype, i),
                             dtype=dtype, **kw)
    return path


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("sel", SELECTIONS)
@pytest.mark.parametrize("name", [x[0] for x in LAYOUTS])
def test_load_equals_h5py(layouts, name, sel, threads):
    with h5py.File(layouts, "r") as f:
        want = expected(f[name], sel)
    ds = parload.load(layouts, dataset=name, threads=threads, **sel)
    assert ds.pixels.dtype == want.dtype.newbyteorder("=")
    assert ds.pixels.shape == want.shape
    assert np.array_equal(ds.pixels, want)


def test_chunks_that_cut_views_are_read_by_the_pool(layouts):
    # (4, 4, 4) chunks: four frames each, tiles across the rows; each
    # chunk is decoded once by a worker, nothing through libhdf5.
    with h5py.File(layouts, "r") as f:
        want = f["chunks-444"][()]
        chunks = f["chunks-444"].id.get_num_chunks()
    ds = parload.load(layouts, dataset="chunks-444", threads=3)
    assert np.array_equal(ds.pixels, want)
    assert ds.stats["serial"] is None
    assert ds.stats["codec"] == "none"  # stored as they are, in tiles
    assert 0 < ds.stats["strips_decoded"] <= 3 * chunks


def test_uncompressed_and_gzip_chunks_are_not_serial(layouts):
    # Uncompressed chunks of whole rows go straight into place.
    ds = parload.load(layouts, dataset="chunks-15W", threads=3)
    assert ds.stats["serial"] is None and ds.stats["strips_decoded"] == 0
    # Deflate chunks are inflated by the workers: each chunk once, and
    # once more where a worker's share of the views begins inside a view.
    for threads in (1, 3):
        ds = parload.load(layouts, dataset="gzip-shuffle", threads=threads)
        assert ds.stats["serial"] is None
        assert V <= ds.stats["strips_decoded"] <= V + threads - 1
    # A band of rows inflates only the chunks that hold it.
    ds = parload.load(layouts, dataset="gzip", threads=2, rows=(0, 5))
    assert ds.stats["strips_decoded"] == V
    ds = parload.load(layouts, dataset="gzip", threads=1, rows=(4, 6))
    assert ds.stats["strips_decoded"] == 2 * V


@pytest.mark.parametrize("dtype", ["u1", "u2", "i2", "u4", "i4", "f4", "f8",
                                   ">u2", ">i2", ">u4", ">i4", ">f4", ">f8"])
@pytest.mark.parametrize("chunked", [False, True])
def test_every_pixel_type(tmp_path, dtype, chunked):
    a = pixels((4, 9, 11), dtype, 7)
    p = tmp_path / "t.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("/t", data=a, dtype=dtype,
                         **({"chunks": (1, 3, 11), "compression": "gzip",
                             "shuffle": True} if chunked else {}))
    ds = parload.load(p, threads=2)
    assert ds.pixels.dtype == np.dtype(dtype).newbyteorder("=")
    assert np.array_equal(ds.pixels, a)
    d = parload.describe(p)
    assert d["format"] == "hdf5" and d["dtype"] == ds.pixels.dtype
    assert (d["count"], d["height"], d["width"]) == a.shape
    assert d["type"].endswith("be") == dtype.startswith(">")


def test_2d_dataset_is_one_view(tmp_path):
    a = pixels((H, W), "u2", 8)
    p = tmp_path / "two.h5"
    with h5py.File(p, "w") as f:
        f["/frame"] = a
    # Without a name only a 3-D dataset is chosen.
    raises(p, "PARLOAD_EINVAL", "has no dataset given and 0 3-D datasets")
    ds = parload.load(p, dataset="frame")
    assert ds.pixels.shape == (1, H, W)
    assert np.array_equal(ds.pixels[0], a)
    ds = parload.load(str(p) + ":/frame", cols=(2, 9), layout="sinograms")
    assert np.array_equal(ds.pixels, a[:, None, 2:9])


# ---- DXchange and NXtomo ----

def scan_frames(seed=9):
    """(projections, flats, darks, theta): values a correction divides
    by safely (flats well above darks)."""
    rng = np.random.default_rng(seed)
    proj = rng.integers(400, 3000, (V, H, W)).astype(np.uint16)
    flats = rng.integers(3200, 3600, (3, H, W)).astype(np.uint16)
    darks = rng.integers(90, 130, (2, H, W)).astype(np.uint16)
    theta = np.linspace(0, 180, V, endpoint=False)
    return proj, flats, darks, theta


@pytest.fixture(scope="module")
def dxchange(tmp_path_factory):
    proj, flats, darks, theta = scan_frames()
    p = tmp_path_factory.mktemp("dx") / "scan.h5"
    with h5py.File(p, "w") as f:
        f.attrs["implements"] = "exchange"
        f.create_dataset("/exchange/data", data=proj, chunks=(1, H, W),
                         compression="gzip", shuffle=True)
        f["/exchange/data_white"] = flats
        f["/exchange/data_dark"] = darks
        f["/exchange/theta"] = theta
    return p, (proj, flats, darks, theta)


# NXtomo: where the data and image_key lie and where rotation_angle is.
NX_LAYOUTS = {
    "nxdata": ("/entry", "/entry/data", "/entry/data/rotation_angle"),
    "detector": ("/entry", "/entry/instrument/detector",
                 "/entry/sample/rotation_angle"),
    "other-entry": ("/scan_3", "/scan_3/instrument/detector",
                    "/scan_3/sample/rotation_angle"),
}


@pytest.fixture(scope="module", params=sorted(NX_LAYOUTS))
def nxtomo(tmp_path_factory, request):
    """An NXtomo file: darks, flats, the projections, flats again, with
    image_key 2, 1, 0, 1 and angles for every frame."""
    proj, flats, darks, theta = scan_frames(10)
    entry, group, angle = NX_LAYOUTS[request.param]
    data = np.concatenate([darks, flats[:2], proj, flats[2:]])
    key = np.array([2] * len(darks) + [1] * 2 + [0] * V +
                   [1] * (len(flats) - 2), np.int32)
    angles = np.concatenate([np.zeros(len(darks) + 2), theta,
                             np.full(len(flats) - 2, 180.0)])
    p = tmp_path_factory.mktemp("nx") / "scan.nxs"
    with h5py.File(p, "w") as f:
        # NX_class as fixed-length ASCII (see test_nx_class_in_utf8).
        f.create_group(entry).attrs["NX_class"] = np.bytes_(b"NXentry")
        f.create_dataset(group + "/data", data=data, chunks=(1, H, W))
        f[group + "/image_key"] = key
        f[angle] = angles
    return p, (proj, flats, darks, theta), group + "/data", request.param


def test_dxchange_frames_and_angles(dxchange):
    p, (proj, flats, darks, theta) = dxchange
    ds = parload.load(p, threads=3)
    assert np.array_equal(ds.pixels, proj)
    assert np.array_equal(ds.angles, theta.astype(np.float32))
    ds = parload.load(p, views=slice(1, 12, 4), layout="sinograms")
    assert np.array_equal(ds.angles, theta[1:12:4].astype(np.float32))
    assert np.array_equal(ds.pixels, proj[1:12:4].transpose(1, 0, 2))
    assert np.array_equal(parload.load(p, frames="flats").pixels, flats)
    assert np.array_equal(parload.load(p, frames="darks").pixels, darks)
    # By name, as dataset= and as "FILE.h5:/name".
    for ds in (parload.load(p, dataset="/exchange/data_white"),
               parload.load(str(p) + ":/exchange/data_white")):
        assert np.array_equal(ds.pixels, flats)


def test_nxtomo_frames(nxtomo):
    p, (proj, flats, darks, _), name, _ = nxtomo
    assert np.array_equal(parload.load(p, threads=2).pixels, proj)
    ds = parload.load(p, frames="projections", views=(3, 9), rows=(2, 7),
                      layout="sinograms")
    assert np.array_equal(ds.pixels, proj[3:9, 2:7].transpose(1, 0, 2))
    assert np.array_equal(parload.load(p, frames="flats").pixels, flats)
    assert np.array_equal(parload.load(p, frames="darks").pixels, darks)
    assert parload.describe(p, frames="flats")["count"] == len(flats)
    # Named, the dataset's frames are still picked by its image_key.
    ds = parload.load(str(p) + ":" + name, frames="darks")
    assert np.array_equal(ds.pixels, darks)


def test_unwritten_chunks_of_frames_not_loaded(tmp_path):
    # Only the chunks of the frames loaded decide whether the workers
    # read them: a dark frame never written sends the darks through
    # libhdf5 (its fill value), not the projections.
    proj, flats, darks, _ = scan_frames(10)
    p = tmp_path / "gap.nxs"
    with h5py.File(p, "w") as f:
        f.create_group("entry").attrs["NX_class"] = np.bytes_(b"NXentry")
        d = f.create_dataset("entry/data/data", (V + 2, H, W), "u2",
                             chunks=(1, H, W), fillvalue=7)
        d[:V] = proj
        d[V] = darks[0]
        f["entry/data/image_key"] = np.array([0] * V + [2, 2], np.int32)
    ds = parload.load(p, threads=2)
    assert np.array_equal(ds.pixels, proj) and ds.stats["serial"] is None
    ds = parload.load(p, frames="darks")
    assert np.array_equal(ds.pixels[0], darks[0])
    assert (ds.pixels[1] == 7).all()
    assert "not all written" in ds.stats["serial"]


@pytest.mark.parametrize("named", [False, True])
def test_nxtomo_angles(nxtomo, named):
    p, (_, _, _, theta), name, layout = nxtomo
    kw = {"dataset": name} if named else {}
    ds = parload.load(p, views=(3, 9), **kw)
    assert np.array_equal(ds.angles, theta[3:9].astype(np.float32))
    fl = parload.load(p, frames="flats", **kw)
    assert np.array_equal(fl.angles, np.array([0, 0, 180], np.float32))


def test_nx_class_in_utf8(tmp_path):
    proj, _, darks, theta = scan_frames(12)
    p = tmp_path / "utf8.nxs"
    with h5py.File(p, "w") as f:
        f.create_group("scan_3").attrs["NX_class"] = "NXentry"  # vlen UTF-8
        f["/scan_3/instrument/detector/data"] = np.concatenate([darks, proj])
        f["/scan_3/instrument/detector/image_key"] = [2] * len(darks) + \
            [0] * V
        f["/scan_3/sample/rotation_angle"] = np.concatenate(
            [np.zeros(len(darks)), theta])
        f["/other"] = proj
    ds = parload.load(p)
    assert np.array_equal(ds.pixels, proj)
    assert np.array_equal(ds.angles, theta.astype(np.float32))


def test_describe(dxchange, nxtomo):
    d = parload.describe(dxchange[0])
    assert (d["format"], d["type"], d["count"], d["height"], d["width"]) == \
        ("hdf5", "u16", V, H, W)
    d = parload.describe(dxchange[0], dataset="/exchange/data_dark")
    assert d["count"] == 2
    p, _, name, _ = nxtomo
    # A named NXtomo dataset's projections (its image_key 0).
    assert parload.describe(p, dataset=name)["count"] == V


@pytest.mark.parametrize("batch", [1, 4])
def test_stream_batches(dxchange, batch):
    p, (proj, _, _, theta) = dxchange
    starts = []
    with parload.stream(p, batch_views=batch, views=(2, 12)) as s:
        for b in s:
            v = slice(b.views.start, b.views.stop)
            assert np.array_equal(b.pixels, proj[v])
            assert np.array_equal(b.headers["angle_deg"],
                                  theta[v].astype(np.float32))
            starts.append(b.views.start)
    assert starts == list(range(2, 12, batch))


def test_dask(dxchange, nxtomo):
    pytest.importorskip("dask")
    import parload.dask
    p, (proj, flats, _, _) = dxchange
    a = parload.dask.from_file(p, chunks=(4, -1, -1),
                               dataset="/exchange/data")
    assert a.shape == proj.shape
    assert np.array_equal(a.compute(), proj)
    a = parload.dask.from_file(p, frames="flats", layout="sinograms")
    assert np.array_equal(a.compute(), flats.transpose(1, 0, 2))
    a = parload.dask.from_file(p, chunks=(4, -1, -1), flats="same",
                               darks="same", minus_log=True)
    check(a.compute(), correction_want(dxchange[1], "mean", {}, True))
    p, (proj, _, _, _), _, _ = nxtomo
    assert np.array_equal(parload.dask.from_file(p).compute(), proj)


# ---- corrected loads ----

CORRECTIONS = [
    ({}, False),
    ({"rows": (4, 12), "layout": "sinograms"}, True),
    ({"views": slice(0, 13, 5), "cols": (3, 15)}, True),
]


def correction_want(scan, how, sel, minus_log):
    proj, flats, darks, _ = scan
    v = sel.get("views", slice(None))
    r = slice(*sel.get("rows", (None, None)))
    c = slice(*sel.get("cols", (None, None)))
    want = corrected(proj, reduce_ref(darks, how), reduce_ref(flats, how),
                     minus_log)[v, r, c]
    return want.transpose(1, 0, 2) if sel.get("layout") == "sinograms" \
        else want


@pytest.mark.parametrize("how", ["mean", "median"])
@pytest.mark.parametrize("sel,minus_log", CORRECTIONS)
def test_corrected_by_dataset_names(dxchange, how, sel, minus_log):
    p, scan = dxchange
    ds = parload.load(p, threads=2, flats=str(p) + ":/exchange/data_white",
                      darks=str(p) + ":/exchange/data_dark", reduce=how,
                      minus_log=minus_log, **sel)
    check(ds.pixels, correction_want(scan, how, sel, minus_log))


@pytest.mark.parametrize("sel,minus_log", CORRECTIONS)
def test_corrected_by_same(dxchange, nxtomo, sel, minus_log):
    """flats="same", darks="same": the scan's own file's references,
    DXchange's data_white and data_dark, NXtomo's image_key 1 and 2."""
    for p, scan in (dxchange, nxtomo[:2]):
        ds = parload.load(p, threads=3, flats="same", darks="same",
                          minus_log=minus_log, **sel)
        check(ds.pixels, correction_want(scan, "mean", sel, minus_log))
    # A named NXtomo dataset: its own image_key picks the references.
    p, scan, name, _ = nxtomo
    ds = parload.load(p, dataset=name, flats="same", darks="same",
                      reduce="median", minus_log=minus_log, **sel)
    check(ds.pixels, correction_want(scan, "median", sel, minus_log))
    # DXchange's /exchange/data named, in either way: its references are
    # still data_white and data_dark.
    p, scan = dxchange
    for kw in ({"dataset": "/exchange/data"}, {}):
        src = str(p) if kw else str(p) + ":/exchange/data"
        ds = parload.load(src, flats="same", darks="same",
                          minus_log=minus_log, **kw, **sel)
        check(ds.pixels, correction_want(scan, "mean", sel, minus_log))


def test_same_in_stream_and_loader(dxchange):
    p, scan = dxchange
    want = correction_want(scan, "mean", {}, True)
    with parload.stream(p, batch_views=5, flats="same", darks="same",
                        minus_log=True) as s:
        for b in s:
            check(b.pixels, want[b.views.start:b.views.stop])
    with parload.Loader(threads=2) as loader:
        check(loader.load(p, flats="same", darks="same",
                          minus_log=True).pixels, want)


def test_same_on_the_command_line(tmp_path, parload_bin, dxchange):
    p, scan = dxchange
    out = tmp_path / "x.npy"
    res = run_cli(parload_bin, "extract", "--flats", "same", "--darks",
                  "same", "--minus-log", "--rows", "4:12", "--layout",
                  "sinograms", "-o", out, p)
    assert res.returncode == 0, res.stderr
    sel = {"rows": (4, 12), "layout": "sinograms"}
    check(np.load(out), correction_want(scan, "mean", sel, True))


def test_same_refused_where_no_container(tmp_path, rng, parload_bin):
    raw = tmp_path / "s.raw"
    write_raw(raw, rng.integers(0, 999, (3, H, W)).astype(np.uint16))
    with pytest.raises(ValueError, match="flats='same' names the references "
                       "stored in the scan's own HDF5 file, and '.*s.raw' "
                       "is not an HDF5 file"):
        parload.load(raw, flats="same")
    spec = "width=%d,height=%d,type=u16,offset=64,header=32" % (W, H)
    with pytest.raises(ValueError, match="darks='same' .* is a raw layout"):
        parload.load(raw, raw=spec, darks="same")
    with open(raw, "rb") as f, pytest.raises(ValueError,
                                             match="an open file"):
        parload.load(f, darks="same")
    res = run_cli(parload_bin, "--darks", "same", raw)
    assert res.returncode == 1
    assert "--darks same names the references stored in the scan's own " \
        "HDF5 file, and this is not an HDF5 file" in res.stderr


def test_same_without_references_in_the_file(layouts):
    raises(layouts, "PARLOAD_EINVAL", "no flats: no image_key beside it",
           dataset="contiguous", flats="same")


# ---- bad input ----

@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    p = tmp_path_factory.mktemp("bad") / "bad.h5"
    a = pixels((3, 4, 5), "u2", 11)
    with h5py.File(p, "w") as f:
        f["/one"] = a
        f["/g/two"] = a
        f["/flat"] = a[0]
        f["/four"] = a.reshape(3, 4, 5, 1)
        f["/pairs"] = np.zeros((2, 3, 4), [("x", "<u2"), ("y", "<f4")])
    return p


def raises(path, code, match, **kw):
    with pytest.raises(parload.Error, match=match) as e:
        parload.load(path, **kw)
    assert e.value.code == code
    assert str(path) in str(e.value)


def test_missing_dataset_lists_candidates(bad):
    raises(bad, "PARLOAD_EINVAL", "no dataset /nope; its 3-D datasets: "
           "/g/two, /one, /pairs", dataset="nope")
    raises(bad, "PARLOAD_EINVAL", "no dataset /g/three",
           dataset="/g/three")


def test_several_3d_datasets_and_none_named(bad):
    raises(bad, "PARLOAD_EINVAL", "has no dataset given and 3 3-D datasets: "
           "/g/two, /one, /pairs")


def test_compound_and_4d_refused(bad):
    raises(bad, "PARLOAD_ENOTSUP", "/pairs: a compound type",
           dataset="/pairs")
    raises(bad, "PARLOAD_ENOTSUP", "/four: a 4-D dataset", dataset="/four")


def test_frames_of_a_file_without_them(bad, dxchange):
    raises(bad, "PARLOAD_EINVAL", "no image_key beside it",
           dataset="/one", frames="flats")
    with pytest.raises(ValueError, match="frames: unknown frames 'whites' "
                       r"\(projections, flats or darks\)"):
        parload.load(dxchange[0], frames="whites")


def test_truncated_file(tmp_path, dxchange):
    whole = dxchange[0].read_bytes()
    p = tmp_path / "cut.h5"
    p.write_bytes(whole[:len(whole) // 2])
    raises(p, "PARLOAD_ETRUNCATED", "a truncated HDF5 file")


def test_info_and_load_on_the_command_line(parload_bin, dxchange):
    """parload info and parload --json describe an HDF5 file as the
    library reads it: its format, shape, and for flats their count."""
    import json
    p, scan = dxchange
    res = run_cli(parload_bin, "info", "--json", p)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["valid"] and info["layout"]["format"] == "hdf5"
    assert (info["layout"]["count"], info["layout"]["height"],
            info["layout"]["width"]) == scan[0].shape
    res = run_cli(parload_bin, "info", "--json", "--frames", "flats", p)
    assert json.loads(res.stdout)["layout"]["count"] == len(scan[1])
    res = run_cli(parload_bin, "--json", p)
    assert res.returncode == 0, res.stderr
    load = json.loads(res.stdout)
    assert load["format"] == "hdf5" and load["views"] == len(scan[0])


def filter_named_badly(path, filter_id=None):
    """A chunked gzip file with h5py's fletcher32 filter, whose name as
    the file stores it starts with 0xff (not UTF-8), and whose id is
    filter_id if given; its pixels."""
    px = pixels((4, 8, 16), np.uint16, 7)
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=px, chunks=(1, 8, 16),
                         compression="gzip", fletcher32=True)
    b = bytearray(path.read_bytes())
    i = b.find(b"fletcher32")
    assert i > 8 and b.count(b"fletcher32") == 1
    # The filter's record in the pipeline message: id (2 bytes), name
    # length, flags, values, then the name.
    assert b[i - 8:i - 6] == b"\x03\x00"
    b[i] = 0xFF
    if filter_id is not None:
        b[i - 8:i - 6] = filter_id.to_bytes(2, "little")
    path.write_bytes(bytes(b))
    return px


def test_text_from_the_file_that_is_not_utf8(tmp_path):
    """A filter's name stored as bytes that are not UTF-8 reaches Python
    with those bytes escaped: in Dataset.stats (the serial reason) and
    in an error's message, which prints."""
    p = tmp_path / "f.h5"
    px = filter_named_badly(p)
    ds = parload.load(p, dataset="data")
    assert np.array_equal(ds.pixels, px)
    serial = ds.stats["serial"]
    assert "filter 3 (\\xffletcher32)" in serial, serial
    with parload.stream(p, dataset="data", batch_views=2) as s:
        assert sum(len(b.pixels) for b in s) == 4
        assert s.stats["serial"] == serial
    q = tmp_path / "g.h5"
    filter_named_badly(q, filter_id=65000)
    with pytest.raises(parload.Error) as e:
        parload.load(q, dataset="data")
    msg = str(e.value)
    assert "65000 (\\xffletcher32)" in msg, msg
    msg.encode("utf-8")  # prints on a UTF-8 terminal
    assert e.value.filename == str(q)


def claims_frames(tmp_path, frames, chunks):
    """A 3 x 6 x 5 u16 dataset /scan written by h5py, then its first
    dimension patched to frames: its dataspace message holds the shape,
    then the same maximum; only the first changes (libhdf5 opens a
    dimension past its maximum)."""
    p = tmp_path / "claims.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("scan", data=np.arange(90, dtype="u2").reshape(
            3, 6, 5), chunks=chunks)
    b = bytearray(p.read_bytes())
    shape = struct.pack("<6Q", 3, 6, 5, 3, 6, 5)
    at = b.find(shape)
    assert at >= 0 and b.find(shape, at + 1) < 0
    b[at:at + 8] = struct.pack("<Q", frames)
    p.write_bytes(b)
    with h5py.File(p, "r") as f:
        assert f["scan"].shape == (frames, 6, 5)
    return p


@pytest.mark.parametrize("chunks", [None, (1, 6, 5)])
def test_frames_past_memory(tmp_path, parload_bin, chunks):
    """2^62 + 1 frames (tables of which once wrapped to a few bytes and
    were written past) and 2^40 (32 TiB of tables) are refused before any
    table is made, naming the bytes: load, describe, the command."""
    p = claims_frames(tmp_path, 2**62 + 1, chunks)
    says = ("4611686018427387905 table entries (the frames of /scan) of 32 "
            "bytes need more bytes than 64 bits count")
    raises(p, "PARLOAD_ENOMEM", re.escape(says))
    with pytest.raises(parload.Error, match=re.escape(says)):
        parload.describe(p)
    for args in ([], ["extract", "-o", tmp_path / "out.raw"], ["info"]):
        res = run_cli(parload_bin, *args, p)
        assert res.returncode == 1, (args, res.returncode, res.stderr)
        assert args == ["info"] or says in res.stderr, res.stderr
    p = claims_frames(tmp_path, 2**40, chunks)
    raises(p, "PARLOAD_ENOMEM", re.escape(
        "1099511627776 table entries (the frames of /scan) of 32 bytes "
        "need 35184372088832 bytes, more than the "))


def angle_files(tmp_path, angles, units):
    """An NXtomo file and a DXchange file of the same projections whose
    rotation_angle and theta are angles, with a units attribute (none
    where units is None)."""
    proj, _, _, _ = scan_frames(10)
    nx, dx = tmp_path / "angles.nxs", tmp_path / "angles.h5"
    with h5py.File(nx, "w") as f:
        f.create_group("entry").attrs["NX_class"] = np.bytes_(b"NXentry")
        f["entry/data/data"] = proj
        f["entry/data/image_key"] = np.zeros(V, np.int32)
        f["entry/data/rotation_angle"] = angles
        if units is not None:
            f["entry/data/rotation_angle"].attrs["units"] = units
    with h5py.File(dx, "w") as f:
        f["exchange/data"] = proj
        f["exchange/theta"] = angles
        if units is not None:
            f["exchange/theta"].attrs["units"] = units
    return proj, nx, dx


@pytest.mark.parametrize("units", ["rad", "radians", np.bytes_(b"radian"),
                                   np.bytes_(b"Rad")])
def test_angles_in_radians_are_degrees(tmp_path, units):
    """Angles whose units attribute says radians (a string h5py writes,
    variable-length, or fixed-length bytes) come in degrees, the angles
    times 180 / pi, in Dataset.angles and in the view headers."""
    _, _, _, theta = scan_frames(10)
    rad = np.radians(theta)
    proj, nx, dx = angle_files(tmp_path, rad, units)
    want = (rad * (180 / np.pi)).astype(np.float32)
    for p in (nx, dx):
        ds = parload.load(p, threads=2)
        assert np.array_equal(ds.pixels, proj)
        assert np.array_equal(ds.angles, want), (p, ds.angles, want)
        assert np.allclose(ds.angles, theta, atol=1e-4)
        assert np.array_equal(ds.headers["angle_deg"], want)
        ds = parload.load(p, views=slice(2, 11, 4))
        assert np.array_equal(ds.angles, want[2:11:4])


@pytest.mark.parametrize("units", [None, "deg", "degrees",
                                   np.bytes_(b"degree")])
def test_angles_in_degrees_are_as_stored(tmp_path, units):
    _, _, _, theta = scan_frames(10)
    _, nx, dx = angle_files(tmp_path, theta, units)
    for p in (nx, dx):
        assert np.array_equal(parload.load(p).angles,
                              theta.astype(np.float32))


def test_angles_in_other_units_refused(tmp_path):
    _, _, _, theta = scan_frames(10)
    _, nx, dx = angle_files(tmp_path, theta, "mrad")
    raises(nx, "PARLOAD_ENOTSUP", re.escape(
        '/entry/data/rotation_angle: angles in units "mrad" (parload reads '
        'deg, degree, degrees, rad, radian, radians)'))
    raises(dx, "PARLOAD_ENOTSUP", re.escape(
        '/exchange/theta: angles in units "mrad"'))


@pytest.mark.parametrize("x", [2, 1])
def test_chunk_key_off_its_element_coordinate(tmp_path, x):
    """A chunk B-tree key (h5py's chunks of a view) whose trailing
    coordinate, the element's, is not 0: libhdf5 finds no chunk there at
    2 (h5py reads the frame as fill values); parload refuses the index as
    corrupt, naming the key's byte offset, rather than read the chunk."""
    data = pixels((3, 4, 6), "u2", 5) | 1
    p = tmp_path / "key.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("scan", data=data, chunks=(1, 4, 6))
    b = bytearray(p.read_bytes())
    tree = b.find(b"TREE\x01")          # a chunk node (type 1)
    key = tree + 24                     # its first key, of frame 0
    assert struct.unpack_from("<I4Q", b, key) == (4 * 6 * 2, 0, 0, 0, 0)
    struct.pack_into("<Q", b, key + 8 + 3 * 8, x)
    p.write_bytes(b)
    if x == 2:
        with h5py.File(p, "r") as f:
            assert not f["scan"][0].any() and (f["scan"][1] == data[1]).all()
    raises(p, "PARLOAD_ECONTAINER", re.escape(
        "/scan: a corrupt chunk index: a key's coordinate 4 of 4 is %d, "
        "where the element's is always 0" % x))
    with pytest.raises(parload.Error, match=r"\(byte offset %d\)" % key):
        parload.load(p)


# ---- datasets in other files: external links and external storage ----

@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """A master file of external links (NeXus, Eiger) to a data file
    whose datasets all lie past the master's end."""
    d = tmp_path_factory.mktemp("linked")
    a = pixels((V, H, W), "u2", 21)
    with h5py.File(d / "data_000001.h5", "w") as f:
        f["pad"] = np.zeros(16384, "u1")
        f["/entry/data/data"] = a
        f.create_dataset("chunked", data=a, chunks=(1, H, W))
        f.create_dataset("deflate", data=a, chunks=(1, 6, W),
                         compression="gzip", shuffle=True)
        f.create_dataset("cut", data=a, chunks=(4, 4, 4))
    with h5py.File(d / "master.h5", "w") as f:
        f["/entry/data/data_000001"] = h5py.ExternalLink(
            "data_000001.h5", "/entry/data/data")
        for name in ("chunked", "deflate", "cut"):
            f["/entry/data/" + name] = h5py.ExternalLink(
                "data_000001.h5", "/" + name)
    with h5py.File(d / "data_000001.h5", "r") as f:
        assert f["/entry/data/data"].id.get_offset() > \
            (d / "master.h5").stat().st_size
    return d / "master.h5"


@pytest.mark.parametrize("name", ["data_000001", "chunked", "deflate",
                                  "cut"])
@pytest.mark.parametrize("sel", SELECTIONS[:2] + SELECTIONS[-1:])
def test_external_link_read_from_its_file(linked, name, sel):
    """Before: the master's own bytes at the data file's offsets (status
    0), "not a valid deflate stream", or a view number past 2**54."""
    with h5py.File(linked, "r") as f:
        want = expected(f["/entry/data/" + name], sel)
    ds = parload.load(linked, dataset="/entry/data/" + name, threads=2,
                      **sel)
    assert np.array_equal(ds.pixels, want)


def test_external_link_dangling(tmp_path):
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f["/x"] = h5py.ExternalLink("absent.h5", "/data")
    raises(tmp_path / "m.h5", "PARLOAD_EOPEN",
           "/x: an external link to absent.h5:/data, which libhdf5 cannot "
           "follow", dataset="/x")


def external_file(d, name, segments, a):
    """name in directory d: a dataset like a stored in segments (file,
    offset, bytes), the files written with a's bytes there."""
    raw = a.tobytes()
    at = 0
    for f, off, n in segments:
        take = raw[at:at + (len(raw) - at if n == h5py.h5f.UNLIMITED else n)]
        (d / f).write_bytes(b"\x5a" * off + take + b"\x00" * 3)
        at += len(take)
    with h5py.File(d / name, "w") as f:
        f.create_dataset("x", shape=a.shape, dtype=a.dtype,
                         external=segments)


@pytest.mark.parametrize("segments,serial", [
    ([("one.bin", 100, h5py.h5f.UNLIMITED)], False),
    # Two files meeting between rows 5 and 6 of view 2: strips of 1 row.
    ([("s1.bin", 7, (2 * H + 5) * W * 2), ("s2.bin", 0, V * H * W * 2)],
     False),
    # One file a view: strips of a view.
    ([("v%d.bin" % i, 3 * i, H * W * 2) for i in range(V)], False),
    # Meeting inside a row: through libhdf5.
    ([("o1.bin", 0, W * 2 + 3), ("o2.bin", 5, V * H * W * 2)], True),
])
def test_external_storage_equals_h5py(tmp_path, monkeypatch, segments,
                                      serial):
    """Relative names are opened from the current directory, as libhdf5
    1.10 (and h5py) open them.  Before: "no storage allocated"."""
    a = pixels((V, H, W), "u2", 23)
    monkeypatch.chdir(tmp_path)
    external_file(tmp_path, "es.h5", segments, a)
    with h5py.File("es.h5", "r") as f:
        want = f["x"][()]
    assert np.array_equal(want, a)
    for sel in SELECTIONS:
        ds = parload.load("es.h5", dataset="x", threads=3, **sel)
        assert np.array_equal(ds.pixels, expected(a, sel))
    assert bool(ds.stats["serial"]) == serial
    # From elsewhere neither h5py nor parload finds the files.
    monkeypatch.chdir("/")
    with h5py.File(tmp_path / "es.h5", "r") as f:
        with pytest.raises(OSError):
            f["x"][()]
    raises(tmp_path / "es.h5", "PARLOAD_EOPEN", "from the current directory",
           dataset="x")


def test_external_storage_file_cut_short(tmp_path, monkeypatch):
    a = pixels((V, H, W), "u2", 24)
    monkeypatch.chdir(tmp_path)
    external_file(tmp_path, "es.h5", [("cut.bin", 10, h5py.h5f.UNLIMITED)],
                  a)
    with open("cut.bin", "r+b") as f:
        f.truncate(10 + a.nbytes - 1)
    with pytest.raises(parload.Error, match="cut.bin.*past the end") as e:
        parload.load("es.h5", dataset="x")
    assert e.value.code == "PARLOAD_ETRUNCATED"


def test_list_of_hdf5_files_refused(linked):
    """Not read as one stream yet: ENOTSUP naming the first HDF5 file, by
    its name or its first bytes (before: "bad magic").  A list of one is
    that file."""
    data = linked.parent / "data_000001.h5"
    other = linked.parent / "data.frame"
    other.write_bytes(data.read_bytes())
    for paths, first in (([data, linked], data), ([other, data], other),
                         ([other, other], other)):
        with pytest.raises(parload.Error, match="a list of HDF5 files is "
                           "not read yet") as e:
            parload.load(paths)
        assert e.value.code == "PARLOAD_ENOTSUP"
        assert str(e.value).startswith(str(first) + ":")
    with h5py.File(data, "r") as f:
        want = f["/entry/data/data"][()]
    assert np.array_equal(parload.load([data], dataset="/entry/data/data")
                          .pixels, want)
