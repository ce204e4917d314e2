"""Attribution: a cause, a critical section and a phase for every abort
of the traced threads, and their cpu_opv calls."""

import collections
import dataclasses
import re

from ._sections import SectionMap

# In priority order: the kernel restarts the section before a signal
# handler runs, and a migration implies the task was switched out.
CAUSES = ("signal", "migration", "preemption")
_PHASE = re.compile(r"phase=(.+)")


@dataclasses.dataclass(frozen=True)
class Abort:
    """One aborted critical section (an rseq_ip_fixup event)."""
    ts: float
    tid: int
    cpu: int
    start_ip: int
    section_name: str
    cause: str
    phase: str | None


@dataclasses.dataclass(frozen=True)
class Vector:
    """One cpu_opv call.  RESULT: 0 done, k > 0 the compare at index k
    failed (still a completed fallback for glibc), < 0 -errno."""
    ts: float
    tid: int
    caller_cpu: int
    cpu: int
    nr_ops: int
    result: int
    moved: int
    phase: str | None


_ABORT_KEYS = {"section": "section_name", "cause": "cause", "phase": "phase",
               "tid": "tid", "cpu": "cpu"}
_VECTOR_KEYS = {"phase": "phase", "result": "result", "tid": "tid",
                "moved": "moved", "cpu": "cpu", "caller_cpu": "caller_cpu"}


def _count(records, key, known):
    """Counter of RECORDS by KEY: a name (keys are values) or a tuple of
    names (keys are tuples)."""
    names = (key,) if isinstance(key, str) else tuple(key)
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"unknown key {unknown or key!r}: use "
                         f"{', '.join(known)} or a tuple of them")
    attributes = [known[n] for n in names]

    def value(record):
        values = tuple(getattr(record, a) for a in attributes)
        return values[0] if isinstance(key, str) else values
    return collections.Counter(map(value, records))


@dataclasses.dataclass
class Attribution:
    """The aborts and cpu_opv calls of the traced threads TIDS."""
    aborts: list
    vectors: list
    tids: frozenset = frozenset()

    def aborts_by(self, key):
        """Aborts counted by KEY: "section", "cause", "phase", "tid"
        ("cpu"), or a tuple of them, e.g. ("section", "cause")."""
        return _count(self.aborts, key, _ABORT_KEYS)

    def vectors_by(self, key):
        """cpu_opv calls counted by KEY: "phase", "result", "tid",
        "moved" ("cpu", "caller_cpu"), or a tuple of them."""
        return _count(self.vectors, key, _VECTOR_KEYS)

    def per_thread(self):
        """{tid: {"aborts", "fallbacks", "completed"}} for every traced
        thread: aborts as glibc's rseq_percpu_aborts counts them (one
        per rseq_ip_fixup), fallbacks as its rseq_percpu_fallbacks does
        (every cpu_opv call, whatever its result), and completed, the
        calls that ran their vector (result >= 0)."""
        zero = {"aborts": 0, "fallbacks": 0, "completed": 0}
        stats = {tid: dict(zero) for tid in sorted(self.tids)}
        for abort in self.aborts:
            stats.setdefault(abort.tid, dict(zero))["aborts"] += 1
        for vector in self.vectors:
            counts = stats.setdefault(vector.tid, dict(zero))
            counts["fallbacks"] += 1
            counts["completed"] += vector.result >= 0
        return stats


def kernel_traces_update_first(release):
    """Whether a kernel of RELEASE ("7.3.4") traces a return to user
    space's rseq_update before its rseq_ip_fixup: Linux 6.19 and later
    (the rseq rewrite writes the IDs, then handles the critical
    section); earlier kernels do the reverse.  False if RELEASE does not
    parse."""
    match = re.match(r"(\d+)\.(\d+)", release)
    return bool(match) and (int(match[1]), int(match[2])) >= (6, 19)


class _Walk:
    """The state of attribute's walk: per thread, the causes seen since
    its last return to user space (marked by rseq_update) and its phase.

    Before Linux 6.19 a return traces its rseq_ip_fixup before its
    rseq_update, so an update ends the window at once.  From 6.19 on
    (UPDATE_FIRST) the update comes first: it only closes the window,
    which the fixup of the same return still reads and the thread's next
    event replaces."""

    def __init__(self, tids, sections, update_first):
        self.sections = sections
        self.update_first = update_first
        self.windows = {tid: set() for tid in tids}
        self.closed = set()
        self.phases = {}
        self.aborts = []
        self.vectors = []

    def feed(self, event):
        handler = self._HANDLERS.get(event.name)
        if handler is not None:
            handler(self, event)

    def _saw(self, tid, cause):
        if tid in self.windows:
            if tid in self.closed:
                self.closed.discard(tid)
                self.windows[tid].clear()
            self.windows[tid].add(cause)

    def _switch(self, event):
        self._saw(event.fields.get("prev_pid"), "preemption")

    def _migrate(self, event):
        self._saw(event.fields.get("pid"), "migration")

    def _signal(self, event):
        self._saw(event.pid, "signal")

    def _update(self, event):
        if event.pid not in self.windows:
            return
        if self.update_first:
            self.closed.add(event.pid)
        else:
            self.windows[event.pid].clear()

    def _fixup(self, event):
        window = self.windows.get(event.pid)
        if window is None:
            return
        cause = next((c for c in CAUSES if c in window), "other")
        window.clear()
        self.closed.discard(event.pid)
        start = event.fields.get("start_ip", 0)
        section = self.sections.find(start)
        name = section.name if section else f"unknown {start:#x}"
        self.aborts.append(Abort(event.ts, event.pid, event.cpu, start,
                                 name, cause, self.phases.get(event.pid)))

    def _cpu_opv(self, event):
        if event.pid not in self.windows:
            return
        f = event.fields
        self.vectors.append(Vector(
            event.ts, event.pid, f.get("caller_cpu"), f.get("cpu"),
            f.get("nr_ops"), f.get("result"), f.get("moved"),
            self.phases.get(event.pid)))

    def _marker(self, event):
        match = _PHASE.fullmatch(event.fields.get("text", "").strip())
        if match and event.pid in self.windows:
            self.phases[event.pid] = match[1]

    _HANDLERS = {"sched_switch": _switch, "sched_migrate_task": _migrate,
                 "signal_deliver": _signal, "rseq_update": _update,
                 "rseq_ip_fixup": _fixup, "cpu_opv": _cpu_opv,
                 "marker": _marker}


def attribute(events, tids, sections=None, update_first=False):
    """Give each abort of the threads TIDS in EVENTS (time-ordered) a
    cause (CAUSES, else "other": e.g. a resume for another reason with a
    stale event bit), a critical section (from SECTIONS, a SectionMap
    or a list of Section) and the thread's phase; collect their cpu_opv
    calls.  UPDATE_FIRST: the trace comes from a kernel that traces
    rseq_update before rseq_ip_fixup (kernel_traces_update_first)."""
    tids = frozenset(tids)
    if not isinstance(sections, SectionMap):
        sections = SectionMap(sections or ())
    walk = _Walk(tids, sections, update_first)
    for event in events:
        walk.feed(event)
    return Attribution(walk.aborts, walk.vectors, tids)
