"""Winograd F(4x4,3x3) (--alg=wino, the wino_f43 rows; kernels/conv/conv_wino.c): the
transform matrices against NumPy, each ISA variant on small tiles against the direct
formula, and the driver end to end: the domain, the algorithm selection, the threshold and
a deliberately wrong transform coefficient."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv import cfg
from benchdnn_py.drivers.conv import driver as conv
from benchdnn_py.drivers.conv import policy as conv_policy
from benchdnn_py.engine import harness, memory

WINO_ROWS = [i for i in core.conv_impls() if i.name.startswith("wino_f43:")]
RUNNABLE = [i for i in WINO_ROWS if core.isa_supported(i.isa)]


def _case_lines(res, status: str) -> list[str]:
    """Each case's result line once (the failed-cases summary repeats them)."""
    return list(dict.fromkeys(l for l in res.lines if f":{status} (" in l and "__REPRO" in l))


def _problem(*args: str):
    (case,) = harness.plan(["--conv", *args]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def _correlate(d: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The 4x4 valid cross-correlation of a 6x6 patch with a 3x3 kernel, in float64."""
    return np.array([[np.sum(d[i:i + 3, j:j + 3] * w) for j in range(4)] for i in range(4)])


def test_matrices_compute_the_tile_correlation():
    bt, g, at = core.wino_f43_matrices()
    rng = np.random.default_rng(1)
    for _ in range(20):
        d, w = rng.standard_normal((6, 6)), rng.standard_normal((3, 3))
        y = at @ ((g @ w @ g.T) * (bt @ d @ bt.T)) @ at.T
        np.testing.assert_allclose(y, _correlate(d, w), rtol=0, atol=1e-12)


def test_input_and_output_transforms_are_small_integers():
    """All fractions live in G (applied at pack time): B^T and A^T add no rounding of
    their own beyond f32 sums."""
    bt, g, at = core.wino_f43_matrices()
    assert np.array_equal(bt, np.rint(bt)) and np.array_equal(at, np.rint(at))
    assert np.abs(bt).max() == 5 and np.abs(at).max() == 8
    assert g[0, 0] == 0.25 and g[3, 0] == pytest.approx(1 / 24)


def test_every_isa_has_a_row_and_the_table_prefers_the_widest():
    assert [i.name for i in WINO_ROWS] == ["wino_f43:avx512", "wino_f43:avx2",
                                           "wino_f43:scalar"]


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
@pytest.mark.parametrize("mb,ic,oc,ih,iw,p,g", [
    (1, 1, 1, 6, 6, 0, 1),       # one tile, one channel: the transforms alone
    (1, 3, 2, 7, 9, 0, 1),       # ragged tiles (5x7 outputs)
    (2, 5, 7, 6, 6, 1, 1),       # padding: every patch touches the border
    (1, 4, 6, 8, 8, 1, 2),       # groups
    (1, 200, 200, 9, 9, 1, 1),   # U over 4 MiB, 9 tiles: team mode on two threads or more
])
def test_kernel_on_small_tiles_matches_the_direct_formula(impl, mb, ic, oc, ih, iw, p, g):
    oh, ow = ih + 2 * p - 2, iw + 2 * p - 2
    shape = core.ConvShape(g, mb, ic, oc, (1, ih, iw), (1, oh, ow), (1, 3, 3), (1, 1, 1),
                           (0, p, p), (0, 0, 0))
    rng = np.random.default_rng(7)
    src = rng.standard_normal(shape.src_shape).astype(np.float32)
    wei = rng.standard_normal(shape.wei_shape).astype(np.float32)
    bias = rng.standard_normal(oc).astype(np.float32)
    # NumPy's own correlation over the zero-padded input, in double
    pad = np.pad(src.astype(np.float64)[:, :, 0], ((0, 0), (0, 0), (p, p), (p, p)))
    icg, ocg = ic // g, oc // g
    ref = np.empty((mb, oc, oh, ow))
    for n in range(mb):
        for o in range(oc):
            gr = o // ocg
            for y in range(oh):
                for x in range(ow):
                    patch = pad[n, gr * icg:(gr + 1) * icg, y:y + 3, x:x + 3]
                    ref[n, o, y, x] = np.sum(patch * wei[gr, o % ocg, :, 0]) + bias[o]
    with core.ConvPrimitive(impl, shape, core.Direction.FWD, True) as prim:
        dst = np.zeros(shape.dst_shape, np.float32)
        prim.bind(src, prim.pack_weights(wei), bias, dst)()
    # f32 sums of a few products (the reference's are exact in double): a few ulps of
    # the largest term
    np.testing.assert_allclose(dst[:, :, 0], ref, rtol=0, atol=1e-5 * np.abs(ref).max())


BLOCKED_ROWS = [i for i in core.conv_impls() if i.name.startswith("wino_f43_blocked:")]


def test_the_blocked_rows_are_avx512_and_avx2_before_the_plain_ones():
    names = [i.name for i in core.conv_impls() if i.name.startswith("wino_")]
    assert names[:2] == ["wino_f43_blocked:avx512", "wino_f43_blocked:avx2"]


@pytest.mark.parametrize("impl", [i for i in BLOCKED_ROWS if core.isa_supported(i.isa)],
                         ids=lambda i: i.name)
@pytest.mark.parametrize("mb,ic,oc,ih,iw,p", [
    (1, 1, 1, 6, 6, 0),        # one tile, one channel: the transforms alone
    (2, 3, 21, 7, 9, 1),       # ragged tiles, an output channel tail, padding
    (1, 5, 8, 11, 43, 2),      # rows of several chunks (11 tiles), padding 2
    (1, 8, 33, 4, 4, 1),       # a full AVX2 block; output inside one tile
    (1, 1, 16, 1024, 1024, 1),  # a 64 MiB output: stored past the cache (streaming)
    (2, 40, 19, 9, 27, 1),     # input blocks with a partial last; 7 tiles a row (steps + 3)
    (1, 64, 32, 14, 14, 1),    # whole input blocks; 4 tiles a row
])
def test_blocked_kernel_matches_the_direct_formula(impl, mb, ic, oc, ih, iw, p):
    """On nChw{B}c buffers made here (the output cache-line aligned, as the driver's):
    the real channels against NumPy's correlation in double, and the padded output lanes
    zero (the input's padded lanes hold NaN: the kernel must not read them)."""
    block = 16 if impl.isa is core.Isa.AVX512 else 8
    oh, ow = ih + 2 * p - 2, iw + 2 * p - 2
    shape = core.ConvShape(1, mb, ic, oc, (1, ih, iw), (1, oh, ow), (1, 3, 3), (1, 1, 1),
                           (0, p, p), (0, 0, 0))
    rng = np.random.default_rng(11)
    src = rng.standard_normal((mb, ic, ih, iw)).astype(np.float32)
    wei = rng.standard_normal((oc, ic, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(oc).astype(np.float32)
    pad = np.pad(src.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    windows = np.lib.stride_tricks.sliding_window_view(pad, (3, 3), axis=(2, 3))
    ref = np.einsum("nchwij,ocij->nohw", windows, wei.astype(np.float64)) + bias[:, None, None]
    ocb, icb = -(-oc // block), -(-ic // block)
    src_blk = np.full((mb, icb * block, ih, iw), np.nan, np.float32)
    src_blk[:, :ic] = src
    src_blk = np.ascontiguousarray(src_blk.reshape(mb, icb, block, ih, iw)
                                   .transpose(0, 1, 3, 4, 2))
    dst_blk = memory.aligned_empty(mb * ocb * oh * ow * block * 4).view(np.float32)
    dst_blk = dst_blk.reshape(mb, ocb, oh, ow, block)
    dst_blk.fill(np.nan)
    attr = core.ConvAttr(layout=core.ActLayout.BLOCKED16 if block == 16
                         else core.ActLayout.BLOCKED8)
    with core.ConvPrimitive(impl, shape, core.Direction.FWD, True, attr=attr) as prim:
        prim.bind(src_blk, prim.pack_weights(wei.reshape(shape.wei_shape)), bias, dst_blk)()
    got = dst_blk.transpose(0, 1, 4, 2, 3).reshape(mb, ocb * block, oh, ow)
    np.testing.assert_allclose(got[:, :oc], ref, rtol=0, atol=1e-5 * np.abs(ref).max())
    assert not got[:, oc:].any()


def test_threshold_and_fill_come_from_the_type_table():
    f32 = cfg.CFG["f32"]
    assert f32.wino_trh == 2e-5 and f32.trh == 0.0
    r = cfg.fill_ranges(("f32",) * 3, "f32", "f32", 9 * 16, ("src", "wei"), wino=True)
    assert (r.src, r.wei) == ((-16, 128), (2, 64))
    setups = conv.compare_setups(_problem("--alg=wino", "ic16ih8oc16kh3ph1"))
    assert setups["dst"].trh == 2e-5 and setups["dst"].norm_fallback
    direct = conv.compare_setups(_problem("ic16ih8oc16kh3ph1"))
    assert direct["dst"].trh == 0.0 and not direct["dst"].norm_fallback


@pytest.mark.parametrize("icg", [1, 8, 64, 2048, 1 << 20])
def test_bias_and_prior_dst_scale_with_the_winograd_output(icg):
    """+-8 (the direct cases' bias and prior dst) is lost under the relative threshold on
    Winograd's large outputs; the addends are a power of two near 1/16 of the mean output,
    so dropping one moves outputs by far more than wino_trh."""
    n_acc = 9 * icg
    r = cfg.fill_ranges(("f32",) * 3, "f32", "f32", n_acc, ("src", "wei"), wino=True)
    mean = n_acc * 56 * 33          # n_acc x mean src (-16..128) x mean weight (2..64)
    lo, hi = r.dst
    assert r.bia == r.dst and lo == -hi and hi & (hi - 1) == 0 and hi >= 8
    capped = hi == cfg.WINO_ADDEND_MAX      # (past 4000 input channels: still > wino_trh)
    if capped:
        assert mean / 16 >= hi
    elif hi > 8:
        assert mean / 32 < hi <= mean / 16
    assert hi / 2 / mean > (1 if capped else 100) * cfg.CFG["f32"].wino_trh
    direct = cfg.fill_ranges(("f32",) * 3, "f32", "f32", n_acc, ("src", "wei"))
    assert (direct.bia, direct.dst) == ((-8, 8), (-8, 8))
    no_bias = cfg.fill_ranges(("f32",) * 3, "undef", "f32", n_acc, ("src", "wei"), wino=True)
    assert no_bias.dst == r.dst and no_bias.bia == (0, 0)


def test_a_dropped_sum_scale_fails_every_winograd_sum_case():
    """Before the addends scaled, 18 of these 54 cases passed (8 input channels and more)."""
    res = run_cli("--conv", "--alg=wino", "--mb=1,2",
                  "--attr-post-ops=sum:0.5,sum:2,sum:0.25+relu",
                  "--batch=problems/shapes_wino_blocked",
                  env={"BENCHDNN_PY_TEST_FAULT": "sum_scale_dropped"})
    assert res.code == 1 and res.summary()["failed"] == res.summary()["tests"] == 54


# Few input channels are Winograd's where a blocked Winograd row runs (AVX2 or better),
# else direct; below 16 input channels only on AVX2's 8-wide blocks.
FEW = "wino" if core.isa_supported(core.Isa.AVX2) else "direct"
FEWER = "wino" if FEW == "wino" and not core.isa_supported(core.Isa.AVX512) else "direct"


@pytest.mark.parametrize("args,wanted", [
    (("--mb=16", "ic64ih56oc64oh56kh3ph1"), "wino"),
    (("--mb=1", "ic64ih7oc64oh7kh3ph1"), "direct"),       # 4 tiles: too few
    (("--mb=16", "ic256ih7oc256oh7kh3ph1"), "direct"),    # 64 tiles, but a 7x7 output
    (("--mb=16", "ic512ih7oc512oh7kh3ph1"), "wino"),      # 7x7, but U past the blocked rows'
    (("--mb=4", "ic512ih7oc512oh7kh3ph1"), "direct"),     # ... with too few tiles (16)
    (("--mb=16", "ic24ih56oc64oh56kh3ph1"), FEW),         # few: the blocked rows take it
    (("--mb=16", "--stag=nchw", "ic16ih56oc64oh56kh3ph1"), "direct"),  # too few, plain
    (("--mb=1", "ic3ih224oc64oh224kh3ph1"), FEWER),       # 3: on 8-wide blocks only
    (("--mb=16", "ic8ih56oc32oh56kh3ph1"), FEWER),        # 8: likewise
    (("--mb=1", "ic31ih28oc2336oh28kh3ph1"), FEW),        # U: 10,427,904 bytes, taken
    (("--mb=1", "ic31ih28oc2352oh28kh3ph1"), "direct"),   # U past 10 MiB: not the blocked rows
    (("--mb=1", "g2ic6ih56oc64oh56kh3ph1"), "direct"),    # few, but groups
    (("--mb=1", "ic3ih7oc64oh7kh3ph1"), "direct"),        # few, but a 7x7 output
    (("--mb=1", "ic32ih14oc32oh14kh3ph1"), "wino"),       # the smallest it takes
    (("--mb=16", "ic64ih56oc64oh28kh3sh2ph1"), "direct"),  # outside the domain
    (("--mb=16", "--dir=BWD_D", "ic64ih56oc64oh56kh3ph1"), "direct"),
])
def test_auto_rule(args, wanted):
    assert conv_policy.resolved_alg(_problem("--alg=auto", *args)) == wanted


def test_auto_rule_for_few_channels_needs_the_blocked_rows():
    few = _problem("--alg=auto", "--mb=16", "ic16ih56oc64oh56kh3ph1")
    assert conv_policy.resolved_alg(few) == FEW
    try:
        core.cap_isa("avx2")   # (on a CPU without AVX2 the cap changes nothing)
        assert conv_policy.resolved_alg(few) == FEW
        # 8-wide blocks: from 3 input channels on
        assert conv_policy.resolved_alg(_problem("--alg=auto", "ic3ih224oc64oh224kh3ph1")) == FEW
        core.cap_isa("scalar")   # no blocked row: plain rows, where direct is faster
        assert conv_policy.resolved_alg(few) == "direct"
    finally:
        core.cap_isa("")


def test_wino_passes_on_the_tail_grid_with_bias_and_post_ops():
    res = run_cli("--conv", "-j", "2", "--alg=wino", "--dir=FWD_B,FWD_I", "--mb=0,1",
                  "--attr-post-ops=,relu,sum:0.5+relu", "--batch=problems/shapes_wino_tails")
    assert res.code == 0, res.out
    summary = res.summary()
    assert summary["passed"] == summary["tests"] == 2 * 2 * 3 * 10
    assert all("--impl=wino_f43" in l for l in res.lines if ":PASSED" in l)


@pytest.mark.skipif(core.max_threads() < 2, reason="team mode needs two threads")
@pytest.mark.parametrize("impl", [i.name for i in RUNNABLE])
def test_team_mode_passes_on_two_threads_with_post_ops(impl):
    """The plain rows' team mode (all threads on one block: the tails' team shapes) runs
    only on two threads or more, which the -j workers above never have."""
    res = run_cli("--conv", "--threads=2", f"--impl={impl}", "--alg=wino", "--dir=FWD_B",
                  "--attr-post-ops=,sum:0.5+relu", "--match=team",
                  "--batch=problems/shapes_wino_tails")
    assert res.code == 0, res.out
    assert res.summary()["passed"] == res.summary()["tests"] == 2 * 3


@pytest.mark.parametrize("isa", [i.isa.name.lower() for i in BLOCKED_ROWS
                                 if core.isa_supported(i.isa)])
def test_blocked_rows_pass_their_grid_with_post_ops_and_catch_their_defects(isa):
    args = ("--conv", f"--isa={isa}", "--alg=wino", "--dir=FWD_B",
            "--batch=problems/shapes_wino_blocked")
    res = run_cli(*args[:2], "-j", "2", "--mb=0,2", *args[2:3],
                  "--attr-post-ops=,sum:0.5+relu,linear:0.5:-1", *args[3:])
    assert res.code == 0, res.out
    assert res.summary()["passed"] == res.summary()["tests"] == 2 * 3 * 9
    rows = {l.split("--impl=")[1].split(" ")[0] for l in res.lines if ":PASSED" in l}
    assert rows == {f"wino_f43_blocked:{isa}"}
    coef = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "wino_coef"})
    assert coef.summary()["failed"] == 9
    # the padded output lanes: the shapes whose output channels end in a partial block
    garbage = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "padding_garbage"})
    caught = [l for l in _case_lines(garbage, "FAILED") if "padded tail not zero" in l]
    # oc 1, 21, 40, 35, 17, 21 in blocks of 16; oc 1, 21, 35, 17, 21 in blocks of 8
    assert len(caught) == (6 if isa == "avx512" else 5), garbage.out


def test_wrong_transform_coefficient_is_caught():
    res = run_cli("--conv", "--alg=wino", "--dir=FWD_B", "--batch=problems/shapes_wino_tails",
                  env={"BENCHDNN_PY_TEST_FAULT": "wino_coef"})
    assert res.code == 1
    failed = _case_lines(res, "FAILED")
    assert len(failed) == 10 and all("+fault:wino_coef" in l for l in failed)


def test_outside_the_domain_is_one_unimplemented_line_naming_the_need():
    res = run_cli("--conv", "--alg=wino", "ic16ih14oc16oh7kh3sh2ph1", "ic16ih14oc16kh1",
                  "--dir=BWD_D", "ic16ih14oc16kh3ph1")
    lines = _case_lines(res, "UNIMPLEMENTED")
    assert len(lines) == 3
    assert "--alg=wino: Winograd F(4x4,3x3) needs stride 1" in lines[0]
    assert "needs a 3x3 kernel" in lines[1]
    assert "needs a forward direction" in lines[2]
    res = run_cli("--deconv", "--alg=wino", "ic16ih14oc16kh3ph1")
    assert "needs a convolution" in res.out


def test_direct_never_and_auto_names_what_ran():
    shape = "mb4ic64ih28oc64oh28kh3ph1"   # 196 tiles: auto's rule takes Winograd
    direct = run_cli("--conv", "-v1", shape)
    auto = run_cli("--conv", "-v1", "--alg=auto", shape)
    assert direct.code == auto.code == 0
    (d_line,) = [l for l in direct.lines if ":PASSED" in l]
    (a_line,) = [l for l in auto.lines if ":PASSED" in l]
    assert "wino" not in d_line and "--impl=gemm_conv" in d_line
    assert "--impl=wino_f43" in a_line and "--alg=auto" in a_line
