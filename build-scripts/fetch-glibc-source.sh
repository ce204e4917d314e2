#!/bin/bash
# Print the path of the pristine glibc tarball pinned in
# glibc-patches/glibc.pin, fetching it first if this machine has none.
# prepare-glibc.sh and glibc-series.sh call it; messages go to stderr.
#
# Where it comes from, in order:
#   1. GLIBC_TARBALL, when set (a copy from elsewhere): its sha256 must
#      be the pin's;
#   2. out/glibc-orig/FILE or the artifact cache (entry glibc-orig-<sha>):
#      no network at all;
#   3. the Debian mirror: the source index (deb-src) of the pin's Suites
#      on the mirrors of the system's apt sources, read with apt's own
#      client and a private configuration (apt-private.sh: the system's
#      apt state untouched, no root needed), names the file's directory;
#      apt-helper downloads it and checks the pinned sha256 itself, so
#      the index needs no signature (Debian 12's keyring cannot verify
#      sid's, and its warnings are not shown).  A failed index is no
#      error by itself; three more attempts follow.
#   4. else one error: what is missing, and GLIBC_TARBALL as the way out.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/apt-private.sh"

PIN=$TOP/glibc-patches/glibc.pin
RETRIES=${RSEQ_FETCH_RETRIES:-3}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# The deb-src stanzas: the pin's Suites on each Debian mirror of the
# system's sources (the security archive left out).
source_stanzas() {
  local sources
  sources=$(system_debian_sources) || return 1
  printf '%s\n' "$sources" | awk -v suites="$suites" '
    BEGIN { RS = ""; FS = "\n" }
    {
      uri = ""
      for (i = 1; i <= NF; i++) if ($i ~ /^URIs: /) uri = substr($i, 7)
      if (uri == "" || uri ~ /security/) next
      u = uri; sub(/\/+$/, "", u)
      if (u in seen) next
      seen[u] = 1
      printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nTrusted: yes\nCheck-Valid-Until: no\n\n", uri, suites
    }'
}

# The URLs the private source index gives for the pinned file.
offered_urls() {
  local conf=$1
  APT_CONFIG=$conf apt-cache showsrc "$source" 2>/dev/null | awk -v file="$file" '
    /^Directory: / { dir = $2 }
    /^Files:/ { infiles = 1; next }
    /^[^ ]/ { infiles = 0 }
    infiles && $3 == file { print dir "/" file }' | sort -u |
  while read -r path; do
    awk '/^URIs:/ { print $2 }' "${conf%/*}/etc/sources.list.d/debian.sources" |
      while read -r uri; do echo "${uri%/}/$path"; done
  done
}

give_up() {
  {
    printf 'error: the pristine glibc tarball %s (sha256 %s) is not on this machine\n' "$file" "$pin_sha"
    printf '  and the Debian mirror offered none (suites %s, source package %s).\n' "$suites" "$source"
    [ ! -f "$apt_dir/update.log" ] || grep -E '^(W|E): ' "$apt_dir/update.log" | sed 's/^/  /' | head -n 5
    printf 'Download it by hand from any Debian mirror (pool/main/g/glibc/%s;\n' "$file"
    printf 'upstream'\''s glibc-%s.tar.xz, with the manual, has another sha256) and run\n' "$version"
    printf '  GLIBC_TARBALL=/path/to/%s make\n' "$file"
  } >&2
  exit 1
}

main() {
  source=$(pin_field "$PIN" Source)
  version=$(pin_field "$PIN" Version)
  file=$(pin_field "$PIN" File)
  pin_sha=$(pin_field "$PIN" SHA256)
  suites=$(pin_field "$PIN" Suites)
  local dir=$OUT/glibc-orig key sha conf url attempt=0
  key=${pin_sha:0:16}
  apt_dir=$OUT/apt-glibc-source

  if [ -n "${GLIBC_TARBALL:-}" ]; then
    [ -r "$GLIBC_TARBALL" ] || die "GLIBC_TARBALL=$GLIBC_TARBALL: no such file"
    sha=$(sha256 "$GLIBC_TARBALL")
    [ "$sha" = "$pin_sha" ] ||
      die "GLIBC_TARBALL=$GLIBC_TARBALL has sha256 $sha, not the $pin_sha of ${PIN#"$TOP"/} ($file)"
    echo "$GLIBC_TARBALL"
    return 0
  fi

  if [ -f "$dir/$file" ] && [ "$(cat "$dir/.sha256" 2>/dev/null)" = "$pin_sha" ]; then
    echo "$dir/$file"
    return 0
  fi
  rm -rf "$dir"
  if cache_restore glibc-orig "$key" "$dir" 2>/dev/null && [ -f "$dir/$file" ] &&
     [ "$(sha256 "$dir/$file")" = "$pin_sha" ]; then
    echo "$pin_sha" > "$dir/.sha256"
    echo "$dir/$file"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"

  conf=$(apt_private_setup "$apt_dir" "$(dpkg --print-architecture)" "$(source_stanzas)" \
           "build-scripts/fetch-glibc-source.sh: Debian's $source source index from $suites") ||
    give_up
  log "downloading $file (glibc $version) from Debian"
  while :; do
    APT_CONFIG=$conf apt-get update -q >"$apt_dir/update.log" 2>&1 || true
    for url in $(offered_urls "$conf"); do
      if APT_CONFIG=$conf /usr/lib/apt/apt-helper download-file "$url" "$dir/$file" "SHA256:$pin_sha" \
           >"$apt_dir/download.log" 2>&1; then
        echo "$pin_sha" > "$dir/.sha256"
        cache_store glibc-orig "$key" "$dir" "$file" .sha256
        echo "$dir/$file"
        return 0
      fi
      rm -f "$dir/$file"
    done
    attempt=$((attempt + 1))
    [ $attempt -le "$RETRIES" ] || break
    sleep $((2 ** attempt))
  done
  give_up
}

main "$@"
