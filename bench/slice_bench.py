"""The time slice extension's effect, from bench/slice-guest.sh's lines in
a run-vm log: for each extension length, medians over the rounds of
examples/slice-lock without and with --slice, their ratios (with /
without), and the kernel's own slice counters for the runs with it.

    slice_bench.py VM-LOG
"""
import re
import statistics
import sys

RUN = re.compile(r"slice=(\d) threads=(\d+) holds=(\d+) holds_per_s=(\d+) "
                 r"preempted_per_million=([\d.]+) max_hold_us=(\d+) "
                 r"grants=(\d+) yields=(\d+)")
LENGTH = re.compile(r"slice_ext_nsec (\S+)")
COUNTERS = re.compile(r"counters_(before|after) (.*)")

COLUMNS = [
    ("lock holds preempted, per million holds", "preempted", "lower is better"),
    ("longest hold (us)", "max_hold", "lower is better"),
    ("lock holds per second", "holds_per_s", "higher is better"),
]
KERNEL = [("sgrant", "granted"), ("sexpir", "expired (timer)"),
          ("srevok", "revoked"), ("syield", "yielded")]


def parse_counters(text):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def parse(path):
    """{length: {0: [run...], 1: [run...]}}; a run's "kernel" holds the
    counter deltas across it, or None without CONFIG_RSEQ_STATS."""
    lengths = {}
    length, before, last = "unknown", None, None
    with open(path, errors="replace") as log:
        for line in log:
            m = LENGTH.search(line)
            if m:
                length = m[1]
                continue
            m = COUNTERS.search(line)
            if m and m[1] == "before":
                before = parse_counters(m[2])
            elif m and last is not None:
                after = parse_counters(m[2])
                last["kernel"] = ({k: after[k] - before.get(k, 0) for k in after}
                                  if before and after else None)
                last = None
            m = RUN.search(line)
            if m:
                last = {"threads": int(m[2]), "holds_per_s": float(m[4]),
                        "preempted": float(m[5]), "max_hold": float(m[6]),
                        "grants": int(m[7]), "yields": int(m[8]), "kernel": None}
                lengths.setdefault(length, {0: [], 1: []})[int(m[1])].append(last)
    return lengths


def ratio(a, b):
    return "n/a (0 without)" if b == 0 else f"{a / b:.2f}x"


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def print_length(length, runs):
    without, with_ = runs[0], runs[1]
    print(f"Extension length {length} ns: {len(without)} rounds of "
          f"{without[0]['threads']} threads on one spinlock, 2 CPUs; medians")
    print()
    print("| | without | with the extension | with / without |")
    print("|---|---|---|---|")
    for title, key, better in COLUMNS:
        a, b = median(without, key), median(with_, key)
        print(f"| {title} ({better}) | {a:.1f} | {b:.1f} | {ratio(b, a)} |")
    print(f"| grants the holder saw / yields, per run | - | "
          f"{median(with_, 'grants'):.0f} / {median(with_, 'yields'):.0f} | |")
    counted = [r["kernel"] for r in with_ if r["kernel"]]
    if counted:
        cells = ", ".join(f"{name} {statistics.median(c.get(key, 0) for c in counted):.0f}"
                          for key, name in KERNEL)
        print(f"| kernel's slice counters, per run | - | {cells} | |")
    print()


def main():
    lengths = parse(sys.argv[1])
    complete = {k: v for k, v in lengths.items() if v[0] and v[1]}
    if not complete:
        print("(no slice-lock results in the VM log)")
        return 1
    for length, runs in complete.items():
        print_length(length, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
