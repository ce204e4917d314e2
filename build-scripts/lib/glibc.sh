# shellcheck shell=bash
# glibc's source and build trees: the pinned pristine glibc, the patched
# tree's inputs, and where each ABI's glibc is built.  Sourced, not
# executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pins.sh"
. "$(dirname "${BASH_SOURCE[0]}")/abi.sh"

# The base of the glibc series, pinned in glibc-patches/glibc.pin;
# build-scripts/fetch/fetch-glibc-source.sh brings the tarball
# (glibc_tarball).  (A copy of the scripts without the pin reads an
# empty version.)
GLIBC_VERSION=$(awk '$1 == "Version:" { print $2 }' "$TOP/glibc-patches/glibc.pin" 2>/dev/null || true)

# The files that define the patched glibc source tree.
glibc_inputs() {
  (cd "$TOP" && {
    echo glibc-patches/glibc.pin
    echo glibc-patches/series
    series_patches glibc-patches/series | sed 's,^,glibc-patches/,'
    echo build-scripts/build/prepare-glibc.sh
    echo build-scripts/patches/glibc-series.sh
  })
}

# The path of the pristine glibc tarball (fetched on first use).
glibc_tarball() {
  "$TOP/build-scripts/fetch/fetch-glibc-source.sh"
}

# glibc_unpack DIR: pristine glibc in DIR (removed first).  Debian's orig
# tarball leaves out the manual (its GFDL parts), but glibc's build
# still enters manual/: an empty subdirectory Makefile stands in for it
# (as Debian's own build does), untracked, outside the series.
glibc_unpack() {
  local tarball
  tarball=$(glibc_tarball) || exit 1
  rm -rf "$1"
  mkdir -p "$1"
  tar -xf "$tarball" -C "$1" --strip-components=1
  [ -e "$1/manual" ] || manual_stub "$1/manual"
}

# Pristine glibc, unpacked once per pin into out/glibc-pristine: the
# reference builds (build-glibc.sh ABI --pristine) and glibc's
# benchtests come from it.
glibc_pristine_source() {
  local dir=$OUT/glibc-pristine base
  base=$(sed -n 's/^SHA256: //p' "$TOP/glibc-patches/glibc.pin")
  [ "$(cat "$dir/.rseq-base" 2>/dev/null)" = "$base" ] && return 0
  log "unpacking pristine glibc $GLIBC_VERSION into ${dir#$TOP/}"
  glibc_unpack "$dir"
  echo "$base" > "$dir/.rseq-base"
}

# The build tree of pristine glibc for ABI (glibc_build_dir's naming).
glibc_pristine_build_dir() {
  if [ "$1" = "$(native_abi)" ]; then echo "$OUT/glibc-pristine-build"
  else echo "$OUT/glibc-pristine-build-$1"; fi
}

manual_stub() {
  mkdir -p "$1"
  {
    echo "# Not glibc's manual: Debian's orig tarball leaves it out, and the"
    echo "# rseq toolchain (glibc_unpack, build-scripts/lib/glibc.sh) writes this"
    echo "# stand-in so that glibc's build, which visits every subdirectory,"
    echo "# finds nothing to do here."
    echo "subdir := manual"
    echo "include ../Makeconfig"
    echo "include ../Rules"
  } > "$1/Makefile"
}

# The build tree of ABI's glibc: out/glibc-build-ABI, out/glibc-build for
# the native ABI (its historical name, which existing trees and ccache
# keep).
glibc_build_dir() {
  if [ "$1" = "$(native_abi)" ]; then echo "$OUT/glibc-build"; else echo "$OUT/glibc-build-$1"; fi
}

# Bring the generated headers of glibc build tree BUILD (source SRC) up
# to date before an incremental build: glibc's "make" remakes
# dl-tunable-list.h only when it is missing or asked for, not when a
# dl-tunables.list changed, and the objects that use a new tunable then
# fail to compile.
glibc_refresh_generated() {
  local src=$1 build=$2
  [ -f "$build/config.status" ] || return 0
  make -r -C "$src" objdir="$build" "$build/dl-tunable-list.h" >/dev/null
}
