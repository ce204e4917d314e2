#!/bin/bash
# Create an editable, git-tracked glibc tree in out/glibc-edit (or $1):
#   commit "pristine"   glibc 2.36 from the tarball       (tag: pristine)
#   commit "overlay"    + the files of sysdeps/            (tag: rseq-base)
#   one commit per patch of glibc-patches/series          (git am)
# Edit, commit (one logical change per commit), then run
# build-scripts/glibc-export-patches.sh to regenerate glibc-patches/ and sysdeps/.
. "$(dirname "$0")/common.sh"

edit=${1:-$OUT/glibc-edit}
[ -e "$edit" ] && die "$edit exists; remove it first"

[ -r "$GLIBC_TARBALL" ] || die "glibc tarball not found: $GLIBC_TARBALL"
mkdir -p "$edit"
tar -xf "$GLIBC_TARBALL" -C "$edit" --strip-components=1
cd "$edit"
git init -q
git config core.abbrev 8
git add -A -f
git commit -q -m "glibc $GLIBC_VERSION (pristine)"
git tag pristine
cp -r "$TOP/sysdeps/." sysdeps/
git add -A -f
git commit -q --allow-empty -m "rseq toolchain: new files from sysdeps/"
git tag rseq-base
grep -v '^[[:space:]]*\(#\|$\)' "$TOP/glibc-patches/series" | while read -r p _; do
  git am -q --keep-cr "$TOP/glibc-patches/$p" || die "git am failed on $p"
done
log "editable tree ready: $edit"
