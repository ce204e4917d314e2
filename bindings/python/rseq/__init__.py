"""Per-CPU experiments from Python on top of the rseq toolchain.

Run under the patched glibc with the rseq-python launcher.  The package
also imports under a stock glibc >= 2.35; there it offers what that
libc and kernel provide (current CPU, per-CPU counters by cpu_id) and
raises RseqUnavailable, saying what is missing, for the rest.  Functions
follow the os module's sched_* style: plain ints, OSError subclasses on
failure."""

import errno
import os
import threading

from ._check import as_count, as_int_in
from ._errors import (NEEDS_CPU_OPV, NEEDS_MM_CID, NEEDS_PATCHED_GLIBC,
                      NEEDS_REGISTRATION, RseqUnavailable)
from . import _fastcpu
from ._fastcpu import current_cpu, current_mm_cid, current_node
from ._percpu import ffi, lib

__all__ = [
    "RseqUnavailable", "current_cpu", "current_node", "current_mm_cid",
    "info", "PerCpuCounter", "AtomicCounter", "LockedCounter", "CPU_ID",
    "MM_CID", "OpVector", "cpu_opv_available", "set_fallback",
    "thread_aborts", "thread_fallbacks", "FALLBACK_AUTO", "FALLBACK_NEVER",
    "FALLBACK_ALWAYS", "run_threads", "PerCpuList", "PerCpuBuffer",
]

CPU_ID = "cpu_id"
MM_CID = "mm_cid"
_FIELDS = {CPU_ID: 0, MM_CID: 1}
_AT_RSEQ_FEATURE_SIZE = 27
_AT_RSEQ_ALIGN = 28
# rseqpy_counter_add_many's failures.
_ADD_NO_PERCPU, _ADD_NO_CPU_OPV = -1, -2


def _mm_cid_unavailable():
    raise RseqUnavailable(NEEDS_MM_CID)


# current_mm_cid() calls this when the thread has no mm_cid.
_fastcpu.mm_cid_unavailable = _mm_cid_unavailable


def info():
    """Registration state and what this process can do."""
    size = lib.rseqpy_rseq_size()
    return {
        "registered": bool(lib.rseqpy_registered()),
        "feature_size": size,
        "offset": lib.rseqpy_rseq_offset(),
        "kernel_feature_size": lib.rseqpy_auxv(_AT_RSEQ_FEATURE_SIZE),
        "kernel_align": lib.rseqpy_auxv(_AT_RSEQ_ALIGN),
        "node_id": size >= 24,
        "mm_cid": size >= 28,
        "patched_glibc": bool(lib.rseqpy_patched_glibc()),
        "cpu_opv": cpu_opv_available(),
        "kernel": os.uname().release,
        "nr_slots": lib.rseqpy_nr_slots(),
    }


class _Counter:
    _kind = None

    def __init__(self, field=CPU_ID):
        if field not in _FIELDS:
            raise ValueError(f"field must be {CPU_ID!r} or {MM_CID!r}, "
                             f"not {field!r}")
        self.field = field
        ptr = lib.rseqpy_counter_new(self._kind, _FIELDS[field])
        if ptr == ffi.NULL:
            raise MemoryError("cannot allocate a per-CPU counter")
        self._c = ffi.gc(ptr, lib.rseqpy_counter_free)
        # Fixed at creation: the slots the counter was allocated with.
        self.nr_slots = lib.rseqpy_counter_nr_slots(self._c)

    def add(self, count=1):
        """Add COUNT once."""
        self._add_many(1, count, "add")

    def add_many(self, n, count=1):
        """Add COUNT, N times, in a C loop (the GIL is released)."""
        self._add_many(n, count, "add_many")

    def _add_many(self, n, count, method):
        n = as_count(n, f"{method}: n")
        count = as_int_in(count, f"{method}: count", -(1 << 62),
                          (1 << 62) - 1)
        ret = lib.rseqpy_counter_add_many(self._c, n, count)
        if ret == _ADD_NO_CPU_OPV:
            raise RseqUnavailable(
                NEEDS_CPU_OPV, "cpu_opv (this thread's fallback mode is "
                "FALLBACK_ALWAYS, which sends every add to cpu_opv)")
        if ret != 0:
            need = NEEDS_MM_CID if self.field == MM_CID \
                else NEEDS_REGISTRATION
            raise RseqUnavailable(need, f"per-CPU operations by {self.field}")

    def values(self):
        """Per-slot values (one per possible CPU for per-CPU counters)."""
        out = ffi.new("long[]", self.nr_slots)
        if lib.rseqpy_counter_values(self._c, out, self.nr_slots) < 0:
            raise OSError(ffi.errno, os.strerror(ffi.errno))
        return list(out)

    def sum(self):
        return lib.rseqpy_counter_sum(self._c)

    @property
    def aborts(self):
        """rseq sequences aborted (and retried) so far."""
        return lib.rseqpy_counter_aborts(self._c)


class PerCpuCounter(_Counter):
    """Counter with one slot per CPU (or mm_cid), updated by rseq.

    Each add makes one inline rseq attempt; under the patched glibc an
    aborted attempt continues in libc's rseq_percpu_addv, which retries
    and then falls back to cpu_opv as the calling thread's fallback mode
    (set_fallback) says, and FALLBACK_ALWAYS sends every add straight to
    cpu_opv, so thread_aborts() and thread_fallbacks() count the
    counter's operations like any C caller's."""
    _kind = 0

    def __init__(self, field=CPU_ID):
        super().__init__(field)
        if lib.rseqpy_current_cpu(_FIELDS[field]) < 0:
            need = NEEDS_MM_CID if field == MM_CID else NEEDS_REGISTRATION
            raise RseqUnavailable(need, f"per-CPU operations by {field}")


class AtomicCounter(_Counter):
    """One shared counter updated with a locked add (for comparison)."""
    _kind = 1


class LockedCounter(_Counter):
    """One shared counter behind a pthread mutex (for comparison)."""
    _kind = 2


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
            need = NEEDS_CPU_OPV if _thread_mode_is_always() \
                else NEEDS_REGISTRATION
            raise RseqUnavailable(need, f"{method}: per-CPU operations")
        raise OSError(err, f"{method}: {os.strerror(err)}")


def _thread_mode_is_always():
    old = lib.rseqpy_set_fallback(FALLBACK_AUTO)
    if old >= 0:
        lib.rseqpy_set_fallback(old)
    return old == FALLBACK_ALWAYS


class PerCpuList(_Structure):
    """SIZE nodes numbered 0 .. SIZE-1 on per-CPU free lists: pop by
    rseq_percpu_cmpnev_storeoffp_load, push by
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
    stacks: pop by rseq_percpu_cmpeqv_trymemcpy_storev, push by its
    _release variant."""
    _new = lib.rseqpy_buffer_new
    _free = lib.rseqpy_buffer_free
    _churn = lib.rseqpy_buffer_churn
    _values = lib.rseqpy_buffer_values

    def __init__(self, size=64, item_size=64):
        self.size = as_int_in(size, "PerCpuBuffer: size", 1, 1 << 20)
        self.item_size = as_int_in(item_size, "PerCpuBuffer: item_size",
                                   8, 65536)
        super().__init__("per-CPU buffer", self.size, self.item_size)


def run_threads(count, target, *args):
    """Run TARGET(*ARGS) in COUNT threads started together, wait for all
    of them and return their results in thread order.  If any raised,
    raise the exception of the first such thread (in thread order, as
    concurrent.futures' map does) once every thread has finished."""
    count = as_count(count, "run_threads: count")
    results = [None] * count
    errors = [None] * count

    def run_one(index):
        try:
            results[index] = target(*args)
        except BaseException as e:      # handed to the caller
            errors[index] = e

    threads = [threading.Thread(target=run_one, args=(i,))
               for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for error in errors:
        if error is not None:
            raise error
    return results


# cpu_opv and the per-CPU operations' fallback (patched glibc and kernel).
from .opv import OpVector, available as cpu_opv_available  # noqa: E402

FALLBACK_AUTO, FALLBACK_NEVER, FALLBACK_ALWAYS = 0, 1, 2


def set_fallback(mode):
    """Set the calling thread's cpu_opv fallback mode for the patched
    glibc's per-CPU operations, PerCpuCounter's adds included; returns
    the previous mode.  AUTO: cpu_opv after 8 aborted attempts; NEVER:
    no cpu_opv; ALWAYS: every operation by cpu_opv (RseqUnavailable on
    a kernel without it).  Counters by mm_cid never use cpu_opv."""
    if mode not in (FALLBACK_AUTO, FALLBACK_NEVER, FALLBACK_ALWAYS):
        raise ValueError(f"set_fallback: unknown fallback mode {mode!r}")
    old = lib.rseqpy_set_fallback(mode)
    if old < 0:
        raise RseqUnavailable(NEEDS_PATCHED_GLIBC, "the cpu_opv fallback")
    return old


def _thread_stat(which, what):
    value = lib.rseqpy_thread_stat(which)
    if value < 0:
        raise RseqUnavailable(NEEDS_PATCHED_GLIBC, what)
    return value


def thread_aborts():
    """Attempts of this thread's per-CPU operations (PerCpuCounter adds,
    list and buffer operations included) that the kernel aborted: one
    per rseq_ip_fixup trace event of the thread in those operations
    (each counter also counts its own: .aborts)."""
    return _thread_stat(0, "per-thread abort statistics")


def thread_fallbacks():
    """cpu_opv system calls this thread's per-CPU operations (counter
    adds, list and buffer operations included) made as their fallback,
    whatever the kernel answered: one per cpu_opv trace event of the
    thread in those operations (rseq.trace counts them)."""
    return _thread_stat(1, "per-thread fallback statistics")

