#!/bin/bash
# Check (and as root, install) the Debian packages the build needs.
# As non-root, print the exact apt-get line and stop.
. "$(dirname "$0")/common.sh"

# package:command-or-file that proves it is installed
REQUIRED=(
  "gcc:/usr/bin/gcc"
  "make:/usr/bin/make"
  "gawk:/usr/bin/gawk"
  "bison:/usr/bin/bison"
  "python3:/usr/bin/python3"
  "gettext:/usr/bin/msgfmt"
  "rsync:/usr/bin/rsync"
  "xz-utils:/usr/bin/xz"
  "patch:/usr/bin/patch"
  "glibc-source:$GLIBC_TARBALL"
  "dejagnu:/usr/bin/runtest"
  "expect:/usr/bin/expect"
  # Not gcc-multilib: it conflicts with the cross compilers below (both
  # want /usr/include/asm); build-glibc.sh supplies the kernel headers.
  "gcc-12-multilib:/usr/lib/gcc/x86_64-linux-gnu/12/32/crtbegin.o"
  # rseq-g++ and rseq-clang (C++ for both ABIs, clang 14).
  "g++:/usr/bin/g++"
  "lib32stdc++-12-dev:/usr/lib/gcc/x86_64-linux-gnu/12/32/libstdc++.so"
  "clang:/usr/bin/clang"
  "python3-cffi:/usr/lib/python3/dist-packages/cffi/__init__.py"
  "python3-pytest:/usr/lib/python3/dist-packages/pytest/__init__.py"
  "python3-dev:/usr/include/python3.11/Python.h"
  "python3-matplotlib:/usr/lib/python3/dist-packages/matplotlib/__init__.py"
  "linux-libc-dev:/usr/include/linux/rseq.h"
  # The cpu_opv test kernel (kernel-patches/) and its VM.
  "linux-source-6.1:/usr/src/linux-source-6.1.tar.xz"
  "bc:/usr/bin/bc"
  "flex:/usr/bin/flex"
  "libelf-dev:/usr/include/libelf.h"
  "libssl-dev:/usr/include/openssl/ssl.h"
  "cpio:/usr/bin/cpio"
  "busybox-static:/bin/busybox"
  "qemu-system-x86:/usr/bin/qemu-system-x86_64"
  # Compile checks of the arm64, arm and powerpc wiring.
  "gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc"
  "gcc-arm-linux-gnueabihf:/usr/bin/arm-linux-gnueabihf-gcc"
  "gcc-powerpc64le-linux-gnu:/usr/bin/powerpc64le-linux-gnu-gcc"
)

missing=()
for entry in "${REQUIRED[@]}"; do
  pkg=${entry%%:*}
  probe=${entry#*:}
  # A custom GLIBC_TARBALL makes the glibc-source package unnecessary.
  [ -e "$probe" ] || missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get install -y ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  printf 'Missing Debian packages. Run as root:\n  apt-get update && %s\n' "$line" >&2
  exit 1
fi
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
