#!/bin/bash
# Produce the patched glibc source tree in out/glibc-src: pristine glibc
# (glibc-patches/glibc.pin) with the patches of glibc-patches/series
# applied in order (build-scripts/patches/glibc-series.sh apply), the same tree
# `git am` of the series gives (glibc-series.sh check).
#
# The tree is assembled in a staging directory and synchronised into
# out/glibc-src by content, so files that did not change keep their
# timestamps and make rebuilds only what an edit really touched.
. "$(dirname "$0")/../lib/base.sh"

stage=$OUT/glibc-stage
src=$OUT/glibc-src

"$TOP/build-scripts/patches/glibc-series.sh" apply "$stage"
mkdir -p "$src"
rsync -rlc --delete "$stage/" "$src/"
rm -rf "$stage"
log "patched source ready in out/glibc-src"
