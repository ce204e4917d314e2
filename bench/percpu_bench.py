#!/usr/bin/python3
"""Per-CPU counter table (after the seed's cover letter) and per-CPU
structure costs, side by side in one run.
Usage: percpu_bench.py EXE [ROUNDS [CLANG_EXE]]
CLANG_EXE is the same benchmark built with rseq-clang: its inline row
shows that Clang inlines the critical section as GCC does."""

import os
import sys

from bench_driver import print_table, run_rows

exe = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
clang_exe = sys.argv[3] if len(sys.argv) > 3 else None
nproc = os.cpu_count()
N = 2000000

methods = [
    ("rseq-counter", "per-CPU increment, rseq (inline)"),
    ("rseq-counter-lib", "per-CPU increment, rseq (percpu_counter_add)"),
    ("rseq-spinlock", "per-CPU rseq spinlock + increment"),
    ("lock-add", "global `lock add`"),
    ("lock-cmpxchg", "global `lock cmpxchg` loop"),
    ("mutex", "global pthread mutex"),
    ("percpu-atomic", "per-CPU atomic add (`lock add` on the CPU's slot)"),
]
for threads in (1, nproc, 4 * nproc):
    n = N // threads if threads > 1 else N
    rows = [(m, f"{label}, {threads} thread(s)", [exe, m, str(threads), str(n)],
             None) for m, label in methods]
    if clang_exe:
        rows.insert(1, ("rseq-counter-clang",
                        f"per-CPU increment, rseq (inline, Clang), {threads} thread(s)",
                        [clang_exe, "rseq-counter", str(threads), str(n)], None))
    medians = run_rows(rows, rounds)
    ratios = [
        ("rseq increment / `lock add`", "rseq-counter", "lock-add",
         ("<=", 0.6) if threads == 1 else ("<=", 0.1)),
        ("rseq spinlock / pthread mutex", "rseq-spinlock", "mutex",
         ("<=", 1.0)),
        ("rseq increment / per-CPU atomic", "rseq-counter", "percpu-atomic",
         ("<=", 1.0)),
    ]
    if clang_exe:
        ratios.append(("rseq increment, Clang / GCC", "rseq-counter-clang",
                       "rseq-counter", ("<=", 1.2)))
    print_table(f"Counter increment, {threads} thread(s), ns/op per thread "
                f"(median of {rounds})", rows, medians, ratios)

rows = [(m, f"{m}, {t} thread(s)", [exe, m, str(t), str(N // t)], None)
        for m in ("list-pop-push", "memcpy-buffer-pop-push")
        for t in (1, nproc)]
rows = [(f"{k}-{i}", label, cmd, env) for i, (k, label, cmd, env)
        in enumerate(rows)]
print_table(f"Per-CPU structures, ns per pop+push pair (median of {rounds})",
            rows, run_rows(rows, rounds), [])
