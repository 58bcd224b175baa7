"""Shared helpers of the parload Python tests.

The reference reader and writer here are written from docs/FORMAT.md with
NumPy and struct alone, sharing no code with libparload, so that a load is
always compared against a second, independent reading of the file.
"""

import contextlib
import faulthandler
import os
import shutil
import struct
import subprocess
import tempfile

import numpy as np
import pytest

import parload

# A test that hangs (a load holding the GIL while it waits for a Python
# thread) fails the run instead of stopping it.
faulthandler.dump_traceback_later(600, exit=True)

MAGIC = b"\x89RAW\r\n\x1a\n"
# pixel_type code -> dtype, as docs/FORMAT.md numbers them
PIXEL_TYPES = {1: "<u1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4",
               7: "<f8"}
TYPE_OF = {np.dtype(v): k for k, v in PIXEL_TYPES.items()}
# The view header, with its 8 reserved bytes.
VIEW_HEADER = np.dtype({"names": ["view_index", "timestamp_ns", "angle_deg",
                                  "crc32c"],
                        "formats": ["<u8", "<u8", "<f4", "<u4"],
                        "offsets": [0, 8, 16, 20], "itemsize": 32})

# Byte offsets of the file header's fields.
OFF = {"magic": 0, "version_major": 8, "version_minor": 10,
       "file_header_size": 12, "view_header_size": 14, "view_count": 16,
       "width": 24, "height": 28, "pixel_type": 32, "bytes_per_pixel": 34,
       "flags": 36, "payload_size": 40}


def crc32c(data):
    """CRC-32C (Castagnoli), bitwise: slow, for small payloads only."""
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def write_raw(path, pixels, timestamps=None, angles=None, crc=False):
    """Write pixels (views, height, width) as a stream, independently."""
    pixels = np.ascontiguousarray(pixels)
    v, h, w = pixels.shape
    dt = pixels.dtype.newbyteorder("<")
    payload = h * w * dt.itemsize
    head = struct.pack("<8sHHHHQIIHHIQ16x", MAGIC, 1, 0, 64, 32, v, w, h,
                       TYPE_OF[dt], dt.itemsize, 1 if crc else 0, payload)
    rec = np.zeros(v, dtype=[("h", VIEW_HEADER), ("p", dt, (h, w))])
    rec["h"]["view_index"] = np.arange(v)
    if timestamps is not None:
        rec["h"]["timestamp_ns"] = timestamps
    if angles is not None:
        rec["h"]["angle_deg"] = angles
    rec["p"] = pixels
    if crc:
        rec["h"]["crc32c"] = [crc32c(p.tobytes()) for p in pixels]
    with open(path, "wb") as f:
        f.write(head)
        rec.tofile(f)
    return rec


def read_raw(path):
    """(file header fields, headers, pixels) of a stream, read plainly."""
    with open(path, "rb") as f:
        head = f.read(64)
    fields = dict(zip(OFF, struct.unpack("<8sHHHHQIIHHIQ", head[:48])))
    dt = np.dtype(PIXEL_TYPES[fields["pixel_type"]])
    rec = np.fromfile(path, offset=64,
                      dtype=[("h", VIEW_HEADER),
                             ("p", dt, (fields["height"], fields["width"]))])
    return fields, rec["h"].copy(), np.ascontiguousarray(rec["p"])


def patch(path, offset, fmt, value):
    """Overwrite bytes of a file at offset with struct.pack(fmt, value)."""
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(struct.pack(fmt, value))


def random_pixels(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype) * 1000
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype,
                        endpoint=True)


# RSS means nothing under AddressSanitizer, whose quarantine keeps freed
# memory (python/tests/run.sh sets this).
needs_rss = pytest.mark.skipif(bool(os.environ.get("PARLOAD_TEST_ASAN")),
                               reason="RSS under AddressSanitizer counts "
                               "its quarantine")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def stream(tmp_path, rng):
    """A small u16 stream with CRCs: (path, pixels, headers)."""
    path = tmp_path / "s.raw"
    px = random_pixels(rng, (23, 9, 13), np.uint16)
    rec = write_raw(path, px, timestamps=np.arange(23) * 1000 + 7,
                    angles=np.linspace(0, 180, 23, dtype=np.float32),
                    crc=True)
    return path, px, rec["h"]


@pytest.fixture
def parload_bin():
    """The parload command of the build tree (make check sets it); a test
    of an installed package (pip) without it skips."""
    path = os.environ.get("PARLOAD_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("PARLOAD_BIN is not set to the parload command "
                    "(make check sets it to the build tree's)")
    return path


def run_cli(parload_bin, *args):
    return subprocess.run([parload_bin, *map(str, args)], capture_output=True,
                          text=True, timeout=120)


# Raw layouts (raw=): the type names of parload_desc_parse and their
# dtypes in the file, written and read back here with NumPy alone.
RAW_TYPES = {"u8": "u1", "u16": "u2", "i16": "i2", "u32": "u4", "i32": "i4",
             "f32": "f4", "f64": "f8"}


def raw_dtype(name):
    """The file's dtype of a type name ("u16be" is >u2, "u16" <u2)."""
    order = ">" if name.endswith("be") else "<"
    return np.dtype(order + RAW_TYPES[name[:-2] if name[-2:] in ("le", "be")
                                      else name])


def write_layout(rng, paths, views, width, height, type_name, offset=0,
                 header=0, gap=0, trailing=b"", last_gap=True):
    """Write views[i] records into paths[i], laid out as described: each
    file offset bytes of its own, then for each view header random bytes,
    its pixels in the type's byte order and gap random bytes (the last
    file's last gap left out unless last_gap), then trailing bytes after
    the last file's records.  Returns (pixels, raw_headers) of the whole
    stream, pixels in the machine's order."""
    dt = raw_dtype(type_name)
    total = sum(views)
    px = random_pixels(rng, (total, height, width), dt.newbyteorder("="))
    heads = rng.integers(0, 256, size=(total, header), dtype=np.uint8)
    v = 0
    for i, (path, n) in enumerate(zip(paths, views)):
        with open(path, "wb") as f:
            f.write(rng.integers(0, 256, offset, dtype=np.uint8).tobytes())
            for k in range(n):
                f.write(heads[v].tobytes())
                f.write(px[v].astype(dt).tobytes())
                last = i == len(paths) - 1 and k == n - 1
                if not last or last_gap:
                    f.write(rng.integers(0, 256, gap,
                                         dtype=np.uint8).tobytes())
                v += 1
            if i == len(paths) - 1:
                f.write(trailing)
    return px, heads


def read_layout(paths, width, height, type_name, offset=0, header=0, gap=0,
                count=None):
    """An independent reading of a raw layout: each file's bytes after
    its offset, padded to whole records (a missing last gap), viewed as
    records (header, pixels, gap) and byte-swapped to the machine's
    order.  count: the views of the whole stream (None: every whole
    record).  Returns (pixels, raw_headers)."""
    dt = raw_dtype(type_name)
    rec = np.dtype([("h", np.uint8, (header,)), ("p", dt, (height, width)),
                    ("g", np.uint8, (gap,))])
    pxs, hds = [], []
    for path in paths:
        body = np.fromfile(path, dtype=np.uint8)[offset:]
        n = (len(body) + gap) // rec.itemsize
        body = np.concatenate([body, np.zeros(n * rec.itemsize + gap,
                                              np.uint8)])
        r = body[:n * rec.itemsize].view(rec)
        pxs.append(r["p"].astype(dt.newbyteorder("=")))
        hds.append(r["h"])
    px, hd = np.concatenate(pxs), np.concatenate(hds)
    if count is not None:
        px, hd = px[:count], hd[:count]
    return px, hd


def raw_spec(width, height, type_name, **sizes):
    """raw= text of a layout: "width=..,height=..,type=..[,key=N]"."""
    return ",".join([f"width={width}", f"height={height}",
                     f"type={type_name}"] +
                    [f"{k}={v}" for k, v in sizes.items() if v is not None])


# Selections of the 37 x 70 x 100 fixtures of chunked formats
# (detector_fixtures.py, zarr_fixtures.py: frames not a multiple of 16,
# rows and columns not multiples of 32): views with a step, a band of
# rows, columns, all at once and as sinograms.
SELECTIONS = [
    {"views": slice(2, 35, 3)},
    {"rows": (5, 67)},
    {"cols": (3, 97)},
    {"views": slice(1, 36, 2), "rows": (30, 40), "cols": (31, 70)},
    {"rows": (20, 52), "layout": "sinograms"},
    {"views": slice(0, 37, 4), "rows": (0, 70), "cols": (33, 64),
     "layout": "sinograms"},
]


def sel_id(sel):
    """A selection's test id: views=2:35:3,rows=5:67,sinograms."""
    out = []
    for k, v in sel.items():
        if isinstance(v, slice):
            v = "%s:%s:%s" % (v.start, v.stop, v.step)
        elif isinstance(v, tuple):
            v = "%d:%d" % v
        out.append(v if k == "layout" else "%s=%s" % (k, v))
    return ",".join(out) or "whole"


def expected(a, sel):
    """What a load of array a with selection sel must give."""
    v = sel.get("views", slice(None))
    r = slice(*sel.get("rows", (None, None)))
    c = slice(*sel.get("cols", (None, None)))
    out = a[v, r, c]
    if sel.get("layout") == "sinograms":
        out = np.ascontiguousarray(out.transpose(1, 0, 2))
    return out


def check_part(comm, part, want, split):
    """parload.mpi's part of every rank (the same collective calls on
    each before any assert): the slice of want (the reference read,
    views first) that part.index names; the parts cover the frames (or
    rows) once; nothing went serial."""
    if split == "rows":
        want = want.transpose(1, 0, 2)
    spans = comm.allgather((part.index[0].start, part.index[0].stop))
    serial = comm.allgather(part.stats["serial"])
    assert part.global_shape == want.shape
    assert np.array_equal(part.pixels, want[part.index])
    assert spans[0][0] == 0 and spans[-1][1] == want.shape[0]
    assert all(e == b for (_, e), (b, _) in zip(spans, spans[1:]))
    assert serial == [None] * comm.Get_size(), serial


@contextlib.contextmanager
def rank0_writes(comm, prefix, write):
    """What write(directory) returns on rank 0, broadcast to every rank,
    the files written in a directory every rank sees (named prefix...),
    removed once every rank is done with them."""
    rank0 = comm.Get_rank() == 0
    d = comm.bcast(tempfile.mkdtemp(prefix=prefix) if rank0 else None,
                   root=0)
    out = comm.bcast(write(d) if rank0 else None, root=0)
    try:
        yield out
    finally:
        comm.Barrier()
        if rank0:
            shutil.rmtree(d, ignore_errors=True)
