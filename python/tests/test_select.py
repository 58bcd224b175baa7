"""Selections (views, rows, cols, layout) against NumPy slicing of the
full load."""

import numpy as np
import pytest

import parload
from conftest import random_pixels, write_raw

V, H, W = 40, 12, 17


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    rng = np.random.default_rng(7)
    px = random_pixels(rng, (V, H, W), np.int16)
    path = tmp_path_factory.mktemp("sel") / "scan.raw"
    write_raw(path, px, timestamps=np.arange(V) * 3, crc=True)
    return path, parload.load(path).pixels


SELECTIONS = [
    {},
    {"views": slice(5, 9)},
    {"views": slice(None, None, 4)},
    {"views": slice(-10, None, 3)},
    {"views": range(1, 40, 7)},
    {"views": slice(3, 4)},
    {"rows": (2, 5)},
    {"rows": slice(-3, None)},
    {"cols": (0, 1)},
    {"cols": slice(4, -4)},
    {"views": slice(2, 30, 5), "rows": (1, 11), "cols": (3, 16)},
]


def expected(full, sel):
    ix = tuple(slice(*part) if isinstance(part, tuple) else
               part if isinstance(part, slice) else
               slice(part.start, part.stop, part.step)
               for part in (sel.get("views", slice(None)),
                            sel.get("rows", slice(None)),
                            sel.get("cols", slice(None))))
    return full[ix], ix


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("layout", ["views", "sinograms"])
@pytest.mark.parametrize("sel", SELECTIONS, ids=repr)
def test_selection_equals_numpy_slicing(scan, sel, layout, threads):
    path, full = scan
    want, ix = expected(full, sel)
    # A CRC covers a whole payload: only whole views can be verified.
    verify = "rows" not in sel and "cols" not in sel
    ds = parload.load(path, layout=layout, threads=threads, verify=verify,
                      **sel)
    got = ds.pixels
    if layout == "sinograms":
        assert got.shape == (want.shape[1], want.shape[0], want.shape[2])
        got = got.transpose(1, 0, 2)
    assert np.array_equal(got, want)
    assert ds.views == range(V)[ix[0]]
    assert ds.rows == range(H)[ix[1]] and ds.cols == range(W)[ix[2]]
    assert ds.layout == layout
    assert ds.headers["view_index"].tolist() == list(ds.views)
    assert ds.headers["timestamp_ns"].tolist() == [3 * v for v in ds.views]
    assert got.base is ds or ds.pixels.base is ds


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("sel", SELECTIONS, ids=repr)
def test_mapped_sinograms_equal_numpy_slicing(tmp_path, sel, threads):
    """map_sinograms=True: the pixels written, sliced and transposed by
    NumPy; every byte copied from the mapped file (only the file header
    is read) and as many bytes as the same load reads; cache="drop"
    reads."""
    px = random_pixels(np.random.default_rng(11), (V, H, W), np.uint16)
    path = tmp_path / "mapped.raw"
    write_raw(path, px, timestamps=np.arange(V) * 3)
    want, ix = expected(px, sel)
    want = want.transpose(1, 0, 2)
    ds = parload.load(path, layout="sinograms", threads=threads,
                      map_sinograms=True, **sel)
    read = parload.load(path, layout="sinograms", threads=threads, **sel)
    assert np.array_equal(ds.pixels, want)
    assert ds.headers["timestamp_ns"].tolist() == [3 * v for v in ds.views]
    assert ds.stats["read_calls"] == 1 < read.stats["read_calls"]
    assert ds.stats["bytes_read"] == read.stats["bytes_read"]
    drop = parload.load(path, layout="sinograms", threads=threads,
                        map_sinograms=True, cache="drop", **sel)
    assert np.array_equal(drop.pixels, want)
    assert drop.stats["read_calls"] == read.stats["read_calls"]


@pytest.mark.parametrize("sel", SELECTIONS[1:], ids=repr)
def test_selection_into_caller_arrays(scan, sel):
    path, full = scan
    want, _ = expected(full, sel)
    pixels, headers = parload.empty_like_file(path, **sel)
    assert pixels.shape == want.shape
    with parload.Loader(threads=2) as ld:
        ds = ld.load_into(path, pixels, headers, **sel)
        assert ds.pixels is pixels and np.array_equal(pixels, want)
        wrong = np.empty((want.shape[0] + 1,) + want.shape[1:], want.dtype)
        with pytest.raises(ValueError, match="shape"):
            ld.load_into(path, wrong, **sel)


@pytest.mark.parametrize("sel", [
    {"views": slice(0, V + 1)},
    {"views": slice(5, 5)},
    {"views": slice(None, None, -1)},
    {"views": slice(None, None, 0)},
    {"views": range(30, 50)},
    {"rows": (0, H + 1)},
    {"rows": slice(0, 4, 2)},
    {"cols": (9, 3)},
], ids=repr)
def test_bad_selections(scan, sel):
    path, _ = scan
    with pytest.raises(parload.Error) as e:
        parload.load(path, **sel)
    assert e.value.code == "PARLOAD_ESELECT"
    assert str(e.value).startswith(str(path))


@pytest.mark.parametrize("strategy", parload.strategies()[1:])
def test_only_the_parallel_strategy_selects(scan, strategy):
    path, full = scan
    assert np.array_equal(parload.load(path, strategy=strategy).pixels, full)
    for sel in ({"views": slice(1, 3)}, {"rows": (0, 2)},
                {"layout": "sinograms"}):
        with pytest.raises(parload.Error) as e:
            parload.load(path, strategy=strategy, **sel)
        assert e.value.code == "PARLOAD_ENOTSUP"
        assert strategy in str(e.value)


def test_partial_views_cannot_be_verified(scan):
    path, _ = scan
    with pytest.raises(parload.Error) as e:
        parload.load(path, verify=True, cols=(1, 5))
    assert e.value.code == "PARLOAD_ENOTSUP"


def test_selection_errors_name_the_file(scan):
    """Also where the selection is resolved before any load."""
    path, _ = scan
    for call in (lambda: parload.empty_like_file(path, views=range(0)),
                 lambda: parload.Loader().load_into(
                     path, np.empty((1, H, W), np.int16), views=(50, 51))):
        with pytest.raises(parload.Error) as e:
            call()
        assert e.value.code == "PARLOAD_ESELECT"
        assert str(e.value).startswith(f"{path}: ")
