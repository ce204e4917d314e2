#!/bin/bash
# make install PREFIX=DIR: copy the toolchain under DIR:
#   DIR/bin/rseq-gcc, rseq-g++, rseq-clang, rseq-run, rseq-python
#   DIR/bin/TRIPLE-rseq-gcc, TRIPLE-rseq-g++   each built cross ABI's drivers
#   DIR/abis                        the ABI table the drivers read
#   DIR/sysroot, DIR/sysroot-i386   the patched glibc (x86_64, i386), and
#   DIR/sysroot-ABI                 that of each built cross ABI
#   DIR/python                      the rseq Python package
#   DIR/share/rseq-toolchain/percpu     the per-CPU data structures
#                                       (percpu.c, percpu.h) and
#   DIR/share/rseq-toolchain/examples   the C examples, to build with
#                                       DIR/bin/rseq-gcc
# The wrappers find the table and their sysroot relative to themselves,
# so the installed copy works wherever DIR is.
#   install.sh --check DIR   only check DIR (make install runs it before
#                            building anything)
. "$(dirname "$0")/common.sh"

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

for tool in rseq-gcc rseq-g++ rseq-clang rseq-run rseq-python; do
  install -m 755 "$TOP/build-scripts/bin/$tool" "$prefix/bin/"
  installed+=("$prefix/bin/$tool")
done
install -m 644 "$ABI_TABLE" "$prefix/abis"
installed+=("$prefix/abis")
# The cross drivers of the sysroots just copied.
links=$("$TOP/build-scripts/install-cross-drivers.sh" "$prefix/bin")
[ -z "$links" ] || mapfile -t -O "${#installed[@]}" installed <<<"$links"
log "installed:"
printf '    %s\n' "${installed[@]}" >&2
