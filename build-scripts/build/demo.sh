#!/bin/bash
# Build the examples with rseq-gcc and run them: the closing step of
# `make`.  thread-info shows the patched glibc's view of each thread;
# percpu-counter counts with per-CPU operations (README, "Per-CPU
# operations").
. "$(dirname "$0")/../lib/base.sh"

mkdir -p "$OUT/examples"
"$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$OUT/examples/thread-info" \
  "$TOP/examples/thread-info.c"
log "demo: out/examples/thread-info (built with out/bin/rseq-gcc)"
"$OUT/examples/thread-info"

"$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$OUT/examples/percpu-counter" \
  "$TOP/examples/percpu-counter.c"
log "demo: out/examples/percpu-counter 4 100000 (built with out/bin/rseq-gcc)"
"$OUT/examples/percpu-counter" 4 100000
