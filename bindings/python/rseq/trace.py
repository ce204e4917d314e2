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
trace files of an experiment run elsewhere."""

import bisect
import collections
import ctypes
import dataclasses
import errno
import os
import re
import stat
import struct
import subprocess

__all__ = [
    "DEFAULT_EVENTS", "TRACEFS_PATHS", "TracingUnavailable",
    "TraceIncomplete", "Tracer", "find_tracefs", "Event", "parse_trace",
    "parse_line", "lost_in_text",
    "Section", "SectionMap", "critical_sections", "operation_name",
    "read_elf", "ElfObject", "CAUSES", "Abort", "Vector", "Attribution",
    "attribute", "markdown_table",
]

DEFAULT_EVENTS = ("rseq/rseq_update", "rseq/rseq_ip_fixup",
                  "cpu_opv/cpu_opv", "sched/sched_switch",
                  "sched/sched_migrate_task", "signal/signal_deliver")

# Where tracefs is looked for, in order; the first is where it is mounted.
TRACEFS_PATHS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")

# The files Tracer writes besides the events' enable files.
_CONTROL_FILES = ("trace", "tracing_on", "trace_clock", "buffer_size_kb",
                  "trace_marker", "events/enable")


# --------------------------------------------------------------------------
# Parsing the trace

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


# --------------------------------------------------------------------------
# Tracefs control

class TracingUnavailable(OSError):
    """Tracing cannot run here.  The message says what is missing
    (tracefs, permission, events) and what to do; MISSING names the
    events the kernel lacks.  Raised before anything is changed."""

    def __init__(self, code, message, missing=()):
        super().__init__(code, message)
        self.missing = tuple(missing)


class TraceIncomplete(RuntimeError):
    """The ring buffer lost events: an abort's cause may be among them,
    so an attribution of this trace would be wrong."""


def _is_root():
    return os.geteuid() == 0


def _can_access(path):
    """Whether PATH (a directory) can be listed: tracefs is mode 0700."""
    return os.access(path, os.R_OK | os.X_OK)


def _can_write(path):
    return os.access(path, os.W_OK)


def _mount_command(path):
    return f"mount -t tracefs nodev {path}"


def _has_trace(path):
    return os.path.isfile(os.path.join(path, "trace"))


def find_tracefs(tracefs=None):
    """The tracefs directory: TRACEFS, else the first of TRACEFS_PATHS
    that has a trace file; as root, mount tracefs if none has one."""
    if tracefs is not None:
        return _explicit_tracefs(tracefs)
    for path in TRACEFS_PATHS:
        if _has_trace(path):
            return path
    hidden = [p for p in TRACEFS_PATHS
              if os.path.isdir(p) and not _can_access(p)]
    if hidden and not _is_root():
        raise _not_permitted(hidden[0])
    if _is_root():
        return _mount(TRACEFS_PATHS[0])
    tried = ", ".join(TRACEFS_PATHS)
    raise TracingUnavailable(
        errno.ENOENT, f"tracefs is not mounted (tried {tried}) and tracing "
        f"needs root: as root, mount it with "
        f"`{_mount_command(TRACEFS_PATHS[0])}` and trace as root")


def _explicit_tracefs(path):
    if _has_trace(path):
        return path
    if os.path.isdir(path) and not _can_access(path):
        raise _not_permitted(path)
    raise TracingUnavailable(
        errno.ENOENT, f"no tracefs at {path} (no {path}/trace file): "
        f"mount one with `{_mount_command(path)}` as root")


def _not_permitted(path):
    return TracingUnavailable(
        errno.EACCES, f"tracing not permitted: it needs root (or write "
        f"access to {path}): run as root, e.g. with sudo")


def _mount(path):
    """Mount tracefs at PATH (we are root) and return PATH."""
    tried = ", ".join(TRACEFS_PATHS)
    if not os.path.isdir(path):
        raise TracingUnavailable(
            errno.ENOENT, f"tracefs is not mounted (tried {tried}) and "
            f"this kernel has no {path} to mount it on: it was built "
            f"without tracing (CONFIG_FTRACE)")
    error = _mount_tracefs(path)
    if error is None and _has_trace(path):
        return path
    raise TracingUnavailable(
        errno.ENOENT, f"tracefs is not mounted (tried {tried}) and "
        f"`{_mount_command(path)}` failed: {error or 'no trace file'}; "
        f"mount it outside (a container needs CAP_SYS_ADMIN or the "
        f"host's tracefs bind-mounted)")


def _mount_tracefs(path):
    """mount(2) through libc, else the mount command; None on success,
    else why it failed."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
    if libc.mount(b"nodev", os.fsencode(path), b"tracefs", 0, None) == 0:
        return None
    reason = f"mount(2): {os.strerror(ctypes.get_errno())}"
    try:
        run = subprocess.run(["mount", "-t", "tracefs", "nodev", path],
                             capture_output=True, text=True)
    except OSError as e:
        return f"{reason}; mount command: {e.strerror}"
    if run.returncode == 0:
        return None
    return f"{reason}; mount command: {run.stderr.strip() or run.returncode}"


def _split_event(event):
    system, sep, name = event.partition("/")
    if not (system and sep and name) or "/" in name:
        raise ValueError(f"event {event!r} is not SYSTEM/NAME "
                         f"(e.g. 'sched/sched_switch')")
    return system, name


def _enable_file(event):
    system, name = _split_event(event)
    return f"events/{system}/{name}/enable"


def _event_hint(event):
    """What a kernel needs to have EVENT."""
    system = event.split("/")[0]
    if system == "cpu_opv":
        return "this project's event: only its patched test kernel " \
               "(kernel-patches/, booted by build-scripts/run-vm) has it"
    if system == "rseq":
        return "needs a kernel with CONFIG_RSEQ and event tracing " \
               "(CONFIG_FTRACE, CONFIG_EVENT_TRACING)"
    return "needs a kernel with event tracing (CONFIG_FTRACE, " \
           "CONFIG_EVENT_TRACING)"


def _check_control_files(root):
    missing = [f for f in _CONTROL_FILES
               if not os.path.exists(os.path.join(root, f))]
    if missing:
        raise TracingUnavailable(
            errno.ENOENT, f"{root} is not a usable tracefs: it has no "
            f"{', '.join(missing)}")


def _check_events(root, events):
    missing = [e for e in events
               if not os.path.exists(os.path.join(root, _enable_file(e)))]
    if missing:
        what = "; ".join(f"{e} ({_event_hint(e)})" for e in missing)
        raise TracingUnavailable(
            errno.ENOENT, f"the kernel lacks trace events: {what}; trace "
            f"without them with Tracer(events=...) or use a kernel that "
            f"has them", missing)


def _check_writable(root, events):
    files = list(_CONTROL_FILES) + [_enable_file(e) for e in events]
    for f in files:
        path = os.path.join(root, f)
        if not _can_write(path):
            raise _not_permitted(path)


def _selected_clock(text):
    """The clock in brackets of trace_clock ("[local] global ...")."""
    match = re.search(r"\[(\S+)\]", text)
    return match[1] if match else None


def _buffer_kb(text):
    """buffer_size_kb's value: "1408", or "7 (expanded: 1408)" before the
    buffer was first used; None when the CPUs differ ("X")."""
    match = re.search(r"expanded:\s*(\d+)", text) or re.match(r"\s*(\d+)",
                                                              text)
    return int(match[1]) if match else None


def _lost_in_stats(text):
    """Events a CPU's ring buffer lost, from its per_cpu/cpuN/stats:
    overwritten (overrun) or, without overwrite mode, dropped."""
    lost = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("overrun", "dropped events"):
            lost += int(value.split()[0])
    return lost


class Tracer:
    """Records EVENTS through tracefs while started, as a context manager
    (`with Tracer() as t:`) or with start() and stop().

    Everything the tracer needs (tracefs, permission, every event) is
    checked in the constructor, before anything is changed, and a
    missing piece raises TracingUnavailable saying what to do.  Starting
    sets the global trace clock (per-CPU local clocks are not ordered
    across CPUs, and the attribution needs a cross-CPU order), sizes the
    per-CPU buffers to BUFFER_KB, clears the trace, disables every event
    and enables EVENTS.  Stopping disables them, keeps a copy of the
    trace and of the per-CPU loss counts, and restores the previous
    clock and buffer size (which discards the kernel's buffer: that is
    why the copy is taken first)."""

    def __init__(self, events=DEFAULT_EVENTS, buffer_kb=8192, tracefs=None):
        self.event_names = tuple(events)
        for event in self.event_names:
            _split_event(event)
        if isinstance(buffer_kb, bool) or not isinstance(buffer_kb, int) \
                or buffer_kb <= 0:
            raise ValueError(f"buffer_kb must be a positive int, not "
                             f"{buffer_kb!r}")
        self.buffer_kb = buffer_kb
        self.tracefs = find_tracefs(tracefs)
        _check_control_files(self.tracefs)
        _check_events(self.tracefs, self.event_names)
        _check_writable(self.tracefs, self.event_names)
        self._running = False
        self._saved = {}
        self._text = None
        self._lost = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _path(self, name):
        return os.path.join(self.tracefs, name)

    def _read(self, name):
        with open(self._path(name)) as f:
            return f.read()

    def _write(self, name, value):
        """One write(2), as tracefs files expect."""
        fd = os.open(self._path(name), os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, str(value).encode())
        finally:
            os.close(fd)

    def _clear(self):
        """Opening `trace` with O_TRUNC empties the ring buffer."""
        os.close(os.open(self._path("trace"), os.O_WRONLY | os.O_TRUNC))

    def start(self):
        """Clear the trace and start recording."""
        self._saved = {"trace_clock": _selected_clock(self._read(
                           "trace_clock")),
                       "buffer_size_kb": _buffer_kb(self._read(
                           "buffer_size_kb"))}
        self._text = self._lost = None
        self._running = True
        try:
            self._write("tracing_on", 0)
            self._write("trace_clock", "global")
            self._write("buffer_size_kb", self.buffer_kb)
            self._clear()
            self._write("events/enable", 0)
            for event in self.event_names:
                self._write(_enable_file(event), 1)
            self._write("tracing_on", 1)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Stop recording, keep the trace, restore the clock and buffer
        size; does nothing when not started."""
        if not self._running:
            return
        self._running = False
        try:
            self._write("tracing_on", 0)
            for event in self.event_names:
                self._write(_enable_file(event), 0)
            self._text = self._read("trace")
            self._lost = self._read_lost()
        finally:
            self._restore()

    def _restore(self):
        clock = self._saved.get("trace_clock")
        if clock and clock != "global":
            self._write("trace_clock", clock)
        size = self._saved.get("buffer_size_kb")
        if size and size != self.buffer_kb:
            self._write("buffer_size_kb", size)

    def mark(self, text):
        """Write TEXT into the trace as a marker event from this thread
        ("phase=NAME" sets the thread's phase for attribute)."""
        if "\n" in text:
            raise ValueError("mark: a marker is one line")
        self._write("trace_marker", text)

    def phase(self, name):
        """Mark the start of phase NAME for the calling thread."""
        self.mark(f"phase={name}")

    def text(self):
        """The trace's text: the copy taken by stop(), else the live one."""
        return self._text if self._text is not None else self._read("trace")

    def events(self):
        """The recorded events, in time order (call after stop)."""
        return parse_trace(self.text())

    def lost(self):
        """{cpu: events the ring buffer lost (overrun + dropped)}."""
        return self._lost if self._lost is not None else self._read_lost()

    def _read_lost(self):
        per_cpu = self._path("per_cpu")
        lost = {}
        if not os.path.isdir(per_cpu):
            return lost
        for entry in os.listdir(per_cpu):
            if entry.startswith("cpu") and entry[3:].isdigit():
                stats = os.path.join(per_cpu, entry, "stats")
                with open(stats) as f:
                    lost[int(entry[3:])] = _lost_in_stats(f.read())
        return dict(sorted(lost.items()))

    def check_complete(self):
        """Raise TraceIncomplete if the ring buffer lost events (by its
        per-CPU counts or the trace's LOST lines, which report the same
        losses: the larger count is shown)."""
        lost = {c: n for c, n in self.lost().items() if n}
        for cpu, n in lost_in_text(self.text()).items():
            lost[cpu] = max(n, lost.get(cpu, 0))
        if lost:
            where = ", ".join(f"CPU {cpu}: {n}"
                              for cpu, n in sorted(lost.items()))
            raise TraceIncomplete(
                f"the trace lost events ({where}), so aborts may lack "
                f"their cause: use a bigger buffer (buffer_kb is "
                f"{self.buffer_kb}), fewer events or a shorter run")


# --------------------------------------------------------------------------
# ELF objects and their critical sections

_SHF_ALLOC = 0x2
_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_PT_LOAD = 1
_STT_FUNC = 2
_STB_LOCAL = 0
_RSEQ_CS = struct.Struct("<IIQQQ")      # the same for 32- and 64-bit


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Struct formats of one ELF class and where the fields we use sit in
    the unpacked tuples: (type, offset, vaddr) of a program header and
    (name, info, shndx, value, size) of a symbol."""
    ehdr: str
    shdr: str
    phdr: str
    phdr_fields: tuple
    sym: str
    sym_fields: tuple


_LAYOUTS = {
    1: _Layout("<HHIIIIIHHHHHH", "<IIIIIIIIII", "<IIIIIIII", (0, 1, 2),
               "<IIIBBH", (0, 3, 5, 1, 2)),
    2: _Layout("<HHIQQQIHHHHHH", "<IIQQQQIIQQ", "<IIQQQQQQ", (0, 2, 3),
               "<IBBHQQ", (0, 1, 3, 4, 5)),
}
_Shdr = collections.namedtuple(
    "_Shdr", "name type flags addr offset size link info addralign entsize")


@dataclasses.dataclass(frozen=True)
class ElfObject:
    """What critical_sections needs from an ELF file: its __rseq_cs
    section (None without one), the first PT_LOAD's (vaddr, offset) and
    its functions as sorted (start, end, name) link-time ranges."""
    path: str
    bits: int
    rseq_cs: _Shdr | None
    first_load: tuple | None
    functions: tuple

    def function_at(self, address):
        """The function whose link-time range holds ADDRESS, or None."""
        index = bisect.bisect_right(self.functions, (address, float("inf")))
        if index == 0:
            return None
        start, end, name = self.functions[index - 1]
        return name if start <= address < end else None


def _read_at(f, offset, size):
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ValueError(f"{f.name}: truncated ELF file")
    return data


def _cstring(table, offset):
    return table[offset:table.index(b"\0", offset)].decode(errors="replace")


def read_elf(path):
    """The ElfObject of PATH, or None when it is not a little-endian ELF
    file.  Symbols are only read when the object has __rseq_cs."""
    with open(path, "rb") as f:
        ident = f.read(16)
        if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[5] != 1 \
                or ident[4] not in _LAYOUTS:
            return None
        layout = _LAYOUTS[ident[4]]
        header = struct.unpack(layout.ehdr, _read_at(
            f, 16, struct.calcsize(layout.ehdr)))
        phoff, shoff = header[4], header[5]
        phentsize, phnum, shentsize, shnum, shstrndx = header[8:13]
        sections = [_Shdr(*struct.unpack(layout.shdr, _read_at(
            f, shoff + i * shentsize, struct.calcsize(layout.shdr))))
            for i in range(shnum)]
        rseq_cs = _find_section(f, sections, shstrndx, "__rseq_cs")
        loads = [_phdr(f, layout, phoff + i * phentsize)
                 for i in range(phnum)]
        loads = [(vaddr, offset) for kind, offset, vaddr in loads
                 if kind == _PT_LOAD]
        functions = _functions(f, layout, sections) if rseq_cs else ()
    return ElfObject(path, 32 if ident[4] == 1 else 64, rseq_cs,
                     loads[0] if loads else None, functions)


def _find_section(f, sections, shstrndx, name):
    if not sections or shstrndx >= len(sections):
        return None
    names = _read_at(f, sections[shstrndx].offset, sections[shstrndx].size)
    for section in sections:
        if _cstring(names, section.name) == name:
            return section
    return None


def _phdr(f, layout, offset):
    values = struct.unpack(layout.phdr, _read_at(
        f, offset, struct.calcsize(layout.phdr)))
    return tuple(values[i] for i in layout.phdr_fields)


def _functions(f, layout, sections):
    """Sorted (start, end, name) of the defined, sized STT_FUNC symbols of
    .symtab, else .dynsym; of aliases at one address, the public name
    (rseq_percpu_current_cpu over __rseq_percpu_current_cpu_slow)."""
    table = next((s for s in sections if s.type == _SHT_SYMTAB), None) or \
        next((s for s in sections if s.type == _SHT_DYNSYM), None)
    if table is None:
        return ()
    strings = sections[table.link]
    names = _read_at(f, strings.offset, strings.size)
    best = {}
    for raw in struct.iter_unpack(layout.sym, _read_at(
            f, table.offset, table.size - table.size
            % struct.calcsize(layout.sym))):
        name, info, shndx, value, size = (raw[i] for i in layout.sym_fields)
        if info & 0xf != _STT_FUNC or size == 0 or shndx == 0:
            continue
        name = _cstring(names, name)
        rank = (info >> 4 == _STB_LOCAL, name.startswith("_"), len(name),
                name)
        if value not in best or rank < best[value][0]:
            best[value] = (rank, value + size, name)
    return tuple(sorted((start, end, name)
                        for start, (_, end, name) in best.items()))


_PERCPU_PREFIXES = ("__rseq_percpu_try_", "__rseq_percpu_",
                    "rseq_percpu_try_", "rseq_percpu_")


def operation_name(symbol):
    """The per-CPU operation a glibc symbol implements: rseq_percpu_addv,
    __rseq_percpu_addv_slow and __rseq_percpu_try_addv are all "addv";
    other symbols are returned as they are."""
    for prefix in _PERCPU_PREFIXES:
        if symbol.startswith(prefix):
            name = symbol[len(prefix):]
            return name[:-len("_slow")] if name.endswith("_slow") else name
    return symbol


def _section_name(symbol, start, path):
    """"addv (libc)", "addv_many (inline, _percpu)", or the start
    address when no function contains it.  The object's name stops at
    its first dot: "_percpu.cpython-311-x86_64-linux-gnu.so" says
    nothing more than "_percpu" in a table."""
    base = os.path.basename(path)
    if symbol is None:
        return f"{start:#x} ({base})"
    if base.startswith("libc.so"):
        return f"{operation_name(symbol)} (libc)"
    return f"{operation_name(symbol)} (inline, {base.split('.')[0]})"


@dataclasses.dataclass(frozen=True)
class Section:
    """One critical section at its run-time addresses."""
    start: int
    post_commit: int
    abort: int
    object: str
    symbol: str | None
    name: str


class SectionMap:
    """Critical sections by start address: rseq_ip_fixup reports the
    descriptor's start_ip."""

    def __init__(self, sections=()):
        self._by_start = {s.start: s for s in sections}

    def find(self, start_ip):
        """The section starting at START_IP, or None."""
        return self._by_start.get(start_ip)

    def __iter__(self):
        return iter(self._by_start.values())

    def __len__(self):
        return len(self._by_start)


_Mapping = collections.namedtuple("_Mapping", "start end perms offset path")


def _read_maps(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(a, 16) for a in parts[0].split("-"))
            path = parts[5].rstrip("\n") if len(parts) > 5 else ""
            yield _Mapping(start, end, parts[1], int(parts[2], 16), path)


def _object_loads(maps):
    """(path, mapping) for each load of each mapped regular file: its
    mapping at the lowest file offset (usually 0)."""
    by_path = {}
    for mapping in maps:
        if mapping.path.startswith("/") \
                and not mapping.path.endswith(" (deleted)"):
            by_path.setdefault(mapping.path, []).append(mapping)
    for path, mappings in by_path.items():
        lowest = min(m.offset for m in mappings)
        for mapping in mappings:
            if mapping.offset == lowest:
                yield path, mapping


def _page_down(value, page):
    return value - value % page


def _load_bias(elf, mapping):
    """Run-time minus link-time addresses: the mapping of file offset
    OFFSET starts at the page of the first PT_LOAD's vaddr."""
    page = os.sysconf("SC_PAGE_SIZE")
    vaddr, offset = elf.first_load
    return mapping.start - (_page_down(vaddr, page)
                            - _page_down(offset, page) + mapping.offset)


def _readable(maps, address, size):
    """Whether ADDRESS..ADDRESS+SIZE lies in readable mappings: reading
    anything else through ctypes would crash the interpreter."""
    end = address + size
    for mapping in sorted(maps):
        if mapping.start <= address < mapping.end:
            if "r" not in mapping.perms:
                return False
            address = mapping.end
            if address >= end:
                return True
    return False


def _read_memory(pid, address, size, maps):
    """SIZE bytes at ADDRESS of process PID, or None if not mapped."""
    if not _readable(maps, address, size):
        return None
    if pid == "self":
        return ctypes.string_at(address, size)
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.seek(address)
            return f.read(size)
    except OSError:
        return None


def _descriptors(data):
    """(version, flags, start_ip, post_commit_offset, abort_ip) of each
    descriptor in DATA, minus the all-zero padding."""
    for offset in range(0, len(data) - _RSEQ_CS.size + 1, _RSEQ_CS.size):
        chunk = data[offset:offset + _RSEQ_CS.size]
        if any(chunk):
            yield _RSEQ_CS.unpack(chunk)


def _regular_elf(path):
    """PATH's ElfObject, or None for devices, unreadable or non-ELF files
    (a mapped device must not be read)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        return read_elf(path)
    except (OSError, ValueError, IndexError, struct.error):
        return None


def _object_sections(pid, path, mapping, maps, elf):
    if elf is None or elf.rseq_cs is None or elf.first_load is None \
            or not elf.rseq_cs.flags & _SHF_ALLOC:
        return []
    bias = _load_bias(elf, mapping)
    data = _read_memory(pid, bias + elf.rseq_cs.addr, elf.rseq_cs.size,
                        maps)
    sections = []
    for _, _, start, post_commit, abort in _descriptors(data or b""):
        symbol = elf.function_at(start - bias)
        sections.append(Section(start, start + post_commit, abort, path,
                                symbol, _section_name(symbol, start, path)))
    return sections


def critical_sections(pid="self"):
    """The critical sections of every ELF object process PID has mapped,
    sorted by start.  The descriptors are read from the process's memory
    (this process's directly, another's through /proc/PID/mem), because
    in a shared object their addresses are relocated at load time."""
    maps = list(_read_maps(pid))
    elves = {}
    found = {}
    for path, mapping in _object_loads(maps):
        if path not in elves:
            elves[path] = _regular_elf(path)
        for section in _object_sections(pid, path, mapping, maps,
                                        elves[path]):
            found[section.start] = section
    return [found[start] for start in sorted(found)]


# --------------------------------------------------------------------------
# Attribution

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


class _Walk:
    """The state of attribute's walk: per thread, the causes seen since
    its last rseq_update (the kernel traces a return to user space's
    rseq_ip_fixup before its rseq_update, so only events after the
    previous rseq_update can explain an abort) and its phase."""

    def __init__(self, tids, sections):
        self.sections = sections
        self.windows = {tid: set() for tid in tids}
        self.phases = {}
        self.aborts = []
        self.vectors = []

    def feed(self, event):
        handler = self._HANDLERS.get(event.name)
        if handler is not None:
            handler(self, event)

    def _saw(self, tid, cause):
        if tid in self.windows:
            self.windows[tid].add(cause)

    def _switch(self, event):
        self._saw(event.fields.get("prev_pid"), "preemption")

    def _migrate(self, event):
        self._saw(event.fields.get("pid"), "migration")

    def _signal(self, event):
        self._saw(event.pid, "signal")

    def _update(self, event):
        if event.pid in self.windows:
            self.windows[event.pid].clear()

    def _fixup(self, event):
        window = self.windows.get(event.pid)
        if window is None:
            return
        cause = next((c for c in CAUSES if c in window), "other")
        window.clear()
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


def attribute(events, tids, sections=None):
    """Give each abort of the threads TIDS in EVENTS (time-ordered) a
    cause (CAUSES, else "other": e.g. a resume for another reason with a
    stale event bit), a critical section (from SECTIONS, a SectionMap
    or a list of Section) and the thread's phase; collect their cpu_opv
    calls."""
    tids = frozenset(tids)
    if not isinstance(sections, SectionMap):
        sections = SectionMap(sections or ())
    walk = _Walk(tids, sections)
    for event in events:
        walk.feed(event)
    return Attribution(walk.aborts, walk.vectors, tids)


# --------------------------------------------------------------------------
# Tables

_CAUSE_COLUMNS = ("preemption", "migration", "signal", "other")
_RESULT_COLUMNS = ("done", "compare failed", "error")


def _result_class(result):
    if result == 0:
        return "done"
    return "compare failed" if result > 0 else "error"


def _cell(value):
    return str(value).replace("|", "\\|")


def _table(header, rows):
    """A Markdown table; the first column left-aligned, numbers right."""
    lines = ["| " + " | ".join(map(_cell, header)) + " |",
             "| --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def _totals(rows):
    return ["total"] + [sum(column) for column in zip(*(r[1:] for r in rows))]


def _aborts_table(attribution):
    counts = attribution.aborts_by(("section", "cause"))
    rows = []
    for section in {s for s, _ in counts}:
        cells = [counts[(section, c)] for c in _CAUSE_COLUMNS]
        rows.append([section, *cells, sum(cells)])
    rows.sort(key=lambda row: (-row[-1], row[0]))
    total = _totals(rows) if rows else ["total"] + [0] * 5
    return _table(["section", *_CAUSE_COLUMNS, "total"], rows + [total])


def _vectors_table(attribution):
    phases = list(dict.fromkeys(v.phase for v in attribution.vectors))
    rows = []
    for phase in phases:
        vectors = [v for v in attribution.vectors if v.phase == phase]
        kinds = collections.Counter(_result_class(v.result) for v in vectors)
        rows.append(["(none)" if phase is None else phase,
                     *(kinds[k] for k in _RESULT_COLUMNS), len(vectors),
                     sum(1 for v in vectors if v.moved)])
    total = _totals(rows) if rows else ["total"] + [0] * 5
    return _table(["phase", *_RESULT_COLUMNS, "total", "moved"],
                  rows + [total])


def markdown_table(attribution):
    """Two Markdown tables: aborts per critical section and cause (most
    aborted first), and cpu_opv calls per phase and result with how many
    had to move the caller; each with a total row."""
    return (f"Aborts by critical section and cause:\n\n"
            f"{_aborts_table(attribution)}\n\n"
            f"cpu_opv calls by phase and result:\n\n"
            f"{_vectors_table(attribution)}\n")
