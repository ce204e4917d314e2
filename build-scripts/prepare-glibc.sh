#!/bin/bash
# Produce the patched glibc source tree in out/glibc-src:
#   pristine tarball (sha256-checked) + sysdeps/ overlay + glibc-patches/series.
# The same tree as the self-contained series of glibc-series.sh, which
# tests/rseq.glibc checks.
#
# The tree is assembled in a staging directory and synchronised into
# out/glibc-src by content, so files that did not change keep their
# timestamps and make rebuilds only what an edit really touched.
. "$(dirname "$0")/common.sh"

pristine=$OUT/glibc-pristine
stage=$OUT/glibc-stage
src=$OUT/glibc-src

[ -r "$GLIBC_TARBALL" ] || die "glibc tarball not found: $GLIBC_TARBALL (install glibc-source or set GLIBC_TARBALL)"

if [ "$(cat "$pristine/.sha256" 2>/dev/null)" != "$GLIBC_SHA256" ]; then
  log "checking $GLIBC_TARBALL"
  actual=$(sha256sum "$GLIBC_TARBALL" | cut -d' ' -f1)
  [ "$actual" = "$GLIBC_SHA256" ] ||
    die "sha256 mismatch for $GLIBC_TARBALL: got $actual, want $GLIBC_SHA256 (set GLIBC_SHA256 to override)"
  log "unpacking glibc $GLIBC_VERSION"
  rm -rf "$pristine"
  mkdir -p "$pristine"
  tar -xf "$GLIBC_TARBALL" -C "$pristine" --strip-components=1
  echo "$GLIBC_SHA256" > "$pristine/.sha256"
fi

rm -rf "$stage"
cp -a "$pristine" "$stage"
rm -f "$stage/.sha256"

# New files first: patches may hook them into Makefiles and Versions.
(cd "$TOP/sysdeps" && find . -type f) | while read -r f; do
  [ -e "$stage/sysdeps/$f" ] && die "sysdeps/$f already exists in glibc; change it with a patch instead"
  true
done
cp -r "$TOP/sysdeps/." "$stage/sysdeps/"

series_patches "$TOP/glibc-patches/series" | while read -r p; do
  # A patch that only adds new files has no diff here.
  grep -q '^diff --git ' "$TOP/glibc-patches/$p" || continue
  if ! patch -d "$stage" -p1 --batch --forward --quiet < "$TOP/glibc-patches/$p" >"$OUT/patch.log" 2>&1; then
    cat "$OUT/patch.log" >&2
    die "glibc-patches/$p does not apply"
  fi
done
find "$stage" -name '*.orig' -delete

mkdir -p "$src"
rsync -rlc --delete "$stage/" "$src/"
rm -rf "$stage"
log "patched source ready in out/glibc-src"
