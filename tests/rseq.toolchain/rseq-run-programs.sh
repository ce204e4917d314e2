#!/bin/bash
# rseq-run on what it is given, one result line per check (results.sh):
#  - python3 under rseq-run maps the patched libc, and sees its RSEQ_1.0
#    rseq symbol and __rseq_size;
#  - bad invocations get a clear error and a distinct status;
#  - what the dynamic linker cannot start gets advice instead of
#    "invalid ELF header": scripts and pyenv shims (run the interpreter),
#    data files, and static programs and shared libraries (no program
#    interpreter, so no other libc can be given them; a library used to
#    crash it);
#  - a program the system gcc linked against Debian's glibc starts with
#    the patched glibc of its own ABI (i386 programs under the i386 one,
#    not failing with "wrong ELF class");
#  - the probe behind "this machine's kernel does not run ABI programs"
#    (RSEQ_UNRUNNABLE_ABIS, from rseq.exp's rseq_host_runs_abi) agrees
#    with execve on a program of each ABI.
# The static program and shared library are drivers-outputs.sh's (run
# first); without them those two checks are UNRESOLVED.
# Run by toolchain.exp with the settings results.sh describes.
# shellcheck source=results.sh source-path=SCRIPTDIR
. "$(dirname "$0")/results.sh"

rseq_run=$RSEQ_BIN/rseq-run

# The patched libc, its rseq symbol and __rseq_size, as python3 under
# rseq-run sees them.
check_python() {
  local name="rseq-run python3 uses the patched libc" probe libc_re
  probe='
import ctypes, sys
libc = ctypes.CDLL(None)
maps = open("/proc/self/maps").read()
mapped = [l.split()[-1] for l in maps.splitlines() if "libc.so.6" in l]
print("libc:", sorted(set(mapped)))
print("rseq-symbol:", hasattr(libc, "rseq"))
print("rseq-size:", ctypes.c_uint.in_dll(libc, "__rseq_size").value)
'
  # One libc.so.6, the native sysroot's.
  libc_re="libc: \['[^']*/$(rseq_abi field "$(native_abi)" sysroot)/$(rseq_abi field "$(native_abi)" libdir)/libc\.so\.6'\]"
  execute 60 "$rseq_run" /usr/bin/python3 -c "$probe"
  if [ "$status" = 0 ] && [[ $output =~ $libc_re ]] && [[ $output == *"rseq-symbol: True"* ]] &&
     [[ $output =~ rseq-size:\ 2[0-9] ]]; then
    pass "$name"
  else
    fail "$name"
  fi
}

check_bad_invocations() {
  execute 10 "$rseq_run"
  if [ "$status" = 2 ] && [[ $output == *usage* ]]; then
    pass "rseq-run without arguments prints usage"
  else
    fail "rseq-run without arguments prints usage"
  fi
  execute 10 "$rseq_run" no-such-program-here
  if [ "$status" = 127 ] && [[ $output == *"not found"* ]]; then
    pass "rseq-run with a missing program fails with 127"
  else
    fail "rseq-run with a missing program fails with 127"
  fi
}

# expect_refusal NAME GLOB PROGRAM ARGS...: rseq-run exits 126 with a
# message like GLOB.
expect_refusal() {
  local name=$1 glob=$2
  shift 2
  execute 10 "$rseq_run" "$@"
  # The message is a pattern on purpose.
  # shellcheck disable=SC2053
  if [ "$status" = 126 ] && [[ $output == $glob ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

# A script: its interpreter is named, and no "invalid ELF header".
check_script() {
  local name="rseq-run on a shell script names its interpreter" script=$RSEQ_OBJ/a-script.sh
  printf '#!/bin/sh\necho from the script\n' >"$script"
  chmod 755 "$script"
  execute 10 "$rseq_run" "$script"
  if [ "$status" = 126 ] && [[ $output == *"is a script (#!/bin/sh)"*"rseq-run /bin/sh $script"* ]] &&
     [[ $output != *"ELF header"* ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

# A pyenv shim and a data file.
check_not_elf() {
  local shim=$RSEQ_OBJ/shims/python3
  mkdir -p "${shim%/*}"
  # What pyenv writes into its shims.
  # shellcheck disable=SC2016
  printf '%s\n' '#!/usr/bin/env bash' 'set -e' 'export PYENV_ROOT=/nonexistent' \
    'exec "/nonexistent/libexec/pyenv" exec "$program" "$@"' >"$shim"
  chmod 755 "$shim"
  # The advice names a command to copy, not one to expand here.
  # shellcheck disable=SC2016
  expect_refusal "rseq-run on a pyenv shim says to run the real interpreter" \
    '*pyenv shim*rseq-run "$(pyenv which python3)"*' "$shim" -c pass
  expect_refusal "rseq-run on a data file says it is not an ELF program" \
    "*not an ELF program*" "$here/libc-probe.c"
}

# Programs without a program interpreter, as drivers-outputs.sh built
# them for the native ABI.
check_not_dynamic() {
  local what file native name
  native=$(native_abi)
  for what in "a static program:$RSEQ_OBJ/crt-$native-static" \
              "a shared library:$RSEQ_OBJ/$native/libtoolchain.so"; do
    file=${what#*:} what=${what%%:*}
    name="rseq-run on $what says it is not dynamically linked"
    if [ ! -e "$file" ]; then
      unresolved "$name" "$file was not built"
      continue
    fi
    expect_refusal "$name" "*is not a dynamically linked program*" "$file"
  done
}

# A program the system gcc linked against Debian's glibc, started by
# rseq-run, maps ABI's patched libc.
check_stock_program() {
  local abi=$1 name="rseq-run starts a stock-linked $1 program with the patched glibc"
  local exe=$RSEQ_OBJ/stock-probe-$1 libc
  # The flags are a word list.
  # shellcheck disable=SC2046
  run gcc -O2 $(abi_cc_flags "$abi") -o "$exe" "$here/libc-probe.c" -DSTOCK_GLIBC
  if [ "$status" != 0 ]; then
    unsupported "$name" "the system gcc cannot build for $abi"
    return
  fi
  libc=$(sysroot_libc "$abi")
  execute 60 "$rseq_run" "$exe"
  unsupported_run "$name" && return
  if [ "$status" = 0 ] && [[ $output$'\n' == *"libc: $libc"$'\n'* ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

# The exit status of starting PROGRAM by execve alone: 77 when execve
# fails with ENOEXEC (bash, like Tcl's exec, would hand such a file to
# /bin/sh instead), 1 for any other failure (rseq.exp's
# rseq_execve_status).
execve_status() {
  local code
  /usr/bin/python3 -c '
import errno, os, sys
try:
    os.execv(sys.argv[1], sys.argv[1:])
except OSError as e:
    sys.exit(77 if e.errno == errno.ENOEXEC else 1)
' "$@" >/dev/null 2>&1
  code=$?
  [ "$code" -gt 128 ] && code=1
  echo "$code"
}

# The probe's answer for ABI agrees with execve on an ABI program.
check_runnable_probe() {
  local abi=$1 name="the runnable-ABI probe agrees with execve ($1)"
  local exe=$RSEQ_OBJ/probe-agrees-$1 want=0 said=runnable got
  # shellcheck disable=SC2046
  run "$RSEQ_BIN/rseq-gcc" -O2 $(abi_flags "$abi") -o "$exe" "$here/libc-probe.c"
  if [ "$status" != 0 ]; then
    fail "$name: compile"
    return
  fi
  in_list "$abi" "$RSEQ_UNRUNNABLE_ABIS" && want=77 said="not runnable"
  got=$(execve_status "$exe")
  if [ "$got" = "$want" ]; then
    pass "$name: $said"
  else
    fail "$name: probe says $said, execve status $got" ""
  fi
}

check_python
check_bad_invocations
check_script
check_not_elf
check_not_dynamic
for abi in $RSEQ_ABIS; do
  check_stock_program "$abi"
done
for abi in $RSEQ_ABIS; do
  check_runnable_probe "$abi"
done
exit 0
