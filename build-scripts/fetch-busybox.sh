#!/bin/bash
# Fetch Debian's busybox-static for the test VMs of other architectures
# (build-scripts/vms, column debarch) into out/busybox/<vm>/, where run-vm
# takes /bin/busybox from.  Cached: a VM whose busybox is there is skipped.
# x86_64 uses the host's /bin/busybox (package busybox-static).
#
#   fetch-busybox.sh [VM...]      (default: every VM but x86_64)
#
# apt's own client downloads the package, with a private configuration in
# $OUT/apt-<debarch>/ (apt.conf, etc/, state/, cache/): the Debian entries
# of the system's sources (/etc/apt/sources.list, sources.list.d/*.list and
# *.sources; type deb, component main), that one architecture, an empty
# dpkg status and lists of its own.  Neither the system's apt state (lists,
# cache, status, preferences, sources.list.d, apt.conf.d and its hooks)
# nor dpkg's architectures are read or written; of the system's apt
# configuration only the network settings (Acquire::http::Proxy and the
# like) are copied.  No root needed.  By hand, for DEBARCH:
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
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
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

# The Debian entries of the apt sources under ETC (default /etc/apt), as
# deb822 stanzas: type deb, a URI naming debian, component main (the only
# one kept), not disabled (Enabled: no, a commented line, a file name apt
# ignores).  Signed-By, Trusted and Check-Valid-Until/Check-Date are kept;
# an entry without Signed-By gets Debian's archive keyring.  One stanza per
# URI and suite, duplicates dropped.
debian_sources() {
  local etc=${1:-/etc/apt} f name lists=() deb822=()
  [ ! -f "$etc/sources.list" ] || lists+=("$etc/sources.list")
  for f in "$etc"/sources.list.d/*; do
    name=${f##*/}
    # apt's rule: other names (foo.list.disabled, foo~) are ignored.
    [[ $name =~ ^[A-Za-z0-9_.-]+$ && -f $f ]] || continue
    case $name in
      *.list) lists+=("$f") ;;
      *.sources) deb822+=("$f") ;;
    esac
  done
  {
    [ ${#lists[@]} -eq 0 ] || awk '
      { sub(/#.*/, "") }
      NF < 4 || $1 != "deb" { next }
      {
        i = 2; opts = ""
        if ($i ~ /^\[/) {
          while (i <= NF) {
            opts = opts " " $i
            if ($i ~ /\]$/) break
            i++
          }
          i++
          gsub(/[][]/, "", opts)
        }
        uri = $i; suite = $(i + 1)
        main = 0
        for (j = i + 2; j <= NF; j++) if ($j == "main") main = 1
        printf "URIs: %s\nSuites: %s\n", uri, suite
        if (main) print "Components: main"
        n = split(opts, o, " ")
        for (j = 1; j <= n; j++) {
          k = o[j]; v = o[j]
          sub(/=.*/, "", k); sub(/^[^=]*=/, "", v)
          if (k == "signed-by") printf "Signed-By: %s\n", v
          else if (k == "trusted") printf "Trusted: %s\n", v
          else if (k == "check-valid-until") printf "Check-Valid-Until: %s\n", v
          else if (k == "check-date") printf "Check-Date: %s\n", v
        }
        print "Types: deb\n"
      }' "${lists[@]}"
    [ ${#deb822[@]} -eq 0 ] || awk '
      # The fields used, one line each (folded lines joined) but for
      # Signed-By, whose inline keys keep their lines.
      BEGIN {
        names["types"] = "Types"; names["uris"] = "URIs"; names["suites"] = "Suites"
        names["components"] = "Components"; names["enabled"] = "Enabled"
        names["signed-by"] = "Signed-By"; names["trusted"] = "Trusted"
        names["check-valid-until"] = "Check-Valid-Until"; names["check-date"] = "Check-Date"
      }
      function emit() {
        if (key != "") printf "%s: %s\n", names[key], value
        if (key != "") have = 1
        key = ""
      }
      function flush() {
        emit()
        if (have) print ""
        have = 0
      }
      FNR == 1 { flush() }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ {
        if (key == "signed-by") {
          value = value "\n" $0
        } else if (key != "") {
          v = $0; sub(/^[ \t]+/, "", v); value = value " " v
        }
        next
      }
      {
        emit()
        key = tolower($0); sub(/:.*/, "", key)
        value = $0; sub(/^[^:]*:[ \t]*/, "", value)
        if (!(key in names)) key = ""
      }
      END { flush() }' "${deb822[@]}"
  } | awk -v keyring="$DEBIAN_KEYRING" '
    # Filter the normalized stanzas and expand URIs x Suites.
    BEGIN { RS = ""; FS = "\n" }
    {
      delete f
      signed = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^[ \t]/) {            # continuation of Signed-By
          signed = signed "\n" $i
          continue
        }
        k = $i; sub(/:.*/, "", k)
        v = $i; sub(/^[^:]*:[ \t]*/, "", v)
        f[k] = v
        if (k == "Signed-By") signed = v
      }
      if (tolower(f["Enabled"]) == "no") next
      if (!(" " f["Types"] " " ~ /[ \t]deb[ \t]/)) next
      if (!(" " f["Components"] " " ~ /[ \t]main[ \t]/)) next
      if (signed == "" && tolower(f["Trusted"]) != "yes") signed = keyring
      nu = split(f["URIs"], uris, /[ \t]+/)
      ns = split(f["Suites"], suites, /[ \t]+/)
      for (u = 1; u <= nu; u++) {
        if (tolower(uris[u]) !~ /debian/) continue
        for (s = 1; s <= ns; s++) {
          if (suites[s] == "" || suites[s] ~ /\/$/) continue
          id = uris[u] " " suites[s]
          sub(/\/+ /, " ", id)
          if (id in seen) continue
          seen[id] = 1
          printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n", uris[u], suites[s]
          if (signed != "") printf "Signed-By: %s\n", signed
          if (f["Trusted"] != "") printf "Trusted: %s\n", f["Trusted"]
          if (f["Check-Valid-Until"] != "") printf "Check-Valid-Until: %s\n", f["Check-Valid-Until"]
          if (f["Check-Date"] != "") printf "Check-Date: %s\n", f["Check-Date"]
          print ""
        }
      }
    }'
}

# Write the private apt configuration of DEBARCH under $OUT/apt-DEBARCH
# and print its apt.conf.  Lists and cache stay from one run to the next.
apt_setup() {
  local debarch=$1 apt=$OUT/apt-$1 sources
  sources=$(debian_sources /etc/apt)
  if [ -z "$sources" ]; then
    printf 'error: no Debian sources (type deb, component main) in /etc/apt/sources.list or /etc/apt/sources.list.d\n' >&2
    return 1
  fi
  mkdir -p "$apt"/etc/{apt.conf.d,preferences.d,sources.list.d,trusted.gpg.d,auth.conf.d} \
    "$apt"/state/lists/partial "$apt"/cache/archives/partial "$apt"/log &&
    : > "$apt/state/status" &&
    printf '%s\n' "$sources" > "$apt/etc/sources.list.d/debian.sources" &&
    printf '%s\n' "${RSEQ_APT_EXTRA_SOURCES:-}" > "$apt/etc/sources.list.d/extra.list" ||
    return 1
  # Private: the copied settings may hold a proxy's password.
  (umask 077 && {
    echo "// build-scripts/fetch-busybox.sh: Debian's $debarch packages, apart"
    echo "// from the system's apt state.  Read through APT_CONFIG (before the"
    echo "// system's apt.conf.d, which the Dir::Etc below then hides)."
    echo "Dir::Etc \"$apt/etc/\";"
    echo "Dir::State \"$apt/state/\";"
    echo "Dir::State::status \"$apt/state/status\";"
    echo "Dir::Cache \"$apt/cache/\";"
    echo "Dir::Log \"$apt/log/\";"
    echo "APT::Architecture \"$debarch\";"
    echo "APT::Architectures { \"$debarch\"; };"
    echo "APT::Sandbox::User \"$(id -un)\";"
    echo "Acquire::Languages \"none\";"
    echo "Acquire::GzipIndexes \"true\";"
    echo "// The system's network settings."
    { apt-config dump 2>/dev/null || true; } |
      grep -E '^Acquire::((https?|ftp)::|Check-Valid-Until |Check-Date |Max-FutureTime |Retries |ForceIPv[46] )' || true
  } > "$apt/apt.conf") || return 1
  echo "$apt/apt.conf"
}

# One attempt: apt-get update (its status ignored: an index the package
# does not come from may fail), then apt-get download into DIR.
apt_attempt() {
  local conf=$1 debarch=$2 dir=$3 apt=${1%/*}
  APT_CONFIG=$conf apt-get update -q >"$apt/update.log" 2>&1 || true
  (cd "$dir" && APT_CONFIG=$conf apt-get download -q "busybox-static:$debarch") \
    >"$apt/download.log" 2>&1
}

# The W: and E: lines of apt-get update's last run, if any, as a warning
# (NOTE says what became of them).
update_warnings() {
  local debarch=$1 note=$2 log=$OUT/apt-$1/update.log lines
  lines=$(grep -E '^(W|E): ' "$log" 2>/dev/null || true)
  [ -n "$lines" ] || return 0
  printf 'warning: apt-get update for %s: some indexes failed%s:\n' "$debarch" "$note" >&2
  printf '  %s\n' "${lines//$'\n'/$'\n  '}" >&2
}

fetch() {
  local vm=$1 debarch dir deb conf attempt=0 elf want
  [ "$vm" != x86_64 ] || return 0
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
      update_warnings "$debarch" ""
      printf 'error: could not download busybox-static:%s (Debian %s, for VM %s) after %d attempts: %s\nBy hand:\n  APT_CONFIG=%s apt-get update\n  APT_CONFIG=%s apt-get download busybox-static:%s\n' \
        "$debarch" "$debarch" "$vm" $attempt \
        "$(grep -E '^E: ' "${conf%/*}/download.log" | tail -n 1 | cut -c4- || true)" \
        "$conf" "$conf" "$debarch" >&2
      rm -rf "$dir.tmp"
      return 1
    fi
    sleep $((2 ** attempt))
  done
  update_warnings "$debarch" " (ignored: busybox-static came from the others)"
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
