#!/bin/bash
# build-scripts/fetch/fetch-busybox.sh, for the arm VM (busybox-static:armhf,
# the smallest), into scratch output directories:
#   sources             (offline) the Debian entries it takes from apt
#                       sources of both formats under a made-up /etc/apt
#   system              the system's sources, apt lists in a fresh empty
#                       directory: busybox is an ARM ELF, a second run is
#                       a cached no-op, and neither dpkg's architectures
#                       nor /var/lib/apt/lists changed
#   unreachable-source  the same plus an unreachable extra source
#                       (RSEQ_APT_EXTRA_SOURCES): still fetched, with a
#                       warning naming it
# Exit 0 pass (the scratch output removed), 77 when the Debian mirror
# cannot be reached (the last line says why), else 1.
#   fetch-busybox.sh SCRATCH-DIR CASE
set -euo pipefail
scratch=$1
case_name=$2
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fetch=$top/build-scripts/fetch/fetch-busybox.sh

fail() { echo "FAIL: $*"; exit 1; }

# The system's apt and dpkg state that fetch-busybox.sh must leave alone.
system_state() {
  dpkg --print-foreign-architectures | sed 's/^/foreign-architecture /'
  ls -la --full-time /var/lib/apt/lists
}

# Exit 77 if none of the Debian URIs in OUT's private sources answers
# (through apt, with the same network settings as the fetch).
unsupported_if_offline() {
  local out=$1 conf=$1/apt-armhf/apt.conf uri suite why=
  [ -f "$conf" ] || return 0
  while read -r uri suite; do
    if APT_CONFIG=$conf /usr/lib/apt/apt-helper download-file \
         "${uri%/}/dists/$suite/InRelease" "$out/probe-InRelease" >"$out/probe.log" 2>&1; then
      return 0
    fi
    why="${uri%/}/dists/$suite/InRelease: $(grep -E '^E: ' "$out/probe.log" | head -n 1 | cut -c4-)"
  done < <(awk '/^URIs:/ { u = $2 } /^Suites:/ { print u, $2 }' \
             "$out/apt-armhf/etc/sources.list.d/debian.sources")
  echo "the Debian mirror is unreachable ($why)"
  exit 77
}

# Run fetch-busybox.sh arm into OUT (fresh); print its output and time.
run_fetch() {
  local out=$1 start status=0
  shift
  rm -rf "$out"
  start=$EPOCHREALTIME
  env OUT="$out" "$@" bash "$fetch" arm >"$out.log" 2>&1 || status=$?
  cat "$out.log"
  echo "fetch-busybox.sh arm: status $status, $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
  if [ $status -ne 0 ]; then
    unsupported_if_offline "$out"
    fail "fetch-busybox.sh arm failed with the Debian mirror reachable"
  fi
  file "$out/busybox/arm/bin/busybox" | grep -q 'ELF 32-bit LSB executable, ARM' ||
    fail "not an ARM program: $(file "$out/busybox/arm/bin/busybox")"
  compgen -G "$out/apt-armhf/state/lists/*_main_binary-armhf_Packages*" >/dev/null ||
    fail "no private armhf package lists in $out/apt-armhf/state/lists"
}

mkdir -p "$scratch"
case $case_name in
  sources)
    etc=$scratch/etc-apt
    rm -rf "$etc"
    mkdir -p "$etc/sources.list.d"
    cat > "$etc/sources.list" <<'EOF'
# deb http://commented.example/debian bookworm main
deb http://deb.debian.org/debian bookworm main contrib # trailing comment
deb-src http://deb.debian.org/debian bookworm main
deb [ arch=amd64,i386 signed-by=/k/sec.gpg ] http://security.debian.org/debian-security bookworm-security main
deb [trusted=yes] http://mirror.example/debian/ bookworm-backports contrib main
deb https://download.docker.com/linux/debian bookworm stable
deb https://packages.cloud.google.com/apt cloud-sdk main
deb http://deb.debian.org/debian bookworm main
EOF
    cat > "$etc/sources.list.d/deb822.sources" <<'EOF'
Types: deb-src deb
# a comment inside the stanza
URIs: http://a.example/debian
 http://b.example/debian
Suites: trixie trixie-updates
Components: main non-free-firmware
Architectures: amd64
Check-Valid-Until: no
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOBFJ
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb
URIs: http://disabled.example/debian
Suites: trixie
Components: main
Enabled: no

Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
EOF
    printf 'deb http://disabled-file.example/debian bookworm main\n' \
      > "$etc/sources.list.d/off.list.disabled"
    printf 'deb http://backup-file.example/debian bookworm main\n' \
      > "$etc/sources.list.d/old.list~"
    cat > "$scratch/sources.want" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /k/sec.gpg

Types: deb
URIs: http://mirror.example/debian/
Suites: bookworm-backports
Components: main
Trusted: yes

Types: deb
URIs: http://a.example/debian
Suites: trixie
Components: main
Signed-By: 
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOBFJ
 -----END PGP PUBLIC KEY BLOCK-----
Check-Valid-Until: no

Types: deb
URIs: http://a.example/debian
Suites: trixie-updates
Components: main
Signed-By: 
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOBFJ
 -----END PGP PUBLIC KEY BLOCK-----
Check-Valid-Until: no

Types: deb
URIs: http://b.example/debian
Suites: trixie
Components: main
Signed-By: 
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOBFJ
 -----END PGP PUBLIC KEY BLOCK-----
Check-Valid-Until: no

Types: deb
URIs: http://b.example/debian
Suites: trixie-updates
Components: main
Signed-By: 
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOBFJ
 -----END PGP PUBLIC KEY BLOCK-----
Check-Valid-Until: no

EOF
    # shellcheck source=../../build-scripts/fetch/fetch-busybox.sh
    (. "$fetch" && debian_sources "$etc") > "$scratch/sources.got"
    diff -u "$scratch/sources.want" "$scratch/sources.got" || fail "Debian sources differ"
    echo "sources: ok"
    ;;
  system)
    out=$scratch/system
    before=$(system_state)
    run_fetch "$out"
    after=$(system_state)
    [ "$before" = "$after" ] ||
      fail "the system's apt or dpkg state changed: $(diff <(echo "$before") <(echo "$after") || true)"
    stamp=$(stat -c %Y.%s "$out/apt-armhf/update.log")
    sleep 1
    second=$(env OUT="$out" bash "$fetch" arm 2>&1) || fail "second run failed: $second"
    if [ -n "$second" ] || [ "$stamp" != "$(stat -c %Y.%s "$out/apt-armhf/update.log")" ]; then
      fail "second run was not a cached no-op: $second"
    fi
    rm -rf "$out"
    echo "system: ok"
    ;;
  unreachable-source)
    out=$scratch/unreachable-source
    run_fetch "$out" RSEQ_APT_EXTRA_SOURCES='deb [trusted=yes] http://127.0.0.1:9/debian bookworm main'
    if ! grep -q '^warning: .*some indexes failed' "$out.log" ||
       ! grep -q '127\.0\.0\.1:9' "$out.log"; then
      fail "no warning naming the unreachable source"
    fi
    rm -rf "$out"
    echo "unreachable-source: ok"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
