# shellcheck shell=bash
# Debian packages fetched with apt's own client and a private
# configuration: sourced by the fetchers of build-scripts/fetch/,
# fetch-busybox.sh (busybox-static of the cross VMs' architectures),
# fetch-linux-source.sh (the pinned Linux sources of
# build-scripts/tables/vms) and fetch-orig-tarball.sh (pinned orig
# tarballs).  Not executed.
#
# The private configuration lives in a directory of its own under out/
# (apt.conf, etc/, state/, cache/): Debian entries derived from the
# system's sources (/etc/apt/sources.list, sources.list.d/*.list and
# *.sources), one architecture, an empty dpkg status and lists of its
# own.  Neither the system's apt state (lists, cache, status,
# preferences, sources.list.d, apt.conf.d and its hooks) nor dpkg's
# architectures are read or written; of the system's apt configuration
# only the network settings (Acquire::http::Proxy and the like) are
# copied.  No root needed.
#
# Environment:
#   RSEQ_APT_EXTRA_SOURCES  more sources, one-line format ("deb [opts] URI
#                           SUITE COMPONENT..."), one a line, added as given

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

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

# The Debian entries of the system's apt sources (debian_sources ETC,
# default /etc/apt), or an error naming where they were looked for.
system_debian_sources() {
  local etc=${1:-/etc/apt} sources
  sources=$(debian_sources "$etc")
  if [ -z "$sources" ]; then
    printf 'error: no Debian sources (type deb, component main) in %s/sources.list or %s/sources.list.d\n' "$etc" "$etc" >&2
    return 1
  fi
  printf '%s\n' "$sources"
}

# apt_private_setup DIR DEBARCH SOURCES PURPOSE: write a private apt
# configuration under DIR for Debian architecture DEBARCH, reading
# SOURCES (deb822 stanzas) and RSEQ_APT_EXTRA_SOURCES, and print its
# apt.conf.  PURPOSE goes into the file's comment.  Lists and cache stay
# from one run to the next.
apt_private_setup() {
  local apt=$1 debarch=$2 sources=$3 purpose=$4
  mkdir -p "$apt"/etc/{apt.conf.d,preferences.d,sources.list.d,trusted.gpg.d,auth.conf.d} \
    "$apt"/state/lists/partial "$apt"/cache/archives/partial "$apt"/log &&
    : > "$apt/state/status" &&
    printf '%s\n' "$sources" > "$apt/etc/sources.list.d/debian.sources" &&
    printf '%s\n' "${RSEQ_APT_EXTRA_SOURCES:-}" > "$apt/etc/sources.list.d/extra.list" ||
    return 1
  # Private: the copied settings may hold a proxy's password.
  (umask 077 && {
    echo "// $purpose, apart"
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

# update_warnings LABEL NOTE LOG: the W: and E: lines of an apt-get
# update log, if any, as a warning (NOTE says what became of them).  A
# failed index (a mirror mid-sync, an unreachable extra source) is never
# an error by itself: only the package that cannot be had is.
update_warnings() {
  local label=$1 note=$2 log=$3 lines
  lines=$(grep -E '^(W|E): ' "$log" 2>/dev/null || true)
  [ -n "$lines" ] || return 0
  printf 'warning: apt-get update for %s: some indexes failed%s:\n' "$label" "$note" >&2
  printf '  %s\n' "${lines//$'\n'/$'\n  '}" >&2
}
