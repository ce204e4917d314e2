"""RseqUnavailable and the message that explains it from the facts of
rseq._facts.

A feature can be missing for four different reasons, and each needs a
different remedy: the process runs under the system's glibc (use the
launcher), rseq registration is off or was refused (the tunable, a
seccomp filter), the kernel has no node_id/mm_cid (Linux < 6.3), or the
kernel has no cpu_opv (only the project's test kernel has it).  The
message names the causes that apply, and only those."""

import errno
import os

from ._facts import TUNABLE_OFF as _TUNABLE_OFF, current_facts

_MM_CID_END = 28            # node_id and mm_cid end at byte 28
_TEST_VM = "build-scripts/vm/run-vm --python"

# What each feature needs, in the order the causes are checked.
NEEDS_REGISTRATION = "registration"
NEEDS_MM_CID = "mm_cid"
NEEDS_PATCHED_GLIBC = "patched_glibc"
NEEDS_CPU_OPV = "cpu_opv"
_REQUIREMENTS = {
    NEEDS_REGISTRATION: ("registration",),
    NEEDS_MM_CID: ("patched_glibc", "registration", "kernel_mm_cid"),
    NEEDS_PATCHED_GLIBC: ("patched_glibc",),
    NEEDS_CPU_OPV: ("patched_glibc", "kernel_cpu_opv"),
}


def launcher_path():
    """The rseq-python launcher installed with this package: the package
    lives in PREFIX/python/rseq and the launcher in PREFIX/bin.  None
    when the package was copied somewhere else (the test VM)."""
    package = os.path.dirname(os.path.realpath(__file__))
    prefix = os.path.dirname(os.path.dirname(package))
    path = os.path.join(prefix, "bin", "rseq-python")
    return path if os.access(path, os.X_OK) else None


def _missing_glibc(facts):
    if facts["patched_glibc"]:
        return None
    launcher = launcher_path()
    how = (f"run it with {launcher}" if launcher else
           "run it with the rseq-python launcher (PREFIX/bin/rseq-python "
           "of the toolchain installation)")
    return f"it needs the patched glibc and this process runs under the " \
           f"system's glibc: {how}"


def _missing_registration(facts):
    if facts["registered"] and facts["feature_size"] > 0:
        return None
    if facts["tunable_off"]:
        return f"rseq registration is turned off in this process by " \
               f"GLIBC_TUNABLES={_TUNABLE_OFF}: run it without that tunable"
    return "the kernel refused this thread's rseq registration (ENOSYS or " \
           "EPERM: a seccomp filter, an emulator or a kernel without " \
           "CONFIG_RSEQ)"


def _missing_kernel_mm_cid(facts):
    if facts["kernel_feature_size"] < _MM_CID_END:
        kernel = facts.get("kernel", os.uname().release)
        return f"node_id and mm_cid need Linux >= 6.3; kernel {kernel} " \
               f"does not provide them"
    if facts["patched_glibc"] and facts["registered"] \
            and 0 < facts["feature_size"] < _MM_CID_END:
        return f"this process's rseq registration covers " \
               f"{facts['feature_size']} bytes, not mm_cid"
    return None


def _missing_kernel_cpu_opv(facts):
    if facts.get("cpu_opv"):
        return None
    kernel = facts.get("kernel", os.uname().release)
    return f"kernel {kernel} has no cpu_opv system call (no " \
           f"/proc/sys/kernel/cpu_opv_syscall): only the project's " \
           f"patched Linux 6.12 has it; run this in the test VM " \
           f"({_TEST_VM})"


_CHECKS = {
    "patched_glibc": _missing_glibc,
    "registration": _missing_registration,
    "kernel_mm_cid": _missing_kernel_mm_cid,
    "kernel_cpu_opv": _missing_kernel_cpu_opv,
}


class RseqUnavailable(OSError):
    """What was asked needs something this process lacks; errno ENOSYS.
    The message says what is missing: the patched glibc (and the
    launcher to get it), an rseq registration (the tunable, or a
    refusal by the kernel), a kernel with node_id/mm_cid, or a kernel
    with cpu_opv."""

    def __init__(self, need, what=None, facts=None):
        if facts is None:
            facts = current_facts()
        super().__init__(errno.ENOSYS, self.explain(need, facts, what))

    @staticmethod
    def explain(need, facts, what=None):
        """The message for WHAT (default: NEED) given FACTS: one reason
        per requirement of NEED that FACTS show missing."""
        what = what or need
        reasons = [r for r in (_CHECKS[req](facts)
                               for req in _REQUIREMENTS[need]) if r]
        if not reasons:
            reasons = ["the kernel did not provide it to this thread"]
        return f"{what} not available: " + "; and ".join(reasons)
