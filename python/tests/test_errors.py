"""Every library error a Python caller can meet, with its view and byte
offset, and bad arguments: clean exceptions, never a crash."""

import os
import pickle
import struct
import threading

import numpy as np
import pytest

import parload
from conftest import OFF, patch, write_raw

PX = np.arange(10 * 4 * 6, dtype=np.uint16).reshape(10, 4, 6)
RECORD = 32 + 4 * 6 * 2  # bytes of one view in the file
SIZE = 64 + 10 * RECORD


def view_offset(i):
    return 64 + i * RECORD


def field(name, fmt, value):
    return lambda p: patch(p, OFF[name], fmt, value)


# name: (damage done to a valid file, load options, code, view, offset)
CASES = {
    "magic": (field("magic", "<B", 0), {}, "EMAGIC", None, 0),
    "version": (field("version_major", "<H", 2), {}, "EVERSION", None, 8),
    "header size": (field("view_header_size", "<H", 40), {}, "EHDRSIZE",
                    None, 14),
    "pixel type": (field("pixel_type", "<H", 9), {}, "EPIXTYPE", None, 32),
    "geometry": (field("payload_size", "<Q", 47), {}, "EGEOMETRY", None, 40),
    "flags": (field("flags", "<I", 6), {}, "EFLAGS", None, 36),
    "overflow": (field("view_count", "<Q", 2**62), {}, "EOVERFLOW", None, 16),
    "truncated": (lambda p: os.truncate(p, 500), {}, "ETRUNCATED", None, 500),
    "trailing": (lambda p: open(p, "ab").write(b"xx"), {}, "ETRAILING", None,
                 SIZE),
    "view index": (lambda p: patch(p, view_offset(3), "<Q", 7), {},
                   "EVIEWINDEX", 3, view_offset(3)),
    "crc": (lambda p: patch(p, view_offset(4) + 32 + 5, "<B", 255),
            {"verify": True}, "ECRC", 4, view_offset(4) + 32),
}


@pytest.mark.parametrize("case", CASES)
def test_load_errors(tmp_path, case):
    damage, opts, code, view, offset = CASES[case]
    path = tmp_path / "bad.raw"
    write_raw(path, PX, crc=True)
    damage(path)
    for strategy in parload.strategies():
        with pytest.raises(parload.Error) as e:
            parload.load(path, strategy=strategy, **opts)
        err = e.value
        assert isinstance(err, OSError)
        assert err.code == "PARLOAD_" + code, strategy
        assert err.view == view and err.offset == offset, strategy
        assert err.filename == str(path)
        assert str(err).startswith(f"{path}: ")
        if offset is not None:
            assert f"byte offset {offset}" in str(err)
        assert err.errno is None and err.strerror


def test_keep_going_lists_bad_views(tmp_path):
    path = tmp_path / "crc.raw"
    write_raw(path, PX, crc=True)
    for v in (2, 7):
        patch(path, view_offset(v) + 40, "<B", 255)
    ds = parload.load(path, verify=True, keep_going=True)
    assert ds.bad_views.tolist() == [2, 7]
    assert ds.stats["crc_checked"] == 10


def test_allow_truncated(tmp_path):
    path = tmp_path / "t.raw"
    write_raw(path, PX)
    os.truncate(path, view_offset(6) + 10)
    ds = parload.load(path, allow_truncated=True)
    assert len(ds) == 6 and ds.stats["declared_views"] == 10
    assert np.array_equal(ds.pixels, PX[:6])


def test_missing_file_is_a_file_not_found_error(tmp_path):
    path = tmp_path / "missing.raw"
    with pytest.raises(FileNotFoundError) as e:
        parload.load(path)
    assert isinstance(e.value, parload.Error)
    assert e.value.code == "PARLOAD_EOPEN" and e.value.errno == 2
    assert e.value.filename == str(path)
    with pytest.raises(FileNotFoundError):
        parload.read_header(str(path))
    # It survives pickling (multiprocessing hands exceptions over so).
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is type(e.value) and str(again) == str(e.value)


def test_message_naming_a_path_that_is_not_utf8(tmp_path):
    """A file name that is not UTF-8 is escaped in the message, which
    prints; Error.filename is the path as given."""
    path = os.path.join(os.fsencode(tmp_path), b"n\xffo.raw")
    with pytest.raises(FileNotFoundError) as e:
        parload.load(path)
    msg = str(e.value)
    assert msg.startswith(os.fsdecode(tmp_path) + "/n\\xffo.raw: "), msg
    msg.encode("utf-8")
    assert e.value.filename == path


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_a_permission_error(tmp_path):
    path = tmp_path / "p.raw"
    write_raw(path, PX)
    path.chmod(0)
    with pytest.raises(PermissionError) as e:
        parload.load(path)
    assert isinstance(e.value, parload.Error)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(parload.Error) as e:
        parload.load(tmp_path)
    assert e.value.code == "PARLOAD_ENOTREG"
    assert str(e.value).startswith(f"{tmp_path}: ")


def test_fifo_path_is_read_as_a_stream(tmp_path):
    path = tmp_path / "s.raw"
    write_raw(path, PX)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t = threading.Thread(target=lambda: fifo.write_bytes(path.read_bytes()))
    t.start()
    try:
        ds = parload.load(fifo)
    finally:
        if t.is_alive():  # a failed load must not leave the writer waiting
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            while t.is_alive():
                try:
                    os.read(fd, 1 << 16)
                except BlockingIOError:
                    pass
            os.close(fd)
        t.join()
    assert np.array_equal(ds.pixels, PX)


def test_out_of_memory_from_a_stream(tmp_path):
    """A pipe whose header promises more than the machine holds."""
    path = tmp_path / "s.raw"
    write_raw(path, PX)
    head = bytearray(path.read_bytes()[:64])
    struct.pack_into("<Q", head, OFF["view_count"], 2**40)
    r, w = os.pipe()
    t = threading.Thread(target=lambda: (os.write(w, head), os.close(w)))
    t.start()
    try:
        with pytest.raises(parload.Error) as e:
            parload.load(r)
    finally:
        t.join()
        os.close(r)
    assert e.value.code == "PARLOAD_ENOMEM"
    assert str(e.value).startswith(f"fd {r}: ")


def test_writer_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        parload.Writer(tmp_path / "no" / "x.raw", 1, 2, 2, "u1")
    assert e.value.code == "PARLOAD_EWRITE"
    if os.path.exists("/dev/full"):
        with pytest.raises(parload.Error) as e:
            with parload.Writer("/dev/full", 1, 2, 2, "u1") as w:
                w.write(None, np.zeros((2, 2), "u1"))
        assert e.value.code == "PARLOAD_EWRITE" and e.value.errno == 28
    with pytest.raises(parload.Error) as e:
        with parload.Writer(tmp_path / "few.raw", 3, 2, 2, "u1") as w:
            w.write(None, np.zeros((2, 2), "u1"))
    assert e.value.code == "PARLOAD_ECOUNT"


def test_bad_loader_arguments():
    for kw, exc in [({"threads": -1}, ValueError),
                    ({"threads": "2"}, TypeError),
                    ({"threads": 2.0}, TypeError),
                    ({"threads": -2**70}, ValueError),
                    ({"threads": 2**70}, OverflowError),
                    ({"strategy": "fastest"}, ValueError),
                    ({"strategy": 1}, TypeError),
                    ({"io": "aio"}, ValueError),
                    ({"buffer_size": -5}, ValueError),
                    ({"max_read": "big"}, TypeError),
                    ({"nonsense": 1}, TypeError)]:
        with pytest.raises(exc):
            parload.Loader(**kw)
    with pytest.raises(TypeError):
        parload.Loader(2)


def test_thread_count_over_the_limit_is_refused(tmp_path):
    # The library refuses it before it starts a thread: PARLOAD_EINVAL,
    # not PARLOAD_ETHREAD once the process has run out of threads.
    path = tmp_path / "s.raw"
    write_raw(path, PX)
    assert parload.THREADS_MAX == 4096
    for n in (parload.THREADS_MAX + 1, 10**6):
        with pytest.raises(parload.Error, match="at most 4096") as e:
            parload.load(path, threads=n)
        assert e.value.code == "PARLOAD_EINVAL"
        with pytest.raises(parload.Error, match="PARLOAD_THREADS_MAX"):
            parload.Loader(threads=n, strategy="bulk")
    with parload.Loader(threads=parload.THREADS_MAX) as ld:
        assert ld.threads == parload.THREADS_MAX


def test_bad_load_arguments(tmp_path):
    path = tmp_path / "s.raw"
    write_raw(path, PX)
    with parload.Loader() as ld:
        for src in (None, 3.5, [path, 3], (), object()):
            with pytest.raises((TypeError, ValueError)):
                ld.load(src)
        # A list of files is one stream of a raw layout, which parload's
        # own format is not; a list of one is that file.
        with pytest.raises(parload.Error, match="give its description"):
            ld.load([path, path])
        assert (ld.load([path]).pixels == PX).all()
        with pytest.raises(ValueError):
            ld.load(str(path) + "\0x")
        for kw, exc in [({"views": 3}, TypeError),
                        ({"views": [1, 2]}, TypeError),
                        ({"rows": (1, 2, 3)}, TypeError),
                        ({"cols": ("a", 2)}, TypeError),
                        ({"views": range(-3, 2)}, ValueError),
                        ({"layout": "columns"}, ValueError),
                        ({"layout": 3}, TypeError)]:
            with pytest.raises(exc):
                ld.load(path, **kw)
        with pytest.raises(ValueError):
            ld.load(-1)
    with pytest.raises(ValueError, match="closed"):
        ld.load(path)


def test_bad_load_into_arrays(tmp_path):
    path = tmp_path / "s.raw"
    write_raw(path, PX)
    good = np.empty((10, 4, 6), np.uint16)
    hdr = np.empty(10, parload.header_dtype)
    bad = [
        ([1, 2, 3], TypeError, "ndarray"),
        (np.empty((10, 4, 6), np.int16), TypeError, "dtype"),
        (np.empty((10, 4, 6), ">u2"), TypeError, "dtype"),
        (np.empty((10, 4, 7), np.uint16), ValueError, "shape"),
        (np.empty(240, np.uint16), ValueError, "shape"),
        (np.empty((10, 4, 12), np.uint16)[:, :, ::2], ValueError,
         "contiguous"),
        (np.asfortranarray(good), ValueError, "contiguous"),
    ]
    ro = np.empty((10, 4, 6), np.uint16)
    ro.flags.writeable = False
    bad.append((ro, ValueError, "read-only"))
    with parload.Loader() as ld:
        for arr, exc, words in bad:
            with pytest.raises(exc, match=words):
                ld.load_into(path, arr, hdr)
        for h, exc in [(np.empty(10, np.uint8), TypeError),
                       (np.empty(9, parload.header_dtype), ValueError),
                       (b"x" * 320, TypeError)]:
            with pytest.raises(exc):
                ld.load_into(path, good, h)
        with pytest.raises(TypeError):
            ld.load_into(path)
        # After all that, a good call works.
        ds = ld.load_into(path, good, hdr)
        assert ds.pixels is good and ds.headers is hdr
        assert np.array_equal(good, PX)


def test_bad_writer_arguments(tmp_path):
    p = tmp_path / "w.raw"
    for args, exc in [((p, -1, 2, 2, "u1"), ValueError),
                      ((p, 1, 2, 2, "i8"), TypeError),
                      ((p, 1, 2, 2, ">u2"), TypeError),
                      ((p, 1, 2, 2, "c8"), TypeError),
                      ((p, 1, 2, 2, "no such dtype"), TypeError),
                      ((p, 1, 2**40, 2, "u1"), OverflowError),
                      ((None, 1, 2, 2, "u1"), TypeError)]:
        with pytest.raises(exc):
            parload.Writer(*args)
    with parload.Writer(p, 2, 2, 3, "u2") as w:
        for hdr, px, exc in [(None, np.zeros((3, 2), "u2"), ValueError),
                             (None, np.zeros(5, "u2"), ValueError),
                             (None, np.zeros((2, 3), "f8"), TypeError),
                             ("x", np.zeros((2, 3), "u2"), TypeError),
                             ({"angle": 1}, np.zeros((2, 3), "u2"),
                              ValueError),
                             ((1, "a"), np.zeros((2, 3), "u2"), TypeError),
                             ((-1, 0.0), np.zeros((2, 3), "u2"),
                              OverflowError)]:
            with pytest.raises(exc):
                w.write(hdr, px)
        assert w.written == 0
        w.write(None, np.zeros((2, 3), "u2"))
        w.write(None, np.zeros(6, "u2"))
    with pytest.raises(ValueError, match="closed"):
        w.write(None, np.zeros((2, 3), "u2"))
    assert parload.load(p).pixels.shape == (2, 2, 3)
