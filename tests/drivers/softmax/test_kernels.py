"""Every softmax kernel row the CPU runs against the reference in double, on random inputs
(not the driver's fill): both algorithms, both directions, contiguous lines and columns,
lines longer than a tile, e^x down into the denormals; and the rows' own rules."""

import math

import numpy as np
import pytest

from benchdnn_py import core

RUNNABLE = [i for i in core.softmax_impls() if core.isa_supported(i.isa)]
F32_ROWS = [i for i in RUNNABLE if i.operands is core.Operands.F32]
F64_ROWS = [i for i in RUNNABLE if i.operands is core.Operands.F64]
ULP = 2.0**-23


def _lines_of(shape, axis):
    return core.Lines(math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))


def _forward(impl, alg, x, axis, dt="f32"):
    prim = core.SoftmaxPrimitive(impl, alg, dt, dt, backward=False)
    out = np.full(x.size, np.nan, x.dtype)
    prim.bind_fwd(x.reshape(-1), out, _lines_of(x.shape, axis))()
    return out.reshape(x.shape)


def _exact(alg, x, axis):
    """The formulas in double, line by line with math.exp (a scalar transcription)."""
    x = x.astype(np.float64)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    for idx in np.ndindex(moved.shape[:-1]):
        line = moved[idx]
        m = max(line.max(), -float(np.finfo(np.float32).max))
        s = sum(math.exp(v - m) for v in line)
        out[idx] = ([(v - m) - math.log(s) for v in line] if alg == "logsoftmax"
                    else [math.exp(v - m) / s for v in line])
    return np.moveaxis(out, -1, axis)


# (shape, axis): rows (the axis innermost), one tile and more than one; columns with a
# tail tile (inner 70 = 64 + 6) and a single partial one; one-element lines
SHAPES = [((7, 33), 1), ((3, 2500), 1), ((5, 40, 70), 1), ((300, 3), 0), ((4, 1, 9), 1),
          ((2, 9, 5, 3), 3)]


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("alg", ["softmax", "logsoftmax"])
def test_forward_is_within_a_few_ulps_of_the_exact_result(impl, alg):
    rng = np.random.default_rng(7)
    for shape, axis in SHAPES:
        x = rng.uniform(-30, 30, shape).astype(np.float32)
        got = _forward(impl, alg, x, axis).astype(np.float64)
        exp = _exact(alg, x, axis)
        # x - m rounded to f32 is off by up to half an ulp of its size: e^(x - m) by that
        # much relative, (x - m) - ln s by that much absolute
        spread = np.abs(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
        if alg == "softmax":
            err = np.abs(got - exp) / np.maximum(exp, 2.0**-126)
            assert (err / (8 + spread)).max() <= ULP, (shape, axis, err.max())
        else:
            assert (np.abs(got - exp) / (spread + 1.0)).max() <= 8 * ULP, (shape, axis)


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
def test_exp_is_accurate_down_to_the_denormals_and_zero_below(impl):
    """Lines [0, x]: the second output is e^x / (1 + e^x), with x swept from 0 past
    f32's smallest denormal; past it the output must be exactly 0."""
    x = -np.linspace(0.0, 110.0, 4001, dtype=np.float32)
    lines = np.stack([np.zeros_like(x), x], axis=1)
    got = _forward(impl, "softmax", lines, 1)[:, 1].astype(np.float64)
    exact = np.exp(x.astype(np.float64)) / (1.0 + np.exp(x.astype(np.float64)))
    normal = exact >= 2.0**-126
    assert (np.abs(got - exact)[normal] / exact[normal]).max() <= 4 * ULP
    # a denormal holds fewer bits: within two of its steps (2^-149)
    assert (np.abs(got - exact)[~normal]).max() <= 2 * 2.0**-149
    assert np.all(got[exact < 2.0**-151] == 0)


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
def test_large_inputs_do_not_overflow_and_the_signed_maximum_is_subtracted(impl):
    """Lines of 88 and more (e^88 is past f32's range unless the maximum is subtracted) and
    lines of only negative values (a maximum taken as |x| would be wrong)."""
    x = np.array([[90, 89, 88, 88], [-90, -89, -88, -88], [1e30, 1e30, -1e30, 0]],
                 np.float32)
    got = _forward(impl, "softmax", x, 1).astype(np.float64)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, _exact("softmax", x, 1), rtol=8 * ULP, atol=1e-45)


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
def test_a_nan_input_makes_its_line_nan_and_no_other(impl):
    x = np.array([[1, np.nan, 3, 4] * 8, [np.nan] * 32, [-1, 0, 1, 2] * 8], np.float32)
    for alg in ("softmax", "logsoftmax"):
        got = _forward(impl, alg, x, 1)
        assert np.isnan(got[:2]).all() and np.isfinite(got[2]).all(), alg


# f32 outputs of 8 MiB or more, written with non-temporal stores where the ISA has them:
# rows of 1001 elements and columns 15001 apart start off a 64-byte line, so each run has
# a plain head and tail around its streamed lines
STREAMED = [((2100, 1001), 1), ((2, 70, 15001), 1)]


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("alg", ["softmax", "logsoftmax"])
@pytest.mark.parametrize("shape,axis", STREAMED)
def test_an_output_streamed_past_the_caches_has_every_element(impl, alg, shape, axis):
    """The output starts as NaN: a lost store shows. In place, the same bits."""
    x = np.random.default_rng(13).uniform(-30, 30, shape).astype(np.float32)
    assert x.nbytes >= 8 * 2**20
    out = _forward(impl, alg, x, axis)
    inplace = x.copy().reshape(-1)
    core.SoftmaxPrimitive(impl, alg, "f32", "f32", backward=False).bind_fwd(
        inplace, inplace, _lines_of(shape, axis))()
    assert np.array_equal(inplace.view(np.uint32), out.reshape(-1).view(np.uint32))
    got = out.astype(np.float64)
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(axis=axis, keepdims=True)
    s = np.exp(shifted).sum(axis=axis, keepdims=True)
    if alg == "softmax":
        exp = np.exp(shifted) / s
        err = np.abs(got - exp) / np.maximum(exp, 2.0**-126)
        assert (err / (8 + np.abs(shifted))).max() <= ULP
    else:
        assert (np.abs(got - (shifted - np.log(s))) / (np.abs(shifted) + 1.0)).max() <= 8 * ULP


@pytest.mark.parametrize("impl", F32_ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("alg", ["softmax", "logsoftmax"])
def test_backward_matches_the_formula(impl, alg):
    """Including diff_src outputs large enough to be streamed."""
    rng = np.random.default_rng(11)
    for shape, axis in SHAPES + STREAMED:
        d = rng.uniform(-1, 1, shape).astype(np.float32)
        g = rng.uniform(-4, 4, shape).astype(np.float32)
        prim = core.SoftmaxPrimitive(impl, alg, "f32", "f32", backward=True)
        out = np.full(d.size, np.nan, np.float32)
        prim.bind_bwd(d.reshape(-1), g.reshape(-1), out, _lines_of(shape, axis))()
        d64, g64 = d.astype(np.float64), g.astype(np.float64)
        if alg == "softmax":
            terms = np.abs(d64) * (np.abs(g64) + np.abs(g64 * d64).sum(axis, keepdims=True))
            exp = d64 * (g64 - (g64 * d64).sum(axis, keepdims=True))
        else:
            s = g64.sum(axis, keepdims=True)
            terms = np.abs(g64) + np.exp(d64) * np.abs(g64).sum(axis, keepdims=True)
            exp = g64 - np.exp(d64) * s
        err = np.abs(out.reshape(shape) - exp) / np.maximum(terms, 1e-30)
        assert err.max() <= 8 * ULP * max(shape[axis], 8), (shape, axis, err.max())


@pytest.mark.parametrize("impl", F64_ROWS, ids=lambda i: i.name)
def test_f64_rows_compute_in_double(impl):
    rng = np.random.default_rng(3)
    x = rng.uniform(-30, 30, (5, 40, 70))
    for alg in ("softmax", "logsoftmax"):
        got = _forward(impl, alg, x, 1, "f64")
        np.testing.assert_allclose(got, _exact(alg, x, 1), rtol=1e-14, atol=1e-14)


def test_the_split_over_threads_does_not_change_a_bit():
    impl = F32_ROWS[0]
    rng = np.random.default_rng(5)
    for shape, axis in SHAPES:
        x = rng.uniform(-30, 30, shape).astype(np.float32)
        with core.threads(1):
            one = _forward(impl, "softmax", x, axis)
        with core.threads(3):
            three = _forward(impl, "softmax", x, axis)
        assert np.array_equal(one.view(np.uint32), three.view(np.uint32)), shape


def test_rows_take_the_pairs_of_types_their_class_computes():
    f32, f64 = F32_ROWS[0], F64_ROWS[0]

    def runs(impl, sdt, ddt, backward=False):
        try:
            core.SoftmaxPrimitive(impl, "softmax", sdt, ddt, backward)
            return True
        except core.Unimplemented:
            return False

    assert runs(f32, "f32", "bf16") and runs(f32, "s8", "f16") and runs(f32, "f16", "f8_e4m3")
    assert not runs(f32, "f64", "f32") and runs(f64, "f64", "f32") and runs(f64, "f16", "f64")
    assert not runs(f64, "f32", "f32")
    assert not runs(f32, "s32", "f32") and not runs(f32, "f32", "s4")
    assert runs(f32, "u8", "f32") and not runs(f32, "u8", "f32", backward=True)
