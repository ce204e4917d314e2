#!/bin/bash
# Print the path of the upstream ("orig") tarball of a Debian source
# package pinned in PIN, fetching it first if this machine has none;
# messages go to stderr.  fetch-glibc-source.sh (glibc-patches/glibc.pin)
# and tests/rseq.toolchain/real-projects.sh (tests/rseq.toolchain/
# projects/*.pin) call it.
#
#   fetch-orig-tarball.sh PIN [COMMAND]
#
# PIN is a pin file ("Key: value" lines, # comments): Source (the
# source package), Version, File (the orig tarball's name), Size, SHA256
# and Suites (where Debian's source index has it).  COMMAND is what the
# error message tells to run again (default "make").  The source
# package's name names the rest: NAME_TARBALL (upper case, - as _:
# GLIBC_TARBALL, XZ_UTILS_TARBALL), out/NAME-orig/ and the artifact
# cache entry NAME-orig-<sha>.
#
# Where it comes from, in order:
#   1. NAME_TARBALL, when set (a copy from elsewhere): its sha256 must
#      be the pin's; it is copied to out/NAME-orig/ and the cache;
#   2. out/NAME-orig/FILE or the artifact cache: no network at all;
#   3. the Debian mirror: the source index (deb-src) of the pin's Suites
#      on the mirrors of the system's apt sources, read with apt's own
#      client and a private configuration (apt-private.sh, in
#      out/apt-src-SUITES, shared by the pins of the same Suites: the
#      system's apt state untouched, no root needed), names the file's
#      directory; apt-helper downloads it and checks the pinned sha256
#      itself, so the index needs no signature (Debian 12's keyring
#      cannot verify sid's, and its warnings are not shown).  A failed
#      index is no error by itself; RSEQ_FETCH_RETRIES (default 3) more
#      attempts follow;
#   4. else one error: what is missing, and NAME_TARBALL as the way out.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/pins.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/cache.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt-private.sh"

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
  # A stanza's Directory may come after its Files: each stanza is read
  # whole.
  APT_CONFIG=$conf apt-cache showsrc "$source" 2>/dev/null | awk -v file="$file" '
    BEGIN { RS = ""; FS = "\n" }
    {
      dir = ""; found = 0; infiles = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^Directory: /) dir = substr($i, 12)
        if ($i ~ /^Files:/) { infiles = 1; continue }
        if ($i ~ /^[^ ]/) infiles = 0
        if (infiles && split($i, w, " ") == 3 && w[3] == file) found = 1
      }
      if (found && dir != "") print dir "/" file
    }' | sort -u |
  while read -r path; do
    awk '/^URIs:/ { print $2 }' "${conf%/*}/etc/sources.list.d/debian.sources" |
      while read -r uri; do echo "${uri%/}/$path"; done
  done
}

# Debian's pool directory of the source package (pool/main/g/glibc,
# pool/main/libz/libzstd), for the message.
pool_dir() {
  local prefix=${source:0:1}
  [[ $source != lib?* ]] || prefix=${source:0:4}
  echo "pool/main/$prefix/$source"
}

give_up() {
  {
    printf 'error: the pristine %s tarball %s (sha256 %s) is not on this machine\n' "$source" "$file" "$pin_sha"
    printf '  and the Debian mirror offered none (suites %s, source package %s).\n' "$suites" "$source"
    [ ! -f "$apt_dir/update.log" ] || grep -E '^(W|E): ' "$apt_dir/update.log" | sed 's/^/  /' | head -n 5
    printf 'Download it by hand from any Debian mirror (%s/%s: Debian'\''s\n' "$(pool_dir)" "$file"
    printf 'orig tarball; an upstream release tarball may have another sha256) and run\n'
    printf '  %s=/path/to/%s %s\n' "$override" "$file" "$command"
  } >&2
  exit 1
}

# The copy NAME_TARBALL names, if any, checked against the pin and kept
# like a download, so that later runs no longer need it.
given_copy() {
  local path=${!override:-} sha
  [ -n "$path" ] || return 1
  [ -r "$path" ] || die "$override=$path: no such file"
  sha=$(sha256 "$path")
  [ "$sha" = "$pin_sha" ] ||
    die "$override=$path has sha256 $sha, not the $pin_sha of ${pin#"$TOP"/} ($file)"
  if [ "$(cat "$dir/.sha256" 2>/dev/null)" != "$pin_sha" ] || [ ! -f "$dir/$file" ]; then
    rm -rf "$dir"
    if ! { mkdir -p "$dir" && cp "$path" "$dir/$file" && echo "$pin_sha" > "$dir/.sha256"; }; then
      die "cannot copy $override=$path into ${dir#"$TOP"/}"
    fi
    cache_store "$source-orig" "$key" "$dir" "$file" .sha256
  fi
  echo "$dir/$file"
}

# The copy in out/NAME-orig or the artifact cache, if any.
kept_copy() {
  if [ -f "$dir/$file" ] && [ "$(cat "$dir/.sha256" 2>/dev/null)" = "$pin_sha" ]; then
    echo "$dir/$file"
    return 0
  fi
  rm -rf "$dir"
  if cache_restore "$source-orig" "$key" "$dir" 2>/dev/null && [ -f "$dir/$file" ] &&
     [ "$(sha256 "$dir/$file")" = "$pin_sha" ]; then
    echo "$pin_sha" > "$dir/.sha256"
    echo "$dir/$file"
    return 0
  fi
  rm -rf "$dir"
  return 1
}

# Download from the mirror into out/NAME-orig (and the cache), with
# retries 2, 4, 8 s apart.
download() {
  local conf url attempt=0
  mkdir -p "$dir"
  conf=$(apt_private_setup "$apt_dir" "$(dpkg --print-architecture)" "$(source_stanzas)" \
           "build-scripts/fetch/fetch-orig-tarball.sh: Debian's source index of $suites") ||
    give_up
  log "downloading $file ($source $version) from Debian"
  while :; do
    APT_CONFIG=$conf apt-get update -q >"$apt_dir/update.log" 2>&1 || true
    for url in $(offered_urls "$conf"); do
      if APT_CONFIG=$conf /usr/lib/apt/apt-helper download-file "$url" "$dir/$file" "SHA256:$pin_sha" \
           >"$apt_dir/download.log" 2>&1; then
        echo "$pin_sha" > "$dir/.sha256"
        cache_store "$source-orig" "$key" "$dir" "$file" .sha256
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

main() {
  if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: fetch-orig-tarball.sh PIN [COMMAND]"; fi
  pin=$1 command=${2:-make}
  [ -f "$pin" ] || die "no pin file $pin"
  source=$(pin_field "$pin" Source)
  version=$(pin_field "$pin" Version)
  file=$(pin_field "$pin" File)
  pin_sha=$(pin_field "$pin" SHA256)
  suites=$(pin_field "$pin" Suites)
  override=$(tr 'a-z.+-' 'A-Z___' <<< "$source")_TARBALL
  dir=$OUT/$source-orig
  key=${pin_sha:0:16}
  apt_dir=$OUT/apt-src-${suites// /-}

  given_copy || kept_copy || download
}

main "$@"
