#!/bin/bash
# Give every built cross ABI of the table its compiler drivers:
#   install-cross-drivers.sh [BINDIR]          (default out/bin)
# BINDIR/TRIPLE-rseq-gcc and TRIPLE-rseq-g++ are symlinks to rseq-gcc and
# rseq-g++, which read the ABI from the name they are invoked by and the
# table from BINDIR/../abis (copied here); the sysroots are looked for
# next to BINDIR, as the drivers do.  Links of ABIs without a sysroot
# there are removed, so the drivers present are the ones that work.
. "$(dirname "$0")/../lib/abi.sh"

bindir=${1:-$OUT/bin}
mkdir -p "$bindir"
bindir=$(cd "$bindir" && pwd -P)
root=${bindir%/*}

# The drivers the links point to, for a BINDIR that has none yet.
install_drivers() {
  local tool
  for tool in rseq-gcc rseq-g++ rseq-clang rseq-run rseq-abi; do
    install -m 755 "$TOP/build-scripts/bin/$tool" "$bindir/"
  done
  install -m 644 "$(abi_table)" "$root/abis"
}

link_abi() {
  local abi=$1 triple sysroot ldso tool
  triple=$(abi_field "$abi" triple)
  sysroot=$root/$(abi_field "$abi" sysroot)
  ldso=$(abi_field "$abi" ldso)
  for tool in rseq-gcc rseq-g++; do
    if [ -e "$sysroot/$ldso" ]; then
      ln -sfn "$tool" "$bindir/$triple-$tool"
      echo "$bindir/$triple-$tool"
    else
      rm -f "$bindir/$triple-$tool"
    fi
  done
}

install_drivers
for abi in $(abi_names cross); do
  link_abi "$abi"
done
