#!/usr/bin/python3
"""Python-level CPU lookup cost: rseq.current_cpu() (a CPython
extension reading the rseq area) side by side with os.getpid() and with
the same lookup through cffi (which releases and retakes the GIL around
each call), and _thread.get_ident(), a builtin of the same shape.  Run under the patched glibc:

    out/bin/rseq-python bench/python_bench.py [ROUNDS]

Every function is timed in each round, interleaved; medians of ns per
call are printed."""

import _thread
import os
import statistics
import sys
import timeit

from bench_driver import print_table

import rseq
from rseq._percpu import lib

CALLS = 200_000


def ns_per_call(function):
    return timeit.timeit(function, number=CALLS) * 1e9 / CALLS


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rows = [
        ("getpid", "os.getpid()", os.getpid),
        ("cpu", "rseq.current_cpu()", rseq.current_cpu),
        ("node", "rseq.current_node()", rseq.current_node),
        ("cffi", "the same lookup through cffi (GIL released per call)",
         lib.rseqpy_cpu),
        ("ident", "_thread.get_ident() (a builtin reading thread state)",
         _thread.get_ident),
    ]
    if rseq.info()["mm_cid"]:
        rows.append(("mm_cid", "rseq.current_mm_cid()", rseq.current_mm_cid))
    samples = {key: [] for key, _, _ in rows}
    for _ in range(rounds):
        for key, _, function in rows:
            samples[key].append(ns_per_call(function))
    medians = {key: statistics.median(v) for key, v in samples.items()}
    ratios = [("current_cpu / os.getpid", "cpu", "getpid", ("<=", 1.0)),
              ("cffi lookup / current_cpu", "cffi", "cpu", (">=", 1.0))]
    print_table(f"Python: CPU lookup per call, ns (median of {rounds})",
                [(key, label, None, None) for key, label, _ in rows],
                medians, ratios)


if __name__ == "__main__":
    main()
