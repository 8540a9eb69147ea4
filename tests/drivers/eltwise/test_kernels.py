"""Every eltwise kernel (each ISA variant the CPU runs) against the reference, forward and
backward, for every algorithm, on the driver's hard-zone fill."""

import numpy as np
import pytest

from benchdnn_py import core, eltwise, fill
from benchdnn_py.check import compare
from benchdnn_py.drivers.eltwise import cfg, driver
from benchdnn_py.drivers.eltwise.desc import parse_dims, parse_tag
from benchdnn_py.drivers.conv.driver import ImplFilter

RUNNABLE = [i for i in core.eltwise_impls() if core.isa_supported(i.isa)]
IMPLS = [i for i in RUNNABLE if i.operands is core.Operands.F32]
PARAMS = {"clip": (-1.0, 3.0), "clip_v2": (-1.0, 3.0), "clip_v2_dst": (-1.0, 3.0),
          "soft_relu": (1.5, 0.0), "pow": (1.5, 2.0), "hardsigmoid": (0.25, 0.5),
          "hardswish": (0.25, 0.5), "linear": (0.5, 0.25), "elu": (0.5, 0),
          "elu_dst": (0.5, 0), "relu": (0.25, 0), "relu_dst": (0.25, 0), "swish": (0.75, 0)}


def _problem(name, direction):
    alpha, beta = PARAMS.get(name, (0.0, 0.0))
    return driver.EltwiseProblem(parse_dims("3x13x11x9"), direction, "f32", parse_tag("abx"),
                                 name, alpha, beta, False, ImplFilter(), 0)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("direction", [driver.Dir.FWD_D, driver.Dir.BWD_D])
def test_every_algorithm_matches_the_reference(impl, direction):
    checked = 0
    for name in sorted(eltwise.ALGS):
        prb = _problem(name, direction)
        if driver.invalid(prb):
            continue
        prim = core.EltwisePrimitive(impl, eltwise.ALGS[name].code, prb.alpha, prb.beta,
                                         prb.backward)
        bufs = driver.prepare(prb, prim, perf=False)
        bufs.run()
        assert bufs.out.intact()
        verdict = compare(driver.reference(prb, bufs),
                          bufs.out.array.reshape(prb.desc.dims), driver.compare_setup(prb))
        verdict = driver.with_cancellation_check(verdict, prb, bufs)
        assert not verdict.failed, (name, verdict.errors)
        checked += 1
    assert checked == len(eltwise.ALGS) - (1 if direction is driver.Dir.BWD_D else 0)


def test_fill_covers_the_hard_zones():
    x = cfg.fill_values(1300, fill.Kind.SRC, "exp", 0.25, 3.0)
    assert x[0] > 0 and (x < 0).any()
    assert ((x >= 88) & (x < 89)).sum() == 100         # variant 8: exp overflows
    assert (x == np.float32(0.25)).sum() >= 100 and (x == 3.0).sum() >= 100
    assert not np.isinf(x).any()
    logs = cfg.fill_values(150, fill.Kind.SRC, "log", 0, 0)
    assert np.isposinf(logs).sum() == 10 and np.isneginf(logs).sum() == 10
    assert not (np.signbit(x) & (x == 0)).any()         # no -0


def test_in_place_forward_overwrites_its_input():
    prb = driver.EltwiseProblem(parse_dims("2x16x7x7"), driver.Dir.FWD_D, "f32",
                                parse_tag("abx"), "tanh", 0, 0, True, ImplFilter(), 0)
    prim = core.EltwisePrimitive(IMPLS[0], eltwise.ALGS["tanh"].code, 0, 0, False)
    bufs = driver.prepare(prb, prim, perf=False)
    before = bufs.out.array.copy()
    np.testing.assert_array_equal(before, bufs.src.ravel())   # starts as src
    bufs.run()
    np.testing.assert_allclose(bufs.out.array, np.tanh(before.astype(np.float64)), rtol=4e-5)
