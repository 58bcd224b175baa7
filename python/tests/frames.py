"""Detector-like frames for the fixtures of the tests and the bench
(detector_fixtures.py, zarr_fixtures.py): NumPy alone, so that any of
them may import it."""

import numpy as np


def pixels(shape, dtype, seed):
    """Detector-like pixels of shape (..., rows, columns): Poisson counts
    around a smooth beam, so that the codecs compress them as they
    compress a detector's, shifted to hold negatives in signed types and
    to fill the range of u1."""
    rng = np.random.default_rng(seed)
    h, w = shape[-2:]
    y, x = np.mgrid[0:h, 0:w]
    beam = 40 + 400 * np.exp(-((y - h / 2) ** 2 + (x - w / 3) ** 2) /
                             (2 * (min(h, w) / 4) ** 2))
    counts = rng.poisson(beam, size=shape)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (counts + rng.standard_normal(shape)).astype(dt)
    if dt.kind == "i":
        counts = counts - 100
    info = np.iinfo(dt)
    return np.clip(counts, info.min, info.max).astype(dt)
