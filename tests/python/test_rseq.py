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


def _kernel_has_cpu_opv():
    try:
        with open("/proc/sys/kernel/cpu_opv_syscall") as f:
            return f.read().strip() == "500"
    except OSError:
        return False


KERNEL_HAS_CPU_OPV = _kernel_has_cpu_opv()


def test_info_under_patched_glibc():
    i = rseq.info()
    assert i["patched_glibc"] is True
    assert i["registered"] is True
    assert i["feature_size"] in (20, 28) or i["feature_size"] >= 28
    if KERNEL_HAS_MM_CID:
        assert i["feature_size"] >= 28 and i["mm_cid"] and i["node_id"]
    assert i["cpu_opv"] is KERNEL_HAS_CPU_OPV
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
    with pytest.raises(OverflowError, match=r"^add: count of 71 bits does not fit"):
        c.add(1 << 70)
    # A repeat count beyond the C side's long: the method and operand
    # named, not cffi's bare "int too big to convert".
    with pytest.raises(ValueError, match=r"^add_many: n of 100 bits is out of range"):
        c.add_many(10 ** 30)
    assert c.sum() == 0


def test_counter_field_is_fixed():
    c = rseq.PerCpuCounter()
    with pytest.raises(AttributeError, match=r"^field: fixed when the counter is created"):
        c.field = "garbage"
    with pytest.raises(AttributeError, match=r"^field"):
        c.field = rseq.Field.MM_CID
    assert c.field == rseq.Field.CPU_ID


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


# cpu_opv vectors.  Validation happens in Python, before any system
# call, so these run everywhere; running a vector needs the patched
# kernel (the VM) and is checked against RseqUnavailable elsewhere.

def test_opv_rejects_bad_vectors():
    buf = bytearray(64)
    v = rseq.OpVector()
    with pytest.raises(TypeError):
        v.add(b"read-only bytes", 1, size=1)          # destination read-only
    with pytest.raises(TypeError):
        v.memcpy(memoryview(bytes(8)), buf, 8)         # read-only memoryview
    with pytest.raises(TypeError):
        v.compare_eq(12345, buf, 8)                    # not a buffer
    with pytest.raises(ValueError):
        v.add(buf, 1, size=3)                          # bad size
    with pytest.raises(ValueError):
        v.add(buf, 1, size=8, offset=60)               # past the end
    with pytest.raises(ValueError):
        v.add(buf, 1, size=4, offset=-4)
    with pytest.raises(ValueError):
        v.lshift(buf, 8, size=1)                       # shift out of range
    with pytest.raises(ValueError):
        v.rshift(buf, -1, size=1)
    with pytest.raises(ValueError):
        v.memcpy(buf, buf, 8, dst_offset=4)            # overlap
    big = bytearray(8192)
    with pytest.raises(ValueError):
        v.memcpy(big, bytearray(8192), 4097)           # beyond one page
    with pytest.raises(ValueError):
        v.compare_eq(buf, bytearray(8), 16)            # b too short
    assert len(v) == 0                                 # nothing was added
    with pytest.raises(ValueError):
        v.run(0)                                       # empty vector


def test_opv_alignment_checked_before_the_kernel():
    import array
    words = array.array("Q", [0, 0])
    v = rseq.OpVector()
    with pytest.raises(ValueError, match="aligned"):
        v.add(words, 1, size=8, offset=4)
    v.add(words, 1, size=8, offset=8)
    assert len(v) == 1


def test_opv_at_most_16_operations():
    buf = bytearray(8 * 17)
    v = rseq.OpVector()
    for i in range(16):
        v.add(buf, 1, size=8, offset=8 * i)
    with pytest.raises(ValueError, match="16"):
        v.add(buf, 1, size=8, offset=128)


def test_opv_bad_cpu_and_types():
    v = rseq.OpVector().add(bytearray(8), 1)
    with pytest.raises(ValueError):
        v.run(-1)
    with pytest.raises(TypeError):
        v.run("0")


def test_opv_buffer_locked_while_referenced():
    buf = bytearray(16)
    v = rseq.OpVector().add(buf, 1)
    with pytest.raises(BufferError):
        buf.extend(b"x" * 4096)                        # would move the memory
    del v


@pytest.mark.skipif(KERNEL_HAS_CPU_OPV, reason="kernel has cpu_opv")
def test_opv_unavailable_without_the_kernel():
    assert rseq.cpu_opv_available() is False
    v = rseq.OpVector().add(bytearray(8), 1)
    with pytest.raises(rseq.RseqUnavailable):
        v.run(rseq.current_cpu())


@pytest.mark.skipif(not KERNEL_HAS_CPU_OPV, reason="kernel has no cpu_opv")
def test_opv_runs_on_the_patched_kernel():
    import array
    cpu = rseq.current_cpu()
    words = array.array("Q", [5, 0, 0xF0])
    expect = array.array("Q", [5])
    v = (rseq.OpVector()
         .compare_eq(words, expect, 8)
         .add(words, 10, size=8, offset=8)
         .bit_xor(words, 0xFF, size=8, offset=16))
    assert v.run(cpu) == 0
    assert list(words) == [5, 10, 0x0F]
    expect[0] = 6
    assert v.run(cpu) == 1                 # the compare stopped it
    assert list(words) == [5, 10, 0x0F]
    with pytest.raises(OSError) as e:
        rseq.OpVector().add(words, 1).run(10000)
    assert e.value.errno == errno.EINVAL


def test_fallback_controls():
    old = rseq.set_fallback(rseq.FALLBACK_NEVER)
    assert old == rseq.FALLBACK_AUTO
    assert rseq.set_fallback(rseq.FALLBACK_AUTO) == rseq.FALLBACK_NEVER
    with pytest.raises(ValueError):
        rseq.set_fallback(7)
    assert rseq.thread_aborts() >= 0
    assert rseq.thread_fallbacks() == 0 or KERNEL_HAS_CPU_OPV


def test_fallback_always_routes_counter_adds_through_cpu_opv():
    c = rseq.PerCpuCounter()
    before = rseq.thread_fallbacks()
    old = rseq.set_fallback(rseq.FALLBACK_ALWAYS)
    try:
        if KERNEL_HAS_CPU_OPV:
            c.add_many(50)
            assert rseq.thread_fallbacks() - before == 50
            assert c.sum() == 50
        else:
            with pytest.raises(rseq.RseqUnavailable, match="cpu_opv"):
                c.add(1)
            assert c.sum() == 0
            assert rseq.thread_fallbacks() == before
    finally:
        rseq.set_fallback(old)
    c.add_many(1000)                       # inline again
    assert c.sum() == 1000 + (50 if KERNEL_HAS_CPU_OPV else 0)


def test_fallback_mode_is_per_thread_for_counters():
    c = rseq.PerCpuCounter()
    old = rseq.set_fallback(rseq.FALLBACK_ALWAYS)
    try:
        # Other threads keep the default mode: their adds stay inline.
        rseq.run_threads(2, c.add_many, 500)
    finally:
        rseq.set_fallback(old)
    assert c.sum() == 1000


def test_opv_release_unlocks_the_buffers():
    buf = bytearray(16)
    v = rseq.OpVector().add(buf, 1)
    v.release()
    buf.extend(b"x" * 4096)                # no longer locked
    assert len(v) == 0
    v.release()                            # idempotent
    with pytest.raises(ValueError, match="released"):
        v.add(bytearray(8), 1)
    with pytest.raises(ValueError, match="released"):
        v.run(0)


def test_opv_context_manager_releases_on_exit():
    buf = bytearray(16)
    with rseq.OpVector() as v:
        v.add(buf, 1).bit_or(buf, 2, offset=8)
        with pytest.raises(BufferError):
            buf.extend(b"x")
        if KERNEL_HAS_CPU_OPV:
            assert v.run(rseq.current_cpu()) == 0
    buf.extend(b"x" * 4096)
    if KERNEL_HAS_CPU_OPV:
        assert buf[0] == 1 and buf[8] == 2


# Constants: enum.IntEnum members with the C ABI's values; the old
# names and the old "cpu_id"/"mm_cid" spellings keep working.

def test_constants_are_int_enums_with_the_abi_values():
    import enum
    assert issubclass(rseq.Field, enum.IntEnum)
    assert issubclass(rseq.Fallback, enum.IntEnum)
    assert rseq.CPU_ID is rseq.Field.CPU_ID and rseq.CPU_ID == 0
    assert rseq.MM_CID is rseq.Field.MM_CID and rseq.MM_CID == 1
    assert (rseq.FALLBACK_AUTO, rseq.FALLBACK_NEVER, rseq.FALLBACK_ALWAYS) \
        == (rseq.Fallback.AUTO, rseq.Fallback.NEVER, rseq.Fallback.ALWAYS) \
        == (0, 1, 2)
    # Fields print as the strings the constants used to be.
    assert str(rseq.CPU_ID) == f"{rseq.CPU_ID}" == "cpu_id"
    assert str(rseq.MM_CID) == "mm_cid"


@pytest.mark.parametrize("spelling", [rseq.Field.CPU_ID, 0, "cpu_id"])
def test_counter_field_accepts_member_int_and_old_string(spelling):
    c = rseq.PerCpuCounter(spelling)
    assert c.field is rseq.Field.CPU_ID
    c.add_many(10)
    assert c.sum() == 10


@pytest.mark.parametrize("bad", ["cpu", "CPU_ID", 2, True, 0.0, None])
def test_counter_field_rejects_other_values(bad):
    with pytest.raises(ValueError, match="field"):
        rseq.AtomicCounter(bad)


def test_set_fallback_takes_and_returns_fallback_members():
    old = rseq.set_fallback(rseq.Fallback.NEVER)
    try:
        assert old is rseq.Fallback.AUTO
        assert rseq.set_fallback(1) is rseq.Fallback.NEVER
    finally:
        rseq.set_fallback(old)
    for bad in ("1", 1.0, True, 3):
        with pytest.raises(ValueError, match="fallback mode"):
            rseq.set_fallback(bad)


def _package_imports():
    """{module: set of sibling modules it imports} for the rseq package's
    own modules (relative imports), read from their source."""
    import ast
    package = os.path.dirname(rseq.__file__)
    graph = {}
    for name in os.listdir(package):
        if not name.endswith(".py"):
            continue
        module = name[:-3]
        with open(os.path.join(package, name)) as f:
            tree = ast.parse(f.read())
        graph[module] = {
            (node.module or node.names[0].name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1}
    return graph


def test_package_modules_import_without_a_cycle():
    graph = _package_imports()
    done, active = set(), []

    def visit(module):
        assert module not in active, f"import cycle: {active + [module]}"
        if module in done or module not in graph:
            return
        active.append(module)
        for imported in graph[module]:
            visit(imported)
        active.pop()
        done.add(module)

    for module in graph:
        visit(module)
    assert "opv" in graph["__init__"] and "_facts" in graph["_errors"]
