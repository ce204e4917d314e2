# rseq toolchain: patched glibc 2.43, its compiler driver and launcher,
# tests and benchmarks.  See README.md.
#
#   make                  install missing packages, build glibc, the toolchain and the
#                         host's test kernels (x86: cpu_opv; stock Linux 7), and run the demo
#   make cross            build the cross ABIs of build-scripts/tables/abis
#                         (aarch64, arm, ppc64le): glibc, TRIPLE-rseq-gcc,
#                         test kernels
#   make check            run every test (host and QEMU VMs, every ABI built);
#                         ends with
#                         "N passed, N failed, N skipped"
#   make bench            install the allocators it compares malloc with, run the benchmarks
#   make glibc-check      glibc's own tests of the subdirectories the series
#                         touches, patched against pristine glibc built the
#                         same way (host ABIs; hours, not in make check)
#   make series           copy the glibc series (git am order) to out/glibc-series
#   make series-check     apply it to pristine glibc patch by patch, building
#                         and running check-abi after each (hours; not in make check)
#   make install PREFIX=DIR
#
# Build outputs go under out/.

SHELL := /bin/bash
OUT   := $(CURDIR)/out
BIN   := $(OUT)/bin
export OUT

# The cross ABIs and their VMs, from the ABI table (its reader,
# build-scripts/bin/rseq-abi).
CROSS_ABIS := $(shell build-scripts/bin/rseq-abi names cross)
CROSS_VMS  := $(shell build-scripts/bin/rseq-abi column vm cross)
# The ABIs the build machine runs itself, in table order: its own (the
# native ABI, rseq-abi native) and its multilib flavours (here x86_64
# and i386).
HOST_ABIS  := $(shell build-scripts/bin/rseq-abi names host)
# The VMs whose kernels build with the host's compiler
# (build-scripts/tables/vms, no cross prefix; here x86_64, the native
# cpu_opv VM, and x86_64-linux7, stock Linux 7).
HOST_VMS   := $(shell awk 'NF && substr($$1, 1, 1) != "\043" && $$3 == "-" { print $$1 }' build-scripts/tables/vms)

.PHONY: all deps glibc kernel toolchain demo cross check glibc-check bench series series-check install clean

all: demo kernel

deps:
	@build-scripts/fetch/deps.sh

glibc: deps
	@for abi in $(HOST_ABIS); do build-scripts/build/build-glibc.sh $$abi || exit 1; done

# The test kernels of the host's VMs: the cpu_opv kernel (kernel-patches/)
# and the stock Linux 7 one (kernel-patches/linux-source-7.pin).
kernel: deps
	@for vm in $(HOST_VMS); do build-scripts/build/build-kernel.sh $$vm || exit 1; done

toolchain: glibc
	@mkdir -p $(BIN)
	@install -m 755 build-scripts/bin/rseq-gcc build-scripts/bin/rseq-g++ \
	  build-scripts/bin/rseq-clang build-scripts/bin/rseq-run \
	  build-scripts/bin/rseq-python build-scripts/bin/rseq-abi $(BIN)/
	@install -m 644 build-scripts/tables/abis $(OUT)/abis
	@build-scripts/build/build-python.sh

demo: toolchain
	@build-scripts/build/demo.sh

cross: toolchain
	@build-scripts/fetch/deps.sh cross
	@for abi in $(CROSS_ABIS); do build-scripts/build/build-glibc.sh $$abi || exit 1; done
	@build-scripts/build/install-cross-drivers.sh
	@for vm in $(CROSS_VMS); do build-scripts/build/build-kernel.sh $$vm || exit 1; done

check: toolchain kernel
	@build-scripts/check/check.sh

glibc-check: toolchain
	@build-scripts/check/glibc-check.sh

bench: toolchain kernel
	@build-scripts/fetch/deps.sh bench
	@bench/run.sh

series:
	@build-scripts/patches/glibc-series.sh write

series-check: deps
	@build-scripts/build/prepare-glibc.sh
	@build-scripts/patches/glibc-series.sh check

# PREFIX is checked before anything is built.
install:
	@build-scripts/build/install.sh --check "$(PREFIX)"
	@$(MAKE) --no-print-directory toolchain
	@build-scripts/build/install.sh "$(PREFIX)"

clean:
	rm -rf $(OUT)
