"""Bad raw= input raises with the library's message, before anything is
read: unknown keys, missing keys, bad values, files too short (naming the
file and the view), and what raw= itself must be."""

import numpy as np
import pytest

import parload
from conftest import write_layout

GOOD = {"width": 4, "height": 3, "type": "u16"}


@pytest.fixture
def frames(tmp_path):
    """Three files of two views each, 4 x 3 u16, header 10."""
    rng = np.random.default_rng(21)
    paths = [tmp_path / f"frame_{i}.raw" for i in range(3)]
    write_layout(rng, paths, [2, 2, 2], 4, 3, "u16", header=10)
    return paths


def fails(source, raw, match, code="PARLOAD_EINVAL", **kw):
    with pytest.raises(parload.Error, match=match) as e:
        parload.load(source, raw=raw, **kw)
    assert e.value.code == code
    return e.value


@pytest.mark.parametrize("as_dict", [False, True])
def test_unknown_key(frames, as_dict):
    raw = dict(GOOD, colour=3) if as_dict else \
        "width=4,height=3,type=u16,colour=3"
    fails(frames, raw, "unknown key 'colour'")


@pytest.mark.parametrize("missing", ["width", "height", "type"])
def test_missing_key(frames, missing):
    raw = {k: v for k, v in GOOD.items() if k != missing}
    fails(frames, raw, missing)
    fails(frames, ",".join(f"{k}={v}" for k, v in raw.items()), missing)


@pytest.mark.parametrize("raw,match", [
    ("width=0,height=3,type=u16", "width"),
    ("width=4,height=-3,type=u16", "height"),
    ("width=4,height=3,type=u24", "u24"),
    ("width=4,height=3,type=u16,offset=12Q", "offset"),
    ("width=4,height=3,type=u16,width=5", "width"),
    ("width=3,height=3,type=mono12p", "not whole bytes"),
])
def test_bad_values(frames, raw, match):
    fails(frames, raw, match)


def test_file_too_short_names_the_file_and_the_view(frames):
    """A count past what the files hold, and a file of the list with a
    partial record."""
    e = fails(frames, dict(GOOD, header=10, count=7), "7 views",
              "PARLOAD_ETRUNCATED")
    assert str(frames[-1]) in str(e)
    with open(frames[1], "ab") as f:
        f.write(b"half a record")
    e = fails(frames, dict(GOOD, header=10), "partial record",
              "PARLOAD_ETRUNCATED")
    assert str(frames[1]) in str(e) and e.view == 4 and "view 4" in str(e)
    # Allowed, the complete views load: the last file's views follow.
    ds = parload.load(frames, raw=dict(GOOD, header=10),
                      allow_truncated=True)
    assert len(ds) == 6


def test_offset_past_the_end(tmp_path):
    path = tmp_path / "small.raw"
    path.write_bytes(bytes(100))
    e = fails(path, dict(GOOD, offset=200), "shorter than the layout's "
              "offset", "PARLOAD_ETRUNCATED")
    assert str(path) in str(e)


def test_raw_must_be_text_or_a_dict(frames):
    for raw in (3, ["width=4"], GOOD.items()):
        with pytest.raises(TypeError, match="raw"):
            parload.load(frames, raw=raw)
    for bad in ({1: 4}, dict(GOOD, offset=1.5), dict(GOOD, offset=True),
                dict(GOOD, offset=None)):
        with pytest.raises(TypeError, match="raw"):
            parload.load(frames, raw=bad)
    for bad in (dict(GOOD, type="u16,offset=4"), dict(GOOD, type="u16\n"),
                dict(GOOD, type="u16 # x")):
        with pytest.raises(ValueError, match="raw"):
            parload.load(frames, raw=bad)


def test_spec_file_missing(tmp_path, frames):
    e = fails(frames, "@" + str(tmp_path / "none.txt"), "none.txt",
              "PARLOAD_EOPEN")
    assert isinstance(e, FileNotFoundError)


def test_layouts_need_the_parallel_strategy(frames):
    fails(frames, GOOD | {"header": 10}, "parallel strategy",
          "PARLOAD_ENOTSUP", strategy="bulk")


def test_a_list_needs_paths(frames):
    with pytest.raises(ValueError, match="empty list"):
        parload.load([], raw=GOOD)
    with pytest.raises(TypeError, match="item 1"):
        parload.load([frames[0], 7], raw=GOOD)
    with pytest.raises(TypeError, match="one file"):
        parload.read_header(frames)


def test_following_a_raw_layout_needs_a_count(frames):
    with pytest.raises(parload.Error, match="count"):
        list(parload.stream(frames[0], raw=dict(GOOD, header=10),
                            follow=True, timeout=0.1))
