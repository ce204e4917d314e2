"""Per-CPU experiments from Python on top of the rseq toolchain.

Run under the patched glibc with the rseq-python launcher.  The package
also imports under a stock glibc >= 2.35; there it offers what that
libc and kernel provide (current CPU, per-CPU counters by cpu_id) and
raises RseqUnavailable, saying what is missing, for the rest.  Functions
follow the os module's sched_* style: plain ints, OSError subclasses on
failure; constants are enum.IntEnum members (Field, Fallback)."""

import os
import threading

from . import _fastcpu
from ._check import as_count
from ._constants import Fallback, Field
from ._counters import AtomicCounter, LockedCounter, PerCpuCounter
from ._errors import NEEDS_MM_CID, RseqUnavailable
from ._facts import AT_RSEQ_ALIGN, AT_RSEQ_FEATURE_SIZE, cpu_opv_available
from ._fallback import set_fallback, thread_aborts, thread_fallbacks
from ._fastcpu import current_cpu, current_mm_cid, current_node
from ._percpu import lib
from ._structures import PerCpuBuffer, PerCpuList
from .opv import OpVector

__all__ = [
    "RseqUnavailable", "current_cpu", "current_node", "current_mm_cid",
    "info", "PerCpuCounter", "AtomicCounter", "LockedCounter", "CPU_ID",
    "MM_CID", "OpVector", "cpu_opv_available", "set_fallback",
    "thread_aborts", "thread_fallbacks", "FALLBACK_AUTO", "FALLBACK_NEVER",
    "FALLBACK_ALWAYS", "run_threads", "PerCpuList", "PerCpuBuffer",
    "Field", "Fallback",
]

# The constants' module-level names, as before the enums.
CPU_ID, MM_CID = Field.CPU_ID, Field.MM_CID
FALLBACK_AUTO, FALLBACK_NEVER, FALLBACK_ALWAYS = \
    Fallback.AUTO, Fallback.NEVER, Fallback.ALWAYS


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
        "kernel_feature_size": lib.rseqpy_auxv(AT_RSEQ_FEATURE_SIZE),
        "kernel_align": lib.rseqpy_auxv(AT_RSEQ_ALIGN),
        "node_id": size >= 24,
        "mm_cid": size >= 28,
        "patched_glibc": bool(lib.rseqpy_patched_glibc()),
        "cpu_opv": cpu_opv_available(),
        "kernel": os.uname().release,
        "nr_slots": lib.rseqpy_nr_slots(),
    }


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
