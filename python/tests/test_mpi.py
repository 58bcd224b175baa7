"""parload.mpi under mpirun: mpi_ranks.py runs on 2 and 3 ranks, each
under timeout(1), so that a rank left waiting fails the test instead of
hanging the suite."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def launcher():
    """The mpirun command, or a skip saying why there is none."""
    built = os.environ.get("PARLOAD_PYTHON_MPI", "")
    if not built.startswith("yes"):
        pytest.skip("parload.mpi is not built (configure: "
                    f"{built or 'not run by make check'})")
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
    if os.environ.get("PARLOAD_PYTHON_MPI", "").startswith("yes"):
        assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    else:
        assert r.returncode != 0
        assert "libparload-mpi and mpi4py" in r.stderr, r.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_rank_gets_its_slice(ranks):
    cmd = ["timeout", "60", *launcher(), "-n", str(ranks), sys.executable,
           "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no",
           f"--rootdir={HERE}", str(HERE / "mpi_ranks.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    # Every rank ran every test: nothing skipped, nothing deselected.
    assert out.count(" passed") == ranks and "skipped" not in out, out
