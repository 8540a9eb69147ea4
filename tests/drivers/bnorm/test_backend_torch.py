"""The torch backend of the bnorm driver: PyTorch's batch normalization operators through
the same fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_TORCH=1) without
torch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_all_passed, case_statuses, run_cli

from benchdnn_py.drivers.bnorm import cfg, driver, ref


@pytest.mark.usefixtures("torch")
def test_every_direction_flag_type_layout_and_in_place_passes_on_torch():
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_D,FWD_I,BWD_D,BWD_DW", "--flags=,G,C,H,R,A,GCHR,CHA",
                  "--dt=f32,bf16,f16", "--tag=abx,axb", "--inplace=false,true",
                  "mb3ic19ih5iw4")
    assert_all_passed(res, 4 * 8 * 3 * 2 * 2, "torch:")


@pytest.mark.usefixtures("torch")
def test_every_rank_and_dense_order_passes_on_torch():
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_D,FWD_I,BWD_DW", "--flags=,GCHR,CHA",
                  "--tag=abx,axb", "ic23", "mb5ic33iw27", "mb1ic19id4ih6iw6",
                  "--tag=acdb,bacd", "mb4ic20ih17iw16", "--tag=ba", "ic23",
                  "--tag=abx", "mb4ic20ih17iw16eps1e-5", "--mb=3", "ic16ih7iw5")
    assert_all_passed(res, 3 * 3 * (2 * 3 + 2 + 1 + 1 + 1), "torch:")


@pytest.mark.usefixtures("torch")
def test_statistics_near_the_mean_pass_through_the_fold():
    """Few points per channel (alg_1 with 8 bits of spread): src alpha and m alpha nearly
    cancel in torch's dst = src alpha + beta, whose f32 roundings then exceed the
    threshold relative to dst; the fold's own terms bound them."""
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch", "--flags=CHR",
                  "--tag=abx,axb", "mb2ic1030ih3")
    assert_all_passed(res, 2, "torch:")


def test_the_fold_bounds_torchs_error_and_only_on_a_folding_backend():
    """torch's fast path to the bit: fma(x, alpha, beta) in f32 with alpha = f32(g r)
    and beta = f32(b - m alpha); its error stays within the threshold of fold_magnitude,
    and only the backends in FOLDING_BACKENDS get the allowance."""
    mb, C, sp = 2, 1030, 9
    plan = cfg.FillPlan.of(mb * sp, "f32", cfg.CheckAlg.AUTO)
    mean = cfg.fill_mean(C, plan, False)
    src = cfg.fill_src(mb, C, sp, mean, plan, False, "f32")
    g, b = cfg.fill_scale(C, False), cfg.fill_shift(C, False)
    m, v = ref.stats(src)
    exp = ref.forward(src, m, v, 1.0 / 16, g, b, None, False)
    f32 = np.float32
    alpha = (g.astype(np.float64) / np.sqrt(v + 1.0 / 16)).astype(f32)
    beta = (b - (m * alpha).astype(f32)).astype(f32)
    got = (src * alpha[None, :, None].astype(np.float64)
           + beta[None, :, None]).astype(f32)
    err = np.abs(got - exp)
    trh = cfg.threshold("DST", "f32")
    assert (err > trh * np.abs(exp)).any()     # the plain relative check fails
    prb = driver.make_problem({o.slot: o.default for o in driver.OPTIONS} | {
        "flags": "CH", "backend": "torch"}, "mb2ic1030ih3", None)
    bufs = driver.Buffers(src=src, scale=g, shift=b, out=None, out_layout=None, run=None,
                          outs=())
    assert (err <= trh * driver.fold_magnitude(prb, bufs, m, v)).all()
    assert driver.FOLDING_BACKENDS == {"torch"}


@pytest.mark.usefixtures("torch")
def test_post_ops_run_as_torch_operators_after_the_batch_norm():
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_I,FWD_D", "--flags=,G,CH,CHA", "--tag=abx,axb",
                  "--attr-post-ops=relu,linear:0.5:2,add:f32:per_oc,"
                  "mul:f32:per_tensor+tanh,sub:bf16:common,max:s8:per_oc,ge:f32:per_oc,"
                  "prelu:per_oc,div:f32:per_dim_0+relu",
                  "mb4ic20ih17iw16")
    assert_all_passed(res, 2 * 4 * 2 * 9, "torch:")


@pytest.mark.usefixtures("torch")
def test_what_torch_cannot_run_is_unimplemented_with_the_reason():
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_I", "--dt=s8", "--flags=G", "ic16ih5",
                  "--reset", "--backend=torch", "--tag=aBx16b", "ic16ih5",
                  "--reset", "--backend=torch", "--dir=FWD_D,FWD_I,BWD_D", "mb0ic3ih2",
                  "--reset", "--backend=torch", "mb1ic5",
                  "--reset", "--backend=torch", "--attr-scratchpad=user", "ic16ih5",
                  "--reset", "--backend=torch", "--dir=BWD_D", "--attr-post-ops=relu",
                  "ic16ih5")
    reasons = [line.split(" (", 1)[1] for _, line in case_statuses(res)]
    statuses = {s for s, _ in case_statuses(res)}
    assert statuses == {"UNIMPLEMENTED"} and len(reasons) == 8
    assert reasons[0].startswith("--dt=s8: torch's batch norm takes the floating types "
                                 "f32, bf16, f16)")
    assert reasons[1].startswith("--tag=aBx16b: the blocked layout aBx16b; torch tensors "
                                 "are strided)")
    assert all(r.startswith("mb0: torch's batch norm computes no statistics over an "
                            "empty minibatch") for r in reasons[2:4])
    assert reasons[4].startswith("mb0: torch's CPU batch norm backward divides by the "
                                 "empty minibatch")
    assert reasons[5].startswith("mb x spatial = 1: training's variance comes from torch's "
                                 "running variance, which is unbiased")
    assert reasons[6].startswith("--attr-scratchpad=user: ")
    assert reasons[7].startswith("--attr-post-ops=relu: post-ops apply to forward")
    # what torch runs of the same: global stats over an empty minibatch, inference and
    # backward over one point per channel
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_D,FWD_I", "--flags=G,GCHA", "mb0ic3ih2",
                  "--dir=FWD_I,BWD_DW", "--flags=CHR", "mb1ic5")
    assert_all_passed(res, 2 * 2 + 2, "torch:")


@pytest.mark.usefixtures("torch")
def test_a_repro_line_reruns_the_same_case():
    res = run_cli("--bnorm", "--backend=native,torch", "--dir=BWD_DW", "--dt=bf16",
                  "--tag=axb", "--flags=CHA", "--inplace=true", "mb3ic19ih5iw4")
    torch_line = [line for _, line in case_statuses(res) if "--backend=torch" in line][0]
    assert torch_line.startswith("1:PASSED (")
    repro = torch_line.split("__REPRO: ", 1)[1]
    assert repro.startswith("--bnorm --impl=torch:") and repro.endswith(
        " --backend=torch --dir=BWD_DW --dt=bf16 --tag=axb --flags=CHA --inplace=true "
        "mb3ic19ih5iw4")
    again = run_cli(*repro.split())
    lines = [line for _, line in case_statuses(again)]
    assert len(lines) == 1 and lines[0].startswith("0:PASSED (") and again.code == 0
    assert lines[0].split("__REPRO: ")[1] == repro


@pytest.mark.usefixtures("torch")
def test_perf_mode_times_the_torch_call():
    res = run_cli("--bnorm", "--mode=P", "--fix-times-per-prb=3", "--perf-template=csv",
                  "--backend=torch", "--dir=FWD_D,BWD_DW", "--flags=CHR",
                  "mb2ic16ih7")
    perf = [l for l in res.lines if l.startswith("perf,cpu,torch:")]
    assert len(perf) == 2 and res.code == 0, res.out
