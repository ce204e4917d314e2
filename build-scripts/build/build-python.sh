#!/bin/bash
# Build the Python binding into out/python: the rseq package with its
# compiled modules inside it (rseq/_percpu*.so, cffi, percpu/percpu.c
# included, and rseq/_fastcpu*.so, CPython), compiled against the
# patched glibc's headers.
. "$(dirname "$0")/../lib/cache.sh"

dest=$OUT/python
stamp=$dest/.stamp
# The binding's C includes percpu/percpu.c (one implementation of the
# per-CPU structures for C and Python).
inputs=$( (cd "$TOP" && find bindings/python percpu -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.cdef'; echo build-scripts/build/build-python.sh; echo "$OUT/sysroot/.rseq-stamp") | hash_inputs)
if [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
  exit 0
fi
log "building the Python binding into out/python"
rm -rf "$dest"
mkdir -p "$dest/build"
/usr/bin/python3 "$TOP/bindings/python/build_rseq.py" "$OUT/sysroot/usr/include" "$dest/build" \
  > "$dest/build.log" 2>&1 || { cat "$dest/build.log"; die "Python binding build failed"; }
cp -r "$TOP/bindings/python/rseq" "$dest/rseq"
find "$dest/rseq" -name __pycache__ -prune -exec rm -rf {} +
cp "$dest"/build/rseq/_percpu*.so "$dest"/build/rseq/_fastcpu*.so "$dest/rseq/"
echo "$inputs" > "$stamp"
