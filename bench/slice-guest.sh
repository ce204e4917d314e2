#!/bin/sh
# Runs inside the Linux 7.x test VM (busybox sh): examples/slice-lock
# without and with the time slice extension, interleaved in ROUNDS
# rounds, 3 threads per CPU, once for each extension length in NSECS
# (debugfs rseq/slice_ext_nsec; the kernel takes 5000 to 50000).  Each
# run's line is followed by the kernel's slice counters from
# rseq/stats (CONFIG_RSEQ_STATS), so that grants the program never sees
# (revoked by the timer before it looks) are counted too.
# bench/slice_bench.py turns the lines into ratios on the host.
#   slice-guest.sh ROUNDS SECONDS [NSECS...]
set -e
rounds=$1
seconds=$2
shift 2
knob=/sys/kernel/debug/rseq/slice_ext_nsec
stats=/sys/kernel/debug/rseq/stats

kernel_counters() {
  if [ -r "$stats" ]; then
    awk '/^s(grant|expir|revok|yield|abort):/ { printf "%s=%s ", $1, $2 } END { print "" }' "$stats" | tr -d :
  else
    echo "none"
  fi
}

[ $# -gt 0 ] || set -- 5000
for nsecs in "$@"; do
  if [ -w "$knob" ]; then
    echo "$nsecs" > "$knob"
  fi
  echo "slice_ext_nsec $(cat "$knob" 2>/dev/null || echo unknown)"
  round=0
  while [ "$round" -lt "$rounds" ]; do
    for mode in "" --slice; do
      echo "counters_before $(kernel_counters)"
      ./slice-lock $mode --seconds "$seconds"
      echo "counters_after $(kernel_counters)"
    done
    round=$((round + 1))
  done
done
