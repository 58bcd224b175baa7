"""parload.mpi on every rank: run by test_mpi.py as
`mpirun -n R python -m pytest mpi_ranks.py`, never collected alone.

Each rank's part must equal the slice of a single-process parload.load()
of the same selection that Part.index names, and the ranks' parts must
cover the selection exactly once.  Every test makes the same collective
calls on every rank before it asserts, so that a failing rank fails the
run instead of leaving the others waiting.
"""

import os
import shutil
import tempfile

import numpy as np
import pytest

mpi4py_MPI = pytest.importorskip("mpi4py.MPI")
import parload  # noqa: E402
import parload.mpi  # noqa: E402
from conftest import random_pixels, write_layout, write_raw  # noqa: E402

COMM = mpi4py_MPI.COMM_WORLD
RANK, RANKS = COMM.Get_rank(), COMM.Get_size()


@pytest.fixture(scope="module")
def shared_dir():
    """A directory every rank sees (rank 0 makes it)."""
    d = tempfile.mkdtemp(prefix="parload-mpi-") if RANK == 0 else None
    d = COMM.bcast(d, root=0)
    yield d
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(d, ignore_errors=True)


def shared_file(shared_dir, name, shape, dtype, crc=False):
    """Rank 0 writes a random stream; every rank gets its path and
    pixels."""
    path = os.path.join(shared_dir, name)
    px = None
    if RANK == 0:
        px = random_pixels(np.random.default_rng(len(name)), shape, dtype)
        write_raw(path, px, timestamps=np.arange(shape[0]) * 10, crc=crc)
    px = COMM.bcast(px, root=0)
    return path, px


def covered(part, first_axis):
    """Every rank's [begin, end) on the split axis, in rank order."""
    sl = part.index[0]
    spans = COMM.allgather((sl.start, sl.stop))
    assert spans[0][0] == 0 and spans[-1][1] == first_axis
    for (_, e), (b, _) in zip(spans, spans[1:]):
        assert e == b
    return spans


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32,
                                   np.float64])
@pytest.mark.parametrize("split", ["views", "rows"])
def test_part_is_the_slice_of_a_whole_load(shared_dir, dtype, split):
    path, px = shared_file(shared_dir, f"{split}-{np.dtype(dtype)}.raw",
                           (7, 5, 6), dtype)
    part = parload.mpi.load(COMM, path, split=split, threads=1)
    whole = parload.load(path, layout=part.layout)
    assert part.rank == RANK and part.ranks == RANKS
    assert part.split == split
    assert part.layout == ("sinograms" if split == "rows" else "views")
    assert part.global_shape == whole.pixels.shape
    assert part.pixels.dtype == dtype
    assert np.array_equal(part.pixels, whole.pixels[part.index])
    covered(part, 7 if split == "views" else 5)
    if split == "views":
        assert np.array_equal(part.headers, whole.headers[part.index[0]])
        assert list(part.views) == list(range(7))[part.index[0]]
    else:
        assert np.array_equal(part.headers, whole.headers)
        assert list(part.rows) == list(range(5))[part.index[0]]
    assert part.file_header == whole.file_header


def test_selection_is_shared_out(shared_dir):
    path, px = shared_file(shared_dir, "sel.raw", (11, 8, 9), np.uint16)
    sel = dict(views=slice(1, None, 2), rows=(2, 7), cols=(1, 8))
    for split in ("views", "rows"):
        part = parload.mpi.load(COMM, path, split=split, **sel)
        whole = parload.load(path, layout=part.layout, **sel)
        assert np.array_equal(part.pixels, whole.pixels[part.index])
        covered(part, 5)  # 5 views, 5 rows
        ref = px[1::2, 2:7, 1:8]
        if split == "rows":
            ref = ref.transpose(1, 0, 2)
        assert np.array_equal(part.pixels, ref[part.index])


def test_mapped_rows_split(shared_dir):
    """map_sinograms: a rows split copied from the mapped file equals the
    written pixels' slab, with no read call (rank 0 reads the file
    header for every rank)."""
    path, px = shared_file(shared_dir, "mapped.raw", (9, 7, 5), np.int16)
    part = parload.mpi.load(COMM, path, split="rows", threads=2,
                            map_sinograms=True)
    assert np.array_equal(part.pixels, px.transpose(1, 0, 2)[part.index])
    covered(part, 7)
    assert part.stats["read_calls"] == 0


@pytest.mark.parametrize("split", ["views", "rows"])
def test_raw_layout_is_shared_out(shared_dir, split):
    """raw=: a big-endian layout with a file header, view headers and
    gaps; each rank's part and its raw headers are the slice of the
    written ones.  A bad layout fails on every rank."""
    path = os.path.join(shared_dir, f"layout-{split}.bin")
    raw = {"width": 6, "height": 5, "type": "i16be", "offset": 100,
           "header": 24, "gap": 4}
    ref = None
    if RANK == 0:
        ref = write_layout(np.random.default_rng(31), [path], [7], 6, 5,
                           "i16be", 100, 24, 4)
    px, hd = COMM.bcast(ref, root=0)
    part = parload.mpi.load(COMM, path, split=split, raw=raw, threads=1)
    spans = COMM.allgather((part.index[0].start, part.index[0].stop))
    with pytest.raises((parload.Error, ValueError), match="unknown key"):
        parload.mpi.load(COMM, path, raw=dict(raw, colour=1))
    assert spans[0][0] == 0 and spans[-1][1] == (7 if split == "views"
                                                 else 5)
    assert part.desc["type"] == "i16be" and part.desc["count"] == 7
    assert part.file_header is None
    want = px if split == "views" else px.transpose(1, 0, 2)
    assert np.array_equal(part.pixels, want[part.index])
    if split == "views":
        assert np.array_equal(part.raw_headers, hd[part.index[0]])
    elif part.pixels.size:
        assert np.array_equal(part.raw_headers, hd)


@pytest.mark.parametrize("split", ["views", "rows"])
def test_more_ranks_than_views_or_rows(shared_dir, split):
    """With 2 views of 2 rows, ranks past the second hold nothing: empty
    arrays of the others' shape."""
    path, px = shared_file(shared_dir, f"two-{split}.raw", (2, 2, 4),
                           np.int32)
    part = parload.mpi.load(COMM, path, split=split)
    counts = COMM.allgather(part.pixels.shape[0])
    assert sum(counts) == 2
    assert max(counts) == (1 if RANKS >= 2 else 2)
    assert part.pixels.shape[1:] == (2, 4)
    ref = px if split == "views" else px.transpose(1, 0, 2)
    assert np.array_equal(part.pixels, ref[part.index])


def test_zero_copy_and_lifetime(shared_dir):
    path, px = shared_file(shared_dir, "life.raw", (6, 4, 4), np.uint16)
    part = parload.mpi.load(COMM, path)
    pixels, headers = part.pixels, part.headers
    assert pixels.base is part and headers.base is part
    if pixels.size:
        pixels[0, 0, 0] ^= 1
        assert part.pixels[0, 0, 0] == pixels[0, 0, 0]
        pixels[0, 0, 0] ^= 1
    index = part.index
    del part
    assert np.array_equal(pixels, px[index])
    assert np.array_equal(headers["view_index"],
                          np.arange(6)[index[0]])


def test_errors_agree_on_every_rank(shared_dir):
    """A bad CRC in the last view, which only the last rank reads: every
    rank raises the same parload.Error, naming that rank."""
    path, px = shared_file(shared_dir, "bad.raw", (RANKS * 2, 4, 5),
                           np.uint16, crc=True)
    if RANK == 0:
        rec = 32 + 4 * 5 * 2
        with open(path, "r+b") as f:
            f.seek(64 + (RANKS * 2 - 1) * rec + 32 + 3)
            f.write(b"\xff\x7f")
    COMM.Barrier()
    try:
        parload.mpi.load(COMM, path, verify=True)
        got = None
    except parload.Error as e:
        got = (e.code, str(e))
    everyone = COMM.allgather(got)
    assert all(g is not None for g in everyone)
    assert len(set(everyone)) == 1
    code, message = everyone[0]
    assert code == "PARLOAD_ECRC"
    assert message.startswith(f"rank {RANKS - 1}: ")
    part = parload.mpi.load(COMM, path, verify=True, keep_going=True)
    bad = COMM.allgather(list(part.bad_views))
    assert sum(bad, []) == [RANKS * 2 - 1]


def test_missing_file_fails_everywhere(shared_dir):
    try:
        parload.mpi.load(COMM, os.path.join(shared_dir, "missing.raw"))
        got = None
    except parload.Error as e:
        got = e.code
    assert COMM.allgather(got) == ["PARLOAD_EOPEN"] * RANKS


def test_bad_arguments():
    with pytest.raises(ValueError):
        parload.mpi.load(COMM, "x.raw", split="columns")
    with pytest.raises(ValueError):
        parload.mpi.load(COMM, "x.raw", io="carrier-pigeon")
    with pytest.raises(TypeError):
        parload.mpi.load(object(), "x.raw")


@pytest.mark.parametrize("cache", ["keep", "drop", "direct", "auto"])
def test_cache_modes_load_the_same(shared_dir, cache):
    """cache=: every mode's part equals a keep load's; the part's stats
    say the mode used (direct drops where the file system refuses
    O_DIRECT; auto keeps a small file).  mpiio ignores the mode."""
    path, px = shared_file(shared_dir, f"cache-{cache}.raw", (9, 6, 7),
                           np.uint16)
    for split in ("views", "rows"):
        part = parload.mpi.load(COMM, path, split=split, cache=cache)
        keep = parload.mpi.load(COMM, path, split=split)
        assert np.array_equal(part.pixels, keep.pixels)
        assert np.array_equal(part.headers, keep.headers)
        used = part.stats["cache"]
        want = {"auto": "keep", "direct": ("direct", "drop")}.get(cache,
                                                                 cache)
        assert used in want if isinstance(want, tuple) else used == want
    mpiio = parload.mpi.load(COMM, path, io="mpiio", cache=cache)
    assert mpiio.stats["cache"] == "keep"
    with pytest.raises(ValueError, match="page-cache mode"):
        parload.mpi.load(COMM, path, cache="sometimes")


@pytest.mark.parametrize("split", ["views", "rows"])
@pytest.mark.parametrize("bin", [1, 2])
def test_corrected_part_is_the_slice_of_a_corrected_load(shared_dir, split,
                                                         bin):
    path, px = shared_file(shared_dir, f"scan-{split}-{bin}.raw", (7, 6, 5),
                           np.uint16)
    darks, _ = shared_file(shared_dir, f"darks-{split}-{bin}.raw", (3, 6, 5),
                           np.uint16)
    flats = np.full((6, 5), 40000.0, np.float32)
    corr = dict(darks=darks, flats=flats, minus_log=True, bin=bin)
    part = parload.mpi.load(COMM, path, split=split, threads=1, **corr)
    whole = parload.load(path, layout=part.layout, **corr)
    assert part.pixels.dtype == np.float32
    assert part.global_shape == whole.pixels.shape
    np.testing.assert_array_equal(part.pixels, whole.pixels[part.index])
    covered(part, 7 if split == "views" else 6 // bin)


@pytest.mark.parametrize("split", ["views", "rows"])
def test_hdf5_part_is_the_slice_of_the_array(shared_dir, split):
    if not parload.has_hdf5():
        pytest.skip("this build has no libhdf5")
    path = os.path.join(shared_dir, f"scan-{split}.h5")
    px = None
    if RANK == 0:
        px = random_pixels(np.random.default_rng(5), (7, 6, 5), np.int16)
        parload.save(path, px)
    px = COMM.bcast(px, root=0)
    COMM.Barrier()
    part = parload.mpi.load(COMM, path, split=split, threads=1,
                            dataset="/exchange/data")
    whole = px if split == "views" else np.ascontiguousarray(
        px.transpose(1, 0, 2))
    assert np.array_equal(part.pixels, whole[part.index])
    assert part.desc["format"] == "hdf5"
