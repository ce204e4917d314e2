"""PerCpuList and PerCpuBuffer: the patched glibc's out-of-line
operations keep every element exactly once under threads, signals and
migrations; bad arguments raise; FALLBACK_ALWAYS needs cpu_opv (the
VM runs these with it)."""

import os
import signal
import threading

import pytest

import rseq

STRUCTURES = [
    pytest.param(lambda: rseq.PerCpuList(97), id="list"),
    pytest.param(lambda: rseq.PerCpuBuffer(97, 40), id="buffer"),
]


def _kernel_has_cpu_opv():
    return rseq.info()["cpu_opv"]


@pytest.mark.parametrize("make", STRUCTURES)
def test_a_new_structure_holds_each_element_once(make):
    s = make()
    assert sorted(s.values()) == list(range(97))


@pytest.mark.parametrize("make", STRUCTURES)
def test_churn_keeps_each_element_once_under_threads_signals_migrations(
        make):
    s = make()
    cpus = sorted(os.sched_getaffinity(0))
    stop = threading.Event()
    tids = []
    signal.signal(signal.SIGUSR1, lambda *a: None)

    def worker():
        tids.append(threading.get_native_id())
        return s.churn(20000)

    def disturb(threads):
        i = 0
        while not stop.wait(0.001):
            t = threads[i % len(threads)]
            if t.is_alive():
                try:
                    signal.pthread_kill(t.ident, signal.SIGUSR1)
                    os.sched_setaffinity(tids[i % len(tids)],
                                         {cpus[i % len(cpus)]})
                except (ProcessLookupError, OSError, IndexError):
                    pass
            i += 1

    aborts_before = rseq.thread_aborts()
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    disturber = threading.Thread(target=disturb, args=(threads,))
    disturber.start()
    for t in threads:
        t.join()
    stop.set()
    disturber.join()
    assert sorted(s.values()) == list(range(97))
    # The main thread did no operation: its counters did not move.
    assert rseq.thread_aborts() == aborts_before


@pytest.mark.parametrize("make", STRUCTURES)
def test_churn_moves_elements(make):
    s = make()
    assert s.churn(1000) == 1000


# A size or count out of its range is a ValueError (not an OverflowError:
# nothing overflowed) whose message names the method and the operand.
@pytest.mark.parametrize("call,exc,message", [
    (lambda: rseq.PerCpuList(0), ValueError, r"^PerCpuList: size 0 is out of range"),
    (lambda: rseq.PerCpuList("3"), TypeError, r"^PerCpuList: size"),
    (lambda: rseq.PerCpuBuffer(4, 4), ValueError, r"^PerCpuBuffer: item_size 4 is out"),
    (lambda: rseq.PerCpuBuffer(4, 1 << 20), ValueError, r"^PerCpuBuffer: item_size"),
    (lambda: rseq.PerCpuList(4).churn(-1), ValueError, r"^churn: n must be >= 0"),
    (lambda: rseq.PerCpuList(4).churn(10 ** 30), ValueError, r"^churn: n of 100 bits is out"),
    (lambda: rseq.PerCpuBuffer(4).churn(1.5), TypeError, r"^churn: n"),
])
def test_bad_arguments_raise(call, exc, message):
    with pytest.raises(exc, match=message) as info:
        call()
    assert not isinstance(info.value, OverflowError)


@pytest.mark.parametrize("make", STRUCTURES)
def test_fallback_always_goes_through_cpu_opv(make):
    s = make()
    result = {}

    def worker():
        old = rseq.set_fallback(rseq.FALLBACK_ALWAYS)
        before = rseq.thread_fallbacks()
        try:
            result["moved"] = s.churn(50)
        except rseq.RseqUnavailable as e:
            result["error"] = e
        finally:
            rseq.set_fallback(old)
        result["fallbacks"] = rseq.thread_fallbacks() - before

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    if _kernel_has_cpu_opv():
        assert result.get("moved") == 50
        # A pop and a push per element, each one vector.
        assert result["fallbacks"] == 100
    else:
        assert isinstance(result.get("error"), rseq.RseqUnavailable)
        assert "cpu_opv" in str(result["error"])
        assert result["fallbacks"] == 0
    assert sorted(s.values()) == list(range(97))


# One implementation: PerCpuList and PerCpuBuffer are percpu/percpu.c's
# structures, compiled into rseq._percpu; what C filled, Python reads
# through percpu.h's own layout.

def _percpu_lib():
    from rseq._percpu import ffi, lib
    return ffi, lib


def _list_by_cpu(percpu_list):
    """The node numbers on each CPU's list, read from Python."""
    ffi, _ = _percpu_lib()
    by_cpu = []
    for cpu in range(percpu_list.nr_slots):
        node = ffi.cast("struct percpu_node *", percpu_list.heads[cpu].value)
        numbers = []
        while node != ffi.NULL:
            numbers.append(node.data)
            node = node.next
        by_cpu.append(numbers)
    return by_cpu


def _buffer_by_cpu(percpu_buffer):
    """The item numbers (first word of each record) on each CPU's buffer,
    read from Python."""
    ffi, _ = _percpu_lib()
    by_cpu = []
    for cpu in range(percpu_buffer.nr_slots):
        slot = percpu_buffer.slots[cpu]
        records = ffi.cast("char *", slot.array)
        size = percpu_buffer.record_size
        by_cpu.append([ffi.cast("long *", records + i * size)[0]
                       for i in range(slot.value)])
    return by_cpu


def test_list_is_percpu_c_list_dealt_to_every_cpu():
    ffi, lib = _percpu_lib()
    s = rseq.PerCpuList(97)
    percpu_list = lib.rseqpy_list_percpu(s._c)
    assert percpu_list.nr_slots == lib.percpu_nr_slots() \
        == rseq.info()["nr_slots"]
    assert percpu_list.field == rseq.Field.CPU_ID
    by_cpu = _list_by_cpu(percpu_list)
    nr = percpu_list.nr_slots
    # Dealt out by percpu_list_push_slot: number i on CPU i % nr, the
    # last pushed first.
    assert by_cpu == [list(range(97))[cpu::nr][::-1] for cpu in range(nr)]
    s.churn(500)
    assert sorted(sum(_list_by_cpu(percpu_list), [])) == sorted(s.values()) \
        == list(range(97))


def test_buffer_is_percpu_c_record_buffer():
    ffi, lib = _percpu_lib()
    s = rseq.PerCpuBuffer(97, 40)
    percpu_buffer = lib.rseqpy_buffer_percpu(s._c)
    assert percpu_buffer.record_size == 40
    assert percpu_buffer.capacity == 97        # room for every item
    nr = percpu_buffer.nr_slots
    assert _buffer_by_cpu(percpu_buffer) == \
        [list(range(97))[cpu::nr] for cpu in range(nr)]
    s.churn(500)
    assert sorted(sum(_buffer_by_cpu(percpu_buffer), [])) == \
        sorted(s.values()) == list(range(97))


def _pinned(cpu):
    """Context: the calling thread runs on CPU only."""
    class Pinned:
        def __enter__(self):
            self.allowed = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {cpu})

        def __exit__(self, *exc):
            os.sched_setaffinity(0, self.allowed)
    return Pinned()


def test_percpu_list_push_slot_then_rseq_pop():
    ffi, lib = _percpu_lib()
    percpu_list = ffi.new("struct percpu_list *")
    assert lib.percpu_list_init(percpu_list, rseq.Field.CPU_ID) == 0
    nodes = ffi.new("struct percpu_node[4]")
    cpu = min(os.sched_getaffinity(0))
    try:
        for i in range(4):
            nodes[i].data = 10 + i
            lib.percpu_list_push_slot(percpu_list, cpu, nodes + i)
        assert _list_by_cpu(percpu_list)[cpu] == [13, 12, 11, 10]
        with _pinned(cpu):
            assert lib.percpu_list_pop(percpu_list).data == 13
        assert lib.percpu_list_pop_slot(percpu_list, cpu).data == 12
        assert [lib.percpu_list_pop_slot(percpu_list, cpu).data
                for _ in range(2)] == [11, 10]
        assert lib.percpu_list_pop_slot(percpu_list, cpu) == ffi.NULL
    finally:
        lib.percpu_list_destroy(percpu_list)


def _record(number):
    """A 16-byte record: NUMBER in text, space-padded."""
    ffi, _ = _percpu_lib()
    return ffi.new("char[16]", b"%-16d" % number)


def test_percpu_buffer_push_slot_records_and_pointers():
    ffi, lib = _percpu_lib()
    cpu = min(os.sched_getaffinity(0))
    records = ffi.new("struct percpu_buffer *")
    assert lib.percpu_buffer_init(records, rseq.Field.CPU_ID, 2, 16) == 0
    try:
        assert [lib.percpu_buffer_push_slot(records, cpu, _record(i))
                for i in range(3)] == [0, 0, 1]     # full at capacity 2
        out = ffi.new("char[16]")
        with _pinned(cpu):
            assert lib.percpu_buffer_pop_record(records, out) == 0
        assert ffi.buffer(out)[:] == ffi.buffer(_record(1))[:]
        assert lib.percpu_buffer_pop_slot(records, cpu, out) == 0
        assert ffi.buffer(out)[:] == ffi.buffer(_record(0))[:]
        assert lib.percpu_buffer_pop_slot(records, cpu, out) == 1
    finally:
        lib.percpu_buffer_destroy(records)
    pointers = ffi.new("struct percpu_buffer *")
    assert lib.percpu_buffer_init(pointers, rseq.Field.CPU_ID, 1, 0) == 0
    try:
        target = ffi.new("int *")
        assert lib.percpu_buffer_push_slot(
            pointers, cpu, ffi.new("void *[1]", [target])) == 0
        back = ffi.new("void *[1]")
        assert lib.percpu_buffer_pop_slot(pointers, cpu, back) == 0
        assert back[0] == ffi.cast("void *", target)
    finally:
        lib.percpu_buffer_destroy(pointers)
