# shellcheck shell=bash
# The test VM table (build-scripts/tables/vms) and what it names for each
# VM.  vm_names lists the VMs; vm_field VM COLUMN prints one column ("-"
# reads as empty); vm_dir VM is the VM's output directory (out/vm for the
# native VM, x86_64 here; out/vm-<vm> else) and vm_build_dir VM its
# kernel's build tree (out/linux-build, out/linux-build-<vm>).  Sourced,
# not executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
. "$(dirname "${BASH_SOURCE[0]}")/abi.sh"

VM_TABLE=$TOP/build-scripts/tables/vms
VM_COLUMNS=(vm arch cross image qemu machine cpu console extra debarch kernel runs nodes)

# table_field TABLE KIND ROW COLUMN COLUMNS...: one column of a row of a
# table file (first word = row name; "-" reads as empty).  KIND names the
# rows in error messages.
table_field() {
  local table=$1 kind=$2 row=$3 column=$4 i=0 name
  shift 4
  for name in "$@"; do
    i=$((i + 1))
    [ "$name" = "$column" ] || continue
    awk -v row="$row" -v col=$i '!/^[[:space:]]*#/ && $1 == row {
        v = $col; if (v == "-") v = ""; print v; found = 1 }
      END { exit !found }' "$table" ||
      die "unknown $kind '$row' (known: $(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$table" | tr '\n' ' '))"
    return
  done
  die "no column '$column' in $table"
}

vm_names() {
  awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$VM_TABLE"
}

vm_field() {
  table_field "$VM_TABLE" VM "$1" "$2" "${VM_COLUMNS[@]}"
}

# The build machine's Debian architecture (amd64 where dpkg is missing).
host_debarch() {
  dpkg --print-architecture 2>/dev/null || echo amd64
}

# The build machine's own test VM, from the table rather than by name:
# the cpu_opv VM of the machine's Debian architecture (column debarch).
# build-kernel.sh and run-vm take it when no VM is named; its outputs
# keep their historical names without the VM's (out/vm, out/linux-build).
native_vm() {
  local vm debarch
  debarch=$(host_debarch)
  for vm in $(vm_names); do
    if [ "$(vm_field "$vm" debarch)" = "$debarch" ] && [ "$(vm_field "$vm" kernel)" = cpu_opv ]; then
      echo "$vm"
      return
    fi
  done
  die "no cpu_opv VM of build-scripts/tables/vms has this machine's Debian architecture ($debarch)"
}

# Whether VM is the native one (without a native VM, none is).
is_native_vm() {
  [ "$1" = "$(native_vm 2>/dev/null)" ]
}

vm_dir() {
  vm_field "$1" vm >/dev/null
  if is_native_vm "$1"; then echo "$OUT/vm"; else echo "$OUT/vm-$1"; fi
}

vm_build_dir() {
  vm_field "$1" vm >/dev/null
  if is_native_vm "$1"; then echo "$OUT/linux-build"; else echo "$OUT/linux-build-$1"; fi
}

# The VM whose ABIs (the ABI table's column vm) VM runs: the column
# "runs", or VM itself.  vm_abis VM lists those ABIs.
vm_abi_vm() {
  local runs
  runs=$(vm_field "$1" runs)
  echo "${runs:-$1}"
}

vm_abis() {
  local vm abi
  vm=$(vm_abi_vm "$1")
  for abi in $(abi_names); do
    [ "$(abi_field "$abi" vm)" != "$vm" ] || echo "$abi"
  done
}

# Whether VM takes the host's /bin/busybox (its Debian architecture is
# the host's) rather than one fetch-busybox.sh downloads.
vm_host_busybox() {
  [ "$(vm_field "$1" debarch)" = "$(host_debarch)" ]
}

# The config fragments of VM's kernel, in merge order (relative to
# $TOP): vm.config (every VM), vm-cpu-opv.config (the cpu_opv kernels),
# vm-<vm>.config.
vm_fragments() {
  echo kernel-patches/vm.config
  [ "$(vm_field "$1" kernel)" != cpu_opv ] || echo kernel-patches/vm-cpu-opv.config
  echo "kernel-patches/vm-$1.config"
}
