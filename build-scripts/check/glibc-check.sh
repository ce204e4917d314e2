#!/bin/bash
# make glibc-check: glibc's own tests, patched against pristine.
#   glibc-check.sh [--summarize] [ABI ...]
#                                    (default: the host ABIs of
#                                    build-scripts/tables/abis; --summarize
#                                    compares the results the last run left,
#                                    without running the tests)
# For each ABI, runs glibc's "make check" for the subdirectories the
# series touches in the patched build tree (out/glibc-build[-ABI]) and in
# pristine glibc built with the same flags (out/glibc-pristine-build[-ABI]),
# then compares the two tests.sum files.  A test fails the comparison
# when the patched tree does not pass it while pristine does, and a test
# only the patched tree has (the series' own) must pass.  Prints one
# Markdown table per ABI (also written to out/glibc-check/ABI.md) and
# exits non-zero on any such test.  Hours on two CPUs: not part of make check.
#
# Environment:
#   GLIBC_CHECK_SUBDIRS   the subdirectories            "elf nptl misc malloc posix"
. "$(dirname "$0")/../lib/abi.sh"
. "$(dirname "$0")/../lib/glibc.sh"

subdirs=${GLIBC_CHECK_SUBDIRS:-elf nptl misc malloc posix}
results=$OUT/glibc-check
mkdir -p "$results"
run_tests=true
if [ "${1:-}" = --summarize ]; then
  run_tests=false
  shift
fi

abis=("$@")
[ $# -gt 0 ] || mapfile -t abis < <(abi_names host)
for abi in "${abis[@]}"; do
  [ "$(abi_field "$abi" set 2>/dev/null)" = host ] ||
    die "glibc-check.sh: '$abi' is not a host ABI of build-scripts/tables/abis (glibc's tests run on this machine)"
done
[[ $subdirs =~ ^[a-z0-9_\ -]+$ ]] || die "GLIBC_CHECK_SUBDIRS: not a list of subdirectories: '$subdirs'"

# Run glibc's tests of $subdirs in build tree $1.  "make check" exits
# non-zero when a test fails; the summary says which.
run_checks() {
  local build=$1 d
  log "glibc tests ($subdirs) in ${build#$TOP/} (log: ${build#$TOP/}/check.log)"
  # A summary make wrote in an earlier run would stand for this one's
  # where make writes none (see summarize).
  for d in $subdirs; do rm -f "$build/$d/subdir-tests.sum"; done
  # Bring the tree up to date first, from the top: a library that make
  # check relinks from another subdirectory misses its own Makefile's
  # settings (nptl_db's libthread_db.so then fails -z defs), and the
  # tests that need it fail or never run.
  make -C "$build" -j"$JOBS" >"$build/check-build.log" 2>&1 ||
    die "glibc does not build in ${build#$TOP/} (see ${build#$TOP/}/check-build.log)"
  # cross-compiling=no: every ABI here runs on this machine, but i386's
  # tree is configured as a cross build (its --host is not the build
  # machine's triple), and glibc's make check would then build the
  # tests without running them.
  make -C "$build" -k -j"$JOBS" check subdirs="$subdirs" cross-compiling=no \
    >"$build/check.log" 2>&1 || true
}

# The results of $subdirs in build tree $1, as RESULT: TEST lines, to $2.
summarize() {
  local build=$1 sum=$2 d
  : > "$sum"
  for d in $subdirs; do
    if [ -s "$build/$d/subdir-tests.sum" ]; then
      cat "$build/$d/subdir-tests.sum" >> "$sum"
      continue
    fi
    # make writes a subdirectory's summary only when every test of it
    # was built; elf's tst-rtld-list-diagnostics needs manual/dynlink.texi,
    # which Debian's orig tarball leaves out.  The results of the tests
    # that ran are there: summarize them as make would.
    local results
    results=$(find "$build/$d" -name '*.test-result' | sort)
    [ -n "$results" ] ||
      die "no results for $d in ${build#$TOP/} (see ${build#$TOP/}/check.log)"
    # shellcheck disable=SC2086
    cat $results >> "$sum"
    echo "$d" >> "$sum.incomplete"
  done
}

# Compare the summaries (RESULT: subdir/test lines) and print the table.
compare() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
abi, pristine_sum, patched_sum, out = sys.argv[1:]

def read(path):
    results = {}
    for line in open(path):
        kind, _, test = line.strip().partition(": ")
        if test:
            results[test] = kind
    return results

pristine, patched = read(pristine_sum), read(patched_sum)
kinds = ["PASS", "FAIL", "UNSUPPORTED", "XFAIL", "XPASS", "UNRESOLVED"]
failing = ("FAIL", "XPASS", "UNRESOLVED", "ERROR")

def worse(before, after):
    """A pristine PASS that is no longer one, a new failure, or a test of
    the series' own that neither passes nor is unsupported here."""
    if before is None:
        return after not in ("PASS", "UNSUPPORTED")
    return (before == "PASS" and after != "PASS") or (after in failing and after != before)

bad = [(t, pristine.get(t) or "(new)", k) for t, k in sorted(patched.items())
       if worse(pristine.get(t), k)]
gone = sorted(t for t in pristine if t not in patched)

lines = [f"### glibc's tests, {abi}: patched against pristine", "",
         "| tree | tests | " + " | ".join(kinds) + " |",
         "|---|---|" + "---|" * len(kinds)]
for name, res in (("pristine", pristine), ("patched", patched)):
    counts = [sum(1 for k in res.values() if k == kind) for kind in kinds]
    lines.append(f"| {name} | {len(res)} | " + " | ".join(map(str, counts)) + " |")
new = sorted(t for t in patched if t not in pristine)
lines += ["", f"Only in the patched tree (the series' tests): {len(new)}, "
          f"{sum(1 for t in new if patched[t] == 'PASS')} passed."]
if gone:
    lines.append(f"Missing from the patched tree: {', '.join(gone)}")
if bad:
    lines += ["", "Worse than pristine:", ""]
    lines += [f"- {t}: {b} on pristine, {a} patched" for t, b, a in bad]
else:
    lines.append("No test does worse than on pristine.")
for name, path in (("pristine", pristine_sum), ("patched", patched_sum)):
    try:
        dirs = open(path + ".incomplete").read().split()
    except OSError:
        continue
    lines.append(f"{name}: make stopped short of a summary in {', '.join(dirs)} "
                 f"(a test that needs glibc's manual, which Debian's orig "
                 f"tarball leaves out, cannot be built); the tests that "
                 f"ran are counted from their .test-result files.")
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text)
sys.exit(1 if bad or gone else 0)
PY
}

status=0
for abi in "${abis[@]}"; do
  if $run_tests; then
    "$TOP/build-scripts/build/build-glibc.sh" "$abi"
    "$TOP/build-scripts/build/build-glibc.sh" "$abi" --pristine
  fi
  patched=$(glibc_build_dir "$abi") pristine=$(glibc_pristine_build_dir "$abi")
  rm -f "$results/$abi-"*.incomplete
  if $run_tests; then
    run_checks "$pristine"
    run_checks "$patched"
  fi
  summarize "$pristine" "$results/$abi-pristine.sum"
  summarize "$patched" "$results/$abi-patched.sum"
  compare "$abi" "$results/$abi-pristine.sum" "$results/$abi-patched.sum" "$results/$abi.md" ||
    status=1
done
exit $status
