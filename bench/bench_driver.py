"""Run benchmark binaries side by side in interleaved rounds and print
ns/op medians and ratios as a Markdown table.

The machines are noisy, so every configuration is measured in each of
ROUNDS rounds, in the same process order each round, and the median is
reported; only ratios between rows of one run are meaningful."""

import os
import statistics
import subprocess
import sys


def measure(cmd, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    out = subprocess.run(cmd, env=env, check=True, capture_output=True,
                         text=True).stdout
    return float(out.split()[-1])


def run_rows(rows, rounds):
    """rows: list of (key, label, cmd, env).  Returns {key: median}."""
    samples = {key: [] for key, *_ in rows}
    for _ in range(rounds):
        for key, _label, cmd, env in rows:
            samples[key].append(measure(cmd, env))
    return {key: statistics.median(v) for key, v in samples.items()}


def print_table(title, rows, medians, ratios):
    """ratios: list of (label, numerator_key, denominator_key, target)."""
    print(f"\n### {title}\n")
    print("| benchmark | ns/op |")
    print("|---|---:|")
    for key, label, *_ in rows:
        print(f"| {label} | {medians[key]:.2f} |")
    if ratios:
        print("\n| ratio | value | target | met |")
        print("|---|---:|---|---|")
        for label, num, den, target in ratios:
            value = medians[num] / medians[den]
            op, bound = target
            met = value <= bound if op == "<=" else value >= bound
            print(f"| {label} | {value:.2f} | {op} {bound} | "
                  f"{'yes' if met else 'NO'} |")
    sys.stdout.flush()
