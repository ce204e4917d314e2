#!/bin/bash
# Apply the glibc series (glibc-patches/) to pristine glibc with
# `git am`, one patch at a time, and check each step.  Run through
# `glibc-series.sh check`.
#
#   glibc-series-check.sh --static   after each patch: every Linux port's
#       libc.abilist lists exactly the RSEQ_1.0 symbols of Versions, and
#       the commit message has a Signed-off-by: line and no
#       Upstream-Status: trailer (glibc's contribution checklist); at the
#       end the tree is the one prepare-glibc.sh assembles (out/glibc-src)
#       and sysdeps/ holds exactly the files the series adds.  Seconds.
#   glibc-series-check.sh [--from N]   also build glibc for the build
#       machine's ABI after each patch (from patch N on) and run
#       check-abi: hours (make series-check, not part of make check).
#
# Work trees: out/glibc-series-check (source) and out/glibc-series-check-build;
# out/glibc-series-check-static for --static.
. "$(dirname "$0")/../lib/glibc.sh"

mode=build from=1
case ${1:-} in
  --static) mode=static ;;
  --from) from=${2:?}; ;;
  "") ;;
  *) die "usage: glibc-series-check.sh [--static | --from N]" ;;
esac

# The static check has trees of its own, so that make check may run
# while a build check is under way.
work=$OUT/glibc-series-check
[ "$mode" = build ] || work=$OUT/glibc-series-check-static
series=$work.patches
src=$work
build=$work-build
"$TOP/build-scripts/patches/glibc-series.sh" write "$series" 2>/dev/null

# A fresh build tree too: objects of a later patch left by an earlier
# run would be linked into an earlier one's libc.
rm -rf "$build"
glibc_unpack "$src"
cd "$src"
git init -q
git config user.name rseq-toolchain
git config user.email rseq-toolchain@invalid
git add -A -f -- . ':!manual/Makefile'
git commit -q -m pristine

# The RSEQ_1.0 symbols of the Versions file, sorted.
versions_symbols() {
  sed -n '/^  RSEQ_1\.0 {/,/^  }/p' sysdeps/unix/sysv/linux/Versions |
    sed -n 's/^ *\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' | sort
}

# Every port's libc.abilist lists exactly those symbols.
check_abilists() {
  local want list bad=0
  want=$(versions_symbols)
  while read -r list; do
    if [ "$(sed -n 's/^RSEQ_1\.0 \([A-Za-z0-9_]*\) .*/\1/p' "$list" | sort)" != "$want" ]; then
      echo "FAIL: $1: $list does not list the RSEQ_1.0 symbols of Versions"
      bad=1
    fi
  done < <(find sysdeps/unix/sysv/linux -name libc.abilist)
  return $bad
}

build_step() {
  local p=$1
  if [ ! -f "$build/config.status" ]; then
    rm -rf "$build"
    mkdir -p "$build"
    (cd "$build" && "$src/configure" CC="$(command -v ccache >/dev/null && echo 'ccache ')gcc" \
        --prefix=/usr --enable-kernel=4.18 --disable-werror --disable-profile \
        --disable-crypt --without-selinux --disable-nscd >configure.log 2>&1) ||
      { echo "FAIL: $p: configure"; return 1; }
  fi
  glibc_refresh_generated "$src" "$build" ||
    { echo "FAIL: $p: remaking dl-tunable-list.h"; return 1; }
  make -C "$build" -j"$JOBS" >"$build/build-$p.log" 2>&1 ||
    { echo "FAIL: $p: build (out/${build#$OUT/}/build-$p.log)"; return 1; }
  make -C "$build" check-abi >"$build/check-abi-$p.log" 2>&1 ||
    { echo "FAIL: $p: check-abi (out/${build#$OUT/}/check-abi-$p.log)"; return 1; }
}

failed=0 n=0
while read -r p; do
  n=$((n + 1))
  start=$SECONDS
  git am -q "$series/$p" || { echo "FAIL: $p: git am"; failed=1; break; }
  msg=$(git log -1 --format=%B)
  grep -q '^Signed-off-by: ' <<<"$msg" || { echo "FAIL: $p: no Signed-off-by: line"; failed=1; }
  ! grep -q '^Upstream-Status: ' <<<"$msg" || { echo "FAIL: $p: an Upstream-Status: trailer (not for glibc)"; failed=1; }
  check_abilists "$p" || failed=1
  if [ "$mode" = build ] && [ "$n" -ge "$from" ]; then
    build_step "$p" || { failed=1; break; }
    echo "PASS: $p: applies, builds and passes check-abi ($((SECONDS - start)) s)"
  else
    echo "PASS: $p: applies; abilists match Versions"
  fi
done < "$series/series"

if [ "$failed" = 0 ] && [ "$n" = "$(wc -l < "$series/series")" ]; then
  if diff -r -q --no-dereference -x .git "$src" "$OUT/glibc-src" >/dev/null 2>&1; then
    echo "PASS: the series' tree is out/glibc-src"
  else
    echo "FAIL: the series' tree differs from out/glibc-src:"
    diff -r -q --no-dereference -x .git "$src" "$OUT/glibc-src" | head -20
    failed=1
  fi
  # sysdeps/ of the project: exactly the files the series adds there.
  added=$(git diff --name-only --diff-filter=A "$(git rev-list --max-parents=0 HEAD)" HEAD -- sysdeps/ | sort)
  view=$(cd "$TOP" && find sysdeps -type f | sort)
  stale=0
  for f in $added; do cmp -s "$f" "$TOP/$f" || stale=1; done
  if [ "$added" = "$view" ] && [ "$stale" = 0 ]; then
    echo "PASS: sysdeps/ holds the files the series adds, as of its last patch"
  else
    echo "FAIL: sysdeps/ is not the series' view (run build-scripts/patches/glibc-series.sh export)"
    failed=1
  fi
fi
exit $failed
