"""parload.dask: chunks are selection loads; the array equals a load."""

import numpy as np
import pytest

import parload
from conftest import random_pixels, write_raw

dask = pytest.importorskip("dask", reason="dask is not installed "
                           "(Debian: python3-dask)")
import parload.dask  # noqa: E402  (after the skip)


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    rng = np.random.default_rng(3)
    px = random_pixels(rng, (50, 10, 14), np.float32)
    path = tmp_path_factory.mktemp("dask") / "scan.raw"
    write_raw(path, px)
    return path, parload.load(path).pixels


@pytest.mark.parametrize("chunks", [None, 7, (16, -1, -1), (5, 3, -1),
                                    (50, 10, 4), ((20, 30), (4, 6), (14,))])
def test_equal_to_a_load(scan, chunks):
    path, full = scan
    arr = parload.dask.from_file(path, chunks=chunks, threads=2)
    assert arr.shape == full.shape and arr.dtype == full.dtype
    got = arr.compute(scheduler="threads")
    assert np.array_equal(got, full)
    # Reductions across chunks, too.
    mean = arr.astype(np.float64).mean(axis=0).compute(scheduler="threads")
    assert np.allclose(mean, full.astype(np.float64).mean(axis=0))


def test_sinograms(scan):
    path, full = scan
    arr = parload.dask.from_file(path, chunks=(3, 20, -1),
                                 layout="sinograms")
    assert arr.shape == (10, 50, 14)
    assert np.array_equal(arr[2:5].compute(scheduler="threads"),
                          full[:, 2:5].transpose(1, 0, 2))


def test_mapped_sinograms(scan):
    """map_sinograms reaches every chunk's load: the same sinograms."""
    path, full = scan
    arr = parload.dask.from_file(path, chunks=(3, 20, -1),
                                 layout="sinograms", map_sinograms=True)
    assert np.array_equal(arr.compute(scheduler="threads"),
                          full.transpose(1, 0, 2))


def test_chunks_are_loads(scan):
    path, full = scan
    arr = parload.dask.from_file(path, chunks=(10, 5, -1))
    assert arr.numblocks == (5, 2, 1)
    block = arr.blocks[3, 1].compute(scheduler="sync")
    assert np.array_equal(block, full[30:40, 5:10])


def test_bad_arguments(scan, tmp_path):
    path, _ = scan
    with pytest.raises(ValueError):
        parload.dask.from_file(path, layout="columns")
    with pytest.raises(FileNotFoundError):
        parload.dask.from_file(tmp_path / "missing.raw")
