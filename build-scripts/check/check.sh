#!/bin/bash
# make check: run the DejaGnu testsuite (and, where present, the Python
# tests), then print one closing line "N passed, N failed, N skipped".
# FAIL, XPASS, UNRESOLVED and ERROR count as failures; UNSUPPORTED,
# UNTESTED and XFAIL as skipped.  Exits non-zero on any failure.
. "$(dirname "$0")/../lib/abi.sh"
. "$(dirname "$0")/../lib/glibc.sh"
. "$(dirname "$0")/../lib/vm.sh"

results=$OUT/tests
rm -rf "$results"
mkdir -p "$results"

# The host ABIs whose glibc is built (make), and the cross ABIs whose
# glibc, compiler driver and VM kernel are (make cross).
abis= builds= cross=
for abi in $(abi_names host); do
  [ -e "$OUT/$(abi_field "$abi" sysroot)/$(abi_field "$abi" ldso)" ] || continue
  abis="$abis $abi"
  builds="$builds {$abi $(glibc_build_dir "$abi")}"
done
for abi in $(abi_names cross); do
  vm=$(abi_field "$abi" vm)
  image=$(basename "$(vm_field "$vm" image)")
  if [ -e "$OUT/$(abi_field "$abi" sysroot)/$(abi_field "$abi" ldso)" ] &&
     [ -x "$(abi_driver "$abi")" ] &&
     [ -e "$(vm_dir "$vm")/$image" ]; then
    cross="$cross $abi"
  fi
done

# runtest's own exit status is not trusted alone: the summary is parsed.
(cd "$results" && runtest --tool rseq --srcdir "$TOP/tests" \
   RSEQ_BIN="$OUT/bin" RSEQ_OBJ="$results/bin" RSEQ_TOP="$TOP" RSEQ_OUT="$OUT" \
   RSEQ_ABIS="${abis# }" RSEQ_GLIBC_BUILDS="${builds# }" \
   RSEQ_CROSS_ABIS="${cross# }" "$@") || true

sum=$results/rseq.sum
[ -f "$sum" ] || die "runtest produced no summary ($sum)"

count() { grep -c "^$1:" "$sum" || true; }
passed=$(count PASS)
failed=$(( $(count FAIL) + $(count XPASS) + $(count UNRESOLVED) + $(count ERROR) ))
skipped=$(( $(count UNSUPPORTED) + $(count UNTESTED) + $(count XFAIL) ))

# Tcl errors in a driver show up as ERROR lines in the log, not the sum.
tcl_errors=$(grep -c '^ERROR:' "$results/rseq.log" || true)
[ "$tcl_errors" -gt "$(count ERROR)" ] && failed=$(( failed + tcl_errors - $(count ERROR) ))

# The Python binding's tests, under the patched glibc.
py_xml=$results/pytest.xml
RSEQ_OUT=$OUT "$OUT/bin/rseq-python" -m pytest -q -p no:cacheprovider \
  --junitxml="$py_xml" "$TOP/tests/python" > "$results/pytest.log" 2>&1 || true
tail -n 3 "$results/pytest.log"
if [ -f "$py_xml" ]; then
  read -r py_tests py_fail py_skip < <(/usr/bin/python3 - "$py_xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
get = lambda k: int(suite.get(k, 0))
print(get("tests"), get("failures") + get("errors"), get("skipped"))
PY
)
  passed=$(( passed + py_tests - py_fail - py_skip ))
  failed=$(( failed + py_fail ))
  skipped=$(( skipped + py_skip ))
else
  echo "pytest did not run (see out/tests/pytest.log)"
  failed=$(( failed + 1 ))
fi

grep -E '^(FAIL|XPASS|XFAIL|UNRESOLVED|ERROR|UNSUPPORTED):' "$sum" || true
# The areas whose results name the kernel they booted ("rseq.linux7
# (Linux 7.3.4): ..."): one line each, with that kernel and its counts.
awk '
  { kind = $1; sub(/:$/, "", kind); line = $0; sub(/^[A-Z]+: /, "", line) }
  match(line, /^rseq\.[A-Za-z0-9_.-]+ \(Linux [^)]*\)/) {
    key = substr(line, 1, RLENGTH)
    if (!(key in p)) { order[++n] = key; p[key] = f[key] = s[key] = 0 }
    if (kind == "PASS") p[key]++
    else if (kind ~ /^(FAIL|XPASS|UNRESOLVED|ERROR)$/) f[key]++
    else s[key]++
  }
  END {
    for (i = 1; i <= n; i++)
      printf "%s: %d passed, %d failed, %d skipped\n", order[i], p[order[i]], f[order[i]], s[order[i]]
  }' "$sum"
echo "Full logs: out/tests/rseq.log, out/tests/pytest.log"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
