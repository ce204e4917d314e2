"""python3 -m rseq: what this process has of rseq, in a few lines.

    out/bin/rseq-python -m rseq [--json]

The registration (by glibc, its feature size and offset, what the kernel
offers through the auxiliary vector), where the calling thread runs (CPU,
NUMA node, mm_cid, or why one is unavailable), and the per-CPU
operations' fallback (patched glibc, cpu_opv, this thread's mode)."""

import argparse
import json
import sys

import rseq
from ._errors import RseqUnavailable


def _where(read):
    """READ()'s value, or the reason it is unavailable."""
    try:
        return read()
    except RseqUnavailable as e:
        return f"unavailable: {e.strerror}"


def _fallback_mode():
    """This thread's fallback mode (set_fallback returns the previous
    one: set it back at once), or why there is none."""
    try:
        mode = rseq.set_fallback(rseq.Fallback.AUTO)
    except RseqUnavailable as e:
        return f"unavailable: {e.strerror}"
    rseq.set_fallback(mode)
    return mode.name


def report():
    """The facts as a dict (the --json output)."""
    facts = rseq.info()
    facts.update(cpu=_where(rseq.current_cpu), node=_where(rseq.current_node),
                 thread_mm_cid=_where(rseq.current_mm_cid),
                 fallback_mode=_fallback_mode())
    return facts


def _yes(flag):
    return "yes" if flag else "no"


def describe(facts):
    """The facts as lines of text."""
    registered = (f"yes, {facts['feature_size']} bytes at offset "
                  f"{facts['offset']} from the thread pointer"
                  if facts["registered"] else "no")
    return "\n".join([
        f"kernel:           {facts['kernel']} (rseq feature size "
        f"{facts['kernel_feature_size']}, alignment {facts['kernel_align']})",
        f"registered:       {registered}",
        f"patched glibc:    {_yes(facts['patched_glibc'])}",
        f"cpu:              {facts['cpu']}",
        f"node:             {facts['node']}",
        f"mm_cid:           {facts['thread_mm_cid']}",
        f"per-CPU slots:    {facts['nr_slots']}",
        f"cpu_opv:          {_yes(facts['cpu_opv'])}",
        f"fallback mode:    {facts['fallback_mode']}",
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m rseq", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true",
                        help="print the facts as one JSON object")
    args = parser.parse_args(argv)
    facts = report()
    print(json.dumps(facts, sort_keys=True) if args.json else describe(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
