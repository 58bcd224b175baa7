"""parload.stream(): batches of views while the load runs, compared with
a whole load of the same file (itself checked against the plain reader
elsewhere) and with NumPy slicing of the written arrays."""

import gc
import os
import signal
import threading
import time

import numpy as np
import pytest

import parload
from conftest import needs_rss, random_pixels, rss_bytes, write_raw

VIEW_HEADER_SIZE = 32


def collect(batches, views, views_total=None):
    """Check that views views arrive in batches in order, each after the
    last, with running progress (of views_total, views by default);
    return their pixels and headers joined."""
    views_total = views if views_total is None else views_total
    px, hd, nxt = [], [], 0
    for b in batches:
        assert b.first == nxt and b.count >= 1
        assert b.pixels.shape[0] == b.count == len(b.headers)
        assert b.views_done == b.first + b.count
        assert b.views_total == views_total
        assert b.bytes_done * views_total == b.bytes_total * b.views_done
        nxt += b.count
        px.append(np.array(b.pixels))
        hd.append(np.array(b.headers))
    assert nxt == views
    return np.concatenate(px), np.concatenate(hd)


@pytest.mark.parametrize("size", [dict(batch_views=1),
                                  dict(batch_views=4),
                                  dict(batch_views=23),
                                  dict(batch_views=1000),
                                  dict(batch_bytes=3 * 9 * 13 * 2),
                                  dict()])
def test_every_view_once_in_order(stream, size):
    path, px, headers = stream
    ref = parload.load(path)
    s = parload.stream(path, **size)
    got_px, got_hd = collect(s, 23)
    assert np.array_equal(got_px, ref.pixels)
    assert np.array_equal(got_px, px)
    assert np.array_equal(got_hd, ref.headers)
    assert s.closed and s.stats["bytes_read"] > 0
    assert s.bad_views == ()
    assert list(s.shape) == [23, 9, 13] and s.dtype == np.uint16


def test_batch_sizes_are_what_was_asked(stream):
    path, _, _ = stream
    counts = [b.count for b in parload.stream(path, batch_views=5)]
    assert counts == [5, 5, 5, 5, 3]
    counts = [b.count for b in
              parload.stream(path, batch_bytes=2 * 9 * 13 * 2)]
    assert counts == [2] * 11 + [1]


def test_selection_matches_numpy_slicing(stream):
    path, px, headers = stream
    s = parload.stream(path, batch_views=2, views=slice(1, None, 3),
                       rows=(2, 7), cols=(3, 11))
    views = []
    for b in s:
        views.extend(b.views)
        assert np.array_equal(b.headers["view_index"], list(b.views))
    got, _ = collect(parload.stream(path, batch_views=2,
                                    views=slice(1, None, 3), rows=(2, 7),
                                    cols=(3, 11)), len(range(1, 23, 3)))
    assert views == list(range(1, 23, 3))
    assert np.array_equal(got, px[1::3, 2:7, 3:11])


def test_arrays_outlive_the_stream(stream):
    """Without a window every batch's arrays stay valid: after later
    batches, after the stream ends and after it is dropped."""
    path, px, _ = stream
    kept = [(b.first, b.pixels, b.headers)
            for b in parload.stream(path, batch_views=3)]
    gc.collect()
    for first, p, h in kept:
        assert p.flags.writeable and p.base is not None
        assert np.array_equal(p, px[first:first + len(p)])
        assert np.array_equal(h["view_index"],
                              np.arange(first, first + len(h)))


def test_window_reuses_its_memory(stream):
    """With a window the batches come through two reused windows:
    read-only arrays, two addresses, and the data (copied) is the
    file's."""
    path, px, _ = stream
    window = 2 * (9 * 13 * 2 + VIEW_HEADER_SIZE)
    addresses, firsts = set(), []
    s = parload.stream(path, window=window)
    for b in s:
        assert b.count <= 2 and not b.pixels.flags.writeable
        assert b.pixels.base is s
        assert np.array_equal(b.pixels, px[b.first:b.first + b.count])
        addresses.add(b.pixels.__array_interface__["data"][0])
        firsts.append(b.first)
    assert len(addresses) == 2 and firsts == list(range(0, 23, 2))
    got, _ = collect(parload.stream(path, window=window, copy=True), 23)
    assert np.array_equal(got, px)
    copies = list(parload.stream(path, window=window, copy=True))
    assert all(b.pixels.flags.owndata and b.headers.flags.owndata
               for b in copies)
    assert np.array_equal(np.concatenate([b.pixels for b in copies]), px)
    with pytest.raises(parload.Error) as e:
        list(parload.stream(path, window=100))
    assert e.value.code == "PARLOAD_EINVAL"


def test_break_cancels_then_load_again(stream):
    path, px, _ = stream
    with parload.stream(path, batch_views=2) as s:
        for b in s:
            if b.first == 4:
                break
        assert not s.closed
    assert s.closed and s.stats is None
    assert np.array_equal(b.pixels, px[4:6])
    s = parload.stream(path, batch_views=2)
    next(s)
    s.close()
    assert s.closed and next(s, None) is None
    del s
    for b in parload.stream(path, batch_views=1):
        break
    assert np.array_equal(parload.load(path).pixels, px)
    got, _ = collect(parload.stream(path, batch_views=5), 23)
    assert np.array_equal(got, px)


def slow_writer(path, px, pause, stop_after=None, interrupt_at=None):
    """A Writer for px whose views a thread appends one by one, flushing
    each, pause seconds apart; it stalls (never closes) after stop_after
    views.  The file exists, with its header, when this returns."""
    n, h, w = px.shape
    wr = parload.Writer(path, n, h, w, px.dtype)
    wr.flush()

    def feed():
        for i in range(n if stop_after is None else stop_after):
            time.sleep(pause)
            wr.write({"timestamp_ns": i}, px[i])
            wr.flush()
            if i == interrupt_at:
                os.kill(os.getpid(), signal.SIGINT)
    t = threading.Thread(target=feed)
    t.start()
    return wr, t


def test_follow_a_file_being_written(tmp_path, rng):
    path = tmp_path / "growing.raw"
    px = random_pixels(rng, (12, 8, 10), np.int32)
    wr, t = slow_writer(path, px, 0.01)
    got, hd = collect(parload.stream(path, follow=True, batch_views=3,
                                     timeout=10), 12)
    t.join()
    wr.close()
    assert np.array_equal(got, px)
    assert np.array_equal(hd["timestamp_ns"], np.arange(12))


def test_follow_a_stalled_writer(tmp_path, rng):
    path = tmp_path / "stalled.raw"
    px = random_pixels(rng, (10, 4, 6), np.uint8)
    wr, t = slow_writer(path, px, 0.005, stop_after=4)
    seen = []
    with pytest.raises(parload.Error) as e:
        for b in parload.stream(path, follow=True, timeout=0.3):
            seen.append(np.array(b.pixels))
    t.join()
    assert e.value.code == "PARLOAD_ETRUNCATED"
    assert "4 of the 10" in str(e.value)
    assert np.array_equal(np.concatenate(seen), px[:4])
    got, _ = collect(parload.stream(path, follow=True, timeout=0.1,
                                    allow_truncated=True), 4, 10)
    assert np.array_equal(got, px[:4])
    with pytest.raises(parload.Error):
        wr.close()


def dribble(path, data, pieces, pause):
    """A thread that appends data to path (existing, empty) in pieces
    (their ends), pause seconds apart, flushing each."""
    def feed():
        with open(path, "ab") as f:
            at = 0
            for end in pieces + [len(data)]:
                time.sleep(pause)
                f.write(data[at:end])
                f.flush()
                at = end
    t = threading.Thread(target=feed)
    t.start()
    return t


def test_follow_waits_for_the_header(tmp_path, rng):
    """A followed file that is still shorter than its header when the
    stream begins: the stream waits for the header, as the load waits for
    its views, then delivers every view."""
    px = random_pixels(rng, (6, 5, 7), np.uint16)
    write_raw(tmp_path / "whole.raw", px)
    data = (tmp_path / "whole.raw").read_bytes()
    path = tmp_path / "late.raw"
    path.write_bytes(b"")
    t = dribble(path, data, [10, 40, 64 + 100], 0.05)
    got, hd = collect(parload.stream(path, follow=True, batch_views=2,
                                     timeout=10), 6)
    t.join()
    assert np.array_equal(got, px)
    assert np.array_equal(hd["view_index"], np.arange(6))


def test_follow_a_header_that_never_comes(tmp_path):
    """A followed file that stays shorter than its header: after timeout
    seconds without growth, the error of a file shorter than its header."""
    path = tmp_path / "short.raw"
    path.write_bytes(b"PARLOAD")
    t0 = time.monotonic()
    with pytest.raises(parload.Error) as e:
        parload.stream(path, follow=True, timeout=0.3)
    took = time.monotonic() - t0
    assert e.value.code == "PARLOAD_ETRUNCATED"
    assert "7 bytes, shorter than the 64-byte file header" in str(e.value)
    assert 0.3 <= took < 5


def test_keyboard_interrupt_while_waiting_for_the_header(tmp_path):
    """SIGINT while the stream waits for a followed file's header:
    KeyboardInterrupt, long before the timeout."""
    path = tmp_path / "empty.raw"
    path.write_bytes(b"")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            parload.stream(path, follow=True, timeout=60)
        assert time.monotonic() - t0 < 30
    finally:
        timer.join()
        signal.signal(signal.SIGINT, old)


def test_bad_crc_mid_stream(stream):
    """A damaged view: the batches before it, then parload.Error naming
    it and its payload's byte offset."""
    path, px, _ = stream
    rec = VIEW_HEADER_SIZE + 9 * 13 * 2
    payload_at = 64 + 10 * rec + VIEW_HEADER_SIZE
    with open(path, "r+b") as f:
        f.seek(payload_at + 5)
        b = f.read(1)
        f.seek(payload_at + 5)
        f.write(bytes([b[0] ^ 0x40]))
    seen = []
    with pytest.raises(parload.Error) as e:
        for b in parload.stream(path, batch_views=2, verify=True):
            seen.append(np.array(b.pixels))
    assert e.value.code == "PARLOAD_ECRC"
    assert e.value.view == 10 and e.value.offset == payload_at
    assert e.value.filename == str(path)
    assert np.array_equal(np.concatenate(seen), px[:10])
    s = parload.stream(path, batch_views=4, verify=True, keep_going=True)
    got, _ = collect(s, 23)
    assert s.bad_views == (10,)
    assert np.array_equal(got[:10], px[:10])


def test_errors_before_the_first_batch(tmp_path, stream):
    path, _, _ = stream
    with pytest.raises(parload.FileNotFoundError):
        parload.stream(tmp_path / "missing.raw")
    with pytest.raises(parload.Error) as e:
        parload.stream(path, views=slice(30, 40))
    assert e.value.code == "PARLOAD_ESELECT"
    with pytest.raises(TypeError):
        parload.stream(3)
    with pytest.raises(ValueError):
        parload.stream(path, batch_views=-1)
    with pytest.raises(ValueError):
        parload.stream(path, timeout=-1.0)


def test_keyboard_interrupt_while_waiting_cancels(tmp_path, rng):
    """SIGINT while the stream waits for a followed file: KeyboardInterrupt
    at the next batch, the stream closed, the rest never read."""
    path = tmp_path / "slow.raw"
    px = random_pixels(rng, (60, 4, 4), np.uint16)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        wr, t = slow_writer(path, px, 0.02, interrupt_at=5)
        s = parload.stream(path, follow=True, batch_views=1)
        seen = 0
        with pytest.raises(KeyboardInterrupt):
            with s:
                for b in s:
                    seen += 1
        assert s.closed and seen < 60
        t.join()
        wr.close()
    finally:
        signal.signal(signal.SIGINT, old)
    got, _ = collect(parload.stream(path, batch_views=7), 60)
    assert np.array_equal(got, px)


@needs_rss
def test_many_streams_keep_rss_flat(stream):
    path, px, _ = stream
    write_raw(path, np.zeros((64, 64, 64), np.uint16))
    for _ in range(20):
        for b in parload.stream(path, batch_views=8):
            pass
    gc.collect()
    base = rss_bytes()
    for i in range(300):
        s = parload.stream(path, batch_views=8, window=(1 << 16) if i % 2
                           else None)
        for b in s:
            if i % 3 == 0 and b.first == 16:
                break
        del s, b
    gc.collect()
    assert rss_bytes() - base < 16 * 2 ** 20


def test_close_from_another_thread(tmp_path, rng):
    """close() while another thread waits in next(): it waits for that
    call, then ends the stream, whose iteration stops there."""
    path = tmp_path / "shared.raw"
    px = random_pixels(rng, (40, 4, 4), np.uint16)
    wr, t = slow_writer(path, px, 0.01)
    s = parload.stream(path, follow=True, batch_views=1)
    seen, started = [], threading.Event()

    def consume():
        for b in s:
            seen.append(b.first)
            started.set()
    c = threading.Thread(target=consume)
    c.start()
    assert started.wait(30)
    s.close()
    c.join()
    t.join()
    wr.close()
    assert s.closed and seen == list(range(len(seen))) and len(seen) < 40
