"""Packed 12- and 10-bit pixels (mono12p, mono12packed, u12msb, mono10p)
against packers and unpackers written here from the bit orders of issue
19 (and include/parload.h): random values packed by the inverse
formulas, unpacked by parload, compared; whole loads, row bands, column
crops starting at odd columns and sinograms."""

import numpy as np
import pytest

import parload


def u(a):
    return a.astype(np.uint16)


# name: (pixels per group, bytes per group, pack, unpack), each over
# arrays of groups: pack(p[:, i]) -> bytes[:, j], unpack the inverse.
def pack_mono12p(p):
    p0, p1 = u(p[:, 0]), u(p[:, 1])
    return [p0 & 0xFF, (p0 >> 8) | ((p1 & 0x0F) << 4), p1 >> 4]


def unpack_mono12p(b):
    b0, b1, b2 = (u(b[:, i]) for i in range(3))
    return [b0 | (b1 & 0x0F) << 8, b1 >> 4 | b2 << 4]


def pack_mono12packed(p):
    p0, p1 = u(p[:, 0]), u(p[:, 1])
    return [p0 >> 4, (p0 & 0x0F) | ((p1 & 0x0F) << 4), p1 >> 4]


def unpack_mono12packed(b):
    b0, b1, b2 = (u(b[:, i]) for i in range(3))
    return [b0 << 4 | (b1 & 0x0F), b2 << 4 | b1 >> 4]


def pack_u12msb(p):
    p0, p1 = u(p[:, 0]), u(p[:, 1])
    return [p0 >> 4, ((p0 & 0x0F) << 4) | (p1 >> 8), p1 & 0xFF]


def unpack_u12msb(b):
    b0, b1, b2 = (u(b[:, i]) for i in range(3))
    return [b0 << 4 | b1 >> 4, (b1 & 0x0F) << 8 | b2]


def pack_mono10p(p):
    p0, p1, p2, p3 = (u(p[:, i]) for i in range(4))
    return [p0 & 0xFF, (p0 >> 8) | ((p1 & 0x3F) << 2),
            (p1 >> 6) | ((p2 & 0x0F) << 4), (p2 >> 4) | ((p3 & 0x03) << 6),
            p3 >> 2]


def unpack_mono10p(b):
    b0, b1, b2, b3, b4 = (u(b[:, i]) for i in range(5))
    return [b0 | (b1 & 0x03) << 8, b1 >> 2 | (b2 & 0x0F) << 6,
            b2 >> 4 | (b3 & 0x3F) << 4, b3 >> 6 | b4 << 2]


PACKED = {"mono12p": (2, 3, 12, pack_mono12p, unpack_mono12p),
          "mono12packed": (2, 3, 12, pack_mono12packed, unpack_mono12packed),
          "u12msb": (2, 3, 12, pack_u12msb, unpack_u12msb),
          "mono10p": (4, 5, 10, pack_mono10p, unpack_mono10p)}


def pack(name, pixels):
    """A view (or views) as the packed bit stream: bytes, per view."""
    per, nbytes, _, packer, _ = PACKED[name]
    v = pixels.shape[0]
    groups = pixels.reshape(-1, per)
    out = np.stack(packer(groups), axis=1).astype(np.uint8)
    return out.reshape(v, -1)


def unpack(name, data, shape):
    per, nbytes, _, _, unpacker = PACKED[name]
    groups = data.reshape(-1, nbytes)
    return np.stack(unpacker(groups), axis=1).reshape(shape)


def packed_file(rng, path, name, views, height, width, offset=0, header=0,
                gap=0):
    """Random values of the format's bits, packed into path: (values,
    view headers)."""
    bits = PACKED[name][2]
    px = rng.integers(0, 1 << bits, size=(views, height, width),
                      dtype=np.uint16)
    data = pack(name, px)
    heads = rng.integers(0, 256, size=(views, header), dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(bytes(offset))
        for k in range(views):
            f.write(heads[k].tobytes())
            f.write(data[k].tobytes())
            f.write(b"\xee" * gap)
    return px, heads


@pytest.mark.parametrize("name", sorted(PACKED))
def test_reference_packer_and_unpacker_agree(name):
    """The test's own pair: unpack(pack(x)) is x, and one group by hand."""
    rng = np.random.default_rng(3)
    bits = PACKED[name][2]
    px = rng.integers(0, 1 << bits, size=(2, 3, 8), dtype=np.uint16)
    np.testing.assert_array_equal(unpack(name, pack(name, px), px.shape), px)
    first = {"mono12p": [0x23, 0x1, 0xAB], "mono12packed": [0x12, 0x03, 0xAB],
             "u12msb": [0x12, 0x3A, 0xB0], "mono10p": [0x23, 0x11, 0, 0, 0]}
    one = np.zeros((1, 1, PACKED[name][0]), np.uint16)
    one[0, 0, :2] = [0x123, 0xAB0] if bits == 12 else [0x123, 0x4]
    assert list(pack(name, one)[0]) == first[name]


# Widths with an odd number of packed groups (14: 7 groups of two 12-bit
# pixels; 12: 3 groups of four 10-bit pixels) and even ones.
WIDTHS = {"mono12p": [14, 8], "mono12packed": [14, 2], "u12msb": [14, 6],
          "mono10p": [12, 8]}


@pytest.mark.parametrize("name", sorted(PACKED))
@pytest.mark.parametrize("k", [0, 1])
def test_packed_loads_as_the_reference_unpacks(tmp_path, name, k):
    rng = np.random.default_rng(sum(map(ord, name)) + k)
    width = WIDTHS[name][k]
    height, views = 7, 5
    path = tmp_path / "p.bin"
    offset, header, gap = (0, 0, 0) if k else (100, 512, 3)
    px, heads = packed_file(rng, path, name, views, height, width, offset,
                            header, gap)
    raw = {"width": width, "height": height, "type": name, "offset": offset,
           "header": header, "gap": gap}
    ds = parload.load(path, raw=raw, threads=k + 2)
    assert ds.pixels.dtype == np.uint16
    assert ds.desc["type"] == name
    assert ds.desc["payload_size"] == width * height * PACKED[name][2] // 8
    np.testing.assert_array_equal(ds.pixels, px)
    if header:
        np.testing.assert_array_equal(ds.raw_headers, heads)
    # Column crops starting at odd columns (inside a packed group), row
    # bands, views with a step, and sinograms.
    crops = [(1, width), (3, width - 2), (width - 1, width), (5, 6)]
    for c0, c1 in [(a, b) for a, b in crops if a < b <= width]:
        for r0, r1 in [(0, height), (2, 5), (6, 7)]:
            want = px[1::2, r0:r1, c0:c1]
            got = parload.load(path, raw=raw, views=slice(1, None, 2),
                               rows=(r0, r1), cols=(c0, c1))
            np.testing.assert_array_equal(got.pixels, want)
            sino = parload.load(path, raw=raw, views=slice(1, None, 2),
                                rows=(r0, r1), cols=(c0, c1),
                                layout="sinograms")
            np.testing.assert_array_equal(sino.pixels,
                                          want.transpose(1, 0, 2))


@pytest.mark.parametrize("name", sorted(PACKED))
def test_packed_over_many_files(tmp_path, name):
    rng = np.random.default_rng(len(name))
    width = WIDTHS[name][0]
    paths, parts = [], []
    for i in range(3):
        paths.append(tmp_path / f"frame_{i:03d}.raw")
        parts.append(packed_file(rng, paths[-1], name, 1, 4, width)[0])
    ds = parload.load(paths, raw=f"width={width},height=4,type={name}",
                      threads=4)
    np.testing.assert_array_equal(ds.pixels, np.concatenate(parts))


@pytest.mark.parametrize("name,width", [("mono12p", 3), ("mono12packed", 5),
                                        ("u12msb", 1), ("mono10p", 6)])
def test_packed_row_not_whole_bytes_is_refused(tmp_path, name, width):
    path = tmp_path / "x.bin"
    path.write_bytes(bytes(64))
    with pytest.raises(parload.Error, match="not whole bytes") as e:
        parload.load(path, raw=f"width={width},height=2,type={name}")
    assert e.value.code == "PARLOAD_EINVAL"
