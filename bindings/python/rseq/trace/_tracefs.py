"""Tracing through tracefs: finding (or, as root, mounting) it, checking
what is missing before anything changes, and Tracer, which records
events and restores the previous settings."""

import ctypes
import errno
import os
import re
import subprocess

from ._parse import DEFAULT_EVENTS, lost_in_text, parse_trace

# Where tracefs is looked for, in order; the first is where it is mounted.
TRACEFS_PATHS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")

# The files Tracer writes besides the events' enable files.
_CONTROL_FILES = ("trace", "tracing_on", "trace_clock", "buffer_size_kb",
                  "trace_marker", "events/enable")


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
    return _find_tracefs(tracefs)[0]


def _find_tracefs(tracefs):
    """find_tracefs's directory and whether this call mounted it."""
    if tracefs is not None:
        return _explicit_tracefs(tracefs), False
    for path in TRACEFS_PATHS:
        if _has_trace(path):
            return path, False
    hidden = [p for p in TRACEFS_PATHS
              if os.path.isdir(p) and not _can_access(p)]
    if hidden and not _is_root():
        raise _not_permitted(hidden[0])
    if _is_root():
        return _mount(TRACEFS_PATHS[0]), True
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


def _unmount_tracefs(path):
    """Undo _mount_tracefs: umount(2) through libc, else the umount
    command; None on success, else why it failed."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount.argtypes = (ctypes.c_char_p,)
    if libc.umount(os.fsencode(path)) == 0:
        return None
    reason = f"umount(2): {os.strerror(ctypes.get_errno())}"
    try:
        run = subprocess.run(["umount", path], capture_output=True, text=True)
    except OSError as e:
        return f"{reason}; umount command: {e.strerror}"
    if run.returncode == 0:
        return None
    return f"{reason}; umount command: {run.stderr.strip() or run.returncode}"


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
               "(kernel-patches/, booted by build-scripts/vm/run-vm) has it"
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
        self.tracefs, mounted = _find_tracefs(tracefs)
        try:
            _check_control_files(self.tracefs)
            _check_events(self.tracefs, self.event_names)
            _check_writable(self.tracefs, self.event_names)
        except TracingUnavailable as e:
            # Nothing may stay changed: a tracefs this constructor
            # mounted goes again.
            if mounted:
                error = _unmount_tracefs(self.tracefs)
                if error is not None:
                    e.args = (e.args[0], f"{e.args[1]} (and tracefs, mounted "
                              f"at {self.tracefs} for this check, could not "
                              f"be unmounted: {error})")
                    e.strerror = e.args[1]
            raise
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
