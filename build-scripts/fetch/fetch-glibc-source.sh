#!/bin/bash
# Print the path of the pristine glibc tarball pinned in
# glibc-patches/glibc.pin, fetching it first if this machine has none.
# prepare-glibc.sh and glibc-series.sh call it (through glibc_tarball,
# lib/glibc.sh); messages go to stderr.
#
# fetch-orig-tarball.sh does the work, as for every pinned Debian orig
# tarball: GLIBC_TARBALL (a copy from elsewhere, its sha256 checked),
# out/glibc-orig/ or the artifact cache (entry glibc-orig-<sha>), else
# Debian's source index of the pin's Suites through apt's own client,
# else one error naming the file and GLIBC_TARBALL.
exec "$(dirname "${BASH_SOURCE[0]}")/fetch-orig-tarball.sh" \
  "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/glibc-patches/glibc.pin" make
