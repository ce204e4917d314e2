#!/bin/bash
# Real software that nobody here wrote, built with rseq-gcc and tested
# by its own test suite under the patched glibc: the upstream tarballs
# of Debian 12's source packages pinned in projects/*.pin (xz-utils: the
# liblzma library and xz; file: libmagic on Debian's zlib, libbz2 and
# liblzma).  For each one, in a scratch directory: configure with
# CC=rseq-gcc, build, check that the built program runs with the patched
# dynamic linker and libc (and the library it just built), run its
# `make check`, and run it again with malloc's per-CPU cache on.  One
# result line each ("PASS: what", "FAIL: what: why" and a log excerpt,
# "UNSUPPORTED: what: why" when the source cannot be had or a build
# dependency is missing); toolchain.exp reports the lines.  The build
# machine's ABI only (x86_64): i386 builds would need Debian's i386
# libbz2 and liblzma, which Debian 12 ships only for a second dpkg
# architecture.
#   real-projects.sh BIN WORK
# BIN holds the drivers (out/bin), WORK is a scratch directory (under
# out/: everything is built there).  The tarballs come through
# build-scripts/fetch/fetch-orig-tarball.sh (artifact cache, else the Debian
# mirror; NAME_TARBALL=PATH supplies one by hand).
bin=$(cd "$1" && pwd -P) work=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(cd "$bin/.." && pwd -P)
jobs=$(nproc)
mkdir -p "$work" && work=$(cd "$work" && pwd -P) || exit 1
# What the second test-suite run gives the projects' programs.
# percpu_local=1: the suites' processes free their own chunks, which
# the caches take only with it.
PERCPU_TUNABLES=glibc.malloc.percpu=mm_cid:glibc.malloc.percpu_local=1

pass() { echo "PASS: $1"; }
unsupported() { echo "UNSUPPORTED: $1: $2"; }
# fail WHAT WHY [LOG [PATTERN]]: the failure, then the lines of LOG that
# match PATTERN (an extended regex), else its last lines.
fail() {
  echo "FAIL: $1: $2"
  [ -n "${3:-}" ] && [ -f "$3" ] || return 0
  {
    if [ -z "${4:-}" ] || ! grep -E -- "$4" "$3"; then tail -n 20 "$3"; fi
  } | head -n 20 | sed 's/^/    | /'
}

# The build machine's ABI in the ABI table, read by
# build-scripts/lib/abi.sh (in a subshell: it sets -euo pipefail, which
# this script is not written for): the patched dynamic linker and
# libc.so.6 that the programs must run with.
read -r sysroot ldso libdir < <(bash -c '. "$1/build-scripts/lib/abi.sh"
  abi=$(native_abi)
  echo "$(abi_field "$abi" sysroot) $(abi_field "$abi" ldso) $(abi_field "$abi" libdir)"' _ "$top")
want_ldso=$out/$sysroot/$ldso
want_libc=$out/$sysroot/$libdir/libc.so.6

# --- The projects ----------------------------------------------------
# Each sets: flags (configure's), program (built, run with --version),
# built_libs (libraries of the build tree it must load), system_libs
# (Debian libraries it must load), needs ("HEADER:PACKAGE" to build),
# ran (a regex of its `make check` output: one line per test that ran).

# liblzma and xz on it: an autotools library with its own test suite.
project_xz_utils() {
  flags=(--disable-static --disable-nls --disable-doc)
  program=src/xz/xz
  built_libs=(src/liblzma/.libs/liblzma.so.5)
  system_libs=()
  needs=()
  ran='^PASS: '
}

# file on libmagic, with Debian's zlib, libbz2 and liblzma required
# (configure would drop a missing one silently); zstd, lzip and seccomp
# off, so that nothing else is needed.
project_file() {
  flags=(--disable-static --enable-zlib --enable-bzlib --enable-xzlib
         --disable-zstdlib --disable-lzlib --disable-libseccomp)
  program=src/file
  built_libs=(src/.libs/libmagic.so.1)
  system_libs=(libz.so.1 libbz2.so.1.0 liblzma.so.5)
  needs=(zlib.h:zlib1g-dev bzlib.h:libbz2-dev lzma.h:liblzma-dev)
  # Its check-local runs the test program, on libmagic, on each test file.
  ran='^Running test: '
}

# --- The steps -------------------------------------------------------

# The program's ELF file: libtool's wrapper script runs .libs/NAME.
real_program() {
  local p=$1
  if [ -f "${p%/*}/.libs/${p##*/}" ]; then echo "${p%/*}/.libs/${p##*/}"; else echo "$p"; fi
}

# check_runs WHAT DIR: the program's interpreter is the patched dynamic
# linker, and run (through libtool's wrapper, which sets the library
# path to the build tree) it loads the patched libc and the libraries
# it should; LD_DEBUG=libs has the dynamic linker name each library it
# initializes.  The wrapper's own shell commands trace too: only the
# process that loaded the patched libc is looked at.
check_runs() {
  local what=$1 dir=$2 interp trace log=$2.runs.log lib missing=
  interp=$(readelf -lW "$(real_program "$dir/$program")" 2>/dev/null |
             sed -n 's/.*\[Requesting program interpreter: \(.*\)\]$/\1/p')
  if [ "$interp" != "$want_ldso" ]; then
    readelf -lW "$(real_program "$dir/$program")" > "$log" 2>&1
    fail "$what" "program interpreter '$interp', not $want_ldso" "$log" INTERP
    return
  fi
  if ! LD_DEBUG=libs "$dir/$program" --version > "$log" 2>&1; then
    fail "$what" "$program --version failed" "$log" '^[^ ]|error'
    return
  fi
  trace=$(awk -v libc="$want_libc" '
    { sub(/^[ \t]+/, "") }
    $2 == "calling" && $3 == "init:" { init[$1] = init[$1] " " $4 }
    $2 == "calling" && $3 == "init:" && $4 == libc { pid = $1 }
    END { if (pid != "") print init[pid] " " }' "$log")
  [ -n "$trace" ] || missing=" $want_libc"
  for lib in "${built_libs[@]}"; do
    [[ $trace == *" $dir/$lib "* ]] || missing="$missing $dir/$lib"
  done
  for lib in "${system_libs[@]}"; do
    [[ $trace == *"/$lib "* ]] || missing="$missing $lib"
  done
  if [ -n "$missing" ]; then
    fail "$what" "not loaded:${missing//$out\//out/}" "$log" 'calling init'
  else
    pass "$what"
  fi
}

# run_check WHAT DIR LOG [ENV...]: the project's own make check, with
# ENV (VAR=VALUE) in its environment.
run_check() {
  local what=$1 dir=$2 log=$3 count
  shift 3
  if ! (cd "$dir" && env "$@" timeout 1200 make -j"$jobs" check) > "$log" 2>&1; then
    fail "$what" "make check failed" "$log" '^(FAIL|ERROR|XPASS)|\*\*\*|rror'
    return
  fi
  count=$(grep -Ec -- "$ran" "$log")
  if [ "$count" = 0 ]; then
    fail "$what" "make check ran no tests (no line like '$ran')" "$log"
  else
    echo "  $what: $count tests"
    pass "$what"
  fi
}

# Whether malloc's per-CPU cache starts with PERCPU_TUNABLES on this
# kernel (malloc-percpu-probe.c): sets percpu_result to "" when it does,
# else to the result the runs with it get ("UNSUPPORTED: why" when the
# kernel cannot have it, "FAIL: why" when the probe itself broke).
percpu_probe() {
  local probe=$work/malloc-percpu-probe status
  if ! "$bin/rseq-gcc" -O2 "$here/malloc-percpu-probe.c" -o "$probe" > "$probe.log" 2>&1; then
    percpu_result="FAIL: malloc-percpu-probe.c did not build"
    return
  fi
  GLIBC_TUNABLES=$PERCPU_TUNABLES "$probe" >> "$probe.log" 2>&1
  status=$?
  sed 's/^/  malloc-percpu-probe: /' "$probe.log"
  case $status in
    0) percpu_result= ;;
    77) percpu_result="UNSUPPORTED: malloc's per-CPU cache does not start on this kernel (no rseq, mm_cid or membarrier)" ;;
    *) percpu_result="FAIL: malloc-percpu-probe exited $status" ;;
  esac
}

# test_project NAME: every step of projects/NAME.pin's project.
test_project() {
  local name=$1 pin=$here/projects/$1.pin label tarball dir header missing='' start=$SECONDS
  local names why i
  "project_${name//-/_}"
  label="$name $(awk '$1 == "Version:" { print $2 }' "$pin")"
  names=("$label: configure and build with rseq-gcc"
         "$label: ${program##*/} runs on the patched dynamic linker and libc"
         "$label: its own make check"
         "$label: its own make check with $PERCPU_TUNABLES")
  dir=$work/$name
  rm -rf "$dir" "$dir".*.log

  for header in "${needs[@]}"; do
    [ -e "/usr/include/${header%%:*}" ] || missing="$missing ${header#*:}"
  done
  if [ -n "$missing" ]; then
    for i in 0 1 2 3; do unsupported "${names[i]}" "build dependency missing (install$missing)"; done
    return
  fi
  # The pinned source: a flaky mirror makes this UNSUPPORTED, not a failure.
  if ! tarball=$(OUT=$out "$top/build-scripts/fetch/fetch-orig-tarball.sh" "$pin" "make check" \
                   2> "$dir.fetch.log"); then
    # The message's last line says how to supply the tarball by hand.
    why=$(sed -n 's,^ *\([A-Z_]*_TARBALL=/path/to/.*\),not cached and the Debian mirror offered none (by hand: \1),p' \
            "$dir.fetch.log")
    [ -n "$why" ] || why=$(grep -m1 '^error: ' "$dir.fetch.log" || tail -n 1 "$dir.fetch.log")
    sed 's/^/  /' "$dir.fetch.log"
    for i in 0 1 2 3; do unsupported "${names[i]}" "no source: ${why#error: }"; done
    return
  fi

  mkdir -p "$dir"
  if ! tar -xf "$tarball" -C "$dir" --strip-components=1 > "$dir.build.log" 2>&1 ||
     ! (cd "$dir" && timeout 600 ./configure CC="$bin/rseq-gcc" "${flags[@]}") >> "$dir.build.log" 2>&1 ||
     ! (cd "$dir" && timeout 1200 make -j"$jobs") >> "$dir.build.log" 2>&1; then
    fail "${names[0]}" "see ${dir#"$out"/}.build.log" "$dir.build.log" 'rror|\*\*\*'
    for i in 1 2 3; do unsupported "${names[i]}" "not built"; done
    return
  fi
  pass "${names[0]}"
  check_runs "${names[1]}" "$dir"
  run_check "${names[2]}" "$dir" "$dir.check.log"
  if [ -n "$percpu_result" ]; then
    # "KIND: what: why", as the other results.
    echo "${percpu_result%%: *}: ${names[3]}: ${percpu_result#*: }"
  else
    run_check "${names[3]}" "$dir" "$dir.check-percpu.log" GLIBC_TUNABLES="$PERCPU_TUNABLES"
  fi
  echo "  $label: $((SECONDS - start)) s"
}

percpu_probe
for pin in "$here"/projects/*.pin; do
  name=${pin##*/}
  test_project "${name%.pin}"
done
