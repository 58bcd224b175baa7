"""parload.mpi on every rank, on Zarr stores: run by test_zarr.py as
`mpirun -n R python -m pytest mpi_zarr.py`, never collected alone.

Rank 0 writes a v2 store of Zstd chunks of 4 frames (zarr-python) and a
v3 sharded store (zarr_fixtures.write_v3); each rank's part must equal
the slice of the reference read that Part.index names, and the parts
must cover the frames (or rows) once.  Every test makes the same
collective calls on every rank before it asserts."""

import shutil
import tempfile

import numpy as np
import pytest

mpi4py_MPI = pytest.importorskip("mpi4py.MPI")
pytest.importorskip("zarr")
pytest.importorskip("numcodecs")
import numcodecs  # noqa: E402
import parload  # noqa: E402
import parload.mpi  # noqa: E402
import zarr_fixtures as zfx  # noqa: E402

COMM = mpi4py_MPI.COMM_WORLD
RANK, RANKS = COMM.Get_rank(), COMM.Get_size()


@pytest.fixture(scope="module")
def stores():
    """{name: (path, reference read)}, written by rank 0 in a directory
    every rank sees."""
    d = tempfile.mkdtemp(prefix="parload-mpi-zarr-") if RANK == 0 else None
    d = COMM.bcast(d, root=0)
    out = None
    if RANK == 0:
        data = zfx.pixels((zfx.N, zfx.H, zfx.W), "u2", 1)
        v2 = d + "/v2.zarr"
        zfx.v2(v2, data, (4, zfx.H, zfx.W),
               compressor=numcodecs.Zstd(level=1))
        v3 = d + "/v3.zarr"
        got = zfx.write_v3(v3, data, (8, zfx.H, zfx.W), [zfx.shard_codec(
            (1, zfx.H, zfx.W), [zfx.bytes_codec(), zfx.zstd_codec()])])
        out = {"v2": (v2, zfx.zarr_read(v2)), "v3": (v3, got)}
    out = COMM.bcast(out, root=0)
    yield out
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("split", ["views", "rows"])
@pytest.mark.parametrize("which", ["v2", "v3"])
def test_part_is_the_slice_of_the_reference(stores, which, split):
    path, want = stores[which]
    part = parload.mpi.load(COMM, path, split=split, threads=1)
    if split == "rows":
        want = want.transpose(1, 0, 2)
    spans = COMM.allgather((part.index[0].start, part.index[0].stop))
    serial = COMM.allgather(part.stats["serial"])
    assert part.global_shape == want.shape
    assert np.array_equal(part.pixels, want[part.index])
    assert spans[0][0] == 0 and spans[-1][1] == want.shape[0]
    assert all(e == b for (_, e), (b, _) in zip(spans, spans[1:]))
    assert serial == [None] * RANKS, serial
