#!/bin/bash
# What make install puts in PREFIX for a user beyond the drivers and
# sysroots (issue 35), one result line each ("PASS: what", "FAIL: what:
# why" with "    | " detail lines, "UNSUPPORTED: what: why");
# make-install.sh runs it on the tree it just installed:
#   install-check.sh PREFIX WORK
# PREFIX is the installed tree, WORK an empty scratch directory.
#  - pkg-config rseq-percpu (PREFIX/lib/pkgconfig, PREFIX/lib-ABI/pkgconfig)
#    names the installed header and library, and a program on percpu.h
#    builds with PREFIX/bin/rseq-gcc and those flags and runs;
#  - man finds every page of docs/man/man3 under PREFIX/share/man;
#  - the installed malloc_cache.py takes PREFIX/bin/rseq-gcc (a dry run).
prefix=$(cd "$1" && pwd -P) work=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mkdir -p "$work" && cd "$work" || exit 1

status='' output=''
# run CMD...: its exit status and output (stdout and stderr) in $status
# and $output.
run() {
  output=$("$@" 2>&1)
  status=$?
}
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; printf '%s\n' "$output" | sed 's/^/    | /' | head -20; }

# The flags pkg-config gives for rseq-percpu from DIR/pkgconfig, in
# $output; the check's result line.
check_pkg_config() {
  local dir=$1 what="pkg-config rseq-percpu in ${1#"$prefix"/}/pkgconfig"
  run env PKG_CONFIG_PATH="$dir/pkgconfig" pkg-config --cflags --libs rseq-percpu
  if [ "$status" != 0 ]; then
    fail "$what" "exit $status"
    return 1
  fi
  # The -I and -L directories must be PREFIX's, however they are spelt.
  local inc lib
  inc=$(sed -n 's/.*-I\([^ ]*\).*/\1/p' <<<"$output")
  lib=$(sed -n 's/.*-L\([^ ]*\).*/\1/p' <<<"$output")
  if [ -n "$inc" ] && [ "$(cd "$inc" 2>/dev/null && pwd -P)" = "$prefix/include/rseq-percpu" ] &&
     [ -n "$lib" ] && [ "$(cd "$lib" 2>/dev/null && pwd -P)" = "$dir" ] &&
     [[ $output == *-lrseq-percpu* ]]; then
    pass "$what names PREFIX/include/rseq-percpu and ${dir#"$prefix"/}"
    flags=$output
  else
    fail "$what" "not -I PREFIX/include/rseq-percpu -L ${dir#"$prefix"/} -lrseq-percpu"
    return 1
  fi
}

# A program on percpu.h, built with the installed rseq-gcc (ABI flags
# $2) and the flags of DIR ($1), runs and counts right.
check_percpu_program() {
  local dir=$1 abi_flags=$2 name=$3 exe what flags=
  what="a program on <percpu.h> builds with PREFIX/bin/rseq-gcc ${abi_flags:+$abi_flags }\$(pkg-config ...) and runs"
  check_pkg_config "$dir" || return
  exe=$work/percpu-pkgconfig-$name
  # $abi_flags and $flags are lists of options.
  # shellcheck disable=SC2086
  run "$prefix/bin/rseq-gcc" $abi_flags -O2 -Wall -pthread -o "$exe" \
    "$here/percpu-pkgconfig.c" $flags
  if [ "$status" != 0 ]; then
    fail "$what" "compile or link failed"
    return
  fi
  run "$exe"
  case $status in
    0) pass "$what ($output)" ;;
    77) echo "UNSUPPORTED: $what: per-CPU operations cannot run here" ;;
    *) fail "$what" "exit $status" ;;
  esac
}

check_percpu() {
  local dir
  if [ ! -d "$prefix/lib" ]; then
    output=$(ls "$prefix")
    fail "the per-CPU library" "no PREFIX/lib"
    return
  fi
  check_percpu_program "$prefix/lib" "" native
  # Other host ABIs: lib-ABI and the ABI's flags (i386: -m32).
  for dir in "$prefix"/lib-*; do
    [ -d "$dir" ] || continue
    case ${dir##*/lib-} in
      i386) check_percpu_program "$dir" -m32 i386 ;;
      *) output=; fail "the per-CPU library of ${dir##*/}" "no test for this ABI" ;;
    esac
  done
}

# man finds each page and link of docs/man/man3 in PREFIX/share/man
# (man -w names the page a link leads to), and renders it with the name
# it was asked for.
check_man() {
  local page name problems='' count=0 found text
  for page in "$top"/docs/man/man3/*.3; do
    name=$(basename "$page" .3)
    count=$((count + 1))
    found=$(man -M "$prefix/share/man" -w 3 "$name" 2>&1)
    if [[ $found != "$prefix/share/man/man3/"*.3 ]]; then
      problems+="$name: man -w finds '$found', not a page of PREFIX/share/man/man3"$'\n'
      continue
    fi
    text=$(MANWIDTH=80 man -M "$prefix/share/man" 3 "$name" 2>&1)
    grep -qw -- "$name" <<<"$text" ||
      problems+="$name: the page man shows does not name it"$'\n'
  done
  output=$problems
  if [ -z "$problems" ]; then
    pass "man -M PREFIX/share/man finds and renders every page and link ($count names)"
  else
    fail "man -M PREFIX/share/man finds and renders every page and link" "$(grep -c . <<<"$problems") of $count not"
  fi
}

# malloc_cache.py --paths from the installed tree, with python3 alone
# and through PREFIX/bin/rseq-python; and a copy elsewhere run by
# PREFIX/bin/rseq-python (RSEQ_PYTHON names it).
check_experiments() {
  local script=$prefix/share/rseq-toolchain/experiments/malloc_cache.py
  local want_cc="rseq-gcc: $prefix/bin/rseq-gcc"
  local want_src="workload: $prefix/share/rseq-toolchain/experiments/malloc-xfree.c"
  local what="the installed malloc_cache.py takes PREFIX/bin/rseq-gcc and the installed workload"
  run env -u RSEQ_PYTHON /usr/bin/python3 "$script" --paths
  if [ "$status" = 0 ] && [[ $output == *"$want_cc"* ]] && [[ $output == *"$want_src"* ]]; then
    pass "$what (python3)"
  else
    fail "$what (python3)" "exit $status, want '$want_cc' and '$want_src'"
  fi
  run env -u RSEQ_PYTHON "$prefix/bin/rseq-python" "$script" --paths
  if [ "$status" = 0 ] && [[ $output == *"$want_cc"* ]] && [[ $output == *"$want_src"* ]]; then
    pass "$what (rseq-python)"
  else
    fail "$what (rseq-python)" "exit $status, want '$want_cc' and '$want_src'"
  fi
  mkdir -p "$work/elsewhere" && cp "$script" "$work/elsewhere/" 2>/dev/null
  run env -u RSEQ_PYTHON "$prefix/bin/rseq-python" "$work/elsewhere/malloc_cache.py" --paths
  if [[ $output == *"$want_cc"* ]]; then
    pass "a copy of malloc_cache.py run by PREFIX/bin/rseq-python takes PREFIX/bin/rseq-gcc"
  else
    fail "a copy of malloc_cache.py run by PREFIX/bin/rseq-python takes PREFIX/bin/rseq-gcc" "want '$want_cc'"
  fi
}

check_percpu
check_man
check_experiments
exit 0
