#!/bin/sh
# options_agree.sh - the three programs that load take the same options
# with the same outcome and the same message: parload, parload-mpi (one
# rank, under the MPI launcher) and python -m parload each run every row
# of one table of options, good and bad, on one file that 'parload gen'
# wrote; each must exit with the row's status and, for a failure, say the
# row's message after its own "PROGRAM: " prefix.  A program this build
# lacks (parload-mpi without --with-mpi, the Python module) is skipped,
# saying why; with none of the two, the whole test is a skip (77).
#
# Environment (make check): PARLOAD_BIN; PARLOAD_MPI_BIN, PARLOAD_MPIEXEC,
# PARLOAD_MPIEXEC_FLAGS; PARLOAD_PYTHON, PARLOAD_PYTHON_MODULE.
bin=${PARLOAD_BIN:?PARLOAD_BIN is not set (run by make check)}
dir=$(mktemp -d "${TMPDIR:-/tmp}/options_agree.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
file=$dir/a.raw
"$bin" gen --views 10 --width 16 --height 8 --seed 3 "$file" || exit 99

programs=parload
if [ -n "${PARLOAD_MPI_BIN:-}" ] && [ -x "$PARLOAD_MPI_BIN" ]; then
	programs="$programs parload-mpi"
else
	echo "SKIP parload-mpi: built without MPI (configure --with-mpi)"
fi
case ${PARLOAD_PYTHON_MODULE:-} in
yes*) programs="$programs python" ;;
*) echo "SKIP python -m parload: the Python module is not built" \
	"(${PARLOAD_PYTHON_MODULE:-not run by make check})" ;;
esac
# Sanitizer builds, as the MPI and Python suites run them: neither Open
# MPI nor the interpreter is built for ThreadSanitizer; under
# AddressSanitizer the interpreter needs the runtime preloaded (its own
# memory is not ours to leak-check), and Open MPI's allocations that live
# as long as the process are suppressed by library.
mpi_asan= py_asan=
case ${PARLOAD_SANITIZER_FLAGS:-${PARLOAD_SANITIZERS:-}} in
*thread*)
	echo "SKIP parload-mpi and python -m parload: not built for" \
		"ThreadSanitizer"
	programs=parload
	;;
*address*)
	mpi_asan="ASAN_OPTIONS=fast_unwind_on_malloc=0"
	mpi_asan="$mpi_asan LSAN_OPTIONS=suppressions=${srcdir:-.}/tests/mpi/lsan.supp"
	py_asan="LD_PRELOAD=$(${PARLOAD_CC:-cc} -print-file-name=libasan.so)"
	py_asan="$py_asan ASAN_OPTIONS=detect_leaks=0"
	;;
esac
if [ "$programs" = parload ]; then
	echo "SKIP: neither parload-mpi nor the Python module is built"
	exit 77
fi

# run PROGRAM ARGS...: its status in $status, its standard error in
# $dir/err.
run() {
	p=$1
	shift
	case $p in
	parload) "$bin" "$@" "$file" >/dev/null 2>"$dir/err" ;;
	parload-mpi)
		# shellcheck disable=SC2086 # a list of NAME=VALUE words
		env $mpi_asan OMPI_ALLOW_RUN_AS_ROOT=1 \
			OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout 120 ${PARLOAD_MPIEXEC:-mpirun} -n 1 \
			${PARLOAD_MPIEXEC_FLAGS:---oversubscribe} \
			"$PARLOAD_MPI_BIN" "$@" "$file" >/dev/null 2>"$dir/err"
		;;
	python)
		# shellcheck disable=SC2086 # a list of NAME=VALUE words
		env $py_asan timeout 120 "$PARLOAD_PYTHON" -m parload "$@" \
			"$file" >/dev/null 2>"$dir/err" ;;
	esac
	status=$?
}

# STATUS|OPTIONS|MESSAGE (the first line of standard error after
# "PROGRAM: "; for status 1, a part of it).
fails=0
rows=0
while IFS='|' read -r want args said; do
	case $want in '#'* | '') continue ;; esac
	rows=$((rows + 1))
	for p in $programs; do
		# shellcheck disable=SC2086 # the options are words
		run "$p" $args </dev/null
		line=$(head -n 1 "$dir/err")
		got=${line#*: }
		case $p in parload-mpi) got=${got#rank 0: } ;; esac
		ok=1
		[ "$status" -eq "$want" ] || ok=0
		if [ "$want" -eq 2 ] && [ "$got" != "$said" ]; then
			ok=0
		elif [ "$want" -eq 1 ] && [ -n "$said" ]; then
			case $got in *"$said"*) ;; *) ok=0 ;; esac
		fi
		if [ "$ok" -eq 0 ]; then
			echo "FAIL: $p $args: exit $status (want $want): $line"
			[ "$want" -ne 0 ] && echo "      want: $said"
			fails=$((fails + 1))
		fi
	done
done <<'EOF'
0|--threads 2|
0|-t 0|
0|--views 1:8:2|
0|--views -3:|
0|--rows 2:6 --cols 1:9|
0|--layout sinograms|
0|--cache drop|
0|--verify|
0|--keep-going|
0|--allow-truncated|
0|--no-bind --no-hugepages|
0|--max-read 64K|
0|--verify-seed 3|
0|--verify-seed 3 --views 2:9:3 --rows 1:5|
0|--minus-log|
0|--bin 2|
0|--reduce median --minus-log --bin 1|
0|--frames projections --confine|
2|--threads 5000|invalid thread count '5000' (0 to 4096)
2|-t abc|invalid thread count 'abc' (0 to 4096)
2|--threads -1|invalid thread count '-1' (0 to 4096)
2|--views 1:2:0|invalid --views '1:2:0': the step must be 1 or more
2|--rows 1:2:3|invalid --rows '1:2:3': invalid slice '1:2:3': expected START:STOP (each part optional)
2|--layout rows|unknown layout 'rows' (views or sinograms)
2|--cache Drop|unknown page-cache mode 'Drop' (keep, drop, direct or auto)
2|--reduce bogus|unknown reduction 'bogus' (mean or median)
2|--frames whites|unknown frames 'whites' (projections, flats or darks)
2|--bin 0|invalid --bin '0' (a factor of 1 or more)
2|--max-read 1X|invalid read size '1X'
2|--verify-seed -1|invalid seed '-1'
2|--minus-log --verify-seed 3|--verify-seed checks the file's pixels; a corrected load delivers float32 (leave one out)
2|--verify-seed 3 --bin 2|--verify-seed checks the file's pixels; a corrected load delivers float32 (leave one out)
1|--verify-seed 4|view 0: header differs from the stream of seed 4
1|--views 9:20|
EOF
echo "options_agree: $rows rows, programs: $programs; $fails failures"
[ "$fails" -eq 0 ]
