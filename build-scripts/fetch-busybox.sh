#!/bin/bash
# Fetch Debian's busybox-static for the test VMs of other architectures
# (build-scripts/vms, column debarch) into out/busybox/<vm>/, where run-vm
# takes /bin/busybox from.  Cached: a VM whose busybox is there is skipped.
# x86_64 uses the host's /bin/busybox (package busybox-static).
#
#   fetch-busybox.sh [VM...]      (default: every VM but x86_64)
#
# The download needs the architecture in dpkg (dpkg --add-architecture)
# and its package lists (apt-get update): done as root, printed otherwise.
. "$(dirname "$0")/common.sh"

# The busybox binary of VM, once fetched.
busybox_path() {
  echo "$OUT/busybox/$1/bin/busybox"
}

# Make apt know busybox-static:DEBARCH, or print how and fail.
enable_arch() {
  local debarch=$1
  apt-cache show "busybox-static:$debarch" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    printf 'busybox-static:%s is unknown to apt. Run as root:\n  dpkg --add-architecture %s && apt-get update\nthen again: %s\n' \
      "$debarch" "$debarch" "build-scripts/fetch-busybox.sh" >&2
    return 1
  fi
  log "adding the dpkg architecture $debarch"
  dpkg --add-architecture "$debarch"
  apt-get update -qq
}

fetch() {
  local vm=$1 debarch dir deb
  [ "$vm" != x86_64 ] || return 0
  dir=$OUT/busybox/$vm
  [ -x "$(busybox_path "$vm")" ] && return 0
  debarch=$(vm_field "$vm" debarch)
  enable_arch "$debarch" || return 1
  log "downloading busybox-static:$debarch"
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp"
  # apt-get download writes to the current directory, which apt's
  # unprivileged download user may not be able to write.
  (cd "$dir.tmp" && apt-get download -qq -o APT::Sandbox::User="$(id -un)" \
    "busybox-static:$debarch") >/dev/null
  deb=$(ls "$dir.tmp"/busybox-static_*.deb)
  dpkg-deb -x "$deb" "$dir.tmp/pkg"
  mkdir -p "$dir/bin"
  cp "$dir.tmp/pkg/bin/busybox" "$(busybox_path "$vm")"
  rm -rf "$dir.tmp"
}

vms=("$@")
[ ${#vms[@]} -gt 0 ] || mapfile -t vms < <(vm_names)
status=0
for vm in "${vms[@]}"; do
  fetch "$vm" || status=1
done
exit $status
