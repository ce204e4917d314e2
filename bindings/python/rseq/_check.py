"""Argument checks shared by the counters and OpVector: one rule set.

Integers are ints (or objects with __index__, such as numpy integers),
never bool, float or str; a failed check raises TypeError, ValueError or
OverflowError whose message starts with WHERE ("add: value", "run:
cpu") so that the caller sees which operand was wrong."""

import operator


def as_int(value, where):
    """VALUE as an int, or TypeError naming WHERE."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{where} must be an int, not "
                        f"{type(value).__name__}")
    return operator.index(value)


def as_count(value, where):
    """A non-negative int (a repeat count, an offset)."""
    value = as_int(value, where)
    if value < 0:
        raise ValueError(f"{where} must be >= 0, not {value}")
    return value


def as_int_in(value, where, lowest, highest):
    """An int in LOWEST..HIGHEST, or OverflowError naming WHERE."""
    value = as_int(value, where)
    if not lowest <= value <= highest:
        shown = value if value.bit_length() <= 64 else \
            f"of {value.bit_length()} bits"
        raise OverflowError(f"{where} {shown} is out of range "
                            f"{lowest}..{highest}")
    return value


def as_int_of_size(value, where, size):
    """An int that fits in SIZE bytes, as a signed or an unsigned
    number, or OverflowError naming WHERE."""
    bits = 8 * size
    value = as_int(value, where)
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        shown = value if value.bit_length() <= 64 else \
            f"of {value.bit_length()} bits"
        unit = "byte" if size == 1 else "bytes"
        raise OverflowError(f"{where} {shown} does not fit in {size} {unit} "
                            f"(signed or unsigned)")
    return value
