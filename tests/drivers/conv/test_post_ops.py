"""Post-ops on the conv kernels: the spec's semantics and examples, the support matrix,
and that the checks catch kernels that get them wrong."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.common.attr import parse_post_ops
from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers.conv import attrs as conv_attrs
from benchdnn_py.drivers.conv import driver
from benchdnn_py.drivers.conv import prim as conv_prim
from benchdnn_py.drivers.conv import problem as conv_problem
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.status import Status


def _problem(text, post_ops, direction=Dir.FWD_B):
    return conv_problem.make_problem({"dir": direction, "dt": ("f32",) * 3, "mb": 0,
                                "impl_filter": ImplFilter(),
                                "attr-post-ops": parse_post_ops(post_ops), "backend": "native"}, text,
                               GlobalSettings())


def _run_kernel(prb, impl_filter=ImplFilter(), post_ops=None, prior_seed=1):
    """Runs the kernels the driver would pick; returns (inputs, prior, dst)."""
    shape = prb.shape
    t = driver.tensors(prb.desc, shape)
    inputs = driver.fill_inputs(prb, t, perf=False)
    prior = np.random.default_rng(prior_seed).integers(-8, 9, shape.dst_shape).astype(np.float32)
    dst = prior.copy()
    ops = prb.post_ops if post_ops is None else parse_post_ops(post_ops)
    res = driver.CaseResult(Status.UNTESTED)
    prim = conv_prim.create(shape, core.Direction.FWD, prb.dir.with_bias, impl_filter, res, ops)
    assert prim is not None, res.reason
    with prim:
        prim.bind(inputs["src"], prim.pack_weights(inputs["wei"]), inputs.get("bia"), dst)()
    return inputs, prior, dst


SHAPES = ["mb2ic16ih9oc24kh3ph1", "ic24ih13oc24kh5ph4dh1_dw", "ic300ih6oc50kh1"]


@pytest.mark.parametrize("text", SHAPES)
def test_spec_example_1_sum_then_tanh(text):
    """dst = gamma * tanh(alpha * conv + beta * dst); for f32 alpha = gamma = 1."""
    prb = _problem(text, "sum:0.5+tanh")
    inputs, prior, dst = _run_kernel(prb)
    conv = core.ref_conv_fwd(prb.shape, inputs["src"], inputs["wei"], inputs["bia"])
    expected = np.tanh(conv + 0.5 * prior)
    np.testing.assert_allclose(dst, expected, rtol=4e-5, atol=2e-5)


def test_spec_example_2_relu_then_sum_formula_and_f32_support():
    """dst = beta * dst + gamma * ReLU(alpha * conv, eta): eltwise then sum, which the
    spec allows for int8 only. The reference computes the formula; f32 reports it."""
    prb = _problem("mb2ic8ih7oc8kh3ph1", "relu:0.25+sum:0.5")
    assert driver.STEPS.unsupported(prb)[0] is Status.UNIMPLEMENTED
    rng = np.random.default_rng(0)
    conv, prior = rng.normal(size=(2, 8, 1, 7, 7)), rng.normal(size=(2, 8, 1, 7, 7))
    got = conv_attrs.apply_post_ops(conv, prb.post_ops, prior.astype(np.float32))
    expected = 0.5 * prior.astype(np.float32) + np.where(conv > 0, conv, 0.25 * conv)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("text", SHAPES)
def test_sum_reads_the_prior_dst_exactly(text):
    prb = _problem(text, "sum:2")
    inputs, prior, dst = _run_kernel(prb)
    conv = core.ref_conv_fwd(prb.shape, inputs["src"], inputs["wei"], inputs["bia"])
    assert np.array_equal(dst, (conv + 2.0 * prior).astype(np.float32))


def test_a_kernel_that_ignores_the_prior_dst_fails_the_check():
    prb = _problem("mb2ic16ih9oc24kh3ph1", "sum:0.5+relu")
    inputs, prior, dst = _run_kernel(prb, post_ops="relu")     # no sum: prior ignored
    t = driver.tensors(prb.desc, prb.shape)
    ref = conv_attrs.apply_post_ops(
        core.ref_conv_fwd(prb.shape, inputs["src"], inputs["wei"], inputs["bia"]),
        prb.post_ops, prior)
    res = driver.CaseResult(Status.UNTESTED)
    out = driver.Guarded(dst.size, 0.0)
    out.array[:] = dst.ravel()
    driver.judge(res, {"dst": ref}, {"dst": out}, t,
                 driver.compare_setups(prb), 0)
    assert res.status is Status.FAILED and res.errors > res.total // 4


@pytest.mark.parametrize("chain,reason", [
    ("relu+sum", "f32 convolutions take eltwise, sum, or sum then eltwise"),
    ("relu+tanh", "f32 convolutions take eltwise, sum, or sum then eltwise"),
    ("sum+sum", "f32 convolutions take eltwise, sum, or sum then eltwise"),
    ("sum:1:1", "a sum zero point is for int8 convolutions only"),
    ("sum+dw:k3s1p1", "only eltwise post-ops may sit beside the depthwise post-op"),
])
def test_support_matrix(chain, reason):
    status, why = driver.STEPS.unsupported(_problem("mb2ic16ih9oc24kh1", chain))
    assert status is Status.UNIMPLEMENTED and reason in why


@pytest.mark.parametrize("chain,status,reason", [
    ("add:f32:per_oc", Status.UNIMPLEMENTED, "`add:f32:per_oc`: binary post-ops"),
    ("sum+prelu:per_oc", Status.UNIMPLEMENTED, "`prelu:per_oc`: prelu post-ops"),
    ("add", Status.INVALID_ARGUMENTS, "names src1's data type"),
])
def test_binary_and_prelu_entries_are_per_case_verdicts(chain, status, reason):
    got = driver.STEPS.unsupported(_problem("mb2ic16ih9oc24kh3ph1", chain))
    assert got[0] is status and reason in got[1]


def test_the_eltwise_scale_applies_to_every_type():
    """The post-ops page's dst = scale * f(...): benchdnn 3.x drops the field, this tool
    applies it (on f32 and bf16 routes as on int8 ones), and the check sees it."""
    res = run_cli("--conv", "--dt=f32,bf16", "--attr-post-ops=sum+tanh:0:0:2.5,relu:0:0:0.5",
                  "mb2ic16ih9oc24kh3ph1", "ic32ih7oc64kh1", "ic24ih13oc24kh3ph1_dw")
    assert res.code == 0 and res.summary()["passed"] == 12, res.err[-2000:]
    prb = _problem("mb2ic8ih5oc8kh3ph1", "relu:0:0:0.5")
    inputs, _, dst = _run_kernel(prb)
    conv = core.ref_conv_fwd(prb.shape, inputs["src"], inputs["wei"], inputs["bia"])
    assert np.array_equal(dst, 0.5 * np.maximum(conv, 0).astype(np.float32))


def test_backward_with_post_ops_is_rejected_with_the_spec_reason():
    for direction in (Dir.BWD_D, Dir.BWD_W, Dir.BWD_WB):
        status, why = driver.STEPS.unsupported(_problem("ic3ih5oc3kh3", "relu", direction))
        assert status is Status.UNIMPLEMENTED
        assert "no intermediate for the backward pass" in why


def test_zero_trust_is_relaxed_after_relu_like_post_ops():
    desc = parse_desc("ic3ih5oc3kh3")
    assert driver.compare_setups(_problem("ic3ih5oc3kh3", "relu"))["dst"] \
        .zero_trust_percent == pytest.approx(85)
    assert driver.compare_setups(_problem("ic3ih5oc3kh3", "tanh"))["dst"] \
        .zero_trust_percent == pytest.approx(70)
    setup = driver.compare_setups(_problem("ic3ih5oc3kh3", "sum+exp"))["dst"]
    assert setup.allow_nans and setup.eltwise and setup.exp_post_op


# (`any` puts depthwise on dw_conv_blocked, which refuses the swapped-chain defect: those
# cases fall back to dw_conv_fwd on the plain layout)
@pytest.mark.parametrize("fault,impl,tag", [("sum_scale_dropped", "gemm_conv", "abx"),
                                            ("sum_scale_dropped", "dw_conv_fwd", "abx"),
                                            ("sum_scale_dropped", "dw_conv_blocked", "any"),
                                            ("post_ops_swapped", "dw_conv_fwd", "any")])
def test_post_op_grid_catches_broken_epilogues(fault, impl, tag):
    res = run_cli("--conv", "--dir=FWD_B,FWD_I", f"--stag={tag}", f"--dtag={tag}",
                  "--attr-post-ops=sum,sum:0.5,sum+relu,sum:0.5+tanh",
                  "--batch=problems/shapes_basic", env={"BENCHDNN_PY_TEST_FAULT": fault})
    failed = [l for l in res.lines if ":FAILED (errors:" in l]
    assert res.code == 1 and any(f"--impl={impl}" in l for l in failed)
