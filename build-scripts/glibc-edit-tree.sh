#!/bin/bash
# Create an editable, git-tracked glibc tree in out/glibc-edit (or $1):
# pristine glibc 2.36 (tag "pristine"), then one commit per patch of
# glibc-patches/series, each with the new files it carries from sysdeps/
# (the tree glibc-series.sh cuts the self-contained series from).
# Edit, commit: one logical change per commit, and a change to a file
# that a commit adds goes into that commit (git commit --fixup, then
# git rebase -i --autosquash pristine).  Then run
# build-scripts/glibc-export-patches.sh to regenerate glibc-patches/ and
# sysdeps/.
. "$(dirname "$0")/common.sh"

edit=${1:-$OUT/glibc-edit}
[ -e "$edit" ] && die "$edit exists; remove it first"
"$TOP/build-scripts/glibc-series.sh" --tree "$edit"
log "editable tree ready: $edit"
