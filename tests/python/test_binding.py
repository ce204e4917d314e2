"""The binding's error messages, thread helper, counter accessors,
module layout and the cost of current_cpu(), on the host."""

import errno
import importlib.util
import os
import subprocess
import sys
import timeit

import pytest

import rseq

OUT = os.environ.get("RSEQ_OUT", os.path.join(os.path.dirname(__file__),
                                              "..", "..", "out"))
LAUNCHER = os.path.realpath(os.path.join(OUT, "bin", "rseq-python"))
PACKAGE_PARENT = os.path.dirname(os.path.dirname(rseq.__file__))


def _kernel_has_cpu_opv():
    try:
        with open("/proc/sys/kernel/cpu_opv_syscall") as f:
            return f.read().strip() == "500"
    except OSError:
        return False


def _python(code, launcher="/usr/bin/python3", **env_extra):
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, **env_extra)
    return subprocess.run([launcher, "-c", code], env=env,
                          capture_output=True, text=True, timeout=60)


# RseqUnavailable: one accurate message per cause.

REPORT_MM_CID = ("import rseq\n"
                 "try:\n"
                 "    rseq.current_mm_cid()\n"
                 "except rseq.RseqUnavailable as e:\n"
                 "    print(e.errno, e.strerror)\n")


def test_unavailable_under_stock_glibc_names_the_installed_launcher():
    r = _python(REPORT_MM_CID)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{errno.ENOSYS} "), r.stdout
    assert "patched glibc" in r.stdout
    assert LAUNCHER in r.stdout, r.stdout
    assert "Linux >= 6.3" not in r.stdout


def test_unavailable_with_tunable_off_names_the_tunable():
    code = ("import rseq\n"
            "try:\n"
            "    rseq.PerCpuCounter()\n"
            "except rseq.RseqUnavailable as e:\n"
            "    print(e.strerror)\n")
    r = _python(code, LAUNCHER, GLIBC_TUNABLES="glibc.pthread.rseq=0")
    assert r.returncode == 0, r.stderr
    assert "glibc.pthread.rseq=0" in r.stdout, r.stdout
    assert "Linux >= 6.3" not in r.stdout
    assert "rseq-python" not in r.stdout     # already under the launcher


@pytest.mark.skipif(_kernel_has_cpu_opv(), reason="kernel has cpu_opv")
def test_unavailable_cpu_opv_points_at_the_test_vm():
    v = rseq.OpVector().add(bytearray(8), 1)
    with pytest.raises(rseq.RseqUnavailable) as e:
        v.run(rseq.current_cpu())
    message = str(e.value)
    assert "cpu_opv" in message and "run-vm" in message, message
    assert os.uname().release in message
    assert "Linux >= 6.3" not in message
    assert "rseq-python" not in message      # the launcher would not help


@pytest.mark.parametrize("facts,expect,reject", [
    (dict(patched_glibc=False, registered=True, feature_size=32,
          kernel_feature_size=28, tunable_off=False),
     "patched glibc", "6.3"),
    (dict(patched_glibc=True, registered=False, feature_size=0,
          kernel_feature_size=28, tunable_off=True),
     "glibc.pthread.rseq=0", "patched glibc"),
    (dict(patched_glibc=True, registered=False, feature_size=0,
          kernel_feature_size=28, tunable_off=True),
     "glibc.pthread.rseq=0", "covers"),
    (dict(patched_glibc=True, registered=False, feature_size=0,
          kernel_feature_size=28, tunable_off=False),
     "refused", "glibc.pthread.rseq=0"),
    (dict(patched_glibc=True, registered=True, feature_size=20,
          kernel_feature_size=0, tunable_off=False),
     "Linux >= 6.3", "patched glibc"),
])
def test_unavailable_cause_for_mm_cid(facts, expect, reject):
    message = rseq.RseqUnavailable.explain("mm_cid", facts)
    assert expect in message and reject not in message, message


def test_structures_under_stock_glibc_raise_instead_of_crashing():
    # percpu.c's calls into the patched glibc are weak references, NULL
    # here: the module must import, and refuse before calling them.
    code = ("import errno, rseq\n"
            "from rseq._percpu import ffi, lib\n"
            "try:\n"
            "    rseq.PerCpuBuffer(8)\n"
            "except rseq.RseqUnavailable as e:\n"
            "    print('unavailable', 'patched glibc' in str(e))\n"
            "l = lib.rseqpy_list_new(8)\n"
            "print(lib.rseqpy_list_churn(l, 4), ffi.errno == errno.ENOSYS)\n"
            "lib.rseqpy_list_free(l)\n")
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "unavailable True\n-1 True\n", r.stdout


# run_threads propagates the first exception and returns the results.

def test_run_threads_raises_the_first_exception():
    c = rseq.PerCpuCounter()
    with pytest.raises(TypeError, match="count"):
        rseq.run_threads(2, c.add, "x")
    assert c.sum() == 0
    assert rseq.run_threads(3, lambda a, b: a + b, 2, 3) == [5, 5, 5]
    assert "run_threads" in rseq.__all__


def test_run_threads_prints_no_traceback():
    code = ("import rseq\n"
            "try:\n"
            "    rseq.run_threads(2, int, 'x')\n"
            "except ValueError:\n"
            "    print('raised')\n")
    r = _python(code, LAUNCHER)
    assert r.returncode == 0 and r.stdout == "raised\n", r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr


# Counter accessors use the counter's own slot count.

def test_values_have_the_counters_own_slot_count():
    c = rseq.PerCpuCounter()
    c.add_many(100)
    assert c.nr_slots == rseq.info()["nr_slots"]
    assert len(c.values()) == c.nr_slots
    assert c.sum() == 100


def test_sum_costs_less_than_a_sysconf_call():
    c = rseq.PerCpuCounter()
    best = {"sum": [], "sysconf": []}
    for _ in range(5):
        best["sum"].append(timeit.timeit(c.sum, number=2000))
        best["sysconf"].append(timeit.timeit(
            lambda: os.sysconf("SC_NPROCESSORS_CONF"), number=2000))
    assert min(best["sum"]) < min(best["sysconf"]), best


def test_slot_accessor_is_bounds_checked():
    code = ("import errno, rseq\n"
            "from rseq._percpu import ffi, lib\n"
            "c = rseq.PerCpuCounter()\n"
            "out = ffi.new('long[]', c.nr_slots + 4096)\n"
            "assert lib.rseqpy_counter_values(c._c, out, c.nr_slots + 4096) == -1\n"
            "assert ffi.errno == errno.EINVAL\n"
            "print('checked')\n")
    r = _python(code, LAUNCHER)
    assert r.returncode == 0 and "checked" in r.stdout, r.stdout + r.stderr


# Layout: the compiled modules live inside the package.

def test_compiled_module_is_inside_the_package():
    import rseq._percpu
    here = os.path.dirname(rseq.__file__)
    assert os.path.dirname(rseq._percpu.__file__) == here
    assert importlib.util.find_spec("_rseq_percpu_c") is None


# current_cpu() costs no more than os.getpid(), a system call, nor much
# more than _thread.get_ident(), a builtin that reads thread-local state
# without releasing the GIL, as current_cpu() should.

def _best_ns(function, calls=20000, rounds=7):
    return min(timeit.repeat(function, number=calls, repeat=rounds)) \
        * 1e9 / calls


def test_current_cpu_costs_at_most_getpid():
    import _thread
    cpu = _best_ns(rseq.current_cpu)
    getpid = _best_ns(os.getpid)
    get_ident = _best_ns(_thread.get_ident)
    assert cpu <= getpid, (cpu, getpid)
    assert cpu <= 1.5 * get_ident, (cpu, get_ident)


def test_current_cpu_and_node_match_the_cffi_path():
    from rseq._percpu import lib
    os_cpu = os.sched_getaffinity(0)
    try:
        for cpu in sorted(os_cpu):
            os.sched_setaffinity(0, {cpu})
            assert rseq.current_cpu() == cpu == lib.rseqpy_cpu()
            assert rseq.current_node() == lib.rseqpy_node()
    finally:
        os.sched_setaffinity(0, os_cpu)


def test_current_cpu_under_stock_glibc():
    r = _python("import os, rseq\n"
                "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
                "print(rseq.current_cpu() == min(os.sched_getaffinity(0)))\n")
    assert r.returncode == 0 and r.stdout == "True\n", r.stdout + r.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
