"""The ip native backend's routes: f32 as one GEMM over the batch on the channels-last
rows, other types per image on the plain rows; a binary entry's input read over the
GEMM's points."""

from __future__ import annotations

import numpy as np
from conftest import create_executor, run_cli

from benchdnn_py import core
from benchdnn_py.common.attr import parse_post_ops
from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers.base import CaseResult
from benchdnn_py.drivers.ip import backend_native, driver
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.status import Status


def _problem(text: str, **values):
    base = {"mb": 0, "impl_filter": ImplFilter(), "backend": "native"}
    return driver.make_problem({**base, **values}, text, GlobalSettings())


def test_shapes_of_the_routes():
    desc = _problem("mb16ic64ih7oc1000").desc
    g = backend_native.gemm_shape(desc)
    assert (g.mb, g.ic, g.oc, g.i, g.o, g.k) == (1, 64 * 49, 1000, (1, 1, 16), (1, 1, 16),
                                                (1, 1, 1))
    p = backend_native.image_shape(desc)
    assert (p.mb, p.ic, p.oc, p.i, p.k) == (16, 64 * 49, 1000, (1, 1, 1), (1, 1, 1))


def test_f32_runs_one_gemm_and_bf16_per_image():
    """bf16 too runs one GEMM where the AMX tile rows (channels last) do."""
    amx = core.isa_supported(core.Isa.AVX512_AMX)
    bf16 = "tile_conv_nhwc_bf16:" if amx else "gemm_conv_bf16"
    for dt, prefix in ((("f32",) * 3, "gemm_conv_nhwc:"), (("bf16",) * 3, bf16)):
        res = CaseResult(Status.UNTESTED)
        ex = create_executor(_problem("mb16ic64ih3oc48", dt=dt), res)
        assert ex is not None, res.reason
        try:
            assert ex.name.startswith(prefix), ex.name
            assert ex.prim.attr.layout is (core.ActLayout.NHWC if dt[0] == "f32" or amx
                                           else core.ActLayout.PLAIN)
        finally:
            ex.close()


def test_binary_input_strides_move_to_the_points():
    """The GEMM's attributes read src1 [mb][oc] over its dst (1, oc, 1, 1, mb points); the
    channels-last rows take no binary entry today, so such a case runs per image."""
    prb = _problem("mb16ic8oc24",
                   **{"attr-post-ops": parse_post_ops("add:f32:per_tensor+mul:f32:per_oc")})
    per_tensor, per_oc = (op.src1_strides for op in backend_native._attr(prb, "gemm").post_ops)
    assert per_tensor == (0, 1, 0, 0, 24) and per_oc == (0, 1, 0, 0, 0)
    per_tensor, per_oc = (op.src1_strides for op in backend_native._attr(prb, "image").post_ops)
    assert per_tensor == (24, 1, 0, 0, 0) and per_oc == (0, 1, 0, 0, 0)
    res = CaseResult(Status.UNTESTED)
    ex = create_executor(prb, res)
    try:
        assert ex.name.startswith("gemm_conv:") and ex.prim.shape.mb == 16
    finally:
        ex.close()


def test_gemm_route_agrees_with_the_per_image_route():
    """The same f32 case on both routes (the per-image one forced by --impl) gives the
    same bits: both sum K products exactly (integers), then one rounding."""
    outs = []
    for impl in ("gemm_conv_nhwc", "gemm_conv:"):
        res = run_cli("--ip", f"--impl={impl}", "--summary=no-impl", "--dir=FWD_B,BWD_D,BWD_WB",
                      "mb24ic40ih2oc36")
        assert res.code == 0 and res.summary()["passed"] == 3, res.out
        outs.append([line.split("__REPRO: ")[1] for line in res.lines if "PASSED" in line])
    assert all(impl in l for l in outs[0] for impl in ["gemm_conv_nhwc"])
    assert all("gemm_conv:" in l for l in outs[1])
    assert np.all([a.split()[-1] == b.split()[-1] for a, b in zip(*outs)])


def test_small_batch_backward_weights_streams_on_the_per_image_route():
    """Up to STREAM_MAX_MB images into at least STREAM_MIN_WEIGHTS weights: the per-image
    route (its outer product streams diff_weights) first; more images, or weights that
    stay in cache, the GEMM."""
    cases = ((f"mb{backend_native.STREAM_MAX_MB}ic1024oc1024", "gemm_conv:"),
             (f"mb{backend_native.STREAM_MAX_MB * 2}ic1024oc1024", "gemm_conv_nhwc:"),
             ("mb2ic512oc512", "gemm_conv_nhwc:"))
    for text, prefix in cases:
        for d in (Dir.BWD_W, Dir.BWD_WB):
            res = CaseResult(Status.UNTESTED)
            ex = create_executor(_problem(text, dir=d), res)
            try:
                assert ex.name.startswith(prefix), (text, d, ex.name)
            finally:
                ex.close()
