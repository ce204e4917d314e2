# shellcheck shell=bash
# The project's records of what it builds from: pin files (a Debian
# source or package and its version and sha256: glibc-patches/glibc.pin,
# kernel-patches/NAME.pin, tests/rseq.toolchain/projects/*.pin) and
# series files (the patches of glibc-patches/ and kernel-patches/, in
# order).  Sourced, not executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"

# pin_field PIN KEY prints one field of a pin file ("Key: value" lines,
# # comments).
pin_field() {
  awk -v key="$2" 'tolower($1) == tolower(key) ":" { sub(/^[^:]*:[ \t]*/, ""); print; found = 1; exit }
    END { exit !found }' "$1" || die "no field $2 in ${1#"$TOP"/}"
}

# Patches listed in a series file (comments and blank lines skipped).
series_patches() {
  grep -v '^\([[:space:]]\|#\|$\)' "$1" | while read -r p _; do echo "$p"; done
}
