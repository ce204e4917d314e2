"""The binding's constants, as enum.IntEnum classes whose values are the
C ABI's (<sys/rseq-percpu.h>), so that every constant is an int that
compares equal to the number C code uses.

Field says which number indexes per-CPU data: CPU_ID (the CPU) or MM_CID
(the memory-map concurrency ID).  Fallback is a thread's cpu_opv
fallback mode.  The module-level names (rseq.CPU_ID, rseq.MM_CID,
rseq.FALLBACK_AUTO, ...) are these members.  Field members print as
"cpu_id" and "mm_cid", the strings rseq.CPU_ID and rseq.MM_CID were
before they became members, and as_field still accepts those strings."""

import enum
import operator


class Field(enum.IntEnum):
    """RSEQ_PERCPU_INDEX_CPU_ID and RSEQ_PERCPU_INDEX_MM_CID."""
    CPU_ID = 0
    MM_CID = 1

    def __str__(self):
        return self.name.lower()

    def __format__(self, spec):
        return format(str(self), spec)


class Fallback(enum.IntEnum):
    """RSEQ_PERCPU_FALLBACK_AUTO, _NEVER and _ALWAYS."""
    AUTO = 0        # cpu_opv after 8 aborted attempts (the default)
    NEVER = 1       # no cpu_opv: an abort is returned to the caller
    ALWAYS = 2      # every operation by cpu_opv (testing, debugging)


def as_field(value, where):
    """VALUE as a Field: a member, its int, or its name in lower case
    ("cpu_id", "mm_cid": the older spelling of the constants); else
    ValueError naming WHERE."""
    if isinstance(value, str):
        member = Field.__members__.get(value.upper())
        if member is not None and value == str(member):
            return member
    elif _is_int(value) and operator.index(value) in iter(Field):
        return Field(operator.index(value))
    raise ValueError(f"{where} must be rseq.Field.CPU_ID or "
                     f"rseq.Field.MM_CID, not {value!r}")


def as_fallback(value, where):
    """VALUE as a Fallback member (or its int), else ValueError naming
    WHERE."""
    if _is_int(value) and operator.index(value) in iter(Fallback):
        return Fallback(operator.index(value))
    raise ValueError(f"{where}: unknown fallback mode {value!r}")


def _is_int(value):
    """An int or an object with __index__ (numpy integers), not a bool:
    rseq._check's rule."""
    return not isinstance(value, bool) and hasattr(type(value), "__index__")
