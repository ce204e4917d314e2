"""cpu_opv vectors from Python.

An OpVector collects up to 16 operations on Python buffers (bytearray,
memoryview, array.array, numpy arrays: anything with the buffer
protocol) and runs them on a CPU with the cpu_opv system call, which
the kernel performs with preemption disabled, atomically with respect
to rseq critical sections on that CPU.  Everything the kernel would
reject is rejected here first, with ValueError or TypeError; what only
the kernel can tell (CPU not allowed, for instance) raises OSError with
its errno.  Without the patched glibc and kernel, run() raises
RseqUnavailable."""

import errno
import os

from _rseq_percpu_c import ffi, lib

MAX_OPS = 16
MAX_DATA = 4096
_COMPARE_EQ, _COMPARE_NE, _MEMCPY, _ADD, _OR, _AND, _XOR, _LSHIFT, \
    _RSHIFT = range(9)
_INT_SIZES = (1, 2, 4, 8)


def available():
    """Whether this process can run cpu_opv vectors."""
    return bool(lib.rseqpy_cpu_opv_present())


class _Operand:
    """A byte range of a buffer, held (and locked against resizing)
    while the vector lives."""

    def __init__(self, obj, offset, length, writable, what):
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise TypeError(f"{what} offset must be an int")
        try:
            self.cdata = ffi.from_buffer(obj, require_writable=writable)
        except (TypeError, BufferError) as e:
            kind = "a writable buffer" if writable else "a buffer"
            raise TypeError(f"{what} must be {kind}, not "
                            f"{type(obj).__name__} ({e})") from None
        size = len(self.cdata)
        if length is None:
            length = size - offset
        if offset < 0 or length < 1 or offset + length > size:
            raise ValueError(f"{what}: {length} bytes at offset {offset} "
                             f"do not fit in a {size}-byte buffer")
        self.address = int(ffi.cast("uintptr_t", self.cdata)) + offset
        self.length = length


def _check_int_size(size):
    if size not in _INT_SIZES:
        raise ValueError(f"integer size must be 1, 2, 4 or 8, not {size!r}")


class OpVector:
    """A vector of cpu_opv operations; run(cpu) executes it."""

    def __init__(self):
        self._ops = []          # (type, length, word a, word b)
        self._operands = []     # keeps the buffers alive and locked

    def __len__(self):
        return len(self._ops)

    def _append(self, op, length, a, b, *operands):
        if len(self._ops) >= MAX_OPS:
            raise ValueError(f"a vector holds at most {MAX_OPS} operations")
        self._ops.append((op, length, a, b))
        self._operands.extend(operands)
        return self

    def _compare(self, op, a, b, length, a_offset, b_offset):
        x = _Operand(a, a_offset, length, False, "compare operand a")
        y = _Operand(b, b_offset, length if length is not None
                     else x.length, False, "compare operand b")
        if x.length != y.length or x.length > MAX_DATA:
            raise ValueError(f"compare length must be 1..{MAX_DATA} and "
                             f"the same for both operands")
        return self._append(op, x.length, x.address, y.address, x, y)

    def compare_eq(self, a, b, length=None, a_offset=0, b_offset=0):
        """Stop the vector here (result index + 1) unless a == b."""
        return self._compare(_COMPARE_EQ, a, b, length, a_offset, b_offset)

    def compare_ne(self, a, b, length=None, a_offset=0, b_offset=0):
        """Stop the vector here (result index + 1) unless a != b."""
        return self._compare(_COMPARE_NE, a, b, length, a_offset, b_offset)

    def memcpy(self, dst, src, length=None, dst_offset=0, src_offset=0):
        """Copy LENGTH bytes (at most 4096) from SRC into DST."""
        s = _Operand(src, src_offset, length, False, "memcpy source")
        d = _Operand(dst, dst_offset, s.length, True, "memcpy destination")
        if s.length > MAX_DATA:
            raise ValueError(f"memcpy length must be at most {MAX_DATA}")
        if d.address < s.address + s.length and \
                s.address < d.address + d.length:
            raise ValueError("memcpy source and destination overlap")
        return self._append(_MEMCPY, s.length, d.address, s.address, d, s)

    def _integer(self, op, buf, word, size, offset, what):
        _check_int_size(size)
        target = _Operand(buf, offset, size, True, what)
        if target.address % size:
            raise ValueError(f"{what}: a {size}-byte integer must be "
                             f"{size}-byte aligned in memory")
        return self._append(op, size, target.address,
                            word & 0xFFFFFFFFFFFFFFFF, target)

    def add(self, buf, value, size=8, offset=0):
        """buf[offset:offset+size] += value (native-endian unsigned)."""
        return self._integer(_ADD, buf, int(value), size, offset, "add")

    def bit_or(self, buf, mask, size=8, offset=0):
        return self._integer(_OR, buf, int(mask), size, offset, "or")

    def bit_and(self, buf, mask, size=8, offset=0):
        return self._integer(_AND, buf, int(mask), size, offset, "and")

    def bit_xor(self, buf, mask, size=8, offset=0):
        return self._integer(_XOR, buf, int(mask), size, offset, "xor")

    def _shift(self, op, buf, bits, size, offset, what):
        _check_int_size(size)
        if not isinstance(bits, int) or not 0 <= bits < 8 * size:
            raise ValueError(f"{what}: shift count must be 0..{8 * size - 1}")
        return self._integer(op, buf, bits, size, offset, what)

    def lshift(self, buf, bits, size=8, offset=0):
        return self._shift(_LSHIFT, buf, bits, size, offset, "lshift")

    def rshift(self, buf, bits, size=8, offset=0):
        """Logical right shift."""
        return self._shift(_RSHIFT, buf, bits, size, offset, "rshift")

    def run(self, cpu):
        """Run on CPU: 0 when every operation ran, or the index + 1 of the
        compare that stopped the vector."""
        from . import RseqUnavailable   # the package imports this module
        if not self._ops:
            raise ValueError("the vector is empty")
        if not isinstance(cpu, int) or isinstance(cpu, bool):
            raise TypeError("cpu must be an int")
        if cpu < 0:
            raise ValueError(f"cpu must be >= 0, not {cpu}")
        n = len(self._ops)
        types = ffi.new("int32_t[]", [o[0] for o in self._ops])
        lens = ffi.new("uint32_t[]", [o[1] for o in self._ops])
        a = ffi.new("uint64_t[]", [o[2] for o in self._ops])
        b = ffi.new("uint64_t[]", [o[3] for o in self._ops])
        ret = lib.rseqpy_cpu_opv(n, types, lens, a, b, cpu)
        if ret < 0:
            err = ffi.errno
            if err == errno.ENOSYS:
                raise RseqUnavailable("cpu_opv")
            raise OSError(err, f"cpu_opv on CPU {cpu}: {os.strerror(err)}")
        return ret
