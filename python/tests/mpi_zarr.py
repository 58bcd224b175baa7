"""parload.mpi on every rank, on Zarr stores: run by test_zarr.py as
`mpirun -n R python -m pytest mpi_zarr.py`, never collected alone.

Rank 0 writes a v2 store of Zstd chunks of 4 frames (zarr-python) and a
v3 sharded store (zarr_fixtures.write_v3); each rank's part must equal
the slice of the reference read that Part.index names, and the parts
must cover the frames (or rows) once.  Every test makes the same
collective calls on every rank before it asserts."""

import pytest

mpi4py_MPI = pytest.importorskip("mpi4py.MPI")
pytest.importorskip("zarr")
pytest.importorskip("numcodecs")
import numcodecs  # noqa: E402
import parload  # noqa: E402
import parload.mpi  # noqa: E402
from conftest import check_part, rank0_writes  # noqa: E402
import zarr_fixtures as zfx  # noqa: E402

COMM = mpi4py_MPI.COMM_WORLD
RANK, RANKS = COMM.Get_rank(), COMM.Get_size()


@pytest.fixture(scope="module")
def stores():
    """{name: (path, reference read)}, written by rank 0 in a directory
    every rank sees."""
    def write(d):
        data = zfx.pixels((zfx.N, zfx.H, zfx.W), "u2", 1)
        v2 = d + "/v2.zarr"
        zfx.v2(v2, data, (4, zfx.H, zfx.W),
               compressor=numcodecs.Zstd(level=1))
        v3 = d + "/v3.zarr"
        got = zfx.write_v3(v3, data, (8, zfx.H, zfx.W), [zfx.shard_codec(
            (1, zfx.H, zfx.W), [zfx.bytes_codec(), zfx.zstd_codec()])])
        return {"v2": (v2, zfx.zarr_read(v2)), "v3": (v3, got)}
    with rank0_writes(COMM, "parload-mpi-zarr-", write) as out:
        yield out


@pytest.mark.parametrize("split", ["views", "rows"])
@pytest.mark.parametrize("which", ["v2", "v3"])
def test_part_is_the_slice_of_the_reference(stores, which, split):
    path, want = stores[which]
    part = parload.mpi.load(COMM, path, split=split, threads=1)
    check_part(COMM, part, want, split)
