#!/bin/bash
# The artifact cache of build-scripts/lib/cache.sh, in a scratch directory:
# an entry restores exactly what was stored, another key misses, only
# the two most recently used entries of a name stay, and
# RSEQ_CACHE_DIR=off neither stores nor restores.
#   artifact-cache.sh SCRATCH-DIR
set -euo pipefail
scratch=$1
rm -rf "$scratch"
mkdir -p "$scratch/src/usr/include" "$scratch/src/lib"
printf 'payload\n' > "$scratch/src/usr/include/a.h"
ln -s a.h "$scratch/src/usr/include/b.h"
printf 'stamp\n' > "$scratch/src/.stamp"
export RSEQ_CACHE_DIR=$scratch/cache
. "$(dirname "$0")/../../build-scripts/lib/cache.sh"

fail() { echo "FAIL: $*"; exit 1; }

cache_store demo k1 "$scratch/src" 2>/dev/null
cache_restore demo k1 "$scratch/copy" 2>/dev/null || fail "stored entry not restored"
diff -r --no-dereference "$scratch/src" "$scratch/copy" || fail "restored tree differs"
! cache_restore demo k2 "$scratch/miss" 2>/dev/null || fail "another key restored something"
[ ! -e "$scratch/miss" ] || [ -z "$(ls -A "$scratch/miss")" ] || fail "a miss left files"

cache_store demo k2 "$scratch/src" usr 2>/dev/null
cache_restore demo k2 "$scratch/part" 2>/dev/null || fail "entry of selected paths not restored"
[ -f "$scratch/part/usr/include/a.h" ] && [ ! -e "$scratch/part/.stamp" ] ||
  fail "selected paths: wrong contents"

sleep 1
cache_store demo k3 "$scratch/src" 2>/dev/null
entries=$(cd "$RSEQ_CACHE_DIR" && ls demo-*.tar | sort | tr '\n' ' ')
[ "$entries" = "demo-k2.tar demo-k3.tar " ] || fail "pruning kept: $entries"
[ -z "$(ls -A "$RSEQ_CACHE_DIR" | grep -v '^demo-')" ] || fail "temporary files left behind"

ARTIFACT_CACHE=off
cache_store demo k4 "$scratch/src" 2>/dev/null
[ ! -e "$scratch/cache/demo-k4.tar" ] || fail "off still stored"
! cache_restore demo k3 "$scratch/off" 2>/dev/null || fail "off still restored"
echo "artifact cache: ok"
