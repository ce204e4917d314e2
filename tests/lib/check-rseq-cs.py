#!/usr/bin/python3
"""Check every rseq critical section of ELF files the way the kernel relies on it.

Usage: check-rseq-cs.py [--objdump PROG] [--readelf PROG] [--expect-sections] FILE...

FILE is an executable, a shared library, a relocatable object or an ar
archive (each member is checked).  The ELF structures (sections,
symbols, static and dynamic relocations) are read here with struct, so
that each descriptor's fields are the values the kernel will see;
objdump only supplies instruction boundaries and mnemonics.

For each struct rseq_cs in __rseq_cs: 32-byte aligned, version 0,
flags 0, post_commit_offset > 0, abort_ip outside the section and
preceded by RSEQ_SIG; the instruction ending at start_ip is the store
arming rseq_cs (an instruction before start_ip other than that store
runs with rseq_cs set but the IP outside the section, so the kernel
clears rseq_cs and the section runs unprotected); instruction
boundaries at start_ip and post_commit_ip, and the last instruction of
the section is the commit store.  Also: __rseq_cs_ptr_array lists every
descriptor and nothing else, each __rseq_exit_point_array pair starts
at a descriptor's start_ip and exits outside it, no branch enters a
section from outside it (another section included), and the sections'
alignments.

Prints one line per problem and "FILE: N descriptors checked, M
problems"; exits 1 if there was a problem, 77 if a tool is missing.
"""

import argparse
import bisect
import importlib.util
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from collections import namedtuple

SHT_RELA, SHT_REL, SHT_NOBITS = 4, 9, 8
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
ET_REL = 1
SHN_UNDEF, SHN_LORESERVE, SHN_ABS = 0, 0xff00, 0xfff1
STT_FUNC = 2

CS_SECTION = "__rseq_cs"
PTR_SECTION = "__rseq_cs_ptr_array"
EXIT_SECTION = "__rseq_exit_point_array"
FAILURE_SECTION = "__rseq_failure"
# The minimum sh_addralign of each: struct rseq_cs is aligned 32 (the
# kernel rejects a misaligned one), the arrays hold u64 entries, and the
# abort handler's signature is a 32-bit word.
MIN_ALIGN = {CS_SECTION: 32, PTR_SECTION: 8, EXIT_SECTION: 8, FAILURE_SECTION: 4}
DATA_SECTIONS = (CS_SECTION, PTR_SECTION, EXIT_SECTION)

Insn = namedtuple("Insn", "addr size mnemonic operands reloc")


class Problem(Exception):
    """A file that cannot be checked at all (truncated, not ELF)."""


class ToolMissing(Exception):
    """A tool this check needs is not installed: exit 77."""


# ---------------------------------------------------------------- ELF

def load_elf_reader():
    """The project's ELF reader, bindings/python/rseq/trace/_elffile.py,
    loaded by its path (the rseq package needs its compiled modules)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "bindings", "python", "rseq", "trace", "_elffile.py")
    spec = importlib.util.spec_from_file_location("rseq_elffile", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


elf_reader = load_elf_reader()


class Elf(elf_reader.ElfFile):
    """What the check needs of an ELF file: the reader's structures, and
    the addresses of sections and symbols in a relocatable object too."""

    def __init__(self, data):
        try:
            super().__init__(data)
            self.relocatable = self.type == ET_REL
            self.base = self._layout()
            self.symbols = self.symbol_tables
        except elf_reader.ElfError as e:
            raise Problem(str(e)) from None

    def _layout(self):
        """Each section's address: sh_addr once linked; in a relocatable
        object every section starts at 0, so give each allocated one its
        own range, apart from the others."""
        if not self.relocatable:
            return {s.index: s.addr for s in self.sections}
        base, addr = {}, 0x100000
        for s in self.sections:
            if s.flags & SHF_ALLOC:
                align = max(s.align, 256)
                addr = (addr + align - 1) // align * align
                base[s.index] = addr
                addr += s.size + 256
        return base

    def symbol_address(self, sym):
        """The address of SYM, or None when it is undefined here."""
        if sym.shndx == SHN_UNDEF:
            return None
        if sym.shndx == SHN_ABS:
            return sym.value
        if sym.shndx >= SHN_LORESERVE:
            return None
        if self.relocatable:
            return self.base.get(sym.shndx, 0) + sym.value
        return sym.value

    def section_at(self, addr, flag=SHF_ALLOC):
        for s in self.sections:
            if (s.flags & flag == flag and s.flags & SHF_ALLOC
                    and s.type != SHT_NOBITS
                    and self.base[s.index] <= addr < self.base[s.index] + s.size):
                return s
        return None

    def read(self, addr, size):
        """SIZE bytes at ADDR from the file, or None."""
        sec = self.section_at(addr)
        if sec is None:
            return None
        off = addr - self.base[sec.index]
        data = self.content(sec)[off:off + size]
        return data if len(data) == size else None

    def where(self, addr):
        """ADDR for a message: an address once linked, SECTION+OFFSET in a
        relocatable object, with the enclosing symbol when there is one."""
        sec = self.section_at(addr)
        if self.relocatable and sec is not None:
            text = "%s+0x%x" % (sec.name, addr - self.base[sec.index])
        else:
            text = "0x%x" % addr
        func = self.function_at(addr)
        if func is not None:
            text += " <%s+0x%x>" % (func[1], addr - func[0])
        return text

    def function_at(self, addr):
        """(start, name) of the function symbol containing ADDR, or None."""
        if not hasattr(self, "_funcs"):
            self._funcs = sorted(self._function_symbols())
            self._func_starts = [f[0] for f in self._funcs]
        # The nearest start at or below ADDR whose size covers it; a
        # symbol without a size (hand-written assembly) counts too.
        i = bisect.bisect_right(self._func_starts, addr) - 1
        sec = self.section_at(addr)
        for start, end, name in reversed(self._funcs[max(i - 63, 0):i + 1]):
            if (addr < end or end == start) and self.section_at(start) == sec:
                return start, name
        return None

    def function_end_at(self, addr):
        """The end of the function symbol containing ADDR, or None (no
        symbol, or one without a size)."""
        func = self.function_at(addr)
        if func is None:
            return None
        for start, end, name in self._funcs:
            if start == func[0] and name == func[1]:
                return end if end > start else None
        return None

    def _function_symbols(self):
        thumb_mask = ~1 if self.machine == 40 else ~0
        for table, _ in self.symbols:
            for sym in table:
                if sym.type == STT_FUNC and sym.name:
                    addr = self.symbol_address(sym)
                    if addr is not None:
                        addr &= thumb_mask
                        yield addr, addr + sym.size, sym.name


# ------------------------------------------------------- architectures

Arch = namedtuple("Arch", "name objdumps sig prefix relocs store is_branch")

# Relocation types that may write a descriptor or array word:
# type -> (size in bytes, "abs" for S + A or "rel" for base + A).
RELOCS = {
    62: {1: (8, "abs"), 10: (4, "abs"), 8: (8, "rel")},          # x86_64
    3: {1: (4, "abs"), 8: (4, "rel")},                           # i386
    183: {257: (8, "abs"), 258: (4, "abs"), 1027: (8, "rel")},   # aarch64
    40: {2: (4, "abs"), 23: (4, "rel")},                         # arm
    21: {38: (8, "abs"), 1: (4, "abs"), 22: (8, "rel")},         # ppc64
}


def x86_memory(operand):
    """Whether an AT&T operand is memory: (...), %seg:..., or absolute."""
    return ("(" in operand or re.match(r"%[cdefgs]s:", operand) is not None
            or re.match(r"^(0x)?[0-9a-f]+$", operand) is not None)


def split_operands(operands):
    """Operands split at commas outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in operands:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def x86_store(insn, commit):
    # The arming store and a commit are a mov to memory; addv commits
    # with an add to memory.
    names = ("mov", "movq", "movl") + (("add", "addq", "addl") if commit else ())
    ops = split_operands(insn.operands)
    return insn.mnemonic in names and len(ops) == 2 and x86_memory(ops[1]) \
        and not x86_memory(ops[0])


def regex_store(pattern):
    regex = re.compile(pattern)
    return lambda insn, commit: regex.match(insn.mnemonic) is not None


X86_BRANCH = re.compile(r"^(j[a-z]+|call[lq]?|loop[a-z]*)$")

ARCHES = {
    62: Arch("x86_64", ("x86_64-linux-gnu-objdump", "objdump"), 0x53053053,
             b"\x0f\xb9\x3d", RELOCS[62], x86_store, X86_BRANCH),
    3: Arch("i386", ("i686-linux-gnu-objdump", "x86_64-linux-gnu-objdump", "objdump"),
            0x53053053, b"\x0f\xb9\x3d", RELOCS[3], x86_store, X86_BRANCH),
    183: Arch("aarch64", ("aarch64-linux-gnu-objdump",), 0xd428bc00, b"",
              RELOCS[183], regex_store(r"^(str|stur|stlr|stlur|stp)[bh]?$"),
              re.compile(r"^(b|bl|b\.[a-z]+|cbn?z|tbn?z)$")),
    40: Arch("arm", ("arm-linux-gnueabihf-objdump", "arm-linux-gnueabi-objdump"),
             0xe7f5def3, b"", RELOCS[40], regex_store(r"^str[bhd]?(\.w|\.n)?$"),
             re.compile(r"^(b|bl|blx|cbn?z)(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls"
                        r"|ge|lt|gt|le|al)?(\.w|\.n)?$")),
    21: Arch("ppc64", ("powerpc64le-linux-gnu-objdump", "powerpc64-linux-gnu-objdump"),
             0x0fe5000b, b"", RELOCS[21],
             regex_store(r"^p?st(d|w|h|b)(u|x|ux|brx)?$"),
             re.compile(r"^b[a-z]*[+-]?$")),
}


def signature_bytes(elf, arch):
    # aarch64 instructions are little-endian whatever the data order;
    # arm's signature reads f3 de f5 e7 in either order (glibc swaps the
    # constant for big-endian).
    if elf.machine in (183, 40):
        return struct.pack("<I", arch.sig)
    return struct.pack(elf.endian + "I", arch.sig)


# -------------------------------------------------------- relocations

def relocated_contents(elf, problems):
    """{section index: bytearray} of the descriptor and array sections
    with the relocations that target them applied, so that each word
    holds the address the running program sees (load base 0)."""
    wanted = {s.index: bytearray(elf.content(s))
              for s in elf.sections if s.name in DATA_SECTIONS}
    relocs = RELOCS.get(elf.machine, {})
    for sec in elf.sections:
        if sec.type not in (SHT_REL, SHT_RELA) or not applies(elf, sec, wanted):
            continue
        symtab = elf.sections[sec.link] if sec.link else None
        for offset, rtype, symidx, addend in reloc_entries(elf, sec):
            place = find_place(elf, sec, offset, wanted)
            if place is None or rtype == 0:
                continue
            index, off = place
            apply_reloc(elf, relocs, wanted[index], off, rtype,
                        symbol_value(elf, symtab, symidx), addend, problems,
                        elf.sections[index].name)
    return wanted


def applies(elf, rsec, wanted):
    # In an object, .rel[a]X relocates section sh_info; once linked only
    # the dynamic relocations (allocated sections) matter.
    if elf.relocatable:
        return rsec.info in wanted
    return bool(rsec.flags & SHF_ALLOC)


def find_place(elf, rsec, offset, wanted):
    if elf.relocatable:
        return rsec.info, offset
    for index in wanted:
        sec = elf.sections[index]
        if sec.addr <= offset < sec.addr + sec.size:
            return index, offset - sec.addr
    return None


def reloc_entries(elf, sec):
    """(offset, type, symbol index, addend or None for REL) of each entry."""
    rela = sec.type == SHT_RELA
    if elf.is64:
        fmt, size = ("QQq", 24) if rela else ("QQ", 16)
    else:
        fmt, size = ("IIi", 12) if rela else ("II", 8)
    for i in range(sec.size // size):
        r = elf.unpack(fmt, sec.offset + i * size)
        if elf.is64:
            sym, rtype = r[1] >> 32, r[1] & 0xffffffff
        else:
            sym, rtype = r[1] >> 8, r[1] & 0xff
        yield r[0], rtype, sym, (r[2] if rela else None)


def symbol_value(elf, symtab, index):
    if symtab is None or index == 0:
        return 0
    for table, sec in elf.symbols:
        if sec.index == symtab.index:
            if index < len(table):
                return elf.symbol_address(table[index])
    return None


def apply_reloc(elf, relocs, buf, off, rtype, sym, addend, problems, name):
    if rtype not in relocs:
        problems.append("%s+0x%x: relocation type %d not understood"
                        % (name, off, rtype))
        return
    size, kind = relocs[rtype]
    fmt = elf.endian + ("Q" if size == 8 else "I")
    if off + size > len(buf):
        return
    if addend is None:  # REL: the addend is the word in place
        addend = struct.unpack_from(fmt, buf, off)[0]
    if kind == "abs":
        if sym is None:
            problems.append("%s+0x%x: relocation against an undefined symbol"
                            % (name, off))
            return
        value = sym + addend
    else:
        value = addend
    struct.pack_into(fmt, buf, off, value & ((1 << (8 * size)) - 1))


# ------------------------------------------------------- disassembly

LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*(?:\t(.*))?$")
RELOC_LINE = re.compile(r"^\t\t\t([0-9a-f]+): R_")
HEADER = re.compile(r"^Disassembly of section (.*):$")
COMMENT = re.compile(r"\s(#|//|@)\s.*$")
PREFIXES = {"rep", "repz", "repnz", "repe", "repne", "lock", "bnd", "notrack",
            "data16", "addr32", "cs", "ds", "es", "ss", "fs", "gs"}


def parse_line(match):
    """An Insn from one objdump line (address relative to its section)."""
    addr = int(match.group(1), 16)
    size = len(match.group(2).replace(" ", "")) // 2
    text = COMMENT.sub("", match.group(3) or "").strip()
    words = text.split(None, 1)
    while len(words) == 2 and words[0] in PREFIXES:
        words = words[1].split(None, 1)
    mnemonic = words[0] if words else ""
    operands = words[1].strip() if len(words) == 2 else ""
    return Insn(addr, size, mnemonic, operands, False)


def parse_objdump(text):
    """{section name: [[Insn, ...] per block]} from objdump -dr output.
    A line without a mnemonic continues the previous instruction; a
    relocation line marks the instruction it patches."""
    blocks, current = {}, None
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            current = []
            blocks.setdefault(header.group(1), []).append(current)
            continue
        if current is None:
            continue
        reloc = RELOC_LINE.match(line)
        if reloc and current:
            mark_reloc(current, int(reloc.group(1), 16))
            continue
        m = LINE.match(line)
        if m is None:
            continue
        insn = parse_line(m)
        if insn.mnemonic == "" and current:
            last = current[-1]
            current[-1] = last._replace(size=last.size + insn.size)
        else:
            current.append(insn)
    return blocks


def mark_reloc(insns, offset):
    for i in range(len(insns) - 1, -1, -1):
        insn = insns[i]
        if insn.addr <= offset < insn.addr + max(insn.size, 1):
            insns[i] = insn._replace(reloc=True)
            return


class Disassembler:
    """Instructions of the regions holding critical sections, by address."""

    def __init__(self, elf, objdump, path):
        self.elf, self.objdump, self.path = elf, objdump, path
        self.insns = {}   # address -> Insn (addresses in elf.base terms)
        self.ends = {}    # end address -> Insn

    def load(self, regions):
        for sec, lo, hi in merge_regions(regions):
            for insn in self._run(sec, lo, hi):
                self.insns[insn.addr] = insn
                self.ends[insn.addr + insn.size] = insn

    def _run(self, sec, lo, hi):
        """Disassemble [lo, hi) of SEC (addresses in elf.base terms)."""
        base = self.elf.base[sec.index]
        shift = base - (0 if self.elf.relocatable else sec.addr)
        cmd = [self.objdump, "-d", "-r", "-z",
               "--start-address=0x%x" % (lo - shift),
               "--stop-address=0x%x" % (hi - shift)]
        if self.elf.machine in (3, 62):
            cmd.append("--insn-width=16")  # no continuation lines
        if self.elf.relocatable:
            cmd += ["-j", sec.name]
        cmd.append(self.path)
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        if run.returncode != 0:
            raise Problem("%s failed: %s" % (" ".join(cmd), run.stderr.strip()))
        blocks = parse_objdump(run.stdout).get(sec.name, [])
        block = pick_block(self.elf, sec, lo - base, blocks)
        return [i._replace(addr=i.addr + shift) for i in block]


def pick_block(elf, sec, start, blocks):
    """The block of SEC among same-named sections, which objdump prints
    in section header order, skipping those it had nothing to print of."""
    if not elf.relocatable:
        return [i for b in blocks for i in b]
    same = [s for s in elf.sections
            if s.name == sec.name and s.flags & SHF_EXECINSTR and s.size > start]
    k = same.index(sec)
    return blocks[k] if k < len(blocks) else []


def merge_regions(regions):
    """Regions [(sec, lo, hi)] merged where they overlap or are close, so
    that objdump runs once per cluster of sections."""
    merged = []
    for sec, lo, hi in sorted(regions, key=lambda r: (r[0].index, r[1])):
        if merged and merged[-1][0] is sec and lo <= merged[-1][2] + 4096:
            merged[-1][2] = max(merged[-1][2], hi)
        else:
            merged.append([sec, lo, hi])
    return merged


def branch_target(arch, insn):
    """The address a direct branch goes to, or None."""
    if insn.reloc or not arch.is_branch.match(insn.mnemonic):
        return None
    m = re.search(r"(?:^|[\s,])([0-9a-f]+) <[^>]*>$", insn.operands)
    if m is None:
        m = re.search(r"(?:^|[\s,])(?:0x)?([0-9a-f]+)$", insn.operands)
        if m is None or "%" in insn.operands or "*" in insn.operands:
            return None
    return int(m.group(1), 16)


def is_data(insn):
    return insn.mnemonic.startswith(".") or insn.mnemonic in ("(bad)", "")


# ----------------------------------------------------------- checking

Descriptor = namedtuple("Descriptor", "addr version flags start offset abort")


class Checker:
    """The checks of one ELF file; problems collect in self.problems."""

    def __init__(self, elf, path, objdump_arg):
        self.elf, self.path = elf, path
        self.arch = ARCHES.get(elf.machine)
        self.objdump_arg = objdump_arg
        self.problems = []
        self.descriptors = []

    def report(self, subject, what):
        self.problems.append("%s: %s" % (subject, what) if subject else what)

    def desc_report(self, d, what):
        self.report("descriptor at %s" % self.desc_where(d.addr), what)

    def desc_where(self, addr):
        sec = self.elf.section_at(addr)
        if self.elf.relocatable and sec is not None:
            return "0x%x" % (addr - self.elf.base[sec.index])
        return "0x%x" % addr

    def has_rseq_sections(self):
        return any(s.name in MIN_ALIGN for s in self.elf.sections)

    def run(self):
        self.check_alignment()
        contents = relocated_contents(self.elf, self.problems)
        self.descriptors = self.read_descriptors(contents)
        if self.descriptors and self.arch is None:
            self.report(None, "ELF machine %d: no rseq rules for it"
                        % self.elf.machine)
            return
        for d in self.descriptors:
            self.check_fields(d)
        self.check_pointer_array(contents)
        self.check_exit_points(contents)
        self.check_code()

    def check_alignment(self):
        for sec in self.elf.sections:
            want = MIN_ALIGN.get(sec.name)
            if want is not None and sec.align < want:
                self.report("section %s" % sec.name,
                            "sh_addralign %d, needs at least %d" % (sec.align, want))

    def words(self, contents, name, count):
        """(address, tuple of COUNT u64s) for each entry of sections NAME."""
        fmt = self.elf.endian + "Q" * count
        size = 8 * count
        for sec in self.elf.named(name):
            buf = contents[sec.index]
            if len(buf) % size:
                self.report("section %s" % name, "size %d is not a multiple of %d"
                            % (len(buf), size))
            base = self.elf.base[sec.index]
            for off in range(0, len(buf) - size + 1, size):
                yield base + off, struct.unpack_from(fmt, buf, off)

    def read_descriptors(self, contents):
        result = []
        fmt = self.elf.endian + "IIQQQ"
        for sec in self.elf.named(CS_SECTION):
            buf = contents[sec.index]
            if len(buf) % 32:
                self.report("section %s" % CS_SECTION,
                            "size %d is not a multiple of 32" % len(buf))
            base = self.elf.base[sec.index]
            for off in range(0, len(buf) - 31, 32):
                fields = struct.unpack_from(fmt, buf, off)
                result.append(Descriptor(base + off, *fields))
        return result

    def check_fields(self, d):
        # In an object only the offset is known; sh_addralign is checked
        # apart.
        addr = d.addr
        if self.elf.relocatable:
            addr -= self.elf.base[self.elf.section_at(addr).index]
        if addr % 32:
            self.desc_report(d, "not 32-byte aligned")
        if d.version != 0:
            self.desc_report(d, "version %d, not 0" % d.version)
        if d.flags != 0:
            self.desc_report(d, "flags 0x%x, not 0" % d.flags)
        if not self.elf.is64:
            for name in ("start", "offset", "abort"):
                if getattr(d, name) >> 32:
                    self.desc_report(d, "%s_ip/offset high word 0x%x is not 0 "
                                     "(a 32-bit ABI stores .long x, 0)"
                                     % (name, getattr(d, name) >> 32))
        if d.offset == 0:
            self.desc_report(d, "post_commit_offset is 0 (empty section)")
        self.check_abort(d)

    def check_abort(self, d):
        elf = self.elf
        if d.start <= d.abort < d.start + d.offset:
            self.desc_report(d, "abort_ip %s is inside the section [start_ip, "
                             "post_commit_ip)" % elf.where(d.abort))
        sec = elf.section_at(d.abort, SHF_EXECINSTR)
        if sec is None:
            self.desc_report(d, "abort_ip 0x%x is not in an executable section"
                             % d.abort)
            return
        if elf.named(FAILURE_SECTION) and sec.name != FAILURE_SECTION:
            self.desc_report(d, "abort_ip %s is not in %s"
                             % (elf.where(d.abort), FAILURE_SECTION))
        sig = signature_bytes(elf, self.arch)
        got = elf.read(d.abort - 4, 4)
        if got != sig:
            self.desc_report(d, "the 4 bytes before abort_ip %s are %s, not "
                             "RSEQ_SIG %s" % (elf.where(d.abort), hexbytes(got),
                                              hexbytes(sig)))
        prefix = self.arch.prefix
        if prefix and elf.read(d.abort - 4 - len(prefix), len(prefix)) != prefix:
            self.desc_report(d, "RSEQ_SIG before abort_ip %s is not the operand "
                             "of a ud1 instruction (%s)"
                             % (elf.where(d.abort), hexbytes(prefix)))

    def check_pointer_array(self, contents):
        known = {d.addr for d in self.descriptors}
        listed = set()
        for addr, (target,) in self.words(contents, PTR_SECTION, 1):
            listed.add(target)
            if target not in known:
                self.report("%s entry at %s" % (PTR_SECTION, self.desc_where(addr)),
                            "points at %s, which is not a descriptor in %s"
                            % (self.elf.where(target), CS_SECTION))
        for d in self.descriptors:
            if d.addr not in listed:
                self.desc_report(d, "not listed in %s" % PTR_SECTION)

    def check_exit_points(self, contents):
        by_start = {}
        for d in self.descriptors:
            by_start.setdefault(d.start, d)
        for addr, (start, exit_ip) in self.words(contents, EXIT_SECTION, 2):
            subject = "%s entry at %s" % (EXIT_SECTION, self.desc_where(addr))
            d = by_start.get(start)
            if d is None:
                self.report(subject, "start %s is no descriptor's start_ip"
                            % self.elf.where(start))
            elif d.start <= exit_ip < d.start + d.offset:
                self.report(subject, "exit %s is inside the section it leaves"
                            % self.elf.where(exit_ip))

    # ------------------------------------------------ machine code

    def objdump(self):
        if self.objdump_arg:
            return self.objdump_arg
        for name in self.arch.objdumps:
            if shutil.which(name):
                return name
        raise ToolMissing("no objdump for %s (tried %s)"
                          % (self.arch.name, ", ".join(self.arch.objdumps)))

    def code_descriptors(self):
        """Descriptors whose [start_ip, post_commit_ip) lies in one
        executable section, with that section."""
        result = []
        for d in self.descriptors:
            sec = self.elf.section_at(d.start, SHF_EXECINSTR)
            if sec is None:
                self.desc_report(d, "start_ip 0x%x is not in an executable section"
                                 % d.start)
                continue
            end = self.elf.base[sec.index] + sec.size
            if d.offset == 0 or d.start + d.offset > end:
                if d.offset:
                    self.desc_report(d, "post_commit_ip 0x%x is past the end of %s"
                                     % (d.start + d.offset, sec.name))
                continue
            result.append((d, sec))
        return result

    def check_code(self):
        pairs = self.code_descriptors()
        if not pairs:
            return
        dis = Disassembler(self.elf, self.objdump(), self.path)
        dis.load([self.region(d, sec) for d, sec in pairs])
        for d, sec in pairs:
            self.check_start(d, dis)
            self.check_commit(d, dis)
        self.check_branches([d for d, _ in pairs], dis)

    def region(self, d, sec):
        """From the start of the function holding the section (x86 can
        only be decoded from an instruction boundary) to past its end,
        and on to the function's end: a stop address inside an
        instruction makes objdump decode its bytes as other, shorter
        instructions, whose "branches" were reported as entering the
        section."""
        base = self.elf.base[sec.index]
        func = self.elf.function_at(d.start)
        lo = func[0] if func is not None and func[0] >= base else base
        hi = d.start + d.offset + 16
        end = self.elf.function_end_at(d.start)
        if end is not None:
            hi = max(hi, end)
        return sec, lo, min(hi, base + sec.size)

    def check_start(self, d, dis):
        where = self.elf.where(d.start)
        first = dis.insns.get(d.start)
        if first is None or is_data(first):
            self.desc_report(d, "no instruction starts at start_ip %s" % where)
        before = dis.ends.get(d.start)
        if before is None:
            self.desc_report(d, "no instruction ends right before start_ip %s: "
                             "the store arming rseq_cs must" % where)
        elif is_data(before) or not self.arch.store(before, False):
            self.desc_report(d, "the instruction right before start_ip %s is "
                             "'%s' at %s, not the store arming rseq_cs: the "
                             "kernel clears rseq_cs if preempted there and "
                             "the section runs unprotected"
                             % (where, insn_text(before),
                                self.elf.where(before.addr)))

    def check_commit(self, d, dis):
        end = d.start + d.offset
        where = self.elf.where(end)
        last = dis.ends.get(end)
        if last is None or last.addr < d.start:
            self.desc_report(d, "no instruction of the section ends at "
                             "post_commit_ip %s" % where)
        elif is_data(last) or not self.arch.store(last, True):
            self.desc_report(d, "the last instruction of the section, '%s' at "
                             "%s, is not the commit store"
                             % (insn_text(last), self.elf.where(last.addr)))

    def check_branches(self, descs, dis):
        """No branch enters a section from outside it: only its own code
        may jump inside it (another section's branch included)."""
        for insn in sorted(dis.insns.values()):
            target = branch_target(self.arch, insn)
            if target is None:
                continue
            target += self.shift_of(insn.addr)
            for d in descs:
                lo, hi = d.start, d.start + d.offset
                if lo <= target < hi and not lo <= insn.addr < hi:
                    self.desc_report(d, "branch '%s' at %s enters the section "
                                     "from outside it" % (insn_text(insn),
                                                          self.elf.where(insn.addr)))

    def shift_of(self, addr):
        """objdump prints branch targets in its own addresses: a
        relocatable object's sections all start at 0."""
        if not self.elf.relocatable:
            return 0
        sec = self.elf.section_at(addr)
        return self.elf.base[sec.index] if sec is not None else 0

    def cross_check_readelf(self, readelf):
        """With --readelf: the sections this parser found match readelf's."""
        run = subprocess.run([readelf, "-S", "-W", self.path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        seen = {}
        for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+"
                             r"([0-9a-f]+)\s", run.stdout):
            seen.setdefault(m.group(1), (int(m.group(2), 16), int(m.group(4), 16)))
        for sec in self.elf.sections:
            if sec.name in MIN_ALIGN and seen.get(sec.name) != (sec.addr, sec.size):
                self.report("section %s" % sec.name, "readelf reads address/size "
                            "%s, this parser 0x%x/0x%x"
                            % (seen.get(sec.name), sec.addr, sec.size))


def hexbytes(data):
    return "none (unreadable)" if data is None else " ".join("%02x" % b for b in data)


def insn_text(insn):
    return ("%s %s" % (insn.mnemonic, insn.operands)).strip()


# ------------------------------------------------------------- files

def archive_members(data):
    """(name, bytes) of each member of a System V / GNU ar archive."""
    pos, longnames = 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode("latin-1").rstrip()
        size = int(header[48:58].decode("ascii").strip() or 0)
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name == "//":
            longnames = body
        elif name in ("/", "/SYM64/"):
            continue
        elif name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            end = longnames.find(b"/\n", start)
            yield longnames[start:end].decode("latin-1"), body
        else:
            yield name.rstrip("/"), body


def check_elf(data, path, label, args, totals, expect=False):
    """Check one ELF image (PATH on disk holds exactly DATA); with EXPECT,
    an image without __rseq_cs is a problem.  Returns whether it has one."""
    try:
        elf = Elf(data)
        checker = Checker(elf, path, args.objdump)
        has_cs = bool(elf.named(CS_SECTION))
        if expect and not has_cs:
            print("%s: no %s section" % (label, CS_SECTION))
            totals[1] += 1
        if not checker.has_rseq_sections():
            return False
        checker.run()
        if args.readelf:
            checker.cross_check_readelf(args.readelf)
    except (Problem, struct.error, IndexError, ValueError) as e:
        print("%s: %s" % (label, e or "malformed ELF file"))
        totals[1] += 1
        return True
    for p in checker.problems:
        print("%s: %s" % (label, p))
    totals[0] += len(checker.descriptors)
    totals[1] += len(checker.problems)
    return has_cs


def check_archive(data, path, args, totals):
    found = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in archive_members(data):
            # Most of libc.a has no critical section: skip those members
            # without parsing them.
            if body[:4] != b"\x7fELF" or b"__rseq" not in body:
                continue
            member = os.path.join(tmp, "member.o")
            with open(member, "wb") as f:
                f.write(body)
            # --expect-sections asks for one member with sections, not
            # for every member naming __rseq symbols.
            found |= check_elf(body, member, "%s(%s)" % (path, name), args,
                               totals)
    if args.expect_sections and not found:
        print("%s: no member has a %s section" % (path, CS_SECTION))
        totals[1] += 1


def check_file(path, args):
    """Check PATH; return [descriptors, problems]."""
    totals = [0, 0]
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(b"!<arch>\n"):
            check_archive(data, path, args, totals)
        else:
            check_elf(data, path, path, args, totals, args.expect_sections)
    except (OSError, Problem, ValueError) as e:
        print("%s: %s" % (path, e))
        totals[1] += 1
    print("%s: %d descriptors checked, %d problems" % (path, totals[0], totals[1]))
    return totals


def main(argv):
    parser = argparse.ArgumentParser(
        description="Check the rseq critical sections of ELF files.")
    parser.add_argument("--objdump", help="objdump for every file "
                        "(default: the one for the file's ELF machine)")
    parser.add_argument("--readelf", help="cross-check the section headers "
                        "with this readelf")
    parser.add_argument("--expect-sections", action="store_true",
                        help="a file without %s is an error" % CS_SECTION)
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)
    for tool in (args.objdump, args.readelf):
        if tool and not shutil.which(tool):
            print("check-rseq-cs: %s not found" % tool)
            return 77
    failed = False
    try:
        for path in args.files:
            failed |= check_file(path, args)[1] > 0
    except ToolMissing as e:
        print("check-rseq-cs: %s" % e)
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    # Quiet under "| head": a closed pipe ends the check, not a traceback.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv[1:]))
