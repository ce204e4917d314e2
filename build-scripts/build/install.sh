#!/bin/bash
# make install PREFIX=DIR: copy the toolchain under DIR:
#   DIR/bin/rseq-gcc, rseq-g++, rseq-clang, rseq-run, rseq-python, rseq-abi
#   DIR/bin/TRIPLE-rseq-gcc, TRIPLE-rseq-g++   each built cross ABI's drivers
#   DIR/abis                        the ABI table the drivers read
#   DIR/sysroot, DIR/sysroot-i386   the patched glibc (x86_64, i386), and
#   DIR/sysroot-ABI                 that of each built cross ABI
#   DIR/python                      the rseq Python package
#   DIR/share/rseq-toolchain/percpu     the per-CPU data structures
#                                       (percpu.c, percpu.h) and
#   DIR/share/rseq-toolchain/examples   the C examples, to build with
#                                       DIR/bin/rseq-gcc
#   DIR/share/rseq-toolchain/experiments  the Python experiments
#                                       (bindings/python/examples) and
#                                       the C workload malloc_cache.py
#                                       builds (bench/malloc-xfree.c)
#   DIR/include/rseq-percpu/percpu.h,   the per-CPU data structures as a
#   DIR/lib/librseq-percpu.a and        library, for pkg-config
#   DIR/lib/pkgconfig/rseq-percpu.pc    rseq-percpu; DIR/lib-ABI/ for each
#                                       other host ABI (lib-i386: -m32)
#   DIR/share/man/man3                  the man pages (docs/man/man3)
# The wrappers find the table and their sysroot relative to themselves,
# so the installed copy works wherever DIR is.
#   install.sh --check DIR   only check DIR (make install runs it before
#                            building anything)
. "$(dirname "$0")/../lib/abi.sh"

# DIR must be given, and be a directory that exists or can be created
# and written.
check_prefix() {
  local dir=$1 parent
  [ -n "$dir" ] || die "make install needs PREFIX=DIR (the directory to install into)"
  if [ -e "$dir" ]; then
    [ -d "$dir" ] || die "PREFIX=$dir is not a directory"
    [ -w "$dir" ] || die "PREFIX=$dir is not writable"
    return 0
  fi
  parent=$dir
  while [ ! -e "$parent" ]; do parent=$(dirname "$parent"); done
  [ -d "$parent" ] && [ -w "$parent" ] ||
    die "PREFIX=$dir cannot be created: $parent is not a writable directory"
}

if [ "${1:-}" = --check ]; then
  check_prefix "${2:-}"
  exit 0
fi
prefix=${1:-}
check_prefix "$prefix"
mkdir -p "$prefix/bin"
prefix=$(cd "$prefix" && pwd -P)
installed=()

copy_tree() {
  local name=$1
  [ -d "$OUT/$name" ] || return 0
  log "installing $name into $prefix"
  rm -rf "${prefix:?}/$name"
  cp -a "$OUT/$name" "$prefix/$name"
  installed+=("$prefix/$name")
}

# The per-CPU library of host ABI $1, built by the driver just installed
# (so against the installed sysroot) into DIR/lib (the native ABI) or
# DIR/lib-ABI, with the pkg-config file beside it.  -fPIC: it may be
# linked into shared libraries as well as programs.
install_percpu_lib() {
  local abi=$1 dir flags
  [ -d "$prefix/$(abi_field "$abi" sysroot)" ] || return 0
  dir=$prefix/lib
  [ "$abi" = "$(native_abi)" ] || dir=$prefix/lib-$abi
  # The cc column's flags after the compiler (",-m32" for i386).
  flags=$(abi_field "$abi" cc | cut -s -d, -f2- | tr , ' ')
  mkdir -p "$dir/pkgconfig"
  # $flags is a list of options.
  # shellcheck disable=SC2086
  "$prefix/bin/rseq-gcc" $flags -O2 -fPIC -Wall -c -o "$dir/percpu.o" \
    "$TOP/percpu/percpu.c" || die "building the per-CPU library ($abi) failed"
  rm -f "$dir/librseq-percpu.a"
  ar rcs "$dir/librseq-percpu.a" "$dir/percpu.o" ||
    die "archiving the per-CPU library ($abi) failed"
  rm -f "$dir/percpu.o"
  install -m 644 "$TOP/percpu/rseq-percpu.pc" "$dir/pkgconfig/"
  installed+=("$dir/librseq-percpu.a" "$dir/pkgconfig/rseq-percpu.pc")
}

# Every ABI's sysroot that was built, in the table's order.
for abi in $(abi_names); do
  copy_tree "$(abi_field "$abi" sysroot)"
done
copy_tree python
# The binding's build files are not part of the package.
rm -rf "$prefix/python/build" "$prefix/python/build.log"

share=$prefix/share/rseq-toolchain
rm -rf "$share"
mkdir -p "$share/percpu" "$share/examples"
install -m 644 "$TOP/percpu/percpu.c" "$TOP/percpu/percpu.h" "$share/percpu/"
install -m 644 "$TOP"/examples/*.c "$share/examples/"
installed+=("$share/percpu" "$share/examples")
# The experiments find the drivers in DIR/bin from there
# (malloc_cache.py), and its workload beside them.
mkdir -p "$share/experiments"
install -m 644 "$TOP"/bindings/python/examples/*.py "$TOP/bench/malloc-xfree.c" \
  "$TOP/bench/malloc-bench-util.h" "$TOP/bench/vmhwm.h" "$share/experiments/"
installed+=("$share/experiments")

# Over what an earlier install left, not instead of the directory: DIR
# may be a prefix that other packages' pages share.
mkdir -p "$prefix/share/man/man3"
install -m 644 "$TOP"/docs/man/man3/*.3 "$prefix/share/man/man3/"
installed+=("$prefix/share/man/man3")

for tool in rseq-gcc rseq-g++ rseq-clang rseq-run rseq-python rseq-abi; do
  install -m 755 "$TOP/build-scripts/bin/$tool" "$prefix/bin/"
  installed+=("$prefix/bin/$tool")
done
install -m 644 "$(abi_table)" "$prefix/abis"
installed+=("$prefix/abis")

# The cross drivers of the sysroots just copied.
links=$("$TOP/build-scripts/build/install-cross-drivers.sh" "$prefix/bin")
[ -z "$links" ] || mapfile -t -O "${#installed[@]}" installed <<<"$links"
# The per-CPU library, by the drivers just installed, once DIR/bin is
# complete (install-cross-drivers.sh adds to it).
install -D -m 644 "$TOP/percpu/percpu.h" "$prefix/include/rseq-percpu/percpu.h"
installed+=("$prefix/include/rseq-percpu")
for abi in $(abi_names host); do
  install_percpu_lib "$abi"
done
log "installed:"
printf '    %s\n' "${installed[@]}" >&2
