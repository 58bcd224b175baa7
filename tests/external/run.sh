#!/bin/sh
# run.sh PREFIX - use an installed parload from outside its source tree.
#
# After `make install` into PREFIX (for instance ./configure
# --prefix=/tmp/p && make install), this builds tests/external/consumer.c
# against the installed header and library with nothing but
# `pkg-config --cflags --libs parload`, writes streams of several shapes
# with the independent implementation tests/refstream.py, and has the
# consumer load each at every thread count from 1 to 8 and compare with
# what refstream.py says the arrays must hold.  It also runs the installed
# parload command on them.
#
# Environment: CC (default cc), CXX (default c++, skipped if missing),
# PYTHON3 (default python3), TMPDIR.  Exits non-zero on any failure.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 PREFIX" >&2
	exit 2
fi
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
refstream=$here/../refstream.py
CC=${CC:-cc}
CXX=${CXX:-c++}
PYTHON3=${PYTHON3:-python3}

work=$(mktemp -d "${TMPDIR:-/tmp}/parload-external.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# libdir is lib on Debian unless configured otherwise; find the .pc file
# wherever the installation put it.
pc=$(find "$prefix" -path '*/pkgconfig/parload.pc' | head -n 1)
if [ -z "$pc" ]; then
	echo "run.sh: no pkgconfig/parload.pc under $prefix" >&2
	exit 1
fi
PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir parload)
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

echo "== pkg-config: parload $(pkg-config --modversion parload)"
echo "   cflags: $(pkg-config --cflags parload)"
echo "   libs:   $(pkg-config --libs parload)"

# Strict C11 and no warnings: the public header must not need GNU C.
echo "== building consumer.c with $CC"
# shellcheck disable=SC2046 # pkg-config's output is meant to be split
"$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$work/consumer" \
	"$here/consumer.c" $(pkg-config --cflags --libs parload)
ldd "$work/consumer" | grep parload

# The header from C++ as well, where a C++ compiler is installed.
if command -v "$CXX" >/dev/null 2>&1; then
	echo "== including parload.h from C++ with $CXX"
	cat >"$work/cxx.cc" <<'EOF'
#include <parload.h>
int main()
{
	parload_options o;
	parload_options_init(&o);
	parload_dataset ds = parload_dataset();
	parload_dataset_free(&ds);
	return parload_pixel_size(PARLOAD_PIXEL_U16) == 2 ? 0 : 1;
}
EOF
	# shellcheck disable=SC2046
	"$CXX" -std=c++11 -Wall -Wextra -Werror -o "$work/cxx" "$work/cxx.cc" \
		$(pkg-config --cflags --libs parload)
	"$work/cxx"
fi

echo "== writing streams with refstream.py"
cat >"$work/batch" <<EOF
write --views 0 --width 4 --height 4 --type u16 '$work/empty.raw'
write --views 1 --width 1 --height 1 --type u8 '$work/one.raw'
write --views 3 --width 7 --height 5 --type u8 --crc '$work/u8.raw'
write --views 3 --width 7 --height 5 --type u16 '$work/u16.raw'
write --views 3 --width 7 --height 5 --type i16 --crc '$work/i16.raw'
write --views 3 --width 7 --height 5 --type u32 '$work/u32.raw'
write --views 3 --width 7 --height 5 --type i32 --crc '$work/i32.raw'
write --views 3 --width 7 --height 5 --type f32 '$work/f32.raw'
write --views 3 --width 7 --height 5 --type f64 --crc '$work/f64.raw'
write --views 13 --width 33 --height 7 --type i16 --crc '$work/odd.raw'
write --views 100 --width 3 --height 1 --type u8 '$work/tiny.raw'
write --views 64 --width 896 --height 16 --type u16 --crc '$work/ref.raw'
write --views 1 --width 2048 --height 1031 --type u8 '$work/big.raw'
EOF
"$PYTHON3" "$refstream" batch "$work/batch"

echo "== loading them with the consumer"
"$work/consumer" "$work"/*.raw

echo "== the installed parload command"
"$prefix/bin/parload" --version
"$prefix/bin/parload" --threads 3 "$work/ref.raw" "$work/empty.raw"
"$prefix/bin/parload" info "$work/odd.raw" >/dev/null
if "$prefix/bin/parload" "$work/ref.raw.pixels" 2>"$work/err"; then
	echo "run.sh: parload accepted a file that is not a stream" >&2
	exit 1
fi
cat "$work/err"

# The TIFF and HDF5 code is in modules that the command opens on first
# use, from where make install put them: neither library is linked, and a
# file written to each format and read back is the stream it came from.
echo "== the installed modules"
if ldd "$prefix/bin/parload" | grep -E 'libtiff|libhdf5'; then
	echo "run.sh: the command links libtiff or libhdf5 itself" >&2
	exit 1
fi
"$prefix/bin/parload" extract -o "$work/ref.npy" "$work/ref.raw"
for ext in tif h5; do
	mod=$libdir/parload/parload_$( [ $ext = tif ] && echo tiff || echo hdf5).so
	if [ ! -f "$mod" ]; then
		echo "   $mod: not installed (configured without it)"
		continue
	fi
	"$prefix/bin/parload" extract -o "$work/ref.$ext" "$work/ref.raw"
	"$prefix/bin/parload" extract -o "$work/back-$ext.npy" "$work/ref.$ext"
	cmp "$work/ref.npy" "$work/back-$ext.npy"
	echo "   $ext: written and read back through $mod"
done

echo "== external consumer: all passed"
