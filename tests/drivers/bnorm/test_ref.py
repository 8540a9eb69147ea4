"""The bnorm reference against the formulas written out point by point in double (a
scalar transcription of oneDNN's definitions), on small random problems."""

import math

import numpy as np
import pytest

from benchdnn_py.drivers.bnorm import ref

EPS = 1.0 / 16


def _by_hand(x, g, sc, sh, src1, relu, glob, mean=None, var=None):
    mb, C, sp = x.shape
    N = mb * sp
    y = np.empty_like(x)
    out = {"diff_src": np.empty_like(x), "diff_scale": np.empty(C),
           "diff_shift": np.empty(C)}
    means, variances = [], []
    for c in range(C):
        pts = [(n, s) for n in range(mb) for s in range(sp)]
        m = mean[c] if mean is not None else sum(x[n, c, s] for n, s in pts) / N
        v = var[c] if var is not None else sum((x[n, c, s] - m) ** 2 for n, s in pts) / N
        means.append(m), variances.append(v)
        r = 1.0 / math.sqrt(v + EPS)
        for n, s in pts:
            val = sc[c] * (x[n, c, s] - m) * r + sh[c] + (src1[n, c, s] if src1 is not None
                                                          else 0.0)
            y[n, c, s] = max(val, 0.0) if relu else val
        kept = {p: (y[p[0], c, p[1]] > 0) if relu else True for p in pts}
        dd = {p: g[p[0], c, p[1]] if kept[p] else 0.0 for p in pts}
        d_shift = sum(dd.values())
        d_scale = sum(dd[p] * (x[p[0], c, p[1]] - m) * r for p in pts)
        out["diff_scale"][c], out["diff_shift"][c] = d_scale, d_shift
        for n, s in pts:
            ds = dd[(n, s)] if glob else dd[(n, s)] - (d_shift + (x[n, c, s] - m) * r
                                                       * d_scale) / N
            out["diff_src"][n, c, s] = sc[c] * r * ds
    return y, np.array(means), np.array(variances), out


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 4, 1), (3, 2, 7)])
@pytest.mark.parametrize("relu,add", [(False, False), (True, False), (True, True)])
def test_forward_and_backward_match_the_formulas(shape, relu, add):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape) + 2
    g = rng.standard_normal(shape)
    sc, sh = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    src1 = rng.standard_normal(shape) if add else None
    y, m, v, exp = _by_hand(x, g, sc, sh, src1, relu, glob=False)
    mean, var = ref.stats(x)
    np.testing.assert_allclose(mean, m, rtol=1e-13)
    np.testing.assert_allclose(var, v, rtol=1e-12)
    np.testing.assert_allclose(ref.forward(x, mean, var, EPS, sc, sh, src1, relu), y,
                               rtol=1e-12, atol=1e-13)
    got = ref.backward(x, mean, var, EPS, g, sc, y > 0 if relu else None, glob=False)
    for name in ("diff_src", "diff_scale", "diff_shift"):
        np.testing.assert_allclose(got[name], exp[name], rtol=1e-11, atol=1e-12)


def test_global_stats_use_the_given_statistics_and_drop_the_mean_terms():
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    mean, var = np.array([0.5, -1.0, 2.0]), np.array([1.0, 4.0, 0.25])
    ones, zeros = np.ones(3), np.zeros(3)
    y, _, _, exp = _by_hand(x, g, ones, zeros, None, False, True, mean, var)
    np.testing.assert_allclose(ref.forward(x, mean, var, EPS, None, None, None, False), y,
                               rtol=1e-13)
    got = ref.backward(x, mean, var, EPS, g, None, None, glob=True)
    np.testing.assert_allclose(got["diff_src"], exp["diff_src"], rtol=1e-13)
    np.testing.assert_allclose(got["diff_src"], g / np.sqrt(var + EPS)[None, :, None],
                               rtol=1e-13)
