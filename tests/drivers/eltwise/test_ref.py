"""The eltwise reference against independent formulations: every backward formula against
a numerical derivative of the forward one, and the _dst forms against their src forms."""

import numpy as np
import pytest

from benchdnn_py.common import eltwise

PARAMS = {"clip": (-1.0, 3.0), "clip_v2": (-1.0, 3.0), "clip_v2_dst": (-1.0, 3.0),
          "soft_relu": (1.5, 0.0), "pow": (1.5, 3.0), "hardsigmoid": (0.25, 0.5),
          "hardswish": (0.25, 0.5), "linear": (0.5, 0.25), "elu": (0.5, 0),
          "elu_dst": (0.5, 0), "relu": (0.25, 0), "relu_dst": (0.25, 0), "swish": (0.75, 0)}
# Points away from kinks (clip at -1/3, hardsigmoid/hardswish at -2/2, abs/relu at 0).
X = np.array([-3.7, -1.3, -0.6, -0.15, 0.15, 0.6, 1.3, 2.6, 3.7])
POSITIVE = np.array([0.15, 0.6, 1.3, 2.6, 3.7])   # domain of log, sqrt, pow


@pytest.mark.parametrize("name", sorted(n for n, a in eltwise.ALGS.items() if a.bwd))
def test_backward_is_the_derivative_of_forward(name):
    alpha, beta = PARAMS.get(name, (0.0, 0.0))
    x = POSITIVE if name.removesuffix("_dst") in ("log", "sqrt", "pow") else X
    h = 1e-6
    numeric = (eltwise.apply(name, x + h, alpha, beta)
               - eltwise.apply(name, x - h, alpha, beta)) / (2 * h)
    alg = eltwise.ALGS[name]
    arg = eltwise.apply(name, x, alpha, beta) if alg.bwd_from_dst else x
    dd = np.linspace(0.5, 2.0, x.size)
    got = eltwise.apply_bwd(name, arg, dd, alpha, beta)
    np.testing.assert_allclose(got, dd * numeric, rtol=1e-6, atol=1e-8)


def test_dst_forms_name_their_source():
    dst_forms = {n for n, a in eltwise.ALGS.items() if a.bwd_from_dst}
    assert dst_forms == {"clip_v2_dst", "elu_dst", "exp_dst", "logistic_dst", "relu_dst",
                         "sqrt_dst", "tanh_dst"}
    assert eltwise.ALGS["round"].bwd is None
    with pytest.raises(ValueError):
        eltwise.apply_bwd("round", X, X, 0, 0)


def test_exp_backward_overflows_like_the_f32_dst_it_multiplies():
    # e^88.8 exceeds FLT_MAX: the library's f32 dst is inf, so diff_src is inf (and 0*inf
    # NaN), as the kernels compute; a double-only reference would stay finite.
    got = eltwise.apply_bwd("exp", np.array([88.8, 88.8]), np.array([0.5, 0.0]), 0, 0)
    assert np.isinf(got[0]) and np.isnan(got[1])
