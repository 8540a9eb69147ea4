"""The memory guard: a case whose tensors would need more than RAM_SHARE of the machine's
memory is SKIPPED (Not enough RAM) before anything is allocated; side-by-side workers
each get their share of it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py.drivers.base import RunContext
from benchdnn_py.drivers.conv import driver as conv_driver
from benchdnn_py.engine import harness, memory, runner, workers
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.status import Reason, Status


def test_fits_in_ram_is_a_share_of_physical_memory(monkeypatch):
    monkeypatch.setattr(memory, "physical_memory_bytes", lambda: 1000)
    assert memory.fits_in_ram(700) and not memory.fits_in_ram(701)
    monkeypatch.setattr(memory, "RAM_SHARE", 0.35)
    assert memory.fits_in_ram(350) and not memory.fits_in_ram(351)


def test_a_case_too_big_is_skipped_before_any_allocation(monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("allocated or created for a case that does not fit")

    monkeypatch.setattr(memory, "RAM_SHARE", 1e-12)   # nothing fits
    monkeypatch.setattr(conv_driver.STEPS, "create", must_not_run)
    monkeypatch.setattr(conv_driver.STEPS, "prepare", must_not_run)
    plan = harness.plan(["--conv", "--dir=FWD_B,BWD_D,BWD_WB", "ic8ih8oc8kh3"])
    for case in plan.cases:
        prb = case.driver.make_problem(case.values, case.desc_text, case.settings)
        res = conv_driver.run(prb, RunContext(GlobalSettings(), 0, print))
        assert (res.status, res.reason) == (Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value)


def test_the_command_line_skips_a_problem_no_machine_holds():
    res = run_cli("--conv", "-j", "2", "mb4096ic4096ih1024oc4096kh3", "ic8ih8oc8kh3")
    assert res.code == 0
    assert res.lines[0].startswith("0:SKIPPED (Not enough RAM) (")
    assert res.lines[1].startswith("1:PASSED")
    assert res.summary()["skipped"] == 1


def test_two_workers_take_half_the_share_each():
    """A problem needing about half of RAM_SHARE of this machine fits one process but not
    either of two workers. (It is skipped by the guard, so nothing is allocated.)"""
    budget = memory.RAM_SHARE * memory.physical_memory_bytes()
    ic = 64
    mb = 1
    shape = lambda m: f"mb{m}ic{ic}ih256oc{ic}kh1"   # noqa: E731
    while True:   # the smallest mb whose footprint exceeds 60% of the budget
        prb = _problem(shape(mb))
        need = conv_driver.footprint_bytes(prb, prb.shape)
        if need > 0.6 * budget:
            break
        mb *= 2
    if need > budget:
        pytest.skip("no power-of-two minibatch lands between half and all of the budget")
    plan = harness.plan(["--conv", shape(mb)])
    (outcome,) = workers.LocalPool(2).run(p.task for p in runner.prepare(plan))
    assert (outcome.status, outcome.reason) == (Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value)


def _problem(desc: str, *options: str):
    (case,) = harness.plan(["--conv", *options, desc]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def test_sampled_check_is_not_charged_the_full_reference():
    """The f64 reference and compare temporaries scale with the points computed: a
    sampled case is charged them for N points only."""
    full = _problem("mb16ic256ih56oc64kh1")
    sampled = _problem("mb16ic256ih56oc64kh1", "--check=sampled:1000")
    dst = 16 * 64 * 56 * 56
    saved = conv_driver.footprint_bytes(full, full.shape) - conv_driver.footprint_bytes(
        sampled, sampled.shape)
    assert saved == conv_driver.REF_BYTES_PER_POINT * (dst - 1000)


def test_footprint_sizes_each_tensor_by_its_data_type():
    """u8 src, s8 weights and a u8 dst take a quarter of f32's bytes in their library
    buffers; the f32 fill values, the f32 bias and the reference's bytes are the same."""
    f32 = _problem("mb2ic64ih28oc64kh3ph1")
    int8 = _problem("mb2ic64ih28oc64kh3ph1", "--dt=u8:s8:u8")
    shape = f32.shape
    src, wei, dst = (int(np.prod(s)) for s in (shape.src_shape, shape.wei_shape, shape.dst_shape))
    delta = conv_driver.footprint_bytes(f32, shape) - conv_driver.footprint_bytes(int8, shape)
    # src, the weights twice (user and implementation layouts) and dst: 4 bytes -> 1.
    assert delta == 3 * (src + 2 * wei + dst)
