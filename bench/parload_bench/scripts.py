"""Experiments 17 (detector data) and 18 (Zarr stores): each a script of
its own in bench/ (bench/detector.py, bench/zarrload.py) run in a fresh
interpreter, which writes its files and measures parload against a peer
library in that one process, alternated (bench/README.md); its
results.md section is taken into the bench's results.md and its files
kept under OUT/NAME/."""
import os
import subprocess

from . import HERE, log


class Script:
    """number, title: results.md's heading; script: its file in bench/;
    modules: the import line of what it needs besides parload, debian:
    the packages that hold them; name: its folder under OUT; runs: the
    most runs it makes of a full bench."""

    def __init__(self, number, title, script, modules, debian, name, runs):
        self.number, self.title, self.script = number, title, script
        self.modules, self.debian = modules, debian
        self.name, self.runs = name, runs

    def heading(self):
        return "## %d. %s" % (self.number, self.title)


SCRIPTS = [
    Script(17, "Detector data", "detector.py",
           "import h5py, hdf5plugin, bitshuffle, numcodecs",
           "python3-h5py python3-hdf5plugin hdf5-filter-plugin "
           "hdf5-filter-plugin-blosc-serial bitshuffle python3-numcodecs",
           "detector", 5),
    Script(18, "Zarr stores", "zarrload.py", "import zarr, numcodecs",
           "python3-zarr python3-numcodecs", "zarr", 7),
]


def missing(script, tools):
    """Why the experiment cannot run, or None."""
    what = "experiment %d is skipped" % script.number
    if not tools.pyenv:
        return "the parload Python module: " + what
    r = subprocess.run([tools.numpy, "-c", script.modules],
                       capture_output=True, env=tools.pyenv)
    if r.returncode:
        return "the modules %s (Debian: %s): %s" % (
            script.modules[len("import "):], script.debian, what)
    return None


def run(script, args, tools, out, data_dir):
    """Runs the script; its markdown lines (or a line saying why there are
    none)."""
    why = missing(script, tools)
    if why:
        log("  skipped: " + why)
        return [script.heading(), "", "Skipped: " + why + ".", ""]
    dest = os.path.join(out, script.name)
    cmd = [tools.numpy, os.path.join(HERE, script.script), "--out", dest,
           "--data-dir", data_dir, "--runs",
           str(min(args.runs, script.runs) if not args.quick else args.runs)]
    if script.number == 18:
        cmd += ["--parload", tools.parload]
    if args.quick:
        cmd.append("--quick")
    if args.keep:
        cmd.append("--keep")
    log("experiment %d: %s" % (script.number, " ".join(cmd)))
    r = subprocess.run(cmd, env=tools.pyenv, capture_output=True, text=True)
    if r.returncode:
        return [script.heading(), "", "**bench/%s failed (status %d):** %s"
                % (script.script, r.returncode, r.stderr.strip()[-2000:]),
                ""]
    with open(os.path.join(dest, "results.md")) as f:
        return f.read().splitlines() + [""]
