"""python -m parload: the command's load report from the package, checked
against parload.load, the independent reader of conftest and, where the
parload command is at hand, the command's own report."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import parload
from conftest import patch, random_pixels, read_raw, run_cli, write_raw


def run_main(*args):
    return subprocess.run([sys.executable, "-m", "parload", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def report(*args):
    """The one JSON object of a successful python -m parload --json."""
    res = run_main("--json", *args)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 1, res.stdout
    return json.loads(lines[0])


def without_timing(line):
    return re.sub(r"in [0-9.]+ s, [0-9.]+ GB/s", "in T s, G GB/s", line)


def test_whole_file_as_the_library_loads_it(stream):
    path, px, _ = stream
    got = report("-t", 2, path)
    fields, _, _ = read_raw(path)
    ds = parload.load(path, threads=2)
    assert got["file"] == str(path)
    assert (got["views"], got["rows"], got["cols"]) == px.shape
    assert (got["view_start"], got["view_step"], got["layout"]) == \
        (0, 1, "views")
    assert got["bytes"] == os.path.getsize(path) == got["bytes_read"]
    assert (got["file_views"], got["width"], got["height"]) == \
        (fields["view_count"], fields["width"], fields["height"])
    assert got["pixel_type"] == ds.file_header.pixel_type == "u16"
    assert got["crc32c"] is True and got["threads"] == 2
    assert got["strategy"] == "parallel" and got["truncated"] is False
    assert got["seconds"] > 0 and got["gbps"] > 0


def test_selection(stream):
    path, px, _ = stream
    got = report("--views", "-20::3", "--rows", "2:7", "--cols", "1:-1",
                 "--layout", "sinograms", path)
    ds = parload.load(path, views=slice(-20, None, 3), rows=(2, 7),
                      cols=slice(1, -1), layout="sinograms")
    assert ds.pixels.shape == (5, 7, 11)
    want = {"views": 7, "view_start": 3, "view_step": 3, "rows": 5,
            "row_start": 2, "cols": 11, "col_start": 1,
            "layout": "sinograms", "file_views": 23}
    assert {k: got[k] for k in want} == want
    assert ds.views == range(3, 23, 3) and len(ds) == got["views"]
    assert got["selected_bytes"] == 7 * (32 + 5 * 11 * 2)
    text = run_main("--views", "-20::3", "--rows", "2:7", "--cols", "1:-1",
                    "--layout", "sinograms", path).stdout
    assert text.startswith(f"{path}: 7 views 11x5 u16 (views 3:22:3 of 23, "
                           "rows 2:7 of 9, cols 1:12 of 13, layout "
                           "sinograms), 994 B in "), text


def test_the_same_report_as_the_command(tmp_path, parload_bin):
    """Line for line the command's report, but for the timing."""
    path = tmp_path / "g.raw"
    assert run_cli(parload_bin, "gen", "--views", 31, "--width", 17,
                   "--height", 5, "--type", "f32", "--crc",
                   path).returncode == 0
    for args in ([], ["--verify"], ["--views", "::4", "--cols", "3:9"],
                 ["--rows", "1:4", "--layout", "sinograms"],
                 ["--cache", "drop"], ["--cache", "auto", "--verify"]):
        cmd = run_cli(parload_bin, "-t", 2, *args, path, path)
        mod = run_main("-t", 2, *args, path, path)
        assert (mod.returncode, mod.stderr) == (cmd.returncode, cmd.stderr)
        assert without_timing(mod.stdout) == without_timing(cmd.stdout)
        cmd = json.loads(run_cli(parload_bin, "--json", *args, path).stdout)
        mod = report(*args, path)
        for key in ("seconds", "gbps", "threads"):
            del cmd[key], mod[key]
        assert mod == cmd, args


def test_failures_and_usage(stream, tmp_path):
    path, _, _ = stream
    short = tmp_path / "short.raw"
    short.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(parload.Error) as e:
        parload.load(short)
    res = run_main(short, path)
    assert res.returncode == 1
    assert res.stderr == f"parload: {e.value}\n"
    assert res.stdout.startswith(f"{path}: 23 views 13x9 u16, ")
    res = run_main("--allow-truncated", short)
    assert res.returncode == 0 and "(truncated: 3 of 23 views)" in res.stdout
    # A value the library refuses: its message, as the command says it.
    for bad, said in ((["--views", "1:2:3:4", path], "invalid --views "),
                      (["--rows", "1:2:3", path], "invalid --rows "),
                      (["-t", "x", path], "invalid thread count 'x' "),
                      (["--layout", "rows", path], "unknown layout 'rows' ")):
        res = run_main(*bad)
        assert res.returncode == 2, bad
        assert res.stderr.startswith("parload: " + said), res.stderr
        assert res.stderr.endswith("Try 'python -m parload --help'.\n")
    res = run_main()
    assert res.returncode == 2 and "usage:" in res.stderr
    res = run_main("--views", "9:9", path)
    assert res.returncode == 1 and "PARLOAD" not in res.stderr
    assert "invalid selection" in res.stderr


def test_verify_fails_a_bad_view(tmp_path, rng):
    path = tmp_path / "c.raw"
    write_raw(path, random_pixels(rng, (6, 4, 5), np.int32), crc=True)
    res = run_main("--verify", path)
    assert res.returncode == 0 and res.stdout.endswith(", CRC-32C verified\n")
    at = 64 + 2 * (32 + 80) + 32 + 7  # a pixel byte of view 2
    patch(path, at, "<B", path.read_bytes()[at] ^ 0xFF)
    res = run_main("--verify", "-q", path)
    assert res.returncode == 1 and res.stdout == ""
    assert "CRC" in res.stderr and "view 2" in res.stderr


def test_help_and_version():
    res = run_main("--help")
    assert res.returncode == 0
    for opt in ("--threads", "--views", "--rows", "--cols", "--layout",
                "--json"):
        assert opt in res.stdout, opt
    res = run_main("--version")
    assert res.stdout == f"parload {parload.__version__}\n"
