"""One measurement: a program run in a fresh process, reaped with wait4
for its wall time and peak resident size, and the check of what it loaded
before its time counts."""
import json
import os
import re
import subprocess
import tempfile
import time

from . import HERE, MIB, BenchError


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
    if p.cache:
        cmd += ["--cache", p.cache]
    if p.select:
        cmd += p.select.flags
    if p.verify and getattr(stream, "seed_checks", True):
        cmd += ["--verify-seed", str(stream.seed)]
    return cmd + stream.layout_flags() + stream.operands()


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
            ("--verify-seed" in cmd and d.get("verified") is not True):
        raise BenchError("%s: load not verified: %s" % (" ".join(cmd), d))
    m = result(float(d["seconds"]), proc, d.get("read_calls"),
               d.get("bytes_read"))
    m["cache_used"] = d.get("cache")
    return m


def check_by_extract(tools, p, stream):
    """A load that --verify-seed cannot check (mono12p keeps 12 of the
    generator's 16 bits; a corrected load refuses it): the same command's
    options, untimed, through `parload extract` to a .npy file that
    bench/rawfiles.py compares with the generator's pixels as the layout
    holds them (or the stream's extract_check command with the formula's
    reference: experiment 16)."""
    cmd = parload_command(tools, p, stream)[2:]  # less parload --json
    with tempfile.TemporaryDirectory(
            dir=os.path.dirname(stream.path)) as tmp:
        npy = os.path.join(tmp, "check.npy")
        run_checked([tools.parload, "extract", "-o", npy] + cmd,
                    "parload extract (the check of %s)" % p.label())
        check = stream.extract_check(tools, npy, p.select) if hasattr(
            stream, "extract_check") else [
            tools.numpy, os.path.join(HERE, "rawfiles.py"), "check",
            stream.kind, npy, str(stream.seed), str(stream.views)]
        run_checked(check,
                    "the check of %s" % p.label())


def run_npraw(tools, p, stream):
    """bench/nprawload.py: NumPy's load of a mono12p file or of a folder
    of frames, checked against the generator."""
    cmd = [tools.numpy, os.path.join(HERE, "nprawload.py"), stream.kind,
           str(stream.seed), str(stream.views), str(stream.height),
           str(stream.width)] + stream.operands()
    r, proc = run_checked(cmd, "numpy's %s load" % stream.kind)
    d = last_json(r.stdout)
    if d.get("verified") is not True or d.get("views") != stream.views or \
            d.get("out_bytes") != stream.views * stream.payload:
        raise BenchError("numpy's %s load not verified: %s" % (
            stream.kind, d))
    return result(float(d["seconds"]), proc, None, None)


def run_copyfloor(tools, p, stream):
    """bench/copyfloor (--whole for copyfloor-whole) or bench/freshfloor
    (--sinograms for sinofloor, the stream's geometry; --map too for
    sinofloor-map): its reported time, after it read every byte of the
    file."""
    fresh = p.tool in ("freshfloor", "sinofloor", "sinofloor-map")
    prog = tools.freshfloor if fresh else tools.copyfloor
    cmd = [prog, "--threads", str(p.threads)]
    if p.tool == "copyfloor-whole":
        cmd.append("--whole")
    if p.tool in ("sinofloor", "sinofloor-map"):
        cmd += ["--sinograms", "64,32,%d,%d" % (
            stream.height, stream.width * stream.bpp)]
    if p.tool == "sinofloor-map":
        cmd.append("--map")
    return run_floor(p, stream, cmd)


def run_floor(p, stream, cmd):
    """A floor's command on the stream's file: its reported time, after
    it read every byte of the file."""
    r, proc = run_checked(cmd + [stream.path], None)
    d = last_json(r.stdout)
    if d.get("bytes") != stream.size or d.get("verified") is not True:
        raise BenchError("%s read %s of %d bytes" %
                         (p.label(), d.get("bytes"), stream.size))
    return result(float(d["seconds"]), proc, None, d["bytes"])


def run_uringfloor(tools, p, stream):
    """bench/uringfloor (--direct for uringfloor-direct): its reported
    time, after it read every byte of the file."""
    return run_floor(p, stream, [
        tools.uringfloor, "--threads", str(p.threads), "--depth",
        str(p.depth)] + (["--direct"] if p.tool == "uringfloor-direct"
                         else []))


def run_dd(tools, p, stream):
    """dd bs=1M, or (dd-direct) iflag=direct bs=8M, to /dev/null."""
    env = dict(os.environ, LC_ALL="C")
    cmd = [tools.dd, "if=" + stream.path, "of=/dev/null"] + (
        ["iflag=direct", "bs=8M"] if p.tool == "dd-direct" else ["bs=1M"])
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


def run_fio_direct(tools, p, stream):
    """fio --direct=1 --rw=read --ioengine=psync with p.threads jobs, each
    its contiguous 1/jobs of the file (whole 1 MiB blocks): the time is
    the slowest job's run time (fio's group runtime, in ms), scaled to
    the whole file."""
    jobs = p.threads
    part = stream.size // jobs // MIB * MIB
    if part == 0:
        raise BenchError("fio-direct: %s is too small for %d jobs" % (
            stream.path, jobs))
    cmd = [tools.fio, "--name=directread", "--filename=" + stream.path,
           "--readonly", "--rw=read", "--bs=1M", "--ioengine=psync",
           "--direct=1", "--numjobs=%d" % jobs, "--size=%d" % part,
           "--offset_increment=%d" % part, "--group_reporting",
           "--invalidate=0", "--output-format=json"]
    r, proc = run_checked(cmd, "fio --direct=1")
    rd = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["read"]
    if rd["io_bytes"] != part * jobs:
        raise BenchError("fio --direct=1 read %d of %d bytes" % (
            rd["io_bytes"], part * jobs))
    secs = rd["runtime"] * 1e-3 * stream.size / rd["io_bytes"]
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
    m = result(float(d["seconds"]), proc, None, None)
    # The library's own time of the same load, in the same process.
    m["load_seconds"] = d.get("load_seconds")
    return m


def run_pyimport(tools, p, stream):
    cmd = [tools.numpy, os.path.join(HERE, "pyload.py"), "--import"]
    r, proc = run_checked(cmd, "import parload", tools.pyenv)
    d = last_json(r.stdout)
    if d.get("verified") is not True:
        raise BenchError("import parload: no parload.load: %s" % d)
    return result(float(d["seconds"]), proc, None, None)


def run_batches(tools, p, stream):
    """bench/batches: a load delivered in batches, every view checked
    against the generator; or, compute_only, the compute alone."""
    if p.compute_only:
        cmd = [tools.batches, "--compute-only", str(p.compute_batches),
               "--compute-us", str(p.compute_us)]
    else:
        cmd = [tools.batches, "--threads", str(p.threads), "--seed",
               str(stream.seed)]
        if p.window:
            cmd += ["--window", str(p.window)]
        if p.compute_us:
            cmd += ["--compute-us", str(p.compute_us)]
        if p.busy:
            cmd.append("--busy")
        cmd.append(stream.path)
    r, proc = run_checked(cmd, None)
    d = last_json(r.stdout)
    if d.get("verified") is not True or not p.compute_only and (
            d.get("views") != stream.views or d.get("bytes") != stream.size):
        raise BenchError("%s: batches not verified: %s" % (" ".join(cmd), d))
    m = result(float(d["seconds"]), proc)
    for k in ("first_batch_seconds", "batches", "compute_seconds",
              "verify_seconds", "cpu_seconds"):
        m[k] = d.get(k)
    return m


# Each launcher run is killed after this long: a rank that hangs fails the
# bench instead of stopping it.
MPI_TIMEOUT = 120


def check_mpi(cmd, p, stream, d):
    """parload-mpi's JSON: p.ranks ranks whose parts cover the file once
    (views split: contiguous view ranges, each rank's payloads checked
    against their CRCs; rows split: contiguous row slabs of every view)."""
    ranks = d.get("per_rank") or []
    axis, total = (("view", stream.views) if p.split == "views" else
                   ("row", stream.height))
    at, ok = 0, d.get("ranks") == p.ranks == len(ranks) and \
        d.get("bad_views") == 0
    pixels = 0
    for x in ranks:
        # Each rank holds its views' headers and their rows' pixels.
        part = x["views"] * x["rows"] * stream.width * stream.bpp
        ok = ok and x["%s_begin" % axis] == at and \
            x["threads"] == p.threads and \
            x["bytes"] == x["views"] * 32 + part
        pixels += part
        at = x["%s_end" % axis]
        if "--verify" in p.extra:
            ok = ok and x["crc_checked"] == x["views"]
    if not ok or at != total or pixels != stream.views * stream.payload:
        raise BenchError("%s: the ranks' parts do not cover the file once, "
                         "checked: %s" % (" ".join(cmd), d))


def run_mpi(tools, p, stream):
    """parload-mpi under the launcher: seconds is the slowest rank's load
    (from opening the file until its part is complete, as parload's);
    call_seconds the slowest rank's whole parload_mpi_load (communicator,
    header broadcast, loader, load); rank_seconds each rank's load."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        # Open MPI refuses root unless told; the launcher's child only.
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [tools.timeout, "-k", "5", str(MPI_TIMEOUT), tools.mpiexec] + \
        tools.mpi_flags + ["-n", str(p.ranks), tools.parload_mpi, "--json",
                           "--threads", str(p.threads), "--split", p.split] + \
        list(p.extra) + [stream.path]
    r, proc = run_checked(cmd, "mpirun -n %d parload-mpi" % p.ranks, env)
    d = last_json(r.stdout)
    check_mpi(cmd, p, stream, d)
    m = result(max(x["load_seconds"] for x in d["per_rank"]), proc,
               None, sum(x["bytes_read"] for x in d["per_rank"]))
    m["call_seconds"] = float(d["seconds"])
    m["rank_seconds"] = [x["load_seconds"] for x in d["per_rank"]]
    return m


RUNNERS = {
    "parload-version": run_version,
    "parload": run_parload,
    "copyfloor": run_copyfloor,
    "copyfloor-whole": run_copyfloor,
    "freshfloor": run_copyfloor,
    "sinofloor": run_copyfloor,
    "sinofloor-map": run_copyfloor,
    "uringfloor": run_uringfloor,
    "uringfloor-direct": run_uringfloor,
    "dd": run_dd,
    "dd-direct": run_dd,
    "fio": run_fio,
    "fio-direct": run_fio_direct,
    "numpy": run_numpy,
    "npselect": run_npselect,
    "selcopy": run_selcopy,
    "pyload": run_pyload,
    "pyimport": run_pyimport,
    "batches": run_batches,
    "npraw": run_npraw,
    "parload-mpi": run_mpi,
}

# Experiment 16's bench/corrload.py (correct.py imports this module's
# helpers when it runs).
from .correct import run_corrload  # noqa: E402
RUNNERS["corrload"] = run_corrload


def evict_pages(tools, paths, count_only=False):
    """bench/evict over the files at paths: dropped from the page cache
    (count_only: left as they are); (resident, total) pages after, summed
    (mincore)."""
    r = subprocess.run([tools.evict] + (["--count"] if count_only else []) +
                       list(paths), capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError("evict failed: %s" % r.stderr.strip())
    counts = [line.split()[:2] for line in r.stdout.splitlines()]
    return (sum(int(a) for a, _ in counts), sum(int(b) for _, b in counts))


def evict(tools, stream):
    """Drop the file from the page cache; (resident, total) pages after."""
    return evict_pages(tools, [stream.path])


def resident_pages(tools, paths):
    """(resident, total) pages of the files at paths, summed."""
    return evict_pages(tools, paths, count_only=True)


def cached_share(tools, stream):
    """The share of the file's pages in the page cache now (mincore), in
    [0, 1]."""
    resident, total = resident_pages(tools, [stream.path])
    return resident / total if total else 0.0
