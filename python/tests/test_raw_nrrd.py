"""NRRD detached headers (.nhdr) written here by hand, as text, load as
they describe: one data file, a LIST, a printf pattern; 2-D and 3-D;
both endians; byte skip (-1 included)."""

import numpy as np
import pytest

import parload
from conftest import random_pixels


def nhdr(path, lines):
    path.write_text("NRRD0004\n# written by hand\n" + "\n".join(lines) +
                    "\n")
    return path


@pytest.mark.parametrize("nrrd_type,dtype", [
    ("ushort", ">u2"), ("short", "<i2"), ("uint8", "u1"), ("float", ">f4"),
    ("double", "<f8"), ("int", ">i4"), ("unsigned int", "<u4")])
def test_one_data_file_with_byte_skip(tmp_path, nrrd_type, dtype):
    rng = np.random.default_rng(len(nrrd_type))
    dt = np.dtype(dtype)
    px = random_pixels(rng, (4, 3, 5), dt.newbyteorder("="))
    (tmp_path / "vol.raw").write_bytes(b"\x01" * 77 + px.astype(dt).tobytes())
    lines = [f"type: {nrrd_type}", "dimension: 3", "sizes: 5 3 4",
             "encoding: raw", "byte skip: 77", "data file: vol.raw",
             "spacings: 1 1 1"]
    if dt.itemsize > 1:
        lines.insert(3, "endian: " + ("big" if dt.byteorder == ">"
                                      else "little"))
    ds = parload.load(nhdr(tmp_path / "vol.nhdr", lines))
    np.testing.assert_array_equal(ds.pixels, px)
    assert ds.desc["offset"] == 77 and ds.desc["count"] == 4


def test_two_dimensions_is_one_view(tmp_path):
    px = np.arange(12, dtype=">u2").reshape(1, 3, 4)
    (tmp_path / "img.raw").write_bytes(px.tobytes())
    h = nhdr(tmp_path / "img.nhdr", ["type: uint16", "dimension: 2",
                                     "sizes: 4 3", "endian: big",
                                     "encoding: raw", "data file: img.raw"])
    ds = parload.load(h)
    np.testing.assert_array_equal(ds.pixels, px.astype("=u2"))
    assert len(ds) == 1


def test_byte_skip_minus_one_reads_from_the_end(tmp_path):
    px = np.arange(2 * 2 * 3, dtype="<i2").reshape(2, 2, 3)
    (tmp_path / "t.raw").write_bytes(b"some header of no known size" +
                                     px.tobytes())
    h = nhdr(tmp_path / "t.nhdr", ["type: short", "dimension: 3",
                                   "sizes: 3 2 2", "endian: little",
                                   "encoding: raw", "byte skip: -1",
                                   "data file: t.raw"])
    np.testing.assert_array_equal(parload.load(h).pixels, px)


def test_list_of_files(tmp_path):
    rng = np.random.default_rng(5)
    px = random_pixels(rng, (3, 4, 6), np.float32)
    names = []
    for i in range(3):
        names.append(f"slice{i}.raw")
        (tmp_path / names[-1]).write_bytes(b"\0" * 8 +
                                           px[i].astype(">f4").tobytes())
    h = nhdr(tmp_path / "list.nhdr",
             ["type: float", "dimension: 3", "sizes: 6 4 3", "endian: big",
              "encoding: raw", "byte skip: 8", "data file: LIST"] + names)
    ds = parload.load(h, rows=(1, 3), layout="sinograms")
    np.testing.assert_array_equal(ds.pixels, px[:, 1:3].transpose(1, 0, 2))


def test_printf_pattern(tmp_path):
    rng = np.random.default_rng(6)
    px = random_pixels(rng, (4, 2, 3), np.uint8)
    for k, i in enumerate(range(2, 10, 2)):
        (tmp_path / f"f{i:03d}.raw").write_bytes(px[k].tobytes())
    h = nhdr(tmp_path / "pat.nhdr",
             ["type: uchar", "dimension: 3", "sizes: 3 2 4", "encoding: raw",
              "data file: f%03d.raw 2 8 2"])
    np.testing.assert_array_equal(parload.load(h, threads=3).pixels, px)


def test_unsupported_encoding_and_field_say_which(tmp_path):
    (tmp_path / "x.raw").write_bytes(bytes(8))
    base = ["type: uchar", "dimension: 2", "sizes: 4 2", "data file: x.raw"]
    h = nhdr(tmp_path / "gz.nhdr", base + ["encoding: gzip"])
    with pytest.raises(parload.Error, match="gzip") as e:
        parload.load(h)
    assert e.value.code == "PARLOAD_ENOTSUP"
    h = nhdr(tmp_path / "ll.nhdr", ["type: int64", "dimension: 2",
                                    "sizes: 1 1", "endian: little",
                                    "encoding: raw", "data file: x.raw"])
    with pytest.raises(parload.Error, match="int64"):
        parload.load(h)


def _outside(tmp_path):
    """sub/in.nhdr (its data beside it) and sub/out.nhdr (its data in
    the directory above, by "../"), 2 views of 3 x 2 u8."""
    px = np.arange(12, dtype="u1").reshape(2, 2, 3)
    (tmp_path / "sub").mkdir()
    (tmp_path / "d.raw").write_bytes(px.tobytes())
    (tmp_path / "sub" / "d.raw").write_bytes(px.tobytes())
    head = ["type: uint8", "dimension: 3", "sizes: 3 2 2", "encoding: raw"]
    inside = nhdr(tmp_path / "sub" / "in.nhdr", head + ["data file: d.raw"])
    out = nhdr(tmp_path / "sub" / "out.nhdr", head + ["data file: ../d.raw"])
    return px, inside, out


def test_confine_refuses_a_data_file_outside(tmp_path):
    """confine=True, wherever a source is taken: a data file outside the
    header's directory raises parload.Error naming the header, its line
    and the file; one inside loads; without it NRRD's ../ is read."""
    px, inside, out = _outside(tmp_path)
    np.testing.assert_array_equal(parload.load(out).pixels, px)
    np.testing.assert_array_equal(parload.load(inside, confine=True).pixels,
                                  px)
    assert parload.describe(inside, confine=True)["count"] == 2
    with parload.Loader(threads=1) as loader:
        calls = [
            lambda: parload.load(out, confine=True),
            lambda: loader.load(out, confine=True),
            lambda: loader.load_into(out, *parload.empty_like_file(inside),
                                     confine=True),
            lambda: parload.describe(out, confine=True),
            lambda: parload.empty_like_file(out, confine=True),
            lambda: list(parload.stream(out, confine=True)),
            lambda: loader.load(inside, flats=str(out), confine=True),
        ]
        for call in calls:
            with pytest.raises(parload.Error) as e:
                call()
            assert e.value.code == "PARLOAD_EOPEN"
            msg = str(e.value)
            assert "out.nhdr: line 7: data file '" in msg, msg
            assert "/sub/../d.raw': the file is '" in msg, msg
            assert "outside" in msg, msg


def test_confine_in_dask(tmp_path):
    """parload.dask.from_file takes confine= too, and describes now."""
    pytest.importorskip("dask", reason="dask is not installed")
    import parload.dask
    px, inside, out = _outside(tmp_path)
    a = parload.dask.from_file(str(inside), confine=True)
    np.testing.assert_array_equal(a.compute(), px)
    with pytest.raises(parload.Error, match="outside"):
        parload.dask.from_file(str(out), confine=True)


def test_missing_data_file_names_the_header(tmp_path):
    """A data file that is not there: the header and its line are named,
    and it is a FileNotFoundError."""
    h = nhdr(tmp_path / "m.nhdr", ["type: uint8", "dimension: 2",
                                   "sizes: 2 2", "encoding: raw",
                                   "data file: gone\x1b[2J.raw"])
    with pytest.raises(FileNotFoundError) as e:
        parload.load(h)
    msg = str(e.value)
    assert "m.nhdr: line 7: data file '" in msg, msg
    assert "gone\\x1b[2J.raw': cannot open file" in msg, msg
