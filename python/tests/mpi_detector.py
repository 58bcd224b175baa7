"""parload.mpi on every rank, on detector files: run by test_detector.py
as `mpirun -n R python -m pytest mpi_detector.py`, never collected alone.

Rank 0 writes a bitshuffle + LZ4 file and an Eiger master file with its
data files (detector_fixtures.py); each rank's part must equal the slice
of h5py's read that Part.index names, and the parts must cover the frames
(or rows) once.  Every test makes the same collective calls on every rank
before it asserts."""

import os

import pytest

mpi4py_MPI = pytest.importorskip("mpi4py.MPI")
h5py = pytest.importorskip("h5py")
pytest.importorskip("hdf5plugin")
import parload  # noqa: E402
import parload.mpi  # noqa: E402
from conftest import check_part, rank0_writes  # noqa: E402
import detector_fixtures as dfx  # noqa: E402

if dfx.missing_plugins():
    pytest.skip("h5py has no plugin for HDF5 filters %s" %
                dfx.missing_plugins(), allow_module_level=True)

COMM = mpi4py_MPI.COMM_WORLD
RANK, RANKS = COMM.Get_rank(), COMM.Get_size()


@pytest.fixture(scope="module")
def files():
    """{name: (path, h5py's read)}, written by rank 0 in a directory every
    rank sees."""
    def write(d):
        spec = dfx.specs()["codec-bslz4"]
        dfx.write_spec(spec, d, 3)
        m = dfx.write_eiger(d)
        with h5py.File(spec.path, "r") as f:
            return {"bslz4": (spec.path, f[spec.dataset][...]),
                    "master": (m.path, m.frames)}
    with rank0_writes(COMM, "parload-mpi-det-", write) as out:
        yield out


@pytest.mark.parametrize("split", ["views", "rows"])
@pytest.mark.parametrize("which", ["bslz4", "master"])
def test_part_is_the_slice_of_h5pys_read(files, which, split):
    path, want = files[which]
    part = parload.mpi.load(COMM, path, split=split, threads=1)
    check_part(COMM, part, want, split)
    assert os.path.exists(path)
