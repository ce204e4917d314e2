"""Why do restartable sequences abort, and when does cpu_opv run?

THREADS threads each do rounds of three per-CPU workloads, BATCH
operations each, for SECONDS: a PerCpuCounter (the inline addv section in the
binding), a PerCpuList (libc's cmpnev_storeoffp_load and cmpeqv_storev)
and a PerCpuBuffer (libc's trymemcpy sections).  An injector thread
sends them signals and moves them between CPUs; a fraction of the
threads run with FALLBACK_ALWAYS, so their operations go through
cpu_opv.  The kernel's rseq, cpu_opv, scheduler and signal events are
traced meanwhile (rseq.trace), every abort is attributed to a cause and
a critical section, and every cpu_opv vector to the workload that ran
it.

    run     do it (root, tracefs; the cpu_opv event needs this project's
            kernel: the whole thing runs in its VM with
            build-scripts/experiments/trace-experiment).  Prints the
            Markdown table; --json FILE saves the result ("-": on stdout,
            between @@RESULT lines); --check also verifies that the trace
            agrees with glibc's own per-thread counters and that no
            element of the structures was lost, and exits 1 if not.
    render  RESULT OUTDIR: abort-causes.md, abort-causes.png and
            result.json from a saved result or a VM console log.
"""

import argparse
import json
import os
import random
import signal
import sys
import threading
import time

CAUSES = ("preemption", "migration", "signal", "other")
PHASES = ("counter", "list", "buffer")
RESULT_MARK = "@@RESULT"


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def fraction(text):
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be within 0..1, not {value}")
    return value


# --- The workload ---------------------------------------------------------

class Workload:
    """The shared structures and what each thread reports."""

    def __init__(self, rseq, args):
        self.rseq = rseq
        self.args = args
        self.counter = rseq.PerCpuCounter()
        self.list = rseq.PerCpuList(args.nodes)
        self.buffer = rseq.PerCpuBuffer(args.nodes, args.item_size)
        self.started = threading.Barrier(args.threads + 1)
        self.tids = [None] * args.threads
        self.reports = [None] * args.threads

    def forced(self, index):
        """Whether thread INDEX runs with FALLBACK_ALWAYS: the first
        round(THREADS * FORCED) threads, counted from the last."""
        return index >= self.args.threads - round(self.args.threads
                                                  * self.args.forced)

    def thread(self, index, tracer):
        rseq = self.rseq
        if self.forced(index):
            rseq.set_fallback(rseq.FALLBACK_ALWAYS)
        self.tids[index] = threading.get_native_id()
        aborts, fallbacks = rseq.thread_aborts(), rseq.thread_fallbacks()
        self.started.wait()
        deadline = time.monotonic() + self.args.seconds
        rounds = 0
        while rounds == 0 or time.monotonic() < deadline:
            rounds += 1
            self.phase(tracer, "counter",
                       lambda: self.counter.add_many(self.args.batch))
            self.phase(tracer, "list", lambda: self.list.churn(self.args.batch))
            self.phase(tracer, "buffer",
                       lambda: self.buffer.churn(self.args.batch))
        self.reports[index] = {
            "tid": self.tids[index], "forced": self.forced(index),
            "rounds": rounds,
            "aborts": rseq.thread_aborts() - aborts,
            "fallbacks": rseq.thread_fallbacks() - fallbacks}

    @staticmethod
    def phase(tracer, name, run):
        # The marker names the workload of the vectors that follow.
        tracer.mark(f"phase={name}")
        run()

    def lost_elements(self):
        """What the structures lost or duplicated: a list of messages."""
        problems = []
        adds = sum(r["rounds"] for r in self.reports) * self.args.batch
        if self.counter.sum() != adds:
            problems.append(f"counter sum {self.counter.sum()} != {adds}")
        for name, structure in (("list", self.list), ("buffer", self.buffer)):
            try:
                values = sorted(structure.values())
            except RuntimeError as e:
                problems.append(str(e))
                continue
            if values != list(range(self.args.nodes)):
                problems.append(f"{name} holds {len(values)} elements, not "
                                f"each of 0..{self.args.nodes - 1} once")
        return problems


class Injector(threading.Thread):
    """Sends SIGUSR1 to the workers and moves them between CPUs, one
    action every PERIOD seconds, until stopped."""

    def __init__(self, workload, threads, period):
        super().__init__(daemon=True)
        self.workload = workload
        self.threads = threads
        self.period = period
        self.stopping = threading.Event()
        self.signals = self.migrations = 0
        self.cpus = sorted(os.sched_getaffinity(0))
        self.pinned = {}

    def run(self):
        rng = random.Random(1)
        while not self.stopping.wait(self.period):
            index = rng.randrange(len(self.threads))
            if not self.threads[index].is_alive():
                continue
            try:
                if rng.random() < 0.5:
                    signal.pthread_kill(self.threads[index].ident,
                                        signal.SIGUSR1)
                    self.signals += 1
                elif len(self.cpus) > 1:
                    self.move(index)
            except (ProcessLookupError, OSError):
                pass        # the thread ended meanwhile

    def move(self, index):
        """Pin thread INDEX to the CPU after the one it was last pinned
        to: every move is a real migration (a random CPU would often be
        the one it already runs on)."""
        tid = self.workload.tids[index]
        current = self.pinned.get(tid, -1)
        later = [c for c in self.cpus if c > current]
        cpu = later[0] if later else self.cpus[0]
        os.sched_setaffinity(tid, {cpu})
        self.pinned[tid] = cpu
        self.migrations += 1

    def stop(self):
        self.stopping.set()
        self.join()


def run_workload(rseq, tracer, args):
    workload = Workload(rseq, args)
    # The injector needs the GIL to act on time; the workers hold it
    # between their C loops.
    sys.setswitchinterval(min(sys.getswitchinterval(), args.period / 2))
    # The C handler only notes the signal; the thread it interrupts is
    # the one whose sequence aborts.
    signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    threads = [threading.Thread(target=workload.thread, args=(i, tracer))
               for i in range(args.threads)]
    injector = Injector(workload, threads, args.period)
    for t in threads:
        t.start()
    workload.started.wait()
    injector.start()
    for t in threads:
        t.join()
    injector.stop()
    if any(r is None for r in workload.reports):
        raise RuntimeError("a worker thread failed (see its traceback)")
    return workload, injector


# --- Tracing and attribution ------------------------------------------------

def run(args):
    import rseq
    from rseq import trace

    events = trace.DEFAULT_EVENTS
    if args.no_cpu_opv:
        events = tuple(e for e in events if e != "cpu_opv/cpu_opv")
        args.forced = 0.0
    tracer = trace.Tracer(events=events, buffer_kb=args.buffer_kb)
    with tracer:
        workload, injector = run_workload(rseq, tracer, args)
    sections = trace.critical_sections()
    tids = {r["tid"] for r in workload.reports}
    result_events = tracer.events()
    attribution = trace.attribute(
        result_events, tids, sections,
        update_first=trace.kernel_traces_update_first(os.uname().release))
    result = summarize(args, workload, injector, attribution,
                       lost_events(trace, tracer))
    result["markdown"] = trace.markdown_table(attribution)
    return result, workload


def lost_events(trace, tracer):
    """Events the ring buffers dropped, by their counts or the trace's
    LOST lines, whichever says more."""
    lost = dict(tracer.lost())
    for cpu, n in trace.lost_in_text(tracer.text()).items():
        lost[cpu] = max(n, lost.get(cpu, 0))
    return sum(lost.values())


def summarize(args, workload, injector, attribution, lost):
    per_thread = attribution.per_thread()
    threads = []
    for report in workload.reports:
        traced = per_thread.get(report["tid"], {})
        threads.append(dict(report,
                            traced_aborts=traced.get("aborts", 0),
                            traced_fallbacks=traced.get("fallbacks", 0)))
    return {
        "parameters": {k: getattr(args, k) for k in
                       ("threads", "seconds", "batch", "nodes",
                        "item_size", "forced", "period", "no_cpu_opv")},
        "kernel": os.uname().release,
        "injected": {"signals": injector.signals,
                     "migrations": injector.migrations},
        "lost_events": lost,
        "threads": threads,
        "aborts": [[section, cause, n] for (section, cause), n in
                   sorted(attribution.aborts_by(("section", "cause"))
                          .items())],
        "aborts_by_phase": [[phase, cause, n] for (phase, cause), n in
                            sorted(attribution.aborts_by(("phase", "cause"))
                                   .items(), key=str)],
        "vectors": [[phase, result, moved, n] for (phase, result, moved), n
                    in sorted(attribution.vectors_by(
                        ("phase", "result", "moved")).items(), key=str)],
        "problems": workload.lost_elements(),
    }


def disagreements(result):
    """Where the trace and glibc's counters differ, and anything else
    that makes the run untrustworthy: a list of messages."""
    problems = list(result["problems"])
    if result["lost_events"]:
        problems.append(f"{result['lost_events']} trace events were lost "
                        "(raise --buffer-kb)")
    for t in result["threads"]:
        for what in ("aborts", "fallbacks"):
            if t[what] != t["traced_" + what]:
                problems.append(f"thread {t['tid']}: glibc counted "
                                f"{t[what]} {what}, the trace "
                                f"{t['traced_' + what]}")
    unknown = [s for s, _, _ in result["aborts"] if s.startswith("unknown")]
    if unknown:
        problems.append(f"aborts in unknown sections: {sorted(set(unknown))}")
    if not result["aborts"]:
        problems.append("no abort at all: nothing was exercised")
    causes = {cause for _, cause, _ in result["aborts"]}
    for cause in ("signal", "migration"):
        if result["injected"][cause + "s"] and cause not in causes:
            problems.append(f"{cause}s were injected but no abort was "
                            f"attributed to one")
    if result["parameters"]["forced"] and not any(
            t["forced"] and t["traced_fallbacks"] for t in result["threads"]):
        problems.append("no cpu_opv vector from the forced threads")
    return problems


def emit_json(result, path):
    text = json.dumps(result, sort_keys=True)
    if path != "-":
        with open(path, "w") as f:
            f.write(text + "\n")
        return
    # Through a serial console: short lines between markers.
    print(f"{RESULT_MARK}-BEGIN")
    for i in range(0, len(text), 200):
        print(f"{RESULT_MARK} {text[i:i + 200]}")
    print(f"{RESULT_MARK}-END", flush=True)


def extract_json(log_text):
    """The result a `run --json -` printed into LOG_TEXT (a console log)."""
    chunks, inside = [], False
    for line in log_text.replace("\r", "").splitlines():
        if line.endswith(f"{RESULT_MARK}-BEGIN"):
            chunks, inside = [], True
        elif line.endswith(f"{RESULT_MARK}-END") and inside:
            return json.loads("".join(chunks))
        elif inside and f"{RESULT_MARK} " in line:
            chunks.append(line.split(f"{RESULT_MARK} ", 1)[1])
    raise ValueError(f"no complete {RESULT_MARK} block in the log")


# --- Rendering (on the host: matplotlib) -----------------------------------

def totals_by(rows, key_index, sub_index, keys, subs):
    table = {k: {s: 0 for s in subs} for k in keys}
    for row in rows:
        table[row[key_index]][row[sub_index]] += row[-1]
    return table


def result_label(result):
    if result == 0:
        return "done"
    return "compare failed" if result > 0 else "error"


def render(result, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "result.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(os.path.join(outdir, "abort-causes.md"), "w") as f:
        f.write(describe(result) + "\n\n" + result["markdown"] + "\n")

    sections = sorted({r[0] for r in result["aborts"]})
    aborts = totals_by(result["aborts"], 0, 1, sections, CAUSES)
    vector_rows = [[p or "none", result_label(r), n]
                   for p, r, _, n in result["vectors"]]
    outcomes = ("done", "compare failed", "error")
    phases = sorted({r[0] for r in vector_rows},
                    key=lambda p: (PHASES + (p,)).index(p))
    vectors = totals_by(vector_rows, 0, 1, phases, outcomes)

    fig, (left, right) = plt.subplots(
        1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    stacked_bars(left, sections, aborts, CAUSES,
                 ["#4c72b0", "#dd8452", "#c44e52", "#8c8c8c"])
    left.set_title("rseq aborts per critical section, by cause", pad=24)
    left.set_ylabel("aborts (rseq_ip_fixup events)")
    stacked_bars(right, phases, vectors, outcomes,
                 ["#55a868", "#ccb974", "#c44e52"],
                 empty="no cpu_opv calls traced" + (
                     " (run --no-cpu-opv: no cpu_opv event)"
                     if recorded_without_cpu_opv(result) else ""))
    right.set_title("cpu_opv calls per workload, by result", pad=24)
    right.set_ylabel("calls (cpu_opv events)")
    p = result["parameters"]
    fig.suptitle(f"{p['threads']} threads, {p['seconds']} s, rounds of "
                 f"{p['batch']} operations per workload; "
                 f"{result['injected']['signals']} signals and "
                 f"{result['injected']['migrations']} migrations injected; "
                 f"kernel {result['kernel']}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(outdir, "abort-causes.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def recorded_without_cpu_opv(result):
    """Whether RESULT was recorded with run --no-cpu-opv."""
    return bool(result["parameters"].get("no_cpu_opv"))


def stacked_bars(ax, keys, table, parts, colors, empty="none"):
    """Bars of KEYS stacked by PARTS, each bar labelled with its parts'
    non-zero counts (small parts would not show otherwise), the legend
    above the axes, clear of the data.  Without KEYS: the text EMPTY and
    no legend (its swatches would describe nothing)."""
    if not keys:
        ax.text(0.5, 0.5, empty, ha="center", va="center",
                transform=ax.transAxes)
        ax.set_xticks([])
        return
    bottom = [0] * len(keys)
    for part, color in zip(parts, colors):
        heights = [table[k][part] for k in keys]
        ax.bar(range(len(keys)), heights, bottom=bottom, color=color,
               label=part)
        bottom = [b + h for b, h in zip(bottom, heights)]
    for x, key in enumerate(keys):
        label = "\n".join(f"{table[key][part]} {part}" for part in parts
                          if table[key][part])
        ax.text(x, bottom[x], label, ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, max(bottom + [1]) * 1.35)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=15, ha="right", fontsize=8)
    ax.legend(fontsize=8, ncol=len(parts), loc="lower left",
              bbox_to_anchor=(0, 1.0), frameon=False)


def describe(result):
    p = result["parameters"]
    forced = sum(t["forced"] for t in result["threads"])
    lines = [f"{p['threads']} threads ({forced} with FALLBACK_ALWAYS), "
             f"{p['seconds']} s of rounds of {p['batch']} counter adds, "
             f"list pop+push and buffer pop+push; "
             f"{result['injected']['signals']} SIGUSR1 and "
             f"{result['injected']['migrations']} migrations injected; "
             f"kernel {result['kernel']}.", "",
             "| thread | forced | rounds | aborts (glibc) | aborts (trace) "
             "| fallbacks (glibc) | fallbacks (trace) |",
             "|---:|:---:|---:|---:|---:|---:|---:|"]
    for t in result["threads"]:
        lines.append(f"| {t['tid']} | {'yes' if t['forced'] else 'no'} "
                     f"| {t['rounds']} "
                     f"| {t['aborts']} | {t['traced_aborts']} "
                     f"| {t['fallbacks']} | {t['traced_fallbacks']} |")
    return "\n".join(lines)


# --- Command line -----------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the traced workload")
    r.add_argument("--threads", type=positive, default=4)
    r.add_argument("--seconds", type=float, default=3.0,
                   help="how long the threads run (at least one round)")
    r.add_argument("--batch", type=positive, default=1000)
    r.add_argument("--nodes", type=positive, default=64,
                   help="list nodes and buffer items")
    r.add_argument("--item-size", type=positive, default=1024,
                   help="bytes per buffer item: the copy is inside the "
                   "critical section, so larger items abort more often")
    r.add_argument("--forced", type=fraction, default=0.25,
                   help="fraction of threads with FALLBACK_ALWAYS")
    r.add_argument("--period", type=float, default=0.0005,
                   help="seconds between injected signals or migrations")
    r.add_argument("--buffer-kb", type=positive, default=16384,
                   help="trace buffer per CPU")
    r.add_argument("--no-cpu-opv", action="store_true",
                   help="kernels without cpu_opv: no cpu_opv event, "
                   "no forced threads")
    r.add_argument("--json", metavar="FILE")
    r.add_argument("--check", action="store_true")
    d = sub.add_parser("render", help="draw a saved result")
    d.add_argument("result", help="a JSON file from run --json, or a VM "
                   "console log holding one")
    d.add_argument("outdir", help="directory to write result.json, "
                   "abort-causes.md and abort-causes.png into (created)")
    args = parser.parse_args(argv)
    if args.command == "render" and (
            os.path.isfile(args.outdir) or
            os.path.splitext(args.outdir)[1].lower() in IMAGE_SUFFIXES):
        d.error(f"outdir {args.outdir} is a file name: render writes three "
                f"files into a directory (e.g. {os.path.splitext(args.outdir)[0]})")
    return args


IMAGE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".json", ".md")


def main(argv=None):
    args = parse_args(argv)
    if args.command == "render":
        with open(args.result) as f:
            text = f.read()
        try:
            result = (json.loads(text) if text.lstrip().startswith("{")
                      else extract_json(text))
        except ValueError as e:
            print(f"abort_causes: {args.result}: {e}", file=sys.stderr)
            return 1
        print(render(result, args.outdir))
        return 0
    from rseq import trace
    try:
        result, _ = run(args)
    except trace.TracingUnavailable as e:
        if "cpu_opv/cpu_opv" in e.missing:
            # The library's advice (Tracer(events=...)) is for its
            # callers; this script's way is its option.
            print("abort_causes: this kernel has no cpu_opv/cpu_opv trace "
                  "event (only the project's patched test kernel has it): "
                  "run with --no-cpu-opv", file=sys.stderr)
        else:
            print(f"abort_causes: {e}", file=sys.stderr)
        return 77
    print(describe(result) + "\n\n" + result["markdown"])
    if args.json:
        emit_json(result, args.json)
    if args.check:
        problems = disagreements(result)
        for problem in problems:
            print(f"abort_causes: check failed: {problem}", file=sys.stderr)
        if problems:
            return 1
        print("abort_causes: the trace agrees with glibc's counters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
