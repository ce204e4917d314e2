"""Tests of the rseq Python binding, run by `make check` under
out/bin/rseq-python (the patched glibc)."""

import errno
import os
import subprocess
import sys
import threading

import pytest

import rseq

OUT = os.environ.get("RSEQ_OUT", os.path.join(os.path.dirname(__file__),
                                              "..", "..", "out"))
KERNEL_HAS_MM_CID = os.path.exists("/proc/self/auxv") and \
    rseq.info()["kernel_feature_size"] >= 28


def test_info_under_patched_glibc():
    i = rseq.info()
    assert i["patched_glibc"] is True
    assert i["registered"] is True
    assert i["feature_size"] in (20, 28) or i["feature_size"] >= 28
    if KERNEL_HAS_MM_CID:
        assert i["feature_size"] >= 28 and i["mm_cid"] and i["node_id"]
    assert i["cpu_opv"] is False
    assert i["kernel"] == os.uname().release
    assert i["nr_slots"] >= os.cpu_count()


@pytest.mark.parametrize("cpu", sorted(os.sched_getaffinity(0)))
def test_current_cpu_follows_affinity(cpu):
    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})
        assert rseq.current_cpu() == cpu
        node = rseq.current_node()
        path = f"/sys/devices/system/cpu/cpu{cpu}"
        links = [d for d in os.listdir(path)
                 if d.startswith("node") and d[4:].isdigit()]
        assert node == (int(links[0][4:]) if links else 0)
    finally:
        os.sched_setaffinity(0, allowed)


@pytest.mark.skipif(not KERNEL_HAS_MM_CID, reason="kernel has no mm_cid")
def test_mm_cid_below_live_threads():
    seen = []
    barrier = threading.Barrier(4)

    def sample():
        barrier.wait()
        seen.append(rseq.current_mm_cid())
        barrier.wait()

    rseq.run_threads(4, sample)
    # Four workers plus the main thread are alive.
    assert all(0 <= cid < 5 for cid in seen)
    assert rseq.current_mm_cid() >= 0


@pytest.mark.parametrize("field", [rseq.CPU_ID, rseq.MM_CID])
def test_per_cpu_counter_exact_under_threads(field):
    if field == rseq.MM_CID and not KERNEL_HAS_MM_CID:
        pytest.skip("kernel has no mm_cid")
    c = rseq.PerCpuCounter(field)
    rseq.run_threads(8, c.add_many, 50000)
    for _ in range(1000):
        c.add(2)
    assert c.sum() == 8 * 50000 + 2000
    assert len(c.values()) == rseq.info()["nr_slots"]
    assert c.aborts >= 0


@pytest.mark.parametrize("cls", [rseq.AtomicCounter, rseq.LockedCounter])
def test_shared_counters_exact(cls):
    c = cls()
    rseq.run_threads(4, c.add_many, 20000, 3)
    assert c.sum() == 4 * 20000 * 3


def test_bad_input_raises_cleanly():
    with pytest.raises(ValueError, match="field"):
        rseq.PerCpuCounter("cpu")
    c = rseq.PerCpuCounter()
    with pytest.raises(ValueError):
        c.add_many(-1)
    with pytest.raises(TypeError):
        c.add_many("10")
    with pytest.raises(TypeError):
        c.add_many(1.5)
    with pytest.raises(TypeError):
        c.add(None)
    with pytest.raises(OverflowError):
        c.add(1 << 70)
    assert c.sum() == 0


def run_python(code, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    return subprocess.run(["/usr/bin/python3", "-c", code], env=env,
                          capture_output=True, text=True, timeout=60)


def test_imports_under_stock_glibc_with_clear_errors():
    code = ("import rseq, errno\n"
            "i = rseq.info()\n"
            "assert not i['patched_glibc'], i\n"
            "assert rseq.current_cpu() >= 0\n"
            "c = rseq.PerCpuCounter(); c.add_many(1000); assert c.sum() == 1000\n"
            "try:\n"
            "    rseq.current_mm_cid()\n"
            "except rseq.RseqUnavailable as e:\n"
            "    assert e.errno == errno.ENOSYS and 'rseq-python' in str(e)\n"
            "    print('clear error')\n")
    # sys.path[0] of this interpreter holds the package.
    env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = run_python(code, env)
    assert r.returncode == 0, r.stderr
    assert "clear error" in r.stdout


def test_tunable_off_raises_for_per_cpu_counters():
    code = ("import rseq\n"
            "i = rseq.info()\n"
            "assert i['patched_glibc'] and not i['registered'], i\n"
            "assert rseq.current_cpu() >= 0\n"
            "try:\n"
            "    rseq.PerCpuCounter()\n"
            "except rseq.RseqUnavailable as e:\n"
            "    print('unavailable', e.errno)\n")
    env = dict(os.environ, GLIBC_TUNABLES="glibc.pthread.rseq=0")
    launcher = os.path.join(OUT, "bin", "rseq-python")
    r = subprocess.run([launcher, "-c", code], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"unavailable {errno.ENOSYS}" in r.stdout
