#!/bin/bash
# make bench: build the benchmarks against the patched and the stock
# glibc and print their tables (Markdown, as recorded in docs/benchmarks.md).
#   bench/run.sh [ROUNDS] [PART...]
# ROUNDS (default 7) is for the benchmarks that take it; malloc and
# real-programs run their own 3.  PART is one of host (CPU lookup,
# per-CPU structures, Python, dlclose), malloc, real-programs, cpu-opv
# (in the test VM), vm-counter (every VM) and slice (the Linux 7.x VM);
# without any, all of them in that order.
. "$(dirname "$0")/../build-scripts/lib/abi.sh"
. "$(dirname "$0")/../build-scripts/lib/glibc.sh"

rounds=7
case ${1:-} in
  '' | *[!0-9]*) ;;
  *) rounds=$1; shift ;;
esac
[ "$rounds" -ge 1 ] || die "bench/run.sh: ROUNDS must be at least 1"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(host malloc real-programs cpu-opv vm-counter slice)
b=$OUT/bench
mkdir -p "$b"

bench_host() {
  "$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$b/cpu-lookup-patched" "$TOP/bench/cpu-lookup.c"
  gcc -O2 -Wall -pthread -o "$b/cpu-lookup-stock" "$TOP/bench/cpu-lookup.c"
  "$OUT/bin/rseq-gcc" -O2 -Wall -pthread -I"$TOP/percpu" -o "$b/percpu-bench" \
    "$TOP/bench/percpu-bench.c" "$TOP/percpu/percpu.c"
  # The stock program runs under pristine glibc built with the same
  # flags, so that the ratios are the patches' own cost.
  "$TOP/build-scripts/build/build-glibc.sh" "$(native_abi)" --pristine >&2
  /usr/bin/python3 "$TOP/bench/cpu_lookup.py" "$b" "$rounds" \
    "$(glibc_pristine_build_dir "$(native_abi)")/testrun.sh" \
    "glibc $GLIBC_VERSION (pristine, same flags)"
  # The same with Clang, whose inline row must match GCC's.
  "$OUT/bin/rseq-clang" -O2 -Wall -pthread -I"$TOP/percpu" -o "$b/percpu-bench-clang" \
    "$TOP/bench/percpu-bench.c" "$TOP/percpu/percpu.c"
  /usr/bin/python3 "$TOP/bench/percpu_bench.py" "$b/percpu-bench" "$rounds" "$b/percpu-bench-clang"
  "$OUT/bin/rseq-python" "$TOP/bench/python_bench.py" "$rounds"

  # What dlclose's clearing of rseq_cs costs, against clearing it after
  # every commit (bench/dlclose-bench.c).
  "$OUT/bin/rseq-gcc" -O2 -Wall -pthread -shared -fPIC -DBENCH_LIB \
    -o "$b/dlclose-bench-lib.so" "$TOP/bench/dlclose-bench.c"
  "$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$b/dlclose-bench" \
    "$TOP/bench/dlclose-bench.c" -ldl
  echo
  "$b/dlclose-bench" "$b/dlclose-bench-lib.so" "$rounds"
}

# glibc's malloc, stock and patched, against jemalloc, tcmalloc and
# mimalloc (deps.sh bench installs them): its own 3 rounds, about 25
# minutes; the table also goes to out/bench/malloc/results.md.
bench_malloc() {
  "$TOP/bench/malloc-bench.sh"
}

# Real programs (Debian's xz, zstd, git and python3's threading tests)
# with the cache off and on, and under the system glibc: its own 3
# rounds, about 5 minutes; the table also goes to
# out/bench/real-programs/results.md.
bench_real_programs() {
  echo
  "$TOP/bench/real-programs-bench.sh"
}

# cpu_opv against rseq, in the test VM (the host kernel has no cpu_opv).
bench_cpu_opv() {
  "$OUT/bin/rseq-gcc" -O2 -Wall -o "$b/cpu-opv-bench" "$TOP/bench/cpu-opv-bench.c"
  echo
  echo "### cpu_opv vectors vs the same operation by rseq (QEMU TCG VM, -smp 2)"
  echo
  "$TOP/build-scripts/vm/run-vm" --timeout 900 --file "$b/cpu-opv-bench" \
    "cpu-opv-bench=./cpu-opv-bench $rounds" > "$b/vm.log" 2>&1 || true
  sed -n 's/^vm| \(|.*\)$/\1/p; s/^vm| \((.*)\)$/\1/p' "$b/vm.log"
  grep -q '^PASS: cpu-opv-bench' "$b/vm.log" || { echo "(the VM run failed; see out/bench/vm.log)"; exit 1; }
}

# The counter benchmark in every VM whose own ABI is built.
bench_vm_counter() {
  echo
  "$TOP/bench/vm-counter.sh" "$rounds"
}

# The time slice extension in the Linux 7.x VM (examples/slice-lock.c).
bench_slice() {
  "$TOP/bench/slice-bench.sh"
}

for part in "${parts[@]}"; do
  case $part in
    host | malloc | real-programs | cpu-opv | vm-counter | slice) ;;
    *) die "bench/run.sh: unknown part '$part' (host, malloc, real-programs, cpu-opv, vm-counter, slice)" ;;
  esac
done
echo "Machine: $(nproc) CPUs, $(uname -sr), $(date -u +%Y-%m-%d)"
for part in "${parts[@]}"; do
  "bench_${part//-/_}"
done
