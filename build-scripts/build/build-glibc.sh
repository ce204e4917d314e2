#!/bin/bash
# Configure, build and install the patched glibc for one ABI of the table
# (build-scripts/tables/abis):
#   build-glibc.sh [ABI]            (default: the native ABI, x86_64 here)
#   build-glibc.sh ABI --tree SRC BUILD
#                                   configure and build another glibc source
#                                   tree in BUILD with the same flags, without
#                                   installing it (bench/ compares such builds)
#   build-glibc.sh ABI --pristine   the same for pristine glibc (the pinned
#                                   tarball, no patch): source out/glibc-pristine,
#                                   build out/glibc-pristine-build[-ABI]; the
#                                   reference of make bench and make glibc-check
# The native ABI is the build machine's own (native_abi, lib/abi.sh).
# Builds in out/glibc-build-ABI (out/glibc-build for the native ABI, its
# historical name) and installs into out/<sysroot column>.  Cross ABIs
# need Debian's gcc-<triple> and linux-libc-dev-<arch>-cross.  The
# compilers run through ccache when it is installed.
. "$(dirname "$0")/../lib/abi.sh"
. "$(dirname "$0")/../lib/glibc.sh"
. "$(dirname "$0")/../lib/cache.sh"

native=$(native_abi)
abi=${1:-$native}
tree_src= tree_build=
if [ "${2:-}" = --pristine ]; then
  [ $# = 2 ] || die "usage: build-glibc.sh ABI --pristine"
  glibc_pristine_source
  tree_src=$OUT/glibc-pristine
  tree_build=$(glibc_pristine_build_dir "$abi")
elif [ "${2:-}" = --tree ]; then
  [ $# = 4 ] || die "usage: build-glibc.sh ABI --tree SRC BUILD"
  tree_src=$(cd "$3" && pwd) || die "no glibc source tree $3"
  tree_build=$4
elif [ $# -gt 1 ]; then
  die "usage: build-glibc.sh [ABI] | build-glibc.sh ABI --tree SRC BUILD | build-glibc.sh ABI --pristine"
fi
abi_names | grep -qxF -- "$abi" ||
  die "unknown ABI '$abi' (known: $(echo $(abi_names)))"
triple=$(abi_field "$abi" triple)
set=$(abi_field "$abi" set)
sysroot=$OUT/$(abi_field "$abi" sysroot)
build=$(glibc_build_dir "$abi")

# The cc column: the command and its ABI flags, comma-separated.
cc_words() {
  abi_field "$abi" cc | tr ',' ' '
}

# The C++ compiler that matches the C one (gcc -> g++, same flags).
# glibc only uses it for C++ tests; "false" makes configure drop it
# rather than fall back to the build machine's g++ when cross compiling.
cxx_words() {
  local cc cxx flags
  read -r cc flags <<<"$(cc_words)"
  cxx=${cc%gcc}g++
  command -v "$cxx" >/dev/null || cxx=false
  echo "$cxx${flags:+ $flags}"
}

# ccache makes a rebuild of unchanged sources cheap (CI, scratch builds);
# without it the compilers are called directly.
launcher() {
  if command -v ccache >/dev/null; then echo "ccache "; fi
}

# Kernel UAPI headers for --with-headers: linux/, asm/ and asm-generic/
# only.  The native ABI uses /usr/include as is.  Its multilib flavour
# (i386) cannot (gcc-multilib's asm/ would conflict with the cross
# compilers) and takes the native ABI's asm/ from Debian's multiarch
# directory, named for the native triple (x86's asm/ serves both ABIs);
# a cross ABI's /usr/<triple>/include also holds Debian's own glibc
# headers, which must not shadow the patched ones.
kernel_headers() {
  local dir asm
  if [ "$abi" = "$native" ]; then
    return 0
  elif [ "$set" = host ]; then
    dir=$OUT/kernel-headers asm=/usr/include/$(abi_field "$native" triple)/asm
    set -- /usr/include/linux /usr/include/asm-generic
  else
    dir=$OUT/kernel-headers-$abi asm=/usr/$triple/include/asm
    set -- "/usr/$triple/include/linux" "/usr/$triple/include/asm-generic"
  fi
  [ -d "$asm" ] || die "no kernel headers for $abi in ${asm%/asm} (install linux-libc-dev-<arch>-cross)"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -r "$@" "$asm" "$dir/"
  echo "$dir"
}

configure_args() {
  local cc headers
  cc=$(cc_words)
  command -v "${cc%% *}" >/dev/null || die "compiler for $abi not found: $cc (install gcc-$triple)"
  args=(CC="$(launcher)$cc" CXX="$(launcher)$(cxx_words)" --host="$triple")
  [ "$abi" = "$native" ] || args+=(--build="$(abi_field "$native" triple)")
  headers=$(kernel_headers)
  [ -z "$headers" ] || args+=(--with-headers="$headers")
  # The host ABIs build with glibc's default -Werror (GCC 12 gives no
  # warning on pristine 2.43 or the series).  The cross compilers keep
  # it off: Debian's cross GCC is the same 12.2, but a warning there
  # would stop make cross for what glibc's own CI does not build.
  [ "$set" = host ] || args+=(--disable-werror)
}

# Configure (once) and build the source tree $1 in $2.
configure_and_build() {
  local src=$1 build=$2 id
  configure_args
  args+=(--prefix=/usr --enable-kernel=4.18 --disable-profile --disable-crypt
         --without-selinux --disable-nscd)
  # A build tree configured for another glibc release (an out/ from
  # before the base moved) or with other options is no use: start afresh.
  id="$(sed -n 's/^SHA256: //p' "$TOP/glibc-patches/glibc.pin") $(printf '%s\n' "${args[@]}" | sha256sum | cut -c1-16)"
  if [ -d "$build" ] && [ "$(cat "$build/.rseq-base" 2>/dev/null)" != "$id" ]; then
    rm -rf "$build"
  fi
  mkdir -p "$build"
  echo "$id" > "$build/.rseq-base"
  if [ ! -f "$build/config.status" ]; then
    log "configuring glibc ($abi) in ${build#$TOP/}"
    (cd "$build" && "$src/configure" "${args[@]}" >configure.log 2>&1) ||
      { tail -20 "$build/configure.log"; die "glibc configure failed ($abi)"; }
  fi
  log "building glibc ($abi) with $JOBS jobs (log: ${build#$TOP/}/build.log)"
  glibc_refresh_generated "$src" "$build" ||
    die "glibc ($abi): cannot remake dl-tunable-list.h"
  if ! make -C "$build" -j"$JOBS" >"$build/build.log" 2>&1; then
    grep -E 'error|Error' "$build/build.log" | head -30 >&2
    die "glibc build failed ($abi); see ${build#$TOP/}/build.log"
  fi
}

if [ -n "$tree_src" ]; then
  configure_and_build "$tree_src" "$tree_build"
  exit 0
fi

stamp=$sysroot/.rseq-stamp
inputs=$( { glibc_inputs; echo build-scripts/build/build-glibc.sh; echo build-scripts/build/sysroot-fixup.sh
            echo build-scripts/tables/abis; } | hash_inputs)
if [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
  log "glibc ($abi) is up to date"
  exit 0
fi
[ "$set" = host ] || log "cross-building glibc for $abi ($triple)"

# A cross ABI's sysroot comes from the artifact cache when one was built
# from the same inputs with the same toolchain and headers.  Host ABIs
# are always built: make check runs glibc's own tests in their trees.
cache_key=
if [ "$set" = cross ]; then
  cache_key=$( { echo "$inputs"
                 toolchain_id "$(cc_words | cut -d' ' -f1)" "/usr/$triple/include/linux" \
                   "/usr/$triple/include/asm" "/usr/$triple/include/asm-generic"
               } | sha256sum | cut -c1-16)
  rm -rf "$sysroot"
  if cache_restore "glibc-$abi" "$cache_key" "$sysroot" &&
     [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
    exit 0
  fi
  rm -rf "$sysroot"
fi

"$TOP/build-scripts/build/prepare-glibc.sh"
configure_and_build "$OUT/glibc-src" "$build"

log "installing glibc ($abi) into ${sysroot#$TOP/}"
rm -rf "$sysroot"
make -C "$build" install DESTDIR="$sysroot" MAKEINFO=: -j"$JOBS" >"$build/install.log" 2>&1 ||
  { tail -20 "$build/install.log"; die "glibc install failed ($abi)"; }
"$TOP/build-scripts/build/sysroot-fixup.sh" "$abi" "$sysroot"
echo "$inputs" > "$stamp"
[ -z "$cache_key" ] || cache_store "glibc-$abi" "$cache_key" "$sysroot"
