#!/bin/bash
# Make an installed glibc tree usable as a gcc --sysroot:
#   - add the kernel UAPI headers (linux/, asm/, asm-generic/) glibc does
#     not install, those of the ABI's architecture;
#   - give gcc's multilib directory names (lib32 for -m32) to the tree of
#     a host ABI built with -m32 (i386);
#   - give a cross ABI's tree the cross gcc's libgcc_s.so.1.
#   sysroot-fixup.sh ABI SYSROOT
. "$(dirname "$0")/../lib/abi.sh"

abi=$1
sysroot=$2
inc=$sysroot/usr/include
triple=$(abi_field "$abi" triple)
set=$(abi_field "$abi" set)
libdir=$(abi_field "$abi" libdir)

# Debian installs the build machine's UAPI headers in /usr/include (asm/
# under the multiarch directory, named for the native ABI's triple;
# x86's selects 32- or 64-bit definitions by __i386__, so it serves both
# host ABIs) and a cross architecture's in /usr/<triple>/include
# (linux-libc-dev-<arch>-cross).
copy_uapi_headers() {
  local dir=/usr/include asm
  asm=/usr/include/$(abi_field "$(native_abi)" triple)/asm
  if [ "$set" = cross ]; then
    dir=/usr/$triple/include asm=/usr/$triple/include/asm
  fi
  [ -d "$asm" ] || die "no kernel headers for $abi in ${asm%/asm}"
  cp -r "$dir/linux" "$dir/asm-generic" "$asm" "$inc/"
}

# The cross gcc's libgcc_s.so is a linker script naming libgcc_s.so.1,
# which ld looks for along -L (the sysroot's libdir comes first) and the
# program loads at run time through its rpath into the sysroot: glibc
# itself dlopens it for pthread_cancel and backtraces.  In the test VM
# there is no other copy.
copy_libgcc_s() {
  local cc lib
  cc=$(abi_field "$abi" cc | cut -d, -f1)
  lib=$($cc -print-file-name=libgcc_s.so.1)
  [ -f "$lib" ] || die "$cc has no libgcc_s.so.1 (install libgcc-s1-<arch>-cross)"
  cp -L "$lib" "$sysroot/$libdir/"
}

copy_uapi_headers
if [ "$set" = host ] && [[ ,$(abi_field "$abi" cc), == *,-m32,* ]]; then
  ln -sfn lib "$sysroot/lib32"
  ln -sfn lib "$sysroot/usr/lib32"
fi
if [ "$set" = cross ]; then
  copy_libgcc_s
fi
