"""A minimal ELF reader: what critical_sections needs from an object
file (its __rseq_cs section, first PT_LOAD and function symbols), for
32- and 64-bit little-endian objects."""

import bisect
import collections
import dataclasses
import struct

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_PT_LOAD = 1
_STT_FUNC = 2
_STB_LOCAL = 0


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
