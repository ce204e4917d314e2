# shellcheck shell=bash
# Sourced by the topic scripts that toolchain.exp runs (make-install.sh,
# drivers-outputs.sh, rseq-run-programs.sh, readme.sh, build-helpers.sh):
# their result lines, and programs run the way tests/lib/rseq.exp runs
# them, so that the scripts report what the Tcl checks they replace did.
#
# toolchain.exp gives them the runtest settings in the environment:
#   RSEQ_BIN   the drivers (out/bin)
#   RSEQ_OUT   the build directory (out/)
#   RSEQ_OBJ   the directory for test binaries (out/tests/bin); the
#              scripts write there under the names the Tcl checks used
#   RSEQ_TOP   the repository
#   RSEQ_ABIS  the host ABIs whose glibc is built ("x86_64 i386")
#   RSEQ_UNRUNNABLE_ABIS  the host ABIs whose programs this machine's
#              kernel does not run (rseq.exp's rseq_host_runs_abi)
#
# Result lines (rseq_script_results in tests/lib/rseq.exp reports them
# under the name as printed):
#   PASS: NAME
#   FAIL: NAME              then "    | " lines: what the log should show
#   UNSUPPORTED: NAME: WHY
#   UNRESOLVED: NAME: WHY
: "${RSEQ_BIN:?}" "${RSEQ_OUT:?}" "${RSEQ_OBJ:?}" "${RSEQ_TOP:?}" "${RSEQ_ABIS:?}"
RSEQ_UNRUNNABLE_ABIS=${RSEQ_UNRUNNABLE_ABIS:-}
# This directory, where the scripts find their programs and helpers.
# shellcheck disable=SC2034
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$RSEQ_OBJ" || exit 1

pass() { echo "PASS: $1"; }
unsupported() { echo "UNSUPPORTED: $1: $2"; }
unresolved() { echo "UNRESOLVED: $1: $2"; }
# fail NAME [DETAIL]: DETAIL (by default the last command's output)
# follows, indented, for rseq.log.
fail() {
  echo "FAIL: $1"
  printf '%s\n' "${2-$output}" | sed 's/^/    | /'
}

# The ABI table, through its one reader.
rseq_abi() { "$RSEQ_TOP/build-scripts/bin/rseq-abi" "$@"; }
native_abi() { rseq_abi native; }

# The driver option that selects ABI: none for the native ABI
# (rseq.exp's rseq_abi_flags).
abi_flags() {
  [ "$1" = "$(native_abi)" ] || echo "--rseq-abi=$1"
}

# The flags the table gives ABI's plain compiler (-m32 for i386).
abi_cc_flags() {
  rseq_abi field "$1" cc | cut -s -d, -f2- | tr , ' '
}

# Whether WORD is one of the words of LIST.
in_list() {
  [[ " $2 " == *" $1 "* ]]
}

# The directories of ABI's sysroot that hold its crt files (usr/LIBDIR)
# and its libc.so.6 (LIBDIR), as the drivers resolve them (symbolic
# links resolved), one a line.
sysroot_libdirs() {
  local out sysroot libdir
  out=$(cd "$RSEQ_BIN/.." && pwd -P)
  sysroot=$(rseq_abi field "$1" sysroot)
  libdir=$(rseq_abi field "$1" libdir)
  printf '%s\n' "$out/$sysroot/usr/$libdir" "$out/$sysroot/$libdir"
}

# The libc.so.6 ABI's dynamic programs must map.
sysroot_libc() {
  local libdir
  libdir=$(sysroot_libdirs "$1" | tail -n 1)
  readlink -f "$libdir/libc.so.6" 2>/dev/null || echo "$libdir/libc.so.6"
}

status='' output=''
# run CMD...: its exit status and output (stdout and stderr) in $status
# and $output.
run() {
  output=$("$@" 2>&1)
  status=$?
}

# Why PROGRAM (or, for rseq-run, the program it starts: its first
# argument) cannot run on this machine, or nothing (rseq.exp's
# rseq_unrunnable_reason).
unrunnable_reason() {
  local program=$1 abi
  [ "${1##*/}" = rseq-run ] && [ $# -gt 1 ] && program=$2
  abi=$(rseq_abi elf "$program" 2>/dev/null) || return 0
  if in_list "$abi" "$RSEQ_UNRUNNABLE_ABIS"; then
    echo "this machine's kernel does not run $abi programs (execve: exec format error)"
  fi
}

# execute TIMEOUT PROGRAM ARGS...: run PROGRAM under a timeout, as
# rseq_execute does; a program this machine cannot run gives status 77
# and the reason.
execute() {
  local seconds=$1 reason
  shift
  reason=$(unrunnable_reason "$@")
  if [ -n "$reason" ]; then
    status=77 output=$reason
    return
  fi
  run timeout -k 5 "$seconds" "$@"
}

# The last run's exit status as the Tcl checks wrote it: a number, or
# "signal SIGNAME" for a program killed by a signal (timeout passes the
# signal on).
status_text() {
  if [ "$status" -gt 128 ] 2>/dev/null && [ "$status" != 137 ]; then
    echo "signal SIG$(kill -l $((status - 128)))"
  else
    echo "$status"
  fi
}

# The reason on the last line of the last run's output, the output
# trimmed first (as Tcl's string trim does).
last_line() {
  local text=$output
  text=${text%"${text##*[![:space:]]}"}
  text=${text#"${text%%[![:space:]]*}"}
  printf '%s\n' "${text##*$'\n'}"
}

# For checks that judge a run themselves: report NAME unsupported and
# succeed when the last run could not run here or exited 77 (rseq.exp's
# rseq_unsupported_run).
unsupported_run() {
  [ "$status" = 77 ] || return 1
  unsupported "$1" "$(last_line)"
}

# Report NAME by the last run's exit status alone: 0 passes, 77 is
# unsupported with the reason on its last line (rseq.exp's rseq_report).
report() {
  local name=$1 why
  case $status in
    0) pass "$name" ;;
    77) unsupported "$name" "$(last_line)" ;;
    124 | 137) fail "$name (status timeout)" ;;
    *) why=$(status_text); fail "$name (status $why)" ;;
  esac
}
