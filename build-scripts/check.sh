#!/bin/bash
# make check: run the DejaGnu testsuite (and, where present, the Python
# tests), then print one closing line "N passed, N failed, N skipped".
# FAIL, XPASS, UNRESOLVED and ERROR count as failures; UNSUPPORTED,
# UNTESTED and XFAIL as skipped.  Exits non-zero on any failure.
. "$(dirname "$0")/common.sh"

results=$OUT/tests
rm -rf "$results"
mkdir -p "$results"

abis=x86_64
builds="{x86_64 $OUT/glibc-build}"
if [ -e "$OUT/sysroot-i386/lib/ld-linux.so.2" ]; then
  abis="x86_64 i386"
  builds="$builds {i386 $OUT/glibc-build-i386}"
fi

# runtest's own exit status is not trusted alone: the summary is parsed.
(cd "$results" && runtest --tool rseq --srcdir "$TOP/tests" \
   RSEQ_BIN="$OUT/bin" RSEQ_OBJ="$results/bin" RSEQ_TOP="$TOP" \
   RSEQ_ABIS="$abis" RSEQ_GLIBC_BUILDS="$builds" "$@") || true

sum=$results/rseq.sum
[ -f "$sum" ] || die "runtest produced no summary ($sum)"

count() { grep -c "^$1:" "$sum" || true; }
passed=$(count PASS)
failed=$(( $(count FAIL) + $(count XPASS) + $(count UNRESOLVED) + $(count ERROR) ))
skipped=$(( $(count UNSUPPORTED) + $(count UNTESTED) + $(count XFAIL) ))

# Tcl errors in a driver show up as ERROR lines in the log, not the sum.
tcl_errors=$(grep -c '^ERROR:' "$results/rseq.log" || true)
[ "$tcl_errors" -gt "$(count ERROR)" ] && failed=$(( failed + tcl_errors - $(count ERROR) ))

grep -E '^(FAIL|XPASS|UNRESOLVED|ERROR|UNSUPPORTED):' "$sum" || true
echo "Full log: out/tests/rseq.log"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
