# rseq toolchain: patched glibc 2.36, its compiler driver and launcher,
# tests and benchmarks.  See README.md.
#
#   make                  install missing packages, build glibc, the toolchain and run the demo
#   make check            run every test; ends with "N passed, N failed, N skipped"
#   make bench            run the benchmarks
#   make install PREFIX=DIR
#
# Build outputs go under out/.

SHELL := /bin/bash
OUT   := $(CURDIR)/out
BIN   := $(OUT)/bin
export OUT

.PHONY: all deps glibc toolchain demo check bench install clean

all: demo

deps:
	@build-scripts/deps.sh

glibc: deps
	@build-scripts/build-glibc.sh x86_64
	@build-scripts/build-glibc.sh i386

toolchain: glibc
	@mkdir -p $(BIN)
	@install -m 755 build-scripts/bin/rseq-gcc build-scripts/bin/rseq-run \
	  build-scripts/bin/rseq-python $(BIN)/
	@build-scripts/build-python.sh

demo: toolchain
	@build-scripts/demo.sh

check: toolchain
	@build-scripts/check.sh

bench: toolchain
	@bench/run.sh

install: toolchain
	@build-scripts/install.sh "$(PREFIX)"

clean:
	rm -rf $(OUT)
