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
