# shellcheck shell=bash
# Build stamps and the artifact cache: what decides that an output is up
# to date, and the outputs kept across clones.  Sourced, not executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"

# Hash of the files listed on stdin (paths relative to $TOP), used as a
# build stamp so that an unchanged tree is not rebuilt.
hash_inputs() {
  (cd "$TOP" && sort | xargs -r sha256sum) | sha256sum | cut -c1-16
}

# The tools that turn those files into binaries: compiler and linker
# versions, and a listing of the kernel UAPI headers glibc is built
# against (for ABI triples, /usr/<triple>/include).
#   toolchain_id CC [HEADER-DIR...]
toolchain_id() {
  local cc=$1
  shift
  { "$cc" -v 2>&1 || true; } | tail -n 1
  { "${cc%gcc}ld" --version 2>/dev/null || true; } | head -n 1
  [ $# -eq 0 ] || { find "$@" -type f -printf '%P %s %T@\n' 2>/dev/null || true; } | sort | sha256sum
}

# Build outputs kept across clones, content-addressed: an entry is named
# for what it holds (glibc-aarch64, kernel-arm) and the hash of every input
# that defines it, so an edited input misses and is built afresh.  A fresh
# machine has none and builds everything.  RSEQ_CACHE_DIR=off disables it.
ARTIFACT_CACHE=${RSEQ_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rseq-toolchain}

# cache_restore NAME KEY DIR: unpack the entry into DIR, or return 1.
cache_restore() {
  local entry=$ARTIFACT_CACHE/$1-$2.tar
  [ "$ARTIFACT_CACHE" != off ] && [ -f "$entry" ] || return 1
  mkdir -p "$3"
  tar -xf "$entry" -C "$3" || return 1
  touch "$entry"
  log "restored $1 from ${entry/#$HOME/\~}"
}

# cache_store NAME KEY DIR [PATH...]: save PATHs of DIR (default: all of
# it), written aside and renamed so that a reader never sees half an
# entry; keeps the two most recently used entries of NAME.  Failing to
# store only costs the next clone a build.
cache_store() {
  local name=$1 key=$2 dir=$3 tmp
  shift 3
  [ "$ARTIFACT_CACHE" != off ] || return 0
  mkdir -p "$ARTIFACT_CACHE" && tmp=$(mktemp "$ARTIFACT_CACHE/.$name.XXXXXX") || return 0
  if tar -cf "$tmp" -C "$dir" "${@:-.}"; then
    mv "$tmp" "$ARTIFACT_CACHE/$name-$key.tar"
  else
    rm -f "$tmp"
    return 0
  fi
  ls -t "$ARTIFACT_CACHE/$name"-*.tar | tail -n +3 | xargs -r rm -f
}
