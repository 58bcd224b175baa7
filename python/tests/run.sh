#!/bin/sh
# python/tests/run.sh - the Python module's tests, run by `make check`.
#
# Runs pytest over this directory with the interpreter the module was built
# for.  Skips (exit 77) when configure did not build the module, saying why;
# pytest's "no tests collected" (exit 5) is a failure, not a pass.
# Environment (set by make check): PARLOAD_PYTHON, PARLOAD_PYTHON_MODULE
# (configure's verdict), PYTHONPATH (the staged package), PARLOAD_BIN,
# PARLOAD_SANITIZER_FLAGS and PARLOAD_CC.  Extra pytest arguments:
# PYTEST_FLAGS.
#
# In an AddressSanitizer build (--enable-sanitizers) the interpreter runs
# with the ASan runtime preloaded, which an instrumented extension needs;
# leak checking is off, since the interpreter keeps memory until exit by
# design (the tests watch memory through RSS instead, and skip that under
# ASan, whose quarantine holds freed memory).
here=$(cd "$(dirname "$0")" && pwd)

case ${PARLOAD_PYTHON_MODULE:-} in
yes*) ;;
*)
	echo "SKIP: the Python module is not built" \
		"(configure: ${PARLOAD_PYTHON_MODULE:-not run by make check})"
	exit 77
	;;
esac
if ! "$PARLOAD_PYTHON" -c 'import pytest' 2>/dev/null; then
	echo "SKIP: $PARLOAD_PYTHON has no pytest" \
		"(Debian: apt-get install python3-pytest)"
	exit 77
fi

case ${PARLOAD_SANITIZER_FLAGS:-} in
*thread*)
	echo "SKIP: Python under ThreadSanitizer: the interpreter is not" \
		"built for it"
	exit 77
	;;
*address*)
	asan=$(${PARLOAD_CC:-cc} -print-file-name=libasan.so)
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
	PARLOAD_TEST_ASAN=1
	export LD_PRELOAD ASAN_OPTIONS PARLOAD_TEST_ASAN
	;;
esac

# No cache and no bytecode: the source tree may be read-only (distcheck).
# shellcheck disable=SC2086 # PYTEST_FLAGS is a list of words
"$PARLOAD_PYTHON" -B -m pytest -q -p no:cacheprovider --rootdir="$here" \
	${PYTEST_FLAGS:-} "$here"
status=$?
if [ "$status" -eq 5 ]; then
	echo "FAIL: pytest collected no tests in $here" >&2
	exit 1
fi
exit "$status"
