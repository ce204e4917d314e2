"""CPU-migration timeline: THREADS Python threads burn CPU and sample
rseq.current_cpu() (and mm_cid where available) for SECONDS; the plot
shows which CPU each thread was on over time and how often it moved.

    out/bin/rseq-python bindings/python/examples/migration_timeline.py [OUT.png] [THREADS] [SECONDS]
"""

import sys
import threading
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rseq  # noqa: E402


def sample(samples, stop):
    mm = rseq.info()["mm_cid"]
    while not stop.is_set():
        samples.append((time.monotonic(), rseq.current_cpu(),
                        rseq.current_mm_cid() if mm else -1))
        sum(range(2000))  # Keep the CPU busy between samples.


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "migration-timeline.png"
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    stop = threading.Event()
    per_thread = [[] for _ in range(nthreads)]
    threads = [threading.Thread(target=sample, args=(s, stop))
               for s in per_thread]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()

    fig, ax = plt.subplots(figsize=(10, 1 + 0.8 * nthreads))
    print("| thread | samples | migrations | CPUs seen |")
    print("|---|---:|---:|---|")
    for i, s in enumerate(per_thread):
        times = [t - t0 for t, _, _ in s]
        cpus = [c for _, c, _ in s]
        moves = sum(1 for a, b in zip(cpus, cpus[1:]) if a != b)
        ax.scatter(times, [i + 0.3 * c / max(1, max(cpus)) for c in cpus],
                   s=2, label=f"thread {i} ({moves} moves)")
        print(f"| {i} | {len(s)} | {moves} | {sorted(set(cpus))} |")
    ax.set_xlabel("seconds")
    ax.set_ylabel("thread (offset by CPU number)")
    ax.set_title(f"CPU of {nthreads} sampling threads over time "
                 f"({rseq.info()['nr_slots']} CPUs)")
    ax.legend(loc="upper right", fontsize="small", markerscale=4)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
