#!/bin/sh
# Runs inside a test VM (busybox sh): the counter methods of percpu-bench,
# interleaved in ROUNDS rounds, 1 thread and one per CPU.  Prints
#   bench METHOD THREADS NS-PER-OP
# per run; bench/vm_bench.py turns these into ratios on the host.
#   counter-guest.sh ROUNDS ITERATIONS
set -e
rounds=$1
iterations=$2
cpus=$(grep -c '^processor' /proc/cpuinfo)
methods="rseq-counter rseq-counter-lib rseq-spinlock lock-add lock-cmpxchg mutex percpu-atomic"
round=0
while [ "$round" -lt "$rounds" ]; do
  for threads in 1 "$cpus"; do
    for m in $methods; do
      ns=$(./percpu-bench "$m" "$threads" $((iterations / threads)))
      echo "bench $m $threads $ns"
    done
  done
  round=$((round + 1))
done
