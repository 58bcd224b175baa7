#!/bin/bash
# bootstrap.sh - build parload from a clean clone and run it or its tests.
#
#   ./bootstrap.sh run    build, then run the embedded default: write the
#                         article's reference stream (2,000 views of
#                         896 x 64 u16 pixels, about 229 MB) to a temporary
#                         file, load it, check every view, print the result
#   ./bootstrap.sh test   build, then run the test suite (make check)
#
# Both first make sure the build dependencies are installed.  Run as root
# on Debian (12 or later) they install what is missing with apt-get;
# otherwise they print the exact command to run and stop.
#
# Environment: JOBS (parallel make jobs, default: the number of CPUs),
# CONFIGURE_FLAGS (extra arguments for ./configure), PYTHON (the
# interpreter to build the Python module for; default /usr/bin/python3).
set -eu

# What the build and the tests need, as Debian packages.
PACKAGES="build-essential autoconf automake libtool pkg-config \
libhwloc-dev libisal-dev check python3 python3-dev python3-numpy \
python3-pytest python3-dask openmpi-bin libopenmpi-dev \
libtiff-dev libhdf5-dev libdeflate-dev python3-h5py python3-tifffile \
liblz4-dev libzstd-dev libblosc-dev liblzf-dev libbz2-dev \
python3-hdf5plugin python3-numcodecs bitshuffle \
hdf5-filter-plugin hdf5-filter-plugin-blosc-serial \
libpng-dev python3-pil"

usage() {
	sed -n '2,16s/^# \{0,1\}//p' "$0"
}

case ${1:-} in
run | test) mode=$1 ;;
-h | --help | help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac

cd "$(dirname "$0")"

say() {
	printf '\n=== %s\n' "$*"
}

# ---- dependencies ----

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
	for p in $PACKAGES; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		case $status in
		*" installed") ;;
		*) missing="$missing $p" ;;
		esac
	done
else
	# Not Debian: trust whatever is installed and let configure say
	# what is missing.
	echo "bootstrap.sh: no dpkg; not checking packages ($PACKAGES)" >&2
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		say "installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update
		# shellcheck disable=SC2086 # one word per package
		apt-get install -y --no-install-recommends $missing
	else
		echo "bootstrap.sh: missing build dependencies:$missing" >&2
		echo "Install them (as root, or with sudo) with:" >&2
		echo >&2
		echo "  sudo apt-get update && sudo apt-get install -y" \
			"--no-install-recommends$missing" >&2
		echo >&2
		echo "then run ./bootstrap.sh $mode again." >&2
		exit 1
	fi
fi

# ---- build ----

jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}

# A clean clone has no configure script; a release tarball has one.
if [ ! -x configure ] || [ configure.ac -nt configure ] ||
	[ Makefile.am -nt configure ]; then
	say "autoreconf -fi"
	autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt config.status ]; then
	# The Python module is built for Debian's interpreter, which has
	# python3-numpy, unless PYTHON names another.
	if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then
		PYTHON=/usr/bin/python3
		export PYTHON
	fi
	say "PYTHON=${PYTHON:-} ./configure ${CONFIGURE_FLAGS:-}"
	# shellcheck disable=SC2086 # flags are words
	./configure ${CONFIGURE_FLAGS:-}
fi
say "make -j$jobs"
make -j"$jobs"

# ---- run ----

case $mode in
run)
	say "./src/parload  (the embedded default)"
	./src/parload
	;;
test)
	say "make check -j$jobs"
	if ! make check -j"$jobs"; then
		# Show why: the harness collects the failed tests' output.
		[ ! -f test-suite.log ] || cat test-suite.log
		exit 1
	fi
	;;
esac
