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
