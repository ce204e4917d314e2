"""OpVector input validation: one strict rule set for every operation,
checked before anything is added to the vector, and every error names
the method and the operand it is about.  None of this needs cpu_opv."""

import array
import mmap
import re

import pytest

import rseq


def _released_memoryview():
    view = memoryview(bytearray(16))
    view.release()
    return view


def _closed_mmap():
    mapping = mmap.mmap(-1, mmap.PAGESIZE)
    mapping.close()
    return mapping


def _non_contiguous():
    return memoryview(bytearray(32))[::2]


# (call on a fresh vector and an 8-aligned 64-byte buffer, exception,
#  regex the message must match: "METHOD: OPERAND ...")
BAD_CALLS = [
    (lambda v, b: v.add(b, "5"), TypeError, r"^add: value must be an int"),
    (lambda v, b: v.add(b, 3.9), TypeError, r"^add: value must be an int"),
    (lambda v, b: v.add(b, None), TypeError, r"^add: value must be an int"),
    (lambda v, b: v.add(b, True), TypeError, r"^add: value must be an int"),
    (lambda v, b: v.add(b, 2 ** 200), OverflowError, r"^add: value .*8 bytes"),
    (lambda v, b: v.add(b, -2 ** 64), OverflowError, r"^add: value"),
    (lambda v, b: v.add(b, 256, size=1), OverflowError,
     r"^add: value .*1 byte"),
    (lambda v, b: v.bit_or(b, 1 << 64), OverflowError, r"^bit_or: mask"),
    (lambda v, b: v.bit_and(b, 1.0), TypeError, r"^bit_and: mask"),
    (lambda v, b: v.bit_xor(b, "1"), TypeError, r"^bit_xor: mask"),
    (lambda v, b: v.add(b, 1, size=8.0), TypeError,
     r"^add: size must be an int"),
    (lambda v, b: v.add(b, 1, size=True), TypeError,
     r"^add: size must be an int"),
    (lambda v, b: v.add(b, 1, size=3), ValueError,
     r"^add: size must be 1, 2, 4 or 8"),
    (lambda v, b: v.add(b, 1, offset=8.0), TypeError,
     r"^add: offset must be an int"),
    (lambda v, b: v.add(b, 1, offset=-8), ValueError, r"^add: offset"),
    (lambda v, b: v.add(b, 1, offset=60), ValueError, r"^add: buf"),
    (lambda v, b: v.add(b, 1, offset=4), ValueError,
     r"^add: buf .*aligned"),
    (lambda v, b: v.lshift(b, True), TypeError,
     r"^lshift: bits must be an int"),
    (lambda v, b: v.lshift(b, 1.0), TypeError,
     r"^lshift: bits must be an int"),
    (lambda v, b: v.rshift(b, "1"), TypeError,
     r"^rshift: bits must be an int"),
    (lambda v, b: v.lshift(b, 64), ValueError, r"^lshift: bits must be 0\.\.63"),
    (lambda v, b: v.rshift(b, 8, size=1), ValueError,
     r"^rshift: bits must be 0\.\.7"),
    (lambda v, b: v.add(b"12345678", 1), TypeError,
     r"^add: buf must be a writable buffer"),
    (lambda v, b: v.add(12345, 1), TypeError, r"^add: buf must be a"),
    (lambda v, b: v.add(_released_memoryview(), 1), ValueError,
     r"^add: buf .*released"),
    (lambda v, b: v.add(_closed_mmap(), 1), ValueError, r"^add: buf .*closed"),
    (lambda v, b: v.add(_non_contiguous(), 1, size=1), TypeError,
     r"^add: buf .*contiguous"),
    (lambda v, b: v.compare_eq(b, b, 8.0), TypeError,
     r"^compare_eq: length must be an int"),
    (lambda v, b: v.compare_ne(b, _closed_mmap(), 8), ValueError,
     r"^compare_ne: b .*closed"),
    (lambda v, b: v.compare_eq(_released_memoryview(), b, 8), ValueError,
     r"^compare_eq: a .*released"),
    (lambda v, b: v.compare_eq(b, bytearray(8), 16), ValueError,
     r"^compare_eq: b"),
    (lambda v, b: v.compare_eq(b, b, 0), ValueError,
     r"^compare_eq: length must be 1\.\.4096"),
    (lambda v, b: v.compare_eq(b, b, 8, a_offset=1.5), TypeError,
     r"^compare_eq: a_offset must be an int"),
    (lambda v, b: v.memcpy(b, bytearray(8), True), TypeError,
     r"^memcpy: length must be an int"),
    (lambda v, b: v.memcpy(bytes(8), b, 8), TypeError,
     r"^memcpy: dst must be a writable buffer"),
    (lambda v, b: v.memcpy(b, _non_contiguous(), 8), TypeError,
     r"^memcpy: src .*contiguous"),
    (lambda v, b: v.memcpy(b, b, 8, dst_offset=4), ValueError,
     r"^memcpy: dst and src overlap"),
    (lambda v, b: v.memcpy(bytearray(8192), bytearray(8192), 4097),
     ValueError, r"^memcpy: length must be 1\.\.4096"),
]


@pytest.mark.parametrize("call,exc,message", BAD_CALLS,
                         ids=[m for _, _, m in BAD_CALLS])
def test_opv_bad_operand_is_named_and_nothing_is_added(call, exc, message):
    v = rseq.OpVector()
    buf = array.array("Q", [0] * 8)
    with pytest.raises(exc) as e:
        call(v, buf)
    assert re.search(message, str(e.value)), str(e.value)
    assert len(v) == 0


def test_opv_values_in_range_for_their_size_are_accepted():
    buf = array.array("Q", [0] * 8)
    v = rseq.OpVector()
    v.add(buf, 255, size=1)
    v.add(buf, -128, size=1, offset=8)
    v.add(buf, (1 << 64) - 1, size=8, offset=16)
    v.add(buf, -(1 << 63), size=8, offset=24)
    v.bit_and(buf, 0xFFFF, size=2, offset=32)
    v.lshift(buf, 0)
    assert len(v) == 6


def test_opv_numpy_buffers_errors_name_the_operand():
    numpy = pytest.importorskip("numpy")
    v = rseq.OpVector()
    frozen = numpy.zeros(4, dtype=numpy.uint64)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match=r"^add: buf must be a writable"):
        v.add(frozen, 1)
    strided = numpy.zeros((4, 4), dtype=numpy.uint64)[:, 1]
    with pytest.raises(TypeError, match=r"^add: buf .*contiguous"):
        v.add(strided, 1)
    with pytest.raises(TypeError, match=r"^memcpy: src .*contiguous"):
        v.memcpy(bytearray(32), strided)
    v.add(numpy.zeros(4, dtype=numpy.uint64), 1)
    v.compare_eq(frozen, frozen, 8)        # read-only is fine to compare
    assert len(v) == 2


@pytest.mark.parametrize("reject", [
    lambda v, a: v.compare_eq(a, bytearray(4), 8),         # b too short
    lambda v, a: v.memcpy(a, a, 8, src_offset=4),          # overlap
    lambda v, a: v.add(a, 1, offset=4),                    # misaligned
    lambda v, a: v.memcpy(a, _non_contiguous(), 4),        # bad src
])
def test_opv_rejected_operation_keeps_no_buffer_locked(reject):
    a = bytearray(16)
    v = rseq.OpVector()
    with pytest.raises((ValueError, TypeError)) as e:
        reject(v, a)
    a.extend(b"x" * 4096)          # BufferError if a were still exported
    assert len(v) == 0
    del e


@pytest.mark.parametrize("cpu,message", [
    (2 ** 40, r"^run: cpu 1099511627776 is out of range 0\.\.2147483647"),
    (-1, r"^run: cpu must be >= 0"),
    (10 ** 30, r"^run: cpu of 100 bits is out of range"),
])
def test_opv_run_cpu_out_of_range_is_a_named_value_error(cpu, message):
    """Checked before cpu_opv is called (so on any kernel): a CPU the C
    side's int cannot hold is a ValueError naming run's operand, never
    cffi's bare OverflowError."""
    buf = array.array("Q", [0] * 8)
    with rseq.OpVector() as v:
        v.add(buf, 1)
        with pytest.raises(ValueError, match=message) as e:
            v.run(cpu)
    assert not isinstance(e.value, OverflowError)
    assert buf[0] == 0
