"""NumPy .npy files written by numpy.save (and numpy.lib.format for the
2.0 and 3.0 headers) load as numpy.load reads them: every pixel type in
either byte order, 2-D and 3-D, through every way of loading (a
selection, sinograms, batches, Dask, a correction); Fortran order and
counts past the file refused naming the file.  A NRRD attached header
(.nrrd) written here as teem writes it loads too; parload.save writes
.npy by the library's table of names."""

import numpy as np
import pytest

import parload
from conftest import random_pixels

DTYPES = ["u1", "<u2", ">u2", "<i2", ">i2", "<u4", ">u4", "<i4", ">i4",
          "<f4", ">f4", "<f8", ">f8"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5, 7), (5, 7)])
def test_numpy_save_loads(tmp_path, dtype, shape):
    rng = np.random.default_rng(len(dtype) + len(shape))
    dt = np.dtype(dtype)
    px = random_pixels(rng, shape, dt.newbyteorder("=")).astype(dt)
    np.save(tmp_path / "a.npy", px)
    ds = parload.load(tmp_path / "a.npy")
    want = np.load(tmp_path / "a.npy").reshape((-1,) + shape[-2:])
    np.testing.assert_array_equal(ds.pixels, want)
    assert ds.pixels.dtype == dt.newbyteorder("=")


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_header_versions(tmp_path, version):
    px = np.arange(2 * 3 * 4, dtype="<u2").reshape(2, 3, 4)
    with open(tmp_path / "v.npy", "wb") as f:
        np.lib.format.write_array(f, px, version=version)
    np.testing.assert_array_equal(parload.load(tmp_path / "v.npy").pixels,
                                  px)


def test_any_name_and_every_way_of_loading(tmp_path):
    """The content says .npy (a name in capitals, or none): selections,
    sinograms, batches and describe as for any raw layout."""
    rng = np.random.default_rng(3)
    px = random_pixels(rng, (6, 8, 10), np.dtype("<u2"))
    np.save(tmp_path / "s.npy", px)
    (tmp_path / "s.npy").rename(tmp_path / "S.DATA")
    p = tmp_path / "S.DATA"
    np.testing.assert_array_equal(
        parload.load(p, views=slice(1, 5, 2), rows=(2, 6), cols=(3, 9)).pixels,
        px[1:5:2, 2:6, 3:9])
    sino = parload.load(p, rows=(1, 3), layout="sinograms").pixels
    np.testing.assert_array_equal(sino, px[:, 1:3].transpose(1, 0, 2))
    got = [b.pixels.copy() for b in parload.stream(p, batch_views=4)]
    np.testing.assert_array_equal(np.concatenate(got), px)
    d = parload.describe(p)
    assert d["count"] == 6 and d["offset"] == 128


def test_dask(tmp_path):
    pytest.importorskip("dask")
    import parload.dask
    px = np.arange(4 * 3 * 5, dtype=">f4").reshape(4, 3, 5)
    np.save(tmp_path / "d.npy", px)
    a = parload.dask.from_file(str(tmp_path / "d.npy"), chunks=2)
    np.testing.assert_array_equal(a.compute(), px)


def test_correction_references_are_npy(tmp_path):
    scan = np.full((3, 4, 5), 60, dtype="<u2")
    darks = np.full((2, 4, 5), 10, dtype="<u2")
    flats = np.full((2, 4, 5), 110, dtype="<u2")
    for name, a in (("scan", scan), ("darks", darks), ("flats", flats)):
        np.save(tmp_path / (name + ".npy"), a)
    ds = parload.load(tmp_path / "scan.npy", darks=str(tmp_path / "darks.npy"),
                      flats=str(tmp_path / "flats.npy"))
    np.testing.assert_allclose(ds.pixels, 0.5)


def test_refused(tmp_path):
    np.save(tmp_path / "f.npy", np.asfortranarray(np.zeros((3, 4), "u2")))
    with pytest.raises(parload.Error, match="Fortran order") as e:
        parload.load(tmp_path / "f.npy")
    assert "f.npy" in str(e.value)
    np.save(tmp_path / "c.npy", np.zeros((3, 4), "c8"))
    with pytest.raises(parload.Error, match="dtype"):
        parload.load(tmp_path / "c.npy")
    np.save(tmp_path / "t.npy", np.zeros((4, 3, 5), "<u2"))
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-40])
    with pytest.raises(parload.Error, match="view 2") as e:
        parload.load(tmp_path / "t.npy")
    assert e.value.offset is not None


def test_save_npy_any_case(tmp_path):
    """parload.save("p.NPY") said "which format?" where `parload extract
    -o p.NPY` wrote .npy: one table now."""
    px = np.arange(2 * 3 * 4, dtype="<i2").reshape(2, 3, 4)
    parload.save(tmp_path / "p.NPY", px)
    np.testing.assert_array_equal(np.load(tmp_path / "p.NPY"), px)
    with pytest.raises(ValueError, match="HDF5 and Zarr output only"):
        parload.save(tmp_path / "q.npy", px, compress="gzip")


def test_nrrd_attached(tmp_path):
    """A .nrrd as teem, ITK and 3D Slicer write it: the header, a blank
    line, the data."""
    px = np.arange(2 * 3 * 4, dtype=">i2").reshape(2, 3, 4)
    head = ("NRRD0004\n# Complete NRRD file format specification at:\n"
            "type: short\ndimension: 3\nspace: left-posterior-superior\n"
            "sizes: 4 3 2\nspace directions: (1,0,0) (0,1,0) (0,0,1)\n"
            "kinds: domain domain domain\nendian: big\nencoding: raw\n"
            "space origin: (0,0,0)\n\n")
    (tmp_path / "v.nrrd").write_bytes(head.encode() + px.tobytes())
    np.testing.assert_array_equal(parload.load(tmp_path / "v.nrrd").pixels,
                                  px)
    (tmp_path / "g.nrrd").write_bytes(
        head.replace("encoding: raw", "encoding: gzip").encode())
    with pytest.raises(parload.Error, match="encoding gzip"):
        parload.load(tmp_path / "g.nrrd")
