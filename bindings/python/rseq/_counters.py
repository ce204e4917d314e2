"""PerCpuCounter and, for comparison, AtomicCounter and LockedCounter:
rseq._percpu's counters (bindings/python/counters.c)."""

import os

from ._check import as_count, as_int_fitting
from ._constants import Field, as_field
from ._errors import NEEDS_CPU_OPV, NEEDS_MM_CID, NEEDS_REGISTRATION, \
    RseqUnavailable
from ._percpu import ffi, lib

# rseqpy_counter_add_many's failures.
_ADD_NO_PERCPU, _ADD_NO_CPU_OPV = -1, -2
# rseqpy_counter_new's KIND.
_KIND_RSEQ, _KIND_ATOMIC, _KIND_MUTEX = 0, 1, 2


def _need_for(field):
    """What per-CPU operations by FIELD need."""
    return NEEDS_MM_CID if field == Field.MM_CID else NEEDS_REGISTRATION


class _Counter:
    _kind = None

    def __init__(self, field=Field.CPU_ID):
        # A Field; its old string spelling ("cpu_id") still works.
        self._field = as_field(field, "field")
        ptr = lib.rseqpy_counter_new(self._kind, self.field)
        if ptr == ffi.NULL:
            raise MemoryError("cannot allocate a per-CPU counter")
        self._c = ffi.gc(ptr, lib.rseqpy_counter_free)
        # Fixed at creation: the slots the counter was allocated with.
        self.nr_slots = lib.rseqpy_counter_nr_slots(self._c)

    @property
    def field(self):
        """The Field that picks the slot, fixed when the counter is made."""
        return self._field

    @field.setter
    def field(self, value):
        raise AttributeError("field: fixed when the counter is created (its "
                             "slots are sized for it); make a new counter")

    def add(self, count=1):
        """Add COUNT once."""
        self._add_many(1, count, "add")

    def add_many(self, n, count=1):
        """Add COUNT, N times, in a C loop (the GIL is released)."""
        self._add_many(n, count, "add_many")

    def _add_many(self, n, count, method):
        n = as_count(n, f"{method}: n")
        count = as_int_fitting(count, f"{method}: count", -(1 << 62),
                               (1 << 62) - 1)
        ret = lib.rseqpy_counter_add_many(self._c, n, count)
        if ret == _ADD_NO_CPU_OPV:
            raise RseqUnavailable(
                NEEDS_CPU_OPV, "cpu_opv (this thread's fallback mode is "
                "FALLBACK_ALWAYS, which sends every add to cpu_opv)")
        if ret != 0:
            raise RseqUnavailable(_need_for(self.field),
                                  f"per-CPU operations by {self.field}")

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
    """Counter with one slot per CPU (or mm_cid: FIELD is a Field),
    updated by rseq.

    Each add makes one inline rseq attempt; under the patched glibc an
    aborted attempt continues in libc's rseq_percpu_addv, which retries
    and then falls back to cpu_opv as the calling thread's fallback mode
    (set_fallback) says, and FALLBACK_ALWAYS sends every add straight to
    cpu_opv, so thread_aborts() and thread_fallbacks() count the
    counter's operations like any C caller's."""
    _kind = _KIND_RSEQ

    def __init__(self, field=Field.CPU_ID):
        super().__init__(field)
        if lib.rseqpy_current_cpu(self.field) < 0:
            raise RseqUnavailable(_need_for(self.field),
                                  f"per-CPU operations by {self.field}")


class AtomicCounter(_Counter):
    """One shared counter updated with a locked add (for comparison)."""
    _kind = _KIND_ATOMIC


class LockedCounter(_Counter):
    """One shared counter behind a pthread mutex (for comparison)."""
    _kind = _KIND_MUTEX
