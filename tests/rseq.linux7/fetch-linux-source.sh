#!/bin/bash
# build-scripts/fetch/fetch-linux-source.sh's choice of the stock Linux 7
# source (kernel-patches/linux-source-7.pin), without downloading anything: the
# output and artifact cache are scratch directories, and for the offline
# cases /etc/apt is replaced, in a private mount namespace, by sources of
# an unreachable mirror.
#   sources          the mirrors it takes from made-up apt sources: the
#                    pin's suites on each Debian URI, the security
#                    archive left out, Signed-By and Trusted kept
#   pinned-offline   the pinned .deb kept in out/: taken, no warning, no
#                    network needed
#   fallback-offline the pin names a version the mirror does not offer and
#                    the mirror is unreachable: the .deb kept is taken
#                    with a warning naming its version and sha256
#   nothing-offline  unreachable and nothing kept: exit 1, an error naming
#                    the commands to run by hand
# The offline cases take a hard link of the pinned .deb this machine
# already has (out/linux-source-7 or the artifact cache) and need root
# (unshare -m); without either they exit 77 with the reason.
#   fetch-linux-source.sh SCRATCH-DIR CASE
set -euo pipefail
scratch=$1
case_name=$2
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
name=linux-source-7

fail() { echo "FAIL: $*"; exit 1; }
unsupported() { echo "$*"; exit 77; }

# A copy of the scripts and the pin under $scratch/top (TOP of the copy),
# the pin's Version replaced by $1 when given.
scratch_top() {
  rm -rf "$scratch/top"
  mkdir -p "$scratch/top/kernel-patches"
  cp -r "$top/build-scripts" "$scratch/top/"
  if [ -n "${1:-}" ]; then
    sed "s/^Version: .*/Version: $1/" "$top/kernel-patches/$name.pin"
  else
    cat "$top/kernel-patches/$name.pin"
  fi > "$scratch/top/kernel-patches/$name.pin"
}

# The pinned .deb this machine has (out/ or the artifact cache), hard
# linked (or copied) into $scratch/out/$name.
keep_pinned_deb() {
  local sha deb entry cache
  sha=$(awk '/^SHA256:/ { print $2 }' "$top/kernel-patches/$name.pin")
  mkdir -p "$scratch/out/$name"
  for deb in "$top/out/$name"/*.deb; do
    [ -f "$deb" ] || continue
    ln -f "$deb" "$scratch/out/$name/" 2>/dev/null || cp "$deb" "$scratch/out/$name/"
    return 0
  done
  cache=${RSEQ_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rseq-toolchain}
  entry=$cache/$name-${sha:0:16}.tar
  [ -f "$entry" ] && tar -xf "$entry" -C "$scratch/out/$name" && return 0
  unsupported "the pinned $name .deb is not on this machine yet (make builds the x86_64-linux7 kernel, which fetches it)"
}

# Run the copy's fetch-linux-source.sh with /etc/apt naming an unreachable
# mirror; its stdout, stderr and status into $scratch/{out,err,status}.
fetch_offline() {
  [ "$(id -u)" = 0 ] || unsupported "the offline cases need root (a private mount namespace hides /etc/apt)"
  mkdir -p "$scratch/etc-apt/sources.list.d"
  echo 'deb http://127.0.0.1:9/debian bookworm main' > "$scratch/etc-apt/sources.list"
  unshare -m --propagation private bash -c '
      mount --bind "$1/etc-apt" /etc/apt || exit 99
      status=0
      OUT=$1/out RSEQ_CACHE_DIR=$1/cache RSEQ_FETCH_RETRIES=0 \
        "$1/top/build-scripts/fetch/fetch-linux-source.sh" linux-source-7 >"$1/stdout" 2>"$1/stderr" || status=$?
      echo $status > "$1/status"' - "$scratch" ||
    unsupported "unshare -m or mount --bind failed (no private mount namespace here)"
  echo "fetch-linux-source.sh stdout:"; cat "$scratch/stdout"; echo "stderr:"; cat "$scratch/stderr"
  echo "status: $(cat "$scratch/status")"
}

rm -rf "$scratch"
mkdir -p "$scratch"
case $case_name in
  sources)
    etc=$scratch/etc-apt
    mkdir -p "$etc/sources.list.d"
    cat > "$etc/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian/ bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
deb [trusted=yes] http://mirror.example/debian bookworm main contrib
deb https://download.docker.com/linux/debian bookworm stable
EOF
    cat > "$etc/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://a.example/debian
Suites: bookworm
Components: main
Signed-By: /k/a.gpg
EOF
    cat > "$scratch/want" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian
Suites: trixie trixie-backports
Components: main
Trusted: yes

Types: deb
URIs: http://a.example/debian
Suites: trixie trixie-backports
Components: main
Signed-By: /k/a.gpg

EOF
    # shellcheck source=../../build-scripts/fetch/fetch-linux-source.sh
    (. "$top/build-scripts/fetch/fetch-linux-source.sh" && stock_sources "trixie trixie-backports" "$etc") > "$scratch/got"
    diff -u "$scratch/want" "$scratch/got" || fail "the mirrors taken from the apt sources differ"
    echo "sources: ok"
    ;;
  pinned-offline)
    scratch_top
    keep_pinned_deb
    fetch_offline
    [ "$(cat "$scratch/status")" = 0 ] || fail "exit status $(cat "$scratch/status")"
    read -r deb sha package version < "$scratch/stdout"
    grep -q "^SHA256: $sha\$" "$top/kernel-patches/$name.pin" || fail "not the pinned sha256: $sha"
    grep -q "^Version: $version\$" "$top/kernel-patches/$name.pin" || fail "not the pinned version: $version"
    [ -f "$deb" ] || fail "no file $deb"
    ! grep -qi 'warning\|looking for' "$scratch/stderr" || fail "it went to the mirror or warned"
    echo "pinned-offline: ok ($package $version)"
    ;;
  fallback-offline)
    scratch_top 0.0-0
    keep_pinned_deb
    fetch_offline
    [ "$(cat "$scratch/status")" = 0 ] || fail "exit status $(cat "$scratch/status")"
    read -r deb sha package version < "$scratch/stdout"
    grep -q "^warning: .*no linux-source-7\\.\\*.*$package $version .*sha256 $sha" "$scratch/stderr" ||
      fail "no warning naming $package $version and its sha256"
    grep -q '^warning: apt-get update .*some indexes failed' "$scratch/stderr" ||
      fail "the unreachable mirror was not reported"
    echo "fallback-offline: ok ($package $version, with a warning)"
    ;;
  nothing-offline)
    scratch_top
    fetch_offline
    [ "$(cat "$scratch/status")" = 1 ] || fail "exit status $(cat "$scratch/status"), not 1"
    [ ! -s "$scratch/stdout" ] || fail "printed a package: $(cat "$scratch/stdout")"
    grep -q '^error: no linux-source-7\.\* .*could be downloaded' "$scratch/stderr" || fail "no clear error"
    grep -q 'apt-get update$' "$scratch/stderr" && grep -q 'apt-get download linux-source-7' "$scratch/stderr" ||
      fail "the error does not name the commands to run by hand"
    echo "nothing-offline: ok"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
rm -rf "$scratch"
