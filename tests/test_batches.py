"""Every shipped batch and problem file reads without a usage error under its driver, and
every batch only names files that exist (checked by planning it, which resolves every
--batch)."""

import re
from pathlib import Path

import pytest
from conftest import run_cli

from benchdnn_py.drivers import DRIVERS
from benchdnn_py.engine import harness

ROOT = Path(__file__).resolve().parent.parent
# (batches/perf_targets.json is data that batches name, not a batch: test_perf_targets.py)
FILES = sorted(p for d in ("batches", "problems") for p in (ROOT / d).iterdir()
               if p.is_file() and p.suffix != ".json")


def driver_of(path: Path) -> str:
    """The driver a file is named for (``<driver>_*``, ``shapes_<driver>_*``,
    ``perf_<driver>*``; the longest name that fits, so deconv is not conv), else conv."""
    fits = [name for name in DRIVERS
            if any(path.name.startswith(p + name) for p in ("", "shapes_", "perf_"))]
    return max(fits, key=len, default="conv")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_file_plans(path):
    plan = harness.plan([f"--{driver_of(path)}", f"--batch={path}"])
    assert plan.cases, path
    assert plan.warnings == []


def test_every_driver_has_a_ci_batch_that_ci_runs():
    names = {p.name for p in (ROOT / "batches").iterdir()}
    ci_script = (ROOT / ".ci" / "run").read_text()
    for name in DRIVERS:
        assert f"{name}_ci" in names, name
        assert f"batches/{name}_ci" in ci_script, name


def test_batches_start_with_reset():
    for path in (p for p in FILES if p.parent.name == "batches"):
        first = next(l for l in path.read_text().splitlines() if l.strip() and not l.startswith("#"))
        assert first == "--reset", path


# Cases of conv_ci's two-thread sample (CI's multi-thread pass) whose reductions add
# per-thread partial results: col2im's per-thread diff_src, and the k splits of backward
# weights on outer products (plain and through a reorder route).
THREADED = ("--dir=BWD_D", "ic8ih5oc8oh9kh3ph3", "--dir=BWD_WB", "mb1ic64ih56oc128kh1",
            "g128mb1ic128ih56oc128kh3ph1", "--stag=axb", "--dtag=axb", "mb1ic64ih56oc128kh1")


def test_the_multi_thread_pass_catches_a_defect_of_the_multi_thread_reductions():
    # CI runs a sample of conv_ci, deconv_ci and pool_ci on every core of one worker
    ci_script = (ROOT / ".ci" / "run").read_text()
    assert "THREADS_PASS=(--timeout=600 --shard=0/20)" in ci_script
    for name in ("conv_ci", "deconv_ci", "pool_ci"):
        assert ci_script.count(f"batches/{name}\n") == 2, name
    # split_dropped leaves the last thread's partial results out: on two threads the
    # checks fail every case; on one thread there is nothing to leave out
    fault = {"BENCHDNN_PY_TEST_FAULT": "split_dropped"}
    two = run_cli("--conv", "--timeout=600", *THREADED, env={**fault, "OMP_NUM_THREADS": "2"})
    one = run_cli("--conv", "--timeout=600", *THREADED, env={**fault, "OMP_NUM_THREADS": "1"})
    assert two.code == 1
    verdicts = [line.split(" ")[0] for line in two.lines if re.match(r"\d+:", line)]
    assert verdicts[:4] == ["0:FAILED", "1:FAILED", "2:FAILED", "3:FAILED"]
    assert one.code == 0 and one.summary()["passed"] == 4
