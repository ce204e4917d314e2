#!/bin/bash
# Configure, build and install the patched glibc for one ABI.
#   build-glibc.sh [x86_64|i386]
# Installs into out/sysroot (x86_64) or out/sysroot-i386.
. "$(dirname "$0")/common.sh"

abi=${1:-x86_64}
case "$abi" in
  x86_64) build=$OUT/glibc-build; sysroot=$OUT/sysroot
          cfg=(CC="gcc" CXX="g++" --host=x86_64-linux-gnu) ;;
  i386)   build=$OUT/glibc-build-i386; sysroot=$OUT/sysroot-i386
          cfg=(CC="gcc -m32" CXX="g++ -m32" --host=i686-linux-gnu --build=x86_64-linux-gnu
               --with-headers="$OUT/kernel-headers") ;;
  *) die "unknown ABI '$abi' (x86_64 or i386)" ;;
esac

stamp=$sysroot/.rseq-stamp
inputs=$( { glibc_inputs; echo build-scripts/build-glibc.sh; echo build-scripts/sysroot-fixup.sh; } | hash_inputs)
if [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
  log "glibc ($abi) is up to date"
  exit 0
fi

"$TOP/build-scripts/prepare-glibc.sh"

# Kernel UAPI headers usable with -m32 (x86's asm/ serves both ABIs) without
# gcc-multilib's /usr/include/asm, which conflicts with the cross compilers.
if [ "$abi" = i386 ]; then
  rm -rf "$OUT/kernel-headers"
  mkdir -p "$OUT/kernel-headers"
  cp -r /usr/include/linux /usr/include/asm-generic /usr/include/x86_64-linux-gnu/asm \
    "$OUT/kernel-headers/"
fi

mkdir -p "$build"
if [ ! -f "$build/config.status" ]; then
  log "configuring glibc ($abi)"
  (cd "$build" && "$OUT/glibc-src/configure" "${cfg[@]}" \
      --prefix=/usr --enable-kernel=4.18 --disable-werror \
      --disable-profile --disable-crypt --without-selinux --disable-nscd \
      >configure.log 2>&1) || { tail -20 "$build/configure.log"; die "glibc configure failed ($abi)"; }
fi

log "building glibc ($abi) with $JOBS jobs (log: out/${build#$OUT/}/build.log)"
if ! make -C "$build" -j"$JOBS" >"$build/build.log" 2>&1; then
  grep -E 'error|Error' "$build/build.log" | head -30 >&2
  die "glibc build failed ($abi); see ${build#$TOP/}/build.log"
fi

log "installing glibc ($abi) into ${sysroot#$TOP/}"
rm -rf "$sysroot"
make -C "$build" install DESTDIR="$sysroot" MAKEINFO=: -j"$JOBS" >"$build/install.log" 2>&1 ||
  { tail -20 "$build/install.log"; die "glibc install failed ($abi)"; }
"$TOP/build-scripts/sysroot-fixup.sh" "$abi" "$sysroot"
echo "$inputs" > "$stamp"
