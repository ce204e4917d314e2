#!/bin/bash
# make install PREFIX=DIR, one result line per check (results.sh):
#  - build-scripts/build/install.sh, which the make target runs after
#    building the toolchain, puts every driver, the sysroots, the Python
#    package (without its build files), the experiments, the man pages
#    and the per-CPU library in DIR, and its log names each of them;
#  - the installed rseq-gcc builds the demo with DIR's program
#    interpreter, and the demo runs registered;
#  - install-check.sh then tries what a user finds there (pkg-config
#    rseq-percpu, man, the experiments' drivers); its lines are reported
#    as "rseq.toolchain installed: ...";
#  - make install checks PREFIX before it builds anything: none, a file,
#    a directory that cannot be created.
# Run by toolchain.exp with the settings results.sh describes.
# shellcheck source=results.sh source-path=SCRIPTDIR
. "$(dirname "$0")/results.sh"

prefix=$RSEQ_OBJ/install-prefix

# What DIR must hold and the install log must name, in the order the
# result's name lists them: the native ABI's files, then each other
# host ABI's sysroot and the Python package where they were built, then
# those ABIs' per-CPU libraries.
expected_items() {
  local abi others=()
  echo bin/rseq-gcc bin/rseq-g++ bin/rseq-clang bin/rseq-run bin/rseq-python bin/rseq-abi \
    "$(rseq_abi field "$(native_abi)" sysroot)" \
    share/rseq-toolchain/percpu share/rseq-toolchain/examples \
    share/rseq-toolchain/experiments share/man/man3 include/rseq-percpu \
    lib/librseq-percpu.a lib/pkgconfig/rseq-percpu.pc
  for abi in $(rseq_abi names host); do
    [ "$abi" != "$(native_abi)" ] && [ -d "$RSEQ_OUT/$(rseq_abi field "$abi" sysroot)" ] &&
      others+=("$abi")
  done
  for abi in "${others[@]}"; do rseq_abi field "$abi" sysroot; done
  [ -d "$RSEQ_OUT/python" ] && echo python
  for abi in "${others[@]}"; do
    echo "lib-$abi/librseq-percpu.a lib-$abi/pkgconfig/rseq-percpu.pc"
  done
}

# A list as Tcl writes it (the names keep the form the Tcl check gave
# them): words separated by spaces, a word with spaces in braces.
tcl_list() {
  local word words=()
  for word in "$@"; do
    [[ $word == *" "* ]] && word="{$word}"
    words+=("$word")
  done
  echo "${words[*]}"
}

# Every expected item is in DIR and named in LOG; the examples are
# there; the binding's build files are not.
check_installed_items() {
  local log=$1 item missing=() expected
  read -r -a expected <<<"$(expected_items | tr '\n' ' ')"
  for item in "${expected[@]}"; do
    [ -e "$prefix/$item" ] && [[ $log$'\n' == *"$prefix/$item"$'\n'* ]] ||
      missing+=("$item")
  done
  for item in share/rseq-toolchain/percpu/percpu.h share/rseq-toolchain/examples/percpu-counter.c; do
    [ -e "$prefix/$item" ] || missing+=("$item")
  done
  for item in python/build.log python/build; do
    [ ! -e "$prefix/$item" ] || missing+=("$item (must not be installed)")
  done
  if [ ${#missing[@]} = 0 ]; then
    pass "make install PREFIX=DIR installs and names: ${expected[*]}"
  else
    fail "make install PREFIX=DIR installs and names: missing or unnamed: $(tcl_list "${missing[@]}")" "$log"
  fi
}

# The installed rseq-gcc builds examples/thread-info.c with DIR's
# dynamic linker, and the program runs with its rseq area registered.
check_installed_demo() {
  local name="installed rseq-gcc builds the demo" exe=$RSEQ_OBJ/installed-demo interp ldso
  run "$prefix/bin/rseq-gcc" -O2 -pthread -o "$exe" "$RSEQ_TOP/examples/thread-info.c"
  if [ "$status" != 0 ]; then
    fail "$name"
    return
  fi
  ldso=$prefix/$(rseq_abi field "$(native_abi)" sysroot)/$(rseq_abi field "$(native_abi)" ldso)
  interp=$(readelf -l "$exe" 2>&1)
  execute 60 "$exe"
  if [[ $interp == *"$ldso"* ]] && [ "$status" = 0 ] && [[ $output == *registered=yes* ]]; then
    pass "$name"
  else
    fail "$name" "$interp"$'\n'"$output"
  fi
}

# install-check.sh on DIR, its result lines named "rseq.toolchain
# installed: ..." and, as for every script, one failure when it does
# not finish with at least one result.
check_user_view() {
  local label="rseq.toolchain installed" count
  rm -rf "$RSEQ_OBJ/install-check"
  execute 300 bash "$here/install-check.sh" "$prefix" "$RSEQ_OBJ/install-check"
  count=$(grep -cE '^(PASS|FAIL|UNSUPPORTED): ' <<<"$output")
  sed -E "s/^(PASS|FAIL|UNSUPPORTED): /\1: $label: /" <<<"$output"
  if [ "$status" != 0 ] || [ "$count" = 0 ]; then
    echo "FAIL: $label: bash (status $(status_text), $count results; see rseq.log)"
  fi
}

check_install() {
  local log
  rm -rf "$prefix"
  if ! log=$(OUT=$RSEQ_OUT "$RSEQ_TOP/build-scripts/build/install.sh" "$prefix" 2>&1); then
    fail "make install PREFIX=DIR" "$log"
    return
  fi
  check_installed_items "$log"
  check_installed_demo
  check_user_view
  rm -rf "$prefix"
}

# make install refuses a bad PREFIX with its reason before building
# anything (the build scripts log each step with "==>").
check_prefix_refused() {
  local value=$1 want=$2 name
  name="make install PREFIX='$value' fails at once: $want"
  execute 60 make -s -C "$RSEQ_TOP" install PREFIX="$value"
  if [ "$status" != 0 ] && [[ $output == *"$want"* ]] && [[ $output != *"==>"* ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

check_prefixes_refused() {
  local file=$RSEQ_OBJ/install-prefix-file
  : >"$file"
  check_prefix_refused "" "needs PREFIX=DIR"
  check_prefix_refused "$file" "is not a directory"
  check_prefix_refused "$file/sub" "cannot be created"
}

check_install
check_prefixes_refused
exit 0
