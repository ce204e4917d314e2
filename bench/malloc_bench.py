"""Run the malloc benchmarks of bench/malloc-bench.sh and print one table.

Every benchmark x parameter x column is run once per round; within a
round, the columns of one row run back to back and their order is
rotated from round to round, so that each column sees the same machine
noise.  The table has the median of the rounds for each cell and, in
the other columns, the ratio to the stock glibc column.

Benchmarks (the binaries are in DIR, built by malloc-bench.sh):
  xfree   malloc-xfree-FLAVOUR THREADS BLOCKS: Mblocks/s, VmHWM
  larson  malloc-larson-FLAVOUR THREADS OPS: M replacements (free +
          malloc) per second, VmHWM
  thread  glibc's bench-malloc-thread-FLAVOUR THREADS: malloc+free
          iterations per wall second (all threads), VmHWM
  simple  glibc's bench-malloc-simple-FLAVOUR SIZE: malloc+free pairs
          per second over its 12 timed loops, VmHWM
VmHWM of glibc's programs comes from vmhwm-FLAVOUR.so (LD_PRELOAD),
which writes it at exit: see bench/vmhwm-preload.c.

A column is KEY|LABEL|FLAVOUR|ENV|NA[|PREFIX]: FLAVOUR picks the
binaries (stock: built with the system gcc against Debian's glibc;
patched: rseq-gcc), ENV is space-separated VAR=VALUE settings
(LD_PRELOAD there is put before the VmHWM library), a non-empty NA is
shown in every cell instead of running the column, and PREFIX is a
command the binary runs under (a glibc build tree's testrun.sh runs a
stock binary with that glibc).  The first column is the reference.

--pair A/B adds a table of column A's medians against column B's (the
cost of the cache patch with the cache off: the same flags, with and
without it)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


class Column:
    def __init__(self, spec):
        parts = spec.split("|")
        if len(parts) == 5:
            parts.append("")
        if len(parts) != 6:
            raise SystemExit(f"malloc_bench.py: bad column '{spec}' "
                             "(KEY|LABEL|FLAVOUR|ENV|NA[|PREFIX])")
        self.key, self.label, self.flavour, env, self.na, prefix = parts
        self.env = dict(kv.split("=", 1) for kv in env.split())
        self.prefix = prefix.split()


def parse_kv(text, prog):
    """The key=value pairs of the line PROG prints (bench/malloc-*.c)."""
    for line in text.splitlines():
        if line.startswith(prog + " "):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    raise ValueError(f"no '{prog} ...' line in its output")


# The benchmarks of bench/malloc-*.c, which print their own VmHWM:
# key: (program, its throughput key=).
OWN_PROGRAMS = {"xfree": ("malloc-xfree", "mblocks_per_s"),
                "larson": ("malloc-larson", "mops_per_s")}


def glibc_result(text):
    doc = json.loads(text)
    return doc["functions"]["malloc"][""]


def read_vmhwm(path, prog):
    """VmHWM and wall time of PROG from vmhwm-preload.so's file."""
    with open(path) as f:
        lines = [dict(x.split("=", 1) for x in line.split())
                 for line in f if line.strip()]
    mine = [kv for kv in lines if kv.get("prog") == prog]
    if len(mine) != 1:
        raise ValueError(f"{len(mine)} lines of {prog} in {path}, expected 1")
    return int(mine[0]["vmhwm_kb"]), int(mine[0]["wall_ns"])


class Runner:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.log = open(os.path.join(args.dir, "runs.log"), "w")
        self.hwm_file = os.path.join(args.dir, "vmhwm.out")

    def run(self, column, bench, param):
        """Returns (throughput, vmhwm_kb) or None if the run failed."""
        a = self.args
        d = a.dir
        fl = column.flavour
        env = dict(os.environ)
        env.update({k: v for k, v in column.env.items() if k != "LD_PRELOAD"})
        preload = column.env.get("LD_PRELOAD", "").split()
        if bench in OWN_PROGRAMS:
            amount = a.xfree_blocks if bench == "xfree" else a.larson_ops
            cmd = [f"{d}/{OWN_PROGRAMS[bench][0]}-{fl}", str(param), str(amount)]
            timeout = 900
        else:
            name = "thread" if bench == "thread" else "simple"
            cmd = [f"{d}/bench-malloc-{name}-{fl}", str(param)]
            preload.append(f"{d}/vmhwm-{fl}.so")
            env["MALLOC_BENCH_VMHWM_FILE"] = self.hwm_file
            timeout = a.thread_seconds + 600
            try:
                os.unlink(self.hwm_file)
            except FileNotFoundError:
                pass
        if preload:
            env["LD_PRELOAD"] = " ".join(preload)
        prog = os.path.basename(cmd[0])
        cmd = column.prefix + cmd
        shown = " ".join(([f"LD_PRELOAD='{env['LD_PRELOAD']}'"] if preload else [])
                         + [f"{k}={v}" for k, v in column.env.items()
                            if k != "LD_PRELOAD"]
                         + ([f"MALLOC_BENCH_VMHWM_FILE={self.hwm_file}"]
                            if bench not in OWN_PROGRAMS else [])
                         + cmd)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=timeout)
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = e.stdout or "", f"timed out after {timeout} s", None
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
        except OSError as e:
            out, err, rc = "", f"cannot run: {e}", None
        took = time.monotonic() - t0
        print(f"$ {shown}\n# exit {rc}, {took:.1f} s\n{out}{err}",
              file=self.log, flush=True)
        try:
            if rc != 0:
                raise ValueError(f"exit status {rc}: {err.strip()[-300:]}")
            if bench in OWN_PROGRAMS:
                prog_name, key = OWN_PROGRAMS[bench]
                kv = parse_kv(out, prog_name)
                return float(kv[key]), int(kv["vmhwm_kb"])
            res = glibc_result(out)
            hwm, wall_ns = read_vmhwm(self.hwm_file, prog)
            if bench == "thread":
                # Iterations of all threads per second of the process's
                # wall time (the run lasts BENCHMARK_DURATION seconds).
                return res["iterations"] / (wall_ns / 1e9) / 1e6, hwm
            # bench-malloc-simple: 12 timed loops (3 arenas x 4 working
            # set sizes), each time_ns per malloc+free pair.
            times = [v for k, v in res.items() if k.endswith("_time")]
            if len(times) != 12:
                raise ValueError(f"{len(times)} *_time fields, expected 12")
            return len(times) / sum(times) * 1e3, hwm
        except (ValueError, KeyError, OSError, json.JSONDecodeError) as e:
            self.failures.append(f"{column.key} {bench} {param}: {e}")
            print(f"# FAILED: {e}", file=self.log, flush=True)
            return None


BENCHES = {
    # key: (title, parameter name, throughput unit)
    "xfree": ("cross-thread free (bench/malloc-xfree.c)", "thread(s)",
              "Mblocks/s"),
    "larson": ("server-style, blocks moving between threads "
               "(bench/malloc-larson.c)", "thread(s)", "M free+malloc/s"),
    "thread": ("glibc bench-malloc-thread", "thread(s)",
               "M iterations/s (wall)"),
    "simple": ("glibc bench-malloc-simple", "B blocks",
               "M malloc+free/s"),
}


def fmt(v):
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def plot(path, columns, rows, median):
    """Throughput and peak RSS against threads, one line per column, for
    the benchmarks whose parameter is a thread count."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    benches = [b for b in ("xfree", "larson", "thread")
               if any(r[0] == b for r in rows)]
    if not benches:
        return False
    fig, axes = plt.subplots(2, len(benches), figsize=(6 * len(benches), 8),
                             squeeze=False)
    for j, bench in enumerate(benches):
        title, pname, unit = BENCHES[bench]
        params = [p for b, p in rows if b == bench]
        for i, ylabel in ((0, unit), (1, "peak RSS (VmHWM, MiB)")):
            ax = axes[i][j]
            for c in columns:
                if c.na:
                    continue
                pts = [(p, median(bench, p, c, i)) for p in params]
                pts = [(p, v / 1024 if i == 1 else v) for p, v in pts if v is not None]
                if pts:
                    ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o",
                            label=c.label)
            ax.set_xscale("log", base=2)
            ax.set_xticks(params)
            ax.set_xticklabels([str(p) for p in params])
            ax.set_xlabel(pname)
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=10)
            ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--xfree-threads", required=True)
    ap.add_argument("--xfree-blocks", type=int, required=True)
    ap.add_argument("--larson-threads", required=True)
    ap.add_argument("--larson-ops", type=int, required=True)
    ap.add_argument("--thread-threads", required=True)
    ap.add_argument("--thread-seconds", type=int, required=True)
    ap.add_argument("--simple-sizes", required=True)
    ap.add_argument("--column", action="append", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--header", default="")
    ap.add_argument("--pair", action="append", default=[])
    a = ap.parse_args()
    columns = [Column(c) for c in a.column]
    by_key = {c.key: c for c in columns}
    pairs = []
    for p in a.pair:
        keys = p.split("/")
        if len(keys) != 2 or any(k not in by_key for k in keys):
            raise SystemExit(f"malloc_bench.py: bad --pair '{p}' (A/B, two column keys)")
        pairs.append([by_key[k] for k in keys])
    ref = columns[0]
    rows = ([("xfree", int(t)) for t in a.xfree_threads.split()]
            + [("larson", int(t)) for t in a.larson_threads.split()]
            + [("thread", int(t)) for t in a.thread_threads.split()]
            + [("simple", int(s)) for s in a.simple_sizes.split()])
    live = [c for c in columns if not c.na]
    runner = Runner(a)
    samples = {}
    for r in range(a.rounds):
        order = live[r % len(live):] + live[:r % len(live)]
        print(f"round {r + 1}/{a.rounds}: columns {' '.join(c.key for c in order)}",
              file=sys.stderr, flush=True)
        for bench, param in rows:
            for c in order:
                res = runner.run(c, bench, param)
                if res is not None:
                    samples.setdefault((bench, param, c.key), []).append(res)

    with open(os.path.join(a.dir, "samples.json"), "w") as f:
        json.dump([{"bench": b, "param": p, "column": k,
                    "throughput": [s[0] for s in v], "vmhwm_kb": [s[1] for s in v]}
                   for (b, p, k), v in samples.items()], f, indent=1)

    def median(bench, param, col, i):
        v = samples.get((bench, param, col.key))
        if not v or len(v) < a.rounds:
            return None
        return statistics.median(s[i] for s in v)

    lines = []
    if a.header:
        lines += [a.header, ""]
    lines.append(f"### glibc malloc against other allocators: median of "
                 f"{a.rounds} round(s), ratio to {ref.label} in parentheses")
    lines.append("")
    lines.append("| benchmark | | metric | " + " | ".join(c.label for c in columns) + " |")
    lines.append("|---|---:|---|" + "---:|" * len(columns))
    for bench, param in rows:
        title, pname, unit = BENCHES[bench]
        for i, metric in ((0, f"{unit} (higher is better)"),
                          (1, "peak RSS, VmHWM MiB (lower is better)")):
            base = median(bench, param, ref, i)
            cells = []
            for c in columns:
                if c.na:
                    cells.append(c.na)
                    continue
                m = median(bench, param, c, i)
                if m is None:
                    cells.append("failed")
                    continue
                cell = fmt(m / 1024 if i == 1 else m)
                if c is not ref and base:
                    cell += f" ({m / base:.2f}x)"
                cells.append(cell)
            label = f"{param} {pname}"
            lines.append(f"| {title} | {label} | {metric} | " + " | ".join(cells) + " |")
    for x, y in pairs:
        if x.na or y.na:
            continue
        lines += ["", f"### {x.label} against {y.label}: ratio of the medians", "",
                  "| benchmark | | throughput | peak RSS |", "|---|---:|---:|---:|"]
        for bench, param in rows:
            title, pname, _ = BENCHES[bench]
            cells = []
            for i in (0, 1):
                mx, my = median(bench, param, x, i), median(bench, param, y, i)
                cells.append(f"{mx / my:.3f}x" if mx and my else "failed")
            lines.append(f"| {title} | {param} {pname} | " + " | ".join(cells) + " |")
    png = os.path.splitext(a.output)[0] + ".png"
    if plot(png, columns, rows, median):
        # Relative to the working directory when below it, so that a
        # table pasted into the docs names no path of this machine.
        shown = os.path.relpath(png)
        lines += ["", f"Plot: {png if shown.startswith('..') else shown}"]
    if runner.failures:
        lines.append("")
        lines.append(f"{len(runner.failures)} run(s) failed (see {a.dir}/runs.log):")
        lines += [f"- {f}" for f in runner.failures]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(a.output, "w") as f:
        f.write(text)
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
