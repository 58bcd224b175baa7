#!/usr/bin/env python3
"""docs_check.py - the README and the guide (docs/*.md) as a reader meets
them:

  links     every Markdown link of README.md and docs/*.md resolves: a
            relative file exists, and an #anchor is a heading of its page
            as a code host renders it (GitHub's rule: lower case, every
            character but letters, digits, '-', '_' and spaces dropped,
            spaces made '-', a repeated one suffixed -1, -2, ...).
            Links to other sites are not fetched.
  examples  each example under README's "## Examples" runs, in a fresh
            folder holding the files it names, written here: scan.h5 (a
            DXchange file, h5py), scan_master.h5 (an Eiger master file
            linking two data files of bitshuffle + LZ4 chunks, h5py and
            hdf5plugin), frames/ (a folder of TIFFs, tifffile),
            tomo.zarr and image.ome.zarr (a Zarr store and an OME-Zarr
            image, zarr-python) and
            scan.edf (a raw dump, 512 bytes of text before each frame).  The command lines run with the build tree's parload
            and must exit 0, each output they write readable (NumPy,
            tifffile, Pillow) and of 32 sinograms where they ask for
            --rows 100:132 --layout sinograms; the Python blocks run with
            a stand-in for tomopy.recon that checks what it is handed
            (float32 or the scan's type, (rows, views, cols), one angle a
            view, sinogram_order); the C block is compiled against the
            build tree's libparload and run on scan.h5.  The set-up
            commands (./bootstrap.sh, pip install .) are CI's own steps
            (.ci/run), not run here.

An example that needs what this machine lacks (h5py, tifffile, the Python
module, a C compiler) is skipped saying so; with every example skipped
the status is 77.  Run by `make check` (PARLOAD_SRCDIR, PARLOAD_BUILDDIR,
PARLOAD_BIN, PARLOAD_PYTHON from its environment).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# The interpreter the Python module was built for, which has NumPy,
# h5py and tifffile (the first python3 on PATH may be another).
PY = os.environ.get("PARLOAD_PYTHON") or ""
SANITIZERS = os.environ.get("PARLOAD_SANITIZER_FLAGS", "")
# An AddressSanitizer build's Python module needs the ASan runtime loaded
# first, as python/tests/run.sh loads it (leak checks off: the
# interpreter keeps memory until exit by design); under ThreadSanitizer
# the interpreter cannot load the module at all, and the Python examples
# are skipped.
if "address" in SANITIZERS and not os.environ.get("DOCS_CHECK_REEXEC"):
    asan = subprocess.run(
        [os.environ.get("PARLOAD_CC") or "cc", "-print-file-name=libasan.so"],
        capture_output=True, text=True).stdout.strip()
    pre = os.environ.get("LD_PRELOAD")
    os.environ["LD_PRELOAD"] = asan + (":" + pre if pre else "")
    opts = os.environ.get("ASAN_OPTIONS")
    os.environ["ASAN_OPTIONS"] = "detect_leaks=0" + (":" + opts if opts
                                                      else "")
if (PY and os.path.realpath(PY) != os.path.realpath(sys.executable) or
        "address" in SANITIZERS) and not os.environ.get("DOCS_CHECK_REEXEC"):
    os.environ["DOCS_CHECK_REEXEC"] = "1"
    os.execv(PY or sys.executable, [PY or sys.executable] + sys.argv)

TOP = os.environ.get("PARLOAD_SRCDIR") or \
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BUILD = os.environ.get("PARLOAD_BUILDDIR") or TOP
BIN = os.environ.get("PARLOAD_BIN") or os.path.join(BUILD, "src", "parload")

failures = []
skips = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def skip(msg):
    skips.append(msg)
    print("SKIP: " + msg)


# ---------------------------------------------------------------------
# Markdown as a code host reads it
# ---------------------------------------------------------------------

def prose_lines(text):
    """(line number, line) of the text outside fenced and indented code
    blocks, with inline code spans blanked."""
    fence = False
    prev_blank = True
    in_indented = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        blank = not line.strip()
        if line.startswith("    ") and (prev_blank or in_indented) \
                and not blank:
            in_indented = True
            continue
        if not blank:
            in_indented = False
        prev_blank = blank
        yield n, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def paragraphs(lines):
    """(first line number, text) of each run of lines without a blank or a
    code block between them, joined by spaces: a link's text may wrap."""
    start, cur, last = None, [], None
    for n, line in lines:
        if not line.strip() or (last is not None and n != last + 1):
            if cur:
                yield start, " ".join(cur)
            start, cur = None, []
        if line.strip():
            start = n if start is None else start
            cur.append(line.strip())
        last = n
    if cur:
        yield start, " ".join(cur)


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^#{1,6} +(.*?) *#*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def check_links(pages):
    count = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        here = os.path.dirname(page)
        for n, line in paragraphs(prose_lines(text)):
            for m in LINK.finditer(line):
                target = m.group(1)
                where = "%s:%d: %s" % (os.path.relpath(page, TOP), n, target)
                count += 1
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # another site, or mailto:
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(here, path)) if path \
                    else page
                if not os.path.exists(dest):
                    fail("%s: no such file" % where)
                    continue
                if frag and dest.endswith(".md") and \
                        frag not in anchors(dest):
                    fail("%s: %s has no heading #%s" %
                         (where, os.path.relpath(dest, TOP), frag))
                elif frag and not dest.endswith(".md"):
                    fail("%s: an anchor into a file that is not Markdown"
                         % where)
    print("links: %d checked in %d pages" % (count, len(pages)))


# ---------------------------------------------------------------------
# README's examples
# ---------------------------------------------------------------------

def examples_section(text):
    m = re.search(r"^## Examples\n(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        fail("README.md has no '## Examples' section")
        return ""
    return m.group(1)


def blocks(section):
    """("sh", [command lines]), ("python", code), ("c", code), in order."""
    out = []
    lines = section.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^```(\w+)", line)
        if m:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.append((m.group(1), "\n".join(lines[i + 1:j]) + "\n"))
            i = j + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            cmds, cur = [], ""
            while i < len(lines) and lines[i].startswith("    "):
                part = lines[i][4:]
                cur += part[:-1] + " " if part.endswith("\\") else part
                if not part.endswith("\\"):
                    cmds.append(cur)
                    cur = ""
                i += 1
            out.append(("sh", cmds))
            continue
        i += 1
    return out


def write_files(d, have):
    import numpy as np
    rng = np.random.default_rng(49)
    data = {}
    if "h5py" in have:
        import h5py
        px = rng.integers(1000, 4000, (24, 140, 180)).astype(np.uint16)
        with h5py.File(os.path.join(d, "scan.h5"), "w") as f:
            f["/exchange/data"] = px
            f["/exchange/data_white"] = np.full((3, 140, 180), 5000,
                                                np.uint16)
            f["/exchange/data_dark"] = np.full((2, 140, 180), 100, np.uint16)
            f["/exchange/theta"] = np.linspace(0, 180, 24, endpoint=False)
        data["scan.h5"] = px
    if "h5py" in have and "hdf5plugin" in have:
        data["scan_master.h5"] = write_master(d, rng)
    if "tifffile" in have:
        import tifffile
        px = rng.integers(0, 65535, (24, 140, 180)).astype(np.uint16)
        os.mkdir(os.path.join(d, "frames"))
        for k in range(len(px)):
            tifffile.imwrite(os.path.join(d, "frames", "proj_%d.tif" % k),
                             px[k])
        data["frames/"] = px
    if "zarr" in have:
        data["tomo.zarr"] = write_zarr(d, rng)
    px = rng.integers(0, 65535, (12, 480, 640)).astype("<u2")
    with open(os.path.join(d, "scan.edf"), "wb") as f:
        for k in range(len(px)):
            head = ("{ HeaderID = EH:%06d ; Image = %d ; }" % (k, k)).encode()
            f.write(head.ljust(512, b" "))
            f.write(px[k].tobytes())
    data["scan.edf"] = px
    return data


def write_master(d, rng):
    """An Eiger master file (NXmx): /entry/data/data_00000K external links
    to two data files of 12 frames of bitshuffle + LZ4 chunks, one frame
    each, and the sample's omega, in degrees."""
    import h5py
    import hdf5plugin
    import numpy as np
    px = rng.integers(0, 40, (24, 140, 180)).astype(np.uint16)
    for k in (1, 2):
        with h5py.File(os.path.join(d, "scan_data_%06d.h5" % k), "w") as f:
            f.create_dataset("entry/data/data", data=px[12 * (k - 1):12 * k],
                             chunks=(1, 140, 180),
                             **hdf5plugin.Bitshuffle(cname="lz4"))
    with h5py.File(os.path.join(d, "scan_master.h5"), "w") as f:
        entry = f.create_group("entry")
        entry.attrs["NX_class"] = "NXentry"
        g = entry.create_group("data")
        g.attrs["NX_class"] = "NXdata"
        for k in (1, 2):
            g["data_%06d" % k] = h5py.ExternalLink(
                "scan_data_%06d.h5" % k, "/entry/data/data")
        omega = entry.create_group("sample/goniometer")
        omega["omega"] = np.linspace(0, 180, 24, endpoint=False)
        omega["omega"].attrs["units"] = "deg"
    return px


def write_zarr(d, rng):
    """tomo.zarr, a Zarr v2 store of 24 frames (zarr-python's default
    Blosc chunks, 4 frames each) with its angles in degrees, and
    image.ome.zarr, an OME-Zarr image of two levels of (t, c, z, y, x)."""
    import numpy as np
    import zarr
    px = rng.integers(0, 4000, (24, 140, 180)).astype(np.uint16)
    z = zarr.open(os.path.join(d, "tomo.zarr"), mode="w", shape=px.shape,
                  chunks=(4, 140, 180), dtype=px.dtype)
    z[...] = px
    z.attrs["angles"] = np.linspace(0, 180, 24, endpoint=False).tolist()
    g = zarr.open_group(os.path.join(d, "image.ome.zarr"), mode="w")
    g.attrs["multiscales"] = [{"version": "0.4", "datasets": [
        {"path": "0"}, {"path": "1"}]}]
    g.create_dataset("0", data=px[None, None])
    g.create_dataset("1", data=px[None, None, :, ::2, ::2])
    return px


def needs(command_or_code, have):
    """What a block needs that this machine lacks, or None."""
    if "scan_master.h5" in command_or_code and \
            not {"h5py", "hdf5plugin"} <= have:
        return "h5py and hdf5plugin (python3-hdf5plugin) write its " \
            "scan_master.h5"
    if "scan.h5" in command_or_code and "h5py" not in have:
        return "h5py (python3-h5py) writes its scan.h5"
    if "frames/" in command_or_code and "tifffile" not in have:
        return "tifffile (python3-tifffile) writes its frames/"
    if ".zarr" in command_or_code and "zarr" not in have:
        return "zarr (python3-zarr) writes and reads its stores"
    return None


def check_output(path, cmd):
    import numpy as np
    store = path.endswith(".zarr") and os.path.isdir(path)
    if not store and (not os.path.isfile(path) or
                      os.path.getsize(path) == 0):
        fail("%s: wrote no %s" % (cmd, path))
        return
    if store:
        try:
            import zarr
        except ImportError:
            skip("%s: zarr (python3-zarr) reads its store" % cmd)
            return
        shape = zarr.open(path, mode="r").shape
    elif path.endswith(".npy"):
        shape = np.load(path).shape
    elif path.endswith(".tif"):
        import tifffile
        shape = tifffile.imread(path).shape
    elif path.endswith(".png"):
        from PIL import Image
        shape = Image.open(path).size
    else:
        shape = None
    if "--rows 100:132 --layout sinograms" in cmd and \
            (shape is None or shape[0] != 32):
        fail("%s: %s holds %s, not 32 sinograms" % (cmd, path, shape))


def run_sh(cmds, d, c_sources, have):
    for cmd in cmds:
        why = needs(cmd, have)
        if why:
            skip("%s: needs %s" % (cmd, why))
            continue
        words = shlex.split(cmd, comments=True)
        line = " ".join(shlex.quote(w) for w in words)
        if words[0] == "parload":
            line = shlex.quote(BIN) + line[len("parload"):]
        elif words[0] == "cc":
            # The build's compiler and sanitizer flags (make check's),
            # which an instrumented libparload needs to link.
            cc = os.environ.get("PARLOAD_CC") or "cc"
            if not shutil.which(cc.split()[0]):
                skip("%s: no C compiler" % cmd)
                continue
            line = cc + " " + os.environ.get("PARLOAD_SANITIZER_FLAGS", "") \
                + cmd[len("cc"):]
            line = line.replace(
                "$(pkg-config --cflags --libs parload)",
                "-I%s -L%s -lparload" % (
                    shlex.quote(os.path.join(TOP, "include")),
                    shlex.quote(os.path.join(BUILD, "src", ".libs"))))
            src = re.search(r"(\S+\.c)\b", cmd).group(1)
            with open(os.path.join(d, src), "w") as f:
                f.write(c_sources.pop(0))
        else:
            fail("README example %r: not a parload or cc command" % cmd)
            continue
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.path.join(BUILD, "src", ".libs") + \
            (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
             else "")
        r = subprocess.run(line, shell=True, cwd=d, capture_output=True,
                           text=True, env=env, timeout=300)
        print("$ " + cmd)
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            fail("%s: exit status %d: %s" % (cmd, r.returncode,
                                             r.stderr.strip()))
            continue
        if words[0] == "cc" and not re.search(
                r"^\d+ views of \d+ x \d+ [uif]\d+$", r.stdout, re.M):
            fail("%s: printed %r, not 'N views of W x H TYPE'" %
                 (cmd, r.stdout))
        for k, w in enumerate(words):
            if w == "-o" and k + 1 < len(words):
                check_output(os.path.join(d, words[k + 1]), cmd)


class FakeTomopy:
    """tomopy.recon's stand-in: checks what a reconstruction is handed."""

    def __init__(self, np):
        self.np = np
        self.calls = 0

    def recon(self, tomo, theta, center=None, sinogram_order=False,
              algorithm=None, **kw):
        np = self.np
        self.calls += 1
        assert isinstance(tomo, np.ndarray) and tomo.ndim == 3, tomo
        assert tomo.flags.c_contiguous
        assert sinogram_order, "sinograms handed as projections"
        assert len(theta) == tomo.shape[1], (len(theta), tomo.shape)
        assert np.all(np.asarray(theta) < 2 * np.pi + 1e-6), \
            "angles in degrees, not radians"
        return np.zeros((tomo.shape[0], tomo.shape[2], tomo.shape[2]),
                        np.float32)


def run_python(code, d, have):
    why = needs(code, have)
    if why:
        skip("a Python example: needs %s" % why)
        return
    if "parload" not in have:
        skip("a Python example: the Python module is not built "
             "(configure: %s)" % os.environ.get("PARLOAD_PYTHON_MODULE", "?"))
        return
    import numpy as np
    import types
    fake = FakeTomopy(np)
    mod = types.ModuleType("tomopy")
    mod.recon = fake.recon
    sys.modules["tomopy"] = mod
    here = os.getcwd()
    os.chdir(d)
    try:
        scope = {}
        exec(compile(code, "README.md (python example)", "exec"), scope)
        ds = scope.get("ds")
        assert ds is not None and ds.pixels.shape[0] == 32, \
            "ds is not 32 sinograms"
        assert fake.calls == 1, "tomopy.recon called %d times" % fake.calls
        print("python example: ds %s %s, handed on" %
              (ds.pixels.shape, ds.pixels.dtype))
    except Exception as e:  # the example's own failure, reported
        fail("a Python example failed: %r\n%s" % (e, code))
    finally:
        os.chdir(here)
        del sys.modules["tomopy"]


def check_examples(readme):
    have = set()
    for name in ("numpy", "h5py", "hdf5plugin", "tifffile", "PIL", "zarr",
                 "parload"):
        if name == "parload" and "thread" in SANITIZERS:
            skip("the Python module under ThreadSanitizer: the interpreter "
                 "is not built for it")
            continue
        try:
            __import__(name)
            have.add(name)
        except ImportError:
            skip("%s does not import here: the examples that need it are "
                 "skipped" % name)
    if "numpy" not in have:
        skip("the examples need NumPy (python3-numpy)")
        return 0
    if not os.access(BIN, os.X_OK):
        fail("no parload command at %s" % BIN)
        return 0
    with open(readme, encoding="utf-8") as f:
        found = blocks(examples_section(f.read()))
    c_sources = [code for kind, code in found if kind == "c"]
    d = tempfile.mkdtemp(prefix="docs_check.")
    ran = 0
    try:
        write_files(d, have)
        for kind, body in found:
            before = len(skips)
            if kind == "sh":
                run_sh(body, d, c_sources, have)
            elif kind == "python":
                run_python(body, d, have)
            elif kind != "c":
                fail("README example of an unknown kind: %s" % kind)
            ran += len(skips) == before
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if c_sources:
        fail("a C example that no 'cc' line compiles")
    kinds = sorted({k for k, _ in found})
    if kinds != ["c", "python", "sh"]:
        fail("README's examples are %s, not command lines, Python and C"
             % kinds)
    return ran


def main():
    pages = [os.path.join(TOP, "README.md")] + sorted(
        os.path.join(TOP, "docs", p) for p in os.listdir(
            os.path.join(TOP, "docs")) if p.endswith(".md"))
    check_links(pages)
    ran = check_examples(os.path.join(TOP, "README.md"))
    if failures:
        print("docs_check: %d failure(s)" % len(failures))
        return 1
    if ran == 0:
        print("docs_check: every README example skipped")
        return 77
    print("docs_check: links resolve; %d README example block(s) ran" % ran)
    return 0


if __name__ == "__main__":
    sys.exit(main())
