"""Every bnorm kernel row the CPU runs against the reference in double, on random inputs
(not the driver's fill): channels first (runs, within and past a block) and channels
last (row tiles, within and past a column chunk), every flag, the data types, in place;
and the rows' own rules and defects."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.core.capi import InvalidProblem, Unimplemented
from benchdnn_py.drivers.bnorm import ref

RUNNABLE = [i for i in core.bnorm_impls() if core.isa_supported(i.isa)]
EPS = 1.0 / 16
# (outer, channels, inner): channels first with runs shorter and longer than a block
# (4096); channels last with few channels, a row tile's worth, more than a column chunk
# (1024), and more rows than a block of tiles
WALKS = [(2, 5, 7), (1, 3, 5000), (3, 7, 1), (2, 1030, 1), (1200, 64, 1), (4000, 3, 1)]
ROUND = {"f32": np.float32, "bf16": core.numpy_dtype("bf16"), "f16": np.float16}


def _as_mcs(a, lines):
    """(outer, C, inner) data as the reference's (mb, C, spatial) view: the same sums."""
    return a.reshape(lines.outer, lines.axis, lines.inner)


def _run_fwd(impl, dt, flags, x, lines, sc, sh, src1=None, inplace=False, training=True):
    prim = core.BnormPrimitive(impl, dt, flags, backward=False, training=training)
    C = lines.axis
    xs = x.astype(ROUND[dt])
    dst = xs if inplace else np.full(x.size, np.nan, ROUND[dt])
    glob = "G" in flags
    mean = np.linspace(-1, 1, C).astype(np.float32) if glob else np.full(C, np.nan,
                                                                         np.float32)
    var = np.linspace(0.5, 2, C).astype(np.float32) if glob else np.full(C, np.nan,
                                                                         np.float32)
    relu = "R" in flags or "A" in flags
    ws = np.full(x.size, 7, np.uint8) if relu and training else None
    s1 = src1.astype(ROUND[dt]) if src1 is not None else None
    prim.bind_fwd(xs, dst, lines, mean, var, sc if "C" in flags else None,
                  sh if "H" in flags else None, s1, ws)()
    return xs.astype(np.float64), dst.astype(np.float64), mean, var, ws, s1


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
@pytest.mark.parametrize("walk", WALKS, ids=str)
@pytest.mark.parametrize("flags", ["", "CH", "GCHR", "CHA", "R"])
def test_forward_matches_the_reference(impl, walk, flags):
    rng = np.random.default_rng(hash((walk, flags)) % 2**32)
    lines = core.Lines(*walk)
    n, C = lines.size, lines.axis
    x = (rng.standard_normal(n) * 3 + 5).astype(np.float32)
    sc = rng.standard_normal(C).astype(np.float32)
    sh = rng.standard_normal(C).astype(np.float32)
    src1 = rng.standard_normal(n).astype(np.float32) if "A" in flags else None
    xs, dst, mean, var, ws, s1 = _run_fwd(impl, "f32", flags, x, lines, sc, sh, src1)
    view = _as_mcs(xs, lines)
    if "G" not in flags:
        m, v = ref.stats(view)
        np.testing.assert_allclose(mean, m, rtol=2e-7)
        np.testing.assert_allclose(var, v, rtol=2e-7)
    relu = "R" in flags or "A" in flags
    exp = ref.forward(view, mean, var, EPS, sc if "C" in flags else None,
                      sh if "H" in flags else None,
                      _as_mcs(s1, lines) if s1 is not None else None, relu).reshape(-1)
    np.testing.assert_allclose(dst, exp, rtol=2e-6, atol=2e-6)
    if ws is not None:
        assert np.array_equal(ws != 0, dst > 0)


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
@pytest.mark.parametrize("walk", WALKS, ids=str)
@pytest.mark.parametrize("flags", ["", "CH", "G", "CHR", "CHA"])
def test_backward_matches_the_reference(impl, walk, flags):
    rng = np.random.default_rng(hash((walk, flags, 1)) % 2**32)
    lines = core.Lines(*walk)
    n, C = lines.size, lines.axis
    x = (rng.standard_normal(n) * 2 + 1).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    m, v = ref.stats(_as_mcs(x.astype(np.float64), lines))
    mean, var = m.astype(np.float32), v.astype(np.float32)
    sc = rng.standard_normal(C).astype(np.float32)
    relu = "R" in flags or "A" in flags
    kept = rng.random(n) < 0.6 if relu else None
    prim = core.BnormPrimitive(impl, "f32", flags, backward=True)
    ds = np.full(n, np.nan, np.float32)
    ds1 = np.full(n, np.nan, np.float32) if "A" in flags else None
    dsc, dsh = np.full(C, np.nan, np.float32), np.full(C, np.nan, np.float32)
    prim.bind_bwd(x, mean, var, g, ds, lines, sc if "C" in flags else None,
                  kept.astype(np.uint8) if relu else None, ds1, dsc, dsh)()
    exp = ref.backward(_as_mcs(x, lines), mean, var, EPS, _as_mcs(g, lines),
                       sc if "C" in flags else None,
                       _as_mcs(kept, lines) if relu else None, "G" in flags)
    scale = np.abs(exp["diff_src"]).max()
    np.testing.assert_allclose(ds, exp["diff_src"].reshape(-1), rtol=1e-5,
                               atol=1e-6 * scale)
    np.testing.assert_allclose(dsh, exp["diff_shift"], rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(dsc, exp["diff_scale"], rtol=1e-6, atol=1e-4)
    if ds1 is not None:
        assert np.array_equal(ds1, np.where(kept, g, 0))


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
@pytest.mark.parametrize("dt", ["bf16", "f16"])
@pytest.mark.parametrize("walk", [(2, 5, 70), (70, 9, 1)], ids=str)
def test_half_types_compute_in_f32_and_round_once(impl, dt, walk):
    lines = core.Lines(*walk)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(lines.size) * 2).astype(np.float32)
    sc = np.ones(lines.axis, np.float32)
    sh = np.zeros(lines.axis, np.float32)
    xs, dst, mean, var, _, _ = _run_fwd(impl, dt, "CH", x, lines, sc, sh)
    exp = ref.forward(_as_mcs(xs, lines), *ref.stats(_as_mcs(xs, lines)), EPS, None, None,
                      None, False).reshape(-1)
    eps = 2.0 ** -7 if dt == "bf16" else 2.0 ** -10
    np.testing.assert_allclose(dst, exp, rtol=2 * eps, atol=2 * eps)


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
def test_s8_inference_saturates_and_in_place_is_allowed(impl):
    lines = core.Lines(3, 4, 50)
    x = np.arange(lines.size, dtype=np.float32) % 61 - 30
    prim = core.BnormPrimitive(impl, "s8", "GCH", backward=False, training=False)
    mean, var = np.zeros(4, np.float32), np.full(4, 1 - 1 / 16, np.float32)
    sc, sh = np.full(4, 8, np.float32), np.zeros(4, np.float32)
    xs = x.astype(np.int8)
    prim.bind_fwd(xs, xs, lines, mean, var, sc, sh)()
    assert np.array_equal(xs, np.clip(x * 8, -128, 127).astype(np.int8))
    with pytest.raises(Unimplemented):
        core.BnormPrimitive(impl, "s8", "G", backward=True)


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
def test_every_row_gives_the_same_bits_in_place_and_not(impl):
    lines = core.Lines(4, 6, 33)
    x = np.random.default_rng(9).standard_normal(lines.size).astype(np.float32)
    sc = np.ones(6, np.float32)
    _, dst, *_ = _run_fwd(impl, "f32", "CHR", x, lines, sc, sc)
    _, again, *_ = _run_fwd(impl, "f32", "CHR", x, lines, sc, sc, inplace=True)
    assert np.array_equal(dst, again)


def test_missing_inputs_are_invalid():
    impl = RUNNABLE[0]
    lines = core.Lines(2, 3, 4)
    x, y = np.zeros(24, np.float32), np.zeros(24, np.float32)
    with pytest.raises(InvalidProblem):      # G without statistics
        core.BnormPrimitive(impl, "f32", "G", backward=False).bind_fwd(
            x, y, lines, None, None)()
    with pytest.raises(InvalidProblem):      # backward R without the workspace
        core.BnormPrimitive(impl, "f32", "R", backward=True).bind_bwd(
            x, np.zeros(3, np.float32), np.ones(3, np.float32), x, y, lines)()


@pytest.mark.parametrize("walk", [(2, 5, 70), (300, 5, 1)], ids=str)
def test_defects_change_the_statistics(walk, monkeypatch):
    impl = RUNNABLE[0]
    lines = core.Lines(*walk)
    x = (np.random.default_rng(2).standard_normal(lines.size) + 3).astype(np.float32)
    good = _run_fwd(impl, "f32", "", x, lines, None, None)
    for fault in (core.OpFault.BNORM_LAST_CHANNEL, core.OpFault.BNORM_SUM_SHORT):
        prim = core.BnormPrimitive(impl, "f32", "", backward=False, fault=fault)
        mean, var = np.zeros(5, np.float32), np.zeros(5, np.float32)
        prim.bind_fwd(x, np.empty_like(x), lines, mean, var)()
        assert fault.name.lower() in prim.name
        assert not np.array_equal(mean, good[2]), fault
        if fault is core.OpFault.BNORM_LAST_CHANNEL:
            assert mean[-1] == 0 and np.array_equal(mean[:-1], good[2][:-1])
