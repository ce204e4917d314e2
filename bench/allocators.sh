# shellcheck shell=bash
# The allocators bench/malloc-bench.sh loads with LD_PRELOAD into the
# stock-glibc binaries, Debian packages that deps.sh bench (make bench)
# installs.  Sourced, not executed.
. "$(dirname "${BASH_SOURCE[0]}")/../build-scripts/lib/abi.sh"

# One "NAME PACKAGE LIBRARY" line each.
malloc_bench_allocators() {
  local lib
  lib=/usr/lib/$(abi_field "$(native_abi)" triple)
  echo "jemalloc libjemalloc2 $lib/libjemalloc.so.2"
  echo "tcmalloc libtcmalloc-minimal4 $lib/libtcmalloc_minimal.so.4"
  echo "mimalloc libmimalloc2.0 $lib/libmimalloc.so.2.0"
}
