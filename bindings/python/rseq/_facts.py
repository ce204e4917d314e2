"""What this process has: the patched glibc, an rseq registration and
its size, the kernel's rseq features and cpu_opv.  info() reports these
facts, RseqUnavailable explains a missing feature from them and
OpVector checks cpu_opv with them; this module sits below all three, so
that none of them needs to import another to learn them."""

import os

from ._percpu import lib

AT_RSEQ_FEATURE_SIZE = 27
AT_RSEQ_ALIGN = 28
TUNABLE_OFF = "glibc.pthread.rseq=0"

# Resolve the patched glibc's symbols and probe cpu_opv (one system
# call) now, in the importing thread: done later, the probe would land
# in whichever thread first runs a structure, among the calls a trace
# of that thread's fallbacks counts.
lib.rseqpy_cpu_opv_present()


def cpu_opv_available():
    """Whether this process can run cpu_opv vectors."""
    return bool(lib.rseqpy_cpu_opv_present())


def tunable_off():
    """Whether GLIBC_TUNABLES turns rseq registration off."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    return any(t.strip() == TUNABLE_OFF for t in tunables.split(":"))


def current_facts():
    """What this process has, as RseqUnavailable.explain reads it."""
    return {
        "patched_glibc": bool(lib.rseqpy_patched_glibc()),
        "registered": bool(lib.rseqpy_registered()),
        "feature_size": lib.rseqpy_rseq_size(),
        "kernel_feature_size": lib.rseqpy_auxv(AT_RSEQ_FEATURE_SIZE),
        "tunable_off": tunable_off(),
        "cpu_opv": cpu_opv_available(),
        "kernel": os.uname().release,
    }
