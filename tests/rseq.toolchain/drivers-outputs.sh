#!/bin/bash
# What the drivers build, one result line per check (results.sh), for
# every host ABI built:
#  - the public headers: strict C99 with every warning, and C++ at -O0
#    (calls into libc) and -O2 (inlined sequences);
#  - each link kind (dynamic, static, static-pie, shared) of rseq-gcc
#    and rseq-clang uses the sysroot's startup files (-Wl,--trace), not
#    the system's: a wrong crt1.o starts a program on the wrong libc;
#  - each kind of program has the ELF type and program interpreter it
#    should and runs with the patched glibc, registered; -shared gives
#    a library without an interpreter that a program loads, -r an object
#    that links;
#  - C++: rseq-g++ (and RSEQ_CXX=clang++) links libstdc++, dynamic and
#    static; rseq-gcc, like gcc, does not, and says which driver to use;
#  - clang: rseq-clang builds the per-CPU counter example at -O0 and -O2,
#    dynamic and static, whose every increment goes through rseq;
#    RSEQ_CC=clang rseq-gcc links against the patched glibc;
#  - options the drivers cannot honour (-mx32) are refused, not
#    half-applied.
# The programs stay in RSEQ_OBJ: rseq-run-programs.sh runs rseq-run on
# the native ABI's static program and shared library.
# Run by toolchain.exp with the settings results.sh describes.
# shellcheck source=results.sh source-path=SCRIPTDIR
. "$(dirname "$0")/results.sh"

check_headers() {
  local opt name exe pedantic=$RSEQ_OBJ/pedantic.c
  printf '%s\n' '#define _GNU_SOURCE' '#include <sys/rseq-percpu.h>' \
    'int main (void) { return rseq_area_cpu () < 0; }' >"$pedantic"
  run "$RSEQ_BIN/rseq-gcc" -std=c99 -pedantic -Wall -Wextra -Werror -o "$RSEQ_OBJ/pedantic" "$pedantic"
  if [ "$status" = 0 ]; then
    pass "headers compile as -std=c99 -pedantic -Werror"
  else
    fail "headers compile as -std=c99 -pedantic -Werror"
  fi
  for opt in -O0 -O2; do
    name="headers from C++ ($opt)" exe=$RSEQ_OBJ/header-use$opt
    run env RSEQ_CC=g++ "$RSEQ_BIN/rseq-gcc" "$opt" -Wall -Werror -o "$exe" "$here/header-use.cc"
    if [ "$status" != 0 ]; then
      fail "$name: compile"
      continue
    fi
    execute 60 "$exe"
    report "$name"
  done
}

# The link kinds: their flags and the startup files each must use.
LINK_KINDS="dynamic static static-pie shared"
kind_flags() {
  case $1 in
    static) printf %s -static ;;
    static-pie) printf %s -static-pie ;;
    shared) printf %s "-shared -fPIC" ;;
  esac
}
kind_crts() {
  case $1 in
    dynamic) echo Scrt1.o crti.o crtn.o ;;
    static) echo crt1.o crti.o crtn.o ;;
    static-pie) echo rcrt1.o crti.o crtn.o ;;
    shared) echo crti.o crtn.o ;;
  esac
}

# The drivers and the prefix of their programs' names.
DRIVERS="rseq-gcc:crt rseq-clang:crt-clang"

# Every crt1/crti/crtn object of a -Wl,--trace link's output, sorted.
crt_objects() {
  sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | grep -E '/[A-Za-z]*crt[1in]\.o$' | LC_ALL=C sort
}

# check_crt_objects DRIVER PREFIX ABI KIND
check_crt_objects() {
  local driver=$1 prefix=$2 abi=$3 kind=$4 name src crtdir crt used want
  name="crt objects from the sysroot ($driver, $abi, $kind)"
  src=$here/libc-probe.c
  [ "$kind" = shared ] && src=$here/shared-lib.c
  # The flags are word lists.
  # shellcheck disable=SC2046
  run "$RSEQ_BIN/$driver" -O2 $(abi_flags "$abi") $(kind_flags "$kind") \
    -Wl,--trace -o "$RSEQ_OBJ/$prefix-$abi-$kind" "$src"
  if [ "$status" != 0 ]; then
    fail "$name: link"
    return
  fi
  crtdir=$(sysroot_libdirs "$abi" | head -n 1)
  used=$(crt_objects <<<"$output")
  want=$(for crt in $(kind_crts "$kind"); do echo "$crtdir/$crt"; done | LC_ALL=C sort)
  if [ "$used" = "$want" ]; then
    pass "$name"
  else
    fail "$name" "used: $used"$'\n'"wanted: $want"
  fi
}

# check_program_kind DRIVER PREFIX ABI KIND LIBC TYPE INTERPRETER: the
# program check_crt_objects linked has ELF type TYPE, a program
# interpreter or not (yes, no), maps LIBC and runs registered.
check_program_kind() {
  local driver=$1 prefix=$2 abi=$3 kind=$4 want_libc=$5 want_type=$6 want_interp=$7
  local name="$kind program runs with the patched glibc ($driver, $abi)"
  local exe=$RSEQ_OBJ/$prefix-$abi-$kind headers type has_interp=no
  if [ ! -e "$exe" ]; then
    unresolved "$name" "not built"
    return
  fi
  headers=$(readelf -hl "$exe" 2>&1)
  [[ $headers == *"Requesting program interpreter"* ]] && has_interp=yes
  type=$(sed -n 's/^ *Type: *\([^ ]*\).*/\1/p' <<<"$headers" | head -n 1)
  execute 60 "$exe"
  unsupported_run "$name" && return
  if [ "$status" = 0 ] && [ "$type" = "$want_type" ] && [ "$has_interp" = "$want_interp" ] &&
     [[ $output$'\n' == *"libc: $want_libc"$'\n'* ]] && [[ $output == *registered=yes* ]]; then
    pass "$name"
  else
    fail "$name" "type $type, interpreter $has_interp, status $(status_text)"$'\n'"$output"
  fi
}

check_link_kinds() {
  local entry driver prefix abi kind
  for entry in $DRIVERS; do
    driver=${entry%%:*} prefix=${entry#*:}
    for abi in $RSEQ_ABIS; do
      for kind in $LINK_KINDS; do
        check_crt_objects "$driver" "$prefix" "$abi" "$kind"
      done
    done
  done
  for entry in $DRIVERS; do
    driver=${entry%%:*} prefix=${entry#*:}
    for abi in $RSEQ_ABIS; do
      check_program_kind "$driver" "$prefix" "$abi" dynamic "$(sysroot_libc "$abi")" DYN yes
      check_program_kind "$driver" "$prefix" "$abi" static none EXEC no
      check_program_kind "$driver" "$prefix" "$abi" static-pie none DYN no
    done
  done
}

# -shared: a library without a program interpreter, which a program
# linked with it loads and calls.
check_shared_library() {
  local abi=$1 name="-shared library loads into a program ($1)"
  local dir=$RSEQ_OBJ/$1 main=$RSEQ_OBJ/shared-main-$1 headers
  mkdir -p "$dir"
  # shellcheck disable=SC2046
  run "$RSEQ_BIN/rseq-gcc" -O2 -shared -fPIC $(abi_flags "$abi") -o "$dir/libtoolchain.so" "$here/shared-lib.c"
  # shellcheck disable=SC2046
  [ "$status" != 0 ] ||
    run "$RSEQ_BIN/rseq-gcc" -O2 $(abi_flags "$abi") -o "$main" "$here/shared-main.c" \
      -L"$dir" -ltoolchain -Wl,-rpath,"$dir"
  if [ "$status" != 0 ]; then
    fail "$name"
    return
  fi
  headers=$(readelf -l "$dir/libtoolchain.so" 2>&1)
  execute 60 "$main"
  unsupported_run "$name" && return
  if [[ $headers != *INTERP* ]] && [ "$status" = 0 ] && [[ $output =~ lib-cpu=[0-9]+ ]]; then
    pass "$name"
  else
    fail "$name" "$headers"$'\n'"$output"
  fi
}

# -r: a relocatable object, which then links into a program that runs
# registered.
check_relocatable() {
  local abi=$1 name="-r gives a relocatable object that links ($1)"
  local obj=$RSEQ_OBJ/relocatable-$1.o exe=$RSEQ_OBJ/relocatable-$1 type='' linked log
  # shellcheck disable=SC2046
  run "$RSEQ_BIN/rseq-gcc" -O2 -r $(abi_flags "$abi") -o "$obj" "$here/libc-probe.c"
  log=$output
  [ "$status" = 0 ] &&
    type=$(readelf -h "$obj" 2>&1 | sed -n 's/^ *Type: *\([^ ]*\).*/\1/p' | head -n 1)
  # shellcheck disable=SC2046
  run "$RSEQ_BIN/rseq-gcc" $(abi_flags "$abi") -o "$exe" "$obj"
  linked=$status log+=$'\n'$output
  execute 60 "$exe"
  unsupported_run "$name" && return
  if [ "$type" = REL ] && [ "$linked" = 0 ] && [ "$status" = 0 ] && [[ $output == *registered=yes* ]]; then
    pass "$name"
  else
    fail "$name" "type '$type'"$'\n'"$log"$'\n'"$output"
  fi
}

# check_cxx ABI LINK [SETTING]: rseq-g++ (with SETTING, e.g.
# RSEQ_CXX=clang++, in its environment) builds and runs cxx-stl.cc.
check_cxx() {
  local abi=$1 link=$2 setting=${3:-} label=rseq-g++ name exe static=
  [ -n "$setting" ] && label="$setting rseq-g++"
  name="$label builds and runs a C++ program ($abi, $link)"
  exe=$RSEQ_OBJ/cxx-stl-$abi-$link-$([ -n "$setting" ] && echo 1 || echo 0)
  [ "$link" = static ] && static=-static
  # $setting, the ABI's flags and $static are word lists.
  # shellcheck disable=SC2046,SC2086
  run env $setting "$RSEQ_BIN/rseq-g++" -O2 -Wall -Werror -pthread $(abi_flags "$abi") $static \
    -o "$exe" "$here/cxx-stl.cc"
  if [ "$status" != 0 ]; then
    fail "$name: compile"
    return
  fi
  execute 60 "$exe"
  report "$name"
}

check_cxx_drivers() {
  local abi link setting
  for abi in $RSEQ_ABIS; do
    for setting in "" RSEQ_CXX=clang++; do
      for link in dynamic static; do
        check_cxx "$abi" "$link" "$setting"
      done
    done
  done
  run "$RSEQ_BIN/rseq-gcc" -O2 -o "$RSEQ_OBJ/cxx-with-gcc" "$here/cxx-stl.cc"
  if [ "$status" != 0 ] && [[ $output == *"cxx-stl.cc is C++: link C++ programs with rseq-g++"* ]]; then
    pass "rseq-gcc on a C++ program points to rseq-g++"
  else
    fail "rseq-gcc on a C++ program points to rseq-g++"
  fi
}

# check_clang_example ABI LINK OPT: rseq-clang builds the per-CPU
# counter example, and no increment of its run missed rseq.
check_clang_example() {
  local abi=$1 link=$2 opt=$3 name exe static=
  name="rseq-clang $opt builds examples/percpu-counter.c ($abi, $link)"
  exe=$RSEQ_OBJ/clang-percpu-$abi-$link$opt
  [ "$link" = static ] && static=-static
  # shellcheck disable=SC2046,SC2086
  run "$RSEQ_BIN/rseq-clang" "$opt" -Wall -Werror -pthread $(abi_flags "$abi") $static \
    -o "$exe" "$RSEQ_TOP/examples/percpu-counter.c"
  if [ "$status" != 0 ]; then
    fail "$name: compile"
    return
  fi
  execute 120 "$exe" 4 100000
  unsupported_run "$name" && return
  if [ "$status" = 0 ] && [[ $output == *"not per-CPU (rseq unavailable): 0"* ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

# RSEQ_CC=clang rseq-gcc: the program maps the native sysroot's libc
# (by any path to it).
check_rseq_cc_clang() {
  local name="RSEQ_CC=clang rseq-gcc links against the patched glibc"
  local exe=$RSEQ_OBJ/clang-rseq-cc built log libc_re
  run env RSEQ_CC=clang "$RSEQ_BIN/rseq-gcc" -O2 -o "$exe" "$here/libc-probe.c"
  built=$status log=$output
  execute 60 "$exe"
  libc_re="libc: [^[:space:]]*/$(rseq_abi field "$(native_abi)" sysroot)/$(rseq_abi field "$(native_abi)" libdir)/libc\.so\.6"
  if [ "$built" = 0 ] && [ "$status" = 0 ] && [[ $output =~ $libc_re ]]; then
    pass "$name"
  else
    fail "$name" "$log"$'\n'"$output"
  fi
}

check_clang() {
  local abi link opt
  for abi in $RSEQ_ABIS; do
    for link in dynamic static; do
      for opt in -O0 -O2; do
        check_clang_example "$abi" "$link" "$opt"
      done
    done
  done
  check_rseq_cc_clang
}

check_refused_options() {
  run "$RSEQ_BIN/rseq-gcc" -mx32 -o "$RSEQ_OBJ/x32" "$here/libc-probe.c"
  if [ "$status" != 0 ] && [[ $output == *-mx32*"no x32 build"* ]]; then
    pass "rseq-gcc -mx32 is refused with a clear message"
  else
    fail "rseq-gcc -mx32 is refused with a clear message"
  fi
}

check_headers
check_link_kinds
for abi in $RSEQ_ABIS; do
  check_shared_library "$abi"
  check_relocatable "$abi"
done
check_cxx_drivers
check_clang
check_refused_options
exit 0
