#!/bin/sh
# Linux 7's own rseq selftests inside the Linux 7 VM (busybox sh, cwd
# /tests, the programs of build-scripts/build/build-rseq-selftests.sh beside
# this script).  The kernel's run_*.sh scripts need bash, which the VM
# lacks; these are their steps, with fewer repetitions for emulation.
#   selftests-guest.sh param      run_param_test.sh's programs and test
#                                 types, without and with loop injection
#   selftests-guest.sh legacy     run_legacy_check.sh, rseq debug mode off
#   selftests-guest.sh slice      run_timeslice_test.sh
# Like the kernel's scripts, param, legacy and slice turn glibc's
# registration off (glibc.pthread.rseq=0): they register areas of their
# own.  Exit 77 (with the reason last) when the kernel lacks the feature.
GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.pthread.rseq=0
export GLIBC_TUNABLES

# run_param_test.sh's matrix: every program, every test type, default
# and with delay loops injected inside the critical sections (points 3,
# 4 and 5 of rseq-x86-bits.h: after the CPU check, before the commit,
# where preemption must abort), 4 threads on the VM's 2 CPUs.
param() {
  for prog in param_test param_test_compare_twice param_test_mm_cid \
              param_test_mm_cid_compare_twice; do
    for type in s l b "b -M" m "m -M" i r; do
      for inject in "" "-3 1000" "-4 1000" "-5 1000"; do
        # $type and $inject are word lists on purpose.
        # shellcheck disable=SC2086
        ./$prog -T $type -r 100 -t 4 $inject ||
          { echo "FAIL: ./$prog -T $type -r 100 -t 4 $inject"; return 1; }
      done
    done
  done
  echo "param_test: 4 programs x 8 test types x 4 injections passed"
}

# The kernel's debug mode (CONFIG_RSEQ_DEBUG_DEFAULT_ENABLE in the VM)
# validates the read-only fields of every area, 32-byte legacy ones
# too, and kills legacy_check, whose subject is the optimized mode.
# run_legacy_check.sh expects a kernel booted without it: turn it off
# through debugfs for the run and restore it.
legacy() {
  switch=/sys/kernel/debug/rseq/debug
  [ -w "$switch" ] || { echo "no $switch (debugfs, Linux 7 rseq debug switch)"; return 77; }
  saved=$(cat "$switch")
  echo 0 > "$switch"
  ./legacy_check
  rc=$?
  echo "$saved" > "$switch"
  return $rc
}

slice() {
  ./check_optimized || { echo "the kernel has no optimized rseq mode (check_optimized)"; return 77; }
  ./slice_test
}

case $1 in
  param|legacy|slice) "$1" ;;
  *) echo "usage: selftests-guest.sh param|legacy|slice" >&2; exit 2 ;;
esac
