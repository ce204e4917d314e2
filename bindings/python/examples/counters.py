"""Per-CPU rseq counters against a shared atomic counter and a
mutex-protected counter, across thread counts; each thread runs a C loop
(add_many) with the GIL released.  Prints a table and plots ns per add
against the thread count (log2 axis).

    rseq-python counters.py [OUT.png] [ADDS_PER_THREAD]

with out/bin/rseq-python and bindings/python/examples/counters.py in the
build tree, or after make install PREFIX/bin/rseq-python and
PREFIX/share/rseq-toolchain/experiments/counters.py.
"""

import argparse
import os
import sys
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import (FixedLocator, FuncFormatter,  # noqa: E402
                               LogLocator, NullFormatter, NullLocator)

import rseq  # noqa: E402

KINDS = [("per-CPU rseq", rseq.PerCpuCounter),
         ("atomic (lock add)", rseq.AtomicCounter),
         ("pthread mutex", rseq.LockedCounter)]


def measure(cls, nthreads, adds):
    counter = cls()
    start = time.perf_counter()
    rseq.run_threads(nthreads, counter.add_many, adds)
    elapsed = time.perf_counter() - start
    assert counter.sum() == nthreads * adds, "lost or doubled adds"
    return elapsed * 1e9 / adds


def print_table(thread_counts, results):
    print("| threads | " + " | ".join(n for n, _ in KINDS)
          + " | atomic / rseq |")
    print("|---:|" + "---:|" * (len(KINDS) + 1))
    for i, n in enumerate(thread_counts):
        row = [results[name][i] for name, _ in KINDS]
        print(f"| {n} | " + " | ".join(f"{v:.2f}" for v in row)
              + f" | {row[1] / row[0]:.1f}x |")


def plot(thread_counts, results, ncpu):
    """ns per add per thread against threads, both axes logarithmic
    (base 2 for threads, ticks at the measured counts)."""
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    for name, _ in KINDS:
        ax.plot(thread_counts, results[name], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(thread_counts))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(n) for n in thread_counts])
    ax.set_xlabel("threads (log2)")
    ax.set_ylabel("ns per add, per thread (wall time / adds)")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"Counter adds on {ncpu} CPUs (best of 3)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0, fontsize="small")
    return fig


def prepare_output(path):
    """Create PATH's directory now: a bad path fails before the run."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        sys.exit(f"{sys.argv[0]}: cannot write {path}: {e}")


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise ValueError(text)
    return value


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="counters.png",
                        help="PNG to write (its directory is created)")
    parser.add_argument("adds", nargs="?", type=positive_int,
                        default=2_000_000, help="adds per thread")
    return parser.parse_args()


def main():
    args = parse_args()
    out, adds = args.out, args.adds
    prepare_output(out)
    ncpu = os.cpu_count()
    thread_counts = sorted({1, ncpu, 2 * ncpu, 4 * ncpu})
    results = {name: [] for name, _ in KINDS}
    for n in thread_counts:
        for name, cls in KINDS:
            results[name].append(min(measure(cls, n, adds) for _ in range(3)))
    print_table(thread_counts, results)
    plot(thread_counts, results, ncpu).savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
