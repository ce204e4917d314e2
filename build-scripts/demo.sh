#!/bin/bash
# Build examples/thread-info.c with rseq-gcc and run it: the closing step
# of `make`, showing the patched glibc's view of each thread.
. "$(dirname "$0")/common.sh"

mkdir -p "$OUT/examples"
"$OUT/bin/rseq-gcc" -O2 -Wall -pthread -o "$OUT/examples/thread-info" \
  "$TOP/examples/thread-info.c"
log "demo: out/examples/thread-info (built with out/bin/rseq-gcc)"
"$OUT/examples/thread-info"
