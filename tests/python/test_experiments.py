"""The example experiments: they create their output directory, and
their pictures are readable (one labelled row per thread, mm_cid shown,
legends outside the data, a log2 thread axis)."""

import importlib.util
import os
import subprocess

import pytest

import rseq

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "bindings",
                        "python", "examples")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(rseq.__file__))
OUT = os.environ.get("RSEQ_OUT", os.path.join(os.path.dirname(__file__),
                                              "..", "..", "out"))
LAUNCHER = os.path.join(OUT, "bin", "rseq-python")


def _load(name):
    pytest.importorskip("matplotlib")
    path = os.path.join(EXAMPLES, f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script, *args):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run([LAUNCHER, os.path.join(EXAMPLES, script),
                           *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)


def _legend_outside(fig, ax, legend):
    fig.canvas.draw()
    box = legend.get_window_extent()
    area = ax.get_window_extent()
    return not box.overlaps(area)


def test_migration_timeline_creates_its_output_directory(tmp_path):
    out = tmp_path / "not" / "yet" / "timeline.png"
    r = _run("migration_timeline.py", out, 2, 0.3)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0
    assert "mm_cid" in r.stdout.splitlines()[0], r.stdout


def test_migration_timeline_refuses_an_unwritable_path_before_running(
        tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = _run("migration_timeline.py", blocker / "x.png", 1, 30)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and str(blocker) in r.stderr, r.stderr


@pytest.mark.parametrize("name,message", [
    ("t.txt", ".txt is not an image format"),
    ("t", "no suffix"),
    ("dir/", "is a directory"),
])
def test_migration_timeline_refuses_a_bad_output_name_before_running(
        tmp_path, name, message):
    """Checked before the run (30 s here): a suffix matplotlib cannot
    write, none, or a directory (which wrote a hidden DIR/.png)."""
    target = str(tmp_path / name) + ("/" if name.endswith("/") else "")
    r = _run("migration_timeline.py", target, 1, 30)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and message in r.stderr, r.stderr
    assert not list(tmp_path.rglob(".png")), "wrote a hidden .png"


def _fake_samples(nthreads=3, n=200):
    samples = []
    for i in range(nthreads):
        samples.append([(k * 0.01, (k // 50 + i) % 2, (k // 70 + i) % 3)
                        for k in range(n)])
    return samples


def test_migration_timeline_plot_is_readable():
    timeline = _load("migration_timeline")
    fig = timeline.plot(_fake_samples(), ncpus=2, mm_cid=True)
    cpu_ax, cid_ax = fig.axes[:2]
    for ax in (cpu_ax, cid_ax):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == ["thread 0", "thread 1", "thread 2"], labels
        legend = ax.get_legend()
        assert legend is not None
        assert _legend_outside(fig, ax, legend)
    cpu_legend = [t.get_text() for t in cpu_ax.get_legend().get_texts()]
    assert cpu_legend == ["CPU 0", "CPU 1"]
    cid_legend = [t.get_text() for t in cid_ax.get_legend().get_texts()]
    assert cid_legend == ["mm_cid 0", "mm_cid 1", "mm_cid 2"]


def test_migration_timeline_without_mm_cid_says_so():
    timeline = _load("migration_timeline")
    samples = [[(t, c, -1) for t, c, _ in s] for s in _fake_samples()]
    fig = timeline.plot(samples, ncpus=2, mm_cid=False)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("mm_cid" in t and "not available" in t for t in texts), texts


def test_counters_plot_has_a_log2_thread_axis():
    counters = _load("counters")
    results = {name: [4.0, 3.0, 2.0, 1.0] for name, _ in counters.KINDS}
    fig = counters.plot([1, 2, 4, 8], results, ncpu=2)
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_xscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert {"1", "2", "4", "8"} <= set(labels), labels


def test_counters_creates_its_output_directory(tmp_path):
    out = tmp_path / "new" / "counters.png"
    r = _run("counters.py", out, 2000)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0


@pytest.mark.parametrize("script,args", [
    ("migration_timeline.py", ["t.png", "x"]),
    ("migration_timeline.py", ["t.png", "2", "-1"]),
    ("counters.py", ["c.png", "0"]),
])
def test_experiments_reject_bad_arguments_clearly(tmp_path, script, args):
    r = _run(script, *[tmp_path / a if a.endswith(".png") else a
                       for a in args])
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "usage:" in r.stderr, r.stderr


# abort_causes.py: the parts that run on the host (the traced run
# itself needs the test kernel: tests/rseq.vm runs it there).

def _abort_causes_result(**changes):
    result = {
        "parameters": {"threads": 2, "seconds": 1.0, "batch": 10, "nodes": 8,
                       "forced": 0.5, "period": 0.01},
        "kernel": "6.12.0-test",
        "injected": {"signals": 3, "migrations": 2},
        "lost_events": 0,
        "threads": [
            {"tid": 11, "forced": False, "rounds": 3, "aborts": 7, "traced_aborts": 7,
             "fallbacks": 0, "traced_fallbacks": 0},
            {"tid": 12, "forced": True, "rounds": 2, "aborts": 0, "traced_aborts": 0,
             "fallbacks": 5, "traced_fallbacks": 5}],
        "aborts": [["addv (inline, _percpu.so)", "preemption", 4],
                   ["addv (inline, _percpu.so)", "signal", 2],
                   ["cmpeqv_storev (libc)", "migration", 1]],
        "aborts_by_phase": [["counter", "preemption", 4]],
        "vectors": [["list", 0, 1, 3], ["list", 1, 0, 2],
                    ["buffer", -22, 0, 1]],
        "problems": [],
        "markdown": "| section | preemption |\n|---|---:|\n| addv | 4 |",
    }
    result.update(changes)
    return result


def test_abort_causes_renders_tables_and_picture(tmp_path):
    module = _load("abort_causes")
    path = module.render(_abort_causes_result(), str(tmp_path / "new"))
    md = (tmp_path / "new" / "abort-causes.md").read_text()
    assert "| 11 | no | 3 | 7 | 7 | 0 | 0 |" in md
    assert "| 12 | yes | 2 | 0 | 0 | 5 | 5 |" in md
    assert "| addv | 4 |" in md
    import matplotlib.image
    height, width = matplotlib.image.imread(path).shape[:2]
    assert width > 1000 and height > 500


def test_abort_causes_without_cpu_opv_shows_no_empty_legend(tmp_path):
    """run --no-cpu-opv records no vectors: the cpu_opv panel says why
    instead of drawing three legend swatches over nothing."""
    module = _load("abort_causes")
    result = _abort_causes_result(vectors=[])
    result["parameters"]["no_cpu_opv"] = True
    import matplotlib.pyplot as plt
    drawn = []
    real = plt.subplots

    def subplots(*args, **kwargs):
        fig, axes = real(*args, **kwargs)
        drawn.append(axes)
        return fig, axes

    plt.subplots = subplots
    try:
        module.render(result, str(tmp_path / "r"))
    finally:
        plt.subplots = real
    right = drawn[0][1]
    assert right.get_legend() is None
    texts = [t.get_text() for t in right.texts]
    assert any("--no-cpu-opv" in t for t in texts), texts


def test_abort_causes_render_refuses_a_file_name_as_outdir(tmp_path):
    saved = tmp_path / "result.json"
    saved.write_text("{}")
    r = _run("abort_causes.py", "render", saved, tmp_path / "x.png")
    assert r.returncode == 2, r.stderr
    assert "is a file name" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.png").exists()


def test_abort_causes_advises_its_option_without_the_cpu_opv_event(
        monkeypatch, capsys):
    module = _load("abort_causes")
    from rseq import trace

    def unavailable(args):
        raise trace.TracingUnavailable(2, "the kernel lacks trace events: "
                                       "cpu_opv/cpu_opv (...); trace without "
                                       "them with Tracer(events=...)",
                                       ("cpu_opv/cpu_opv",))
    monkeypatch.setattr(module, "run", unavailable)
    assert module.main(["run", "--seconds", "0.1"]) == 77
    err = capsys.readouterr().err
    assert "--no-cpu-opv" in err and "Tracer(events" not in err, err


def test_malloc_cache_lines_of_equal_caches_stay_apart(tmp_path):
    """Two caches with the same drain curve: different line styles, so
    that one does not hide the other; the title says what ran."""
    module = _load("malloc_cache")
    samples = [(t * 0.01, {0: {"count": t, "drains": t // 10},
                           1: {"count": t, "drains": t // 10}})
               for t in range(50)]
    import matplotlib.pyplot as plt
    module.plot(samples, str(tmp_path / "m.png"), "title")
    fig = plt.gcf()
    for ax in fig.axes:
        lines = ax.get_lines()
        if len(lines) == 2:
            assert lines[0].get_linestyle() != lines[1].get_linestyle()
    plt.close(fig)


def test_abort_causes_reads_its_result_from_a_console_log(tmp_path):
    module = _load("abort_causes")
    result = _abort_causes_result()
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.emit_json(result, "-")
    noisy = "[   1.0] kernel says hi\r\n" + "".join(
        f"vm| {line}\r\n" for line in out.getvalue().splitlines())
    assert module.extract_json(noisy) == result
    with pytest.raises(ValueError):
        module.extract_json(noisy.replace("@@RESULT-END", ""))


@pytest.mark.parametrize("change,message", [
    ({"lost_events": 3}, "lost"),
    ({"problems": ["list holds 7 elements"]}, "list holds"),
    ({"aborts": []}, "no abort"),
    ({"aborts": [["unknown 0x1", "signal", 1],
                 ["x", "migration", 1]]}, "unknown"),
    ({"aborts": [["x", "preemption", 1]]}, "signals were injected"),
])
def test_abort_causes_check_reports_each_problem(change, message):
    module = _load("abort_causes")
    assert module.disagreements(_abort_causes_result()) == []
    problems = module.disagreements(_abort_causes_result(**change))
    assert any(message in p for p in problems), problems


def test_abort_causes_check_compares_each_thread_with_glibc():
    module = _load("abort_causes")
    result = _abort_causes_result()
    result["threads"][0]["traced_aborts"] = 6
    result["threads"][1]["traced_fallbacks"] = 4
    problems = module.disagreements(result)
    assert any("thread 11: glibc counted 7 aborts, the trace 6" in p
               for p in problems), problems
    assert any("thread 12: glibc counted 5 fallbacks, the trace 4" in p
               for p in problems), problems


@pytest.mark.parametrize("args", [["run", "--threads", "0"],
                                  ["run", "--forced", "2"],
                                  ["frobnicate"]])
def test_abort_causes_rejects_bad_arguments(args):
    r = _run("abort_causes.py", *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "usage:" in r.stderr, r.stderr


def _private_tracefs_command():
    """A command prefix that runs its argument with tracefs mounted in a
    private mount namespace (nothing stays mounted on the host), or a
    reason why this machine cannot."""
    if os.geteuid() != 0:
        return None, "tracing needs root"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         "mount -t tracefs nodev /sys/kernel/tracing && "
         "test -d /sys/kernel/tracing/events/rseq/rseq_ip_fixup"],
        capture_output=True, text=True)
    if probe.returncode != 0:
        return None, ("no private tracefs with the rseq events here: "
                      + (probe.stderr.strip() or "rseq events missing"))
    return ["unshare", "-m", "sh", "-c",
            'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"',
            "sh"], None


def test_abort_causes_agrees_with_glibc_on_the_host_kernel(tmp_path):
    """The whole experiment on the host kernel, which has the rseq events
    but not cpu_opv: every traced abort matches glibc's count, thread by
    thread (the VM runs it with cpu_opv too)."""
    prefix, reason = _private_tracefs_command()
    if prefix is None:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    r = subprocess.run(prefix + [
        LAUNCHER, os.path.join(EXAMPLES, "abort_causes.py"), "run",
        "--no-cpu-opv", "--check", "--seconds", "3",
        "--json", str(tmp_path / "r.json")],
        env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the trace agrees with glibc's counters" in r.stdout
    import json
    result = json.loads((tmp_path / "r.json").read_text())
    traced = sum(n for _, _, n in result["aborts"])
    counted = sum(t["aborts"] for t in result["threads"])
    assert traced == counted > 0
