"""Build the C parts of the rseq Python package:
python3 build_rseq.py SYSROOT_INCLUDE OUTDIR

- rseq._percpu: cffi, out-of-line API mode (the module name inside the
  package, as cffi's documentation recommends), compiled with the system
  compiler against the patched glibc's headers.  Its C lives in files
  of its own: rseqpy.h (the functions Python calls, also the cdef),
  glibc.c, counters.c, structures.c, and percpu/percpu.c itself
  (through percpu-module.c), so that PerCpuList and PerCpuBuffer are
  the same code as the C tests' and benchmarks' structures;
  percpu.cdef is the part of percpu.h that Python sees.  The module
  links no symbol of the patched glibc (rseqpy-internal.h says how),
  so it imports under a stock glibc >= 2.35 too and never loads a
  second libc.
- rseq._fastcpu: a plain CPython extension (fastcpu.c) for
  current_cpu() and current_node(), which cffi would make cost more
  than os.getpid() by releasing and retaking the GIL around each call.

Both land in OUTDIR/rseq/."""

import os
import subprocess
import sys
import sysconfig

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
PERCPU_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "percpu"))

# Declarations for cdef, in order: rseqpy.h names percpu.cdef's structs.
CDEF_FILES = ("percpu.cdef", "rseqpy.h")
# Compiled next to cffi's generated file, which includes only the
# headers its wrappers need.
C_FILES = ("glibc.c", "counters.c", "structures.c", "percpu-module.c")
MODULE_PRELUDE = '#include "rseqpy-internal.h"\n'


def _read(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read()


def percpu_ffi(include):
    """The cffi builder of rseq._percpu against the headers in INCLUDE.
    cffi compiles from inside its temporary directory: every path is
    absolute."""
    ffi = cffi.FFI()
    for name in CDEF_FILES:
        ffi.cdef(_read(name))
    ffi.set_source("rseq._percpu", MODULE_PRELUDE,
                   sources=[os.path.join(HERE, name) for name in C_FILES],
                   include_dirs=[HERE, PERCPU_DIR],
                   extra_compile_args=["-O2", "-isystem", include],
                   libraries=["dl", "pthread"])
    return ffi


def build_percpu(include, outdir):
    percpu_ffi(include).compile(tmpdir=outdir, verbose=False)


def build_fastcpu(include, outdir):
    source = os.path.join(HERE, "fastcpu.c")
    target = os.path.join(outdir, "rseq", "_fastcpu"
                          + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC",
                    "-I", sysconfig.get_paths()["include"],
                    "-isystem", include, source, "-o", target], check=True)


def main():
    include, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(outdir, "rseq"), exist_ok=True)
    build_percpu(include, outdir)
    build_fastcpu(include, outdir)


if __name__ == "__main__":
    main()
