#!/bin/bash
# The documentation a user of the toolchain expects to find (issue 35),
# one result line each ("PASS: what", "FAIL: what: why" with "    | "
# detail lines, "UNSUPPORTED: what: why"); toolchain.exp reports them.
#   user-docs.sh TOP OUT BIN WORK
# TOP is the repository, OUT its build directory (out/), BIN the drivers
# (out/bin), WORK an empty scratch directory.
#  - every man page of docs/man/man3 renders without a warning (groff,
#    man, and mandoc -T lint where it is installed);
#  - every .so link names a page whose NAME section lists the link;
#  - every RSEQ_1.0 symbol but the __ ones, and every public inline
#    function of <sys/rseq.h>, has a page or a link;
#  - the pages' EXAMPLES compile with rseq-gcc;
#  - the docs say why there is no info manual, and that Python children
#    started with sys.executable run under the system glibc.
top=$(cd "$1" && pwd) out=$2 bin=$3 work=$4
man3=$top/docs/man/man3
linux=$top/sysdeps/unix/sysv/linux
mkdir -p "$work" || exit 1

pass() { echo "PASS: $1"; }
# fail WHAT WHY [DETAIL]: DETAIL's lines follow, indented.
fail() {
  echo "FAIL: $1: $2"
  [ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/    | /' | head -20
}

# The target of a link page (".so man3/X.3": X), or nothing for a page.
link_target() {
  sed -n '1s|^\.so man3/\(.*\)\.3$|\1|p' "$1"
}

# The names a page's NAME section lists, one a line.
page_names() {
  sed -n '/^\.SH NAME/,/^\.SH /{/^\.SH/d;p}' "$1" |
    tr '\n' ' ' | sed 's/ \\-.*//' | tr -s ', ' '\n' | sed '/^$/d'
}

# The pages that are not links.
pages() {
  local f
  for f in "$man3"/*.3; do
    [ -n "$(link_target "$f")" ] || echo "$f"
  done
}

# Every warning of the formatters on PAGE (nothing when it is clean).
# groff resolves .so relative to the directory it runs in.
page_warnings() {
  local page=$1
  (cd "$man3/.." || exit
   { groff -man -ww -z "$page" >/dev/null
     LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >/dev/null
   } 2>&1
   if command -v mandoc >/dev/null; then
     mandoc -T lint -W warning "$page" 2>&1
   fi)
}

check_rendering() {
  local page warnings
  for page in $(pages); do
    warnings=$(page_warnings "$page")
    if [ -z "$warnings" ]; then
      pass "man page $(basename "$page") renders without warnings"
    else
      fail "man page $(basename "$page") renders without warnings" "the formatters warn" "$warnings"
    fi
  done
}

# NAME has a page or a link that leads to a page listing NAME; prints
# what is wrong, nothing when all is right.
name_problem() {
  local name=$1 file=$man3/$1.3 target
  [ -f "$file" ] || { echo "$name: no $name.3"; return; }
  target=$(link_target "$file")
  if [ -n "$target" ]; then
    [ "$(wc -l < "$file")" = 1 ] || { echo "$name.3: a link has one line"; return; }
    [ -f "$man3/$target.3" ] || { echo "$name.3: no $target.3"; return; }
    [ -z "$(link_target "$man3/$target.3")" ] || { echo "$name.3: $target.3 is a link"; return; }
    file=$man3/$target.3
  fi
  page_names "$file" | grep -qx "$name" ||
    echo "$name: not in the NAME section of $(basename "$file")"
}

# Report WHAT for the names on stdin.
check_names() {
  local what=$1 names problems count
  names=$(sort -u)
  count=$(printf '%s\n' "$names" | sed '/^$/d' | wc -l)
  if [ "$count" = 0 ]; then
    fail "$what" "no names found"
    return
  fi
  problems=$(for n in $names; do name_problem "$n"; done)
  if [ -z "$problems" ]; then
    pass "$what ($count names)"
  else
    fail "$what" "$(printf '%s\n' "$problems" | wc -l) of $count without a page" "$problems"
  fi
}

# The RSEQ_1.0 symbols: from the patched source's Versions when it is
# there, else from the Versions hunks of the series (what applying it
# yields; a fresh clone has no out/).
rseq_symbols() {
  local versions=$out/glibc-src/sysdeps/unix/sysv/linux/Versions
  if [ -f "$versions" ]; then
    sed -n '/^  RSEQ_1\.0 {/,/^  }/p' "$versions"
  else
    local p
    while read -r p; do
      awk '/^diff --git/ { v = ($0 ~ /sysv\/linux\/Versions$/) } v' \
        "$top/glibc-patches/$p" | sed -n 's/^+//p'
    done < <(sed '/^#/d;/^$/d' "$top/glibc-patches/series")
  fi | sed -n 's/^ *\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p'
}

# The inline functions of <sys/rseq.h> a program may call: the static
# ones outside the implementation namespace.
inline_functions() {
  awk '/^static __inline/ { getline; if ($1 ~ /^[a-z]/) print $1 }' \
    "$linux/bits/rseq-area.h" "$linux/bits/rseq-slice.h" | sed 's/ *(.*//'
}

check_symbols() {
  local symbols
  symbols=$(rseq_symbols)
  printf '%s\n' "$symbols" | grep -v '^__' |
    check_names "every RSEQ_1.0 symbol but the __ ones has a man page"
  inline_functions | check_names "every public inline function of <sys/rseq.h> has a man page"
}

# The EXAMPLES of PAGE as C, unescaped.
page_example() {
  sed -n '/^\.SH EXAMPLES/,/^\.SH /{/^\.EX/,/^\.EE/p}' "$1" |
    sed '/^\.E[XE]$/d; s/^\\&$//; s/\\e/\\/g'
}

check_examples() {
  local page name src output
  if [ ! -x "$bin/rseq-gcc" ]; then
    echo "UNSUPPORTED: man page examples compile with rseq-gcc: no $bin/rseq-gcc"
    return
  fi
  for page in $(pages); do
    name=$(basename "$page" .3)
    src=$work/$name.c
    page_example "$page" > "$src"
    [ -s "$src" ] || continue
    if output=$("$bin/rseq-gcc" -O2 -Wall -Werror -c -o "$work/$name.o" "$src" 2>&1); then
      pass "the example of $name(3) compiles with rseq-gcc"
    else
      fail "the example of $name(3) compiles with rseq-gcc" "compile error" "$output"
    fi
  done
}

# WHAT: FILE says something matching each extended regular expression
# (case-insensitive) within one paragraph.
check_doc_says() {
  local what=$1 file=$2 para
  shift 2
  para=$(awk 'BEGIN { RS = "" } { gsub(/[ \t\n]+/, " "); print }' "$top/$file")
  local re
  for re in "$@"; do
    para=$(printf '%s\n' "$para" | grep -Ei -- "$re")
  done
  if [ -n "$para" ]; then pass "$what"
  else fail "$what" "no paragraph of $file says it" "$*"; fi
}

check_docs() {
  check_doc_says "docs/glibc-api.md: no info manual (Debian's orig tarball has no manual/), the man pages instead" \
    docs/glibc-api.md "orig tarball has no manual" "info" "docs/man/man3"
  check_doc_says "docs/development.md: make install installs man pages, no info manual" \
    docs/development.md "share/man/man3" "info manual|no manual"
  check_doc_says "docs/python.md: children started with sys.executable run under the system glibc" \
    docs/python.md "sys\.executable" "system glibc" "rseq-run|RSEQ_PYTHON"
}

check_rendering
check_symbols
check_examples
check_docs
exit 0
