"""Loading: every pixel type and strategy, every kind of source, zero copy,
the GIL, threads, fork and Ctrl-C, against an independent reader."""

import json
import os
import pathlib
import signal
import threading
import time

import numpy as np
import pytest

import parload
from conftest import (PIXEL_TYPES, VIEW_HEADER, random_pixels, read_raw,
                      run_cli, write_raw)

DTYPES = sorted(set(PIXEL_TYPES.values()))


@pytest.mark.parametrize("strategy", parload.strategies())
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_pixel_type_and_strategy(tmp_path, rng, dtype, strategy):
    px = random_pixels(rng, (11, 7, 5), dtype)
    path = tmp_path / "t.raw"
    write_raw(path, px, timestamps=rng.integers(0, 2**63, 11),
              angles=rng.random(11, dtype=np.float32))
    _, ref_headers, ref_pixels = read_raw(path)
    ds = parload.load(path, strategy=strategy, threads=3)
    assert ds.pixels.dtype == np.dtype(dtype)
    assert ds.pixels.dtype.byteorder in "=<|"
    assert ds.pixels.shape == (11, 7, 5)
    assert np.array_equal(ds.pixels, ref_pixels, equal_nan=True)
    assert ds.headers.dtype == parload.header_dtype
    assert ds.headers.dtype.itemsize == 32
    for f in VIEW_HEADER.names:
        assert np.array_equal(ds.headers[f], ref_headers[f]), f
    assert np.array_equal(ds.angles, ref_headers["angle_deg"])
    assert ds.angles.dtype == np.float32
    assert ds.file_header.dtype == np.dtype(dtype)
    assert ds.stats["strategy"] == strategy
    assert len(ds) == 11


@pytest.mark.parametrize("threads", [1, 2, 3, 5, 8])
def test_thread_counts(stream, threads):
    path, px, _ = stream
    ds = parload.load(str(path), threads=threads)
    assert ds.stats["threads"] == threads
    assert np.array_equal(ds.pixels, px)


def test_sources(stream):
    path, px, _ = stream
    for src in (str(path), os.fsencode(path), pathlib.Path(path)):
        assert np.array_equal(parload.load(src).pixels, px)
    with open(path, "rb") as f:
        f.seek(10)
        ds = parload.load(f)
        # A regular file's offset is left where it was.
        assert f.tell() == 10
        assert np.array_equal(ds.pixels, px)
        assert np.array_equal(parload.load(f.fileno()).pixels, px)
    assert repr(ds).startswith("<parload.Dataset")


def test_pipe_loads_as_a_stream_while_python_writes_it(stream):
    """The writer is a Python thread: were the GIL held during the load,
    it could never write and the load would wait forever."""
    path, px, _ = stream
    data = path.read_bytes()
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            for i in range(0, len(data), 1000):
                f.write(data[i:i + 1000])
                f.flush()

    t = threading.Thread(target=feed)
    t.start()
    with os.fdopen(r, "rb") as f:
        ds = parload.load(f)
    t.join()
    assert ds.stats["strategy"] == "sequential"
    assert np.array_equal(ds.pixels, px)


def test_zero_copy(stream):
    path, px, _ = stream
    ds = parload.load(path)
    a, b = ds.pixels, ds.pixels
    assert a.base is ds and b.base is ds
    assert ds.headers.base is ds
    assert a.flags.c_contiguous and a.flags.writeable and not a.flags.owndata
    assert a.ctypes.data == b.ctypes.data
    a[3, 2, 1] = 4242
    assert b[3, 2, 1] == 4242 and ds.pixels[3, 2, 1] == 4242
    angles = ds.angles
    ds.headers["angle_deg"][5] = 99.5
    assert angles[5] == np.float32(99.5)
    assert np.shares_memory(angles, ds.headers)


def test_stats_and_file_header(stream):
    path, px, _ = stream
    ds = parload.load(path, verify=True, threads=2)
    st = ds.stats
    assert st["bytes_read"] == os.path.getsize(path)
    assert st["crc_checked"] == 23 and st["declared_views"] == 23
    assert st["threads"] == 2 and st["seconds"] > 0
    h = ds.file_header
    assert (h.view_count, h.height, h.width, h.pixel_type) == (23, 9, 13, "u16")
    assert h.flags == 1 and h.payload_size == 9 * 13 * 2
    assert h == parload.read_header(path)
    assert ds.bad_views.dtype == np.uint64 and ds.bad_views.size == 0
    assert ds.views == range(23)


def test_equal_to_the_command(tmp_path, parload_bin):
    """A file written by `parload gen`: the command's report and the
    module's agree, and the pixels are the file's."""
    path = tmp_path / "g.raw"
    assert run_cli(parload_bin, "gen", "--views", 37, "--width", 21,
                   "--height", 6, "--type", "i32", "--crc", "--seed", 9,
                   path).returncode == 0
    cli = json.loads(run_cli(parload_bin, "--json", "--verify", "-t", 2,
                             path).stdout)
    info = json.loads(run_cli(parload_bin, "info", "--json", path).stdout)
    ds = parload.load(path, verify=True, threads=2)
    h = ds.file_header
    assert (cli["views"], cli["width"], cli["height"], cli["pixel_type"]) == \
        (len(ds), h.width, h.height, h.pixel_type)
    for k in ("bytes_read", "read_calls", "threads", "strategy",
              "declared_views", "crc_checked"):
        assert cli[k] == ds.stats[k], k
    for k in ("version_major", "version_minor", "file_header_size",
              "view_header_size", "view_count", "width", "height",
              "pixel_type", "bytes_per_pixel", "flags", "payload_size"):
        assert info[k] == getattr(h, k), k
    _, ref_headers, ref_pixels = read_raw(path)
    assert np.array_equal(ds.pixels, ref_pixels)
    assert np.array_equal(ds.headers["crc32c"], ref_headers["crc32c"])
    # The same failure, the same message.
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 5)
    res = run_cli(parload_bin, path)
    with pytest.raises(parload.Error) as e:
        parload.load(path)
    assert res.returncode == 1
    assert res.stderr.strip() == f"parload: {e.value}"


def test_concurrent_loaders_in_threads(tmp_path, rng):
    files = []
    for i in range(4):
        px = random_pixels(rng, (40, 16, 32), np.float32)
        write_raw(tmp_path / f"{i}.raw", px)
        files.append((tmp_path / f"{i}.raw", px))
    errors = []

    def work(path, px):
        try:
            with parload.Loader(threads=2) as ld:
                for _ in range(10):
                    assert np.array_equal(ld.load(path).pixels, px)
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=f) for f in files]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_one_loader_shared_by_threads(stream):
    """A Loader serves one load at a time; the others wait their turn."""
    path, px, _ = stream
    results = []
    with parload.Loader(threads=2) as ld:
        ts = [threading.Thread(target=lambda: results.append(
            np.array_equal(ld.load(path).pixels, px))) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert results == [True] * 6


def test_fork_after_import(stream):
    path, px, _ = stream
    ld = parload.Loader(threads=2)
    ld.load(path)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            ok = np.array_equal(parload.load(path, threads=2).pixels, px)
            try:
                ld.load(path)
            except RuntimeError as e:
                code = 0 if ok and "fork" in str(e) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert np.array_equal(ld.load(path).pixels, px)
    ld.close()


def interrupted(load, r, feed):
    """load() the read end r of a pipe while feed() writes it (and sends
    SIGINT) from a thread: the load must end in KeyboardInterrupt."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        t = threading.Thread(target=feed)
        t.start()
        with pytest.raises(KeyboardInterrupt):
            with os.fdopen(r, "rb") as f:
                load(f)
        t.join()
    finally:
        signal.signal(signal.SIGINT, old)


def test_keyboard_interrupt_during_a_load(stream):
    """SIGINT arrives while the load waits for a pipe: KeyboardInterrupt
    once the load returns, and the loader is fine afterwards."""
    path, px, _ = stream
    # Half of this is more than a pipe holds: once the first half is
    # written, the load is surely reading when the signal is sent.
    write_raw(path.with_suffix(".big"), np.zeros((200, 64, 64), np.uint16))
    data = path.with_suffix(".big").read_bytes()
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            half = len(data) // 2
            f.write(data[:half])
            f.flush()
            os.kill(os.getpid(), signal.SIGINT)
            f.write(data[half:])

    with parload.Loader() as ld:
        interrupted(ld.load, r, feed)
        assert np.array_equal(ld.load(path).pixels, px)


@pytest.mark.parametrize("strategy", parload.strategies())
def test_keyboard_interrupt_while_a_fifo_has_no_writer(tmp_path, strategy):
    """parload.load(fifo) waits for a writer that never comes: SIGINT
    (Ctrl-C) raises KeyboardInterrupt within a second or two, whatever
    the strategy.  A watchdog opens the FIFO for writing after 5 s, so
    that a load that ignores the signal fails instead of hanging."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def unblock():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader (any more)
            pass

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    kill = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    watchdog = threading.Timer(5, unblock)
    try:
        t0 = time.monotonic()
        kill.start()
        watchdog.start()
        with pytest.raises(KeyboardInterrupt):
            parload.load(fifo, strategy=strategy)
        waited = time.monotonic() - t0
    finally:
        kill.cancel()
        watchdog.cancel()
        kill.join()
        watchdog.join()
        signal.signal(signal.SIGINT, old)
    assert waited < 2.5, f"KeyboardInterrupt after {waited:.1f} s"


def big_sparse(tmp_path, mib=256):
    """A headerless stream of zeros, views of 1024 x 1024 u16, that takes
    no disk: a file this large is read by a helper thread."""
    path = tmp_path / "big.raw"
    with open(path, "wb") as f:
        f.truncate(mib << 20)
    return path, "width=1024,height=1024,type=u16"


def test_signal_handler_raising_during_a_file_load(tmp_path):
    """A large file's load on the main thread runs Python's signal handlers
    while it reads (a helper thread loads it): the exception of a handler
    (KeyboardInterrupt, Ctrl-C's) ends the load, the workers stopping at
    their next read, and the loader loads again at once."""
    path, raw = big_sparse(tmp_path)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        with parload.Loader(threads=2, max_read=4096) as ld:
            signal.setitimer(signal.ITIMER_REAL, 0.005)
            with pytest.raises(KeyboardInterrupt):
                ld.load(path, raw=raw)
            signal.setitimer(signal.ITIMER_REAL, 0)
            ds = ld.load(path, raw=raw, views=(0, 4))
            assert ds.pixels.shape == (4, 1024, 1024)
            assert not ds.pixels.any()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_signal_handlers_returning_during_a_file_load(tmp_path):
    """Handlers that return (a timer every 2 ms) leave a large file's load
    on the main thread to finish, whole and exact."""
    path, raw = big_sparse(tmp_path)
    calls = []
    old = signal.signal(signal.SIGALRM, lambda s, f: calls.append(s))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
        ds = parload.load(path, raw=raw, threads=2)
        signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert calls
    assert ds.pixels.shape == (128, 1024, 1024)
    assert not ds.pixels.any()


def test_documented_and_stubbed():
    """Everything public has a docstring and a line in the stub."""
    import ast
    stub = pathlib.Path(parload.__file__).with_name("__init__.pyi")
    names = {n.name if hasattr(n, "name") else n.targets[0].id
             if isinstance(n, ast.Assign) else n.target.id
             for n in ast.parse(stub.read_text()).body
             if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign,
                               ast.AnnAssign))}
    for name in parload.__all__:
        assert name in names, name
        obj = getattr(parload, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__) > 20, name
    for cls in (parload.Loader, parload.Dataset, parload.Writer,
                parload.Stream):
        for attr, value in vars(cls).items():
            if not attr.startswith("_"):
                assert value.__doc__, f"{cls.__name__}.{attr}"


def test_keyboard_interrupt_cancels_the_load():
    """On the main thread with the parallel strategy, Ctrl-C stops the
    load at its next look for signals (every 64 MiB): the rest of the
    stream is never read.  Without the cancel the load reads all 100 MiB."""
    import struct
    v, h, w = 200, 512, 512
    payload = h * w * 2
    head = struct.pack("<8sHHHHQIIHHIQ16x", b"\x89RAW\r\n\x1a\n", 1, 0, 64,
                       32, v, w, h, 2, 2, 0, payload)
    total = len(head) + v * (32 + payload)
    r, wfd = os.pipe()
    written = [0]

    def feed():
        chunk = bytes(1 << 20)
        try:
            with os.fdopen(wfd, "wb", buffering=0) as f:
                f.write(head)
                for i in range(v):
                    f.write(struct.pack("<QQfI8x", i, 0, 0.0, 0))
                    f.write(chunk[:payload // 2])
                    f.write(chunk[:payload // 2])
                    written[0] += 32 + payload
                    if written[0] >= 40 << 20 and written[0] - 32 - \
                            payload < 40 << 20:
                        os.kill(os.getpid(), signal.SIGINT)
        except BrokenPipeError:
            pass

    interrupted(parload.load, r, feed)
    assert 40 << 20 <= written[0] < total - (16 << 20)
