"""The attribution as Markdown tables."""

import collections

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
