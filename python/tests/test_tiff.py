"""TIFF sources read by parload against tifffile's reading of the same
files: multi-page, BigTIFF, zlib-compressed tiles, big-endian, a folder
of 500 single-page frames and a glob; whole loads, view ranges, rows,
columns and sinograms; the errors of what is not read."""

import numpy as np
import pytest

import parload

tifffile = pytest.importorskip("tifffile")


def frames(n, rows, cols, dtype=np.uint16, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random((n, rows, cols)).astype(dtype)
    return rng.integers(0, 60000, (n, rows, cols)).astype(dtype)


def sliced(a, views, rows, cols, layout):
    """What a selection of a (views, rows, cols) array must load as."""
    s = a[slice(*views), slice(*rows), slice(*cols)]
    if layout == "sinograms":
        s = s.transpose(1, 0, 2)
    return np.ascontiguousarray(s)


# (name, tifffile.imwrite keywords)
WRITES = [
    ("multi", {}),
    ("bigtiff", {"bigtiff": True}),
    ("zlib", {"compression": "zlib"}),
    ("tiled", {"compression": "zlib", "tile": (16, 16)}),
    ("big-endian", {"byteorder": ">"}),
    ("rows-per-strip", {"rowsperstrip": 7}),
]

SELECTIONS = [
    ((None, None), (None, None), (None, None), "views"),
    ((3, 9), (None, None), (None, None), "views"),
    ((None, None), (5, 20), (None, None), "views"),
    ((None, None), (None, None), (7, 33), "views"),
    ((2, 11), (4, 17), (1, 30), "sinograms"),
]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiff")
    a = frames(12, 37, 41, seed=1)
    out = {}
    for name, kw in WRITES:
        p = d / (name + ".tif")
        tifffile.imwrite(p, a, **kw)
        out[name] = p
    return a, out


@pytest.mark.parametrize("name", [w[0] for w in WRITES])
@pytest.mark.parametrize("sel", SELECTIONS)
def test_load_equals_tifffile(written, name, sel):
    a, paths = written
    ref = tifffile.imread(paths[name])
    assert np.array_equal(ref, a)
    views, rows, cols, layout = sel
    ds = parload.load(paths[name], threads=3, views=views, rows=rows,
                      cols=cols, layout=layout)
    assert ds.pixels.dtype == a.dtype
    assert np.array_equal(ds.pixels, sliced(ref, views, rows, cols, layout))


@pytest.mark.parametrize("dtype", ["u1", "i2", "u4", "i4", "f4", "f8"])
def test_types(tmp_path, dtype):
    a = frames(3, 9, 13, dtype=dtype, seed=2)
    p = tmp_path / "t.tif"
    tifffile.imwrite(p, a, compression="zlib", photometric="minisblack")
    assert np.array_equal(parload.load(p).pixels, a)


def test_folder_of_500_frames_in_numeric_order(tmp_path):
    a = frames(500, 8, 10, seed=3)
    d = tmp_path / "scan"
    d.mkdir()
    # proj_10 sorts before proj_2 by name: the stream is numeric order.
    for k in range(500):
        tifffile.imwrite(d / ("proj_%d.tif" % k), a[k])
    for source in (d, str(d / "proj_*.tif")):
        ds = parload.load(source, threads=4)
        assert np.array_equal(ds.pixels, a)
        ds = parload.load(source, views=(250, 260), layout="sinograms")
        assert np.array_equal(ds.pixels, sliced(a, (250, 260), (None, None),
                                                (None, None), "sinograms"))


def test_list_of_files_is_one_stream(tmp_path):
    a = frames(7, 6, 5, seed=4)
    paths = [tmp_path / "a.tif", tmp_path / "b.tif"]
    tifffile.imwrite(paths[0], a[:3], photometric="minisblack")
    tifffile.imwrite(paths[1], a[3:], compression="zlib",
                     photometric="minisblack")
    assert np.array_equal(parload.load(paths).pixels, a)


def test_list_of_files_known_by_their_first_bytes(tmp_path):
    """TIFFs named otherwise are a list of TIFFs too (before: "bad
    magic: not a raw image stream")."""
    a = frames(7, 6, 5, seed=5)
    paths = [tmp_path / "a.frame", tmp_path / "b.frame"]
    tifffile.imwrite(paths[0], a[:4], photometric="minisblack")
    tifffile.imwrite(paths[1], a[4:], photometric="minisblack")
    assert np.array_equal(parload.load(paths).pixels, a)


@pytest.mark.parametrize("rowsperstrip", [None, 5])
def test_imagej_stack_in_one_directory(tmp_path, rowsperstrip):
    """An ImageJ stack in one directory (ImageJ's layout past 4 GiB;
    tifffile's imagej=True, truncate=True at any size) loads all the
    images its description declares, as tifffile reads them."""
    a = frames(12, 37, 41, seed=5)
    p = tmp_path / "ij.tif"
    kw = {"rowsperstrip": rowsperstrip} if rowsperstrip else {}
    tifffile.imwrite(p, a, imagej=True, truncate=True, **kw)
    with tifffile.TiffFile(p) as t:
        assert len(t.pages) == 1 and "images=12" in t.pages[0].description
    ref = tifffile.imread(p)
    assert np.array_equal(ref, a)
    for sel in SELECTIONS:
        views, rows, cols, layout = sel
        ds = parload.load(p, threads=3, views=views, rows=rows, cols=cols,
                          layout=layout)
        assert np.array_equal(ds.pixels,
                              sliced(ref, views, rows, cols, layout))


def test_imagej_stack_truncated(tmp_path):
    """A file too short for the images its description declares is
    refused, naming the first image it cuts, never a part of the stack."""
    a = frames(6, 10, 12, seed=6)
    p = tmp_path / "ij.tif"
    tifffile.imwrite(p, a, imagej=True, truncate=True)
    with tifffile.TiffFile(p) as t:
        first = t.pages[0].dataoffsets[0]
    frame = 10 * 12 * 2
    with open(p, "r+b") as f:
        f.truncate(first + 4 * frame + 7)
    with pytest.raises(parload.Error, match="image 4 of ImageJ's stack of "
                       "6 .* ends past the end of the file") as e:
        parload.load(p)
    assert e.value.code == "PARLOAD_ETRUNCATED"
    assert e.value.view == 4 and e.value.offset == first + 4 * frame
    assert str(p) in str(e.value)


def test_rgb_refused(tmp_path):
    p = tmp_path / "rgb.tif"
    tifffile.imwrite(p, np.zeros((4, 5, 3), np.uint8), photometric="rgb")
    with pytest.raises(parload.Error, match="RGB or multi-sample TIFF "
                       r"\(3 samples per pixel\)") as e:
        parload.load(p)
    assert str(p) in str(e.value)


def test_pages_that_differ_refused(tmp_path):
    p = tmp_path / "differ.tif"
    with tifffile.TiffWriter(p) as w:
        w.write(np.zeros((16, 16), np.uint16))
        w.write(np.zeros((8, 16), np.uint16))
    with pytest.raises(parload.Error, match="page 1 is 16 x 8 u16, page 0 "
                       "is 16 x 16 u16"):
        parload.load(p)


def test_folder_without_tiffs(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    # Not a source: a folder is one only when it holds TIFFs.
    with pytest.raises(parload.Error, match="not a regular file") as e:
        parload.load(tmp_path)
    assert str(tmp_path) in str(e.value)
    with pytest.raises(parload.Error, match="no TIFF files in"):
        parload.load(str(tmp_path / "*.tif"))


def modules_build():
    """Whether the build tree (make check's PARLOAD_BUILDDIR) has its TIFF
    and HDF5 code as modules (configure's default), or None unknown."""
    import os
    b = os.environ.get("PARLOAD_BUILDDIR")
    try:
        with open(os.path.join(b, "config.h")) as f:
            return "#define PARLOAD_MODULES 1" in f.read()
    except (TypeError, OSError):
        return None


def test_module_needed_only_for_decoding(tmp_path, parload_bin):
    """The command with no module to find: an uncompressed TIFF is read
    by libparload's own walk, a compressed one needs the TIFF module and
    says it is not installed."""
    import os
    import subprocess
    if not modules_build():
        pytest.skip("the build links its TIFF code in (no modules), or "
                    "PARLOAD_BUILDDIR is not set")
    a = frames(5, 16, 20)
    tifffile.imwrite(tmp_path / "u.tif", a)
    tifffile.imwrite(tmp_path / "z.tif", a, compression="zlib")
    (tmp_path / "none").mkdir()
    env = dict(os.environ, PARLOAD_MODULE_DIR=str(tmp_path / "none"))

    def run(*args):
        return subprocess.run([parload_bin, *map(str, args)], env=env,
                              capture_output=True, text=True, timeout=120)
    r = run("extract", "-o", tmp_path / "u.npy", tmp_path / "u.tif")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "u.npy"), a)
    r = run(tmp_path / "z.tif")
    assert r.returncode == 1
    assert ("TIFF support is not installed: %s/parload_tiff.so"
            % (tmp_path / "none")) in r.stderr
