"""A case as a task (engine/execute.py): the problem is made once when the run is planned
and travels with the task, so every driver's problem must survive the trip to a worker."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from benchdnn_py.drivers import DRIVERS
from benchdnn_py.engine import harness, runner

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_every_drivers_problems_survive_pickling(name):
    plan = harness.plan([f"--{name}", f"--batch={ROOT / 'batches' / f'{name}_ci'}"])
    prepared = runner.prepare(plan)
    assert prepared
    for p in prepared[:: max(1, len(prepared) // 200)]:
        task = pickle.loads(pickle.dumps(p.task))
        assert task.prb is not None and task.error == "", p.repro
        assert task.prb == p.prb
        assert task.prb.repro(False) == p.prb.repro(False) and task.repro == p.repro


def test_a_descriptor_error_travels_as_its_message():
    (p,) = runner.prepare(harness.plan(["--conv", "ic8ih8oc8kh3xx1"]))
    task = pickle.loads(pickle.dumps(p.task))
    assert task.prb is None and "xx1" in task.error and task.repro == p.repro


@pytest.mark.parametrize("mode, timed", [("C", False), ("P", True), ("CP", True)])
def test_numpy_asks_for_huge_pages_only_for_a_timed_case(mode, timed):
    from numpy._core import multiarray

    from benchdnn_py.engine import execute
    (p,) = runner.prepare(harness.plan(["--conv", f"--mode={mode}", "--max-ms-per-prb=10",
                                        "ic8ih8oc8kh3ph1"]))
    before = multiarray._set_madvise_hugepage(not timed)
    try:
        outcome = execute.run_task(p.task)
        assert outcome.status.name == ("EXECUTED" if mode == "P" else "PASSED")
        assert multiarray._get_madvise_hugepage() is timed
    finally:
        multiarray._set_madvise_hugepage(before)
