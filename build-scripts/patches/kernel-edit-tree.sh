#!/bin/bash
# Create an editable, git-tracked Linux tree in out/linux-edit (or $1):
#   commit "pristine"   the cpu_opv kernels' source, Debian's package
#                       pinned in kernel-patches/$CPU_OPV_SOURCE.pin
#                       (build-scripts/fetch/fetch-linux-source.sh;
#                       tag: pristine)
#   one commit per patch of kernel-patches/series         (git am)
# Edit, commit (one logical change per commit, message with an
# Upstream-Status: trailer), then run
# build-scripts/patches/kernel-export-patches.sh.
. "$(dirname "$0")/../lib/pins.sh"
. "$(dirname "$0")/../lib/kernel.sh"

edit=${1:-$OUT/linux-edit}
[ -e "$edit" ] && die "$edit exists; remove it first"
read -r deb _ package version < <("$TOP/build-scripts/fetch/fetch-linux-source.sh" "$CPU_OPV_SOURCE" || echo "- - - -") || true
[ -n "${deb:-}" ] && [ "$deb" != - ] || die "no $CPU_OPV_SOURCE source (see above)"
unpack_linux_deb "$deb" "$package" "$edit"
cd "$edit"
git init -q
git add -A -f
git commit -q -m "linux $version ($package, pristine)"
git tag pristine
series_patches "$TOP/kernel-patches/series" | while read -r p; do
  git am -q --keep-cr "$TOP/kernel-patches/$p" || die "git am failed on $p"
done
log "editable tree ready: $edit"
