#!/bin/bash
# The build machinery's helpers that make and make cross rely on, tried
# in scratch directories, one result line per check (results.sh):
#  - artifact-cache.sh: the content-addressed cache that lets a new
#    clone reuse the cross sysroots and test kernels
#    (build-scripts/lib/cache.sh) stores, restores, misses, prunes and
#    can be turned off;
#  - fetch-busybox.sh: build-scripts/fetch/fetch-busybox.sh (make cross)
#    takes busybox-static:armhf through apt with a private
#    configuration; UNSUPPORTED when the Debian mirror cannot be
#    reached.
# Each is a script that judges itself by its exit status.
# Run by toolchain.exp with the settings results.sh describes.
# shellcheck source=results.sh source-path=SCRIPTDIR
. "$(dirname "$0")/results.sh"

check_artifact_cache() {
  local name="artifact cache: store, restore, miss, prune, off"
  run bash "$here/artifact-cache.sh" "$RSEQ_OBJ/artifact-cache"
  if [ "$status" = 0 ]; then
    pass "$name"
  else
    fail "$name"
  fi
}

# check_fetch_busybox CASE NAME: fetch-busybox.sh's case CASE.
check_fetch_busybox() {
  execute 600 bash "$here/fetch-busybox.sh" "$RSEQ_OBJ/fetch-busybox" "$1"
  report "$2"
}

check_artifact_cache
check_fetch_busybox sources "fetch-busybox.sh takes the Debian entries of the apt sources"
check_fetch_busybox system "fetch-busybox.sh fetches with private apt lists, the system's untouched"
check_fetch_busybox unreachable-source "fetch-busybox.sh: an unreachable extra source only warns"
exit 0
