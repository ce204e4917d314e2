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


@pytest.mark.parametrize("call,exc", [
    (lambda: rseq.PerCpuList(0), OverflowError),
    (lambda: rseq.PerCpuList("3"), TypeError),
    (lambda: rseq.PerCpuBuffer(4, 4), OverflowError),
    (lambda: rseq.PerCpuBuffer(4, 1 << 20), OverflowError),
    (lambda: rseq.PerCpuList(4).churn(-1), ValueError),
    (lambda: rseq.PerCpuBuffer(4).churn(1.5), TypeError),
])
def test_bad_arguments_raise(call, exc):
    with pytest.raises(exc):
        call()


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
