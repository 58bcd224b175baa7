"""Zarr stores as their writers make them: version 2 stores written by
zarr-python 2.13 (Debian's python3-zarr) with numcodecs 0.11, and version
3 stores written here by hand from the Zarr v3 specification (zarr.json
by json.dumps, chunks encoded with numcodecs, shard indexes packed here),
since Debian has no zarr-python 3.

Importable by the tests (test_zarr.py, mpi_zarr.py) and the bench
(bench/zarr.py): write_all(directory) writes every fixture and returns
them by name; write_v3() and read_v3() are the version 3 writer and an
independent reader of what it writes (neither shares code with parload).

Every v2 store is read back with zarr-python, which is the reference the
tests compare parload with; a v3 store's reference is read_v3() of its
files (checked against the array written).  Each store is small (37
frames of 70 x 100 pixels: not multiples of the 16-frame chunks, the
32-row bands or the 32 x 32 tiles, so that the edge chunks are partial).
"""

import json
import os
import shutil
from dataclasses import dataclass, field

import numpy as np

import numcodecs
import zarr

N, H, W = 37, 70, 100
DTYPES = ("u1", "u2", "i2", "u4", "i4", "f4", "f8")
# numpy type -> the v3 data_type name.
V3_TYPES = {"u1": "uint8", "u2": "uint16", "i2": "int16", "u4": "uint32",
            "i4": "int32", "f4": "float32", "f8": "float64",
            "i8": "int64", "b1": "bool"}
NONE = 2 ** 64 - 1  # a shard index entry of an inner chunk never written


# ---------------------------------------------------------------------------
# CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven.

def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    t = CRC_TABLE
    for b in bytes(data):
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C


# ---------------------------------------------------------------------------
# Pixels.

def pixels(shape, dtype, seed):
    """Detector-like counts around a beam (so that codecs compress them as
    a detector's), shifted to hold negatives in signed types."""
    rng = np.random.default_rng(seed)
    h, w = shape[-2:]
    y, x = np.mgrid[0:h, 0:w]
    beam = 30 + 300 * np.exp(-((y - h / 2) ** 2 + (x - w / 3) ** 2) /
                             (2 * (min(h, w) / 4) ** 2))
    counts = rng.poisson(beam, size=shape)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (counts + rng.standard_normal(shape)).astype(dt)
    if dt.kind == "i":
        counts = counts - 100
    info = np.iinfo(dt)
    return np.clip(counts, info.min, info.max).astype(dt)


@dataclass
class Store:
    """One store: path (the store directory), dataset (None: the root is
    the array), want (the reference read), chunks (the chunk shape, the
    inner chunk shape of a sharded array), codec (what stats["codec"]
    must name, or None), refused ((error code, words the message must
    hold)) for a store parload must refuse, may_refuse likewise for one
    it may refuse or read (then it must read it right)."""
    name: str
    path: str = ""
    dataset: object = None
    want: object = None
    chunks: tuple = ()
    codec: object = None
    refused: object = None
    may_refuse: object = None
    version: int = 2
    notes: dict = field(default_factory=dict)


def zarr_read(path, dataset=None):
    """zarr-python's own read of the array at path (and dataset)."""
    g = zarr.open(path, mode="r")
    a = g[dataset] if dataset else g
    return a[...]


# ---------------------------------------------------------------------------
# Version 2 (zarr-python).

def v2(path, data, chunks, compressor=None, filters=None, order="C",
       separator=".", fill_value=0, write_empty_chunks=True, dtype=None):
    z = zarr.open(path, mode="w", shape=data.shape, chunks=chunks,
                  dtype=dtype or data.dtype, compressor=compressor,
                  filters=filters, order=order,
                  dimension_separator=separator, fill_value=fill_value,
                  write_empty_chunks=write_empty_chunks)
    z[...] = data
    return z


def blosc(cname, shuffle, clevel=5):
    return numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=shuffle)


COMPRESSORS = {
    "none": (None, None),
    "zstd1": (numcodecs.Zstd(level=1), "zstd"),
    "zstd19": (numcodecs.Zstd(level=19), "zstd"),
    "gzip": (numcodecs.GZip(level=5), "gzip"),
    "zlib": (numcodecs.Zlib(level=5), "deflate"),
    "lz4": (numcodecs.LZ4(acceleration=1), "lz4"),
    "bz2": (numcodecs.BZ2(level=9), "bzip2"),
}
for _cname in ("lz4", "zstd", "blosclz", "zlib"):
    for _shuffle in (0, 1, 2):
        COMPRESSORS["blosc-%s-%d" % (_cname, _shuffle)] = (
            blosc(_cname, _shuffle), "blosc")

CHUNKS = {
    "frame": (1, H, W),
    "frames16": (16, H, W),
    "band32": (1, 32, W),
    "tile32": (1, 32, 32),
    "block": (8, 32, 32),
    "bigger": (64, 128, 128),  # one chunk, larger than the array
}


def v2_specs():
    """{name: (kwargs of v2(), dtype, codec name)} of the v2 stores parload
    reads, each a plain array at its store's root."""
    out = {}
    for name, (comp, codec) in COMPRESSORS.items():
        out["v2-codec-" + name] = (dict(chunks=CHUNKS["frame"],
                                        compressor=comp), "<u2", codec)
    for dt in DTYPES:
        for bo in ("<", ">") if dt != "u1" else ("|",):
            out["v2-type-%s%s" % ({"<": "le-", ">": "be-", "|": ""}[bo],
                                   dt)] = (dict(chunks=CHUNKS["frame"]),
                                           bo + dt, None)
            out["v2-type-%s%s-blosc" % ({"<": "le-", ">": "be-",
                                         "|": ""}[bo], dt)] = (
                dict(chunks=(4, 32, 32), compressor=blosc("lz4", 1)),
                bo + dt, "blosc")
    for cname, chunks in CHUNKS.items():
        for comp in ("none", "zstd1"):
            out["v2-chunks-%s-%s" % (cname, comp)] = (
                dict(chunks=chunks, compressor=COMPRESSORS[comp][0]), "<u2",
                COMPRESSORS[comp][1])
    out["v2-sep-slash"] = (dict(chunks=(4, 32, 32), separator="/",
                                compressor=COMPRESSORS["gzip"][0]), "<u2",
                           "gzip")
    out["v2-sep-slash-frame"] = (dict(chunks=CHUNKS["frame"],
                                      separator="/"), "<u2", None)
    return out


def write_v2_all(d, out):
    for i, (name, (kw, dtype, codec)) in enumerate(sorted(
            v2_specs().items())):
        path = os.path.join(d, name + ".zarr")
        data = pixels((N, H, W), np.dtype(dtype).newbyteorder("="), 10 + i)
        v2(path, data, dtype=dtype, **kw)
        out[name] = Store(name, path, want=zarr_read(path),
                          chunks=kw["chunks"], codec=codec)
        assert np.array_equal(out[name].want, data)
    write_v2_fill(d, out)
    write_v2_refused(d, out)
    write_v2_2d_and_groups(d, out)
    write_ome(d, out)


def write_v2_fill(d, out):
    """Chunks never written: zarr skips a chunk equal to fill_value with
    write_empty_chunks=False, and a chunk file removed after writing is
    never-written too."""
    data = pixels((N, H, W), "u2", 3)
    data[5:9] = 7           # four whole frames of the fill value
    data[20:, :32, :32] = 7  # and tiles
    path = os.path.join(d, "v2-fill-7.zarr")
    v2(path, data, (1, 32, 32), compressor=numcodecs.Zstd(level=1),
       fill_value=7, write_empty_chunks=False)
    assert not os.path.exists(os.path.join(path, "6.0.0"))
    os.remove(os.path.join(path, "12.1.2"))  # removed: fill too
    out["v2-fill-7"] = Store("v2-fill-7", path, want=zarr_read(path),
                             chunks=(1, 32, 32), codec="zstd",
                             notes={"missing": True})
    assert (out["v2-fill-7"].want[12, 32:64, 64:96] == 7).all()
    # fill_value null: a missing chunk reads as 0 (zarr-python leaves such
    # a chunk uninitialised, so the reference is the array written).
    data = pixels((N, H, W), "i4", 4)
    path = os.path.join(d, "v2-fill-null.zarr")
    v2(path, data, (1, H, W), fill_value=None)
    for k in (3, 17):
        os.remove(os.path.join(path, "%d.0.0" % k))
        data[k] = 0
    out["v2-fill-null"] = Store("v2-fill-null", path, want=data,
                                chunks=(1, H, W))
    # A float fill of NaN: JSON's "NaN".
    data = pixels((N, H, W), "f4", 5)
    data[10:12] = np.nan
    path = os.path.join(d, "v2-fill-nan.zarr")
    v2(path, data, (1, H, W), fill_value=np.nan, write_empty_chunks=False)
    with open(os.path.join(path, ".zarray")) as f:
        assert json.load(f)["fill_value"] == "NaN"
    assert not os.path.exists(os.path.join(path, "10.0.0"))
    out["v2-fill-nan"] = Store("v2-fill-nan", path, want=zarr_read(path),
                               chunks=(1, H, W))


# The 4-D shape (2, 3, 70, 100) however a message writes it.
SHAPE_4D = r"2\D{1,3}3\D{1,3}70\D{1,3}100"


def write_v2_refused(d, out):
    """Stores parload refuses: F order, the Delta and AsType filters, the
    dtypes it cannot hold, more than 3 dimensions that are not 1."""
    data = pixels((N, H, W), "u2", 6)

    def add(name, code, words, **kw):
        path = os.path.join(d, name + ".zarr")
        arr = kw.pop("data", data)
        v2(path, arr, kw.pop("chunks", (1, H, W)), **kw)
        out[name] = Store(name, path, refused=(code, words))
    add("v2-order-F", "PARLOAD_ENOTSUP", ["order"], order="F")
    add("v2-filter-delta", "PARLOAD_ENOTSUP", ["delta"],
        filters=[numcodecs.Delta(dtype="<u2")])
    add("v2-filter-astype", "PARLOAD_ENOTSUP", ["astype"],
        filters=[numcodecs.AsType(encode_dtype="<u2", decode_dtype="<f4")],
        data=data.astype("f4"), dtype="<f4")
    add("v2-type-bool", "PARLOAD_ENOTSUP", [r"\|b1|bool"],
        data=data > 100)
    add("v2-type-i8", "PARLOAD_ENOTSUP", ["<i8|int64"],
        data=data.astype("<i8"))
    add("v2-type-string", "PARLOAD_ENOTSUP", [r"\|S4|string"],
        data=np.full((4, 3, 5), b"abcd", "S4"), chunks=(1, 3, 5),
        fill_value=None)
    rec = np.zeros((4, 3, 5), [("a", "<u2"), ("b", "<u2")])
    add("v2-type-structured", "PARLOAD_ENOTSUP",
        [r"structured|\[\[|\"a\""], data=rec, chunks=(1, 3, 5),
        fill_value=None)
    add("v2-shape-4d", "PARLOAD_ENOTSUP", [SHAPE_4D],
        data=pixels((2, 3, H, W), "u2", 7), chunks=(1, 1, H, W))


def write_v2_2d_and_groups(d, out):
    # A 2-D array: one view.
    img = pixels((H, W), "u2", 8)
    path = os.path.join(d, "v2-2d.zarr")
    v2(path, img, (32, 32), compressor=numcodecs.Zstd(level=1))
    out["v2-2d"] = Store("v2-2d", path, want=zarr_read(path)[None],
                         chunks=(32, 32), codec="zstd")
    # A group holding arrays: dataset= names one.
    data = pixels((N, H, W), "u2", 9)
    dark = pixels((5, H, W), "u2", 10)
    for name, consolidated in (("v2-group", False),
                               ("v2-group-consolidated", True)):
        path = os.path.join(d, name + ".zarr")
        g = zarr.open_group(path, mode="w")
        g.create_dataset("scan/data", data=data, chunks=(4, H, W),
                         compressor=numcodecs.Zstd(level=1))
        g.create_dataset("dark", data=dark, chunks=(1, H, W))
        g.attrs["instrument"] = "test"
        if consolidated:
            zarr.consolidate_metadata(path)
            assert os.path.exists(os.path.join(path, ".zmetadata"))
        out[name] = Store(name, path, dataset="scan/data",
                          want=zarr_read(path, "scan/data"), chunks=(4, H, W),
                          codec="zstd", notes={"dark": zarr_read(path,
                                                                 "dark")})


def downsample(a):
    """2 x 2 means of the rows and columns (the odd edge cut off)."""
    h, w = a.shape[-2] // 2 * 2, a.shape[-1] // 2 * 2
    b = a[..., :h, :w].astype(np.float64)
    b = (b[..., 0::2, 0::2] + b[..., 1::2, 0::2] + b[..., 0::2, 1::2] +
         b[..., 1::2, 1::2]) / 4
    return np.rint(b).astype(a.dtype)


def ome_attrs(axes, levels):
    scale = [[1] * (len(axes) - 2) + [2 ** i, 2 ** i] for i in levels]
    return {"multiscales": [{
        "version": "0.4", "name": "image",
        "axes": [{"name": a, "type": "time" if a == "t" else
                  "channel" if a == "c" else "space"} for a in axes],
        "datasets": [{"path": str(i), "coordinateTransformations": [
            {"type": "scale", "scale": s}]} for i, s in zip(levels, scale)],
    }]}


def write_ome(d, out):
    """OME-Zarr multiscales: levels "0" and "1" (2 x 2 downsampled), as
    (z, y, x) and as (t, c, z, y, x) of sizes 1, 1."""
    base = pixels((N, H, W), "u2", 11)
    for name, axes in (("ome-zyx", "zyx"), ("ome-tczyx", "tczyx")):
        path = os.path.join(d, name + ".zarr")
        g = zarr.open_group(path, mode="w")
        lead = (1,) * (len(axes) - 3)
        for level, a in enumerate((base, downsample(base))):
            g.create_dataset(str(level), data=a.reshape(lead + a.shape),
                             chunks=lead + (1, 32, 32),
                             compressor=blosc("zstd", 2),
                             dimension_separator="/")
        g.attrs.update(ome_attrs(axes, [0, 1]))
        out[name] = Store(name, path, want=zarr_read(path, "0").reshape(
            base.shape), chunks=(1, 32, 32), codec="blosc",
            notes={"level1": zarr_read(path, "1").reshape(
                (N,) + downsample(base).shape[1:])})
        assert np.array_equal(out[name].want, base)


# ---------------------------------------------------------------------------
# Version 3, written from the specification.

def bytes_codec(endian="little"):
    return {"name": "bytes", "configuration": {"endian": endian}}


def crc_codec():
    return {"name": "crc32c"}


def zstd_codec(level=1):
    return {"name": "zstd", "configuration": {"level": level,
                                              "checksum": False}}


def gzip_codec(level=5):
    return {"name": "gzip", "configuration": {"level": level}}


def blosc_codec(cname="lz4", shuffle="shuffle", typesize=2, clevel=5):
    return {"name": "blosc", "configuration": {
        "cname": cname, "clevel": clevel, "shuffle": shuffle,
        "typesize": typesize, "blocksize": 0}}


def transpose_codec(order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


def shard_codec(inner_chunks, codecs, index_codecs=None, location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner_chunks), "codecs": codecs,
        "index_codecs": index_codecs if index_codecs is not None else
        [bytes_codec(), crc_codec()],
        "index_location": location}}


BLOSC_SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def encode(a, codecs):
    """An array (a chunk of the array's dtype, in the machine's order)
    through the codecs, array -> bytes -> bytes, as v3 specifies."""
    data = a
    for c in codecs:
        name, cfg = c["name"], c.get("configuration", {})
        if name == "transpose":
            data = np.ascontiguousarray(data.transpose(cfg["order"]))
        elif name == "bytes":
            order = "<" if cfg.get("endian", "little") == "little" else ">"
            data = data.astype(data.dtype.newbyteorder(order)).tobytes()
        elif name == "zstd":
            data = numcodecs.Zstd(level=cfg["level"]).encode(data)
        elif name == "gzip":
            data = numcodecs.GZip(level=cfg["level"]).encode(data)
        elif name == "blosc":
            b = numcodecs.Blosc(cname=cfg["cname"], clevel=cfg["clevel"],
                                shuffle=BLOSC_SHUFFLE[cfg["shuffle"]],
                                blocksize=cfg.get("blocksize", 0))
            data = b.encode(np.frombuffer(data, "u%d" % cfg["typesize"]))
        elif name == "crc32c":
            data = bytes(data) + crc32c(data).to_bytes(4, "little")
        else:
            raise ValueError("encode: no codec %r" % name)
    return bytes(data)


def decode(raw, codecs, shape, dtype):
    """The inverse of encode(): raw bytes to an array of shape."""
    data = raw
    arr_codecs = []
    for c in reversed(codecs):
        name, cfg = c["name"], c.get("configuration", {})
        if name == "crc32c":
            if crc32c(data[:-4]) != int.from_bytes(data[-4:], "little"):
                raise ValueError("crc32c mismatch")
            data = data[:-4]
        elif name == "zstd":
            data = numcodecs.Zstd().decode(data)
        elif name == "gzip":
            data = numcodecs.GZip().decode(data)
        elif name == "blosc":
            data = numcodecs.Blosc().decode(data)
        elif name == "bytes":
            order = "<" if cfg.get("endian", "little") == "little" else ">"
            arr_codecs = [c2 for c2 in codecs if c2["name"] == "transpose"]
            enc_shape = list(shape)
            for t in arr_codecs:
                enc_shape = [enc_shape[i] for i in
                             t["configuration"]["order"]]
            data = np.frombuffer(bytes(data), np.dtype(dtype).newbyteorder(
                order)).reshape(enc_shape)
        elif name == "transpose":
            data = data.transpose(np.argsort(cfg["order"]))
    return np.ascontiguousarray(data).astype(np.dtype(dtype).newbyteorder(
        "="))


def chunk_key(coords, encoding):
    name = encoding["name"]
    sep = encoding.get("configuration", {}).get(
        "separator", "/" if name == "default" else ".")
    parts = [str(c) for c in coords]
    if name == "default":
        return sep.join(["c"] + parts)
    return sep.join(parts) if parts else "0"


def grid(shape, chunks):
    return tuple(-(-s // c) for s, c in zip(shape, chunks))


def block_of(data, coords, chunks, fill):
    """The chunk at coords, padded with fill to the whole chunk shape."""
    sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunks))
    part = data[sl]
    if part.shape == tuple(chunks):
        return np.ascontiguousarray(part)
    out = np.full(chunks, fill, data.dtype)
    out[tuple(slice(0, s) for s in part.shape)] = part
    return out


def v3_meta(shape, dtype, chunks, codecs, fill_value=0,
            encoding=None, attributes=None):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape),
            "data_type": V3_TYPES[np.dtype(dtype).str[1:]],
            "chunk_grid": {"name": "regular",
                           "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": encoding or {
                "name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill_value, "codecs": codecs,
            "attributes": attributes or {}}


def write_file(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def encode_shard(data, coords, shard, cfg, fill, missing):
    """One shard's bytes, or None when it holds no chunk at all: its inner
    chunks (those in missing, given as global inner chunk coordinates,
    left out), then the index (or the index first: offsets from the
    shard's start either way)."""
    inner = tuple(cfg["chunk_shape"])
    per = tuple(s // c for s, c in zip(shard, inner))
    block = block_of(data, coords, shard, fill)
    index = np.full(per + (2,), NONE, "<u8")
    parts = []
    for at in np.ndindex(*per):
        glob = tuple(c * p + a for c, p, a in zip(coords, per, at))
        if glob in missing:
            continue
        sub = block[tuple(slice(a * c, (a + 1) * c)
                          for a, c in zip(at, inner))]
        parts.append((at, encode(np.ascontiguousarray(sub), cfg["codecs"])))
    if not parts:
        return None
    index_size = len(encode(index, cfg["index_codecs"]))
    pos = index_size if cfg["index_location"] == "start" else 0
    for at, b in parts:
        index[at] = (pos, len(b))
        pos += len(b)
    body = b"".join(b for _, b in parts)
    idx = encode(index, cfg["index_codecs"])
    return idx + body if cfg["index_location"] == "start" else body + idx


def write_v3(path, data, chunks, codecs, fill_value=0, encoding=None,
             missing=(), attributes=None, meta_extra=None):
    """A v3 array store at path: zarr.json and its chunk files; chunks is
    the chunk grid's shape (a shard's, with sharding_indexed); missing: the
    chunk coordinates not written (inner chunks' for a sharded array).
    Returns the array the store holds (data, missing chunks set to the
    fill value)."""
    data = np.asarray(data)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    meta = v3_meta(data.shape, data.dtype, chunks, codecs, fill_value,
                   encoding, attributes)
    meta.update(meta_extra or {})
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(meta, f, indent=2)
    enc = meta["chunk_key_encoding"]
    missing = set(map(tuple, missing))
    fill = np.nan if fill_value == "NaN" else fill_value
    sharded = codecs and codecs[0]["name"] == "sharding_indexed"
    for coords in np.ndindex(*grid(data.shape, chunks)):
        key = os.path.join(path, *chunk_key(coords, enc).split("/"))
        if sharded:
            b = encode_shard(data, coords, chunks,
                             codecs[0]["configuration"], fill, missing)
            if b is not None:
                write_file(key, b)
        elif coords not in missing:
            write_file(key, encode(block_of(data, coords, chunks, fill),
                                   codecs))
    return read_v3(path)


def read_v3(path):
    """An independent read of a v3 array store (what write_v3 writes and
    the specification allows of it): every chunk file, decoded."""
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    inv = {v: k for k, v in V3_TYPES.items()}
    dtype = np.dtype(inv[meta["data_type"]])
    shape = tuple(meta["shape"])
    chunks = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    fill = meta["fill_value"]
    fill = np.nan if fill == "NaN" else fill
    out = np.full(shape, fill, dtype)
    codecs = meta["codecs"]
    sharded = codecs[0]["name"] == "sharding_indexed"
    for coords in np.ndindex(*grid(shape, chunks)):
        key = os.path.join(path, *chunk_key(
            coords, meta["chunk_key_encoding"]).split("/"))
        if not os.path.exists(key):
            continue
        with open(key, "rb") as f:
            raw = f.read()
        if sharded:
            block = read_shard(raw, chunks, codecs[0]["configuration"],
                               dtype, fill)
        else:
            block = decode(raw, codecs, chunks, dtype)
        sl = tuple(slice(i * c, min((i + 1) * c, s))
                   for i, c, s in zip(coords, chunks, shape))
        out[sl] = block[tuple(slice(0, x.stop - x.start) for x in sl)]
    return out


def read_shard(raw, shard, cfg, dtype, fill):
    inner = tuple(cfg["chunk_shape"])
    per = tuple(s // c for s, c in zip(shard, inner))
    n = 16 * int(np.prod(per)) + (4 if any(
        c["name"] == "crc32c" for c in cfg["index_codecs"]) else 0)
    ib = raw[:n] if cfg["index_location"] == "start" else raw[-n:]
    index = decode(ib, cfg["index_codecs"], per + (2,), "<u8")
    out = np.full(shard, fill, dtype)
    for at in np.ndindex(*per):
        off, nb = (int(x) for x in index[at])
        if off == NONE and nb == NONE:
            continue
        if off + nb > len(raw):
            raise ValueError("shard index points outside the shard")
        out[tuple(slice(a * c, (a + 1) * c) for a, c in zip(at, inner))] = \
            decode(raw[off:off + nb], cfg["codecs"], inner, dtype)
    return out


def v3_specs():
    """{name: (write_v3 kwargs without data, dtype, codec name)}."""
    le, be = [bytes_codec("little")], [bytes_codec("big")]
    out = {
        "v3-bytes-le": (dict(chunks=(1, H, W), codecs=le), "u2", None),
        "v3-bytes-be": (dict(chunks=(1, H, W), codecs=be), "u2", None),
        "v3-bytes-be-f4": (dict(chunks=(4, 32, 32), codecs=be), "f4", None),
        "v3-bytes-le-i4": (dict(chunks=(4, 32, 32), codecs=le), "i4", None),
        "v3-bytes-u1": (dict(chunks=(1, H, W), codecs=[
            {"name": "bytes"}]), "u1", None),
        "v3-key-default-dot": (dict(chunks=(1, 32, 32), codecs=le, encoding={
            "name": "default", "configuration": {"separator": "."}}),
            "u2", None),
        "v3-key-v2-dot": (dict(chunks=(1, 32, 32), codecs=le, encoding={
            "name": "v2", "configuration": {"separator": "."}}), "u2", None),
        "v3-key-v2-slash": (dict(chunks=(1, 32, 32), codecs=le, encoding={
            "name": "v2", "configuration": {"separator": "/"}}), "u2", None),
        "v3-zstd": (dict(chunks=(1, H, W), codecs=le + [zstd_codec()]),
                    "u2", "zstd"),
        "v3-gzip": (dict(chunks=(4, 32, 32), codecs=le + [gzip_codec()]),
                    "u2", "gzip"),
        "v3-blosc": (dict(chunks=(1, H, W), codecs=le + [blosc_codec()]),
                     "u2", "blosc"),
        "v3-blosc-bitshuffle-be": (dict(chunks=(1, H, W), codecs=be + [
            blosc_codec("zstd", "bitshuffle", 4)]), "i4", "blosc"),
        "v3-crc32c": (dict(chunks=(1, H, W), codecs=le + [crc_codec()]),
                      "u2", "crc32c"),
        "v3-zstd-crc32c": (dict(chunks=(1, H, W), codecs=le + [
            zstd_codec(), crc_codec()]), "u2", "zstd+crc32c"),
        "v3-fill": (dict(chunks=(1, 32, 32), codecs=le + [zstd_codec()],
                         fill_value=9, missing=[(3, 0, 0), (3, 1, 1),
                                                (20, 2, 3)]), "u2", "zstd"),
        "v3-fill-nan": (dict(chunks=(1, H, W), codecs=le, fill_value="NaN",
                             missing=[(2, 0, 0)]), "f4", None),
        "v3-transpose-keep": (dict(chunks=(1, H, W), codecs=[
            transpose_codec((0, 1, 2))] + le), "u2", None),
        "v3-shard-end": (dict(chunks=(8, H, W), codecs=[shard_codec(
            (1, H, W), le + [zstd_codec()])], missing=[(2, 0, 0),
                                                      (9, 0, 0)]),
            "u2", "zstd"),
        "v3-shard-start": (dict(chunks=(8, H, W), codecs=[shard_codec(
            (1, H, W), le + [zstd_codec()], location="start")],
            missing=[(5, 0, 0)]), "u2", "zstd"),
        "v3-shard-tiles": (dict(chunks=(4, 64, 64), codecs=[shard_codec(
            (1, 32, 32), le + [gzip_codec()])], missing=[(0, 0, 0),
                                                        (17, 1, 2)]),
            "u2", "gzip"),
        "v3-shard-noindexcrc": (dict(chunks=(16, H, W), codecs=[shard_codec(
            (1, H, W), le, index_codecs=le)]), "u2", None),
        "v3-shard-crc-inner": (dict(chunks=(8, H, W), codecs=[shard_codec(
            (1, H, W), be + [blosc_codec("lz4", "shuffle", 2),
                             crc_codec()], location="start")]),
            "u2", "blosc+crc32c"),
    }
    return out


def write_v3_all(d, out):
    for i, (name, (kw, dtype, codec)) in enumerate(sorted(
            v3_specs().items())):
        path = os.path.join(d, name + ".zarr")
        data = pixels((N, H, W), dtype, 100 + i)
        fill = kw.get("fill_value", 0)
        fill = np.nan if fill == "NaN" else fill
        kw = dict(kw)
        chunks = kw["chunks"]
        codecs = kw["codecs"]
        if codecs[0]["name"] == "sharding_indexed":
            chunks = tuple(codecs[0]["configuration"]["chunk_shape"])
        for m in kw.get("missing", ()):
            data[tuple(slice(a * c, (a + 1) * c)
                       for a, c in zip(m, chunks))] = fill
        got = write_v3(path, data, **kw)
        assert np.array_equal(got, data, equal_nan=True), name
        out[name] = Store(name, path, want=got, chunks=chunks, codec=codec,
                          version=3,
                          notes={"missing": bool(kw.get("missing"))})
    # The transpose that swaps rows and columns: parload may refuse it
    # (it does not keep a frame's rows whole in the file) or read it.
    path = os.path.join(d, "v3-transpose-swap.zarr")
    data = pixels((N, H, W), "u2", 99)
    got = write_v3(path, data, (1, H, W), [transpose_codec((0, 2, 1)),
                                           bytes_codec()])
    assert np.array_equal(got, data)
    out["v3-transpose-swap"] = Store(
        "v3-transpose-swap", path, want=got, chunks=(1, H, W), version=3,
        may_refuse=("PARLOAD_ENOTSUP", ["transpose"]))
    # A v3 group holding the array; a v3 2-D array.
    path = os.path.join(d, "v3-group.zarr")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group",
                   "attributes": {}}, f)
    data = pixels((N, H, W), "u2", 98)
    got = write_v3(os.path.join(path, "scan"), data, (1, H, W),
                   [bytes_codec(), zstd_codec()])
    out["v3-group"] = Store("v3-group", path, dataset="scan", want=got,
                            chunks=(1, H, W), codec="zstd", version=3)
    img = pixels((H, W), "u2", 97)
    path = os.path.join(d, "v3-2d.zarr")
    got = write_v3(path, img, (32, 32), [bytes_codec(), gzip_codec()])
    out["v3-2d"] = Store("v3-2d", path, want=got[None], chunks=(32, 32),
                         codec="gzip", version=3)
    # Refused: a codec parload does not have, a dtype it cannot hold.
    path = os.path.join(d, "v3-codec-unknown.zarr")
    write_v3(os.path.join(d, "v3-codec-unknown.zarr"), data, (1, H, W),
             [bytes_codec()], meta_extra={"codecs": [
                 bytes_codec(), {"name": "frobnicate"}]})
    out["v3-codec-unknown"] = Store(
        "v3-codec-unknown", path, version=3,
        refused=("PARLOAD_ENOTSUP", ["frobnicate"]))
    path = os.path.join(d, "v3-type-bool.zarr")
    write_v3(path, data > 100, (1, H, W), [bytes_codec()])
    out["v3-type-bool"] = Store("v3-type-bool", path, version=3,
                                refused=("PARLOAD_ENOTSUP", ["bool"]))


class Fixtures:
    def __init__(self, stores):
        self.stores = stores

    def __getitem__(self, name):
        return self.stores[name]


def write_all(d):
    """Every store under directory d: a Fixtures of them by name."""
    out = {}
    write_v2_all(d, out)
    write_v3_all(d, out)
    return Fixtures(out)
