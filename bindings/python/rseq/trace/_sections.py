"""Critical sections at their run-time addresses: the __rseq_cs
descriptors of every ELF object a process has mapped, named after the
per-CPU operation (or function) that holds them."""

import collections
import ctypes
import dataclasses
import os
import stat
import struct

from ._elf import read_elf

_SHF_ALLOC = 0x2
_RSEQ_CS = struct.Struct("<IIQQQ")      # the same for 32- and 64-bit


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
