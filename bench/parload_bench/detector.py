"""Experiment 17, detector data: bench/detector.py in a fresh interpreter
(it writes its files with h5py + hdf5plugin and measures parload against
h5py in that one process, alternated; bench/README.md), its results.md
section taken into the bench's results.md and its files kept under
OUT/detector/."""
import os
import subprocess

from . import HERE, log

# What bench/detector.py needs besides the parload module.
MODULES = "import h5py, hdf5plugin, bitshuffle, numcodecs"


def missing(tools):
    """Why experiment 17 cannot run, or None."""
    if not tools.pyenv:
        return "the parload Python module: experiment 17 is skipped"
    r = subprocess.run([tools.numpy, "-c", MODULES], capture_output=True,
                       env=tools.pyenv)
    if r.returncode:
        return ("h5py, hdf5plugin, bitshuffle or numcodecs (Debian: "
                "python3-h5py python3-hdf5plugin hdf5-filter-plugin "
                "hdf5-filter-plugin-blosc-serial bitshuffle "
                "python3-numcodecs): experiment 17 is skipped")
    return None


def run(args, tools, out, data_dir):
    """Runs bench/detector.py; its markdown lines (or a line saying why
    there are none)."""
    why = missing(tools)
    if why:
        log("  skipped: " + why)
        return ["## 17. Detector data", "", "Skipped: " + why + ".", ""]
    dest = os.path.join(out, "detector")
    cmd = [tools.numpy, os.path.join(HERE, "detector.py"), "--out", dest,
           "--data-dir", data_dir,
           "--runs", str(min(args.runs, 5) if not args.quick else args.runs)]
    if args.quick:
        cmd.append("--quick")
    if args.keep:
        cmd.append("--keep")
    log("experiment 17: " + " ".join(cmd))
    r = subprocess.run(cmd, env=tools.pyenv, capture_output=True, text=True)
    if r.returncode:
        return ["## 17. Detector data", "", "**bench/detector.py failed "
                "(status %d):** %s" % (r.returncode,
                                       r.stderr.strip()[-2000:]), ""]
    with open(os.path.join(dest, "results.md")) as f:
        return f.read().splitlines() + [""]
