"""Post-ops on the conv kernels: the spec's semantics and examples, the support matrix,
and that the checks catch kernels that get them wrong."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.common import post_ops
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
    spec's matrix lists for int8 only and f32 runs too (as oneDNN 3.x does). The
    reference computes the formula."""
    prb = _problem("mb2ic8ih7oc8kh3ph1", "relu:0.25+sum:0.5")
    assert driver.STEPS.unsupported(prb) is None
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
    ("sum:1:1", "a sum zero point is for int8 convolutions only"),
    ("sum+dw:k3s1p1", "only eltwise, binary and prelu post-ops may sit beside the depthwise"),
])
def test_support_matrix(chain, reason):
    status, why = driver.STEPS.unsupported(_problem("mb2ic16ih9oc24kh1", chain))
    assert status is Status.UNIMPLEMENTED and reason in why


@pytest.mark.parametrize("chain,status,reason", [
    ("add", Status.INVALID_ARGUMENTS, "names src1's data type"),
    ("select:f32", Status.UNIMPLEMENTED, "binary select (a third, condition input)"),
    ("add:f32:14:aBcd16b", Status.UNIMPLEMENTED, "src1 in the blocked layout aBcd16b"),
    ("add:f8_e5m2:per_oc", Status.UNIMPLEMENTED, "src1 of type f8_e5m2"),
    ("add:f32:per_oc:abcde", Status.INVALID_ARGUMENTS, "add:f32:per_oc:abcde"),
])
def test_binary_and_prelu_entries_are_per_case_verdicts(chain, status, reason):
    got = driver.STEPS.unsupported(_problem("mb2ic16ih9oc24kh3ph1", chain))
    assert got[0] is status and reason in got[1]


def test_binary_beside_a_dw_entry_runs_and_other_backends_refuse_binary():
    assert driver.STEPS.unsupported(_problem("mb2ic16ih9oc24kh1", "add:f32+dw:k3s1p1")) is None
    res = run_cli("--conv", "--backend=torch", "--attr-post-ops=prelu:per_oc", "ic8ih5oc8kh1")
    assert any("the torch backend does not run binary or prelu post-ops" in line
               for line in res.lines), res.err[-2000:]


# Each entry against NumPy's own broadcasting of the formula (oneDNN's definitions, f32):
# masks over dst (mb, oc, oh, ow) for common, per_oc, per_tensor, mb only, w only (the
# kernels' gather path), oc+h+w; a channels-last src1 (strides, not dense along w).
BINARY_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "max": np.maximum, "min": np.minimum, "ge": np.greater_equal,
                "gt": np.greater, "le": np.less_equal, "lt": np.less, "eq": np.equal,
                "ne": np.not_equal}


@pytest.mark.parametrize("mask", ["0", "2", "15", "1", "8", "14", "14:acdb"])
@pytest.mark.parametrize("alg", [*BINARY_NUMPY, "prelu"])
def test_binary_and_prelu_kernels_match_numpy(alg, mask):
    text, dt = "mb2ic8ih5iw6oc16kh3kw3ph1pw1", "f32" if alg in ("prelu", "div") else "s8"
    entry = f"prelu:{mask.split(':')[0]}" if alg == "prelu" else f"{alg}:{dt}:{mask}"
    prb = _problem(text, entry)
    assert driver.STEPS.unsupported(prb) is None
    shape, dims = prb.shape, conv_prim.logical_dims(prb.desc)["dst"]
    t = driver.tensors(prb.desc, shape)
    inputs = driver.fill_inputs(prb, t, perf=False)
    src1 = post_ops.fill_src1(prb.post_ops, dims)["src1_0"]
    lay = post_ops.src1_layout(prb.post_ops.entries[0], dims)
    buf = driver.reorders.place(src1.astype(core.numpy_dtype(post_ops.src1_dt(
        prb.post_ops.entries[0]))), lay, dt)
    attr = conv_prim.kernel_attr(prb, conv_attrs.Quant())
    res = driver.CaseResult(Status.UNTESTED)
    prim = conv_prim.create(shape, core.Direction.FWD, True, ImplFilter(), res, attr=attr)
    assert prim is not None, res.reason
    dst = np.zeros(shape.dst_shape, np.float32)
    with prim:
        prim.set_post_op_inputs({0: buf.reshape(-1)})
        prim.bind(inputs["src"], prim.pack_weights(inputs["wei"]), inputs["bia"], dst)()
    x = core.ref_conv_fwd(shape, inputs["src"], inputs["wei"], inputs["bia"])
    x = x.astype(np.float32).reshape(dims)
    assert len(np.unique(src1)) > 1 or mask == "0"
    with np.errstate(divide="ignore"):
        expected = (np.where(x > 0, x, x * src1) if alg == "prelu"
                    else BINARY_NUMPY[alg](x, src1)).astype(np.float32)
    np.testing.assert_array_equal(dst.reshape(dims), expected)


@pytest.mark.parametrize("driver_name", ["conv", "deconv"])
def test_binary_and_prelu_chains_pass_on_every_type(driver_name):
    res = run_cli(f"--{driver_name}", "--dt=f32,bf16,u8:s8:u8,s8:s8:f32",
                  "--attr-post-ops=add:f32:per_oc,mul:s8:14+relu,sum+prelu:per_oc,"
                  "lt:bf16:per_tensor+add:u8:1,tanh+div:f16:8+sum",
                  "mb2ic16ih7oc24kh3ph1", "g2ic16ih6oc16kh3sh2ph1", "ic8id4ih4iw5oc8kd3kh1kw3pw1pd1")
    assert res.code == 0 and res.summary()["passed"] == 60, res.err[-2000:]


@pytest.mark.parametrize("check", ["full", "sampled:200"])
def test_a_kernel_reading_src1_at_the_wrong_channel_fails(check):
    res = run_cli("--conv", f"--check={check}", "--dt=f32,u8:s8:u8",
                  "--attr-post-ops=add:f32:per_oc,prelu:per_oc,mul:s8:14",
                  "mb2ic16ih7oc24kh3ph1", env={"BENCHDNN_PY_TEST_FAULT": "src1_channel0"})
    failed = {line for line in res.lines if ":FAILED (errors:" in line}
    assert res.code == 1 and len(failed) == 6 == res.summary()["failed"], res.err[-2000:]


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


def test_a_sum_data_type_reads_the_prior_dst_bits_as_that_type():
    """`sum:0.5:0:u8` on an s8 dst (benchdnn's test_conv_ci): the stored -5 is read as
    251. The case's prior holds negatives, so a kernel that read s8 would fail it."""
    prb = conv_problem.make_problem(
        {"dir": Dir.FWD_I, "dt": ("s8", "s8", "s8"), "mb": 0, "impl_filter": ImplFilter(),
         "attr-post-ops": parse_post_ops("sum:0.5:0:u8"), "backend": "native"},
        "mb2ic16ih7oc24kh3ph1", GlobalSettings())
    prior = driver.fill_prior_dst(prb, driver.tensors(prb.desc, prb.shape), perf=False)
    assert (prior < 0).any()
    assert np.array_equal(driver.sum_reads(prb, prior), np.where(prior < 0, prior + 256, prior))
    res = run_cli("--conv", "--dir=FWD_I", "--dt=s8:s8:s8,u8:s8:u8,f32,bf16",
                  "--attr-post-ops=sum:0.5:0:u8,sum:0.5:0:s8,sum:1:0:s32,sum:1:0:f16",
                  "mb2ic16ih7oc24kh3ph1")
    lines = [line for line in res.lines if "__REPRO" in line]
    passed = {line.split("__REPRO: ")[1] for line in lines if ":PASSED " in line}
    assert len(passed) == 6, res.err[-2000:]        # the same-size pairs
    assert all("a sum data type reads the destination's bits" in line
               for line in lines if ":INVALID_ARGUMENTS " in line)


def test_chains_beyond_the_spec_matrix_run_in_order_and_a_dropped_sum_scale_fails():
    """Two eltwise entries, a sum after an eltwise entry, two sums: in order, on every type
    and layout (the low-precision epilogue); Winograd refuses a sum after another entry
    with the reason. The sum_scale_dropped defect, which that epilogue carries, fails
    every chain with a sum of scale 0.5."""
    args = ("--conv", "--dt=f32,bf16,u8:s8:u8", "--stag=any,axb", "--dtag=any,axb",
            "--attr-post-ops=linear:1:2+linear:1:3,relu+sum:0.5+linear:2:1,sum+tanh+sum:0.5",
            "mb2ic16ih9oc24kh3ph1", "g2ic16ih6oc16kh3sh2ph1")
    res = run_cli(*args)
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 3 * 4 * 3 * 2, res.out[-2000:]
    assert all(":PASSED " in l for l in cases)
    bad = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "sum_scale_dropped"})
    failed = {l for l in bad.lines if ":FAILED (errors:" in l}
    assert bad.code == 1 and len(failed) == 3 * 4 * 2 * 2, bad.out[-2000:]
    assert not any("linear:1:2+linear:1:3" in l for l in failed)
    wino = run_cli("--conv", "--alg=wino", "--attr-post-ops=relu+sum", "mb2ic16ih9oc24kh3ph1")
    assert "--alg=wino: Winograd F(4x4,3x3) needs no sum post-op after another entry" \
        in wino.out, wino.out
