#!/usr/bin/python3
"""Ratios of the counter benchmark run inside the test VMs.
Usage: vm_bench.py VM=LOG...
Each LOG is a run-vm log of bench/counter-guest.sh ("vm| bench METHOD
THREADS NS" lines).  Under TCG every instruction is emulated and
atomics are emulated by the host's, so absolute times mean nothing;
only ratios between methods of one run are printed."""

import statistics
import sys
from collections import defaultdict

RATIOS = [
    ("rseq increment / atomic add", "rseq-counter", "lock-add"),
    ("rseq increment / per-CPU atomic add", "rseq-counter", "percpu-atomic"),
    ("rseq increment inline / through libc", "rseq-counter", "rseq-counter-lib"),
    ("rseq spinlock / pthread mutex", "rseq-spinlock", "mutex"),
    ("rseq increment / compare-and-swap loop", "rseq-counter", "lock-cmpxchg"),
]


def read_samples(path):
    samples = defaultdict(list)
    try:
        log = open(path, errors="replace")
    except OSError:
        return samples
    with log:
        for line in log:
            words = line.split()
            if len(words) == 5 and words[:2] == ["vm|", "bench"]:
                samples[(words[2], int(words[3]))].append(float(words[4]))
    return samples


def ratio_rows(samples):
    medians = {key: statistics.median(v) for key, v in samples.items()}
    for threads in sorted({t for _, t in medians}):
        for label, num, den in RATIOS:
            a, b = medians.get((num, threads)), medians.get((den, threads))
            if a is not None and b:
                yield label, threads, a / b


def main(args):
    ok = True
    print("| VM | ratio | threads | value |")
    print("|---|---|---:|---:|")
    for arg in args:
        vm, path = arg.split("=", 1)
        rows = list(ratio_rows(read_samples(path)))
        if not rows:
            print(f"| {vm} | (no results; see {path}) | | |")
            ok = False
        for label, threads, value in rows:
            print(f"| {vm} | {label} | {threads} | {value:.2f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
