#!/bin/bash
# Build the cpu_opv test kernel of one test VM (build-scripts/vms):
# linux-source-6.1 + kernel-patches/series, configured as tinyconfig +
# kernel-patches/vm.config + kernel-patches/vm-<vm>.config.
#
#   build-kernel.sh [VM]        (default x86_64)
#
# Outputs: the boot image (out/vm/bzImage for x86_64, out/vm-<vm>/<image>
# for the others), usr/include (uapi headers) and gen_init_cpio next to
# it; build tree out/linux-build (x86_64) or out/linux-build-<vm>.  The
# patched source tree out/linux-src is shared by every VM and only
# re-extracted when the series changes.  Skipped when nothing that defines
# the VM's kernel changed; taken from the artifact cache (common.sh) when
# it was built before.  Uses ccache when it is installed.
. "$(dirname "$0")/common.sh"

vm=${1:-x86_64}
arch=$(vm_field "$vm" arch)
cross=$(vm_field "$vm" cross)
image=$(vm_field "$vm" image)
dest=$(vm_dir "$vm")
src=$OUT/linux-src
if [ "$vm" = x86_64 ]; then build=$OUT/linux-build; else build=$OUT/linux-build-$vm; fi
fragment=kernel-patches/vm-$vm.config
[ -f "$TOP/$fragment" ] || die "no config fragment $fragment"

# The files that define the patched source tree: the series alone, so
# that editing a config fragment or this script keeps the tree (and the
# other VMs' builds that depend on its timestamps).
source_inputs() {
  (cd "$TOP" && {
    echo kernel-patches/series
    series_patches kernel-patches/series | sed 's,^,kernel-patches/,'
  })
}

# The files that define this VM's kernel, plus the table columns the
# build uses.
build_stamp() {
  { kernel_inputs; echo "$fragment"; } | hash_inputs
  echo "$LINUX_VERSION $arch $cross $image"
}

# Extract and patch out/linux-src unless it already holds this series.
# Locked, so that two VMs built at once do not extract it twice.
prepare_source() {
  local want stamp=$src/.rseq-source-stamp
  want=$(source_inputs | hash_inputs)
  mkdir -p "$OUT"
  exec 9>"$OUT/linux-src.lock"
  flock 9
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exec 9>&-
    return
  fi
  [ -r "$LINUX_TARBALL" ] || die "kernel tarball not found: $LINUX_TARBALL (install linux-source-$LINUX_VERSION or set LINUX_TARBALL)"
  log "unpacking $(basename "$LINUX_TARBALL")"
  rm -rf "$src"
  mkdir -p "$src"
  tar -xf "$LINUX_TARBALL" -C "$src" --strip-components=1
  series_patches "$TOP/kernel-patches/series" | while read -r p; do
    patch -d "$src" -p1 --batch --forward --quiet < "$TOP/kernel-patches/$p" >"$OUT/patch.log" 2>&1 ||
      { cat "$OUT/patch.log" >&2; die "kernel-patches/$p does not apply"; }
  done
  echo "$want" > "$stamp"
  exec 9>&-
}

# ccache in masquerade mode: a directory of links named like the compiler
# first in PATH.  Unlike CC="ccache gcc" it keeps the compiler command
# line, which kbuild records per object, so turning ccache on or off does
# not rebuild a tree.
use_ccache() {
  local ccache
  ccache=$(command -v ccache) || return 0
  mkdir -p "$OUT/ccache-bin"
  ln -sf "$ccache" "$OUT/ccache-bin/${cross}gcc"
  ln -sf "$ccache" "$OUT/ccache-bin/gcc"
  PATH=$OUT/ccache-bin:$PATH
  log "using ccache (cache: $("$ccache" -k cache_dir 2>/dev/null))"
}

configure() {
  local f
  log "configuring the $vm test kernel (tinyconfig + vm.config + vm-$vm.config)"
  "${mk[@]}" tinyconfig >/dev/null
  "$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
    "$TOP/kernel-patches/vm.config" "$TOP/$fragment" >"$build/merge.log" 2>&1
  "${mk[@]}" olddefconfig >/dev/null 2>&1
  # Every option of the fragments must have survived (a typo or an unmet
  # dependency would silently drop it).
  for f in kernel-patches/vm.config "$fragment"; do
    grep '^CONFIG_' "$TOP/$f" | while read -r opt; do
      grep -qx "$opt" "$build/.config" || die "kernel config lost $opt of $f (see $build/merge.log)"
    done
  done
}

compile() {
  local target start=$SECONDS
  target=$(basename "$image")
  log "building the $vm test kernel ($target, $JOBS jobs)"
  "${mk[@]}" -j"$JOBS" "$target" >"$build/build.log" 2>&1 ||
    { tail -30 "$build/build.log" >&2; die "kernel build failed (see $build/build.log)"; }
  "${mk[@]}" INSTALL_HDR_PATH="$dest/usr" headers_install >/dev/null
  log "built in $((SECONDS - start)) s"
}

want=$(build_stamp)
stamp=$dest/.stamp
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -f "$dest/$(basename "$image")" ]; then
  log "$vm test kernel up to date"
  exit 0
fi

command -v "${cross}gcc" >/dev/null || die "${cross}gcc not installed (run build-scripts/deps.sh cross)"
prepare_source

# The outputs come from the artifact cache when this VM's kernel was built
# before from the same inputs, source tarball and compiler; out/linux-src
# is prepared all the same (the tests build the selftests from it).
cache_key=$( { echo "$want"; stat -c '%s %Y' "$LINUX_TARBALL"; toolchain_id "${cross}gcc"; } |
             sha256sum | cut -c1-16)
if cache_restore "kernel-$vm" "$cache_key" "$dest" && [ -f "$dest/$(basename "$image")" ]; then
  echo "$want" > "$stamp"
  log "test kernel ready: ${dest#"$TOP"/}/$(basename "$image")"
  exit 0
fi
use_ccache
mkdir -p "$build" "$dest"
rm -f "$stamp"
mk=(make -s -C "$src" O="$build" ARCH="$arch")
[ -z "$cross" ] || mk+=(CROSS_COMPILE="$cross")
configure
compile
cp "$build/$image" "$dest/$(basename "$image")"
cp "$build/usr/gen_init_cpio" "$dest/gen_init_cpio"
echo "$want" > "$stamp"
cache_store "kernel-$vm" "$cache_key" "$dest" "$(basename "$image")" gen_init_cpio usr
log "test kernel ready: ${dest#"$TOP"/}/$(basename "$image")"
