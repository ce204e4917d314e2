#!/bin/bash
# Check (and as root, install) the Debian packages the build needs.
# As non-root, print the exact apt-get line and stop.
#   deps.sh          the host set, for "make" (x86_64 and i386, the x86 VM)
#   deps.sh cross    the cross set, for "make cross": the test VMs of the
#                    other architectures (their qemu, cross compilers and
#                    Debian's busybox-static of each architecture)
#   deps.sh bench    the bench set, for "make bench": the allocators
#                    bench/malloc-bench.sh compares glibc's malloc with
#                    (jemalloc, tcmalloc, mimalloc; bench/allocators.sh
#                    lists them)
. "$(dirname "$0")/../lib/base.sh"
. "$TOP/bench/allocators.sh"

set_name=${1:-host}

# package:command-or-file that proves it is installed
HOST=(
  "gcc:/usr/bin/gcc"
  "make:/usr/bin/make"
  "gawk:/usr/bin/gawk"
  "bison:/usr/bin/bison"
  "python3:/usr/bin/python3"
  "gettext:/usr/bin/msgfmt"
  "rsync:/usr/bin/rsync"
  "xz-utils:/usr/bin/xz"
  "patch:/usr/bin/patch"
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
  # Programs that use Debian's libraries through rseq-gcc (and the
  # toolchain tests that build with zlib, libelf and OpenSSL).
  "zlib1g-dev:/usr/include/zlib.h"
  "pkg-config:/usr/bin/pkg-config"
  # The man pages: their checks render them (tests/rseq.toolchain/
  # user-docs.sh) and read them installed (install-check.sh).
  "groff-base:/usr/bin/groff"
  "man-db:/usr/bin/man"
  # Debian's file, which make check builds with rseq-gcc from its source
  # (tests/rseq.toolchain/real-projects.sh), links zlib, libbz2 and liblzma.
  "libbz2-dev:/usr/include/bzlib.h"
  "liblzma-dev:/usr/include/lzma.h"
  # Real programs under the per-CPU malloc cache (rseq.malloc's
  # real_programs.py, bench/real-programs-bench.sh): xz (above), zstd,
  # git, and Debian's own tests of python3's threading.
  "zstd:/usr/bin/zstd"
  "git:/usr/bin/git"
  "libpython3.11-testsuite:/usr/lib/python3.11/test/test_threading.py"
  # The cpu_opv test kernel (kernel-patches/) and its VM; its source,
  # Debian 13's linux-source-6.12, comes through fetch-linux-source.sh.
  "bc:/usr/bin/bc"
  "flex:/usr/bin/flex"
  "libelf-dev:/usr/include/libelf.h"
  "libssl-dev:/usr/include/openssl/ssl.h"
  "cpio:/usr/bin/cpio"
  "busybox-static:/bin/busybox"
  "qemu-system-x86:/usr/bin/qemu-system-x86_64"
  # Repeated glibc and kernel builds (a new clone reuses the cache).
  "ccache:/usr/bin/ccache"
  # Compile checks of the arm64, arm and powerpc wiring.
  "gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc"
  "gcc-arm-linux-gnueabihf:/usr/bin/arm-linux-gnueabihf-gcc"
  "gcc-powerpc64le-linux-gnu:/usr/bin/powerpc64le-linux-gnu-gcc"
)

CROSS=(
  # qemu-system-arm has both qemu-system-arm and qemu-system-aarch64.
  "qemu-system-arm:/usr/bin/qemu-system-aarch64"
  "qemu-system-ppc:/usr/bin/qemu-system-ppc64"
  # Repeated kernel builds (build-kernel.sh uses it when installed).
  "ccache:/usr/bin/ccache"
  "gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc"
  "gcc-arm-linux-gnueabihf:/usr/bin/arm-linux-gnueabihf-gcc"
  "gcc-powerpc64le-linux-gnu:/usr/bin/powerpc64le-linux-gnu-gcc"
  # Static test programs for the VMs.
  "libc6-dev-arm64-cross:/usr/aarch64-linux-gnu/lib/libc.a"
  "libc6-dev-armhf-cross:/usr/arm-linux-gnueabihf/lib/libc.a"
  "libc6-dev-ppc64el-cross:/usr/powerpc64le-linux-gnu/lib/libc.a"
  # The test kernels need these from the host set too (their source
  # comes through fetch-linux-source.sh).
  "bc:/usr/bin/bc"
  "flex:/usr/bin/flex"
  "bison:/usr/bin/bison"
  "rsync:/usr/bin/rsync"
)

BENCH=()
if [ "$set_name" = bench ]; then
  while read -r _ pkg lib; do BENCH+=("$pkg:$lib"); done < <(malloc_bench_allocators)
fi

case "$set_name" in
  host) REQUIRED=("${HOST[@]}") ;;
  cross) REQUIRED=("${CROSS[@]}") ;;
  bench) REQUIRED=("${BENCH[@]}") ;;
  *) die "usage: deps.sh [cross|bench]" ;;
esac

# The busybox-static of each cross VM's architecture, downloaded under
# out/busybox by apt with a private configuration in out/apt-<debarch>
# (no root needed; dpkg's architectures and the system's apt lists are
# left alone).
fetch_busybox() {
  [ "$set_name" = cross ] || return 0
  "$TOP/build-scripts/fetch/fetch-busybox.sh"
}

missing=()
for entry in "${REQUIRED[@]}"; do
  pkg=${entry%%:*}
  probe=${entry#*:}
  [ -e "$probe" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  fetch_busybox
  exit
fi

line="apt-get install -y ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  printf 'Missing Debian packages. Run as root:\n  apt-get update && %s\n' "$line" >&2
  exit 1
fi
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
fetch_busybox
