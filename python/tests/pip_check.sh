#!/bin/sh
# pip_check.sh - the Python package installed the way Python users install
# packages (docs/python.md), from a clean clone of the committed tree:
#
#   1. pip install --no-build-isolation . into a fresh virtual environment
#      (--system-site-packages, for the system's NumPy and pytest); the
#      package's tests (python/tests) run against the installed package
#      from outside the tree, with no PYTHONPATH;
#   2. python -m build --wheel --no-isolation from another clean clone; the
#      wheel goes into a second fresh environment with no LD_LIBRARY_PATH
#      and no libparload among its modules' libraries, and loads a file it
#      writes;
#   3. pip uninstall -y parload leaves each environment's files as they
#      were before the install.
#
# Skips (exit 77, saying why) where venv, pip, build or git is missing or
# the source is not a git checkout.  Environment: PYTHON (default
# /usr/bin/python3, whose NumPy the environments use), PARLOAD_BIN (the
# parload command, for the tests that compare with it; they skip without
# it), PARLOAD_MPIEXEC and PARLOAD_MPIEXEC_FLAGS (the MPI tests' launcher;
# they skip without it), TMPDIR.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
# Nothing from a build tree, no bytecode written outside the environments.
unset PYTHONPATH LD_LIBRARY_PATH PARLOAD_PYTHON_MPI PARLOAD_PYTHON_MODULE
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v git >/dev/null 2>&1 || skip "no git to clone the tree with"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	skip "$top is not a git checkout (the check installs a clean clone)"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
	skip "$PYTHON has no venv/ensurepip (Debian: apt-get install python3-venv)"
"$PYTHON" -m pip --version >/dev/null 2>&1 ||
	skip "$PYTHON has no pip (Debian: apt-get install python3-pip)"
"$PYTHON" -c 'import build' 2>/dev/null ||
	skip "$PYTHON has no build module (Debian: apt-get install python3-build)"

work=$(mktemp -d "${TMPDIR:-/tmp}/parload-pip.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/out"

# venv NAME: a fresh environment over the system's site packages.
venv() {
	"$PYTHON" -m venv --system-site-packages "$work/$1"
}
# files NAME: every file and directory of an environment, sorted.
files() {
	(cd "$work/$1" && find . | LC_ALL=C sort)
}
# uninstalled NAME: pip uninstall leaves the files of before the install.
uninstalled() {
	"$work/$1/bin/pip" uninstall -y -q parload
	files "$1" >"$work/$1.after"
	if ! cmp -s "$work/$1.before" "$work/$1.after"; then
		diff "$work/$1.before" "$work/$1.after" >&2 || :
		fail "pip uninstall left $1 different from before the install"
	fi
	echo "pip uninstall: $1 holds what it held before the install"
}
# where NAME: the installed package's directory, imported from outside
# the tree; it must lie in the environment.
where() {
	dir=$(cd "$work/out" && "$work/$1/bin/python" -c \
		'import os, parload; print(os.path.dirname(parload.__file__))')
	case $dir in
	"$work/$1"/*) ;;
	*) fail "$1 imports parload from $dir, not from the environment" ;;
	esac
	# The extension carries libparload: no shared libparload is needed.
	for so in "$dir"/_parload*.so; do
		if ldd "$so" | grep libparload; then
			fail "$so needs a shared libparload"
		fi
	done
	echo "$dir"
}

git clone -q "$top" "$work/src"
git clone -q "$top" "$work/src-wheel"

echo "== 1. pip install --no-build-isolation . (a clean clone)"
venv v1
files v1 >"$work/v1.before"
(cd "$work/src" && "$work/v1/bin/pip" install -q --no-build-isolation .)
pkg=$(where v1)
echo "installed: $pkg ($(cd "$pkg" && ls _parload*.so | tr '\n' ' '))"
tests=$work/src/python/tests
(cd "$work/out" && "$work/v1/bin/python" -B -m pytest -q -rs \
	-p no:cacheprovider --rootdir="$tests" "$tests")

echo "== 2. python -m build --wheel --no-isolation, installed elsewhere"
(cd "$work/src-wheel" &&
	"$PYTHON" -m build --wheel --no-isolation --outdir "$work/dist" \
		>"$work/build.log" 2>&1) || {
	tail -n 40 "$work/build.log" >&2
	fail "python -m build --wheel failed"
}
wheel=$(ls "$work"/dist/parload-*.whl)
echo "wheel: $(basename "$wheel")"
venv v2
files v2 >"$work/v2.before"
"$work/v2/bin/pip" install -q --no-index "$wheel"
where v2 >/dev/null
(cd "$work/out" && "$work/v2/bin/python" -c '
import numpy as np, parload
px = np.arange(31 * 6 * 9, dtype=np.uint16).reshape(31, 6, 9)
with parload.Writer("w.raw", 31, 6, 9, np.uint16, crc=True) as w:
    for i, p in enumerate(px):
        w.write({"angle_deg": i / 2}, p)
ds = parload.load("w.raw", verify=True, threads=2)
assert np.array_equal(ds.pixels, px) and ds.stats["crc_checked"] == 31
assert list(ds.angles) == [i / 2 for i in range(31)]
print("wheel:", parload.__version__, ds)')
(cd "$work/out" && "$work/v2/bin/python" -m parload --verify w.raw)

echo "== 3. pip uninstall -y parload"
uninstalled v1
uninstalled v2
echo "pip_check: all passed"
