"""Why restartable sequences abort, and when cpu_opv runs, from tracefs.

Counters say how often a per-CPU operation aborted or fell back to
cpu_opv, not why.  The kernel's tracepoints do: an abort is an
rseq_ip_fixup event, and the sched_switch, sched_migrate_task and
signal_deliver events before it (since the task's previous rseq_update)
tell whether the thread was preempted, migrated or interrupted by a
signal inside the critical section.

Tracer records those events through tracefs (root only), with markers
naming the phases of an experiment; parse_trace reads the trace back;
critical_sections finds each critical section's descriptor in the
process's ELF objects; attribute gives every abort a cause, a critical
section and a phase, and markdown_table summarises the result.

Only the standard library is used and nothing of the rseq package's
compiled modules, so that the module loads, and its parsing and
attribution work, on any machine, including one that only has the
trace files of an experiment run elsewhere.

The package is split by concern: _parse (the trace's text), _tracefs
(Tracer and tracefs control), _elf and _elffile (the ELF reader),
_sections (critical sections of a process), _attribution and _tables;
every public name is importable from rseq.trace itself, as before the
split.  Its modules import nothing outside this package, so it can also be loaded on its
own (tests/python/test_trace.py does)."""

from ._attribution import (CAUSES, Abort, Attribution, Vector, attribute,
                           kernel_traces_update_first)
from ._elf import ElfObject, read_elf
from ._parse import DEFAULT_EVENTS, Event, lost_in_text, parse_line, \
    parse_trace
from ._sections import Section, SectionMap, critical_sections, \
    operation_name
from ._tables import markdown_table
from ._tracefs import TRACEFS_PATHS, TraceIncomplete, Tracer, \
    TracingUnavailable, find_tracefs

__all__ = [
    "DEFAULT_EVENTS", "TRACEFS_PATHS", "TracingUnavailable",
    "TraceIncomplete", "Tracer", "find_tracefs", "Event", "parse_trace",
    "parse_line", "lost_in_text",
    "Section", "SectionMap", "critical_sections", "operation_name",
    "read_elf", "ElfObject", "CAUSES", "Abort", "Vector", "Attribution",
    "attribute", "kernel_traces_update_first", "markdown_table",
]
