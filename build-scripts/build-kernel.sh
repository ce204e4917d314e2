#!/bin/bash
# Build the cpu_opv test kernel: linux-source-6.1 + kernel-patches/series,
# configured as tinyconfig + kernel-patches/vm.config, for x86_64.
# Outputs: out/vm/bzImage, out/vm/usr/include (uapi headers) and
# out/vm/gen_init_cpio.  Skipped when nothing that defines it changed.
. "$(dirname "$0")/common.sh"

src=$OUT/linux-src
build=$OUT/linux-build
vm=$OUT/vm
stamp=$vm/.stamp
want=$(kernel_inputs | hash_inputs)

if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -f "$vm/bzImage" ]; then
  log "test kernel up to date"
  exit 0
fi

[ -r "$LINUX_TARBALL" ] || die "kernel tarball not found: $LINUX_TARBALL (install linux-source-$LINUX_VERSION or set LINUX_TARBALL)"
log "unpacking $(basename "$LINUX_TARBALL")"
rm -rf "$src" "$build" "$vm"
mkdir -p "$src" "$build" "$vm"
tar -xf "$LINUX_TARBALL" -C "$src" --strip-components=1
series_patches "$TOP/kernel-patches/series" | while read -r p; do
  patch -d "$src" -p1 --batch --forward --quiet < "$TOP/kernel-patches/$p" >"$OUT/patch.log" 2>&1 ||
    { cat "$OUT/patch.log" >&2; die "kernel-patches/$p does not apply"; }
done

log "configuring the test kernel (tinyconfig + kernel-patches/vm.config)"
make -s -C "$src" O="$build" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
  "$TOP/kernel-patches/vm.config" >"$build/merge.log" 2>&1
make -s -C "$src" O="$build" olddefconfig >/dev/null 2>&1
# Every option of the fragment must have survived (a typo or an unmet
# dependency would silently drop it).
grep '^CONFIG_' "$TOP/kernel-patches/vm.config" | while read -r opt; do
  grep -qx "$opt" "$build/.config" || die "kernel config lost $opt (see $build/merge.log)"
done

log "building the test kernel (about 4 minutes)"
make -s -C "$src" O="$build" -j"$JOBS" bzImage >"$build/build.log" 2>&1 ||
  { tail -30 "$build/build.log" >&2; die "kernel build failed (see $build/build.log)"; }
make -s -C "$src" O="$build" INSTALL_HDR_PATH="$vm/usr" headers_install >/dev/null

cp "$build/arch/x86/boot/bzImage" "$vm/bzImage"
cp "$build/usr/gen_init_cpio" "$vm/gen_init_cpio"
echo "$want" > "$stamp"
log "test kernel ready: out/vm/bzImage"
