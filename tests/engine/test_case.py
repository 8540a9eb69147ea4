"""The case engine (engine/case.py): the timing helpers every driver's case uses."""

from __future__ import annotations

import pytest

from benchdnn_py.engine import case
from benchdnn_py.engine.case import CaseResult, RunContext
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.engine.timing import MachineGuard
from benchdnn_py.status import Status


@pytest.mark.parametrize("reading,degraded", [(190.0, False), (90.0, True)])
def test_measure_into_times_between_probes_and_says_when_the_machine_was_degraded(
        monkeypatch, reading, degraded):
    probes = []
    guard = MachineGuard(lambda: probes.append(reading) or reading, lambda: 200.0,
                         lambda: 2, lambda s: None)
    monkeypatch.setattr(case, "machine_guard", lambda: guard)
    calls = []
    res = CaseResult(Status.EXECUTED)
    ctx = RunContext(GlobalSettings(fix_times_per_prb=2), 0, lambda line: None)
    times = case.measure_into(res, lambda: calls.append(1), ctx)
    assert len(times) == 2 and len(probes) >= 2
    assert res.machine.degraded is degraded and res.machine.attempts == (3 if degraded else 1)
    assert len(calls) == 3 * res.machine.attempts
    assert [d.startswith("perf guard: ") for d in res.diagnostics] == ([True] if degraded else [])
    # --perf-guard=false: the plain loop, no probes
    res = CaseResult(Status.EXECUTED)
    ctx = RunContext(GlobalSettings(fix_times_per_prb=2, perf_guard=False), 0, lambda l: None)
    case.measure_into(res, lambda: calls.append(1), ctx)
    assert res.machine is None and res.diagnostics == []


class _Bound:
    def run(self):
        pass

    def collect(self):
        pass

    def breach(self):
        return ""


class _Steps:
    """Just enough of a driver's steps for _execute's correctness path."""

    def layouts(self, prb, prim):
        return ""

    def prepare(self, prb, prim, perf):
        return _Bound()

    def reference(self, prb, bound):
        return None

    def judge(self, prb, bound, expected, res, verbose):
        res.status = Status.PASSED


class _Prim:
    info = ""

    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("check,name,status", [
    (True, "ref:any", Status.FAILED), (True, "gemm_conv:avx512", Status.PASSED),
    (False, "ref:any", Status.PASSED)])
def test_check_ref_impl_fails_a_case_a_reference_implementation_ran(check, name, status):
    res = CaseResult(Status.UNTESTED)
    ctx = RunContext(GlobalSettings(check_ref_impl=check), 0, lambda line: None)
    case._execute(None, ctx, _Steps(), _Prim(name), res)
    assert res.status is status and res.impl == name
    assert ("--check-ref-impl: `ref:any` is a reference implementation" in res.reason) is \
        (status is Status.FAILED)
