# shellcheck shell=bash
# The ABI table, through its one reader, bin/rseq-abi (also the
# drivers', rseq-run's, make's and the tests').  abi_names [SET] lists
# the ABIs, all or those of one set (host or cross); abi_field ABI
# COLUMN prints one column ("-" reads as empty).  Sourced, not executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"

RSEQ_ABI=$TOP/build-scripts/bin/rseq-abi

abi_names() {
  "$RSEQ_ABI" names "$@"
}

abi_field() {
  local value
  value=$("$RSEQ_ABI" field "$1" "$2") || exit 1
  echo "$value"
}

# The table's path (rseq-abi table), for the scripts that install a copy
# of it beside the drivers (install.sh, install-cross-drivers.sh).
abi_table() {
  "$RSEQ_ABI" table
}

# The build machine's own ABI, from the table rather than by name: the
# one whose triple is what the machine's gcc targets (gcc -dumpmachine),
# or without gcc (deps.sh before it is installed) the one named like the
# machine or whose triple starts with its CPU (uname -m); rseq-abi
# native.  Its glibc builds without --build, in out/glibc-build
# (glibc_build_dir, glibc.sh); the other host ABIs are its multilib
# flavours (i386 with gcc -m32 on x86_64).
native_abi() {
  local abi
  abi=$("$RSEQ_ABI" native) || exit 1
  echo "$abi"
}

# The C compiler driver of an ABI: rseq-gcc for the host ABIs (-m32
# selects i386), TRIPLE-rseq-gcc (make cross) for the others.
abi_driver() {
  if [ "$(abi_field "$1" set)" = host ]; then
    echo "$OUT/bin/rseq-gcc"
  else
    echo "$OUT/bin/$(abi_field "$1" triple)-rseq-gcc"
  fi
}
