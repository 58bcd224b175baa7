"""One measurement: a program run in a fresh process, reaped with wait4
for its wall time and peak resident size, and the check of what it loaded
before its time counts."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import HERE, MIB, BenchError


class Tools:
    """The programs the bench runs, and what is missing (said in the
    output and in results.md)."""

    def __init__(self, args):
        self.parload = args.parload
        self.copyfloor = args.copyfloor
        self.evict = args.evict
        self.dd = shutil.which("dd")
        self.fio = shutil.which("fio")
        self.gnuplot = shutil.which("gnuplot")
        self.term = "png"
        self.numpy = find_numpy_python(args.numpy_python)
        self.strategies = list_strategies(self.parload)
        self.selections = has_selections(self.parload)
        self.pyenv = find_module(self.numpy, args.python_path)
        self.selcopy = args.selcopy if args.selcopy and \
            os.access(args.selcopy, os.X_OK) else None
        self.missing = []
        if not self.selections:
            self.missing.append("parload's selections (this parload has no "
                                "--views, --rows, --cols, --layout): "
                                "experiment 9 measures the peers alone")
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


def has_selections(parload):
    """Whether the command loads selections (--views, --rows, --cols,
    --layout)."""
    r = subprocess.run([parload, "--help"], capture_output=True, text=True)
    return all(opt in r.stdout for opt in ("--views", "--rows", "--cols",
                                           "--layout"))


def snapshot_programs(args, where):
    """Copy the programs under test, and the libparload they load, to
    `where`, so that the whole run measures one build even if the tree is
    rebuilt meanwhile (a relink leaves a missing or half-written file for a
    moment)."""
    parload = shutil.which(args.parload) or args.parload
    with open(parload, "rb") as f:
        if f.read(2) == b"#!":
            # A libtool wrapper script works only where it is: run the
            # harness through `libtool --mode=execute` (make bench does)
            # to get the real program.
            args.parload = parload
            parload = None
    env_path = os.environ.get("LD_LIBRARY_PATH", "")
    r = subprocess.run(["ldd", parload], capture_output=True, text=True) \
        if parload and shutil.which("ldd") else None
    libs = []
    if r and r.returncode == 0:
        for line in r.stdout.splitlines():
            m = re.match(r"\s*(libparload\S*)\s+=>\s+(/\S+)", line)
            if m:
                libs.append((m.group(1), m.group(2)))
    copies = {}
    progs = [("copyfloor", args.copyfloor), ("evict", args.evict)]
    if args.selcopy and os.access(args.selcopy, os.X_OK):
        progs.append(("selcopy", args.selcopy))
    if parload:
        progs.append(("parload", parload))
    for name, path in progs + libs:
        dest = os.path.join(where, name)
        shutil.copy2(path, dest)
        copies[name] = dest
    args.parload = copies.get("parload", args.parload)
    args.copyfloor = copies["copyfloor"]
    args.evict = copies["evict"]
    args.selcopy = copies.get("selcopy")
    if libs:
        os.environ["LD_LIBRARY_PATH"] = where + (":" + env_path if env_path
                                                 else "")


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


def harness_rss_kib():
    """Reset this process's peak resident size to its current size and
    return it (KiB).  On Linux a child's ru_maxrss is at least the peak of
    the process that spawned it: exec carries the old memory's high-water
    mark into the new program's.  So a child's peak RSS reads the harness's
    own size when it stays below it; resetting the mark before each spawn
    keeps that floor at the harness's current size, which this returns so
    that the report can say which figures sit on it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_process(cmd, env=None):
    """Run cmd in a fresh process; return (CompletedProcess, wall seconds,
    peak RSS KiB, harness RSS KiB at the spawn).  wall is the time from just
    before the spawn until the child is reaped, as this (Python) process
    sees it: fork and exec included.  The peak RSS is the child's ru_maxrss
    from wait4 (KiB on Linux)."""
    for attempt in range(4):
        floor = harness_rss_kib()
        # Output goes to files, not pipes: the child never blocks on a full
        # pipe, and nothing has to be read while it runs.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, env=env)
            try:
                _, status, usage = os.wait4(child.pid, 0)
            except BaseException:
                child.kill()
                child.wait()
                raise
            wall = time.perf_counter() - t0
            child.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            r = subprocess.CompletedProcess(
                cmd, child.returncode,
                out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"))
        # A program that could not even start because its shared library
        # is being relinked (a build running in the same tree) measured
        # nothing: wait and start it again.  Any other failure counts.
        if r.returncode != 127 or \
                "error while loading shared libraries" not in r.stderr:
            break
        time.sleep(2)
    return r, wall, usage.ru_maxrss, floor


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise BenchError("no JSON in output: %r" % text[-300:])


def run_checked(cmd, what, env=None):
    """run_process, failing with the program's error unless it exits 0."""
    r, *proc = run_process(cmd, env)
    if r.returncode != 0:
        raise BenchError("%s failed (exit %d): %s %s" % (
            what or " ".join(cmd), r.returncode, r.stdout.strip()[-300:],
            r.stderr.strip()))
    return r, proc


def measure(tools, p, stream):
    """One run of p, in a fresh process: a dict with seconds (what the
    program reports; None for parload --version), wall, peak_rss_kib and
    harness_rss_kib (the process as the harness sees it), read_calls and
    bytes_read."""
    m = RUNNERS[p.tool](tools, p, p.stream or stream)
    m["wall"], m["peak_rss_kib"], m["harness_rss_kib"] = m.pop("process")
    return m


def result(seconds, proc, read_calls=None, bytes_read=None):
    return {"seconds": seconds, "process": proc, "read_calls": read_calls,
            "bytes_read": bytes_read}


def run_version(tools, p, stream):
    # The process alone: start, link, print, exit.  No load.
    r, proc = run_checked([tools.parload, "--version"], None)
    if not r.stdout.startswith("parload"):
        raise BenchError("parload --version printed %r" % r.stdout[:100])
    return result(None, proc)


def parload_command(tools, p, stream):
    cmd = [tools.parload, "--json"]
    if p.strategy is not None or p.threads_flag:
        cmd += ["--threads", str(p.threads)]
    if p.strategy is not None:
        cmd += ["--strategy", p.strategy]
    if p.io is not None:
        cmd += ["--io", p.io]
        if p.buffer is not None:
            cmd += ["--buffer", str(p.buffer)]
    cmd += list(p.extra)
    if p.select:
        cmd += p.select.flags
    if p.verify:
        cmd += ["--verify-seed", str(stream.seed)]
    return cmd + [stream.path]


def run_parload(tools, p, stream):
    cmd = parload_command(tools, p, stream)
    r, proc = run_checked(cmd, None)
    d = last_json(r.stdout)
    # An unverified load (the whole-process point) must still deliver
    # every view and byte; a verified one must also match the stream (a
    # selection: the selected part, as --verify-seed checks it).  The
    # JSON names the file's size and the shape delivered.
    shape = ((stream.views, stream.height, stream.width, "views")
             if p.select is None else
             p.select.shape(stream) + (p.select.layout,))
    keys = ("views", "rows", "cols", "layout")
    # A whole load's shape fields are checked where the JSON has them.
    got = tuple(d.get(k) if p.select else d.get(k, want)
                for k, want in zip(keys, shape))
    if d.get("bytes") != stream.size or got != shape or \
            (p.verify and d.get("verified") is not True):
        raise BenchError("%s: load not verified: %s" % (" ".join(cmd), d))
    return result(float(d["seconds"]), proc, d.get("read_calls"),
                  d.get("bytes_read"))


def run_copyfloor(tools, p, stream):
    cmd = [tools.copyfloor, "--threads", str(p.threads)]
    if p.tool == "copyfloor-whole":
        cmd.append("--whole")
    r, proc = run_checked(cmd + [stream.path], None)
    d = last_json(r.stdout)
    if d.get("bytes") != stream.size or d.get("verified") is not True:
        raise BenchError("copy floor read %s of %d bytes" %
                         (d.get("bytes"), stream.size))
    return result(float(d["seconds"]), proc, None, d["bytes"])


def run_dd(tools, p, stream):
    env = dict(os.environ, LC_ALL="C")
    cmd = [tools.dd, "if=" + stream.path, "of=/dev/null", "bs=1M"]
    r, proc = run_checked(cmd, "dd", env)
    m = re.search(r"^(\d+) bytes .*copied, ([0-9.e+-]+) s", r.stderr, re.M)
    if not m:
        raise BenchError("dd failed: %s" % r.stderr.strip())
    if int(m.group(1)) != stream.size:
        raise BenchError("dd copied %s of %d bytes" %
                         (m.group(1), stream.size))
    return result(float(m.group(2)), proc, None, int(m.group(1)))


def run_fio(tools, p, stream):
    # --readonly always: a read job without it may lay out (write) the
    # file.  --invalidate=0: the harness decides what is cached.
    cmd = [tools.fio, "--name=seqread", "--filename=" + stream.path,
           "--readonly", "--rw=read", "--bs=1M", "--ioengine=psync",
           "--numjobs=1", "--invalidate=0", "--size=%d" % stream.size,
           "--output-format=json"]
    r, proc = run_checked(cmd, "fio")
    rd = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["read"]
    whole = stream.size // MIB * MIB  # fio reads whole blocks only
    if rd["io_bytes"] != whole or rd["io_bytes"] == 0:
        raise BenchError("fio read %d of %d bytes" % (rd["io_bytes"], whole))
    # Time in the read calls (mean latency x requests), scaled to the
    # whole file; fio's start-up is not in it.
    secs = rd["lat_ns"]["mean"] * rd["lat_ns"]["N"] * 1e-9
    secs *= stream.size / rd["io_bytes"]
    return result(secs, proc, rd["total_ios"], rd["io_bytes"])


def run_numpy(tools, p, stream):
    cmd = [tools.numpy, os.path.join(HERE, "npload.py"), stream.path,
           str(stream.seed)]
    r, proc = run_checked(cmd, "numpy loader")
    d = last_json(r.stdout)
    if d.get("verified") is not True or d.get("bytes") != stream.size:
        raise BenchError("numpy load not verified: %s" % d)
    return result(float(d["seconds"]), proc, None, d["bytes"])


def check_selection(what, p, stream, d):
    """A peer's selection: verified by the peer, of the selected shape."""
    views, rows, cols = p.select.shape(stream)
    if d.get("verified") is not True or d.get("views") != views or \
            d.get("out_bytes") != views * rows * cols * stream.bpp:
        raise BenchError("%s: selection %s not verified: %s" % (
            what, p.select.name, d))


def run_npselect(tools, p, stream):
    cmd = [tools.numpy, os.path.join(HERE, "npselect.py"), stream.path,
           str(stream.seed)] + p.select.flags
    r, proc = run_checked(cmd, "numpy selection")
    d = last_json(r.stdout)
    check_selection("numpy", p, stream, d)
    return result(float(d["seconds"]), proc, None, None)


def run_selcopy(tools, p, stream):
    cmd = [tools.selcopy, "--threads", str(p.threads), "--seed",
           str(stream.seed)] + p.select.flags + [stream.path]
    r, proc = run_checked(cmd, None)
    d = last_json(r.stdout)
    check_selection("selcopy", p, stream, d)
    return result(float(d["seconds"]), proc, None, None)


def run_pyload(tools, p, stream):
    cmd = [tools.numpy, os.path.join(HERE, "pyload.py"), stream.path,
           str(stream.seed), str(p.threads)]
    r, proc = run_checked(cmd, "parload.load in Python", tools.pyenv)
    d = last_json(r.stdout)
    if d.get("verified") is not True or d.get("bytes") != stream.size or \
            d.get("views") != stream.views:
        raise BenchError("parload.load in Python not verified: %s" % d)
    return result(float(d["seconds"]), proc, None, None)


def run_pyimport(tools, p, stream):
    cmd = [tools.numpy, os.path.join(HERE, "pyload.py"), "--import"]
    r, proc = run_checked(cmd, "import parload", tools.pyenv)
    d = last_json(r.stdout)
    if d.get("verified") is not True:
        raise BenchError("import parload: no parload.load: %s" % d)
    return result(float(d["seconds"]), proc, None, None)


RUNNERS = {
    "parload-version": run_version,
    "parload": run_parload,
    "copyfloor": run_copyfloor,
    "copyfloor-whole": run_copyfloor,
    "dd": run_dd,
    "fio": run_fio,
    "numpy": run_numpy,
    "npselect": run_npselect,
    "selcopy": run_selcopy,
    "pyload": run_pyload,
    "pyimport": run_pyimport,
}


def evict(tools, stream):
    """Drop the file from the page cache; (resident, total) pages after."""
    r = subprocess.run([tools.evict, stream.path], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise BenchError("evict failed: %s" % r.stderr.strip())
    resident, total = (int(x) for x in r.stdout.split()[:2])
    return resident, total
