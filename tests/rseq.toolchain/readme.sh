#!/bin/bash
# The README against the toolchain, one result line per check
# (results.sh):
#  - its per-CPU example: the exact command lines of its first ```sh
#    block with a command line (not a comment) that compiles
#    examples/percpu-counter.c ("Per-CPU operations"), run from the top
#    of the tree with out/ standing for RSEQ_OUT.  The builds must be
#    silent, the programs must count exactly and all through rseq, and
#    the block must still hold at least two of each (a block that lost
#    its commands would otherwise pass unnoticed);
#  - readme-check.py: the commands of the README's quick-start blocks
#    exist (make targets, scripts, out/bin drivers), every repository
#    path named exists, every relative link of README.md and docs/*.md
#    resolves, and README.md stays under 200 lines.
# Run by toolchain.exp with the settings results.sh describes.
# shellcheck source=results.sh source-path=SCRIPTDIR
. "$(dirname "$0")/results.sh"

readme=$RSEQ_TOP/README.md

# The non-blank lines of the README's example block, as written.
example_lines() {
  local line inside=no block=() candidate
  while IFS= read -r line; do
    if [ $inside = no ] && [[ $line == '```sh'* ]]; then
      inside=yes block=()
    elif [ $inside = yes ] && [[ $line == '```'* ]]; then
      for candidate in "${block[@]}"; do
        if [[ $candidate == out/bin/*examples/percpu-counter.c* ]]; then
          printf '%s\n' "${block[@]}"
          return
        fi
      done
      inside=no
    elif [ $inside = yes ] && [ -n "${line//[[:space:]]/}" ]; then
      block+=("$line")
    fi
  done <"$readme"
}

# A README line as a command here: out/ at the start of a word is
# RSEQ_OUT.
as_command() {
  sed -E "s#(^|[[:space:]])out/#\\1$RSEQ_OUT/#g" <<<"$1"
}

# A build line: it succeeds and prints nothing.
check_example_build() {
  local name="README example: $1"
  run sh -c "cd '$RSEQ_TOP' && $(as_command "$1")"
  if [ "$status" = 0 ] && [ -z "${output//[[:space:]]/}" ]; then
    pass "$name"
  else
    fail "$name"
  fi
}

# A run line: it counts exactly, and no increment missed rseq.
check_example_run() {
  local name="README example: $1" counted=no
  run sh -c "cd '$RSEQ_TOP' && timeout 120 $(as_command "$1")"
  if [[ $output =~ total\ ([0-9]+)\ \(expected\ ([0-9]+)\) ]] &&
     (( 10#${BASH_REMATCH[1]} == 10#${BASH_REMATCH[2]} )); then
    counted=yes
  fi
  if [ "$status" = 0 ] && [ $counted = yes ] && [[ $output == *"not per-CPU (rseq unavailable): 0"* ]]; then
    pass "$name"
  else
    fail "$name (status $(status_text))"
  fi
}

check_example() {
  local line builds=0 runs=0 name
  while IFS= read -r line; do
    # The i386 lines need the i386 glibc.
    [[ $line == *i386* ]] && ! in_list i386 "$RSEQ_ABIS" && continue
    name="README example: $line"
    # The commands read nothing: the lines stay this loop's.
    if [[ $line == *examples/percpu-counter.c* ]]; then
      builds=$((builds + 1))
      check_example_build "$line" </dev/null
    elif [[ $line == *i386* ]] && in_list i386 "$RSEQ_UNRUNNABLE_ABIS"; then
      unsupported "$name" "this machine's kernel does not run i386 programs"
    else
      runs=$((runs + 1))
      check_example_run "$line" </dev/null
    fi
  done < <(example_lines)
  name="README example block found ($builds builds, $runs runs)"
  if [ $builds -ge 2 ] && [ $runs -ge 2 ]; then
    pass "$name"
  else
    fail "$name" ""
  fi
}

check_readme_check() {
  execute 60 /usr/bin/python3 "$here/readme-check.py" "$RSEQ_TOP"
  report "README.md and docs/: commands, paths and links exist"
}

check_example
check_readme_check
exit 0
