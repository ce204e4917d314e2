#!/usr/bin/python3
"""Programs nobody here wrote, under the patched glibc with malloc's
per-CPU cache on (issue 33, "real programs"): Debian's own binaries,
started by rseq-run with GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid (and
percpu_local=1, so that their own frees pass through the cache), must
do exactly what they do under the system glibc.

  real_programs.py BIN WORK

BIN holds rseq-run (out/bin), WORK is a scratch directory.  One result
line each ("PASS: what", "FAIL: what: why" with "    | " detail lines,
"UNSUPPORTED: what: why"), which malloc.exp reports; exits 0 once every
result is printed.

  xz -T2, zstd -T2  a 4 MiB generated text compressed in 1 MiB blocks
                    (so that both threads work): the compressed bytes
                    are those of the system glibc's run, and decompressed
                    under the cache they give the input back
  git               a scratch repository of 10,163 objects (fast-import
                    of a generated history): `git repack -a -d -f
                    --threads=2`, then `git fsck --full --strict`, and
                    `git rev-list --all --objects` and `git count-objects
                    -v` (all but the sizes, which depend on the threads'
                    delta choices) as after the system glibc's repack
  python3           Debian's test suite of threading (test_threading,
                    test_queue, test_thread, test_threading_local; the
                    libpython3.11-testsuite package) passes with the same
                    tests run and skipped as under the system glibc

Proof that a run used the patched glibc with the cache on:
real-programs/malloc-probe.c, preloaded into every run (the comparison
runs too), records for each process its libc's file and version and
malloc_info's per-CPU element, as the program left it and after the
probe overflowed the thread cache; the latter is there only when
glibc.malloc.percpu is on.  rseq-run starts the program itself under
the patched glibc, and programs it starts in turn under the system
glibc: git repack's `git pack-objects`, which does the threaded work,
gets the patched one through a `git` in GIT_EXEC_PATH that starts the
real one with rseq-run.  The test suite's python3 children (the tests
that start a new interpreter) run under the system glibc.

Standard library only (Debian's /usr/bin/python3); the probe is built
with the system gcc.  bench/real_programs_bench.py times the same
workloads.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time

# percpu_local=1: the caches take each thread's own chunks too, not only
# those freed away from their arena's thread, so that these programs,
# whose threads seldom free each other's chunks, pass their frees
# through the cache.
CACHE_ON = "glibc.malloc.percpu=mm_cid:glibc.malloc.percpu_local=1"
PYTHON = "/usr/bin/python3"
PYTHON_TESTS = ["test_threading", "test_queue", "test_thread",
                "test_threading_local"]
# Each compressor's arguments, compressing and decompressing standard
# input: 1 MiB blocks (xz) or jobs (zstd), so that 4 MiB keep both
# threads busy.
COMPRESSORS = {
    "xz": (["-T2", "--block-size=1MiB", "-6", "-c"], ["-d", "-T2", "-c"]),
    "zstd": (["-q", "-T2", "-B1MiB", "-12", "-c"], ["-q", "-d", "-c"]),
}
# -f: compute every delta again, the threads' work, rather than reuse
# fast-import's.
REPACK = ["-c", "gc.auto=0", "repack", "-a", "-d", "-f", "--threads=2"]
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE_SOURCE = os.path.join(HERE, "real-programs", "malloc-probe.c")
PROBE_VAR = "REAL_PROGRAMS_PROBE_FILE"


# --- result lines -----------------------------------------------------

def report_pass(what):
    print("PASS: %s" % what, flush=True)


def report_fail(what, why, details=()):
    print("FAIL: %s: %s" % (what, why))
    for line in list(details)[:30]:
        print("    | %s" % line)
    sys.stdout.flush()


def report_unsupported(what, why):
    print("UNSUPPORTED: %s: %s" % (what, why), flush=True)


def tail(text, lines=15):
    """The last LINES lines of TEXT (bytes or str), for detail lines."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text.rstrip("\n").split("\n")[-lines:]


# --- generated inputs -------------------------------------------------

class Lcg:
    """A small deterministic generator: the inputs must not depend on
    the Python version's random module."""

    def __init__(self, seed):
        self.state = seed

    def next(self, bound):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % bound


def make_text(path, size):
    """SIZE bytes of numbered lines of words of a fixed vocabulary:
    compressible as text is, so the compressors search and match."""
    g = Lcg(33)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(letters[g.next(26)] for _ in range(2 + g.next(9)))
             for _ in range(5000)]
    lines, total, n = [], 0, 0
    while total < size:
        line = "%07d %s\n" % (n, " ".join(vocab[g.next(len(vocab))] for _ in range(12)))
        lines.append(line)
        total += len(line)
        n += 1
    with open(path, "wb") as f:
        f.write("".join(lines).encode()[:size])


def fast_import_stream(commits, files=40, lines=200):
    """A history for git fast-import: COMMITS commits on main, each
    changing one line of 5 of FILES files (so that the blobs delta
    against each other), with fixed identities and dates."""
    g = Lcg(7)
    content = [["line %d of file %d %016x\n" % (j, i, g.next(2**62))
                for j in range(lines)] for i in range(files)]
    out = []
    for c in range(commits):
        when = 1700000000 + 60 * c
        msg = "commit %d\n" % c
        out.append("commit refs/heads/main\nmark :%d\n" % (c + 1))
        out.append("author A U Thor <author@example.org> %d +0000\n" % when)
        out.append("committer A U Thor <author@example.org> %d +0000\n" % when)
        out.append("data %d\n%s" % (len(msg), msg))
        if c > 0:
            out.append("from :%d\n" % c)
        for _ in range(5):
            i = g.next(files)
            content[i][g.next(lines)] = "changed in %d %016x\n" % (c, g.next(2**62))
            data = "".join(content[i]).encode()
            out.append("M 100644 inline f%03d.txt\ndata %d\n" % (i, len(data)))
            out.append(data.decode() + "\n")
    return "".join(out).encode()


# --- running a program under a glibc ----------------------------------

class Run:
    """One finished run: exit status, output, wall time and the probe's
    records of its processes (dicts of the probe's fields)."""

    def __init__(self, pid, status, stdout, stderr, seconds, records):
        self.pid, self.status = pid, status
        self.stdout, self.stderr = stdout, stderr
        self.seconds, self.records = seconds, records

    def record(self):
        """The program's own record (rseq-run execs the program, so its
        pid is the one started)."""
        for r in self.records:
            if r.get("pid") == str(self.pid):
                return r
        return None

    def output(self):
        return self.stdout + self.stderr


class Started:
    """A run in progress (Glibc.start); wait() gives its Run."""

    def __init__(self, proc, probe_file, start, stdout_file):
        self.proc, self.probe_file = proc, probe_file
        self.start_time, self.stdout_file = start, stdout_file

    def wait(self, timeout):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            out, err = self.proc.communicate()
            err = (err or b"") + b"\n(timed out after %d s)" % timeout
        seconds = time.monotonic() - self.start_time
        if self.stdout_file is not None:
            self.stdout_file.close()
        return Run(self.proc.pid, self.proc.returncode, out or b"", err or b"",
                   seconds, read_records(self.probe_file))


def read_records(path):
    """The probe's lines in PATH, as dicts."""
    records = []
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                records.append(dict(x.split("=", 1) for x in fields if "=" in x))
    return records


class Glibc:
    """The glibc a program runs under: the system's (rseq_run None) or
    the patched one through rseq-run, with TUNABLES (None: the cache
    off, the default)."""

    def __init__(self, name, work, probe, rseq_run=None, tunables=None):
        self.name, self.work, self.probe = name, work, probe
        self.rseq_run, self.tunables = rseq_run, tunables
        self.count = 0
        self.git_exec = None
        if rseq_run is not None:
            self.git_exec = self.write_git_wrapper()

    def write_git_wrapper(self):
        """A directory with a `git` that starts the real git under this
        glibc: git runs its subcommands (repack's pack-objects) through
        GIT_EXEC_PATH, and rseq-run would leave them under the system
        glibc."""
        git = shutil.which("git")
        if git is None:
            return None
        d = os.path.join(self.work, "git-exec-" + self.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "git"), "w") as f:
            f.write('#!/bin/sh\nexec %s %s "$@"\n' % (shlex.quote(self.rseq_run),
                                                     shlex.quote(git)))
        os.chmod(os.path.join(d, "git"), 0o755)
        return d

    def environment(self, probe_file, git):
        env = dict(os.environ)
        # Nothing of the caller's may choose the glibc or its malloc.
        for var in ("GLIBC_TUNABLES", "LD_PRELOAD", "LD_LIBRARY_PATH",
                    "MALLOC_CHECK_", "GIT_EXEC_PATH"):
            env.pop(var, None)
        env[PROBE_VAR] = probe_file
        env["LD_PRELOAD"] = self.probe
        env["TMPDIR"] = os.path.join(self.work, "tmp")
        if self.tunables is not None:
            env["GLIBC_TUNABLES"] = self.tunables
        if git and self.git_exec is not None:
            env["GIT_EXEC_PATH"] = self.git_exec
        return git_environment(env) if git else env

    def start(self, argv, cwd=None, stdin=None, stdout_path=None, git=False):
        """Start ARGV (its program a path); stdout to STDOUT_PATH, or
        kept."""
        self.count += 1
        probe_file = os.path.join(self.work, "probe", "%s-%d.txt" % (self.name, self.count))
        os.makedirs(os.path.dirname(probe_file), exist_ok=True)
        if os.path.exists(probe_file):
            os.unlink(probe_file)
        cmd = ([self.rseq_run] if self.rseq_run else []) + list(argv)
        out = open(stdout_path, "wb") if stdout_path else None
        stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=stdin_file,
                                stdout=out if out else subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                env=self.environment(probe_file, git),
                                start_new_session=True)
        if stdin:
            stdin_file.close()
        return Started(proc, probe_file, start, out)

    def run(self, argv, timeout=120, **kw):
        return self.start(argv, **kw).wait(timeout)


# --- the proof of what a run ran under ---------------------------------

def percpu_caches(element):
    """(caches in use, refills, flushes) of a percpu_own element."""
    def total(name):
        return sum(int(x) for x in re.findall(r' %s="(\d+)"' % name, element))
    return len(re.findall(r"<cache ", element)), total("refills"), total("flushes")


def own_use(record):
    """What the program's own frees did to the cache, in words."""
    own = record.get("percpu_own", "none")
    if not own.startswith("<percpu "):
        return "its own frees never overflowed the thread cache, so the cache stayed unused"
    caches, refills, flushes = percpu_caches(own)
    return ("its own frees reached the cache (%d cache(s) in use, %d refills, %d flushes)"
            % (caches, refills, flushes))


class Patched:
    """What the patched glibc is: its directory and version."""

    def __init__(self, bin_dir):
        self.rseq_run = os.path.join(os.path.abspath(bin_dir), "rseq-run")
        self.out = os.path.realpath(os.path.join(bin_dir, ".."))
        text = subprocess.run([self.rseq_run, "--version"], capture_output=True,
                              text=True).stdout
        m = re.search(r"glibc (\d+\.\d+)", text)
        self.version = m.group(1) if m else None
        self.no_cache_here = None

    def check_cache_starts(self, on):
        """Set no_cache_here when glibc registers no rseq area in `true`
        under ON (a kernel without rseq, a sandbox that denies it), so
        that no per-CPU cache can start; the other rseq.malloc tests
        are unsupported then too.  A cache missing for any other reason
        fails."""
        record = on.run([shutil.which("true")]).record()
        if record is not None and record.get("rseq_size") == "0":
            self.no_cache_here = ("glibc registers no rseq area here (__rseq_size 0), "
                                  "so no per-CPU cache can start")

    def problem(self, record, cache_on=True):
        """Why RECORD is not a process under the patched glibc (with the
        cache on when CACHE_ON), or None."""
        if record is None:
            return "no probe record (the probe did not load, or the program did not exit normally)"
        libc = os.path.realpath(record.get("libc", ""))
        if not libc.startswith(self.out + os.sep):
            return "its libc was %s, not the patched one" % record.get("libc")
        if record.get("glibc") != self.version:
            return "its glibc is %s, the patched one %s" % (record.get("glibc"), self.version)
        # mm_cid falls back to cpu_id on kernels before 6.3: any mode.
        forced = record.get("percpu_forced", "")
        if cache_on and not forced.startswith("<percpu "):
            return "glibc.malloc.percpu is not on in it (malloc_info: %s)" % forced[:100]
        return None

    def system_problem(self, record):
        """Why RECORD is not a process under the system glibc, or None."""
        if record is None:
            return "no probe record of the system glibc's run"
        libc = os.path.realpath(record.get("libc", ""))
        if libc.startswith(self.out + os.sep) or record.get("glibc") == self.version:
            return "the comparison ran under the patched glibc (%s)" % record.get("libc")
        if record.get("percpu_forced", "none") != "none":
            return "the comparison run has a per-CPU cache"
        return None


def check_glibcs(what, patched, on_runs, system_runs, extra="", must_use=False):
    """One result line: every run of ON_RUNS was the patched glibc with
    the cache on (and, if MUST_USE, the program's own frees reached the
    cache), every run of SYSTEM_RUNS the system glibc.  True if so."""
    if patched.no_cache_here:
        report_unsupported(what + ": under the cache", patched.no_cache_here)
        return False
    for run in system_runs:
        why = patched.system_problem(run.record())
        if why:
            report_fail(what + ": the comparison run", why)
            return False
    for run in on_runs:
        why = patched.problem(run.record())
        if why is None and must_use and not run.record()["percpu_own"].startswith("<percpu "):
            why = "its own frees never reached the per-CPU cache"
        if why:
            report_fail(what + ": under the patched glibc", why)
            return False
    mode = re.search(r'mode="(\w+)"', on_runs[0].record()["percpu_forced"]).group(1)
    report_pass("%s: ran under the patched glibc %s with %s (mode %s; the comparison "
                "under the system glibc %s); %s%s"
                % (what, patched.version, CACHE_ON, mode, system_runs[0].record()["glibc"],
                   own_use(on_runs[0].record()), extra))
    return True


def failed_run(what, run):
    """Report RUN as a failure if it exited non-zero; True if so."""
    if run.status == 0:
        return False
    report_fail(what, "exit status %s" % run.status, tail(run.output()))
    return True


# --- the programs -----------------------------------------------------

def same_files(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def compressor_roundtrip(name, ctx):
    """Compress the text under the system glibc and under the cache,
    decompress the latter under the cache."""
    compress, decompress = COMPRESSORS[name]
    if shutil.which(name) is None:
        report_unsupported(name, "%s is not installed (Debian package %s)"
                           % (name, {"xz": "xz-utils"}.get(name, name)))
        return
    prog = shutil.which(name)
    what = "%s %s" % (name, " ".join(a for a in compress if a.startswith("-T")))
    sys_out = os.path.join(ctx.work, name + "-system.out")
    on_out = os.path.join(ctx.work, name + "-on.out")
    back = os.path.join(ctx.work, name + "-on.back")
    runs = [ctx.system.run([prog] + compress, stdin=ctx.text, stdout_path=sys_out),
            ctx.on.run([prog] + compress, stdin=ctx.text, stdout_path=on_out)]
    if failed_run(what + " (system glibc)", runs[0]) or failed_run(what, runs[1]):
        return
    if same_files(sys_out, on_out):
        report_pass("%s: the compressed data (%d bytes) is byte for byte the system glibc's"
                    % (what, os.path.getsize(on_out)))
    else:
        report_fail(what, "the compressed data differs from the system glibc's (%d against %d bytes)"
                    % (os.path.getsize(on_out), os.path.getsize(sys_out)))
    runs.append(ctx.on.run([prog] + decompress, stdin=on_out, stdout_path=back))
    if failed_run(what + " decompression", runs[2]):
        return
    if same_files(back, ctx.text):
        report_pass("%s: decompressed under the cache, the data is the input" % what)
    else:
        report_fail(what, "decompressed, the data differs from the input")
    check_glibcs(what, ctx.patched, runs[1:], runs[:1])


def git_environment(env=None):
    """ENV (or ours) without the user's and the system's git
    configuration, which could set pack.threads or the like."""
    env = dict(os.environ if env is None else env)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def git_facts(repo):
    """(objects of every ref, count-objects -v but its sizes) of REPO,
    read by the system git."""
    git = shutil.which("git")
    objects = subprocess.run([git, "-C", repo, "rev-list", "--all", "--objects"],
                             capture_output=True, check=True,
                             env=git_environment()).stdout.splitlines()
    counts = subprocess.run([git, "-C", repo, "count-objects", "-v"], capture_output=True,
                            text=True, check=True, env=git_environment()).stdout
    counts = [l for l in counts.splitlines() if not l.split(":")[0].startswith("size")]
    return sorted(objects), counts


def make_repository(path, commits):
    """A repository at PATH with the generated history of COMMITS."""
    git = shutil.which("git")
    subprocess.run([git, "init", "-q", "--initial-branch=main", path], check=True,
                   env=git_environment())
    subprocess.run([git, "-C", path, "fast-import", "--quiet"],
                   input=fast_import_stream(commits), check=True, env=git_environment())


def check_git(ctx):
    what = "git " + " ".join(REPACK[2:])
    git = shutil.which("git")
    if git is None:
        report_unsupported("git", "git is not installed (Debian package git)")
        return
    base = os.path.join(ctx.work, "git-base")
    make_repository(base, 1500)
    repos = {}
    for name in ("system", "on"):
        repos[name] = os.path.join(ctx.work, "git-" + name)
        shutil.copytree(base, repos[name], symlinks=True)
    runs = {}
    for name, glibc in (("system", ctx.system), ("on", ctx.on)):
        runs[name] = glibc.run([git, "-C", repos[name]] + REPACK, git=True)
        if failed_run("%s (%s glibc)" % (what, name), runs[name]):
            return
    compare_repositories(what, base, repos)
    check_pack_objects(ctx, what, runs)


def compare_repositories(what, base, repos):
    """The repository repacked under the cache is sound and holds what
    the one repacked under the system glibc holds, all of BASE."""
    git = shutil.which("git")
    fsck = subprocess.run([git, "-C", repos["on"], "fsck", "--full", "--strict"],
                          capture_output=True, env=git_environment())
    if fsck.returncode == 0:
        report_pass("%s: git fsck --full --strict finds the repository sound" % what)
    else:
        report_fail(what, "git fsck --full --strict failed", tail(fsck.stdout + fsck.stderr))
    want, got = git_facts(repos["system"]), git_facts(repos["on"])
    if want == got and want[0] == git_facts(base)[0]:
        report_pass("%s: rev-list --all --objects (%d objects) and count-objects -v "
                    "as after the system glibc's repack" % (what, len(got[0])))
    else:
        report_fail(what, "the repository differs from the system glibc's repack",
                    ["system: %s" % " ".join(want[1]), "cache:  %s" % " ".join(got[1]),
                     "objects: %d against %d" % (len(got[0]), len(want[0]))])


def check_pack_objects(ctx, what, runs):
    """repack's pack-objects, the threaded part, ran under the cache too,
    and its own frees reached the cache."""
    if ctx.patched.no_cache_here:
        report_unsupported(what + ": under the cache", ctx.patched.no_cache_here)
        return
    packs = [r for r in runs["on"].records if " pack-objects " in r.get("cmd", "")]
    if not packs:
        report_fail(what, "no probe record of git pack-objects (repack did not start it through GIT_EXEC_PATH?)")
        return
    why = ctx.patched.problem(packs[0])
    if why is None and not packs[0].get("percpu_own", "").startswith("<percpu "):
        why = "its own frees never reached the per-CPU cache"
    if why:
        report_fail(what + ": git pack-objects", why)
        return
    check_glibcs(what, ctx.patched, [runs["on"]], [runs["system"]],
                 "; git pack-objects: " + own_use(packs[0]))


def start_python(ctx):
    """Start the test suite under both glibcs (they mostly wait on
    timeouts, so they run beside the others); None if it cannot run."""
    probe = subprocess.run([PYTHON, "-c", "import test.test_threading"],
                           capture_output=True, env={"PATH": os.environ.get("PATH", "")})
    if probe.returncode != 0:
        report_unsupported("python3 -m test", "Debian's python3 test suite is not installed "
                           "(libpython3.11-testsuite): %s" % tail(probe.stderr, 1)[0])
        return None
    argv = [PYTHON, "-m", "test", "-v"] + PYTHON_TESTS
    started = {}
    for name, glibc in (("system", ctx.system), ("on", ctx.on)):
        d = os.path.join(ctx.work, "python-" + name)
        os.makedirs(d, exist_ok=True)
        started[name] = glibc.start(argv, cwd=d, stdout_path=os.path.join(d, "out.txt"))
    return started


def python_summary(path):
    """Each test module's unittest summary: "Ran N tests" and its
    OK/FAILED line, in order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return re.findall(r"^Ran (\d+) tests? in .*\n\n(OK.*|FAILED.*)$", text, re.M)


def finish_python(ctx, started):
    what = "python3 -m test %s" % " ".join(PYTHON_TESTS)
    runs = {name: s.wait(240) for name, s in started.items()}
    out = {name: os.path.join(ctx.work, "python-" + name, "out.txt") for name in runs}
    if runs["system"].status != 0:
        report_unsupported(what, "it fails under the system glibc (exit status %s): "
                           "nothing to compare with" % runs["system"].status)
        return
    if runs["on"].status != 0:
        with open(out["on"], "rb") as f:
            report_fail(what, "exit status %s" % runs["on"].status,
                        tail(f.read() + runs["on"].stderr, 25))
        return
    want, got = python_summary(out["system"]), python_summary(out["on"])
    if want == got and len(got) == len(PYTHON_TESTS):
        report_pass("%s: passes as under the system glibc (%s)"
                    % (what, ", ".join("%s tests %s" % x for x in got)))
    else:
        report_fail(what, "its results differ from the system glibc's",
                    ["system: %s" % want, "cache:  %s" % got])
    # Its threads' frees overflow their thread caches (hundreds of
    # flushes a run): a run without any means the cache was not used.
    check_glibcs(what, ctx.patched, [runs["on"]], [runs["system"]],
                 " (%.0f s; its children run under the system glibc)" % runs["on"].seconds,
                 must_use=True)


# --- setup ------------------------------------------------------------

class Context:
    def __init__(self, bin_dir, work):
        self.work = os.path.abspath(work)
        os.makedirs(os.path.join(self.work, "tmp"), exist_ok=True)
        self.patched = Patched(bin_dir)
        self.probe = build_probe(self.work)
        self.system = Glibc("system", self.work, self.probe)
        self.on = Glibc("on", self.work, self.probe, self.patched.rseq_run, CACHE_ON)
        self.patched.check_cache_starts(self.on)
        self.text = os.path.join(self.work, "input.txt")
        make_text(self.text, 4 << 20)


def build_probe(work):
    """The probe, built with the system gcc; raises CalledProcessError."""
    so = os.path.join(work, "malloc-probe.so")
    subprocess.run(["gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", so, PROBE_SOURCE],
                   check=True, capture_output=True)
    return so


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: real_programs.py BIN WORK")
    start = time.monotonic()
    try:
        ctx = Context(sys.argv[1], sys.argv[2])
    except subprocess.CalledProcessError as e:
        report_fail("real programs: setup", "%s failed" % " ".join(e.cmd), tail(e.stderr or b""))
        return
    if ctx.patched.version is None:
        report_fail("real programs: setup", "rseq-run --version names no patched glibc (run make)")
        return
    python = start_python(ctx)
    compressor_roundtrip("xz", ctx)
    compressor_roundtrip("zstd", ctx)
    check_git(ctx)
    if python is not None:
        finish_python(ctx, python)
    print("(real programs: %.0f s)" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
