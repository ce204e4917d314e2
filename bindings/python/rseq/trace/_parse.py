"""Reading a tracefs `trace` file: its events and the losses it reports."""

import collections
import dataclasses
import re

# The events attribute needs, and Tracer records by default.
DEFAULT_EVENTS = ("rseq/rseq_update", "rseq/rseq_ip_fixup",
                  "cpu_opv/cpu_opv", "sched/sched_switch",
                  "sched/sched_migrate_task", "signal/signal_deliver")


@dataclasses.dataclass(frozen=True)
class Event:
    """One line of the trace: PID is the thread that was running on CPU
    when the event fired (for sched_switch that is the task switched
    out, for sched_migrate_task often a migration thread: the task
    concerned is in FIELDS)."""
    ts: float
    cpu: int
    pid: int
    comm: str
    name: str
    fields: dict


# The ftrace default line: "comm-pid [cpu] flags ts: event: fields".  The
# comm may hold spaces and dashes, so the pid is the last "-digits" before
# the CPU column; the tgid column (record-tgid) and the flags column
# (absent with some trace_options; 4 characters before Linux 5.18, then 5)
# are optional.
_LINE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+"
    r"(?:\(\s*[\d-]+\)\s+)?"
    r"\[(?P<cpu>\d+)\]\s+"
    r"(?:[\w.]{4,5}\s+)?"
    r"(?P<ts>\d+(?:\.\d+)?):\s+"
    r"(?P<name>[\w.]+):\s?(?P<body>.*)$")
_LOST = re.compile(r"^CPU:(\d+) \[LOST (\d+) EVENTS\]")
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z_]\w*)=")
_INT = re.compile(r"-?\d+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")

# Events whose body is key=value pairs; others keep their text as "raw".
_KEY_VALUE_EVENTS = frozenset(e.split("/")[1] for e in DEFAULT_EVENTS)
# trace_marker writes show up as tracing_mark_write (print with some tools).
_MARKER_EVENTS = frozenset(("tracing_mark_write", "print"))
# Printed with %lx, without 0x: "sa_flags=14000000" is hex.
_HEX_FIELDS = {"signal_deliver": frozenset(("sa_handler", "sa_flags"))}
# Never numbers, even when a comm is all digits.
_TEXT_FIELDS = frozenset(("comm", "prev_comm", "next_comm", "prev_state"))


def parse_trace(text):
    """The events of a tracefs `trace` file, in file order (time order
    when the trace clock is global).  Header lines (#...), LOST lines
    (see lost_in_text) and lines of another format are skipped."""
    events = []
    for line in text.splitlines():
        event = parse_line(line)
        if event is not None:
            events.append(event)
    return events


def parse_line(line):
    """One trace line as an Event, or None if it is not an event line."""
    if line.startswith("#"):
        return None
    match = _LINE.match(line)
    if match is None:
        return None
    name, body = match["name"], match["body"].rstrip()
    if name in _MARKER_EVENTS:
        name, fields = "marker", {"text": body}
    else:
        fields = _parse_fields(name, body)
    return Event(float(match["ts"]), int(match["cpu"]), int(match["pid"]),
                 match["comm"], name, fields)


def _parse_fields(name, body):
    """KEY=VALUE pairs as a dict; a value runs to the next key, so that a
    comm with spaces ("prev_comm=Web Content") stays whole."""
    if name not in _KEY_VALUE_EVENTS:
        return {"raw": body}
    body = body.replace(" ==> ", " ")       # sched_switch's prev ==> next
    keys = list(_KEY.finditer(body))
    fields = {}
    for key, following in zip(keys, keys[1:] + [None]):
        end = following.start() if following else len(body)
        fields[key[1]] = _value(name, key[1], body[key.end():end].strip())
    return fields


def _value(event, key, text):
    """TEXT as an int when it is one (decimal, 0x hex, or a field the
    event prints in hex without 0x), else as it is."""
    if key in _TEXT_FIELDS:
        return text
    if key in _HEX_FIELDS.get(event, ()):
        try:
            return int(text, 16)
        except ValueError:
            return text
    if _INT.match(text):
        return int(text)
    if _HEX.match(text):
        return int(text, 16)
    return text


def lost_in_text(text):
    """{cpu: events lost} from the trace's "CPU:N [LOST M EVENTS]" lines:
    the ring buffer overwrote events before they were read."""
    lost = collections.Counter()
    for line in text.splitlines():
        match = _LOST.match(line)
        if match:
            lost[int(match[1])] += int(match[2])
    return dict(lost)
