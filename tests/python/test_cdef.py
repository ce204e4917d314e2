"""bindings/python/percpu.cdef is a hand-written copy of part of
percpu/percpu.h (cdef takes no preprocessor or inline asm): every
function it declares is declared the same way in percpu.h, and every
member it names is a member of the same type in percpu.h's structure,
so the two cannot drift apart unnoticed."""

import os
import re

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
CDEF = os.path.join(TOP, "bindings", "python", "percpu.cdef")
HEADER = os.path.join(TOP, "percpu", "percpu.h")


def _code(path):
    """PATH without comments, whitespace runs made one space."""
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    return re.sub(r"\s+", " ", text)


def _prototypes(code):
    """Function declarations at file scope: 'TYPE NAME (ARGS);'."""
    outside = re.sub(r"struct \w+ ?\{[^}]*\}[^;]*;", " ", code)
    return {m.group(2): m.group(0).strip()
            for m in re.finditer(r"([\w ]+?\**)\b(percpu_\w+) \(([^)]*)\);",
                                 outside)}


def _structures(code):
    """struct NAME { MEMBERS }: NAME -> set of 'TYPE NAME' members."""
    out = {}
    for m in re.finditer(r"struct (\w+) ?\{([^}]*)\}[^;]*;", code):
        members = {re.sub(r"\s+", " ", d).strip()
                   for d in m.group(2).split(";")}
        out[m.group(1)] = {d for d in members if d and d != "..."}
    return out


def test_cdef_functions_are_declared_alike_in_percpu_h():
    cdef, header = _prototypes(_code(CDEF)), _prototypes(_code(HEADER))
    assert cdef, "no declaration found in percpu.cdef"
    for name, declaration in cdef.items():
        assert name in header, f"{name} is in percpu.cdef, not in percpu.h"
        assert header[name] == declaration, (declaration, header[name])


def test_cdef_members_are_members_of_percpu_h():
    cdef, header = _structures(_code(CDEF)), _structures(_code(HEADER))
    assert cdef, "no structure found in percpu.cdef"
    for name, members in cdef.items():
        assert name in header, f"struct {name} is not in percpu.h"
        missing = members - header[name]
        assert not missing, f"struct {name}: {sorted(missing)} not in percpu.h"
