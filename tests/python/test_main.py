"""python3 -m rseq: the info command (bindings/python/rseq/__main__.py)."""

import json
import os
import subprocess
import sys

import rseq

OUT = os.environ.get("RSEQ_OUT", os.path.join(os.path.dirname(__file__),
                                              "..", "..", "out"))
LAUNCHER = os.path.join(OUT, "bin", "rseq-python")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(rseq.__file__))


def _run(*args, launcher=LAUNCHER):
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run([launcher, "-m", "rseq", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_info_command_describes_this_process():
    r = _run()
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(":", 1) for line in r.stdout.splitlines())
    assert set(lines) == {"kernel", "registered", "patched glibc", "cpu",
                          "node", "mm_cid", "per-CPU slots", "cpu_opv",
                          "fallback mode"}
    assert lines["patched glibc"].strip() == "yes"
    assert lines["registered"].strip().startswith("yes, ")
    assert int(lines["cpu"]) in os.sched_getaffinity(0)
    assert lines["fallback mode"].strip() == "AUTO"


def test_info_command_json_agrees_with_the_package():
    r = _run("--json")
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    for key, value in rseq.info().items():
        if key != "nr_slots":
            assert facts[key] == value, key
    assert facts["cpu"] in os.sched_getaffinity(0)
    assert facts["fallback_mode"] == "AUTO"


def test_info_command_under_the_system_glibc_says_what_is_missing():
    r = _run(launcher="/usr/bin/python3")
    assert r.returncode == 0, r.stderr
    assert "patched glibc:    no" in r.stdout
    assert "fallback mode:    unavailable: " in r.stdout
    assert "Traceback" not in r.stderr


def test_info_command_rejects_unknown_options():
    r = _run("--bogus")
    assert r.returncode == 2
    assert "usage: python3 -m rseq" in r.stderr and "Traceback" not in r.stderr


def test_children_run_under_the_patched_glibc_through_rseq_python():
    """docs/python.md: sys.executable's children run under the system
    glibc; RSEQ_PYTHON (set by rseq-python) starts them under ours."""
    probe = "import rseq; print(rseq.info()['patched_glibc'])"
    launcher = os.environ.get("RSEQ_PYTHON")
    assert launcher and os.path.basename(launcher) == "rseq-python", \
        "rseq-python did not set RSEQ_PYTHON"
    ours = subprocess.run([launcher, "-c", probe], capture_output=True,
                          text=True, timeout=60)
    theirs = subprocess.run([sys.executable, "-c", probe],
                            env=dict(os.environ, PYTHONPATH=PACKAGE_PARENT),
                            capture_output=True, text=True, timeout=60)
    assert ours.stdout.strip() == "True", ours.stderr
    assert theirs.stdout.strip() == "False", theirs.stderr
