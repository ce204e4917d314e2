"""Per-CPU experiments from Python on top of the rseq toolchain.

Run under the patched glibc with out/bin/rseq-python.  The package also
imports under a stock glibc >= 2.35; there it offers what that libc and
kernel provide (current CPU, per-CPU counters by cpu_id) and raises
RseqUnavailable, naming the launcher, for the rest.  Functions follow
the os module's sched_* style: plain ints, OSError subclasses on
failure."""

import errno
import os
import threading

from _rseq_percpu_c import ffi, lib

__all__ = [
    "RseqUnavailable", "current_cpu", "current_node", "current_mm_cid",
    "info", "PerCpuCounter", "AtomicCounter", "LockedCounter", "CPU_ID",
    "MM_CID", "OpVector", "cpu_opv_available", "set_fallback",
    "thread_aborts", "thread_fallbacks", "FALLBACK_AUTO", "FALLBACK_NEVER",
    "FALLBACK_ALWAYS",
]

LAUNCHER = "out/bin/rseq-python"
CPU_ID = "cpu_id"
MM_CID = "mm_cid"
_FIELDS = {CPU_ID: 0, MM_CID: 1}
_AT_RSEQ_FEATURE_SIZE = 27
_AT_RSEQ_ALIGN = 28


class RseqUnavailable(OSError):
    """What was asked needs something this process lacks: an rseq
    registration, a kernel field (Linux >= 6.3), or the patched glibc."""

    def __init__(self, what):
        super().__init__(errno.ENOSYS,
                         f"{what} is not available in this process "
                         f"(__rseq_size={lib.rseqpy_rseq_size()}, "
                         f"kernel {os.uname().release}); run under the "
                         f"patched glibc with {LAUNCHER} on Linux >= 6.3")


def current_cpu():
    """The CPU the calling thread runs on (rseq cpu_id, else sched_getcpu)."""
    cpu = lib.rseqpy_cpu()
    if cpu < 0:
        raise OSError(ffi.errno, os.strerror(ffi.errno))
    return cpu


def current_node():
    """The NUMA node of the calling thread (rseq node_id, else getcpu)."""
    node = lib.rseqpy_node()
    if node < 0:
        raise OSError(ffi.errno, os.strerror(ffi.errno))
    return node


def current_mm_cid():
    """The memory-map concurrency ID of the calling thread."""
    cid = lib.rseqpy_mm_cid()
    if cid < 0:
        raise RseqUnavailable("mm_cid")
    return cid


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


def _check_count(n, name="n"):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{name} must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")


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

    def add(self, count=1):
        """Add COUNT once."""
        self.add_many(1, count)

    def add_many(self, n, count=1):
        """Add COUNT, N times, in a C loop (the GIL is released)."""
        _check_count(n)
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError("count must be an int")
        if not -(1 << 62) <= count < (1 << 62):
            raise OverflowError("count out of range")
        if lib.rseqpy_counter_add_many(self._c, n, count) != 0:
            raise RseqUnavailable(f"per-CPU operations by {self.field}")

    def values(self):
        """Per-slot values (one per possible CPU for per-CPU counters)."""
        return [lib.rseqpy_counter_value(self._c, i)
                for i in range(lib.rseqpy_nr_slots())]

    def sum(self):
        return sum(self.values())

    @property
    def aborts(self):
        """rseq sequences aborted (and retried) so far."""
        return lib.rseqpy_counter_aborts(self._c)


class PerCpuCounter(_Counter):
    """Counter with one slot per CPU (or mm_cid), updated by rseq."""
    _kind = 0

    def __init__(self, field=CPU_ID):
        super().__init__(field)
        if lib.rseqpy_current_cpu(_FIELDS[field]) < 0:
            raise RseqUnavailable(f"per-CPU operations by {field}")


class AtomicCounter(_Counter):
    """One shared counter updated with a locked add (for comparison)."""
    _kind = 1


class LockedCounter(_Counter):
    """One shared counter behind a pthread mutex (for comparison)."""
    _kind = 2


def run_threads(count, target, *args):
    """Run TARGET(*args) in COUNT Python threads and wait for them."""
    threads = [threading.Thread(target=target, args=args)
               for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# cpu_opv and the per-CPU operations' fallback (patched glibc and kernel).
from .opv import OpVector, available as cpu_opv_available  # noqa: E402

FALLBACK_AUTO, FALLBACK_NEVER, FALLBACK_ALWAYS = 0, 1, 2


def set_fallback(mode):
    """Set the calling thread's cpu_opv fallback mode for the patched
    glibc's per-CPU operations; returns the previous mode."""
    if mode not in (FALLBACK_AUTO, FALLBACK_NEVER, FALLBACK_ALWAYS):
        raise ValueError(f"unknown fallback mode {mode!r}")
    old = lib.rseqpy_set_fallback(mode)
    if old < 0:
        raise RseqUnavailable("the cpu_opv fallback")
    return old


def _thread_stat(which, what):
    value = lib.rseqpy_thread_stat(which)
    if value < 0:
        raise RseqUnavailable(what)
    return value


def thread_aborts():
    """Aborted rseq attempts of this thread in the patched glibc's
    per-CPU operations (the counters here count their own: .aborts)."""
    return _thread_stat(0, "per-thread abort statistics")


def thread_fallbacks():
    """Operations this thread completed through the cpu_opv fallback."""
    return _thread_stat(1, "per-thread fallback statistics")
