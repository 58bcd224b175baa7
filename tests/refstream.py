#!/usr/bin/env python3
"""refstream.py - an independent implementation of docs/FORMAT.md.

Written from the format specification alone, with nothing but the Python
standard library, so that the test suite can check libparload against a
second reader and writer that shares none of its code.

Commands:

  refstream.py write [--views N] [--width W] [--height H] [--type T]
                     [--crc] [--seed S] [--minor M] [--junk-reserved] OUT
      Write a valid stream to OUT, and what a loader must produce from it as
      a structure of arrays: OUT.headers (view_count * 32 bytes, every view
      header in order) and OUT.pixels (view_count * payload_size bytes,
      every payload in order).  The content is a deterministic function of
      the seed, unrelated to cli/gen.c.  --minor writes another
      version_minor; --junk-reserved fills every reserved byte with
      non-zero values (readers must ignore both).

  refstream.py read [--to OUT] FILE
      Validate FILE as section 8 of docs/FORMAT.md says, print the name of
      the first failing check's error code (or OK) and the header fields,
      and exit 0 if valid, 1 if not.  --to writes the same to OUT instead
      and exits 0 either way, so that a batch can go on.

  refstream.py corrupt FILE ACTION...
      Damage a valid stream in place.  ACTION is one of
        set:FIELD=VALUE      a file header field (name as in FORMAT.md)
        view:I:FIELD=VALUE   a field of view I's header
        truncate:N           cut the file to N bytes
        append:N             append N zero bytes
        flip:OFFSET          invert every bit of the byte at OFFSET

  refstream.py crc32c [FILE]
      Print the CRC-32C of FILE, or of b"123456789" (the check value,
      0xe3069283) when no file is given.

  refstream.py batch [FILE]
      Run the commands above, one per line of FILE (or standard input),
      each split into words as a POSIX shell would; blank lines and lines
      starting with # are skipped.  Stops at the first that fails.  One
      Python start-up for many files keeps the test suite fast.
"""

import argparse
import hashlib
import os
import shlex
import stat
import struct
import sys

# ---- the format (docs/FORMAT.md sections 3-5) ----

MAGIC = b"\x89RAW\r\n\x1a\n"
FILE_HEADER_SIZE = 64
VIEW_HEADER_SIZE = 32
FLAG_CRC32C = 0x1

# pixel_type -> (name, bytes per pixel, struct code)
PIXEL_TYPES = {
    1: ("u8", 1, "B"),
    2: ("u16", 2, "H"),
    3: ("i16", 2, "h"),
    4: ("u32", 4, "I"),
    5: ("i32", 4, "i"),
    6: ("f32", 4, "f"),
    7: ("f64", 8, "d"),
}
PIXEL_BY_NAME = {v[0]: k for k, v in PIXEL_TYPES.items()}

# Field name -> (offset, struct code), in on-disk order.  "<" everywhere:
# little-endian, no padding, whatever this host is.
FILE_FIELDS = [
    ("magic", 0, "8s"),
    ("version_major", 8, "H"),
    ("version_minor", 10, "H"),
    ("file_header_size", 12, "H"),
    ("view_header_size", 14, "H"),
    ("view_count", 16, "Q"),
    ("width", 24, "I"),
    ("height", 28, "I"),
    ("pixel_type", 32, "H"),
    ("bytes_per_pixel", 34, "H"),
    ("flags", 36, "I"),
    ("payload_size", 40, "Q"),
    ("reserved", 48, "16s"),
]
VIEW_FIELDS = [
    ("view_index", 0, "Q"),
    ("timestamp_ns", 8, "Q"),
    ("angle_deg", 16, "f"),
    ("crc32c", 20, "I"),
    ("reserved", 24, "8s"),
]
FILE_STRUCT = struct.Struct("<" + "".join(c for _, _, c in FILE_FIELDS))
VIEW_STRUCT = struct.Struct("<" + "".join(c for _, _, c in VIEW_FIELDS))
assert FILE_STRUCT.size == FILE_HEADER_SIZE
assert VIEW_STRUCT.size == VIEW_HEADER_SIZE

U64 = (1 << 64) - 1

# ---- CRC-32C (docs/FORMAT.md section 7), table driven ----


def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC-32C of data; crc continues an earlier result (0 to start)."""
    crc ^= 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# ---- deterministic content ----
#
# Payload bytes come from BLAKE2b in counter mode keyed by the seed and the
# view index: fast in pure Python, and nothing like cli/gen.c's splitmix64.
# Floating-point types get real numbers instead of random bit patterns, so
# the files look like data a scanner would write.


def _keystream(seed, view, nbytes):
    out = bytearray()
    key = struct.pack("<QQ", seed & U64, view & U64)
    block = 0
    while len(out) < nbytes:
        out += hashlib.blake2b(struct.pack("<Q", block), key=key,
                               digest_size=64).digest()
        block += 1
    return bytes(out[:nbytes])


def make_payload(seed, view, width, height, pixel_type):
    _, bpp, code = PIXEL_TYPES[pixel_type]
    count = width * height
    if code in "fd":
        raw = _keystream(seed, view, 4 * count)
        words = struct.unpack("<%dI" % count, raw)
        # Values in about [-2^21, 2^21) with ten fractional bits: exact in
        # both binary32 and binary64.
        values = [(w - 0x80000000) / 1024.0 for w in words]
        return struct.pack("<%d%s" % (count, code), *values)
    # Integers: every bit pattern is a valid value of the type, so the key
    # stream is already a sequence of little-endian pixels.
    return _keystream(seed, view, bpp * count)


def make_view_header(seed, view, view_count, crc, junk_reserved):
    # A video-like clock: 30 frames a second from a seed-dependent start.
    timestamp = (seed * 1000000007 + view * 33333333) & U64
    # A helical scan's angle: half a degree a view, wrapping at 360.
    angle = ((seed % 360) + view * 0.5) % 360.0 - 180.0
    reserved = bytes((0xA5 ^ k ^ view) & 0xFF or 1 for k in range(8)) \
        if junk_reserved else bytes(8)
    return VIEW_STRUCT.pack(view, timestamp, angle, crc, reserved)


def file_header(views, width, height, pixel_type, flags, minor=0,
                junk_reserved=False, major=1):
    bpp = PIXEL_TYPES[pixel_type][1]
    reserved = bytes(range(0x40, 0x50)) if junk_reserved else bytes(16)
    return FILE_STRUCT.pack(MAGIC, major, minor, FILE_HEADER_SIZE,
                            VIEW_HEADER_SIZE, views, width, height,
                            pixel_type, bpp, flags,
                            width * height * bpp, reserved)


def write_stream(out, views, width, height, pixel_type, crc, seed,
                 minor=0, junk_reserved=False):
    flags = FLAG_CRC32C if crc else 0
    with open(out, "wb") as f, open(out + ".headers", "wb") as fh, \
            open(out + ".pixels", "wb") as fp:
        f.write(file_header(views, width, height, pixel_type, flags, minor,
                            junk_reserved))
        for i in range(views):
            payload = make_payload(seed, i, width, height, pixel_type)
            vh = make_view_header(seed, i, views,
                                  crc32c(payload) if crc else 0,
                                  junk_reserved)
            f.write(vh)
            f.write(payload)
            fh.write(vh)
            fp.write(payload)


# ---- reading and validating (docs/FORMAT.md section 8) ----


class Invalid(Exception):
    def __init__(self, code, what):
        super().__init__("%s: %s" % (code, what))
        self.code = code


def decode_file_header(b):
    return dict(zip([n for n, _, _ in FILE_FIELDS], FILE_STRUCT.unpack(b)))


def decode_view_header(b):
    return dict(zip([n for n, _, _ in VIEW_FIELDS], VIEW_STRUCT.unpack(b)))


def validate(path):
    """Return the decoded file header, or raise Invalid."""
    try:
        f = open(path, "rb")
    except IsADirectoryError:
        raise Invalid("PARLOAD_ENOTREG", "a directory")
    except OSError as e:
        raise Invalid("PARLOAD_EOPEN", e.strerror)
    with f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Invalid("PARLOAD_ENOTREG", "not a regular file")
        size = st.st_size
        if size < FILE_HEADER_SIZE:
            raise Invalid("PARLOAD_ETRUNCATED", "%d bytes" % size)
        h = decode_file_header(f.read(FILE_HEADER_SIZE))
        if h["magic"] != MAGIC:
            raise Invalid("PARLOAD_EMAGIC", h["magic"].hex())
        if h["version_major"] != 1:
            raise Invalid("PARLOAD_EVERSION", str(h["version_major"]))
        if h["file_header_size"] != 64 or h["view_header_size"] != 32:
            raise Invalid("PARLOAD_EHDRSIZE", "%d/%d" % (
                h["file_header_size"], h["view_header_size"]))
        if h["width"] == 0 or h["height"] == 0:
            raise Invalid("PARLOAD_EGEOMETRY", "zero dimension")
        if h["pixel_type"] not in PIXEL_TYPES:
            raise Invalid("PARLOAD_EPIXTYPE", str(h["pixel_type"]))
        bpp = PIXEL_TYPES[h["pixel_type"]][1]
        if h["bytes_per_pixel"] != bpp:
            raise Invalid("PARLOAD_EGEOMETRY", "bytes_per_pixel")
        if h["flags"] & ~FLAG_CRC32C:
            raise Invalid("PARLOAD_EFLAGS", "0x%x" % h["flags"])
        payload = h["width"] * h["height"] * bpp
        if payload > U64:
            raise Invalid("PARLOAD_EOVERFLOW", "payload")
        if h["payload_size"] != payload:
            raise Invalid("PARLOAD_EGEOMETRY", "payload_size")
        record = VIEW_HEADER_SIZE + payload
        want = FILE_HEADER_SIZE + h["view_count"] * record
        if want > U64:
            raise Invalid("PARLOAD_EOVERFLOW", "file size")
        if size < want:
            raise Invalid("PARLOAD_ETRUNCATED", "%d complete views" % (
                (size - FILE_HEADER_SIZE) // record))
        if size > want:
            raise Invalid("PARLOAD_ETRAILING", "%d extra bytes" % (
                size - want))
        for i in range(h["view_count"]):
            vh = decode_view_header(f.read(VIEW_HEADER_SIZE))
            pix = f.read(payload)
            if vh["view_index"] != i:
                raise Invalid("PARLOAD_EVIEWINDEX", "view %d" % i)
            if h["flags"] & FLAG_CRC32C and crc32c(pix) != vh["crc32c"]:
                raise Invalid("PARLOAD_ECRC", "view %d" % i)
        return h


# ---- damaging files ----


def _set_field(path, base, fields, name, value):
    for fname, off, code in fields:
        if fname == name:
            break
    else:
        raise SystemExit("refstream.py: no field %r" % name)
    if code.endswith("s"):
        data = bytes.fromhex(value)
        if len(data) != struct.calcsize(code):
            raise SystemExit("refstream.py: %s takes %d hex bytes" % (
                name, struct.calcsize(code)))
    elif code == "f":
        data = struct.pack("<f", float(value))
    else:
        data = struct.pack("<" + code, int(value, 0))
    with open(path, "r+b") as f:
        f.seek(base + off)
        f.write(data)


def corrupt(path, actions):
    for a in actions:
        kind, _, arg = a.partition(":")
        if kind == "set":
            name, _, value = arg.partition("=")
            _set_field(path, 0, FILE_FIELDS, name, value)
        elif kind == "view":
            index, _, rest = arg.partition(":")
            name, _, value = rest.partition("=")
            with open(path, "rb") as f:
                h = decode_file_header(f.read(FILE_HEADER_SIZE))
            base = FILE_HEADER_SIZE + int(index) * (
                VIEW_HEADER_SIZE + h["payload_size"])
            _set_field(path, base, VIEW_FIELDS, name, value)
        elif kind == "truncate":
            os.truncate(path, int(arg))
        elif kind == "append":
            with open(path, "ab") as f:
                f.write(bytes(int(arg)))
        elif kind == "flip":
            with open(path, "r+b") as f:
                f.seek(int(arg))
                b = f.read(1)
                f.seek(int(arg))
                f.write(bytes([b[0] ^ 0xFF]))
        else:
            raise SystemExit("refstream.py: unknown action %r" % a)


# ---- command line ----


def _pixel_type(s):
    if s in PIXEL_BY_NAME:
        return PIXEL_BY_NAME[s]
    try:
        t = int(s)
    except ValueError:
        t = 0
    if t not in PIXEL_TYPES:
        raise argparse.ArgumentTypeError("unknown pixel type %r" % s)
    return t


def main(argv):
    p = argparse.ArgumentParser(prog="refstream.py", description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    w = sub.add_parser("write")
    w.add_argument("--views", type=int, default=3)
    w.add_argument("--width", type=int, default=16)
    w.add_argument("--height", type=int, default=4)
    w.add_argument("--type", type=_pixel_type, default=2)
    w.add_argument("--crc", action="store_true")
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("--minor", type=int, default=0)
    w.add_argument("--junk-reserved", action="store_true")
    w.add_argument("out")

    r = sub.add_parser("read")
    r.add_argument("--to")
    r.add_argument("file")

    c = sub.add_parser("corrupt")
    c.add_argument("file")
    c.add_argument("actions", nargs="+")

    k = sub.add_parser("crc32c")
    k.add_argument("file", nargs="?")

    b = sub.add_parser("batch")
    b.add_argument("file", nargs="?")

    a = p.parse_args(argv)
    if a.cmd == "write":
        if a.views < 0 or a.width <= 0 or a.height <= 0:
            p.error("views must be >= 0, width and height > 0")
        write_stream(a.out, a.views, a.width, a.height, a.type, a.crc,
                     a.seed, a.minor, a.junk_reserved)
        return 0
    if a.cmd == "read":
        try:
            h = validate(a.file)
            lines = ["OK"]
            for name, _, _ in FILE_FIELDS:
                v = h[name]
                lines.append("%s %s" % (
                    name, v.hex() if isinstance(v, bytes) else v))
            rc = 0
        except Invalid as e:
            lines = [str(e)]
            rc = 1
        if a.to:
            with open(a.to, "w") as f:
                f.write("\n".join(lines) + "\n")
            return 0
        print("\n".join(lines))
        return rc
    if a.cmd == "batch":
        f = open(a.file) if a.file else sys.stdin
        with f:
            for n, line in enumerate(f, 1):
                words = shlex.split(line)
                if not words or words[0].startswith("#"):
                    continue
                if words[0] == "batch":
                    p.error("line %d: batch does not nest" % n)
                rc = main(words)
                if rc:
                    sys.stderr.write("refstream.py: batch line %d failed: "
                                     "%s\n" % (n, line.strip()))
                    return rc
        return 0
    if a.cmd == "corrupt":
        corrupt(a.file, a.actions)
        return 0
    if a.cmd == "crc32c":
        if a.file:
            with open(a.file, "rb") as f:
                data = f.read()
        else:
            data = b"123456789"
        print("0x%08x" % crc32c(data))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
