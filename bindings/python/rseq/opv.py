"""cpu_opv vectors from Python.

An OpVector collects up to 16 operations on Python buffers (bytearray,
memoryview, array.array, mmap, numpy arrays: anything with the buffer
protocol that is C-contiguous) and runs them on a CPU with the cpu_opv
system call, which the kernel performs with preemption disabled,
atomically with respect to rseq critical sections on that CPU.

Every argument is checked when the operation is added, by one rule set
(rseq._check): integers are ints, never bool, float or str
(TypeError); values must fit the operand's size, signed or unsigned
(OverflowError); sizes, shift counts, offsets and lengths must be in
range, destinations writable, buffers C-contiguous, open and large
enough (ValueError/TypeError).  Each message starts with "METHOD:
OPERAND".  A rejected operation leaves the vector unchanged.  What only
the kernel can tell (CPU not allowed, for instance) raises OSError with
its errno; without the patched glibc and kernel, run() raises
RseqUnavailable.

The vector holds its buffers (locked against resizing) until release(),
the end of a with block, or the vector's destruction."""

import errno
import os

from ._check import as_count, as_int, as_int_of_size
from ._errors import NEEDS_CPU_OPV, RseqUnavailable
from ._facts import cpu_opv_available as available
from ._percpu import ffi, lib

__all__ = ["OpVector", "available", "MAX_OPS", "MAX_DATA"]

MAX_OPS = 16
MAX_DATA = 4096
_COMPARE_EQ, _COMPARE_NE, _MEMCPY, _ADD, _OR, _AND, _XOR, _LSHIFT, \
    _RSHIFT = range(9)
_INT_SIZES = (1, 2, 4, 8)
_WORD_MASK = (1 << 64) - 1


def _borrow(obj, writable, where):
    """A cffi view of OBJ's memory that keeps OBJ locked against resizing
    until ffi.release; errors name WHERE."""
    kind = "a writable buffer" if writable else "a buffer"
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(f"{where} must be {kind} (bytearray, array.array, "
                        f"memoryview, mmap, numpy array), not "
                        f"{type(obj).__name__}") from None
    except ValueError as e:         # released memoryview, closed mmap
        raise ValueError(f"{where} is unusable: {e}") from None
    with view:
        if writable and view.readonly:
            raise TypeError(f"{where} must be {kind}, not a read-only "
                            f"{type(obj).__name__}")
        if not view.c_contiguous:
            raise TypeError(f"{where} must be a C-contiguous buffer; this "
                            f"{type(obj).__name__} is not contiguous")
    try:
        return ffi.from_buffer(obj, require_writable=writable)
    except (TypeError, ValueError, BufferError) as e:
        raise TypeError(f"{where} cannot be used as {kind}: {e}") from None


class _Operand:
    """LENGTH bytes at OFFSET of a buffer, held while the vector lives."""

    def __init__(self, obj, offset, length, writable, where):
        self.cdata = _borrow(obj, writable, where)
        size = len(self.cdata)
        if length is None:
            length = size - offset
        if length < 1 or offset + length > size:
            ffi.release(self.cdata)
            raise ValueError(f"{where}: {length} bytes at offset {offset} "
                             f"do not fit in a {size}-byte buffer")
        self.address = int(ffi.cast("uintptr_t", self.cdata)) + offset
        self.length = length

    def release(self):
        ffi.release(self.cdata)


def _int_size(size, method):
    size = as_int(size, f"{method}: size")
    if size not in _INT_SIZES:
        raise ValueError(f"{method}: size must be 1, 2, 4 or 8, not {size}")
    return size


def _data_length(length, method):
    """None (the rest of the first buffer) or 1..MAX_DATA."""
    if length is None:
        return None
    length = as_int(length, f"{method}: length")
    if not 1 <= length <= MAX_DATA:
        raise ValueError(f"{method}: length must be 1..{MAX_DATA}, "
                         f"not {length}")
    return length


class OpVector:
    """A vector of cpu_opv operations; run(cpu) executes it.  Use it in a
    with block, or call release(), to give its buffers back at once."""

    def __init__(self):
        self._ops = []          # (type, length, word a, word b)
        self._operands = []     # keeps the buffers alive and locked
        self._released = False

    def __len__(self):
        return len(self._ops)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def release(self):
        """Drop every operation and unlock the buffers now.  The vector
        cannot be used afterwards; releasing again does nothing."""
        for operand in self._operands:
            operand.release()
        self._operands.clear()
        self._ops.clear()
        self._released = True

    def _check_usable(self, method):
        if self._released:
            raise ValueError(f"{method}: the vector was released")
        if method != "run" and len(self._ops) >= MAX_OPS:
            raise ValueError(f"{method}: a vector holds at most {MAX_OPS} "
                             f"operations")

    def _append(self, op, length, a, b, *operands):
        self._ops.append((op, length, a, b))
        self._operands.extend(operands)
        return self

    def _operands_of(self, method, specs):
        """_Operands for SPECS [(obj, offset, length, writable, name)];
        on any error the ones already taken are released."""
        taken = []
        try:
            for obj, offset, length, writable, name in specs:
                taken.append(_Operand(obj, offset, length, writable,
                                      f"{method}: {name}"))
        except BaseException:
            for operand in taken:
                operand.release()
            raise
        return taken

    def _compare(self, op, method, a, b, length, a_offset, b_offset):
        self._check_usable(method)
        length = _data_length(length, method)
        a_offset = as_count(a_offset, f"{method}: a_offset")
        b_offset = as_count(b_offset, f"{method}: b_offset")
        x, = self._operands_of(method, [(a, a_offset, length, False, "a")])
        try:
            if x.length > MAX_DATA:
                raise ValueError(f"{method}: length must be 1..{MAX_DATA}, "
                                 f"not {x.length} (the rest of a)")
            y, = self._operands_of(method,
                                   [(b, b_offset, x.length, False, "b")])
        except BaseException:
            x.release()
            raise
        return self._append(op, x.length, x.address, y.address, x, y)

    def compare_eq(self, a, b, length=None, a_offset=0, b_offset=0):
        """Stop the vector here (result index + 1) unless a == b."""
        return self._compare(_COMPARE_EQ, "compare_eq", a, b, length,
                             a_offset, b_offset)

    def compare_ne(self, a, b, length=None, a_offset=0, b_offset=0):
        """Stop the vector here (result index + 1) unless a != b."""
        return self._compare(_COMPARE_NE, "compare_ne", a, b, length,
                             a_offset, b_offset)

    def memcpy(self, dst, src, length=None, dst_offset=0, src_offset=0):
        """Copy LENGTH bytes (1..4096) from SRC into DST."""
        method = "memcpy"
        self._check_usable(method)
        length = _data_length(length, method)
        dst_offset = as_count(dst_offset, f"{method}: dst_offset")
        src_offset = as_count(src_offset, f"{method}: src_offset")
        s, = self._operands_of(method,
                               [(src, src_offset, length, False, "src")])
        try:
            if s.length > MAX_DATA:
                raise ValueError(f"{method}: length must be 1..{MAX_DATA}, "
                                 f"not {s.length} (the rest of src)")
            d, = self._operands_of(method,
                                   [(dst, dst_offset, s.length, True, "dst")])
        except BaseException:
            s.release()
            raise
        if d.address < s.address + s.length and \
                s.address < d.address + d.length:
            s.release()
            d.release()
            raise ValueError(f"{method}: dst and src overlap")
        return self._append(_MEMCPY, s.length, d.address, s.address, d, s)

    def _integer(self, op, method, buf, value, value_name, size, offset):
        self._check_usable(method)
        size = _int_size(size, method)
        value = as_int_of_size(value, f"{method}: {value_name}", size)
        return self._target(op, method, buf, value & _WORD_MASK, size,
                            offset)

    def _target(self, op, method, buf, word, size, offset):
        offset = as_count(offset, f"{method}: offset")
        target, = self._operands_of(method, [(buf, offset, size, True,
                                              "buf")])
        if target.address % size:
            target.release()
            raise ValueError(f"{method}: buf at offset {offset}: a "
                             f"{size}-byte integer must be {size}-byte "
                             f"aligned in memory")
        return self._append(op, size, target.address, word, target)

    def add(self, buf, value, size=8, offset=0):
        """buf[offset:offset+size] += value (native-endian, modulo
        2**(8*size)); value fits in SIZE bytes, signed or unsigned."""
        return self._integer(_ADD, "add", buf, value, "value", size, offset)

    def bit_or(self, buf, mask, size=8, offset=0):
        return self._integer(_OR, "bit_or", buf, mask, "mask", size, offset)

    def bit_and(self, buf, mask, size=8, offset=0):
        return self._integer(_AND, "bit_and", buf, mask, "mask", size,
                             offset)

    def bit_xor(self, buf, mask, size=8, offset=0):
        return self._integer(_XOR, "bit_xor", buf, mask, "mask", size,
                             offset)

    def _shift(self, op, method, buf, bits, size, offset):
        self._check_usable(method)
        size = _int_size(size, method)
        bits = as_int(bits, f"{method}: bits")
        if not 0 <= bits < 8 * size:
            raise ValueError(f"{method}: bits must be 0..{8 * size - 1}, "
                             f"not {bits}")
        return self._target(op, method, buf, bits, size, offset)

    def lshift(self, buf, bits, size=8, offset=0):
        return self._shift(_LSHIFT, "lshift", buf, bits, size, offset)

    def rshift(self, buf, bits, size=8, offset=0):
        """Logical right shift."""
        return self._shift(_RSHIFT, "rshift", buf, bits, size, offset)

    def run(self, cpu):
        """Run on CPU: 0 when every operation ran, or the index + 1 of the
        compare that stopped the vector."""
        self._check_usable("run")
        if not self._ops:
            raise ValueError("run: the vector is empty")
        cpu = as_count(cpu, "run: cpu", (1 << 31) - 1)
        n = len(self._ops)
        types = ffi.new("int32_t[]", [o[0] for o in self._ops])
        lens = ffi.new("uint32_t[]", [o[1] for o in self._ops])
        a = ffi.new("uint64_t[]", [o[2] for o in self._ops])
        b = ffi.new("uint64_t[]", [o[3] for o in self._ops])
        ret = lib.rseqpy_cpu_opv(n, types, lens, a, b, cpu)
        if ret < 0:
            err = ffi.errno
            if err == errno.ENOSYS:
                raise RseqUnavailable(NEEDS_CPU_OPV, "cpu_opv")
            raise OSError(err, f"cpu_opv on CPU {cpu}: {os.strerror(err)}")
        return ret
