"""What malloc's per-CPU cache (glibc.malloc.percpu) does over time: runs
the cross-thread free benchmark (malloc-xfree.c, built with rseq-gcc)
under the patched glibc with the cache on, samples malloc_info every few
milliseconds, and plots per cache (CPU or mm_cid) the chunks it holds
and its refills, flushes, drains and misses per second.  malloc_trim
runs every TRIM samples, so drains show up.

    rseq-python malloc_cache.py [OUT.png] [THREADS] [BLOCKS] \\
        [--mode mm_cid|cpu_id] [--trim N] [--paths]

In the build tree that is out/bin/rseq-python
bindings/python/examples/malloc_cache.py (it takes bench/malloc-xfree.c
and out/bin/rseq-gcc, and writes out/experiments/malloc-cache.png by
default); after make install, PREFIX/bin/rseq-python
PREFIX/share/rseq-toolchain/experiments/malloc_cache.py (malloc-xfree.c
beside it, PREFIX/bin/rseq-gcc, malloc-cache.png in the current
directory).  A copy elsewhere finds rseq-gcc beside the rseq-python
that runs it (RSEQ_PYTHON).  --paths prints what it would use and exits.

Hits (pops and pushes that the cache served) are not counted: each would
cost a second restartable sequence on malloc's fast path.  What a cache
did not serve is: a miss is a malloc that found the cache and the
transfer cache empty and went to the arenas; a flush moved half a full
array to the transfer cache; a refill brought a batch back.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The build tree's top (HERE is bindings/python/examples) or, for an
# installed copy, PREFIX (HERE is share/rseq-toolchain/experiments).
TOP = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
IN_BUILD_TREE = os.path.isfile(os.path.join(TOP, "bench", "malloc-xfree.c"))
EVENTS = ("refills", "flushes", "drains", "misses")
CACHE_RE = re.compile(r'<cache index="(\d+)"([^>]*)/>')
ATTR_RE = re.compile(r'(\w+)="(\d+)"')


def find_compiler():
    """The rseq-gcc of the tree this copy belongs to (PREFIX/bin when
    installed, out/bin in the build tree), else the one beside the
    rseq-python running it (which exports RSEQ_PYTHON); None if none."""
    candidates = [os.path.join(TOP, "bin", "rseq-gcc"),
                  os.path.join(TOP, "out", "bin", "rseq-gcc")]
    launcher = os.environ.get("RSEQ_PYTHON")
    if launcher:
        candidates.append(os.path.join(os.path.dirname(launcher), "rseq-gcc"))
    for cc in candidates:
        if os.path.isfile(cc) and os.access(cc, os.X_OK):
            return os.path.normpath(cc)
    return None


def find_workload():
    """malloc-xfree.c: installed beside this script, or in the build
    tree's bench/; None if neither."""
    for src in (os.path.join(HERE, "malloc-xfree.c"),
                os.path.join(TOP, "bench", "malloc-xfree.c")):
        if os.path.isfile(src):
            return os.path.normpath(src)
    return None


def build_workload(outdir):
    """malloc-xfree.c against the patched glibc."""
    cc, src = find_compiler(), find_workload()
    if cc is None:
        sys.exit("malloc_cache.py: no rseq-gcc: run make first, or run this"
                 " script with the rseq-python of an installed toolchain")
    if src is None:
        sys.exit(f"malloc_cache.py: no malloc-xfree.c beside {HERE}")
    exe = os.path.join(outdir, "malloc-xfree")
    subprocess.run([cc, "-O2", "-pthread", "-o", exe, src], check=True)
    return exe


def default_output():
    """out/experiments/ in the build tree; the current directory else."""
    if IN_BUILD_TREE:
        return os.path.join(TOP, "out", "experiments", "malloc-cache.png")
    return "malloc-cache.png"


def print_paths():
    """--paths: what a run would use; 1 if something is missing."""
    cc, src = find_compiler(), find_workload()
    print(f"rseq-gcc: {cc or 'not found'}")
    print(f"workload: {src or 'not found'}")
    return 0 if cc and src else 1


def pyplot():
    """matplotlib, loaded only to plot, so that --paths runs without it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def parse_samples(text):
    """[(seconds, {cache: {attr: int}})] from the sampler's output."""
    samples = []
    for chunk in text.split("@ ")[1:]:
        head, _, body = chunk.partition("\n")
        caches = {}
        for index, attrs in CACHE_RE.findall(body):
            caches[int(index)] = {k: int(v) for k, v in ATTR_RE.findall(attrs)}
        samples.append((float(head), caches))
    return samples


def rates(samples, cache, event):
    """Events per second of CACHE between consecutive samples."""
    out = []
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        a = c0.get(cache, {}).get(event, 0)
        b = c1.get(cache, {}).get(event, 0)
        if t1 > t0:
            out.append(((t0 + t1) / 2, (b - a) / (t1 - t0)))
    return out


# Caches often have the same curve (a drain empties every cache at once):
# each gets its own line style and markers, so that none hides another.
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "v", "D", "x")


def style(index):
    return {"linestyle": LINE_STYLES[index % len(LINE_STYLES)],
            "marker": MARKERS[index % len(MARKERS)], "markersize": 3,
            "markevery": 0.1, "alpha": 0.85, "label": f"cache {index}"}


def plot(samples, path, title):
    plt = pyplot()
    caches = sorted({i for _, c in samples for i in c})
    fig, axes = plt.subplots(len(EVENTS) + 1, 1, figsize=(9, 12), sharex=True)
    ax = axes[0]
    for i in caches:
        ax.plot([t for t, _ in samples],
                [c.get(i, {}).get("count", 0) for _, c in samples],
                **style(i))
    ax.set_ylabel("chunks held")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    for ax, event in zip(axes[1:], EVENTS):
        for i in caches:
            pts = rates(samples, i, event)
            ax.plot([t for t, _ in pts], [r for _, r in pts], **style(i))
        ax.set_ylabel(f"{event}/s")
    axes[-1].set_xlabel("seconds")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def print_table(samples):
    last = samples[-1][1]
    print("| cache | chunks held at the end | " + " | ".join(EVENTS) + " |")
    print("|---:|---:|" + "---:|" * len(EVENTS))
    for i in sorted(last):
        print(f"| {i} | {last[i].get('count', 0)} | "
              + " | ".join(str(last[i].get(e, 0)) for e in EVENTS) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=default_output())
    ap.add_argument("threads", nargs="?", type=int, default=8)
    ap.add_argument("blocks", nargs="?", type=int, default=4000000)
    ap.add_argument("--mode", choices=("mm_cid", "cpu_id"), default="mm_cid")
    ap.add_argument("--trim", type=int, default=25,
                    help="malloc_trim every N samples (0: never)")
    ap.add_argument("--interval-ms", type=int, default=10)
    ap.add_argument("--paths", action="store_true",
                    help="print the rseq-gcc and workload to use, and exit")
    a = ap.parse_args()
    if a.paths:
        return print_paths()
    if a.threads < 2 or a.threads % 2:
        ap.error("THREADS must be even and at least 2")
    if a.blocks < 1 or a.interval_ms < 1 or a.trim < 0:
        ap.error("BLOCKS and --interval-ms must be positive, --trim not negative")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_workload(tmp)
        sample_file = os.path.join(tmp, "samples")
        env = dict(os.environ,
                   GLIBC_TUNABLES=f"glibc.malloc.percpu={a.mode}",
                   MALLOC_XFREE_SAMPLE=sample_file,
                   MALLOC_XFREE_SAMPLE_MS=str(a.interval_ms))
        if a.trim:
            env["MALLOC_XFREE_SAMPLE_TRIM"] = str(a.trim)
        run = subprocess.run([exe, str(a.threads), str(a.blocks)], env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"malloc_cache.py: the workload failed:\n{run.stderr}")
        with open(sample_file) as f:
            samples = parse_samples(f.read())
    if not any(c for _, c in samples):
        sys.exit("malloc_cache.py: malloc_info shows no per-CPU cache: the glibc"
                 " is not the patched one, or the kernel cannot run the cache")
    result = run.stdout.strip()
    print(result)
    print_table(samples)
    trim = f"malloc_trim every {a.trim} samples" if a.trim else "no malloc_trim"
    plot(samples, a.out,
         f"malloc's per-CPU cache, glibc.malloc.percpu={a.mode}: "
         f"{a.threads} threads, {a.blocks} cross-thread frees, "
         f"sampled every {a.interval_ms} ms, {trim}")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
