#!/bin/bash
# make install PREFIX=DIR: copy the toolchain under DIR:
#   DIR/bin/rseq-gcc, rseq-g++, rseq-clang, rseq-run, rseq-python
#   DIR/sysroot, DIR/sysroot-i386   the patched glibc (x86_64, i386)
#   DIR/python                      the rseq Python package
# The wrappers find their sysroot relative to themselves, so the installed
# copy works wherever DIR is.
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

copy_tree sysroot
copy_tree sysroot-i386
copy_tree python
rm -rf "$prefix/python/build"

for tool in rseq-gcc rseq-g++ rseq-clang rseq-run rseq-python; do
  install -m 755 "$TOP/build-scripts/bin/$tool" "$prefix/bin/"
  installed+=("$prefix/bin/$tool")
done
log "installed:"
printf '    %s\n' "${installed[@]}" >&2
