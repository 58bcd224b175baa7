"""The Python package's build (pyproject.toml, setuptools): parload with
its C extension parload._parload, and parload._parload_mpi when mpi4py and
an MPI compiler wrapper are found.

libparload is compiled from src/**/*.c (every C file there, found by glob)
into a static archive that is linked into the extension, so that the
package needs no installed libparload; hwloc and ISA-L stay the system's
shared libraries, and so do libtiff (TIFF) and libhdf5 with libdeflate
(HDF5) where pkg-config finds them: HAVE_TIFF and HAVE_HDF5 are defined
as configure's --with-tiff and --with-hdf5 (auto) would.  No configure runs: python/config/config.h stands in
for config.h and the version comes from the file VERSION, the one the
autotools build reads too.  README "Python" says how to build.
"""

import os
import shlex
import shutil
import subprocess
import sys
from glob import glob

import numpy
from setuptools import Extension, setup

VERSION = open("VERSION", encoding="ascii").read().strip()

# Every compile of the library: C11, threads, internal names hidden.
LIB_CFLAGS = ["-std=gnu11", "-pthread", "-fvisibility=hidden"]
LIB_MACROS = [("PACKAGE_VERSION", '"%s"' % VERSION)]
LIB_INCLUDES = ["python/config", "include", "src"]
# The extensions, as Makefile.am builds them; --exclude-libs keeps the
# static archives' symbols out of the modules' symbol tables.
EXT_CFLAGS = ["-std=gnu11", "-pthread", "-fvisibility=hidden",
              "-Wno-missing-field-initializers", "-Wno-cast-function-type"]
EXT_LDFLAGS = ["-pthread", "-Wl,--exclude-libs,ALL"]
NUMPY_MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]


def say(msg):
    print("parload setup.py: " + msg, file=sys.stderr)


def flags_of(words):
    """(include_dirs, library_dirs, libraries, other words) of cc flags."""
    out = ([], [], [], [])
    for w in words:
        for i, prefix in enumerate(("-I", "-L", "-l")):
            if w.startswith(prefix):
                out[i].append(w[2:])
                break
        else:
            out[3].append(w)
    return out


def pkg_config(*modules):
    """Flags of pkg-config modules, or plain -l names without pkg-config."""
    try:
        res = subprocess.run(["pkg-config", "--cflags", "--libs", *modules],
                             capture_output=True, text=True, check=True)
        return flags_of(shlex.split(res.stdout))
    except (OSError, subprocess.CalledProcessError):
        say("pkg-config knows no %s: linking -lhwloc -lisal" %
            " ".join(modules))
        return [], [], ["hwloc", "isal"], []


def optional_libs():
    """(macros, include dirs, library dirs, libraries) of the optional
    container and codec libraries pkg-config finds: HAVE_TIFF with
    libtiff-4, HAVE_HDF5 with hdf5 and libdeflate, HAVE_PNG with libpng,
    HAVE_LZ4, HAVE_ZSTD, HAVE_BLOSC and HAVE_LZF with liblz4, libzstd,
    blosc and liblzf; HAVE_BZ2 with bzip2, or -lbz2 where its header is
    in /usr/include (Debian's libbz2-dev has no .pc)."""
    out = ([], [], [], [])
    for macro, modules in (("HAVE_TIFF", ("libtiff-4",)),
                           ("HAVE_HDF5", ("hdf5", "libdeflate")),
                           ("HAVE_PNG", ("libpng",)),
                           ("HAVE_LZ4", ("liblz4",)),
                           ("HAVE_ZSTD", ("libzstd",)),
                           ("HAVE_BLOSC", ("blosc",)),
                           ("HAVE_LZF", ("liblzf",)),
                           ("HAVE_BZ2", ("bzip2",))):
        try:
            res = subprocess.run(["pkg-config", "--cflags", "--libs",
                                  *modules], capture_output=True, text=True,
                                 check=True)
        except (OSError, subprocess.CalledProcessError):
            if macro == "HAVE_BZ2" and os.path.exists(
                    "/usr/include/bzlib.h"):
                out[0].append((macro, "1"))
                out[3].append("bz2")
                continue
            say("%s off: pkg-config knows no %s" % (macro,
                                                   " ".join(modules)))
            continue
        inc, libdirs, libs, _ = flags_of(shlex.split(res.stdout))
        out[0].append((macro, "1"))
        out[1].extend(inc)
        out[2].extend(libdirs)
        out[3].extend(libs)
    return out


def mpi_flags():
    """(compile words, link words) of the MPI compiler wrapper (MPICC or
    mpicc on PATH) with mpi4py's include directory, or None saying why."""
    try:
        import mpi4py
    except ImportError:
        say("parload.mpi not built: no mpi4py for %s" % sys.executable)
        return None
    mpicc = os.environ.get("MPICC") or shutil.which("mpicc")
    if not mpicc:
        say("parload.mpi not built: no MPI compiler wrapper (MPICC, mpicc)")
        return None
    # Open MPI answers --showme:*, MPICH -compile_info/-link_info with
    # whole command lines (first word the compiler).
    for ask, skip in ((("--showme:compile", "--showme:link"), 0),
                      (("-compile_info", "-link_info"), 1)):
        try:
            got = [shlex.split(subprocess.run(
                [mpicc, q], capture_output=True, text=True,
                check=True).stdout)[skip:] for q in ask]
        except (OSError, subprocess.CalledProcessError):
            continue
        cflags = [w for w in got[0] if w != "-c"]
        return cflags + ["-I" + mpi4py.get_include()], got[1]
    say("parload.mpi not built: %s tells no flags" % mpicc)
    return None


def numpy_requirement():
    """A module built against NumPy X.Y runs on X.Y and later of the same
    major version (NumPy 2 cannot import one built for 1.x)."""
    major, minor = (int(p) for p in numpy.__version__.split(".")[:2])
    return "numpy>=%d.%d,<%d" % (major, minor, major + 1)


def build():
    sysinc, syslibdirs, syslibs, _ = pkg_config("hwloc", "libisal")
    macros, optinc, optlibdirs, optlibs = optional_libs()
    # logf, for the -log of corrected loads (src/engine/correct.c).
    syslibs = syslibs + optlibs + ["m"]
    syslibdirs = syslibdirs + optlibdirs
    libs = [("parload_static", {
        # module_host.c is the modules' side of the host table: the
        # wheel links the TIFF and HDF5 code in, and has no modules.
        # cli/gen.c: the generator behind python -m parload
        # --verify-seed (Dataset._verify_seed).
        "sources": sorted(set(glob("src/**/*.c", recursive=True)) -
                          {"src/formats/module_host.c"}) + ["cli/gen.c"],
        "include_dirs": LIB_INCLUDES + sysinc + optinc,
        "macros": LIB_MACROS + macros,
        "cflags": LIB_CFLAGS})]
    py_sources = sorted(set(glob("python/parload/*.c")) -
                        {"python/parload/_parload_mpi.c"})
    exts = [Extension("parload._parload", py_sources,
                      include_dirs=["include", "cli", numpy.get_include()],
                      define_macros=NUMPY_MACROS,
                      libraries=["parload_static"] + syslibs,
                      library_dirs=syslibdirs,
                      extra_compile_args=EXT_CFLAGS,
                      extra_link_args=EXT_LDFLAGS)]
    mpi = mpi_flags()
    if mpi:
        minc, _, _, mother = flags_of(mpi[0])
        _, mlibdirs, mlibs, mlinkother = flags_of(mpi[1])
        # libparload-mpi: mpi/*.c but the command's mpi/cli.c.
        libs.insert(0, ("parload_mpi_static", {
            "sources": sorted(set(glob("mpi/*.c")) - {"mpi/cli.c"}),
            "include_dirs": LIB_INCLUDES + minc + sysinc,
            "macros": LIB_MACROS,
            "cflags": LIB_CFLAGS + mother}))
        exts.append(Extension(
            "parload._parload_mpi", ["python/parload/_parload_mpi.c"],
            include_dirs=["include", numpy.get_include()] + minc,
            define_macros=NUMPY_MACROS,
            libraries=["parload_mpi_static", "parload_static"] + mlibs +
            syslibs,
            library_dirs=mlibdirs + syslibdirs,
            extra_compile_args=EXT_CFLAGS + mother + ["-Wno-unused-function"],
            extra_link_args=EXT_LDFLAGS + mlinkother))
    setup(version=VERSION, libraries=libs, ext_modules=exts,
          install_requires=[numpy_requirement()])


build()
