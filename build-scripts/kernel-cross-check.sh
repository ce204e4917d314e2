#!/bin/bash
# Compile-check the cpu_opv wiring for arm64, arm and powerpc with Debian's
# cross compilers: configure each (allnoconfig + what cpu_opv needs), then
# build cpu_opv, the scheduler helper and the architecture's system call
# tables, and check that the number 500 maps to sys_cpu_opv.
#   kernel-cross-check.sh [SRC] [ARCH...]     (default: out/linux-src, all)
# Exits 77 if a cross compiler is missing.
. "$(dirname "$0")/common.sh"

src=${1:-$OUT/linux-src}
shift || true
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(arm64 arm powerpc)
[ -f "$src/kernel/cpu_opv.c" ] || die "$src is not a patched kernel tree (run build-kernel.sh)"

cross_prefix() {
  case "$1" in
    arm64) echo aarch64-linux-gnu- ;;
    arm) echo arm-linux-gnueabihf- ;;
    powerpc) echo powerpc64le-linux-gnu- ;;
    *) die "no cross compiler known for $1" ;;
  esac
}

# Options on top of allnoconfig; every one must survive olddefconfig.
arch_config() {
  printf '%s\n' CONFIG_EXPERT=y CONFIG_MULTIUSER=y CONFIG_SMP=y CONFIG_RSEQ=y \
    CONFIG_CPU_OPV=y CONFIG_PROC_FS=y CONFIG_PROC_SYSCTL=y CONFIG_SYSCTL=y
  case "$1" in
    arm64) echo CONFIG_COMPAT=y ;;
    arm) printf '%s\n' CONFIG_ARCH_VIRT=y CONFIG_MMU=y ;;
    powerpc) printf '%s\n' CONFIG_PPC64=y CONFIG_CPU_LITTLE_ENDIAN=y ;;
  esac
}

# Objects that hold the system call tables.
arch_objects() {
  case "$1" in
    arm64) echo arch/arm64/kernel/sys.o arch/arm64/kernel/sys32.o ;;
    arm) echo arch/arm/kernel/entry-common.o ;;
    powerpc) echo arch/powerpc/kernel/systbl.o ;;
  esac
}

check_arch() {
  local arch=$1 cross build
  cross=$(cross_prefix "$arch")
  command -v "${cross}gcc" >/dev/null || { echo "UNSUPPORTED: ${cross}gcc not installed"; return 77; }
  build=$OUT/linux-cross/$arch
  rm -rf "$build"
  mkdir -p "$build"
  local mk=(make -s -C "$src" O="$build" ARCH="$arch" CROSS_COMPILE="$cross")
  "${mk[@]}" allnoconfig >/dev/null
  arch_config "$arch" > "$build/fragment.config"
  "$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
    "$build/fragment.config" >"$build/merge.log" 2>&1
  "${mk[@]}" olddefconfig >/dev/null 2>&1
  while read -r opt; do
    grep -qx "$opt" "$build/.config" || { echo "FAIL: $arch config lost $opt"; return 1; }
  done < "$build/fragment.config"
  "${mk[@]}" -j"$JOBS" prepare >"$build/build.log" 2>&1 &&
    "${mk[@]}" -j"$JOBS" W=1 kernel/cpu_opv.o kernel/sched/core.o \
      $(arch_objects "$arch") >>"$build/build.log" 2>&1 ||
    { tail -20 "$build/build.log"; echo "FAIL: $arch build"; return 1; }
  if grep -E 'cpu_opv\.c.*warning' "$build/build.log"; then
    echo "FAIL: $arch: warnings in cpu_opv.c"; return 1
  fi
  # The generated or generic unistd header must give cpu_opv number 500.
  grep -rqs '__NR_cpu_opv[[:space:]]*(\?[[:space:]]*\(__NR_SYSCALL_BASE[[:space:]]*+[[:space:]]*\)\?500' \
    "$build/arch/$arch/include/generated/uapi/asm/" "$src/include/uapi/asm-generic/unistd.h" ||
    { echo "FAIL: $arch: __NR_cpu_opv is not 500"; return 1; }
  # ... and the table must point at the real entry point, not sys_ni.
  (cd "$build" && "${cross}nm" $(arch_objects "$arch")) | grep 'sys_cpu_opv$' >/dev/null ||
    { echo "FAIL: $arch: the system call table does not reference sys_cpu_opv"; return 1; }
  echo "PASS: $arch"
}

status=0
for arch in "${arches[@]}"; do
  check_arch "$arch" || { rc=$?; [ $rc -eq 77 ] && [ $status -eq 0 ] && status=77; [ $rc -ne 77 ] && status=1; }
done
exit $status
