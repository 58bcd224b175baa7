"""parload.mpi under mpirun: mpi_ranks.py runs on 2 and 3 ranks, each
under timeout(1), so that a rank left waiting fails the test instead of
hanging the suite."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def mpi_built():
    """(built, why): configure's verdict under make check, else whether the
    package imported (pip install) has parload._parload_mpi."""
    verdict = os.environ.get("PARLOAD_PYTHON_MPI")
    if verdict is not None:
        return verdict.startswith("yes"), f"configure: {verdict}"
    found = importlib.util.find_spec("parload._parload_mpi") is not None
    return found, ("the installed package has it" if found else
                   "the installed package has no parload._parload_mpi")


def launcher():
    """The mpirun command, or a skip saying why there is none."""
    built, why = mpi_built()
    if not built:
        pytest.skip(f"parload.mpi is not built ({why})")
    mpiexec = os.environ.get("PARLOAD_MPIEXEC")
    if not mpiexec:
        pytest.skip("no MPI launcher (PARLOAD_MPIEXEC is not set)")
    if os.environ.get("PARLOAD_TEST_ASAN"):
        pytest.skip("the MPI launcher does not run under AddressSanitizer")
    return [mpiexec, *os.environ.get("PARLOAD_MPIEXEC_FLAGS", "").split()]


def test_import_says_why_when_not_built():
    """In a child: importing mpi4py.MPI initialises MPI in the process,
    and an mpirun started by a process with MPI initialised fails."""
    r = subprocess.run([sys.executable, "-c", "import parload.mpi as m; "
                        "print(bool(m.load.__doc__ and m.Part.__doc__))"],
                       capture_output=True, text=True, timeout=60)
    if mpi_built()[0]:
        assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    else:
        assert r.returncode != 0
        assert "libparload-mpi and mpi4py" in r.stderr, r.stderr


def run_on_ranks(script, ranks, seconds):
    """pytest of script (a file of this folder, never collected alone) on
    ranks ranks under the launcher and timeout(1) of seconds, so that a
    rank left waiting fails instead of hanging: its output, once it
    passed with nothing skipped."""
    cmd = ["timeout", str(seconds), *launcher(), "-n", str(ranks),
           sys.executable, "-B", "-m", "pytest", "-q", "-p",
           "no:cacheprovider", "--color=no", f"--rootdir={HERE}",
           str(HERE / script)]
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=seconds + 30)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert " passed" in out and "skipped" not in out, out[-3000:]
    return out


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_rank_gets_its_slice(ranks):
    out = run_on_ranks("mpi_ranks.py", ranks, 60)
    # Every rank ran every test: nothing skipped, nothing deselected.
    assert out.count(" passed") == ranks, out
