#!/bin/bash
# Make an installed glibc tree usable as a gcc --sysroot:
#   - add the kernel UAPI headers (linux/, asm/, asm-generic/) glibc does not install;
#   - give gcc's multilib directory names (lib32 for -m32) to the i386 tree.
#   sysroot-fixup.sh ABI SYSROOT
. "$(dirname "$0")/common.sh"

abi=$1
sysroot=$2
inc=$sysroot/usr/include
multiarch=/usr/include/x86_64-linux-gnu

for d in linux asm-generic; do
  cp -r "/usr/include/$d" "$inc/"
done
# x86's asm/ headers select 32- or 64-bit definitions by __i386__.
cp -r "$multiarch/asm" "$inc/"

if [ "$abi" = i386 ]; then
  ln -sfn lib "$sysroot/lib32"
  ln -sfn lib "$sysroot/usr/lib32"
fi
