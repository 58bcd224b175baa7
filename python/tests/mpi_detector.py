"""parload.mpi on every rank, on detector files: run by test_detector.py
as `mpirun -n R python -m pytest mpi_detector.py`, never collected alone.

Rank 0 writes a bitshuffle + LZ4 file and an Eiger master file with its
data files (detector_fixtures.py); each rank's part must equal the slice
of h5py's read that Part.index names, and the parts must cover the frames
(or rows) once.  Every test makes the same collective calls on every rank
before it asserts."""

import os
import shutil
import tempfile

import numpy as np
import pytest

mpi4py_MPI = pytest.importorskip("mpi4py.MPI")
h5py = pytest.importorskip("h5py")
pytest.importorskip("hdf5plugin")
import parload  # noqa: E402
import parload.mpi  # noqa: E402
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
    d = tempfile.mkdtemp(prefix="parload-mpi-det-") if RANK == 0 else None
    d = COMM.bcast(d, root=0)
    out = None
    if RANK == 0:
        spec = dfx.specs()["codec-bslz4"]
        dfx.write_spec(spec, d, 3)
        m = dfx.write_eiger(d)
        with h5py.File(spec.path, "r") as f:
            out = {"bslz4": (spec.path, f[spec.dataset][...]),
                   "master": (m.path, m.frames)}
    out = COMM.bcast(out, root=0)
    yield out
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("split", ["views", "rows"])
@pytest.mark.parametrize("which", ["bslz4", "master"])
def test_part_is_the_slice_of_h5pys_read(files, which, split):
    path, want = files[which]
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
    assert os.path.exists(path)
