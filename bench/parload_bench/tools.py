"""The programs the bench runs and what they can do: the parload command
and its options, the helpers in the build tree, Python with NumPy and the
parload module, MPI, and the copies of the programs a run snapshots."""
import os
import re
import shutil
import subprocess
import sys

from . import BenchError


class Tools:
    """The programs the bench runs, and what is missing (said in the
    output and in results.md)."""

    def __init__(self, args):
        self.parload = args.parload
        self.copyfloor = args.copyfloor
        self.freshfloor = args.freshfloor
        self.evict = args.evict
        self.dd = shutil.which("dd")
        self.fio = shutil.which("fio")
        self.gnuplot = shutil.which("gnuplot")
        self.term = "png"
        self.numpy = find_numpy_python(args.numpy_python)
        self.strategies = list_strategies(self.parload)
        self.selections = has_selections(self.parload)
        self.layouts = has_layouts(self.parload)
        self.cache_modes = has_options(self.parload, ("--cache",))
        self.corrections = has_options(self.parload, ("--darks", "--flats",
                                                      "--minus-log"))
        self.pyenv = find_module(self.numpy, args.python_path)
        self.selcopy = args.selcopy if args.selcopy and \
            os.access(args.selcopy, os.X_OK) else None
        self.batches = args.batches if args.batches and \
            os.access(args.batches, os.X_OK) else None
        self.uringfloor = args.uringfloor if args.uringfloor and \
            os.access(args.uringfloor, os.X_OK) else None
        self.mpiexec = args.mpiexec or shutil.which("mpirun") or \
            shutil.which("mpiexec")
        self.parload_mpi = args.parload_mpi if args.parload_mpi and \
            os.access(args.parload_mpi, os.X_OK) else None
        self.timeout = shutil.which("timeout")
        self.mpi = bool(self.mpiexec and self.parload_mpi and self.timeout)
        self.mpi_flags = open_mpi_flags(self.mpiexec) if self.mpi else []
        self.missing = []
        if not self.batches:
            self.missing.append("bench/batches (not built: make bench builds "
                                "it): experiment 11 is skipped")
        if not self.uringfloor:
            self.missing.append("bench/uringfloor (built where configure "
                                "finds liburing: apt-get install "
                                "liburing-dev): experiment 14 runs without "
                                "its io_uring floors")
        if not self.mpi:
            self.missing.append("MPI (%s): experiment 12 is skipped" % (
                "no parload-mpi: configure found no MPI, or --parload-mpi"
                if not self.parload_mpi else
                "no mpirun or mpiexec on the PATH, or --mpiexec"
                if not self.mpiexec else "no timeout(1)"))
        if not self.selections:
            self.missing.append("parload's selections (this parload has no "
                                "--views, --rows, --cols, --layout): "
                                "experiment 9 measures the peers alone")
        if not self.layouts:
            self.missing.append("parload's raw layouts (this parload has "
                                "no --raw, --concat): experiment 13 is "
                                "skipped")
        elif not self.numpy:
            self.missing.append("numpy (for experiment 13's files in other "
                                "layouts): experiment 13 measures parload's "
                                "own format through --raw alone")
        if not self.cache_modes:
            self.missing.append("parload's page-cache modes (this parload "
                                "has no --cache): experiment 14 is skipped")
        if not self.corrections or not self.pyenv:
            self.missing.append("%s: experiment 16 is skipped" % (
                "parload's correction (this parload has no --darks, "
                "--flats, --minus-log)" if not self.corrections else
                "the parload Python module"))
        if not self.selcopy:
            self.missing.append("bench/selcopy (not built: make bench builds "
                                "it): experiment 9 has no full load + copy")
        if not self.fio:
            self.missing.append("fio (not installed: its peer points are skipped)")
        if not self.numpy:
            self.missing.append("numpy (no python3 with numpy found: the numpy "
                                "loader is skipped)")
        if self.numpy and not self.pyenv:
            self.missing.append("the parload Python module (%s cannot import "
                                "it; --python-path): experiment 10 is "
                                "skipped" % self.numpy)
        if not self.gnuplot:
            self.missing.append("gnuplot (not installed: no plots)")
        if not self.dd:
            self.missing.append("dd (not found: its peer points are skipped)")


def open_mpi_flags(mpiexec):
    """Open MPI's launcher: more ranks than cores allowed, and no binding
    of its own (libparload-mpi binds each rank's workers to its share of
    the cores; Open MPI would bind a single rank to one core)."""
    try:
        r = subprocess.run([mpiexec, "--version"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if "Open MPI" in r.stdout + r.stderr or "OpenRTE" in r.stdout + r.stderr:
        return ["--oversubscribe", "--bind-to", "none"]
    return []


def list_strategies(parload):
    """The command's strategies, in its order: `parload --list-strategies`
    (one per line, the name first), or, from a command without that
    option, the names its --help gives for --strategy."""
    r = subprocess.run([parload, "--list-strategies"], capture_output=True,
                       text=True)
    if r.returncode == 0 and r.stdout.strip():
        return [line.split()[0] for line in r.stdout.splitlines()
                if line.strip()]
    r = subprocess.run([parload, "--help"], capture_output=True, text=True)
    m = re.search(r"--strategy NAME\s+(.*?)\n\s*(?:-\w, )?--", r.stdout, re.S)
    names = re.findall(r"[a-z][a-z0-9-]*", m.group(1)) if m else []
    names = [x for x in names if x not in ("default", "or")]
    if "parallel" not in names:
        raise BenchError("%s lists no strategies (--list-strategies, "
                         "--help)" % parload)
    return names


def find_module(python, path):
    """The environment in which `python` imports the parload module (path
    first on PYTHONPATH), or None when it cannot."""
    if not python:
        return None
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.path.abspath(path) + (
            os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([python, "-c", "import parload; parload.load"],
                       capture_output=True, env=env)
    return env if r.returncode == 0 else None


def has_options(parload, opts):
    """Whether the command's --help names every option of opts."""
    r = subprocess.run([parload, "--help"], capture_output=True, text=True)
    return all(opt in r.stdout for opt in opts)


def has_layouts(parload):
    """Whether the command reads raw layouts (--raw, --concat)."""
    return has_options(parload, ("--raw", "--concat"))


def has_selections(parload):
    """Whether the command loads selections (--views, --rows, --cols,
    --layout)."""
    return has_options(parload, ("--views", "--rows", "--cols", "--layout"))


def snapshot_programs(args, where):
    """Copy the programs under test, and the libparload they load, to
    `where`, so that the whole run measures one build even if the tree is
    rebuilt meanwhile (a relink leaves a missing or half-written file for a
    moment)."""
    env_path = os.environ.get("LD_LIBRARY_PATH", "")
    copies = {}
    progs = [("copyfloor", args.copyfloor), ("freshfloor", args.freshfloor),
             ("evict", args.evict)]
    for name in ("selcopy", "batches", "uringfloor"):
        path = getattr(args, name)
        if path and os.access(path, os.X_OK):
            progs.append((name, path))
    libs = []
    for name in ("parload", "parload_mpi"):
        path = getattr(args, name)
        path = shutil.which(path) or path if path else None
        if not path or not os.access(path, os.X_OK):
            continue
        with open(path, "rb") as f:
            if f.read(2) == b"#!":
                # A libtool wrapper script works only where it is: run
                # the harness through `libtool --mode=execute` (make
                # bench does) to get the real program.
                setattr(args, name, path)
                continue
        progs.append((name, path))
        libs += [x for x in parload_libs(path) if x not in libs]
    for name, path in progs + libs:
        dest = os.path.join(where, name)
        shutil.copy2(path, dest)
        copies[name] = dest
    for name in ("parload", "copyfloor", "freshfloor", "evict", "selcopy",
                 "batches", "uringfloor", "parload_mpi"):
        if getattr(args, name, None) is not None or name in copies:
            setattr(args, name, copies.get(name, getattr(args, name)))
    if libs:
        os.environ["LD_LIBRARY_PATH"] = where + (":" + env_path if env_path
                                                 else "")


def parload_libs(program):
    """[(name, path)] of the libparload libraries program loads (ldd)."""
    r = subprocess.run(["ldd", program], capture_output=True, text=True) \
        if shutil.which("ldd") else None
    libs = []
    if r and r.returncode == 0:
        for line in r.stdout.splitlines():
            m = re.match(r"\s*(libparload\S*)\s+=>\s+(/\S+)", line)
            if m:
                libs.append((m.group(1), m.group(2)))
    return libs


def find_numpy_python(explicit):
    cands = [explicit] if explicit else [
        os.environ.get("PARLOAD_BENCH_PYTHON"), sys.executable,
        shutil.which("python3"), "/usr/bin/python3"]
    for py in cands:
        if not py or not os.path.exists(py):
            continue
        try:
            r = subprocess.run([py, "-c", "import numpy"],
                               capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return py
    return None
