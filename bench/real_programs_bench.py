#!/usr/bin/python3
"""Wall time and peak RSS of real programs (Debian's xz, zstd, git and
python3) under the patched glibc with malloc's per-CPU cache off and on,
and under the system glibc: the workloads of
tests/rseq.malloc/real_programs.py, timed.

  real_programs_bench.py OUT ROUNDS

OUT is the build directory (out/: rseq-run in out/bin, results in
out/bench/real-programs).  Every round runs every workload once per
column, the columns of a workload back to back in an order rotated each
round; the table has the medians and the ratios on/off and system/off.
bench/real-programs-bench.sh is the entry point (make bench).

Wall time is the program's own, from the probe's constructor to its
destructor (real-programs/malloc-probe.c), so that rseq-run's checks
before it execs the dynamic linker (about 30 ms of shell, od and awk) do
not count against the patched columns; git repack's includes starting
pack-objects through rseq-run in those columns.  Peak RSS is the
largest VmHWM of the run's processes that the probe saw (the program;
for git, repack and the pack-objects it starts, which dominates; for
python3, the interpreter, which is larger than the children it starts).
Not ru_maxrss: Linux carries it across execve (bench/vmhwm-preload.c).

Environment (smaller values make a smoke run):
  REAL_PROGRAMS_BENCH_MIB        the compressors' input, MiB           8
  REAL_PROGRAMS_BENCH_COMMITS    the git history's commits             3000
  REAL_PROGRAMS_BENCH_WORKLOADS  which workloads run, by name
                                 ("xz zstd git python")                all
"""

import os
import shutil
import statistics
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "rseq.malloc"))
import real_programs as rp  # noqa: E402  (the test's workloads)

COLUMNS = ("off", "on", "system")
HEADINGS = {"off": "cache off", "on": "cache on (%s)" % rp.CACHE_ON}


class Bench:
    """The three glibcs, the inputs, and every sample."""

    def __init__(self, out, work):
        self.work = work
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.join(work, "tmp"))
        self.patched = rp.Patched(os.path.join(out, "bin"))
        if self.patched.version is None:
            sys.exit("real_programs_bench.py: no patched glibc under %s (run make)" % out)
        probe = rp.build_probe(work)
        self.glibcs = {
            "off": rp.Glibc("off", work, probe, self.patched.rseq_run),
            "on": rp.Glibc("on", work, probe, self.patched.rseq_run, rp.CACHE_ON),
            "system": rp.Glibc("system", work, probe),
        }
        self.samples = {}  # (workload, column) -> [(seconds, kB)]
        self.system_version = None
        self.log = open(os.path.join(work, "runs.log"), "w")

    def check(self, column, what, run):
        """Exit if RUN failed or ran under another glibc than COLUMN's."""
        record = run.record()
        if run.status != 0:
            why = "exit status %s: %s" % (run.status, " | ".join(rp.tail(run.output(), 5)))
        elif column == "system":
            why = self.patched.system_problem(record)
        else:
            why = self.patched.problem(record, cache_on=column == "on")
            if why is None and column == "off" and record["percpu_forced"] != "none":
                why = "the cache is on in the cache-off column"
        if why:
            sys.exit("real_programs_bench.py: %s, %s: %s" % (what, column, why))

    def add(self, what, column, run):
        self.check(column, what, run)
        if column == "system":
            self.system_version = run.record()["glibc"]
        # The process of the peak (git's pack-objects) is the one whose
        # use of the cache the log shows.
        peak = max(run.records, key=lambda r: int(r.get("vmhwm_kb", -1)))
        kb = int(peak["vmhwm_kb"])
        seconds = int(run.record()["wall_ns"]) / 1e9
        self.samples.setdefault((what, column), []).append((seconds, kb))
        self.log.write("%s\t%s\t%.3f s (%.3f s with the launcher)\t%d kB\t%s\n"
                       % (what, column, seconds, run.seconds, kb,
                          rp.own_use(peak) if column == "on" else "-"))
        self.log.flush()


def label(name, args, step):
    """"xz -T2 compress": the program, its thread count, the step."""
    return " ".join([name] + [a for a in args if a.startswith("-T")] + [step])


def compressor(bench, name, text, column):
    """Compress TEXT and decompress the system's result under COLUMN."""
    prog = shutil.which(name)
    compress, decompress = rp.COMPRESSORS[name]
    glibc = bench.glibcs[column]
    packed = os.path.join(bench.work, "%s-%s.out" % (name, column))
    run = glibc.run([prog] + compress, stdin=text, stdout_path=packed, timeout=600)
    bench.add(label(name, compress, "compress"), column, run)
    reference = os.path.join(bench.work, "%s-reference.out" % name)
    if not os.path.exists(reference):
        os.rename(packed, reference)
    back = os.path.join(bench.work, "%s-%s.back" % (name, column))
    run = glibc.run([prog] + decompress, stdin=reference, stdout_path=back, timeout=600)
    bench.add(label(name, decompress, "decompress"), column, run)
    if not rp.same_files(back, text):
        sys.exit("real_programs_bench.py: %s under %s did not give the input back" % (name, column))


def git_repack(bench, base, column):
    """Repack a fresh copy of BASE under COLUMN."""
    repo = os.path.join(bench.work, "git-" + column)
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(base, repo, symlinks=True)
    run = bench.glibcs[column].run([shutil.which("git"), "-C", repo] + rp.REPACK,
                                   git=True, timeout=600)
    bench.add("git " + " ".join(rp.REPACK[2:]), column, run)


def python_tests(bench, column):
    d = os.path.join(bench.work, "python-" + column)
    os.makedirs(d, exist_ok=True)
    run = bench.glibcs[column].run([rp.PYTHON, "-m", "test"] + rp.PYTHON_TESTS, cwd=d,
                                   stdout_path=os.path.join(d, "out.txt"), timeout=600)
    bench.add("python3 -m test " + " ".join(rp.PYTHON_TESTS), column, run)


def workloads(bench):
    """{name: function(column)}, the inputs made once."""
    chosen = os.environ.get("REAL_PROGRAMS_BENCH_WORKLOADS", "xz zstd git python").split()
    mib = int(os.environ.get("REAL_PROGRAMS_BENCH_MIB", "8"))
    commits = int(os.environ.get("REAL_PROGRAMS_BENCH_COMMITS", "3000"))
    text = os.path.join(bench.work, "input.txt")
    rp.make_text(text, mib << 20)
    base = os.path.join(bench.work, "git-base")
    all_ = {
        "xz": lambda c: compressor(bench, "xz", text, c),
        "zstd": lambda c: compressor(bench, "zstd", text, c),
        "git": lambda c: git_repack(bench, base, c),
        "python": lambda c: python_tests(bench, c),
    }
    unknown = set(chosen) - set(all_)
    if unknown:
        sys.exit("REAL_PROGRAMS_BENCH_WORKLOADS: unknown %s (known: %s)"
                 % (" ".join(sorted(unknown)), " ".join(all_)))
    if "git" in chosen:
        rp.make_repository(base, commits)
    return {name: all_[name] for name in chosen}, mib, commits


def ratio(a, b):
    return "%.2fx" % (a / b) if b else "n/a"


def table(bench, rounds, system_version):
    """The Markdown table of medians and ratios."""
    head = ["workload", "metric", HEADINGS["off"], HEADINGS["on"], "on / off",
            "system glibc %s" % system_version, "system / off"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * 5]
    names = []
    for (what, _column) in bench.samples:
        if what not in names:
            names.append(what)
    for what in names:
        for i, metric, fmt in ((0, "wall s", "%.2f"), (1, "peak RSS MiB", "%.1f")):
            med = {c: statistics.median(s[i] for s in bench.samples[(what, c)]) for c in COLUMNS}
            if i == 1:
                med = {c: v / 1024 for c, v in med.items()}
            lines.append("| `%s` | %s | %s | %s | %s | %s | %s |" % (
                what, metric, fmt % med["off"], fmt % med["on"], ratio(med["on"], med["off"]),
                fmt % med["system"], ratio(med["system"], med["off"])))
    title = ("Real programs under the patched glibc %s, cache off and on, and the system "
             "glibc: median of %d round(s)" % (bench.patched.version, rounds))
    return "### %s\n\n%s\n" % (title, "\n".join(lines))


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        sys.exit("usage: real_programs_bench.py OUT ROUNDS")
    out, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    bench = Bench(out, os.path.join(out, "bench", "real-programs"))
    chosen, mib, commits = workloads(bench)
    for r in range(rounds):
        for name, run in chosen.items():
            # Rotated, so that no column always runs first (cold caches)
            # or right after the heaviest one.
            for column in COLUMNS[r % 3:] + COLUMNS[:r % 3]:
                run(column)
        print("round %d of %d done" % (r + 1, rounds), file=sys.stderr, flush=True)
    text = table(bench, rounds, bench.system_version)
    text += ("\nInputs: %d MiB of generated text; a git history of %d commits; "
             "%d CPUs.\n" % (mib, commits, os.cpu_count()))
    print(text)
    with open(os.path.join(bench.work, "results.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
