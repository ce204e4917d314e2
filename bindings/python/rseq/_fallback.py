"""The calling thread's cpu_opv fallback mode and its per-thread
statistics, from the patched glibc (rseq_percpu_set_fallback,
rseq_percpu_aborts, rseq_percpu_fallbacks)."""

from ._constants import Fallback, as_fallback
from ._errors import NEEDS_PATCHED_GLIBC, RseqUnavailable
from ._percpu import lib

_ABORTS, _FALLBACKS = 0, 1      # rseqpy_thread_stat's WHICH


def set_fallback(mode):
    """Set the calling thread's cpu_opv fallback mode for the patched
    glibc's per-CPU operations, PerCpuCounter's adds included; returns
    the previous mode (a Fallback).  AUTO: cpu_opv after 8 aborted
    attempts; NEVER: no cpu_opv; ALWAYS: every operation by cpu_opv
    (RseqUnavailable on a kernel without it).  Counters by mm_cid never
    use cpu_opv."""
    mode = as_fallback(mode, "set_fallback")
    old = lib.rseqpy_set_fallback(mode)
    if old < 0:
        raise RseqUnavailable(NEEDS_PATCHED_GLIBC, "the cpu_opv fallback")
    return Fallback(old)


def thread_mode_is_always():
    """Whether the calling thread's mode is ALWAYS (False under a stock
    glibc, which has no modes)."""
    old = lib.rseqpy_set_fallback(Fallback.AUTO)
    if old >= 0:
        lib.rseqpy_set_fallback(old)
    return old == Fallback.ALWAYS


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
    return _thread_stat(_ABORTS, "per-thread abort statistics")


def thread_fallbacks():
    """cpu_opv system calls this thread's per-CPU operations (counter
    adds, list and buffer operations included) made as their fallback,
    whatever the kernel answered: one per cpu_opv trace event of the
    thread in those operations (rseq.trace counts them)."""
    return _thread_stat(_FALLBACKS, "per-thread fallback statistics")
