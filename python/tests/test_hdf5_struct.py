"""HDF5 file structures read as one stream, against h5py's reads of the
same files (written here by h5py): a master file of external links to
data files (NXmx, as DECTRIS writes it), one link named, a link to a
missing file and a link that loops; lists of files (a Python list, the
command's --concat, a glob) and a list that does not match; virtual
datasets stitched from their sources by frames (read from the sources'
chunks) and mapped otherwise (through libhdf5); NXtomo in a sub-entry
with its image_key; selections, sinograms, --flats same and 1 and 3
threads on all of them."""

import os

import numpy as np
import pytest

import parload
from conftest import run_cli
from test_correct import check, corrected, reduce_ref

h5py = pytest.importorskip("h5py")

FILES, FRAMES, H, W = 4, 25, 12, 10


def pixels(shape, seed):
    return np.random.default_rng(seed).integers(0, 65535, shape,
                                                endpoint=True, dtype="u2")


def nx(group, cls):
    group.attrs["NX_class"] = cls
    return group


@pytest.fixture(scope="module")
def master(tmp_path_factory):
    """An Eiger master file: /entry/data/data_00000k external links to 4
    data files of 25 gzip-compressed frames each, the angles in the
    sample's goniometer."""
    d = tmp_path_factory.mktemp("master")
    for k in range(FILES):
        with h5py.File(d / f"m_data_{k + 1:06d}.h5", "w") as f:
            g = nx(nx(f.create_group("entry"), "NXentry")
                   .create_group("data"), "NXdata")
            g.create_dataset("data", data=pixels((FRAMES, H, W), k),
                             chunks=(1, H, W), compression="gzip")
    with h5py.File(d / "m_master.h5", "w") as f:
        e = nx(f.create_group("entry"), "NXentry")
        g = nx(e.create_group("data"), "NXdata")
        for k in range(FILES):
            g[f"data_{k + 1:06d}"] = h5py.ExternalLink(
                f"m_data_{k + 1:06d}.h5", "/entry/data/data")
        omega = e.create_dataset("sample/goniometer/omega",
                                 data=np.arange(FILES * FRAMES) * 0.5)
        omega.attrs["units"] = "degree"
    return d / "m_master.h5"


def h5py_read(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


def concatenated(master):
    with h5py.File(master, "r") as f:
        g = f["/entry/data"]
        return np.concatenate([g[n][()] for n in sorted(g)])


SELECTIONS = [
    ({}, lambda a: a),
    ({"views": slice(10, 90, 7)}, lambda a: a[10:90:7]),
    ({"rows": (2, 9), "cols": (1, 8)}, lambda a: a[:, 2:9, 1:8]),
    ({"views": slice(20, 80, 3), "rows": (3, 7), "layout": "sinograms"},
     lambda a: np.ascontiguousarray(a[20:80:3, 3:7].transpose(1, 0, 2))),
]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("sel", range(len(SELECTIONS)))
def test_master_file_is_its_links_in_order(master, sel, threads):
    """Before: "has no dataset given and 0 3-D datasets"."""
    kw, cut = SELECTIONS[sel]
    ds = parload.load(master, threads=threads, **kw)
    assert np.array_equal(ds.pixels, cut(concatenated(master)))
    assert ds.stats["serial"] is None
    assert ds.stats["codec"] == "deflate"


def linked_master(d, frames, seed, **kw):
    """d/m.h5, a master file of links to 3 data files d/d0.h5 ... of
    frames frames each, written with h5py's create_dataset keywords kw:
    the frames, file by file."""
    want = []
    with h5py.File(d / "m.h5", "w") as m:
        for k in range(3):
            want.append(pixels((frames, H, W), seed + k))
            with h5py.File(d / f"d{k}.h5", "w") as f:
                f.create_dataset("data", data=want[-1], **kw)
            m[f"/entry/data/data_{k + 1:06d}"] = h5py.ExternalLink(
                f"d{k}.h5", "/data")
    return want


@pytest.mark.parametrize("chunks,gzip", [((5, H, W), True),
                                         ((4, 5, 4), True),
                                         ((3, 6, W), False), (None, False)])
@pytest.mark.parametrize("threads", [1, 3])
def test_master_of_any_storage(tmp_path, chunks, gzip, threads):
    """Data files chunked several frames deep, in tiles, or contiguous:
    one table, read by the pool."""
    want = linked_master(tmp_path, 11, 60, chunks=chunks,
                         compression="gzip" if gzip else None)
    ds = parload.load(tmp_path / "m.h5", threads=threads,
                      views=slice(1, 33, 2), rows=(1, 11))
    assert np.array_equal(ds.pixels, np.concatenate(want)[1:33:2, 1:11])
    assert ds.stats["serial"] is None


@pytest.mark.parametrize("threads", [1, 3])
def test_master_of_filters_read_by_libhdf5(tmp_path, threads):
    """Data files compressed by a plugin's filter (bitshuffle + LZ4, as
    Eiger's; a compact dataset where this build decodes it): whichever
    reads them, the pool or libhdf5's decoder over every dataset, the
    stream is theirs."""
    hdf5plugin = pytest.importorskip("hdf5plugin")
    want = linked_master(tmp_path, 9, 70, chunks=(1, H, W),
                         **hdf5plugin.Bitshuffle(cname="lz4"))
    with h5py.File(tmp_path / "m.h5", "a") as m:
        m.create_dataset("/c/data_000001", data=want[0], chunks=None,
                         compression=None)
        m["/c/data_000002"] = h5py.ExternalLink("d1.h5", "/data")
    ds = parload.load(tmp_path / "m.h5", threads=threads,
                      views=slice(2, 27, 3))
    assert np.array_equal(ds.pixels, np.concatenate(want)[2:27:3])
    # A group named: its datasets are a master file's too; stored
    # otherwise (contiguous, then compressed), an error naming the second.
    with pytest.raises(parload.Error, match="/c/data_000002: stored "
                       "otherwise than /c/data_000001"):
        parload.load(tmp_path / "m.h5", dataset="/c")


@pytest.mark.parametrize("threads", [1, 3])
def test_list_of_files_read_by_libhdf5(tmp_path, threads):
    """Files compressed by a plugin's filter (bitshuffle + LZ4): one
    stream whichever reads them (before: refused, "read through libhdf5,
    whose reads of one file each are not joined", where libhdf5 did)."""
    hdf5plugin = pytest.importorskip("hdf5plugin")
    want = []
    for k in range(3):
        want.append(pixels((7, H, W), 80 + k))
        with h5py.File(tmp_path / f"f{k}.h5", "w") as f:
            f.create_dataset("data", data=want[-1], chunks=(1, H, W),
                             **hdf5plugin.Bitshuffle(cname="lz4"))
    ds = parload.load(str(tmp_path / "f*.h5"), threads=threads,
                      views=slice(1, 21, 2), rows=(2, 10),
                      layout="sinograms")
    cut = np.concatenate(want)[1:21:2, 2:10].transpose(1, 0, 2)
    assert np.array_equal(ds.pixels, cut)


def test_master_file_angles(master):
    """NXmx's omega (degrees) are the frames' angles."""
    ds = parload.load(master, views=slice(5, 100, 10))
    assert np.allclose(ds.angles, np.arange(100)[5::10] * 0.5)


def test_one_link_named(master):
    want = h5py_read(master, "/entry/data/data_000002")
    for name in ("/entry/data/data_000002", "entry/data/data_000002"):
        assert np.array_equal(parload.load(master, dataset=name).pixels,
                              want)
    got = parload.load(f"{master}:/entry/data/data_000003").pixels
    assert np.array_equal(got, h5py_read(master, "/entry/data/data_000003"))


def test_master_file_in_dask(master, vds, three):
    """Dask's chunks of the stream, each a load of its views."""
    pytest.importorskip("dask")
    import parload.dask
    a = parload.dask.from_file(master, chunks=(30, -1, -1))
    assert np.array_equal(a.compute(), concatenated(master))
    a = parload.dask.from_file(vds / "stitched.h5", chunks=(7, -1, -1))
    assert np.array_equal(a.compute(), h5py_read(vds / "stitched.h5", "data"))
    a = parload.dask.from_file([str(p) for p in three], chunks=(20, -1, -1))
    assert np.array_equal(a.compute(), three_want(three))


def test_master_file_on_the_command_line(parload_bin, master, tmp_path):
    out = tmp_path / "m.npy"
    r = run_cli(parload_bin, "extract", "-o", out, master)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), concatenated(master))


def test_missing_data_file(master, tmp_path):
    """An error naming the link and the file (libhdf5 would say only
    "unable to open file")."""
    d = tmp_path
    for k in range(2):
        os.symlink(master.parent / f"m_data_{k + 1:06d}.h5",
                   d / f"m_data_{k + 1:06d}.h5")
    with h5py.File(d / "m.h5", "w") as f:
        for k in range(3):
            f[f"/entry/data/data_{k + 1:06d}"] = h5py.ExternalLink(
                f"m_data_{k + 1:06d}.h5", "/entry/data/data")
    with pytest.raises(parload.Error) as e:
        parload.load(d / "m.h5")
    assert e.value.code == "PARLOAD_EOPEN"
    text = str(e.value)
    assert text.startswith(str(d / "m.h5") + ":")
    assert "/entry/data/data_000003" in text
    assert "m_data_000003.h5" in text and "missing" in text


def test_link_that_loops(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f["/entry/data/data_000001"] = h5py.ExternalLink(
            "b.h5", "/x")
    with h5py.File(tmp_path / "b.h5", "w") as f:
        f["x"] = h5py.ExternalLink("a.h5", "/entry/data/data_000001")
    with pytest.raises(parload.Error) as e:
        parload.load(tmp_path / "a.h5")
    assert "/entry/data/data_000001" in str(e.value)
    assert "loops" in str(e.value)


def test_soft_link_that_loops(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f["/entry/data/data_000001"] = h5py.SoftLink("/x")
        f["/x"] = h5py.SoftLink("/entry/data/data_000001")
    with pytest.raises(parload.Error) as e:
        parload.load(tmp_path / "a.h5")
    assert e.value.code == "PARLOAD_EOPEN"
    assert "/entry/data/data_000001: a link to /x" in str(e.value)


# ---- lists of files ----

@pytest.fixture(scope="module")
def three(master):
    return [master.parent / f"m_data_{k + 1:06d}.h5" for k in range(3)]


def three_want(three):
    return np.concatenate([h5py_read(p, "/entry/data/data") for p in three])


@pytest.mark.parametrize("threads", [1, 3])
def test_list_of_files(three, threads):
    ds = parload.load([str(p) for p in three], threads=threads)
    assert np.array_equal(ds.pixels, three_want(three))
    ds = parload.load(three, views=slice(10, 70, 4), rows=(2, 9),
                      layout="sinograms", threads=threads)
    want = three_want(three)[10:70:4, 2:9].transpose(1, 0, 2)
    assert np.array_equal(ds.pixels, want)


def test_glob_of_files(three):
    """The glob's files in natural order: all four data files."""
    ds = parload.load(str(three[0].parent / "m_data_*.h5"))
    want = np.concatenate([three_want(three),
                           h5py_read(three[0].parent / "m_data_000004.h5",
                                     "/entry/data/data")])
    assert np.array_equal(ds.pixels, want)


def test_concat_on_the_command_line(parload_bin, three, tmp_path):
    out = tmp_path / "c.npy"
    r = run_cli(parload_bin, "extract", "--concat", "-o", out, *three)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), three_want(three))


def test_mismatched_list(three, tmp_path):
    odd = tmp_path / "odd.h5"
    with h5py.File(odd, "w") as f:
        f.create_dataset("/entry/data/data",
                         data=pixels((3, H, W + 1), 9),
                         chunks=(1, H, W + 1), compression="gzip")
    with pytest.raises(parload.Error) as e:
        parload.load([three[0], odd])
    assert str(e.value).startswith(str(odd) + ":")
    assert f"{H} x {W + 1}" in str(e.value) and str(three[0]) in str(e.value)
    with h5py.File(odd, "w") as f:
        f.create_dataset("/entry/data/data", data=pixels((3, H, W), 9)
                         .astype("i4"))
    with pytest.raises(parload.Error, match="i32, not u16"):
        parload.load([three[0], odd])


def test_list_confined_file_by_file(three, tmp_path):
    """confine=True holds each file of a list to its own directory (the
    list's files are the caller's, in any directories)."""
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / "x.h5"
    other.write_bytes(three[1].read_bytes())
    ds = parload.load([three[0], other], confine=True)
    assert np.array_equal(ds.pixels, three_want(three)[:2 * FRAMES])
    with h5py.File(tmp_path / "sub" / "m.h5", "w") as f:
        f["/entry/data/data_000001"] = h5py.ExternalLink(str(three[0]),
                                                         "/entry/data/data")
    with pytest.raises(parload.Error) as e:
        parload.load([other, tmp_path / "sub" / "m.h5"], confine=True)
    assert e.value.code == "PARLOAD_EOPEN"


# ---- virtual datasets ----

@pytest.fixture(scope="module")
def vds(tmp_path_factory):
    """Three sources of 10, 11 and 12 frames: stitched by frames (one of
    them a block of its source's frames), and interleaved (strided)."""
    d = tmp_path_factory.mktemp("vds")
    src = [pixels((10 + k, H, W), 30 + k) for k in range(3)]
    for k, a in enumerate(src):
        with h5py.File(d / f"src{k}.h5", "w") as f:
            f.create_dataset("data", data=a, chunks=(1, H, W),
                             compression="gzip")
    lay = h5py.VirtualLayout(shape=(10 + 11 + 5, H, W), dtype="u2")
    lay[0:10] = h5py.VirtualSource("src0.h5", "data", shape=src[0].shape)
    lay[10:21] = h5py.VirtualSource("src1.h5", "data", shape=src[1].shape)
    lay[21:26] = h5py.VirtualSource("src2.h5", "data",
                                    shape=src[2].shape)[4:9]
    with h5py.File(d / "stitched.h5", "w") as f:
        f.create_virtual_dataset("data", lay, fillvalue=0)
    lay = h5py.VirtualLayout(shape=(20, H, W), dtype="u2")
    lay[0:20:2] = h5py.VirtualSource("src0.h5", "data", shape=src[0].shape)
    lay[1:20:2] = h5py.VirtualSource("src1.h5", "data",
                                     shape=src[1].shape)[0:10]
    with h5py.File(d / "strided.h5", "w") as f:
        f.create_virtual_dataset("data", lay, fillvalue=0)
    return d


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("sel", range(len(SELECTIONS) - 1))
def test_vds_stitched_by_frames(vds, sel, threads):
    """Read from the sources' chunks by the pool (before: "an HDF5 layout
    parload does not read (virtual or unknown)"), from any directory."""
    kw, cut = SELECTIONS[sel]
    kw = dict(kw, views=slice(2, 24, 3)) if "views" in kw else kw
    want = h5py_read(vds / "stitched.h5", "data")
    want = want[2:24:3] if "views" in kw else want
    cwd = os.getcwd()
    os.chdir("/")
    try:
        ds = parload.load(vds / "stitched.h5", threads=threads, **kw)
    finally:
        os.chdir(cwd)
    if "rows" in kw:
        want = want[:, 2:9, 1:8]
    assert np.array_equal(ds.pixels, want)
    assert ds.stats["serial"] is None


@pytest.mark.parametrize("threads", [1, 3])
def test_vds_strided_through_libhdf5(vds, threads):
    ds = parload.load(vds / "strided.h5", threads=threads)
    assert np.array_equal(ds.pixels, h5py_read(vds / "strided.h5", "data"))
    assert "virtual dataset" in ds.stats["serial"]
    assert ds.stats["codec"] == "libhdf5"



@pytest.mark.parametrize("threads", [1, 3])
def test_vds_of_sources_stored_otherwise(tmp_path, threads):
    """Sources of one table's geometry each, but not of one another's:
    the virtual dataset read through libhdf5, saying so."""
    want = [pixels((6, H, W), 90), pixels((5, H, W), 91)]
    for k, kw in enumerate(({"chunks": (1, H, W), "compression": "gzip"},
                            {})):
        with h5py.File(tmp_path / f"s{k}.h5", "w") as f:
            f.create_dataset("data", data=want[k], **kw)
    lay = h5py.VirtualLayout(shape=(11, H, W), dtype="u2")
    lay[0:6] = h5py.VirtualSource("s0.h5", "data", shape=(6, H, W))
    lay[6:11] = h5py.VirtualSource("s1.h5", "data", shape=(5, H, W))
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_virtual_dataset("data", lay, fillvalue=0)
    ds = parload.load(tmp_path / "v.h5", threads=threads, views=slice(1, 11))
    assert np.array_equal(ds.pixels, np.concatenate(want)[1:11])
    assert "sources are stored otherwise" in ds.stats["serial"]


def one_source_vds(path, source, strided):
    """A virtual dataset of 10 frames from source's 10 (every other one
    of 20 frames, strided)."""
    lay = h5py.VirtualLayout(shape=(20 if strided else 10, H, W), dtype="u2")
    v = h5py.VirtualSource(source, "data", shape=(10, H, W))
    if strided:
        lay[0:20:2] = v
    else:
        lay[:] = v
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset("data", lay, fillvalue=0)


@pytest.mark.parametrize("strided", [False, True])
def test_vds_source_missing(tmp_path, strided):
    """Either way an error (libhdf5 reads fill values for a missing
    source)."""
    one_source_vds(tmp_path / "v.h5", "gone.h5", strided)
    with pytest.raises(parload.Error, match="gone.h5 is missing") as e:
        parload.load(tmp_path / "v.h5")
    assert e.value.code == "PARLOAD_EOPEN"


@pytest.mark.parametrize("strided", [False, True])
def test_vds_sources_confined(vds, tmp_path, strided):
    """A source outside the virtual dataset's directory, confined: an
    error either way (before any is read)."""
    (tmp_path / "in").mkdir()
    one_source_vds(tmp_path / "in" / "v.h5", str(vds / "src0.h5"), strided)
    with pytest.raises(parload.Error) as e:
        parload.load(tmp_path / "in" / "v.h5", confine=True)
    assert e.value.code == "PARLOAD_EOPEN"
    assert parload.load(tmp_path / "in" / "v.h5").pixels.shape[0] == (
        20 if strided else 10)


@pytest.mark.parametrize("strided", [False, True])
def test_vds_source_of_another_type(tmp_path, strided):
    """Either way refused (libhdf5 would convert it)."""
    with h5py.File(tmp_path / "s.h5", "w") as f:
        f["data"] = pixels((10, H, W), 3).astype("i4")
    one_source_vds(tmp_path / "v.h5", "s.h5", strided)
    with pytest.raises(parload.Error, match="s.h5:data is of another type"):
        parload.load(tmp_path / "v.h5")


# ---- NXtomo as Diamond writes it ----

@pytest.fixture(scope="module")
def diamond(tmp_path_factory):
    """/entry1/tomo_entry (NXsubentry, definition NXtomo): the detector's
    data and image_key (2 darks, 3 flats, 20 projections, 2 flats), the
    sample's rotation_angle."""
    d = tmp_path_factory.mktemp("diamond")
    key = np.array([2] * 2 + [1] * 3 + [0] * 20 + [1] * 2, "u1")
    a = pixels((len(key), H, W), 50)
    with h5py.File(d / "tomo.nxs", "w") as f:
        e = nx(f.create_group("entry1"), "NXentry")
        nx(e.create_group("instrument"), "NXinstrument")
        t = nx(e.create_group("tomo_entry"), "NXsubentry")
        t["definition"] = "NXtomo"
        det = nx(t.create_group("instrument/detector"), "NXdetector")
        det.create_dataset("data", data=a, chunks=(1, H, W))
        det["image_key"] = key
        s = nx(t.create_group("sample"), "NXsample")
        s["rotation_angle"] = np.linspace(0, 180, len(key))
        g = nx(t.create_group("data"), "NXdata")
        g["data"] = h5py.SoftLink("/entry1/tomo_entry/instrument/"
                                  "detector/data")
    return d / "tomo.nxs", a, key


def frames_by_key(path, a, key, threads):
    """Each kind of frames is the frames of a whose image_key says so."""
    for frames, k in (("projections", 0), ("flats", 1), ("darks", 2)):
        ds = parload.load(path, frames=frames, threads=threads)
        assert np.array_equal(ds.pixels, a[key == k])


@pytest.mark.parametrize("threads", [1, 3])
def test_diamond_nxtomo_frames(diamond, threads):
    frames_by_key(*diamond, threads)
    path, a, key = diamond
    ds = parload.load(path)
    assert np.allclose(ds.angles, np.linspace(0, 180, len(key))[key == 0])


def test_diamond_nxtomo_flats_same(diamond):
    path, a, key = diamond
    ds = parload.load(path, flats="same", darks="same", minus_log=True,
                      rows=(2, 9), layout="sinograms")
    want = corrected(a[key == 0], reduce_ref(a[key == 2], "mean"),
                     reduce_ref(a[key == 1], "mean"), True)
    check(ds.pixels, np.ascontiguousarray(want[:, 2:9].transpose(1, 0, 2)))


# ---- an NXtomo master file: its links' frames picked by its image_key --


@pytest.fixture(scope="module")
def tomo_master(master):
    """The master file's links with an image_key (5 darks, 10 flats,
    the rest projections) and rotation_angle beside them."""
    path = master.parent / "tomo_master.nxs"
    key = np.zeros(FILES * FRAMES, "i1")
    key[:5], key[5:15] = 2, 1
    with h5py.File(path, "w") as f:
        g = f.create_group("/entry/data")
        for k in range(FILES):
            g[f"data_{k + 1:06d}"] = h5py.ExternalLink(
                f"m_data_{k + 1:06d}.h5", "/entry/data/data")
        g["image_key"] = key
        g["rotation_angle"] = np.arange(FILES * FRAMES, dtype="f4")
    return path, concatenated(master), key


@pytest.mark.parametrize("threads", [1, 3])
def test_master_frames_by_image_key(tomo_master, threads):
    frames_by_key(*tomo_master, threads)
    path, a, key = tomo_master
    ds = parload.load(path, views=slice(3, 80, 5), threads=threads)
    assert np.array_equal(ds.pixels, a[key == 0][3:80:5])
    assert np.array_equal(ds.angles, np.arange(100)[key == 0][3:80:5])


def close(got, want):
    """float32 against float64 on random pixels, some flats barely above
    their darks."""
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_master_flats_same(tomo_master, parload_bin, tmp_path):
    path, a, key = tomo_master
    want = corrected(a[key == 0], reduce_ref(a[key == 2], "mean"),
                     reduce_ref(a[key == 1], "mean"), True)
    ds = parload.load(path, flats="same", darks="same", minus_log=True,
                      threads=3)
    close(ds.pixels, want)
    out = tmp_path / "c.npy"
    r = run_cli(parload_bin, "extract", "--flats", "same", "--darks", "same",
                "--minus-log", "-o", out, path)
    assert r.returncode == 0, r.stderr
    close(np.load(out), want)
