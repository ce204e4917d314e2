#!/bin/bash
# Build Linux 7's own rseq selftests (tools/testing/selftests/rseq of the
# linux-source-7 pinned in kernel-patches/linux-source-7.pin) with
# out/bin/rseq-gcc, so that they run on the patched glibc; print the
# directory of the programs.  tests/rseq.selftests runs them.
#
# The kernel tree is the one build-kernel.sh unpacks for the stock Linux
# 7 VM (out/linux-src-7), unpacked here from the pinned .deb when that
# VM's kernel came from the artifact cache; its UAPI headers are
# installed into out/rseq-selftests/usr (the selftests want Linux 7's
# <linux/rseq.h>, newer than Debian 12's).  Messages go to stderr.
. "$(dirname "$0")/../lib/kernel.sh"

source_name=linux-source-7
src=$OUT/linux-src-7
work=$OUT/rseq-selftests
[ -x "$OUT/bin/rseq-gcc" ] || die "no out/bin/rseq-gcc (run make)"

read -r deb sha package _ < <("$TOP/build-scripts/fetch/fetch-linux-source.sh" "$source_name" || echo "- - - -") || true
[ -n "${deb:-}" ] && [ "$deb" != - ] || die "no $source_name source (see above)"

# The same lock and stamp as build-kernel.sh's stock source.
exec 9>"$src.lock"
flock 9
if [ "$(cat "$src/.rseq-source-stamp" 2>/dev/null)" != "$sha" ]; then
  log "unpacking $package.tar.xz of ${deb##*/}"
  unpack_linux_deb "$deb" "$package" "$src"
  echo "$sha" > "$src/.rseq-source-stamp"
fi
exec 9>&-

stamp="$sha $(sha256sum "$OUT/bin/rseq-gcc" "$OUT/sysroot/lib64/libc.so.6" 2>/dev/null | sha256sum | cut -c1-16)"
if [ "$(cat "$work/.stamp" 2>/dev/null)" = "$stamp" ] && [ -x "$work/bin/param_test" ]; then
  echo "$work/bin"
  exit 0
fi
rm -rf "$work"
mkdir -p "$work/bin"
log "installing Linux 7's UAPI headers into ${work#"$TOP"/}/usr"
make -s -C "$src" O="$work/kbuild" ARCH=x86 INSTALL_HDR_PATH="$work/usr" headers_install \
  >"$work/headers.log" 2>&1 || { tail -20 "$work/headers.log" >&2; die "headers_install failed"; }
log "building the rseq selftests with out/bin/rseq-gcc"
make -C "$src/tools/testing/selftests/rseq" CC="$OUT/bin/rseq-gcc" OUTPUT="$work/bin" \
  KHDR_INCLUDES="-isystem $work/usr/include" >"$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log" >&2; die "the rseq selftests did not build (${work#"$TOP"/}/build.log)"; }
cp "$src"/tools/testing/selftests/rseq/run_*.sh "$work/bin/"
echo "$stamp" > "$work/.stamp"
echo "$work/bin"
