# shellcheck shell=bash
# What every build script shares: where the checkout and its outputs
# are, the build's settings, and messages.  Sourced, not executed.  The
# other libraries of this directory source it (and the ones they build
# on) themselves, so a script sources just the libraries whose functions
# it calls, or this one alone.
#
# Every path is derived from the checkout, so the tree can live anywhere;
# build outputs go under out/ (ignored by git).

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$TOP/out}
JOBS=${JOBS:-$(nproc)}

# ccache keys name paths under the checkout relative to it and leave out
# the working directory, so a second clone (CI clones afresh each run)
# reuses what the first compiled.  Debug info then names the directory of
# whichever clone compiled an object first.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$TOP}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
