#!/bin/bash
# The time slice extension (examples/slice-lock.c) in the Linux 7.x test
# VM (x86_64-linux7, stock kernel with CONFIG_RSEQ_SLICE_EXTENSION), 2
# CPUs, 3 threads per CPU on one spinlock, without and with the
# extension: ratios of preempted lock holds.  Part of make bench.
#   bench/slice-bench.sh [ROUNDS [SECONDS]]     (default 5, 3)
. "$(dirname "$0")/../build-scripts/lib/vm.sh"

rounds=${1:-5}
seconds=${2:-3}
vm=x86_64-linux7
b=$OUT/bench/slice
mkdir -p "$b"

echo
echo "### Time slice extension: a spinlock holder that asks not to be preempted (QEMU TCG, Linux 7.x VM, -smp 2)"
echo
image=$(vm_dir "$vm")/$(basename "$(vm_field "$vm" image)")
if [ ! -e "$image" ]; then
  echo "(no $vm kernel: run build-scripts/build/build-kernel.sh $vm)"
  exit 0
fi
"$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$b/slice-lock" "$TOP/examples/slice-lock.c"
# The TSC as clocksource: under TCG the kernel would pick the HPET, which
# the vDSO cannot read, and every clock_gettime in the lock holder would
# be a system call, which ends a granted extension.
"$TOP/build-scripts/vm/run-vm" --vm "$vm" --timeout 1800 --append "tsc=reliable clocksource=tsc" \
  --file "$b/slice-lock" \
  --file "$TOP/bench/slice-guest.sh" \
  "slice=sh ./slice-guest.sh $rounds $seconds 5000 50000" > "$b/vm.log" 2>&1 || true
grep -q '^PASS: slice' "$b/vm.log" || { echo "(the VM run failed; see out/bench/slice/vm.log)"; exit 1; }
/usr/bin/python3 "$TOP/bench/slice_bench.py" "$b/vm.log"
