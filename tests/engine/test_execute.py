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
