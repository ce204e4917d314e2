"""rseq.trace: trace parsing, abort attribution, critical sections from
ELF objects and the tracefs control, on the host.

The rseq.trace package is loaded from its directory, not through the rseq
package, whose __init__ needs the compiled modules: it must work without
them."""

import ctypes
import errno
import importlib.util
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _trace_source():
    """bindings/python/rseq/trace/__init__.py of the tree, else the
    installed package's copy (the test VM has the tests in /tests and the
    package on PYTHONPATH); find_spec of a top-level package does not run
    it."""
    source = os.path.join(HERE, "..", "..", "bindings", "python", "rseq",
                          "trace", "__init__.py")
    if os.path.isfile(source):
        return source
    spec = importlib.util.find_spec("rseq")
    return os.path.join(spec.submodule_search_locations[0], "trace",
                        "__init__.py")


def _load():
    """The package under a name of its own; its modules import each
    other relatively, so they come along."""
    source = _trace_source()
    spec = importlib.util.spec_from_file_location(
        "rseq_trace", source,
        submodule_search_locations=[os.path.dirname(source)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


trace = _load()
# The modules whose internals some tests check or replace.
tracefs = trace._tracefs
sections_impl = trace._sections
Event = trace.Event

EXAMPLE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 7/7   #P:2
#
#                                _-----=> irqs-off/BH-disabled
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          python3-123     [001] d..2.    12.345678: sched_switch: prev_comm=python3 prev_pid=123 prev_prio=120 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120
     migration/1-15      [001] d..5.    12.345700: sched_migrate_task: comm=python3 pid=123 prio=120 orig_cpu=1 dest_cpu=0
          python3-123     [000] .....    12.345800: rseq_ip_fixup: regs_ip=0x7f0000001234 start_ip=0x7f0000001220 post_commit_offset=24 abort_ip=0x7f0000005000
          python3-123     [000] .....    12.345801: rseq_update: cpu_id=0
          python3-124     [001] d..1.    12.345900: signal_deliver: sig=10 errno=0 code=-6 sa_handler=55d0c0a0 sa_flags=14000000
          python3-124     [001] .....    12.346000: cpu_opv: caller_cpu=1 cpu=0 nr_ops=2 result=0 moved=1
          python3-124     [001] .....    12.346100: tracing_mark_write: phase=list
"""


# --------------------------------------------------------------------------
# Parsing

def test_parse_example_lines():
    events = trace.parse_trace(EXAMPLE)
    assert [e.name for e in events] == [
        "sched_switch", "sched_migrate_task", "rseq_ip_fixup",
        "rseq_update", "signal_deliver", "cpu_opv", "marker"]
    switch, migrate, fixup, update, signal, opv, marker = events
    assert (switch.ts, switch.cpu, switch.pid, switch.comm) == \
        (12.345678, 1, 123, "python3")
    assert switch.fields == {
        "prev_comm": "python3", "prev_pid": 123, "prev_prio": 120,
        "prev_state": "R+", "next_comm": "swapper/1", "next_pid": 0,
        "next_prio": 120}
    assert (migrate.pid, migrate.comm) == (15, "migration/1")
    assert migrate.fields == {"comm": "python3", "pid": 123, "prio": 120,
                              "orig_cpu": 1, "dest_cpu": 0}
    assert fixup.cpu == 0
    assert fixup.fields == {"regs_ip": 0x7f0000001234,
                            "start_ip": 0x7f0000001220,
                            "post_commit_offset": 24,
                            "abort_ip": 0x7f0000005000}
    assert update.fields == {"cpu_id": 0}
    # sa_handler and sa_flags are printed in hex without 0x.
    assert signal.fields == {"sig": 10, "errno": 0, "code": -6,
                             "sa_handler": 0x55d0c0a0,
                             "sa_flags": 0x14000000}
    assert opv.fields == {"caller_cpu": 1, "cpu": 0, "nr_ops": 2,
                          "result": 0, "moved": 1}
    assert (marker.pid, marker.ts, marker.fields) == \
        (124, 12.3461, {"text": "phase=list"})


def test_parse_comm_with_dashes_spaces_and_unknown_task():
    text = textwrap.dedent("""\
        kworker/0:1-events-12 [000] d..2.   5.000001: sched_switch: prev_comm=kworker/0:1 prev_pid=12 prev_prio=120 prev_state=I ==> next_comm=Web Content next_pid=555 next_prio=120
                   <...>-77    [002] .....   5.000002: rseq_update: cpu_id=2
         Web Content-555  [003] .....   5.000003: rseq_update: cpu_id=3
                   12345-9    [001] .....   5.000004: sched_migrate_task: comm=12345 pid=9 prio=120 orig_cpu=1 dest_cpu=0
        """)
    a, b, c, d = trace.parse_trace(text)
    assert (a.comm, a.pid, a.cpu) == ("kworker/0:1-events", 12, 0)
    assert a.fields["prev_state"] == "I"
    assert a.fields["next_comm"] == "Web Content"
    assert a.fields["next_pid"] == 555
    assert (b.comm, b.pid, b.cpu, b.fields) == ("<...>", 77, 2,
                                                {"cpu_id": 2})
    assert (c.comm, c.pid) == ("Web Content", 555)
    # A comm of digits stays a string.
    assert (d.comm, d.fields["comm"], d.fields["pid"]) == ("12345", "12345", 9)


def test_parse_flags_column_absent_or_four_wide():
    text = textwrap.dedent("""\
           python3-123     [001]    12.345800: rseq_update: cpu_id=1
           python3-123     [001] d..2    12.345900: rseq_update: cpu_id=1
           python3-123   (  120) [001] .....    12.346000: rseq_update: cpu_id=1
        """)
    events = trace.parse_trace(text)
    assert [(e.pid, e.cpu, e.ts, e.fields) for e in events] == [
        (123, 1, 12.3458, {"cpu_id": 1}), (123, 1, 12.3459, {"cpu_id": 1}),
        (123, 1, 12.346, {"cpu_id": 1})]


def test_parse_skips_headers_and_lost_lines_and_counts_losses():
    text = EXAMPLE + "CPU:1 [LOST 12 EVENTS]\nCPU:0 [LOST 3 EVENTS]\n" \
        "##### CPU 1 buffer started ####\nCPU:1 [LOST 1 EVENTS]\n" \
        "   python3-123     [000] .....    13.0: rseq_update: cpu_id=0\n"
    events = trace.parse_trace(text)
    assert len(events) == 8
    assert events[-1].ts == 13.0
    assert trace.lost_in_text(text) == {1: 13, 0: 3}
    assert trace.lost_in_text(EXAMPLE) == {}


def test_parse_unknown_event_keeps_raw_text_and_marker_with_spaces():
    text = textwrap.dedent("""\
           python3-123     [001] .....    1.000000: sys_enter: NR 334 (7f00, 20, 0, 53053053, 0, 0)
           python3-123     [001] .....    1.000001: tracing_mark_write: hello world x=1
        """)
    unknown, marker = trace.parse_trace(text)
    assert unknown.name == "sys_enter"
    assert unknown.fields == {"raw": "NR 334 (7f00, 20, 0, 53053053, 0, 0)"}
    assert (marker.name, marker.fields) == ("marker",
                                            {"text": "hello world x=1"})


# --------------------------------------------------------------------------
# Attribution

class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        self.now += 0.000001
        return self.now


def _ev(clock, name, line_pid, line_cpu=0, **fields):
    """An event NAME that LINE_PID, running on LINE_CPU, traced."""
    return Event(clock(), line_cpu, line_pid, "t", name, fields)


@pytest.fixture
def make():
    """Builders of hand-written events, in increasing time."""
    clock = _Clock()

    class Make:
        @staticmethod
        def switch(tid, next_pid=0):
            return _ev(clock, "sched_switch", tid, prev_pid=tid,
                       prev_state="R+", next_pid=next_pid)

        @staticmethod
        def switch_in(tid):
            return _ev(clock, "sched_switch", 0, prev_pid=0,
                       prev_state="R", next_pid=tid)

        @staticmethod
        def migrate(tid):
            return _ev(clock, "sched_migrate_task", 15, pid=tid,
                       orig_cpu=1, dest_cpu=0)

        @staticmethod
        def signal(tid):
            return _ev(clock, "signal_deliver", tid, sig=10, errno=0)

        @staticmethod
        def update(tid):
            return _ev(clock, "rseq_update", tid, cpu_id=0)

        @staticmethod
        def fixup(tid, start=0x1000, cpu=0):
            return _ev(clock, "rseq_ip_fixup", tid, cpu, regs_ip=start + 4,
                       start_ip=start, post_commit_offset=24,
                       abort_ip=0x5000)

        @staticmethod
        def opv(tid, result=0, moved=0):
            return _ev(clock, "cpu_opv", tid, caller_cpu=1, cpu=0,
                       nr_ops=2, result=result, moved=moved)

        @staticmethod
        def marker(tid, text):
            return Event(clock(), 0, tid, "t", "marker", {"text": text})
    return Make


def _causes(events, tids=(1,)):
    return [a.cause for a in trace.attribute(events, set(tids)).aborts]


def test_each_cause(make):
    assert _causes([make.switch(1), make.fixup(1)]) == ["preemption"]
    assert _causes([make.migrate(1), make.fixup(1)]) == ["migration"]
    assert _causes([make.signal(1), make.fixup(1)]) == ["signal"]
    assert _causes([make.fixup(1)]) == ["other"]


def test_cause_priorities(make):
    assert _causes([make.switch(1), make.signal(1), make.fixup(1)]) == \
        ["signal"]
    assert _causes([make.signal(1), make.migrate(1), make.switch(1),
                    make.fixup(1)]) == ["signal"]
    assert _causes([make.switch(1), make.migrate(1), make.fixup(1)]) == \
        ["migration"]


def test_window_resets_at_rseq_update_and_after_an_abort(make):
    # A preemption before the thread's last rseq_update explains nothing.
    assert _causes([make.switch(1), make.update(1), make.fixup(1)]) == \
        ["other"]
    assert _causes([make.switch(1), make.fixup(1), make.fixup(1)]) == \
        ["preemption", "other"]
    # Another thread's rseq_update does not reset this thread's window.
    assert _causes([make.switch(1), make.update(2), make.fixup(1)],
                   tids=(1, 2)) == ["preemption"]


def test_other_threads_events_are_ignored(make):
    events = [make.switch(2), make.migrate(2), make.signal(2),
              make.fixup(2), make.opv(2), make.marker(2, "phase=x"),
              make.switch_in(1), make.fixup(1)]
    result = trace.attribute(events, {1})
    assert [(a.tid, a.cause, a.phase) for a in result.aborts] == \
        [(1, "other", None)]
    assert result.vectors == []


def test_abort_fields_and_section_names(make):
    sections = [trace.Section(0x1000, 0x1018, 0x5000, "/lib/libc.so.6",
                              "rseq_percpu_addv", "addv (libc)")]
    events = [make.switch(1), make.fixup(1, 0x1000, cpu=3),
              make.fixup(1, 0x2000)]
    for given in (sections, trace.SectionMap(sections)):
        aborts = trace.attribute(events, {1}, given).aborts
        assert [(a.tid, a.cpu, a.start_ip, a.section_name, a.cause)
                for a in aborts] == [
            (1, 3, 0x1000, "addv (libc)", "preemption"),
            (1, 0, 0x2000, "unknown 0x2000", "other")]
        assert aborts[0].ts == events[1].ts
    assert trace.attribute(events, {1}).aborts[0].section_name == \
        "unknown 0x1000"


def test_phases_from_markers(make):
    events = [make.fixup(1), make.marker(1, "phase=list"), make.fixup(1),
              make.marker(1, "not a phase"), make.opv(1),
              make.marker(2, "phase=other-thread"),
              make.marker(1, "phase=map"), make.fixup(1), make.fixup(2)]
    result = trace.attribute(events, {1, 2})
    assert [(a.tid, a.phase) for a in result.aborts] == \
        [(1, None), (1, "list"), (1, "map"), (2, "other-thread")]
    assert [v.phase for v in result.vectors] == ["list"]
    assert result.aborts_by("phase") == {None: 1, "list": 1, "map": 1,
                                         "other-thread": 1}


def test_vectors_and_per_thread_counts(make):
    events = [make.opv(1, 0, moved=1), make.opv(1, 2), make.opv(1, -22),
              make.switch(1), make.fixup(1), make.opv(2, 0), make.fixup(2),
              make.fixup(2)]
    result = trace.attribute(events, {1, 2, 3})
    assert [(v.tid, v.caller_cpu, v.cpu, v.nr_ops, v.result, v.moved)
            for v in result.vectors] == [
        (1, 1, 0, 2, 0, 1), (1, 1, 0, 2, 2, 0), (1, 1, 0, 2, -22, 0),
        (2, 1, 0, 2, 0, 0)]
    assert result.per_thread() == {
        1: {"aborts": 1, "fallbacks": 3, "completed": 2},
        2: {"aborts": 2, "fallbacks": 1, "completed": 1},
        3: {"aborts": 0, "fallbacks": 0, "completed": 0}}
    assert result.vectors_by("result") == {0: 2, 2: 1, -22: 1}
    assert result.vectors_by(("tid", "moved")) == {(1, 1): 1, (1, 0): 2,
                                                   (2, 0): 1}


def test_aborts_by_keys(make):
    events = [make.switch(1), make.fixup(1), make.signal(2), make.fixup(2),
              make.fixup(2), make.migrate(1), make.fixup(1, 0x2000)]
    result = trace.attribute(events, {1, 2})
    assert result.aborts_by("cause") == {"preemption": 1, "signal": 1,
                                         "other": 1, "migration": 1}
    assert result.aborts_by("tid") == {1: 2, 2: 2}
    assert result.aborts_by(("section", "cause")) == {
        ("unknown 0x1000", "preemption"): 1, ("unknown 0x1000", "signal"): 1,
        ("unknown 0x1000", "other"): 1, ("unknown 0x2000", "migration"): 1}
    with pytest.raises(ValueError, match="unknown key"):
        result.aborts_by("colour")
    with pytest.raises(ValueError, match="unknown key"):
        result.vectors_by(("phase", "section"))


def _abort(section, cause, phase=None, tid=1):
    return trace.Abort(0.0, tid, 0, 0, section, cause, phase)


def _vector(phase, result, moved=0, tid=1):
    return trace.Vector(0.0, tid, 0, 1, 2, result, moved, phase)


def test_markdown_table():
    aborts = [_abort("addv (libc)", "preemption")] * 3 + \
        [_abort("addv (libc)", "signal")] + \
        [_abort("rseqpy_list_push (inline, _percpu.so)", "migration")] * 2 + \
        [_abort("rseqpy_list_push (inline, _percpu.so)", "other")] + \
        [_abort("unknown 0x10", "preemption")] * 5
    vectors = [_vector("list", 0, moved=1), _vector("list", 0),
               _vector("list", 2, moved=1), _vector("list", -22),
               _vector(None, 0), _vector("map", 0)]
    table = trace.markdown_table(trace.Attribution(aborts, vectors, {1}))
    lines = table.splitlines()
    assert "| section | preemption | migration | signal | other | total |" \
        in lines
    rows = [l for l in lines if l.startswith("| ") and "---" not in l]
    assert rows[:5] == [
        "| section | preemption | migration | signal | other | total |",
        "| unknown 0x10 | 5 | 0 | 0 | 0 | 5 |",
        "| addv (libc) | 3 | 0 | 1 | 0 | 4 |",
        "| rseqpy_list_push (inline, _percpu.so) | 0 | 2 | 0 | 1 | 3 |",
        "| total | 8 | 2 | 1 | 1 | 12 |"]
    assert rows[5:] == [
        "| phase | done | compare failed | error | total | moved |",
        "| list | 2 | 1 | 1 | 4 | 2 |",
        "| (none) | 1 | 0 | 0 | 1 | 0 |",
        "| map | 1 | 0 | 0 | 1 | 0 |",
        "| total | 4 | 1 | 1 | 6 | 2 |"]
    assert "| --- | ---: | ---: | ---: | ---: | ---: |" in lines


def test_markdown_table_empty():
    table = trace.markdown_table(trace.Attribution([], [], set()))
    assert "| total | 0 | 0 | 0 | 0 | 0 |" in table.splitlines()
    assert sum(line.startswith("| total |")
               for line in table.splitlines()) == 2


# --------------------------------------------------------------------------
# Critical sections

@pytest.mark.parametrize("symbol, name", [
    ("rseq_percpu_addv", "addv"),
    ("__rseq_percpu_addv_slow", "addv"),
    ("__rseq_percpu_try_addv", "addv"),
    ("rseq_percpu_cmpeqv_trystorev_storev_release",
     "cmpeqv_trystorev_storev_release"),
    ("__rseq_percpu_cmpeqv_trymemcpy_storev_release_slow",
     "cmpeqv_trymemcpy_storev_release"),
    ("rseqpy_list_push", "rseqpy_list_push"),
    ("main", "main"),
])
def test_operation_name(symbol, name):
    assert trace.operation_name(symbol) == name


def test_section_names():
    name = sections_impl._section_name
    assert name("__rseq_percpu_addv_slow", 0x10,
                "/opt/sysroot/lib64/libc.so.6") == "addv (libc)"
    assert name("rseqpy_list_push", 0x10,
                "/opt/rseq/_percpu.cpython-311-x86_64-linux-gnu.so") \
        == "rseqpy_list_push (inline, _percpu)"
    assert name("rseq_percpu_addv", 0x10, "/a/libcs.so") == \
        "addv (inline, libcs)"
    assert name(None, 0x7f0010, "/a/prog") == "0x7f0010 (prog)"


# cs_one is written in assembly, so its offsets are exact: start_ip at +1,
# post_commit_ip at +3, abort_ip at +8; its alias __cs_one_slow must not
# name it (the public name of aliases wins, as for glibc's
# rseq_percpu_current_cpu and __rseq_percpu_current_cpu_slow).  cs_two is
# a C function with the section in inline asm (the compiler may add a
# prologue): start_ip, three nops, post_commit_ip, a 2-byte jmp, the
# signature, abort_ip.  An all-zero padding descriptor sits between.
CS_SOURCE = r"""
__asm__(
    ".pushsection .text\n"
    ".globl cs_one\n"
    ".type cs_one, @function\n"
    ".globl __cs_one_slow\n"
    ".type __cs_one_slow, @function\n"
    "__cs_one_slow:\n"
    "cs_one:\n"
    ".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t.long 0, 0\n"
    "\t" QUADS "\n"
    ".popsection\n"
    "\tnop\n"
    "1:\tnop\n\tnop\n"
    "2:\tret\n"
    "\t.long 0x53053053\n"
    "3:\tret\n"
    ".size cs_one, . - cs_one\n"
    ".size __cs_one_slow, . - cs_one\n"
    ".popsection\n"
    ".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t.zero 32\n.popsection\n");

void cs_two(void)
{
    __asm__ volatile(
        ".pushsection __rseq_cs, \"aw\"\n\t.balign 32\n\t.long 0, 0\n"
        "\t" QUADS "\n"
        ".popsection\n"
        "1:\tnop\n\tnop\n\tnop\n"
        "2:\tjmp 4f\n"
        "\t.long 0x53053053\n"
        "3:\tnop\n"
        "4:\n" ::: "memory");
}
"""
QUADS_64 = '#define QUADS ".quad 1f, (2f - 1f), 3f"\n'
QUADS_32 = '#define QUADS ".long 1f, 0, (2f - 1f), 0, 3f, 0"\n'


def _build(tmp_path, name, quads, *flags):
    if not any(os.access(os.path.join(d, "gcc"), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep) if d):
        pytest.skip("gcc is not installed")
    source = tmp_path / "cs.c"
    source.write_text(quads + CS_SOURCE)
    out = tmp_path / name
    run = subprocess.run(["gcc", *flags, "-shared", "-fPIC", "-O2", "-o",
                          str(out), str(source)], capture_output=True,
                         text=True)
    return out, run


@pytest.fixture(scope="module")
def cs_library(tmp_path_factory):
    path, run = _build(tmp_path_factory.mktemp("cs"), "libcs.so", QUADS_64)
    assert run.returncode == 0, run.stderr
    lib = ctypes.CDLL(str(path))
    return str(path), lib


def _address(lib, name):
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


def _check_sections(sections, path, one, two):
    mine = [s for s in sections
            if os.path.realpath(s.object) == os.path.realpath(path)]
    assert [s.symbol for s in mine] == sorted(
        ["cs_one", "cs_two"], key=lambda n: {"cs_one": one,
                                             "cs_two": two}[n])
    by_symbol = {s.symbol: s for s in mine}
    first = by_symbol["cs_one"]
    assert (first.start, first.post_commit, first.abort) == \
        (one + 1, one + 3, one + 8)
    assert first.name == "cs_one (inline, libcs)"
    second = by_symbol["cs_two"]
    assert two <= second.start < two + 32
    assert second.post_commit == second.start + 3
    assert second.abort == second.start + 3 + 2 + 4
    assert second.name == "cs_two (inline, libcs)"
    return mine


def test_critical_sections_of_a_loaded_library(cs_library):
    path, lib = cs_library
    sections = trace.critical_sections()
    mine = _check_sections(sections, path, _address(lib, "cs_one"),
                           _address(lib, "cs_two"))
    found = trace.SectionMap(sections)
    assert found.find(mine[0].start) == mine[0]
    assert found.find(mine[0].start + 1) is None


def test_critical_sections_of_another_process(cs_library):
    path, _ = cs_library
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""\
            import ctypes, sys
            lib = ctypes.CDLL(sys.argv[1])
            print(*(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value
                    for n in ("cs_one", "cs_two")), flush=True)
            sys.stdin.read()
            """), path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        one, two = map(int, child.stdout.readline().split())
        try:
            sections = trace.critical_sections(child.pid)
        except PermissionError as e:
            pytest.skip(f"cannot read another process's memory here: {e}")
        _check_sections(sections, path, one, two)
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def test_read_elf_32bit(tmp_path):
    path, run = _build(tmp_path, "libcs32.so", QUADS_32, "-m32")
    if run.returncode != 0:
        pytest.skip(f"gcc -m32 cannot build here: {run.stderr.strip()}")
    elf = trace.read_elf(str(path))
    assert elf.bits == 32
    assert elf.rseq_cs is not None and elf.rseq_cs.size == 3 * 32
    # 32-bit x86 uses REL relocations: the file holds link-time addresses.
    with open(path, "rb") as f:
        f.seek(elf.rseq_cs.offset)
        data = f.read(elf.rseq_cs.size)
    descriptors = list(sections_impl._descriptors(data))
    assert len(descriptors) == 2
    symbols = sorted(elf.function_at(d[2]) for d in descriptors)
    assert symbols == ["cs_one", "cs_two"]
    one = next(start for start, _, name in elf.functions if name == "cs_one")
    first = next(d for d in descriptors if d[2] == one + 1)
    assert first[3:] == (2, one + 8)


def test_read_elf_rejects_other_files(tmp_path):
    other = tmp_path / "data"
    other.write_bytes(b"not an ELF file at all" * 4)
    assert trace.read_elf(str(other)) is None
    assert trace.read_elf(sys.executable) is not None


def test_readable_ranges():
    M = sections_impl._Mapping
    maps = [M(0x1000, 0x2000, "r--p", 0, ""), M(0x2000, 0x3000, "rw-p", 0, ""),
            M(0x4000, 0x5000, "r--p", 0, ""), M(0x5000, 0x6000, "---p", 0, "")]
    readable = sections_impl._readable
    assert readable(maps, 0x1ff0, 0x20)
    assert not readable(maps, 0x2ff0, 0x20)      # gap
    assert not readable(maps, 0x4ff0, 0x20)      # not readable
    assert not readable(maps, 0x800, 0x10)       # not mapped


# --------------------------------------------------------------------------
# Tracer on a fake tracefs

def _fake_tracefs(root, events=trace.DEFAULT_EVENTS, cpus=2, overrun=()):
    files = {"trace": "# tracer: nop\nold line\n", "tracing_on": "0",
             "trace_clock": "[local] global counter uptime perf mono\n",
             "buffer_size_kb": "1408\n", "trace_marker": "",
             "events/enable": "X\n"}
    for event in events:
        files[f"events/{event}/enable"] = "0\n"
    for cpu in range(cpus):
        lost = dict(overrun).get(cpu, 0)
        files[f"per_cpu/cpu{cpu}/stats"] = (
            f"entries: 0\noverrun: {lost}\ncommit overrun: 0\n"
            f"bytes: 0\ndropped events: 0\nread events: 0\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _read(root, name):
    return (root / name).read_text()


def test_tracer_start_stop_on_fake_tracefs(tmp_path):
    root = _fake_tracefs(tmp_path)
    tracer = trace.Tracer(buffer_kb=4096, tracefs=str(root))
    # The constructor changes nothing.
    assert _read(root, "tracing_on") == "0"
    tracer.start()
    assert _read(root, "trace") == ""
    assert _read(root, "trace_clock") == "global"
    assert _read(root, "buffer_size_kb") == "4096"
    assert _read(root, "events/enable") == "0"
    assert _read(root, "tracing_on") == "1"
    for event in trace.DEFAULT_EVENTS:
        assert _read(root, f"events/{event}/enable") == "1"
    tracer.mark("phase=list")
    assert _read(root, "trace_marker") == "phase=list"
    with pytest.raises(ValueError):
        tracer.mark("two\nlines")
    (root / "trace").write_text(EXAMPLE)        # what the kernel recorded
    tracer.stop()
    assert _read(root, "tracing_on") == "0"
    for event in trace.DEFAULT_EVENTS:
        assert _read(root, f"events/{event}/enable") == "0"
    assert _read(root, "trace_clock") == "local"
    assert _read(root, "buffer_size_kb") == "1408"
    (root / "trace").write_text("")    # the restore discarded the buffer
    assert tracer.events() == trace.parse_trace(EXAMPLE)
    assert tracer.lost() == {0: 0, 1: 0}
    tracer.check_complete()
    tracer.stop()                       # a second stop does nothing


def test_tracer_context_manager_stops_on_exception(tmp_path):
    root = _fake_tracefs(tmp_path, events=("sched/sched_switch",))
    with pytest.raises(RuntimeError, match="boom"):
        with trace.Tracer(events=("sched/sched_switch",),
                          tracefs=str(root)) as tracer:
            assert _read(root, "tracing_on") == "1"
            raise RuntimeError("boom")
    assert _read(root, "tracing_on") == "0"
    assert _read(root, "events/sched/sched_switch/enable") == "0"
    assert tracer.events() == []


def test_tracer_check_complete(tmp_path):
    root = _fake_tracefs(tmp_path, overrun={1: 5})
    tracer = trace.Tracer(tracefs=str(root))
    with tracer:
        pass
    assert tracer.lost() == {0: 0, 1: 5}
    with pytest.raises(trace.TraceIncomplete, match="CPU 1: 5"):
        tracer.check_complete()

    root = _fake_tracefs(tmp_path / "lost-lines")
    tracer = trace.Tracer(tracefs=str(root))
    with tracer:
        (root / "trace").write_text(EXAMPLE + "CPU:0 [LOST 7 EVENTS]\n")
    with pytest.raises(trace.TraceIncomplete, match="CPU 0: 7"):
        tracer.check_complete()


def test_tracer_names_missing_events(tmp_path):
    events = [e for e in trace.DEFAULT_EVENTS if not e.startswith("cpu_opv")]
    root = _fake_tracefs(tmp_path, events=events)
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer(tracefs=str(root))
    message = str(info.value)
    assert info.value.errno == errno.ENOENT
    assert info.value.missing == ("cpu_opv/cpu_opv",)
    assert "cpu_opv/cpu_opv" in message and "patched" in message
    assert "rseq/" not in message
    # Checked before anything changed.
    assert _read(root, "tracing_on") == "0"
    assert _read(root, "trace_clock").startswith("[local]")
    # Without cpu_opv in the list, the same tracefs is fine.
    trace.Tracer(events=events, tracefs=str(root))


def test_tracer_names_missing_rseq_events(tmp_path):
    root = _fake_tracefs(tmp_path, events=("sched/sched_switch",))
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer(tracefs=str(root))
    message = str(info.value)
    for event in trace.DEFAULT_EVENTS[:3]:
        assert event in message
    assert "CONFIG_RSEQ" in message
    assert set(info.value.missing) == set(trace.DEFAULT_EVENTS) - \
        {"sched/sched_switch"}


def test_tracer_not_permitted(tmp_path, monkeypatch):
    root = _fake_tracefs(tmp_path)
    monkeypatch.setattr(tracefs, "_can_write",
                        lambda path: not path.endswith("tracing_on"))
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer(tracefs=str(root))
    assert info.value.errno == errno.EACCES
    assert "root" in str(info.value)
    assert str(root / "tracing_on") in str(info.value)


def test_tracefs_hidden_from_non_root(tmp_path, monkeypatch):
    hidden = tmp_path / "tracing"
    hidden.mkdir()
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(hidden),))
    monkeypatch.setattr(tracefs, "_is_root", lambda: False)
    monkeypatch.setattr(tracefs, "_can_access", lambda path: False)
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer()
    assert info.value.errno == errno.EACCES
    assert "root" in str(info.value) and str(hidden) in str(info.value)


def test_no_tracefs_not_root(tmp_path, monkeypatch):
    paths = (str(tmp_path / "a"), str(tmp_path / "b"))
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", paths)
    monkeypatch.setattr(tracefs, "_is_root", lambda: False)
    monkeypatch.setattr(tracefs, "_mount_tracefs",
                        lambda path: pytest.fail("mounted without root"))
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer()
    message = str(info.value)
    assert "not mounted" in message and paths[0] in message \
        and paths[1] in message
    assert f"mount -t tracefs nodev {paths[0]}" in message
    assert "root" in message


def test_no_tracefs_root_mounts_it(tmp_path, monkeypatch):
    target = tmp_path / "tracing"
    target.mkdir()
    mounted = []

    def mount(path):
        mounted.append(path)
        _fake_tracefs(target)
        return None

    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(target),
                                                 str(tmp_path / "debug")))
    monkeypatch.setattr(tracefs, "_is_root", lambda: True)
    monkeypatch.setattr(tracefs, "_mount_tracefs", mount)
    assert trace.Tracer().tracefs == str(target)
    assert mounted == [str(target)]


def test_no_tracefs_root_mount_fails(tmp_path, monkeypatch):
    target = tmp_path / "tracing"
    target.mkdir()
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(target),))
    monkeypatch.setattr(tracefs, "_is_root", lambda: True)
    monkeypatch.setattr(tracefs, "_mount_tracefs",
                        lambda path: "mount(2): Operation not permitted")
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer()
    message = str(info.value)
    assert "Operation not permitted" in message
    assert f"mount -t tracefs nodev {target}" in message


def test_no_tracefs_in_kernel(tmp_path, monkeypatch):
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(tmp_path / "none"),))
    monkeypatch.setattr(tracefs, "_is_root", lambda: True)
    monkeypatch.setattr(tracefs, "_mount_tracefs",
                        lambda path: pytest.fail("no mount point"))
    with pytest.raises(trace.TracingUnavailable, match="CONFIG_FTRACE"):
        trace.Tracer()


def test_explicit_path_without_tracefs(tmp_path):
    with pytest.raises(trace.TracingUnavailable, match="no tracefs at"):
        trace.Tracer(tracefs=str(tmp_path))


def test_bad_arguments(tmp_path):
    root = _fake_tracefs(tmp_path)
    with pytest.raises(ValueError, match="SYSTEM/NAME"):
        trace.Tracer(events=("sched_switch",), tracefs=str(root))
    with pytest.raises(ValueError, match="buffer_kb"):
        trace.Tracer(buffer_kb=0, tracefs=str(root))


# --------------------------------------------------------------------------
# The real tracefs

def _host_tracefs():
    """The host's tracefs if mounted and writable here, else why not."""
    for path in trace.TRACEFS_PATHS:
        if os.path.isfile(os.path.join(path, "trace")):
            if os.access(os.path.join(path, "tracing_on"), os.W_OK):
                return path, None
            return None, f"tracefs at {path} is not writable here " \
                         f"(tracing needs root)"
    return None, f"tracefs is not mounted on this host (tried " \
                 f"{', '.join(trace.TRACEFS_PATHS)}); the test does not " \
                 f"mount it"


def test_real_tracefs():
    path, why = _host_tracefs()
    if path is None:
        pytest.skip(why)
    events = [e for e in trace.DEFAULT_EVENTS if os.path.exists(
        os.path.join(path, "events", e, "enable"))]
    if "sched/sched_switch" not in events:
        pytest.skip(f"tracefs at {path} has no sched/sched_switch event")
    tid = threading.get_native_id()
    with trace.Tracer(events=events, buffer_kb=1024, tracefs=path) as t:
        t.phase("host")
        time.sleep(0.05)
    events_seen = t.events()
    markers = [e for e in events_seen if e.name == "marker" and e.pid == tid]
    assert [m.fields["text"] for m in markers] == ["phase=host"]
    assert any(e.name == "sched_switch" and e.fields["prev_pid"] == tid
               for e in events_seen)
    assert all(a.ts <= b.ts for a, b in zip(events_seen, events_seen[1:]))
    result = trace.attribute(events_seen, {tid})
    assert all(a.phase == "host" for a in result.aborts)


def test_update_first_order_of_linux_6_19(make):
    # Since the rseq rewrite of Linux 6.19 a return to user space traces
    # its rseq_update (new IDs) before its rseq_ip_fixup: the causes seen
    # before that update still explain the abort that follows it.
    def causes(events):
        return [a.cause for a in
                trace.attribute(events, {1}, update_first=True).aborts]
    assert causes([make.migrate(1), make.switch(1), make.update(1),
                   make.fixup(1)]) == ["migration"]
    assert causes([make.switch(1), make.fixup(1)]) == ["preemption"]
    # An update closes the window: the next event starts a new one.
    assert causes([make.migrate(1), make.update(1), make.switch(1),
                   make.fixup(1)]) == ["preemption"]
    # An abort consumes its window, closed or not.
    assert causes([make.signal(1), make.update(1), make.fixup(1),
                   make.fixup(1)]) == ["signal", "other"]
    # The old order gives the first case no cause.
    assert [a.cause for a in trace.attribute(
        [make.migrate(1), make.update(1), make.fixup(1)], {1}).aborts] == \
        ["other"]


def test_update_first_from_release():
    assert trace.kernel_traces_update_first("7.3.4")
    assert trace.kernel_traces_update_first("6.19.0-rc1")
    assert not trace.kernel_traces_update_first("6.18.44-fc-v1147")
    assert not trace.kernel_traces_update_first("6.1.192")
    assert not trace.kernel_traces_update_first("garbage")


def test_tracer_unmounts_what_it_mounted_when_a_check_fails(tmp_path, monkeypatch):
    """docs/tracing.md: everything is checked before anything changes.
    A tracefs the constructor mounted (as root) is unmounted again when
    a later check fails, here an event the kernel lacks."""
    target = tmp_path / "tracing"
    target.mkdir()
    calls = []

    def mount(path):
        calls.append(("mount", path))
        _fake_tracefs(target)
        return None

    def unmount(path):
        calls.append(("umount", path))
        return None

    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(target),))
    monkeypatch.setattr(tracefs, "_is_root", lambda: True)
    monkeypatch.setattr(tracefs, "_mount_tracefs", mount)
    monkeypatch.setattr(tracefs, "_unmount_tracefs", unmount)
    with pytest.raises(trace.TracingUnavailable) as info:
        trace.Tracer(events=("nosuch/event",))
    assert info.value.missing == ("nosuch/event",)
    assert calls == [("mount", str(target)), ("umount", str(target))]


def test_tracer_leaves_a_mounted_tracefs_alone_when_a_check_fails(tmp_path, monkeypatch):
    root = _fake_tracefs(tmp_path)
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(root),))
    monkeypatch.setattr(tracefs, "_unmount_tracefs",
                        lambda path: pytest.fail("unmounted a tracefs it did not mount"))
    with pytest.raises(trace.TracingUnavailable):
        trace.Tracer(events=("nosuch/event",))


def test_tracer_real_mount_is_undone(tmp_path, monkeypatch):
    """The same with the real mount(2) and umount(2), as root."""
    if os.geteuid() != 0:
        pytest.skip("mounting tracefs needs root")
    target = tmp_path / "tracing"
    target.mkdir()
    monkeypatch.setattr(tracefs, "TRACEFS_PATHS", (str(target),))
    try:
        with pytest.raises(trace.TracingUnavailable) as info:
            trace.Tracer(events=("nosuch/event",))
    finally:
        still = os.path.ismount(target)
        if still:
            subprocess.run(["umount", str(target)], check=False)
    if "failed" in str(info.value):
        pytest.skip(f"this machine cannot mount tracefs: {info.value}")
    assert info.value.missing == ("nosuch/event",)
    assert not still, "Tracer left tracefs mounted after a failed check"
