#!/bin/bash
# The glibc series: glibc-patches/*.patch, `git format-patch` output
# against pristine glibc (glibc-patches/glibc.pin), each patch carrying
# every file it adds or changes, applied in the order of
# glibc-patches/series.  This tool keeps it:
#
#   glibc-series.sh apply DIR      unpack pristine glibc into DIR and apply
#                                  the series with `git apply` (no git
#                                  history; the build's tree, prepare-glibc.sh)
#   glibc-series.sh edit [DIR]     an editable git tree (default out/glibc-edit):
#                                  pristine glibc, tag "pristine", then the
#                                  series applied with `git am`, one commit
#                                  a patch.  Edit, commit (one logical change
#                                  a commit; git rebase -i pristine), then:
#   glibc-series.sh export [DIR]   rewrite glibc-patches/ (patches and series)
#                                  from the commits pristine..HEAD of DIR, and
#                                  sysdeps/, the read-only view of the files
#                                  the series adds, as of its last patch
#   glibc-series.sh write [OUTDIR] copy the series for a reviewer or `git am`
#                                  (make series; default out/glibc-series)
#   glibc-series.sh check [--static | --from N]
#                                  apply it patch by patch with `git am`;
#                                  --static checks the ABI lists and the
#                                  commit messages after each patch (seconds,
#                                  part of make check); otherwise also build
#                                  glibc and run check-abi after each patch
#                                  (make series-check, hours)
. "$(dirname "$0")/../lib/pins.sh"
. "$(dirname "$0")/../lib/glibc.sh"

PATCHES=$TOP/glibc-patches
SERIES=$PATCHES/series

# The patches of the series, as paths.
series_files() {
  series_patches "$SERIES" | while read -r p; do
    [ -f "$PATCHES/$p" ] || die "glibc-patches/series names $p, which does not exist"
    echo "$PATCHES/$p"
  done
}

# git_init DIR: a repository of the pristine tree, tagged "pristine".
git_init() {
  (cd "$1" &&
     git init -q &&
     git config core.abbrev 8 &&
     git config user.name rseq-toolchain &&
     git config user.email rseq-toolchain@invalid &&
     git add -A -f -- . ':!manual/Makefile' &&
     git commit -q -m "glibc $GLIBC_VERSION (pristine)" &&
     git tag pristine)
}

cmd_apply() {
  local dir=${1:?usage: glibc-series.sh apply DIR} p
  glibc_unpack "$dir"
  # DIR may lie inside another repository (out/ of this one): the
  # ceiling keeps git apply from taking it for a subdirectory of that
  # one, where it would skip every path outside DIR without a word.
  for p in $(series_files); do
    (cd "$dir" && GIT_CEILING_DIRECTORIES=$(dirname "$PWD") git apply --whitespace=nowarn "$p") ||
      die "glibc-patches/${p##*/} does not apply to pristine glibc $GLIBC_VERSION and the patches before it"
  done
}

cmd_edit() {
  local dir=${1:-$OUT/glibc-edit}
  [ ! -e "$dir" ] || die "$dir exists; remove it first"
  glibc_unpack "$dir"
  git_init "$dir"
  # shellcheck disable=SC2046
  git -C "$dir" am -q --keep-cr $(series_files) ||
    die "git am stopped in $dir (see git -C $dir am --show-current-patch)"
  log "editable tree ready: $dir"
}

cmd_export() {
  local dir=${1:-$OUT/glibc-edit} n added
  [ -d "$dir/.git" ] || die "$dir is not an edit tree (glibc-series.sh edit)"
  [ -z "$(git -C "$dir" status --porcelain --untracked-files=no)" ] ||
    die "$dir has uncommitted changes"
  rm -f "$PATCHES"/*.patch
  git -C "$dir" format-patch -q --zero-commit --no-signature -o "$PATCHES" pristine..HEAD
  {
    echo "# The glibc series against pristine glibc $GLIBC_VERSION (glibc.pin), in the"
    echo "# order git am applies it.  Written by build-scripts/patches/glibc-series.sh export."
    (cd "$PATCHES" && ls -1 -- *.patch)
  } > "$SERIES"
  n=$(series_patches "$SERIES" | wc -l)
  # The read-only view of what the series adds under sysdeps/.
  rm -rf "$TOP/sysdeps"
  added=$(git -C "$dir" diff --name-only --diff-filter=A pristine HEAD -- sysdeps/)
  for f in $added; do
    mkdir -p "$TOP/$(dirname "$f")"
    git -C "$dir" show "HEAD:$f" > "$TOP/$f"
  done
  log "exported $n patches; sysdeps/ holds the $(wc -w <<<"$added") files they add"
}

cmd_write() {
  local outdir=${1:-$OUT/glibc-series}
  rm -rf "$outdir"
  mkdir -p "$outdir"
  cp $(series_files) "$outdir/"
  series_patches "$SERIES" > "$outdir/series"
  log "wrote $(wc -l < "$outdir/series") patches to ${outdir#"$TOP"/}"
}

cmd=${1:-}
[ $# -eq 0 ] || shift
case $cmd in
  apply) cmd_apply "$@" ;;
  edit) cmd_edit "$@" ;;
  export) cmd_export "$@" ;;
  write) cmd_write "$@" ;;
  check) exec "$TOP/build-scripts/patches/glibc-series-check.sh" "$@" ;;
  *) die "usage: glibc-series.sh apply DIR | edit [DIR] | export [DIR] | write [OUTDIR] | check [--static | --from N]" ;;
esac
