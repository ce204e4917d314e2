#!/bin/sh
# Runs inside the Linux 7.x test VM (busybox sh): examples/slice-lock
# without and with the time slice extension, interleaved in ROUNDS
# rounds, 3 threads per CPU.  bench/slice_bench.py turns the lines into
# ratios on the host.
#   slice-vm.sh ROUNDS SECONDS
set -e
rounds=$1
seconds=$2
nsecs=$(cat /sys/kernel/debug/rseq/slice_ext_nsecs 2>/dev/null || echo unknown)
echo "slice_ext_nsecs $nsecs"
round=0
while [ "$round" -lt "$rounds" ]; do
  ./slice-lock --seconds "$seconds"
  ./slice-lock --slice --seconds "$seconds"
  round=$((round + 1))
done
