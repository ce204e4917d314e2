#!/bin/bash
# make install PREFIX=DIR: copy the toolchain under DIR:
#   DIR/bin/rseq-gcc, rseq-g++, rseq-clang, rseq-run, rseq-python
#   DIR/bin/TRIPLE-rseq-gcc, TRIPLE-rseq-g++   each built cross ABI's drivers
#   DIR/abis                        the ABI table the drivers read
#   DIR/sysroot, DIR/sysroot-i386   the patched glibc (x86_64, i386), and
#   DIR/sysroot-ABI                 that of each built cross ABI
#   DIR/python                      the rseq Python package
# The wrappers find the table and their sysroot relative to themselves,
# so the installed copy works wherever DIR is.
. "$(dirname "$0")/common.sh"

prefix=${1:-}
[ -n "$prefix" ] || die "usage: make install PREFIX=DIR"
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
rm -rf "$prefix/python/build"

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
