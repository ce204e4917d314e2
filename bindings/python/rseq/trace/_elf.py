"""What critical_sections needs from an object file: its __rseq_cs
section, first PT_LOAD and function symbols, for 32- and 64-bit
little-endian objects, read with the project's ELF reader (_elffile)."""

import bisect
import dataclasses
import mmap

from . import _elffile as _elf


@dataclasses.dataclass(frozen=True)
class ElfObject:
    """What critical_sections needs from an ELF file: its __rseq_cs
    section (None without one), the first PT_LOAD's (vaddr, offset) and
    its functions as sorted (start, end, name) link-time ranges."""
    path: str
    bits: int
    rseq_cs: _elf.Section | None
    first_load: tuple | None
    functions: tuple

    def function_at(self, address):
        """The function whose link-time range holds ADDRESS, or None."""
        index = bisect.bisect_right(self.functions, (address, float("inf")))
        if index == 0:
            return None
        start, end, name = self.functions[index - 1]
        return name if start <= address < end else None


def read_elf(path):
    """The ElfObject of PATH, or None when it is not a little-endian ELF
    file.  Symbols are only read when the object has __rseq_cs.  A
    truncated or malformed ELF file raises ValueError."""
    with open(path, "rb") as f:
        if f.read(6)[:4] != b"\x7fELF":
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                elf = _elf.ElfFile(data)
            except _elf.ElfError as e:
                if data[:4] == b"\x7fELF" and data[4] in (1, 2) and data[5] in (1, 2):
                    raise ValueError(f"{path}: {e}") from None
                return None
            if elf.endian != "<":
                return None
            return _object(path, elf)


def _object(path, elf):
    try:
        rseq_cs = next(iter(elf.named("__rseq_cs")), None)
        loads = [(s.vaddr, s.offset) for s in elf.segments
                 if s.type == _elf.PT_LOAD]
        functions = _functions(elf) if rseq_cs else ()
    except _elf.ElfError as e:
        raise ValueError(f"{path}: {e}") from None
    return ElfObject(path, elf.bits, rseq_cs, loads[0] if loads else None,
                     functions)


def _functions(elf):
    """Sorted (start, end, name) of the defined, sized STT_FUNC symbols of
    .symtab, else .dynsym; of aliases at one address, the public name
    (rseq_percpu_current_cpu over __rseq_percpu_current_cpu_slow)."""
    tables = elf.symbol_tables
    table = next((t for t in tables if t[1].type == _elf.SHT_SYMTAB), None) \
        or next((t for t in tables if t[1].type == _elf.SHT_DYNSYM), None)
    if table is None:
        return ()
    best = {}
    for sym in table[0]:
        if sym.type != _elf.STT_FUNC or sym.size == 0 or sym.shndx == 0:
            continue
        rank = (sym.bind == _elf.STB_LOCAL, sym.name.startswith("_"),
                len(sym.name), sym.name)
        if sym.value not in best or rank < best[sym.value][0]:
            best[sym.value] = (rank, sym.value + sym.size, sym.name)
    return tuple(sorted((start, end, name)
                        for start, (_, end, name) in best.items()))
