"""CPU-migration timeline: THREADS Python threads burn CPU and sample
rseq.current_cpu() and rseq.current_mm_cid() (where the kernel has
mm_cid, Linux >= 6.3) for SECONDS.  Prints a Markdown table (samples,
CPU migrations, CPUs seen, mm_cid changes, mm_cids seen per thread) and
draws one row per thread, coloured by CPU in the upper panel and by
mm_cid in the lower one.

    rseq-python migration_timeline.py [OUT.png] [THREADS] [SECONDS]

with out/bin/rseq-python and bindings/python/examples/migration_timeline.py
in the build tree, or after make install PREFIX/bin/rseq-python and
PREFIX/share/rseq-toolchain/experiments/migration_timeline.py.
"""

import argparse
import os
import sys
import threading
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rseq  # noqa: E402


def sample(samples, stop, with_mm_cid):
    while not stop.is_set():
        samples.append((time.monotonic(), rseq.current_cpu(),
                        rseq.current_mm_cid() if with_mm_cid else -1))
        sum(range(2000))  # Keep the CPU busy between samples.


def record(nthreads, seconds, with_mm_cid):
    """Per-thread lists of (seconds since start, cpu, mm_cid)."""
    stop = threading.Event()
    per_thread = [[] for _ in range(nthreads)]
    threads = [threading.Thread(target=sample, args=(s, stop, with_mm_cid))
               for s in per_thread]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return [[(t - t0, cpu, cid) for t, cpu, cid in s] for s in per_thread]


def runs(samples, column):
    """(start, duration, value) for each stretch of equal values of
    COLUMN (1: cpu, 2: mm_cid); a stretch lasts until the next one."""
    out = []
    for s in samples:
        if out and out[-1][2] == s[column]:
            continue
        if out:
            start, _, value = out[-1]
            out[-1] = (start, s[0] - start, value)
        out.append((s[0], 0.0, s[column]))
    if out:
        start, _, value = out[-1]
        out[-1] = (start, max(samples[-1][0] - start, 1e-3), value)
    return out


def changes(samples, column):
    values = [s[column] for s in samples]
    return sum(1 for a, b in zip(values, values[1:]) if a != b)


def _draw_rows(ax, per_thread, column, label, values, palette):
    """One horizontal band per thread, coloured by VALUES of COLUMN;
    legend to the right of the axes, off the data."""
    colours = plt.get_cmap(palette)
    for row, samples in enumerate(per_thread):
        for value in values:
            spans = [(start, length) for start, length, v
                     in runs(samples, column) if v == value]
            ax.broken_barh(spans, (row - 0.4, 0.8),
                           color=colours(values.index(value) % colours.N),
                           label=f"{label} {value}" if row == 0 else None)
    ax.set_yticks(range(len(per_thread)))
    ax.set_yticklabels([f"thread {i}" for i in range(len(per_thread))])
    ax.set_ylim(len(per_thread) - 0.5, -0.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0, fontsize="small")


def plot(per_thread, ncpus, mm_cid, why_no_mm_cid="needs Linux >= 6.3"):
    """The timeline figure: CPU per thread over time, and mm_cid per
    thread (or, without mm_cid, a note saying why)."""
    rows = len(per_thread)
    fig, (cpu_ax, cid_ax) = plt.subplots(
        2, 1, sharex=True, figsize=(10, 2 + (1.4 if mm_cid else 0.8) * rows),
        gridspec_kw={"height_ratios": [rows, rows if mm_cid else 1]},
        constrained_layout=True)
    cpus = sorted({s[1] for samples in per_thread for s in samples})
    _draw_rows(cpu_ax, per_thread, 1, "CPU", cpus, "tab10")
    cpu_ax.set_title(f"CPU of each of {rows} sampling threads over time "
                     f"({ncpus} CPUs)")
    if mm_cid:
        cids = sorted({s[2] for samples in per_thread for s in samples})
        _draw_rows(cid_ax, per_thread, 2, "mm_cid", cids, "Dark2")
        cid_ax.set_title("mm_cid (memory-map concurrency ID) of each thread")
    else:
        cid_ax.set_yticks([])
        cid_ax.text(0.5, 0.5, "mm_cid not available: " + why_no_mm_cid,
                    ha="center", va="center", wrap=True,
                    transform=cid_ax.transAxes)
    cid_ax.set_xlabel("seconds since start")
    return fig


def print_table(per_thread, mm_cid):
    print("| thread | samples | CPU migrations | CPUs seen | mm_cid changes "
          "| mm_cids seen |")
    print("|---|---:|---:|---|---:|---|")
    for i, s in enumerate(per_thread):
        cpus = sorted({x[1] for x in s})
        cids = sorted({x[2] for x in s}) if mm_cid else "n/a"
        cid_changes = changes(s, 2) if mm_cid else "n/a"
        print(f"| {i} | {len(s)} | {changes(s, 1)} | {cpus} | "
              f"{cid_changes} | {cids} |")


def prepare_output(path):
    """Check PATH and create its directory now, so that a bad path fails
    before the run rather than after it: a directory, or a name whose
    suffix matplotlib cannot write, is refused."""
    if path.endswith(os.sep) or os.path.isdir(path):
        sys.exit(f"{sys.argv[0]}: {path} is a directory: name the image "
                 f"file, e.g. {os.path.join(path, 'migration-timeline.png')}")
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix not in formats:
        sys.exit(f"{sys.argv[0]}: cannot write {path}: "
                 f"{'no suffix' if not suffix else f'.{suffix} is not an image format'}"
                 f"; use one of {', '.join('.' + f for f in sorted(formats))}")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        if not os.access(directory, os.W_OK):
            raise PermissionError(f"cannot write into {directory}")
    except OSError as e:
        sys.exit(f"{sys.argv[0]}: cannot write {path}: {e}")


def positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise ValueError(text)
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="migration-timeline.png",
                        help="image to write, .png (or .svg, .pdf, ...); its "
                        "directory is created")
    parser.add_argument("threads", nargs="?", type=positive(int), default=4)
    parser.add_argument("seconds", nargs="?", type=positive(float),
                        default=3.0)
    return parser.parse_args()


def main():
    args = parse_args()
    out, nthreads, seconds = args.out, args.threads, args.seconds
    prepare_output(out)
    info = rseq.info()
    per_thread = record(nthreads, seconds, info["mm_cid"])
    print_table(per_thread, info["mm_cid"])
    why = None if info["mm_cid"] else \
        str(rseq.RseqUnavailable("mm_cid").strerror).split(": ", 1)[-1]
    fig = plot(per_thread, info["nr_slots"], info["mm_cid"], why)
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
