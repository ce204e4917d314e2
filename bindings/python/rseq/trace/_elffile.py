"""ELF files as the rseq tools read them, parsed with struct: the header,
section headers, program headers and symbol tables of 32- and 64-bit
files of either byte order.

The one ELF reader of the project: rseq.trace (_elf) uses it to find the
critical sections of mapped objects, and the tests' critical-section
checker (tests/lib/check-rseq-cs.py) loads this file by its path, so it
imports nothing from the rseq package."""

import collections
import struct

SHT_SYMTAB, SHT_NOBITS, SHT_DYNSYM = 2, 8, 11
PT_LOAD = 1
STT_FUNC = 2
STB_LOCAL = 0

Section = collections.namedtuple(
    "Section", "index name type flags addr offset size link info align entsize")
Segment = collections.namedtuple("Segment", "type offset vaddr filesz memsz")
Symbol = collections.namedtuple("Symbol", "name value size type bind shndx")

# Struct formats of one ELF class (without the byte order): the header
# after e_ident, a section header, a program header and a symbol, and
# the order of the fields we use in the unpacked tuples.
_Layout = collections.namedtuple(
    "_Layout", "ehdr shdr phdr phdr_fields sym sym_fields")
_LAYOUTS = {
    # ELFCLASS32: Elf32_Phdr is type, offset, vaddr, paddr, filesz, memsz;
    # Elf32_Sym is name, value, size, info, other, shndx.
    1: _Layout("HHIIIIIHHHHHH", "IIIIIIIIII", "IIIIIIII", (0, 1, 2, 4, 5),
               "IIIBBH", (0, 1, 2, 3, 5)),
    # ELFCLASS64: Elf64_Phdr is type, flags, offset, vaddr, paddr, filesz,
    # memsz; Elf64_Sym is name, info, other, shndx, value, size.
    2: _Layout("HHIQQQIHHHHHH", "IIQQQQIIQQ", "IIQQQQQQ", (0, 2, 3, 5, 6),
               "IBBHQQ", (0, 4, 5, 1, 3)),
}


class ElfError(ValueError):
    """Not an ELF file, or a truncated or malformed one."""


class ElfFile:
    """An ELF file's structures.  DATA is the whole file: bytes, or an
    mmap of it (only the parts asked for are then read)."""

    def __init__(self, data):
        if len(data) < 16 or data[:4] != b"\x7fELF":
            raise ElfError("not an ELF file")
        if data[4] not in _LAYOUTS or data[5] not in (1, 2):
            raise ElfError("unknown ELF class or byte order")
        self.data = data
        self.bits = 32 if data[4] == 1 else 64
        self.is64 = self.bits == 64
        self.endian = "<" if data[5] == 1 else ">"
        self._formats = _LAYOUTS[data[4]]
        header = self.unpack(self._formats.ehdr, 16)
        self.type, self.machine = header[0], header[1]
        self._phoff, self._shoff = header[4], header[5]
        (self._phentsize, self._phnum, self._shentsize, self._shnum,
         self._shstrndx) = header[8:13]
        self.sections = self._read_sections()
        self._segments = None
        self._symbol_tables = None

    def unpack(self, fmt, offset):
        """The values of FMT (no byte order) at OFFSET of the file."""
        fmt = self.endian + fmt
        if offset < 0 or offset + struct.calcsize(fmt) > len(self.data):
            raise ElfError("truncated ELF file")
        return struct.unpack_from(fmt, self.data, offset)

    def cstring(self, offset, index):
        """The NUL-terminated string at INDEX of the table at OFFSET."""
        start = offset + index
        end = self.data.find(b"\0", start)
        if end < 0:
            raise ElfError("unterminated string in ELF file")
        return bytes(self.data[start:end]).decode("latin-1")

    def content(self, section):
        """A section's bytes (none for SHT_NOBITS)."""
        if section.type == SHT_NOBITS:
            return b""
        return bytes(self.data[section.offset:section.offset + section.size])

    def named(self, name):
        """The sections called NAME."""
        return [s for s in self.sections if s.name == name]

    def _read_sections(self):
        raw = [self.unpack(self._formats.shdr, self._shoff + i * self._shentsize)
               for i in range(self._shnum)]
        names = raw[self._shstrndx] if self._shstrndx < len(raw) else None
        return [Section(i, self.cstring(names[4], r[0]) if names else "",
                        *r[1:]) for i, r in enumerate(raw)]

    @property
    def segments(self):
        """The program headers, as Segments."""
        if self._segments is None:
            fields = self._formats.phdr_fields
            self._segments = [
                Segment(*(values[i] for i in fields))
                for values in (self.unpack(self._formats.phdr,
                                           self._phoff + i * self._phentsize)
                               for i in range(self._phnum))]
        return self._segments

    @property
    def symbol_tables(self):
        """Each SHT_SYMTAB and SHT_DYNSYM section with its Symbols, as
        (symbols, section) pairs in section order."""
        if self._symbol_tables is None:
            self._symbol_tables = [(self._symbols(s), s) for s in self.sections
                                   if s.type in (SHT_SYMTAB, SHT_DYNSYM)]
        return self._symbol_tables

    def _symbols(self, table):
        strings = self.sections[table.link]
        size = struct.calcsize(self._formats.sym)
        result = []
        for i in range(table.size // size):
            values = self.unpack(self._formats.sym, table.offset + i * size)
            name, value, sz, info, shndx = (values[j] for j in self._formats.sym_fields)
            result.append(Symbol(self.cstring(strings.offset, name), value, sz,
                                 info & 0xf, info >> 4, shndx))
        return result
