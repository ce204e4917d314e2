#!/bin/bash
# Compile-check the cpu_opv wiring of the cross architectures with Debian's
# cross compilers: configure each (allnoconfig + what cpu_opv needs), then
# build cpu_opv, the scheduler helper and the architecture's system call
# tables, and check that the number 500 maps to sys_cpu_opv.
#   kernel-cross-check.sh [SRC] [ARCH...]     (default: out/linux-src, all)
#   kernel-cross-check.sh --list              the ARCHes checked by default
# The architectures and their compilers come from the VM table
# (build-scripts/tables/vms): the kernel ARCH of every cpu_opv VM built with a
# cross prefix (arm64, arm, powerpc), and that prefix.  Exits 77 if a
# cross compiler is missing.
. "$(dirname "$0")/../lib/vm.sh"

# The cpu_opv VMs whose kernels build with a cross compiler.
cross_vms() {
  local vm
  for vm in $(vm_names); do
    [ "$(vm_field "$vm" kernel)" = cpu_opv ] && [ -n "$(vm_field "$vm" cross)" ] && echo "$vm"
  done
  return 0
}

# Their kernel ARCHes, each once, in table order.
default_arches() {
  local vm
  for vm in $(cross_vms); do vm_field "$vm" arch; done | awk '!seen[$0]++'
}

# The CROSS_COMPILE prefix of kernel ARCH $1: its cpu_opv VM's.
cross_prefix() {
  local vm
  for vm in $(cross_vms); do
    if [ "$(vm_field "$vm" arch)" = "$1" ]; then
      vm_field "$vm" cross
      return
    fi
  done
  die "no cpu_opv VM of build-scripts/tables/vms builds kernel ARCH $1 with a cross compiler (known: $(echo $(default_arches)))"
}

if [ "${1:-}" = --list ]; then
  default_arches
  exit 0
fi
src=${1:-$OUT/linux-src}
shift || true
arches=("$@")
[ ${#arches[@]} -gt 0 ] || mapfile -t arches < <(default_arches)
[ ${#arches[@]} -gt 0 ] || die "no cross architecture in build-scripts/tables/vms"
[ -f "$src/kernel/cpu_opv.c" ] || die "$src is not a patched kernel tree (run build-kernel.sh)"

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
    *) die "kernel-cross-check.sh: the system call table objects of ARCH $1 are not known (arch_objects)" ;;
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

# Every ARCH asked for must be known, before anything is built.
for arch in "${arches[@]}"; do
  cross_prefix "$arch" >/dev/null
  arch_objects "$arch" >/dev/null
done

status=0
for arch in "${arches[@]}"; do
  check_arch "$arch" || { rc=$?; [ $rc -eq 77 ] && [ $status -eq 0 ] && status=77; [ $rc -ne 77 ] && status=1; }
done
exit $status
