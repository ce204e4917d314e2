#!/bin/bash
# Write the self-contained glibc series, the one a reviewer reads and
# `git am` applies to pristine glibc 2.36: each patch of glibc-patches/
# together with the new files it carries whole from sysdeps/ (the
# indented lines under it in glibc-patches/series).
#
#   glibc-series.sh [OUTDIR]       format-patch files and a series file
#                                  in OUTDIR (default out/glibc-series)
#   glibc-series.sh --tree DIR     only the git tree it is cut from:
#                                  tag "pristine", then one commit per patch
#
# Every file under sysdeps/ must belong to exactly one patch.
. "$(dirname "$0")/common.sh"

series=$TOP/glibc-patches/series

# Check that sysdeps/ and the series' new-file lists agree.
check_new_files() {
  local listed missing extra
  listed=$(series_patches "$series" | while read -r p; do series_new_files "$series" "$p"; done | sort)
  [ -z "$(uniq -d <<<"$listed")" ] || die "in more than one patch of glibc-patches/series: $(uniq -d <<<"$listed")"
  missing=$(comm -23 <(cd "$TOP" && find sysdeps -type f | sort) <(echo "$listed"))
  extra=$(comm -13 <(cd "$TOP" && find sysdeps -type f | sort) <(echo "$listed"))
  [ -z "$missing" ] || die "new files in no patch of glibc-patches/series (list each under the patch that adds it): $missing"
  [ -z "$extra" ] || die "glibc-patches/series lists files that are not in sysdeps/: $extra"
}

# make_tree DIR: pristine glibc, committed and tagged, then one commit
# per patch: its diff, its new files, its message and author.
make_tree() {
  local dir=$1 p f info
  [ -r "$GLIBC_TARBALL" ] || die "glibc tarball not found: $GLIBC_TARBALL"
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xf "$GLIBC_TARBALL" -C "$dir" --strip-components=1
  cd "$dir"
  git init -q
  git config core.abbrev 8
  git config user.name rseq-toolchain
  git config user.email rseq-toolchain@invalid
  git add -A -f
  git commit -q -m "glibc $GLIBC_VERSION (pristine)"
  git tag pristine
  info=$(mktemp -d)
  series_patches "$series" | while read -r p; do
    if grep -q '^diff --git ' "$TOP/glibc-patches/$p"; then
      git apply --index --whitespace=nowarn "$TOP/glibc-patches/$p" || die "glibc-patches/$p does not apply"
    fi
    series_new_files "$series" "$p" | while read -r f; do
      [ ! -e "$f" ] || die "$f (listed under $p) already exists in glibc"
      mkdir -p "$(dirname "$f")"
      cp "$TOP/$f" "$f"
      git add -f "$f"
    done
    git mailinfo "$info/msg" "$info/patch" < "$TOP/glibc-patches/$p" > "$info/head"
    GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$info/head") \
    GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$info/head") \
    GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$info/head") \
      git commit -q -F <( { sed -n 's/^Subject: //p' "$info/head"; echo; cat "$info/msg"; } )
  done
  rm -rf "$info"
}

check_new_files
if [ "${1:-}" = --tree ]; then
  [ -n "${2:-}" ] || die "usage: glibc-series.sh --tree DIR"
  make_tree "$2"
  exit 0
fi

outdir=${1:-$OUT/glibc-series}
mkdir -p "$OUT"
tree=$OUT/glibc-series.git
make_tree "$tree"
rm -rf "$outdir"
git -C "$tree" format-patch -q --zero-commit --no-signature -o "$outdir" pristine..HEAD
(cd "$outdir" && ls -1 ./*.patch | sed 's,^\./,,' > series)
rm -rf "$tree"
log "wrote $(wc -l < "$outdir/series") self-contained patches to ${outdir#$TOP/}"
