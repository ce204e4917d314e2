# Shared settings for the build scripts.  Sourced, not executed.
#
# Every path is derived from the checkout, so the tree can live anywhere;
# build outputs go under out/ (ignored by git).

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$TOP/out}
JOBS=${JOBS:-$(nproc)}

# ccache keys name paths under the checkout relative to it and leave out
# the working directory, so a second clone (CI clones afresh each run)
# reuses what the first compiled.  Debug info then names the directory of
# whichever clone compiled an object first.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$TOP}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

# The base of the glibc series, pinned in glibc-patches/glibc.pin;
# build-scripts/fetch-glibc-source.sh brings the tarball (glibc_tarball).
# (Scripts that copy common.sh elsewhere, as the fetch tests do, may
# have no pin: the version is then empty.)
GLIBC_VERSION=$(awk '$1 == "Version:" { print $2 }' "$TOP/glibc-patches/glibc.pin" 2>/dev/null || true)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

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

# The files that define the patched glibc source tree.
glibc_inputs() {
  (cd "$TOP" && {
    echo glibc-patches/glibc.pin
    echo glibc-patches/series
    series_patches glibc-patches/series | sed 's,^,glibc-patches/,'
    echo build-scripts/prepare-glibc.sh
    echo build-scripts/glibc-series.sh
  })
}

# The cpu_opv kernels (build-scripts/vms, kernel "cpu_opv"): Debian's
# source package pinned in kernel-patches/$CPU_OPV_SOURCE.pin (fetched
# like a stock kernel's, build-scripts/fetch-linux-source.sh), plus
# kernel-patches/series.  LINUX_VERSION names the base in messages.
CPU_OPV_SOURCE=linux-source-6.12
LINUX_VERSION=6.12

# The path of the pristine glibc tarball (fetched on first use).
glibc_tarball() {
  "$TOP/build-scripts/fetch-glibc-source.sh"
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
    echo "# rseq toolchain (glibc_unpack, build-scripts/common.sh) writes this"
    echo "# stand-in so that glibc's build, which visits every subdirectory,"
    echo "# finds nothing to do here."
    echo "subdir := manual"
    echo "include ../Makeconfig"
    echo "include ../Rules"
  } > "$1/Makefile"
}

# Patches listed in a series file (comments and blank lines skipped).
series_patches() {
  grep -v '^\([[:space:]]\|#\|$\)' "$1" | while read -r p _; do echo "$p"; done
}

# The files that define the patched, configured test kernel.
kernel_inputs() {
  (cd "$TOP" && {
    echo "kernel-patches/$CPU_OPV_SOURCE.pin"
    echo kernel-patches/series
    series_patches kernel-patches/series | sed 's,^,kernel-patches/,'
    echo kernel-patches/vm.config
    echo kernel-patches/vm-cpu-opv.config
    echo build-scripts/build-kernel.sh
  })
}

# The stock kernels (build-scripts/vms, column kernel "stock:NAME"):
# Debian's source package pinned in kernel-patches/NAME.pin, built
# without the series.  pin_field PIN KEY prints one field of a pin file
# ("Key: value" lines, # comments).
pin_field() {
  awk -v key="$2" 'tolower($1) == tolower(key) ":" { sub(/^[^:]*:[ \t]*/, ""); print; found = 1; exit }
    END { exit !found }' "$1" || die "no field $2 in ${1#"$TOP"/}"
}

# The files that define a stock kernel built from PIN (relative to $TOP),
# but for its config fragments.  Not the scripts that fetch the source:
# the .deb they bring is named by its sha256 in the artifact cache key.
stock_kernel_inputs() {
  echo "$1"
  echo build-scripts/build-kernel.sh
}

# unpack_linux_deb DEB PACKAGE DIR: the kernel tree of a Debian
# linux-source .deb (usr/src/PACKAGE.tar.xz) into DIR, emptied first.
unpack_linux_deb() {
  local deb=$1 package=$2 dir=$3
  rm -rf "$dir"
  mkdir -p "$dir"
  dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/src/$package.tar.xz" |
    tar -xJf - -C "$dir" --strip-components=1 ||
    die "${deb##*/} does not hold usr/src/$package.tar.xz"
  [ -f "$dir/Makefile" ] || die "no kernel tree in usr/src/$package.tar.xz of ${deb##*/}"
}

# The ABI table (build-scripts/abis).  abi_names [SET] lists the ABIs,
# all or those of one set (host or cross); abi_field ABI COLUMN prints
# one column ("-" reads as empty).
ABI_TABLE=$TOP/build-scripts/abis
# Its one reader (also the drivers', rseq-run's, make's and the tests').
RSEQ_ABI=$TOP/build-scripts/bin/rseq-abi

abi_names() {
  "$RSEQ_ABI" names "$@"
}

# table_field TABLE KIND ROW COLUMN COLUMNS...: one column of a row of a
# table file (first word = row name; "-" reads as empty).  KIND names the
# rows in error messages.
table_field() {
  local table=$1 kind=$2 row=$3 column=$4 i=0 name
  shift 4
  for name in "$@"; do
    i=$((i + 1))
    [ "$name" = "$column" ] || continue
    awk -v row="$row" -v col=$i '!/^[[:space:]]*#/ && $1 == row {
        v = $col; if (v == "-") v = ""; print v; found = 1 }
      END { exit !found }' "$table" ||
      die "unknown $kind '$row' (known: $(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$table" | tr '\n' ' '))"
    return
  done
  die "no column '$column' in $table"
}

abi_field() {
  local value
  value=$("$RSEQ_ABI" field "$1" "$2") || exit 1
  echo "$value"
}

# The build machine's own ABI, from the table rather than by name: the
# one whose triple is what the machine's gcc targets (gcc -dumpmachine),
# or without gcc (deps.sh before it is installed) the one named like the
# machine or whose triple starts with its CPU (uname -m); rseq-abi
# native.  Its glibc builds without --build, in out/glibc-build
# (glibc_build_dir); the other host ABIs are its multilib flavours (i386
# with gcc -m32 on x86_64).
native_abi() {
  local abi
  abi=$("$RSEQ_ABI" native) || exit 1
  echo "$abi"
}

# The build tree of ABI's glibc: out/glibc-build-ABI, out/glibc-build for
# the native ABI (its historical name, which existing trees and ccache
# keep).
glibc_build_dir() {
  if [ "$1" = "$(native_abi)" ]; then echo "$OUT/glibc-build"; else echo "$OUT/glibc-build-$1"; fi
}

# The C compiler driver of an ABI: rseq-gcc for the host ABIs (-m32
# selects i386), TRIPLE-rseq-gcc (make cross) for the others.
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

abi_driver() {
  if [ "$(abi_field "$1" set)" = host ]; then
    echo "$OUT/bin/rseq-gcc"
  else
    echo "$OUT/bin/$(abi_field "$1" triple)-rseq-gcc"
  fi
}

# The allocators bench/malloc-bench.sh loads with LD_PRELOAD into the
# stock-glibc binaries, Debian packages that deps.sh bench (make bench)
# installs: one "NAME PACKAGE LIBRARY" line each.
malloc_bench_allocators() {
  local lib
  lib=/usr/lib/$(abi_field "$(native_abi)" triple)
  echo "jemalloc libjemalloc2 $lib/libjemalloc.so.2"
  echo "tcmalloc libtcmalloc-minimal4 $lib/libtcmalloc_minimal.so.4"
  echo "mimalloc libmimalloc2.0 $lib/libmimalloc.so.2.0"
}

# The test VM table (build-scripts/vms).  vm_names lists the VMs;
# vm_field VM COLUMN prints one column ("-" reads as empty); vm_dir VM
# is the VM's output directory (out/vm for the native VM, x86_64 here;
# out/vm-<vm> else) and vm_build_dir VM its kernel's build tree
# (out/linux-build, out/linux-build-<vm>).
VM_TABLE=$TOP/build-scripts/vms
VM_COLUMNS=(vm arch cross image qemu machine cpu console extra debarch kernel runs nodes)

vm_names() {
  awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$VM_TABLE"
}

vm_field() {
  table_field "$VM_TABLE" VM "$1" "$2" "${VM_COLUMNS[@]}"
}

# The build machine's Debian architecture (amd64 where dpkg is missing).
host_debarch() {
  dpkg --print-architecture 2>/dev/null || echo amd64
}

# The build machine's own test VM, from the table rather than by name:
# the cpu_opv VM of the machine's Debian architecture (column debarch).
# build-kernel.sh and run-vm take it when no VM is named; its outputs
# keep their historical names without the VM's (out/vm, out/linux-build).
native_vm() {
  local vm debarch
  debarch=$(host_debarch)
  for vm in $(vm_names); do
    if [ "$(vm_field "$vm" debarch)" = "$debarch" ] && [ "$(vm_field "$vm" kernel)" = cpu_opv ]; then
      echo "$vm"
      return
    fi
  done
  die "no cpu_opv VM of build-scripts/vms has this machine's Debian architecture ($debarch)"
}

# Whether VM is the native one (without a native VM, none is).
is_native_vm() {
  [ "$1" = "$(native_vm 2>/dev/null)" ]
}

vm_dir() {
  vm_field "$1" vm >/dev/null
  if is_native_vm "$1"; then echo "$OUT/vm"; else echo "$OUT/vm-$1"; fi
}

vm_build_dir() {
  vm_field "$1" vm >/dev/null
  if is_native_vm "$1"; then echo "$OUT/linux-build"; else echo "$OUT/linux-build-$1"; fi
}

# The VM whose ABIs (build-scripts/abis, column vm) VM runs: the column
# "runs", or VM itself.  vm_abis VM lists those ABIs.
vm_abi_vm() {
  local runs
  runs=$(vm_field "$1" runs)
  echo "${runs:-$1}"
}

vm_abis() {
  local vm abi
  vm=$(vm_abi_vm "$1")
  for abi in $(abi_names); do
    [ "$(abi_field "$abi" vm)" != "$vm" ] || echo "$abi"
  done
}

# Whether VM takes the host's /bin/busybox (its Debian architecture is
# the host's) rather than one fetch-busybox.sh downloads.
vm_host_busybox() {
  [ "$(vm_field "$1" debarch)" = "$(host_debarch)" ]
}

# The config fragments of VM's kernel, in merge order (relative to
# $TOP): vm.config (every VM), vm-cpu-opv.config (the cpu_opv kernels),
# vm-<vm>.config.
vm_fragments() {
  echo kernel-patches/vm.config
  [ "$(vm_field "$1" kernel)" != cpu_opv ] || echo kernel-patches/vm-cpu-opv.config
  echo "kernel-patches/vm-$1.config"
}
