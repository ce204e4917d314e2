#!/bin/bash
# The drivers' command lines as a new user meets them, one result line
# each ("PASS: what", "FAIL: what: why", "UNSUPPORTED: what: why"):
# --help and --version, bad invocations with their messages and exit
# statuses, programs that use Debian's libraries (zlib, libelf, OpenSSL
# through pkg-config), sanitizers with C, and the patched headers ahead
# of the system's.  toolchain.exp reports the lines.
#   drivers-cli.sh BIN WORK ABIS
# BIN holds the drivers (out/bin), WORK is an empty scratch directory,
# ABIS the host ABIs whose glibc is built ("x86_64 i386").
bin=$(cd "$1" && pwd) work=$2 abis=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && cd "$work" || exit 1

status= output=
# run CMD...: its exit status and output (stdout and stderr) in $status
# and $output.
run() {
  output=$("$@" 2>&1)
  status=$?
}
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; printf '%s\n' "$output" | sed 's/^/    | /' | head -20; }
# expect WHAT STATUS GLOB: the last run exited STATUS and printed GLOB.
expect() {
  # GLOB is a pattern on purpose.
  # shellcheck disable=SC2053
  if [ "$status" = "$2" ] && [[ $output == $3 ]]; then pass "$1"
  else fail "$1" "exit $status (want $2), output not like '$3'"; fi
}
# refute WHAT GLOB: the last run did not print GLOB.
refute() {
  # shellcheck disable=SC2053
  if [[ $output == $2 ]]; then fail "$1" "printed '$2'"; else pass "$1"; fi
}

# --- rseq-run -------------------------------------------------------
run "$bin/rseq-run" --help
expect "rseq-run --help prints its usage and exits 0" 0 "Usage: rseq-run*Exit status*"
run "$bin/rseq-run" -h
expect "rseq-run -h prints its usage and exits 0" 0 "Usage: rseq-run*"
run "$bin/rseq-run" --version
expect "rseq-run --version names the patched glibc's version" 0 "rseq-run (rseq toolchain): glibc 2.[0-9]* with the rseq series"
run "$bin/rseq-run" -- /bin/echo hello
expect "rseq-run -- PROGRAM runs PROGRAM" 0 "hello"
run "$bin/rseq-run" --no-such-option /bin/true
expect "rseq-run with an unknown option fails with 2" 2 "rseq-run: unknown option --no-such-option*Usage:*"
run "$bin/rseq-run" "$work"
expect "rseq-run on a directory says so and exits 126" 126 "rseq-run: $work: is a directory"
cp /bin/true not-executable && chmod a-x not-executable
run "$bin/rseq-run" ./not-executable
expect "rseq-run refuses a file without execute permission (126)" 126 "*not executable*"
run "$bin/rseq-python" --help
expect "rseq-python --help says what it is, then python's help" 0 "Usage: rseq-python*usage: */usr/bin/python3 *"

# --- rseq-gcc, rseq-g++, rseq-clang ---------------------------------
run "$bin/rseq-gcc"
expect "rseq-gcc without input says 'no input files'" 1 "*no input files*"
refute "rseq-gcc without input does not run the linker" "*undefined reference*"
run "$bin/rseq-gcc" -dumpmachine
expect "rseq-gcc -dumpmachine answers like gcc" 0 "$(gcc -dumpmachine)"
run "$bin/rseq-gcc" --help
expect "rseq-gcc --help describes the driver, then gcc's options" 0 "Usage: rseq-gcc*patched glibc*Usage: gcc*"
run "$bin/rseq-g++" --help
expect "rseq-g++ --help names itself" 0 "Usage: rseq-g++*"
printf 'int main (void) { return 0; }\n' > empty.c
run env RSEQ_CLANG=clang-99 "$bin/rseq-clang" empty.c -o empty
expect "RSEQ_CLANG naming a missing compiler: one clear error" 1 \
  "rseq-clang: clang-99: compiler not found (RSEQ_CLANG=clang-99 chose it; unset RSEQ_CLANG for clang)"
run env RSEQ_CC=/nonexistent/gcc "$bin/rseq-gcc" empty.c -o empty
expect "RSEQ_CC naming a missing compiler: one clear error" 1 \
  "rseq-gcc: /nonexistent/gcc: compiler not found (RSEQ_CC=/nonexistent/gcc chose it; unset RSEQ_CC for gcc)"

# The patched glibc's headers come before the system's.
for abi in $abis; do
  flag=--rseq-abi=$abi
  run sh -c "echo '#include <sys/rseq.h>' | '$bin/rseq-gcc' $flag -E -x c - | grep -m1 '/sys/rseq.h\"'"
  if [ "$status" = 0 ] && [[ $output == *sysroot*/usr/include/sys/rseq.h* ]]; then
    pass "$abi: <sys/rseq.h> is the patched glibc's, not the system's"
  else
    fail "$abi: <sys/rseq.h> is the patched glibc's, not the system's" "preprocessed from elsewhere"
  fi
done

# Programs that use Debian's libraries: zlib (headers and library),
# libelf (its own dependency libz.so.1 needs -rpath-link), OpenSSL through
# pkg-config (a multiarch opensslconf.h), and each runs with the patched
# libc.
# link_and_run WHAT HEADER SOURCE WANT CFLAGS...: build with rseq-gcc,
# run, expect WANT; UNSUPPORTED without HEADER.
link_and_run() {
  local what=$1 header=$2 src=$3 want=$4
  shift 4
  if [ ! -e "$header" ]; then
    echo "UNSUPPORTED: $what: no $header (install its Debian -dev package)"
    return
  fi
  run "$bin/rseq-gcc" -O2 -Wall "$here/$src" -o "${src%.c}" "$@"
  if [ "$status" != 0 ]; then fail "$what" "rseq-gcc failed"; return; fi
  run "./${src%.c}"
  expect "$what" 0 "$want"
}
link_and_run "rseq-gcc builds a zlib program (zlib.h, -lz)" /usr/include/zlib.h \
  uses-zlib.c "zlib round trip" -lz
link_and_run "rseq-gcc links libelf, whose own libz is found (-rpath-link)" /usr/include/libelf.h \
  uses-libelf.c "libelf ready" -lelf
if command -v pkg-config >/dev/null && pkg-config --exists libcrypto; then
  # The flags are word lists on purpose.
  # shellcheck disable=SC2046
  link_and_run "rseq-gcc with pkg-config's flags for OpenSSL" /usr/include/openssl/evp.h \
    uses-openssl.c "sha256 ok" $(pkg-config --cflags --libs libcrypto)
else
  echo "UNSUPPORTED: rseq-gcc with pkg-config's flags for OpenSSL: no pkg-config or libcrypto.pc"
fi
if [ -x uses-zlib ] && ldd ./uses-zlib | grep -q 'libc\.so\.6 => .*sysroot'; then
  pass "the zlib program runs on the patched libc"
else
  output=$(ldd ./uses-zlib 2>&1) status=
  fail "the zlib program runs on the patched libc" "ldd shows another libc.so.6"
fi
for abi in $abis; do
  # -m32 as users write it (the other checks name the ABI).
  flag=; [ "$abi" = i386 ] && flag=-m32
  run "$bin/rseq-gcc" $flag -O0 -fsanitize=undefined "$here/ubsan-overflow.c" -o "ubsan-$abi"
  if [ "$status" != 0 ]; then
    fail "$abi: rseq-gcc -fsanitize=undefined links C" "rseq-gcc failed"
    continue
  fi
  run "./ubsan-$abi"
  expect "$abi: rseq-gcc -fsanitize=undefined links C and reports the overflow" 0 \
    "*runtime error: signed integer overflow*"
done

# --- rseq-abi, the ABI table's reader, and --rseq-abi -----------------
run "$bin/rseq-abi" names host
expect "rseq-abi names host lists the host ABIs in table order" 0 "${abis// /$'\n'}"
run "$bin/rseq-abi" field i386 ldso
expect "rseq-abi field i386 ldso reads one column" 0 "lib/ld-linux.so.2"
run "$bin/rseq-abi" native
expect "rseq-abi native is the machine's own ABI, the first host ABI here" 0 "${abis%% *}"
run "$bin/rseq-abi" field no-such-abi cc
expect "rseq-abi: an unknown ABI is one error naming the known ones" 1 \
  "rseq-abi: unknown ABI 'no-such-abi' (known: x86_64 i386 *)"
run "$bin/rseq-abi" field i386 no-such-column
expect "rseq-abi: an unknown column is one error naming the columns" 1 \
  "rseq-abi: no column 'no-such-column' (columns: abi set triple *)"
run "$bin/rseq-abi" elf "$here/drivers-cli.sh"
expect "rseq-abi elf on a script: not an ELF file" 1 "rseq-abi: *: not an ELF file"
run "$bin/rseq-abi" --help
expect "rseq-abi --help describes every command" 0 "rseq-abi: the one reader*names*field*elf FILE*"
for abi in $abis; do
  run "$bin/rseq-gcc" --rseq-abi="$abi" -O2 empty.c -o "abi-$abi"
  [ "$status" = 0 ] || { fail "rseq-gcc --rseq-abi=$abi builds" "exit $status"; continue; }
  run "$bin/rseq-abi" elf "abi-$abi"
  expect "rseq-gcc --rseq-abi=$abi builds an $abi program (rseq-abi elf)" 0 "$abi"
done
run "$bin/rseq-gcc" --rseq-abi=i386 -m64 empty.c -o abi-both
expect "rseq-gcc refuses --rseq-abi beside -m32/-m64" 1 "*--rseq-abi=i386 and -m64: name the ABI one way*"
run "$bin/rseq-gcc" --rseq-abi=no-such-abi empty.c -o abi-none
expect "rseq-gcc --rseq-abi with an unknown ABI: rseq-abi's error" 1 "*unknown ABI 'no-such-abi'*"
