"""A cpu_opv session: build vectors from Python buffers, run them on
every CPU, watch a compare stop a vector, and see bad vectors rejected.
Needs the patched kernel, so it runs in the test VM:

    build-scripts/vm/run-vm --python --file bindings/python/examples/cpu_opv_session.py \\
        'session=PYTHONPATH=/opt/rseq-python python3 cpu_opv_session.py'

Prints a Markdown transcript; exits 77 where cpu_opv is missing."""

import array
import errno
import os
import sys
import threading

import rseq


def show(step, result):
    print(f"| {step} | {result} |")


def per_cpu_counters(cpus):
    """Each thread adds to every CPU's slot through cpu_opv, targeting
    the CPU by number from wherever it runs: totals stay exact."""
    slots = array.array("Q", [0] * (8 * (max(cpus) + 1)))   # 64-byte apart
    rounds = 200

    def work():
        for _ in range(rounds):
            for cpu in cpus:
                rseq.OpVector().add(slots, 1, size=8,
                                    offset=64 * cpu).run(cpu)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [slots[8 * cpu] for cpu in cpus], 4 * rounds


def main():
    if not rseq.cpu_opv_available():
        print("UNSUPPORTED: this kernel has no cpu_opv "
              "(run in the VM: build-scripts/vm/run-vm --python)")
        return 77
    cpus = sorted(os.sched_getaffinity(0))
    print(f"kernel {os.uname().release}, CPUs {cpus}\n")
    print("| step | result |")
    print("|---|---|")

    words = array.array("Q", [7, 0, 0b1010])
    expect = array.array("Q", [7])
    vector = (rseq.OpVector()
              .compare_eq(words, expect, 8)
              .add(words, 100, size=8, offset=8)
              .lshift(words, 2, size=8, offset=16))
    show("compare words[0] == 7, add 100 to words[1], words[2] <<= 2",
         f"run -> {vector.run(cpus[0])}, words = {list(words)}")
    expect[0] = 8
    show("same vector, expecting 8", f"run -> {vector.run(cpus[0])} "
         f"(compare 1 failed), words = {list(words)}")

    record = bytearray(b"per-CPU record!!")
    copy = bytearray(len(record))
    rseq.OpVector().memcpy(copy, record).run(cpus[-1])
    show(f"memcpy of a 16-byte record on CPU {cpus[-1]}", bytes(copy))

    values, expected = per_cpu_counters(cpus)
    show("4 threads x 200 rounds adding 1 to every CPU's slot",
         f"slots = {values} (expected {expected} each)")
    if values != [expected] * len(cpus):
        print("FAIL: lost or doubled additions")
        return 1

    for what, build in [
            ("17 operations", lambda v: [v.add(bytearray(8), 1)
                                         for _ in range(17)]),
            ("read-only destination", lambda v: v.add(b"12345678", 1)),
            ("misaligned 8-byte add",
             lambda v: v.add(array.array("Q", [0, 0]), 1, offset=4)),
            ("shift by 64", lambda v: v.lshift(bytearray(8), 64))]:
        try:
            build(rseq.OpVector())
            show(what, "accepted?!")
            return 1
        except (ValueError, TypeError) as e:
            show(what, f"{type(e).__name__}: {e}")
    try:
        rseq.OpVector().add(bytearray(8), 1).run(len(cpus) + 64)
        show("CPU out of range", "accepted?!")
        return 1
    except OSError as e:
        show("CPU out of range", f"OSError {errno.errorcode[e.errno]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
