#!/bin/bash
# make install PREFIX=DIR: copy the toolchain (sysroots, rseq-gcc,
# rseq-run) under DIR.  The wrappers find their sysroot relative to
# themselves, so the installed copy works wherever DIR is.
. "$(dirname "$0")/common.sh"

prefix=${1:-}
[ -n "$prefix" ] || die "usage: make install PREFIX=DIR"
mkdir -p "$prefix/bin"
prefix=$(cd "$prefix" && pwd -P)
for s in sysroot sysroot-i386; do
  [ -d "$OUT/$s" ] || continue
  log "installing $s into $prefix"
  rm -rf "${prefix:?}/$s"
  cp -a "$OUT/$s" "$prefix/$s"
done
if [ -d "$OUT/python" ]; then
  rm -rf "${prefix:?}/python"
  cp -a "$OUT/python" "$prefix/python"
  rm -rf "$prefix/python/build"
fi
install -m 755 "$TOP/build-scripts/bin/rseq-gcc" "$TOP/build-scripts/bin/rseq-run" \
  "$TOP/build-scripts/bin/rseq-python" "$prefix/bin/"
log "installed: $prefix/bin/rseq-gcc, $prefix/bin/rseq-run"
