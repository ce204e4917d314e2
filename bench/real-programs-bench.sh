#!/bin/bash
# Real programs (Debian's xz -T2, zstd -T2, git repack --threads=2 and
# python3's threading tests, the workloads of rseq.malloc's
# real_programs.py) under the patched glibc with malloc's per-CPU cache
# off and on, and under the system glibc: medians of wall time and peak
# RSS, ratios on/off and system/off, one Markdown table, printed and
# written to out/bench/real-programs/results.md (every run in runs.log
# there).  Part of make bench.
#   bench/real-programs-bench.sh [ROUNDS]     (default 3; about 5 minutes on 2 CPUs)
# bench/real_programs_bench.py lists the variables of a smaller run.
. "$(dirname "$0")/../build-scripts/lib/base.sh"

rounds=${1:-3}
if [ $# -gt 1 ] || ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  die "usage: bench/real-programs-bench.sh [ROUNDS]"
fi
[ -x "$OUT/bin/rseq-run" ] || die "no out/bin/rseq-run: run make first"
for prog in xz zstd git gcc; do
  command -v "$prog" > /dev/null || die "$prog is not installed (build-scripts/fetch/deps.sh installs it)"
done
[ -r /usr/lib/python3.11/test/test_threading.py ] ||
  die "Debian's python3 test suite is not installed (libpython3.11-testsuite; build-scripts/fetch/deps.sh)"
exec /usr/bin/python3 "$TOP/bench/real_programs_bench.py" "$OUT" "$rounds"
