#!/bin/bash
# The counter benchmark (percpu-bench, every method, 1 thread and one
# per CPU) in every test VM whose own ABI is built (x86_64 by make, the
# others by make cross), reported as ratios only.  Part of make bench.
#   bench/vm-counter.sh [ROUNDS [ITERATIONS]]     (default 7, 200000)
. "$(dirname "$0")/../build-scripts/lib/abi.sh"
. "$(dirname "$0")/../build-scripts/lib/vm.sh"

rounds=${1:-7}
iterations=${2:-200000}
b=$OUT/bench
mkdir -p "$b"

counter_in_vm() {
  local vm=$1 dir=$b/vm-$1
  mkdir -p "$dir"
  "$(abi_driver "$vm")" -O2 -Wall -pthread -I"$TOP/percpu" -o "$dir/percpu-bench" \
    "$TOP/bench/percpu-bench.c" "$TOP/percpu/percpu.c"
  "$TOP/build-scripts/vm/run-vm" --vm "$vm" --timeout 1800 --file "$dir/percpu-bench" \
    --file "$TOP/bench/counter-guest.sh" \
    "counter=sh ./counter-guest.sh $rounds $iterations" > "$dir/vm.log" 2>&1 || true
  grep -q '^PASS: counter' "$dir/vm.log" || echo "(the $vm VM run failed; see out/bench/vm-$vm/vm.log)" >&2
}

echo
echo "### Counter benchmark in each test VM: ratios of ns/op (QEMU TCG, -smp 2, median of $rounds)"
echo
echo "TCG emulates every instruction and turns atomics into the host's"
echo "atomics or locks, so the VMs' absolute times and their ratios to"
echo "atomics do not predict hardware; they compare methods on one VM."
echo
logs=()
for vm in $(vm_names); do
  abi_names | grep -qxF -- "$vm" || continue
  [ -x "$(abi_driver "$vm")" ] && [ -e "$(vm_dir "$vm")/$(basename "$(vm_field "$vm" image)")" ] || continue
  [ -e "$OUT/$(abi_field "$vm" sysroot)/$(abi_field "$vm" ldso)" ] || continue
  counter_in_vm "$vm"
  logs+=("$vm=$b/vm-$vm/vm.log")
done
/usr/bin/python3 "$TOP/bench/vm_bench.py" "${logs[@]}"
