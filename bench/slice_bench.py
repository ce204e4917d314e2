"""The time slice extension's effect, from bench/slice-vm.sh's lines in
a run-vm log: medians over the rounds of examples/slice-lock without and
with --slice, and their ratios (with / without).

    slice_bench.py VM-LOG
"""
import re
import statistics
import sys

LINE = re.compile(r"slice=(\d) threads=(\d+) holds=(\d+) holds_per_s=(\d+) "
                  r"preempted_per_million=([\d.]+) max_hold_us=(\d+) "
                  r"grants=(\d+) yields=(\d+)")

COLUMNS = [
    ("lock holds preempted, per million holds", "preempted", "lower is better"),
    ("longest hold (us)", "max_hold", "lower is better"),
    ("lock holds per second", "holds_per_s", "higher is better"),
]


def parse(path):
    runs = {0: [], 1: []}
    nsecs = "unknown"
    with open(path, errors="replace") as log:
        for line in log:
            if "slice_ext_nsecs" in line:
                nsecs = line.split()[-1]
            m = LINE.search(line)
            if m:
                slice_on, threads = int(m[1]), int(m[2])
                runs[slice_on].append({
                    "threads": threads,
                    "holds_per_s": float(m[4]),
                    "preempted": float(m[5]),
                    "max_hold": float(m[6]),
                    "grants": int(m[7]),
                    "yields": int(m[8]),
                })
    return runs, nsecs


def ratio(a, b):
    if b == 0:
        return "n/a (0 without)"
    return f"{a / b:.2f}x"


def main():
    runs, nsecs = parse(sys.argv[1])
    if not runs[0] or not runs[1]:
        print("(no slice-lock results in the VM log)")
        return 1
    med = {k: {c: statistics.median(r[c] for r in v)
               for _, c, _ in COLUMNS} for k, v in runs.items()}
    print(f"{len(runs[0])} rounds of {runs[0][0]['threads']} threads on one "
          f"spinlock, 2 CPUs; extension length {nsecs} ns; medians")
    print()
    print("| | without | with the extension | with / without |")
    print("|---|---|---|---|")
    for title, key, better in COLUMNS:
        print(f"| {title} ({better}) | {med[0][key]:.1f} | {med[1][key]:.1f} "
              f"| {ratio(med[1][key], med[0][key])} |")
    grants = statistics.median(r["grants"] for r in runs[1])
    yields = statistics.median(r["yields"] for r in runs[1])
    print(f"| extensions granted / yielded per run | - | {grants:.0f} / "
          f"{yields:.0f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
