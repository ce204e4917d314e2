#!/bin/bash
# Build the test kernel of one test VM (build-scripts/tables/vms).  Column
# "kernel" says which:
#   cpu_opv               Debian's source package pinned in
#                         kernel-patches/$CPU_OPV_SOURCE.pin (lib/kernel.sh;
#                         linux-source-6.12) + kernel-patches/series
#   stock:NAME            Debian's unpatched source package pinned in
#                         kernel-patches/NAME.pin
# Both sources come from build-scripts/fetch/fetch-linux-source.sh (a kept
# .deb, the artifact cache or the Debian mirror);
# configured as tinyconfig + the fragments of vm_fragments (lib/vm.sh):
# kernel-patches/vm.config, vm-cpu-opv.config (cpu_opv kernels only) and
# vm-<vm>.config.
#
#   build-kernel.sh [VM]        (default: the native VM, x86_64 here)
#
# The native VM is the cpu_opv VM of the build machine's architecture
# (native_vm, lib/vm.sh).  Outputs: the boot image (out/vm/bzImage for
# the native VM, out/vm-<vm>/<image> for the others), usr/include (uapi
# headers), gen_init_cpio and "release" (the kernel release and the
# source it came from) next to it; build tree out/linux-build (native VM)
# or out/linux-build-<vm> (vm_dir and vm_build_dir, lib/vm.sh).  The
# patched source tree out/linux-src is shared by every cpu_opv VM and only
# re-extracted when the series or the .deb changes; a stock source goes to
# out/linux-src-<NAME without linux-source->, re-extracted when the .deb
# changes.  Skipped when nothing that defines the VM's kernel changed;
# taken from the artifact cache (lib/cache.sh) when it was built before.
# Uses ccache when it is installed.  A second build of the same VM
# started meanwhile waits for the first (a lock next to the build tree,
# out/linux-build*.lock).
. "$(dirname "$0")/../lib/pins.sh"
. "$(dirname "$0")/../lib/cache.sh"
. "$(dirname "$0")/../lib/kernel.sh"
. "$(dirname "$0")/../lib/vm.sh"

vm=${1:-$(native_vm)}
arch=$(vm_field "$vm" arch)
cross=$(vm_field "$vm" cross)
image=$(vm_field "$vm" image)
kernel=$(vm_field "$vm" kernel)
dest=$(vm_dir "$vm")
# source: the pinned package (kernel-patches/$source.pin); stock: set for
# a stock kernel (no series).
stock=
case $kernel in
  cpu_opv)
    source=$CPU_OPV_SOURCE
    src=$OUT/linux-src
    ;;
  stock:?*)
    source=${kernel#stock:}
    stock=$source
    src=$OUT/linux-src-${stock#linux-source-}
    ;;
  *) die "VM $vm: unknown kernel '$kernel' in build-scripts/tables/vms (cpu_opv or stock:NAME)" ;;
esac
pin=kernel-patches/$source.pin
[ -f "$TOP/$pin" ] || die "no pin file $pin (VM $vm, kernel $kernel)"
build=$(vm_build_dir "$vm")
fragment=kernel-patches/vm-$vm.config
mapfile -t fragments < <(vm_fragments "$vm")
for f in "${fragments[@]}"; do
  [ -f "$TOP/$f" ] || die "no config fragment $f"
done

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
# build uses.  The source is its pin here; the .deb actually used (the
# pinned one, or a newer one when the mirror dropped it) goes into the
# cache key.
build_stamp() {
  if [ -n "$stock" ]; then
    { stock_kernel_inputs "$pin"; printf '%s\n' "${fragments[@]}"; } | hash_inputs
  else
    { kernel_inputs; echo "$fragment"; } | hash_inputs
  fi
  echo "$kernel $arch $cross $image"
}

# Extract the source of the .deb DEB (sha256 SHA, package PACKAGE:
# usr/src/PACKAGE.tar.xz) into $src and, for the cpu_opv kernels, apply
# kernel-patches/series, unless it already holds that.  Locked, so that
# two VMs built at once do not extract it twice.
prepare_source() {
  local deb=$1 sha=$2 package=$3 want stamp=$src/.rseq-source-stamp p
  want=$sha
  [ -n "$stock" ] || want="$sha $(source_inputs | hash_inputs)"
  mkdir -p "$OUT"
  exec 9>"$src.lock"
  flock 9
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exec 9>&-
    return
  fi
  log "unpacking $package.tar.xz of ${deb##*/}"
  unpack_linux_deb "$deb" "$package" "$src"
  if [ -z "$stock" ]; then
    while read -r p; do
      patch -d "$src" -p1 --batch --forward --quiet < "$TOP/kernel-patches/$p" >"$OUT/patch.log" 2>&1 ||
        { cat "$OUT/patch.log" >&2; die "kernel-patches/$p does not apply to $package"; }
    done < <(series_patches "$TOP/kernel-patches/series")
  fi
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
  log "configuring the $vm test kernel (tinyconfig + $(printf '%s\n' "${fragments[@]}" | sed 's,^kernel-patches/,,' | paste -sd+ | sed 's/+/ + /g'))"
  "${mk[@]}" tinyconfig >/dev/null
  "$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
    "${fragments[@]/#/$TOP/}" >"$build/merge.log" 2>&1
  "${mk[@]}" olddefconfig >/dev/null 2>&1
  # Every option of the fragments must have survived (a typo or an unmet
  # dependency would silently drop it).
  for f in "${fragments[@]}"; do
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

# The release file: what runs in the VM ("6.12.117" or "7.3.4") and the
# Debian package it came from; tests name the first in their results.
write_release() {
  { "${mk[@]}" kernelrelease; echo "$1"; } > "$dest/release"
}

# The key of the artifact cache entry: the build stamp, the source (the
# .deb's sha256) and the compiler.
cache_key() {
  { echo "$want"; echo "$1"; toolchain_id "${cross}gcc"; } | sha256sum | cut -c1-16
}

# Restore this VM's kernel from the artifact cache entry KEY.
restored() {
  cache_restore "kernel-$vm" "$1" "$dest" && [ -f "$dest/$(basename "$image")" ] || return 1
  echo "$want" > "$stamp"
  log "test kernel ready: ${dest#"$TOP"/}/$(basename "$image") ($(tail -n 1 "$dest/release" 2>/dev/null))"
}

# One build of this VM's kernel at a time: two at once would configure and
# compile in the same build tree and write the same outputs.  Held until
# the script exits (fd 8; prepare_source's lock on the shared source
# tree, fd 9, is taken after it); a build that waited finds the other's
# result up to date.
mkdir -p "$OUT"
exec 8>"$build.lock"
if ! flock -n 8; then
  log "waiting for another build of the $vm test kernel (${build#"$TOP"/}.lock)"
  flock 8
fi

want=$(build_stamp)
stamp=$dest/.stamp
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -f "$dest/$(basename "$image")" ]; then
  log "$vm test kernel up to date"
  exit 0
fi

command -v "${cross}gcc" >/dev/null || die "${cross}gcc not installed (run build-scripts/fetch/deps.sh cross)"
# A stock kernel built before from the pinned source: no download, no
# source tree (the tests need none).  The cpu_opv kernels always prepare
# out/linux-src: the tests build the selftests from it.
if [ -n "$stock" ]; then
  restored "$(cache_key "$(pin_field "$TOP/$pin" SHA256)")" && exit 0
fi
# The pinned source (or a newer one, fetch-linux-source.sh).
read -r deb sha package version < <("$TOP/build-scripts/fetch/fetch-linux-source.sh" "$source" || echo "- - - -") || true
[ -n "${deb:-}" ] && [ "$deb" != - ] || die "no $source source for the $vm test kernel (see above)"
cache_key=$(cache_key "$sha")
if [ -n "$stock" ]; then
  restored "$cache_key" && exit 0
  prepare_source "$deb" "$sha" "$package"
else
  prepare_source "$deb" "$sha" "$package"
  restored "$cache_key" && exit 0
fi
source_id="$package $version (sha256 $sha)"
use_ccache
mkdir -p "$build" "$dest"
rm -f "$stamp"
mk=(make -s -C "$src" O="$build" ARCH="$arch")
[ -z "$cross" ] || mk+=(CROSS_COMPILE="$cross")
configure
compile
cp "$build/$image" "$dest/$(basename "$image")"
cp "$build/usr/gen_init_cpio" "$dest/gen_init_cpio"
write_release "$source_id"
echo "$want" > "$stamp"
cache_store "kernel-$vm" "$cache_key" "$dest" "$(basename "$image")" gen_init_cpio usr release
log "test kernel ready: ${dest#"$TOP"/}/$(basename "$image") (Linux $(head -n 1 "$dest/release"), $source_id)"
