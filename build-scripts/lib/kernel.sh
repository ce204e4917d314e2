# shellcheck shell=bash
# The test kernels' sources: the cpu_opv kernels' base, what defines a
# patched or a stock kernel, and a Debian linux-source package's tree.
# Sourced, not executed.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pins.sh"

# The cpu_opv kernels (build-scripts/tables/vms, kernel "cpu_opv"):
# Debian's source package pinned in kernel-patches/$CPU_OPV_SOURCE.pin
# (fetched like a stock kernel's, build-scripts/fetch/fetch-linux-source.sh),
# plus kernel-patches/series.  LINUX_VERSION names the base in messages.
CPU_OPV_SOURCE=linux-source-6.12
LINUX_VERSION=6.12

# The files that define the patched, configured test kernel.
kernel_inputs() {
  (cd "$TOP" && {
    echo "kernel-patches/$CPU_OPV_SOURCE.pin"
    echo kernel-patches/series
    series_patches kernel-patches/series | sed 's,^,kernel-patches/,'
    echo kernel-patches/vm.config
    echo kernel-patches/vm-cpu-opv.config
    echo build-scripts/build/build-kernel.sh
  })
}

# The stock kernels (build-scripts/tables/vms, column kernel
# "stock:NAME"): Debian's source package pinned in
# kernel-patches/NAME.pin, built without the series.
# stock_kernel_inputs PIN: the files that define a stock kernel built
# from PIN (relative to $TOP), but for its config fragments.  Not the
# scripts that fetch the source: the .deb they bring is named by its
# sha256 in the artifact cache key.
stock_kernel_inputs() {
  echo "$1"
  echo build-scripts/build/build-kernel.sh
}

# unpack_linux_deb DEB PACKAGE DIR: the kernel tree of a Debian
# linux-source .deb (usr/src/PACKAGE.tar.xz) into DIR, emptied first.
unpack_linux_deb() {
  local deb=$1 package=$2 dir=$3
  rm -rf "$dir"
  mkdir -p "$dir"
  dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/src/$package.tar.xz" |
    tar -xJf - -C "$dir" --strip-components=1 ||
    die "${deb##*/} does not hold usr/src/$package.tar.xz"
  [ -f "$dir/Makefile" ] || die "no kernel tree in usr/src/$package.tar.xz of ${deb##*/}"
}
