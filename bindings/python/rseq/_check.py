"""Argument checks shared by the counters and OpVector: one rule set.

Integers are ints (or objects with __index__, such as numpy integers),
never bool, float or str; a failed check raises TypeError, ValueError or
OverflowError whose message starts with WHERE ("add: value", "run:
cpu") so that the caller sees which operand was wrong.  A value that
does not fit its size in memory is an OverflowError; a count, CPU, size
or offset out of its range is a ValueError."""

import operator


def as_int(value, where):
    """VALUE as an int, or TypeError naming WHERE."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{where} must be an int, not "
                        f"{type(value).__name__}")
    return operator.index(value)


# The largest count or offset the C side takes (a long).
LONG_MAX = (1 << 63) - 1


def _shown(value):
    return value if value.bit_length() <= 64 else \
        f"of {value.bit_length()} bits"


def as_count(value, where, highest=LONG_MAX):
    """A non-negative int up to HIGHEST (a repeat count, an offset), or
    ValueError naming WHERE."""
    value = as_int(value, where)
    if value < 0:
        raise ValueError(f"{where} must be >= 0, not {value}")
    if value > highest:
        raise ValueError(f"{where} {_shown(value)} is out of range "
                         f"0..{highest}")
    return value


def as_int_in(value, where, lowest, highest):
    """An int in LOWEST..HIGHEST, or ValueError naming WHERE."""
    value = as_int(value, where)
    if not lowest <= value <= highest:
        raise ValueError(f"{where} {_shown(value)} is out of range "
                         f"{lowest}..{highest}")
    return value


def as_int_fitting(value, where, lowest, highest):
    """A value (an amount to add) in LOWEST..HIGHEST, the range the C
    side holds, or OverflowError naming WHERE."""
    value = as_int(value, where)
    if not lowest <= value <= highest:
        raise OverflowError(f"{where} {_shown(value)} does not fit in "
                            f"{lowest}..{highest}")
    return value


def as_int_of_size(value, where, size):
    """An int that fits in SIZE bytes, as a signed or an unsigned
    number, or OverflowError naming WHERE."""
    bits = 8 * size
    value = as_int(value, where)
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        unit = "byte" if size == 1 else "bytes"
        raise OverflowError(f"{where} {_shown(value)} does not fit in {size} {unit} "
                            f"(signed or unsigned)")
    return value
