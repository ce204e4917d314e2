#!/bin/bash
# glibc's malloc, stock and patched, against jemalloc, tcmalloc and
# mimalloc (issue 25): one run, every benchmark x thread count x column
# interleaved, medians and ratios to stock glibc in one Markdown table,
# printed and written to out/bench/malloc/results.md.  Part of make bench.
#   bench/malloc-bench.sh [ROUNDS]          (default 3; about 6 minutes)
#
# Benchmarks:
#   bench/malloc-xfree.c           cross-thread frees, Mblocks/s and VmHWM
#   bench/malloc-larson.c          server-style: blocks move between threads
#   glibc's bench-malloc-thread    (the benchtests of pristine glibc, out/glibc-pristine)
#   glibc's bench-malloc-simple
# Every glibc column runs the same binaries (built with the system gcc)
# under a glibc build tree made with the same flags (its testrun.sh):
# stock is pristine glibc (build-glibc.sh --pristine, the reference of
# the ratios), then the patched glibc with its cache off, with
# glibc.malloc.percpu=mm_cid, and with glibc.malloc.percpu_local=1 as
# well (the caches then take each thread's own chunks too), and the
# series without its malloc cache
# patch (built here, in out/bench/glibc-without-malloc-cache, the first
# time: about 7 minutes; a second table compares it with the patched
# tree, the cost of that patch with the cache off).  Then Debian's own
# glibc, and Debian's libjemalloc2, libtcmalloc-minimal4 and
# libmimalloc2.0 with LD_PRELOAD under it (build-scripts/fetch/deps.sh
# bench installs them; a missing one is shown as n/a).
#
# Environment (smaller values make a smoke run):
#   MALLOC_BENCH_XFREE_THREADS    malloc-xfree's thread counts (even)   "2 8 64"
#   MALLOC_BENCH_XFREE_BLOCKS     blocks per malloc-xfree run           5000000
#   MALLOC_BENCH_LARSON_THREADS   malloc-larson's thread counts         "2 8 64"
#   MALLOC_BENCH_LARSON_OPS       replacements per malloc-larson run    20000000
#   MALLOC_BENCH_THREAD_THREADS   bench-malloc-thread's thread counts   "1 2 8 64 256"
#   MALLOC_BENCH_THREAD_SECONDS   its run length (glibc's is 10)        2
#   MALLOC_BENCH_SIMPLE_SIZES     bench-malloc-simple's block sizes     "16 256 4096"
. "$(dirname "$0")/../build-scripts/lib/abi.sh"
. "$(dirname "$0")/../build-scripts/lib/pins.sh"
. "$(dirname "$0")/../build-scripts/lib/cache.sh"
. "$(dirname "$0")/../build-scripts/lib/glibc.sh"
. "$(dirname "$0")/allocators.sh"

rounds=${1:-3}
xfree_threads=${MALLOC_BENCH_XFREE_THREADS:-2 8 64}
xfree_blocks=${MALLOC_BENCH_XFREE_BLOCKS:-5000000}
larson_threads=${MALLOC_BENCH_LARSON_THREADS:-2 8 64}
larson_ops=${MALLOC_BENCH_LARSON_OPS:-20000000}
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
numbers MALLOC_BENCH_LARSON_THREADS "$larson_threads"
number MALLOC_BENCH_LARSON_OPS "$larson_ops"
numbers MALLOC_BENCH_THREAD_THREADS "$thread_threads"
number MALLOC_BENCH_THREAD_SECONDS "$thread_seconds"
numbers MALLOC_BENCH_SIMPLE_SIZES "$simple_sizes"

b=$OUT/bench/malloc
mkdir -p "$b"

# glibc's benchtests, from pristine glibc (unpacked by its build below).
"$TOP/build-scripts/build/build-glibc.sh" "$(native_abi)" --pristine
bt=$OUT/glibc-pristine/benchtests
[ -r "$bt/bench-malloc-thread.c" ] || die "no $bt/bench-malloc-thread.c in pristine glibc"
[ -x "$OUT/bin/rseq-gcc" ] || die "no out/bin/rseq-gcc: run make first"

# bench-malloc-thread runs for BENCHMARK_DURATION seconds, a constant of
# its source: a copy with our length.
# (2.36 has 10 seconds, 2.43 3.)
sed -E "s/^(#define BENCHMARK_DURATION)[[:space:]]+[0-9]+$/\\1 $thread_seconds/" \
  "$bt/bench-malloc-thread.c" > "$b/bench-malloc-thread.c"
[ "$(grep -c "^#define BENCHMARK_DURATION $thread_seconds\$" "$b/bench-malloc-thread.c")" = 1 ] ||
  die "$bt/bench-malloc-thread.c has no line '#define BENCHMARK_DURATION <seconds>' to change"

# The programs, built once with the system gcc (glibc's benchtests need
# only bench-timing.h, json-lib.h and json-lib.c of benchtests/ and, for
# the timer, bench/glibc-benchtests/hp-timing.h); the columns choose the
# glibc they run under.  The "stock" suffix is malloc_bench.py's FLAVOUR.
cc=gcc
"$cc" -O2 -Wall -pthread -o "$b/malloc-xfree-stock" "$TOP/bench/malloc-xfree.c"
"$cc" -O2 -Wall -pthread -o "$b/malloc-larson-stock" "$TOP/bench/malloc-larson.c"
"$cc" -O2 -Wall -shared -fPIC -o "$b/vmhwm-stock.so" "$TOP/bench/vmhwm-preload.c"
"$cc" -O2 -pthread -I"$TOP/bench/glibc-benchtests" -I"$bt" \
  -o "$b/bench-malloc-thread-stock" "$b/bench-malloc-thread.c" "$bt/json-lib.c" -lm
"$cc" -O2 -pthread -I"$TOP/bench/glibc-benchtests" -I"$bt" \
  -o "$b/bench-malloc-simple-stock" "$bt/bench-malloc-simple.c" "$bt/json-lib.c"

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
    echo build-scripts/build/build-glibc.sh
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
    "$TOP/build-scripts/patches/glibc-series.sh" edit "$without/src"
    base=$(git -C "$without/src" log --format=%H -1 --grep='^malloc: Add a per-CPU cache')
    [ -n "$base" ] || die "no commit 'malloc: Add a per-CPU cache' in the series"
    git -C "$without/src" checkout -q "$base^"
  fi
  "$TOP/build-scripts/build/build-glibc.sh" "$(native_abi)" --tree "$without/src" "$without/build"
  echo "$want" > "$without/inputs"
}
build_without_malloc_cache
same_flags=$(glibc_build_dir "$(native_abi)")
pristine=$(glibc_pristine_build_dir "$(native_abi)")
for tree in "$same_flags" "$pristine"; do
  [ -x "$tree/testrun.sh" ] || die "no $tree/testrun.sh: run make first"
done

# The columns, KEY|LABEL|FLAVOUR|ENVIRONMENT|NA[|PREFIX] (bench/malloc_bench.py);
# the first is the reference of the ratios.  The per-CPU column runs as
# soon as the patched ld.so lists glibc.malloc.percpu (ld.so
# --list-tunables); until then its cells read "n/a (not implemented)".
ldso=$OUT/$(abi_field "$(native_abi)" sysroot)/$(abi_field "$(native_abi)" ldso)
percpu_na="n/a (not implemented)"
if "$ldso" --list-tunables 2>/dev/null | grep -q '^glibc\.malloc\.percpu:'; then percpu_na=; fi
percpu_local_na="n/a (not implemented)"
if "$ldso" --list-tunables 2>/dev/null | grep -q '^glibc\.malloc\.percpu_local:'; then percpu_local_na=; fi
columns=(
  "stock|stock glibc $GLIBC_VERSION (pristine, same flags)|stock|||$pristine/testrun.sh"
  "patched|patched, cache off|stock|||$same_flags/testrun.sh"
  "percpu|patched, glibc.malloc.percpu=mm_cid|stock|GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid|$percpu_na|$same_flags/testrun.sh"
  "percpu-local|patched, mm_cid and percpu_local=1|stock|GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid:glibc.malloc.percpu_local=1|$percpu_local_na|$same_flags/testrun.sh"
  "tree-without|series without the cache patch|stock|||$without/build/testrun.sh"
  "debian|Debian's glibc $(ldd --version | sed -n '1s/.* //p')|stock||"
)
while read -r name pkg lib; do
  version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null | sed 's/[-+].*//') || version=
  na=
  [ -r "$lib" ] || na="n/a ($pkg not installed)"
  columns+=("$name|$name${version:+ $version}|stock|LD_PRELOAD=$lib|$na")
done < <(malloc_bench_allocators)

args=()
for c in "${columns[@]}"; do args+=(--column "$c"); done
header="Machine: $(nproc) CPUs, $(uname -sr), $(date -u +%Y-%m-%d); $rounds round(s); malloc-xfree $xfree_blocks blocks, malloc-larson $larson_ops replacements, bench-malloc-thread ${thread_seconds} s per run"
echo
/usr/bin/python3 "$TOP/bench/malloc_bench.py" --dir "$b" --rounds "$rounds" \
  --xfree-threads "$xfree_threads" --xfree-blocks "$xfree_blocks" \
  --larson-threads "$larson_threads" --larson-ops "$larson_ops" \
  --thread-threads "$thread_threads" --thread-seconds "$thread_seconds" \
  --simple-sizes "$simple_sizes" --output "$b/results.md" --header "$header" \
  --pair patched/tree-without "${args[@]}"
