#!/bin/bash
# Create an editable, git-tracked Linux tree in out/linux-edit (or $1):
#   commit "pristine"   linux-source-6.1 from the tarball  (tag: pristine)
#   one commit per patch of kernel-patches/series         (git am)
# Edit, commit (one logical change per commit, message with an
# Upstream-Status: trailer), then run build-scripts/kernel-export-patches.sh.
. "$(dirname "$0")/common.sh"

edit=${1:-$OUT/linux-edit}
[ -e "$edit" ] && die "$edit exists; remove it first"
[ -r "$LINUX_TARBALL" ] || die "kernel tarball not found: $LINUX_TARBALL"
mkdir -p "$edit"
tar -xf "$LINUX_TARBALL" -C "$edit" --strip-components=1
cd "$edit"
git init -q
git add -A -f
git commit -q -m "linux $LINUX_VERSION (pristine)"
git tag pristine
series_patches "$TOP/kernel-patches/series" | while read -r p; do
  git am -q --keep-cr "$TOP/kernel-patches/$p" || die "git am failed on $p"
done
log "editable tree ready: $edit"
