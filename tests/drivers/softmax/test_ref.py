"""The softmax reference (drivers/softmax/ref.py) against a line-by-line transcription of
the formulas with math.exp and math.log."""

import math

import numpy as np
import pytest

from benchdnn_py.drivers.softmax import ref


def _lines(x, axis):
    moved = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    return moved, list(np.ndindex(moved.shape[:-1]))


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("log", [False, True])
def test_forward_is_the_formula_line_by_line(axis, log):
    x = np.random.default_rng(1).uniform(-50, 50, (3, 4, 5))
    got = np.moveaxis(ref.forward(log, x, axis), axis, -1)
    moved, idxs = _lines(x, axis)
    for idx in idxs:
        line = moved[idx]
        m = max(line)
        s = math.fsum(math.exp(v - m) for v in line)
        exp = [(v - m) - math.log(s) if log else math.exp(v - m) / s for v in line]
        # (log-softmax's top value is (x - m) - ln s with ln s near 0: an absolute bound)
        np.testing.assert_allclose(got[idx], exp, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("axis", [0, 2])
@pytest.mark.parametrize("log", [False, True])
def test_backward_is_the_formula_line_by_line(axis, log):
    rng = np.random.default_rng(2)
    d, g = rng.uniform(-1, 1, (3, 4, 5)), rng.uniform(-4, 4, (3, 4, 5))
    got = np.moveaxis(ref.backward(log, d, g, axis), axis, -1)
    dm, idxs = _lines(d, axis)
    gm, _ = _lines(g, axis)
    for idx in idxs:
        dl, gl = dm[idx], gm[idx]
        if log:
            s = math.fsum(gl)
            exp = [gv - math.exp(dv) * s for dv, gv in zip(dl, gl)]
        else:
            s = math.fsum(gv * dv for dv, gv in zip(dl, gl))
            exp = [dv * (gv - s) for dv, gv in zip(dl, gl)]
        np.testing.assert_allclose(got[idx], exp, rtol=1e-12, atol=1e-12)


def test_a_line_of_the_floor_alone_is_uniform_and_minus_inf_contributes_nothing():
    floor = ref.LOWEST
    out = ref.forward(False, np.array([[floor, floor], [0.0, -np.inf]]), 1)
    np.testing.assert_array_equal(out, [[0.5, 0.5], [1.0, 0.0]])
