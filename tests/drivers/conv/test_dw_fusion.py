"""Depthwise fusion (the dw post-op): the reference against an independent NumPy
formulation, the fused kernels end to end, the spec's support matrix, and a defect the
check must catch."""

from __future__ import annotations

import numpy as np
import pytest
import conv_rows
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.common import eltwise, post_ops
from benchdnn_py.common.attr import Binary, Depthwise, Prelu, parse_post_ops
from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers.conv import driver
from benchdnn_py.drivers.conv import prim as conv_prim
from benchdnn_py.drivers.conv import problem as conv_problem
from benchdnn_py.drivers.conv import ref as conv_ref
from benchdnn_py.drivers.conv.attrs import Quant, dw_quant
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.status import Status


def _problem(text, post_ops, direction=Dir.FWD_B, dt=("f32",) * 3, **extra):
    values = {"dir": direction, "dt": dt, "mb": 0, "impl_filter": ImplFilter(),
              "attr-post-ops": parse_post_ops(post_ops), "backend": "native", **extra}
    return conv_problem.make_problem(values, text, GlobalSettings())


def _entry(e, x, src1):
    """One eltwise, binary add or mul, or prelu entry on x [mb][c][h][w], src1 its logical
    input (broadcast by numpy)."""
    if isinstance(e, Binary):
        b = src1.astype(np.float64)
        return {"add": x + b, "mul": x * b}[e.alg]
    if isinstance(e, Prelu):
        return np.where(x > 0, x, x * src1.astype(np.float64))
    return eltwise.apply(e.name, x, e.alpha, e.beta)


def _numpy_fused(src, wei, bias, dw_wei, dw_bias, chain, inputs=None):
    """1x1 + depthwise written out independently: einsum for the 1x1, shifted slices of
    the padded planes for the depthwise taps, the chain's formulas between and after
    (binary and prelu inputs: inputs' src1_{i}, by the chain's index)."""
    mb, ic, _, ih, iw = src.shape
    oc = wei.shape[1]
    x = np.einsum("nchw,oc->nohw", src[:, :, 0].astype(np.float64),
                  wei.reshape(oc, ic).astype(np.float64))
    if bias is not None:
        x += bias[None, :, None, None]
    entries = chain.entries
    at = next(i for i, e in enumerate(entries) if isinstance(e, Depthwise))
    src1 = lambda i: (inputs or {}).get(f"src1_{i}")  # noqa: E731
    for i, e in enumerate(entries[:at]):
        x = _entry(e, x, src1(i))
    x = x.astype(np.float32).astype(np.float64)      # the f32 intermediate
    dw = entries[at]
    k, s, p = dw.k, dw.s, dw.p
    oh, ow = (ih + 2 * p - k) // s + 1, (iw + 2 * p - k) // s + 1
    pad = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    y = np.zeros((mb, oc, oh, ow))
    taps = dw_wei.reshape(oc, k, k).astype(np.float64)
    for kh in range(k):
        for kw in range(k):
            y += (taps[:, kh, kw][None, :, None, None]
                  * pad[:, :, kh:kh + s * (oh - 1) + 1:s, kw:kw + s * (ow - 1) + 1:s])
    if dw_bias is not None:
        y += dw_bias[None, :, None, None]
    for i, e in enumerate(entries[at + 1:], at + 1):
        y = _entry(e, y, src1(i))
    return y[:, :, None]


@pytest.mark.parametrize("text,chain,direction", [
    ("mb2ic8ih9oc16kh1", "dw_k3s1p1", Dir.FWD_B),
    ("mb2ic8ih9iw7oc12kh1kw1", "dw_k3s2p1", Dir.FWD_I),
    ("mb1ic5ih6oc7kh1", "relu+dw:k3s2p1+tanh", Dir.FWD_B),
    ("mb2ic4ih8oc6kh1", "linear:0.5:1+dw:k5s1p2", Dir.FWD_D),
    ("mb1ic3ih5oc4kh1", "dw:k3s1p0+relu:0.25", Dir.FWD_B),
    # binary and prelu on the 1x1 output (before dw) and on dst (after it, stride 2)
    ("mb2ic8ih9oc16kh1", "add:f32:per_oc+dw:k3s2p1+mul:f32:per_tensor", Dir.FWD_B),
    ("mb2ic4ih8iw6oc6kh1kw1", "prelu:per_oc+add:f32:per_tensor+dw:k3s1p1+prelu+add:f32",
     Dir.FWD_I),
])
def test_reference_matches_an_independent_numpy_computation(text, chain, direction):
    prb = _problem(text, chain, direction)
    t = conv_prim.case_tensors(prb)
    q = driver.quant_of(prb, prb.shape.oc)
    inputs = driver.fill_inputs(prb, t, False, q)
    inputs.update(post_ops.fill_src1(prb.post_ops,
                                     conv_prim.src1_dims_by_entry(prb, t["dst"].logical)))
    got = driver.reference(prb, inputs, q, None)["dst"]
    expected = _numpy_fused(inputs["src"], inputs["wei"], inputs.get("bia"),
                            inputs["dw_wei"], inputs.get("dw_bia"), prb.post_ops, inputs)
    assert got.shape == t["dst"].shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)
    # --check=sampled: the same values at the points
    points = np.array([0, 3, got.size // 2, got.size - 1])
    at = driver.reference(prb, inputs, q, None, {"dst": points})["dst"]
    np.testing.assert_array_equal(at, got.reshape(-1)[points])


def test_output_size_ops_and_bytes_count_both_steps():
    prb = _problem("mb1ic32ih112oc64kh1", "dw_k3s2p1")
    assert prb.dw_o == (1, 56, 56)
    one_by_one = 2 * 1 * 64 * 32 * 112 * 112
    assert prb.ops == one_by_one + conv_ref.count_ops(_problem(
        "mb1ic64ih112oc64oh56kh3sh2ph1_dw", "").desc)
    assert driver.tensor_dts(_problem("ic8ih6oc8kh1", "dw:k3s1p1:f32",
                                      dt=("bf16",) * 3))["dst"] == "f32"


@pytest.mark.parametrize("text,chain,dt,reason", [
    ("mb2ic8ih9oc16kh1", "sum+dw:k3s1p1", ("f32",) * 3, "only eltwise, binary and prelu"),
    ("mb2ic8ih9oc16kh1", "dw:k3s1p1+sum", ("f32",) * 3, "only eltwise, binary and prelu"),
    ("mb2ic8ih9oc16kh3ph1", "dw_k3s1p1", ("f32",) * 3, "follows a 2D 1x1 convolution only"),
    ("mb2ic8iw9oc16kw1", "dw_k3s1p1", ("f32",) * 3, "follows a 2D 1x1 convolution only"),
    ("mb2ic8id4ih9iw9oc16kd1kh1kw1", "dw_k3s1p1", ("f32",) * 3, "follows a 2D 1x1 convolution only"),
    ("mb2ic8ih9oc16kh1", "dw_k3s1p1+dw_k3s2p1", ("f32",) * 3, "at most one depthwise"),
    ("mb2ic8ih9oc16kh1", "dw:k3s1p1:bf16", ("f32",) * 3, "the depthwise output is one of"),
    ("mb2ic8ih9oc16kh1", "dw:k3s1p1:s32", ("bf16",) * 3, "one of: bf16, f32"),
    ("g2ic8ih9oc16kh1", "dw_k3s1p1", ("f32",) * 3, "after a grouped convolution"),
])
def test_unsupported_chains_are_unimplemented_with_the_reason(text, chain, dt, reason):
    status, why = driver.STEPS.unsupported(_problem(text, chain, dt=dt))
    assert status is Status.UNIMPLEMENTED and reason in why, why


def test_backward_and_deconvolution_are_refused():
    status, why = driver.STEPS.unsupported(_problem("ic8ih6oc8kh1", "dw_k3s1p1", Dir.BWD_D))
    assert status is Status.UNIMPLEMENTED and "backward pass" in why
    res = run_cli("--deconv", "--attr-post-ops=dw_k3s1p1", "ic8ih6oc8kh1")
    assert "UNIMPLEMENTED (`dw_k3s1p1`: the depthwise post-op follows a 1x1 convolution " \
           "only, not a deconvolution)" in res.out


@pytest.mark.parametrize("text,chain,reason", [
    ("ic8ih2oc8kh1", "dw:k5s1p0", "no output point"),
    ("ic8ih6oc8kh1", "dw:k3s0p1", "no output point"),
    ("ic8ih6oc8kh1", "dw:k0s1p0", "no output point"),
    ("ic8ih6oc8kh1", "dw:k3s1p3", "padding must be smaller than its kernel"),
])
def test_a_depthwise_step_without_real_outputs_is_invalid(text, chain, reason):
    status, why = driver.STEPS.unsupported(_problem(text, chain))
    assert status is Status.INVALID_ARGUMENTS and reason in why


def test_fused_kernels_pass_for_every_type_both_strides_and_sampled():
    res = run_cli("--conv", "--dir=FWD_B,FWD_I",
                  "--dt=f32,bf16,bf16:bf16:f32,u8:s8:u8,s8:s8:s8,u8:s8:f32",
                  "--attr-post-ops=dw_k3s1p1,relu+dw_k3s2p1+relu",
                  "mb2ic16ih10oc40kh1", "mb1ic24ih7iw9oc20kh1kw1", "ic8ih12oc8kh1sh2",
                  "ic8ih6oc8kh1ph1",
                  "--check=sampled:40", "--dt=u8:s8:u8",
                  "--attr-post-ops=dw:k3s2p1:s32,dw:k3s1p1:f32", "mb2ic16ih10oc40kh1")
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 2 * 6 * 2 * 4 + 2 * 2, res.out[-2000:]
    assert all(":PASSED " in l and "--impl=fused_dw" in l for l in cases)
    assert any("fused_dw_int8:avx512_vnni(gemm_conv_int8" in l for l in cases) \
        or not core.isa_supported(core.Isa.AVX512_VNNI)


def test_the_name_reports_both_steps_and_plain_packing_is_refused():
    impl = next(i for i in core.conv_impls() if i.name == "fused_dw:scalar")
    shape = core.ConvShape(1, 1, 4, 8, (1, 5, 5), (1, 5, 5), (1, 1, 1), (1, 1, 1),
                           (0, 0, 0), (0, 0, 0))
    attr = core.ConvAttr(post_ops=(core.PostOp(core.PostKind.DW, dw_k=3, dw_s=2, dw_p=1),))
    with core.ConvPrimitive(impl, shape, core.Direction.FWD, False, attr=attr) as prim:
        assert prim.name == "fused_dw:scalar(gemm_conv:scalar:gather+dw_conv_fwd:scalar)"
        assert prim.dst_shape == (1, 8, 1, 3, 3)
        with pytest.raises(core.InvalidProblem):
            prim.pack_weights(np.zeros(32, np.float32))      # the dw weights are missing
    # and no other family takes a dw post-op (none of gemm_conv's routes)
    gemm = next(g for g in conv_rows.groups() if g.name == "gemm_conv:scalar")
    with pytest.raises(core.Unimplemented):
        conv_rows.create(gemm, shape, core.Direction.FWD, False, attr=attr)


def test_a_kernel_applying_the_chain_on_the_wrong_side_of_dw_is_caught():
    res = run_cli("--conv", "--dt=f32,bf16,s8:s8:s8",
                  "--attr-post-ops=relu+dw_k3s1p1+linear:2:-3,relu+dw:k3s2p1",
                  "mb2ic16ih10oc40kh1", env={"BENCHDNN_PY_TEST_FAULT": "dw_pre_post_swapped"})
    failed = {l for l in res.lines if ":FAILED (errors:" in l}
    assert res.code == 1 and len(failed) == 6, res.out[-2000:]
    assert all("+fault:dw_pre_post_swapped" in l for l in failed)


def test_unsupported_chains_report_unimplemented_through_the_cli():
    res = run_cli("--conv", "--attr-post-ops=sum+dw_k3s1p1,dw_k3s2p1+sum", "ic8ih6oc8kh1",
                  "--attr-post-ops=dw_k3s1p1,relu+dw:k3s2p1", "ic8ih6oc8kh3ph1",
                  "--dir=BWD_D", "ic8ih6oc8kh1")
    cases = list({l.split(":")[0]: l for l in res.lines if l.split(":")[0].isdigit()}.values())
    assert len(cases) == 6 and all(":UNIMPLEMENTED (" in l for l in cases), res.out
    assert sum("sum is not supported with it" in l for l in cases) == 2
    assert sum("follows a 2D 1x1 convolution only" in l for l in cases) == 2
    assert sum("no intermediate for the backward pass" in l for l in cases) == 2


@pytest.mark.parametrize("tag,steps", [
    ("any", "(gemm_conv_blocked:avx512:direct+dw_conv_blocked:avx512)"),
    ("nChw16c", "(gemm_conv_blocked:avx512:direct+dw_conv_blocked:avx512)"),
    ("nChw8c", "(gemm_conv_blocked:avx2:direct+dw_conv_blocked:avx2)"),
    ("nchw", "(gemm_conv:avx512:gather+dw_conv_fwd:avx512)"),
])
def test_f32_fusion_runs_natively_on_plain_and_channel_blocks(tag, steps):
    """Channel tails (oc 40, 20, 72), a block of channels per thread at mb1 (each block's
    planes must land at their channels; oc 72 at 64x64 too, a 1x1 output past 1 MiB with
    fewer images than threads), and on channel blocks 1x1 outputs past 1 MiB with an image
    per thread (oc 72 at 64x64 and at 301x13, mb2 on 2 threads), which run row by row
    through a ring of 1x1 rows, computed 2 and 9 rows at a time (the last group cut
    short)."""
    res = run_cli("--conv", "--dir=FWD_B", f"--stag={tag}", f"--dtag={tag}",
                  "--attr-post-ops=relu+dw_k3s2p1+linear:1:2,dw_k3s1p1,dw:k5s1p2",
                  "mb2ic16ih10oc40kh1", "mb1ic24ih30iw9oc20kh1kw1", "mb1ic8ih64oc72kh1",
                  "mb2ic8ih64oc72kh1", "mb2ic8ih301iw13oc72kh1kw1", "-v5",
                  env={"OMP_NUM_THREADS": "2"})
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 15, res.out[-2000:]
    assert all(":PASSED " in l and "+reorder" not in l for l in cases)
    if core.isa_supported(core.Isa.AVX512):
        assert all(f"--impl=fused_dw:avx512{steps}" in l for l in cases), cases


def test_fusion_on_other_layouts_takes_the_reorder_route():
    """Channels last (which fused_dw does not write), other weights tags, and channel
    blocks with a binary entry (whose steps run on the plain layout) reorder to a layout
    fused_dw runs on and back."""
    res = run_cli("--conv", "--dt=f32,u8:s8:u8", "--stag=nhwc", "--dtag=nhwc,nchw",
                  "--wtag=any,hwio", "--attr-post-ops=dw_k3s1p1,relu+dw:k3s2p1+add:f32:per_oc",
                  "mb2ic16ih10oc40kh1", "--stag=nChw16c", "--dtag=nChw16c", "--wtag=any",
                  "--attr-post-ops=prelu:per_oc+dw_k3s1p1", "mb2ic16ih10oc40kh1")
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 18, res.out[-2000:]
    assert all(":PASSED " in l and "--impl=fused_dw" in l and ")+reorder " in l
               for l in cases), cases


def test_blocked_fusion_names_its_blocked_steps():
    impl = next(i for i in core.conv_impls() if i.name == "fused_dw:scalar")
    shape = core.ConvShape(1, 1, 4, 20, (1, 5, 5), (1, 5, 5), (1, 1, 1), (1, 1, 1),
                           (0, 0, 0), (0, 0, 0))
    dw = (core.PostOp(core.PostKind.DW, dw_k=3, dw_s=1, dw_p=1),)
    attr = core.ConvAttr(post_ops=dw, layout=core.ActLayout.BLOCKED8)
    with core.ConvPrimitive(impl, shape, core.Direction.FWD, False, attr=attr) as prim:
        assert prim.name == \
            "fused_dw:scalar(gemm_conv_blocked:scalar:gather+dw_conv_blocked:scalar)"
    with pytest.raises(core.Unimplemented):
        core.ConvPrimitive(impl, shape, core.Direction.FWD, False,
                           attr=core.ConvAttr(post_ops=dw, layout=core.ActLayout.NHWC))


def test_per_channel_scales_over_one_block_that_is_not_whole_tiles():
    """On one thread every channel fits one block; 13, 40 and 128 channels are not whole
    micro-kernel tiles (12 rows on AVX-512 VNNI, 5 on AVX2), and the block must not be
    rounded past them: a step wider than the convolution would read past its per-channel
    scales (which the sanitizer build reports: .ci/sanitize runs this file)."""
    res = run_cli("--conv", "--dt=u8:s8:u8,s8:s8:s8", "--attr-oscale=per_oc:2",
                  "--attr-post-ops=dw_k3s1p1,relu+dw:k3s2p1:f32",
                  "--impl=fused_dw_int8", "mb2ic8ih10oc13kh1", "mb2ic8ih10oc40kh1",
                  "mb2ic16ih10oc128kh1", "--impl=fused_dw_int8:avx2", "mb2ic8ih10oc13kh1",
                  "mb2ic16ih10oc128kh1", env={"OMP_NUM_THREADS": "1"})
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert len(cases) == 2 * 2 * 5, res.out[-2000:]
    avx2 = core.isa_supported(core.Isa.AVX2)   # without it, its rows are SKIPPED
    assert all(":PASSED " in l or (":SKIPPED " in l and not avx2) for l in cases), \
        res.out[-2000:]


DW_SCALES = ("--dt=u8:s8:s8,u8:s8:u8",
             "--attr-scales=src:common:0.25+wei:per_oc+dst:common:0.5,"
             "src:common:0.25+wei:per_oc+dst:common:0.5+attr_post_op_dw_wei:per_oc,"
             "src:common:0.25+wei:per_oc+dst:common:0.5+attr_post_op_dw_wei:common:2"
             "+attr_post_op_dw_dst:common:4",
             "--attr-post-ops=relu+dw:k3s2p1:s8,dw:k3s1p1:u8+relu")


def test_the_depthwise_steps_own_scales_follow_onednn():
    """oneDNN 3.x (benchdnn's get_fused_conv_prb): the 1x1 output is divided by the dst
    scale, the depthwise step multiplies it back (its src scale) and by its weights'
    scales, and divides by its own dst scale. Several channel blocks (oc256 at 56x56)
    make a block that took another's weights scales fail."""
    res = run_cli("--conv", *DW_SCALES, "mb2ic16ih14oc32oh14kh1ph0",
                  "mb2ic32ih56oc256oh56kh1ph0")
    assert res.code == 0 and res.summary()["passed"] == 2 * 3 * 2 * 2, res.err[-2000:]
    step = dw_quant(Quant(core.Scales.ARGS, 0.25, 0.5, np.ones(1, np.float32),
                          dw_wei_scales=np.array([2.0], np.float32), dw_dst_scale=4.0))
    assert (step.kind, step.src_scale, step.dst_scale, step.wei_scales.tolist()) == \
        (core.Scales.ARGS, 0.5, 4.0, [2.0])
    assert dw_quant(Quant(core.Scales.OSCALE)).kind is core.Scales.NONE


def test_binary_and_prelu_beside_dw_pass_and_a_misread_input_fails():
    """Binary and prelu entries before the dw entry read their input at the 1x1 output's
    positions, those after it at dst's; each step points its block's part. Reading
    channel 0's input for every channel (the src1_channel0 defect, which the steps carry)
    fails every case, per-channel and per-tensor entries alike."""
    args = ("--conv", "--check=sampled:500", "--dt=f32,bf16,u8:s8:u8",
            "--attr-post-ops=add:f32:per_oc+dw:k3s2p1+add:f32:per_oc,"
            "relu+add:s8:per_tensor+dw:k3s1p1+mul:f32:per_tensor,"
            "prelu:per_oc+dw:k3s2p1+prelu:per_oc",
            "mb2ic16ih14oc32kh1ph0", "mb3ic32ih28oc256kh1ph0")
    res = run_cli(*args)
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 18, res.out[-2000:]
    assert all(":PASSED " in l and "--impl=fused_dw" in l for l in cases)
    bad = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "src1_channel0"})
    failed = {l for l in bad.lines if ":FAILED (errors:" in l}   # (and in the summary)
    assert bad.code == 1 and len(failed) == 18, bad.out[-2000:]
