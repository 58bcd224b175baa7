#!/usr/bin/env python3
"""check_tree.py - the rules of the source tree that docs/ARCHITECTURE.md
states, checked against the code, so that the page stays true:

  layers    every file of src/ lies in a layer folder the page's table
            lists; it includes its own folder's header (or one beside it)
            and no header of a layer above; it calls no function defined
            in a layer above.
  paths     every file the page names exists.
  seam      every system call of src/ goes through a parload__sys_x name
            (src/base/sys.h), but for the calls SEAM_ALLOWED lists, each
            with its reason.
  sizes     in every folder of code, the median function is at most 15
            lines and none is over 60; no library file is over 1,000.

Each check prints what breaks its rule, naming file and line; the exit
status is 1 when one does.  Run by `make check` (srcdir from the
environment); standard library only.
"""
import os
import re
import statistics
import sys

TOP = os.environ.get("srcdir", os.path.join(os.path.dirname(__file__), ".."))
ARCH = "docs/ARCHITECTURE.md"  # relative to TOP, as every path here

# System calls made without the seam, and why each may be.  A call listed
# here that the code no longer makes is an error too (the list stays true).
SEAM_ALLOWED = {
    ("src/base/errors.c", "getrlimit"):
        "the limit on open files, to word an EMFILE message",
    ("src/model/dataset.c", "getrlimit"):
        "RLIMIT_AS and RLIMIT_DATA, to refuse a dataset the process may "
        "not map",
    ("src/model/dataset.c", "munmap"):
        "letting go of a mapping on the way out, whose failure changes "
        "nothing",
    ("src/engine/pool.c", "pthread_mutex_lock"):
        "locks and waits on a mutex the pool made through the seam",
    ("src/engine/pool.c", "pthread_cond_wait"): "as above",
    ("src/engine/pool.c", "clock_gettime"): "the monotonic clock",
    ("src/load/stream.c", "pthread_mutex_lock"):
        "locks and waits on a mutex the stream made through the seam",
    ("src/load/stream.c", "pthread_cond_wait"): "as above",
    ("src/formats/hdf5/hdf5_lib.h", "pthread_mutex_lock"):
        "the lock around libhdf5, a static mutex",
    ("src/formats/hdf5/hdf5.c", "H5Fopen"):
        "libhdf5's own opens, which the module wraps",
    ("src/formats/hdf5/hdf5_layout.c", "H5Fopen"): "as above",
    ("src/formats/hdf5/hdf5_parts.c", "H5Fopen"): "as above",
    ("src/formats/tiff/tiff_libtiff.c", "TIFFOpen"):
        "libtiff's own open, which the module wraps",
    ("src/engine/topology.c", "sysconf"): "the number of CPUs online",
    ("src/engine/engine.c", "sched_getaffinity"):
        "the CPUs the process may run on",
    ("src/engine/engine.c", "open"):
        "reading a cgroup's cpu.max: a failure means no quota",
    ("src/engine/engine.c", "access"): "as above",
    ("src/engine/engine.c", "read"): "as above",
    ("src/engine/engine.c", "close"): "as above",
    ("src/formats/module.c", "access"):
        "whether a module file exists before dlopen",
    ("src/formats/module.c", "dlopen"): "the modules, opened on first use",
    ("src/formats/module.c", "dlsym"): "as above",
    ("src/formats/driver.c", "opendir"):
        "whether a folder holds TIFF files",
    ("src/formats/driver.c", "readdir"): "as above",
    ("src/formats/driver.c", "closedir"): "as above",
    ("src/formats/zarr/zarr_meta.c", "opendir"):
        "naming a Zarr group's arrays in a message",
    ("src/formats/zarr/zarr_meta.c", "readdir"): "as above",
    ("src/formats/zarr/zarr_meta.c", "closedir"): "as above",
    ("src/formats/nrrd/nrrd_files.c", "realpath"):
        "resolving a data file's name for the confinement rule",
    ("src/formats/nrrd/nrrd_write.c", "realpath"): "as above",
    ("src/formats/nrrd/nrrd_write.c", "unlink"):
        "removing the temporary header after a failure",
    ("src/formats/hdf5/hdf5_write.c", "unlink"):
        "removing a temporary file after a failure",
    ("src/formats/tiff/tiff.c", "opendir"): "listing a TIFF folder",
    ("src/formats/tiff/tiff.c", "readdir"): "as above",
    ("src/formats/tiff/tiff.c", "closedir"): "as above",
    ("src/formats/container.c", "glob"):
        "a glob pattern of a list of files (TIFF, HDF5)",
    ("src/io/cache.c", "mmap"):
        "auto's mincore sample of a file: a failure means unknown",
    ("src/io/cache.c", "mincore"): "as above",
    ("src/io/cache.c", "munmap"): "as above",
    ("src/io/cache.c", "nanosleep"): "the dropper's pause",
    ("src/io/cache.c", "posix_fadvise"):
        "advice: a failure leaves pages cached, never wrong data",
    ("src/io/cache.c", "open"):
        "reading a device's read_ahead_kb from sysfs: a failure means "
        "unknown",
    ("src/io/cache.c", "read"): "as above",
    ("src/io/cache.c", "close"): "as above",
    ("src/io/cache.c", "fstat"): "as above",
    ("src/io/files.c", "nanosleep"): "a followed file's nap",
    ("src/io/files.c", "realpath"): "the confinement rule",
    ("src/io/tempfile.c", "clock_gettime"): "a temporary name's salt",
    ("src/io/tempfile.c", "link"):
        "placing a temporary file without replacing an existing one",
    ("src/io/tempfile.c", "unlink"): "as above",
    ("src/io/io.c", "clock_gettime"): "parload__now, the monotonic clock",
}
# Calls the seam does not wrap and that the check looks for beyond
# sys.h's names.
SEAM_EXTRA = ["openat", "unlink", "link", "realpath", "mkstemp", "fsync",
              "ftruncate", "pwrite", "fwrite", "dlopen", "dlsym",
              "readlink", "access", "nanosleep", "posix_memalign",
              "realloc", "opendir", "readdir", "closedir", "glob", "statfs",
              "fstatfs", "sysconf", "sched_getaffinity", "getrlimit",
              "clock_gettime", "syscall", "ioctl", "fdatasync",
              "pthread_mutex_lock", "pthread_cond_wait", "H5Fopen",
              "TIFFOpen"]

# The folders of code whose functions the size rule covers.
CODE = ["src", "cli", "mpi", "python/parload"]
FN_MEDIAN, FN_MAX, FILE_MAX = 15, 60, 1000
# Functions over FN_MAX lines that are still to be split (empty when the
# rule holds everywhere).
FN_ALLOWED = set()

failures = []


def fail(msg):
    failures.append(msg)


def read(path):
    with open(os.path.join(TOP, path), encoding="utf-8",
              errors="replace") as f:
        return f.read()


def uncomment(text):
    """Comments and strings blanked, lines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def files_under(folder, exts):
    out = []
    for dp, dn, fn in os.walk(os.path.join(TOP, folder)):
        dn.sort()
        for f in sorted(fn):
            if f.endswith(exts):
                out.append(os.path.relpath(os.path.join(dp, f), TOP))
    return out


def layer_table():
    """floor by folder, from the page's table of layers."""
    floors = {}
    for m in re.finditer(r"^\| (\d+) \| `src/(\w+)/` \|", read(ARCH), re.M):
        floors[m.group(2)] = int(m.group(1))
    if not floors:
        fail(f"{ARCH}: no table of layers found")
    return floors


def layer_of(path, floors):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[1] in floors else None


def check_layers(floors):
    sources = [p for p in files_under("src", (".c", ".h"))
               if p != "src/internal.h"]
    defs, texts = {}, {}
    for p in sources:
        if not layer_of(p, floors):
            fail(f"{p}: not in a layer folder of the table")
            continue
        texts[p] = uncomment(read(p))
        # module_host.c is a module's side of the host table: it defines
        # the library's names again for the module, calling nothing.
        if p.endswith(".c") and not p.endswith("module_host.c"):
            for m in re.finditer(r"^(?:[a-z][^;(]*?[\s*])?(parload_\w+)\s*\(",
                                 texts[p], re.M):
                defs.setdefault(m.group(1), p)
    for p, text in texts.items():
        mine = layer_of(p, floors)
        for n, line in enumerate(read(p).split("\n"), 1):
            m = re.match(r'#include "([^"]+)"', line)
            if not m or m.group(1) == "config.h":
                continue
            inc = m.group(1)
            target = inc if inc.startswith(("base/", "model/", "io/",
                                            "codec/", "engine/", "formats/",
                                            "load/")) else None
            if inc == "internal.h":
                fail(f"{p}:{n}: includes internal.h (the tests' header)")
            elif target:
                layer = target.split("/")[0]
                if layer not in floors:
                    fail(f"{p}:{n}: includes {inc}, not a layer's header")
                elif floors[layer] > floors[mine]:
                    fail(f"{p}:{n}: includes {inc}, a layer above "
                         f"{mine}")
        if not p.endswith(".c"):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for name in re.findall(r"\b(parload_\w+)\s*\(", line):
                d = None if name.startswith("parload__sys_") else \
                    defs.get(name)
                if d and d != p and \
                   floors[layer_of(d, floors)] > floors[mine]:
                    fail(f"{p}:{n}: calls {name} of {d}, a layer above "
                         f"{mine}")


def check_paths():
    # A release tarball carries what it builds and tests, not every file
    # of the repository the page may name: the check is a checkout's.
    if not os.path.exists(os.path.join(TOP, ".git")):
        print("check_tree: paths not checked outside a git checkout")
        return
    known = set()
    for dp, dn, fn in os.walk(TOP):
        dn[:] = [d for d in dn if not d.startswith(".")]
        for f in fn:
            known.add(f)
    text = read(ARCH)
    for n, line in enumerate(text.split("\n"), 1):
        for tok in re.findall(r"`([^`\s]+)`", line):
            tok = tok.rstrip(",.;:")
            if not re.search(r"\.(c|h|py|md|sh|3|1|in|ac|am)$", tok):
                continue
            if "*" in tok or re.search(r"[A-Z]{3,}", tok):
                continue  # a pattern: cmd_NAME.c, src/LAYER/LAYER.h
            if "/" in tok:
                path = tok[:-1] if tok.endswith("/") else tok
                ok = any(os.path.exists(os.path.join(TOP, base, path))
                         for base in ("", "src"))
            else:
                ok = tok in known
            if not ok:
                fail(f"docs/ARCHITECTURE.md:{n}: names {tok}, which does "
                     f"not exist")


def check_seam():
    names = sorted(set(re.findall(r"parload__sys_(\w+)",
                                  read("src/base/sys.h"))) - {"x"})
    call = re.compile(r"(?<![\w.>])(" + "|".join(names + SEAM_EXTRA) +
                      r")\s*\(")
    seen = set()
    for p in files_under("src", (".c", ".h")):
        if p.endswith("sys.h"):
            continue  # the seam itself
        for n, line in enumerate(uncomment(read(p)).split("\n"), 1):
            for m in call.finditer(line):
                key = (p, m.group(1))
                seen.add(key)
                if key not in SEAM_ALLOWED:
                    fail(f"{p}:{n}: calls {m.group(1)}() without the "
                         f"seam (parload__sys_{m.group(1)}, or list it "
                         f"in SEAM_ALLOWED with why)")
    for key in sorted(set(SEAM_ALLOWED) - seen):
        fail(f"SEAM_ALLOWED lists {key[1]}() in {key[0]}, which no "
             f"longer calls it")


def functions(path):
    """(name, lines, first line) of each function: from its signature's
    first line to its closing brace, the body's braces at column 0."""
    lines = read(path).split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i] == "{":
            j = i - 1
            while j > 0 and lines[j] and (lines[j][0] in " \t" or
                                          lines[j].startswith(")")):
                j -= 1
            sig = " ".join(x.strip() for x in lines[j:i])
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            m = re.search(r"(\w+)\s*\(", sig)
            if m and "=" not in sig.split("(")[0]:
                out.append((m.group(1), k - j + 1, j + 1))
            i = k
        i += 1
    return out


def check_sizes():
    for root in CODE:
        folders = {}
        for p in files_under(root, (".c",)):
            # A layer of src/ is one folder, its sub-folders with it.
            folder = "/".join(p.split("/")[:2]) if root == "src" else root
            folders.setdefault(folder, []).append(p)
            if root == "src" and len(read(p).split("\n")) > FILE_MAX:
                fail(f"{p}: over {FILE_MAX} lines")
        for folder, paths in sorted(folders.items()):
            fns = [(p, *f) for p in paths for f in functions(p)]
            if not fns:
                continue
            med = statistics.median(f[2] for f in fns)
            if med > FN_MEDIAN:
                fail(f"{folder}: median function {med} lines, over "
                     f"{FN_MEDIAN}")
            for p, name, size, line in fns:
                if size > FN_MAX and (p, name) not in FN_ALLOWED:
                    fail(f"{p}:{line}: {name} is {size} lines, over "
                         f"{FN_MAX}")


def main():
    floors = layer_table()
    check_layers(floors)
    check_paths()
    check_seam()
    check_sizes()
    for f in failures:
        print(f)
    print(f"check_tree: {len(failures)} rule(s) broken" if failures else
          "check_tree: layers, paths, seam and sizes hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
