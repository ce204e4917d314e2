#!/bin/bash
# Fetch the Debian source package of a test kernel
# (build-scripts/tables/vms: kernel "stock:NAME", or "cpu_opv", whose
# NAME is CPU_OPV_SOURCE in lib/kernel.sh) as pinned in
# kernel-patches/NAME.pin, into out/NAME/, and print one line "DEB
# SHA256 PACKAGE VERSION" (DEB: the .deb's path).  build-kernel.sh and
# kernel-edit-tree.sh call it; the messages go to stderr.
#
#   fetch-linux-source.sh NAME        (e.g. linux-source-7, linux-source-6.12)
#
# Which package, in order:
#   1. the pinned .deb already in out/NAME/ or in the artifact cache
#      (lib/cache.sh; entry NAME-<sha256>): no network at all;
#   2. the pinned package and version when the mirror still offers it,
#      its sha256 checked against the pin (a mismatch is an error);
#   3. else the newest package matching the pin's Fallback that the mirror
#      offers (backports drop old versions), with a warning naming its
#      version and sha256;
#   4. when the mirror offers none (unreachable, say), the newest matching
#      .deb already in out/NAME/ or the cache, with a warning;
#   5. else an error naming the commands to run by hand.
# The .deb is kept in out/NAME/ and in the artifact cache, so that later
# builds and new clones on this machine do not download it again.
#
# apt's own client downloads it, with a private configuration in
# $OUT/apt-NAME/ (build-scripts/lib/apt-private.sh: the system's apt
# state and dpkg's architectures untouched, no root needed): the Debian
# mirrors of the system's sources (their URIs and Signed-By; the
# security archive left out) with the pin's Suites, component main.
# Debian's archive keyring verifies trixie's Release, so nothing is
# trusted unsigned.  A failed index only warns.
#
# Environment:
#   RSEQ_APT_EXTRA_SOURCES  more sources (apt-private.sh)
#   RSEQ_FETCH_RETRIES      attempts after the first (default 3)
. "$(dirname "${BASH_SOURCE[0]}")/../lib/pins.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/cache.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt-private.sh"

# Attempts after the first (apt-get update and download), 2, 4, 8 s apart.
FETCH_RETRIES=${RSEQ_FETCH_RETRIES:-3}

# The pin's Suites (component main) on each Debian mirror of the system's
# sources (under ETC, default /etc/apt), as deb822 stanzas: the URIs of
# its Debian entries but the security archive's, each with its own
# Signed-By, Trusted and Check-* fields; one stanza per URI.
stock_sources() {
  local suites=$1 sources
  sources=$(system_debian_sources "${2:-/etc/apt}") || return 1
  printf '%s\n' "$sources" | awk -v suites="$suites" '
    BEGIN { RS = ""; FS = "\n" }
    {
      uri = ""; suite = ""; opts = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^URIs: /) { uri = substr($i, 7); continue }
        if ($i ~ /^Suites: /) { suite = substr($i, 9); continue }
        if ($i ~ /^(Types|Components): /) continue
        opts = opts $i "\n"        # Signed-By (and its key lines), Trusted, Check-*
      }
      if (suite ~ /-security$/ || uri ~ /security/) next
      u = uri; sub(/\/+$/, "", u)
      if (u in seen) next
      seen[u] = 1
      printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n%s\n", uri, suites, opts
    }'
}

# The packages matching the glob PATTERN that the private lists offer,
# one "PACKAGE VERSION SHA256" line each, newest version first.
offered() {
  local conf=$1 pattern=$2 regex names
  regex="^$(printf '%s' "$pattern" | sed 's/[.+]/\\&/g; s/\*/.*/g; s/?/./g')\$"
  names=$(APT_CONFIG=$conf apt-cache search --names-only "$regex" 2>/dev/null | awk '{ print $1 }')
  [ -n "$names" ] || return 0
  # shellcheck disable=SC2086
  APT_CONFIG=$conf apt-cache show $names 2>/dev/null | awk '
    BEGIN { RS = ""; FS = "\n" }
    {
      p = v = s = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^Package: /) p = substr($i, 10)
        else if ($i ~ /^Version: /) v = substr($i, 10)
        else if ($i ~ /^SHA256: /) s = substr($i, 9)
      }
      if (p != "" && v != "" && s != "") print p, v, s
    }' | sort -u | newest_first
}

# Sort "PACKAGE VERSION ..." lines by Debian version, newest first.
newest_first() {
  local lines=() i j t
  mapfile -t lines
  for ((i = 1; i < ${#lines[@]}; i++)); do
    t=${lines[i]}
    for ((j = i - 1; j >= 0; j--)); do
      dpkg --compare-versions "$(cut -d' ' -f2 <<< "${lines[j]}")" lt "$(cut -d' ' -f2 <<< "$t")" || break
      lines[j + 1]=${lines[j]}
    done
    lines[j + 1]=$t
  done
  [ ${#lines[@]} -eq 0 ] || printf '%s\n' "${lines[@]}"
}

sha256() {
  sha256sum "$1" | cut -d' ' -f1
}

# The fields of a .deb: "PACKAGE VERSION".
deb_id() {
  dpkg-deb -f "$1" Package Version 2>/dev/null | awk -F': ' '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }'
}

# local_copy PACKAGE VERSION SHA256: that .deb from out/NAME/ or the
# artifact cache, checked; prints its path.  A copy with another sha256
# is removed.
local_copy() {
  local pkg=$1 ver=$2 want=$3 deb
  for deb in "$dir"/*.deb; do
    [ -f "$deb" ] && [ "$(deb_id "$deb")" = "$pkg $ver" ] || continue
    if [ "$(sha256 "$deb")" = "$want" ]; then
      echo "$deb"
      return 0
    fi
    log "warning: removed ${deb#"$TOP"/}: sha256 $(sha256 "$deb"), not $want"
    rm -f "$deb"
  done
  mkdir -p "$dir.tmp"
  if cache_restore "$name" "${want:0:16}" "$dir.tmp" 2>/dev/null; then
    for deb in "$dir.tmp"/*.deb; do
      if [ -f "$deb" ] && [ "$(deb_id "$deb")" = "$pkg $ver" ] && [ "$(sha256 "$deb")" = "$want" ]; then
        mv "$deb" "$dir/"
        rm -rf "$dir.tmp"
        log "$pkg $ver from the artifact cache"
        echo "$dir/${deb##*/}"
        return 0
      fi
    done
  fi
  rm -rf "$dir.tmp"
  return 1
}

# The newest .deb matching the Fallback pattern already in out/NAME/ or
# the artifact cache (restored into out/NAME/); prints its path.
newest_local() {
  local entry deb best line
  for entry in "$ARTIFACT_CACHE/$name"-*.tar; do
    [ "$ARTIFACT_CACHE" != off ] && [ -f "$entry" ] || continue
    tar -tf "$entry" 2>/dev/null | grep -q '\.deb$' || continue
    tar -xf "$entry" -C "$dir" 2>/dev/null || true
  done
  line=$(for deb in "$dir"/*.deb; do
           [ -f "$deb" ] || continue
           # shellcheck disable=SC2254
           case $(deb_id "$deb" | cut -d' ' -f1) in $fallback) echo "$(deb_id "$deb") $deb" ;; esac
         done | newest_first | head -n 1)
  best=${line##* }
  [ -n "$best" ] || return 1
  echo "$best"
}

# Download PACKAGE=VERSION into out/NAME/; prints its path.
download() {
  local conf=$1 pkg=$2 ver=$3 deb
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && APT_CONFIG=$conf apt-get download -q "$pkg=$ver") >"${conf%/*}/download.log" 2>&1 ||
    return 1
  deb=$(ls "$dir.tmp"/*.deb) || return 1
  mv "$deb" "$dir/" && rm -rf "$dir.tmp" || return 1
  echo "$dir/${deb##*/}"
}

# The error when nothing could be had: what failed and the commands.
give_up() {
  local conf=$1
  update_warnings "$suites" "" "${conf%/*}/update.log"
  {
    printf 'error: no %s (pinned: %s %s) could be downloaded from %s' "$fallback" "$package" "$version" "$suites"
    printf ' on the Debian mirrors of /etc/apt (%s)\n' \
      "$(awk '/^URIs:/ { printf "%s%s", sep, $2; sep = " " }' "${conf%/*}/etc/sources.list.d/debian.sources")"
    local why
    why=$(grep -E '^E: ' "${conf%/*}/download.log" 2>/dev/null | tail -n 1 | cut -c4- || true)
    [ -z "$why" ] || printf '  last apt error: %s\n' "$why"
    printf 'By hand (then run the build again):\n'
    printf '  APT_CONFIG=%s apt-get update\n' "$conf"
    printf "  APT_CONFIG=%s apt-cache policy '%s'\n" "$conf" "$fallback"
    printf '  mkdir -p %s && cd %s && APT_CONFIG=%s apt-get download %s=%s\n' "$dir" "$dir" "$conf" "$package" "$version"
    printf 'or copy a %s .deb into %s (the pinned one: sha256 %s).\n' "$fallback" "$dir" "$pin_sha"
  } >&2
}

main() {
  [ $# -eq 1 ] || die "usage: fetch-linux-source.sh NAME   (kernel-patches/NAME.pin)"
  name=$1
  pin=$TOP/kernel-patches/$name.pin
  [ -f "$pin" ] || die "no pin file kernel-patches/$name.pin"
  package=$(pin_field "$pin" Package)
  version=$(pin_field "$pin" Version)
  pin_sha=$(pin_field "$pin" SHA256)
  fallback=$(pin_field "$pin" Fallback)
  suites=$(pin_field "$pin" Suites)
  dir=$OUT/$name
  mkdir -p "$dir"

  local deb sha conf sources attempt=0 list pick pkg ver want
  if deb=$(local_copy "$package" "$version" "$pin_sha"); then
    echo "$deb $pin_sha $package $version"
    return 0
  fi

  sources=$(stock_sources "$suites") || return 1
  [ -n "$sources" ] || die "no Debian mirror (other than the security archive) in the system's apt sources"
  conf=$(apt_private_setup "$OUT/apt-$name" "$(dpkg --print-architecture)" "$sources" \
           "build-scripts/fetch/fetch-linux-source.sh: Debian's $fallback from $suites") || return 1
  log "looking for $package $version in $suites"
  while :; do
    APT_CONFIG=$conf apt-get update -q >"${conf%/*}/update.log" 2>&1 || true
    list=$(offered "$conf" "$fallback")
    pick=$(awk -v p="$package" -v v="$version" '$1 == p && $2 == v { print; exit }' <<< "$list")
    [ -n "$pick" ] || pick=$(head -n 1 <<< "$list")
    if [ -n "$pick" ]; then
      read -r pkg ver want <<< "$pick"
      # A fallback kept from an earlier run is not downloaded again.
      deb=$(local_copy "$pkg" "$ver" "$want") && break
      log "downloading $pkg $ver"
      deb=$(download "$conf" "$pkg" "$ver") && break
    fi
    attempt=$((attempt + 1))
    [ $attempt -le $FETCH_RETRIES ] || break
    sleep $((2 ** attempt))
  done

  if [ -z "$deb" ]; then
    # Nothing from the mirror: the newest one this machine already has.
    if deb=$(newest_local); then
      read -r pkg ver <<< "$(deb_id "$deb")"
      sha=$(sha256 "$deb")
      update_warnings "$suites" "" "${conf%/*}/update.log"
      printf 'warning: the Debian mirror offers no %s; using %s %s kept from an earlier download (sha256 %s), not the pinned %s %s\n' \
        "$fallback" "$pkg" "$ver" "$sha" "$package" "$version" >&2
      echo "$deb $sha $pkg $ver"
      return 0
    fi
    give_up "$conf"
    return 1
  fi

  update_warnings "$suites" " (ignored: $pkg came from the others)" "${conf%/*}/update.log"
  sha=$(sha256 "$deb")
  if [ "$pkg $ver" = "$package $version" ]; then
    if [ "$sha" != "$pin_sha" ]; then
      rm -f "$deb"
      die "$package $version from the mirror has sha256 $sha, not the pinned $pin_sha (kernel-patches/$name.pin)"
    fi
  else
    [ "$sha" = "$want" ] || { rm -f "$deb"; die "$pkg $ver: sha256 $sha, not the $want of the mirror's index"; }
    printf 'warning: the Debian mirror no longer offers the pinned %s %s (kernel-patches/%s.pin); using the newest %s it offers: %s %s, sha256 %s\n' \
      "$package" "$version" "$name" "$fallback" "$pkg" "$ver" "$sha" >&2
  fi
  # Only the .deb in use stays in out/NAME (the cache keeps the last two).
  find "$dir" -maxdepth 1 -name '*.deb' ! -name "${deb##*/}" -delete
  [ -f "$ARTIFACT_CACHE/$name-${sha:0:16}.tar" ] || cache_store "$name" "${sha:0:16}" "$dir" "${deb##*/}"
  echo "$deb $sha $pkg $ver"
}

# Sourced (tests/rseq.linux7/fetch-linux-source.sh), only the functions.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
