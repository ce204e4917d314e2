#!/bin/bash
# Fetch Debian's busybox-static for the test VMs of other architectures
# (build-scripts/tables/vms, column debarch) into out/busybox/<vm>/,
# where run-vm takes /bin/busybox from.  Cached: a VM whose busybox is
# there is skipped.  The VMs of the host's architecture (x86_64,
# x86_64-linux7) use the host's /bin/busybox (package busybox-static).
#
#   fetch-busybox.sh [VM...]      (default: every VM of another architecture)
#
# apt's own client downloads the package, with a private configuration in
# $OUT/apt-<debarch>/ (build-scripts/lib/apt-private.sh): the Debian
# entries of the system's sources (/etc/apt/sources.list,
# sources.list.d/*.list and *.sources; type deb, component main), that
# one architecture, an empty dpkg status and lists of its own.  Neither
# the system's apt state (lists, cache, status, preferences,
# sources.list.d, apt.conf.d and its hooks) nor dpkg's architectures are
# read or written; of the system's apt configuration only the network
# settings (Acquire::http::Proxy and the like) are copied.  No root
# needed.  By hand, for DEBARCH:
#   APT_CONFIG=$OUT/apt-DEBARCH/apt.conf apt-get update
#   APT_CONFIG=$OUT/apt-DEBARCH/apt.conf apt-get download busybox-static:DEBARCH
#
# An index that fails to download (a mirror mid-sync, an unreachable extra
# source) is a warning: only a failed download of the package is an error,
# after 3 retries of update and download.
#
# Environment:
#   RSEQ_APT_EXTRA_SOURCES  more sources, one-line format ("deb [opts] URI
#                           SUITE COMPONENT..."), one a line, added as given
. "$(dirname "${BASH_SOURCE[0]}")/../lib/vm.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt-private.sh"

FETCH_RETRIES=3

# The busybox binary of VM, once fetched.
busybox_path() {
  echo "$OUT/busybox/$1/bin/busybox"
}

# The ELF class, byte order and machine (e_ident[EI_CLASS], [EI_DATA],
# e_machine) of a Debian architecture's programs.
debarch_elf() {
  case $1 in
    amd64) echo "2 1 62" ;;
    i386) echo "1 1 3" ;;
    arm64) echo "2 1 183" ;;
    armhf) echo "1 1 40" ;;
    ppc64el) echo "2 1 21" ;;
    *) return 1 ;;
  esac
}

# The same three numbers read from FILE, or nothing if it is not ELF.
elf_ident() {
  local b
  read -ra b < <(od -An -v -tu1 -N20 "$1" 2>/dev/null | tr '\n' ' ')
  [ ${#b[@]} -eq 20 ] && [ "${b[*]:0:4}" = "127 69 76 70" ] || return 1
  if [ "${b[5]}" = 2 ]; then
    echo "${b[4]} ${b[5]} $((b[18] * 256 + b[19]))"
  else
    echo "${b[4]} ${b[5]} $((b[19] * 256 + b[18]))"
  fi
}

# The private apt configuration of DEBARCH, under $OUT/apt-DEBARCH; prints
# its apt.conf.
apt_setup() {
  local debarch=$1 sources
  sources=$(system_debian_sources) || return 1
  apt_private_setup "$OUT/apt-$debarch" "$debarch" "$sources" \
    "build-scripts/fetch/fetch-busybox.sh: Debian's $debarch packages"
}

# One attempt: apt-get update (its status ignored: an index the package
# does not come from may fail), then apt-get download into DIR.
apt_attempt() {
  local conf=$1 debarch=$2 dir=$3 apt=${1%/*}
  APT_CONFIG=$conf apt-get update -q >"$apt/update.log" 2>&1 || true
  (cd "$dir" && APT_CONFIG=$conf apt-get download -q "busybox-static:$debarch") \
    >"$apt/download.log" 2>&1
}

fetch() {
  local vm=$1 debarch dir deb conf attempt=0 elf want
  ! vm_host_busybox "$vm" || return 0
  dir=$OUT/busybox/$vm
  [ -x "$(busybox_path "$vm")" ] && return 0
  debarch=$(vm_field "$vm" debarch)
  want=$(debarch_elf "$debarch") || die "no ELF machine known for Debian architecture $debarch"
  conf=$(apt_setup "$debarch") || return 1
  log "downloading busybox-static:$debarch"
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp" || return 1
  until apt_attempt "$conf" "$debarch" "$dir.tmp"; do
    attempt=$((attempt + 1))
    if [ $attempt -gt $FETCH_RETRIES ]; then
      update_warnings "$debarch" "" "${conf%/*}/update.log"
      printf 'error: could not download busybox-static:%s (Debian %s, for VM %s) after %d attempts: %s\nBy hand:\n  APT_CONFIG=%s apt-get update\n  APT_CONFIG=%s apt-get download busybox-static:%s\n' \
        "$debarch" "$debarch" "$vm" $attempt \
        "$(grep -E '^E: ' "${conf%/*}/download.log" | tail -n 1 | cut -c4- || true)" \
        "$conf" "$conf" "$debarch" >&2
      rm -rf "$dir.tmp"
      return 1
    fi
    sleep $((2 ** attempt))
  done
  update_warnings "$debarch" " (ignored: busybox-static came from the others)" "${conf%/*}/update.log"
  deb=$(ls "$dir.tmp"/busybox-static_*.deb)
  if ! dpkg-deb -x "$deb" "$dir.tmp/pkg" || [ ! -f "$dir.tmp/pkg/bin/busybox" ]; then
    printf 'error: %s does not unpack to bin/busybox\n' "$deb" >&2
    return 1
  fi
  elf=$(elf_ident "$dir.tmp/pkg/bin/busybox") || elf="not ELF"
  if [ "$elf" != "$want" ]; then
    printf 'error: bin/busybox of %s: ELF class, data, machine %s, not %s (%s)\n' \
      "$deb" "$elf" "$want" "$debarch" >&2
    return 1
  fi
  mkdir -p "$dir/bin" && cp "$dir.tmp/pkg/bin/busybox" "$(busybox_path "$vm")" || return 1
  rm -rf "$dir.tmp"
}

main() {
  local vms=("$@") vm status=0
  [ ${#vms[@]} -gt 0 ] || mapfile -t vms < <(vm_names)
  for vm in "${vms[@]}"; do
    fetch "$vm" || status=1
  done
  return $status
}

# Sourced (tests/rseq.toolchain/fetch-busybox.sh), only the functions.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
