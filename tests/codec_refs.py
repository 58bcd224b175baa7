#!/usr/bin/env python3
"""Chunks encoded by the reference implementations, for tests/check_codecs.

    codec_refs.py PART DIR [LACKING]
    codec_refs.py decode DIR

writes DIR/cases.txt and the files it names, one chunk and its data each:

    C FILTER_ID ELEM NCD CD... DATA CHUNK LABEL   a chunk one filter made
    N ROW ELEM NP PARAM... DATA CHUNK LABEL       a chunk of parload's row
                                                  ROW with those params
    T ELEM N DATA SHUFFLED LABEL                  bitshuffle's transpose of
                                                  N elements, one block

PART is hdf5 (h5py and hdf5plugin: the chunks HDF5 stores, read with
read_direct_chunk, with the client data HDF5 keeps), numcodecs (Blosc with
every compressor and shuffle numcodecs carries, Zstd, GZip, Zlib, LZ4,
BZ2; CRC-32C from its definition, which numcodecs 0.11 lacks) or
bitshuffle (its Python module: the transpose, and compress_lz4 framed as
its HDF5 filter frames it).  LACKING: the rows the libparload under test
lacks ("a,b", "-": none), whose chunks are not written (saying so).  A
module missing exits 77, saying which.

decode reads DIR/encoded.txt, chunks parload encoded, one a line:

    ROW ELEM P0 P1 P2 DATA CHUNK

and decodes each with numcodecs (CRC-32C from its definition), exiting 1
naming those that decode to other bytes than DATA.
"""
import os
import struct
import sys

ELEMS = ("u1", "u2", "u4", "u8")
# Chunk shapes: whole multiples of 8 elements and not.
SHAPES = ((16, 32), (7, 13), (3, 333))


def need(*names):
    mods = []
    for name in names:
        try:
            mods.append(__import__(name))
        except ImportError as e:
            print("no Python module %s for %s (%s)" % (name, sys.executable,
                                                     e))
            sys.exit(77)
    return mods


class Out:
    def __init__(self, d, lacking=()):
        self.d = d
        self.n = 0
        self.lines = []
        self.lacking = set(lacking)
        self.told = set()

    def blob(self, data):
        self.n += 1
        name = "b%05d" % self.n
        with open(os.path.join(self.d, name), "wb") as f:
            f.write(data)
        return name

    def chunk(self, fid, elem, cd, data, chunk, label):
        self.lines.append("C %d %d %d %s %s %s %s" % (
            fid, elem, len(cd), " ".join(str(int(c)) for c in cd) or "-",
            self.blob(data), self.blob(chunk), label))

    def named(self, row, elem, params, data, chunk, label):
        """A chunk of parload's row named row, with its params."""
        if row in self.lacking:
            if row not in self.told:
                print("codec_refs.py: this libparload has no %s row: its "
                      "chunks are not tested" % row)
                self.told.add(row)
            return
        self.lines.append("N %s %d %d %s %s %s %s" % (
            row, elem, len(params),
            " ".join(str(int(c)) for c in params) or "-",
            self.blob(data), self.blob(chunk), label))

    def transpose(self, elem, n, data, shuffled, label):
        self.lines.append("T %d %d %s %s %s" % (
            elem, n, self.blob(data), self.blob(shuffled), label))

    def close(self):
        with open(os.path.join(self.d, "cases.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def frames(np, dtype, shape, seed):
    """Detector-like counts (mostly small) and, for a second chunk, bytes
    that do not compress."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    small = np.minimum(rng.poisson(1.5, shape), top).astype(dtype)
    noise = rng.integers(0, top, shape, dtype=np.uint64,
                         endpoint=True).astype(dtype)
    return (("counts", small), ("noise", noise))


def hdf5_filters():
    import hdf5plugin
    yield "lzf", dict(compression="lzf")
    yield "gzip1", dict(compression="gzip", compression_opts=1)
    yield "gzip6", dict(compression="gzip", compression_opts=6)
    yield "shuffle", dict(shuffle=True)
    yield "fletcher32", dict(fletcher32=True)
    for lvl in (1, 9):
        yield "bzip2-%d" % lvl, dict(**hdf5plugin.BZip2(blocksize=lvl))
    yield "lz4", dict(**hdf5plugin.LZ4())
    yield "lz4-blocks", dict(**hdf5plugin.LZ4(nbytes=48))
    for lvl in (1, 12):
        yield "zstd%d" % lvl, dict(**hdf5plugin.Zstd(clevel=lvl))
    for cname in ("none", "lz4", "zstd"):
        for nelems in (0, 64):
            yield "bitshuffle-%s-%d" % (cname, nelems), dict(
                **hdf5plugin.Bitshuffle(nelems=nelems, cname=cname))
    for cname in ("blosclz", "lz4", "lz4hc", "zlib", "zstd"):
        for shuf in (hdf5plugin.Blosc.NOSHUFFLE, hdf5plugin.Blosc.SHUFFLE,
                     hdf5plugin.Blosc.BITSHUFFLE):
            for lvl in (1, 9):
                yield "blosc-%s-%d-%d" % (cname, shuf, lvl), dict(
                    **hdf5plugin.Blosc(cname=cname, clevel=lvl,
                                       shuffle=shuf))


def part_hdf5(out):
    np, h5py, _ = need("numpy", "h5py", "hdf5plugin")
    path = os.path.join(out.d, "chunks.h5")
    seed = 0
    written = []
    with h5py.File(path, "w") as f:
        for name, kw in hdf5_filters():
            fid = kw.get("compression")
            if isinstance(fid, int) and not h5py.h5z.filter_avail(fid):
                print("codec_refs.py: no HDF5 filter %d (%s) here: its "
                      "chunks are not tested" % (fid, name))
                continue
            if fid == 307 and "bzip2" in out.lacking:
                print("codec_refs.py: this libparload has no bzip2 row: "
                      "its chunks are not tested")
                continue
            for dt in ELEMS:
                for shape in SHAPES:
                    for kind, a in frames(np, dt, shape, seed):
                        seed += 1
                        f.create_dataset("d%d" % seed, data=a[None],
                                         chunks=(1,) + shape, **kw)
                        written.append(("d%d" % seed, a, "%s %s %s %dx%d" % (
                            name, kind, dt, shape[0], shape[1])))
    # Read back from the file, as it was stored.
    bad = set()
    with h5py.File(path, "r") as f:
        for name, a, label in written:
            kind = label.split()[0]
            if kind not in bad and not one(out, f[name], a, label):
                bad.add(kind)


def one(out, ds, a, label):
    """The dataset's one chunk, where every filter ran on it and HDF5
    reads it back as it was written (a plugin built without a codec, as
    bitshuffle's without zstd, may store a chunk it never filled)."""
    try:
        back = ds[0]
    except OSError as e:
        print("codec_refs.py: HDF5 cannot read back %s (%s): this filter "
              "is not tested" % (label, str(e).splitlines()[0]))
        return False
    if not (back == a).all():
        print("codec_refs.py: HDF5 reads back other data for %s: this "
              "filter is not tested" % label)
        return False
    mask, chunk = ds.id.read_direct_chunk((0, 0, 0))
    plist = ds.id.get_create_plist()
    nf = plist.get_nfilters()
    if mask or nf != 1:
        return True  # an optional filter that gave up: stored as it is
    fid, _, cd, _ = plist.get_filter(0)
    framed = fid == 32004 or (fid == 32008 and len(cd) > 4 and cd[4])
    if framed and struct.unpack(">Q", chunk[:8])[0] != a.nbytes:
        # Debian's bitshuffle plugin, built without zstd, stores such
        # chunks unfilled (and reads them back from elsewhere).
        print("codec_refs.py: HDF5 stored no %s chunk (its header says %d "
              "bytes): this filter is not tested" % (label, struct.unpack(
                  ">Q", chunk[:8])[0]))
        return False
    out.chunk(fid, a.dtype.itemsize, cd, a.tobytes(), chunk, label)
    return True


def part_numcodecs(out):
    np, numcodecs = need("numpy", "numcodecs")
    from numcodecs import blosc
    seed = 100
    for dt in ELEMS:
        for shape in SHAPES:
            for kind, a in frames(np, dt, shape, seed):
                seed += 1
                raw = a.tobytes()
                lab = "%s %s %dx%d" % (kind, dt, shape[0], shape[1])
                for cname in blosc.list_compressors():
                    for shuf in (blosc.NOSHUFFLE, blosc.SHUFFLE,
                                 blosc.BITSHUFFLE):
                        for lvl in (1, 9):
                            c = numcodecs.Blosc(cname=cname, clevel=lvl,
                                                shuffle=shuf)
                            out.chunk(32001, a.dtype.itemsize, (),
                                      raw, c.encode(a),
                                      "numcodecs-blosc-%s-%d-%d %s" % (
                                          cname, shuf, lvl, lab))
                for lvl in (1, 12):
                    out.chunk(32015, a.dtype.itemsize, (), raw,
                              numcodecs.Zstd(level=lvl).encode(raw),
                              "numcodecs-zstd%d %s" % (lvl, lab))
                for lvl in (1, 9):
                    for row, codec in (("gzip", numcodecs.GZip),
                                       ("deflate", numcodecs.Zlib),
                                       ("bzip2", numcodecs.BZ2)):
                        out.named(row, a.dtype.itemsize, (), raw,
                                  codec(level=lvl).encode(raw),
                                  "numcodecs-%s%d %s" % (
                                      codec.codec_id, lvl, lab))
                out.named("crc32c", a.dtype.itemsize, (), raw,
                          raw + struct.pack("<I", crc32c(raw)),
                          "crc32c %s" % lab)
                for accel in (1, 10):
                    out.named("lz4", a.dtype.itemsize, (1,), raw,
                              numcodecs.LZ4(acceleration=accel).encode(raw),
                              "numcodecs-lz4-%d %s" % (accel, lab))


def part_bitshuffle(out):
    np, bitshuffle = need("numpy", "bitshuffle")
    rng = np.random.default_rng(7)
    # The transpose alone, one block, every element size it takes.
    # Lengths not a multiple of 8 leave their last n % 8 elements as
    # they are, and the row takes them (its block size the rest).
    for elem in (1, 2, 3, 4, 5, 8, 12, 16):
        for n in (8, 16, 24, 128, 136, 1000, 1003, 1024, 4096, 4099, 4104):
            a = rng.integers(0, 256, n * elem, dtype=np.uint8).view(
                "V%d" % elem)
            block = n - n % 8
            s = bitshuffle.bitshuffle(a, block_size=block).tobytes()
            out.transpose(elem, n, a.tobytes(), s, "transpose elem %d n %d" %
                          (elem, n))
            out.chunk(32008, elem, (0, 4, elem, block, 0), a.tobytes(), s,
                      "bitshuffle.bitshuffle elem %d n %d block %d" %
                      (elem, n, block))
    # compress_lz4's blocks, with the header its HDF5 filter writes.
    for dt in ELEMS:
        elem = np.dtype(dt).itemsize
        for n in (5, 8, 91, 1000, 4099, 20000):
            for block in (0, 8, 128, 1024):
                a = np.minimum(rng.poisson(2.0, n), 255).astype(dt)
                body = bitshuffle.compress_lz4(a, block_size=block).tobytes()
                chunk = struct.pack(">QI", a.nbytes, block * elem) + body
                out.chunk(32008, elem, (0, 4, elem, block, 2), a.tobytes(),
                          chunk, "bitshuffle.compress_lz4 %s n %d block %d" %
                          (dt, n, block))
            s = bitshuffle.bitshuffle(a).tobytes()
            out.chunk(32008, elem, (0, 4, elem, 0, 0), a.tobytes(), s,
                      "bitshuffle.bitshuffle %s n %d" % (dt, n))


def crc32c(data):
    """CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def decode_crc32c(chunk):
    body, tail = chunk[:-4], chunk[-4:]
    if len(tail) != 4 or struct.unpack("<I", tail)[0] != crc32c(body):
        raise ValueError("CRC-32C mismatch")
    return body


def decode(d):
    np, numcodecs = need("numpy", "numcodecs")
    assert crc32c(b"123456789") == 0xE3069283
    by_row = {
        "none": lambda c, p: c,
        "zstd": lambda c, p: numcodecs.Zstd().decode(c),
        "deflate": lambda c, p: numcodecs.Zlib().decode(c),
        "gzip": lambda c, p: numcodecs.GZip().decode(c),
        "blosc": lambda c, p: numcodecs.Blosc().decode(c),
        "lz4": lambda c, p: numcodecs.LZ4().decode(c),
        "bzip2": lambda c, p: numcodecs.BZ2().decode(c),
        "crc32c": lambda c, p: decode_crc32c(c),
    }
    bad = n = 0
    with open(os.path.join(d, "encoded.txt")) as f:
        for line in f:
            row, elem, p0, p1, p2, data, chunk = line.split()
            raw = open(os.path.join(d, data), "rb").read()
            enc = open(os.path.join(d, chunk), "rb").read()
            try:
                got = bytes(by_row[row](enc, (int(p0), int(p1), int(p2))))
            except Exception as e:
                got = "%s: %s" % (type(e).__name__, e)
            n += 1
            if got != raw:
                bad += 1
                print("%s elem %s params %s %s %s, %d bytes (%s): %s" % (
                    row, elem, p0, p1, p2, len(raw), chunk,
                    got if isinstance(got, str) else
                    "%d other bytes" % len(got)))
    print("codec_refs.py: %d of %d chunks decode to other bytes" % (bad, n))
    sys.exit(1 if bad else 0)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "decode":
        decode(sys.argv[2])
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    part, d = sys.argv[1], sys.argv[2]
    lacking = sys.argv[3].split(",") if len(sys.argv) > 3 else ()
    out = Out(d, [x for x in lacking if x != "-"])
    {"hdf5": part_hdf5, "numcodecs": part_numcodecs,
     "bitshuffle": part_bitshuffle}[part](out)
    out.close()


if __name__ == "__main__":
    main()
