#!/bin/sh
# manpages.sh - every public function has its man page entry: each
# function declared PARLOAD_API in include/*.h must have its prototype in
# the SYNOPSIS of a page in docs/*.3 ("name(" on a .B or .BI line) and be
# named in that page's text (a .B or .BR line that is not a prototype).
# Fails naming every function missing.
srcdir=${PARLOAD_SRCDIR:-${srcdir:-.}}
inc=$srcdir/include
docs=$srcdir/docs

fns=$(sed -n 's/^PARLOAD_API[^(]*[^a-z0-9_]\(parload_[a-z0-9_]*\) *(.*/\1/p' \
	"$inc"/*.h | sort -u)
if [ -z "$fns" ]; then
	echo "manpages: no PARLOAD_API function found in $inc" >&2
	exit 99
fi

missing=0
count=0
for f in $fns; do
	count=$((count + 1))
	pages=$(grep -l "^\.BI\{0,1\} .*[^a-z0-9_]$f(" "$docs"/*.3 2>/dev/null)
	if [ -z "$pages" ]; then
		echo "FAIL: $f: no prototype in the SYNOPSIS of docs/*.3"
		missing=$((missing + 1))
		continue
	fi
	if ! grep -Eq "^\.BR? ($f|.* $f)( |,|$)" $pages; then
		echo "FAIL: $f: in a SYNOPSIS but never described" \
			"($(echo $pages | sed 's|[^ ]*/||g'))"
		missing=$((missing + 1))
	fi
done
echo "manpages: $count public functions, $missing without an entry"
[ "$missing" -eq 0 ]
