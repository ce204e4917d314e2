#!/bin/bash
# glibc's malloc, stock and patched, against jemalloc, tcmalloc and
# mimalloc (issue 25): one run, every benchmark x thread count x column
# interleaved, medians and ratios to stock glibc in one Markdown table,
# printed and written to out/bench/malloc/results.md.  Part of make bench.
#   bench/malloc-bench.sh [ROUNDS]          (default 3; about 6 minutes)
#
# Benchmarks:
#   bench/malloc-xfree.c           cross-thread frees, Mblocks/s and VmHWM
#   glibc's bench-malloc-thread    (glibc 2.36 benchtests, from out/glibc-pristine)
#   glibc's bench-malloc-simple
# Columns: stock glibc (Debian's), the patched glibc (rseq-gcc), the
# patched glibc with GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid (n/a until its
# ld.so lists that tunable), and Debian's libjemalloc2,
# libtcmalloc-minimal4 and libmimalloc2.0 with LD_PRELOAD into the stock
# binaries (build-scripts/deps.sh bench installs them; a missing one is
# shown as n/a).  Two more run the stock binaries under glibc build
# trees made with the same flags: the patched one (out/glibc-build, cache
# off) and the series without its malloc cache patch (built here, in
# out/bench/glibc-without-malloc-cache, the first time: about 7
# minutes); a second table compares those two, the cost of the patch
# with the cache off.
#
# Environment (smaller values make a smoke run):
#   MALLOC_BENCH_XFREE_THREADS    malloc-xfree's thread counts (even)   "2 8 64"
#   MALLOC_BENCH_XFREE_BLOCKS     blocks per malloc-xfree run           5000000
#   MALLOC_BENCH_THREAD_THREADS   bench-malloc-thread's thread counts   "1 2 8 64 256"
#   MALLOC_BENCH_THREAD_SECONDS   its run length (glibc's is 10)        2
#   MALLOC_BENCH_SIMPLE_SIZES     bench-malloc-simple's block sizes     "16 256 4096"
. "$(dirname "$0")/../build-scripts/common.sh"

rounds=${1:-3}
xfree_threads=${MALLOC_BENCH_XFREE_THREADS:-2 8 64}
xfree_blocks=${MALLOC_BENCH_XFREE_BLOCKS:-5000000}
thread_threads=${MALLOC_BENCH_THREAD_THREADS:-1 2 8 64 256}
thread_seconds=${MALLOC_BENCH_THREAD_SECONDS:-2}
simple_sizes=${MALLOC_BENCH_SIMPLE_SIZES:-16 256 4096}

[ $# -le 1 ] || die "usage: bench/malloc-bench.sh [ROUNDS]"
number() {  # number NAME VALUE: VALUE is a positive integer
  [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, not '$2'"
}
numbers() {  # numbers NAME VALUE: VALUE is one or more positive integers
  [[ $2 =~ ^\ *[1-9][0-9]*(\ +[1-9][0-9]*)*\ *$ ]] ||
    die "$1 must be one or more positive integers separated by spaces, not '$2'"
}
number ROUNDS "$rounds"
numbers MALLOC_BENCH_XFREE_THREADS "$xfree_threads"
for t in $xfree_threads; do
  [ $((t % 2)) = 0 ] || die "MALLOC_BENCH_XFREE_THREADS: $t is odd (half the threads malloc, half free)"
done
number MALLOC_BENCH_XFREE_BLOCKS "$xfree_blocks"
numbers MALLOC_BENCH_THREAD_THREADS "$thread_threads"
number MALLOC_BENCH_THREAD_SECONDS "$thread_seconds"
numbers MALLOC_BENCH_SIMPLE_SIZES "$simple_sizes"

b=$OUT/bench/malloc
mkdir -p "$b"

# glibc's benchtests, from the source make unpacked.
bt=
for d in "$OUT/glibc-pristine/benchtests" "$OUT/glibc-src/benchtests"; do
  [ -r "$d/bench-malloc-thread.c" ] && { bt=$d; break; }
done
[ -n "$bt" ] || die "no glibc source with benchtests/ in out/glibc-pristine or out/glibc-src: run make first"
[ -x "$OUT/bin/rseq-gcc" ] || die "no out/bin/rseq-gcc: run make first"

# bench-malloc-thread runs for BENCHMARK_DURATION seconds, a constant of
# its source: a copy with our length.
sed -E "s/^(#define BENCHMARK_DURATION)[[:space:]]+10$/\\1 $thread_seconds/" \
  "$bt/bench-malloc-thread.c" > "$b/bench-malloc-thread.c"
[ "$(grep -c "^#define BENCHMARK_DURATION $thread_seconds\$" "$b/bench-malloc-thread.c")" = 1 ] ||
  die "$bt/bench-malloc-thread.c has no line '#define BENCHMARK_DURATION<tab>10' to change"

# Each program twice: stock (the system gcc and Debian's glibc) and
# patched (rseq-gcc).  glibc's benchtests need only bench-timing.h,
# json-lib.h and json-lib.c of benchtests/ and, for the timer,
# bench/glibc-benchtests/hp-timing.h.
for flavour in stock patched; do
  if [ $flavour = stock ]; then cc=gcc; else cc=$OUT/bin/rseq-gcc; fi
  "$cc" -O2 -Wall -pthread -o "$b/malloc-xfree-$flavour" "$TOP/bench/malloc-xfree.c"
  "$cc" -O2 -Wall -shared -fPIC -o "$b/vmhwm-$flavour.so" "$TOP/bench/vmhwm-preload.c"
  "$cc" -O2 -pthread -I"$TOP/bench/glibc-benchtests" -I"$bt" \
    -o "$b/bench-malloc-thread-$flavour" "$b/bench-malloc-thread.c" "$bt/json-lib.c" -lm
  "$cc" -O2 -pthread -I"$TOP/bench/glibc-benchtests" -I"$bt" \
    -o "$b/bench-malloc-simple-$flavour" "$bt/bench-malloc-simple.c" "$bt/json-lib.c"
done

# The files that make the series without the malloc cache patch: the
# pin, the patches before it, and the build script.
without_malloc_cache_inputs() {
  local series=$TOP/glibc-patches/series p
  (cd "$TOP" && {
    echo glibc-patches/glibc.pin
    series_patches "$series" | while read -r p; do
      grep -q '^Subject: \[PATCH[^]]*\] malloc: Add a per-CPU cache' "glibc-patches/$p" && break
      echo "glibc-patches/$p"
    done
    echo build-scripts/build-glibc.sh
  })
}

# The series without the malloc cache patch: its git tree (pristine plus
# one commit per patch, glibc-series.sh edit) checked out at the
# commit before that patch, built like the patched glibc.
without=$OUT/bench/glibc-without-malloc-cache
build_without_malloc_cache() {
  local want have base
  want=$(without_malloc_cache_inputs | hash_inputs)
  have=$(cat "$without/inputs" 2>/dev/null) || have=
  if [ "$want" != "$have" ]; then
    rm -rf "$without"
    "$TOP/build-scripts/glibc-series.sh" edit "$without/src"
    base=$(git -C "$without/src" log --format=%H -1 --grep='^malloc: Add a per-CPU cache')
    [ -n "$base" ] || die "no commit 'malloc: Add a per-CPU cache' in the series"
    git -C "$without/src" checkout -q "$base^"
  fi
  "$TOP/build-scripts/build-glibc.sh" "$(native_abi)" --tree "$without/src" "$without/build"
  echo "$want" > "$without/inputs"
}
build_without_malloc_cache
same_flags=$(glibc_build_dir "$(native_abi)")
[ -x "$same_flags/testrun.sh" ] || die "no $same_flags/testrun.sh: run make first"

# The columns, KEY|LABEL|FLAVOUR|ENVIRONMENT|NA[|PREFIX] (bench/malloc_bench.py);
# the first is the reference of the ratios.  The per-CPU column runs as
# soon as the patched ld.so lists glibc.malloc.percpu (ld.so
# --list-tunables); until then its cells read "n/a (not implemented)".
ldso=$OUT/$(abi_field "$(native_abi)" sysroot)/$(abi_field "$(native_abi)" ldso)
percpu_na="n/a (not implemented)"
if "$ldso" --list-tunables 2>/dev/null | grep -q '^glibc\.malloc\.percpu:'; then percpu_na=; fi
columns=(
  "stock|stock glibc|stock||"
  "patched|patched glibc|patched||"
  "percpu|patched, glibc.malloc.percpu=mm_cid|patched|GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid|$percpu_na"
  "tree-off|patched build tree, cache off|stock|||$same_flags/testrun.sh"
  "tree-without|build tree without the cache patch|stock|||$without/build/testrun.sh"
)
while read -r name pkg lib; do
  version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null | sed 's/[-+].*//') || version=
  na=
  [ -r "$lib" ] || na="n/a ($pkg not installed)"
  columns+=("$name|$name${version:+ $version}|stock|LD_PRELOAD=$lib|$na")
done < <(malloc_bench_allocators)

args=()
for c in "${columns[@]}"; do args+=(--column "$c"); done
header="Machine: $(nproc) CPUs, $(uname -sr), $(date -u +%Y-%m-%d); $rounds round(s); malloc-xfree $xfree_blocks blocks, bench-malloc-thread ${thread_seconds} s per run"
echo
/usr/bin/python3 "$TOP/bench/malloc_bench.py" --dir "$b" --rounds "$rounds" \
  --xfree-threads "$xfree_threads" --xfree-blocks "$xfree_blocks" \
  --thread-threads "$thread_threads" --thread-seconds "$thread_seconds" \
  --simple-sizes "$simple_sizes" --output "$b/results.md" --header "$header" \
  --pair tree-off/tree-without "${args[@]}"
