"""PerCpuList and PerCpuBuffer: percpu/percpu.c's list and record buffer
as compiled into rseq._percpu (bindings/python/structures.c), on the
patched glibc's out-of-line operations."""

import errno
import os

from ._check import as_count, as_int_in
from ._errors import NEEDS_CPU_OPV, NEEDS_PATCHED_GLIBC, \
    NEEDS_REGISTRATION, RseqUnavailable
from ._fallback import thread_mode_is_always
from ._percpu import ffi, lib


class _Structure:
    """A per-CPU structure of the patched glibc's out-of-line operations
    (libc's critical sections, cpu_opv fallback as set_fallback says);
    RseqUnavailable under a stock glibc or without registration."""
    _new = _free = _churn = _values = None

    def __init__(self, what, *args):
        if not lib.rseqpy_patched_glibc():
            raise RseqUnavailable(NEEDS_PATCHED_GLIBC, what)
        ptr = self._new(*args)
        if ptr == ffi.NULL:
            if ffi.errno in (0, errno.ENOMEM):
                raise MemoryError(f"cannot allocate a {what}")
            raise OSError(ffi.errno, os.strerror(ffi.errno))
        self._c = ffi.gc(ptr, self._free)
        self._what = what

    def churn(self, n):
        """N times, in C with the GIL released: take an element from the
        current CPU's part and put it back on the then-current CPU's.
        Returns how many elements moved."""
        n = as_count(n, "churn: n")
        moved = self._churn(self._c, n)
        if moved < 0:
            self._raise("churn")
        return moved

    def values(self):
        """The elements' numbers, all CPUs together, in no particular
        order; call it while no thread uses the structure.  Each number
        appears exactly once unless an element was lost, duplicated
        or (PerCpuBuffer) torn, which raises RuntimeError."""
        out = ffi.new("long[]", self.size)
        count = self._values(self._c, out, self.size)
        if count < 0:
            raise RuntimeError(f"{self._what} is corrupt: "
                               f"{os.strerror(ffi.errno)}")
        return list(out[0:count])

    def _raise(self, method):
        err = ffi.errno
        if err == errno.ENOSYS:
            need = NEEDS_CPU_OPV if thread_mode_is_always() \
                else NEEDS_REGISTRATION
            raise RseqUnavailable(need, f"{method}: per-CPU operations")
        raise OSError(err, f"{method}: {os.strerror(err)}")


class PerCpuList(_Structure):
    """SIZE nodes numbered 0 .. SIZE-1 on per-CPU free lists
    (percpu_list): pop by rseq_percpu_cmpnev_storeoffp_load, push by
    rseq_percpu_cmpeqv_storev."""
    _new = lib.rseqpy_list_new
    _free = lib.rseqpy_list_free
    _churn = lib.rseqpy_list_churn
    _values = lib.rseqpy_list_values

    def __init__(self, size=64):
        self.size = as_int_in(size, "PerCpuList: size", 1, 1 << 24)
        super().__init__("per-CPU list", self.size)


class PerCpuBuffer(_Structure):
    """SIZE items of ITEM_SIZE bytes, numbered 0 .. SIZE-1, on per-CPU
    stacks (a percpu_buffer of records): pop by
    rseq_percpu_cmpeqv_trymemcpy_storev, push by its _release
    variant."""
    _new = lib.rseqpy_buffer_new
    _free = lib.rseqpy_buffer_free
    _churn = lib.rseqpy_buffer_churn
    _values = lib.rseqpy_buffer_values

    def __init__(self, size=64, item_size=64):
        self.size = as_int_in(size, "PerCpuBuffer: size", 1, 1 << 20)
        self.item_size = as_int_in(item_size, "PerCpuBuffer: item_size",
                                   8, 65536)
        super().__init__("per-CPU buffer", self.size, self.item_size)
